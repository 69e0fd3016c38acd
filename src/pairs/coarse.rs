//! Coarse counting, the paper's section 2.2 step 3, after the iceberg-query
//! work (Fang, Shivakumar, Garcia-Molina, Motwani, Ullman, VLDB 1998).
//!
//! The target of the iceberg query is the document pair; its count is the
//! number of shared fingerprints; the threshold is T. Instead of
//! materializing every pair like the sort-based method:
//!
//! 1. a hashing scan adds every pair into k arrays of saturating counters,
//!    one hash function per array (k = 1 is COARSE-COUNT, k > 1 MULTI-HASH);
//! 2. each array becomes a bitmap of its heavy buckets (count >= T), and
//!    the counters are freed;
//! 3. a candidate-selection scan keeps the pairs that are heavy in every
//!    bitmap, and counts them exactly through the same spilled aggregation
//!    the sort method uses (candidate selection and verification in one
//!    scan); pairs with F >= T are the answer.
//!
//! A pair with F >= T adds at least T to each of its buckets, so it is
//! always a candidate: the answer is exactly the sort method's. Only the
//! number of false positives (candidates with F < T) depends on the number
//! of counters, which is why counters are as narrow as T allows: at T <= 255
//! a byte each, for four times the buckets of 32-bit counters.
//!
//! Counters are shared by the scanning threads through atomic saturating
//! increments; a saturated count is order-independent, so the bitmaps, and
//! the output, do not depend on the thread count.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::aggregate::{self, PairFilter, pack};
use super::{CountInput, CountingMethod, GroupStats, Overlap, for_each_group, pair_instances, scan_groups};
use crate::memory::{self, ByteSize};
use crate::stats::PairsStats;

/// Which coarse-counting algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoarseVariant {
    /// k counter arrays with independent hashes filled in one scan; a pair
    /// is a candidate only if heavy in every array. k = 1 is COARSE-COUNT.
    MultiHash { k: u32 },
    /// k scans, each with all the counters and its own hash; scan i counts
    /// only the pairs heavy in every earlier bitmap, so later scans see
    /// little noise. A candidate is heavy in all k bitmaps.
    MultiScanShared { k: u32 },
    /// A pilot scan over a sample of the fingerprint groups finds pairs that
    /// look heavy; they are kept out of the counters (so they cannot make
    /// buckets heavy for others) and are candidates from the start.
    DeferCount,
}

impl Default for CoarseVariant {
    /// COARSE-COUNT: on a 1 GB crawl with site boilerplate (1.14 billion
    /// pair instances, counters sized one per instance) it took 25.2 s
    /// against 38.3 s for MULTI-HASH with two arrays and 59.2 s with three,
    /// whose extra random increments per pair cost more than their 8x and
    /// 15x fewer false positives save.
    fn default() -> Self {
        CoarseVariant::MultiHash { k: 1 }
    }
}

impl FromStr for CoarseVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "coarse-count" {
            return Ok(CoarseVariant::MultiHash { k: 1 });
        }
        if s == "defer-count" {
            return Ok(CoarseVariant::DeferCount);
        }
        let hashes = |k: &str| match k.parse::<u32>() {
            Ok(k) if (1..=8).contains(&k) => Ok(k),
            _ => Err(format!("'{s}' takes 1 to 8 hash functions")),
        };
        if let Some(k) = s.strip_prefix("multi-hash:") {
            return Ok(CoarseVariant::MultiHash { k: hashes(k)? });
        }
        if let Some(k) = s.strip_prefix("multi-scan-shared:") {
            return Ok(CoarseVariant::MultiScanShared { k: hashes(k)? });
        }
        Err(format!(
            "unknown coarse-counting variant '{s}' \
             (available: coarse-count, multi-hash:K, multi-scan-shared:K, defer-count)"
        ))
    }
}

impl fmt::Display for CoarseVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoarseVariant::MultiHash { k: 1 } => f.write_str("coarse-count"),
            CoarseVariant::MultiHash { k } => write!(f, "multi-hash:{k}"),
            CoarseVariant::MultiScanShared { k } => write!(f, "multi-scan-shared:{k}"),
            CoarseVariant::DeferCount => f.write_str("defer-count"),
        }
    }
}

/// What a coarse run reports in stats.json (`pairs.coarse`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CoarseStats {
    pub variant: String,
    pub hash_functions: u32,
    /// Counters in each array.
    pub counters_per_array: u64,
    pub counter_bits: u32,
    /// Heavy buckets (count >= T) in each array.
    pub heavy_buckets: Vec<u64>,
    /// Pair instances that passed every bitmap and were counted exactly.
    pub candidate_instances: u64,
    /// Distinct candidate pairs.
    pub candidates: u64,
    /// Candidates with F < T.
    pub false_positives: u64,
    /// Candidates with F >= T: the Overlap table.
    pub true_pairs: u64,
    /// Each pass (`pre-scan`, `pilot`, `hash-N`, `verify`) with its time
    /// and peak memory.
    pub passes: Vec<PassStats>,
    /// DEFER-COUNT: pairs the pilot sample found heavy-looking, and how
    /// many of them are in the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_pairs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_true: Option<u64>,
}

/// Time and peak memory of one pass.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PassStats {
    pub pass: String,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// Times passes one after the other.
struct Passes {
    started: Instant,
    done: Vec<PassStats>,
}

impl Passes {
    fn start() -> Passes {
        memory::pass_peak();
        Passes { started: Instant::now(), done: Vec::new() }
    }

    /// Ends the pass in progress under `name` and starts the next.
    fn end(&mut self, name: &str) {
        let now = Instant::now();
        self.done.push(PassStats {
            pass: name.to_string(),
            seconds: (now - self.started).as_secs_f64(),
            peak_rss_bytes: memory::pass_peak(),
        });
        self.started = now;
    }
}

/// Coarse counting with a given variant.
pub struct CoarseCounting {
    pub variant: CoarseVariant,
    /// Counters per array; by default sized from the memory budget and the
    /// number of pairs (see [`counters_per_array`]).
    pub counters: Option<u64>,
    /// The pair instances the scan will generate, when already counted.
    pub pair_instances: Option<u64>,
}

/// Counters per array: one per pair instance the scan will generate (more
/// buys nothing once the light load per bucket is far below T), at most
/// half the memory budget over all arrays, at least [`MIN_COUNTERS`].
fn counters_per_array(pair_instances: u64, memory: u64, bits: u32, k: u32) -> u64 {
    let most = memory / 2 / u64::from(bits / 8) / u64::from(k);
    pair_instances.min(most).max(MIN_COUNTERS)
}

/// One array of saturating counters of the width T needs.
enum Counters {
    U8(Vec<AtomicU8>),
    U16(Vec<AtomicU16>),
    U32(Vec<AtomicU32>),
}

impl Counters {
    /// Bits per counter: the narrowest that can hold T.
    fn bits_for(threshold: u32) -> u32 {
        match threshold {
            0..=255 => 8,
            256..=65535 => 16,
            _ => 32,
        }
    }

    fn new(bits: u32, m: usize) -> Counters {
        match bits {
            8 => Counters::U8((0..m).map(|_| AtomicU8::new(0)).collect()),
            16 => Counters::U16((0..m).map(|_| AtomicU16::new(0)).collect()),
            _ => Counters::U32((0..m).map(|_| AtomicU32::new(0)).collect()),
        }
    }

    /// Adds one to bucket `b`, stopping at `t`: nothing beyond T matters,
    /// and a saturated counter is no longer written.
    #[inline]
    fn add(&self, b: usize, t: u32) {
        macro_rules! add {
            ($v:expr, $ty:ty) => {{
                let t = t.min(<$ty>::MAX as u32) as $ty;
                let _ = $v[b].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| (c < t).then(|| c + 1));
            }};
        }
        match self {
            Counters::U8(v) => add!(v, u8),
            Counters::U16(v) => add!(v, u16),
            Counters::U32(v) => add!(v, u32),
        }
    }

    /// Asks the CPU to fetch bucket `b`'s cache line ahead of its increment.
    #[inline]
    fn prefetch(&self, b: usize) {
        match self {
            Counters::U8(v) => prefetch(v[b..].as_ptr().cast()),
            Counters::U16(v) => prefetch(v[b..].as_ptr().cast()),
            Counters::U32(v) => prefetch(v[b..].as_ptr().cast()),
        }
    }

    /// The bitmap of buckets that reached `t`, and how many did.
    fn heavy(&self, t: u32) -> (Bitmap, u64) {
        let get = |b: usize| -> u32 {
            match self {
                Counters::U8(v) => u32::from(v[b].load(Ordering::Relaxed)),
                Counters::U16(v) => u32::from(v[b].load(Ordering::Relaxed)),
                Counters::U32(v) => v[b].load(Ordering::Relaxed),
            }
        };
        let m = match self {
            Counters::U8(v) => v.len(),
            Counters::U16(v) => v.len(),
            Counters::U32(v) => v.len(),
        };
        let mut bits = Bitmap { words: vec![0u64; m.div_ceil(64)] };
        let mut heavy = 0;
        for b in 0..m {
            if get(b) >= t {
                bits.words[b / 64] |= 1 << (b % 64);
                heavy += 1;
            }
        }
        (bits, heavy)
    }
}

/// A prefetch hint for the cache line at `p`.
#[inline]
fn prefetch(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and has no effect
    // a program can observe, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Increments issued in one batch: each bucket's cache line is prefetched
/// when its pair is hashed and incremented a batch later, so the random
/// accesses into the counter arrays overlap instead of stalling one by
/// one.
const PREFETCH_BATCH: usize = 64;

/// Increments of one scanning thread, batched behind prefetches.
struct Increments<'a> {
    arrays: &'a [Counters],
    t: u32,
    pending: Vec<(usize, usize)>,
}

impl<'a> Increments<'a> {
    fn new(arrays: &'a [Counters], t: u32) -> Self {
        Increments { arrays, t, pending: Vec::with_capacity(PREFETCH_BATCH * arrays.len()) }
    }

    #[inline]
    fn add(&mut self, array: usize, b: usize) {
        self.arrays[array].prefetch(b);
        self.pending.push((array, b));
        if self.pending.len() >= PREFETCH_BATCH * self.arrays.len() {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (array, b) in self.pending.drain(..) {
            self.arrays[array].add(b, self.t);
        }
    }
}

/// Candidate selection: a pair whose bucket is heavy in every bitmap
/// (bitmap i under hash function i), or that was deferred.
struct Candidates<'a> {
    bitmaps: &'a [Bitmap],
    m: u64,
    deferred: &'a HashSet<u64>,
}

impl PairFilter for Candidates<'_> {
    fn prefetch(&self, pair: u64) {
        for (a, bits) in self.bitmaps.iter().enumerate() {
            let b = bucket(pair, a as u32, self.m);
            prefetch(bits.words[b / 64..].as_ptr().cast());
        }
    }

    fn keep(&self, pair: u64) -> bool {
        self.deferred.contains(&pair)
            || self.bitmaps.iter().enumerate().all(|(a, bits)| bits.get(bucket(pair, a as u32, self.m)))
    }
}

/// What a hashing scan counts: every pair except the deferred ones, and
/// (for MULTI-SCAN-SHARED) only pairs heavy in every earlier bitmap.
struct ScanFilter<'a> {
    earlier: &'a [Bitmap],
    m: u64,
    deferred: &'a HashSet<u64>,
}

impl PairFilter for ScanFilter<'_> {
    fn keep(&self, pair: u64) -> bool {
        !self.deferred.contains(&pair)
            && self.earlier.iter().enumerate().all(|(a, bits)| bits.get(bucket(pair, a as u32, self.m)))
    }
}

struct Bitmap {
    words: Vec<u64>,
}

impl Bitmap {
    #[inline]
    fn get(&self, b: usize) -> bool {
        self.words[b / 64] & (1 << (b % 64)) != 0
    }
}

/// Bucket of `pair` in an array of `m` counters under hash function `a`:
/// the splitmix64 finalizer of the pair mixed with a per-function seed,
/// mapped to `0..m` by multiply-shift (no division).
#[inline]
fn bucket(pair: u64, a: u32, m: u64) -> usize {
    let mut z =
        (pair ^ u64::from(a + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((u128::from(z) * u128::from(m)) >> 64) as usize
}

/// The smallest counter array chosen by default; below it nearly every
/// bucket is heavy and coarse counting degenerates into the sort method.
const MIN_COUNTERS: u64 = 1024;

/// One hashing scan: adds every pair `filter` keeps into `arrays`, array
/// `a` under hash function `first_hash + a`.
fn hashing_scan(
    input: &CountInput<'_>,
    arrays: &[Counters],
    first_hash: u32,
    m: u64,
    filter: &impl PairFilter,
) -> anyhow::Result<GroupStats> {
    let t = input.threshold;
    let bar = input.progress.items("coarse", input.parts.len() as u64, "partitions");
    let scanned: Vec<anyhow::Result<GroupStats>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut increments = Increments::new(arrays, t);
            let groups = for_each_group(input, part, |docs| {
                for (x, &i) in docs.iter().enumerate() {
                    for &j in &docs[x + 1..] {
                        let pair = pack(i, j);
                        if !filter.keep(pair) {
                            continue;
                        }
                        for a in 0..arrays.len() {
                            increments.add(a, bucket(pair, first_hash + a as u32, m));
                        }
                    }
                }
                Ok(())
            })?;
            increments.flush();
            bar.inc(1);
            Ok(groups)
        })
        .collect();
    bar.finish_and_clear();
    let mut groups = GroupStats::default();
    for g in scanned {
        groups.add(&g?);
    }
    Ok(groups)
}

/// One fingerprint group in this many goes into DEFER-COUNT's pilot
/// sample; groups are chosen by fingerprint, so the sample is the same on
/// every run.
const PILOT_RATE: u64 = 16;

/// DEFER-COUNT's pilot: counts the pairs of a sample of the fingerprint
/// groups exactly, and returns those whose scaled count reaches T, at most
/// `max` of them (the highest counts first). The sample's table is bounded
/// too: once it holds `max` pairs, new pairs are no longer added.
fn pilot(input: &CountInput<'_>, max: usize) -> anyhow::Result<HashSet<u64>> {
    let max_df = input.max_df.map_or(usize::MAX, |d| d as usize);
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for part in input.parts {
        scan_groups(part, input.counted, |docs, fprint| {
            if fprint % PILOT_RATE != 0 || docs.len() > max_df {
                return Ok(());
            }
            for (x, &i) in docs.iter().enumerate() {
                for &j in &docs[x + 1..] {
                    let pair = pack(i, j);
                    if let Some(c) = counts.get_mut(&pair) {
                        *c += 1;
                    } else if counts.len() < max {
                        counts.insert(pair, 1);
                    }
                }
            }
            Ok(())
        })?;
    }
    let mut heavy: Vec<(u32, u64)> = counts
        .into_iter()
        .filter(|&(_, c)| u64::from(c) * PILOT_RATE >= u64::from(input.threshold))
        .map(|(pair, c)| (c, pair))
        .collect();
    heavy.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    heavy.truncate(max);
    Ok(heavy.into_iter().map(|(_, pair)| pair).collect())
}

impl CountingMethod for CoarseCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let t = input.threshold;
        let bits = Counters::bits_for(t);
        // Arrays alive at once during a scan.
        let arrays_at_once = match self.variant {
            CoarseVariant::MultiHash { k } => k,
            CoarseVariant::MultiScanShared { .. } | CoarseVariant::DeferCount => 1,
        };
        // The counters get at most half the budget; the rest is for reading
        // partitions, bitmaps, the deferred pairs and, after the counters
        // are freed, the candidates.
        let mut passes = Passes::start();
        let m = match self.counters {
            Some(m) => {
                let m = m.max(1);
                let need = m * u64::from(bits / 8) * u64::from(arrays_at_once);
                if need > input.memory / 2 {
                    anyhow::bail!(
                        "--counters {m} needs {} of counters ({arrays_at_once} x {m} of {bits} bits), \
                         more than half of --memory {}: give --memory {} or more, or fewer counters",
                        ByteSize(need),
                        ByteSize(input.memory),
                        ByteSize(need * 2)
                    );
                }
                m
            }
            None => {
                let p = match self.pair_instances {
                    Some(p) => p,
                    None => {
                        let p = pair_instances(input)?;
                        passes.end("pre-scan");
                        p
                    }
                };
                counters_per_array(p, input.memory, bits, arrays_at_once)
            }
        };

        // DEFER-COUNT's pilot, given a sixteenth of the budget (a HashMap
        // entry is about 16 bytes with its overhead).
        let deferred = match self.variant {
            CoarseVariant::DeferCount => {
                let deferred = pilot(input, (input.memory / 16 / 16).max(1024) as usize)?;
                passes.end("pilot");
                deferred
            }
            _ => HashSet::new(),
        };

        // Hashing scans, each ending in bitmaps of heavy buckets with its
        // counters freed.
        let mut bitmaps: Vec<Bitmap> = Vec::new();
        let mut heavy: Vec<u64> = Vec::new();
        let mut groups = GroupStats::default();
        let scans = match self.variant {
            CoarseVariant::MultiScanShared { k } => k,
            _ => 1,
        };
        for scan in 0..scans {
            let arrays: Vec<Counters> =
                (0..arrays_at_once).map(|_| Counters::new(bits, m as usize)).collect();
            let filter = ScanFilter { earlier: &bitmaps, m, deferred: &deferred };
            let scanned = hashing_scan(input, &arrays, scan, m, &filter)?;
            if scan == 0 {
                groups = scanned;
            }
            for c in &arrays {
                let (bitmap, n) = c.heavy(t);
                bitmaps.push(bitmap);
                heavy.push(n);
            }
            drop(arrays);
            passes.end(&format!("hash-{}", scan + 1));
        }
        groups.fill(stats);

        // Candidate selection and verification in one scan.
        let runs = aggregate::RunDir::new(input.scratch);
        let filter = Candidates { bitmaps: &bitmaps, m, deferred: &deferred };
        let spilled = aggregate::spill_pairs(input, &runs, "verify", &filter)?;
        let mut true_pairs = 0u64;
        let mut deferred_true = 0u64;
        let candidates = aggregate::reduce(spilled.runs, input.memory, t, &runs, &mut |o| {
            true_pairs += 1;
            if deferred.contains(&pack(o.doc_i, o.doc_j)) {
                deferred_true += 1;
            }
            emit(o)
        })?;
        passes.end("verify");
        let is_defer = self.variant == CoarseVariant::DeferCount;
        stats.distinct_pairs = candidates;
        stats.spill_bytes = runs.bytes();
        stats.coarse = Some(CoarseStats {
            variant: self.variant.to_string(),
            hash_functions: bitmaps.len() as u32,
            counters_per_array: m,
            counter_bits: bits,
            heavy_buckets: heavy,
            candidate_instances: spilled.kept,
            candidates,
            false_positives: candidates - true_pairs,
            true_pairs,
            passes: passes.done,
            deferred_pairs: is_defer.then_some(deferred.len() as u64),
            deferred_true: is_defer.then_some(deferred_true),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_and_print() {
        assert_eq!("coarse-count".parse(), Ok(CoarseVariant::MultiHash { k: 1 }));
        assert_eq!("multi-hash:3".parse(), Ok(CoarseVariant::MultiHash { k: 3 }));
        assert_eq!(CoarseVariant::MultiHash { k: 1 }.to_string(), "coarse-count");
        assert_eq!(CoarseVariant::MultiHash { k: 2 }.to_string(), "multi-hash:2");
        assert_eq!("multi-scan-shared:2".parse(), Ok(CoarseVariant::MultiScanShared { k: 2 }));
        assert_eq!("defer-count".parse(), Ok(CoarseVariant::DeferCount));
        for v in ["multi-scan-shared:3", "defer-count", "multi-hash:4"] {
            assert_eq!(v.parse::<CoarseVariant>().unwrap().to_string(), v);
        }
        for bad in ["multi-hash:0", "multi-hash:9", "multi-hash:x", "defer", "multi-scan-shared:0"] {
            assert!(bad.parse::<CoarseVariant>().is_err(), "{bad}");
        }
    }

    #[test]
    fn counters_saturate_at_the_threshold() {
        for bits in [8, 16, 32] {
            let c = Counters::new(bits, 4);
            for _ in 0..300 {
                c.add(1, 200);
            }
            c.add(2, 200);
            let (bitmap, heavy) = c.heavy(200);
            assert_eq!(heavy, 1);
            assert!(bitmap.get(1) && !bitmap.get(2) && !bitmap.get(0));
        }
        assert_eq!(Counters::bits_for(15), 8);
        assert_eq!(Counters::bits_for(255), 8);
        assert_eq!(Counters::bits_for(256), 16);
        assert_eq!(Counters::bits_for(70000), 32);
    }

    #[test]
    fn buckets_spread_and_stay_in_range() {
        let m = 1000;
        let mut seen = vec![0u32; m as usize];
        for i in 0..100u32 {
            for j in i + 1..100 {
                let b = bucket(pack(i, j), 0, m);
                seen[b] += 1;
                assert_ne!(bucket(pack(i, j), 0, m), usize::MAX);
            }
        }
        // 4950 pairs over 1000 buckets: no bucket should hold a crowd.
        assert!(seen.iter().all(|&n| n < 20), "{:?}", seen.iter().max());
        // Different functions place the same pair independently.
        let same =
            (0..1000u32).filter(|&i| bucket(pack(i, i + 1), 0, m) == bucket(pack(i, i + 1), 1, m)).count();
        assert!(same < 10, "{same}");
    }
}
