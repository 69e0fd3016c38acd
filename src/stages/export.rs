//! The Parquet export of the fingerprint stage's outputs
//! (`--format parquet` on `fingerprint` and `run`), for engines that scale
//! past one machine: `parquet/postings.parquet` and
//! `parquet/fingerprint-docs.parquet`, which the Spark job reads.
//!
//! A stage of its own, chained on the fingerprint stage's stamp, so that
//! `src/stages/fingerprint/mod.rs` does not know about Parquet, a re-run with the same
//! inputs skips the export too, and a run without `--format parquet` is the
//! same as before. The layout is documented in [`crate::store::parquet`].

use crate::base::progress::{Progress, count};
use crate::store::OutDir;
use crate::store::parquet::{self, FINGERPRINT_EXPORT, LAYOUT, ParquetStats};
use crate::store::stage::{Outcome, Stage};
use crate::store::stats::Summary;

/// Writes `parquet/postings.parquet` and `parquet/fingerprint-docs.parquet`,
/// unless they are up to date with the fingerprint stage's outputs.
pub fn run(out: &OutDir, progress: &Progress) -> anyhow::Result<Outcome<ParquetStats>> {
    let key = Stage::chained_key(out, FINGERPRINT_EXPORT.stage, &[LAYOUT])?;
    let Some(stage) = Stage::begin(out, FINGERPRINT_EXPORT.stage, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    let mut stats = ParquetStats::default();
    let files = parquet::write(out, &mut stats)?;
    stage.finish(&mut stats, &files)?;
    Ok(Outcome::Ran(stats))
}

crate::store::stats::measured!(ParquetStats);

impl Summary for ParquetStats {
    fn summary(&self) -> String {
        format!(
            "parquet: {} ({}), {} ({}) in {:.1} s",
            count(self.postings, "posting", "postings"),
            count(self.postings_bytes, "byte", "bytes"),
            count(self.documents, "document", "documents"),
            count(self.docs_bytes, "byte", "bytes"),
            self.seconds
        )
    }
}
