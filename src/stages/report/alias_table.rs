//! The alias pairs ([`super::aliases`] finds them) on their way to
//! aliases.csv, held within a share of `--memory` and spilled to scratch
//! files beyond it: a crawl has about as many alias pairs as documents
//! (611,095 on 2.1 million generated pages), and their list with the URLs
//! of their rows was the largest part of the report's heap peak (about
//! 70 of 154 MB), whatever the budget.
//!
//! - Pairs of two different texts may still be near-replicas: [`Gathering`]
//!   sorts them by their centers' pair, which is the Overlap table's
//!   order, so that in the report's first pass over the table one cursor
//!   over them tells which are linked ([`NearPairs`]), with nothing held
//!   per pair. Other pairs go straight to the table.
//! - The table ([`AliasTable`]) is in aliases.csv's order (kind, doc_a,
//!   doc_b), read once for the counts and the examples report.html shows,
//!   and once more to write aliases.csv.
//! - aliases.csv shows both URLs of each pair. They are gathered from
//!   docs.csv for a window of pairs at a time whose URLs fit the budget
//!   ([`super::url_windows`], which groups.csv shares): the first window
//!   in the report's pass that writes `near_group`, each further one in a
//!   pass over docs.csv of its own.
//!
//! Scratch records: kind 19, an alias pair, 10 bytes (kind, doc_a, doc_b,
//! content, as [`Alias`] orders them); kind 20, a pair of two texts keyed
//! by its centers, 18 bytes (the two centers' rows, the smaller in the
//! high half, as one u64, then kind 19's fields).

use std::path::Path;

use super::aliases::{Alias, AliasCounts, AliasKind, Content};
use super::fields::Cell;
use super::url_side::UrlSource;
use super::url_windows::{self, Window, Windows};
use crate::store::analysis::documents::{self, Docs};
use crate::store::sort::{Batched, SortedReader, SortedRecords};
use crate::store::{CsvOut, Record, le_u32, le_u64};

/// Scratch record kind 19, 10 bytes: kind, doc_a, doc_b, content.
impl Record for Alias {
    const KIND: u32 = 19;
    const SIZE: usize = 10;
    fn encode(&self, out: &mut [u8]) {
        out[0] = self.kind as u8;
        out[1..5].copy_from_slice(&self.doc_a.to_le_bytes());
        out[5..9].copy_from_slice(&self.doc_b.to_le_bytes());
        out[9] = self.content as u8;
    }
    fn decode(b: &[u8]) -> Self {
        Alias {
            kind: AliasKind::ALL[usize::from(b[0]).min(3)],
            doc_a: le_u32(&b[1..5]),
            doc_b: le_u32(&b[5..9]),
            content: Content::ALL[usize::from(b[9]).min(3)],
        }
    }
}

/// A pair of two texts, keyed by its centers' pair ([`pack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ByCenters {
    centers: u64,
    alias: Alias,
}

/// Scratch record kind 20, 18 bytes: the centers' pair, then kind 19.
impl Record for ByCenters {
    const KIND: u32 = 20;
    const SIZE: usize = 18;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.centers.to_le_bytes());
        self.alias.encode(&mut out[8..18]);
    }
    fn decode(b: &[u8]) -> Self {
        ByCenters { centers: le_u64(&b[..8]), alias: Alias::decode(&b[8..18]) }
    }
}

/// A pair of centers in either order, as one key ordered as the Overlap
/// table's rows (i, j) with i < j.
fn pack(a: u32, b: u32) -> u64 {
    (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
}

/// Gathers the pairs as [`super::aliases::find`] makes them, half of the
/// budget for the pairs of two texts and half for the others.
pub struct Gathering {
    different: Batched<ByCenters>,
    table: Batched<Alias>,
    scratch: std::path::PathBuf,
}

impl Gathering {
    /// For up to `expected` pairs, held within `budget` bytes and spilled
    /// to `scratch` beyond it.
    pub fn new(budget: u64, expected: u64, scratch: &Path) -> Gathering {
        Gathering {
            different: Batched::new(budget / 2, expected, scratch.join("alias-centers.fpd")),
            table: Batched::new(budget / 2, expected, scratch.join("alias-table.fpd")),
            scratch: scratch.to_path_buf(),
        }
    }

    /// One pair, of the documents of `docs`.
    pub fn push(&mut self, docs: &Docs, alias: Alias) -> anyhow::Result<()> {
        if alias.content != Content::Different {
            return self.table.push(alias);
        }
        let centers = pack(docs.center(alias.doc_a), docs.center(alias.doc_b));
        self.different.push(ByCenters { centers, alias })
    }

    /// The pairs of two texts sorted by centers, for the pass over the
    /// Overlap table.
    pub fn finish(self) -> anyhow::Result<NearPairs> {
        let different = self.different.finish(&self.scratch.join("alias-centers.sorted.fpd"))?;
        Ok(NearPairs { different, table: self.table, scratch: self.scratch })
    }
}

/// The pairs of two texts, sorted by their centers' pair, waiting for the
/// Overlap table to tell which are near-replicas.
pub struct NearPairs {
    different: SortedRecords<ByCenters>,
    table: Batched<Alias>,
    scratch: std::path::PathBuf,
}

impl NearPairs {
    /// Reads the Overlap table's rows, given in (i, j) order to the
    /// cursor's [`Cursor::pair`], then puts every pair in the table.
    pub fn cursor(&mut self) -> anyhow::Result<Cursor<'_>> {
        let mut reader = self.different.reader()?;
        let next = reader.next_record()?;
        Ok(Cursor { reader, next, table: &mut self.table })
    }

    /// The table, once [`Cursor::finish`] has run.
    pub fn finish(self) -> anyhow::Result<AliasTable> {
        let NearPairs { different, table, scratch } = self;
        drop(different);
        Ok(AliasTable { pairs: table.finish(&scratch.join("alias-table.sorted.fpd"))? })
    }
}

/// The merge of the pairs of two texts with the Overlap table.
pub struct Cursor<'a> {
    reader: SortedReader<'a, ByCenters>,
    next: Option<ByCenters>,
    table: &'a mut Batched<Alias>,
}

impl Cursor<'_> {
    /// One Overlap-table pair of centers, the rows in (i, j) order: the
    /// pairs of two texts below it are different, those at it near.
    pub fn pair(&mut self, i: u32, j: u32) -> anyhow::Result<()> {
        let key = pack(i, j);
        while let Some(p) = self.next.filter(|p| p.centers <= key) {
            let content = if p.centers == key { Content::Near } else { Content::Different };
            self.table.push(Alias { content, ..p.alias })?;
            self.next = self.reader.next_record()?;
        }
        Ok(())
    }

    /// The pairs after the table's last row, all different.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.pair(u32::MAX, u32::MAX)
    }
}

/// Every alias pair, in aliases.csv's order.
pub struct AliasTable {
    pairs: SortedRecords<Alias>,
}

/// One alias pair to show people, with its URLs.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    pub kind: AliasKind,
    pub url_a: String,
    pub url_b: String,
    pub content: Content,
}

/// The counts report.json shows per kind, and the pair report.html shows
/// for each: the first of the most similar content.
pub struct Summary {
    pub counts: [AliasCounts; 4],
    pub examples: Vec<Alias>,
}

impl Summary {
    /// The rows whose URLs the examples show.
    pub fn rows(&self) -> impl Iterator<Item = u32> + '_ {
        self.examples.iter().flat_map(|a| [a.doc_a, a.doc_b])
    }

    /// The examples with the URLs gathered in `urls`.
    pub fn examples(&self, urls: &documents::Urls) -> Vec<Example> {
        let url = |d: u32| urls.get(d).unwrap_or("").to_string();
        self.examples
            .iter()
            .map(|a| Example { kind: a.kind, url_a: url(a.doc_a), url_b: url(a.doc_b), content: a.content })
            .collect()
    }
}

impl AliasTable {
    /// Calls `f` with every pair in order.
    pub fn for_each(&self, mut f: impl FnMut(Alias) -> anyhow::Result<()>) -> anyhow::Result<()> {
        let mut reader = self.pairs.reader()?;
        while let Some(a) = reader.next_record()? {
            f(a)?;
        }
        Ok(())
    }

    /// The counts per kind, in [`AliasKind::ALL`] order, and one example
    /// per kind that has pairs: content orders exact, near, different,
    /// empty, so the most similar first, then the smallest docIDs.
    pub fn summary(&self) -> anyhow::Result<Summary> {
        let mut counts: [AliasCounts; 4] = Default::default();
        let mut best: [Option<Alias>; 4] = [None; 4];
        self.for_each(|a| {
            let k = a.kind as usize;
            let c = &mut counts[k];
            c.pairs += 1;
            match a.content {
                Content::Exact => c.exact += 1,
                Content::Near => c.near += 1,
                Content::Different => c.different += 1,
                Content::Empty => c.empty += 1,
            }
            let rank = |a: &Alias| (a.content, a.doc_a, a.doc_b);
            if best[k].is_none_or(|b| rank(&a) < rank(&b)) {
                best[k] = Some(a);
            }
            Ok(())
        })?;
        Ok(Summary { counts, examples: best.into_iter().flatten().collect() })
    }

    /// The windows of pairs whose URLs are gathered together, each within
    /// `budget` bytes, planned for URLs of `mean_url` bytes.
    pub fn windows(&self, budget: u64, mean_url: u64) -> Windows<'_, Alias> {
        Windows::new(&self.pairs, |a| [a.doc_a, a.doc_b], budget, mean_url)
    }
}

fn write_row(out: &mut CsvOut, docs: &Docs, a: &Alias, urls: &documents::Urls) -> anyhow::Result<()> {
    let url = |d: u32| urls.get(d).unwrap_or("");
    out.row([
        a.kind.name().into(),
        Cell::number(docs.doc_id(a.doc_a)),
        Cell::number(docs.doc_id(a.doc_b)),
        url(a.doc_a).into(),
        url(a.doc_b).into(),
        a.content.name().into(),
    ])
}

/// Writes `aliases.csv` (`kind,doc_a,doc_b,url_a,url_b,content`): the
/// pairs of `first`, whose URLs the report's pass over docs.csv gathered
/// (`urls`, and the first row the budget stopped it at, if it did), then
/// every further window of `windows` ([`url_windows::write_csv`]).
pub fn write_csv(
    path: &Path,
    docs: &Docs,
    source: UrlSource<'_>,
    windows: Windows<'_, Alias>,
    first: Window,
    urls: (documents::Urls, Option<u32>),
) -> anyhow::Result<()> {
    let header = ["kind", "doc_a", "doc_b", "url_a", "url_b", "content"];
    url_windows::write_csv(path, &header, source, windows, first, urls, |out, a, urls| {
        write_row(out, docs, a, urls)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::*;
    use crate::stages::report::url_side;
    use crate::store::analysis::documents::{Centers, EMPTY, load_docs};
    use crate::store::analysis::host_column::HostColumnBuilder;
    use crate::testing::{XorShift, exact_centers};

    /// `n` documents, a fifth of them copies of an earlier text and some
    /// empty, with `count` alias pairs of every kind and content between
    /// them (unique per kind and pair, doc_a < doc_b or not).
    fn documents_and_pairs(rng: &mut XorShift, n: u32, count: usize) -> (Vec<u32>, Vec<Alias>) {
        let center = exact_centers(rng, n, 2);
        let mut seen = BTreeSet::new();
        let mut pairs = Vec::new();
        while pairs.len() < count {
            let (a, b) = (rng.below(u64::from(n)) as u32, rng.below(u64::from(n)) as u32);
            let kind = AliasKind::ALL[rng.below(4) as usize];
            if a == b || !seen.insert((kind, a, b)) {
                continue;
            }
            let (ca, cb) = (center[a as usize], center[b as usize]);
            let content = if ca == EMPTY || cb == EMPTY {
                Content::Empty
            } else if ca == cb {
                Content::Exact
            } else {
                Content::Different
            };
            pairs.push(Alias { kind, doc_a: a, doc_b: b, content });
        }
        (center, pairs)
    }

    /// The table of `pairs` after a pass over the Overlap table `overlap`
    /// (center pairs in (i, j) order), gathered within `budget`.
    fn table(
        docs: &Docs,
        pairs: &[Alias],
        overlap: &[(u32, u32)],
        budget: u64,
        scratch: &Path,
    ) -> AliasTable {
        let mut gathering = Gathering::new(budget, pairs.len() as u64, scratch);
        for &a in pairs {
            gathering.push(docs, a).unwrap();
        }
        let mut near = gathering.finish().unwrap();
        let mut cursor = near.cursor().unwrap();
        for &(i, j) in overlap {
            cursor.pair(i, j).unwrap();
        }
        cursor.finish().unwrap();
        near.finish().unwrap()
    }

    fn all(table: &AliasTable) -> Vec<Alias> {
        let mut out = Vec::new();
        table
            .for_each(|a| {
                out.push(a);
                Ok(())
            })
            .unwrap();
        out
    }

    #[test]
    fn pairs_of_two_texts_are_near_exactly_when_their_centers_are_linked() {
        let mut rng = XorShift::new(0x5eed_a11a_5000);
        for case in 0..20 {
            let (center, pairs) = documents_and_pairs(&mut rng, 300 + case * 50, 2000);
            let docs = Docs { centers: Centers::from_rows(&center), ..Docs::default() };
            // Links between centers: half of them those of different
            // pairs, the others anywhere.
            let centers: Vec<u32> = (0..center.len() as u32).filter(|&d| center[d as usize] == d).collect();
            let mut linked = BTreeSet::new();
            for a in pairs.iter().filter(|a| a.content == Content::Different) {
                if rng.below(2) == 0 {
                    linked.insert(pack(center[a.doc_a as usize], center[a.doc_b as usize]));
                }
            }
            for _ in 0..500 {
                let (x, y) = (
                    centers[rng.below(centers.len() as u64) as usize],
                    centers[rng.below(centers.len() as u64) as usize],
                );
                if x != y {
                    linked.insert(pack(x, y));
                }
            }
            let overlap: Vec<(u32, u32)> = linked.iter().map(|&k| ((k >> 32) as u32, k as u32)).collect();
            let as_set: HashSet<u64> = linked.iter().copied().collect();
            let mut expected: Vec<Alias> = pairs
                .iter()
                .map(|&a| {
                    let key = pack(center[a.doc_a as usize], center[a.doc_b as usize]);
                    match a.content {
                        Content::Different if as_set.contains(&key) => Alias { content: Content::Near, ..a },
                        _ => a,
                    }
                })
                .collect();
            expected.sort();
            assert!(expected.iter().any(|a| a.content == Content::Near), "case {case}");
            assert!(expected.iter().any(|a| a.content == Content::Different), "case {case}");
            let dir = tempfile::tempdir().unwrap();
            // Held in memory, and spilled in batches of 1,024 (a budget of
            // nothing).
            for budget in [1 << 30, 0] {
                let t = table(&docs, &pairs, &overlap, budget, dir.path());
                assert_eq!(all(&t), expected, "case {case}, budget {budget}");
                let summary = t.summary().unwrap();
                for kind in AliasKind::ALL {
                    let of_kind: Vec<&Alias> = expected.iter().filter(|a| a.kind == kind).collect();
                    let c = &summary.counts[kind as usize];
                    assert_eq!(c.pairs, of_kind.len() as u64);
                    assert_eq!(c.near, of_kind.iter().filter(|a| a.content == Content::Near).count() as u64);
                    let best = of_kind.iter().min_by_key(|a| (a.content, a.doc_a, a.doc_b)).copied();
                    assert_eq!(summary.examples.iter().find(|a| a.kind == kind), best);
                }
                drop(t);
                assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "scratch files left");
            }
        }
    }

    /// aliases.csv as [`write_csv`] writes it from `table`, the URLs of
    /// each window within `budget` bytes, those of later windows from a
    /// side file when `side`, else from docs.csv again.
    fn written(
        docs: &Docs,
        docs_csv: &Path,
        table: &AliasTable,
        budget: u64,
        out: &Path,
        side: bool,
    ) -> String {
        let mut windows = table.windows(budget, 20);
        let first = windows.next_window().unwrap().unwrap_or_default();
        let mut urls = first.urls();
        let side_path = out.with_extension("side");
        let mut side = if side {
            url_side::for_later_windows(&windows, &first, docs.len(), side_path).unwrap()
        } else {
            None
        };
        documents::for_each_doc(docs_csv, |r, row| {
            urls.add(r, row.url);
            side.iter_mut().for_each(|s| s.add(r, row.url));
            Ok(())
        })
        .unwrap();
        let gathered = urls.finish_capped();
        let side = side.map(url_side::SideWriter::finish).transpose().unwrap();
        let source = side.as_ref().map_or(UrlSource::Docs(docs_csv), UrlSource::Side);
        write_csv(out, docs, source, windows, first, gathered).unwrap();
        std::fs::read_to_string(out).unwrap()
    }

    #[test]
    fn aliases_csv_is_the_same_whatever_the_windows() {
        let mut rng = XorShift::new(0xa11a_5c57);
        let dir = tempfile::tempdir().unwrap();
        let n = 400;
        let (center, pairs) = documents_and_pairs(&mut rng, n, 1500);
        // URLs of 10 to 40 bytes, and a few of several kilobytes, larger
        // than the smallest budgets' windows.
        let urls: Vec<String> = (0..n)
            .map(|d| {
                let long = if rng.below(50) == 0 { 3000 } else { rng.below(30) as usize };
                format!("http://h{d}.org/{}", "x".repeat(long))
            })
            .collect();
        let mut text = String::from(
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n",
        );
        for d in 0..n as usize {
            let c = if center[d] == EMPTY { String::new() } else { center[d].to_string() };
            let bytes = if center[d] == EMPTY { 0 } else { 1 };
            text.push_str(&format!("{d},{},h,s:{d},{bytes},1,1,{c},,0,,,,\n", urls[d]));
        }
        let docs_csv = dir.path().join("docs.csv");
        std::fs::write(&docs_csv, text).unwrap();
        let docs = load_docs(&docs_csv, u64::from(n), HostColumnBuilder::held(), |_, _, _| Ok(())).unwrap();
        assert_eq!((0..n).map(|r| docs.center(r)).collect::<Vec<_>>(), center);
        let t = table(&docs, &pairs, &[], 1 << 20, dir.path());
        let mut expected = String::from("kind,doc_a,doc_b,url_a,url_b,content\n");
        for a in all(&t) {
            let (ua, ub) = (&urls[a.doc_a as usize], &urls[a.doc_b as usize]);
            expected.push_str(&format!(
                "{},{},{},{ua},{ub},{}\n",
                a.kind.name(),
                a.doc_a,
                a.doc_b,
                a.content.name()
            ));
        }
        let out = dir.path().join("aliases.csv");
        // One window; windows of a few pairs, cut where a long URL does
        // not fit; windows in which not even one pair fits.
        // Later windows' URLs from docs.csv and from a side file.
        for budget in [1 << 30, 20_000, 4_000, 500, 0] {
            for side in [false, true] {
                let got = written(&docs, &docs_csv, &t, budget, &out, side);
                assert_eq!(got, expected, "budget {budget}, side file {side}");
            }
        }
        // An empty table gives the header alone.
        let empty = table(&docs, &[], &[], 1 << 20, dir.path());
        for side in [false, true] {
            assert_eq!(
                written(&docs, &docs_csv, &empty, 1 << 20, &out, side),
                "kind,doc_a,doc_b,url_a,url_b,content\n"
            );
        }
    }
}
