//! Entry points for the fuzz targets in `fuzz/` (built only with the
//! `fuzzing` feature, which `fuzz/Cargo.toml` turns on).
//!
//! Each function takes the fuzzer's bytes, drives one part of the reading
//! and extraction path over them, and asserts what must hold for every
//! input, not only for well-formed ones: it returns, it ends (a reader
//! yields at most about one item per input byte), plain-input offsets lie
//! inside the input and do not go backwards, no document is larger than
//! the record limit, and decoded text is the text of its lines. A panic
//! here is a bug the fuzzer found; `scripts/fuzz.sh` runs the targets and
//! keeps what they find. The tests at the end run every target over the
//! test files and over `fuzz/regressions/TARGET/*`, the inputs that once
//! failed, so that what the fuzzer found stays fixed without the fuzzer.

use std::io::Cursor;

use crate::bytes::read::gz::Source;
use crate::bytes::read::{Item, Reader, arc, jsonl, pagefeed, warc};

/// The record limit the reader targets use: small, so that the
/// too-large path is reached by inputs of a few KiB.
const MAX_RECORD: u64 = 1 << 10;

fn source(data: &[u8]) -> Source {
    // Reading from memory cannot fail with an I/O error.
    Source::new(Box::new(Cursor::new(data.to_vec()))).expect("in-memory source")
}

/// Drains `reader` and checks every item against the input it came from.
fn drain(mut reader: Box<dyn Reader>, data: &[u8], compressed: bool) {
    let mut items = 0usize;
    let mut last = 0u64;
    // Every item takes at least one byte of the decompressed input, plus an
    // item at the end. Compressed input expands: deflate at most 1032 to 1,
    // zstd far more (an RLE block of a few bytes is 128 KiB), so the bound
    // there only catches a reader that never ends. The fuzzer found the
    // first: 118 bytes of gzip that are rightly 190 bad JSON lines.
    let most = if compressed { data.len().saturating_mul(1 << 17) } else { data.len() } + 2;
    // In-memory input has no I/O errors; an `Err` would be a bug too.
    while let Some(item) = reader.next_item().expect("in-memory read") {
        items += 1;
        assert!(items <= most, "reader does not end: {items} items from {} bytes", data.len());
        let offset = item.offset();
        if !compressed {
            assert!(offset <= data.len() as u64, "offset {offset} past the end of {} bytes", data.len());
            assert!(offset >= last, "offset {offset} after {last}");
            last = offset;
        }
        if let Item::Doc(doc) = &item {
            assert!(doc.body.as_slice().len() as u64 <= MAX_RECORD, "document over the record limit");
        }
    }
}

/// The WARC reader, over plain or gzip bytes.
pub fn warc(data: &[u8]) {
    let src = source(data);
    let compressed = src.is_compressed();
    drain(Box::new(warc::WarcReader::new(src, MAX_RECORD)), data, compressed);
}

/// The ARC reader.
pub fn arc(data: &[u8]) {
    let src = source(data);
    let compressed = src.is_compressed();
    drain(Box::new(arc::ArcReader::new(src, MAX_RECORD)), data, compressed);
}

/// The JSONL reader, with the default field names.
pub fn jsonl(data: &[u8]) {
    let src = source(data);
    let compressed = src.is_compressed();
    drain(Box::new(jsonl::JsonlReader::new(src, "url", "text", MAX_RECORD)), data, compressed);
}

/// The page-feed reader.
pub fn pagefeed(data: &[u8]) {
    let src = source(data);
    let compressed = src.is_compressed();
    drain(Box::new(pagefeed::PageFeedReader::new(src, MAX_RECORD)), data, compressed);
}

/// The gzip member splitter under every reader: member by member, with
/// breaks at damage, read by lines or by blocks as the first byte says.
/// Positions must count exactly the bytes delivered, and the input must
/// end.
pub fn gzip(data: &[u8]) {
    members(data);
}

/// The zstd frame splitter: the same source as [`gzip`], which tells the
/// two apart by their magic; the targets differ in their seeds.
pub fn zstd(data: &[u8]) {
    members(data);
}

fn members(data: &[u8]) {
    let Some((&mode, data)) = data.split_first() else { return };
    let mut src = if mode & 4 == 0 {
        source(data)
    } else {
        let base = u64::from(mode) << 20;
        Source::segment(Box::new(Cursor::new(data.to_vec())), base).expect("in-memory source")
    };
    let mut delivered = 0u64;
    let mut breaks = 0usize;
    let mut line = Vec::new();
    loop {
        let before = src.pos();
        let n = match mode & 3 {
            0 => {
                let n = src.fill_buf().expect("in-memory read").len();
                src.consume(n);
                n as u64
            }
            1 => {
                line.clear();
                src.read_line(&mut line, 64).expect("in-memory read").len
            }
            2 => src.skip_line(|_| {}).expect("in-memory read"),
            _ => src.read_exact(777, None).expect("in-memory read"),
        };
        assert_eq!(src.pos(), before + n, "position does not count the bytes delivered");
        delivered += n;
        if n == 0 {
            match src.take_break() {
                Some(brk) => {
                    breaks += 1;
                    assert!(breaks <= data.len() + 1, "breaks do not end");
                    assert!(brk.damaged_from <= delivered, "damage after the data delivered");
                }
                // A line that ends at a member start is not the end.
                None if mode & 3 == 2 && !src.peek(1).expect("in-memory read").is_empty() => {}
                None => break,
            }
        }
    }
}

/// HTML to text, over the input read as UTF-8 (lossily), then normalized.
pub fn html(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    let out = crate::bytes::extract::html::html_to_text(&html);
    let mut text = String::new();
    let lines = crate::bytes::extract::normalize(&out.text, &mut text);
    assert_eq!(lines, if text.is_empty() { 0 } else { text.matches('\n').count() as u64 + 1 });
    assert!(!text.starts_with([' ', '\n']) && !text.ends_with([' ', '\n']), "text not trimmed");
}

/// Charset detection and decoding: the first byte picks the declared
/// charset (none, a real label, a UTF-16 label, an unknown one) and whether
/// the payload is HTML.
pub fn charset(data: &[u8]) {
    const DECLARED: [Option<&str>; 8] = [
        None,
        Some("utf-8"),
        Some("windows-1252"),
        Some("shift_jis"),
        Some("utf-16le"),
        Some("utf-16be"),
        Some("iso-2022-jp"),
        Some("no-such-charset"),
    ];
    let Some((&mode, body)) = data.split_first() else { return };
    let declared = DECLARED[usize::from(mode) % DECLARED.len()];
    let html = mode & 8 != 0;
    let decoded = crate::bytes::extract::charset::decode(body, declared, html);
    // Valid UTF-8 with nothing declared and no byte order mark is UTF-8:
    // the text is the input unchanged.
    if declared.is_none()
        && !html
        && !body.starts_with(b"\xef\xbb\xbf")
        && let Ok(text) = std::str::from_utf8(body)
    {
        assert_eq!(decoded.text, text, "valid UTF-8 was decoded as {}", decoded.encoding.name());
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    type Target = fn(&[u8]);

    const TARGETS: [(&str, Target); 8] = [
        ("warc", super::warc),
        ("arc", super::arc),
        ("jsonl", super::jsonl),
        ("pagefeed", super::pagefeed),
        ("gzip", super::gzip),
        ("zstd", super::zstd),
        ("html", super::html),
        ("charset", super::charset),
    ];

    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else { return out };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files(&path));
            } else {
                out.push(path);
            }
        }
        out.sort();
        out
    }

    /// Every target holds its assertions on every test file (its first
    /// 16 KiB, as the fuzzer's inputs are at most that long), whole and
    /// cut in the middle.
    #[test]
    fn every_target_holds_on_the_test_files() {
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let files = files(&testdata);
        assert!(files.len() > 20, "test files not found under {}", testdata.display());
        for path in files {
            let data = std::fs::read(&path).unwrap();
            let data = &data[..data.len().min(16 << 10)];
            for (name, target) in TARGETS {
                for piece in [data, &data[..data.len() / 2]] {
                    let run = std::panic::catch_unwind(|| target(piece));
                    assert!(run.is_ok(), "target {name} fails on {} ({} bytes)", path.display(), piece.len());
                }
            }
        }
    }

    /// The inputs that the fuzzer found failing, kept as
    /// `fuzz/regressions/TARGET/NAME`, pass.
    #[test]
    fn fuzz_regressions_pass() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
        for (name, target) in TARGETS {
            for path in files(&root.join(name)) {
                let data = std::fs::read(&path).unwrap();
                let run = std::panic::catch_unwind(|| target(&data));
                assert!(run.is_ok(), "target {name} fails on {}", path.display());
            }
        }
    }
}
