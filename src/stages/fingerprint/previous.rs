//! Carrying an analysis forward: `--previous OLD_DIR`.
//!
//! The new inputs are read into a segment of their own, exactly as a first
//! analysis would read them, with each record's URL noted
//! ([`Capture`]). Then every URL is matched to the previous analysis
//! (sorted by URL key, merged with its `urls.fpd`), and what became of it
//! decided, after the rules of a search engine's indexer (locust, smart
//! reindexing):
//!
//! - the last capture of a URL stands for it; earlier captures of it in
//!   the same inputs are left out;
//! - a URL keeps its docID; a URL never seen gets the next docID, in the
//!   input order of the captures that stand for them; a docID is never
//!   given twice, and a URL that comes back gets its old one;
//! - a document read now is `new`, `unchanged` (the same normalized text),
//!   `modified` or `returned` (it was missing before); an HTTP 304, or a
//!   revisit of a capture not in these inputs, keeps the page as it was
//!   (`unchanged`); another HTTP status, or a record that makes no
//!   document, makes it `lost`; absence makes it `orphaned`; a redirect
//!   makes it `redirected`;
//! - a lost or orphaned page keeps its last text, and so its exact group
//!   and its pairs, for `--keep-missing` analyses in a row (lost and
//!   orphaned periods counted together); a redirected one leaves at once;
//! - a document without a URL cannot be recognized later: it is new when
//!   read, and orphaned in the next analysis.
//!
//! The analysis then holds the documents read that stand for their URL and
//! the pages kept, in docID order, and its tables are written as those of
//! a first analysis of exactly those documents: rows in docID order, each
//! record file in the same layout ([`crate::store::handles`]). Documents
//! kept from the previous analysis keep its rows' values, with their
//! `source` naming their input by its canonical path (listed in the
//! manifest's `chain.carried_inputs`), so the analysis stands on its own.
//! The previous analysis is only read.
//!
//! What costs the time is proportional to the change: a document read
//! whose URL has the same payload (digest and decoding) in the previous
//! analysis, which was read with the same settings, is not extracted: its
//! fingerprints, signatures and fields are the previous row's
//! ([`Unchanged`]). Its outputs are those of extracting it, since the same
//! payload extracted the same way makes the same document.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rayon::prelude::*;

use super::measure::{Group, Measured, OldWant, ReadWant, Tally, Wants};
use super::{FingerprintConfig, PARTITIONS};
use crate::base::progress::Progress;
use crate::bytes::chunk::Chunking;
use crate::store::changes::{Change, ChangeRow, ChangeTable, ChangesWriter};
use crate::store::docs::{Doc, DocTable, DocsReader, DocsWriter, Source};
use crate::store::handles::{
    Capture, CaptureKind, DocIdRecord, DocIds, HAS_URL, NONE, Payload, SAME_TEXT, STANDS, UrlRecord,
    WAS_CENTER, url_key,
};
use crate::store::manifest::{Chain, InputIdentity, ReadSettings};
use crate::store::registry::REPORT;
use crate::store::stats::ChainStats;
use crate::store::{
    self, Center, ChunkRecord, CsvOut, ExactRecord, FuzzySignature, Header, Manifest, Mapped, OutDir,
    RecordReader, RecordWriter,
};

/// `--previous` and `--keep-missing`.
#[derive(Clone, Debug)]
pub(crate) struct PreviousConfig {
    pub dir: PathBuf,
    pub keep_missing: u32,
}

/// A previous analysis, checked to be one this run can carry forward.
pub(crate) struct Previous {
    /// As given.
    given: PathBuf,
    canonical: PathBuf,
    out: OutDir,
    manifest: Manifest,
    keep_missing: u32,
    /// Its stages' keys: a previous analysis made again is another one.
    key: String,
}

impl Previous {
    /// Checks that `cfg.dir` is a complete analysis, not `out`, cut with
    /// `chunking`; every refusal is one line naming it.
    pub(crate) fn open(cfg: &PreviousConfig, chunking: Chunking, out: &OutDir) -> anyhow::Result<Previous> {
        let given = cfg.dir.clone();
        let canonical = store::finished::locate("--previous", &given)?;
        let out_at = store::canonical_target(out.root()).ok();
        if out_at.as_ref().is_some_and(|o| *o == canonical) {
            bail!(
                "--previous {} is the output directory: an analysis is carried forward into another one, \
                 and the previous one is never written to",
                given.display()
            );
        }
        if out_at.as_ref().is_some_and(|o| o.starts_with(&canonical)) {
            bail!(
                "--out {} lies inside --previous {}: put the new analysis beside the previous one, \
                 which is never written to",
                out.root().display(),
                given.display()
            );
        }
        let store::finished::Finished { canonical, out: old, manifest, key } =
            store::finished::open("--previous", &given, canonical, &REPORT)?;
        for needed in [
            old.doc_ids(),
            old.urls(),
            old.fprint_exact(),
            old.fuzzy(),
            old.centers(),
            old.docs(),
            old.replicas(),
        ] {
            if !needed.is_file() {
                bail!(
                    "--previous {} cannot be carried forward: it has no {} (it was not made by \
                     `overlap run` or `overlap fingerprint` of this version)",
                    given.display(),
                    needed.file_name().unwrap_or_default().to_string_lossy()
                );
            }
        }
        let parts = old.fprint_parts()?;
        if parts.len() != PARTITIONS as usize {
            bail!(
                "--previous {} cannot be carried forward: it has {} FPrint-DocID partitions, not {PARTITIONS}",
                given.display(),
                parts.len()
            );
        }
        let ours = chunking.to_string();
        if manifest.chunk != ours {
            bail!(
                "--previous {} was cut with --chunk {}, this analysis with --chunk {ours}: \
                 the analyses of a chain are cut alike",
                given.display(),
                manifest.chunk
            );
        }
        Ok(Previous { given, canonical, out: old, manifest, keep_missing: cfg.keep_missing, key })
    }

    /// What this run's stage key takes from the previous analysis.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    pub(crate) fn keep_missing(&self) -> u32 {
        self.keep_missing
    }

    /// The previous analysis's payloads, when a document read now is made
    /// as it made its own: the same read settings and extraction rules.
    pub(crate) fn unchanged(&self, cfg: &FingerprintConfig) -> Option<anyhow::Result<Unchanged>> {
        let ours = ReadSettings::new(&cfg.read, cfg.max_doc_bytes, super::input_rules(&cfg.read));
        (self.manifest.read == ours).then(|| {
            Ok(Unchanged {
                urls: Mapped::open(&self.out.urls())?,
                ids: DocIds::open_file(&self.out.doc_ids())?,
            })
        })
    }
}

/// The previous analysis's documents by URL and payload, for the read
/// jobs. Looked up in its own files, mapped, so that it holds no table in
/// memory: one search of the URL table (sorted by URL key) a document with
/// a payload digest.
pub(crate) struct Unchanged {
    urls: Mapped<UrlRecord>,
    ids: DocIds,
}

impl Unchanged {
    /// The previous row that has `url` with `payload`, if there is one.
    pub(crate) fn row(&self, url: &str, payload: Payload) -> Option<u32> {
        if !payload.is_known() || url.is_empty() {
            return None;
        }
        let key = url_key(url);
        let (_, found) = self.urls.seek(key, |u| u.key)?;
        (found.key == key && found.payload == payload).then(|| self.ids.row(found.doc_id)).flatten()
    }
}

/// What the ingest read, in the segment and beside it.
pub(super) struct Read<'a> {
    pub segment: &'a OutDir,
    /// The [`Capture`]s, unsorted.
    pub captures: &'a Path,
    /// Each document's [`Payload`].
    pub payloads: &'a Path,
    /// Each document's previous row when it was not extracted, or `NONE`.
    pub borrowed: &'a [u32],
}

/// What carrying forward made.
pub(crate) struct Carried {
    pub documents: u64,
    pub next_doc_id: u64,
    pub chain: Chain,
    pub stats: ChainStats,
}

/// A row of the segment read this time: not in the analysis.
const LEFT_OUT: u32 = NONE;
/// Standing for a URL never seen: its docID is given once all are known.
const PENDING: u32 = NONE - 1;
/// Not matched to any URL: a document without one.
const NO_URL: u32 = NONE - 2;

/// What became of a previous document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Not reached through its URL: it has none, or it did not stand for it.
    Unvisited,
    /// A document read now stands for its URL.
    Replaced,
    /// In this analysis with its last values.
    Kept { change: Change, missing_for: u16 },
    /// Not in this analysis.
    Left { change: Change, missing_for: u16 },
    /// An earlier capture of its URL in a first analysis: left out, no row.
    Superseded,
}

/// Where a row of this analysis comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// The segment's row.
    Read(u32),
    /// The previous analysis's row.
    Kept(u32),
}

/// The rows of this analysis each previous row's values go to: its own, if
/// kept or read again unextracted, and those of documents read that copy it
/// unextracted (rare: a copy in the new inputs of such a document).
struct OldRows {
    first: Vec<u32>,
    more: HashMap<u32, Vec<u32>>,
}

impl OldRows {
    fn add(&mut self, old: u32, row: u32) {
        match self.first[old as usize] {
            NONE => self.first[old as usize] = row,
            _ => self.more.entry(old).or_default().push(row),
        }
    }

    fn each(&self, old: u32, mut f: impl FnMut(u32)) {
        let first = self.first[old as usize];
        if first != NONE {
            f(first);
            self.more.get(&old).into_iter().flatten().for_each(|&r| f(r));
        }
    }
}

/// Carries `prev` forward with the documents `read`, writing the
/// analysis's tables into `out`.
pub(super) fn carry_forward(
    out: &OutDir,
    read: &Read<'_>,
    prev: &Previous,
    cfg: &FingerprintConfig,
    scratch: &Path,
    progress: &Progress,
) -> anyhow::Result<Carried> {
    let old = &prev.out;
    let segment = read.segment;
    let spec = cfg.chunking.to_string();
    let old_ids = DocIds::open_file(&old.doc_ids())?;
    let read_exact = Mapped::<ExactRecord>::open(&segment.fprint_exact())?;
    let old_exact = Mapped::<ExactRecord>::open(&old.fprint_exact())?;
    let read_fuzzy = Mapped::<FuzzySignature>::open(&segment.fuzzy())?;
    let old_fuzzy = Mapped::<FuzzySignature>::open(&old.fuzzy())?;
    let old_centers = Mapped::<Center>::open(&old.centers())?;
    store::integrity::check_centers(&old.centers(), &old_centers)?;
    if old_fuzzy.len() != old_ids.len() || old_centers.len() != old_ids.len() {
        bail!("{} is damaged: its per-document files disagree on the documents", prev.given.display());
    }
    let n_read = read_fuzzy.len();
    if read.borrowed.len() != n_read {
        bail!("the documents read and their previous rows disagree ({} and {})", n_read, read.borrowed.len());
    }
    // What a document read is: extracted now, or a previous row's.
    let values = Values { borrowed: read.borrowed, read_exact: &read_exact, old_exact: &old_exact };
    let mut stats = ChainStats {
        analysis: prev.given.to_string_lossy().into_owned(),
        chain_length: prev.manifest.chain.as_ref().map_or(1, |c| c.analysis + 1),
        keep_missing: prev.keep_missing,
        changes: Change::ALL.iter().map(|c| (c.name().to_string(), 0)).collect(),
        ..ChainStats::default()
    };

    // What became of every URL.
    let standing_path = scratch.join("standing-urls.fpd");
    let mut decide = Decide {
        old_ids: &old_ids,
        values: &values,
        keep_missing: prev.keep_missing,
        read: vec![NO_URL; n_read],
        read_change: vec![Change::New; n_read],
        read_url: vec![false; n_read],
        read_replaces: vec![NONE; n_read],
        old: vec![Fate::Unvisited; old_ids.len()],
        standing: RecordWriter::create(&standing_path, Header::new::<UrlRecord>("", true, 0, 1))?,
        stats: &mut stats,
    };
    decide.all(&old.urls(), read.captures, cfg.memory, scratch)?;
    let Decide { read: mut read_ids, read_change, read_url, read_replaces, old: fates, standing, .. } =
        decide;
    standing.finish()?;

    // DocIDs for URLs never seen (and documents without one), in input order.
    let mut next_doc_id = prev.manifest.next_doc_id;
    for r in &mut read_ids {
        if matches!(*r, PENDING | NO_URL) {
            *r = u32::try_from(next_doc_id)
                .ok()
                .filter(|&id| id < NO_URL)
                .context("more docIDs than one chain of analyses can give")?;
            next_doc_id += 1;
        }
    }

    // The analysis's rows, in docID order.
    let mut rows: Vec<(u32, From)> = Vec::new();
    for (r, &doc_id) in read_ids.iter().enumerate() {
        if doc_id != LEFT_OUT {
            rows.push((doc_id, From::Read(r as u32)));
        }
    }
    for (r, fate) in fates.iter().enumerate() {
        if let Fate::Kept { .. } = fate {
            rows.push((old_ids.doc_id(r as u32), From::Kept(r as u32)));
        }
    }
    rows.sort_unstable_by_key(|&(doc_id, _)| doc_id);
    if rows.windows(2).any(|w| w[0].0 == w[1].0) {
        bail!("{}: a docID stands for two documents (the URL table is damaged)", prev.given.display());
    }
    let mut row_of_read = vec![NONE; n_read];
    let mut old_rows = OldRows { first: vec![NONE; old_ids.len()], more: HashMap::new() };
    for (row, &(_, from)) in rows.iter().enumerate() {
        match from {
            From::Read(r) => match read.borrowed[r as usize] {
                NONE => row_of_read[r as usize] = row as u32,
                b => old_rows.add(b, row as u32),
            },
            From::Kept(r) => old_rows.add(r, row as u32),
        }
    }

    // Per-document files.
    let mut ids = RecordWriter::create(&out.doc_ids(), Header::new::<DocIdRecord>("", false, 0, 1))?;
    let mut exact =
        RecordWriter::create(&out.fprint_exact(), Header::new::<ExactRecord>(&spec, false, 0, 1))?;
    let mut fuzzy = RecordWriter::create(&out.fuzzy(), Header::new::<FuzzySignature>(&spec, false, 0, 1))?;
    // Whether a row has its docID's previous text, and that document was
    // counted in the previous pairs: what pair counting carries forward.
    let before = |old: u32, hash: Option<u128>| -> u16 {
        if old == NONE || hash != old_exact.hash_of(old) {
            return 0;
        }
        SAME_TEXT | if old_centers.get(old as usize) == Center(old) { WAS_CENTER } else { 0 }
    };
    for (row, &(doc_id, from)) in rows.iter().enumerate() {
        let (hash, signature, missing_for, flags) = match from {
            From::Read(r) => {
                let url = if read_url[r as usize] { HAS_URL | STANDS } else { 0 };
                let signature = match read.borrowed[r as usize] {
                    NONE => read_fuzzy.get(r as usize),
                    b => old_fuzzy.get(b as usize),
                };
                let hash = values.hash(r);
                (hash, signature, 0, url | before(read_replaces[r as usize], hash))
            }
            From::Kept(r) => {
                let Fate::Kept { missing_for, .. } = fates[r as usize] else { unreachable!() };
                let hash = old_exact.hash_of(r);
                let url = old_ids.get(r).flags & (HAS_URL | STANDS);
                (hash, old_fuzzy.get(r as usize), missing_for, url | before(r, hash))
            }
        };
        ids.push(&DocIdRecord { doc_id, missing_for, flags })?;
        if let Some(hash) = hash {
            exact.push(&ExactRecord { hash, doc: row as u32 })?;
        }
        fuzzy.push(&signature)?;
    }
    ids.finish()?;
    exact.finish()?;
    fuzzy.finish()?;

    // What is measured against the previous texts, in the merge.
    let wants = wants(&read_ids, &read_change, &read_url, &read_replaces, read.borrowed, &fates, &old_ids);
    let tally = merge_partitions((out, segment, old), &spec, &row_of_read, &old_rows, &wants, progress)?;
    let mut gone_texts: HashMap<u128, u32> = HashMap::new();
    for o in 0..wants.old_rows() as u32 {
        if let (OldWant::Gone, Some(hash)) = (wants.old(o), old_exact.hash_of(o)) {
            gone_texts.entry(hash).or_insert(o);
        }
    }
    let measured =
        Measured::settle(tally, &wants, |r| values.hash(r).and_then(|h| gone_texts.get(&h).copied()));
    let carried_inputs = write_tables(
        out,
        segment,
        prev,
        &TableInputs {
            rows: &rows,
            fates: &fates,
            borrowed: read.borrowed,
            read_change: &read_change,
            read_replaces: &read_replaces,
            old_ids: &old_ids,
            old_centers: &old_centers,
            measured: &measured,
        },
    )?;
    write_urls(out, old, &standing_path, read.payloads, &read_ids)?;
    carry_copies(out, segment, &read_ids, &mut stats)?;
    // What the previous report concluded, for this one's comparison, so
    // the new analysis stands on its own: a hard link where the file
    // system allows (files are only ever replaced by a rename, never
    // written in place, so the link keeps this version; and a link is
    // made whole at once, so it needs no temporary name: renaming one
    // over another link to the same file would do nothing, and leave the
    // temporary name behind), else a copy.
    let (from, to) = (old.replicas(), out.previous_replicas());
    crate::base::interrupt::check()?;
    store::remove_file_if_exists(&to)?;
    if std::fs::hard_link(&from, &to).is_err() {
        let tmp = store::temp_path(&to);
        std::fs::copy(&from, &tmp)
            .with_context(|| format!("cannot copy {} to {}", from.display(), tmp.display()))?;
        store::commit(&to)?;
    }
    std::fs::rename(segment.redirects(), out.redirects())
        .with_context(|| format!("cannot move {} into place", segment.redirects().display()))?;

    stats.documents = rows.len() as u64;
    stats.kept_missing =
        fates.iter().filter(|f| matches!(**f, Fate::Kept { missing_for, .. } if missing_for > 0)).count()
            as u64;
    let chain = Chain {
        previous: prev.given.to_string_lossy().into_owned(),
        previous_canonical: prev.canonical.to_string_lossy().into_owned(),
        previous_key: prev.key.clone(),
        analysis: stats.chain_length,
        keep_missing: prev.keep_missing,
        carried_inputs,
    };
    Ok(Carried { documents: rows.len() as u64, next_doc_id, chain, stats })
}

/// The whole-text hash of a document read: its own, or that of the
/// previous row it was not extracted for.
struct Values<'a> {
    borrowed: &'a [u32],
    read_exact: &'a Mapped<ExactRecord>,
    old_exact: &'a Mapped<ExactRecord>,
}

impl Values<'_> {
    fn hash(&self, read: u32) -> Option<u128> {
        match self.borrowed[read as usize] {
            NONE => self.read_exact.hash_of(read),
            b => self.old_exact.hash_of(b),
        }
    }
}

/// Decides what became of every URL, matching the captures read to the
/// previous analysis's URL table.
struct Decide<'a> {
    old_ids: &'a DocIds,
    values: &'a Values<'a>,
    keep_missing: u32,
    /// Per document read: its docID, [`LEFT_OUT`], [`PENDING`] or
    /// [`NO_URL`].
    read: Vec<u32>,
    read_change: Vec<Change>,
    /// Per document read: whether it has a URL.
    read_url: Vec<bool>,
    /// Per document read: the previous row it takes the place of.
    read_replaces: Vec<u32>,
    /// Per previous row.
    old: Vec<Fate>,
    /// `(key, row read)` of every URL a document read stands for, by key.
    standing: RecordWriter<UrlRecord>,
    stats: &'a mut ChainStats,
}

impl Decide<'_> {
    fn all(&mut self, old_urls: &Path, captures: &Path, memory: u64, scratch: &Path) -> anyhow::Result<()> {
        let mut known = RecordReader::<UrlRecord>::open(old_urls)?;
        let mut next_known = known.next_record()?;
        let mut group: Vec<Capture> = Vec::new();
        store::sort::sorted_file::<Capture>(captures, memory / 2, scratch, |c| {
            if group.first().is_some_and(|g| g.key != c.key) {
                self.flush(&mut group, &mut known, &mut next_known)?;
            }
            group.push(c);
            Ok(())
        })?;
        self.flush(&mut group, &mut known, &mut next_known)?;
        while let Some(url) = next_known {
            self.url(url.key, Some(url.doc_id), &[])?;
            next_known = known.next_record()?;
        }
        // Previous documents no URL led to.
        for r in 0..self.old.len() {
            if self.old[r] != Fate::Unvisited {
                continue;
            }
            let flags = self.old_ids.get(r as u32).flags;
            if flags & HAS_URL == 0 {
                self.missing(r as u32, Change::Orphaned);
            } else {
                self.old[r] = Fate::Superseded;
                self.stats.previous_superseded += 1;
            }
        }
        for fate in &self.old {
            let change = match fate {
                Fate::Kept { change, .. } | Fate::Left { change, .. } => *change,
                _ => continue,
            };
            *self.stats.changes.entry(change.name().to_string()).or_insert(0) += 1;
        }
        for (r, &doc_id) in self.read.iter().enumerate() {
            if doc_id != LEFT_OUT {
                *self.stats.changes.entry(self.read_change[r].name().to_string()).or_insert(0) += 1;
            }
        }
        Ok(())
    }

    /// Decides the URLs of the captures in `group` (one key), after those
    /// of the known URLs before it.
    fn flush(
        &mut self,
        group: &mut Vec<Capture>,
        known: &mut RecordReader<UrlRecord>,
        next_known: &mut Option<UrlRecord>,
    ) -> anyhow::Result<()> {
        let Some(key) = group.first().map(|c| c.key) else { return Ok(()) };
        let mut doc_id = None;
        while let Some(url) = *next_known {
            if url.key > key {
                break;
            }
            if url.key == key {
                doc_id = Some(url.doc_id);
            } else {
                self.url(url.key, Some(url.doc_id), &[])?;
            }
            *next_known = known.next_record()?;
        }
        self.url(key, doc_id, group)?;
        group.clear();
        Ok(())
    }

    /// Decides one URL: its docID in the previous analysis's table, if it
    /// has one, and its captures now, in input order.
    fn url(&mut self, key: u128, doc_id: Option<u32>, captures: &[Capture]) -> anyhow::Result<()> {
        let old_row = doc_id.and_then(|id| self.old_ids.row(id));
        let Some(last) = captures.last() else {
            if let Some(r) = old_row {
                self.missing(r, Change::Orphaned);
            }
            return Ok(());
        };
        for c in captures {
            if let CaptureKind::Doc(r) = c.kind {
                self.read_url[r as usize] = true;
            }
        }
        for earlier in &captures[..captures.len() - 1] {
            if let CaptureKind::Doc(r) = earlier.kind {
                self.read[r as usize] = LEFT_OUT;
                self.stats.superseded_captures += 1;
            }
        }
        let was_missing = old_row.is_some_and(|r| self.old_ids.get(r).missing_for > 0);
        match last.kind {
            CaptureKind::Doc(r) => {
                let change = match (doc_id, old_row) {
                    (None, _) => Change::New,
                    (Some(_), None) => Change::Returned,
                    (Some(_), Some(_)) if was_missing => Change::Returned,
                    (Some(_), Some(o)) if self.values.hash(r) == self.values.old_exact.hash_of(o) => {
                        Change::Unchanged
                    }
                    (Some(_), Some(_)) => Change::Modified,
                };
                self.read[r as usize] = doc_id.unwrap_or(PENDING);
                self.read_change[r as usize] = change;
                if let Some(o) = old_row {
                    self.old[o as usize] = Fate::Replaced;
                    self.read_replaces[r as usize] = o;
                }
                // Its docID is known once new ones are given.
                self.standing.push(&UrlRecord { key, doc_id: r, payload: Payload::default() })?;
            }
            CaptureKind::Same => {
                if let Some(o) = old_row {
                    let change = if was_missing { Change::Returned } else { Change::Unchanged };
                    self.old[o as usize] = Fate::Kept { change, missing_for: 0 };
                    self.stats.unchanged_without_payload += 1;
                }
            }
            CaptureKind::Gone(_) => {
                if let Some(o) = old_row {
                    self.missing(o, Change::Lost);
                }
            }
            CaptureKind::Redirect(_) => {
                if let Some(o) = old_row {
                    self.old[o as usize] = Fate::Left { change: Change::Redirected, missing_for: 0 };
                }
            }
        }
        Ok(())
    }

    /// A previous document missing once more: kept while `--keep-missing`
    /// allows.
    fn missing(&mut self, row: u32, change: Change) {
        let missing_for = self.old_ids.get(row).missing_for.saturating_add(1);
        self.old[row as usize] = if u32::from(missing_for) <= self.keep_missing {
            Fate::Kept { change, missing_for }
        } else {
            Fate::Left { change, missing_for }
        };
    }
}

/// What is measured of each document read against the previous analysis
/// ([`measure`](super::measure)): modified pages against their previous
/// text, new URLs against the pages whose URL went (with one).
fn wants(
    read_ids: &[u32],
    read_change: &[Change],
    read_url: &[bool],
    read_replaces: &[u32],
    borrowed: &[u32],
    fates: &[Fate],
    old_ids: &DocIds,
) -> Wants {
    let mut old: Vec<OldWant> = fates
        .iter()
        .enumerate()
        .map(|(o, fate)| {
            let gone = match fate {
                Fate::Kept { change, .. } => matches!(change, Change::Lost | Change::Orphaned),
                Fate::Left { .. } => true,
                _ => false,
            };
            if gone && old_ids.get(o as u32).flags & HAS_URL != 0 { OldWant::Gone } else { OldWant::Nothing }
        })
        .collect();
    let read = (0..read_ids.len())
        .map(|r| {
            if read_ids[r] == LEFT_OUT {
                return ReadWant::Nothing;
            }
            match read_change[r] {
                Change::Modified => {
                    old[read_replaces[r] as usize] = OldWant::Before;
                    ReadWant::Modified(read_replaces[r])
                }
                Change::New if read_url[r] => ReadWant::New,
                _ => ReadWant::Nothing,
            }
        })
        .collect();
    Wants::new(read, old, borrowed)
}

/// What [`write_tables`] reads beside the two analyses.
struct TableInputs<'a> {
    rows: &'a [(u32, From)],
    fates: &'a [Fate],
    borrowed: &'a [u32],
    read_change: &'a [Change],
    read_replaces: &'a [u32],
    old_ids: &'a DocIds,
    old_centers: &'a Mapped<Center>,
    measured: &'a Measured,
}

/// Writes `fingerprint-docs.csv` (rows in docID order) and
/// `fingerprint-changes.csv` (every URL with a document in either
/// analysis); returns the identities of the earlier inputs kept documents
/// are read from.
fn write_tables(
    out: &OutDir,
    segment: &OutDir,
    prev: &Previous,
    t: &TableInputs<'_>,
) -> anyhow::Result<Vec<InputIdentity>> {
    // Rows of both tables are read out of their order, by seeking.
    let mut read_docs = RowReader::open(&segment.fingerprint_docs(), DocTable::Fingerprint)?;
    let mut old_docs = RowReader::open(&prev.out.docs(), DocTable::Final)?;
    let renames = canonical_inputs(&prev.manifest);
    let mut carried: BTreeMap<String, InputIdentity> = BTreeMap::new();

    let mut docs = DocsWriter::create(&out.fingerprint_docs(), DocTable::Fingerprint)?;
    let mut changes = ChangesWriter::create(&out.fingerprint_changes(), ChangeTable::Fingerprint)?;
    let center_before = |r: u32| {
        let c = t.old_centers.get(r as usize);
        (c != Center::EMPTY).then(|| t.old_ids.doc_id(c.0))
    };
    // Rows of the analysis and previous documents that left, by docID.
    let left = t.fates.iter().enumerate().filter_map(|(r, f)| match f {
        Fate::Left { .. } => Some((t.old_ids.doc_id(r as u32), r as u32)),
        _ => None,
    });
    let mut left = left.peekable();
    let mut rows = t.rows.iter().peekable();
    loop {
        let next_left = left.peek().map(|&(id, _)| id);
        let next_row = rows.peek().map(|&&(id, _)| id);
        let take_left = match (next_left, next_row) {
            (None, None) => break,
            (Some(l), Some(r)) => l < r,
            (l, _) => l.is_some(),
        };
        if take_left {
            let Some((doc_id, r)) = left.next() else { break };
            let Fate::Left { change, missing_for } = t.fates[r as usize] else { unreachable!() };
            let doc = old_docs.row(r)?;
            let url = doc.url.to_string();
            changes.push(&ChangeRow::plain(doc_id, url, change, missing_for, false, center_before(r)))?;
            continue;
        }
        let Some(&(doc_id, from)) = rows.next() else { break };
        match from {
            From::Read(r) => {
                let doc = read_docs.row(r)?;
                let (url, replaces) = (doc.url.to_string(), t.read_replaces[r as usize]);
                match t.borrowed[r as usize] {
                    NONE => docs.push(&Doc { id: doc_id, ..doc })?,
                    // Not extracted: the previous row's fields, this record's
                    // URL and source.
                    b => {
                        let text = old_docs.row(b)?.text;
                        docs.push(&Doc { id: doc_id, text, ..doc })?;
                    }
                }
                let before = (replaces != NONE).then(|| center_before(replaces)).flatten();
                changes.push(&ChangeRow {
                    chunks_kept: t.measured.kept(r),
                    candidate: t.measured.candidate(r, |o| t.old_ids.doc_id(o)),
                    ..ChangeRow::plain(doc_id, url, t.read_change[r as usize], 0, true, before)
                })?;
            }
            From::Kept(r) => {
                let Fate::Kept { change, missing_for } = t.fates[r as usize] else { unreachable!() };
                let doc = old_docs.row(r)?;
                let input = match renames.get(doc.source.input) {
                    Some(identity) => {
                        carried.entry(identity.path.clone()).or_insert_with(|| identity.clone());
                        identity.path.as_str()
                    }
                    None => doc.source.input,
                };
                docs.push(&Doc {
                    id: doc_id,
                    source: Source { input, offset: doc.source.offset },
                    center: None,
                    missing_for,
                    near_group: None,
                    ..doc
                })?;
                let url = doc.url.to_string();
                changes.push(&ChangeRow::plain(doc_id, url, change, missing_for, true, center_before(r)))?;
            }
        }
    }
    docs.finish()?;
    changes.finish()?;
    Ok(carried.into_values().collect())
}

/// A document table read by row, in any order: each row's place in the
/// file is noted in one pass, and a row is read by seeking to it.
struct RowReader {
    path: PathBuf,
    table: DocTable,
    reader: csv::Reader<std::fs::File>,
    starts: Vec<u64>,
    record: csv::StringRecord,
    /// The last row read, which the reader is just past.
    last: Option<u32>,
}

impl RowReader {
    fn open(path: &Path, table: DocTable) -> anyhow::Result<RowReader> {
        let mut starts = Vec::new();
        let mut reader = DocsReader::open(path, table)?;
        loop {
            let at = reader.position();
            if reader.next_doc()?.is_none() {
                break;
            }
            starts.push(at);
        }
        let reader =
            csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(RowReader {
            path: path.to_path_buf(),
            table,
            reader,
            starts,
            record: csv::StringRecord::new(),
            last: None,
        })
    }

    /// Row `r`: read on when it is the next or a few rows ahead, sought
    /// otherwise. Seeking drops the reader's buffer, and rows wanted in
    /// nearly ascending order with small gaps between them (the previous
    /// rows of unchanged pages) cost a seek and a read each: reading over
    /// the gap instead took the serial part of a `--previous` fingerprint
    /// stage from 0.25 s to 0.17 s (65,396 documents, 36,679 of them
    /// unchanged payloads), the stage from 1.10 s to 1.04 s.
    fn row(&mut self, r: u32) -> anyhow::Result<Doc<'_>> {
        const READ_OVER: u32 = 64;
        let Some(&start) = self.starts.get(r as usize) else {
            bail!("{} has no row {r}", self.path.display());
        };
        if let Some(l) = self.last.filter(|&l| l < r && r - l <= READ_OVER) {
            for _ in l + 1..r {
                self.reader
                    .read_record(&mut self.record)
                    .with_context(|| format!("cannot read {}", self.path.display()))?;
            }
            self.last = Some(r - 1);
        }
        if self.last.is_none_or(|l| l + 1 != r) {
            let mut at = csv::Position::new();
            at.set_byte(start).set_line(u64::from(r) + 2).set_record(u64::from(r) + 1);
            self.reader.seek(at).with_context(|| format!("cannot read {}", self.path.display()))?;
        }
        if !self
            .reader
            .read_record(&mut self.record)
            .with_context(|| format!("cannot read {}", self.path.display()))?
        {
            bail!("{} ends before row {r}", self.path.display());
        }
        self.last = Some(r);
        crate::store::docs::parse_row(&self.record, self.table)
            .with_context(|| format!("{} line {}", self.path.display(), u64::from(r) + 2))
    }
}

/// The previous analysis's inputs by the name its `source` column gives
/// them, each as a kept document's source names it from now on: by its
/// canonical path, with its identity.
fn canonical_inputs(manifest: &Manifest) -> HashMap<String, InputIdentity> {
    let carried = manifest.chain.iter().flat_map(|c| c.carried_inputs.iter());
    let mut names = HashMap::new();
    for identity in manifest.inputs.iter().map(|i| &i.identity).chain(carried) {
        let Some(canonical) = &identity.canonical else { continue };
        let renamed = InputIdentity { path: canonical.clone(), ..identity.clone() };
        names.entry(identity.path.clone()).or_insert(renamed);
    }
    names
}

/// Writes each FPrint-DocID partition of the analysis: for every
/// fingerprint, the rows of the documents read that have it (the segment's
/// records) and of those whose values come from the previous analysis (its
/// records, each previous row going to the rows it gives its values to),
/// sorted.
/// Returns what it counted of the documents `wants` asks about.
fn merge_partitions(
    (out, segment, old): (&OutDir, &OutDir, &OutDir),
    spec: &str,
    row_of_read: &[u32],
    old_rows: &OldRows,
    wants: &Wants,
    progress: &Progress,
) -> anyhow::Result<Tally> {
    let bar = progress.items("carry", u64::from(PARTITIONS), "partitions");
    let measure = wants.any();
    let results: Vec<anyhow::Result<Tally>> = (0..PARTITIONS)
        .into_par_iter()
        .map(|p| {
            let read = Mapped::<ChunkRecord>::open(&segment.fprint_part(p))?;
            let kept = Mapped::<ChunkRecord>::open(&old.fprint_part(p))?;
            let mut dst = RecordWriter::create(
                &out.fprint_part(p),
                Header::new::<ChunkRecord>(spec, true, p, PARTITIONS),
            )?;
            let mut read = read.iter().peekable();
            let mut kept = kept.iter().peekable();
            let mut group: Vec<u32> = Vec::new();
            let (mut holders, mut tally) = (Group::default(), Tally::default());
            loop {
                let fprint = match (read.peek(), kept.peek()) {
                    (None, None) => break,
                    (Some(a), Some(b)) => a.fprint.min(b.fprint),
                    (Some(a), None) => a.fprint,
                    (None, Some(b)) => b.fprint,
                };
                group.clear();
                holders.clear();
                while let Some(r) = read.next_if(|r| r.fprint == fprint) {
                    if measure {
                        holders.read(wants, r.doc);
                    }
                    let row = row_of_read[r.doc as usize];
                    if row != NONE {
                        group.push(row);
                    }
                }
                while let Some(r) = kept.next_if(|r| r.fprint == fprint) {
                    if r.doc as usize >= old_rows.first.len() {
                        bail!(
                            "{}",
                            store::integrity::row_beyond_file(
                                &old.fprint_part(p),
                                r.doc,
                                old_rows.first.len() as u64
                            )
                        );
                    }
                    old_rows.each(r.doc, |row| group.push(row));
                    if measure {
                        holders.old(wants, r.doc);
                    }
                }
                if measure {
                    holders.count(&mut tally);
                }
                group.sort_unstable();
                debug_assert!(group.windows(2).all(|w| w[0] < w[1]), "a row twice under one fingerprint");
                for &row in &group {
                    dst.push(&ChunkRecord { fprint, doc: row })?;
                }
            }
            dst.finish()?;
            bar.inc(1);
            Ok(tally)
        })
        .collect();
    bar.finish_and_clear();
    let mut all = Tally::default();
    for tally in results {
        all.add(tally?);
    }
    Ok(all)
}

/// Writes `urls.fpd`: the previous analysis's URLs, those a document read
/// stands for now with its docID and payload, and those never seen before.
fn write_urls(
    out: &OutDir,
    old: &OutDir,
    standing: &Path,
    payloads: &Path,
    read: &[u32],
) -> anyhow::Result<()> {
    let payloads = Mapped::<Payload>::open(payloads)?;
    let mut w = RecordWriter::create(&out.urls(), Header::new::<UrlRecord>("", true, 0, 1))?;
    let mut known = RecordReader::<UrlRecord>::open(&old.urls())?;
    let mut now = RecordReader::<UrlRecord>::open(standing)?;
    let mut next_known = known.next_record()?;
    let mut next_now = now.next_record()?;
    loop {
        match (next_known, next_now) {
            (None, None) => break,
            (Some(k), n) if n.is_none_or(|n| k.key < n.key) => {
                w.push(&k)?;
                next_known = known.next_record()?;
            }
            (k, Some(n)) => {
                let r = n.doc_id as usize;
                w.push(&UrlRecord { key: n.key, doc_id: read[r], payload: payloads.get(r) })?;
                if k.is_some_and(|k| k.key == n.key) {
                    next_known = known.next_record()?;
                }
                next_now = now.next_record()?;
            }
            (Some(_), None) => unreachable!(),
        }
    }
    w.finish()?;
    Ok(())
}

/// Writes `copies.csv` with the docIDs of copy and original, for the copies
/// whose both documents stand in the analysis.
fn carry_copies(out: &OutDir, segment: &OutDir, read: &[u32], stats: &mut ChainStats) -> anyhow::Result<()> {
    let path = segment.copies();
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut w = CsvOut::create(&out.copies(), &["doc_id", "original", "kind"])?;
    for row in reader.records() {
        let row = row.with_context(|| format!("cannot read {}", path.display()))?;
        let id = |i: usize| -> anyhow::Result<u32> {
            let n: u32 = row.get(i).and_then(|v| v.parse().ok()).with_context(|| {
                format!("{} line {}: not a docID", path.display(), row.position().map_or(0, |p| p.line()))
            })?;
            Ok(read.get(n as usize).copied().unwrap_or(LEFT_OUT))
        };
        let (copy, original) = (id(0)?, id(1)?);
        if copy == LEFT_OUT || original == LEFT_OUT {
            stats.copies_left_out += 1;
            continue;
        }
        w.row([copy.to_string().as_str(), &original.to_string(), row.get(2).unwrap_or("")])?;
    }
    w.finish()
}
