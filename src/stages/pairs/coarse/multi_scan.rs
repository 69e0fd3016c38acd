//! MULTI-SCAN-SHARED: k scans, each with all the counters and its own hash
//! function; scan i counts only the pairs heavy in every earlier bitmap,
//! so its counters are left nearly to the true candidates. A candidate is
//! heavy in all k bitmaps.

use super::multi_hash::HeavyInAll;
use super::{Route, Scans, bucket};
use crate::stages::pairs::aggregate::PairFilter;

/// Scan `hash`: the pairs heavy in every earlier bitmap, into one array
/// under hash function `hash`.
struct HeavySoFar<'a> {
    earlier: &'a HeavyInAll,
    hash: u32,
}

impl Route for HeavySoFar<'_> {
    #[inline]
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize)) {
        if self.earlier.keep(pair) {
            add(0, bucket(pair, self.hash, self.earlier.m));
        }
    }
}

pub(super) fn select(scans: &mut Scans<'_>, k: u32) -> anyhow::Result<HeavyInAll> {
    let m = scans.m;
    let t = scans.input.threshold;
    let mut selection = HeavyInAll { bitmaps: Vec::new(), m };
    for hash in 0..k {
        let route = HeavySoFar { earlier: &selection, hash };
        let bitmaps = scans.scan(&format!("hash-{}", hash + 1), &[m], t, &route)?;
        scans.count_heavy(&bitmaps);
        selection.bitmaps.extend(bitmaps);
    }
    Ok(selection)
}
