//! The exact stage's section of `stats.json`.

use serde::{Deserialize, Serialize};

use super::Summary;
use crate::base::progress::count;
/// The exact stage's section of `stats.json`.
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
    /// With `--scope host` or `site`: the hosts or sites copies were looked
    /// for in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<u64>,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

impl Summary for ExactStats {
    fn summary(&self) -> String {
        format!(
            "exact: {} of exact copies, {} removed, in {:.1} s",
            count(self.groups, "group", "groups"),
            count(self.copies_removed, "copy", "copies"),
            self.seconds
        )
    }
}

super::measured!(ExactStats);
