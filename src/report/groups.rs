//! Near-replica groups (the paper's Table 2): each connected component of
//! two or more documents with its size, exact groups, links, distinct
//! hosts, a sample URL, and whether it looks chained (see
//! [`super::components`]), written to `groups.csv` largest first.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::components::{self, UnionFind};
use super::input::{Docs, EMPTY, for_each_pair, urls_of};

/// One component of two or more documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// Its smallest docID, which names it.
    pub group: u32,
    pub documents: u64,
    /// Exact groups in it (distinct texts).
    pub centers: u64,
    /// Overlap-table pairs inside it.
    pub pairs: u64,
    pub hosts: u64,
    /// The largest number of links between two of its centers; `None`
    /// where it was too large to measure.
    pub diameter: Option<u32>,
    /// Linked center pairs over all center pairs.
    pub density: f64,
    pub chained: bool,
    /// The URL of its smallest docID.
    pub sample_url: String,
}

/// What the one pass over the Overlap table gathers per document.
pub struct Linked {
    /// Component label (smallest docID) of every document.
    pub label: Vec<u32>,
    /// Overlap-table pairs each center takes part in.
    pub degree: Vec<u32>,
}

/// Builds the groups: sizes from the labels, diameters from further
/// passes over the table for components small enough, with at most
/// `edge_budget` links held at once.
pub fn groups(
    docs: &Docs,
    linked: &Linked,
    overlap: &Path,
    docs_csv: &Path,
    edge_budget: u64,
) -> anyhow::Result<Vec<Group>> {
    let n = docs.len();
    let label = &linked.label;
    let mut sizes: HashMap<u32, (u64, u64, u64)> = HashMap::new(); // documents, centers, degree sum
    let mut host_of_group: Vec<(u32, u32)> = Vec::new();
    {
        let mut size = vec![0u32; n];
        for &l in label {
            size[l as usize] += 1;
        }
        for d in 0..n {
            if size[label[d] as usize] < 2 {
                continue;
            }
            let e = sizes.entry(label[d]).or_default();
            e.0 += 1;
            if docs.is_center(d as u32) {
                e.1 += 1;
                e.2 += u64::from(linked.degree[d]);
            }
            host_of_group.push((label[d], docs.host[d]));
        }
    }
    host_of_group.sort_unstable();
    host_of_group.dedup();
    let mut hosts: HashMap<u32, u64> = HashMap::new();
    for (l, _) in host_of_group {
        *hosts.entry(l).or_default() += 1;
    }
    let mut groups: Vec<Group> = sizes
        .iter()
        .map(|(&l, &(documents, centers, degrees))| Group {
            group: l,
            documents,
            centers,
            pairs: degrees / 2,
            hosts: hosts.get(&l).copied().unwrap_or(0),
            diameter: None,
            density: round4(components::density(centers, degrees / 2)),
            chained: false,
            sample_url: String::new(),
        })
        .collect();
    groups.sort_by(|a, b| b.documents.cmp(&a.documents).then(a.group.cmp(&b.group)));
    measure_diameters(docs, label, overlap, edge_budget, &mut groups)?;
    for g in &mut groups {
        g.chained = components::chained(g.centers, g.pairs, g.diameter);
    }
    let mut wanted: Vec<u32> = groups.iter().map(|g| g.group).collect();
    wanted.sort_unstable();
    let urls = urls_of(docs_csv, &wanted)?;
    for g in &mut groups {
        g.sample_url = urls.get(&g.group).cloned().unwrap_or_default();
    }
    Ok(groups)
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Fills `diameter` for the groups whose center graph can be searched, in
/// batches of at most `edge_budget` links, one pass over the table each.
fn measure_diameters(
    docs: &Docs,
    label: &[u32],
    overlap: &Path,
    edge_budget: u64,
    groups: &mut [Group],
) -> anyhow::Result<()> {
    let mut todo: Vec<usize> = Vec::new();
    for (i, g) in groups.iter_mut().enumerate() {
        if g.centers <= 1 {
            g.diameter = Some(0);
        } else if g.pairs == g.centers * (g.centers - 1) / 2 {
            g.diameter = Some(1);
        } else if components::diameter_measurable(g.centers, g.pairs) {
            todo.push(i);
        }
    }
    while !todo.is_empty() {
        let mut batch: HashMap<u32, usize> = HashMap::new();
        let mut edges = 0u64;
        while let Some(&i) = todo.last() {
            if !batch.is_empty() && edges + groups[i].pairs > edge_budget {
                break;
            }
            edges += groups[i].pairs;
            batch.insert(groups[i].group, i);
            todo.pop();
        }
        // Local index of each center within its group.
        let mut local: HashMap<u32, u32> = HashMap::new();
        let mut next: HashMap<u32, u32> = HashMap::new();
        for d in 0..docs.len() as u32 {
            if docs.center[d as usize] != EMPTY && docs.is_center(d) && batch.contains_key(&label[d as usize])
            {
                let slot = next.entry(label[d as usize]).or_default();
                local.insert(d, *slot);
                *slot += 1;
            }
        }
        let mut links: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        for_each_pair(overlap, docs, |i, j, _| {
            let l = label[i as usize];
            if batch.contains_key(&l) {
                links.entry(l).or_default().push((local[&i], local[&j]));
            }
            Ok(())
        })?;
        for (l, i) in batch {
            let n = next.get(&l).copied().unwrap_or(0) as usize;
            let e = links.remove(&l).unwrap_or_default();
            groups[i].diameter = Some(components::diameter(n, &e));
        }
    }
    Ok(())
}

/// Unions every document with its center and every Overlap-table pair.
pub fn union_exact(docs: &Docs) -> UnionFind {
    let mut uf = UnionFind::new(docs.len());
    for d in 0..docs.len() {
        let c = docs.center[d];
        if c != EMPTY && c != d as u32 {
            uf.union(c, d as u32);
        }
    }
    uf
}

/// Writes `groups.csv`.
pub fn write_csv(path: &Path, groups: &[Group]) -> anyhow::Result<()> {
    let rows = groups.iter().map(|g| {
        [
            g.group.to_string(),
            g.documents.to_string(),
            g.centers.to_string(),
            g.pairs.to_string(),
            g.hosts.to_string(),
            g.diameter.map(|d| d.to_string()).unwrap_or_default(),
            format!("{:.4}", g.density),
            g.chained.to_string(),
            g.sample_url.clone(),
        ]
    });
    super::write_rows(
        path,
        &["group", "documents", "centers", "pairs", "hosts", "diameter", "density", "chained", "sample_url"],
        rows,
    )
}
