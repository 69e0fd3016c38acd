//! `overlap`: how much of a web crawl is copied.
//!
//! The modules follow the pipeline, in the order data flows (after
//! Shivakumar & Garcia-Molina, *Finding near-replicas of documents on the
//! web*, 1998):
//!
//! 1. [`read`]: crawl dumps (WARC, WET, JSONL, page feed) to raw records;
//! 2. [`extract`]: a payload to normalized text lines;
//! 3. [`chunk`]: text to chunk fingerprints;
//! 4. [`store`]: the on-disk FPrint-DocID files and their layout;
//!    [`fingerprint`] is the stage that drives 1-4, and [`export`] copies
//!    its outputs to Parquet for cluster engines ([`export_tables`] copies
//!    every table after the report);
//! 5. [`exact`]: exact-copy groups and their centers;
//! 6. [`pairs`]: the Overlap table, one file per counting method;
//! 7. [`report`]: the crawl audit (replica histogram, savings, groups,
//!    host overlap, URL aliases, per-document flags, report.html);
//!
//! with [`stats`] for what each stage counted, [`cli`] for the command
//! line, [`manual`] for its completion scripts and man pages,
//! [`dedup`] for writing out the documents a recrawl would keep,
//! [`eval`] to measure a run (or another tool's answer) against an exact
//! one, and [`reread`], which reads documents' texts again from their
//! inputs for [`explain`] (what two documents share, chunk by chunk) and
//! for the stop chunks' texts.
//! `ARCHITECTURE.md` maps the stages and the store.
//!
//! The public surface is what the benchmarks and `main` need; the rest is
//! `pub(crate)`. These docs are for the people who work on the code
//! (`cargo doc --document-private-items`), so they link private items.

#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod byteclass;
pub mod chunk;
pub mod cli;
pub(crate) mod dedup;
pub(crate) mod dump;
pub(crate) mod eval;
pub(crate) mod exact;
pub(crate) mod explain;
pub(crate) mod export;
pub(crate) mod export_tables;
pub mod extract;
pub(crate) mod fingerprint;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod fuzzy;
pub mod interrupt;
pub(crate) mod manual;
pub(crate) mod memory;
pub mod pairs;
pub(crate) mod plain_url;
pub mod preset;
pub mod progress;
pub mod read;
pub(crate) mod report;
pub(crate) mod reread;
pub mod store;
pub(crate) mod swar;
#[cfg(test)]
pub(crate) mod testing;
