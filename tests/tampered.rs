//! A damaged or tampered analysis is refused, one line naming the file and
//! exit code 2, never a wrong answer, a panic or an abort: every record
//! file is checked against the size and checksum manifest.json records,
//! the partitions against the set it records, and every count read from
//! disk against what the analysis holds, also in an analysis written
//! before checksums were recorded.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::*;

const SAMPLE: &str = "testdata/sample.warc.gz";
const HEADER: usize = 64;

/// A fresh analysis of the sample in `tmp/name`, every stage run.
fn analysis(tmp: &Path, name: &str) -> PathBuf {
    let out = tmp.join(name);
    overlap_ok(["run", SAMPLE, "--out", &arg(&out), "-q"]);
    out
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn documents(dir: &Path) -> u32 {
    manifest(dir)["documents"].as_u64().unwrap() as u32
}

/// The analysis as an overlap that recorded no checksums wrote it: only
/// the bound checks stand between a damaged file and a wrong answer.
fn drop_checksums(dir: &Path) {
    let mut m = manifest(dir);
    assert!(m.as_object_mut().unwrap().remove("record_files").is_some(), "no record_files to remove");
    fs::write(dir.join("manifest.json"), serde_json::to_vec_pretty(&m).unwrap()).unwrap();
}

fn part(dir: &Path, p: u32) -> PathBuf {
    dir.join("records/fprint-docid").join(format!("part-{p:05}.fpd"))
}

/// The `(fprint, row)` records of a partition.
fn records(path: &Path) -> Vec<(u64, u32)> {
    fs::read(path).unwrap()[HEADER..]
        .chunks_exact(12)
        .map(|r| {
            (u64::from_le_bytes(r[..8].try_into().unwrap()), u32::from_le_bytes(r[8..].try_into().unwrap()))
        })
        .collect()
}

/// Sets the row of record `index` of the partition at `path`.
fn set_row(path: &Path, index: usize, row: u32) {
    let mut bytes = fs::read(path).unwrap();
    let at = HEADER + index * 12 + 8;
    bytes[at..at + 4].copy_from_slice(&row.to_le_bytes());
    fs::write(path, bytes).unwrap();
}

/// Runs `args` and checks that it refuses a damaged analysis: exit code 2,
/// one line on stderr that says so and holds every one of `mentions`.
fn assert_damaged(args: &[&str], mentions: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = overlap(&args);
    let what = describe(&args, &out);
    assert_eq!(out.status.code(), Some(2), "expected exit code 2\n{what}");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let body = stderr.strip_suffix('\n').unwrap_or(&stderr);
    assert_eq!(body.lines().count(), 1, "expected exactly one line on stderr\n{what}");
    assert!(body.contains("damaged analysis in "), "{what}");
    for m in mentions {
        assert!(body.contains(m), "the message should name {m:?}\n{what}");
    }
    body.to_string()
}

#[test]
fn the_manifest_records_every_record_file_with_its_size() {
    let tmp = tempdir();
    let out = analysis(tmp.path(), "out");
    let m = manifest(&out);
    let recorded = m["record_files"].as_object().unwrap();
    let mut on_disk: Vec<String> = fs::read_dir(out.join("records"))
        .unwrap()
        .map(|e| format!("records/{}", e.unwrap().file_name().to_string_lossy()))
        .chain((0..64).map(|p| format!("records/fprint-docid/part-{p:05}.fpd")))
        .filter(|n| n.ends_with(".fpd"))
        .collect();
    on_disk.sort();
    assert_eq!(recorded.keys().cloned().collect::<Vec<_>>(), on_disk);
    for (name, file) in recorded {
        assert_eq!(file["bytes"], fs::metadata(out.join(name)).unwrap().len(), "{name}");
        assert_eq!(file["xxh3"].as_str().unwrap().len(), 16, "{name}");
        let stage = match name.as_str() {
            "records/centers.fpd" | "records/scopes.fpd" => "exact",
            "records/replicas.fpd" => "report",
            _ => "fingerprint",
        };
        assert_eq!(file["stage"], stage, "{name}");
    }
}

#[test]
fn a_row_equal_to_the_document_count_in_a_partition_is_refused_by_pairs() {
    let tmp = tempdir();
    for checksums in [true, false] {
        let out = analysis(tmp.path(), &format!("out-{checksums}"));
        if !checksums {
            drop_checksums(&out);
        }
        set_row(&part(&out, 0), 0, documents(&out));
        let found = if checksums { "does not match its checksum" } else { "holds row" };
        // -T 2: another key, so that the pairs stage counts again.
        assert_damaged(&["pairs", &arg(&out), "-T", "2", "-q"], &["fprint-docid/part-00000.fpd", found]);
        // The whole run, counting pairs and reporting on them, too.
        assert_damaged(
            &["run", SAMPLE, "--out", &arg(&out), "-T", "3", "-q"],
            &["fprint-docid/part-00000.fpd", found],
        );
    }
}

#[test]
fn a_row_equal_to_the_document_count_in_a_partition_is_refused_by_explain() {
    let tmp = tempdir();
    for checksums in [true, false] {
        let out = analysis(tmp.path(), &format!("out-{checksums}"));
        if !checksums {
            drop_checksums(&out);
        }
        // A chunk three documents hold: the third one's record made to
        // name a row past the last, while explain looks at the first two.
        let (p, index, a, b) = (0..64)
            .find_map(|p| {
                let recs = records(&part(&out, p));
                recs.windows(3)
                    .position(|w| w[0].0 == w[1].0 && w[1].0 == w[2].0)
                    .map(|i| (p, i + 2, recs[i].1, recs[i + 1].1))
            })
            .expect("a chunk held by three documents");
        set_row(&part(&out, p), index, documents(&out));
        assert_damaged(
            &["explain", &arg(&out), &a.to_string(), &b.to_string()],
            &[&format!("fprint-docid/part-{p:05}.fpd holds row {}", documents(&out))],
        );
    }
}

#[test]
fn a_row_equal_to_the_document_count_in_a_partition_of_the_previous_analysis_is_refused() {
    let tmp = tempdir();
    for checksums in [true, false] {
        let old = analysis(tmp.path(), &format!("old-{checksums}"));
        if !checksums {
            drop_checksums(&old);
        }
        set_row(&part(&old, 0), 0, documents(&old));
        let new = tmp.path().join(format!("new-{checksums}"));
        let found = if checksums { "does not match its checksum" } else { "holds row" };
        assert_damaged(
            &["run", SAMPLE, "--previous", &arg(&old), "--out", &arg(&new), "-q"],
            &["fprint-docid/part-00000.fpd", found],
        );
    }
}

#[test]
fn a_document_count_beyond_what_the_analysis_holds_is_refused_before_allocating() {
    let tmp = tempdir();
    for (documents, found) in
        [("1000000000000", "more than an analysis can hold"), ("332", "fuzzy.fpd holds 331")]
    {
        let out = analysis(tmp.path(), &format!("out-{documents}"));
        assert_eq!(manifest(&out)["documents"], 331);
        let text = fs::read_to_string(out.join("manifest.json")).unwrap();
        let text = text.replace(
            "\"documents\": 331,\n  \"next_doc_id\"",
            &format!("\"documents\": {documents},\n  \"next_doc_id\""),
        );
        fs::write(out.join("manifest.json"), text).unwrap();
        assert_eq!(manifest(&out)["documents"].to_string(), documents);
        let mentions = ["manifest.json", found];
        assert_damaged(&["report", &arg(&out), "-q"], &mentions);
        let dedup = tmp.path().join("kept.jsonl");
        assert_damaged(&["dedup", &arg(&out), "--out", &arg(&dedup)], &mentions);
        assert!(!dedup.exists());
        assert_damaged(&["run", SAMPLE, "--out", &arg(&out), "-q"], &mentions);
    }
}

#[test]
fn a_flipped_byte_in_the_centers_is_refused() {
    let tmp = tempdir();
    for checksums in [true, false] {
        let old = analysis(tmp.path(), &format!("old-{checksums}"));
        if !checksums {
            drop_checksums(&old);
        }
        let centers = old.join("records/centers.fpd");
        let mut bytes = fs::read(&centers).unwrap();
        bytes[HEADER + 4 * 5 + 1] ^= 0xff;
        fs::write(&centers, bytes).unwrap();
        let found = if checksums { "does not match its checksum in manifest.json" } else { "holds row" };
        // Carried forward, it gave changes.csv a center_before of 65281.
        let new = tmp.path().join(format!("new-{checksums}"));
        let line = assert_damaged(
            &["run", SAMPLE, "--previous", &arg(&old), "--out", &arg(&new), "-q"],
            &["centers.fpd", found],
        );
        assert!(!new.join("changes.csv").exists(), "{line}");
        assert_damaged(&["pairs", &arg(&old), "-T", "2", "-q"], &["centers.fpd", found]);
    }
}

#[test]
fn a_deleted_partition_is_refused() {
    let tmp = tempdir();
    for checksums in [true, false] {
        for p in [7, 63] {
            let out = analysis(tmp.path(), &format!("out-{checksums}-{p}"));
            if !checksums {
                drop_checksums(&out);
            }
            fs::remove_file(part(&out, p)).unwrap();
            assert_damaged(
                &["pairs", &arg(&out), "-T", "2", "-q"],
                &[&format!("fprint-docid/part-{p:05}.fpd is missing")],
            );
            assert_damaged(&["dump", &arg(&out)], &[&format!("fprint-docid/part-{p:05}.fpd is missing")]);
        }
    }
}

#[test]
fn an_extra_copied_partition_is_refused() {
    let tmp = tempdir();
    for checksums in [true, false] {
        let out = analysis(tmp.path(), &format!("out-{checksums}"));
        if !checksums {
            drop_checksums(&out);
        }
        fs::copy(part(&out, 3), part(&out, 64)).unwrap();
        let found = if checksums { "was not written by this analysis" } else { "holds partition 3 of 64" };
        assert_damaged(&["pairs", &arg(&out), "-T", "2", "-q"], &["fprint-docid/part-00064.fpd", found]);
    }
}

#[test]
fn an_analysis_without_checksums_is_still_read() {
    let tmp = tempdir();
    let (with, without) = (analysis(tmp.path(), "with"), analysis(tmp.path(), "without"));
    drop_checksums(&without);
    for out in [&with, &without] {
        overlap_ok(["pairs", &arg(out), "-T", "5", "-q"]);
    }
    assert_eq!(fs::read(with.join("overlap.csv")).unwrap(), fs::read(without.join("overlap.csv")).unwrap());
    overlap_ok(["explain", &arg(&without), "0", "1"]);
    overlap_ok(["dump", &arg(&without)]);
}

#[test]
fn a_record_file_of_another_length_is_written_anew_by_its_stage() {
    let tmp = tempdir();
    let out = analysis(tmp.path(), "out");
    let centers = out.join("records/centers.fpd");
    let good = fs::read(&centers).unwrap();
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 4]);
    fs::write(&centers, longer).unwrap();
    // Not up to date: the exact stage runs again and writes it whole.
    overlap_ok(["exact", &arg(&out), "-q"]);
    assert_eq!(fs::read(&centers).unwrap(), good);
}
