//! Line normalization: the exact rule that defines a document's text.
//!
//! 1. Split the text into lines at `\n` (a trailing `\r` is removed).
//! 2. In each line, every run of Unicode White_Space characters becomes one
//!    space; leading and trailing spaces are removed. Empty lines are
//!    dropped. No case folding.
//! 3. The normalized text is the lines joined by `\n`.
//!
//! Rust's `char::is_whitespace` is exactly the White_Space property, and a
//! trailing `\r` is White_Space, so step 1's `\r` rule falls out of step 2.

use crate::bytes::scan::byteclass;
use crate::bytes::scan::swar;

/// Appends the normalized form of `text` to `out` (which should be empty,
/// or end a previous document's text: lines are joined with `\n` only
/// within this call) and returns the number of lines.
///
/// Most lines of extracted text are already normalized, so the text is
/// scanned 64 bytes at a time for the first byte that is not
/// (`next_unclean`); the clean lines before it are copied in one piece,
/// and only the line that holds it goes through `push_collapsed`. Where
/// that line is the first one scanned, the next lines go straight to
/// `push_collapsed`, 8 of them, twice as many after each such scan in a
/// row, up to 64: in text whose every line needs work (indented, tabbed),
/// scanning ahead first would only be done twice.
pub fn normalize(text: &str, out: &mut String) -> u64 {
    let bytes = text.as_bytes();
    let mut lines = 0u64;
    out.reserve(text.len());
    // `at` is always the start of a line.
    let mut at = 0;
    let mut line_by_line = 0;
    let mut next_run = LINE_BY_LINE;
    while at < bytes.len() {
        // `\n` is ASCII, so every cut is at a char boundary.
        let line_end =
            |from: usize| memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |nl| from + nl);
        if line_by_line > 0 {
            line_by_line -= 1;
            let end = line_end(at);
            push_line(&text[at..end], out, &mut lines);
            at = end + 1;
            continue;
        }
        let (unclean, newlines) = next_unclean(text, at);
        if unclean == bytes.len() {
            // The rest is clean lines, the last one without its `\n`.
            if lines > 0 {
                out.push('\n');
            }
            out.push_str(&text[at..]);
            return lines + newlines + 1;
        }
        // The clean lines before the unclean one, each ended by `\n`.
        let line_start = match memchr::memrchr(b'\n', &bytes[at..unclean]) {
            Some(nl) => at + nl + 1,
            None => at,
        };
        if line_start > at {
            if lines > 0 {
                out.push('\n');
            }
            out.push_str(&text[at..line_start - 1]);
            lines += newlines;
            next_run = LINE_BY_LINE;
        } else {
            line_by_line = next_run;
            next_run = (next_run * 2).min(LINE_BY_LINE_MAX);
        }
        let end = line_end(unclean);
        push_line(&text[line_start..end], out, &mut lines);
        at = end + 1;
    }
    lines
}

/// How many lines go straight to [`push_collapsed`] after a scan that
/// found its first line unclean, at first and at most.
const LINE_BY_LINE: u32 = 8;
const LINE_BY_LINE_MAX: u32 = 64;

/// Appends one line (no `\n` in it), after a `\n` unless it is the first,
/// and counts it; a line of nothing but whitespace is dropped.
fn push_line(line: &str, out: &mut String, lines: &mut u64) {
    let before = out.len();
    if *lines > 0 {
        out.push('\n');
    }
    if push_collapsed(line, out) {
        *lines += 1;
    } else {
        out.truncate(before);
    }
}

/// The first byte at or after `at` (a line start) that a normalized text
/// could not have there, and the number of `\n` before it from `at`; the
/// end of `text` when the rest is normalized. Such a byte is one of the
/// lines' other whitespace or the lead byte of a non-ASCII space, or a
/// space or `\n` that follows a space or `\n` or starts the text (a run, a
/// leading space, an empty line); a text that ends with a space or `\n`
/// has it as its last byte.
///
/// The bitmaps find the lead bytes that may start a non-ASCII space (see
/// [`CLASSES`]); one whose character is not White_Space after all (a
/// typographic quote or dash, `©`, `€`: common in real text) is passed
/// over here, so that its line is still copied in bulk.
fn next_unclean(text: &str, at: usize) -> (usize, u64) {
    let bytes = text.as_bytes();
    let mut newlines = 0u64;
    // Whether the byte before the block was a space or `\n`: at a line
    // start it is `\n`, or the text's start, which counts as one.
    let mut carry = 1u64;
    let mut base = at;
    while base < bytes.len() {
        let (separators, lfs, others) = classes64(&bytes[base..]);
        let mut unclean = others | (separators & ((separators << 1) | carry));
        while unclean != 0 {
            let k = unclean.trailing_zeros();
            let i = base + k as usize;
            if bytes[i] >= 0x80 && !char_at(text, i).0 {
                unclean &= unclean - 1;
                continue;
            }
            newlines += u64::from((lfs & ((1u64 << k) - 1)).count_ones());
            return (i, newlines);
        }
        newlines += u64::from(lfs.count_ones());
        carry = separators >> 63;
        base += 64;
    }
    match bytes.last() {
        Some(&last @ (b' ' | b'\n')) => (bytes.len() - 1, newlines - u64::from(last == b'\n')),
        _ => (bytes.len(), newlines),
    }
}

/// Three bitmaps of the first 64 bytes of `bytes` (fewer at the end, the
/// rest read as word bytes), bit `k` for byte `k`: spaces and `\n`; `\n`
/// alone; and the bytes [`CLASSES`] does not call [`WORD`] but a space.
#[inline]
fn classes64(bytes: &[u8]) -> (u64, u64, u64) {
    let mut buf = [0; 64];
    let block = byteclass::block(bytes, b'a', &mut buf);
    let lfs = byteclass::in_ranges(block, &[(b'\n', b'\n')]);
    let separators = byteclass::in_ranges(block, &[(b' ', b' ')]) | lfs;
    let others = byteclass::in_ranges(block, OTHERS);
    (separators, lfs, others)
}

/// The bytes [`CLASSES`] calls [`SPACE`] or [`MAYBE`], less the space.
const OTHERS: &[(u8, u8)] = &[(0x09, 0x09), (0x0b, 0x0d), (0xc2, 0xc2), (0xe1, 0xe3)];

/// Byte classes for [`next_unclean`] and the scan in [`push_collapsed`]: a byte that is part of
/// a word for sure, an ASCII White_Space byte, or the lead byte of a
/// character that may be White_Space (U+0085 and U+00A0 start with 0xC2,
/// U+1680 with 0xE1, U+2000..U+205F with 0xE2, U+3000 with 0xE3).
const WORD: u8 = 0;
const SPACE: u8 = 1;
const MAYBE: u8 = 2;

static CLASSES: [u8; 256] = {
    let mut table = [WORD; 256];
    table[b' ' as usize] = SPACE;
    table[b'\t' as usize] = SPACE;
    table[0x0b] = SPACE;
    table[0x0c] = SPACE;
    table[b'\r' as usize] = SPACE;
    table[0xC2] = MAYBE;
    table[0xE1] = MAYBE;
    table[0xE2] = MAYBE;
    table[0xE3] = MAYBE;
    table
};

/// The bytes of eight that [`CLASSES`] does not call [`WORD`] (high bit of
/// each byte).
#[inline]
fn not_word_bytes(x: u64) -> u64 {
    let low7 = x & !swar::HIGH;
    let spaces = swar::in_range(low7, 0x09, 0x09)
        | swar::in_range(low7, 0x0b, 0x0d)
        | swar::in_range(low7, b' ', b' ');
    let leads = swar::in_range(low7, 0x42, 0x42) | swar::in_range(low7, 0x61, 0x63);
    (spaces & !x) | (leads & x)
}

/// Appends `line` (no `\n` in it) with whitespace runs collapsed to one
/// space and trimmed; returns whether anything was appended.
///
/// Most lines are already clean (single spaces between words), so the line
/// is copied in verbatim segments that break only where the whitespace is
/// not a single ASCII space: one copy per line in the common case. Words
/// are measured eight bytes at a time ([`not_word_bytes`]), the rest looks
/// each byte up in [`CLASSES`], and a character is decoded only at the few
/// lead bytes that may start a non-ASCII space.
fn push_collapsed(line: &str, out: &mut String) -> bool {
    let bytes = line.as_bytes();
    let n = bytes.len();
    let mut i = skip_space(line, 0);
    if i == n {
        return false;
    }
    // Start of the segment not yet copied.
    let mut segment = i;
    loop {
        i = swar::find(bytes, i, not_word_bytes, |b| CLASSES[usize::from(b)] != WORD);
        if i == n {
            out.push_str(&line[segment..]);
            return true;
        }
        if CLASSES[usize::from(bytes[i])] == MAYBE {
            let (space, width) = char_at(line, i);
            if !space {
                i += width;
                continue;
            }
        }
        // A single ASCII space before a word byte: the common case.
        if bytes[i] == b' ' && i + 1 < n && CLASSES[usize::from(bytes[i + 1])] == WORD {
            i += 2;
            continue;
        }
        let word_end = i;
        i = skip_space(line, i);
        if i == n {
            out.push_str(&line[segment..word_end]);
            return true;
        }
        if !(i - word_end == 1 && bytes[word_end] == b' ') {
            out.push_str(&line[segment..word_end]);
            out.push(' ');
            segment = i;
        }
    }
}

/// The end of the whitespace run at byte `i` (a char boundary).
#[inline]
fn skip_space(line: &str, mut i: usize) -> usize {
    let bytes = line.as_bytes();
    while i < bytes.len() {
        match CLASSES[usize::from(bytes[i])] {
            WORD => break,
            SPACE => i += 1,
            _ => {
                let (space, width) = char_at(line, i);
                if !space {
                    break;
                }
                i += width;
            }
        }
    }
    i
}

/// Whether the character at byte `i` (a char boundary) is White_Space, and
/// its width in bytes. Called only at the lead bytes [`CLASSES`] calls
/// [`MAYBE`]; ASCII is classed by the table.
#[inline]
fn char_at(line: &str, i: usize) -> (bool, usize) {
    match line[i..].chars().next() {
        Some(c) => (c.is_whitespace(), c.len_utf8()),
        None => (false, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> (String, u64) {
        let mut out = String::new();
        let n = normalize(text, &mut out);
        (out, n)
    }

    #[test]
    fn collapses_trims_and_drops_empty_lines() {
        assert_eq!(norm("  a \t b  \r\n\n \u{a0}\nc"), ("a b\nc".to_string(), 2));
        assert_eq!(norm("x\u{3000}\u{2003}y\u{85}"), ("x y".to_string(), 1));
        assert_eq!(norm(""), (String::new(), 0));
        assert_eq!(norm(" \n\t\r\n"), (String::new(), 0));
        assert_eq!(norm("\n\na"), ("a".to_string(), 1));
    }

    #[test]
    fn no_case_folding_and_non_space_controls_kept() {
        // U+001F is not White_Space; U+200B (zero width space) is not either.
        assert_eq!(norm("Ab\u{1f}\u{200b}C").0, "Ab\u{1f}\u{200b}C");
    }

    #[test]
    fn not_word_bytes_agrees_with_the_classes() {
        let not_word = |b: u8| CLASSES[usize::from(b)] != WORD;
        swar::assert_marks(not_word_bytes, not_word, &[0, b'a', 0x20, 0x7f, 0x80, 0xc2, 0xff]);
    }

    /// [`OTHERS`] is written out beside the table it follows: every byte
    /// value is in it exactly when the table calls it other than a word
    /// byte and it is not the space.
    #[test]
    fn others_are_the_classes_less_the_space() {
        for b in 0..=255u8 {
            let listed = OTHERS.iter().any(|&(lo, hi)| (lo..=hi).contains(&b));
            assert_eq!(listed, CLASSES[usize::from(b)] != WORD && b != b' ', "{b:#x}");
        }
    }

    #[test]
    fn only_newline_splits_lines() {
        // U+2028 LINE SEPARATOR is White_Space, so it is a space, not a break.
        assert_eq!(norm("a\u{2028}b\rc").0, "a b c");
    }

    #[test]
    fn matches_a_plain_reference() {
        let reference = |text: &str| -> String {
            text.split('\n')
                .map(|l| l.split(char::is_whitespace).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        for text in ["a  b\n\nc\u{a0}\u{a0}d \n", "\u{feff}x", "é  ü\t\tß", "\r\r\n\r", "a\u{0b}b\u{0c}c"]
        {
            assert_eq!(norm(text).0, reference(text), "{text:?}");
        }
    }

    /// The rule as written, line by line.
    fn reference(text: &str) -> (String, u64) {
        let lines: Vec<String> = text
            .split('\n')
            .map(|l| l.split(char::is_whitespace).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect();
        (lines.join("\n"), lines.len() as u64)
    }

    #[test]
    fn clean_and_unclean_lines_across_block_edges() {
        // Clean lines, then each kind of unclean byte, at every offset
        // around the first block edges.
        let clean = "one two\nthree four five\nsix\n";
        for bad in [" ", "\n", "  ", "\t", "\u{a0}", "\u{2019}", "x ", "x\n\n", "x \n", "x\n "] {
            for shift in 0..140 {
                let text = format!("{}{}{bad}{clean}end", "w".repeat(shift % 9), clean.repeat(shift / 9 + 1));
                assert_eq!(norm(&text), reference(&text), "{bad:?} at {shift}");
                let ends = format!("{text}{bad}");
                assert_eq!(norm(&ends), reference(&ends), "{bad:?} at {shift}, at the end");
            }
        }
    }

    #[test]
    fn runs_of_unclean_lines_between_clean_ones() {
        // Long runs of lines that all need work, then clean ones, so that
        // line-by-line runs of every length start and end among them.
        let mut text = String::new();
        for run in [1, 3, 9, 17, 40, 130, 2, 70] {
            for k in 0..run {
                text.push_str(if k % 3 == 0 { "  indented line\n" } else { "tab\there\n\n" });
            }
            text.push_str(&"clean line\n".repeat(run));
        }
        assert_eq!(norm(&text), reference(&text));
    }

    proptest::proptest! {
        #[test]
        fn any_text_matches_the_plain_reference(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "bc", "é", "字", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}", "\u{85}", "\u{2028}", "\u{1f}",
                    // Non-spaces that share a lead byte with a space.
                    "\u{a9}", "\u{200b}", "€", "\u{3001}", "\u{1681}",
                    "\u{1680}", "\u{2009}", "\u{205f}", "\u{2029}", "\u{202f}",
                ]),
                0..160,
            )
        ) {
            let text: String = parts.concat();
            let reference = text
                .split('\n')
                .map(|l| l.split(char::is_whitespace).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>();
            let (got, lines) = norm(&text);
            proptest::prop_assert_eq!(lines as usize, reference.len());
            proptest::prop_assert_eq!(got, reference.join("\n"));
        }
    }
}
