//! What every stage does around its work: skip when up to date, measure
//! time and peak memory, record stats, stamp its outputs.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::bail;

use super::integrity::{self, RecordFiles};
use super::registry::StageName;
use super::stats::{self, Measured, Section};
use super::{Manifest, OutDir, StageKey, Stamp, parquet};
use crate::base::memory;
use crate::base::progress::Progress;
use crate::store;

/// Whether a stage ran or found its outputs up to date.
#[derive(Debug)]
pub enum Outcome<S> {
    Ran(S),
    UpToDate,
}

/// A stage in progress.
pub struct Stage<'a> {
    out: &'a OutDir,
    stage: &'static StageName,
    key: String,
    started: Instant,
    /// The record files the manifest recorded when the stage began, for
    /// those of the other stages to stay recorded when this one writes the
    /// manifest whole (the fingerprint stage).
    record_files: RecordFiles,
}

impl<'a> Stage<'a> {
    /// Starts `stage` with `key` (from [`StageKey`]), or returns `None`
    /// when its stamp says the outputs are up to date. The old stamp is
    /// removed first, so a run killed from here on redoes the stage, and so
    /// are the stamps of the later stages it clears (see
    /// [`StageName::clears`]) and the Parquet exports that copy its tables,
    /// files, stamp and `stats.json` section.
    /// `progress` is not told of an up-to-date stage: the command prints
    /// its stored summary instead (`cli::report`).
    pub fn begin(
        out: &'a OutDir,
        stage: &'static StageName,
        key: String,
        _progress: &Progress,
    ) -> anyhow::Result<Option<Self>> {
        let name = stage.name;
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
        for later in stage.clears {
            Stamp::remove(&out.stamp(later.name))?;
        }
        remove_copies_of(out, stage)?;
        memory::reset_peak_rss();
        Ok(Some(Stage { out, stage, key, started: Instant::now(), record_files }))
    }

    /// The key of `stage` computed from the stage it follows (whose stamp
    /// must exist) and the flags that change its own output.
    pub fn chained_key(out: &OutDir, stage: &StageName, flags: &[&str]) -> anyhow::Result<String> {
        let upstream = stage.after.expect("the first stage has no stage before it").name;
        let Some(stamp) = Stamp::read(&out.stamp(upstream)) else {
            bail!(
                "{} has no complete '{upstream}' stage: run `overlap {upstream}` (or `overlap run`) first",
                out.root().display()
            );
        };
        let mut key = StageKey::new(stage.name);
        key.add(&stamp.key);
        for f in flags {
            key.add(f);
        }
        Ok(key.finish())
    }

    /// A fresh scratch directory for this stage's spill files.
    pub fn scratch(&self) -> anyhow::Result<PathBuf> {
        self.out.scratch(self.stage.name)
    }

    /// Records time and peak memory in `stats`, writes its stats.json
    /// section and stamps `outputs`.
    pub fn finish<S: Section + Measured>(self, stats: &mut S, outputs: &[PathBuf]) -> anyhow::Result<()> {
        debug_assert_eq!(S::STAGE, self.stage, "a stage writes its own stats.json section");
        stats.measured(self.started.elapsed().as_secs_f64(), memory::peak_rss());
        // Scratch goes before the stamp: a run killed after the stamp must
        // not leave scratch space that no later run removes.
        store::remove_dir_if_exists(&self.out.scratch_path(self.stage.name))?;
        stats::write_section(self.out, stats)?;
        self.record(outputs)?;
        Stamp {
            stage: self.stage.name.into(),
            key: self.key.clone(),
            outputs: store::relative(self.out.root(), outputs),
        }
        .write(&self.out.stamp(self.stage.name))
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
        integrity::record(self.out, self.stage.name, outputs, &mut files)?;
        manifest.record_files = files;
        manifest.write(self.out)
    }
}

/// Removes the Parquet exports that copy `stage`'s tables (their files,
/// stamps and `stats.json` sections), before `stage` rewrites them: a copy
/// never outlives the table it was made from, whether or not the command
/// exports again.
pub(crate) fn remove_copies_of(out: &OutDir, stage: &StageName) -> anyhow::Result<()> {
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
        let _ = store::remove_dir_if_exists(&self.out.scratch_path(self.stage.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_stage_leaves_no_scratch_and_no_stamp() {
        use super::super::registry::EXACT;
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        out.create().unwrap();
        let progress = Progress::silent();
        {
            let stage = Stage::begin(&out, &EXACT, "k".into(), &progress).unwrap().unwrap();
            let scratch = stage.scratch().unwrap();
            std::fs::write(scratch.join("run"), b"spilled").unwrap();
            // The stage fails here: dropped without finish.
        }
        assert!(!out.scratch_path("exact").exists());
        assert!(Stamp::read(&out.stamp("exact")).is_none());
        // A finished stage is up to date next time.
        let mut stats = stats::ExactStats::default();
        Stage::begin(&out, &EXACT, "k".into(), &progress).unwrap().unwrap().finish(&mut stats, &[]).unwrap();
        assert!(Stage::begin(&out, &EXACT, "k".into(), &progress).unwrap().is_none());
        assert!(Stage::begin(&out, &EXACT, "other".into(), &progress).unwrap().is_some());
    }

    #[test]
    fn a_stage_that_runs_clears_the_stamps_of_the_stages_that_fill_in_its_tables() {
        use super::super::registry::{EXACT, REPORT};
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        out.create().unwrap();
        let progress = Progress::silent();
        let stamp = |stage: &str| Stamp { stage: stage.into(), key: "k".into(), outputs: Vec::new() };
        stamp("report").write(&out.stamp("report")).unwrap();
        assert!(Stamp::read(&out.stamp("report")).is_some());
        let mut stats = stats::ExactStats::default();
        Stage::begin(&out, &EXACT, "k".into(), &progress).unwrap().unwrap().finish(&mut stats, &[]).unwrap();
        assert!(Stamp::read(&out.stamp(REPORT.name)).is_none(), "the report fills in docs.csv's near_group");
        // Up to date, the stage rewrites nothing and clears nothing.
        stamp("report").write(&out.stamp("report")).unwrap();
        assert!(Stage::begin(&out, &EXACT, "k".into(), &progress).unwrap().is_none());
        assert!(Stamp::read(&out.stamp(REPORT.name)).is_some());
    }

    #[test]
    fn free_space_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(store::free_space(dir.path()).is_some_and(|n| n > 0));
    }
}
