//! What `dedup` writes for each kept document in each format (where it
//! goes is [`crate::store::destination`]).

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Serialize;

/// One line of `urls`: the URL as recorded, with a line feed or carriage
/// return in it (a JSONL url field may hold one) percent-encoded, as a
/// browser sends it, so that a URL stays one line.
pub(crate) fn url_line(url: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(url.len() + 1);
    for &b in url.as_bytes() {
        match b {
            b'\n' => line.extend_from_slice(b"%0A"),
            b'\r' => line.extend_from_slice(b"%0D"),
            b => line.push(b),
        }
    }
    line.push(b'\n');
    line
}

/// One line of `jsonl`, its keys in this order.
#[derive(Serialize)]
struct JsonLine<'a> {
    doc_id: u32,
    url: &'a str,
    source: &'a str,
    /// `None` (null) for a document whose record holds no page of its own.
    text: Option<&'a str>,
}

pub(crate) fn json_line(doc_id: u32, url: &str, source: &str, text: Option<&str>) -> Vec<u8> {
    let mut line = serde_json::to_vec(&JsonLine { doc_id, url, source, text })
        .expect("a JSON object of strings and a number always encodes");
    line.push(b'\n');
    line
}

/// One record of `warc`: the record's header and block as they are in the
/// input, the CRLF CRLF that ends a record in the standard, in a gzip
/// member of its own, as the standard recommends and archives index
/// (each record's member offset in a CDX). The member's header has no
/// name and no time, so the same records give the same bytes.
pub(crate) fn warc_member(record: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::with_capacity(record.len() / 3 + 64), Compression::default());
    gz.write_all(record).and_then(|()| gz.write_all(b"\r\n\r\n")).expect("writing to memory does not fail");
    gz.finish().expect("writing to memory does not fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn lines_and_members() {
        assert_eq!(url_line("http://a/x\ny"), b"http://a/x%0Ay\n");
        let line = json_line(7, "http://a/", "in.warc:0", Some("a \"b\"\nc"));
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"doc_id\":7,\"url\":\"http://a/\",\"source\":\"in.warc:0\",\"text\":\"a \\\"b\\\"\\nc\"}\n"
        );
        assert!(json_line(1, "", "-:0", None).ends_with(b"\"text\":null}\n"));
        let member = warc_member(b"WARC/1.1\r\n\r\n");
        assert_eq!(member, warc_member(b"WARC/1.1\r\n\r\n"), "the same bytes every time");
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&member[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, b"WARC/1.1\r\n\r\n\r\n\r\n");
    }
}
