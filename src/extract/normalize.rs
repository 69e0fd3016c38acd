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

/// Appends the normalized form of `text` to `out` (which should be empty,
/// or end a previous document's text: lines are joined with `\n` only
/// within this call) and returns the number of lines.
pub fn normalize(text: &str, out: &mut String) -> u64 {
    let mut lines = 0u64;
    for line in text.split('\n') {
        let before = out.len();
        if lines > 0 {
            out.push('\n');
        }
        if push_collapsed(line, out) {
            lines += 1;
        } else {
            // Nothing but whitespace: drop the line and its separator.
            out.truncate(before);
        }
    }
    lines
}

/// Appends `line` with whitespace runs collapsed to one space and trimmed;
/// returns whether anything was appended.
///
/// Most lines are already clean (single spaces between words), so the line
/// is copied in verbatim segments that break only where the whitespace is
/// not a single ASCII space: one copy per line in the common case, instead
/// of one per word.
fn push_collapsed(line: &str, out: &mut String) -> bool {
    let bytes = line.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    // Start of the segment not yet copied, and end of the last word.
    let mut segment: Option<usize> = None;
    let mut end = 0;
    while i < n {
        let gap = i;
        while i < n {
            let (space, width) = char_at(line, i);
            if !space {
                break;
            }
            i += width;
        }
        if i == n {
            break;
        }
        match segment {
            None => segment = Some(i),
            Some(start) if !(i - gap == 1 && bytes[gap] == b' ') => {
                out.push_str(&line[start..end]);
                out.push(' ');
                segment = Some(i);
            }
            Some(_) => {}
        }
        while i < n {
            let (space, width) = char_at(line, i);
            if space {
                break;
            }
            i += width;
        }
        end = i;
    }
    match segment {
        Some(start) => {
            out.push_str(&line[start..end]);
            true
        }
        None => false,
    }
}

/// Whether the character at byte `i` (a char boundary) is White_Space, and
/// its width in bytes.
#[inline]
fn char_at(line: &str, i: usize) -> (bool, usize) {
    let b = line.as_bytes()[i];
    if b < 0x80 {
        return (matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'), 1);
    }
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

    proptest::proptest! {
        #[test]
        fn any_text_matches_the_plain_reference(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "bc", "é", "字", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}", "\u{85}", "\u{2028}", "\u{1f}",
                ]),
                0..40,
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
