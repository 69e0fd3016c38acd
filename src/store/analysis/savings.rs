//! Crawl savings (the paper's section 3): what a recrawl need not fetch.
//!
//! - Exact: one copy of each exact group is kept (its center); every other
//!   member is skipped.
//! - Near: pages are taken in docID order; a page is skipped when it is an
//!   exact copy of a kept page or when a kept page shares at least T chunk
//!   fingerprints with it (its center and the kept page's center are an
//!   Overlap-table pair); otherwise it is kept. Kept pages are therefore
//!   always centers, and since overlap.csv is sorted by (i, j), every link
//!   (k, c) with k < c has been read by the time center c is decided: one
//!   streaming pass and one bit per document.
//!
//! Empty documents are never skipped: there is nothing to compare them by.

use serde::{Deserialize, Serialize};

use super::documents::{Docs, EMPTY};
use super::percent;

/// The rule, as report.json and report.html state it.
pub const RULE: &str = "Exact: keep the smallest docID of each exact group, skip the other copies. \
Near-replicas too: take pages in docID order; skip a page when it is an exact copy of a kept page or \
when a kept page is its near-replica (they are an Overlap-table pair: at least T shared chunk fingerprints, and \
the similarity the run asked for with --jaccard or --containment); keep it otherwise. Empty documents are \
always kept.";

/// Pages and bytes a recrawl could skip.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skippable {
    pub pages: u64,
    pub pages_percent: f64,
    pub bytes: u64,
    pub bytes_percent: f64,
}

/// The greedy near-replica pass, fed the Overlap table in (i, j) order,
/// with a list per document: the reference the link pass's verdicts are
/// tested against ([`super::links`] holds a bit per linked center).
#[cfg(test)]
pub struct Greedy {
    /// Centers that a kept page links to.
    covered: Vec<bool>,
    kept: Vec<bool>,
    /// Centers below this have been decided.
    next: u32,
}

#[cfg(test)]
impl Greedy {
    pub fn new(docs: &Docs) -> Greedy {
        Greedy { covered: vec![false; docs.len()], kept: vec![false; docs.len()], next: 0 }
    }

    /// Decides every center below `upto`.
    fn decide_until(&mut self, docs: &Docs, upto: u32) {
        while self.next < upto {
            let d = self.next;
            if docs.is_center(d) && !self.covered[d as usize] {
                self.kept[d as usize] = true;
            }
            self.next += 1;
        }
    }

    /// One Overlap-table row, in (i, j) order.
    pub fn pair(&mut self, docs: &Docs, i: u32, j: u32) {
        self.decide_until(docs, i + 1);
        if self.kept[i as usize] {
            self.covered[j as usize] = true;
        }
    }

    /// Decides the rest; returns whether each document is kept.
    pub fn finish(mut self, docs: &Docs) -> Vec<bool> {
        self.decide_until(docs, docs.len() as u32);
        for d in 0..docs.len() {
            if docs.center(d as u32) == EMPTY {
                self.kept[d] = true;
            }
        }
        self.kept
    }
}

/// Pages and bytes, and those not kept, counted a row at a time as the
/// report reads docs.csv: it holds no payload sizes per document.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pages: u64,
    bytes: u64,
    skipped_pages: u64,
    skipped_bytes: u64,
}

impl Tally {
    /// A row of `bytes` payload bytes, kept or not.
    pub fn add(&mut self, bytes: u64, kept: bool) {
        self.pages += 1;
        self.bytes += bytes;
        if !kept {
            self.skipped_pages += 1;
            self.skipped_bytes += bytes;
        }
    }

    /// Payload bytes of every row counted.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The pages and bytes not kept.
    pub fn skippable(&self) -> Skippable {
        Skippable {
            pages: self.skipped_pages,
            pages_percent: percent(self.skipped_pages, self.pages),
            bytes: self.skipped_bytes,
            bytes_percent: percent(self.skipped_bytes, self.bytes),
        }
    }
}

/// Whether keeping one copy of each exact group keeps `d`: its center, and
/// every empty document.
pub fn exact_kept(docs: &Docs, d: u32) -> bool {
    docs.center(d) == EMPTY || docs.is_center(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::analysis::documents::Centers;

    fn docs(center: Vec<u32>) -> Docs {
        let n = center.len();
        Docs {
            centers: Centers::from_rows(&center),
            host: vec![0; n].into(),
            hosts: vec![""].into(),
            ..Docs::default()
        }
    }

    #[test]
    fn greedy_keeps_in_doc_order() {
        // 0~1, 1~2, 2~3: 0 kept, 1 skipped (linked to 0), 2 kept (1 is
        // not kept), 3 skipped; 4 is an exact copy of 2; 5 is empty.
        let d = docs(vec![0, 1, 2, 3, 2, EMPTY]);
        let mut g = Greedy::new(&d);
        for (i, j) in [(0, 1), (1, 2), (2, 3)] {
            g.pair(&d, i, j);
        }
        let kept = g.finish(&d);
        assert_eq!(kept, vec![true, false, true, false, false, true]);
        let (mut near, mut exact) = (Tally::default(), Tally::default());
        for x in 0..6 {
            near.add(10, kept[x as usize]);
            exact.add(10, exact_kept(&d, x));
        }
        let s = near.skippable();
        assert_eq!((s.pages, s.bytes), (3, 30));
        assert_eq!((s.pages_percent, s.bytes_percent), (50.0, 50.0));
        assert_eq!((exact.skippable().pages, exact.bytes()), (1, 60));
    }

    #[test]
    fn a_skipped_center_covers_nothing() {
        // 0~1 and 1~2 but not 0~2: 2 is kept although linked to 1.
        let d = docs(vec![0, 1, 2]);
        let mut g = Greedy::new(&d);
        g.pair(&d, 0, 1);
        g.pair(&d, 1, 2);
        assert_eq!(g.finish(&d), vec![true, false, true]);
    }
}
