//! Mirror sets: the mirror pairs of hosts.csv joined into sets, a site and
//! all its full or partial mirrors, so that one site with 8 mirrors is one
//! row rather than 36 pairs. A set is a connected component of the mirror
//! pairs; its site is the host with the most documents (ties by name), and
//! each other host is listed with the coverage each way between it and the
//! site, where the two are a pair (a host that mirrors only another mirror
//! has none).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::hosts::HostPair;
use crate::store::analysis::union_find::UnionFind;

/// One site and its mirrors.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MirrorSet {
    pub site: String,
    /// Non-empty documents of the site.
    pub site_docs: u64,
    /// The other hosts of the set, the most documents first (ties by name).
    pub mirrors: Vec<SetMember>,
}

/// A host of a mirror set other than its site.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetMember {
    pub host: String,
    pub docs: u64,
    /// Percent of the site's documents replicated on this host, and of
    /// this host's on the site; null where the two are not a host pair.
    pub coverage_of_site: Option<f64>,
    pub coverage_of_host: Option<f64>,
}

/// The mirror sets of `mirrors` (hosts.csv's mirror pairs), the most hosts
/// first, then the most documents of the site, then by site name.
pub fn of(mirrors: &[HostPair]) -> Vec<MirrorSet> {
    let mut docs: BTreeMap<&str, u64> = BTreeMap::new();
    for p in mirrors {
        docs.insert(&p.host_a, p.docs_a);
        docs.insert(&p.host_b, p.docs_b);
    }
    let index: HashMap<&str, u32> = docs.keys().enumerate().map(|(i, h)| (*h, i as u32)).collect();
    let names: Vec<&str> = docs.keys().copied().collect();
    let mut uf = UnionFind::new(names.len());
    for p in mirrors {
        uf.union(index[p.host_a.as_str()], index[p.host_b.as_str()]);
    }
    let mut sets: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        sets.entry(uf.find(i as u32)).or_default().push(name);
    }
    let pair: HashMap<(&str, &str), &HostPair> =
        mirrors.iter().map(|p| ((p.host_a.as_str(), p.host_b.as_str()), p)).collect();
    let by_size = |a: &&str, b: &&str| docs[b].cmp(&docs[a]).then(a.cmp(b));
    let mut out: Vec<MirrorSet> = sets
        .into_values()
        .map(|mut hosts| {
            hosts.sort_by(by_size);
            let site = hosts[0];
            let mirrors = hosts[1..]
                .iter()
                .map(|&host| {
                    // Coverage of the site on the host, and of the host on the site.
                    let (of_site, of_host) = match (pair.get(&(site, host)), pair.get(&(host, site))) {
                        (Some(p), _) => (Some(p.coverage_a), Some(p.coverage_b)),
                        (None, Some(p)) => (Some(p.coverage_b), Some(p.coverage_a)),
                        (None, None) => (None, None),
                    };
                    SetMember {
                        host: host.to_string(),
                        docs: docs[host],
                        coverage_of_site: of_site,
                        coverage_of_host: of_host,
                    }
                })
                .collect();
            MirrorSet { site: site.to_string(), site_docs: docs[site], mirrors }
        })
        .collect();
    out.sort_by(|a, b| {
        b.mirrors.len().cmp(&a.mirrors.len()).then(b.site_docs.cmp(&a.site_docs)).then(a.site.cmp(&b.site))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: &str, b: &str, docs_a: u64, docs_b: u64, a_on_b: u64, b_on_a: u64) -> HostPair {
        HostPair {
            host_a: a.into(),
            host_b: b.into(),
            docs_a,
            docs_b,
            replicated_a_on_b: a_on_b,
            replicated_b_on_a: b_on_a,
            coverage_a: 100.0 * a_on_b as f64 / docs_a as f64,
            coverage_b: 100.0 * b_on_a as f64 / docs_b as f64,
            mirror: true,
        }
    }

    #[test]
    fn a_site_with_its_mirrors_is_one_set_whatever_the_pairs() {
        // A site with three mirrors: six pairs among the four hosts, and a
        // host that mirrors only one of the mirrors; and a set of two apart.
        let pairs = vec![
            pair("a.mirror", "b.mirror", 10, 10, 10, 10),
            pair("a.mirror", "site.org", 10, 20, 10, 10),
            pair("b.mirror", "site.org", 10, 20, 10, 10),
            pair("c.mirror", "site.org", 5, 20, 5, 5),
            pair("a.mirror", "c.mirror", 10, 5, 5, 5),
            pair("b.mirror", "c.mirror", 10, 5, 5, 5),
            pair("b.mirror", "d.far", 10, 2, 2, 2),
            pair("x.one", "y.two", 4, 3, 3, 3),
        ];
        let sets = of(&pairs);
        assert_eq!(sets.len(), 2);
        assert_eq!((sets[0].site.as_str(), sets[0].site_docs), ("site.org", 20));
        let hosts: Vec<&str> = sets[0].mirrors.iter().map(|m| m.host.as_str()).collect();
        assert_eq!(hosts, ["a.mirror", "b.mirror", "c.mirror", "d.far"]);
        let a = &sets[0].mirrors[0];
        // 10 of site.org's 20 on a.mirror, all 10 of a.mirror's on site.org.
        assert_eq!((a.coverage_of_site, a.coverage_of_host), (Some(50.0), Some(100.0)));
        assert_eq!(sets[0].mirrors[3].coverage_of_site, None, "d.far mirrors b.mirror only");
        assert_eq!((sets[1].site.as_str(), sets[1].mirrors.len()), ("x.one", 1));
    }
}
