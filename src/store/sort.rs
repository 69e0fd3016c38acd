//! Sorting record files within the memory budget.
//!
//! A file whose records fit the budget is sorted in memory; a larger one
//! goes through `extsort`, which spills sorted segments of the budget's size
//! and merges them. Both paths yield the same order, so the choice never
//! shows in the output.

use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Context;
use extsort::{ExternalSorter, Sortable};

use super::{Mapped, Record};

/// Calls `emit` for every record of `src` in ascending order, holding at
/// most about `budget` bytes of records in memory.
pub fn sorted<R: Record + Ord>(
    src: &Mapped<R>,
    budget: u64,
    scratch: &Path,
    mut emit: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let in_memory = std::mem::size_of::<R>().max(1) as u64;
    let max_in_memory = (budget / in_memory).max(1024);
    if src.len() as u64 <= max_in_memory {
        let mut records: Vec<R> = src.iter().collect();
        records.sort_unstable();
        for r in records {
            emit(r)?;
        }
        return Ok(());
    }
    let sorter =
        ExternalSorter::new().with_segment_size(max_in_memory as usize).with_sort_dir(scratch.to_path_buf());
    let iter = sorter
        .sort(src.iter().map(Sorted))
        .with_context(|| format!("cannot sort in {}", scratch.display()))?;
    for r in iter {
        let r = r.with_context(|| format!("cannot read sorted records in {}", scratch.display()))?;
        emit(r.0)?;
    }
    Ok(())
}

/// A record as `extsort` wants it: ordered, and encoded in its file layout.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Sorted<R>(R);

impl<R: Record> Sortable for Sorted<R> {
    fn encode<W: Write>(&self, write: &mut W) -> io::Result<()> {
        let mut buf = [0u8; 32];
        self.0.encode(&mut buf[..R::SIZE]);
        write.write_all(&buf[..R::SIZE])
    }

    fn decode<Rd: Read>(read: &mut Rd) -> io::Result<Self> {
        let mut buf = [0u8; 32];
        read.read_exact(&mut buf[..R::SIZE])?;
        Ok(Sorted(R::decode(&buf[..R::SIZE])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ChunkRecord, Header, RecordWriter};

    fn sort_with_budget(n: u32, budget: u64) -> Vec<ChunkRecord> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.fpd");
        let mut w = RecordWriter::create(&path, Header::new::<ChunkRecord>("", false, 0, 1)).unwrap();
        // A fixed scrambled order.
        for i in 0..n {
            let x = ((u64::from(i) * 7919) % u64::from(n)) as u32;
            w.push(&ChunkRecord { fprint: (x % 97) as u64, doc: x }).unwrap();
        }
        w.finish().unwrap();
        let m = Mapped::<ChunkRecord>::open(&path).unwrap();
        let mut out = Vec::new();
        sorted(&m, budget, dir.path(), |r| {
            out.push(r);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn external_and_in_memory_sorts_agree() {
        let small = sort_with_budget(20_000, 1 << 30);
        let spilled = sort_with_budget(20_000, 16 * 1024);
        assert_eq!(small.len(), 20_000);
        assert!(small.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(small, spilled);
    }
}
