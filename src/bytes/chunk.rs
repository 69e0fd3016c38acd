//! Stage 3, `chunk`: chunk specs, windows over normalized text, and
//! fingerprints.
//!
//! The rules are exact, because other tools and the tests rebuild them:
//! units are the normalized lines, or all space-separated words of all lines
//! in order. Windows are `units[i..i+K]` for i = 0, S, 2S, ... while
//! i+K <= n; then, if units remain after the last full window (or there was
//! none), one tail window from the next start to the end. A line window's
//! text is its lines joined by `\n`; a word window's text is its words
//! joined by one space. A chunk's fingerprint is the xxh3-64 of its UTF-8
//! bytes.

use std::fmt;
use std::str::FromStr;

use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// How a document is cut into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Chunking {
    /// Windows of `k` normalized lines, starting every `stride` lines.
    Lines { k: u32, stride: u32 },
    /// Windows of `k` words, starting every `stride` words (shingles).
    Words { k: u32, stride: u32 },
    /// One chunk: the whole normalized text.
    Doc,
}

impl Default for Chunking {
    /// The paper's "one fingerprint for every four lines".
    fn default() -> Self {
        Chunking::Lines { k: 4, stride: 4 }
    }
}

impl FromStr for Chunking {
    type Err = String;

    /// Parses `UNIT:K[:S]` (`lines:4`, `lines:4:1`, `words:8`) or `doc`.
    /// The default stride is K for lines and 1 for words.
    fn from_str(spec: &str) -> Result<Chunking, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts == ["doc"] {
            return Ok(Chunking::Doc);
        }
        let (unit, k, stride) = match parts.as_slice() {
            [unit, k] => (*unit, *k, None),
            [unit, k, s] => (*unit, *k, Some(*s)),
            _ => {
                return Err(format!(
                    "chunk spec '{spec}' is not UNIT:K[:S] (e.g. lines:4, words:8:1) or doc"
                ));
            }
        };
        let number = |what: &str, text: &str| -> Result<u32, String> {
            match text.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(format!(
                    "chunk spec '{spec}': {what} must be a whole number of at least 1, not '{text}'"
                )),
            }
        };
        let k = number("window size K", k)?;
        let default_stride = match unit {
            "lines" => k,
            "words" => 1,
            _ => return Err(format!("chunk spec '{spec}': unit must be 'lines' or 'words', not '{unit}'")),
        };
        let stride = match stride {
            Some(s) => number("stride S", s)?,
            None => default_stride,
        };
        if stride > k {
            return Err(format!(
                "chunk spec '{spec}': stride S ({stride}) must not exceed window size K ({k})"
            ));
        }
        Ok(match unit {
            "lines" => Chunking::Lines { k, stride },
            _ => Chunking::Words { k, stride },
        })
    }
}

impl fmt::Display for Chunking {
    /// The canonical form, with the stride spelled out: `lines:4:4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Chunking::Lines { k, stride } => write!(f, "lines:{k}:{stride}"),
            Chunking::Words { k, stride } => write!(f, "words:{k}:{stride}"),
            Chunking::Doc => f.write_str("doc"),
        }
    }
}

/// The fingerprint of one chunk.
#[inline]
pub(crate) fn fingerprint(chunk: &[u8]) -> u64 {
    xxh3_64(chunk)
}

/// The whole-text hash that finds exact copies.
pub(crate) fn exact_hash(normalized: &str) -> u128 {
    xxh3_128(normalized.as_bytes())
}

/// The half-open unit ranges `[start, end)` of the windows over `n` units.
pub(crate) fn windows(n: usize, k: usize, stride: usize) -> impl Iterator<Item = (usize, usize)> {
    let full = if n >= k { (n - k) / stride + 1 } else { 0 };
    let last_end = if full > 0 { (full - 1) * stride + k } else { 0 };
    let tail = (n > last_end).then(|| (full * stride, n));
    (0..full).map(move |w| (w * stride, w * stride + k)).chain(tail)
}

/// Fingerprints of one document, reusing buffers across documents.
#[derive(Default)]
pub struct Chunker {
    /// Byte offsets of unit starts, plus one past the end of the last unit.
    starts: Vec<usize>,
    /// The text with line breaks turned into spaces (valid UTF-8).
    words: Vec<u8>,
    /// The fingerprints of one document before they are made a set.
    fprints: Vec<u64>,
}

impl Chunker {
    pub fn new() -> Chunker {
        Chunker::default()
    }

    /// Appends the fingerprints of `normalized` (lines joined by `\n`, as
    /// `extract::normalize` makes them) to `out` and returns the number of
    /// chunks (windows). Duplicates are kept; the caller makes a set.
    pub fn fingerprints(&mut self, normalized: &str, chunking: Chunking, out: &mut Vec<u64>) -> u64 {
        self.for_each_slice(normalized, chunking, |chunk| out.push(fingerprint(chunk)))
    }

    /// The fingerprints of `normalized`'s chunks as a set (sorted,
    /// distinct), in a list of its own size, and the number of chunks. The
    /// list is made once its size is known, from a buffer kept across
    /// documents: grown by doubling from empty, it took several
    /// allocations a page and up to twice its size, held until the
    /// fingerprint stage's writer thread wrote it (0.2% of the stage's
    /// instructions, `callgrind` on 40 MB of the paper-size crawl).
    pub fn fingerprint_set(&mut self, normalized: &str, chunking: Chunking) -> (Vec<u64>, u64) {
        let mut all = std::mem::take(&mut self.fprints);
        all.clear();
        let chunks = self.fingerprints(normalized, chunking, &mut all);
        all.sort_unstable();
        all.dedup();
        let set = all.clone();
        self.fprints = all;
        (set, chunks)
    }

    /// Calls `f` with the fingerprint and the text of every chunk of
    /// `normalized`, in order, and returns the number of chunks.
    pub(crate) fn for_each_chunk(
        &mut self,
        normalized: &str,
        chunking: Chunking,
        mut f: impl FnMut(u64, &str),
    ) -> u64 {
        // Chunks are cut at ASCII separators of valid UTF-8, so they are
        // valid UTF-8 too.
        self.for_each_slice(normalized, chunking, |chunk| {
            f(fingerprint(chunk), std::str::from_utf8(chunk).unwrap_or_default())
        })
    }

    /// Calls `f` with the bytes of every chunk of `normalized`, in order,
    /// and returns the number of chunks.
    fn for_each_slice(&mut self, normalized: &str, chunking: Chunking, mut f: impl FnMut(&[u8])) -> u64 {
        if normalized.is_empty() {
            return 0;
        }
        let (k, stride, sep) = match chunking {
            Chunking::Doc => {
                f(normalized.as_bytes());
                return 1;
            }
            Chunking::Lines { k, stride } => (k, stride, b'\n'),
            Chunking::Words { k, stride } => {
                // Words are separated by one space inside a line and by the
                // line break between lines; with line breaks turned into
                // spaces every word window is one contiguous slice. The copy
                // is byte for byte, a loop that vectorizes (pushing line by
                // line measured slower).
                self.words.clear();
                self.words.extend(normalized.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
                (k, stride, b' ')
            }
        };
        let bytes = if sep == b' ' { self.words.as_slice() } else { normalized.as_bytes() };
        self.starts.clear();
        self.starts.push(0);
        self.starts.extend(memchr::memchr_iter(sep, bytes).map(|i| i + 1));
        let n = self.starts.len();
        // One past the end of the last unit, so unit u spans
        // starts[u]..starts[u+1]-1.
        self.starts.push(bytes.len() + 1);
        let mut chunks = 0;
        for (a, b) in windows(n, k as usize, stride as usize) {
            f(&bytes[self.starts[a]..self.starts[b] - 1]);
            chunks += 1;
        }
        chunks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Chunking {
        s.parse().unwrap()
    }

    #[test]
    fn parses_specs_with_default_strides() {
        assert_eq!(spec("lines:4"), Chunking::Lines { k: 4, stride: 4 });
        assert_eq!(spec("lines:4:1"), Chunking::Lines { k: 4, stride: 1 });
        assert_eq!(spec("words:8"), Chunking::Words { k: 8, stride: 1 });
        assert_eq!(spec("words:8:8"), Chunking::Words { k: 8, stride: 8 });
        assert_eq!(spec("doc"), Chunking::Doc);
        assert_eq!(spec("lines:2").to_string(), "lines:2:2");
        assert_eq!(Chunking::default().to_string(), "lines:4:4");
    }

    #[test]
    fn rejects_malformed_specs_with_a_reason() {
        for (bad, why) in [
            ("lines:0", "at least 1"),
            ("lines:4:5", "must not exceed"),
            ("lines:4:0", "at least 1"),
            ("foo:3", "unit must be"),
            ("lines:x", "not 'x'"),
            ("lines", "UNIT:K"),
            ("lines:1:1:1", "UNIT:K"),
            ("", "UNIT:K"),
            ("lines:-1", "not '-1'"),
        ] {
            let err = bad.parse::<Chunking>().unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn windows_follow_the_rules() {
        let w = |n, k, s| windows(n, k, s).collect::<Vec<_>>();
        assert_eq!(w(10, 4, 4), [(0, 4), (4, 8), (8, 10)]);
        assert_eq!(w(8, 4, 4), [(0, 4), (4, 8)]);
        assert_eq!(w(3, 4, 4), [(0, 3)]);
        assert_eq!(w(6, 4, 1), [(0, 4), (1, 5), (2, 6)]);
        assert_eq!(w(8, 4, 3), [(0, 4), (3, 7), (6, 8)]);
        assert_eq!(w(0, 4, 4), []);
        assert_eq!(w(1, 1, 1), [(0, 1)]);
    }

    #[test]
    fn the_set_is_the_sorted_distinct_fingerprints_whatever_came_before() {
        let mut chunker = Chunker::new();
        // A long page, then shorter ones: nothing of one is left for the next.
        let texts = ["x\ny\n".repeat(300) + "z", "b\na\nb\na\nc".to_string(), String::new(), "q".to_string()];
        for c in [spec("lines:1"), spec("lines:2:1"), spec("words:2")] {
            for text in &texts {
                let mut expected = chunks_of(text, c);
                let chunks = expected.len() as u64;
                expected.sort_unstable();
                expected.dedup();
                let (set, n) = chunker.fingerprint_set(text, c);
                assert_eq!((&set, n), (&expected, chunks), "{c} on {text:?}");
                assert_eq!(set.capacity(), set.len());
            }
        }
    }

    fn chunks_of(text: &str, c: Chunking) -> Vec<u64> {
        let mut out = Vec::new();
        let n = Chunker::new().fingerprints(text, c, &mut out);
        assert_eq!(n as usize, out.len());
        out
    }

    #[test]
    fn line_windows_hash_lines_joined_by_newline() {
        let text = "a\nb b\nc\nd\ne";
        assert_eq!(
            chunks_of(text, spec("lines:2")),
            [fingerprint(b"a\nb b"), fingerprint(b"c\nd"), fingerprint(b"e")]
        );
        assert_eq!(
            chunks_of(text, spec("lines:4:1")),
            [fingerprint(b"a\nb b\nc\nd"), fingerprint(b"b b\nc\nd\ne")]
        );
    }

    #[test]
    fn word_windows_cross_lines() {
        let text = "a b\nc\nd e";
        assert_eq!(
            chunks_of(text, spec("words:3")),
            [fingerprint(b"a b c"), fingerprint(b"b c d"), fingerprint(b"c d e")]
        );
        assert_eq!(
            chunks_of(text, spec("words:2:2")),
            [fingerprint(b"a b"), fingerprint(b"c d"), fingerprint(b"e")]
        );
        assert_eq!(chunks_of("x", spec("words:8")), [fingerprint(b"x")]);
    }

    #[test]
    fn doc_chunk_and_empty_text() {
        assert_eq!(chunks_of("a\nb", Chunking::Doc), [fingerprint(b"a\nb")]);
        assert!(chunks_of("", spec("lines:4")).is_empty());
        assert!(chunks_of("", Chunking::Doc).is_empty());
    }

    #[test]
    fn fingerprint_is_xxh3_64_of_the_bytes() {
        // A fixed value so a change of hash function cannot pass unnoticed:
        // other tools reproduce these fingerprints.
        assert_eq!(fingerprint(b""), 0x2d06800538d394c2);
    }
}
