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

use crate::bytes::scan::byteclass::{self, below};

/// Appends the normalized form of `text` to `out` (which should be empty,
/// or end a previous document's text: lines are joined with `\n` only
/// within this call) and returns the number of lines.
///
/// The rule line by line is the same as this one on the whole text: every
/// maximal run of White_Space characters (`\n` among them) becomes one
/// `\n` if it holds a `\n` and one space if not, and a run at the start or
/// the end of the text goes. So the text is scanned 64 bytes at a time for
/// the bytes a normalized text could not have where they are
/// (`classes64`): the other whitespace bytes, the lead bytes of a
/// non-ASCII space, and a space or `\n` that follows a space or `\n` or
/// starts the text. Between them the text is copied in bulk; at each, the
/// run it is in (which may start at the clean space or `\n` before it) is
/// measured and replaced. A line that needs work costs one run, not a
/// scan of each of its words: text indented on every line (changelogs,
/// source files, the Debian pages of the documentation crawl) went through
/// a line at a time, word by word, before: the documentation crawl's 260 MB
/// of plain text took 0.37 to 0.45 s, now 0.14 to 0.19 s, and its HTML
/// pages' 162 MB of text 0.15 s, now 0.09 s (`examples/extract.rs`, with
/// and without `--plain`, one thread; see the performance log).
pub fn normalize(text: &str, out: &mut String) -> u64 {
    let bytes = text.as_bytes();
    let n = bytes.len();
    out.reserve(n);
    // `\n`s written (or to be copied) from this text, and whether any of
    // its characters was.
    let mut separators_out = 0u64;
    let mut emitted = false;
    // The start of the clean stretch not copied yet: the text's start or
    // the end of a run, so never a whitespace byte.
    let mut segment = 0;
    let mut base = 0;
    // Bits of the block below `from` are done; `carry`: the byte before
    // the block is a space or `\n` (the text's start counts as one).
    let mut from = 0u32;
    let mut carry = 1u64;
    'blocks: while base < n {
        let (separators, lfs, others) = classes64(&bytes[base..]);
        let mut unclean = (others | (separators & ((separators << 1) | carry))) & !below(from);
        while unclean != 0 {
            let k = unclean.trailing_zeros();
            let i = base + k as usize;
            if CLASSES[usize::from(bytes[i])] == MAYBE && !char_at(text, i).0 {
                // A character that shares its lead byte with a space.
                unclean &= unclean - 1;
                continue;
            }
            // Clean `\n`s up to the run, each a line's end as it stands.
            separators_out += u64::from((lfs & below(k) & !below(from)).count_ones());
            // The run may start at the single space or `\n` before.
            let mut run_start = i;
            let mut has_lf = false;
            if i > segment && matches!(bytes[i - 1], b' ' | b'\n') {
                run_start = i - 1;
                if bytes[run_start] == b'\n' {
                    has_lf = true;
                    separators_out -= 1;
                }
            }
            let (run_end, lf_in_run) = run_from(text, i);
            has_lf |= lf_in_run;
            if run_start > segment {
                out.push_str(&text[segment..run_start]);
                emitted = true;
            }
            if emitted && run_end < n {
                if has_lf {
                    out.push('\n');
                    separators_out += 1;
                } else {
                    out.push(' ');
                }
            }
            segment = run_end;
            if run_end >= base + 64 {
                // The run left the block: the next one starts at its end,
                // a byte that is not whitespace, so nothing carries.
                base = run_end;
                from = 0;
                carry = 0;
                continue 'blocks;
            }
            from = (run_end - base) as u32;
            unclean &= !below(from);
        }
        separators_out += u64::from((lfs & !below(from)).count_ones());
        carry = separators >> 63;
        base += 64;
        from = 0;
    }
    // A single space or `\n` at the very end is clean to the scan, which
    // reads past the end as word bytes.
    let mut end = n;
    if end > segment && matches!(bytes[end - 1], b' ' | b'\n') {
        if bytes[end - 1] == b'\n' {
            separators_out -= 1;
        }
        end -= 1;
    }
    if end > segment {
        out.push_str(&text[segment..end]);
        emitted = true;
    }
    if emitted { separators_out + 1 } else { 0 }
}

/// The end of the whitespace run at byte `i` (a char boundary), and
/// whether it holds a `\n`.
#[inline]
fn run_from(text: &str, mut i: usize) -> (usize, bool) {
    let bytes = text.as_bytes();
    let mut has_lf = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                has_lf = true;
                i += 1;
            }
            b => match CLASSES[usize::from(b)] {
                WORD => break,
                SPACE => i += 1,
                _ => {
                    let (space, width) = char_at(text, i);
                    if !space {
                        break;
                    }
                    i += width;
                }
            },
        }
    }
    (i, has_lf)
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

/// Byte classes for [`normalize`] and [`run_from`]: a byte that is part of
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

    #[test]
    fn runs_longer_than_a_block() {
        // Runs of every kind that cross one or two block edges, after
        // words of every length, with a non-space that shares a space's
        // lead byte at either end.
        for run in [" ", "\n", " \n", "\t", "\u{a0}", "\r\n", "\u{3000}"] {
            for len in [1, 2, 63, 64, 65, 130] {
                for shift in [0, 1, 31, 62, 63, 64, 65] {
                    let ws = run.repeat(len);
                    for text in [
                        format!("{}{ws}b", "a".repeat(shift)),
                        format!("{ws}{}{ws}", "a".repeat(shift)),
                        format!("x\n{}{ws}\u{a9}{ws}\u{a9}y", "a".repeat(shift)),
                    ] {
                        assert_eq!(norm(&text), reference(&text), "{run:?} x {len} after {shift}");
                    }
                }
            }
        }
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
