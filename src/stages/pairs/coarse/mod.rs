//! Coarse counting, the paper's section 2.2 step 3, after the iceberg-query
//! work (Fang, Shivakumar, Garcia-Molina, Motwani, Ullman, VLDB 1998).
//!
//! The target of the iceberg query is the document pair; its count is the
//! number of shared fingerprints; the threshold is T. Instead of
//! materializing every pair like the sort-based method:
//!
//! 1. hashing scans add pairs into arrays of saturating counters;
//! 2. each array becomes a bitmap of its heavy buckets (count >= T), and
//!    the counters are freed;
//! 3. a candidate-selection scan keeps the pairs the bitmaps select, and
//!    counts them exactly through the same spilled aggregation the sort
//!    method uses (candidate selection and verification in one scan);
//!    pairs with F >= T are the answer.
//!
//! The variants of the iceberg paper differ only in steps 1 and 3: which
//! scans they make, where a pair is counted in each ([`Route`]), and which
//! pairs the bitmaps select ([`Selection`]). Each is one file here:
//! [`multi_hash`] (COARSE-COUNT and MULTI-HASH), [`multi_scan`]
//! (MULTI-SCAN-SHARED), [`defer`] (DEFER-COUNT) and [`multi_stage`]
//! (MULTI-STAGE), with the pilot sample of the last two in [`pilot`].
//!
//! Every variant keeps this invariant: all the increments of one pair go to
//! counters that select it, so a pair with F >= T adds at least T to them
//! and is always a candidate. The answer is exactly the sort method's; only
//! the number of false positives (candidates with F < T) depends on the
//! variant and the number of counters, which is why counters are as narrow
//! as T allows: at T <= 255 a byte each, for four times the buckets of
//! 32-bit counters.
//!
//! Counters are shared by the scanning threads through atomic saturating
//! increments; a saturated count is order-independent, so the bitmaps, and
//! the output, do not depend on the thread count.

mod defer;
mod multi_hash;
mod multi_scan;
mod multi_stage;
mod pilot;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::PairsStats;
use super::aggregate::{self, PairFilter, pack};
use super::{CountInput, CountingMethod, GroupStats, Overlap, for_each_group, pair_instances};
use crate::base::memory::{self, ByteSize, ZeroedArray};
use crate::store::stats::{CoarseStats, PassStats};

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
    /// A pilot scan over a sample of the fingerprint groups marks the
    /// buckets that look heavy; in the main scan, a pair whose bucket is
    /// marked counts in a shared pool of second-level counters under a
    /// second hash instead, so the heavy traffic of a few buckets no longer
    /// makes their light neighbours candidates.
    MultiStage,
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
        if s == "multi-stage" {
            return Ok(CoarseVariant::MultiStage);
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
             (available: coarse-count, multi-hash:K, multi-scan-shared:K, defer-count, multi-stage)"
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
            CoarseVariant::MultiStage => f.write_str("multi-stage"),
        }
    }
}

/// Times passes one after the other.
pub(super) struct Passes {
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
    U8(ZeroedArray<AtomicU8>),
    U16(ZeroedArray<AtomicU16>),
    U32(ZeroedArray<AtomicU32>),
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

    fn new(bits: u32, m: usize) -> anyhow::Result<Counters> {
        let no_room = |e: std::io::Error| {
            anyhow::anyhow!(
                "cannot allocate {m} counters of {bits} bits ({}): {e}",
                ByteSize(m as u64 * u64::from(bits / 8))
            )
        };
        Ok(match bits {
            8 => Counters::U8(ZeroedArray::new(m).map_err(no_room)?),
            16 => Counters::U16(ZeroedArray::new(m).map_err(no_room)?),
            _ => Counters::U32(ZeroedArray::new(m).map_err(no_room)?),
        })
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

    /// The bitmap of buckets that reached `t`.
    fn heavy(&self, t: u32) -> std::io::Result<Bitmap> {
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
        let mut bits = Bitmap { words: ZeroedArray::new(m.div_ceil(64))? };
        for b in 0..m {
            if get(b) >= t {
                bits.words[b / 64] |= 1 << (b % 64);
            }
        }
        Ok(bits)
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

/// Which buckets of one counter array reached their threshold.
pub(super) struct Bitmap {
    words: ZeroedArray<u64>,
}

impl Bitmap {
    #[inline]
    fn get(&self, b: usize) -> bool {
        self.words[b / 64] & (1 << (b % 64)) != 0
    }

    /// Asks the CPU to fetch the word of bucket `b` ahead of a `get`.
    #[inline]
    fn prefetch(&self, b: usize) {
        prefetch(self.words[b / 64..].as_ptr().cast());
    }

    /// Buckets set.
    fn ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// Bucket of `pair` in an array of `m` counters under hash function `a`:
/// the splitmix64 finalizer of the pair mixed with a per-function seed,
/// mapped to `0..m` by multiply-shift (no division).
#[inline]
fn bucket(pair: u64, a: u32, m: u64) -> usize {
    let z = mix(pair ^ u64::from(a + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    ((u128::from(z) * u128::from(m)) >> 64) as usize
}

/// The splitmix64 finalizer: every bit of `x` reaches every bit of the
/// result.
#[inline]
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The smallest counter array chosen by default; below it nearly every
/// bucket is heavy and coarse counting degenerates into the sort method.
const MIN_COUNTERS: u64 = 1024;

/// Where a hashing scan counts a pair: the counters (array, bucket) it
/// increments, none for a pair the scan leaves out.
pub(super) trait Route: Sync {
    /// Whether the pairs of the group of fingerprint `fprint` are counted
    /// at all: a pilot scan reads a sample of the groups.
    fn group(&self, _fprint: u64) -> bool {
        true
    }
    fn route(&self, pair: u64, add: &mut impl FnMut(usize, usize));
}

/// Which pairs the candidate-selection scan keeps, and what the variant
/// reports about them.
pub(super) trait Selection: PairFilter {
    /// Hash functions the variant used.
    fn hash_functions(&self) -> u32;
    /// Called with every pair of the table, for the variant's own figures.
    fn true_pair(&mut self, _pair: u64) {}
    /// Adds the variant's own figures.
    fn report(&self, _stats: &mut CoarseStats) {}
}

/// What the variants share while they scan: the input, the counters they
/// may use, and the passes and heavy buckets they report.
pub(super) struct Scans<'a> {
    pub input: &'a CountInput<'a>,
    /// Counters per array (for MULTI-STAGE, the first level and the pool
    /// together).
    pub m: u64,
    pub bits: u32,
    passes: Passes,
    /// Heavy buckets of every array whose bitmap the selection uses, in
    /// the order they were made.
    heavy: Vec<u64>,
    /// The groups of the first full scan (every full scan reads the same).
    groups: GroupStats,
    /// Temporary disk of pilot runs.
    spill_bytes: u64,
}

impl Scans<'_> {
    /// One hashing scan: adds every pair `route` sends into fresh arrays of
    /// the given sizes, and returns each array's bitmap of buckets that
    /// reached `t`, its counters freed. The scan is parallel over the
    /// partitions.
    pub(crate) fn scan(
        &mut self,
        name: &str,
        sizes: &[u64],
        t: u32,
        route: &impl Route,
    ) -> anyhow::Result<Vec<Bitmap>> {
        let input = self.input;
        let arrays = sizes
            .iter()
            .map(|&m| Counters::new(self.bits, m as usize))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let bar = input.progress.items("coarse", input.parts.len() as u64, "partitions");
        let scanned: Vec<anyhow::Result<GroupStats>> = input
            .parts
            .par_iter()
            .map(|part| {
                let mut increments = Increments::new(&arrays, t);
                let groups = for_each_group(input, part, |docs, fprint| {
                    if !route.group(fprint) {
                        return Ok(());
                    }
                    for (x, &i) in docs.iter().enumerate() {
                        for &j in aggregate::partners(input.cross_at, docs, x) {
                            route.route(pack(i, j), &mut |a, b| increments.add(a, b));
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
        if self.groups.shared_fingerprints == 0 {
            self.groups = groups;
        }
        let bitmaps = arrays
            .iter()
            .map(|c| {
                c.heavy(t).map_err(|e| anyhow::anyhow!("cannot allocate a bitmap of heavy buckets: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        drop(arrays);
        self.passes.end(name);
        Ok(bitmaps)
    }

    /// Records the heavy buckets of bitmaps the selection uses.
    pub(crate) fn count_heavy(&mut self, bitmaps: &[Bitmap]) {
        self.heavy.extend(bitmaps.iter().map(Bitmap::ones));
    }
}

impl CountingMethod for CoarseCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let bits = Counters::bits_for(input.threshold);
        // Arrays alive at once during a scan.
        let arrays_at_once = match self.variant {
            CoarseVariant::MultiHash { k } => k,
            _ => 1,
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
                        ByteSize(crate::base::memory::stated(input.memory)),
                        ByteSize(crate::base::memory::stated(need * 2))
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
        let mut scans = Scans {
            input,
            m,
            bits,
            passes,
            heavy: Vec::new(),
            groups: GroupStats::default(),
            spill_bytes: 0,
        };
        let variant = self.variant;
        match variant {
            CoarseVariant::MultiHash { k } => {
                let selection = multi_hash::select(&mut scans, k)?;
                verify(selection, scans, variant, stats, emit)
            }
            CoarseVariant::MultiScanShared { k } => {
                let selection = multi_scan::select(&mut scans, k)?;
                verify(selection, scans, variant, stats, emit)
            }
            CoarseVariant::DeferCount => {
                let selection = defer::select(&mut scans)?;
                verify(selection, scans, variant, stats, emit)
            }
            CoarseVariant::MultiStage => {
                let selection = multi_stage::select(&mut scans)?;
                verify(selection, scans, variant, stats, emit)
            }
        }
    }
}

/// Candidate selection and verification in one scan, then the figures.
fn verify(
    mut selection: impl Selection,
    mut scans: Scans<'_>,
    variant: CoarseVariant,
    stats: &mut PairsStats,
    emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let input = scans.input;
    scans.groups.fill(stats);
    let runs = aggregate::RunDir::new(input.scratch);
    let spilled = aggregate::spill_pairs(input, &runs, "verify", &selection)?;
    let mut true_pairs = 0u64;
    let candidates = aggregate::reduce(spilled.runs, input.memory, input.threshold, &runs, &mut |o| {
        true_pairs += 1;
        selection.true_pair(pack(o.doc_i, o.doc_j));
        emit(o)
    })?;
    scans.passes.end("verify");
    stats.distinct_pairs = candidates;
    stats.spill_bytes = runs.bytes() + scans.spill_bytes;
    let mut coarse = CoarseStats {
        variant: variant.to_string(),
        hash_functions: selection.hash_functions(),
        counters_per_array: scans.m,
        counter_bits: scans.bits,
        heavy_buckets: scans.heavy,
        candidate_instances: spilled.kept,
        candidates,
        false_positives: candidates - true_pairs,
        true_pairs,
        passes: scans.passes.done,
        ..CoarseStats::default()
    };
    selection.report(&mut coarse);
    stats.coarse = Some(coarse);
    Ok(())
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
        assert_eq!("multi-stage".parse(), Ok(CoarseVariant::MultiStage));
        for v in ["multi-scan-shared:3", "defer-count", "multi-hash:4", "multi-stage"] {
            assert_eq!(v.parse::<CoarseVariant>().unwrap().to_string(), v);
        }
        for bad in ["multi-hash:0", "multi-hash:9", "multi-hash:x", "defer", "multi-scan-shared:0"] {
            assert!(bad.parse::<CoarseVariant>().is_err(), "{bad}");
        }
    }

    #[test]
    fn counters_saturate_at_the_threshold() {
        for bits in [8, 16, 32] {
            let c = Counters::new(bits, 4).unwrap();
            for _ in 0..300 {
                c.add(1, 200);
            }
            c.add(2, 200);
            let bitmap = c.heavy(200).unwrap();
            assert_eq!(bitmap.ones(), 1);
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
