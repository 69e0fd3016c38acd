//! Prefix filtering: the exact Overlap table without generating the pairs
//! that share only common chunks. The paper did not have it; it comes from
//! the set-similarity-join literature (Chaudhuri, Ganti & Kaushik, ICDE
//! 2006; Bayardo, Ma & Srikant's All-Pairs, WWW 2007).
//!
//! Order all shared fingerprints globally by ascending document frequency
//! (then by value). A document's list L is its shared fingerprints in that
//! order; F(i, j) = |L_i ∩ L_j|. If F(i, j) >= T, then the first
//! |L_i| - T + 1 entries of L_i (its prefix) and the prefix of L_j share a
//! fingerprint: otherwise the T or more common fingerprints would all lie
//! in the last T - 1 entries of one of the lists. So:
//!
//! 1. the fingerprint groups (stop chunks and non-centers left out, as for
//!    every method) become postings `(doc, df, fprint)`, sorted by document
//!    and then by the global order: the lists;
//! 2. each list of T or more entries contributes its prefix to an inverted
//!    index, sorted by fingerprint; documents with fewer than T shared
//!    fingerprints cannot be in the table and are dropped;
//! 3. the pairs of every prefix group are the candidates, deduplicated
//!    through the same spilled aggregation the other methods use;
//! 4. each candidate is verified by intersecting the two lists, in
//!    parallel, in (i, j) order.
//!
//! Boilerplate chunks have the highest document frequencies, so they fall
//! in the last T - 1 entries of short lists and generate no pairs there;
//! rare chunks, the ones that show copying, are what prefixes are made of.
//! Every file of this method is scratch: records of kind 5 below, kind 1
//! for the prefix index, the aggregation's runs.

use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::aggregate::{self, RunBuilder, RunDir, pack};
use super::{CountInput, CountingMethod, GroupStats, Overlap, for_each_group};
use crate::stats::PairsStats;
use crate::store::{self, ChunkRecord, HEADER_SIZE, Header, Mapped, Record, RecordWriter};

/// One shared fingerprint of one document with its document frequency.
/// Scratch record kind 5, 16 bytes: `doc: u32`, `df: u32`, `fprint: u64`.
/// Ordered by document, then by the global order of fingerprints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct DocPosting {
    doc: u32,
    df: u32,
    fprint: u64,
}

impl Record for DocPosting {
    const KIND: u32 = 5;
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.doc.to_le_bytes());
        out[4..8].copy_from_slice(&self.df.to_le_bytes());
        out[8..16].copy_from_slice(&self.fprint.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut f = [0u8; 8];
        f.copy_from_slice(&b[8..16]);
        DocPosting { doc: u32_at(0), df: u32_at(4), fprint: u64::from_le_bytes(f) }
    }
}

/// What a prefix-filtering run reports in stats.json (`pairs.prefix`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PrefixStats {
    /// Shared fingerprints of counted documents, summed over documents.
    pub postings: u64,
    /// Documents with at least T shared fingerprints: the only ones that
    /// can be in the table.
    pub long_documents: u64,
    /// Postings in the prefixes of those documents.
    pub prefix_postings: u64,
    /// Pairs generated from prefix groups, and the distinct ones among
    /// them (each verified by intersecting two lists).
    pub candidate_instances: u64,
    pub candidates: u64,
    /// Candidates with F < T.
    pub false_positives: u64,
}

/// Candidates verified in one parallel batch.
const VERIFY_BATCH: usize = 1 << 16;

/// Exact counting by prefix filtering.
pub struct PrefixCounting;

impl CountingMethod for PrefixCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let t = input.threshold as usize;
        let scratch = input.scratch;
        let mut figures = PrefixStats::default();

        // 1. Postings, then sorted into per-document lists.
        let postings = scratch.join("postings.fpd");
        let groups = write_postings(input, &postings)?;
        groups.fill(stats);
        let lists_path = scratch.join("lists.fpd");
        let prefixes_path = scratch.join("prefixes.fpd");
        let starts = write_lists(input, &postings, &lists_path, &prefixes_path, &mut figures)?;
        let mut scratch_bytes = file_len(&postings) + file_len(&lists_path) + file_len(&prefixes_path);
        store::remove_file_if_exists(&postings)?;

        // 2-3. The prefix index, sorted by fingerprint; the pairs of each of
        // its groups are the candidates.
        let runs = RunDir::new(scratch);
        let prefixes = Mapped::<ChunkRecord>::open(&prefixes_path)?;
        let mut builder = RunBuilder::new(aggregate::buffer_pairs(input.memory), &runs);
        let mut group: Vec<u32> = Vec::new();
        let mut current = None;
        let mut flush = |group: &mut Vec<u32>, builder: &mut RunBuilder<'_>| -> anyhow::Result<()> {
            for (x, &i) in group.iter().enumerate() {
                for &j in &group[x + 1..] {
                    figures.candidate_instances += 1;
                    builder.push(pack(i, j))?;
                }
            }
            group.clear();
            Ok(())
        };
        store::sort::sorted(&prefixes, input.memory / 2, scratch, |r| {
            if current != Some(r.fprint) {
                flush(&mut group, &mut builder)?;
                current = Some(r.fprint);
            }
            group.push(r.doc);
            Ok(())
        })?;
        flush(&mut group, &mut builder)?;
        drop(prefixes);
        store::remove_file_if_exists(&prefixes_path)?;

        // 4. Verification, a batch of candidates at a time.
        let lists = Mapped::<DocPosting>::open(&lists_path)?;
        let verifier = Verifier { lists: &lists, starts: &starts };
        let mut batch: Vec<u64> = Vec::with_capacity(VERIFY_BATCH);
        let mut true_pairs = 0u64;
        let mut verify = |batch: &mut Vec<u64>, emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>| {
            let shared: Vec<u32> = batch.par_iter().map(|&pair| verifier.shared(pair)).collect();
            for (&pair, &f) in batch.iter().zip(&shared) {
                if f as usize >= t {
                    true_pairs += 1;
                    emit(Overlap { doc_i: (pair >> 32) as u32, doc_j: pair as u32, shared: f })?;
                }
            }
            batch.clear();
            anyhow::Ok(())
        };
        let candidates = aggregate::reduce(builder.finish()?, input.memory, 1, &runs, &mut |o| {
            batch.push(pack(o.doc_i, o.doc_j));
            if batch.len() == VERIFY_BATCH {
                verify(&mut batch, emit)?;
            }
            Ok(())
        })?;
        verify(&mut batch, emit)?;
        scratch_bytes += runs.bytes();

        figures.candidates = candidates;
        figures.false_positives = candidates - true_pairs;
        stats.distinct_pairs = candidates;
        stats.spill_bytes = scratch_bytes;
        stats.prefix = Some(figures);
        Ok(())
    }
}

/// Writes one posting per document of every counted fingerprint group,
/// partition by partition.
fn write_postings(input: &CountInput<'_>, path: &Path) -> anyhow::Result<GroupStats> {
    let mut w = RecordWriter::<DocPosting>::create(path, Header::new::<DocPosting>("", false, 0, 1))?;
    let mut groups = GroupStats::default();
    let bar = input.progress.items("postings", input.parts.len() as u64, "partitions");
    for part in input.parts {
        let g = for_each_group(input, part, |docs, fprint| {
            let df = docs.len() as u32;
            for &doc in docs {
                w.push(&DocPosting { doc, df, fprint })?;
            }
            Ok(())
        })?;
        groups.add(&g);
        bar.inc(1);
    }
    bar.finish_and_clear();
    w.finish()?;
    Ok(groups)
}

/// Sorts the postings into per-document lists, keeps the lists of
/// documents with at least T entries (in `lists`), writes their prefixes
/// (in `prefixes`), and returns where each document's list starts: entry
/// `d` to `d + 1` of the result, 8 bytes per document.
fn write_lists(
    input: &CountInput<'_>,
    postings: &Path,
    lists: &Path,
    prefixes: &Path,
    figures: &mut PrefixStats,
) -> anyhow::Result<Vec<u64>> {
    let t = input.threshold as usize;
    let documents = input.counted.documents();
    let mut starts = vec![0u64; documents + 1];
    let mut lw = RecordWriter::<DocPosting>::create(lists, Header::new::<DocPosting>("", true, 0, 1))?;
    let mut pw = RecordWriter::<ChunkRecord>::create(prefixes, Header::new::<ChunkRecord>("", false, 0, 1))?;
    let mut list: Vec<DocPosting> = Vec::new();
    // Documents before `next` have their start set.
    let mut next = 0usize;
    let mut flush = |list: &mut Vec<DocPosting>, lw: &mut RecordWriter<DocPosting>| -> anyhow::Result<()> {
        let Some(first) = list.first() else { return Ok(()) };
        let doc = first.doc as usize;
        if doc >= documents {
            anyhow::bail!("docID {doc} in the fingerprint partitions is beyond the {documents} documents");
        }
        figures.postings += list.len() as u64;
        if list.len() >= t {
            let here = lw.count();
            starts[next..=doc].fill(here);
            for p in list.iter() {
                lw.push(p)?;
            }
            starts[doc + 1] = lw.count();
            next = doc + 1;
            figures.long_documents += 1;
            let prefix = list.len() - t + 1;
            figures.prefix_postings += prefix as u64;
            for p in &list[..prefix] {
                pw.push(&ChunkRecord { fprint: p.fprint, doc: p.doc })?;
            }
        }
        list.clear();
        Ok(())
    };
    let mapped = Mapped::<DocPosting>::open(postings)?;
    store::sort::sorted(&mapped, input.memory / 2, input.scratch, |p| {
        if list.first().is_some_and(|f| f.doc != p.doc) {
            flush(&mut list, &mut lw)?;
        }
        list.push(p);
        Ok(())
    })?;
    flush(&mut list, &mut lw)?;
    let end = lw.count();
    starts[next..].fill(end);
    lw.finish()?;
    pw.finish()?;
    Ok(starts)
}

/// Intersects two documents' lists.
struct Verifier<'a> {
    lists: &'a Mapped<DocPosting>,
    starts: &'a [u64],
}

impl Verifier<'_> {
    fn list(&self, doc: u32) -> &[u8] {
        let (a, b) = (self.starts[doc as usize] as usize, self.starts[doc as usize + 1] as usize);
        &self.lists.bytes()[a * DocPosting::SIZE..b * DocPosting::SIZE]
    }

    /// F(i, j): the entries both lists hold, by a merge in the global
    /// order.
    fn shared(&self, pair: u64) -> u32 {
        let key = |b: &[u8]| {
            let p = DocPosting::decode(b);
            (p.df, p.fprint)
        };
        let mut a = self.list((pair >> 32) as u32).chunks_exact(DocPosting::SIZE).map(key).peekable();
        let mut b = self.list(pair as u32).chunks_exact(DocPosting::SIZE).map(key).peekable();
        let mut shared = 0;
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            match x.cmp(y) {
                std::cmp::Ordering::Less => {
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    a.next();
                    b.next();
                }
            }
        }
        shared
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(HEADER_SIZE as u64, |m| m.len())
}
