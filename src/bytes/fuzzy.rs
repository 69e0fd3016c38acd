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

use rustc_hash::FxHasher;

use md5::{Digest, Md5};

use crate::bytes::scan::byteclass::{self, below};
use crate::bytes::scan::swar;

/// YaCy's defaults.
pub const MIN_TOKEN_LEN: usize = 2;
pub const QUANT_RATE: f64 = 0.01;

/// The profile text of `text`.
#[cfg(test)]
fn profile(text: &str, min_token_len: usize, quant_rate: f64) -> String {
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
        let r = f(counts);
        // The table of a huge page is not kept for the rest of the run:
        // kept by every worker thread, the tables of 8 MiB pages held
        // 24 MiB each through the later stages.
        if counts.held() > KEPT_BYTES {
            *counts = TokenCounts::default();
        }
        r
    };
    COUNTS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut counts) => run(&mut counts),
        // Only reachable if `f` re-entered this module; stay correct.
        Err(_) => run(&mut TokenCounts::default()),
    })
}

/// Steps 1 and 2: counts the tokens longer than `counts.min_token_len`.
///
/// The text is classed 64 bytes at a time into two bitmaps ([`classes64`]):
/// bytes that may be part of a token (ASCII letters and digits, and every
/// byte of a multi-byte character), and the multi-byte ones. Each run of
/// set bits is then one token, found with two bit scans; a run scan per
/// token mispredicted its exit at nearly every word. A run of ASCII only
/// (most of them) is lowercased by setting bit 0x20, which maps `A-Z` to
/// `a-z` and leaves digits alone; a run that holds a multi-byte character
/// is read char by char ([`unicode_token`]), since only Unicode's tables
/// say which such characters are letters.
fn count_tokens(text: &str, counts: &mut TokenCounts) {
    let bytes = text.as_bytes();
    let mut token = std::mem::take(&mut counts.token);
    // A run that reached the end of the previous block: where it starts,
    // and whether it holds a multi-byte character so far.
    let mut open: Option<(usize, bool)> = None;
    let mut base = 0;
    while base < bytes.len() {
        let (word, wide) = classes64(&bytes[base..]);
        let mut from = 0;
        if let Some((start, was_wide)) = open {
            // The open run goes on through the block's first set bits.
            let len = (!word).trailing_zeros();
            let wide = was_wide || wide & below(len) != 0;
            if len == 64 {
                open = Some((start, wide));
                base += 64;
                continue;
            }
            run(text, start, base + len as usize, wide, &mut token, counts);
            open = None;
            from = len;
        }
        // The runs that start in this block and are long enough to hold a
        // counted token, or may be (they reach the block's end).
        let mut rest = word & !(word << 1) & long_enough(word, counts.min_token_len) & !below(from);
        while rest != 0 {
            let start = rest.trailing_zeros();
            let ends = !word & !below(start);
            if ends == 0 {
                open = Some((base + start as usize, wide >> start != 0));
                break;
            }
            let end = ends.trailing_zeros();
            let is_wide = wide & below(end) & !below(start) != 0;
            run(text, base + start as usize, base + end as usize, is_wide, &mut token, counts);
            rest &= !below(end);
        }
        base += 64;
    }
    if let Some((start, wide)) = open {
        run(text, start, bytes.len(), wide, &mut token, counts);
    }
    counts.token = token;
}

/// The bits `k` of `word` followed by `min_token_len` more set bits, the
/// bits past the block's end taken as set: where a run of more than
/// `min_token_len` bytes may start. A shorter run holds no token that
/// counts (a character is at least a byte), so the tokenizer never visits
/// it. Visiting every run and dropping the short ones by a branch took
/// 6% more time on the documentation crawl's plain text and 9% more on
/// its HTML pages' text (`examples/extract.rs`, medians of seven
/// interleaved rounds, the same signatures).
#[inline]
fn long_enough(word: u64, min_token_len: usize) -> u64 {
    if min_token_len >= 8 {
        return u64::MAX;
    }
    let mut long = word;
    for shift in 1..=min_token_len as u32 {
        long &= (word >> shift) | !(u64::MAX >> shift);
    }
    long
}

/// Two bitmaps of the first 64 bytes of `bytes` (fewer at the end, the
/// rest read as separators): bit `k` of the first is set when byte `k` is
/// an ASCII letter or digit or is not ASCII, of the second when it is not
/// ASCII.
#[inline]
fn classes64(bytes: &[u8]) -> (u64, u64) {
    let mut buf = [0; 64];
    let block = byteclass::block(bytes, 0, &mut buf);
    let wide = byteclass::in_ranges(block, &[(0x80, 0xff)]);
    let word = byteclass::in_ranges(block, &[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')]) | wide;
    (word, wide)
}

/// Counts the run `start..end` of token bytes: one ASCII token, or, when
/// `wide`, the tokens that its non-alphanumeric characters separate.
#[inline]
fn run(text: &str, start: usize, end: usize, wide: bool, token: &mut Vec<u8>, counts: &mut TokenCounts) {
    if wide {
        let mut i = start;
        while i < end {
            i = unicode_token(text, i, token, counts);
        }
        return;
    }
    let bytes = text.as_bytes();
    let len = end - start;
    if len <= counts.min_token_len {
        return;
    }
    match bytes.get(start..start + SHORT) {
        Some(window) if len <= SHORT => {
            let (a, b) = pack_ascii(window, len);
            counts.add_short(a, b, len as u32);
        }
        _ => {
            token.clear();
            token.extend(bytes[start..end].iter().map(|&b| b | 0x20));
            counts.add(token);
        }
    }
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
fn write_profile(counts: &mut TokenCounts, quant_rate: f64, out: &mut Vec<u8>) {
    let max_freq = u64::from(counts.max);
    let mut quant = (max_freq as f64 * quant_rate).round() as u64;
    if quant < 2 {
        quant = if max_freq > 1 { 2 } else { 1 };
    }
    // Of each kept token, its entry with the count rounded down to QUANT,
    // and a sort key: the complement of that count (counts are 32-bit)
    // above the token's first 12 bytes as a big-endian number (zero-padded:
    // tokens hold no NUL, so numbers order as the bytes do). The keys are
    // sorted as plain `u128`s, a few instructions a comparison; only runs
    // of equal keys (tokens of more than 12 bytes that share their first
    // 12 and their count) are then ordered by their bytes. A short token
    // (nearly all) is never copied out of its entry's two words but to the
    // profile, 16 bytes at once: copying each token's bytes twice more, by
    // length, made 917 thousand `memcpy` calls on 40 MB of the generated
    // crawl at the paper's page size (247 thousand now; `callgrind`). No
    // allocation per token, nor per page once the thread's scratch has
    // grown.
    let mut kept = std::mem::take(&mut counts.kept);
    kept.clear();
    let mut long_bytes = 0;
    for &i in &counts.used {
        let mut e = counts.slots[i as usize];
        if u64::from(e.count) < quant {
            continue;
        }
        e.count = (u64::from(e.count) / quant * quant) as u32;
        let (a, b) = if e.len as usize <= SHORT {
            (e.a, e.b)
        } else {
            long_bytes += e.len as usize;
            let start = e.a as usize;
            pack(&counts.arena[start..start + 12])
        };
        let head = u128::from(a.swap_bytes()) << 32 | u128::from((b as u32).swap_bytes());
        kept.push((u128::from(!e.count) << 96 | head, e));
    }
    kept.sort_unstable_by_key(|k| k.0);
    let arena = &counts.arena;
    for run in kept.chunk_by_mut(|x, y| x.0 == y.0).filter(|run| run.len() > 1) {
        // Equal keys, so equal counts: by bytes.
        run.sort_unstable_by(|x, y| {
            let (mut bx, mut by) = ([0; SHORT], [0; SHORT]);
            token_bytes(&x.1, arena, &mut bx).cmp(token_bytes(&y.1, arena, &mut by))
        });
    }
    out.reserve(long_bytes + (SHORT + 12) * kept.len());
    for (_, e) in &kept {
        if e.len as usize <= SHORT {
            out.extend_from_slice(&unpack(e.a, e.b));
            out.truncate(out.len() - (SHORT - e.len as usize));
        } else {
            out.extend_from_slice(&arena[e.a as usize..e.a as usize + e.len as usize]);
        }
        out.push(b' ');
        push_decimal(out, u64::from(e.count));
        out.push(b'\n');
    }
    // Lines are joined by newlines, not ended by them.
    if !kept.is_empty() {
        out.pop();
    }
    // Kept for the next page unless a large one grew it past what a usual
    // page needs (4,096 kept tokens).
    if kept.capacity() <= KEPT_SCRATCH {
        counts.kept = kept;
    }
}

/// The bytes of the token of `e`: out of its two words into `buf` when
/// short, else in the arena.
fn token_bytes<'a>(e: &Entry, arena: &'a [u8], buf: &'a mut [u8; SHORT]) -> &'a [u8] {
    let len = e.len as usize;
    if len <= SHORT {
        *buf = unpack(e.a, e.b);
        &buf[..len]
    } else {
        &arena[e.a as usize..e.a as usize + len]
    }
}

/// The most kept tokens whose scratch [`write_profile`] keeps for the next
/// page (192 KB of keys and entries).
const KEPT_SCRATCH: usize = 4096;

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
    let (low, high) = PACK_MASKS[len.min(SHORT)];
    (word(0) & low, word(8) & high)
}

/// The masks that keep the first `len` bytes of two words, for each `len`
/// up to [`SHORT`]: one load instead of two branches per token.
static PACK_MASKS: [(u64, u64); SHORT + 1] = {
    let mut masks = [(0u64, 0u64); SHORT + 1];
    let mut len = 0;
    while len <= SHORT {
        masks[len] = (swar::keep_bytes(len), swar::keep_bytes(len.saturating_sub(8)));
        len += 1;
    }
    masks
};

/// The bytes of a short token's two words, as [`pack`] made them: the
/// token, then zeros.
#[inline]
fn unpack(a: u64, b: u64) -> [u8; SHORT] {
    let mut bytes = [0; SHORT];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    bytes
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
/// arena from `a`, with its hash in `b`. `len` 0 marks an empty slot.
#[derive(Clone, Copy, Default)]
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

/// The slot a hash starts its probe at: the high bits folded onto the low
/// ones, since a multiplicative hash leaves its low bits weak.
#[inline]
fn home(hash: u64, mask: usize) -> usize {
    (hash ^ (hash >> 29)) as usize & mask
}

/// Occurrences of each token of one text. Short tokens live in their
/// entries, so counting one is a hash of two words and a comparison of two
/// words: no copy, no `memcmp`. Longer ones are stored once, end to end,
/// in an arena. (A `HashMap<String, _>` spent most of its time allocating
/// keys: 61 MB/s of text.)
///
/// The table is open addressing with linear probing, written here rather
/// than taken from a hash-map crate: a page's few hundred distinct tokens
/// fit a table of some kilobytes, where one probe is a load and a compare,
/// and the slots in use are listed, so emptying the table for the next
/// page and listing its tokens touch only those.
#[derive(Default)]
struct TokenCounts {
    arena: Vec<u8>,
    /// A power of two many slots, at most half of them in use.
    slots: Vec<Entry>,
    /// The slots in use.
    used: Vec<u32>,
    /// The largest count so far.
    max: u32,
    min_token_len: usize,
    /// Scratch for a token that is lowercased char by char.
    token: Vec<u8>,
    /// Scratch for the profile text that [`fuzzy`] hashes.
    profile: Vec<u8>,
    /// Scratch of [`write_profile`]: the kept tokens' sort keys and entries.
    kept: Vec<(u128, Entry)>,
}

/// The most slots a table starts with: enough for a 1 MiB text.
const START_SLOTS_MAX: usize = 1 << 17;

/// The most heap bytes a thread's table keeps from one text to the next.
const KEPT_BYTES: usize = 4 << 20;

impl TokenCounts {
    /// The heap bytes the table holds.
    fn held(&self) -> usize {
        self.arena.capacity()
            + self.slots.capacity() * std::mem::size_of::<Entry>()
            + self.used.capacity() * 4
            + self.token.capacity()
            + self.profile.capacity()
            + self.kept.capacity() * std::mem::size_of::<(u128, Entry)>()
    }

    /// Empties the table for a text of `text_len` bytes, keeping the memory
    /// unless it is far more than the text needs.
    fn reset(&mut self, text_len: usize, min_token_len: usize) {
        self.min_token_len = min_token_len;
        self.max = 0;
        self.arena.clear();
        // Distinct tokens of at least 3 characters and a separator: rarely
        // more than one per 16 bytes of text; twice as many slots.
        // A table of up to 4,096 slots (96 KB) is kept for any text, so
        // that pages of mixed sizes do not reallocate it each time.
        // A longer text starts at the size of a 1 MiB one's and grows as
        // it needs: a page's distinct tokens level off as its vocabulary
        // is used up, and a table sized by the text alone took three
        // times the text (24 bytes a slot, a slot per 8 bytes).
        let wanted = ((text_len / 16).max(64).next_power_of_two() * 2).min(START_SLOTS_MAX);
        if self.slots.len() < wanted || self.slots.len() > (wanted * 4).max(4096) {
            self.slots = vec![Entry::default(); wanted];
        } else {
            for &i in &self.used {
                self.slots[i as usize].len = 0;
            }
        }
        self.used.clear();
    }

    #[inline]
    fn add_short(&mut self, a: u64, b: u64, len: u32) {
        self.add_with(short_hash(a, b, len), |e, _| e.a == a && e.b == b && e.len == len, |_| (a, b), len);
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
        let same = |e: &Entry, arena: &[u8]| {
            e.b == hash && e.len == len && &arena[e.a as usize..e.a as usize + token.len()] == token
        };
        let store = |arena: &mut Vec<u8>| {
            let start = arena.len() as u64;
            arena.extend_from_slice(token);
            (start, hash)
        };
        self.add_with(hash, same, store, len);
    }

    /// Counts one occurrence of the token that `same` recognizes, storing
    /// it as `store` says when it is new.
    #[inline]
    fn add_with(
        &mut self,
        hash: u64,
        same: impl Fn(&Entry, &[u8]) -> bool,
        store: impl FnOnce(&mut Vec<u8>) -> (u64, u64),
        len: u32,
    ) {
        let mask = self.slots.len() - 1;
        let mut i = home(hash, mask);
        loop {
            let e = &mut self.slots[i];
            if e.len == 0 {
                let (a, b) = store(&mut self.arena);
                *e = Entry { a, b, len, count: 1 };
                self.used.push(i as u32);
                self.max = self.max.max(1);
                if self.used.len() * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            if same(e, &self.arena) {
                e.count += 1;
                self.max = self.max.max(e.count);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table, moving every entry in use.
    #[cold]
    fn grow(&mut self) {
        let entries: Vec<Entry> = self.used.iter().map(|&i| self.slots[i as usize]).collect();
        self.slots = vec![Entry::default(); self.slots.len() * 2];
        self.used.clear();
        let mask = self.slots.len() - 1;
        for e in entries {
            let mut i = home(e.hash(), mask);
            while self.slots[i].len != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = e;
            self.used.push(i as u32);
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

    #[test]
    fn many_distinct_tokens_grow_the_table() {
        // Four-letter tokens, far more distinct ones than one per 16 bytes,
        // some long ones among them, each seen twice: the table grows many
        // times within one text.
        let mut text = String::new();
        for _ in 0..2 {
            for i in 0..6000u32 {
                let word: String = (0..4).map(|k| char::from(b'a' + (i / 26u32.pow(k) % 26) as u8)).collect();
                text.push_str(&word);
                text.push(if i % 97 == 0 { '-' } else { ' ' });
                if i % 500 == 0 {
                    text.push_str(&format!("{word}longerthansixteenbytes "));
                }
            }
        }
        assert_eq!(profile(&text, 2, 0.01), plain_profile(&text, 2, 0.01));
        assert_eq!(profile(&text, 2, 0.01).lines().count(), 6000 + 12);
    }

    #[test]
    fn tokens_across_block_edges_match_the_plain_steps() {
        // Every token of these crosses a 64-byte block edge at some shift,
        // and two are longer than a whole block.
        let long = "Abcdefghij".repeat(8);
        let wide = "éa".repeat(40);
        let body = format!("{long} one Two one two {wide} {long} café-CAFÉ café {wide}x,{long}");
        for shift in 0..130 {
            let text = format!("{}{body}", ".".repeat(shift));
            // Short runs are passed over by their length (`long_enough`),
            // which depends on MIN_TOKEN_LEN, up to 8.
            for min in [0, 2, 5, 7, 8] {
                assert_eq!(
                    profile(&text, min, 0.01),
                    plain_profile(&text, min, 0.01),
                    "shift {shift}, {min}"
                );
                let cut = &text[..text.len() - 1];
                assert_eq!(
                    profile(cut, min, 0.01),
                    plain_profile(cut, min, 0.01),
                    "shift {shift}, {min}, cut"
                );
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
                    // Tokens that share their first 12 bytes, long and
                    // short: equal sort keys when their counts are equal.
                    "abcdefghijklmnopqrX", "ABCDEFGHIJKLMNOPQRy", "abcdefghijklmN", "abcdefghijkl",
                ]),
                0..80,
            ),
            min in 0usize..10,
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
