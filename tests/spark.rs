//! `spark/overlap_job.py` on a real multi-process Spark (a master, a worker
//! and two executor JVMs on this machine) gives the Overlap table and the
//! exact-copy centers of a local `overlap run`, byte for byte. Skipped,
//! saying why, when Python has no pyspark or there is no Java.

mod common;

use std::fs;
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

#[test]
fn spark_job_equals_a_local_run() {
    if let Err(why) = spark_available() {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = tempdir();
    let local = tmp.path().join("local");
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(INPUTS.iter().map(|s| s.to_string()));
    args.extend(["--out".into(), arg(&local), "-T".into(), "3".into(), "--no-fuzzy".into(), "-q".into()]);
    overlap_ok(&args);

    let cluster = tmp.path().join("cluster");
    let done = Command::new("python3")
        .arg(root().join("spark/overlap_job.py"))
        .args(["--master", "local-cluster[2,1,1024]", "--overlap", env!("CARGO_BIN_EXE_overlap")])
        .args(["--out", &arg(&cluster), "-T", "3"])
        .args(INPUTS)
        .current_dir(root())
        // Every Spark process binds to the loopback address only.
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .expect("python3 runs");
    assert!(done.status.success(), "overlap_job.py failed\n{}", String::from_utf8_lossy(&done.stderr));

    let want = fs::read(local.join("overlap.csv")).unwrap();
    let got = fs::read(cluster.join("overlap.csv")).unwrap();
    assert!(read_overlap(&local).len() > 10, "the test crawls have near-replicas at T = 3");
    assert!(
        got == want,
        "overlap.csv differs:\nspark:\n{}\nlocal:\n{}",
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );

    let centers: Vec<String> = read_docs(&local)
        .iter()
        .map(|d| format!("{},{}", d.doc_id, d.exact_center.map_or(String::new(), |c| c.to_string())))
        .collect();
    let want = format!("doc_id,exact_center\n{}\n", centers.join("\n"));
    let got = fs::read_to_string(cluster.join("centers.csv")).unwrap();
    assert_eq!(got, want, "exact-copy centers differ");
}
