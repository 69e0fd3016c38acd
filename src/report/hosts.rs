//! Host-level overlap (the paper's pair-wise server overlap): for each pair
//! of hosts, how many documents of each have a replica on the other.
//!
//! A document d of host A is replicated on host B (B != A) when a document
//! of B is an exact copy of d, or is in the exact group of a center linked
//! to d's center in the Overlap table (F >= T). Direct links only, not
//! whole components, so a chain through a third host does not make two
//! hosts look like mirrors.
//!
//! The work is keyed by exact-group center: the set of (center, host)
//! entries, one per host holding a replica of the center's text, is built
//! from the groups and one pass over the table, then each document is
//! counted against its center's hosts. Memory is eight bytes per entry.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::histogram::percent;
use super::input::{Docs, EMPTY, for_each_pair};

/// A host mirrors another when more than this share of its non-empty
/// documents are replicated there ...
pub const MIRROR_SHARE: f64 = 0.5;
/// ... and at least this many, so that two hosts sharing one licence page
/// are not mirrors.
pub const MIRROR_MIN_DOCS: u64 = 2;

/// One pair of hosts with replication between them; `host_a < host_b`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPair {
    pub host_a: String,
    pub host_b: String,
    /// Non-empty documents of each host.
    pub docs_a: u64,
    pub docs_b: u64,
    /// Documents of A replicated on B, and of B on A.
    pub replicated_a_on_b: u64,
    pub replicated_b_on_a: u64,
    /// The same in percent of each host's documents.
    pub coverage_a: f64,
    pub coverage_b: f64,
    pub mirror: bool,
}

/// Whether `replicated` of `docs` documents make a mirror.
pub fn is_mirror(replicated: u64, docs: u64) -> bool {
    replicated >= MIRROR_MIN_DOCS && replicated as f64 > MIRROR_SHARE * docs as f64
}

fn entry(center: u32, host: u32) -> u64 {
    (u64::from(center) << 32) | u64::from(host)
}

/// The hosts of the entries for `center` in sorted `entries`.
fn hosts_of(entries: &[u64], center: u32) -> &[u64] {
    let lo = entries.partition_point(|&e| e < entry(center, 0));
    let hi = entries.partition_point(|&e| e <= entry(center, u32::MAX));
    &entries[lo..hi]
}

/// Every pair of hosts with replication between them, sorted by names,
/// by host number: a crawl can have millions of such pairs, and a row with
/// both names as strings took about 190 bytes each (330 MB of a 10 GB
/// crawl's 1.7 million pairs).
pub struct HostTable {
    /// `(a, b, a_on_b, b_on_a)`, with host `a`'s name before `b`'s.
    links: Vec<(u32, u32, u64, u64)>,
    /// Non-empty documents of each host.
    host_docs: Vec<u64>,
}

impl HostTable {
    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The pairs with their names and shares, in order.
    pub fn pairs<'a>(&'a self, docs: &'a Docs) -> impl Iterator<Item = HostPair> + 'a {
        self.links.iter().map(|&link| self.named(docs, link))
    }

    /// Whether a pair is a mirror pair, either way.
    fn is_mirror_pair(&self, (a, b, a_on_b, b_on_a): (u32, u32, u64, u64)) -> bool {
        is_mirror(a_on_b, self.host_docs[a as usize]) || is_mirror(b_on_a, self.host_docs[b as usize])
    }

    fn named(&self, docs: &Docs, link: (u32, u32, u64, u64)) -> HostPair {
        let (a, b, a_on_b, b_on_a) = link;
        let (docs_a, docs_b) = (self.host_docs[a as usize], self.host_docs[b as usize]);
        HostPair {
            host_a: docs.hosts[a as usize].clone(),
            host_b: docs.hosts[b as usize].clone(),
            docs_a,
            docs_b,
            replicated_a_on_b: a_on_b,
            replicated_b_on_a: b_on_a,
            coverage_a: percent(a_on_b, docs_a),
            coverage_b: percent(b_on_a, docs_b),
            mirror: self.is_mirror_pair(link),
        }
    }
}

/// Every pair of hosts with replication between them, sorted by names.
/// Documents without a host are left out.
pub fn host_pairs(docs: &Docs, overlap: &Path) -> anyhow::Result<HostTable> {
    let no_host = docs.hosts.iter().position(|h| h.is_empty()).map(|i| i as u32);
    let mut groups: Vec<u64> = (0..docs.len())
        .filter(|&d| docs.center[d] != EMPTY && Some(docs.host[d]) != no_host)
        .map(|d| entry(docs.center[d], docs.host[d]))
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let mut linked: Vec<u64> = Vec::new();
    let mut compact_at = 1 << 20;
    for_each_pair(overlap, docs, |i, j, _| {
        linked.extend(hosts_of(&groups, j).iter().map(|&e| entry(i, e as u32)));
        linked.extend(hosts_of(&groups, i).iter().map(|&e| entry(j, e as u32)));
        if linked.len() >= compact_at {
            linked.sort_unstable();
            linked.dedup();
            compact_at = (linked.len() * 2).max(1 << 20);
        }
        Ok(())
    })?;
    linked.extend_from_slice(&groups);
    drop(groups);
    linked.sort_unstable();
    linked.dedup();

    let mut host_docs = vec![0u64; docs.hosts.len()];
    let mut replicated: HashMap<(u32, u32), u64> = HashMap::new();
    for d in 0..docs.len() {
        let (center, host) = (docs.center[d], docs.host[d]);
        if center == EMPTY || Some(host) == no_host {
            continue;
        }
        host_docs[host as usize] += 1;
        for &e in hosts_of(&linked, center) {
            let other = e as u32;
            if other != host {
                *replicated.entry((host, other)).or_default() += 1;
            }
        }
    }
    let mut links: Vec<(u32, u32, u64, u64)> = Vec::new();
    for (&(a, b), &a_on_b) in &replicated {
        let (name_a, name_b) = (&docs.hosts[a as usize], &docs.hosts[b as usize]);
        if name_a > name_b {
            if !replicated.contains_key(&(b, a)) {
                // Only A -> B exists; the pair is written from B's side below.
                links.push((b, a, 0, a_on_b));
            }
            continue;
        }
        let b_on_a = replicated.get(&(b, a)).copied().unwrap_or(0);
        links.push((a, b, a_on_b, b_on_a));
    }
    drop(replicated);
    let name = |h: u32| docs.hosts[h as usize].as_str();
    links.sort_unstable_by(|x, y| (name(x.0), name(x.1)).cmp(&(name(y.0), name(y.1))));
    Ok(HostTable { links, host_docs })
}

/// Writes `hosts.csv`, one row per host pair.
pub fn write_csv(path: &Path, docs: &Docs, table: &HostTable) -> anyhow::Result<()> {
    let rows = table.pairs(docs).map(|p| {
        [
            p.host_a,
            p.host_b,
            p.docs_a.to_string(),
            p.docs_b.to_string(),
            p.replicated_a_on_b.to_string(),
            p.replicated_b_on_a.to_string(),
            format!("{:.4}", p.coverage_a),
            format!("{:.4}", p.coverage_b),
            p.mirror.to_string(),
        ]
    });
    let header = [
        "host_a",
        "host_b",
        "docs_a",
        "docs_b",
        "replicated_a_on_b",
        "replicated_b_on_a",
        "coverage_a",
        "coverage_b",
        "mirror",
    ];
    super::write_rows(path, &header, rows)
}

/// The mirror pairs, most covered first.
pub fn mirrors(docs: &Docs, table: &HostTable) -> Vec<HostPair> {
    // Only the mirror pairs are named: the table can hold millions.
    let mut m: Vec<HostPair> = table
        .links
        .iter()
        .filter(|&&link| table.is_mirror_pair(link))
        .map(|&link| table.named(docs, link))
        .collect();
    m.sort_by(|x, y| {
        let key = |p: &HostPair| p.coverage_a.max(p.coverage_b);
        key(y)
            .total_cmp(&key(x))
            .then(
                (y.replicated_a_on_b + y.replicated_b_on_a).cmp(&(x.replicated_a_on_b + x.replicated_b_on_a)),
            )
            .then((&x.host_a, &x.host_b).cmp(&(&y.host_a, &y.host_b)))
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_rule() {
        assert!(is_mirror(2, 3));
        assert!(!is_mirror(1, 1));
        assert!(!is_mirror(5, 10));
        assert!(is_mirror(6, 10));
    }

    #[test]
    fn replication_by_groups_and_links() {
        // Hosts a, b, c. 0@a and 2@b are exact copies; 1@a ~ 3@b by a
        // link; 4@c is linked to 3 only.
        let docs = Docs {
            center: vec![0, 1, 0, 3, 4],
            bytes: vec![1; 5],
            host: vec![0, 0, 1, 1, 2],
            hosts: vec!["a".into(), "b".into(), "c".into()],
            group_size: vec![2, 1, 0, 1, 1],
        };
        let dir = tempfile::tempdir().unwrap();
        let o = dir.path().join("overlap.csv");
        std::fs::write(&o, "doc_i,doc_j,shared\n1,3,20\n3,4,20\n").unwrap();
        let table = host_pairs(&docs, &o).unwrap();
        let pairs: Vec<HostPair> = table.pairs(&docs).collect();
        let got: Vec<(&str, &str, u64, u64, bool)> = pairs
            .iter()
            .map(|p| {
                (p.host_a.as_str(), p.host_b.as_str(), p.replicated_a_on_b, p.replicated_b_on_a, p.mirror)
            })
            .collect();
        assert_eq!(got, vec![("a", "b", 2, 2, true), ("b", "c", 1, 1, false)]);
        assert_eq!(pairs[0].coverage_a, 100.0);
    }
}
