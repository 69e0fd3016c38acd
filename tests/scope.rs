//! `--scope host` and `--scope site`: exact groups and Overlap pairs only
//! between documents of the same host, or of the same registrable domain.
//!
//! The reference is the brute-force one of `common`, run on each scope's
//! documents alone (a scope is a crawl of its own), with the scopes of the
//! test's hosts written out by hand from the public suffix list; every
//! counting method must give its table, and stop chunks are counted per
//! scope.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use proptest::prelude::*;

/// URL prefixes of the test's documents, with the host and the site each
/// is in. `.co.uk` and `github.io` are public suffixes (the second from the
/// list's private section); an address is its own site; `urn:` names have
/// no host, and share one scope.
const HOSTS: &[(&str, &str, &str)] = &[
    ("https://a.example.com/", "a.example.com", "example.com"),
    ("http://B.Example.COM:8080/", "b.example.com", "example.com"),
    ("https://example.co.uk/", "example.co.uk", "example.co.uk"),
    ("https://www.example.co.uk/", "www.example.co.uk", "example.co.uk"),
    ("https://alice.github.io/", "alice.github.io", "alice.github.io"),
    ("https://bob.github.io/", "bob.github.io", "bob.github.io"),
    ("http://192.0.2.7/", "192.0.2.7", "192.0.2.7"),
    ("http://[2001:db8::1]/", "2001:db8::1", "2001:db8::1"),
    ("urn:x-page:", "", ""),
];

const SCOPES: &[&str] = &["crawl", "host", "site"];

/// Counting methods every scope must agree on.
const METHODS: &[&[&str]] = &[
    &["--method", "sort"],
    &["--method", "prefix"],
    &["--method", "auto"],
    &["--method", "coarse", "--coarse", "coarse-count"],
    &["--method", "coarse", "--coarse", "multi-stage", "--counters", "64"],
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Documents spread over the hosts: texts from a small pool of lines with
/// boilerplate, and exact copies and near-copies of earlier documents on
/// the same host or another, so that every scope has groups and pairs
/// inside it and across it.
fn corpus(seed: u64, n: usize) -> Vec<(usize, JsonDoc)> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut docs: Vec<(usize, JsonDoc)> = Vec::new();
    for i in 0..n {
        let host = rng.below(HOSTS.len());
        let text = match rng.below(8) {
            0 | 1 if !docs.is_empty() => docs[rng.below(docs.len())].1.text.clone(),
            2 | 3 if !docs.is_empty() => {
                let mut lines: Vec<String> =
                    docs[rng.below(docs.len())].1.text.lines().map(str::to_string).collect();
                let at = rng.below(lines.len() + 1);
                lines.insert(at, format!("an edit {}", rng.below(1000)));
                lines.join("\n")
            }
            _ => {
                let mut lines = vec![format!("menu of {}", HOSTS[host].1)];
                lines.extend((0..3 + rng.below(8)).map(|_| format!("line {}", rng.below(40))));
                lines.push("all rights reserved".to_string());
                lines.join("\n")
            }
        };
        docs.push((host, JsonDoc { url: format!("{}p{i}", HOSTS[host].0), text }));
    }
    docs
}

/// The reference of a scoped analysis: each scope's documents analysed
/// alone, mapped back to their docIDs; and the stop chunks of each scope
/// as `(df, text)`, sorted.
fn scoped_reference(
    docs: &[(usize, JsonDoc)],
    scope: &str,
    spec: Spec,
    max_df: Option<usize>,
) -> (Reference, Vec<(usize, String)>) {
    let key = |host: usize| match scope {
        "crawl" => "",
        "host" => HOSTS[host].1,
        _ => HOSTS[host].2,
    };
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (host, _)) in docs.iter().enumerate() {
        members.entry(key(*host)).or_default().push(i);
    }
    let n = docs.len();
    let mut whole = Reference {
        lines: vec![0; n],
        chunks: vec![0; n],
        exact_center: vec![None; n],
        shared: Vec::new(),
        stops: BTreeMap::new(),
        sizes: vec![0; n],
    };
    let mut stops = Vec::new();
    for ids in members.values() {
        let texts: Vec<String> = ids.iter().map(|&i| docs[i].1.text.clone()).collect();
        let part = Reference::with_max_df(&texts, spec, max_df);
        for (x, &i) in ids.iter().enumerate() {
            whole.lines[i] = part.lines[x];
            whole.chunks[i] = part.chunks[x];
            whole.exact_center[i] = part.exact_center[x].map(|c| ids[c]);
            whole.sizes[i] = part.sizes[x];
        }
        whole.shared.extend(part.shared.iter().map(|&(a, b, f)| (ids[a], ids[b], f)));
        stops.extend(part.stops.into_iter().map(|(text, df)| (df, text)));
    }
    whole.shared.sort_unstable();
    stops.sort();
    (whole, stops)
}

/// Analyses `docs` in `scope` with every method and checks each against
/// the reference.
fn check(dir: &Path, docs: &[(usize, JsonDoc)], scope: &str, t: usize, max_df: Option<usize>) {
    let spec = "lines:2";
    let (reference, stops) = scoped_reference(docs, scope, Spec::parse(spec), max_df);
    let input = dir.join("docs.jsonl");
    let plain: Vec<JsonDoc> = docs.iter().map(|(_, d)| d.clone()).collect();
    write_jsonl(&input, &plain);
    let out = dir.join(format!("out-{scope}"));
    let out_arg = arg(&out);
    overlap_ok([
        "fingerprint",
        "-q",
        "--input-format",
        "jsonl",
        "--chunk",
        spec,
        "--out",
        &out_arg,
        &arg(&input),
    ]);
    overlap_ok(["exact", "-q", &out_arg, "--scope", scope]);
    let max_df_arg = max_df.map(|m| m.to_string());
    for method in METHODS {
        let t_arg = t.to_string();
        let mut args = vec!["pairs", "-q", &out_arg, "-T", &t_arg];
        args.extend_from_slice(method);
        if let Some(m) = &max_df_arg {
            args.extend(["--max-df", m]);
        }
        overlap_ok(&args);
        let what = format!("--scope {scope} -T {t} --max-df {max_df:?} {method:?}");
        assert_matches_reference(&out, &reference, t, &what);
        if max_df.is_some() {
            let (_, rows) = read_csv(&out.join("stop-chunks.csv"));
            let mut got: Vec<(usize, String)> =
                rows.iter().map(|r| (r[1].parse().unwrap(), r[4].clone())).collect();
            got.sort();
            assert_eq!(got, stops, "{what}: stop chunks (df, text)");
        }
        // A Jaccard criterion divides by set sizes that leave out the stop
        // chunks of the document's own scope.
        args.extend(["--jaccard", "0.4"]);
        overlap_ok(&args);
        let (header, rows) = read_csv(&out.join("overlap.csv"));
        assert_eq!(header, ["doc_i", "doc_j", "shared", "jaccard"], "{what} --jaccard 0.4");
        let got: Vec<(usize, usize, usize)> = rows
            .iter()
            .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap(), r[2].parse().unwrap()))
            .collect();
        let want = reference.similar(t, Some(4000), None);
        assert!(got == want, "{what} --jaccard 0.4: {}", table_diff(&got, &want));
    }
    let stats = read_stats(&out);
    let scopes: std::collections::BTreeSet<&str> = docs
        .iter()
        .map(|(h, _)| match scope {
            "host" => HOSTS[*h].1,
            _ => HOSTS[*h].2,
        })
        .collect();
    match scope {
        "crawl" => assert!(stats["exact"].get("scopes").is_none(), "no scopes without --scope"),
        _ => assert_eq!(stats["exact"]["scopes"], scopes.len() as u64, "--scope {scope}: scopes"),
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["exact"]["scope"], scope);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn every_method_finds_the_groups_and_pairs_of_each_scope_alone(
        seed in 1u64..u64::MAX,
        t in 1usize..=3,
        max_df in prop_oneof![Just(None), Just(Some(3usize))],
    ) {
        let tmp = tempdir();
        let docs = corpus(seed, 90);
        for scope in SCOPES {
            check(tmp.path(), &docs, scope, t, max_df);
        }
    }
}

#[test]
fn scopes_split_what_the_crawl_joins() {
    // The same corpus in the three scopes: host finds fewer exact copies
    // and pairs than site, and site fewer than crawl; so the test data
    // exercise what scopes change.
    let tmp = tempdir();
    let docs = corpus(7, 150);
    let spec = Spec::parse("lines:2");
    let [crawl, host, site] = ["crawl", "host", "site"].map(|s| scoped_reference(&docs, s, spec, None).0);
    assert!(
        host.copies_removed() < site.copies_removed(),
        "host {} site {}",
        host.copies_removed(),
        site.copies_removed()
    );
    assert!(site.copies_removed() < crawl.copies_removed());
    assert!(host.table(2).len() < site.table(2).len() && site.table(2).len() < crawl.table(2).len());
    assert!(!host.table(2).is_empty());
    for scope in SCOPES {
        check(tmp.path(), &docs, scope, 2, None);
    }
}

#[test]
fn run_takes_the_scope_and_a_later_exact_may_change_it() {
    let tmp = tempdir();
    let docs = corpus(11, 60);
    let input = tmp.path().join("docs.jsonl");
    write_jsonl(&input, &docs.iter().map(|(_, d)| d.clone()).collect::<Vec<_>>());
    let out = tmp.path().join("out");
    let base = ["run", &arg(&input), "--out", &arg(&out), "--chunk", "lines:2", "-T", "2", "-q"];
    overlap_ok([&base[..], &["--scope", "site"]].concat());
    let spec = Spec::parse("lines:2");
    assert_matches_reference(&out, &scoped_reference(&docs, "site", spec, None).0, 2, "run --scope site");
    // The exact stage runs again with another scope, and the pairs after it.
    overlap_ok([&base[..], &["--scope", "host"]].concat());
    assert_matches_reference(&out, &scoped_reference(&docs, "host", spec, None).0, 2, "run --scope host");
    overlap_ok(base);
    assert_matches_reference(&out, &scoped_reference(&docs, "crawl", spec, None).0, 2, "run");
    assert!(!out.join("records/scopes.fpd").exists(), "a crawl-wide analysis has no scopes.fpd");
}

#[test]
fn an_unknown_scope_is_one_line_and_exit_2() {
    let out = overlap(["run", "x.warc", "--scope", "domain"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("crawl, host, site"), "{err}");
}

#[test]
fn the_report_says_the_scope_and_what_it_leaves_of_host_pairs() {
    let tmp = tempdir();
    let docs = corpus(7, 150);
    let input = tmp.path().join("docs.jsonl");
    write_jsonl(&input, &docs.iter().map(|(_, d)| d.clone()).collect::<Vec<_>>());
    let site_of: std::collections::HashMap<&str, &str> = HOSTS.iter().map(|h| (h.1, h.2)).collect();
    for scope in SCOPES {
        let scope: &str = scope;
        let out = tmp.path().join(scope);
        overlap_ok([
            "run",
            &arg(&input),
            "--out",
            &arg(&out),
            "--chunk",
            "lines:2",
            "-T",
            "2",
            "-q",
            "--scope",
            scope,
        ]);
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(report["scope"], scope);
        assert!(html.contains(&format!("scope {scope}")), "{scope}: report.html names the scope");
        let (_, host_pairs) = read_csv(&out.join("hosts.csv"));
        let note = report["hosts"]["scope_note"].as_str();
        match scope {
            "crawl" => {
                assert!(note.is_none());
                assert!(
                    host_pairs.iter().any(|p| site_of[p[0].as_str()] != site_of[p[1].as_str()]),
                    "the test data have replicas across sites"
                );
            }
            "host" => {
                let note = note.unwrap();
                assert!(note.contains("no mirrored hosts by construction"), "{note}");
                assert!(host_pairs.is_empty(), "no pair crosses hosts: {host_pairs:?}");
                assert_eq!(report["hosts"]["mirrors"], serde_json::json!([]));
                assert!(html.contains(note) && !html.contains("<th>host A</th>"), "report.html says so");
            }
            _ => {
                assert!(note.unwrap().contains("hosts of the same site"));
                assert!(!host_pairs.is_empty(), "the test data have replicas across hosts of a site");
                for p in &host_pairs {
                    assert_eq!(site_of[p[0].as_str()], site_of[p[1].as_str()], "{p:?} crosses sites");
                }
            }
        }
    }
}
