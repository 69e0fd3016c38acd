//! One bit per byte of a 64-byte block for the bytes in a few ranges: the
//! block scans of the fuzzy signature's tokenizer and of line
//! normalization, which find runs with bit scans over these bitmaps.
//!
//! On x86_64 the block is classed 16 bytes at a time with SSE2, which every
//! x86_64 processor has (it is part of the target's baseline, so this needs
//! no run-time check): a range test is a subtract, an unsigned minimum and
//! a compare per 16 bytes, and one `movemask` gathers 16 bits. Elsewhere
//! the same bitmap comes from [`crate::bytes::scan::swar`] eight bytes at a time. On
//! 40 MB of the generated crawl at the paper's page size (`callgrind`, one
//! thread), the SSE2 bitmaps took the fingerprint stage from 3,916 to 3,819
//! million instructions (line normalization 63 million fewer, the fuzzy
//! signature's tokenizer 36 million), with the same outputs.

/// A block of 64 bytes: `bytes`' first 64, or all of them followed by `pad`
/// when there are fewer (kept in `buf`).
#[inline]
pub(crate) fn block<'a>(bytes: &'a [u8], pad: u8, buf: &'a mut [u8; 64]) -> &'a [u8; 64] {
    match bytes.first_chunk::<64>() {
        Some(block) => block,
        None => {
            *buf = [pad; 64];
            buf[..bytes.len()].copy_from_slice(bytes);
            buf
        }
    }
}

/// The bits below bit `n` of a block's bitmap (all 64 when `n` is 64):
/// the scans mask what they have passed with it.
#[inline]
pub(crate) fn below(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Bit `k` set when byte `k` of `block` lies in one of `ranges` (each
/// `lo..=hi`, `lo <= hi`). Meant for a constant list of a few ranges: it is
/// inlined, and the loop over them unrolled.
#[inline]
pub(crate) fn in_ranges(block: &[u8; 64], ranges: &[(u8, u8)]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 target
        // enables it, so the function's target feature is always there.
        unsafe { sse2::in_ranges(block, ranges) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        in_ranges_swar(block, ranges)
    }
}

/// [`in_ranges`] for 16 bytes: bit `k` for byte `k` of `chunk`.
#[inline]
pub(crate) fn in_ranges16(chunk: &[u8; 16], ranges: &[(u8, u8)]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: as in `in_ranges`.
        unsafe { sse2::in_ranges16(chunk, ranges) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        in_ranges16_swar(chunk, ranges)
    }
}

/// The position of the first `byte` in `bytes`: 16 bytes at a time (one
/// [`in_ranges16`] of a one-byte range), the last few with
/// [`crate::bytes::scan::swar::find_byte`].
///
/// For the short searches of header parsing (a line's end, a field's
/// colon) and the first bytes of the HTML converter's runs, where a
/// `memchr` call costs more than it finds. Done eight bytes at a time in a
/// word before, the fingerprint stage ran 64 M more instructions (3,795 M
/// against 3,731 M, `callgrind`, one thread, 40 MB of the generated crawl
/// at the paper's page size) and took 2.5% more CPU time (median of six
/// interleaved one-thread rounds on one file of that crawl).
#[inline]
pub(crate) fn find_byte(byte: u8, bytes: &[u8]) -> Option<usize> {
    let (chunks, tail) = bytes.as_chunks::<16>();
    for (k, chunk) in chunks.iter().enumerate() {
        let found = in_ranges16(chunk, &[(byte, byte)]);
        if found != 0 {
            return Some(16 * k + found.trailing_zeros() as usize);
        }
    }
    crate::bytes::scan::swar::find_byte(byte, tail).map(|i| 16 * chunks.len() + i)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x,
        _mm_set1_epi8, _mm_setzero_si128, _mm_sub_epi8,
    };

    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn in_ranges(block: &[u8; 64], ranges: &[(u8, u8)]) -> u64 {
        let mut bits = 0u64;
        for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
            bits |= u64::from(in_ranges16(chunk, ranges)) << (16 * k);
        }
        bits
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn in_ranges16(chunk: &[u8; 16], ranges: &[(u8, u8)]) -> u32 {
        let v = load(chunk);
        let mut hit = _mm_setzero_si128();
        for &(lo, hi) in ranges {
            let found = if lo == hi {
                _mm_cmpeq_epi8(v, _mm_set1_epi8(lo as i8))
            } else {
                // `v - lo` wraps below `lo`, so it is at most `hi - lo`
                // (unsigned) exactly for the bytes in the range.
                let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
                _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(hi.wrapping_sub(lo) as i8)), d)
            };
            hit = _mm_or_si128(hit, found);
        }
        u32::from(_mm_movemask_epi8(hit) as u16)
    }

    /// 16 bytes as a vector, without a pointer (the compiler makes it one
    /// unaligned load).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn load(chunk: &[u8; 16]) -> __m128i {
        let (low, high) = chunk.split_at(8);
        let word = |half: &[u8]| i64::from_le_bytes(half.try_into().expect("8 bytes"));
        _mm_set_epi64x(word(high), word(low))
    }
}

/// [`in_ranges`] eight bytes at a time in `u64` words: the path of targets
/// other than x86_64, and the reference its SSE2 path is tested against.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn in_ranges_swar(block: &[u8; 64], ranges: &[(u8, u8)]) -> u64 {
    let mut bits = 0u64;
    for (k, chunk) in block.as_chunks::<8>().0.iter().enumerate() {
        bits |= swar_bits(chunk, ranges) << (8 * k);
    }
    bits
}

/// [`in_ranges16`] in two `u64` words.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn in_ranges16_swar(chunk: &[u8; 16], ranges: &[(u8, u8)]) -> u32 {
    let (low, high) = chunk.as_chunks::<8>().0.split_at(1);
    let bits = swar_bits(&low[0], ranges) | swar_bits(&high[0], ranges) << 8;
    u32::try_from(bits).unwrap_or(0)
}

/// Eight bits, one per byte of `chunk` in one of `ranges`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn swar_bits(chunk: &[u8; 8], ranges: &[(u8, u8)]) -> u64 {
    use crate::bytes::scan::swar::{HIGH, gather, in_range};
    let x = u64::from_le_bytes(*chunk);
    let low7 = x & !HIGH;
    let mut marks = 0u64;
    for &(lo, hi) in ranges {
        // The part of the range below 0x80 and the part above, each
        // tested on the low seven bits of the bytes with that high bit.
        if lo < 0x80 {
            marks |= in_range(low7, lo, hi.min(0x7f)) & !x;
        }
        if hi >= 0x80 {
            marks |= in_range(low7, lo.max(0x80) - 0x80, hi - 0x80) & x;
        }
    }
    gather(marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap as its definition says, byte by byte.
    fn reference(block: &[u8; 64], ranges: &[(u8, u8)]) -> u64 {
        let mut bits = 0;
        for (k, &b) in block.iter().enumerate() {
            if ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&b)) {
                bits |= 1 << k;
            }
        }
        bits
    }

    const RANGE_SETS: &[&[(u8, u8)]] = &[
        &[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z'), (0x80, 0xff)],
        &[(b' ', b' '), (b'\n', b'\n')],
        &[(0x09, 0x09), (0x0b, 0x0d), (0xc2, 0xc2), (0xe1, 0xe3)],
        &[(0, 0), (0xff, 0xff), (0x7f, 0x80), (0, 0xff)],
        &[],
    ];

    #[test]
    fn every_byte_value_at_every_position() {
        for ranges in RANGE_SETS {
            for fill in [0u8, b'a', 0x7f, 0x80, 0xff] {
                for b in 0..=255u8 {
                    for pos in [0, 7, 8, 15, 16, 31, 32, 47, 48, 63] {
                        let mut block = [fill; 64];
                        block[pos] = b;
                        let want = reference(&block, ranges);
                        assert_eq!(
                            in_ranges(&block, ranges),
                            want,
                            "{ranges:?} {b:#x} at {pos} in {fill:#x}"
                        );
                        assert_eq!(
                            in_ranges_swar(&block, ranges),
                            want,
                            "{ranges:?} {b:#x} at {pos} in {fill:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn find_byte_agrees_with_a_plain_search() {
        let mut state = 7u64;
        let hay: [u8; 100] = random_bytes(&mut state);
        for start in 0..4 {
            for len in 0..hay.len() - start {
                let hay = &hay[start..start + len];
                for byte in [0u8, 10, 37, 74, 255, 0x80, 0x7f, hay.last().copied().unwrap_or(1)] {
                    let want = hay.iter().position(|&b| b == byte);
                    assert_eq!(find_byte(byte, hay), want, "len {len} byte {byte}");
                }
            }
        }
    }

    /// `N` bytes of a linear congruential sequence: every byte value,
    /// in no order the tests depend on.
    fn random_bytes<const N: usize>(state: &mut u64) -> [u8; N] {
        let mut bytes = [0u8; N];
        for b in &mut bytes {
            *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *b = (*state >> 56) as u8;
        }
        bytes
    }

    #[test]
    fn mixed_blocks() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let block: [u8; 64] = random_bytes(&mut state);
            for ranges in RANGE_SETS {
                let want = reference(&block, ranges);
                assert_eq!(in_ranges(&block, ranges), want, "{ranges:?} {block:?}");
                assert_eq!(in_ranges_swar(&block, ranges), want, "{ranges:?} {block:?}");
            }
        }
    }

    #[test]
    fn sixteen_bytes_agree_with_the_block() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let chunk: [u8; 16] = random_bytes(&mut state);
            let mut block = [0u8; 64];
            block[..16].copy_from_slice(&chunk);
            for ranges in RANGE_SETS {
                let want = u32::try_from(reference(&block, ranges) & 0xffff).unwrap();
                assert_eq!(in_ranges16(&chunk, ranges), want, "{ranges:?} {chunk:?}");
                assert_eq!(in_ranges16_swar(&chunk, ranges), want, "{ranges:?} {chunk:?}");
            }
        }
    }

    #[test]
    fn short_input_is_padded() {
        let mut buf = [0u8; 64];
        let b = block(b"abc", b'x', &mut buf);
        assert_eq!(&b[..4], b"abcx");
        assert!(b[3..].iter().all(|&c| c == b'x'));
        let long = [7u8; 100];
        let mut buf = [0u8; 64];
        assert_eq!(block(&long, 0, &mut buf), &[7u8; 64]);
    }
}
