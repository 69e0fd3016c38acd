//! WARC 1.0 and 1.1 (plain, per-record gzip, whole-file gzip), and WET.
//!
//! The `warc` crate (0.4) was evaluated for this and is used only in tests,
//! as an independent writer of test files. Its reader does not fit here: it
//! does not report where a record starts (in the file or in a gzip member),
//! so documents could not be traced back; after a bad header or a bad gzip
//! member it returns an error and cannot find the next record; it reads a
//! whole block into memory whatever `Content-Length` says; and it requires
//! CRLF line ends. So the reading is ours, over [`Source`].
//!
//! # Grammar as accepted
//!
//! ```text
//! file       = *( blank / garbage / record )
//! record     = version-line *header-line blank-line block [record-end]
//! version-line = "WARC/" 1*DIGIT "." 1*DIGIT *(SP / HT) EOL
//! header-line  = name ":" value EOL         ; name: not empty, any case
//!              / (SP / HT) value EOL        ; continuation of the previous value
//! blank-line = EOL
//! EOL        = CRLF / LF
//! block      = Content-Length bytes
//! record-end = up to 4 bytes of CR / LF     ; CRLF CRLF, or less, or none
//! blank      = SP / HT / CR / LF            ; between records, ignored
//! ```
//!
//! Any `WARC/<digits>.<digits>` version is read with these rules, which is
//! right for 1.0, 1.1 and the 0.17 and 0.18 drafts that older crawlers
//! wrote. A record starts where a record is expected and the bytes are
//! `WARC/` and a digit; anything else there is garbage up to the next line
//! (or gzip member) that starts that way, reported as one
//! [`SkipReason::Garbage`] skip.
//!
//! Required fields: `Content-Length` (decimal digits only) and `WARC-Type`.
//! Used fields: `WARC-Target-URI` (angle brackets around it, as wget writes,
//! are removed) and `Content-Type`. When a field appears twice, the first
//! one counts.
//!
//! | record | item |
//! |---|---|
//! | `response` with an HTTP block (`Content-Type: application/http` or the block starts with `HTTP/`) | status 200: a document of the HTTP body (chunked framing and gzip/deflate content coding removed), typed by the HTTP `Content-Type`; other status: [`SkipReason::HttpStatus`] with the code |
//! | `response` without an HTTP block, `resource` | a document of the block, typed by the WARC `Content-Type` |
//! | `conversion` (WET) | a document of the block, typed by the WARC `Content-Type`, `text/plain` when there is none |
//! | `request`, `metadata`, `warcinfo`, `revisit` | a skip with the matching reason |
//! | any other type (`continuation`, unknown) | [`SkipReason::WarcOtherType`] |
//!
//! Damage: a version line that does not parse, a header line without a
//! colon, a missing or non-numeric `Content-Length`, or a header longer than
//! `MAX_HEADER_BYTES` is a [`SkipReason::CorruptHeader`] skip of the
//! record, whose bytes up to the next record start belong to it. A header
//! that runs into the next record's version line is a `CorruptHeader` skip
//! too, and reading goes on with that record. A record without `WARC-Type`
//! is a `CorruptHeader` skip, its block skipped by its length. In a
//! per-record gzip file, a `Content-Length` that runs past the record's
//! gzip member into a member that starts with a record is a lie: the record
//! is a `CorruptHeader` skip and reading goes on with that next record; in
//! plain or whole-file compressed input, a block that is not followed by a
//! record end and a record, and holds a record header, lied the same way
//! (see [`super::block`]). A record that ends before its header or block
//! does is a
//! [`SkipReason::TruncatedRecord`] skip. A block longer than
//! `max_record_bytes` in a record that could be a document is read past and
//! skipped with [`SkipReason::RecordTooLarge`]; blocks of other records are
//! never kept.

use std::borrow::Cow;
use std::io;

use super::block::{self, Claim, Lookout};
use super::budget::Keeping;
use super::digest::{self, Digest};
use super::gz::{self, Source, Start, skip};
use super::http::{self, BodyError};
use super::records::{Core, Format, Found, LOOK, is_blank};
use super::{Body, Item, Known, RawDoc, Revisit, SkipReason};

/// The longest record header read; a longer one is a corrupt header (real
/// ones are well under 10 KiB).
pub(crate) const MAX_HEADER_BYTES: usize = 1 << 20;

/// How much of a block's buffer is reserved before reading it: a huge
/// `Content-Length` must not allocate before its bytes are there.
const RESERVE_MAX: u64 = 1 << 20;

/// How a record start is told inside a block whose length may lie
/// ([`block`]): a version line that begins a header that parses.
const LOOKOUT: Lookout = Lookout {
    prefix: b"WARC/",
    starts: &looks_like_version,
    confirms: &|b| whole_header(b).is_some_and(|n| parse_header(b.get(..n).unwrap_or_default()).is_ok()),
};

/// Reads WARC records from a [`Source`].
pub struct WarcReader {
    core: Core,
    max_record_bytes: u64,
    /// The current record's header, reused.
    head: Vec<u8>,
    /// Which pages' bodies need not be read.
    known: Option<Known>,
    /// Whether the bytes of each record whose block is read are kept
    /// ([`WarcReader::keeping_records`]).
    keep_records: bool,
    /// The last such record: its offset, header and block as read.
    record: Option<(u64, Vec<u8>)>,
}

/// How reading a record header ended.
enum HeaderRead {
    /// The header, up to its blank line, is in `head`.
    Complete,
    /// The next record's version line came before a blank line.
    CutByRecord,
    /// Longer than [`MAX_HEADER_BYTES`].
    TooLong,
    /// The input ended or broke: the skips are queued.
    Lost,
}

/// What a record's `WARC-Type` makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Response,
    Resource,
    Conversion,
    Revisit,
    NotDocument(SkipReason),
    Missing,
}

impl Kind {
    fn of(warc_type: Option<&str>) -> Kind {
        let Some(t) = warc_type else { return Kind::Missing };
        // Compared in place: lowercasing into a new string allocated for
        // every record.
        let kinds = [
            ("response", Kind::Response),
            ("resource", Kind::Resource),
            ("conversion", Kind::Conversion),
            ("request", Kind::NotDocument(SkipReason::WarcRequest)),
            ("metadata", Kind::NotDocument(SkipReason::WarcMetadata)),
            ("warcinfo", Kind::NotDocument(SkipReason::WarcInfo)),
            ("revisit", Kind::Revisit),
            ("continuation", Kind::NotDocument(SkipReason::SegmentedRecord)),
        ];
        kinds
            .into_iter()
            .find(|(name, _)| t.eq_ignore_ascii_case(name))
            .map_or(Kind::NotDocument(SkipReason::WarcOtherType), |(_, kind)| kind)
    }

    /// Whether the block is kept: a revisit's is too, for its HTTP status.
    fn may_be_document(self) -> bool {
        matches!(self, Kind::Response | Kind::Resource | Kind::Conversion | Kind::Revisit)
    }
}

/// The header fields the reader uses, borrowed from the record header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Fields<'h> {
    warc_type: Option<Cow<'h, str>>,
    content_length: u64,
    target_uri: Option<Cow<'h, str>>,
    content_type: Option<Cow<'h, str>>,
    payload_digest: Option<Cow<'h, str>>,
    date: Option<Cow<'h, str>>,
    refers_to_uri: Option<Cow<'h, str>>,
    refers_to_date: Option<Cow<'h, str>>,
    segment_number: Option<Cow<'h, str>>,
}

impl WarcReader {
    /// A reader of `src`, keeping blocks of at most `max_record_bytes`.
    pub fn new(src: Source, max_record_bytes: u64) -> WarcReader {
        WarcReader {
            core: Core::new(src),
            max_record_bytes,
            head: Vec::new(),
            known: None,
            keep_records: false,
            record: None,
        }
    }

    /// A reader that also keeps the bytes of each record that may be a
    /// document (its header and block exactly as they are in the input,
    /// without the record end), for [`WarcReader::take_record`]: what
    /// `overlap dedup` copies into the WARC file it writes. Costs one copy
    /// of each such record.
    pub(crate) fn keeping_records(mut self) -> WarcReader {
        self.keep_records = true;
        self
    }

    /// The bytes of the record at `offset`, if it is the last one read
    /// whose bytes were kept.
    pub(crate) fn take_record(&mut self, offset: u64) -> Option<Vec<u8>> {
        self.record.take_if(|(at, _)| *at == offset).map(|(_, bytes)| bytes)
    }

    /// A reader that leaves compressed the body of every per-record gzip
    /// response `known` says is known, and yields it as [`Item::Known`].
    pub(crate) fn knowing(mut self, known: Option<Known>) -> WarcReader {
        if known.is_some() && self.core.src.is_gzip() {
            self.core.src.frugal();
            self.known = known;
        }
        self
    }

    /// Reports the bytes at `start` up to the next record start as one
    /// garbage skip.
    fn skip_garbage(&mut self, start: Start) -> io::Result<()> {
        let n = self.skip_to_record_start()?;
        let item = skip(start.offset, SkipReason::Garbage, format!("{n} bytes that are not a WARC record"));
        self.core.push_unless_damaged(start, item)
    }

    /// Consumes lines until one (or a gzip member) starts with a version
    /// line, or the input ends or breaks. Returns the bytes consumed.
    fn skip_to_record_start(&mut self) -> io::Result<u64> {
        let mut skipped = 0;
        while !looks_like_version(self.core.src.peek(LOOK)?) {
            let n = self.core.src.skip_line(|_| ())?;
            if n == 0 {
                break;
            }
            skipped += n;
        }
        Ok(skipped)
    }

    /// Reads the record at `start` and queues its item (or skips).
    fn read_record(&mut self, start: Start) -> io::Result<()> {
        match self.read_header(start)? {
            HeaderRead::Complete => {}
            HeaderRead::Lost => return Ok(()),
            HeaderRead::CutByRecord => {
                let detail = "record header not ended by a blank line before the next record";
                let item = skip(start.offset, SkipReason::CorruptHeader, detail);
                return self.core.push_unless_damaged(start, item);
            }
            HeaderRead::TooLong => {
                let detail = format!("record header longer than {MAX_HEADER_BYTES} bytes");
                return self.corrupt(start, detail);
            }
        }
        // The fields borrow the header, so it is moved out of the reader
        // while the block is read.
        let head = std::mem::take(&mut self.head);
        let read = self.read_block(start, &head);
        self.head = head;
        read
    }

    /// Reads the block of the record at `start`, whose header `head` was
    /// just read, and queues its item (or skips).
    fn read_block(&mut self, start: Start, head: &[u8]) -> io::Result<()> {
        let fields = match parse_header(head) {
            Ok(fields) => fields,
            Err(detail) => return self.corrupt(start, detail),
        };
        let kind = Kind::of(fields.warc_type.as_deref());
        let len = fields.content_length;
        let keep = kind.may_be_document() && len <= self.max_record_bytes;
        if keep
            && kind == Kind::Response
            && fields.segment_number.is_none()
            && let Some(known) = self.known_page(start, &fields)?
        {
            return self.core.push_unless_damaged(start, known);
        }
        let mut block = Vec::new();
        if keep {
            // A big page waits here for room in the budget, before it is
            // read.
            self.core.keeping.cover(len)?;
            block.reserve(usize::try_from(len.min(RESERVE_MAX)).unwrap_or(0));
        }
        let claim = Claim { len, keep: if keep { len } else { 0 }, cap: self.max_record_bytes };
        let read = block::read(&mut self.core.src, start, claim, &mut block, &LOOKOUT)?;
        let got = read.got;
        if read.overran {
            let detail = format!("Content-Length {len} runs past the end of its gzip member ({got} bytes)");
            let item = skip(start.offset, SkipReason::CorruptHeader, detail);
            return self.core.push_unless_damaged(start, item);
        }
        // A length is believed when the block ends where a record may end,
        // and when damaged data cut it off (the damage is what is reported).
        let believed = (got < len && self.core.src.at_break()) || (got == len && self.at_record_end()?);
        if !believed && let Some(at) = block::take_back(&mut self.core.src, &read, &block, &LOOKOUT)? {
            let lost = head.len() as u64 + at;
            let detail = format!(
                "Content-Length {len} runs into a record that starts {at} bytes into the block; \
                 {lost} bytes skipped to it"
            );
            let item = skip(start.offset, SkipReason::CorruptHeader, detail);
            return self.core.push_unless_damaged(start, item);
        }
        if got < len {
            self.core.lost(start, format!("block cut off at end of input after {got} of {len} bytes"));
            return Ok(());
        }
        self.skip_record_end()?;
        if self.keep_records && keep {
            self.record = Some((start.offset, [head, &block].concat()));
        }
        let mut keeping = std::mem::take(&mut self.core.keeping);
        let item = self.item(start.offset, &fields, kind, keep, block, &mut keeping);
        self.core.keeping = keeping;
        self.core.push_unless_damaged(start, item?)
    }

    /// The response at `start`, whose header `fields` was just read, as an
    /// [`Item::Known`] with its member skipped, when the reader was told its
    /// payload is known and the member holds just this record; `None`,
    /// with nothing consumed, otherwise.
    fn known_page(&mut self, start: Start, fields: &Fields) -> io::Result<Option<Item>> {
        let Some(known) = &self.known else { return Ok(None) };
        let (Some(url), Some(digest)) =
            (fields.target_uri.as_deref(), fields.payload_digest.as_deref().and_then(digest::parse))
        else {
            return Ok(None);
        };
        let header_len = self.core.src.pos() - start.pos;
        let len = fields.content_length;
        // Only as much of the block as its HTTP header takes is inflated:
        // a few hundred bytes, looked at in growing pieces.
        let most = usize::try_from(len.min(gz::FRUGAL_BYTES.saturating_sub(header_len))).unwrap_or(0);
        let mut peek = most.min(1024);
        let resp = loop {
            let head = self.core.src.peek(peek)?;
            if !head.starts_with(b"HTTP/") {
                return Ok(None);
            }
            match http::parse_response(head) {
                Ok(resp) if resp.body_start < head.len() => break resp,
                _ if peek < most && head.len() >= peek => peek = (peek * 4).min(most),
                _ => return Ok(None),
            }
        };
        if resp.status != 200 {
            return Ok(None);
        }
        let codings = resp.codings();
        let raw = RawDoc {
            offset: start.offset,
            url: strip_angle_brackets(url).to_string(),
            content_type: resp.content_type,
            charset: resp.charset,
            payload_digest: Some(digest),
            date: fields.date.as_deref().map(str::to_string),
            status: Some(resp.status),
            codings,
            ..RawDoc::default()
        };
        // The member holds the header, the block and up to four bytes of
        // record end.
        let size = header_len + len;
        if !(known.0)(&raw) || !self.core.src.skip_member(start, size..=size + 4)? {
            return Ok(None);
        }
        Ok(Some(Item::Known(raw)))
    }

    /// Reads a record header into `head`: at once when the buffer holds
    /// all of it ([`whole_header`]), otherwise line by line.
    fn read_header(&mut self, start: Start) -> io::Result<HeaderRead> {
        self.head.clear();
        let buf = self.core.src.fill_buf()?;
        if let Some(len) = whole_header(buf) {
            self.head.extend_from_slice(buf.get(..len).unwrap_or_default());
            self.core.src.consume(len);
            return Ok(HeaderRead::Complete);
        }
        let mut first = true;
        loop {
            if !first && looks_like_version(self.core.src.peek(LOOK)?) {
                return Ok(HeaderRead::CutByRecord);
            }
            let line_start = self.head.len();
            let line = self.core.src.read_line(&mut self.head, MAX_HEADER_BYTES)?;
            if !line.complete {
                self.core.lost(start, "record header cut off at end of input");
                return Ok(HeaderRead::Lost);
            }
            if self.head.len() >= MAX_HEADER_BYTES {
                return Ok(HeaderRead::TooLong);
            }
            if !first && self.head.get(line_start..).is_some_and(ends_header) {
                return Ok(HeaderRead::Complete);
            }
            first = false;
        }
    }

    /// Skips the rest of the record at `start`, up to the next record start,
    /// and queues a corrupt-header skip for it.
    fn corrupt(&mut self, start: Start, detail: String) -> io::Result<()> {
        self.skip_to_record_start()?;
        self.core.push_unless_damaged(start, skip(start.offset, SkipReason::CorruptHeader, detail))
    }

    /// Whether the bytes after a block are what may follow a record: blanks
    /// (its record end), then the next record or the end of the data. When
    /// they are not, the block's length may have lied ([`block`]).
    fn at_record_end(&mut self) -> io::Result<bool> {
        let head = self.core.src.peek(LOOK)?;
        let blanks = head.iter().take_while(|&&b| is_blank(b)).count();
        Ok(head.get(blanks..).is_none_or(|rest| rest.is_empty() || looks_like_version(rest)))
    }

    /// Consumes the CRLF CRLF after a block, or as much of it as is there.
    fn skip_record_end(&mut self) -> io::Result<()> {
        let n = self.core.src.peek(4)?.iter().take(4).take_while(|&&b| b == b'\r' || b == b'\n').count();
        self.core.src.consume(n);
        Ok(())
    }

    /// The item for a whole, undamaged record.
    /// `keeping` covers a body as it is decoded; its error (the command
    /// was asked to stop) is the only one.
    fn item(
        &self,
        offset: u64,
        fields: &Fields,
        kind: Kind,
        keep: bool,
        block: Vec<u8>,
        keeping: &mut Keeping,
    ) -> io::Result<Item> {
        // Most records of a crawl are requests and metadata: they are
        // skipped before their fields are parsed.
        if let Some(item) = self.skipped(offset, fields, kind, keep) {
            return Ok(item);
        }
        let url = fields.target_uri.as_deref().map(strip_angle_brackets).unwrap_or_default().to_string();
        // The record's own type is parsed only where it is used: a response
        // whose block starts like HTTP is typed by its HTTP header.
        let types = || fields.content_type.as_deref().map(http::parse_content_type).unwrap_or_default();
        let payload_digest = fields.payload_digest.as_deref().and_then(digest::parse);
        let date = || fields.date.as_deref().map(str::to_string);
        Ok(match kind {
            Kind::Revisit => revisit_item(offset, url, fields, payload_digest, &block),
            Kind::Response
                if block.starts_with(b"HTTP/") || types().0.as_deref() == Some("application/http") =>
            {
                self.http_item(offset, url, block, payload_digest, date(), keeping)?
            }
            _ => {
                let (content_type, charset) = types();
                let content_type = match kind {
                    Kind::Conversion => content_type.or_else(|| Some("text/plain".to_string())),
                    _ => content_type,
                };
                Item::Doc(RawDoc {
                    offset,
                    url,
                    content_type,
                    charset,
                    body: block.into(),
                    payload_digest,
                    date: date(),
                    ..RawDoc::default()
                })
            }
        })
    }

    /// The skip for a record that is no document, or cannot be read as
    /// one; `None` for a record to read.
    fn skipped(&self, offset: u64, fields: &Fields, kind: Kind, keep: bool) -> Option<Item> {
        Some(match kind {
            Kind::NotDocument(reason) => skip(offset, reason, ""),
            Kind::Missing => skip(offset, SkipReason::CorruptHeader, "record without WARC-Type"),
            _ if fields.segment_number.is_some() => skip(
                offset,
                SkipReason::SegmentedRecord,
                format!("segment {} of a segmented record", fields.segment_number.as_deref().unwrap_or("")),
            ),
            _ if !keep => skip(
                offset,
                SkipReason::RecordTooLarge,
                format!(
                    "{}-byte block over the limit of {} bytes",
                    fields.content_length, self.max_record_bytes
                ),
            ),
            _ => return None,
        })
    }

    /// The item for a response record whose block is an HTTP response.
    fn http_item(
        &self,
        offset: u64,
        url: String,
        block: Vec<u8>,
        payload_digest: Option<Digest>,
        date: Option<String>,
        keeping: &mut Keeping,
    ) -> io::Result<Item> {
        let resp = match http::parse_response(&block) {
            Ok(resp) => resp,
            Err(detail) => {
                return Ok(skip(offset, SkipReason::CorruptHeader, format!("HTTP header: {detail}")));
            }
        };
        if resp.status != 200 {
            return Ok(http::not_ok_item(offset, &url, &resp));
        }
        let codings = resp.codings();
        let body = Body::after(block, resp.body_start);
        Ok(match http::decode_body(&resp, body, self.max_record_bytes, &mut |n| keeping.cover(n))? {
            Ok(body) => Item::Doc(RawDoc {
                offset,
                url,
                content_type: resp.content_type,
                charset: resp.charset,
                body,
                payload_digest,
                date,
                status: Some(resp.status),
                codings,
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

/// The item for a revisit record. Its block, when it has one, is the HTTP
/// header of the new capture: a status other than 200 makes it what such a
/// response would be (a redirect, a skip), since only a 200 repeats a page.
fn revisit_item(
    offset: u64,
    url: String,
    fields: &Fields,
    payload_digest: Option<Digest>,
    block: &[u8],
) -> Item {
    if block.starts_with(b"HTTP/") {
        match http::parse_response(block) {
            Ok(resp) if resp.status != 200 => return http::not_ok_item(offset, &url, &resp),
            Ok(_) => {}
            Err(detail) => return skip(offset, SkipReason::CorruptHeader, format!("HTTP header: {detail}")),
        }
    }
    let refers_to = match (&fields.refers_to_uri, &fields.refers_to_date) {
        (Some(uri), Some(date)) => Some((strip_angle_brackets(uri).to_string(), date.to_string())),
        _ => None,
    };
    let date = fields.date.as_deref().map(str::to_string);
    Item::Revisit(Revisit { offset, url, payload_digest, refers_to, date })
}

impl Format for WarcReader {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn step(&mut self) -> io::Result<()> {
        loop {
            match self.core.find_record(looks_like_version)? {
                Found::Record(start) => return self.read_record(start),
                Found::Garbage(start) => self.skip_garbage(start)?,
                Found::End => {
                    self.core.end();
                    return Ok(());
                }
            }
        }
    }
}

/// The length of the record header at the start of `buf`, through the
/// blank line that ends it, when `buf` holds all of it and reading it
/// line by line would find it complete: no line after the first starts
/// like a record, and it is shorter than [`MAX_HEADER_BYTES`]. `None`
/// leaves the header to be read line by line, which decides the rest.
///
/// The header of a per-record gzip member is nearly always whole in the
/// source's buffer. Read line by line (a call, a search and a copy for
/// each of its ten or so lines, and a look ahead before each), it took
/// 1.8% of the fingerprint stage's instructions (`callgrind`, one thread,
/// 40 MB of the generated crawl at the paper's page size).
fn whole_header(buf: &[u8]) -> Option<usize> {
    let buf = buf.get(..MAX_HEADER_BYTES - 1).unwrap_or(buf);
    let mut ends = memchr::memchr_iter(b'\n', buf);
    // The version line is not looked at here: the caller found it.
    let mut line_start = ends.next()? + 1;
    for end in ends {
        let line = buf.get(line_start..=end).unwrap_or_default();
        if ends_header(line) {
            return Some(end + 1);
        }
        if looks_like_version(line) {
            return None;
        }
        line_start = end + 1;
    }
    None
}

/// Whether a header line (with its line end) is the blank line that ends
/// the header.
///
/// Carriage returns before the line feed are ignored however many there
/// are: some writers end header lines with CR CR LF (the test file
/// `missing-status-text.warc` of Warcat does), which warcio reads by
/// stripping each line's trailing white space; a field's value is trimmed
/// of them the same way ([`http::trim`]).
fn ends_header(line: &[u8]) -> bool {
    line.strip_suffix(b"\n").is_some_and(|rest| rest.iter().all(|&b| b == b'\r'))
}

/// Whether `head` starts like a record: `WARC/` and a digit.
fn looks_like_version(head: &[u8]) -> bool {
    head.strip_prefix(b"WARC/").and_then(|rest| rest.first()).is_some_and(u8::is_ascii_digit)
}

/// Parses a record header: version line, fields, blank line.
fn parse_header(head: &[u8]) -> Result<Fields<'_>, String> {
    let (version, rest) = match gz::find_byte(b'\n', head) {
        Some(i) => (head.get(..i).unwrap_or_default(), head.get(i + 1..).unwrap_or_default()),
        None => (head, &[][..]),
    };
    check_version(http::trim(version))?;
    let text = http::HeaderText::new(rest);
    let mut fields = Fields::default();
    let mut length = None;
    for field in http::FieldLines::new(rest) {
        let (name, value) = field?;
        let slot = match name {
            _ if name.eq_ignore_ascii_case(b"Content-Length") => &mut length,
            _ if name.eq_ignore_ascii_case(b"WARC-Type") => &mut fields.warc_type,
            _ if name.eq_ignore_ascii_case(b"WARC-Target-URI") => &mut fields.target_uri,
            _ if name.eq_ignore_ascii_case(b"Content-Type") => &mut fields.content_type,
            _ if name.eq_ignore_ascii_case(b"WARC-Payload-Digest") => &mut fields.payload_digest,
            _ if name.eq_ignore_ascii_case(b"WARC-Date") => &mut fields.date,
            _ if name.eq_ignore_ascii_case(b"WARC-Refers-To-Target-URI") => &mut fields.refers_to_uri,
            _ if name.eq_ignore_ascii_case(b"WARC-Refers-To-Date") => &mut fields.refers_to_date,
            _ if name.eq_ignore_ascii_case(b"WARC-Segment-Number") => &mut fields.segment_number,
            _ => continue,
        };
        // The first of a repeated field counts.
        if slot.is_none() {
            *slot = Some(text.value(value));
        }
    }
    let length = length.ok_or("record header without Content-Length")?;
    fields.content_length = parse_length(&length)?;
    Ok(fields)
}

/// Accepts `WARC/<digits>.<digits>`.
fn check_version(line: &[u8]) -> Result<(), String> {
    let ok = line.strip_prefix(b"WARC/").and_then(|v| {
        let dot = gz::find_byte(b'.', v)?;
        let (major, minor) = (v.get(..dot)?, v.get(dot + 1..)?);
        let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
        Some(digits(major) && digits(minor))
    });
    if ok == Some(true) { Ok(()) } else { Err(format!("bad WARC version line {}", http::snippet(line))) }
}

/// A `Content-Length` value: decimal digits only.
pub(crate) fn parse_length(value: &str) -> Result<u64, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("Content-Length is not a number: {value:?}"));
    }
    value.parse().map_err(|_| format!("Content-Length is too large: {value:?}"))
}

/// A target URI without the angle brackets some writers put around it.
pub(crate) fn strip_angle_brackets(uri: &str) -> &str {
    uri.strip_prefix('<').and_then(|u| u.strip_suffix('>')).unwrap_or(uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::read::testing::{doc, documents, drain, skipped, source};
    use crate::testing::Trickle;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::collections::HashMap;
    use std::io::{Read, Write};
    use warc::{RawRecordHeader, WarcHeader, WarcWriter};

    const MAX: u64 = 1 << 20;

    /// One record, written by the `warc` crate (lowercase field names, CRLF).
    fn record(wtype: &str, uri: Option<&str>, content_type: Option<&str>, block: &[u8]) -> Vec<u8> {
        let mut headers = HashMap::new();
        headers.insert(WarcHeader::WarcType, wtype.as_bytes().to_vec());
        headers.insert(WarcHeader::ContentLength, block.len().to_string().into_bytes());
        headers.insert(WarcHeader::RecordID, b"<urn:uuid:0>".to_vec());
        if let Some(uri) = uri {
            headers.insert(WarcHeader::TargetURI, uri.as_bytes().to_vec());
        }
        if let Some(ct) = content_type {
            headers.insert(WarcHeader::ContentType, ct.as_bytes().to_vec());
        }
        let mut out = Vec::new();
        WarcWriter::new(&mut out)
            .write_raw(RawRecordHeader { version: "1.1".into(), headers }, &block)
            .unwrap();
        out
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
        let mut reader = WarcReader::new(source(data), max);
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

    /// A small crawl: records of every kind, as separate byte strings.
    fn crawl() -> Vec<Vec<u8>> {
        vec![
            record("warcinfo", None, Some("application/warc-fields"), b"software: test\r\n"),
            record(
                "request",
                Some("http://a.example/"),
                Some("application/http;msgtype=request"),
                b"GET / HTTP/1.1\r\n\r\n",
            ),
            record(
                "response",
                Some("http://a.example/"),
                Some("application/http; msgtype=response"),
                &http_response("200 OK", "text/html; charset=UTF-8", "<p>page a</p>"),
            ),
            record("metadata", Some("http://a.example/"), Some("application/warc-fields"), b"via: x\r\n"),
            record(
                "response",
                Some("http://a.example/missing"),
                Some("application/http; msgtype=response"),
                &http_response("404 Not Found", "text/html", "gone"),
            ),
            record("revisit", Some("http://a.example/"), None, b"HTTP/1.1 200 OK\r\n\r\n"),
            record("resource", Some("<http://b.example/file.txt>"), Some("text/plain"), b"plain file\n"),
            record("conversion", Some("http://c.example/"), None, b"converted text\n"),
            record("continuation", Some("http://d.example/"), None, b"more"),
        ]
    }

    fn check_crawl(items: &[Item], offsets: &[u64]) {
        use SkipReason::*;
        assert_eq!(
            reasons(items),
            [
                Some(WarcInfo),
                Some(WarcRequest),
                None,
                Some(WarcMetadata),
                Some(HttpStatus),
                Some(RevisitUnresolved),
                None,
                None,
                Some(SegmentedRecord)
            ]
        );
        let offsets_got: Vec<u64> = items.iter().map(Item::offset).collect();
        assert_eq!(offsets_got, offsets);
        let a = doc(&items[2]);
        assert_eq!(a.url, "http://a.example/");
        assert_eq!(a.content_type.as_deref(), Some("text/html"));
        assert_eq!(a.charset.as_deref(), Some("utf-8"));
        assert_eq!(a.body, b"<p>page a</p>");
        assert_eq!(skipped(&items[4]).detail, "404");
        let b = doc(&items[6]);
        assert_eq!(b.url, "http://b.example/file.txt");
        assert_eq!(b.content_type.as_deref(), Some("text/plain"));
        assert_eq!(b.body, b"plain file\n");
        let c = doc(&items[7]);
        assert_eq!(c.content_type.as_deref(), Some("text/plain"));
        assert_eq!(c.body, b"converted text\n");
    }

    /// Start offsets of consecutive pieces.
    fn starts(pieces: &[Vec<u8>]) -> Vec<u64> {
        pieces.iter().scan(0u64, |at, p| Some(std::mem::replace(at, *at + p.len() as u64))).collect()
    }

    #[test]
    fn plain_warc_gives_record_offsets() {
        let records = crawl();
        check_crawl(&read_all(records.concat()), &starts(&records));
    }

    #[test]
    fn per_record_gzip_gives_member_offsets_that_slice_to_the_record() {
        let records = crawl();
        let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let file = members.concat();
        let items = read_all(file.clone());
        let offsets = starts(&members);
        check_crawl(&items, &offsets);
        // dd-style: the bytes from a reported offset decompress to the record.
        for (i, &offset) in offsets.iter().enumerate() {
            let mut out = Vec::new();
            flate2::bufread::GzDecoder::new(&file[offset as usize..]).read_to_end(&mut out).unwrap();
            assert_eq!(out, records[i]);
        }
    }

    #[test]
    fn keeps_the_bytes_of_each_record_that_may_be_a_document() {
        use crate::bytes::read::Reader;
        let records = crawl();
        let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        // The response, the 404, the revisit, the resource, the conversion.
        let want: Vec<&[u8]> = [2, 4, 5, 6, 7].iter().map(|&i| &records[i][..records[i].len() - 4]).collect();
        for file in [records.concat(), members.concat(), gz(&records.concat())] {
            let mut reader = WarcReader::new(source(file), MAX).keeping_records();
            let mut kept = Vec::new();
            while let Some(item) = reader.next_item().unwrap() {
                kept.extend(reader.take_record(item.offset()));
                assert_eq!(reader.take_record(item.offset()), None, "taken once");
            }
            assert_eq!(kept, want);
        }
        let mut reader = WarcReader::new(source(records.concat()), MAX);
        while let Some(item) = reader.next_item().unwrap() {
            assert_eq!(reader.take_record(item.offset()), None, "kept only when asked");
        }
    }

    #[test]
    fn whole_file_gzip_gives_decompressed_offsets() {
        let records = crawl();
        check_crawl(&read_all(gz(&records.concat())), &starts(&records));
    }

    #[test]
    fn lf_only_headers_and_missing_record_end_are_read() {
        let data = b"WARC/1.0\nwarc-type: resource\nWARC-Target-URI: http://x/\ncontent-type: text/plain\n\
            content-length: 5\n\nhello\n\nWARC/1.0\nWARC-Type: resource\nContent-Length: 3\n\nabcWARC/1.1\n\
            WARC-Type: resource\nContent-Length: 1\n  \n\nz"
            .to_vec();
        let items = read_all(data);
        assert_eq!(items.len(), 3, "{items:?}");
        assert_eq!(doc(&items[0]).body, b"hello");
        assert_eq!(doc(&items[0]).url, "http://x/");
        assert_eq!(doc(&items[1]).body, b"abc");
        assert_eq!(doc(&items[1]).url, "");
        assert_eq!(doc(&items[1]).content_type, None);
        assert_eq!(doc(&items[2]).body, b"z");
    }

    #[test]
    fn continuation_lines_and_old_versions() {
        let data = b"WARC/0.18\r\nWARC-Type: resource\r\nWARC-Target-URI: http://x/\r\n\
            Content-Type: text/html;\r\n charset=latin1\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n"
            .to_vec();
        let items = read_all(data);
        let d = doc(&items[0]);
        assert_eq!(d.content_type.as_deref(), Some("text/html"));
        assert_eq!(d.charset.as_deref(), Some("latin1"));
    }

    #[test]
    fn response_without_http_block_is_like_a_resource() {
        let data = record(
            "response",
            Some("dns:example.com"),
            Some("text/dns"),
            b"example.com. 300 IN A 192.0.2.1\n",
        );
        let items = read_all(data);
        assert_eq!(doc(&items[0]).content_type.as_deref(), Some("text/dns"));
        // HTTP recognized by the block alone.
        let data =
            record("response", Some("http://x/"), None, &http_response("200 OK", "text/plain", "body"));
        assert_eq!(doc(&read_all(data)[0]).body, b"body");
    }

    #[test]
    fn bad_http_header_is_a_corrupt_header() {
        let data = record(
            "response",
            Some("http://x/"),
            Some("application/http"),
            b"HTTP/1.1 200 OK\r\nbroken\r\n\r\nx",
        );
        let items = read_all(data);
        assert_eq!(skipped(&items[0]).reason, SkipReason::CorruptHeader);
        assert!(skipped(&items[0]).detail.contains("broken"));
    }

    #[test]
    fn gzip_encoded_http_body_is_decoded_and_brotli_is_skipped() {
        let body = gz(b"<p>compressed page</p>");
        let mut block =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend_from_slice(&body);
        let mut br = b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n".to_vec();
        br.extend_from_slice(b"\x8b\x03\x80binary");
        let data = [
            record("response", Some("http://x/"), None, &block),
            record("response", Some("http://y/"), None, &br),
        ]
        .concat();
        let items = read_all(data);
        assert_eq!(doc(&items[0]).body, b"<p>compressed page</p>");
        assert_eq!(skipped(&items[1]).reason, SkipReason::UnsupportedEncoding);
    }

    #[test]
    fn garbage_between_records_is_reported_once() {
        let r = crawl();
        let junk = b"this is not a record\r\nnor is this\r\n".to_vec();
        let pieces = [r[6].clone(), junk.clone(), r[7].clone()];
        let items = read_all(pieces.concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::Garbage), None]);
        let g = skipped(&items[1]);
        assert_eq!(g.offset, r[6].len() as u64);
        assert_eq!(g.detail, format!("{} bytes that are not a WARC record", junk.len()));
        // Garbage at the very start.
        let items = read_all([b"junk\n".to_vec(), r[6].clone()].concat());
        assert_eq!(reasons(&items), [Some(SkipReason::Garbage), None]);
        assert_eq!(skipped(&items[0]).offset, 0);
    }

    #[test]
    fn header_without_colon_skips_to_the_next_record() {
        let r = crawl();
        let bad =
            String::from_utf8(r[6].clone()).unwrap().replacen("\r\n", "\r\nno colon on this line\r\n", 1);
        let pieces = [r[7].clone(), bad.into_bytes(), r[2].clone()];
        let items = read_all(pieces.concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None]);
        assert_eq!(skipped(&items[1]).offset, r[7].len() as u64);
        assert!(skipped(&items[1]).detail.contains("no colon on this line"), "{}", skipped(&items[1]).detail);
        assert_eq!(doc(&items[2]).url, "http://a.example/");
    }

    #[test]
    fn bad_content_lengths_are_corrupt_headers() {
        let r = crawl();
        for bad in [
            "Content-Length: twelve",
            "Content-Length: -5",
            "Content-Length: 99999999999999999999999",
            "X: y",
        ] {
            let rec = format!("WARC/1.0\r\nWARC-Type: resource\r\n{bad}\r\n\r\nsome block\r\n\r\n");
            let items = read_all([rec.into_bytes(), r[6].clone()].concat());
            assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader), None], "{bad}");
            assert_eq!(skipped(&items[0]).offset, 0);
        }
    }

    #[test]
    fn bad_version_line_and_header_cut_by_next_record() {
        let r = crawl();
        let items = read_all(
            [b"WARC/1.0 extra\r\nWARC-Type: resource\r\nContent-Length: 0\r\n\r\n".to_vec(), r[6].clone()]
                .concat(),
        );
        assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader), None]);
        let items = read_all([b"WARC/1.0\r\nWARC-Type: resource\r\n".to_vec(), r[6].clone()].concat());
        assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader), None]);
        assert_eq!(doc(&items[1]).offset, 31);
    }

    #[test]
    fn header_lines_ending_in_cr_cr_lf_are_read_as_warcio_reads_them() {
        let body = b"HTTP/1.1 200 OK\r\r\nContent-Type: text/plain\r\r\n\r\r\nhello";
        let record = |end: &str| {
            let mut r = format!(
                "WARC/1.0{end}WARC-Type: response{end}WARC-Target-URI: http://a.example/{end}\
                 Content-Type: application/http; msgtype=response{end}Content-Length: {}{end}{end}",
                body.len()
            )
            .into_bytes();
            r.extend_from_slice(body);
            r.extend_from_slice(b"\r\n\r\n");
            r
        };
        // Read whole from the buffer and line by line (a header split
        // across reads), then the record after it.
        for data in [record("\r\r\n"), [record("\r\r\n"), record("\r\n")].concat()] {
            let items = read_all(data.clone());
            let docs = documents(&items);
            assert!(
                !docs.is_empty() && docs.iter().all(|(_, url, _)| url == "http://a.example/"),
                "{items:?}"
            );
            assert_eq!(docs[0].2, b"hello");
            assert!(reasons(&items).iter().all(Option::is_none), "{items:?}");
        }
    }

    #[test]
    fn missing_warc_type_is_corrupt_but_the_block_is_skipped_by_length() {
        let items = read_all(b"WARC/1.0\r\nContent-Length: 10\r\n\r\nWARC/1.0\r\n\r\n\r\n".to_vec());
        assert_eq!(reasons(&items), [Some(SkipReason::CorruptHeader)]);
        assert_eq!(skipped(&items[0]).detail, "record without WARC-Type");
    }

    #[test]
    fn truncated_last_record() {
        let r = crawl();
        let whole = r[6].clone();
        let cut = &r[2][..r[2].len() - 20];
        let items = read_all([whole.clone(), cut.to_vec()].concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
        assert_eq!(skipped(&items[1]).offset, whole.len() as u64);
        // Cut inside the header.
        let items = read_all([whole.clone(), r[2][..30].to_vec()].concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
        // Per-record gzip: the record is cut (the member is whole), or the member is cut.
        let items = read_all([gz(&whole), gz(cut)].concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
        let member = gz(&r[2]);
        let items = read_all([gz(&whole), member[..member.len() - 30].to_vec()].concat());
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
        assert_eq!(skipped(&items[1]).offset, gz(&whole).len() as u64);
        // Whole-file gzip cut off: the record in progress is truncated.
        let file = gz(&[whole.clone(), r[2].clone()].concat());
        let items = read_all(file[..file.len() - 30].to_vec());
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
        assert_eq!(skipped(&items[1]).offset, whole.len() as u64);
    }

    #[test]
    fn a_length_past_the_records_gzip_member_does_not_swallow_the_next_records() {
        let r = crawl();
        for lie in ["99999999999", "40"] {
            let text = String::from_utf8(r[6].clone()).unwrap();
            let bad = text.replacen("content-length: 11", &format!("content-length: {lie}"), 1);
            assert_ne!(bad, text);
            let members = [gz(&r[7]), gz(bad.as_bytes()), gz(&r[2]), gz(&r[7])];
            let items = read_all(members.concat());
            assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None, None], "{lie}");
            assert_eq!(skipped(&items[1]).offset, members[0].len() as u64);
            assert!(skipped(&items[1]).detail.contains("gzip member"));
        }
        // Whole-file gzip cannot tell: the record runs on as it says.
        let items = read_all(gz(&[r[7].clone(), r[6].clone()].concat()));
        assert_eq!(reasons(&items), [None, None]);
    }

    #[test]
    fn corrupt_gzip_member_in_the_middle_is_one_skip() {
        let records = crawl();
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        // Damage the deflate data of the 200 response's member.
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
            [
                Some(WarcInfo),
                Some(WarcRequest),
                Some(CorruptGzip),
                Some(WarcMetadata),
                Some(HttpStatus),
                Some(RevisitUnresolved),
                None,
                None,
                Some(SegmentedRecord)
            ]
        );
        assert_eq!(skipped(&items[2]).offset, offsets[2]);
        assert_eq!(doc(&items[6]).offset, offsets[6]);
    }

    #[test]
    fn crc_error_drops_the_record() {
        let records = crawl();
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let n = members[6].len();
        members[6][n - 6] ^= 0xff; // CRC byte
        let offsets = starts(&members);
        let items = read_all(members.concat());
        assert_eq!(skipped(&items[6]).reason, SkipReason::CorruptGzip);
        assert_eq!(skipped(&items[6]).offset, offsets[6]);
        assert_eq!(items.len(), 9);
        assert_eq!(doc(&items[7]).offset, offsets[7]);
    }

    #[test]
    fn corrupt_whole_file_gzip_drops_the_record_in_progress() {
        let records = crawl();
        let mut file = gz(&records.concat());
        let mid = file.len() / 2;
        for b in &mut file[mid..mid + 8] {
            *b ^= 0xa5;
        }
        let items = read_all(file);
        let last = items.last().unwrap();
        assert_eq!(skipped(last).reason, SkipReason::CorruptGzip);
        assert_eq!(skipped(last).offset, 0, "the member's offset");
        assert!(items.iter().all(|i| matches!(i, Item::Skip(_)) || doc(i).body.len() < 100));
    }

    #[test]
    fn empty_and_blank_inputs_give_nothing() {
        assert!(read_all(Vec::new()).is_empty());
        assert!(read_all(b"\r\n\r\n  \n".to_vec()).is_empty());
        assert!(read_all(gz(b"")).is_empty());
    }

    #[test]
    fn records_over_the_limit_are_read_past() {
        let r = crawl();
        let big = record("resource", Some("http://big/"), None, &vec![b'x'; 5000]);
        let items = read_with([big.clone(), r[6].clone(), r[1].clone()].concat(), 1000);
        assert_eq!(reasons(&items), [Some(SkipReason::RecordTooLarge), None, Some(SkipReason::WarcRequest)]);
        assert_eq!(doc(&items[1]).offset, big.len() as u64);
        // A huge declared length does not allocate: the record is just cut off.
        let huge =
            b"WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 18000000000000000000\r\n\r\nabc".to_vec();
        let items = read_with(huge, u64::MAX);
        assert_eq!(reasons(&items), [Some(SkipReason::TruncatedRecord)]);
    }

    /// `record` with its Content-Length changed to `len`.
    fn with_length(record: &[u8], len: u64) -> Vec<u8> {
        let text = String::from_utf8(record.to_vec()).unwrap();
        let at = text.find("content-length: ").unwrap() + "content-length: ".len();
        let end = at + text[at..].find('\r').unwrap();
        format!("{}{len}{}", &text[..at], &text[end..]).into_bytes()
    }

    /// Items of `data` read from a buffer at once and a byte at a time,
    /// which must agree.
    fn read_both(data: Vec<u8>, max: u64) -> Vec<Item> {
        let whole = read_with(data.clone(), max);
        let trickled =
            drain(&mut WarcReader::new(Source::new(Box::new(Trickle(data, 0))).unwrap(), max), 10_000);
        assert_eq!(format!("{whole:?}"), format!("{trickled:?}"), "buffering changes what is read");
        whole
    }

    #[test]
    fn a_length_that_lies_in_plain_input_loses_only_its_record() {
        let r = crawl();
        let (a, b) = (r[6].clone(), r[7].clone());
        let real = b.len() as u64 - 4;
        let body_len = |rec: &[u8]| {
            let text = String::from_utf8_lossy(rec);
            text["".len()..]
                .split("content-length: ")
                .nth(1)
                .unwrap()
                .split('\r')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let victim_len = body_len(&r[2]);
        for lie in [victim_len + 5, victim_len + 50, victim_len + real / 2, 1_000_000_000, u64::MAX / 2] {
            let victim = with_length(&r[2], lie);
            for whole_gzip in [false, true] {
                let plain = [a.clone(), victim.clone(), b.clone()].concat();
                let data = if whole_gzip { gz(&plain) } else { plain };
                let items = read_both(data, MAX);
                assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None], "lie {lie}");
                assert_eq!(doc(&items[2]).offset, (a.len() + victim.len()) as u64, "lie {lie}");
                assert_eq!(doc(&items[2]).body, doc(&read_all(b.clone())[0]).body);
                assert!(
                    skipped(&items[1]).detail.contains("bytes skipped to it"),
                    "{:?}",
                    skipped(&items[1])
                );
            }
        }
        // A request (whose block is read past, not kept) and a page over
        // the limit lie the same way.
        for (victim, max) in [(with_length(&r[1], 1_000_000), MAX), (with_length(&r[2], 10_000), 100)] {
            let items = read_both([a.clone(), victim.clone(), b.clone()].concat(), max);
            assert_eq!(reasons(&items), [None, Some(SkipReason::CorruptHeader), None]);
            assert_eq!(doc(&items[2]).offset, (a.len() + victim.len()) as u64);
        }
    }

    #[test]
    fn a_block_that_quotes_a_record_is_read_whole() {
        let r = crawl();
        // A plain WARC file served over HTTP: its block holds records, and
        // its length is right.
        let inner = [r[6].clone(), r[7].clone()].concat();
        let body = String::from_utf8(inner).unwrap();
        let page = record("resource", Some("http://w/x.warc"), Some("text/plain"), body.as_bytes());
        let request = record("request", Some("http://w/x.warc"), None, body.as_bytes());
        for max in [MAX, 100] {
            let items = read_both([page.clone(), request.clone(), r[6].clone()].concat(), max);
            let first = if max == MAX { None } else { Some(SkipReason::RecordTooLarge) };
            assert_eq!(reasons(&items), [first, Some(SkipReason::WarcRequest), None]);
            if max == MAX {
                assert_eq!(doc(&items[0]).body, body.as_bytes());
            }
        }
    }

    #[test]
    fn a_length_that_lies_before_garbage_or_the_end_is_not_undone() {
        let r = crawl();
        // Too short: the record stands, and the rest is garbage.
        let short = with_length(&r[6], 3);
        let items = read_both([short.clone(), r[7].clone()].concat(), MAX);
        assert_eq!(reasons(&items), [None, Some(SkipReason::Garbage), None]);
        // Too long with no record after it: cut off at the end.
        let items = read_both([r[7].clone(), with_length(&r[6], 5000)].concat(), MAX);
        assert_eq!(reasons(&items), [None, Some(SkipReason::TruncatedRecord)]);
    }

    /// `n` resource records with distinct bodies.
    fn numbered(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let body = format!("page {i}\n{}\n", "text ".repeat(i * 7 % 50));
                record("resource", Some(&format!("http://e/{i}")), Some("text/plain"), body.as_bytes())
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Damage to one record of a per-record gzip file (bytes changed
        /// anywhere in its member, the member cut short, garbage after it)
        /// loses at most that record: every other comes out whole, at its
        /// offset.
        #[test]
        fn damage_to_one_gzip_member_loses_only_its_record(
            n in 2usize..7,
            victim in 0usize..7,
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), 1..=255u8), 0..4),
            cut in proptest::option::of(proptest::prelude::any::<usize>()),
            garbage in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        ) {
            let victim = victim % n;
            let records = numbered(n);
            let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
            let m = &mut members[victim];
            for (at, x) in flips {
                let i = at % m.len();
                m[i] ^= x;
            }
            if let Some(cut) = cut {
                m.truncate(1 + cut % m.len());
            }
            // Garbage that starts like a member or a record would be one.
            if !garbage.starts_with(&[0x1f]) && !garbage.starts_with(b"W") {
                m.extend_from_slice(&garbage);
            }
            let offsets = starts(&members);
            let got = documents(&read_all(members.concat()));
            for (i, rec) in records.iter().enumerate() {
                if i == victim {
                    continue;
                }
                let want = documents(&read_all(rec.clone()));
                let want = (offsets[i], want[0].1.clone(), want[0].2.clone());
                proptest::prop_assert!(got.contains(&want), "record {} of {} lost (victim {})", i, n, victim);
            }
        }

        /// A Content-Length that lies, by any amount past its record's end,
        /// in plain or whole-file gzip input, loses only that record, kept
        /// or read past, and how the input is buffered changes nothing.
        #[test]
        fn a_length_that_lies_loses_only_its_record(
            n in 2usize..6,
            victim in 0usize..6,
            extra in 5u64..400,
            huge in proptest::prelude::any::<bool>(),
            gzip in proptest::prelude::any::<bool>(),
            small_limit in proptest::prelude::any::<bool>(),
        ) {
            let victim = victim % n;
            let records = numbered(n);
            let mut pieces = records.clone();
            let real = u64::try_from(records[victim].len()).unwrap();
            let lie = if huge { 1 << 40 } else { real + extra };
            pieces[victim] = with_length(&records[victim], lie);
            let offsets = starts(&pieces);
            let plain = pieces.concat();
            // A lie that lands where a record starts (or the input ends)
            // cannot be told from the truth: the records it swallows are
            // a block's content.
            let head_len = pieces[victim].windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let end = usize::try_from(offsets[victim] + head_len as u64 + lie).unwrap_or(usize::MAX);
            let after = plain.get(end..).map(|b| &b[b.iter().take_while(|&&c| is_blank(c)).count()..]);
            proptest::prop_assume!(!after.is_some_and(|b| b.is_empty() || b.starts_with(b"WARC/")));
            let data = if gzip { gz(&plain) } else { plain };
            let items = read_both(data, if small_limit { 20 } else { MAX });
            let got = documents(&items);
            for (i, rec) in records.iter().enumerate() {
                let want = documents(&read_all(rec.clone()));
                if i == victim {
                    proptest::prop_assert!(got.iter().all(|d| d.0 != offsets[i]), "the victim is read");
                } else if !small_limit || want[0].2.len() <= 20 {
                    let want = (offsets[i], want[0].1.clone(), want[0].2.clone());
                    proptest::prop_assert!(got.contains(&want), "record {} of {} lost (victim {})", i, n, victim);
                }
            }
        }

        /// In a plain file, garbage between records and a broken header
        /// line lose nothing else either.
        #[test]
        fn damage_between_plain_records_loses_only_what_it_hits(
            n in 2usize..7,
            victim in 0usize..7,
            garbage in "[a-zA-Z0-9 :\r\n]{1,60}",
            break_header in proptest::prelude::any::<bool>(),
        ) {
            let victim = victim % n;
            let mut records = numbered(n);
            if break_header {
                let text = String::from_utf8(records[victim].clone()).unwrap();
                records[victim] = text.replacen("\r\n", "\r\nno colon here\r\n", 1).into_bytes();
            }
            let mut pieces = records.clone();
            // No line of the garbage may look like a record start.
            pieces.insert(victim + 1, format!("\n{}\n", garbage.replace("WARC", "warc")).into_bytes());
            let offsets = starts(&pieces);
            let got = documents(&read_all(pieces.concat()));
            for i in 0..n {
                if i == victim && break_header {
                    continue;
                }
                let want = documents(&read_all(numbered(n)[i].clone()));
                let at = if i > victim { i + 1 } else { i };
                let want = (offsets[at], want[0].1.clone(), want[0].2.clone());
                proptest::prop_assert!(got.contains(&want), "record {} lost", i);
            }
        }
    }

    /// Headers read at once from the buffer ([`whole_header`]) give what
    /// headers read line by line give: random records whose header lines
    /// are fields, LF or CRLF ends, continuation lines, lines that start
    /// like a record, lines without a colon, missing blank lines and cut
    /// ends, read over plain input handed out whole (the fast path, where
    /// it applies) and a byte at a time (line by line: the source then
    /// holds at most [`LOOK`] bytes, fewer than any header here).
    #[test]
    fn headers_read_at_once_are_read_as_line_by_line() {
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9_7f4a_7c15);
        const LINES: &[&[u8]] = &[
            b"WARC-Type: resource",
            b"WARC-Type: response",
            b"warc-target-uri: http://x/a",
            b"Content-Type: text/plain",
            b"Content-Length: 3",
            b"Content-Length: 30",
            b"WARC-Payload-Digest: sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N",
            b" continued",
            b"WARC/1.0",
            b"WARC/",
            b"no colon",
            b"",
        ];
        for case in 0..3000 {
            let mut data = Vec::new();
            for _ in 0..1 + rng.below(4) {
                data.extend_from_slice(if rng.below(8) == 0 { b"WARC/0.17" } else { b"WARC/1.1" });
                // A header longer than the source's look-ahead is never
                // whole in a byte-at-a-time buffer: read there line by line.
                data.extend_from_slice(b"\r\nX-Pad: ");
                data.extend_from_slice(&[b'p'; LOOK]);
                for _ in 0..rng.below(7) {
                    data.extend_from_slice(if rng.below(3) == 0 { b"\n" } else { b"\r\n" });
                    data.extend_from_slice(LINES[rng.below(LINES.len() as u64) as usize]);
                }
                data.extend_from_slice(if rng.below(2) == 0 { b"\n\n" } else { b"\r\n\r\n" });
                data.extend((0..rng.below(40)).map(|i| b"abc\n"[i as usize % 4]));
            }
            data.truncate(data.len() - rng.below(data.len() as u64 / 4 + 1) as usize);
            let whole = read_all(data.clone());
            let trickled = drain(
                &mut WarcReader::new(Source::new(Box::new(Trickle(data.clone(), 0))).unwrap(), MAX),
                10_000,
            );
            assert_eq!(whole, trickled, "case {case}: {:?}", String::from_utf8_lossy(&data));
        }
    }

    #[test]
    fn bom_before_the_first_record_is_ignored() {
        let r = crawl();
        let items = read_all([b"\xef\xbb\xbf".to_vec(), r[6].clone()].concat());
        assert_eq!(reasons(&items), [None]);
        assert_eq!(doc(&items[0]).offset, 3);
    }

    /// A dictionary trained on records like the crawl's.
    fn zstd_dictionary() -> Vec<u8> {
        let samples: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                let body = format!("<p>page {i} of the test crawl</p>");
                let uri = format!("http://a.example/{i}");
                record("response", Some(&uri), Some("application/http; msgtype=response"), body.as_bytes())
            })
            .collect();
        zstd::dict::from_samples(&samples, 2048).unwrap()
    }

    /// Each record as one zstd frame, with its content size and checksum,
    /// compressed with `dict` if given, as Wget-AT writes `.warc.zst`.
    fn zstd_frames(records: &[Vec<u8>], dict: Option<&[u8]>) -> Vec<Vec<u8>> {
        let mut c = zstd::bulk::Compressor::with_dictionary(3, dict.unwrap_or_default()).unwrap();
        c.include_checksum(true).unwrap();
        c.include_contentsize(true).unwrap();
        records.iter().map(|r| c.compress(r).unwrap()).collect()
    }

    /// A skippable frame of magic `0x184D2A50 + kind` holding `data`.
    fn skippable_frame(kind: u8, data: &[u8]) -> Vec<u8> {
        [&[0x50 + kind, 0x2a, 0x4d, 0x18][..], &(data.len() as u32).to_le_bytes(), data].concat()
    }

    #[test]
    fn per_record_zstd_with_a_dictionary_gives_frame_offsets() {
        let records = crawl();
        let dict = zstd_dictionary();
        let frames = zstd_frames(&records, Some(&dict));
        // The dictionary stored as it is, and compressed, as Wget-AT does;
        // an extension frame between two records is passed over.
        for stored in [dict.clone(), zstd::bulk::compress(&dict, 19).unwrap()] {
            let mut pieces = vec![skippable_frame(0xd, &stored)];
            pieces.extend(frames[..3].iter().cloned());
            pieces.push(skippable_frame(0, b"an extension frame"));
            pieces.extend(frames[3..].iter().cloned());
            let offsets = starts(&pieces);
            let frame_offsets: Vec<u64> = [&offsets[1..4], &offsets[5..]].concat();
            check_crawl(&read_all(pieces.concat()), &frame_offsets);
        }
    }

    #[test]
    fn one_zstd_frame_for_the_whole_file_gives_record_positions() {
        let records = crawl();
        let file = zstd::bulk::compress(&records.concat(), 3).unwrap();
        check_crawl(&read_all(file), &starts(&records));
    }

    #[test]
    fn damaged_zstd_frame_is_one_skip_and_reading_goes_on() {
        let records = crawl();
        let dict = zstd_dictionary();
        let mut pieces = vec![skippable_frame(0xd, &dict)];
        pieces.extend(zstd_frames(&records, Some(&dict)));
        let offsets = starts(&pieces);
        // The 200 response's frame: a byte of its compressed data, then its
        // checksum, then its magic.
        for at in [|f: &[u8]| f.len() / 2, |f: &[u8]| f.len() - 2, |_: &[u8]| 1] {
            let mut damaged = pieces.clone();
            let frame = &mut damaged[3];
            let i = at(frame);
            frame[i] ^= 0x5a;
            let items = read_all(damaged.concat());
            let got = reasons(&items);
            assert_eq!(got.len(), records.len(), "{got:?}");
            assert_eq!(got[2], Some(SkipReason::CorruptZstd), "{got:?}");
            assert_eq!(skipped(&items[2]).offset, offsets[3]);
            assert_eq!(doc(&items[6]).offset, offsets[7]);
            assert_eq!(doc(&items[6]).body, b"plain file\n");
        }
    }

    #[test]
    fn zstd_cut_off_in_the_last_frame_is_a_truncated_record() {
        let records = crawl();
        let frames = zstd_frames(&records, None);
        let mut file = frames.concat();
        file.truncate(file.len() - frames.last().unwrap().len() / 2);
        let items = read_all(file);
        assert_eq!(items.len(), records.len());
        assert_eq!(reasons(&items).last(), Some(&Some(SkipReason::TruncatedRecord)));
        assert_eq!(doc(&items[7]).body, b"converted text\n");
    }

    #[test]
    fn zstd_frames_without_their_dictionary_fail_one_by_one() {
        let records = crawl();
        let dict = zstd_dictionary();
        let frames = zstd_frames(&records, Some(&dict));
        // No dictionary frame, or one that holds no dictionary.
        for file in [frames.concat(), [skippable_frame(0xd, b"not a dictionary"), frames.concat()].concat()] {
            let items = read_all(file);
            let corrupt = reasons(&items).iter().filter(|&&r| r == Some(SkipReason::CorruptZstd)).count();
            assert!(corrupt >= records.len(), "{:?}", reasons(&items));
            assert!(!items.iter().any(|i| matches!(i, Item::Doc(_))));
        }
    }
}
