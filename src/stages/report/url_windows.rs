//! Writing a table whose rows show URLs from docs.csv, with the URLs
//! gathered for a window of records at a time within a budget: aliases.csv
//! (two URLs a pair) and groups.csv (the URL of each group's first
//! document). A crawl has about as many of either as it has documents, so
//! their URLs are not held at once: the first window is gathered in the
//! report's pass over docs.csv that writes `near_group`, each further one
//! from the table's URLs copied aside in that same pass when there are
//! more windows ([`super::url_side`]), or else in a pass over docs.csv of
//! its own (only when a whole table's window turns out not to fit). A
//! window is planned from the
//! crawl's mean URL length; one whose URLs turn out not to fit is planned
//! again with half its records, and a record whose URLs alone do not fit
//! is written with them anyway.

use std::path::Path;

use super::url_side::UrlSource;
use crate::store::CsvOut;
use crate::store::Record;
use crate::store::analysis::documents::{self, RankBits, URL_PLACE, UrlsWanted};
use crate::store::sort::SortedRecords;

/// Records of the table whose URLs are gathered in one pass over
/// docs.csv: where they start and how many, and their rows (the records
/// themselves are read again from the table to be written).
#[derive(Default)]
pub struct Window {
    start: u64,
    len: u64,
    /// Their rows, sorted and without repeats.
    rows: Vec<u32>,
    /// Bytes of URLs (and their places) the pass may gather.
    url_budget: usize,
}

impl Window {
    /// A gatherer of the window's URLs, for a pass over docs.csv.
    pub fn urls(&self) -> UrlsWanted<'_> {
        UrlsWanted::capped(&self.rows, self.url_budget)
    }
}

/// The table's records, a window at a time.
pub struct Windows<'a, R: Record> {
    table: &'a SortedRecords<R>,
    /// The rows whose URLs a record shows.
    rows_of: fn(&R) -> [u32; 2],
    /// The first record not written yet.
    next: u64,
    budget: u64,
    mean_url: u64,
}

/// Bytes a row takes in a window beside its URL: the row, and its URL's
/// place.
const ROW_BYTES: u64 = 4 + URL_PLACE as u64;

impl<'a, R: Record> Windows<'a, R> {
    /// The windows of `table`, whose records show the URLs of `rows_of`,
    /// each within `budget` bytes, planned for URLs of `mean_url` bytes.
    pub fn new(table: &'a SortedRecords<R>, rows_of: fn(&R) -> [u32; 2], budget: u64, mean_url: u64) -> Self {
        Windows { table, rows_of, next: 0, budget, mean_url }
    }

    /// The next window, from the first record not written yet; `None`
    /// when every record has been written.
    pub fn next_window(&mut self) -> anyhow::Result<Option<Window>> {
        self.plan(u64::MAX)
    }

    /// The next window of at most `most` records, with as many as the
    /// budget holds for URLs of the mean length: records are taken a batch
    /// at a time, each batch no more than the rows left could take if it
    /// shared none, and the rows are counted without repeats after each
    /// (alias pairs share rows: 611,095 pairs had 719,242 rows on 2.1
    /// million generated pages). A tenth of the budget is left for URLs
    /// longer than the mean.
    fn plan(&self, most: u64) -> anyhow::Result<Option<Window>> {
        let per_row = self.mean_url + ROW_BYTES;
        let fill = self.budget / 10 * 9;
        let mut reader = self.table.reader_at(self.next)?;
        let mut rows: Vec<u32> = Vec::new();
        let mut len = 0u64;
        loop {
            let room = fill.saturating_sub(rows.len() as u64 * per_row) / (2 * per_row);
            // At least one pair; and no batch too small to be worth
            // sorting the rows again.
            let batch = if len == 0 { room.max(1) } else { room }.min(most - len);
            if batch == 0 || (len > 0 && batch < rows.len() as u64 / 64) {
                break;
            }
            let mut took = 0;
            while took < batch
                && let Some(r) = reader.next_record()?
            {
                rows.extend((self.rows_of)(&r));
                took += 1;
            }
            len += took;
            rows.sort_unstable();
            rows.dedup();
            if took < batch {
                break;
            }
        }
        if len == 0 {
            return Ok(None);
        }
        rows.shrink_to_fit();
        let url_budget =
            usize::try_from(self.budget.saturating_sub(rows.len() as u64 * 4)).unwrap_or(usize::MAX);
        Ok(Some(Window { start: self.next, len, rows, url_budget }))
    }

    /// Writes the records of `window`, whose URLs `urls` holds.
    fn write(
        &mut self,
        out: &mut CsvOut,
        window: &Window,
        urls: &documents::Urls,
        write_row: &mut impl FnMut(&mut CsvOut, &R, &documents::Urls) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut reader = self.table.reader_at(window.start)?;
        for _ in 0..window.len {
            let Some(r) = reader.next_record()? else { break };
            write_row(out, &r, urls)?;
        }
        self.next = window.start + window.len;
        Ok(())
    }

    /// Whether records are left after `window`, for more windows.
    pub fn more_after(&self, window: &Window) -> anyhow::Result<bool> {
        Ok(self.table.reader_at(window.start + window.len)?.next_record()?.is_some())
    }

    /// Adds to `rows` every row whose URL a record of the table shows.
    pub fn mark_rows(&self, rows: &mut RankBits) -> anyhow::Result<()> {
        let mut reader = self.table.reader()?;
        while let Some(r) = reader.next_record()? {
            (self.rows_of)(&r).into_iter().for_each(|row| rows.insert(row));
        }
        Ok(())
    }

    /// Writes the first record not written yet alone, its URLs gathered
    /// from `source` whatever their size.
    fn write_one(
        &mut self,
        out: &mut CsvOut,
        source: UrlSource<'_>,
        write_row: &mut impl FnMut(&mut CsvOut, &R, &documents::Urls) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let Some(r) = self.table.reader_at(self.next)?.next_record()? else { return Ok(()) };
        let mut rows = (self.rows_of)(&r).to_vec();
        rows.sort_unstable();
        rows.dedup();
        let (urls, _) = source.urls_of(&rows, None)?;
        write_row(out, &r, &urls)?;
        self.next += 1;
        Ok(())
    }
}

/// Writes the table to a CSV file at `path` with `header`, a row per
/// record by `write_row`: the records of `first`, whose URLs the report's
/// pass over docs.csv gathered (`urls`, and the first row the budget
/// stopped it at, if it did), then every further window of `windows`,
/// each with its URLs gathered from `source`. A window whose URLs did
/// not fit (longer than the mean) is planned again with half its
/// records; a record whose URLs alone do not fit is written with them
/// anyway.
pub fn write_csv<R: Record>(
    path: &Path,
    header: &[&str],
    source: UrlSource<'_>,
    mut windows: Windows<'_, R>,
    first: Window,
    urls: (documents::Urls, Option<u32>),
    mut write_row: impl FnMut(&mut CsvOut, &R, &documents::Urls) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut out = CsvOut::create(path, header)?;
    let mut gathered = Some((first, urls));
    let mut most = u64::MAX;
    loop {
        let (window, (urls, stopped)) = match gathered.take() {
            Some(g) => g,
            None => match windows.plan(most)? {
                Some(w) => {
                    let urls = source.urls_of(&w.rows, Some(w.url_budget))?;
                    (w, urls)
                }
                None => break,
            },
        };
        most = u64::MAX;
        match stopped {
            None => windows.write(&mut out, &window, &urls, &mut write_row)?,
            Some(_) if window.len > 1 => most = window.len / 2,
            Some(_) => {
                drop(urls);
                windows.write_one(&mut out, source, &mut write_row)?;
            }
        }
    }
    out.finish()
}
