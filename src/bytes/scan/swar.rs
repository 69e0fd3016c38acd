//! Byte classes eight at a time in a `u64` ("SIMD within a register"), for
//! the text scans that stop at the end of nearly every word: a byte loop
//! mispredicts its exit there, while one of these tests measures the whole
//! run at once. [`gather`] turns the classes of eight bytes into eight
//! bits (the portable path of [`crate::bytes::scan::byteclass`]). Plain integer
//! arithmetic, so it needs neither `unsafe` nor a CPU feature; written by
//! hand because the test each scan needs is a few lines of its own.

/// 0x01 in every byte.
pub const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte.
pub const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `low7` (bytes of at most 0x7f) that lies
/// in `lo..=hi` (both at most 0x7f).
///
/// Adding `0x80 - lo` to a byte reaches 0x80 exactly when it is at least
/// `lo`, adding `0x7f - hi` exactly when it is above `hi`; neither sum
/// passes 0xff, so nothing carries into the next byte.
#[inline]
pub fn in_range(low7: u64, lo: u8, hi: u8) -> u64 {
    debug_assert!(lo <= hi && hi <= 0x7f);
    let at_least = low7 + ONES * u64::from(0x80 - lo);
    let above = low7 + ONES * u64::from(0x7f - hi);
    at_least & !above & HIGH
}

/// The first position at or after `i` whose byte `marks` flags (by the
/// high bit of its byte in the word it returns for eight bytes, read
/// little-endian), or the end. `marked` must say the same of one byte: it
/// serves the last bytes, fewer than eight.
#[inline]
pub fn find(bytes: &[u8], mut i: usize, marks: impl Fn(u64) -> u64, marked: impl Fn(u8) -> bool) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let found = marks(x) & HIGH;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && !marked(bytes[i]) {
        i += 1;
    }
    i
}

/// The position of the first `byte` in `bytes`, eight bytes at a time.
#[inline]
pub fn find_byte(byte: u8, bytes: &[u8]) -> Option<usize> {
    let pattern = ONES * u64::from(byte);
    // The bytes equal to `byte` are the zero bytes of `x`. This flags the
    // first of them exactly, and a later byte only above a zero one (a
    // borrow runs upward from it): `find` reads only the first flag.
    let equal = |word: u64| {
        let x = word ^ pattern;
        x.wrapping_sub(ONES) & !x
    };
    let at = find(bytes, 0, equal, |b| b == byte);
    (at < bytes.len()).then_some(at)
}

/// The mask of the first `bytes` bytes of a little-endian word (all of
/// them when `bytes` is 8 or more).
#[inline]
pub const fn keep_bytes(bytes: usize) -> u64 {
    if bytes >= 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 }
}

/// The high bits of `marks`'s eight bytes gathered into one byte: bit `k`
/// is byte `k`'s (little-endian order). The multiply moves byte `k`'s bit
/// to bit 56 + k, and no two partial products meet, so nothing carries.
#[inline]
pub fn gather(marks: u64) -> u64 {
    (((marks & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Asserts that `marks` flags exactly the bytes `expected` says, and sets
/// no bit but their high bits, for every byte value at every position of a
/// word whose other bytes are each of `fills` (which catch a carry or a
/// borrow into a neighbour).
#[cfg(test)]
pub fn assert_marks(marks: impl Fn(u64) -> u64, expected: impl Fn(u8) -> bool, fills: &[u8]) {
    for &fill in fills {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut bytes = [fill; 8];
                bytes[pos] = b;
                let got = marks(u64::from_le_bytes(bytes));
                for (k, &byte) in bytes.iter().enumerate() {
                    assert_eq!(got >> (8 * k + 7) & 1 == 1, expected(byte), "{bytes:?} byte {k}");
                }
                assert_eq!(got & !HIGH, 0, "{bytes:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_puts_each_bytes_high_bit_at_its_index() {
        for pattern in 0..=255u64 {
            let mut marks = 0u64;
            for k in 0..8 {
                // Low bits set too: gather must look at the high bit only.
                marks |= if pattern >> k & 1 == 1 { 0xff } else { 0x7f } << (8 * k);
            }
            assert_eq!(gather(marks), pattern);
        }
    }

    #[test]
    fn in_range_marks_exactly_the_bytes_in_range() {
        for (lo, hi) in [(0u8, 0u8), (0x09, 0x0d), (b'0', b'9'), (b'a', b'z'), (0x7f, 0x7f), (0, 0x7f)] {
            for fill in [0u8, 0x20, 0x7f] {
                for b in 0..=0x7fu8 {
                    for pos in 0..8 {
                        let mut bytes = [fill; 8];
                        bytes[pos] = b;
                        let got = in_range(u64::from_le_bytes(bytes), lo, hi);
                        for (k, &byte) in bytes.iter().enumerate() {
                            let marked = got >> (8 * k + 7) & 1 == 1;
                            assert_eq!(marked, (lo..=hi).contains(&byte), "{lo}..={hi} {bytes:?} byte {k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn find_agrees_with_a_byte_loop() {
        let text = b"0123456789 abcdefghijklmnopqrstuvwxyz .; 0123";
        let digit = |x: u64| in_range(x & !HIGH, b'0', b'9') & !x;
        for i in 0..=text.len() {
            let expected = (i..text.len()).find(|&k| text[k].is_ascii_digit()).unwrap_or(text.len());
            assert_eq!(find(text, i, digit, |b| b.is_ascii_digit()), expected, "from {i}");
        }
    }
}
