//! WebBase page feeds: pages one after another, each behind a separator
//! line and a small header (plain or gzip).
//!
//! # Grammar as accepted
//!
//! ```text
//! feed        = preamble *record
//! preamble    = *line                     ; anything before the first separator line
//! record      = separator-line header blank-line [http-header] page
//! separator-line = "==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>" EOL
//!                                         ; exactly this, from the start of a line
//! EOL         = LF / CRLF / end of input
//! header      = *field
//! field       = name ":" value EOL        ; any order, names in any case
//!             / (SP / HT) value EOL       ; continuation of the previous value
//! blank-line  = LF / CRLF
//! http-header = "HTTP/" version SP status [SP reason] EOL *field blank-line
//!                                         ; present when the line after the
//!                                         ; blank line starts with "HTTP/"
//! page        = every byte up to the next separator line or the end of input,
//!               less one line end (LF or CRLF) right before it
//! ```
//!
//! So a page `P` is written as `P` LF, then the next separator line: the
//! line end before a separator belongs to the separator, not the page, and
//! one final line end at the end of the input is not part of the last page
//! either, so the same page gives the same bytes wherever it is. A page
//! cannot contain a line that is exactly the separator.
//!
//! The header must have a `URL:` field, whose value (trimmed) is the
//! document's URL. `Date:`, `Position:`, `DocId:` and any other `Key: value`
//! fields are accepted and ignored: feeds from different crawls carry
//! different ones. With an HTTP header, a status other than 200 is a
//! [`SkipReason::HttpStatus`] skip, and the content type is the HTTP
//! `Content-Type` (chunked framing and gzip/deflate content coding are
//! removed as for WARC); without one the content type is `None` and
//! extraction sniffs the page.
//!
//! Damage: a header without `URL:`, a header line without a colon, or a
//! header (record or HTTP) that runs into the next separator before its
//! blank line is a [`SkipReason::CorruptHeader`] skip of the record (reading
//! goes on at the next separator). A record whose header is cut off by the
//! end of input is a [`SkipReason::TruncatedRecord`] skip. Non-whitespace
//! bytes before the first separator (or after damaged gzip data, up to the
//! next separator) are one [`SkipReason::Garbage`] skip; a whitespace-only
//! preamble and a UTF-8 byte order mark are ignored. A page longer than
//! `max_record_bytes` is read past and skipped with
//! [`SkipReason::RecordTooLarge`].

use std::io;

use super::gz::{Source, Start, skip};
use super::http::{self, BodyError, Response};
use super::records::{Core, Format};
use super::{Item, RawDoc, SkipReason};

/// The line before every record.
pub(crate) const SEPARATOR: &[u8] = b"==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>";

/// The longest record or HTTP header read; a longer one is corrupt.
pub(crate) const MAX_HEADER_BYTES: usize = 1 << 20;

/// Reads page-feed records from a [`Source`].
pub(crate) struct PageFeedReader {
    core: Core,
    max_record_bytes: u64,
    /// The record header and the HTTP header of the current record, reused.
    head: Vec<u8>,
    http_head: Vec<u8>,
}

/// How reading a header block ended.
enum Block {
    /// Up to and including its blank line.
    Complete,
    /// A separator line came before the blank line.
    CutBySeparator,
    TooLong,
    /// The input ended or broke.
    Lost,
}

impl PageFeedReader {
    /// A reader of `src`, keeping pages of at most `max_record_bytes`.
    pub(crate) fn new(src: Source, max_record_bytes: u64) -> PageFeedReader {
        PageFeedReader { core: Core::new(src), max_record_bytes, head: Vec::new(), http_head: Vec::new() }
    }

    /// Skips lines up to the next separator line, reporting them as garbage
    /// unless they are all whitespace.
    fn skip_garbage(&mut self, start: Start) -> io::Result<()> {
        let mut skipped = 0u64;
        let mut text = false;
        let mut seen = |bytes: &[u8]| text |= bytes.iter().any(|b| !b.is_ascii_whitespace());
        loop {
            let n = self.core.src.skip_line(&mut seen)?;
            skipped += n;
            if n == 0 {
                break;
            }
            let lines = self.core.src.skip_to_line_starting(SEPARATOR[0], true, &mut seen)?;
            skipped += lines.len;
            if !lines.complete || at_separator(&mut self.core.src)? {
                break;
            }
        }
        if text {
            let detail = format!("{skipped} bytes outside any page-feed record");
            self.core.push_unless_damaged(start, skip(start.offset, SkipReason::Garbage, detail))?;
        }
        Ok(())
    }

    /// Reads the record whose separator line is at `start`.
    fn read_record(&mut self, start: Start) -> io::Result<()> {
        self.core.src.skip_line(|_| ())?;
        match read_header_block(&mut self.core.src, &mut self.head)? {
            Block::Complete => {}
            Block::CutBySeparator => {
                return self.corrupt(start, "record header not ended by a blank line", false);
            }
            Block::TooLong => return self.corrupt(start, "record header too long", true),
            Block::Lost => {
                self.core.lost(start, "record header cut off at end of input");
                return Ok(());
            }
        }
        let url = match header_url(&self.head) {
            Ok(url) => url,
            Err(detail) => return self.corrupt(start, &detail, true),
        };
        let Some(url) = url else {
            return self.corrupt(start, "record header without a URL: line", true);
        };
        let http = if self.core.src.peek(5)?.starts_with(b"HTTP/") {
            match read_header_block(&mut self.core.src, &mut self.http_head)? {
                Block::Complete => Some(http::parse_response(&self.http_head)),
                Block::CutBySeparator => {
                    return self.corrupt(start, "HTTP header not ended by a blank line", false);
                }
                Block::TooLong => return self.corrupt(start, "HTTP header too long", true),
                Block::Lost => {
                    self.core.lost(start, "HTTP header cut off at end of input");
                    return Ok(());
                }
            }
        } else {
            None
        };
        let keep = matches!(&http, None | Some(Ok(Response { status: 200, .. })));
        let Some((page, len)) = self.read_page(start, keep)? else {
            return Ok(());
        };
        let item = match http {
            Some(Err(detail)) => {
                skip(start.offset, SkipReason::CorruptHeader, format!("HTTP header: {detail}"))
            }
            Some(Ok(resp)) if resp.status != 200 => http::not_ok_item(start.offset, &url, &resp),
            _ if len > self.max_record_bytes => skip(
                start.offset,
                SkipReason::RecordTooLarge,
                format!("{len}-byte page over the limit of {} bytes", self.max_record_bytes),
            ),
            Some(Ok(resp)) => match http::decode_body(&resp, page, self.max_record_bytes, &mut |n| {
                self.core.keeping.cover(n)
            })? {
                Ok(body) => Item::Doc(RawDoc {
                    offset: start.offset,
                    url,
                    content_type: resp.content_type,
                    charset: resp.charset,
                    body,
                    ..RawDoc::default()
                }),
                Err(BodyError::TooLarge) => skip(
                    start.offset,
                    SkipReason::RecordTooLarge,
                    format!("decoded page over the limit of {} bytes", self.max_record_bytes),
                ),
                Err(BodyError::Unsupported(detail)) => {
                    skip(start.offset, SkipReason::UnsupportedEncoding, detail)
                }
            },
            None => Item::Doc(RawDoc { offset: start.offset, url, body: page.into(), ..RawDoc::default() }),
        };
        self.core.push(item);
        Ok(())
    }

    /// Reads a page up to the next separator line or the end of input,
    /// keeping it if `keep`. Returns it and its length (without the final
    /// line end), or `None` when a break damaged it (the skips are queued).
    fn read_page(&mut self, start: Start, keep: bool) -> io::Result<Option<(Vec<u8>, u64)>> {
        // Two more bytes than the limit, so that a final line end can be
        // taken off a page that is just at the limit.
        let cap = if keep {
            usize::try_from(self.max_record_bytes).unwrap_or(usize::MAX).saturating_add(2)
        } else {
            0
        };
        let mut page = Vec::new();
        let mut len = 0u64;
        loop {
            if at_separator(&mut self.core.src)? {
                break;
            }
            // A big page waits for room in the budget as it grows.
            let Core { src, keeping, .. } = &mut self.core;
            let line = src.read_line_covered(&mut page, cap, &mut |n| keeping.cover(n))?;
            len += line.len;
            if !line.complete {
                break;
            }
            let mut covered = Ok(());
            let lines = src.skip_to_line_starting(SEPARATOR[0], false, |bytes| {
                let room = cap.saturating_sub(page.len());
                page.extend_from_slice(bytes.get(..room).unwrap_or(bytes));
                if covered.is_ok() {
                    covered = keeping.cover(page.len() as u64);
                }
            })?;
            covered?;
            len += lines.len;
            if !lines.complete {
                break;
            }
        }
        let damage = if self.core.src.at_break() {
            self.core.src.take_break()
        } else {
            self.core.src.record_damage(start)?
        };
        if let Some(brk) = damage {
            self.core.push_break(Some(start), brk);
            return Ok(None);
        }
        let eol = if page.ends_with(b"\r\n") {
            2
        } else if page.ends_with(b"\n") {
            1
        } else {
            0
        };
        page.truncate(page.len() - eol);
        Ok(Some((page, len.saturating_sub(eol as u64))))
    }

    /// Skips the rest of the record at `start` if `rest` (otherwise a
    /// separator is next already), and queues a corrupt-header skip for it.
    fn corrupt(&mut self, start: Start, detail: &str, rest: bool) -> io::Result<()> {
        if rest {
            while !at_separator(&mut self.core.src)?
                && self.core.src.skip_line(|_| ())? > 0
                && self.core.src.skip_to_line_starting(SEPARATOR[0], true, |_| ())?.complete
            {}
        }
        self.core.push_unless_damaged(start, skip(start.offset, SkipReason::CorruptHeader, detail))
    }
}

impl Format for PageFeedReader {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    /// Reads one record, or the bytes before one.
    fn step(&mut self) -> io::Result<()> {
        let (empty, separator) = {
            let head = self.core.src.peek(SEPARATOR.len() + 2)?;
            (head.is_empty(), is_separator_line(head))
        };
        if empty {
            self.core.end();
            return Ok(());
        }
        let start = self.core.src.start_here();
        if separator { self.read_record(start) } else { self.skip_garbage(start) }
    }
}

/// Reads `Key: value` lines up to and including a blank line into `out`.
fn read_header_block(src: &mut Source, out: &mut Vec<u8>) -> io::Result<Block> {
    out.clear();
    loop {
        if at_separator(src)? {
            return Ok(Block::CutBySeparator);
        }
        let line_start = out.len();
        let line = src.read_line(out, MAX_HEADER_BYTES)?;
        if !line.complete {
            return Ok(Block::Lost);
        }
        if out.len() >= MAX_HEADER_BYTES {
            return Ok(Block::TooLong);
        }
        if matches!(out.get(line_start..), Some(b"\n" | b"\r\n")) {
            return Ok(Block::Complete);
        }
    }
}

/// Whether a separator line starts here (at the start of a line).
fn at_separator(src: &mut Source) -> io::Result<bool> {
    Ok(is_separator_line(src.peek(SEPARATOR.len() + 2)?))
}

/// Whether `head` (at least the separator's length plus two bytes, unless
/// the input ends) is a separator line.
fn is_separator_line(head: &[u8]) -> bool {
    // Most lines fail at the first byte: comparing it first spares every
    // line a call of a 40-byte comparison, which a fuzzer's comparison
    // tracing makes costly.
    if head.first() != SEPARATOR.first() {
        return false;
    }
    let Some(rest) = head.strip_prefix(SEPARATOR) else {
        return false;
    };
    matches!(rest, [] | [b'\n', ..] | [b'\r', b'\n', ..] | [b'\r'])
}

/// The first `URL` field of a record header, when every line of it is a
/// field.
fn header_url(head: &[u8]) -> Result<Option<String>, String> {
    let mut url = None;
    for field in http::FieldLines::new(head) {
        let (name, value) = field?;
        if url.is_none() && name.eq_ignore_ascii_case(b"URL") {
            url = Some(http::value_text(value).into_owned());
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::read::testing::{doc, drain, skipped, source};
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    const SEP: &str = "==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>";

    fn read(data: &[u8]) -> Vec<Item> {
        read_max(data, 1 << 20)
    }

    fn read_max(data: &[u8], max: u64) -> Vec<Item> {
        let mut r = PageFeedReader::new(source(data.to_vec()), max);
        drain(&mut r, 1000)
    }

    fn feed() -> String {
        format!(
            "{SEP}\nURL: http://a.example/\nDate: Fri, 01 Mar 2024 08:00:00 GMT\nPosition: 0\nDocId: 0\n\n\
             first page\nline two\n\
             {SEP}\nDocId: 1\nurl: http://b.example/\nX-Other: kept out\n\n\
             HTTP/1.0 200 OK\nContent-Type: text/html; charset=ISO-8859-1\nContent-Length: 12\n\n\
             <p>second</p>\n\n\
             {SEP}\r\nURL: http://c.example/\r\n\r\n\
             HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\ngone\r\n\
             {SEP}\nURL: http://d.example/\n\nlast page, CRLF\r\n"
        )
    }

    #[test]
    fn records_with_and_without_http_headers() {
        let data = feed();
        let items = read(data.as_bytes());
        assert_eq!(items.len(), 4, "{items:?}");
        let a = doc(&items[0]);
        assert_eq!((a.offset, a.url.as_str()), (0, "http://a.example/"));
        assert_eq!(a.body, b"first page\nline two");
        assert_eq!(a.content_type, None);
        let b = doc(&items[1]);
        assert_eq!(b.offset, data.find(&format!("{SEP}\nDocId")).unwrap() as u64);
        assert_eq!(b.url, "http://b.example/");
        assert_eq!(b.content_type.as_deref(), Some("text/html"));
        assert_eq!(b.charset.as_deref(), Some("iso-8859-1"));
        assert_eq!(b.body, b"<p>second</p>\n", "one line end goes with the separator");
        let c = skipped(&items[2]);
        assert_eq!((c.reason, c.detail.as_str()), (SkipReason::HttpStatus, "404"));
        assert_eq!(c.offset, data.find(&format!("{SEP}\r\n")).unwrap() as u64);
        assert_eq!(doc(&items[3]).body, b"last page, CRLF");
    }

    #[test]
    fn gzip_feed_gives_the_same_records() {
        let data = feed();
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data.as_bytes()).unwrap();
        assert_eq!(read(&enc.finish().unwrap()), read(data.as_bytes()));
    }

    #[test]
    fn empty_pages_and_end_of_input() {
        let data = format!(
            "{SEP}\nURL: http://a/\n\n\n{SEP}\nURL: http://b/\n\n{SEP}\nURL: http://c/\n\nno newline"
        );
        let items = read(data.as_bytes());
        assert_eq!(doc(&items[0]).body, b"");
        assert_eq!(doc(&items[1]).body, b"");
        assert_eq!(doc(&items[2]).body, b"no newline");
        // A separator at the very end starts a record that is cut off.
        let items = read(format!("{SEP}\nURL: http://a/\n\nx\n{SEP}").as_bytes());
        assert_eq!(skipped(&items[1]).reason, SkipReason::TruncatedRecord);
    }

    #[test]
    fn separator_only_counts_as_a_whole_line() {
        let data = format!("{SEP}\nURL: http://a/\n\nsee {SEP}\n{SEP} and more\n");
        let items = read(data.as_bytes());
        assert_eq!(items.len(), 1);
        assert_eq!(doc(&items[0]).body, format!("see {SEP}\n{SEP} and more").as_bytes());
    }

    #[test]
    fn missing_url_and_bad_headers_are_corrupt() {
        let data = format!(
            "{SEP}\nDate: today\n\npage without url\n{SEP}\nURL: http://b/\nno colon\n\npage\n\
             {SEP}\nURL: http://c/\n{SEP}\nURL: http://d/\n\nHTTP/1.1 200 OK\nbroken line\n\nbody\n\
             {SEP}\nURL: http://e/\n\nok\n"
        );
        let items = read(data.as_bytes());
        let reasons: Vec<_> = items
            .iter()
            .map(|i| match i {
                Item::Skip(s) => Ok(s.reason),
                i => Err(crate::bytes::read::testing::doc(i).url.clone()),
            })
            .collect();
        use SkipReason::CorruptHeader;
        assert_eq!(
            reasons,
            [
                Ok(CorruptHeader),
                Ok(CorruptHeader),
                Ok(CorruptHeader),
                Ok(CorruptHeader),
                Err("http://e/".to_string())
            ]
        );
        assert!(skipped(&items[0]).detail.contains("URL"));
        assert!(skipped(&items[1]).detail.contains("no colon"));
        assert!(skipped(&items[3]).detail.contains("broken line"));
    }

    #[test]
    fn garbage_before_the_first_separator() {
        let data = format!("some junk\nmore junk\n{SEP}\nURL: http://a/\n\npage\n");
        let items = read(data.as_bytes());
        let g = skipped(&items[0]);
        assert_eq!((g.reason, g.offset), (SkipReason::Garbage, 0));
        assert_eq!(g.detail, "20 bytes outside any page-feed record");
        assert_eq!(doc(&items[1]).offset, 20);
        // Whitespace and a byte order mark are not garbage.
        let data = format!("\u{feff}\n  \r\n{SEP}\nURL: http://a/\n\npage\n");
        let items = read(data.as_bytes());
        assert_eq!(items.len(), 1);
        assert_eq!(doc(&items[0]).offset, 8);
    }

    #[test]
    fn truncated_header_and_large_pages() {
        let items = read(format!("{SEP}\nURL: http://a/\nDate: x").as_bytes());
        assert_eq!(skipped(&items[0]).reason, SkipReason::TruncatedRecord);
        let items = read(format!("{SEP}\nURL: http://a/\n\nHTTP/1.1 200 OK\nContent-Type: x").as_bytes());
        assert_eq!(skipped(&items[0]).reason, SkipReason::TruncatedRecord);
        let data = format!(
            "{SEP}\nURL: http://a/\n\n{}\n{SEP}\nURL: http://b/\n\n{}\n",
            "x".repeat(11),
            "y".repeat(10)
        );
        let items = read_max(data.as_bytes(), 10);
        assert_eq!(skipped(&items[0]).reason, SkipReason::RecordTooLarge);
        assert_eq!(doc(&items[1]).body, b"yyyyyyyyyy");
    }

    #[test]
    fn empty_input_gives_nothing() {
        assert!(read(b"").is_empty());
        assert!(read(b" \n\n").is_empty());
    }

    proptest::proptest! {
        /// A damaged header or page loses nothing but its own record.
        #[test]
        fn damage_to_one_record_loses_only_it(
            n in 2usize..8,
            victim in 0usize..8,
            junk in "[ -~\t\r\n]{0,80}",
            in_header in proptest::prelude::any::<bool>(),
        ) {
            let victim = victim % n;
            let junk = junk.replace("==P=", "==p=");
            let record = |i: usize, header: &str, page: &str| format!("{SEP}\nURL: http://p/{i}\n{header}\n{page}\n");
            let pieces: Vec<String> = (0..n)
                .map(|i| match (i == victim, in_header) {
                    (true, true) => record(i, &format!("{}\n", junk.replace('\n', " ")), &format!("page {i}")),
                    (true, false) => record(i, "", &junk),
                    _ => record(i, "", &format!("page {i}")),
                })
                .collect();
            let got = crate::bytes::read::testing::documents(&read(pieces.concat().as_bytes()));
            let mut at = 0u64;
            for (i, p) in pieces.iter().enumerate() {
                if i != victim {
                    let want = (at, format!("http://p/{i}"), format!("page {i}").into_bytes());
                    proptest::prop_assert!(got.contains(&want), "record {} lost: {:?}", i, got);
                }
                at += p.len() as u64;
            }
        }
    }
}
