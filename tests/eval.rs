//! `overlap eval RUN TRUTH`: every figure against one recomputed here pair
//! by pair. A small crawl with known near-duplicates, exact copies, a URL
//! captured twice with two texts and a document without a URL is analysed
//! with `--jaccard 0.5`; its URL pairs are expanded here from docs.csv
//! and overlap.csv by brute force (every pair of URLs, every pair of their
//! documents), and RUN is another analysis or a CSV file made from them
//! with known mistakes.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// Words from a fixed vocabulary, by a linear congruential generator: two
/// texts of different seeds share next to no five-word shingle.
fn words(seed: u64, n: usize) -> Vec<String> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            format!("w{}", (x >> 33) % 3000)
        })
        .collect()
}

/// `text` with `k` words replaced, spread out (each replacement removes
/// five shingles of its own), starting at `offset`.
fn substitute(text: &[String], k: usize, offset: usize, tag: &str) -> Vec<String> {
    let mut t = text.to_vec();
    for i in 0..k {
        t[offset + i * (text.len() - offset) / k] = format!("{tag}{i}");
    }
    t
}

/// The crawl: (URL, text), in input order.
fn crawl() -> Vec<(String, String)> {
    let b: Vec<Vec<String>> = (0..6).map(|i| words(i + 1, 200)).collect();
    let url = |s: &str| format!("http://{s}");
    let docs: Vec<(String, Vec<String>)> = vec![
        (url("a.example/0"), b[0].clone()),
        (url("a.example/1"), b[1].clone()),
        (url("a.example/2"), b[2].clone()),
        (url("a.example/3"), b[3].clone()),
        (url("a.example/4"), b[4].clone()),
        (url("a.example/5"), b[5].clone()),
        (url("b.example/0"), substitute(&b[0], 1, 7, "x")),
        (url("b.example/1"), substitute(&b[1], 5, 7, "x")),
        (url("b.example/2"), substitute(&b[2], 12, 7, "x")),
        (url("c.example/0"), b[0].clone()),
        (url("c.example/3"), b[3].clone()),
        (url("d.example/3"), b[3].clone()),
        (String::new(), b[4].clone()),
        // The same URL again, another text: one URL with two documents.
        (url("a.example/5"), substitute(&b[5], 2, 11, "y")),
        (url("e.example/5"), substitute(&b[5], 2, 11, "y")),
        (url("b.example/5"), substitute(&b[5], 3, 3, "z")),
    ];
    docs.into_iter().map(|(u, t)| (u, t.join(" "))).collect()
}

fn write_crawl(path: &Path, docs: &[(String, String)]) {
    let mut s = String::new();
    for (url, text) in docs {
        let url = if url.is_empty() { Value::Null } else { Value::from(url.as_str()) };
        s.push_str(&serde_json::json!({"url": url, "text": text}).to_string());
        s.push('\n');
    }
    fs::write(path, s).unwrap();
}

/// Analyses `docs` (reversed when asked) into `dir/name` with `flags`.
fn analyse(dir: &Path, name: &str, reversed: bool, flags: &[&str]) -> PathBuf {
    let mut docs = crawl();
    if reversed {
        docs.reverse();
    }
    let input = dir.join(format!("{name}.jsonl"));
    write_crawl(&input, &docs);
    let out = dir.join(name);
    let mut args =
        vec!["run".to_string(), arg(&input), "--out".into(), arg(&out), "--chunk".into(), "words:5".into()];
    args.extend(["-q", "--threads", "1"].iter().chain(flags).map(|s| s.to_string()));
    overlap_ok(&args);
    out
}

/// The truth's URL pairs with their similarity, expanded by brute force:
/// two URLs pair when any document of one is an exact copy of, or a row
/// with, any document of the other; the strongest such pair gives the
/// similarity (1 for exact copies, else the row's `jaccard`).
#[derive(Clone, Debug)]
struct Truth {
    urls: BTreeSet<String>,
    pairs: BTreeMap<(String, String), Sim>,
}

#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
enum Sim {
    Row(f64),
    Exact,
}

fn expand(dir: &Path) -> Truth {
    let docs = read_doc_rows(dir);
    let (header, rows) = read_csv(&dir.join("overlap.csv"));
    let jaccard = header.iter().position(|h| h == "jaccard");
    let mut row: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for r in rows {
        let j = jaccard.map_or(f64::NAN, |k| r[k].parse().unwrap());
        row.insert((r[0].parse().unwrap(), r[1].parse().unwrap()), j);
    }
    let urls: BTreeSet<String> = docs.iter().filter(|d| !d.url.is_empty()).map(|d| d.url.clone()).collect();
    let mut pairs = BTreeMap::new();
    for u in &urls {
        for v in urls.range::<String, _>((std::ops::Bound::Excluded(u), std::ops::Bound::Unbounded)) {
            let mut best: Option<Sim> = None;
            for d in docs.iter().filter(|d| &d.url == u) {
                for e in docs.iter().filter(|e| &e.url == v) {
                    let (Some(c), Some(f)) = (d.exact_center, e.exact_center) else { continue };
                    let sim = if c == f {
                        Some(Sim::Exact)
                    } else {
                        row.get(&(c.min(f), c.max(f))).map(|&j| Sim::Row(j))
                    };
                    if sim > best {
                        best = sim;
                    }
                }
            }
            if let Some(sim) = best {
                pairs.insert((u.clone(), v.clone()), sim);
            }
        }
    }
    Truth { urls, pairs }
}

fn ordered(a: &str, b: &str) -> (String, String) {
    if a < b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) }
}

/// Runs `overlap eval ... --json` and parses it.
fn eval_json(args: &[&str]) -> Value {
    let mut all = vec!["eval"];
    all.extend(args);
    all.push("--json");
    let out = overlap_ok(&all);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"))
}

fn counts(v: &Value) -> (u64, u64, u64) {
    (v["tp"].as_u64().unwrap(), v["fp"].as_u64().unwrap(), v["fn"].as_u64().unwrap())
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|got| (got - want).abs() < 1e-12)
}

/// The counts of pairs of `items` two clusterings put together, one pair
/// at a time; a label of `None` is a cluster of its own.
fn cluster_pairs(items: &[(Option<usize>, Option<usize>)]) -> (u64, u64, u64) {
    let (mut both, mut truth, mut run) = (0, 0, 0);
    for (i, x) in items.iter().enumerate() {
        for y in &items[i + 1..] {
            let t = x.0.is_some() && x.0 == y.0;
            let r = x.1.is_some() && x.1 == y.1;
            truth += u64::from(t);
            run += u64::from(r);
            both += u64::from(t && r);
        }
    }
    (both, run - both, truth - both)
}

/// Connected components of `urls` linked by `pairs`, as labels.
fn components<'a>(
    urls: &[&'a str],
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<&'a str, usize> {
    let mut label: BTreeMap<&str, usize> = urls.iter().enumerate().map(|(i, &u)| (u, i)).collect();
    for (a, b) in pairs {
        let (la, lb) = (label[a], label[b]);
        if la != lb {
            for l in label.values_mut() {
                if *l == lb {
                    *l = la;
                }
            }
        }
    }
    label
}

#[test]
fn a_pair_list_with_one_pair_missing_and_one_false() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let truth = expand(&truth_dir);
    // The crawl's own shape: what the rest of the test relies on.
    let exact = truth.pairs.values().filter(|&&s| s == Sim::Exact).count();
    assert_eq!(exact, 1 + 3 + 1, "a/0~c/0, the three copies of a/3, a/5~e/5: {:?}", truth.pairs);
    assert!(truth.pairs.len() >= exact + 5, "{:?}", truth.pairs);
    // Leave out the least similar pair, add a false one; write the others
    // in both orders, one twice, and a URL paired with itself.
    let (missing, _) = truth
        .pairs
        .iter()
        .filter_map(|(p, s)| match s {
            Sim::Row(j) => Some((p.clone(), *j)),
            Sim::Exact => None,
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let false_pair = ordered("http://a.example/1", "http://a.example/4");
    assert!(!truth.pairs.contains_key(&false_pair));
    let mut csv = String::from("url_a,url_b\r\n");
    for (k, (a, b)) in truth.pairs.keys().filter(|&p| *p != missing).enumerate() {
        if k % 2 == 0 {
            csv.push_str(&format!("{a},{b}\r\n"));
        } else {
            csv.push_str(&format!("\"{b}\",{a}\r\n"));
        }
    }
    csv.push_str(&format!("{},{}\n", false_pair.1, false_pair.0));
    let (a, b) = truth.pairs.keys().next().unwrap();
    csv.push_str(&format!("{b},{a}\n{a},{a}\n"));
    let run = tmp.path().join("run.csv");
    fs::write(&run, csv).unwrap();

    let v = eval_json(&[&arg(&run), &arg(&truth_dir)]);
    let n = truth.pairs.len() as u64;
    assert_eq!(counts(&v["pairs"]), (n - 1, 1, 1), "{v:#}");
    let p = (n - 1) as f64 / n as f64;
    assert!(
        close(&v["pairs"]["precision"], p) && close(&v["pairs"]["recall"], p) && close(&v["pairs"]["f1"], p),
        "{v:#}"
    );
    assert_eq!(v["run"]["kind"], "pairs");
    assert_eq!((v["run"]["self_pairs"].as_u64(), v["run"]["repeated_rows"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["run"]["pairs"].as_u64(), Some(n));
    assert_eq!(v["truth"]["pairs"].as_u64(), Some(n));
    // The missing pair is missing from its bin; exact copies are all found.
    let (missing_j, bins) = (
        match truth.pairs[&missing] {
            Sim::Row(j) => j,
            Sim::Exact => unreachable!(),
        },
        v["bins"].as_array().unwrap(),
    );
    assert_eq!(bins.len(), 5, "a truth at 0.5 shows every bin");
    for bin in bins {
        let (from, to) = (bin["from"].as_f64().unwrap(), bin["to"].as_f64().unwrap());
        let inside = |j: f64| j >= from && (j < to || to == 1.0);
        let want = truth.pairs.values().filter(|s| matches!(s, Sim::Row(j) if inside(*j))).count() as u64;
        assert_eq!(bin["truth_pairs"].as_u64(), Some(want), "{bin}");
        assert_eq!(bin["found"].as_u64(), Some(want - u64::from(inside(missing_j))), "{bin}");
    }
    assert_eq!(v["exact_copies"]["truth_pairs"].as_u64(), Some(exact as u64));
    assert_eq!(v["exact_copies"]["found"].as_u64(), Some(exact as u64));
    // The URLs: the truth's, one left without a URL, one with two documents.
    assert_eq!(v["truth"]["urls"].as_u64(), Some(truth.urls.len() as u64));
    assert_eq!(v["truth"]["documents_without_url"].as_u64(), Some(1));
    assert_eq!(v["truth"]["duplicate_urls"].as_u64(), Some(1));
    assert_eq!(v["urls"]["only_run"].as_u64(), Some(0));
    assert!(v["urls"]["only_truth"].is_null(), "a CSV names only what it grouped");
}

#[test]
fn exact_copies_and_rows_expand_to_every_url_pair() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    // a/3, c/3 and d/3 are one text: 3 pairs, though overlap.csv has no
    // row for them. b/0 is near a/0 and its copy c/0: one row, 2 pairs.
    let run = tmp.path().join("run.csv");
    fs::write(
        &run,
        "url_a,url_b\nhttp://c.example/3,http://a.example/3\nhttp://b.example/0,http://c.example/0\n",
    )
    .unwrap();
    let v = eval_json(&[&arg(&run), &arg(&truth_dir)]);
    assert_eq!(v["exact_copies"]["found"].as_u64(), Some(1));
    assert_eq!(v["exact_copies"]["truth_pairs"].as_u64(), Some(5));
    let top = v["bins"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((top["from"].as_f64(), top["to"].as_f64()), (Some(0.9), Some(1.0)));
    assert_eq!(top["found"].as_u64(), Some(1), "{top}");
    let b0 = expand(&truth_dir)
        .pairs
        .keys()
        .filter(|(a, b)| a.contains("b.example/0") || b.contains("b.example/0"))
        .count();
    assert_eq!(b0, 2);
    assert_eq!(counts(&v["pairs"]).0, 2);
    assert_eq!(counts(&v["pairs"]).1, 0);
}

#[test]
fn two_analyses_of_the_crawl_in_different_orders_agree() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let reversed = analyse(tmp.path(), "reversed", true, &["--jaccard", "0.5"]);
    for (run, truth) in [(&reversed, &truth_dir), (&truth_dir, &reversed)] {
        let v = eval_json(&[&arg(run), &arg(truth)]);
        for level in ["pairs", "clusters"] {
            let s = &v[level];
            assert_eq!((s["fp"].as_u64(), s["fn"].as_u64()), (Some(0), Some(0)), "{level}: {v:#}");
            assert!(close(&s["precision"], 1.0) && close(&s["recall"], 1.0) && close(&s["f1"], 1.0), "{v:#}");
        }
        assert!(close(&v["clusters"]["ari"], 1.0), "{v:#}");
        assert_eq!(v["urls"]["only_truth"].as_u64(), Some(0));
        assert_eq!(v["urls"]["common"], v["truth"]["urls"]);
    }

    // A stricter run finds exactly the truth's pairs at its threshold.
    let strict = analyse(tmp.path(), "strict", true, &["--jaccard", "0.8"]);
    let truth = expand(&truth_dir);
    let high = truth.pairs.values().filter(|&&s| s >= Sim::Row(0.8)).count() as u64;
    let n = truth.pairs.len() as u64;
    assert!(high < n && high > 5, "{high} of {n}");
    let v = eval_json(&[&arg(&strict), &arg(&truth_dir)]);
    assert_eq!(counts(&v["pairs"]), (high, 0, n - high), "{v:#}");
    for bin in v["bins"].as_array().unwrap() {
        let want =
            if bin["from"].as_f64().unwrap() >= 0.8 { bin["truth_pairs"].clone() } else { Value::from(0) };
        assert_eq!(bin["found"], want, "{bin}");
    }
    let v = eval_json(&[&arg(&strict), &arg(&truth_dir), "--min-jaccard", "0.8"]);
    assert_eq!(counts(&v["pairs"]), (high, 0, 0), "{v:#}");
    assert_eq!(counts(&v["clusters"]).1 + counts(&v["clusters"]).2, 0, "{v:#}");
    assert_eq!(v["pairs"]["near_misses"].as_u64(), Some(0));
    assert!(close(&v["min_jaccard"], 0.8));
    // The other way round, the looser run's extra pairs are near misses.
    let v = eval_json(&[&arg(&truth_dir), &arg(&strict), "--min-jaccard", "0.8"]);
    assert_eq!(counts(&v["pairs"]), (high, n - high, 0), "{v:#}");
    assert_eq!(v["pairs"]["near_misses"].as_u64(), Some(0), "the strict truth has no pair below 0.8");
    assert_eq!(v["bins"].as_array().unwrap().len(), 2, "{v:#}");
    assert!(v["bins_left_out"].as_str().unwrap().contains("below 0.8"));
}

/// A `url,cluster` file as text-dedup's union-find gives it: clusters of
/// two or more only, each named by its root, a member URL.
#[test]
fn another_tools_clusters() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let truth = expand(&truth_dir);
    let u = |s: &str| format!("http://{s}");
    // One cluster right, one short of a copy, one with a stranger and a
    // near-duplicate missing, and one URL the truth does not have.
    let clusters: Vec<Vec<String>> = vec![
        vec![u("a.example/0"), u("b.example/0"), u("c.example/0")],
        vec![u("a.example/3"), u("c.example/3")],
        vec![u("a.example/1"), u("a.example/2"), u("b.example/1")],
        vec![u("a.example/4"), u("elsewhere.example/")],
    ];
    let mut csv = String::from("url,cluster\n");
    for c in &clusters {
        for m in c {
            csv.push_str(&format!("{m},{}\n", c[0]));
        }
    }
    let run = tmp.path().join("clusters.csv");
    fs::write(&run, csv).unwrap();
    let v = eval_json(&[&arg(&run), &arg(&truth_dir)]);
    assert_eq!(v["run"]["kind"], "clusters");
    assert_eq!(v["urls"]["only_run"].as_u64(), Some(1));

    // Every URL of either side, with its cluster on each.
    let mut all: BTreeSet<String> = truth.urls.clone();
    all.extend(clusters.iter().flatten().cloned());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let truth_urls: Vec<&str> = truth.urls.iter().map(String::as_str).collect();
    let truth_label = components(&truth_urls, truth.pairs.keys().map(|(a, b)| (a.as_str(), b.as_str())));
    let run_label: BTreeMap<&str, usize> =
        clusters.iter().enumerate().flat_map(|(k, c)| c.iter().map(move |m| (m.as_str(), k))).collect();
    let items: Vec<(Option<usize>, Option<usize>)> =
        all.iter().map(|url| (truth_label.get(url).copied(), run_label.get(url).copied())).collect();
    let (tp, fp, fn_) = cluster_pairs(&items);
    assert_eq!(counts(&v["clusters"]), (tp, fp, fn_), "{v:#}");
    let total = (all.len() * (all.len() - 1) / 2) as f64;
    let [tp, fp, fn_] = [tp, fp, fn_].map(|x| x as f64);
    let tn = total - tp - fp - fn_;
    let ari = 2.0 * (tp * tn - fn_ * fp) / ((tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn));
    assert!((v["clusters"]["ari"].as_f64().unwrap() - ari).abs() < 1e-9, "{ari} {v:#}");

    // The pair level: every pair in a cluster is one of RUN's.
    let mut run_pairs = BTreeSet::new();
    for c in &clusters {
        for (i, a) in c.iter().enumerate() {
            for b in &c[i + 1..] {
                run_pairs.insert(ordered(a, b));
            }
        }
    }
    let found = run_pairs.iter().filter(|p| truth.pairs.contains_key(*p)).count() as u64;
    let want = (found, run_pairs.len() as u64 - found, truth.pairs.len() as u64 - found);
    assert_eq!(counts(&v["pairs"]), want, "{v:#}");
    assert_eq!(v["clusters"]["run_clusters"].as_u64(), Some(4));
}

#[test]
fn json_keys_and_the_terminal_table() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let v = eval_json(&[&arg(&truth_dir), &arg(&truth_dir)]);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<BTreeSet<String>>();
    let set = |ks: &[&str]| ks.iter().map(|k| k.to_string()).collect::<BTreeSet<String>>();
    assert_eq!(
        keys(&v),
        set(&[
            "run",
            "truth",
            "min_jaccard",
            "urls",
            "pairs",
            "clusters",
            "bins",
            "bins_left_out",
            "exact_copies",
            "notes"
        ])
    );
    let side = set(&[
        "path",
        "kind",
        "chunk",
        "criterion",
        "max_df",
        "scope",
        "urls",
        "documents",
        "documents_without_url",
        "duplicate_urls",
        "rows",
        "self_pairs",
        "repeated_rows",
        "pairs",
    ]);
    assert_eq!(keys(&v["run"]), side);
    assert_eq!(keys(&v["truth"]), side);
    assert_eq!(keys(&v["urls"]), set(&["common", "only_run", "only_truth"]));
    assert_eq!(keys(&v["pairs"]), set(&["tp", "fp", "fn", "precision", "recall", "f1"]));
    assert_eq!(
        keys(&v["clusters"]),
        set(&["tp", "fp", "fn", "precision", "recall", "f1", "ari", "truth_clusters", "run_clusters"])
    );
    assert_eq!(keys(&v["bins"][0]), set(&["from", "to", "truth_pairs", "found", "recall"]));
    assert_eq!(keys(&v["exact_copies"]), set(&["truth_pairs", "found", "recall"]));
    assert_eq!(v["truth"]["criterion"], "Jaccard >= 0.5 and F >= 1");
    assert_eq!(v["truth"]["chunk"], "words:5:1");

    let out = overlap_ok(["eval", &arg(&truth_dir), &arg(&truth_dir)]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.trim_start().starts_with("TP")).expect(&text);
    assert!(lines[header].ends_with("TP  FP  FN  precision  recall      F1"), "{text}");
    assert!(
        lines[header + 1].starts_with("pairs ") && lines[header + 1].ends_with("1.0000  1.0000  1.0000"),
        "{text}"
    );
    assert!(lines[header + 2].starts_with("clusters "), "{text}");
    // Columns line up: every row of the table is as long as its header.
    assert_eq!(lines[header].len(), lines[header + 1].len(), "{text}");
    for bin in ["[0.5, 0.6)", "[0.6, 0.7)", "[0.7, 0.8)", "[0.8, 0.9)", "[0.9, 1.0]", "exact copies"] {
        assert!(lines.iter().any(|l| l.starts_with(bin)), "no {bin} in\n{text}");
    }
    assert!(text.contains("documents without a URL") || text.contains("document without a URL"), "{text}");

    // A truth counted by F >= T alone has no similarities to bin.
    let plain = analyse(tmp.path(), "plain", false, &["-T", "100"]);
    let v = eval_json(&[&arg(&truth_dir), &arg(&plain)]);
    assert_eq!(v["bins"].as_array().map(Vec::len), Some(0));
    assert!(v["bins_left_out"].as_str().unwrap().contains("needs a truth made with --jaccard"), "{v:#}");
    let text = String::from_utf8(overlap_ok(["eval", &arg(&truth_dir), &arg(&plain)]).stdout).unwrap();
    assert!(text.contains("needs a truth made with --jaccard"), "{text}");
}

/// Takes `dir`'s lock the way `overlap` does.
fn hold_lock(dir: &Path) -> File {
    let mut file = OpenOptions::new().read(true).write(true).open(dir.join(".overlap/lock")).unwrap();
    file.try_lock().expect("the lock is free");
    writeln!(file, "{}", std::process::id()).unwrap();
    file
}

#[test]
fn eval_only_reads_and_runs_beside_a_locked_analysis() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let reversed = analyse(tmp.path(), "reversed", true, &["--jaccard", "0.5"]);
    let before = (out_files(&truth_dir), out_files(&reversed));
    let holders = (hold_lock(&truth_dir), hold_lock(&reversed));
    let v = eval_json(&[&arg(&reversed), &arg(&truth_dir)]);
    assert!(close(&v["pairs"]["f1"], 1.0));
    drop(holders);
    assert!((out_files(&truth_dir), out_files(&reversed)) == before, "eval wrote into an analysis");
}

#[test]
fn errors_are_one_line() {
    let tmp = tempdir();
    let truth_dir = analyse(tmp.path(), "truth", false, &["--jaccard", "0.5"]);
    let plain = analyse(tmp.path(), "plain", false, &[]);
    let truth = arg(&truth_dir);
    let file = |name: &str, text: &[u8]| {
        let p = tmp.path().join(name);
        fs::write(&p, text).unwrap();
        arg(&p)
    };
    let missing = arg(&tmp.path().join("nowhere"));
    assert_usage_error(&["eval", &missing, &truth], &["nowhere", "does not exist"]);
    assert_usage_error(&["eval", &truth, &missing], &["does not exist"]);
    let csv = file("ok.csv", b"url_a,url_b\nhttp://a.example/0,http://c.example/0\n");
    assert_usage_error(&["eval", &truth, &csv], &["TRUTH is an overlap output directory"]);
    let unknown = file("unknown.csv", b"id,cluster_id\n1,2\n");
    assert_usage_error(&["eval", &unknown, &truth], &["unknown.csv line 1: expected the header url_a,url_b"]);
    assert_usage_error(&["eval", &file("empty.csv", b""), &truth], &["empty.csv is empty"]);
    let wide = file("wide.csv", b"url_a,url_b\nhttp://a.example/0,http://c.example/0\nx,y,z\n");
    assert_usage_error(&["eval", &wide, &truth], &["wide.csv line 3: expected 2 columns"]);
    let blank = file("blank.csv", b"url,cluster\r\nhttp://a.example/0,\r\n");
    assert_usage_error(&["eval", &blank, &truth], &["blank.csv line 2: cluster is empty"]);
    let latin = file("latin.csv", b"url,cluster\nhttp://a.example/\xe9,1\n");
    assert_usage_error(&["eval", &latin, &truth], &["latin.csv line 2: url is not UTF-8"]);
    let twice =
        file("twice.csv", b"url,cluster\nhttp://a.example/0,1\nhttp://c.example/0,1\nhttp://a.example/0,2\n");
    assert_usage_error(
        &["eval", &twice, &truth],
        &["twice.csv line 4: http://a.example/0 is in cluster 1 already"],
    );
    let foreign = file("foreign.csv", b"url_a,url_b\n0,1\n1,2\n");
    assert_usage_error(&["eval", &foreign, &truth], &["no URL in common"]);
    assert_usage_error(
        &["eval", &truth, &arg(&plain), "--min-jaccard", "0.8"],
        &["needs a truth made with --jaccard"],
    );
    assert_usage_error(&["eval", &truth, &truth, "--min-jaccard", "1.5"], &["1.5"]);
    let bare = tmp.path().join("bare");
    fs::create_dir(&bare).unwrap();
    assert_usage_error(&["eval", &arg(&bare), &truth], &["no manifest.json"]);
    let unpaired = tmp.path().join("unpaired");
    let input = tmp.path().join("truth.jsonl");
    overlap_ok(["fingerprint", &arg(&input), "--out", &arg(&unpaired), "-q"]);
    overlap_ok(["exact", &arg(&unpaired), "-q"]);
    assert_usage_error(&["eval", &truth, &arg(&unpaired)], &["no complete pairs stage"]);
    // A run over the same crawl without its URLs (a header and nothing
    // else) is an answer with no pairs, not an error.
    let none = file("none.csv", b"url_a,url_b\n");
    let v = eval_json(&[&none, &truth]);
    assert_eq!(counts(&v["pairs"]).0, 0);
    assert!(v["pairs"]["precision"].is_null() && close(&v["pairs"]["recall"], 0.0), "{v:#}");
}
