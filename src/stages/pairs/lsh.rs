//! Approximate candidate generators, verified: the locality-sensitive
//! hashing the field deduplicates with ([`super::minhash`],
//! [`super::simhash`]), run on the same sets the exact methods compare.
//!
//! 1. Signatures: each counted document's set (its distinct chunk
//!    fingerprints, stop chunks of its scope out, as [`super::sizes`]
//!    counts them) is folded into a fixed-size signature, one pass over
//!    the FPrint-DocID partitions per range of documents. Ranges are sized
//!    so the threads' signatures together fit half of `--memory`, and are
//!    as many as the threads at least, each working alone on its documents
//!    (no atomics).
//!    Computed here rather than stored by the fingerprint stage: the sets
//!    depend on this stage's `--max-df`, `--scope` and exact copies, and a
//!    run that never asks for them pays nothing (512 bytes a document for
//!    MinHash would be a third of an analysis with `lines` chunks).
//! 2. Buckets: every signature gives a few bucket keys (MinHash: one per
//!    band; SimHash: one per permuted table). `(key, doc)` records (kind 1,
//!    as the FPrint-DocID files) are sorted within the budget; the
//!    documents of one scope sharing a key are candidates, each pair once
//!    per bucket, filtered by the scheme (SimHash: at most K differing
//!    bits).
//! 3. Verification: candidates are deduplicated by the spilled aggregation
//!    and verified against the documents' lists as prefix filtering does
//!    ([`super::prefix::Lists`]), so the table holds only pairs that pass
//!    the criterion, with their exact F: precision is 1 by construction,
//!    and what a scheme loses is recall.

use std::ops::Range;
use std::path::PathBuf;

use rayon::prelude::*;

use super::aggregate::{self, RunBuilder, RunDir, pack};
use super::prefix::Lists;
use super::sizes::for_each_set_group;
use super::{CountInput, CountingMethod, Overlap, PairsStats};
pub(crate) use crate::store::stats::LshStats;
use crate::store::{self, ChunkRecord, Header, Mapped, RecordWriter};

/// How a document's set becomes bucket keys.
pub(crate) trait Scheme: Sync {
    /// 32-bit words of state per document while its set is read.
    const WORDS: usize;
    /// Whether [`Scheme::near`] filters candidates, from the 64-bit value
    /// [`Scheme::keys`] returns (kept in memory, 8 bytes a document).
    const FILTERS: bool;
    /// A document's state before its first chunk.
    fn clear(&self, state: &mut [u32]);
    /// Folds one chunk fingerprint of the document in.
    fn add(&self, state: &mut [u32], fprint: u64);
    /// Appends the document's bucket keys, and returns its filter value.
    fn keys(&self, state: &mut [u32], keys: &mut Vec<u64>) -> u64;
    /// Whether two documents sharing a bucket are a candidate.
    fn near(&self, a: u64, b: u64) -> bool;
    /// What stats.json says of the scheme.
    fn stats(&self) -> LshStats;
}

/// Counting by candidates from a signature scheme, verified exactly.
pub(crate) struct LshCounting<S: Scheme> {
    pub scheme: S,
}

impl<S: Scheme> CountingMethod for LshCounting<S> {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut figures = self.scheme.stats();
        let signed = sign(&self.scheme, input, &mut figures)?;
        let runs = RunDir::new(input.scratch);
        let mut builder = RunBuilder::new(aggregate::buffer_pairs(input.memory), &runs);
        let mut bucket: Vec<(u32, u32)> = Vec::new();
        let mut instances = 0u64;
        // Only the documents of some candidate need a list to verify by.
        let mut listed = vec![false; input.counted.documents()];
        let mut flush = |bucket: &mut Vec<(u32, u32)>, builder: &mut RunBuilder<'_>| -> anyhow::Result<()> {
            if bucket.len() >= 2 {
                // Documents of one scope only, each pair once, (i, j).
                bucket.sort_unstable();
                for scope in bucket.chunk_by(|a, b| a.0 == b.0) {
                    for (x, &(_, i)) in scope.iter().enumerate() {
                        for &(_, j) in &scope[x + 1..] {
                            if !S::FILTERS || self.scheme.near(signed.filter(i), signed.filter(j)) {
                                instances += 1;
                                listed[i as usize] = true;
                                listed[j as usize] = true;
                                builder.push(pack(i, j))?;
                            }
                        }
                    }
                }
            }
            bucket.clear();
            Ok(())
        };
        let bar = input.progress.items("buckets", figures.bucket_entries, "entries");
        let mut current = None;
        let mut read = 0u64;
        store::sort::sorted_files(&signed.files, input.memory / 2, input.scratch, |r: ChunkRecord| {
            if current != Some(r.fprint) {
                flush(&mut bucket, &mut builder)?;
                current = Some(r.fprint);
            }
            bucket.push((input.counted.scope(r.doc), r.doc));
            read += 1;
            if read.is_multiple_of(1 << 20) {
                bar.set_position(read);
            }
            Ok(())
        })?;
        flush(&mut bucket, &mut builder)?;
        bar.finish_and_clear();
        for path in &signed.files {
            store::remove_file_if_exists(path)?;
        }
        let candidates = builder.finish()?;

        let lists = Lists::build(input, &listed)?;
        lists.groups.fill(stats);
        let verified = lists.verify(input, candidates, &runs, emit)?;
        figures.candidate_instances = instances;
        figures.candidates = verified.candidates;
        figures.false_positives = verified.false_positives();
        stats.distinct_pairs = verified.candidates;
        stats.spill_bytes = signed.bytes + lists.scratch_bytes + runs.bytes();
        stats.lsh = Some(figures);
        Ok(())
    }
}

/// Bucket records and filter values of every document.
struct Signed {
    /// One unsorted file of `(key, doc)` records per document range.
    files: Vec<PathBuf>,
    /// Filter values by row (empty unless the scheme filters).
    filters: Vec<u64>,
    bytes: u64,
}

impl Signed {
    fn filter(&self, doc: u32) -> u64 {
        self.filters[doc as usize]
    }
}

/// The smallest document range worth a pass over the partitions.
const MIN_RANGE: usize = 1 << 12;

/// Step 1: every document's signature, range by range, into bucket keys.
fn sign<S: Scheme>(scheme: &S, input: &CountInput<'_>, figures: &mut LshStats) -> anyhow::Result<Signed> {
    let documents = input.counted.documents();
    let per_doc = (S::WORDS * 4 + 4) as u64;
    let threads = rayon::current_num_threads().max(1);
    // Each thread works on one range at a time: together they hold half of
    // the budget.
    let fit = ((input.memory / 2 / threads as u64) / per_doc).max(MIN_RANGE as u64) as usize;
    let ranges = documents.div_ceil(fit).max(threads).min(documents.max(1));
    let len = documents.div_ceil(ranges).max(1);
    let ranges: Vec<Range<usize>> = (0..ranges).map(|r| r * len..((r + 1) * len).min(documents)).collect();
    // With more ranges than threads, only as many are in memory at once as
    // there are threads: each range's state is dropped before the next
    // starts on its thread (rayon runs one task per thread at a time here,
    // as a range's work spawns none).
    let bar = input.progress.items("signatures", ranges.len() as u64, "document ranges");
    let done: Vec<anyhow::Result<(PathBuf, Vec<u64>, u64)>> = ranges
        .par_iter()
        .enumerate()
        .map(|(r, range)| {
            let done =
                sign_range(scheme, input, range.clone(), &input.scratch.join(format!("buckets-{r}.fpd")));
            bar.inc(1);
            done
        })
        .collect();
    bar.finish_and_clear();
    let mut signed = Signed { files: Vec::new(), filters: Vec::new(), bytes: 0 };
    for d in done {
        let (path, filters, signed_docs) = d?;
        signed.bytes += std::fs::metadata(&path).map_or(0, |m| m.len());
        figures.bucket_entries += Mapped::<ChunkRecord>::open(&path)?.len() as u64;
        signed.files.push(path);
        signed.filters.extend(filters);
        figures.documents += signed_docs;
    }
    figures.signature_passes = ranges.len() as u64;
    Ok(signed)
}

/// The signatures of the documents in `range`: their bucket records into
/// `path`; returns it, their filter values (when the scheme filters) and
/// how many were signed.
fn sign_range<S: Scheme>(
    scheme: &S,
    input: &CountInput<'_>,
    range: Range<usize>,
    path: &std::path::Path,
) -> anyhow::Result<(PathBuf, Vec<u64>, u64)> {
    let base = range.start;
    let n = range.len();
    let mut state = vec![0u32; n * S::WORDS];
    for s in state.chunks_exact_mut(S::WORDS) {
        scheme.clear(s);
    }
    let mut sizes = vec![0u32; n];
    let (lo, hi) = (range.start as u32, range.end as u32);
    for part in input.parts {
        for_each_set_group(part, input.counted, input.max_df, |docs, fprint| {
            for &d in docs {
                if (lo..hi).contains(&d) {
                    let k = (d - lo) as usize;
                    scheme.add(&mut state[k * S::WORDS..(k + 1) * S::WORDS], fprint);
                    sizes[k] += 1;
                }
            }
        })?;
    }
    let mut w = RecordWriter::<ChunkRecord>::create(path, Header::new::<ChunkRecord>("", false, 0, 1))?;
    let mut filters = if S::FILTERS { vec![0u64; n] } else { Vec::new() };
    let mut keys = Vec::new();
    let mut signed = 0u64;
    for (k, s) in state.chunks_exact_mut(S::WORDS).enumerate() {
        if !can_pass(input, sizes[k]) {
            continue;
        }
        keys.clear();
        let filter = scheme.keys(s, &mut keys);
        if S::FILTERS {
            filters[k] = filter;
        }
        let doc = (base + k) as u32;
        for &key in &keys {
            w.push(&ChunkRecord { fprint: key, doc })?;
        }
        signed += 1;
    }
    w.finish()?;
    Ok((path.to_path_buf(), filters, signed))
}

/// Whether a document with a set of `size` chunks can be in the table with
/// any partner: documents that cannot get no signature, so an empty page
/// is not a candidate of every other.
fn can_pass(input: &CountInput<'_>, size: u32) -> bool {
    size >= input.threshold.max(1)
        && (!input.criterion.needs_sizes() || input.criterion.least_overlap(size) <= size)
}

/// A 64-bit mix (splitmix64's finalizer): chunk fingerprints are hashes
/// already, but the partitions split them by their top bits, so a scheme
/// mixes before it takes bits of its own.
pub(crate) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
