//! A record's block, read by the length its header claims, and the way back
//! when that length lies.
//!
//! WARC and ARC frame records by length alone. In per-record gzip a length
//! that runs into the next record is caught at the next gzip member
//! ([`Source::read_in_member`]); in plain or whole-file compressed input
//! nothing stops it, and a length that is too long by a few bytes would
//! swallow the start of the next record (and with it that record), one that
//! is too long by a billion all the records after it. So a block is read
//! with a lookout for the first line inside it that starts a record
//! ([`Lookout`]), and is checked where it ends: when the bytes after it do
//! not start a record (or the input ends inside it), and a record does
//! start inside it, the length lied. The reader then gives the bytes from
//! that record start back to the source ([`Source::give_back`]), reports
//! its own record as corrupt (its true length is not known), and reads on
//! from the record inside. A block whose length is right is read as before,
//! whatever it holds: a block that quotes a record (a WARC file served over
//! HTTP) is followed by a record end and the next record, and is never cut.
//!
//! What it costs: a block that is kept (a page) is searched only when its
//! end is wrong; a block that is read past (requests, metadata, records
//! over the limit) is scanned for a record start as it goes by, one
//! `memmem` search a buffer. The bytes from the first record start on are
//! kept to give back, up to the record limit (`--max-record-bytes`): when a
//! block runs on past that many bytes after a line that holds a whole
//! record header, its length is taken for a lie there and then, so that a
//! length of a billion costs a bounded amount of memory and loses only the
//! one record.

use std::io;

use super::gz::{Source, Start};
use super::records::LOOK;

/// How a format's record start is recognized inside a block.
pub(crate) struct Lookout<'a> {
    /// The bytes every record start begins with (empty: any line).
    pub(crate) prefix: &'a [u8],
    /// Whether a line starting with these bytes (at least [`LOOK`] of them
    /// unless the input ends sooner) may start a record: cheap, and asked
    /// of every line that begins with `prefix`.
    pub(crate) starts: &'a dyn Fn(&[u8]) -> bool,
    /// Whether bytes from a record start hold a whole record header that
    /// parses: asked of the few candidates `starts` lets through.
    pub(crate) confirms: &'a dyn Fn(&[u8]) -> bool,
}

/// A block as [`read`] left it.
pub(crate) struct Block {
    /// Bytes consumed: fewer than the length at the end of the data, at a
    /// break, or where a lying length was given up on.
    pub(crate) got: u64,
    /// Whether the gzip member the record starts ended first and the next
    /// one starts a record: the length lied, and nothing was consumed past
    /// the member (see [`Source::read_in_member`]).
    pub(crate) overran: bool,
    /// Whether the whole block was kept, so that a record start inside it
    /// is searched for in what was kept.
    whole: bool,
    /// For a block read past: the position in the block of the first line
    /// that may start a record, and the bytes from there to the end of
    /// what was consumed.
    tail: Option<(u64, Vec<u8>)>,
}

/// The block a record header claims.
#[derive(Clone, Copy)]
pub(crate) struct Claim {
    /// Its length, as the header says.
    pub(crate) len: u64,
    /// How many of its first bytes are kept.
    pub(crate) keep: u64,
    /// The record limit: how far past a record start inside the block a
    /// block that is read past may run before its length is taken for a
    /// lie.
    pub(crate) cap: u64,
}

/// Reads the block `claim` says of the record at `start`, appending its
/// kept bytes to `out`, with a lookout for a record start inside it (in
/// input that no member frames).
pub(crate) fn read(
    src: &mut Source,
    start: Start,
    claim: Claim,
    out: &mut Vec<u8>,
    look: &Lookout,
) -> io::Result<Block> {
    let Claim { len, keep, .. } = claim;
    let framed = start.at_member && src.is_compressed();
    if keep >= len {
        let (got, overran) = if framed {
            let starts = |b: &[u8]| b.starts_with(look.prefix) && (look.starts)(b);
            src.read_in_member(len, Some(out), start, starts)?
        } else {
            (src.read_exact(len, Some(out))?, false)
        };
        return Ok(Block { got, overran, whole: !overran, tail: None });
    }
    read_watching(src, framed, claim, out, look)
}

/// [`read`] of a block that is not wholly kept: watches what goes by.
fn read_watching(
    src: &mut Source,
    framed: bool,
    claim: Claim,
    out: &mut Vec<u8>,
    look: &Lookout,
) -> io::Result<Block> {
    let Claim { len, keep, cap } = claim;
    // At least a record header's worth, whatever the record limit.
    let cap = usize::try_from(cap).unwrap_or(usize::MAX).max(CAP_MIN);
    let needle = line_needle(look);
    let finder = memchr::memmem::Finder::new(&needle);
    let mut done = 0u64;
    let mut tail: Option<(u64, Vec<u8>)> = None;
    // Whether the position is at a line start: the block starts right
    // after its header's last line.
    let mut line_start = true;
    // Whether the record starts a gzip member whose end is still to come:
    // there, the next member starting with a record means the length lied
    // (as in `Source::read_in_member`).
    let mut in_member = framed;
    while done < len {
        if in_member && done > 0 && src.member_start_at(src.pos()).is_some() {
            in_member = false;
            let head = src.peek(LOOK)?;
            if head.starts_with(look.prefix) && (look.starts)(head) {
                return Ok(Block { got: done, overran: true, whole: false, tail: None });
            }
        }
        if line_start && tail.is_none() {
            // Every candidate is looked at here, at the current position,
            // through the same window whatever the buffering.
            let head = src.peek(LOOK)?;
            if head.starts_with(look.prefix) && (look.starts)(head) {
                let window = src.peek(AFTER)?;
                if starts_record(window.get(..AFTER).unwrap_or(window), look) {
                    tail = Some((done, Vec::new()));
                }
            }
        }
        let avail = src.fill_buf()?.len();
        if avail == 0 {
            break;
        }
        let mut want = usize::try_from(len - done).unwrap_or(usize::MAX).min(avail);
        if in_member && let Some(limit) = src.to_next_member() {
            want = want.min(limit);
        }
        // The buffer filled above, borrowed again after asking where the
        // next member starts.
        let buf = src.fill_buf()?;
        let mut take = want;
        if tail.is_none() {
            // The next line start inside the block that may begin with the
            // prefix (the search runs on past the block's end, since a
            // record start may straddle it; a prefix that the buffer's end
            // cuts counts): the next round stops there and looks.
            let from_end = want.saturating_sub(look.prefix.len());
            let reach = buf.get(..want + needle.len()).unwrap_or(buf);
            let found = finder.find(reach).map(|i| i + 1).or_else(|| {
                let nl = buf.get(from_end..want).and_then(|b| memchr::memrchr(b'\n', b));
                nl.map(|j| from_end + j + 1).filter(|_| want == buf.len())
            });
            if let Some(at) = found.filter(|&at| at < want) {
                take = at;
            }
        }
        let piece = buf.get(..take).unwrap_or_default();
        if let Some(room) = keep.checked_sub(done).filter(|&r| r > 0) {
            let room = usize::try_from(room).unwrap_or(usize::MAX).min(piece.len());
            out.extend_from_slice(piece.get(..room).unwrap_or_default());
        }
        if let Some((_, bytes)) = &mut tail {
            bytes.extend_from_slice(piece);
        }
        line_start = piece.last() == Some(&b'\n');
        src.consume(take);
        done += take as u64;
        if tail.as_ref().is_some_and(|(_, bytes)| bytes.len() >= cap) {
            // A record header starts in a block that runs on past the
            // record limit after it: the length is taken for a lie here.
            break;
        }
    }
    Ok(Block { got: done, overran: false, whole: false, tail })
}

/// A line end followed by `look`'s prefix: what comes before every record
/// start inside a block.
fn line_needle(look: &Lookout) -> Vec<u8> {
    [b"\n", look.prefix].concat()
}

/// Whether `window`, at a line start, starts a record header that parses.
fn starts_record(window: &[u8], look: &Lookout) -> bool {
    window.starts_with(look.prefix) && (look.starts)(window) && (look.confirms)(window)
}

/// The bytes from a record start kept to give back, at least: a record
/// limit below a header's length must not stop a record start from being
/// seen.
const CAP_MIN: usize = 1 << 20;

/// How many bytes after a block are looked at to see a record start that
/// the block's end cuts (a length a few bytes too long): more than a
/// record header takes.
const AFTER: usize = 8 << 10;

/// When `block` (read into `kept`) holds a record start, gives the bytes
/// from there back to `src` and returns where in the block it is; `None`,
/// with nothing changed, when there is none (or the bytes cannot go back).
/// Called when the block's end is wrong.
pub(crate) fn take_back(
    src: &mut Source,
    block: &Block,
    kept: &[u8],
    look: &Lookout,
) -> io::Result<Option<u64>> {
    let (at, bytes) = match &block.tail {
        Some((at, bytes)) => (*at, bytes.as_slice()),
        None if block.whole => (0, kept),
        None => return Ok(None),
    };
    let after = src.peek(AFTER)?.to_vec();
    let Some(first) = first_record_start(bytes, &after, look) else { return Ok(None) };
    Ok(src.give_back(bytes.get(first..).unwrap_or_default()).then_some(at + first as u64))
}

/// The first position in `bytes`, which begin at a line start, where a
/// line starts that `look` confirms starts a record, looking on into
/// `after` (the bytes that follow) for one that the end of `bytes` cuts.
fn first_record_start(bytes: &[u8], after: &[u8], look: &Lookout) -> Option<usize> {
    let ok = |at: usize| {
        let here = bytes.get(at..).unwrap_or_default();
        if here.len() >= AFTER {
            return starts_record(here.get(..AFTER).unwrap_or_default(), look);
        }
        let window = [here, after].concat();
        starts_record(window.get(..AFTER).unwrap_or(&window), look)
    };
    let needle = line_needle(look);
    let whole = memchr::memmem::find_iter(bytes, &needle).map(|i| i + 1);
    // Line starts too near the end for the prefix to be in `bytes`.
    let tail_from = bytes.len().saturating_sub(look.prefix.len());
    let cut = memchr::memchr_iter(b'\n', bytes.get(tail_from..).unwrap_or_default())
        .map(|i| tail_from + i + 1)
        .filter(|&at| at < bytes.len() && !bytes.get(at..).unwrap_or_default().starts_with(look.prefix));
    std::iter::once(0).chain(whole).chain(cut).find(|&at| at < bytes.len() && ok(at))
}
