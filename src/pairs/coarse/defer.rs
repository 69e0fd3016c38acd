//! DEFER-COUNT: a pilot counts the pairs of a sample of the fingerprint
//! groups exactly; the pairs that look heavy there (the near-replicas far
//! above T) are deferred: kept out of the counter array, so they cannot
//! make their buckets heavy for the light pairs that share them, and made
//! candidates from the start.

use std::collections::HashSet;

use super::{Bitmap, CoarseStats, Route, Scans, Selection, bucket, pilot};
use crate::pairs::aggregate::{self, PairFilter, pack};

/// Sampled sightings a pair needs to be deferred. With one group in 16
/// sampled, a pair seen 4 times shares about 64 fingerprints; a light pair
/// (F < T) is seen that often only by rare chance.
const MIN_HITS: u32 = 4;

/// Bytes the deferred set may take, as a share of the budget: an entry of
/// a `HashSet<u64>` costs about 16 bytes with its overhead.
const DEFERRED_SHARE: u64 = 16;

/// Every pair but the deferred ones, into one array.
struct NotDeferred<'a> {
    deferred: &'a HashSet<u64>,
    m: u64,
}

impl Route for NotDeferred<'_> {
    #[inline]
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize)) {
        if !self.deferred.contains(&pair) {
            add(0, bucket(pair, 0, self.m));
        }
    }
}

/// Deferred pairs, and pairs whose bucket is heavy.
pub(super) struct DeferredOrHeavy {
    deferred: HashSet<u64>,
    bitmap: Bitmap,
    m: u64,
    deferred_true: u64,
}

impl PairFilter for DeferredOrHeavy {
    fn prefetch(&self, pair: u64) {
        self.bitmap.prefetch(bucket(pair, 0, self.m));
    }

    fn keep(&self, pair: u64) -> bool {
        self.bitmap.get(bucket(pair, 0, self.m)) || self.deferred.contains(&pair)
    }
}

impl Selection for DeferredOrHeavy {
    fn hash_functions(&self) -> u32 {
        1
    }

    fn true_pair(&mut self, pair: u64) {
        if self.deferred.contains(&pair) {
            self.deferred_true += 1;
        }
    }

    fn report(&self, stats: &mut CoarseStats) {
        stats.deferred_pairs = Some(self.deferred.len() as u64);
        stats.deferred_true = Some(self.deferred_true);
    }
}

pub(super) fn select(scans: &mut Scans<'_>) -> anyhow::Result<DeferredOrHeavy> {
    let input = scans.input;
    let max = (input.memory / DEFERRED_SHARE / 16).max(1024) as usize;
    let deferred = heavy_looking(scans, max)?;
    scans.passes.end("pilot");
    let m = scans.m;
    let bitmaps = scans.scan("hash-1", &[m], input.threshold, &NotDeferred { deferred: &deferred, m })?;
    scans.count_heavy(&bitmaps);
    let bitmap = bitmaps.into_iter().next().expect("one array");
    Ok(DeferredOrHeavy { deferred, bitmap, m, deferred_true: 0 })
}

/// The pilot: the sampled pairs go through the same spilled aggregation as
/// the verification scan, in parallel and deterministic; the pairs seen
/// often enough are kept, at most `max` of them, most sightings first.
fn heavy_looking(scans: &mut Scans<'_>, max: usize) -> anyhow::Result<HashSet<u64>> {
    let input = scans.input;
    let dir = input.scratch.join("pilot");
    std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let runs = aggregate::RunDir::new(&dir);
    let spilled = aggregate::spill_pairs(input, &runs, "pilot", &pilot::SampledPairs)?;
    let hits = pilot::hits(input.threshold, MIN_HITS);
    let mut top: Vec<(u32, u64)> = Vec::new();
    aggregate::reduce(spilled.runs, input.memory, hits, &runs, &mut |o| {
        top.push((o.shared, pack(o.doc_i, o.doc_j)));
        if top.len() >= 2 * max {
            keep_most_seen(&mut top, max);
        }
        Ok(())
    })?;
    keep_most_seen(&mut top, max);
    scans.spill_bytes += runs.bytes();
    crate::store::remove_dir_if_exists(&dir)?;
    Ok(top.into_iter().map(|(_, pair)| pair).collect())
}

/// Keeps the `max` pairs seen most, the smaller pair first among equals.
fn keep_most_seen(top: &mut Vec<(u32, u64)>, max: usize) {
    top.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    top.truncate(max);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_seen_pairs_are_kept_whatever_their_order() {
        let mut a = vec![(5, 10), (9, 3), (5, 2), (7, 8), (9, 1)];
        let mut b = a.clone();
        b.reverse();
        keep_most_seen(&mut a, 3);
        keep_most_seen(&mut b, 3);
        assert_eq!(a, vec![(9, 1), (9, 3), (7, 8)]);
        assert_eq!(a, b);
    }
}
