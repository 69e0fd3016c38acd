//! The command line: flags in, validated configuration out, stages called.
//!
//! Parsing is two steps, as in ripgrep: clap turns the arguments into the
//! structs below as the user typed them, and `Config`-style values
//! (`FingerprintConfig`, `PairsConfig`) are built from them; nothing below
//! this module sees a raw string.

pub(crate) mod manual;
pub mod preset;

use std::io::{self, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::base::memory::ByteSize;
use crate::base::progress::Progress;
use crate::bytes::chunk::Chunking;
use crate::bytes::read::{InputFormat, ReadOptions};
use crate::commands::dedup::{self, DedupConfig};
use crate::commands::{dump, eval, explain};
use crate::stages::exact::{self, ExactConfig};
use crate::stages::fingerprint::{self, FingerprintConfig, PreviousConfig};
use crate::stages::pairs::{self, CoarseVariant, Criterion, Method, PairsConfig, Ratio, TemplateRule};
use crate::stages::report::{self, FuzzyConfig, ReportConfig};
use crate::stages::{export, export_tables};
use crate::store::OutDir;
use crate::store::analysis::keep::KeepRule;
use crate::store::scopes::Scope;
use crate::store::stage::Outcome;
use crate::store::stats::{FingerprintStats, Section, Summary};
use preset::{Defaults, Preset};

/// Measures how much of a web crawl is copied: exact copies, and every pair
/// of documents sharing at least T chunk fingerprints (the Overlap table).
#[derive(Parser, Debug)]
#[command(name = "overlap", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print no progress and no warnings (errors still go to stderr).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Print each stage's summary line on stderr even when it is not a terminal (and with -q).
    #[arg(long, global = true)]
    stats: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Fingerprint, remove exact copies, count pairs and audit the crawl: the four stages in a row.
    Run(RunArgs),
    /// Read crawl dumps and write the FPrint-DocID files and document table.
    Fingerprint(FingerprintArgs),
    /// Find exact copies (smallest docID is the center) and write docs.csv.
    Exact(ExactArgs),
    /// Count shared fingerprints per document pair and write overlap.csv.
    Pairs(PairsArgs),
    /// Audit the crawl: replica histogram, recrawl savings, groups, mirrors, URL aliases,
    /// per-document flags; writes report.json, report.html and CSV tables.
    Report(ReportArgs),
    /// Write the documents a recrawl would keep (the report's savings rule) as JSONL, WARC or a
    /// URL list.
    Dedup(DedupArgs),
    /// Undo `dedup --format warc-revisits`: write WARC files again with each revisit record
    /// replaced by the response it stands for.
    ///
    /// Every revisit of profile identical-payload-digest whose original capture is among the FILEs
    /// (named by WARC-Refers-To, or by WARC-Refers-To-Target-URI and -Date) becomes that response:
    /// the revisit's header as a response's and its HTTP header with the original's payload; of a
    /// revisit dedup wrote, the record it replaced, byte for byte. Crawl-time revisits (Heritrix,
    /// browsertrix) expand the same way. Every other record is copied as it is stored, one gzip
    /// member per record. The FILEs are WARC, plain or compressed record by record; each is written
    /// under its own name into DIR.
    Expand(ExpandArgs),
    /// Print the FPrint-DocID records of an output directory as CSV.
    Dump(DumpArgs),
    /// Move an analysis written by an earlier overlap to this one's layout: its record files into
    /// records/, the same bytes, still up to date.
    ///
    /// Every command that writes into a directory does this first; a command that only reads an
    /// analysis (dedup, explain, eval, dump, and a --previous) refuses one of an earlier layout and
    /// names this command.
    Migrate(MigrateArgs),
    /// Show what two documents share: F, their Jaccard similarity and the text of every shared
    /// chunk.
    ///
    /// A and B are docIDs or URLs as docs.csv records them (a URL of several documents is refused,
    /// with their docIDs).
    ///
    /// Prints both URLs; F, the distinct chunk fingerprints both documents hold, as overlap.csv's
    /// `shared` counts them (the stop chunks of --max-df left out); the Jaccard similarity of their
    /// chunk sets (stop chunks in); whether overlap.csv lists the pair, and why not; then every
    /// chunk they share, in the order it first appears in A, with its fingerprint and its text,
    /// stop chunks marked. An exact copy has its center's chunks, and the table lists only the
    /// center's pairs.
    ///
    /// The two documents' records are read again from the inputs, at the offsets docs.csv keeps,
    /// and their texts checked against the ones the analysis fingerprinted: a document read from
    /// standard input, or from an input changed or removed since, cannot be explained (exit 2).
    /// Nothing is written into DIR and its lock is not taken, so it runs while another command
    /// holds DIR; an analysis with a stage not finished is refused.
    Explain(ExplainArgs),
    /// Measure a run's near-duplicate pairs and clusters, or another tool's, against an exact
    /// answer: precision, recall and F1, and recall per Jaccard bin.
    Eval(EvalArgs),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the overlap(1) man page as roff, or write every command's page into a directory.
    Man(ManArgs),
    /// Fill in the text column of a stop-chunks.csv written by the Spark job, from the inputs.
    #[command(hide = true)]
    StopTexts(StopTextsArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    preset: PresetArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    scope: ScopeArgs,
    #[command(flatten)]
    count: CountArgs,
    #[command(flatten)]
    audit: AuditArgs,
    #[command(flatten)]
    resources: ResourceArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct FingerprintArgs {
    #[command(flatten)]
    preset: PresetArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    resources: ResourceArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// `parquet` also writes the tables as Parquet into parquet/, typed, for Spark, DuckDB or
    /// pandas: postings.parquet and fingerprint-docs.parquet after the fingerprint stage
    /// (`fingerprint`, `run`), and, after the report, NAME.parquet for every final table NAME.csv
    /// (`report`, `run`); `csv` writes only the usual files.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = OutputFormat::Csv)]
    format: OutputFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    Csv,
    Parquet,
}

impl OutputArgs {
    /// The Parquet export of the fingerprint stage's outputs, when asked
    /// for; after the fingerprint stage.
    fn export(&self, out: &OutDir, progress: &Progress) -> anyhow::Result<()> {
        if self.format == OutputFormat::Parquet {
            report(progress, out, export::run(out, progress)?);
        }
        Ok(())
    }

    /// The Parquet export of every table, when asked for; after the report.
    fn export_tables(&self, out: &OutDir, progress: &Progress) -> anyhow::Result<()> {
        if self.format == OutputFormat::Parquet {
            report(progress, out, export_tables::run(out, progress)?);
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
struct ExactArgs {
    /// Output directory of `overlap fingerprint`.
    dir: PathBuf,
    #[command(flatten)]
    scope: ScopeArgs,
    #[command(flatten)]
    resources: ResourceArgs,
}

#[derive(Args, Debug)]
struct PresetArgs {
    /// The defaults for --chunk, the criterion (-T, --jaccard, --containment) and --template:
    /// `default` (each line a chunk, each host's template lines left out, pairs with Jaccard >=
    /// 0.5 and containment >= 0.8: finds mirrors wrapped in banners, aliases and new versions;
    /// see docs/defaults.md), or the paper's `paper` (lines:4, T = 15), `paper-lines2` (lines:2,
    /// T = 25) and `paper-doc` (doc, T = 1), without template chunks. A flag given beside it
    /// wins: --chunk replaces the chunking, any of -T, --jaccard and --containment the whole
    /// criterion.
    /// With --previous and no --preset, the previous analysis's settings are the defaults: the
    /// analyses of a chain are cut and counted alike; for `pairs`, those of the preset that cuts
    /// documents as the analysis was cut.
    #[arg(long, value_name = "NAME", value_parser = Named::new(PRESETS, parse_preset), hide_possible_values = true)]
    preset: Option<Preset>,
}

impl PresetArgs {
    /// The defaults: the preset's, or, for an analysis carried forward
    /// without a --preset, those the previous analysis ran with (its chunking,
    /// and its criterion and template rule where its pairs stage ran).
    fn defaults(&self, previous: Option<&std::path::Path>, progress: &Progress) -> Defaults {
        let preset = self.preset.unwrap_or_default().defaults();
        let (Some(dir), None) = (previous, self.preset) else { return preset };
        // A previous analysis that cannot be read is the fingerprint
        // stage's error to report, naming it.
        let Ok(manifest) = crate::store::Manifest::read(&OutDir::new(dir)) else { return preset };
        let Ok(chunking) = manifest.chunking() else { return preset };
        let pairs = manifest.pairs.as_ref();
        let criterion = pairs.and_then(|p| p.criterion().ok()).unwrap_or(preset.criterion);
        let template = match pairs {
            Some(p) => p.template.as_deref().and_then(|t| t.parse().ok()),
            None => preset.template,
        };
        let carried = Defaults { chunking, criterion, template };
        if carried != preset {
            progress.warn(&format!(
                "--previous {} was made with --chunk {chunking}, {}{}: this analysis keeps them, as a \
                 chain is cut and counted alike (--preset NAME starts from a preset instead)",
                dir.display(),
                criterion.describe(),
                template.map_or(String::new(), |t| format!(", --template {t}")),
            ));
        }
        carried
    }

    /// The defaults of `overlap pairs` on the analysis in `out`: the
    /// preset's, or, without --preset, those of the preset that cuts
    /// documents as the analysis was cut (its fingerprint stage's --preset
    /// paper makes `pairs` count as the paper does), else the default's.
    fn defaults_of(&self, out: &OutDir) -> Defaults {
        let cut = || crate::store::Manifest::read(out).ok()?.chunking().ok().and_then(Preset::cutting);
        self.preset.or_else(cut).unwrap_or_default().defaults()
    }
}

#[derive(Args, Debug)]
struct ScopeArgs {
    /// Where exact copies and Overlap pairs are looked for: `crawl` (every document with
    /// every other), `host` (documents of the same host only) or `site` (of the same
    /// registrable domain, by the public suffix list).
    #[arg(
        long,
        value_name = "SCOPE",
        default_value = "crawl",
        value_parser = Named::new(SCOPES, parse_scope),
        hide_possible_values = true
    )]
    scope: Scope,
}

impl ScopeArgs {
    fn config(&self, memory: ByteSize) -> ExactConfig {
        ExactConfig { memory: memory.0, scope: self.scope }
    }
}

#[derive(Args, Debug)]
struct PairsArgs {
    /// Output directory of `overlap exact`.
    dir: PathBuf,
    #[command(flatten)]
    preset: PresetArgs,
    #[command(flatten)]
    count: CountArgs,
    #[command(flatten)]
    resources: ResourceArgs,
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Output directory of `overlap pairs`.
    dir: PathBuf,
    /// Output directories of other runs over the same inputs (other chunkings or thresholds),
    /// each with its own report: their near-replica histograms and savings are shown beside
    /// this run's.
    #[arg(long, value_name = "DIR", num_args = 1..)]
    compare: Vec<PathBuf>,
    #[command(flatten)]
    audit: AuditArgs,
    #[command(flatten)]
    resources: ResourceArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct AuditArgs {
    /// Fuzzy signature: tokens of this many characters or fewer are left out (YaCy's
    /// MIN_TOKEN_LEN). The fingerprint stage stores signatures with the defaults; other values
    /// make the report read every input again.
    #[arg(long, value_name = "N", default_value_t = crate::bytes::fuzzy::MIN_TOKEN_LEN)]
    min_token_len: usize,
    /// Fuzzy signature: word counts are rounded down to multiples of this share of the most
    /// frequent word's count (YaCy's QUANT_RATE).
    #[arg(long, value_name = "RATE", default_value_t = crate::bytes::fuzzy::QUANT_RATE, value_parser = parse_rate)]
    quant_rate: f64,
    /// Leave the fuzzy signatures out of flags.csv.
    #[arg(long)]
    no_fuzzy: bool,
    /// Which copy stands for a group in the savings, the host summary and the next analysis's
    /// comparison (and dedup's default): criteria as `dedup --keep` takes them.
    #[arg(long, value_name = "RULE[,RULE...]", default_value = "input-order", value_parser = KeepRule::parse)]
    keep: KeepRule,
}

#[derive(Args, Debug)]
struct DedupArgs {
    /// Output directory of `overlap run` (or of `overlap pairs`; of `overlap exact` is enough for
    /// --level exact). It is only read.
    dir: PathBuf,
    /// Which documents are kept, by the savings rule of the report (under --keep's order).
    #[arg(long, value_name = "LEVEL", value_enum, default_value_t = LevelArg::Near)]
    level: LevelArg,
    /// What is written for each kept document.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = DedupFormatArg::Jsonl)]
    format: DedupFormatArg,
    /// The file to write (under a temporary name, renamed when complete; not inside DIR); `-`
    /// writes to standard output. For --format warc-revisits, the directory to write the files
    /// into (made when missing).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// With --format warc-revisits: write `index.cdxj` beside the files, the CDXJ index a replay
    /// tool (pywb) reads.
    #[arg(long)]
    cdxj: bool,
    /// With --format warc-revisits on an analysis carried forward (--previous): write revisit
    /// records of captures in the files written only. Without it, a page unchanged since the
    /// previous analysis becomes a revisit of its capture in the previous crawl's WARC file (the
    /// same payload bytes), which a replay resolves from a collection holding that file too
    #[arg(long)]
    self_contained: bool,
    /// Which copy stands for a group: criteria tried in order, ties going to the next and at last
    /// to the smaller docID. `capture` (a response over a record without HTTP, a revisit last),
    /// `newest` or `oldest` (WARC-Date; undated last), `https`, `shortest-url`, `canonical` (a page
    /// whose rel=canonical names itself, then one naming none), `longest-text` (most lines),
    /// `input-order` (the smallest docID: the paper's rule). Default: the rule the report counted
    /// by (`run --keep`), else `input-order`.
    #[arg(long, value_name = "RULE[,RULE...]", value_parser = KeepRule::parse)]
    keep: Option<KeepRule>,
    #[command(flatten)]
    resources: ResourceArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LevelArg {
    /// Keep one copy of each exact group (its smallest docID) and every empty document.
    Exact,
    /// Skip near-replicas too: pages in docID order, each skipped when a kept page is its exact
    /// copy or its near-replica (a pair of the Overlap table).
    Near,
    /// Only the pages the reference of `--against REF_DIR` does not hold (against.csv's `held`):
    /// copies inside this crawl are all kept.
    Against,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DedupFormatArg {
    /// One JSON object per line, in input order: doc_id, url, source and the normalized text the
    /// fingerprints were taken of (null for a record holding no page of its own, a revisit).
    Jsonl,
    /// Each document's WARC record, header and block byte for byte, one gzip member per record,
    /// in input order (WARC inputs only).
    Warc,
    /// One URL per line, in docID order (reads no input; documents without a URL are left out).
    Urls,
    /// The skip list for the next crawl: CSV `url,kept_url,why,rule`, one row per document the
    /// rule skips (`exact` or `near`), with the URL of the kept document that stands for it and
    /// the --keep criterion that put that one first, in docID order (reads no input).
    Skip,
    /// Every WARC input written again into the directory -o names, under its own name, each exact
    /// copy whose payload is its kept capture's replaced by a revisit record naming that capture
    /// (profile identical-payload-digest), every other record copied as it is stored; at --level
    /// near a metadata record after each near-replica names the page that stands for it.
    WarcRevisits,
}

impl DedupArgs {
    fn config(&self, memory: ByteSize) -> DedupConfig {
        DedupConfig {
            level: match self.level {
                LevelArg::Exact => dedup::Level::Exact,
                LevelArg::Near => dedup::Level::Near,
                LevelArg::Against => dedup::Level::Against,
            },
            format: match self.format {
                DedupFormatArg::Jsonl => dedup::Format::Jsonl,
                DedupFormatArg::Warc => dedup::Format::Warc,
                DedupFormatArg::Urls => dedup::Format::Urls,
                DedupFormatArg::Skip => dedup::Format::Skip,
                DedupFormatArg::WarcRevisits => dedup::Format::WarcRevisits,
            },
            out: if matches!(self.format, DedupFormatArg::WarcRevisits) {
                dedup::Destination::Dir(self.out.clone())
            } else if self.out.as_os_str() == "-" {
                dedup::Destination::Stdout
            } else {
                dedup::Destination::File(self.out.clone())
            },
            keep: self.keep.clone(),
            cdxj: self.cdxj,
            self_contained: self.self_contained,
            memory: memory.0,
        }
    }
}

#[derive(Args, Debug)]
struct ExpandArgs {
    /// WARC files, as `dedup --format warc-revisits` wrote them (or any crawl with revisits).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<PathBuf>,
    /// The directory to write into (made when missing; not the inputs' own).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct DumpArgs {
    /// Output directory of `overlap fingerprint`.
    dir: PathBuf,
    /// Print FPrint-DocID-Exact (whole-text hashes) instead of the chunk fingerprints.
    #[arg(long)]
    exact: bool,
}

#[derive(Args, Debug)]
struct MigrateArgs {
    /// Output directory of an earlier overlap.
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct ExplainArgs {
    /// Output directory of `overlap run` (or of `overlap exact` or `overlap pairs`).
    dir: PathBuf,
    /// The first document: its docID, or its URL.
    #[arg(value_name = "A")]
    a: String,
    /// The second document: its docID, or its URL.
    #[arg(value_name = "B")]
    b: String,
    /// Print one JSON object: doc_i, doc_j, url_i, url_j, shared (F), jaccard, chunks (one
    /// {fprint, text, stop} per shared chunk), size_i, size_j (distinct chunks of each),
    /// shared_stop, threshold, max_df and in_table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// What is measured: an overlap output directory, or another tool's CSV file of URL pairs
    /// (header `url_a,url_b`) or of clusters (header `url,cluster`).
    run: PathBuf,
    /// The exact answer: an overlap output directory over the same crawl (documents are matched
    /// by URL).
    truth: PathBuf,
    /// Measure against TRUTH's pairs with a Jaccard similarity of at least X only (TRUTH must be
    /// made with --jaccard); without it, against every pair of TRUTH.
    #[arg(long, value_name = "X", value_parser = parse_ratio)]
    min_jaccard: Option<Ratio>,
    /// Print one JSON object instead of the tables.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct StopTextsArgs {
    /// Output directory whose docs.csv, stats.json and stop-chunks.csv the Spark job wrote.
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_name = "SHELL", value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
struct ManArgs {
    /// Write overlap.1 and one page per command (overlap-run.1, overlap-fingerprint.1, ...) into
    /// DIR (created if needed) instead of printing overlap(1); e.g. ~/.local/share/man/man1.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct InputArgs {
    /// Crawl dumps to read, in order (WARC, WET, ARC, JSONL, page feed; plain, gzip or zstd). `-`
    /// reads standard input, a pipe reads like the file it carries, and a directory stands for
    /// the crawl files under it, in name order.
    #[arg(required_unless_present = "inputs_from", value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Also read the inputs listed in FILE, one path per line (blank lines are skipped), after
    /// those given as arguments; `-` reads the list from standard input.
    #[arg(long, value_name = "FILE")]
    inputs_from: Option<PathBuf>,
    /// Output directory (created if needed).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Chunking: `lines:K[:S]`, `words:K[:S]` (K units per chunk, a new chunk every S units;
    /// S defaults to K for lines, 1 for words) or `doc` (default: the preset's, lines:1).
    #[arg(long, value_name = "SPEC", value_parser = parse_chunking)]
    chunk: Option<Chunking>,
    /// Input format; `auto` sniffs each file's first bytes.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = FormatArg::Auto)]
    input_format: FormatArg,
    /// JSONL field holding the URL (a string; null or absent: no URL). A dotted name reaches into
    /// objects: `metadata.url` is the `url` of the object `metadata` (datatrove, dolma); a key
    /// spelled with the dots itself comes first.
    #[arg(long, value_name = "NAME", default_value = "url")]
    url_field: String,
    /// JSONL field holding the text (a string); dotted names as for --url-field
    /// (`metadata.text`).
    #[arg(long, value_name = "NAME", default_value = "text")]
    text_field: String,
    /// The most normalized text one document keeps; longer texts are cut at a line end and
    /// counted in stats.json (`capped_documents`).
    #[arg(long, value_name = "SIZE", default_value = "8M", value_parser = parse_size)]
    max_doc_bytes: ByteSize,
    /// The largest record read (a WARC or ARC record's content, a JSONL line, a page-feed page,
    /// a decoded HTTP body); a longer one is read past, skipped with a warning and counted
    /// (`record_too_large`).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    max_record_bytes: ByteSize,
    /// The analysis of the previous crawl of these sites, carried forward: URLs keep their
    /// docIDs, and changes.csv says what became of each (new, unchanged, modified, lost,
    /// orphaned, redirected, returned). It is only read; --out must be another directory.
    #[arg(long, value_name = "DIR")]
    previous: Option<PathBuf>,
    /// With --previous: how many analyses in a row a lost or orphaned page keeps its last text
    /// (and so its exact group and pairs); 0 keeps exactly the documents read.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "previous")]
    keep_missing: u32,
    /// Exit 3 (after writing every output) when a record was skipped as corrupt, an input was
    /// skipped, or no document was read this time (inputs that give no document at all, and no
    /// page kept from --previous, are an error, exit 2); and refuse, before counting (exit 2), a
    /// count of pairs forecast to take more than ten minutes (without --strict, a warning).
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct CountArgs {
    /// T: keep document pairs sharing at least this many chunk fingerprints (default: the
    /// preset's; given alone, T and no similarity measure, as the paper counts; 1 with --jaccard
    /// or --containment).
    #[arg(short = 'T', long, value_name = "N", value_parser = parse_positive)]
    threshold: Option<u32>,
    /// Keep only pairs whose chunk sets A and B have a Jaccard similarity |A ∩ B| / |A ∪ B| of
    /// at least J (above 0, at most 1, up to 4 decimals), decided exactly; overlap.csv gains a
    /// `jaccard` column.
    #[arg(long, value_name = "J", value_parser = parse_ratio)]
    jaccard: Option<Ratio>,
    /// Keep only pairs whose chunk sets A and B have a containment |A ∩ B| / min(|A|, |B|) of
    /// at least C (above 0, at most 1, up to 4 decimals), decided exactly; overlap.csv gains a
    /// `containment` column.
    #[arg(long, value_name = "C", value_parser = parse_ratio)]
    containment: Option<Ratio>,
    /// Counting method: `sort` (the paper's sort-based method), `coarse` (coarse counting
    /// with counter arrays and bitmaps of heavy buckets), `prefix` (prefix filtering: candidates
    /// from each document's rarest fingerprints, verified by list intersection), or `auto`
    /// (sort below a million pair instances; above, prefix or coarse by predicted work). All
    /// give the same table. Approximate, never chosen by `auto`: `minhash[:BxR]` (MinHash-LSH,
    /// B bands of R rows, by default chosen from --jaccard to catch 95% of the pairs at the
    /// threshold) and `simhash[:K]` (64-bit SimHash, signatures at most K bits apart, default
    /// 3): their candidates are verified, so every row is exact, but pairs may be missing.
    #[arg(
        long,
        value_name = "METHOD",
        default_value = "auto",
        value_parser = Named::new(METHODS, parse_method),
        hide_possible_values = true
    )]
    method: Method,
    /// Coarse-counting variant: `coarse-count` (one counter array), `multi-hash:K` (K arrays in
    /// one scan), `multi-scan-shared:K` (K scans, each counting only pairs heavy in the earlier
    /// ones), `defer-count` (pairs that look heavy in a pilot sample are counted exactly) or
    /// `multi-stage` (buckets that look heavy in a pilot sample count in a shared second-level
    /// pool).
    #[arg(long, value_name = "VARIANT", default_value = "coarse-count", value_parser = parse_coarse)]
    coarse: CoarseVariant,
    /// Counters per coarse-counting array (default: one per generated pair, within half of
    /// --memory). Changes speed and false positives, never the table.
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    counters: Option<u32>,
    /// Leave out stop chunks: fingerprints shared by more than N documents (after exact-copy
    /// removal). They are listed in stop-chunks.csv with the pairs they would have generated.
    /// Off by default: --template finds each site's boilerplate without a crawl-wide count.
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    max_df: Option<u32>,
    /// Leave out each host's template chunks before counting: a chunk held by more than N of
    /// one host's documents (after exact-copy removal), and more than SHARE of them, is left out
    /// of those documents' sets (`N` or `N:SHARE`; `off` keeps every chunk). Default: the
    /// preset's (`5:0.01`; off for the paper's).
    #[arg(long, value_name = "RULE", value_parser = parse_template)]
    template: Option<TemplateChoice>,
    /// Also count these documents against those of REF_DIR, the finished analysis of another
    /// crawl cut with the same --chunk and --scope, never a pair inside either: against.csv
    /// names for each document the reference page it shares most with (containment both ways)
    /// and whether the reference holds it (an exact copy, or a page passing the criterion);
    /// against-pairs.csv lists the pairs that pass. `dedup --level against` writes what the
    /// reference does not hold.
    #[arg(long, value_name = "REF_DIR")]
    against: Option<PathBuf>,
}

/// `--template`: a rule, or `off`.
#[derive(Clone, Copy, Debug)]
struct TemplateChoice(Option<TemplateRule>);

fn parse_template(s: &str) -> Result<TemplateChoice, String> {
    match s {
        "off" => Ok(TemplateChoice(None)),
        _ => s.parse().map(|r| TemplateChoice(Some(r))),
    }
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    s.parse()
}

#[derive(Args, Debug)]
struct ResourceArgs {
    /// Worker threads (default: the number of cores; at most 4 per core). Outputs do not depend
    /// on it.
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    threads: Option<u32>,
    /// Memory budget; stages spill to disk beyond it (e.g. 512M, 2G; at least 32M, at most the
    /// machine's memory).
    #[arg(long, value_name = "SIZE", default_value = "2G", value_parser = parse_memory)]
    memory: ByteSize,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Auto,
    Warc,
    Jsonl,
    Pagefeed,
    Arc,
}

fn parse_size(s: &str) -> Result<ByteSize, String> {
    s.parse()
}

fn parse_chunking(s: &str) -> Result<Chunking, String> {
    s.parse()
}

fn parse_positive(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(format!("'{s}' is too large (the maximum is {})", u32::MAX))
        }
        _ => Err(format!("'{s}' is not a whole number of at least 1")),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
        _ => Err(format!("'{s}' is not a rate above 0 and at most 1")),
    }
}

/// A value parsed by `parse`, whose plain names shell completions offer
/// (clap_complete offers file names for a value it has no list of). The
/// help lists the values in its own words, so the arguments hide clap's
/// list there (`hide_possible_values`); parsing and its messages are
/// `parse`'s, as for a plain function.
#[derive(Clone)]
struct Named<T> {
    names: &'static [&'static str],
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> Named<T> {
    fn new(names: &'static [&'static str], parse: fn(&str) -> Result<T, String>) -> Named<T> {
        Named { names, parse }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let parse = self.parse;
        clap::builder::TypedValueParser::parse_ref(
            &clap::builder::StringValueParser::new().try_map(move |s| parse(&s)),
            cmd,
            arg,
            value,
        )
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|&n| clap::builder::PossibleValue::new(n))))
    }
}

/// The values completions offer (each parses: a unit test checks it).
const PRESETS: &[&str] = &["default", "paper", "paper-lines2", "paper-doc"];
const SCOPES: &[&str] = &["crawl", "host", "site"];
const METHODS: &[&str] = &["auto", "sort", "coarse", "prefix", "minhash", "simhash"];

fn parse_scope(s: &str) -> Result<Scope, String> {
    s.parse()
}

fn parse_coarse(s: &str) -> Result<CoarseVariant, String> {
    s.parse()
}

fn parse_method(s: &str) -> Result<Method, String> {
    s.parse()
}

fn parse_ratio(s: &str) -> Result<Ratio, String> {
    s.parse()
}

fn parse_memory(s: &str) -> Result<ByteSize, String> {
    let size: ByteSize = s.parse()?;
    if size.0 < crate::base::memory::MIN_BUDGET {
        return Err(format!("'{s}' is below the minimum of {}", ByteSize(crate::base::memory::MIN_BUDGET)));
    }
    Ok(size)
}

impl InputArgs {
    /// The output directory, which a file must not stand in for.
    fn out_dir(&self) -> anyhow::Result<OutDir> {
        not_a_file("--out", &self.out)?;
        Ok(OutDir::new(&self.out))
    }

    fn config(&self, memory: ByteSize, defaults: &Defaults) -> anyhow::Result<FingerprintConfig> {
        let format = match self.input_format {
            FormatArg::Auto => InputFormat::Auto,
            FormatArg::Warc => InputFormat::Warc,
            FormatArg::Jsonl => InputFormat::Jsonl,
            FormatArg::Pagefeed => InputFormat::PageFeed,
            FormatArg::Arc => InputFormat::Arc,
        };
        Ok(FingerprintConfig {
            inputs: self.inputs()?,
            read: ReadOptions {
                format,
                url_field: self.url_field.clone(),
                text_field: self.text_field.clone(),
                max_record_bytes: self.max_record_bytes.0,
                ..ReadOptions::default()
            },
            chunking: self.chunk.unwrap_or(defaults.chunking),
            max_doc_bytes: self.max_doc_bytes.0,
            memory: memory.0,
            previous: self
                .previous
                .as_ref()
                .map(|dir| PreviousConfig { dir: dir.clone(), keep_missing: self.keep_missing }),
        })
    }

    /// The inputs given as arguments, then those listed in --inputs-from.
    fn inputs(&self) -> anyhow::Result<Vec<PathBuf>> {
        use std::os::unix::ffi::OsStrExt;
        let mut inputs = self.inputs.clone();
        let Some(list) = &self.inputs_from else {
            return Ok(inputs);
        };
        let from_stdin = list.as_os_str() == "-";
        let mut bytes = Vec::new();
        let read = if from_stdin {
            io::stdin().lock().read_to_end(&mut bytes)
        } else {
            std::fs::File::open(list).and_then(|mut f| f.read_to_end(&mut bytes))
        };
        let name = if from_stdin { "standard input".into() } else { list.display().to_string() };
        read.with_context(|| format!("cannot read the input list {name}"))?;
        for line in bytes.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() {
                inputs.push(PathBuf::from(std::ffi::OsStr::from_bytes(line)));
            }
        }
        if from_stdin && inputs.iter().any(|p| p.as_os_str() == "-") {
            anyhow::bail!("standard input (-) cannot be both the input list (--inputs-from -) and an input");
        }
        if inputs.is_empty() {
            anyhow::bail!("the input list {name} names no input");
        }
        Ok(inputs)
    }
}

impl CountArgs {
    fn config(&self, memory: ByteSize, defaults: &Defaults, strict: bool) -> anyhow::Result<PairsConfig> {
        let method = match self.method {
            Method::Coarse(_) => Method::Coarse(self.coarse),
            Method::Auto(_) => Method::Auto(self.coarse),
            method @ (Method::Sort | Method::Prefix | Method::Minhash(_) | Method::Simhash(_)) => method,
        };
        // Any criterion flag states the whole criterion; none, the preset's.
        let similarity = self.jaccard.is_some() || self.containment.is_some();
        let criterion = if similarity || self.threshold.is_some() {
            let threshold = self.threshold.unwrap_or(if similarity { 1 } else { 15 });
            Criterion { threshold, jaccard: self.jaccard, containment: self.containment }
        } else {
            defaults.criterion
        };
        if matches!(method, Method::Minhash(None)) && criterion.jaccard.is_none() {
            anyhow::bail!("{}", pairs::MINHASH_NEEDS_JACCARD)
        }
        Ok(PairsConfig {
            criterion,
            method,
            counters: self.counters.map(u64::from),
            max_df: self.max_df,
            template: self.template.map_or(defaults.template, |t| t.0),
            memory: memory.0,
            strict,
            against: self.against.clone(),
        })
    }
}

impl AuditArgs {
    fn config(&self, memory: ByteSize, compare: &[PathBuf]) -> ReportConfig {
        ReportConfig {
            fuzzy: FuzzyConfig { min_token_len: self.min_token_len, quant_rate: self.quant_rate },
            read_texts: !self.no_fuzzy,
            compare: compare.to_vec(),
            keep: self.keep.clone(),
            memory: memory.0,
        }
    }
}

/// The most threads per core `--threads` starts. Past a few per core,
/// threads only wait for one another (2000 took 17 times as long as the
/// default on the sample), and since outputs do not depend on the thread
/// count, capping changes nothing but time.
const MAX_THREADS_PER_CORE: usize = 4;

impl ResourceArgs {
    /// Sizes the global thread pool once, before any stage runs, and
    /// returns the share of the memory budget the stages divide
    /// ([`crate::base::memory::working`]: the budget less what the process holds
    /// whatever it does). A budget above the machine's memory is taken
    /// down to it, with a warning, because a stage that trusts it would
    /// ask for memory that is not there.
    fn apply(&self, progress: &Progress) -> anyhow::Result<ByteSize> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let most = cores * MAX_THREADS_PER_CORE;
        let threads = match self.threads {
            Some(n) if n as usize > most => {
                progress.warn(&format!(
                    "--threads {n} is more than {MAX_THREADS_PER_CORE} per core ({cores} cores); using {most}"
                ));
                most
            }
            Some(n) => n as usize,
            None => cores,
        };
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("overlap-{i}"))
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {threads} threads: {e}"))?;
        let memory = match crate::base::memory::physical() {
            Some(physical) if self.memory.0 > physical => {
                progress.warn(&format!(
                    "--memory {} is more than this machine's {}; using {}",
                    self.memory,
                    ByteSize(physical),
                    ByteSize(physical)
                ));
                ByteSize(physical)
            }
            _ => self.memory,
        };
        let working = crate::base::memory::working(memory.0);
        crate::base::memory::set_budget(working);
        Ok(ByteSize(working))
    }
}

/// Parses the arguments and runs the command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    crate::base::memory::configure_allocator();
    let progress = Progress::new(cli.quiet).with_summaries(cli.stats);
    match cli.command {
        Command::Run(args) => {
            let memory = args.resources.apply(&progress)?;
            let defaults = args.preset.defaults(args.input.previous.as_deref(), &progress);
            let count = args.count.config(memory, &defaults, args.input.strict)?;
            let out = args.input.out_dir()?;
            locked(&out, &progress, || {
                let strict = read_inputs(&args.input, &defaults, &args.output, &out, memory, &progress)?;
                report(&progress, &out, exact::run(&out, &args.scope.config(memory), &progress)?);
                report(&progress, &out, pairs::run(&out, &count, &progress)?);
                report(&progress, &out, report::run(&out, &args.audit.config(memory, &[]), &progress)?);
                args.output.export_tables(&out, &progress)?;
                strict.map_or(Ok(()), check_strict)
            })
        }
        Command::Fingerprint(args) => {
            let memory = args.resources.apply(&progress)?;
            let out = args.input.out_dir()?;
            let defaults = args.preset.defaults(args.input.previous.as_deref(), &progress);
            locked(&out, &progress, || {
                let strict = read_inputs(&args.input, &defaults, &args.output, &out, memory, &progress)?;
                strict.map_or(Ok(()), check_strict)
            })
        }
        Command::Exact(args) => {
            let memory = args.resources.apply(&progress)?;
            let out = existing(&args.dir)?;
            locked(&out, &progress, || {
                report(&progress, &out, exact::run(&out, &args.scope.config(memory), &progress)?);
                Ok(())
            })
        }
        Command::Pairs(args) => {
            let memory = args.resources.apply(&progress)?;
            let out = existing(&args.dir)?;
            let count = args.count.config(memory, &args.preset.defaults_of(&out), false)?;
            locked(&out, &progress, || {
                report(&progress, &out, pairs::run(&out, &count, &progress)?);
                Ok(())
            })
        }
        Command::Report(args) => {
            let memory = args.resources.apply(&progress)?;
            let out = existing(&args.dir)?;
            locked(&out, &progress, || {
                let cfg = args.audit.config(memory, &args.compare);
                report(&progress, &out, report::run(&out, &cfg, &progress)?);
                args.output.export_tables(&out, &progress)
            })
        }
        Command::Dedup(args) => {
            let memory = args.resources.apply(&progress)?;
            let out = existing(&args.dir)?;
            // Only read: no lock, so it runs beside a command writing
            // there (see `dedup` for what it checks instead). Its output
            // file is removed when a signal stops it.
            crate::base::interrupt::install();
            let stats = dedup::run(&out, &args.config(memory), &progress)?;
            progress.summary(&stats.summary());
            Ok(())
        }
        Command::StopTexts(args) => {
            let out = existing(&args.dir)?;
            locked(&out, &progress, || pairs::stop::fill_texts(&out).map(drop))
        }
        Command::Completions(args) => {
            Ok(manual::completions(args.shell, Cli::command(), &mut io::stdout().lock())?)
        }
        Command::Man(args) => match args.dir {
            Some(dir) => {
                not_a_file("--dir", &dir)?;
                manual::write_pages(Cli::command(), &dir)
            }
            None => Ok(manual::page(Cli::command(), &mut io::stdout().lock())?),
        },
        Command::Explain(args) => {
            // Read-only: no lock, so that it runs beside a command writing DIR.
            let out = existing(&args.dir)?;
            let explained = explain::explain(&out, &args.a, &args.b)?;
            to_stdout(|w| {
                if args.json {
                    explain::write_json(&explained, w)
                } else {
                    Ok(explain::write_text(&explained, w)?)
                }
            })
        }
        Command::Eval(args) => {
            // Read-only: no lock, so it runs beside a command writing either directory.
            let cfg = eval::EvalConfig { run: args.run, truth: args.truth, min_jaccard: args.min_jaccard };
            let evaluation = eval::evaluate(&cfg)?;
            to_stdout(|mut w| {
                if args.json {
                    eval::write_json(&evaluation, &mut w)
                } else {
                    eval::write_table(&evaluation, &mut w)
                }
            })
        }
        Command::Expand(args) => {
            crate::base::interrupt::install();
            let cfg =
                crate::commands::expand::ExpandConfig { inputs: args.inputs.clone(), out: args.out.clone() };
            let stats = crate::commands::expand::run(&cfg, &progress)?;
            progress.summary(&stats.summary());
            Ok(())
        }
        Command::Dump(args) => {
            let out = existing(&args.dir)?;
            to_stdout(|w| if args.exact { dump::exact(&out, w) } else { dump::chunks(&out, w) })
        }
        Command::Migrate(args) => {
            let out = existing(&args.dir)?;
            match crate::store::layout::version_of(&out) {
                None => anyhow::bail!(
                    "{} has no manifest.json that says its format version: it is not an overlap analysis",
                    out.root().display()
                ),
                // Refused as every command refuses it.
                Some(v) if v > crate::store::manifest::FORMAT_VERSION => {
                    crate::store::Manifest::read_unchecked(&out)?;
                }
                Some(_) => {}
            }
            let lock = out.lock()?;
            if !lock.migrated() {
                progress.tell(&format!("{}: already in this overlap's layout", out.root().display()));
            } else {
                progress.tell(&migrated(&out));
            }
            Ok(())
        }
    }
}

/// The note for an analysis moved to this overlap's layout.
fn migrated(out: &OutDir) -> String {
    format!(
        "{}: moved the analysis of an earlier overlap to this one's layout (format {}: record files in {}/, \
         each document's date, capture and canonical address in docs.csv)",
        out.root().display(),
        crate::store::manifest::FORMAT_VERSION,
        crate::store::RECORDS
    )
}

/// Runs `print` on standard output, buffered (a closed pipe ends the
/// command quietly, see `main`).
fn to_stdout(print: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut w = io::BufWriter::new(io::stdout().lock());
    print(&mut w)?;
    w.flush()?;
    Ok(())
}

/// Runs `work`, a command that writes into `out`, holding the directory's
/// lock: two commands writing one directory would corrupt each other's
/// tables. When it fails, what it left half-made is removed (see
/// [`OutDir::lock`]).
///
/// Ctrl-C and SIGTERM stop it the same way, once its threads have stopped
/// where they write ([`crate::base::interrupt`]).
fn locked(
    out: &OutDir,
    progress: &Progress,
    work: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let lock = out.lock()?;
    if lock.migrated() {
        progress.tell(&migrated(out));
    }
    crate::base::interrupt::install();
    let result = work();
    if result.is_err() {
        lock.failed();
    }
    result
}

/// The fingerprint stage and its Parquet export, with which `run` and
/// `fingerprint` begin; the counts `--strict` looks at, when it is given.
fn read_inputs(
    input: &InputArgs,
    defaults: &Defaults,
    output: &OutputArgs,
    out: &OutDir,
    memory: ByteSize,
    progress: &Progress,
) -> anyhow::Result<Option<FingerprintStats>> {
    let read = fingerprint::run(out, &input.config(memory, defaults)?, progress)?;
    let counts = read_counts(out, &read)?;
    report(progress, out, read);
    // Nothing to analyse is an error, whatever the flags: a scheduler's
    // run over the wrong files must not pass for an audit of no copies.
    if crate::store::Manifest::read(out)?.documents == 0 {
        anyhow::bail!("{}", nothing_to_analyse(&counts));
    }
    output.export(out, progress)?;
    Ok(input.strict.then_some(counts))
}

/// The one line of a run whose inputs gave no document: what they held.
fn nothing_to_analyse(stats: &FingerprintStats) -> String {
    let mut why = Vec::new();
    if stats.inputs_skipped > 0 {
        let reasons: std::collections::BTreeSet<&str> =
            stats.inputs.iter().filter_map(|i| i.skipped.as_deref()).collect();
        why.push(format!(
            "{} skipped whole ({})",
            crate::base::progress::count(stats.inputs_skipped, "input was", "inputs were"),
            reasons.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if stats.records > 0 {
        let mut reasons: Vec<(&String, &u64)> = stats.skipped.iter().filter(|(_, n)| **n > 0).collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let named: Vec<String> = reasons.iter().take(3).map(|(r, n)| format!("{r} {n}")).collect();
        why.push(format!(
            "{} read, none a document ({})",
            crate::base::progress::count(stats.records, "record", "records"),
            named.join(", ")
        ));
    } else if stats.inputs_skipped < stats.inputs.len() as u64 {
        why.push("the inputs hold no records".to_string());
    }
    format!("no document to analyse: {}; see stats.json's fingerprint section", why.join("; "))
}

/// What `--strict` looks at in the fingerprint stage's counts: the stage's
/// own when it ran, its section of `stats.json` when it was up to date.
fn read_counts(out: &OutDir, outcome: &Outcome<FingerprintStats>) -> anyhow::Result<FingerprintStats> {
    match outcome {
        Outcome::Ran(stats) => Ok(stats.clone()),
        Outcome::UpToDate => crate::store::stats::read_section(out)?
            .with_context(|| format!("{} has no fingerprint section", out.stats().display())),
    }
}

/// `--strict`: a run that skipped a corrupt record or an input, or read no
/// document, ends with [`Strict`] (exit 3) after every stage has run.
fn check_strict(stats: FingerprintStats) -> anyhow::Result<()> {
    let mut why = Vec::new();
    if stats.corrupt_records > 0 {
        why.push(format!(
            "{} skipped as corrupt",
            crate::base::progress::count(stats.corrupt_records, "record was", "records were")
        ));
    }
    if stats.inputs_skipped > 0 {
        why.push(format!(
            "{} skipped",
            crate::base::progress::count(stats.inputs_skipped, "input was", "inputs were")
        ));
    }
    if stats.documents == 0 {
        why.push("no document was read".to_string());
    }
    if why.is_empty() { Ok(()) } else { Err(Strict(why.join(", ")).into()) }
}

/// A run that `--strict` fails: the outputs are complete, but the inputs
/// were not all read. `main` exits 3 for it, so that a scheduler can tell
/// it from an error (2).
#[derive(Debug)]
pub struct Strict(String);

impl std::fmt::Display for Strict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--strict: {}", self.0)
    }
}

impl std::error::Error for Strict {}

/// A directory to be created (`flag`'s value): a file in its place is one
/// line naming the flag, not the system's "File exists".
fn not_a_file(flag: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("{flag} {} is a file, not a directory", dir.display());
    }
    Ok(())
}

/// An output directory that must already exist.
fn existing(dir: &std::path::Path) -> anyhow::Result<OutDir> {
    if !dir.is_dir() {
        anyhow::bail!("{} is not an overlap output directory (it does not exist)", dir.display());
    }
    Ok(OutDir::new(dir))
}

/// A summary per stage, on a terminal or with `--stats`.
fn report<S: Summary + Section>(progress: &Progress, out: &OutDir, outcome: Outcome<S>) {
    let stage = S::STAGE;
    match outcome {
        Outcome::Ran(stats) => progress.summary(&stats.summary()),
        // A rerun says what is there: the summary stats.json keeps, marked
        // as the work of an earlier run.
        Outcome::UpToDate => match crate::store::stats::read_section::<S>(out) {
            Ok(Some(stats)) => {
                let text = stats.summary();
                let (first, rest) =
                    text.split_once('\n').map_or((text.as_str(), None), |(f, r)| (f, Some(r)));
                let mut line = format!("{first} (up to date)");
                if let Some(rest) = rest {
                    line.push('\n');
                    line.push_str(rest);
                }
                progress.summary(&line);
            }
            _ => progress.note(&format!("{stage}: up to date")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_offer_every_value_and_only_values_that_parse() {
        for (names, parse) in [
            (PRESETS, (|s| parse_preset(s).map(drop)) as fn(&str) -> Result<(), String>),
            (SCOPES, |s| parse_scope(s).map(drop)),
            (METHODS, |s| parse_method(s).map(drop)),
        ] {
            for name in names {
                parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            // The parser's own list of what it takes names every one, and
            // no other plain name.
            let listed = parse("no-such-value").unwrap_err();
            let listed = listed.split("(available: ").nth(1).unwrap().trim_end_matches(')');
            let plain: Vec<&str> = listed.split(", ").map(|v| v.split('[').next().unwrap()).collect();
            assert_eq!(plain, names.to_vec());
        }
    }
}
