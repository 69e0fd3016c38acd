//! The store: the output directory and its on-disk formats, all
//! documented here.
//!
//! An output directory (`--out DIR`) holds the tables users read at its
//! top, and the stages' record files in `records/`:
//!
//! | file | written by | what |
//! |---|---|---|
//! | `manifest.json` | fingerprint; exact and pairs add their settings, each stage its record files' sizes and checksums | the chunk spec, how inputs were read, each input's identity and docIDs: what later stages read their configuration from ([`manifest`]); every record file's size and checksum ([`integrity`]) |
//! | `records/fprint-docid/part-NNNNN.fpd` | fingerprint | FPrint-DocID-Chunk: `(fprint, doc_id)` records of one fingerprint range, sorted by `(fprint, doc_id)`, no duplicates |
//! | `records/fprint-exact.fpd` | fingerprint | FPrint-DocID-Exact: one `(hash, doc_id)` record per non-empty document, in docID order |
//! | `records/fuzzy.fpd` | fingerprint | one fuzzy signature per document, in docID order |
//! | `records/fingerprint-docs.csv` | fingerprint | `doc_id,url,host,source,bytes,lines,chunks,title,missing_for,date,capture,canonical` ([`docs`]) |
//! | `records/doc-ids.fpd`, `records/urls.fpd` | fingerprint | each row's docID; each URL's docID, through a chain of analyses ([`handles`]) |
//! | `records/fingerprint-changes.csv` | fingerprint, with `--previous` | `doc_id,url,change,missing_for,kept,center_before` ([`changes`]) |
//! | `redirects.csv` | fingerprint | `source,url,status,target`: HTTP redirects |
//! | `copies.csv` | fingerprint | `doc_id,original,kind`: documents that copy another without extraction (`revisit`, `payload_digest`) |
//! | `records/centers.fpd` | exact | one `center` record per document, in docID order |
//! | `records/scopes.fpd` | exact, with `--scope host` or `site` | each document's scope ([`scopes`]) |
//! | `records/previous-replicas.fpd` | fingerprint, with `--previous` | the previous analysis's `replicas.fpd`, for the report's comparison ([`replicas`]) |
//! | `docs.csv` | exact; the report fills `near_group` in | `doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group` ([`docs`]) |
//! | `changes.csv` | exact, with `--previous` | the change table with `center_after` ([`changes`]) |
//! | `overlap.csv` | pairs | `doc_i,doc_j,shared`, sorted by `(doc_i, doc_j)` ([`overlap`]) |
//! | `stop-chunks.csv` | pairs, with `--max-df` | `fprint,df,pairs,example_doc,text`, most frequent first |
//! | `against.csv`, `against-pairs.csv` | pairs, with `--against` | each document against a reference analysis: the reference page it shares most with, whether the reference holds it; the cross pairs that pass the criterion ([`against`]) |
//! | `report.json`, `report.html` | report | the crawl audit (see `report`) |
//! | `groups.csv`, `hosts.csv`, `host-summary.csv`, `aliases.csv`, `flags.csv` | report | near-replica groups, host overlap, each host's replication, URL aliases, per-document flags |
//! | `records/replicas.fpd` | report | each document's near-replica group and recrawl verdicts, for the next analysis of a chain ([`replicas`]) |
//! | `parquet/postings.parquet`, `parquet/fingerprint-docs.parquet` | the `parquet` export after fingerprint, with `--format parquet` | the postings and fingerprint-docs.csv, for Spark and DuckDB (see [`parquet`]) |
//! | `parquet/NAME.parquet` | the `parquet-tables` export after report, with `--format parquet` | every CSV table `NAME.csv` but the fingerprint stage's, with its columns typed ([`parquet_tables`]) |
//! | `stats.json` | every stage | one section per stage |
//! | `.overlap/` | every stage | stage stamps, scratch space, the directory's lock ([`lock`]) and a mark that `docs.csv` has no `near_group` ([`docs::mark_ungrouped`]) |
//!
//! Each table has one owner here with a typed reader and writer
//! ([`docs`], [`overlap`], the record files below), and every CSV table is
//! written through [`CsvOut`]: under a temporary name, renamed into place
//! when complete. Stages read what earlier stages wrote only through them,
//! and their configuration only from the manifest.
//!
//! # Binary record files (`.fpd`)
//!
//! Every binary file is a 64-byte header followed by fixed-width
//! little-endian records, so it can be memory-mapped and indexed without
//! parsing (`memmap2`), and read by any language with a struct unpacker.
//!
//! Header (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `OVLPFPD\0` |
//! | 8 | 4 | format version, `1` |
//! | 12 | 4 | record kind: `1` chunk fingerprints, `2` exact hashes, `3` centers, `6` fuzzy signatures, `9` URL handles, `11` docIDs, `13` scopes, `14` replica verdicts; scratch kinds below |
//! | 16 | 4 | record size in bytes (12, 20, 4, 16, 32, 8, 4 or 12) |
//! | 20 | 4 | flags: bit 0 set when records are sorted |
//! | 24 | 4 | partition index |
//! | 28 | 4 | partition count (fingerprint files are split by the fingerprint's top bits) |
//! | 32 | 8 | number of records |
//! | 40 | 24 | chunk spec (`lines:4:4`), ASCII, zero-padded |
//!
//! Records name documents by *row*, their place in `docs.csv` (from 0),
//! which is their docID in a first analysis; through a chain of analyses
//! (`--previous`) docIDs have gaps and `doc-ids.fpd` gives each row's
//! ([`handles`]). Every table a user reads (docs.csv, overlap.csv, the
//! report's tables, `overlap dump`, Parquet) shows docIDs.
//!
//! Records:
//!
//! - kind 1, FPrint-DocID-Chunk, 12 bytes: `fprint: u64` (xxh3-64 of the
//!   chunk's UTF-8 bytes), `doc_id: u32` (the row). Partition `p` of `P` (a power of
//!   two) holds the fingerprints whose top `log2(P)` bits equal `p`, so the
//!   partitions in order are one file sorted by fingerprint.
//! - kind 2, FPrint-DocID-Exact, 20 bytes: `hash: u128` (xxh3-128 of the
//!   normalized text; the low 64 bits first), `doc_id: u32`. 128 bits make
//!   an accidental collision between different texts negligible
//!   (~n²/2¹²⁹), which is why exact copies are found by hash and not by
//!   comparing texts.
//! - kind 6, fuzzy signatures, 16 bytes: `signature: u128`, YaCy's
//!   profile signature of the document's normalized text with the default
//!   parameters (the MD5 digest read as a big-endian number, stored
//!   little-endian), `0` for an empty document.
//! - kind 3, centers, 4 bytes: `center: u32`, the row of the document's
//!   exact group center, its own row when it has no copies, and
//!   `u32::MAX` for an empty document.
//! - kinds 9 (`urls.fpd`) and 11 (`doc-ids.fpd`): see [`handles`];
//!   kind 13 (`scopes.fpd`): see [`scopes`]; kind 14 (`replicas.fpd`):
//!   see [`replicas`].
//!
//! Scratch files, which a stage writes in its scratch directory and removes
//! before it ends, use the same header with kinds of their own, each
//! described where it is written: 4, partial pair counts
//! (the pairs stage's aggregation runs, 12 bytes); 5, the prefix method's
//! per-document postings (16 bytes); 7, the report's (center, host)
//! entries and its (center, center) requests of host overlap (8 bytes); 8, the report's host-pair counts (16 bytes); 10,
//! the URLs each record read names ([`handles::Capture`], 32 bytes); 15,
//! the prefix index under a similarity criterion (16 bytes); 16, the
//! report's URL entries for alias matching (40 bytes); 17, the
//! fingerprint stage's copy-index runs (20 bytes, see its `copy_runs`);
//! 18, the report's title entries for `title_unique` (12 bytes); 19 and
//! 20, the report's alias pairs, in aliases.csv's order (10 bytes) and
//! keyed by their centers (18 bytes, see its `alias_table`); 21, the
//! report's per-row marks for flags.csv (8 bytes, see its `marks`); 22,
//! the report's documents keyed by fuzzy signature (20 bytes); 23 and 24,
//! the report's near-replica groups in groups.csv's order (28 bytes) and
//! their documents' hosts (8 bytes, see its `group_table`); 25, the
//! report's host of each row (4 bytes, see its `host_column`). No record is
//! over 64 bytes. One scratch file is not a record file: the report's URLs
//! of a table's rows, each a `u32` length and its bytes, read back by the
//! process that wrote it (see its `url_side`). Kind 1 also
//! serves scratch files of the same shape: the prefix index for F >= T,
//! and the signature methods' `(bucket key, doc)` records
//! (the pairs stage's `lsh.rs`).
//!
//! Document IDs are `u32`: one local run handles up to 4,294,967,294
//! documents, more than the largest crawl one machine can process.

pub(crate) mod against;
pub(crate) mod analysis;
pub(crate) mod changes;
pub mod criterion;
mod csv_in;
mod csv_out;
pub(crate) mod destination;
pub(crate) mod docs;
mod file;
pub(crate) mod finished;
pub(crate) mod handles;
pub(crate) mod integrity;
pub(crate) mod layout;
mod lock;
pub(crate) mod manifest;
pub(crate) mod overlap;
pub(crate) mod parquet;
pub(crate) mod parquet_tables;
pub(crate) mod postings;
pub(crate) mod registry;
pub(crate) mod replicas;
pub(crate) mod reread;
pub(crate) mod scopes;
pub mod sort;
pub(crate) mod stage;
mod stamp;
pub mod stats;
mod write_behind;

pub(crate) use csv_out::{CsvOut, write_rows};
pub(crate) use manifest::Manifest;
pub use overlap::Overlap;

pub use file::{Center, ChunkRecord, Header, Mapped, ReadAt, Record, RecordWriter};
pub(crate) use file::{ExactRecord, FuzzySignature, HEADER_SIZE, RecordReader, le_u32, le_u64};
pub(crate) use stamp::{StageKey, Stamp, relative};

impl OutDir {
    /// The key of the analysis in this directory through stage `last`
    /// (see [`stamp::analysis_key`]).
    pub(crate) fn analysis_key(&self, last: &'static registry::StageName) -> Result<String, &'static str> {
        stamp::analysis_key(&self.root, &self.private(), last)
    }
}

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The folder of the stages' record files (`.fpd`) and of the fingerprint
/// stage's working tables (`fingerprint-docs.csv`,
/// `fingerprint-changes.csv`): what the stages read and users need not.
pub(crate) const RECORDS: &str = "records";

/// The names of the files in an output directory, in one place.
#[derive(Clone, Debug)]
pub(crate) struct OutDir {
    root: PathBuf,
}

/// Every file the tool writes at the top of an output directory, which it
/// shares with whatever else a user keeps there: the leftover sweep
/// removes a `.partial` file there only when it is one of these with
/// `.partial` appended (a user's `notes.partial` beside the tables stays).
/// The tool's own folders (`records/`, `parquet/`, `.overlap/`) hold
/// nothing else, and no input may lie inside them ([`OutDir::owns`]).
pub(crate) const ROOT_FILES: [&str; 17] = [
    "manifest.json",
    "changes.csv",
    "docs.csv",
    "redirects.csv",
    "copies.csv",
    "overlap.csv",
    "stop-chunks.csv",
    "against.csv",
    "against-pairs.csv",
    "report.json",
    "report.html",
    "groups.csv",
    "hosts.csv",
    "host-summary.csv",
    "aliases.csv",
    "flags.csv",
    "stats.json",
];

impl OutDir {
    pub(crate) fn new(root: impl Into<PathBuf>) -> OutDir {
        OutDir { root: root.into() }
    }

    /// Creates the directory and its private subdirectories if needed.
    pub(crate) fn create(&self) -> anyhow::Result<()> {
        for dir in [self.root.clone(), self.private(), self.records(), self.fprint_dir()] {
            fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
        Ok(())
    }

    /// The folders only the tool writes into: inputs inside them would be
    /// removed or replaced by a stage.
    pub(crate) fn own_folders(&self) -> [PathBuf; 3] {
        [self.records(), self.parquet_dir(), self.private()]
    }

    /// Whether `path` (canonical) is a file the tool writes here: one of
    /// [`ROOT_FILES`], or anything inside its own folders. `root` is this
    /// directory's canonical path.
    pub(crate) fn owns(root: &Path, path: &Path) -> bool {
        let own = OutDir::new(root);
        own.own_folders().iter().any(|dir| path.starts_with(dir))
            || path.parent() == Some(root)
                && path.file_name().is_some_and(|n| ROOT_FILES.iter().any(|f| n == std::ffi::OsStr::new(f)))
    }

    /// Empties the FPrint-DocID directory.
    pub(crate) fn empty_fprint_dir(&self) -> anyhow::Result<()> {
        let dir = self.fprint_dir();
        remove_dir_if_exists(&dir)?;
        fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn manifest(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    /// The stages' record files and working tables, kept apart from the
    /// tables users read ([`RECORDS`]).
    pub(crate) fn records(&self) -> PathBuf {
        self.root.join(RECORDS)
    }

    pub(crate) fn doc_ids(&self) -> PathBuf {
        self.records().join("doc-ids.fpd")
    }

    pub(crate) fn urls(&self) -> PathBuf {
        self.records().join("urls.fpd")
    }

    pub(crate) fn fingerprint_changes(&self) -> PathBuf {
        self.records().join("fingerprint-changes.csv")
    }

    pub(crate) fn changes(&self) -> PathBuf {
        self.root.join("changes.csv")
    }

    pub(crate) fn fprint_dir(&self) -> PathBuf {
        self.records().join("fprint-docid")
    }

    pub(crate) fn fprint_part(&self, index: u32) -> PathBuf {
        self.fprint_dir().join(format!("part-{index:05}.fpd"))
    }

    pub(crate) fn fprint_exact(&self) -> PathBuf {
        self.records().join("fprint-exact.fpd")
    }

    pub(crate) fn fuzzy(&self) -> PathBuf {
        self.records().join("fuzzy.fpd")
    }

    pub(crate) fn fingerprint_docs(&self) -> PathBuf {
        self.records().join("fingerprint-docs.csv")
    }

    pub(crate) fn parquet_dir(&self) -> PathBuf {
        self.root.join("parquet")
    }

    pub(crate) fn parquet_postings(&self) -> PathBuf {
        self.parquet_dir().join("postings.parquet")
    }

    /// `parquet/NAME.parquet`, the Parquet copy of `NAME.csv`
    /// ([`parquet_tables`]).
    pub(crate) fn parquet_table(&self, name: &str) -> PathBuf {
        self.parquet_dir().join(format!("{name}.parquet"))
    }

    pub(crate) fn scopes(&self) -> PathBuf {
        self.records().join("scopes.fpd")
    }

    pub(crate) fn replicas(&self) -> PathBuf {
        self.records().join("replicas.fpd")
    }

    pub(crate) fn previous_replicas(&self) -> PathBuf {
        self.records().join("previous-replicas.fpd")
    }

    pub(crate) fn centers(&self) -> PathBuf {
        self.records().join("centers.fpd")
    }

    pub(crate) fn docs(&self) -> PathBuf {
        self.root.join("docs.csv")
    }

    pub(crate) fn redirects(&self) -> PathBuf {
        self.root.join("redirects.csv")
    }

    pub(crate) fn copies(&self) -> PathBuf {
        self.root.join("copies.csv")
    }

    pub(crate) fn overlap(&self) -> PathBuf {
        self.root.join("overlap.csv")
    }

    pub(crate) fn stop_chunks(&self) -> PathBuf {
        self.root.join("stop-chunks.csv")
    }

    pub(crate) fn against(&self) -> PathBuf {
        self.root.join("against.csv")
    }

    pub(crate) fn against_pairs(&self) -> PathBuf {
        self.root.join("against-pairs.csv")
    }

    pub(crate) fn report_json(&self) -> PathBuf {
        self.root.join("report.json")
    }

    pub(crate) fn report_html(&self) -> PathBuf {
        self.root.join("report.html")
    }

    pub(crate) fn groups(&self) -> PathBuf {
        self.root.join("groups.csv")
    }

    pub(crate) fn hosts(&self) -> PathBuf {
        self.root.join("hosts.csv")
    }

    pub(crate) fn host_summary(&self) -> PathBuf {
        self.root.join("host-summary.csv")
    }

    pub(crate) fn aliases(&self) -> PathBuf {
        self.root.join("aliases.csv")
    }

    pub(crate) fn flags(&self) -> PathBuf {
        self.root.join("flags.csv")
    }

    pub(crate) fn stats(&self) -> PathBuf {
        self.root.join("stats.json")
    }

    /// Stamps and scratch space, kept apart from the outputs users read.
    pub(crate) fn private(&self) -> PathBuf {
        self.root.join(".overlap")
    }

    pub(crate) fn stamp(&self, stage: &str) -> PathBuf {
        self.private().join(format!("{stage}.stamp"))
    }

    /// Present only while `docs.csv` is known to have no `near_group`
    /// ([`docs::mark_ungrouped`]).
    pub(crate) fn docs_ungrouped(&self) -> PathBuf {
        self.private().join("docs-ungrouped")
    }

    /// A fresh scratch directory for one stage's spill files. Leftovers of
    /// a killed run are removed first.
    pub(crate) fn scratch(&self, stage: &str) -> anyhow::Result<PathBuf> {
        crate::base::interrupt::check()?;
        let dir = self.scratch_path(stage);
        remove_dir_if_exists(&dir)?;
        fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
        Ok(dir)
    }

    /// Where a stage's scratch directory lives.
    pub(crate) fn scratch_path(&self, stage: &str) -> PathBuf {
        self.private().join(format!("tmp-{stage}"))
    }

    /// Lists the fingerprint partition files, in partition order, checked
    /// to be one whole set ([`integrity::check_parts`]).
    pub(crate) fn fprint_parts(&self) -> anyhow::Result<Vec<PathBuf>> {
        let dir = self.fprint_dir();
        let mut parts = Vec::new();
        let entries =
            fs::read_dir(&dir).with_context(|| format!("cannot read directory {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("part-") && name.ends_with(".fpd") {
                parts.push(entry.path());
            }
        }
        parts.sort();
        integrity::check_parts(self, &parts)?;
        Ok(parts)
    }
}

/// Removes a directory tree, treating "not there" as done.
pub(crate) fn remove_dir_if_exists(dir: &Path) -> anyhow::Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", dir.display())),
    }
}

/// Bytes free for an unprivileged writer on the file system of `path`, if
/// the system says.
pub(crate) fn free_space(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs only writes into the struct we pass, and `c_path` is
    // a valid NUL-terminated string for the duration of the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut st) };
    (rc == 0).then(|| (st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Removes a file, treating "not there" as done.
pub(crate) fn remove_file_if_exists(path: &Path) -> anyhow::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Removes the earlier version of a table that a stage rewrites within one
/// run, before the new one is renamed into its place. Renamed over it, the
/// new file is written out to disk before the rename returns, with the
/// stage's core waiting (ext4's safeguard for replace-by-rename,
/// `auto_da_alloc`): 0.21 s for a 366 MB file, against 0.06 s to remove the
/// old one first and a rename that then costs nothing. Only for a stage's
/// own tables: the stage's stamp is removed when it begins, so a run killed
/// between the two redoes the stage.
pub(crate) fn remove_replaced(path: &Path) -> anyhow::Result<()> {
    remove_file_if_exists(path)
}

/// `path` made absolute with its links resolved, also when it does not
/// exist yet (an output directory a command is about to make): its
/// nearest existing ancestor is canonicalized and the rest joined on.
pub(crate) fn canonical_target(path: &Path) -> io::Result<PathBuf> {
    if let Ok(found) = fs::canonicalize(path) {
        return Ok(found);
    }
    let absolute = std::path::absolute(path)?;
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(found) = fs::canonicalize(at) {
            return Ok(rest.iter().rev().fold(found, |p: PathBuf, c| p.join(c)));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return Ok(absolute),
        }
    }
}

/// The temporary name a file is written under before it is renamed into
/// place, so a killed run never leaves a complete-looking partial file.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// The context of a failed write of an output, "cannot write PATH": a
/// type of its own, so that a reader handing each row of a table to a
/// callback tells a write that failed there from a fault of the row (see
/// [`row_error`]).
#[derive(Debug)]
pub(crate) struct CannotWrite(pub(crate) PathBuf);

impl std::fmt::Display for CannotWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write {}", self.0.display())
    }
}

/// The error `e` that the callback given line `line` of the table at
/// `path` returned, with that line named, unless it is a failed write of
/// an output: the disk filling while flags.csv is written is flags.csv's
/// error, and "docs.csv line 2632: cannot write flags.csv.partial" sent
/// the reader to a row with nothing wrong in it.
pub(crate) fn row_error(e: anyhow::Error, path: &Path, line: u64) -> anyhow::Error {
    if e.downcast_ref::<CannotWrite>().is_some() {
        e
    } else {
        e.context(format!("{} line {line}", path.display()))
    }
}

/// Renames a finished temporary file into place.
pub(crate) fn commit(path: &Path) -> anyhow::Result<()> {
    let tmp = temp_path(path);
    fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    integrity::forget(path);
    Ok(())
}

/// Writes a whole small file atomically (temporary name, then rename).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::base::interrupt::check()?;
    let tmp = temp_path(path);
    fs::write(&tmp, bytes).with_context(|| CannotWrite(tmp.clone()))?;
    commit(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_at_the_top_is_listed_and_only_those_are_owned() {
        let out = OutDir::new("/o");
        let files = [
            out.manifest(),
            out.changes(),
            out.docs(),
            out.redirects(),
            out.copies(),
            out.overlap(),
            out.stop_chunks(),
            out.against(),
            out.against_pairs(),
            out.report_json(),
            out.report_html(),
            out.groups(),
            out.hosts(),
            out.host_summary(),
            out.aliases(),
            out.flags(),
            out.stats(),
        ];
        // The record files and working tables are in records/, which the
        // tool owns whole.
        let records = [
            out.doc_ids(),
            out.urls(),
            out.fingerprint_changes(),
            out.fprint_exact(),
            out.fuzzy(),
            out.fingerprint_docs(),
            out.scopes(),
            out.replicas(),
            out.previous_replicas(),
            out.centers(),
            out.fprint_part(0),
        ];
        for p in &records {
            assert!(p.starts_with(out.records()), "{}", p.display());
        }
        let names: Vec<&str> = files.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ROOT_FILES);
        let root = Path::new("/o");
        for p in files.iter().chain(&records).chain([&out.parquet_table("docs"), &out.stamp("s")]) {
            assert!(OutDir::owns(root, p), "{}", p.display());
        }
        for p in [
            "/o/crawl.warc.gz",
            "/o/notes.partial",
            "/o/sub/docs.csv",
            "/other/docs.csv",
            "/o/records2",
            "/o/centers.fpd",
        ] {
            assert!(!OutDir::owns(root, Path::new(p)), "{p}");
        }
    }
}
