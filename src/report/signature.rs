//! YaCy's fuzzy signature: the MD5 of a text "profile" (after Nutch's
//! TextProfileSignature), equal for texts whose frequent words occur about
//! equally often.
//!
//! 1. Lowercase letters and digits form tokens; every other character
//!    separates them.
//! 2. Tokens of `min_token_len` characters or fewer are dropped.
//! 3. QUANT = round(maxFreq x `quant_rate`), raised to 2 when below 2 and
//!    maxFreq > 1 (so words seen once never count), else 1.
//! 4. Each count is rounded down to a multiple of QUANT; tokens left below
//!    QUANT are dropped.
//! 5. The profile is `token count` lines joined by `\n`, by decreasing
//!    count; ties by token (YaCy leaves them in hash-map order, which
//!    would make the signature depend on the implementation).
//! 6. The signature is the MD5 of the profile's UTF-8 bytes.

use std::collections::HashMap;

use md5::{Digest, Md5};

/// YaCy's defaults.
pub const MIN_TOKEN_LEN: usize = 2;
pub const QUANT_RATE: f64 = 0.01;

/// The profile text of `text`.
pub fn profile(text: &str, min_token_len: usize, quant_rate: f64) -> String {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut token = String::new();
    let mut chars = 0usize;
    let mut flush = |token: &mut String, chars: &mut usize| {
        if *chars > min_token_len {
            *counts.entry(std::mem::take(token)).or_default() += 1;
        }
        token.clear();
        *chars = 0;
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            token.extend(c.to_lowercase());
            chars += 1;
        } else if chars > 0 {
            flush(&mut token, &mut chars);
        }
    }
    flush(&mut token, &mut chars);
    let max_freq = counts.values().copied().max().unwrap_or(0);
    let mut quant = (max_freq as f64 * quant_rate).round() as u64;
    if quant < 2 {
        quant = if max_freq > 1 { 2 } else { 1 };
    }
    let mut kept: Vec<(String, u64)> =
        counts.into_iter().map(|(t, n)| (t, n / quant * quant)).filter(|&(_, n)| n >= quant).collect();
    kept.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let lines: Vec<String> = kept.into_iter().map(|(t, n)| format!("{t} {n}")).collect();
    lines.join("\n")
}

/// The fuzzy signature of `text`.
pub fn fuzzy(text: &str, min_token_len: usize, quant_rate: f64) -> u128 {
    let digest = Md5::digest(profile(text, min_token_len, quant_rate).as_bytes());
    u128::from_be_bytes(digest.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_follows_the_steps() {
        // "the" x4, "cat" x3, "sat" x2, "on" (too short), "a" (too short),
        // "mat" x1 (below QUANT = 2).
        let text = "The cat sat on the mat. The cat sat; THE CAT, a";
        assert_eq!(profile(text, 2, 0.01), "the 4\ncat 2\nsat 2");
        // A longer MIN_TOKEN_LEN drops three-letter words.
        assert_eq!(profile(text, 3, 0.01), "");
        // Digits are letters; punctuation separates.
        assert_eq!(profile("v2.0 v2.0 abc1 abc1", 2, 0.01), "abc1 2");
    }

    #[test]
    fn small_edits_keep_the_signature() {
        let base = "alpha beta gamma delta ".repeat(20);
        let edited = format!("{base} epsilon");
        assert_eq!(fuzzy(&base, 2, 0.01), fuzzy(&edited, 2, 0.01));
        assert_ne!(fuzzy(&base, 2, 0.01), fuzzy("something else entirely else", 2, 0.01));
        // MD5 of the empty profile, as YaCy computes it.
        assert_eq!(format!("{:032x}", fuzzy("", 2, 0.01)), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
