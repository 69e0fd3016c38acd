//! `overlap dump`: the binary record files as text, for eyes and scripts.

use std::io::Write;

use anyhow::Context;

use crate::store::handles::DocIds;
use crate::store::{ChunkRecord, ExactRecord, Manifest, Mapped, OutDir};

/// Prints FPrint-DocID-Chunk as CSV `fprint,doc_id` (fingerprint as 16 hex
/// digits), in fingerprint order.
pub fn chunks(out: &OutDir, w: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(w, "fprint,doc_id")?;
    let doc_ids = DocIds::open(out, &Manifest::read(out)?)?;
    for part in out.fprint_parts()? {
        let records = Mapped::<ChunkRecord>::open(&part)?;
        for r in records.iter() {
            check_row(&part, r.doc, &doc_ids)?;
            writeln!(w, "{:016x},{}", r.fprint, doc_ids.doc_id(r.doc))
                .context("cannot write to standard output")?;
        }
    }
    Ok(())
}

/// Prints FPrint-DocID-Exact as CSV `hash,doc_id` (hash as 32 hex digits),
/// in docID order.
pub fn exact(out: &OutDir, w: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(w, "hash,doc_id")?;
    let doc_ids = DocIds::open(out, &Manifest::read(out)?)?;
    let records = Mapped::<ExactRecord>::open(&out.fprint_exact())?;
    for r in records.iter() {
        check_row(&out.fprint_exact(), r.doc, &doc_ids)?;
        writeln!(w, "{:032x},{}", r.hash, doc_ids.doc_id(r.doc))
            .context("cannot write to standard output")?;
    }
    Ok(())
}

/// A row read from `path` must be one of the analysis's documents.
fn check_row(path: &std::path::Path, row: u32, doc_ids: &DocIds) -> anyhow::Result<()> {
    if row as usize >= doc_ids.len() {
        anyhow::bail!("{}", crate::store::integrity::row_beyond_file(path, row, doc_ids.len() as u64));
    }
    Ok(())
}
