//! Each counted document's set size |A|: its distinct chunk fingerprints,
//! less the stop chunks of its scope, which a similarity criterion divides
//! by (see [`crate::store::criterion`]). F leaves stop chunks out, so the sets do
//! too; otherwise a page full of navigation lines could never reach a
//! Jaccard threshold whatever it copied.
//!
//! Computed by the pairs stage, because stop chunks depend on `--max-df`
//! and `--scope`: one parallel pass over the FPrint-DocID partitions (whose
//! records are distinct per document), 4 bytes per document. A
//! non-counted copy has its center's set, so it needs no size of its own.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::Counted;
use crate::store::{ChunkRecord, Mapped};

/// Set sizes by row (0 for documents not counted).
pub(crate) fn sizes(parts: &[PathBuf], counted: &Counted, max_df: Option<u32>) -> anyhow::Result<Vec<u32>> {
    let sizes: Vec<AtomicU32> = (0..counted.documents()).map(|_| AtomicU32::new(0)).collect();
    parts.par_iter().try_for_each(|part| {
        for_each_set_group(part, counted, max_df, |docs, _| {
            for &d in docs {
                sizes[d as usize].fetch_add(1, Ordering::Relaxed);
            }
        })
    })?;
    Ok(sizes.into_iter().map(AtomicU32::into_inner).collect())
}

/// Calls `f` with every fingerprint of one partition and the counted
/// documents whose sets hold it (ascending within a scope): every chunk of
/// a set once, singletons included, stop chunks of a scope left out.
pub(crate) fn for_each_set_group(
    part: &Path,
    counted: &Counted,
    max_df: Option<u32>,
    mut f: impl FnMut(&[u32], u64),
) -> anyhow::Result<()> {
    let max_df = max_df.map_or(usize::MAX, |m| m as usize);
    let records = Mapped::<ChunkRecord>::open(part)?;
    let mut docs: Vec<u32> = Vec::new();
    let mut flush = |docs: &mut Vec<u32>, fprint: u64| {
        if docs.len() <= max_df {
            f(docs, fprint);
        } else {
            // A stop chunk where its scope has more than max_df of the
            // documents, and an ordinary chunk in the other scopes.
            docs.sort_unstable_by_key(|&d| (counted.scope(d), d));
            for scope in docs.chunk_by(|&a, &b| counted.scope(a) == counted.scope(b)) {
                if scope.len() <= max_df {
                    f(scope, fprint);
                }
            }
        }
        docs.clear();
    };
    let documents = counted.documents();
    let mut current = None;
    for r in records.iter() {
        if r.doc as usize >= documents {
            anyhow::bail!("{}", crate::store::integrity::row_beyond_file(part, r.doc, documents as u64));
        }
        if current != Some(r.fprint) {
            if let Some(fprint) = current {
                flush(&mut docs, fprint);
            }
            current = Some(r.fprint);
        }
        if counted.contains(r.doc) {
            docs.push(r.doc);
        }
    }
    if let Some(fprint) = current {
        flush(&mut docs, fprint);
    }
    Ok(())
}
