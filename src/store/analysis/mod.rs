//! The read-only view of a finished analysis, which the report stage and
//! the commands over an analysis (`dedup`, `eval`) share: the documents
//! with their exact groups, hosts and URLs as docs.csv gives them
//! ([`documents`], each row's host held by [`host_column`] and named by
//! [`host_names`]), the Overlap table's components in one pass
//! ([`links`], over [`union_find`]), and the recrawl rule that decides
//! which page stands for its replicas ([`savings`]), also under a
//! `--keep` rule ([`keep`], [`kept`]). One implementation,
//! so that what `dedup` writes is what report.json counts, and `eval`'s
//! clusters are the report's groups.
//!
//! Nothing here writes: the tables are the store's owners' (`store::docs`,
//! `store::overlap`), and this view only reads them.

pub(crate) mod documents;
pub(crate) mod host_column;
pub(crate) mod host_names;
pub(crate) mod keep;
pub(crate) mod kept;
pub(crate) mod links;
pub(crate) mod savings;
pub(crate) mod union_find;

/// `part` of `whole` in percent, rounded to four decimals so that
/// report.json reads well and stays byte-identical; 0 when `whole` is 0.
pub(crate) fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 100.0 / whole as f64 * 10_000.0).round() / 10_000.0
}
