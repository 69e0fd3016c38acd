//! `--level against`: the pages of an analysis made with `--against
//! REF_DIR` that the reference does not hold (`against.csv`'s `held`), and
//! for `--format skip` the skip list of those it holds, each naming the
//! reference page it shares most with.

use anyhow::bail;

use super::{DedupStats, HELD, KEPT};
use crate::base::progress::Progress;
use crate::store::OutDir;
use crate::store::against::for_each_row;
use crate::store::analysis::documents::Docs;
use crate::store::destination::Destination;

/// Each row's stand-in: [`KEPT`], or [`HELD`] for a page the reference
/// holds.
pub(super) fn stand_ins(out: &OutDir, docs: &Docs) -> anyhow::Result<Vec<u32>> {
    if !out.against().is_file() {
        bail!(
            "--level against needs an analysis counted against a reference: {} has no against.csv \
             (run `overlap run ... --against REF_DIR`)",
            out.root().display()
        );
    }
    let mut stand_in = Vec::with_capacity(docs.len());
    for_each_row(&out.against(), |row| {
        stand_in.push(if row.held { HELD } else { KEPT });
        Ok(())
    })?;
    if stand_in.len() != docs.len() {
        bail!(
            "{} has {} rows and docs.csv {}: the analysis is damaged",
            out.against().display(),
            stand_in.len(),
            docs.len()
        );
    }
    Ok(stand_in)
}

/// Writes the skip list of the pages the reference holds: `url,kept_url,
/// why,rule` as `--format skip` writes it at the other levels, `kept_url`
/// the reference page, `why` `exact` or `near`, `rule` `against`. Returns
/// its rows.
pub(super) fn write_skip(
    out: &OutDir,
    dest: &Destination,
    stats: &mut DedupStats,
    progress: &Progress,
) -> anyhow::Result<u64> {
    let mut sink = dest.open()?;
    sink.write(super::skip::HEADER)?;
    let bar = progress.items("dedup", stats.documents, "documents");
    let mut rows = 0;
    for_each_row(&out.against(), |row| {
        bar.inc(1);
        if !row.held {
            return Ok(());
        }
        if row.url.is_empty() {
            stats.no_url += 1;
            return Ok(());
        }
        let kept_url = row.best.as_ref().map_or("", |m| m.ref_url.as_str());
        let why = if row.exact { "exact" } else { "near" };
        sink.write(super::skip::line(&row.url, kept_url, why, "against").as_bytes())?;
        rows += 1;
        Ok(())
    })?;
    bar.finish_and_clear();
    stats.bytes = sink.finish()?;
    Ok(rows)
}
