//! Reading the earlier stages' outputs: `docs.csv` into per-document
//! arrays, and `overlap.csv` as a stream.
//!
//! Documents are numbered by row here, as in every stage (see
//! [`crate::store::handles`]): the arrays stay dense through a chain of
//! analyses, whose docIDs have gaps. [`Docs::doc_id`] gives the docID the
//! report's tables show, and the Overlap table's docIDs are turned into rows
//! as it is read.
//!
//! The report holds a bit per document each for empty rows, copies and
//! centers with copies, a center per copy, and the host names once each;
//! each row's host is a column read in row order ([`super::host_column`]),
//! held within a share of the budget. It never holds the Overlap table:
//! every pass over the table streams `overlap.csv` again, so the report's
//! memory grows with the documents, not with the pairs.

use std::path::Path;

use anyhow::bail;

use super::host_column::{HostColumn, HostColumnBuilder};
use super::host_names::{HostNames, HostNumbering};
use crate::store::docs::{self, Doc, DocTable};
use crate::store::handles::RowIds;
use crate::store::overlap;

/// Marks an empty document in [`Docs::center`].
pub const EMPTY: u32 = u32::MAX;

/// The document table, column by column.
#[derive(Clone, Debug, Default)]
pub struct Docs {
    /// Each row's exact group ([`Docs::center`], [`Docs::group_size`]).
    pub centers: Centers,
    /// Each row's index into `hosts`, read in row order.
    pub host: HostColumn,
    /// Host names, in order of first appearance.
    pub hosts: HostNames,
    /// Each row's docID, ascending; empty when every row is its docID (a
    /// first analysis), which spares a search per pair.
    pub doc_ids: Vec<u32>,
    /// Each docID's row ([`EMPTY`] for a docID with no document), when
    /// `doc_ids` is not empty: docIDs of a chain have gaps, and looking
    /// both of a pair's documents up here rather than by binary search
    /// in each pass over overlap.csv took 6% off the report stage's CPU
    /// time (65,396 documents, 230,426 pairs), for 4 bytes a docID.
    pub rows: Vec<u32>,
}

/// A set of rows as a bit per row, with the count of set bits before each
/// word: whether a row is in it, and its rank among them, in constant
/// time for 12 bytes per 64 rows.
#[derive(Clone, Debug, Default)]
pub struct RankBits {
    bits: Vec<u64>,
    before: Vec<u32>,
}

impl RankBits {
    /// An empty set of rows below `n`, for rows to be [`RankBits::insert`]ed
    /// before it is [`RankBits::ranked`].
    pub fn new(n: usize) -> RankBits {
        RankBits { bits: vec![0; n.div_ceil(64)], before: Vec::new() }
    }

    pub fn insert(&mut self, row: u32) {
        if let Some(word) = self.bits.get_mut(row as usize / 64) {
            *word |= 1 << (row % 64);
        }
    }

    /// Counts the rows before each word, for [`RankBits::rank`].
    pub fn ranked(mut self) -> RankBits {
        let mut count = 0u32;
        self.before = self
            .bits
            .iter()
            .map(|w| {
                let b = count;
                count += w.count_ones();
                b
            })
            .collect();
        self
    }

    pub fn contains(&self, row: u32) -> bool {
        self.bits.get(row as usize / 64).is_some_and(|w| w & (1 << (row % 64)) != 0)
    }

    /// The number of rows of the set below `row`, if `row` is in it.
    pub fn rank(&self, row: u32) -> Option<usize> {
        let (word, bit) = (*self.bits.get(row as usize / 64)?, 1u64 << (row % 64));
        (word & bit != 0).then(|| (self.before[row as usize / 64] + (word & (bit - 1)).count_ones()) as usize)
    }

    /// The rows of the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let bit = word.trailing_zeros();
                    word &= word - 1;
                    w as u32 * 64 + bit
                })
            })
        })
    }
}

/// Each row's exact group, held for the few rows that are not alone in
/// theirs: the copies' centers and the sizes of the groups with copies,
/// each found by rank in a bit per row. (A center and a group size per
/// row took 8 bytes a document; on 2.1 million generated pages, 189,195
/// of them are copies, in as many groups.)
#[derive(Clone, Debug, Default)]
pub struct Centers {
    rows: usize,
    empty: RankBits,
    /// The copies, with each one's center by rank.
    copies: RankBits,
    center: Vec<u32>,
    /// The centers with copies, with each one's group size by rank.
    grouped: RankBits,
    size: Vec<u32>,
}

impl Centers {
    /// For rows `0..rows` given in order to [`Centers::push`].
    fn with_rows(rows: usize) -> Centers {
        Centers {
            empty: RankBits::new(rows),
            copies: RankBits::new(rows),
            grouped: RankBits::new(rows),
            ..Centers::default()
        }
    }

    /// The next row, whose center is `center` ([`EMPTY`] for an empty
    /// row, the row itself for a center, an earlier center for a copy).
    fn push(&mut self, center: u32) {
        let row = self.rows as u32;
        self.rows += 1;
        if self.empty.bits.len() * 64 < self.rows {
            // More rows than sized for: every set grows by a word.
            for set in [&mut self.empty, &mut self.copies, &mut self.grouped] {
                set.bits.push(0);
            }
        }
        if center == EMPTY {
            self.empty.insert(row);
        } else if center != row {
            self.copies.insert(row);
            self.center.push(center);
        }
    }

    /// Counts the groups' sizes once every row is in.
    fn finish(mut self) -> Centers {
        let mut centers = self.center.clone();
        centers.sort_unstable();
        for run in centers.chunk_by(|a, b| a == b) {
            self.grouped.insert(run[0]);
            self.size.push(run.len() as u32 + 1);
        }
        self.empty = self.empty.ranked();
        self.copies = self.copies.ranked();
        self.grouped = self.grouped.ranked();
        self
    }

    /// From each row's center, as [`Docs::center`] gives it (for tests).
    #[cfg(test)]
    pub fn from_rows(center: &[u32]) -> Centers {
        let mut c = Centers::with_rows(center.len());
        center.iter().for_each(|&x| c.push(x));
        c.finish()
    }

    /// Whether `row` (of those pushed so far) is a center.
    fn is_center(&self, row: u32) -> bool {
        (row as usize) < self.rows && !self.empty.contains(row) && !self.copies.contains(row)
    }
}

impl Docs {
    pub fn len(&self) -> usize {
        self.centers.rows
    }

    /// The exact-group center of `row`: its own row for a center, an
    /// earlier row for a copy, [`EMPTY`] for an empty document.
    pub fn center(&self, row: u32) -> u32 {
        let c = &self.centers;
        match c.copies.rank(row) {
            Some(k) => c.center[k],
            None if c.empty.contains(row) => EMPTY,
            None => row,
        }
    }

    /// Documents in the exact group whose center is `row` (0 for a row
    /// that is not a center).
    pub fn group_size(&self, row: u32) -> u32 {
        let c = &self.centers;
        match c.grouped.rank(row) {
            Some(k) => c.size[k],
            None if self.is_center(row) => 1,
            None => 0,
        }
    }

    pub fn is_empty_doc(&self, doc: u32) -> bool {
        self.centers.empty.contains(doc)
    }

    pub fn is_center(&self, doc: u32) -> bool {
        self.centers.is_center(doc)
    }

    /// The docID of `row`.
    pub fn doc_id(&self, row: u32) -> u32 {
        if self.doc_ids.is_empty() { row } else { self.doc_ids[row as usize] }
    }

    /// The row of `doc_id`, if it is a document of the analysis.
    pub fn row(&self, doc_id: u32) -> Option<u32> {
        if self.doc_ids.is_empty() {
            return ((doc_id as usize) < self.len()).then_some(doc_id);
        }
        self.rows.get(doc_id as usize).copied().filter(|&r| r != EMPTY)
    }

    /// The documents in `doc`'s exact group (1 when it has no copies, 0 for
    /// an empty document).
    pub fn exact_size(&self, doc: u32) -> u32 {
        match self.center(doc) {
            EMPTY => 0,
            c => self.group_size(c),
        }
    }
}

/// Calls `f` with every row of docs.csv and its number.
pub fn for_each_doc(
    path: &Path,
    mut f: impl FnMut(u32, &Doc<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut row = 0u32;
    docs::for_each_doc(path, DocTable::Final, |doc| {
        f(row, doc)?;
        row += 1;
        Ok(())
    })
}

/// Loads the columns of docs.csv the report keeps for every document,
/// sized for the `expected` rows the manifest counts (a list grown by
/// doubling past 2^21 rows held 2^22: twice the memory on a crawl of 2.1
/// million pages), each row's host into `host`, calling `also` with every
/// row, its number and its exact-group center ([`EMPTY`] for an empty
/// document) in the same pass: what other parts of the report take from
/// every row (URL keys, title keys) is gathered there, not in passes of
/// their own. Rows' docIDs are listed only from the first row whose docID
/// is not its row (a chain of analyses, [`RowIds`]).
pub fn load_docs(
    path: &Path,
    expected: u64,
    mut host: HostColumnBuilder,
    mut also: impl FnMut(u32, u32, &Doc<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<Docs> {
    let n = usize::try_from(expected).unwrap_or(0);
    let mut docs = Docs::default();
    let mut centers = Centers::with_rows(n);
    // Each host's name once (124,376 hosts for 2.1 million rows).
    let mut host_ids = HostNumbering::default();
    let mut doc_ids = RowIds::expecting(n);
    for_each_doc(path, |r, row| {
        doc_ids.push(row.id);
        let center = match row.center {
            None => EMPTY,
            Some(c) if c == row.id => r,
            Some(c) => match doc_ids.row(c) {
                Some(cr) if centers.is_center(cr as u32) => cr as u32,
                _ => bail!("exact_center {c} is not the center of its own group"),
            },
        };
        centers.push(center);
        host.push(host_ids.number(row.host)?)?;
        also(r, center, row)
    })?;
    docs.centers = centers.finish();
    docs.host = host.finish()?;
    docs.hosts = host_ids.finish();
    if let Some(doc_ids) = doc_ids.into_ids() {
        let mut rows = vec![EMPTY; doc_ids.last().map_or(0, |&id| id as usize + 1)];
        for (r, &id) in doc_ids.iter().enumerate() {
            rows[id as usize] = r as u32;
        }
        docs.rows = rows;
        docs.doc_ids = doc_ids;
    }
    Ok(docs)
}

/// Calls `f(doc_i, doc_j, shared)` for every row of overlap.csv, checking
/// what the pairs stage promises beyond the table's own form: both
/// documents are centers of `docs`.
pub fn for_each_pair(
    path: &Path,
    docs: &Docs,
    mut f: impl FnMut(u32, u32, u32) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    overlap::for_each_pair(path, |o| {
        let (Some(i), Some(j)) = (docs.row(o.doc_i), docs.row(o.doc_j)) else {
            bail!("doc_i {} or doc_j {} is not in docs.csv", o.doc_i, o.doc_j);
        };
        if !docs.is_center(i) || !docs.is_center(j) {
            bail!("a document that is not an exact-group center");
        }
        f(i, j, o.shared)
    })
}

/// The URLs of some rows, in one buffer: the report keeps URLs only for
/// the documents it prints (group samples, aliases), and a string each
/// for hundreds of thousands of them left the heap in pieces that the
/// host tables, built next, could not use (21 MB more at the peak for a
/// million documents).
#[derive(Debug, Default)]
pub struct Urls {
    /// The rows, ascending.
    rows: Vec<u32>,
    /// Where each row's URL ends in `text`.
    ends: Vec<usize>,
    text: String,
}

impl Urls {
    /// The URL of `row`, if it was asked for.
    pub fn get(&self, row: u32) -> Option<&str> {
        let i = self.rows.binary_search(&row).ok()?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.text[start..self.ends[i]])
    }
}

/// The URLs of the `wanted` rows (sorted), from a pass over docs.csv of
/// their own, within `cap` bytes unless it is `None` ([`UrlsWanted::capped`]):
/// the URLs, and the first wanted row the cap stopped the pass at, if it
/// did. (The report gathers most URLs in a pass that does more, with
/// [`UrlsWanted`].)
pub fn urls_of(path: &Path, wanted: &[u32], cap: Option<usize>) -> anyhow::Result<(Urls, Option<u32>)> {
    let mut urls = UrlsWanted::within(wanted, cap);
    if !wanted.is_empty() {
        for_each_doc(path, |r, row| {
            urls.add(r, row.url);
            Ok(())
        })?;
    }
    Ok(urls.finish_capped())
}

/// Gathers [`Urls`] from rows seen in order, for a pass over docs.csv
/// that does something else too.
pub struct UrlsWanted<'a> {
    next: std::iter::Peekable<std::slice::Iter<'a, u32>>,
    urls: Urls,
    /// Bytes the URLs and their places may take, if bounded ...
    cap: Option<usize>,
    /// ... and the first wanted row they did not fit.
    stopped: Option<u32>,
}

impl<'a> UrlsWanted<'a> {
    /// For the `wanted` rows, sorted.
    pub fn new(wanted: &'a [u32]) -> Self {
        let urls = Urls {
            rows: Vec::with_capacity(wanted.len()),
            ends: Vec::with_capacity(wanted.len()),
            text: String::new(),
        };
        UrlsWanted { next: wanted.iter().peekable(), urls, cap: None, stopped: None }
    }

    /// For the `wanted` rows, sorted, as long as their URLs and places
    /// ([`URL_PLACE`] bytes a wanted row, held from the start) fit in
    /// `cap` bytes: the rows from the first that does not fit on are not
    /// gathered. The text grows by doubling up to the cap, never past it.
    pub fn capped(wanted: &'a [u32], cap: usize) -> Self {
        let text_cap = cap.saturating_sub(wanted.len() * URL_PLACE);
        UrlsWanted { cap: Some(text_cap), ..UrlsWanted::new(wanted) }
    }

    /// [`UrlsWanted::capped`] at `cap` bytes, or [`UrlsWanted::new`] for
    /// none.
    pub fn within(wanted: &'a [u32], cap: Option<usize>) -> Self {
        match cap {
            Some(cap) => UrlsWanted::capped(wanted, cap),
            None => UrlsWanted::new(wanted),
        }
    }

    /// Row `r`, with its URL; rows come in ascending order.
    pub fn add(&mut self, r: u32, url: &str) {
        if self.stopped.is_some() {
            return;
        }
        while self.next.next_if(|&&w| w < r).is_some() {}
        if self.next.next_if_eq(&&r).is_some() {
            let text = &mut self.urls.text;
            let needed = text.len() + url.len();
            if let Some(cap) = self.cap {
                if needed > cap {
                    self.stopped = Some(r);
                    return;
                }
                if needed > text.capacity() {
                    let grown = (2 * text.capacity()).max(needed).min(cap);
                    text.reserve_exact(grown - text.len());
                }
            }
            text.push_str(url);
            self.urls.rows.push(r);
            self.urls.ends.push(text.len());
        }
    }

    pub fn finish(self) -> Urls {
        self.urls
    }

    /// The URLs gathered, and the first wanted row whose URL did not fit
    /// the cap (every row from it on is missing), if one did not.
    pub fn finish_capped(self) -> (Urls, Option<u32>) {
        (self.urls, self.stopped)
    }
}

/// Bytes [`Urls`] holds per row beside its URL: the row and where its URL
/// ends.
pub const URL_PLACE: usize = 4 + std::mem::size_of::<usize>();

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const HEADER: &str = "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n";

    #[test]
    fn loads_docs_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "docs.csv",
            &format!(
                "{HEADER}0,http://a/x,a,in:0,10,1,1,0,,0,,,,\n1,http://b/x,b,in:5,10,1,1,0,T,0,,,,\n2,,,in:9,0,0,0,,,0,,,,\n"
            ),
        );
        let docs = load_docs(&p, 0, HostColumnBuilder::held(), |_, _, _| Ok(())).unwrap();
        assert_eq!((0..3).map(|r| docs.center(r)).collect::<Vec<_>>(), vec![0, 0, EMPTY]);
        assert_eq!((0..3).map(|r| docs.group_size(r)).collect::<Vec<_>>(), vec![2, 0, 0]);
        assert_eq!(docs.exact_size(1), 2);
        assert_eq!(docs.exact_size(2), 0);
        assert_eq!(docs.hosts, vec!["a", "b", ""].into());
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "docs.csv",
            &format!("{HEADER}0,u,h,s:0,10,1,1,0,,0,,,,\n1,u,h,s:1,ten,1,1,1,,0,,,,\n"),
        );
        let e = format!("{:#}", load_docs(&p, 0, HostColumnBuilder::held(), |_, _, _| Ok(())).unwrap_err());
        assert!(e.contains("docs.csv line 3") && e.contains("bytes"), "{e}");
        let docs = load_docs(
            &write(
                dir.path(),
                "d2.csv",
                &format!("{HEADER}0,u,h,s:0,1,1,1,0,,0,,,,\n1,u,h,s:1,1,1,1,1,,0,,,,\n"),
            ),
            2,
            HostColumnBuilder::held(),
            |_, _, _| Ok(()),
        )
        .unwrap();
        let o = write(dir.path(), "overlap.csv", "doc_i,doc_j,shared\n0,1,5\n1,0,5\n");
        let e = format!("{:#}", for_each_pair(&o, &docs, |_, _, _| Ok(())).unwrap_err());
        assert!(e.contains("overlap.csv line 3"), "{e}");
        let o = write(dir.path(), "o2.csv", "doc_i,doc_j,shared\n0,x,5\n");
        let e = format!("{:#}", for_each_pair(&o, &docs, |_, _, _| Ok(())).unwrap_err());
        assert!(e.contains("line 2") && e.contains("doc_j"), "{e}");
    }

    #[test]
    fn exact_groups_held_for_copies_answer_as_lists_over_every_row_do() {
        let mut rng = crate::testing::XorShift::new(0xce47);
        for n in [0u32, 1, 63, 64, 65, 1000] {
            let center = crate::testing::exact_centers(&mut rng, n, 3);
            let mut size = vec![0u32; n as usize];
            for &c in center.iter().filter(|&&c| c != EMPTY) {
                size[c as usize] += 1;
            }
            // Given a count of rows that is too small, too: the sets grow.
            for sized in [n as usize, 0] {
                let mut c = Centers::with_rows(sized);
                center.iter().for_each(|&x| c.push(x));
                let docs = Docs { centers: c.finish(), ..Docs::default() };
                assert_eq!(docs.len(), n as usize);
                for d in 0..n {
                    let at = format!("{n} rows, row {d}");
                    assert_eq!(docs.center(d), center[d as usize], "{at}");
                    assert_eq!(docs.group_size(d), size[d as usize], "{at}");
                    assert_eq!(docs.is_center(d), center[d as usize] == d, "{at}");
                    assert_eq!(docs.is_empty_doc(d), center[d as usize] == EMPTY, "{at}");
                    let exact =
                        if center[d as usize] == EMPTY { 0 } else { size[center[d as usize] as usize] };
                    assert_eq!(docs.exact_size(d), exact, "{at}");
                }
                let copies: Vec<u32> = (0..n)
                    .filter(|&d| !matches!(center[d as usize], EMPTY) && center[d as usize] != d)
                    .collect();
                assert_eq!(docs.centers.copies.iter().collect::<Vec<_>>(), copies);
                for (k, &d) in copies.iter().enumerate() {
                    assert_eq!(docs.centers.copies.rank(d), Some(k));
                }
            }
        }
    }

    #[test]
    fn capped_urls_stop_at_the_first_row_that_does_not_fit() {
        let wanted = [1, 2, 3, 5];
        let cap = wanted.len() * URL_PLACE + 25;
        let mut urls = UrlsWanted::capped(&wanted, cap);
        for r in 0..7 {
            urls.add(r, &format!("http://{r}/"));
        }
        let (urls, stopped) = urls.finish_capped();
        // Each URL is 9 bytes: two fit in 25, the third does not.
        assert_eq!(stopped, Some(3));
        assert_eq!(
            (urls.get(1), urls.get(2), urls.get(3), urls.get(5)),
            (Some("http://1/"), Some("http://2/"), None, None)
        );
        assert!(urls.text.capacity() <= 25, "{}", urls.text.capacity());
        // Uncapped, every wanted row.
        let mut all = UrlsWanted::new(&wanted);
        for r in 0..7 {
            all.add(r, &format!("http://{r}/"));
        }
        let (all, stopped) = all.finish_capped();
        assert_eq!((stopped, all.get(5)), (None, Some("http://5/")));
    }
}
