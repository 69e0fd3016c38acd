//! `dedup --format warc-revisits`: every WARC input of the analysis
//! written again into a directory, under its own name, with each exact
//! copy that the kept set skips replaced by a revisit record of the
//! capture that stands for it ([`crate::bytes::revisit`]), and at `--level near`
//! a metadata record after each near-replica naming the page that stands
//! for it. With `--cdxj`, `index.cdxj` beside them ([`cdxj`]).
//!
//! A copy becomes a revisit only when its payload as stored (the HTTP
//! body, codings and all) is the kept capture's byte for byte: the
//! `identical-payload-digest` profile promises that, and a replay serves
//! the kept capture's bytes for it. A copy with the same text but other
//! bytes (another script tag, another compression) is kept whole and
//! counted. Every other record (requests, metadata, images, the kept
//! pages) is copied as it is stored: in a file compressed record by
//! record, its gzip member is copied without being inflated again or
//! compressed, so the rewrite costs about one decompression of the
//! inputs; a plain WARC input is written compressed, one gzip member per
//! record. A file compressed as one stream (or with zstd) has no record
//! a replay index could point into, and is refused before anything is
//! written.
//!
//! Each input is walked once ([`StoredRecords`]); a kept capture that
//! comes after a copy of it in that order (as `--keep newest` makes
//! common) is read first in a pass of its own over the inputs that hold
//! one, to the last such capture. A copy whose kept capture is in an
//! earlier crawl's input (a page `--keep-missing` kept) is kept whole:
//! the directory written holds this crawl's files only.
//!
//! Memory: a record at a time, and about 150 bytes for each kept capture
//! that a copy names (its record ID, URL and date).

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use xxhash_rust::xxh3::xxh3_128;

use super::previous_captures::PreviousCaptures;
use super::{DedupStats, Inputs, Level, cdxj, is_exact_copy};
use crate::base::progress::Progress;
use crate::bytes::read::stored::{self, Stored, StoredRecords, member, write_stored};
use crate::bytes::revisit::{self as revisit_record, Original};
use crate::store::analysis::documents::{self, Docs};
use crate::store::analysis::kept::KEPT;
use crate::store::destination::Destination;
use crate::store::{Manifest, OutDir};

/// What the rewrite did, for the summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RevisitStats {
    pub files: u64,
    pub records: u64,
    /// Exact copies written as revisit records.
    pub revisits: u64,
    /// Exact copies kept whole: their payload is not the kept capture's.
    pub other_bytes: u64,
    /// Exact copies kept whole: their kept capture is not in these inputs
    /// or is not a response.
    pub no_original: u64,
    /// Near-replicas, each followed by a metadata record.
    pub noted: u64,
    /// Pages unchanged since the previous analysis written as revisit
    /// records of their capture there; kept whole: those whose payload is
    /// not that capture's, and those whose capture cannot be read.
    pub previous_revisits: u64,
    pub previous_other_bytes: u64,
    pub previous_unreachable: u64,
    /// Payload bytes the revisits leave out.
    pub payload_saved: u64,
    pub input_bytes: u64,
    /// Of the WARC files written.
    pub output_bytes: u64,
    /// Of `index.cdxj`.
    pub index_bytes: u64,
}

/// What is done with a document's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Kept; read only because copies name it.
    Original,
    /// An exact copy of the kept `row`.
    Copy(u32),
    /// A near-replica of the kept `row`.
    Near(u32),
    /// Unchanged since the previous analysis: a revisit of its capture
    /// there ([`PreviousCaptures`]).
    Unchanged,
}

/// A document's record to load: its input, offset, row and action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Want {
    input: u32,
    offset: u64,
    row: u32,
}

/// An input to rewrite.
struct Rewrite {
    name: String,
    path: PathBuf,
    /// The file written, in the output directory.
    out: PathBuf,
}

/// Writes the rewritten inputs (and with `cdxj`, their index) into `dir`.
#[allow(clippy::too_many_arguments)]
pub(super) fn write(
    out: &OutDir,
    manifest: &Manifest,
    docs: &Docs,
    stand_in: &[u32],
    level: Level,
    dir: &Path,
    cdxj: bool,
    self_contained: bool,
    memory: u64,
    stats: &mut DedupStats,
    progress: &Progress,
) -> anyhow::Result<RevisitStats> {
    let inputs = Inputs::of(manifest);
    let rewrites = rewrites(manifest, &inputs, dir)?;
    let mut rs = RevisitStats::default();
    // The action of each document of interest, and where its record is.
    let mut action: HashMap<u32, Action> = HashMap::new();
    for (d, &by) in (0..docs.len() as u32).zip(stand_in) {
        if by == KEPT {
            continue;
        }
        let near = level == Level::Near && !is_exact_copy(docs, d, by);
        action.insert(d, if near { Action::Near(by) } else { Action::Copy(by) });
        action.entry(by).or_insert(Action::Original);
    }
    let own = rewrites.len() as u32;
    let previous = if self_contained {
        None
    } else {
        let named = |row: u32| action.contains_key(&row);
        let ours = |name: &str| inputs.index(name).is_some_and(|i| i < own);
        PreviousCaptures::find(
            out,
            manifest,
            stand_in,
            &named,
            &ours,
            &mut rs.previous_unreachable,
            progress,
        )?
    };
    if let Some(p) = &previous {
        action.reserve(p.len());
        for row in p.rows() {
            action.insert(row, Action::Unchanged);
        }
    }
    let mut wants = Vec::new();
    documents::for_each_doc(&out.docs(), |row, doc| {
        if action.contains_key(&row) {
            let input = inputs.index(doc.source.input).unwrap_or(u32::MAX);
            wants.push(Want { input, offset: doc.source.offset, row });
        }
        Ok(())
    })?;
    wants.sort_unstable();
    let at: HashMap<u32, (u32, u64)> = wants.iter().map(|w| (w.row, (w.input, w.offset))).collect();
    // Kept captures read before the rewrite: those a copy before them
    // names, in the inputs rewritten.
    let mut early = vec![false; wants.len()];
    for w in &wants {
        if let Some(Action::Copy(by) | Action::Near(by)) = action.get(&w.row)
            && let Some(&(input, offset)) = at.get(by)
            && input < own
            && (input, offset) > (w.input, w.offset)
            && let Ok(k) = wants.binary_search(&Want { input, offset, row: *by })
        {
            early[k] = true;
        }
    }
    let mut originals: HashMap<u32, Original> = HashMap::new();
    read_early(&rewrites, &wants, &early, &mut originals)?;

    fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix(".overlap-dedup-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("cannot create a scratch directory for dedup: {e}"))?;
    let unsorted_path = scratch.path().join("index.unsorted");
    let mut unsorted = cdxj
        .then(|| fs::File::create(&unsorted_path).map(io::BufWriter::new))
        .transpose()
        .with_context(|| format!("cannot create {}", unsorted_path.display()))?;
    let total: u64 = rewrites.iter().map(|r| fs::metadata(&r.path).map_or(0, |m| m.len())).sum();
    rs.input_bytes = total;
    let bar = progress.bytes("dedup", Some(total));
    for (input, rewrite) in rewrites.iter().enumerate() {
        let input = input as u32;
        let lo = wants.partition_point(|w| w.input < input);
        let hi = wants.partition_point(|w| w.input <= input);
        let mine = &wants[lo..hi];
        let mut records = StoredRecords::open(&rewrite.path)
            .with_context(|| format!("cannot read input {} again", rewrite.name))?;
        let layout = records.layout();
        let mut sink = Destination::File(rewrite.out.clone()).open()?;
        let filename = rewrite.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut found = vec![false; mine.len()];
        let mut last_pos = 0;
        loop {
            let start = sink.written();
            let loaded = |offset: u64| mine.binary_search_by_key(&offset, |w| w.offset).is_ok();
            let rec = stored::next_into(&mut records, &mut sink, loaded);
            let rec = rec.with_context(|| format!("cannot read input {} again", rewrite.name))?;
            let Some(rec) = rec else { break };
            rs.records += 1;
            if let Some(why) = &rec.damage {
                if let Some(stored) = &rec.stored {
                    write_stored(&mut sink, layout, stored)?;
                }
                let left = found.iter().filter(|&&f| !f).count();
                progress.warn(&format!(
                    "{}:{}: {why}: the rest of the file is copied as it is{}",
                    rewrite.name,
                    rec.offset,
                    if left > 0 { format!(" ({left} documents there not rewritten)") } else { String::new() }
                ));
                // The rest is copied at the next call.
                found.iter_mut().for_each(|f| *f = true);
                continue;
            }
            let row = mine.binary_search_by_key(&rec.offset, |w| w.offset).ok();
            let mut note = None;
            let mut replaced = None;
            if let Some(k) = row {
                found[k] = true;
                let row = mine[k].row;
                if action[&row] == Action::Original
                    && !originals.contains_key(&row)
                    && let Some(o) = revisit_record::original(&rec)
                {
                    originals.insert(row, o);
                }
                match action[&row] {
                    Action::Original => {}
                    Action::Unchanged => {
                        let before = match &previous {
                            Some(p) => p.original(row)?,
                            None => None,
                        };
                        match (before, revisit_record::payload(&rec)) {
                            (Some(o), Some(p)) if o.length == p.len() as u64 && o.payload == xxh3_128(p) => {
                                rs.previous_revisits += 1;
                                rs.payload_saved += p.len() as u64;
                                replaced = Some(revisit_record::revisit(&rec, &o));
                            }
                            (Some(_), Some(_)) => rs.previous_other_bytes += 1,
                            _ => rs.previous_unreachable += 1,
                        }
                    }
                    Action::Copy(by) => match (originals.get(&by), revisit_record::payload(&rec)) {
                        (Some(o), Some(p)) if o.length == p.len() as u64 && o.payload == xxh3_128(p) => {
                            rs.revisits += 1;
                            rs.payload_saved += p.len() as u64;
                            replaced = Some(revisit_record::revisit(&rec, o));
                        }
                        (Some(_), Some(_)) => rs.other_bytes += 1,
                        _ => rs.no_original += 1,
                    },
                    Action::Near(by) => {
                        if let Some(o) = originals.get(&by) {
                            rs.noted += 1;
                            note = Some(revisit_record::near_note(&rec, o));
                        }
                    }
                }
            }
            match (&replaced, &rec.stored) {
                (Some(revisit), _) => {
                    sink.write(&member(&revisit_record::bytes(revisit))?)?;
                    index_line(&mut unsorted, revisit, &filename, start, sink.written() - start)?;
                }
                (None, Some(stored)) => {
                    write_stored(&mut sink, layout, stored)?;
                    index_line(&mut unsorted, &rec, &filename, start, sink.written() - start)?;
                }
                (None, None) => index_line(&mut unsorted, &rec, &filename, start, sink.written() - start)?,
            }
            if let Some(note) = note {
                sink.write(&member(&note)?)?;
            }
            let pos = records.position();
            bar.inc(pos - last_pos);
            last_pos = pos;
        }
        if let Some(k) = found.iter().position(|&f| !f) {
            return Err(super::not_found_again(&rewrite.name, mine[k].offset, docs.doc_id(mine[k].row)));
        }
        rs.output_bytes += sink.finish()?;
        rs.files += 1;
    }
    bar.finish_and_clear();
    if let Some(mut w) = unsorted.take() {
        w.flush().with_context(|| format!("cannot write {}", unsorted_path.display()))?;
        drop(w);
        let index = dir.join("index.cdxj");
        let mut sink = Destination::File(index).open()?;
        cdxj::sort(&unsorted_path, memory / 4, scratch.path(), &mut sink)?;
        rs.index_bytes = sink.finish()?;
    }
    stats.written = rs.records + rs.noted;
    stats.bytes = rs.output_bytes + rs.index_bytes;
    Ok(rs)
}

/// Appends the index line of a record written at `offset`, when indexing.
fn index_line(
    unsorted: &mut Option<io::BufWriter<fs::File>>,
    rec: &Stored,
    filename: &str,
    offset: u64,
    length: u64,
) -> anyhow::Result<()> {
    if let Some(w) = unsorted
        && let Some(line) = cdxj::line(rec, filename, offset, length)
    {
        writeln!(w, "{line}").context("cannot write the index")?;
    }
    Ok(())
}

/// The inputs of this analysis, each checked: it can be read again, it is
/// WARC stored record by record or plain, and its name in `dir` is its own.
fn rewrites(manifest: &Manifest, inputs: &Inputs<'_>, dir: &Path) -> anyhow::Result<Vec<Rewrite>> {
    let mut rewrites: Vec<Rewrite> = Vec::new();
    let dir_now = fs::canonicalize(dir).ok();
    for input in &manifest.inputs {
        let name = input.identity.path.clone();
        let index = inputs.index(&name);
        debug_assert_eq!(index, Some(rewrites.len() as u32), "this analysis's inputs come first");
        let path = input.identity.reread().map_err(|why| {
            anyhow::anyhow!("cannot read input {name} again: {why} (--format urls reads no input)")
        })?;
        stored::check_rewritable(&path)
            .map_err(|why| anyhow::anyhow!("--format warc-revisits: input {name}: {why}"))?;
        let out = stored::out_name(dir, &path);
        if let Some(other) = rewrites.iter().find(|r| r.out == out) {
            bail!(
                "--format warc-revisits: inputs {} and {name} would both be written as {}: give inputs of \
                 distinct names",
                other.name,
                out.display()
            );
        }
        if dir_now.as_deref().is_some_and(|d| path.parent() == Some(d)) {
            bail!("-o {} holds the input {name}: dedup would replace it; write elsewhere", dir.display());
        }
        rewrites.push(Rewrite { name, path, out });
    }
    if rewrites.is_empty() {
        bail!("--format warc-revisits: the analysis has no input of its own to rewrite");
    }
    Ok(rewrites)
}

/// Reads the kept captures marked `early`, each input to its last one.
fn read_early(
    rewrites: &[Rewrite],
    wants: &[Want],
    early: &[bool],
    originals: &mut HashMap<u32, Original>,
) -> anyhow::Result<()> {
    for (input, rewrite) in rewrites.iter().enumerate() {
        let marked: Vec<&Want> =
            wants.iter().zip(early).filter(|(w, e)| **e && w.input == input as u32).map(|(w, _)| w).collect();
        let Some(last) = marked.last().map(|w| w.offset) else { continue };
        let mut records = StoredRecords::open(&rewrite.path)
            .with_context(|| format!("cannot read input {} again", rewrite.name))?;
        let wanted = |offset: u64| marked.binary_search_by_key(&offset, |w| w.offset).is_ok();
        while let Some(rec) = records
            .next(wanted, &mut io::sink())
            .with_context(|| format!("cannot read input {} again", rewrite.name))?
        {
            if let Ok(k) = marked.binary_search_by_key(&rec.offset, |w| w.offset)
                && let Some(o) = revisit_record::original(&rec)
            {
                originals.insert(marked[k].row, o);
            }
            if rec.offset >= last || rec.damage.is_some() {
                break;
            }
        }
    }
    Ok(())
}
