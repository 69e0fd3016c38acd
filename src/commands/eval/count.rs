//! The pair-level counts: how many of the truth's item pairs the run has,
//! per truth group and per truth link, without listing a pair.
//!
//! Every item has a truth group c and a run group k; `n(c, k)` counts the
//! items with both. A truth group's pairs are its members' pairs, C(g, 2)
//! of them; a truth link (c, d) stands for g_c · g_d pairs. Of those, the
//! run has
//!
//! - in one run group k: `Σ_k C(n(c,k), 2)` within c, and
//!   `Σ_k n(c,k) · n(d,k)` across (c, d), summed over the smaller of the
//!   two groups' lists of run groups;
//! - across a run link (k, l): `n(c,k) · n(d,l)` for every truth group c
//!   among k's items and d among l's (d = c: within c).
//!
//! The work is the items, the truth links times the smaller list of run
//! groups of their two ends, and the run links times the truth groups of
//! their ends' items: one each when the two sides' exact groups agree (the
//! same crawl analysed twice, or a run that is a pair list), and never the
//! pairs a group or a cluster holds. Memory: 16 bytes per (truth group,
//! run group) cell twice over, plus its hash map, and a count per truth
//! group and link.

use rustc_hash::FxHashMap;

use super::side::{NONE, Side, Sim};

/// The pairs of `n` items.
pub(super) fn choose2(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// Truth pairs, and how many of them the run has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Found {
    pub truth: u64,
    pub found: u64,
}

impl Found {
    fn add(&mut self, truth: u64, found: u64) {
        self.truth += truth;
        self.found += found;
    }
}

/// The Jaccard bins [0.5, 0.6) ... [0.8, 0.9), [0.9, 1.0].
pub(super) const BINS: usize = 5;

/// What the pair level is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PairCounts {
    /// The run's item pairs.
    pub run: u64,
    /// The truth's pairs measured against (the target), and how many the
    /// run has: the true positives.
    pub target: Found,
    /// The truth's pairs outside the target (below `--min-jaccard`): the
    /// run's pairs among them are near misses.
    pub below: Found,
    /// Exact copies (J = 1 by their text), kept out of the bins.
    pub exact: Found,
    /// The other truth pairs by Jaccard bin.
    pub bins: [Found; BINS],
}

/// Counts the run's pairs against the truth's; `target` says which truth
/// links' pairs are measured against (exact copies always are).
pub(super) fn count(truth: &Side, run: &Side, target: impl Fn(Sim) -> bool) -> PairCounts {
    let items = truth.group.len();
    debug_assert_eq!(items, run.group.len());
    let (t_size, r_size) = (truth.sizes(), run.sizes());
    let mut joint: FxHashMap<u64, u64> = FxHashMap::default();
    for (&c, &k) in truth.group.iter().zip(&run.group) {
        if c != NONE && k != NONE {
            *joint.entry(key(c, k)).or_default() += 1;
        }
    }
    let cells: Vec<(u32, u32, u64)> =
        joint.iter().map(|(&ck, &n)| ((ck >> 32) as u32, ck as u32, n)).collect();
    let by_truth = Lists::new(truth.groups, cells.iter().map(|&(c, k, n)| (c, k, n)));
    let by_run = Lists::new(run.groups, cells.iter().map(|&(c, k, n)| (k, c, n)));
    let mut in_group = vec![0u64; truth.groups as usize];
    let mut in_link = vec![0u64; truth.links.len()];
    // Pairs in one run group.
    for &(c, _, n) in &cells {
        in_group[c as usize] += choose2(n);
    }
    for (found, l) in in_link.iter_mut().zip(&truth.links) {
        let (small, other) =
            if by_truth.of(l.a).len() <= by_truth.of(l.b).len() { (l.a, l.b) } else { (l.b, l.a) };
        for &(k, n) in by_truth.of(small) {
            *found += n * joint.get(&key(other, k)).copied().unwrap_or(0);
        }
    }
    // Pairs across a run link.
    let mut truth_link: FxHashMap<u64, u32> = FxHashMap::default();
    truth_link.reserve(truth.links.len());
    for (i, l) in truth.links.iter().enumerate() {
        truth_link.insert(key(l.a.min(l.b), l.a.max(l.b)), i as u32);
    }
    let mut run_pairs: u64 = r_size.iter().map(|&s| choose2(s)).sum();
    for l in &run.links {
        run_pairs += r_size[l.a as usize] * r_size[l.b as usize];
        for &(c, n) in by_run.of(l.a) {
            for &(d, m) in by_run.of(l.b) {
                if c == d {
                    in_group[c as usize] += n * m;
                } else if let Some(&i) = truth_link.get(&key(c.min(d), c.max(d))) {
                    in_link[i as usize] += n * m;
                }
            }
        }
    }
    let mut counts = PairCounts { run: run_pairs, ..PairCounts::default() };
    for (c, &found) in in_group.iter().enumerate() {
        counts.target.add(choose2(t_size[c]), found);
        counts.exact.add(choose2(t_size[c]), found);
    }
    for (l, &found) in truth.links.iter().zip(&in_link) {
        let pairs = t_size[l.a as usize] * t_size[l.b as usize];
        if target(l.sim) {
            counts.target.add(pairs, found);
        } else {
            counts.below.add(pairs, found);
        }
        match l.sim {
            Sim::Exact => counts.exact.add(pairs, found),
            Sim::Jaccard(j) => {
                if let Some(bin) = bin(j) {
                    counts.bins[bin].add(pairs, found);
                }
            }
            Sim::Unmeasured => {}
        }
    }
    counts
}

/// The bin of a Jaccard similarity in millionths: [0.5, 0.6) is 0, ...,
/// [0.9, 1.0] is 4; `None` below 0.5.
pub(super) fn bin(millionths: u32) -> Option<usize> {
    let tenths = (millionths / 100_000).min(9) as usize;
    tenths.checked_sub(5)
}

fn key(a: u32, b: u32) -> u64 {
    u64::from(a) << 32 | u64::from(b)
}

/// For each group of one side, the groups of the other side its items are
/// in, with how many items.
struct Lists {
    start: Vec<usize>,
    cells: Vec<(u32, u64)>,
}

impl Lists {
    fn new(groups: u32, cells: impl Iterator<Item = (u32, u32, u64)>) -> Lists {
        let mut cells: Vec<(u32, u32, u64)> = cells.collect();
        cells.sort_unstable();
        let mut start = vec![0usize; groups as usize + 1];
        for &(g, _, _) in &cells {
            start[g as usize + 1] += 1;
        }
        for g in 0..groups as usize {
            start[g + 1] += start[g];
        }
        Lists { start, cells: cells.into_iter().map(|(_, other, n)| (other, n)).collect() }
    }

    fn of(&self, g: u32) -> &[(u32, u64)] {
        &self.cells[self.start[g as usize]..self.start[g as usize + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::super::side::Link;
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A side made of documents, as an analysis is: each document's item
    /// (or none) and group, and links between groups.
    #[derive(Clone, Debug)]
    struct Docs {
        docs: Vec<(Option<u32>, u32)>,
        groups: u32,
        links: Vec<Link>,
    }

    impl Docs {
        fn side(&self, items: usize) -> Side {
            let members: Vec<(u32, u32)> = self.docs.iter().filter_map(|&(i, g)| i.map(|i| (i, g))).collect();
            Side::of_documents(&members, self.groups, self.links.clone(), items).0
        }

        /// The strongest relation of two items over their documents, by
        /// brute force: `None` when no document of one pairs with one of
        /// the other.
        fn relation(&self, x: u32, y: u32) -> Option<Sim> {
            let of = |i: u32| self.docs.iter().filter(move |d| d.0 == Some(i)).map(|d| d.1);
            let mut best = None;
            for g in of(x) {
                for h in of(y) {
                    let sim = if g == h {
                        Some(Sim::Exact)
                    } else {
                        self.links.iter().find(|l| (l.a, l.b) == (g.min(h), g.max(h))).map(|l| l.sim)
                    };
                    best = best.max(sim);
                }
            }
            best
        }
    }

    fn docs(items: u32, with_sims: bool) -> impl Strategy<Value = Docs> {
        (1u32..6, 1usize..14).prop_flat_map(move |(groups, n)| {
            let doc = (prop::option::weighted(0.9, 0..items), 0..groups);
            let link = (0..groups, 0..groups, 0u32..=1_000_000, any::<bool>());
            (Just(groups), prop::collection::vec(doc, n), prop::collection::vec(link, 0..8)).prop_map(
                move |(groups, docs, links)| {
                    let mut seen = BTreeMap::new();
                    for (a, b, j, exact) in links {
                        if a != b {
                            let sim = match (with_sims, exact) {
                                (false, _) => Sim::Unmeasured,
                                (true, true) => Sim::Exact,
                                (true, false) => Sim::Jaccard(j),
                            };
                            seen.entry((a.min(b), a.max(b))).or_insert(sim);
                        }
                    }
                    let links = seen.into_iter().map(|((a, b), sim)| Link { a, b, sim }).collect();
                    Docs { docs, groups, links }
                },
            )
        })
    }

    proptest! {
        /// The counts equal those of every item pair looked at one by one,
        /// URLs with several documents in several groups included.
        #[test]
        fn counts_equal_brute_force(truth in docs(7, true), run in docs(7, false), min in 0u32..=1_000_000) {
            let items = 7;
            let (t, r) = (truth.side(items), run.side(items));
            let target = |sim: Sim| !matches!(sim, Sim::Jaccard(j) if j < min);
            let got = count(&t, &r, target);
            let mut want = PairCounts::default();
            for x in 0..items as u32 {
                for y in x + 1..items as u32 {
                    let in_run = run.relation(x, y).is_some();
                    want.run += u64::from(in_run);
                    let Some(sim) = truth.relation(x, y) else { continue };
                    let found = u64::from(in_run);
                    if target(sim) { want.target.add(1, found) } else { want.below.add(1, found) }
                    match sim {
                        Sim::Exact => want.exact.add(1, found),
                        Sim::Jaccard(j) => if let Some(b) = bin(j) { want.bins[b].add(1, found) },
                        Sim::Unmeasured => {}
                    }
                }
            }
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn bins_are_half_open_but_the_last() {
        assert_eq!(bin(499_999), None);
        assert_eq!(bin(500_000), Some(0));
        assert_eq!(bin(599_999), Some(0));
        assert_eq!(bin(600_000), Some(1));
        assert_eq!(bin(899_999), Some(3));
        assert_eq!(bin(900_000), Some(4));
        assert_eq!(bin(1_000_000), Some(4));
    }
}
