//! `stats.json`: what each stage counted, one section per stage. The
//! types of the sections are model types of the store, one file each
//! (`fingerprint.rs`, `exact.rs`, `pairs.rs`, `report.rs`; the exports'
//! `ParquetStats` and `TablesStats` in `store/parquet.rs`), each tied to
//! its stage's entry in the registry by [`Section`]: a stage fills its
//! own, and a later stage or a command reads another's without importing
//! the stage that wrote it. This module files the sections and reads one
//! back into its type.
//!
//! Every field is deterministic for the same inputs and flags except
//! `seconds` and `peak_rss_bytes`, which measure the run itself.

use std::fs;

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::registry::StageName;
use crate::store::{OutDir, write_atomic};

mod exact;
mod fingerprint;
mod pairs;
mod report;

pub(crate) use exact::ExactStats;
pub(crate) use fingerprint::{CORRUPT_SAMPLES, ChainStats, CorruptSample, FingerprintStats, InputStats};
pub use pairs::{AgainstStats, PairsStats};
pub(crate) use pairs::{AutoStats, CoarseStats, DeltaStats, LshStats, PassStats, PrefixStats};
pub(crate) use report::{CurrentCrawl, ReportStats};

/// The type of one stage's section, and the stage it is the section of.
pub(crate) trait Section: Serialize + DeserializeOwned {
    const STAGE: &'static StageName;
}

impl Section for FingerprintStats {
    const STAGE: &'static StageName = &super::registry::FINGERPRINT;
}

impl Section for ExactStats {
    const STAGE: &'static StageName = &super::registry::EXACT;
}

impl Section for PairsStats {
    const STAGE: &'static StageName = &super::registry::PAIRS;
}

impl Section for ReportStats {
    const STAGE: &'static StageName = &super::registry::REPORT;
}

impl Section for super::parquet::ParquetStats {
    const STAGE: &'static StageName = &super::registry::PARQUET;
}

impl Section for super::parquet::TablesStats {
    const STAGE: &'static StageName = &super::registry::PARQUET_TABLES;
}

/// Writes one stage's section into `stats.json`, keeping the earlier ones.
pub(crate) fn write_section<S: Section>(out: &OutDir, section: &S) -> anyhow::Result<()> {
    let stage = S::STAGE;
    let path = out.stats();
    let mut root = match fs::read(&path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        Err(_) => Map::new(),
    };
    for later in stage.later() {
        root.remove(later.name);
    }
    root.insert("overlap_version".into(), Value::String(env!("CARGO_PKG_VERSION").into()));
    root.insert(stage.name.into(), serde_json::to_value(section).context("cannot encode stats")?);
    let mut json = serde_json::to_vec_pretty(&Value::Object(root)).context("cannot encode stats")?;
    json.push(b'\n');
    write_atomic(&path, &json)
}

/// Removes one stage's section from `stats.json`, when it is there: the
/// section of an export whose files a rerun of an earlier stage removed.
pub(crate) fn remove_section(out: &OutDir, stage: &StageName) -> anyhow::Result<()> {
    let path = out.stats();
    let Ok(bytes) = fs::read(&path) else { return Ok(()) };
    let Ok(Value::Object(mut root)) = serde_json::from_slice::<Value>(&bytes) else { return Ok(()) };
    if root.remove(stage.name).is_none() {
        return Ok(());
    }
    let mut json = serde_json::to_vec_pretty(&Value::Object(root)).context("cannot encode stats")?;
    json.push(b'\n');
    write_atomic(&path, &json)
}

/// Reads one stage's section of `stats.json` into its type; `None` when
/// the file or the section is not there (a stage not run, or run by
/// another tool that does not write it).
pub(crate) fn read_section<S: Section>(out: &OutDir) -> anyhow::Result<Option<S>> {
    let stage = S::STAGE.name;
    let path = out.stats();
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut root: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))?;
    match root.get_mut(stage).map(Value::take) {
        None | Some(Value::Null) => Ok(None),
        Some(section) => serde_json::from_value(section).map(Some).with_context(|| {
            format!("{}: the {stage} section is not as this overlap writes it", path.display())
        }),
    }
}

/// A one-line human summary of a stage's work.
pub(crate) trait Summary {
    fn summary(&self) -> String;
}

/// Stats that carry a stage's time and peak memory.
pub(crate) trait Measured {
    fn measured(&mut self, seconds: f64, peak_rss_bytes: Option<u64>);
}

/// Implements [`Measured`] for stats types with `seconds` and
/// `peak_rss_bytes` fields.
macro_rules! measured {
    ($($t:ty),*) => {$(
        impl $crate::store::stats::Measured for $t {
            fn measured(&mut self, seconds: f64, peak_rss_bytes: Option<u64>) {
                self.seconds = seconds;
                self.peak_rss_bytes = peak_rss_bytes;
            }
        }
    )*};
}
pub(crate) use measured;
