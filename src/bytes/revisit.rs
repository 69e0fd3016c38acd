//! The records `dedup --format warc-revisits` writes in place of, or
//! beside, a duplicate capture: a WARC revisit record of profile
//! `identical-payload-digest` for an exact copy whose payload is its kept
//! capture's, byte for byte, and a metadata record naming the kept page
//! for a near-replica (the standard has no profile for a page that is
//! only similar, so its response stays whole).
//!
//! A revisit is the duplicate's own record with three changes, so that
//! expanding it again gives the record back: `WARC-Type` says `revisit`,
//! the block is the HTTP response header alone (`Content-Length` and a
//! `WARC-Block-Digest`, when there was one, follow it), and four fields
//! are added at the end of the header (`WARC-Profile`, `WARC-Refers-To`,
//! `WARC-Refers-To-Target-URI`, `WARC-Refers-To-Date`, and a
//! `WARC-Payload-Digest` when the record had none). Every other field,
//! its record ID among them, is kept as written: the capture is the same
//! event, now stored by reference.

use xxhash_rust::xxh3::xxh3_128;

use crate::bytes::read::digest;
use crate::bytes::read::stored::{self, Stored};
use crate::bytes::read::warc::strip_angle_brackets;

/// What a revisit names: the kept capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Original {
    pub record_id: String,
    pub uri: String,
    pub date: String,
    /// xxh3-128 of its payload as stored (the block after the HTTP header).
    pub payload: u128,
    pub length: u64,
}

/// The payload of a loaded HTTP response record (the block after its HTTP
/// header), or `None` for any other record.
pub(crate) fn payload(rec: &Stored) -> Option<&[u8]> {
    if !rec.field("WARC-Type")?.eq_ignore_ascii_case("response") {
        return None;
    }
    let start = stored::http_head(&rec.block)?.body_start;
    rec.block.get(start..)
}

/// A loaded response record as the capture others revisit.
pub(crate) fn original(rec: &Stored) -> Option<Original> {
    let payload = payload(rec)?;
    Some(Original {
        record_id: rec.field("WARC-Record-ID")?,
        uri: target_uri(rec)?,
        date: rec.field("WARC-Date")?,
        payload: xxh3_128(payload),
        length: payload.len() as u64,
    })
}

/// `WARC-Target-URI` without the angle brackets some writers add.
pub(crate) fn target_uri(rec: &Stored) -> Option<String> {
    Some(strip_angle_brackets(&rec.field("WARC-Target-URI")?).to_string())
}

/// The revisit profile's URI for the record's WARC version.
fn profile(head: &[u8]) -> &'static str {
    if head.starts_with(b"WARC/1.0") || head.starts_with(b"WARC/0.") {
        "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
    } else {
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    }
}

/// The revisit record that replaces the loaded response `rec`, whose
/// payload is `of`'s: its header and block ([`bytes`] writes it).
pub(crate) fn revisit(rec: &Stored, of: &Original) -> Stored {
    let http_len = stored::http_head(&rec.block).expect("a response with an HTTP header").body_start;
    let block = &rec.block[..http_len];
    let mut added = vec![
        ("WARC-Profile", profile(&rec.head).to_string()),
        ("WARC-Refers-To", of.record_id.clone()),
        ("WARC-Refers-To-Target-URI", of.uri.clone()),
        ("WARC-Refers-To-Date", of.date.clone()),
    ];
    if rec.field("WARC-Payload-Digest").is_none() {
        let payload = &rec.block[http_len..];
        added.push(("WARC-Payload-Digest", digest::sha1_value(payload)));
    }
    let head = edit_head(
        &rec.head,
        block,
        &|_, name| {
            if name.eq_ignore_ascii_case("WARC-Type") { Edit::Set("revisit".into()) } else { Edit::Keep }
        },
        &added,
    );
    Stored { offset: rec.offset, head, block: block.to_vec(), ..Stored::default() }
}

/// A record's bytes: header, block and record end.
pub(crate) fn bytes(rec: &Stored) -> Vec<u8> {
    [&rec.head[..], &rec.block, b"\r\n\r\n"].concat()
}

/// The metadata record written after the near-replica `rec` (kept whole),
/// naming the kept page `of` that stands for it.
pub(crate) fn near_note(rec: &Stored, of: &Original) -> Vec<u8> {
    let uri = target_uri(rec).unwrap_or_default();
    let date = rec.field("WARC-Date").unwrap_or_else(|| of.date.clone());
    let concurrent = rec.field("WARC-Record-ID");
    let block = format!("{NOTE_START}{}\r\nnear-replica-date: {}\r\n", of.uri, of.date);
    let version = rec.head.split(|&b| b == b'\n').next().map(stored::text).unwrap_or_default();
    let mut head = format!(
        "{}\r\nWARC-Type: metadata\r\nWARC-Record-ID: {}\r\nWARC-Date: {date}\r\nWARC-Target-URI: {uri}\r\n",
        version.trim_end(),
        note_id(concurrent.as_deref(), &uri, &of.record_id)
    );
    if let Some(id) = concurrent {
        head.push_str(&format!("WARC-Concurrent-To: {id}\r\n"));
    }
    head.push_str(&format!(
        "WARC-Refers-To: {}\r\nWARC-Refers-To-Target-URI: {}\r\nWARC-Refers-To-Date: {}\r\n\
         Content-Type: application/warc-fields\r\nContent-Length: {}\r\n\r\n",
        of.record_id,
        of.uri,
        of.date,
        block.len()
    ));
    [head.as_bytes(), block.as_bytes(), b"\r\n\r\n"].concat()
}

/// How a near-replica note's block begins.
const NOTE_START: &str = "near-replica-of: ";

/// The record ID of the note on the record `concurrent` of `uri`, naming
/// the record `of`: hashed from them, so that the same analysis writes the
/// same IDs, and a note is known by its ID.
fn note_id(concurrent: Option<&str>, uri: &str, of: &str) -> String {
    let seed = format!("overlap near-replica note\0{}\0{uri}\0{of}", concurrent.unwrap_or(""));
    format!("<urn:uuid:{}>", uuid(xxh3_128(seed.as_bytes())))
}

/// Whether `rec` is a note [`near_note`] wrote: a `metadata` record of
/// `warc-fields` beginning with `near-replica-of`, whose record ID is the
/// one its fields hash to (a crawler's metadata record never has it).
pub(crate) fn is_near_note(rec: &Stored) -> bool {
    let field = |name: &str| rec.field(name).unwrap_or_default();
    field("WARC-Type").eq_ignore_ascii_case("metadata")
        && field("Content-Type").eq_ignore_ascii_case("application/warc-fields")
        && rec.block.starts_with(NOTE_START.as_bytes())
        && rec.field("WARC-Record-ID").is_some_and(|id| {
            let concurrent = rec.field("WARC-Concurrent-To");
            id == note_id(
                concurrent.as_deref(),
                &target_uri(rec).unwrap_or_default(),
                &field("WARC-Refers-To"),
            )
        })
}

/// A name-based UUID (version 8, RFC 9562) from 128 hash bits, so that the
/// same analysis writes the same record IDs.
fn uuid(bits: u128) -> String {
    let b = bits & !(0xf << 76) & !(0b11 << 62) | (0x8 << 76) | (0b10 << 62);
    let h = format!("{b:032x}");
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// What [`edit_head`] does with a field.
enum Edit {
    Keep,
    Set(String),
    Drop,
}

/// The names of a record header's fields, in order (continuation lines
/// are part of the field before).
fn field_names(head: &[u8]) -> Vec<String> {
    head.split(|&b| b == b'\n')
        .skip(1)
        .filter(|l| !l.is_empty() && l[0] != b' ' && l[0] != b'\t' && l != b"\r")
        .map(|l| stored::text(l.split(|&b| b == b':').next().unwrap_or_default()).trim_end().to_string())
        .collect()
}

/// `head` with `Content-Length` set to `block`'s, a `WARC-Block-Digest`
/// recomputed for it, each other field edited as `edit` says (from its
/// index among the fields and its name), and `added` appended before the
/// blank line. Lines keep their own ends; added ones end in CRLF.
fn edit_head(
    head: &[u8],
    block: &[u8],
    edit: &dyn Fn(usize, &str) -> Edit,
    added: &[(&str, String)],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + 256);
    let mut lines = head.split_inclusive(|&b| b == b'\n').peekable();
    let mut skipping = false;
    let mut first = true;
    let mut index = 0;
    while let Some(line) = lines.next() {
        let end = if line.ends_with(b"\r\n") { &b"\r\n"[..] } else { &b"\n"[..] };
        let content = &line[..line.len() - end.len().min(line.len())];
        if first {
            first = false;
            out.extend_from_slice(line);
            continue;
        }
        if content.is_empty() && lines.peek().is_none() {
            for (name, value) in added {
                out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            }
            out.extend_from_slice(line);
            break;
        }
        if content.first().is_some_and(|&b| b == b' ' || b == b'\t') {
            // A continuation of the field before.
            if !skipping {
                out.extend_from_slice(line);
            }
            continue;
        }
        let name = content.split(|&b| b == b':').next().unwrap_or_default();
        let name_text = stored::text(name);
        let name_text = name_text.trim_end();
        let what = if name_text.eq_ignore_ascii_case("Content-Length") {
            Edit::Set(block.len().to_string())
        } else if name_text.eq_ignore_ascii_case("WARC-Block-Digest") {
            Edit::Set(digest::sha1_value(block))
        } else {
            edit(index, name_text)
        };
        index += 1;
        skipping = !matches!(what, Edit::Keep);
        match what {
            Edit::Keep => out.extend_from_slice(line),
            Edit::Set(value) => {
                out.extend_from_slice(format!("{name_text}: {value}").as_bytes());
                out.extend_from_slice(end);
            }
            Edit::Drop => {}
        }
    }
    out
}

/// The fields a revisit adds, which expanding it removes.
const REVISIT_FIELDS: [&str; 4] =
    ["WARC-Profile", "WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date"];

/// Whether a loaded record is a revisit of profile
/// `identical-payload-digest` (any WARC version's URI for it).
pub(crate) fn is_identical_payload_revisit(rec: &Stored) -> bool {
    rec.field("WARC-Type").is_some_and(|t| t.eq_ignore_ascii_case("revisit"))
        && rec.field("WARC-Profile").is_some_and(|p| p.ends_with("/revisit/identical-payload-digest"))
}

/// The response a revisit stands for, rebuilt from the capture it names
/// (`original`, loaded): the revisit's header as a response's (the fields
/// a revisit adds removed, and a `WARC-Payload-Digest` right after them
/// at the end, which `dedup` adds to a record that had none), and as
/// block the revisit's HTTP header with the original's payload, or the
/// original's whole block when the revisit kept no HTTP header. Of a
/// revisit `dedup` wrote, this is the record it replaced, byte for byte
/// (a `WARC-Block-Digest` in `sha1:` base32, as writers write it).
pub(crate) fn expanded(rev: &Stored, original: &Stored) -> Option<Stored> {
    let start = stored::http_head(&original.block)?.body_start;
    let block = match stored::http_head(&rev.block) {
        Some(http) => [&rev.block[..http.body_start], &original.block[start..]].concat(),
        None => original.block.clone(),
    };
    let names = field_names(&rev.head);
    let last_added = names.iter().rposition(|n| n.eq_ignore_ascii_case("WARC-Refers-To-Date"));
    let head = edit_head(
        &rev.head,
        &block,
        &|index, name| {
            if name.eq_ignore_ascii_case("WARC-Type") {
                Edit::Set("response".into())
            } else if REVISIT_FIELDS.iter().any(|f| f.eq_ignore_ascii_case(name))
                || (name.eq_ignore_ascii_case("WARC-Payload-Digest")
                    && last_added.is_some_and(|l| l + 1 == index)
                    && index + 1 == names.len())
            {
                Edit::Drop
            } else {
                Edit::Keep
            }
        },
        &[],
    );
    Some(Stored { offset: rev.offset, head, block, ..Stored::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(extra: &str, body: &str) -> Stored {
        let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{body}");
        let head = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n\
             WARC-Target-URI: <http://b/>\r\n{extra}Content-Length: {}\r\n\r\n",
            block.len()
        );
        Stored { head: head.into_bytes(), block: block.into_bytes(), ..Stored::default() }
    }

    #[test]
    fn a_revisit_keeps_the_header_and_names_the_original() {
        let rec = response("WARC-Block-Digest: sha1:X\r\n X-Continued\r\n", "<p>same</p>");
        let of = Original {
            record_id: "<urn:uuid:0>".into(),
            uri: "http://a/".into(),
            date: "2024-01-01T00:00:00Z".into(),
            payload: 0,
            length: 11,
        };
        let text = String::from_utf8(bytes(&revisit(&rec, &of))).unwrap();
        let block = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
        assert_eq!(
            text,
            format!(
                "WARC/1.0\r\nWARC-Type: revisit\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n\
                 WARC-Target-URI: <http://b/>\r\nWARC-Block-Digest: {}\r\nContent-Length: {}\r\n\
                 WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest\r\n\
                 WARC-Refers-To: <urn:uuid:0>\r\nWARC-Refers-To-Target-URI: http://a/\r\n\
                 WARC-Refers-To-Date: 2024-01-01T00:00:00Z\r\nWARC-Payload-Digest: {}\r\n\r\n{block}\r\n\r\n",
                digest::sha1_value(block.as_bytes()),
                block.len(),
                digest::sha1_value(b"<p>same</p>")
            )
        );
        assert_eq!(payload(&rec), Some(&b"<p>same</p>"[..]));
        assert_eq!(original(&rec).unwrap().uri, "http://b/");
    }

    #[test]
    fn a_near_note_is_a_metadata_record_with_a_stable_id() {
        let rec = response("", "x");
        let of = Original {
            record_id: "<urn:uuid:0>".into(),
            uri: "http://a/".into(),
            date: "D".into(),
            payload: 0,
            length: 1,
        };
        let note = String::from_utf8(near_note(&rec, &of)).unwrap();
        assert_eq!(note, String::from_utf8(near_note(&rec, &of)).unwrap());
        assert!(note.starts_with("WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Record-ID: <urn:uuid:"));
        assert!(note.contains("WARC-Concurrent-To: <urn:uuid:1>\r\n"));
        assert!(note.ends_with("\r\n\r\nnear-replica-of: http://a/\r\nnear-replica-date: D\r\n\r\n\r\n"));
        let id = note.split("uuid:").nth(1).unwrap();
        assert_eq!(&id[14..15], "8", "version 8: {id}");
        // Known again by its ID; a record of the same form with another ID
        // (a crawler's) is not one.
        let stored = |text: &str| {
            let (head, block) = text.split_once("\r\n\r\n").unwrap();
            Stored {
                head: format!("{head}\r\n\r\n").into_bytes(),
                block: block.trim_end_matches("\r\n\r\n").as_bytes().to_vec(),
                ..Stored::default()
            }
        };
        assert!(is_near_note(&stored(&note)));
        let other = note.replacen(&id[..36], "00000000-0000-8000-8000-000000000000", 1);
        assert!(!is_near_note(&stored(&other)), "{other}");
        assert!(!is_near_note(&rec));
    }

    #[test]
    fn expanding_a_revisit_gives_the_record_back() {
        for extra in
            ["WARC-Payload-Digest: sha1:KEEP\r\nWARC-Block-Digest: x\r\n", "", "X-Folded: a\r\n  b\r\n"]
        {
            let rec = response(extra, "<p>same</p>");
            let kept = response("", "<p>same</p>");
            let of = original(&kept).unwrap();
            let rev = revisit(&rec, &of);
            assert!(is_identical_payload_revisit(&rev));
            let back = expanded(&rev, &kept).unwrap();
            let want_head = String::from_utf8(rec.head.clone()).unwrap();
            let want_head = want_head.replace(
                "WARC-Block-Digest: x",
                &format!("WARC-Block-Digest: {}", digest::sha1_value(&rec.block)),
            );
            assert_eq!(String::from_utf8(back.head).unwrap(), want_head, "{extra:?}");
            assert_eq!(back.block, rec.block);
        }
    }
}
