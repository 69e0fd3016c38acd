//! The replica histogram (the paper's Figure 1): for each non-empty
//! document, how many replicas it has counting itself, binned.

use serde::{Deserialize, Serialize};

/// Bin labels, in order.
pub const BINS: [&str; 7] = ["1", "2", "3", "4-10", "11-100", "101-1000", ">1000"];

/// The bin of a replica count (at least 1).
pub fn bin(replicas: u32) -> usize {
    match replicas {
        0 | 1 => 0,
        2 => 1,
        3 => 2,
        4..=10 => 3,
        11..=100 => 4,
        101..=1000 => 5,
        _ => 6,
    }
}

/// Documents per bin, and the same as percentages of the documents
/// counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub documents: [u64; 7],
    pub percent: [f64; 7],
}

impl Histogram {
    pub fn add(&mut self, replicas: u32) {
        self.documents[bin(replicas)] += 1;
    }

    /// Fills `percent` from the counts.
    pub fn finish(&mut self) {
        let total: u64 = self.documents.iter().sum();
        for (p, &n) in self.percent.iter_mut().zip(&self.documents) {
            *p = percent(n, total);
        }
    }

    /// Documents with at least one replica besides themselves, in percent.
    pub fn replicated_percent(&self) -> f64 {
        let total: u64 = self.documents.iter().sum();
        percent(total - self.documents[0], total)
    }
}

pub(crate) use crate::store::analysis::percent;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_follow_figure_1() {
        let edges =
            [(1, 0), (2, 1), (3, 2), (4, 3), (10, 3), (11, 4), (100, 4), (101, 5), (1000, 5), (1001, 6)];
        for (n, b) in edges {
            assert_eq!(bin(n), b, "{n} replicas");
        }
    }

    #[test]
    fn percentages() {
        let mut h = Histogram::default();
        for n in [1, 1, 1, 2, 2, 5] {
            h.add(n);
        }
        h.finish();
        assert_eq!(h.documents, [3, 2, 0, 1, 0, 0, 0]);
        assert_eq!(h.percent[0], 50.0);
        assert_eq!(h.percent[1], 33.3333);
        assert_eq!(h.replicated_percent(), 50.0);
        assert_eq!(percent(1, 0), 0.0);
    }
}
