//! `overlap dedup`: the documents the report's savings rule keeps, written
//! as JSONL, WARC or URLs. The kept set is checked against the rule
//! recomputed here from docs.csv and overlap.csv; the WARC output is
//! compared record by record with the input's bytes, read back by
//! `overlap run` (the same texts, the same fingerprints) and, when Python
//! has it, by warcio.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

const LEVELS: [&str; 2] = ["exact", "near"];

/// The chunking of testdata/report, which has near-replicas under it.
const REPORT_CHUNKING: [&str; 4] = ["--chunk", "lines:4", "-T", "3"];

/// `overlap run INPUTS --out DIR -q EXTRA`.
fn analyse(inputs: &[&str], dir: &Path, extra: &[&str]) {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(inputs.iter().map(|s| s.to_string()));
    args.extend(["--out".into(), arg(dir), "-q".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    overlap_ok(&args);
}

/// `overlap dedup DIR --level LEVEL --format FORMAT -o OUT EXTRA`.
fn dedup(dir: &Path, level: &str, format: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["dedup".to_string(), arg(dir), "--level".into(), level.into()];
    args.extend(["--format".into(), format.into(), "-o".into(), out.into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    overlap(&args)
}

/// Runs dedup into `tmp/NAME` and returns the file.
fn dedup_ok(dir: &Path, level: &str, format: &str, tmp: &Path, name: &str) -> PathBuf {
    let path = tmp.join(name);
    let out = dedup(dir, level, format, &arg(&path), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "dedup {level} {format}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "dedup printed on a pipe without --stats: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

// ------------------------------------------------------------ the rule, again

/// The docIDs the savings rule keeps, in docID order, recomputed from
/// docs.csv and overlap.csv as the report states the rule: exact, keep each
/// group's smallest docID; near, take pages in docID order and skip one
/// when a kept page is its exact copy or shares at least T chunks with it
/// (the Overlap table links exact-group centers, and a page shares what
/// its center shares). Empty documents are kept.
fn expected_kept(dir: &Path, level: &str) -> Vec<usize> {
    let docs = read_doc_rows(dir);
    let linked: BTreeSet<(usize, usize)> =
        if level == "near" { read_overlap_any(dir).into_iter().collect() } else { BTreeSet::new() };
    let mut kept: Vec<&DocRow> = Vec::new();
    for d in &docs {
        let Some(center) = d.exact_center else {
            kept.push(d);
            continue;
        };
        let skipped = match level {
            "exact" => center != d.doc_id,
            _ => kept
                .iter()
                .filter_map(|k| k.exact_center)
                .any(|kc| kc == center || linked.contains(&(kc.min(center), kc.max(center)))),
        };
        if !skipped {
            kept.push(d);
        }
    }
    kept.iter().map(|d| d.doc_id).collect()
}

fn docs_by_id(dir: &Path) -> BTreeMap<usize, DocRow> {
    read_doc_rows(dir).into_iter().map(|d| (d.doc_id, d)).collect()
}

// ------------------------------------------------------------ reading outputs

/// One line of the JSONL output.
#[derive(Debug)]
struct Line {
    doc_id: usize,
    url: String,
    source: String,
    text: Option<String>,
}

fn read_lines(path: &Path) -> Vec<Line> {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            assert_eq!(v.as_object().unwrap().len(), 4, "{l}");
            // Keys in this order: a quote inside a string is escaped, so
            // these are the keys.
            let at: Vec<Option<usize>> = ["{\"doc_id\":", ",\"url\":", ",\"source\":", ",\"text\":"]
                .iter()
                .map(|k| l.find(k))
                .collect();
            assert!(at[0] == Some(0) && at.windows(2).all(|w| w[0] < w[1]), "keys out of order: {l}");
            Line {
                doc_id: v["doc_id"].as_u64().expect("doc_id is a number") as usize,
                url: v["url"].as_str().unwrap().to_string(),
                source: v["source"].as_str().unwrap().to_string(),
                text: v["text"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// Checks a JSONL output against the analysis: the kept documents in
/// order, each with its docs.csv URL and source, and a text of its lines.
fn check_jsonl(path: &Path, dir: &Path, kept: &[usize]) -> Vec<Line> {
    let lines = read_lines(path);
    let ids: Vec<usize> = lines.iter().map(|l| l.doc_id).collect();
    assert_eq!(ids, kept, "{}: the kept docIDs", path.display());
    let docs = docs_by_id(dir);
    for l in &lines {
        let d = &docs[&l.doc_id];
        assert_eq!((&l.url, &l.source), (&d.url, &d.source), "doc {}", l.doc_id);
        let text = l.text.as_deref().expect("every document here has a page");
        // Normalized: normalizing again changes nothing.
        assert_eq!(normalize(text).join("\n"), text, "doc {}: not normalized", l.doc_id);
        let lines = if text.is_empty() { 0 } else { text.split('\n').count() };
        assert_eq!(lines, d.lines, "doc {}: lines", l.doc_id);
    }
    lines
}

fn check_urls(path: &Path, dir: &Path, kept: &[usize]) {
    let docs = docs_by_id(dir);
    let want: Vec<String> =
        kept.iter().map(|id| docs[id].url.clone()).filter(|u| !u.is_empty()).map(|u| u + "\n").collect();
    assert_eq!(fs::read_to_string(path).unwrap(), want.concat(), "{}", path.display());
}

/// The record (header and block, by its Content-Length) at the start of
/// `bytes`.
fn record_at(bytes: &[u8]) -> &[u8] {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a WARC header") + 4;
    let head = std::str::from_utf8(&bytes[..head_end]).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
        .map(|(_, v)| v.trim().parse().unwrap())
        .expect("a Content-Length");
    &bytes[..head_end + len]
}

/// How a test input is compressed, to find a record at its offset.
#[derive(Clone, Copy, Debug)]
enum Stored {
    /// One gzip member per record: the offset is the member's.
    PerRecordGzip,
    Plain,
    /// One member for the file: the offset is in the decompressed stream.
    WholeGzip,
    /// One zstd frame per record after a dictionary frame.
    PerRecordZstd,
}

/// The record at `offset` of `path`, found without overlap's reader.
fn input_record(path: &Path, offset: usize, stored: Stored) -> Vec<u8> {
    let data = fs::read(path).unwrap();
    let stream = match stored {
        Stored::Plain => data[offset..].to_vec(),
        Stored::WholeGzip => gunzip(path)[offset..].to_vec(),
        Stored::PerRecordGzip => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&data[offset..]).read_to_end(&mut out).unwrap();
            out
        }
        Stored::PerRecordZstd => {
            let dict_len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
            let dict = zstd::bulk::decompress(&data[8..8 + dict_len], 1 << 20).unwrap();
            let mut d =
                zstd::stream::read::Decoder::with_dictionary(&data[offset..], &dict).unwrap().single_frame();
            let mut out = Vec::new();
            d.read_to_end(&mut out).unwrap();
            out
        }
    };
    record_at(&stream).to_vec()
}

/// Checks a WARC output: one gzip member per kept document, holding its
/// input record (where docs.csv's source says, the inputs stored as
/// `stored`) byte for byte and the CRLF CRLF that ends a record.
fn check_warc_records(path: &Path, dir: &Path, kept: &[usize], stored: Stored) {
    let members = gzip_members(path);
    assert_eq!(members.len(), kept.len(), "{}: one gzip member per kept document", path.display());
    let docs = docs_by_id(dir);
    for ((_, member), id) in members.iter().zip(kept) {
        let (input, offset) = docs[id].source.rsplit_once(':').unwrap();
        let offset: usize = offset.parse().unwrap();
        let want = [input_record(&root().join(input), offset, stored), b"\r\n\r\n".to_vec()].concat();
        assert!(member == &want, "doc {id}: the record differs from the input's at {input}:{offset}");
    }
}

/// Reads a WARC output back with `overlap run`: its documents are the kept
/// ones, with their URLs, lines, chunks and titles, and the same
/// whole-text hashes (the same texts).
fn check_warc_reads_back(path: &Path, dir: &Path, kept: &[usize], tmp: &Path, chunking: &[&str]) {
    let again = tmp.join(format!("{}-again", path.file_name().unwrap().to_string_lossy()));
    analyse(&[&arg(path)], &again, chunking);
    let docs = docs_by_id(dir);
    let back = read_docs(&again);
    assert_eq!(back.len(), kept.len(), "{}: documents read back", path.display());
    let hashes = |dir: &Path| -> BTreeMap<usize, String> {
        let dump = String::from_utf8(overlap_ok(["dump", &arg(dir), "--exact"]).stdout).unwrap();
        dump.lines()
            .skip(1)
            .map(|l| {
                let (hash, id) = l.split_once(',').unwrap();
                (id.parse().unwrap(), hash.to_string())
            })
            .collect()
    };
    let (before, after) = (hashes(dir), hashes(&again));
    for (b, id) in back.iter().zip(kept) {
        let d = &docs[id];
        assert_eq!(
            (&b.url, b.bytes, b.lines, b.chunks, &b.title),
            (&d.url, d.bytes, d.lines, d.chunks, &d.title),
            "doc {id} read back as {}",
            b.doc_id
        );
        assert_eq!(after.get(&b.doc_id), before.get(id), "doc {id}: whole-text hash read back");
    }
}

/// Whether python3 can import warcio; under `.ci/run` it must.
fn have_warcio() -> bool {
    let probe = Command::new("python3").args(["-c", "import warcio"]).output();
    if probe.is_ok_and(|o| o.status.success()) {
        return true;
    }
    skip_without_peer("python3 cannot import warcio (python3 -m pip install warcio)");
    false
}

/// What warcio reads in a WARC output: each record's offset, type and
/// target URI.
fn warcio_records(path: &Path) -> Vec<(u64, String, String)> {
    const SCRIPT: &str = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
with open(sys.argv[1], 'rb') as f:
    it = ArchiveIterator(f)
    for r in it:
        r.raw_stream.read()
        print(json.dumps([it.get_record_offset(), r.rec_type,
                          r.rec_headers.get_header('WARC-Target-URI') or '']))
"#;
    let out = Command::new("python3").args(["-c", SCRIPT]).arg(path).output().expect("python3 runs");
    assert!(
        out.status.success(),
        "warcio failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// warcio reads the output as one record per gzip member, the kept
/// documents' records in order.
fn check_warcio(path: &Path, dir: &Path, kept: &[usize]) {
    let docs = docs_by_id(dir);
    let members = gzip_members(path);
    let records = warcio_records(path);
    assert_eq!(records.len(), kept.len(), "warcio: records in {}", path.display());
    for (((offset, wtype, url), (member, _)), id) in records.iter().zip(&members).zip(kept) {
        assert_eq!(offset, member, "warcio: a record per gzip member");
        assert!(["response", "resource", "conversion", "revisit"].contains(&wtype.as_str()), "{wtype}");
        assert_eq!(url, &docs[id].url, "warcio: doc {id}");
    }
}

// ------------------------------------------------------------ tests

#[test]
fn per_record_gzip_warc_every_level_and_format() {
    let tmp = tempdir();
    let dir = tmp.path().join("a");
    let input = testdata("report/crawl.warc.gz");
    analyse(&[&arg(&input)], &dir, &REPORT_CHUNKING);
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let warcio = have_warcio();
    for level in LEVELS {
        let kept = expected_kept(&dir, level);
        let documents = read_docs(&dir).len();
        // The report counts as skipped exactly what is not kept.
        assert_eq!(report["savings"][level]["pages"].as_u64(), Some((documents - kept.len()) as u64));
        check_jsonl(&dedup_ok(&dir, level, "jsonl", tmp.path(), &format!("{level}.jsonl")), &dir, &kept);
        check_urls(&dedup_ok(&dir, level, "urls", tmp.path(), &format!("{level}.urls")), &dir, &kept);
        let warc = dedup_ok(&dir, level, "warc", tmp.path(), &format!("{level}.warc.gz"));
        check_warc_records(&warc, &dir, &kept, Stored::PerRecordGzip);
        check_warc_reads_back(&warc, &dir, &kept, tmp.path(), &REPORT_CHUNKING);
        if warcio {
            check_warcio(&warc, &dir, &kept);
        }
    }
    assert!(
        expected_kept(&dir, "near").len() < expected_kept(&dir, "exact").len(),
        "the test data has near-replicas"
    );
}

#[test]
fn plain_whole_gzip_and_zstd_warc_give_the_same_records() {
    let tmp = tempdir();
    let members = gzip_members(&testdata("report/crawl.warc.gz"));
    let raw: Vec<Vec<u8>> = members.into_iter().map(|(_, r)| r).collect();
    let plain = tmp.path().join("crawl.warc");
    fs::write(&plain, raw.concat()).unwrap();
    let whole = tmp.path().join("whole.warc.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw.concat()).unwrap();
    fs::write(&whole, gz.finish().unwrap()).unwrap();
    let zst = tmp.path().join("crawl.warc.zst");
    fs::write(&zst, warc_zst(&raw).0).unwrap();
    let mut outputs = Vec::new();
    for (input, stored) in
        [(&plain, Stored::Plain), (&whole, Stored::WholeGzip), (&zst, Stored::PerRecordZstd)]
    {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let dir = tmp.path().join(format!("{name}-out"));
        analyse(&[&arg(input)], &dir, &REPORT_CHUNKING);
        let kept = expected_kept(&dir, "near");
        let warc = dedup_ok(&dir, "near", "warc", tmp.path(), &format!("{name}-kept.warc.gz"));
        check_warc_records(&warc, &dir, &kept, stored);
        let jsonl = dedup_ok(&dir, "near", "jsonl", tmp.path(), &format!("{name}-kept.jsonl"));
        let texts: Vec<Option<String>> =
            check_jsonl(&jsonl, &dir, &kept).into_iter().map(|l| l.text).collect();
        outputs.push((fs::read(&warc).unwrap(), texts));
    }
    // The same records, whatever the input's compression.
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "the outputs differ between compressions");
}

#[test]
fn jsonl_input_texts_are_the_normalized_texts() {
    let tmp = tempdir();
    let input = testdata("report/crawl.jsonl");
    let dir = tmp.path().join("a");
    analyse(&[&arg(&input)], &dir, &REPORT_CHUNKING);
    let originals = read_jsonl(&input);
    for level in LEVELS {
        let kept = expected_kept(&dir, level);
        let lines =
            check_jsonl(&dedup_ok(&dir, level, "jsonl", tmp.path(), &format!("{level}.jsonl")), &dir, &kept);
        for l in &lines {
            // One document per line of the input, in order.
            assert_eq!(l.text.as_deref(), Some(normalize(&originals[l.doc_id].text).join("\n").as_str()));
        }
        check_urls(&dedup_ok(&dir, level, "urls", tmp.path(), &format!("{level}.urls")), &dir, &kept);
    }
    let out = tmp.path().join("x.warc.gz");
    assert_usage_error(
        &["dedup", &arg(&dir), "--format", "warc", "-o", &arg(&out)],
        &["testdata/report/crawl.jsonl", "not WARC"],
    );
    assert!(!out.exists());
}

#[test]
fn arc_and_page_feed_inputs_give_jsonl_and_urls() {
    let tmp = tempdir();
    for input in ["testdata/sample.arc.gz", "testdata/equiv/docs.pagefeed"] {
        let dir = tmp.path().join(Path::new(input).file_name().unwrap());
        analyse(&[input], &dir, &[]);
        for level in LEVELS {
            let kept = expected_kept(&dir, level);
            let name = format!("{}-{level}", Path::new(input).file_name().unwrap().to_string_lossy());
            let lines = check_jsonl(
                &dedup_ok(&dir, level, "jsonl", tmp.path(), &format!("{name}.jsonl")),
                &dir,
                &kept,
            );
            assert!(lines.iter().any(|l| l.text.as_deref().is_some_and(|t| !t.is_empty())), "{input}: texts");
            check_urls(&dedup_ok(&dir, level, "urls", tmp.path(), &format!("{name}.urls")), &dir, &kept);
        }
        assert_usage_error(
            &["dedup", &arg(&dir), "--format", "warc", "-o", &arg(&tmp.path().join("x.warc.gz"))],
            &[input],
        );
    }
}

#[test]
fn revisits_of_another_input_are_never_kept_and_outputs_are_deterministic() {
    let tmp = tempdir();
    let dir = tmp.path().join("a");
    // wget-dedup.warc.gz revisits the pages of wget.warc.gz.
    analyse(&["testdata/real/wget.warc.gz", "testdata/real/wget-dedup.warc.gz"], &dir, &[]);
    let kept = expected_kept(&dir, "near");
    let warc = dedup_ok(&dir, "near", "warc", tmp.path(), "kept.warc.gz");
    check_warc_reads_back(&warc, &dir, &kept, tmp.path(), &[]);
    let docs = docs_by_id(&dir);
    let second =
        kept.iter().filter(|id| docs[id].source.starts_with("testdata/real/wget-dedup.warc.gz:")).count();
    assert!(second > 0 && second < kept.len(), "both inputs hold kept documents");
    check_warc_records(&warc, &dir, &kept, Stored::PerRecordGzip);
    if have_warcio() {
        check_warcio(&warc, &dir, &kept);
        let types: BTreeSet<String> = warcio_records(&warc).into_iter().map(|r| r.1).collect();
        assert!(
            !types.contains("revisit"),
            "a revisit's original comes first and is kept instead: {types:?}"
        );
    }
    // Same bytes whatever the threads.
    for format in ["jsonl", "warc"] {
        let a = tmp.path().join(format!("t1.{format}"));
        let b = tmp.path().join(format!("t2.{format}"));
        for (path, threads) in [(&a, "1"), (&b, "2")] {
            let out = dedup(&dir, "near", format, &arg(path), &["--threads", threads]);
            assert_eq!(out.status.code(), Some(0));
        }
        assert!(fs::read(&a).unwrap() == fs::read(&b).unwrap(), "{format} differs between --threads 1 and 2");
    }
}

/// A per-record gzip WARC of `records`.
fn write_warc_gz(path: &Path, records: &[Vec<u8>]) {
    let mut file = Vec::new();
    for r in records {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(r).unwrap();
        file.extend(gz.finish().unwrap());
    }
    fs::write(path, file).unwrap();
}

fn text_response(url: &str, digest: &str, body: &[u8]) -> Vec<u8> {
    warc_record(
        "response",
        &[("WARC-Target-URI", url), ("WARC-Date", "2024-01-01T00:00:00Z"), ("WARC-Payload-Digest", digest)],
        &http_response("200 OK", "Content-Type: text/plain\r\n", body),
    )
}

#[test]
fn a_kept_revisit_is_its_record_and_has_no_text() {
    // Under --scope host, a revisit of a page of another host is in
    // another scope than its original, and the center of its own group.
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc.gz");
    let revisit = warc_record(
        "revisit",
        &[
            ("WARC-Target-URI", "http://b.example/copy"),
            ("WARC-Date", "2024-02-01T00:00:00Z"),
            ("WARC-Payload-Digest", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        ],
        b"HTTP/1.1 200 OK\r\n\r\n",
    );
    let page = text_response("http://a.example/page", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", b"one\ntwo\n");
    write_warc_gz(&input, &[page, revisit]);
    let dir = tmp.path().join("a");
    analyse(&[&arg(&input)], &dir, &["--scope", "host"]);
    assert_eq!(expected_kept(&dir, "near"), [0, 1]);
    let lines = read_lines(&dedup_ok(&dir, "near", "jsonl", tmp.path(), "kept.jsonl"));
    let texts: Vec<Option<&str>> = lines.iter().map(|l| l.text.as_deref()).collect();
    assert_eq!(texts, [Some("one\ntwo"), None]);
    let warc = dedup_ok(&dir, "near", "warc", tmp.path(), "kept.warc.gz");
    check_warc_records(&warc, &dir, &[0, 1], Stored::PerRecordGzip);
    let out = dedup(&dir, "near", "jsonl", &arg(&tmp.path().join("s.jsonl")), &["--stats"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 kept without a page of their own"), "{stderr}");
}

#[test]
fn a_chain_reads_kept_pages_from_the_earlier_crawl_after_this_one() {
    let tmp = tempdir();
    let (w1, w2) = (tmp.path().join("w1.warc.gz"), tmp.path().join("w2.warc.gz"));
    let digest = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    write_warc_gz(
        &w1,
        &[
            text_response("http://a.example/1", digest, b"first page\nof the site\n"),
            text_response("http://a.example/2", "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", b"second page\n"),
        ],
    );
    write_warc_gz(
        &w2,
        &[text_response("http://a.example/3", "sha1:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", b"a new page\n")],
    );
    let (o1, o2) = (tmp.path().join("o1"), tmp.path().join("o2"));
    analyse(&[&arg(&w1)], &o1, &[]);
    analyse(&[&arg(&w2)], &o2, &["--previous", &arg(&o1)]);
    // Pages 1 and 2 are orphaned and kept (--keep-missing 1), read from w1.
    let kept = expected_kept(&o2, "near");
    assert_eq!(kept.len(), 3);
    let lines = read_lines(&dedup_ok(&o2, "near", "jsonl", tmp.path(), "kept.jsonl"));
    let got: Vec<(&str, Option<&str>)> = lines.iter().map(|l| (l.url.as_str(), l.text.as_deref())).collect();
    assert_eq!(
        got,
        [
            ("http://a.example/3", Some("a new page")),
            ("http://a.example/1", Some("first page\nof the site")),
            ("http://a.example/2", Some("second page")),
        ],
        "this crawl's input first, then the earlier crawl's"
    );
    let urls = fs::read_to_string(dedup_ok(&o2, "near", "urls", tmp.path(), "kept.urls")).unwrap();
    assert_eq!(urls, "http://a.example/1\nhttp://a.example/2\nhttp://a.example/3\n", "urls: docID order");
}

#[test]
fn inputs_that_cannot_be_read_again_are_named_before_anything_is_written() {
    let tmp = tempdir();
    let data = fs::read(testdata("report/crawl.jsonl")).unwrap();
    let dir = tmp.path().join("stdin");
    let out = overlap_stdin(["run", "-", "--out", &arg(&dir), "-q"], &data);
    assert_eq!(out.status.code(), Some(0));
    let kept_file = tmp.path().join("kept");
    for format in ["jsonl", "warc"] {
        assert_usage_error(
            &["dedup", &arg(&dir), "--format", format, "-o", &arg(&kept_file)],
            &["input - again: it was read from standard input"],
        );
        assert!(!kept_file.exists() && !tmp.path().join("kept.partial").exists());
    }
    // URLs need no input.
    check_urls(&dedup_ok(&dir, "near", "urls", tmp.path(), "kept.urls"), &dir, &expected_kept(&dir, "near"));

    // An input rewritten since the analysis, then one gone.
    let input = tmp.path().join("crawl.jsonl");
    fs::write(&input, &data).unwrap();
    let dir = tmp.path().join("changed");
    analyse(&[&arg(&input)], &dir, &[]);
    fs::write(&input, [&data[..], b"\n"].concat()).unwrap();
    assert_usage_error(
        &["dedup", &arg(&dir), "-o", &arg(&kept_file)],
        &[&format!("input {} again: ", arg(&input)), "has changed since the analysis"],
    );
    fs::remove_file(&input).unwrap();
    assert_usage_error(&["dedup", &arg(&dir), "-o", &arg(&kept_file)], &["is gone"]);
    assert!(!kept_file.exists());
}

#[test]
fn bad_flags_and_destinations_are_one_line_errors() {
    let tmp = tempdir();
    let dir = tmp.path().join("a");
    analyse(&["testdata/report/crawl.jsonl"], &dir, &[]);
    let d = arg(&dir);
    let out = arg(&tmp.path().join("kept.jsonl"));
    assert_usage_error(&["dedup", &d, "--level", "fuzzy", "-o", &out], &["--level", "fuzzy"]);
    assert_usage_error(&["dedup", &d, "--format", "csv", "-o", &out], &["--format", "csv"]);
    assert_usage_error(&["dedup", &d], &["--out"]);
    assert_usage_error(&["dedup", &arg(&tmp.path().join("none")), "-o", &out], &["does not exist"]);
    assert_usage_error(&["dedup", &d, "-o", &arg(&dir.join("docs.csv"))], &["inside the analysis"]);
    assert_usage_error(&["dedup", &d, "-o", &arg(&dir.join("kept.jsonl"))], &["inside the analysis"]);
    assert_usage_error(&["dedup", &d, "-o", "testdata/report/crawl.jsonl"], &["is the input"]);
    assert_usage_error(&["dedup", &d, "-o", &arg(&tmp.path().join("no/such/dir/kept"))], &["no directory"]);
    assert!(fs::read_to_string(dir.join("docs.csv")).unwrap().starts_with("doc_id,"));

    // Without a pairs stage, near-replicas cannot be told; exact copies can.
    let exact_only = tmp.path().join("b");
    overlap_ok(["fingerprint", "testdata/report/crawl.jsonl", "--out", &arg(&exact_only), "-q"]);
    overlap_ok(["exact", &arg(&exact_only), "-q"]);
    assert_usage_error(&["dedup", &arg(&exact_only), "-o", &out], &["no complete 'pairs' stage"]);
    let kept = expected_kept(&exact_only, "exact");
    check_urls(&dedup_ok(&exact_only, "exact", "urls", tmp.path(), "exact.urls"), &exact_only, &kept);
}

#[test]
fn standard_output_a_closed_pipe_and_stats() {
    let tmp = tempdir();
    let dir = tmp.path().join("a");
    analyse(&["testdata/report/crawl.warc.gz"], &dir, &REPORT_CHUNKING);
    let file = dedup_ok(&dir, "near", "jsonl", tmp.path(), "kept.jsonl");
    let out = dedup(&dir, "near", "jsonl", "-", &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout == fs::read(&file).unwrap(), "-o - writes what -o FILE does");

    // The reading end closed before anything is written: exit 0, nothing said.
    let mut child = overlap_cmd(["dedup", &arg(&dir), "--format", "warc", "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));

    // --stats: the counts, on a pipe too.
    let kept = expected_kept(&dir, "near");
    let docs = read_docs(&dir);
    let empty = docs.iter().filter(|d| d.exact_center.is_none()).count();
    let copies = docs.iter().filter(|d| d.exact_center.is_some_and(|c| c != d.doc_id)).count();
    let near = docs.len() - kept.len() - copies;
    let out = dedup(&dir, "near", "urls", &arg(&tmp.path().join("kept.urls")), &["--stats"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    let bytes = fs::metadata(tmp.path().join("kept.urls")).unwrap().len();
    let want = format!(
        "overlap: dedup: {} of {} documents kept ({copies} skipped as exact copies, {near} as near-replicas, \
         {empty} kept empty); {} URLs written ({bytes} bytes) in ",
        kept.len(),
        docs.len(),
        kept.len()
    );
    assert!(stderr.starts_with(&want), "{stderr}\nwant: {want}");
    assert!(near > 0 && copies > 0 && empty > 0, "the test data has each");
}

/// `--format skip`: a row for every skipped document with a URL, in docID
/// order, naming the kept page that stands for it, recomputed from
/// docs.csv and overlap.csv: an exact copy's center when it is kept, or
/// else the smallest kept page before the center that is its near-replica.
#[test]
fn the_skip_list_names_each_skipped_page_and_the_kept_page_that_stands_for_it() {
    let tmp = tempdir();
    let input = testdata("report/crawl.warc.gz");
    for (name, flags) in [("paper", &REPORT_CHUNKING[..]), ("default", &["--preset", "default"][..])] {
        let dir = tmp.path().join(name);
        analyse(&[&arg(&input)], &dir, flags);
        let docs = docs_by_id(&dir);
        let linked: BTreeSet<(usize, usize)> = read_overlap_any(&dir).into_iter().collect();
        for level in LEVELS {
            let kept: BTreeSet<usize> = expected_kept(&dir, level).into_iter().collect();
            let mut want = Vec::new();
            for d in docs.values() {
                let Some(center) = d.exact_center else { continue };
                if kept.contains(&d.doc_id) || d.url.is_empty() {
                    continue;
                }
                let by = if kept.contains(&center) {
                    center
                } else {
                    *kept
                        .iter()
                        .find(|&&k| k < center && linked.contains(&(k, center)))
                        .unwrap_or_else(|| panic!("{name} {level}: nothing stands for {}", d.doc_id))
                };
                let why = if center == d.doc_id { "near" } else { "exact" };
                let rule = "input-order".to_string();
                want.push(vec![d.url.clone(), docs[&by].url.clone(), why.to_string(), rule]);
            }
            assert!(!want.is_empty(), "{name} {level}: the test data has skipped pages");
            let path = dedup_ok(&dir, level, "skip", tmp.path(), &format!("{name}-{level}.csv"));
            let (header, rows) = read_csv(&path);
            assert_eq!(header, ["url", "kept_url", "why", "rule"]);
            assert_eq!(rows, want, "{name} {level}");
        }
    }
}

/// overlap.csv's (doc_i, doc_j), whatever its measure columns.
fn read_overlap_any(dir: &Path) -> Vec<(usize, usize)> {
    let (_, rows) = read_csv(&dir.join("overlap.csv"));
    rows.iter().map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap())).collect()
}
