//! Fields of the report's CSV tables, formatted in place. `to_string` and
//! `format!` made a string for every field, and `{:.4}` takes its slow
//! exact path for most percentages: writing hosts.csv cost about 9,600
//! instructions a row.

use std::fmt::Write as _;

/// One field of a row: borrowed text, or a number formatted into the cell
/// itself (a `String` only for a figure `format!` must write).
#[derive(Clone, Debug)]
pub enum Cell<'a> {
    Text(&'a str),
    Inline([u8; 32], u8),
    Owned(String),
}

impl AsRef<[u8]> for Cell<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Cell::Text(s) => s.as_bytes(),
            Cell::Inline(buf, len) => &buf[..usize::from(*len)],
            Cell::Owned(s) => s.as_bytes(),
        }
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(s: &'a str) -> Cell<'a> {
        Cell::Text(s)
    }
}

impl Cell<'_> {
    /// An integer as `to_string` writes it.
    pub fn number(n: impl Into<u64>) -> Cell<'static> {
        Cell::inline(itoa::Buffer::new().format(n.into()).as_bytes())
    }

    /// `v` as `format!("{v:.4}")` writes it.
    ///
    /// The report's four-decimal figures (percentages, densities) are
    /// rounded to ten-thousandths before they are written
    /// ([`super::histogram::percent`]), so a non-negative `v` below 2^32
    /// that is the double nearest to m / 10^4 for an integer m is written
    /// as m's digits: its exact value is within 2^-22 of m / 10^4, far from
    /// the halfway points that `{:.4}` rounds at. Any other value goes
    /// through `format!`.
    pub fn fixed4(v: f64) -> Cell<'static> {
        let m = (v * 10_000.0).round();
        if !(v.is_sign_positive() && v < 4e9 && m / 10_000.0 == v) {
            let mut s = String::new();
            let _ = write!(s, "{v:.4}");
            return Cell::Owned(s);
        }
        let m = m as u64;
        let mut cell = Cell::number(m / 10_000);
        if let Cell::Inline(buf, len) = &mut cell {
            let frac = m % 10_000;
            let at = usize::from(*len);
            buf[at] = b'.';
            for (i, unit) in [1000, 100, 10, 1].into_iter().enumerate() {
                buf[at + 1 + i] = b'0' + (frac / unit % 10) as u8;
            }
            *len += 5;
        }
        cell
    }

    /// `v` as `format!("{v:032x}")` writes it: 32 lowercase hex digits.
    pub fn hex128(v: u128) -> Cell<'static> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut buf = [0u8; 32];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = DIGITS[(v >> (124 - 4 * i) & 0xf) as usize];
        }
        Cell::Inline(buf, 32)
    }

    fn inline(bytes: &[u8]) -> Cell<'static> {
        let mut buf = [0u8; 32];
        buf[..bytes.len()].copy_from_slice(bytes);
        Cell::Inline(buf, bytes.len() as u8)
    }
}

/// `true` or `false`, as `bool::to_string` writes it.
pub fn flag(b: bool) -> Cell<'static> {
    Cell::Text(if b { "true" } else { "false" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(c: Cell<'_>) -> String {
        String::from_utf8(c.as_ref().to_vec()).unwrap()
    }

    #[test]
    fn fixed4_writes_what_format_writes() {
        // Every percentage to four decimals, and densities.
        for m in 0..=1_000_000u64 {
            let v = m as f64 / 10_000.0;
            assert_eq!(text(Cell::fixed4(v)), format!("{v:.4}"), "{m}");
        }
        let others = [
            -0.0,
            -1.5,
            0.1 + 0.2,
            1.0 / 3.0,
            123_456_789.123_4,
            4e9,
            3_999_999_999.999_9,
            5e9 + 0.5,
            1e300,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NAN,
            0.000_05,
            0.000_15,
            2.675_05,
        ];
        let mut rng = crate::testing::XorShift::new(0x2545_f491_4f6c_dd1d);
        let random = (0..100_000).map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 100.0);
        for v in others.into_iter().chain(random) {
            assert_eq!(text(Cell::fixed4(v)), format!("{v:.4}"), "{v:e}");
            let rounded = (v * 10_000.0).round() / 10_000.0;
            assert_eq!(text(Cell::fixed4(rounded)), format!("{rounded:.4}"), "{rounded:e}");
        }
    }

    #[test]
    fn numbers_hex_and_flags() {
        for n in [0u64, 7, 10, 4_294_967_295, u64::MAX] {
            assert_eq!(text(Cell::number(n)), n.to_string());
        }
        for v in [0, 1, 0xabcdef, u128::MAX, 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210] {
            assert_eq!(text(Cell::hex128(v)), format!("{v:032x}"));
        }
        assert_eq!((text(flag(true)), text(flag(false))), (true.to_string(), false.to_string()));
        assert_eq!(text("x,y".into()), "x,y");
    }
}
