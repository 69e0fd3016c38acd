//! The pairs stage's section of `stats.json`, with what each counting
//! method adds to it.

use serde::{Deserialize, Serialize};

use super::Summary;
use crate::base::progress::count;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PairsStats {
    /// The method that counted (`sort`, `coarse`, `prefix`, `delta`,
    /// `minhash` or `simhash`).
    pub method: String,
    /// Whether `--method auto` chose it.
    pub method_auto: bool,
    pub threshold: u32,
    /// `--jaccard` and `--containment`, when given, as decimals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    /// The whole rule in words: `F >= 15`, `Jaccard >= 0.8 and F >= 1`.
    pub criterion: String,
    /// FPrint-DocID records of non-center copies, dropped before counting.
    pub fingerprints_removed: u64,
    /// Fingerprints shared by two or more counted documents.
    pub shared_fingerprints: u64,
    /// Most documents sharing one fingerprint.
    pub largest_fingerprint_group: u64,
    /// Document pairs generated from fingerprint groups (the paper's
    /// DocID-DocID file), counting each shared fingerprint once.
    pub pairs_generated: u64,
    /// Distinct document pairs sharing at least one fingerprint.
    pub distinct_pairs: u64,
    /// Rows of the Overlap table (the pairs that pass the criterion).
    pub pairs_emitted: u64,
    /// With `--previous`: new URLs found to be pages moved (`changes.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<u64>,
    /// With `--against`: what counting against the reference found
    /// (`against.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<AgainstStats>,
    /// `--max-df`, when given.
    pub max_df: Option<u32>,
    /// Fingerprints left out as stop chunks, and the pairs they would have
    /// generated.
    pub stop_chunks: u64,
    pub stop_chunk_pairs: u64,
    /// `--template`, when given: each host's template chunks were left out
    /// before counting; the (host, chunk) pairs found template, and the
    /// records (a chunk in a document) left out with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_chunks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_records: Option<u64>,
    /// Counted documents with text (exact-group centers), and those of
    /// them with fewer than T chunks of their own (template and stop chunks
    /// left out), which no pair can hold: the report warns when they are
    /// many.
    pub counted_documents: u64,
    pub too_short_documents: u64,
    /// The counted documents' chunk records (a chunk in a document), and
    /// those of stop chunks: the share `--max-df` leaves out.
    pub counted_records: u64,
    pub stop_chunk_records: u64,
    /// Bytes of pair runs written to temporary disk, every merge round
    /// included.
    pub spill_bytes: u64,
    /// What coarse counting did, for `--method coarse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) coarse: Option<CoarseStats>,
    /// What `--method auto` measured to choose the method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoStats>,
    /// What counting only the change did, for an analysis made with
    /// `--previous` (the pairs stage's `delta.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) delta: Option<DeltaStats>,
    /// Why every pair was counted in an analysis made with `--previous`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_skipped: Option<String>,
    /// What the signature scheme did, for `--method minhash` or
    /// `simhash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lsh: Option<LshStats>,
    /// What prefix filtering did, for `--method prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prefix: Option<PrefixStats>,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// What the pairs stage found counting against a reference analysis
/// (`pairs.against` in stats.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct AgainstStats {
    /// The reference analysis, as given.
    pub reference: String,
    /// Its documents, and those it counts (exact-group centers with text).
    pub reference_documents: u64,
    pub reference_counted: u64,
    /// This analysis's documents, those the reference holds (an exact copy
    /// there, or a page passing the criterion), and the exact copies among
    /// them.
    pub documents: u64,
    pub held: u64,
    pub exact: u64,
    /// The chunks of this analysis's documents (each document's set, copies
    /// counted with their center's), and those the reference holds.
    pub chunks: u64,
    pub chunks_in_reference: u64,
    /// The counting method that counted both sides as one analysis (as
    /// `--method` chooses for the Overlap table), the pair instances of the
    /// fingerprint groups of both crawls (those inside either crawl too,
    /// which the methods do not generate), and the rows of
    /// `against-pairs.csv`.
    pub method: String,
    pub pairs_generated: u64,
    pub pairs_emitted: u64,
    /// Fingerprints left out as stop chunks of both sides together
    /// (`--max-df`).
    pub stop_chunks: u64,
    /// What prefix filtering did, when it counted.
    pub(crate) prefix: Option<PrefixStats>,
    pub spill_bytes: u64,
    pub seconds: f64,
}

/// The figures `--method auto` chooses by.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct AutoStats {
    /// Pair instances the fingerprint groups generate: sort below a
    /// million.
    pub pair_instances: u64,
    /// Above that, the prefix index is built: the pair instances of its
    /// groups, the distinct pairs among them (estimated, when the instances
    /// are under twice the pair instances), and the predicted work of
    /// prefix filtering in list entries; prefix filtering runs when that
    /// work is under twice the pair instances, coarse counting otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_candidate_instances: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_distinct_candidates: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_work: Option<u64>,
}

impl Summary for PairsStats {
    fn summary(&self) -> String {
        let kept = if self.jaccard.is_some() || self.containment.is_some() {
            format!("{} {}", count(self.pairs_emitted, "pair passes", "pairs pass"), self.criterion)
        } else {
            format!(
                "{} >= {}",
                count(self.pairs_emitted, "pair shares", "pairs share"),
                count(u64::from(self.threshold), "fingerprint", "fingerprints")
            )
        };
        format!(
            "pairs: {kept} ({} generated, method {}) in {:.1} s",
            count(self.pairs_generated, "pair", "pairs"),
            self.method,
            self.seconds
        )
    }
}

super::measured!(PairsStats);

/// What a coarse run reports in stats.json (`pairs.coarse`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct CoarseStats {
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
    /// MULTI-STAGE: first-level buckets the pilot sample marked, and the
    /// counters of the shared second-level pool they point into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marked_buckets: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_counters: Option<u64>,
}

/// Time and peak memory of one pass.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct PassStats {
    pub pass: String,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// What a prefix-filtering run reports in stats.json (`pairs.prefix`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct PrefixStats {
    /// Shared fingerprints of counted documents, summed over documents.
    pub postings: u64,
    /// Documents with at least T shared fingerprints (under a similarity
    /// criterion, at least the overlap their size needs): the only ones
    /// that can be in the table; and the postings of their lists.
    pub long_documents: u64,
    pub postings_in_long_lists: u64,
    /// Postings in the prefixes of those documents.
    pub prefix_postings: u64,
    /// Pairs generated from prefix groups, and the distinct ones among
    /// them (each verified by intersecting two lists).
    pub candidate_instances: u64,
    pub candidates: u64,
    /// Candidates that do not pass the criterion (F < T, or below the
    /// similarity threshold).
    pub false_positives: u64,
}

/// What a signature method did (`pairs.lsh` in stats.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub(crate) struct LshStats {
    /// `minhash` or `simhash`.
    pub scheme: String,
    /// MinHash: bands of rows, and the probability that a pair at the
    /// Jaccard threshold shares a band, 1 - (1 - J^R)^B (when there is
    /// one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bands: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability_at_threshold: Option<f64>,
    /// SimHash: the most differing bits, the tables and their key bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_distance: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_bits: Option<u32>,
    /// Passes over the partitions (document ranges) signatures took.
    pub signature_passes: u64,
    /// Documents that got a signature: counted, with a set large enough
    /// to pass with some partner.
    pub documents: u64,
    /// `(key, doc)` records sorted into buckets.
    pub bucket_entries: u64,
    /// Candidate pairs from buckets (a pair once per bucket it shares,
    /// after the scheme's filter), and the distinct ones, each verified.
    pub candidate_instances: u64,
    pub candidates: u64,
    /// Candidates that do not pass the criterion.
    pub false_positives: u64,
}

impl LshStats {
    /// The method in a few words, for the manifest and the report:
    /// `MinHash-LSH 18x7`, `SimHash K=3`.
    pub(crate) fn describe(&self) -> String {
        match (self.bands, self.rows, self.max_distance) {
            (Some(b), Some(r), _) => format!("MinHash-LSH {b}x{r}"),
            (_, _, Some(k)) => format!("SimHash K={k}"),
            _ => self.scheme.clone(),
        }
    }
}

/// What counting only the change did (`pairs.delta` in stats.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct DeltaStats {
    /// Counted documents, and those whose pairs were counted again.
    pub counted_documents: u64,
    pub touched_documents: u64,
    /// Of those, the ones touched only because a fingerprint they have
    /// changed its stop status.
    pub touched_by_stop_chunks: u64,
    /// Rows of the previous table carried over.
    pub carried_pairs: u64,
    /// Candidate pairs of a touched document, each verified, and those with
    /// F >= T.
    pub candidates: u64,
    pub counted_pairs: u64,
}
