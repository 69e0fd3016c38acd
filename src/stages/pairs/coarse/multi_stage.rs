//! MULTI-STAGE: a pilot hashes a sample of the pairs into the first-level
//! array and marks the buckets whose scaled count reaches T. In the main
//! scan a pair whose first-level bucket is marked is counted in a common
//! pool of second-level counters under a second hash instead; other pairs
//! are counted in the first level. The heavy traffic of the marked buckets
//! is spread over the pool, so light pairs that share a first-level bucket
//! with a heavy pair are no longer candidates for that alone, and unlike
//! MULTI-LEVEL no memory is stranded in a marked bucket that turns out
//! light: all marked buckets share one pool.
//!
//! Every increment of a pair goes to one counter (its first-level bucket,
//! or its pool counter when that bucket is marked), and the selection reads
//! that same counter, so a pair with F >= T is always a candidate.

use super::{Bitmap, Route, Scans, Selection, bucket, pilot};
use crate::stages::pairs::aggregate::PairFilter;
use crate::store::stats::CoarseStats;

/// The pool gets one counter in this many; the first level the rest.
const POOL_SHARE: u64 = 4;

/// Sampled increments a bucket needs to be marked: a bucket's load is the
/// sum of many pairs', so two sightings already mean a load of about
/// 2 x the sample rate.
const MIN_HITS: u32 = 2;

/// The sampled pairs, into the first level.
struct Sample {
    m1: u64,
}

impl Route for Sample {
    fn group(&self, fprint: u64) -> bool {
        pilot::sampled(fprint)
    }

    #[inline]
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize)) {
        add(0, bucket(pair, 0, self.m1));
    }
}

/// Where the two levels put a pair: array 0 is the first level (hash 0),
/// array 1 the pool (hash 1).
struct Levels {
    marked: Bitmap,
    m1: u64,
    m2: u64,
}

impl Levels {
    /// The array and bucket of `pair`, given its first-level bucket.
    #[inline]
    fn counter(&self, pair: u64, first: usize) -> (usize, usize) {
        if self.marked.get(first) { (1, bucket(pair, 1, self.m2)) } else { (0, first) }
    }
}

impl Route for Levels {
    #[inline]
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize)) {
        let (array, b) = self.counter(pair, bucket(pair, 0, self.m1));
        add(array, b);
    }
}

/// Pairs whose counter, at the level the pair was counted in, is heavy.
pub(super) struct HeavyAtItsLevel {
    levels: Levels,
    heavy: [Bitmap; 2],
}

impl PairFilter for HeavyAtItsLevel {
    fn prefetch(&self, pair: u64) {
        let first = bucket(pair, 0, self.levels.m1);
        self.levels.marked.prefetch(first);
        self.heavy[0].prefetch(first);
    }

    fn keep(&self, pair: u64) -> bool {
        let (array, b) = self.levels.counter(pair, bucket(pair, 0, self.levels.m1));
        self.heavy[array].get(b)
    }
}

impl Selection for HeavyAtItsLevel {
    fn hash_functions(&self) -> u32 {
        2
    }

    fn report(&self, stats: &mut CoarseStats) {
        stats.marked_buckets = Some(self.levels.marked.ones());
        stats.pool_counters = Some(self.levels.m2);
    }
}

pub(super) fn select(scans: &mut Scans<'_>) -> anyhow::Result<HeavyAtItsLevel> {
    let m2 = (scans.m / POOL_SHARE).max(1);
    let m1 = (scans.m - m2).max(1);
    let t = scans.input.threshold;
    let marked = scans.scan("pilot", &[m1], pilot::hits(t, MIN_HITS), &Sample { m1 })?;
    let levels = Levels { marked: marked.into_iter().next().expect("one array"), m1, m2 };
    let heavy = scans.scan("hash-1", &[m1, m2], t, &levels)?;
    scans.count_heavy(&heavy);
    let heavy: [Bitmap; 2] = heavy.try_into().map_err(|_| anyhow::anyhow!("two arrays expected"))?;
    Ok(HeavyAtItsLevel { levels, heavy })
}
