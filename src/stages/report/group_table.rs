//! The near-replica groups (the paper's Table 2) on their way to
//! groups.csv: one record a group, sorted largest first within a share of
//! `--memory` and spilled to scratch files beyond it, and written with the
//! URL of each group's first document gathered a window at a time
//! ([`super::url_windows`]). A crawl has about one group for every ten
//! documents (194,604 on 2.1 million generated pages); their list, a map
//! from each to its figures and the URLs they show were held whole, some
//! 35 MB there, whatever the budget.
//!
//! Groups come from the link pass ([`Links`]), in row order of the row
//! that names each: a component of linked centers, or an exact group with
//! copies whose center has no pair. Their distinct hosts come from a sort
//! of (group, host) for every document in a group, read beside them in
//! the same order. Diameters are measured for the groups small enough
//! ([`super::components::diameter_measurable`]), all of them components
//! of linked centers, in batches of links held within the budget the
//! caller gives, one pass over the Overlap table each.
//!
//! Scratch records: kind 23, a group, 28 bytes (groups.csv's order as
//! `u32::MAX - documents` in the high half of a u64 and the group's row in
//! the low, then centers, hosts, pairs and diameter, `u32::MAX` where not
//! measured); kind 24, a group's row and a host of one of its documents,
//! 8 bytes.

use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

use super::components;
use super::fields::{self, Cell};
use super::groups::Group;
use super::url_side::UrlSource;
use super::url_windows::{self, Window, Windows};
use crate::store::analysis::documents::{self, Docs, for_each_pair};
use crate::store::analysis::links::Links;
use crate::store::sort::{Batched, SortedRecords};
use crate::store::{CsvOut, Record, le_u32, le_u64};

/// One group, ordered as groups.csv lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupRecord {
    /// `u32::MAX - documents` in the high half, the group's row in the
    /// low: the largest first, ties by the smallest docID.
    order: u64,
    centers: u32,
    hosts: u32,
    pairs: u64,
    /// [`NOT_MEASURED`] where the group was too large to search.
    diameter: u32,
}

const NOT_MEASURED: u32 = u32::MAX;

/// Scratch record kind 23, 28 bytes: order, centers, hosts, pairs,
/// diameter.
impl Record for GroupRecord {
    const KIND: u32 = 23;
    const SIZE: usize = 28;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.order.to_le_bytes());
        out[8..12].copy_from_slice(&self.centers.to_le_bytes());
        out[12..16].copy_from_slice(&self.hosts.to_le_bytes());
        out[16..24].copy_from_slice(&self.pairs.to_le_bytes());
        out[24..28].copy_from_slice(&self.diameter.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        GroupRecord {
            order: le_u64(&b[..8]),
            centers: le_u32(&b[8..12]),
            hosts: le_u32(&b[12..16]),
            pairs: le_u64(&b[16..24]),
            diameter: le_u32(&b[24..28]),
        }
    }
}

impl GroupRecord {
    /// The row naming the group (its smallest docID's).
    pub fn row(&self) -> u32 {
        self.order as u32
    }

    pub fn documents(&self) -> u64 {
        u64::from(u32::MAX - (self.order >> 32) as u32)
    }

    /// The group as report.json and report.html show it, named by row and
    /// without its URL until [`super::groups::name`].
    pub fn group(&self) -> Group {
        let (centers, pairs) = (u64::from(self.centers), self.pairs);
        let diameter = (self.diameter != NOT_MEASURED).then_some(self.diameter);
        Group {
            group: self.row(),
            documents: self.documents(),
            centers,
            pairs,
            hosts: u64::from(self.hosts),
            diameter,
            density: round4(components::density(centers, pairs)),
            chained: components::chained(centers, pairs, diameter),
            sample_url: String::new(),
            first_hosts: Vec::new(),
        }
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A group's row and the host of one of its documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct GroupHost {
    group: u32,
    host: u32,
}

/// Scratch record kind 24, 8 bytes: group, host.
impl Record for GroupHost {
    const KIND: u32 = 24;
    const SIZE: usize = 8;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.group.to_le_bytes());
        out[4..8].copy_from_slice(&self.host.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        GroupHost { group: le_u32(&b[..4]), host: le_u32(&b[4..8]) }
    }
}

/// Every group, in groups.csv's order.
pub struct GroupTable {
    groups: SortedRecords<GroupRecord>,
}

/// What report.json and report.html say of the groups as a whole, and
/// the largest groups they show.
pub struct Summary {
    pub groups: u64,
    pub documents: u64,
    pub largest: u64,
    pub chained: u64,
    /// The first groups, named by row.
    pub shown: Vec<Group>,
}

/// The documents, centers and pairs of the group `row` names, if it names
/// one: a component of linked centers, or an exact group with copies and
/// no pair.
fn facts(docs: &Docs, links: &Links, row: u32) -> Option<(u32, u32, u64)> {
    if links.is_linked(row) {
        return links.component_named(row);
    }
    let size = docs.group_size(row);
    (size >= 2).then_some((size, 1, 0))
}

/// Builds the table from the link pass: the groups' hosts and their
/// records sorted within `budget` bytes (half each), spilled to `scratch`
/// beyond it, and the diameters of those small enough measured with at
/// most `edge_budget` links held at once.
pub fn build(
    docs: &Docs,
    links: &Links,
    overlap: &Path,
    edge_budget: u64,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<GroupTable> {
    let n = docs.len() as u64;
    let mut hosts = Batched::new(budget / 2, n, scratch.join("group-hosts.fpd"));
    docs.host.for_each(|d, host| match links.group_of(docs, d) {
        Some(group) if !docs.hosts[host as usize].is_empty() => hosts.push(GroupHost { group, host }),
        _ => Ok(()),
    })?;
    let hosts = hosts.finish(&scratch.join("group-hosts.sorted.fpd"))?;
    let diameters = diameters(docs, links, overlap, edge_budget)?;
    let mut records = Batched::new(budget / 2, n / 8, scratch.join("groups.fpd"));
    let mut host_reader = hosts.reader()?;
    let mut next_host = host_reader.next_record()?;
    for row in 0..n as u32 {
        let Some((documents, centers, pairs)) = facts(docs, links, row) else { continue };
        let mut distinct = 0u32;
        let mut last = None;
        while let Some(h) = next_host.filter(|h| h.group <= row) {
            if h.group == row && last != Some(h.host) {
                distinct += 1;
                last = Some(h.host);
            }
            next_host = host_reader.next_record()?;
        }
        let diameter = known_diameter(u64::from(centers), pairs)
            .or_else(|| diameters.get(&row).copied())
            .unwrap_or(NOT_MEASURED);
        let order = (u64::from(u32::MAX - documents) << 32) | u64::from(row);
        records.push(GroupRecord { order, centers, hosts: distinct, pairs, diameter })?;
    }
    drop(host_reader);
    drop(hosts);
    Ok(GroupTable { groups: records.finish(&scratch.join("groups.sorted.fpd"))? })
}

/// The diameter of a group of `centers` with `pairs` linked, when it is
/// known without a search: 0 for one center, 1 for a complete graph.
pub(crate) fn known_diameter(centers: u64, pairs: u64) -> Option<u32> {
    if centers <= 1 {
        Some(0)
    } else if pairs == centers * (centers - 1) / 2 {
        Some(1)
    } else {
        None
    }
}

/// The diameters of the groups whose center graph can be searched and
/// whose diameter is not [`known_diameter`], by the row naming each:
/// batches of groups of at most `edge_budget` links, one pass over the
/// table each.
pub(crate) fn diameters(
    docs: &Docs,
    links: &Links,
    overlap: &Path,
    edge_budget: u64,
) -> anyhow::Result<FxHashMap<u32, u32>> {
    let mut todo: Vec<(u32, u64)> = Vec::new();
    for (row, _) in links.centers() {
        let Some((_, centers, pairs)) = links.component_named(row) else { continue };
        let centers = u64::from(centers);
        if known_diameter(centers, pairs).is_none() && components::diameter_measurable(centers, pairs) {
            todo.push((row, pairs));
        }
    }
    let mut found = FxHashMap::default();
    while !todo.is_empty() {
        let mut batch: FxHashSet<u32> = FxHashSet::default();
        let mut edges = 0u64;
        while let Some(&(row, pairs)) = todo.last() {
            if !batch.is_empty() && edges + pairs > edge_budget {
                break;
            }
            edges += pairs;
            batch.insert(row);
            todo.pop();
        }
        // Local index of each center within its group.
        let mut local: FxHashMap<u32, u32> = FxHashMap::default();
        let mut next: FxHashMap<u32, u32> = FxHashMap::default();
        for (d, label) in links.centers() {
            if batch.contains(&label) {
                let slot = next.entry(label).or_default();
                local.insert(d, *slot);
                *slot += 1;
            }
        }
        let mut edges_of: FxHashMap<u32, Vec<(u32, u32)>> = FxHashMap::default();
        for_each_pair(overlap, docs, |i, j, _| {
            let l = links.label(docs, i);
            if batch.contains(&l) {
                edges_of.entry(l).or_default().push((local[&i], local[&j]));
            }
            Ok(())
        })?;
        for l in batch {
            let n = next.get(&l).copied().unwrap_or(0) as usize;
            let e = edges_of.remove(&l).unwrap_or_default();
            found.insert(l, components::diameter(n, &e));
        }
    }
    Ok(found)
}

impl GroupTable {
    /// The counts over every group, and the first `shown` groups.
    pub fn summary(&self, shown: usize) -> anyhow::Result<Summary> {
        let mut s = Summary { groups: 0, documents: 0, largest: 0, chained: 0, shown: Vec::new() };
        let mut reader = self.groups.reader()?;
        while let Some(r) = reader.next_record()? {
            let g = r.group();
            s.groups += 1;
            s.documents += g.documents;
            s.largest = s.largest.max(g.documents);
            s.chained += u64::from(g.chained);
            if s.shown.len() < shown {
                s.shown.push(g);
            }
        }
        Ok(s)
    }

    /// The windows of groups whose URLs are gathered together, each within
    /// `budget` bytes, planned for URLs of `mean_url` bytes.
    pub fn windows(&self, budget: u64, mean_url: u64) -> Windows<'_, GroupRecord> {
        Windows::new(&self.groups, |g| [g.row(), g.row()], budget, mean_url)
    }
}

/// Writes `groups.csv`, the groups of `first` with the URLs the report's
/// pass over docs.csv gathered (`urls`), then every further window of
/// `windows` ([`url_windows::write_csv`]).
pub fn write_csv(
    path: &Path,
    docs: &Docs,
    source: UrlSource<'_>,
    windows: Windows<'_, GroupRecord>,
    first: Window,
    urls: (documents::Urls, Option<u32>),
) -> anyhow::Result<()> {
    let header =
        ["group", "documents", "centers", "pairs", "hosts", "diameter", "density", "chained", "sample_url"];
    url_windows::write_csv(path, &header, source, windows, first, urls, |out: &mut CsvOut, r, urls| {
        let g = r.group();
        out.row([
            Cell::number(docs.doc_id(g.group)),
            Cell::number(g.documents),
            Cell::number(g.centers),
            Cell::number(g.pairs),
            Cell::number(g.hosts),
            g.diameter.map_or(Cell::Text(""), Cell::number),
            Cell::fixed4(g.density),
            fields::flag(g.chained),
            urls.get(g.group).unwrap_or("").into(),
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::report::groups::reference;
    use crate::store::analysis::documents::Centers;
    use crate::testing::{XorShift, exact_centers, overlap_table};

    #[test]
    fn groups_from_the_table_equal_the_whole_list_held_or_spilled() {
        let mut rng = XorShift::new(0x6_0c7a);
        for case in 0..40 {
            // Some with more grouped documents than the 1,024 records a
            // batch of nothing holds.
            let n = if case % 5 == 0 { 3000 } else { 2 + rng.below(300) as u32 };
            let center = exact_centers(&mut rng, n, 3);
            // Hosts, one of them without a name.
            let hosts: Vec<String> =
                (0..6).map(|h| if h == 0 { String::new() } else { format!("h{h}") }).collect();
            let host: Vec<u32> = (0..n).map(|_| rng.below(6) as u32).collect();
            let docs = Docs {
                centers: Centers::from_rows(&center),
                host: host.into(),
                hosts: hosts.into(),
                ..Docs::default()
            };
            let centers: Vec<u32> = (0..n).filter(|&d| docs.is_center(d)).collect();
            let dir = tempfile::tempdir().unwrap();
            let overlap = dir.path().join("overlap.csv");
            let count = rng.below(centers.len() as u64 * [1, 3, 10][case % 3] + 1);
            overlap_table(&mut rng, &centers, count, &overlap);
            let links = Links::build(&docs, &overlap, |_, _| Ok(())).unwrap();
            let expected = reference::groups(&docs, &links, &overlap, 1 << 20).unwrap();
            // In memory, and spilled in batches of 1,024; one link a batch
            // of diameters, and all at once.
            for (budget, edges) in [(1 << 20, 1 << 20), (0, 1)] {
                let t = build(&docs, &links, &overlap, edges, budget, dir.path()).unwrap();
                let s = t.summary(usize::MAX).unwrap();
                assert_eq!(s.shown, expected, "case {case}, budget {budget}");
                assert_eq!(s.groups, expected.len() as u64);
                assert_eq!(s.documents, expected.iter().map(|g| g.documents).sum::<u64>());
                assert_eq!(s.chained, expected.iter().filter(|g| g.chained).count() as u64);
                assert_eq!(t.summary(3).unwrap().shown, expected[..expected.len().min(3)]);
            }
        }
    }
}
