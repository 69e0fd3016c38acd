//! `dedup --keep`: the copy that stands for each group, by a stated rule,
//! against a recomputation of the rule from docs.csv and overlap.csv.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

fn page(name: &str) -> String {
    fs::read_to_string(testdata(&format!("src/rust/1.95.0/std/mem/{name}"))).unwrap()
}

fn response(url: &str, date: &str, body: &str) -> Vec<u8> {
    let mut fields = vec![("WARC-Target-URI", url), ("Content-Type", "application/http")];
    if !date.is_empty() {
        fields.push(("WARC-Date", date));
    }
    warc_record("response", &fields, &http_response("200 OK", "Content-Type: text/html\r\n", body.as_bytes()))
}

/// `html` with a canonical link to `to` in its head.
fn with_canonical(html: &str, to: &str) -> String {
    html.replacen("<head>", &format!("<head><link rel=\"canonical\" href=\"{to}\">"), 1)
}

/// `html` with a paragraph more: a near-replica.
fn edited(html: &str, words: &str) -> String {
    html.replacen("</main>", &format!("<p>{words}</p></main>"), 1)
}

/// Copies of four pages under several URLs and dates: exact groups of
/// three and two, a group of near-replicas, and pages alone.
fn crawl() -> Vec<u8> {
    let (take, swap, replace, index) =
        (page("fn.take.html"), page("fn.swap.html"), page("fn.replace.html"), page("index.html"));
    [
        response("http://mirror.example/a/very/long/path/take", "2024-01-03T00:00:00Z", &take),
        response("https://b.example/take", "2024-01-01T00:00:00Z", &take),
        response(
            "http://a.example/take",
            "2024-01-05T00:00:00Z",
            &with_canonical(&take, "http://a.example/take"),
        ),
        response("http://a.example/swap?ref=feed", "", &with_canonical(&swap, "/swap")),
        response("https://a.example/swap", "2024-02-01T00:00:00Z", &swap),
        response("http://c.example/replace", "2024-03-01T00:00:00Z", &replace),
        response(
            "https://c.example/replace-old",
            "2024-01-01T00:00:00Z",
            &edited(&replace, "An older note."),
        ),
        response(
            "http://d.example/r",
            "2024-04-01T00:00:00Z",
            &edited(&replace, "A note, then another added here."),
        ),
        response("http://e.example/index", "2024-01-01T00:00:00Z", &index),
    ]
    .concat()
}

/// `2024-01-03T00:00:00Z` as 20240103000000.
fn digits(date: &str) -> u64 {
    date.chars().filter(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

/// One criterion's value for a row of docs.csv, the smaller first: the
/// rule as docs/dedup.md states it, computed here on its own.
fn value(criterion: &str, d: &DocRow) -> u64 {
    match criterion {
        "capture" => ["response", "", "revisit"].iter().position(|c| *c == d.capture).unwrap() as u64,
        // The crawl's dates are whole seconds: their digits order them.
        // Undated last either way.
        "newest" | "oldest" if d.date.is_empty() => u64::MAX,
        "newest" => u64::MAX - 1 - digits(&d.date),
        "oldest" => digits(&d.date),
        "https" => u64::from(!d.url.starts_with("https://")),
        "shortest-url" => d.url.len() as u64,
        "canonical" if d.canonical.is_empty() => 1,
        "canonical" => {
            let own = url::Url::parse(&d.url).unwrap();
            if own.join(&d.canonical).unwrap() == own { 0 } else { 2 }
        }
        "longest-text" => u64::MAX - d.lines as u64,
        "input-order" => d.doc_id as u64,
        other => panic!("{other}"),
    }
}

/// The skip list `dedup --format skip --keep RULE` should write, from
/// docs.csv and overlap.csv: each exact group kept as its first member in
/// the rule's order; groups taken in the order of those members, each
/// skipped when a kept group is paired with it (near only).
fn expected_skip(dir: &Path, rule: &str, near: bool) -> Vec<Vec<String>> {
    let docs: BTreeMap<usize, DocRow> = read_docs(dir).into_iter().map(|d| (d.doc_id, d)).collect();
    let criteria: Vec<&str> = rule.split(',').collect();
    let key = |d: usize| -> (Vec<u64>, usize) { (criteria.iter().map(|c| value(c, &docs[&d])).collect(), d) };
    let members = |c: usize| docs.values().filter(move |d| d.exact_center == Some(c)).map(|d| d.doc_id);
    let first = |c: usize| members(c).min_by_key(|&d| key(d)).unwrap();
    let (_, rows) = read_csv(&dir.join("overlap.csv"));
    let pairs: Vec<(usize, usize)> =
        rows.iter().map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap())).collect();
    let mut groups: Vec<usize> =
        docs.values().filter(|d| d.exact_center == Some(d.doc_id)).map(|d| d.doc_id).collect();
    groups.sort_by_key(|&g| key(first(g)));
    let mut by: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    for (i, &g) in groups.iter().enumerate() {
        let covering =
            groups[..i].iter().find(|&&k| near && by[&k].is_none() && pairs.contains(&(g.min(k), g.max(k))));
        by.insert(g, covering.copied());
    }
    let mut want = Vec::new();
    for d in docs.values() {
        let Some(c) = d.exact_center else { continue };
        let (stand_in, why) = match by[&c] {
            Some(k) => (first(k), "near"),
            None if first(c) == d.doc_id => continue,
            None => (first(c), "exact"),
        };
        let (a, b) = (key(stand_in).0, key(d.doc_id).0);
        let decided = a.iter().zip(&b).position(|(x, y)| x != y).map_or("input-order", |i| criteria[i]);
        want.push(vec![d.url.clone(), docs[&stand_in].url.clone(), why.to_string(), decided.to_string()]);
    }
    want
}

#[test]
fn each_rule_keeps_the_copy_it_states() {
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc");
    fs::write(&input, crawl()).unwrap();
    let dir = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--out", &arg(&dir), "--preset", "default", "-q"]);
    let docs = read_docs(&dir);
    assert_eq!(
        docs.iter().filter(|d| d.exact_center.is_some_and(|c| c != d.doc_id)).count(),
        3,
        "the crawl's exact copies"
    );
    assert!(fs::read_to_string(dir.join("overlap.csv")).unwrap().lines().count() > 1, "and near-replicas");
    let rules = [
        "input-order",
        "newest",
        "oldest",
        "https",
        "shortest-url",
        "canonical",
        "longest-text",
        "capture,newest",
        "https,shortest-url",
        "canonical,oldest,shortest-url",
    ];
    let mut lists = BTreeMap::new();
    for rule in rules {
        for level in ["exact", "near"] {
            let path = tmp.path().join(format!("{rule}-{level}.csv"));
            let args = [
                "dedup",
                &arg(&dir),
                "--level",
                level,
                "--format",
                "skip",
                "--keep",
                rule,
                "-o",
                &arg(&path),
            ];
            overlap_ok(args);
            let (header, rows) = read_csv(&path);
            assert_eq!(header, ["url", "kept_url", "why", "rule"]);
            assert_eq!(rows, expected_skip(&dir, rule, level == "near"), "--keep {rule} --level {level}");
            // The kept URLs are every URL the skip list does not name.
            let urls = tmp.path().join(format!("{rule}-{level}.txt"));
            overlap_ok([
                "dedup",
                &arg(&dir),
                "--level",
                level,
                "--format",
                "urls",
                "--keep",
                rule,
                "-o",
                &arg(&urls),
            ]);
            let kept: Vec<String> = fs::read_to_string(&urls).unwrap().lines().map(String::from).collect();
            let skipped: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
            let all: Vec<String> =
                docs.iter().map(|d| d.url.clone()).filter(|u| !skipped.contains(&u)).collect();
            assert_eq!(kept, all, "--keep {rule} --level {level}");
            lists.insert((rule, level), rows);
        }
    }
    // The rules do choose differently on this crawl.
    let kept_for_take =
        |rule| lists[&(rule, "exact")].iter().find(|r| r[0].ends_with("/take")).map(|r| r[1].clone());
    assert_eq!(kept_for_take("newest").as_deref(), Some("http://a.example/take"));
    assert_eq!(kept_for_take("oldest").as_deref(), Some("https://b.example/take"));
    assert_ne!(lists[&("input-order", "near")], lists[&("newest", "near")]);
}

#[test]
fn a_rule_that_cannot_decide_is_refused_in_one_line() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    overlap_ok(["run", &arg(&testdata("report/crawl.warc.gz")), "--out", &arg(&dir), "-q"]);
    for (rule, says) in [
        ("newst", "'newst' is not a criterion of --keep"),
        ("https,https", "'https' is given twice"),
        ("input-order,newest", "'newest' comes after input-order"),
        ("oldest,newest", "'newest' after 'oldest'"),
    ] {
        let out = overlap(["dedup", &arg(&dir), "--format", "urls", "--keep", rule, "-o", "-"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rule}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{rule}: {stderr}");
    }
    // Every page of that crawl has the same date: `newest` decides
    // nothing, which is said, and `https` decides as it would alone.
    let (both, alone) = (tmp.path().join("both.csv"), tmp.path().join("alone.csv"));
    for (rule, path) in [("newest,https", &both), ("https", &alone)] {
        let out = overlap(["dedup", &arg(&dir), "--format", "skip", "--keep", rule, "-o", &arg(path)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let warned =
            stderr.contains("--keep newest: every document ranks alike by it, so it decides nothing");
        assert_eq!(warned, rule.contains("newest"), "{rule}: {stderr}");
        assert!(!stderr.contains("--keep https:"), "{stderr}");
    }
    let rows = |p: &Path| read_csv(p).1.into_iter().map(|r| r[..3].to_vec()).collect::<Vec<_>>();
    assert_eq!(rows(&both), rows(&alone));
}

/// `run --keep` counts the report's savings by the rule, records it, and
/// `dedup` without `--keep` takes it: what dedup skips is what the report
/// counts as skippable.
#[test]
fn the_reports_savings_follow_the_rule_and_dedup_takes_it() {
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc");
    fs::write(&input, crawl()).unwrap();
    let (plain, ranked) = (tmp.path().join("plain"), tmp.path().join("ranked"));
    overlap_ok(["run", &arg(&input), "--out", &arg(&plain), "--preset", "default", "-q"]);
    let rule = "newest,https";
    overlap_ok(["run", &arg(&input), "--out", &arg(&ranked), "--preset", "default", "--keep", rule, "-q"]);
    // The same analysis but for the rule.
    for table in ["overlap.csv", "docs.csv", "groups.csv"] {
        assert_eq!(fs::read(plain.join(table)).unwrap(), fs::read(ranked.join(table)).unwrap(), "{table}");
    }
    let manifest = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
    };
    assert_eq!(manifest(&ranked)["keep"], rule);
    assert!(manifest(&plain).get("keep").is_none());
    let docs = read_docs(&ranked);
    let bytes: BTreeMap<String, u64> = docs.iter().map(|d| (d.url.clone(), d.bytes)).collect();
    for (dir, keep) in [(&plain, "input-order"), (&ranked, rule)] {
        let report: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("report.json")).unwrap()).unwrap();
        assert_eq!(report["savings"]["keep"], keep);
        for level in ["exact", "near"] {
            let skipped = expected_skip(dir, keep, level == "near");
            let savings = &report["savings"][level];
            assert_eq!(savings["pages"], skipped.len(), "{keep} {level}");
            let skipped_bytes: u64 = skipped.iter().map(|r| bytes[&r[0]]).sum();
            assert_eq!(savings["bytes"], skipped_bytes, "{keep} {level}");
            // dedup without --keep: the recorded rule.
            let path = tmp.path().join(format!("{keep}-{level}-default.csv"));
            overlap_ok(["dedup", &arg(dir), "--level", level, "--format", "skip", "-o", &arg(&path)]);
            assert_eq!(read_csv(&path).1, skipped, "{keep} {level}");
        }
        // host-summary.csv's skippable, per host.
        let (header, rows) = read_csv(&dir.join("host-summary.csv"));
        let at = header.iter().position(|h| h == "skippable").unwrap();
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        for r in expected_skip(dir, keep, true) {
            *want.entry(host_of(&r[0])).or_default() += 1;
        }
        for r in &rows {
            assert_eq!(
                r[at].parse::<u64>().unwrap(),
                want.get(&r[0]).copied().unwrap_or(0),
                "{keep}: {}",
                r[0]
            );
        }
    }
    let (a, b) = (expected_skip(&plain, "input-order", true), expected_skip(&ranked, rule, true));
    assert_ne!(a, b, "the rule changes what is skipped on this crawl");
}
