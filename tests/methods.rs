//! Counting methods agree: `coarse` in every variant, at any number of
//! counters, gives the table `sort` and the brute-force reference give.

mod common;

use common::*;
use proptest::prelude::*;
use std::path::Path;

/// Methods to compare, as extra `pairs` arguments. `--counters 1` makes
/// every bucket heavy (coarse counting turns into the sort method);
/// `--counters 64` gives many false positives.
const METHODS: &[&[&str]] = &[
    &["--method", "sort"],
    &["--method", "auto"],
    &["--method", "prefix"],
    &["--method", "coarse", "--coarse", "coarse-count"],
    &["--method", "coarse", "--coarse", "multi-hash:2"],
    &["--method", "coarse", "--coarse", "multi-hash:3"],
    &["--method", "coarse", "--coarse", "multi-scan-shared:2"],
    &["--method", "coarse", "--coarse", "defer-count"],
    &["--method", "coarse", "--coarse", "defer-count", "--counters", "64"],
    &["--method", "coarse", "--coarse", "multi-stage"],
    &["--method", "coarse", "--coarse", "multi-stage", "--counters", "64"],
    &["--method", "coarse", "--coarse", "coarse-count", "--counters", "1"],
    &["--method", "coarse", "--coarse", "multi-hash:2", "--counters", "64"],
];

/// Fingerprints `input` once, then runs `pairs` with every method and
/// checks each table against the reference. `extra` goes to every command,
/// `pairs_extra` to `pairs` only.
fn check_methods(dir: &Path, input: &Path, spec: &str, t: usize, reference: &Reference, extra: &[&str]) {
    check_methods_with(dir, input, spec, t, reference, extra, &[]);
}

fn check_methods_with(
    dir: &Path,
    input: &Path,
    spec: &str,
    t: usize,
    reference: &Reference,
    extra: &[&str],
    pairs_extra: &[&str],
) {
    let out = dir.join("out");
    let mut args = vec!["fingerprint", "-q", "--input-format", "jsonl", "--chunk", spec, "--out"];
    let out_arg = arg(&out);
    let input_arg = arg(input);
    args.push(&out_arg);
    args.push(&input_arg);
    args.extend_from_slice(extra);
    overlap_ok(&args);
    overlap_ok(["exact", "-q", &out_arg]);
    let t_arg = t.to_string();
    for method in METHODS {
        let mut args = vec!["pairs", "-q", &out_arg, "-T", &t_arg];
        args.extend_from_slice(method);
        args.extend_from_slice(extra);
        args.extend_from_slice(pairs_extra);
        overlap_ok(&args);
        assert_matches_reference(&out, reference, t, &format!("{spec} -T {t} {method:?}"));
        let stats = read_stats(&out);
        if method.contains(&"prefix") {
            let prefix = &stats["pairs"]["prefix"];
            let n = |k: &str| prefix[k].as_u64().unwrap();
            assert_eq!(n("candidates") - n("false_positives"), reference.table(t).len() as u64, "{method:?}");
            assert!(n("prefix_postings") <= n("postings"), "{method:?}: prefixes are parts of lists");
            assert!(n("candidates") <= n("candidate_instances"), "{method:?}: distinct candidates");
        }
        if method.contains(&"coarse") {
            let coarse = &stats["pairs"]["coarse"];
            let candidates = coarse["candidates"].as_u64().unwrap();
            let true_pairs = coarse["true_pairs"].as_u64().unwrap();
            let false_positives = coarse["false_positives"].as_u64().unwrap();
            assert_eq!(true_pairs as usize, reference.table(t).len(), "{method:?}: true pairs");
            assert_eq!(candidates, true_pairs + false_positives, "{method:?}: candidates");
            let passes: Vec<&str> =
                coarse["passes"].as_array().unwrap().iter().map(|p| p["pass"].as_str().unwrap()).collect();
            assert_eq!(passes.last(), Some(&"verify"), "{method:?}: passes {passes:?}");
            assert!(passes.contains(&"hash-1"), "{method:?}: passes {passes:?}");
            if method.contains(&"defer-count") {
                let deferred = coarse["deferred_pairs"].as_u64().unwrap();
                let deferred_true = coarse["deferred_true"].as_u64().unwrap();
                assert!(deferred_true <= deferred && deferred_true <= true_pairs, "{method:?}: deferred");
            }
            if method.contains(&"multi-stage") {
                let pool = coarse["pool_counters"].as_u64().unwrap();
                let counters = coarse["counters_per_array"].as_u64().unwrap();
                assert!(pool >= 1 && pool < counters, "{method:?}: pool {pool} of {counters}");
                assert!(coarse["marked_buckets"].as_u64().is_some(), "{method:?}: marked buckets");
                assert!(passes.contains(&"pilot"), "{method:?}: passes {passes:?}");
            }
            if method.contains(&"1") {
                // One counter: every pair is a candidate.
                assert_eq!(candidates, stats["pairs"]["distinct_pairs"].as_u64().unwrap());
            }
        }
    }
}

#[test]
fn methods_agree_on_real_text() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    for (spec, t) in [("lines:4", 3), ("words:8", 15), ("lines:2", 15)] {
        let reference = Reference::new(&texts(&docs), Spec::parse(spec));
        assert!(!reference.table(t).is_empty(), "test data: no pair at {spec} -T {t}");
        let dir = tmp.path().join(format!("{}-{t}", spec.replace(':', "-")));
        check_methods(&dir, &input, spec, t, &reference, &[]);
    }
}

#[test]
fn methods_agree_under_the_smallest_memory_budget() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    // words:3:1 on real text generates about 600,000 pair instances, which
    // go through spilled runs at the smallest budget. (Mid-buffer spills and
    // merges in rounds are checked by the unit tests of pairs::aggregate.)
    let spec = "words:3:1";
    let reference = Reference::new(&texts(&docs), Spec::parse(spec));
    check_methods(tmp.path(), &input, spec, 40, &reference, &["--memory", "32M"]);
}

/// A skewed corpus: a few boilerplate lines are in most documents, so most
/// pairs share only them, and a few documents are near-copies.
fn skewed_corpus(seed: u64, n: usize) -> Vec<String> {
    skewed_corpus_over(seed, n, 60)
}

/// The same with body lines drawn from `pool` distinct lines.
fn skewed_corpus_over(seed: u64, n: usize, pool: usize) -> Vec<String> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    let boilerplate =
        ["Home | About | Contact", "Back to top", "Copyright 2026 Example", "All rights reserved"];
    let mut docs: Vec<String> = Vec::new();
    for d in 0..n {
        let mut lines: Vec<String> = Vec::new();
        if next(10) < 8 {
            lines.extend(boilerplate.iter().map(|s| s.to_string()));
        }
        let body = 4 + next(24);
        for _ in 0..body {
            lines.push(format!("line {} of a text", next(pool)));
        }
        if d > 0 && next(4) == 0 {
            // A near-copy of an earlier document with one line changed.
            let mut copy: Vec<String> = docs[next(d)].split('\n').map(str::to_string).collect();
            let at = next(copy.len());
            copy[at] = format!("edited {d}");
            lines = copy;
        }
        docs.push(lines.join("\n"));
    }
    docs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn methods_agree_on_skewed_random_corpora(seed in any::<u64>(), t in 1usize..6, spec_i in 0usize..3) {
        let spec = ["lines:2", "lines:1", "lines:3:1"][spec_i];
        let tmp = tempdir();
        let texts = skewed_corpus(seed, 120);
        let docs: Vec<JsonDoc> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| JsonDoc { url: format!("http://h{}.example/{i}", i % 7), text: t.clone() })
            .collect();
        let input = tmp.path().join("docs.jsonl");
        write_jsonl(&input, &docs);
        let reference = Reference::new(&texts, Spec::parse(spec));
        check_methods(tmp.path(), &input, spec, t, &reference, &[]);
    }
}

#[test]
fn max_df_leaves_out_stop_chunks_for_every_method() {
    let tmp = tempdir();
    let texts = skewed_corpus(7, 150);
    let docs: Vec<JsonDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| JsonDoc { url: format!("http://h{}.example/{i}", i % 5), text: t.clone() })
        .collect();
    let input = tmp.path().join("docs.jsonl");
    write_jsonl(&input, &docs);
    let spec = "lines:2";
    let max_df = 20;
    let reference = Reference::with_max_df(&texts, Spec::parse(spec), Some(max_df));
    assert!(!reference.stops.is_empty(), "test data: the boilerplate must make stop chunks");
    let without = Reference::new(&texts, Spec::parse(spec));
    assert_ne!(reference.table(2), without.table(2), "test data: stop chunks must change the table");
    let max_df_arg = max_df.to_string();
    check_methods_with(tmp.path(), &input, spec, 2, &reference, &[], &["--max-df", &max_df_arg]);

    // stop-chunks.csv lists exactly the stop chunks, most frequent first,
    // with their text read back from the input.
    let (header, rows) = read_csv(&tmp.path().join("out").join("stop-chunks.csv"));
    assert_eq!(header, ["fprint", "df", "pairs", "example_doc", "text"]);
    let mut listed: Vec<(String, usize)> =
        rows.iter().map(|r| (r[4].clone(), r[1].parse::<usize>().unwrap())).collect();
    let dfs: Vec<usize> = listed.iter().map(|(_, df)| *df).collect();
    assert!(dfs.windows(2).all(|w| w[0] >= w[1]), "most frequent first: {dfs:?}");
    for r in &rows {
        let df: u64 = r[1].parse().unwrap();
        assert_eq!(r[2].parse::<u64>().unwrap(), df * (df - 1) / 2, "pairs column");
    }
    listed.sort();
    let want: Vec<(String, usize)> = reference.stops.iter().map(|(t, n)| (t.clone(), *n)).collect();
    assert_eq!(listed, want);
    let stats = read_stats(&tmp.path().join("out"));
    assert_eq!(stats["pairs"]["stop_chunks"], serde_json::json!(want.len()));
}

/// `auto` above a million pair instances builds the prefix index and runs
/// prefix filtering when its predicted work is under twice the pair
/// instances, coarse counting otherwise; either way the table is exact.
#[test]
fn auto_chooses_by_predicted_work_and_stays_exact() {
    let tmp = tempdir();
    // Rare body lines: a high T leaves only them in the prefixes.
    let texts = skewed_corpus_over(11, 1500, 20_000);
    let docs: Vec<JsonDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| JsonDoc { url: format!("http://h{}.example/{i}", i % 9), text: t.clone() })
        .collect();
    let input = tmp.path().join("docs.jsonl");
    write_jsonl(&input, &docs);
    let spec = "lines:1";
    let reference = Reference::new(&texts, Spec::parse(spec));
    let out = tmp.path().join("out");
    overlap_ok(["fingerprint", "-q", "--chunk", spec, "--out", &arg(&out), &arg(&input)]);
    overlap_ok(["exact", "-q", &arg(&out)]);
    let mut chosen = Vec::new();
    for t in [2usize, 12] {
        overlap_ok(["pairs", "-q", &arg(&out), "-T", &t.to_string()]);
        assert_matches_reference(&out, &reference, t, &format!("auto -T {t}"));
        let pairs = &read_stats(&out)["pairs"];
        let auto = &pairs["auto"];
        let p = auto["pair_instances"].as_u64().unwrap();
        assert!(p >= 1_000_000, "test data: {p} pair instances");
        let work = auto["prefix_work"].as_u64().unwrap();
        let method = pairs["method"].as_str().unwrap().to_string();
        assert_eq!(method == "prefix", work < 2 * p, "-T {t}: {method} with work {work} for {p} instances");
        chosen.push(method);
    }
    assert_eq!(chosen, ["coarse", "prefix"], "a low T favours coarse counting, a high T prefix filtering");
}

#[test]
fn counters_that_cannot_fit_are_an_error_naming_the_memory_needed() {
    let tmp = tempdir();
    let (input, _) = real_jsonl(tmp.path());
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--out", &arg(&out), "-q"]);
    let args =
        ["pairs", &arg(&out), "--method", "coarse", "--counters", "100000000", "--memory", "64M", "-q"];
    let result = overlap(args);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--memory") && stderr.contains("MiB"), "{stderr}");
}

/// The default preset (each line a chunk, each host's template lines left
/// out, Jaccard >= 0.5 and containment >= 0.8) gives the reference's table
/// with every method: the template filter is one step before counting,
/// whatever counts.
#[test]
fn methods_agree_under_the_default_preset() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let hosts: Vec<String> = docs.iter().map(|d| host_of(&d.url)).collect();
    let reference = Reference::with_template(&texts(&docs), &hosts, Spec::parse("lines:1"), 5, 100);
    let want = reference.similar(1, Some(5000), Some(8000));
    let without = Reference::new(&texts(&docs), Spec::parse("lines:1")).similar(1, Some(5000), Some(8000));
    assert!(!want.is_empty(), "test data: no pair under the default preset");
    assert_ne!(want, without, "test data: the template chunks must change the table");
    let out = tmp.path().join("out");
    overlap_ok([
        "fingerprint",
        "-q",
        "--preset",
        "default",
        "--input-format",
        "jsonl",
        "--out",
        &arg(&out),
        &arg(&input),
    ]);
    overlap_ok(["exact", "-q", &arg(&out)]);
    for method in METHODS {
        let mut args = vec!["pairs", "-q", "--preset", "default"];
        let out_arg = arg(&out);
        args.push(&out_arg);
        args.extend_from_slice(method);
        overlap_ok(&args);
        let got = read_overlap_measured(&out, &["jaccard", "containment"]);
        assert!(got == want, "{method:?}: {}", table_diff(&got, &want));
    }
}
