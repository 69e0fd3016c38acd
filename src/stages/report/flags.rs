//! `flags.csv`: per-document double-content flags in YaCy's spirit, for
//! ranking systems that push copies down.
//!
//! | column | meaning |
//! |---|---|
//! | `www_unique`, `http_unique` | YaCy's URL flags (see [`super::aliases::UrlUnique`]) |
//! | `exact_signature_unique` | the first document (smallest docID) with its normalized text: the exact group's center |
//! | `exact_signature_copycount` | documents with the same text, itself included (YaCy: "count of not-unique-flagged documents + 1") |
//! | `fuzzy_signature` | YaCy's profile signature ([`crate::bytes::fuzzy`]), MD5 as hex |
//! | `fuzzy_signature_unique`, `fuzzy_signature_copycount` | the same two for the fuzzy signature |
//! | `title_unique` | the first document of its host with its title (YaCy compares titles within a host); empty without a title |
//! | `near_replica_count` | other documents that are exact copies or share >= T chunks with it (its center linked in the Overlap table), not counting chains |
//!
//! Signature columns are empty for empty documents, and the fuzzy ones
//! also where the text could not be read again (standard input, an input
//! moved or changed since the fingerprint stage). Inputs are read again
//! front to back, so whole-file gzip inputs are read as well.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread;

use anyhow::Context;
use rayon::prelude::*;
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

use super::aliases::{UrlFlags, url_flags};
use super::fields::{Cell, flag};
use super::marks::{self, MarkCursor, Marks};
use crate::base::progress::Progress;
use crate::bytes::extract;
use crate::bytes::fuzzy;
use crate::bytes::read::{self, Item, RawDoc, ReadOptions};
use crate::store::analysis::documents::{Docs, EMPTY, for_each_doc};
use crate::store::docs::Doc;
use crate::store::sort::Batched;
use crate::store::{CsvOut, FuzzySignature, Header, Manifest, Record, RecordReader, RecordWriter, le_u32};

/// How the fuzzy signature is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FuzzyConfig {
    pub min_token_len: usize,
    pub quant_rate: f64,
}

impl Default for FuzzyConfig {
    fn default() -> FuzzyConfig {
        FuzzyConfig { min_token_len: fuzzy::MIN_TOKEN_LEN, quant_rate: fuzzy::QUANT_RATE }
    }
}

/// Documents flagged not unique, for report.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlagCounts {
    pub min_token_len: usize,
    pub quant_rate: f64,
    /// Documents whose text was read again for the fuzzy signature.
    pub fuzzy_signatures: u64,
    pub www_not_unique: u64,
    pub http_not_unique: u64,
    pub exact_signature_not_unique: u64,
    pub fuzzy_signature_not_unique: u64,
    pub title_not_unique: u64,
}

/// A document with a fuzzy signature, keyed by it: sorted, the documents
/// of a signature are together, smallest docID first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Signed {
    /// The signature in four parts, high first (four-byte parts keep the
    /// record 20 bytes in memory, where a u128 would align it to 32).
    sig: [u32; 4],
    row: u32,
}

/// Scratch record kind 22, 20 bytes: the signature's four parts, high
/// first, and the row.
impl Record for Signed {
    const KIND: u32 = 22;
    const SIZE: usize = 20;
    fn encode(&self, out: &mut [u8]) {
        for (i, v) in self.sig.iter().chain([&self.row]).enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    fn decode(b: &[u8]) -> Self {
        let part = |i: usize| le_u32(&b[i * 4..i * 4 + 4]);
        Signed { sig: [part(0), part(1), part(2), part(3)], row: part(4) }
    }
}

/// Marks each row whose fuzzy signature another document has too: its
/// value is how many documents have it, with [`FIRST`] set for the
/// smallest docID of them. A row without a mark is the only one with its
/// signature. The signatures come from `signatures` (row order, one per
/// document, [`NO_SIGNATURE`] for none) and are sorted within `budget`
/// bytes, spilled to `scratch` beyond it, as are the marks. (Sorting
/// every row by its signature in a list beside the signatures took 25
/// bytes a document whatever `--memory`.)
pub fn shared_signatures(
    signatures: &Path,
    documents: u64,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<marks::Sorted> {
    let mut signed = Batched::new(budget, documents, scratch.join("signed.fpd"));
    let mut reader = signature_reader(signatures, documents)?;
    let mut row = 0u32;
    while let Some(FuzzySignature(sig)) = reader.next_record()? {
        if sig != NO_SIGNATURE {
            let sig = [(sig >> 96) as u32, (sig >> 64) as u32, (sig >> 32) as u32, sig as u32];
            signed.push(Signed { sig, row })?;
        }
        row += 1;
    }
    drop(reader);
    let signed = signed.finish(&scratch.join("signed.sorted.fpd"))?;
    let mut marks = Marks::new(budget / 4, documents, scratch, "fuzzy-marks");
    // One reader finds where each signature's documents end; a second,
    // behind it, marks them with their count: nothing is held per
    // document of a signature, however many share it.
    let (mut ahead, mut behind) = (signed.reader()?, signed.reader()?);
    let mut next = ahead.next_record()?;
    while let Some(first) = next {
        let mut len = 1u64;
        next = ahead.next_record()?;
        while next.is_some_and(|s| s.sig == first.sig) {
            len += 1;
            next = ahead.next_record()?;
        }
        let count = u32::try_from(len)
            .ok()
            .filter(|&c| c < FIRST)
            .context("too many documents share a fuzzy signature")?;
        for i in 0..len {
            let s = behind.next_record()?.context("the signatures' sort ended early")?;
            if count >= 2 {
                marks.push(s.row, if i == 0 { count | FIRST } else { count })?;
            }
        }
    }
    marks.finish()
}

/// In a mark of [`shared_signatures`]: the first document with its
/// signature (counts stay below it: [`shared_signatures`] fails past).
const FIRST: u32 = 1 << 31;

/// The signature file at `path`, checked to hold one signature per
/// document.
fn signature_reader(path: &Path, documents: u64) -> anyhow::Result<RecordReader<FuzzySignature>> {
    let reader = RecordReader::<FuzzySignature>::open(path)?;
    if reader.remaining() != documents {
        anyhow::bail!("{} holds {} signatures for {documents} documents", path.display(), reader.remaining());
    }
    Ok(reader)
}

/// A row with a title, keyed by its host and title: kept sorted by key,
/// then row, so the first row of a key is the smallest docID with that
/// title on that host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TitleEntry {
    /// xxh3-64 of the host and the title, high half first.
    key: [u32; 2],
    row: u32,
}

impl TitleEntry {
    /// The entry of `row`, its key hashed in `scratch` (reused from row
    /// to row: the report loads millions of them).
    fn new(row: u32, host: &str, title: &str, scratch: &mut Vec<u8>) -> TitleEntry {
        scratch.clear();
        scratch.extend_from_slice(&(host.len() as u64).to_le_bytes());
        scratch.extend_from_slice(host.as_bytes());
        scratch.extend_from_slice(title.as_bytes());
        let hash = xxh3_64(scratch);
        TitleEntry { key: [(hash >> 32) as u32, hash as u32], row }
    }
}

/// Scratch record kind 18, 12 bytes: the key's two halves and the row.
impl Record for TitleEntry {
    const KIND: u32 = 18;
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.key[0].to_le_bytes());
        out[4..8].copy_from_slice(&self.key[1].to_le_bytes());
        out[8..12].copy_from_slice(&self.row.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        TitleEntry { key: [le_u32(&b[..4]), le_u32(&b[4..8])], row: le_u32(&b[8..12]) }
    }
}

/// The rows with a title, gathered while docs.csv is loaded: in memory
/// within the budget, spilled in batches beyond it. (A title hash and a
/// row list held for every document took 12 bytes a document whatever
/// `--memory`: 25 MB of the report's heap peak on 2.1 million pages.)
pub struct Titles {
    entries: Batched<TitleEntry>,
    budget: u64,
    dir: PathBuf,
    scratch: Vec<u8>,
}

impl Titles {
    /// The titles of up to `expected` documents within `budget` bytes,
    /// spilled to a file in `scratch`.
    pub fn new(budget: u64, expected: u64, scratch: &Path) -> Titles {
        Titles {
            entries: Batched::new(budget, expected, scratch.join("title-entries.fpd")),
            budget,
            dir: scratch.to_path_buf(),
            scratch: Vec::new(),
        }
    }

    /// Adds the row `row` of host `host`.
    pub fn add(&mut self, row: u32, host: &str, title: &str) -> anyhow::Result<()> {
        if title.is_empty() {
            return Ok(());
        }
        self.entries.push(TitleEntry::new(row, host, title, &mut self.scratch))
    }

    /// The rows whose title is not the first of their host's (a mark of
    /// value 0 each): `title_unique` is false for them, true for the
    /// other rows with a title, empty for rows without. (A byte per
    /// document held them before.)
    pub fn not_first(self, expected: u64) -> anyhow::Result<marks::Sorted> {
        let mut marks = Marks::new(self.budget / 4, expected, &self.dir, "title-marks");
        let mut last = None;
        self.entries.sorted(|e| {
            if last == Some(e.key) {
                marks.push(e.row, 0)?;
            }
            last = Some(e.key);
            Ok(())
        })?;
        marks.finish()
    }
}

/// Records read again per parallel batch.
const BATCH_DOCS: usize = 256;
const BATCH_BYTES: usize = 16 << 20;

/// Marks a document without a fuzzy signature (an MD5 of zero has a chance
/// of 2^-128), so that a signature takes 16 bytes per document, not 32.
pub const NO_SIGNATURE: u128 = 0;

/// Reads every input again and computes the signatures with `cfg`: the
/// fuzzy signature of every document whose text can be read again,
/// reading each input once, in order, and matching records to docs.csv by
/// offset. One thread reads while the pool extracts the batch before, as
/// in the fingerprint stage: extraction is most of the cost. They are
/// written to `path` in row order as the fingerprint stage writes
/// `fuzzy.fpd` ([`NO_SIGNATURE`] for a document without one); returns how
/// many documents have one.
pub fn fuzzy_signatures(
    docs_csv: &Path,
    documents: u64,
    manifest: &Manifest,
    cfg: FuzzyConfig,
    progress: &Progress,
    path: &Path,
) -> anyhow::Result<u64> {
    let bar = progress.items("report", documents, "texts");
    let mut out = RecordWriter::create(path, Header::new::<FuzzySignature>("", false, 0, 1))?;
    let (mut written, mut signed) = (0u64, 0u64);
    let (tx, rx) = sync_channel::<Vec<(u32, RawDoc)>>(2);
    std::thread::scope(|scope| {
        let reader = thread::Builder::new()
            .name("overlap-reread".into())
            .spawn_scoped(scope, move || read_batches(docs_csv, manifest, progress, &tx))
            .context("cannot start the reader thread")?;
        for batch in rx {
            let last = batch.last().map_or(0, |(doc, _)| u64::from(*doc) + 1);
            let done: Vec<(u32, Option<u128>)> = batch
                .into_par_iter()
                .map(|(doc, raw)| {
                    let sig = extract::extract(&raw)
                        .ok()
                        .filter(|t| !t.text.is_empty())
                        .map(|t| fuzzy::fuzzy(&t.text, cfg.min_token_len, cfg.quant_rate));
                    (doc, sig)
                })
                .collect();
            // Batches come in row order, and so does each batch's list.
            for (doc, sig) in done {
                let doc = u64::from(doc);
                if doc < written || doc >= documents {
                    continue;
                }
                while written < doc {
                    out.push(&FuzzySignature(NO_SIGNATURE))?;
                    written += 1;
                }
                let sig = sig.unwrap_or(NO_SIGNATURE);
                signed += u64::from(sig != NO_SIGNATURE);
                out.push(&FuzzySignature(sig))?;
                written += 1;
            }
            bar.set_position(last);
        }
        reader.join().map_err(|_| anyhow::anyhow!("the reader thread failed"))?
    })?;
    while written < documents {
        out.push(&FuzzySignature(NO_SIGNATURE))?;
        written += 1;
    }
    out.finish()?;
    bar.finish_and_clear();
    Ok(signed)
}

/// Runs on the reader thread: sends the records of the non-empty
/// documents of docs.csv in batches, in docID order.
fn read_batches(
    docs_csv: &Path,
    manifest: &Manifest,
    progress: &Progress,
    tx: &SyncSender<Vec<(u32, RawDoc)>>,
) -> anyhow::Result<()> {
    let read_opts = manifest.read.options();
    let locator = manifest.locator();
    let mut cursor = Cursor { path: None, reader: None, next: None };
    let mut batch: Vec<(u32, RawDoc)> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut stopped = false;
    for_each_doc(docs_csv, |r, row| {
        if stopped || row.center.is_none() {
            return Ok(());
        }
        // Standard input cannot be read again: the cursor says so once.
        let path = locator.locate(&row.source).unwrap_or_else(|| PathBuf::from("-"));
        if let Some(raw) = cursor.record(&path, row.source.offset, &read_opts, progress) {
            batch_bytes += raw.body.len();
            batch.push((r, raw));
            if batch.len() >= BATCH_DOCS || batch_bytes >= BATCH_BYTES {
                // A closed channel means the receiving side has stopped.
                stopped = tx.send(std::mem::take(&mut batch)).is_err();
                batch_bytes = 0;
            }
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
    Ok(())
}

/// An input being read again, front to back.
struct Cursor {
    path: Option<PathBuf>,
    reader: Option<Box<dyn read::Reader>>,
    /// A record read past the last one asked for.
    next: Option<RawDoc>,
}

impl Cursor {
    /// The record at `offset` of `path`, reading forward; `None` when the
    /// input cannot be read again or has no document there.
    fn record(
        &mut self,
        path: &Path,
        offset: u64,
        opts: &ReadOptions,
        progress: &Progress,
    ) -> Option<RawDoc> {
        if self.path.as_deref() != Some(path) {
            self.path = Some(path.to_path_buf());
            self.next = None;
            self.reader = if path == Path::new("-") {
                progress.warn("no fuzzy signatures for standard input: it cannot be read again");
                None
            } else {
                match read::open(path, opts) {
                    Ok(read::Input::Records(r)) => Some(r),
                    Ok(read::Input::Skipped(_)) => None,
                    Err(e) => {
                        progress.warn(&format!("no fuzzy signatures for {}: {e:#}", path.display()));
                        None
                    }
                }
            };
        }
        loop {
            if let Some(raw) = self.next.take() {
                if raw.offset == offset {
                    return Some(raw);
                }
                if raw.offset > offset {
                    self.next = Some(raw);
                    return None;
                }
            }
            match self.reader.as_mut()?.next_item() {
                Ok(Some(Item::Doc(raw))) => self.next = Some(raw),
                // A revisit has no text of its own: with other than the
                // default parameters it gets no signature.
                Ok(Some(
                    Item::Skip(_)
                    | Item::Revisit(_)
                    | Item::Redirect(_)
                    | Item::Status(_)
                    | Item::Known(_)
                    | Item::Note(_),
                )) => {}
                Ok(None) => {
                    self.reader = None;
                    return None;
                }
                Err(e) => {
                    progress.warn(&format!("no more fuzzy signatures for {}: {e}", path.display()));
                    self.reader = None;
                    return None;
                }
            }
        }
    }
}

/// The fuzzy signatures flags.csv shows: one per document in row order
/// (the file the fingerprint stage stored, or one the report computed),
/// and the rows that share theirs ([`shared_signatures`]).
pub struct Fuzzy<'a> {
    pub signatures: &'a Path,
    pub shared: &'a marks::Sorted,
}

/// Writes `flags.csv`, a row per document in row order, with the fuzzy
/// signatures and their flags if there are any, and the title and URL
/// flags found while docs.csv was loaded. It is fed by the report's pass
/// over docs.csv that writes `near_group` ([`FlagsWriter::push`]): a pass
/// of its own read the 4.5 GB table once more at 23 million documents.
pub struct FlagsWriter<'a> {
    docs: &'a Docs,
    signatures: Option<RecordReader<FuzzySignature>>,
    shared: Option<MarkCursor<'a>>,
    titles: MarkCursor<'a>,
    url_marks: MarkCursor<'a>,
    counts: FlagCounts,
    w: CsvOut,
}

impl<'a> FlagsWriter<'a> {
    pub fn create(
        path: &Path,
        docs: &'a Docs,
        fuzzy: Option<Fuzzy<'a>>,
        titles_not_first: &'a marks::Sorted,
        urls: &'a UrlFlags,
    ) -> anyhow::Result<FlagsWriter<'a>> {
        let n = docs.len() as u64;
        let signatures = fuzzy.as_ref().map(|f| signature_reader(f.signatures, n)).transpose()?;
        let shared = fuzzy.as_ref().map(|f| f.shared.cursor()).transpose()?;
        let w = CsvOut::create(
            path,
            &[
                "doc_id",
                "url",
                "www_unique",
                "http_unique",
                "exact_signature_unique",
                "exact_signature_copycount",
                "fuzzy_signature",
                "fuzzy_signature_unique",
                "fuzzy_signature_copycount",
                "title_unique",
                "near_replica_count",
            ],
        )?;
        Ok(FlagsWriter {
            docs,
            signatures,
            shared,
            titles: titles_not_first.cursor()?,
            url_marks: urls.cursor()?,
            counts: FlagCounts::default(),
            w,
        })
    }

    /// Writes the flags of row `r`, the document `row`, whose
    /// near-replicas `near_count` counts; rows come in order.
    pub fn push(&mut self, r: u32, row: &Doc<'_>, near_count: impl FnOnce() -> u32) -> anyhow::Result<()> {
        let (docs, counts) = (self.docs, &mut self.counts);
        let d = r as usize;
        let (www, http) = url_flags(self.url_marks.at(r)?);
        counts.www_not_unique += u64::from(!www);
        counts.http_not_unique += u64::from(!http);
        let none = || Cell::Text("");
        if d >= docs.len() {
            anyhow::bail!("docs.csv has more rows than when it was loaded");
        }
        let center = docs.center(r);
        let (exact_unique, exact_count, near) = if center == EMPTY {
            (none(), none(), none())
        } else {
            counts.exact_signature_not_unique += u64::from(center != r);
            (flag(center == r), Cell::number(docs.exact_size(r)), Cell::number(near_count()))
        };
        let sig = match self.signatures.as_mut() {
            Some(reader) => reader.next_record()?.map_or(NO_SIGNATURE, |s| s.0),
            None => NO_SIGNATURE,
        };
        let (sig, sig_unique, sig_count) = match sig {
            NO_SIGNATURE => (none(), none(), none()),
            s => {
                let mark = match self.shared.as_mut() {
                    Some(c) => c.at(r)?,
                    None => None,
                };
                let (first, count) = mark.map_or((true, 1), |m| (m & FIRST != 0, m & !FIRST));
                counts.fuzzy_signatures += 1;
                counts.fuzzy_signature_not_unique += u64::from(!first);
                (Cell::hex128(s), flag(first), Cell::number(count))
            }
        };
        let title = if row.title().is_empty() {
            none()
        } else {
            let first = self.titles.at(r)?.is_none();
            counts.title_not_unique += u64::from(!first);
            flag(first)
        };
        self.w.row([
            Cell::number(row.id),
            row.url.into(),
            flag(www),
            flag(http),
            exact_unique,
            exact_count,
            sig,
            sig_unique,
            sig_count,
            title,
            near,
        ])
    }

    pub fn finish(self) -> anyhow::Result<FlagCounts> {
        self.w.finish()?;
        Ok(self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `title_unique` from title entries sorted in memory and spilled
    /// through files (budgets of 1 KiB and 1 MiB) equals a reference that
    /// remembers every (host, title) seen, in row order.
    #[test]
    fn titles_are_first_of_their_host_held_or_spilled() {
        let mut rng = crate::testing::XorShift::new(3);
        let rows: Vec<(String, String)> = (0..6000)
            .map(|_| {
                let host = format!("h{}.example", rng.below(12));
                let title = match rng.below(60) {
                    0..5 => String::new(),
                    t => format!("title {t}"),
                };
                (host, title)
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        let expected: Vec<Option<bool>> = rows
            .iter()
            .map(|(host, title)| (!title.is_empty()).then(|| seen.insert((host.clone(), title.clone()))))
            .collect();
        assert!(expected.contains(&Some(false)) && expected.contains(&None));
        for (budget, spills) in [(1 << 10, true), (1 << 20, false)] {
            let dir = tempfile::tempdir().unwrap();
            let mut titles = Titles::new(budget, rows.len() as u64, dir.path());
            for (row, (host, title)) in rows.iter().enumerate() {
                titles.add(row as u32, host, title).unwrap();
            }
            assert_eq!(titles.entries.spilled(), spills);
            let not_first = titles.not_first(rows.len() as u64).unwrap();
            let mut cursor = not_first.cursor().unwrap();
            let got: Vec<Option<bool>> = (0..rows.len())
                .map(|r| {
                    let marked = cursor.at(r as u32).unwrap().is_some();
                    (!rows[r].1.is_empty()).then_some(!marked)
                })
                .collect();
            assert_eq!(got, expected, "budget {budget}");
            drop(cursor);
            drop(not_first);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no scratch file left");
        }
    }

    /// The first row and the count of every shared signature, from
    /// signatures sorted in memory and spilled through files, equal those
    /// of a map from signature to rows.
    #[test]
    fn shared_signatures_mark_the_first_and_count_of_each() {
        let mut rng = crate::testing::XorShift::new(22);
        let n = 5000u32;
        // Few distinct signatures, some differing in one part only, and
        // documents without one.
        let sigs: Vec<u128> = (0..n)
            .map(|_| match rng.below(8) {
                0 => NO_SIGNATURE,
                _ => (u128::from(rng.below(40)) << (32 * rng.below(4))) | 1 << 100,
            })
            .collect();
        let mut rows_of: std::collections::HashMap<u128, Vec<u32>> = std::collections::HashMap::new();
        for (r, &s) in sigs.iter().enumerate() {
            if s != NO_SIGNATURE {
                rows_of.entry(s).or_default().push(r as u32);
            }
        }
        let mut expected = vec![None; n as usize];
        for rows in rows_of.values().filter(|rows| rows.len() >= 2) {
            for (i, &r) in rows.iter().enumerate() {
                expected[r as usize] = Some((i == 0, rows.len() as u32));
            }
        }
        assert!(expected.iter().any(Option::is_none) && expected.iter().any(Option::is_some));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sigs.fpd");
        let mut w = RecordWriter::create(&path, Header::new::<FuzzySignature>("", false, 0, 1)).unwrap();
        for &s in &sigs {
            w.push(&FuzzySignature(s)).unwrap();
        }
        w.finish().unwrap();
        for budget in [1 << 20, 0] {
            let scratch = dir.path().join(format!("scratch-{budget}"));
            std::fs::create_dir(&scratch).unwrap();
            let shared = shared_signatures(&path, u64::from(n), budget, &scratch).unwrap();
            let mut cursor = shared.cursor().unwrap();
            for r in 0..n {
                let got = cursor.at(r).unwrap().map(|m| (m & FIRST != 0, m & !FIRST));
                assert_eq!(got, expected[r as usize], "row {r}, budget {budget}");
            }
            drop(cursor);
            drop(shared);
            assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "scratch files left");
        }
        let e = shared_signatures(&path, u64::from(n) + 1, 1 << 20, dir.path()).err().unwrap();
        assert!(e.to_string().contains("signatures for 5001 documents"), "{e}");
    }
}
