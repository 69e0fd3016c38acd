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
//! | `date` | the capture's date as its record states it (`WARC-Date`; an ARC record's date written the same way), empty when the record has none ([`Crawled`]) |
//! | `capture` | what kind of record captured the page: `response` for an HTTP 200 response with its payload, `revisit` for a WARC revisit record (its payload stored with another capture), empty for a record without an HTTP header (a WARC `resource`, an ARC `ftp:` record, JSONL, a page feed) |
//! | `canonical` | the page's `<link rel="canonical">` address as written (entities decoded, spaces trimmed), empty when it names none |
//! | `near_group` | `docs.csv` only: the document's near-replica group, as `groups.csv`'s `group` names it (its smallest docID); empty for a document in no group |
//!
//! # Who writes `near_group`
//!
//! The exact stage writes `docs.csv` and knows no groups: groups are
//! components over the Overlap table, which the report stage finds. So the
//! exact stage writes `near_group` empty and the report fills it in
//! ([`write_near_groups`]), rewriting the table through this owner. The
//! column is never older than the rest of the analysis: the exact stage
//! rewrites the table with it empty, and a pairs stage that runs empties it
//! ([`clear_near_groups`]), since a new Overlap table makes other groups;
//! both remove the report's stamp, so the next report fills it in again
//! even when its key did not change (an output rebuilt under the same
//! flags). An empty column in an analysis whose report is up to date means
//! no document has a near-replica. A stage that leaves the column empty
//! marks the table so ([`mark_ungrouped`]), and the report removes the
//! mark before it writes a group, so that a pairs stage right after the
//! exact stage does not read the whole table to find nothing to empty.
//!
//! In `fingerprint-docs.csv`, a copy the input declares (a revisit, a
//! payload-digest copy) is written with `bytes`, `lines`, `chunks` and
//! `title` empty while its input is read, and filled in from its
//! original's row before the stage ends ([`Doc::text`] is `None` until
//! then).

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::ops::{Index, Range};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::csv_out::CsvOut;
use super::{CannotWrite, OutDir};
use crate::bytes::scan::swar;

mod ahead;

/// Which of the two document tables a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DocTable {
    /// `fingerprint-docs.csv`: no `exact_center` column.
    Fingerprint,
    /// `docs.csv`.
    Final,
}

impl DocTable {
    /// The `title` column; `missing_for`, `date`, `capture` and
    /// `canonical` follow it.
    fn title_column(self) -> usize {
        match self {
            DocTable::Fingerprint => 7,
            DocTable::Final => 8,
        }
    }

    fn header(self) -> &'static [&'static str] {
        match self {
            DocTable::Fingerprint => &[
                "doc_id",
                "url",
                "host",
                "source",
                "bytes",
                "lines",
                "chunks",
                "title",
                "missing_for",
                "date",
                "capture",
                "canonical",
            ],
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
                "date",
                "capture",
                "canonical",
                "near_group",
            ],
        }
    }
}

/// Where a document's record is: the input as given on the command line
/// and the record's byte offset in it (see docs/inputs.md for what
/// an offset is in a compressed input). Written `INPUT:OFFSET`; the input
/// may itself contain colons, the offset never does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Source<'a> {
    pub input: &'a str,
    pub offset: u64,
}

impl<'a> Source<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Source<'a>> {
        // The offset is a few bytes at the end: a backward loop finds its
        // colon sooner than `rsplit_once`'s generic searcher did (4% of
        // the report's instructions, which reads docs.csv three times).
        let colon = text.bytes().rposition(|b| b == b':')?;
        let (input, offset) = (&text[..colon], &text[colon + 1..]);
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
    /// The `<link rel="canonical">` address, empty without one.
    pub canonical: &'a str,
}

/// How a page's record captured it: the `date` and `capture` columns. A
/// copy's are its own record's, not its original's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Crawled<'a> {
    /// The date as the record states it, empty without one.
    pub date: &'a str,
    pub status: CaptureStatus,
}

/// The `capture` column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum CaptureStatus {
    /// An HTTP 200 response with its payload: `response`.
    Response,
    /// A record without an HTTP status: empty.
    #[default]
    Unknown,
    /// A WARC revisit record, whose payload another capture holds.
    Revisit,
}

impl CaptureStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CaptureStatus::Response => "response",
            CaptureStatus::Unknown => "",
            CaptureStatus::Revisit => "revisit",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<CaptureStatus> {
        match text {
            "response" => Some(CaptureStatus::Response),
            "" => Some(CaptureStatus::Unknown),
            "revisit" => Some(CaptureStatus::Revisit),
            _ => None,
        }
    }
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
    pub crawled: Crawled<'a>,
    /// `docs.csv` only: the docID naming the document's near-replica group
    /// (its smallest), `None` for a document in no group and until the
    /// report stage has run (see the module comment).
    pub near_group: Option<u32>,
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
    numbers: [itoa::Buffer; 7],
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
        // As `Source`'s Display writes it, without the formatting
        // machinery, which took a tenth of this function's instructions.
        self.source.clear();
        self.source.push_str(doc.source.input);
        self.source.push(':');
        self.source.push_str(itoa::Buffer::new().format(doc.source.offset));
        let [id, bytes, lines, chunks, center, missing, group] = &mut self.numbers;
        let id = id.format(doc.id);
        let (bytes, lines, chunks, title, canonical) = match &doc.text {
            Some(t) => {
                (bytes.format(t.bytes), lines.format(t.lines), chunks.format(t.chunks), t.title, t.canonical)
            }
            None => ("", "", "", "", ""),
        };
        let head = [id, doc.url, doc.host, self.source.as_str(), bytes, lines, chunks];
        let tail =
            [missing.format(doc.missing_for), doc.crawled.date, doc.crawled.status.as_str(), canonical];
        match self.table {
            DocTable::Fingerprint => self.out.row(head.into_iter().chain([title]).chain(tail)),
            DocTable::Final => {
                let center = doc.center.map_or("", |c| center.format(c));
                let group = doc.near_group.map_or("", |g| group.format(g));
                self.out.row(head.into_iter().chain([center, title]).chain(tail).chain([group]))
            }
        }
    }

    /// Writes the row `read` with its `center` and `near_group` replaced
    /// (a `fingerprint-docs.csv` row has neither): the bytes [`Self::push`]
    /// would write. A row read as it would be written ([`Verbatim`]) is
    /// copied around the new columns rather than formatted again: in the
    /// exact stage, which adds the center to every row, formatting took a
    /// seventh of the stage's CPU time at 23 million documents.
    pub(crate) fn push_read(
        &mut self,
        read: &ReadRow<'_>,
        center: Option<u32>,
        near_group: Option<u32>,
    ) -> anyhow::Result<()> {
        let doc = Doc { center, near_group, ..read.doc };
        let verbatim = read.line.as_ref().and_then(|row| Verbatim::of(row, &read.doc, read.table));
        let Some(v) = verbatim else { return self.push(&doc) };
        match (self.table, v.table) {
            (DocTable::Final, _) => {
                // doc_id .. chunks, then title .. canonical, wherever the
                // read table has them.
                let title = v.table.title_column();
                let head = v.span(0, 6);
                let tail = v.span(title, title + 4);
                let [.., center, _, group] = &mut self.numbers;
                let center = doc.center.map_or("", |c| center.format(c));
                let group = doc.near_group.map_or("", |g| group.format(g));
                let pieces: [&[u8]; 7] = [head, b",", center.as_bytes(), b",", tail, b",", group.as_bytes()];
                self.out.row_verbatim(&pieces, DocTable::Final.header().len())
            }
            (DocTable::Fingerprint, DocTable::Fingerprint) => {
                self.out.row_verbatim(&[v.text.as_bytes()], DocTable::Fingerprint.header().len())
            }
            (DocTable::Fingerprint, DocTable::Final) => self.push(&doc),
        }
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.out.finish()
    }
}

/// A row as [`for_each_row`] read it: the document, and its line when it
/// is one line without quotes.
pub(crate) struct ReadRow<'a> {
    pub doc: Doc<'a>,
    table: DocTable,
    line: Option<Row<'a>>,
}

/// A row's line as written: one line without quotes (so no field needed
/// any), its numbers as `itoa` writes them (no sign, no leading zero).
/// Only such a line is copied: any other is read for its values and
/// written anew, as before.
struct Verbatim<'a> {
    table: DocTable,
    text: &'a str,
    bounds: &'a [(usize, usize)],
}

impl<'a> Verbatim<'a> {
    /// The row's text from field `first` through field `last`, commas
    /// between them included.
    fn span(&self, first: usize, last: usize) -> &'a [u8] {
        &self.text.as_bytes()[self.bounds[first].0..self.bounds[last].1]
    }

    /// The line `row` of `doc` if it is written as the table's writer
    /// writes its values: every number the row's parse read (a parse
    /// accepts a sign and leading zeros) is canonical. Asked only for a
    /// row that is written again.
    fn of(row: &Row<'a>, doc: &Doc<'a>, table: DocTable) -> Option<Verbatim<'a>> {
        let canonical = |s: &str| match s.as_bytes() {
            // Empty: `bytes`, `lines`, `chunks` of a copy not filled in.
            [] | [b'0'] | [b'1'..=b'9', ..] => true,
            _ => false,
        };
        // The source is `INPUT:OFFSET`, split at its last colon.
        let offset = row[3].get(doc.source.input.len() + 1..).unwrap_or("");
        let numbers = [0, 4, 5, 6, table.title_column() + 1];
        (!offset.is_empty() && canonical(offset) && numbers.iter().all(|&i| canonical(&row[i])))
            .then_some(Verbatim { table, text: row.text, bounds: row.bounds })
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
}

/// A row's fields, by index.
trait Fields: Index<usize, Output = str> {
    fn count(&self) -> usize;
}

impl Fields for csv::StringRecord {
    fn count(&self) -> usize {
        self.len()
    }
}

/// One row of a document table, checked but for its place in the table.
pub(crate) fn parse_row(r: &csv::StringRecord, table: DocTable) -> anyhow::Result<Doc<'_>> {
    parse_fields(r, table)
}

fn parse_fields<R: Fields>(r: &R, table: DocTable) -> anyhow::Result<Doc<'_>> {
    let columns = table.header().len();
    if r.count() != columns {
        bail!("expected {columns} columns, found {}", r.count());
    }
    let id: u32 = r[0].parse().map_err(|_| anyhow::anyhow!("doc_id is not a number"))?;
    let source = Source::parse(&r[3]).context("source is not INPUT:OFFSET")?;
    let number = |i: usize, name: &str| -> anyhow::Result<u64> {
        r[i].parse().map_err(|_| anyhow::anyhow!("{name} is not a number"))
    };
    // A docID no larger than the row's own, or empty.
    let earlier = |i: usize, name: &str| -> anyhow::Result<Option<u32>> {
        if r[i].is_empty() {
            return Ok(None);
        }
        let d: u32 = r[i].parse().map_err(|_| anyhow::anyhow!("{name} is not a number"))?;
        if d > id {
            bail!("{name} is larger than doc_id");
        }
        Ok(Some(d))
    };
    let (center, near_group) = match table {
        DocTable::Fingerprint => (None, None),
        DocTable::Final => (earlier(7, "exact_center")?, earlier(13, "near_group")?),
    };
    let t = table.title_column();
    let (title, canonical) = (&r[t], &r[t + 4]);
    let missing_for: u16 = r[t + 1].parse().map_err(|_| anyhow::anyhow!("missing_for is not a number"))?;
    let status = CaptureStatus::parse(&r[t + 3]).context("capture is not response, revisit or empty")?;
    let crawled = Crawled { date: &r[t + 2], status };
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
            canonical,
        })
    };
    Ok(Doc { id, url: &r[1], host: &r[2], source, text, center, missing_for, crawled, near_group })
}

/// Calls `f` with every row of the table at `path`, read and checked as
/// [`DocsReader`] reads and checks them ([`RowsReader`] splits the rows);
/// an error from `f` names the file and line.
pub(crate) fn for_each_doc(
    path: &Path,
    table: DocTable,
    mut f: impl FnMut(&Doc<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for_each_row(path, table, |read| f(&read.doc))
}

/// [`for_each_doc`], with each row's line for [`DocsWriter::push_read`],
/// for a pass that writes the table again.
pub(crate) fn for_each_row(
    path: &Path,
    table: DocTable,
    f: impl FnMut(&ReadRow<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut rows = RowsReader::new(file, read_size());
    let not_utf8 = || DocsReader::first_error(path, table);
    // No record at all is a header of no fields, as the crate reads it.
    rows.next_row().with_context(|| format!("cannot read {}", path.display()))?;
    let Some(header) = rows.row() else { return Err(not_utf8()) };
    if (0..header.count()).map(|i| &header[i]).ne(table.header().iter().copied()) {
        bail!("{} line 1: expected the header {}", path.display(), table.header().join(","));
    }
    ahead::for_each(rows, path, table, f)
}

/// Rewrites `docs.csv` with each row's `near_group` from `group(row,
/// doc)` (rows counted from 0; an error from it, such as a table written
/// in the same pass that cannot be, stops the pass), every other column as
/// it was; the report
/// stage's part of the table (see the module comment). Written under a
/// temporary name and renamed, as every table is.
pub(crate) fn write_near_groups(
    out: &OutDir,
    mut group: impl FnMut(u32, &Doc<'_>) -> anyhow::Result<Option<u32>>,
) -> anyhow::Result<()> {
    // Unmarked before the table can hold a group, so that a mark is never
    // wrong, whenever a run is killed.
    super::remove_file_if_exists(&out.docs_ungrouped())?;
    let path = out.docs();
    let mut writer = DocsWriter::create(&path, DocTable::Final)?;
    let mut row = 0u32;
    for_each_row(&path, DocTable::Final, |read| {
        let near_group = group(row, &read.doc)?;
        row += 1;
        writer.push_read(read, read.doc.center, near_group)
    })?;
    writer.finish()
}

/// Empties `near_group` in `docs.csv`, rewriting the table only when a
/// row has one; returns whether it did. For a stage that makes the groups
/// stale (see the module comment). A table marked ungrouped is not read.
pub(crate) fn clear_near_groups(out: &OutDir) -> anyhow::Result<bool> {
    if out.docs_ungrouped().is_file() {
        return Ok(false);
    }
    let mut any = false;
    for_each_doc(&out.docs(), DocTable::Final, |doc| {
        any |= doc.near_group.is_some();
        Ok(())
    })?;
    if any {
        write_near_groups(out, |_, _| Ok(None))?;
    }
    mark_ungrouped(out)?;
    Ok(any)
}

/// Marks `docs.csv` as holding no `near_group`, for a stage that has just
/// written it so: the next pairs stage then need not read the whole table
/// to find none (a fifth of its instructions on 262,000 pages, in `overlap
/// run`, right after the exact stage wrote it). [`write_near_groups`]
/// removes the mark before it writes a group; a directory without one
/// (killed between the two, or written by an earlier version) is read.
pub(crate) fn mark_ungrouped(out: &OutDir) -> anyhow::Result<()> {
    let path = out.docs_ungrouped();
    std::fs::write(&path, b"").with_context(|| CannotWrite(path.clone()))
}

/// Rewrites the table at `path`, written by a version 2 analysis (without
/// `date`, `capture` and `canonical`), with the three columns empty, every
/// other field as it was; a table that has them, or no table, is left as
/// it is (see [`super::layout`]).
pub(crate) fn add_capture_columns(path: &Path, table: DocTable) -> anyhow::Result<()> {
    const ADDED: usize = 3;
    let Ok(file) = File::open(path) else { return Ok(()) };
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(file);
    let what = || format!("cannot read {}", path.display());
    let mut record = csv::ByteRecord::new();
    if !reader.read_byte_record(&mut record).with_context(what)? {
        return Ok(());
    }
    let header = table.header();
    let at = table.title_column() + 2;
    let before: Vec<&str> = header[..at].iter().chain(&header[at + ADDED..]).copied().collect();
    if record.iter().eq(header.iter().map(|h| h.as_bytes())) {
        return Ok(());
    }
    if record.iter().ne(before.iter().map(|h| h.as_bytes())) {
        bail!("{} line 1: expected the header {}", path.display(), before.join(","));
    }
    let mut out = CsvOut::create(path, header)?;
    let mut fields: Vec<Vec<u8>> = Vec::new();
    while reader.read_byte_record(&mut record).with_context(what)? {
        if record.len() != before.len() {
            let line = record.position().map_or(0, |p| p.line());
            bail!(
                "{} line {line}: expected {} columns, found {}",
                path.display(),
                before.len(),
                record.len()
            );
        }
        fields.clear();
        fields.extend(record.iter().take(at).map(<[u8]>::to_vec));
        fields.extend(std::iter::repeat_n(Vec::new(), ADDED));
        fields.extend(record.iter().skip(at).map(<[u8]>::to_vec));
        out.row(&fields)?;
    }
    out.finish()
}

impl DocsReader {
    /// The error [`DocsReader`] meets first in the table at `path`: where
    /// [`RowsReader`] finds a row that is not UTF-8, the `csv` crate's
    /// message says where, as it always has.
    fn first_error(path: &Path, table: DocTable) -> anyhow::Error {
        let mut reader = match DocsReader::open(path, table) {
            Ok(reader) => reader,
            Err(e) => return e,
        };
        loop {
            match reader.next_doc() {
                Ok(Some(_)) => {}
                Ok(None) => return anyhow::anyhow!("{} is not UTF-8", path.display()),
                Err(e) => return e,
            }
        }
    }
}

/// Bytes [`RowsReader`] reads at a time: 1 MiB, down to 128 KiB at the
/// smallest budgets (a 128th of it), where 1 MiB was a sixteenth of every
/// stage's memory.
fn read_size() -> usize {
    crate::base::memory::sized_by_budget(128, 128 << 10, 1 << 20)
}

/// Splits CSV records as the `csv` crate's reader does with
/// [`DocsReader`]'s settings, by hand: that reader's byte-by-byte state
/// machine and copy took about 2,300 instructions a row of docs.csv, and
/// the report reads the table three times. A record that is one line
/// without quotes or CR, as nearly every row is, is split where its commas
/// are, found eight bytes at a time, and its fields are read where they
/// lie; others are split field by field ([`split_quoted`]).
///
/// The rules are the crate's: a field that starts with `"` is quoted, `""`
/// in it is a quote, and what follows its closing quote up to the next
/// comma or record end is taken as is; a quote inside an unquoted field is
/// a quote; CR, LF or CR LF ends a record, and blank lines are skipped; a
/// file may end without a line end, or inside a quoted field. A record's
/// line is the crate's: one more than the line feeds read before it, of
/// which the blank lines before it are not yet part, nor the LF of a CR LF
/// that ended the record before.
struct RowsReader<R> {
    input: R,
    read_size: usize,
    buf: Vec<u8>,
    /// The bytes read and not split yet are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// The last record's text: its line in `buf`, or, when it has a
    /// quoted field, `copied`, its fields unescaped one after the other.
    line: Range<usize>,
    quoted: bool,
    copied: Vec<u8>,
    /// Each field's bounds in the text.
    bounds: Vec<(usize, usize)>,
    /// Line feeds read before the next record.
    newlines: u64,
}

/// How far one record's bytes go.
enum Split {
    /// A record, `used` bytes long with its end, holding `newlines` LFs;
    /// for a line without quotes, `line` is where its text is.
    Record { used: usize, newlines: u64, line: Range<usize> },
    /// No more records (`used` bytes of blank lines).
    End { used: usize, newlines: u64 },
    /// The bytes end before the record does.
    More,
}

impl<R: Read> RowsReader<R> {
    fn new(input: R, read_size: usize) -> Self {
        RowsReader {
            input,
            read_size,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            line: 0..0,
            quoted: false,
            copied: Vec::new(),
            bounds: Vec::new(),
            newlines: 0,
        }
    }

    /// The line the next record is given, as the `csv` crate counts.
    fn line(&self) -> u64 {
        self.newlines + 1
    }

    /// Reads the next record; false after the last.
    fn next_row(&mut self) -> std::io::Result<bool> {
        loop {
            let data = &self.buf[self.start..self.end];
            let split = match split_line(data, self.eof, &mut self.bounds) {
                Some(split) => {
                    self.quoted = false;
                    split
                }
                None => {
                    self.quoted = true;
                    split_quoted(data, self.eof, &mut self.copied, &mut self.bounds)
                }
            };
            match split {
                Split::Record { used, newlines, line } => {
                    self.line = self.start + line.start..self.start + line.end;
                    self.start += used;
                    self.newlines += newlines;
                    return Ok(true);
                }
                Split::End { used, newlines } => {
                    self.start += used;
                    self.newlines += newlines;
                    self.bounds.clear();
                    self.quoted = false;
                    self.line = 0..0;
                    return Ok(false);
                }
                Split::More => self.fill()?,
            }
        }
    }

    /// Moves the bytes not split yet to the front of the buffer and reads
    /// more after them; a buffer they fill is doubled first, so that a
    /// record longer than it is split again only a few times.
    fn fill(&mut self) -> std::io::Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.buf.len() {
            self.buf.resize((2 * self.buf.len()).max(self.read_size), 0);
        }
        let n = loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(())
    }

    /// The last record's fields (none after the last record), if they are
    /// UTF-8, each of them.
    fn row(&self) -> Option<Row<'_>> {
        let bytes = if self.quoted { &self.copied[..] } else { &self.buf[self.line.clone()] };
        // `simdutf8` (already in the build, under `encoding_rs`) checks a
        // row of ASCII several times as fast as the standard library: its
        // check was 3.5% of the report's samples at 23 million documents,
        // which reads the table three times.
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        // Valid as a whole, a line's fields are valid each (commas are
        // ASCII); unescaped fields one after the other are unless one ends
        // inside a character.
        let whole = !self.quoted || self.bounds.iter().all(|&(_, e)| text.is_char_boundary(e));
        whole.then_some(Row { text, bounds: &self.bounds })
    }
}

/// A comma's high bit, for each of eight bytes.
fn commas(x: u64) -> u64 {
    swar::in_range(x & !swar::HIGH, b',', b',') & !x
}

/// Splits the record at the start of `data` if it is a line without
/// quotes or CR (see [`RowsReader`]); `None` if it is not. `eof` says that
/// no bytes follow `data`.
fn split_line(data: &[u8], eof: bool, bounds: &mut Vec<(usize, usize)>) -> Option<Split> {
    bounds.clear();
    let mut newlines = 0u64;
    let mut i = 0;
    // Blank lines.
    loop {
        match data.get(i) {
            None if eof => return Some(Split::End { used: i, newlines }),
            None => return Some(Split::More),
            Some(b'\n') => newlines += 1,
            Some(b'\r') => {}
            Some(_) => break,
        }
        i += 1;
    }
    let (end, used) = match memchr::memchr(b'\n', &data[i..]) {
        Some(k) => (i + k, i + k + 1),
        None if eof => (data.len(), data.len()),
        None => return Some(Split::More),
    };
    let line = &data[i..end];
    if memchr::memchr2(b'"', b'\r', line).is_some() {
        return None;
    }
    let mut start = 0;
    loop {
        let comma = swar::find(line, start, commas, |b| b == b',');
        bounds.push((start, comma));
        if comma == line.len() {
            break;
        }
        start = comma + 1;
    }
    Some(Split::Record { used, newlines: newlines + (used - end) as u64, line: i..end })
}

/// Splits the record at the start of `data` field by field, unescaping
/// them into `copied` (see [`RowsReader`]).
fn split_quoted(data: &[u8], eof: bool, copied: &mut Vec<u8>, bounds: &mut Vec<(usize, usize)>) -> Split {
    copied.clear();
    bounds.clear();
    let mut newlines = 0u64;
    let mut i = 0;
    // Blank lines.
    loop {
        match data.get(i) {
            None if eof => return Split::End { used: i, newlines },
            None => return Split::More,
            Some(b'\n') => newlines += 1,
            Some(b'\r') => {}
            Some(_) => break,
        }
        i += 1;
    }
    loop {
        let start = copied.len();
        // At the start of a field.
        if data.get(i) == Some(&b'"') {
            i += 1;
            loop {
                let Some(q) = memchr::memchr(b'"', &data[i..]) else {
                    if !eof {
                        return Split::More;
                    }
                    // The file ends inside the quotes: so does the record.
                    newlines += line_feeds(&data[i..]);
                    copied.extend_from_slice(&data[i..]);
                    bounds.push((start, copied.len()));
                    return Split::Record { used: data.len(), newlines, line: 0..0 };
                };
                newlines += line_feeds(&data[i..i + q]);
                copied.extend_from_slice(&data[i..i + q]);
                i += q + 1;
                match data.get(i) {
                    None if !eof => return Split::More,
                    Some(b'"') => {
                        copied.push(b'"');
                        i += 1;
                    }
                    _ => break,
                }
            }
        }
        // Unquoted, or after the closing quote: up to a comma or the end.
        let rest = &data[i..];
        let Some(k) = memchr::memchr3(b',', b'\n', b'\r', rest) else {
            if !eof {
                return Split::More;
            }
            copied.extend_from_slice(rest);
            bounds.push((start, copied.len()));
            return Split::Record { used: data.len(), newlines, line: 0..0 };
        };
        copied.extend_from_slice(&rest[..k]);
        bounds.push((start, copied.len()));
        i += k + 1;
        match rest[k] {
            b',' => {}
            b'\n' => return Split::Record { used: i, newlines: newlines + 1, line: 0..0 },
            _ => return Split::Record { used: i, newlines, line: 0..0 },
        }
    }
}

fn line_feeds(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// A record's fields as [`RowsReader`] split them.
struct Row<'a> {
    text: &'a str,
    bounds: &'a [(usize, usize)],
}

impl Index<usize> for Row<'_> {
    type Output = str;
    #[inline]
    fn index(&self, i: usize) -> &str {
        let (start, end) = self.bounds[i];
        &self.text[start..end]
    }
}

impl Fields for Row<'_> {
    fn count(&self) -> usize {
        self.bounds.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_marks_exactly_the_commas() {
        swar::assert_marks(commas, |b| b == b',', &[0, b',', b'+', b'-', 0x7f, 0x80, 0xac, 0xff]);
    }

    fn doc<'a>(id: u32, text: Option<TextFields<'a>>, center: Option<u32>) -> Doc<'a> {
        Doc {
            id,
            url: "http://a.example/x,y",
            host: "a.example",
            source: Source { input: "c:/crawl.warc.gz", offset: 17 },
            text,
            center,
            missing_for: id as u16,
            crawled: Crawled {
                date: "2024-01-02T03:04:05Z",
                status: [CaptureStatus::Response, CaptureStatus::Unknown, CaptureStatus::Revisit]
                    [id as usize % 3],
            },
            near_group: None,
        }
    }

    #[test]
    fn both_tables_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let text = TextFields { bytes: 10, lines: 2, chunks: 1, title: "A \"title\"", canonical: "/a,b" };
        for (table, rows) in [
            (DocTable::Fingerprint, vec![doc(0, Some(text), None), doc(1, None, None)]),
            (
                DocTable::Final,
                vec![
                    Doc { near_group: Some(0), ..doc(0, Some(text), Some(0)) },
                    Doc { near_group: Some(0), ..doc(1, Some(text), None) },
                    doc(2, Some(text), Some(2)),
                ],
            ),
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

    /// Rewrites the table at `src` into `dst` with `push_read`, each row's
    /// center and group from `change`.
    fn rewrite(
        src: &Path,
        from: DocTable,
        dst: &Path,
        to: DocTable,
        change: impl Fn(&Doc<'_>) -> (Option<u32>, Option<u32>),
    ) {
        let mut w = DocsWriter::create(dst, to).unwrap();
        for_each_row(src, from, |read| {
            let (center, group) = change(&read.doc);
            w.push_read(read, center, group)
        })
        .unwrap();
        w.finish().unwrap();
    }

    #[test]
    fn rows_written_from_rows_read_are_the_rows_push_writes() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let pieces = ["a", "b.example", ",", "\"", "\n", "\r\n", "é", ":", " ", "7", "0"];
        let text = |rng: &mut crate::testing::XorShift| -> String {
            (0..rng.below(6)).map(|_| pieces[rng.below(pieces.len() as u64) as usize]).collect()
        };
        let number = |rng: &mut crate::testing::XorShift| [0, 1, 9, 10, 4_294_967_296][rng.below(5) as usize];
        let (mut urls, mut hosts, mut inputs, mut titles) = (vec![], vec![], vec![], vec![]);
        let (mut dates, mut canonicals) = (vec![], vec![]);
        for _ in 0..2_000 {
            urls.push(text(&mut rng));
            hosts.push(text(&mut rng));
            inputs.push(text(&mut rng));
            titles.push(text(&mut rng));
            dates.push(text(&mut rng));
            canonicals.push(text(&mut rng));
        }
        let docs: Vec<Doc> = (0..2_000)
            .map(|i| Doc {
                id: 2 * i as u32,
                url: &urls[i],
                host: &hosts[i],
                source: Source { input: &inputs[i], offset: number(&mut rng) },
                text: Some(TextFields {
                    bytes: number(&mut rng),
                    lines: number(&mut rng),
                    chunks: number(&mut rng),
                    title: &titles[i],
                    canonical: &canonicals[i],
                }),
                center: None,
                missing_for: (number(&mut rng) % 3) as u16,
                crawled: Crawled {
                    date: &dates[i],
                    status: [CaptureStatus::Response, CaptureStatus::Unknown, CaptureStatus::Revisit]
                        [rng.below(3) as usize],
                },
                near_group: None,
            })
            .collect();
        let change = |d: &Doc<'_>| {
            ((!d.id.is_multiple_of(3)).then_some(d.id / 2), (d.id.is_multiple_of(5)).then_some(d.id / 4))
        };
        let write = |name: &str, table: DocTable, docs: &[Doc<'_>]| {
            let path = dir.path().join(name);
            let mut w = DocsWriter::create(&path, table).unwrap();
            for d in docs {
                w.push(d).unwrap();
            }
            w.finish().unwrap();
            path
        };
        let fingerprint = write("fingerprint-docs.csv", DocTable::Fingerprint, &docs);
        let changed: Vec<Doc> = docs
            .iter()
            .map(|d| {
                let (center, near_group) = change(d);
                Doc { center, near_group, ..*d }
            })
            .collect();
        let want = write("want.csv", DocTable::Final, &changed);
        // The exact stage's pass, the report's, and the fingerprint
        // stage's filling of copies (every row kept).
        let docs_csv = dir.path().join("docs.csv");
        rewrite(&fingerprint, DocTable::Fingerprint, &docs_csv, DocTable::Final, change);
        assert_eq!(std::fs::read(&docs_csv).unwrap(), std::fs::read(&want).unwrap());
        let again = dir.path().join("again.csv");
        rewrite(&docs_csv, DocTable::Final, &again, DocTable::Final, |d| (d.center, d.near_group));
        assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&want).unwrap());
        let same = dir.path().join("same.csv");
        rewrite(&fingerprint, DocTable::Fingerprint, &same, DocTable::Fingerprint, |_| (None, None));
        assert_eq!(std::fs::read(&same).unwrap(), std::fs::read(&fingerprint).unwrap());
        // Numbers written otherwise than the writer writes them are
        // written anew, not copied.
        let odd = dir.path().join("odd.csv");
        std::fs::write(
            &odd,
            "doc_id,url,host,source,bytes,lines,chunks,title,missing_for,date,capture,canonical\n\
             00,u,h,in:+5,010,1,1,T,0,d,response,c\n1,u,h,in:05,1,+1,1,T,00,,,\n2,u,h,in:0,1,1,1,,0,d,revisit,\n",
        )
        .unwrap();
        rewrite(&odd, DocTable::Fingerprint, &docs_csv, DocTable::Final, |_| (Some(0), None));
        assert_eq!(
            std::fs::read_to_string(&docs_csv).unwrap(),
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n\
             0,u,h,in:5,10,1,1,0,T,0,d,response,c,\n1,u,h,in:5,1,1,1,0,T,0,,,,\n2,u,h,in:0,1,1,1,0,,0,d,revisit,,\n"
        );
    }

    #[test]
    fn the_columns_are_those_documented() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.csv");
        let mut w = DocsWriter::create(&path, DocTable::Final).unwrap();
        let text = TextFields { bytes: 10, lines: 2, chunks: 1, title: "T", canonical: "" };
        w.push(&doc(0, Some(text), Some(0))).unwrap();
        w.push(&Doc { near_group: Some(0), ..doc(1, Some(text), Some(1)) }).unwrap();
        w.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n\
             0,\"http://a.example/x,y\",a.example,c:/crawl.warc.gz:17,10,2,1,0,T,0,2024-01-02T03:04:05Z,response,,\n\
             1,\"http://a.example/x,y\",a.example,c:/crawl.warc.gz:17,10,2,1,1,T,1,2024-01-02T03:04:05Z,,,0\n"
        );
    }

    /// Records, each with its line.
    type Records = Vec<(u64, Vec<Vec<u8>>)>;

    /// The records as [`RowsReader`] splits them reading `chunk` bytes at
    /// a time, and as the `csv` crate does with [`DocsReader`]'s settings.
    fn both_ways(data: &[u8], chunk: usize) -> (Records, Records) {
        let mut csv = csv::ReaderBuilder::new().flexible(true).has_headers(false).from_reader(data);
        let mut record = csv::ByteRecord::new();
        let mut want = Vec::new();
        while csv.read_byte_record(&mut record).unwrap() {
            let line = record.position().unwrap().line();
            want.push((line, record.iter().map(<[u8]>::to_vec).collect()));
        }
        let mut rows = RowsReader::new(data, chunk);
        let mut got = Vec::new();
        loop {
            let line = rows.line();
            if !rows.next_row().unwrap() {
                break;
            }
            let text = if rows.quoted { &rows.copied[..] } else { &rows.buf[rows.line.clone()] };
            got.push((line, rows.bounds.iter().map(|&(a, b)| text[a..b].to_vec()).collect()));
        }
        (got, want)
    }

    #[test]
    fn rows_split_as_the_csv_crate_splits_them() {
        let cases: [&[u8]; 12] = [
            b"",
            b"\n\r\n\r",
            b"a,b\nc,d\n",
            b"a,b\r\nc,d\r\n\r\n\ne",
            b"a,\"b,\"\"c\"\"\nd\",e\n",
            b"\"a\"b,c\"d\",\"\"\n\"\"\"\"",
            b"x,\"unterminated\nquote",
            b"a\rb\n\n\rc,",
            b",,\n,\n",
            b"\"a\"\r\n\"b\"\"\"",
            "\u{e9},\"\u{e9}\"\n".as_bytes(),
            b"1,\"title, with \"\"quotes\"\"\",0\n",
        ];
        for data in cases {
            for chunk in [1, 2, 3, 5, 64] {
                let (got, want) = both_ways(data, chunk);
                assert_eq!(got, want, "{:?} read {chunk} at a time", String::from_utf8_lossy(data));
            }
        }
        let mut rng = crate::testing::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut next = |m: usize| rng.below(m as u64) as usize;
        let alphabet: [&[u8]; 8] = [b"a", b"bc", b",", b"\"", b"\r", b"\n", b"\r\n", "\u{e9}".as_bytes()];
        for case in 0..20_000 {
            let data: Vec<u8> = (0..next(40)).flat_map(|_| alphabet[next(alphabet.len())].to_vec()).collect();
            let chunk = 1 + next(9);
            let (got, want) = both_ways(&data, chunk);
            assert_eq!(got, want, "case {case}: {:?} read {chunk} at a time", String::from_utf8_lossy(&data));
        }
    }

    /// The rows, or the error, as [`DocsReader`] reads the table.
    fn by_docs_reader(path: &Path) -> Result<Vec<String>, String> {
        let mut rows = Vec::new();
        let mut reader = DocsReader::open(path, DocTable::Final).map_err(|e| format!("{e:#}"))?;
        loop {
            let doc = match reader.next_doc() {
                Ok(Some(doc)) => format!("{doc:?}"),
                Ok(None) => return Ok(rows),
                Err(e) => return Err(format!("{e:#}")),
            };
            rows.push(format!("{} {doc}", reader.line()));
        }
    }

    #[test]
    fn for_each_doc_reads_and_fails_as_docs_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.csv");
        let header: &[u8] =
            b"doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n";
        let tables: [&[u8]; 8] = [
            b"0,u,h,s:0,10,1,1,0,,0,,,,\n1,u,h,s:5,1,1,1,1,\"A, \"\"B\"\"\nC\",0,,,,0\n",
            b"0,u,h,s:0,10,1,1,0,T,0,,,,\r\n\r\n\n1,u,h,s:5,1,1,1,0,T,0,,revisit,,1\r\n2,u,h,s:5,1,1,1,0,T,x,,,,\r\n",
            b"0,u,h,s:0,10,1,1,0,,0,d,response,c\n\n1,u,h,s:5,ten,1,1,1,,0,,,,\n",
            b"0,u,h,s:0,10,1,1,0,\xff,0,,,,\n",
            b"0,u,h,s:0,10,1,1,0,\xc3,\xa90,,,,\n",
            b"3,u,h,s:0,10,1,1,0,,0,,,,\n2,u,h,s:5,1,1,1,1,,0,,,,",
            b"0,u,h,s:0,10,1,1,0,,0,,,,0\n1,u,h,s:5,1,1,1,1,\"open",
            b"",
        ];
        for rows in tables {
            for head in [header, b"doc_id,url\n", b"\xff\n", b""] {
                std::fs::write(&path, [head, rows].concat()).unwrap();
                let mut got = Vec::new();
                let mut line = 0;
                let res = for_each_doc(&path, DocTable::Final, |doc| {
                    line += 1;
                    got.push(format!("{doc:?}"));
                    Ok(())
                });
                let got = res.map(|()| got).map_err(|e| format!("{e:#}"));
                let want = by_docs_reader(&path)
                    .map(|rows| rows.into_iter().map(|r| r.split_once(' ').unwrap().1.to_string()).collect());
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&[head, rows].concat()));
            }
        }
        // An error from the callback names the line DocsReader gives.
        std::fs::write(
            &path,
            [header, b"0,u,h,s:0,1,1,1,0,,0,,,,\r\n\r\n1,u,h,s:1,1,1,1,1,,0,,,,\n"].concat(),
        )
        .unwrap();
        let lines: Vec<String> =
            by_docs_reader(&path).unwrap().iter().map(|r| r.split(' ').next().unwrap().into()).collect();
        let e = for_each_doc(&path, DocTable::Final, |doc| if doc.id == 1 { bail!("no") } else { Ok(()) })
            .unwrap_err();
        assert!(format!("{e:#}").contains(&format!("docs.csv line {}: no", lines[1])), "{e:#} {lines:?}");
        // But a write that fails in the callback is the written file's
        // error, however many contexts it has gathered.
        let written = dir.path().join("flags.csv.partial");
        let e = for_each_doc(&path, DocTable::Final, |_| {
            Err(std::io::Error::other("No space left on device"))
                .with_context(|| crate::store::CannotWrite(written.clone()))
                .context("while flagging")
        })
        .unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            format!("while flagging: cannot write {}: No space left on device", written.display())
        );
    }

    /// Tables of several of the reader thread's batches ([`ahead`]): every
    /// row as [`DocsReader`] reads it, quoted rows and rows with no text
    /// fields among them, and a fault in a later batch after all the rows
    /// before it; a callback that stops the pass stops it at its row.
    #[test]
    fn tables_of_many_batches_read_as_docs_reader_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.csv");
        let mut table = DocTable::Final.header().join(",").into_bytes();
        table.push(b'\n');
        let mut id = 0u32;
        while table.len() < 3 * (1 << 20) + 12_345 {
            let title = match id % 7 {
                0 => "\"a \"\"quoted\"\", title\nover two lines\"".to_string(),
                1 => String::new(),
                _ => format!("Titre {} é {}", id, "x".repeat((id % 300) as usize)),
            };
            let center = if id % 11 == 3 { String::new() } else { (id - id % 5).to_string() };
            let group = if id.is_multiple_of(3) { (id / 2).to_string() } else { String::new() };
            let date =
                if id % 7 == 1 { String::new() } else { format!("2024-01-{:02}T00:00:00Z", 1 + id % 28) };
            let status = ["response", "", "revisit"][id as usize % 3];
            let canonical = if id % 5 == 2 { format!("\"/p/{id}?a=1,b\"") } else { String::new() };
            let row = format!(
                "{id},http://h{}.example/p/{id}?q=1,h{}.example,c:/crawl-{}.warc.gz:{},{},{},{},{center},{title},{},{date},{status},{canonical},{group}\n",
                id % 97,
                id % 97,
                id % 4,
                id as u64 * 9_731,
                id * 13 % 5000,
                id % 40,
                id % 37,
                id % 3
            );
            table.extend_from_slice(row.as_bytes());
            id += 1 + id % 2;
        }
        let read = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            let mut got = Vec::new();
            let res = for_each_doc(&path, DocTable::Final, |doc| {
                got.push(format!("{doc:?}"));
                Ok(())
            });
            let got = res.map(|()| got).map_err(|e| format!("{e:#}"));
            let want = by_docs_reader(&path)
                .map(|rows| rows.into_iter().map(|r| r.split_once(' ').unwrap().1.to_string()).collect());
            (got, want)
        };
        let (got, want) = read(&table);
        assert!(want.as_ref().is_ok_and(|rows: &Vec<String>| rows.len() > 10_000), "{want:?}");
        assert_eq!(got, want);
        // A row out of order, and one that is not UTF-8, past the first
        // batches.
        for fault in [&b"5,u,h,s:0,1,1,1,5,,0,,,,\n"[..], b"99999999,u,h,s:0,1,1,1,0,\xff,0,,,,\n"] {
            let (got, want) = read(&[&table[..], fault, b"100000000,u,h,s:0,1,1,1,0,,0,,,,\n"].concat());
            assert!(want.is_err());
            assert_eq!(got, want);
        }
        // A callback that fails stops the pass there, its line named.
        std::fs::write(&path, &table).unwrap();
        let lines: Vec<String> =
            by_docs_reader(&path).unwrap().iter().map(|r| r.split(' ').next().unwrap().into()).collect();
        let mut seen = 0;
        let e = for_each_doc(&path, DocTable::Final, |_| {
            seen += 1;
            if seen == 9_000 { bail!("stop") } else { Ok(()) }
        })
        .unwrap_err();
        assert_eq!(seen, 9_000);
        assert!(format!("{e:#}").contains(&format!("docs.csv line {}: stop", lines[8_999])), "{e:#}");
    }

    #[test]
    fn near_groups_are_written_and_cleared_leaving_the_other_columns() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path().to_path_buf());
        out.create().unwrap();
        let path = out.docs();
        let text = TextFields { bytes: 10, lines: 2, chunks: 1, title: "T", canonical: "https://a.example/" };
        let rows = [doc(0, Some(text), Some(0)), doc(3, Some(text), Some(0)), doc(7, Some(text), None)];
        let mut w = DocsWriter::create(&path, DocTable::Final).unwrap();
        for r in &rows {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
        let written = std::fs::read(&path).unwrap();
        let read = |path: &Path| {
            let mut back = Vec::new();
            for_each_doc(path, DocTable::Final, |d| {
                back.push((d.id, d.near_group));
                Ok(())
            })
            .unwrap();
            back
        };
        assert!(!clear_near_groups(&out).unwrap(), "nothing to clear: not rewritten");
        assert!(out.docs_ungrouped().is_file(), "read, and marked");
        write_near_groups(&out, |row, _| Ok((row < 2).then_some(0))).unwrap();
        assert!(!out.docs_ungrouped().is_file(), "a group written: the mark is gone");
        assert_eq!(read(&path), [(0, Some(0)), (3, Some(0)), (7, None)]);
        assert!(!dir.path().join("docs.csv.partial").exists());
        assert!(clear_near_groups(&out).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), written, "every other column as it was");
        // A marked table is not read: a group written behind the mark's
        // back would stay (no stage writes one so).
        write_near_groups(&out, |_, _| Ok(Some(0))).unwrap();
        mark_ungrouped(&out).unwrap();
        assert!(!clear_near_groups(&out).unwrap());
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
        let header = "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n";
        let cases = [
            ("0,u,h,s:0,10,1,1,0,,0,,,,\n1,u,h,s:5,ten,1,1,1,,0,,,,\n", "line 3: bytes"),
            ("3,u,h,s:0,10,1,1,0,,0,,,,\n2,u,h,s:5,1,1,1,1,,0,,,,\n", "line 3: doc_id 2 does not follow 3"),
            ("0,u,h,s:0,10,1,1,1,,0,,,,\n", "line 2: exact_center is larger"),
            ("0,u,h,s,10,1,1,0,,0,,,,\n", "line 2: source"),
            ("0,u,h,s:0,10,1,1,0,,,,,0\n", "line 2: expected 14 columns"),
            ("0,u,h,s:0,,,,0,,0,,,,\n", "line 2: bytes"),
            ("0,u,h,s:0,1,1,1,0,,x,,,,\n", "line 2: missing_for"),
            ("0,u,h,s:0,1,1,1,0,,0,,,,1\n", "line 2: near_group is larger"),
            ("0,u,h,s:0,1,1,1,0,,0,,,,g\n", "line 2: near_group is not a number"),
            ("0,u,h,s:0,1,1,1,0,,0,,200,,\n", "line 2: capture is not response, revisit or empty"),
        ];
        for (rows, want) in cases {
            std::fs::write(&path, format!("{header}{rows}")).unwrap();
            let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
            assert!(e.contains(&format!("docs.csv {want}")), "{e}");
        }
        std::fs::write(&path, "doc_id,url\n").unwrap();
        let e = format!("{:#}", for_each_doc(&path, DocTable::Final, |_| Ok(())).unwrap_err());
        assert!(e.contains("line 1: expected the header"), "{e}");
        std::fs::write(&path, format!("{header}0,u,h,s:0,1,1,1,0,,0,,,,\n")).unwrap();
        let e = for_each_doc(&path, DocTable::Final, |_| bail!("no")).unwrap_err();
        assert!(format!("{e:#}").contains("docs.csv line 2: no"), "{e:#}");
    }
}
