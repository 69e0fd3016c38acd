//! The pilot sample of DEFER-COUNT and MULTI-STAGE: the pairs of one
//! fingerprint group in [`RATE`], chosen by fingerprint, so the sample is
//! the same on every run and every thread count. A target (a pair, or a
//! bucket) looks heavy when its count in the sample, scaled by the rate,
//! reaches T, and it was seen at least a minimum number of times.

use crate::stages::pairs::aggregate::PairFilter;

/// One group in this many is sampled. Fingerprints are xxh3 values, so
/// their low bits choose an unbiased sample. A sixteenth keeps the pilot
/// at a small fraction of a full scan.
pub(crate) const RATE: u64 = 16;

/// Whether the group of `fprint` is in the sample.
#[inline]
pub(crate) fn sampled(fprint: u64) -> bool {
    fprint.is_multiple_of(RATE)
}

/// The sampled count at which a target looks heavy: its scaled count
/// reaches `threshold`, and it was seen at least `min` times (one or two
/// sightings are what light targets produce by chance).
pub(crate) fn hits(threshold: u32, min: u32) -> u32 {
    threshold.div_ceil(RATE as u32).max(min)
}

/// The pairs of the sampled groups, for the pair aggregation.
pub(crate) struct SampledPairs;

impl PairFilter for SampledPairs {
    fn keep(&self, _pair: u64) -> bool {
        true
    }

    fn group(&self, fprint: u64) -> bool {
        sampled(fprint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_scale_with_the_threshold_and_keep_a_floor() {
        assert_eq!(hits(15, 4), 4);
        assert_eq!(hits(100, 4), 7);
        assert_eq!(hits(1, 2), 2);
        assert_eq!(hits(64, 2), 4);
    }

    #[test]
    fn the_sample_is_about_one_in_rate() {
        let n = 160_000u64;
        let picked =
            (0..n).map(|i| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())).filter(|&f| sampled(f)).count();
        let expect = (n / RATE) as usize;
        assert!(picked.abs_diff(expect) < expect / 10, "{picked} of {n}");
    }
}
