//! `flags.csv`: per-document double-content flags in YaCy's spirit, for
//! ranking systems that push copies down.
//!
//! | column | meaning |
//! |---|---|
//! | `www_unique`, `http_unique` | YaCy's URL flags (see [`super::aliases::UrlUnique`]) |
//! | `exact_signature_unique` | the first document (smallest docID) with its normalized text: the exact group's center |
//! | `exact_signature_copycount` | documents with the same text, itself included (YaCy: "count of not-unique-flagged documents + 1") |
//! | `fuzzy_signature` | YaCy's profile signature ([`crate::fuzzy`]), MD5 as hex |
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

use super::aliases::UrlUnique;
use super::fields::{Cell, flag};
use super::input::{Docs, EMPTY, for_each_doc};
use crate::extract;
use crate::fuzzy;
use crate::progress::Progress;
use crate::read::{self, Item, RawDoc, ReadOptions};
use crate::store::sort::Batched;
use crate::store::{CsvOut, FuzzySignature, Manifest, Record, RecordReader, le_u32};

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

/// First-of-its-kind and group size for one signature per document.
struct Uniqueness {
    first: Vec<bool>,
    count: Vec<u32>,
}

/// Marks, for each of the documents `members` (ascending), whether it is
/// the smallest docID of its key and how many documents share the key.
/// Sorting docIDs by key (stable, so docIDs stay ascending within a key)
/// costs four bytes per document, not a copy of every key.
fn uniqueness<K: Ord>(n: usize, mut members: Vec<u32>, key: impl Fn(u32) -> K) -> Uniqueness {
    let mut u = Uniqueness { first: vec![false; n], count: vec![0; n] };
    members.sort_by_key(|&d| key(d));
    for group in members.chunk_by(|&a, &b| key(a) == key(b)) {
        u.first[group[0] as usize] = true;
        for &d in group {
            u.count[d as usize] = group.len() as u32;
        }
    }
    u
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
    scratch: Vec<u8>,
}

impl Titles {
    /// The titles of up to `expected` documents within `budget` bytes,
    /// spilled to a file in `scratch`.
    pub fn new(budget: u64, expected: u64, scratch: &Path) -> Titles {
        Titles {
            entries: Batched::new(budget, expected, scratch.join("title-entries.fpd")),
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

    /// Each of the `n` rows' `title_unique`: whether it is the first of its
    /// host with its title, `None` without a title.
    pub fn unique(self, n: usize) -> anyhow::Result<Vec<Option<bool>>> {
        let mut unique = vec![None; n];
        let mut last = None;
        self.entries.sorted(|e| {
            let cell = unique.get_mut(e.row as usize).context("a title entry names a row past the table")?;
            *cell = Some(last != Some(e.key));
            last = Some(e.key);
            Ok(())
        })?;
        Ok(unique)
    }
}

/// Records read again per parallel batch.
const BATCH_DOCS: usize = 256;
const BATCH_BYTES: usize = 16 << 20;

/// Marks a document without a fuzzy signature (an MD5 of zero has a chance
/// of 2^-128), so that a signature takes 16 bytes per document, not 32.
pub const NO_SIGNATURE: u128 = 0;

/// The signatures the fingerprint stage stored, one per document.
///
/// Read through a buffer into a list sized once: mapped and collected, the
/// file stayed resident beside a list grown by doubling (2^22 signatures
/// of 16 bytes for 2.1 million documents), the report's heap peak.
pub fn stored_signatures(path: &Path, documents: usize) -> anyhow::Result<Vec<u128>> {
    let mut stored = RecordReader::<FuzzySignature>::open(path)?;
    if stored.remaining() != documents as u64 {
        anyhow::bail!("{} holds {} signatures for {documents} documents", path.display(), stored.remaining());
    }
    let mut sigs = Vec::with_capacity(documents);
    while let Some(s) = stored.next_record()? {
        sigs.push(s.0);
    }
    Ok(sigs)
}

/// Reads every input again and computes the signatures with `cfg`: the
/// fuzzy signature of every document whose text can be read again,
/// reading each input once, in order, and matching records to docs.csv by
/// offset. One thread reads while the pool extracts the batch before, as
/// in the fingerprint stage: extraction is most of the cost.
pub fn fuzzy_signatures(
    docs_csv: &Path,
    documents: u64,
    manifest: &Manifest,
    cfg: FuzzyConfig,
    progress: &Progress,
) -> anyhow::Result<Vec<u128>> {
    let bar = progress.items("report", documents, "texts");
    let mut sigs: Vec<u128> = vec![NO_SIGNATURE; documents as usize];
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
            for (doc, sig) in done {
                if let Some(slot) = sigs.get_mut(doc as usize) {
                    *slot = sig.unwrap_or(NO_SIGNATURE);
                }
            }
            bar.set_position(last);
        }
        reader.join().map_err(|_| anyhow::anyhow!("the reader thread failed"))?
    })?;
    bar.finish_and_clear();
    Ok(sigs)
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
                    Item::Skip(_) | Item::Revisit(_) | Item::Redirect(_) | Item::Status(_) | Item::Known(_),
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

/// Computes the fuzzy flags and writes `flags.csv`, with the title and URL
/// flags found while docs.csv was loaded, in one more pass over it.
pub fn write_csv(
    path: &Path,
    docs_csv: &Path,
    docs: &Docs,
    near_count: &[u32],
    fuzzy: &[u128],
    title_unique: &[Option<bool>],
    urls: &UrlUnique,
) -> anyhow::Result<FlagCounts> {
    let n = docs.len();
    let signed: Vec<u32> = (0..n as u32).filter(|&d| fuzzy[d as usize] != NO_SIGNATURE).collect();
    let fuzzy_u = uniqueness(n, signed, |d| fuzzy[d as usize]);

    let mut counts = FlagCounts::default();
    let mut w = CsvOut::create(
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
    for_each_doc(docs_csv, |r, row| {
        let d = r as usize;
        let (www, http) = urls.flags(r);
        counts.www_not_unique += u64::from(!www);
        counts.http_not_unique += u64::from(!http);
        let none = || Cell::Text("");
        let center = docs.center[d];
        let (exact_unique, exact_count, near) = if center == EMPTY {
            (none(), none(), none())
        } else {
            counts.exact_signature_not_unique += u64::from(center != r);
            (flag(center == r), Cell::number(docs.exact_size(r)), Cell::number(near_count[d]))
        };
        let (sig, sig_unique, sig_count) = match fuzzy[d] {
            NO_SIGNATURE => (none(), none(), none()),
            s => {
                counts.fuzzy_signatures += 1;
                counts.fuzzy_signature_not_unique += u64::from(!fuzzy_u.first[d]);
                (Cell::hex128(s), flag(fuzzy_u.first[d]), Cell::number(fuzzy_u.count[d]))
            }
        };
        let title = match title_unique[d] {
            Some(first) => {
                counts.title_not_unique += u64::from(!first);
                flag(first)
            }
            None => none(),
        };
        w.row([
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
    })?;
    w.finish()?;
    Ok(counts)
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
            assert_eq!(titles.unique(rows.len()).unwrap(), expected, "budget {budget}");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no scratch file left");
        }
    }

    #[test]
    fn first_and_count_per_key() {
        let keys = [9u64, 7, 0, 7, 7];
        let u = uniqueness(5, vec![0, 1, 3, 4], |d| keys[d as usize]);
        assert_eq!(u.first, vec![true, true, false, false, false]);
        assert_eq!(u.count, vec![1, 3, 0, 3, 3]);
    }
}
