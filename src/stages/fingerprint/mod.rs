//! The fingerprint stage: read → extract → chunk → store.
//!
//! Inputs are cut into batches of records, and each batch is read,
//! extracted, normalized and fingerprinted by one job on the rayon pool;
//! this thread then writes the results in input order, so docIDs are dense
//! and in input order whatever the thread count ([`pipeline`]). Chunk
//! fingerprints go to [`PARTITIONS`] spill files by their top bits, and
//! each partition is then sorted on its own (in memory when it fits the
//! budget), which replaces one global external sort of the FPrint-DocID
//! file with many small in-memory ones.
//!
//! Records that the WARC file declares to be copies of earlier ones
//! (revisits, and responses with an earlier response's payload digest)
//! become copies of their originals as they are written, in input order;
//! the jobs mostly leave them unextracted ([`copies`]). Redirects go to
//! `redirects.csv` as they are written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::{Context, bail};
use rayon::prelude::*;

mod copies;
mod copy_runs;
mod copy_table;
mod host;
mod late;
mod measure;
mod pipeline;
mod previous;
mod urls;

pub(crate) use previous::PreviousConfig;

use crate::base::memory::ByteSize;
use crate::base::progress::{Progress, count};
use crate::bytes::chunk::{Chunker, Chunking, exact_hash};
use crate::bytes::extract;
use crate::bytes::fuzzy;
use crate::bytes::read::budget::{OverBudget, Pages};
use crate::bytes::read::{self, InputSkip, Item, Known, RawDoc, ReadOptions, Skip, SkipReason};
use crate::store::docs::{CaptureStatus, Crawled, Doc, DocTable, DocsWriter, Source, TextFields};
use crate::store::handles::{Capture, CaptureKind, Payload, url_key};
use crate::store::manifest::{FORMAT_VERSION, InputEntry, InputIdentity, ReadSettings};
use crate::store::registry::FINGERPRINT;
use crate::store::stage::{Outcome, Stage};
use crate::store::stats::{CORRUPT_SAMPLES, CorruptSample, FingerprintStats, InputStats};
use crate::store::{
    self, ChunkRecord, CsvOut, ExactRecord, FuzzySignature, Header, Manifest, Mapped, OutDir, RecordWriter,
    StageKey,
};
use copies::{Became, Claim, ClaimKey, CopyIndex, Hint, Key};
use host::host_of;
use late::{Late, LateRevisits};
use previous::Previous;

/// Number of fingerprint partitions. Fixed, so the files are the same
/// whatever the thread count or memory budget. At 64, a 150 GB crawl
/// (about 2.4 billion FPrint-DocID records) gives partitions of about
/// 450 MB, each sorted in memory.
pub const PARTITIONS: u32 = 64;
const PARTITION_SHIFT: u32 = 64 - PARTITIONS.trailing_zeros();

/// How the fingerprint stage's pipeline runs within `memory`: the batches
/// in flight hold an eighth of it at most (see [`pipeline`]), so the jobs'
/// batches, each counted twice (payload and output), are cut at a
/// sixteenth of it over the jobs, between 64 KiB and 8 MiB of payload.
fn limits(memory: u64, threads: usize) -> pipeline::Limits {
    let jobs = 2 * threads + 2;
    let in_flight = memory / 8;
    let max_bytes = (in_flight / (2 * jobs as u64)).clamp(64 << 10, 8 << 20) as usize;
    pipeline::Limits {
        max_bytes,
        window: 64 * threads + 64,
        jobs,
        in_flight: usize::try_from(in_flight).unwrap_or(usize::MAX),
    }
}

/// What the fingerprint stage needs to know.
#[derive(Clone, Debug)]
pub struct FingerprintConfig {
    pub inputs: Vec<PathBuf>,
    pub read: ReadOptions,
    pub chunking: Chunking,
    /// The most normalized text one document keeps (`--max-doc-bytes`).
    pub max_doc_bytes: u64,
    /// Memory budget in bytes.
    pub memory: u64,
    /// `--previous` and `--keep-missing`: the analysis to carry forward.
    pub previous: Option<PreviousConfig>,
}

/// Runs the fingerprint stage into `out`, unless its outputs are already up
/// to date for these inputs and flags.
pub(crate) fn run(
    out: &OutDir,
    cfg: &FingerprintConfig,
    progress: &Progress,
) -> anyhow::Result<Outcome<FingerprintStats>> {
    // A directory stands for the crawl files under it, which the
    // manifest, the stamp and docs.csv's sources then name.
    let walked;
    let cfg = if cfg.inputs.iter().any(|p| p.is_dir()) {
        walked = FingerprintConfig { inputs: expand_directories(&cfg.inputs, progress)?, ..cfg.clone() };
        &walked
    } else {
        cfg
    };
    check_inputs_outside(out, &cfg.inputs)?;
    let streams = check_inputs(&cfg.inputs, &cfg.read)?;
    let previous = cfg.previous.as_ref().map(|p| Previous::open(p, cfg.chunking, out)).transpose()?;
    out.create()?;
    // Taken once: the key and the manifest must name the same inputs.
    let identities: Vec<InputIdentity> = cfg.inputs.iter().map(|p| InputIdentity::of(p)).collect();
    warn_repeated_inputs(&identities, progress);
    let key = stage_key(cfg, &identities, previous.as_ref());
    let replaced = Manifest::read(out).ok().filter(|old| {
        old.inputs.len() != identities.len()
            || old.inputs.iter().zip(&identities).any(|(a, b)| !a.identity.same_input(b))
    });
    let Some(stage) = Stage::begin(out, &FINGERPRINT, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    if let Some(old) = replaced {
        progress.warn(&format!(
            "{} held an analysis of other inputs ({}, the first {}): it is replaced",
            out.root().display(),
            crate::base::progress::count(old.inputs.len() as u64, "input", "inputs"),
            old.inputs.first().map_or("none", |i| i.identity.path.as_str())
        ));
    }
    warn_record_limit_over_budget(cfg, progress);
    // Partitions of an earlier run must not survive into this one.
    out.empty_fprint_dir()?;
    let scratch = stage.scratch()?;
    // A first analysis writes what it reads straight into `out`; with
    // --previous, what is read goes into a segment of its own, which is
    // then carried forward with the previous analysis into `out`.
    let segment = match &previous {
        None => out.clone(),
        Some(_) => {
            let segment = OutDir::new(scratch.join("segment"));
            segment.create()?;
            segment
        }
    };
    let unchanged = previous.as_ref().and_then(|p| p.unchanged(cfg)).transpose()?.map(Arc::new);
    let Ingested { mut stats, copies, borrowed, unchanged_payloads, unread_payloads } =
        ingest(&segment, cfg, streams, &scratch, unchanged, progress)?;
    let spec = cfg.chunking.to_string();
    let by_original = copies::ByOriginal::new(&copies);
    let captures = scratch.join(CAPTURES);
    let payloads = scratch.join(PAYLOADS);
    let documents = stats.documents;
    // Three kinds of work are left, each writing files of its own: the
    // copies' rows of the exact hashes, fuzzy signatures and docs.csv (one
    // pass after another), the URL table of a first analysis, and the
    // partitions' sorts. They run side by side, on whichever threads are
    // free: the sorts are 64 jobs, which fill in around the other two.
    // With the URL table made after the copies' rows on the same thread,
    // the sorts were done 0.55 s before it, and one core of two waited
    // (`perf sched`, 2.1 million pages). The URL table's sort takes the
    // share of the memory budget that one partition's sort takes, so that
    // the sorts beside it stay within the budget together.
    let share = cfg.memory / rayon::current_num_threads().max(1) as u64;
    let (beside, (urls, sorted)) = rayon::join(
        || -> anyhow::Result<u64> {
            if copies.is_empty() {
                return Ok(0);
            }
            let empty = copies::fill_exact(&segment, &spec, &copies)?;
            copies::fill_fuzzy(&segment, &spec, &copies)?;
            copies::fill_docs(&segment, &copies)?;
            Ok(empty)
        },
        || {
            rayon::join(
                || -> anyhow::Result<()> {
                    if previous.is_some() {
                        return Ok(());
                    }
                    let dir = scratch.join("urls");
                    std::fs::create_dir_all(&dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                    urls::first_analysis(out, &captures, &payloads, documents, share, &dir)
                },
                || sort_partitions(&segment, cfg, &scratch, &by_original, &mut stats, progress),
            )
        },
    );
    stats.empty_documents += beside?;
    urls?;
    sorted?;
    let mut outputs: Vec<PathBuf> = (0..PARTITIONS).map(|p| out.fprint_part(p)).collect();
    outputs.extend([out.fprint_exact(), out.fuzzy(), out.fingerprint_docs(), out.redirects(), out.copies()]);
    outputs.extend([out.doc_ids(), out.urls()]);
    let manifest = match previous {
        None => {
            store::remove_file_if_exists(&out.fingerprint_changes())?;
            store::remove_file_if_exists(&out.previous_replicas())?;
            manifest(cfg, identities, &stats, None)
        }
        Some(prev) => {
            let read = previous::Read {
                segment: &segment,
                captures: &captures,
                payloads: &payloads,
                borrowed: &borrowed,
            };
            let mut carried = previous::carry_forward(out, &read, &prev, cfg, &scratch, progress)?;
            carried.stats.unchanged_payloads = unchanged_payloads;
            carried.stats.unread_payloads = unread_payloads;
            outputs.extend([out.fingerprint_changes(), out.previous_replicas()]);
            let m = manifest(cfg, identities, &stats, Some(&carried));
            stats.previous = Some(carried.stats);
            m
        }
    };
    manifest.write(out)?;
    outputs.push(out.manifest());
    stage.finish(&mut stats, &outputs)?;
    Ok(Outcome::Ran(stats))
}

/// Warns of an input given more than once (the same file, however its
/// path is spelled): every page of it becomes an exact copy of itself,
/// which is rarely what was meant.
fn warn_repeated_inputs(identities: &[InputIdentity], progress: &Progress) {
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for id in identities {
        let Some(canonical) = id.canonical.as_deref() else { continue };
        if let Some(first) = seen.insert(canonical, &id.path) {
            progress.warn(&format!(
                "{} is given more than once (also as {first}): every page in it will be an exact copy of itself",
                id.path
            ));
        }
    }
}

/// The scratch files of [`Capture`]s and [`Payload`]s.
const CAPTURES: &str = "captures.fpd";
const PAYLOADS: &str = "payloads.fpd";

/// The revision of what records become (documents, copies, skips), part
/// of the stage key so that outputs written by an earlier build under other
/// rules are redone, not reused. Revision 2: revisits and payload-digest
/// copies, redirects, segmented records, hidden HTML elements. Revision 3:
/// a JSONL field name with dots reaches into objects (`metadata.url`), so
/// the same `--url-field` may now find URLs it left empty; it is the
/// revision only of analyses whose field names have a dot, so that every
/// other analysis stays up to date, and a chain keeps reusing the texts of
/// analyses made before ([`input_rules`]).
pub(crate) const INPUT_RULES: &str = "input-rules-2";
const INPUT_RULES_DOTTED: &str = "input-rules-3";

/// The revision of the rules records were read by under `read`.
pub(crate) fn input_rules(read: &crate::bytes::read::ReadOptions) -> &'static str {
    if read.url_field.contains('.') || read.text_field.contains('.') {
        INPUT_RULES_DOTTED
    } else {
        INPUT_RULES
    }
}

/// What the stage made its outputs of, for the later stages; `carried`
/// for an analysis made with --previous.
fn manifest(
    cfg: &FingerprintConfig,
    identities: Vec<InputIdentity>,
    stats: &FingerprintStats,
    carried: Option<&previous::Carried>,
) -> Manifest {
    let mut first_doc = 0;
    let inputs = identities
        .into_iter()
        .zip(&stats.inputs)
        .map(|(identity, input)| {
            // In a chain, a URL keeps its docID, and a revisit read before
            // its original is numbered after every input: an input's
            // docIDs are then no range.
            let first = (carried.is_none() && stats.late_revisits == 0).then_some(first_doc);
            first_doc += input.documents;
            InputEntry { identity, documents: input.documents, first_doc: first }
        })
        .collect();
    Manifest {
        format_version: FORMAT_VERSION,
        overlap_version: env!("CARGO_PKG_VERSION").to_string(),
        chunk: cfg.chunking.to_string(),
        read: ReadSettings::new(&cfg.read, cfg.max_doc_bytes, input_rules(&cfg.read)),
        inputs,
        documents: carried.map_or(stats.documents, |c| c.documents),
        next_doc_id: carried.map_or(stats.documents, |c| c.next_doc_id),
        chain: carried.map(|c| c.chain.clone()),
        exact: None,
        pairs: None,
        keep: None,
        record_files: Default::default(),
    }
}

/// The key of this stage's outputs.
fn stage_key(cfg: &FingerprintConfig, identities: &[InputIdentity], previous: Option<&Previous>) -> String {
    let mut key = StageKey::new(FINGERPRINT.name);
    key.add(input_rules(&cfg.read))
        .add(&cfg.chunking.to_string())
        .add(cfg.read.format.name())
        .add(&cfg.read.url_field)
        .add(&cfg.read.text_field)
        .add(&cfg.read.max_record_bytes.to_string())
        .add(&cfg.max_doc_bytes.to_string());
    for input in identities {
        key.add_input(input);
    }
    if let Some(previous) = previous {
        key.add("previous").add(previous.key()).add(&previous.keep_missing().to_string());
    }
    key.finish()
}

/// Fails before any output is touched when an input cannot be read:
/// missing, unreadable, or of a format that cannot be told. A run given a
/// wrong input then leaves the analysis in its output directory as it was;
/// found once the stage has begun, the same error would leave it without
/// its fingerprint outputs. Every file is opened and sniffed, then closed
/// (a list of thousands of inputs would otherwise hold as many open);
/// streams (standard input, a pipe or process substitution, a FIFO), which
/// cannot be opened twice without losing what the first opening read, are
/// returned opened, by their place among the inputs. A stream given twice
/// is an error: its second reading would find what the first left.
fn check_inputs(inputs: &[PathBuf], opts: &ReadOptions) -> anyhow::Result<BTreeMap<usize, read::Opened>> {
    if inputs.is_empty() {
        bail!("no inputs given");
    }
    // One check for every stream given twice, before any input is opened.
    let kinds: Vec<Option<read::Stream>> = inputs.iter().map(|p| read::stream(p)).collect();
    for (i, kind) in kinds.iter().enumerate() {
        if let Some(kind) = kind
            && kinds[..i].contains(&Some(*kind))
        {
            match kind {
                read::Stream::StandardInput => bail!("standard input (-) can be given only once"),
                read::Stream::Node(..) => bail!(
                    "{} is a pipe or FIFO given a second time: a stream can be read only once",
                    inputs[i].display()
                ),
            }
        }
    }
    let mut streams = BTreeMap::new();
    for (i, (input, kind)) in inputs.iter().zip(&kinds).enumerate() {
        // A directory or an empty file is skipped with a warning when it
        // is reached.
        let opened = read::probe(input, opts)?;
        if kind.is_some() {
            streams.insert(i, opened);
        }
    }
    Ok(streams)
}

/// `inputs` with each directory replaced by the crawl files under it, in
/// name order ([`read::walk`]), with a note saying so for each.
fn expand_directories(inputs: &[PathBuf], progress: &Progress) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::with_capacity(inputs.len());
    for input in inputs {
        if input.is_dir() {
            let walked = read::walk::crawl_files(input)?;
            // Files left out are worth a line in a scheduler's log too.
            if walked.left_out > 0 {
                progress.warn(&walked.note(input));
            } else {
                progress.note(&walked.note(input));
            }
            files.extend(walked.files);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

/// Refuses an input that is one of the files the analysis writes, or lies
/// inside its own folders (`records/`, `parquet/`, `.overlap/`): the
/// stage would replace or remove it before it was read.
fn check_inputs_outside(out: &OutDir, inputs: &[PathBuf]) -> anyhow::Result<()> {
    let Ok(root) = store::canonical_target(out.root()) else { return Ok(()) };
    for input in inputs {
        if let Ok(at) = std::fs::canonicalize(input)
            && OutDir::owns(&root, &at)
        {
            bail!(
                "{} is a file the analysis in {} writes (or lies in one of its folders): \
                 move the input out of it, or write the analysis elsewhere with --out",
                input.display(),
                out.root().display()
            );
        }
    }
    Ok(())
}

/// One record after extraction and fingerprinting.
enum Processed {
    /// A document without an index key.
    Doc(DocOut),
    /// A document with an index key: what it is depends on its claim.
    Keyed(ClaimKey, Extracted),
    /// A document that is likely a copy, not extracted until it is claimed
    /// ([`Hint::Wait`]); with its host, and whether its body was left
    /// unread.
    Waiting(Box<RawDoc>, ClaimKey, String, bool),
    Skip {
        skip: Skip,
        /// What the record says of its URL, when it names one: a page
        /// gone, or unchanged (an HTTP 304).
        capture: Option<(String, CaptureKind)>,
    },
    Copy(CopyOf),
    Redirect {
        offset: u64,
        url: String,
        status: u16,
        target: String,
    },
    /// No record: a warning about the input as a whole ([`read::Note`]).
    Note(read::Note),
}

/// What extraction made of a document.
enum Extracted {
    Doc(DocOut),
    Failed {
        offset: u64,
        url: String,
        bytes: u64,
        reason: SkipReason,
        detail: String,
        payload: Payload,
        seen: Seen,
    },
    /// Not extracted: the previous analysis has this payload for this URL.
    Unchanged(Unchanged),
}

/// When and how a record captured its page: docs.csv's `date` and
/// `status`.
#[derive(Clone, Debug, Default)]
struct Seen {
    date: String,
    status: CaptureStatus,
}

impl Seen {
    fn of(raw: &RawDoc) -> Seen {
        let status = match raw.status {
            Some(200) => CaptureStatus::Response,
            _ => CaptureStatus::Unknown,
        };
        Seen { date: raw.date.clone().unwrap_or_default(), status }
    }

    fn crawled(&self) -> Crawled<'_> {
        Crawled { date: &self.date, status: self.status }
    }
}

struct DocOut {
    offset: u64,
    url: String,
    host: String,
    title: String,
    canonical: String,
    seen: Seen,
    bytes: u64,
    text_bytes: u64,
    lines: u64,
    chunks: u64,
    /// Sorted, distinct.
    fprints: Vec<u64>,
    /// `None` for an empty document.
    exact: Option<u128>,
    /// Whether the text was cut at `--max-doc-bytes`.
    capped: bool,
    /// Its fuzzy signature with the default parameters, computed here
    /// while the text is at hand (the report would otherwise read every
    /// input again).
    fuzzy: u128,
    /// How its bytes were decoded (see [`extract::Extracted::charset`]).
    charset: Option<(extract::charset::CharsetSource, &'static str, bool)>,
    payload: Payload,
}

/// A document whose text, fingerprints and signatures are those of a row
/// of the previous analysis.
struct Unchanged {
    offset: u64,
    url: String,
    host: String,
    bytes: u64,
    payload: Payload,
    /// The previous analysis's row.
    row: u32,
    /// Whether its body was left compressed, not only unextracted.
    unread: bool,
    seen: Seen,
}

/// What the ingest made.
struct Ingested {
    stats: FingerprintStats,
    copies: copies::Copies,
    /// Per document: the previous analysis's row it takes its values from,
    /// or `NONE`; empty in a first analysis.
    borrowed: Vec<u32>,
    unchanged_payloads: u64,
    unread_payloads: u64,
}

/// Per document: the previous analysis's row it takes its values from, or
/// [`store::handles::NONE`]. Only a recrawl (`--previous`) has such rows;
/// a first analysis keeps no list, which would be 4 bytes a document
/// whatever `--memory` (96 MB for 24 million pages).
struct Borrowed {
    rows: Option<Vec<u32>>,
}

impl Borrowed {
    fn new(recrawl: bool) -> Borrowed {
        Borrowed { rows: recrawl.then(Vec::new) }
    }

    fn push(&mut self, row: u32) {
        match &mut self.rows {
            Some(rows) => rows.push(row),
            None => debug_assert_eq!(row, store::handles::NONE, "a first analysis borrows nothing"),
        }
    }

    fn get(&self, doc: u32) -> u32 {
        self.rows.as_ref().map_or(store::handles::NONE, |rows| rows[doc as usize])
    }

    fn into_rows(self) -> Vec<u32> {
        self.rows.unwrap_or_default()
    }
}

/// Reads every input and writes the unsorted partitions, the exact-hash
/// file and the document table.
fn ingest(
    out: &OutDir,
    cfg: &FingerprintConfig,
    streams: BTreeMap<usize, read::Opened>,
    scratch: &Path,
    unchanged: Option<Arc<previous::Unchanged>>,
    progress: &Progress,
) -> anyhow::Result<Ingested> {
    let limits = limits(cfg.memory, rayon::current_num_threads());
    let extractor = Extractor {
        chunking: cfg.chunking,
        max_doc_bytes: usize::try_from(cfg.max_doc_bytes).unwrap_or(usize::MAX),
        unchanged,
    };
    let mut sink = Sink::create(out, cfg, scratch, progress, extractor.clone())?;
    // Readers may leave unread the bodies of pages the previous analysis
    // has (in per-record gzip WARC).
    let mut read = cfg.read.clone();
    let pages = pages(cfg.memory, limits.max_bytes);
    read.pages = Some(Arc::clone(&pages));
    if let Some(unchanged) = extractor.unchanged.clone() {
        read.known = Some(Known(Arc::new(move |raw: &RawDoc| {
            unchanged.row(&raw.url, copies::payload_of(raw)).is_some()
        })));
    }
    let index = Arc::clone(&sink.index);
    let process = move |batch: pipeline::Batch| Done {
        input: batch.key.input,
        segments: batch.segments,
        skipped: batch.skipped,
        items: extractor.batch(batch.key, batch.items, &index),
    };
    let inputs = pipeline::Inputs { paths: &cfg.inputs, streams };
    pipeline::run(inputs, &read, limits, process, Done::weight, |done: &mut Done| sink.write(done))?;
    warn_pages_over_budget(pages.over_budget(), cfg.memory, progress);
    sink.finish()
}

/// The share of `memory` that pages over a batch's payload limit
/// (`batch_bytes`) are read under ([`read::budget`]): a quarter of it,
/// beside the batches' eighth. A page that needs more than half of it is
/// read alone, and noted ([`warn_pages_over_budget`]).
fn pages(memory: u64, batch_bytes: usize) -> Arc<Pages> {
    Pages::new(batch_bytes as u64, memory / 4, memory / 2)
}

/// Says that pages needed more memory than the budget leaves them, which
/// only a record limit within the budget prevents.
fn warn_pages_over_budget(over: OverBudget, memory: u64, progress: &Progress) {
    if over.pages == 0 {
        return;
    }
    progress.warn(&format!(
        "{} needed more than half of --memory {} while read and worked on (the largest about {}): \
         each was worked on alone, and the stage may have gone over the budget; give more --memory, \
         or --max-record-bytes {} or less to skip such pages",
        count(over.pages, "page", "pages"),
        ByteSize(crate::base::memory::stated(memory)),
        ByteSize(over.largest_need),
        ByteSize(max_record_within(memory)),
    ));
}

/// The largest record a page of which fits in half of `memory` while it
/// is worked on.
fn max_record_within(memory: u64) -> u64 {
    memory / 2 / read::budget::NEED_FACTOR
}

/// Warns when `--max-record-bytes` is above `--memory`: a page of that
/// size could not be worked on within the budget.
fn warn_record_limit_over_budget(cfg: &FingerprintConfig, progress: &Progress) {
    if cfg.read.max_record_bytes > crate::base::memory::stated(cfg.memory) {
        progress.warn(&format!(
            "--max-record-bytes {} is more than --memory {}: a page near that size needs about {} \
             times its size while it is worked on, and would take the stage over the budget; \
             give --max-record-bytes {} or less to stay within it",
            ByteSize(cfg.read.max_record_bytes),
            ByteSize(crate::base::memory::stated(cfg.memory)),
            read::budget::NEED_FACTOR,
            ByteSize(max_record_within(cfg.memory)),
        ));
    }
}

/// A batch processed on the pool.
struct Done {
    input: usize,
    /// How many segments its input is read in.
    segments: usize,
    skipped: Option<InputSkip>,
    items: Vec<Processed>,
}

impl Done {
    /// About the heap bytes it holds until it is written: the documents'
    /// fingerprints and strings, and the payloads of those waiting for
    /// their claim.
    fn weight(&self) -> usize {
        let strings = |ss: &[&str]| ss.iter().map(|s| s.len()).sum::<usize>();
        let doc = |d: &DocOut| {
            d.fprints.capacity() * 8 + strings(&[&d.url, &d.host, &d.title, &d.canonical, &d.seen.date])
        };
        self.items
            .iter()
            .map(|item| {
                std::mem::size_of::<Processed>()
                    + match item {
                        Processed::Doc(d) | Processed::Keyed(_, Extracted::Doc(d)) => doc(d),
                        Processed::Keyed(_, Extracted::Failed { url, detail, .. }) => strings(&[url, detail]),
                        Processed::Keyed(_, Extracted::Unchanged(_)) => 0,
                        Processed::Waiting(raw, _, host, _) => {
                            std::mem::size_of::<RawDoc>() + raw.body.held() + strings(&[&raw.url, host])
                        }
                        Processed::Skip { capture, .. } => capture.as_ref().map_or(0, |(url, _)| url.len()),
                        Processed::Copy(c) => strings(&[&c.url, &c.host]),
                        Processed::Redirect { url, target, .. } => strings(&[url, target]),
                        Processed::Note(note) => note.message.len(),
                    }
            })
            .sum()
    }
}

/// A document whose text is an earlier record's: a response with the same
/// payload digest, or a revisit.
struct CopyOf {
    offset: u64,
    url: String,
    host: String,
    /// The record's own payload bytes (0 for a revisit).
    bytes: u64,
    /// The keys its original may be found by, tried in order.
    keys: [Option<Key>; 2],
    revisit: bool,
    /// Its own payload, as far as it knows it.
    payload: Payload,
    /// Its own record's date and status.
    seen: Seen,
}

impl CopyOf {
    /// A response claimed as a copy of the record keyed `key`.
    fn payload(
        offset: u64,
        url: String,
        host: String,
        bytes: u64,
        key: Key,
        payload: Payload,
        seen: Seen,
    ) -> CopyOf {
        CopyOf { offset, url, host, bytes, keys: [Some(key), None], revisit: false, payload, seen }
    }
}

/// Extraction, normalization and fingerprinting of documents.
#[derive(Clone)]
struct Extractor {
    chunking: Chunking,
    max_doc_bytes: usize,
    /// With --previous: the payloads the previous analysis has, which need
    /// no extraction.
    unchanged: Option<Arc<previous::Unchanged>>,
}

impl Extractor {
    /// Processes the batch `key`, asking the copy index which documents
    /// need no extraction.
    fn batch(&self, key: pipeline::Key, items: Vec<Item>, index: &Mutex<CopyIndex>) -> Vec<Processed> {
        let claims: Vec<Option<ClaimKey>> = items
            .iter()
            .map(|item| match item {
                Item::Doc(raw) | Item::Known(raw) => ClaimKey::of(raw),
                _ => None,
            })
            .collect();
        let hints: Vec<Hint> = {
            let mut index = lock(index);
            let mut hint = |(i, claim): (usize, &Option<ClaimKey>)| {
                claim.as_ref().map_or(Hint::Extract, |c| index.hint(c, key.order(i)))
            };
            claims.iter().enumerate().map(&mut hint).collect()
        };
        let mut scratch = Scratch::default();
        items
            .into_iter()
            .zip(claims)
            .zip(hints)
            .map(|((item, claim), hint)| (matches!(item, Item::Known(_)), item, claim, hint))
            .map(|(unread, item, claim, hint)| match item {
                // A page left unread is one the previous analysis has: with
                // a digest, and so a claim key, it goes where an unchanged
                // page read in full goes.
                Item::Doc(raw) | Item::Known(raw) => match (claim, hint) {
                    (_, Hint::Copy(key)) => {
                        let host = host_of(&raw.url);
                        let payload = copies::payload_of(&raw);
                        let seen = Seen::of(&raw);
                        Processed::Copy(CopyOf::payload(
                            raw.offset,
                            raw.url,
                            host,
                            raw.body.len() as u64,
                            key,
                            payload,
                            seen,
                        ))
                    }
                    (Some(claim), Hint::Wait) => {
                        let host = host_of(&raw.url);
                        // A page that waits for others holds no lease (see
                        // `read::budget`): the pipeline counts it instead.
                        let mut raw = raw;
                        drop(raw.body.take_lease());
                        Processed::Waiting(Box::new(raw), claim, host, unread)
                    }
                    (Some(claim), _) => {
                        Processed::Keyed(claim, self.doc_or_unchanged(raw, unread, &mut scratch))
                    }
                    (None, _) => match self.doc(raw, &mut scratch) {
                        Extracted::Doc(doc) => Processed::Doc(doc),
                        Extracted::Failed { offset, url, reason, detail, .. } => Processed::Skip {
                            skip: Skip::new(offset, reason, detail),
                            capture: Some((url, CaptureKind::Gone(0))),
                        },
                        // Only a document with a payload digest (and so a
                        // claim key) is looked up in the previous analysis.
                        Extracted::Unchanged(_) => unreachable!("doc() extracts"),
                    },
                },
                Item::Revisit(r) => Processed::Copy(CopyOf {
                    offset: r.offset,
                    keys: CopyIndex::revisit_keys(&r),
                    host: host_of(&r.url),
                    payload: Payload { digest: r.payload_digest.map_or(0, |d| d.0 as u64), decoding: 0 },
                    url: r.url,
                    bytes: 0,
                    revisit: true,
                    seen: Seen { date: r.date.unwrap_or_default(), status: CaptureStatus::Revisit },
                }),
                Item::Redirect(r) => Processed::Redirect {
                    offset: r.offset,
                    target: resolve(&r.url, &r.location),
                    url: r.url,
                    status: r.status,
                },
                Item::Skip(skip) => Processed::Skip { skip, capture: None },
                Item::Note(note) => Processed::Note(note),
                Item::Status(status) => {
                    let kind = if status.status == 304 {
                        CaptureKind::Same
                    } else {
                        CaptureKind::Gone(status.status)
                    };
                    Processed::Skip { skip: status.as_skip(), capture: Some((status.url, kind)) }
                }
            })
            .collect()
    }

    /// A document the previous analysis already has (the same URL, the
    /// same payload decoded the same way) is not extracted again; any other
    /// is extracted.
    /// `unread` is a page whose body the reader left compressed.
    fn doc_or_unchanged(&self, raw: RawDoc, unread: bool, scratch: &mut Scratch) -> Extracted {
        let payload = copies::payload_of(&raw);
        match self.unchanged.as_ref().and_then(|u| u.row(&raw.url, payload)) {
            Some(row) => Extracted::Unchanged(Unchanged {
                seen: Seen::of(&raw),
                offset: raw.offset,
                host: host_of(&raw.url),
                url: raw.url,
                bytes: raw.body.len() as u64,
                payload,
                row,
                unread,
            }),
            // The reader asked the same question: an unread page is known.
            None => {
                debug_assert!(!unread, "a page left unread is one the previous analysis has");
                self.doc(raw, scratch)
            }
        }
    }

    /// Extracts, normalizes and fingerprints one document.
    fn doc(&self, raw: RawDoc, scratch: &mut Scratch) -> Extracted {
        let payload = copies::payload_of(&raw);
        let seen = Seen::of(&raw);
        let mut text = match extract::extract_with(&raw, &mut scratch.text) {
            Ok(text) => text,
            Err(reason) => {
                return Extracted::Failed {
                    seen,
                    offset: raw.offset,
                    bytes: raw.body.len() as u64,
                    detail: raw.content_type.unwrap_or_default(),
                    url: raw.url,
                    reason,
                    payload,
                };
            }
        };
        let capped = extract::cap(&mut text, self.max_doc_bytes);
        let (fprints, chunks) = scratch.chunker.fingerprint_set(&text.text, self.chunking);
        let exact = (!text.text.is_empty()).then(|| exact_hash(&text.text));
        let fuzzy = if text.text.is_empty() {
            0
        } else {
            fuzzy::fuzzy(&text.text, fuzzy::MIN_TOKEN_LEN, fuzzy::QUANT_RATE)
        };
        let doc = DocOut {
            offset: raw.offset,
            host: host_of(&raw.url),
            url: raw.url,
            title: text.title.unwrap_or_default(),
            canonical: text.canonical.unwrap_or_default(),
            seen,
            bytes: raw.body.len() as u64,
            text_bytes: text.text.len() as u64,
            lines: text.lines,
            chunks,
            fprints,
            exact,
            capped,
            fuzzy,
            charset: text.charset,
            payload,
        };
        scratch.text.recycle(text.text);
        Extracted::Doc(doc)
    }
}

/// What is reused from document to document: by a worker through one
/// batch, and by the writer (for the documents it extracts after their
/// claim) through the whole stage.
#[derive(Default)]
struct Scratch {
    chunker: Chunker,
    text: extract::Buffers,
}

/// The copy index, also when a job panicked while holding it (a panic
/// stops the run anyway).
fn lock(index: &Mutex<CopyIndex>) -> MutexGuard<'_, CopyIndex> {
    index.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts one more `key`, allocating its name only the first time: this
/// runs for every document.
fn tally(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// A redirect's target: `location` resolved against `url`, or `location`
/// as sent when either does not parse.
fn resolve(url: &str, location: &str) -> String {
    url::Url::parse(url)
        .and_then(|base| base.join(location))
        .map(String::from)
        .unwrap_or_else(|_| location.to_string())
}

/// Writes processed records in input order and assigns docIDs.
struct Sink<'a> {
    inputs: Vec<String>,
    progress: &'a Progress,
    bar: indicatif::ProgressBar,
    /// For the bar, when every input's size is known: the bytes of the
    /// inputs before each one. The bar shows how far into its inputs
    /// (compressed bytes) the stage is, with a rate and a time to go;
    /// otherwise a spinner counts payload bytes.
    input_starts: Option<Vec<u64>>,
    parts: Vec<RecordWriter<ChunkRecord>>,
    exact: RecordWriter<ExactRecord>,
    fuzzy: RecordWriter<FuzzySignature>,
    docs: DocsWriter,
    redirects: CsvOut,
    /// `copies.csv`: the documents made without extraction.
    copy_list: CsvOut,
    /// What each record says of its URL ([`Capture`]), in input order.
    captures: RecordWriter<Capture>,
    /// Each document's payload, in docID order.
    payloads: RecordWriter<Payload>,
    /// Per document: the previous analysis's row whose values it has
    /// (not extracted), or `NONE`.
    borrowed: Borrowed,
    /// Documents not extracted because the previous analysis has them, and
    /// those of them whose body was not even decompressed.
    unchanged_payloads: u64,
    unread_payloads: u64,
    next_doc: u64,
    stats: FingerprintStats,
    /// The keys of the records read so far, for finding copies; shared
    /// with the jobs.
    index: Arc<Mutex<CopyIndex>>,
    /// For documents extracted here, after their claim ([`Hint::Wait`]).
    extractor: Extractor,
    scratch: Scratch,
    /// `(copy, original)` docIDs, in docID order.
    copies: copies::Copies,
    /// Revisits whose original was not known when they were written,
    /// settled after the ingest ([`late`]).
    late: LateRevisits,
}

impl<'a> Sink<'a> {
    fn create(
        out: &OutDir,
        cfg: &FingerprintConfig,
        scratch: &Path,
        progress: &'a Progress,
        extractor: Extractor,
    ) -> anyhow::Result<Self> {
        let captures =
            RecordWriter::create(&scratch.join(CAPTURES), Header::new::<Capture>("", false, 0, 1))?;
        let payloads =
            RecordWriter::create(&scratch.join(PAYLOADS), Header::new::<Payload>("", false, 0, 1))?;
        let spec = cfg.chunking.to_string();
        let mut parts = Vec::with_capacity(PARTITIONS as usize);
        for p in 0..PARTITIONS {
            let path = scratch.join(format!("unsorted-{p:05}.fpd"));
            parts.push(RecordWriter::create(&path, Header::new::<ChunkRecord>(&spec, false, p, PARTITIONS))?);
        }
        let exact =
            RecordWriter::create(&out.fprint_exact(), Header::new::<ExactRecord>(&spec, false, 0, 1))?;
        let fuzzy = RecordWriter::create(&out.fuzzy(), Header::new::<FuzzySignature>(&spec, false, 0, 1))?;
        let docs = DocsWriter::create(&out.fingerprint_docs(), DocTable::Fingerprint)?;
        let redirects = CsvOut::create(&out.redirects(), &["source", "url", "status", "target"])?;
        let copy_list = CsvOut::create(&out.copies(), &["doc_id", "original", "kind"])?;
        let inputs: Vec<String> = cfg.inputs.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let stats = FingerprintStats {
            chunk: spec,
            input_format: cfg.read.format.name().to_string(),
            url_field: cfg.read.url_field.clone(),
            text_field: cfg.read.text_field.clone(),
            inputs: cfg
                .inputs
                .iter()
                .zip(&inputs)
                .map(|(p, name)| InputStats {
                    file: name.clone(),
                    bytes: std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()),
                    ..InputStats::default()
                })
                .collect(),
            skipped: SkipReason::ALL.iter().map(|r| (r.name().to_string(), 0)).collect(),
            partitions: PARTITIONS,
            ..FingerprintStats::default()
        };
        let sizes: Option<Vec<u64>> = stats.inputs.iter().map(|i| i.bytes).collect();
        let input_starts = sizes.filter(|_| cfg.inputs.iter().all(|p| p.as_os_str() != "-")).map(|sizes| {
            sizes.iter().scan(0u64, |at, &n| Some(std::mem::replace(at, *at + n))).collect::<Vec<u64>>()
        });
        let total = input_starts
            .as_ref()
            .zip(stats.inputs.last())
            .map(|(starts, last)| starts.last().copied().unwrap_or(0) + last.bytes.unwrap_or(0));
        let bar = progress.bytes("fingerprint", total);
        Ok(Sink {
            inputs,
            progress,
            bar,
            input_starts,
            parts,
            exact,
            fuzzy,
            docs,
            redirects,
            copy_list,
            captures,
            payloads,
            borrowed: Borrowed::new(cfg.previous.is_some()),
            unchanged_payloads: 0,
            unread_payloads: 0,
            next_doc: 0,
            stats,
            index: Arc::new(Mutex::new(CopyIndex::new(cfg.memory / 4, &scratch.join("copy-index")))),
            extractor,
            scratch: Scratch::default(),
            copies: Vec::new(),
            late: LateRevisits::new(scratch),
        })
    }

    /// Writes a processed batch, in input order. It only borrows the batch,
    /// which is then dropped on the worker that made it (see [`pipeline`]).
    fn write(&mut self, done: &mut Done) -> anyhow::Result<()> {
        let input = done.input;
        self.stats.inputs[input].segments = done.segments as u64;
        if let Some(why) = done.skipped {
            self.skip_input(input, why);
        }
        for item in &mut done.items {
            // A note is about the input, not a record.
            if !matches!(item, Processed::Note(_)) {
                self.advance(input, item);
                self.stats.records += 1;
                self.stats.inputs[input].records += 1;
            }
            match item {
                Processed::Skip { skip, capture } => {
                    let detail = std::mem::take(&mut skip.detail);
                    self.skip(input, Skip { detail, ..*skip });
                    if let Some((url, kind)) = capture {
                        self.capture(url, *kind)?;
                    }
                }
                Processed::Doc(doc) => {
                    self.doc(input, doc)?;
                }
                Processed::Keyed(claim, extracted) => {
                    let claim = self.claim(claim)?;
                    self.claimed(input, claim, extracted)?;
                }
                Processed::Waiting(raw, claim, host, unread) => match self.claim(claim)? {
                    Claim::Copy(key) => {
                        let bytes = raw.body.len() as u64;
                        let payload = copies::payload_of(raw);
                        // The strings are lent to the copy and given back.
                        let url = std::mem::take(&mut raw.url);
                        let seen = Seen::of(raw);
                        let copy =
                            CopyOf::payload(raw.offset, url, std::mem::take(host), bytes, key, payload, seen);
                        let written = self.copy(input, &copy);
                        (raw.url, *host) = (copy.url, copy.host);
                        written?;
                    }
                    // The record first in input order with this payload was
                    // decoded another way: extract it after all.
                    claim => {
                        let raw = std::mem::take(&mut **raw);
                        let mut extracted = self.extractor.doc_or_unchanged(raw, *unread, &mut self.scratch);
                        self.claimed(input, claim, &mut extracted)?;
                    }
                },
                Processed::Copy(copy) => self.copy(input, copy)?,
                Processed::Redirect { offset, url, status, target } => {
                    self.skip(input, Skip::new(*offset, SkipReason::HttpRedirect, ""));
                    self.capture(url, CaptureKind::Redirect(*status))?;
                    let source = Source { input: &self.inputs[input], offset: *offset }.to_string();
                    self.redirects.row([source.as_str(), url, &status.to_string(), target])?;
                }
                Processed::Note(note) => {
                    self.progress.warn(&format!("{}: {}", self.inputs[input], note.message));
                }
            }
        }
        Ok(())
    }

    fn claim(&self, claim: &ClaimKey) -> anyhow::Result<Claim> {
        lock(&self.index).claim(claim)
    }

    /// Writes an extracted document as its claim makes it: a copy of an
    /// earlier record, or a document (or skip) of its own, whose outcome
    /// is recorded when it is the original of its key.
    fn claimed(&mut self, input: usize, claim: Claim, extracted: &mut Extracted) -> anyhow::Result<()> {
        let outcome = match (claim, extracted) {
            // A document read before its original: written as a copy (its
            // strings are not needed after).
            (Claim::Copy(key), Extracted::Doc(doc)) => {
                let (url, host) = (std::mem::take(&mut doc.url), std::mem::take(&mut doc.host));
                let seen = std::mem::take(&mut doc.seen);
                return self
                    .copy(input, &CopyOf::payload(doc.offset, url, host, doc.bytes, key, doc.payload, seen));
            }
            (Claim::Copy(key), Extracted::Failed { offset, url, bytes, payload, seen, .. }) => {
                let host = host_of(url);
                let url = std::mem::take(url);
                let seen = std::mem::take(seen);
                return self.copy(input, &CopyOf::payload(*offset, url, host, *bytes, key, *payload, seen));
            }
            (Claim::Copy(key), Extracted::Unchanged(u)) => {
                let (url, host) = (std::mem::take(&mut u.url), std::mem::take(&mut u.host));
                let seen = std::mem::take(&mut u.seen);
                return self
                    .copy(input, &CopyOf::payload(u.offset, url, host, u.bytes, key, u.payload, seen));
            }
            (_, Extracted::Doc(doc)) => Became::Doc(self.doc(input, doc)?),
            (_, Extracted::Unchanged(u)) => Became::Doc(self.unchanged(input, u)?),
            (_, Extracted::Failed { offset, url, reason, detail, .. }) => {
                self.skip(input, Skip::new(*offset, *reason, std::mem::take(detail)));
                self.capture(url, CaptureKind::Gone(0))?;
                Became::Skip(*reason)
            }
        };
        if let Claim::Original(key) = claim {
            lock(&self.index).record(key, outcome);
        }
        Ok(())
    }

    /// Moves the bar to where `item` starts in its input. Offsets past the
    /// input's size (positions in decompressed data) count as its end.
    fn advance(&mut self, input: usize, item: &Processed) {
        let Some(starts) = &self.input_starts else { return };
        let offset = match item {
            Processed::Doc(doc) | Processed::Keyed(_, Extracted::Doc(doc)) => doc.offset,
            Processed::Keyed(
                _,
                Extracted::Failed { offset, .. } | Extracted::Unchanged(Unchanged { offset, .. }),
            )
            | Processed::Skip { skip: Skip { offset, .. }, .. }
            | Processed::Redirect { offset, .. }
            | Processed::Note(read::Note { offset, .. }) => *offset,
            Processed::Waiting(raw, ..) => raw.offset,
            Processed::Copy(copy) => copy.offset,
        };
        let size = self.stats.inputs[input].bytes.unwrap_or(0);
        let at = starts.get(input).copied().unwrap_or(0) + offset.min(size);
        if at > self.bar.position() {
            self.bar.set_position(at);
        }
    }

    /// Counts and reports an input that holds no records to read.
    fn skip_input(&mut self, input: usize, why: InputSkip) {
        self.stats.inputs_skipped += 1;
        self.stats.inputs[input].skipped = Some(why.name().to_string());
        let what = match why {
            InputSkip::Empty => "it is empty",
            InputSkip::Directory => "it is a directory (give the crawl files in it instead)",
        };
        self.progress.warn(&format!("{}: skipped input ({}): {what}", self.inputs[input], why.name()));
    }

    fn skip(&mut self, input: usize, skip: Skip) {
        let Skip { offset, line, reason, detail } = skip;
        let of_input = &mut self.stats.inputs[input];
        // Counted without a new key string per record: every request
        // record is a skip.
        tally(&mut of_input.skipped_records, reason.name());
        of_input.corrupt_records += u64::from(reason.is_corrupt());
        tally(&mut self.stats.skipped, reason.name());
        let count = self.stats.skipped.get(reason.name()).copied().unwrap_or(0);
        let file = &self.inputs[input];
        // Where the warnings say the record is: its line where the format
        // gives one (JSONL), its offset otherwise.
        let at = || match line {
            Some(line) => format!("{file} line {line}"),
            None => format!("{file}:{offset}"),
        };
        // A record over the limit is well-formed and would have been a
        // document: say so, for the first ones, with the flag that reads it.
        if reason == SkipReason::RecordTooLarge && count <= CORRUPT_SAMPLES as u64 {
            self.progress.warn(&format!(
                "{}: skipped record ({}): {detail}; --max-record-bytes raises the limit",
                at(),
                reason.name()
            ));
        }
        if !reason.is_corrupt() {
            return;
        }
        self.stats.corrupt_records += 1;
        if self.stats.corrupt.len() < CORRUPT_SAMPLES {
            self.progress.warn(&format!("{}: skipped record ({}): {detail}", at(), reason.name()));
            self.stats.corrupt.push(CorruptSample {
                file: file.clone(),
                offset,
                line,
                reason: reason.name().to_string(),
                detail,
            });
        }
    }

    /// Writes a document whose fields, fingerprints and signatures the
    /// previous analysis has: its own row names it, and the rest is taken
    /// from there when the analysis is carried forward.
    fn unchanged(&mut self, input: usize, u: &Unchanged) -> anyhow::Result<u32> {
        let id = self.next_id(input)?;
        self.unchanged_payloads += 1;
        self.unread_payloads += u64::from(u.unread);
        self.borrowed.push(u.row);
        self.payloads.push(&u.payload)?;
        self.fuzzy.push(&FuzzySignature(0))?;
        self.docs.push(&Doc {
            id,
            url: &u.url,
            host: &u.host,
            source: Source { input: &self.inputs[input], offset: u.offset },
            text: None,
            center: None,
            missing_for: 0,
            crawled: u.seen.crawled(),
            near_group: None,
        })?;
        self.capture(&u.url, CaptureKind::Doc(id))?;
        Ok(id)
    }

    /// Notes what the record just written says of its URL, for the URL
    /// table and for matching a recrawl to the previous analysis.
    fn capture(&mut self, url: &str, kind: CaptureKind) -> anyhow::Result<()> {
        self.capture_at(url, kind, self.stats.records)
    }

    /// A capture of `url`, ordered among its URL's captures by `order`, the
    /// records read before it.
    fn capture_at(&mut self, url: &str, kind: CaptureKind, order: u64) -> anyhow::Result<()> {
        if url.is_empty() {
            return Ok(());
        }
        self.captures.push(&Capture { key: url_key(url), order, kind })
    }

    /// The next docID, counted as a document of `input`.
    fn next_id(&mut self, input: usize) -> anyhow::Result<u32> {
        let id = self.next_doc;
        if id >= u64::from(u32::MAX) {
            bail!("more than {} documents: too many for one local run", u32::MAX - 1);
        }
        self.next_doc += 1;
        self.stats.documents += 1;
        self.stats.inputs[input].documents += 1;
        Ok(id as u32)
    }

    /// Writes a copy of an earlier document, or skips it as its original
    /// was skipped; its text fields are filled in after the ingest. A
    /// revisit whose original is not known yet is set aside until every
    /// input is read ([`late`]).
    fn copy(&mut self, input: usize, copy: &CopyOf) -> anyhow::Result<()> {
        let found = self.original_of(copy)?;
        let order = self.stats.records;
        if found.is_none() && copy.revisit {
            return self.late.push(input, order, copy);
        }
        self.settle(input, copy, found, order)
    }

    /// What became of the record `copy` names as its original, if it was
    /// read.
    fn original_of(&self, copy: &CopyOf) -> anyhow::Result<Option<Became>> {
        let mut index = lock(&self.index);
        for key in copy.keys.iter().flatten() {
            if let Some(found) = index.outcome(key)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Writes `copy` as what its original `found` became, `order` the
    /// records read before it.
    fn settle(
        &mut self,
        input: usize,
        copy: &CopyOf,
        found: Option<Became>,
        order: u64,
    ) -> anyhow::Result<()> {
        let original = match found {
            Some(Became::Doc(original)) => original,
            Some(Became::Skip(reason)) => {
                let detail = "same payload as an earlier record skipped for this reason";
                self.skip(input, Skip::new(copy.offset, reason, detail));
                return self.capture_at(&copy.url, CaptureKind::Gone(0), order);
            }
            Some(Became::Pending) | None => {
                // A revisit of a capture not in these inputs: as far as
                // they tell, the page is as it was.
                self.skip(input, Skip::new(copy.offset, SkipReason::RevisitUnresolved, ""));
                return self.capture_at(&copy.url, CaptureKind::Same, order);
            }
        };
        let id = self.next_id(input)?;
        let kind = if copy.revisit {
            self.stats.revisits += 1;
            "revisit"
        } else {
            self.stats.payload_digest_copies += 1;
            self.stats.payload_digest_copy_bytes += copy.bytes;
            "payload_digest"
        };
        // Its original's fields and signature are filled in after the
        // ingest, or taken from the previous analysis with the original's.
        let borrowed = self.borrowed.get(original);
        if borrowed == store::handles::NONE {
            self.copies.push((id, original));
        }
        self.borrowed.push(borrowed);
        self.payloads.push(&copy.payload)?;
        self.fuzzy.push(&FuzzySignature(0))?;
        self.docs.push(&Doc {
            id,
            url: &copy.url,
            host: &copy.host,
            source: Source { input: &self.inputs[input], offset: copy.offset },
            text: None,
            center: None,
            missing_for: 0,
            crawled: copy.seen.crawled(),
            near_group: None,
        })?;
        self.capture_at(&copy.url, CaptureKind::Doc(id), order)?;
        self.copy_list.row([id.to_string().as_str(), &original.to_string(), kind])
    }

    fn doc(&mut self, input: usize, doc: &DocOut) -> anyhow::Result<u32> {
        let id32 = self.next_id(input)?;
        self.stats.document_bytes += doc.bytes;
        self.stats.text_bytes += doc.text_bytes;
        self.stats.lines += doc.lines;
        self.stats.chunks += doc.chunks;
        self.stats.fingerprints += doc.fprints.len() as u64;
        if doc.capped {
            self.stats.capped_documents += 1;
            self.stats.inputs[input].capped_documents += 1;
        }
        if let Some((source, encoding, malformed)) = doc.charset {
            tally(&mut self.stats.charset_sources, source.name());
            tally(&mut self.stats.encodings, encoding);
            self.stats.malformed_encoding_documents += u64::from(malformed);
        }
        match doc.exact {
            Some(hash) => self.exact.push(&ExactRecord { hash, doc: id32 })?,
            None => self.stats.empty_documents += 1,
        }
        self.fuzzy.push(&FuzzySignature(doc.fuzzy))?;
        self.payloads.push(&doc.payload)?;
        self.borrowed.push(store::handles::NONE);
        for &fprint in &doc.fprints {
            let p = (fprint >> PARTITION_SHIFT) as usize;
            self.parts[p].push(&ChunkRecord { fprint, doc: id32 })?;
        }
        self.docs.push(&Doc {
            id: id32,
            url: &doc.url,
            host: &doc.host,
            source: Source { input: &self.inputs[input], offset: doc.offset },
            text: Some(TextFields {
                bytes: doc.bytes,
                lines: doc.lines,
                chunks: doc.chunks,
                title: &doc.title,
                canonical: &doc.canonical,
            }),
            center: None,
            missing_for: 0,
            crawled: doc.seen.crawled(),
            near_group: None,
        })?;
        self.capture(&doc.url, CaptureKind::Doc(id32))?;
        if self.input_starts.is_none() {
            self.bar.inc(doc.bytes);
        }
        Ok(id32)
    }

    fn finish(mut self) -> anyhow::Result<Ingested> {
        self.settle_late()?;
        self.bar.finish_and_clear();
        // The warnings stop at the samples kept; say that they did.
        let too_large = self.stats.skipped.get(SkipReason::RecordTooLarge.name()).copied().unwrap_or(0);
        for (warned, what) in [
            (self.stats.corrupt_records, ("more skipped corrupt record", "more skipped corrupt records")),
            (too_large, ("more record over --max-record-bytes", "more records over --max-record-bytes")),
        ] {
            let unsaid = warned.saturating_sub(CORRUPT_SAMPLES as u64);
            if unsaid > 0 {
                let (one, many) = what;
                self.progress.warn(&format!("... and {} (counted in stats.json)", count(unsaid, one, many)));
            }
        }
        for part in self.parts {
            part.finish()?;
        }
        self.exact.finish()?;
        self.fuzzy.finish()?;
        self.docs.finish()?;
        self.redirects.finish()?;
        self.copy_list.finish()?;
        self.captures.finish()?;
        self.payloads.finish()?;
        Ok(Ingested {
            stats: self.stats,
            copies: self.copies,
            borrowed: self.borrowed.into_rows(),
            unchanged_payloads: self.unchanged_payloads,
            unread_payloads: self.unread_payloads,
        })
    }
}

impl Sink<'_> {
    /// Settles the revisits set aside, now that every input is read: one
    /// whose original some input held is a document, numbered after every
    /// input's documents (so `first_doc` in the manifest no longer gives
    /// its input's docIDs); the others are skipped as unresolved, and
    /// warned of.
    fn settle_late(&mut self) -> anyhow::Result<()> {
        let late = std::mem::replace(&mut self.late, LateRevisits::new(Path::new("")));
        let mut unresolved = 0u64;
        let mut first: Option<(usize, u64)> = None;
        late.drain(|Late { input, order, copy }| {
            let found = self.original_of(&copy)?;
            match found {
                Some(Became::Doc(_)) => self.stats.late_revisits += 1,
                Some(Became::Skip(_)) => {}
                Some(Became::Pending) | None => {
                    unresolved += 1;
                    first.get_or_insert((input, copy.offset));
                }
            }
            self.settle(input, &copy, found, order)
        })?;
        if let Some((input, offset)) = first {
            let names = if unresolved == 1 { "it names" } else { "each names" };
            self.progress.warn(&format!(
                "{} skipped as revisit_unresolved: {names} a capture that no input holds (the first \
                 at {}:{offset}); give the inputs that hold the original captures too, in any order, \
                 to count them as documents",
                count(unresolved, "revisit record", "revisit records"),
                self.inputs[input]
            ));
        }
        Ok(())
    }
}

/// Sorts every unsorted partition into its final file, in parallel, each
/// within its share of the memory budget.
fn sort_partitions(
    out: &OutDir,
    cfg: &FingerprintConfig,
    scratch: &Path,
    by_original: &copies::ByOriginal,
    stats: &mut FingerprintStats,
    progress: &Progress,
) -> anyhow::Result<Vec<PathBuf>> {
    let share = cfg.memory / rayon::current_num_threads().max(1) as u64;
    let bar = progress.items("sort", u64::from(PARTITIONS), "partitions");
    let spec = cfg.chunking.to_string();
    let results: Vec<anyhow::Result<(PathBuf, u64, u64)>> = (0..PARTITIONS)
        .into_par_iter()
        .map(|p| {
            let src_path = scratch.join(format!("unsorted-{p:05}.fpd"));
            let src = Mapped::<ChunkRecord>::open(&src_path)?;
            let dst_path = out.fprint_part(p);
            let mut dst =
                RecordWriter::create(&dst_path, Header::new::<ChunkRecord>(&spec, true, p, PARTITIONS))?;
            let part_scratch = scratch.join(format!("sort-{p:05}"));
            std::fs::create_dir_all(&part_scratch)
                .with_context(|| format!("cannot create {}", part_scratch.display()))?;
            let mut last: Option<ChunkRecord> = None;
            let mut distinct = 0u64;
            let mut copies = copies::Expander::new(by_original);
            let mut emit = |r: ChunkRecord| dst.push(&r);
            store::sort::sorted(&src, share, &part_scratch, |r| {
                if last == Some(r) {
                    return Ok(());
                }
                if last.is_none_or(|l| l.fprint != r.fprint) {
                    distinct += 1;
                }
                last = Some(r);
                copies.push(r, &mut emit)
            })?;
            copies.flush(&mut emit)?;
            dst.finish()?;
            drop(src);
            std::fs::remove_file(&src_path)
                .with_context(|| format!("cannot remove {}", src_path.display()))?;
            bar.inc(1);
            Ok((dst_path, distinct, copies.added))
        })
        .collect();
    bar.finish_and_clear();
    let mut parts = Vec::with_capacity(results.len());
    for r in results {
        let (path, distinct, copied) = r?;
        stats.distinct_fingerprints += distinct;
        stats.fingerprints += copied;
        parts.push(path);
    }
    Ok(parts)
}
