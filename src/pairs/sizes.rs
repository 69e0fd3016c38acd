//! Each counted document's set size |A|: its distinct chunk fingerprints,
//! less the stop chunks of its scope, which a similarity criterion divides
//! by (see [`super::criterion`]). F leaves stop chunks out, so the sets do
//! too; otherwise a page full of navigation lines could never reach a
//! Jaccard threshold whatever it copied.
//!
//! Computed by the pairs stage, because stop chunks depend on `--max-df`
//! and `--scope`: one parallel pass over the FPrint-DocID partitions (whose
//! records are distinct per document), 4 bytes per document. A
//! non-counted copy has its center's set, so it needs no size of its own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::Counted;
use crate::store::{ChunkRecord, Mapped};

/// Set sizes by row (0 for documents not counted).
pub(crate) fn sizes(parts: &[PathBuf], counted: &Counted, max_df: Option<u32>) -> anyhow::Result<Vec<u32>> {
    let sizes: Vec<AtomicU32> = (0..counted.documents()).map(|_| AtomicU32::new(0)).collect();
    let max_df = max_df.map_or(usize::MAX, |m| m as usize);
    let add = |docs: &[u32]| {
        for &d in docs {
            sizes[d as usize].fetch_add(1, Ordering::Relaxed);
        }
    };
    parts.par_iter().try_for_each(|part| -> anyhow::Result<()> {
        let records = Mapped::<ChunkRecord>::open(part)?;
        let mut docs: Vec<u32> = Vec::new();
        let flush = |docs: &mut Vec<u32>| {
            if docs.len() <= max_df {
                add(docs);
            } else {
                // A stop chunk where its scope has more than max_df of the
                // documents, and an ordinary chunk in the other scopes.
                docs.sort_unstable_by_key(|&d| (counted.scope(d), d));
                for scope in docs.chunk_by(|&a, &b| counted.scope(a) == counted.scope(b)) {
                    if scope.len() <= max_df {
                        add(scope);
                    }
                }
            }
            docs.clear();
        };
        let mut current = None;
        for r in records.iter() {
            if current != Some(r.fprint) {
                flush(&mut docs);
                current = Some(r.fprint);
            }
            if counted.contains(r.doc) {
                docs.push(r.doc);
            }
        }
        flush(&mut docs);
        Ok(())
    })?;
    Ok(sizes.into_iter().map(AtomicU32::into_inner).collect())
}
