//! The pairs stage: the Overlap table, every document pair (i, j), i < j,
//! sharing F >= T chunk fingerprints, sorted by (i, j); with `--jaccard`
//! or `--containment`, only the pairs whose chunk sets are that similar
//! too ([`crate::store::criterion`]).
//!
//! Every counting method is one file here and sees the same input: the
//! sorted FPrint-DocID partitions, with the non-center copies of exact
//! groups left out (the paper's FPrint-DocID-Chunk'), read through
//! [`for_each_group`]. Methods differ only in how they count; they must give
//! the same table.

mod against;
pub(crate) mod aggregate;
mod changes;
pub mod coarse;
mod delta;
mod forecast;
mod lsh;
mod minhash;
pub mod prefix;
mod simhash;
mod sizes;
pub mod sort;
pub(crate) mod stop;
pub mod template;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use rayon::prelude::*;

pub use crate::store::criterion::{Criterion, Ratio};
pub(crate) use crate::store::stats::AutoStats;
pub use crate::store::stats::PairsStats;
pub use coarse::CoarseVariant;
pub use minhash::Bands;
pub use template::TemplateRule;

use crate::base::progress::Progress;
pub use crate::store::Overlap;
use crate::store::criterion::Measures;
use crate::store::handles::DocIds;
use crate::store::manifest::PairsSettings;
use crate::store::overlap::{Columns, OverlapWriter};
use crate::store::registry::PAIRS;
use crate::store::scopes::{Scope, ScopeId};
use crate::store::stage::{Outcome, Stage};
use crate::store::{self, Center, ChunkRecord, Manifest, Mapped, OutDir};

/// How the Overlap table is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// The paper's sort-based method (section 2.1).
    Sort,
    /// Coarse (probabilistic) counting, section 2.2 step 3.
    Coarse(CoarseVariant),
    /// Prefix filtering: candidates only from the rarest fingerprints of
    /// each document, verified by list intersection.
    Prefix,
    /// `coarse` when the fingerprint groups generate at least
    /// [`AUTO_COARSE_PAIRS`] pair instances, `sort` below.
    Auto(CoarseVariant),
    /// Candidates from MinHash-LSH, B bands of R rows (by default, from
    /// the Jaccard threshold), verified: approximate, never chosen by
    /// `auto`.
    Minhash(Option<Bands>),
    /// Candidates from 64-bit SimHash signatures at most K bits apart,
    /// verified: approximate, never chosen by `auto`.
    Simhash(u32),
}

/// `auto` takes prefix filtering when its predicted work (list entries
/// read, [`prefix::PrefixIndex::work`]) is below this many times the pair
/// instances, coarse counting otherwise. On a 1 GB crawl with site
/// boilerplate (`lines:2`, T = 25: 1.14 billion pair instances, prefix work
/// 116 million) prefix filtering took 0.5 s against 24.2 s for coarse
/// counting; on a generated 2.5 GB crawl (`lines:4`, T = 15: 1.26 billion
/// instances; 31 million candidate instances, 1.6 million distinct) 2.6 s
/// against 38.6 s; on a corpus of random lines without boilerplate
/// (`lines:1`, T = 10: 14.3 million instances, prefix work 701 million)
/// 4.5 s against 0.41 s.
pub(crate) const AUTO_COARSE_READS: u64 = 2;

/// Where `auto` switches from sort to coarse counting. Measured on a 1 GB
/// crawl: at 261 million pair instances coarse took 5.0 s against 16.4 s
/// for sort, at 52 million (with `--max-df 1000`) 1.0 s against 3.2 s; on
/// the bundled samples (under a thousand pairs) both take milliseconds, and
/// sort skips the counter arrays.
pub(crate) const AUTO_COARSE_PAIRS: u64 = 1_000_000;

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        match s {
            "sort" => Ok(Method::Sort),
            "coarse" => Ok(Method::Coarse(CoarseVariant::default())),
            "auto" => Ok(Method::Auto(CoarseVariant::default())),
            "prefix" => Ok(Method::Prefix),
            "minhash" => Ok(Method::Minhash(None)),
            "simhash" => Ok(Method::Simhash(simhash::DEFAULT_DISTANCE)),
            _ => match s.split_once(':') {
                Some(("minhash", bands)) => Ok(Method::Minhash(Some(bands.parse()?))),
                Some(("simhash", k)) => match k.parse::<u32>() {
                    Ok(k) if k <= simhash::MAX_DISTANCE => Ok(Method::Simhash(k)),
                    _ => Err(format!(
                        "'{k}' in '{s}' is not a number of differing bits from 0 to {}",
                        simhash::MAX_DISTANCE
                    )),
                },
                _ => Err(format!(
                    "unknown counting method '{s}' (available: auto, sort, coarse, prefix, \
                     minhash[:BxR], simhash[:K])"
                )),
            },
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct PairsConfig {
    /// What a pair needs: T shared fingerprints, and the similarity asked.
    pub criterion: Criterion,
    pub method: Method,
    /// Counters per coarse-counting array, instead of the default sizing.
    pub counters: Option<u64>,
    /// Leave out fingerprints shared by more documents than this.
    pub max_df: Option<u32>,
    /// Leave out each host's template chunks first.
    pub template: Option<TemplateRule>,
    /// Memory budget in bytes.
    pub memory: u64,
    /// Refuse a count whose forecast passes the limit, rather than warn
    /// (`--strict`; see [`forecast`]).
    pub strict: bool,
    /// `--against`: a finished analysis to count this one against
    /// ([`against`]).
    pub against: Option<PathBuf>,
}

/// What a counting method works from.
pub struct CountInput<'a> {
    /// Sorted FPrint-DocID partitions, in fingerprint order.
    pub parts: &'a [PathBuf],
    /// Which documents are counted.
    pub counted: &'a Counted,
    /// T: every method counts the pairs with F >= T.
    pub threshold: u32,
    /// The whole rule; a method may use its similarity bounds to generate
    /// fewer candidates, and the stage keeps only the pairs that pass it.
    pub criterion: Criterion,
    /// Each counted document's set size, by row, when the criterion needs
    /// it ([`sizes`]).
    pub sizes: Option<&'a [u32]>,
    /// Fingerprints shared by more counted documents than this are stop
    /// chunks: left out of counting.
    pub max_df: Option<u32>,
    /// With `--against`: only the pairs of a row below this and one at or
    /// above it are wanted (one in each crawl). A method may leave out the
    /// others to save work, and may emit them: the count drops them.
    pub cross_at: Option<u32>,
    pub memory: u64,
    /// A directory for spill files, emptied afterwards.
    pub scratch: &'a Path,
    pub progress: &'a Progress,
}

/// A way of counting the Overlap table.
pub trait CountingMethod {
    /// Calls `emit` for every pair with F >= T, in (i, j) order, and fills
    /// the method's counters in `stats`. It may leave out pairs that do not
    /// pass the input's similarity criterion, and may emit them: the stage
    /// keeps only the pairs that pass.
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
}

/// The documents that take part in counting: centers of exact groups and
/// documents without copies; and, with `--scope host` or `site`, the scope
/// of each, since only documents of one scope are counted together.
pub struct Counted {
    centers: Mapped<Center>,
    scopes: Option<Mapped<ScopeId>>,
}

impl Counted {
    pub fn open(path: &Path) -> anyhow::Result<Counted> {
        let centers = Mapped::open(path)?;
        crate::store::integrity::check_centers(path, &centers)?;
        Ok(Counted { centers, scopes: None })
    }

    /// Counts documents of one scope together, as `scopes.fpd` gives them.
    pub(crate) fn in_scopes(mut self, path: &Path) -> anyhow::Result<Counted> {
        let scopes = Mapped::<ScopeId>::open(path)?;
        if scopes.len() != self.centers.len() {
            anyhow::bail!("{} names {} documents, not {}", path.display(), scopes.len(), self.centers.len());
        }
        self.scopes = Some(scopes);
        Ok(self)
    }

    /// Documents in all, counted or not.
    pub(crate) fn documents(&self) -> usize {
        self.centers.len()
    }

    /// The number of a document's scope (0 for all without scopes).
    pub(crate) fn scope(&self, doc: u32) -> u32 {
        self.scopes.as_ref().map_or(0, |s| s.get(doc as usize).0)
    }

    /// Lets go of the pages of the centers (and scopes) read so far
    /// ([`Mapped::release`]), after a pass that read them at random: 4 bytes
    /// a document (88 MB of the pairs stage's peak RSS on 23 million
    /// documents) that the steps after it need not hold.
    pub(crate) fn release(&self) {
        self.centers.release();
        if let Some(scopes) = &self.scopes {
            scopes.release();
        }
    }

    #[inline]
    pub(crate) fn contains(&self, doc: u32) -> bool {
        (doc as usize) < self.centers.len() && self.centers.get(doc as usize) == Center(doc)
    }
}

/// Counters every method fills while reading fingerprint groups.
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupStats {
    pub fingerprints_removed: u64,
    pub shared_fingerprints: u64,
    pub largest_group: u64,
    pub pairs: u64,
}

impl GroupStats {
    pub(crate) fn add(&mut self, other: &GroupStats) {
        self.fingerprints_removed += other.fingerprints_removed;
        self.shared_fingerprints += other.shared_fingerprints;
        self.largest_group = self.largest_group.max(other.largest_group);
        self.pairs += other.pairs;
    }

    pub(crate) fn fill(&self, stats: &mut PairsStats) {
        stats.fingerprints_removed = self.fingerprints_removed;
        stats.shared_fingerprints = self.shared_fingerprints;
        stats.largest_fingerprint_group = self.largest_group;
        stats.pairs_generated = self.pairs;
    }
}

/// Calls `f` with the counted documents (ascending) and the fingerprint of
/// every fingerprint of one partition that two or more of them share,
/// leaving out stop chunks (groups larger than `max_df`).
pub(crate) fn for_each_group(
    input: &CountInput<'_>,
    part: &Path,
    mut f: impl FnMut(&[u32], u64) -> anyhow::Result<()>,
) -> anyhow::Result<GroupStats> {
    let max_df = input.max_df.map_or(usize::MAX, |m| m as usize);
    let mut kept = GroupStats::default();
    let all = scan_groups(part, input.counted, |docs, fprint| {
        if docs.len() > max_df {
            return Ok(());
        }
        let n = docs.len() as u64;
        kept.shared_fingerprints += 1;
        kept.largest_group = kept.largest_group.max(n);
        kept.pairs += n * (n - 1) / 2;
        f(docs, fprint)
    })?;
    kept.fingerprints_removed = all.fingerprints_removed;
    Ok(kept)
}

/// Pair instances the fingerprint groups will generate (stop chunks left
/// out): a cheap scan of the FPrint-DocID partitions that sizes counter
/// arrays and lets `auto` choose a method.
pub(crate) fn pair_instances(input: &CountInput<'_>) -> anyhow::Result<u64> {
    Ok(shared_groups(input)?.pairs)
}

/// The fingerprint groups counting will go through (stop chunks left
/// out): how many, the largest, and the pair instances they generate.
pub(crate) fn shared_groups(input: &CountInput<'_>) -> anyhow::Result<GroupStats> {
    let each: Vec<anyhow::Result<GroupStats>> =
        input.parts.par_iter().map(|part| for_each_group(input, part, |_, _| Ok(()))).collect();
    let mut all = GroupStats::default();
    for groups in each {
        all.add(&groups?);
    }
    Ok(all)
}

/// Calls `f` with the counted documents (ascending) and the fingerprint of
/// every group of two or more documents in one partition, stop chunks
/// included, and counts them all.
pub fn scan_groups(
    part: &Path,
    counted: &Counted,
    mut f: impl FnMut(&[u32], u64) -> anyhow::Result<()>,
) -> anyhow::Result<GroupStats> {
    crate::base::interrupt::check()?;
    let records = Mapped::<ChunkRecord>::open(part)?;
    let mut stats = GroupStats::default();
    let mut docs: Vec<u32> = Vec::new();
    let mut current: Option<u64> = None;
    let mut group = |docs: &[u32], fprint: u64, stats: &mut GroupStats| -> anyhow::Result<()> {
        let n = docs.len() as u64;
        stats.shared_fingerprints += 1;
        stats.largest_group = stats.largest_group.max(n);
        stats.pairs += n * (n - 1) / 2;
        f(docs, fprint)
    };
    let mut flush =
        |docs: &mut Vec<u32>, fprint: Option<u64>, stats: &mut GroupStats| -> anyhow::Result<()> {
            if let (true, Some(fprint)) = (docs.len() >= 2, fprint) {
                match &counted.scopes {
                    None => group(docs, fprint, stats)?,
                    // One group per scope, its documents still ascending.
                    Some(scopes) => {
                        docs.sort_unstable_by_key(|&d| (scopes.get(d as usize), d));
                        for part in docs.chunk_by(|&a, &b| scopes.get(a as usize) == scopes.get(b as usize)) {
                            if part.len() >= 2 {
                                group(part, fprint, stats)?;
                            }
                        }
                    }
                }
            }
            docs.clear();
            Ok(())
        };
    for r in records.iter() {
        if current != Some(r.fprint) {
            flush(&mut docs, current, &mut stats)?;
            current = Some(r.fprint);
        }
        if counted.contains(r.doc) {
            docs.push(r.doc);
        } else {
            stats.fingerprints_removed += 1;
        }
    }
    flush(&mut docs, current, &mut stats)?;
    Ok(stats)
}

/// Why `--method minhash` without bands needs `--jaccard`.
pub(crate) const MINHASH_NEEDS_JACCARD: &str = "--method minhash chooses its bands from the Jaccard \
    threshold: give --jaccard J, or the bands (minhash:BxR, B·R at most 128)";

/// The counting method to run, its name, what `auto` measured to choose
/// it, and its forecast when the count passes the limit ([`forecast`]).
type Chosen = (Box<dyn CountingMethod>, &'static str, Option<AutoStats>, Option<String>);

fn choose(input: &CountInput<'_>, cfg: &PairsConfig) -> anyhow::Result<Chosen> {
    let sort = |p| -> Box<dyn CountingMethod> { Box::new(sort::SortCounting { pair_instances: p }) };
    let coarse = |variant, p| -> Box<dyn CountingMethod> {
        Box::new(coarse::CoarseCounting { variant, counters: cfg.counters, pair_instances: p })
    };
    let prefix = |index| -> Box<dyn CountingMethod> {
        Box::new(prefix::PrefixCounting { index: std::cell::Cell::new(index) })
    };
    let relative = input.criterion.needs_sizes();
    let said = |groups: &GroupStats, name| forecast::forecast(groups, name, relative);
    // The whole work is known once the distinct candidates are estimated.
    let index_said = |index: &prefix::PrefixIndex, estimated: bool| {
        forecast::prefix(index.candidate_instances(), estimated.then(|| index.work()))
    };
    Ok(match cfg.method {
        Method::Sort => {
            let groups = shared_groups(input)?;
            (sort(Some(groups.pairs)), "sort", None, said(&groups, "sort"))
        }
        Method::Coarse(variant) => {
            let groups = shared_groups(input)?;
            (coarse(variant, Some(groups.pairs)), "coarse", None, said(&groups, "coarse"))
        }
        Method::Prefix => {
            // Built here, not when counting, to say what is coming first.
            let index = prefix::PrefixIndex::build(input)?;
            let line = index_said(&index, false);
            (prefix(Some(index)), "prefix", None, line)
        }
        Method::Minhash(bands) => {
            let bands = match (bands, input.criterion.jaccard) {
                (Some(bands), _) => bands,
                (None, Some(j)) => Bands::for_threshold(j),
                // The command line refuses this; a library caller gets
                // the same words.
                (None, None) => anyhow::bail!("{MINHASH_NEEDS_JACCARD}"),
            };
            let scheme = minhash::MinHash { bands, threshold: input.criterion.jaccard };
            (Box::new(lsh::LshCounting { scheme }), "minhash", None, None)
        }
        Method::Simhash(k) => {
            let scheme = simhash::SimHash::new(k, input.counted.documents());
            (Box::new(lsh::LshCounting { scheme }), "simhash", None, None)
        }
        Method::Auto(variant) => {
            let groups = shared_groups(input)?;
            let p = groups.pairs;
            let mut auto = AutoStats { pair_instances: p, ..AutoStats::default() };
            if p < AUTO_COARSE_PAIRS {
                return Ok((sort(Some(p)), "sort", Some(auto), said(&groups, "sort")));
            }
            let mut index = prefix::PrefixIndex::build(input)?;
            let budget = p.saturating_mul(AUTO_COARSE_READS);
            auto.prefix_candidate_instances = Some(index.candidate_instances());
            // At T = 1 every touched bucket is heavy: coarse counting would
            // be sort with extra passes.
            let instances = if relative && input.threshold == 1 { "sort" } else { "coarse" };
            let by_instances = |auto| -> Chosen {
                let method = if instances == "sort" { sort(Some(p)) } else { coarse(variant, Some(p)) };
                (method, instances, Some(auto), said(&groups, instances))
            };
            // Estimating the distinct candidates takes a pass over every
            // candidate instance: when neither method can count within the
            // forecast limit even so (prefix filtering's lower bound, its
            // candidate instances, against the instances the others
            // count), the cheaper is said (and, under --strict, refused)
            // before that pass.
            let prefix_bound = forecast::prefix_seconds(index.candidate_instances(), None);
            let instances_seconds = forecast::seconds(&groups, instances);
            if prefix_bound.min(instances_seconds) >= forecast::LIMIT_SECONDS {
                return Ok(if prefix_bound < instances_seconds {
                    let line = index_said(&index, false);
                    (prefix(Some(index)), "prefix", Some(auto), line)
                } else {
                    by_instances(auto)
                });
            }
            // Coarse counting reads every pair instance twice (hashing,
            // then verification), at random places in its counters. Prefix
            // filtering generates every candidate instance, then verifies
            // each distinct one: when the instances alone exceed the
            // budget, it has lost without counting the distinct ones.
            if index.candidate_instances() < budget {
                auto.prefix_distinct_candidates = Some(index.estimate_candidates(input)?);
            }
            auto.prefix_work = Some(index.work());
            if index.work() < budget {
                let line = index_said(&index, auto.prefix_distinct_candidates.is_some());
                (prefix(Some(index)), "prefix", Some(auto), line)
            } else {
                by_instances(auto)
            }
        }
    })
}

/// Counts the Overlap table of `out` and writes `overlap.csv`.
pub(crate) fn run(
    out: &OutDir,
    cfg: &PairsConfig,
    progress: &Progress,
) -> anyhow::Result<Outcome<PairsStats>> {
    let criterion = cfg.criterion;
    // Checked before the key, which takes the reference's.
    let reference = match &cfg.against {
        Some(dir) => Some(against::Reference::open(dir, out, &Manifest::read(out)?)?),
        None => None,
    };
    let flags = [
        criterion.threshold.to_string(),
        format!("{:?}/{:?}", criterion.jaccard, criterion.containment),
        format!("{:?}", cfg.method),
        format!("{:?}", cfg.counters),
        format!("{:?}", cfg.max_df),
        cfg.template.map_or_else(|| "no template".to_string(), |t| format!("template {t}")),
        reference.as_ref().map_or_else(|| "no reference".to_string(), |r| format!("against {}", r.key())),
    ];
    let key = Stage::chained_key(out, &PAIRS, &flags.each_ref().map(String::as_str))?;
    let threshold = criterion.threshold;
    let Some(stage) = Stage::begin(out, &PAIRS, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    // Another Overlap table makes other groups: docs.csv's near_group,
    // the report's, must not outlive the table it came from (the report's
    // stamp went when the stage began: `StageName::clears`).
    store::docs::clear_near_groups(out)?;
    let scratch = stage.scratch()?;
    let mut manifest = Manifest::read(out)?;
    if manifest.chunk == "doc" && threshold > 1 {
        progress.warn(&format!(
            "--chunk doc gives each document one chunk, so no two documents share {threshold} of them: \
             -T {threshold} finds no pair (documents sharing their one chunk have the same text, and are \
             exact copies; use a line or word chunking for near-replicas)"
        ));
    }

    let counted = match manifest.scope()? {
        Scope::Crawl => Counted::open(&out.centers())?,
        _ => Counted::open(&out.centers())?.in_scopes(&out.scopes())?,
    };
    let mut parts = out.fprint_parts()?;
    let mut template_stats = None;
    if let Some(rule) = cfg.template {
        let template = template::Template::read(out, &counted, rule)?;
        let (filtered, s) = template.filter(&parts, &counted, &scratch)?;
        parts = filtered;
        template_stats = Some(s);
    }
    // Each counted document's set size: what a similarity criterion divides
    // by, and who can be in a pair at all (counted below for the report's
    // warnings); held through counting only when the criterion needs it.
    let set_sizes = sizes::sizes(&parts, &counted, cfg.max_df)?;
    let (mut counted_documents, mut too_short_documents, mut counted_records) = (0u64, 0u64, 0u64);
    for (row, &size) in set_sizes.iter().enumerate() {
        if counted.contains(row as u32) {
            counted_documents += 1;
            too_short_documents += u64::from(size < threshold);
            counted_records += u64::from(size);
        }
    }
    let sizes = criterion.needs_sizes().then_some(set_sizes);
    let input = CountInput {
        parts: &parts,
        counted: &counted,
        threshold,
        criterion,
        sizes: sizes.as_deref(),
        max_df: cfg.max_df,
        cross_at: None,
        memory: cfg.memory,
        scratch: &scratch,
        progress,
    };
    let mut stats = PairsStats {
        threshold,
        jaccard: criterion.jaccard.map(|q| q.to_string()),
        containment: criterion.containment.map(|q| q.to_string()),
        criterion: criterion.describe(),
        max_df: cfg.max_df,
        template: cfg.template.map(|t| t.to_string()),
        template_chunks: template_stats.map(|s| s.chunks),
        template_records: template_stats.map(|s| s.records),
        counted_documents,
        too_short_documents,
        counted_records,
        ..PairsStats::default()
    };
    stats.counted_records += template_stats.map_or(0, |s| s.records);
    let mut outputs = vec![out.overlap()];
    match cfg.max_df {
        Some(max_df) => {
            let stops = stop::find(&parts, &counted, max_df)?;
            stats.stop_chunks = stops.len() as u64;
            stats.stop_chunk_pairs = stops.iter().map(|s| s.pairs).sum();
            stats.stop_chunk_records = stops.iter().map(|s| s.df).sum();
            stats.counted_records += stats.stop_chunk_records;
            stop::write_csv(out, &stops, &manifest)?;
            outputs.push(out.stop_chunks());
        }
        None => store::remove_file_if_exists(&out.stop_chunks())?,
    }
    // Methods count rows; the table shows docIDs, in the same order.
    let doc_ids = DocIds::open(out, &manifest)?;
    if doc_ids.len() != counted.documents() {
        anyhow::bail!(
            "{} names {} documents and {} names {}: the analysis is damaged",
            out.doc_ids().display(),
            doc_ids.len(),
            out.centers().display(),
            counted.documents()
        );
    }
    let mut table = OverlapWriter::create(&out.overlap(), Columns::of(&criterion))?;
    // An analysis carried forward counts only what changed, unless a
    // method was asked for.
    let mut counted_change = false;
    if manifest.chain.is_some() && matches!(cfg.method, Method::Auto(_)) && cfg.template.is_some() {
        // A changed page changes which chunks are its host's template, and
        // so the sets of the host's other pages: counted anew.
        stats.delta_skipped = Some("template chunks (--template) are found anew over the whole crawl".into());
    } else if manifest.chain.is_some() && matches!(cfg.method, Method::Auto(_)) {
        match delta::previous(&manifest, &criterion) {
            Ok(prev) => match delta::count(&prev, out, &input, &doc_ids, &mut stats, &mut table)? {
                Ok(figures) => {
                    stats.method = "delta".into();
                    stats.method_auto = true;
                    stats.delta = Some(figures);
                    counted_change = true;
                }
                Err(why) => stats.delta_skipped = Some(why.into()),
            },
            Err(why) => stats.delta_skipped = Some(why),
        }
    }
    if !counted_change {
        let (method, name, auto, forecast_line) = choose(&input, cfg)?;
        if let Some(line) = forecast_line {
            if cfg.strict {
                anyhow::bail!("--strict: refused before counting: {line}");
            }
            progress.warn(&line);
        }
        stats.method = name.to_string();
        stats.method_auto = auto.is_some();
        stats.auto = auto;
        let mut emit = |o: Overlap| {
            let measures = match input.sizes {
                None => Measures::default(),
                Some(sizes) => {
                    let (a, b) = (sizes[o.doc_i as usize], sizes[o.doc_j as usize]);
                    if !criterion.passes(o.shared, a, b) {
                        return Ok(());
                    }
                    criterion.measures(o.shared, a, b)
                }
            };
            let row =
                Overlap { doc_i: doc_ids.doc_id(o.doc_i), doc_j: doc_ids.doc_id(o.doc_j), shared: o.shared };
            table.push_measured(row, measures)
        };
        method.count(&input, &mut stats, &mut emit)?;
        if let Some(t) = template_stats {
            // The filter left the copies' records out before the method
            // read the partitions.
            stats.fingerprints_removed = t.copies;
        }
    }
    stats.pairs_emitted = table.finish()?;
    match &reference {
        Some(reference) => {
            let ours = against::Ours { out, counted: &counted, doc_ids: &doc_ids, scope: manifest.scope()? };
            stats.against = Some(against::count(reference, &ours, cfg, &scratch, progress)?);
            outputs.extend([out.against(), out.against_pairs()]);
        }
        None => {
            store::remove_file_if_exists(&out.against())?;
            store::remove_file_if_exists(&out.against_pairs())?;
        }
    }
    if out.fingerprint_changes().is_file() {
        stats.moved = Some(changes::write(out, &doc_ids, &criterion)?);
        outputs.push(out.changes());
    } else {
        store::remove_file_if_exists(&out.changes())?;
    }
    manifest.pairs = Some(PairsSettings {
        threshold,
        max_df: cfg.max_df,
        template: cfg.template.map(|t| t.to_string()),
        jaccard: criterion.jaccard.map(|q| q.to_string()),
        containment: criterion.containment.map(|q| q.to_string()),
        approximate: stats.lsh.as_ref().map(lsh::LshStats::describe),
        against: reference.as_ref().map(against::Reference::settings),
    });
    manifest.write(out)?;
    stage.finish(&mut stats, &outputs)?;
    Ok(Outcome::Ran(stats))
}
