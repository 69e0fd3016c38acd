//! Each row's host, by its number in [`super::documents::Docs::hosts`]: the
//! one column of docs.csv the report reads again after loading it, always
//! in row order (the host tables, the groups' hosts, the per-host counts).
//!
//! Held as a list it took 4 bytes a document whatever `--memory`, the
//! largest part of what the report held per document (96 MB at the paper's
//! 24 million pages). It is held within a share of the budget, and beyond
//! it written to a scratch file (record kind 25, 4 bytes) and read back
//! through a buffer each time: three sequential reads of 4 bytes a row.

use std::path::PathBuf;

use anyhow::bail;

use crate::store::sort::SpillFile;
use crate::store::{Record, RecordReader, le_u32};

/// A row's host number. Scratch record kind 25, 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct HostNumber(u32);

impl Record for HostNumber {
    const KIND: u32 = 25;
    const SIZE: usize = 4;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.0.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        HostNumber(le_u32(&b[..4]))
    }
}

/// The column, read in row order with [`HostColumn::for_each`]: in memory,
/// or in a scratch file that the stage's scratch directory takes away.
#[derive(Clone, Debug, Default)]
pub struct HostColumn {
    held: Vec<u32>,
    file: Option<PathBuf>,
    rows: usize,
}

impl From<Vec<u32>> for HostColumn {
    fn from(held: Vec<u32>) -> HostColumn {
        HostColumn { rows: held.len(), held, file: None }
    }
}

impl HostColumn {
    /// Calls `f(row, host)` for every row in order.
    pub fn for_each(&self, mut f: impl FnMut(u32, u32) -> anyhow::Result<()>) -> anyhow::Result<()> {
        let Some(path) = &self.file else {
            return self.held.iter().enumerate().try_for_each(|(row, &host)| f(row as u32, host));
        };
        let mut reader = RecordReader::<HostNumber>::open(path)?;
        let mut row = 0u32;
        while let Some(HostNumber(host)) = reader.next_record()? {
            f(row, host)?;
            row += 1;
        }
        if row as usize != self.rows {
            bail!("{} holds {row} rows, not {}", path.display(), self.rows);
        }
        Ok(())
    }

    /// The column as a list, for tests that compare with a definition.
    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<u32> {
        let mut all = Vec::with_capacity(self.rows);
        self.for_each(|_, host| {
            all.push(host);
            Ok(())
        })
        .unwrap();
        all
    }
}

/// Builds a [`HostColumn`] a row at a time.
pub struct HostColumnBuilder {
    held: Vec<u32>,
    most: usize,
    /// Every row once `held` has filled.
    spill: SpillFile<HostNumber>,
    rows: usize,
}

impl HostColumnBuilder {
    /// A column held within `budget` bytes, written to `path` beyond it;
    /// `expected` rows are reserved for at most.
    pub fn new(budget: u64, expected: u64, path: PathBuf) -> HostColumnBuilder {
        let most = usize::try_from(budget / HostNumber::SIZE as u64).unwrap_or(usize::MAX).max(1024);
        let reserve = usize::try_from(expected).unwrap_or(0).min(most);
        HostColumnBuilder { held: Vec::with_capacity(reserve), most, spill: SpillFile::new(path), rows: 0 }
    }

    /// A column held whole, for commands that hold every row's verdict
    /// anyway and for tests.
    pub fn held() -> HostColumnBuilder {
        HostColumnBuilder {
            held: Vec::new(),
            most: usize::MAX,
            spill: SpillFile::new(PathBuf::new()),
            rows: 0,
        }
    }

    pub fn push(&mut self, host: u32) -> anyhow::Result<()> {
        self.rows += 1;
        if self.spill.is_used() {
            return self.spill.write(std::iter::once(HostNumber(host)));
        }
        self.held.push(host);
        if self.held.len() >= self.most {
            self.spill.write(std::mem::take(&mut self.held).into_iter().map(HostNumber))?;
        }
        Ok(())
    }

    pub fn finish(self) -> anyhow::Result<HostColumn> {
        let HostColumnBuilder { mut held, spill, rows, .. } = self;
        // Reserved for the rows expected, which may be many more than came.
        held.shrink_to_fit();
        Ok(HostColumn { held, file: spill.finish()?, rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_and_spilled_columns_read_back_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let hosts: Vec<u32> = (0..5000u32).map(|r| r.wrapping_mul(2_654_435_761) % 97).collect();
        for (builder, spilled) in [
            (HostColumnBuilder::held(), false),
            (HostColumnBuilder::new(1 << 20, 5000, dir.path().join("big")), false),
            (HostColumnBuilder::new(0, 5000, dir.path().join("small")), true),
        ] {
            let mut builder = builder;
            for &h in &hosts {
                builder.push(h).unwrap();
            }
            let column = builder.finish().unwrap();
            assert_eq!(column.file.is_some(), spilled);
            let mut rows = Vec::new();
            column
                .for_each(|row, host| {
                    rows.push(row);
                    assert_eq!(host, hosts[row as usize]);
                    Ok(())
                })
                .unwrap();
            assert_eq!(rows, (0..5000).collect::<Vec<_>>());
        }
        // A file cut short is an error, not a shorter column.
        let mut builder = HostColumnBuilder::new(0, 5000, dir.path().join("cut"));
        for &h in &hosts {
            builder.push(h).unwrap();
        }
        let mut column = builder.finish().unwrap();
        column.rows += 1;
        let e = format!("{:#}", column.for_each(|_, _| Ok(())).unwrap_err());
        assert!(e.contains("holds 5000 rows, not 5001"), "{e}");
    }
}
