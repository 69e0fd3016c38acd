//! The FPrint-DocID partitions looked up by fingerprint: the rows that
//! hold one chunk, by binary search in the one partition whose range holds
//! it, so that a question about a few chunks reads a few pages, not the
//! crawl's postings.

use anyhow::bail;

use super::{ChunkRecord, Mapped, OutDir};

/// Every partition of `fprint-docid/`, mapped, in partition order.
pub(crate) struct Postings {
    parts: Vec<Mapped<ChunkRecord>>,
    /// How far a fingerprint is shifted right to give its partition (the
    /// partitions split by its top bits); `None` for one partition.
    shift: Option<u32>,
}

impl Postings {
    /// Maps the partitions of `out`, checking that they are one whole
    /// sorted set: partitions 0 to P - 1 of P, P a power of two.
    pub(crate) fn open(out: &OutDir) -> anyhow::Result<Postings> {
        let dir = out.fprint_dir();
        let mut parts = Vec::new();
        for path in out.fprint_parts()? {
            parts.push(Mapped::<ChunkRecord>::open(&path)?);
        }
        let count = parts.len() as u32;
        let whole = count.is_power_of_two()
            && parts.iter().enumerate().all(|(i, p)| {
                let h = p.header();
                h.sorted && h.partition == i as u32 && h.partitions == count
            });
        if !whole {
            bail!("{} does not hold one whole set of sorted partitions", dir.display());
        }
        let shift = (count > 1).then(|| 64 - count.trailing_zeros());
        Ok(Postings { parts, shift })
    }

    /// The rows holding `fprint`, ascending.
    pub(crate) fn rows(&self, fprint: u64) -> impl Iterator<Item = u32> + '_ {
        let part = &self.parts[self.shift.map_or(0, |s| (fprint >> s) as usize)];
        let start = part.seek(fprint, |r| r.fprint).map_or(part.len(), |(i, _)| i);
        (start..part.len()).map(|i| part.get(i)).take_while(move |r| r.fprint == fprint).map(|r| r.doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Header, RecordWriter};

    #[test]
    fn finds_the_rows_of_a_fingerprint_in_its_partition() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        out.create().unwrap();
        let records: [&[(u64, u32)]; 2] =
            [&[(1, 0), (1, 4), (7, 2)], &[(1 << 63, 1), (u64::MAX, 0), (u64::MAX, 3)]];
        for (p, recs) in records.iter().enumerate() {
            let header = Header::new::<ChunkRecord>("lines:4:4", true, p as u32, 2);
            let mut w = RecordWriter::create(&out.fprint_part(p as u32), header).unwrap();
            for &(fprint, doc) in *recs {
                w.push(&ChunkRecord { fprint, doc }).unwrap();
            }
            w.finish().unwrap();
        }
        let postings = Postings::open(&out).unwrap();
        let rows = |f| postings.rows(f).collect::<Vec<_>>();
        assert_eq!(rows(1), [0, 4]);
        assert_eq!(rows(7), [2]);
        assert_eq!(rows(u64::MAX), [0, 3]);
        assert_eq!(rows(1 << 63), [1]);
        assert!(rows(3).is_empty() && rows(8).is_empty() && rows(u64::MAX - 1).is_empty());
        std::fs::remove_file(out.fprint_part(0)).unwrap();
        assert!(Postings::open(&out).is_err());
    }
}
