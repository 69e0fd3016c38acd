//! Runs side by side: the paper's Figure 1 shows one chart for several
//! chunkings of the same crawl. `overlap report DIR --compare OTHER...`
//! adds the near-replica histogram and savings of other output
//! directories, each holding its own report over the same inputs, to this
//! report.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use crate::store::analysis::savings::Skippable;
use crate::store::{Manifest, OutDir, Stamp};

/// One run's near-replica figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub chunk: String,
    pub threshold: u32,
    /// The pairs' criterion in words (`F >= 15`); a report.json written
    /// before the key existed had T alone.
    #[serde(default)]
    pub criterion: String,
    pub near: Histogram,
    pub near_replicated_percent: f64,
    pub savings_near: Skippable,
}

/// The parts of another run's report.json that are compared.
#[derive(Deserialize)]
struct OtherReport {
    chunk: String,
    threshold: u32,
    #[serde(default)]
    criterion: Option<String>,
    documents: u64,
    histogram: OtherHistogram,
    savings: OtherSavings,
}

#[derive(Deserialize)]
struct OtherHistogram {
    near: Histogram,
    near_replicated_percent: f64,
}

#[derive(Deserialize)]
struct OtherSavings {
    near: Skippable,
}

/// The stamp key of another directory's report, which this report's key
/// includes so that it is redone when that report changes.
pub fn key_of(dir: &Path) -> anyhow::Result<String> {
    let out = OutDir::new(dir);
    match Stamp::read(&out.stamp(crate::store::registry::REPORT.name)) {
        Some(stamp) => Ok(stamp.key),
        None => {
            bail!("{} has no complete report: run `overlap report {}` first", dir.display(), dir.display())
        }
    }
}

/// Reads the runs of `dirs`, checking that they are over the same inputs
/// as `ours` (the same files by identity, however spelled, and the same
/// number of documents).
pub fn load(ours: &Manifest, out: &OutDir, documents: u64, dirs: &[PathBuf]) -> anyhow::Result<Vec<Run>> {
    let mut runs = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let other = OutDir::new(dir);
        let path = other.report_json();
        let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let r: OtherReport = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a report.json", path.display()))?;
        if !Manifest::read(&other)?.same_inputs(ours) || r.documents != documents {
            bail!(
                "{} is a run over other inputs than {}: runs compared must read the same crawl",
                dir.display(),
                out.root().display()
            );
        }
        runs.push(Run {
            chunk: r.chunk,
            threshold: r.threshold,
            criterion: r.criterion.unwrap_or_else(|| format!("F >= {}", r.threshold)),
            near: r.histogram.near,
            near_replicated_percent: r.histogram.near_replicated_percent,
            savings_near: r.savings.near,
        });
    }
    Ok(runs)
}
