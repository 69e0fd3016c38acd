//! The stages an analysis is made of, registered in one place: each
//! stage's name (its stamp, its scratch directory, its `stats.json`
//! section), the stage its key is chained from, and the later stages whose
//! stamps it clears when it runs because it rewrites a table they fill in.
//! A stage names itself and the stages it depends on through this registry,
//! never through another stage's module; the type of each stage's
//! `stats.json` section is tied to its entry by [`super::stats::Section`].

use std::fmt;

/// One stage of an analysis, or an export that copies its tables.
pub(crate) struct StageName {
    /// The stage's name: `fingerprint.stamp`, `scratch/fingerprint/`, the
    /// `fingerprint` section of `stats.json`, `overlap fingerprint`.
    pub name: &'static str,
    /// The stage whose stamp this one's key is chained from: it must have
    /// finished first.
    pub after: Option<&'static StageName>,
    /// Later stages that fill in a table this one writes anew, so that
    /// their stamps must go whenever this one runs, even when their keys do
    /// not change: `docs.csv`'s `near_group`, which the exact stage writes
    /// empty, a pairs stage that runs empties, and the report fills in (see
    /// `store::docs`).
    pub clears: &'static [&'static StageName],
}

pub(crate) static FINGERPRINT: StageName = StageName { name: "fingerprint", after: None, clears: &[] };
pub(crate) static EXACT: StageName =
    StageName { name: "exact", after: Some(&FINGERPRINT), clears: &[&REPORT] };
pub(crate) static PAIRS: StageName = StageName { name: "pairs", after: Some(&EXACT), clears: &[&REPORT] };
pub(crate) static REPORT: StageName = StageName { name: "report", after: Some(&PAIRS), clears: &[] };

/// The Parquet copy of the fingerprint stage's outputs (`--format
/// parquet`), and of every table after the report: exports, each a stage
/// of its own (`store::parquet::Export`).
pub(crate) static PARQUET: StageName = StageName { name: "parquet", after: Some(&FINGERPRINT), clears: &[] };
pub(crate) static PARQUET_TABLES: StageName =
    StageName { name: "parquet-tables", after: Some(&REPORT), clears: &[] };

/// The stages of an analysis in the order data flows; writing one's
/// `stats.json` section removes the later ones', which its rerun makes
/// stale.
pub(crate) static ANALYSIS: [&StageName; 4] = [&FINGERPRINT, &EXACT, &PAIRS, &REPORT];

impl StageName {
    /// The stages an analysis through this one is made of, first to last:
    /// `[fingerprint, exact]` for [`EXACT`].
    pub(crate) fn chain(&'static self) -> Vec<&'static StageName> {
        let mut chain = vec![self];
        while let Some(before) = chain.last().and_then(|s| s.after) {
            chain.push(before);
        }
        chain.reverse();
        chain
    }

    /// The analysis stages that come after this one.
    pub(crate) fn later(&self) -> &'static [&'static StageName] {
        match ANALYSIS.iter().position(|s| *s == self) {
            Some(pos) => &ANALYSIS[pos + 1..],
            None => &[],
        }
    }
}

/// Stages are the same when their names are: the entries refer to each
/// other, so a derived comparison would never end.
impl PartialEq for StageName {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for StageName {}

impl fmt::Debug for StageName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for StageName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_run_back_to_the_fingerprint_stage_in_the_order_data_flows() {
        assert_eq!(FINGERPRINT.chain(), [&FINGERPRINT]);
        assert_eq!(PAIRS.chain(), [&FINGERPRINT, &EXACT, &PAIRS]);
        assert_eq!(REPORT.chain(), ANALYSIS);
        assert_eq!(PARQUET_TABLES.chain()[..4], ANALYSIS);
        assert_eq!(EXACT.later(), [&PAIRS, &REPORT]);
        assert!(PARQUET.later().is_empty());
    }

    #[test]
    fn a_stage_clears_only_later_stages() {
        for stage in [&FINGERPRINT, &EXACT, &PAIRS, &REPORT, &PARQUET, &PARQUET_TABLES] {
            for cleared in stage.clears {
                assert!(stage.later().contains(cleared), "{stage} clears {cleared}, which is not later");
            }
        }
    }
}
