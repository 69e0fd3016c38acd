//! The change table of an analysis made with `--previous`: what became of
//! every URL that had a document in the previous analysis or has one now.
//! The fingerprint stage writes `fingerprint-changes.csv`; the exact stage
//! writes `changes.csv`, the same rows with each document's exact-group
//! center now.
//!
//! | column | meaning |
//! |---|---|
//! | `doc_id` | the URL's docID (its handle through the chain) |
//! | `url` | the URL, as recorded |
//! | `change` | `new`, `unchanged`, `modified`, `lost`, `orphaned`, `redirected` or `returned` ([`Change`]) |
//! | `missing_for` | analyses in a row the page has been lost or absent (0 when it has a document now) |
//! | `kept` | whether the document is in this analysis (`true`, `false`) |
//! | `center_before` | its exact-group center in the previous analysis; empty without a document there, or an empty one |
//! | `center_after` | `changes.csv` only: its center in this analysis; empty when it is not in it, or is empty |
//!
//! Rows are in docID order.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::csv_out::CsvOut;

/// What became of a URL since the previous analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Change {
    /// A URL never seen in the chain.
    New,
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
    pub(crate) const ALL: [Change; 7] = [
        Change::New,
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
            ChangeTable::Fingerprint => &["doc_id", "url", "change", "missing_for", "kept", "center_before"],
            ChangeTable::Final => {
                &["doc_id", "url", "change", "missing_for", "kept", "center_before", "center_after"]
            }
        }
    }
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
        let mut b = [itoa::Buffer::new(), itoa::Buffer::new(), itoa::Buffer::new(), itoa::Buffer::new()];
        let [id, missing, before, after] = &mut b;
        let fields: [&str; 7] = [
            id.format(row.doc_id),
            &row.url,
            row.change.name(),
            missing.format(row.missing_for),
            if row.kept { "true" } else { "false" },
            optional(before, row.center_before),
            optional(after, row.center_after),
        ];
        let columns = self.table.header().len();
        self.out.row(&fields[..columns])
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
    let path: PathBuf = path.to_path_buf();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let header = reader.headers().with_context(|| format!("cannot read {}", path.display()))?;
    if header.iter().ne(table.header().iter().copied()) {
        bail!("{} line 1: expected the header {}", path.display(), table.header().join(","));
    }
    let mut record = csv::StringRecord::new();
    let mut last: Option<u32> = None;
    loop {
        let line = reader.position().line();
        if !reader
            .read_record(&mut record)
            .with_context(|| format!("cannot read {} (line {line})", path.display()))?
        {
            return Ok(());
        }
        let bad = |what: &str| anyhow::anyhow!("{} line {line}: {what}", path.display());
        let columns = table.header().len();
        if record.len() != columns {
            return Err(bad(&format!("expected {columns} columns, found {}", record.len())));
        }
        let number = |i: usize, name: &str| -> anyhow::Result<u32> {
            record[i].parse().map_err(|_| bad(&format!("{name} is not a number")))
        };
        let optional = |i: usize, name: &str| -> anyhow::Result<Option<u32>> {
            if record[i].is_empty() { Ok(None) } else { number(i, name).map(Some) }
        };
        let doc_id = number(0, "doc_id")?;
        if last.is_some_and(|l| l >= doc_id) {
            return Err(bad("rows are not in docID order"));
        }
        last = Some(doc_id);
        let row = ChangeRow {
            doc_id,
            url: record[1].to_string(),
            change: Change::from_name(&record[2])
                .ok_or_else(|| bad(&format!("unknown change {:?}", &record[2])))?,
            missing_for: u16::try_from(number(3, "missing_for")?)
                .map_err(|_| bad("missing_for is too large"))?,
            kept: match &record[4] {
                "true" => true,
                "false" => false,
                _ => return Err(bad("kept is neither true nor false")),
            },
            center_before: optional(5, "center_before")?,
            center_after: if table == ChangeTable::Final { optional(6, "center_after")? } else { None },
        };
        f(row).map_err(|e| super::row_error(e, &path, line))?;
    }
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
                doc_id: i as u32 * 3,
                url: format!("http://a.example/{i},x"),
                change,
                missing_for: i as u16,
                kept: i % 2 == 0,
                center_before: (i > 2).then_some(i as u32),
                center_after: (i > 4).then_some(0),
            })
            .collect();
        let mut w = ChangesWriter::create(&path, ChangeTable::Final).unwrap();
        for r in &rows {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
        let mut back = Vec::new();
        for_each_change(&path, ChangeTable::Final, |r| {
            back.push(r);
            Ok(())
        })
        .unwrap();
        assert_eq!(back, rows);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("doc_id,url,change,missing_for,kept,center_before,center_after\n0,"));
        std::fs::write(&path, text.replace(",modified,", ",changed,")).unwrap();
        let e = format!("{:#}", for_each_change(&path, ChangeTable::Final, |_| Ok(())).unwrap_err());
        assert!(e.contains("changes.csv line 4: unknown change"), "{e}");
    }
}
