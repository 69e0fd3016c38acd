//! The FPrint-DocID partitions looked up by fingerprint: the rows that
//! hold one chunk, by binary search in the one partition whose range holds
//! it, so that a question about a few chunks reads a few pages, not the
//! crawl's postings. So the partitions are mapped to be looked up in, not
//! read whole: checked against the lengths the manifest records, not their
//! checksums, and each row read from them against the number of documents.

use anyhow::bail;

use super::{ChunkRecord, Mapped, OutDir};

/// Every partition of `fprint-docid/`, mapped, in partition order.
pub(crate) struct Postings {
    parts: Vec<Mapped<ChunkRecord>>,
    /// Each partition's name under the output directory, for messages.
    names: Vec<String>,
    root: std::path::PathBuf,
    /// Rows are below this.
    documents: usize,
    /// How far a fingerprint is shifted right to give its partition (the
    /// partitions split by its top bits); `None` for one partition.
    shift: Option<u32>,
}

impl Postings {
    /// Maps the partitions of `out`, checking that they are one whole
    /// sorted set: partitions 0 to P - 1 of P, P a power of two, whose
    /// rows are below `documents`.
    pub(crate) fn open(out: &OutDir, documents: usize) -> anyhow::Result<Postings> {
        let dir = out.fprint_dir();
        let mut parts = Vec::new();
        let mut names = Vec::new();
        for path in out.fprint_parts()? {
            parts.push(Mapped::<ChunkRecord>::open_for_lookup(&path)?);
            names.push(format!(
                "{}/fprint-docid/{}",
                super::RECORDS,
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
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
        Ok(Postings { parts, names, root: out.root().to_path_buf(), documents, shift })
    }

    /// The rows holding `fprint`, ascending; a row beyond the documents is
    /// an error naming its partition.
    pub(crate) fn rows(&self, fprint: u64) -> anyhow::Result<Vec<u32>> {
        let p = self.shift.map_or(0, |s| (fprint >> s) as usize);
        let part = &self.parts[p];
        let start = part.seek(fprint, |r| r.fprint).map_or(part.len(), |(i, _)| i);
        let rows: Vec<u32> = (start..part.len())
            .map(|i| part.get(i))
            .take_while(|r| r.fprint == fprint)
            .map(|r| r.doc)
            .collect();
        if let Some(&row) = rows.iter().find(|&&r| r as usize >= self.documents) {
            bail!("{}", super::integrity::row_beyond(&self.root, &self.names[p], row, self.documents as u64));
        }
        Ok(rows)
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
        let postings = Postings::open(&out, 5).unwrap();
        let rows = |f| postings.rows(f).unwrap();
        assert_eq!(rows(1), [0, 4]);
        assert_eq!(rows(7), [2]);
        assert_eq!(rows(u64::MAX), [0, 3]);
        assert_eq!(rows(1 << 63), [1]);
        assert!(rows(3).is_empty() && rows(8).is_empty() && rows(u64::MAX - 1).is_empty());
        let e = Postings::open(&out, 4).unwrap().rows(1).unwrap_err().to_string();
        assert!(
            e.contains("fprint-docid/part-00000.fpd holds row 4, but the analysis has 4 documents"),
            "{e}"
        );
        std::fs::remove_file(out.fprint_part(0)).unwrap();
        assert!(Postings::open(&out, 5).is_err());
    }
}
