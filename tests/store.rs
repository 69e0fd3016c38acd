//! The output directory as a store: its manifest, stage stamps keyed on
//! the inputs' identities rather than their spelling, and the later
//! stages reading their configuration from the manifest.

mod common;

use std::fs;
use std::path::Path;

use common::*;

const SAMPLE: &str = "testdata/sample.warc.gz";

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn the_manifest_names_each_input_and_its_docids() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let inputs = [SAMPLE, "testdata/real/warcio.warc.gz"];
    overlap_ok(["run", inputs[0], inputs[1], "--out", &arg(&out), "-q", "--chunk", "lines:2", "-T", "3"]);
    let m = manifest(&out);
    assert_eq!(m["format_version"], 3);
    assert_eq!(m["chunk"], "lines:2:2");
    assert_eq!(m["read"]["input_format"], "auto");
    assert_eq!(m["read"]["max_doc_bytes"], 8 << 20);
    assert_eq!(m["pairs"], serde_json::json!({"threshold": 3, "max_df": null}));
    let stats = read_stats(&out);
    let entries = m["inputs"].as_array().unwrap();
    let mut first = 0;
    for (i, (entry, given)) in entries.iter().zip(inputs).enumerate() {
        assert_eq!(entry["path"], given);
        let canonical = fs::canonicalize(root().join(given)).unwrap();
        assert_eq!(entry["canonical"].as_str(), canonical.to_str());
        assert_eq!(entry["size"], fs::metadata(&canonical).unwrap().len());
        assert!(entry["modified_ns"].as_u64().unwrap() > 0);
        assert_eq!(entry["first_doc"], first);
        assert_eq!(entry["documents"], stats["fingerprint"]["inputs"][i]["documents"]);
        first += entry["documents"].as_u64().unwrap();
    }
    assert_eq!(m["documents"], first);
    assert_eq!(read_docs(&out).len() as u64, first);
}

#[test]
fn an_input_is_known_by_its_identity_not_its_spelling() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", &format!("./{SAMPLE}"), "--out", &arg(&out), "-q"]);
    let docs = out.join("records/fingerprint-docs.csv");
    let before = fs::metadata(&docs).unwrap().modified().unwrap();
    // The same file by another path: every stage is up to date.
    let res = overlap_ok(["run", SAMPLE, "--out", &arg(&out), "--stats"]);
    let err = String::from_utf8_lossy(&res.stderr);
    // Each stage says what is there, marked up to date.
    let stages: Vec<&str> = err.lines().filter(|l| l.starts_with("overlap: ")).collect();
    assert_eq!(stages.len(), 4, "{err}");
    assert!(stages.iter().all(|l| l.ends_with(" (up to date)")), "nothing reran: {err}");
    assert_eq!(fs::metadata(&docs).unwrap().modified().unwrap(), before);

    // Runs compared may spell their inputs differently.
    let other = tmp.path().join("other");
    overlap_ok(["run", &arg(&root().join(SAMPLE)), "--out", &arg(&other), "-q", "--chunk", "doc", "-T", "1"]);
    overlap_ok(["report", &arg(&out), "-q", "--compare", &arg(&other)]);

    // A file rewritten in place is another input.
    let copy = tmp.path().join("copy.warc.gz");
    fs::copy(root().join(SAMPLE), &copy).unwrap();
    let moved = tmp.path().join("moved");
    overlap_ok(["run", &arg(&copy), "--out", &arg(&moved), "-q"]);
    let mut bytes = fs::read(&copy).unwrap();
    bytes.extend_from_slice(&fs::read(root().join("testdata/real/warcio.warc.gz")).unwrap());
    fs::write(&copy, bytes).unwrap();
    let res = overlap_ok(["run", &arg(&copy), "--out", &arg(&moved), "--stats"]);
    let err = String::from_utf8_lossy(&res.stderr);
    let fingerprint = err.lines().find(|l| l.starts_with("overlap: fingerprint:"));
    assert!(fingerprint.is_some_and(|l| !l.ends_with("(up to date)")), "the stage reran: {err}");
}

#[test]
fn inputs_are_read_again_through_their_canonical_paths() {
    // A report asking for other fuzzy parameters reads every input again;
    // run from another directory, the relative path in docs.csv's source
    // does not name the file, the manifest's canonical path does.
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&out), "-q", "--max-df", "3"]);
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let res = overlap_cmd(["report", &arg(&out), "--min-token-len", "3", "-q"])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(res.status.code(), Some(0), "{}", String::from_utf8_lossy(&res.stderr));
    let (header, rows) = read_csv(&out.join("flags.csv"));
    let sig = header.iter().position(|h| h == "fuzzy_signature").unwrap();
    assert!(rows.iter().filter(|r| !r[sig].is_empty()).count() > 10, "signatures were read again");
    assert!(read_stats(&out)["report"]["texts_read"].as_u64().unwrap() > 10);
}

#[test]
fn a_store_without_a_readable_manifest_is_refused_in_one_line() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&out), "-q"]);
    let text = fs::read_to_string(out.join("manifest.json")).unwrap();

    fs::write(out.join("manifest.json"), text.replace("\"format_version\": 3", "\"format_version\": 99"))
        .unwrap();
    let res = overlap(["pairs", &arg(&out), "-T", "3", "-q"]);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2));
    assert!(err.contains("manifest.json has format version 99") && err.lines().count() == 1, "{err}");

    fs::remove_file(out.join("manifest.json")).unwrap();
    fs::remove_file(out.join(".overlap/exact.stamp")).unwrap();
    let res = overlap(["exact", &arg(&out), "-q"]);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2));
    assert!(err.contains("has no manifest.json") && err.lines().count() == 1, "{err}");
    // A rerun of the fingerprint stage brings it back.
    overlap_ok(["run", SAMPLE, "--out", &arg(&out), "-q"]);
    assert_eq!(fs::read_to_string(out.join("manifest.json")).unwrap(), text);
}
