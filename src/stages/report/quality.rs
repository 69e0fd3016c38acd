//! Data quality: what the fingerprint stage made of each input, so that a
//! run that skipped corrupt records does not look as clean as one that
//! read every record. Taken from the fingerprint stage's section of
//! `stats.json`, read into its own type ([`FingerprintStats`]): records,
//! documents, records skipped by reason, corrupt records with their file
//! and offset (the first [`crate::store::stats::CORRUPT_SAMPLES`]), and
//! documents cut at `--max-doc-bytes`.
//!
//! The counts are of the inputs read by this analysis's fingerprint
//! stage; with `--previous`, the documents kept from the previous
//! analysis are not among them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bytes::read::SkipReason;
use crate::store::OutDir;
use crate::store::stats::{CorruptSample, FingerprintStats, InputStats};

/// Inputs report.html lists one by one; stats.json has them all.
pub const INPUTS_SHOWN: usize = 100;

/// The totals, for report.json (`data_quality`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QualitySummary {
    pub inputs: u64,
    /// Inputs skipped whole (empty files, directories).
    pub inputs_skipped: u64,
    /// Inputs with at least one corrupt record.
    pub inputs_with_corrupt_records: u64,
    pub records: u64,
    pub documents: u64,
    /// Records that are not documents, by reason (the reasons met).
    pub skipped_records: BTreeMap<String, u64>,
    pub corrupt_records: u64,
    /// Documents whose text was cut at `--max-doc-bytes`.
    pub capped_documents: u64,
}

/// What report.html shows of the data quality.
#[derive(Clone, Debug, Default)]
pub struct Quality {
    pub summary: QualitySummary,
    /// The inputs listed, in input order: all of them up to
    /// [`INPUTS_SHOWN`], else those with the most corrupt and skipped
    /// records.
    pub inputs: Vec<InputStats>,
    /// The first corrupt records, with file and offset.
    pub corrupt: Vec<CorruptSample>,
}

impl Quality {
    /// Whether anything went wrong in reading: a corrupt record, an
    /// input skipped, a document cut.
    pub fn has_problems(&self) -> bool {
        let s = &self.summary;
        s.corrupt_records > 0 || s.inputs_skipped > 0 || s.capped_documents > 0
    }
}

/// Whether the skip reason named `reason` is damage in the input.
pub fn is_corrupt(reason: &str) -> bool {
    SkipReason::ALL.iter().any(|r| r.name() == reason && r.is_corrupt())
}

/// The data quality of `out`, `None` when stats.json has no fingerprint
/// section.
pub fn read(out: &OutDir) -> anyhow::Result<Option<Quality>> {
    let stats: Option<FingerprintStats> = crate::store::stats::read_section(out)?;
    Ok(stats.map(of))
}

fn of(stats: FingerprintStats) -> Quality {
    let summary = QualitySummary {
        inputs: stats.inputs.len() as u64,
        inputs_skipped: stats.inputs_skipped,
        inputs_with_corrupt_records: stats.inputs.iter().filter(|i| i.corrupt_records > 0).count() as u64,
        records: stats.records,
        documents: stats.documents,
        skipped_records: stats.skipped.into_iter().filter(|&(_, n)| n > 0).collect(),
        corrupt_records: stats.corrupt_records,
        capped_documents: stats.capped_documents,
    };
    let mut inputs: Vec<(usize, InputStats)> = stats.inputs.into_iter().enumerate().collect();
    if inputs.len() > INPUTS_SHOWN {
        let skipped = |i: &InputStats| i.skipped_records.values().sum::<u64>();
        inputs.sort_by(|(x, a), (y, b)| {
            (b.corrupt_records, b.skipped.is_some(), b.capped_documents, skipped(b))
                .cmp(&(a.corrupt_records, a.skipped.is_some(), a.capped_documents, skipped(a)))
                .then(x.cmp(y))
        });
        inputs.truncate(INPUTS_SHOWN);
        inputs.sort_by_key(|&(i, _)| i);
    }
    Quality { summary, inputs: inputs.into_iter().map(|(_, i)| i).collect(), corrupt: stats.corrupt }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_inputs_show_the_damaged_ones_in_input_order() {
        let input = |n: usize, corrupt: u64| InputStats {
            file: format!("in-{n}"),
            records: 10,
            corrupt_records: corrupt,
            ..InputStats::default()
        };
        let mut stats = FingerprintStats {
            inputs: (0..INPUTS_SHOWN + 5).map(|n| input(n, 0)).collect(),
            ..FingerprintStats::default()
        };
        stats.inputs[INPUTS_SHOWN + 3].corrupt_records = 2;
        stats.inputs[INPUTS_SHOWN + 1].skipped = Some("empty_file".into());
        stats.skipped.insert("corrupt_gzip".into(), 2);
        stats.skipped.insert("warc_request".into(), 0);
        let q = of(stats);
        assert_eq!(q.inputs.len(), INPUTS_SHOWN);
        let names: Vec<&str> = q.inputs.iter().map(|i| i.file.as_str()).collect();
        assert_eq!(names[INPUTS_SHOWN - 3..], ["in-97", "in-101", "in-103"]);
        assert_eq!(q.summary.inputs, INPUTS_SHOWN as u64 + 5);
        assert_eq!(q.summary.inputs_with_corrupt_records, 1);
        assert_eq!(q.summary.skipped_records.keys().collect::<Vec<_>>(), ["corrupt_gzip"]);
        assert!(is_corrupt("corrupt_gzip") && is_corrupt("garbage_between_records"));
        assert!(!is_corrupt("warc_request") && !is_corrupt("nonsense"));
    }
}
