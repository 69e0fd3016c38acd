//! ARC, the Internet Archive's format before WARC: versions 1 and 2, plain,
//! per-record gzip (`.arc.gz`, one gzip member per record) or whole-file
//! gzip.
//!
//! An ARC file has no record magic: a record is one header line, whose last
//! field is the length of the content that follows it. So the reader goes
//! by lengths, checks that a header line (or the end) follows each record,
//! and where a header line is expected and does not parse, it looks for the
//! next line that does (see "Damage" below).
//!
//! # Grammar as accepted
//!
//! ```text
//! file         = *( blank / record / damage )
//! record       = header-line LF content [record-end]
//! header-line  = url SP ip SP date SP content-type SP length             ; v1: 5 fields
//!              / url SP ip SP date SP content-type SP result-code SP checksum
//!                SP location SP offset SP filename SP length             ; v2: 10 fields
//! url          = scheme ":" 1*VCHAR       ; scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
//! length       = 1*DIGIT                  ; bytes of content, at most 2^64 - 1
//! content      = length bytes
//! record-end   = LF / CRLF                ; or nothing
//! blank        = SP / HT / CR / LF        ; between records, ignored
//! ```
//!
//! Fields are separated by single spaces; spaces, tabs and CRs at either end
//! of the line are ignored (so CRLF header lines are read), and a header line
//! is at most [`MAX_HEADER_LINE`] bytes. Only the URL (the first field) and
//! the length (the last) frame records: the URL must start with a scheme,
//! the length must be decimal digits. The fields in between are read only
//! for the content type, which old writers did not always keep free of
//! spaces: it is everything between the date and the fields after it that
//! the line's layout has, joined by their spaces.
//!
//! Which layout a line has is decided per line by its field count and the
//! version the file's version block declares:
//!
//! | fields | v1 file (or no version block) | v2 file |
//! |---|---|---|
//! | fewer than 5 | corrupt | corrupt |
//! | 5 | v1 | v1 |
//! | 6 to 9 | v1, content type of 2 to 5 fields | corrupt |
//! | 10 | v2 | v2 |
//! | more than 10 | v1, content type of 7 or more fields | v2, content type of 2 or more fields |
//!
//! The version block is the content of a `filedesc:` record: a version line
//! (`1 0 InternetArchive`, `2 0 Alexa`) whose first number is the version,
//! then the field-definition line (`URL IP-address Archive-date
//! Content-type Archive-length` for v1), then optional XML metadata. When
//! the version number is neither 1 nor 2, the field-definition line's field
//! count (5 or 10) decides. A `filedesc:` record anywhere in the input (as
//! in `cat a.arc.gz b.arc.gz`) sets the version for the records after it.
//!
//! | record (by URL scheme) | item |
//! |---|---|
//! | `filedesc:` | [`SkipReason::ArcFileHeader`] |
//! | `dns:` | [`SkipReason::ArcOther`]: a DNS lookup, not a page |
//! | `http:`, `https:` whose content starts with `HTTP/` | status 200: a document of the HTTP body (chunked framing and gzip/deflate content coding removed), typed by the HTTP `Content-Type`; other status: [`SkipReason::HttpStatus`] with the code |
//! | any other (`ftp:`, `http:` without a status line, ...) | a document of the content, typed by the header line's content type (`no-type`, which Heritrix writes for an unknown type, and an empty field mean none) |
//!
//! Offsets are those of [`Item`]: where the header line starts, or the
//! offset of the gzip member that the record starts.
//!
//! Damage: where a header line is expected (at the start of the input, or
//! after a record and the blanks after it), a line that does not parse
//! (field count, no URL, a length that is not a number), that is longer
//! than [`MAX_HEADER_LINE`], or that runs into the next gzip member is a
//! [`SkipReason::CorruptHeader`] skip. Its bytes run up to the next line
//! that parses as a header line (checked at every line start and every gzip
//! member start), where reading goes on. An HTTP header that does not parse
//! is a `CorruptHeader` skip of its record alone: the record's length still
//! says where the next one starts. A length that runs into the next record
//! is a `CorruptHeader` skip of its record alone: the content is checked
//! where it ends, and a header line inside it is where reading goes on
//! (see [`super::block`]). A record that the input ends in (in its
//! header line or its content) is a [`SkipReason::TruncatedRecord`] skip. A
//! page record longer than `max_record_bytes` is read past and skipped with
//! [`SkipReason::RecordTooLarge`]; the content of other records is never
//! kept, except the start of a version block. Damaged gzip data is handled
//! as for WARC (see [`super::gz`]).

use std::io;

use super::block::{self, Claim, Lookout};
use super::budget::Keeping;
use super::gz::{Source, Start, find_byte, skip};
use super::http::{self, BodyError};
use super::records::{Core, Format, Found, LOOK, is_blank};
use super::{Body, Item, RawDoc, SkipReason};

/// The longest header line read; a longer one is corrupt. Heritrix refuses
/// to write header lines over 8 KiB, and real ones are a URL and a few short
/// fields.
pub(crate) const MAX_HEADER_LINE: usize = 8 << 10;

/// How much of a record's content is reserved before reading it: a huge
/// length must not allocate before its bytes are there.
const RESERVE_MAX: u64 = 1 << 20;

/// How much of a version block is kept: enough for its two lines and some
/// metadata; the rest is read past.
const VERSION_BLOCK_KEEP: u64 = 64 << 10;

/// The first look for a header line's end. Most header lines are shorter, so
/// that looking further ahead (and gathering that many bytes) is rare.
const SHORT_LOOK: usize = 512;

/// Reads ARC records from a [`Source`].
pub(crate) struct ArcReader {
    core: Core,
    max_record_bytes: u64,
    /// The header line at the current position, as [`ArcReader::peek_line`]
    /// left it.
    line: Vec<u8>,
    /// The version the last version block declared.
    version: Version,
}

/// The ARC version a version block declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Version {
    /// Version 1, or no version block: lines of 5 fields or more.
    #[default]
    V1,
    /// Version 2: lines of 10 fields or more, or exactly 5.
    V2,
}

/// The line at the current position, as far as a header line can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peeked {
    /// A line of this many bytes, its LF included, now in `line`.
    Line(usize),
    /// No LF before the next gzip member starts, this many bytes on.
    RunsIntoMember(usize),
    /// No LF in the first [`MAX_HEADER_LINE`] bytes.
    TooLong,
    /// No LF before the data ends (end of input or a break): this many
    /// bytes remain.
    Partial(usize),
}

/// What a record is, by its URL scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `filedesc:`, the version block.
    FileDesc,
    /// `dns:`, a lookup.
    Dns,
    /// `http:` or `https:`: an HTTP response, if the content has a status
    /// line.
    Http,
    /// Any other scheme: the content is the page.
    Other,
}

impl Kind {
    fn of(url: &str) -> Kind {
        let scheme = url.split(':').next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("filedesc") {
            Kind::FileDesc
        } else if scheme.eq_ignore_ascii_case("dns") {
            Kind::Dns
        } else if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") {
            Kind::Http
        } else {
            Kind::Other
        }
    }
}

/// The fields of a header line that the reader uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Header {
    url: String,
    /// The content type field as written (possibly several fields), or
    /// empty.
    content_type: String,
    length: u64,
    /// The archive date, as a WARC-Date is written, when the field is
    /// 14 digits (`YYYYMMDDhhmmss`).
    date: Option<String>,
}

impl ArcReader {
    /// A reader of `src`, keeping records of at most `max_record_bytes`.
    pub(crate) fn new(src: Source, max_record_bytes: u64) -> ArcReader {
        ArcReader { core: Core::new(src), max_record_bytes, line: Vec::new(), version: Version::default() }
    }

    /// Reads the record whose header line is at `start` and queues its item
    /// (or skips).
    fn read_record(&mut self, start: Start) -> io::Result<()> {
        let line_len = match self.peek_line()? {
            Peeked::Line(len) => len,
            Peeked::RunsIntoMember(_) => {
                return self.corrupt(start, "header line not ended before the next gzip member".into());
            }
            Peeked::TooLong => {
                return self.corrupt(start, format!("header line longer than {MAX_HEADER_LINE} bytes"));
            }
            Peeked::Partial(len) => {
                self.core.src.consume(len);
                self.core.lost(start, "header line cut off at end of input");
                return Ok(());
            }
        };
        let header = match parse_header_line(&self.line, self.version) {
            Ok(header) => header,
            Err(detail) => return self.corrupt(start, detail),
        };
        self.core.src.consume(line_len);
        let kind = Kind::of(&header.url);
        let len = header.length;
        let keep = match kind {
            Kind::FileDesc => len.min(VERSION_BLOCK_KEEP),
            Kind::Dns => 0,
            Kind::Http | Kind::Other if len <= self.max_record_bytes => len,
            Kind::Http | Kind::Other => 0,
        };
        if matches!(kind, Kind::Http | Kind::Other) {
            // A big page waits here for room in the budget, before it is
            // read.
            self.core.keeping.cover(keep)?;
        }
        let mut content = Vec::with_capacity(usize::try_from(keep.min(RESERVE_MAX)).unwrap_or(0));
        let version = self.version;
        let confirms = move |b: &[u8]| {
            find_byte(b'\n', b)
                .is_some_and(|i| parse_header_line(b.get(..=i).unwrap_or_default(), version).is_ok())
        };
        let look = Lookout { prefix: b"", starts: &starts_with_url, confirms: &confirms };
        let claim = Claim { len, keep, cap: self.max_record_bytes };
        let read = block::read(&mut self.core.src, start, claim, &mut content, &look)?;
        let got = read.got;
        if read.overran {
            let detail = format!("length {len} runs past the end of its gzip member ({got} bytes)");
            return self
                .core
                .push_unless_damaged(start, skip(start.offset, SkipReason::CorruptHeader, detail));
        }
        // A length is believed when the block ends where a record may end,
        // and when damaged data cut it off (the damage is what is reported).
        let believed = (got < len && self.core.src.at_break()) || (got == len && self.at_record_end()?);
        if !believed && let Some(at) = block::take_back(&mut self.core.src, &read, &content, &look)? {
            let lost = line_len as u64 + at;
            let detail = format!(
                "length {len} runs into a record that starts {at} bytes into the content; {lost} bytes skipped to it"
            );
            return self
                .core
                .push_unless_damaged(start, skip(start.offset, SkipReason::CorruptHeader, detail));
        }
        if got < len {
            self.core.lost(start, format!("content cut off at end of input after {got} of {len} bytes"));
            return Ok(());
        }
        self.skip_record_end()?;
        if let Some(brk) = self.core.src.record_damage(start)? {
            self.core.push_break(Some(start), brk);
            return Ok(());
        }
        let item = match kind {
            Kind::FileDesc => {
                if let Some(version) = declared_version(&content) {
                    self.version = version;
                }
                skip(start.offset, SkipReason::ArcFileHeader, "")
            }
            Kind::Dns => skip(start.offset, SkipReason::ArcOther, ""),
            _ if keep < len => skip(
                start.offset,
                SkipReason::RecordTooLarge,
                format!("{len}-byte record over the limit of {} bytes", self.max_record_bytes),
            ),
            Kind::Http if content.starts_with(b"HTTP/") => {
                let mut keeping = std::mem::take(&mut self.core.keeping);
                let item = self.http_item(start.offset, header.url, header.date, content, &mut keeping);
                self.core.keeping = keeping;
                item?
            }
            _ => {
                let (content_type, charset) = header_content_type(&header.content_type);
                Item::Doc(RawDoc {
                    offset: start.offset,
                    url: header.url,
                    content_type,
                    charset,
                    body: content.into(),
                    date: header.date,
                    ..RawDoc::default()
                })
            }
        };
        self.core.push(item);
        Ok(())
    }

    /// The line at the current position, copied into `line` when it is one,
    /// without consuming it.
    fn peek_line(&mut self) -> io::Result<Peeked> {
        self.line.clear();
        let mut want = SHORT_LOOK;
        loop {
            // `peek` may give more than asked for: a line's fate must not
            // depend on how the input happens to be buffered.
            let window = self.core.src.peek(want)?;
            let window = window.get(..want).unwrap_or(window);
            let avail = window.len();
            let nl = find_byte(b'\n', window);
            if let Some(i) = nl {
                self.line.extend_from_slice(window.get(..=i).unwrap_or_default());
            }
            // Only members that start after the current position count: the
            // record may start one.
            let member = self.core.src.to_next_member().filter(|&m| m < nl.map_or(avail, |i| i + 1));
            if let Some(m) = member {
                self.line.clear();
                return Ok(Peeked::RunsIntoMember(m));
            }
            if let Some(i) = nl {
                return Ok(Peeked::Line(i + 1));
            }
            if avail > MAX_HEADER_LINE {
                return Ok(Peeked::TooLong);
            }
            if avail < want {
                return Ok(Peeked::Partial(avail));
            }
            want = MAX_HEADER_LINE + 1;
        }
    }

    /// Skips the line at the current position and any lines after it up to
    /// the next header line, and queues a corrupt-header skip for the bytes
    /// from `start`.
    fn corrupt(&mut self, start: Start, detail: String) -> io::Result<()> {
        loop {
            if self.core.src.skip_line(|_| ())? == 0 || self.at_header_line()? {
                break;
            }
        }
        self.core.push_unless_damaged(start, skip(start.offset, SkipReason::CorruptHeader, detail))
    }

    /// Whether the line at the current position parses as a header line.
    fn at_header_line(&mut self) -> io::Result<bool> {
        // Most lines are ruled out by their first bytes, without gathering a
        // whole header line's worth of lookahead for each.
        if !starts_with_url(self.core.src.peek(LOOK)?) {
            return Ok(false);
        }
        Ok(matches!(self.peek_line()?, Peeked::Line(_))
            && parse_header_line(&self.line, self.version).is_ok())
    }

    /// Whether the bytes after a record's content are what may follow it:
    /// blanks, then a header line or the end of the data. When they are
    /// not, its length may have lied ([`block`]).
    fn at_record_end(&mut self) -> io::Result<bool> {
        let head = self.core.src.peek(LOOK)?;
        let blanks = head.iter().take_while(|&&b| is_blank(b)).count();
        if blanks == head.len() {
            return Ok(true);
        }
        if blanks > 0 {
            // The header line after the blanks is looked at where it is.
            let window = self.core.src.peek(blanks + MAX_HEADER_LINE + 1)?;
            let line = window.get(blanks..).unwrap_or_default();
            let line = find_byte(b'\n', line).map_or(line, |i| line.get(..=i).unwrap_or_default());
            return Ok(starts_with_url(line) && parse_header_line(line, self.version).is_ok());
        }
        self.at_header_line()
    }

    /// Consumes the LF (or CRLF) after a record's content, if it is there,
    /// unless a gzip member starts at it: that member's offset belongs to
    /// the next record.
    fn skip_record_end(&mut self) -> io::Result<()> {
        let n = match self.core.src.peek(2)? {
            [b'\n', ..] => 1,
            [b'\r', b'\n', ..] => 2,
            _ => 0,
        };
        let src = &mut self.core.src;
        if n > 0 && src.member_start_at(src.pos()).is_none() {
            let n = src.to_next_member().map_or(n, |limit| n.min(limit));
            src.consume(n);
        }
        Ok(())
    }

    /// The item for an `http:` or `https:` record whose content is an HTTP
    /// response.
    /// `keeping` covers the body as it is decoded; its error (the command
    /// was asked to stop) is the only one.
    fn http_item(
        &self,
        offset: u64,
        url: String,
        date: Option<String>,
        content: Vec<u8>,
        keeping: &mut Keeping,
    ) -> io::Result<Item> {
        let resp = match http::parse_response(&content) {
            Ok(resp) => resp,
            Err(detail) => {
                return Ok(skip(offset, SkipReason::CorruptHeader, format!("HTTP header: {detail}")));
            }
        };
        if resp.status != 200 {
            return Ok(http::not_ok_item(offset, &url, &resp));
        }
        let body = Body::after(content, resp.body_start);
        Ok(match http::decode_body(&resp, body, self.max_record_bytes, &mut |n| keeping.cover(n))? {
            Ok(body) => Item::Doc(RawDoc {
                offset,
                url,
                content_type: resp.content_type,
                charset: resp.charset,
                body,
                date,
                status: Some(resp.status),
                ..RawDoc::default()
            }),
            Err(BodyError::TooLarge) => skip(
                offset,
                SkipReason::RecordTooLarge,
                format!("decoded body over the limit of {} bytes", self.max_record_bytes),
            ),
            Err(BodyError::Unsupported(detail)) => skip(offset, SkipReason::UnsupportedEncoding, detail),
        })
    }
}

impl Format for ArcReader {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn step(&mut self) -> io::Result<()> {
        // ARC records have no magic: whatever is not blank is read as a
        // header line, and one that does not parse is a corrupt header.
        match self.core.find_record(|_| true)? {
            Found::Record(start) | Found::Garbage(start) => self.read_record(start),
            Found::End => {
                self.core.end();
                Ok(())
            }
        }
    }
}

/// Whether `bytes` start with a URL: a scheme, a colon, and something after
/// it on the same line.
fn starts_with_url(bytes: &[u8]) -> bool {
    let scheme =
        bytes.iter().take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')).count();
    bytes.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes.get(scheme) == Some(&b':')
        && bytes.get(scheme + 1).is_some_and(|&b| !is_blank(b))
}

/// Parses a header line (its line end included or not) as `version` lays
/// it out.
fn parse_header_line(line: &[u8], version: Version) -> Result<Header, String> {
    let text = http::trim(line.strip_suffix(b"\n").unwrap_or(line));
    let fields: Vec<&[u8]> = text.split(|&b| b == b' ').collect();
    let n = fields.len();
    let count_error = || {
        let want = if version == Version::V2 { "10 (or 5)" } else { "5 or 10" };
        format!("header line with {n} fields where ARC has {want}: {}", http::snippet(text))
    };
    let v2 = match version {
        _ if n < 5 => return Err(count_error()),
        _ if n == 5 => false,
        _ if n == 10 => true,
        Version::V1 => false,
        Version::V2 if n > 10 => true,
        Version::V2 => return Err(count_error()),
    };
    let url = fields.first().copied().unwrap_or_default();
    if !starts_with_url(url) {
        return Err(format!("header line does not start with a URL: {}", http::snippet(text)));
    }
    let length = fields.last().copied().unwrap_or_default();
    if length.is_empty() || !length.iter().all(u8::is_ascii_digit) {
        return Err(format!("length is not a number: {}", http::snippet(length)));
    }
    let length = std::str::from_utf8(length)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| format!("length is too large: {}", http::snippet(length)))?;
    let type_end = if v2 { n - 6 } else { n - 1 };
    let content_type = fields.get(3..type_end).unwrap_or_default().join(&b' ');
    Ok(Header {
        url: String::from_utf8_lossy(url).into_owned(),
        content_type: String::from_utf8_lossy(&content_type).into_owned(),
        length,
        date: fields.get(2).and_then(|d| iso_date(d)),
    })
}

/// An ARC date (`YYYYMMDDhhmmss`) as a WARC-Date is written
/// (`YYYY-MM-DDThh:mm:ssZ`), `None` for any other field.
fn iso_date(field: &[u8]) -> Option<String> {
    let d =
        std::str::from_utf8(field).ok().filter(|d| d.len() == 14 && d.bytes().all(|b| b.is_ascii_digit()))?;
    Some(format!("{}-{}-{}T{}:{}:{}Z", &d[0..4], &d[4..6], &d[6..8], &d[8..10], &d[10..12], &d[12..14]))
}

/// The version a version block declares, if it says.
fn declared_version(block: &[u8]) -> Option<Version> {
    let mut lines = block.split(|&b| b == b'\n').map(http::trim);
    let version_line = lines.next().unwrap_or_default();
    match version_line.split(|&b| b == b' ').next() {
        Some(b"1") => return Some(Version::V1),
        Some(b"2") => return Some(Version::V2),
        _ => {}
    }
    let definitions = lines.next().unwrap_or_default();
    match definitions.split(|&b| b == b' ').filter(|f| !f.is_empty()).count() {
        5 => Some(Version::V1),
        10 => Some(Version::V2),
        _ => None,
    }
}

/// The media type and charset of a header line's content type field.
fn header_content_type(field: &str) -> (Option<String>, Option<String>) {
    if field.trim().eq_ignore_ascii_case("no-type") {
        return (None, None);
    }
    http::parse_content_type(field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::read::testing::{doc, drain, skipped, source};
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::{Read, Write};

    const MAX: u64 = 1 << 20;
    const DATE: &str = "20240301080000";

    /// A v1 record: header line, content, LF.
    fn v1(url: &str, content_type: &str, content: &[u8]) -> Vec<u8> {
        let mut out = format!("{url} 192.0.2.7 {DATE} {content_type} {}\n", content.len()).into_bytes();
        out.extend_from_slice(content);
        out.push(b'\n');
        out
    }

    /// A v2 record.
    fn v2(url: &str, content_type: &str, content: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "{url} 192.0.2.7 {DATE} {content_type} 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - 1234 t.arc {}\n",
            content.len()
        )
        .into_bytes();
        out.extend_from_slice(content);
        out.push(b'\n');
        out
    }

    /// The version block of an ARC file of `version` (1 or 2).
    fn filedesc(version: u8) -> Vec<u8> {
        let block = if version == 1 {
            "1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
        } else {
            "2 0 Alexa\nURL IP-address Archive-date Content-type Result-code Checksum Location \
             Offset Filename Archive-length\n<arcmetadata><x>y</x></arcmetadata>\n"
        };
        let line = if version == 1 {
            format!("filedesc://t.arc 0.0.0.0 {DATE} text/plain {}\n", block.len())
        } else {
            format!("filedesc://t.arc 0.0.0.0 {DATE} text/plain 200 - - 0 t.arc {}\n", block.len())
        };
        [line.as_bytes(), block.as_bytes(), b"\n"].concat()
    }

    fn http_response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn read_all(data: Vec<u8>) -> Vec<Item> {
        read_with(data, MAX)
    }

    fn read_with(data: Vec<u8>, max: u64) -> Vec<Item> {
        let mut reader = ArcReader::new(source(data), max);
        drain(&mut reader, 10_000)
    }

    fn reasons(items: &[Item]) -> Vec<Option<SkipReason>> {
        items
            .iter()
            .map(|i| match i {
                Item::Doc(_) => None,
                Item::Skip(s) => Some(s.reason),
                Item::Redirect(_) => Some(SkipReason::HttpRedirect),
                Item::Revisit(_) => Some(SkipReason::RevisitUnresolved),
                Item::Status(_) => Some(SkipReason::HttpStatus),
                Item::Known(_) => None,
                Item::Note(n) => panic!("a note from this reader: {n:?}"),
            })
            .collect()
    }

    fn offsets(items: &[Item]) -> Vec<u64> {
        items.iter().map(Item::offset).collect()
    }

    /// Start offsets of consecutive pieces.
    fn starts(pieces: &[Vec<u8>]) -> Vec<u64> {
        pieces.iter().scan(0u64, |at, p| Some(std::mem::replace(at, *at + p.len() as u64))).collect()
    }

    /// A small crawl of every kind of record, as separate byte strings, in
    /// the layout `record` writes.
    fn crawl(version: u8) -> Vec<Vec<u8>> {
        let record = if version == 1 { v1 } else { v2 };
        vec![
            filedesc(version),
            record("dns:a.example", "text/dns", b"20240301080000\na.example. 300 IN A 192.0.2.7\n"),
            record(
                "http://a.example/",
                "text/html",
                &http_response("200 OK", "text/html; charset=UTF-8", "<p>page a</p>"),
            ),
            record(
                "http://a.example/missing",
                "text/html",
                &http_response("404 Not Found", "text/html", "gone"),
            ),
            record("ftp://f.example/README", "text/plain", b"plain file\n"),
            record("https://b.example/", "no-type", &http_response("200 OK", "text/plain", "line one\n")),
            record("http://c.example/raw", "text/html;charset=latin1", b"<p>no status line</p>"),
        ]
    }

    fn check_crawl(items: &[Item], want_offsets: &[u64]) {
        use SkipReason::*;
        assert_eq!(
            reasons(items),
            [Some(ArcFileHeader), Some(ArcOther), None, Some(HttpStatus), None, None, None]
        );
        assert_eq!(offsets(items), want_offsets);
        assert_eq!(skipped(&items[0]).detail, "");
        let a = doc(&items[2]);
        assert_eq!(a.url, "http://a.example/");
        assert_eq!(a.content_type.as_deref(), Some("text/html"));
        assert_eq!(a.charset.as_deref(), Some("utf-8"));
        assert_eq!(a.body, b"<p>page a</p>");
        assert_eq!(skipped(&items[3]).detail, "404");
        let f = doc(&items[4]);
        assert_eq!(f.url, "ftp://f.example/README");
        assert_eq!(f.content_type.as_deref(), Some("text/plain"));
        assert_eq!(f.body, b"plain file\n");
        let b = doc(&items[5]);
        assert_eq!(b.content_type.as_deref(), Some("text/plain"), "the HTTP type, not the line's");
        assert_eq!(b.body, b"line one\n");
        let c = doc(&items[6]);
        assert_eq!(c.url, "http://c.example/raw");
        assert_eq!(c.content_type.as_deref(), Some("text/html"));
        assert_eq!(c.charset.as_deref(), Some("latin1"));
        assert_eq!(c.body, b"<p>no status line</p>");
    }

    /// Checks that the bytes from each reported offset decompress to the
    /// record (what `dd skip=OFFSET | gunzip` gives).
    fn check_slices(file: &[u8], offsets: &[u64], records: &[Vec<u8>]) {
        for (i, &offset) in offsets.iter().enumerate() {
            let mut out = Vec::new();
            flate2::bufread::GzDecoder::new(&file[offset as usize..]).read_to_end(&mut out).unwrap();
            assert_eq!(out, records[i], "record {i}");
        }
    }

    #[test]
    fn archive_dates_are_written_as_warc_dates() {
        assert_eq!(iso_date(b"20240102030405").as_deref(), Some("2024-01-02T03:04:05Z"));
        for field in [&b"2024010203040"[..], b"202401020304056", b"2024-01-02", b"2024010203040x", b""] {
            assert_eq!(iso_date(field), None, "{:?}", String::from_utf8_lossy(field));
        }
        let v1 = parse_header_line(b"http://a.example/ 1.2.3.4 19961104142103 text/html 10\n", Version::V1)
            .unwrap();
        assert_eq!(v1.date.as_deref(), Some("1996-11-04T14:21:03Z"));
    }

    #[test]
    fn v1_plain_gives_record_offsets() {
        let records = crawl(1);
        check_crawl(&read_all(records.concat()), &starts(&records));
    }

    #[test]
    fn v2_plain_gives_record_offsets() {
        let records = crawl(2);
        check_crawl(&read_all(records.concat()), &starts(&records));
    }

    #[test]
    fn per_record_gzip_gives_member_offsets_that_slice_to_the_record() {
        for version in [1, 2] {
            let records = crawl(version);
            let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
            let file = members.concat();
            let offsets = starts(&members);
            check_crawl(&read_all(file.clone()), &offsets);
            check_slices(&file, &offsets, &records);
        }
    }

    #[test]
    fn whole_file_gzip_gives_decompressed_offsets() {
        for version in [1, 2] {
            let records = crawl(version);
            check_crawl(&read_all(gz(&records.concat())), &starts(&records));
        }
    }

    /// The content type of a one-record `ftp:` file after `block`, whose
    /// header line is `line`.
    fn type_of(block: &[u8], line: &str) -> (Option<String>, Option<String>) {
        let items = read_all([block, line.as_bytes(), b"\nbody\n"].concat());
        let d = doc(items.last().unwrap());
        assert_eq!(d.body, b"body", "{line}");
        (d.content_type.clone(), d.charset.clone())
    }

    #[test]
    fn odd_content_type_fields() {
        let (one, two) = (filedesc(1), filedesc(2));
        let t = |ct: &str, cs: Option<&str>| (Some(ct.to_string()), cs.map(String::from));
        // Spaces in the type: the fields between the date and the layout's
        // tail, as written.
        assert_eq!(
            type_of(&one, "ftp://x/ 1.2.3.4 2024 text/html; charset=UTF-8 4"),
            t("text/html", Some("utf-8"))
        );
        assert_eq!(
            type_of(&two, "ftp://x/ 1.2.3.4 2024 text/html; charset=UTF-8 200 SUM - 1 t.arc 4"),
            t("text/html", Some("utf-8"))
        );
        assert_eq!(
            type_of(&one, "ftp://x/ 1.2.3.4 2024 a b c d e f g 4").0.as_deref(),
            Some("a b c d e f g")
        );
        // Ten fields in a v1 file are a v2 line, five in a v2 file a v1 line.
        assert_eq!(
            type_of(&one, "ftp://x/ 1.2.3.4 2024 text/plain 200 SUM - 1 t.arc 4"),
            t("text/plain", None)
        );
        assert_eq!(type_of(&two, "ftp://x/ 1.2.3.4 2024 text/plain 4"), t("text/plain", None));
        // No type: an empty field, or Heritrix's placeholder.
        assert_eq!(type_of(&one, "ftp://x/ 1.2.3.4 2024  4"), (None, None));
        assert_eq!(type_of(&two, "ftp://x/ 1.2.3.4 2024 no-type 200 SUM - 1 t.arc 4"), (None, None));
        assert_eq!(type_of(&one, "ftp://x/ 1.2.3.4 2024 NO-TYPE 4"), (None, None));
        // Without a version block, and with CRLF and trailing blanks.
        assert_eq!(type_of(b"", "ftp://x/ 1.2.3.4 2024 Text/Plain 4 \t\r"), t("text/plain", None));
    }

    #[test]
    fn v2_file_rejects_six_to_nine_fields() {
        let data = [
            filedesc(2),
            b"ftp://x/ 1.2.3.4 2024 text/plain 200 SUM 4\nbody\n".to_vec(),
            v2("ftp://y/", "text/plain", b"next"),
        ]
        .concat();
        let items = read_all(data);
        assert_eq!(reasons(&items), [Some(SkipReason::ArcFileHeader), Some(SkipReason::CorruptHeader), None]);
        assert!(
            skipped(&items[1]).detail.starts_with("header line with 7 fields"),
            "{}",
            skipped(&items[1]).detail
        );
        assert_eq!(doc(&items[2]).url, "ftp://y/");
        // The same line in a v1 file is a type of three fields.
        let data = [filedesc(1), b"ftp://x/ 1.2.3.4 2024 text/plain 200 SUM 4\nbody\n".to_vec()].concat();
        assert_eq!(doc(&read_all(data)[1]).content_type.as_deref(), Some("text/plain 200 sum"));
    }

    #[test]
    fn concatenated_files_switch_versions() {
        let data = [crawl(1), crawl(2), crawl(1)].concat();
        let items = read_all(data.concat());
        assert_eq!(items.len(), 21);
        let docs = items.iter().filter(|i| matches!(i, Item::Doc(_))).count();
        assert_eq!(docs, 12);
        assert!(items.iter().all(|i| !matches!(i, Item::Skip(s) if s.reason.is_corrupt())), "{items:?}");
    }

    #[test]
    fn corrupt_header_lines_in_the_middle_are_skipped_to_the_next_record() {
        let r = crawl(1);
        let four_fields =
            b"http://bad.example/ 192.0.2.7 20240301 30\n<p>a line</p>\nnot a header 5\n\n".to_vec();
        let bad_length = b"http://bad.example/ 192.0.2.7 20240301 text/html twelve\nNote: 12\nx:\n".to_vec();
        let not_url = b"<p>rest of a page</p>\n".to_vec();
        let pieces =
            [r[0].clone(), r[4].clone(), four_fields, r[2].clone(), bad_length, not_url, r[6].clone()];
        let items = read_all(pieces.concat());
        use SkipReason::*;
        let all = starts(&pieces);
        assert_eq!(
            reasons(&items),
            [Some(ArcFileHeader), None, Some(CorruptHeader), None, Some(CorruptHeader), None]
        );
        assert_eq!(offsets(&items), [all[0], all[1], all[2], all[3], all[4], all[6]]);
        assert!(skipped(&items[2]).detail.contains("4 fields"), "{}", skipped(&items[2]).detail);
        assert!(skipped(&items[4]).detail.contains("\"twelve\""), "{}", skipped(&items[4]).detail);
        assert_eq!(doc(&items[3]).body, b"<p>page a</p>");
        assert_eq!(doc(&items[5]).url, "http://c.example/raw");
        // At the very start, without a version block.
        let items = read_all([b"garbage\n".to_vec(), r[4].clone()].concat());
        assert_eq!(reasons(&items), [Some(CorruptHeader), None]);
        assert!(skipped(&items[0]).detail.contains("1 fields"), "{}", skipped(&items[0]).detail);
        let items = read_all([b"www.x.com/ 1.2.3.4 2024 text/html 3\nabc\n".to_vec(), r[4].clone()].concat());
        assert_eq!(reasons(&items), [Some(CorruptHeader), None]);
        assert!(skipped(&items[0]).detail.contains("URL"), "{}", skipped(&items[0]).detail);
        assert!(matches!(
            parse_header_line(b"http://x/ 1 2 t 99999999999999999999999\n", Version::V1),
            Err(e) if e.contains("too large")
        ));
    }

    #[test]
    fn wrong_lengths_resynchronize() {
        let r = crawl(1);
        // Too short: the rest of the content is a corrupt header line.
        let short = b"ftp://x/ 1.2.3.4 2024 text/plain 3\nabcdef\n".to_vec();
        let items = read_all([short.clone(), r[4].clone()].concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None]);
        assert_eq!(doc(&items[0]).body, b"abc");
        assert_eq!(skipped(&items[1]).offset, 38);
        assert_eq!(doc(&items[2]).offset, short.len() as u64);
    }

    /// `record` (a v1 record) with its length changed to `len`.
    fn with_length(record: &[u8], len: u64) -> Vec<u8> {
        let nl = record.iter().position(|&b| b == b'\n').unwrap();
        let line = std::str::from_utf8(&record[..nl]).unwrap();
        let head = &line[..line.rfind(' ').unwrap()];
        [format!("{head} {len}").as_bytes(), &record[nl..]].concat()
    }

    #[test]
    fn lengths_that_lie_too_long_lose_only_their_record() {
        let r = crawl(1);
        let content_len = |rec: &[u8]| {
            let nl = rec.iter().position(|&b| b == b'\n').unwrap();
            std::str::from_utf8(&rec[..nl]).unwrap().rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        };
        let real = content_len(&r[2]);
        // A page kept, a DNS record read past, a page over the limit.
        let cases =
            [(2, real + 12, MAX), (2, real + 40, MAX), (2, 1_000_000_000, MAX), (1, 500, MAX), (2, 5000, 30)];
        for (victim, lie, max) in cases {
            let bad = with_length(&r[victim], lie);
            for gzip in [false, true] {
                let plain = [r[4].clone(), bad.clone(), r[6].clone()].concat();
                let data = if gzip { gz(&plain) } else { plain };
                let whole = read_with(data.clone(), max);
                let trickled = drain(
                    &mut ArcReader::new(
                        Source::new(Box::new(crate::testing::Trickle(data, 0))).unwrap(),
                        max,
                    ),
                    1000,
                );
                assert_eq!(format!("{whole:?}"), format!("{trickled:?}"), "buffering changes what is read");
                assert_eq!(reasons(&whole), [None, Some(SkipReason::CorruptHeader), None], "{victim} {lie}");
                assert_eq!(offsets(&whole), [0, r[4].len() as u64, (r[4].len() + bad.len()) as u64]);
                assert!(skipped(&whole[1]).detail.contains("bytes skipped to it"), "{:?}", whole[1]);
                assert_eq!(doc(&whole[2]).body, b"<p>no status line</p>");
            }
            // Per-record gzip stops at the next member.
            let members = [gz(&r[4]), gz(&bad), gz(&r[6])];
            let items = read_with(members.concat(), max);
            assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None], "{victim} {lie}");
            assert_eq!(offsets(&items)[2], (members[0].len() + members[1].len()) as u64);
        }
    }

    #[test]
    fn per_record_gzip_resynchronizes_at_the_next_member() {
        let r = crawl(1);
        // Members of garbage without a line end, each followed by a good
        // record: the garbage is not read on into the record's header line.
        let members = vec![
            gz(&r[0]),
            gz(b"oops http://x/ 1 2 t"),
            gz(&r[2]),
            gz(b"junk\nhttp://x/ 1.2.3.4 2024 text/plain"),
            gz(&r[4]),
        ];
        let items = read_all(members.concat());
        use SkipReason::*;
        assert_eq!(
            reasons(&items),
            [Some(ArcFileHeader), Some(CorruptHeader), None, Some(CorruptHeader), None]
        );
        assert_eq!(offsets(&items), starts(&members));
        assert_eq!(doc(&items[4]).url, "ftp://f.example/README");
    }

    #[test]
    fn header_line_running_into_the_next_member_is_corrupt() {
        let r = crawl(1);
        let members = [gz(b"http://x/ 1.2.3.4 2024 text/plain 5"), gz(&r[4])];
        let items = read_all(members.concat());
        assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader), None]);
        assert!(skipped(&items[0]).detail.contains("gzip member"), "{}", skipped(&items[0]).detail);
        assert_eq!(doc(&items[1]).offset, members[0].len() as u64);
    }

    #[test]
    fn header_line_too_long_is_corrupt() {
        let r = crawl(1);
        let long = format!("http://x/{} 1.2.3.4 2024 text/plain 1\nx\n", "a".repeat(MAX_HEADER_LINE));
        let items = read_all([long.into_bytes(), r[4].clone()].concat());
        assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader), None]);
        assert!(skipped(&items[0]).detail.contains("longer than"), "{}", skipped(&items[0]).detail);
        // Just under the limit is fine.
        let url = format!("http://x/{}", "a".repeat(MAX_HEADER_LINE - 60));
        let items = read_all(v1(&url, "text/plain", b"x"));
        assert_eq!(doc(&items[0]).url, url);
    }

    #[test]
    fn truncated_last_record() {
        let r = crawl(1);
        let whole = [r[0].clone(), r[4].clone()].concat();
        use SkipReason::*;
        // Cut in the content, and in the header line.
        for cut in [r[2].len() - 10, 20] {
            let items = read_all([whole.clone(), r[2][..cut].to_vec()].concat());
            assert_eq!(reasons(&items), [Some(ArcFileHeader), None, Some(TruncatedRecord)], "cut at {cut}");
            assert_eq!(skipped(&items[2]).offset, whole.len() as u64);
        }
        // Per-record gzip: the record is cut (its member is whole), or its member is.
        let first = [gz(&r[0]), gz(&r[4])].concat();
        let items = read_all([first.clone(), gz(&r[2][..r[2].len() - 10])].concat());
        assert_eq!(reasons(&items), [Some(ArcFileHeader), None, Some(TruncatedRecord)]);
        let member = gz(&r[2]);
        let items = read_all([first.clone(), member[..member.len() - 12].to_vec()].concat());
        assert_eq!(reasons(&items), [Some(ArcFileHeader), None, Some(TruncatedRecord)]);
        assert_eq!(skipped(&items[2]).offset, first.len() as u64);
        // Whole-file gzip cut off: the record in progress.
        let file = gz(&[whole.clone(), r[2].clone()].concat());
        let items = read_all(file[..file.len() - 12].to_vec());
        assert_eq!(reasons(&items), [Some(ArcFileHeader), None, Some(TruncatedRecord)]);
        assert_eq!(skipped(&items[2]).offset, whole.len() as u64);
    }

    #[test]
    fn record_ends_are_optional_and_blank_lines_between_records_ignored() {
        let r = crawl(1);
        let strip = |rec: &Vec<u8>| rec[..rec.len() - 1].to_vec();
        let data = [
            r[0].clone(),
            b"\n\r\n  \n".to_vec(),
            strip(&r[4]),
            strip(&r[2]),
            b"\r\n".to_vec(),
            strip(&r[6]),
        ]
        .concat();
        let items = read_all(data);
        assert_eq!(reasons(&items), [Some(SkipReason::ArcFileHeader), None, None, None]);
        assert_eq!(doc(&items[1]).body, b"plain file\n");
        assert_eq!(doc(&items[2]).body, b"<p>page a</p>");
        // The last record without its LF, at the end of the input.
        assert_eq!(doc(&items[3]).body, b"<p>no status line</p>");
        // CRLF after the header line and after the content.
        let items = read_all(
            b"ftp://x/ 1.2.3.4 2024 text/plain 2\r\nhi\r\nftp://y/ 1.2.3.4 2024 text/plain 0\r\n".to_vec(),
        );
        assert_eq!(reasons(&items), [None, None]);
        assert_eq!(doc(&items[0]).body, b"hi");
        assert_eq!(doc(&items[1]).body, b"");
    }

    #[test]
    fn records_over_the_limit_are_read_past_and_huge_lengths_do_not_allocate() {
        let r = crawl(1);
        let big = v1("ftp://big/", "text/plain", &vec![b'x'; 5000]);
        let items = read_with([r[0].clone(), big.clone(), r[4].clone(), r[1].clone()].concat(), 1000);
        use SkipReason::*;
        assert_eq!(reasons(&items), [Some(ArcFileHeader), Some(RecordTooLarge), None, Some(ArcOther)]);
        assert_eq!(doc(&items[2]).offset, (r[0].len() + big.len()) as u64);
        // Huge declared lengths: the record is just cut off.
        for kind in ["ftp://x/", "dns:x", "filedesc://x"] {
            let huge = format!("{kind} 1.2.3.4 2024 text/plain 18000000000000000000\nabc").into_bytes();
            assert_eq!(reasons(&read_with(huge, u64::MAX)), [Some(TruncatedRecord)], "{kind}");
        }
    }

    #[test]
    fn http_content_is_decoded_and_bad_http_headers_are_corrupt() {
        let mut gzipped =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        gzipped.extend_from_slice(&gz(b"<p>compressed page</p>"));
        let chunked = b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5\r\nhello\r\n0\r\n\r\n";
        let data = [
            v1("http://x/", "text/html", &gzipped),
            v1("http://y/", "text/html", chunked),
            v1("http://z/", "text/html", b"HTTP/1.1 200 OK\r\nbroken\r\n\r\nx"),
            v1("http://w/", "text/html", b"HTTP/1.0 302 Found\r\nLocation: /\r\n\r\n"),
            v1("http://v/", "text/html", b"HTTP/1.0 304 Not Modified\r\n\r\n"),
        ]
        .concat();
        let items = read_all(data);
        assert_eq!(doc(&items[0]).body, b"<p>compressed page</p>");
        assert_eq!(doc(&items[1]).body, b"hello");
        assert_eq!(doc(&items[1]).content_type, None);
        assert_eq!(skipped(&items[2]).reason, SkipReason::CorruptHeader);
        assert!(skipped(&items[2]).detail.contains("broken"));
        let Item::Redirect(r) = &items[3] else { panic!("{:?}", items[3]) };
        assert_eq!((r.url.as_str(), r.status, r.location.as_str()), ("http://w/", 302, "/"));
        assert_eq!(skipped(&items[4]).reason, SkipReason::HttpStatus);
        assert_eq!(skipped(&items[4]).detail, "304");
    }

    #[test]
    fn corrupt_gzip_member_in_the_middle_is_one_skip() {
        let records = crawl(1);
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let m = &mut members[2];
        let mid = 10 + (m.len() - 18) / 3;
        for b in &mut m[mid..mid + 8] {
            *b ^= 0xa5;
        }
        let offsets = starts(&members);
        let items = read_all(members.concat());
        use SkipReason::*;
        assert_eq!(
            reasons(&items),
            [Some(ArcFileHeader), Some(ArcOther), Some(CorruptGzip), Some(HttpStatus), None, None, None]
        );
        assert_eq!(skipped(&items[2]).offset, offsets[2]);
        assert_eq!(doc(&items[4]).offset, offsets[4]);
        // A CRC error drops its record only.
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let n = members[4].len();
        members[4][n - 6] ^= 0xff;
        let items = read_all(members.concat());
        assert_eq!(reasons(&items)[4], Some(CorruptGzip));
        assert_eq!(super::tests::offsets(&items)[4], offsets[4]);
        assert_eq!(items.len(), 7);
    }

    #[test]
    fn version_blocks() {
        assert_eq!(declared_version(b"1 0 InternetArchive\nURL IP-address\n"), Some(Version::V1));
        assert_eq!(declared_version(b"2 0 Alexa\n"), Some(Version::V2));
        assert_eq!(
            declared_version(b"x\nURL IP-address Archive-date Content-type Archive-length\n"),
            Some(Version::V1)
        );
        assert_eq!(declared_version(b"x\na b c d e f g h i j\n"), Some(Version::V2));
        assert_eq!(declared_version(b""), None);
        assert_eq!(declared_version(b"3 0 future\nx\n"), None);
    }

    #[test]
    fn empty_and_blank_inputs_give_nothing() {
        assert!(read_all(Vec::new()).is_empty());
        assert!(read_all(b"\r\n\r\n  \n".to_vec()).is_empty());
        assert!(read_all(gz(b"")).is_empty());
    }

    proptest::proptest! {
        /// Garbage after one record, or its header line garbled, loses
        /// nothing but that record; a gzip member damaged anywhere, nothing
        /// but its record.
        #[test]
        fn damage_to_one_record_loses_only_it(
            n in 2usize..7,
            victim in 0usize..7,
            junk in "[a-z0-9 ]{1,40}",
            how in 0u8..3,
            flip in (proptest::prelude::any::<usize>(), 1..=255u8),
        ) {
            let victim = victim % n;
            let records: Vec<Vec<u8>> =
                (0..n).map(|i| v1(&format!("http://a.example/{i}"), "text/plain", format!("page {i}").as_bytes())).collect();
            let mut pieces = records.clone();
            match how {
                0 => pieces.insert(victim + 1, format!("{junk}\n").into_bytes()),
                1 => pieces[victim] = [format!("{junk} ").as_bytes(), &records[victim]].concat(),
                _ => {}
            }
            let gzip = how == 2;
            if gzip {
                pieces = pieces.iter().map(|p| gz(p)).collect();
                let m = &mut pieces[victim];
                let at = flip.0 % m.len();
                m[at] ^= flip.1;
            }
            let starts = starts(&pieces);
            let got = crate::bytes::read::testing::documents(&read_all(pieces.concat()));
            for i in 0..n {
                if i == victim {
                    continue;
                }
                let at = if how == 0 && i > victim { starts[i + 1] } else { starts[i] };
                let want = (at, format!("http://a.example/{i}"), format!("page {i}").into_bytes());
                proptest::prop_assert!(got.contains(&want), "record {} lost: {:?}", i, got);
            }
        }
    }
}
