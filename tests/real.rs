//! WARC files written by third-party writers (GNU Wget, with and without
//! deduplication, and warcio) over real pages: every record is accounted
//! for, as the independent count in `testdata/real/manifest.json`
//! (`scripts/count_warc_records.py`, with warcio) says.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::fs;

#[test]
fn every_record_of_real_writers_files_is_a_document_or_a_counted_skip() {
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(testdata("real/manifest.json")).unwrap()).unwrap();
    let runs = manifest["runs"].as_array().unwrap();
    assert!(runs.len() >= 4, "each file alone, and all of them in a row");
    let tmp = tempdir();
    let mut revisits_resolved = 0;
    for (n, run) in runs.iter().enumerate() {
        let inputs: Vec<String> = run["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("testdata/real/{}", f.as_str().unwrap()))
            .collect();
        let out = tmp.path().join(format!("run-{n}"));
        let mut args = vec!["run".to_string()];
        args.extend(inputs.iter().cloned());
        args.extend(["--out".into(), arg(&out), "-q".into()]);
        overlap_ok(&args);

        let what = format!("{inputs:?}");
        let fp = &read_stats(&out)["fingerprint"];
        let per_file = run["per_file"].as_array().unwrap();
        let mut want_urls = Vec::new();
        let mut want_skipped: BTreeMap<String, u64> = BTreeMap::new();
        let mut want_records = 0;
        for (i, file) in per_file.iter().enumerate() {
            let docs = file["documents"].as_array().unwrap();
            assert_eq!(fp["inputs"][i]["records"], file["records"], "{what}: records of input {i}");
            assert_eq!(fp["inputs"][i]["documents"], docs.len(), "{what}: documents of input {i}");
            want_urls.extend(docs.iter().map(|u| u.as_str().unwrap().to_string()));
            for (reason, count) in file["skipped"].as_object().unwrap() {
                *want_skipped.entry(reason.clone()).or_insert(0) += count.as_u64().unwrap();
            }
            want_records += file["records"].as_u64().unwrap();
        }
        let got_skipped = nonzero_skipped(fp);
        assert_eq!(got_skipped, want_skipped, "{what}: skipped records by reason");
        let documents = fp["documents"].as_u64().unwrap();
        assert_eq!(fp["records"], want_records, "{what}: records");
        assert_eq!(
            documents + got_skipped.values().sum::<u64>(),
            want_records,
            "{what}: documents + skipped"
        );
        let docs = read_docs(&out);
        let urls: Vec<String> = docs.iter().map(|d| d.url.clone()).collect();
        assert_eq!(urls, want_urls, "{what}: documents in order");
        // A revisit in the deduplicated crawl is in the group of the page it
        // revisits, which the first crawl fetched: same URL, an earlier file.
        if inputs.len() > 1 {
            let revisits: Vec<&DocRow> = docs
                .iter()
                .filter(|d| d.source.starts_with("testdata/real/wget-dedup") && d.url.starts_with("http"))
                .collect();
            assert!(revisits.len() >= 20, "{what}: {} revisits", revisits.len());
            for d in revisits {
                let center =
                    &docs[d.exact_center.unwrap_or_else(|| panic!("{what}: {} has no group", d.url))];
                assert_eq!(center.url, d.url, "{what}: the group of a revisit");
                assert!(center.source.starts_with("testdata/real/wget.warc.gz:"), "{}", center.source);
                assert_eq!((center.lines, center.chunks), (d.lines, d.chunks));
            }
        }
        assert!(documents > 0, "{what}: test data has documents");
        revisits_resolved += fp["revisits"].as_u64().unwrap();
    }
    // Wget's deduplicated crawl after the first: its revisits are copies.
    assert!(revisits_resolved >= 20, "revisits resolved: {revisits_resolved}");
}
