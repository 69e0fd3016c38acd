//! `overlap dedup`: the documents a recrawl would keep, written out.
//!
//! The kept set is the report's: [`savings::exact_kept`] for `--level
//! exact` (one copy of each exact group, its center), [`Links::stands_for`]
//! for `--level near` (the greedy pass over the Overlap table), empty
//! documents always. One implementation, so what `dedup` writes is what
//! report.json's `savings` counts as kept. With a `--keep` rule other than
//! `input-order`, the same rule takes documents in that rule's order
//! ([`kept::stand_ins`]).
//!
//! It reads the analysis (docs.csv, overlap.csv, the manifest) and, for
//! `jsonl` and `warc`, the kept documents' records again from the inputs,
//! each input once, front to back ([`reread`]): a record is found by the
//! offset docs.csv gives, read by the same reader with the same settings
//! as in the analysis, so it is the record the analysis read. `urls` needs
//! no input: the URLs are in docs.csv.
//!
//! Memory: the report's per-document arrays (about 30 bytes a document,
//! [`Docs`]), 16 bytes per kept document for where its record is, and a
//! few batches of records in flight (each at most a sixteenth of
//! `--memory`); never a text beyond those batches.
//!
//! The analysis is only read, and not locked: `dump` and `report
//! --compare` do not lock what they read either, and a command that only
//! reads must not fail because another one writes. What a lock would
//! guard against (tables of two analyses, read while a stage is being
//! redone) is checked instead: the stages' stamps, which a stage removes
//! before it rewrites its tables and writes back last, must say the same
//! before and after the tables are read.

mod against;
mod cdxj;
mod output;
mod previous_captures;
mod reread;
mod revisits;
mod skip;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::bail;

pub(crate) use crate::store::destination::Destination;

use crate::base::progress::{Progress, count};
use crate::store::analysis::documents::{self, Docs, EMPTY};
use crate::store::analysis::host_column::HostColumnBuilder;
use crate::store::analysis::keep::KeepRule;
use crate::store::analysis::kept::{self, KEPT};
use crate::store::analysis::links::Links;
use crate::store::analysis::savings;
use crate::store::docs::Source;
use crate::store::manifest::{InputIdentity, Unreadable};
use crate::store::registry::{self, StageName};
use crate::store::stats::Summary;
use crate::store::{Manifest, OutDir};

/// Which documents are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// One copy of each exact group.
    Exact,
    /// Near-replicas skipped too.
    Near,
    /// Only the pages the reference of `--against` does not hold.
    Against,
}

/// The stand-in of a page the reference holds (`--level against`): not a
/// row of this analysis.
pub(crate) const HELD: u32 = KEPT - 1;

/// What is written for each kept document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `{"doc_id", "url", "source", "text"}` per line, the normalized text.
    Jsonl,
    /// The document's WARC record, byte for byte, one gzip member each.
    Warc,
    /// Its URL, one per line.
    Urls,
    /// The skip list: CSV `url,kept_url,why`, a row for each skipped
    /// document with a URL, naming the kept document that stands for it.
    Skip,
    /// Every WARC input written again, exact copies as revisit records
    /// ([`revisits`]).
    WarcRevisits,
}

#[derive(Clone, Debug)]
pub(crate) struct DedupConfig {
    pub level: Level,
    pub format: Format,
    pub out: Destination,
    /// Which copy stands for a group; `None`: the report's rule, which
    /// the manifest records, else `input-order`.
    pub keep: Option<KeepRule>,
    /// `warc-revisits`: write `index.cdxj` beside the files.
    pub cdxj: bool,
    /// `warc-revisits`: revisit records name captures of the files written
    /// only, never of the previous crawl of a chain.
    pub self_contained: bool,
    /// Memory budget in bytes.
    pub memory: u64,
}

/// What `dedup` did, for `--stats` (nothing is written into the analysis).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DedupStats {
    /// Documents in the analysis.
    pub documents: u64,
    pub kept: u64,
    /// Skipped: a member of an exact group that another member stands for.
    pub exact_copies: u64,
    /// Skipped: a member of an exact group that a kept page's near-replica
    /// (an Overlap-table pair) stands for.
    pub near_replicas: u64,
    /// Skipped: a page the reference of `--against` holds.
    pub in_reference: u64,
    /// Kept documents without text (the rule keeps them).
    pub empty: u64,
    /// Kept documents whose record holds no page of its own (a revisit, an
    /// HTTP 304 standing for an unchanged page): `jsonl` writes them with
    /// a null text.
    pub no_page: u64,
    /// Kept documents without a URL, which `urls` does not list.
    pub no_url: u64,
    /// Lines or records written.
    pub written: u64,
    /// What is written: `line`, `record` or `URL`.
    pub unit: &'static str,
    pub bytes: u64,
    pub seconds: f64,
    /// What `warc-revisits` did.
    pub revisits: Option<revisits::RevisitStats>,
}

impl Summary for DedupStats {
    fn summary(&self) -> String {
        let mut also = String::new();
        for (n, what) in [
            (self.empty, "empty"),
            (self.no_page, "without a page of their own"),
            (self.no_url, "without a URL (not listed)"),
        ] {
            if n > 0 {
                also.push_str(&format!(", {n} kept {what}"));
            }
        }
        if let Some(r) = &self.revisits {
            let saved = r.input_bytes.saturating_sub(r.output_bytes);
            let mut whole = Vec::new();
            if r.other_bytes > 0 {
                whole.push(format!("{} with the same text in other bytes", r.other_bytes));
            }
            if r.no_original > 0 {
                whole.push(format!("{} whose kept copy is not a response of these files", r.no_original));
            }
            if r.previous_other_bytes > 0 {
                whole.push(format!(
                    "{} unchanged since the previous analysis in other bytes",
                    r.previous_other_bytes
                ));
            }
            if r.previous_unreachable > 0 {
                whole.push(format!(
                    "{} unchanged since the previous analysis whose capture there cannot be read",
                    r.previous_unreachable
                ));
            }
            let previous = if r.previous_revisits > 0 {
                format!(
                    ", {} since the previous analysis as {} of {} capture there",
                    count(r.previous_revisits, "page unchanged", "pages unchanged"),
                    if r.previous_revisits == 1 { "a revisit" } else { "revisits" },
                    if r.previous_revisits == 1 { "its" } else { "their" },
                )
            } else {
                String::new()
            };
            let whole =
                if whole.is_empty() { String::new() } else { format!(" ({} kept whole)", whole.join(", ")) };
            let noted =
                if r.noted > 0 { format!(", {} near-replicas noted", r.noted) } else { String::new() };
            let index =
                if r.index_bytes > 0 { format!(", index {} bytes", r.index_bytes) } else { String::new() };
            return format!(
                "dedup: {} of {} kept ({} skipped as exact copies, {} as near-replicas); {} exact copies \
                 written as revisit records{previous}{whole}{noted}; {} rewritten: {} of {} ({:.1}% saved){index}, \
                 in {:.1} s",
                self.kept,
                count(self.documents, "document", "documents"),
                self.exact_copies,
                self.near_replicas,
                r.revisits,
                count(r.files, "file", "files"),
                count(r.output_bytes, "byte", "bytes"),
                r.input_bytes,
                if r.input_bytes > 0 { saved as f64 * 100.0 / r.input_bytes as f64 } else { 0.0 },
                self.seconds
            );
        }
        let skipped = if self.in_reference > 0 {
            format!("{} skipped as held by the reference", self.in_reference)
        } else {
            format!("{} skipped as exact copies, {} as near-replicas", self.exact_copies, self.near_replicas)
        };
        format!(
            "dedup: {} of {} kept ({skipped}{also}); {} written ({}) in {:.1} s",
            self.kept,
            count(self.documents, "document", "documents"),
            count(self.written, self.unit, &format!("{}s", self.unit)),
            count(self.bytes, "byte", "bytes"),
            self.seconds
        )
    }
}

/// Writes the documents the savings rule keeps at `cfg.level`, in
/// `cfg.format`, to `cfg.out`.
pub(crate) fn run(out: &OutDir, cfg: &DedupConfig, progress: &Progress) -> anyhow::Result<DedupStats> {
    let started = Instant::now();
    let stages: &'static StageName = match cfg.level {
        Level::Exact => &registry::EXACT,
        Level::Near | Level::Against => &registry::PAIRS,
    };
    if cfg.level == Level::Against {
        if cfg.keep.is_some() {
            bail!(
                "--keep chooses which copy of this crawl stands for the others; --level against keeps \
                 every page the reference does not hold"
            );
        }
        if cfg.format == Format::WarcRevisits {
            bail!(
                "--format warc-revisits names kept captures of the same files; with --level against, \
                 write the pages the reference does not hold (--format warc) or the skip list (--format skip)"
            );
        }
    }
    let before = analysis_key(out, stages)?;
    let manifest = Manifest::read(out)?;
    cfg.out.check(out, &manifest)?;
    let keep = match (&cfg.keep, &manifest.keep) {
        (Some(rule), _) => rule.clone(),
        (None, Some(recorded)) => KeepRule::parse(recorded)
            .map_err(|e| anyhow::anyhow!("{}: keep: {e}", out.manifest().display()))?,
        (None, None) => KeepRule::default(),
    };
    let docs =
        documents::load_docs(&out.docs(), manifest.documents, HostColumnBuilder::held(), |_, _, _| Ok(()))?;
    // The kept page that stands for each skipped one (KEPT for a kept one).
    let stand_in: Vec<u32> = match cfg.level {
        Level::Against => against::stand_ins(out, &docs)?,
        _ if !keep.is_input_order() => {
            // Outside the analysis, which dedup only reads.
            let scratch = tempfile::Builder::new()
                .prefix(".overlap-dedup-")
                .tempdir()
                .map_err(|e| anyhow::anyhow!("cannot create a scratch directory for dedup: {e}"))?;
            let near = cfg.level == Level::Near;
            let s = kept::stand_ins(out, &docs, &keep, near, cfg.memory / 4, scratch.path())?;
            for warning in s.warnings() {
                progress.warn(&warning);
            }
            if near { s.near } else { s.exact }
        }
        Level::Exact => (0..docs.len() as u32)
            .map(|d| if savings::exact_kept(&docs, d) { KEPT } else { docs.center(d) })
            .collect(),
        Level::Near => {
            let links = Links::build(&docs, &out.overlap(), |_, _| Ok(()))?;
            (0..docs.len() as u32).map(|d| links.stands_for(&docs, d).unwrap_or(KEPT)).collect()
        }
    };
    let kept: Vec<bool> = stand_in.iter().map(|&s| s == KEPT).collect();
    let mut stats = counts(&docs, &stand_in);
    stats.unit = match cfg.format {
        Format::Jsonl => "line",
        Format::Warc => "record",
        Format::Urls => "URL",
        Format::Skip => "row",
        Format::WarcRevisits => "record",
    };
    let inputs = Inputs::of(&manifest);
    let unchanged = |out: &OutDir| -> anyhow::Result<()> {
        if analysis_key(out, stages)? != before {
            bail!(
                "{} changed while dedup read it (another overlap command wrote into it): run dedup again",
                out.root().display()
            );
        }
        Ok(())
    };
    match cfg.format {
        Format::Urls => {
            let mut sink = cfg.out.open()?;
            let bar = progress.items("dedup", stats.documents, "documents");
            documents::for_each_doc(&out.docs(), |row, doc| {
                bar.inc(1);
                if !kept[row as usize] {
                    return Ok(());
                }
                if doc.url.is_empty() {
                    stats.no_url += 1;
                    return Ok(());
                }
                sink.write(&output::url_line(doc.url))?;
                stats.written += 1;
                Ok(())
            })?;
            bar.finish_and_clear();
            unchanged(out)?;
            stats.bytes = sink.finish()?;
        }
        Format::Skip if cfg.level == Level::Against => {
            stats.written = against::write_skip(out, &cfg.out, &mut stats, progress)?;
            unchanged(out)?;
        }
        Format::Skip => {
            stats.written = skip::write(out, &docs, &stand_in, &keep, &cfg.out, &mut stats, progress)?;
            unchanged(out)?;
        }
        Format::WarcRevisits => {
            let Destination::Dir(dir) = &cfg.out else {
                bail!("--format warc-revisits writes a directory: -o DIR")
            };
            let r = revisits::write(
                out,
                &manifest,
                &docs,
                &stand_in,
                cfg.level,
                dir,
                cfg.cdxj,
                cfg.self_contained,
                cfg.memory,
                &mut stats,
                progress,
            )?;
            unchanged(out)?;
            stats.revisits = Some(r);
        }
        Format::Jsonl | Format::Warc => {
            let wanted = wanted(out, &inputs, &kept)?;
            unchanged(out)?;
            let files = inputs.files(&wanted, cfg.format, &manifest)?;
            let mut sink = cfg.out.open()?;
            let settings = reread::Settings {
                read: manifest.read.options(),
                max_doc_bytes: usize::try_from(manifest.read.max_doc_bytes).unwrap_or(usize::MAX),
                format: cfg.format,
                batch_bytes: (cfg.memory / 16).clamp(1 << 20, 16 << 20) as usize,
            };
            reread::write(&files, &wanted, &docs, &settings, &mut sink, &mut stats, progress)?;
            stats.bytes = sink.finish()?;
        }
    }
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// The key of the analysis through stage `last`, or the one line saying
/// which stage is not complete (never run, or being redone by another
/// command).
fn analysis_key(out: &OutDir, last: &'static StageName) -> anyhow::Result<String> {
    out.analysis_key(last).map_err(|stage| {
        out.unfinished(format!(
            "{} has no complete '{stage}' stage: run `overlap {stage}` (or `overlap run`) first",
            out.root().display()
        ))
    })
}

/// The counts of the kept set, from each row's stand-in.
fn counts(docs: &Docs, stand_in: &[u32]) -> DedupStats {
    let mut stats = DedupStats { documents: docs.len() as u64, ..DedupStats::default() };
    for (d, &by) in (0..docs.len() as u32).zip(stand_in) {
        match by {
            KEPT => {
                stats.kept += 1;
                if docs.center(d) == EMPTY {
                    stats.empty += 1;
                }
            }
            HELD => stats.in_reference += 1,
            by if is_exact_copy(docs, d, by) => stats.exact_copies += 1,
            _ => stats.near_replicas += 1,
        }
    }
    stats
}

/// Whether the kept `by` stands for `d` as its exact copy, rather than as
/// a near-replica.
fn is_exact_copy(docs: &Docs, d: u32, by: u32) -> bool {
    docs.center(d) == docs.center(by)
}

/// The inputs documents' `source` names, each by its name there, in the
/// order the manifest lists them: this analysis's inputs, then those of
/// earlier analyses that kept documents are read from.
struct Inputs<'a> {
    names: Vec<&'a str>,
    /// Every identity the manifest gives each name (the same spelling may
    /// name inputs of two crawls of a chain).
    identities: Vec<Vec<&'a InputIdentity>>,
}

impl<'a> Inputs<'a> {
    fn of(manifest: &'a Manifest) -> Inputs<'a> {
        let mut inputs = Inputs { names: Vec::new(), identities: Vec::new() };
        for identity in manifest.sources() {
            match inputs.names.iter().position(|&n| n == identity.path) {
                Some(i) => inputs.identities[i].push(identity),
                None => {
                    inputs.names.push(&identity.path);
                    inputs.identities.push(vec![identity]);
                }
            }
        }
        inputs
    }

    fn index(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|&n| n == name).map(|i| i as u32)
    }

    /// The file of input `i` as it was read: the first of its identities
    /// that reads as it did (one spelling may name inputs of two crawls of
    /// a chain), else why the first cannot be read.
    fn readable(&self, i: usize) -> Result<PathBuf, Unreadable> {
        let identities = &self.identities[i];
        identities.iter().find_map(|id| id.reread().ok()).map_or_else(|| identities[0].reread(), Ok)
    }

    /// The file of each input that holds a kept document, checked before
    /// anything is written: it can be read again (not standard input, the
    /// same size and modification time as when the analysis read it), and
    /// for `warc`, it is WARC.
    fn files(
        &self,
        wanted: &[reread::Wanted],
        format: Format,
        manifest: &Manifest,
    ) -> anyhow::Result<Vec<reread::File>> {
        let opts = manifest.read.options();
        let mut files = Vec::new();
        let mut start = 0;
        while start < wanted.len() {
            let input = wanted[start].input;
            let end = start + wanted[start..].partition_point(|w| w.input == input);
            let name = self.names[input as usize];
            let path = self.readable(input as usize).map_err(|why| {
                anyhow::anyhow!("cannot read input {name} again: {why} (--format urls reads no input)")
            })?;
            let warc = reread::is_warc(&path, &opts)?;
            if format == Format::Warc && !warc {
                bail!(
                    "--format warc: input {name} is not WARC, so its documents have no WARC record to copy \
                     (--format jsonl or urls write them)"
                );
            }
            files.push(reread::File { name: name.to_string(), path, range: start..end });
            start = end;
        }
        Ok(files)
    }
}

/// Where each kept document's record is, in input order (the inputs in the
/// manifest's order; the documents of one input by offset): a second pass
/// over docs.csv.
fn wanted(out: &OutDir, inputs: &Inputs<'_>, kept: &[bool]) -> anyhow::Result<Vec<reread::Wanted>> {
    let mut wanted = Vec::new();
    documents::for_each_doc(&out.docs(), |row, doc| {
        if kept[row as usize] {
            let Some(input) = inputs.index(doc.source.input) else {
                bail!("source {} names an input manifest.json does not list", doc.source);
            };
            wanted.push(reread::Wanted { input, offset: doc.source.offset, row });
        }
        Ok(())
    })?;
    wanted.sort_unstable();
    Ok(wanted)
}

/// The error for a kept document whose record was not found again where
/// docs.csv says it is.
fn not_found_again(name: &str, offset: u64, doc_id: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!(
        "{name}: no document at offset {offset}, where docs.csv has docID {doc_id}: the input does not read as \
         it did in the analysis"
    )
}

/// `INPUT:OFFSET`, as docs.csv writes a source.
fn source(input: &str, offset: u64) -> String {
    Source { input, offset }.to_string()
}
