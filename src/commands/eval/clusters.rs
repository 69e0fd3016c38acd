//! The cluster level: each side's near-replica groups (the connected
//! components of its groups and links, as the report and text-dedup's
//! union-find make them; for a `url,cluster` file, its clusters), compared
//! by the pairs of items they put together.
//!
//! From the contingency table n_ij (items in truth cluster i and run
//! cluster j), with a_i and b_j its row and column sums (Manning, Raghavan
//! & Schütze, *Introduction to Information Retrieval*, 16.3; Hubert &
//! Arabie 1985 for the adjusted Rand index):
//!
//! - pairs together in both: `TP = Σ_ij C(n_ij, 2)`;
//! - together in the truth: `Σ_i C(a_i, 2)`; in the run: `Σ_j C(b_j, 2)`;
//! - `ARI = (TP − E) / (½(Σ_i C(a_i,2) + Σ_j C(b_j,2)) − E)` with
//!   `E = Σ_i C(a_i,2) · Σ_j C(b_j,2) / C(n, 2)`.
//!
//! One pass over the items with hash maps of cluster sizes and cells: no
//! pair is listed, however large a cluster.

use rustc_hash::FxHashMap;

use super::count::choose2;
use super::side::{Link, NONE, Side};
use crate::store::analysis::union_find::UnionFind;

/// The pair counts of two clusterings of the same items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ClusterCounts {
    pub together_in_both: u64,
    pub together_in_truth: u64,
    pub together_in_run: u64,
    pub items: u64,
    /// Clusters of two items or more.
    pub truth_clusters: u64,
    pub run_clusters: u64,
}

impl ClusterCounts {
    /// The adjusted Rand index, `None` when it is 0/0 (both clusterings
    /// all singletons, or both one cluster).
    pub(super) fn ari(&self) -> Option<f64> {
        let pairs = choose2(self.items) as f64;
        let (t, r) = (self.together_in_truth as f64, self.together_in_run as f64);
        let expected = if pairs > 0.0 { t * r / pairs } else { 0.0 };
        let most = (t + r) / 2.0;
        (most != expected).then(|| (self.together_in_both as f64 - expected) / (most - expected))
    }
}

/// Counts the item pairs two clusterings put together: `labels` gives each
/// item's cluster on each side, `None` for an item in no cluster of that
/// side (a cluster of its own).
pub(super) fn pair_counts(labels: impl IntoIterator<Item = (Option<u32>, Option<u32>)>) -> ClusterCounts {
    let mut truth: FxHashMap<u32, u64> = FxHashMap::default();
    let mut run: FxHashMap<u32, u64> = FxHashMap::default();
    let mut cells: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    let mut items = 0u64;
    for (t, r) in labels {
        items += 1;
        if let Some(t) = t {
            *truth.entry(t).or_default() += 1;
        }
        if let Some(r) = r {
            *run.entry(r).or_default() += 1;
        }
        if let (Some(t), Some(r)) = (t, r) {
            *cells.entry((t, r)).or_default() += 1;
        }
    }
    let together = |sizes: &FxHashMap<u32, u64>| sizes.values().map(|&n| choose2(n)).sum::<u64>();
    let clusters = |sizes: &FxHashMap<u32, u64>| sizes.values().filter(|&&n| n > 1).count() as u64;
    ClusterCounts {
        together_in_both: cells.values().map(|&n| choose2(n)).sum(),
        together_in_truth: together(&truth),
        together_in_run: together(&run),
        items,
        truth_clusters: clusters(&truth),
        run_clusters: clusters(&run),
    }
}

/// Each item's cluster on `side`: the component of its group, through the
/// links `keep` keeps; `None` for an item the side does not have.
pub(super) fn labels(side: &Side, keep: impl Fn(&Link) -> bool) -> Vec<Option<u32>> {
    let mut uf = UnionFind::new(side.groups as usize);
    for l in side.links.iter().filter(|l| keep(l)) {
        uf.union(l.a, l.b);
    }
    side.group.iter().map(|&g| (g != NONE).then(|| uf.find(g))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items as (truth class, run cluster) labels.
    fn counts(labels: &[(u32, u32)]) -> ClusterCounts {
        pair_counts(labels.iter().map(|&(t, r)| (Some(t), Some(r))))
    }

    /// Manning, Raghavan & Schütze's example (Introduction to IR, figure
    /// 16.4 and its worked Rand index): 17 items in 3 clusters, cluster 1
    /// holding 5 x and 1 o, cluster 2 1 x, 4 o and 1 diamond, cluster 3
    /// 2 x and 3 diamonds. The book counts TP = 20, FP = 20, FN = 24,
    /// TN = 72, RI = 0.68.
    #[test]
    fn textbook_contingency() {
        let (x, o, d) = (0, 1, 2);
        let mut items = Vec::new();
        for (cluster, members) in
            [(0, [(x, 5), (o, 1), (d, 0)]), (1, [(x, 1), (o, 4), (d, 1)]), (2, [(x, 2), (o, 0), (d, 3)])]
        {
            for (class, n) in members {
                items.extend(std::iter::repeat_n((class, cluster), n));
            }
        }
        let c = counts(&items);
        let (tp, fp, fn_) = (
            c.together_in_both,
            c.together_in_run - c.together_in_both,
            c.together_in_truth - c.together_in_both,
        );
        assert_eq!((tp, fp, fn_), (20, 20, 24));
        let tn = choose2(17) - tp - fp - fn_;
        assert_eq!(tn, 72);
        assert_eq!(((tp + tn) as f64 / choose2(17) as f64 * 100.0).round(), 68.0);
        assert_eq!((c.truth_clusters, c.run_clusters, c.items), (3, 3, 17));
        // The ARI from the pair confusion matrix, as scikit-learn computes
        // it: 2 (TP·TN − FN·FP) / ((TP+FN)(FN+TN) + (TP+FP)(FP+TN)).
        let [tp, fp, fn_, tn] = [tp, fp, fn_, tn].map(|v| v as f64);
        let want = 2.0 * (tp * tn - fn_ * fp) / ((tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn));
        assert!((c.ari().unwrap() - want).abs() < 1e-12, "{:?} {want}", c.ari());
    }

    /// scikit-learn's `pair_confusion_matrix([0, 0, 1, 1], [1, 1, 0, 0])`
    /// is `[[8, 0], [0, 4]]`: it counts ordered pairs, so 4 ordered pairs
    /// together in both are 2 pairs here, and 8 apart in both are 4.
    #[test]
    fn scikit_learn_example_halved() {
        let c = counts(&[(0, 1), (0, 1), (1, 0), (1, 0)]);
        assert_eq!((c.together_in_both, c.together_in_truth, c.together_in_run), (2, 2, 2));
        assert_eq!(choose2(4) - 2, 4);
        assert_eq!(c.ari(), Some(1.0));
    }

    #[test]
    fn singletons_count_as_items_only() {
        // One truth pair, which the run splits; items absent from a side
        // are clusters of their own there.
        let c = pair_counts([(Some(0), Some(5)), (Some(0), None), (None, Some(7)), (None, None)]);
        assert_eq!((c.together_in_both, c.together_in_truth, c.together_in_run, c.items), (0, 1, 0, 4));
        assert_eq!((c.truth_clusters, c.run_clusters), (1, 0));
        // All singletons on both sides: the ARI is 0/0.
        assert_eq!(pair_counts([(None, None), (None, None)]).ari(), None);
    }

    #[test]
    fn components_follow_kept_links() {
        use super::super::side::Sim;
        let side = Side {
            group: vec![0, 0, 1, 2, NONE, 3],
            groups: 4,
            links: vec![
                Link { a: 0, b: 1, sim: Sim::Jaccard(900_000) },
                Link { a: 2, b: 3, sim: Sim::Jaccard(500_000) },
            ],
        };
        let all = labels(&side, |_| true);
        assert_eq!(all[0], all[2]);
        assert_eq!(all[3], all[5]);
        assert_ne!(all[0], all[3]);
        assert_eq!(all[4], None);
        let strong = labels(&side, |l| l.sim >= Sim::Jaccard(800_000));
        assert_eq!(strong[0], strong[2]);
        assert_ne!(strong[3], strong[5]);
    }
}
