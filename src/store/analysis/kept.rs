//! The recrawl rule ([`super::savings`]) under a `--keep` rule
//! ([`super::keep`]): the same greedy pass, with documents taken in the
//! rule's order rather than by docID.
//!
//! - Exact: each exact group is kept as its first member in the rule's
//!   order; every other member is skipped, and that member stands for it.
//! - Near: exact groups are taken in the order of their kept members; a
//!   group is skipped when a kept group is its near-replica (their centers
//!   are an Overlap-table pair), and the first such kept group's member
//!   stands for each of its documents. Empty documents are always kept.
//!
//! Under `input-order` this is [`super::links::Links`]' rule, which the
//! tests check. The pass holds a rank per document (4 bytes) while it
//! builds, and the kept member of each exact group with copies and the
//! stand-in of each skipped linked group after; the documents' keys and
//! the pairs by rank are sorted within the budget, spilled past it.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::documents::{self, Docs, EMPTY};
use super::keep::{Criterion, KeepRule, Key, MAX_CRITERIA};
use super::links::Links;
use super::savings;
use crate::store::docs::{self as doc_table, DocTable};
use crate::store::sort::Batched;
use crate::store::{OutDir, Record};

/// In a stand-in list: the document is kept.
pub const KEPT: u32 = u32::MAX;

/// Each row's stand-in at both levels ([`KEPT`] for a kept row): the row
/// of the kept document that stands for it.
pub struct StandIns {
    pub exact: Vec<u32>,
    pub near: Vec<u32>,
    /// The rule's criteria that rank every document alike, which decide
    /// nothing (dates in an analysis migrated from an earlier overlap).
    pub idle: Vec<Criterion>,
}

impl StandIns {
    /// The warning for each criterion that decides nothing.
    pub fn warnings(&self) -> Vec<String> {
        self.idle
            .iter()
            .map(|c| {
                format!(
                    "--keep {}: every document ranks alike by it, so it decides nothing \
                     (docs.csv's {} column is the same in every row; an analysis migrated \
                     from an earlier overlap has no dates, captures or canonical links)",
                    c.name(),
                    c.column()
                )
            })
            .collect()
    }
}

/// The recrawl rule's verdicts on each row: the link pass's, by docID,
/// or the stand-ins of a `--keep` rule when there are any.
pub struct Verdicts<'a> {
    pub docs: &'a Docs,
    pub links: &'a Links,
    pub ranked: Option<&'a StandIns>,
}

impl Verdicts<'_> {
    /// Whether keeping one copy of each exact group keeps `row`.
    pub fn exact_kept(&self, row: u32) -> bool {
        match self.ranked {
            Some(s) => s.exact[row as usize] == KEPT,
            None => savings::exact_kept(self.docs, row),
        }
    }

    /// Whether the near-replica rule keeps `row`.
    pub fn near_kept(&self, row: u32) -> bool {
        match self.ranked {
            Some(s) => s.near[row as usize] == KEPT,
            None => self.links.kept(self.docs, row),
        }
    }
}

/// A document's key and row, as the sort holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    key: Key,
    row: u32,
}

impl Record for Ranked {
    const KIND: u32 = 26;
    const SIZE: usize = 8 * MAX_CRITERIA + 8;

    fn encode(&self, out: &mut [u8]) {
        for (i, v) in self.key.values.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
        let at = 8 * MAX_CRITERIA;
        out[at..at + 4].copy_from_slice(&self.key.doc.to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&self.row.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap_or_default());
        let at = 8 * MAX_CRITERIA;
        let half = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
        Ranked { key: Key { values: std::array::from_fn(word), doc: half(at) }, row: half(at + 4) }
    }
}

/// An Overlap-table pair as the ranks of its two groups, the smaller
/// first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RankPair {
    first: u32,
    second: u32,
}

impl Record for RankPair {
    const KIND: u32 = 27;
    const SIZE: usize = 8;

    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.first.to_le_bytes());
        out[4..8].copy_from_slice(&self.second.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        let half = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
        RankPair { first: half(0), second: half(4) }
    }
}

/// The stand-ins of the analysis in `out` (whose documents are `docs`)
/// under `rule`, its Overlap table read when `near`; holding at most about
/// `budget` bytes of sort records, spilled to `scratch`.
pub fn stand_ins(
    out: &OutDir,
    docs: &Docs,
    rule: &KeepRule,
    near: bool,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<StandIns> {
    let n = docs.len();
    // Every row's rank in the rule's order.
    let mut sorter = Batched::<Ranked>::new(budget, n as u64, scratch.join("keep-keys.bin"));
    let mut row = 0u32;
    let (mut least, mut most) = ([u64::MAX; MAX_CRITERIA], [0; MAX_CRITERIA]);
    doc_table::for_each_doc(&out.docs(), DocTable::Final, |doc| {
        let key = rule.key(doc);
        for (i, &v) in key.values.iter().enumerate() {
            (least[i], most[i]) = (least[i].min(v), most[i].max(v));
        }
        sorter.push(Ranked { key, row })?;
        row += 1;
        Ok(())
    })?;
    let idle: Vec<Criterion> = match n {
        0 | 1 => Vec::new(),
        _ => (rule.criteria().iter().enumerate())
            .filter(|&(i, c)| least[i] == most[i] && *c != Criterion::InputOrder)
            .map(|(_, &c)| c)
            .collect(),
    };
    anyhow::ensure!(row as usize == n, "docs.csv changed while it was read");
    let mut rank = vec![0u32; n];
    let mut next = 0u32;
    sorter.sorted(|r| {
        rank[r.row as usize] = next;
        next += 1;
        Ok(())
    })?;

    // Each exact group's first member (for the groups with copies).
    let mut first: FxHashMap<u32, u32> = FxHashMap::default();
    for d in 0..n as u32 {
        let c = docs.center(d);
        if c == EMPTY || docs.group_size(c) < 2 {
            continue;
        }
        let best = first.entry(c).or_insert(d);
        if rank[d as usize] < rank[*best as usize] {
            *best = d;
        }
    }
    let kept_of = |c: u32| first.get(&c).copied().unwrap_or(c);
    let exact: Vec<u32> = (0..n as u32)
        .map(|d| match docs.center(d) {
            EMPTY => KEPT,
            c if kept_of(c) == d => KEPT,
            c => kept_of(c),
        })
        .collect();
    if !near {
        return Ok(StandIns { near: exact.clone(), exact, idle });
    }

    // The greedy pass over the groups in rank order: every pair (k, g)
    // with k before g sorts before the first pair (g, h), so g's verdict is
    // final when its own pairs come (as in `links`).
    let mut pairs = Batched::<RankPair>::new(budget, 0, scratch.join("keep-pairs.bin"));
    documents::for_each_pair(&out.overlap(), docs, |i, j, _| {
        let (a, b) = (rank[kept_of(i) as usize], rank[kept_of(j) as usize]);
        pairs.push(RankPair { first: a.min(b), second: a.max(b) })
    })?;
    let mut covered: FxHashMap<u32, u32> = FxHashMap::default();
    pairs.sorted(|p| {
        if !covered.contains_key(&p.first) {
            covered.entry(p.second).or_insert(p.first);
        }
        Ok(())
    })?;
    // Ranks back to rows, for the ranks the verdicts name.
    let mut row_of: FxHashMap<u32, u32> = covered.iter().flat_map(|(&g, &by)| [(g, 0), (by, 0)]).collect();
    for (d, &r) in rank.iter().enumerate() {
        if let Some(slot) = row_of.get_mut(&r) {
            *slot = d as u32;
        }
    }
    drop(rank);
    // A skipped group's center, and the kept member that stands for it.
    let by_center: FxHashMap<u32, u32> =
        covered.iter().map(|(g, by)| (docs.center(row_of[g]), row_of[by])).collect();
    let near = exact
        .iter()
        .enumerate()
        .map(|(d, &e)| match docs.center(d as u32) {
            EMPTY => KEPT,
            c => by_center.get(&c).copied().unwrap_or(e),
        })
        .collect();
    Ok(StandIns { exact, near, idle })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::analysis::documents::Centers;
    use crate::store::analysis::links::Links;
    use crate::store::analysis::savings;
    use crate::store::docs::{CaptureStatus, Crawled, Doc, DocsWriter, Source, TextFields};
    use crate::testing::{XorShift, exact_centers, overlap_table};

    /// The rule by its definition: documents sorted by key, exact groups
    /// by their first member, the greedy pass over a list of each group's
    /// neighbours.
    fn reference(docs: &[Doc<'_>], centers: &[u32], pairs: &[(u32, u32)], rule: &KeepRule) -> StandIns {
        let n = docs.len();
        let keys: Vec<Key> = docs.iter().map(|d| rule.key(d)).collect();
        let members = |c: u32| (0..n as u32).filter(move |&d| centers[d as usize] == c);
        let first = |c: u32| members(c).min_by_key(|&d| keys[d as usize]).unwrap();
        let exact: Vec<u32> = (0..n)
            .map(|d| match centers[d] {
                EMPTY => KEPT,
                c if first(c) == d as u32 => KEPT,
                c => first(c),
            })
            .collect();
        let mut groups: Vec<u32> = (0..n as u32).filter(|&d| centers[d as usize] == d).collect();
        groups.sort_by_key(|&c| keys[first(c) as usize]);
        let mut verdict: FxHashMap<u32, Option<u32>> = FxHashMap::default();
        for &g in &groups {
            let by = groups
                .iter()
                .take_while(|&&k| k != g)
                .find(|&&k| verdict[&k].is_none() && pairs.iter().any(|&p| p == (g.min(k), g.max(k))));
            verdict.insert(g, by.map(|&k| first(k)));
        }
        let near = (0..n)
            .map(|d| match centers[d] {
                EMPTY => KEPT,
                c => verdict[&c].unwrap_or(exact[d]),
            })
            .collect();
        StandIns { exact, near, idle: Vec::new() }
    }

    #[test]
    fn stand_ins_are_the_rules_greedy_pass() {
        let mut rng = XorShift::new(0x6b65_6570);
        let rules =
            ["input-order", "newest", "capture,shortest-url", "https,longest-text,oldest", "canonical"];
        for case in 0..40 {
            let n = 1 + rng.below(120) as u32;
            let centers = exact_centers(&mut rng, n, 3);
            let dir = tempfile::tempdir().unwrap();
            let out = OutDir::new(dir.path().to_path_buf());
            out.create().unwrap();
            let urls: Vec<String> = (0..n)
                .map(|d| {
                    let scheme = ["http", "https"][rng.below(2) as usize];
                    format!(
                        "{scheme}://h{}.example/{}",
                        rng.below(3),
                        "p".repeat(rng.below(4) as usize + d as usize % 2)
                    )
                })
                .collect();
            let dates: Vec<String> = (0..n)
                .map(|_| match rng.below(4) {
                    0 => String::new(),
                    k => format!("2024-0{k}-0{}T00:00:00Z", 1 + rng.below(3)),
                })
                .collect();
            let canonicals: Vec<String> = (0..n)
                .map(|d| match rng.below(3) {
                    0 => String::new(),
                    1 => urls[d as usize].clone(),
                    _ => "/other".to_string(),
                })
                .collect();
            let status = [CaptureStatus::Response, CaptureStatus::Unknown, CaptureStatus::Revisit];
            let docs: Vec<Doc> = (0..n as usize)
                .map(|d| Doc {
                    id: d as u32,
                    url: &urls[d],
                    host: "h",
                    source: Source { input: "in", offset: d as u64 },
                    text: Some(TextFields {
                        bytes: 1,
                        lines: if centers[d] == EMPTY { 0 } else { 1 + rng.below(3) },
                        chunks: 1,
                        title: "",
                        canonical: &canonicals[d],
                    }),
                    center: (centers[d] != EMPTY).then_some(centers[d]),
                    missing_for: 0,
                    crawled: Crawled { date: &dates[d], status: status[rng.below(3) as usize] },
                    near_group: None,
                })
                .collect();
            let mut w = DocsWriter::create(&out.docs(), DocTable::Final).unwrap();
            for d in &docs {
                w.push(d).unwrap();
            }
            w.finish().unwrap();
            let groups: Vec<u32> = (0..n).filter(|&d| centers[d as usize] == d).collect();
            let count = rng.below(groups.len() as u64 * [1, 3][case % 2] + 1);
            let pairs = overlap_table(&mut rng, &groups, count, &out.overlap());
            let held = Docs { centers: Centers::from_rows(&centers), ..Docs::default() };
            for (k, text) in rules.iter().enumerate() {
                let rule = KeepRule::parse(text).unwrap();
                // A budget of a few records spills both sorts.
                let budget = if (case + k) % 2 == 0 { 1 << 20 } else { 64 };
                let got = stand_ins(&out, &held, &rule, true, budget, dir.path()).unwrap();
                let want = reference(&docs, &centers, &pairs, &rule);
                assert_eq!(got.exact, want.exact, "case {case}, {text}: exact");
                assert_eq!(got.near, want.near, "case {case}, {text}: near");
                if rule.is_input_order() {
                    let links = Links::build(&held, &out.overlap(), |_, _| Ok(())).unwrap();
                    for d in 0..n {
                        let exact = if savings::exact_kept(&held, d) { KEPT } else { held.center(d) };
                        assert_eq!(got.exact[d as usize], exact, "case {case}: the savings' exact rule");
                        assert_eq!(
                            got.near[d as usize],
                            links.stands_for(&held, d).unwrap_or(KEPT),
                            "case {case}"
                        );
                    }
                }
            }
        }
    }
}
