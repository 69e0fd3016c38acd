//! Fixed-width record files: header, writer and memory-mapped reader.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use memmap2::Mmap;

use super::{CannotWrite, commit, integrity, temp_path};

pub(crate) const HEADER_SIZE: usize = 64;
const MAGIC: [u8; 8] = *b"OVLPFPD\0";
const VERSION: u32 = 1;
const SPEC_LEN: usize = 24;
const FLAG_SORTED: u32 = 1;

/// A fixed-width little-endian record.
/// The most bytes a record takes on disk ([`Record::SIZE`]): the buffers
/// that encode one are this long. The largest is the report's scratch URL
/// entry (40).
pub const MAX_RECORD_SIZE: usize = 64;

pub trait Record: Copy + Send + Sync {
    /// The record kind stored in the header.
    const KIND: u32;
    /// Size in bytes on disk.
    const SIZE: usize;
    fn encode(&self, out: &mut [u8]);
    fn decode(bytes: &[u8]) -> Self;
}

/// One chunk fingerprint of one document (FPrint-DocID-Chunk). Ordered by
/// fingerprint, then docID: the order of the sorted file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkRecord {
    pub fprint: u64,
    pub doc: u32,
}

impl super::sort::Keyed for ChunkRecord {
    fn key(&self) -> u64 {
        self.fprint
    }
}

impl Record for ChunkRecord {
    const KIND: u32 = 1;
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.fprint.to_le_bytes());
        out[8..12].copy_from_slice(&self.doc.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        ChunkRecord { fprint: le_u64(&b[..8]), doc: le_u32(&b[8..12]) }
    }
}

/// The whole-text hash of one document (FPrint-DocID-Exact). Ordered by
/// hash, then docID, so the first of a run of equal hashes is the center.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ExactRecord {
    pub hash: u128,
    pub doc: u32,
}

impl Record for ExactRecord {
    const KIND: u32 = 2;
    const SIZE: usize = 20;
    fn encode(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.hash.to_le_bytes());
        out[16..20].copy_from_slice(&self.doc.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let mut h = [0u8; 16];
        h.copy_from_slice(&b[..16]);
        ExactRecord { hash: u128::from_le_bytes(h), doc: le_u32(&b[16..20]) }
    }
}

/// The exact-group center of one document; [`Center::EMPTY`] for an empty
/// document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Center(pub u32);

impl Center {
    pub(crate) const EMPTY: Center = Center(u32::MAX);
}

impl Record for Center {
    const KIND: u32 = 3;
    const SIZE: usize = 4;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.0.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        Center(le_u32(&b[..4]))
    }
}

/// The fuzzy signature of one document (YaCy's profile signature, see
/// [`crate::bytes::fuzzy`]), 0 for an empty document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FuzzySignature(pub u128);

impl Record for FuzzySignature {
    const KIND: u32 = 6;
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.0.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let mut h = [0u8; 16];
        h.copy_from_slice(&b[..16]);
        FuzzySignature(u128::from_le_bytes(h))
    }
}

pub(crate) fn le_u128(b: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(b);
    u128::from_le_bytes(a)
}

pub(crate) fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

pub(crate) fn le_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(b);
    u32::from_le_bytes(a)
}

pub(crate) fn le_u16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

/// The 64-byte header of a record file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: u32,
    pub record_size: u32,
    pub sorted: bool,
    pub partition: u32,
    pub partitions: u32,
    pub count: u64,
    /// The chunk spec in canonical form (`lines:4:4`); empty where it does
    /// not apply.
    pub chunk_spec: String,
}

impl Header {
    /// A header for records of type `R`, with count 0 (the writer fills it).
    pub fn new<R: Record>(chunk_spec: &str, sorted: bool, partition: u32, partitions: u32) -> Self {
        Header {
            kind: R::KIND,
            record_size: R::SIZE as u32,
            sorted,
            partition,
            partitions,
            count: 0,
            chunk_spec: chunk_spec.to_string(),
        }
    }

    fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut h = [0u8; HEADER_SIZE];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&self.kind.to_le_bytes());
        h[16..20].copy_from_slice(&self.record_size.to_le_bytes());
        let flags = if self.sorted { FLAG_SORTED } else { 0 };
        h[20..24].copy_from_slice(&flags.to_le_bytes());
        h[24..28].copy_from_slice(&self.partition.to_le_bytes());
        h[28..32].copy_from_slice(&self.partitions.to_le_bytes());
        h[32..40].copy_from_slice(&self.count.to_le_bytes());
        let spec = self.chunk_spec.as_bytes();
        let n = spec.len().min(SPEC_LEN);
        h[40..40 + n].copy_from_slice(&spec[..n]);
        h
    }

    fn decode(b: &[u8], path: &Path) -> anyhow::Result<Header> {
        if b.len() < HEADER_SIZE || b[0..8] != MAGIC {
            bail!("{} is not an overlap record file (bad magic)", path.display());
        }
        let version = le_u32(&b[8..12]);
        if version != VERSION {
            bail!("{} has format version {version}; this overlap reads version {VERSION}", path.display());
        }
        let spec = &b[40..HEADER_SIZE];
        let end = spec.iter().position(|&c| c == 0).unwrap_or(SPEC_LEN);
        Ok(Header {
            kind: le_u32(&b[12..16]),
            record_size: le_u32(&b[16..20]),
            sorted: le_u32(&b[20..24]) & FLAG_SORTED != 0,
            partition: le_u32(&b[24..28]),
            partitions: le_u32(&b[28..32]),
            count: le_u64(&b[32..40]),
            chunk_spec: String::from_utf8_lossy(&spec[..end]).into_owned(),
        })
    }
}

/// Writes a record file under its temporary name; [`RecordWriter::finish`]
/// fills in the count and renames it into place.
pub struct RecordWriter<R: Record> {
    path: PathBuf,
    out: BufWriter<File>,
    header: Header,
    buf: [u8; MAX_RECORD_SIZE],
    _records: PhantomData<R>,
}

/// The buffer of a record writer: 64 KiB, down to 16 KiB at the smallest
/// budgets (a 1024th of it): the fingerprint stage writes 64 partitions at
/// once, whose buffers of 64 KiB were 4 MiB, a quarter of `--memory 16M`.
fn write_buffer() -> usize {
    crate::base::memory::sized_by_budget(1024, 16 << 10, 64 << 10)
}

impl<R: Record> RecordWriter<R> {
    pub fn create(path: &Path, header: Header) -> anyhow::Result<Self> {
        debug_assert_eq!(header.kind, R::KIND);
        crate::base::interrupt::check()?;
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let mut out = BufWriter::with_capacity(write_buffer(), file);
        out.write_all(&header.encode()).with_context(|| CannotWrite(tmp.clone()))?;
        Ok(RecordWriter {
            path: path.to_path_buf(),
            out,
            header,
            buf: [0; MAX_RECORD_SIZE],
            _records: PhantomData,
        })
    }

    pub fn push(&mut self, record: &R) -> anyhow::Result<()> {
        // Every 4,096 records (64 KiB to 128 KiB of them), stop if asked.
        if self.header.count.is_multiple_of(4096) {
            crate::base::interrupt::check()?;
        }
        record.encode(&mut self.buf[..R::SIZE]);
        self.header.count += 1;
        self.out.write_all(&self.buf[..R::SIZE]).with_context(|| self.write_error())
    }

    pub fn count(&self) -> u64 {
        self.header.count
    }

    /// Completes the file: header count written, renamed to its final name.
    pub fn finish(self) -> anyhow::Result<u64> {
        let count = self.header.count;
        let header = self.header.encode();
        let err = self.write_error();
        let mut file = self.out.into_inner().map_err(|e| e.into_error()).context(err)?;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(&header))
            .with_context(|| CannotWrite(temp_path(&self.path)))?;
        drop(file);
        commit(&self.path)?;
        Ok(count)
    }

    fn write_error(&self) -> CannotWrite {
        CannotWrite(temp_path(&self.path))
    }
}

/// Lets go of the whole pages of `map` between bytes `start` and `end`, as
/// [`Mapped::release`] does of all of them: they no longer count in the
/// process's resident memory, and stay in the page cache.
pub(crate) fn let_go(map: &Mmap, start: usize, end: usize) {
    const PAGE: usize = 4096;
    let (start, end) = (start.div_ceil(PAGE) * PAGE, end.min(map.len()) / PAGE * PAGE);
    #[cfg(unix)]
    if start < end {
        // SAFETY: as in `Mapped::release`, on whole pages of a read-only
        // mapping of a file that is not modified while mapped.
        unsafe {
            let _ = map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start);
        }
    }
}

/// A record file mapped into memory, checked against its header.
pub struct Mapped<R: Record> {
    map: Mmap,
    header: Header,
    _records: PhantomData<R>,
}

/// The header of the record file at `path`, read alone.
pub(crate) fn read_header(path: &Path) -> anyhow::Result<Header> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = [0u8; HEADER_SIZE];
    file.read_exact(&mut h)
        .with_context(|| format!("{} is too short to be an overlap record file", path.display()))?;
    Header::decode(&h, path)
}

/// The header at the start of a record file of `len` bytes, checked to
/// hold records of kind `R` and to count exactly the records after it.
fn checked_header<R: Record>(bytes: &[u8], len: u64, path: &Path) -> anyhow::Result<Header> {
    let header = Header::decode(bytes, path)?;
    if header.kind != R::KIND || header.record_size as usize != R::SIZE {
        bail!(
            "{} holds records of kind {} (size {}); expected kind {} (size {})",
            path.display(),
            header.kind,
            header.record_size,
            R::KIND,
            R::SIZE
        );
    }
    let expected = header.count.checked_mul(R::SIZE as u64).and_then(|n| n.checked_add(HEADER_SIZE as u64));
    if expected != Some(len) {
        bail!(
            "{} is damaged: header says {} records but the file has {} bytes",
            path.display(),
            header.count,
            len
        );
    }
    Ok(header)
}

/// A record file read at random by positioned reads into the caller's
/// buffer, for a file bigger than the memory it may hold: read through a
/// mapping, every record touched maps the pages around it too (the
/// kernel's fault-around, 64 KiB a touch), and the prefix verification's
/// lists of an 856 MB crawl were 57 of the stage's 67 MB at `--memory 16M`.
/// The bytes read stay in the page cache, which is not the process's.
pub struct ReadAt<R: Record> {
    file: File,
    header: Header,
    path: PathBuf,
    _records: PhantomData<R>,
}

impl<R: Record> ReadAt<R> {
    /// Opens a record file and checks its header; a file of an analysis
    /// whose manifest records it is checked against its checksum first (as
    /// [`Mapped::open`]).
    pub(crate) fn open(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
        integrity::check_streamed(path, &file)?;
        let mut h = [0u8; HEADER_SIZE];
        read_exact_at(&file, &mut h, 0)
            .with_context(|| format!("{} is too short to be an overlap record file", path.display()))?;
        let header = checked_header::<R>(&h, len, path)?;
        Ok(ReadAt { file, header, path: path.to_path_buf(), _records: PhantomData })
    }

    pub fn len(&self) -> usize {
        self.header.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The bytes of records `range` into `buf` (replacing what it held).
    pub(crate) fn read_into(&self, range: std::ops::Range<usize>, buf: &mut Vec<u8>) -> anyhow::Result<()> {
        if range.end > self.len() || range.start > range.end {
            bail!("{} is damaged: records {range:?} asked of {}", self.path.display(), self.len());
        }
        buf.resize((range.end - range.start) * R::SIZE, 0);
        let at = (HEADER_SIZE + range.start * R::SIZE) as u64;
        read_exact_at(&self.file, buf, at).with_context(|| format!("cannot read {}", self.path.display()))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

impl<R: Record> Mapped<R> {
    /// Maps a record file to read it through; a file of an analysis whose
    /// manifest records it is checked against its checksum first (once in
    /// a process, see [`integrity`]).
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        Mapped::map(path, |map| integrity::check_mapped(path, map))
    }

    /// Maps a record file to look a few records up in it: checked against
    /// the length its manifest records, not its checksum, which would read
    /// it all. What is read from it is checked where it is used.
    pub(crate) fn open_for_lookup(path: &Path) -> anyhow::Result<Self> {
        Mapped::map(path, |map| integrity::check_len(path, map.len() as u64))
    }

    /// Maps the file, `check`s its bytes against the manifest, then against
    /// its header.
    fn map(path: &Path, check: impl FnOnce(&Mmap) -> anyhow::Result<()>) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
        if len < HEADER_SIZE as u64 {
            bail!("{} is too short to be an overlap record file", path.display());
        }
        // SAFETY: the file is private to the output directory and written
        // once under a temporary name before being renamed into place, so
        // nobody truncates it while it is mapped.
        let map = unsafe { Mmap::map(&file) }.with_context(|| format!("cannot map {}", path.display()))?;
        check(&map)?;
        let header = checked_header::<R>(&map[..HEADER_SIZE], len, path)?;
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        Ok(Mapped { map, header, _records: PhantomData })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn len(&self) -> usize {
        self.header.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The raw record bytes, after the header.
    pub fn bytes(&self) -> &[u8] {
        &self.map[HEADER_SIZE..]
    }

    pub fn get(&self, i: usize) -> R {
        R::decode(&self.bytes()[i * R::SIZE..(i + 1) * R::SIZE])
    }

    /// The records in order. The pages read are let go of behind the read
    /// position, a window at a time ([`crate::base::memory::scan_window`],
    /// [`Mapped::release_before`]): a file read through stayed resident
    /// whole, and the kernel maps a page cache's file in blocks of up to
    /// 1 MiB a touch, so one pass over the prefix index or a partition
    /// counted its whole size in the stage's peak.
    pub fn iter(&self) -> impl Iterator<Item = R> + '_ {
        // One comparison a record, not an iterator of windows flattened:
        // that cost the pairs stage 5% of its time.
        let window = (crate::base::memory::scan_window() / R::SIZE).max(1);
        let mut release_at = window;
        self.bytes().chunks_exact(R::SIZE).enumerate().map(move |(i, record)| {
            if i == release_at {
                self.release_before(HEADER_SIZE + i * R::SIZE);
                release_at += window;
            }
            R::decode(record)
        })
    }

    /// Lets go of the whole pages of the mapping before byte `end`, as
    /// [`Mapped::release`] does of all of them.
    fn release_before(&self, end: usize) {
        let_go(&self.map, 0, end);
    }

    /// Lets go of the pages read so far, so that they no longer count in
    /// the process's resident memory: a mapping read at random, all of it
    /// over time, stays resident whole (page cache, but counted in peak
    /// RSS). They stay in the page cache, and reading them again costs a
    /// minor fault each.
    pub(crate) fn release(&self) {
        #[cfg(unix)]
        // SAFETY: MADV_DONTNEED on a shared, read-only file mapping drops
        // the pages from this process's page tables; a later read maps the
        // file's pages again, with the same bytes, since the file is not
        // modified while mapped (see `open`). Borrows of the mapping stay
        // valid: its address range is unchanged.
        unsafe {
            let _ = self.map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed);
        }
    }
}

impl<R: Record> Mapped<R> {
    /// The first record whose `key` is not below `key`, in a file sorted by
    /// it, with its index.
    pub(crate) fn seek<K: Ord>(&self, key: K, key_of: impl Fn(&R) -> K) -> Option<(usize, R)> {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key_of(&self.get(mid)) < key { lo = mid + 1 } else { hi = mid }
        }
        (lo < self.len()).then(|| (lo, self.get(lo)))
    }
}

impl Mapped<ExactRecord> {
    /// The hash of document `doc`, `None` for an empty document: records
    /// are in docID order, one per non-empty document.
    pub(crate) fn hash_of(&self, doc: u32) -> Option<u128> {
        self.seek(doc, |r| r.doc).filter(|(_, r)| r.doc == doc).map(|(_, r)| r.hash)
    }
}

/// Reads a record file front to back through a buffer, for files read once
/// (spilled runs), where mapping would only inflate resident memory.
pub(crate) struct RecordReader<R: Record> {
    path: PathBuf,
    input: BufReader<File>,
    remaining: u64,
    buf: [u8; MAX_RECORD_SIZE],
    _records: PhantomData<R>,
}

impl<R: Record> RecordReader<R> {
    pub(crate) fn open(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        integrity::check_streamed(path, &file)?;
        let mut input = BufReader::with_capacity(1 << 16, file);
        let mut h = [0u8; HEADER_SIZE];
        input
            .read_exact(&mut h)
            .with_context(|| format!("{} is too short to be an overlap record file", path.display()))?;
        let header = Header::decode(&h, path)?;
        if header.kind != R::KIND || header.record_size as usize != R::SIZE {
            bail!("{} holds records of kind {}; expected kind {}", path.display(), header.kind, R::KIND);
        }
        Ok(RecordReader {
            path: path.to_path_buf(),
            input,
            remaining: header.count,
            buf: [0; MAX_RECORD_SIZE],
            _records: PhantomData,
        })
    }

    /// Goes to record `index` (the first is 0), or to the end if there
    /// are not that many.
    pub(crate) fn seek_record(&mut self, index: u64, count: u64) -> anyhow::Result<()> {
        let index = index.min(count);
        let at = HEADER_SIZE as u64 + index * R::SIZE as u64;
        self.input
            .seek(SeekFrom::Start(at))
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        self.remaining = count - index;
        Ok(())
    }

    /// Records not yet read, as the header counts them.
    pub(crate) fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The next record, `None` after the last one the header counts.
    pub(crate) fn next_record(&mut self) -> anyhow::Result<Option<R>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.input.read_exact(&mut self.buf[..R::SIZE]).with_context(|| {
            format!("{} is damaged: fewer records than its header says", self.path.display())
        })?;
        self.remaining -= 1;
        Ok(Some(R::decode(&self.buf[..R::SIZE])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<R: Record + PartialEq + std::fmt::Debug>(records: &[R]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.fpd");
        let mut w = RecordWriter::<R>::create(&path, Header::new::<R>("lines:4:4", true, 3, 8)).unwrap();
        for r in records {
            w.push(r).unwrap();
        }
        assert_eq!(w.finish().unwrap(), records.len() as u64);
        assert!(!temp_path(&path).exists());
        let m = Mapped::<R>::open(&path).unwrap();
        assert_eq!(m.len(), records.len());
        assert_eq!(m.header().chunk_spec, "lines:4:4");
        assert_eq!((m.header().partition, m.header().partitions), (3, 8));
        assert!(m.header().sorted);
        assert_eq!(m.iter().collect::<Vec<_>>(), records);
        if let Some(last) = records.last() {
            assert_eq!(&m.get(records.len() - 1), last);
        }
    }

    #[test]
    fn chunk_records_roundtrip() {
        roundtrip(&[
            ChunkRecord { fprint: 0, doc: 0 },
            ChunkRecord { fprint: u64::MAX, doc: u32::MAX },
            ChunkRecord { fprint: 0x0123_4567_89ab_cdef, doc: 42 },
        ]);
        roundtrip::<ChunkRecord>(&[]);
    }

    #[test]
    fn exact_and_center_records_roundtrip() {
        roundtrip(&[ExactRecord { hash: u128::MAX - 7, doc: 9 }, ExactRecord { hash: 1, doc: 0 }]);
        roundtrip(&[Center(0), Center::EMPTY, Center(17)]);
    }

    #[test]
    fn layout_is_little_endian_and_fixed() {
        let mut b = [0u8; 12];
        ChunkRecord { fprint: 0x0102030405060708, doc: 0x0a0b0c0d }.encode(&mut b);
        assert_eq!(b, [8, 7, 6, 5, 4, 3, 2, 1, 0x0d, 0x0c, 0x0b, 0x0a]);
        let h = Header::new::<ChunkRecord>("words:8:1", false, 0, 1).encode();
        assert_eq!(&h[0..8], b"OVLPFPD\0");
        assert_eq!(&h[40..49], b"words:8:1");
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.fpd");
        let mut w =
            RecordWriter::<ChunkRecord>::create(&path, Header::new::<ChunkRecord>("", true, 0, 1)).unwrap();
        w.push(&ChunkRecord { fprint: 1, doc: 1 }).unwrap();
        w.finish().unwrap();
        // Wrong record type.
        let err = Mapped::<Center>::open(&path).err().unwrap().to_string();
        assert!(err.contains("expected kind 3"), "{err}");
        // Truncated.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let err = Mapped::<ChunkRecord>::open(&path).err().unwrap().to_string();
        assert!(err.contains("damaged"), "{err}");
        // Not ours.
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        let err = Mapped::<ChunkRecord>::open(&path).err().unwrap().to_string();
        assert!(err.contains("bad magic"), "{err}");
    }
}
