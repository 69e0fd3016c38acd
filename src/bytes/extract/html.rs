//! HTML to text: the rendered lines of a page, and its title.
//!
//! Chunks are lines, so this step decides what a line is, and a line here
//! means a *rendered* line: block-level elements (`<p>`, `<div>`, `<li>`,
//! `<td>`, headings, ...) and `<br>` end a line, while newlines in the source
//! of a paragraph do not (they are whitespace, as in a browser). Inside
//! `<pre>`, `<listing>`, `<textarea>`, `<xmp>` and after `<plaintext>`,
//! source newlines are kept.
//!
//! # What is kept and what is dropped
//!
//! * Dropped with their content, because a browser does not show it as page
//!   text: `<script>`, `<style>`, `<noscript>` (we render as a browser with
//!   scripting on does), `<iframe>`, `<noembed>`, `<noframes>` (all raw text
//!   elements whose content is never rendered), `<template>` (inert),
//!   `<svg>` and `<math>` (drawings and formulae, not lines of prose),
//!   `<video>`, `<audio>`, `<canvas>` (their content is fallback that a
//!   browser supporting them does not render) and `<datalist>` (its options
//!   are suggestions, not page text).
//! * Kept: `<object>` content, since current browsers have no plugins and
//!   render the fallback; everything in `<head>` that is not one of the
//!   elements above. A head holds only `<meta>`, `<link>`, `<base>` and the
//!   dropped elements, none of which has text, and stray text there is moved
//!   to the body by a browser, so the head needs no rule of its own. That
//!   also keeps a page whose `</head>` is omitted (which is valid HTML).
//! * `<title>` goes to [`HtmlText::title`]: the first title outside
//!   `<svg>`/`<math>`/`<template>` wins, as for `document.title`.
//! * Comments (an unterminated one runs to the end of the input), doctypes,
//!   processing instructions and other bogus comments are dropped. A CDATA
//!   section `<![CDATA[...]]>` is dropped up to its `]]>`; when the input has
//!   no `]]>` it is a bogus comment that ends at the first `>`, as HTML5
//!   parses it outside foreign content.
//! * Table cells (`<td>`, `<th>`) each start a line of their own rather than
//!   being joined into one line per row: simple, and every cell's text stays
//!   whole.
//! * Character references are decoded in text, `<title>` and `<textarea>`
//!   (the full HTML5 table, including the legacy names allowed without a
//!   `;`), but not in raw text (`<xmp>`, `<plaintext>`). Unknown names stay as
//!   typed; invalid code points become U+FFFD.
//!
//! Elements with the `hidden` attribute or an inline `style` with
//! `display: none` are dropped with their content (see [`hidden`] for how
//! far they reach without a tree). Stylesheets are not read: an element
//! hidden by a class is kept.
//!
//! Outside preformatted content, source CR and LF become spaces; tabs and
//! form feeds are left alone since the line normalization that follows
//! collapses every whitespace run within a line. Whitespace at the start of
//! a line is skipped there (it is only indentation of the source), but the
//! output may still contain whitespace-only lines: normalization drops them.
//! The title's whitespace runs collapse by Unicode White_Space, so a
//! `&nbsp;` in it becomes a plain space too.
//!
//! # Why a hand-written state machine
//!
//! Only text and line boundaries are needed, not a document tree. A full
//! HTML5 tree builder (html5ever) is 4-5x slower than tag skipping, and the
//! DOM parser `tl` measured 0.32-0.38 GB/s against 1.4-1.6 GB/s for a
//! tag-skipping state machine on tag-dense HTML. So this is one pass over
//! the bytes: `memchr` (or, for the short runs that dominate tag-dense HTML,
//! a plain loop or a byte-class table) finds the next `<`, the end of a
//! quoted attribute value, comment or raw text element, or the next byte of
//! text that needs care (`&`, CR, LF); text between tags is appended to one
//! output `String`, and nothing is allocated per tag. Slices are only cut at
//! ASCII bytes, so the output stays valid UTF-8 without re-validation.
//!
//! # Simplifications of the HTML5 tokenizer and tree builder
//!
//! * No tree is built: implied end tags, misnested formatting elements and
//!   foster parenting do not matter for line boundaries, which come from the
//!   tags themselves.
//! * Attributes are tokenized only as far as needed to find where a tag ends
//!   (a quote opens a value only after `=`, as in HTML5); their values are
//!   not decoded or used.
//! * A script ends at the first `</script` followed by whitespace, `/` or
//!   `>`; the script-data escape states (`<!--<script>` inside a script) are
//!   not modelled.
//! * Dropped subtrees (`<svg>`, `<template>`, ...) are tracked with nesting
//!   counters by tag name. In `<svg>`/`<math>`, the start tags that break out
//!   of foreign content in HTML5 (`<p>`, `<div>`, `<b>`, ...) end the dropped
//!   subtree, so an unclosed `<svg>` does not swallow the page; integration
//!   points such as `<foreignObject>` are not modelled. A dropped HTML
//!   element such as `<video>` is not closed implicitly by an ancestor's end
//!   tag.
//! * Inside `<svg>`/`<math>`, `<script>`, `<style>` and `<title>` are
//!   ordinary elements (as in HTML5 foreign content), so a self-closing
//!   `<script/>` there cannot swallow the rest of the page.
//! * The newline right after `<pre>` is not removed, NUL and other control
//!   characters pass through, and CR LF inside preformatted content becomes
//!   one `\n` (a lone CR becomes `\n`).

mod hidden;

use htmlize::{BARE_ENTITY_MAX_LENGTH, ENTITIES, ENTITY_MAX_LENGTH, ENTITY_MIN_LENGTH};
use memchr::{memchr, memchr2, memchr3, memmem};

use crate::bytes::scan::byteclass;
use crate::bytes::scan::swar;

/// What HTML extraction produces.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HtmlText {
    /// Rendered text: one '\n' between rendered lines (see rules). Whitespace
    /// inside a line need not be collapsed (a later normalization step
    /// collapses every run of Unicode White_Space to one space, trims lines
    /// and drops empty lines), but source newlines outside `<pre>` MUST NOT
    /// survive as '\n'.
    pub text: String,
    /// The `<title>` element's text, entities decoded, whitespace collapsed to
    /// single spaces and trimmed; None when absent or empty.
    pub title: Option<String>,
    /// The `href` of the first `<link rel="canonical">`, character
    /// references decoded and whitespace trimmed, as written (not resolved
    /// against the page's URL); None when absent or empty.
    pub canonical: Option<String>,
}

/// What a page says of itself besides its text: its title and canonical
/// address (see [`HtmlText`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Head {
    pub title: Option<String>,
    pub canonical: Option<String>,
}

/// Converts an HTML document to its rendered lines, its title and its
/// canonical address.
///
/// Does not panic on any input, and runs in time linear in its length.
pub fn html_to_text(html: &str) -> HtmlText {
    let mut text = String::new();
    let Head { title, canonical } = html_to_text_into(html, &mut text);
    HtmlText { text, title, canonical }
}

/// [`html_to_text`], but the rendered text replaces the contents of `out`
/// (whose memory is reused) and only the title and canonical address are
/// returned.
pub(crate) fn html_to_text_into(html: &str, out: &mut String) -> Head {
    let mut buffer = std::mem::take(out);
    buffer.clear();
    let mut conv = Converter::new(html, buffer);
    conv.run();
    let (text, head) = conv.finish();
    *out = text;
    head
}

/// How an element affects the text, decided by its tag name alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// No effect on lines (`<span>`, `<a>`, unknown elements, ...).
    Inline,
    /// Starts a new line where it opens and where it closes.
    Block,
    /// `<br>`: a line break.
    LineBreak,
    /// `<pre>`, `<listing>`: a block whose source newlines are kept.
    Pre,
    /// Raw text whose content is dropped (`<script>`, `<style>`, ...): it
    /// ends only at the matching end tag.
    RawSkip,
    /// `<xmp>`: raw text that is shown as typed, preformatted.
    RawKeep,
    /// `<textarea>`: escapable raw text, shown preformatted.
    Textarea,
    /// `<title>`: escapable raw text that goes to the title.
    Title,
    /// `<link>`: a void element whose `rel="canonical"` names the page's
    /// canonical address.
    Link,
    /// `<plaintext>`: everything after it is raw text, shown preformatted.
    Plaintext,
    /// An HTML element whose subtree is not rendered (`<template>`, ...).
    Hidden,
    /// `<svg>`, `<math>`: a dropped subtree of foreign content.
    Foreign,
}

/// Every tag name that is not [`Kind::Inline`], lowercase, with its kind.
const NAMES: &[(&[u8], Kind)] = &[
    (b"address", Kind::Block),
    (b"article", Kind::Block),
    (b"aside", Kind::Block),
    (b"blockquote", Kind::Block),
    (b"body", Kind::Block),
    (b"caption", Kind::Block),
    (b"center", Kind::Block),
    (b"colgroup", Kind::Block),
    (b"dd", Kind::Block),
    (b"details", Kind::Block),
    (b"dialog", Kind::Block),
    (b"dir", Kind::Block),
    (b"div", Kind::Block),
    (b"dl", Kind::Block),
    (b"dt", Kind::Block),
    (b"fieldset", Kind::Block),
    (b"figcaption", Kind::Block),
    (b"figure", Kind::Block),
    (b"footer", Kind::Block),
    (b"form", Kind::Block),
    (b"frameset", Kind::Block),
    (b"h1", Kind::Block),
    (b"h2", Kind::Block),
    (b"h3", Kind::Block),
    (b"h4", Kind::Block),
    (b"h5", Kind::Block),
    (b"h6", Kind::Block),
    (b"head", Kind::Block),
    (b"header", Kind::Block),
    (b"hgroup", Kind::Block),
    (b"hr", Kind::Block),
    (b"html", Kind::Block),
    (b"legend", Kind::Block),
    (b"li", Kind::Block),
    (b"main", Kind::Block),
    (b"menu", Kind::Block),
    (b"nav", Kind::Block),
    (b"ol", Kind::Block),
    (b"optgroup", Kind::Block),
    (b"option", Kind::Block),
    (b"p", Kind::Block),
    (b"search", Kind::Block),
    (b"section", Kind::Block),
    (b"summary", Kind::Block),
    (b"table", Kind::Block),
    (b"tbody", Kind::Block),
    (b"td", Kind::Block),
    (b"tfoot", Kind::Block),
    (b"th", Kind::Block),
    (b"thead", Kind::Block),
    (b"tr", Kind::Block),
    (b"ul", Kind::Block),
    (b"br", Kind::LineBreak),
    (b"pre", Kind::Pre),
    (b"listing", Kind::Pre),
    (b"script", Kind::RawSkip),
    (b"style", Kind::RawSkip),
    (b"noscript", Kind::RawSkip),
    (b"iframe", Kind::RawSkip),
    (b"noembed", Kind::RawSkip),
    (b"noframes", Kind::RawSkip),
    (b"xmp", Kind::RawKeep),
    (b"textarea", Kind::Textarea),
    (b"title", Kind::Title),
    (b"link", Kind::Link),
    (b"plaintext", Kind::Plaintext),
    (b"template", Kind::Hidden),
    (b"video", Kind::Hidden),
    (b"audio", Kind::Hidden),
    (b"canvas", Kind::Hidden),
    (b"datalist", Kind::Hidden),
    (b"svg", Kind::Foreign),
    (b"math", Kind::Foreign),
];

/// Classifies a lowercased tag name: the definition, which [`kind_at`]
/// follows faster.
#[cold]
fn classify(name: &[u8]) -> Kind {
    NAMES.iter().find(|&&(known, _)| known == name).map_or(Kind::Inline, |&(_, kind)| kind)
}

/// Classifies the tag name at `start..end` of `bytes`, in any case.
///
/// A name of at most 8 bytes with 8 bytes of input from its start (nearly
/// every one) is looked up as a word: lowercased eight bytes at a time,
/// then one multiply, one load and one compare, and no branch. A `match`
/// on the name compiled to two jump tables (by length, then by first
/// letter) and a chain of byte tests, whose indirect jumps mispredicted at
/// about every other tag (`cachegrind --branch-sim=yes`, 40 MB of the
/// generated crawl at the paper's page size).
#[inline]
fn kind_at(bytes: &[u8], start: usize, end: usize) -> Kind {
    let len = end.saturating_sub(start);
    match bytes.get(start..).and_then(<[u8]>::first_chunk::<8>) {
        Some(word) if len <= 8 => {
            let key = ascii_lowercase(u64::from_le_bytes(*word) & swar::keep_bytes(len));
            let slot = name_slot(key);
            let hit = (KIND_TABLE.keys[slot] == key) & (usize::from(KIND_TABLE.lens[slot]) == len);
            std::hint::select_unpredictable(hit, KIND_TABLE.kinds[slot], Kind::Inline)
        }
        _ => {
            let mut buf = [0; MAX_NAME];
            classify(lowercase_name(bytes.get(start..end).unwrap_or(&[]), &mut buf))
        }
    }
}

/// `A-Z` in the eight bytes of `word` made `a-z`, other bytes left alone.
#[inline]
fn ascii_lowercase(word: u64) -> u64 {
    let upper = swar::in_range(word & !swar::HIGH, b'A', b'Z') & !word;
    word | (upper >> 2)
}

/// Slots of [`KIND_TABLE`]: a power of two.
const NAME_SLOTS: usize = 256;

/// The slot of a name's key: a multiplicative hash. Any multiplier that
/// puts the names of [`NAMES`] of at most 8 bytes in distinct slots will
/// do (this one was found by trying random odd ones); [`kind_table`]
/// refuses to compile with one that does not.
#[inline]
const fn name_slot(key: u64) -> usize {
    (key.wrapping_mul(0x3d19_e814_766a_ac2b) >> (64 - NAME_SLOTS.trailing_zeros())) as usize
}

/// The names of [`NAMES`] of at most 8 bytes by [`name_slot`]: each one's
/// key, length and kind; an empty slot has a key no name has (0xff is
/// never a byte of UTF-8).
struct KindTable {
    keys: [u64; NAME_SLOTS],
    lens: [u8; NAME_SLOTS],
    kinds: [Kind; NAME_SLOTS],
}

static KIND_TABLE: KindTable = kind_table();

const fn kind_table() -> KindTable {
    let mut table =
        KindTable { keys: [u64::MAX; NAME_SLOTS], lens: [0; NAME_SLOTS], kinds: [Kind::Inline; NAME_SLOTS] };
    let mut i = 0;
    while i < NAMES.len() {
        let (name, kind) = NAMES[i];
        if name.len() <= 8 {
            let mut key = 0u64;
            let mut k = 0;
            while k < name.len() {
                key |= (name[k] as u64) << (8 * k);
                k += 1;
            }
            let slot = name_slot(key);
            assert!(table.keys[slot] == u64::MAX, "two tag names share a slot: pick another multiplier");
            table.keys[slot] = key;
            table.lens[slot] = name.len() as u8;
            table.kinds[slot] = kind;
        }
        i += 1;
    }
    table
}

/// Whether a start tag ends foreign content (`<svg>`, `<math>`), per the
/// HTML5 rules for parsing tokens in foreign content. (`<font>` only does
/// with certain attributes; it is left out.)
fn breaks_out_of_foreign(name: &[u8]) -> bool {
    matches!(
        name,
        b"b" | b"big"
            | b"blockquote"
            | b"body"
            | b"br"
            | b"center"
            | b"code"
            | b"dd"
            | b"div"
            | b"dl"
            | b"dt"
            | b"em"
            | b"embed"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"head"
            | b"hr"
            | b"i"
            | b"img"
            | b"li"
            | b"listing"
            | b"menu"
            | b"meta"
            | b"nobr"
            | b"ol"
            | b"p"
            | b"pre"
            | b"ruby"
            | b"s"
            | b"small"
            | b"span"
            | b"strong"
            | b"strike"
            | b"sub"
            | b"sup"
            | b"table"
            | b"tt"
            | b"u"
            | b"ul"
            | b"var"
    )
}

/// The longest tag name [`classify`] knows ("blockquote", "figcaption").
const MAX_NAME: usize = 10;

/// A tag name in lowercase: the name as typed when it is already (the
/// common case: no copy), else lowercased into `buf`. Names longer than any
/// known one that need lowercasing come back empty (unknown).
fn lowercase_name<'a>(raw: &'a [u8], buf: &'a mut [u8; MAX_NAME]) -> &'a [u8] {
    if !raw.iter().any(u8::is_ascii_uppercase) {
        return raw;
    }
    if raw.len() > MAX_NAME {
        return &[];
    }
    for (dst, src) in buf.iter_mut().zip(raw) {
        *dst = src.to_ascii_lowercase();
    }
    buf.get(..raw.len()).unwrap_or(&[])
}

/// Where a tag ends, found by [`scan_tag`].
struct Tag {
    /// End (exclusive) of the tag name, which starts right after `<` or `</`.
    name_end: usize,
    /// Index just past the closing `>`.
    end: usize,
    /// Whether the tag ends with `/>`.
    self_closing: bool,
    /// Whether an attribute hides the element (see [`hidden::hides`]).
    hides: bool,
}

/// Byte classes for the tag scanner, looked up in [`CLASSES`] so that each
/// loop over a tag name or attribute tests one table entry per byte.
const SPACE: u8 = 1;
const SLASH: u8 = 2;
const GT: u8 = 4;
const EQUALS: u8 = 8;
const AMP: u8 = 16;
const LINE_END: u8 = 32;
const CR: u8 = 64;

static CLASSES: [u8; 256] = {
    let mut table = [0; 256];
    // HTML's ASCII whitespace, as the tokenizer sees it (CR included, since
    // the input stream turns CR into LF).
    table[b' ' as usize] = SPACE;
    table[b'\t' as usize] = SPACE;
    table[b'\n' as usize] = SPACE;
    table[b'\r' as usize] = SPACE;
    table[0x0C] = SPACE;
    table[b'/' as usize] = SLASH;
    table[b'>' as usize] = GT;
    table[b'=' as usize] = EQUALS;
    table[b'&' as usize] = AMP;
    table[b'\n' as usize] |= LINE_END;
    table[b'\r' as usize] |= LINE_END | CR;
    table
};

fn is_space(b: u8) -> bool {
    CLASSES[usize::from(b)] & SPACE != 0
}

/// The first index from `i` whose byte is in one of the classes of `mask`
/// (whitespace, `/`, `=`, `>`), or the end of input.
///
/// Tag and attribute names are short, and a byte loop mispredicts its exit
/// at many of them; 16 bytes are tested at once instead, for the bytes that
/// may end a name (those up to the space, `/`, `=`, `>`), and the table
/// confirms each candidate. On 40 MB of the generated crawl at the paper's
/// page size that took the fingerprint stage's mispredicted branches from
/// 41.1 to 39.1 million (`cachegrind --branch-sim=yes`, one thread) for
/// the same instructions.
fn skip_until(bytes: &[u8], mut i: usize, mask: u8) -> usize {
    const CANDIDATES: &[(u8, u8)] = &[(0, b' '), (b'/', b'/'), (b'=', b'>')];
    let ends = |b: u8| CLASSES[usize::from(b)] & mask != 0;
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<16>) {
        let mut found = byteclass::in_ranges16(chunk, CANDIDATES);
        while found != 0 {
            let at = i + found.trailing_zeros() as usize;
            if bytes.get(at).is_some_and(|&b| ends(b)) {
                return at;
            }
            found &= found - 1;
        }
        i += 16;
    }
    let rest = bytes.get(i..).unwrap_or(&[]);
    match rest.iter().position(|&b| ends(b)) {
        Some(off) => i + off,
        None => bytes.len(),
    }
}

/// Scans a tag whose name starts at `name_start`, returning `None` when the
/// input ends before the tag does (such a tag is dropped, as in HTML5).
fn scan_tag(bytes: &[u8], name_start: usize) -> Option<Tag> {
    let name_end = skip_until(bytes, name_start, SPACE | SLASH | GT);
    let mut i = name_end;
    let mut self_closing = false;
    let mut hides = false;
    loop {
        match *bytes.get(i)? {
            b'>' => {
                return Some(Tag { name_end, end: i + 1, self_closing, hides });
            }
            b'/' => {
                i += 1;
                self_closing = bytes.get(i) == Some(&b'>');
            }
            b if is_space(b) => i += 1,
            _ => {
                let (end, hiding) = scan_attribute(bytes, i)?;
                hides |= hiding;
                i = end;
            }
        }
    }
}

/// Scans one attribute starting at `start` (not whitespace, `/` or `>`) and
/// returns the index after it and whether it hides its element, or `None`
/// at the end of input.
fn scan_attribute(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let (name, value, end) = attribute(bytes, start)?;
    // Only `hidden` and `style` can hide: other names cost a length test
    // and, for `class` and `title`, a look at the first letter.
    let may_hide = matches!(name.len(), 5 | 6) && matches!(name.first().map(|b| b | 0x20), Some(b'h' | b's'));
    Some((end, may_hide && hidden::hides(name, value)))
}

/// The attribute starting at `start` (not whitespace, `/` or `>`): its
/// name as typed, its value (empty without one), and the index after it;
/// `None` at the end of input.
#[inline(always)]
fn attribute(bytes: &[u8], start: usize) -> Option<(&[u8], &[u8], usize)> {
    // The first character is part of the name even if it is '=' (HTML5's
    // unexpected-equals-sign-before-attribute-name).
    let name_end = skip_until(bytes, start + 1, SPACE | SLASH | GT | EQUALS);
    let name = bytes.get(start..name_end).unwrap_or(&[]);
    let mut i = skip_spaces(bytes, name_end);
    if bytes.get(i) != Some(&b'=') {
        return Some((name, &[], i));
    }
    i = skip_spaces(bytes, i + 1);
    let (value, end) = match *bytes.get(i)? {
        quote @ (b'"' | b'\'') => {
            let value = bytes.get(i + 1..)?;
            let len = find_byte(quote, value)?;
            (value.get(..len).unwrap_or(&[]), i + 1 + len + 1)
        }
        // `<a b=>`: a missing value; the '>' ends the tag.
        b'>' => (&[][..], i),
        _ => {
            let end = skip_until(bytes, i, SPACE | GT);
            (bytes.get(i..end).unwrap_or(&[]), end)
        }
    };
    Some((name, value, end))
}

/// The `href` of a `<link>` tag whose attributes are at `from..to` if its
/// `rel` holds the token `canonical` (in any case): the first `rel` and
/// `href` count, as HTML5 drops an element's repeated attributes.
fn canonical_href(bytes: &[u8], from: usize, to: usize) -> Option<&[u8]> {
    let (mut rel, mut href) = (None, None);
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'/' => i += 1,
            b if is_space(b) => i += 1,
            _ => {
                let (name, value, end) = attribute(bytes, i)?;
                if name.eq_ignore_ascii_case(b"rel") {
                    rel = rel.or(Some(value));
                } else if name.eq_ignore_ascii_case(b"href") {
                    href = href.or(Some(value));
                }
                i = end;
            }
        }
    }
    let canonical = rel?.split(|&b| is_space(b)).any(|token| token.eq_ignore_ascii_case(b"canonical"));
    canonical.then_some(href?)
}

/// `memchr`, but the first 16 bytes tested at once
/// ([`byteclass::find_byte`]): most runs between tags and most attribute
/// values are short, where one vector compare beats the call. (A plain
/// loop over those bytes took 2.5% of the fingerprint stage's
/// instructions on one thread, `callgrind` on 40 MB of the generated crawl
/// at the paper's page size; in two words, the stage ran 0.4% fewer
/// instructions and took 1.8% less CPU time, median of three interleaved
/// rounds on two threads.)
fn find_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    const SHORT: usize = 16;
    let (head, tail) = hay.split_at(hay.len().min(SHORT));
    byteclass::find_byte(needle, head).or_else(|| memchr(needle, tail).map(|i| i + SHORT))
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|&b| is_space(b)) {
        i += 1;
    }
    i
}

/// How whitespace in kept text is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    /// Normal flow: source CR and LF become spaces.
    Flow,
    /// Preformatted: LF is kept, CR LF and lone CR become LF.
    Pre,
}

/// Whether character references are decoded in a piece of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refs {
    Decode,
    Raw,
}

/// A decoded character reference.
enum CharRef {
    /// A named reference's expansion (one or two code points).
    Named(&'static [u8]),
    /// A numeric reference's code point.
    Numeric(char),
}

/// Decodes the character reference at the start of `s` (which starts with
/// `&`), returning it and its length, or `None` when the `&` starts none
/// and stays as typed.
fn char_ref(s: &[u8]) -> Option<(CharRef, usize)> {
    match *s.get(1)? {
        b'#' => numeric_ref(s),
        b if b.is_ascii_alphanumeric() => named_ref(s),
        _ => None,
    }
}

/// Decodes a named reference per HTML5 in text (not attribute) context: the
/// whole name followed by `;` if the table has it, otherwise the legacy name
/// without `;` that prefixes it (`&notit;` is `¬it;`).
fn named_ref(s: &[u8]) -> Option<(CharRef, usize)> {
    // Every name is ASCII alphanumeric; the longest table key (with '&' and
    // ';') bounds how far to look, which keeps the scan linear.
    let limit = s.len().min(ENTITY_MAX_LENGTH);
    let mut end = 1;
    while end < limit && s.get(end).is_some_and(u8::is_ascii_alphanumeric) {
        end += 1;
    }
    if s.get(end) == Some(&b';')
        && let Some(key) = s.get(..=end)
        && let Some(expansion) = common_entity(key).or_else(|| ENTITIES.get(key).copied())
    {
        return Some((CharRef::Named(expansion), end + 1));
    }
    // No legacy name is a prefix of another, so the first hit is the only.
    let longest = end.min(BARE_ENTITY_MAX_LENGTH);
    (ENTITY_MIN_LENGTH..=longest).find_map(|len| {
        let expansion = s.get(..len).and_then(|key| ENTITIES.get(key))?;
        Some((CharRef::Named(expansion), len))
    })
}

/// The most frequent references, answered without hashing into the full
/// table (a test checks they agree with it).
fn common_entity(key: &[u8]) -> Option<&'static [u8]> {
    match key {
        b"&amp;" => Some(b"&"),
        b"&lt;" => Some(b"<"),
        b"&gt;" => Some(b">"),
        b"&quot;" => Some(b"\""),
        b"&nbsp;" => Some("\u{a0}".as_bytes()),
        _ => None,
    }
}

/// Decodes `&#123;` or `&#x7B;` (the `;` is optional, as in HTML5).
fn numeric_ref(s: &[u8]) -> Option<(CharRef, usize)> {
    let (radix, start) = match s.get(2) {
        Some(b'x' | b'X') => (16, 3),
        _ => (10, 2),
    };
    let mut value: u32 = 0;
    let mut end = start;
    while let Some(digit) = s.get(end).and_then(|&b| char::from(b).to_digit(radix)) {
        // Clamp so long digit strings cannot overflow; anything past
        // U+10FFFF decodes to U+FFFD anyway.
        value = value.saturating_mul(radix).saturating_add(digit).min(0x11_0000);
        end += 1;
    }
    if end == start {
        return None;
    }
    if s.get(end) == Some(&b';') {
        end += 1;
    }
    Some((CharRef::Numeric(numeric_char(value)), end))
}

/// The character a numeric reference stands for, per HTML5: NUL, surrogates
/// and values past U+10FFFF are U+FFFD, and C1 controls are read as
/// windows-1252 (a common authoring mistake HTML5 keeps compatible).
fn numeric_char(value: u32) -> char {
    const REPLACEMENT: char = '\u{FFFD}';
    match value {
        0 => REPLACEMENT,
        0x80..=0x9F => windows_1252_c1(value),
        _ => char::from_u32(value).unwrap_or(REPLACEMENT),
    }
}

/// HTML5's numeric character reference remapping of 0x80-0x9F; the five
/// unassigned windows-1252 bytes stay as their C1 control.
fn windows_1252_c1(value: u32) -> char {
    match value {
        0x80 => '\u{20AC}',
        0x82 => '\u{201A}',
        0x83 => '\u{0192}',
        0x84 => '\u{201E}',
        0x85 => '\u{2026}',
        0x86 => '\u{2020}',
        0x87 => '\u{2021}',
        0x88 => '\u{02C6}',
        0x89 => '\u{2030}',
        0x8A => '\u{0160}',
        0x8B => '\u{2039}',
        0x8C => '\u{0152}',
        0x8E => '\u{017D}',
        0x91 => '\u{2018}',
        0x92 => '\u{2019}',
        0x93 => '\u{201C}',
        0x94 => '\u{201D}',
        0x95 => '\u{2022}',
        0x96 => '\u{2013}',
        0x97 => '\u{2014}',
        0x98 => '\u{02DC}',
        0x99 => '\u{2122}',
        0x9A => '\u{0161}',
        0x9B => '\u{203A}',
        0x9C => '\u{0153}',
        0x9E => '\u{017E}',
        0x9F => '\u{0178}',
        _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
    }
}

/// Appends `src[start..end]` to `out`, decoding character references if
/// asked and treating newlines per `space`.
///
/// `start` and `end` must be char boundaries; every position this module
/// passes is at an ASCII byte or the end of input.
fn push_text(out: &mut String, src: &str, start: usize, end: usize, space: Space, refs: Refs) {
    let bytes = src.as_bytes();
    let Some(hay) = bytes.get(..end) else {
        debug_assert!(false, "text end {end} out of range");
        return;
    };
    // `copied` is where the next not-yet-appended source run starts; `at`
    // is where to look for the next byte that needs care.
    let mut copied = start;
    let mut at = start;
    while let Some(found) = hay.get(at..).and_then(|rest| next_special(rest, space, refs)) {
        let i = at + found;
        push_slice(out, src, copied, i);
        match hay.get(i) {
            Some(b'&') => match hay.get(i..).and_then(char_ref) {
                Some((decoded, len)) => {
                    push_ref(out, decoded, space);
                    copied = i + len;
                }
                None => copied = i,
            },
            Some(b'\r') => {
                if space == Space::Flow {
                    out.push(' ');
                } else if hay.get(i + 1) != Some(&b'\n') {
                    out.push('\n');
                }
                copied = i + 1;
            }
            // '\n' outside preformatted text.
            _ => {
                out.push(' ');
                copied = i + 1;
            }
        }
        at = copied.max(i + 1);
    }
    push_slice(out, src, copied, end);
}

/// Finds the next byte [`push_text`] cannot copy as is.
fn next_special(hay: &[u8], space: Space, refs: Refs) -> Option<usize> {
    // Most text runs between tags are short: a table loop beats the call.
    if hay.len() < 32 {
        let mask = match (space, refs) {
            (Space::Flow, Refs::Decode) => AMP | LINE_END,
            (Space::Flow, Refs::Raw) => LINE_END,
            (Space::Pre, Refs::Decode) => AMP | CR,
            (Space::Pre, Refs::Raw) => CR,
        };
        return hay.iter().position(|&b| CLASSES[usize::from(b)] & mask != 0);
    }
    match (space, refs) {
        (Space::Flow, Refs::Decode) => memchr3(b'&', b'\n', b'\r', hay),
        (Space::Flow, Refs::Raw) => memchr2(b'\n', b'\r', hay),
        (Space::Pre, Refs::Decode) => memchr2(b'&', b'\r', hay),
        (Space::Pre, Refs::Raw) => memchr(b'\r', hay),
    }
}

/// Appends `src[start..end]`; both are char boundaries by construction.
fn push_slice(out: &mut String, src: &str, start: usize, end: usize) {
    if start >= end {
        return;
    }
    match src.get(start..end) {
        Some(s) => out.push_str(s),
        None => debug_assert!(false, "{start}..{end} is not a char boundary range"),
    }
}

/// Appends a decoded reference; a decoded LF or CR (`&#10;`, `&NewLine;`)
/// is whitespace like a source one.
fn push_ref(out: &mut String, decoded: CharRef, space: Space) {
    match decoded {
        CharRef::Numeric(c) => push_char(out, c, space),
        CharRef::Named(expansion) => {
            for c in std::str::from_utf8(expansion).unwrap_or("\u{FFFD}").chars() {
                push_char(out, c, space);
            }
        }
    }
}

fn push_char(out: &mut String, c: char, space: Space) {
    match (c, space) {
        ('\n' | '\r', Space::Flow) => out.push(' '),
        ('\r', Space::Pre) => out.push('\n'),
        _ => out.push(c),
    }
}

/// Collapses runs of whitespace to one space and trims; `None` if empty.
fn collapse_title(raw: &str) -> Option<String> {
    let mut title = String::with_capacity(raw.len());
    for word in raw.split_whitespace() {
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() { None } else { Some(title) }
}

/// `<![CDATA[`, matched case-sensitively as in HTML5.
const CDATA_OPEN: &[u8] = b"<![CDATA[";

/// The single pass over one document.
struct Converter<'h> {
    src: &'h str,
    bytes: &'h [u8],
    out: String,
    title: Option<String>,
    /// Whether a `<title>` has been seen (only the first one counts).
    title_seen: bool,
    /// The first `<link rel="canonical">`'s address.
    canonical: Option<String>,
    /// Open `<pre>`/`<listing>` elements.
    pre_depth: u32,
    /// Open dropped HTML elements (`<template>`, `<video>`, ...).
    hidden_depth: u32,
    /// Open `<svg>`/`<math>` elements.
    foreign_depth: u32,
    /// The element hidden by an attribute that is open, if any.
    region: Option<hidden::Region>,
    /// The input from here on has no `]]>`: remembered so that many
    /// unterminated CDATA sections do not each search to the end (which
    /// would be quadratic).
    no_cdata_end_from: usize,
}

impl<'h> Converter<'h> {
    /// A converter that writes to `out` (empty, but it may hold memory).
    fn new(src: &'h str, mut out: String) -> Converter<'h> {
        // Text is usually a fraction of the markup; this avoids most
        // regrowth without reserving the whole input.
        out.reserve(src.len() / 4);
        Converter {
            src,
            bytes: src.as_bytes(),
            out,
            title: None,
            title_seen: false,
            canonical: None,
            pre_depth: 0,
            hidden_depth: 0,
            foreign_depth: 0,
            region: None,
            no_cdata_end_from: usize::MAX,
        }
    }

    /// The rendered text and the title.
    fn finish(mut self) -> (String, Head) {
        let kept = self.out.trim_end_matches('\n').len();
        self.out.truncate(kept);
        (self.out, Head { title: self.title, canonical: self.canonical })
    }

    /// Alternates between text runs and markup until the input ends.
    fn run(&mut self) {
        let len = self.bytes.len();
        let mut pos = 0;
        while pos < len {
            match self.bytes.get(pos..).and_then(|rest| find_byte(b'<', rest)) {
                None => {
                    self.text(pos, len);
                    pos = len;
                }
                Some(off) => {
                    let lt = pos + off;
                    self.text(pos, lt);
                    pos = self.markup(lt);
                }
            }
        }
    }

    /// Whether text is currently dropped.
    fn hidden(&self) -> bool {
        self.hidden_depth > 0 || self.foreign_depth > 0 || self.region.is_some()
    }

    fn space(&self) -> Space {
        if self.pre_depth > 0 { Space::Pre } else { Space::Flow }
    }

    /// Appends source text at `start..end` unless it is in a dropped subtree.
    fn text(&mut self, start: usize, end: usize) {
        if start >= end || self.hidden() {
            return;
        }
        let space = self.space();
        let mut start = start;
        if space == Space::Flow && self.at_line_start() {
            // Indentation between block tags would only make blank lines.
            while start < end && self.bytes.get(start).is_some_and(|&b| is_space(b)) {
                start += 1;
            }
        }
        push_text(&mut self.out, self.src, start, end, space, Refs::Decode);
    }

    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n')
    }

    /// Ends the current line, unless there is none to end, without the
    /// spaces it ends with.
    ///
    /// Normalization would remove them, but a line that ends with a space
    /// (a source newline before a block's end tag, most often) is one that
    /// [`super::normalize()`] cannot copy in bulk, and the lines after it then
    /// went through its slower path too: one rendered line in 24 ended so
    /// on the generated crawl at the paper's page size. Only ASCII spaces
    /// are removed, so the normalized text is the same. (With this and
    /// normalization's pass over typographic characters, normalizing took
    /// 45 million instructions on 40 MB of that crawl, against 110.)
    fn newline(&mut self) {
        // Bytes, not chars: a space is ASCII, so a cut after one is at a
        // char boundary (a `char` pattern decoded the line's end backwards).
        let bytes = self.out.as_bytes();
        let mut kept = bytes.len();
        while kept > 0 && bytes[kept - 1] == b' ' {
            kept -= 1;
        }
        self.out.truncate(kept);
        if !self.at_line_start() {
            self.out.push('\n');
        }
    }

    /// Handles what starts with the `<` at `lt`; returns where to go on.
    fn markup(&mut self, lt: usize) -> usize {
        match self.bytes.get(lt + 1) {
            Some(b) if b.is_ascii_alphabetic() => self.start_tag(lt),
            Some(b'/') => self.end_tag(lt),
            Some(b'!') => self.declaration(lt),
            Some(b'?') => self.bogus_comment(lt + 2),
            // A '<' that starts no markup is text.
            _ => {
                self.text(lt, lt + 1);
                lt + 1
            }
        }
    }

    fn start_tag(&mut self, lt: usize) -> usize {
        let Some(tag) = scan_tag(self.bytes, lt + 1) else {
            return self.bytes.len();
        };
        // The name as typed: only the rare paths below need it lowercased,
        // and the end tag search compares it in any case.
        let raw = self.bytes.get(lt + 1..tag.name_end).unwrap_or(&[]);
        let kind = kind_at(self.bytes, lt + 1, tag.name_end);
        if self.foreign_depth > 0 {
            let mut buf = [0; MAX_NAME];
            if !breaks_out_of_foreign(lowercase_name(raw, &mut buf)) {
                // Inside foreign content every tag is an ordinary one.
                if kind == Kind::Foreign && !tag.self_closing {
                    self.foreign_depth = self.foreign_depth.saturating_add(1);
                }
                return tag.end;
            }
            self.foreign_depth = 0;
        }
        self.track_hidden(raw, kind, tag.hides);
        // Nearly every tag is inline or a block: tested first, so that
        // they take two predictable branches rather than the jump table
        // of a `match` over every kind.
        if kind == Kind::Inline {
            return tag.end;
        }
        if matches!(kind, Kind::Block | Kind::LineBreak) {
            self.newline();
            return tag.end;
        }
        self.special_start_tag(&tag, kind, raw)
    }

    /// The rest of [`Self::start_tag`] for the kinds other than inline,
    /// block and line break.
    #[inline(never)]
    fn special_start_tag(&mut self, tag: &Tag, kind: Kind, raw: &[u8]) -> usize {
        match kind {
            Kind::Inline | Kind::Block | Kind::LineBreak => {}
            Kind::Pre => {
                self.newline();
                self.pre_depth = self.pre_depth.saturating_add(1);
            }
            Kind::Hidden => self.hidden_depth = self.hidden_depth.saturating_add(1),
            // `<svg/>` is a complete element in HTML5; other HTML elements
            // ignore the self-closing flag.
            Kind::Foreign if tag.self_closing => {}
            Kind::Foreign => self.foreign_depth = 1,
            Kind::RawSkip => return self.end_tag_position(tag.end, raw),
            Kind::RawKeep => return self.raw_text(tag.end, raw, Refs::Raw),
            Kind::Textarea => return self.raw_text(tag.end, raw, Refs::Decode),
            Kind::Title => return self.title(tag.end),
            Kind::Link => self.link(tag),
            Kind::Plaintext => {
                let len = self.bytes.len();
                if !self.hidden() {
                    self.newline();
                    push_text(&mut self.out, self.src, tag.end, len, Space::Pre, Refs::Raw);
                }
                return len;
            }
        }
        tag.end
    }

    /// Follows a start tag into, inside or out of an element hidden by an
    /// attribute.
    #[inline]
    fn track_hidden(&mut self, raw: &[u8], kind: Kind, hides: bool) {
        if !hides && self.region.is_none() {
            return;
        }
        let mut buf = [0; MAX_NAME];
        let name = lowercase_name(raw, &mut buf);
        if let Some(region) = &mut self.region
            && !region.start(name, kind == Kind::Block)
        {
            self.region = None;
        }
        if hides && !self.hidden() && !hidden::is_void(name) {
            self.region = Some(hidden::Region::new(name));
        }
    }

    /// Appends the content of a preformatted raw text element (`<xmp>`,
    /// `<textarea>`) starting at `start`, and returns where its end tag is.
    fn raw_text(&mut self, start: usize, name: &[u8], refs: Refs) -> usize {
        let end = self.end_tag_position(start, name);
        if !self.hidden() {
            self.newline();
            push_text(&mut self.out, self.src, start, end, Space::Pre, refs);
            self.newline();
        }
        end
    }

    /// Takes the `href` of the document's first `<link rel="canonical">`
    /// outside a dropped subtree, character references decoded and
    /// whitespace trimmed, as the canonical address.
    fn link(&mut self, tag: &Tag) {
        if self.canonical.is_some() || self.hidden() {
            return;
        }
        let Some(href) = canonical_href(self.bytes, tag.name_end, tag.end - 1) else { return };
        let start = href.as_ptr() as usize - self.bytes.as_ptr() as usize;
        let mut raw = String::new();
        push_text(&mut raw, self.src, start, start + href.len(), Space::Pre, Refs::Decode);
        let href = raw.trim_matches(|c: char| c.is_ascii_whitespace());
        self.canonical = Some(href.to_string()).filter(|h| !h.is_empty());
    }

    /// Reads a `<title>`'s content starting at `start` into the title if it
    /// is the document's first, and returns where its end tag is.
    fn title(&mut self, start: usize) -> usize {
        let end = self.end_tag_position(start, b"title");
        if !self.title_seen && !self.hidden() {
            self.title_seen = true;
            let mut raw = String::new();
            push_text(&mut raw, self.src, start, end, Space::Flow, Refs::Decode);
            self.title = collapse_title(&raw);
        }
        end
    }

    /// Finds the end tag `</name` (any case, followed by whitespace, `/` or
    /// `>`) that ends a raw text element, from `from`; the end of input if
    /// there is none. Returns the position of its `<`, so that the main loop
    /// handles the end tag itself.
    fn end_tag_position(&self, from: usize, name: &[u8]) -> usize {
        let len = self.bytes.len();
        let mut at = from;
        while let Some(off) = self.bytes.get(at..).and_then(|rest| memchr(b'<', rest)) {
            let lt = at + off;
            if self.is_end_tag_of(lt, name) {
                return lt;
            }
            at = lt + 1;
        }
        len
    }

    fn is_end_tag_of(&self, lt: usize, name: &[u8]) -> bool {
        let name_start = lt + 2;
        let name_end = name_start + name.len();
        self.bytes.get(lt + 1) == Some(&b'/')
            && self.bytes.get(name_start..name_end).is_some_and(|n| n.eq_ignore_ascii_case(name))
            && self.bytes.get(name_end).is_some_and(|&b| is_space(b) || b == b'/' || b == b'>')
    }

    fn end_tag(&mut self, lt: usize) -> usize {
        let len = self.bytes.len();
        match self.bytes.get(lt + 2) {
            // "</" at the end of input is text.
            None => {
                self.text(lt, len);
                len
            }
            // "</>" is ignored.
            Some(b'>') => lt + 3,
            Some(b) if b.is_ascii_alphabetic() => match scan_tag(self.bytes, lt + 2) {
                Some(tag) => {
                    let raw = self.bytes.get(lt + 2..tag.name_end).unwrap_or(&[]);
                    self.close(kind_at(self.bytes, lt + 2, tag.name_end), raw);
                    tag.end
                }
                None => len,
            },
            Some(_) => self.bogus_comment(lt + 2),
        }
    }

    /// Applies an end tag: its kind and its name as typed.
    fn close(&mut self, kind: Kind, raw: &[u8]) {
        let mut buf = [0; MAX_NAME];
        if self.foreign_depth > 0 {
            let name = lowercase_name(raw, &mut buf);
            match kind {
                Kind::Foreign => self.foreign_depth -= 1,
                // HTML5 treats `</br>` and `</p>` in foreign content like
                // the breakout start tags.
                _ if name == b"br" || name == b"p" => {
                    self.foreign_depth = 0;
                    self.newline();
                }
                _ => {}
            }
            return;
        }
        if let Some(region) = &mut self.region
            && !region.end(lowercase_name(raw, &mut buf))
        {
            self.region = None;
        }
        // As in `start_tag`: the common kinds first.
        if kind == Kind::Inline {
            return;
        }
        if kind == Kind::Block {
            self.newline();
            return;
        }
        self.special_close(kind);
    }

    /// The rest of [`Self::close`] for the kinds other than inline and
    /// block.
    #[inline(never)]
    fn special_close(&mut self, kind: Kind) {
        match kind {
            Kind::Block
            | Kind::LineBreak
            | Kind::RawKeep
            | Kind::Textarea
            | Kind::Title
            | Kind::Plaintext => self.newline(),
            Kind::Pre => {
                self.newline();
                self.pre_depth = self.pre_depth.saturating_sub(1);
            }
            Kind::Hidden => self.hidden_depth = self.hidden_depth.saturating_sub(1),
            Kind::Inline | Kind::RawSkip | Kind::Foreign | Kind::Link => {}
        }
    }

    /// Handles `<!`: a comment, a CDATA section or a bogus comment (which
    /// includes `<!DOCTYPE ...>`).
    fn declaration(&mut self, lt: usize) -> usize {
        let rest = self.bytes.get(lt..).unwrap_or(&[]);
        if rest.starts_with(b"<!--") {
            self.comment(lt + 4)
        } else if rest.starts_with(CDATA_OPEN) {
            self.cdata(lt)
        } else {
            self.bogus_comment(lt + 2)
        }
    }

    /// Skips a comment whose body starts at `start`; it ends at `-->` or
    /// `--!>`, or right away for `<!-->` and `<!--->`, or at end of input.
    fn comment(&self, start: usize) -> usize {
        let len = self.bytes.len();
        let body = self.bytes.get(start..).unwrap_or(&[]);
        if body.starts_with(b">") {
            return start + 1;
        }
        if body.starts_with(b"->") {
            return start + 2;
        }
        let mut at = start;
        while let Some(off) = self.bytes.get(at..).and_then(|rest| memchr(b'>', rest)) {
            let gt = at + off;
            let before = self.bytes.get(start..gt).unwrap_or(&[]);
            if before.ends_with(b"--") || before.ends_with(b"--!") {
                return gt + 1;
            }
            at = gt + 1;
        }
        len
    }

    /// Skips a CDATA section starting at `lt` up to its `]]>`, or, when the
    /// input has none, as a bogus comment.
    fn cdata(&mut self, lt: usize) -> usize {
        let start = lt + CDATA_OPEN.len();
        if start < self.no_cdata_end_from {
            let rest = self.bytes.get(start..).unwrap_or(&[]);
            match memmem::find(rest, b"]]>") {
                Some(off) => return start + off + 3,
                None => self.no_cdata_end_from = start,
            }
        }
        self.bogus_comment(lt + 2)
    }

    /// Skips a bogus comment starting at `start`: it ends at the first `>`.
    fn bogus_comment(&self, start: usize) -> usize {
        match self.bytes.get(start..).and_then(|rest| memchr(b'>', rest)) {
            Some(off) => start + off + 1,
            None => self.bytes.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_agrees_with_a_plain_search() {
        let hay: Vec<u8> = (0..80u32).map(|i| (i * 37 % 251) as u8).collect();
        for len in 0..hay.len() {
            for start in [0, 1, 7] {
                let hay = &hay[start.min(len)..len];
                for needle in [0u8, 37, 74, 111, 148, 185, 222, 255, 0x80, 0x7f, 1] {
                    let want = hay.iter().position(|&b| b == needle);
                    assert_eq!(find_byte(needle, hay), want, "len {len} start {start} needle {needle}");
                }
            }
        }
        // A match after a byte one above the needle, where a borrow runs.
        assert_eq!(find_byte(b'"', b"#\"abcdefgh"), Some(1));
        assert_eq!(find_byte(0, &[1, 0, 1, 1, 1, 1, 1, 1, 1]), Some(1));
    }
    use proptest::prelude::*;

    /// The rendered lines as the later normalization sees them: split at
    /// '\n', whitespace runs collapsed, lines trimmed, empty lines dropped.
    fn lines(html: &str) -> Vec<String> {
        normalize(&html_to_text(html).text)
    }

    fn normalize(text: &str) -> Vec<String> {
        text.split('\n')
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|line| !line.is_empty())
            .collect()
    }

    fn title(html: &str) -> Option<String> {
        html_to_text(html).title
    }

    fn canonical(html: &str) -> Option<String> {
        html_to_text(html).canonical
    }

    #[test]
    fn the_first_canonical_link_names_the_page() {
        let page = r#"<html><head><link rel="stylesheet" href="/s.css"><LINK REL="Canonical" HREF=" https://a.example/x?a=1&amp;b=2 "><link rel=canonical href=/second></head><body><p>text</p></body>"#;
        assert_eq!(canonical(page).as_deref(), Some("https://a.example/x?a=1&b=2"));
        assert_eq!(html_to_text(page).text, "text", "a link renders nothing");
        // rel is a list of tokens; the first rel and href count.
        assert_eq!(canonical("<link href='/c' rel='alternate canonical'>").as_deref(), Some("/c"));
        assert_eq!(canonical("<link rel=canonicalx href=/c>"), None);
        assert_eq!(canonical("<link rel=alternate rel=canonical href=/c>"), None);
        assert_eq!(canonical("<link rel=canonical href=/c href=/d/>").as_deref(), Some("/c"));
        // No href, an empty one, or one in a dropped subtree name nothing;
        // a later link still can.
        assert_eq!(canonical("<link rel=canonical>"), None);
        assert_eq!(canonical("<link rel=canonical href='  '>"), None);
        assert_eq!(
            canonical("<template><link rel=canonical href=/t></template><link rel=canonical href=/u>")
                .as_deref(),
            Some("/u")
        );
        assert_eq!(canonical("<svg><link rel=canonical href=/s></svg>"), None);
        // An unterminated tag is dropped with what it holds.
        assert_eq!(canonical("<link rel=canonical href=/c"), None);
        assert_eq!(canonical("<p>no head</p>"), None);
    }

    #[test]
    fn empty_and_plain_text() {
        assert_eq!(html_to_text(""), HtmlText::default());
        assert_eq!(html_to_text("just text").text, "just text");
        assert_eq!(lines("  \n "), Vec::<String>::new());
    }

    #[test]
    fn hidden_elements_are_dropped() {
        assert_eq!(lines("<p>a</p><div hidden><p>menu</p><div>x</div></div><p>b</p>"), ["a", "b"]);
        assert_eq!(lines("<p>a<span style=\"display: none\">secret</span> b</p>"), ["a b"]);
        assert_eq!(lines("<P HIDDEN>gone<P>kept"), ["kept"]);
        assert_eq!(lines("<ul><li hidden>x<li>y</ul>"), ["y"]);
        // An unclosed hidden element ends with its parent, not the page.
        assert_eq!(lines("<div><span hidden>x</div><p>after</p>"), ["after"]);
        assert_eq!(lines("<section><div hidden><b>x</section>after"), ["after"]);
        // Void elements and other attributes hide nothing.
        assert_eq!(lines("<p>a<img hidden>b</p><p aria-hidden=true>c</p>"), ["ab", "c"]);
        assert_eq!(lines("<details hidden=until-found>found</details>"), ["found"]);
        assert_eq!(lines("<div style='display:block'>shown</div>"), ["shown"]);
        // Nested and raw text inside a hidden element.
        assert_eq!(lines("<div hidden><div><script>x</script><div>y</div></div></div>z"), ["z"]);
        assert_eq!(lines("<div hidden><textarea>t</textarea></div>z"), ["z"]);
    }

    #[test]
    fn paragraphs_are_lines() {
        assert_eq!(html_to_text("<p>One</p><p>Two</p>").text, "One\nTwo");
        assert_eq!(lines("<p>One<p>Two<p>Three"), ["One", "Two", "Three"]);
        assert_eq!(lines("before<div>inside</div>after"), ["before", "inside", "after"]);
        assert_eq!(
            lines("<h1>Title</h1><section><h2>Sub</h2><p>Body</p></section>"),
            ["Title", "Sub", "Body"]
        );
    }

    #[test]
    fn inline_elements_do_not_split_lines() {
        assert_eq!(
            lines("<p>a <b>bold</b>, <i>it</i><a href=\"/x\">link</a> <span>s</span></p>"),
            ["a bold, itlink s"]
        );
        assert_eq!(lines("<p>x<img src=a.png>y<wbr>z</p>"), ["xyz"]);
    }

    #[test]
    fn source_newlines_in_paragraphs_do_not_split_lines() {
        let out = html_to_text("<p>one\ntwo\r\nthree\rfour\tfive\x0Csix</p>");
        assert!(!out.text.contains('\n'), "{:?}", out.text);
        assert!(!out.text.contains('\r'), "{:?}", out.text);
        assert_eq!(normalize(&out.text), ["one two three four five six"]);
        assert_eq!(lines("<div>\n  indented\n  text\n</div>"), ["indented text"]);
    }

    #[test]
    fn br_breaks_lines() {
        assert_eq!(lines("a<br>b<br/>c<BR >d</br>e<br class=\"x\" />f"), ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(lines("<p>a<br><br>b</p>"), ["a", "b"]);
    }

    #[test]
    fn lists() {
        assert_eq!(
            lines("<ul><li>x</li><li>y<ul><li>nested</li></ul></li></ul><ol><li>z<li>w</ol>"),
            ["x", "y", "nested", "z", "w"]
        );
        assert_eq!(lines("<dl><dt>term<dd>definition</dl>"), ["term", "definition"]);
    }

    #[test]
    fn table_cells_are_lines() {
        let html = "<table><caption>Cap</caption><thead><tr><th>h1</th><th>h2</th></tr></thead>\
                    <tbody><tr><td>a</td><td>b <b>c</b></td></tr><tr><td>d</td></tr></tbody></table>after";
        assert_eq!(lines(html), ["Cap", "h1", "h2", "a", "b c", "d", "after"]);
    }

    #[test]
    fn pre_keeps_lines() {
        let out = html_to_text("<p>x</p><pre>line 1\n  line 2\n\nline <b>4</b></pre><p>y\nz</p>");
        assert!(out.text.contains("line 1\n  line 2\n"), "{:?}", out.text);
        assert_eq!(normalize(&out.text), ["x", "line 1", "line 2", "line 4", "y z"]);
        assert_eq!(lines("<PRE>a\nb</PRE>c\nd"), ["a", "b", "c d"]);
        assert_eq!(lines("<listing>a\nb</listing>"), ["a", "b"]);
        // Nested pre stays preformatted until the outer one closes.
        assert_eq!(lines("<pre>a<pre>b\nc</pre>d\ne</pre>f\ng"), ["a", "b", "c", "d", "e", "f g"]);
    }

    #[test]
    fn pre_carriage_returns() {
        assert_eq!(html_to_text("<pre>a\r\nb\rc\nd</pre>").text, "a\nb\nc\nd");
    }

    #[test]
    fn textarea_keeps_lines_and_decodes() {
        assert_eq!(
            lines("<p>x</p><textarea name=t>a &lt;\n<b>c</b></textarea>y"),
            ["x", "a <", "<b>c</b>", "y"]
        );
    }

    #[test]
    fn xmp_and_plaintext_are_raw() {
        assert_eq!(lines("<xmp><b>&amp;</b>\nnext</xmp>after"), ["<b>&amp;</b>", "next", "after"]);
        assert_eq!(lines("a<plaintext><b>x</b>\n</plaintext>y"), ["a", "<b>x</b>", "</plaintext>y"]);
    }

    #[test]
    fn script_and_style_are_dropped() {
        let html = "<p>a</p><script>if (a < b && c > d) { document.write(\"<p>x</p>\"); }</script><p>b</p>";
        assert_eq!(lines(html), ["a", "b"]);
        assert_eq!(lines("<style>p > a { color: red } /* <div> */</style>text"), ["text"]);
        assert_eq!(lines("<SCRIPT type=\"text/javascript\">x</SCRIPT >y"), ["y"]);
        assert_eq!(lines("<script>s = '</scripty>'; t = '</script'</script >z"), ["z"]);
        assert_eq!(lines("<script>var s = '<!-- <script>';</script>after"), ["after"]);
        // An end tag for another raw text element does not end a script.
        assert_eq!(lines("<script>'</style>'</script>z"), ["z"]);
        // Self-closing syntax does not close an HTML script.
        assert_eq!(lines("a<script src=x />hidden</script>b"), ["ab"]);
    }

    #[test]
    fn unterminated_raw_text_runs_to_end() {
        assert_eq!(lines("a<script>b<p>c"), ["a"]);
        assert_eq!(lines("a<style>b</styl"), ["a"]);
        assert_eq!(lines("a<textarea>b\nc</textarea"), ["a", "b", "c</textarea"]);
    }

    #[test]
    fn other_dropped_elements() {
        assert_eq!(lines("a<noscript><p>Enable JS</p></noscript>b"), ["ab"]);
        assert_eq!(lines("a<iframe src=x><p>fallback</p></iframe>b"), ["ab"]);
        assert_eq!(lines("a<template><p>t<template>u</template>v</p></template>b"), ["a", "b"]);
        assert_eq!(lines("a<video src=v><source src=w>No video.</video>b"), ["ab"]);
        assert_eq!(lines("a<audio>No audio.</audio>b<canvas>No canvas.</canvas>c"), ["abc"]);
        assert_eq!(lines("<datalist><option>x</option></datalist>y"), ["y"]);
        // Object fallback content is what current browsers show.
        assert_eq!(lines("<object data=x.swf><param name=a>Get Flash</object>"), ["Get Flash"]);
    }

    #[test]
    fn svg_and_math_are_dropped() {
        let html =
            "a<svg viewBox=\"0 0 1 1\"><title>t</title><text>label</text><svg><text>in</text></svg>x</svg>b";
        assert_eq!(lines(html), ["ab"]);
        assert_eq!(title(html), None);
        assert_eq!(lines("x<math><mi>y</mi></math>z"), ["xz"]);
        assert_eq!(lines("a<svg/>b<SVG />c"), ["abc"]);
        assert_eq!(lines("a<svg><path d=x/><circle/></svg>b"), ["ab"]);
        // A self-closing script in SVG is an ordinary element.
        assert_eq!(lines("<svg><script href=x /></svg><p>kept</p><script>s</script>"), ["kept"]);
        // HTML start tags break out of foreign content, as in HTML5.
        assert_eq!(lines("<svg><g><text>x</text><p>text</p>"), ["text"]);
        assert_eq!(lines("<math><mi>x</mi></p>after"), ["after"]);
    }

    #[test]
    fn comments_are_dropped() {
        assert_eq!(lines("a<!-- <p>hidden</p> -->b"), ["ab"]);
        assert_eq!(lines("a<!-->b"), ["ab"]);
        assert_eq!(lines("a<!--->b"), ["ab"]);
        assert_eq!(lines("a<!---->b"), ["ab"]);
        assert_eq!(lines("a<!-- x --!>b"), ["ab"]);
        assert_eq!(lines("a<!-- x -- y > z -->b"), ["ab"]);
        assert_eq!(lines("a<!--->-->b"), ["a-->b"]);
        assert_eq!(lines("a<!-- unterminated <p>x</p>"), ["a"]);
        assert_eq!(lines("a<!--"), ["a"]);
        assert_eq!(lines("<p>a<!-- multi\nline\n-->b</p>"), ["ab"]);
    }

    #[test]
    fn declarations_and_processing_instructions_are_dropped() {
        assert_eq!(lines("<!DOCTYPE html><?xml version=\"1.0\"?>a<!doctype x>b"), ["ab"]);
        assert_eq!(lines("a<![CDATA[ x > y <p>z</p> ]]>b"), ["ab"]);
        // Without a `]]>`, a CDATA section is a bogus comment ending at '>'.
        assert_eq!(lines("a<![CDATA[ x >b"), ["ab"]);
        assert_eq!(lines("a<!b"), ["a"]);
        assert_eq!(lines("a<?b"), ["a"]);
        assert_eq!(lines("a</ x>b</3>c"), ["abc"]);
    }

    #[test]
    fn named_references() {
        assert_eq!(
            lines("&amp; &lt; &gt; &quot; &apos; &copy; &eacute; &hellip; &euro;"),
            ["& < > \" ' © é … €"]
        );
        assert_eq!(
            lines("&NotNestedGreaterGreater; &nGt; &Afr;"),
            ["\u{2AA2}\u{338} \u{226B}\u{20D2} \u{1D504}"]
        );
        // Case matters: `&AMP;` exists, `&Amp;` does not.
        assert_eq!(lines("&AMP; &Amp;"), ["& &Amp;"]);
    }

    #[test]
    fn legacy_references_without_semicolon() {
        assert_eq!(html_to_text("&amp &lt3 &copy2024 AT&T &nbspx").text, "& <3 ©2024 AT&T \u{a0}x");
        // Text context: a legacy prefix matches even before letters.
        assert_eq!(lines("&notit; &notin; &not"), ["¬it; ∉ ¬"]);
        // Names that need their ';' are not decoded without it.
        assert_eq!(lines("&hellip &rarr x"), ["&hellip &rarr x"]);
    }

    #[test]
    fn unknown_references_stay_as_typed() {
        assert_eq!(
            lines("&foo; &bogus & &; &#; &#x; &#xg; &#a; a&b"),
            ["&foo; &bogus & &; &#; &#x; &#xg; &#a; a&b"]
        );
        let long = format!("&{};", "a".repeat(100));
        assert_eq!(lines(&long), vec![long]);
    }

    #[test]
    fn numeric_references() {
        assert_eq!(lines("&#65;&#x42;&#X43;&#068;&#x000045; &#8364;&#x1F600;"), ["ABCDE €😀"]);
        assert_eq!(lines("&#65 &#x42x"), ["A Bx"]);
        assert_eq!(
            lines("&#0; &#xD800; &#x110000; &#99999999999999999999;"),
            ["\u{FFFD} \u{FFFD} \u{FFFD} \u{FFFD}"]
        );
        // C1 controls are read as windows-1252.
        assert_eq!(lines("&#128;&#x92;&#x9F; &#x81;"), ["€’Ÿ \u{81}"]);
    }

    #[test]
    fn nbsp_is_u00a0() {
        let out = html_to_text("a&nbsp;b&nbsp c&#160;d");
        assert_eq!(out.text, "a\u{a0}b\u{a0} c\u{a0}d");
    }

    #[test]
    fn decoded_newlines_follow_the_whitespace_rule() {
        assert_eq!(lines("<p>a&#10;b&NewLine;c&#13;d</p>"), ["a b c d"]);
        assert_eq!(lines("<pre>a&#10;b&NewLine;c&#x0D;d</pre>"), ["a", "b", "c", "d"]);
    }

    /// `named_ref` takes the first legacy (no `;`) name that matches,
    /// which is the longest match HTML5 asks for only if none is a prefix
    /// of another.
    #[test]
    fn no_legacy_name_prefixes_another() {
        let bare: Vec<&[u8]> = ENTITIES.keys().copied().filter(|k| !k.ends_with(b";")).collect();
        assert!(bare.len() > 100, "{} legacy names", bare.len());
        for a in &bare {
            for b in &bare {
                assert!(a == b || !b.starts_with(a), "{a:?} prefixes {b:?}");
            }
        }
        assert_eq!(ENTITIES.len(), 2231, "the full HTML5 table");
    }

    #[test]
    fn common_entities_agree_with_table() {
        for key in ["&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;"] {
            let key = key.as_bytes();
            assert_eq!(common_entity(key), ENTITIES.get(key).copied());
        }
    }

    /// `kind_at` classifies as the definition does every known name, in
    /// any case, and names that differ from one by a byte, a length or a
    /// NUL, wherever the input ends.
    #[test]
    fn kind_at_agrees_with_classify() {
        let mut names: Vec<Vec<u8>> = Vec::new();
        for &(name, _) in NAMES {
            names.push(name.to_vec());
            names.push(name.to_ascii_uppercase());
            let mut mixed = name.to_vec();
            mixed[0] = mixed[0].to_ascii_uppercase();
            names.push(mixed);
            names.push([name, b"x"].concat());
            names.push([name, b"\0"].concat());
            names.push(name[..name.len() - 1].to_vec());
            let mut changed = name.to_vec();
            let last = changed.len() - 1;
            changed[last] ^= 0x20;
            names.push(changed.clone());
            changed[last] ^= 0x01;
            names.push(changed);
        }
        names.extend(
            [
                &b"a"[..],
                b"span",
                b"h\x11",
                b"\xc3\xa9",
                b"P\x00",
                b"custom-element",
                b"DIVISION",
                b"",
                b"\x7f\x80",
            ]
            .iter()
            .map(|n| n.to_vec()),
        );
        for name in &names {
            let mut buf = [0; MAX_NAME];
            let want = classify(lowercase_name(name, &mut buf));
            // With a long tail after the name, and with the input ending
            // right after it (where fewer than 8 bytes may follow its start).
            for tail in [&b" class=x>text and more text"[..], b">", b""] {
                let bytes = [b"<", name.as_slice(), tail].concat();
                assert_eq!(kind_at(&bytes, 1, 1 + name.len()), want, "{name:?} then {tail:?}");
            }
        }
    }

    /// `skip_until` stops where a byte loop over the classes stops, for
    /// every mask the tag scanner uses, from every start.
    #[test]
    fn skip_until_agrees_with_a_byte_loop() {
        let mut text = b"<div class=\"a b\" id=x data-y='1/2'>\x0b\x01 t\te\rx\x0ct/ =>".to_vec();
        text.extend((0u8..=255).rev());
        text.extend(b"name-that-runs-past-sixteen-bytes=value>");
        for mask in [SPACE | SLASH | GT, SPACE | SLASH | GT | EQUALS, SPACE | GT] {
            for i in 0..=text.len() {
                let want = (i..text.len())
                    .find(|&k| CLASSES[usize::from(text[k])] & mask != 0)
                    .unwrap_or(text.len());
                assert_eq!(skip_until(&text, i, mask), want, "mask {mask:#x} from {i}");
            }
        }
    }

    #[test]
    fn lowercase_name_copies_only_when_needed() {
        let mut buf = [0; MAX_NAME];
        assert_eq!(lowercase_name(b"div", &mut buf), b"div");
        assert_eq!(lowercase_name(b"DiV", &mut buf), b"div");
        assert_eq!(lowercase_name(b"BLOCKQUOTE", &mut buf), b"blockquote");
        assert_eq!(lowercase_name(b"BLOCKQUOTES", &mut buf), b"");
        assert_eq!(lowercase_name(b"custom-element", &mut buf), b"custom-element");
    }

    /// Every key of the entity table decodes as the `htmlize` reference
    /// implementation decodes it, alone and followed by text.
    #[test]
    fn named_references_match_reference_decoder() {
        for key in ENTITIES.keys() {
            let key = std::str::from_utf8(key).expect("entity names are ASCII");
            for input in [key.to_string(), format!("x{key}y"), format!("{key}1;"), format!("{key};")] {
                let expected = htmlize::unescape(input.as_str()).into_owned();
                let expected = expected.replace('\n', " ");
                assert_eq!(html_to_text(&input).text, expected, "input {input:?}");
            }
        }
    }

    /// Numeric references decode as the `htmlize` reference implementation
    /// decodes them, over the interesting ranges and a sample of the rest.
    #[test]
    fn numeric_references_match_reference_decoder() {
        let sampled = (0u32..0x3000).chain((0x3000..0x11_0100).step_by(251)).chain([
            0xD7FF,
            0xD800,
            0xDFFF,
            0xE000,
            0xFFFD,
            0xFFFE,
            0xFFFF,
            0x10_FFFF,
            0x11_0000,
            0xFFFF_FFFF,
        ]);
        for value in sampled {
            for input in [format!("&#{value};"), format!("&#x{value:x}"), format!("&#X{value:X};")] {
                let expected = htmlize::unescape(input.as_str()).into_owned();
                let expected = expected.replace(['\n', '\r'], " ");
                assert_eq!(html_to_text(&input).text, expected, "input {input:?}");
            }
        }
    }

    #[test]
    fn attributes_may_contain_angle_brackets() {
        assert_eq!(lines("<a title=\"a>b\" href='x>y'>link</a>"), ["link"]);
        assert_eq!(lines("<p class = \"a>b\" data-x='<p>' >t</p>"), ["t"]);
        assert_eq!(lines("<img alt=\"1 > 0\n<br>\" src=x>after"), ["after"]);
        // An unquoted value ends at '>'.
        assert_eq!(lines("<a href=x>y>"), ["y>"]);
        // A quote opens a value only after '='.
        assert_eq!(lines("<p a\"b>text</p>"), ["text"]);
        assert_eq!(lines("<p a=b\"c>text\"</p>"), ["text\""]);
        // Attributes in end tags are tokenized too.
        assert_eq!(lines("<b>x</b title=\">\">y"), ["xy"]);
    }

    #[test]
    fn tag_names_are_case_insensitive() {
        assert_eq!(lines("<P>a</P><DIV>b</DiV><ScRiPt>c</sCrIpT>d<Br>e"), ["a", "b", "d", "e"]);
        assert_eq!(title("<TITLE>T</TITLE>"), Some("T".to_string()));
    }

    #[test]
    fn title_extraction() {
        let html = "<html><head><title> My &amp;\n  Page&nbsp;</title></head><body>x</body></html>";
        let out = html_to_text(html);
        assert_eq!(out.title.as_deref(), Some("My & Page"));
        assert_eq!(normalize(&out.text), ["x"]);
        assert_eq!(title("<p>no title</p>"), None);
        assert_eq!(title("<title>  \n </title>"), None);
        assert_eq!(title("<title></title><title>second</title>"), None);
        assert_eq!(title("<title>first</title><title>second</title>"), Some("first".to_string()));
        // Title content is escapable raw text: tags in it are text.
        assert_eq!(title("<title>a <b>c</b></title>"), Some("a <b>c</b>".to_string()));
        assert_eq!(title("<title>unterminated"), Some("unterminated".to_string()));
        assert_eq!(title("<template><title>t</title></template>"), None);
        assert_eq!(lines("<title>T</title>body"), ["body"]);
    }

    #[test]
    fn head_content_is_dropped() {
        let html = "<html><head><meta charset=\"utf-8\"><link rel=stylesheet href=x>\
                    <script>s()</script><style>t{}</style><title>T</title><base href=/>\
                    <noscript><link rel=x></noscript><body><p>B";
        let out = html_to_text(html);
        assert_eq!(normalize(&out.text), ["B"]);
        assert_eq!(out.title.as_deref(), Some("T"));
    }

    #[test]
    fn stray_less_than_is_text() {
        assert_eq!(lines("a < b, 1<2, <3, a <= b, x<"), ["a < b, 1<2, <3, a <= b, x<"]);
        assert_eq!(lines("<p>x</"), ["x</"]);
        assert_eq!(lines("a</>b"), ["ab"]);
        assert_eq!(lines("a <<b>c"), ["a <c"]);
    }

    #[test]
    fn unterminated_tags_are_dropped() {
        assert_eq!(lines("hello <div class=\"x"), ["hello"]);
        assert_eq!(lines("hello <div"), ["hello"]);
        assert_eq!(lines("hello </div"), ["hello"]);
        assert_eq!(lines("hello <a href=\"x>y"), ["hello"]);
        assert_eq!(lines("hello <a href="), ["hello"]);
    }

    #[test]
    fn malformed_input() {
        assert_eq!(lines("<<p>>a"), ["<", ">a"]);
        assert_eq!(lines("<p<p>>b"), [">b"]);
        assert_eq!(lines("<div ='>x'>y</div>"), ["x'>y"]);
        assert_eq!(lines("</p></div></li>text</table>"), ["text"]);
        assert_eq!(lines("<b><i>x</b></i>y"), ["xy"]);
        assert_eq!(lines("</svg></template></pre>a\nb"), ["a b"]);
        assert_eq!(lines("<a/b/c>x"), ["x"]);
        assert_eq!(lines("<p/>x</p/>"), ["x"]);
    }

    #[test]
    fn utf8_is_preserved() {
        assert_eq!(lines("<p>héllo 中文 😀</p><p>ü&auml;ß</p>"), ["héllo 中文 😀", "üäß"]);
        assert_eq!(lines("<p title=\"é>中\">ö</p>"), ["ö"]);
        assert_eq!(lines("é<中>ö&中;"), ["é<中>ö&中;"]);
    }

    #[test]
    fn realistic_page() {
        let html = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Local News &ndash; Example Times</title>
  <link rel="stylesheet" href="/style.css">
  <style>body { font: 14px/1.4 sans-serif; } .nav > li { display: inline; }</style>
  <script>window.dataLayer = window.dataLayer || []; if (a < 3) {}</script>
</head>
<body class="article">
  <!-- header -->
  <header>
    <nav><ul class="nav"><li><a href="/">Home</a></li><li><a href="/world">World</a></li></ul></nav>
  </header>
  <main>
    <article>
      <h1>Council approves
        new park</h1>
      <p class="byline">By <a href="/staff/jane">Jane Doe</a> &middot; May 3, 2024</p>
      <p>The city council voted 7&ndash;2 on Tuesday to approve
         a new park on the former rail yard.<br>Work starts in <b>June</b>.</p>
      <figure><img src="park.jpg" alt="Park > plan"><figcaption>The plan</figcaption></figure>
      <pre>Vote:  yes 7
       no  2</pre>
    </article>
  </main>
  <footer><p>&copy; 2024 Example Times</p></footer>
  <script src="/app.js"></script>
</body>
</html>"#;
        let out = html_to_text(html);
        assert_eq!(out.title.as_deref(), Some("Local News – Example Times"));
        assert_eq!(
            normalize(&out.text),
            [
                "Home",
                "World",
                "Council approves new park",
                "By Jane Doe · May 3, 2024",
                "The city council voted 7–2 on Tuesday to approve a new park on the former rail yard.",
                "Work starts in June.",
                "The plan",
                "Vote: yes 7",
                "no 2",
                "© 2024 Example Times",
            ]
        );
    }

    #[test]
    fn no_blank_lines_from_indentation() {
        let html = "<html>\n <body>\n  <div>\n   <p>x</p>\n   <p>y\n z</p>\n  </div>\n </body>\n</html>\n";
        assert_eq!(html_to_text(html).text, "x\ny  z");
        assert_eq!(html_to_text("<div><p>x</p></div>").text, "x");
        // A line's trailing spaces go where a block ends it.
        assert_eq!(html_to_text("<p> a <b>b</b> </p>").text, "a b");
        assert_eq!(html_to_text("<p>a \n</p>b <br> \nc").text, "a\nb\nc");
    }

    /// Pathological inputs finish quickly: every scan is linear.
    #[test]
    fn adversarial_inputs_are_linear() {
        let n = 200_000;
        for piece in [
            "<!--",
            "<![CDATA[>",
            "<![CDATA[",
            "<a ",
            "<a b='",
            "&",
            "&#",
            "&amp",
            "&aaaaaaaa",
            "</",
            "<script>",
            "</scrip",
            "<svg>",
            "<template>",
            "<p",
            "<title>",
            "<textarea>",
            "<!",
            "<?",
            "--!",
            "<a b=c ",
        ] {
            let input = piece.repeat(n);
            let start = std::time::Instant::now();
            let _ = html_to_text(&input);
            assert!(start.elapsed().as_secs() < 5, "{piece:?} took {:?}", start.elapsed());
        }
    }

    /// Small pieces that exercise every state of the scanner when glued.
    fn soup() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "<",
            ">",
            "&",
            ";",
            "/",
            "!",
            "-",
            "\"",
            "'",
            "=",
            " ",
            "\n",
            "\r",
            "#",
            "x",
            "4",
            "a",
            "p",
            "b",
            "br",
            "div",
            "pre",
            "script",
            "style",
            "title",
            "svg",
            "math",
            "template",
            "textarea",
            "xmp",
            "plaintext",
            "amp",
            "lt",
            "nbsp",
            "<!--",
            "-->",
            "<![CDATA[",
            "]]>",
            "?",
            "é",
            "中",
            "😀",
        ]);
        prop::collection::vec(pieces, 0..60).prop_map(|v| v.concat())
    }

    /// Well-formed pieces of markup with no `<` in their text, and tags
    /// whose attribute values contain `<` and `>`.
    fn markup_piece() -> impl Strategy<Value = String> {
        let tag = prop::sample::select(vec![
            "p", "div", "b", "span", "pre", "br", "li", "td", "script", "style", "title", "svg", "math",
            "template", "noscript", "iframe", "video", "a", "P", "SCRIPT", "Div",
        ]);
        let value = "[a-z<>/= !-]{0,8}";
        let text = "[a-z &;#0-9>\n\r\t\"'=/!-]{0,12}";
        prop_oneof![
            text.prop_map(|t| t.to_string()),
            (tag.clone(), value).prop_map(|(t, v)| format!("<{t} x=\"{v}\" y='{v}' z=w>")),
            tag.clone().prop_map(|t| format!("</{t}>")),
            tag.prop_map(|t| format!("<{t}/>")),
            // No '-' inside, so the comment cannot end early.
            "[a-z<>/ !]{0,12}".prop_map(|c| format!("<!--x{c}-->")),
            "[a-z<>/ ]{0,12}".prop_map(|c| format!("<![CDATA[{c}]]>")),
            Just("<!DOCTYPE html>".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn never_panics_on_arbitrary_strings(s in "\\PC*") {
            let out = html_to_text(&s);
            if let Some(title) = out.title {
                prop_assert!(!title.is_empty());
                prop_assert_eq!(title.trim(), title.as_str());
            }
        }

        #[test]
        fn never_panics_on_tag_soup(s in soup()) {
            let out = html_to_text(&s);
            prop_assert!(!out.text.ends_with('\n'));
        }

        /// Without `<` or `&`, HTML text is the text itself, with line
        /// breaks turned into spaces and leading whitespace dropped.
        #[test]
        fn text_without_markup_is_kept(s in "[^<&]*") {
            let trimmed = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0C']);
            let expected = trimmed.replace(['\n', '\r'], " ");
            prop_assert_eq!(html_to_text(&s).text, expected);
        }

        /// No `<` from a tag, comment or declaration reaches the text: when
        /// the only `<` in the input start markup (attribute values aside),
        /// the text has none, unless a reference decodes to one.
        #[test]
        fn no_markup_in_text(pieces in prop::collection::vec(markup_piece(), 0..30)) {
            let html = pieces.concat();
            let out = html_to_text(&html);
            // `&lt;`, `&nvlt;`, `&#60;` and the like.
            let from_refs = html.contains("lt") || html.contains("&#");
            prop_assert!(from_refs || !out.text.contains('<'), "{:?} -> {:?}", html, out.text);
        }
    }
}
