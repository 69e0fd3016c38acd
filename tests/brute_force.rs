//! The Overlap table, exact copies and per-document counts of `overlap run`
//! against the brute-force reference in `common`: on real text (license
//! texts, Debian copyright files and Rust documentation turned into text,
//! with natural exact copies and near-replicas), and on random documents.

mod common;

use common::*;
use proptest::prelude::*;
use std::path::Path;

// ------------------------------------------------------------ the reference itself

#[test]
fn reference_windows_follow_the_contract_examples() {
    assert_eq!(windows(10, 4, 4), vec![(0, 4), (4, 8), (8, 10)]);
    assert_eq!(windows(3, 4, 4), vec![(0, 3)]);
    assert_eq!(windows(6, 4, 1), vec![(0, 4), (1, 5), (2, 6)]);
    assert_eq!(windows(8, 4, 3), vec![(0, 4), (3, 7), (6, 8)]);
    assert_eq!(windows(8, 4, 4), vec![(0, 4), (4, 8)]);
    assert_eq!(windows(5, 1, 1), vec![(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]);
    assert_eq!(windows(0, 4, 4), vec![]);
}

#[test]
fn reference_normalization_collapses_unicode_white_space_only() {
    let text = "  a\t\tb \u{a0}c\r\n\r\n \u{3000} \n d\u{200b}e \r\nf\rg\u{2028}h\r";
    assert_eq!(normalize(text), vec!["a b c", "d\u{200b}e", "f g h"]);
}

#[test]
fn reference_counts_distinct_shared_chunks_of_surviving_documents() {
    let texts: Vec<String> = ["a\nb\nc\nd", "a\nb\nc\nd\n", "x\na\nb", "", "a\nb\nc\nd\ne\na\nb"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = Reference::new(&texts, Spec::Lines { k: 2, s: 1 });
    assert_eq!(r.exact_center, vec![Some(0), Some(0), Some(2), None, Some(4)]);
    // doc 0: ab bc cd; doc 2: xa ab; doc 4: ab bc cd de ea ab (ab counted once)
    assert_eq!(r.shared, vec![(0, 2, 1), (0, 4, 3), (2, 4, 1)]);
    assert_eq!(r.chunks, vec![3, 3, 2, 0, 6]);
    assert_eq!(r.table(2), vec![(0, 4, 3)]);
    let w = Reference::new(&texts, Spec::Words { k: 2, s: 2 });
    assert_eq!(w.chunks, vec![2, 2, 2, 0, 4]); // "a b" "c d" | ... | "a b" "c d" "e a" "b"
}

// ------------------------------------------------------------ real text

/// Runs `overlap run` on the real JSONL with `spec` and each threshold, and
/// compares every output with the reference. Every table must be non-empty,
/// so that a pipeline that finds nothing fails.
fn check_real_text(spec: &str, thresholds: &[usize]) {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    assert!(docs.len() >= 200, "the real sample has {} documents", docs.len());
    let reference = Reference::new(&texts(&docs), Spec::parse(spec));
    assert!(reference.copy_groups() > 10, "the real sample must contain exact copies");

    for &t in thresholds {
        let want = reference.table(t);
        assert!(!want.is_empty(), "test data: no pair reaches T={t} with {spec}");
        let out = tmp.path().join(format!("out-{t}"));
        overlap_ok([
            "run",
            &arg(&input),
            "--input-format",
            "jsonl",
            "--chunk",
            spec,
            "-T",
            &t.to_string(),
            "--out",
            &arg(&out),
            "-q",
        ]);
        assert_matches_reference(&out, &reference, t, &format!("real text, --chunk {spec} -T {t}"));
        check_stats(&out, &reference, t, docs.len());
        let urls: Vec<String> = read_docs(&out).into_iter().map(|d| d.url).collect();
        let want_urls: Vec<String> = docs.iter().map(|d| d.url.clone()).collect();
        assert_eq!(urls, want_urls, "docs.csv urls are the JSONL urls in input order");
    }
}

/// The deterministic counts of stats.json agree with the reference.
fn check_stats(out: &Path, reference: &Reference, t: usize, n: usize) {
    let stats = read_stats(out);
    let empty = reference.exact_center.iter().filter(|c| c.is_none()).count();
    assert_eq!(stats["fingerprint"]["documents"], serde_json::json!(n), "fingerprint.documents");
    assert_eq!(
        stats["fingerprint"]["empty_documents"],
        serde_json::json!(empty),
        "fingerprint.empty_documents"
    );
    assert_eq!(
        stats["exact"]["copies_removed"],
        serde_json::json!(reference.copies_removed()),
        "exact.copies_removed"
    );
    assert_eq!(
        stats["pairs"]["pairs_emitted"],
        serde_json::json!(reference.table(t).len()),
        "pairs.pairs_emitted"
    );
    // stats.json's `exact.groups` counts groups of two or more documents.
    assert_eq!(stats["exact"]["groups"], serde_json::json!(reference.copy_groups()), "exact.groups");
}

#[test]
fn real_text_lines4_matches_reference() {
    check_real_text("lines:4", &[15, 3]);
}

#[test]
fn real_text_lines2_matches_reference() {
    check_real_text("lines:2", &[15, 3]);
}

#[test]
fn real_text_words8_matches_reference() {
    check_real_text("words:8", &[50, 15, 3]);
}

#[test]
fn real_text_lines4_stride1_matches_reference() {
    check_real_text("lines:4:1", &[15, 3]);
}

/// `overlap run` on a JSONL input with a preset.
fn run_jsonl(input: &Path, out: &Path, preset: &str) {
    overlap_ok(["run", &arg(input), "--input-format", "jsonl", "--out", &arg(out), "-q", "--preset", preset]);
}

/// The default preset against the reference: each normalized line a chunk,
/// each host's template lines left out (more than max(5, 1%) of the host's
/// surviving documents), pairs with Jaccard >= 0.5 and containment >= 0.8
/// over what remains.
#[test]
fn real_text_default_preset_matches_reference() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let out = tmp.path().join("out");
    // Named, since the tests' runs take the paper's preset otherwise.
    run_jsonl(&input, &out, "default");
    let hosts: Vec<String> = docs.iter().map(|d| host_of(&d.url)).collect();
    let reference = Reference::with_template(&texts(&docs), &hosts, Spec::Lines { k: 1, s: 1 }, 5, 100);
    let want = reference.similar(1, Some(5000), Some(8000));
    assert!(want.len() > 20, "test data: {} pairs under the default preset", want.len());
    let got = read_overlap_measured(&out, &["jaccard", "containment"]);
    assert!(got == want, "default preset: {}", table_diff(&got, &want));
    let docs_csv = read_docs(&out);
    for (i, d) in docs_csv.iter().enumerate() {
        assert_eq!(d.exact_center, reference.exact_center[i], "doc {i}: exact center");
    }
    let stats = read_stats(&out);
    assert_eq!(stats["pairs"]["template"], serde_json::json!("5:0.01"));
    assert!(stats["pairs"]["template_records"].as_u64().unwrap() > 0, "template lines were left out");
    // And it is what a run without --preset does (this test's own command,
    // not `overlap_cmd`, which names the paper's).
    let plain = tmp.path().join("plain");
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_overlap"))
        .args(["run", &arg(&input), "--input-format", "jsonl", "--out", &arg(&plain), "-q"])
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_same_outputs(&out, &plain, "--preset default and no --preset");
}

/// `--preset paper` is the paper's: one fingerprint for every four lines,
/// T = 15, every chunk kept.
#[test]
fn real_text_paper_preset_is_lines4_threshold15() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let out = tmp.path().join("out");
    run_jsonl(&input, &out, "paper");
    let reference = Reference::new(&texts(&docs), Spec::Lines { k: 4, s: 4 });
    assert_matches_reference(&out, &reference, 15, "real text, --preset paper");
}

// ------------------------------------------------------------ random documents

/// Lines that documents are drawn from, as words, so that lines repeat
/// across documents. U+200B and U+00AD are not White_Space: they stay.
const VOCABULARY: &[&[&str]] = &[
    &["GNU", "GENERAL", "PUBLIC", "LICENSE"],
    &["Version", "2,", "June", "1991"],
    &["Copyright", "(C)", "1989,", "1991", "Free", "Software", "Foundation,", "Inc."],
    &["Everyone", "is", "permitted", "to", "copy"],
    &["Preamble"],
    &["fn", "swap<T>(x:", "&mut", "T,", "y:", "&mut", "T)"],
    &["Ünïcödé", "wörds", "façade", "naïve"],
    &["日本語の", "テキスト"],
    &["zero\u{200b}width", "soft\u{ad}hyphen"],
    &["a"],
    &["a", "b"],
    &["b", "a"],
    &["THE", "END"],
];

/// Separators: runs of White_Space (including non-ASCII ones) inside lines.
const SPACES: &[&str] = &[
    " ", " ", "  ", "\t", " \t ", "\u{a0}", "\u{3000}", "\u{2003}", "\u{85}", "\u{2028}", "\x0b", "\x0c",
    "\r",
];

/// A document as the generator sees it: a list of lines (indexes into the
/// vocabulary; `None` is a blank or whitespace-only line), or a copy of an
/// earlier document.
#[derive(Clone, Debug)]
enum DocPlan {
    Lines(Vec<Option<usize>>),
    CopyOf(usize),
}

#[derive(Clone, Debug)]
struct Case {
    docs: Vec<(DocPlan, Vec<usize>)>, // plan, and random choices for whitespace
    spec: String,
    t: usize,
}

fn spec_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        (1usize..=5).prop_map(|k| format!("lines:{k}")),
        (1usize..=5).prop_flat_map(|k| (Just(k), 1..=k)).prop_map(|(k, s)| format!("lines:{k}:{s}")),
        (1usize..=6).prop_map(|k| format!("words:{k}")),
        (1usize..=6).prop_flat_map(|k| (Just(k), 1..=k)).prop_map(|(k, s)| format!("words:{k}:{s}")),
        Just("doc".to_string()),
    ]
}

fn doc_strategy() -> impl Strategy<Value = DocPlan> {
    prop_oneof![
        6 => prop::collection::vec(prop_oneof![8 => (0..VOCABULARY.len()).prop_map(Some), 1 => Just(None)], 0..14)
            .prop_map(DocPlan::Lines),
        2 => (0usize..100).prop_map(DocPlan::CopyOf),
    ]
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((doc_strategy(), prop::collection::vec(0usize..1000, 64)), 1..12),
        spec_strategy(),
        1usize..6,
    )
        .prop_map(|(docs, spec, t)| Case { docs, spec, t })
}

/// Renders the plans as texts: every copy gets its own whitespace, so exact
/// copies are identical only after normalization.
fn render(case: &Case) -> Vec<String> {
    let mut lines_of: Vec<Vec<Option<usize>>> = Vec::new();
    let mut out = Vec::new();
    for (plan, choices) in &case.docs {
        let lines = match plan {
            DocPlan::Lines(l) => l.clone(),
            DocPlan::CopyOf(k) if !lines_of.is_empty() => lines_of[k % lines_of.len()].clone(),
            DocPlan::CopyOf(_) => vec![Some(0), Some(1)],
        };
        lines_of.push(lines.clone());
        let mut pick = choices.iter().copied().cycle();
        let space = |pick: &mut dyn Iterator<Item = usize>| SPACES[pick.next().unwrap() % SPACES.len()];
        let mut text = String::new();
        for (n, line) in lines.iter().enumerate() {
            let c = pick.next().unwrap();
            if c % 3 == 0 {
                text.push_str(space(&mut pick));
            }
            if let Some(v) = line {
                for (w, word) in VOCABULARY[*v].iter().enumerate() {
                    if w > 0 {
                        text.push_str(space(&mut pick));
                    }
                    text.push_str(word);
                }
            } else if c % 2 == 0 {
                text.push_str(space(&mut pick));
            }
            if c % 5 == 0 {
                text.push_str(space(&mut pick));
            }
            if n + 1 < lines.len() || c % 4 == 1 {
                text.push_str(if c % 7 < 3 { "\r\n" } else { "\n" });
            }
        }
        out.push(text);
    }
    out
}

fn run_case(case: &Case) -> Result<(), TestCaseError> {
    let texts = render(case);
    let tmp = tempdir();
    let input = tmp.path().join("docs.jsonl");
    let docs: Vec<JsonDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| JsonDoc { url: format!("http://h{}.example.com/p/{i}", i % 3), text: t.clone() })
        .collect();
    write_jsonl(&input, &docs);
    let out = tmp.path().join("out");
    let args: Vec<String> = [
        "run",
        &arg(&input),
        "--input-format",
        "jsonl",
        "--chunk",
        &case.spec,
        "-T",
        &case.t.to_string(),
        "--out",
        &arg(&out),
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let output = overlap(&args);
    prop_assert_eq!(output.status.code(), Some(0), "{}", describe(&args, &output));
    let reference = Reference::new(&texts, Spec::parse(&case.spec));
    let result = std::panic::catch_unwind(|| {
        assert_matches_reference(&out, &reference, case.t, &format!("--chunk {} -T {}", case.spec, case.t))
    });
    if let Err(e) = result {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        return Err(TestCaseError::fail(format!("{msg}\ntexts: {texts:?}")));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        max_shrink_iters: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_documents_match_reference(case in case_strategy()) {
        run_case(&case)?;
    }
}

/// A fixed case of the same kind, so a failure is easy to reproduce by hand:
/// copies that differ only in whitespace, an empty document, and a short
/// document whose only chunk is a tail window (doc 3, shared with doc 5's tail).
#[test]
fn whitespace_variants_are_exact_copies_and_tails_are_chunks() {
    let texts: Vec<String> = [
        "GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\nPreamble\nTHE END\na b\n",
        "  GNU\tGENERAL \u{a0}PUBLIC\u{3000}LICENSE \r\n\r\nVersion 2,  June 1991\r\n \t\nPreamble\nTHE\u{2003}END\na b",
        " \t \r\n\u{a0}\n",
        "Version 2, June 1991\nPreamble\nTHE END",
        "GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\nPreamble\nTHE END\nb a\nzero\u{200b}width soft\u{ad}hyphen",
        "a b\nVersion 2, June 1991\nPreamble\nTHE END\nVersion 2,\u{85}June 1991\nPreamble\nTHE END",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let tmp = tempdir();
    let input = tmp.path().join("docs.jsonl");
    let docs: Vec<JsonDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| JsonDoc { url: format!("http://x.example/{i}"), text: t.clone() })
        .collect();
    write_jsonl(&input, &docs);
    for (spec, t) in [("lines:2:1", 1), ("lines:4", 1), ("words:3", 2), ("doc", 1)] {
        let out = tmp.path().join(spec.replace(':', "_"));
        overlap_ok([
            "run",
            &arg(&input),
            "--input-format",
            "jsonl",
            "--chunk",
            spec,
            "-T",
            &t.to_string(),
            "--out",
            &arg(&out),
            "-q",
        ]);
        let reference = Reference::new(&texts, Spec::parse(spec));
        assert_eq!(reference.exact_center, vec![Some(0), Some(0), None, Some(3), Some(4), Some(5)]);
        if spec != "doc" {
            assert!(!reference.table(t).is_empty(), "test data: nothing to find with {spec}");
        }
        assert_matches_reference(&out, &reference, t, &format!("fixed case, --chunk {spec} -T {t}"));
    }
}
