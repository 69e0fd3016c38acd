//! `stats.json`: what each stage counted, one section per stage.
//!
//! Every field is deterministic for the same inputs and flags except
//! `seconds` and `peak_rss_bytes`, which measure the run itself.

use std::collections::BTreeMap;
use std::fs;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::store::{OutDir, write_atomic};

/// How many corrupt records stats.json lists one by one.
pub const CORRUPT_SAMPLES: usize = 100;

/// One corrupt record: where it is and what was wrong.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CorruptSample {
    pub file: String,
    pub offset: u64,
    pub reason: String,
    pub detail: String,
}

/// Per-input counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct InputStats {
    pub file: String,
    pub bytes: Option<u64>,
    pub records: u64,
    pub documents: u64,
    /// How many segments the input was read in: more than one for a large
    /// per-record gzip WARC file, whose segments are read in parallel.
    pub segments: u64,
    /// Why the whole input was skipped (`empty_file`, `directory`), if it
    /// was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FingerprintStats {
    pub chunk: String,
    /// How the inputs were read (`--input-format`, `--url-field`,
    /// `--text-field`), so later stages can read a record again.
    pub input_format: String,
    pub url_field: String,
    pub text_field: String,
    pub inputs: Vec<InputStats>,
    /// Inputs skipped whole: empty files and directories (each named, with
    /// its reason, in `inputs`).
    pub inputs_skipped: u64,
    /// Records read, documents or not.
    pub records: u64,
    pub documents: u64,
    pub empty_documents: u64,
    /// Records that are not documents, by reason (every reason listed).
    pub skipped: BTreeMap<String, u64>,
    /// Corrupt records in all (the sum of the corrupt reasons in `skipped`).
    pub corrupt_records: u64,
    /// The first corrupt records, with file and offset.
    pub corrupt: Vec<CorruptSample>,
    /// Documents whose text was cut at `--max-doc-bytes`.
    pub capped_documents: u64,
    /// Extracted documents by the rule that chose their encoding (`bom`,
    /// `http`, `meta`, `default` for undeclared UTF-8, `detected`), and by
    /// encoding (WHATWG names: `UTF-8`, `windows-1252`, ...).
    pub charset_sources: BTreeMap<String, u64>,
    pub encodings: BTreeMap<String, u64>,
    /// Extracted documents with bytes malformed in their encoding (each
    /// replaced by U+FFFD).
    pub malformed_encoding_documents: u64,
    /// Documents made from WARC `revisit` records: copies of the record
    /// they revisit (included in `documents`).
    pub revisits: u64,
    /// Responses not extracted because an earlier response had the same
    /// `WARC-Payload-Digest`, content type, charset and HTTP codings: they
    /// are copies of it (included in `documents`), and their payload bytes.
    pub payload_digest_copies: u64,
    pub payload_digest_copy_bytes: u64,
    /// Payload bytes of documents, before extraction. This and the next
    /// three count extracted documents, not copies made without
    /// extraction (revisits, payload-digest copies).
    pub document_bytes: u64,
    /// Normalized text bytes.
    pub text_bytes: u64,
    pub lines: u64,
    /// Windows cut, counting repeats inside a document.
    pub chunks: u64,
    /// FPrint-DocID records: distinct fingerprints per document, summed
    /// (copies included).
    pub fingerprints: u64,
    /// Distinct fingerprint values over the whole input.
    pub distinct_fingerprints: u64,
    pub partitions: u32,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExactStats {
    pub documents: u64,
    pub empty_documents: u64,
    /// Groups of two or more documents with identical normalized text.
    pub groups: u64,
    /// Documents in those groups.
    pub documents_in_groups: u64,
    /// Non-center documents, left out of pair counting.
    pub copies_removed: u64,
    pub largest_group: u64,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PairsStats {
    /// The method that counted (`sort`, `coarse` or `prefix`).
    pub method: String,
    /// Whether `--method auto` chose it.
    pub method_auto: bool,
    pub threshold: u32,
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
    /// Rows of the Overlap table (F >= T).
    pub pairs_emitted: u64,
    /// `--max-df`, when given.
    pub max_df: Option<u32>,
    /// Fingerprints left out as stop chunks, and the pairs they would have
    /// generated.
    pub stop_chunks: u64,
    pub stop_chunk_pairs: u64,
    /// Bytes of pair runs written to temporary disk, every merge round
    /// included.
    pub spill_bytes: u64,
    /// What coarse counting did, for `--method coarse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarse: Option<crate::pairs::coarse::CoarseStats>,
    /// What `--method auto` measured to choose the method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoStats>,
    /// What prefix filtering did, for `--method prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<crate::pairs::prefix::PrefixStats>,
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

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportStats {
    pub documents: u64,
    pub empty_documents: u64,
    /// Non-empty documents with an exact copy elsewhere, in percent.
    pub exact_copy_percent: f64,
    /// Non-empty documents with a near-replica (or exact copy), in percent.
    pub near_replica_percent: f64,
    /// Pages that need not be fetched again, keeping one of each exact
    /// group / skipping near-replicas too, in percent.
    pub savings_exact_percent: f64,
    pub savings_near_percent: f64,
    /// Connected components of two or more documents.
    pub groups: u64,
    pub mirror_host_pairs: u64,
    pub alias_pairs: u64,
    /// Documents whose text was read again for the fuzzy signature.
    pub texts_read: u64,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// The order of the stage sections; writing one removes the later ones,
/// which a rerun of an earlier stage makes stale.
const STAGES: [&str; 4] = ["fingerprint", "exact", "pairs", "report"];

/// Writes one stage's section into `stats.json`, keeping the earlier ones.
pub fn write_section<S: Serialize>(out: &OutDir, stage: &str, section: &S) -> anyhow::Result<()> {
    let path = out.stats();
    let mut root = match fs::read(&path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        Err(_) => Map::new(),
    };
    if let Some(pos) = STAGES.iter().position(|s| *s == stage) {
        for later in &STAGES[pos + 1..] {
            root.remove(*later);
        }
    }
    root.insert("overlap_version".into(), Value::String(env!("CARGO_PKG_VERSION").into()));
    root.insert(stage.into(), serde_json::to_value(section).context("cannot encode stats")?);
    let mut json = serde_json::to_vec_pretty(&Value::Object(root)).context("cannot encode stats")?;
    json.push(b'\n');
    write_atomic(&path, &json)
}

/// Reads one stage's section back, if present.
pub fn read_section<S: for<'de> Deserialize<'de>>(out: &OutDir, stage: &str) -> Option<S> {
    let bytes = fs::read(out.stats()).ok()?;
    let root: Value = serde_json::from_slice(&bytes).ok()?;
    serde_json::from_value(root.get(stage)?.clone()).ok()
}

/// A one-line human summary of a stage's work.
pub trait Summary {
    fn summary(&self) -> String;
}

impl Summary for FingerprintStats {
    fn summary(&self) -> String {
        let skipped: u64 = self.skipped.values().sum();
        format!(
            "fingerprint: {} documents ({} empty), {} records skipped ({} corrupt), {} fingerprints in {:.1} s",
            self.documents,
            self.empty_documents,
            skipped,
            self.corrupt_records,
            self.fingerprints,
            self.seconds
        )
    }
}

impl Summary for ExactStats {
    fn summary(&self) -> String {
        format!(
            "exact: {} groups of exact copies, {} copies removed, in {:.1} s",
            self.groups, self.copies_removed, self.seconds
        )
    }
}

impl Summary for PairsStats {
    fn summary(&self) -> String {
        format!(
            "pairs: {} pairs share >= {} fingerprints ({} pairs generated, method {}) in {:.1} s",
            self.pairs_emitted, self.threshold, self.pairs_generated, self.method, self.seconds
        )
    }
}

impl Summary for ReportStats {
    /// A few lines: the figures a crawl's owner asks for first.
    fn summary(&self) -> String {
        format!(
            "report: {} documents ({} empty) in {:.1} s\n  \
             {:.1}% have an exact copy, {:.1}% a near-replica\n  \
             a recrawl could skip {:.1}% of pages keeping one copy of each exact group, {:.1}% skipping near-replicas too\n  \
             {} replica groups, {} mirrored host pairs, {} URL alias pairs: see report.html",
            self.documents,
            self.empty_documents,
            self.seconds,
            self.exact_copy_percent,
            self.near_replica_percent,
            self.savings_exact_percent,
            self.savings_near_percent,
            self.groups,
            self.mirror_host_pairs,
            self.alias_pairs
        )
    }
}

/// Stats that carry a stage's time and peak memory.
pub trait Measured {
    fn measured(&mut self, seconds: f64, peak_rss_bytes: Option<u64>);
}

macro_rules! measured {
    ($($t:ty),*) => {$(
        impl Measured for $t {
            fn measured(&mut self, seconds: f64, peak_rss_bytes: Option<u64>) {
                self.seconds = seconds;
                self.peak_rss_bytes = peak_rss_bytes;
            }
        }
    )*};
}

measured!(FingerprintStats, ExactStats, PairsStats, ReportStats);
