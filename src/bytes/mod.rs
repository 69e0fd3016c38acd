//! The byte layer: crawl dumps to records ([`read`]), a record's payload
//! to normalized text lines ([`extract`]), text to chunk fingerprints
//! ([`chunk`]) and to the fuzzy signature of its words ([`fuzzy`]), URLs
//! cut into their parts ([`plain_url`]), the byte scans that extraction
//! and the signature share ([`scan`]), and the WARC revisit record and the
//! response it stands for, each made from the other ([`revisit`]). It knows nothing of an analysis:
//! the store and the stages are built on it.

pub mod chunk;
pub mod extract;
pub mod fuzzy;
pub(crate) mod plain_url;
pub mod read;
pub(crate) mod revisit;
pub(crate) mod scan;
