//! Near-replica groups (the paper's Table 2): each connected component of
//! two or more documents with its size, exact groups, links, distinct
//! hosts, a sample URL, and whether it looks chained (see
//! [`super::components`]), written to `groups.csv` largest first.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::store::analysis::documents::{Docs, EMPTY, Urls};
use crate::store::analysis::links::Links;

/// One component of two or more documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// Its smallest docID, which names it (its row until [`name`]).
    pub group: u32,
    pub documents: u64,
    /// Exact groups in it (distinct texts).
    pub centers: u64,
    /// Overlap-table pairs inside it.
    pub pairs: u64,
    /// Distinct hosts (documents without a host not counted).
    pub hosts: u64,
    /// The largest number of links between two of its centers; `None`
    /// where it was too large to measure.
    pub diameter: Option<u32>,
    /// Linked center pairs over all center pairs.
    pub density: f64,
    pub chained: bool,
    /// The URL of its smallest docID (see [`name`]).
    pub sample_url: String,
    /// The first [`HOSTS_NAMED`] hosts it spans, in order of their first
    /// document (the group's own host first), with its documents on each;
    /// filled in for the groups report.json and report.html list
    /// ([`first_hosts`]), empty in groups.csv's rows.
    pub first_hosts: Vec<HostShare>,
}

/// How many of its hosts a listed group names.
pub const HOSTS_NAMED: usize = 8;

/// A host a group spans and the group's documents on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostShare {
    pub host: String,
    pub documents: u64,
}

/// A member of a group as report.html lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub doc_id: u32,
    pub url: String,
    /// The center's docID, for a member that is an exact copy of another.
    pub copy_of: Option<u32>,
}

/// A group report.html shows, with its first members (the others are the
/// rows of docs.csv whose `near_group` is its `group`).
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub group: Group,
    pub members: Vec<Member>,
}

/// The groups with their members, from the members' rows
/// ([`first_members`]) and `urls` (holding theirs); `groups` are named
/// ([`name`]).
pub fn shown(groups: &[Group], members: Vec<Vec<u32>>, docs: &Docs, urls: &Urls) -> Vec<Shown> {
    groups
        .iter()
        .zip(members)
        .map(|(g, rows)| Shown {
            group: g.clone(),
            members: rows
                .into_iter()
                .map(|r| {
                    let center = docs.center(r);
                    Member {
                        doc_id: docs.doc_id(r),
                        url: urls.get(r).unwrap_or("").to_string(),
                        copy_of: (center != EMPTY && center != r).then(|| docs.doc_id(center)),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The first `per_group` members (smallest docIDs first) of each of
/// `groups`, named by row, in one pass over the rows: what report.html
/// lists under each group it shows, a bounded number whatever the groups'
/// sizes (docs.csv's `near_group` has them all).
pub fn first_members(docs: &Docs, links: &Links, groups: &[Group], per_group: usize) -> Vec<Vec<u32>> {
    let index: FxHashMap<u32, usize> = groups.iter().enumerate().map(|(i, g)| (g.group, i)).collect();
    let mut members: Vec<Vec<u32>> =
        groups.iter().map(|g| Vec::with_capacity(per_group.min(g.documents as usize))).collect();
    let mut open = groups.len();
    for row in 0..docs.len() as u32 {
        if open == 0 {
            break;
        }
        if let Some(&i) = links.group_of(docs, row).and_then(|l| index.get(&l))
            && members[i].len() < per_group
        {
            members[i].push(row);
            if members[i].len() == per_group.min(groups[i].documents as usize) {
                open -= 1;
            }
        }
    }
    members
}

/// The first `per_group` hosts each of `groups` spans, in order of their
/// first document, with the group's documents on each, in one pass over
/// the rows' hosts: what is held is bounded by the groups listed, not by
/// their sizes (a group of the same page on thousands of hosts names its
/// first few; its `hosts` counts them all). Documents without a host are
/// not counted, as in `hosts`.
pub fn first_hosts(
    docs: &Docs,
    links: &Links,
    groups: &[Group],
    per_group: usize,
) -> anyhow::Result<Vec<Vec<HostShare>>> {
    let index: FxHashMap<u32, usize> = groups.iter().enumerate().map(|(i, g)| (g.group, i)).collect();
    let mut seen: Vec<Vec<(u32, u64)>> = vec![Vec::new(); groups.len()];
    docs.host.for_each(|row, host| {
        if docs.hosts[host as usize].is_empty() {
            return Ok(());
        }
        if let Some(&i) = links.group_of(docs, row).and_then(|l| index.get(&l)) {
            let list = &mut seen[i];
            if let Some(at) = list.iter().position(|&(h, _)| h == host) {
                list[at].1 += 1;
            } else if list.len() < per_group {
                list.push((host, 1));
            }
        }
        Ok(())
    })?;
    Ok(seen
        .into_iter()
        .map(|list| {
            list.into_iter()
                .map(|(h, documents)| HostShare { host: docs.hosts[h as usize].to_string(), documents })
                .collect()
        })
        .collect())
}

/// Gives each group its sample URL, from `urls` (holding those of
/// the groups' rows), and names it by docID, as report.json shows it.
pub fn name(groups: &mut [Group], docs: &Docs, urls: &Urls) {
    for g in groups {
        g.sample_url = urls.get(g.group).unwrap_or("").to_string();
        g.group = docs.doc_id(g.group);
    }
}

/// The groups as they were built before the group table
/// ([`super::group_table`]): the whole list in memory, with a map from
/// each group to its figures. The tests' reference.
#[cfg(test)]
pub(crate) mod reference {
    use std::path::Path;

    use rustc_hash::FxHashMap;

    use super::Group;
    use crate::stages::report::{components, group_table};
    use crate::store::analysis::documents::Docs;
    use crate::store::analysis::links::Links;

    /// Builds the groups: sizes from the link pass's components, diameters
    /// from further passes over the table for components small enough, with
    /// at most `edge_budget` links held at once. They are named by row,
    /// without URLs, until [`name`].
    pub fn groups(
        docs: &Docs,
        links: &Links,
        overlap: &Path,
        edge_budget: u64,
    ) -> anyhow::Result<Vec<Group>> {
        let n = docs.len();
        let mut sizes: FxHashMap<u32, (u64, u64, u64)> = FxHashMap::default(); // documents, centers, degree sum
        let mut host_of_group: Vec<(u32, u32)> = Vec::new();
        let host_of = docs.host.to_vec();
        for d in 0..n as u32 {
            let Some(l) = links.group_of(docs, d) else { continue };
            let e = sizes.entry(l).or_default();
            e.0 += 1;
            if docs.is_center(d) {
                e.1 += 1;
                e.2 += u64::from(links.degree(d));
            }
            let host = host_of[d as usize];
            if !docs.hosts[host as usize].is_empty() {
                host_of_group.push((l, host));
            }
        }
        host_of_group.sort_unstable();
        host_of_group.dedup();
        let mut hosts: FxHashMap<u32, u64> = FxHashMap::default();
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
                first_hosts: Vec::new(),
            })
            .collect();
        groups.sort_by(|a, b| b.documents.cmp(&a.documents).then(a.group.cmp(&b.group)));
        measure_diameters(docs, links, overlap, edge_budget, &mut groups)?;
        for g in &mut groups {
            g.chained = components::chained(g.centers, g.pairs, g.diameter);
        }
        Ok(groups)
    }

    fn round4(x: f64) -> f64 {
        (x * 10_000.0).round() / 10_000.0
    }

    /// Fills `diameter` for the groups whose center graph can be searched, in
    /// batches of at most `edge_budget` links, one pass over the table each.
    /// The diameters as the group table measures them: the reference
    /// checks the rest.
    fn measure_diameters(
        docs: &Docs,
        links: &Links,
        overlap: &Path,
        edge_budget: u64,
        groups: &mut [Group],
    ) -> anyhow::Result<()> {
        let found = group_table::diameters(docs, links, overlap, edge_budget)?;
        for g in groups.iter_mut() {
            g.diameter =
                group_table::known_diameter(g.centers, g.pairs).or_else(|| found.get(&g.group).copied());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::report::group_table;
    use crate::stages::report::url_side::{self, UrlSource};
    use crate::store::analysis::documents::{self, load_docs, urls_of};
    use crate::store::analysis::host_column::HostColumnBuilder;

    #[test]
    fn groups_with_sizes_hosts_and_chains() {
        let dir = tempfile::tempdir().unwrap();
        let docs_csv = dir.path().join("docs.csv");
        // 0 and 1 are exact copies on two hosts; 2~3~4~5 is a chain on one
        // host plus a document without a host (5); 6 is alone.
        std::fs::write(
            &docs_csv,
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n\
             0,http://a/x,a,s:0,1,1,1,0,,0,,,,\n1,http://b/x,b,s:1,1,1,1,0,,0,,,,\n\
             2,http://c/1,c,s:2,1,1,1,2,,0,,,,\n3,http://c/2,c,s:3,1,1,1,3,,0,,,,\n4,http://c/3,c,s:4,1,1,1,4,,0,,,,\n\
             5,,,s:5,1,1,1,5,,0,,,,\n6,http://d/z,d,s:6,1,1,1,6,,0,,,,\n",
        )
        .unwrap();
        let overlap = dir.path().join("overlap.csv");
        std::fs::write(&overlap, "doc_i,doc_j,shared\n2,3,9\n3,4,9\n4,5,9\n").unwrap();
        let docs = load_docs(&docs_csv, 0, HostColumnBuilder::held(), |_, _, _| Ok(())).unwrap();
        let linked = Links::build(&docs, &overlap, |_, _| Ok(())).unwrap();
        // A budget of one link forces one batch per group.
        let table = group_table::build(&docs, &linked, &overlap, 1, 1 << 20, dir.path()).unwrap();
        let by_row = table.summary(usize::MAX).unwrap().shown;
        let mut got = by_row.clone();
        let mut wanted: Vec<u32> = got.iter().map(|g| g.group).collect();
        wanted.sort_unstable();
        name(&mut got, &docs, &urls_of(&docs_csv, &wanted, None).unwrap().0);
        let summary: Vec<String> = got
            .iter()
            .map(|g| {
                format!(
                    "{} {} {} {} {} {:?} {}",
                    g.group, g.documents, g.centers, g.pairs, g.hosts, g.diameter, g.chained
                )
            })
            .collect();
        // group documents centers pairs hosts diameter chained
        assert_eq!(summary, ["2 4 4 3 1 Some(3) true", "0 2 1 0 2 Some(0) false"]);
        assert_eq!(got[0].sample_url, "http://c/1");
        assert_eq!(got[0].density, 0.5);
        // groups.csv, its URLs in one window and in a window per group,
        // those of later windows from docs.csv again or from a side file.
        for (budget, with_side) in [(1 << 20, false), (0, false), (0, true)] {
            let mut windows = table.windows(budget, 10);
            let first = windows.next_window().unwrap().unwrap_or_default();
            let mut urls = first.urls();
            let side_path = dir.path().join("group-urls.bin");
            let mut side = if with_side {
                url_side::for_later_windows(&windows, &first, 7, side_path).unwrap()
            } else {
                None
            };
            // A window per group: the second group's URL comes later.
            assert_eq!(side.is_some(), with_side);
            documents::for_each_doc(&docs_csv, |r, row| {
                urls.add(r, row.url);
                side.iter_mut().for_each(|s| s.add(r, row.url));
                Ok(())
            })
            .unwrap();
            let out = dir.path().join("groups.csv");
            let gathered = urls.finish_capped();
            let side = side.map(url_side::SideWriter::finish).transpose().unwrap();
            let source = side.as_ref().map_or(UrlSource::Docs(&docs_csv), UrlSource::Side);
            group_table::write_csv(&out, &docs, source, windows, first, gathered).unwrap();
            assert_eq!(
                std::fs::read_to_string(&out).unwrap(),
                "group,documents,centers,pairs,hosts,diameter,density,chained,sample_url\n\
                 2,4,4,3,1,3,0.5000,true,http://c/1\n0,2,1,0,2,0,1.0000,false,http://a/x\n",
                "budget {budget}"
            );
        }
        // Members, smallest first and at most as many as asked; the group
        // of every row, none for the document alone.
        assert_eq!(first_members(&docs, &linked, &by_row, 3), [vec![2, 3, 4], vec![0, 1]]);
        let of: Vec<Option<u32>> = (0..7).map(|r| linked.group_of(&docs, r)).collect();
        assert_eq!(of, [Some(0), Some(0), Some(2), Some(2), Some(2), Some(2), None]);
    }
}
