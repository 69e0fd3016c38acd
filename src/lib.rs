//! `overlap`: how much of a web crawl is copied.
//!
//! The modules are the layers of the pipeline, each using only the layers
//! before it (after Shivakumar & Garcia-Molina, *Finding near-replicas of
//! documents on the web*, 1998):
//!
//! 1. [`base`]: what every layer may use (the memory budget, the progress
//!    line, the interrupt flag);
//! 2. [`bytes`]: crawl dumps to records ([`bytes::read`]), a payload to
//!    normalized text lines ([`bytes::extract`]), text to chunk
//!    fingerprints ([`bytes::chunk`]);
//! 3. [`store`]: the output directory, one owner per file (the
//!    FPrint-DocID files, the tables, the manifest, the stamps), the
//!    model types its tables hold, the stage registry
//!    ([`store::registry`]) and the read-only view of a finished analysis
//!    ([`store::analysis`]);
//! 4. [`stages`]: fingerprint, exact, pairs (the Overlap table) and report
//!    (the crawl audit), and the Parquet exports, each talking to the
//!    others only through the store;
//! 5. [`commands`]: what reads a finished analysis (`dedup`, `explain`,
//!    `eval`, `dump`);
//! 6. [`cli`]: the command line, its presets and its manual pages;
//!
//! and `main`, which only runs `cli`. `tests/layers.rs` checks that imports
//! run this way; `ARCHITECTURE.md` maps every folder.
//!
//! The public surface is what the benchmarks and `main` need; the rest is
//! `pub(crate)`. These docs are for the people who work on the code
//! (`cargo doc --document-private-items`), so they link private items.

#![allow(rustdoc::private_intra_doc_links)]

pub mod base;
pub mod bytes;
pub mod cli;
pub(crate) mod commands;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod stages;
pub mod store;
#[cfg(test)]
pub(crate) mod testing;
