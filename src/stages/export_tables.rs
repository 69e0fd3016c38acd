//! The Parquet export of every CSV table of an analysis (`--format
//! parquet` on `report` and `run`): `parquet/NAME.parquet` beside each
//! `NAME.csv`, with the columns' types declared in
//! [`crate::store::parquet_tables`].
//!
//! A stage of its own, chained on the report's stamp (whose key holds
//! every earlier stage's), so that it is skipped when up to date and
//! removed when any stage whose tables it copies runs again
//! ([`crate::store::stage::remove_copies_of`]).

use crate::base::progress::{Progress, count};
use crate::store::OutDir;
use crate::store::parquet::{self, LAYOUT, TABLES_EXPORT, TablesStats};
use crate::store::stage::{Outcome, Stage};
use crate::store::stats::Summary;

/// Writes `parquet/NAME.parquet` for every CSV table, unless they are up
/// to date with the report's outputs.
pub fn run(out: &OutDir, progress: &Progress) -> anyhow::Result<Outcome<TablesStats>> {
    let key = Stage::chained_key(out, TABLES_EXPORT.stage, &[LAYOUT])?;
    let Some(stage) = Stage::begin(out, TABLES_EXPORT.stage, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    let mut stats = TablesStats::default();
    // A table that cannot be copied leaves none of the others: the
    // export is there whole, stamped, or not at all.
    let files = match parquet::write_tables(out, &mut stats) {
        Ok(files) => files,
        Err(e) => {
            parquet::remove_export(out, &TABLES_EXPORT)?;
            return Err(e);
        }
    };
    stage.finish(&mut stats, &files)?;
    Ok(Outcome::Ran(stats))
}

crate::store::stats::measured!(TablesStats);

impl Summary for TablesStats {
    fn summary(&self) -> String {
        format!(
            "parquet-tables: {}, {} ({}) in {:.1} s",
            count(self.tables.len() as u64, "table", "tables"),
            count(self.rows, "row", "rows"),
            count(self.bytes, "byte", "bytes"),
            self.seconds
        )
    }
}
