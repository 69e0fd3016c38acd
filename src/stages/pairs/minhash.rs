//! MinHash-LSH (Broder, 1997; banding as in Leskovec, Rajaraman & Ullman,
//! *Mining of Massive Datasets*, ch. 3) as a candidate generator for
//! [`super::lsh`].
//!
//! Signature: one-permutation hashing (Li, Owen & Zhang, NIPS 2012) into
//! [`BINS`] bins, with optimal densification (Shrivastava, ICML 2017) for
//! the bins a small set leaves empty. Each chunk fingerprint is hashed
//! once: its top 7 bits choose a bin, the low 32 bits are its value, and a
//! bin keeps the least value. Two sets agree in a bin with probability
//! their Jaccard similarity J, as with 128 independent hash functions, at
//! the cost of one hash per chunk instead of 128 (datatrove and text-dedup
//! hash every shingle once per permutation).
//!
//! Banding: B bands of R rows (B·R <= 128). A pair becomes a candidate when
//! its signatures agree in every row of at least one band, with
//! probability P(J) = 1 - (1 - J^R)^B. Without `minhash:BxR`, R is the
//! largest number of rows for which B = floor(128 / R) bands still give
//! P >= 0.95 at the `--jaccard` threshold: the steepest curve (fewest
//! candidates below the threshold) that keeps 95% of the pairs at it, and
//! more above it. At J = 0.8 that is 18 bands of 7 rows (P = 0.986), at
//! 0.9 10 of 12 (0.964), at 0.5 42 of 3 (0.996).

use super::Ratio;
use super::lsh::{Scheme, mix};
use crate::store::stats::LshStats;

/// Bins of a signature.
pub(crate) const BINS: usize = 128;

/// The least probability of becoming a candidate at the threshold that
/// default bands give.
pub(crate) const TARGET: f64 = 0.95;

/// An empty bin's marker: values are clamped below it.
const EMPTY: u32 = u32::MAX;

/// Bands of rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bands {
    pub bands: u32,
    pub rows: u32,
}

impl Bands {
    /// The probability that a pair with Jaccard similarity `j` shares a
    /// band.
    pub(crate) fn probability(&self, j: f64) -> f64 {
        1.0 - (1.0 - j.powi(self.rows as i32)).powi(self.bands as i32)
    }

    /// The default bands for a Jaccard threshold (see the module
    /// documentation); when no banding reaches [`TARGET`] (thresholds near
    /// 0), the one with the highest probability, which is 128 bands of 1.
    pub(crate) fn for_threshold(j: Ratio) -> Bands {
        let j = j.get() as f64 / 10_000.0;
        (1..=BINS as u32)
            .rev()
            .map(|rows| Bands { bands: BINS as u32 / rows, rows })
            .find(|b| b.probability(j) >= TARGET)
            .unwrap_or(Bands { bands: BINS as u32, rows: 1 })
    }
}

impl std::str::FromStr for Bands {
    type Err = String;
    fn from_str(s: &str) -> Result<Bands, String> {
        let bad = || format!("'{s}' is not BxR: B bands of R rows, whole numbers with B·R at most {BINS}");
        let (b, r) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let (bands, rows) = (b.parse::<u32>().map_err(|_| bad())?, r.parse::<u32>().map_err(|_| bad())?);
        if bands == 0 || rows == 0 || u64::from(bands) * u64::from(rows) > BINS as u64 {
            return Err(bad());
        }
        Ok(Bands { bands, rows })
    }
}

pub(crate) struct MinHash {
    pub bands: Bands,
    /// The Jaccard threshold, for stats.json's probability.
    pub threshold: Option<Ratio>,
}

impl Scheme for MinHash {
    const WORDS: usize = BINS;
    const FILTERS: bool = false;

    fn clear(&self, state: &mut [u32]) {
        state.fill(EMPTY);
    }

    #[inline]
    fn add(&self, state: &mut [u32], fprint: u64) {
        let h = mix(fprint);
        let bin = (h >> 57) as usize;
        let value = (h as u32).min(EMPTY - 1);
        if value < state[bin] {
            state[bin] = value;
        }
    }

    fn keys(&self, state: &mut [u32], keys: &mut Vec<u64>) -> u64 {
        densify(state);
        let rows = self.bands.rows as usize;
        for band in 0..self.bands.bands as usize {
            let mut bytes = [0u8; 4 * BINS];
            let values = &state[band * rows..(band + 1) * rows];
            for (k, v) in values.iter().enumerate() {
                bytes[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
            }
            keys.push(xxhash_rust::xxh3::xxh3_64_with_seed(&bytes[..4 * rows], band as u64));
        }
        0
    }

    fn near(&self, _: u64, _: u64) -> bool {
        true
    }

    fn stats(&self) -> LshStats {
        LshStats {
            scheme: "minhash".into(),
            bands: Some(self.bands.bands),
            rows: Some(self.bands.rows),
            probability_at_threshold: self
                .threshold
                .map(|j| self.bands.probability(j.get() as f64 / 10_000.0)),
            ..LshStats::default()
        }
    }
}

/// Optimal densification: an empty bin takes the value of the first
/// non-empty bin a fixed sequence of random probes from it finds, the
/// sequence depending only on the bin and the attempt, so two documents
/// fill the same empty bin from the same place and agree in it with
/// probability J again. A set with no chunk stays all empty (it is never
/// signed: see [`super::lsh`]).
fn densify(state: &mut [u32]) {
    if state.iter().all(|&v| v == EMPTY) || state.iter().all(|&v| v != EMPTY) {
        return;
    }
    let original: Vec<u32> = state.to_vec();
    for (bin, value) in state.iter_mut().enumerate() {
        if *value != EMPTY {
            continue;
        }
        for attempt in 1u64.. {
            let probe = (mix(((bin as u64) << 32) | attempt) % BINS as u64) as usize;
            if original[probe] != EMPTY {
                *value = original[probe];
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(s: &str) -> Ratio {
        s.parse().unwrap()
    }

    #[test]
    fn default_bands_are_the_steepest_that_reach_the_target() {
        assert_eq!(Bands::for_threshold(ratio("0.8")), Bands { bands: 18, rows: 7 });
        assert_eq!(Bands::for_threshold(ratio("0.9")), Bands { bands: 10, rows: 12 });
        assert_eq!(Bands::for_threshold(ratio("0.5")), Bands { bands: 42, rows: 3 });
        assert_eq!(Bands::for_threshold(ratio("0.0001")), Bands { bands: 128, rows: 1 });
        for j in 1..=100u32 {
            let threshold = ratio(&format!("{}", f64::from(j) / 100.0));
            let b = Bands::for_threshold(threshold);
            let p = b.probability(f64::from(j) / 100.0);
            assert!(b.bands * b.rows <= BINS as u32);
            if b.rows > 1 {
                assert!(p >= TARGET, "{b:?} at {j}%: {p}");
                // One more row would fall below the target.
                let steeper = Bands { bands: BINS as u32 / (b.rows + 1), rows: b.rows + 1 };
                assert!(steeper.probability(f64::from(j) / 100.0) < TARGET, "{steeper:?} at {j}%");
            }
        }
    }

    #[test]
    fn bands_parse_and_refuse() {
        assert_eq!("18x7".parse::<Bands>(), Ok(Bands { bands: 18, rows: 7 }));
        assert_eq!("128x1".parse::<Bands>(), Ok(Bands { bands: 128, rows: 1 }));
        for bad in ["", "18", "0x7", "7x0", "20x7", "x", "18x7x1", "-1x3", "a x b"] {
            assert!(bad.parse::<Bands>().is_err(), "{bad}");
        }
    }

    /// The signature of a set of fingerprints, densified.
    fn signature(set: impl Iterator<Item = u64>) -> Vec<u32> {
        let m = MinHash { bands: Bands { bands: 16, rows: 8 }, threshold: None };
        let mut state = vec![0u32; BINS];
        m.clear(&mut state);
        for f in set {
            m.add(&mut state, f);
        }
        densify(&mut state);
        state
    }

    #[test]
    fn bins_agree_about_as_often_as_the_sets_are_similar() {
        // Sets of 40 to 4000 chunks (small ones leave most bins empty and
        // are densified) at Jaccard 0.2 to 0.9: the fraction of agreeing
        // bins, averaged over 40 pairs, is within 0.05 of J.
        for &size in &[40u64, 400, 4000] {
            for &j in &[0.2f64, 0.5, 0.8, 0.9] {
                // |A ∩ B| = s, |A| = |B| = size, J = s / (2 size - s).
                let shared = (2.0 * j * size as f64 / (1.0 + j)).round() as u64;
                let mut agree = 0usize;
                for pair in 0..40u64 {
                    let base = pair << 40;
                    let a = signature((0..size).map(|x| mix(base + x)));
                    let b = signature((0..shared).chain(size..2 * size - shared).map(|x| mix(base + x)));
                    agree += a.iter().zip(&b).filter(|(x, y)| x == y).count();
                }
                let observed = agree as f64 / (40 * BINS) as f64;
                let exact = shared as f64 / (2 * size - shared) as f64;
                assert!((observed - exact).abs() < 0.05, "size {size}, J {exact}: {observed}");
            }
        }
    }

    #[test]
    fn densified_signatures_have_no_empty_bin() {
        for size in [1u64, 2, 5, 127, 128, 1000] {
            let s = signature((0..size).map(|x| x * 7919));
            assert!(s.iter().all(|&v| v != EMPTY), "{size}");
        }
    }
}
