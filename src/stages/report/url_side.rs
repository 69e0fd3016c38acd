//! The URLs of the rows a table shows, copied aside for the table's later
//! windows ([`super::url_windows`]): when a table's URLs do not fit one
//! window, the report's pass over docs.csv that writes `near_group` also
//! writes the URL of every row the table shows to a scratch file, and each
//! further window gathers its URLs from that file rather than from a pass
//! over docs.csv of its own.
//!
//! That file holds only the rows asked for, a URL and 4 bytes each, and
//! needs no CSV parsing. On 23 million documents (eleven tiles of a crawl
//! of 2.1 million pages, 4.7 GB of docs.csv) at `--memory 256M`, groups.csv
//! took five windows and aliases.csv three: six more passes over docs.csv,
//! the report at 193 s against 106 s at `--memory 2G`, where each table
//! takes one.
//!
//! The file (one per table, in the stage's scratch directory) is not a
//! record file: it is written and read back by one process, for a set of
//! rows it holds beside it. For each row of that set, ascending: the URL's
//! length in bytes (`u32`, little-endian), then the URL's bytes (UTF-8).
//! The set costs a bit per document (3 MB for 24 million).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::url_windows::{Window, Windows};
use crate::store::analysis::documents::{self, RankBits, Urls, UrlsWanted};
use crate::store::{self, CannotWrite, Record};

/// The side file for the table of `windows` at `path`, when the table has
/// records beyond its `first` window: for the URLs of every row the
/// table shows, among `n` rows.
pub fn for_later_windows<R: Record>(
    windows: &Windows<'_, R>,
    first: &Window,
    n: usize,
    path: PathBuf,
) -> anyhow::Result<Option<SideWriter>> {
    if !windows.more_after(first)? {
        return Ok(None);
    }
    let mut rows = RankBits::new(n);
    windows.mark_rows(&mut rows)?;
    SideWriter::create(rows, path).map(Some)
}

/// Buffer of the side file's writer and readers.
const BUFFER: usize = 1 << 16;

/// The side file being written, in the pass over docs.csv.
pub struct SideWriter {
    rows: RankBits,
    path: PathBuf,
    out: BufWriter<File>,
    /// The first write that failed: the pass over docs.csv cannot stop for
    /// it, [`SideWriter::finish`] reports it.
    failed: Option<std::io::Error>,
}

impl SideWriter {
    /// A side file at `path` for the URLs of `rows`.
    pub fn create(rows: RankBits, path: PathBuf) -> anyhow::Result<SideWriter> {
        crate::base::interrupt::check()?;
        let file = File::create(&path).with_context(|| CannotWrite(path.clone()))?;
        Ok(SideWriter { rows, path, out: BufWriter::with_capacity(BUFFER, file), failed: None })
    }

    /// Row `row` of docs.csv, with its URL; rows come in ascending order.
    pub fn add(&mut self, row: u32, url: &str) {
        if self.failed.is_some() || !self.rows.contains(row) {
            return;
        }
        let len = u32::try_from(url.len()).unwrap_or(u32::MAX);
        let written =
            self.out.write_all(&len.to_le_bytes()).and_then(|()| self.out.write_all(url.as_bytes()));
        if let Err(e) = written {
            self.failed = Some(e);
        }
    }

    /// The side file, written.
    pub fn finish(self) -> anyhow::Result<UrlSide> {
        let SideWriter { rows, path, out, failed } = self;
        let flushed = match failed {
            Some(e) => Err(e),
            None => out.into_inner().map_err(|e| e.into_error()).map(drop),
        };
        flushed.with_context(|| CannotWrite(path.clone()))?;
        Ok(UrlSide { rows, path })
    }
}

/// A side file written: the URLs of its rows, read back for windows of
/// them. Removed when dropped.
pub struct UrlSide {
    rows: RankBits,
    path: PathBuf,
}

impl UrlSide {
    /// The URLs of the `wanted` rows (sorted, all of them rows of the
    /// file), within `cap` bytes unless it is `None`, as
    /// [`documents::urls_of`] gathers them from docs.csv. Reading stops at the
    /// last wanted row.
    pub fn urls_of(&self, wanted: &[u32], cap: Option<usize>) -> anyhow::Result<(Urls, Option<u32>)> {
        let mut urls = UrlsWanted::within(wanted, cap);
        let Some(&last) = wanted.last() else { return Ok(urls.finish_capped()) };
        let file = File::open(&self.path).with_context(|| format!("cannot open {}", self.path.display()))?;
        let mut file = BufReader::with_capacity(BUFFER, file);
        let mut url = Vec::new();
        let damaged = || format!("{}: the report's URL side file is damaged", self.path.display());
        for row in self.rows.iter().take_while(|&r| r <= last) {
            let mut len = [0u8; 4];
            file.read_exact(&mut len).with_context(damaged)?;
            url.resize(u32::from_le_bytes(len) as usize, 0);
            file.read_exact(&mut url).with_context(damaged)?;
            urls.add(row, std::str::from_utf8(&url).with_context(damaged)?);
        }
        Ok(urls.finish_capped())
    }
}

impl Drop for UrlSide {
    fn drop(&mut self) {
        // The stage's scratch directory is removed when it ends anyway;
        // this frees the disk for what comes next.
        let _ = store::remove_file_if_exists(&self.path);
    }
}

/// Where a table's later windows gather their URLs.
#[derive(Clone, Copy)]
pub enum UrlSource<'a> {
    /// A pass over docs.csv each.
    Docs(&'a Path),
    Side(&'a UrlSide),
}

impl UrlSource<'_> {
    /// The URLs of the `wanted` rows (sorted), within `cap` bytes unless
    /// it is `None`: the URLs, and the first wanted row the cap stopped at,
    /// if it did.
    pub fn urls_of(&self, wanted: &[u32], cap: Option<usize>) -> anyhow::Result<(Urls, Option<u32>)> {
        match self {
            UrlSource::Docs(path) => documents::urls_of(path, wanted, cap),
            UrlSource::Side(side) => side.urls_of(wanted, cap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(dir: &Path, n: usize, rows: &[u32], url: impl Fn(u32) -> String) -> UrlSide {
        let mut set = RankBits::new(n);
        rows.iter().for_each(|&r| set.insert(r));
        let mut w = SideWriter::create(set, dir.join("url-side.bin")).unwrap();
        (0..n as u32).for_each(|r| w.add(r, &url(r)));
        w.finish().unwrap()
    }

    fn url(r: u32) -> String {
        // Lengths from 0 up, some non-ASCII.
        format!("https://h{r}.example/{}", "é/".repeat(r as usize % 7))
            .chars()
            .take(r as usize % 40)
            .collect()
    }

    #[test]
    fn gathers_what_docs_csv_would_give() {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<u32> = (0..500).filter(|r| r % 3 != 1).collect();
        let s = side(dir.path(), 500, &rows, url);
        for wanted in [vec![], vec![0], rows.clone(), rows.iter().copied().filter(|r| r % 5 == 0).collect()] {
            let (urls, stopped) = s.urls_of(&wanted, None).unwrap();
            assert_eq!(stopped, None);
            for &r in &wanted {
                assert_eq!(urls.get(r), Some(url(r).as_str()), "row {r}");
            }
            assert_eq!(urls.get(1), None);
        }
    }

    #[test]
    fn a_cap_stops_where_urls_stop_fitting() {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<u32> = (0..100).collect();
        let s = side(dir.path(), 100, &rows, |r| format!("u{r:03}"));
        // Four bytes a URL: the places of 100 rows and ten URLs.
        let cap = 100 * documents::URL_PLACE + 40;
        let (urls, stopped) = s.urls_of(&rows, Some(cap)).unwrap();
        assert_eq!(stopped, Some(10));
        assert_eq!(urls.get(9), Some("u009"));
        assert_eq!(urls.get(10), None);
    }

    #[test]
    fn is_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let s = side(dir.path(), 10, &[1, 2], url);
        assert!(dir.path().join("url-side.bin").is_file());
        drop(s);
        assert!(!dir.path().join("url-side.bin").exists());
    }

    #[test]
    fn a_damaged_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = side(dir.path(), 10, &[1, 2, 3], |r| format!("u{r}"));
        std::fs::write(dir.path().join("url-side.bin"), b"\x02\0\0\0u1").unwrap();
        let err = s.urls_of(&[1, 3], None).unwrap_err();
        assert!(format!("{err:#}").contains("damaged"), "{err:#}");
    }
}
