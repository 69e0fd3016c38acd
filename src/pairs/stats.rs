//! The pairs stage's section of `stats.json`.

use serde::{Deserialize, Serialize};

use super::coarse::CoarseStats;
use super::prefix::PrefixStats;
use crate::stats::{Summary, count};

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
    /// `--previous` ([`super::delta`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) delta: Option<super::delta::DeltaStats>,
    /// Why every pair was counted in an analysis made with `--previous`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_skipped: Option<String>,
    /// What the signature scheme did, for `--method minhash` or
    /// `simhash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lsh: Option<super::lsh::LshStats>,
    /// What prefix filtering did, for `--method prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prefix: Option<PrefixStats>,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
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

crate::stats::measured!(PairsStats);
