//! "Against the reference": in an analysis made with `--against REF_DIR`,
//! how much of this crawl the reference already holds, in all and per
//! host, from `against.csv` and `docs.csv`'s hosts.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::store::OutDir;
use crate::store::against::for_each_row;
use crate::store::analysis::documents;
use crate::store::analysis::percent;
use crate::store::manifest::Manifest;

/// Hosts listed in report.json and the page, those with the most pages
/// first.
pub const HOSTS_SHOWN: usize = 50;

/// The report.json section `against`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Against {
    /// The reference analysis, as given to `--against`.
    pub reference: String,
    pub rule: &'static str,
    /// Non-empty documents of this crawl, those the reference holds, as
    /// exact copies and as near-replicas only.
    pub documents: u64,
    pub held: u64,
    pub exact: u64,
    pub near: u64,
    pub held_percent: f64,
    /// Their chunks (each document's set), and those some reference page
    /// holds.
    pub chunks: u64,
    pub chunks_in_reference: u64,
    pub chunks_percent: f64,
    /// Hosts with non-empty documents.
    pub host_count: u64,
    /// The [`HOSTS_SHOWN`] hosts with the most documents (then by name).
    pub hosts: Vec<AgainstHost>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AgainstHost {
    pub host: String,
    pub documents: u64,
    pub held: u64,
    pub held_percent: f64,
    pub chunks: u64,
    pub chunks_in_reference: u64,
    pub chunks_percent: f64,
}

const RULE: &str = "A page is held by the reference when the reference has its exact text, or a page that passes \
                    the analysis's criterion with it; its chunks are held when some reference page has them.";

/// The section, when the analysis was counted against a reference.
pub(super) fn read(out: &OutDir, manifest: &Manifest) -> anyhow::Result<Option<Against>> {
    let Some(settings) = manifest.pairs.as_ref().and_then(|p| p.against.as_ref()) else { return Ok(None) };
    if !out.against().is_file() {
        return Ok(None);
    }
    // Each row's host, and whether it is empty.
    let mut hosts: Vec<(u32, bool)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut numbers: FxHashMap<String, u32> = FxHashMap::default();
    documents::for_each_doc(&out.docs(), |_, doc| {
        let next = numbers.len() as u32;
        let n = *numbers.entry(doc.host.to_string()).or_insert_with(|| {
            names.push(doc.host.to_string());
            next
        });
        hosts.push((n, doc.center.is_none()));
        Ok(())
    })?;
    let mut per_host = vec![AgainstHost::default(); names.len()];
    let mut s = Against { reference: settings.reference.clone(), rule: RULE, ..Against::default() };
    let mut row = 0usize;
    for_each_row(&out.against(), |r| {
        let Some(&(host, empty)) = hosts.get(row) else {
            anyhow::bail!("{} has more rows than docs.csv", out.against().display());
        };
        row += 1;
        if empty {
            return Ok(());
        }
        let h = &mut per_host[host as usize];
        for (documents, held, chunks, in_ref) in [
            (&mut s.documents, &mut s.held, &mut s.chunks, &mut s.chunks_in_reference),
            (&mut h.documents, &mut h.held, &mut h.chunks, &mut h.chunks_in_reference),
        ] {
            *documents += 1;
            *held += u64::from(r.held);
            *chunks += u64::from(r.chunks);
            *in_ref += u64::from(r.chunks_in_reference);
        }
        s.exact += u64::from(r.exact);
        Ok(())
    })?;
    if row != hosts.len() {
        anyhow::bail!(
            "{} has {row} rows and docs.csv {}: the analysis is damaged",
            out.against().display(),
            hosts.len()
        );
    }
    s.near = s.held - s.exact;
    s.held_percent = percent(s.held, s.documents);
    s.chunks_percent = percent(s.chunks_in_reference, s.chunks);
    let mut shown: Vec<AgainstHost> = per_host
        .into_iter()
        .zip(names)
        .filter(|(h, _)| h.documents > 0)
        .map(|(mut h, name)| {
            h.host = name;
            h.held_percent = percent(h.held, h.documents);
            h.chunks_percent = percent(h.chunks_in_reference, h.chunks);
            h
        })
        .collect();
    s.host_count = shown.len() as u64;
    shown.sort_by(|a, b| b.documents.cmp(&a.documents).then_with(|| a.host.cmp(&b.host)));
    shown.truncate(HOSTS_SHOWN);
    s.hosts = shown;
    Ok(Some(s))
}
