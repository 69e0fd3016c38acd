//! Sort-based counting, the paper's section 2.1: emit a docID pair for every
//! two documents that share a fingerprint (the DocID-DocID file), sort the
//! pairs so equal ones are adjacent, count each run, keep F >= T.
//!
//! The DocID-DocID file is never held whole: it goes through
//! [`aggregate`]'s spilled, collapsed runs. The pairs that share one or two
//! fingerprints are what this method cannot avoid materializing, which is
//! why coarse counting exists.

use super::aggregate;
use super::{CountInput, CountingMethod, Overlap};
use crate::stats::PairsStats;

/// The paper's sort-based method.
pub struct SortCounting;

impl CountingMethod for SortCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let runs = aggregate::RunDir::new(input.scratch);
        let spilled = aggregate::spill_pairs(input, &runs, "pairs", |_| true)?;
        spilled.groups.fill(stats);
        stats.distinct_pairs = aggregate::reduce(spilled.runs, input.memory, input.threshold, &runs, emit)?;
        stats.spill_bytes = runs.bytes();
        Ok(())
    }
}
