//! The host column of docs.csv: the lowercase host of each document's URL.
//!
//! The `url` crate's parser is the definition (WHATWG URL: IDNA mapping,
//! IPv4 numbers in any base, IPv6, user info, ports). Parsing the whole URL
//! for its host took 1.9% of the fingerprint stage's samples on one thread
//! (`perf record`, one file of the generated crawl at the paper's page
//! size), for URLs whose host is nearly always plain ASCII written as the
//! parser gives it back. Such a host is cut out of the URL by hand; any
//! other goes to the parser.

/// The lowercase host of a URL without port, or empty when the URL has
/// none.
pub(crate) fn host_of(url: &str) -> String {
    match plain_host(url) {
        Some(host) => host.to_ascii_lowercase(),
        None => parsed_host(url),
    }
}

/// [`host_of`] by the parser alone.
fn parsed_host(url: &str) -> String {
    let parsed = url::Url::parse(url).ok();
    let host = parsed.as_ref().and_then(url::Url::host_str).unwrap_or_default();
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// The host of an `http://` or `https://` URL, as written, when the parser
/// would give it back only lowercased: labels of ASCII letters, digits and
/// hyphens, none empty and none an IDNA label (`xn--`), the last one not a
/// number (which would make the host an IPv4 address, written in decimal,
/// octal or hex); no user info and no port. `None` leaves the URL to the
/// parser.
fn plain_host(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"))?;
    let end = rest.bytes().position(|b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(rest.len());
    let host = rest.get(..end)?;
    if !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::XorShift;

    #[test]
    fn plain_hosts_are_cut_out_and_others_parsed() {
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
            assert_eq!(host_of(url), parsed_host(url), "{url}");
        }
    }

    /// On random URLs built from the characters that matter to a host, the
    /// cut-out host is the parser's whenever there is one.
    #[test]
    fn plain_hosts_agree_with_the_parser() {
        let pieces = [
            "a",
            "b",
            "Z",
            "0",
            "1",
            "9",
            "x",
            "f",
            "-",
            ".",
            "..",
            "xn--",
            "XN--",
            "0x",
            "0X",
            "7f",
            ":",
            ":80",
            "@",
            "/",
            "?",
            "#",
            "\\",
            "\t",
            "%41",
            "é",
            "_",
            "[",
            "]",
            "com",
            "org",
            "255",
            "4294967296",
        ];
        let mut rng = XorShift::new(0x005e_ed0f_4057);
        let mut plain = 0;
        for _ in 0..200_000 {
            let scheme = ["http://", "https://", "http:/", "http:///"][(rng.next_u64() % 4) as usize];
            let mut url = scheme.to_string();
            for _ in 0..1 + rng.next_u64() % 8 {
                url.push_str(pieces[(rng.next_u64() % pieces.len() as u64) as usize]);
            }
            if rng.next_u64().is_multiple_of(2) {
                url.push_str("/path?q=1");
            }
            if plain_host(&url).is_some() {
                plain += 1;
            }
            assert_eq!(host_of(&url), parsed_host(&url), "{url:?}");
        }
        assert!(plain > 10_000, "only {plain} plain hosts drawn");
    }
}
