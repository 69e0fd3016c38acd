//! One crawl measured against another (`--against REF_DIR`): the tables
//! the pairs stage writes when it counts the documents of this analysis
//! against those of a reference analysis, and never a pair inside either.
//!
//! `against.csv`, one row per document of this analysis, in docID order:
//!
//! | column | what |
//! |---|---|
//! | `doc_id`, `url` | the document |
//! | `chunks` | its set size: distinct chunks, template and stop chunks left out, as the criterion counts them (an exact copy has its center's) |
//! | `chunks_in_reference` | how many of those chunks some document of the reference holds (of the same scope, with `--scope`) |
//! | `ref_doc_id`, `ref_url` | the reference document it shares most with, of those that pass the criterion with it: the one sharing most chunks, then the reference's exact copy of its text, then the smallest docID. Empty when none passes (so also for an exact copy whose chunks are all template or stop chunks) |
//! | `ref_shared`, `ref_chunks` | the chunks the two share, and the reference document's set size |
//! | `share_in_ref`, `share_of_ref` | `ref_shared / chunks` (how much of this page the reference page holds: its containment there) and `ref_shared / ref_chunks` (the reverse), in millionths as `d.dddddd` |
//! | `exact` | `true` when the reference has the same normalized text (in the same scope) |
//! | `held` | `true` when the reference holds the page: an exact copy, or a reference page passes the criterion with it. `dedup --level against` writes the pages that are not held |
//!
//! `against-pairs.csv`: `doc_id,ref_doc_id,shared,chunks,ref_chunks`, every
//! pair of a counted document of this analysis (an exact-group center) and
//! a counted one of the reference that passes the criterion, sorted by
//! `(doc_id, ref_doc_id)`.

use std::path::Path;

use anyhow::bail;

use super::csv_in::TableIn;
use super::csv_out::CsvOut;

pub(crate) const HEADER: [&str; 12] = [
    "doc_id",
    "url",
    "chunks",
    "chunks_in_reference",
    "ref_doc_id",
    "ref_url",
    "ref_shared",
    "ref_chunks",
    "share_in_ref",
    "share_of_ref",
    "exact",
    "held",
];

pub(crate) const PAIRS_HEADER: [&str; 5] = ["doc_id", "ref_doc_id", "shared", "chunks", "ref_chunks"];

/// The reference document a page shares most with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    pub ref_doc_id: u32,
    pub ref_url: String,
    pub shared: u32,
    pub ref_chunks: u32,
}

/// One row of `against.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AgainstRow {
    pub doc_id: u32,
    pub url: String,
    pub chunks: u32,
    pub chunks_in_reference: u32,
    pub best: Option<Match>,
    pub exact: bool,
    pub held: bool,
}

/// `num / den` in millionths, rounded half up, as overlap.csv writes its
/// measures.
fn millionths(num: u32, den: u32) -> String {
    let (num, den) = (u64::from(num), u64::from(den).max(1));
    let m = (2 * num * 1_000_000 + den) / (2 * den);
    format!("{}.{:06}", m / 1_000_000, m % 1_000_000)
}

/// Writes `against.csv`.
pub(crate) struct AgainstWriter {
    out: CsvOut,
    last: Option<u32>,
}

impl AgainstWriter {
    pub(crate) fn create(path: &Path) -> anyhow::Result<AgainstWriter> {
        Ok(AgainstWriter { out: CsvOut::create(path, &HEADER)?, last: None })
    }

    pub(crate) fn push(&mut self, row: &AgainstRow) -> anyhow::Result<()> {
        if self.last.is_some_and(|l| l >= row.doc_id) {
            bail!("against.csv: docID {} written out of order", row.doc_id);
        }
        self.last = Some(row.doc_id);
        let flag = |b: bool| if b { "true".to_string() } else { "false".to_string() };
        let (ref_doc_id, ref_url, shared, ref_chunks, containment, reverse) = match &row.best {
            None => Default::default(),
            Some(m) => (
                m.ref_doc_id.to_string(),
                m.ref_url.clone(),
                m.shared.to_string(),
                m.ref_chunks.to_string(),
                millionths(m.shared, row.chunks),
                millionths(m.shared, m.ref_chunks),
            ),
        };
        self.out.row([
            row.doc_id.to_string(),
            row.url.clone(),
            row.chunks.to_string(),
            row.chunks_in_reference.to_string(),
            ref_doc_id,
            ref_url,
            shared,
            ref_chunks,
            containment,
            reverse,
            flag(row.exact),
            flag(row.held),
        ])
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.out.finish()
    }
}

/// One row of `against-pairs.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AgainstPair {
    pub doc_id: u32,
    pub ref_doc_id: u32,
    pub shared: u32,
    pub chunks: u32,
    pub ref_chunks: u32,
}

/// Writes `against-pairs.csv`.
pub(crate) struct PairsWriter {
    out: CsvOut,
    rows: u64,
}

impl PairsWriter {
    pub(crate) fn create(path: &Path) -> anyhow::Result<PairsWriter> {
        Ok(PairsWriter { out: CsvOut::create(path, &PAIRS_HEADER)?, rows: 0 })
    }

    pub(crate) fn push(&mut self, p: &AgainstPair) -> anyhow::Result<()> {
        self.rows += 1;
        self.out.row([p.doc_id, p.ref_doc_id, p.shared, p.chunks, p.ref_chunks].map(|n| n.to_string()))
    }

    /// Finishes the table; returns its rows.
    pub(crate) fn finish(self) -> anyhow::Result<u64> {
        self.out.finish()?;
        Ok(self.rows)
    }
}

/// Calls `f` with every row of `against.csv`, in docID order; a row that
/// does not read names the file and line.
pub(crate) fn for_each_row(
    path: &Path,
    mut f: impl FnMut(AgainstRow) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut table = TableIn::open(path, &HEADER)?;
    while let Some(row) = table.next()? {
        let best = match row.optional(4)? {
            None => None,
            Some(ref_doc_id) => Some(Match {
                ref_doc_id,
                ref_url: row.text(5).to_string(),
                shared: row.number(6)?,
                ref_chunks: row.number(7)?,
            }),
        };
        let line = row.line();
        let parsed = AgainstRow {
            doc_id: row.number(0)?,
            url: row.text(1).to_string(),
            chunks: row.number(2)?,
            chunks_in_reference: row.number(3)?,
            best,
            exact: row.boolean(10)?,
            held: row.boolean(11)?,
        };
        f(parsed).map_err(|e| super::row_error(e, path, line))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("against.csv");
        let rows = vec![
            AgainstRow {
                doc_id: 0,
                url: "http://a/,x".into(),
                chunks: 3,
                chunks_in_reference: 0,
                best: None,
                exact: false,
                held: false,
            },
            AgainstRow {
                doc_id: 4,
                url: "http://a/b".into(),
                chunks: 3,
                chunks_in_reference: 2,
                best: Some(Match {
                    ref_doc_id: 7,
                    ref_url: "http://r/\"q\"".into(),
                    shared: 2,
                    ref_chunks: 9,
                }),
                exact: false,
                held: true,
            },
        ];
        let mut w = AgainstWriter::create(&path).unwrap();
        for r in &rows {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(",0.666667,0.222222,false,true\n"), "{text}");
        let mut back = Vec::new();
        for_each_row(&path, |r| {
            back.push(r);
            Ok(())
        })
        .unwrap();
        assert_eq!(back, rows);
    }

    #[test]
    fn measures_round_half_up_in_millionths() {
        assert_eq!(millionths(1, 3), "0.333333");
        assert_eq!(millionths(2, 3), "0.666667");
        assert_eq!(millionths(5, 5), "1.000000");
        assert_eq!(millionths(0, 0), "0.000000");
    }
}
