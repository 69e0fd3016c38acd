//! `changes.csv`: the fingerprint stage's change table with each kept
//! document's exact-group center now, and the moves the criterion accepts.
//!
//! A `new` URL is `moved` when its candidate (the page gone since whose text
//! it has most of, measured by the fingerprint stage) has the same
//! normalized text, or shares enough distinct chunks with it to pass the
//! Overlap table's criterion (T, `--jaccard`, `--containment`, over the
//! two pages' distinct chunks). The row then names that page's docID and
//! URL. It is written here, not by the exact stage, because the criterion
//! is the pairs stage's.

use anyhow::bail;
use rustc_hash::FxHashMap;

use super::Criterion;
use crate::store::changes::{Change, ChangeTable, ChangesWriter, for_each_change};
use crate::store::handles::DocIds;
use crate::store::{Center, Mapped, OutDir};

/// Writes `changes.csv` from `fingerprint-changes.csv`; returns the number
/// of moves.
pub(super) fn write(out: &OutDir, doc_ids: &DocIds, criterion: &Criterion) -> anyhow::Result<u64> {
    let centers = Mapped::<Center>::open(&out.centers())?;
    let mut writer = ChangesWriter::create(&out.changes(), ChangeTable::Final)?;
    // The URLs of the pages gone: their docIDs come before every new one.
    let mut gone: FxHashMap<u32, String> = FxHashMap::default();
    let mut moves = 0;
    for_each_change(&out.fingerprint_changes(), ChangeTable::Fingerprint, |mut row| {
        if row.kept {
            let Some(r) = doc_ids.row(row.doc_id) else {
                bail!("docID {} is kept but not in docs.csv", row.doc_id);
            };
            let center = if (r as usize) < centers.len() { centers.get(r as usize) } else { Center::EMPTY };
            row.center_after = (center != Center::EMPTY).then(|| doc_ids.doc_id(center.0));
        }
        match row.change {
            Change::Lost | Change::Orphaned | Change::Redirected => {
                gone.insert(row.doc_id, row.url.clone());
            }
            Change::New => {
                let candidate = row.candidate.take();
                if let Some((_, c)) =
                    candidate.filter(|(chunks, c)| c.exact || criterion.passes(c.shared, *chunks, c.chunks))
                {
                    let Some(url) = gone.get(&c.doc_id) else {
                        bail!("a move names docID {}, which is not a page gone", c.doc_id);
                    };
                    row.change = Change::Moved;
                    row.moved_from = Some((c.doc_id, url.clone()));
                    moves += 1;
                }
            }
            _ => {}
        }
        writer.push(&row)
    })?;
    writer.finish()?;
    Ok(moves)
}
