//! Counting only what changed: the Overlap table of an analysis made with
//! `--previous`, from the previous analysis's table and the pairs of the
//! documents that changed.
//!
//! A document is *untouched* when it is counted (an exact-group center)
//! now, was counted in the previous analysis under the same docID, and has
//! the same text, so the same fingerprints (the fingerprint stage marks
//! this in `doc-ids.fpd`). Two untouched documents share now exactly the
//! fingerprints they shared then, so their F is the previous table's, as
//! long as no fingerprint they share became a stop chunk or stopped being
//! one: the documents of every fingerprint whose stop status differs
//! (another `--max-df`, or a document frequency that crossed it) count as
//! touched too. So the table is:
//!
//! - the previous rows whose two documents are untouched, with F >= T
//!   (carried: a lower T than the previous one would need pairs that table
//!   left out, and counts everything instead);
//! - every pair of counted documents with a touched one and F >= T, found
//!   by one-sided prefix filtering: order each touched document's shared
//!   fingerprints by ascending document frequency; a pair with F >= T shares
//!   one of the first |L| - T + 1 of them (at most T - 1 shared ones fit in
//!   the rest), so the candidates are the documents of those fingerprints'
//!   groups, and each is verified by intersecting the two lists.
//!
//! Four passes over the FPrint-DocID partitions (the stop statuses, the
//! touched documents' lists, the candidates, the candidates' lists), each a
//! sequential scan; what is held grows with the change, not the crawl.
//! When the change is too large for that to pay (more than a third of the
//! counted documents touched), or the previous analysis is gone or was made
//! again since, every pair is counted by the method asked for.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::aggregate::{self, RunBuilder, RunDir, pack};
use super::{CountInput, GroupStats, Overlap, PairsStats, for_each_group, scan_groups, stop};
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::handles::{DocIds, NONE, SAME_TEXT, WAS_CENTER};
use crate::store::overlap::for_each_pair;
use crate::store::scopes::{Scope, ScopeId};
use crate::store::{Manifest, Mapped, OutDir};

/// What counting only the change did (`pairs.delta` in stats.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct DeltaStats {
    /// Counted documents, and those whose pairs were counted again.
    pub counted_documents: u64,
    pub touched_documents: u64,
    /// Of those, the ones touched only because a fingerprint they have
    /// changed its stop status.
    pub touched_by_stop_chunks: u64,
    /// Rows of the previous table carried over.
    pub carried_pairs: u64,
    /// Candidate pairs of a touched document, each verified, and those with
    /// F >= T.
    pub candidates: u64,
    pub counted_pairs: u64,
}

/// The previous analysis to count from, or why every pair is counted
/// although there is one.
pub(crate) fn previous(manifest: &Manifest, threshold: u32) -> Result<Previous, String> {
    let Some(chain) = &manifest.chain else { return Err("no previous analysis".into()) };
    let old = OutDir::new(&chain.previous_canonical);
    match old.analysis_key(&crate::fingerprint::CARRIED_STAGES) {
        Ok(key) if key == chain.previous_key => {}
        _ => return Err(format!("{} is gone or was made again since", chain.previous)),
    }
    let old_manifest = Manifest::read(&old).map_err(|e| format!("{e:#}"))?;
    let scope = |m: &Manifest| m.scope().map_err(|e| format!("{e:#}"));
    if scope(&old_manifest)? != scope(manifest)? {
        return Err(format!("{} looked for copies in another --scope", chain.previous));
    }
    let Some(counted) = old_manifest.pairs else {
        return Err(format!("{} has no pairs", chain.previous));
    };
    if threshold < counted.threshold {
        return Err(format!("T = {threshold} is below the previous analysis's T = {}", counted.threshold));
    }
    Ok(Previous { old, max_df: counted.max_df, scope: scope(manifest)? })
}

/// What is read of the previous analysis.
pub(crate) struct Previous {
    old: OutDir,
    max_df: Option<u32>,
    scope: Scope,
}

/// The documents whose pairs are counted again, by row.
struct Touched {
    rows: Vec<bool>,
    count: u64,
}

/// Counts the table of `input` from the previous one: calls `emit` for
/// every pair with F >= T, in (i, j) order of rows. Returns `None`, having
/// emitted nothing, when the change is too large for it to pay.
pub(crate) fn count(
    prev: &Previous,
    out: &OutDir,
    input: &CountInput<'_>,
    doc_ids: &DocIds,
    stats: &mut PairsStats,
    emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
) -> anyhow::Result<Option<DeltaStats>> {
    let counted = input.counted;
    let n = counted.documents();
    let mut figures = DeltaStats::default();
    let mut touched = Touched { rows: vec![false; n], count: 0 };
    let untouched = |row: u32| {
        counted.contains(row) && doc_ids.get(row).flags & (SAME_TEXT | WAS_CENTER) == SAME_TEXT | WAS_CENTER
    };
    for row in 0..n as u32 {
        if counted.contains(row) {
            figures.counted_documents += 1;
            if !untouched(row) {
                touched.rows[row as usize] = true;
                touched.count += 1;
            }
        }
    }
    figures.touched_by_stop_chunks = stop_changes(prev, out, input, &mut touched)?;
    figures.touched_documents = touched.count;
    if touched.count * 3 > figures.counted_documents {
        return Ok(None);
    }

    let (lists, groups) = touched_lists(input, &touched)?;
    groups.fill(stats);
    let candidates = candidates(input, &lists)?;
    figures.candidates = candidates.len() as u64;
    let verified = verify(input, &candidates)?;
    figures.counted_pairs = verified.len() as u64;

    // The carried rows and the new ones, merged in (i, j) order: the
    // previous table is in docID order, and docIDs keep the rows' order.
    // The previous docIDs are turned into rows through a table, not a
    // search per row (a search of doc-ids.fpd was 7% of the stage).
    let mut row_of: Vec<u32> = Vec::new();
    for row in 0..n as u32 {
        let id = doc_ids.doc_id(row) as usize;
        row_of.resize(row_of.len().max(id + 1), NONE);
        row_of[id] = row;
    }
    let row = |id: u32| row_of.get(id as usize).copied().filter(|&r| r != NONE);
    let t = input.threshold;
    let mut new = verified.into_iter().peekable();
    let mut carried = 0u64;
    for_each_pair(&prev.old.overlap(), |o| {
        let (Some(i), Some(j)) = (row(o.doc_i), row(o.doc_j)) else { return Ok(()) };
        if !untouched(i)
            || !untouched(j)
            || touched.rows[i as usize]
            || touched.rows[j as usize]
            || o.shared < t
        {
            return Ok(());
        }
        while let Some(p) = new.next_if(|p| (p.doc_i, p.doc_j) < (i, j)) {
            emit(p)?;
        }
        carried += 1;
        emit(Overlap { doc_i: i, doc_j: j, shared: o.shared })
    })?;
    for p in new {
        emit(p)?;
    }
    figures.carried_pairs = carried;
    stats.distinct_pairs = figures.carried_pairs + figures.candidates;
    Ok(Some(figures))
}

/// Marks as touched the documents of every fingerprint that is a stop
/// chunk now and was not before, or the other way round (in its scope);
/// returns how many it added.
fn stop_changes(
    prev: &Previous,
    out: &OutDir,
    input: &CountInput<'_>,
    touched: &mut Touched,
) -> anyhow::Result<u64> {
    if input.max_df.is_none() && prev.max_df.is_none() {
        return Ok(0);
    }
    let before = match prev.max_df {
        Some(_) => stops_before(prev, out)?,
        None => HashSet::new(),
    };
    let max_df = input.max_df.map_or(usize::MAX, |m| m as usize);
    let found: Vec<anyhow::Result<Vec<u32>>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut docs = Vec::new();
            scan_groups(part, input.counted, |group, fprint| {
                let scope = input.counted.scope(group[0]);
                if (group.len() > max_df) != before.contains(&(fprint, scope)) {
                    docs.extend_from_slice(group);
                }
                Ok(())
            })?;
            Ok(docs)
        })
        .collect();
    let mut added = 0;
    for docs in found {
        for d in docs? {
            if !std::mem::replace(&mut touched.rows[d as usize], true) {
                added += 1;
            }
        }
    }
    touched.count += added;
    Ok(added)
}

/// The previous analysis's stop chunks, each with the number of its scope
/// in this analysis. Under `--scope host` or `site` a chunk is a stop
/// chunk in each scope it is frequent in, named by its example document's
/// host in the previous `docs.csv`; the names are turned into this
/// analysis's scope numbers through its own `docs.csv` (a scope with no
/// document now has no group to change). Without scopes, every chunk is in
/// scope 0.
fn stops_before(prev: &Previous, out: &OutDir) -> anyhow::Result<HashSet<(u64, u32)>> {
    let stops = stop::read_csv(&prev.old.stop_chunks())?;
    if prev.scope == Scope::Crawl {
        return Ok(stops.into_iter().map(|s| (s.fprint, 0)).collect());
    }
    let scopes = Mapped::<ScopeId>::open(&out.scopes())?;
    let mut numbers: HashMap<String, u32> = HashMap::new();
    let mut row = 0usize;
    for_each_doc(&out.docs(), DocTable::Final, |doc| {
        numbers.entry(prev.scope.of(doc.host).to_string()).or_insert(scopes.get(row).0);
        row += 1;
        Ok(())
    })?;
    let mut example_scope: HashMap<u32, Option<u32>> = stops.iter().map(|s| (s.example_doc, None)).collect();
    for_each_doc(&prev.old.docs(), DocTable::Final, |doc| {
        if let Some(scope) = example_scope.get_mut(&doc.id) {
            *scope = numbers.get(prev.scope.of(doc.host)).copied();
        }
        Ok(())
    })?;
    Ok(stops.iter().filter_map(|s| example_scope[&s.example_doc].map(|scope| (s.fprint, scope))).collect())
}

/// Each touched document's shared fingerprints with their document
/// frequencies, sorted in the global order (ascending frequency, then
/// fingerprint); and the counts every method reports of the groups.
fn touched_lists(
    input: &CountInput<'_>,
    touched: &Touched,
) -> anyhow::Result<(Lists<(u32, u64)>, GroupStats)> {
    // Per partition: (document, document frequency, fingerprint) of the
    // touched documents, and the counts of its groups.
    type Found = (Vec<(u32, u32, u64)>, GroupStats);
    let found: Vec<anyhow::Result<Found>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut postings = Vec::new();
            let groups = for_each_group(input, part, |docs, fprint| {
                for &d in docs {
                    if touched.rows[d as usize] {
                        postings.push((d, docs.len() as u32, fprint));
                    }
                }
                Ok(())
            })?;
            Ok((postings, groups))
        })
        .collect();
    let mut postings = Vec::new();
    let mut groups = GroupStats::default();
    for f in found {
        let (p, g) = f?;
        postings.extend(p);
        groups.add(&g);
    }
    postings.sort_unstable();
    Ok((Lists::new(postings.into_iter().map(|(d, df, f)| (d, (df, f)))), groups))
}

/// Per document, its entries, sorted.
struct Lists<T> {
    docs: HashMap<u32, Vec<T>>,
}

impl<T> Lists<T> {
    /// From `(doc, entry)` in ascending order.
    fn new(sorted: impl Iterator<Item = (u32, T)>) -> Lists<T> {
        let mut docs: HashMap<u32, Vec<T>> = HashMap::new();
        for (d, e) in sorted {
            docs.entry(d).or_default().push(e);
        }
        Lists { docs }
    }
}

/// The distinct pairs of a touched document with a document of a group of
/// one of its prefix fingerprints, sorted.
fn candidates(input: &CountInput<'_>, lists: &Lists<(u32, u64)>) -> anyhow::Result<Vec<u64>> {
    let t = input.threshold as usize;
    // Which touched documents have each prefix fingerprint.
    let mut prefixes: HashMap<u64, Vec<u32>> = HashMap::new();
    for (&d, list) in &lists.docs {
        if list.len() >= t {
            for &(_, f) in &list[..list.len() - t + 1] {
                prefixes.entry(f).or_default().push(d);
            }
        }
    }
    let runs = RunDir::new(input.scratch);
    let cap = aggregate::buffer_pairs(input.memory);
    // Each partition's candidates stay in memory unless they outgrow its
    // share of the budget: written as runs, the 64 small remainders of a
    // recrawl cost more in file creation than the rest of the stage.
    type Found = (Vec<PathBuf>, Vec<u64>);
    let found: Vec<anyhow::Result<Found>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut builder = RunBuilder::new(cap, &runs);
            for_each_group(input, part, |docs, fprint| {
                let Some(owners) = prefixes.get(&fprint) else { return Ok(()) };
                // Under `--scope`, a fingerprint's documents come in one
                // group per scope: an owner pairs only with its own.
                for &owner in owners.iter().filter(|o| docs.binary_search(o).is_ok()) {
                    for &other in docs {
                        // A pair of two touched documents comes from both;
                        // it is kept once.
                        if other != owner {
                            builder.push(pack(owner.min(other), owner.max(other)))?;
                        }
                    }
                }
                Ok(())
            })?;
            let (spilled, mut kept) = builder.finish_kept();
            kept.sort_unstable();
            kept.dedup();
            Ok((spilled, kept))
        })
        .collect();
    let mut paths = Vec::new();
    let mut kept = Vec::new();
    for f in found {
        let (p, k) = f?;
        paths.extend(p);
        kept.push(k);
    }
    let mut pairs = Vec::new();
    if paths.is_empty() {
        pairs = kept.concat();
        pairs.sort_unstable();
        pairs.dedup();
    } else {
        for k in kept {
            paths.extend(RunBuilder::spill_all(&runs, k)?);
        }
        aggregate::reduce(paths, input.memory, 1, &runs, &mut |o| {
            pairs.push(pack(o.doc_i, o.doc_j));
            Ok(())
        })?;
    }
    Ok(pairs)
}

/// The candidates with F >= T, in (i, j) order: one more pass gathers the
/// lists of every document in a candidate, which are intersected.
fn verify(input: &CountInput<'_>, candidates: &[u64]) -> anyhow::Result<Vec<Overlap>> {
    let mut wanted: HashSet<u32> = HashSet::new();
    for &p in candidates {
        wanted.insert((p >> 32) as u32);
        wanted.insert(p as u32);
    }
    let found: Vec<anyhow::Result<Vec<(u32, u64)>>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut postings = Vec::new();
            for_each_group(input, part, |docs, fprint| {
                for &d in docs {
                    if wanted.contains(&d) {
                        postings.push((d, fprint));
                    }
                }
                Ok(())
            })?;
            Ok(postings)
        })
        .collect();
    let mut postings = Vec::new();
    for f in found {
        postings.extend(f?);
    }
    postings.sort_unstable();
    let lists = Lists::new(postings.into_iter());
    let t = input.threshold;
    let shared: Vec<u32> = candidates
        .par_iter()
        .map(|&p| {
            let (a, b) = (&lists.docs[&((p >> 32) as u32)], &lists.docs[&(p as u32)]);
            intersection(a, b)
        })
        .collect();
    Ok(candidates
        .iter()
        .zip(shared)
        .filter(|&(_, f)| f >= t)
        .map(|(&p, f)| Overlap { doc_i: (p >> 32) as u32, doc_j: p as u32, shared: f })
        .collect())
}

/// Entries two sorted lists have in common.
fn intersection(a: &[u64], b: &[u64]) -> u32 {
    let (mut i, mut j, mut n) = (0, 0, 0u32);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}
