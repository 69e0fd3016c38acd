//! Header blocks and HTTP responses, as archived crawls hold them.
//!
//! Parsing is tolerant of what crawlers write (LF or CRLF line ends,
//! continuation lines, a status line without a reason phrase, a header that
//! runs to the end of the block) and strict where guessing would give wrong
//! documents: a header line without a colon is an error, since the rest of
//! the block can no longer be trusted to be the body.
//!
//! The body is decoded as far as it is cheap and safe: `Transfer-Encoding:
//! chunked` framing is removed, and `Content-Encoding` `gzip`, `x-gzip` and
//! `deflate` are inflated (up to the record size limit). Archivers differ in
//! whether they store bodies as sent or already decoded while keeping the
//! header, so a body that does not parse as chunked, or does not start like
//! compressed data, is taken as already decoded. Other content codings (`br`,
//! `zstd`, `compress`) are not decoded: [`BodyError::Unsupported`].

use std::borrow::Cow;
use std::io::{self, Read};

use flate2::read::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

use super::gz::find_byte;
use super::inflate::Inflater;
use super::{Body, Item, Redirect, Status};

/// The parts of an HTTP response header that readers use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Response {
    pub status: u16,
    /// Media type of `Content-Type`, lowercased, without parameters.
    pub content_type: Option<String>,
    /// Its `charset` parameter, lowercased, quotes removed.
    pub charset: Option<String>,
    /// Whether `Transfer-Encoding` names `chunked`.
    pub chunked: bool,
    /// The `Content-Encoding` values, lowercased, comma-separated.
    pub content_encoding: String,
    /// Where the body starts: just after the blank line that ends the
    /// header, or the end of the block when no blank line ends it.
    pub body_start: usize,
    /// The `Location` header (the first one), as sent.
    pub location: Option<String>,
}

impl Response {
    /// The codings [`decode_body`] undoes, as one string (`chunked,gzip`).
    pub(crate) fn codings(&self) -> String {
        match (self.chunked, self.content_encoding.is_empty()) {
            (false, _) => self.content_encoding.clone(),
            (true, true) => "chunked".to_string(),
            (true, false) => format!("chunked,{}", self.content_encoding),
        }
    }

    /// Whether the status is a redirect that says where to (3xx with a
    /// non-empty `Location`).
    pub(crate) fn is_redirect(&self) -> bool {
        (300..400).contains(&self.status) && self.location.as_deref().is_some_and(|l| !l.is_empty())
    }
}

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// The decoded body is longer than the limit.
    TooLarge,
    /// A content coding that is not decoded, or compressed data that does
    /// not decompress at all; the detail says which.
    Unsupported(String),
}

/// The item for a response whose status is not 200: a [`Redirect`] when it
/// is one, otherwise a [`Status`].
pub(crate) fn not_ok_item(offset: u64, url: &str, resp: &Response) -> Item {
    match &resp.location {
        Some(location) if resp.is_redirect() => Item::Redirect(Redirect {
            offset,
            url: url.to_string(),
            status: resp.status,
            location: location.clone(),
        }),
        _ => Item::Status(Status { offset, url: url.to_string(), status: resp.status }),
    }
}

/// Parses the status line and header of the HTTP response at the start of
/// `block`.
pub(crate) fn parse_response(block: &[u8]) -> Result<Response, String> {
    let (status_line, fields_start) = match find_byte(b'\n', block) {
        Some(i) => (block.get(..i).unwrap_or_default(), i + 1),
        None => (block, block.len()),
    };
    let status = parse_status_line(strip_cr(status_line))?;
    let mut resp = Response { status, ..Response::default() };
    let mut encodings = Vec::new();
    let mut fields = FieldLines::new(block.get(fields_start..).unwrap_or_default());
    for field in &mut fields {
        let (name, value) = field?;
        if name.eq_ignore_ascii_case(b"content-type") {
            // The last one wins, as in browsers.
            (resp.content_type, resp.charset) = parse_content_type(&text(&value));
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            resp.chunked |= value.split(|&b| b == b',').any(|t| trim(t).eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"content-encoding") {
            encodings.push(text(&value).to_ascii_lowercase());
        } else if name.eq_ignore_ascii_case(b"location") && resp.location.is_none() {
            resp.location = Some(text(&value).into_owned());
        }
    }
    // The header ends at the first blank line, or at the end of the block.
    resp.body_start = fields_start + fields.consumed();
    resp.content_encoding = encodings.join(",");
    Ok(resp)
}

/// The status code of `HTTP/x.y NNN [reason]`.
fn parse_status_line(line: &[u8]) -> Result<u16, String> {
    let bad = || format!("bad HTTP status line {}", snippet(line));
    let rest = line.strip_prefix(b"HTTP/").ok_or_else(bad)?;
    let after_version = rest.iter().position(|&b| b == b' ' || b == b'\t').ok_or_else(bad)?;
    let rest = trim_start(rest.get(after_version..).unwrap_or_default());
    let code_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let next = rest.get(code_len).copied();
    if code_len != 3 || !matches!(next, None | Some(b' ' | b'\t')) {
        return Err(bad());
    }
    let code = rest.get(..3).unwrap_or_default();
    Ok(code.iter().fold(0u16, |n, &d| n * 10 + u16::from(d - b'0')))
}

/// One header field: its name as written and its value, trimmed, borrowed
/// from the block unless a continuation line was joined to it.
pub(crate) type Field<'a> = (&'a [u8], Cow<'a, [u8]>);

/// The `Name: value` lines of a header block up to its first blank line,
/// one field at a time: names as written, values trimmed, a continuation
/// line (starting with a space or a tab) joined to the previous value with
/// one space. A line without a colon or a name, or a continuation line
/// before any field, is an error, after which the iterator ends.
///
/// Readers look for a few names among the dozen or two fields of every
/// record, so nothing is collected or checked as UTF-8 here: a caller
/// compares names as bytes and turns into text ([`text`]) only the values it
/// keeps. A list of every field, each name and value checked as UTF-8, and
/// a `String` for each value a WARC reader kept took 4.7% of the fingerprint
/// stage's samples on one thread (`perf record --call-graph dwarf`, one file
/// of the generated crawl at the paper's page size).
pub(crate) struct FieldLines<'a> {
    block: &'a [u8],
    /// Where the next line starts.
    pos: usize,
    done: bool,
}

impl<'a> FieldLines<'a> {
    pub(crate) fn new(block: &'a [u8]) -> FieldLines<'a> {
        FieldLines { block, pos: 0, done: false }
    }

    /// The bytes read so far: once the iterator has ended without an
    /// error, the whole header with the blank line that ends it (the
    /// whole block when none does).
    pub(crate) fn consumed(&self) -> usize {
        self.pos
    }

    /// The next line, without its `\n` and one `\r` before it.
    fn line(&mut self) -> Option<&'a [u8]> {
        let rest = self.block.get(self.pos..).filter(|rest| !rest.is_empty())?;
        let (line, len) = match find_byte(b'\n', rest) {
            Some(i) => (rest.get(..i).unwrap_or_default(), i + 1),
            None => (rest, rest.len()),
        };
        self.pos += len;
        Some(strip_cr(line))
    }

    fn at_continuation(&self) -> bool {
        self.block.get(self.pos).is_some_and(|&b| b == b' ' || b == b'\t')
    }

    fn fail(&mut self, what: &str, line: &[u8]) -> Option<Result<Field<'a>, String>> {
        self.done = true;
        Some(Err(format!("{what}: {}", snippet(line))))
    }
}

impl<'a> Iterator for FieldLines<'a> {
    type Item = Result<Field<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Some(line) = self.line().filter(|line| !line.is_empty()) else {
            self.done = true;
            return None;
        };
        if line.first().is_some_and(|&b| b == b' ' || b == b'\t') {
            return self.fail("continuation line before any header field", line);
        }
        let Some(colon) = find_byte(b':', line) else {
            return self.fail("header line without a colon", line);
        };
        let name = trim(line.get(..colon).unwrap_or_default());
        if name.is_empty() {
            return self.fail("header line without a name", line);
        }
        let mut value = Cow::Borrowed(trim(line.get(colon + 1..).unwrap_or_default()));
        while self.at_continuation() {
            let more = trim(self.line().unwrap_or_default());
            if !more.is_empty() {
                let value = value.to_mut();
                value.push(b' ');
                value.extend_from_slice(more);
            }
        }
        Some(Ok((name, value)))
    }
}

/// `bytes` as text, borrowed when it is UTF-8 (header fields nearly always
/// are), as `from_utf8_lossy` gives it: that call's chunked scan was a
/// third of the header parsing, 1.8% of the fingerprint stage's samples
/// on one thread (`perf record`, one file of generated crawl), where
/// `from_utf8`'s check takes 1.2%.
pub(crate) fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A field's value as text: [`text`], borrowing what the value borrows.
/// Joining a continuation line with a space and converting afterwards gives
/// what converting each line would: a space ends any broken UTF-8 sequence
/// before it.
pub(crate) fn value_text(value: Cow<'_, [u8]>) -> Cow<'_, str> {
    match value {
        Cow::Borrowed(bytes) => text(bytes),
        Cow::Owned(bytes) => match String::from_utf8(bytes) {
            Ok(s) => Cow::Owned(s),
            Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        },
    }
}

/// A header block whose values are turned into text ([`value_text`])
/// with one UTF-8 check of the whole block, not one for each value.
///
/// A WARC reader keeps five or six values of every record; checked one by
/// one, they took 0.55% of the fingerprint stage's instructions
/// (`callgrind`, one thread, 40 MB of the generated crawl at the paper's
/// page size).
pub(crate) struct HeaderText<'a> {
    block: &'a [u8],
    /// The block as text, when it is UTF-8 (nearly always).
    text: Option<&'a str>,
}

impl<'a> HeaderText<'a> {
    pub(crate) fn new(block: &'a [u8]) -> HeaderText<'a> {
        HeaderText { block, text: std::str::from_utf8(block).ok() }
    }

    /// `value_text(value)`: for a value borrowed from a block that is
    /// UTF-8, the same bytes of the block's text, found by where they lie
    /// in the block. (Any slice of UTF-8 cut at ASCII bytes, as field
    /// values are, is UTF-8; `str::get` checks the cut anyway.)
    pub(crate) fn value(&self, value: Cow<'a, [u8]>) -> Cow<'a, str> {
        if let (Some(text), Cow::Borrowed(bytes)) = (self.text, &value) {
            let at = (bytes.as_ptr() as usize).wrapping_sub(self.block.as_ptr() as usize);
            if let Some(s) = at.checked_add(bytes.len()).and_then(|end| text.get(at..end)) {
                return Cow::Borrowed(s);
            }
        }
        value_text(value)
    }
}

/// The media type (lowercased, without parameters) and charset parameter
/// (lowercased, without quotes) of a `Content-Type` value; `None` for parts
/// that are missing or empty.
pub(crate) fn parse_content_type(value: &str) -> (Option<String>, Option<String>) {
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_ascii_lowercase())
    });
    ((!media.is_empty()).then_some(media), charset)
}

/// Undoes the transfer and content codings of `resp` on its `body`, keeping
/// at most `max` decoded bytes. `cover` is told the bytes held (the body as
/// it came and what decoding made of it) as they grow, and may wait for
/// room ([`super::budget`]); its error (the command was asked to stop) is
/// the outer one.
pub(crate) fn decode_body(
    resp: &Response,
    body: impl Into<Body>,
    max: u64,
    cover: &mut dyn FnMut(u64) -> io::Result<()>,
) -> io::Result<Result<Body, BodyError>> {
    let mut body = body.into();
    let came = body.len() as u64;
    if resp.chunked
        && let Some(plain) = dechunk(&body)
    {
        body = plain.into();
    }
    let mut cover = |decoded: u64| cover(came.saturating_add(decoded));
    for coding in resp.content_encoding.split(',').rev().map(str::trim) {
        let decoded = match coding {
            "" | "identity" => Ok(body),
            "gzip" | "x-gzip" => gunzip(body, max, &mut cover)?,
            "deflate" => inflate(body, max, &mut cover)?,
            other => Err(BodyError::Unsupported(format!("content encoding {other:?} is not decoded"))),
        };
        body = match decoded {
            Ok(body) => body,
            Err(e) => return Ok(Err(e)),
        };
    }
    Ok(Ok(body))
}

/// Removes chunked framing. `None` when `data` does not start with a chunk
/// size line (it was stored de-chunked). A chunk cut short or bad framing
/// after the first chunk ends the body there: archives often truncate long
/// responses.
fn dechunk(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut p = 0usize;
    let mut first = true;
    loop {
        let rest = data.get(p..).unwrap_or_default();
        let size = find_byte(b'\n', rest).and_then(|nl| {
            let line = strip_cr(rest.get(..nl).unwrap_or_default());
            let digits = trim(line.split(|&b| b == b';').next().unwrap_or_default());
            Some((parse_hex(digits)?, nl + 1))
        });
        let Some((size, line_len)) = size else {
            return if first { None } else { Some(out) };
        };
        first = false;
        p += line_len;
        if size == 0 {
            return Some(out);
        }
        let end = p.saturating_add(size).min(data.len());
        out.extend_from_slice(data.get(p..end).unwrap_or_default());
        if end < p.saturating_add(size) {
            return Some(out);
        }
        p = end;
        let after = data.get(p..).unwrap_or_default();
        if after.starts_with(b"\r\n") {
            p += 2;
        } else if after.starts_with(b"\n") {
            p += 1;
        }
    }
}

/// A chunk size: 1 to 15 hex digits.
fn parse_hex(digits: &[u8]) -> Option<usize> {
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut n = 0usize;
    for &d in digits {
        let v = char::from(d).to_digit(16)?;
        n = n.checked_mul(16)?.checked_add(v as usize)?;
    }
    Some(n)
}

/// Inflates a gzip-encoded body; a body that does not start with the gzip
/// magic is taken as already decoded.
fn gunzip(body: Body, max: u64, cover: Cover) -> io::Result<Result<Body, BodyError>> {
    if !body.starts_with(&[0x1f, 0x8b]) {
        return Ok(Ok(body));
    }
    if let Some(out) = whole_member(&body, max, cover)? {
        return Ok(Ok(out.into()));
    }
    let (out, err) = match read_capped(MultiGzDecoder::new(body.as_slice()), max, cover)? {
        Ok(read) => read,
        Err(e) => return Ok(Err(e)),
    };
    Ok(match err {
        Some(e) if out.is_empty() => {
            Err(BodyError::Unsupported(format!("gzip-encoded body does not decompress ({e})")))
        }
        _ => Ok(out.into()),
    })
}

thread_local! {
    /// Each reading thread's libdeflate decompressor, for [`whole_member`].
    static INFLATER: std::cell::RefCell<Option<Inflater>> = std::cell::RefCell::new(Inflater::new());
}

/// The fast path of [`gunzip`]: a body that is one whole gzip member,
/// inflated in one call by libdeflate into a buffer of the size its
/// trailer states. `None` for anything else (several members, bytes after
/// the member, damage, a stated size above `max` or below the real one),
/// which the streaming decoder takes as before, so the bytes decoded are
/// the same either way. The payloads of a documentation crawl served
/// gzip-encoded (Debian's changelogs) took 17.8% of the fingerprint
/// stage through the streaming decoder, twice the inflation of the WARC
/// file's own members by libdeflate.
fn whole_member(body: &[u8], max: u64, cover: Cover) -> io::Result<Option<Vec<u8>>> {
    let Some(trailer) = body.len().checked_sub(4).and_then(|at| body.get(at..)) else { return Ok(None) };
    let size = u64::from(u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]));
    if size > max || body.len() < 18 {
        return Ok(None);
    }
    cover(size)?;
    let mut out = vec![0u8; size as usize];
    let made = INFLATER.with(|i| i.borrow_mut().as_mut().and_then(|i| i.member(body, &mut out)));
    Ok(match made {
        Some((used, made)) if used == body.len() && made == out.len() => Some(out),
        _ => None,
    })
}

/// Inflates a deflate-encoded body: zlib-wrapped as the standard says, or
/// raw deflate as some servers send. A body that is neither is taken as
/// already decoded.
fn inflate(body: Body, max: u64, cover: Cover) -> io::Result<Result<Body, BodyError>> {
    let zlib = match body.as_slice() {
        [cmf, flg, ..] => cmf & 0x0f == 8 && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0,
        _ => false,
    };
    let read = if zlib {
        read_capped(ZlibDecoder::new(body.as_slice()), max, cover)?
    } else {
        read_capped(DeflateDecoder::new(body.as_slice()), max, cover)?
    };
    let (out, err) = match read {
        Ok(read) => read,
        Err(e) => return Ok(Err(e)),
    };
    Ok(match err {
        Some(_) if out.is_empty() => Ok(body),
        _ => Ok(out.into()),
    })
}

/// What [`decode_body`] tells of the decoded bytes as they grow.
type Cover<'a> = &'a mut dyn FnMut(u64) -> io::Result<()>;

/// What a stream decoded to, and the error that ended it early, if any.
type Decoded = (Vec<u8>, Option<io::Error>);

/// How many decoded bytes are read between two calls of the cover.
const COVER_STEP: u64 = 1 << 20;

/// Reads `r` to its end or first error, failing when it gives more than
/// `max` bytes, and telling `cover` the bytes read a step at a time.
/// Returns what was read and the error, if any: a truncated stream still
/// gives its prefix.
fn read_capped(r: impl Read, max: u64, cover: Cover) -> io::Result<Result<Decoded, BodyError>> {
    let mut out = Vec::new();
    let mut r = r.take(max.saturating_add(1));
    let err = loop {
        match (&mut r).take(COVER_STEP).read_to_end(&mut out) {
            Ok(0) => break None,
            Ok(_) => cover(out.len() as u64)?,
            Err(e) => break Some(e),
        }
    };
    if out.len() as u64 > max {
        return Ok(Err(BodyError::TooLarge));
    }
    Ok(Ok((out, err)))
}

/// `line` without its trailing `\r`s: one in a CR LF line end, more where
/// a writer ended lines with CR CR LF, which warcio reads too.
pub(crate) fn strip_cr(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
    line.get(..end).unwrap_or_default()
}

/// `bytes` without leading and trailing spaces, tabs and CRs.
pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let start = bytes.iter().position(|b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !is_space(b)).map_or(start, |i| i + 1);
    bytes.get(start..end).unwrap_or_default()
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !matches!(b, b' ' | b'\t')).unwrap_or(bytes.len());
    bytes.get(start..).unwrap_or_default()
}

/// The start of a bad line, quoted, for skip details.
pub(crate) fn snippet(line: &[u8]) -> String {
    const MAX: usize = 60;
    let text = String::from_utf8_lossy(line.get(..MAX).unwrap_or(line));
    if line.len() > MAX { format!("{text:?}...") } else { format!("{text:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(resp: &Response, body: impl Into<Body>, max: u64) -> Result<Body, BodyError> {
        decode_body(resp, body, max, &mut |_| Ok(())).unwrap()
    }
    use flate2::Compression;
    use flate2::write::{GzEncoder, ZlibEncoder};
    use std::io::Write;

    #[test]
    fn response_with_crlf_header() {
        let block =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/HTML; charset=\"UTF-8\"\r\nServer: x\r\n\r\n<p>hi";
        let resp = parse_response(block).unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(resp.content_type.as_deref(), Some("text/html"));
        assert_eq!(resp.charset.as_deref(), Some("utf-8"));
        assert_eq!(&block[resp.body_start..], b"<p>hi");
    }

    #[test]
    fn response_with_lf_header_and_no_reason() {
        let block = b"HTTP/1.0 404\nContent-Type: text/plain\n\nnot found\n";
        let resp = parse_response(block).unwrap();
        assert_eq!(resp.status, 404);
        assert_eq!(&block[resp.body_start..], b"not found\n");
    }

    #[test]
    fn header_running_to_the_end_of_the_block_has_an_empty_body() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n";
        let resp = parse_response(block).unwrap();
        assert_eq!(resp.body_start, block.len());
        let resp = parse_response(b"HTTP/1.1 200 OK").unwrap();
        assert_eq!(resp.body_start, 15);
    }

    #[test]
    fn bad_responses_are_errors() {
        for block in [
            &b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\nbody"[..],
            b"HTTP/1.1 20 OK\r\n\r\n",
            b"HTTP/1.1 2000 OK\r\n\r\n",
            b"HTTP/1.1\r\n\r\n",
            b"ICY 200 OK\r\n\r\n",
            b"",
            b"HTTP/1.1 200 OK\r\n : empty name\r\n\r\n",
        ] {
            assert!(parse_response(block).is_err(), "{:?}", String::from_utf8_lossy(block));
        }
    }

    #[test]
    fn fields_fold_continuation_lines() {
        let block = b"A: one\r\n  two\r\n\tthree\r\n \r\nB :x\r\n\r\nC: after";
        let mut lines = FieldLines::new(block);
        let fields: Vec<_> = (&mut lines).map(Result::unwrap).collect();
        let want: Vec<Field<'_>> = vec![(b"A", b"one two three".to_vec().into()), (b"B", b"x"[..].into())];
        assert_eq!(fields, want);
        assert!(matches!(fields[1].1, Cow::Borrowed(_)), "a value without continuation is not copied");
        assert_eq!(&block[lines.consumed()..], b"C: after");
        for bad in [&b" lonely continuation\n"[..], b"A: b\nno colon\nC: d\n", b"A: b\n: no name\n"] {
            let mut lines = FieldLines::new(bad);
            assert!(lines.any(|f| f.is_err()), "{:?}", String::from_utf8_lossy(bad));
            assert!(lines.next().is_none(), "nothing after an error");
        }
        let block = b"A: b\r\nC: d";
        let mut whole = FieldLines::new(block);
        assert_eq!(whole.by_ref().count(), 2);
        assert_eq!(whole.consumed(), block.len(), "a header without a blank line runs to the end");
    }

    #[test]
    fn field_values_as_text() {
        assert_eq!(value_text(Cow::Borrowed(b"plain")), "plain");
        assert!(matches!(value_text(Cow::Borrowed(b"plain")), Cow::Borrowed(_)));
        // A broken sequence, then the joining space: as if each line were
        // converted on its own.
        let joined = [&b"caf\xc3"[..], b" ", b"\xa9t\xc3\xa9"].concat();
        let per_line =
            format!("{} {}", String::from_utf8_lossy(b"caf\xc3"), String::from_utf8_lossy(b"\xa9t\xc3\xa9"));
        assert_eq!(value_text(Cow::Owned(joined)), per_line);
    }

    #[test]
    fn header_values_as_text_of_the_block() {
        let block = "A: caf\u{e9}\r\nB: one\r\n two\r\nC: \u{2603}\r\n\r\n".as_bytes();
        let text = HeaderText::new(block);
        let values: Vec<Cow<'_, str>> = FieldLines::new(block).map(|f| text.value(f.unwrap().1)).collect();
        assert_eq!(values, ["caf\u{e9}", "one two", "\u{2603}"]);
        assert!(matches!(values[0], Cow::Borrowed(_)) && matches!(values[2], Cow::Borrowed(_)));
        // A value from elsewhere, and a block that is not UTF-8: as value_text.
        assert_eq!(text.value(Cow::Borrowed(b"elsewhere")), "elsewhere");
        let broken = b"A: caf\xc3\r\nB: ok\r\n\r\n";
        let text = HeaderText::new(broken);
        let values: Vec<Cow<'_, str>> = FieldLines::new(broken).map(|f| text.value(f.unwrap().1)).collect();
        assert_eq!(values, ["caf\u{fffd}", "ok"]);
    }

    #[test]
    fn content_type_parameters() {
        assert_eq!(parse_content_type("text/plain"), (Some("text/plain".into()), None));
        assert_eq!(
            parse_content_type(" Text/Html ;foo=bar; Charset='ISO-8859-1' "),
            (Some("text/html".into()), Some("iso-8859-1".into()))
        );
        assert_eq!(parse_content_type(""), (None, None));
        assert_eq!(parse_content_type("; charset="), (None, None));
    }

    fn resp(chunked: bool, encoding: &str) -> Response {
        Response { status: 200, chunked, content_encoding: encoding.into(), ..Response::default() }
    }

    #[test]
    fn chunked_bodies_are_unframed() {
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n".to_vec();
        assert_eq!(decode(&resp(true, ""), body, 100).unwrap(), b"hello, world");
        // Stored already de-chunked: kept.
        assert_eq!(decode(&resp(true, ""), b"plain text".to_vec(), 100).unwrap(), b"plain text");
        // Cut off inside a chunk: the prefix.
        assert_eq!(decode(&resp(true, ""), b"a\nhello".to_vec(), 100).unwrap(), b"hello");
        assert_eq!(
            decode(&resp(true, ""), b"ffffffffffffffff\nx".to_vec(), 100).unwrap(),
            b"ffffffffffffffff\nx"
        );
    }

    #[test]
    fn gzip_and_deflate_bodies_are_inflated() {
        let text = b"some text that was compressed by the server".repeat(3);
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decode(&resp(false, "gzip"), gz.clone(), 1000).unwrap(), text);
        assert_eq!(decode(&resp(false, "x-gzip"), gz.clone(), 1000).unwrap(), text);
        // A truncated stream gives its prefix.
        let cut = decode(&resp(false, "gzip"), gz[..gz.len() - 20].to_vec(), 1000).unwrap();
        assert!(text.starts_with(&cut));
        // Over the limit.
        assert_eq!(decode(&resp(false, "gzip"), gz.clone(), 10), Err(BodyError::TooLarge));
        // Already decoded by the archiver.
        assert_eq!(decode(&resp(false, "gzip"), text.clone(), 1000).unwrap(), text);

        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&text).unwrap();
        let z = z.finish().unwrap();
        assert_eq!(decode(&resp(false, "deflate"), z, 1000).unwrap(), text);
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
        raw.write_all(&text).unwrap();
        assert_eq!(decode(&resp(false, "deflate"), raw.finish().unwrap(), 1000).unwrap(), text);
        assert!(matches!(decode(&resp(false, "br"), text.clone(), 1000), Err(BodyError::Unsupported(_))));
        assert!(matches!(
            decode(&resp(false, "gzip"), vec![0x1f, 0x8b, 0, 0, 0], 1000),
            Err(BodyError::Unsupported(_))
        ));
    }

    /// The streaming decoder alone, as `gunzip` decoded before its fast
    /// path.
    fn streamed(body: &[u8], max: u64) -> Result<Body, BodyError> {
        let (out, err) = read_capped(MultiGzDecoder::new(body), max, &mut |_| Ok(())).unwrap()?;
        match err {
            Some(_) if out.is_empty() => Err(BodyError::Unsupported(String::new())),
            _ => Ok(out.into()),
        }
    }

    #[test]
    fn a_whole_gzip_member_decodes_as_the_stream_does() {
        let gz = |data: &[u8]| {
            let mut e = GzEncoder::new(Vec::new(), Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let text: Vec<u8> =
            (0..20_000u32).flat_map(|i| format!("line {i} of a changelog\n").into_bytes()).collect();
        let one = gz(&text);
        let two = [gz(b"first member "), gz(b"second member")].concat();
        let mut lying = one.clone();
        let n = lying.len();
        lying[n - 4..].copy_from_slice(&7u32.to_le_bytes());
        let mut damaged = one.clone();
        damaged[n / 2] ^= 0x55;
        let trailing = [one.clone(), b"junk".to_vec()].concat();
        for (what, body) in [
            ("one member", &one),
            ("two members", &two),
            ("a size that lies", &lying),
            ("damaged", &damaged),
            ("bytes after the member", &trailing),
            ("cut", &one[..n - 9].to_vec()),
        ] {
            for max in [10, text.len() as u64, 1 << 30] {
                let fast = whole_member(body, max, &mut |_| Ok(())).unwrap();
                if let Some(out) = &fast {
                    assert_eq!(what, "one member", "only a whole member takes the fast path");
                    assert_eq!(out, &text);
                }
                let got = decode(&resp(false, "gzip"), body.clone(), max);
                let want = streamed(body, max);
                match (&got, &want) {
                    (Err(BodyError::Unsupported(_)), Err(BodyError::Unsupported(_))) => {}
                    _ => assert_eq!(got, want, "{what}, max {max}"),
                }
            }
        }
        assert!(whole_member(&one, text.len() as u64, &mut |_| Ok(())).unwrap().is_some());
    }

    #[test]
    fn trim_and_snippet() {
        assert_eq!(trim(b" \t a b \r"), b"a b");
        assert_eq!(trim(b"   "), b"");
        assert_eq!(snippet(b"abc"), "\"abc\"");
        assert!(snippet(&[b'x'; 100]).ends_with("..."));
    }
}
