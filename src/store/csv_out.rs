//! The one way a CSV table is written: under its temporary name, renamed
//! into place when complete, so a killed run never leaves a
//! complete-looking partial table. Errors name the file being written.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{CannotWrite, commit, temp_path};

/// A CSV table being written.
pub(crate) struct CsvOut {
    path: PathBuf,
    writer: csv::Writer<BufWriter<File>>,
}

impl CsvOut {
    /// Starts `path` (under its temporary name) with its header row.
    pub(crate) fn create(path: &Path, header: &[&str]) -> anyhow::Result<CsvOut> {
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let writer = csv::Writer::from_writer(BufWriter::with_capacity(1 << 16, file));
        let mut out = CsvOut { path: path.to_path_buf(), writer };
        out.row(header)?;
        Ok(out)
    }

    pub(crate) fn row<T: AsRef<[u8]>>(&mut self, fields: impl IntoIterator<Item = T>) -> anyhow::Result<()> {
        self.writer.write_record(fields).with_context(|| self.write_error())
    }

    /// Flushes the table and renames it into place.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        let err = self.write_error();
        self.writer
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
            .context(err)?;
        commit(&self.path)
    }

    fn write_error(&self) -> CannotWrite {
        CannotWrite(temp_path(&self.path))
    }
}

/// Writes a whole table of rows, any of which can fail (rows read from
/// another file while they are written).
pub(crate) fn write_rows<R, S>(
    path: &Path,
    header: &[&str],
    rows: impl IntoIterator<Item = anyhow::Result<R>>,
) -> anyhow::Result<()>
where
    R: IntoIterator<Item = S>,
    S: AsRef<[u8]>,
{
    let mut out = CsvOut::create(path, header)?;
    for row in rows {
        out.row(row?)?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_appears_only_when_finished_and_quotes_as_csv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut out = CsvOut::create(&path, &["a", "b"]).unwrap();
        out.row(["1", "x,y"]).unwrap();
        assert!(!path.exists() && temp_path(&path).exists());
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,\"x,y\"\n");
        assert!(!temp_path(&path).exists());
    }

    #[test]
    fn a_failing_row_leaves_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let rows = vec![Ok(vec!["1"]), Err(anyhow::anyhow!("bad input"))];
        assert!(write_rows(&path, &["a"], rows).is_err());
        assert!(!path.exists());
    }
}
