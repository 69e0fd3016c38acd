//! Stage 1, `read`: crawl dumps in, raw records out.
//!
//! Every input format is one file beside this one (`warc.rs`, `jsonl.rs`,
//! `pagefeed.rs`), and each turns a byte stream into a sequence of [`Item`]s:
//! either a [`RawDoc`] (a record that carries a page and may become a
//! document) or a [`Skip`] (a record that is not a document, or is corrupt),
//! so that nothing read is ever silently dropped. Readers do not decide
//! whether the content type is usable or assign document IDs: extraction and
//! the fingerprint stage do that, in input order.
//!
//! A reader returns `Err` only when the input as a whole cannot be read any
//! further (an I/O error from the file system); bad data inside the input is
//! a [`Skip`] with [`SkipReason::is_corrupt`] true, and reading goes on with
//! the next record the reader can find.

use std::io;

/// A record that carries a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawDoc {
    /// Byte offset of the record in its input (see [`Item`] for what offsets
    /// mean in compressed files).
    pub offset: u64,
    /// The URL exactly as recorded (WARC-Target-URI without angle brackets,
    /// the page feed's `URL:` line, the JSONL url field). May be empty.
    pub url: String,
    /// The media type of the payload, lowercased, without parameters
    /// (`text/html`), or `None` when the record does not say.
    pub content_type: Option<String>,
    /// The charset parameter of the content type, lowercased, if any. Unused
    /// for now (bytes are decoded as UTF-8); kept so charset handling can
    /// come without touching readers.
    pub charset: Option<String>,
    /// The payload: for HTTP responses, the body after the HTTP header.
    pub body: Vec<u8>,
}

/// A record that did not become a page, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// Byte offset of the record (or of the bad bytes) in its input.
    pub offset: u64,
    pub reason: SkipReason,
    /// A short human-readable detail for corrupt records (what was wrong);
    /// empty for ordinary non-document records.
    pub detail: String,
}

/// Why a record is not a document. The names from [`SkipReason::name`] are
/// the keys of `skipped` in stats.json: keep them stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    // Records that are fine but are not documents.
    /// WARC `request` record.
    WarcRequest,
    /// WARC `metadata` record.
    WarcMetadata,
    /// WARC `warcinfo` record.
    WarcInfo,
    /// WARC `revisit` record.
    WarcRevisit,
    /// Any other WARC record type (`continuation`, unknown types).
    WarcOtherType,
    /// HTTP response whose status is not 200.
    HttpStatus,
    /// Payload whose content type is not text/plain, text/html or
    /// application/xhtml+xml (decided by `extract`, not by readers).
    UnsupportedContentType,

    // Corrupt input: counted, and sampled with file and offset in stats.json.
    /// A record header that cannot be parsed (WARC header, HTTP header, page
    /// feed header).
    CorruptHeader,
    /// A record that ends before its declared length (cut off at end of file).
    TruncatedRecord,
    /// A gzip member that fails to decompress.
    CorruptGzip,
    /// Bytes between records that are not a record (reader resynchronized).
    Garbage,
    /// A JSONL line that is not a JSON object, or lacks the text field.
    BadJson,
}

impl SkipReason {
    /// Every reason, in the order stats.json lists them.
    pub const ALL: [SkipReason; 12] = [
        SkipReason::WarcRequest,
        SkipReason::WarcMetadata,
        SkipReason::WarcInfo,
        SkipReason::WarcRevisit,
        SkipReason::WarcOtherType,
        SkipReason::HttpStatus,
        SkipReason::UnsupportedContentType,
        SkipReason::CorruptHeader,
        SkipReason::TruncatedRecord,
        SkipReason::CorruptGzip,
        SkipReason::Garbage,
        SkipReason::BadJson,
    ];

    /// The stable snake_case name used in stats.json.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::WarcRequest => "warc_request",
            SkipReason::WarcMetadata => "warc_metadata",
            SkipReason::WarcInfo => "warc_warcinfo",
            SkipReason::WarcRevisit => "warc_revisit",
            SkipReason::WarcOtherType => "warc_other_type",
            SkipReason::HttpStatus => "http_status_not_200",
            SkipReason::UnsupportedContentType => "unsupported_content_type",
            SkipReason::CorruptHeader => "corrupt_header",
            SkipReason::TruncatedRecord => "truncated_record",
            SkipReason::CorruptGzip => "corrupt_gzip",
            SkipReason::Garbage => "garbage_between_records",
            SkipReason::BadJson => "bad_json",
        }
    }

    /// Whether this reason means the input was damaged (as opposed to a
    /// well-formed record that simply is not a document).
    pub fn is_corrupt(self) -> bool {
        matches!(
            self,
            SkipReason::CorruptHeader
                | SkipReason::TruncatedRecord
                | SkipReason::CorruptGzip
                | SkipReason::Garbage
                | SkipReason::BadJson
        )
    }
}

/// What a reader yields.
///
/// Offsets: for an uncompressed input, the byte offset of the record's first
/// byte. For a gzip input whose record starts a gzip member (per-record gzip,
/// as the WARC standard recommends), the offset of that member in the
/// compressed file, as CDX indexes give it. Otherwise (a record inside a
/// whole-file gzip member), the offset in the decompressed stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Doc(RawDoc),
    Skip(Skip),
}

/// A source of records: one open input in one format.
pub trait Reader: Send {
    /// The next item, `Ok(None)` at the end of input. `Err` only for I/O
    /// errors that stop this input; bad data is an `Item::Skip`.
    fn next_item(&mut self) -> io::Result<Option<Item>>;
}

// ---- TEMPORARY: a minimal JSONL-only opener until the real readers land.
// (Whoever merges the readers: delete everything from this line down.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Auto,
    Warc,
    Jsonl,
    PageFeed,
}
#[derive(Clone, Debug)]
pub struct ReadOptions {
    pub format: InputFormat,
    pub url_field: String,
    pub text_field: String,
    pub max_record_bytes: u64,
}
impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: InputFormat::Auto,
            url_field: "url".into(),
            text_field: "text".into(),
            max_record_bytes: 64 << 20,
        }
    }
}
struct TmpJsonl {
    lines: std::io::Lines<std::io::BufReader<Box<dyn std::io::Read + Send>>>,
    off: u64,
    opts: ReadOptions,
}
impl Reader for TmpJsonl {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        loop {
            let Some(line) = self.lines.next() else { return Ok(None) };
            let line = line?;
            let off = self.off;
            self.off += line.len() as u64 + 1;
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(e) => {
                    return Ok(Some(Item::Skip(Skip {
                        offset: off,
                        reason: SkipReason::BadJson,
                        detail: e.to_string(),
                    })));
                }
            };
            let text = v.get(&self.opts.text_field).and_then(|t| t.as_str()).unwrap_or("").to_string();
            let url = v.get(&self.opts.url_field).and_then(|t| t.as_str()).unwrap_or("").to_string();
            return Ok(Some(Item::Doc(RawDoc {
                offset: off,
                url,
                content_type: Some("text/plain".into()),
                charset: None,
                body: text.into_bytes(),
            })));
        }
    }
}
pub fn open(path: &std::path::Path, opts: &ReadOptions) -> anyhow::Result<Box<dyn Reader>> {
    use std::io::BufRead;
    let r: Box<dyn std::io::Read + Send> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path)?)
    };
    Ok(Box::new(TmpJsonl { lines: std::io::BufReader::new(r).lines(), off: 0, opts: opts.clone() }))
}
