//! The link pass: one read of the Overlap table for the near-replica
//! components, the recrawl rule's verdicts, each center's links and
//! near-replica count (and, for the caller, which alias pairs of two
//! texts are near-replicas).
//!
//! Only the centers with a pair in the table are nodes of the graph: on
//! 2.1 million generated pages, 28,402 centers share 516,739 pairs. Every
//! other document's answers follow from its exact group: a copy is in its
//! center's component, with its center's near-replica count, and skipped
//! by the recrawl rule; a center without a pair is its exact group's
//! component alone, kept, with no links; an empty document is alone and
//! kept. So what the pass holds (union-find, the rule's coverage, degree,
//! the sizes of linked exact groups) is per linked center: found through a
//! hash map while the table is read, by rank in a bit per document after.
//! Held per document, the same lists took 18 bytes a document after the
//! pass and 28 during it, whatever the table.
//!
//! The recrawl rule ([`super::savings`]) takes pages in docID order and
//! keeps a center unless a kept page links to it. Rows come in (i, j)
//! order, so every pair (k, i) with k < i is read before the first pair
//! (i, j): when that pair is read, i's verdict is final, and it covers j
//! exactly when it is kept. One bit per linked center is the whole rule.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::documents::{self, Docs, EMPTY, RankBits};
use super::union_find::UnionFind;

/// A linked center no kept page links to.
const NOT_COVERED: u32 = u32::MAX;

/// What the link pass found, per linked center, with the document table
/// answering for every other document.
pub struct Links {
    /// The linked centers' rows.
    linked: RankBits,
    /// Per linked center, in row order (by rank): the row naming its
    /// component (the component's smallest row) ...
    label: Vec<u32>,
    /// ... the documents of its component, and its centers and the sum of
    /// their degrees (twice its pairs) ...
    component: Vec<u32>,
    centers_in: Vec<u32>,
    degrees_in: Vec<u64>,
    /// ... the first kept page that links to it, which stands for it
    /// (the recrawl rule skips it), or [`NOT_COVERED`] ...
    covered: Vec<u32>,
    /// ... its pairs in the table ...
    degree: Vec<u32>,
    /// ... and the documents of the exact groups it is paired with.
    neighbours: Vec<u32>,
    /// Rows of the table.
    pub pairs: u64,
}

/// The linked centers as the pass meets them, numbered in that order.
#[derive(Default)]
struct Nodes {
    ids: FxHashMap<u32, u32>,
    rows: Vec<u32>,
    uf: UnionFind,
    covered: Vec<u32>,
    degree: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Nodes {
    /// The number of the center at `row`, given it if it is new.
    fn id(&mut self, row: u32) -> usize {
        let next = self.rows.len() as u32;
        let id = *self.ids.entry(row).or_insert(next);
        if id == next {
            self.rows.push(row);
            self.uf.add();
            self.covered.push(NOT_COVERED);
            self.degree.push(0);
            self.neighbours.push(0);
        }
        id as usize
    }
}

impl Links {
    /// Reads the Overlap table at `overlap` (of centers of `docs`) once,
    /// calling `also` with each pair of rows in (i, j) order.
    pub fn build(
        docs: &Docs,
        overlap: &Path,
        mut also: impl FnMut(u32, u32) -> anyhow::Result<()>,
    ) -> anyhow::Result<Links> {
        let mut nodes = Nodes::default();
        let mut pairs = 0u64;
        documents::for_each_pair(overlap, docs, |i, j, _| {
            let (a, b) = (nodes.id(i), nodes.id(j));
            // i's verdict is final (see the module's doc); the first kept
            // i that links to j stands for it.
            if nodes.covered[a] == NOT_COVERED && nodes.covered[b] == NOT_COVERED {
                nodes.covered[b] = i;
            }
            nodes.uf.union(a as u32, b as u32);
            for (x, other) in [(a, j), (b, i)] {
                nodes.degree[x] = nodes.degree[x].saturating_add(1);
                nodes.neighbours[x] = nodes.neighbours[x].saturating_add(docs.group_size(other));
            }
            also(i, j)?;
            pairs += 1;
            Ok(())
        })?;
        Ok(Links::from_nodes(docs, nodes, pairs))
    }

    /// Orders the nodes by row, and names each component by its smallest
    /// row (the smallest docID of its documents: a copy's row is after
    /// its center's).
    fn from_nodes(docs: &Docs, nodes: Nodes, pairs: u64) -> Links {
        let Nodes { ids, rows, mut uf, covered, degree, neighbours } = nodes;
        drop(ids);
        let m = rows.len();
        let mut smallest = vec![u32::MAX; m];
        let mut documents = vec![0u32; m];
        let mut centers_in = vec![0u32; m];
        let mut degrees_in = vec![0u64; m];
        for (id, &row) in rows.iter().enumerate() {
            let root = uf.find(id as u32) as usize;
            smallest[root] = smallest[root].min(row);
            documents[root] = documents[root].saturating_add(docs.group_size(row));
            centers_in[root] += 1;
            degrees_in[root] += u64::from(degree[id]);
        }
        let mut order: Vec<u32> = (0..m as u32).collect();
        order.sort_unstable_by_key(|&id| rows[id as usize]);
        let mut linked = RankBits::new(docs.len());
        let mut links = Links {
            linked: RankBits::default(),
            label: Vec::with_capacity(m),
            component: Vec::with_capacity(m),
            centers_in: Vec::with_capacity(m),
            degrees_in: Vec::with_capacity(m),
            covered: Vec::with_capacity(m),
            degree: Vec::with_capacity(m),
            neighbours: Vec::with_capacity(m),
            pairs,
        };
        for &id in &order {
            let (id, row) = (id as usize, rows[id as usize]);
            linked.insert(row);
            let root = uf.find(id as u32) as usize;
            links.label.push(smallest[root]);
            links.component.push(documents[root]);
            links.centers_in.push(centers_in[root]);
            links.degrees_in.push(degrees_in[root]);
            links.covered.push(covered[id]);
            links.degree.push(degree[id]);
            links.neighbours.push(neighbours[id]);
        }
        links.linked = linked.ranked();
        links
    }

    /// The rank of the linked center at `row`, `None` for any other row.
    fn rank(&self, row: u32) -> Option<usize> {
        self.linked.rank(row)
    }

    /// The row naming `row`'s component: its smallest row.
    pub fn label(&self, docs: &Docs, row: u32) -> u32 {
        match docs.center(row) {
            EMPTY => row,
            c => self.rank(c).map_or(c, |k| self.label[k]),
        }
    }

    /// The documents of `row`'s component, itself included.
    pub fn component_documents(&self, docs: &Docs, row: u32) -> u32 {
        match docs.center(row) {
            EMPTY => 1,
            c => self.rank(c).map_or(docs.group_size(c), |k| self.component[k]),
        }
    }

    /// The row naming `row`'s near-replica group, `None` when its
    /// component is itself alone.
    pub fn group_of(&self, docs: &Docs, row: u32) -> Option<u32> {
        (self.component_documents(docs, row) >= 2).then(|| self.label(docs, row))
    }

    /// Whether the near-replica recrawl rule keeps `row`: an empty
    /// document, or a center no kept page links to.
    pub fn kept(&self, docs: &Docs, row: u32) -> bool {
        match docs.center(row) {
            EMPTY => true,
            c if c == row => self.rank(c).is_none_or(|k| self.covered[k] == NOT_COVERED),
            _ => false,
        }
    }

    /// The kept page that stands for `row` under the near-replica recrawl
    /// rule, `None` when `row` is kept: for a center, the first kept page
    /// (in docID order) that is its near-replica; for a copy, its center
    /// when the center is kept, or the page that stands for the center.
    pub fn stands_for(&self, docs: &Docs, row: u32) -> Option<u32> {
        let center = docs.center(row);
        if center == EMPTY {
            return None;
        }
        let by = self.rank(center).map(|k| self.covered[k]).filter(|&by| by != NOT_COVERED);
        match (center == row, by) {
            (true, by) => by,
            (false, None) => Some(center),
            (false, Some(by)) => Some(by),
        }
    }

    /// Whether `row` is a center with a pair in the table.
    pub fn is_linked(&self, row: u32) -> bool {
        self.linked.contains(row)
    }

    /// The documents, centers and pairs of the component `row` names, if
    /// `row` is a linked center and its component's smallest row.
    pub fn component_named(&self, row: u32) -> Option<(u32, u32, u64)> {
        let k = self.rank(row)?;
        (self.label[k] == row).then(|| (self.component[k], self.centers_in[k], self.degrees_in[k] / 2))
    }

    /// The Overlap-table pairs `row` takes part in (0 but for a center):
    /// the group table has their sums per component; the tests' reference
    /// adds them up.
    #[cfg(test)]
    pub fn degree(&self, row: u32) -> u32 {
        self.rank(row).map_or(0, |k| self.degree[k])
    }

    /// Other documents that are exact copies of `row` or of a page linked
    /// to its center (0 for an empty document).
    pub fn near_count(&self, docs: &Docs, row: u32) -> u32 {
        match docs.center(row) {
            EMPTY => 0,
            c => {
                let linked = self.rank(c).map_or(0, |k| self.neighbours[k]);
                (docs.group_size(c) - 1).saturating_add(linked)
            }
        }
    }

    /// The linked centers in row order, each with the row naming its
    /// component.
    pub fn centers(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.linked.iter().zip(&self.label).map(|(row, &label)| (row, label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::analysis::documents::Centers;
    use crate::store::analysis::savings::Greedy;
    use crate::store::analysis::union_find;
    use crate::testing::{XorShift, exact_centers, overlap_table};

    #[test]
    fn linked_centers_answer_as_lists_over_every_document_do() {
        let mut rng = XorShift::new(0x11_5ca7);
        for case in 0..60 {
            let n = 1 + rng.below(400) as u32;
            let docs =
                Docs { centers: Centers::from_rows(&exact_centers(&mut rng, n, 3)), ..Docs::default() };
            let centers: Vec<u32> = (0..n).filter(|&d| docs.is_center(d)).collect();
            // Few pairs (most centers unlinked) to many (chains, stars).
            let dir = tempfile::tempdir().unwrap();
            let overlap = dir.path().join("overlap.csv");
            let count = rng.below(centers.len() as u64 * [1, 2, 8][case % 3] + 1);
            let pairs = overlap_table(&mut rng, &centers, count, &overlap);
            let mut seen = Vec::new();
            let links = Links::build(&docs, &overlap, |i, j| {
                seen.push((i, j));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, pairs);
            assert_eq!(links.pairs, pairs.len() as u64);

            // The reference: union-find, the greedy rule and counts in a
            // list over every document.
            let mut uf = union_find::UnionFind::new(n as usize);
            for d in 0..n {
                let c = docs.center(d);
                if c != EMPTY && c != d {
                    uf.union(c, d);
                }
            }
            let mut greedy = Greedy::new(&docs);
            let mut degree = vec![0u32; n as usize];
            let mut near: Vec<u32> =
                (0..n).map(|d| if docs.is_center(d) { docs.group_size(d) - 1 } else { 0 }).collect();
            for &(i, j) in &pairs {
                uf.union(i, j);
                greedy.pair(&docs, i, j);
                degree[i as usize] += 1;
                degree[j as usize] += 1;
                near[i as usize] += docs.group_size(j);
                near[j as usize] += docs.group_size(i);
            }
            for d in 0..n as usize {
                let c = docs.center(d as u32);
                if c != EMPTY {
                    near[d] = near[c as usize];
                }
            }
            let label = uf.labels();
            let size = union_find::sizes(&label);
            let kept = greedy.finish(&docs);
            for d in 0..n {
                let at = format!("case {case}, row {d}");
                let l = label[d as usize];
                assert_eq!(links.label(&docs, d), l, "{at}");
                assert_eq!(links.component_documents(&docs, d), size[l as usize], "{at}");
                assert_eq!(links.group_of(&docs, d), (size[l as usize] >= 2).then_some(l), "{at}");
                assert_eq!(links.kept(&docs, d), kept[d as usize], "{at}");
                assert_eq!(links.degree(d), degree[d as usize], "{at}");
                assert_eq!(links.near_count(&docs, d), near[d as usize], "{at}");
            }
            let mut linked: Vec<u32> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
            linked.sort_unstable();
            linked.dedup();
            let expected: Vec<(u32, u32)> = linked.iter().map(|&c| (c, label[c as usize])).collect();
            assert_eq!(links.centers().collect::<Vec<_>>(), expected, "case {case}");
        }
    }
}
