//! `--jaccard` and `--containment` against the brute-force reference in
//! `common` (exact chunk sets, no hashing, fractions compared exactly):
//! every counting method, on real text and on random documents, with and
//! without stop chunks; the similarity columns of overlap.csv; and the
//! flags' errors.

mod common;

use common::*;
use proptest::prelude::*;
use std::path::Path;

/// A criterion as flags and as the reference takes it (ten-thousandths).
#[derive(Clone, Debug)]
struct Rule {
    t: Option<usize>,
    jaccard: Option<&'static str>,
    containment: Option<&'static str>,
}

fn ten_thousandths(decimal: &str) -> u64 {
    (decimal.parse::<f64>().unwrap() * 10_000.0).round() as u64
}

impl Rule {
    fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(t) = self.t {
            a.extend(["-T".to_string(), t.to_string()]);
        }
        if let Some(j) = self.jaccard {
            a.extend(["--jaccard".to_string(), j.to_string()]);
        }
        if let Some(c) = self.containment {
            a.extend(["--containment".to_string(), c.to_string()]);
        }
        a
    }

    fn want(&self, r: &Reference) -> Vec<(usize, usize, usize)> {
        r.similar(
            self.t.unwrap_or(1),
            self.jaccard.map(ten_thousandths),
            self.containment.map(ten_thousandths),
        )
    }
}

/// overlap.csv as rows, checking its header and that every similarity
/// value is the fraction of the reference's set sizes, to six decimals.
fn read_similar(out: &Path, rule: &Rule, r: &Reference, what: &str) -> Vec<(usize, usize, usize)> {
    let (header, rows) = read_csv(&out.join("overlap.csv"));
    let mut want_header = vec!["doc_i", "doc_j", "shared"];
    want_header.extend(rule.jaccard.map(|_| "jaccard"));
    want_header.extend(rule.containment.map(|_| "containment"));
    assert_eq!(header, want_header, "{what}: overlap.csv header");
    rows.iter()
        .map(|row| {
            assert_eq!(row.len(), header.len(), "{what}: row {row:?}");
            let n = |k: usize| row[k].parse::<usize>().unwrap();
            let (i, j, s) = (n(0), n(1), n(2));
            let (a, b) = (r.sizes[i] as f64, r.sizes[j] as f64);
            for (k, name) in header.iter().enumerate().skip(3) {
                let got: f64 = row[k].parse().unwrap();
                assert!(row[k].len() == 8 && row[k].as_bytes()[1] == b'.', "{what}: {name} {:?}", row[k]);
                let exact =
                    if *name == "jaccard" { s as f64 / (a + b - s as f64) } else { s as f64 / a.min(b) };
                assert!(
                    (got - exact).abs() <= 5.000_001e-7,
                    "{what}: {name} of ({i}, {j}) is {got}, not {exact}"
                );
            }
            (i, j, s)
        })
        .collect()
}

fn check_real_text(spec: &str, max_df: Option<usize>, rules: &[Rule]) {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let reference = Reference::with_max_df(&texts(&docs), Spec::parse(spec), max_df);
    let out = tmp.path().join("out");
    let mut first = vec!["run".to_string(), arg(&input)];
    first.extend(["--input-format", "jsonl", "--chunk", spec, "--out", &arg(&out), "-q"].map(String::from));
    overlap_ok(&first);
    for rule in rules {
        let want = rule.want(&reference);
        assert!(!want.is_empty(), "test data: no pair passes {rule:?} with {spec}");
        assert!(
            want.len() < rule.want_loose(&reference).len(),
            "{rule:?} must leave pairs out, to test anything"
        );
        for method in ["auto", "sort", "coarse", "prefix"] {
            let mut args =
                vec!["pairs".to_string(), arg(&out), "--method".into(), method.into(), "-q".into()];
            args.extend(rule.args());
            if let Some(m) = max_df {
                args.extend(["--max-df".to_string(), m.to_string()]);
            }
            overlap_ok(&args);
            let what =
                format!("--chunk {spec} {} --method {method} (max-df {max_df:?})", rule.args().join(" "));
            let got = read_similar(&out, rule, &reference, &what);
            assert!(got == want, "{what}: {}", table_diff(&got, &want));
        }
    }
}

impl Rule {
    /// The same T without the similarity: what the similarity removes.
    fn want_loose(&self, r: &Reference) -> Vec<(usize, usize, usize)> {
        r.similar(self.t.unwrap_or(1), None, None)
    }
}

const fn rule(t: Option<usize>, jaccard: Option<&'static str>, containment: Option<&'static str>) -> Rule {
    Rule { t, jaccard, containment }
}

#[test]
fn real_text_words5_matches_reference_for_every_method() {
    check_real_text(
        "words:5",
        None,
        &[
            rule(None, Some("0.8"), None),
            rule(None, Some("0.5"), None),
            rule(None, None, Some("0.9")),
            rule(Some(20), None, Some("0.5")),
            rule(None, Some("0.6"), Some("0.8")),
        ],
    );
}

#[test]
fn real_text_lines2_with_stop_chunks_matches_reference() {
    check_real_text("lines:2", Some(8), &[rule(None, Some("0.3"), None), rule(Some(3), None, Some("0.75"))]);
}

// ------------------------------------------------------------ random documents

const WORDS: [&str; 12] =
    ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "mu", "nu"];

#[derive(Clone, Debug)]
struct Case {
    /// Each document: a base document to vary (or none), and words.
    docs: Vec<(Option<usize>, Vec<usize>)>,
    spec: &'static str,
    rule: Rule,
    max_df: Option<usize>,
    method: &'static str,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let doc = (prop::option::of(0usize..20), prop::collection::vec(0..WORDS.len(), 0..40));
    let ratio = prop::sample::select(vec!["0.1", "0.25", "0.5", "0.6667", "0.8", "0.9", "1"]);
    (
        prop::collection::vec(doc, 2..16),
        prop::sample::select(vec!["words:1", "words:2", "words:3", "lines:1", "words:2:1"]),
        (prop::option::of(1usize..4), prop::option::of(ratio.clone()), prop::option::of(ratio)),
        prop::option::of(2usize..5),
        prop::sample::select(vec!["auto", "sort", "coarse", "prefix"]),
    )
        .prop_filter("a similarity criterion", |(_, _, (_, j, c), _, _)| j.is_some() || c.is_some())
        .prop_map(|(docs, spec, (t, jaccard, containment), max_df, method)| Case {
            docs,
            spec,
            rule: Rule { t, jaccard, containment },
            max_df,
            method,
        })
}

/// Documents made of a few words, many of them variations of earlier ones
/// (the earlier document's words with some replaced), so that every
/// similarity occurs.
fn render(case: &Case) -> Vec<String> {
    let mut words: Vec<Vec<usize>> = Vec::new();
    for (base, own) in &case.docs {
        let mut w = match base {
            Some(b) if !words.is_empty() => words[b % words.len()].clone(),
            _ => Vec::new(),
        };
        for (k, &x) in own.iter().enumerate() {
            if w.is_empty() || k % 3 == 0 {
                w.push(x);
            } else {
                let at = (k * 7 + x) % w.len();
                w[at] = x;
            }
        }
        words.push(w);
    }
    let line = |w: &[usize]| w.iter().map(|&x| WORDS[x]).collect::<Vec<_>>().join(" ");
    words
        .iter()
        .map(|w| {
            if case.spec.starts_with("lines") {
                w.chunks(3).map(line).collect::<Vec<_>>().join("\n")
            } else {
                line(w)
            }
        })
        .collect()
}

fn run_case(case: &Case) -> Result<(), TestCaseError> {
    let texts = render(case);
    let tmp = tempdir();
    let input = tmp.path().join("docs.jsonl");
    let docs: Vec<JsonDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| JsonDoc { url: format!("http://example.com/{i}"), text: t.clone() })
        .collect();
    write_jsonl(&input, &docs);
    let out = tmp.path().join("out");
    let mut args = vec!["run".to_string(), arg(&input)];
    args.extend(["--input-format", "jsonl", "--chunk", case.spec, "--method", case.method].map(String::from));
    args.extend(["--out".to_string(), arg(&out), "-q".to_string()]);
    args.extend(case.rule.args());
    if let Some(m) = case.max_df {
        args.extend(["--max-df".to_string(), m.to_string()]);
    }
    let output = overlap(&args);
    prop_assert_eq!(output.status.code(), Some(0), "{}", describe(&args, &output));
    let reference = Reference::with_max_df(&texts, Spec::parse(case.spec), case.max_df);
    let want = case.rule.want(&reference);
    let got = std::panic::catch_unwind(|| read_similar(&out, &case.rule, &reference, &args.join(" ")))
        .map_err(|_| TestCaseError::fail(format!("overlap.csv is wrong; texts: {texts:?}")))?;
    prop_assert!(got == want, "{}: {}\ntexts: {:?}", args.join(" "), table_diff(&got, &want), texts);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 40,
        max_shrink_iters: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_documents_match_reference(case in case_strategy()) {
        run_case(&case)?;
    }
}

// ------------------------------------------------------------ flags

#[test]
fn similarity_thresholds_outside_0_to_1_are_usage_errors() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    for (flag, value) in
        [("--jaccard", "0"), ("--jaccard", "1.5"), ("--containment", "abc"), ("--jaccard", "0.12345")]
    {
        assert_usage_error(
            &["run", "testdata/sample.warc.gz", "--out", &arg(&out), flag, value],
            &[flag, value, "at most 4 decimals"],
        );
    }
}

#[test]
fn a_similarity_run_says_its_criterion_and_a_plain_rerun_drops_the_column() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let out = tmp.path().join("out");
    let base =
        ["run", &arg(&input), "--input-format", "jsonl", "--chunk", "words:5", "--out", &arg(&out), "-q"];
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--jaccard", "0.75"]);
    overlap_ok(&args);
    let stats = read_stats(&out);
    assert_eq!(stats["pairs"]["criterion"], "Jaccard >= 0.75 and F >= 1", "{stats}");
    assert_eq!(stats["pairs"]["jaccard"], "0.75");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["pairs"]["jaccard"], "0.75", "{manifest}");
    let (header, _) = read_csv(&out.join("overlap.csv"));
    assert_eq!(header, ["doc_i", "doc_j", "shared", "jaccard"]);
    // The audit's near-replica figures follow the table, and say so.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["criterion"], "Jaccard >= 0.75 and F >= 1");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Jaccard&nbsp;&gt;=&nbsp;0.75"), "report.html names the criterion");
    // The same directory without the flag: the pairs stage runs again
    // (its key has the criterion) and the table is the plain one.
    overlap_ok(base);
    let plain = Reference::new(&texts(&docs), Spec::parse("words:5")).table(15);
    assert!(read_overlap(&out) == plain, "the plain table after a similarity run");
}

/// `overlap explain` decides whether the table lists a pair by the run's
/// criterion: yes for every row, and no, saying why, for a pair that shares
/// chunks but is not similar enough.
#[test]
fn explain_agrees_with_a_similarity_table() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let reference = Reference::new(&texts(&docs), Spec::parse("words:5"));
    let out = tmp.path().join("out");
    overlap_ok([
        "run",
        &arg(&input),
        "--input-format",
        "jsonl",
        "--chunk",
        "words:5",
        "--jaccard",
        "0.8",
        "--out",
        &arg(&out),
        "-q",
    ]);
    let listed = reference.similar(1, Some(8000), None);
    let below: Vec<_> =
        reference.similar(1, Some(5000), None).into_iter().filter(|p| !listed.contains(p)).take(3).collect();
    assert!(!listed.is_empty() && !below.is_empty(), "test data: pairs on both sides of J = 0.8");
    for (pairs, want) in [(&listed[..listed.len().min(3)], true), (&below[..], false)] {
        for &(i, j, _) in pairs {
            let o = overlap_ok(["explain", &arg(&out), &i.to_string(), &j.to_string(), "--json"]);
            let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(e["in_table"], want, "({i}, {j}): {e}");
        }
    }
}
