//! A finished analysis that another one reads, named by a flag
//! (`--previous DIR`, `--against DIR`): found, checked to be a directory
//! holding an analysis whose stages up to one have finished, and keyed by
//! what those stages were made of, so that the reader's own stamps change
//! when it is made again. Each refusal is one line naming the flag and
//! the directory as given; what else the reader needs of it (its chunk
//! spec, its scope, its files) the reader checks.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::registry::StageName;
use super::{Manifest, OutDir};

/// The analysis a flag names.
pub(crate) struct Finished {
    /// Its directory, canonical: the same analysis however it is spelled.
    pub canonical: PathBuf,
    pub out: OutDir,
    pub manifest: Manifest,
    /// The key of its stages up to the one asked for.
    pub key: String,
}

/// The canonical directory `flag` names: one line and an error when it is
/// missing or not a directory.
pub(crate) fn locate(flag: &str, given: &Path) -> anyhow::Result<PathBuf> {
    let canonical = std::fs::canonicalize(given)
        .with_context(|| format!("{flag} {}: no such analysis", given.display()))?;
    if !canonical.is_dir() {
        bail!("{flag} {}: not an analysis (not a directory)", given.display());
    }
    Ok(canonical)
}

/// Opens the analysis at `canonical` (from [`locate`]), refusing one whose
/// stages up to `last` have not all finished.
pub(crate) fn open(
    flag: &str,
    given: &Path,
    canonical: PathBuf,
    last: &'static StageName,
) -> anyhow::Result<Finished> {
    let out = OutDir::new(&canonical);
    let manifest = Manifest::read(&out).with_context(|| format!("{flag} {}", given.display()))?;
    let key = out.analysis_key(last).map_err(|stage| {
        out.unfinished(format!(
            "{flag} {} is an incomplete analysis: its {stage} stage has not finished \
             (run `overlap run` into it first)",
            given.display()
        ))
    })?;
    Ok(Finished { canonical, out, manifest, key })
}
