//! COARSE-COUNT and MULTI-HASH: one hashing scan into k arrays, array a
//! under hash function a; a pair is a candidate only if its bucket is heavy
//! in every array (the AND of k bitmaps, the counting-Bloom principle).
//! k = 1 is COARSE-COUNT.

use super::{Bitmap, Route, Scans, Selection, bucket};
use crate::stages::pairs::aggregate::PairFilter;

/// Every pair, into every array.
struct EveryArray {
    k: u32,
    m: u64,
}

impl Route for EveryArray {
    #[inline]
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize)) {
        for a in 0..self.k {
            add(a as usize, bucket(pair, a, self.m));
        }
    }
}

/// Pairs heavy in every bitmap, bitmap a under hash function a.
pub(super) struct HeavyInAll {
    pub bitmaps: Vec<Bitmap>,
    pub m: u64,
}

impl PairFilter for HeavyInAll {
    fn prefetch(&self, pair: u64) {
        for (a, bits) in self.bitmaps.iter().enumerate() {
            bits.prefetch(bucket(pair, a as u32, self.m));
        }
    }

    fn keep(&self, pair: u64) -> bool {
        self.bitmaps.iter().enumerate().all(|(a, bits)| bits.get(bucket(pair, a as u32, self.m)))
    }
}

impl Selection for HeavyInAll {
    fn hash_functions(&self) -> u32 {
        self.bitmaps.len() as u32
    }
}

pub(super) fn select(scans: &mut Scans<'_>, k: u32) -> anyhow::Result<HeavyInAll> {
    let m = scans.m;
    let t = scans.input.threshold;
    let bitmaps = scans.scan("hash-1", &vec![m; k as usize], t, &EveryArray { k, m })?;
    scans.count_heavy(&bitmaps);
    Ok(HeavyInAll { bitmaps, m })
}
