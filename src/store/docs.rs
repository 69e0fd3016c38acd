//! The document table, the one owner of its columns: `fingerprint-docs.csv`
//! as the fingerprint stage writes it, and `docs.csv`, the same rows with
//! each document's exact-group center, as the exact stage writes it.
//!
//! | column | meaning |
//! |---|---|
//! | `doc_id` | the docID: dense, from 0, in input order |
//! | `url`, `host` | the URL as recorded, and its lowercase host without port (empty when the URL has none) |
//! | `source` | `INPUT:OFFSET`, the input as given on the command line and the record's offset in it ([`Source`]) |
//! | `bytes`, `lines`, `chunks` | payload bytes, normalized lines, chunk windows |
//! | `exact_center` | `docs.csv` only: the center's docID (its own when it has no copies), empty for an empty document |
//! | `title` | the HTML `<title>`, empty for other documents |
//!
//! In `fingerprint-docs.csv`, a copy the input declares (a revisit, a
//! payload-digest copy) is written with `bytes`, `lines`, `chunks` and
//! `title` empty while its input is read, and filled in from its
//! original's row before the stage ends ([`Doc::text`] is `None` until
//! then).

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::csv_out::CsvOut;

/// Which of the two document tables a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DocTable {
    /// `fingerprint-docs.csv`: no `exact_center` column.
    Fingerprint,
    /// `docs.csv`.
    Final,
}

impl DocTable {
    fn header(self) -> &'static [&'static str] {
        match self {
            DocTable::Fingerprint => {
                &["doc_id", "url", "host", "source", "bytes", "lines", "chunks", "title"]
            }
            DocTable::Final => {
                &["doc_id", "url", "host", "source", "bytes", "lines", "chunks", "exact_center", "title"]
            }
        }
    }
}

/// Where a document's record is: the input as given on the command line
/// and the record's byte offset in it (see the README's Inputs for what
/// an offset is in a compressed input). Written `INPUT:OFFSET`; the input
/// may itself contain colons, the offset never does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Source<'a> {
    pub input: &'a str,
    pub offset: u64,
}

impl<'a> Source<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Source<'a>> {
        let (input, offset) = text.rsplit_once(':')?;
        Some(Source { input, offset: offset.parse().ok()? })
    }
}

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.input, self.offset)
    }
}

/// What extraction made of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextFields<'a> {
    pub bytes: u64,
    pub lines: u64,
    pub chunks: u64,
    pub title: &'a str,
}

/// One row of a document table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Doc<'a> {
    pub id: u32,
    pub url: &'a str,
    pub host: &'a str,
    pub source: Source<'a>,
    /// `None` only in `fingerprint-docs.csv`, for a copy whose fields are
    /// not filled in from its original yet.
    pub text: Option<TextFields<'a>>,
    /// `docs.csv` only: the exact-group center, `None` for an empty
    /// document (and always in `fingerprint-docs.csv`).
    pub center: Option<u32>,
}

impl<'a> Doc<'a> {
    /// The title, empty without one.
    pub(crate) fn title(&self) -> &'a str {
        self.text.map_or("", |t| t.title)
    }
}

/// Writes a document table, one row per document in docID order.
pub(crate) struct DocsWriter {
    out: CsvOut,
    table: DocTable,
    numbers: [itoa::Buffer; 5],
    source: String,
}

impl DocsWriter {
    pub(crate) fn create(path: &Path, table: DocTable) -> anyhow::Result<DocsWriter> {
        Ok(DocsWriter {
            out: CsvOut::create(path, table.header())?,
            table,
            numbers: Default::default(),
            source: String::new(),
        })
    }

    pub(crate) fn push(&mut self, doc: &Doc<'_>) -> anyhow::Result<()> {
        use std::fmt::Write as _;
        self.source.clear();
        let _ = write!(self.source, "{}", doc.source);
        let [id, bytes, lines, chunks, center] = &mut self.numbers;
        let id = id.format(doc.id);
        let (bytes, lines, chunks, title) = match &doc.text {
            Some(t) => (bytes.format(t.bytes), lines.format(t.lines), chunks.format(t.chunks), t.title),
            None => ("", "", "", ""),
        };
        let head = [id, doc.url, doc.host, self.source.as_str(), bytes, lines, chunks];
        match self.table {
            DocTable::Fingerprint => self.out.row(head.into_iter().chain([title])),
            DocTable::Final => {
                let center = doc.center.map_or("", |c| center.format(c));
                self.out.row(head.into_iter().chain([center, title]))
            }
        }
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.out.finish()
    }
}

/// Reads a document table front to back, checking what its writers
/// promise: the header, dense docIDs in order, numbers where numbers
/// belong, a center no larger than its document. A row that breaks one is
/// an error naming the file and line.
pub(crate) struct DocsReader {
    path: PathBuf,
    table: DocTable,
    reader: csv::Reader<File>,
    record: csv::StringRecord,
    next_id: u64,
}

impl DocsReader {
    pub(crate) fn open(path: &Path, table: DocTable) -> anyhow::Result<DocsReader> {
        // Flexible, so that a row with a wrong number of columns gets this
        // reader's message, with its line, rather than the CSV parser's.
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let header = reader.headers().with_context(|| format!("cannot read {}", path.display()))?;
        if header.iter().ne(table.header().iter().copied()) {
            bail!("{} line 1: expected the header {}", path.display(), table.header().join(","));
        }
        Ok(DocsReader {
            path: path.to_path_buf(),
            table,
            reader,
            record: csv::StringRecord::new(),
            next_id: 0,
        })
    }

    /// The line the last row read was on (the header is line 1).
    pub(crate) fn line(&self) -> u64 {
        self.record.position().map_or(1, |p| p.line())
    }

    /// The next row, `None` after the last.
    pub(crate) fn next_doc(&mut self) -> anyhow::Result<Option<Doc<'_>>> {
        let line = self.reader.position().line();
        let more = self
            .reader
            .read_record(&mut self.record)
            .with_context(|| format!("cannot read {} (line {line})", self.path.display()))?;
        if !more {
            return Ok(None);
        }
        let line = self.line();
        let bad = |what: &str| anyhow::anyhow!("{} line {line}: {what}", self.path.display());
        let r = &self.record;
        let columns = self.table.header().len();
        if r.len() != columns {
            return Err(bad(&format!("expected {columns} columns, found {}", r.len())));
        }
        let id: u32 = r[0].parse().map_err(|_| bad("doc_id is not a number"))?;
        if u64::from(id) != self.next_id {
            return Err(bad(&format!("expected doc_id {}, found {id}", self.next_id)));
        }
        let source = Source::parse(&r[3]).ok_or_else(|| bad("source is not INPUT:OFFSET"))?;
        let number = |i: usize, name: &str| -> anyhow::Result<u64> {
            r[i].parse().map_err(|_| bad(&format!("{name} is not a number")))
        };
        let (center, title) = match self.table {
            DocTable::Fingerprint => (None, &r[7]),
            DocTable::Final => {
                let center = match &r[7] {
                    "" => None,
                    c => {
                        let c: u32 = c.parse().map_err(|_| bad("exact_center is not a number"))?;
                        if c > id {
                            return Err(bad("exact_center is larger than doc_id"));
                        }
                        Some(c)
                    }
                };
                (center, &r[8])
            }
        };
        // A copy not filled in yet has no text fields; docs.csv always has them.
        let unfilled = self.table == DocTable::Fingerprint && [4, 5, 6].iter().all(|&i| r[i].is_empty());
        let text = if unfilled {
            None
        } else {
            Some(TextFields {
                bytes: number(4, "bytes")?,
                lines: number(5, "lines")?,
                chunks: number(6, "chunks")?,
                title,
            })
        };
        self.next_id += 1;
        Ok(Some(Doc { id, url: &r[1], host: &r[2], source, text, center }))
    }

    /// Rows read so far.
    pub(crate) fn rows(&self) -> u64 {
        self.next_id
    }
}

/// Calls `f` with every row of the table at `path`; an error from `f`
/// names the file and line.
pub(crate) fn for_each_doc(
    path: &Path,
    table: DocTable,
    mut f: impl FnMut(&Doc<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = DocsReader::open(path, table)?;
    loop {
        let Some(doc) = reader.next_doc()? else { return Ok(()) };
        if let Err(e) = f(&doc) {
            let line = reader.line();
            return Err(e.context(format!("{} line {line}", path.display())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(id: u32, text: Option<TextFields<'a>>, center: Option<u32>) -> Doc<'a> {
        Doc {
            id,
            url: "http://a.example/x,y",
            host: "a.example",
            source: Source { input: "c:/crawl.warc.gz", offset: 17 },
            text,
            center,
        }
    }

    #[test]
    fn both_tables_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let text = TextFields { bytes: 10, lines: 2, chunks: 1, title: "A \"title\"" };
        for (table, rows) in [
            (DocTable::Fingerprint, vec![doc(0, Some(text), None), doc(1, None, None)]),
            (DocTable::Final, vec![doc(0, Some(text), Some(0)), doc(1, Some(text), None)]),
        ] {
            let path = dir.path().join("docs.csv");
            let mut w = DocsWriter::create(&path, table).unwrap();
            for r in &rows {
                w.push(r).unwrap();
            }
            w.finish().unwrap();
            let mut back = Vec::new();
            let mut reader = DocsReader::open(&path, table).unwrap();
            while let Some(d) = reader.next_doc().unwrap() {
                back.push(format!("{d:?}"));
            }
            assert_eq!(back, rows.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_columns_are_those_documented() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.csv");
        let mut w = DocsWriter::create(&path, DocTable::Final).unwrap();
        let text = TextFields { bytes: 10, lines: 2, chunks: 1, title: "T" };
        w.push(&doc(0, Some(text), Some(0))).unwrap();
        w.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title\n\
             0,\"http://a.example/x,y\",a.example,c:/crawl.warc.gz:17,10,2,1,0,T\n"
        );
    }

    #[test]
    fn sources_split_at_the_last_colon() {
        assert_eq!(Source::parse("c:/x.warc:12"), Some(Source { input: "c:/x.warc", offset: 12 }));
        assert_eq!(Source::parse("-:0"), Some(Source { input: "-", offset: 0 }));
        assert_eq!(Source::parse("x.warc"), None);
        assert_eq!(Source::parse("x.warc:1a"), None);
    }

    #[test]
    fn malformed_rows_name_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.csv");
        let header = "doc_id,url,host,source,bytes,lines,chunks,exact_center,title\n";
        let cases = [
            ("0,u,h,s:0,10,1,1,0,\n1,u,h,s:5,ten,1,1,1,\n", "line 3: bytes"),
            ("0,u,h,s:0,10,1,1,0,\n2,u,h,s:5,1,1,1,1,\n", "line 3: expected doc_id 1, found 2"),
            ("0,u,h,s:0,10,1,1,1,\n", "line 2: exact_center is larger"),
            ("0,u,h,s,10,1,1,0,\n", "line 2: source"),
            ("0,u,h,s:0,10,1,1,0\n", "line 2: expected 9 columns"),
            ("0,u,h,s:0,,,,0,\n", "line 2: bytes"),
        ];
        for (rows, want) in cases {
            std::fs::write(&path, format!("{header}{rows}")).unwrap();
            let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
            assert!(e.contains(&format!("docs.csv {want}")), "{e}");
        }
        std::fs::write(&path, "doc_id,url\n").unwrap();
        let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
        assert!(e.contains("line 1: expected the header"), "{e}");
        std::fs::write(&path, format!("{header}0,u,h,s:0,1,1,1,0,\n")).unwrap();
        let e = for_each_doc(&path, DocTable::Final, |_| bail!("no")).unwrap_err();
        assert!(format!("{e:#}").contains("docs.csv line 2: no"), "{e:#}");
    }
}
