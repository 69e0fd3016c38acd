//! The default run against replication known by construction: a crawl of
//! real manual pages (testdata/src/rust) with full mirrors that wrap every
//! page in a banner of 1 to 3 lines, a partial mirror with a footer of its
//! own, www. and https aliases and the manual's next version
//! (scripts/make_mirror_crawl.py), scored by scripts/score_mirrors.py: at
//! least 95% of the known copies of every kind found, and at least 95% of
//! overlap.csv's pairs the same page of the manual. The full-size figures
//! and the table that chose the default are in docs/defaults.md.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Makes the small benchmark crawl into `dir`: (crawl, truth).
fn mirror_crawl(dir: &Path) -> (String, String) {
    let src = root().join("testdata/src/rust");
    let done = Command::new("python3")
        .arg(root().join("scripts/make_mirror_crawl.py"))
        .args(["--subtree", "std", "--subtree", "book", "--next"])
        .arg(src.join("nightly"))
        .arg(src.join("1.95.0"))
        .arg(dir)
        .output()
        .expect("python3 is needed to run scripts/make_mirror_crawl.py");
    assert!(done.status.success(), "make_mirror_crawl.py: {}", String::from_utf8_lossy(&done.stderr));
    (arg(&dir.join("crawl.warc.gz")), arg(&dir.join("truth.csv")))
}

/// The scores of an analysis: kind -> (copies, recall, pairs, precision).
fn score(out: &Path, truth: &str) -> serde_json::Value {
    let done = Command::new("python3")
        .arg(root().join("scripts/score_mirrors.py"))
        .arg("--json")
        .arg(out)
        .arg(truth)
        .output()
        .expect("python3 runs");
    assert!(done.status.success(), "score_mirrors.py: {}", String::from_utf8_lossy(&done.stderr));
    serde_json::from_slice(&done.stdout).unwrap()
}

/// `overlap run` as a user types it: no --preset (`overlap_cmd` would add
/// the paper's).
fn run_as_typed(args: &[&str]) {
    let done = Command::new(env!("CARGO_BIN_EXE_overlap")).args(args).current_dir(root()).output().unwrap();
    assert!(done.status.success(), "overlap {args:?}: {}", String::from_utf8_lossy(&done.stderr));
}

#[test]
fn the_default_run_finds_every_kind_of_copy_at_95_percent_recall_and_precision() {
    let tmp = tempdir();
    let (crawl, truth) = mirror_crawl(&tmp.path().join("crawl"));
    let out = tmp.path().join("out");
    run_as_typed(&["run", &crawl, "--out", &arg(&out), "-q"]);
    let s = score(&out, &truth);
    let kinds = s["kinds"].as_object().unwrap();
    for kind in ["alias-www", "alias-https", "mirror-a", "mirror-b", "mirror-c", "mirror-partial", "version"]
    {
        let e = &kinds[kind];
        assert!(e["copies"].as_u64().unwrap() >= 4, "{kind}: the crawl has too few copies: {e}");
        assert!(e["recall"].as_f64().unwrap() >= 0.95, "{kind}: recall {e}");
        if let Some(p) = e["precision"].as_f64() {
            assert!(p >= 0.95, "{kind}: precision {e}");
        }
    }
    assert!(s["all"]["precision"].as_f64().unwrap() >= 0.95, "all: {}", s["all"]);
    // Pages of one line (rustdoc's redirect pages) are among the copies.
    let docs = read_docs(&out);
    assert!(docs.iter().filter(|d| d.url.contains("mirror-c") && d.lines <= 7).count() >= 6, "short pages");
}

/// The same crawl under the paper's settings misses the wrapped mirrors:
/// the benchmark tells the two apart.
#[test]
fn the_papers_settings_miss_the_wrapped_mirrors() {
    let tmp = tempdir();
    let (crawl, truth) = mirror_crawl(&tmp.path().join("crawl"));
    let out = tmp.path().join("out");
    run_as_typed(&["run", &crawl, "--out", &arg(&out), "-q", "--preset", "paper"]);
    let s = score(&out, &truth);
    for kind in ["mirror-a", "mirror-b", "mirror-c"] {
        let recall = s["kinds"][kind]["recall"].as_f64().unwrap();
        assert!(recall < 0.5, "{kind}: recall {recall} under --preset paper");
    }
    // Aliases are exact copies under either setting.
    assert_eq!(s["kinds"]["alias-www"]["recall"].as_f64(), Some(1.0));
}

/// What the analysis ran with is in its manifest, and `overlap pairs` on a
/// fingerprint stage of the paper's chunking takes the criterion it is
/// given.
#[test]
fn the_manifest_records_the_settings_of_the_default() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    run_as_typed(&["run", &arg(&testdata("sample.warc.gz")), "--out", &arg(&out), "-q"]);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["chunk"], "lines:1:1");
    assert_eq!(m["pairs"]["template"], "5:0.01");
    assert_eq!(m["pairs"]["jaccard"], "0.5");
    assert_eq!(m["pairs"]["containment"], "0.8");
    assert_eq!(m["pairs"]["threshold"], 1);
    let paper = tmp.path().join("paper");
    run_as_typed(&[
        "run",
        &arg(&testdata("sample.warc.gz")),
        "--out",
        &arg(&paper),
        "-q",
        "--preset",
        "paper",
    ]);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(paper.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["chunk"], "lines:4:4");
    assert_eq!(m["pairs"]["threshold"], 15);
    assert!(m["pairs"].get("template").is_none() && m["pairs"].get("jaccard").is_none());
    // A criterion flag states the whole criterion; --template stays the preset's.
    let t = tmp.path().join("t");
    run_as_typed(&["run", &arg(&testdata("sample.warc.gz")), "--out", &arg(&t), "-q", "-T", "3"]);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["pairs"]["threshold"], 3);
    assert!(m["pairs"].get("jaccard").is_none());
    assert_eq!(m["pairs"]["template"], "5:0.01");
}

#[test]
fn a_bad_preset_or_template_rule_is_one_line_and_exit_2() {
    assert_usage_error(&["run", "x.warc", "--out", "o", "--preset", "papers"], &["unknown preset 'papers'"]);
    assert_usage_error(&["run", "x.warc", "--out", "o", "--template", "0"], &["template rule '0'"]);
    assert_usage_error(&["run", "x.warc", "--out", "o", "--template", "5:1.5"], &["template rule '5:1.5'"]);
}

/// An analysis made with the paper's settings is carried forward with
/// them when no --preset is given (with a note saying so), and refused in
/// one line naming both chunkings when the new defaults are asked for.
#[test]
fn a_chain_begun_under_the_papers_settings_keeps_them() {
    let tmp = tempdir();
    let old = tmp.path().join("old");
    let sample = arg(&testdata("sample.warc.gz"));
    run_as_typed(&["run", &sample, "--out", &arg(&old), "-q", "--preset", "paper"]);
    let new = tmp.path().join("new");
    let done = Command::new(env!("CARGO_BIN_EXE_overlap"))
        .args(["run", &sample, "--out", &arg(&new), "--previous", &arg(&old)])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("was made with --chunk lines:4:4, F >= 15") && stderr.contains("keeps them"),
        "{stderr}"
    );
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(new.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((m["chunk"].as_str(), m["pairs"]["threshold"].as_u64()), (Some("lines:4:4"), Some(15)));
    assert!(m["pairs"].get("template").is_none(), "{}", m["pairs"]);
    assert_eq!(read_overlap(&new), read_overlap(&old), "the same pages, the same table");

    let refused = tmp.path().join("refused");
    let args = ["run", &sample, "--out", &arg(&refused), "--previous", &arg(&old), "--preset", "default"];
    let done = Command::new(env!("CARGO_BIN_EXE_overlap")).args(args).current_dir(root()).output().unwrap();
    assert_eq!(done.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--chunk lines:4:4") && stderr.contains("--chunk lines:1:1"), "{stderr}");
}

/// Stage by stage, `overlap pairs` without --preset counts as the preset
/// that cut the analysis: the paper's chunking, the paper's T.
#[test]
fn pairs_without_a_preset_counts_as_the_analysis_was_cut() {
    let tmp = tempdir();
    let sample = arg(&testdata("sample.warc.gz"));
    for (preset, threshold, template) in [("paper", 15, None), ("default", 1, Some("5:0.01"))] {
        let dir = tmp.path().join(preset);
        run_as_typed(&["fingerprint", &sample, "--out", &arg(&dir), "-q", "--preset", preset]);
        run_as_typed(&["exact", &arg(&dir), "-q"]);
        run_as_typed(&["pairs", &arg(&dir), "-q"]);
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["pairs"]["threshold"], threshold, "{preset}");
        assert_eq!(m["pairs"]["template"].as_str(), template, "{preset}");
    }
}

/// The report names the mirror sets of the benchmark: the original site
/// with its three full mirrors, its www. alias host and its partial
/// mirror, one row, on the first screen.
#[test]
fn the_report_leads_with_the_mirror_set_of_the_benchmark() {
    let tmp = tempdir();
    let (crawl, _) = mirror_crawl(&tmp.path().join("crawl"));
    let out = tmp.path().join("out");
    run_as_typed(&["run", &crawl, "--out", &arg(&out), "-q"]);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let sets = r["hosts"]["mirror_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert_eq!(sets[0]["site"], "docs.example.org");
    let mirrors: Vec<&str> =
        sets[0]["mirrors"].as_array().unwrap().iter().map(|m| m["host"].as_str().unwrap()).collect();
    for host in [
        "mirror-a.example.net",
        "mirror-b.example.com",
        "docs.mirror-c.example.org",
        "reference.example.info",
    ] {
        assert!(mirrors.contains(&host), "{host} in {mirrors:?}");
    }
    for m in sets[0]["mirrors"].as_array().unwrap() {
        assert_eq!(m["coverage_of_host"].as_f64(), Some(100.0), "every page of {} is the site's", m["host"]);
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let (sets_at, chart_at) =
        (html.find("<h2>Mirror sets</h2>").unwrap(), html.find("<h2>Replicas per document</h2>").unwrap());
    assert!(sets_at < chart_at, "the mirror sets come before the chart");
}
