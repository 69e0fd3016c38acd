//! `--against REF_DIR`: this analysis's documents counted against those of
//! a finished reference analysis, never a pair inside either side
//! (`against.csv`, `against-pairs.csv`: [`crate::store::against`]).
//!
//! The two analyses' FPrint-DocID partitions cover the same fingerprint
//! ranges, so partition `k` of one is merged with partition `k` of the
//! other into the partitions of one analysis of both crawls, the
//! reference's rows after this one's: each side's exact-group centers, a
//! host's template chunks (`--template`) decided over that host's pages in
//! both crawls, stop chunks (`--max-df`) by the document frequency in both,
//! each document's set size from what is left. So two pages with the same
//! text have the same set, whichever crawl they are in. The stage's own
//! counting method (`--method`, `auto` choosing as for the Overlap table)
//! then counts them, exactly as it counts an Overlap table, but generates
//! only the pairs with one document on each side (`CountInput::cross_at`:
//! the sort and coarse methods pair a group's documents of this crawl with
//! its documents of the reference only, prefix filtering its prefix
//! groups alike): `against-pairs.csv` is the part of the Overlap table of
//! both crawls together that crosses them. Generating the pairs inside
//! either side and dropping them as they came took 89 million candidate
//! instances for 172,291 rows on a 200 MB recrawl against its crawl. The merge also counts, for each page here, its chunks that some
//! reference page of its scope holds.
//!
//! Exact copies across the sides are found apart from the count, by the
//! whole-text hashes (keyed by the scope's name with `--scope`), sorted
//! together within the budget.
//!
//! Disk: a copy of both sides' FPrint-DocID partitions (12 bytes a chunk of
//! a document), removed afterwards. Memory: 4 bytes a document of both
//! sides (set size), 20 more a document here (chunks held, best match,
//! exact copy, host, scope), 8 more a document there (host, scope), what
//! the counting method holds within the budget, and the URLs of the
//! reference documents named.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use anyhow::{Context, bail};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_128;

use super::{CountInput, Counted, PairsConfig, PairsStats};
use crate::base::progress::Progress;
use crate::store::against::{AgainstPair, AgainstRow, AgainstWriter, Match, PairsWriter};
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::handles::DocIds;
use crate::store::manifest::AgainstSettings;
use crate::store::registry::EXACT;
use crate::store::scopes::{Scope, ScopeId, ScopeNumbers};
use crate::store::stats::AgainstStats;
use crate::store::{self, Center, ChunkRecord, ExactRecord, Header, Manifest, Mapped, OutDir, RecordWriter};

/// No reference document.
const NONE: u32 = u32::MAX;

/// The reference analysis, checked to be comparable with this one.
pub(crate) struct Reference {
    given: PathBuf,
    canonical: PathBuf,
    out: OutDir,
    manifest: Manifest,
    /// Its analysis key through the exact stage, and its canonical path:
    /// what the pairs stage's key takes from it.
    key: String,
}

impl Reference {
    /// Opens `given` as the reference of the analysis in `out`: a finished
    /// analysis (through its exact stage) cut with the same chunking into
    /// as many partitions, with the same `--scope`, and not `out` itself.
    pub(crate) fn open(given: &Path, out: &OutDir, ours: &Manifest) -> anyhow::Result<Reference> {
        let canonical = store::finished::locate("--against", given)?;
        if std::fs::canonicalize(out.root()).is_ok_and(|o| o == canonical) {
            bail!(
                "--against {} is this analysis itself: give the analysis of another crawl",
                given.display()
            );
        }
        let store::finished::Finished { canonical, out: reference, manifest, key } =
            store::finished::open("--against", given, canonical, &EXACT)?;
        if manifest.chunk != ours.chunk {
            bail!(
                "--against {} was cut with --chunk {}, this analysis with --chunk {}: \
                 only analyses cut alike share fingerprints",
                given.display(),
                manifest.chunk,
                ours.chunk
            );
        }
        let (theirs, mine) = (manifest.scope()?, ours.scope()?);
        if theirs != mine {
            bail!(
                "--against {} was analysed with --scope {theirs}, this analysis with --scope {mine}: \
                 analyse both with the same scope",
                given.display()
            );
        }
        let (parts, ours_parts) = (reference.fprint_parts()?, out.fprint_parts()?);
        if parts.len() != ours_parts.len() {
            bail!(
                "--against {} has {} FPrint-DocID partitions, this analysis {}: it was made by \
                 another version of overlap",
                given.display(),
                parts.len(),
                ours_parts.len()
            );
        }
        let key = format!("{}|{key}", canonical.display());
        Ok(Reference { given: given.to_path_buf(), canonical, out: reference, manifest, key })
    }

    /// What the pairs stage's key takes from the reference.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The settings the manifest records.
    pub(crate) fn settings(&self) -> AgainstSettings {
        AgainstSettings {
            reference: self.given.display().to_string(),
            reference_canonical: self.canonical.display().to_string(),
        }
    }
}

/// What one side of the count is.
struct Side<'a> {
    out: &'a OutDir,
    parts: Vec<PathBuf>,
    counted: &'a Counted,
    /// Each row's scope name (`--scope`) and host (`--template`), numbered
    /// across both sides.
    scopes: Option<Vec<u32>>,
    hosts: Option<Vec<u32>>,
}

impl Side<'_> {
    #[inline]
    fn scope(&self, row: u32) -> u32 {
        self.scopes.as_ref().map_or(0, |s| s[row as usize])
    }

    #[inline]
    fn host(&self, row: u32) -> u32 {
        self.hosts.as_ref().map_or(0, |h| h[row as usize])
    }
}

/// What this side's count needs from the pairs stage.
pub(super) struct Ours<'a> {
    pub out: &'a OutDir,
    pub counted: &'a Counted,
    pub doc_ids: &'a DocIds,
    pub scope: Scope,
}

/// The best reference document passing the criterion with one row here
/// so far.
#[derive(Clone, Copy)]
struct Best {
    ref_row: u32,
    shared: u32,
}

impl Best {
    const NONE: Best = Best { ref_row: NONE, shared: 0 };

    /// Whether `other` is better: more shared chunks, then the exact copy;
    /// on a tie the one seen first (the smaller reference row, since a
    /// method emits pairs in order).
    fn worse_than(&self, other: &Best, exact: u32) -> bool {
        if self.ref_row == NONE {
            return true;
        }
        (other.shared, other.ref_row == exact) > (self.shared, self.ref_row == exact)
    }
}

/// Each row's number of `name(host)` over both sides' document tables.
fn numbered(sides: [&OutDir; 2], name: impl Fn(&str) -> &str) -> anyhow::Result<[Vec<u32>; 2]> {
    let mut numbers = ScopeNumbers::default();
    let mut of = |out: &OutDir| -> anyhow::Result<Vec<u32>> {
        let mut rows = Vec::new();
        for_each_doc(&out.fingerprint_docs(), DocTable::Fingerprint, |doc| {
            rows.push(numbers.id(name(doc.host)).0);
            Ok(())
        })?;
        Ok(rows)
    };
    Ok([of(sides[0])?, of(sides[1])?])
}

/// Counts this analysis against `reference` and writes `against.csv` and
/// `against-pairs.csv`.
pub(super) fn count(
    reference: &Reference,
    ours: &Ours<'_>,
    cfg: &PairsConfig,
    scratch: &Path,
    progress: &Progress,
) -> anyhow::Result<AgainstStats> {
    let started = std::time::Instant::now();
    let criterion = cfg.criterion;
    let theirs_out = &reference.out;
    let mut ref_counted = Counted::open(&theirs_out.centers())?;
    if ours.scope != Scope::Crawl {
        ref_counted = ref_counted.in_scopes(&theirs_out.scopes())?;
    }
    let ref_ids = DocIds::open(theirs_out, &reference.manifest)?;
    if ref_ids.len() != ref_counted.documents() {
        bail!(
            "--against {}: its docIDs and centers disagree: the analysis is damaged",
            reference.given.display()
        );
    }
    // The two sides are counted as one analysis: the reference's rows
    // after this one's.
    let (n, m) = (ours.counted.documents() as u64, ref_counted.documents() as u64);
    if n + m >= u64::from(Center::EMPTY.0) {
        bail!(
            "--against counts at most {} documents on both sides together; these have {}",
            Center::EMPTY.0 - 1,
            n + m
        );
    }
    let offset = n as u32;
    let dir = scratch.join("against");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let both = [ours.out, theirs_out];
    let [our_scopes, ref_scopes] = match ours.scope {
        Scope::Crawl => [None, None],
        scope => numbered(both, |h| scope.of(h))?.map(Some),
    };
    let [our_hosts, ref_hosts] = match cfg.template {
        None => [None, None],
        Some(_) => numbered(both, |h| Scope::Host.of(h))?.map(Some),
    };
    let here = Side {
        out: ours.out,
        parts: ours.out.fprint_parts()?,
        counted: ours.counted,
        scopes: our_scopes,
        hosts: our_hosts,
    };
    let there = Side {
        out: theirs_out,
        parts: theirs_out.fprint_parts()?,
        counted: &ref_counted,
        scopes: ref_scopes,
        hosts: ref_hosts,
    };
    for side in [&here, &there] {
        let rows = side.counted.documents();
        if side.scopes.iter().chain(&side.hosts).any(|v| v.len() != rows) {
            bail!(
                "{} and its centers disagree: the analysis is damaged",
                side.out.fingerprint_docs().display()
            );
        }
    }
    // The most pages of each host that may hold a chunk not its template,
    // from the host's pages in both crawls.
    let limits: Vec<u32> = match cfg.template {
        None => Vec::new(),
        Some(rule) => {
            let mut pages: Vec<u32> = Vec::new();
            for side in [&here, &there] {
                for row in 0..side.counted.documents() as u32 {
                    if side.counted.contains(row) {
                        let h = side.host(row) as usize;
                        if pages.len() <= h {
                            pages.resize(h + 1, 0);
                        }
                        pages[h] += 1;
                    }
                }
            }
            pages.iter().map(|&p| rule.limit(p)).collect()
        }
    };
    let smallest = limits.iter().copied().min().unwrap_or(u32::MAX) as usize;
    let rule = Rule { limits: cfg.template.map(|_| limits.as_slice()), smallest, max_df: cfg.max_df };

    let exact = exact_copies(&here, &there, offset, cfg.memory / 4, &dir)?;

    // One pass: the partitions of both sides as one analysis's, less the
    // chunks the rule leaves out; the set sizes; the chunks of each page
    // here that a reference page of its scope holds.
    let sizes: Vec<AtomicU32> = (0..n + m).map(|_| AtomicU32::new(0)).collect();
    let held_chunks: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let left_out = AtomicU64::new(0);
    let bar = progress.items("against", here.parts.len() as u64, "partitions");
    let written: Vec<anyhow::Result<PathBuf>> = (0..here.parts.len())
        .into_par_iter()
        .map(|k| {
            crate::base::interrupt::check()?;
            let path = dir.join(format!("part-{k:05}.fpd"));
            let mut w =
                RecordWriter::<ChunkRecord>::create(&path, Header::new::<ChunkRecord>("", true, 0, 1))?;
            let mut dropped = 0u64;
            let mut work = Work::default();
            let mut ref_scopes: Vec<u32> = Vec::new();
            merged_groups(&here, &there, k, |fprint, ns, rs| {
                dropped += u64::from(rule.keep(&here, &there, ns, rs, &mut work));
                for &d in ns.iter() {
                    sizes[d as usize].fetch_add(1, Ordering::Relaxed);
                    w.push(&ChunkRecord { fprint, doc: d })?;
                }
                for &d in rs.iter() {
                    sizes[(offset + d) as usize].fetch_add(1, Ordering::Relaxed);
                    w.push(&ChunkRecord { fprint, doc: offset + d })?;
                }
                if ns.is_empty() || rs.is_empty() {
                    return Ok(());
                }
                if here.scopes.is_none() {
                    for &d in ns.iter() {
                        held_chunks[d as usize].fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    ref_scopes.clear();
                    ref_scopes.extend(rs.iter().map(|&r| there.scope(r)));
                    ref_scopes.sort_unstable();
                    for &d in ns.iter() {
                        if ref_scopes.binary_search(&here.scope(d)).is_ok() {
                            held_chunks[d as usize].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Ok(())
            })?;
            w.finish()?;
            left_out.fetch_add(dropped, Ordering::Relaxed);
            bar.inc(1);
            Ok(path)
        })
        .collect();
    bar.finish_and_clear();
    let parts = written.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    let sizes: Vec<u32> = sizes.into_iter().map(AtomicU32::into_inner).collect();

    // Both sides' centers (and scopes) as one analysis's.
    let centers_path = dir.join("centers.fpd");
    let mut w = RecordWriter::<Center>::create(&centers_path, Header::new::<Center>("", false, 0, 1))?;
    for (side, shift) in [(&here, 0), (&there, offset)] {
        for row in 0..side.counted.documents() {
            let c = side.counted.centers.get(row);
            w.push(&if c == Center::EMPTY { c } else { Center(c.0 + shift) })?;
        }
    }
    w.finish()?;
    let mut counted = Counted::open(&centers_path)?;
    if let (Some(a), Some(b)) = (&here.scopes, &there.scopes) {
        let path = dir.join("scopes.fpd");
        let mut w = RecordWriter::<ScopeId>::create(&path, Header::new::<ScopeId>("", false, 0, 1))?;
        for &s in a.iter().chain(b) {
            w.push(&ScopeId(s))?;
        }
        w.finish()?;
        counted = counted.in_scopes(&path)?;
    }

    // The stage's own counting method over them; the pairs inside either
    // side are left out as they come.
    let count_dir = dir.join("count");
    std::fs::create_dir_all(&count_dir).with_context(|| format!("cannot create {}", count_dir.display()))?;
    let input = CountInput {
        parts: &parts,
        counted: &counted,
        threshold: criterion.threshold,
        criterion,
        sizes: criterion.needs_sizes().then_some(sizes.as_slice()),
        max_df: None,
        cross_at: Some(offset),
        memory: cfg.memory,
        scratch: &count_dir,
        progress,
    };
    let (method, name, _, forecast_line) = super::choose(&input, cfg)?;
    if let Some(line) = forecast_line {
        if cfg.strict {
            bail!("--strict: refused before counting against the reference: {line}");
        }
        progress.warn(&line);
    }
    let mut best = vec![Best::NONE; n as usize];
    let mut table = PairsWriter::create(&ours.out.against_pairs())?;
    let mut counted_stats = PairsStats::default();
    method.count(&input, &mut counted_stats, &mut |o| {
        let (i, j) = (o.doc_i, o.doc_j);
        if i >= offset || j < offset {
            return Ok(());
        }
        let (a, b) = (sizes[i as usize], sizes[j as usize]);
        if !criterion.passes(o.shared, a, b) {
            return Ok(());
        }
        let r = j - offset;
        table.push(&AgainstPair {
            doc_id: ours.doc_ids.doc_id(i),
            ref_doc_id: ref_ids.doc_id(r),
            shared: o.shared,
            chunks: a,
            ref_chunks: b,
        })?;
        let candidate = Best { ref_row: r, shared: o.shared };
        if best[i as usize].worse_than(&candidate, exact[i as usize]) {
            best[i as usize] = candidate;
        }
        Ok(())
    })?;
    let emitted = table.finish()?;
    drop(counted);
    let _ = std::fs::remove_dir_all(&dir);

    let stats = write_rows(
        ours,
        &ref_ids,
        theirs_out,
        [&sizes[..n as usize], &sizes[n as usize..]],
        &best,
        &exact,
        &held_chunks,
    )?;
    Ok(AgainstStats {
        reference: reference.given.display().to_string(),
        reference_documents: ref_ids.len() as u64,
        reference_counted: (0..m as u32)
            .filter(|&r| ref_counted.contains(r) && sizes[(offset + r) as usize] > 0)
            .count() as u64,
        method: name.to_string(),
        pairs_generated: counted_stats.pairs_generated,
        pairs_emitted: emitted,
        prefix: counted_stats.prefix.clone(),
        stop_chunks: left_out.into_inner(),
        spill_bytes: counted_stats.spill_bytes,
        seconds: started.elapsed().as_secs_f64(),
        ..stats
    })
}

/// Which documents of one fingerprint keep it in their sets: a host's
/// template chunks and stop chunks left out, decided over both sides.
struct Rule<'a> {
    /// Each host's limit, with `--template`.
    limits: Option<&'a [u32]>,
    smallest: usize,
    max_df: Option<u32>,
}

/// Scratch space [`Rule::keep`] reuses.
#[derive(Default)]
struct Work {
    keyed: Vec<(u32, bool, u32)>,
}

impl Rule<'_> {
    /// Leaves out of `ns` and `rs` (one fingerprint's documents here and
    /// there, ascending) those for which it is their host's template, then
    /// those of a scope where it is a stop chunk. Returns whether it left
    /// out a stop chunk.
    fn keep(
        &self,
        here: &Side<'_>,
        there: &Side<'_>,
        ns: &mut Vec<u32>,
        rs: &mut Vec<u32>,
        work: &mut Work,
    ) -> bool {
        if let Some(limits) = self.limits {
            // No host holds it more often than the smallest limit when so
            // few hold it at all.
            if ns.len() + rs.len() > self.smallest {
                self.split(
                    here,
                    there,
                    ns,
                    rs,
                    work,
                    |d, side| side.host(d),
                    |host, n| n > limits[host as usize] as usize,
                );
            }
        }
        let Some(max_df) = self.max_df.map(|m| m as usize) else { return false };
        if ns.len() + rs.len() <= max_df {
            return false;
        }
        let before = ns.len() + rs.len();
        self.split(here, there, ns, rs, work, |d, side| side.scope(d), |_, n| n > max_df);
        ns.len() + rs.len() != before
    }

    /// Groups the documents of both sides by `key`, and leaves out the
    /// groups for which `drop(key, size)` holds; each side stays ascending.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &self,
        here: &Side<'_>,
        there: &Side<'_>,
        ns: &mut Vec<u32>,
        rs: &mut Vec<u32>,
        work: &mut Work,
        key: impl Fn(u32, &Side<'_>) -> u32,
        drop: impl Fn(u32, usize) -> bool,
    ) {
        let keyed = &mut work.keyed;
        keyed.clear();
        keyed.extend(ns.iter().map(|&d| (key(d, here), false, d)));
        keyed.extend(rs.iter().map(|&d| (key(d, there), true, d)));
        keyed.sort_unstable();
        ns.clear();
        rs.clear();
        for group in keyed.chunk_by(|a, b| a.0 == b.0) {
            if drop(group[0].0, group.len()) {
                continue;
            }
            for &(_, theirs, d) in group {
                if theirs { rs.push(d) } else { ns.push(d) }
            }
        }
        ns.sort_unstable();
        rs.sort_unstable();
    }
}

/// Calls `f` with the counted documents here and there (each ascending) of
/// every fingerprint of partition `k` that either side holds.
fn merged_groups(
    here: &Side<'_>,
    there: &Side<'_>,
    k: usize,
    mut f: impl FnMut(u64, &mut Vec<u32>, &mut Vec<u32>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let a = Mapped::<ChunkRecord>::open(&here.parts[k])?;
    let b = Mapped::<ChunkRecord>::open(&there.parts[k])?;
    let (mut ga, mut gb) = (Groups::new(&a, here, k), Groups::new(&b, there, k));
    let (mut na, mut nb) = (Vec::new(), Vec::new());
    let (mut fa, mut fb) = (ga.next(&mut na)?, gb.next(&mut nb)?);
    let mut none = Vec::new();
    loop {
        let order = match (fa, fb) {
            (None, None) => return Ok(()),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => x.cmp(&y),
        };
        match order {
            std::cmp::Ordering::Less => {
                f(fa.unwrap_or_default(), &mut na, &mut none)?;
                none.clear();
                fa = ga.next(&mut na)?;
            }
            std::cmp::Ordering::Greater => {
                f(fb.unwrap_or_default(), &mut none, &mut nb)?;
                none.clear();
                fb = gb.next(&mut nb)?;
            }
            std::cmp::Ordering::Equal => {
                f(fa.unwrap_or_default(), &mut na, &mut nb)?;
                fa = ga.next(&mut na)?;
                fb = gb.next(&mut nb)?;
            }
        }
    }
}

/// The fingerprints of one partition with their counted documents.
struct Groups<'a> {
    records: &'a Mapped<ChunkRecord>,
    at: usize,
    side: &'a Side<'a>,
    /// The partition, to name its file in an error.
    part: usize,
}

impl<'a> Groups<'a> {
    fn new(records: &'a Mapped<ChunkRecord>, side: &'a Side<'a>, part: usize) -> Groups<'a> {
        Groups { records, at: 0, side, part }
    }

    /// The next fingerprint with a counted document, its documents in
    /// `docs` (ascending).
    fn next(&mut self, docs: &mut Vec<u32>) -> anyhow::Result<Option<u64>> {
        let documents = self.side.counted.documents();
        loop {
            docs.clear();
            if self.at >= self.records.len() {
                return Ok(None);
            }
            let fprint = self.records.get(self.at).fprint;
            while self.at < self.records.len() {
                let r = self.records.get(self.at);
                if r.fprint != fprint {
                    break;
                }
                if r.doc as usize >= documents {
                    bail!(
                        "{}",
                        crate::store::integrity::row_beyond_file(
                            &self.side.parts[self.part],
                            r.doc,
                            documents as u64
                        )
                    );
                }
                if self.side.counted.contains(r.doc) {
                    docs.push(r.doc);
                }
                self.at += 1;
            }
            if !docs.is_empty() {
                return Ok(Some(fprint));
            }
        }
    }
}

/// Each counted row here: the reference row of its exact copy there (the
/// smallest, which is a center there), [`NONE`] without one.
fn exact_copies(
    here: &Side<'_>,
    there: &Side<'_>,
    offset: u32,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<Vec<u32>> {
    let path = scratch.join("exact-both.fpd");
    let mut w = RecordWriter::create(&path, Header::new::<ExactRecord>("", false, 0, 1))?;
    for (side, shift) in [(here, 0), (there, offset)] {
        let hashes = Mapped::<ExactRecord>::open(&side.out.fprint_exact())?;
        for r in hashes.iter() {
            if !side.counted.contains(r.doc) {
                continue;
            }
            let hash = match &side.scopes {
                None => r.hash,
                Some(scopes) => {
                    let mut key = [0u8; 20];
                    key[..16].copy_from_slice(&r.hash.to_le_bytes());
                    key[16..].copy_from_slice(&scopes[r.doc as usize].to_le_bytes());
                    xxh3_128(&key)
                }
            };
            w.push(&ExactRecord { hash, doc: r.doc + shift })?;
        }
    }
    w.finish()?;
    let mut exact = vec![NONE; here.counted.documents()];
    // Within a hash, this side's rows come first.
    let mut group: (u128, Vec<u32>) = (0, Vec::new());
    let mut named = false;
    store::sort::sorted_file(&path, budget, scratch, |r: ExactRecord| {
        if r.hash != group.0 {
            group = (r.hash, Vec::new());
            named = false;
        }
        if r.doc < offset {
            group.1.push(r.doc);
        } else if !named {
            for &n in &group.1 {
                exact[n as usize] = r.doc - offset;
            }
            named = true;
        }
        Ok(())
    })?;
    let _ = std::fs::remove_file(&path);
    Ok(exact)
}

/// Writes `against.csv`, a row for every document here (a copy with its
/// center's figures); returns the figures of this side.
#[allow(clippy::too_many_arguments)]
fn write_rows(
    ours: &Ours<'_>,
    ref_ids: &DocIds,
    theirs: &OutDir,
    [our_sizes, ref_sizes]: [&[u32]; 2],
    best: &[Best],
    exact: &[u32],
    held_chunks: &[AtomicU32],
) -> anyhow::Result<AgainstStats> {
    // The URLs of the reference documents named, in one pass of its table.
    let mut urls: FxHashMap<u32, String> =
        best.iter().filter(|b| b.ref_row != NONE).map(|b| (b.ref_row, String::new())).collect();
    let mut row = 0u32;
    for_each_doc(&theirs.fingerprint_docs(), DocTable::Fingerprint, |doc| {
        if let Some(url) = urls.get_mut(&row) {
            *url = doc.url.to_string();
        }
        row += 1;
        Ok(())
    })?;
    let centers = Mapped::<Center>::open(&ours.out.centers())?;
    let mut w = AgainstWriter::create(&ours.out.against())?;
    let mut stats = AgainstStats::default();
    let mut row = 0usize;
    for_each_doc(&ours.out.docs(), DocTable::Final, |doc| {
        let center = if row < centers.len() { centers.get(row) } else { Center::EMPTY };
        row += 1;
        stats.documents += 1;
        let mut r = AgainstRow {
            doc_id: doc.id,
            url: doc.url.to_string(),
            chunks: 0,
            chunks_in_reference: 0,
            best: None,
            exact: false,
            held: false,
        };
        if center != Center::EMPTY {
            let c = center.0 as usize;
            let b = best[c];
            r.chunks = our_sizes[c];
            r.chunks_in_reference = held_chunks[c].load(Ordering::Relaxed);
            r.exact = exact[c] != NONE;
            r.held = r.exact || b.ref_row != NONE;
            r.best = (b.ref_row != NONE).then(|| Match {
                ref_doc_id: ref_ids.doc_id(b.ref_row),
                ref_url: urls.get(&b.ref_row).cloned().unwrap_or_default(),
                shared: b.shared,
                ref_chunks: ref_sizes[b.ref_row as usize],
            });
        }
        stats.held += u64::from(r.held);
        stats.exact += u64::from(r.exact);
        stats.chunks += u64::from(r.chunks);
        stats.chunks_in_reference += u64::from(r.chunks_in_reference);
        w.push(&r)
    })?;
    w.finish()?;
    Ok(stats)
}
