//! URLs that the `url` crate's parser gives back as they are written, cut
//! into their parts by hand.
//!
//! The parser is the definition (WHATWG URL: IDNA mapping, IPv4 numbers in
//! any base, user info, ports, percent-encoding, dot segments). But a
//! crawl's URLs are nearly all plain: an `http://` or `https://` prefix, a
//! host of ASCII labels, and a path and query of printable ASCII that the
//! parser leaves as they are. Parsing each whole URL took 1.9% of the
//! fingerprint stage's samples for its host alone, and 12% of the report
//! stage's for its URL alias keys (`perf record`, the generated crawl at
//! the paper's page size), so such a URL is cut where its parts are; any
//! other goes to the parser. The tests draw URLs from the characters that
//! matter and check every plain one against the parser.

/// A URL the parser would give back as written (but for a lowercased
/// host, a `/` for an empty path and a dropped fragment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlainUrl<'a> {
    pub https: bool,
    /// The host, lowercase.
    pub host: &'a str,
    /// The path, `/` when the URL has none.
    pub path: &'a str,
    /// The query without its `?`, when the URL has one (maybe empty).
    pub query: Option<&'a str>,
}

/// The host of an `http://` or `https://` URL, as written, when the parser
/// would give it back only lowercased: labels of ASCII letters, digits and
/// hyphens, none empty and none an IDNA label (`xn--`), the last one not a
/// number (which would make the host an IPv4 address, written in decimal,
/// octal or hex); no user info and no port. `None` leaves the URL to the
/// parser.
pub(crate) fn plain_host(url: &str) -> Option<&str> {
    let (_, rest) = after_scheme(url)?;
    let bytes = rest.as_bytes();
    let end = bytes.iter().position(|&b| CLASSES[usize::from(b)] & HOST == 0).unwrap_or(bytes.len());
    if bytes.get(end).is_some_and(|&b| !matches!(b, b'/' | b'?' | b'#')) {
        return None;
    }
    let host = &rest[..end];
    let mut last = "";
    for label in host.split('.') {
        let idna = label.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("xn--"));
        if label.is_empty() || idna {
            return None;
        }
        last = label;
    }
    let hex = last.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("0x"));
    if hex || last.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(host)
}

/// The parts of a plain URL: a [`plain_host`] already in lowercase, and
/// a path and query of printable ASCII other than the characters the
/// parser would percent-encode or read otherwise (quotes, `<`, `>`, `\`,
/// `^`, `` ` ``, `{`, `|`, `}`), with no `.` or `..` segment and no
/// `%2e` (an encoded dot, which can make one). The fragment, which is
/// dropped, must be printable ASCII too. `None` leaves the URL to the
/// parser.
pub(crate) fn split(url: &str) -> Option<PlainUrl<'_>> {
    let host = plain_host(url)?;
    let (https, rest) = after_scheme(url)?;
    let rest = &rest[host.len()..];
    let bytes = rest.as_bytes();
    // One pass over the rest: the bytes are looked up in a table, and
    // only `/`, `.`, `%`, `?` and `#` need a second look.
    let (mut query_at, mut fragment_at) = (None, bytes.len());
    let mut segment = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match CLASSES[usize::from(b)] & (PRINTABLE | MARK) {
            PRINTABLE => {}
            c if c & PRINTABLE == 0 => return None,
            _ if fragment_at < bytes.len() => {}
            _ => match b {
                b'?' if query_at.is_none() => {
                    dot_segment(&bytes[segment..i])?;
                    query_at = Some(i);
                }
                b'#' => {
                    if query_at.is_none() {
                        dot_segment(&bytes[segment..i])?;
                    }
                    fragment_at = i;
                }
                b'/' if query_at.is_none() => {
                    dot_segment(&bytes[segment..i])?;
                    segment = i + 1;
                }
                b'%' if query_at.is_none()
                    && bytes.get(i + 1) == Some(&b'2')
                    && bytes.get(i + 2).is_some_and(|&e| e | 0x20 == b'e') =>
                {
                    return None;
                }
                _ => {}
            },
        }
        i += 1;
    }
    if query_at.is_none() && fragment_at == bytes.len() {
        dot_segment(&bytes[segment..])?;
    }
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let path = &rest[..query_at.unwrap_or(fragment_at)];
    let query = query_at.map(|q| &rest[q + 1..fragment_at]);
    Some(PlainUrl { https, host, path: if path.is_empty() { "/" } else { path }, query })
}

/// `None` for a path segment of `.` or `..`, which the parser resolves.
fn dot_segment(segment: &[u8]) -> Option<()> {
    (!matches!(segment, b"." | b"..")).then_some(())
}

/// [`CLASSES`] bits: a byte of a plain host (ASCII letter, digit, `-`,
/// `.`); a byte the parser keeps as it is in a path, query or fragment
/// (printable ASCII but `"`, `'`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`,
/// `}`, which it may encode or read otherwise); one of those that the
/// split looks at again (`/`, `.`, `%`, `?`, `#`).
const HOST: u8 = 1;
const PRINTABLE: u8 = 2;
const MARK: u8 = 4;

static CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0x21;
    while b <= 0x7e {
        table[b] = PRINTABLE;
        if (b as u8).is_ascii_alphanumeric() || b == b'-' as usize || b == b'.' as usize {
            table[b] |= HOST;
        }
        b += 1;
    }
    let awkward = [b'"', b'\'', b'<', b'>', b'\\', b'^', b'`', b'{', b'|', b'}'];
    let mut i = 0;
    while i < awkward.len() {
        table[awkward[i] as usize] = 0;
        i += 1;
    }
    let marks = [b'/', b'.', b'%', b'?', b'#'];
    let mut i = 0;
    while i < marks.len() {
        table[marks[i] as usize] |= MARK;
        i += 1;
    }
    table
};

/// Whether the scheme is https, and the URL after `://`, for the two
/// schemes in lowercase.
fn after_scheme(url: &str) -> Option<(bool, &str)> {
    match url.strip_prefix("http://") {
        Some(rest) => Some((false, rest)),
        None => url.strip_prefix("https://").map(|rest| (true, rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::XorShift;

    #[test]
    fn plain_hosts_are_cut_out_and_others_left() {
        for (url, plain) in [
            ("http://example.com/a", Some("example.com")),
            ("https://Sub.Example-1.org?q#f", Some("Sub.Example-1.org")),
            ("http://a.b.c", Some("a.b.c")),
            ("http://x.y#frag/z", Some("x.y")),
            ("http://example.com./", None),
            ("http://a..b/", None),
            ("http://.a/", None),
            ("http:///example.com/", None),
            ("http://user@example.com/", None),
            ("http://example.com:8080/", None),
            ("http://xn--bcher-kva.example/", None),
            ("http://a.XN--bcher-kva/", None),
            ("http://127.0.0.1/", None),
            ("http://a.0x7f/", None),
            ("http://1.2.3/", None),
            ("http://exa\tmple.com/", None),
            ("http://ex\\ample.com/", None),
            ("http://bücher.example/", None),
            ("HTTP://example.com/", None),
            ("ftp://example.com/", None),
            ("http:example.com", None),
        ] {
            assert_eq!(plain_host(url), plain, "{url}");
        }
    }

    #[test]
    fn plain_urls_are_split_and_others_left() {
        let plain = |https, host, path, query| Some(PlainUrl { https, host, path, query });
        for (url, want) in [
            ("http://example.com/a/b.html", plain(false, "example.com", "/a/b.html", None)),
            ("https://a.org", plain(true, "a.org", "/", None)),
            ("https://a.org?", plain(true, "a.org", "/", Some(""))),
            ("http://a.org/x?q=1&r=%20#frag", plain(false, "a.org", "/x", Some("q=1&r=%20"))),
            ("http://a.org#f?g", plain(false, "a.org", "/", None)),
            ("http://a.org/.well-known/x", plain(false, "a.org", "/.well-known/x", None)),
            ("http://A.org/", None),
            ("http://a.org/./x", None),
            ("http://a.org/x/..", None),
            ("http://a.org/%2E%2e/", None),
            ("http://a.org/a b", None),
            ("http://a.org/a\"b", None),
            ("http://a.org/é", None),
            ("http://a.org/x#é", None),
            ("http://a.org:80/", None),
        ] {
            assert_eq!(split(url), want, "{url}");
        }
    }

    /// The parts the parser gives a URL, as [`split`] gives them.
    fn parsed(url: &str) -> Option<(bool, String, String, Option<String>)> {
        let u = url::Url::parse(url).ok()?;
        Some((
            u.scheme() == "https",
            u.host_str()?.to_string(),
            u.path().to_string(),
            u.query().map(str::to_string),
        ))
    }

    /// On random URLs built from the characters that matter, every plain
    /// one has the parts the parser gives it, and nothing is left of it
    /// that the parser would write otherwise.
    #[test]
    fn plain_urls_agree_with_the_parser() {
        let pieces = [
            "a", "b", "Z", "0", "9", "x", "-", ".", "..", "xn--", "0x", "7f", ":", ":80", "@", "/", "//",
            "/.", "/..", "./", "?", "??", "#", "&", "=", "%", "%2e", "%2E", "%41", "%zz", "\\", "\t", " ",
            "é", "_", "~", "!", "$", "'", "\"", "<", ">", "^", "`", "{", "|", "}", "[", "]", "(", ")", "*",
            "+", ",", ";", "com", "255",
        ];
        let mut rng = XorShift::new(0x005e_ed0f_0071);
        let mut plain = 0;
        for _ in 0..200_000 {
            let scheme = ["http://", "https://", "http:/", "Http://"][(rng.next_u64() % 4) as usize];
            let mut url = scheme.to_string();
            url.push_str(["example.com", "a.b", "www.x.org", "Ex.com"][(rng.next_u64() % 4) as usize]);
            for _ in 0..rng.next_u64() % 8 {
                url.push_str(pieces[(rng.next_u64() % pieces.len() as u64) as usize]);
            }
            if let Some(p) = split(&url) {
                plain += 1;
                let want = parsed(&url).unwrap_or_else(|| panic!("{url:?} is plain but does not parse"));
                let got = (p.https, p.host.to_string(), p.path.to_string(), p.query.map(str::to_string));
                assert_eq!(got, want, "{url:?}");
            }
        }
        assert!(plain > 15_000, "only {plain} plain URLs drawn");
    }
}
