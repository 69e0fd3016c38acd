//! SimHash (Charikar, STOC 2002) with permuted tables (Manku, Jain & Das
//! Sarma, *Detecting near-duplicates for web crawling*, WWW 2007) as a
//! candidate generator for [`super::lsh`].
//!
//! Signature: 64 bits, bit k set when more of the document's chunk
//! fingerprints (each hashed once) have bit k set than clear. Two sets'
//! signatures differ in each bit with probability θ/π, θ the angle between
//! them; for two sets of equal size at Jaccard J, cos θ = 2J / (1 + J), so
//! at J = 0.8 about 13 of the 64 bits differ on average, at 0.95 about 6.
//! SimHash finds the pairs whose signatures differ in at most K bits: it
//! is made for near-exact copies, and K is what sets its recall.
//!
//! Tables: the 64 bits are cut into n blocks. Two signatures differing in
//! at most K bits agree in at least n - K whole blocks, so one table per
//! choice of n - K blocks, keyed by those blocks' bits, puts every such
//! pair in a common bucket (pigeonhole, as in Manku et al.'s section 3).
//! More blocks give longer keys (fewer random documents per bucket) and
//! more tables; n is the smallest that gives keys of at least log2(N) + 4
//! bits for N documents, within [`MAX_TABLES`] tables, or the longest keys
//! within them. A bucket's pairs are candidates when their signatures
//! differ in at most K bits.

use super::lsh::{Scheme, mix};
use crate::store::stats::LshStats;

/// The most bits `simhash:K` may allow to differ.
pub(crate) const MAX_DISTANCE: u32 = 16;

/// The default K: Manku et al.'s choice for 64-bit signatures of 8 billion
/// pages.
pub(crate) const DEFAULT_DISTANCE: u32 = 3;

/// The most tables: each is one bucket record per document.
const MAX_TABLES: u64 = 64;

/// A seed so that SimHash's bits are not MinHash's.
const SEED: u64 = 0x5349_4d48_4153_4821;

pub(crate) struct SimHash {
    /// K: the most differing bits.
    pub distance: u32,
    /// The blocks, as bit masks, and the tables, as the blocks each keeps.
    blocks: Vec<u64>,
    tables: Vec<Vec<usize>>,
    key_bits: u32,
}

impl SimHash {
    /// Tables for `documents` documents at most `distance` bits apart.
    pub(crate) fn new(distance: u32, documents: usize) -> SimHash {
        let want = (documents.max(2) as f64).log2().ceil() as u32 + 4;
        let k = distance as u64;
        // (blocks, key bits) for n from K + 1 up, while the tables fit.
        let mut best: Option<(u32, u32)> = None;
        for n in (k + 1)..=64 {
            if choose(n, k) > MAX_TABLES {
                break;
            }
            let key_bits = (64 * (n - k) / n) as u32;
            if best.is_none_or(|(_, bits)| key_bits > bits) {
                best = Some((n as u32, key_bits));
            }
            if key_bits >= want {
                break;
            }
        }
        // K + 1 blocks always fit: K + 1 tables, K <= MAX_DISTANCE.
        let (n, key_bits) = best.unwrap_or((distance + 1, 64 / (distance + 1)));
        let blocks: Vec<u64> = (0..n)
            .map(|b| {
                let (lo, hi) = (64 * b / n, 64 * (b + 1) / n);
                (lo..hi).fold(0u64, |m, bit| m | (1 << bit))
            })
            .collect();
        let mut tables = Vec::new();
        combinations(n as usize, (n - distance) as usize, &mut Vec::new(), 0, &mut tables);
        SimHash { distance, blocks, tables, key_bits }
    }
}

/// n choose k, saturating.
fn choose(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    (0..k).fold(1u64, |c, i| c.saturating_mul(n - i) / (i + 1))
}

/// Every `size`-element subset of 0..n in lexicographic order.
fn combinations(n: usize, size: usize, current: &mut Vec<usize>, from: usize, out: &mut Vec<Vec<usize>>) {
    if current.len() == size {
        out.push(current.clone());
        return;
    }
    for x in from..n {
        current.push(x);
        combinations(n, size, current, x + 1, out);
        current.pop();
    }
}

impl Scheme for SimHash {
    /// 64 counters (i32 as u32) and nothing else.
    const WORDS: usize = 64;
    const FILTERS: bool = true;

    fn clear(&self, state: &mut [u32]) {
        state.fill(0);
    }

    #[inline]
    fn add(&self, state: &mut [u32], fprint: u64) {
        let h = mix(fprint ^ SEED);
        for (k, c) in state.iter_mut().enumerate() {
            // +1 for a set bit, -1 for a clear one, in two's complement.
            *c = c.wrapping_add((((h >> k) & 1) as u32).wrapping_mul(2).wrapping_sub(1));
        }
    }

    fn keys(&self, state: &mut [u32], keys: &mut Vec<u64>) -> u64 {
        let signature =
            state.iter().enumerate().fold(0u64, |s, (k, &c)| s | (u64::from((c as i32) > 0) << k));
        for (t, kept) in self.tables.iter().enumerate() {
            let mask = kept.iter().fold(0u64, |m, &b| m | self.blocks[b]);
            // The table's number is mixed in so tables never share buckets.
            keys.push(mix((signature & mask) ^ mix(t as u64 + 1)));
        }
        signature
    }

    #[inline]
    fn near(&self, a: u64, b: u64) -> bool {
        (a ^ b).count_ones() <= self.distance
    }

    fn stats(&self) -> LshStats {
        LshStats {
            scheme: "simhash".into(),
            max_distance: Some(self.distance),
            tables: Some(self.tables.len() as u32),
            key_bits: Some(self.key_bits),
            ..LshStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(s: &SimHash, set: impl Iterator<Item = u64>) -> (u64, Vec<u64>) {
        let mut state = vec![0u32; 64];
        s.clear(&mut state);
        for f in set {
            s.add(&mut state, f);
        }
        let mut keys = Vec::new();
        let sig = s.keys(&mut state, &mut keys);
        (sig, keys)
    }

    #[test]
    fn tables_cover_every_pair_within_k_bits() {
        for (k, docs) in [(0u32, 10usize), (3, 100_000), (3, 10), (6, 1_000_000), (16, 100)] {
            let s = SimHash::new(k, docs);
            assert!(s.tables.len() as u64 <= MAX_TABLES.max(u64::from(k) + 1));
            // Blocks cut the 64 bits exactly.
            assert_eq!(s.blocks.iter().fold(0u64, |m, b| m | b), u64::MAX);
            assert_eq!(s.blocks.iter().map(|b| b.count_ones()).sum::<u32>(), 64);
            // Flipping any K bits of a signature leaves a table with the
            // same key: try many random flips.
            let mut x = 0x1234_5678u64;
            for _ in 0..2000 {
                x = mix(x);
                let mut flipped = x;
                let mut y = x;
                for _ in 0..k {
                    y = mix(y);
                    flipped ^= 1 << (y % 64);
                }
                let key = |sig: u64| -> Vec<u64> {
                    s.tables
                        .iter()
                        .map(|kept| sig & kept.iter().fold(0u64, |m, &b| m | s.blocks[b]))
                        .collect()
                };
                let (a, b) = (key(x), key(flipped));
                assert!(a.iter().zip(&b).any(|(p, q)| p == q), "K = {k}");
            }
        }
        // Manku et al.'s example size: 3 bits, keys of at least 20 bits.
        let s = SimHash::new(3, 100_000);
        assert!(s.key_bits >= 21, "{}", s.key_bits);
    }

    #[test]
    fn similar_sets_have_close_signatures() {
        let s = SimHash::new(3, 1000);
        let a: Vec<u64> = (0..1000).map(mix).collect();
        // 990 of 1000 chunks kept, 10 new: J = 0.98.
        let b: Vec<u64> = (10..1010).map(mix).collect();
        let c: Vec<u64> = (5000..6000).map(mix).collect();
        let (sa, ka) = signature(&s, a.into_iter());
        let (sb, kb) = signature(&s, b.into_iter());
        let (sc, _) = signature(&s, c.into_iter());
        assert!((sa ^ sb).count_ones() <= 6, "{}", (sa ^ sb).count_ones());
        assert!((sa ^ sc).count_ones() >= 16, "{}", (sa ^ sc).count_ones());
        if s.near(sa, sb) {
            assert!(ka.iter().zip(&kb).any(|(x, y)| x == y));
        }
    }

    #[test]
    fn choose_counts_subsets() {
        assert_eq!(choose(4, 3), 4);
        assert_eq!(choose(8, 3), 56);
        let mut out = Vec::new();
        combinations(8, 5, &mut Vec::new(), 0, &mut out);
        assert_eq!(out.len() as u64, choose(8, 3));
    }
}
