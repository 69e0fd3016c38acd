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
//! # Field names
//!
//! A field name with dots is a path into nested objects: `metadata.url` is
//! the field `url` of the object in the field `metadata`, where datatrove
//! and dolma keep the URL. A key that is itself the whole name, dots and all
//! (a top-level key `"metadata.url"`), names the field too, and wins over a
//! path through objects: the match through the fewest objects counts. So a
//! name that reached a literal key before paths existed reaches it still,
//! and a dotted name reaches a nested field only where no key spells it
//! whole. Splits may mix (`a.b.c` finds `{"a.b": {"c": ..}}`). A path
//! through a value that is not an object (`{"metadata": "x"}`) finds no
//! field. Of an object given twice, the last one that has the field counts. Only the objects on a path are read key by key; every other value
//! is skipped over, unbuilt.
//!
//! Anything else is a [`SkipReason::BadJson`] skip at the line's offset,
//! with serde_json's message (or which field is wrong) as its detail. A line
//! longer than `max_record_bytes` is read past and skipped with
//! [`SkipReason::RecordTooLarge`]. Skips also carry their line number (of
//! the decompressed text, for gzip; lost with the lines of a damaged gzip
//! member), which is how people find a line, and the detail places
//! serde_json's error by its column in the line. Documents get the text as
//! their body (UTF-8) and the content type `text/plain`.
//!
//! An input that gave documents none of whose records has the URL field
//! (every URL empty because the field is absent, not `null`) ends with an
//! [`Item::Note`] saying so, naming the fields of its first record.

use std::fmt;
use std::io;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::gz::Source;
use super::records::{Core, Format};
use super::{Item, Note, RawDoc, Skip, SkipReason};

/// Reads JSONL documents from a [`Source`].
pub struct JsonlReader {
    core: Core,
    url_field: String,
    text_field: String,
    max_record_bytes: u64,
    /// The current line, reused.
    line: Vec<u8>,
    /// Lines read so far (blank ones too), which numbers the skips; `None`
    /// once damaged gzip data has lost lines, whose count is not known.
    lines: Option<u64>,
    /// Where the last record (a line not blank) starts.
    last_start: u64,
    /// Whether a record read so far became a document.
    documents: bool,
    /// Whether a record read so far has the URL field, whatever its value.
    url_seen: bool,
    /// The fields of the first record that is a JSON object, as the note
    /// names them, when that record has no URL field.
    first_fields: Option<String>,
}

impl JsonlReader {
    /// A reader of `src` that takes URLs and texts from the named fields
    /// (dotted names reach into objects, see the module doc).
    pub fn new(src: Source, url_field: &str, text_field: &str, max_record_bytes: u64) -> JsonlReader {
        JsonlReader {
            core: Core::new(src),
            url_field: url_field.to_string(),
            text_field: text_field.to_string(),
            max_record_bytes,
            line: Vec::new(),
            lines: Some(0),
            last_start: 0,
            documents: false,
            url_seen: false,
            first_fields: None,
        }
    }

    /// The note for an input read to its end: documents, and not one
    /// record with the URL field.
    fn note(&mut self) -> Option<Note> {
        if !self.documents || self.url_seen {
            return None;
        }
        let fields = self.first_fields.take()?;
        Some(Note { offset: self.last_start, message: no_url_field(&self.url_field, &fields) })
    }
}

/// The most bytes the line buffer keeps from one line to the next.
const KEPT_LINE_BYTES: usize = 1 << 20;

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
        // The buffer of a huge line is not kept for the next one: its
        // memory was leased for that line only (see `super::budget`).
        if self.line.capacity() > KEPT_LINE_BYTES {
            self.line = Vec::new();
        }
        self.line.clear();
        let keep = usize::try_from(self.max_record_bytes).unwrap_or(usize::MAX).saturating_add(2);
        let Core { src, keeping, .. } = &mut self.core;
        // A long line waits for room in the budget as it grows.
        let line = src.read_line_covered(&mut self.line, keep, &mut |n| keeping.cover(n))?;
        if line.len == 0 {
            // At the end of the data; after a break, lines were lost.
            self.lines = None;
            self.core.end();
            if self.core.is_done()
                && let Some(note) = self.note()
            {
                self.core.push(Item::Note(note));
            }
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
        self.last_start = start.offset;
        let skip =
            |reason, detail| Item::Skip(Skip { offset: start.offset, line: self.lines, reason, detail });
        if text.len() as u64 > self.max_record_bytes {
            let detail = format!("line over the limit of {} bytes", self.max_record_bytes);
            self.core.push(skip(SkipReason::RecordTooLarge, detail));
            return Ok(());
        }
        let item = match parse_line(text, &self.url_field, &self.text_field) {
            Ok(found) => {
                if found.url.is_some() {
                    self.url_seen = true;
                } else if !self.url_seen && self.first_fields.is_none() {
                    // Once per input: the first record without the field
                    // is the first record.
                    self.first_fields = Some(match serde_json::from_slice(text) {
                        Ok(Value::Object(fields)) => field_names(&fields),
                        _ => "none".to_string(),
                    });
                }
                match found.fields(&self.url_field, &self.text_field) {
                    Ok((url, text)) => {
                        self.documents = true;
                        Item::Doc(RawDoc {
                            offset: start.offset,
                            url,
                            content_type: Some("text/plain".to_string()),
                            charset: None,
                            body: text.into_bytes().into(),
                            ..RawDoc::default()
                        })
                    }
                    Err(detail) => skip(SkipReason::BadJson, detail),
                }
            }
            Err(detail) => skip(SkipReason::BadJson, detail),
        };
        self.core.push(item);
        Ok(())
    }
}

/// Checks the first record of a JSONL input in `head`, its first bytes
/// (`whole` when they are all of it): a record that is a JSON object
/// without `text_field` at all (at the top level or, for a dotted name,
/// along its path) says the input keeps its text under another name, and
/// every record would be skipped, one warning each; the message names the
/// field, those the record has (see [`field_names`]), and the flag. A
/// first line that is not JSON, too long to be in `head`, or has the field
/// (whatever its value) passes: the records are then read, and skipped one
/// by one.
pub(crate) fn check_first_record(head: &[u8], whole: bool, text_field: &str) -> Result<(), String> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let mut lines = head.split_inclusive(|&b| b == b'\n');
    let Some(line) = lines.find(|l| !l.iter().all(u8::is_ascii_whitespace)) else { return Ok(()) };
    if !line.ends_with(b"\n") && !whole {
        return Ok(());
    }
    let Ok(record @ Value::Object(_)) = serde_json::from_slice::<Value>(trim_line_end(line)) else {
        return Ok(());
    };
    if lookup(&record, text_field, 0).is_some() {
        return Ok(());
    }
    let Value::Object(fields) = &record else { return Ok(()) };
    Err(format!(
        "its first record has no field {text_field:?} (its fields: {}): name the field that holds the text \
         with --text-field (and the URL's with --url-field; a dotted name such as metadata.text reaches a \
         field inside an object)",
        field_names(fields)
    ))
}

/// The note's message for an input none of whose records has the URL
/// field `url_field`; `fields` are its first record's, as [`field_names`]
/// gives them.
fn no_url_field(url_field: &str, fields: &str) -> String {
    format!(
        "no record has the field {url_field:?}, so every URL is empty (the first record's fields: {fields}): \
         name the field that holds the URL with --url-field (a dotted name such as metadata.url reaches a \
         field inside an object)"
    )
}

/// The names of a record's fields, for a message: each key, and for an
/// object (not empty) the dotted names of its fields instead
/// (`metadata.url`), the names a field flag takes, down to three levels;
/// in name order, at most 16, then how many more.
fn field_names(fields: &Map<String, Value>) -> String {
    const NAMED: usize = 16;
    const LEVELS: usize = 3;
    fn walk(
        fields: &Map<String, Value>,
        prefix: &str,
        level: usize,
        names: &mut Vec<String>,
        more: &mut usize,
    ) {
        for (key, value) in fields {
            let name = format!("{prefix}{key}");
            match value {
                Value::Object(inner) if !inner.is_empty() && level < LEVELS => {
                    walk(inner, &format!("{name}."), level + 1, names, more);
                }
                _ if names.len() < NAMED => names.push(format!("{name:?}")),
                _ => *more += 1,
            }
        }
    }
    let (mut names, mut more) = (Vec::new(), 0);
    walk(fields, "", 1, &mut names, &mut more);
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    if names.is_empty() { "none".to_string() } else { names.join(", ") }
}

/// `line` without its `\n` or `\r\n`.
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The two fields of one JSON line, or serde_json's error.
fn parse_line(line: &[u8], url_field: &str, text_field: &str) -> Result<Found, String> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let fields = Fields { url: Some(url_field), text: Some(text_field), depth: 0 };
    let found = fields.deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(json_error)?;
    Ok(found)
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

/// How a key of an object leads to a field: it is the field, it holds
/// the object the rest of the name is in, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step<'a> {
    No,
    Here,
    Into(&'a str),
}

impl<'a> Step<'a> {
    /// How `key` leads to `name` (what is left of a field's name in this
    /// object, `None` when the field is not sought here).
    fn of(name: Option<&'a str>, key: &str) -> Step<'a> {
        let Some(name) = name else { return Step::No };
        if key == name {
            return Step::Here;
        }
        match name.strip_prefix(key).and_then(|rest| rest.strip_prefix('.')) {
            Some(rest) => Step::Into(rest),
            None => Step::No,
        }
    }

    /// The name left to seek in the key's value.
    fn rest(self) -> Option<&'a str> {
        match self {
            Step::Into(rest) => Some(rest),
            Step::No | Step::Here => None,
        }
    }
}

/// The value of the field `name` in `value`, if an object, by the rule of
/// the module doc, with how many objects below the record it is (`depth`
/// for `value`'s own keys).
fn lookup<'v>(value: &'v Value, name: &str, depth: u32) -> Option<(u32, &'v Value)> {
    let Value::Object(fields) = value else { return None };
    let mut best: Option<(u32, &Value)> = None;
    for (key, v) in fields {
        let hit = match Step::of(Some(name), key) {
            Step::Here => Some((depth, v)),
            Step::Into(rest) => lookup(v, rest, depth + 1),
            Step::No => None,
        };
        if let Some(hit) = hit
            && best.is_none_or(|b| hit.0 <= b.0)
        {
            best = Some(hit);
        }
    }
    best
}

/// What a record holds at a field: a string, `null`, or another kind of
/// value (named, for the detail).
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Str(String),
    Null,
    Other(&'static str),
}

impl Got {
    fn of(v: &Value) -> Got {
        match v {
            Value::String(s) => Got::Str(s.clone()),
            Value::Null => Got::Null,
            other => Got::Other(kind(other)),
        }
    }

    fn from(v: Value) -> Got {
        match v {
            Value::String(s) => Got::Str(s),
            other => Got::of(&other),
        }
    }
}

/// A field found, `depth` objects below the record (0: the record's own
/// key).
#[derive(Debug)]
struct Hit {
    depth: u32,
    got: Got,
}

/// The two fields of a record, as far as found.
#[derive(Debug, Default)]
struct Found {
    url: Option<Hit>,
    text: Option<Hit>,
}

/// Keeps `hit` in `slot` unless the slot holds a match through fewer
/// objects: the fewest win, and among as few the last, as for a key given
/// twice.
fn offer(slot: &mut Option<Hit>, hit: Hit) {
    if slot.as_ref().is_none_or(|old| hit.depth <= old.depth) {
        *slot = Some(hit);
    }
}

impl Found {
    fn merge(&mut self, other: Found) {
        if let Some(hit) = other.url {
            offer(&mut self.url, hit);
        }
        if let Some(hit) = other.text {
            offer(&mut self.text, hit);
        }
    }

    /// The URL (empty when absent or null) and the text, or why the record
    /// is no document: no text, or a field that is not a string.
    fn fields(self, url_field: &str, text_field: &str) -> Result<(String, String), String> {
        let wrong = |name: &str, what: &str| format!("field {name:?} is {what}, not a string");
        let text = match self.text.map(|h| h.got) {
            Some(Got::Str(s)) => s,
            None => return Err(format!("no string field {text_field:?}")),
            Some(Got::Null) => return Err(wrong(text_field, "null")),
            Some(Got::Other(what)) => return Err(wrong(text_field, what)),
        };
        let url = match self.url.map(|h| h.got) {
            Some(Got::Str(s)) => s,
            None | Some(Got::Null) => String::new(),
            Some(Got::Other(what)) => return Err(wrong(url_field, what)),
        };
        Ok((url, text))
    }
}

/// Deserializes an object, keeping only the two fields: what is left of
/// each one's name at this object (`None`: not sought in it), and how many
/// objects below the record the object is. At the top it takes a record
/// (an object or an error); below, along a path, any value, where a value
/// not an object holds neither field.
#[derive(Clone, Copy)]
struct Fields<'a> {
    url: Option<&'a str>,
    text: Option<&'a str>,
    depth: u32,
}

impl<'de> DeserializeSeed<'de> for Fields<'_> {
    type Value = Found;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Found, D::Error> {
        if self.depth == 0 { d.deserialize_map(self) } else { d.deserialize_any(self) }
    }
}

impl<'de> Visitor<'de> for Fields<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Found::default();
        while let Some((url, text)) = map.next_key_seed(Key(self))? {
            match (url, text) {
                (Step::No, Step::No) => {
                    map.next_value::<IgnoredAny>()?;
                }
                (Step::Here, _) | (_, Step::Here) => {
                    // Built, as it is a field's value; a key that is one
                    // field and on the path of the other is looked into.
                    let value = map.next_value::<Value>()?;
                    let inside = |step: Step| {
                        let (depth, v) = lookup(&value, step.rest()?, self.depth + 1)?;
                        Some(Hit { depth, got: Got::of(v) })
                    };
                    let (url_inside, text_inside) = (inside(url), inside(text));
                    let here = |got| Hit { depth: self.depth, got };
                    match (url, text) {
                        (Step::Here, Step::Here) => {
                            offer(&mut found.url, here(Got::of(&value)));
                            offer(&mut found.text, here(Got::from(value)));
                        }
                        (Step::Here, _) => offer(&mut found.url, here(Got::from(value))),
                        _ => offer(&mut found.text, here(Got::from(value))),
                    }
                    found.merge(Found { url: url_inside, text: text_inside });
                }
                _ => {
                    let inner = Fields { url: url.rest(), text: text.rest(), depth: self.depth + 1 };
                    found.merge(map.next_value_seed(inner)?);
                }
            }
        }
        Ok(found)
    }

    // Along a path, any other value holds neither field.

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Found, E> {
        Ok(Found::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Found::default())
    }
}

/// A key, as how it leads to the URL field and to the text field, compared
/// without allocating when it has no escapes.
struct Key<'a>(Fields<'a>);

impl<'a, 'de> DeserializeSeed<'de> for Key<'a> {
    type Value = (Step<'a>, Step<'a>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(Step<'a>, Step<'a>), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'a, 'de> Visitor<'de> for Key<'a> {
    type Value = (Step<'a>, Step<'a>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(Step<'a>, Step<'a>), E> {
        Ok((Step::of(self.0.url, key), Step::of(self.0.text, key)))
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
        assert!(err.contains(r#"no field "text" (its fields: "content", "id", "metadata.url")"#), "{err}");
        assert!(err.contains("--text-field") && err.contains("metadata.text"), "{err}");
        assert_eq!(check_first_record(head, false, "content"), Ok(()));
        // A dotted name is sought along its path, and found only there.
        let nested = b"{\"id\": 1, \"meta\": {\"body\": \"a\"}, \"body\": null}\n";
        assert_eq!(check_first_record(nested, false, "meta.body"), Ok(()));
        assert_eq!(check_first_record(nested, false, "body"), Ok(()));
        let err = check_first_record(nested, false, "meta.text").unwrap_err();
        assert!(err.contains(r#"(its fields: "body", "id", "meta.body")"#), "{err}");
        assert!(check_first_record(nested, false, "id.body").is_err());
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
    use crate::bytes::read::testing::{doc, drain, skipped, source};
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn read(data: &[u8], url: &str, text: &str) -> Vec<Item> {
        read_max(data, url, text, 1 << 20)
    }

    /// The records read (a note at the end left out: see [`note`]).
    fn read_max(data: &[u8], url: &str, text: &str, max: u64) -> Vec<Item> {
        let items = read_all(data, url, text, max);
        items.into_iter().filter(|i| !matches!(i, Item::Note(_))).collect()
    }

    fn read_all(data: &[u8], url: &str, text: &str, max: u64) -> Vec<Item> {
        let mut r = JsonlReader::new(source(data.to_vec()), url, text, max);
        drain(&mut r, 1000)
    }

    /// The note the reader ends with, if any; checked to be the last item,
    /// the only one, at the last record's offset.
    fn note(data: &[u8], url: &str) -> Option<String> {
        let items = read_all(data, url, "text", 1 << 20);
        let notes: Vec<&Note> =
            items.iter().filter_map(|i| if let Item::Note(n) = i { Some(n) } else { None }).collect();
        assert!(notes.len() <= 1, "{notes:?}");
        let note = notes.first()?;
        assert_eq!(items.last(), Some(&Item::Note((*note).clone())), "the note is last");
        let records = &items[..items.len() - 1];
        assert_eq!(records.last().map(Item::offset), Some(note.offset), "at the last record");
        Some(note.message.clone())
    }

    /// (URL, text) of each document, or the detail of each skip.
    fn outcomes(data: &[u8], url: &str, text: &str) -> Vec<Result<(String, String), String>> {
        read(data, url, text)
            .iter()
            .map(|i| match i {
                Item::Doc(d) => Ok((d.url.clone(), String::from_utf8(d.body.to_vec()).unwrap())),
                other => Err(skipped(other).detail),
            })
            .collect()
    }

    fn doc_of(url: &str, text: &str) -> Result<(String, String), String> {
        Ok((url.to_string(), text.to_string()))
    }

    #[test]
    fn dotted_names_reach_into_objects() {
        let dolma =
            br#"{"id": "d1", "text": "body", "metadata": {"url": "http://a/", "n": [1, {"url": "no"}]}}"#;
        assert_eq!(outcomes(dolma, "metadata.url", "text"), [doc_of("http://a/", "body")]);
        assert_eq!(outcomes(dolma, "url", "text"), [doc_of("", "body")]);
        // Deeper, the text too, both fields in one object, escaped keys.
        let deep = br#"{"a": {"b": {"c": "deep", "u": "http://d/"}}, "text": "top"}"#;
        assert_eq!(outcomes(deep, "a.b.u", "a.b.c"), [doc_of("http://d/", "deep")]);
        let escaped = br#"{"meta": {"url": "http://e/"}, "text": "t"}"#;
        assert_eq!(outcomes(escaped, "meta.url", "text"), [doc_of("http://e/", "t")]);
        // A key that spells the whole name wins over a path, wherever it
        // is in the record; splits may mix.
        for line in [
            &br#"{"text": "t", "a.b": "literal", "a": {"b": "nested"}}"#[..],
            br#"{"text": "t", "a": {"b": "nested"}, "a.b": "literal"}"#,
        ] {
            assert_eq!(outcomes(line, "a.b", "text"), [doc_of("literal", "t")]);
        }
        let split = br#"{"text": "t", "a.b": {"c": "x"}, "q": {"r.s": "y"}}"#;
        assert_eq!(outcomes(split, "a.b.c", "q.r.s"), [doc_of("x", "y")]);
        // Among as many objects deep, the last counts, as for a key given
        // twice.
        let twice = br#"{"text": "t", "m": {"url": "first"}, "m": {"url": "second"}}"#;
        assert_eq!(outcomes(twice, "m.url", "text"), [doc_of("second", "t")]);
        // A path through what is not an object, or a key that only starts
        // like the name, finds nothing.
        let lines = [
            r#"{"text": "t", "metadata": "http://x/"}"#,
            r#"{"text": "t", "metadata": null}"#,
            r#"{"text": "t", "metadata": [{"url": "http://x/"}]}"#,
            r#"{"text": "t", "metadataurl": "http://x/", "meta": {"url": "http://x/"}}"#,
            r#"{"text": "t", "metadata": {"url.x": "http://x/", "urls": "http://x/"}}"#,
        ];
        let got = outcomes(
            lines
                .join(
                    "
",
                )
                .as_bytes(),
            "metadata.url",
            "text",
        );
        assert_eq!(got, vec![doc_of("", "t"); lines.len()]);
        // The record's own text field is not the nested one's.
        assert_eq!(outcomes(deep, "a.b.u", "a.text"), [Err(r#"no string field "a.text""#.to_string())]);
    }

    #[test]
    fn a_nested_field_of_another_kind_is_as_a_top_level_one() {
        let lines = [
            r#"{"m": {"text": 5, "url": "http://a/"}}"#,
            r#"{"m": {"text": null}}"#,
            r#"{"m": {"text": "t", "url": 7}}"#,
            r#"{"m": {"text": "t", "url": null}}"#,
            r#"{"m": {"text": "t", "url": {"href": "http://a/"}}}"#,
        ];
        let got = outcomes(
            lines
                .join(
                    "
",
                )
                .as_bytes(),
            "m.url",
            "m.text",
        );
        let wrong = |name: &str, what: &str| Err(format!("field {name:?} is {what}, not a string"));
        assert_eq!(
            got,
            [
                wrong("m.text", "a number"),
                wrong("m.text", "null"),
                wrong("m.url", "a number"),
                doc_of("", "t"),
                wrong("m.url", "an object"),
            ]
        );
        // A key that is one field and on the path of the other: its value
        // is the one and is looked into for the other.
        let line = br#"{"a": "text of a", "a.b": "http://b/"}"#;
        assert_eq!(outcomes(line, "a.b", "a"), [doc_of("http://b/", "text of a")]);
        let line = br#"{"a": {"b": "http://b/"}}"#;
        assert_eq!(outcomes(line, "a.b", "a"), [wrong("a", "an object")]);
        assert_eq!(outcomes(line, "a", "a.b"), [wrong("a", "an object")]);
        let line = br#"{"a": {"b": "t"}, "u": "x"}"#;
        assert_eq!(outcomes(line, "u", "a.b"), [doc_of("x", "t")]);
    }

    #[test]
    fn an_input_without_the_url_field_ends_with_a_note_naming_the_first_records_fields() {
        let dolma =
            b"{\"id\": 1, \"text\": \"a\", \"metadata\": {\"url\": \"http://a/\", \"date\": \"d\"}}\n\
            {\"id\": 2, \"text\": \"b\"}\n\n";
        let message = note(dolma, "url").expect("a note");
        assert_eq!(
            message,
            r#"no record has the field "url", so every URL is empty (the first record's fields: "id", "metadata.date", "metadata.url", "text"): name the field that holds the URL with --url-field (a dotted name such as metadata.url reaches a field inside an object)"#
        );
        assert_eq!(note(dolma, "metadata.url"), None);
        // gzip alike.
        assert_eq!(note(&gzip(dolma), "url"), Some(message));
        // A record with the field, even null or not a document, is enough.
        for data in [
            &b"{\"text\": \"a\"}\n{\"text\": \"b\", \"url\": null}\n"[..],
            b"{\"text\": \"a\"}\n{\"url\": \"http://a/\"}\n",
            b"{\"url\": \"\", \"text\": \"a\"}",
        ] {
            assert_eq!(note(data, "url"), None, "{}", String::from_utf8_lossy(data));
        }
        // No document, no note: the skips say what is wrong.
        for data in [&b""[..], b"\n\n", b"not json\n", b"{\"id\": 1}\n{\"text\": 5}\n"] {
            assert_eq!(note(data, "url"), None, "{}", String::from_utf8_lossy(data));
        }
        // The first record is the first JSON object.
        let data = b"not json\n[1]\n{\"text\": \"a\", \"b\": {}}\n{\"text\": \"c\", \"d\": 1}\n";
        assert!(note(data, "url").unwrap().contains(r#"(the first record's fields: "b", "text")"#));
    }

    #[test]
    fn field_names_expand_objects_to_three_levels_and_sixteen_names() {
        let names = |json: &str| match serde_json::from_str(json) {
            Ok(Value::Object(fields)) => field_names(&fields),
            _ => unreachable!("an object"),
        };
        assert_eq!(
            names(r#"{"z": [{"a": 1}], "a": {"b": {"c": {"d": 1}, "e": {}}}, "m": {}}"#),
            r#""a.b.c", "a.b.e", "m", "z""#
        );
        assert_eq!(names("{}"), "none");
        let wide: Map<String, Value> = (0..20).map(|i| (format!("f{i:02}"), Value::Null)).collect();
        let listed = field_names(&wide);
        assert!(
            listed.starts_with(r#""f00", "f01""#) && listed.ends_with(r#""f15", and 4 more"#),
            "{listed}"
        );
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
            let got = crate::bytes::read::testing::documents(&read(&lines.concat(), "url", "text"));
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
