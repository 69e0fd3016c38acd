//! YaCy's fuzzy signature: the MD5 of a text "profile" (after Nutch's
//! TextProfileSignature), equal for texts whose frequent words occur about
//! equally often. The fingerprint stage computes it with the defaults for
//! every document while it holds the text (`fuzzy.fpd`); the report reads
//! the inputs again only for other parameters.
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

use std::cell::RefCell;
use std::hash::Hasher;

use hashbrown::HashTable;
use hashbrown::hash_table;
use rustc_hash::FxHasher;

use md5::{Digest, Md5};

use crate::swar;

/// YaCy's defaults.
pub const MIN_TOKEN_LEN: usize = 2;
pub const QUANT_RATE: f64 = 0.01;

/// The profile text of `text`.
pub fn profile(text: &str, min_token_len: usize, quant_rate: f64) -> String {
    let mut out = Vec::new();
    with_counts(text, min_token_len, |counts| write_profile(counts, quant_rate, &mut out));
    // Tokens are whole lowercased characters, so this is always UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The fuzzy signature of `text`.
pub fn fuzzy(text: &str, min_token_len: usize, quant_rate: f64) -> u128 {
    with_counts(text, min_token_len, |counts| {
        let mut scratch = std::mem::take(&mut counts.profile);
        scratch.clear();
        write_profile(counts, quant_rate, &mut scratch);
        let digest = Md5::digest(&scratch);
        counts.profile = scratch;
        u128::from_be_bytes(digest.into())
    })
}

thread_local! {
    /// One table per thread, kept across documents: allocating and growing
    /// a table and its arena for every page cost more than counting.
    static COUNTS: RefCell<TokenCounts> = RefCell::new(TokenCounts::default());
}

/// Counts the tokens of `text` longer than `min_token_len` into this
/// thread's table and calls `f` on it.
fn with_counts<R>(text: &str, min_token_len: usize, f: impl FnOnce(&mut TokenCounts) -> R) -> R {
    let run = |counts: &mut TokenCounts| {
        counts.reset(text.len(), min_token_len);
        count_tokens(text, counts);
        f(counts)
    };
    COUNTS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut counts) => run(&mut counts),
        // Only reachable if `f` re-entered this module; stay correct.
        Err(_) => run(&mut TokenCounts::default()),
    })
}

/// Byte classes of the tokenizer: an ASCII letter or digit, another ASCII
/// byte (a separator), or a byte of a multi-byte character.
const SEPARATOR: u8 = 0;
const ALNUM: u8 = 1;
const MULTIBYTE: u8 = 2;

static CLASSES: [u8; 256] = {
    let mut table = [SEPARATOR; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c >= 0x80 {
            table[b] = MULTIBYTE;
        } else if c.is_ascii_alphanumeric() {
            table[b] = ALNUM;
        }
        b += 1;
    }
    table
};

/// Steps 1 and 2: counts the tokens longer than `counts.min_token_len`.
///
/// A token of ASCII letters and digits (most of them) is found as one run
/// of bytes and lowercased by setting bit 0x20, which maps `A-Z` to `a-z`
/// and leaves digits alone; only a token that touches a non-ASCII
/// character is decoded char by char, from its first byte, exactly as
/// before. Runs are measured eight bytes at a time ([`alnum_bytes`]): a
/// byte loop mispredicted its exit at the end of nearly every word.
fn count_tokens(text: &str, counts: &mut TokenCounts) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut token = std::mem::take(&mut counts.token);
    let mut i = 0;
    loop {
        i = separators_end(bytes, i);
        if i >= n {
            break;
        }
        let start = i;
        if bytes[i] < 0x80 {
            i = alnum_end(bytes, i + 1);
            if i == n || bytes[i] < 0x80 {
                let len = i - start;
                if len > counts.min_token_len {
                    if len <= SHORT && start + SHORT <= n {
                        let (a, b) = pack_ascii(&bytes[start..start + SHORT], len);
                        counts.add_short(a, b, len as u32);
                    } else {
                        token.clear();
                        token.extend(bytes[start..i].iter().map(|&b| b | 0x20));
                        counts.add(&token);
                    }
                }
                continue;
            }
        }
        i = unicode_token(text, start, &mut token, counts);
    }
    counts.token = token;
}

/// The high bit of every byte of `x` that is an ASCII letter or digit.
/// Setting bit 0x20 folds `A-Z` onto `a-z` and moves no other byte into
/// that range.
#[inline]
fn alnum_bytes(x: u64) -> u64 {
    let letters = swar::in_range((x | (swar::ONES * 0x20)) & !swar::HIGH, b'a', b'z');
    let digits = swar::in_range(x & !swar::HIGH, b'0', b'9');
    (letters | digits) & !x
}

/// The end of the run of ASCII letters and digits at `i`.
#[inline]
fn alnum_end(bytes: &[u8], i: usize) -> usize {
    swar::find(bytes, i, |x| !alnum_bytes(x), |b| CLASSES[usize::from(b)] != ALNUM)
}

/// The end of the run of ASCII separators at `i`: the next ASCII letter or
/// digit, or non-ASCII byte.
#[inline]
fn separators_end(bytes: &[u8], i: usize) -> usize {
    swar::find(bytes, i, |x| alnum_bytes(x) | x, |b| CLASSES[usize::from(b)] != SEPARATOR)
}

/// Reads the token (or the one separator character) at `start` char by
/// char, with Unicode's alphanumeric property and lowercase mapping, counts
/// it, and returns where it ends.
#[cold]
fn unicode_token(text: &str, start: usize, token: &mut Vec<u8>, counts: &mut TokenCounts) -> usize {
    token.clear();
    let mut chars = 0usize;
    let mut end = start;
    for c in text[start..].chars() {
        if c.is_ascii() {
            if !c.is_ascii_alphanumeric() {
                break;
            }
            token.push(c.to_ascii_lowercase() as u8);
        } else if c.is_alphanumeric() {
            let mut buf = [0; 4];
            for lower in c.to_lowercase() {
                token.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            }
        } else {
            if chars == 0 {
                // A separator character: step over it.
                return start + c.len_utf8();
            }
            break;
        }
        chars += 1;
        end += c.len_utf8();
    }
    if chars > counts.min_token_len {
        counts.add(token);
    }
    end
}

/// Steps 3 to 5: appends the profile of the counted tokens to `out`.
fn write_profile(counts: &TokenCounts, quant_rate: f64, out: &mut Vec<u8>) {
    let max_freq = u64::from(counts.max);
    let mut quant = (max_freq as f64 * quant_rate).round() as u64;
    if quant < 2 {
        quant = if max_freq > 1 { 2 } else { 1 };
    }
    // The kept tokens' bytes end to end, and of each: its count, its first
    // 16 bytes as a big-endian number (zero-padded: tokens hold no NUL, so
    // numbers order as the bytes do), where it starts and its length. No
    // allocation per token, and the sort compares bytes only between long
    // tokens that share their first 16.
    let mut bytes = Vec::new();
    let mut kept: Vec<(u64, u128, usize, usize)> = Vec::new();
    counts.for_each_at_least(quant, |t, n| {
        let mut prefix = [0u8; 16];
        let head = t.len().min(16);
        prefix[..head].copy_from_slice(&t[..head]);
        kept.push((n / quant * quant, u128::from_be_bytes(prefix), bytes.len(), t.len()));
        bytes.extend_from_slice(t);
    });
    let token = |&(_, _, start, len): &(u64, u128, usize, usize)| &bytes[start..start + len];
    kept.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then_with(|| token(a).cmp(token(b))));
    for (i, t) in kept.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(token(t));
        out.push(b' ');
        push_decimal(out, t.0);
    }
}

/// Appends `n` in decimal: `write!` went through the formatting machinery
/// for every kept token of every page.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Tokens of at most this many bytes (nearly all) are kept in the table
/// entry itself, as two words.
const SHORT: usize = 16;

/// The ASCII token of `len` bytes at the start of `window` (16 bytes),
/// lowercased and zero-padded into two little-endian words. Its bytes are
/// ASCII letters and digits, so setting bit 0x20 lowercases every one.
#[inline]
fn pack_ascii(window: &[u8], len: usize) -> (u64, u64) {
    let word =
        |at: usize| u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes")) | (swar::ONES * 0x20);
    let mask = |bytes: usize| if bytes >= 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 };
    (word(0) & mask(len), word(8) & mask(len.saturating_sub(8)))
}

/// Any token of at most [`SHORT`] bytes, zero-padded into two words.
fn pack(token: &[u8]) -> (u64, u64) {
    let mut buf = [0u8; SHORT];
    buf[..token.len()].copy_from_slice(token);
    let (a, b) = buf.split_at(8);
    (u64::from_le_bytes(a.try_into().expect("8 bytes")), u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// The table hash of a short token: a folded multiply (as in wyhash and
/// foldhash) spreads it to both the low bits hashbrown takes the bucket
/// from and the top bits it takes the tag from.
#[inline]
fn short_hash(a: u64, b: u64, len: u32) -> u64 {
    let product =
        u128::from(a ^ 0x243f_6a88_85a3_08d3) * u128::from(b ^ 0x1319_8a2e_0370_7344 ^ u64::from(len));
    (product as u64) ^ ((product >> 64) as u64)
}

/// One distinct token and its count. A token of at most [`SHORT`] bytes is
/// `a`, `b` as [`pack`] makes them; a longer one is `len` bytes of the
/// arena from `a`, with its hash in `b`.
#[derive(Clone, Copy)]
struct Entry {
    a: u64,
    b: u64,
    len: u32,
    count: u32,
}

impl Entry {
    fn hash(&self) -> u64 {
        if self.len as usize <= SHORT { short_hash(self.a, self.b, self.len) } else { self.b }
    }
}

/// Occurrences of each token of one text. Short tokens live in their
/// entries, so counting one is a hash of two words and a comparison of two
/// words: no copy, no `memcmp`. Longer ones are stored once, end to end,
/// in an arena. (A `HashMap<String, _>` spent most of its time allocating
/// keys: 61 MB/s of text.)
#[derive(Default)]
struct TokenCounts {
    arena: Vec<u8>,
    table: HashTable<Entry>,
    /// The largest count so far.
    max: u32,
    min_token_len: usize,
    /// Scratch for a token that is lowercased char by char.
    token: Vec<u8>,
    /// Scratch for the profile text that [`fuzzy`] hashes.
    profile: Vec<u8>,
}

impl TokenCounts {
    /// Empties the table for a text of `text_len` bytes, keeping the memory
    /// unless it is far more than the text needs.
    fn reset(&mut self, text_len: usize, min_token_len: usize) {
        self.min_token_len = min_token_len;
        self.max = 0;
        self.arena.clear();
        // Distinct tokens of at least 3 characters and a separator: rarely
        // more than one per 16 bytes of text.
        let wanted = text_len / 16;
        if self.table.capacity() > wanted.max(4096) * 4 {
            self.table = HashTable::with_capacity(wanted);
            self.arena = Vec::new();
        } else {
            self.table.clear();
            self.table.reserve(wanted, Entry::hash);
        }
    }

    #[inline]
    fn add_short(&mut self, a: u64, b: u64, len: u32) {
        let hash = short_hash(a, b, len);
        // One probe whether the token is new or not.
        let count = match self.table.entry(hash, |e| e.a == a && e.b == b && e.len == len, Entry::hash) {
            hash_table::Entry::Occupied(mut e) => {
                e.get_mut().count += 1;
                e.get().count
            }
            hash_table::Entry::Vacant(v) => {
                v.insert(Entry { a, b, len, count: 1 });
                1
            }
        };
        self.max = self.max.max(count);
    }

    /// Counts a lowercased token.
    fn add(&mut self, token: &[u8]) {
        if token.len() <= SHORT {
            let (a, b) = pack(token);
            return self.add_short(a, b, token.len() as u32);
        }
        let mut hasher = FxHasher::default();
        hasher.write(token);
        let hash = hasher.finish();
        let len = token.len() as u32;
        let arena = &self.arena;
        let same = |e: &Entry| {
            e.b == hash && e.len == len && &arena[e.a as usize..e.a as usize + token.len()] == token
        };
        let count = match self.table.find_mut(hash, same) {
            Some(e) => {
                e.count += 1;
                e.count
            }
            None => {
                let start = self.arena.len() as u64;
                self.arena.extend_from_slice(token);
                self.table.insert_unique(hash, Entry { a: start, b: hash, len, count: 1 }, Entry::hash);
                1
            }
        };
        self.max = self.max.max(count);
    }

    /// Calls `f` with every token whose count is at least `min`, and its
    /// count.
    fn for_each_at_least(&self, min: u64, mut f: impl FnMut(&[u8], u64)) {
        for e in self.table.iter().filter(|e| u64::from(e.count) >= min) {
            if e.len as usize <= SHORT {
                let mut buf = [0u8; SHORT];
                buf[..8].copy_from_slice(&e.a.to_le_bytes());
                buf[8..].copy_from_slice(&e.b.to_le_bytes());
                f(&buf[..e.len as usize], u64::from(e.count));
            } else {
                f(&self.arena[e.a as usize..e.a as usize + e.len as usize], u64::from(e.count));
            }
        }
    }
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
    fn alnum_bytes_marks_exactly_ascii_letters_and_digits() {
        swar::assert_marks(
            alnum_bytes,
            |b| b.is_ascii_alphanumeric(),
            &[0, b'.', b'z', b'9', 0x7f, 0x80, 0xff],
        );
    }

    #[test]
    fn non_ascii_tokens_are_lowercased_and_counted() {
        assert_eq!(profile("Straße STRASSE straße Ünïcode ünïcode", 2, 0.01), "straße 2\nünïcode 2");
    }

    /// The steps as written, char by char, with a `HashMap` of `String`s.
    fn plain_profile(text: &str, min_token_len: usize, quant_rate: f64) -> String {
        let mut counts = std::collections::HashMap::<String, u64>::new();
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.chars().count() > min_token_len {
                *counts.entry(word.chars().flat_map(char::to_lowercase).collect()).or_default() += 1;
            }
        }
        let max_freq = counts.values().copied().max().unwrap_or(0);
        let mut quant = (max_freq as f64 * quant_rate).round() as u64;
        if quant < 2 {
            quant = if max_freq > 1 { 2 } else { 1 };
        }
        let mut kept: Vec<(String, u64)> =
            counts.into_iter().map(|(t, n)| (t, n / quant * quant)).filter(|&(_, n)| n >= quant).collect();
        kept.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        kept.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn mixed_scripts_match_the_plain_steps() {
        for text in [
            "Σίσυφος ΣΊΣΥΦΟΣ σίσυφος",
            "İstanbul İSTANBUL istanbul",
            "café CAFÉ café—café naïve naïve",
            "word’s word’s word\u{a0}word word",
            "٣٤٥ ٣٤٥ 字字字 字字字 ab ab",
        ] {
            for min in [0, 1, 2, 3] {
                assert_eq!(profile(text, min, 0.01), plain_profile(text, min, 0.01), "{text:?} {min}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_matches_the_plain_steps(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "Ab", "abc", "XYZ", "q9", "7", " ", ".", "\n", "é", "É", "ß", "İ", "Σ", "字", "\u{a0}", "—", "’", "٣",
                    "Abcdefgh", "ABCDEFGHIJKLMNO", "abcdefghijklmnopq", "QrStUvWxYz0123456789",
                ]),
                0..80,
            ),
            min in 0usize..4,
            rate in proptest::sample::select(vec![0.01, 0.3, 0.5]),
            padded in proptest::bool::ANY,
        ) {
            // Padding puts every token at least 16 bytes from the end.
            let text = parts.concat() + if padded { "                " } else { "" };
            proptest::prop_assert_eq!(profile(&text, min, rate), plain_profile(&text, min, rate));
        }
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
