//! What the crate's unit tests share.

/// Marsaglia's xorshift64: a fixed, reproducible stream of numbers for
/// generated test cases (the same seed, the same cases on every machine).
pub(crate) struct XorShift(u64);

impl XorShift {
    /// A stream from `seed`, which must not be 0.
    pub(crate) fn new(seed: u64) -> XorShift {
        XorShift(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (not 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
