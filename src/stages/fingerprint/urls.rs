//! The URL table and row docIDs of a first analysis (one made without
//! `--previous`), so that it can be the previous analysis of the next.
//!
//! In a first analysis a row's docID is the row itself. A URL captured
//! more than once is the same page seen twice: every capture is a document
//! of its own here, as it always was, and the last one stands for the URL
//! (its docID is the URL's in `urls.fpd`); an analysis carrying this one
//! forward keeps only that one.

use std::path::Path;

use crate::store::handles::{Capture, CaptureKind, DocIdRecord, HAS_URL, Payload, STANDS, UrlRecord};
use crate::store::{self, Header, Mapped, OutDir, RecordWriter};

/// Writes `urls.fpd` and `doc-ids.fpd` for `documents` documents from the
/// captures the ingest noted (unsorted, in `captures`) and the documents'
/// payloads (`payloads`, in docID order).
pub(super) fn first_analysis(
    out: &OutDir,
    captures: &Path,
    payloads: &Path,
    documents: u64,
    memory: u64,
    scratch: &Path,
) -> anyhow::Result<()> {
    let payloads = Mapped::<Payload>::open(payloads)?;
    let mut flags = vec![0u16; documents as usize];
    let mut urls = RecordWriter::create(&out.urls(), Header::new::<UrlRecord>("", true, 0, 1))?;
    // The URL being read and the last document captured under it.
    let mut open: Option<(u128, Option<u32>)> = None;
    let mut close = |open: Option<(u128, Option<u32>)>, flags: &mut [u16]| -> anyhow::Result<()> {
        if let Some((key, Some(doc))) = open {
            flags[doc as usize] |= STANDS;
            urls.push(&UrlRecord { key, doc_id: doc, payload: payloads.get(doc as usize) })?;
        }
        Ok(())
    };
    store::sort::sorted_file::<Capture>(captures, memory / 2, scratch, |c| {
        if open.is_some_and(|(key, _)| key != c.key) {
            close(open.take(), &mut flags)?;
        }
        let last = open.get_or_insert((c.key, None));
        if let CaptureKind::Doc(doc) = c.kind {
            flags[doc as usize] |= HAS_URL;
            last.1 = Some(doc);
        }
        Ok(())
    })?;
    close(open, &mut flags)?;
    urls.finish()?;
    let mut ids = RecordWriter::create(&out.doc_ids(), Header::new::<DocIdRecord>("", false, 0, 1))?;
    for (doc, &flags) in flags.iter().enumerate() {
        ids.push(&DocIdRecord { doc_id: doc as u32, missing_for: 0, flags })?;
    }
    ids.finish()?;
    Ok(())
}
