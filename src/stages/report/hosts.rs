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
//! from the groups and one pass over the table; then each center's
//! documents are counted against its hosts, one center at a time.
//!
//! # Memory
//!
//! The entries grow with the crawl's documents and links, and the host
//! pairs with its links (1.7 million host pairs for a 10.8 GB crawl of 1.3
//! million pages), so all are held within the budget the caller passes
//! and spilled to its scratch directory beyond it, each in a quarter:
//!
//! - a request per pair of the Overlap table and side ("the hosts of this
//!   center's group are replicas of that one's"), sorted by the first
//!   center;
//! - the entries of the exact groups themselves, sorted by center: only
//!   of groups with a pair or of two documents or more, since a lone
//!   document without a pair replicates nothing;
//! - the linked entries, the groups' own and those the requests give when
//!   read beside them, in a buffer sorted and deduplicated when it fills;
//!   when that does not halve it, the buffer is written to a scratch file,
//!   read back in center order through [`crate::store::sort`];
//! - the pair counts are summed in a hash map of half the budget; a full
//!   map is written to a scratch file of partial counts, which are sorted
//!   in name order through [`crate::store::sort`] and summed into the table, a
//!   record file that [`write_csv`] and [`mirrors`] stream. When the map
//!   never fills, the table is the map, sorted in memory.
//!
//! Names are compared once: hosts are sorted by name into ranks, and
//! every table is ordered by rank. What stays in memory beyond the budget
//! grows with the hosts (a rank and a document count per host) and with
//! the documents by a bit each (the centers with a pair).

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::fields::{self, Cell};
use super::histogram::percent;
use crate::store::analysis::documents::{Docs, EMPTY, RankBits, for_each_pair};
use crate::store::analysis::host_names::HostNames;
use crate::store::sort::{Batched, SortedReader, SortedRecords, SpillFile};
use crate::store::{Header, Record, RecordReader, RecordWriter, le_u32, le_u64};

/// A host mirrors another when more than this share of its non-empty
/// documents are replicated there ...
pub const MIRROR_SHARE: f64 = 0.5;
/// ... and at least this many, so that two hosts sharing one licence page
/// are not mirrors.
pub const MIRROR_MIN_DOCS: u64 = 2;

/// Bytes one pair takes in the count map: 16 of key and counts and one of
/// control, over the map's load factor, with room for the old table while
/// it grows.
const COUNT_BYTES: u64 = 64;

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

/// Two `u32` packed so that the packed values sort by the first, then by
/// the second: a (center, host) entry, or a pair of host ranks.
fn entry(high: u32, low: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(low)
}

/// A (center, host) entry as [`entry`] packs it. Scratch record kind 7,
/// 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(u64);

impl Record for Entry {
    const KIND: u32 = 7;
    const SIZE: usize = 8;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.0.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        Entry(le_u64(&b[..8]))
    }
}

/// Replication between two hosts named by rank, `a < b`: documents of `a`
/// with a replica on `b`, and of `b` on `a` (a host holds fewer than 2^32
/// documents). Ordered by ranks first, the table's order. Scratch record
/// kind 8, 16 bytes, for the partial counts and for the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct HostLink {
    a: u32,
    b: u32,
    a_on_b: u32,
    b_on_a: u32,
}

impl Record for HostLink {
    const KIND: u32 = 8;
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        for (i, v) in [self.a, self.b, self.a_on_b, self.b_on_a].into_iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    fn decode(b: &[u8]) -> Self {
        let at = |i: usize| le_u32(&b[i * 4..i * 4 + 4]);
        HostLink { a: at(0), b: at(1), a_on_b: at(2), b_on_a: at(3) }
    }
}

/// Where the table's pairs are: in memory when the counts fitted the
/// budget, else in a record file of [`HostLink`]s in the scratch directory.
enum Links {
    Memory(Vec<HostLink>),
    File { path: PathBuf, len: u64 },
}

/// Every pair of hosts with replication between them, in name order, by
/// host rank: a crawl can have millions of such pairs, which is why they
/// are streamed from [`Links`] and named one at a time (a row with both
/// names as strings took about 190 bytes).
pub struct HostTable {
    links: Links,
    /// The host number of each rank.
    by_rank: Vec<u32>,
    /// Non-empty documents of each host.
    host_docs: Vec<u64>,
}

impl HostTable {
    pub fn len(&self) -> usize {
        match &self.links {
            Links::Memory(links) => links.len(),
            Links::File { len, .. } => *len as usize,
        }
    }

    /// The pairs with their names and shares, in order; reading the table
    /// file can fail. (The tests read the table so; [`write_csv`] names
    /// the pairs by reference.)
    #[cfg(test)]
    pub fn pairs<'a>(&'a self, docs: &'a Docs) -> impl Iterator<Item = anyhow::Result<HostPair>> + 'a {
        self.links().map(move |link| link.map(|link| self.named(docs, link)))
    }

    /// The links in order, read through a buffer when on disk: mapping the
    /// file would keep what was read resident.
    fn links(&self) -> Box<dyn Iterator<Item = anyhow::Result<HostLink>> + '_> {
        match &self.links {
            Links::Memory(links) => Box::new(links.iter().copied().map(Ok)),
            Links::File { path, .. } => match RecordReader::<HostLink>::open(path) {
                Ok(mut reader) => Box::new(std::iter::from_fn(move || reader.next_record().transpose())),
                Err(e) => Box::new(std::iter::once(Err(e))),
            },
        }
    }

    /// Calls `f(a, b, a_on_b, b_on_a)` for every pair in order, with the
    /// hosts' numbers in [`Docs`] and the documents of each replicated on
    /// the other.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, u64, u64)) -> anyhow::Result<()> {
        for link in self.links() {
            let link = link?;
            let (a, b) = self.hosts(link);
            f(a, b, link.a_on_b.into(), link.b_on_a.into());
        }
        Ok(())
    }

    /// The host numbers of a link's two ranks.
    fn hosts(&self, link: HostLink) -> (usize, usize) {
        (self.by_rank[link.a as usize] as usize, self.by_rank[link.b as usize] as usize)
    }

    /// Whether a pair is a mirror pair, either way.
    fn is_mirror_pair(&self, link: HostLink) -> bool {
        let (a, b) = self.hosts(link);
        is_mirror(link.a_on_b.into(), self.host_docs[a]) || is_mirror(link.b_on_a.into(), self.host_docs[b])
    }

    fn named(&self, docs: &Docs, link: HostLink) -> HostPair {
        let (a, b) = self.hosts(link);
        let (docs_a, docs_b) = (self.host_docs[a], self.host_docs[b]);
        let (a_on_b, b_on_a) = (u64::from(link.a_on_b), u64::from(link.b_on_a));
        HostPair {
            host_a: docs.hosts[a].to_string(),
            host_b: docs.hosts[b].to_string(),
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
/// Documents without a host are left out. Everything is held within about
/// `budget` bytes, spilled to files in `scratch` beyond it (see the module
/// comment); the table may be one of them, so `scratch` must outlive it.
///
/// Each sort is given half of what it may take: `extsort` grows its
/// buffer by doubling, up to about twice the segment it was asked for.
pub fn host_pairs(docs: &Docs, overlap: &Path, budget: u64, scratch: &Path) -> anyhow::Result<HostTable> {
    let no_host = docs.hosts.iter().position(|h| h.is_empty()).map(|i| i as u32);
    let requests = requests(docs, overlap, budget / 4, scratch)?;
    let (own, host_docs) = own_entries(docs, no_host, &requests.paired, budget / 4, scratch)?;
    let linked = linked_entries(&own, requests.sorted, budget / 4, scratch)?;
    let (rank, by_rank) = name_ranks(&docs.hosts);
    let mut counts = PairCounts::new(budget / 2, scratch);
    let mut runs = CenterRuns::new(&own)?;
    let mut mine = Vec::new();
    linked.for_each_center(budget / 4, |center, hosts| {
        runs.seek(center, &mut mine)?;
        for &(host, n) in &mine {
            for &other in hosts.iter().filter(|&&o| o != host) {
                counts.add(rank[host as usize], rank[other as usize], n)?;
            }
        }
        Ok(())
    })?;
    drop(runs);
    drop(own);
    Ok(HostTable { links: counts.finish(budget / 2, scratch)?, by_rank, host_docs })
}

/// What one pass over the Overlap table gives the host tables: the centers
/// with a pair, and a request per pair and side, `entry(from, to)`: the
/// hosts of `from`'s exact group are replicas of `to`'s text.
struct Requests {
    paired: RankBits,
    sorted: Batched<Entry>,
}

/// Reads the Overlap table into [`Requests`], held within `budget` bytes.
fn requests(docs: &Docs, overlap: &Path, budget: u64, scratch: &Path) -> anyhow::Result<Requests> {
    let mut paired = RankBits::new(docs.len());
    let mut sorted = Batched::new(budget, docs.len() as u64, scratch.join("hosts-requests.fpd"));
    for_each_pair(overlap, docs, |i, j, _| {
        paired.insert(i);
        paired.insert(j);
        sorted.push(Entry(entry(i, j)))?;
        sorted.push(Entry(entry(j, i)))
    })?;
    Ok(Requests { paired, sorted })
}

/// The (center, host) entries of the exact groups, one per non-empty
/// document with a host, sorted within `budget` bytes, with the number of
/// such documents on each host. Only the groups that can count toward a
/// pair of hosts keep their entries: those with a pair in the Overlap
/// table, and those of two documents or more. A group of one document
/// without a pair (most of a crawl) replicates nothing, and holding an
/// entry for every document took 12 bytes a document whatever the budget.
fn own_entries(
    docs: &Docs,
    no_host: Option<u32>,
    paired: &RankBits,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<(SortedRecords<Entry>, Vec<u64>)> {
    let mut host_docs = vec![0u64; docs.hosts.len()];
    let mut own = Batched::new(budget, docs.len() as u64, scratch.join("hosts-own.fpd"));
    docs.host.for_each(|d, host| {
        let center = docs.center(d);
        if center == EMPTY || Some(host) == no_host {
            return Ok(());
        }
        host_docs[host as usize] += 1;
        if paired.contains(center) || docs.group_size(center) >= 2 {
            own.push(Entry(entry(center, host)))?;
        }
        Ok(())
    })?;
    Ok((own.finish(&scratch.join("hosts-own.sorted.fpd"))?, host_docs))
}

/// The (center, host) entries, one per host holding a replica of the
/// center's text: the exact groups' own, and for every request the hosts
/// of the `from` side's group under the `to` side, found by reading the
/// requests sorted by `from` beside the own entries.
fn linked_entries(
    own: &SortedRecords<Entry>,
    requests: Batched<Entry>,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<LinkedEntries> {
    let mut linked = LinkedEntries::new(budget, scratch);
    let mut reader = own.reader()?;
    while let Some(Entry(e)) = reader.next_record()? {
        linked.push(e)?;
    }
    let mut runs = CenterRuns::new(own)?;
    let (mut hosts, mut from) = (Vec::new(), None);
    requests.sorted(|Entry(request)| {
        let (of, to) = ((request >> 32) as u32, request as u32);
        if from != Some(of) {
            runs.seek(of, &mut hosts)?;
            from = Some(of);
        }
        for &(host, _) in &hosts {
            linked.push(entry(to, host))?;
        }
        Ok(())
    })?;
    Ok(linked)
}

/// Sorted (center, host) entries read center by center, each host of a
/// center once with its number of documents.
struct CenterRuns<'a> {
    reader: SortedReader<'a, Entry>,
    next: Option<u64>,
}

impl<'a> CenterRuns<'a> {
    fn new(entries: &'a SortedRecords<Entry>) -> anyhow::Result<CenterRuns<'a>> {
        let mut reader = entries.reader()?;
        let next = reader.next_record()?.map(|Entry(e)| e);
        Ok(CenterRuns { reader, next })
    }

    /// Fills `hosts` with the (host, documents) of `center`, none when it
    /// has no entry. Centers are asked for in ascending order.
    fn seek(&mut self, center: u32, hosts: &mut Vec<(u32, u32)>) -> anyhow::Result<()> {
        hosts.clear();
        while let Some(e) = self.next {
            match ((e >> 32) as u32).cmp(&center) {
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => match hosts.last_mut() {
                    Some((host, n)) if *host == e as u32 => *n += 1,
                    _ => hosts.push((e as u32, 1)),
                },
            }
            self.next = self.reader.next_record()?.map(|Entry(e)| e);
        }
        Ok(())
    }
}

/// Each host's rank in name order, and the host of each rank. Host names
/// are distinct, so ordering by ranks is ordering by names, without
/// comparing strings per pair.
fn name_ranks(hosts: &HostNames) -> (Vec<u32>, Vec<u32>) {
    let mut by_rank: Vec<u32> = (0..hosts.len() as u32).collect();
    by_rank.sort_unstable_by(|&x, &y| hosts[x as usize].cmp(&hosts[y as usize]));
    let mut rank = vec![0u32; hosts.len()];
    for (r, &h) in by_rank.iter().enumerate() {
        rank[h as usize] = r as u32;
    }
    (rank, by_rank)
}

/// The linked entries, deduplicated in a buffer of at most `cap`, and
/// written to a scratch file when the buffer cannot hold them.
struct LinkedEntries {
    buf: Vec<u64>,
    cap: usize,
    spill: SpillFile<Entry>,
}

impl LinkedEntries {
    fn new(budget: u64, scratch: &Path) -> Self {
        let cap = (budget / Entry::SIZE as u64).max(16) as usize;
        LinkedEntries { buf: Vec::new(), cap, spill: SpillFile::new(scratch.join("hosts-linked.fpd")) }
    }

    fn push(&mut self, e: u64) -> anyhow::Result<()> {
        if self.buf.len() >= self.cap {
            self.compact()?;
        }
        crate::base::memory::grow_within(&mut self.buf, self.cap);
        self.buf.push(e);
        Ok(())
    }

    /// Sorts and deduplicates the buffer, and writes it to the scratch
    /// file when that does not free half of it. Entries repeat (the groups
    /// linked to a center share hosts), so the buffer takes many more
    /// entries than it holds before it spills, if ever.
    fn compact(&mut self) -> anyhow::Result<()> {
        self.buf.sort_unstable();
        self.buf.dedup();
        if self.buf.len() > self.cap / 2 {
            self.spill.write(self.buf.drain(..).map(Entry))?;
        }
        Ok(())
    }

    /// Calls `f` with every center and its distinct hosts in ascending
    /// order, center by center; spilled entries are sorted back within
    /// `budget`, after the buffer is freed.
    fn for_each_center(
        mut self,
        budget: u64,
        f: impl FnMut(u32, &[u32]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut by_center = ByCenter { f, center: None, hosts: Vec::new(), last: None };
        if self.spill.is_used() {
            self.spill.write(self.buf.drain(..).map(Entry))?;
            drop(self.buf);
            self.spill.sorted(budget, |Entry(e)| by_center.push(e))?;
        } else {
            self.buf.sort_unstable();
            for &e in &self.buf {
                by_center.push(e)?;
            }
        }
        by_center.finish()
    }
}

/// Sorted entries gathered per center, repeats skipped.
struct ByCenter<F> {
    f: F,
    center: Option<u32>,
    hosts: Vec<u32>,
    last: Option<u64>,
}

impl<F: FnMut(u32, &[u32]) -> anyhow::Result<()>> ByCenter<F> {
    fn push(&mut self, e: u64) -> anyhow::Result<()> {
        if self.last == Some(e) {
            return Ok(());
        }
        self.last = Some(e);
        let center = (e >> 32) as u32;
        if self.center != Some(center) {
            self.finish_center()?;
            self.center = Some(center);
        }
        self.hosts.push(e as u32);
        Ok(())
    }

    fn finish_center(&mut self) -> anyhow::Result<()> {
        if let Some(center) = self.center {
            (self.f)(center, &self.hosts)?;
        }
        self.hosts.clear();
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<()> {
        self.finish_center()
    }
}

/// Documents of each host replicated on each other host, keyed by the
/// pair's ranks: summed in a map of at most `cap` pairs, which is written
/// to a scratch file of partial counts whenever it fills.
struct PairCounts {
    map: FxHashMap<u64, (u32, u32)>,
    cap: usize,
    spill: SpillFile<HostLink>,
}

impl PairCounts {
    fn new(budget: u64, scratch: &Path) -> Self {
        let cap = (budget / COUNT_BYTES).max(1) as usize;
        PairCounts {
            map: FxHashMap::default(),
            cap,
            spill: SpillFile::new(scratch.join("hosts-partial.fpd")),
        }
    }

    /// Counts `n` documents of the host ranked `from` as replicated on the
    /// host ranked `to`.
    fn add(&mut self, from: u32, to: u32, n: u32) -> anyhow::Result<()> {
        if from < to {
            self.map.entry(entry(from, to)).or_default().0 += n;
        } else {
            self.map.entry(entry(to, from)).or_default().1 += n;
        }
        if self.map.len() >= self.cap {
            self.spill.write(self.map.drain().map(host_link))?;
        }
        Ok(())
    }

    /// The table: the map sorted in memory when it never filled; else the
    /// partial counts, the map freed, sorted within `budget` and summed
    /// into a table file in `scratch`.
    fn finish(mut self, budget: u64, scratch: &Path) -> anyhow::Result<Links> {
        if !self.spill.is_used() {
            let mut links: Vec<HostLink> = self.map.drain().map(host_link).collect();
            links.sort_unstable();
            return Ok(Links::Memory(links));
        }
        self.spill.write(self.map.drain().map(host_link))?;
        drop(self.map);
        let path = scratch.join("hosts-table.fpd");
        let len = sum_partials(self.spill, &path, budget)?;
        Ok(Links::File { path, len })
    }
}

/// A count map's entry as a link.
fn host_link((pair, (a_on_b, b_on_a)): (u64, (u32, u32))) -> HostLink {
    HostLink { a: (pair >> 32) as u32, b: pair as u32, a_on_b, b_on_a }
}

/// Writes to `table` the partial counts summed per pair, in rank order,
/// and returns the number of pairs.
fn sum_partials(partial: SpillFile<HostLink>, table: &Path, budget: u64) -> anyhow::Result<u64> {
    let mut w = RecordWriter::<HostLink>::create(table, Header::new::<HostLink>("", true, 0, 1))?;
    let mut pair: Option<HostLink> = None;
    partial.sorted(budget, |link| {
        match &mut pair {
            Some(p) if (p.a, p.b) == (link.a, link.b) => {
                p.a_on_b += link.a_on_b;
                p.b_on_a += link.b_on_a;
            }
            _ => {
                if let Some(done) = pair.replace(link) {
                    w.push(&done)?;
                }
            }
        }
        Ok(())
    })?;
    if let Some(done) = pair {
        w.push(&done)?;
    }
    w.finish()
}

/// Writes `hosts.csv`, one row per host pair, naming each pair by
/// reference: a [`HostPair`] a row took two copies of names.
pub fn write_csv(path: &Path, docs: &Docs, table: &HostTable) -> anyhow::Result<()> {
    let rows = table.links().map(|link| {
        link.map(|link| {
            let (a, b) = table.hosts(link);
            let (docs_a, docs_b) = (table.host_docs[a], table.host_docs[b]);
            [
                docs.hosts[a].into(),
                docs.hosts[b].into(),
                Cell::number(docs_a),
                Cell::number(docs_b),
                Cell::number(link.a_on_b),
                Cell::number(link.b_on_a),
                Cell::fixed4(percent(link.a_on_b.into(), docs_a)),
                Cell::fixed4(percent(link.b_on_a.into(), docs_b)),
                fields::flag(table.is_mirror_pair(link)),
            ]
        })
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
    crate::store::write_rows(path, &header, rows)
}

/// The mirror pairs, most covered first.
pub fn mirrors(docs: &Docs, table: &HostTable) -> anyhow::Result<Vec<HostPair>> {
    // Only the mirror pairs are named: the table can hold millions.
    let mut m: Vec<HostPair> = Vec::new();
    for link in table.links() {
        let link = link?;
        if table.is_mirror_pair(link) {
            m.push(table.named(docs, link));
        }
    }
    m.sort_by(|x, y| {
        let key = |p: &HostPair| p.coverage_a.max(p.coverage_b);
        key(y)
            .total_cmp(&key(x))
            .then(
                (y.replicated_a_on_b + y.replicated_b_on_a).cmp(&(x.replicated_a_on_b + x.replicated_b_on_a)),
            )
            .then((&x.host_a, &x.host_b).cmp(&(&y.host_a, &y.host_b)))
    });
    Ok(m)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::store::analysis::documents::Centers;

    #[test]
    fn mirror_rule() {
        assert!(is_mirror(2, 3));
        assert!(!is_mirror(1, 1));
        assert!(!is_mirror(5, 10));
        assert!(is_mirror(6, 10));
    }

    /// A pair as names, counts either way and whether it is a mirror pair.
    type Row = (String, String, u64, u64, bool);

    /// The table's rows, and its mirror pairs.
    fn rows(docs: &Docs, table: &HostTable) -> (Vec<Row>, Vec<HostPair>) {
        let rows = table
            .pairs(docs)
            .map(|p| {
                let p = p.unwrap();
                (p.host_a, p.host_b, p.replicated_a_on_b, p.replicated_b_on_a, p.mirror)
            })
            .collect();
        (rows, mirrors(docs, table).unwrap())
    }

    #[test]
    fn replication_by_groups_and_links() {
        // Hosts a, b, c. 0@a and 2@b are exact copies; 1@a ~ 3@b by a
        // link; 4@c is linked to 3 only.
        let docs = Docs {
            centers: Centers::from_rows(&[0, 1, 0, 3, 4]),
            host: vec![0, 0, 1, 1, 2].into(),
            hosts: vec!["a", "b", "c"].into(),
            ..Docs::default()
        };
        assert_eq!((0..5).map(|d| docs.group_size(d)).collect::<Vec<_>>(), [2, 1, 0, 1, 1]);
        let dir = tempfile::tempdir().unwrap();
        let o = dir.path().join("overlap.csv");
        std::fs::write(&o, "doc_i,doc_j,shared\n1,3,20\n3,4,20\n").unwrap();
        let table = host_pairs(&docs, &o, 1 << 20, dir.path()).unwrap();
        let (got, mirrors) = rows(&docs, &table);
        let expected = [("a", "b", 2, 2, true), ("b", "c", 1, 1, false)];
        let expected: Vec<_> =
            expected.iter().map(|&(a, b, x, y, m)| (a.to_string(), b.to_string(), x, y, m)).collect();
        assert_eq!(got, expected);
        assert_eq!(mirrors.len(), 1);
        assert_eq!(mirrors[0].coverage_a, 100.0);
    }

    /// A crawl of `n` documents on hosts numbered out of name order, with
    /// exact groups, empty documents, documents without a host, mirrored
    /// hosts (0 to 4 copied on 20 to 24) and random links between centers.
    fn generated(n: u32) -> (Docs, BTreeSet<(u32, u32)>) {
        let mut rng = crate::testing::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u32| rng.below(u64::from(m)) as u32;
        let hosts: Vec<String> = (0..40u32)
            .map(|h| if h == 7 { String::new() } else { format!("h{}.test", h * 17 % 40) })
            .collect();
        let (mut center, mut host) = (Vec::new(), Vec::new());
        while (center.len() as u32) < n {
            let d = center.len() as u32;
            let h = next(40);
            let c = match next(10) {
                0 => EMPTY,
                1..=3 if d > 0 => match center[next(d) as usize] {
                    EMPTY => d,
                    c => c,
                },
                _ => d,
            };
            center.push(c);
            host.push(h);
            if h < 5 && c != EMPTY {
                center.push(c);
                host.push(h + 20);
            }
        }
        let mut group_size = vec![0u32; center.len()];
        for &c in center.iter().filter(|&&c| c != EMPTY) {
            group_size[c as usize] += 1;
        }
        let centers: Vec<u32> = (0..center.len() as u32).filter(|&d| center[d as usize] == d).collect();
        let mut links = BTreeSet::new();
        for _ in 0..n {
            let (i, j) =
                (centers[next(centers.len() as u32) as usize], centers[next(centers.len() as u32) as usize]);
            if i != j {
                links.insert((i.min(j), i.max(j)));
            }
        }
        let docs = Docs {
            centers: Centers::from_rows(&center),
            host: host.into(),
            hosts: hosts.into(),
            ..Docs::default()
        };
        assert_eq!((0..center.len() as u32).map(|d| docs.group_size(d)).collect::<Vec<_>>(), group_size);
        (docs, links)
    }

    /// The table by its definition, document by document: for each
    /// document, the other hosts of the documents in its exact group or
    /// in a group linked to it.
    fn brute_force(docs: &Docs, links: &BTreeSet<(u32, u32)>) -> Vec<Row> {
        let n = docs.len();
        let host = docs.host.to_vec();
        let name = |d: usize| docs.hosts[host[d] as usize].to_string();
        let counted = |d: usize| docs.center(d as u32) != EMPTY && !name(d).is_empty();
        let mut on: BTreeMap<(String, String), u64> = BTreeMap::new();
        let mut host_docs: BTreeMap<String, u64> = BTreeMap::new();
        for d in (0..n).filter(|&d| counted(d)) {
            *host_docs.entry(name(d)).or_default() += 1;
            let c = docs.center(d as u32);
            let replicas = (0..n).filter(|&x| {
                let cx = docs.center(x as u32);
                counted(x) && (cx == c || links.contains(&(c.min(cx), c.max(cx))))
            });
            let others: BTreeSet<String> = replicas.map(name).filter(|h| *h != name(d)).collect();
            for other in others {
                *on.entry((name(d), other)).or_default() += 1;
            }
        }
        let pairs: BTreeSet<(String, String)> = on
            .keys()
            .map(|(x, y)| if x < y { (x.clone(), y.clone()) } else { (y.clone(), x.clone()) })
            .collect();
        let get = |x: &String, y: &String| on.get(&(x.clone(), y.clone())).copied().unwrap_or(0);
        pairs
            .into_iter()
            .map(|(a, b)| {
                let (a_on_b, b_on_a) = (get(&a, &b), get(&b, &a));
                let mirror = is_mirror(a_on_b, host_docs[&a]) || is_mirror(b_on_a, host_docs[&b]);
                (a, b, a_on_b, b_on_a, mirror)
            })
            .collect()
    }

    #[test]
    fn spilled_and_in_memory_tables_equal_the_definition() {
        let (docs, links) = generated(1500);
        let dir = tempfile::tempdir().unwrap();
        let o = dir.path().join("overlap.csv");
        let mut text = String::from("doc_i,doc_j,shared\n");
        for (i, j) in &links {
            text.push_str(&format!("{i},{j},20\n"));
        }
        std::fs::write(&o, text).unwrap();
        let expected = brute_force(&docs, &links);
        assert!(expected.len() > 300, "{} pairs", expected.len());

        let (large, small) = (dir.path().join("large"), dir.path().join("small"));
        std::fs::create_dir(&large).unwrap();
        std::fs::create_dir(&small).unwrap();
        let in_memory = host_pairs(&docs, &o, 1 << 30, &large).unwrap();
        assert!(matches!(in_memory.links, Links::Memory(_)));
        // 512 bytes: a 16-entry buffer of linked entries, a map of 4
        // pairs, thousands of partial counts sorted in spilled segments,
        // and requests and group entries past the 1,024 a batch holds at
        // least, spilled too.
        assert!(links.len() * 2 > 1024, "{} links", links.len());
        let host = docs.host.to_vec();
        let paired: BTreeSet<u32> = links.iter().flat_map(|&(i, j)| [i, j]).collect();
        let own = (0..docs.len() as u32)
            .filter(|&d| docs.center(d) != EMPTY && !docs.hosts[host[d as usize] as usize].is_empty())
            .filter(|&d| docs.exact_size(d) >= 2 || paired.contains(&docs.center(d)))
            .count();
        assert!(own > 1024, "{own} group entries");
        let spilled = host_pairs(&docs, &o, 512, &small).unwrap();
        assert!(matches!(spilled.links, Links::File { .. }));

        let (got, got_mirrors) = rows(&docs, &in_memory);
        assert_eq!(got, expected);
        assert!(got_mirrors.len() >= 5, "{} mirror pairs", got_mirrors.len());
        let (got_spilled, spilled_mirrors) = rows(&docs, &spilled);
        assert_eq!(got_spilled, expected);
        assert_eq!(spilled_mirrors, got_mirrors);
        assert_eq!(spilled.len(), in_memory.len());

        write_csv(&large.join("hosts.csv"), &docs, &in_memory).unwrap();
        write_csv(&small.join("hosts.csv"), &docs, &spilled).unwrap();
        let csv = std::fs::read(large.join("hosts.csv")).unwrap();
        assert_eq!(csv, std::fs::read(small.join("hosts.csv")).unwrap());
        assert_eq!(csv.iter().filter(|&&b| b == b'\n').count(), expected.len() + 1);
        // Only the table is left of the spill files.
        let left: Vec<_> = std::fs::read_dir(&small).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }
}
