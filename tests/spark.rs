//! `spark/overlap_job.py` on a real multi-process Spark (a master, a worker
//! and two executor JVMs on this machine) writes the Overlap table, the
//! stop chunks, the document table and the other files `overlap report`
//! reads as a local `overlap run` does, byte for byte, and the report on
//! its output is the local run's. Skipped, saying why, when Python has no
//! pyspark or there is no Java.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;

const INPUTS: [&str; 3] = ["testdata/sample.warc.gz", "testdata/corrupt.warc.gz", "testdata/sample.arc.gz"];

fn spark_available() -> Result<(), String> {
    let probe = Command::new("python3").args(["-c", "import pyspark"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err("python3 cannot import pyspark (python3 -m pip install pyspark)".into());
    }
    if !Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success()) {
        return Err("no java on PATH".into());
    }
    Ok(())
}

/// What the job is run with: T = 3 gives the test crawls near-replicas,
/// --max-df 5 makes stop chunks, and a skew limit of 2 sends every
/// fingerprint group of three or more documents through the salted join.
const FLAGS: [&str; 6] = ["-T", "3", "--max-df", "5", "--skew-limit", "2"];

/// Files the job writes as a local run does, byte for byte. (copies.csv
/// differs: a copy of an earlier input's payload is a copy only in a local
/// run, which reads the inputs in one pass. docs.csv is compared after the
/// report, which fills in its near_group column. manifest.json is compared
/// apart: the job records no checksums of record files.)
const SAME: [&str; 4] = ["overlap.csv", "stop-chunks.csv", "records/fuzzy.fpd", "redirects.csv"];

/// Files `overlap report` writes, the same on the job's output as on the
/// local run's.
const REPORT: [&str; 8] = [
    "report.json",
    "report.html",
    "groups.csv",
    "hosts.csv",
    "host-summary.csv",
    "aliases.csv",
    "flags.csv",
    "docs.csv",
];

#[test]
fn spark_job_equals_a_local_run() {
    if let Err(why) = spark_available() {
        skip_without_peer(&why);
        return;
    }
    let tmp = tempdir();
    let local = tmp.path().join("local");
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(INPUTS.iter().map(|s| s.to_string()));
    args.extend(["--out".into(), arg(&local), "-q".into()]);
    args.extend(FLAGS[..4].iter().map(|s| s.to_string()));
    overlap_ok(&args);

    let cluster = tmp.path().join("cluster");
    let done = Command::new("python3")
        .arg(root().join("spark/overlap_job.py"))
        .args(["--master", "local-cluster[2,1,1024]", "--overlap", env!("CARGO_BIN_EXE_overlap")])
        .args(["--out", &arg(&cluster), "--partitions", "4"])
        .args(FLAGS)
        .args(INPUTS)
        .current_dir(root())
        // Every Spark process binds to the loopback address only.
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .expect("python3 runs");
    assert!(done.status.success(), "overlap_job.py failed\n{}", String::from_utf8_lossy(&done.stderr));

    assert!(read_overlap(&local).len() > 10, "the test crawls have near-replicas at T = 3");
    assert!(read_csv(&local.join("stop-chunks.csv")).1.len() > 1, "the test crawls have stop chunks");
    let spark = &read_stats(&cluster)["spark"];
    assert!(spark["salted_groups"].as_u64().unwrap() > 10, "groups over the skew limit: {spark}");
    for name in SAME {
        assert_same_file(&local, &cluster, name);
    }
    // The manifest is a local run's but for the checksums of the record
    // files, most of which the job does not write (the partitions): its
    // files are read as an analysis's written before checksums were
    // recorded.
    let manifest = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
    };
    let (mut want, got) = (manifest(&local), manifest(&cluster));
    assert!(want.as_object_mut().unwrap().remove("record_files").is_some(), "a local run records checksums");
    assert_eq!(got, want, "manifest.json but for record_files");
    for key in
        ["shared_fingerprints", "pairs_generated", "pairs_emitted", "stop_chunks", "fingerprints_removed"]
    {
        assert_eq!(
            read_stats(&cluster)["pairs"][key],
            read_stats(&local)["pairs"][key],
            "stats.json pairs.{key}"
        );
    }

    // The job's docs.csv is the exact stage's: near_group left to the report.
    let before = read_doc_rows(&cluster);
    assert!(before.iter().all(|d| d.near_group.is_none()), "near_group is the report's");
    let without_groups = |docs: Vec<DocRow>| -> Vec<DocRow> {
        docs.into_iter().map(|d| DocRow { near_group: None, ..d }).collect()
    };
    assert_eq!(before, without_groups(read_doc_rows(&local)), "docs.csv but for near_group");
    overlap_ok(["report", &arg(&cluster), "-q"]);
    for name in REPORT {
        assert_same_file(&local, &cluster, name);
    }
}

fn assert_same_file(local: &Path, cluster: &Path, name: &str) {
    let want = fs::read(local.join(name)).unwrap_or_else(|e| panic!("local {name}: {e}"));
    let got = fs::read(cluster.join(name)).unwrap_or_else(|e| panic!("spark job's {name}: {e}"));
    assert!(
        got == want,
        "{name} differs:\nspark:\n{}\nlocal:\n{}",
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
}
