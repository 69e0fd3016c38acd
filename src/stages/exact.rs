//! The exact stage: exact-copy groups and their centers (paper section 2.2,
//! step 2).
//!
//! FPrint-DocID-Exact is sorted by hash; each run of equal hashes is a group
//! of documents with identical normalized text, and its smallest docID is
//! the center ("the original has the smallest handle"). The one structure
//! that grows with the crawl is the centers array, four bytes per document,
//! within the paper's assumption of "about ten bytes per docID" of memory
//! (and through a chain of analyses, whose docIDs have gaps, each row's
//! docID, four more).
//! The stage writes `centers.fpd` (read by pair counting to drop the
//! copies) and the final `docs.csv`.

use anyhow::bail;

use crate::base::progress::Progress;
use crate::store::docs::{DocTable, DocsWriter, for_each_doc, for_each_row};
use crate::store::handles::RowIds;
use crate::store::manifest::ExactSettings;
use crate::store::registry::EXACT;
use crate::store::scopes::{Scope, ScopeId, ScopeNumbers};
use crate::store::stage::{Outcome, Stage};
use crate::store::stats::ExactStats;
use crate::store::{self, Center, ExactRecord, Header, Manifest, Mapped, OutDir, RecordWriter};
use xxhash_rust::xxh3::xxh3_128;

/// What the exact stage needs to know.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExactConfig {
    /// Memory budget in bytes.
    pub memory: u64,
    /// Where copies are looked for (`--scope`).
    pub scope: Scope,
}

/// Finds exact copies and writes `centers.fpd` and `docs.csv`.
pub(crate) fn run(
    out: &OutDir,
    cfg: &ExactConfig,
    progress: &Progress,
) -> anyhow::Result<Outcome<ExactStats>> {
    let key = Stage::chained_key(out, &EXACT, &[cfg.scope.name()])?;
    let Some(stage) = Stage::begin(out, &EXACT, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    let mut manifest = Manifest::read(out)?;
    let spec = manifest.chunk.clone();
    let scratch = stage.scratch()?;
    let mut stats = ExactStats::default();
    let exact_path = match cfg.scope {
        Scope::Crawl => {
            store::remove_file_if_exists(&out.scopes())?;
            out.fprint_exact()
        }
        scope => {
            stats.scopes = Some(write_scopes(out, scope)?);
            scoped_hashes(out, &spec, &scratch)?
        }
    };
    let centers = centers(&exact_path, manifest.documents, cfg.memory, &scratch, &mut stats)?;
    write_docs(out, &spec, &centers, &mut stats)?;
    let mut outputs = vec![out.centers(), out.docs()];
    if cfg.scope != Scope::Crawl {
        outputs.push(out.scopes());
    }
    manifest.exact = Some(ExactSettings { scope: cfg.scope.name().to_string() });
    manifest.write(out)?;
    stage.finish(&mut stats, &outputs)?;
    Ok(Outcome::Ran(stats))
}

/// The center of every non-empty document, indexed by docID;
/// [`Center::EMPTY`] where a document has no exact hash. The hashes at
/// `exact` are read through a buffer, not mapped: mapped, the whole file
/// stayed resident while the sort read it (441 MB of page cache counted in
/// the stage's peak RSS at `--memory 256M`, beside 217 MB of its own, on
/// 23 million documents).
fn centers(
    exact: &std::path::Path,
    documents: u64,
    budget: u64,
    scratch: &std::path::Path,
    stats: &mut ExactStats,
) -> anyhow::Result<Vec<Center>> {
    // Records are in docID order, one per non-empty document: the last
    // names the largest docID (only its page is read).
    let map = Mapped::<ExactRecord>::open(exact)?;
    let last = map.len().checked_sub(1).map(|i| map.get(i));
    drop(map);
    if let Some(r) = last.filter(|r| u64::from(r.doc) >= documents) {
        anyhow::bail!("{}: row {} is beyond the analysis's {documents} documents", exact.display(), r.doc);
    }
    let len = last.map_or(0, |r| r.doc as usize + 1);
    let mut centers = vec![Center::EMPTY; len];
    // The sort holds records while the centers array is allocated: give it
    // what is left of the budget.
    let sort_budget = budget.saturating_sub(len as u64 * 4);
    // The open group: its hash, its center and its size so far.
    let mut group: Option<(u128, u32, u64)> = None;
    store::sort::sorted_file(exact, sort_budget, scratch, |r: ExactRecord| {
        if r.doc as usize >= len {
            anyhow::bail!("{}: the exact hashes are not in docID order", exact.display());
        }
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

/// Writes `scopes.fpd`: each row's scope, from its host. Returns the
/// number of scopes.
fn write_scopes(out: &OutDir, scope: Scope) -> anyhow::Result<u64> {
    let mut numbers = ScopeNumbers::default();
    let mut w = RecordWriter::create(&out.scopes(), Header::new::<ScopeId>("", false, 0, 1))?;
    for_each_doc(&out.fingerprint_docs(), DocTable::Fingerprint, |doc| {
        w.push(&numbers.id(scope.of(doc.host)))
    })?;
    w.finish()?;
    Ok(numbers.len() as u64)
}

/// The whole-text hashes keyed by scope too, in a scratch file: two
/// documents are copies when they have the same text in the same scope.
/// The hash of the text and the scope number is 128 bits, as the text's
/// is.
fn scoped_hashes(out: &OutDir, spec: &str, scratch: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let exact = Mapped::<ExactRecord>::open(&out.fprint_exact())?;
    let scopes = Mapped::<ScopeId>::open(&out.scopes())?;
    let path = scratch.join("scoped-exact.fpd");
    let mut w = RecordWriter::create(&path, Header::new::<ExactRecord>(spec, false, 0, 1))?;
    for r in exact.iter() {
        let scope = scopes.get(r.doc as usize).0;
        let mut key = [0u8; 20];
        key[..16].copy_from_slice(&r.hash.to_le_bytes());
        key[16..].copy_from_slice(&scope.to_le_bytes());
        w.push(&ExactRecord { hash: xxh3_128(&key), doc: r.doc })?;
    }
    w.finish()?;
    Ok(path)
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
/// and writes `centers.fpd` for every document; returns each row's docID.
fn write_docs(out: &OutDir, spec: &str, centers: &[Center], stats: &mut ExactStats) -> anyhow::Result<()> {
    let src = out.fingerprint_docs();
    let mut writer = DocsWriter::create(&out.docs(), DocTable::Final)?;
    let mut center_file = RecordWriter::create(&out.centers(), Header::new::<Center>(spec, false, 0, 1))?;
    // A center's row is never after its copies': its docID is known by then.
    let mut doc_ids = RowIds::default();
    for_each_row(&src, DocTable::Fingerprint, |read| {
        let doc = &read.doc;
        if doc.text.is_none() {
            bail!("a copy whose fields were never filled in");
        }
        let row = doc_ids.rows();
        doc_ids.push(doc.id);
        let center = centers.get(row as usize).copied().unwrap_or(Center::EMPTY);
        if center == Center::EMPTY {
            stats.empty_documents += 1;
        }
        let center_id = (center != Center::EMPTY).then(|| doc_ids.id(center.0));
        writer.push_read(read, center_id, None)?;
        center_file.push(&center)
    })?;
    let documents = doc_ids.rows() as usize;
    if documents < centers.len() {
        bail!("{} lists {documents} documents but the exact hashes name more", src.display());
    }
    stats.documents = documents as u64;
    writer.finish()?;
    store::docs::mark_ungrouped(out)?;
    center_file.finish()?;
    Ok(())
}
