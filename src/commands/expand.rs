//! `overlap expand`: the undo of `dedup --format warc-revisits`. Each WARC
//! file given is written again into a directory, under its own name, with
//! every revisit record of profile `identical-payload-digest` whose
//! original capture is among the files given replaced by the response it
//! stands for ([`revisit_record::expanded`]): of a revisit `dedup` wrote,
//! the record it replaced, byte for byte; of a crawler's revisit (written
//! at crawl time), the response it would have stored. The near-replica
//! notes `dedup --level near` wrote ([`revisit_record::is_near_note`]) are
//! left out, so the undo gives the crawl back at either level. Every other
//! record is copied as it is stored, as `dedup` copies it.
//!
//! Two passes over the files: the first finds every response (by record
//! ID, and by URL and date for a revisit without `WARC-Refers-To`) and
//! every revisit; the second writes, reading each original capture again
//! from where the first pass found it (one gzip member, or one plain
//! record). Memory: about 40 bytes for each response and revisit of the
//! files, and a record at a time.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use xxhash_rust::xxh3::xxh3_64;

use crate::base::progress::{Progress, count};
use crate::bytes::read::stored::{self, Stored, StoredRecords, member, write_stored};
use crate::bytes::read::warc::strip_angle_brackets;
use crate::bytes::revisit::{self as revisit_record, bytes, target_uri};
use crate::store::destination::Destination;
use crate::store::stats::Summary;

#[derive(Clone, Debug)]
pub(crate) struct ExpandConfig {
    pub inputs: Vec<PathBuf>,
    /// The directory to write into, made when missing.
    pub out: PathBuf,
}

/// What `expand` did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ExpandStats {
    pub files: u64,
    pub records: u64,
    /// Revisits replaced by the response they stand for.
    pub expanded: u64,
    /// Revisits whose original is not among the files (or is no HTTP
    /// response), copied as they are.
    pub unresolved: u64,
    /// Near-replica notes `dedup --level near` wrote, left out.
    pub notes_removed: u64,
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub seconds: f64,
}

impl Summary for ExpandStats {
    fn summary(&self) -> String {
        format!(
            "expand: {} expanded into the responses they stand for{}{}; {} of {} records, {} written \
             (from {}) in {:.1} s",
            count(self.expanded, "revisit", "revisits"),
            if self.unresolved > 0 {
                format!(", {} left as they are (their original is not in these files)", self.unresolved)
            } else {
                String::new()
            },
            if self.notes_removed > 0 {
                format!(", {} removed", count(self.notes_removed, "near-replica note", "near-replica notes"))
            } else {
                String::new()
            },
            count(self.files, "file", "files"),
            self.records,
            count(self.output_bytes, "byte", "bytes"),
            self.input_bytes,
            self.seconds
        )
    }
}

/// Where a record is: its file (an index into the inputs) and offset.
type At = (u32, u64);

/// Writes the expanded files into `cfg.out`.
pub(crate) fn run(cfg: &ExpandConfig, progress: &Progress) -> anyhow::Result<ExpandStats> {
    let started = Instant::now();
    let mut stats = ExpandStats::default();
    let outs = outputs(cfg)?;
    // Pass 1: the responses, and the revisits to expand.
    let mut by_id: HashMap<u64, At> = HashMap::new();
    let mut by_capture: HashMap<u64, At> = HashMap::new();
    let mut revisits: Vec<Vec<u64>> = vec![Vec::new(); cfg.inputs.len()];
    // The near-replica notes `dedup --level near` wrote: left out, so that
    // the undo gives the inputs back.
    let mut notes: Vec<Vec<u64>> = vec![Vec::new(); cfg.inputs.len()];
    for (i, path) in cfg.inputs.iter().enumerate() {
        stats.input_bytes += fs::metadata(path).map_or(0, |m| m.len());
        let mut records = open(path)?;
        while let Some(rec) = records.next(|_| false, &mut io::sink()).with_context(|| read_error(path))? {
            if rec.damage.is_some() {
                break;
            }
            let kind = rec.field("WARC-Type").unwrap_or_default();
            if kind.eq_ignore_ascii_case("response") {
                let at = (i as u32, rec.offset);
                if let Some(id) = rec.field("WARC-Record-ID") {
                    by_id.entry(xxh3_64(id.as_bytes())).or_insert(at);
                }
                if let (Some(uri), Some(date)) = (target_uri(&rec), rec.field("WARC-Date")) {
                    by_capture.entry(capture_key(&uri, &date)).or_insert(at);
                }
            } else if revisit_record::is_identical_payload_revisit(&rec) {
                revisits[i].push(rec.offset);
            } else if revisit_record::is_near_note(&rec) {
                notes[i].push(rec.offset);
            }
        }
    }
    fs::create_dir_all(&cfg.out).with_context(|| format!("cannot create directory {}", cfg.out.display()))?;
    let bar = progress.bytes("expand", Some(stats.input_bytes));
    let mut last: Option<(At, Stored)> = None;
    for (i, (path, out)) in cfg.inputs.iter().zip(&outs).enumerate() {
        let (mine, notes) = (&revisits[i], &notes[i]);
        let mut records = open(path)?;
        let layout = records.layout();
        let mut sink = Destination::File(out.clone()).open()?;
        let mut pos = 0;
        loop {
            let loaded =
                |offset: u64| mine.binary_search(&offset).is_ok() || notes.binary_search(&offset).is_ok();
            let rec = stored::next_into(&mut records, &mut sink, loaded);
            let Some(rec) = rec.with_context(|| read_error(path))? else { break };
            stats.records += 1;
            bar.inc(records.position() - pos);
            pos = records.position();
            let Some(stored) = &rec.stored else {
                if let Some(why) = &rec.damage {
                    progress.warn(&format!(
                        "{}:{}: {why}: the rest of the file is copied as it is",
                        path.display(),
                        rec.offset
                    ));
                }
                continue;
            };
            if rec.damage.is_none() && notes.binary_search(&rec.offset).is_ok() {
                stats.notes_removed += 1;
                continue;
            }
            let original = original_of(&rec, &by_id, &by_capture)
                .map(|at| load(&cfg.inputs, at, &mut last))
                .transpose()?
                .flatten();
            match original.and_then(|o| revisit_record::expanded(&rec, o)) {
                Some(response) if rec.damage.is_none() => {
                    sink.write(&member(&bytes(&response))?)?;
                    stats.expanded += 1;
                }
                _ => {
                    write_stored(&mut sink, layout, stored)?;
                    stats.unresolved += 1;
                }
            }
        }
        stats.output_bytes += sink.finish()?;
        stats.files += 1;
    }
    bar.finish_and_clear();
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// The files written, one per input, each checked first.
fn outputs(cfg: &ExpandConfig) -> anyhow::Result<Vec<PathBuf>> {
    if cfg.out.exists() && !cfg.out.is_dir() {
        bail!("-o {} is a file: expand writes a directory", cfg.out.display());
    }
    let dir_now = fs::canonicalize(&cfg.out).ok();
    let mut outs: Vec<PathBuf> = Vec::new();
    for (i, path) in cfg.inputs.iter().enumerate() {
        let name = path.display().to_string();
        if path.as_os_str() == "-" {
            bail!("expand reads its inputs twice: give files, not standard input");
        }
        let canonical = fs::canonicalize(path).with_context(|| format!("cannot read {name}"))?;
        if !canonical.is_file() {
            bail!("{name} is not a file");
        }
        stored::check_rewritable(&canonical).map_err(|why| anyhow::anyhow!("expand: input {name}: {why}"))?;
        if dir_now.as_deref().is_some_and(|d| canonical.parent() == Some(d)) {
            bail!(
                "-o {} holds the input {name}: expand would replace it; write elsewhere",
                cfg.out.display()
            );
        }
        let out = stored::out_name(&cfg.out, path);
        if let Some(j) = outs.iter().position(|o| *o == out) {
            bail!(
                "expand: inputs {} and {name} would both be written as {}: give inputs of distinct names",
                cfg.inputs[j].display(),
                out.display()
            );
        }
        debug_assert_eq!(outs.len(), i);
        outs.push(out);
    }
    Ok(outs)
}

fn open(path: &Path) -> anyhow::Result<StoredRecords> {
    StoredRecords::open(path).with_context(|| read_error(path))
}

fn read_error(path: &Path) -> String {
    format!("cannot read {}", path.display())
}

/// The key of a capture by URL and date.
fn capture_key(uri: &str, date: &str) -> u64 {
    xxh3_64(format!("{uri}\0{date}").as_bytes())
}

/// Where the capture a revisit names is: by `WARC-Refers-To`, else by
/// `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date`.
fn original_of(rev: &Stored, by_id: &HashMap<u64, At>, by_capture: &HashMap<u64, At>) -> Option<At> {
    if let Some(id) = rev.field("WARC-Refers-To")
        && let Some(&at) = by_id.get(&xxh3_64(id.as_bytes()))
    {
        return Some(at);
    }
    let uri = rev.field("WARC-Refers-To-Target-URI")?;
    by_capture.get(&capture_key(strip_angle_brackets(&uri), &rev.field("WARC-Refers-To-Date")?)).copied()
}

/// The response at `at`, loaded (the last one loaded is kept: copies of
/// one page come together).
fn load<'a>(
    inputs: &[PathBuf],
    at: At,
    last: &'a mut Option<(At, Stored)>,
) -> anyhow::Result<Option<&'a Stored>> {
    if last.as_ref().is_none_or(|(l, _)| *l != at) {
        let path = &inputs[at.0 as usize];
        let mut records = StoredRecords::open_at(path, at.1, 64 << 10).with_context(|| read_error(path))?;
        let rec = records.next(|_| true, &mut io::sink()).with_context(|| read_error(path))?;
        match rec {
            Some(rec) if rec.damage.is_none() => *last = Some((at, rec)),
            _ => return Ok(None),
        }
    }
    Ok(last.as_ref().map(|(_, rec)| rec))
}
