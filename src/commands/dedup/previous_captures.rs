//! `--format warc-revisits` across a chain of analyses: each page this
//! crawl captured unchanged since the previous analysis (changes.csv's
//! `unchanged`, as a response in this crawl's own files: not an HTTP 304
//! or a revisit standing for the page kept) becomes a revisit record of its capture
//! in the previous crawl, when the two payloads are the same bytes. The
//! previous capture is found where the previous analysis's docs.csv says
//! (a URL keeps its docID along a chain), in the previous crawl's WARC
//! file, which must still be there and unchanged; a replay tool resolves
//! the revisit from a collection that holds that file.
//!
//! Only a page that nothing else in this crawl names becomes such a
//! revisit: a kept capture that copies of this crawl revisit stays a
//! response, so that no revisit names another revisit, and a copy keeps
//! the revisit of its kept capture here.
//!
//! Memory: 16 bytes for each such page (its previous input and offset);
//! each previous capture is read when its page comes up in the rewrite.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;

use super::Inputs;
use crate::base::progress::Progress;
use crate::bytes::read::stored::{self, StoredRecords};
use crate::bytes::revisit::{self as revisit_record, Original};
use crate::store::analysis::documents;
use crate::store::analysis::kept::KEPT;
use crate::store::changes::{Change, ChangeTable, for_each_change};
use crate::store::docs::CaptureStatus;
use crate::store::{Manifest, OutDir};

/// The previous captures of this crawl's unchanged pages.
pub(super) struct PreviousCaptures {
    /// Each page's row here → (previous file, offset there).
    at: HashMap<u32, (u32, u64)>,
    /// The previous crawl's inputs that can be read again.
    files: Vec<PathBuf>,
}

impl PreviousCaptures {
    /// Finds the previous capture of every page of `out` unchanged since
    /// its previous analysis that becomes a revisit of it: a response here
    /// (in one of this crawl's own `own` inputs) that no copy names
    /// (`named`). `None` for an analysis without a previous one.
    /// `unreachable` counts the pages whose previous capture cannot be read
    /// (the previous analysis or its input is gone or changed, the capture
    /// was itself a revisit): they are copied whole.
    pub(super) fn find(
        out: &OutDir,
        manifest: &Manifest,
        stand_in: &[u32],
        named: &dyn Fn(u32) -> bool,
        own: &dyn Fn(&str) -> bool,
        unreachable: &mut u64,
        progress: &Progress,
    ) -> anyhow::Result<Option<PreviousCaptures>> {
        let Some(chain) = &manifest.chain else { return Ok(None) };
        let mut unchanged = Vec::new();
        if out.changes().is_file() {
            for_each_change(&out.changes(), ChangeTable::Final, |row| {
                if row.change == Change::Unchanged {
                    unchanged.push(row.doc_id);
                }
                Ok(())
            })?;
        }
        // docID → row here, of the pages that qualify.
        let mut rows: Vec<(u32, u32)> = Vec::new();
        documents::for_each_doc(&out.docs(), |row, doc| {
            if unchanged.binary_search(&doc.id).is_ok()
                && stand_in[row as usize] == KEPT
                && !named(row)
                && doc.crawled.status == CaptureStatus::Response
                && own(doc.source.input)
            {
                rows.push((doc.id, row));
            }
            Ok(())
        })?;
        drop(unchanged);
        if rows.is_empty() {
            return Ok(None);
        }
        debug_assert!(rows.windows(2).all(|w| w[0].0 < w[1].0), "docs.csv is in docID order");
        let previous = OutDir::new(&chain.previous_canonical);
        let old = match Manifest::read(&previous) {
            Ok(m) if previous.docs().is_file() => m,
            _ => {
                progress.warn(&format!(
                    "the previous analysis {} cannot be read: the {} pages unchanged since it are copied whole \
                     (--self-contained says so without this warning)",
                    chain.previous,
                    rows.len()
                ));
                *unreachable = rows.len() as u64;
                return Ok(None);
            }
        };
        // The previous analysis's inputs, by name, each read again as
        // `dedup` reads every input ([`Inputs::readable`]).
        let inputs = Inputs::of(&old);
        let readable: Vec<Result<PathBuf, String>> = (0..inputs.names.len())
            .map(|i| {
                let path = inputs.readable(i).map_err(|why| why.to_string())?;
                stored::check_rewritable(&path).map(|()| path)
            })
            .collect();
        let mut at = HashMap::with_capacity(rows.len());
        let mut unreadable: Vec<u64> = vec![0; readable.len()];
        documents::for_each_doc(&previous.docs(), |_, doc| {
            let Ok(k) = rows.binary_search_by_key(&doc.id, |r| r.0) else { return Ok(()) };
            let Some(input) = inputs.index(doc.source.input).map(|i| i as usize) else { return Ok(()) };
            if doc.crawled.status != CaptureStatus::Response {
                return Ok(());
            }
            match &readable[input] {
                Ok(_) => {
                    at.insert(rows[k].1, (input as u32, doc.source.offset));
                }
                Err(_) => unreadable[input] += 1,
            }
            Ok(())
        })?;
        for (i, &n) in unreadable.iter().enumerate() {
            if let (true, Err(why)) = (n > 0, &readable[i]) {
                progress.warn(&format!(
                    "the previous crawl's input {} cannot be read again ({why}): its {n} pages unchanged \
                     since are copied whole",
                    inputs.names[i]
                ));
            }
        }
        *unreachable = rows.len() as u64 - at.len() as u64;
        let files = readable.into_iter().map(|r| r.unwrap_or_default()).collect();
        Ok(Some(PreviousCaptures { at, files }))
    }

    /// The rows whose previous capture is known.
    pub(super) fn rows(&self) -> impl Iterator<Item = u32> + '_ {
        self.at.keys().copied()
    }

    pub(super) fn len(&self) -> usize {
        self.at.len()
    }

    /// The previous capture of `row`, read from its file; `None` when the
    /// record there is not a response with a payload.
    pub(super) fn original(&self, row: u32) -> anyhow::Result<Option<Original>> {
        let Some(&(file, offset)) = self.at.get(&row) else { return Ok(None) };
        let path = &self.files[file as usize];
        let cannot =
            |e: io::Error| anyhow::anyhow!("cannot read {} again at offset {offset}: {e}", path.display());
        let mut records = StoredRecords::open_at(path, offset, 1 << 16).map_err(cannot)?;
        let rec = records.next(|_| true, &mut io::sink()).map_err(cannot)?;
        Ok(rec.filter(|r| r.damage.is_none()).and_then(|r| revisit_record::original(&r)))
    }
}
