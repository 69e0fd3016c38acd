//! What makes a pair of documents a row of the Overlap table: the paper's
//! absolute count, F >= T, and optionally the similarity measures of the
//! set-similarity-join literature over the two documents' chunk sets.
//!
//! With A and B two documents' distinct chunk fingerprints (stop chunks of
//! their scope left out, as they are left out of F) and s = |A ∩ B| = F:
//!
//! - Jaccard: s / |A ∪ B| >= J;
//! - containment (the overlap coefficient, symmetric): s / min(|A|, |B|) >= C.
//!
//! J and C are read from their decimal text as whole ten-thousandths
//! (`0.29` is 2900, not the 2899.99... an `f64` times 10000 gives) and every
//! decision is taken in integers: s · 10000 >= Q · |A ∪ B|. The bounds below
//! are what prefix filtering needs: the least overlap a document can have
//! with a partner that passes, and which sizes can pass together. They are
//! derived from that integer rule; the real-valued forms are in Bayardo, Ma
//! & Srikant (WWW 2007) and Xiao et al. (PPJoin, WWW 2008).

use std::fmt;
use std::str::FromStr;

/// Whole ten-thousandths: 10000 is 1.
const D: u64 = 10_000;

/// A similarity threshold in (0, 1], in ten-thousandths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ratio(u16);

impl Ratio {
    /// The ratio of `n` ten-thousandths (1 to 10000).
    pub(crate) const fn from_ten_thousandths(n: u16) -> Ratio {
        assert!(n >= 1 && n as u64 <= D);
        Ratio(n)
    }

    /// Ten-thousandths.
    pub(crate) fn get(self) -> u64 {
        u64::from(self.0)
    }
}

impl FromStr for Ratio {
    type Err = String;
    /// `0.8`, `.75`, `1`, `1.0`, `0.1234`: at most four decimals, above 0,
    /// at most 1.
    fn from_str(s: &str) -> Result<Ratio, String> {
        let bad = || format!("'{s}' is not a number above 0 and at most 1 with at most 4 decimals");
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        if (whole.is_empty() && frac.is_empty())
            || frac.len() > 4
            || !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
        let mut ten_thousandths = 0u64;
        for (k, b) in frac.bytes().chain(std::iter::repeat(b'0')).take(4).enumerate() {
            ten_thousandths += u64::from(b - b'0') * 10u64.pow(3 - k as u32);
        }
        let value = whole.checked_mul(D).and_then(|w| w.checked_add(ten_thousandths)).ok_or_else(bad)?;
        if value == 0 || value > D {
            return Err(bad());
        }
        Ok(Ratio(value as u16))
    }
}

impl fmt::Display for Ratio {
    /// The shortest decimal that reads back as the same ratio.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if u64::from(self.0) == D {
            return f.write_str("1");
        }
        let digits = format!("{:04}", self.0);
        write!(f, "0.{}", digits.trim_end_matches('0'))
    }
}

/// The rule a pair must pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Criterion {
    /// T: the least number of shared chunks, always applied.
    pub threshold: u32,
    pub jaccard: Option<Ratio>,
    pub containment: Option<Ratio>,
}

/// |A ∪ B| of sets of sizes `a` and `b` sharing `s`.
fn union(s: u64, a: u64, b: u64) -> u64 {
    (a + b).saturating_sub(s)
}

/// `ceil(a / b)` for b > 0.
fn div_ceil(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

impl Criterion {
    /// F >= T alone.
    pub fn count(threshold: u32) -> Criterion {
        Criterion { threshold, jaccard: None, containment: None }
    }

    /// Whether the rule needs the documents' set sizes (a similarity
    /// measure), not only F.
    pub(crate) fn needs_sizes(&self) -> bool {
        self.jaccard.is_some() || self.containment.is_some()
    }

    /// Whether a pair of documents with set sizes `a` and `b` sharing `s`
    /// chunks passes.
    pub(crate) fn passes(&self, s: u32, a: u32, b: u32) -> bool {
        let (s, a, b) = (u64::from(s), u64::from(a), u64::from(b));
        s >= u64::from(self.threshold)
            && self.jaccard.is_none_or(|q| s * D >= q.get() * union(s, a, b))
            && self.containment.is_none_or(|q| s * D >= q.get() * a.min(b))
    }

    /// The least overlap a document of size `a` needs with any partner to
    /// pass: T, and Jaccard's ceil(Q·a / D) (since |A ∪ B| >= |A|).
    /// Containment alone asks no more than T of the larger document of a
    /// pair, whose partner may be as small as one chunk.
    pub(crate) fn least_overlap(&self, a: u32) -> u32 {
        let jaccard = self.jaccard.map_or(0, |q| div_ceil(q.get() * u64::from(a), D));
        (jaccard as u32).max(self.threshold)
    }

    /// The least overlap a document of size `a` needs with a partner at
    /// least as large: for Jaccard, ceil(2Q·a / (D + Q)) (the overlap two
    /// sets of size a need, which grows with the partner's size); for
    /// containment, ceil(Q·a / D) (the smaller set decides).
    pub(crate) fn least_overlap_as_smaller(&self, a: u32) -> u32 {
        let a = u64::from(a);
        let jaccard = self.jaccard.map_or(0, |q| div_ceil(2 * q.get() * a, D + q.get()));
        let containment = self.containment.map_or(0, |q| div_ceil(q.get() * a, D));
        (jaccard.max(containment) as u32).max(self.threshold)
    }

    /// Whether sets of sizes `smaller` <= `larger` can pass together at
    /// all: Jaccard needs |A ∩ B| / |A ∪ B| <= smaller / larger to reach Q.
    pub(crate) fn sizes_can_pass(&self, smaller: u32, larger: u32) -> bool {
        self.jaccard.is_none_or(|q| u64::from(smaller) * D >= q.get() * u64::from(larger))
    }

    /// The similarity columns of overlap.csv, in millionths, rounded half
    /// up: Jaccard, then containment, each when asked for.
    pub(crate) fn measures(&self, s: u32, a: u32, b: u32) -> Measures {
        let (s, a, b) = (u64::from(s), u64::from(a), u64::from(b));
        let ratio = |num: u64, den: u64| ((2 * num * 1_000_000 + den) / (2 * den.max(1))) as u32;
        Measures {
            jaccard: self.jaccard.map(|_| ratio(s, union(s, a, b))),
            containment: self.containment.map(|_| ratio(s, a.min(b))),
        }
    }

    /// The criterion as report and stats state it: `F >= 15`, or
    /// `Jaccard >= 0.8 and F >= 1`.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(j) = self.jaccard {
            parts.push(format!("Jaccard >= {j}"));
        }
        if let Some(c) = self.containment {
            parts.push(format!("containment >= {c}"));
        }
        parts.push(format!("F >= {}", self.threshold));
        parts.join(" and ")
    }
}

/// A row's similarity values, in millionths, when the criterion has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measures {
    pub jaccard: Option<u32>,
    pub containment: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(s: &str) -> Ratio {
        s.parse().unwrap()
    }

    #[test]
    fn ratios_read_as_whole_ten_thousandths() {
        for (text, want) in
            [("0.8", 8000), (".75", 7500), ("1", 10000), ("1.0000", 10000), ("0.29", 2900), ("0.0001", 1)]
        {
            assert_eq!(ratio(text).get(), want, "{text}");
        }
        for bad in ["0", "0.0", "1.0001", "2", "0.12345", "", ".", "-0.5", "0,8", "1e-1", " 0.8", "NaN"] {
            assert!(bad.parse::<Ratio>().is_err(), "{bad:?}");
        }
        for text in ["0.8", "0.29", "0.0001", "1", "0.125"] {
            assert_eq!(ratio(text).to_string(), text);
        }
    }

    /// Every bound holds for every pair that passes, over all small sizes:
    /// what makes prefix filtering exact.
    #[test]
    fn bounds_hold_for_every_pair_that_passes() {
        let criteria = [
            Criterion { threshold: 1, jaccard: Some(ratio("0.8")), containment: None },
            Criterion { threshold: 1, jaccard: Some(ratio("0.5")), containment: None },
            Criterion { threshold: 3, jaccard: Some(ratio("0.29")), containment: None },
            Criterion { threshold: 1, jaccard: Some(ratio("1")), containment: None },
            Criterion { threshold: 1, jaccard: None, containment: Some(ratio("0.9")) },
            Criterion { threshold: 2, jaccard: None, containment: Some(ratio("0.3333")) },
            Criterion { threshold: 1, jaccard: Some(ratio("0.6")), containment: Some(ratio("0.95")) },
            Criterion::count(4),
        ];
        for c in criteria {
            let mut passing = 0;
            for a in 1..=60u32 {
                for b in a..=60u32 {
                    for s in 0..=a {
                        if !c.passes(s, a, b) {
                            continue;
                        }
                        passing += 1;
                        assert!(s >= c.least_overlap(a) && s >= c.least_overlap(b), "{c:?} {s} {a} {b}");
                        assert!(s >= c.least_overlap_as_smaller(a), "{c:?} {s} {a} {b}");
                        assert!(c.sizes_can_pass(a, b), "{c:?} {s} {a} {b}");
                    }
                }
            }
            assert!(passing > 0, "{c:?}");
        }
    }

    #[test]
    fn decisions_are_exact_at_the_threshold() {
        let j = Criterion { threshold: 1, jaccard: Some(ratio("0.8")), containment: None };
        // 8 of 10: exactly 0.8.
        assert!(j.passes(8, 9, 9));
        assert!(!j.passes(7, 9, 8));
        let c = Criterion { threshold: 1, jaccard: None, containment: Some(ratio("0.29")) };
        // 29 of 100 is 0.29 exactly, which f64 arithmetic puts below.
        assert!(c.passes(29, 100, 500));
        assert!(!c.passes(28, 100, 500));
        assert_eq!(j.measures(8, 9, 9).jaccard, Some(800_000));
        assert_eq!(j.measures(2, 3, 2).jaccard, Some(666_667));
        assert_eq!(j.measures(1, 3, 6).jaccard, Some(125_000));
        assert_eq!(c.measures(1, 3, 6), Measures { jaccard: None, containment: Some(333_333) });
        assert_eq!(j.describe(), "Jaccard >= 0.8 and F >= 1");
        assert_eq!(Criterion::count(15).describe(), "F >= 15");
    }
}
