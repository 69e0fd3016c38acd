//! Per host: its documents, how many have an exact copy, how many a
//! near-replica (anywhere in the crawl) and how many a recrawl could skip
//! (the savings' near-replica rule, [`super::savings`]), and the hosts it
//! shares most with, written to `host-summary.csv`, every host with a name, the most
//! near-replicas first; report.html shows the first rows.
//!
//! `hosts.csv` answers "which two hosts copy each other"; this table
//! answers "what about this host", which an operator asks first. The
//! partners come from the host-pair table ([`super::hosts`]), streamed
//! once: what is held grows with the hosts, not with their pairs (a few
//! counts and the [`PARTNERS`] best partners per host).

use std::path::Path;

use serde::Serialize;

use super::fields::Cell;
use super::hosts::HostTable;
use crate::store::analysis::documents::Docs;

/// Partner hosts a row names, most shared first.
pub const PARTNERS: usize = 3;

/// The per-document counts of each host (by its number in [`Docs`]).
pub struct HostCounts {
    documents: Vec<u32>,
    exact_copies: Vec<u32>,
    near_replicas: Vec<u32>,
    skippable: Vec<u32>,
}

impl HostCounts {
    /// Counts every document's host; `in_group(row)` says whether a
    /// document is in a near-replica group, `kept(row)` whether a recrawl
    /// keeps it.
    pub fn new(
        docs: &Docs,
        in_group: impl Fn(u32) -> bool,
        kept: impl Fn(u32) -> bool,
    ) -> anyhow::Result<HostCounts> {
        let hosts = docs.hosts.len();
        let mut c = HostCounts {
            documents: vec![0; hosts],
            exact_copies: vec![0; hosts],
            near_replicas: vec![0; hosts],
            skippable: vec![0; hosts],
        };
        docs.host.for_each(|d, h| {
            let h = h as usize;
            c.documents[h] += 1;
            c.exact_copies[h] += u32::from(docs.exact_size(d) >= 2);
            c.near_replicas[h] += u32::from(in_group(d));
            c.skippable[h] += u32::from(!kept(d));
            Ok(())
        })?;
        Ok(c)
    }
}

/// One row of host-summary.csv, as report.html shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostRow {
    pub host: String,
    pub documents: u64,
    pub exact_copies: u64,
    pub near_replicas: u64,
    /// Documents a recrawl could skip: an exact copy or a near-replica of
    /// a page it keeps, anywhere in the crawl.
    pub skippable: u64,
    /// Other hosts holding a replica of one of its documents.
    pub partner_hosts: u64,
    /// The partners with the most of its documents replicated on them,
    /// and how many, most first (ties by name).
    pub shares_most_with: Vec<(String, u64)>,
}

/// Writes `host-summary.csv` and returns its first `shown` rows.
///
/// Rows are ordered by near-replicas, then documents (both descending),
/// then name; documents without a host are left out, as in hosts.csv.
pub fn write_csv(
    path: &Path,
    docs: &Docs,
    counts: &HostCounts,
    table: &HostTable,
    shown: usize,
) -> anyhow::Result<Vec<HostRow>> {
    let hosts = docs.hosts.len();
    // Each host's best partners as (host, documents replicated there).
    // The table streams in name order of its pairs, so every host meets
    // its partners in name order, and keeping the first of equal counts
    // breaks ties by name.
    let mut best: Vec<[(u32, u32); PARTNERS]> = vec![[(0, 0); PARTNERS]; hosts];
    let mut partners = vec![0u32; hosts];
    let mut offer = |host: usize, partner: usize, n: u64| {
        if n == 0 {
            return;
        }
        partners[host] += 1;
        let n = n.min(u64::from(u32::MAX)) as u32;
        let list = &mut best[host];
        if let Some(at) = list.iter().position(|&(_, c)| c < n) {
            list[at..].rotate_right(1);
            list[at] = (partner as u32, n);
        }
    };
    table.for_each(|a, b, a_on_b, b_on_a| {
        offer(a, b, a_on_b);
        offer(b, a, b_on_a);
    })?;

    let mut order: Vec<u32> = (0..hosts as u32).filter(|&h| !docs.hosts[h as usize].is_empty()).collect();
    order.sort_unstable_by(|&x, &y| {
        let (x, y) = (x as usize, y as usize);
        (counts.near_replicas[y], counts.documents[y])
            .cmp(&(counts.near_replicas[x], counts.documents[x]))
            .then_with(|| docs.hosts[x].cmp(&docs.hosts[y]))
    });
    let named = |h: usize| -> Vec<(String, u64)> {
        best[h]
            .iter()
            .take_while(|&&(_, n)| n > 0)
            .map(|&(p, n)| (docs.hosts[p as usize].to_string(), u64::from(n)))
            .collect()
    };
    let rows = order.iter().map(|&h| {
        let h = h as usize;
        let mut text = String::new();
        for (i, &(p, n)) in best[h].iter().take_while(|&&(_, n)| n > 0).enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&docs.hosts[p as usize]);
            text.push('=');
            text.push_str(itoa::Buffer::new().format(n));
        }
        Ok([
            Cell::Text(&docs.hosts[h]),
            Cell::number(counts.documents[h]),
            Cell::number(counts.exact_copies[h]),
            Cell::number(counts.near_replicas[h]),
            Cell::number(counts.skippable[h]),
            Cell::number(partners[h]),
            Cell::Owned(text),
        ])
    });
    crate::store::write_rows(
        path,
        &[
            "host",
            "documents",
            "exact_copies",
            "near_replicas",
            "skippable",
            "partner_hosts",
            "shares_most_with",
        ],
        rows,
    )?;
    Ok(order
        .iter()
        .take(shown)
        .map(|&h| {
            let h = h as usize;
            HostRow {
                host: docs.hosts[h].to_string(),
                documents: counts.documents[h].into(),
                exact_copies: counts.exact_copies[h].into(),
                near_replicas: counts.near_replicas[h].into(),
                skippable: counts.skippable[h].into(),
                partner_hosts: partners[h].into(),
                shares_most_with: named(h),
            }
        })
        .collect())
}
