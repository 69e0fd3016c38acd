//! Choosing a payload's character encoding and decoding it to text.
//!
//! Crawls hold pages in every legacy encoding the web ever used. Decoding
//! them all as UTF-8 turns a windows-1252 or `Shift_JIS` page into replacement
//! characters, which then fingerprint as text nobody wrote. This module picks
//! the encoding the way a browser would, so the text we measure is the text a
//! reader saw.
//!
//! The rules, first match wins:
//!
//! 1. **BOM.** A UTF-8, UTF-16LE or UTF-16BE byte order mark decides, whatever
//!    is declared. The mark itself is not part of the text.
//! 2. **HTTP.** The `charset` parameter of the Content-Type, if it is a label
//!    known to the WHATWG Encoding Standard (so `iso-8859-1`, `latin1` and
//!    `us-ascii` mean windows-1252, `gb2312` means GBK, and so on). Unknown
//!    labels are skipped. Two departures from browsers, both so the text is
//!    useful: `x-user-defined` is read as windows-1252 (its private-use output
//!    helps nobody, and the standard reads it so in a meta tag), and a
//!    UTF-16 label is believed only if a NUL byte occurs in the first
//!    1024 bytes (UTF-16 text always has some, since ASCII characters such as
//!    markup, spaces and newlines have a zero byte; without one the label is a
//!    mistake and decoding by it would give nothing but garbage).
//! 3. **Meta** (HTML only). The HTML standard's prescan of the first
//!    1024 bytes: `<meta charset=...>`, or `<meta http-equiv="Content-Type"
//!    content="...; charset=...">`, skipping comments and the attributes of
//!    other tags; failing that, an XML declaration's `encoding` (for XHTML).
//!    As the standard says, a UTF-16 label found here means UTF-8 (a page
//!    that could read its own meta tag as ASCII is not UTF-16) and
//!    `x-user-defined` means windows-1252.
//! 4. **Default.** Bytes that are valid UTF-8 (pure ASCII included) are UTF-8,
//!    borrowed without a copy. So are bytes that are valid UTF-8 with at least
//!    one non-ASCII character up to a sequence cut off by the end of the
//!    payload, as in a truncated record; the incomplete tail is dropped and
//!    `had_errors` is set.
//! 5. **Detected.** Anything else goes to `chardetng`, the detector Firefox
//!    uses for unlabeled pages, with no top-level domain hint; it never
//!    guesses UTF-8 (already ruled out) nor ISO-2022-JP (seven-bit, so it
//!    never gets here; browsers refuse to guess it too).
//!
//! Whichever rule decides, decoding follows the Encoding Standard: malformed
//! sequences become U+FFFD and set `had_errors`. One exception: the labels
//! that the standard maps to the `replacement` encoding (`iso-2022-kr`,
//! `hz-gb-2312`, `iso-2022-cn`, ...) name encodings that cannot be decoded
//! safely; browsers show a single U+FFFD, we give empty text (with
//! `had_errors` set for a non-empty payload), so that such pages do not all
//! share one line of text and look copied from each other.

use std::borrow::Cow;

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, REPLACEMENT, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// How many leading bytes the meta prescan looks at, as the HTML standard
/// recommends. Browsers stop there, so pages that rely on a later meta tag
/// are already broken for readers.
const PRESCAN_LIMIT: usize = 1024;

/// How many bytes the detector sees at most. At roughly ten megabytes a
/// second it is by far the slowest step, and this much text with non-ASCII
/// in it says as much about an encoding as a whole book would.
const DETECT_LIMIT: usize = 32 * 1024;

/// Where the encoding came from, for stats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum CharsetSource {
    /// A byte order mark.
    Bom,
    /// The charset parameter of the HTTP (or WARC) Content-Type.
    Http,
    /// A `<meta>` tag or XML declaration in the first 1024 bytes of HTML.
    Meta,
    /// The detector, for undeclared bytes that are not UTF-8.
    Detected,
    /// Undeclared bytes that are valid UTF-8 (or ASCII), taken as UTF-8.
    Default,
}

impl CharsetSource {
    /// A short lowercase name for stats output.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CharsetSource::Bom => "bom",
            CharsetSource::Http => "http",
            CharsetSource::Meta => "meta",
            CharsetSource::Detected => "detected",
            CharsetSource::Default => "default",
        }
    }
}

/// The decoded text and how its encoding was chosen.
#[derive(Debug)]
pub(crate) struct Decoded<'a> {
    /// The text, borrowed from the payload when it was UTF-8 (or ASCII in an
    /// ASCII-compatible encoding) and needed no change.
    pub text: Cow<'a, str>,
    /// The encoding the payload was decoded with.
    pub encoding: &'static encoding_rs::Encoding,
    /// Which rule chose it.
    pub source: CharsetSource,
    /// Whether some bytes could not be decoded (replaced by U+FFFD, or
    /// dropped for a truncated sequence at the end).
    pub had_errors: bool,
}

/// Decodes a payload.
///
/// `declared` is the charset parameter of the HTTP (or WARC) Content-Type,
/// if any. `html` says whether the payload is HTML, which enables the meta
/// prescan. See the module documentation for the rules.
pub(crate) fn decode<'a>(body: &'a [u8], declared: Option<&str>, html: bool) -> Decoded<'a> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return decode_with(&body[bom_len..], encoding, CharsetSource::Bom);
    }
    if let Some(encoding) = declared.and_then(|label| http_encoding(label, body)) {
        return decode_with(body, encoding, CharsetSource::Http);
    }
    if html && let Some(encoding) = prescan(body) {
        return decode_with(body, encoding, CharsetSource::Meta);
    }
    // encoding_rs validates with SIMD where it can, several times faster
    // than `std::str::from_utf8` on non-ASCII text; this runs on every page.
    if let Some(text) = UTF_8.decode_without_bom_handling_and_without_replacement(body) {
        return Decoded { text, encoding: UTF_8, source: CharsetSource::Default, had_errors: false };
    }
    let (valid, rest) = body.split_at(Encoding::utf8_valid_up_to(body));
    // `error_len` is `None` only when `rest` is a sequence that the end of
    // the payload cut short. Requiring non-ASCII before it keeps a legacy
    // page whose single non-ASCII byte happens to be its last away from
    // this rule.
    if std::str::from_utf8(rest).is_err_and(|err| err.error_len().is_none()) && !valid.is_ascii() {
        let mut decoded = decode_with(valid, UTF_8, CharsetSource::Default);
        decoded.had_errors = true;
        return decoded;
    }
    decode_with(body, detect(body), CharsetSource::Detected)
}

/// Guesses the legacy encoding of bytes that are not UTF-8.
///
/// The detector costs about a hundred nanoseconds a byte, so it sees only
/// the lines that have a non-ASCII byte, and at most `DETECT_LIMIT` bytes of
/// them. Skipping pure-ASCII lines loses nothing: the detector scores
/// nothing for a pair of ASCII bytes, and the newline that ends each line it
/// does see leaves it at a word and character boundary, as the skipped lines
/// would. On real pages most lines are markup, scripts and styles.
fn detect(body: &[u8]) -> &'static Encoding {
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    let mut budget = DETECT_LIMIT;
    let mut rest = body;
    while !rest.is_empty() && budget > 0 {
        let end = rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        if line.is_ascii() {
            rest = tail;
        } else {
            let fed = &line[..line.len().min(budget)];
            detector.feed(fed, false);
            budget -= fed.len();
            rest = &rest[fed.len()..];
        }
    }
    // Claiming the end of the stream after a cut would penalize an encoding
    // for a character the cut happened to split.
    if rest.is_empty() {
        detector.feed(b"", true);
    }
    detector.guess(None, Utf8Detection::Deny)
}

/// Decodes `bytes` (with any BOM already removed) as `encoding`.
fn decode_with<'a>(bytes: &'a [u8], encoding: &'static Encoding, source: CharsetSource) -> Decoded<'a> {
    if encoding == REPLACEMENT {
        return Decoded { text: Cow::Borrowed(""), encoding, source, had_errors: !bytes.is_empty() };
    }
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    Decoded { text, encoding, source, had_errors }
}

/// The encoding an HTTP charset parameter names, if it should be used.
fn http_encoding(label: &str, body: &[u8]) -> Option<&'static Encoding> {
    let label = label.trim_matches(|c: char| c.is_ascii_whitespace() || c == '"' || c == '\'');
    let encoding = Encoding::for_label(label.as_bytes())?;
    if encoding == X_USER_DEFINED {
        return Some(WINDOWS_1252);
    }
    if (encoding == UTF_16LE || encoding == UTF_16BE) && !body[..body.len().min(PRESCAN_LIMIT)].contains(&0) {
        return None;
    }
    Some(encoding)
}

/// The HTML standard's prescan: a meta tag in the first 1024 bytes, or
/// else an XML declaration.
fn prescan(body: &[u8]) -> Option<&'static Encoding> {
    let window = &body[..body.len().min(PRESCAN_LIMIT)];
    let encoding = meta_prescan(window).or_else(|| xml_declaration(window))?;
    Some(if encoding == UTF_16LE || encoding == UTF_16BE {
        UTF_8
    } else if encoding == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    })
}

/// Whitespace as the prescan defines it (no vertical tab).
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

/// Whether `hay` starts with `needle`, ignoring ASCII case.
fn starts_with_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.get(..needle.len()).is_some_and(|head| head.eq_ignore_ascii_case(needle))
}

/// The index of the first occurrence of `needle` in `hay`, ignoring ASCII
/// case.
fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// The meta tag part of the prescan. Running out of bytes anywhere inside a
/// tag or comment ends it with no result.
fn meta_prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        if rest[0] != b'<' {
            pos += rest.iter().position(|&b| b == b'<').unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with(b"<!--") {
            // The `--` of the opening may end the comment too: `<!-->`.
            let end = rest[2..].windows(3).position(|w| w == b"-->")?;
            pos += 2 + end + 3;
            continue;
        }
        if starts_with_ignore_case(rest, b"<meta") && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/') {
            pos += 6;
            if let Some(encoding) = meta_attributes(bytes, &mut pos)? {
                return Some(encoding);
            }
        } else if rest.get(1).is_some_and(u8::is_ascii_alphabetic)
            || (rest.get(1) == Some(&b'/') && rest.get(2).is_some_and(u8::is_ascii_alphabetic))
        {
            // Some other tag: skip its name, then its attributes, so that a
            // `>` or `<meta` inside a quoted value is not taken for markup.
            pos += rest.iter().position(|&b| is_space(b) || b == b'>')?;
            loop {
                match attribute(bytes, &mut pos) {
                    Attr::Found(..) => {}
                    Attr::Done => break,
                    Attr::End => return None,
                }
            }
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos += rest.iter().position(|&b| b == b'>')?;
        }
        // `pos` is at the `>` that closed a tag, or at a lone `<`.
        pos += 1;
    }
    None
}

/// Reads the attributes of a meta tag, leaving `pos` at its closing `>`.
///
/// Returns `None` when the bytes run out, `Some(None)` when the tag
/// declares no usable encoding.
fn meta_attributes(bytes: &[u8], pos: &mut usize) -> Option<Option<&'static Encoding>> {
    let (mut seen_http_equiv, mut seen_content, mut seen_charset) = (false, false, false);
    let mut got_pragma = false;
    // `None` until an attribute says whether `http-equiv` is needed.
    let mut need_pragma: Option<bool> = None;
    // `None` until set; `Some(None)` for a `charset` attribute with an
    // unknown label, which still blocks a later `content` attribute.
    let mut charset: Option<Option<&'static Encoding>> = None;
    loop {
        let (name, value) = match attribute(bytes, pos) {
            Attr::Found(name, value) => (name, value),
            Attr::Done => break,
            Attr::End => return None,
        };
        if name.eq_ignore_ascii_case(b"http-equiv") && !seen_http_equiv {
            seen_http_equiv = true;
            got_pragma = value.eq_ignore_ascii_case(b"content-type");
        } else if name.eq_ignore_ascii_case(b"content") && !seen_content {
            seen_content = true;
            if charset.is_none()
                && let Some(encoding) = charset_from_content(value)
            {
                charset = Some(Some(encoding));
                need_pragma = Some(true);
            }
        } else if name.eq_ignore_ascii_case(b"charset") && !seen_charset {
            seen_charset = true;
            charset = Some(Encoding::for_label(value));
            need_pragma = Some(false);
        }
    }
    Some(match (need_pragma, charset) {
        (Some(true), _) if !got_pragma => None,
        (Some(_), Some(encoding)) => encoding,
        _ => None,
    })
}

/// One step of the prescan's attribute reader.
enum Attr<'b> {
    /// A name (never empty) and a value (possibly empty), unlowercased.
    Found(&'b [u8], &'b [u8]),
    /// The tag ended; the position is at its `>`.
    Done,
    /// The bytes ran out inside the tag.
    End,
}

/// Reads one attribute at `pos`, per the HTML standard's "get an
/// attribute", and moves `pos` past it.
///
/// Names and values are slices of the input rather than lowercased copies:
/// everything they are compared with is compared ignoring ASCII case.
fn attribute<'b>(bytes: &'b [u8], pos: &mut usize) -> Attr<'b> {
    let len = bytes.len();
    let mut p = *pos;
    while p < len && (is_space(bytes[p]) || bytes[p] == b'/') {
        p += 1;
    }
    if p >= len {
        return Attr::End;
    }
    if bytes[p] == b'>' {
        *pos = p;
        return Attr::Done;
    }
    let name_start = p;
    let name = loop {
        let Some(&b) = bytes.get(p) else { return Attr::End };
        // A leading `=` is part of the name.
        if (b == b'=' && p > name_start) || is_space(b) {
            break &bytes[name_start..p];
        }
        if b == b'/' || b == b'>' {
            *pos = p;
            return Attr::Found(&bytes[name_start..p], b"");
        }
        p += 1;
    };
    while p < len && is_space(bytes[p]) {
        p += 1;
    }
    match bytes.get(p) {
        None => return Attr::End,
        Some(b'=') => p += 1,
        Some(_) => {
            *pos = p;
            return Attr::Found(name, b"");
        }
    }
    while p < len && is_space(bytes[p]) {
        p += 1;
    }
    let Some(&first) = bytes.get(p) else { return Attr::End };
    if first == b'"' || first == b'\'' {
        let start = p + 1;
        let Some(end) = bytes[start..].iter().position(|&b| b == first) else { return Attr::End };
        *pos = start + end + 1;
        return Attr::Found(name, &bytes[start..start + end]);
    }
    if first == b'>' {
        *pos = p;
        return Attr::Found(name, b"");
    }
    let Some(end) = bytes[p..].iter().position(|&b| is_space(b) || b == b'>') else { return Attr::End };
    *pos = p + end;
    Attr::Found(name, &bytes[p..p + end])
}

/// The HTML standard's "extracting a character encoding from a meta
/// element": the `charset=` in a `content` attribute.
fn charset_from_content(value: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    loop {
        let mut p = pos + find_ignore_case(&value[pos..], b"charset")? + b"charset".len();
        while value.get(p).is_some_and(|&b| is_space(b)) {
            p += 1;
        }
        if value.get(p) != Some(&b'=') {
            // `charset` not followed by `=`; look for a later one from here.
            pos = p;
            continue;
        }
        p += 1;
        while value.get(p).is_some_and(|&b| is_space(b)) {
            p += 1;
        }
        let &first = value.get(p)?;
        let label = if first == b'"' || first == b'\'' {
            let rest = &value[p + 1..];
            &rest[..rest.iter().position(|&b| b == first)?]
        } else {
            let rest = &value[p..];
            &rest[..rest.iter().position(|&b| is_space(b) || b == b';').unwrap_or(rest.len())]
        };
        return Encoding::for_label(label);
    }
}

/// The `encoding` of an XML declaration at the very start of the bytes,
/// as in `<?xml version="1.0" encoding="windows-1251"?>`.
fn xml_declaration(bytes: &[u8]) -> Option<&'static Encoding> {
    let rest = bytes.strip_prefix(b"<?xml")?;
    let decl = &rest[..rest.iter().position(|&b| b == b'>')?];
    let mut p = decl.windows(8).position(|w| w == b"encoding")? + 8;
    while decl.get(p).is_some_and(|&b| b <= b' ') {
        p += 1;
    }
    if decl.get(p) != Some(&b'=') {
        return None;
    }
    p += 1;
    while decl.get(p).is_some_and(|&b| b <= b' ') {
        p += 1;
    }
    let &quote = decl.get(p).filter(|&&b| b == b'"' || b == b'\'')?;
    let value = &decl[p + 1..];
    let label = &value[..value.iter().position(|&b| b == quote)?];
    if label.iter().any(|&b| b <= b' ') {
        return None;
    }
    Encoding::for_label(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    use encoding_rs::{EUC_KR, GB18030, GBK, KOI8_R, KOI8_U, SHIFT_JIS};
    use proptest::prelude::*;

    const CP1252: &[u8] = b"caf\xe9 \x93quoted\x94";
    const CP1252_TEXT: &str = "caf\u{e9} \u{201c}quoted\u{201d}";

    /// A longer windows-1252 text, as a detector needs to see some.
    const FRENCH: &str = "Le caf\u{e9} \u{e9}tait d\u{e9}j\u{e0} ferm\u{e9} quand nous sommes arriv\u{e9}s \u{e0} \
                          la gare; les \u{e9}l\u{e8}ves, tr\u{e8}s d\u{e9}\u{e7}us, ont \u{ab} attendu \u{bb} \
                          le train suivant pr\u{e8}s du th\u{e9}\u{e2}tre. \u{201c}C\u{2019}est la vie\u{201d}, \
                          a dit le ma\u{ee}tre d\u{2019}h\u{f4}tel.";
    const JAPANESE: &str = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。\
                            何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。\
                            吾輩はここで始めて人間というものを見た。";
    const CHINESE: &str = "中华人民共和国是世界上人口最多的国家之一，首都是北京。\
                           中国有着悠久的历史和灿烂的文化，长城和故宫是著名的名胜古迹。\
                           今天天气很好，我们一起去公园散步吧。";
    const RUSSIAN: &str = "Все счастливые семьи похожи друг на друга, каждая несчастливая семья \
                           несчастлива по-своему. Всё смешалось в доме Облонских. Жена узнала, что \
                           муж был в связи с бывшею в их доме француженкою-гувернанткой.";
    const KOREAN: &str = "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. 수도는 서울특별시이며, \
                          국기는 태극기, 국가는 애국가이다. 오늘은 날씨가 정말 좋아서 공원에 산책을 갔습니다.";

    fn encode(text: &str, encoding: &'static Encoding) -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable, "test text not representable in {}", encoding.name());
        bytes.into_owned()
    }

    fn html_with_meta(meta: &str, body: &[u8]) -> Vec<u8> {
        let mut page =
            format!("<!DOCTYPE html><html><head>{meta}<title>t</title></head><body><p>").into_bytes();
        page.extend_from_slice(body);
        page.extend_from_slice(b"</p></body></html>");
        page
    }

    /// The `<p>` text of a page made by `html_with_meta`.
    fn paragraph(text: &str) -> &str {
        let start = text.find("<p>").unwrap() + 3;
        &text[start..text.rfind("</p>").unwrap()]
    }

    #[test]
    fn source_names() {
        use CharsetSource::*;
        let names: Vec<_> = [Bom, Http, Meta, Detected, Default].iter().map(|s| s.name()).collect();
        assert_eq!(names, ["bom", "http", "meta", "detected", "default"]);
    }

    #[test]
    fn windows_1252_from_http() {
        for label in ["windows-1252", "iso-8859-1", "latin1", "us-ascii", " \"ISO-8859-1\" "] {
            let d = decode(CP1252, Some(label), false);
            assert_eq!(d.text, CP1252_TEXT, "{label}");
            assert_eq!((d.encoding, d.source, d.had_errors), (WINDOWS_1252, CharsetSource::Http, false));
        }
    }

    #[test]
    fn windows_1252_from_meta_charset() {
        for meta in
            ["<meta charset=windows-1252>", "<META CHARSET='Windows-1252'/>", "<meta charset=\"cp1252\">"]
        {
            let page = html_with_meta(meta, CP1252);
            let d = decode(&page, None, true);
            assert_eq!(paragraph(&d.text), CP1252_TEXT, "{meta}");
            assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Meta));
        }
    }

    #[test]
    fn windows_1252_from_meta_http_equiv() {
        for meta in [
            r#"<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">"#,
            r#"<meta content='text/html;charset="ISO-8859-1"' http-equiv=content-type>"#,
            r#"<meta http-equiv="content-type" content="text/html; charset = latin1 ; foo">"#,
        ] {
            let page = html_with_meta(meta, CP1252);
            let d = decode(&page, None, true);
            assert_eq!(paragraph(&d.text), CP1252_TEXT, "{meta}");
            assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Meta));
        }
    }

    #[test]
    fn content_without_http_equiv_is_ignored() {
        let page = html_with_meta(r#"<meta content="text/html; charset=koi8-r">"#, CP1252);
        assert_eq!(decode(&page, None, true).source, CharsetSource::Detected);
        // A `charset` attribute does not need one.
        let page = html_with_meta(r#"<meta name=x charset=koi8-r>"#, b"x");
        assert_eq!(decode(&page, None, true).encoding, KOI8_R);
    }

    #[test]
    fn charset_attribute_wins_over_content() {
        let meta =
            r#"<meta http-equiv=content-type content="text/html; charset=koi8-r" charset=windows-1252>"#;
        assert_eq!(decode(&html_with_meta(meta, b"x"), None, true).encoding, WINDOWS_1252);
        // A bad `charset` label makes the tag declare nothing.
        let meta = r#"<meta charset=bogus http-equiv=content-type content="text/html; charset=koi8-r">"#;
        assert_eq!(decode(&html_with_meta(meta, b"x"), None, true).source, CharsetSource::Default);
    }

    #[test]
    fn windows_1252_detected() {
        let d = decode(CP1252, None, false);
        assert_eq!(d.text, CP1252_TEXT);
        assert_eq!((d.encoding, d.source, d.had_errors), (WINDOWS_1252, CharsetSource::Detected, false));
        let bytes = encode(FRENCH, WINDOWS_1252);
        let d = decode(&bytes, None, true);
        assert_eq!(d.text, FRENCH);
        assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Detected));
    }

    /// Each CJK and Cyrillic text, encoded, comes back both undeclared and
    /// declared. `accept` lists the encodings the detector may fairly pick.
    fn round_trip(text: &str, encoding: &'static Encoding, accept: &[&'static Encoding]) {
        let bytes = encode(text, encoding);
        assert!(std::str::from_utf8(&bytes).is_err());
        let d = decode(&bytes, None, false);
        assert_eq!(d.text, text, "{}", encoding.name());
        assert!(accept.contains(&d.encoding), "{} guessed as {}", encoding.name(), d.encoding.name());
        assert_eq!((d.source, d.had_errors), (CharsetSource::Detected, false));

        let page = html_with_meta("", &bytes);
        let d = decode(&page, None, true);
        assert_eq!(paragraph(&d.text), text, "{} in HTML", encoding.name());
        assert_eq!(d.source, CharsetSource::Detected);

        let label = encoding.name().to_ascii_lowercase();
        let d = decode(&bytes, Some(&label), false);
        assert_eq!(d.text, text);
        assert_eq!((d.encoding, d.source, d.had_errors), (encoding, CharsetSource::Http, false));

        let page = html_with_meta(&format!("<meta charset=\"{label}\">"), &bytes);
        let d = decode(&page, None, true);
        assert_eq!(paragraph(&d.text), text);
        assert_eq!((d.encoding, d.source, d.had_errors), (encoding, CharsetSource::Meta, false));
    }

    #[test]
    fn shift_jis() {
        round_trip(JAPANESE, SHIFT_JIS, &[SHIFT_JIS]);
    }

    #[test]
    fn gbk_and_gb18030() {
        round_trip(CHINESE, GBK, &[GBK, GB18030]);
        round_trip(CHINESE, GB18030, &[GBK, GB18030]);
        // `gb2312` is a label of GBK.
        let bytes = encode(CHINESE, GBK);
        let d = decode(&bytes, Some("gb2312"), false);
        assert_eq!((d.text.as_ref(), d.encoding), (CHINESE, GBK));
    }

    #[test]
    fn koi8_r() {
        // The detector says KOI8-U, a superset that decodes Russian alike.
        round_trip(RUSSIAN, KOI8_R, &[KOI8_R, KOI8_U]);
    }

    #[test]
    fn euc_kr() {
        round_trip(KOREAN, EUC_KR, &[EUC_KR]);
    }

    /// Feeding the detector only the lines with non-ASCII in them gives the
    /// guess that feeding it everything gives.
    #[test]
    fn detector_skips_ascii_lines_without_changing_its_mind() {
        let filler =
            "<script>var x = { a: 1, b: [2, 3] };</script>\n<div class=nav><a href=/x>Home</a></div>\n";
        for (text, encoding) in [
            (FRENCH, WINDOWS_1252),
            (JAPANESE, SHIFT_JIS),
            (CHINESE, GBK),
            (RUSSIAN, KOI8_R),
            (RUSSIAN, encoding_rs::WINDOWS_1251),
            (KOREAN, EUC_KR),
            ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.", encoding_rs::ISO_8859_2),
            ("Ελληνικά: η γρήγορη καφέ αλεπού πηδάει πάνω από το σκυλί.", encoding_rs::WINDOWS_1253),
        ] {
            let mut page = filler.repeat(3).into_bytes();
            for word in text.split(' ') {
                page.extend(encode(word, encoding));
                page.extend_from_slice(b"\n");
                page.extend_from_slice(filler.as_bytes());
            }
            let mut full = EncodingDetector::new(Iso2022JpDetection::Deny);
            full.feed(&page, true);
            assert_eq!(detect(&page), full.guess(None, Utf8Detection::Deny), "{}", encoding.name());
        }
    }

    #[test]
    fn detector_limit_keeps_the_whole_text() {
        // One long line, as in minified pages, past the detector's limit.
        let text = JAPANESE.repeat(DETECT_LIMIT / JAPANESE.len() * 4);
        let bytes = encode(&text, SHIFT_JIS);
        assert!(bytes.len() > 2 * DETECT_LIMIT);
        let d = decode(&bytes, None, true);
        assert_eq!((d.encoding, d.source, d.had_errors), (SHIFT_JIS, CharsetSource::Detected, false));
        assert_eq!(d.text, text);
    }

    #[test]
    fn bom_beats_declarations() {
        let mut utf8 = b"\xEF\xBB\xBF<meta charset=koi8-r>".to_vec();
        utf8.extend_from_slice("café".as_bytes());
        let d = decode(&utf8, Some("windows-1252"), true);
        assert_eq!(d.text, "<meta charset=koi8-r>café");
        assert_eq!((d.encoding, d.source, d.had_errors), (UTF_8, CharsetSource::Bom, false));
        assert!(matches!(d.text, Cow::Borrowed(_)));

        let text = "<p>café ☕</p>";
        let mut le = b"\xFF\xFE".to_vec();
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let d = decode(&le, Some("utf-8"), true);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), (text, UTF_16LE, CharsetSource::Bom));

        let mut be = b"\xFE\xFF".to_vec();
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        let d = decode(&be, Some("shift_jis"), false);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), (text, UTF_16BE, CharsetSource::Bom));
    }

    #[test]
    fn http_beats_meta_even_when_wrong() {
        let page = html_with_meta("<meta charset=windows-1252>", CP1252);
        let d = decode(&page, Some("utf-8"), true);
        assert_eq!((d.encoding, d.source, d.had_errors), (UTF_8, CharsetSource::Http, true));
        assert_eq!(paragraph(&d.text), "caf\u{fffd} \u{fffd}quoted\u{fffd}");

        let russian = encode(RUSSIAN, KOI8_R);
        let d = decode(&russian, Some("windows-1251"), false);
        assert_eq!((d.encoding, d.source), (encoding_rs::WINDOWS_1251, CharsetSource::Http));
        assert_ne!(d.text, RUSSIAN);
    }

    #[test]
    fn unknown_labels_fall_through() {
        let page = html_with_meta("<meta charset=windows-1252>", CP1252);
        let d = decode(&page, Some("no-such-charset"), true);
        assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Meta));

        let page = html_with_meta("<meta charset=bogus>", CP1252);
        let d = decode(&page, Some("x-unknown"), true);
        assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Detected));

        let d = decode(b"plain ascii", Some(""), false);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Default));
    }

    #[test]
    fn meta_after_1024_bytes_is_ignored() {
        let mut page = b"<html><head>".to_vec();
        page.resize(PRESCAN_LIMIT, b' ');
        page.extend_from_slice(b"<meta charset=koi8-r>");
        page.extend_from_slice(CP1252);
        let d = decode(&page, None, true);
        assert_eq!((d.encoding, d.source), (WINDOWS_1252, CharsetSource::Detected));

        // A tag cut by the limit counts as not there.
        let mut page = b"<html><head>".to_vec();
        page.resize(PRESCAN_LIMIT - 18, b' ');
        page.extend_from_slice(b"<meta charset=\"koi8-r\">");
        page.extend_from_slice(CP1252);
        assert_eq!(decode(&page, None, true).source, CharsetSource::Detected);

        // One that ends right at the limit counts.
        let mut page = b"<html><head>".to_vec();
        page.resize(PRESCAN_LIMIT - 23, b' ');
        page.extend_from_slice(b"<meta charset=\"koi8-r\">");
        assert_eq!(page.len(), PRESCAN_LIMIT);
        page.extend_from_slice(CP1252);
        assert_eq!(decode(&page, None, true).encoding, KOI8_R);
    }

    #[test]
    fn meta_in_comments_and_attribute_values_is_ignored() {
        for skipped in [
            "<!-- <meta charset=koi8-r> -->",
            "<!--><meta charset=windows-1252>--> <!-- x --->",
            r#"<div title="a > b <meta charset=koi8-r>">"#,
            "<!DOCTYPE html <meta charset=koi8-r>>",
            "<?php <meta charset=koi8-r> ?>",
            "</p <meta charset=koi8-r>>",
        ] {
            let page = html_with_meta(&format!("{skipped}<meta charset=windows-1252>"), b"x");
            assert_eq!(decode(&page, None, true).encoding, WINDOWS_1252, "{skipped}");
        }
        // An unterminated comment hides everything after it.
        let page = html_with_meta("<!-- <meta charset=koi8-r>", CP1252);
        assert_eq!(decode(&page, None, true).source, CharsetSource::Detected);
        // Not HTML: no prescan.
        let page = html_with_meta("<meta charset=koi8-r>", b"x");
        assert_eq!(decode(&page, None, false).source, CharsetSource::Default);
    }

    #[test]
    fn meta_utf16_means_utf8() {
        let page = html_with_meta("<meta charset=utf-16>", "café".as_bytes());
        let d = decode(&page, None, true);
        assert_eq!((paragraph(&d.text), d.encoding, d.source), ("café", UTF_8, CharsetSource::Meta));
        assert!(matches!(d.text, Cow::Borrowed(_)));
    }

    #[test]
    fn xml_declaration() {
        let mut page = br#"<?xml version="1.0" encoding='KOI8-R'?><html><p>"#.to_vec();
        page.extend(encode("Всё", KOI8_R));
        let d = decode(&page, None, true);
        assert!(d.text.ends_with("<p>Всё"));
        assert_eq!((d.encoding, d.source), (KOI8_R, CharsetSource::Meta));
        // A meta tag comes first.
        let page = br#"<?xml version="1.0" encoding="koi8-r"?><meta charset=gbk>"#;
        assert_eq!(decode(page, None, true).encoding, GBK);
        let page = br#"<?xml version="1.0" encoding="utf-16"?><p>x"#;
        assert_eq!((decode(page, None, true).encoding), UTF_8);
        assert_eq!(decode(page, None, true).source, CharsetSource::Meta);
    }

    #[test]
    fn x_user_defined_is_windows_1252() {
        let d = decode(CP1252, Some("x-user-defined"), false);
        assert_eq!((d.text.as_ref(), d.encoding), (CP1252_TEXT, WINDOWS_1252));
        let page = html_with_meta("<meta charset=x-user-defined>", CP1252);
        let d = decode(&page, None, true);
        assert_eq!((paragraph(&d.text), d.encoding), (CP1252_TEXT, WINDOWS_1252));
    }

    #[test]
    fn replacement_gives_no_text() {
        let d = decode(b"\x1b$)C\x0eabc\x0f", Some("iso-2022-kr"), false);
        assert_eq!((d.text.as_ref(), d.encoding, d.had_errors), ("", REPLACEMENT, true));
        let page = html_with_meta("<meta charset=hz-gb-2312>", b"~{<:Ky2;S{#,~}");
        let d = decode(&page, None, true);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), ("", REPLACEMENT, CharsetSource::Meta));
        let d = decode(b"", Some("replacement"), false);
        assert_eq!((d.text.as_ref(), d.had_errors), ("", false));
    }

    #[test]
    fn http_utf16_needs_nul_bytes() {
        let text = "<p>hello</p>";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let d = decode(&le, Some("utf-16"), true);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), (text, UTF_16LE, CharsetSource::Http));
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let d = decode(&be, Some("utf-16be"), true);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), (text, UTF_16BE, CharsetSource::Http));
        // A UTF-8 page mislabeled UTF-16.
        let d = decode(text.as_bytes(), Some("utf-16"), true);
        assert_eq!((d.text.as_ref(), d.encoding, d.source), (text, UTF_8, CharsetSource::Default));
    }

    #[test]
    fn valid_utf8_is_borrowed() {
        let text = "naïve café ☕ 日本語 <meta charset=utf-8>";
        for (declared, html, source) in [
            (None, false, CharsetSource::Default),
            (None, true, CharsetSource::Meta),
            (Some("utf-8"), true, CharsetSource::Http),
            (Some("UTF8"), false, CharsetSource::Http),
        ] {
            let d = decode(text.as_bytes(), declared, html);
            assert!(matches!(d.text, Cow::Borrowed(_)));
            assert_eq!((d.text.as_ref(), d.encoding, d.source, d.had_errors), (text, UTF_8, source, false));
        }
        // ASCII in any ASCII-compatible encoding is borrowed too.
        let d = decode(b"<p>plain</p>", Some("windows-1252"), true);
        assert!(matches!(d.text, Cow::Borrowed("<p>plain</p>")));
        let d = decode(b"", None, true);
        assert!(matches!(d.text, Cow::Borrowed("")));
        assert_eq!((d.encoding, d.source, d.had_errors), (UTF_8, CharsetSource::Default, false));
    }

    #[test]
    fn truncated_utf8_stays_utf8() {
        let text = "café ☕";
        let bytes = &text.as_bytes()[..text.len() - 1];
        let d = decode(bytes, None, false);
        assert!(matches!(d.text, Cow::Borrowed("café ")));
        assert_eq!((d.encoding, d.source, d.had_errors), (UTF_8, CharsetSource::Default, true));
        // ASCII and then one lead byte at the end is more likely legacy.
        let d = decode(b"a cafe for caf\xe9", None, false);
        assert_eq!((d.text.as_ref(), d.source), ("a cafe for caf\u{e9}", CharsetSource::Detected));
    }

    #[test]
    fn invalid_declared_utf8_is_replaced() {
        let d = decode(b"a\xffb", Some("utf-8"), false);
        assert_eq!((d.text.as_ref(), d.had_errors), ("a\u{fffd}b", true));
    }

    const LABELS: &[&str] = &[
        "utf-8",
        "utf-16",
        "utf-16be",
        "windows-1252",
        "shift_jis",
        "gbk",
        "gb18030",
        "euc-kr",
        "koi8-r",
        "iso-2022-jp",
        "iso-2022-kr",
        "x-user-defined",
        "big5",
        "bogus",
        "",
    ];

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(
            body in proptest::collection::vec(any::<u8>(), 0..2048),
            label in proptest::option::of(proptest::sample::select(LABELS)),
            html in any::<bool>(),
        ) {
            let d = decode(&body, label, html);
            if d.source == CharsetSource::Default && !d.had_errors {
                prop_assert_eq!(d.text.as_bytes(), &body[..]);
            }
        }

        #[test]
        fn arbitrary_markup_never_panics(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "<", ">", "<!--", "-->", "<meta", "<META ", " ", "/", "=", "\"", "'", "charset",
                    "http-equiv", "content", "content-type", "text/html;", "charset=", "koi8-r", "utf-16",
                    "<?xml", "encoding", "</", "<!", "<?", "a", "\u{e9}", "\x00", "\u{fffd}",
                ][..]),
                0..200,
            ),
            tail in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut body = parts.concat().into_bytes();
            body.extend_from_slice(&tail);
            let _ = decode(&body, None, true);
            let _ = decode(&body, Some("utf-16le"), true);
        }

        #[test]
        fn undeclared_utf8_round_trips(text in "\\PC{0,200}") {
            let d = decode(text.as_bytes(), None, false);
            prop_assert!(matches!(d.text, Cow::Borrowed(_)));
            prop_assert_eq!(d.text.as_ref(), text.as_str());
        }
    }
}
