//! The host column of docs.csv: the lowercase host of each document's URL.
//!
//! The `url` crate's parser is the definition (WHATWG URL: IDNA mapping,
//! IPv4 numbers in any base, IPv6, user info, ports); a plain host is cut
//! out of the URL by hand ([`crate::bytes::plain_url`]), any other parsed.

use crate::bytes::plain_url::plain_host;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::XorShift;

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
