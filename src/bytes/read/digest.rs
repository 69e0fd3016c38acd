//! `WARC-Payload-Digest` values, normalized so that the same digest
//! written two ways compares equal.
//!
//! Writers differ: Heritrix, wget and warcio write `sha1:` and 32 base32
//! characters (RFC 4648, upper case), others base16, some `sha-1` or
//! `SHA1`, some add padding. A digest is reduced to its algorithm (lower
//! case, without `-`) and its raw bytes, and kept as the xxh3-128 of those
//! ([`Digest`]): 16 bytes whatever the algorithm, which is what the
//! fingerprint stage's copy index needs, and equal exactly when algorithm
//! and bytes are equal (up to a 2^-128 accident).
//!
//! Base32 and base16 are decoded by hand: two short loops do not justify a
//! dependency, and the alphabets are fixed by the standard.

use std::cell::RefCell;

use xxhash_rust::xxh3::xxh3_128;

/// A normalized payload digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest(pub u128);

/// Byte lengths of the digests writers use, by normalized algorithm name.
fn known_len(algorithm: &str) -> Option<usize> {
    match algorithm {
        "md5" => Some(16),
        "sha1" => Some(20),
        "sha224" => Some(28),
        "sha256" => Some(32),
        "sha384" => Some(48),
        "sha512" => Some(64),
        _ => None,
    }
}

/// Parses a `WARC-Payload-Digest` value (`algorithm:value`). The value is
/// read as base16 when it is hex digits of exactly the algorithm's length
/// (or of any even length for an unknown algorithm), otherwise as base32;
/// a value that is neither is kept as written, so that two records with
/// the same odd value still match. `None` when there is no `:` or either
/// side is empty.
pub(crate) fn parse(value: &str) -> Option<Digest> {
    sha1_base32(value).or_else(|| parse_general(value))
}

/// [`parse`] for any value, without the fast path for what writers write.
fn parse_general(value: &str) -> Option<Digest> {
    let (algorithm, encoded) = value.trim().split_once(':')?;
    let encoded = encoded.trim();
    // The key (algorithm, a NUL, the raw bytes) is built in a buffer of
    // the thread's: every response record has a digest, and the
    // algorithm, the raw bytes and the key were each allocated for it.
    KEY.with_borrow_mut(|key| {
        key.clear();
        let mut utf8 = [0; 4];
        for c in algorithm.trim().chars().filter(|&c| c != '-' && c != '_').flat_map(char::to_lowercase) {
            key.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
        if key.is_empty() || encoded.is_empty() {
            return None;
        }
        let hex_len_fits = match std::str::from_utf8(key).ok().and_then(known_len) {
            Some(n) => encoded.len() == 2 * n,
            None => encoded.len() % 2 == 0,
        };
        key.push(0);
        let raw = key.len();
        let decoded = if hex_len_fits && encoded.bytes().all(|b| b.is_ascii_hexdigit()) {
            base16(encoded, key)
        } else {
            base32(encoded, key)
        };
        if !decoded {
            key.truncate(raw);
            key.extend_from_slice(encoded.as_bytes());
        }
        Some(Digest(xxh3_128(key)))
    })
}

/// The digest of `sha1:` and 32 upper-case base32 characters, what
/// Heritrix, wget and warcio write on every response, as [`parse`] makes
/// it, decoded in place; `None` for any other value, which `parse` reads
/// the general way. The general way took about 1,900 instructions a
/// record, 0.6% of the fingerprint stage's (`callgrind`, one thread, 40 MB
/// of the generated crawl at the paper's page size).
fn sha1_base32(value: &str) -> Option<Digest> {
    const PREFIX: &[u8] = b"sha1\0";
    let encoded: &[u8; 32] = value.strip_prefix("sha1:")?.as_bytes().try_into().ok()?;
    let mut key = [0u8; PREFIX.len() + 20];
    key[..PREFIX.len()].copy_from_slice(PREFIX);
    // Eight characters are five bytes.
    for (chars, out) in encoded.chunks_exact(8).zip(key[PREFIX.len()..].chunks_exact_mut(5)) {
        let mut acc = 0u64;
        for &c in chars {
            acc = acc << 5 | u64::from(base32_digit(c)?);
        }
        out.copy_from_slice(&acc.to_be_bytes()[3..]);
    }
    Some(Digest(xxh3_128(&key)))
}

/// The `WARC-Payload-Digest` (or `WARC-Block-Digest`) value of `bytes` as
/// Heritrix, wget and warcio write it: `sha1:` and 32 upper-case base32
/// characters. For records `overlap dedup` writes that had none.
pub(crate) fn sha1_value(bytes: &[u8]) -> String {
    use sha1::{Digest as _, Sha1};
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let hash = Sha1::digest(bytes);
    let mut out = String::with_capacity(37);
    out.push_str("sha1:");
    // Five bytes are eight characters.
    for five in hash.chunks_exact(5) {
        let acc = five.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        for shift in (0..8).rev() {
            out.push(char::from(ALPHABET[(acc >> (shift * 5) & 31) as usize]));
        }
    }
    out
}

thread_local! {
    static KEY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Appends the bytes of base16 `s` (of even length) to `out`; false if a
/// character is not a hex digit.
fn base16(s: &str, out: &mut Vec<u8>) -> bool {
    let digit = |b: u8| char::from(b).to_digit(16);
    for pair in s.as_bytes().chunks(2) {
        match pair {
            [hi, lo] => match (digit(*hi), digit(*lo)) {
                (Some(hi), Some(lo)) => out.push((hi * 16 + lo) as u8),
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

/// The value of an upper-case RFC 4648 base32 character.
#[inline]
fn base32_digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'2'..=b'7' => Some(c - b'2' + 26),
        _ => None,
    }
}

/// Appends the bytes of RFC 4648 base32 `s` (either case, `=` padding
/// optional) to `out`; false if a character is not base32.
fn base32(s: &str, out: &mut Vec<u8>) -> bool {
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.trim_end_matches('=').bytes() {
        let Some(v) = base32_digit(b.to_ascii_uppercase()) else {
            return false;
        };
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_and_base16_of_the_same_sha1_are_equal() {
        // sha1("hello") = aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d
        let b16 = parse("sha1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d").unwrap();
        let b32 = parse("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N").unwrap();
        assert_eq!(b16, b32);
        assert_eq!(parse(" SHA-1:vl2mmho4yxukfwv63yhtwsbm3gxksq2n ").unwrap(), b32);
        assert_eq!(parse("sha1:AAF4C61DDCC5E8A2DABEDE0F3B482CD9AEA9434D").unwrap(), b32);
        // Another digest, another algorithm with the same bytes: different.
        assert_ne!(parse("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2O").unwrap(), b32);
        assert_ne!(parse("md5:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N").unwrap(), b32);
    }

    #[test]
    fn the_key_is_the_algorithm_a_nul_and_the_bytes() {
        // Analyses written before keep their digests: the key must not move.
        let mut sha1 = b"sha1\0".to_vec();
        sha1.extend_from_slice(&[0xaa, 0xf4, 0xc6, 0x1d, 0xdc, 0xc5, 0xe8, 0xa2, 0xda, 0xbe]);
        sha1.extend_from_slice(&[0xde, 0x0f, 0x3b, 0x48, 0x2c, 0xd9, 0xae, 0xa9, 0x43, 0x4d]);
        assert_eq!(parse("SHA-1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"), Some(Digest(xxh3_128(&sha1))));
        // Neither base16 nor base32: kept as written.
        assert_eq!(parse("x_y:ab!"), Some(Digest(xxh3_128(b"xy\0ab!"))));
        // An odd length of hex digits for an unknown algorithm is base32.
        assert_eq!(parse("foo:abc"), Some(Digest(xxh3_128(b"foo\0\x00"))));
    }

    proptest::proptest! {
        #[test]
        fn the_sha1_fast_path_gives_what_the_general_way_gives(
            mut chars in proptest::collection::vec(proptest::sample::select(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".to_vec()), 30..34),
            // One character made lower case, one that is not base32, or
            // padding, at some place; or none.
            change in proptest::option::of((0usize..34, proptest::sample::select(b"az0189=!".to_vec()))),
            prefix in proptest::sample::select(vec!["sha1:", "SHA1:", "sha-1:", " sha1:", "sha1: "]),
        ) {
            if let Some((at, c)) = change {
                let at = at % chars.len();
                chars[at] = c;
            }
            let value = format!("{prefix}{}", String::from_utf8(chars).unwrap());
            let fast = sha1_base32(&value);
            if fast.is_some() {
                proptest::prop_assert_eq!(fast, parse_general(&value));
            }
            // Whatever path it takes, parse agrees with the general way.
            proptest::prop_assert_eq!(parse(&value), parse_general(&value));
        }
    }

    #[test]
    fn the_sha1_fast_path_takes_what_writers_write() {
        let value = "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N";
        assert!(sha1_base32(value).is_some());
        assert_eq!(sha1_base32(value), parse_general(value));
        for other in [
            "sha1:vl2mmho4yxukfwv63yhtwsbm3gxksq2n",
            "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2",
            "SHA1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N",
        ] {
            assert_eq!(sha1_base32(other), None, "{other}");
        }
    }

    #[test]
    fn padding_odd_values_and_bad_fields() {
        let base32 = |s: &str| {
            let mut out = Vec::new();
            base32(s, &mut out).then_some(out)
        };
        assert_eq!(base32("MZXW6==="), Some(b"foo".to_vec()));
        assert_eq!(base32("MZXW6"), Some(b"foo".to_vec()));
        assert_eq!(base32("MZ!W6"), None);
        assert_eq!(parse("sha256:not base32!"), parse("sha256:not base32!"));
        assert!(parse("sha256:not base32!").is_some());
        assert_eq!(parse("nocolon"), None);
        assert_eq!(parse("sha1:"), None);
        assert_eq!(parse(":abc"), None);
    }

    #[test]
    fn sha1_value_is_what_writers_write() {
        // sha1("hello world"), as base32.
        assert_eq!(sha1_value(b"hello world"), "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN");
        assert!(sha1_base32(&sha1_value(b"x")).is_some(), "read back by the fast path");
    }
}
