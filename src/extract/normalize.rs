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
fn push_collapsed(line: &str, out: &mut String) -> bool {
    let start = out.len();
    let mut pending_space = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    // Copy maximal runs of non-whitespace in one push, which keeps the
    // common ASCII case close to memcpy speed.
    while i < bytes.len() {
        let b = bytes[i];
        let (is_space, width) = if b < 0x80 {
            (matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'), 1)
        } else {
            // `line` is valid UTF-8 and `i` is at a char boundary here.
            let c = line[i..].chars().next().unwrap_or('\u{FFFD}');
            (c.is_whitespace(), c.len_utf8())
        };
        if is_space {
            pending_space = true;
            i += width;
            continue;
        }
        if pending_space && out.len() > start {
            out.push(' ');
        }
        pending_space = false;
        let run_start = i;
        i += width;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                    break;
                }
                i += 1;
            } else {
                let c = line[i..].chars().next().unwrap_or('\u{FFFD}');
                if c.is_whitespace() {
                    break;
                }
                i += c.len_utf8();
            }
        }
        out.push_str(&line[run_start..i]);
    }
    out.len() > start
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
}
