//! Stage 2, `extract`: a raw record's payload to normalized text.
//!
//! The content type decides the path: `text/plain` is used as is;
//! `text/html` and `application/xhtml+xml` go through [`html`]; other types
//! are not documents. A record that does not say its type is sniffed: a
//! payload that starts (after whitespace and a BOM) with `<` followed by a
//! letter, `!` or `?` is HTML, anything else plain text. Bytes are decoded
//! by [`charset`]: byte-order mark, declared charset, `<meta>` prescan,
//! valid UTF-8, then a detector; invalid sequences become U+FFFD.

pub(crate) mod charset;
pub mod html;
pub mod normalize;

pub(crate) use normalize::normalize;

use crate::bytes::read::{RawDoc, SkipReason};

/// How a payload is turned into text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Plain,
    Html,
}

/// Decides how to read a payload, or `None` when its type is not text.
pub(crate) fn classify(content_type: Option<&str>, body: &[u8]) -> Option<Kind> {
    match content_type.map(str::trim) {
        Some("text/plain") => Some(Kind::Plain),
        Some("text/html") | Some("application/xhtml+xml") => Some(Kind::Html),
        None | Some("") => Some(sniff(body)),
        Some(_) => None,
    }
}

/// Guesses HTML or plain text from the first bytes.
fn sniff(body: &[u8]) -> Kind {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    match start.map(|i| &body[i..]) {
        Some([b'<', next, ..]) if next.is_ascii_alphabetic() || *next == b'!' || *next == b'?' => Kind::Html,
        _ => Kind::Plain,
    }
}

/// A document's text, ready for chunking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Extracted {
    /// Normalized lines joined by `\n`; empty for an empty document.
    pub text: String,
    /// Number of normalized lines.
    pub lines: u64,
    /// The HTML `<title>`, if any.
    pub title: Option<String>,
    /// The HTML `<link rel="canonical">` address, if any.
    pub canonical: Option<String>,
    /// How the bytes were decoded: the rule that chose the encoding, the
    /// encoding's name, and whether some bytes were malformed in it.
    pub charset: Option<(charset::CharsetSource, &'static str, bool)>,
}

/// Cuts normalized text to at most `max` bytes, at the last line end that
/// fits (or, when the first line alone is longer, at the last character
/// that fits, with trailing spaces removed), so that one huge page cannot
/// dominate a run's memory and time. Returns whether it cut.
pub(crate) fn cap(ex: &mut Extracted, max: usize) -> bool {
    if ex.text.len() <= max {
        return false;
    }
    let mut end = match ex.text.as_bytes()[..=max].iter().rposition(|&b| b == b'\n') {
        Some(newline) => newline,
        None => (0..=max).rev().find(|&i| ex.text.is_char_boundary(i)).unwrap_or(0),
    };
    while end > 0 && ex.text[..end].ends_with(' ') {
        end -= 1;
    }
    ex.text.truncate(end);
    ex.lines = if ex.text.is_empty() { 0 } else { ex.text.matches('\n').count() as u64 + 1 };
    true
}

/// Turns a record's payload into normalized text, or says why it is not a
/// document.
pub(crate) fn extract(doc: &RawDoc) -> Result<Extracted, SkipReason> {
    extract_with(doc, &mut Buffers::default())
}

/// The text buffers that one worker reuses from page to page: the HTML
/// converter's rendered text, and the normalized text that
/// [`extract_with`] hands out and [`Buffers::recycle`] takes back.
///
/// Made new for every page, the two strings were two to four of the
/// allocator's larger requests a page (each a few kilobytes, grown by
/// copying when a page's text outran the first guess), served from its
/// bins rather than its per-thread cache: `malloc`, `free` and their
/// helpers took 2.8% of the fingerprint stage's CPU time on the generated
/// crawl at the paper's page size (`perf`, two threads). Reused, the stage
/// took 1.8% less CPU time on one of that crawl's files, one thread
/// (median of twenty interleaved pairs of runs, 16 of them faster), for
/// 0.4% fewer instructions: fresh blocks of a few kilobytes also cost
/// cache misses.
#[derive(Default)]
pub(crate) struct Buffers {
    html: String,
    text: String,
}

/// The most a buffer keeps for the next page: a rare huge page's memory is
/// freed rather than held for the rest of the run (the fingerprint stage's
/// writer thread keeps its buffers for the whole stage).
const KEPT_BYTES: usize = 1 << 20;

impl Buffers {
    /// Takes back a text that [`extract_with`] handed out, to hold the
    /// next page's.
    pub(crate) fn recycle(&mut self, text: String) {
        if text.capacity() > self.text.capacity() && text.capacity() <= KEPT_BYTES {
            self.text = text;
        }
    }
}

/// [`extract`], writing the text in `buffers`' memory.
pub(crate) fn extract_with(doc: &RawDoc, buffers: &mut Buffers) -> Result<Extracted, SkipReason> {
    let kind = classify(doc.content_type.as_deref(), &doc.body).ok_or(SkipReason::UnsupportedContentType)?;
    let decoded = charset::decode(&doc.body, doc.charset.as_deref(), kind == Kind::Html);
    let mut text = std::mem::take(&mut buffers.text);
    text.clear();
    let mut out = Extracted {
        charset: Some((decoded.source, decoded.encoding.name(), decoded.had_errors)),
        ..Extracted::default()
    };
    let decoded = decoded.text;
    match kind {
        Kind::Plain => {
            out.lines = normalize(&decoded, &mut text);
        }
        Kind::Html => {
            let head = html::html_to_text_into(&decoded, &mut buffers.html);
            (out.title, out.canonical) = (head.title, head.canonical);
            out.lines = normalize(&buffers.html, &mut text);
            if buffers.html.capacity() > KEPT_BYTES {
                buffers.html = String::new();
            }
        }
    }
    out.text = text;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_type_then_sniffs() {
        assert_eq!(classify(Some("text/plain"), b"<p>"), Some(Kind::Plain));
        assert_eq!(classify(Some("text/html"), b"hi"), Some(Kind::Html));
        assert_eq!(classify(Some("application/xhtml+xml"), b""), Some(Kind::Html));
        assert_eq!(classify(Some("image/png"), b"x"), None);
        assert_eq!(classify(None, b"\xEF\xBB\xBF \n<!DOCTYPE html>"), Some(Kind::Html));
        assert_eq!(classify(None, b"<html>"), Some(Kind::Html));
        assert_eq!(classify(None, b"a < b"), Some(Kind::Plain));
        assert_eq!(classify(None, b"< 3"), Some(Kind::Plain));
        assert_eq!(classify(None, b""), Some(Kind::Plain));
    }

    #[test]
    fn extracts_plain_and_html() {
        let doc = |ct: &str, body: &str| RawDoc {
            content_type: Some(ct.into()),
            body: body.as_bytes().to_vec().into(),
            ..RawDoc::default()
        };
        let plain = extract(&doc("text/plain", " a  b\r\n\r\nc ")).unwrap();
        assert_eq!((plain.text.as_str(), plain.lines), ("a b\nc", 2));
        let html = extract(&doc("text/html", "<title>T</title><p>one\ntwo</p><p>three</p>")).unwrap();
        assert_eq!((html.text.as_str(), html.lines), ("one two\nthree", 2));
        assert_eq!(html.title.as_deref(), Some("T"));
        assert_eq!(extract(&doc("image/gif", "GIF89a")), Err(SkipReason::UnsupportedContentType));
    }

    #[test]
    fn cap_cuts_at_a_line_end_or_a_character() {
        let ex = |text: &str| Extracted {
            text: text.into(),
            lines: text.split('\n').count() as u64,
            ..Extracted::default()
        };
        let mut e = ex("ab cd\nef\ngh");
        assert!(!cap(&mut e, 100));
        assert!(cap(&mut e, 9));
        assert_eq!((e.text.as_str(), e.lines), ("ab cd\nef", 2));
        let mut e = ex("ab cd\nef");
        assert!(cap(&mut e, 3));
        assert_eq!((e.text.as_str(), e.lines), ("ab", 1));
        let mut e = ex("éé");
        assert!(cap(&mut e, 3));
        assert_eq!(e.text, "é");
        let mut e = ex("aéé");
        assert!(cap(&mut e, 1));
        assert_eq!(e.text, "a");
        let mut e = ex("aé\néb");
        assert!(cap(&mut e, 4));
        assert_eq!(e.text, "aé");
        let mut e = ex("é");
        assert!(cap(&mut e, 1));
        assert_eq!((e.text.as_str(), e.lines), ("", 0));
    }

    #[test]
    fn declared_utf8_replaces_invalid_bytes_and_undeclared_bytes_are_detected() {
        let doc = |charset: Option<&str>, body: &[u8]| RawDoc {
            content_type: Some("text/plain".into()),
            charset: charset.map(str::to_string),
            body: body.to_vec().into(),
            ..RawDoc::default()
        };
        assert_eq!(extract(&doc(Some("utf-8"), b"a\xffb")).unwrap().text, "a\u{fffd}b");
        assert_eq!(extract(&doc(Some("windows-1252"), b"caf\xe9")).unwrap().text, "caf\u{e9}");
        assert_eq!(extract(&doc(None, b"a\xffb")).unwrap().text, "a\u{ff}b");
    }

    #[test]
    fn buffers_do_not_keep_a_huge_page() {
        let mut buffers = Buffers::default();
        let page = format!("<p>{}</p>", "word ".repeat(KEPT_BYTES / 2));
        let doc = RawDoc {
            content_type: Some("text/html".into()),
            body: page.into_bytes().into(),
            ..RawDoc::default()
        };
        let text = extract_with(&doc, &mut buffers).unwrap().text;
        assert!(text.len() > KEPT_BYTES);
        buffers.recycle(text);
        assert_eq!((buffers.html.capacity(), buffers.text.capacity()), (0, 0));
        let small = RawDoc {
            content_type: Some("text/html".into()),
            body: b"<p>a b</p>".to_vec().into(),
            ..RawDoc::default()
        };
        let text = extract_with(&small, &mut buffers).unwrap().text;
        assert_eq!(text, "a b");
        buffers.recycle(text);
        assert!(buffers.html.capacity() > 0 && buffers.text.capacity() > 0);
    }

    proptest::proptest! {
        /// A worker's buffers carry nothing from one page into the next:
        /// long pages then short ones, HTML and plain text, titles or none.
        #[test]
        fn reused_buffers_extract_what_fresh_ones_do(
            pages in proptest::collection::vec(
                (proptest::bool::ANY, "(<p>|</p>|<title>|</title>|<br>|<pre>|</pre>|&amp;| |\n|x|é|ab){0,60}"),
                1..12,
            ),
        ) {
            let mut buffers = Buffers::default();
            for (html, body) in pages {
                let doc = RawDoc {
                    content_type: Some(if html { "text/html" } else { "text/plain" }.into()),
                    body: body.as_bytes().to_vec().into(),
                    ..RawDoc::default()
                };
                let reused = extract_with(&doc, &mut buffers).unwrap();
                proptest::prop_assert_eq!(&reused, &extract(&doc).unwrap());
                buffers.recycle(reused.text);
            }
        }

        #[test]
        fn cap_keeps_a_normalized_prefix(text in "[a é\n字]{0,40}", max in 0usize..50) {
            let mut normalized = String::new();
            let lines = normalize(&text, &mut normalized);
            let mut e = Extracted { text: normalized.clone(), lines, ..Extracted::default() };
            let cut = cap(&mut e, max);
            proptest::prop_assert_eq!(cut, normalized.len() > max);
            proptest::prop_assert!(e.text.len() <= max || !cut);
            proptest::prop_assert!(normalized.starts_with(&e.text));
            // Still normalized: normalizing again changes nothing.
            let mut again = String::new();
            let again_lines = normalize(&e.text, &mut again);
            proptest::prop_assert_eq!(&again, &e.text);
            proptest::prop_assert_eq!(again_lines, e.lines);
        }
    }
}
