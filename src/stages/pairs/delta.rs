//! Counting only what changed: the Overlap table of an analysis made with
//! `--previous`, from the previous analysis's table and the pairs of the
//! documents that changed.
//!
//! A document is *untouched* when it is counted (an exact-group center)
//! now, was counted in the previous analysis under the same docID, and has
//! the same text, so the same fingerprints (the fingerprint stage marks
//! this in `doc-ids.fpd`). Two untouched documents share now exactly the
//! fingerprints they shared then, so their F is the previous table's, as
//! long as no fingerprint they share became a stop chunk or stopped being
//! one: the documents of every fingerprint whose stop status differs
//! (another `--max-df`, or a document frequency that crossed it) count as
//! touched too. So the table is:
//!
//! - the previous rows whose two documents are untouched, with F >= T
//!   (carried: a lower T than the previous one would need pairs that table
//!   left out, and counts everything instead);
//! - every pair of counted documents with a touched one and F >= T, found
//!   by one-sided prefix filtering: order each touched document's shared
//!   fingerprints by ascending document frequency; a pair with F >= T shares
//!   one of the first |L| - T + 1 of them (at most T - 1 shared ones fit in
//!   the rest), so the candidates are the documents of those fingerprints'
//!   groups. Every fingerprint a touched document shares is one of its
//!   groups, so a candidate's F is the number of them it is in.
//!
//! One pass over the FPrint-DocID partitions gathers the groups that hold a
//! touched document (a second, before it, finds the stop statuses that
//! changed, under `--max-df`); what is held grows with the change and the
//! groups it reaches, within half the memory budget. When the change is too
//! large for that to pay (more than a third of the counted documents
//! touched) or to fit, or the previous analysis is gone or was made again
//! since, every pair is counted by the method asked for.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use super::{CountInput, Criterion, GroupStats, Overlap, PairsStats, for_each_group, scan_groups, stop};
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::handles::{DocIds, SAME_TEXT, WAS_CENTER};
use crate::store::overlap::{OverlapWriter, for_each_row};
use crate::store::scopes::{Scope, ScopeId};
use crate::store::stats::DeltaStats;
use crate::store::{Manifest, Mapped, OutDir};

/// The previous analysis to count from, or why every pair is counted
/// although there is one.
pub(crate) fn previous(manifest: &Manifest, criterion: &Criterion) -> Result<Previous, String> {
    let threshold = criterion.threshold;
    if criterion.needs_sizes() {
        return Err("a similarity criterion (--jaccard, --containment) counts every pair".into());
    }
    let Some(chain) = &manifest.chain else { return Err("no previous analysis".into()) };
    let old = OutDir::new(&chain.previous_canonical);
    match old.analysis_key(&crate::store::registry::REPORT) {
        Ok(key) if key == chain.previous_key => {}
        _ => return Err(format!("{} is gone or was made again since", chain.previous)),
    }
    let old_manifest = Manifest::read(&old).map_err(|e| format!("{e:#}"))?;
    let scope = |m: &Manifest| m.scope().map_err(|e| format!("{e:#}"));
    if scope(&old_manifest)? != scope(manifest)? {
        return Err(format!("{} looked for copies in another --scope", chain.previous));
    }
    let Some(counted) = old_manifest.pairs else {
        return Err(format!("{} has no pairs", chain.previous));
    };
    if counted.jaccard.is_some() || counted.containment.is_some() {
        return Err(format!("{} kept only pairs above a similarity threshold", chain.previous));
    }
    if let Some(method) = &counted.approximate {
        return Err(format!("{} was counted by {method}, which may miss pairs", chain.previous));
    }
    if threshold < counted.threshold {
        return Err(format!("T = {threshold} is below the previous analysis's T = {}", counted.threshold));
    }
    Ok(Previous { old, max_df: counted.max_df, scope: scope(manifest)? })
}

/// What is read of the previous analysis.
pub(crate) struct Previous {
    old: OutDir,
    max_df: Option<u32>,
    scope: Scope,
}

/// The documents whose pairs are counted again, by row.
struct Touched {
    rows: Vec<bool>,
    count: u64,
}

/// Counts the table of `input` from the previous one: writes every pair
/// with F >= T to `table`, in (i, j) order. Returns why not, having written
/// nothing, when the change is too large for it to pay or to fit.
pub(crate) fn count(
    prev: &Previous,
    out: &OutDir,
    input: &CountInput<'_>,
    doc_ids: &DocIds,
    stats: &mut PairsStats,
    table: &mut OverlapWriter,
) -> anyhow::Result<Result<DeltaStats, &'static str>> {
    let counted = input.counted;
    let n = counted.documents();
    let mut figures = DeltaStats::default();
    let mut touched = Touched { rows: vec![false; n], count: 0 };
    let untouched = |row: u32| {
        counted.contains(row) && doc_ids.get(row).flags & (SAME_TEXT | WAS_CENTER) == SAME_TEXT | WAS_CENTER
    };
    for row in 0..n as u32 {
        if counted.contains(row) {
            figures.counted_documents += 1;
            if !untouched(row) {
                touched.rows[row as usize] = true;
                touched.count += 1;
            }
        }
    }
    figures.touched_by_stop_chunks = stop_changes(prev, out, input, &mut touched)?;
    figures.touched_documents = touched.count;
    if touched.count * 3 > figures.counted_documents {
        return Ok(Err("more than a third of the documents changed"));
    }

    let Some(gathered) = gather(input, &touched)? else {
        return Ok(Err("the groups of the changed documents outgrow half of --memory"));
    };
    gathered.groups.fill(stats);
    let (candidates, verified) = touched_pairs(&gathered, &touched, input.threshold);
    drop(gathered);
    figures.candidates = candidates;
    figures.counted_pairs = verified.len() as u64;

    // The carried rows and the new ones, merged in (i, j) order: the
    // previous table is in docID order, and docIDs keep the rows' order.
    // Whether a docID's rows are carried comes from a table, not a search
    // of doc-ids.fpd per row (that was 7% of the stage). A carried row has
    // the same docIDs and F as in the previous table, so its line is
    // copied, not formatted again: with the table by docID, that took the
    // merge from 11.3 ms to 7.5 ms (198,250 rows carried).
    let mut carries: Vec<bool> = Vec::new();
    for row in 0..n as u32 {
        let id = doc_ids.doc_id(row) as usize;
        if carries.len() <= id {
            carries.resize(id + 1, false);
        }
        carries[id] = counted.contains(row) && !touched.rows[row as usize];
    }
    let carries = |id: u32| carries.get(id as usize).copied().unwrap_or(false);
    let t = input.threshold;
    let mut new = verified
        .into_iter()
        .map(|p| Overlap { doc_i: doc_ids.doc_id(p.doc_i), doc_j: doc_ids.doc_id(p.doc_j), shared: p.shared })
        .peekable();
    let mut carried = 0u64;
    for_each_row(&prev.old.overlap(), |o, line| {
        if o.shared < t || !carries(o.doc_i) || !carries(o.doc_j) {
            return Ok(());
        }
        while let Some(p) = new.next_if(|p| (p.doc_i, p.doc_j) < (o.doc_i, o.doc_j)) {
            table.push(p)?;
        }
        carried += 1;
        match line {
            Some(line) => table.push_line(line),
            None => table.push(o),
        }
    })?;
    for p in new {
        table.push(p)?;
    }
    figures.carried_pairs = carried;
    stats.distinct_pairs = figures.carried_pairs + figures.candidates;
    Ok(Ok(figures))
}

/// Marks as touched the documents of every fingerprint that is a stop
/// chunk now and was not before, or the other way round (in its scope);
/// returns how many it added.
fn stop_changes(
    prev: &Previous,
    out: &OutDir,
    input: &CountInput<'_>,
    touched: &mut Touched,
) -> anyhow::Result<u64> {
    if input.max_df.is_none() && prev.max_df.is_none() {
        return Ok(0);
    }
    let before = match prev.max_df {
        Some(_) => stops_before(prev, out)?,
        None => HashSet::new(),
    };
    let max_df = input.max_df.map_or(usize::MAX, |m| m as usize);
    let found: Vec<anyhow::Result<Vec<u32>>> = input
        .parts
        .par_iter()
        .map(|part| {
            let mut docs = Vec::new();
            scan_groups(part, input.counted, |group, fprint| {
                let scope = input.counted.scope(group[0]);
                if (group.len() > max_df) != before.contains(&(fprint, scope)) {
                    docs.extend_from_slice(group);
                }
                Ok(())
            })?;
            Ok(docs)
        })
        .collect();
    let mut added = 0;
    for docs in found {
        for d in docs? {
            if !std::mem::replace(&mut touched.rows[d as usize], true) {
                added += 1;
            }
        }
    }
    touched.count += added;
    Ok(added)
}

/// The previous analysis's stop chunks, each with the number of its scope
/// in this analysis. Under `--scope host` or `site` a chunk is a stop
/// chunk in each scope it is frequent in, named by its example document's
/// host in the previous `docs.csv`; the names are turned into this
/// analysis's scope numbers through its own `docs.csv` (a scope with no
/// document now has no group to change). Without scopes, every chunk is in
/// scope 0.
fn stops_before(prev: &Previous, out: &OutDir) -> anyhow::Result<HashSet<(u64, u32)>> {
    let stops = stop::read_csv(&prev.old.stop_chunks())?;
    if prev.scope == Scope::Crawl {
        return Ok(stops.into_iter().map(|s| (s.fprint, 0)).collect());
    }
    let scopes = Mapped::<ScopeId>::open(&out.scopes())?;
    let mut numbers: HashMap<String, u32> = HashMap::new();
    let mut row = 0usize;
    for_each_doc(&out.docs(), DocTable::Final, |doc| {
        numbers.entry(prev.scope.of(doc.host).to_string()).or_insert(scopes.get(row).0);
        row += 1;
        Ok(())
    })?;
    let mut example_scope: HashMap<u32, Option<u32>> = stops.iter().map(|s| (s.example_doc, None)).collect();
    for_each_doc(&prev.old.docs(), DocTable::Final, |doc| {
        if let Some(scope) = example_scope.get_mut(&doc.id) {
            *scope = numbers.get(prev.scope.of(doc.host)).copied();
        }
        Ok(())
    })?;
    Ok(stops.iter().filter_map(|s| example_scope[&s.example_doc].map(|scope| (s.fprint, scope))).collect())
}

/// One shared fingerprint of a touched document: its document frequency,
/// the fingerprint, and where its group's documents start in
/// [`Gathered::docs`]. Ordered by document, then by the global order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Posting {
    doc: u32,
    df: u32,
    fprint: u64,
    start: usize,
}

/// The fingerprint groups that hold a touched document, from one pass over
/// the partitions: the pairs of a touched document, and their F, lie in
/// them alone (every fingerprint of a touched document is one of them).
struct Gathered {
    /// The documents of every gathered group, one group after another.
    docs: Vec<u32>,
    /// Each touched document's list, sorted: its groups in the global order
    /// (ascending document frequency, then fingerprint).
    postings: Vec<Posting>,
    /// The counts every method reports of all the groups.
    groups: GroupStats,
}

impl Gathered {
    fn group(&self, p: &Posting) -> &[u32] {
        &self.docs[p.start..p.start + p.df as usize]
    }
}

/// The groups that hold a touched document, or `None` when they outgrow
/// half the memory budget (then every pair is counted instead).
///
/// One pass gathers what three did: the touched documents' lists, then the
/// groups of their prefixes, then the lists of every candidate's documents
/// to intersect. On a recrawl with 10% of the pages changed (62,490
/// documents, 3,340 touched) those passes and their hash tables took 65 ms
/// of the stage's 86 ms; this pass and the counting from it take 17 ms,
/// and the groups gathered hold 460,267 documents (1.8 MB), two thirds of
/// the shared postings.
fn gather(input: &CountInput<'_>, touched: &Touched) -> anyhow::Result<Option<Gathered>> {
    let budget = input.memory / 2;
    let held = AtomicU64::new(0);
    let over = AtomicBool::new(false);
    let bytes = |docs: &Vec<u32>, postings: &Vec<Posting>| {
        (docs.len() * size_of::<u32>() + postings.len() * size_of::<Posting>()) as u64
    };
    type Found = (Vec<u32>, Vec<Posting>, GroupStats);
    let found: Vec<anyhow::Result<Found>> = input
        .parts
        .par_iter()
        .map(|part| {
            let (mut docs, mut postings) = (Vec::new(), Vec::new());
            if over.load(Ordering::Relaxed) {
                return Ok((docs, postings, GroupStats::default()));
            }
            let groups = for_each_group(input, part, |group, fprint| {
                if !group.iter().any(|&d| touched.rows[d as usize]) || over.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let start = docs.len();
                docs.extend_from_slice(group);
                let df = group.len() as u32;
                for &doc in group.iter().filter(|&&d| touched.rows[d as usize]) {
                    postings.push(Posting { doc, df, fprint, start });
                }
                if held.load(Ordering::Relaxed) + bytes(&docs, &postings) > budget {
                    over.store(true, Ordering::Relaxed);
                }
                Ok(())
            })?;
            held.fetch_add(bytes(&docs, &postings), Ordering::Relaxed);
            Ok((docs, postings, groups))
        })
        .collect();
    let found = found.into_iter().collect::<anyhow::Result<Vec<Found>>>()?;
    // Over the budget or not is decided by the whole: a partition stops
    // early when what is held already puts it over, but partitions gathered
    // at once do not see each other's groups, so a total just over the
    // budget is found only here (whatever the threads' timing, the same
    // answer, and so the same stats.json).
    if over.load(Ordering::Relaxed) || found.iter().map(|f| bytes(&f.0, &f.1)).sum::<u64>() > budget {
        return Ok(None);
    }
    // Reserved whole: growing by doubling would hold the old and the new
    // buffer at once.
    let mut gathered = Gathered {
        docs: Vec::with_capacity(found.iter().map(|f| f.0.len()).sum()),
        postings: Vec::with_capacity(found.iter().map(|f| f.1.len()).sum()),
        groups: GroupStats::default(),
    };
    for (docs, postings, groups) in found {
        let offset = gathered.docs.len();
        gathered.docs.extend_from_slice(&docs);
        gathered.postings.extend(postings.into_iter().map(|p| Posting { start: p.start + offset, ..p }));
        gathered.groups.add(&groups);
    }
    gathered.postings.par_sort_unstable();
    Ok(Some(gathered))
}

/// What one thread reuses from one touched document to the next.
#[derive(Default)]
struct Scratch {
    /// The documents of the prefix groups, with repeats.
    instances: Vec<u32>,
    /// The distinct ones (the candidates), ascending, and how many of the
    /// document's groups each is in so far.
    candidates: Vec<u32>,
    shared: Vec<u32>,
}

/// The candidates (as a figure) and the pairs with F >= T of the touched
/// documents, in (i, j) order.
///
/// One-sided prefix filtering, per touched document `a` in parallel: the
/// candidates are the other documents of the groups of the first
/// |L| - T + 1 fingerprints of its list; a candidate's F is the number of
/// `a`'s groups it is in, counted in the prefix groups as they are read
/// and then looked up in the last T - 1. A pair of two touched documents
/// is the smaller one's if both lists generate it.
fn touched_pairs(g: &Gathered, touched: &Touched, threshold: u32) -> (u64, Vec<Overlap>) {
    let t = threshold as usize;
    let lists: Vec<&[Posting]> = g.postings.chunk_by(|a, b| a.doc == b.doc).collect();
    let prefix = |list: &'_ [Posting]| -> usize { (list.len() + 1).saturating_sub(t) };
    // Whether touched document `b`'s prefix groups hold `a`.
    let generates = |b: u32, a: u32| {
        let k = lists.partition_point(|l| l[0].doc < b);
        lists
            .get(k)
            .filter(|l| l[0].doc == b)
            .is_some_and(|l| l[..prefix(l)].iter().any(|p| g.group(p).binary_search(&a).is_ok()))
    };
    let owner = |list: &&[Posting], s: &mut Scratch, pairs: &mut Vec<Overlap>| -> u64 {
        let a = list[0].doc;
        let p = prefix(list);
        if p == 0 {
            return 0;
        }
        s.instances.clear();
        for entry in &list[..p] {
            s.instances.extend(g.group(entry).iter().filter(|&&b| b != a));
        }
        s.instances.sort_unstable();
        s.candidates.clear();
        s.shared.clear();
        for run in s.instances.chunk_by(|x, y| x == y) {
            s.candidates.push(run[0]);
            s.shared.push(run.len() as u32);
        }
        for entry in &list[p..] {
            count_members(&s.candidates, &mut s.shared, g.group(entry));
        }
        let mut candidates = 0;
        for (&b, &f) in s.candidates.iter().zip(&s.shared) {
            if b < a && touched.rows[b as usize] && generates(b, a) {
                continue;
            }
            candidates += 1;
            if f >= threshold {
                pairs.push(Overlap { doc_i: a.min(b), doc_j: a.max(b), shared: f });
            }
        }
        candidates
    };
    let (candidates, mut pairs) = lists
        .par_iter()
        .fold(
            || (0u64, Vec::new(), Scratch::default()),
            |(n, mut pairs, mut s), list| {
                let found = owner(list, &mut s, &mut pairs);
                (n + found, pairs, s)
            },
        )
        .map(|(n, pairs, _)| (n, pairs))
        .reduce(
            || (0, Vec::new()),
            |(n, mut pairs), (m, more)| {
                pairs.extend(more);
                (n + m, pairs)
            },
        );
    pairs.par_sort_unstable();
    (candidates, pairs)
}

/// Adds 1 to `shared[k]` for every `candidates[k]` in `group` (both
/// ascending): a merge when the group is not much longer than the
/// candidates, else a search for each in what is left of the group.
fn count_members(candidates: &[u32], shared: &mut [u32], group: &[u32]) {
    if group.len() <= 8 * candidates.len() {
        let (mut i, mut j) = (0, 0);
        while i < candidates.len() && j < group.len() {
            match candidates[i].cmp(&group[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared[i] += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
    } else {
        let mut rest = group;
        for (k, c) in candidates.iter().enumerate() {
            match rest.binary_search(c) {
                Ok(at) => {
                    shared[k] += 1;
                    rest = &rest[at + 1..];
                }
                Err(at) => rest = &rest[at..],
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::base::progress::Progress;
    use crate::stages::pairs::Counted;
    use crate::store::{Center, ChunkRecord, Header, Record, RecordWriter};

    fn write<R: Record>(path: &Path, records: &[R]) {
        let mut w = RecordWriter::create(path, Header::new::<R>("lines:1", true, 0, 1)).unwrap();
        for r in records {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
    }

    /// A random crawl: every document's fingerprints (a few rare, some
    /// frequent), some documents copies of another (not counted), some
    /// touched; written as two partitions.
    struct Crawl {
        parts: Vec<PathBuf>,
        centers: PathBuf,
        touched: Touched,
        /// Per counted document, its shared fingerprints.
        lists: BTreeMap<u32, BTreeSet<u64>>,
        /// Per shared fingerprint, its counted documents.
        groups: BTreeMap<u64, Vec<u32>>,
    }

    fn crawl(dir: &Path, seed: u64) -> Crawl {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let n = 40 + next(40) as u32;
        let centers: Vec<Center> =
            (0..n).map(|d| Center(if d > 0 && next(8) == 0 { next(d as u64) as u32 } else { d })).collect();
        let mut records = Vec::new();
        for doc in 0..n {
            let mut fprints = BTreeSet::new();
            for _ in 0..next(30) {
                // Fingerprints below 8 are frequent, the rest rarer.
                fprints.insert(if next(3) == 0 { next(8) } else { 8 + next(u64::from(n)) });
            }
            records.extend(fprints.into_iter().map(|fprint| ChunkRecord { fprint, doc }));
        }
        records.sort();
        let counted = |d: u32| centers[d as usize] == Center(d);
        let mut groups: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for r in records.iter().filter(|r| counted(r.doc)) {
            groups.entry(r.fprint).or_default().push(r.doc);
        }
        groups.retain(|_, docs| docs.len() >= 2);
        let mut lists: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
        for (&f, docs) in &groups {
            for &d in docs {
                lists.entry(d).or_default().insert(f);
            }
        }
        let rows: Vec<bool> = (0..n).map(|d| counted(d) && next(4) == 0).collect();
        let touched = Touched { count: rows.iter().filter(|&&t| t).count() as u64, rows };
        let split = records.partition_point(|r| r.fprint < 8 + u64::from(n) / 2);
        let parts = vec![dir.join("part-0.fpd"), dir.join("part-1.fpd")];
        write(&parts[0], &records[..split]);
        write(&parts[1], &records[split..]);
        let path = dir.join("centers.fpd");
        write(&path, &centers);
        Crawl { parts, centers: path, touched, lists, groups }
    }

    #[test]
    fn the_pairs_of_touched_documents_are_every_pair_with_one_and_f_at_least_t() {
        let progress = Progress::silent();
        for seed in 0..60 {
            let dir = tempfile::tempdir().unwrap();
            let c = crawl(dir.path(), seed);
            let counted = Counted::open(&c.centers).unwrap();
            for threshold in [1, 2, 3, 5] {
                let input = CountInput {
                    parts: &c.parts,
                    counted: &counted,
                    threshold,
                    criterion: Criterion::count(threshold),
                    sizes: None,
                    max_df: None,
                    cross_at: None,
                    memory: 1 << 30,
                    scratch: dir.path(),
                    progress: &progress,
                };
                let gathered = gather(&input, &c.touched).unwrap().unwrap();
                let (candidates, pairs) = touched_pairs(&gathered, &c.touched, threshold);

                let touched = |d: u32| c.touched.rows[d as usize];
                let mut want = Vec::new();
                let docs: Vec<u32> = c.lists.keys().copied().collect();
                for (k, &a) in docs.iter().enumerate() {
                    for &b in &docs[k + 1..] {
                        let f = c.lists[&a].intersection(&c.lists[&b]).count() as u32;
                        if (touched(a) || touched(b)) && f >= threshold {
                            want.push(Overlap { doc_i: a, doc_j: b, shared: f });
                        }
                    }
                }
                assert_eq!(pairs, want, "seed {seed}, T = {threshold}");

                // The candidates: a touched document with the documents of
                // the groups of its prefix, each pair once.
                let t = threshold as usize;
                let mut expected = BTreeSet::new();
                for (&a, list) in c.lists.iter().filter(|&(&a, _)| touched(a)) {
                    let mut order: Vec<(usize, u64)> =
                        list.iter().map(|&f| (c.groups[&f].len(), f)).collect();
                    order.sort();
                    for &(_, f) in order.iter().take((list.len() + 1).saturating_sub(t)) {
                        for &b in c.groups[&f].iter().filter(|&&b| b != a) {
                            expected.insert((a.min(b), a.max(b)));
                        }
                    }
                }
                assert_eq!(candidates, expected.len() as u64, "seed {seed}, T = {threshold}");
            }
        }
    }

    #[test]
    fn groups_beyond_half_the_budget_are_not_gathered() {
        let progress = Progress::silent();
        let dir = tempfile::tempdir().unwrap();
        let c = crawl(dir.path(), 7);
        let counted = Counted::open(&c.centers).unwrap();
        let input = |memory| CountInput {
            parts: &c.parts,
            counted: &counted,
            threshold: 2,
            criterion: Criterion::count(2),
            sizes: None,
            max_df: None,
            cross_at: None,
            memory,
            scratch: dir.path(),
            progress: &progress,
        };
        let gathered = gather(&input(1 << 30), &c.touched).unwrap().unwrap();
        let held =
            (gathered.docs.len() * size_of::<u32>() + gathered.postings.len() * size_of::<Posting>()) as u64;
        assert!(gather(&input(2 * held), &c.touched).unwrap().is_some());
        assert!(gather(&input(2 * held - 2), &c.touched).unwrap().is_none());
    }

    #[test]
    fn members_are_counted_by_merge_and_by_search_alike() {
        let group: Vec<u32> = (0..400).map(|x| x * 3).collect();
        for candidates in [vec![0, 3, 4, 600, 1197, 1198], vec![5], vec![1197], vec![]] {
            // The whole group is searched, its first few merged.
            for g in [&group[..], &group[..5]] {
                let mut shared = vec![1; candidates.len()];
                count_members(&candidates, &mut shared, g);
                let want: Vec<u32> = candidates.iter().map(|c| 1 + u32::from(g.contains(c))).collect();
                assert_eq!(shared, want, "{candidates:?} in {} entries", g.len());
            }
        }
    }
}
