//! Input formats: the same documents as WARC (per-record gzip, whole-file
//! gzip, plain), JSONL and WebBase page feed give the same results, and the
//! sample crawl is read record by record as its manifest says.

mod common;

use common::*;
use flate2::{Compression, write::GzEncoder};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

/// One WARC record of a file: where it starts (in the file and in the
/// decompressed stream), its type, target URI and HTTP status if any.
#[derive(Debug, Clone)]
struct Record {
    file_offset: u64,
    stream_offset: u64,
    wtype: String,
    url: String,
    http_status: Option<u16>,
}

impl Record {
    /// Whether the contract makes a document of this record.
    fn is_document(&self) -> bool {
        match self.wtype.as_str() {
            "resource" | "conversion" => true,
            "response" => self.http_status == Some(200),
            _ => false,
        }
    }
}

fn parse_record(raw: &[u8], file_offset: u64, stream_offset: u64) -> (Record, usize) {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("WARC header ends") + 4;
    let head = std::str::from_utf8(&raw[..head_end]).unwrap();
    let field = |name: &str| {
        head.lines().find_map(|l| {
            l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim().to_string())
        })
    };
    let len: usize = field("Content-Length").unwrap().parse().unwrap();
    let block = &raw[head_end..head_end + len];
    let wtype = field("WARC-Type").unwrap();
    let http_status = if wtype == "response" {
        let line = block.split(|&b| b == b'\n').next().unwrap();
        std::str::from_utf8(line).unwrap().split(' ').nth(1).and_then(|s| s.parse().ok())
    } else {
        None
    };
    let rec = Record {
        file_offset,
        stream_offset,
        wtype,
        url: field("WARC-Target-URI").unwrap_or_default(),
        http_status,
    };
    (rec, head_end + len + 4)
}

/// The records of a per-record gzip WARC, each member decompressed alone.
fn per_record_gzip_records(path: &Path) -> Vec<Record> {
    let data = fs::read(path).unwrap();
    let mut rest: &[u8] = &data;
    let mut stream_offset = 0u64;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let file_offset = (data.len() - rest.len()) as u64;
        let mut raw = Vec::new();
        flate2::bufread::GzDecoder::new(&mut rest).read_to_end(&mut raw).unwrap();
        let (rec, used) = parse_record(&raw, file_offset, stream_offset);
        assert_eq!(used, raw.len(), "one record per gzip member");
        stream_offset += raw.len() as u64;
        out.push(rec);
    }
    out
}

fn sources(dir: &Path) -> Vec<String> {
    read_docs(dir).into_iter().map(|d| d.source).collect()
}

fn run_out(input: &str, out: &Path, extra: &[&str]) {
    let mut args =
        vec!["run".to_string(), input.to_string(), "--out".to_string(), arg(out), "-q".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    overlap_ok(&args);
}

fn centers(dir: &Path) -> Vec<Option<usize>> {
    read_docs(dir).into_iter().map(|d| d.exact_center).collect()
}

// ------------------------------------------------------------ equivalence

const EQUIV_SETTINGS: [&[&str]; 3] =
    [&[], &["--chunk", "lines:2", "-T", "3"], &["--chunk", "words:8", "-T", "20"]];

#[test]
fn equiv_warc_jsonl_and_pagefeed_give_identical_results() {
    let tmp = tempdir();
    let jsonl = read_jsonl(&testdata("equiv/docs.jsonl"));
    for (n, extra) in EQUIV_SETTINGS.iter().enumerate() {
        let mut outs = Vec::new();
        for input in
            ["testdata/equiv/docs.jsonl", "testdata/equiv/docs.warc.gz", "testdata/equiv/docs.pagefeed"]
        {
            let out = tmp.path().join(format!("{n}-{}", input.rsplit('/').next().unwrap()));
            run_out(input, &out, extra);
            outs.push((input, out));
        }
        let (_, first) = &outs[0];
        let overlap = fs::read(first.join("overlap.csv")).unwrap();
        assert!(
            !read_overlap(first).is_empty(),
            "test data: the equiv set must give overlap rows with {extra:?}"
        );
        let urls: Vec<String> = jsonl.iter().map(|d| d.url.clone()).collect();
        for (input, out) in &outs {
            let docs = read_docs(out);
            assert_eq!(
                docs.iter().map(|d| d.url.clone()).collect::<Vec<_>>(),
                urls,
                "{input}: urls in input order"
            );
            assert!(
                fs::read(out.join("overlap.csv")).unwrap() == overlap,
                "{input} {extra:?}: overlap.csv differs from the JSONL run: {}",
                table_diff(&read_overlap(out), &read_overlap(first))
            );
            assert_eq!(
                centers(out),
                centers(first),
                "{input} {extra:?}: exact_center differs from the JSONL run"
            );
            let lines: Vec<usize> = docs.iter().map(|d| d.lines).collect();
            let first_lines: Vec<usize> = read_docs(first).iter().map(|d| d.lines).collect();
            assert_eq!(lines, first_lines, "{input}: lines per document differ from the JSONL run");
        }
    }
}

#[test]
fn equiv_jsonl_run_matches_reference() {
    let tmp = tempdir();
    let docs = read_jsonl(&testdata("equiv/docs.jsonl"));
    let reference = Reference::new(&texts(&docs), Spec::parse("lines:2"));
    assert!(reference.copy_groups() >= 2, "test data: the equiv set must contain exact copies");
    assert!(
        reference.exact_center.contains(&None),
        "test data: the equiv set must contain an empty document"
    );
    let out = tmp.path().join("out");
    run_out("testdata/equiv/docs.pagefeed", &out, &["--chunk", "lines:2", "-T", "3"]);
    assert_matches_reference(&out, &reference, 3, "equiv page feed, lines:2 -T 3");
}

#[test]
fn equiv_warc_whole_file_gzip_and_plain_match_per_record_gzip() {
    let tmp = tempdir();
    let plain = gunzip(&testdata("equiv/docs.warc.gz"));
    let plain_path = tmp.path().join("docs.warc");
    fs::write(&plain_path, &plain).unwrap();
    let whole_path = tmp.path().join("whole.warc.gz");
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(&plain).unwrap();
    fs::write(&whole_path, enc.finish().unwrap()).unwrap();

    for extra in EQUIV_SETTINGS {
        let base = tmp.path().join("per-record");
        run_out("testdata/equiv/docs.warc.gz", &base, extra);
        for (name, path) in [("plain", &plain_path), ("whole-file gzip", &whole_path)] {
            let out = tmp.path().join(name);
            run_out(&arg(path), &out, extra);
            assert!(
                fs::read(out.join("overlap.csv")).unwrap() == fs::read(base.join("overlap.csv")).unwrap(),
                "{name} WARC {extra:?}: overlap.csv differs from the per-record gzip run"
            );
            assert_eq!(centers(&out), centers(&base), "{name} WARC {extra:?}: exact_center differs");
        }
    }
}

#[test]
fn warc_sources_give_record_offsets_for_each_compression() {
    let records = per_record_gzip_records(&testdata("equiv/docs.warc.gz"));
    let doc_records: Vec<&Record> = records.iter().filter(|r| r.is_document()).collect();
    assert!(doc_records.len() > 10);
    let tmp = tempdir();

    let out = tmp.path().join("per-record");
    run_out("testdata/equiv/docs.warc.gz", &out, &[]);
    let want: Vec<String> =
        doc_records.iter().map(|r| format!("testdata/equiv/docs.warc.gz:{}", r.file_offset)).collect();
    assert_eq!(sources(&out), want, "per-record gzip: source is PATH:offset of the record's gzip member");
    let urls: Vec<String> = read_docs(&out).into_iter().map(|d| d.url).collect();
    let want_urls: Vec<String> = doc_records.iter().map(|r| r.url.clone()).collect();
    assert_eq!(urls, want_urls, "url is the WARC-Target-URI of each document record");

    let plain_path = tmp.path().join("docs.warc");
    fs::write(&plain_path, gunzip(&testdata("equiv/docs.warc.gz"))).unwrap();
    let out = tmp.path().join("plain");
    run_out(&arg(&plain_path), &out, &[]);
    let want: Vec<String> =
        doc_records.iter().map(|r| format!("{}:{}", arg(&plain_path), r.stream_offset)).collect();
    assert_eq!(sources(&out), want, "plain WARC: source is PATH:offset of the record");
}

#[test]
fn equiv_warc_zst_matches_per_record_gzip_with_frame_offsets() {
    let members = gzip_members(&testdata("equiv/docs.warc.gz"));
    let raw: Vec<Vec<u8>> = members.iter().map(|(_, r)| r.clone()).collect();
    let records = per_record_gzip_records(&testdata("equiv/docs.warc.gz"));
    let tmp = tempdir();
    let (file, offsets) = warc_zst(&raw);
    let per_record = tmp.path().join("docs.warc.zst");
    fs::write(&per_record, &file).unwrap();
    // Plain `zstd`: one frame for the whole file.
    let whole = tmp.path().join("whole.warc.zst");
    fs::write(&whole, zstd::bulk::compress(&raw.concat(), 3).unwrap()).unwrap();

    let base = tmp.path().join("gzip");
    run_out("testdata/equiv/docs.warc.gz", &base, &[]);
    for path in [&per_record, &whole] {
        let out = tmp.path().join(format!("out-{}", path.file_name().unwrap().to_string_lossy()));
        run_out(&arg(path), &out, &[]);
        assert!(
            fs::read(out.join("overlap.csv")).unwrap() == fs::read(base.join("overlap.csv")).unwrap(),
            "{}: overlap.csv differs from the per-record gzip run",
            path.display()
        );
        assert_eq!(centers(&out), centers(&base), "{}: exact_center differs", path.display());
    }
    // Records are found again at their frames' offsets.
    let out = tmp.path().join("out-docs.warc.zst");
    let want: Vec<String> = records
        .iter()
        .zip(&offsets)
        .filter(|(r, _)| r.is_document())
        .map(|(_, o)| format!("{}:{o}", arg(&per_record)))
        .collect();
    assert_eq!(sources(&out), want, "per-record zstd: source is PATH:offset of the record's frame");
}

#[test]
fn xz_and_bzip2_inputs_are_refused_with_the_way_to_pipe_them() {
    let tmp = tempdir();
    for (name, data) in [
        ("crawl.warc.xz", &b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\x00\x21\x01"[..]),
        ("crawl.warc.bz2", &b"BZh91AY&SY\x9b\x8e\x12\x34\x00\x00\x01\x41"[..]),
    ] {
        let path = tmp.path().join(name);
        fs::write(&path, data).unwrap();
        // Following the old advice, --input-format, must not read nothing
        // and succeed.
        for extra in [&[][..], &["--input-format", "warc"][..]] {
            let out = tmp.path().join("out");
            let mut args = vec!["run".to_string(), arg(&path), "--out".to_string(), arg(&out)];
            args.extend(extra.iter().map(|s| s.to_string()));
            let run = overlap(&args);
            let err = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(2), "{name} {extra:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
            let tool = if name.ends_with("xz") { "xz -dc" } else { "bzip2 -dc" };
            assert!(err.contains(name) && err.contains(tool) && err.contains("| overlap run -"), "{err}");
        }
    }
}

// ------------------------------------------------------------ the sample crawl

struct ManifestDoc {
    url: String,
    offset: u64,
    content_type: String,
    src: Option<String>,
}

fn sample_manifest() -> (Vec<ManifestDoc>, serde_json::Value) {
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(testdata("sample.manifest.json")).unwrap()).unwrap();
    let docs = m["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| ManifestDoc {
            url: d["url"].as_str().unwrap().to_string(),
            offset: d["offset"].as_u64().unwrap(),
            content_type: d["content_type"].as_str().unwrap().to_string(),
            src: d["src"].as_str().map(String::from),
        })
        .collect();
    (docs, m)
}

fn host_of(url: &str) -> &str {
    url.split_once("://").unwrap().1.split('/').next().unwrap()
}

#[test]
fn sample_warc_documents_are_the_200_responses_in_order() {
    let (manifest, m) = sample_manifest();
    let tmp = tempdir();
    let out = tmp.path().join("out");
    run_out("testdata/sample.warc.gz", &out, &[]);
    let docs = read_docs(&out);
    assert_eq!(docs.len(), manifest.len(), "documents in sample.warc.gz");
    for (d, want) in docs.iter().zip(&manifest) {
        assert_eq!(d.url, want.url, "doc {}: url", d.doc_id);
        assert_eq!(d.host, host_of(&want.url), "doc {}: host", d.doc_id);
        assert_eq!(d.source, format!("testdata/sample.warc.gz:{}", want.offset), "doc {}: source", d.doc_id);
        // HTML pages carry their <title>; plain text has none.
        if want.content_type == "text/html" && d.lines > 0 {
            assert!(!d.title.is_empty(), "doc {}: an HTML page has a title", d.doc_id);
            assert!(
                !d.title.contains('<') && !d.title.contains('\n'),
                "doc {}: title {:?}",
                d.doc_id,
                d.title
            );
        } else if want.content_type == "text/plain" {
            assert_eq!(d.title, "", "doc {}: plain text has no title", d.doc_id);
        }
    }
    let rust_titles = docs.iter().filter(|d| d.title.ends_with(" - Rust")).count();
    assert!(rust_titles > 10, "the Rust documentation pages keep titles like 'Vec in std::vec - Rust'");
    let stats = read_stats(&out);
    let counts = &m["records_not_documents"];
    assert_eq!(stats["fingerprint"]["documents"], serde_json::json!(manifest.len()));
    assert_eq!(stats["fingerprint"]["empty_documents"], m["empty_documents"]);
    assert_eq!(stats["fingerprint"]["skipped"]["warc_request"], counts["request"], "skipped.warc_request");
    assert_eq!(
        stats["fingerprint"]["skipped"]["http_status_not_200"], counts["not_200"],
        "skipped.http_status_not_200"
    );
    let corrupt = stats["fingerprint"]["corrupt"].as_array().expect("fingerprint.corrupt is a list");
    assert!(corrupt.is_empty(), "the sample has no corrupt records: {corrupt:?}");
}

#[test]
fn sample_warc_plain_text_pages_match_reference_and_mirrors_are_copies() {
    let (manifest, _) = sample_manifest();
    let tmp = tempdir();
    let out = tmp.path().join("out");
    run_out("testdata/sample.warc.gz", &out, &[]);
    let docs = read_docs(&out);
    assert_eq!(docs.len(), manifest.len());

    // The text/plain pages, whose text is their body as is.
    let plain: Vec<usize> =
        (0..manifest.len()).filter(|&i| manifest[i].content_type == "text/plain").collect();
    let plain_texts: Vec<String> = plain
        .iter()
        .map(|&i| match &manifest[i].src {
            Some(src) => fs::read_to_string(testdata("src").join(src)).unwrap(),
            None => String::new(),
        })
        .collect();
    let reference = Reference::new(&plain_texts, Spec::Lines { k: 4, s: 4 });
    for (x, &i) in plain.iter().enumerate() {
        assert_eq!(docs[i].lines, reference.lines[x], "doc {i} ({}): lines", manifest[i].url);
        assert_eq!(docs[i].chunks, reference.chunks[x], "doc {i} ({}): chunks", manifest[i].url);
        assert_eq!(
            docs[i].exact_center,
            reference.exact_center[x].map(|c| plain[c]),
            "doc {i} ({}): exact_center",
            manifest[i].url
        );
    }
    // Pairs of two text/plain pages do not depend on the HTML pages.
    let is_plain: Vec<bool> = (0..manifest.len()).map(|i| manifest[i].content_type == "text/plain").collect();
    let got: Vec<(usize, usize, usize)> =
        read_overlap(&out).into_iter().filter(|&(i, j, _)| is_plain[i] && is_plain[j]).collect();
    let want: Vec<(usize, usize, usize)> =
        reference.table(15).into_iter().map(|(i, j, f)| (plain[i], plain[j], f)).collect();
    assert!(!want.is_empty(), "test data: text/plain pages of the sample must overlap at T=15");
    assert!(got == want, "overlap among text/plain pages: {}", table_diff(&got, &want));

    // Pages with the same bytes (mirrors, aliases) are exact copies, HTML included.
    let mut by_src: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, d) in manifest.iter().enumerate() {
        if let Some(src) = &d.src {
            by_src.entry(src).or_default().push(i);
        }
    }
    let mut html_groups = 0;
    for (src, ids) in by_src.iter().filter(|(_, ids)| ids.len() > 1) {
        let center = docs[ids[0]].exact_center;
        assert!(center.is_some() && center <= Some(ids[0]), "{src}: center {center:?} of doc {}", ids[0]);
        for &i in ids {
            assert_eq!(docs[i].exact_center, center, "{src}: doc {i} is a copy of doc {}", ids[0]);
        }
        html_groups += src.ends_with(".html") as usize;
    }
    assert!(html_groups > 0, "test data: some HTML pages are served twice");

    // HTML near-replicas (std vs core, stable vs nightly) overlap too.
    let is_html: Vec<bool> = manifest.iter().map(|d| d.content_type == "text/html").collect();
    let html_pairs = read_overlap(&out).into_iter().filter(|&(i, j, _)| is_html[i] && is_html[j]).count();
    assert!(html_pairs > 0, "no pair of HTML pages reaches T=15");
}

#[test]
fn jsonl_url_and_text_fields_can_be_renamed() {
    let tmp = tempdir();
    let docs = read_jsonl(&testdata("equiv/docs.jsonl"));
    let mut s = String::new();
    for d in &docs {
        s.push_str(&serde_json::json!({"address": d.url, "body": d.text, "text": "decoy"}).to_string());
        s.push('\n');
    }
    let input = tmp.path().join("renamed.jsonl");
    fs::write(&input, s).unwrap();
    let out = tmp.path().join("out");
    run_out(&arg(&input), &out, &["--url-field", "address", "--text-field", "body", "-T", "3"]);
    let reference = Reference::new(&texts(&docs), Spec::Lines { k: 4, s: 4 });
    assert_matches_reference(&out, &reference, 3, "renamed JSONL fields");
    let urls: Vec<String> = read_docs(&out).into_iter().map(|d| d.url).collect();
    assert_eq!(urls, docs.iter().map(|d| d.url.clone()).collect::<Vec<_>>());
}

/// `docs` as JSONL lines of `line(i, doc)`, written to `dir/name`.
fn write_json_lines(
    dir: &Path,
    name: &str,
    docs: &[JsonDoc],
    line: impl Fn(usize, &JsonDoc) -> serde_json::Value,
) -> std::path::PathBuf {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate() {
        s.push_str(&line(i, d).to_string());
        s.push('\n');
    }
    let path = dir.join(name);
    fs::write(&path, s).unwrap();
    path
}

/// datatrove and dolma keep the URL in `metadata`: `--url-field
/// metadata.url` reaches it. Without it the analysis goes on with every URL
/// empty, and each input says so in one warning line naming the fields its
/// first record has (silenced by -q, as every warning); the same run with
/// the flag redoes the stage and fills the URLs in.
#[test]
fn a_dolma_jsonl_gives_its_urls_with_a_dotted_url_field() {
    let tmp = tempdir();
    let docs = read_jsonl(&testdata("equiv/docs.jsonl"));
    let dolma = |i: usize, d: &JsonDoc| serde_json::json!({"id": format!("d{i}"), "text": d.text, "metadata": {"url": d.url, "source": "cc"}});
    let half = docs.len() / 2;
    let a = write_json_lines(tmp.path(), "a.jsonl", &docs[..half], dolma);
    let b = write_json_lines(tmp.path(), "b.jsonl", &docs[half..], dolma);
    let out = tmp.path().join("out");
    let run_in = |out: &Path, extra: &[&str]| {
        let mut args =
            vec!["run".to_string(), arg(&a), arg(&b), "--out".into(), arg(out), "-T".into(), "3".into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        overlap_ok(&args)
    };
    let run = |extra: &[&str]| run_in(&out, extra);
    let urls = |dir: &Path| read_docs(dir).into_iter().map(|d| d.url).collect::<Vec<_>>();

    let without = run(&[]);
    let said = String::from_utf8_lossy(&without.stderr);
    let warnings: Vec<&str> = said.lines().filter(|l| l.starts_with("overlap: warning: ")).collect();
    let want = |input: &Path| {
        format!(
            "overlap: warning: {}: no record has the field \"url\", so every URL is empty (the first record's \
             fields: \"id\", \"metadata.source\", \"metadata.url\", \"text\"): name the field that holds the URL \
             with --url-field (a dotted name such as metadata.url reaches a field inside an object)",
            arg(input)
        )
    };
    assert_eq!(warnings, [want(&a), want(&b)], "{said}");
    assert_eq!(urls(&out), vec![String::new(); docs.len()]);
    let quiet = run_in(&tmp.path().join("quiet"), &["-q"]);
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));

    let with = run(&["--url-field", "metadata.url"]);
    let said = String::from_utf8_lossy(&with.stderr);
    assert!(!said.contains("warning"), "{said}");
    assert_eq!(urls(&out), docs.iter().map(|d| d.url.clone()).collect::<Vec<_>>());
    let reference = Reference::new(&texts(&docs), Spec::Lines { k: 4, s: 4 });
    assert_matches_reference(&out, &reference, 3, "dolma-shaped JSONL");
}

/// `--text-field` takes a dotted name too, which a top-level `text` does
/// not stand in for; a first record without it names its nested fields.
#[test]
fn a_dotted_text_field_reads_the_nested_text() {
    let tmp = tempdir();
    let docs = read_jsonl(&testdata("equiv/docs.jsonl"));
    let input = write_json_lines(
        tmp.path(),
        "nested.jsonl",
        &docs,
        |_, d| serde_json::json!({"url": d.url, "text": "decoy", "doc": {"lang": "en", "body": {"main": d.text}}}),
    );
    let out = tmp.path().join("out");
    run_out(&arg(&input), &out, &["--text-field", "doc.body.main", "-T", "3"]);
    let reference = Reference::new(&texts(&docs), Spec::Lines { k: 4, s: 4 });
    assert_matches_reference(&out, &reference, 3, "nested JSONL text");
    let urls: Vec<String> = read_docs(&out).into_iter().map(|d| d.url).collect();
    assert_eq!(urls, docs.iter().map(|d| d.url.clone()).collect::<Vec<_>>());

    let elsewhere = tmp.path().join("elsewhere");
    assert_usage_error(
        &["run", &arg(&input), "--text-field", "doc.main", "--out", &arg(&elsewhere)],
        &[concat!(
            r#"its first record has no field "doc.main" (its fields: "doc.body.main", "doc.lang", "text", "url"): "#,
            "name the field that holds the text with --text-field (and the URL's with --url-field; a dotted name \
             such as metadata.text reaches a field inside an object)"
        )],
    );
    assert!(!elsewhere.exists(), "nothing is written");
}

// ------------------------------------------------------------ ARC

#[test]
fn sample_arc_documents_are_the_page_records_in_order() {
    // scripts/make_arc_testdata.py writes one record per member: the version
    // block, a DNS lookup, pages, and a 404 (record 3). Records 2 and 5 are
    // the same text on two hosts.
    let members = gzip_members(&testdata("sample.arc.gz"));
    assert_eq!(members.len(), 9, "records in sample.arc.gz");
    let header = |i: usize| -> Vec<String> {
        let raw = &members[i].1;
        let line = &raw[..raw.iter().position(|&b| b == b'\n').unwrap()];
        std::str::from_utf8(line).unwrap().split(' ').map(String::from).collect()
    };
    assert!(header(0)[0].starts_with("filedesc://") && header(1)[0].starts_with("dns:"));
    let pages = [2, 4, 5, 6, 7, 8];

    let tmp = tempdir();
    let out = tmp.path().join("out");
    run_out("testdata/sample.arc.gz", &out, &[]);
    let docs = read_docs(&out);
    let urls: Vec<String> = docs.iter().map(|d| d.url.clone()).collect();
    let want_urls: Vec<String> = pages.iter().map(|&i| header(i)[0].clone()).collect();
    assert_eq!(urls, want_urls, "url is the first field of each page record's header line");
    let want_sources: Vec<String> =
        pages.iter().map(|&i| format!("testdata/sample.arc.gz:{}", members[i].0)).collect();
    assert_eq!(sources(&out), want_sources, "source is PATH:offset of the record's gzip member");
    for d in &docs {
        assert_eq!(d.host, host_of(&d.url), "doc {}: host", d.doc_id);
    }

    // The text/plain pages (HTTP, ftp://, chunked) are their source texts.
    let plain = [
        (0, "common-licenses/BSD"),
        (2, "common-licenses/BSD"),
        (3, "doc/bzip2/copyright"),
        (5, "doc/fakeroot/copyright"),
    ];
    let texts: Vec<String> =
        plain.iter().map(|(_, src)| fs::read_to_string(testdata("src").join(src)).unwrap()).collect();
    let reference = Reference::new(&texts, Spec::Lines { k: 4, s: 4 });
    for (x, &(i, src)) in plain.iter().enumerate() {
        assert_eq!(docs[i].lines, reference.lines[x], "doc {i} ({src}): lines");
        assert_eq!(docs[i].chunks, reference.chunks[x], "doc {i} ({src}): chunks");
    }
    assert_eq!(docs[2].exact_center, Some(0), "the mirrored license is a copy of the first");
    assert!(docs[1].lines > 10 && docs[4].lines > 10, "the HTML pages (one gzip-encoded) have text");

    let stats = read_stats(&out);
    let fp = &stats["fingerprint"];
    assert_eq!(fp["documents"], serde_json::json!(pages.len()));
    assert_eq!(fp["skipped"]["arc_filedesc"], serde_json::json!(1), "skipped.arc_filedesc");
    assert_eq!(fp["skipped"]["arc_other"], serde_json::json!(1), "skipped.arc_other");
    assert_eq!(fp["skipped"]["http_status_not_200"], serde_json::json!(1), "skipped.http_status_not_200");
    let corrupt = fp["corrupt"].as_array().expect("fingerprint.corrupt is a list");
    assert!(corrupt.is_empty(), "the sample has no corrupt records: {corrupt:?}");
}

// ------------------------------------------------------------ charsets

/// The same pages served in several encodings, declared in the HTTP header,
/// in a `<meta>`, or not at all, give identical text: one exact group per
/// page. stats.json says how each encoding was found.
#[test]
fn the_same_page_in_other_charsets_gives_the_same_text() {
    let french = "<p>Le cœur déçu mais l'âme plutôt naïve, Louÿs rêva de crapaüter en canoë au delà des îles, \
                  près du mälström où brûlent les novæ.</p><p>À Noël, où un zéphyr haï me vêt de glaçons \
                  würmiens, je dîne d'exquis rôtis de bœuf au kir à l'aÿ d'âge mûr et cætera.</p>";
    let japanese = "<p>いろはにほへと ちりぬるを わかよたれそ つねならむ うゐのおくやま けふこえて あさきゆめみし \
                    ゑひもせす。</p><p>日本語の文章は、文字コードの判定が難しいと言われています。東京都の天気は晴れです。</p>";
    let page = |head: &str, body: &str| {
        format!("<html><head>{head}<title>T</title></head><body>{body}</body></html>")
    };
    let enc = |e: &'static encoding_rs::Encoding, s: &str| e.encode(s).0.into_owned();
    let response = |url: &str, content_type: &str, body: &[u8]| {
        warc_record(
            "response",
            &[("WARC-Target-URI", url), ("Content-Type", "application/http")],
            &http_response("200 OK", &format!("Content-Type: {content_type}\r\n"), body),
        )
    };
    let (w1252, sjis, utf8) = (encoding_rs::WINDOWS_1252, encoding_rs::SHIFT_JIS, encoding_rs::UTF_8);
    let meta = "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">";
    let warc = [
        response("http://fr/utf8", "text/html; charset=utf-8", &enc(utf8, &page("", french))),
        response("http://fr/meta", "text/html", &enc(w1252, &page(meta, french))),
        response("http://fr/none", "text/html", &enc(w1252, &page("", french))),
        response("http://ja/utf8", "text/html", &enc(utf8, &page("", japanese))),
        response("http://ja/http", "text/html; charset=Shift_JIS", &enc(sjis, &page("", japanese))),
        response("http://ja/none", "text/html", &enc(sjis, &page("", japanese))),
    ]
    .concat();
    let tmp = tempdir();
    let input = tmp.path().join("charsets.warc");
    fs::write(&input, warc).unwrap();
    let out = tmp.path().join("out");
    run_out(&arg(&input), &out, &[]);
    let docs = read_docs(&out);
    assert_eq!(centers(&out), [Some(0), Some(0), Some(0), Some(3), Some(3), Some(3)], "{docs:#?}");
    assert!(docs.iter().all(|d| d.lines == 2));
    let fp = &read_stats(&out)["fingerprint"];
    assert_eq!(
        fp["charset_sources"],
        serde_json::json!({"default": 1, "detected": 2, "http": 2, "meta": 1}),
        "{fp:#}"
    );
    assert_eq!(fp["encodings"], serde_json::json!({"Shift_JIS": 2, "UTF-8": 2, "windows-1252": 2}));
    assert_eq!(fp["malformed_encoding_documents"], 0);
}

/// Header lines ending in CR CR LF, as some writers emit them (warcio reads
/// Warcat's `missing-status-text.warc` so): every trailing CR is stripped,
/// the blank line that ends the header is found, and the page is read, not
/// skipped as a header cut off.
#[test]
fn warc_and_http_header_lines_ending_cr_cr_lf_are_read() {
    let tmp = tempdir();
    let html =
        b"<html><head><title>CR CR LF</title></head><body><p>one line</p><p>two lines</p></body></html>";
    let http = http_response("200 OK", "Content-Type: text/html\r\n", html);
    let http = String::from_utf8(http).unwrap().replace("\r\n", "\r\r\n");
    let mut warc = warc_record(
        "response",
        &[
            ("WARC-Target-URI", "http://crcr.example/page"),
            ("WARC-Record-ID", "<urn:uuid:1>"),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        http.as_bytes(),
    );
    // The WARC header's own lines too, but not the block: its length counts
    // the bytes as they are.
    let split = warc.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let header = String::from_utf8(warc[..split + 4].to_vec()).unwrap().replace("\r\n", "\r\r\n");
    warc.splice(..split + 4, header.into_bytes());
    let file = tmp.path().join("crcr.warc");
    fs::write(&file, &warc).unwrap();
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&file), "--out", &arg(&out), "-q"]);
    let docs = read_doc_rows(&out);
    assert_eq!(docs.len(), 1, "{docs:?}");
    assert_eq!(docs[0].url, "http://crcr.example/page");
    assert_eq!(docs[0].title, "CR CR LF");
    assert_eq!(docs[0].lines, 2);
    let stats = read_stats(&out);
    assert_eq!(stats["fingerprint"]["corrupt_records"].as_u64().unwrap_or(0), 0, "{stats}");
}
