//! The report stage's section of `stats.json`, and the headline of an
//! analysis carried forward that report.json shares with it.

use serde::{Deserialize, Serialize};

use super::Summary;
use crate::base::progress::count;
/// The report stage's section of `stats.json`.
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
    /// URL alias pairs of every kind, whatever their content ...
    pub alias_pairs: u64,
    /// ... of which the real aliases: the same text, or near-replicas ...
    pub alias_same_content: u64,
    /// ... and those whose content differs (or one is empty).
    pub alias_different: u64,
    /// Records the fingerprint stage skipped as corrupt.
    pub corrupt_records: u64,
    /// Documents whose text was read again for the fuzzy signature.
    pub texts_read: u64,
    /// report.json's `warnings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// report.json's `current_crawl`, in an analysis carried forward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_crawl: Option<CurrentCrawl>,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

impl Summary for ReportStats {
    /// A few lines: the figures a crawl's owner asks for first.
    /// In an analysis carried forward, the first three lines are of this
    /// crawl's documents, the pages kept while missing counted apart.
    fn summary(&self) -> String {
        let (documents, of_crawl, kept, [exact, near, skip_exact, skip_near]) = match &self.current_crawl {
            Some(c) => (
                [c.documents, c.empty_documents],
                " of this crawl",
                format!(" and {} kept while missing,", count(c.kept_missing, "page", "pages")),
                [
                    c.exact_copy_percent,
                    c.near_replica_percent,
                    c.skippable_exact_percent,
                    c.skippable_near_percent,
                ],
            ),
            None => (
                [self.documents, self.empty_documents],
                "",
                String::new(),
                [
                    self.exact_copy_percent,
                    self.near_replica_percent,
                    self.savings_exact_percent,
                    self.savings_near_percent,
                ],
            ),
        };
        let mut s = format!(
            "report: {}{of_crawl} ({} empty){kept} in {:.1} s\n  \
             {exact:.1}% have an exact copy, {near:.1}% a near-replica\n  \
             a recrawl could skip {skip_exact:.1}% of pages keeping one copy of each exact group, {skip_near:.1}% skipping near-replicas too\n  \
             {}, {}, {} with the same content ({} whose content differs): see report.html",
            count(documents[0], "document", "documents"),
            documents[1],
            self.seconds,
            count(self.groups, "replica group", "replica groups"),
            count(self.mirror_host_pairs, "mirrored host pair", "mirrored host pairs"),
            count(self.alias_same_content, "URL alias", "URL aliases"),
            count(self.alias_different, "more URL pair", "more URL pairs"),
        );
        if self.corrupt_records > 0 {
            s.push_str(&format!(
                "\n  {} skipped as corrupt: see report.html's data quality",
                count(self.corrupt_records, "record was", "records were")
            ));
        }
        for w in &self.warnings {
            s.push_str(&format!("\n  warning: {w}"));
        }
        s
    }
}

/// report.json's `current_crawl` (and stats.json's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CurrentCrawl {
    /// Documents read from this crawl's inputs (docs.csv's rows whose
    /// `missing_for` is 0) ...
    pub documents: u64,
    /// ... of which empty.
    pub empty_documents: u64,
    /// Lost or orphaned pages the analysis keeps, not counted above.
    pub kept_missing: u64,
    /// Non-empty documents of this crawl with an exact copy in the
    /// analysis, and in percent of its non-empty documents.
    pub exact_copies: u64,
    pub exact_copy_percent: f64,
    /// The same for near-replicas (an exact copy, or a near-replica group
    /// of two or more).
    pub near_replicas: u64,
    pub near_replica_percent: f64,
    /// Documents of this crawl a recrawl could skip keeping one copy of
    /// each exact group, and skipping near-replicas too; in percent of
    /// its documents (the savings' rules).
    pub skippable_exact: u64,
    pub skippable_exact_percent: f64,
    pub skippable_near: u64,
    pub skippable_near_percent: f64,
}

super::measured!(ReportStats);
