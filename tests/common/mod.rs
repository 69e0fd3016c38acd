//! Shared helpers for the end-to-end tests: running the `overlap` binary,
//! reading its outputs, and an independent brute-force reference.
//!
//! The reference follows the normalization and chunking rules of the command
//! line contract literally, with `String`s and ordered sets only (no hashing):
//! chunks are compared as text, exact copies are found by string equality,
//! and F(i, j) is the size of the intersection of two documents' chunk sets,
//! computed for every pair of surviving documents.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

// ------------------------------------------------------------ running the binary

/// The crate root: tests run the binary from here, so that paths such as
/// `testdata/sample.warc.gz` are given to it as written.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn testdata(name: &str) -> PathBuf {
    root().join("testdata").join(name)
}

/// A command for the `overlap` binary, run from the crate root.
///
/// The tests were written against the paper's settings (one fingerprint
/// for every four lines, T = 15, every chunk kept), and each states what it
/// changes of them: a `run`, `fingerprint` or `pairs` that names no
/// `--preset` runs with `--preset paper`. The default preset has tests of
/// its own, which name it (`--preset default`): tests/defaults.rs, and the
/// brute-force, method and previous-crawl tests that run under both.
pub fn overlap_cmd<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_os_string()).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_overlap"));
    cmd.args(&args).current_dir(root()).stdin(Stdio::null());
    let stage = args.iter().find(|a| !a.to_string_lossy().starts_with('-'));
    let names_preset = args.iter().any(|a| a == "--preset" || a.to_string_lossy().starts_with("--preset="));
    if stage.is_some_and(|s| s == "run" || s == "fingerprint" || s == "pairs") && !names_preset {
        cmd.args(["--preset", "paper"]);
    }
    cmd
}

/// The host of a URL as docs.csv's `host` column gives it: lowercase,
/// without port or user; empty when the URL has none.
pub fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_lowercase)).unwrap_or_default()
}

/// Runs `overlap` with the given arguments and returns what it did.
pub fn overlap<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    overlap_cmd(args).output().expect("cannot start the overlap binary")
}

/// Runs `overlap` with `input` on its standard input.
pub fn overlap_stdin<I, S>(args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut child = overlap_cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the overlap binary");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("overlap did not finish");
    writer.join().unwrap();
    out
}

pub fn describe(args: &[String], out: &Output) -> String {
    format!(
        "overlap {}\nexit: {:?}\n--- stderr ---\n{}\n--- stdout (first 2000 bytes) ---\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(2000)]),
    )
}

/// Runs `overlap` and fails the test unless it exits 0.
pub fn overlap_ok<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<String> = args.into_iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    let out = overlap(&args);
    assert_eq!(out.status.code(), Some(0), "expected success\n{}", describe(&args, &out));
    out
}

/// Runs `args` and checks the error contract: exit code 2 and exactly one
/// non-empty line on stderr, which must contain one of `mentions`
/// (case-insensitively).
pub fn assert_usage_error(args: &[&str], mentions: &[&str]) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = overlap(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let what = describe(&args, &out);
    assert_eq!(out.status.code(), Some(2), "expected exit code 2\n{what}");
    let body = stderr.strip_suffix('\n').unwrap_or(&stderr);
    assert!(!body.trim().is_empty(), "expected an error message on stderr\n{what}");
    assert!(
        !body.contains('\n'),
        "expected exactly one line on stderr, got {}\n{what}",
        body.lines().count()
    );
    let low = body.to_lowercase();
    assert!(
        mentions.iter().any(|m| low.contains(&m.to_lowercase())),
        "the error message should name the problem (one of {mentions:?})\n{what}"
    );
}

/// Makes `cmd` run with every file it writes limited to `bytes`
/// (`RLIMIT_FSIZE`), and `SIGXFSZ` ignored, so that a write past the limit
/// fails with `EFBIG` as a write to a full disk fails with `ENOSPC`: the
/// command sees a real failing `write`, not one made up for the test.
pub fn limit_file_size(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure calls only setrlimit and
    // signal, which are async-signal-safe, and touches no memory the
    // parent's other threads own.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0
                || libc::signal(libc::SIGXFSZ, libc::SIG_IGN) == libc::SIG_ERR
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Takes `dir`'s lock the way `overlap` does, writing this process's id;
/// held until the file is dropped.
pub fn hold_lock(dir: &Path) -> fs::File {
    fs::create_dir_all(dir.join(".overlap")).unwrap();
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.join(".overlap/lock"))
        .unwrap();
    file.try_lock().expect("the lock is free");
    writeln!(file, "{}", std::process::id()).unwrap();
    file
}

/// `path` as a string argument.
pub fn arg(path: &Path) -> String {
    path.to_str().expect("test paths are UTF-8").to_string()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("overlap-test-").tempdir().expect("cannot create a temporary directory")
}

// ------------------------------------------------------------ test data

/// One WARC/1.1 record (with CRLF line ends) with the given header fields (beyond type and
/// length) and block.
pub fn warc_record(wtype: &str, fields: &[(&str, &str)], block: &[u8]) -> Vec<u8> {
    let mut out = format!("WARC/1.1\r\nWARC-Type: {wtype}\r\n");
    for (name, value) in fields {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

pub fn http_response(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut out =
        format!("HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Decompresses a (possibly multi-member) gzip file.
pub fn gunzip(path: &Path) -> Vec<u8> {
    let file = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

/// The gzip members of a per-record gzip file: each member's offset and
/// its decompressed bytes.
pub fn gzip_members(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let data = fs::read(path).unwrap();
    let mut rest: &[u8] = &data;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let mut raw = Vec::new();
        flate2::bufread::GzDecoder::new(&mut rest).read_to_end(&mut raw).unwrap();
        out.push((offset, raw));
    }
    out
}

/// `records` as a `.warc.zst` the way Wget-AT writes one: a dictionary
/// trained on them, stored compressed in the dictionary frame, then one
/// frame per record with its size and checksum. Returns the file and each
/// record's frame offset.
pub fn warc_zst(records: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
    let dict = zstd::dict::from_samples(records, 16 << 10).unwrap();
    let stored = zstd::bulk::compress(&dict, 19).unwrap();
    let mut file = [&[0x5d, 0x2a, 0x4d, 0x18][..], &(stored.len() as u32).to_le_bytes(), &stored].concat();
    let mut c = zstd::bulk::Compressor::with_dictionary(3, &dict).unwrap();
    c.include_checksum(true).unwrap();
    c.include_contentsize(true).unwrap();
    c.include_dictid(true).unwrap();
    let mut offsets = Vec::new();
    for r in records {
        offsets.push(file.len() as u64);
        file.extend(c.compress(r).unwrap());
    }
    (file, offsets)
}

/// One JSONL record as the tests see it.
#[derive(Clone, Debug)]
pub struct JsonDoc {
    pub url: String,
    pub text: String,
}

/// Parses JSONL text: one `{"url": ..., "text": ...}` object per line.
pub fn parse_jsonl(data: &str) -> Vec<JsonDoc> {
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("test JSONL is valid");
            JsonDoc {
                url: v["url"].as_str().unwrap_or("").to_string(),
                text: v["text"].as_str().expect("every test record has a text").to_string(),
            }
        })
        .collect()
}

pub fn read_jsonl(path: &Path) -> Vec<JsonDoc> {
    parse_jsonl(&fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// Writes documents as JSONL (url and text fields).
pub fn write_jsonl(path: &Path, docs: &[JsonDoc]) {
    let mut s = String::new();
    for d in docs {
        s.push_str(&serde_json::json!({"url": d.url, "text": d.text}).to_string());
        s.push('\n');
    }
    fs::write(path, s).unwrap();
}

/// `testdata/real.jsonl.gz` (real text, 300+ documents) decompressed into
/// `dir`; returns the path of the JSONL file and its documents.
pub fn real_jsonl(dir: &Path) -> (PathBuf, Vec<JsonDoc>) {
    let data = gunzip(&testdata("real.jsonl.gz"));
    let path = dir.join("real.jsonl");
    fs::write(&path, &data).unwrap();
    let docs = parse_jsonl(std::str::from_utf8(&data).unwrap());
    (path, docs)
}

pub fn texts(docs: &[JsonDoc]) -> Vec<String> {
    docs.iter().map(|d| d.text.clone()).collect()
}

// ------------------------------------------------------------ reading outputs

pub const DOCS_HEADER: [&str; 14] = [
    "doc_id",
    "url",
    "host",
    "source",
    "bytes",
    "lines",
    "chunks",
    "exact_center",
    "title",
    "missing_for",
    "date",
    "capture",
    "canonical",
    "near_group",
];
pub const OVERLAP_HEADER: [&str; 3] = ["doc_i", "doc_j", "shared"];

/// Reads a CSV file: header and records.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows = rdr
        .records()
        .map(|r| r.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .map(|r| r.iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// One row of docs.csv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocRow {
    pub doc_id: usize,
    pub url: String,
    pub host: String,
    pub source: String,
    pub bytes: u64,
    pub lines: usize,
    pub chunks: usize,
    pub exact_center: Option<usize>,
    pub title: String,
    pub missing_for: u16,
    /// The capture's date as its record states it, empty without one.
    pub date: String,
    /// `response`, `revisit` or empty.
    pub capture: String,
    /// The page's `<link rel="canonical">`, as written.
    pub canonical: String,
    /// The near-replica group (groups.csv's `group`), filled by the report.
    pub near_group: Option<usize>,
}

/// Reads `DIR/docs.csv`, checking the header and that doc_ids are 0, 1, 2, ...
pub fn read_docs(dir: &Path) -> Vec<DocRow> {
    let docs = read_doc_rows(dir);
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(d.doc_id, i, "docs.csv doc_ids must be dense and in order");
    }
    docs
}

/// Reads `DIR/docs.csv`, checking the header and that doc_ids ascend (an
/// analysis made with --previous has gaps).
pub fn read_doc_rows(dir: &Path) -> Vec<DocRow> {
    let path = dir.join("docs.csv");
    let (header, rows) = read_csv(&path);
    assert_eq!(header, DOCS_HEADER, "docs.csv header");
    let num = |s: &str, what: &str| -> u64 {
        s.parse().unwrap_or_else(|_| panic!("docs.csv: {what} {s:?} is not a number"))
    };
    let docs: Vec<DocRow> = rows
        .iter()
        .map(|r| {
            assert_eq!(r.len(), DOCS_HEADER.len(), "docs.csv row {r:?}");
            DocRow {
                doc_id: num(&r[0], "doc_id") as usize,
                url: r[1].clone(),
                host: r[2].clone(),
                source: r[3].clone(),
                bytes: num(&r[4], "bytes"),
                lines: num(&r[5], "lines") as usize,
                chunks: num(&r[6], "chunks") as usize,
                exact_center: if r[7].is_empty() { None } else { Some(num(&r[7], "exact_center") as usize) },
                title: r[8].clone(),
                missing_for: num(&r[9], "missing_for") as u16,
                date: r[10].clone(),
                capture: r[11].clone(),
                canonical: r[12].clone(),
                near_group: if r[13].is_empty() { None } else { Some(num(&r[13], "near_group") as usize) },
            }
        })
        .collect();
    for w in docs.windows(2) {
        assert!(
            w[0].doc_id < w[1].doc_id,
            "docs.csv doc_ids must ascend: {} then {}",
            w[0].doc_id,
            w[1].doc_id
        );
    }
    docs
}

/// Reads `DIR/overlap.csv` as (doc_i, doc_j, shared) triples, in file order.
pub fn read_overlap(dir: &Path) -> Vec<(usize, usize, usize)> {
    let path = dir.join("overlap.csv");
    let (header, rows) = read_csv(&path);
    assert_eq!(header, OVERLAP_HEADER, "overlap.csv header");
    rows.iter()
        .map(|r| {
            assert_eq!(r.len(), 3, "overlap.csv row {r:?}");
            let n = |s: &str| s.parse::<usize>().unwrap_or_else(|_| panic!("overlap.csv: {s:?}"));
            (n(&r[0]), n(&r[1]), n(&r[2]))
        })
        .collect()
}

/// Reads `DIR/overlap.csv` of a similarity criterion (`--jaccard`,
/// `--containment`: the default preset) as (doc_i, doc_j, shared)
/// triples, checking that its measure columns are the named ones.
pub fn read_overlap_measured(dir: &Path, measures: &[&str]) -> Vec<(usize, usize, usize)> {
    let (header, rows) = read_csv(&dir.join("overlap.csv"));
    let want: Vec<&str> = OVERLAP_HEADER.iter().chain(measures).copied().collect();
    assert_eq!(header, want, "overlap.csv header");
    let n = |s: &str| s.parse::<usize>().unwrap_or_else(|_| panic!("overlap.csv: {s:?}"));
    rows.iter().map(|r| (n(&r[0]), n(&r[1]), n(&r[2]))).collect()
}

/// Each docID's chunk fingerprints (16 hex digits), from `overlap dump`:
/// the FPrint-DocID records as the analysis stored them.
pub fn fingerprints_by_doc(dir: &Path) -> BTreeMap<usize, BTreeSet<String>> {
    let out = overlap_ok(["dump", &arg(dir)]);
    let mut by_doc: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines().skip(1) {
        let (fprint, doc) = line.split_once(',').unwrap();
        by_doc.entry(doc.parse().unwrap()).or_default().insert(fprint.to_string());
    }
    by_doc
}

pub fn read_stats(dir: &Path) -> serde_json::Value {
    let path = dir.join("stats.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stats.json is not JSON: {e}"))
}

/// The reasons in a stats section's `skipped` whose count is not zero
/// (stats.json lists every reason).
pub fn nonzero_skipped(section: &serde_json::Value) -> BTreeMap<String, u64> {
    section["skipped"]
        .as_object()
        .expect("the section has a skipped object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("counts are numbers")))
        .filter(|&(_, v)| v > 0)
        .collect()
}

/// stats.json without the fields that vary from run to run.
pub fn stable_stats(dir: &Path) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("seconds");
                m.remove("peak_rss_bytes");
                for (_, x) in m.iter_mut() {
                    strip(x);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = read_stats(dir);
    strip(&mut v);
    v
}

/// Every file under `dir` (recursively) except stats.json and the lock
/// (which holds a process id), by relative path.
pub fn out_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().to_string_lossy().replace('\\', "/");
                if rel != "stats.json" && rel != ".overlap/lock" {
                    out.insert(rel, fs::read(&path).unwrap());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts that two output directories hold the same files with the same
/// bytes (stats.json compared without its timing fields).
pub fn assert_same_outputs(a: &Path, b: &Path, what: &str) {
    let fa = out_files(a);
    let fb = out_files(b);
    let names_a: Vec<_> = fa.keys().collect();
    let names_b: Vec<_> = fb.keys().collect();
    assert_eq!(names_a, names_b, "{what}: the output directories hold different files");
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{what}: {name} differs ({} vs {} bytes)", bytes.len(), fb[name].len());
    }
    assert_eq!(stable_stats(a), stable_stats(b), "{what}: stats.json differs beyond seconds/peak_rss_bytes");
}

// ------------------------------------------------------------ the reference

/// A chunk spec: `lines:K[:S]`, `words:K[:S]` or `doc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    Lines { k: usize, s: usize },
    Words { k: usize, s: usize },
    Doc,
}

impl Spec {
    /// Parses a valid spec (the tests' own specs; no error handling needed).
    pub fn parse(spec: &str) -> Spec {
        if spec == "doc" {
            return Spec::Doc;
        }
        let parts: Vec<&str> = spec.split(':').collect();
        let k: usize = parts[1].parse().unwrap();
        match (parts[0], parts.get(2)) {
            ("lines", None) => Spec::Lines { k, s: k },
            ("lines", Some(s)) => Spec::Lines { k, s: s.parse().unwrap() },
            ("words", None) => Spec::Words { k, s: 1 },
            ("words", Some(s)) => Spec::Words { k, s: s.parse().unwrap() },
            _ => panic!("not a chunk spec: {spec}"),
        }
    }
}

/// Rules 1-2: split at `\n`, drop one trailing `\r`, collapse every run of
/// White_Space to one space, trim, drop empty lines.
pub fn normalize(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let words: Vec<&str> = line.split(char::is_whitespace).filter(|w| !w.is_empty()).collect();
        if !words.is_empty() {
            lines.push(words.join(" "));
        }
    }
    lines
}

/// Rule 4: the windows over `n` units as (start, end) ranges, in order.
pub fn windows(n: usize, k: usize, s: usize) -> Vec<(usize, usize)> {
    assert!(k >= 1 && s >= 1 && s <= k);
    let mut out = Vec::new();
    let mut start = 0;
    let mut last_full_end = 0;
    while start + k <= n {
        out.push((start, start + k));
        last_full_end = start + k;
        start += s;
    }
    if out.is_empty() {
        if n > 0 {
            out.push((0, n));
        }
    } else if last_full_end < n {
        out.push((start, n));
    }
    out
}

/// The text of every window of a document's normalized lines, in order.
pub fn chunk_texts(lines: &[String], spec: Spec) -> Vec<String> {
    match spec {
        Spec::Doc => {
            if lines.is_empty() {
                vec![]
            } else {
                vec![lines.join("\n")]
            }
        }
        Spec::Lines { k, s } => {
            windows(lines.len(), k, s).into_iter().map(|(a, b)| lines[a..b].join("\n")).collect()
        }
        Spec::Words { k, s } => {
            let words: Vec<&str> = lines.iter().flat_map(|l| l.split(' ')).collect();
            windows(words.len(), k, s).into_iter().map(|(a, b)| words[a..b].join(" ")).collect()
        }
    }
}

/// What the reference says about a list of documents.
#[derive(Clone, Debug)]
pub struct Reference {
    /// Normalized lines per document.
    pub lines: Vec<usize>,
    /// Number of windows per document.
    pub chunks: Vec<usize>,
    /// The center of each document's exact-copy group; `None` for empty ones.
    pub exact_center: Vec<Option<usize>>,
    /// Every pair (i, j), i < j, of surviving documents with F >= 1.
    pub shared: Vec<(usize, usize, usize)>,
    /// Stop chunks (shared by more surviving documents than max-df): text
    /// and document frequency.
    pub stops: BTreeMap<String, usize>,
    /// Each surviving document's distinct chunks, stop chunks left out:
    /// the set size a similarity criterion divides by.
    pub sizes: Vec<usize>,
}

impl Reference {
    pub fn new(texts: &[String], spec: Spec) -> Reference {
        Reference::with_max_df(texts, spec, None)
    }

    /// The reference with chunks shared by more than `max_df` surviving
    /// documents left out.
    pub fn with_max_df(texts: &[String], spec: Spec, max_df: Option<usize>) -> Reference {
        Reference::build(texts, spec, max_df, None)
    }

    /// The reference with each host's template chunks left out (`overlap
    /// --template MIN:SHARE`, SHARE in ten-thousandths): a chunk held by
    /// more than max(MIN, floor(SHARE · pages / 10000)) surviving documents
    /// of one host, where pages is the host's surviving documents, leaves
    /// those documents' sets, before stop chunks are counted.
    pub fn with_template(
        texts: &[String],
        hosts: &[String],
        spec: Spec,
        min: usize,
        share: u64,
    ) -> Reference {
        Reference::build(texts, spec, None, Some((hosts, min, share)))
    }

    fn build(
        texts: &[String],
        spec: Spec,
        max_df: Option<usize>,
        template: Option<(&[String], usize, u64)>,
    ) -> Reference {
        let normalized: Vec<Vec<String>> = texts.iter().map(|t| normalize(t)).collect();

        // Exact copies: identical normalized text; the center is the first.
        let mut first_with_text: BTreeMap<String, usize> = BTreeMap::new();
        let mut exact_center = Vec::with_capacity(texts.len());
        for (i, lines) in normalized.iter().enumerate() {
            if lines.is_empty() {
                exact_center.push(None);
            } else {
                let key = lines.join("\n");
                exact_center.push(Some(*first_with_text.entry(key).or_insert(i)));
            }
        }

        let chunk_lists: Vec<Vec<String>> = normalized.iter().map(|l| chunk_texts(l, spec)).collect();
        let mut sets: Vec<BTreeSet<String>> =
            chunk_lists.iter().map(|c| c.iter().cloned().collect()).collect();

        // Survivors: documents that are their own center (empty ones have no chunks).
        let survivors: Vec<usize> = (0..texts.len()).filter(|&i| exact_center[i] == Some(i)).collect();

        // Template chunks: per host, over its survivors.
        if let Some((hosts, min, share)) = template {
            let mut pages: BTreeMap<&str, usize> = BTreeMap::new();
            for &i in &survivors {
                *pages.entry(hosts[i].as_str()).or_default() += 1;
            }
            let mut held: BTreeMap<(&str, &str), usize> = BTreeMap::new();
            for &i in &survivors {
                for c in &sets[i] {
                    *held.entry((hosts[i].as_str(), c.as_str())).or_default() += 1;
                }
            }
            let template: BTreeSet<(String, String)> = held
                .into_iter()
                .filter(|((h, _), n)| *n > min.max((share * pages[h] as u64 / 10_000) as usize))
                .map(|((h, c), _)| (h.to_string(), c.to_string()))
                .collect();
            for &i in &survivors {
                sets[i].retain(|c| !template.contains(&(hosts[i].clone(), c.clone())));
            }
        }

        // Stop chunks: document frequency over survivors above max_df.
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for &i in &survivors {
            for c in &sets[i] {
                *df.entry(c.clone()).or_insert(0) += 1;
            }
        }
        let stops: BTreeMap<String, usize> =
            df.into_iter().filter(|(_, n)| max_df.is_some_and(|m| *n > m)).collect();
        for &i in &survivors {
            sets[i].retain(|c| !stops.contains_key(c));
        }

        // Number the distinct chunk texts (in text order) so that the pairwise
        // intersections below are merges of sorted integer lists.
        let mut numbering: BTreeMap<&str, u32> = BTreeMap::new();
        for set in &sets {
            for c in set {
                numbering.insert(c.as_str(), 0);
            }
        }
        for (n, v) in numbering.values_mut().enumerate() {
            *v = n as u32;
        }
        let ids: Vec<Vec<u32>> =
            sets.iter().map(|set| set.iter().map(|c| numbering[c.as_str()]).collect()).collect();

        let mut shared = Vec::new();
        for (x, &i) in survivors.iter().enumerate() {
            for &j in &survivors[x + 1..] {
                let f = sorted_intersection_len(&ids[i], &ids[j]);
                if f > 0 {
                    shared.push((i, j, f));
                }
            }
        }

        Reference {
            lines: normalized.iter().map(Vec::len).collect(),
            chunks: chunk_lists.iter().map(Vec::len).collect(),
            exact_center,
            shared,
            stops,
            sizes: sets.iter().map(BTreeSet::len).collect(),
        }
    }

    /// The Overlap table under a similarity criterion: pairs with F >= t
    /// whose Jaccard similarity reaches `jaccard` and whose containment
    /// (|A ∩ B| / min(|A|, |B|)) reaches `containment`, both given in
    /// ten-thousandths and compared as exact fractions.
    pub fn similar(
        &self,
        t: usize,
        jaccard: Option<u64>,
        containment: Option<u64>,
    ) -> Vec<(usize, usize, usize)> {
        self.shared
            .iter()
            .copied()
            .filter(|&(i, j, f)| {
                let (a, b, s) = (self.sizes[i] as u64, self.sizes[j] as u64, f as u64);
                f >= t
                    && jaccard.is_none_or(|q| s * 10_000 >= q * (a + b - s))
                    && containment.is_none_or(|q| s * 10_000 >= q * a.min(b))
            })
            .collect()
    }

    /// The Overlap table for threshold `t`: pairs with F >= t, sorted by (i, j).
    pub fn table(&self, t: usize) -> Vec<(usize, usize, usize)> {
        self.shared.iter().copied().filter(|&(_, _, f)| f >= t).collect()
    }

    /// Number of exact-copy groups with at least two members.
    pub fn copy_groups(&self) -> usize {
        let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
        for c in self.exact_center.iter().flatten() {
            *sizes.entry(*c).or_default() += 1;
        }
        sizes.values().filter(|&&n| n > 1).count()
    }

    /// Number of documents removed as copies (non-centers).
    pub fn copies_removed(&self) -> usize {
        self.exact_center.iter().enumerate().filter(|(i, c)| matches!(c, Some(c) if c != i)).count()
    }
}

fn sorted_intersection_len(a: &[u32], b: &[u32]) -> usize {
    let (mut x, mut y, mut n) = (0, 0, 0);
    while x < a.len() && y < b.len() {
        match a[x].cmp(&b[y]) {
            std::cmp::Ordering::Less => x += 1,
            std::cmp::Ordering::Greater => y += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                x += 1;
                y += 1;
            }
        }
    }
    n
}

/// Shows where two overlap tables first differ (they are long).
pub fn table_diff(got: &[(usize, usize, usize)], want: &[(usize, usize, usize)]) -> String {
    let got_set: BTreeSet<_> = got.iter().collect();
    let want_set: BTreeSet<_> = want.iter().collect();
    let extra: Vec<_> = got_set.difference(&want_set).take(10).collect();
    let missing: Vec<_> = want_set.difference(&got_set).take(10).collect();
    format!(
        "got {} rows, want {} rows; rows only in the output (first 10): {:?}; rows only in the reference (first 10): {:?}",
        got.len(),
        want.len(),
        extra,
        missing
    )
}

/// Checks an output directory against the reference for the same documents:
/// overlap.csv for threshold `t`, and lines, chunks and exact_center per document.
pub fn assert_matches_reference(dir: &Path, reference: &Reference, t: usize, what: &str) {
    let docs = read_docs(dir);
    assert_eq!(docs.len(), reference.lines.len(), "{what}: number of documents in docs.csv");
    let centers: Vec<Option<usize>> = docs.iter().map(|d| d.exact_center).collect();
    if centers != reference.exact_center {
        let i = (0..centers.len()).find(|&i| centers[i] != reference.exact_center[i]).unwrap();
        panic!(
            "{what}: exact_center differs first at doc {i}: got {:?}, want {:?}",
            centers[i], reference.exact_center[i]
        );
    }
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(d.lines, reference.lines[i], "{what}: lines of doc {i}");
        assert_eq!(d.chunks, reference.chunks[i], "{what}: chunks of doc {i}");
    }
    let got = read_overlap(dir);
    let want = reference.table(t);
    assert!(got == want, "{what}: overlap.csv differs from the reference: {}", table_diff(&got, &want));
}

/// The variable `.ci/run` sets: tests that need a peer tool (DuckDB,
/// PySpark) must run, not skip.
pub const REQUIRE_PEERS: &str = "OVERLAP_REQUIRE_PEERS";

/// Called by a test whose peer tool is missing, before it returns: under
/// `.ci/run` ([`REQUIRE_PEERS`] set) that fails the test; elsewhere the
/// test passes and says it skipped on the terminal itself. (The test
/// harness keeps what `eprintln!` prints from a passing test; a write to
/// the stderr handle goes past it.)
pub fn skip_without_peer(why: &str) {
    if std::env::var_os(REQUIRE_PEERS).is_some() {
        panic!("{why}, and {REQUIRE_PEERS} is set: this test may not skip");
    }
    let _ = writeln!(std::io::stderr(), "note: test skipped: {why}");
}

/// A small deterministic generator (xorshift): a test built on it fails
/// the same way on every run, and a proptest case is its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}
