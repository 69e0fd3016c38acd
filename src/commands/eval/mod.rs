//! `overlap eval RUN TRUTH`: how near a run's near-duplicates come to an
//! exact answer over the same crawl. TRUTH is an overlap analysis; RUN is
//! another, or another tool's answer as a CSV file of URL pairs or of
//! clusters ([`foreign`]).
//!
//! Documents are matched by URL, so runs over the same documents in any
//! order, or another tool's output, compare. Each URL is an item; a URL
//! with several documents is one item, paired when any of its documents
//! is; documents without a URL cannot be matched and are left out,
//! counted. Both sides become groups and links ([`side`]), and every
//! figure is counted over those ([`mod@count`], [`clusters`]), never pair by
//! pair: TRUTH's pairs are its rows, each standing for every pair of its
//! two exact groups, and every pair inside an exact group (J = 1).
//!
//! Read-only: it takes no lock and writes nothing, so it runs beside a
//! command writing either directory (and says so when a stage is
//! unfinished there). Memory grows with the URLs (each once, with a few
//! numbers per item) and the rows of both sides (tens of bytes each), not
//! with the pairs they stand for.

mod clusters;
mod count;
mod foreign;
mod side;
mod table;

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::base::progress::count;
use crate::store::criterion::{Criterion, Ratio};
use count::{BINS, Found};
use foreign::Kind;
use side::{Analysis, NONE, Side, Sim, Urls};

/// What to compare.
#[derive(Clone, Debug)]
pub(crate) struct EvalConfig {
    pub run: PathBuf,
    pub truth: PathBuf,
    /// Measure against the truth's pairs with at least this Jaccard only.
    pub min_jaccard: Option<Ratio>,
}

/// Every figure `eval` prints, and its `--json` object (docs/eval.md
/// lists the keys).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Evaluation {
    pub run: SideSummary,
    pub truth: SideSummary,
    /// `--min-jaccard`, null without it (every truth pair is a target).
    pub min_jaccard: Option<f64>,
    pub urls: UrlCounts,
    pub pairs: Scores,
    pub clusters: ClusterScores,
    /// Recall per Jaccard bin, those the truth holds every pair of.
    pub bins: Vec<Bin>,
    /// Why bins are left out, if any are.
    pub bins_left_out: Option<String>,
    /// Pairs of exact copies in the truth (J = 1 by their text), out of the
    /// bins.
    pub exact_copies: Recall,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct SideSummary {
    pub path: String,
    /// `analysis`, `pairs` (a `url_a,url_b` file) or `clusters` (a
    /// `url,cluster` file).
    pub kind: &'static str,
    /// An analysis's chunk spec, criterion (`Jaccard >= 0.8 and F >= 1`),
    /// `--max-df` and scope.
    pub chunk: Option<String>,
    pub criterion: Option<String>,
    pub max_df: Option<u32>,
    pub scope: Option<String>,
    /// Distinct URLs.
    pub urls: u64,
    /// An analysis's documents, those without a URL, and the URLs with
    /// several documents.
    pub documents: Option<u64>,
    pub documents_without_url: u64,
    pub duplicate_urls: u64,
    /// Rows of overlap.csv or of the file.
    pub rows: u64,
    /// A pair file's rows that pair a URL with itself; rows repeating an
    /// earlier pair or assignment.
    pub self_pairs: u64,
    pub repeated_rows: u64,
    /// The URL pairs the side holds (exact copies and rows expanded).
    pub pairs: u64,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct UrlCounts {
    pub common: u64,
    pub only_run: u64,
    /// Null for a CSV run, which names only the URLs it grouped.
    pub only_truth: Option<u64>,
}

/// True and false positives, false negatives and the ratios made of them
/// (null where the denominator is 0).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Scores {
    pub tp: u64,
    pub fp: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// Pair level: false positives that are truth pairs below
    /// `--min-jaccard` (near misses); the others are no truth pair at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_misses: Option<u64>,
}

impl Scores {
    fn new(tp: u64, predicted: u64, actual: u64) -> Scores {
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        let (fp, fn_) = (predicted - tp, actual - tp);
        Scores {
            tp,
            fp,
            fn_,
            precision: ratio(tp, predicted),
            recall: ratio(tp, actual),
            f1: ratio(2 * tp, 2 * tp + fp + fn_),
            near_misses: None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ClusterScores {
    #[serde(flatten)]
    pub scores: Scores,
    pub ari: Option<f64>,
    /// Clusters of two URLs or more on each side.
    pub truth_clusters: u64,
    pub run_clusters: u64,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Bin {
    /// [from, to), the last bin [0.9, 1.0] closed.
    pub from: f64,
    pub to: f64,
    #[serde(flatten)]
    pub recall: Recall,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Recall {
    pub truth_pairs: u64,
    pub found: u64,
    pub recall: Option<f64>,
}

impl From<Found> for Recall {
    fn from(f: Found) -> Recall {
        Recall {
            truth_pairs: f.truth,
            found: f.found,
            recall: (f.truth > 0).then(|| f.found as f64 / f.truth as f64),
        }
    }
}

/// Reads both sides and counts.
pub(crate) fn evaluate(cfg: &EvalConfig) -> anyhow::Result<Evaluation> {
    if !cfg.truth.exists() {
        bail!("{} does not exist: TRUTH is an overlap output directory", cfg.truth.display());
    }
    if !cfg.truth.is_dir() {
        bail!(
            "{} is a file: TRUTH is an overlap output directory (another tool's CSV can only be RUN)",
            cfg.truth.display()
        );
    }
    if !cfg.run.exists() {
        bail!("{} does not exist: RUN is an overlap output directory or a CSV file", cfg.run.display());
    }
    let mut urls = Urls::default();
    let mut truth = side::read_analysis(&cfg.truth, &mut urls)?;
    if cfg.min_jaccard.is_some() && !truth.jaccard {
        bail!(
            "--min-jaccard needs a truth made with --jaccard: {} has no jaccard column",
            OutPath(&cfg.truth, "overlap.csv")
        );
    }
    let mut run = if cfg.run.is_dir() {
        Run::Analysis(Box::new(side::read_analysis(&cfg.run, &mut urls)?))
    } else {
        Run::Foreign(foreign::read(&cfg.run, &mut urls)?)
    };
    let items = urls.len();
    let run_side = match &mut run {
        Run::Analysis(a) => {
            let mut side = std::mem::take(&mut a.side);
            side.cover(items);
            side
        }
        Run::Foreign(f) => f.take_side(items),
    };
    truth.side.cover(items);
    let (t, r) = (&truth.side, &run_side);
    let in_both = (0..items).filter(|&i| t.group[i] != NONE && r.group[i] != NONE).count() as u64;
    let truth_urls = t.items();
    let run_urls = match &run {
        Run::Analysis(_) => r.items(),
        Run::Foreign(f) => f.urls,
    };
    if truth_urls == 0 {
        bail!("{} has no document with a URL: documents are matched by URL", cfg.truth.display());
    }
    let empty_list = matches!(run, Run::Foreign(_)) && run_urls == 0;
    if in_both == 0 && !empty_list {
        bail!(
            "{} and {} have no URL in common ({run_urls} and {truth_urls} URLs): they must be of the same crawl",
            cfg.run.display(),
            cfg.truth.display()
        );
    }
    let min = cfg.min_jaccard.map(|q| q.get() as u32 * 100);
    let target = |sim: Sim| !matches!((sim, min), (Sim::Jaccard(j), Some(m)) if j < m);
    let pairs = count::count(t, r, target);
    let truth_labels = clusters::labels(t, |l| target(l.sim));
    let run_labels = clusters::labels(r, |_| true);
    let c = clusters::pair_counts(truth_labels.into_iter().zip(run_labels));

    let mut pair_scores = Scores::new(pairs.target.found, pairs.run, pairs.target.truth);
    if min.is_some() {
        pair_scores.near_misses = Some(pairs.below.found);
    }
    let only_run = (0..items).filter(|&i| t.group[i] == NONE && r.group[i] != NONE).count() as u64;
    let only_truth = match run {
        Run::Analysis(_) => Some(truth_urls - in_both),
        Run::Foreign(_) => None,
    };
    let (bins, bins_left_out) = shown_bins(&truth, &pairs.bins);
    let mut e = Evaluation {
        run: run.summary(&cfg.run, run_urls, pairs.run),
        truth: summary_of(&truth, &cfg.truth, truth_urls, pairs.target.truth + pairs.below.truth),
        min_jaccard: cfg.min_jaccard.map(|q| q.get() as f64 / 10_000.0),
        urls: UrlCounts { common: in_both, only_run, only_truth },
        pairs: pair_scores,
        clusters: ClusterScores {
            scores: Scores::new(c.together_in_both, c.together_in_run, c.together_in_truth),
            ari: c.ari(),
            truth_clusters: c.truth_clusters,
            run_clusters: c.run_clusters,
        },
        bins,
        bins_left_out,
        exact_copies: pairs.exact.into(),
        notes: Vec::new(),
    };
    e.notes = notes(&e, &urls, t, r, &truth, &run, cfg);
    Ok(e)
}

/// RUN as read, its side taken out.
enum Run {
    Analysis(Box<Analysis>),
    Foreign(foreign::Foreign),
}

impl Run {
    fn summary(&self, path: &std::path::Path, urls: u64, pairs: u64) -> SideSummary {
        match self {
            Run::Analysis(a) => summary_of(a, path, urls, pairs),
            Run::Foreign(f) => SideSummary {
                path: path.display().to_string(),
                kind: match f.kind {
                    Kind::Pairs => "pairs",
                    Kind::Clusters => "clusters",
                },
                chunk: None,
                criterion: None,
                max_df: None,
                scope: None,
                urls,
                documents: None,
                documents_without_url: 0,
                duplicate_urls: 0,
                rows: f.rows,
                self_pairs: f.self_pairs,
                repeated_rows: f.repeated,
                pairs,
            },
        }
    }
}

fn summary_of(a: &Analysis, path: &std::path::Path, urls: u64, pairs: u64) -> SideSummary {
    SideSummary {
        path: path.display().to_string(),
        kind: "analysis",
        chunk: Some(a.chunk.clone()),
        criterion: Some(a.criterion.describe()),
        max_df: a.max_df,
        scope: Some(a.scope.clone()),
        urls,
        documents: Some(a.documents),
        documents_without_url: a.without_url,
        duplicate_urls: a.duplicate_urls,
        rows: a.rows,
        self_pairs: 0,
        repeated_rows: 0,
        pairs,
    }
}

/// The bins the truth holds every pair of: those at or above its own
/// Jaccard threshold. A truth without a Jaccard criterion has none.
fn shown_bins(truth: &Analysis, found: &[Found; BINS]) -> (Vec<Bin>, Option<String>) {
    let Some(floor) = truth.criterion.jaccard.filter(|_| truth.jaccard) else {
        return (
            Vec::new(),
            Some(
                "recall per Jaccard bin needs a truth made with --jaccard (--jaccard 0.5 for every bin): \
                 this truth's rows have no Jaccard similarity"
                    .to_string(),
            ),
        );
    };
    let bins: Vec<Bin> = (0..BINS)
        .filter(|&b| (b as u64 + 5) * 1000 >= floor.get())
        .map(|b| Bin { from: (b + 5) as f64 / 10.0, to: (b + 6) as f64 / 10.0, recall: found[b].into() })
        .collect();
    let why = (bins.len() < BINS).then(|| {
        format!(
            "bins below {floor} are left out: the truth holds only pairs with Jaccard >= {floor} \
             (make it with --jaccard 0.5 for every bin)"
        )
    });
    (bins, why)
}

/// What a reader needs to know to trust the figures.
fn notes(
    e: &Evaluation,
    urls: &Urls,
    t: &Side,
    r: &Side,
    truth: &Analysis,
    run: &Run,
    cfg: &EvalConfig,
) -> Vec<String> {
    let mut notes = Vec::new();
    let example =
        |pick: &dyn Fn(u32) -> bool| urls.smallest(pick).map_or(String::new(), |u| format!(" (e.g. {u})"));
    if e.urls.only_run > 0 {
        let ex = example(&|i| t.group[i as usize] == NONE && r.group[i as usize] != NONE);
        notes.push(format!(
            "{} of RUN not in TRUTH{ex}: their pairs count as false positives",
            count(e.urls.only_run, "URL", "URLs")
        ));
    }
    if let Some(n) = e.urls.only_truth.filter(|&n| n > 0) {
        let ex = example(&|i| t.group[i as usize] != NONE && r.group[i as usize] == NONE);
        notes.push(format!(
            "{} of TRUTH not in RUN{ex}: their pairs count as false negatives",
            count(n, "URL", "URLs")
        ));
    }
    for (name, s) in [("RUN", &e.run), ("TRUTH", &e.truth)] {
        let counted = [
            (
                s.duplicate_urls,
                "URL has",
                "URLs have",
                "several documents: each such URL is one, paired when any of its documents is",
            ),
            (
                s.documents_without_url,
                "document without a URL is",
                "documents without a URL are",
                "left out (documents are matched by URL)",
            ),
            (s.self_pairs, "row pairs", "rows pair", "a URL with itself, left out"),
            (s.repeated_rows, "row repeats", "rows repeat", "an earlier row"),
        ];
        for (n, one, many, what) in counted.into_iter().filter(|c| c.0 > 0) {
            notes.push(format!("{name}: {} {what}", count(n, one, many)));
        }
    }
    if let Some(n) = e.pairs.near_misses.filter(|_| e.pairs.fp > 0) {
        notes.push(format!(
            "{n} of the {} are TRUTH's pairs below --min-jaccard (near misses); the others are no pair of TRUTH",
            count(e.pairs.fp, "false positive pair", "false positive pairs")
        ));
    }
    if let Some(floor) = truth.criterion.jaccard.filter(|_| truth.jaccard) {
        let rest = Criterion { jaccard: None, ..truth.criterion };
        if rest.threshold > 1 || rest.containment.is_some() {
            notes.push(format!(
                "TRUTH also asks {}: the bins hold only the pairs with Jaccard >= {floor} that pass it",
                rest.describe()
            ));
        }
        if let Some(q) = cfg.min_jaccard.filter(|&q| q < floor) {
            notes.push(format!(
                "--min-jaccard {q} is below TRUTH's Jaccard >= {floor}: TRUTH holds no pair below it"
            ));
        }
    }
    if let Run::Analysis(a) = run {
        if a.chunk != truth.chunk {
            notes.push(format!(
                "RUN chunks as {} and TRUTH as {}: every similarity is TRUTH's",
                a.chunk, truth.chunk
            ));
        }
        if let (Some(ours), None) = (a.criterion.jaccard, cfg.min_jaccard)
            && truth.criterion.jaccard.is_some_and(|floor| floor < ours)
        {
            notes.push(format!(
                "RUN keeps Jaccard >= {ours}, TRUTH less: give --min-jaccard {ours} to measure RUN \
                 against TRUTH's pairs at its own threshold"
            ));
        }
    }
    notes
}

/// A file of an output directory, for a message.
struct OutPath<'a>(&'a std::path::Path, &'a str);

impl std::fmt::Display for OutPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.join(self.1).display())
    }
}

/// Prints `e` as one JSON object.
pub(crate) fn write_json(e: &Evaluation, w: &mut impl Write) -> anyhow::Result<()> {
    let mut json = serde_json::to_vec_pretty(e).context("cannot encode the evaluation")?;
    json.push(b'\n');
    w.write_all(&json)?;
    Ok(())
}

pub(crate) use table::write_table;
