//! What a count will cost, said before it starts.
//!
//! Sort-based and coarse counting generate a pair instance for every two
//! documents that share a fingerprint, and the fingerprint groups say how
//! many before the first is generated ([`super::pair_instances`]'s scan).
//! Inputs where many documents share many chunks (20,000 pages with the
//! same 60 lines: 12 billion instances) would otherwise spill or count for
//! hours, or until the disk is full, without a word. Above
//! [`LIMIT_SECONDS`] of forecast work, the stage says what is coming, how
//! long and how much scratch space it means, and what bounds it; under
//! `--strict` it refuses instead (exit 2), before writing anything.
//!
//! Prefix filtering generates a candidate for every two documents that
//! share a prefix chunk, and its index (built before counting, in time
//! linear in the lists) says how many, and how many list entries their
//! verification reads at most: the same forecast, from that work.
//! `auto` weighs both before it estimates the distinct candidates (a pass
//! over every candidate instance), so that a count beyond the limit by
//! every method is said, or refused, before that pass.
//!
//! The rates are the release build's on two cores, measured on such an
//! input (2,000 documents sharing 60 lines, 120 million pair instances,
//! `overlap pairs --method sort|coarse`): sort 15 to 19 million instances
//! a second, coarse 13 million. The forecast is an order of magnitude, and
//! says so.

use super::GroupStats;
use crate::base::memory::ByteSize;

/// Forecast seconds above which the stage speaks (or, under `--strict`,
/// refuses): ten minutes of counting.
pub(crate) const LIMIT_SECONDS: u64 = 600;

/// Pair instances a second, by method (see the module's comment).
const SORT_RATE: u64 = 15_000_000;
const COARSE_RATE: u64 = 13_000_000;

/// Bytes of scratch space a pair instance may take in sort's runs, at most
/// (a run record; collapsing equal pairs only makes it less).
const SORT_BYTES: u64 = 12;

/// Prefix filtering's rates, on 2,000 and 4,000 documents sharing 60
/// lines (60 and 240 million candidate instances, `overlap run --method
/// prefix`): 62 million candidate instances a second generated and
/// deduplicated, and 300 million units a second of its whole work
/// (candidate instances plus the list entries verification reads,
/// `PrefixIndex::work`).
const PREFIX_CANDIDATE_RATE: u64 = 60_000_000;
const PREFIX_WORK_RATE: u64 = 300_000_000;

/// The forecast seconds of counting the pair instances of `groups` with
/// `method` (`sort` or `coarse`).
pub(crate) fn seconds(groups: &GroupStats, method: &str) -> u64 {
    groups.pairs / if method == "sort" { SORT_RATE } else { COARSE_RATE }
}

/// The forecast seconds of prefix filtering's `candidates` instances and,
/// when known, its whole `work`; without it, a lower bound.
pub(crate) fn prefix_seconds(candidates: u64, work: Option<u64>) -> u64 {
    (candidates / PREFIX_CANDIDATE_RATE).max(work.map_or(0, |w| w / PREFIX_WORK_RATE))
}

/// The forecast for prefix filtering, as one line, when it passes the
/// limit: `candidates` candidate instances and, when known (the distinct
/// candidates estimated), its whole `work`.
pub(crate) fn prefix(candidates: u64, work: Option<u64>) -> Option<String> {
    let seconds = prefix_seconds(candidates, work);
    if seconds < LIMIT_SECONDS {
        return None;
    }
    let (reads, about) = match work {
        Some(w) => {
            (format!(", and their verification reads {} list entries", w.saturating_sub(candidates)), "about")
        }
        None => (String::new(), "at least"),
    };
    Some(format!(
        "{candidates} candidate pair instances are coming from the prefix index{reads}: {about} {} of counting \
         by --method prefix on two cores; --max-df N leaves out the chunks shared by more than N documents, \
         and a higher --jaccard or --containment shortens the prefixes",
        duration(seconds)
    ))
}

/// The forecast for counting `groups` with `method` (`sort` or `coarse`),
/// as one line, when it passes the limit.
pub(crate) fn forecast(groups: &GroupStats, method: &str, relative: bool) -> Option<String> {
    let p = groups.pairs;
    let disk = match method {
        "sort" => Some(p.saturating_mul(SORT_BYTES)),
        "coarse" => None,
        _ => return None,
    };
    let seconds = seconds(groups, method);
    if seconds < LIMIT_SECONDS {
        return None;
    }
    let space = disk.map_or_else(String::new, |d| format!(" and up to {} of scratch space", ByteSize(d)));
    // Under a relative criterion, `auto` already weighed prefix filtering.
    let criterion = if relative {
        ""
    } else {
        ", and a relative criterion (--jaccard, --containment) lets --method prefix bound the work"
    };
    Some(format!(
        "{p} pair instances are coming from {} chunks shared by two documents or more (the largest by {}): \
         about {} of counting by --method {method} on two cores{space}; --max-df N leaves out the chunks \
         shared by more than N documents{criterion}",
        groups.shared_fingerprints,
        groups.largest_group,
        duration(seconds)
    ))
}

/// `seconds` as a person reads it: minutes or hours.
fn duration(seconds: u64) -> String {
    match seconds {
        s if s < 2 * 3600 => format!("{} minutes", s.div_ceil(60)),
        s if s < 2 * 86_400 => format!("{} hours", s.div_ceil(3600)),
        s => format!("{} days", s.div_ceil(86_400)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(pairs: u64) -> GroupStats {
        GroupStats { fingerprints_removed: 0, shared_fingerprints: 60, largest_group: 20_000, pairs }
    }

    #[test]
    fn speaks_only_above_ten_minutes_of_work() {
        assert_eq!(forecast(&groups(SORT_RATE * LIMIT_SECONDS - 1), "sort", false), None);
        let line = forecast(&groups(12_000_000_000), "sort", false).unwrap();
        assert!(line.starts_with("12000000000 pair instances are coming from 60 chunks"), "{line}");
        assert!(line.contains("(the largest by 20000)"), "{line}");
        assert!(line.contains("about 14 minutes of counting by --method sort"), "{line}");
        assert!(line.contains("up to 134.1 GiB of scratch space"), "{line}");
        assert!(line.contains("--max-df N") && line.contains("--jaccard"), "{line}");
        let relative = forecast(&groups(12_000_000_000), "sort", true).unwrap();
        assert!(!relative.contains("--jaccard"), "{relative}");
        let coarse = forecast(&groups(12_000_000_000), "coarse", false).unwrap();
        assert!(!coarse.contains("scratch"), "{coarse}");
        assert_eq!(forecast(&groups(u64::MAX), "prefix", false), None);
        assert!(forecast(&groups(u64::MAX), "sort", false).unwrap().contains("days"));
    }

    #[test]
    fn prefix_filtering_is_forecast_from_its_work() {
        assert_eq!(prefix(PREFIX_CANDIDATE_RATE * LIMIT_SECONDS - 1, None), None);
        let line = prefix(2_000_000_000, Some(600_000_000_000)).unwrap();
        assert!(
            line.starts_with("2000000000 candidate pair instances are coming from the prefix index"),
            "{line}"
        );
        assert!(line.contains("reads 598000000000 list entries: about 34 minutes"), "{line}");
        assert!(line.contains("--max-df N"), "{line}");
        let bound = prefix(60_000_000_000, None).unwrap();
        assert!(bound.contains("index: at least 17 minutes of counting by --method prefix"), "{bound}");
    }
}
