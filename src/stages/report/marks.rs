//! Per-row marks found out of row order and read back in row order: which
//! URLs have a `www.` or https form beside them, which titles are not the
//! first of their host, which fuzzy signatures other documents share.
//!
//! Each was a list with an entry for every document (1 to 25 bytes a
//! document) that the report held until it wrote flags.csv. Only the rows
//! that carry a mark are recorded now, within a share of `--memory` and
//! spilled to the stage's scratch directory beyond it
//! ([`crate::store::sort::Batched`]), and flags.csv's pass over docs.csv
//! reads them in row order beside it ([`MarkCursor`]).
//!
//! Scratch record kind 21, 8 bytes: the row and the mark's value, sorted
//! by row, then value.

use std::path::Path;

use crate::store::sort::{Batched, SortedReader, SortedRecords};
use crate::store::{Record, le_u32};

/// One mark of one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mark {
    row: u32,
    value: u32,
}

/// Scratch record kind 21, 8 bytes: row, value.
impl Record for Mark {
    const KIND: u32 = 21;
    const SIZE: usize = 8;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.row.to_le_bytes());
        out[4..8].copy_from_slice(&self.value.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        Mark { row: le_u32(&b[..4]), value: le_u32(&b[4..8]) }
    }
}

/// Marks gathered in any order.
pub struct Marks {
    marks: Batched<Mark>,
    sorted: std::path::PathBuf,
}

impl Marks {
    /// Up to `expected` marks held within `budget` bytes, spilled to
    /// `scratch` as `name`.fpd beyond it.
    pub fn new(budget: u64, expected: u64, scratch: &Path, name: &str) -> Marks {
        Marks {
            marks: Batched::new(budget, expected, scratch.join(format!("{name}.fpd"))),
            sorted: scratch.join(format!("{name}.sorted.fpd")),
        }
    }

    pub fn push(&mut self, row: u32, value: u32) -> anyhow::Result<()> {
        self.marks.push(Mark { row, value })
    }

    /// The marks in row order.
    pub fn finish(self) -> anyhow::Result<Sorted> {
        Ok(Sorted { marks: self.marks.finish(&self.sorted)? })
    }
}

/// Marks in row order.
pub struct Sorted {
    marks: SortedRecords<Mark>,
}

impl Sorted {
    /// Reads the marks of rows asked for in ascending order.
    pub fn cursor(&self) -> anyhow::Result<MarkCursor<'_>> {
        let mut reader = self.marks.reader()?;
        let next = reader.next_record()?;
        Ok(MarkCursor { reader, next })
    }
}

/// Reads [`Sorted`] marks for rows in ascending order.
pub struct MarkCursor<'a> {
    reader: SortedReader<'a, Mark>,
    next: Option<Mark>,
}

impl MarkCursor<'_> {
    /// The values of `row`'s marks or-ed together, `None` without one.
    /// Rows come in ascending order; the marks of rows skipped are passed.
    pub fn at(&mut self, row: u32) -> anyhow::Result<Option<u32>> {
        let mut value = None;
        while let Some(m) = self.next.filter(|m| m.row <= row) {
            if m.row == row {
                value = Some(value.unwrap_or(0) | m.value);
            }
            self.next = self.reader.next_record()?;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_come_back_by_row_or_ed_held_or_spilled() {
        let mut rng = crate::testing::XorShift::new(21);
        let marks: Vec<(u32, u32)> = (0..5000).map(|_| (rng.below(3000) as u32, 1 << rng.below(3))).collect();
        let mut expected = vec![None; 3000];
        for &(row, value) in &marks {
            let slot: &mut Option<u32> = &mut expected[row as usize];
            *slot = Some(slot.unwrap_or(0) | value);
        }
        for budget in [1 << 20, 0] {
            let dir = tempfile::tempdir().unwrap();
            let mut m = Marks::new(budget, 5000, dir.path(), "m");
            for &(row, value) in &marks {
                m.push(row, value).unwrap();
            }
            let sorted = m.finish().unwrap();
            // Every row, and every third row (the marks between passed).
            for step in [1, 3] {
                let mut cursor = sorted.cursor().unwrap();
                for row in (0..3000).step_by(step) {
                    assert_eq!(cursor.at(row).unwrap(), expected[row as usize], "row {row}, budget {budget}");
                }
            }
            drop(sorted);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "scratch files left");
        }
    }
}
