//! The CDXJ index of the WARC files `dedup --format warc-revisits`
//! writes: one line per response, revisit and resource record,
//! `SURT TIMESTAMP {json}`, sorted, as pywb reads it (and writes it with
//! `wb-manager`): the JSON has `url`, `mime` (`warc/revisit` for a
//! revisit), `status`, `digest` (the payload digest without its `sha1:`),
//! `length` and `offset` (of the record's gzip member) and `filename`.
//!
//! Lines are sorted within the memory budget by `extsort`, spilling to the
//! scratch directory.

use std::io::{self, BufRead, Read, Write};
use std::path::Path;

use anyhow::Context;
use extsort::{ExternalSorter, Sortable};
use serde::Serialize;

use crate::bytes::read::digest;
use crate::bytes::read::stored::{self, Stored};
use crate::bytes::revisit::target_uri;

/// The JSON part of a line, in pywb's field order.
#[derive(Serialize)]
struct Fields<'a> {
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest: Option<String>,
    length: String,
    offset: String,
    filename: &'a str,
}

/// The index line of a record written at `offset` (`length` bytes) of
/// `filename`; `None` for a record a replay does not look up (request,
/// metadata, warcinfo, damaged bytes).
pub(super) fn line(rec: &Stored, filename: &str, offset: u64, length: u64) -> Option<String> {
    let kind = rec.field("WARC-Type")?.to_ascii_lowercase();
    if !matches!(kind.as_str(), "response" | "revisit" | "resource") {
        return None;
    }
    let url = target_uri(rec)?;
    let http = if kind == "resource" { None } else { stored::http_head(&rec.block) };
    let mime = match kind.as_str() {
        "revisit" => Some("warc/revisit".to_string()),
        "resource" => rec.field("Content-Type").map(|t| media_type(&t)),
        _ => http.as_ref().and_then(|h| h.content_type.clone()),
    };
    // A loaded record without a digest of its own (a kept capture that a
    // revisit names, from a writer that wrote none) gets the one its
    // revisits carry, which a replay matches them by.
    let computed = || {
        let start = http.as_ref().filter(|_| rec.stored.is_some())?.body_start;
        Some(digest::sha1_value(rec.block.get(start..)?))
    };
    let digest = rec.field("WARC-Payload-Digest").or_else(computed).map(|d| match d.split_once(':') {
        Some((algorithm, value)) if algorithm.eq_ignore_ascii_case("sha1") => value.to_string(),
        _ => d,
    });
    let fields = Fields {
        url: &url,
        mime,
        status: http.as_ref().map(|h| h.status.to_string()),
        digest,
        length: length.to_string(),
        offset: offset.to_string(),
        filename,
    };
    let date = rec.field("WARC-Date").unwrap_or_default();
    let json = serde_json::to_string(&fields).expect("strings serialize");
    Some(format!("{} {} {json}", surt(&url), timestamp(&date)))
}

/// A media type without its parameters, lowercased.
fn media_type(value: &str) -> String {
    value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// The 14 digits of a WARC date (`2024-01-02T03:04:05Z`:
/// `20240102030405`), zeros for what it lacks.
fn timestamp(date: &str) -> String {
    let mut digits: String = date.chars().filter(char::is_ascii_digit).take(14).collect();
    while digits.len() < 14 {
        digits.push('0');
    }
    digits
}

/// The SURT key of a URL, as replay tools canonicalize it (the Internet
/// Archive's rules, which pywb applies to a URL it is asked for): scheme,
/// user and fragment dropped, the host lowercased without `www.` (or
/// `www2.`...) and with its labels reversed, the default port dropped,
/// path and query lowercased, query arguments sorted:
/// `http://www.Example.com/A?b=1&a=2` is `com,example)/a?a=2&b=1`. The
/// unit test's cases are what the `surt` package (pywb's) makes of them.
pub(super) fn surt(url: &str) -> String {
    let lower = url.trim().to_ascii_lowercase();
    let (scheme, rest) = match lower.split_once("://") {
        Some((s, r))
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
        {
            (s, r)
        }
        _ => return lower,
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => (h, p),
        _ => (authority, ""),
    };
    let default = (scheme == "http" && port == "80") || (scheme == "https" && port == "443");
    let host = host.trim_end_matches('.');
    let host = match host.strip_prefix("www") {
        Some(after) => match after.trim_start_matches(|c: char| c.is_ascii_digit()).strip_prefix('.') {
            Some(bare) if !bare.is_empty() => bare,
            _ => host,
        },
        None => host,
    };
    let mut key: String = host.rsplit('.').collect::<Vec<_>>().join(",");
    if !port.is_empty() && !default {
        key.push(':');
        key.push_str(port);
    }
    key.push(')');
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    key.push_str(if path.is_empty() { "/" } else { path });
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        let mut args: Vec<&str> = query.split('&').collect();
        args.sort_unstable();
        key.push('?');
        key.push_str(&args.join("&"));
    }
    key
}

/// A line, as `extsort` spills it.
struct Line(String);

impl Sortable for Line {
    fn encode<W: Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(&(self.0.len() as u64).to_le_bytes())?;
        w.write_all(self.0.as_bytes())
    }

    fn decode<R: Read>(r: &mut R) -> io::Result<Self> {
        let mut len = [0; 8];
        r.read_exact(&mut len)?;
        let mut bytes = vec![0; u64::from_le_bytes(len) as usize];
        r.read_exact(&mut bytes)?;
        String::from_utf8(bytes).map(Line).map_err(io::Error::other)
    }
}

impl PartialEq for Line {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl Eq for Line {}
impl PartialOrd for Line {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Line {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.as_bytes().cmp(other.0.as_bytes())
    }
}

/// Writes the lines of `unsorted` (one per line) to `out`, sorted, holding
/// about `budget` bytes of them in memory.
pub(super) fn sort(unsorted: &Path, budget: u64, scratch: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    let file =
        std::fs::File::open(unsorted).with_context(|| format!("cannot read {}", unsorted.display()))?;
    let lines = io::BufReader::new(file).lines().map_while(Result::ok).map(Line);
    // About 300 bytes a line.
    let segment = (budget / 300).max(1024) as usize;
    let sorter = ExternalSorter::new().with_segment_size(segment).with_sort_dir(scratch.to_path_buf());
    for line in sorter.sort(lines).with_context(|| format!("cannot sort in {}", scratch.display()))? {
        let line = line.with_context(|| format!("cannot read sorted lines in {}", scratch.display()))?;
        out.write_all(line.0.as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_keys_as_replay_tools_make_them() {
        for (url, key) in [
            ("http://www.Example.com/A?b=1&a=2", "com,example)/a?a=2&b=1"),
            ("https://example.com", "com,example)/"),
            ("http://example.com:80/x#frag", "com,example)/x"),
            ("http://user@sub.example.org:8080/", "org,example,sub:8080)/"),
            ("http://www2.example.com/", "com,example)/"),
            ("http://www.com/", "com)/"),
            ("ftp://example.com/a", "com,example)/a"),
            ("http://example.com/a?", "com,example)/a"),
            ("http://example.com/A%20B", "com,example)/a%20b"),
            ("http://www.example.com./", "com,example)/"),
            ("http://Example.com:443/", "com,example:443)/"),
            ("https://example.com:443/", "com,example)/"),
        ] {
            assert_eq!(surt(url), key, "{url}");
        }
        assert_eq!(timestamp("2024-01-02T03:04:05.123Z"), "20240102030405");
        assert_eq!(timestamp("2024-01-02"), "20240102000000");
    }

    #[test]
    fn lines_name_the_member_and_sort_by_key() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\nx".to_vec();
        let head = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://b.org/\r\n\
            WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Payload-Digest: sha1:ABC\r\nContent-Length: 1\r\n\r\n"
            .to_vec();
        let rec = Stored { head, block, ..Stored::default() };
        let l = line(&rec, "a.warc.gz", 10, 20).unwrap();
        assert_eq!(
            l,
            "org,b)/ 20240102030405 {\"url\":\"http://b.org/\",\"mime\":\"text/html\",\"status\":\"200\",\
             \"digest\":\"ABC\",\"length\":\"20\",\"offset\":\"10\",\"filename\":\"a.warc.gz\"}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines");
        std::fs::write(&path, "b 2\na 3\nb 1\n").unwrap();
        let mut out = Vec::new();
        sort(&path, 1, dir.path(), &mut out).unwrap();
        assert_eq!(out, b"a 3\nb 1\nb 2\n");
    }
}
