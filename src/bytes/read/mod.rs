//! Stage 1, `read`: crawl dumps in, raw records out.
//!
//! Every input format is one file beside this one (`warc.rs`, `arc.rs`,
//! `jsonl.rs`, `pagefeed.rs`), and each turns a byte stream into a sequence of [`Item`]s:
//! a [`RawDoc`] (a record that carries a page and may become a document), a
//! [`Revisit`] (a WARC record that repeats an earlier one's payload), a
//! [`Redirect`], or a [`Skip`] (a record that is not a document, or is
//! corrupt), so that nothing read is ever silently dropped; after its
//! records, a reader may add a [`Note`], a warning about the input as a
//! whole. Readers do not decide whether the content type is usable or
//! assign document IDs: extraction and the fingerprint stage do that, in
//! input order. What the four readers
//! share (the queue of items, the end of the data, the search for the next
//! record) is in `records.rs`, so that each file holds only its format.
//!
//! A reader returns `Err` only when the input as a whole cannot be read any
//! further (an I/O error from the file system); bad data inside the input is
//! a [`Skip`] with `SkipReason::is_corrupt` true, and reading goes on with
//! the next record the reader can find.

pub(crate) mod arc;
mod block;
pub(crate) mod budget;
pub(crate) mod digest;
pub mod gz;
pub(crate) mod http;
mod inflate;
pub mod jsonl;
pub(crate) mod pagefeed;
mod records;
pub(crate) mod split;
pub(crate) mod stored;
pub(crate) mod walk;
pub mod warc;
pub(crate) mod zst;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, bail};

pub use digest::Digest;

/// A record's payload: the bytes of a buffer from some offset on. A WARC
/// or ARC response's block is read whole, HTTP header first; keeping the
/// block and where its body starts saves moving every body down over its
/// header (a copy of every page's bytes). Reads as a byte slice.
#[derive(Default)]
pub struct Body {
    buf: Vec<u8>,
    start: usize,
    /// A big page's hold on the memory it takes until it has been worked
    /// on ([`budget`]).
    lease: Option<budget::Lease>,
}

/// A copy holds no lease: only the page being worked on does.
impl Clone for Body {
    fn clone(&self) -> Body {
        Body { buf: self.buf.clone(), start: self.start, lease: None }
    }
}

impl Body {
    /// The bytes of `buf` from `start` on (none when `start` is past its
    /// end).
    pub(crate) fn after(buf: Vec<u8>, start: usize) -> Body {
        let start = start.min(buf.len());
        Body { buf, start, lease: None }
    }

    /// The body, holding `lease` until it is dropped or
    /// [`Body::take_lease`] takes the lease.
    pub(crate) fn leased(mut self, lease: Option<budget::Lease>) -> Body {
        self.lease = lease;
        self
    }

    /// Takes the lease the body holds, to hold it longer than the body (a
    /// page's text is worked on after its payload is dropped) or to end it
    /// (a page that waits for others must hold none).
    pub(crate) fn take_lease(&mut self) -> Option<budget::Lease> {
        self.lease.take()
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// The heap bytes it holds (the HTTP header before the body included).
    pub(crate) fn held(&self) -> usize {
        self.buf.capacity()
    }
}

impl From<Vec<u8>> for Body {
    fn from(buf: Vec<u8>) -> Body {
        Body { buf, start: 0, lease: None }
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Body {}

impl PartialEq<[u8]> for Body {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for Body {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Body {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<Vec<u8>> for Body {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

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
    /// The charset parameter of the content type, lowercased, if any: the
    /// declared charset that `extract::charset` weighs.
    pub charset: Option<String>,
    /// The payload: for HTTP responses, the body after the HTTP header.
    pub body: Body,
    /// WARC only: the `WARC-Payload-Digest`, normalized. Records with the
    /// same digest carry the same payload bytes, which lets the fingerprint
    /// stage reuse one extraction and resolve revisits.
    pub payload_digest: Option<Digest>,
    /// `WARC-Date` as written, which a revisit names in
    /// `WARC-Refers-To-Date`; an ARC record's 14-digit date written the
    /// same way (`2024-01-02T03:04:05Z`). `None` for other formats.
    pub date: Option<String>,
    /// The HTTP status of the response that carried the page (200: a
    /// response of another status is no document), `None` for a record
    /// without an HTTP header (a WARC `resource`, JSONL, a page feed).
    pub status: Option<u16>,
    /// The HTTP transfer and content codings the reader undid on the body
    /// (`chunked`, `gzip`, ...), comma-separated, empty when none. With the
    /// content type and charset it decides how a stored payload became
    /// `body`, so two records share an extraction only when all agree.
    pub codings: String,
}

/// A WARC `revisit` record: a later capture whose payload is the same as
/// an earlier record's, which the writer did not store again. The
/// fingerprint stage makes it a copy of that record when it has read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Revisit {
    pub offset: u64,
    /// The revisited URL, as recorded.
    pub url: String,
    /// `WARC-Payload-Digest`: the payload it repeats.
    pub payload_digest: Option<Digest>,
    /// `WARC-Refers-To-Target-URI` (angle brackets removed) and
    /// `WARC-Refers-To-Date`: the record it repeats.
    pub refers_to: Option<(String, String)>,
    /// Its own `WARC-Date`: when the page was seen again.
    pub date: Option<String>,
}

/// An HTTP redirect (a 3xx response with a `Location`): not a document,
/// but a link from one URL to another that the report can follow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redirect {
    pub offset: u64,
    pub url: String,
    pub status: u16,
    /// The `Location` header as sent (possibly relative to `url`).
    pub location: String,
}

/// An HTTP response whose status is neither 200 nor a redirect (a 304, a
/// 404, a 500...): not a document, counted as a
/// [`SkipReason::HttpStatus`] skip, but with its URL, which tells an
/// analysis of a recrawl that a page was lost, or is unchanged (304).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub offset: u64,
    pub url: String,
    pub status: u16,
}

impl Status {
    /// The skip it counts as.
    pub(crate) fn as_skip(&self) -> Skip {
        Skip::new(self.offset, SkipReason::HttpStatus, self.status.to_string())
    }
}

/// A record that did not become a page, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// Byte offset of the record (or of the bad bytes) in its input.
    pub offset: u64,
    /// The record's line in its input, from 1, for a format whose records
    /// are lines (JSONL), which people find by their line rather than by
    /// their offset; in a gzip input, the line of the decompressed text,
    /// known until damaged data loses lines. `None` otherwise.
    pub line: Option<u64>,
    pub reason: SkipReason,
    /// A short human-readable detail for corrupt records (what was wrong);
    /// empty for ordinary non-document records.
    pub detail: String,
}

impl Skip {
    /// A skip of the record (or the bad bytes) at `offset`, with no line.
    pub(crate) fn new(offset: u64, reason: SkipReason, detail: impl Into<String>) -> Skip {
        Skip { offset, line: None, reason, detail: detail.into() }
    }
}

/// Why a record is not a document. The names from `SkipReason::name` are
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
    /// WARC `revisit` record whose original was not read before it (or was
    /// read but had neither a matching payload digest nor, when it had no
    /// digest, a matching target URI and date).
    RevisitUnresolved,
    /// A segment of a record split over several (`WARC-Segment-Number`,
    /// `continuation` records): the writer splits only records larger than
    /// its file size limit, far beyond the record size limit here, so
    /// segments are counted, not reassembled.
    SegmentedRecord,
    /// Any other WARC record type (unknown types).
    WarcOtherType,
    /// ARC `filedesc:` record: the version block at the start of an ARC
    /// file.
    ArcFileHeader,
    /// Any other ARC record that is not a page fetch: `dns:` lookups.
    ArcOther,
    /// HTTP response whose status is not 200 (and not a redirect).
    HttpStatus,
    /// HTTP redirect (3xx with `Location`), listed in `redirects.csv`.
    HttpRedirect,
    /// Payload whose content type is not text/plain, text/html or
    /// application/xhtml+xml (decided by `extract`, not by readers).
    UnsupportedContentType,
    /// A record whose payload is over the size limit
    /// ([`ReadOptions::max_record_bytes`]): read past, not kept.
    RecordTooLarge,
    /// An HTTP body in a content coding that is not decoded (`br`, `zstd`,
    /// ...), or that claims gzip and does not decompress: its bytes are not
    /// the page's text.
    UnsupportedEncoding,

    // Corrupt input: counted, and sampled with file and offset in stats.json.
    /// A record header that cannot be parsed (WARC header, HTTP header, page
    /// feed header).
    CorruptHeader,
    /// A record that ends before its declared length (cut off at end of file).
    TruncatedRecord,
    /// A gzip member that fails to decompress.
    CorruptGzip,
    /// A zstd frame that fails to decompress or to check, or a zstd
    /// dictionary frame that cannot be used.
    CorruptZstd,
    /// Bytes between records that are not a record (reader resynchronized).
    Garbage,
    /// A JSONL line that is not a JSON object, or lacks the text field.
    BadJson,
}

impl SkipReason {
    /// Every reason, in the order stats.json lists them.
    pub(crate) const ALL: [SkipReason; 19] = [
        SkipReason::WarcRequest,
        SkipReason::WarcMetadata,
        SkipReason::WarcInfo,
        SkipReason::RevisitUnresolved,
        SkipReason::SegmentedRecord,
        SkipReason::WarcOtherType,
        SkipReason::ArcFileHeader,
        SkipReason::ArcOther,
        SkipReason::HttpStatus,
        SkipReason::HttpRedirect,
        SkipReason::UnsupportedContentType,
        SkipReason::RecordTooLarge,
        SkipReason::UnsupportedEncoding,
        SkipReason::CorruptHeader,
        SkipReason::TruncatedRecord,
        SkipReason::CorruptGzip,
        SkipReason::CorruptZstd,
        SkipReason::Garbage,
        SkipReason::BadJson,
    ];

    /// The stable snake_case name used in stats.json.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SkipReason::WarcRequest => "warc_request",
            SkipReason::WarcMetadata => "warc_metadata",
            SkipReason::WarcInfo => "warc_warcinfo",
            SkipReason::RevisitUnresolved => "revisit_unresolved",
            SkipReason::SegmentedRecord => "segmented_record",
            SkipReason::WarcOtherType => "warc_other_type",
            SkipReason::ArcFileHeader => "arc_filedesc",
            SkipReason::ArcOther => "arc_other",
            SkipReason::HttpStatus => "http_status_not_200",
            SkipReason::HttpRedirect => "http_redirect",
            SkipReason::UnsupportedContentType => "unsupported_content_type",
            SkipReason::RecordTooLarge => "record_too_large",
            SkipReason::UnsupportedEncoding => "unsupported_content_encoding",
            SkipReason::CorruptHeader => "corrupt_header",
            SkipReason::TruncatedRecord => "truncated_record",
            SkipReason::CorruptGzip => "corrupt_gzip",
            SkipReason::CorruptZstd => "corrupt_zstd",
            SkipReason::Garbage => "garbage_between_records",
            SkipReason::BadJson => "bad_json",
        }
    }

    /// Whether this reason means the input was damaged (as opposed to a
    /// well-formed record that simply is not a document).
    pub(crate) fn is_corrupt(self) -> bool {
        matches!(
            self,
            SkipReason::CorruptHeader
                | SkipReason::TruncatedRecord
                | SkipReason::CorruptGzip
                | SkipReason::CorruptZstd
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
/// compressed file, as CDX indexes give it; the same for a record that
/// starts a zstd frame. Otherwise (a record inside a whole-file gzip member
/// or zstd frame), the offset in the decompressed stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Doc(RawDoc),
    Skip(Skip),
    Revisit(Revisit),
    Redirect(Redirect),
    Status(Status),
    /// A page whose body was not read, because [`ReadOptions::known`] said
    /// its payload is known already: its fields without the body.
    Known(RawDoc),
    /// No record: what the reader says of its input as a whole, after the
    /// last record.
    Note(Note),
}

/// A warning about a whole input, made once it is read: a JSONL input none
/// of whose records has the URL field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Where the input's last record starts, so that a note keeps input
    /// order among the records' offsets.
    pub offset: u64,
    /// The warning, without the input's name (its reader does not know it).
    pub message: String,
}

impl Item {
    /// Where the record starts in its input.
    pub fn offset(&self) -> u64 {
        match self {
            Item::Doc(d) => d.offset,
            Item::Skip(s) => s.offset,
            Item::Revisit(r) => r.offset,
            Item::Redirect(r) => r.offset,
            Item::Status(s) => s.offset,
            Item::Known(d) => d.offset,
            Item::Note(n) => n.offset,
        }
    }
}

/// A source of records: one open input in one format.
pub trait Reader: Send {
    /// The next item, `Ok(None)` at the end of input. `Err` only for I/O
    /// errors that stop this input; bad data is an `Item::Skip`.
    fn next_item(&mut self) -> io::Result<Option<Item>>;
}

/// Which reader an input gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputFormat {
    /// Decided per input by `open`.
    Auto,
    Warc,
    Jsonl,
    PageFeed,
    Arc,
}

impl InputFormat {
    /// The name `--input-format` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Warc => "warc",
            InputFormat::Jsonl => "jsonl",
            InputFormat::PageFeed => "pagefeed",
            InputFormat::Arc => "arc",
        }
    }

    /// The format of a name `--input-format` takes.
    pub(crate) fn from_name(name: &str) -> Option<InputFormat> {
        [InputFormat::Auto, InputFormat::Warc, InputFormat::Jsonl, InputFormat::PageFeed, InputFormat::Arc]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// How inputs are read.
#[derive(Clone, Debug)]
pub(crate) struct ReadOptions {
    pub format: InputFormat,
    /// JSONL: the field that holds the URL.
    pub url_field: String,
    /// JSONL: the field that holds the text.
    pub text_field: String,
    /// The most payload bytes one record may have; longer records are read
    /// past and skipped with [`SkipReason::RecordTooLarge`], so that one
    /// huge record cannot exhaust memory.
    pub max_record_bytes: u64,
    /// Documents whose body need not be read: their payload is known
    /// already. Only per-record gzip WARC responses are left compressed.
    pub known: Option<Known>,
    /// The share of the memory budget that big pages are read under
    /// ([`budget`]); none outside the fingerprint stage.
    pub pages: Option<std::sync::Arc<budget::Pages>>,
}

/// Says of a page, from its fields before its body (URL, payload digest,
/// content type, charset, HTTP codings), whether its payload is known
/// already, so that a reader can leave its body compressed and yield an
/// [`Item::Known`].
#[derive(Clone)]
pub(crate) struct Known(pub(crate) std::sync::Arc<dyn Fn(&RawDoc) -> bool + Send + Sync>);

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Known")
    }
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            format: InputFormat::Auto,
            url_field: "url".to_string(),
            text_field: "text".to_string(),
            max_record_bytes: 64 << 20,
            known: None,
            pages: None,
        }
    }
}

/// How many leading bytes format detection looks at.
const SNIFF_BYTES: usize = 4096;

/// An input as [`open`] finds it: records to read, or a whole input that
/// holds none and is skipped (counted and reported by the caller, not an
/// error, so that one empty file in a long list does not stop a run).
pub(crate) enum Input {
    Records(Box<dyn Reader>),
    Skipped(InputSkip),
}

/// An input opened and its format decided, with nothing read from it but
/// the bytes that decided it ([`probe`]): what [`open`] does before it
/// makes a reader, and what the fingerprint stage does with every input
/// before it touches an output.
pub(crate) enum Opened {
    Records(Box<gz::Source>, InputFormat),
    Skipped(InputSkip),
}

impl Opened {
    /// The input's reader, reading as `opts` says (which may know payloads
    /// that the options it was opened with did not).
    pub(crate) fn input(self, opts: &ReadOptions) -> Input {
        match self {
            Opened::Records(src, format) => Input::Records(reader(*src, format, opts)),
            Opened::Skipped(why) => Input::Skipped(why),
        }
    }
}

/// Why a whole input is skipped. The names from [`InputSkip::name`] are
/// the keys stats.json uses: keep them stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputSkip {
    /// Nothing to read: zero bytes, or a gzip file that decompresses to
    /// zero bytes (crawlers leave such files behind when they are stopped
    /// before the first record).
    Empty,
    /// A directory. It is not read into: which of its files are crawl
    /// files, and in what order, is for the user to say (a shell glob
    /// gives a defined order), since docIDs follow input order.
    Directory,
}

impl InputSkip {
    pub(crate) fn name(self) -> &'static str {
        match self {
            InputSkip::Empty => "empty_file",
            InputSkip::Directory => "directory",
        }
    }
}

/// An input that can be read only once, front to back: standard input,
/// or a path that names no regular file nor directory (a pipe, such as
/// bash's `<(zcat crawl.warc.gz)`, a FIFO made by `mkfifo`, a character
/// device). Such an input is opened once and kept open from the moment
/// its format is sniffed, since opening it again would lose what the
/// first opening read (or, for a FIFO, wait for a writer that has gone);
/// it has no identity a stage stamp could key on, and cannot be read
/// again by `dedup`, `explain` or the report's fuzzy signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    StandardInput,
    /// A pipe, FIFO or device, by its device and inode numbers: the same
    /// stream given twice under two names is told.
    Node(u64, u64),
}

/// Whether `path` is a [`Stream`], and which; `None` for a regular file,
/// a directory, or a path that cannot be examined (whose error comes
/// when it is opened).
pub(crate) fn stream(path: &Path) -> Option<Stream> {
    if path == Path::new("-") {
        return Some(Stream::StandardInput);
    }
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() || meta.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(Stream::Node(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        Some(Stream::Node(0, 0))
    }
}

/// Opens one input: a file path, or "-" for standard input. Detects the
/// format when `Auto` by sniffing the first decompressed bytes (after
/// leading whitespace and a UTF-8 byte order mark: `WARC/` is WARC, `{` is
/// JSONL, the page-feed separator is a page feed, `filedesc://` is ARC),
/// falling back to the file extension (`.warc`, `.wet`, `.jsonl`,
/// `.ndjson`, `.arc`, `.pagefeed`, each alone or with `.gz` or `.zst`),
/// then, for a file whose first record start is damaged, to a page-feed
/// separator or a WARC version line that starts a later line of the first
/// 4 KiB; if none decides, an error saying to pass --input-format. A
/// compression other than gzip and zstd is an error that says how to pipe
/// the input in. A directory, or an input with nothing in it, is
/// [`Input::Skipped`]. Errors name the path: "cannot open data/x.warc.gz:
/// No such file or directory (os error 2)" (printed with `{:#}`).
pub(crate) fn open(path: &Path, opts: &ReadOptions) -> anyhow::Result<Input> {
    Ok(probe(path, opts)?.input(opts))
}

/// [`open`] up to the reader: the input opened and its format decided, or
/// its error.
pub(crate) fn probe(path: &Path, opts: &ReadOptions) -> anyhow::Result<Opened> {
    let stdin = path == Path::new("-");
    let mut raw: Box<dyn BufRead + Send> = if stdin {
        Box::new(BufReader::with_capacity(gz::BUF_SIZE, io::stdin()))
    } else {
        let meta = std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
        if meta.is_dir() {
            return Ok(Opened::Skipped(InputSkip::Directory));
        }
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        Box::new(BufReader::with_capacity(gz::BUF_SIZE, file))
    };
    let name = if stdin { "standard input".to_string() } else { path.display().to_string() };
    // An uncompressed tar archive, before the source takes its members'
    // gzip data for a damaged gzip file.
    if is_tar(raw.fill_buf().with_context(|| format!("cannot read {name}"))?) {
        bail!("{}", tar_refusal(&name, stdin));
    }
    let mut src = gz::Source::new(raw).with_context(|| format!("cannot read {name}"))?;
    if src.peek(1).with_context(|| format!("cannot read {name}"))?.is_empty() && !src.at_break() {
        return Ok(Opened::Skipped(InputSkip::Empty));
    }
    if !src.is_compressed() {
        let head = src.peek(16).with_context(|| format!("cannot read {name}"))?;
        if let Some((compression, command)) = foreign_compression(head) {
            let file = if stdin { "FILE".to_string() } else { name.clone() };
            bail!(
                "{name} is {compression}-compressed, which overlap does not decompress \
                 (it reads gzip and zstd): pipe it in, as in `{command} {file} | overlap run - --out DIR`"
            );
        }
    }
    // A tar archive (of WARC files, say), gzip-compressed: read as a crawl
    // it gives one garbage record and no document, whatever the format
    // says. Its members are files to give one by one.
    if is_tar(src.peek(TAR_HEADER).with_context(|| format!("cannot read {name}"))?) {
        bail!("{}", tar_refusal(&name, stdin));
    }
    let format = format_of(&mut src, path, &name, opts.format)?;
    if format == InputFormat::Jsonl {
        let head = src.peek(gz::BUF_SIZE).with_context(|| format!("cannot read {name}"))?;
        let whole = head.len() < gz::BUF_SIZE;
        if let Err(why) = jsonl::check_first_record(head, whole, &opts.text_field) {
            bail!("{name}: {why}");
        }
    }
    Ok(Opened::Records(Box::new(src), format))
}

/// Opens `path` again at `offset`, where a record starts (an offset as
/// docs.csv gives it), to read that record once more. `None` when the input
/// cannot be read there again: standard input, or a gzip file whose offset
/// is not the start of a member (a record inside a whole-file gzip member,
/// whose offset counts decompressed bytes).
pub(crate) fn open_at(
    path: &Path,
    offset: u64,
    opts: &ReadOptions,
) -> anyhow::Result<Option<Box<dyn Reader>>> {
    if path == Path::new("-") {
        return Ok(None);
    }
    let what = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut head = [0u8; 8];
    let head = match file.read_exact(&mut head) {
        Ok(()) => &head[..],
        Err(_) => &[][..],
    };
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let zstd = head.starts_with(&zst::FRAME_MAGIC) || head.starts_with(&zst::DICT_FRAME_MAGIC);
    // A zstd file's frames need the dictionary at its start: the source is
    // given the dictionary frame, then the file from `offset` on.
    let mut prefix = Vec::new();
    if let Some((0xd, size)) = zst::skippable(head).filter(|&(_, size)| zstd && size <= zst::MAX_DICT) {
        prefix.extend_from_slice(head);
        (&mut file).take(u64::from(size)).read_to_end(&mut prefix).with_context(what)?;
    }
    file.seek(SeekFrom::Start(offset)).with_context(what)?;
    let mut magic = [0u8; 4];
    let at_member = file.read_exact(&mut magic).is_ok();
    if gzip && !(at_member && magic.starts_with(&[0x1f, 0x8b]))
        || zstd && !(at_member && magic == zst::FRAME_MAGIC)
    {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(offset)).with_context(what)?;
    let raw = Box::new(BufReader::with_capacity(gz::BUF_SIZE, io::Cursor::new(prefix).chain(file)));
    let name = path.display().to_string();
    let mut src = gz::Source::new(raw).with_context(|| format!("cannot read {name}"))?;
    // A record start sniffs like the start of its file.
    let format = format_of(&mut src, path, &name, opts.format)?;
    Ok(Some(reader(src, format, opts)))
}

/// The format of `src`, the bytes of `path`: `format`, or, when it is
/// `Auto`, the one sniffed from the first bytes.
fn format_of(
    src: &mut gz::Source,
    path: &Path,
    name: &str,
    format: InputFormat,
) -> anyhow::Result<InputFormat> {
    if format != InputFormat::Auto {
        return Ok(format);
    }
    let head = src.peek(SNIFF_BYTES).with_context(|| format!("cannot read {name}"))?;
    match sniff(head).or_else(|| by_extension(path)).or_else(|| later_record_start(head)) {
        Some(format) => Ok(format),
        None => bail!(
            "cannot tell the format of {name} from its first bytes or its name: \
             pass --input-format warc, arc, jsonl or pagefeed"
        ),
    }
}

/// A reader of `src` in `format` (not `Auto`).
fn reader(src: gz::Source, format: InputFormat, opts: &ReadOptions) -> Box<dyn Reader> {
    let max = opts.max_record_bytes;
    let pages = opts.pages.clone();
    match format {
        InputFormat::Jsonl => {
            let reader = jsonl::JsonlReader::new(src, &opts.url_field, &opts.text_field, max);
            Box::new(records::under(reader, pages))
        }
        InputFormat::PageFeed => Box::new(records::under(pagefeed::PageFeedReader::new(src, max), pages)),
        InputFormat::Arc => Box::new(records::under(arc::ArcReader::new(src, max), pages)),
        // `Auto` was resolved by [`format_of`].
        InputFormat::Warc | InputFormat::Auto => {
            Box::new(records::under(warc::WarcReader::new(src, max).knowing(opts.known.clone()), pages))
        }
    }
}

fn sniff(head: &[u8]) -> Option<InputFormat> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = head.get(start..)?;
    if head.starts_with(b"WARC/") {
        Some(InputFormat::Warc)
    } else if head.starts_with(b"{") {
        Some(InputFormat::Jsonl)
    } else if head.starts_with(pagefeed::SEPARATOR) {
        Some(InputFormat::PageFeed)
    } else if head.starts_with(b"filedesc://") {
        Some(InputFormat::Arc)
    } else {
        None
    }
}

/// The format of a record that starts a later line of `head`, for a file
/// whose first record start is damaged: one flipped bit in a page feed's
/// first separator made the whole feed unreadable without
/// `--input-format`, though its reader skips the damaged record (195 of
/// 1,393 mutated feeds). The separator is 40 bytes no text has by chance;
/// `WARC/1.` must follow a blank line, as it does between records.
fn later_record_start(head: &[u8]) -> Option<InputFormat> {
    let separator = memchr::memmem::find_iter(head, pagefeed::SEPARATOR)
        .map(|i| (i, InputFormat::PageFeed))
        .find(|&(i, _)| i > 0 && head[i - 1] == b'\n');
    let warc = memchr::memmem::find_iter(head, b"\n\r\nWARC/1.")
        .chain(memchr::memmem::find_iter(head, b"\n\nWARC/1."))
        .min()
        .map(|i| (i, InputFormat::Warc));
    [separator, warc].into_iter().flatten().min_by_key(|&(i, _)| i).map(|(_, f)| f)
}

/// The size of a tar header block, whose magic is at [`TAR_MAGIC_AT`].
const TAR_HEADER: usize = 512;
const TAR_MAGIC_AT: usize = 257;

/// Whether `head` starts with a tar header: POSIX `ustar\0` or GNU's
/// `ustar  \0` at offset 257 (no crawl record has NULs there).
fn is_tar(head: &[u8]) -> bool {
    head.get(TAR_MAGIC_AT..TAR_MAGIC_AT + 6).is_some_and(|m| m == b"ustar\0" || m == b"ustar ")
}

/// The one line refusing a tar archive, with the commands that give its
/// members instead.
fn tar_refusal(name: &str, stdin: bool) -> String {
    let file = if stdin { "ARCHIVE" } else { name };
    format!(
        "{name} is a tar archive, which overlap does not read: extract it (`tar -xf {file} -C DIR`) \
         and give the files, or pipe one member in (`tar -xOf {file} MEMBER | overlap run - --out OUT`)"
    )
}

/// A compression that the input starts with and that is not read (gzip
/// and zstd are): its name and the command that decompresses it to
/// standard output. Read as text, such a file gives no document and, with
/// `--input-format`, no error either, so it is refused by its magic
/// whatever the format says.
fn foreign_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const MAGICS: [(&[u8], &str, &str); 6] = [
        (b"\xfd7zXZ\x00", "xz", "xz -dc"),
        (b"BZh", "bzip2", "bzip2 -dc"),
        (b"\x04\x22\x4d\x18", "lz4", "lz4 -dc"),
        (b"\x5d\x00\x00", "lzma", "xz -dc"),
        (b"PK\x03\x04", "zip", "unzip -p"),
        (b"7z\xbc\xaf\x27\x1c", "7z", "7z x -so"),
    ];
    let &(_, name, command) = MAGICS.iter().find(|(magic, name, _)| {
        // bzip2's magic is followed by the block size, a digit, and the
        // block magic (the digits of pi); a text that starts "BZh" is not.
        head.starts_with(magic)
            && (*name != "bzip2"
                || head.get(3).is_some_and(u8::is_ascii_digit) && head.get(4..10) == Some(b"1AY&SY"))
    })?;
    Some((name, command))
}

/// The format that a file name's extension names, if it does.
fn by_extension(path: &Path) -> Option<InputFormat> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(&name);
    if name.ends_with(".warc") || name.ends_with(".wet") {
        Some(InputFormat::Warc)
    } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
        Some(InputFormat::Jsonl)
    } else if name.ends_with(".arc") {
        Some(InputFormat::Arc)
    } else if name.ends_with(".pagefeed") {
        Some(InputFormat::PageFeed)
    } else {
        None
    }
}

/// Helpers shared by the readers' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::gz::Source;
    use super::{Item, RawDoc, Reader, Skip};

    /// A source of `data`, as a file of those bytes would be read.
    pub(crate) fn source(data: Vec<u8>) -> Source {
        Source::new(Box::new(std::io::Cursor::new(data))).unwrap()
    }

    /// Every item of `reader`, failing the test if it yields more than
    /// `limit` (a reader that does not end).
    pub(crate) fn drain(reader: &mut dyn Reader, limit: usize) -> Vec<Item> {
        let mut items = Vec::new();
        while let Some(item) = reader.next_item().unwrap() {
            items.push(item);
            assert!(items.len() <= limit, "reader does not end");
        }
        items
    }

    /// The (offset, url, body) of every document among `items`.
    pub(crate) fn documents(items: &[Item]) -> Vec<(u64, String, Vec<u8>)> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Doc(d) => Some((d.offset, d.url.clone(), d.body.to_vec())),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn doc(item: &Item) -> &RawDoc {
        match item {
            Item::Doc(d) => d,
            other => panic!("expected a document, got {other:?}"),
        }
    }

    /// The skip an item is, or counts as (an HTTP status).
    pub(crate) fn skipped(item: &Item) -> Skip {
        match item {
            Item::Skip(s) => s.clone(),
            Item::Status(s) => s.as_skip(),
            other => panic!("expected a skip, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn open_bytes(name: &str, data: &[u8], opts: &ReadOptions) -> anyhow::Result<Vec<Item>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        let Input::Records(mut reader) = open(&path, opts)? else { panic!("{name}: input skipped") };
        let mut items = Vec::new();
        while let Some(item) = reader.next_item()? {
            items.push(item);
        }
        Ok(items)
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn urls(items: &[Item]) -> Vec<String> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Doc(d) => Some(d.url.clone()),
                _ => None,
            })
            .collect()
    }

    const WARC: &[u8] = b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://a/\r\n\
        Content-Length: 2\r\n\r\nhi\r\n\r\n";
    const JSONL: &[u8] = b"{\"url\": \"http://j/\", \"text\": \"hi\"}\n";
    const FEED: &[u8] = b"==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>\nURL: http://p/\n\nhi\n";
    const ARC: &[u8] = b"filedesc://x.arc 0.0.0.0 20240301080000 text/plain 76\n1 0 InternetArchive\n\
        URL IP-address Archive-date Content-type Archive-length\n\n\
        http://r/ 192.0.2.1 20240301080000 text/plain 2\nhi\n";

    #[test]
    fn formats_are_sniffed_whatever_the_name() {
        let opts = ReadOptions::default();
        assert_eq!(urls(&open_bytes("x", WARC, &opts).unwrap()), ["http://a/"]);
        assert_eq!(urls(&open_bytes("x.jsonl", &gz(WARC), &opts).unwrap()), ["http://a/"]);
        assert_eq!(urls(&open_bytes("x", JSONL, &opts).unwrap()), ["http://j/"]);
        assert_eq!(urls(&open_bytes("x", &gz(JSONL), &opts).unwrap()), ["http://j/"]);
        let feed = [b"\xef\xbb\xbf \n".as_slice(), FEED].concat();
        assert_eq!(urls(&open_bytes("x.warc", &feed, &opts).unwrap()), ["http://p/"]);
        assert_eq!(urls(&open_bytes("x.warc", ARC, &opts).unwrap()), ["http://r/"]);
        assert_eq!(urls(&open_bytes("x", &gz(ARC), &opts).unwrap()), ["http://r/"]);
    }

    #[test]
    fn a_damaged_first_record_start_does_not_hide_the_format() {
        let opts = ReadOptions::default();
        // One bit flipped in the first separator; a second page follows.
        let second = b"==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>\nURL: http://q/\n\nho\n";
        let mut feed = [FEED, second.as_slice()].concat();
        feed[5] ^= 0x04;
        for name in ["feed.pagefeed", "feed.PAGEFEED.gz", "feed.txt"] {
            let items = open_bytes(name, &feed, &opts).unwrap();
            assert_eq!(urls(&items), ["http://q/"], "{name}");
            assert!(items.iter().any(|i| matches!(i, Item::Skip(_))), "{name}: the damaged page is counted");
        }
        let mut warc = [WARC, WARC].concat();
        warc[0] = b'X';
        assert_eq!(urls(&open_bytes("crawl.bin", &warc, &opts).unwrap()), ["http://a/"]);
        // A later separator that does not start a line decides nothing.
        let text = [b"junk ".as_slice(), FEED].concat();
        assert!(open_bytes("notes.txt", &text, &opts).is_err());
    }

    #[test]
    fn extension_decides_when_the_bytes_do_not() {
        let opts = ReadOptions::default();
        let items = open_bytes("crawl.WARC.gz", &gz(b"junk\n"), &opts).unwrap();
        assert!(matches!(&items[..], [Item::Skip(Skip { reason: SkipReason::Garbage, .. })]), "{items:?}");
        let items = open_bytes("x.ndjson", b"junk\n", &opts).unwrap();
        assert!(matches!(&items[..], [Item::Skip(Skip { reason: SkipReason::BadJson, .. })]), "{items:?}");
        assert!(open_bytes("x.wet", b"\n", &opts).unwrap().is_empty());
        // An ARC file without its version block.
        let items = open_bytes("old.ARC.gz", &gz(&ARC[131..]), &opts).unwrap();
        assert_eq!(urls(&items), ["http://r/"]);
        assert_eq!(urls(&open_bytes("old.arc", &ARC[131..], &opts).unwrap()), ["http://r/"]);
    }

    /// `data` as per-record zstd frames (one per piece) after a dictionary
    /// frame holding `dict` compressed, as Wget-AT writes `.warc.zst`.
    fn zstd_with_dictionary(pieces: &[&[u8]], dict: &[u8]) -> (Vec<u8>, Vec<u64>) {
        let stored = zstd::bulk::compress(dict, 3).unwrap();
        let mut file = [&zst::DICT_FRAME_MAGIC[..], &(stored.len() as u32).to_le_bytes(), &stored].concat();
        let mut c = zstd::bulk::Compressor::with_dictionary(3, dict).unwrap();
        c.include_checksum(true).unwrap();
        let mut offsets = Vec::new();
        for piece in pieces {
            offsets.push(file.len() as u64);
            file.extend(c.compress(piece).unwrap());
        }
        (file, offsets)
    }

    static DICT: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(warc_dictionary);

    fn warc_dictionary() -> Vec<u8> {
        let samples: Vec<String> = (0..300)
            .map(|i| format!("WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://{i}/\r\n\r\nhi {i}"))
            .collect();
        zstd::dict::from_samples(&samples, 1024).unwrap()
    }

    #[test]
    fn warc_zst_is_sniffed_and_read_again_at_a_frame_with_its_dictionary() {
        let opts = ReadOptions::default();
        let second = String::from_utf8(WARC.to_vec()).unwrap().replace("http://a/", "http://b/");
        let (file, offsets) = zstd_with_dictionary(&[WARC, second.as_bytes()], &warc_dictionary());
        for name in ["crawl.warc.zst", "crawl.bin"] {
            assert_eq!(urls(&open_bytes(name, &file, &opts).unwrap()), ["http://a/", "http://b/"], "{name}");
        }
        assert_eq!(by_extension(Path::new("x.WARC.ZST")), Some(InputFormat::Warc));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.warc.zst");
        std::fs::write(&path, &file).unwrap();
        let mut reader = open_at(&path, offsets[1], &opts).unwrap().expect("a frame start");
        let item = reader.next_item().unwrap().unwrap();
        assert_eq!(testing::doc(&item).url, "http://b/");
        // An offset inside a frame is not a place to read from.
        assert!(open_at(&path, offsets[1] + 1, &opts).unwrap().is_none());
    }

    #[test]
    fn other_compressions_are_named_with_the_way_to_pipe_them() {
        let xz = b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\x00\x21\x01\x16\x00\x00\x00";
        let bz2 = b"BZh91AY&SY\x9b\x8e\x12\x34\x00\x00\x01";
        for (name, data, says) in [("c.warc.xz", &xz[..], "xz -dc"), ("c.warc.bz2", &bz2[..], "bzip2 -dc")] {
            for format in [InputFormat::Auto, InputFormat::Warc] {
                let opts = ReadOptions { format, ..ReadOptions::default() };
                let msg = format!("{:#}", open_bytes(name, data, &opts).unwrap_err());
                assert!(msg.contains(name) && msg.contains(says) && msg.contains("| overlap run -"), "{msg}");
            }
        }
        // Text that starts like a magic is text.
        let opts = ReadOptions { format: InputFormat::Jsonl, ..ReadOptions::default() };
        assert!(open_bytes("BZh.jsonl", b"BZh hello\n", &opts).is_ok());
    }

    #[test]
    fn undecided_format_is_an_error_naming_the_flag() {
        let err = open_bytes("notes.txt", b"hello", &ReadOptions::default()).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("notes.txt") && msg.contains("--input-format"), "{msg}");
        // An explicit format is used as given.
        let opts = ReadOptions { format: InputFormat::PageFeed, ..ReadOptions::default() };
        assert_eq!(urls(&open_bytes("notes.txt", FEED, &opts).unwrap()), ["http://p/"]);
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let err = open(Path::new("data/no-such.warc.gz"), &ReadOptions::default()).err().unwrap();
        assert_eq!(
            format!("{err:#}"),
            "cannot open data/no-such.warc.gz: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn directories_and_empty_inputs_are_skipped_whole() {
        let opts = ReadOptions::default();
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(open(dir.path(), &opts), Ok(Input::Skipped(InputSkip::Directory))));
        for (name, data) in
            [("x", Vec::new()), ("notes.txt", gz(b"")), ("x.warc.gz", [gz(b""), gz(b"")].concat())]
        {
            let path = dir.path().join(name);
            std::fs::write(&path, &data).unwrap();
            assert!(matches!(open(&path, &opts), Ok(Input::Skipped(InputSkip::Empty))), "{name}");
        }
        // Blank is not empty: the reader reads it (and finds no records).
        let path = dir.path().join("blank.warc");
        std::fs::write(&path, b"\r\n").unwrap();
        assert!(matches!(open(&path, &opts), Ok(Input::Records(_))));
    }

    /// Every item a reader of `format` makes of `data`, with a bound that
    /// catches a reader that does not end.
    fn read_bytes(format: InputFormat, data: &[u8], max: u64) -> Vec<Item> {
        let src = testing::source(data.to_vec());
        let mut reader: Box<dyn Reader> = match format {
            InputFormat::Jsonl => Box::new(jsonl::JsonlReader::new(src, "url", "text", max)),
            InputFormat::PageFeed => Box::new(pagefeed::PageFeedReader::new(src, max)),
            InputFormat::Arc => Box::new(arc::ArcReader::new(src, max)),
            InputFormat::Warc | InputFormat::Auto => Box::new(warc::WarcReader::new(src, max)),
        };
        testing::drain(reader.as_mut(), 2 * data.len() + 4)
    }

    /// Pieces that make the readers go deep: record starts, fields, line
    /// ends, JSON, gzip magic.
    const PIECES: [&[u8]; 28] = [
        b"WARC/1.0\r\n",
        b"WARC/1.1\n",
        b"WARC-Type: response\r\n",
        b"WARC-Type: resource\n",
        b"WARC-Type: request\r\n",
        b"Content-Length: 5\r\n",
        b"Content-Length: 40\n",
        b"Content-Length: x\n",
        b"WARC-Target-URI: <http://a/>\r\n",
        b"Content-Type: application/http\r\n",
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.0 404 Nope\n",
        b"Transfer-Encoding: chunked\r\n",
        b"Content-Encoding: gzip\r\n",
        b"5\r\nhello\r\n0\r\n\r\n",
        b"\r\n",
        b"\n",
        b" cont\n",
        b"==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>\n",
        b"URL: http://p/\n",
        b"filedesc://a.arc 0.0.0.0 20240301080000 text/plain 76\n",
        b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n",
        b"http://a/ 192.0.2.1 20240301080000 text/html 30\n",
        b"dns:a 192.0.2.1 20240301080000 text/dns 5 - - - - 12\n",
        b"{\"url\": \"u\", \"text\": \"t\"}",
        b"{\"text\": [",
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff",
        b"abc",
    ];

    fn check_all_readers(data: &[u8]) {
        for format in [InputFormat::Warc, InputFormat::Jsonl, InputFormat::PageFeed, InputFormat::Arc] {
            for max in [8, 1 << 20] {
                let items = read_bytes(format, data, max);
                // Offsets in compressed input count decompressed bytes and may
                // pass the compressed length; a damaged first byte does not
                // make input that reads as gzip plain.
                let source = gz::Source::new(Box::new(std::io::Cursor::new(data.to_vec())));
                if source.is_ok_and(|s| !s.is_compressed()) {
                    for item in &items {
                        let offset = item.offset();
                        assert!(offset < data.len() as u64, "{format:?}: offset {offset} past the end");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_bytes_never_panic_any_reader(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            check_all_readers(&data);
            check_all_readers(&gz(&data));
        }

        #[test]
        fn arbitrary_pieces_never_panic_any_reader(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
            per_piece_gzip in proptest::prelude::any::<bool>(),
        ) {
            let pieces: Vec<&[u8]> = picks.iter().map(|&i| PIECES[i]).collect();
            let data = pieces.concat();
            check_all_readers(&data);
            if per_piece_gzip {
                check_all_readers(&pieces.iter().map(|p| gz(p)).collect::<Vec<_>>().concat());
            } else {
                check_all_readers(&gz(&data));
            }
        }

        #[test]
        fn damaged_gzip_never_panics_any_reader(
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), 1..=255u8), 0..6),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let records = [WARC, JSONL, FEED, ARC, WARC, WARC];
            let mut data: Vec<u8> = records.iter().map(|r| gz(r)).collect::<Vec<_>>().concat();
            for (at, x) in flips {
                let i = at % data.len();
                data[i] ^= x;
            }
            data.truncate(cut % (data.len() + 1));
            check_all_readers(&data);
        }

        #[test]
        fn damaged_zstd_never_panics_any_reader(
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), 1..=255u8), 0..6),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let records = [WARC, JSONL, FEED, ARC, WARC, WARC];
            let (mut data, _) = zstd_with_dictionary(&records, &DICT);
            for (at, x) in flips {
                let i = at % data.len();
                data[i] ^= x;
            }
            data.truncate(cut % (data.len() + 1));
            check_all_readers(&data);
        }
    }

    #[test]
    fn reasons_are_listed_once_with_distinct_names() {
        let mut names: Vec<&str> = SkipReason::ALL.iter().map(|r| r.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SkipReason::ALL.len());
        assert!(!SkipReason::RecordTooLarge.is_corrupt());
        assert!(!SkipReason::UnsupportedEncoding.is_corrupt());
    }
}
