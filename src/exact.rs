//! The exact stage: exact-copy groups and their centers (paper section 2.2,
//! step 2).
//!
//! FPrint-DocID-Exact is sorted by hash; each run of equal hashes is a group
//! of documents with identical normalized text, and its smallest docID is
//! the center ("the original has the smallest handle"). The one structure
//! that grows with the crawl is the centers array, four bytes per document,
//! within the paper's assumption of "about ten bytes per docID" of memory.
//! The stage writes `centers.fpd` (read by pair counting to drop the
//! copies) and the final `docs.csv`.

use std::fs::File;
use std::io::BufWriter;

use anyhow::{Context, bail};

use crate::fingerprint;
use crate::progress::Progress;
use crate::stage::{Outcome, Stage};
use crate::stats::ExactStats;
use crate::store::{self, Center, ExactRecord, Header, Mapped, OutDir, RecordWriter};

pub const STAGE: &str = "exact";

/// Finds exact copies and writes `centers.fpd` and `docs.csv`.
pub fn run(out: &OutDir, memory_budget: u64, progress: &Progress) -> anyhow::Result<Outcome<ExactStats>> {
    let key = Stage::chained_key(out, STAGE, fingerprint::STAGE, &[])?;
    let Some(stage) = Stage::begin(out, STAGE, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    let scratch = stage.scratch()?;
    let exact = Mapped::<ExactRecord>::open(&out.fprint_exact())?;
    let spec = exact.header().chunk_spec.clone();
    let mut stats = ExactStats::default();
    let centers = centers(&exact, memory_budget, &scratch, &mut stats)?;
    drop(exact);
    write_docs(out, &spec, &centers, &mut stats)?;
    stage.finish(&mut stats, &[out.centers(), out.docs()])?;
    Ok(Outcome::Ran(stats))
}

/// The center of every non-empty document, indexed by docID;
/// [`Center::EMPTY`] where a document has no exact hash.
fn centers(
    exact: &Mapped<ExactRecord>,
    budget: u64,
    scratch: &std::path::Path,
    stats: &mut ExactStats,
) -> anyhow::Result<Vec<Center>> {
    let max_doc = exact.iter().map(|r| r.doc).max();
    let len = max_doc.map_or(0, |d| d as usize + 1);
    let mut centers = vec![Center::EMPTY; len];
    // The sort holds records while the centers array is allocated: give it
    // what is left of the budget.
    let sort_budget = budget.saturating_sub(len as u64 * 4);
    // The open group: its hash, its center and its size so far.
    let mut group: Option<(u128, u32, u64)> = None;
    store::sort::sorted(exact, sort_budget, scratch, |r| {
        match &mut group {
            Some((hash, center, size)) if *hash == r.hash => {
                *size += 1;
                centers[r.doc as usize] = Center(*center);
            }
            _ => {
                if let Some((_, _, size)) = group {
                    close_group(size, stats);
                }
                group = Some((r.hash, r.doc, 1));
                centers[r.doc as usize] = Center(r.doc);
            }
        }
        Ok(())
    })?;
    if let Some((_, _, size)) = group {
        close_group(size, stats);
    }
    Ok(centers)
}

/// Counts a finished group; single documents are not groups.
fn close_group(size: u64, stats: &mut ExactStats) {
    if size >= 2 {
        stats.groups += 1;
        stats.documents_in_groups += size;
        stats.copies_removed += size - 1;
        stats.largest_group = stats.largest_group.max(size);
    }
}

/// Streams `fingerprint-docs.csv` into `docs.csv` with the center column,
/// and writes `centers.fpd` for every document.
fn write_docs(out: &OutDir, spec: &str, centers: &[Center], stats: &mut ExactStats) -> anyhow::Result<()> {
    let src = out.fingerprint_docs();
    let mut reader =
        csv::Reader::from_path(&src).with_context(|| format!("cannot open {}", src.display()))?;
    let dst = out.docs();
    let tmp = store::temp_path(&dst);
    let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut writer = csv::Writer::from_writer(BufWriter::with_capacity(1 << 16, file));
    let mut center_file = RecordWriter::create(&out.centers(), Header::new::<Center>(spec, false, 0, 1))?;
    writer
        .write_record([
            "doc_id",
            "url",
            "host",
            "source",
            "bytes",
            "lines",
            "chunks",
            "exact_center",
            "title",
        ])
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut record = csv::StringRecord::new();
    let mut doc: u64 = 0;
    while reader
        .read_record(&mut record)
        .with_context(|| format!("cannot read {} (row {})", src.display(), doc + 2))?
    {
        if record.get(0) != Some(doc.to_string().as_str()) || record.len() < 8 {
            bail!("{} is damaged at row {}: expected doc_id {doc}", src.display(), doc + 2);
        }
        let center = centers.get(doc as usize).copied().unwrap_or(Center::EMPTY);
        if center == Center::EMPTY {
            stats.empty_documents += 1;
        }
        let center_text = if center == Center::EMPTY { String::new() } else { center.0.to_string() };
        let mut row: Vec<&str> = record.iter().take(7).collect();
        row.push(&center_text);
        row.push(record.get(7).unwrap_or(""));
        writer.write_record(&row).with_context(|| format!("cannot write {}", tmp.display()))?;
        center_file.push(&center)?;
        doc += 1;
    }
    if doc < centers.len() as u64 {
        bail!("{} lists {doc} documents but the exact hashes name more", src.display());
    }
    stats.documents = doc;
    writer
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    store::commit(&dst)?;
    center_file.finish()?;
    Ok(())
}
