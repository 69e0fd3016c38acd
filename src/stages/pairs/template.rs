//! Template chunks (`--template`): a site's own boilerplate, left out of
//! the documents of that site before any counting.
//!
//! A chunk that stands on many pages of one host is that host's template:
//! its navigation, its sidebar, the banner a mirror wraps every page in,
//! the list of methods every iterator page of a manual repeats. It says
//! nothing about which page copies which, and it hides the copies: a
//! mirror's page is its original plus the mirror's banner, so the banner
//! lowers the two pages' similarity, most of all for short pages, and two
//! different pages of one site that share only the template look alike.
//! So a chunk held by more than `max(min, share × pages)` counted
//! documents of one host, where `pages` is that host's counted documents,
//! is left out of those documents' sets; the host's other chunks, and the
//! same chunk on the pages of other hosts where it is not template, stay.
//! Unlike `--max-df`, which counts documents over the whole crawl, this
//! keeps a page copied onto a thousand hosts (a syndicated article, a
//! licence) a near-replica of each of its copies: on each host it stands
//! once.
//!
//! The rule was chosen on the by-construction benchmark (docs/defaults.md):
//! `5:0.01` found 99.4% of the known copies of every kind at 98.5% pair
//! precision with the default criterion; without it, no criterion reached
//! 95% precision with 95% recall.
//!
//! The pairs stage applies it once, as a filter over the FPrint-DocID
//! partitions written into its scratch space, so that every counting
//! method, the set sizes and `--max-df` see the same filtered records.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rayon::prelude::*;

use super::Counted;
use crate::store::criterion::Ratio;
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::scopes::{Scope, ScopeNumbers};
use crate::store::{ChunkRecord, Header, Mapped, OutDir, RecordWriter};

/// When a chunk is a host's template: held by more than
/// `max(min, share × pages)` of the host's counted documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateRule {
    pub min: u32,
    pub share: Option<Ratio>,
}

impl TemplateRule {
    /// The default: more than 5 pages of a host, and more than 1% of them.
    pub const DEFAULT: TemplateRule = TemplateRule { min: 5, share: Some(Ratio::from_ten_thousandths(100)) };

    /// The most documents of a host of `pages` counted documents that may
    /// hold a chunk that is not template.
    pub(crate) fn limit(&self, pages: u32) -> u32 {
        let share = self.share.map_or(0, |q| (q.get() * u64::from(pages) / 10_000) as u32);
        self.min.max(share)
    }
}

impl FromStr for TemplateRule {
    type Err = String;
    /// `N` (more than N pages of a host) or `N:SHARE` (and more than that
    /// share of its pages: `5:0.01`).
    fn from_str(s: &str) -> Result<TemplateRule, String> {
        let (min, share) = match s.split_once(':') {
            Some((min, share)) => (min, Some(share)),
            None => (s, None),
        };
        let min = match min.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(format!(
                    "template rule '{s}': N must be a whole number of at least 1, not '{min}'"
                ));
            }
        };
        let share = share
            .map(|q| q.parse::<Ratio>().map_err(|e| format!("template rule '{s}': SHARE {e}")))
            .transpose()?;
        Ok(TemplateRule { min, share })
    }
}

impl fmt::Display for TemplateRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.share {
            Some(q) => write!(f, "{}:{q}", self.min),
            None => write!(f, "{}", self.min),
        }
    }
}

/// What the filter left out.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TemplateStats {
    /// (host, chunk) pairs found to be template.
    pub chunks: u64,
    /// Records left out: a template chunk in one document.
    pub records: u64,
    /// Records of documents not counted (non-center copies) left out.
    pub copies: u64,
}

/// Each row's host, numbered, and the most documents of each host that
/// may hold a chunk that is not its template.
pub(crate) struct Template {
    of_row: Vec<u32>,
    limits: Vec<u32>,
    /// The smallest limit: a chunk held by no more documents in all is
    /// template nowhere.
    smallest: u32,
}

impl Template {
    /// Reads the hosts of the analysis in `out` (4 bytes a document).
    pub(crate) fn read(out: &OutDir, counted: &Counted, rule: TemplateRule) -> anyhow::Result<Template> {
        let mut numbers = ScopeNumbers::default();
        let mut of_row = Vec::with_capacity(counted.documents());
        for_each_doc(&out.fingerprint_docs(), DocTable::Fingerprint, |doc| {
            of_row.push(numbers.id(Scope::Host.of(doc.host)).0);
            Ok(())
        })?;
        if of_row.len() != counted.documents() {
            anyhow::bail!(
                "{} has {} rows and {} names {} documents: the analysis is damaged",
                out.fingerprint_docs().display(),
                of_row.len(),
                out.centers().display(),
                counted.documents()
            );
        }
        let mut pages = vec![0u32; numbers.len()];
        for (row, &host) in of_row.iter().enumerate() {
            if counted.contains(row as u32) {
                pages[host as usize] += 1;
            }
        }
        let limits: Vec<u32> = pages.iter().map(|&p| rule.limit(p)).collect();
        let smallest = limits.iter().copied().min().unwrap_or(u32::MAX);
        Ok(Template { of_row, limits, smallest })
    }

    /// Keeps, of `docs` (counted documents holding one chunk, ascending),
    /// those for which the chunk is not their host's template, in the same
    /// order; returns the (host, chunk) pairs found template and the
    /// documents left out.
    fn keep(&self, docs: &mut Vec<u32>, by_host: &mut Vec<(u32, u32)>) -> (u64, u64) {
        if docs.len() <= self.smallest as usize {
            // No host can hold it more often than the smallest limit.
            return (0, 0);
        }
        by_host.clear();
        by_host.extend(docs.iter().map(|&d| (self.of_row[d as usize], d)));
        by_host.sort_unstable();
        docs.clear();
        let (mut chunks, mut left_out) = (0, 0);
        for run in by_host.chunk_by(|a, b| a.0 == b.0) {
            if run.len() > self.limits[run[0].0 as usize] as usize {
                chunks += 1;
                left_out += run.len() as u64;
            } else {
                docs.extend(run.iter().map(|&(_, d)| d));
            }
        }
        docs.sort_unstable();
        (chunks, left_out)
    }

    /// Of the counted documents holding one chunk (ascending), those for
    /// which it is not their host's template, ascending: what the pairs
    /// stage's filter keeps of that chunk.
    pub(crate) fn kept(&self, mut docs: Vec<u32>) -> Vec<u32> {
        self.keep(&mut docs, &mut Vec::new());
        docs
    }

    /// Writes the partitions less the template chunks (and less the
    /// records of documents not counted) into `scratch`, one file per
    /// partition, and returns their paths in the same order.
    pub(crate) fn filter(
        &self,
        parts: &[PathBuf],
        counted: &Counted,
        scratch: &Path,
    ) -> anyhow::Result<(Vec<PathBuf>, TemplateStats)> {
        let done: Vec<anyhow::Result<(PathBuf, TemplateStats)>> = parts
            .par_iter()
            .enumerate()
            .map(|(i, part)| {
                let path = scratch.join(format!("template-{i:03}.fpd"));
                let stats = self.filter_part(part, counted, &path)?;
                Ok((path, stats))
            })
            .collect();
        let mut paths = Vec::with_capacity(parts.len());
        let mut stats = TemplateStats::default();
        for d in done {
            let (path, s) = d?;
            paths.push(path);
            stats.chunks += s.chunks;
            stats.records += s.records;
            stats.copies += s.copies;
        }
        Ok((paths, stats))
    }

    fn filter_part(&self, part: &Path, counted: &Counted, dst: &Path) -> anyhow::Result<TemplateStats> {
        let records = Mapped::<ChunkRecord>::open(part)?;
        let mut w = RecordWriter::<ChunkRecord>::create(dst, Header::new::<ChunkRecord>("", true, 0, 1))?;
        let mut stats = TemplateStats::default();
        let mut docs: Vec<u32> = Vec::new();
        let mut by_host: Vec<(u32, u32)> = Vec::new();
        let mut flush = |fprint: u64, docs: &mut Vec<u32>, stats: &mut TemplateStats| -> anyhow::Result<()> {
            let (chunks, left_out) = self.keep(docs, &mut by_host);
            stats.chunks += chunks;
            stats.records += left_out;
            for &doc in docs.iter() {
                w.push(&ChunkRecord { fprint, doc })?;
            }
            docs.clear();
            Ok(())
        };
        let documents = counted.documents();
        let mut current = None;
        for r in records.iter() {
            if r.doc as usize >= documents {
                anyhow::bail!("{}", crate::store::integrity::row_beyond_file(part, r.doc, documents as u64));
            }
            if current != Some(r.fprint) {
                if let Some(fprint) = current {
                    flush(fprint, &mut docs, &mut stats)?;
                }
                current = Some(r.fprint);
            }
            if counted.contains(r.doc) {
                docs.push(r.doc);
            } else {
                stats.copies += 1;
            }
        }
        if let Some(fprint) = current {
            flush(fprint, &mut docs, &mut stats)?;
        }
        w.finish()?;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_and_print_back() {
        let r: TemplateRule = "5:0.01".parse().unwrap();
        assert_eq!(r, TemplateRule::DEFAULT);
        assert_eq!(r.to_string(), "5:0.01");
        assert_eq!("12".parse::<TemplateRule>().unwrap(), TemplateRule { min: 12, share: None });
        for bad in ["0", "x", "5:0", "5:2", "", ":0.1", "5:"] {
            assert!(bad.parse::<TemplateRule>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_limit_is_the_larger_of_the_count_and_the_share() {
        let r = TemplateRule::DEFAULT;
        assert_eq!(r.limit(19), 5);
        assert_eq!(r.limit(500), 5);
        assert_eq!(r.limit(2937), 29);
        assert_eq!(r.limit(100_000), 1000);
        assert_eq!(TemplateRule { min: 3, share: None }.limit(1_000_000), 3);
    }
}
