//! "Since the previous analysis": what the report records of each document
//! for the next analysis of a chain (`replicas.fpd`), and, in an analysis
//! made with `--previous`, what it compares with the previous one's record
//! (`previous-replicas.fpd`, copied by the fingerprint stage) and the
//! change table (`changes.csv`).
//!
//! Pages are compared through their docIDs, which are their URLs' handles
//! through the chain. "In both analyses" means a non-empty document in
//! each (a page kept while lost or orphaned counts, with its last text).
//! Near-replica groups are matched by the pages they share: a previous
//! group that shares pages with no group now has vanished, with two or
//! more has split; a group now that shares pages with no previous group
//! has appeared, with two or more is a merge; a group matched one to one
//! grew, shrank, kept its members, or changed them at the same size.

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::histogram::percent;
use crate::store::analysis::documents::{Docs, EMPTY};
use crate::store::analysis::kept::Verdicts;
use crate::store::analysis::links::Links;
use crate::store::changes::{Change, ChangeTable, for_each_change};
use crate::store::replicas::{EMPTY_DOC, EXACT_COPY, NO_GROUP, ReplicaRecord, SKIP_EXACT, SKIP_NEAR};
use crate::store::{Header, Mapped, OutDir, RecordWriter};

/// Writes `replicas.fpd`: each row's near-replica group, from the link
/// pass, and its recrawl verdicts.
pub(super) fn write(path: &Path, docs: &Docs, links: &Links, verdicts: &Verdicts<'_>) -> anyhow::Result<()> {
    let mut w = RecordWriter::create(path, Header::new::<ReplicaRecord>("", true, 0, 1))?;
    for row in 0..docs.len() as u32 {
        let empty = docs.center(row) == EMPTY;
        let mut bits = 0;
        if empty {
            bits |= EMPTY_DOC;
        } else {
            if docs.exact_size(row) >= 2 {
                bits |= EXACT_COPY;
            }
            if !verdicts.exact_kept(row) {
                bits |= SKIP_EXACT;
            }
            if !verdicts.near_kept(row) {
                bits |= SKIP_NEAR;
            }
        }
        let group = match links.group_of(docs, row) {
            Some(l) if !empty => docs.doc_id(l),
            _ => NO_GROUP,
        };
        w.push(&ReplicaRecord { doc_id: docs.doc_id(row), group, bits })?;
    }
    w.finish()?;
    Ok(())
}

/// The report.json section `since_previous`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SincePrevious {
    /// The analysis's place in its chain (1 for the first made with
    /// `--previous`).
    pub analysis: u32,
    /// URLs per change class (changes.csv).
    pub pages: PageChanges,
    /// Pages that moved: the first [`MOVES_SHOWN`] in docID order.
    pub moves: Vec<Move>,
    /// How much the modified pages changed.
    pub modified: ModifiedChange,
    /// Pages that were a copy and are now the center of their exact group.
    pub promotions: u64,
    pub exact: Became,
    pub near: Became,
    pub groups: GroupChanges,
    pub recrawl: RecrawlCheck,
    pub rules: &'static str,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PageChanges {
    pub new: u64,
    pub moved: u64,
    pub unchanged: u64,
    pub modified: u64,
    pub lost: u64,
    pub orphaned: u64,
    pub redirected: u64,
    pub returned: u64,
    /// Lost or orphaned pages still in the analysis (`--keep-missing`).
    pub kept_missing: u64,
}

/// Moves listed in report.json and the report; changes.csv has them all.
pub const MOVES_SHOWN: usize = 20;

/// A page that moved: a new URL with the text of a page gone since.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Move {
    pub doc_id: u32,
    pub url: String,
    pub from_doc_id: u32,
    pub from_url: String,
}

/// Modified pages by the share of their previous text's distinct chunks
/// they kept (`chunks_kept / chunks_before` in changes.csv).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModifiedChange {
    /// Modified pages whose previous text had chunks.
    pub measured: u64,
    /// `kept_tenths[i]`: pages that kept at least i tenths of those chunks
    /// and less than i + 1; `[10]` kept them all (and changed by what they
    /// added).
    pub kept_tenths: [u64; 11],
    /// The median share kept, in percent (0 without a measured page).
    pub median_kept_percent: f64,
}

/// Pages in both analyses that gained or lost a replica.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Became {
    /// Had none, have one now.
    pub became: u64,
    /// Had one, have none now.
    pub stopped: u64,
}

/// Near-replica groups (two documents or more), matched by shared pages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroupChanges {
    pub before: u64,
    pub after: u64,
    pub unchanged: u64,
    pub grew: u64,
    pub shrank: u64,
    /// The same size, other members.
    pub changed_members: u64,
    /// Previous groups whose pages are in two or more groups now.
    pub split: u64,
    /// Groups now holding pages of two or more previous groups.
    pub merged: u64,
    pub appeared: u64,
    pub vanished: u64,
}

/// The previous analysis's recrawl advice against what the recrawl found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecrawlCheck {
    /// Keeping one page of each exact group.
    pub exact: Prediction,
    /// Skipping near-replicas too.
    pub near: Prediction,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Prediction {
    /// Pages the previous analysis said a recrawl could skip.
    pub skippable: u64,
    /// Of those, pages the recrawl found unchanged.
    pub unchanged: u64,
    pub unchanged_percent: f64,
}

pub const RULES: &str = "Pages are matched by docID (their URL's handle through the chain). Exact and near: \
pages with a non-empty document in both analyses that have a replica now and had none (became), or had one and \
have none now (stopped). Promotions: pages that were an exact copy and are now the center of their exact group. \
Moved: a URL never seen before with the text of a page whose URL is lost, orphaned or redirected now, the same \
or a near-replica by the criterion over the two texts' distinct chunks. Modified pages are counted by the share of \
their previous text's distinct chunks they kept. Groups are near-replica groups of two or more documents, matched by the pages they share: a previous group sharing \
pages with no group now vanished, with two or more split; a group now sharing pages with no previous group \
appeared, with two or more merged; a one-to-one match grew, shrank, is unchanged, or changed members at the same \
size. Recrawl: pages the previous analysis said a recrawl could skip, and how many of them the recrawl found \
unchanged.";

/// The section, when `out` was carried forward from a previous analysis.
pub(super) fn compare(out: &OutDir, analysis: u32) -> anyhow::Result<SincePrevious> {
    let before = Mapped::<ReplicaRecord>::open(&out.previous_replicas())?;
    let after = Mapped::<ReplicaRecord>::open(&out.replicas())?;
    let mut s = SincePrevious { analysis, rules: RULES, ..SincePrevious::default() };

    let mut change_of: FxHashMap<u32, Change> = FxHashMap::default();
    // Shares kept in basis points, for the median.
    let mut shares: Vec<u64> = Vec::new();
    for_each_change(&out.changes(), ChangeTable::Final, |row| {
        if let Some((before, kept)) = row.chunks_kept.filter(|k| k.0 > 0) {
            let (before, kept) = (u64::from(before), u64::from(kept.min(before)));
            s.modified.measured += 1;
            s.modified.kept_tenths[(kept * 10 / before) as usize] += 1;
            shares.push(kept * 1_000_000 / before);
        }
        if let (Some((from, from_url)), true) = (&row.moved_from, s.moves.len() < MOVES_SHOWN) {
            s.moves.push(Move {
                doc_id: row.doc_id,
                url: row.url.clone(),
                from_doc_id: *from,
                from_url: from_url.clone(),
            });
        }
        let p = &mut s.pages;
        *match row.change {
            Change::New => &mut p.new,
            Change::Moved => &mut p.moved,
            Change::Unchanged => &mut p.unchanged,
            Change::Modified => &mut p.modified,
            Change::Lost => &mut p.lost,
            Change::Orphaned => &mut p.orphaned,
            Change::Redirected => &mut p.redirected,
            Change::Returned => &mut p.returned,
        } += 1;
        if row.kept && matches!(row.change, Change::Lost | Change::Orphaned) {
            p.kept_missing += 1;
        }
        let was_copy = row.center_before.is_some_and(|c| c != row.doc_id);
        if was_copy && row.center_after == Some(row.doc_id) {
            let now = after.seek(row.doc_id, |r| r.doc_id).filter(|(_, r)| r.doc_id == row.doc_id);
            if now.is_some_and(|(_, r)| r.has(EXACT_COPY)) {
                s.promotions += 1;
            }
        }
        change_of.insert(row.doc_id, row.change);
        Ok(())
    })?;

    s.modified.median_kept_percent = median_percent(&mut shares);

    // Recrawl advice: every previous page has a row in the change table.
    for r in before.iter() {
        let unchanged = change_of.get(&r.doc_id) == Some(&Change::Unchanged);
        for (bit, p) in [(SKIP_EXACT, &mut s.recrawl.exact), (SKIP_NEAR, &mut s.recrawl.near)] {
            if r.has(bit) {
                p.skippable += 1;
                p.unchanged += u64::from(unchanged);
            }
        }
    }
    for p in [&mut s.recrawl.exact, &mut s.recrawl.near] {
        p.unchanged_percent = percent(p.unchanged, p.skippable);
    }
    drop(change_of);

    // Both files are in docID order: one merge over them.
    let mut links: Vec<(u32, u32)> = Vec::new();
    let (mut size_before, mut size_after) = (FxHashMap::default(), FxHashMap::default());
    for r in before.iter().filter(|r| r.in_group()) {
        *size_before.entry(r.group).or_insert(0u64) += 1;
    }
    for r in after.iter().filter(|r| r.in_group()) {
        *size_after.entry(r.group).or_insert(0u64) += 1;
    }
    let (mut a, mut b) = (before.iter().peekable(), after.iter().peekable());
    while let (Some(x), Some(y)) = (a.peek().copied(), b.peek().copied()) {
        if x.doc_id < y.doc_id {
            a.next();
            continue;
        }
        if y.doc_id < x.doc_id {
            b.next();
            continue;
        }
        a.next();
        b.next();
        if x.has(EMPTY_DOC) || y.has(EMPTY_DOC) {
            continue;
        }
        tally(&mut s.exact, x.has(EXACT_COPY), y.has(EXACT_COPY));
        tally(&mut s.near, x.in_group(), y.in_group());
        if x.in_group() && y.in_group() {
            links.push((x.group, y.group));
        }
    }
    s.groups = match_groups(links, &size_before, &size_after);
    Ok(s)
}

/// The median of shares in millionths, in percent to two decimals (the
/// lower middle of an even count).
fn median_percent(shares: &mut [u64]) -> f64 {
    if shares.is_empty() {
        return 0.0;
    }
    shares.sort_unstable();
    let m = shares[(shares.len() - 1) / 2];
    (m / 100) as f64 / 100.0
}

fn tally(b: &mut Became, before: bool, after: bool) {
    match (before, after) {
        (false, true) => b.became += 1,
        (true, false) => b.stopped += 1,
        _ => {}
    }
}

/// Classifies groups from their shared pages: `links` holds one
/// `(group before, group after)` entry per shared page.
fn match_groups(
    mut links: Vec<(u32, u32)>,
    size_before: &FxHashMap<u32, u64>,
    size_after: &FxHashMap<u32, u64>,
) -> GroupChanges {
    links.sort_unstable();
    // Each distinct link with the pages it shares.
    let mut shared: Vec<((u32, u32), u64)> = Vec::new();
    for l in links {
        match shared.last_mut() {
            Some((last, n)) if *last == l => *n += 1,
            _ => shared.push((l, 1)),
        }
    }
    let (mut out_deg, mut in_deg) = (FxHashMap::default(), FxHashMap::default());
    for &((g, h), _) in &shared {
        *out_deg.entry(g).or_insert(0u32) += 1;
        *in_deg.entry(h).or_insert(0u32) += 1;
    }
    let mut c = GroupChanges {
        before: size_before.len() as u64,
        after: size_after.len() as u64,
        vanished: size_before.keys().filter(|g| !out_deg.contains_key(g)).count() as u64,
        appeared: size_after.keys().filter(|h| !in_deg.contains_key(h)).count() as u64,
        split: out_deg.values().filter(|&&d| d >= 2).count() as u64,
        merged: in_deg.values().filter(|&&d| d >= 2).count() as u64,
        ..GroupChanges::default()
    };
    for ((g, h), n) in shared {
        if out_deg[&g] != 1 || in_deg[&h] != 1 {
            continue;
        }
        let (was, is) = (size_before[&g], size_after[&h]);
        if is > was {
            c.grew += 1;
        } else if is < was {
            c.shrank += 1;
        } else if n == was {
            c.unchanged += 1;
        } else {
            c.changed_members += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(v: &[(u32, u64)]) -> FxHashMap<u32, u64> {
        v.iter().copied().collect()
    }

    #[test]
    fn groups_are_matched_by_their_shared_pages() {
        // Before: 1 = {1,2,3}, 4 = {4,5}, 6 = {6,7}, 8 = {8,9}, 10 = {10,11},
        // 14 = {14,15}, 16 = {16,17}. After: 1 = {1,2} and 3 = {3,20} (1
        // split), 4 = {4,5,6,7} (4 and 6 merged), 8 = {8,9} (unchanged),
        // 10 = {10,12} (changed members), 30 = {30,31} (appeared), 16 =
        // {16,17,18} (grew); 14 vanished.
        let before = sizes(&[(1, 3), (4, 2), (6, 2), (8, 2), (10, 2), (14, 2), (16, 2)]);
        let after = sizes(&[(1, 2), (3, 2), (4, 4), (8, 2), (10, 2), (30, 2), (16, 3)]);
        let links = vec![
            (1, 1),
            (1, 1),
            (1, 3),
            (4, 4),
            (4, 4),
            (6, 4),
            (6, 4),
            (8, 8),
            (8, 8),
            (10, 10),
            (16, 16),
            (16, 16),
        ];
        let c = match_groups(links, &before, &after);
        assert_eq!(
            c,
            GroupChanges {
                before: 7,
                after: 7,
                unchanged: 1,
                grew: 1,
                shrank: 0,
                changed_members: 1,
                split: 1,
                merged: 1,
                appeared: 1,
                vanished: 1,
            }
        );
    }
}
