//! Sorting record files within the memory budget.
//!
//! A file whose records fit the budget is sorted in memory; a larger one
//! goes through `extsort`, which spills sorted segments of the budget's size
//! and merges them. Both paths yield the same order, so the choice never
//! shows in the output.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use extsort::{ExternalSorter, Sortable};

use super::file::MAX_RECORD_SIZE;
use super::{Header, Mapped, Record, RecordReader, RecordWriter};

/// A record whose order begins with a 64-bit key: of two records, the one
/// with the smaller key is the smaller. A mapped file of them is sorted in
/// memory by the key's leading bits first ([`by_leading_bits`]).
pub trait Keyed {
    fn key(&self) -> u64;
}

/// Calls `emit` for every record of `src` in ascending order, holding at
/// most about `budget` bytes of records in memory.
pub fn sorted<R: Record + Ord + Keyed>(
    src: &Mapped<R>,
    budget: u64,
    scratch: &Path,
    mut emit: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let len = src.len() as u64;
    if len <= fits_in_memory::<R>(budget) {
        for r in by_leading_bits(src, BUCKET_RECORDS) {
            emit(r)?;
        }
        return Ok(());
    }
    sort_records(src.iter(), len, budget, scratch, emit)
}

/// Records per bucket of [`by_leading_bits`], about, and the most
/// buckets (2^10): more buckets make smaller sorts but scatter the deal
/// over more places in memory. Measured on 2 million random fingerprint
/// records (`cargo bench --bench micro -- "partition sort/in memory"`, one
/// thread): 51 ms with these, 56 to 58 ms with 128 a bucket or with 2^8,
/// 2^11 or 2^16 buckets at most.
const BUCKET_RECORDS: usize = 512;
const MAX_BUCKET_BITS: u32 = 10;

/// The records of `src` in order, sorted in memory in two steps: dealt
/// into buckets of about `per_bucket` records by the leading bits in which
/// their keys differ, which puts the buckets in order, then each bucket
/// sorted on its own, on every thread of the pool. The file is read three
/// times from memory (the keys' range, the buckets' sizes, the deal), and
/// the records are held once, as by a sort in place. Fingerprints are
/// hashes, so the buckets are even, and each bucket's sort is shallower
/// than one sort of the whole: on 2 million fingerprint records, 51 ms on
/// one thread against 76 ms for `par_sort_unstable` (33 against 44 ms on
/// two threads). The fingerprint stage sorts its 64 partitions so after
/// its last batch.
fn by_leading_bits<R: Record + Ord + Keyed>(src: &Mapped<R>, per_bucket: usize) -> Vec<R> {
    use rayon::prelude::*;
    let n = src.len();
    if n == 0 {
        return Vec::new();
    }
    let (lo, hi) = src.iter().fold((u64::MAX, 0), |(lo, hi), r| (lo.min(r.key()), hi.max(r.key())));
    let varying = u64::BITS - (lo ^ hi).leading_zeros();
    let bits = (usize::BITS - (n / per_bucket.max(1)).leading_zeros()).min(varying).min(MAX_BUCKET_BITS);
    if bits == 0 {
        let mut all: Vec<R> = src.iter().collect();
        sort_in_memory(&mut all);
        return all;
    }
    // Filled with the first record, then overwritten: no unsafe code for
    // an uninitialized buffer, for a pass that is a small part of the sort.
    let mut all = vec![src.get(0); n];
    let shift = varying - bits;
    let bucket = |r: &R| ((r.key() >> shift) & ((1 << bits) - 1)) as usize;
    let mut sizes = vec![0usize; 1 << bits];
    for r in src.iter() {
        sizes[bucket(&r)] += 1;
    }
    let mut next: Vec<usize> = sizes
        .iter()
        .scan(0, |at, &size| {
            *at += size;
            Some(*at - size)
        })
        .collect();
    for r in src.iter() {
        let b = bucket(&r);
        all[next[b]] = r;
        next[b] += 1;
    }
    let mut buckets = Vec::with_capacity(sizes.len());
    let mut rest = &mut all[..];
    for &size in &sizes {
        let (bucket, after) = rest.split_at_mut(size);
        buckets.push(bucket);
        rest = after;
    }
    buckets.into_par_iter().for_each(|b| b.sort_unstable());
    all
}

/// How many records of `R` an in-memory sort may hold within `budget`.
fn fits_in_memory<R>(budget: u64) -> u64 {
    (budget / std::mem::size_of::<R>().max(1) as u64).max(1024)
}

/// [`sorted`] for a file read once, such as a spill file: read through a
/// buffer rather than mapped, so that the records read do not stay
/// resident beside the sort's own budget.
pub(crate) fn sorted_file<R: Record + Ord>(
    path: &Path,
    budget: u64,
    scratch: &Path,
    emit: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    sorted_files(&[path], budget, scratch, emit)
}

/// [`sorted_file`] over the records of several files together, as if they
/// were one. (Mapped, the scratch postings of prefix filtering stayed
/// resident as the sort read them: 219 MB of page cache counted in the
/// pairs stage's peak RSS at `--memory 256M`, beside 134 MB of its own, on
/// a crawl of 2.1 million pages.)
pub(crate) fn sorted_files<R: Record + Ord, P: AsRef<Path>>(
    paths: &[P],
    budget: u64,
    scratch: &Path,
    emit: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut readers =
        paths.iter().map(|p| RecordReader::<R>::open(p.as_ref())).collect::<anyhow::Result<Vec<_>>>()?;
    let len = readers.iter().map(RecordReader::remaining).sum();
    // A read error ends the records (of every file, not only its own) and
    // is returned after the sort: the caller fails instead of taking what
    // was emitted for the files.
    let failed = RefCell::new(None);
    let records = readers.iter_mut().flat_map(|reader| {
        let failed = &failed;
        std::iter::from_fn(move || {
            if failed.borrow().is_some() {
                return None;
            }
            reader.next_record().unwrap_or_else(|e| {
                *failed.borrow_mut() = Some(e);
                None
            })
        })
    });
    sort_records(records, len, budget, scratch, emit)?;
    failed.into_inner().map_or(Ok(()), Err)
}

/// Sorts records held in memory, on every thread of the pool. Records
/// that compare equal are equal (their orders are derived over every
/// field, or, for the report's URL entries, over a unique row), so there is
/// one sorted order, whatever sorts them and on however many threads. In place, no memory beside the
/// records. The report's in-memory sorts were a sixth of its instructions
/// (`callgrind`, 262,000 documents), on one core of two.
fn sort_in_memory<R: Record + Ord>(records: &mut [R]) {
    use rayon::slice::ParallelSliceMut;
    records.par_sort_unstable();
}

/// Sorts `len` records, in memory when they fit `budget`.
fn sort_records<R: Record + Ord>(
    records: impl Iterator<Item = R>,
    len: u64,
    budget: u64,
    scratch: &Path,
    mut emit: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let max_in_memory = fits_in_memory::<R>(budget);
    if len <= max_in_memory {
        // Exactly `len`: a file read through a buffer gives no size hint,
        // and growing by doubling would take up to twice the records.
        let mut all: Vec<R> = Vec::with_capacity(len as usize);
        all.extend(records);
        sort_in_memory(&mut all);
        for r in all {
            emit(r)?;
        }
        return Ok(());
    }
    // `extsort` gathers a segment in a list that grows by doubling and is
    // written out once it holds one record more than the segment size: a
    // segment of 2^k - 1 records keeps the list at 2^k. (A segment of the
    // budget's size grew the list to the next power of two, up to twice
    // the budget: 84 MB for the report's URL entries on 2.1 million pages
    // at a budget of 64 MB.) The list is at most half the budget, for the
    // lists it grew through, which the thread's allocator pool keeps, and
    // the merge's readers: with lists of up to the whole budget, the
    // fingerprint stage's two partition sorts at `--memory 32M` on a
    // generated crawl of 3.4 GB held 8 MiB lists each and the stage, as a
    // process of its own, peaked at 40.9 MiB; with lists of half, 32.4.
    let segment = (1u64 << (max_in_memory / 2).max(1024).ilog2()) - 1;
    // Each segment sorted on every thread of the pool, as in memory
    // ([`sort_in_memory`]): the pairs stage's postings at 23 million
    // documents are sorted in such segments, on one core of two before.
    let sorter = ExternalSorter::new()
        .with_segment_size(segment as usize)
        .with_sort_dir(scratch.to_path_buf())
        .with_parallel_sort();
    let iter =
        sorter.sort(records.map(Sorted)).with_context(|| format!("cannot sort in {}", scratch.display()))?;
    for r in iter {
        let r = r.with_context(|| format!("cannot read sorted records in {}", scratch.display()))?;
        emit(r.0)?;
    }
    Ok(())
}

/// A scratch file of records spilled in batches, created by the first.
pub(crate) struct SpillFile<R: Record> {
    path: PathBuf,
    writer: Option<RecordWriter<R>>,
}

impl<R: Record + Ord> SpillFile<R> {
    pub(crate) fn new(path: PathBuf) -> Self {
        SpillFile { path, writer: None }
    }

    pub(crate) fn is_used(&self) -> bool {
        self.writer.is_some()
    }

    pub(crate) fn write(&mut self, records: impl Iterator<Item = R>) -> anyhow::Result<()> {
        let w = match self.writer.take() {
            Some(w) => w,
            None => RecordWriter::create(&self.path, Header::new::<R>("", false, 0, 1))?,
        };
        let w = self.writer.insert(w);
        for r in records {
            w.push(&r)?;
        }
        Ok(())
    }

    /// The file, complete, in the order its records were written; `None`
    /// when none was.
    pub(crate) fn finish(self) -> anyhow::Result<Option<PathBuf>> {
        let Some(w) = self.writer else { return Ok(None) };
        w.finish()?;
        Ok(Some(self.path))
    }

    /// Calls `f` with every record spilled, in ascending order, sorted
    /// within `budget`; then removes the file. The sort has a directory
    /// of its own, removed with it: `extsort` leaves its segments behind,
    /// and they would take disk space until the stage ends.
    pub(crate) fn sorted(self, budget: u64, f: impl FnMut(R) -> anyhow::Result<()>) -> anyhow::Result<()> {
        let Some(w) = self.writer else { return Ok(()) };
        w.finish()?;
        let dir = self.path.with_extension("sort");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
        sorted_file(&self.path, budget, &dir, f)?;
        super::remove_dir_if_exists(&dir)?;
        super::remove_file_if_exists(&self.path)
    }
}

/// Records gathered in memory within a budget, spilled in batches beyond
/// it, then taken back in order: what the report collects per document
/// while it loads docs.csv (URL keys, title keys) without holding a
/// crawl's worth of them.
pub(crate) struct Batched<R: Record + Ord> {
    batch: Vec<R>,
    most: usize,
    budget: u64,
    spill: SpillFile<R>,
}

impl<R: Record + Ord> Batched<R> {
    /// Up to `expected` records held within `budget` bytes, spilled to
    /// `path`. The batch is sized once, for the fewer of the expected
    /// records and the budget's worth: grown by doubling, it would take up
    /// to twice either.
    pub(crate) fn new(budget: u64, expected: u64, path: PathBuf) -> Batched<R> {
        let most = (budget / std::mem::size_of::<R>().max(1) as u64).max(1024);
        let batch = Vec::with_capacity(usize::try_from(most.min(expected)).unwrap_or(0));
        Batched {
            batch,
            most: usize::try_from(most).unwrap_or(usize::MAX),
            budget,
            spill: SpillFile::new(path),
        }
    }

    pub(crate) fn push(&mut self, record: R) -> anyhow::Result<()> {
        self.batch.push(record);
        if self.batch.len() >= self.most {
            self.spill.write(self.batch.drain(..))?;
        }
        Ok(())
    }

    /// Whether records went to the spill file.
    #[cfg(test)]
    pub(crate) fn spilled(&self) -> bool {
        self.spill.is_used()
    }

    /// Calls `f` with every record in ascending order, sorted within the
    /// budget; the spill file is removed.
    pub(crate) fn sorted(self, f: impl FnMut(R) -> anyhow::Result<()>) -> anyhow::Result<()> {
        let Batched { mut batch, budget, mut spill, .. } = self;
        if spill.is_used() {
            spill.write(batch.into_iter())?;
            return spill.sorted(budget, f);
        }
        sort_in_memory(&mut batch);
        batch.into_iter().try_for_each(f)
    }

    /// The records in ascending order, to be read back in order as often
    /// as needed, or a record at a time beside another stream: the list
    /// itself when nothing was spilled, otherwise a record file at `path`
    /// written from the spill's sort.
    pub(crate) fn finish(self, path: &Path) -> anyhow::Result<SortedRecords<R>> {
        if !self.spill.is_used() {
            // The batch was sized for the records expected, which may be
            // many more than came.
            let mut batch = self.batch;
            sort_in_memory(&mut batch);
            batch.shrink_to_fit();
            return Ok(SortedRecords::Memory(batch));
        }
        let mut w = RecordWriter::create(path, Header::new::<R>("", true, 0, 1))?;
        self.sorted(|r| w.push(&r))?;
        w.finish()?;
        Ok(SortedRecords::File(path.to_path_buf()))
    }
}

/// Records in ascending order ([`Batched::finish`]): in memory, or in a
/// record file that is removed when they are dropped.
pub(crate) enum SortedRecords<R: Record> {
    Memory(Vec<R>),
    File(PathBuf),
}

impl<R: Record> SortedRecords<R> {
    /// Reads the records from the first.
    pub(crate) fn reader(&self) -> anyhow::Result<SortedReader<'_, R>> {
        self.reader_at(0)
    }

    /// Reads the records from the one at `index` (the first is 0).
    pub(crate) fn reader_at(&self, index: u64) -> anyhow::Result<SortedReader<'_, R>> {
        Ok(match self {
            SortedRecords::Memory(records) => {
                let from = usize::try_from(index).unwrap_or(usize::MAX).min(records.len());
                SortedReader::Memory(records[from..].iter())
            }
            SortedRecords::File(path) => {
                let mut reader = RecordReader::open(path)?;
                let count = reader.remaining();
                reader.seek_record(index, count)?;
                SortedReader::File(reader)
            }
        })
    }
}

impl<R: Record> Drop for SortedRecords<R> {
    fn drop(&mut self) {
        if let SortedRecords::File(path) = self {
            // A file left behind goes with the stage's scratch directory.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Reads [`SortedRecords`] in order.
pub(crate) enum SortedReader<'a, R: Record> {
    Memory(std::slice::Iter<'a, R>),
    File(RecordReader<R>),
}

impl<R: Record> SortedReader<'_, R> {
    /// The next record, `None` after the last.
    pub(crate) fn next_record(&mut self) -> anyhow::Result<Option<R>> {
        match self {
            SortedReader::Memory(records) => Ok(records.next().copied()),
            SortedReader::File(reader) => reader.next_record(),
        }
    }
}

/// A record as `extsort` wants it: ordered, and encoded in its file layout.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Sorted<R>(R);

impl<R: Record> Sortable for Sorted<R> {
    fn encode<W: Write>(&self, write: &mut W) -> io::Result<()> {
        let mut buf = [0u8; MAX_RECORD_SIZE];
        self.0.encode(&mut buf[..R::SIZE]);
        write.write_all(&buf[..R::SIZE])
    }

    fn decode<Rd: Read>(read: &mut Rd) -> io::Result<Self> {
        let mut buf = [0u8; MAX_RECORD_SIZE];
        read.read_exact(&mut buf[..R::SIZE])?;
        Ok(Sorted(R::decode(&buf[..R::SIZE])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ChunkRecord, Header, RecordWriter};

    /// `records`, in their order, in a record file `u.fpd` in `dir`.
    fn write_unsorted(dir: &Path, records: &[ChunkRecord]) -> PathBuf {
        let path = dir.join("u.fpd");
        let mut w = RecordWriter::create(&path, Header::new::<ChunkRecord>("", false, 0, 1)).unwrap();
        for r in records {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
        path
    }

    /// `n` scrambled records sorted within `budget`, from the mapped file
    /// or, with `buffered`, read through a buffer.
    fn sort_with_budget(n: u32, budget: u64, buffered: bool) -> Vec<ChunkRecord> {
        let dir = tempfile::tempdir().unwrap();
        // A fixed scrambled order.
        let records: Vec<ChunkRecord> = (0..n)
            .map(|i| {
                let x = ((u64::from(i) * 7919) % u64::from(n)) as u32;
                ChunkRecord { fprint: (x % 97) as u64, doc: x }
            })
            .collect();
        let path = write_unsorted(dir.path(), &records);
        let mut out = Vec::new();
        let emit = |r| {
            out.push(r);
            Ok(())
        };
        if buffered {
            sorted_file(&path, budget, dir.path(), emit).unwrap();
        } else {
            sorted(&Mapped::<ChunkRecord>::open(&path).unwrap(), budget, dir.path(), emit).unwrap();
        }
        out
    }

    proptest::proptest! {
        /// Dealt into buckets by their keys' leading bits, then sorted
        /// bucket by bucket, the records come out as one sort gives them:
        /// keys over a range of any width at any place (the bits that
        /// differ anywhere from the top to the bottom of the key), keys
        /// repeated, and every docID order.
        #[test]
        fn bucketed_sort_is_a_sort(
            raw in proptest::collection::vec((proptest::prelude::any::<u64>(), 0u32..50), 0..3000),
            width in 0u32..=64,
            per_bucket in 1usize..600,
            at in 0u32..=64,
            base in proptest::prelude::any::<u64>(),
        ) {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            let shift = at.min(64 - width);
            let records: Vec<ChunkRecord> = raw
                .iter()
                // A range of width 0 may sit above the top bit (shift 64).
                .map(|&(x, doc)| ChunkRecord { fprint: base ^ (x & mask).checked_shl(shift).unwrap_or(0), doc })
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let mut expected = records.clone();
            expected.sort_unstable();
            proptest::prop_assert_eq!(by_leading_bits(&Mapped::<ChunkRecord>::open(&write_unsorted(dir.path(), &records)).unwrap(), per_bucket), expected);
        }
    }

    #[test]
    fn external_and_in_memory_sorts_agree() {
        let small = sort_with_budget(20_000, 1 << 30, false);
        let spilled = sort_with_budget(20_000, 16 * 1024, false);
        assert_eq!(small.len(), 20_000);
        assert!(small.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(small, spilled);
        assert_eq!(small, sort_with_budget(20_000, 1 << 30, true));
        assert_eq!(small, sort_with_budget(20_000, 16 * 1024, true));
    }

    #[test]
    fn batched_records_finish_in_order_held_or_in_a_file_removed_with_them() {
        let dir = tempfile::tempdir().unwrap();
        let records: Vec<ChunkRecord> =
            (0..5000u32).map(|i| ChunkRecord { fprint: u64::from((i * 7919) % 613), doc: i }).collect();
        let mut expected = records.clone();
        expected.sort_unstable();
        // A budget of nothing spills every 1,024 records.
        for (budget, in_file) in [(1 << 30, false), (0, true)] {
            let mut batched = Batched::new(budget, 5000, dir.path().join("spill.fpd"));
            for &r in &records {
                batched.push(r).unwrap();
            }
            let sorted = batched.finish(&dir.path().join("sorted.fpd")).unwrap();
            assert_eq!(matches!(sorted, SortedRecords::File(_)), in_file);
            // Read twice, the same, and from any record on.
            for from in [0, 0, 1, 1023, 1024, 4999, 5000, 7000] {
                let mut reader = sorted.reader_at(from).unwrap();
                let mut got = Vec::new();
                while let Some(r) = reader.next_record().unwrap() {
                    got.push(r);
                }
                assert_eq!(got, expected[(from as usize).min(5000)..], "from {from}");
            }
            drop(sorted);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "files left");
        }
    }

    #[test]
    fn a_damaged_file_is_an_error_after_the_sort() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.fpd");
        let mut w = RecordWriter::create(&path, Header::new::<ChunkRecord>("", false, 0, 1)).unwrap();
        for doc in 0..10 {
            w.push(&ChunkRecord { fprint: 1, doc }).unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let err = sorted_file::<ChunkRecord>(&path, 1 << 20, dir.path(), |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("damaged"), "{err}");
    }

    #[test]
    fn the_first_damaged_file_of_several_ends_the_records_and_is_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, docs: std::ops::Range<u32>, cut: bool| {
            let path = dir.path().join(name);
            let mut w = RecordWriter::create(&path, Header::new::<ChunkRecord>("", false, 0, 1)).unwrap();
            for doc in docs {
                w.push(&ChunkRecord { fprint: 1, doc }).unwrap();
            }
            w.finish().unwrap();
            if cut {
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
            }
            path
        };
        let paths =
            [write("a.fpd", 0..10, true), write("b.fpd", 10..20, true), write("c.fpd", 20..30, false)];
        let mut emitted = Vec::new();
        let err = sorted_files::<ChunkRecord, _>(&paths, 1 << 20, dir.path(), |r| {
            emitted.push(r.doc);
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("a.fpd"), "{err}");
        assert_eq!(emitted, (0..9).collect::<Vec<_>>());
    }
}
