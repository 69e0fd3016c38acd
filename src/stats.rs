//! `stats.json`: what each stage counted, one section per stage. Each
//! stage owns the type of its section (`fingerprint::FingerprintStats`,
//! `exact::ExactStats`, `pairs::PairsStats`, `report::ReportStats`,
//! `store::parquet::ParquetStats` and `TablesStats`); this module only files the sections
//! and reads one back into its owner's type.
//!
//! Every field is deterministic for the same inputs and flags except
//! `seconds` and `peak_rss_bytes`, which measure the run itself.

use std::fs;

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::store::{OutDir, write_atomic};

/// The order of the stage sections; writing one removes the later ones,
/// which a rerun of an earlier stage makes stale.
const STAGES: [&str; 4] = ["fingerprint", "exact", "pairs", "report"];

/// Writes one stage's section into `stats.json`, keeping the earlier ones.
pub(crate) fn write_section<S: Serialize>(out: &OutDir, stage: &str, section: &S) -> anyhow::Result<()> {
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

/// Removes one stage's section from `stats.json`, when it is there: the
/// section of an export whose files a rerun of an earlier stage removed.
pub(crate) fn remove_section(out: &OutDir, stage: &str) -> anyhow::Result<()> {
    let path = out.stats();
    let Ok(bytes) = fs::read(&path) else { return Ok(()) };
    let Ok(Value::Object(mut root)) = serde_json::from_slice::<Value>(&bytes) else { return Ok(()) };
    if root.remove(stage).is_none() {
        return Ok(());
    }
    let mut json = serde_json::to_vec_pretty(&Value::Object(root)).context("cannot encode stats")?;
    json.push(b'\n');
    write_atomic(&path, &json)
}

/// Reads one stage's section of `stats.json` into its owner's type;
/// `None` when the file or the section is not there (a stage not run, or
/// run by another tool that does not write it).
pub(crate) fn read_section<S: DeserializeOwned>(out: &OutDir, stage: &str) -> anyhow::Result<Option<S>> {
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

/// `n` and the noun for it: `1 document`, `2 documents`.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
        impl $crate::stats::Measured for $t {
            fn measured(&mut self, seconds: f64, peak_rss_bytes: Option<u64>) {
                self.seconds = seconds;
                self.peak_rss_bytes = peak_rss_bytes;
            }
        }
    )*};
}
pub(crate) use measured;
