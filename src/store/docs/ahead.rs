//! Rows of a document table read, split and parsed on a thread of their
//! own, a batch ahead of the pass that uses them.
//!
//! A pass over docs.csv is one thread's work, and at 23 million documents
//! the report makes two and the exact stage one: reading the file (the
//! kernel's copy), splitting its rows, checking them as UTF-8 and parsing
//! their fields took a sixth of the report's samples (`perf`) while the
//! second core had nothing to do. Here a reader thread does all of that
//! and hands the rows over in batches, each row's text copied once, with
//! its parsed [`Doc`] whose strings are given as spans of that text; the
//! pass only rebuilds each `Doc` over the batch and calls its callback.
//!
//! Rows arrive in the table's order, and a fault of the table (a row that
//! is not UTF-8, a field that is not a number, a docID out of order) comes
//! after the rows before it, as the pass would meet it reading the table
//! itself. At most three batches exist at a time (one being filled, one
//! waiting, one being used), each of about [`batch_bytes`] of text.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

use anyhow::{Context, anyhow, bail};

use super::{Crawled, Doc, DocTable, DocsReader, ReadRow, Row, RowsReader, Source, TextFields, parse_fields};

/// Text gathered in one batch before it is handed over: 1 MiB, down to
/// 128 KiB at the smallest budgets (a 128th of it): three batches of 1 MiB,
/// with their rows and field bounds, took 9 to 14 MiB of each stage's peak
/// at `--memory 16M`.
fn batch_bytes() -> usize {
    crate::base::memory::sized_by_budget(128, 128 << 10, 1 << 20)
}

/// Rows read ahead, their texts end to end.
#[derive(Default)]
struct Batch {
    text: String,
    /// Each row's field bounds, relative to its text.
    bounds: Vec<(usize, usize)>,
    rows: Vec<Ahead>,
    /// After the rows: the end of the table, or the fault that ends it.
    end: Option<anyhow::Result<()>>,
}

/// One row of a [`Batch`].
struct Ahead {
    text: Range<usize>,
    bounds: Range<usize>,
    /// The row's line in the table, as the `csv` crate counts.
    line: u64,
    /// One line without quotes, so a writer may copy it ([`ReadRow`]).
    plain: bool,
    /// The parsed row, its strings empty: `spans` says where in the row's
    /// text they are.
    doc: Doc<'static>,
    spans: Spans,
}

/// Where a [`Doc`]'s strings are in its row's text: url, host, the
/// source's input, title, date, canonical.
type Spans = [Range<usize>; 6];

/// Reads the rows after the header, in batches, ending with the table's
/// end or fault.
struct Producer<'p> {
    rows: RowsReader<File>,
    path: &'p Path,
    table: DocTable,
    last_id: Option<u32>,
    done: bool,
}

impl Producer<'_> {
    /// Fills `batch` (emptied first) with the next rows; false once the
    /// table has ended, with the end in a batch already handed out.
    fn fill(&mut self, batch: &mut Batch) -> bool {
        if self.done {
            return false;
        }
        batch.text.clear();
        batch.bounds.clear();
        batch.rows.clear();
        batch.end = None;
        let limit = batch_bytes();
        while batch.text.len() < limit {
            if let Err(e) = self.push_next(batch) {
                batch.end = Some(Err(e));
            }
            if batch.end.is_some() {
                self.done = true;
                break;
            }
        }
        true
    }

    /// Adds the next row to `batch`, or sets its end when there is none;
    /// an `Err` is a fault of the table.
    fn push_next(&mut self, batch: &mut Batch) -> anyhow::Result<()> {
        let (path, table) = (self.path, self.table);
        let line = self.rows.line();
        let more =
            self.rows.next_row().with_context(|| format!("cannot read {} (line {line})", path.display()))?;
        if !more {
            batch.end = Some(Ok(()));
            return Ok(());
        }
        let Some(row) = self.rows.row() else { return Err(DocsReader::first_error(path, table)) };
        let doc = parse_fields(&row, table).map_err(|e| anyhow!("{} line {line}: {e}", path.display()))?;
        if let Some(last) = self.last_id.filter(|&l| l >= doc.id) {
            bail!(
                "{} line {line}: doc_id {} does not follow {last}: rows are in docID order",
                path.display(),
                doc.id
            );
        }
        self.last_id = Some(doc.id);
        let start = batch.text.len();
        batch.text.push_str(row.text);
        let first = batch.bounds.len();
        batch.bounds.extend_from_slice(row.bounds);
        let (doc, spans) = detach(&doc, row.text);
        batch.rows.push(Ahead {
            text: start..batch.text.len(),
            bounds: first..batch.bounds.len(),
            line,
            plain: !self.rows.quoted,
            doc,
            spans,
        });
        Ok(())
    }
}

/// `doc` with its strings emptied, and where they are in `text`, the row
/// they were parsed from.
fn detach(doc: &Doc<'_>, text: &str) -> (Doc<'static>, Spans) {
    let span = |s: &str| {
        let start = s.as_ptr() as usize - text.as_ptr() as usize;
        debug_assert!(start + s.len() <= text.len(), "a field of the row");
        start..start + s.len()
    };
    // Without text fields there is no title, not even an empty one.
    let title = doc.text.map_or(0..0, |t| span(t.title));
    let canonical = doc.text.map_or(0..0, |t| span(t.canonical));
    let spans =
        [span(doc.url), span(doc.host), span(doc.source.input), title, span(doc.crawled.date), canonical];
    let detached = Doc {
        id: doc.id,
        url: "",
        host: "",
        source: Source { input: "", offset: doc.source.offset },
        text: doc.text.map(|t| TextFields { title: "", canonical: "", ..t }),
        center: doc.center,
        missing_for: doc.missing_for,
        crawled: Crawled { date: "", status: doc.crawled.status },
        near_group: doc.near_group,
    };
    (detached, spans)
}

/// The row's `Doc`, its strings in `text`, the row's text.
fn attach<'a>(ahead: &Ahead, text: &'a str) -> Doc<'a> {
    let [url, host, input, title, date, canonical] = ahead.spans.clone();
    let doc = &ahead.doc;
    Doc {
        id: doc.id,
        url: &text[url],
        host: &text[host],
        source: Source { input: &text[input], offset: doc.source.offset },
        text: doc.text.map(|t| TextFields {
            bytes: t.bytes,
            lines: t.lines,
            chunks: t.chunks,
            title: &text[title],
            canonical: &text[canonical.clone()],
        }),
        center: doc.center,
        missing_for: doc.missing_for,
        crawled: Crawled { date: &text[date], status: doc.crawled.status },
        near_group: doc.near_group,
    }
}

/// Calls `f` with each row of `batch`, then returns the table's end or
/// fault if the batch holds it (`None`: more rows follow).
fn consume(
    batch: &mut Batch,
    path: &Path,
    table: DocTable,
    f: &mut impl FnMut(&ReadRow<'_>) -> anyhow::Result<()>,
) -> Option<anyhow::Result<()>> {
    for ahead in &batch.rows {
        let text = &batch.text[ahead.text.clone()];
        let bounds = &batch.bounds[ahead.bounds.clone()];
        let read =
            ReadRow { doc: attach(ahead, text), table, line: ahead.plain.then_some(Row { text, bounds }) };
        if let Err(e) = f(&read) {
            return Some(Err(crate::store::row_error(e, path, ahead.line)));
        }
    }
    batch.end.take()
}

/// Calls `f` with every row after the header that `rows` has just read,
/// reading them on a thread of its own (in this one if none can start).
pub(super) fn for_each(
    rows: RowsReader<File>,
    path: &Path,
    table: DocTable,
    mut f: impl FnMut(&ReadRow<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut producer = Producer { rows, path, table, last_id: None, done: false };
    std::thread::scope(|scope| {
        let (full, full_rx) = sync_channel::<Batch>(1);
        let (empty, empty_rx) = channel::<Batch>();
        // The producer goes to the thread only once it has started, so
        // that it is still here if none can start.
        let (give, take) = channel::<Producer<'_>>();
        let reader = std::thread::Builder::new().name("overlap-rows".into()).spawn_scoped(scope, move || {
            if let Ok(mut producer) = take.recv() {
                produce(&mut producer, full, empty_rx);
            }
        });
        if reader.is_ok() {
            // The thread waits on `take`, so this cannot fail.
            let _ = give.send(producer);
            for mut batch in full_rx {
                if let Some(end) = consume(&mut batch, path, table, &mut f) {
                    // Dropping the receiver stops the reader at its next
                    // batch.
                    return end;
                }
                let _ = empty.send(batch);
            }
        } else {
            let mut batch = Batch::default();
            while producer.fill(&mut batch) {
                if let Some(end) = consume(&mut batch, path, table, &mut f) {
                    return end;
                }
            }
        }
        // The last batch holds the table's end: only a reader that
        // panicked stops before it.
        Err(anyhow!("cannot read {}: its reader stopped", path.display()))
    })
}

/// The reader thread: fills batches, reusing the ones given back, until
/// the table ends or the pass stops taking them.
fn produce(producer: &mut Producer<'_>, full: SyncSender<Batch>, empty: Receiver<Batch>) {
    loop {
        let mut batch = empty.try_recv().unwrap_or_default();
        if !producer.fill(&mut batch) || full.send(batch).is_err() {
            return;
        }
    }
}
