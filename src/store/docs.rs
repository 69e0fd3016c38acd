//! The document table, the one owner of its columns: `fingerprint-docs.csv`
//! as the fingerprint stage writes it, and `docs.csv`, the same rows with
//! each document's exact-group center, as the exact stage writes it.
//!
//! | column | meaning |
//! |---|---|
//! | `doc_id` | the docID: in a first analysis dense, from 0, in input order; through a chain of analyses (`--previous`) each URL keeps its docID, so there are gaps (see [`super::handles`]). Rows are in docID order |
//! | `url`, `host` | the URL as recorded, and its lowercase host without port (empty when the URL has none) |
//! | `source` | `INPUT:OFFSET`, the input as given on the command line and the record's offset in it ([`Source`]) |
//! | `bytes`, `lines`, `chunks` | payload bytes, normalized lines, chunk windows |
//! | `exact_center` | `docs.csv` only: the center's docID (its own when it has no copies), empty for an empty document |
//! | `title` | the HTML `<title>`, empty for other documents |
//! | `missing_for` | analyses in a row the page has been lost or absent from the inputs, its last text kept (`--keep-missing`); 0 when it was read this time |
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
                &["doc_id", "url", "host", "source", "bytes", "lines", "chunks", "title", "missing_for"]
            }
            DocTable::Final => &[
                "doc_id",
                "url",
                "host",
                "source",
                "bytes",
                "lines",
                "chunks",
                "exact_center",
                "title",
                "missing_for",
            ],
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
    /// `docs.csv` only: the docID of the exact-group center, `None` for an
    /// empty document (and always in `fingerprint-docs.csv`).
    pub center: Option<u32>,
    pub missing_for: u16,
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
    numbers: [itoa::Buffer; 6],
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
        let [id, bytes, lines, chunks, center, missing] = &mut self.numbers;
        let id = id.format(doc.id);
        let (bytes, lines, chunks, title) = match &doc.text {
            Some(t) => (bytes.format(t.bytes), lines.format(t.lines), chunks.format(t.chunks), t.title),
            None => ("", "", "", ""),
        };
        let head = [id, doc.url, doc.host, self.source.as_str(), bytes, lines, chunks];
        let missing = missing.format(doc.missing_for);
        match self.table {
            DocTable::Fingerprint => self.out.row(head.into_iter().chain([title, missing])),
            DocTable::Final => {
                let center = doc.center.map_or("", |c| center.format(c));
                self.out.row(head.into_iter().chain([center, title, missing]))
            }
        }
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.out.finish()
    }
}

/// Reads a document table front to back, checking what its writers
/// promise: the header, docIDs ascending, numbers where numbers belong, a
/// center no larger than its document. A row that breaks one is an error
/// naming the file and line.
pub(crate) struct DocsReader {
    path: PathBuf,
    table: DocTable,
    reader: csv::Reader<File>,
    record: csv::StringRecord,
    rows: u32,
    last_id: Option<u32>,
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
            rows: 0,
            last_id: None,
        })
    }

    /// Where the next row starts in the file, in bytes.
    pub(crate) fn position(&self) -> u64 {
        self.reader.position().byte()
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
        let doc = parse_row(&self.record, self.table)
            .map_err(|e| anyhow::anyhow!("{} line {line}: {e}", self.path.display()))?;
        if let Some(last) = self.last_id.filter(|&l| l >= doc.id) {
            bail!(
                "{} line {line}: doc_id {} does not follow {last}: rows are in docID order",
                self.path.display(),
                doc.id
            );
        }
        self.rows += 1;
        self.last_id = Some(doc.id);
        Ok(Some(doc))
    }

    /// Rows read so far: the row of the last one read is one less.
    pub(crate) fn rows(&self) -> u32 {
        self.rows
    }
}

/// One row of a document table, checked but for its place in the table.
pub(crate) fn parse_row(r: &csv::StringRecord, table: DocTable) -> anyhow::Result<Doc<'_>> {
    let columns = table.header().len();
    if r.len() != columns {
        bail!("expected {columns} columns, found {}", r.len());
    }
    let id: u32 = r[0].parse().map_err(|_| anyhow::anyhow!("doc_id is not a number"))?;
    let source = Source::parse(&r[3]).context("source is not INPUT:OFFSET")?;
    let number = |i: usize, name: &str| -> anyhow::Result<u64> {
        r[i].parse().map_err(|_| anyhow::anyhow!("{name} is not a number"))
    };
    let missing_for: u16 =
        r[columns - 1].parse().map_err(|_| anyhow::anyhow!("missing_for is not a number"))?;
    let (center, title) = match table {
        DocTable::Fingerprint => (None, &r[7]),
        DocTable::Final => {
            let center = match &r[7] {
                "" => None,
                c => {
                    let c: u32 = c.parse().map_err(|_| anyhow::anyhow!("exact_center is not a number"))?;
                    if c > id {
                        bail!("exact_center is larger than doc_id");
                    }
                    Some(c)
                }
            };
            (center, &r[8])
        }
    };
    // A copy not filled in yet has no text fields; docs.csv always has them.
    let unfilled = table == DocTable::Fingerprint && [4, 5, 6].iter().all(|&i| r[i].is_empty());
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
    Ok(Doc { id, url: &r[1], host: &r[2], source, text, center, missing_for })
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
            missing_for: id as u16,
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
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for\n\
             0,\"http://a.example/x,y\",a.example,c:/crawl.warc.gz:17,10,2,1,0,T,0\n"
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
        let header = "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for\n";
        let cases = [
            ("0,u,h,s:0,10,1,1,0,,0\n1,u,h,s:5,ten,1,1,1,,0\n", "line 3: bytes"),
            ("3,u,h,s:0,10,1,1,0,,0\n2,u,h,s:5,1,1,1,1,,0\n", "line 3: doc_id 2 does not follow 3"),
            ("0,u,h,s:0,10,1,1,1,,0\n", "line 2: exact_center is larger"),
            ("0,u,h,s,10,1,1,0,,0\n", "line 2: source"),
            ("0,u,h,s:0,10,1,1,0\n", "line 2: expected 10 columns"),
            ("0,u,h,s:0,,,,0,,0\n", "line 2: bytes"),
            ("0,u,h,s:0,1,1,1,0,,x\n", "line 2: missing_for"),
        ];
        for (rows, want) in cases {
            std::fs::write(&path, format!("{header}{rows}")).unwrap();
            let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
            assert!(e.contains(&format!("docs.csv {want}")), "{e}");
        }
        std::fs::write(&path, "doc_id,url\n").unwrap();
        let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
        assert!(e.contains("line 1: expected the header"), "{e}");
        std::fs::write(&path, format!("{header}0,u,h,s:0,1,1,1,0,,0\n")).unwrap();
        let e = for_each_doc(&path, DocTable::Final, |_| bail!("no")).unwrap_err();
        assert!(format!("{e:#}").contains("docs.csv line 2: no"), "{e:#}");
    }
}
