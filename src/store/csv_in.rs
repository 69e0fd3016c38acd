//! Reading back the store's own CSV tables keyed by docID (`changes.csv`,
//! `against.csv`, `records/fingerprint-changes.csv`), the counterpart of
//! `csv_out.rs`: the header checked, every row's column count checked, the
//! docIDs of the first column ascending, and each cell parsed with an
//! error that names the file, the line and the column. A table that fails
//! any of these is damaged, never half read.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// A table being read, row by row.
pub(crate) struct TableIn {
    path: PathBuf,
    header: &'static [&'static str],
    reader: csv::Reader<File>,
    record: csv::StringRecord,
    last: Option<u32>,
}

impl TableIn {
    /// Opens `path` and checks its header is `header`.
    pub(crate) fn open(path: &Path, header: &'static [&'static str]) -> anyhow::Result<TableIn> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let found = reader.headers().with_context(|| format!("cannot read {}", path.display()))?;
        if found.iter().ne(header.iter().copied()) {
            bail!("{} line 1: expected the header {}", path.display(), header.join(","));
        }
        Ok(TableIn { path: path.to_path_buf(), header, reader, record: csv::StringRecord::new(), last: None })
    }

    /// The next row, `None` after the last. Its first column is its docID,
    /// above the previous row's.
    pub(crate) fn next(&mut self) -> anyhow::Result<Option<Row<'_>>> {
        let line = self.reader.position().line();
        if !self
            .reader
            .read_record(&mut self.record)
            .with_context(|| format!("cannot read {} (line {line})", self.path.display()))?
        {
            return Ok(None);
        }
        let row = Row { path: &self.path, header: self.header, record: &self.record, line };
        let columns = self.header.len();
        if row.record.len() != columns {
            return Err(row.bad(&format!("expected {columns} columns, found {}", row.record.len())));
        }
        let doc_id = row.number(0)?;
        if self.last.is_some_and(|l| l >= doc_id) {
            return Err(row.bad("rows are not in docID order"));
        }
        self.last = Some(doc_id);
        Ok(Some(row))
    }
}

/// One row of a table, its cells read by column index.
pub(crate) struct Row<'a> {
    path: &'a Path,
    header: &'static [&'static str],
    record: &'a csv::StringRecord,
    line: u64,
}

impl Row<'_> {
    /// Its line in the file (1 is the header).
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// An error naming the file and the line.
    pub(crate) fn bad(&self, what: &str) -> anyhow::Error {
        anyhow::anyhow!("{} line {}: {what}", self.path.display(), self.line)
    }

    pub(crate) fn text(&self, i: usize) -> &str {
        &self.record[i]
    }

    pub(crate) fn number(&self, i: usize) -> anyhow::Result<u32> {
        self.record[i].parse().map_err(|_| self.bad(&format!("{} is not a number", self.header[i])))
    }

    /// A number, or `None` for an empty cell.
    pub(crate) fn optional(&self, i: usize) -> anyhow::Result<Option<u32>> {
        if self.record[i].is_empty() { Ok(None) } else { self.number(i).map(Some) }
    }

    pub(crate) fn boolean(&self, i: usize) -> anyhow::Result<bool> {
        match &self.record[i] {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.bad(&format!("{} is neither true nor false", self.header[i]))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &[&str] = &["doc_id", "n", "flag"];

    fn read(text: &str) -> anyhow::Result<Vec<(u32, Option<u32>, bool)>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, text).unwrap();
        let mut table = TableIn::open(&path, HEADER)?;
        let mut rows = Vec::new();
        while let Some(row) = table.next()? {
            rows.push((row.number(0)?, row.optional(1)?, row.boolean(2)?));
        }
        Ok(rows)
    }

    #[test]
    fn reads_rows_and_names_the_line_of_damage() {
        assert_eq!(
            read("doc_id,n,flag\n0,,true\n3,7,false\n").unwrap(),
            vec![(0, None, true), (3, Some(7), false)]
        );
        let e = |text: &str| format!("{:#}", read(text).unwrap_err());
        assert!(e("doc_id,n\n").contains("line 1: expected the header doc_id,n,flag"));
        assert!(e("doc_id,n,flag\n0,1,true\n0,1,true\n").contains("line 3: rows are not in docID order"));
        assert!(e("doc_id,n,flag\n0,x,true\n").contains("line 2: n is not a number"));
        assert!(e("doc_id,n,flag\n0,1,yes\n").contains("line 2: flag is neither true nor false"));
        assert!(e("doc_id,n,flag\n0,1\n").contains("line 2: expected 3 columns, found 2"));
    }
}
