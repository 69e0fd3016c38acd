//! DEFER-COUNT: a pilot counts the pairs of a sample of the fingerprint
//! groups exactly; the pairs that look heavy there (the near-replicas far
//! above T) are deferred: kept out of the counter array, so they cannot
//! make their buckets heavy for the light pairs that share them, and made
//! candidates from the start.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

use super::{Bitmap, Route, Scans, Selection, bucket, mix, pilot};
use crate::stages::pairs::aggregate::{self, PairFilter, pack};
use crate::store::stats::CoarseStats;

/// Sampled sightings a pair needs to be deferred. With one group in 16
/// sampled, a pair seen 8 times shares about 128 fingerprints: deferring
/// is for the pairs far above T, whose weight alone makes a bucket heavy.
/// Pages of one site share their template, so pairs just below T are
/// legion; at 4 sightings, on a 1 GB crawl at T = 25, 103,024 of the
/// 110,271 deferred pairs were such light pairs, each a false positive.
const MIN_HITS: u32 = 8;

/// Bytes the deferred set may take, as a share of the budget: an entry of
/// a `HashSet<u64>` costs about 16 bytes with its overhead.
const DEFERRED_SHARE: u64 = 16;

/// The deferred pairs. Both scans look up every pair in it, so it hashes
/// with [`mix`]: SipHash, the default, cost more than all the rest of a
/// scan's work per pair (a 1 GB crawl's scans took 72 and 82 s with it),
/// and a set of document pairs needs no defence against chosen keys.
type Deferred = HashSet<u64, PairHash>;

#[derive(Clone, Copy, Default)]
struct PairHash;

impl BuildHasher for PairHash {
    type Hasher = PairHasher;
    fn build_hasher(&self) -> PairHasher {
        PairHasher(0)
    }
}

struct PairHasher(u64);

impl Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn finish(&self) -> u64 {
        mix(self.0)
    }
}

/// Every pair but the deferred ones, into one array.
struct NotDeferred<'a> {
    deferred: &'a Deferred,
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
    deferred: Deferred,
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
fn heavy_looking(scans: &mut Scans<'_>, max: usize) -> anyhow::Result<Deferred> {
    let input = scans.input;
    let dir = input.scratch.join("pilot");
    crate::base::interrupt::check()?;
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
