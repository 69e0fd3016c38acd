//! Splitting a large per-record gzip WARC file into segments that are
//! read in parallel.
//!
//! In a per-record gzip file every record is its own gzip member, so the
//! file can be cut at any member start and each piece decompressed and
//! parsed on its own: that is how the fingerprint stage keeps every core
//! inflating when the crawl is one big file. The cut points must not depend
//! on the thread count or the memory budget (outputs may not), so a file is
//! cut near fixed nominal offsets, every [`SEGMENT_BYTES`], each moved
//! forward to the first member there that starts a WARC record
//! ([`boundary`]). A segment holds whole members, and the records a reader
//! of the whole file would find at or after its start and before the next
//! segment's start; segments' records in order are the file's records in
//! order, so docIDs stay dense and in input order.
//!
//! Only files that look per-record are split: gzip, WARC, and a second
//! member that starts a record within [`SCAN_BYTES`] of the first cut. A
//! whole-file gzip member, WET or WARC, is read by one reader as before.
//! Two things differ from a reader of the whole file, both only in damaged
//! data: a record that no member starts is given the offset of the member
//! it lies in ([`gz::Source::segment`]), and a record cut into two members
//! at a segment's cut would be read as two damaged pieces (no WARC writer
//! splits records across members below about 1 GB).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::Context;
use flate2::bufread::GzDecoder;

use super::{InputFormat, ReadOptions, Reader, gz, warc};

/// Nominal compressed size of a segment. Small enough that a 1 GB file
/// gives a few hundred segments to spread over the cores, large enough
/// that finding a cut costs nothing beside reading the segment.
pub(crate) const SEGMENT_BYTES: u64 = 8 << 20;

/// How far past a nominal cut [`boundary`] looks for a member that starts
/// a record. A record longer than this makes the segment before it longer.
const SCAN_BYTES: u64 = 16 << 20;

/// Bytes of a candidate member decompressed to check that it starts a
/// record.
const PROBE_BYTES: usize = 16;

/// A byte range of a file holding whole gzip members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
}

/// The segments of `path`, or `None` when it is not to be split: not a
/// regular file, smaller than two segments, not gzip, not WARC (by
/// `opts.format` or, for `Auto`, by its first bytes), or not one member
/// per record.
pub(crate) fn segments(path: &Path, opts: &ReadOptions) -> anyhow::Result<Option<Vec<Segment>>> {
    if path == Path::new("-") {
        return Ok(None);
    }
    let what = || format!("cannot read {}", path.display());
    let meta = std::fs::metadata(path).with_context(what)?;
    let len = meta.len();
    if !meta.is_file() || len < 2 * SEGMENT_BYTES {
        return Ok(None);
    }
    let mut file = File::open(path).with_context(what)?;
    if !is_gzip_warc(&mut file, opts).with_context(what)? {
        return Ok(None);
    }
    let mut starts = vec![0u64];
    let mut nominal = SEGMENT_BYTES;
    while nominal < len {
        match boundary(&mut file, nominal, len).with_context(what)? {
            Some(cut) if cut > *starts.last().unwrap_or(&0) => starts.push(cut),
            Some(_) => {}
            // No record starts near the first cut: one member holds many
            // records, and the file is read whole.
            None if starts.len() == 1 => return Ok(None),
            None => {}
        }
        nominal += SEGMENT_BYTES;
    }
    let ends = starts.iter().skip(1).copied().chain([len]);
    Ok(Some(starts.iter().zip(ends).map(|(&start, end)| Segment { start, end }).collect()))
}

/// A reader of the records of one segment of `path`.
pub(crate) fn open_segment(
    path: &Path,
    segment: Segment,
    opts: &ReadOptions,
) -> anyhow::Result<Box<dyn Reader>> {
    let what = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(what)?;
    file.seek(SeekFrom::Start(segment.start)).with_context(what)?;
    let raw = BufReader::with_capacity(gz::BUF_SIZE, file.take(segment.end - segment.start));
    let src = gz::Source::segment(Box::new(raw), segment.start).with_context(what)?;
    Ok(Box::new(warc::WarcReader::new(src, opts.max_record_bytes).knowing(opts.known.clone())))
}

/// Whether the file is gzip and read as WARC.
fn is_gzip_warc(file: &mut File, opts: &ReadOptions) -> io::Result<bool> {
    let mut magic = [0u8; 2];
    file.seek(SeekFrom::Start(0))?;
    if file.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return Ok(false);
    }
    Ok(match opts.format {
        InputFormat::Warc => true,
        InputFormat::Auto => starts_record(file, 0)?,
        _ => false,
    })
}

/// The first offset in `from..` (within [`SCAN_BYTES`], and before `len`)
/// where a gzip member starts whose data starts a WARC record.
fn boundary(file: &mut File, from: u64, len: u64) -> io::Result<Option<u64>> {
    let limit = len.min(from.saturating_add(SCAN_BYTES));
    let mut at = from;
    let mut buf = vec![0u8; 1 << 16];
    while at < limit {
        file.seek(SeekFrom::Start(at))?;
        let want = usize::try_from((limit - at).min(buf.len() as u64)).unwrap_or(buf.len());
        let n = read_full(file, buf.get_mut(..want).unwrap_or_default())?;
        if n == 0 {
            break;
        }
        let window = buf.get(..n).unwrap_or_default();
        let mut i = 0;
        while let Some(j) = memchr::memmem::find(window.get(i..).unwrap_or_default(), &[0x1f, 0x8b, 0x08]) {
            let candidate = at + (i + j) as u64;
            if starts_record(file, candidate)? {
                return Ok(Some(candidate));
            }
            i += j + 1;
        }
        // Step back two bytes so that a header across windows is seen.
        at += (n as u64).saturating_sub(2).max(1);
    }
    Ok(None)
}

/// Whether a gzip member starts at `offset` and its data starts with a
/// WARC version line.
fn starts_record(file: &mut File, offset: u64) -> io::Result<bool> {
    file.seek(SeekFrom::Start(offset))?;
    let mut raw = BufReader::with_capacity(8 << 10, &mut *file);
    let head = raw.fill_buf()?;
    if !gz::plausible_member_header(head) {
        return Ok(false);
    }
    let mut out = [0u8; PROBE_BYTES];
    let mut dec = GzDecoder::new(raw);
    let mut got = 0;
    while got < out.len() {
        match dec.read(out.get_mut(got..).unwrap_or_default()) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    Ok(out.get(..got).is_some_and(|head| head.starts_with(b"WARC/")))
}

/// Reads until `buf` is full or the input ends.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(buf.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;
    use crate::read::Item;
    use crate::read::testing::drain;

    /// A per-record gzip WARC of `n` response records with bodies of
    /// varied length, and the offset of each record.
    fn crawl(n: usize) -> (Vec<u8>, Vec<u64>) {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        for i in 0..n {
            let body = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npage {i}\n{}",
                "some line of text\n".repeat(i % 50)
            );
            let record = format!(
                "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/{i}\r\n\
                 Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
                body.len()
            );
            offsets.push(out.len() as u64);
            let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
            enc.write_all(record.as_bytes()).unwrap();
            out.extend(enc.finish().unwrap());
        }
        (out, offsets)
    }

    fn offsets(items: &[Item]) -> Vec<u64> {
        items.iter().map(Item::offset).collect()
    }

    #[test]
    fn boundaries_are_record_starts() {
        let (bytes, starts) = crawl(400);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.warc.gz");
        std::fs::write(&path, &bytes).unwrap();
        let mut file = File::open(&path).unwrap();
        let len = bytes.len() as u64;
        for from in [1, 100, 5000, len / 2, len - 10] {
            let want = starts.iter().copied().find(|&s| s >= from);
            assert_eq!(boundary(&mut file, from, len).unwrap(), want, "from {from}");
        }
        assert!(is_gzip_warc(&mut file, &ReadOptions::default()).unwrap());
    }

    #[test]
    fn segments_read_what_the_whole_file_reads() {
        let (bytes, starts) = crawl(300);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.warc.gz");
        std::fs::write(&path, &bytes).unwrap();
        let opts = ReadOptions::default();
        // Cut at arbitrary record starts, as `segments` does at its
        // nominal offsets.
        let cuts = [0, starts[1], starts[77], starts[78], starts[299], bytes.len() as u64];
        let mut items = Vec::new();
        for pair in cuts.windows(2) {
            let mut reader = open_segment(&path, Segment { start: pair[0], end: pair[1] }, &opts).unwrap();
            items.extend(drain(reader.as_mut(), 1000));
        }
        assert_eq!(offsets(&items), starts);
        let mut whole = crate::read::open(&path, &opts).unwrap();
        let crate::read::Input::Records(whole) = &mut whole else { panic!("skipped") };
        let all = drain(whole.as_mut(), 1000);
        assert_eq!(offsets(&all), starts);
        for (a, b) in items.iter().zip(&all) {
            assert_eq!(crate::read::testing::doc(a).body, crate::read::testing::doc(b).body);
        }
    }

    #[test]
    fn small_and_whole_file_gzip_are_not_split() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = crawl(50);
        let small = dir.path().join("small.warc.gz");
        std::fs::write(&small, &bytes).unwrap();
        assert_eq!(segments(&small, &ReadOptions::default()).unwrap(), None);
        // One member of incompressible-ish records, over two segments long.
        let mut enc = GzEncoder::new(Vec::new(), Compression::none());
        let mut rng = 7u64;
        let mut noise = Vec::with_capacity(3 * SEGMENT_BYTES as usize);
        while noise.len() < 3 * SEGMENT_BYTES as usize {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            noise.extend_from_slice(&rng.to_le_bytes());
        }
        let body = format!("WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: {}\r\n\r\n", noise.len());
        enc.write_all(body.as_bytes()).unwrap();
        enc.write_all(&noise).unwrap();
        let whole = dir.path().join("whole.warc.gz");
        std::fs::write(&whole, enc.finish().unwrap()).unwrap();
        assert_eq!(segments(&whole, &ReadOptions::default()).unwrap(), None);
    }
}
