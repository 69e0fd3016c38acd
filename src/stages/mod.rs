//! The stages of an analysis, in the order data flows: [`fingerprint`]
//! (reading, extraction and chunking in parallel, to the FPrint-DocID
//! partitions), [`exact`] (exact-copy groups and their centers), [`pairs`]
//! (the Overlap table) and [`report`] (the crawl audit), and the Parquet
//! exports of their tables ([`export`] after the fingerprint stage,
//! [`export_tables`] after the report). Each reads what the stages before
//! it wrote and writes its own tables, through the store only: no stage
//! imports another (`tests/layers.rs`).

pub(crate) mod exact;
pub(crate) mod export;
pub(crate) mod export_tables;
pub(crate) mod fingerprint;
pub mod pairs;
pub(crate) mod report;
