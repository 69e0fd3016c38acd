//! Warnings that the analysis is likely to miss replication, from the
//! figures the pairs stage keeps in its section of `stats.json`: documents
//! too short to reach the criterion (the paper's `lines:4` with T = 15 needs
//! 60 lines before a page can have a near-replica at all), and the share
//! of the crawl's chunks that `--max-df` leaves out as stop chunks.

use crate::store::OutDir;
use crate::store::stats::PairsStats;

/// From this share of the documents too short to be in any pair, the
/// report warns.
const TOO_SHORT_SHARE: f64 = 0.2;

/// From this share of the chunks in stop chunks, the report warns.
const STOP_SHARE: f64 = 0.25;

/// The warnings of the analysis in `out`, each one sentence (none where
/// stats.json has no pairs section).
pub fn read(out: &OutDir) -> anyhow::Result<Vec<String>> {
    let stats: Option<PairsStats> = crate::store::stats::read_section(out)?;
    Ok(stats.map(|s| of(&s)).unwrap_or_default())
}

fn of(s: &PairsStats) -> Vec<String> {
    let mut warnings = Vec::new();
    let share = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
    let short = share(s.too_short_documents, s.counted_documents);
    if short >= TOO_SHORT_SHARE {
        let own = match (&s.template, s.max_df) {
            (None, None) => "",
            _ => " of their own (template and stop chunks left out)",
        };
        let hint = if s.template.is_none() && s.jaccard.is_none() && s.containment.is_none() {
            "; the default preset compares pages as sets of lines by Jaccard and containment, which any page \
             with a line of its own can reach"
        } else {
            ""
        };
        warnings.push(format!(
            "{:.1}% of the distinct texts ({} of {}, exact copies counted once) can never be near-replicas: \
             they have fewer than T = {} chunks{own}{hint}",
            100.0 * short,
            s.too_short_documents,
            s.counted_documents,
            s.threshold,
        ));
    }
    let stop = share(s.stop_chunk_records, s.counted_records);
    if let (Some(m), true) = (s.max_df, stop >= STOP_SHARE) {
        warnings.push(format!(
            "{:.1}% of the crawl's chunks are stop chunks (in more than {m} documents, --max-df), left out of \
             every comparison: a page copied onto more than {m} hosts is not found",
            100.0 * stop
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_from_the_shares_and_says_why() {
        let paper = PairsStats {
            threshold: 15,
            counted_documents: 331,
            too_short_documents: 273,
            ..Default::default()
        };
        let w = of(&paper);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("82.5% of the distinct texts (273 of 331, exact copies"), "{}", w[0]);
        assert!(w[0].contains("the default preset compares pages as sets of lines"), "{}", w[0]);
        let fine = PairsStats {
            threshold: 1,
            counted_documents: 331,
            too_short_documents: 60,
            ..Default::default()
        };
        assert!(of(&fine).is_empty());
        let stops = PairsStats {
            max_df: Some(50),
            counted_records: 1000,
            stop_chunk_records: 400,
            counted_documents: 10,
            ..Default::default()
        };
        let w = of(&stops);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("40.0% of the crawl's chunks are stop chunks (in more than 50 documents"),
            "{}",
            w[0]
        );
    }
}
