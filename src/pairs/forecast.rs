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
//! The rates are the release build's on two cores, measured on such an
//! input (2,000 documents sharing 60 lines, 120 million pair instances,
//! `overlap pairs --method sort|coarse`): sort 15 to 19 million instances
//! a second, coarse 13 million. The forecast is an order of magnitude, and
//! says so.

use super::GroupStats;
use crate::memory::ByteSize;

/// Forecast seconds above which the stage speaks (or, under `--strict`,
/// refuses): ten minutes of counting.
pub(crate) const LIMIT_SECONDS: u64 = 600;

/// Pair instances a second, by method (see the module's comment).
const SORT_RATE: u64 = 15_000_000;
const COARSE_RATE: u64 = 13_000_000;

/// Bytes of scratch space a pair instance may take in sort's runs, at most
/// (a run record; collapsing equal pairs only makes it less).
const SORT_BYTES: u64 = 12;

/// The forecast for counting `groups` with `method` (`sort` or `coarse`),
/// as one line, when it passes the limit.
pub(crate) fn forecast(groups: &GroupStats, method: &str, relative: bool) -> Option<String> {
    let p = groups.pairs;
    let (rate, disk) = match method {
        "sort" => (SORT_RATE, Some(p.saturating_mul(SORT_BYTES))),
        "coarse" => (COARSE_RATE, None),
        _ => return None,
    };
    let seconds = p / rate;
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
}
