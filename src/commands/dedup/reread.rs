//! Reading the kept documents' records again and writing them, in input
//! order: each input is read once, front to back, by the reader the
//! analysis read it with (the same format and settings, from the
//! manifest), and a record is a kept document's when its offset is the one
//! docs.csv gives. Reading an input stops at its last kept document.
//!
//! One thread reads and sends the records found in batches; the thread
//! pool turns each batch into output bytes (extraction for `jsonl`, gzip
//! for `warc`: most of the work), and they are written in order.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};

use anyhow::{Context, bail};
use rayon::prelude::*;

use super::output;
use super::{DedupStats, Format};
use crate::base::progress::Progress;
use crate::bytes::extract;
use crate::bytes::read::warc::WarcReader;
use crate::bytes::read::{self, InputFormat, Item, RawDoc, ReadOptions, Reader};
use crate::store::analysis::documents::Docs;
use crate::store::destination::Sink;

/// A kept document's record: its input (an index into the names the
/// manifest gives), its offset there, and its row. Ordered so that a
/// sorted list is in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Wanted {
    pub input: u32,
    pub offset: u64,
    pub row: u32,
}

/// An input to read, and its documents in the sorted list of [`Wanted`].
#[derive(Clone, Debug)]
pub(super) struct File {
    /// As docs.csv's `source` names it.
    pub name: String,
    /// The file to read: its canonical path, checked to be the file the
    /// analysis read.
    pub path: PathBuf,
    pub range: Range<usize>,
}

/// How records are read and written.
pub(super) struct Settings {
    /// As the analysis read the inputs.
    pub read: ReadOptions,
    /// As the analysis cut texts.
    pub max_doc_bytes: usize,
    pub format: Format,
    /// Record bytes in one batch.
    pub batch_bytes: usize,
}

/// Whether `path` is read as WARC, with `opts` (whose format may be
/// `auto`).
pub(super) fn is_warc(path: &Path, opts: &ReadOptions) -> anyhow::Result<bool> {
    Ok(match read::probe(path, opts)? {
        read::Opened::Records(_, format) => format == InputFormat::Warc,
        read::Opened::Skipped(_) => false,
    })
}

/// A kept document as read.
struct Found {
    row: u32,
    /// Index into the files.
    file: usize,
    offset: u64,
    url: String,
    /// Whether the record holds a page (not a revisit, not an HTTP 304).
    has_page: bool,
    /// The page, for `jsonl`.
    page: Option<RawDoc>,
    /// The record's bytes, for `warc`.
    record: Option<Vec<u8>>,
}

impl Found {
    fn bytes(&self) -> usize {
        self.page.as_ref().map_or(0, |p| p.body.len()) + self.record.as_ref().map_or(0, Vec::len)
    }
}

/// Documents in one batch, at most.
const BATCH_DOCS: usize = 256;

/// Reads the `wanted` records of `files` and writes them to `sink`.
pub(super) fn write(
    files: &[File],
    wanted: &[Wanted],
    docs: &Docs,
    settings: &Settings,
    sink: &mut Sink,
    stats: &mut DedupStats,
    progress: &Progress,
) -> anyhow::Result<()> {
    let total: usize = files.iter().map(|f| f.range.len()).sum();
    let bar = progress.items("dedup", total as u64, "documents");
    let (tx, rx) = sync_channel::<Vec<Found>>(1);
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("overlap-dedup".into())
            .spawn_scoped(scope, move || read_all(files, wanted, docs, settings, &tx))
            .context("cannot start the reader thread")?;
        let written = (|| {
            for batch in rx.iter() {
                let encoded: Vec<anyhow::Result<(Vec<u8>, bool)>> =
                    batch.par_iter().map(|found| encode(found, files, docs, settings)).collect();
                for encoded in encoded {
                    let (bytes, has_page) = encoded?;
                    sink.write(&bytes)?;
                    stats.written += 1;
                    if !has_page {
                        stats.no_page += 1;
                    }
                }
                bar.inc(batch.len() as u64);
            }
            anyhow::Ok(())
        })();
        // A failed write drops the receiver, which stops the reader at its
        // next batch; its own error, if any, is the one to tell first.
        drop(rx);
        let read = reader.join().map_err(|_| anyhow::anyhow!("the reader thread failed"))?;
        read.and(written)
    })?;
    bar.finish_and_clear();
    Ok(())
}

/// The output bytes of one document, and whether its record held a page.
fn encode(
    found: &Found,
    files: &[File],
    docs: &Docs,
    settings: &Settings,
) -> anyhow::Result<(Vec<u8>, bool)> {
    let source = super::source(&files[found.file].name, found.offset);
    if settings.format == Format::Warc {
        let record = found.record.as_deref().with_context(|| format!("{source}: no WARC record read"))?;
        return Ok((output::warc_member(record), found.has_page));
    }
    let doc_id = docs.doc_id(found.row);
    let Some(page) = &found.page else {
        return Ok((output::json_line(doc_id, &found.url, &source, None), false));
    };
    let mut text = extract::extract(page).map_err(|reason| {
        anyhow::anyhow!("{source}: docID {doc_id} does not read as a document now ({})", reason.name())
    })?;
    extract::cap(&mut text, settings.max_doc_bytes);
    Ok((output::json_line(doc_id, &found.url, &source, Some(&text.text)), true))
}

/// Runs on the reader thread: reads every file in turn and sends what it
/// finds in batches. Stops early when the receiver is gone.
fn read_all(
    files: &[File],
    wanted: &[Wanted],
    docs: &Docs,
    settings: &Settings,
    tx: &SyncSender<Vec<Found>>,
) -> anyhow::Result<()> {
    let mut batch = Vec::new();
    let mut batch_bytes = 0;
    for (file_index, file) in files.iter().enumerate() {
        let wanted = &wanted[file.range.clone()];
        let mut seen = vec![false; wanted.len()];
        let mut left = wanted.len();
        let mut records = Records::open(file, settings)?;
        while left > 0 {
            let Some(item) =
                records.next().with_context(|| format!("cannot read {}", file.path.display()))?
            else {
                break;
            };
            let offset = item.offset();
            let first = wanted.partition_point(|w| w.offset < offset);
            let end = first + wanted[first..].partition_point(|w| w.offset == offset);
            if first == end {
                continue;
            }
            let (url, page) = match item {
                Item::Doc(raw) => (raw.url.clone(), Some(raw)),
                Item::Revisit(r) => (r.url, None),
                Item::Status(s) => (s.url, None),
                // Nothing is known to this reader, so no page is left unread.
                Item::Known(_) | Item::Skip(_) | Item::Redirect(_) | Item::Note(_) => continue,
            };
            let has_page = page.is_some();
            let page = page.filter(|_| settings.format == Format::Jsonl);
            let record = records.take_record(offset);
            for k in first..end {
                if std::mem::replace(&mut seen[k], true) {
                    continue;
                }
                left -= 1;
                let found = Found {
                    row: wanted[k].row,
                    file: file_index,
                    offset,
                    url: url.clone(),
                    has_page,
                    page: page.clone(),
                    record: record.clone(),
                };
                batch_bytes += found.bytes();
                batch.push(found);
                if batch.len() >= BATCH_DOCS || batch_bytes >= settings.batch_bytes {
                    if tx.send(std::mem::take(&mut batch)).is_err() {
                        return Ok(());
                    }
                    batch_bytes = 0;
                }
            }
        }
        if let Some(k) = seen.iter().position(|&s| !s) {
            return Err(super::not_found_again(&file.name, wanted[k].offset, docs.doc_id(wanted[k].row)));
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
    Ok(())
}

/// An input's records, and for `warc` the bytes of each.
enum Records {
    Warc(Box<WarcReader>),
    Other(Box<dyn Reader>),
}

impl Records {
    /// Opens `file` as the analysis read it.
    fn open(file: &File, settings: &Settings) -> anyhow::Result<Records> {
        let opened = read::probe(&file.path, &settings.read)?;
        if settings.format == Format::Warc
            && let read::Opened::Records(src, InputFormat::Warc) = opened
        {
            let reader = WarcReader::new(*src, settings.read.max_record_bytes).keeping_records();
            return Ok(Records::Warc(Box::new(reader)));
        }
        match opened.input(&settings.read) {
            read::Input::Records(reader) => Ok(Records::Other(reader)),
            read::Input::Skipped(why) => bail!("{}: no records to read ({})", file.name, why.name()),
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Item>> {
        match self {
            Records::Warc(r) => r.next_item(),
            Records::Other(r) => r.next_item(),
        }
    }

    /// The bytes of the record at `offset`, just read (`warc` only).
    fn take_record(&mut self, offset: u64) -> Option<Vec<u8>> {
        match self {
            Records::Warc(r) => r.take_record(offset),
            Records::Other(_) => None,
        }
    }
}
