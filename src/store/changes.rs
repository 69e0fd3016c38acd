//! The change table of an analysis made with `--previous`: what became of
//! every URL that had a document in the previous analysis or has one now.
//! The fingerprint stage writes `fingerprint-changes.csv`, with what it
//! measured of each page against the previous analysis (the chunks a
//! modified page kept, the page gone since whose text a new URL has most
//! of); the pairs stage writes `changes.csv`, the same rows with each
//! document's exact-group center now and the moves the criterion accepts
//! (a new URL becomes `moved`).
//!
//! | column | meaning |
//! |---|---|
//! | `doc_id` | the URL's docID (its handle through the chain) |
//! | `url` | the URL, as recorded |
//! | `change` | `new`, `moved`, `unchanged`, `modified`, `lost`, `orphaned`, `redirected` or `returned` ([`Change`]) |
//! | `missing_for` | analyses in a row the page has been lost or absent (0 when it has a document now) |
//! | `kept` | whether the document is in this analysis (`true`, `false`) |
//! | `center_before` | its exact-group center in the previous analysis; empty without a document there, or an empty one |
//! | `center_after` | `changes.csv` only: its center in this analysis; empty when it is not in it, or is empty |
//! | `moved_from`, `moved_from_url` | `changes.csv`, `moved` rows: the docID and URL of the page gone since that it is |
//! | `chunks_before`, `chunks_kept` | `modified` rows: the distinct chunks of the page's previous text, and how many of them its text now has |
//!
//! `fingerprint-changes.csv` has, in place of the `moved_` columns, the
//! candidate ([`Candidate`]): `candidate`, `candidate_exact`,
//! `candidate_shared`, `candidate_chunks` and the page's own `chunks`.
//!
//! Rows are in docID order.

use std::fmt;
use std::path::Path;

use super::csv_in::TableIn;
use super::csv_out::CsvOut;

/// What became of a URL since the previous analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Change {
    /// A URL never seen in the chain.
    New,
    /// A URL never seen in the chain, with the text (or a near-replica by
    /// the criterion) of a page whose URL is lost, orphaned or redirected
    /// in this analysis.
    Moved,
    /// The same normalized text as before (also a revisit or an HTTP 304).
    Unchanged,
    /// Another text.
    Modified,
    /// Had a document, now an HTTP error status (or a record that makes no
    /// document): its last text is kept for `--keep-missing` analyses.
    Lost,
    /// Had a document, absent from the new inputs: kept likewise.
    Orphaned,
    /// Had a document, now a redirect: it leaves at once.
    Redirected,
    /// Was missing before (kept or not), has a document again.
    Returned,
}

impl Change {
    pub(crate) const ALL: [Change; 8] = [
        Change::New,
        Change::Moved,
        Change::Unchanged,
        Change::Modified,
        Change::Lost,
        Change::Orphaned,
        Change::Redirected,
        Change::Returned,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Moved => "moved",
            Change::Unchanged => "unchanged",
            Change::Modified => "modified",
            Change::Lost => "lost",
            Change::Orphaned => "orphaned",
            Change::Redirected => "redirected",
            Change::Returned => "returned",
        }
    }

    fn from_name(name: &str) -> Option<Change> {
        Change::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of the two change tables a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeTable {
    /// `fingerprint-changes.csv`: no `center_after`.
    Fingerprint,
    /// `changes.csv`.
    Final,
}

impl ChangeTable {
    fn header(self) -> &'static [&'static str] {
        match self {
            ChangeTable::Fingerprint => &[
                "doc_id",
                "url",
                "change",
                "missing_for",
                "kept",
                "center_before",
                "chunks_before",
                "chunks_kept",
                "chunks",
                "candidate",
                "candidate_exact",
                "candidate_shared",
                "candidate_chunks",
            ],
            ChangeTable::Final => &[
                "doc_id",
                "url",
                "change",
                "missing_for",
                "kept",
                "center_before",
                "center_after",
                "moved_from",
                "moved_from_url",
                "chunks_before",
                "chunks_kept",
            ],
        }
    }
}

/// The page gone since that a new URL's text has most of, as the
/// fingerprint stage measured it; the pairs stage decides by the criterion
/// whether the new URL is that page moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Its docID.
    pub doc_id: u32,
    /// The same normalized text.
    pub exact: bool,
    /// Distinct chunks the two texts share (leaving out chunks of a site's
    /// template: see the fingerprint stage's `moves`).
    pub shared: u32,
    /// Its distinct chunks, those of a site's template left out (as they
    /// are from the new URL's, in [`ChangeRow::candidate`]).
    pub chunks: u32,
}

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChangeRow {
    pub doc_id: u32,
    pub url: String,
    pub change: Change,
    pub missing_for: u16,
    pub kept: bool,
    pub center_before: Option<u32>,
    /// `changes.csv` only.
    pub center_after: Option<u32>,
    /// `modified` rows: distinct chunks of the previous text, and of them
    /// those the text now has.
    pub chunks_kept: Option<(u32, u32)>,
    /// `fingerprint-changes.csv`, `new` rows with a URL: the page's own
    /// distinct chunks and its candidate, when it shares any chunk with a
    /// page gone since.
    pub candidate: Option<(u32, Candidate)>,
    /// `changes.csv`, `moved` rows: the docID and URL of the page gone.
    pub moved_from: Option<(u32, String)>,
}

impl ChangeRow {
    /// A row with nothing measured against the previous text.
    pub(crate) fn plain(
        doc_id: u32,
        url: String,
        change: Change,
        missing_for: u16,
        kept: bool,
        center_before: Option<u32>,
    ) -> ChangeRow {
        ChangeRow {
            doc_id,
            url,
            change,
            missing_for,
            kept,
            center_before,
            center_after: None,
            chunks_kept: None,
            candidate: None,
            moved_from: None,
        }
    }
}

/// Writes a change table, rows in docID order.
pub(crate) struct ChangesWriter {
    out: CsvOut,
    table: ChangeTable,
}

impl ChangesWriter {
    pub(crate) fn create(path: &Path, table: ChangeTable) -> anyhow::Result<ChangesWriter> {
        Ok(ChangesWriter { out: CsvOut::create(path, table.header())?, table })
    }

    pub(crate) fn push(&mut self, row: &ChangeRow) -> anyhow::Result<()> {
        // Numbers formatted in place: a String a field cost 15% of the
        // exact stage's CPU time under --previous (65,396 rows).
        let mut b: [itoa::Buffer; 10] = std::array::from_fn(|_| itoa::Buffer::new());
        let [id, missing, before, after, chunks_before, chunks_kept, chunks, c_id, c_shared, c_chunks] =
            &mut b;
        let (mut c_exact, mut from_url) = ("", "");
        let head: [&str; 6] = [
            id.format(row.doc_id),
            &row.url,
            row.change.name(),
            missing.format(row.missing_for),
            if row.kept { "true" } else { "false" },
            optional(before, row.center_before),
        ];
        let kept = [
            optional(chunks_before, row.chunks_kept.map(|k| k.0)),
            optional(chunks_kept, row.chunks_kept.map(|k| k.1)),
        ];
        match self.table {
            ChangeTable::Fingerprint => {
                let c = row.candidate;
                if let Some((_, c)) = c {
                    c_exact = if c.exact { "true" } else { "false" };
                }
                let tail: [&str; 5] = [
                    optional(chunks, c.map(|c| c.0)),
                    optional(c_id, c.map(|c| c.1.doc_id)),
                    c_exact,
                    optional(c_shared, c.map(|c| c.1.shared)),
                    optional(c_chunks, c.map(|c| c.1.chunks)),
                ];
                self.out.row(head.iter().chain(&kept).chain(&tail).copied())
            }
            ChangeTable::Final => {
                if let Some((_, url)) = &row.moved_from {
                    from_url = url;
                }
                let moved = [
                    optional(after, row.center_after),
                    optional(c_id, row.moved_from.as_ref().map(|m| m.0)),
                    from_url,
                ];
                self.out.row(head.iter().chain(&moved).chain(&kept).copied())
            }
        }
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.out.finish()
    }
}

/// An optional docID's field: empty for none.
fn optional(buf: &mut itoa::Buffer, v: Option<u32>) -> &str {
    match v {
        Some(v) => buf.format(v),
        None => "",
    }
}

/// Calls `f` with every row of the change table at `path`, checking its
/// header, its values and the docID order; an error names the file and
/// line.
pub(crate) fn for_each_change(
    path: &Path,
    table: ChangeTable,
    mut f: impl FnMut(ChangeRow) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = TableIn::open(path, table.header())?;
    while let Some(record) = reader.next()? {
        let line = record.line();
        let bad = |what: &str| record.bad(what);
        let both = |i: usize, j: usize| -> anyhow::Result<Option<(u32, u32)>> {
            match (record.optional(i)?, record.optional(j)?) {
                (Some(a), Some(b)) => Ok(Some((a, b))),
                (None, None) => Ok(None),
                _ => Err(bad(&format!("{}: one of two columns is empty", table.header()[i]))),
            }
        };
        let doc_id = record.number(0)?;
        let mut row = ChangeRow::plain(
            doc_id,
            record.text(1).to_string(),
            Change::from_name(record.text(2))
                .ok_or_else(|| bad(&format!("unknown change {:?}", record.text(2))))?,
            u16::try_from(record.number(3)?).map_err(|_| bad("missing_for is too large"))?,
            record.boolean(4)?,
            record.optional(5)?,
        );
        match table {
            ChangeTable::Fingerprint => {
                row.chunks_kept = both(6, 7)?;
                row.candidate = match (record.optional(8)?, record.optional(9)?) {
                    (Some(chunks), Some(doc_id)) => Some((
                        chunks,
                        Candidate {
                            doc_id,
                            exact: record.boolean(10)?,
                            shared: record.number(11)?,
                            chunks: record.number(12)?,
                        },
                    )),
                    (None, None) => None,
                    _ => return Err(bad("chunks and candidate: one is empty")),
                };
            }
            ChangeTable::Final => {
                row.center_after = record.optional(6)?;
                row.moved_from = record.optional(7)?.map(|id| (id, record.text(8).to_string()));
                row.chunks_kept = both(9, 10)?;
            }
        }
        f(row).map_err(|e| super::row_error(e, path, line))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_damage_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("changes.csv");
        let rows: Vec<ChangeRow> = Change::ALL
            .iter()
            .enumerate()
            .map(|(i, &change)| ChangeRow {
                center_after: (i > 4).then_some(0),
                chunks_kept: (change == Change::Modified).then_some((7, 3)),
                moved_from: (change == Change::Moved).then(|| (1, "http://a.example/old,\"x\"".to_string())),
                ..ChangeRow::plain(
                    i as u32 * 3,
                    format!("http://a.example/{i},x"),
                    change,
                    i as u16,
                    i % 2 == 0,
                    (i > 2).then_some(i as u32),
                )
            })
            .collect();
        let round_trip = |table: ChangeTable, rows: &[ChangeRow]| {
            let mut w = ChangesWriter::create(&path, table).unwrap();
            for r in rows {
                w.push(r).unwrap();
            }
            w.finish().unwrap();
            let mut back = Vec::new();
            for_each_change(&path, table, |r| {
                back.push(r);
                Ok(())
            })
            .unwrap();
            back
        };
        // The working table keeps candidates, not moves or centers now.
        let working: Vec<ChangeRow> = rows
            .iter()
            .map(|r| ChangeRow {
                center_after: None,
                moved_from: None,
                candidate: (r.change == Change::New)
                    .then_some((9, Candidate { doc_id: 1, exact: false, shared: 4, chunks: 11 })),
                ..r.clone()
            })
            .collect();
        assert_eq!(round_trip(ChangeTable::Fingerprint, &working), working);
        assert_eq!(round_trip(ChangeTable::Final, &rows), rows);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(
            "doc_id,url,change,missing_for,kept,center_before,center_after,moved_from,moved_from_url,\
             chunks_before,chunks_kept\n0,"
        ));
        std::fs::write(&path, text.replace(",modified,", ",changed,")).unwrap();
        let e = format!("{:#}", for_each_change(&path, ChangeTable::Final, |_| Ok(())).unwrap_err());
        assert!(e.contains("changes.csv line 5: unknown change"), "{e}");
    }
}
