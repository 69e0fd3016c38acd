//! The fingerprint stage's section of `stats.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Summary;
use crate::base::progress::count;

/// How many corrupt records stats.json lists one by one.
pub(crate) const CORRUPT_SAMPLES: usize = 100;

/// One corrupt record: where it is and what was wrong.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CorruptSample {
    pub file: String,
    pub offset: u64,
    /// The record's line, for a format whose records are lines (JSONL),
    /// while it is known (see [`crate::bytes::read::Skip::line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
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
    /// Records of this input that are not documents, by reason (only the
    /// reasons met), for the report's data quality per input.
    pub skipped_records: BTreeMap<String, u64>,
    /// Of those, the corrupt ones.
    pub corrupt_records: u64,
    /// Documents of this input whose text was cut at `--max-doc-bytes`.
    pub capped_documents: u64,
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
    /// Of those, the revisits read before their original (in a later
    /// input, or later in the same one): their docIDs come after every
    /// input's documents.
    #[serde(default)]
    pub late_revisits: u64,
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
    /// With `--previous`: what carrying the previous analysis forward did.
    /// The counts above are of the inputs read this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<ChainStats>,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

impl Summary for FingerprintStats {
    fn summary(&self) -> String {
        let skipped: u64 = self.skipped.values().sum();
        format!(
            "fingerprint: {} ({} empty), {} skipped ({} corrupt), {} in {:.1} s",
            count(self.documents, "document", "documents"),
            self.empty_documents,
            count(skipped, "record", "records"),
            self.corrupt_records,
            count(self.fingerprints, "fingerprint", "fingerprints"),
            self.seconds
        )
    }
}

super::measured!(FingerprintStats);

/// The fingerprint stage's `previous` section: an analysis carried forward.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ChainStats {
    /// The previous analysis, as given.
    pub analysis: String,
    /// This analysis's place in the chain (1 for the first made with
    /// `--previous`).
    pub chain_length: u32,
    pub keep_missing: u32,
    /// Documents in this analysis: those read, and those kept.
    pub documents: u64,
    /// URLs by what became of them (`changes.csv`'s `change`).
    pub changes: BTreeMap<String, u64>,
    /// Lost or orphaned pages kept with their last text.
    pub kept_missing: u64,
    /// Pages unchanged by an HTTP 304 or a revisit of an earlier crawl:
    /// kept from the previous analysis without a new document.
    pub unchanged_without_payload: u64,
    /// Documents read whose URL a later record of the same inputs stands
    /// for (the last capture of a URL stands for it).
    pub superseded_captures: u64,
    /// Documents of the previous analysis that did not stand for their
    /// URL (an earlier capture of it in a first analysis): left out.
    pub previous_superseded: u64,
    /// Rows of copies.csv left out because the original they copy does not
    /// stand for its URL.
    pub copies_left_out: u64,
    /// Documents read that were not extracted: the previous analysis has
    /// their URL with the same payload, decoded the same way.
    pub unchanged_payloads: u64,
    /// Of those, the ones whose body was not even decompressed (per-record
    /// gzip WARC): the rest of their gzip member was skipped.
    pub unread_payloads: u64,
}
