//! WARC records as they are stored, for rewriting a file record by record
//! (`overlap dedup --format warc-revisits`).
//!
//! The readers of [`super::warc`] give each record's text; a rewrite
//! needs the bytes a record occupies in the file, so that a record that is
//! not changed is copied as it is, compressed bytes and all, without being
//! compressed again. That is possible in the two layouts a replay index
//! can point into: plain WARC, where a record's bytes are its own (with
//! the record end and any blank lines after it), and WARC compressed
//! record by record, one gzip member each, where they are the member's.
//! Offsets are the ones [`super::warc::WarcReader`] gives, so a document's
//! `source` in docs.csv names its record here.
//!
//! A record is either loaded (its stored bytes and its whole block kept,
//! for a record the rewrite may replace) or streamed (its stored bytes
//! written on as they are read, only its header and the first [`PEEK`]
//! bytes of its block kept): memory is bounded by the loaded records, not
//! by a video's record. Damage (a gzip member that does not inflate, bytes
//! that are not a record) ends the walk: the rest of the file is copied as
//! it is, so nothing is lost, and the damage is reported once.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;

use super::http;
use super::warc::MAX_HEADER_BYTES;

/// How the records of a file are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Uncompressed.
    Plain,
    /// One gzip member per record.
    Members,
}

/// Bytes of the block kept for a streamed record: enough for the HTTP
/// response header that a replay index takes the status and media type
/// from.
pub(crate) const PEEK: usize = 64 << 10;

/// One stored record.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    /// Where it starts: the member's offset, or the record's in a plain file.
    pub offset: u64,
    /// The record header, from the version line through the blank line
    /// that ends it; empty when the bytes are damaged.
    pub head: Vec<u8>,
    /// The block: whole for a loaded record, else its first [`PEEK`] bytes.
    pub block: Vec<u8>,
    /// A loaded record's stored bytes.
    pub stored: Option<Vec<u8>>,
    /// Why the walk stopped here (the rest of the file is copied as it is).
    pub damage: Option<String>,
}

impl Stored {
    /// The first value of header field `name` (any case), trimmed.
    pub(crate) fn field(&self, name: &str) -> Option<String> {
        field(&self.head, name)
    }
}

/// The first value of field `name` (any case) in a WARC record header.
pub(crate) fn field(head: &[u8], name: &str) -> Option<String> {
    let fields = head.get(memchr::memchr(b'\n', head)? + 1..).unwrap_or_default();
    for f in http::FieldLines::new(fields) {
        let (n, value) = f.ok()?;
        if n.eq_ignore_ascii_case(name.as_bytes()) {
            return Some(http::value_text(value).into_owned());
        }
    }
    None
}

/// The records of one WARC file, in order.
pub(crate) struct StoredRecords {
    layout: Layout,
    /// `None` once the walk has ended.
    src: Option<Counted>,
    /// Whether the rest of the file is copied as it is at the next call.
    tail: bool,
    buf: Vec<u8>,
}

impl StoredRecords {
    /// Opens `path`, telling its layout from its first bytes. A file that
    /// is neither plain WARC nor gzip (zstd, say) is an error; a gzip file
    /// that holds more than one record in a member is found out when that
    /// member ends ([`StoredRecords::next`]).
    pub(crate) fn open(path: &Path) -> io::Result<StoredRecords> {
        StoredRecords::open_at(path, 0, 1 << 20)
    }

    /// Opens `path` at `offset`, where a record starts, reading `buffer`
    /// bytes at a time (a small buffer for one record).
    pub(crate) fn open_at(path: &Path, offset: u64, buffer: usize) -> io::Result<StoredRecords> {
        let mut file = File::open(path)?;
        file.seek(io::SeekFrom::Start(offset))?;
        let mut src =
            Counted { inner: BufReader::with_capacity(buffer, file), pos: offset, taken: Vec::new() };
        let start = src.inner.fill_buf()?;
        let layout = if start.starts_with(&[0x1f, 0x8b]) {
            Layout::Members
        } else if start.is_empty() || start.starts_with(b"WARC/") {
            Layout::Plain
        } else if start.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) || start.starts_with(&[0x5d, 0x2a, 0x4d, 0x18])
        {
            return Err(io::Error::other("compressed with zstd, not gzip record by record"));
        } else {
            return Err(io::Error::other("not WARC (it does not start with a record or a gzip member)"));
        };
        Ok(StoredRecords { layout, src: Some(src), tail: false, buf: vec![0; 1 << 16] })
    }

    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Bytes of the file read so far.
    pub(crate) fn position(&self) -> u64 {
        self.src.as_ref().map_or(0, |s| s.pos)
    }

    /// The next record. `load` says, from its offset, whether it is
    /// loaded; a streamed record's stored bytes (or after damage, the rest
    /// of the file) are written to `copy` as they are read.
    pub(crate) fn next(
        &mut self,
        load: impl FnOnce(u64) -> bool,
        copy: &mut dyn Write,
    ) -> io::Result<Option<Stored>> {
        let Some(mut src) = self.src.take() else { return Ok(None) };
        if self.tail {
            src.taken.clear();
            io::copy(&mut src.inner, copy)?;
            return Ok(None);
        }
        if src.inner.fill_buf()?.is_empty() {
            return Ok(None);
        }
        src.taken.clear();
        let load = load(src.pos);
        let mut rec = Recording::new(src.pos, load);
        let src = match self.layout {
            Layout::Members => self.member(src, &mut rec, copy)?,
            Layout::Plain => plain(src, &mut rec, copy, &mut self.buf)?,
        };
        if rec.stored.damage.is_some() {
            self.tail = true;
        }
        self.src = Some(src);
        Ok(Some(rec.stored))
    }

    /// Reads one gzip member.
    fn member(&mut self, src: Counted, rec: &mut Recording, copy: &mut dyn Write) -> io::Result<Counted> {
        let mut dec = GzDecoder::new(src);
        loop {
            let read = dec.read(&mut self.buf);
            rec.pass(&mut dec.get_mut().taken, copy)?;
            match read {
                Ok(0) => break,
                Ok(n) => rec.data(&self.buf[..n]),
                Err(e) => {
                    rec.stored.damage = Some(format!("a gzip member that does not inflate ({e})"));
                    break;
                }
            }
        }
        let mut src = dec.into_inner();
        rec.pass(&mut src.taken, copy)?;
        if rec.stored.damage.is_none() {
            rec.end()?;
        }
        Ok(src)
    }
}

/// Reads one plain record, with the record end and blank lines after it.
fn plain(mut src: Counted, rec: &mut Recording, copy: &mut dyn Write, buf: &mut [u8]) -> io::Result<Counted> {
    let mut line = Vec::new();
    while rec.head_len.is_none() && rec.stored.damage.is_none() {
        line.clear();
        let n = src.read_until(b'\n', &mut line)?;
        rec.data(&line);
        rec.pass(&mut src.taken, copy)?;
        if n == 0 {
            rec.stored.damage = Some("a record cut off in its header".into());
        }
    }
    if let Some(length) = rec.length {
        let mut left = length;
        while left > 0 && rec.stored.damage.is_none() {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = src.read(&mut buf[..want])?;
            if n == 0 {
                rec.stored.damage = Some("a record cut off in its block".into());
            }
            rec.data(&buf[..n]);
            rec.pass(&mut src.taken, copy)?;
            left -= n as u64;
        }
    }
    // The record end and blank lines: up to the next record.
    while rec.stored.damage.is_none() {
        let blank = src.inner.fill_buf()?.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
        if blank == 0 {
            break;
        }
        src.consume(blank);
    }
    rec.pass(&mut src.taken, copy)?;
    Ok(src)
}

/// A record being read: what is kept of it.
struct Recording {
    stored: Stored,
    load: bool,
    /// Decompressed bytes seen.
    seen: u64,
    head_len: Option<usize>,
    length: Option<u64>,
    /// Whether bytes other than CR and LF follow the block in its member.
    more: bool,
}

impl Recording {
    fn new(offset: u64, load: bool) -> Recording {
        let stored = Stored { offset, stored: load.then(Vec::new), ..Stored::default() };
        Recording { stored, load, seen: 0, head_len: None, length: None, more: false }
    }

    /// Takes the stored bytes consumed so far: kept, or written on.
    fn pass(&mut self, taken: &mut Vec<u8>, copy: &mut dyn Write) -> io::Result<()> {
        match &mut self.stored.stored {
            Some(stored) => stored.extend_from_slice(taken),
            None => copy.write_all(taken)?,
        }
        taken.clear();
        Ok(())
    }

    /// Takes the next decompressed bytes of the record.
    fn data(&mut self, mut bytes: &[u8]) {
        if self.stored.damage.is_some() {
            return;
        }
        if self.head_len.is_none() {
            let before = self.stored.head.len();
            self.stored.head.extend_from_slice(bytes);
            match header_end(&self.stored.head) {
                Some(end) => {
                    self.stored.head.truncate(end);
                    bytes = &bytes[end - before..];
                    self.head_len = Some(end);
                    match self.parse_head() {
                        Ok(length) => self.length = Some(length),
                        Err(why) => {
                            self.stored.damage = Some(why);
                            return;
                        }
                    }
                }
                None if !self.stored.head.starts_with(b"WARC/") && self.stored.head.len() >= 6 => {
                    self.stored.damage = Some("bytes that are not a WARC record".into());
                    return;
                }
                None if self.stored.head.len() > MAX_HEADER_BYTES => {
                    self.stored.damage = Some("a record header longer than 1 MiB".into());
                    return;
                }
                None => return,
            }
        }
        let Some(length) = self.length else { return };
        let in_block =
            usize::try_from(length.saturating_sub(self.seen)).unwrap_or(usize::MAX).min(bytes.len());
        let (block, after) = bytes.split_at(in_block);
        let room = if self.load {
            block.len()
        } else {
            PEEK.saturating_sub(self.stored.block.len()).min(block.len())
        };
        self.stored.block.extend_from_slice(&block[..room]);
        self.seen += block.len() as u64;
        self.more |= after.iter().any(|&b| b != b'\r' && b != b'\n');
    }

    fn parse_head(&self) -> Result<u64, String> {
        let value =
            field(&self.stored.head, "Content-Length").ok_or("a record header without Content-Length")?;
        // The reader's own rule (digits only), so that the two accept the
        // same headers.
        super::warc::parse_length(&value)
    }

    /// Checks a member that ended: it held one whole record.
    fn end(&mut self) -> io::Result<()> {
        if self.stored.damage.is_some() {
            return Ok(());
        }
        match self.length {
            None if self.stored.head.is_empty() => self.stored.damage = Some("an empty gzip member".into()),
            None => self.stored.damage = Some("a gzip member that ends in a record header".into()),
            Some(length) if self.seen < length => {
                // A block that goes on in the next member: the record is
                // not one member's, and a rewrite could not replace it.
                self.stored.damage = Some("a record that runs past its gzip member".into());
            }
            Some(_) if self.more => {
                return Err(io::Error::other(
                    "a gzip member holds more than one record: the file is not compressed record by record",
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// Where a record header ends: just after the first blank line.
fn header_end(head: &[u8]) -> Option<usize> {
    let mut lines = memchr::memchr_iter(b'\n', head);
    lines.next()?;
    for i in lines {
        let before = &head[..i];
        if before.ends_with(b"\n") {
            return Some(i + 1);
        }
        if before.ends_with(b"\n\r") {
            return Some(i + 1);
        }
    }
    None
}

/// The file, with its position and the bytes consumed since they were
/// last taken.
struct Counted {
    inner: BufReader<File>,
    pos: u64,
    taken: Vec<u8>,
}

impl Read for Counted {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Counted {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.taken.extend_from_slice(&self.inner.buffer()[..n]);
        self.inner.consume(n);
        self.pos += n as u64;
    }
}

/// The HTTP response header at the start of a block, parsed: its length
/// through the blank line that ends it (`body_start`), the status and the
/// media type a replay index takes; `None` when the block is no HTTP
/// response or its header has no end.
pub(crate) fn http_head(block: &[u8]) -> Option<http::Response> {
    let resp = http::parse_response(block).ok()?;
    let ends = block.get(..resp.body_start)?;
    (ends.ends_with(b"\n\n") || ends.ends_with(b"\n\r\n")).then_some(resp)
}

/// A header value as text: for fields the rewrite copies.
pub(crate) fn text(bytes: &[u8]) -> Cow<'_, str> {
    http::text(bytes)
}

/// The file a rewrite writes in `dir` for input `path`: its name, with
/// `.warc.gz` for `.warc` (a plain input is written compressed).
pub(crate) fn out_name(dir: &Path, path: &Path) -> PathBuf {
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = file.strip_suffix(".gz").unwrap_or(&file);
    let stem = stem.strip_suffix(".warc").unwrap_or(stem);
    dir.join(format!("{stem}.warc.gz"))
}

/// Checks that `path` can be rewritten: WARC stored plain or gzip record
/// by record. The first record tells a file compressed as one stream (its
/// first member holds more than one record).
pub(crate) fn check_rewritable(path: &Path) -> Result<(), String> {
    let checked = StoredRecords::open(path).and_then(|mut r| r.next(|_| false, &mut io::sink()).map(drop));
    checked.map_err(|why| {
        format!("{why}; only WARC stored plain or gzip record by record can be rewritten (a replay index points into records)")
    })
}

/// The next record of `records`, a streamed one written to `out` as it is
/// stored, a plain record as a gzip member of its own; `load` says by its
/// offset whether it is loaded instead ([`StoredRecords::next`]).
pub(crate) fn next_into(
    records: &mut StoredRecords,
    out: &mut dyn Write,
    load: impl FnOnce(u64) -> bool,
) -> io::Result<Option<Stored>> {
    match records.layout() {
        Layout::Members => records.next(load, out),
        Layout::Plain => {
            let mut gz = LazyGz { raw: Some(out), gz: None };
            let rec = records.next(load, &mut gz)?;
            if let Some(gz) = gz.gz {
                gz.finish()?;
            }
            Ok(rec)
        }
    }
}

/// Writes a loaded record's stored bytes: as they are, or, from a plain
/// input, as a gzip member.
pub(crate) fn write_stored(out: &mut dyn Write, layout: Layout, stored: &[u8]) -> io::Result<()> {
    match layout {
        Layout::Members => out.write_all(stored),
        Layout::Plain => out.write_all(&member(stored)?),
    }
}

/// One record as a gzip member of its own (its header names no file and
/// no time, so the same record gives the same bytes).
pub(crate) fn member(record: &[u8]) -> io::Result<Vec<u8>> {
    let mut e = GzEncoder::new(Vec::with_capacity(record.len() / 3 + 64), Compression::default());
    e.write_all(record)?;
    e.finish()
}

/// A gzip member started at the first byte written to it, for a plain
/// record streamed into a compressed file.
struct LazyGz<'a> {
    raw: Option<&'a mut dyn Write>,
    gz: Option<GzEncoder<&'a mut dyn Write>>,
}

impl Write for LazyGz<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let Some(raw) = self.raw.take() {
            self.gz = Some(GzEncoder::new(raw, Compression::default()));
        }
        self.gz.as_mut().expect("started").write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;

    fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// Walks `file`, loading the records at `loaded`; returns the records
    /// and what was copied.
    fn walk(file: &[u8], loaded: &[u64]) -> (Vec<Stored>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.warc");
        std::fs::write(&path, file).unwrap();
        let mut records = StoredRecords::open(&path).unwrap();
        let (mut out, mut copied) = (Vec::new(), Vec::new());
        while let Some(r) = records.next(|o| loaded.contains(&o), &mut copied).unwrap() {
            if let Some(s) = &r.stored {
                copied.extend_from_slice(s);
            }
            out.push(r);
        }
        (out, copied)
    }

    #[test]
    fn members_are_walked_and_copied_byte_for_byte() {
        let body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>";
        let records = [
            record("request", "http://a/", b"GET / HTTP/1.1\r\n\r\n"),
            record("response", "http://a/", body),
        ];
        let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let file = members.concat();
        let (walked, copied) = walk(&file, &[members[0].len() as u64]);
        assert_eq!(copied, file, "every byte copied or loaded, in order");
        assert_eq!(walked.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, members[0].len() as u64]);
        assert_eq!(walked[1].stored.as_deref(), Some(&members[1][..]));
        assert_eq!(walked[1].block, body);
        assert_eq!(walked[1].field("warc-type").as_deref(), Some("response"));
        let http = http_head(&walked[1].block).unwrap();
        assert_eq!((http.body_start, http.status), (body.len() - 8, 200));
        assert!(walked.iter().all(|r| r.damage.is_none()));
    }

    #[test]
    fn plain_records_keep_their_record_ends() {
        let records = [record("warcinfo", "", b"a: b\r\n"), record("resource", "http://a/", b"text")];
        let file = records.concat();
        let (walked, copied) = walk(&file, &[records[0].len() as u64]);
        assert_eq!(copied, file);
        assert_eq!(walked[1].offset, records[0].len() as u64);
        assert_eq!(walked[1].stored.as_deref(), Some(&records[1][..]));
        assert_eq!(walked[0].block, b"a: b\r\n", "a streamed record keeps its block's start");
    }

    #[test]
    fn damage_copies_the_rest_as_it_is() {
        let good = gz(&record("resource", "http://a/", b"x"));
        let mut file = good.clone();
        file.extend_from_slice(b"\x1f\x8b\x08\0not deflate at all");
        file.extend_from_slice(&good);
        let (walked, copied) = walk(&file, &[]);
        assert_eq!(copied, file);
        assert_eq!(walked.len(), 2);
        assert!(walked[1].damage.as_deref().unwrap().contains("does not inflate"));
    }

    #[test]
    fn a_content_length_is_digits_only_as_the_reader_reads_it() {
        let bad =
            String::from_utf8(record("resource", "http://a/", b"x")).unwrap().replace(": 1\r\n", ": +1\r\n");
        let file = [gz(bad.as_bytes()), gz(&record("resource", "http://b/", b"y"))].concat();
        let (walked, copied) = walk(&file, &[]);
        assert_eq!(copied, file, "a damaged file is copied as it is");
        let damage = walked.iter().find_map(|r| r.damage.clone()).expect("the record is damaged");
        assert!(damage.contains("Content-Length is not a number: \"+1\""), "{damage}");
    }

    #[test]
    fn a_member_of_two_records_is_refused() {
        let file =
            gz(&[record("resource", "http://a/", b"x"), record("resource", "http://b/", b"y")].concat());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.warc.gz");
        std::fs::write(&path, file).unwrap();
        let mut records = StoredRecords::open(&path).unwrap();
        let err = records.next(|_| false, &mut io::sink()).unwrap_err();
        assert!(err.to_string().contains("not compressed record by record"), "{err}");
    }
}
