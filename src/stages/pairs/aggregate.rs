//! External aggregation of document pairs, shared by the counting methods:
//! pairs go into a buffer of the memory budget's share; a full buffer is
//! sorted and collapsed into `(pair, count)` runs on disk; the runs are
//! merged with their counts summed. Collapsing before spilling keeps the
//! spill small when a few pairs share many fingerprints (near-replicas).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{CountInput, GroupStats, Overlap, for_each_group};
use crate::store::{HEADER_SIZE, Header, Record, RecordReader, RecordWriter};

/// A document pair packed as `i << 32 | j` (i < j), so that sorting the
/// packed values sorts pairs by (i, j).
#[inline]
pub(crate) fn pack(i: u32, j: u32) -> u64 {
    (u64::from(i) << 32) | u64::from(j)
}

/// One run entry: a pair and how many shared fingerprints it has so far.
/// Scratch record kind 4, 12 bytes: `pair: u64`, `count: u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PairCount {
    pair: u64,
    count: u32,
}

impl Record for PairCount {
    const KIND: u32 = 4;
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.pair.to_le_bytes());
        out[8..12].copy_from_slice(&self.count.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let mut p = [0u8; 8];
        p.copy_from_slice(&b[..8]);
        let mut c = [0u8; 4];
        c.copy_from_slice(&b[8..12]);
        PairCount { pair: u64::from_le_bytes(p), count: u32::from_le_bytes(c) }
    }
}

/// The scratch directory the runs of one counting go to, naming them and
/// adding up the bytes they take.
pub(crate) struct RunDir {
    dir: PathBuf,
    next: AtomicU64,
    bytes: AtomicU64,
}

impl RunDir {
    pub(crate) fn new(dir: &Path) -> RunDir {
        RunDir { dir: dir.to_path_buf(), next: AtomicU64::new(0), bytes: AtomicU64::new(0) }
    }

    /// Bytes written to runs so far (the temporary disk a method needs,
    /// counting every merge round).
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Writes one run from pairs in ascending order.
    fn write(
        &self,
        mut fill: impl FnMut(&mut RecordWriter<PairCount>) -> anyhow::Result<()>,
    ) -> anyhow::Result<PathBuf> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("run-{n:07}.fpd"));
        let mut w = RecordWriter::create(&path, Header::new::<PairCount>("", true, 0, 1))?;
        fill(&mut w)?;
        let count = w.finish()?;
        self.bytes.fetch_add(HEADER_SIZE as u64 + count * PairCount::SIZE as u64, Ordering::Relaxed);
        Ok(path)
    }
}

/// Buffers of the DocID-DocID file, spilled as collapsed sorted runs.
pub(crate) struct RunBuilder<'a> {
    buf: Vec<u64>,
    cap: usize,
    dir: &'a RunDir,
    runs: Vec<PathBuf>,
}

impl<'a> RunBuilder<'a> {
    pub(crate) fn new(cap: usize, dir: &'a RunDir) -> Self {
        RunBuilder { buf: Vec::new(), cap, dir, runs: Vec::new() }
    }

    #[inline]
    pub(crate) fn push(&mut self, pair: u64) -> anyhow::Result<()> {
        if self.buf.len() >= self.cap {
            self.spill()?;
        }
        crate::base::memory::grow_within(&mut self.buf, self.cap);
        self.buf.push(pair);
        Ok(())
    }

    fn spill(&mut self) -> anyhow::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.buf.sort_unstable();
        let buf = &self.buf;
        let path = self.dir.write(|w| {
            let mut iter = buf.iter().copied();
            if let Some(first) = iter.next() {
                let mut cur = PairCount { pair: first, count: 1 };
                for pair in iter {
                    if pair == cur.pair {
                        cur.count = cur.count.saturating_add(1);
                    } else {
                        w.push(&cur)?;
                        cur = PairCount { pair, count: 1 };
                    }
                }
                w.push(&cur)?;
            }
            Ok(())
        })?;
        self.runs.push(path);
        self.buf.clear();
        Ok(())
    }

    pub(crate) fn finish(mut self) -> anyhow::Result<Vec<PathBuf>> {
        self.spill()?;
        Ok(self.runs)
    }
}

/// Merges sorted runs, summing the counts of equal pairs, and calls `f`
/// with every distinct pair and its total, in pair order.
fn merge(runs: &[PathBuf], mut f: impl FnMut(PairCount) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut readers =
        runs.iter().map(|p| RecordReader::<PairCount>::open(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::with_capacity(readers.len());
    let mut heads = vec![PairCount { pair: 0, count: 0 }; readers.len()];
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(pc) = r.next_record()? {
            heads[i] = pc;
            heap.push(Reverse((pc.pair, i)));
        }
    }
    let mut cur: Option<PairCount> = None;
    while let Some(Reverse((pair, i))) = heap.pop() {
        let count = heads[i].count;
        match &mut cur {
            Some(c) if c.pair == pair => c.count = c.count.saturating_add(count),
            _ => {
                if let Some(c) = cur.take() {
                    f(c)?;
                }
                cur = Some(PairCount { pair, count });
            }
        }
        if let Some(next) = readers[i].next_record()? {
            heads[i] = next;
            heap.push(Reverse((next.pair, i)));
        }
    }
    if let Some(c) = cur {
        f(c)?;
    }
    Ok(())
}

/// Most runs merged at once; more are first merged in groups, so open
/// files and read buffers stay bounded.
fn fan_in(memory: u64) -> usize {
    // Each open run holds a 64 KiB read buffer; give the merge a quarter of
    // the budget.
    ((memory / 4) / (64 << 10)).clamp(2, 512) as usize
}

/// What [`spill_pairs`] produced.
pub(crate) struct Spilled {
    pub groups: GroupStats,
    pub runs: Vec<PathBuf>,
    /// Pairs that passed `keep` and went into the runs.
    pub kept: u64,
}

/// Which generated pairs go into the runs.
pub(crate) trait PairFilter: Sync {
    /// A hint that `keep(pair)` comes soon, so that what it reads can be
    /// fetched into cache ahead of it.
    fn prefetch(&self, _pair: u64) {}
    fn keep(&self, pair: u64) -> bool;
    /// Whether the pairs of the group of fingerprint `fprint` are
    /// generated at all: a pilot scan reads a sample of the groups.
    fn group(&self, _fprint: u64) -> bool {
        true
    }
}

/// Every pair: the sort method's DocID-DocID file.
pub(crate) struct AllPairs;

impl PairFilter for AllPairs {
    fn keep(&self, _pair: u64) -> bool {
        true
    }
}

/// Pairs tested in one batch: each is prefetched when generated and
/// tested a batch later, so a filter's random reads overlap.
const FILTER_BATCH: usize = 64;

/// The documents after `docs[a]` in a group (ascending) that are paired
/// with it: all of them, or with [`CountInput::cross_at`] those of the
/// other side (none for a document of the second side).
pub(crate) fn partners(cross_at: Option<u32>, docs: &[u32], a: usize) -> &[u32] {
    match cross_at {
        None => &docs[a + 1..],
        Some(n) if docs[a] < n => &docs[docs.partition_point(|&d| d < n)..],
        Some(_) => &[],
    }
}

/// Generates every pair of every fingerprint group, in parallel over the
/// partitions, and spills those the filter keeps into collapsed runs.
/// With [`CountInput::cross_at`], only the pairs across the two sides.
pub(crate) fn spill_pairs(
    input: &CountInput<'_>,
    dir: &RunDir,
    label: &str,
    filter: &impl PairFilter,
) -> anyhow::Result<Spilled> {
    let cap = buffer_pairs(input.memory);
    let bar = input.progress.items(label, input.parts.len() as u64, "partitions");
    let results: Vec<anyhow::Result<(GroupStats, Vec<PathBuf>, u64)>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut runs = RunBuilder::new(cap, dir);
            let mut kept = 0u64;
            let mut batch: Vec<u64> = Vec::with_capacity(FILTER_BATCH);
            let mut test = |batch: &mut Vec<u64>, runs: &mut RunBuilder<'_>| -> anyhow::Result<()> {
                for pair in batch.drain(..) {
                    if filter.keep(pair) {
                        kept += 1;
                        runs.push(pair)?;
                    }
                }
                Ok(())
            };
            let groups = for_each_group(input, part, |docs, fprint| {
                if !filter.group(fprint) {
                    return Ok(());
                }
                for (a, &i) in docs.iter().enumerate() {
                    for &j in partners(input.cross_at, docs, a) {
                        let pair = pack(i, j);
                        filter.prefetch(pair);
                        batch.push(pair);
                        if batch.len() == FILTER_BATCH {
                            test(&mut batch, &mut runs)?;
                        }
                    }
                }
                Ok(())
            })?;
            test(&mut batch, &mut runs)?;
            bar.inc(1);
            Ok((groups, runs.finish()?, kept))
        })
        .collect();
    bar.finish_and_clear();
    let mut out = Spilled { groups: GroupStats::default(), runs: Vec::new(), kept: 0 };
    for r in results {
        let (groups, runs, kept) = r?;
        out.groups.add(&groups);
        out.runs.extend(runs);
        out.kept += kept;
    }
    Ok(out)
}

/// The buffer share of each of `threads` concurrent run builders: half the
/// budget, in pairs.
pub(crate) fn buffer_pairs(memory: u64) -> usize {
    let threads = rayon::current_num_threads().max(1) as u64;
    ((memory / 2 / threads) / 8).max(1 << 12) as usize
}

/// Merges `runs` (in rounds when there are more than one pass can open),
/// calls `emit` for every pair whose total count reaches `threshold`, in
/// (i, j) order, and returns the number of distinct pairs.
pub(crate) fn reduce(
    mut runs: Vec<PathBuf>,
    memory: u64,
    threshold: u32,
    dir: &RunDir,
    emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let width = fan_in(memory);
    while runs.len() > width {
        let merged: Vec<anyhow::Result<PathBuf>> = runs
            .par_chunks(width)
            .map(|group| {
                let path = dir.write(|w| merge(group, |pc| w.push(&pc)))?;
                for p in group {
                    let _ = std::fs::remove_file(p);
                }
                Ok(path)
            })
            .collect();
        runs = merged.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    }
    let mut distinct = 0u64;
    merge(&runs, |pc| {
        distinct += 1;
        if pc.count >= threshold {
            emit(Overlap { doc_i: (pc.pair >> 32) as u32, doc_j: pc.pair as u32, shared: pc.count })?;
        }
        Ok(())
    })?;
    Ok(distinct)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_run(dir: &Path, name: &str, items: &[(u64, u32)]) -> PathBuf {
        let path = dir.join(name);
        let mut w = RecordWriter::create(&path, Header::new::<PairCount>("", true, 0, 1)).unwrap();
        for &(pair, count) in items {
            w.push(&PairCount { pair, count }).unwrap();
        }
        w.finish().unwrap();
        path
    }

    #[test]
    fn merge_sums_equal_pairs_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_run(dir.path(), "a", &[(1, 2), (5, 1), (9, 3)]);
        let b = write_run(dir.path(), "b", &[(1, 1), (6, 4), (9, 1)]);
        let c = write_run(dir.path(), "c", &[]);
        let mut out = Vec::new();
        merge(&[a, b, c], |pc| {
            out.push((pc.pair, pc.count));
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [(1, 3), (5, 1), (6, 4), (9, 4)]);
    }

    #[test]
    fn run_builder_collapses_and_spills() {
        let dir = tempfile::tempdir().unwrap();
        let runs_dir = RunDir::new(dir.path());
        let mut rb = RunBuilder::new(4, &runs_dir);
        for p in [3, 1, 3, 2, 3, 1, 7] {
            rb.push(p).unwrap();
        }
        let runs = rb.finish().unwrap();
        assert_eq!(runs.len(), 2);
        let mut out = Vec::new();
        merge(&runs, |pc| {
            out.push((pc.pair, pc.count));
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [(1, 2), (2, 1), (3, 3), (7, 1)]);
    }

    #[test]
    fn partners_are_all_later_documents_or_those_of_the_other_side() {
        let docs = [1, 2, 4, 5];
        assert_eq!(partners(None, &docs, 1), &[4, 5]);
        assert_eq!(partners(None, &docs, 3), &[] as &[u32]);
        for a in 0..2 {
            assert_eq!(partners(Some(3), &docs, a), &[4, 5], "one below the boundary");
        }
        for a in 2..4 {
            assert_eq!(partners(Some(3), &docs, a), &[] as &[u32], "one at or above it");
        }
        assert_eq!(partners(Some(9), &docs, 0), &[] as &[u32], "no document of the other side");
    }

    #[test]
    fn packed_pairs_sort_by_i_then_j() {
        assert!(pack(1, 9) < pack(2, 3));
        assert!(pack(2, 3) < pack(2, 4));
        assert_eq!(pack(u32::MAX - 1, u32::MAX) >> 32, u64::from(u32::MAX - 1));
    }

    #[test]
    fn reduce_merges_in_rounds_when_runs_outnumber_the_fan_in() {
        let dir = tempfile::tempdir().unwrap();
        let runs: Vec<PathBuf> = (0..7u64)
            .map(|r| write_run(dir.path(), &format!("in-{r}"), &[(1, 1), (10 + r, 2), (100, 3)]))
            .collect();
        let runs_dir = RunDir::new(&dir.path().join("merged"));
        std::fs::create_dir(dir.path().join("merged")).unwrap();
        let mut out = Vec::new();
        // A budget this small allows two runs per merge: three rounds.
        assert_eq!(fan_in(0), 2);
        let distinct = reduce(runs, 0, 3, &runs_dir, &mut |o| {
            out.push((o.doc_i, o.doc_j, o.shared));
            Ok(())
        })
        .unwrap();
        assert_eq!(distinct, 9);
        // Rounds of 7 -> 4 -> 2 runs were written before the final merge.
        assert!(runs_dir.bytes() > 0);
        // Pair 1 totals 7, pairs 10..16 total 2 each (below T = 3), pair 100 totals 21.
        assert_eq!(out, [(0, 1, 7), (0, 100, 21)]);
    }
}
