//! What the crate's unit tests share.

use std::collections::BTreeSet;
use std::io::{self, BufRead, Read};
use std::path::Path;

use crate::store::analysis::documents::EMPTY;

/// A reader whose inner buffer hands out one byte at a time, to check
/// lookahead across buffer boundaries, and that a reader's fast paths over
/// a whole buffer give what its byte-by-byte way gives.
pub(crate) struct Trickle(pub(crate) Vec<u8>, pub(crate) usize);

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
        self.1 += n;
        Ok(n)
    }
}

impl BufRead for Trickle {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let end = (self.1 + 1).min(self.0.len());
        Ok(&self.0[self.1..end])
    }
    fn consume(&mut self, n: usize) {
        self.1 += n;
    }
}

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

/// Each row's exact-group center for `n` rows, as the report's tables
/// hold them: an empty row ([`EMPTY`]) one time in ten, a copy of an
/// earlier row's center `copies` times in ten, its own center otherwise.
pub(crate) fn exact_centers(rng: &mut XorShift, n: u32, copies: u64) -> Vec<u32> {
    let mut center: Vec<u32> = Vec::with_capacity(n as usize);
    for d in 0..n {
        let roll = rng.below(10);
        center.push(if roll == 0 {
            EMPTY
        } else if roll <= copies && d > 0 {
            match center[rng.below(u64::from(d)) as usize] {
                EMPTY => d,
                c => c,
            }
        } else {
            d
        });
    }
    center
}

/// An Overlap table of up to `count` random pairs of `centers`, written to
/// `path`; returns its pairs in (i, j) order.
pub(crate) fn overlap_table(rng: &mut XorShift, centers: &[u32], count: u64, path: &Path) -> Vec<(u32, u32)> {
    let mut pairs = BTreeSet::new();
    if centers.len() >= 2 {
        for _ in 0..count {
            let a = centers[rng.below(centers.len() as u64) as usize];
            let b = centers[rng.below(centers.len() as u64) as usize];
            if a != b {
                pairs.insert((a.min(b), a.max(b)));
            }
        }
    }
    let mut table = String::from("doc_i,doc_j,shared\n");
    for &(i, j) in &pairs {
        table.push_str(&format!("{i},{j},5\n"));
    }
    std::fs::write(path, table).unwrap();
    pairs.into_iter().collect()
}
