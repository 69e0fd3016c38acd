//! Sort-based counting, the paper's section 2.1: emit a docID pair for every
//! two documents that share a fingerprint (the DocID-DocID file), sort the
//! pairs so equal ones are adjacent, count each run, keep F >= T.
//!
//! The DocID-DocID file is never held whole: it goes through
//! [`aggregate`]'s spilled, collapsed runs. The pairs that share one or two
//! fingerprints are what this method cannot avoid materializing, which is
//! why coarse counting exists.

use super::PairsStats;
use super::aggregate;
use super::{CountInput, CountingMethod, Overlap, pair_instances};
use crate::base::memory::ByteSize;
use crate::store;

/// The paper's sort-based method.
pub struct SortCounting {
    /// The pair instances the scan will generate, when already counted.
    pub pair_instances: Option<u64>,
}

impl CountingMethod for SortCounting {
    fn count(
        &self,
        input: &CountInput<'_>,
        stats: &mut PairsStats,
        emit: &mut dyn FnMut(Overlap) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let p = match self.pair_instances {
            Some(p) => p,
            None => pair_instances(input)?,
        };
        check_disk(p, input.scratch)?;
        let runs = aggregate::RunDir::new(input.scratch);
        let spilled = aggregate::spill_pairs(input, &runs, "pairs", &aggregate::AllPairs)?;
        spilled.groups.fill(stats);
        stats.distinct_pairs = aggregate::reduce(spilled.runs, input.memory, input.threshold, &runs, emit)?;
        stats.spill_bytes = runs.bytes();
        Ok(())
    }
}

/// Refuses to start when the runs may not fit on the disk: `p` pair
/// instances collapse into at most `p` run records of 12 bytes. Filling the
/// disk halfway through would fail anyway, later, and take the rest of the
/// machine down with it.
fn check_disk(p: u64, scratch: &std::path::Path) -> anyhow::Result<()> {
    let worst = p.saturating_mul(12);
    match store::free_space(scratch) {
        Some(free) if worst > free => anyhow::bail!(
            "the sort method may write up to {} of pair runs ({p} pair instances) under {}, \
             but only {} is free: use --method coarse, or --max-df to leave out stop chunks",
            ByteSize(worst),
            scratch.display(),
            ByteSize(free)
        ),
        _ => Ok(()),
    }
}
