//! The corpus of damaged files in `testdata/bad/` (from
//! `scripts/make_bad_testdata.py`): each runs to completion, and its
//! documents, skipped records by reason and corrupt samples (file, offset,
//! reason, and one warning line each) are what its manifest says.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::fs;

#[test]
fn each_damaged_file_gives_the_counts_of_its_manifest() {
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(testdata("bad/manifest.json")).unwrap()).unwrap();
    let cases = manifest.as_object().unwrap();
    assert!(cases.len() >= 10);
    let tmp = tempdir();
    for (name, want) in cases {
        let input = format!("testdata/bad/{name}");
        let out = tmp.path().join(name);
        let run = overlap(["fingerprint", &input, "--out", &arg(&out)]);
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        let fp = &read_stats(&out)["fingerprint"];
        let what = format!("{name} ({})\nstats: {fp:#}", want["note"].as_str().unwrap());
        // A file that gives no document is read to the end, counted, and
        // then said to leave nothing to analyse (exit 2).
        let nothing = want["documents"] == 0;
        assert_eq!(run.status.code(), Some(if nothing { 2 } else { 0 }), "{what}\nstderr: {stderr}");
        assert_eq!(stderr.contains("overlap: no document to analyse: "), nothing, "{what}\nstderr: {stderr}");
        assert_eq!(fp["documents"], want["documents"], "{what}");
        assert_eq!(fp["inputs_skipped"], want["inputs_skipped"], "{what}");
        let skipped = nonzero_skipped(fp);
        let want_skipped: BTreeMap<String, u64> = want["skipped"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(skipped, want_skipped, "{what}");
        let documents = fp["documents"].as_u64().unwrap();
        assert_eq!(fp["records"].as_u64().unwrap(), documents + skipped.values().sum::<u64>(), "{what}");
        let corrupt: Vec<(u64, &str)> = fp["corrupt"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["file"], input.as_str(), "{what}");
                (c["offset"].as_u64().unwrap(), c["reason"].as_str().unwrap())
            })
            .collect();
        let want_corrupt: Vec<(u64, &str)> = want["corrupt"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["offset"].as_u64().unwrap(), c["reason"].as_str().unwrap()))
            .collect();
        assert_eq!(corrupt, want_corrupt, "{what}");
        let warnings = stderr.lines().filter(|l| l.starts_with("overlap: warning: ")).count() as u64;
        let want_warnings = want_corrupt.len() as u64 + want["inputs_skipped"].as_u64().unwrap();
        assert_eq!(warnings, want_warnings, "{what}\nstderr: {stderr}");
    }
}
