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
        writeln!(w, "{:032x},{}", r.hash, doc_ids.doc_id(r.doc))
            .context("cannot write to standard output")?;
    }
    Ok(())
}
