//! Prefix filtering: the exact Overlap table without generating the pairs
//! that share only common chunks. The paper did not have it; it comes from
//! the set-similarity-join literature (Chaudhuri, Ganti & Kaushik, ICDE
//! 2006; Bayardo, Ma & Srikant's All-Pairs, WWW 2007).
//!
//! Order all shared fingerprints globally by ascending document frequency
//! (then by value). A document's list L is its shared fingerprints in that
//! order; F(i, j) = |L_i ∩ L_j|. If F(i, j) >= T, then the first
//! |L_i| - T + 1 entries of L_i (its prefix) and the prefix of L_j share a
//! fingerprint: otherwise the T or more common fingerprints would all lie
//! in the last T - 1 entries of one of the lists. So:
//!
//! 1. the fingerprint groups (stop chunks and non-centers left out, as for
//!    every method) become postings `(doc, df, fprint)`, sorted by document
//!    and then by the global order: the lists;
//! 2. each list of T or more entries contributes its prefix to an inverted
//!    index, sorted by fingerprint; documents with fewer than T shared
//!    fingerprints cannot be in the table and are dropped;
//! 3. the pairs of every prefix group are the candidates, deduplicated
//!    through the same spilled aggregation the other methods use;
//! 4. each candidate is verified by intersecting the two lists, in
//!    parallel, in (i, j) order.
//!
//! With a similarity criterion (`--jaccard`, `--containment`, see
//! [`crate::store::criterion`]) the same lists give the set-similarity join of
//! Bayardo, Ma & Srikant and Xiao et al.'s PPJoin: a document's unshared
//! chunks (in no other counted document of its scope) can never be common,
//! so they count as the rarest and sit before its list; the overlap a pair
//! needs grows with the documents' sizes, which shortens prefixes; a
//! document's prefix is indexed as far as it may be the larger of a pair,
//! and marked where it may be the smaller (a shorter prefix, since the
//! smaller of two sets needs the larger share); a pair is a candidate only
//! at a chunk in the smaller document's marked prefix, and only when
//! their sizes can reach the Jaccard threshold at all.
//!
//! Boilerplate chunks have the highest document frequencies, so they fall
//! in the last T - 1 entries of short lists and generate no pairs there;
//! rare chunks, the ones that show copying, are what prefixes are made of.
//! Every file of this method is scratch: records of kind 5 below, kind 1
//! for the prefix index, the aggregation's runs.

use std::path::Path;

use rayon::prelude::*;

use super::PairsStats;
use super::aggregate::{self, RunBuilder, RunDir, pack};
use super::{CountInput, CountingMethod, GroupStats, Overlap, for_each_group, scan_groups};
use crate::store::stats::PrefixStats;
use crate::store::{self, ChunkRecord, HEADER_SIZE, Header, Mapped, ReadAt, Record, RecordWriter};

/// One shared fingerprint of one document with its document frequency.
/// Scratch record kind 5, 16 bytes: `doc: u32`, `df: u32`, `fprint: u64`.
/// Ordered by document, then by the global order of fingerprints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct DocPosting {
    doc: u32,
    df: u32,
    fprint: u64,
}

impl Record for DocPosting {
    const KIND: u32 = 5;
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.doc.to_le_bytes());
        out[4..8].copy_from_slice(&self.df.to_le_bytes());
        out[8..16].copy_from_slice(&self.fprint.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut f = [0u8; 8];
        f.copy_from_slice(&b[8..16]);
        DocPosting { doc: u32_at(0), df: u32_at(4), fprint: u64::from_le_bytes(f) }
    }
}

/// One entry of the prefix index under a similarity criterion: a chunk in
/// a document's prefix, and whether it is also in the shorter prefix the
/// document has as the smaller of a pair. Scratch record kind 15, 16 bytes:
/// `fprint: u64`, `doc: u32`, `as_smaller: u32` (0 or 1). Ordered by
/// fingerprint, then document, as the FPrint-DocID files are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PrefixEntry {
    fprint: u64,
    doc: u32,
    as_smaller: u32,
}

impl Record for PrefixEntry {
    const KIND: u32 = 15;
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.fprint.to_le_bytes());
        out[8..12].copy_from_slice(&self.doc.to_le_bytes());
        out[12..16].copy_from_slice(&self.as_smaller.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let mut f = [0u8; 8];
        f.copy_from_slice(&b[..8]);
        let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        PrefixEntry { fprint: u64::from_le_bytes(f), doc: u32_at(8), as_smaller: u32_at(12) }
    }
}

/// Candidates verified in one parallel batch.
const VERIFY_BATCH: usize = 1 << 16;

/// Steps 1 and 2: the lists and the sorted prefix index, and what they
/// predict of the rest. `auto` builds this to decide whether prefix
/// filtering wins before it commits to it.
pub struct PrefixIndex {
    lists: Lists,
    prefixes: std::path::PathBuf,
    figures: PrefixStats,
    scratch_bytes: u64,
    /// Distinct candidates, if estimated.
    distinct_estimate: Option<u64>,
}

impl PrefixIndex {
    pub(crate) fn build(input: &CountInput<'_>) -> anyhow::Result<PrefixIndex> {
        let scratch = input.scratch;
        let mut figures = PrefixStats::default();
        let unsorted = scratch.join("prefixes-unsorted.fpd");
        let lists = Lists::write(input, None, Some(&unsorted), &mut figures)?;
        let mut scratch_bytes = lists.scratch_bytes + file_len(&unsorted);

        // The prefix index sorted by fingerprint, counting the candidate
        // instances its groups will generate (every pair of a group: under
        // a similarity criterion, an upper bound).
        let prefixes = scratch.join("prefixes.fpd");
        let budget = lists.budget(input);
        figures.candidate_instances = if input.criterion.needs_sizes() {
            sort_index::<PrefixEntry>(input, budget, &unsorted, &prefixes, |e| e.fprint)?
        } else {
            sort_index::<ChunkRecord>(input, budget, &unsorted, &prefixes, |r| r.fprint)?
        };
        store::remove_file_if_exists(&unsorted)?;
        scratch_bytes += file_len(&prefixes);
        Ok(PrefixIndex { lists, prefixes, figures, scratch_bytes, distinct_estimate: None })
    }

    /// Calls `f` with every candidate instance (a pair, packed) the prefix
    /// groups generate, the same pair once per group it is generated in.
    fn for_each_candidate(
        &self,
        input: &CountInput<'_>,
        mut f: impl FnMut(u64) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let Some(sizes) = input.sizes else {
            // The prefix index is a sorted FPrint-DocID file of counted
            // documents: its groups are read like the partitions'.
            scan_groups(&self.prefixes, input.counted, |docs, _| {
                for (x, &i) in docs.iter().enumerate() {
                    for &j in aggregate::partners(input.cross_at, docs, x) {
                        f(pack(i, j))?;
                    }
                }
                Ok(())
            })?;
            return Ok(());
        };
        let criterion = &input.criterion;
        let entries = Mapped::<PrefixEntry>::open(&self.prefixes)?;
        let mut group: Vec<(u32, u32, u32, bool)> = Vec::new();
        let mut flush = |group: &mut Vec<(u32, u32, u32, bool)>| -> anyhow::Result<()> {
            // Within one scope, by size: the partners whose size can pass
            // with a document's are the ones after it, up to the first too
            // large.
            group.sort_unstable();
            for (x, &(scope, a, i, as_smaller)) in group.iter().enumerate() {
                if !as_smaller {
                    continue;
                }
                for &(other_scope, b, j, _) in &group[x + 1..] {
                    if other_scope != scope || !criterion.sizes_can_pass(a, b) {
                        break;
                    }
                    if input.cross_at.is_some_and(|n| (i < n) == (j < n)) {
                        continue;
                    }
                    f(pack(i.min(j), i.max(j)))?;
                }
            }
            group.clear();
            Ok(())
        };
        let mut current = None;
        for e in entries.iter() {
            if current != Some(e.fprint) {
                flush(&mut group)?;
                current = Some(e.fprint);
            }
            let scope = input.counted.scope(e.doc);
            group.push((scope, sizes[e.doc as usize], e.doc, e.as_smaller != 0));
        }
        flush(&mut group)
    }

    /// The work left, in list entries read: every candidate instance is
    /// generated, and every distinct candidate is verified by merging two
    /// lists of the average length. The distinct candidates are estimated
    /// by [`PrefixIndex::estimate_candidates`]; without it, every instance
    /// counts as distinct (an upper bound).
    pub(crate) fn work(&self) -> u64 {
        let average_list = self.figures.postings_in_long_lists / self.figures.long_documents.max(1);
        let distinct = self.distinct_estimate.unwrap_or(self.figures.candidate_instances);
        let verify = distinct.saturating_mul(2 * average_list);
        self.figures.candidate_instances.saturating_add(verify)
    }

    /// Estimates the distinct candidate pairs with a HyperLogLog sketch
    /// over every pair the prefix groups generate, for [`PrefixIndex::work`].
    /// Boilerplate that survives into prefixes makes one pair of documents
    /// a candidate many times over (on a generated 2.5 GB crawl, 31 million
    /// instances were 1.6 million pairs), so counting instances would
    /// overstate verification twentyfold. Costs one pass over the
    /// candidate instances, which the caller bounds.
    pub(crate) fn estimate_candidates(&mut self, input: &CountInput<'_>) -> anyhow::Result<u64> {
        let mut sketch = HyperLogLog::new();
        self.for_each_candidate(input, |pair| {
            sketch.add(pair);
            Ok(())
        })?;
        let estimate = sketch.estimate().min(self.figures.candidate_instances);
        self.distinct_estimate = Some(estimate);
        Ok(estimate)
    }

    pub(crate) fn candidate_instances(&self) -> u64 {
        self.figures.candidate_instances
    }

    /// Steps 3 and 4: candidates from the prefix groups, deduplicated and
    /// verified in (i, j) order.
    fn count(
        &mut self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        self.lists.groups.fill(stats);
        let runs = RunDir::new(input.scratch);
        let budget = self.lists.budget(input);
        let mut builder = RunBuilder::new(aggregate::buffer_pairs(budget), &runs);
        self.for_each_candidate(input, |pair| builder.push(pair))?;
        store::remove_file_if_exists(&self.prefixes)?;
        let verified = self.lists.verify(input, builder.finish()?, &runs, emit)?;
        self.figures.candidates = verified.candidates;
        self.figures.false_positives = verified.false_positives();
        stats.distinct_pairs = verified.candidates;
        stats.spill_bytes = self.scratch_bytes + runs.bytes();
        stats.prefix = Some(self.figures.clone());
        Ok(())
    }
}

impl Drop for PrefixIndex {
    /// An index `auto` built and did not use leaves no scratch behind.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.prefixes);
    }
}

/// Every counted document's shared fingerprints (stop chunks out) in the
/// global order: what a candidate pair is verified against, by
/// intersection, whichever method generated it (prefix filtering here,
/// the signature methods in [`super::lsh`]). Documents whose list is too
/// short to pass with any partner have an empty one. Scratch, removed when
/// dropped.
pub(crate) struct Lists {
    path: std::path::PathBuf,
    /// Where each document's list starts (entry d to d + 1).
    starts: Starts,
    /// What reading the fingerprint groups found.
    pub(crate) groups: GroupStats,
    /// Bytes written to build them.
    pub(crate) scratch_bytes: u64,
}

/// What verifying a sorted stream of candidates found.
pub(crate) struct Verified {
    /// Distinct candidate pairs.
    pub candidates: u64,
    /// Those that pass the criterion: the table's rows.
    pub true_pairs: u64,
}

impl Verified {
    pub(crate) fn false_positives(&self) -> u64 {
        self.candidates - self.true_pairs
    }
}

impl Lists {
    /// Builds the lists, and with `prefixes` the unsorted prefix index of
    /// the documents that can pass with some partner, filling `figures`.
    fn write(
        input: &CountInput<'_>,
        keep: Option<&[bool]>,
        prefixes: Option<&Path>,
        figures: &mut PrefixStats,
    ) -> anyhow::Result<Lists> {
        let (postings, groups) = write_postings(input, keep)?;
        // The postings were the last pass to read the centers at random.
        input.counted.release();
        let path = input.scratch.join("lists.fpd");
        let starts = write_lists(input, &postings, &path, prefixes, figures)?;
        let mut scratch_bytes = file_len(&path);
        for p in &postings {
            scratch_bytes += file_len(p);
            store::remove_file_if_exists(p)?;
        }
        Ok(Lists { path, starts, groups, scratch_bytes })
    }

    /// The budget of the steps after the lists, while they live:
    /// `--memory` less where each list starts.
    pub(crate) fn budget(&self, input: &CountInput<'_>) -> u64 {
        self.starts.left_of(input.memory)
    }

    /// The lists of the documents `keep` marks (by row), for methods that
    /// find their candidates elsewhere: the others' lists are empty.
    pub(crate) fn build(input: &CountInput<'_>, keep: &[bool]) -> anyhow::Result<Lists> {
        Lists::write(input, Some(keep), None, &mut PrefixStats::default())
    }

    /// Deduplicates the candidate pairs in `runs` (packed, unsorted,
    /// repeated), verifies each by intersecting two lists, in parallel
    /// batches, and emits those that pass the criterion in (i, j) order.
    pub(crate) fn verify(
        &self,
        input: &CountInput<'_>,
        runs: Vec<std::path::PathBuf>,
        run_dir: &RunDir,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<Verified> {
        let passes = |i: u32, j: u32, f: u32| match input.sizes {
            None => f >= input.threshold,
            Some(sizes) => input.criterion.passes(f, sizes[i as usize], sizes[j as usize]),
        };
        let budget = self.budget(input);
        let verifier = Verifier::open(&self.path, &self.starts, budget / 4)?;
        let mut batch: Vec<u64> = Vec::with_capacity(VERIFY_BATCH);
        let mut true_pairs = 0u64;
        let mut verify = |batch: &mut Vec<u64>, emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>| {
            for (&pair, f) in batch.iter().zip(verifier.shared(batch)?) {
                let (i, j) = ((pair >> 32) as u32, pair as u32);
                if passes(i, j, f) {
                    true_pairs += 1;
                    emit(Overlap { doc_i: i, doc_j: j, shared: f })?;
                }
            }
            batch.clear();
            anyhow::Ok(())
        };
        let candidates = aggregate::reduce(runs, budget, 1, run_dir, &mut |o| {
            batch.push(pack(o.doc_i, o.doc_j));
            if batch.len() == VERIFY_BATCH {
                verify(&mut batch, emit)?;
            }
            Ok(())
        })?;
        verify(&mut batch, emit)?;
        Ok(Verified { candidates, true_pairs })
    }
}

impl Drop for Lists {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Exact counting by prefix filtering, from an index `auto` already built
/// or from scratch.
pub struct PrefixCounting {
    pub index: std::cell::Cell<Option<PrefixIndex>>,
}

impl CountingMethod for PrefixCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut index = match self.index.take() {
            Some(index) => index,
            None => PrefixIndex::build(input)?,
        };
        index.count(input, stats, emit)
    }
}

/// Writes one posting per document of every counted fingerprint group
/// (with `keep`, of the documents it marks), a file per partition.
fn write_postings(
    input: &CountInput<'_>,
    keep: Option<&[bool]>,
) -> anyhow::Result<(Vec<std::path::PathBuf>, GroupStats)> {
    let bar = input.progress.items("postings", input.parts.len() as u64, "partitions");
    // One file per partition, in parallel: they are sorted together next,
    // so the order they are written in does not show.
    let done: Vec<anyhow::Result<(std::path::PathBuf, GroupStats)>> = input
        .parts
        .par_iter()
        .enumerate()
        .map(|(k, part)| {
            let path = input.scratch.join(format!("postings-{k}.fpd"));
            let mut w =
                RecordWriter::<DocPosting>::create(&path, Header::new::<DocPosting>("", false, 0, 1))?;
            let g = for_each_group(input, part, |docs, fprint| {
                let df = docs.len() as u32;
                for &doc in docs {
                    if keep.is_none_or(|keep| keep[doc as usize]) {
                        w.push(&DocPosting { doc, df, fprint })?;
                    }
                }
                Ok(())
            })?;
            w.finish()?;
            bar.inc(1);
            Ok((path, g))
        })
        .collect();
    bar.finish_and_clear();
    let mut paths = Vec::with_capacity(done.len());
    let mut groups = GroupStats::default();
    for d in done {
        let (path, g) = d?;
        paths.push(path);
        groups.add(&g);
    }
    Ok((paths, groups))
}

/// Sorts `unsorted` into `sorted` and returns the candidate instances its
/// groups (records of one fingerprint) generate at most.
fn sort_index<R: Record + Ord>(
    input: &CountInput<'_>,
    budget: u64,
    unsorted: &Path,
    sorted: &Path,
    fprint: impl Fn(&R) -> u64,
) -> anyhow::Result<u64> {
    let mut w = RecordWriter::<R>::create(sorted, Header::new::<R>("", true, 0, 1))?;
    let mut instances = 0u64;
    let mut run = (None, 0u64);
    store::sort::sorted_file(unsorted, budget / 2, input.scratch, |r| {
        if run.0 != Some(fprint(&r)) {
            instances += run.1 * run.1.saturating_sub(1) / 2;
            run = (Some(fprint(&r)), 0);
        }
        run.1 += 1;
        w.push(&r)
    })?;
    instances += run.1 * run.1.saturating_sub(1) / 2;
    w.finish()?;
    Ok(instances)
}

/// Where a prefix index entry goes: plain fingerprint records for F >= T,
/// entries marked for the smaller document's prefix under a similarity
/// criterion, or nowhere when only the lists are wanted.
enum IndexWriter {
    None,
    Count(RecordWriter<ChunkRecord>),
    Similar(RecordWriter<PrefixEntry>),
}

/// Sorts the postings into per-document lists, keeps the lists of
/// documents that can pass with some partner (at least T entries, or the
/// overlap their size needs) in `lists`, writes their prefixes (in
/// `prefixes`), and returns where each document's list starts: entry `d`
/// to `d + 1` of the result ([`Starts`]). The sort takes half of what the
/// starts leave of the budget.
fn write_lists(
    input: &CountInput<'_>,
    postings: &[std::path::PathBuf],
    lists: &Path,
    prefixes: Option<&Path>,
    figures: &mut PrefixStats,
) -> anyhow::Result<Starts> {
    let documents = input.counted.documents();
    // The lists hold at most every posting.
    let entries =
        postings.iter().map(|p| file_len(p).saturating_sub(HEADER_SIZE as u64) / DocPosting::SIZE as u64);
    let mut starts = Starts::new(documents + 1, entries.sum());
    let sort_budget = starts.left_of(input.memory) / 2;
    let mut lw = RecordWriter::<DocPosting>::create(lists, Header::new::<DocPosting>("", true, 0, 1))?;
    let mut pw = match (prefixes, input.sizes) {
        (None, _) => IndexWriter::None,
        (Some(prefixes), None) => {
            IndexWriter::Count(RecordWriter::create(prefixes, Header::new::<ChunkRecord>("", false, 0, 1))?)
        }
        (Some(prefixes), Some(_)) => {
            IndexWriter::Similar(RecordWriter::create(prefixes, Header::new::<PrefixEntry>("", false, 0, 1))?)
        }
    };
    // The overlap a document needs with any partner, and as the smaller
    // of a pair; its unshared chunks come before its list (l entries of
    // its a chunks), so a prefix of the whole set of length a - o + 1 is
    // l - o + 1 entries of the list.
    let needs = |doc: usize| -> (usize, usize) {
        match input.sizes {
            None => (input.threshold as usize, input.threshold as usize),
            Some(sizes) => {
                let a = sizes[doc];
                (
                    input.criterion.least_overlap(a) as usize,
                    input.criterion.least_overlap_as_smaller(a) as usize,
                )
            }
        }
    };
    let mut list: Vec<DocPosting> = Vec::new();
    // Documents before `next` have their start set.
    let mut next = 0usize;
    let mut flush = |list: &mut Vec<DocPosting>, lw: &mut RecordWriter<DocPosting>| -> anyhow::Result<()> {
        let Some(first) = list.first() else { return Ok(()) };
        let doc = first.doc as usize;
        if doc >= documents {
            anyhow::bail!("docID {doc} in the fingerprint partitions is beyond the {documents} documents");
        }
        figures.postings += list.len() as u64;
        let (any, as_smaller) = needs(doc);
        if list.len() >= any.max(1) {
            let here = lw.count();
            starts.fill(next..=doc, here);
            for p in list.iter() {
                lw.push(p)?;
            }
            starts.fill(doc + 1..=doc + 1, lw.count());
            next = doc + 1;
            figures.long_documents += 1;
            figures.postings_in_long_lists += list.len() as u64;
            let prefix = list.len() - any.max(1) + 1;
            figures.prefix_postings += prefix as u64;
            match &mut pw {
                IndexWriter::None => {}
                IndexWriter::Count(pw) => {
                    for p in &list[..prefix] {
                        pw.push(&ChunkRecord { fprint: p.fprint, doc: p.doc })?;
                    }
                }
                IndexWriter::Similar(pw) => {
                    let smaller = (list.len() + 1).saturating_sub(as_smaller.max(1));
                    for (k, p) in list[..prefix].iter().enumerate() {
                        let as_smaller = u32::from(k < smaller);
                        pw.push(&PrefixEntry { fprint: p.fprint, doc: p.doc, as_smaller })?;
                    }
                }
            }
        }
        list.clear();
        Ok(())
    };
    store::sort::sorted_files(postings, sort_budget, input.scratch, |p: DocPosting| {
        if list.first().is_some_and(|f| f.doc != p.doc) {
            flush(&mut list, &mut lw)?;
        }
        list.push(p);
        Ok(())
    })?;
    flush(&mut list, &mut lw)?;
    let end = lw.count();
    starts.fill(next..=documents, end);
    lw.finish()?;
    match pw {
        IndexWriter::None => 0,
        IndexWriter::Count(pw) => pw.finish()?,
        IndexWriter::Similar(pw) => pw.finish()?,
    };
    Ok(starts)
}

/// Where each document's list starts in the lists file, entry `d` to
/// `d + 1`: 4 bytes a document when the lists hold fewer than 2^32 entries
/// (as the postings bound them), 8 otherwise. (Always 8, they were 185 MB
/// on 23 million documents, over the stage's budget at `--memory 256M`
/// beside the sort's half of it.)
enum Starts {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Starts {
    /// `len` starts, for lists of at most `entries` entries.
    fn new(len: usize, entries: u64) -> Starts {
        match u32::try_from(entries) {
            Ok(_) => Starts::Narrow(vec![0; len]),
            Err(_) => Starts::Wide(vec![0; len]),
        }
    }

    /// What `budget` leaves beside the starts.
    fn left_of(&self, budget: u64) -> u64 {
        let held = match self {
            Starts::Narrow(s) => s.len() as u64 * 4,
            Starts::Wide(s) => s.len() as u64 * 8,
        };
        budget.saturating_sub(held)
    }

    fn fill(&mut self, range: std::ops::RangeInclusive<usize>, entry: u64) {
        match self {
            // Within the entries the list was made for.
            Starts::Narrow(s) => {
                let entry = u32::try_from(entry).expect("lists within the postings they were sized for");
                s[range].fill(entry)
            }
            Starts::Wide(s) => s[range].fill(entry),
        }
    }

    #[inline]
    fn get(&self, i: usize) -> usize {
        match self {
            Starts::Narrow(s) => s[i] as usize,
            Starts::Wide(s) => s[i] as usize,
        }
    }
}

/// Intersects two documents' lists, read from the lists file through a
/// mapping when the file fits its share of the budget, by positioned reads
/// otherwise.
///
/// A mapping read at random stays resident page by page, and each touch
/// maps the pages around it too: letting go of the pages once the list
/// bytes read reached the share still held 57 MB of lists at
/// `--memory 16M` on an 856 MB crawl (1.8 million candidates), and
/// letting go as soon as the resident pages reached it made verification
/// fault its lists in again batch after batch (93.0 s against 47.7 on 23
/// million documents at `--memory 256M`). Positioned reads hold two lists
/// a thread.
struct Verifier<'a> {
    lists: ListFile,
    starts: &'a Starts,
}

enum ListFile {
    Mapped(Mapped<DocPosting>),
    Read(ReadAt<DocPosting>),
}

/// A thread's copies of the two lists it intersects; the first is kept
/// while the pairs (sorted by their first document) share it.
#[derive(Default)]
struct ListBuffers {
    first_doc: Option<u32>,
    first: Vec<u8>,
    second: Vec<u8>,
}

impl<'a> Verifier<'a> {
    /// The lists file at `path`, mapped if it is at most `share` bytes.
    fn open(path: &Path, starts: &'a Starts, share: u64) -> anyhow::Result<Verifier<'a>> {
        let lists = if file_len(path) <= share {
            ListFile::Mapped(Mapped::open(path)?)
        } else {
            ListFile::Read(ReadAt::open(path)?)
        };
        Ok(Verifier { lists, starts })
    }

    fn entries(&self, doc: u32) -> std::ops::Range<usize> {
        self.starts.get(doc as usize)..self.starts.get(doc as usize + 1)
    }

    /// F(i, j) of every pair (i, j) of `batch`, in parallel.
    fn shared(&self, batch: &[u64]) -> anyhow::Result<Vec<u32>> {
        let pair = |p: u64| ((p >> 32) as u32, p as u32);
        match &self.lists {
            ListFile::Mapped(map) => {
                let list = |doc| {
                    let e = self.entries(doc);
                    &map.bytes()[e.start * DocPosting::SIZE..e.end * DocPosting::SIZE]
                };
                Ok(batch
                    .par_iter()
                    .map(|&p| {
                        let (i, j) = pair(p);
                        intersect(list(i), list(j))
                    })
                    .collect())
            }
            ListFile::Read(file) => batch
                .par_iter()
                .map_init(ListBuffers::default, |bufs, &p| {
                    let (i, j) = pair(p);
                    if bufs.first_doc != Some(i) {
                        file.read_into(self.entries(i), &mut bufs.first)?;
                        bufs.first_doc = Some(i);
                    }
                    file.read_into(self.entries(j), &mut bufs.second)?;
                    Ok(intersect(&bufs.first, &bufs.second))
                })
                .collect(),
        }
    }
}

/// The entries two lists share, by a merge in the global order.
fn intersect(a: &[u8], b: &[u8]) -> u32 {
    let key = |b: &[u8]| {
        let p = DocPosting::decode(b);
        (p.df, p.fprint)
    };
    let mut a = a.chunks_exact(DocPosting::SIZE).map(key).peekable();
    let mut b = b.chunks_exact(DocPosting::SIZE).map(key).peekable();
    let mut shared = 0;
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => {
                a.next();
            }
            std::cmp::Ordering::Greater => {
                b.next();
            }
            std::cmp::Ordering::Equal => {
                shared += 1;
                a.next();
                b.next();
            }
        }
    }
    shared
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(HEADER_SIZE as u64, |m| m.len())
}

/// A HyperLogLog sketch (Flajolet et al., 2007) of 2^14 registers: about
/// 0.8% standard error in 16 KiB. Written here because `auto` needs only
/// this estimate, and a dependency for forty lines is not worth it; the
/// hash is fixed, so the estimate (and the method chosen) is the same on
/// every run.
struct HyperLogLog {
    registers: Vec<u8>,
}

impl HyperLogLog {
    const BITS: u32 = 14;

    fn new() -> HyperLogLog {
        HyperLogLog { registers: vec![0; 1 << Self::BITS] }
    }

    fn add(&mut self, item: u64) {
        let hash = xxhash_rust::xxh3::xxh3_64(&item.to_le_bytes());
        let index = (hash >> (64 - Self::BITS)) as usize;
        // The rank of the first 1 bit among the remaining 50, counting
        // from 1 (51 when they are all 0).
        let rest = hash << Self::BITS;
        let rank = (rest.leading_zeros() + 1).min(64 - Self::BITS + 1) as u8;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    fn estimate(&self) -> u64 {
        let m = self.registers.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self.registers.iter().map(|&r| (-f64::from(r)).exp2()).sum();
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        // Linear counting is more accurate while many registers are empty.
        let estimate = if raw <= 2.5 * m && zeros > 0 { m * (m / zeros as f64).ln() } else { raw };
        estimate.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_by_positioned_reads_intersect_as_mapped_ones() {
        // Five documents' lists in the global (df, fprint) order, the
        // third empty; every pair of them, sorted by first document.
        let lists: [&[(u32, u64)]; 5] = [
            &[(2, 10), (2, 11), (3, 7), (9, 1)],
            &[(2, 11), (3, 7), (4, 8), (9, 1)],
            &[],
            &[(2, 10), (4, 8), (9, 1)],
            &[(1, 5), (2, 11)],
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lists.fpd");
        let mut w =
            RecordWriter::<DocPosting>::create(&path, Header::new::<DocPosting>("", true, 0, 1)).unwrap();
        let mut starts = Starts::new(lists.len() + 1, 64);
        let mut at = 0u64;
        for (doc, list) in lists.iter().enumerate() {
            starts.fill(doc..=doc, at);
            for &(df, fprint) in list.iter() {
                w.push(&DocPosting { doc: doc as u32, df, fprint }).unwrap();
                at += 1;
            }
        }
        starts.fill(lists.len()..=lists.len(), at);
        w.finish().unwrap();
        let batch: Vec<u64> = (0..5u32).flat_map(|i| (i + 1..5).map(move |j| pack(i, j))).collect();
        let brute: Vec<u32> = batch
            .iter()
            .map(|&p| {
                let (a, b) = (lists[(p >> 32) as usize], lists[p as u32 as usize]);
                a.iter().filter(|x| b.contains(x)).count() as u32
            })
            .collect();
        let mapped = Verifier::open(&path, &starts, u64::MAX).unwrap();
        assert!(matches!(mapped.lists, ListFile::Mapped(_)));
        let read = Verifier::open(&path, &starts, 0).unwrap();
        assert!(matches!(read.lists, ListFile::Read(_)));
        assert_eq!(mapped.shared(&batch).unwrap(), brute);
        assert_eq!(read.shared(&batch).unwrap(), brute);
        assert_eq!(brute[0], 3, "documents 0 and 1 share three entries");
    }

    #[test]
    fn hyperloglog_estimates_distinct_items_within_a_few_percent() {
        for distinct in [0u64, 1, 1000, 50_000, 2_000_000] {
            let mut sketch = HyperLogLog::new();
            // Every item three times: duplicates change nothing.
            for _ in 0..3 {
                for item in 0..distinct {
                    sketch.add(item.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                }
            }
            let estimate = sketch.estimate() as f64;
            let error = (estimate - distinct as f64).abs() / (distinct as f64).max(1.0);
            assert!(error < 0.03, "{distinct} distinct items estimated as {estimate}");
        }
    }
}
