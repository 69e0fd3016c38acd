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
//! Only files that look per-record are split: gzip or zstd, WARC, and a
//! second member (or zstd frame) that starts a record within
//! [`SCAN_BYTES`] of the first cut. A whole-file gzip member or zstd
//! frame, WET or WARC, is read by one reader as before. A `.warc.zst`
//! with a dictionary gives every segment the dictionary frame from the
//! start of the file, read again for each segment (a few hundred KiB
//! against the segment's 8 MiB).
//! Two things differ from a reader of the whole file, both only in damaged
//! data: a record that no member starts is given the offset of the member
//! it lies in ([`gz::Source::segment`]), and a record cut into two members
//! at a segment's cut would be read as two damaged pieces (no WARC writer
//! splits records across members below about 1 GB).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, bail};
use flate2::bufread::GzDecoder;

use super::zst::{self, Frames};
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
    let Some(mut framing) = framed_warc(&mut file, opts).with_context(what)? else {
        return Ok(None);
    };
    let mut starts = vec![0u64];
    let mut nominal = SEGMENT_BYTES;
    while nominal < len {
        match boundary(&mut file, nominal, len, &mut framing).with_context(what)? {
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
    // A later segment of a .warc.zst starts with the file's dictionary
    // frame, placed just before the segment so that offsets stay the
    // file's.
    let prefix = if segment.start > 0 { dictionary_frame(&mut file).with_context(what)? } else { Vec::new() };
    let Some(base) = segment.start.checked_sub(prefix.len() as u64) else {
        bail!("cannot read {}: its dictionary frame is longer than its first segment", path.display());
    };
    file.seek(SeekFrom::Start(segment.start)).with_context(what)?;
    let data = io::Cursor::new(prefix).chain(file.take(segment.end - segment.start));
    let raw = BufReader::with_capacity(gz::BUF_SIZE, data);
    let src = gz::Source::segment(Box::new(raw), base).with_context(what)?;
    let reader = warc::WarcReader::new(src, opts.max_record_bytes).knowing(opts.known.clone());
    Ok(Box::new(super::records::under(reader, opts.pages.clone())))
}

/// How a file that may be split is compressed, with what it takes to
/// look into one of its members.
enum Framing {
    Gzip,
    /// Zstd frames, decoded with the file's dictionary if it has one.
    Zstd(Frames),
}

impl Framing {
    /// The bytes every member starts with.
    fn magic(&self) -> &'static [u8] {
        match self {
            Framing::Gzip => &[0x1f, 0x8b, 0x08],
            Framing::Zstd(_) => &zst::FRAME_MAGIC,
        }
    }
}

/// How the file is compressed, if it is gzip or zstd and read as WARC
/// (by `opts.format` or, for `Auto`, by its first member's data).
fn framed_warc(file: &mut File, opts: &ReadOptions) -> io::Result<Option<Framing>> {
    let mut head = [0u8; 4];
    file.seek(SeekFrom::Start(0))?;
    if file.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let (mut framing, first) = if head.starts_with(&[0x1f, 0x8b]) {
        (Framing::Gzip, 0)
    } else if head == zst::FRAME_MAGIC || head == zst::DICT_FRAME_MAGIC {
        let dict_frame = dictionary_frame(file)?;
        let mut frames = Frames::new()?;
        if let Some(dict) = dict_frame.get(8..)
            && frames.load_dictionary(dict).is_err()
        {
            return Ok(None);
        }
        (Framing::Zstd(frames), dict_frame.len() as u64)
    } else {
        return Ok(None);
    };
    Ok(match opts.format {
        InputFormat::Warc => Some(framing),
        InputFormat::Auto => starts_record(file, first, &mut framing)?.then_some(framing),
        _ => None,
    })
}

/// The dictionary frame a zstd file starts with, whole, or nothing when it
/// has none (or one too large to be read, which its reader reports).
fn dictionary_frame(file: &mut File) -> io::Result<Vec<u8>> {
    let mut head = [0u8; 8];
    file.seek(SeekFrom::Start(0))?;
    if file.read_exact(&mut head).is_err() || !head.starts_with(&zst::DICT_FRAME_MAGIC) {
        return Ok(Vec::new());
    }
    let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if size > zst::MAX_DICT {
        return Ok(Vec::new());
    }
    let mut frame = head.to_vec();
    file.take(u64::from(size)).read_to_end(&mut frame)?;
    Ok(frame)
}

/// The first offset in `from..` (within [`SCAN_BYTES`], and before `len`)
/// where a member starts whose data starts a WARC record.
fn boundary(file: &mut File, from: u64, len: u64, framing: &mut Framing) -> io::Result<Option<u64>> {
    let limit = len.min(from.saturating_add(SCAN_BYTES));
    let magic = framing.magic();
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
        while let Some(j) = memchr::memmem::find(window.get(i..).unwrap_or_default(), magic) {
            let candidate = at + (i + j) as u64;
            if starts_record(file, candidate, framing)? {
                return Ok(Some(candidate));
            }
            i += j + 1;
        }
        // Step back so that a magic across windows is seen.
        at += (n as u64).saturating_sub(magic.len() as u64 - 1).max(1);
    }
    Ok(None)
}

/// Whether a member starts at `offset` and its data starts with a WARC
/// version line.
fn starts_record(file: &mut File, offset: u64, framing: &mut Framing) -> io::Result<bool> {
    file.seek(SeekFrom::Start(offset))?;
    let mut raw = BufReader::with_capacity(8 << 10, &mut *file);
    let mut out = [0u8; PROBE_BYTES];
    let mut got = 0;
    match framing {
        Framing::Gzip => {
            if !gz::plausible_member_header(raw.fill_buf()?) {
                return Ok(false);
            }
            let mut dec = GzDecoder::new(raw);
            while got < out.len() {
                match dec.read(out.get_mut(got..).unwrap_or_default()) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got += n,
                }
            }
        }
        Framing::Zstd(frames) => {
            if !raw.fill_buf()?.starts_with(&zst::FRAME_MAGIC) {
                return Ok(false);
            }
            frames.start_frame()?;
            while got < out.len() {
                let input = raw.fill_buf()?;
                if input.is_empty() {
                    break;
                }
                let Ok(status) = frames.decode(input, out.get_mut(got..).unwrap_or_default()) else { break };
                raw.consume(status.bytes_read);
                got += status.bytes_written;
                if status.remaining == 0 || status.bytes_read == 0 && status.bytes_written == 0 {
                    break;
                }
            }
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
    use flate2::read::GzDecoder;
    use flate2::write::GzEncoder;

    use super::*;
    use crate::bytes::read::Item;
    use crate::bytes::read::testing::drain;

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
            assert_eq!(boundary(&mut file, from, len, &mut Framing::Gzip).unwrap(), want, "from {from}");
        }
        assert!(framed_warc(&mut file, &ReadOptions::default()).unwrap().is_some());
    }

    /// The records of [`crawl`] as a .warc.zst: a dictionary frame, then
    /// one frame per record. Returns the file and each frame's offset.
    fn crawl_zstd(n: usize) -> (Vec<u8>, Vec<u64>) {
        let (gzip, starts) = crawl(n);
        let ends = starts.iter().skip(1).copied().chain([gzip.len() as u64]);
        let records: Vec<Vec<u8>> = starts
            .iter()
            .zip(ends)
            .map(|(&a, b)| {
                let mut out = Vec::new();
                GzDecoder::new(&gzip[a as usize..b as usize]).read_to_end(&mut out).unwrap();
                out
            })
            .collect();
        let dict = zstd::dict::from_samples(&records, 4096).unwrap();
        let mut out = [&zst::DICT_FRAME_MAGIC[..], &(dict.len() as u32).to_le_bytes(), &dict].concat();
        let mut c = zstd::bulk::Compressor::with_dictionary(1, &dict).unwrap();
        c.include_checksum(true).unwrap();
        let mut offsets = Vec::new();
        for r in &records {
            offsets.push(out.len() as u64);
            out.extend(c.compress(r).unwrap());
        }
        (out, offsets)
    }

    #[test]
    fn zstd_boundaries_are_frames_that_start_records() {
        let (bytes, starts) = crawl_zstd(400);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.warc.zst");
        std::fs::write(&path, &bytes).unwrap();
        let mut file = File::open(&path).unwrap();
        let Some(mut framing) = framed_warc(&mut file, &ReadOptions::default()).unwrap() else {
            panic!("a .warc.zst is split like per-record gzip")
        };
        let len = bytes.len() as u64;
        for from in [1, 100, 5000, len / 2, len - 10] {
            let want = starts.iter().copied().find(|&s| s >= from);
            assert_eq!(boundary(&mut file, from, len, &mut framing).unwrap(), want, "from {from}");
        }
    }

    #[test]
    fn segments_read_what_the_whole_file_reads() {
        segments_match_the_whole_file("c.warc.gz", crawl(300));
        segments_match_the_whole_file("c.warc.zst", crawl_zstd(300));
    }

    fn segments_match_the_whole_file(name: &str, (bytes, starts): (Vec<u8>, Vec<u64>)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
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
        let mut whole = crate::bytes::read::open(&path, &opts).unwrap();
        let crate::bytes::read::Input::Records(whole) = &mut whole else { panic!("skipped") };
        let all = drain(whole.as_mut(), 1000);
        assert_eq!(offsets(&all), starts);
        for (a, b) in items.iter().zip(&all) {
            assert_eq!(crate::bytes::read::testing::doc(a).body, crate::bytes::read::testing::doc(b).body);
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
