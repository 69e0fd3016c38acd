//! What every stage does around its work: skip when up to date, measure
//! time and peak memory, record stats, stamp its outputs.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::bail;
use serde::Serialize;

use crate::memory;
use crate::progress::Progress;
use crate::stats::{self, Measured};
use crate::store::integrity::{self, RecordFiles};
use crate::store::{self, Manifest, OutDir, StageKey, Stamp, parquet};

/// Whether a stage ran or found its outputs up to date.
#[derive(Debug)]
pub enum Outcome<S> {
    Ran(S),
    UpToDate,
}

/// A stage in progress.
pub struct Stage<'a> {
    out: &'a OutDir,
    name: &'static str,
    key: String,
    started: Instant,
    /// The record files the manifest recorded when the stage began, for
    /// those of the other stages to stay recorded when this one writes the
    /// manifest whole (the fingerprint stage).
    record_files: RecordFiles,
}

impl<'a> Stage<'a> {
    /// Starts stage `name` with `key` (from [`StageKey`]), or returns
    /// `None` when its stamp says the outputs are up to date. The old stamp is removed first, so a run killed from here
    /// on redoes the stage, and so are the Parquet exports that copy its
    /// tables, files, stamp and `stats.json` section.
    /// `progress` is not told of an up-to-date stage: the command prints
    /// its stored summary instead (`cli::report`).
    pub fn begin(
        out: &'a OutDir,
        name: &'static str,
        key: String,
        _progress: &Progress,
    ) -> anyhow::Result<Option<Self>> {
        let stamp_path = out.stamp(name);
        // Up to date only with a manifest that passes its checks, and this
        // stage's record files there with their recorded lengths: one gone
        // or of another length is written anew, as a missing output is.
        // (Their checksums are checked where they are read: reading every
        // partition to find that nothing needs doing would cost what
        // counting them costs.)
        let record_files = if Stamp::read(&stamp_path).is_some_and(|s| s.holds(&key, out.root())) {
            let record_files = match out.manifest().exists() {
                true => Manifest::read(out)?.record_files,
                false => RecordFiles::new(),
            };
            if integrity::present(out, name, &record_files) {
                return Ok(None);
            }
            record_files
        } else {
            Manifest::read_unchecked(out).map(|m| m.record_files).unwrap_or_default()
        };
        Stamp::remove(&stamp_path)?;
        remove_copies_of(out, name)?;
        memory::reset_peak_rss();
        Ok(Some(Stage { out, name, key, started: Instant::now(), record_files }))
    }

    /// The key of a stage computed from the stage before it (whose stamp
    /// must exist) and the flags that change its own output.
    pub fn chained_key(out: &OutDir, name: &str, upstream: &str, flags: &[&str]) -> anyhow::Result<String> {
        let Some(stamp) = Stamp::read(&out.stamp(upstream)) else {
            bail!(
                "{} has no complete '{upstream}' stage: run `overlap {upstream}` (or `overlap run`) first",
                out.root().display()
            );
        };
        let mut key = StageKey::new(name);
        key.add(&stamp.key);
        for f in flags {
            key.add(f);
        }
        Ok(key.finish())
    }

    /// A fresh scratch directory for this stage's spill files.
    pub fn scratch(&self) -> anyhow::Result<PathBuf> {
        self.out.scratch(self.name)
    }

    /// Records time and peak memory in `stats`, writes its stats.json
    /// section and stamps `outputs`.
    pub fn finish<S: Serialize + Measured>(self, stats: &mut S, outputs: &[PathBuf]) -> anyhow::Result<()> {
        stats.measured(self.started.elapsed().as_secs_f64(), memory::peak_rss());
        // Scratch goes before the stamp: a run killed after the stamp must
        // not leave scratch space that no later run removes.
        store::remove_dir_if_exists(&self.out.scratch_path(self.name))?;
        stats::write_section(self.out, self.name, stats)?;
        self.record(outputs)?;
        Stamp {
            stage: self.name.into(),
            key: self.key.clone(),
            outputs: store::relative(self.out.root(), outputs),
        }
        .write(&self.out.stamp(self.name))
    }
}

impl Stage<'_> {
    /// Records the checksums of the record files among `outputs` in the
    /// manifest, in place of this stage's earlier ones.
    fn record(&self, outputs: &[PathBuf]) -> anyhow::Result<()> {
        if !outputs.iter().any(|p| p.extension().is_some_and(|e| e == "fpd")) {
            return Ok(());
        }
        let mut manifest = Manifest::read_unchecked(self.out)?;
        let mut files = std::mem::take(&mut manifest.record_files);
        for (name, file) in &self.record_files {
            files.entry(name.clone()).or_insert_with(|| file.clone());
        }
        integrity::record(self.out, self.name, outputs, &mut files)?;
        manifest.record_files = files;
        manifest.write(self.out)
    }
}

/// Removes the Parquet exports that copy `stage`'s tables (their files,
/// stamps and `stats.json` sections), before `stage` rewrites them: a copy
/// never outlives the table it was made from, whether or not the command
/// exports again.
pub(crate) fn remove_copies_of(out: &OutDir, stage: &str) -> anyhow::Result<()> {
    for export in parquet::exports_following(stage) {
        parquet::remove_export(out, export)?;
        stats::remove_section(out, export.stage)?;
    }
    Ok(())
}

impl Drop for Stage<'_> {
    /// Scratch space goes when the stage ends, whether it finished or
    /// failed: a failed sort must not leave gigabytes of runs behind. (A
    /// killed run's leftovers are removed when the stage starts again.)
    fn drop(&mut self) {
        let _ = store::remove_dir_if_exists(&self.out.scratch_path(self.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_stage_leaves_no_scratch_and_no_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        out.create().unwrap();
        let progress = Progress::silent();
        {
            let stage = Stage::begin(&out, "x", "k".into(), &progress).unwrap().unwrap();
            let scratch = stage.scratch().unwrap();
            std::fs::write(scratch.join("run"), b"spilled").unwrap();
            // The stage fails here: dropped without finish.
        }
        assert!(!out.scratch_path("x").exists());
        assert!(Stamp::read(&out.stamp("x")).is_none());
        // A finished stage is up to date next time.
        let mut stats = crate::exact::ExactStats::default();
        Stage::begin(&out, "x", "k".into(), &progress).unwrap().unwrap().finish(&mut stats, &[]).unwrap();
        assert!(Stage::begin(&out, "x", "k".into(), &progress).unwrap().is_none());
        assert!(Stage::begin(&out, "x", "other".into(), &progress).unwrap().is_some());
    }

    #[test]
    fn free_space_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(store::free_space(dir.path()).is_some_and(|n| n > 0));
    }
}
