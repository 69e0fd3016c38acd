//! JSONL: one JSON object per line (plain or gzip).
//!
//! # Grammar as accepted
//!
//! ```text
//! file  = *line
//! line  = *WS [object *WS] ( LF / CRLF / end of input )   ; WS: space, tab, CR
//! ```
//!
//! A line of whitespace only is ignored. Every other line must be one JSON
//! object (nothing after it but whitespace) with a string in the text field
//! (default `text`); the URL field (default `url`) must be a string, `null`
//! or absent (then the URL is empty). Other fields are ignored without being
//! built. When a key appears twice, the last value counts. A UTF-8 byte order
//! mark at the start of the input is ignored.
//!
//! Anything else is a [`SkipReason::BadJson`] skip at the line's offset,
//! with serde_json's message (or which field is wrong) as its detail. A line
//! longer than `max_record_bytes` is read past and skipped with
//! [`SkipReason::RecordTooLarge`]. Skips also carry their line number (of
//! the decompressed text, for gzip; lost with the lines of a damaged gzip
//! member), which is how people find a line, and the detail places
//! serde_json's error by its column in the line. Documents get the text as
//! their body (UTF-8) and the content type `text/plain`.

use std::fmt;
use std::io;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::gz::Source;
use super::records::{Core, Format};
use super::{Item, RawDoc, Skip, SkipReason};

/// Reads JSONL documents from a [`Source`].
pub(crate) struct JsonlReader {
    core: Core,
    url_field: String,
    text_field: String,
    max_record_bytes: u64,
    /// The current line, reused.
    line: Vec<u8>,
    /// Lines read so far (blank ones too), which numbers the skips; `None`
    /// once damaged gzip data has lost lines, whose count is not known.
    lines: Option<u64>,
}

impl JsonlReader {
    /// A reader of `src` that takes URLs and texts from the named fields.
    pub(crate) fn new(src: Source, url_field: &str, text_field: &str, max_record_bytes: u64) -> JsonlReader {
        JsonlReader {
            core: Core::new(src),
            url_field: url_field.to_string(),
            text_field: text_field.to_string(),
            max_record_bytes,
            line: Vec::new(),
            lines: Some(0),
        }
    }
}

impl Format for JsonlReader {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    /// Reads one line.
    fn step(&mut self) -> io::Result<()> {
        // Looking at the data first makes the member (if any) that starts
        // here known.
        self.core.src.fill_buf()?;
        let start = self.core.src.start_here();
        self.line.clear();
        let keep = usize::try_from(self.max_record_bytes).unwrap_or(usize::MAX).saturating_add(2);
        let line = self.core.src.read_line(&mut self.line, keep)?;
        if line.len == 0 {
            // At the end of the data; after a break, lines were lost.
            self.lines = None;
            self.core.end();
            return Ok(());
        }
        self.lines = self.lines.map(|n| n + 1);
        let damage = if !line.complete && self.core.src.at_break() {
            self.core.src.take_break()
        } else {
            self.core.src.record_damage(start)?
        };
        if let Some(brk) = damage {
            self.lines = None;
            self.core.push_break(Some(start), brk);
            return Ok(());
        }
        let text = trim_line_end(&self.line);
        if text.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            return Ok(());
        }
        let skip =
            |reason, detail| Item::Skip(Skip { offset: start.offset, line: self.lines, reason, detail });
        if text.len() as u64 > self.max_record_bytes {
            let detail = format!("line over the limit of {} bytes", self.max_record_bytes);
            self.core.push(skip(SkipReason::RecordTooLarge, detail));
            return Ok(());
        }
        let item = match parse_line(text, &self.url_field, &self.text_field) {
            Ok((url, text)) => Item::Doc(RawDoc {
                offset: start.offset,
                url,
                content_type: Some("text/plain".to_string()),
                charset: None,
                body: text.into_bytes().into(),
                ..RawDoc::default()
            }),
            Err(detail) => skip(SkipReason::BadJson, detail),
        };
        self.core.push(item);
        Ok(())
    }
}

/// Checks the first record of a JSONL input in `head`, its first bytes
/// (`whole` when they are all of it): a record that is a JSON object
/// without `text_field` at all says the input keeps its text under another
/// name, and every record would be skipped, one warning each; the message
/// names the field, those the record has (in name order), and the flag. A first line that
/// is not JSON, too long to be in `head`, or has the field (whatever its
/// value) passes: the records are then read, and skipped one by one.
pub(crate) fn check_first_record(head: &[u8], whole: bool, text_field: &str) -> Result<(), String> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let mut lines = head.split_inclusive(|&b| b == b'\n');
    let Some(line) = lines.find(|l| !l.iter().all(u8::is_ascii_whitespace)) else { return Ok(()) };
    if !line.ends_with(b"\n") && !whole {
        return Ok(());
    }
    let Ok(serde_json::Value::Object(fields)) =
        serde_json::from_slice::<serde_json::Value>(trim_line_end(line))
    else {
        return Ok(());
    };
    if fields.contains_key(text_field) {
        return Ok(());
    }
    const NAMED: usize = 12;
    let mut names: Vec<String> = fields.keys().take(NAMED).map(|k| format!("{k:?}")).collect();
    if fields.len() > NAMED {
        names.push(format!("and {} more", fields.len() - NAMED));
    }
    let has = if names.is_empty() { "none".to_string() } else { names.join(", ") };
    Err(format!(
        "its first record has no field {text_field:?} (its fields: {has}): name the field that holds the text \
         with --text-field (and the URL's with --url-field)"
    ))
}

/// `line` without its `\n` or `\r\n`.
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The URL (empty when absent) and text of one JSON line.
fn parse_line(line: &[u8], url_field: &str, text_field: &str) -> Result<(String, String), String> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let fields = Fields { url_field, text_field }.deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(json_error)?;
    let text = fields.text.ok_or_else(|| format!("no string field {text_field:?}"))?;
    Ok((fields.url.unwrap_or_default(), text))
}

/// serde_json's message for an error in one line, its place given by the
/// column alone (in bytes, as serde_json counts): the line it counts is
/// always 1, the one line it was given, while the skip knows the line in
/// the file. An error in what starts the line, which serde_json places in
/// column 0, is in column 1.
fn json_error(e: serde_json::Error) -> String {
    let message = e.to_string();
    match message.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())) {
        Some(what) => format!("{what} at column {}", e.column().max(1)),
        None => message,
    }
}

/// Deserializes an object, keeping only the two fields.
#[derive(Clone, Copy)]
struct Fields<'a> {
    url_field: &'a str,
    text_field: &'a str,
}

#[derive(Default)]
struct Found {
    url: Option<String>,
    text: Option<String>,
}

impl<'de> DeserializeSeed<'de> for Fields<'_> {
    type Value = Found;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Found, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Fields<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Found::default();
        while let Some(key) = map.next_key_seed(Key(self))? {
            let (is_url, is_text) = key;
            if !is_url && !is_text {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let name = if is_text { self.text_field } else { self.url_field };
            let value = match map.next_value::<Value>()? {
                Value::String(s) => Some(s),
                Value::Null if !is_text => None,
                other => {
                    return Err(de::Error::custom(format!(
                        "field {name:?} is {}, not a string",
                        kind(&other)
                    )));
                }
            };
            if is_url {
                found.url.clone_from(&value);
            }
            if is_text {
                found.text = value;
            }
        }
        Ok(found)
    }
}

/// A key, as (is the URL field, is the text field), compared without
/// allocating when it has no escapes.
struct Key<'a>(Fields<'a>);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = (bool, bool);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(bool, bool), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = (bool, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(bool, bool), E> {
        Ok((key == self.0.url_field, key == self.0.text_field))
    }
}

/// "a number", "an array"...: what a JSON value is, for details.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_record_without_the_text_field_names_the_fields_it_has() {
        let head = b"\n{\"id\": 1, \"content\": \"a\", \"metadata\": {\"url\": \"u\"}}\n{\"id\": 2}\n";
        let err = check_first_record(head, false, "text").unwrap_err();
        assert!(err.contains(r#"no field "text" (its fields: "content", "id", "metadata")"#), "{err}");
        assert!(err.contains("--text-field"));
        assert_eq!(check_first_record(head, false, "content"), Ok(()));
        // The field with another value, a line that is not JSON, one cut
        // off by the end of the head, or no record: read on.
        for (head, whole) in [
            (&b"{\"text\": null}\n"[..], false),
            (b"not json\n", false),
            (b"{\"id\": 1, \"con", false),
            (b"  \n", true),
        ] {
            assert_eq!(
                check_first_record(head, whole, "text"),
                Ok(()),
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
        // A whole input of one record without a line end is checked.
        assert!(check_first_record(b"{\"id\": 1}", true, "text").is_err());
    }
    use crate::read::testing::{doc, drain, skipped, source};
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn read(data: &[u8], url: &str, text: &str) -> Vec<Item> {
        read_max(data, url, text, 1 << 20)
    }

    fn read_max(data: &[u8], url: &str, text: &str, max: u64) -> Vec<Item> {
        let mut r = JsonlReader::new(source(data.to_vec()), url, text, max);
        drain(&mut r, 1000)
    }

    #[test]
    fn good_lines_become_documents_at_line_offsets() {
        let data = b"{\"url\": \"http://a/\", \"text\": \"one\\ntwo\", \"n\": [1, {\"x\": 2}]}\n\
            \n   \r\n{\"text\": \"no url\"}\r\n{\"url\": null, \"text\": \"\\u00e9\"}";
        let items = read(data, "url", "text");
        assert_eq!(items.len(), 3);
        let a = doc(&items[0]);
        assert_eq!((a.offset, a.url.as_str(), a.body.as_slice()), (0, "http://a/", &b"one\ntwo"[..]));
        assert_eq!(a.content_type.as_deref(), Some("text/plain"));
        assert_eq!(doc(&items[1]).offset, 67);
        assert_eq!(doc(&items[1]).url, "");
        assert_eq!(doc(&items[2]).body, "é".as_bytes());
    }

    #[test]
    fn bad_lines_are_skipped_with_their_offsets() {
        let lines = [
            "{\"url\": \"x\"}",
            "not json",
            "[1, 2]",
            "\"text\"",
            "{\"text\": 5}",
            "{\"text\": null}",
            "{\"text\": \"a\"} trailing",
            "{\"url\": 7, \"text\": \"a\"}",
            "{\"text\": \"cut off",
        ];
        let data = lines.join("\n");
        let items = read(data.as_bytes(), "url", "text");
        assert_eq!(items.len(), lines.len());
        let mut offset = 0;
        for (item, line) in items.iter().zip(lines) {
            let s = skipped(item);
            assert_eq!(s.reason, SkipReason::BadJson, "{line}");
            assert_eq!(s.offset, offset, "{line}");
            assert!(!s.detail.is_empty());
            offset += line.len() as u64 + 1;
        }
        assert_eq!(skipped(&items[0]).detail, "no string field \"text\"");
        assert!(skipped(&items[4]).detail.contains("\"text\" is a number"), "{}", skipped(&items[4]).detail);
        // Each names its line, and serde_json's place in it by the column
        // alone: its "line 1" is the one line it was given.
        for (n, item) in items.iter().enumerate() {
            assert_eq!(skipped(item).line, Some(n as u64 + 1));
            assert!(!skipped(item).detail.contains("line"), "{}", skipped(item).detail);
        }
        assert_eq!(skipped(&items[6]).detail, "trailing characters at column 15");
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn skips_name_their_line_plain_or_gzip_until_damage_loses_lines() {
        let text = b"\xef\xbb\xbf{\"text\": \"a\"}\n\n  \r\n  {\"text\": }\r\n{\"text\": \"b\"}\n[1]";
        let lines = |items: &[Item]| -> Vec<(Option<u64>, String)> {
            let skips = items.iter().filter(|i| matches!(i, Item::Skip(_)));
            skips.map(|i| (skipped(i).line, skipped(i).detail)).collect()
        };
        let want = [
            (Some(4), "expected value at column 12".to_string()),
            (Some(6), "invalid type: sequence, expected a JSON object at column 1".to_string()),
        ];
        assert_eq!(lines(&read(text, "url", "text")), want);
        assert_eq!(lines(&read(&gzip(text), "url", "text")), want);
        // One member per line, as a per-record file has them: the lines
        // of the decompressed text all the same.
        let members: Vec<u8> = text.split_inclusive(|&b| b == b'\n').flat_map(gzip).collect();
        assert_eq!(lines(&read(&members, "url", "text")), want);
        // A damaged member loses lines no one can count: later skips have
        // only their offset.
        let mut bad = gzip(&b"{\"text\": \"lost\"}\n".repeat(20));
        let n = bad.len();
        bad[n - 6] ^= 0xff;
        let data = [gzip(b"{}\n"), bad, gzip(b"{}\n")].concat();
        let got = lines(&read(&data, "url", "text"));
        assert_eq!(got.first().map(|g| g.0), Some(Some(1)), "{got:?}");
        assert_eq!(got.last().map(|g| g.0), Some(None), "{got:?}");
        assert_eq!(got.len(), 3, "{got:?}");
    }

    #[test]
    fn field_names_are_configurable() {
        let data =
            b"{\"address\": \"http://a/\", \"body\": \"real\", \"text\": \"decoy\", \"url\": \"decoy\"}\n";
        let items = read(data, "address", "body");
        assert_eq!(doc(&items[0]).url, "http://a/");
        assert_eq!(doc(&items[0]).body, b"real");
        // Escaped key names match too; the same field may be both.
        let items = read(b"{\"b\\u006fdy\": \"t\"}\n", "body", "body");
        assert_eq!((doc(&items[0]).url.as_str(), doc(&items[0]).body.as_slice()), ("t", &b"t"[..]));
    }

    #[test]
    fn gzip_jsonl_gives_decompressed_line_offsets() {
        let plain = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n";
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(plain).unwrap();
        let items = read(&enc.finish().unwrap(), "url", "text");
        assert_eq!(items.iter().map(|i| doc(i).offset).collect::<Vec<_>>(), [0, 14]);
    }

    #[test]
    fn long_lines_are_skipped_and_bom_ignored() {
        let data = format!("\u{feff}{{\"text\": \"{}\"}}\n{{\"text\": \"ok\"}}\n", "x".repeat(100));
        let items = read_max(data.as_bytes(), "url", "text", 50);
        assert_eq!(skipped(&items[0]).reason, SkipReason::RecordTooLarge);
        assert_eq!(skipped(&items[0]).offset, 3);
        assert_eq!(doc(&items[1]).body, b"ok");
    }

    #[test]
    fn corrupt_gzip_member_drops_its_lines_and_reading_goes_on() {
        let gz = |s: &str| {
            let mut enc = GzEncoder::new(Vec::new(), Compression::default());
            enc.write_all(s.as_bytes()).unwrap();
            enc.finish().unwrap()
        };
        let a = gz("{\"text\": \"a\"}\n");
        let mut b =
            gz(&"{\"text\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}\n".repeat(20));
        let n = b.len();
        b[n - 6] ^= 0xff;
        let c = gz("{\"text\": \"c\"}\n");
        let items = read(&[a.clone(), b, c].concat(), "url", "text");
        let last = doc(items.last().unwrap());
        assert_eq!(last.body, b"c");
        assert!(items.iter().any(|i| matches!(i, Item::Skip(s) if s.reason == SkipReason::CorruptGzip)));
    }

    #[test]
    fn empty_input_gives_nothing() {
        assert!(read(b"", "url", "text").is_empty());
        assert!(read(b"\n\n", "url", "text").is_empty());
    }

    proptest::proptest! {
        /// A damaged line loses nothing but itself.
        #[test]
        fn a_damaged_line_loses_only_itself(
            n in 2usize..8,
            victim in 0usize..8,
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..60),
        ) {
            let victim = victim % n;
            let line = |i: usize| format!("{{\"url\": \"http://j/{i}\", \"text\": \"text {i}\"}}\n").into_bytes();
            let junk: Vec<u8> = junk.into_iter().filter(|&b| b != b'\n').chain([b'\n']).collect();
            let lines: Vec<Vec<u8>> = (0..n).map(|i| if i == victim { junk.clone() } else { line(i) }).collect();
            let got = crate::read::testing::documents(&read(&lines.concat(), "url", "text"));
            let mut at = 0u64;
            for (i, l) in lines.iter().enumerate() {
                if i != victim {
                    let want = (at, format!("http://j/{i}"), format!("text {i}").into_bytes());
                    proptest::prop_assert!(got.contains(&want), "line {} lost", i);
                }
                at += l.len() as u64;
            }
        }
    }
}
