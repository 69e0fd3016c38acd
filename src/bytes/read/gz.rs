//! The byte source under every reader: plain bytes, or gzip decompressed
//! member by member, or zstd decompressed frame by frame.
//!
//! A [`Source`] looks at the first two bytes of its input. If they are the
//! gzip magic (`1f 8b`) it decompresses one gzip member after another
//! (per-record gzip WARC has one member per record, whole-file gzip has one,
//! `cat a.gz b.gz` has several), and remembers for each member the offset of
//! its first compressed byte and the decompressed position where its data
//! begins, so that a reader can give a record that starts a member the
//! member's offset, as CDX indexes do (`Source::member_start_at`).
//! Zstd input (`.warc.zst`, see [`zst`]) is read the same way: a zstd frame
//! is a member, its compressed offset is the offset of a record it starts,
//! and a frame that fails is a break like a damaged gzip member (with
//! [`SkipReason::CorruptZstd`]). What follows says gzip and members; it
//! holds for zstd and frames, except that [`Source::skip_member`] leaves
//! only gzip members compressed. Otherwise bytes pass through unchanged.
//!
//! Damaged gzip data does not end the input. When a member fails (a bad
//! header, an inflate error, a CRC or length mismatch, bytes that are not gzip
//! at all where a member should start) the source stops delivering data at
//! that point and holds a [`Break`] that says where and what: the reader sees
//! the end of its data, takes the break, drops the record it was in, and
//! reads on. Meanwhile the source has scanned the compressed bytes for the
//! next `1f 8b 08` member header, starting just after the start of the bad
//! member (it keeps up to `HISTORY_MAX` compressed bytes of the current
//! member so that it can go back that far: an inflater that fails late may
//! already have eaten the next member's header). The decompressed stream
//! goes on after a break as if the good data were contiguous: decompressed
//! positions count delivered bytes only. A member cut off at the end of the
//! input (and not followed by any further member header, which would mean
//! it was damaged instead) is a break with [`SkipReason::TruncatedRecord`],
//! after which the input ends; the data it delivered stands, so a record
//! that was complete before the cut is still a document.
//!
//! A CRC error is only seen at the end of a member, after its data has been
//! delivered; a member damaged so that it still inflates gives wrong data
//! until then. Readers therefore call `Source::record_damage` after each
//! record (and each corrupt record or run of garbage), before they emit it:
//! that reads on until the member the record ended in is verified, or
//! fails, and for a record that starts a member, until that member ends (as
//! far as the decompressed buffer reaches). In per-record gzip this catches
//! every damaged record, reported once with the member's offset; in a
//! whole-file gzip member, records already emitted stand, and only the
//! record in progress is dropped when the member fails.
//!
//! `push_break_skips` turns a break and the record it cut into skips, the
//! same way for every reader.
//!
//! A reader that may not need a record's body (one whose payload the
//! previous analysis already has) makes the source frugal: the first
//! [`FRUGAL_BYTES`] of each member are inflated a little at a time, so that
//! the record's headers can be read without inflating the rest, and
//! [`Source::skip_member`] then leaves the rest of a per-record member
//! compressed, finding the next member by its header.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::mem;

use flate2::bufread::GzDecoder;

use super::inflate::Inflater;
use super::zst::{self, Frames};
use super::{Item, Skip, SkipReason};

/// Size of the buffer of decompressed data, and the buffer size readers
/// should give the raw input.
pub const BUF_SIZE: usize = 256 * 1024;

/// The most compressed bytes of one member that are kept for rescanning
/// after the member turns out to be damaged. Per-record members are almost
/// always smaller; a longer member is rescanned from where it failed.
pub(crate) const HISTORY_MAX: usize = 4 << 20;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A frugal source inflates this much of a member, at most, before a
/// reader can decide to skip it: enough for a WARC header and an HTTP
/// header.
pub(crate) const FRUGAL_BYTES: u64 = 16 << 10;

/// How far past the current position [`Source::skip_member`] looks for the
/// end of the member: a longer member is read.
const SKIP_SCAN_MAX: usize = 8 << 20;

/// How far into a file [`starts_like_gzip`] looks for a gzip member.
const GZIP_SNIFF: usize = 64 << 10;

/// The first three bytes of every gzip member: the magic and the deflate
/// method.
const GZIP_START: [u8; 3] = [GZIP_MAGIC[0], GZIP_MAGIC[1], 8];

/// Whether a file starting with `head` is gzip by its first bytes: the
/// magic, or two of the three bytes every gzip file starts with followed
/// by the rest of a header as compressors write it
/// ([`plausible_member_header`]). Failing that, a start that no text
/// format has ([`binary_start`]) with a member start (`1f 8b 08`) further
/// on is gzip too (`Source::new` looks). So a damaged or cut first member
/// does not make the whole file read as plain bytes: it is reported as
/// damage, and reading goes on with the next member. (Without the header
/// check, a JSONL file whose first line was the bytes `1f 0b 08` read as
/// one damaged member and lost every line.)
fn starts_like_gzip(head: &[u8]) -> bool {
    if head.starts_with(&GZIP_MAGIC) {
        return true;
    }
    let Some((start, rest)) = head.split_first_chunk::<3>() else {
        return false;
    };
    let matching = start.iter().zip(GZIP_START).filter(|&(&b, e)| b == e).count();
    let mut repaired = GZIP_START.to_vec();
    repaired.extend_from_slice(rest);
    matching >= 2 && (head.len() < 10 || plausible_member_header(&repaired))
}

/// Whether the first 16 bytes of `head` hold a control byte other than
/// whitespace, or a byte sequence that is not UTF-8.
fn binary_start(head: &[u8]) -> bool {
    let prefix = head.get(..16).unwrap_or(head);
    let text = match std::str::from_utf8(prefix) {
        Ok(text) => text.as_bytes(),
        Err(e) if e.error_len().is_some() => return true,
        Err(e) => prefix.get(..e.valid_up_to()).unwrap_or_default(),
    };
    text.iter().any(|&b| b < 0x20 && !b.is_ascii_whitespace() || b == 0x7f)
}

/// How the input is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    Plain,
    Gzip,
    Zstd,
}

impl Codec {
    /// What a member of this codec is called, in break details.
    fn member(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd frame",
            Codec::Plain | Codec::Gzip => "gzip member",
        }
    }

    /// The data's name, in break details.
    fn data(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd data",
            Codec::Plain | Codec::Gzip => "gzip data",
        }
    }

    /// The skip reason of a member that fails.
    fn corrupt(self) -> SkipReason {
        match self {
            Codec::Zstd => SkipReason::CorruptZstd,
            Codec::Plain | Codec::Gzip => SkipReason::CorruptGzip,
        }
    }
}

/// The codec of a file starting with `head`, by its first bytes: gzip or
/// zstd by their magic (or most of it); failing that, a start that no text
/// format has ([`binary_start`]) followed, within the first 64 KiB, by a
/// gzip member start or a zstd frame is that codec (the earlier of the
/// two). So a damaged or cut first member does not make the whole file
/// read as plain bytes: it is reported as damage, and reading goes on with
/// the next member.
fn sniff_codec(head: &[u8], rest: impl FnOnce() -> io::Result<Vec<u8>>) -> io::Result<Codec> {
    if starts_like_gzip(head) {
        return Ok(Codec::Gzip);
    }
    if zst::starts_like_zstd(head) {
        return Ok(Codec::Zstd);
    }
    if !binary_start(head) {
        return Ok(Codec::Plain);
    }
    let rest = rest()?;
    let gzip = memchr::memmem::find(&rest, &GZIP_START);
    let zstd = memchr::memmem::find(&rest, &zst::FRAME_MAGIC);
    Ok(match (gzip, zstd) {
        (Some(g), Some(z)) if z < g => Codec::Zstd,
        (None, Some(_)) => Codec::Zstd,
        (Some(_), _) => Codec::Gzip,
        (None, None) => Codec::Plain,
    })
}

/// Damage in gzip input that ended the decompressed data at the current
/// position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Break {
    /// Offset in the compressed input of the damaged member, or of the first
    /// byte that is not gzip data.
    pub offset: u64,
    /// [`SkipReason::CorruptGzip`], or [`SkipReason::TruncatedRecord`] for a
    /// member cut off at the end of the input.
    pub reason: SkipReason,
    /// What was wrong and where reading resumed.
    pub detail: String,
    /// Decompressed position from which delivered data is suspect: where the
    /// damaged member's data began, or the break's own position when no
    /// delivered byte is affected (bytes that are not gzip after a good
    /// member, a member cut off at the end of the input).
    pub damaged_from: u64,
}

/// Where a record starts: its decompressed position, and the offset to
/// report for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Start {
    pub pos: u64,
    pub offset: u64,
    /// Whether `offset` is the compressed offset of the gzip member that the
    /// record starts.
    pub at_member: bool,
}

impl Start {
    /// A record at `pos`, which starts the member at `member` if one is given.
    pub(crate) fn new(pos: u64, member: Option<u64>) -> Start {
        match member {
            Some(offset) => Start { pos, offset, at_member: true },
            None => Start { pos, offset: pos, at_member: false },
        }
    }
}

/// Queues the skips for a break: the record it cut off, if any, and the
/// damage itself, as one skip when they are the same thing.
///
/// - A record that starts the damaged member (per-record gzip): one skip,
///   the break's, at the member's offset.
/// - A record cut off by a member truncated at the end of the input: one
///   [`SkipReason::TruncatedRecord`] skip at the record's offset, as for a
///   plain file cut off in the middle of a record.
/// - Otherwise the record is dropped with the break's reason at its own
///   offset, and the break follows as a skip of its own.
pub(crate) fn push_break_skips(queue: &mut VecDeque<Item>, lost: Option<Start>, brk: Break) {
    let Some(record) = lost else {
        queue.push_back(skip(brk.offset, brk.reason, brk.detail));
        return;
    };
    if record.at_member && record.offset == brk.offset {
        queue.push_back(skip(brk.offset, brk.reason, brk.detail));
    } else if brk.reason == SkipReason::TruncatedRecord {
        let detail = format!("record cut off at end of input ({})", brk.detail);
        queue.push_back(skip(record.offset, SkipReason::TruncatedRecord, detail));
    } else {
        let detail = format!("record lost to damaged gzip data at offset {}", brk.offset);
        queue.push_back(skip(record.offset, brk.reason, detail));
        queue.push_back(skip(brk.offset, brk.reason, brk.detail));
    }
}

/// A skip item.
pub(crate) fn skip(offset: u64, reason: SkipReason, detail: impl Into<String>) -> Item {
    Item::Skip(Skip::new(offset, reason, detail))
}

/// How a [`Source::read_line`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// Bytes consumed, line end included.
    pub len: u64,
    /// Whether the line ended with `\n` (false at the end of input or at a
    /// break).
    pub complete: bool,
}

/// What the decompressor is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between members: the next bytes should be a gzip header.
    Between,
    /// Inside a member.
    Member,
    /// No more data (plain input never leaves this state: it is read
    /// directly from the counting reader).
    Done,
}

/// Plain or gzip bytes, with positions, member offsets and breaks.
pub struct Source {
    /// The gzip decoder, which owns the counting reader over the raw input
    /// whatever the codec: plain input reads the counting reader directly,
    /// and zstd frames are decoded from it by `frames`.
    dec: GzDecoder<Counting>,
    codec: Codec,
    /// The zstd decoder and its dictionary, for zstd input.
    frames: Option<Frames>,
    /// The whole-member inflater, for gzip input (see [`super::inflate`]).
    whole: Option<Inflater>,
    /// Decompressed data not yet consumed is `out[start..end]`.
    out: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes consumed by the reader so far.
    pos: u64,
    state: State,
    /// Compressed offset and decompressed start of the current member.
    member_offset: u64,
    member_pos: u64,
    /// (decompressed position, compressed offset) of members whose data
    /// starts at or after `pos`, in increasing position, one per position.
    /// Lookups search it rather than scan it: readers ask once a line, and
    /// a buffer of tiny members (zstd frames of a few bytes) holds thousands.
    starts: VecDeque<(u64, u64)>,
    /// Compressed offset of the last member whose data starts before `pos`.
    current: u64,
    /// Decompressed position where that member's data starts, once one has
    /// been passed: bytes before it cannot be given back
    /// ([`Source::give_back`]).
    current_pos: Option<u64>,
    /// Whether this source reads a segment of a larger file (see
    /// [`Source::segment`]).
    segment: bool,
    pending: Option<Break>,
    /// Whether each member's first [`FRUGAL_BYTES`] are inflated a little
    /// at a time ([`Source::frugal`]).
    frugal: bool,
}

impl Source {
    /// A source over `inner`, detecting gzip by its first two bytes.
    pub fn new(inner: Box<dyn BufRead + Send>) -> io::Result<Source> {
        Source::at(inner, 0, false)
    }

    /// A source over one segment of a per-record gzip file: `inner` holds
    /// whole members, from compressed offset `base` of the file on, so
    /// member offsets are the file's. Decompressed positions are not known
    /// there, so a record that does not start a member (in damaged data)
    /// is given the offset of the member it lies in ([`Source::start`]).
    pub(crate) fn segment(inner: Box<dyn BufRead + Send>, base: u64) -> io::Result<Source> {
        Source::at(inner, base, true)
    }

    fn at(inner: Box<dyn BufRead + Send>, base: u64, segment: bool) -> io::Result<Source> {
        let mut counting = Counting::new(inner);
        counting.pos = base;
        // Only a start that is not text makes it look further.
        let head = counting.peek(16)?.to_vec();
        let codec = sniff_codec(&head, || Ok(counting.peek(GZIP_SNIFF)?.to_vec()))?;
        let frames = if codec == Codec::Zstd { Some(Frames::new()?) } else { None };
        let compressed = codec != Codec::Plain;
        // The decoder is made over an empty reader and then given the real
        // one: `GzDecoder::new` would read a header at once, and the same
        // decoder is reset for every member to reuse its inflate state.
        let mut dec = GzDecoder::new(Counting::empty());
        dec.reset(counting);
        Ok(Source {
            dec,
            codec,
            frames,
            whole: if codec == Codec::Gzip { Inflater::new() } else { None },
            out: if compressed { vec![0; BUF_SIZE] } else { Vec::new() },
            start: 0,
            end: 0,
            pos: 0,
            state: if compressed { State::Between } else { State::Done },
            member_offset: 0,
            member_pos: 0,
            starts: VecDeque::new(),
            current: base,
            current_pos: None,
            segment,
            pending: None,
            frugal: false,
        })
    }

    /// Makes the source inflate the start of each member in small steps, so
    /// that a reader can skip the rest of it ([`Source::skip_member`]).
    pub(crate) fn frugal(&mut self) {
        self.frugal = true;
    }

    /// Whether the input is gzip.
    pub fn is_gzip(&self) -> bool {
        self.codec == Codec::Gzip
    }

    /// Whether the input is compressed (gzip or zstd): offsets are then
    /// those of members, or decompressed positions.
    pub fn is_compressed(&self) -> bool {
        self.codec != Codec::Plain
    }

    /// Bytes consumed so far: the decompressed position for gzip input.
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// The data at the current position; empty at the end of input or at a
    /// break (see `Source::at_break`).
    pub fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.codec == Codec::Plain {
            return self.dec.get_mut().fill();
        }
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.out.len() > BUF_SIZE {
                // Grown by `give_back`: back to its size once drained.
                self.out.truncate(BUF_SIZE);
                self.out.shrink_to_fit();
            }
            self.produce()?;
        }
        Ok(self.out.get(self.start..self.end).unwrap_or_default())
    }

    /// Marks `n` bytes of the last [`Source::fill_buf`] or `Source::peek`
    /// as read.
    pub fn consume(&mut self, n: usize) {
        if self.codec == Codec::Plain {
            self.dec.get_mut().consume(n);
            self.pos += n as u64;
            return;
        }
        let n = n.min(self.end - self.start);
        self.start += n;
        self.pos += n as u64;
        while let Some(&(p, offset)) = self.starts.front().filter(|&&(p, _)| p < self.pos) {
            self.current = offset;
            self.current_pos = Some(p);
            self.starts.pop_front();
        }
    }

    /// At least `n` bytes at the current position, unless the input ends or
    /// breaks sooner. `n` should be small (a few KiB at most).
    pub(crate) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.codec == Codec::Plain {
            return self.dec.get_mut().peek(n);
        }
        let n = n.min(self.out.len());
        while self.end - self.start < n {
            if self.start > 0 {
                self.out.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if !self.produce()? {
                break;
            }
        }
        Ok(self.out.get(self.start..self.end).unwrap_or_default())
    }

    /// Puts `bytes`, the last bytes consumed, back in front of the data, so
    /// that they are read again from the position they started at: what a
    /// reader does when a record's length proves to lie and the next record
    /// starts inside what it read (see the WARC reader's `read_block`).
    /// Returns false, changing nothing, when the bytes reach back past the
    /// start of the current gzip member: the offsets of the members passed
    /// are no longer known.
    pub(crate) fn give_back(&mut self, bytes: &[u8]) -> bool {
        let n = bytes.len() as u64;
        let Some(pos) = self.pos.checked_sub(n) else { return false };
        if self.current_pos.is_some_and(|p| p >= pos) {
            return false;
        }
        self.pos = pos;
        if self.codec == Codec::Plain {
            self.dec.get_mut().give_back(bytes);
            return true;
        }
        if self.start >= bytes.len() {
            self.start -= bytes.len();
            self.out.get_mut(self.start..self.start + bytes.len()).unwrap_or_default().copy_from_slice(bytes);
        } else {
            let mut out = Vec::with_capacity((bytes.len() + self.end - self.start).max(BUF_SIZE));
            out.extend_from_slice(bytes);
            out.extend_from_slice(self.out.get(self.start..self.end).unwrap_or_default());
            self.end = out.len();
            self.start = 0;
            out.resize(out.len().max(BUF_SIZE), 0);
            self.out = out;
        }
        true
    }

    /// The compressed offset of the gzip member whose data begins at
    /// decompressed position `pos`, if one does. Only positions at or after
    /// the current one are known.
    pub(crate) fn member_start_at(&self, pos: u64) -> Option<u64> {
        let i = self.starts.partition_point(|&(p, _)| p < pos);
        self.starts.get(i).filter(|&&(p, _)| p == pos).map(|&(_, offset)| offset)
    }

    /// How many bytes from the current position to the start of the next
    /// member, if one starts after the current position within the data
    /// decompressed so far.
    pub(crate) fn to_next_member(&self) -> Option<usize> {
        let i = self.starts.partition_point(|&(p, _)| p <= self.pos);
        let &(p, _) = self.starts.get(i)?;
        usize::try_from(p - self.pos).ok()
    }

    /// A [`Start`] for a record at the current position.
    pub(crate) fn start_here(&self) -> Start {
        self.start(self.pos, self.member_start_at(self.pos))
    }

    /// A [`Start`] for a record at the current position `pos`, which starts
    /// the member at `member` if one is given. In a segment, a record that
    /// starts no member gets the offset of the member it lies in, since
    /// its decompressed position in the whole file is not known.
    pub(crate) fn start(&self, pos: u64, member: Option<u64>) -> Start {
        match member {
            None if self.segment => Start { pos, offset: self.current, at_member: false },
            member => Start::new(pos, member),
        }
    }

    /// Whether the data ends here because of a break (rather than the end of
    /// the input). Meaningful once [`Source::fill_buf`] returned nothing.
    pub(crate) fn at_break(&self) -> bool {
        self.pending.is_some() && self.start == self.end
    }

    /// Takes the break at the current position, after which data resumes
    /// with the next good member, if any.
    pub fn take_break(&mut self) -> Option<Break> {
        if self.start == self.end { self.pending.take() } else { None }
    }

    /// Called after the record that began at `start` was read whole, before
    /// it is emitted: the break that damaged it, if one did, with the data
    /// up to the break discarded. Reading on to here makes the decoder
    /// check the member the record ended in. A record that starts a member
    /// (per-record gzip) is held to that member's end even when more data
    /// follows it in the member, as far as the buffer reaches: a member
    /// that inflates to wrong data fails only at its CRC.
    pub(crate) fn record_damage(&mut self, start: Start) -> io::Result<Option<Break>> {
        if self.codec == Codec::Plain {
            return Ok(None);
        }
        let end = self.pos;
        let mut want = 1;
        loop {
            let avail = self.peek(want)?.len();
            if let Some(brk) = &self.pending {
                if brk.damaged_from >= end {
                    return Ok(None);
                }
                let rest = self.end - self.start;
                self.consume(rest);
                return Ok(self.pending.take());
            }
            let member_ended = self.starts.back().is_some_and(|&(p, _)| p >= end);
            if !start.at_member || member_ended || avail < want || want >= self.out.len() {
                return Ok(None);
            }
            want = (avail + 1).max(want.saturating_mul(2)).min(self.out.len());
        }
    }

    /// Reads through the next `\n`, appending the bytes to `out` while it is
    /// shorter than `keep` and dropping the rest.
    pub(crate) fn read_line(&mut self, out: &mut Vec<u8>, keep: usize) -> io::Result<Line> {
        self.read_line_covered(out, keep, &mut |_| Ok(()))
    }

    /// [`Source::read_line`], telling `cover` the length of `out` as it
    /// grows: it may wait for room in the memory budget, and its error
    /// stops the read ([`super::budget`]).
    pub(crate) fn read_line_covered(
        &mut self,
        out: &mut Vec<u8>,
        keep: usize,
        cover: &mut dyn FnMut(u64) -> io::Result<()>,
    ) -> io::Result<Line> {
        let mut len = 0u64;
        loop {
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                return Ok(Line { len, complete: false });
            }
            let (take, complete) = match find_byte(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = keep.saturating_sub(out.len());
            out.extend_from_slice(buf.get(..take.min(room)).unwrap_or_default());
            self.consume(take);
            len += take as u64;
            if complete {
                return Ok(Line { len, complete: true });
            }
            cover(out.len() as u64)?;
        }
    }

    /// Consumes through the next `\n`, stopping early at the start of a gzip
    /// member: members are places where a record may start. `seen` is shown
    /// the bytes as they go. Returns the bytes consumed, 0 only at the end of
    /// input or at a break.
    pub(crate) fn skip_line(&mut self, mut seen: impl FnMut(&[u8])) -> io::Result<u64> {
        let mut len = 0u64;
        loop {
            let Some(limit) = self.member_limit(len > 0)? else {
                return Ok(len);
            };
            let buf = self.fill_buf()?;
            let buf = match limit {
                Some(limit) if limit < buf.len() => buf.get(..limit).unwrap_or_default(),
                _ => buf,
            };
            let (take, complete) = match find_byte(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), limit.is_some_and(|l| l == buf.len())),
            };
            seen(buf.get(..take).unwrap_or_default());
            self.consume(take);
            len += take as u64;
            if complete {
                return Ok(len);
            }
        }
    }

    /// Consumes whole lines up to the start of the next line that begins
    /// with `first` (a line start here counts too), showing `seen` the
    /// bytes as they go; with `at_members`, stops at the start of a gzip or
    /// zstd member as well, as [`Source::skip_line`] does. The position
    /// must be at the start of a line (or of a member). The returned line
    /// is complete when it stopped before such a line or member, not at
    /// the end of the data (or a break).
    ///
    /// Readers that look for a marker line (a page-feed separator) call
    /// this between lines that might be one: it finds the candidates with
    /// one `memmem` search a buffer instead of a look and a call a line:
    /// the page-feed fuzz corpus (inputs that inflate to megabytes of short
    /// lines) ran in 1.5 s instead of 65 s, and the fingerprint stage on a
    /// real page feed (82,502 pages) took 0.94x the time.
    pub(crate) fn skip_to_line_starting(
        &mut self,
        first: u8,
        at_members: bool,
        mut seen: impl FnMut(&[u8]),
    ) -> io::Result<Line> {
        let needle = [b'\n', first];
        let mut len = 0u64;
        let mut line_start = true;
        loop {
            let limit = if at_members {
                match self.member_limit(len > 0)? {
                    Some(limit) => limit,
                    None => return Ok(Line { len, complete: !self.fill_buf()?.is_empty() }),
                }
            } else {
                None
            };
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                return Ok(Line { len, complete: false });
            }
            if line_start && buf.first() == Some(&first) {
                return Ok(Line { len, complete: true });
            }
            let (buf, at_member) = match limit {
                Some(limit) if limit <= buf.len() => (buf.get(..limit).unwrap_or_default(), true),
                _ => (buf, false),
            };
            let (take, complete) = match memchr::memmem::find(buf, &needle) {
                Some(i) => (i + 1, true),
                None => (buf.len(), at_member),
            };
            line_start = buf.get(..take).is_some_and(|b| b.ends_with(b"\n"));
            seen(buf.get(..take).unwrap_or_default());
            self.consume(take);
            len += take as u64;
            if complete {
                return Ok(Line { len, complete: true });
            }
        }
    }

    /// For readers that stop at member starts: `None` at the end of the
    /// data, or at a member start once `moved` past the first byte;
    /// otherwise how far the next member start lies in the buffer, if it
    /// does. The buffer is filled first, since a member's start is known
    /// only once its first bytes are decompressed: a line that reaches the
    /// end of a buffer at the end of a member would otherwise run on into
    /// the next one.
    fn member_limit(&mut self, moved: bool) -> io::Result<Option<Option<usize>>> {
        if self.fill_buf()?.is_empty() || (moved && self.member_start_at(self.pos).is_some()) {
            return Ok(None);
        }
        Ok(Some(self.to_next_member()))
    }

    /// Consumes a UTF-8 byte order mark at the start of the input, if there
    /// is one: editors put it in front of text files.
    pub(crate) fn skip_bom(&mut self) -> io::Result<()> {
        if self.pos == 0 && self.peek(3)?.starts_with(b"\xef\xbb\xbf") {
            self.consume(3);
        }
        Ok(())
    }

    /// Consumes `n` bytes, appending them to `out` if given. Returns how
    /// many were consumed: fewer than `n` at the end of input or at a break.
    pub(crate) fn read_exact(&mut self, n: u64, mut out: Option<&mut Vec<u8>>) -> io::Result<u64> {
        let mut done = 0u64;
        while done < n {
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let want = usize::try_from(n - done).unwrap_or(usize::MAX);
            let take = want.min(buf.len());
            if let Some(out) = out.as_deref_mut() {
                out.extend_from_slice(buf.get(..take).unwrap_or_default());
            }
            self.consume(take);
            done += take as u64;
        }
        Ok(done)
    }

    /// Like [`Source::read_exact`] for the block of a record that starts a
    /// gzip member (`start.at_member`), but stops at the start of the next
    /// member when `record_start` says its first bytes begin a record:
    /// with one member per record, a length that runs into the next record
    /// is a lie, and believing it would swallow the records after it.
    /// Returns the bytes consumed and whether it stopped there. (Members
    /// cut at fixed sizes, as BGZF does, rarely start with a record, and
    /// reading goes on through them.)
    pub(crate) fn read_in_member(
        &mut self,
        n: u64,
        mut out: Option<&mut Vec<u8>>,
        start: Start,
        record_start: impl Fn(&[u8]) -> bool,
    ) -> io::Result<(u64, bool)> {
        if self.codec == Codec::Plain || !start.at_member {
            return Ok((self.read_exact(n, out)?, false));
        }
        let mut done = 0u64;
        while done < n {
            let avail = self.fill_buf()?.len();
            if avail == 0 {
                return Ok((done, false));
            }
            if done > 0 && self.member_start_at(self.pos).is_some() {
                break;
            }
            let want = usize::try_from(n - done).unwrap_or(usize::MAX).min(avail);
            let take = self.to_next_member().map_or(want, |limit| want.min(limit));
            let got = self.read_exact(take as u64, out.as_deref_mut())?;
            done += got;
            if got < take as u64 {
                return Ok((done, false));
            }
        }
        if done < n && record_start(self.peek(64)?) {
            return Ok((done, true));
        }
        let rest = self.read_exact(n - done, out)?;
        Ok((done + rest, false))
    }

    /// Decompressed bytes produced so far (consumed or buffered).
    fn produced(&self) -> u64 {
        self.pos + (self.end - self.start) as u64
    }

    /// Decompresses more data onto the end of `out` (which must have room).
    /// Returns false when no more comes: end of input, or a break.
    fn produce(&mut self) -> io::Result<bool> {
        loop {
            if self.pending.is_some() {
                return Ok(false);
            }
            match self.state {
                State::Done => return Ok(false),
                State::Between => self.begin_member()?,
                State::Member => {
                    let mut room = self.out.len() - self.end;
                    let into_member = self.produced() - self.member_pos;
                    if self.frugal && into_member < FRUGAL_BYTES {
                        // 2 KiB at a time: a WARC record's header and its
                        // HTTP header mostly fit in the first.
                        room = room.min(2048);
                    }
                    let room = self.out.get_mut(self.end..self.end + room).unwrap_or_default();
                    if room.is_empty() {
                        return Ok(false);
                    }
                    if let Some(frames) = &mut self.frames {
                        let counting = self.dec.get_mut();
                        let input = counting.fill()?;
                        let at_end = input.is_empty();
                        let room_len = room.len();
                        let result = frames.decode(input, room);
                        match result {
                            Ok(status) => {
                                counting.consume(status.bytes_read);
                                self.end += status.bytes_written;
                                if status.remaining == 0 {
                                    counting.stop_recording();
                                    self.state = State::Between;
                                } else if at_end && status.bytes_written < room_len {
                                    // No input left, and the decoder had
                                    // room for more: the frame is cut off.
                                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "frame cut off");
                                    self.member_failed(e)?;
                                }
                                if status.bytes_written > 0 {
                                    return Ok(true);
                                }
                            }
                            Err(e) => self.member_failed(e)?,
                        }
                        continue;
                    }
                    // A member that starts here, whole in the input buffer
                    // and fitting in the room, is inflated in one call; any
                    // other is streamed (see `inflate`).
                    if let Some(whole) = &mut self.whole
                        && !self.frugal
                        && into_member == 0
                    {
                        let counting = self.dec.get_mut();
                        if let Ok(input) = counting.fill()
                            && let Some((used, made)) = whole.member(input, room)
                        {
                            counting.stop_recording();
                            counting.consume(used);
                            self.end += made;
                            self.state = State::Between;
                            if made > 0 {
                                return Ok(true);
                            }
                            continue;
                        }
                    }
                    match self.dec.read(room) {
                        Ok(0) => {
                            self.dec.get_mut().stop_recording();
                            self.state = State::Between;
                        }
                        Ok(n) => {
                            self.end += n;
                            return Ok(true);
                        }
                        Err(e) => self.member_failed(e)?,
                    }
                }
            }
        }
    }

    /// Starts the next member, or makes a break of bytes that are not one.
    fn begin_member(&mut self) -> io::Result<()> {
        let produced = self.produced();
        let zstd = self.codec == Codec::Zstd;
        let counting = self.dec.get_mut();
        let head = counting.peek(if zstd { 8 } else { 2 })?;
        if head.is_empty() {
            self.state = State::Done;
            return Ok(());
        }
        // A magic cut off at the very end is a truncated member: let the
        // decoder say so.
        let starts = if zstd {
            head.starts_with(&zst::FRAME_MAGIC) || (head.len() < 4 && zst::FRAME_MAGIC.starts_with(head))
        } else {
            head.starts_with(&GZIP_MAGIC) || head == [GZIP_MAGIC[0]]
        };
        if starts {
            let offset = counting.pos;
            counting.start_recording();
            self.member_offset = offset;
            self.member_pos = produced;
            // An empty member starts where the next one does: the data there
            // belongs to the later one.
            if self.starts.back().is_some_and(|&(p, _)| p == produced) {
                self.starts.pop_back();
            }
            self.starts.push_back((produced, offset));
            match &mut self.frames {
                Some(frames) => frames.start_frame()?,
                None => {
                    let counting = mem::replace(self.dec.get_mut(), Counting::empty());
                    self.dec.reset(counting);
                }
            }
            self.state = State::Member;
            return Ok(());
        }
        if zstd && let Some((kind, size)) = zst::skippable(head) {
            return self.skippable_frame(kind, size);
        }
        let offset = counting.pos;
        let resumed = self.resync()?;
        let end = resumed.unwrap_or(self.dec.get_ref().pos);
        self.pending = Some(Break {
            offset,
            reason: self.codec.corrupt(),
            detail: format!(
                "{} bytes that are not {}{}",
                end - offset,
                self.codec.data(),
                resume_note(self.codec, resumed)
            ),
            damaged_from: produced,
        });
        Ok(())
    }

    /// Reads a zstd skippable frame, whose header is next: the dictionary
    /// frame (`kind` 0xd) gives the dictionary for the frames after it,
    /// others are passed over. One that is cut off, or a dictionary that is
    /// too large or not a dictionary, is a break that loses no record.
    fn skippable_frame(&mut self, kind: u8, size: u32) -> io::Result<()> {
        let produced = self.produced();
        let counting = self.dec.get_mut();
        let offset = counting.pos;
        let dictionary = kind == 0xd;
        let too_large = dictionary && size > zst::MAX_DICT;
        let problem = {
            counting.consume(8);
            let mut data = Vec::new();
            let mut left = u64::from(size);
            while left > 0 {
                let buf = counting.fill()?;
                if buf.is_empty() {
                    break;
                }
                let take = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                if dictionary && !too_large {
                    data.extend_from_slice(buf.get(..take).unwrap_or_default());
                }
                counting.consume(take);
                left -= take as u64;
            }
            match (&mut self.frames, left) {
                (_, 1..) => {
                    let what = if dictionary { "dictionary frame" } else { "skippable frame" };
                    Some(format!("{what} at offset {offset} cut off at end of input"))
                }
                (_, 0) if too_large => Some(format!(
                    "dictionary frame of {size} bytes, over the {} MiB read",
                    zst::MAX_DICT >> 20
                )),
                (Some(frames), 0) if dictionary => frames
                    .load_dictionary(&data)
                    .err()
                    .map(|why| format!("dictionary frame that is not usable: {why}")),
                _ => None,
            }
        };
        if let Some(detail) = problem {
            self.pending =
                Some(Break { offset, reason: SkipReason::CorruptZstd, detail, damaged_from: produced });
        }
        Ok(())
    }

    /// Handles an error from the decoder: a real I/O error stops the input;
    /// damaged data becomes a break.
    fn member_failed(&mut self, e: io::Error) -> io::Result<()> {
        let produced = self.produced();
        let counting = self.dec.get_mut();
        counting.stop_recording_keep();
        if counting.io_failed {
            return Err(e);
        }
        // Even an unexpected end of input is rescanned: a damaged member can
        // make the inflater read on through the members after it.
        counting.rewind(self.member_offset + 1);
        // A decoder that fails on the header (a zstd frame that needs
        // another dictionary) may not have consumed a byte of it: step
        // past the member's first byte so that the scan finds the next.
        if counting.pos == self.member_offset {
            counting.consume(1);
        }
        let resumed = self.resync()?;
        let truncated = e.kind() == io::ErrorKind::UnexpectedEof && resumed.is_none();
        // What a cut-off member delivered is right, as far as it goes; data
        // from a member that fails to inflate or to check is suspect from the
        // member's start.
        let member = self.codec.member();
        let (reason, detail, damaged_from) = if truncated {
            let detail = format!("{member} at offset {} cut off at end of input", self.member_offset);
            (SkipReason::TruncatedRecord, detail, produced)
        } else {
            let detail = format!("{member} does not decompress ({e}){}", resume_note(self.codec, resumed));
            (self.codec.corrupt(), detail, self.member_pos)
        };
        self.pending = Some(Break { offset: self.member_offset, reason, detail, damaged_from });
        Ok(())
    }

    /// Leaves the rest of the member that the record at `start` begins
    /// compressed, and goes on at the next member, when that is safe: the
    /// member is the one being inflated and is not inflated as far as the
    /// record's smallest size yet (so the inflater is inside its deflate
    /// data), and the first gzip member header after it, within
    /// [`SKIP_SCAN_MAX`] compressed bytes (or the end of the input), follows
    /// a trailer that says the member holds a size in `sizes` (the
    /// record's, as its header gives it: ISIZE, modulo 2^32). Members cannot
    /// be passed over: the first header found is the member's end, so a
    /// member that holds more than this record, or a header that is a
    /// chance `1f 8b 08` in compressed data, fails the size and nothing is
    /// skipped. Returns whether it skipped; otherwise nothing is consumed.
    /// The skipped bytes are not checked against the member's CRC: damage
    /// in them goes unseen.
    pub(crate) fn skip_member(
        &mut self,
        start: Start,
        sizes: std::ops::RangeInclusive<u64>,
    ) -> io::Result<bool> {
        let this_member = self.member_offset == start.offset && self.member_pos == start.pos;
        let later_member = self.starts.back().is_some_and(|&(p, _)| p > self.member_pos);
        if self.codec != Codec::Gzip
            || !start.at_member
            || self.pending.is_some()
            || self.state != State::Member
        {
            return Ok(false);
        }
        if !this_member || later_member || self.produced() - self.member_pos >= *sizes.start() {
            return Ok(false);
        }
        let counting = self.dec.get_mut();
        let mut window = 64 << 10;
        let end = loop {
            let buf = counting.peek(window)?;
            let ended = buf.len() < window;
            // The first plausible header; one too near the window's end to
            // tell needs a larger window.
            let mut header = None;
            for j in memchr::memmem::find_iter(buf.get(8..).unwrap_or_default(), &GZIP_START) {
                let i = j + 8;
                if !ended && i + 10 > buf.len() {
                    break;
                }
                if plausible_member_header(&buf[i..]) {
                    header = Some(i);
                    break;
                }
            }
            match (header, ended) {
                (Some(i), _) => break Some(i),
                (None, true) => break (buf.len() >= 8).then_some(buf.len()),
                (None, false) if window >= SKIP_SCAN_MAX => break None,
                (None, false) => window *= 2,
            }
        };
        let Some(end) = end else { return Ok(false) };
        let buf = counting.peek(end)?;
        let isize = u32::from_le_bytes([buf[end - 4], buf[end - 3], buf[end - 2], buf[end - 1]]);
        let Some(size) = sizes.clone().find(|&s| s as u32 == isize) else { return Ok(false) };
        counting.stop_recording();
        counting.consume(end);
        // What is buffered is this member's data from `pos` on: dropped, and
        // the position moves to where the member's data ends.
        self.start = 0;
        self.end = 0;
        self.pos = self.member_pos + size;
        self.state = State::Between;
        Ok(true)
    }

    /// Scans the compressed input for the next plausible member header (for
    /// zstd, a frame or skippable frame header) and stops in front of it.
    /// Returns its offset, or `None` at the end of the input.
    fn resync(&mut self) -> io::Result<Option<u64>> {
        type Plausible = fn(&[u8]) -> bool;
        let (first, header_len, plausible): (u8, usize, Plausible) = match self.codec {
            Codec::Zstd => (zst::FRAME_MAGIC[0], 8, zst::plausible_frame_header),
            Codec::Plain | Codec::Gzip => (GZIP_MAGIC[0], 10, plausible_member_header),
        };
        let counting = self.dec.get_mut();
        loop {
            let buf = counting.fill()?;
            if buf.is_empty() {
                self.state = State::Done;
                return Ok(None);
            }
            // A zstd skippable frame starts with 0x5?, so zstd looks for
            // both first bytes.
            let found = match self.codec {
                Codec::Zstd => buf.iter().position(|&b| b == first || b & 0xf0 == 0x50),
                Codec::Plain | Codec::Gzip => find_byte(first, buf),
            };
            let Some(i) = found else {
                let n = buf.len();
                counting.consume(n);
                continue;
            };
            counting.consume(i);
            if plausible(counting.peek(header_len)?) {
                self.state = State::Between;
                return Ok(Some(counting.pos));
            }
            counting.consume(1);
        }
    }
}

/// Where reading goes on after damage, for break details.
fn resume_note(codec: Codec, resumed: Option<u64>) -> String {
    let member = codec.member();
    match resumed {
        Some(offset) => format!("; reading resumes at the {member} at offset {offset}"),
        None => format!("; no {member} follows"),
    }
}

/// Whether `head` looks like the start of a gzip member, not a chance
/// `1f 8b 08` inside compressed data: no reserved flag bits, and the extra
/// flags and operating system bytes that compressors write.
pub(crate) fn plausible_member_header(head: &[u8]) -> bool {
    let &[0x1f, 0x8b, 0x08, flags, _, _, _, _, xfl, os, ..] = head else {
        return false;
    };
    flags & 0xe0 == 0 && matches!(xfl, 0 | 2 | 4) && (os <= 13 || os == 255)
}

/// The position of the first `byte` in `hay`, 16 bytes at a time: lines
/// and members are found by searching large buffers for one byte.
pub(crate) use crate::bytes::scan::byteclass::find_byte;

/// A reader over the raw input that counts consumed bytes (the compressed
/// offset), can look a few bytes ahead across its inner buffer's boundary,
/// and can keep the bytes of the current member to scan them again.
struct Counting {
    inner: Box<dyn BufRead + Send>,
    /// Bytes taken from `inner` but not yet consumed: `ahead[ahead_pos..]`.
    /// Read before `inner`.
    ahead: Vec<u8>,
    ahead_pos: usize,
    /// Bytes consumed.
    pos: u64,
    /// Consumed bytes since `start_recording`, while `recording`.
    history: Vec<u8>,
    recording: bool,
    /// Set when `inner` returned an error, so that the decoder's errors can
    /// be told apart: an I/O error stops the input, bad data does not.
    io_failed: bool,
}

impl Counting {
    fn new(inner: Box<dyn BufRead + Send>) -> Counting {
        Counting {
            inner,
            ahead: Vec::new(),
            ahead_pos: 0,
            pos: 0,
            history: Vec::new(),
            recording: false,
            io_failed: false,
        }
    }

    fn empty() -> Counting {
        Counting::new(Box::new(io::empty()))
    }

    /// The inner reader's buffer.
    fn fill_inner(&mut self) -> io::Result<&[u8]> {
        fill_retrying(&mut self.inner, &mut self.io_failed)
    }

    fn fill(&mut self) -> io::Result<&[u8]> {
        if self.ahead_pos < self.ahead.len() {
            return Ok(self.ahead.get(self.ahead_pos..).unwrap_or_default());
        }
        self.fill_inner()
    }

    fn consume(&mut self, n: usize) {
        if self.ahead_pos < self.ahead.len() {
            let n = n.min(self.ahead.len() - self.ahead_pos);
            if self.recording {
                let taken = self.ahead.get(self.ahead_pos..self.ahead_pos + n).unwrap_or_default();
                record(&mut self.history, &mut self.recording, taken);
            }
            self.ahead_pos += n;
            if self.ahead_pos == self.ahead.len() {
                self.ahead.clear();
                self.ahead_pos = 0;
            }
            self.pos += n as u64;
            return;
        }
        if self.recording {
            match self.inner.fill_buf() {
                Ok(buf) => record(&mut self.history, &mut self.recording, buf.get(..n).unwrap_or(buf)),
                Err(_) => self.stop_recording(),
            }
        }
        self.inner.consume(n);
        self.pos += n as u64;
    }

    /// At least `n` bytes, unless the input ends sooner, gathered into
    /// `ahead` when the inner buffer holds fewer.
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        let have = self.fill()?.len();
        if have >= n || have == 0 {
            return self.fill();
        }
        if self.ahead_pos < self.ahead.len() {
            self.ahead.drain(..self.ahead_pos);
        } else {
            self.ahead.clear();
        }
        self.ahead_pos = 0;
        while self.ahead.len() < n {
            let buf = fill_retrying(&mut self.inner, &mut self.io_failed)?;
            if buf.is_empty() {
                break;
            }
            let take = buf.len().min(n - self.ahead.len());
            self.ahead.extend_from_slice(buf.get(..take).unwrap_or_default());
            self.inner.consume(take);
        }
        Ok(&self.ahead)
    }

    /// Puts consumed bytes back in front of what is not yet consumed.
    fn give_back(&mut self, bytes: &[u8]) {
        let mut ahead = Vec::with_capacity(bytes.len() + self.ahead.len() - self.ahead_pos);
        ahead.extend_from_slice(bytes);
        ahead.extend_from_slice(self.ahead.get(self.ahead_pos..).unwrap_or_default());
        self.ahead = ahead;
        self.ahead_pos = 0;
        self.pos -= bytes.len() as u64;
    }

    fn start_recording(&mut self) {
        self.history.clear();
        self.recording = true;
    }

    fn stop_recording(&mut self) {
        self.history.clear();
        self.recording = false;
    }

    /// Stops recording but keeps what was recorded, for [`Counting::rewind`].
    fn stop_recording_keep(&mut self) {
        self.recording = false;
    }

    /// Goes back to compressed offset `to`, if the bytes from there on were
    /// recorded; otherwise stays where it is. Either way recording ends.
    fn rewind(&mut self, to: u64) {
        let recorded_from = self.pos - self.history.len() as u64;
        if (recorded_from..=self.pos).contains(&to) {
            let skip = usize::try_from(to - recorded_from).unwrap_or(usize::MAX);
            let mut ahead = self.history.split_off(skip.min(self.history.len()));
            ahead.extend_from_slice(self.ahead.get(self.ahead_pos..).unwrap_or_default());
            self.ahead = ahead;
            self.ahead_pos = 0;
            self.pos = to;
        }
        self.stop_recording();
    }
}

/// The buffer of `inner`, retrying interrupted reads and noting real I/O
/// errors in `failed`.
fn fill_retrying<'a>(inner: &'a mut Box<dyn BufRead + Send>, failed: &mut bool) -> io::Result<&'a [u8]> {
    loop {
        match inner.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                *failed = true;
                return Err(e);
            }
        }
    }
    // The buffer is filled now (or the input ended): this call does no I/O
    // unless the input ended.
    match inner.fill_buf() {
        Ok(buf) => Ok(buf),
        Err(e) => {
            *failed = true;
            Err(e)
        }
    }
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let data = self.fill()?;
        let n = data.len().min(buf.len());
        buf.get_mut(..n).unwrap_or_default().copy_from_slice(data.get(..n).unwrap_or_default());
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Counting {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.fill()
    }

    fn consume(&mut self, n: usize) {
        Counting::consume(self, n);
    }
}

/// Appends consumed bytes to the history, giving up past [`HISTORY_MAX`].
fn record(history: &mut Vec<u8>, recording: &mut bool, taken: &[u8]) {
    if history.len() + taken.len() > HISTORY_MAX {
        history.clear();
        *recording = false;
    } else {
        history.extend_from_slice(taken);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Trickle;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::{Cursor, Write};

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn source(data: Vec<u8>) -> Source {
        Source::new(Box::new(Cursor::new(data))).unwrap()
    }

    /// A record of `len` bytes that compresses poorly, starting `WARC/`.
    fn record(tag: u8, len: usize) -> Vec<u8> {
        let mut x = u64::from(tag) * 0x9e37_79b9 + 1;
        let mut r = b"WARC/1.1\r\n".to_vec();
        while r.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r.push(b'a' + (x % 26) as u8);
        }
        r
    }

    /// Reads a little of the record at the current position (as a reader
    /// reads its headers) and asks to skip the rest of its member.
    fn skip_after_headers(src: &mut Source, sizes: std::ops::RangeInclusive<u64>) -> bool {
        assert!(src.peek(100).unwrap().starts_with(b"WARC/"));
        let start = src.start_here();
        src.consume(100);
        src.skip_member(start, sizes).unwrap()
    }

    #[test]
    fn a_per_record_member_is_skipped_to_the_next_record() {
        let (a, b, c) = (record(1, 20_000), record(2, 9_000), record(3, 30_000));
        let data = [gz(&a), gz(&b), gz(&c)].concat();
        let mut src = source(data);
        src.frugal();
        assert!(skip_after_headers(&mut src, 20_000..=20_004));
        // The next member is read whole, and positions go on as if read.
        src.peek(1).unwrap();
        let start = src.start_here();
        assert_eq!(start.offset, gz(&a).len() as u64);
        assert_eq!(start.pos, 20_000);
        let mut got = Vec::new();
        assert_eq!(src.read_exact(b.len() as u64, Some(&mut got)).unwrap(), b.len() as u64);
        assert_eq!(got, b);
        // The last member is skipped to the end of the input.
        assert!(skip_after_headers(&mut src, 30_000..=30_004));
        assert!(src.fill_buf().unwrap().is_empty());
        assert!(src.take_break().is_none());
    }

    #[test]
    fn a_member_is_not_skipped_when_it_holds_more_or_another_size() {
        let (a, b, c) = (record(1, 20_000), record(2, 20_000), record(3, 20_000));
        // One member holds a and b: its trailer says 40,000.
        let data = [gz(&[a.clone(), b.clone()].concat()), gz(&c)].concat();
        let mut src = source(data.clone());
        src.frugal();
        assert!(!skip_after_headers(&mut src, 20_000..=20_004));
        let mut got = Vec::new();
        src.read_exact(40_000 - 100, Some(&mut got)).unwrap();
        assert_eq!(got, [a.clone(), b].concat()[100..]);
        // A header that says another size is not believed either.
        let mut src = source([gz(&a), gz(&c)].concat());
        src.frugal();
        assert!(!skip_after_headers(&mut src, 19_000..=19_004));
        let mut got = Vec::new();
        src.read_exact(40_000 - 100, Some(&mut got)).unwrap();
        assert_eq!(got, [a.clone(), c][..].concat()[100..]);
        // A small record, inflated whole already, is read, not skipped.
        let small = record(4, 1_000);
        let mut src = source([gz(&small), gz(&a)].concat());
        src.frugal();
        assert!(!skip_after_headers(&mut src, 1_000..=1_004));
    }

    /// Everything a source delivers, as segments between breaks, and the
    /// breaks.
    fn drain(src: &mut Source) -> (Vec<Vec<u8>>, Vec<Break>) {
        let mut segments = vec![Vec::new()];
        let mut breaks = Vec::new();
        loop {
            let buf = src.fill_buf().unwrap();
            if buf.is_empty() {
                match src.take_break() {
                    Some(b) => {
                        breaks.push(b);
                        segments.push(Vec::new());
                        continue;
                    }
                    None => break,
                }
            }
            let n = buf.len();
            segments.last_mut().unwrap().extend_from_slice(buf);
            src.consume(n);
        }
        (segments, breaks)
    }

    #[test]
    fn find_byte_agrees_with_a_plain_search() {
        let hay: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..hay.len() {
            for byte in [0u8, 10, 37, 74, 255, 0x80, 0x7f] {
                let want = hay[..len].iter().position(|&b| b == byte);
                assert_eq!(find_byte(byte, &hay[..len]), want, "len {len} byte {byte}");
            }
        }
    }

    #[test]
    fn plain_input_passes_through() {
        let mut src = source(b"hello\nworld\n".to_vec());
        assert!(!src.is_gzip());
        assert_eq!(src.peek(3).unwrap(), b"hello\nworld\n");
        let (segments, breaks) = drain(&mut src);
        assert_eq!(segments, vec![b"hello\nworld\n".to_vec()]);
        assert!(breaks.is_empty());
        assert_eq!(src.pos(), 12);
        assert_eq!(src.member_start_at(0), None);
    }

    #[test]
    fn empty_input_is_plain_and_empty() {
        let mut src = source(Vec::new());
        assert!(!src.is_gzip());
        assert_eq!(drain(&mut src), (vec![Vec::new()], Vec::new()));
    }

    #[test]
    fn members_are_decompressed_in_order_with_their_offsets() {
        let a = gz(b"first member\n");
        let b = gz(b"");
        let c = gz(b"third\n");
        let mut data = a.clone();
        data.extend_from_slice(&b);
        data.extend_from_slice(&c);
        let mut src = source(data);
        assert!(src.is_gzip());
        assert_eq!(src.member_start_at(0), None, "nothing decompressed yet");
        assert_eq!(src.peek(1).unwrap()[0], b'f');
        assert_eq!(src.member_start_at(0), Some(0));
        let mut line = Vec::new();
        src.read_line(&mut line, usize::MAX).unwrap();
        assert_eq!(line, b"first member\n");
        assert_eq!(src.peek(1).unwrap(), b"third\n");
        // The empty member starts where the third does; the data is the third's.
        assert_eq!(src.member_start_at(13), Some((a.len() + b.len()) as u64));
        let (segments, breaks) = drain(&mut src);
        assert_eq!(segments, vec![b"third\n".to_vec()]);
        assert!(breaks.is_empty());
    }

    #[test]
    fn corrupt_member_is_a_break_and_reading_resumes_at_the_next() {
        let a = gz(b"alpha alpha alpha alpha alpha alpha alpha alpha\n");
        let text: Vec<u8> =
            (0..2000u32).flat_map(|i| format!("line {i} of the damaged member\n").into_bytes()).collect();
        let mut b = gz(&text);
        let c = gz(b"gamma\n");
        let mid = b.len() / 2;
        for x in &mut b[mid..mid + 16] {
            *x ^= 0x5a;
        }
        let mut data = a.clone();
        data.extend_from_slice(&b);
        data.extend_from_slice(&c);
        let mut src = source(data);
        let (segments, breaks) = drain(&mut src);
        assert_eq!(breaks.len(), 1, "{breaks:?}");
        let brk = &breaks[0];
        assert_eq!(brk.offset, a.len() as u64);
        assert_eq!(brk.reason, SkipReason::CorruptGzip);
        assert_eq!(brk.damaged_from, 48);
        assert!(brk.detail.contains(&format!("offset {}", a.len() + b.len())), "{}", brk.detail);
        assert!(segments[0].starts_with(b"alpha"));
        assert_eq!(segments[1], b"gamma\n");
    }

    #[test]
    fn crc_error_is_a_break_that_reaches_back_to_the_member_start() {
        let a = gz(b"one\n");
        let mut b = gz(b"two\n");
        let n = b.len();
        b[n - 8] ^= 1; // CRC
        let c = gz(b"three\n");
        let data = [a.clone(), b.clone(), c].concat();
        let mut src = source(data);
        let mut line = Vec::new();
        src.peek(1).unwrap();
        let first = src.start_here();
        src.read_line(&mut line, 100).unwrap();
        assert_eq!(src.record_damage(first).unwrap(), None);
        line.clear();
        let second = src.start_here();
        assert_eq!(second, Start { pos: 4, offset: a.len() as u64, at_member: true });
        src.read_line(&mut line, 100).unwrap();
        assert_eq!(line, b"two\n");
        let brk = src.record_damage(second).unwrap().expect("the CRC of the second member fails");
        assert_eq!(brk.offset, a.len() as u64);
        assert_eq!(brk.damaged_from, 4);
        let (segments, _) = drain(&mut src);
        assert_eq!(segments, vec![b"three\n".to_vec()]);
    }

    #[test]
    fn record_that_starts_a_member_is_held_to_the_member_end() {
        let a = gz(b"record\nmore data in the member\n");
        let mut b = gz(b"record\ntrailing\n");
        let n = b.len();
        b[n - 8] ^= 1; // CRC
        let c = gz(b"next\n");
        // Undamaged: the member ends after more data.
        let mut src = source([a.clone(), c.clone()].concat());
        src.peek(1).unwrap();
        let start = src.start_here();
        src.read_line(&mut Vec::new(), 100).unwrap();
        assert_eq!(src.record_damage(start).unwrap(), None);
        assert!(src.fill_buf().unwrap().starts_with(b"more data in the member\n"));
        // Damaged: the record is lost with the rest of its member.
        let mut src = source([b, c].concat());
        src.peek(1).unwrap();
        let start = src.start_here();
        src.read_line(&mut Vec::new(), 100).unwrap();
        let brk = src.record_damage(start).unwrap().expect("damaged");
        assert_eq!((brk.offset, brk.damaged_from), (0, 0));
        assert_eq!(src.fill_buf().unwrap(), b"next\n");
    }

    #[test]
    fn inflater_that_runs_into_the_next_member_is_rescanned() {
        // A stored block whose length field claims more than the member has
        // makes the decoder read the next member's header as data.
        let a = gz(b"first\n");
        let mut b = gz(b"second member\n").to_vec();
        // Replace the deflate data with a stored block of length 60 (too long).
        let stored = [0x01u8, 60, 0, !60u8, 0xff];
        b.truncate(10);
        b.extend_from_slice(&stored);
        b.extend_from_slice(b"short");
        let c = gz(b"third\n");
        let d = gz(&[b'x'; 100]);
        let data = [a.clone(), b.clone(), c.clone(), d].concat();
        let mut src = source(data);
        let (segments, breaks) = drain(&mut src);
        assert_eq!(breaks.len(), 1, "{breaks:?}");
        assert_eq!(breaks[0].offset, a.len() as u64);
        // The damaged member's data comes out until the decoder fails.
        assert!(segments[0].starts_with(b"first\nshort"));
        assert!(segments[1].starts_with(b"third\n"), "{:?}", String::from_utf8_lossy(&segments[1]));
    }

    #[test]
    fn bytes_that_are_not_gzip_between_members_are_a_break() {
        let a = gz(b"one\n");
        let c = gz(b"two\n");
        let data = [a.clone(), b"junk junk".to_vec(), c.clone(), vec![0; 5]].concat();
        let mut src = source(data);
        let (segments, breaks) = drain(&mut src);
        assert_eq!(segments, vec![b"one\n".to_vec(), b"two\n".to_vec(), Vec::new()]);
        assert_eq!(breaks.len(), 2);
        assert_eq!(breaks[0].offset, a.len() as u64);
        assert_eq!(breaks[0].damaged_from, 4, "no delivered data damaged");
        assert!(breaks[0].detail.starts_with("9 bytes"), "{}", breaks[0].detail);
        assert_eq!(breaks[1].offset, (a.len() + 9 + c.len()) as u64);
        assert!(breaks[1].detail.contains("no gzip member follows"));
    }

    #[test]
    fn truncated_member_ends_the_input() {
        let a = gz(b"one\n");
        let b = gz(&vec![b'y'; 5000]);
        let data = [a.clone(), b[..b.len() - 3].to_vec()].concat();
        let mut src = source(data);
        let (segments, breaks) = drain(&mut src);
        assert_eq!(breaks.len(), 1);
        assert_eq!(breaks[0].reason, SkipReason::TruncatedRecord);
        assert_eq!(breaks[0].offset, a.len() as u64);
        assert_eq!(segments.len(), 2);
        assert!(segments[1].is_empty());
    }

    #[test]
    fn lone_magic_byte_at_the_end_is_a_truncated_member() {
        let a = gz(b"one\n");
        let mut src = source([a.clone(), vec![0x1f]].concat());
        let (_, breaks) = drain(&mut src);
        assert_eq!(breaks.len(), 1);
        assert_eq!(breaks[0].reason, SkipReason::TruncatedRecord);
        assert_eq!(breaks[0].offset, a.len() as u64);
    }

    #[test]
    fn damaged_gzip_starts_are_gzip_and_text_is_not() {
        let member = gz(b"WARC/1.0\r\n");
        assert!(starts_like_gzip(&member));
        for (i, x) in [(0, 0x01), (1, 0x40), (2, 0x80)] {
            let mut m = member.clone();
            m[i] ^= x;
            assert!(starts_like_gzip(&m), "byte {i}");
        }
        // A first member cut or garbled beyond its header, then a good one.
        let garbled = [b"{\x8b\x3c\x6c".as_slice(), &member].concat();
        assert!(binary_start(&garbled) && Source::new(Box::new(Cursor::new(garbled))).unwrap().is_gzip());
        for text in [
            b"WARC/1.0\r\nWARC-Type: x\r\n".as_slice(),
            b"{\"url\": \"http://example/\", \"text\": \"\x1f\x8b\x08\"}",
            b"\xef\xbb\xbf==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>",
            b"caf\xc3\xa9, then more text \x1f\x8b\x08",
            // Two of the three first bytes, but no header after them.
            b"\x1f\x0b\x08\n{\"url\": \"http://j/1\", \"text\": \"text 1\"}\n",
            b"",
        ] {
            assert!(!Source::new(Box::new(Cursor::new(text.to_vec()))).unwrap().is_gzip(), "{text:?}");
        }
    }

    #[test]
    fn peek_crosses_member_boundaries() {
        let data = [gz(b"ab"), gz(b"cd"), gz(b"ef")].concat();
        let mut src = source(data);
        assert_eq!(src.peek(5).unwrap(), b"abcdef");
        src.consume(3);
        assert_eq!(src.to_next_member(), Some(1));
        assert_eq!(src.fill_buf().unwrap(), b"def");
    }

    #[test]
    fn skip_line_stops_at_member_starts() {
        let data = [gz(b"garbage without newline "), gz(b"WARC/1.0\n")].concat();
        let mut src = source(data);
        src.peek(64).unwrap();
        assert_eq!(src.skip_line(|_| ()).unwrap(), 24);
        assert!(src.member_start_at(src.pos()).is_some());
        assert_eq!(src.skip_line(|_| ()).unwrap(), 9);
        assert_eq!(src.skip_line(|_| ()).unwrap(), 0);
    }

    #[test]
    fn read_line_keeps_at_most_keep_bytes() {
        let mut src = source(b"0123456789\nrest".to_vec());
        let mut out = Vec::new();
        let line = src.read_line(&mut out, 4).unwrap();
        assert_eq!(line, Line { len: 11, complete: true });
        assert_eq!(out, b"0123");
        out.clear();
        assert_eq!(src.read_line(&mut out, 100).unwrap(), Line { len: 4, complete: false });
        assert_eq!(out, b"rest");
    }

    #[test]
    fn read_exact_stops_at_the_end() {
        let mut src = source(b"abcdef".to_vec());
        let mut out = Vec::new();
        assert_eq!(src.read_exact(4, Some(&mut out)).unwrap(), 4);
        assert_eq!(src.read_exact(u64::MAX, None).unwrap(), 2);
        assert_eq!(out, b"abcd");
    }

    /// Per-record members of random text, some damaged, some with a header
    /// CRC (which the fast path leaves to the stream), some with bytes that
    /// are not gzip after them, the input sometimes cut: the source that
    /// inflates whole members gives the same data and the same breaks as
    /// one that streams every member.
    #[test]
    fn whole_member_inflation_changes_nothing() {
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = || rng.next_u64();
        let key = |b: &Vec<Break>| {
            b.iter().map(|b| (b.offset, b.reason, b.detail.clone(), b.damaged_from)).collect::<Vec<_>>()
        };
        let mut fast_members = 0;
        for case in 0..300 {
            let mut data = Vec::new();
            for _ in 0..1 + next() % 12 {
                let len = (next() % 6000) as usize;
                let salt = next();
                let text: Vec<u8> = (0..len)
                    .map(|i| b"abc de\nfgh 0123"[(i * 7 + (salt as usize >> (i % 32))) % 15])
                    .collect();
                let mut member = gz(&text);
                match next() % 8 {
                    0 => {
                        let at = 10 + (next() as usize % (member.len() - 10));
                        member[at] ^= 1 << (next() % 8);
                    }
                    1 => member.extend_from_slice(b"not gzip"),
                    2 => {
                        // A header CRC: the low 16 bits of the header's CRC-32.
                        member[3] |= 2;
                        let mut crc = flate2::Crc::new();
                        crc.update(&member[..10]);
                        let sum = (crc.sum() as u16).to_le_bytes();
                        member.splice(10..10, sum);
                    }
                    _ => fast_members += 1,
                }
                data.extend_from_slice(&member);
            }
            if next().is_multiple_of(4) {
                let cut = next() as usize % data.len();
                data.truncate(cut);
            }
            let (fast, fast_breaks) = drain(&mut source(data.clone()));
            let mut streaming = source(data);
            streaming.whole = None;
            let (slow, slow_breaks) = drain(&mut streaming);
            assert_eq!(key(&fast_breaks), key(&slow_breaks), "case {case}");
            assert_eq!(fast, slow, "case {case}");
        }
        assert!(fast_members > 500);
    }

    #[test]
    fn one_byte_buffers_give_the_same_result() {
        let a = gz(b"one\n");
        let mut bad = gz(&vec![b'z'; 3000]);
        let mid = bad.len() / 2;
        bad[mid] ^= 0xff;
        bad[mid + 1] ^= 0xff;
        let c = gz(b"three\n");
        let data = [a.clone(), bad, b"xx".to_vec(), c].concat();
        let (fast_segments, fast_breaks) = drain(&mut source(data.clone()));
        let (slow_segments, slow_breaks) = drain(&mut Source::new(Box::new(Trickle(data, 0))).unwrap());
        // How much of the damaged member comes out before the error depends
        // on how the input is cut; the rest does not.
        let key = |b: &Vec<Break>| b.iter().map(|b| (b.offset, b.reason)).collect::<Vec<_>>();
        assert_eq!(key(&fast_breaks), key(&slow_breaks));
        assert_eq!(fast_breaks.len(), 1);
        assert_eq!(fast_segments[1..], slow_segments[1..]);
        assert_eq!(fast_segments[1], b"three\n");
        assert!(fast_segments[0].starts_with(b"one\n") && slow_segments[0].starts_with(b"one\n"));
    }

    /// `skip_to_line_starting` stops where a line-by-line reader would
    /// first look at a line beginning with the byte (or at a member start,
    /// or at the end), and shows exactly the bytes it consumed: over plain
    /// input handed out a byte at a time and over gzip members of random
    /// lines, with and without stopping at members.
    #[test]
    fn skipping_to_a_line_start_stops_where_line_by_line_would() {
        let mut rng = crate::testing::XorShift::new(0x2545_f491_4f6c_dd1du64);
        let mut next = || rng.next_u64();
        for case in 0..400 {
            let len = (next() % 3000) as usize;
            let data: Vec<u8> = (0..len).map(|_| b"\n\n=ab\r"[(next() % 6) as usize]).collect();
            // Member starts at random cuts of non-empty parts; none for plain.
            let gzip = case % 2 == 1;
            let mut cuts: Vec<usize> = if gzip && len > 0 {
                (0..next() % 8).map(|_| next() as usize % len).collect()
            } else {
                vec![]
            };
            cuts.push(0);
            cuts.push(len);
            cuts.sort_unstable();
            cuts.dedup();
            let input: Vec<u8> = if gzip {
                cuts.windows(2).flat_map(|w| gz(&data[w[0]..w[1]])).collect()
            } else {
                data.clone()
            };
            let members: Vec<usize> = if gzip { cuts[..cuts.len() - 1].to_vec() } else { vec![] };
            let at_members = next().is_multiple_of(2);
            let mut src =
                if gzip { source(input) } else { Source::new(Box::new(Trickle(input, 0))).unwrap() };
            let mut cur = 0usize;
            loop {
                let stop = (cur..=len)
                    .find(|&p| {
                        p == len
                            || (p == cur && data[p] == b'=')
                            || (p > cur
                                && ((at_members && members.contains(&p))
                                    || (data[p - 1] == b'\n' && data[p] == b'=')))
                    })
                    .unwrap();
                let mut seen = Vec::new();
                let line =
                    src.skip_to_line_starting(b'=', at_members, |b| seen.extend_from_slice(b)).unwrap();
                assert_eq!(seen, &data[cur..stop], "case {case} from {cur}");
                assert_eq!(
                    line,
                    Line { len: (stop - cur) as u64, complete: stop < len },
                    "case {case} from {cur}"
                );
                assert_eq!(src.pos(), stop as u64);
                cur = stop;
                if cur == len {
                    break;
                }
                // On past the line that stopped it, as the readers do;
                // `skip_line` stops at the first member start too.
                let end = if at_members {
                    (cur + 1..=len)
                        .find(|&p| data[p - 1] == b'\n' || p == len || members.contains(&p))
                        .unwrap()
                } else {
                    data[cur..].iter().position(|&b| b == b'\n').map_or(len, |i| cur + i + 1)
                };
                let taken = if at_members {
                    src.skip_line(|_| ()).unwrap()
                } else {
                    src.read_line(&mut Vec::new(), 0).unwrap().len
                };
                assert_eq!(taken as usize, end - cur, "case {case}: the line from {cur}");
                cur = end;
            }
        }
    }

    /// An input that fails after some bytes.
    struct Failing(Cursor<Vec<u8>>);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::other("disk on fire")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn io_errors_are_errors_not_breaks() {
        let data = gz(&vec![b'q'; 10_000]);
        let cut = data[..data.len() / 2].to_vec();
        let mut src = Source::new(Box::new(io::BufReader::new(Failing(Cursor::new(cut))))).unwrap();
        let mut err = None;
        for _ in 0..100 {
            match src.fill_buf() {
                Ok([]) => break,
                Ok(buf) => {
                    let n = buf.len();
                    src.consume(n);
                }
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        assert_eq!(err.expect("an I/O error").to_string(), "disk on fire");
    }
}
