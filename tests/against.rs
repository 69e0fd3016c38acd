//! `--against REF_DIR` through the real binary, against a brute-force
//! recomputation from the texts: each side's exact copies, the template
//! and stop chunks decided over both crawls, the set sizes, every cross
//! pair's shared chunks and the criterion, the best reference page, the
//! chunks the reference holds; then `dedup --level against` and the
//! refusals.

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The two crawls: the reference is the first 60% of the real documents;
/// the new crawl the last 60% (a fifth of it shared), edited copies of
/// reference pages (a line dropped, a line added), reference pages under
/// new URLs on other hosts, and copies inside the new crawl.
fn crawls(dir: &Path) -> (Vec<JsonDoc>, Vec<JsonDoc>) {
    let (_, docs) = real_jsonl(dir);
    let n = docs.len();
    let reference: Vec<JsonDoc> = docs[..n * 6 / 10].to_vec();
    let mut new: Vec<JsonDoc> = docs[n * 4 / 10..].to_vec();
    let mut rng = Rng(7);
    for (i, d) in reference.iter().enumerate().step_by(9) {
        let mut lines: Vec<&str> = d.text.lines().collect();
        match i % 3 {
            0 if lines.len() > 3 => {
                lines.remove(rng.below(lines.len()));
            }
            1 => lines.push("A line the new crawl added."),
            _ => {}
        }
        let host = ["mirror-b.example.net", "copies.example.com", "mirror-a.example.org"][i % 3];
        new.push(JsonDoc { url: format!("http://{host}/moved/{i}"), text: lines.join("\n") });
    }
    let again: Vec<JsonDoc> = new.iter().step_by(17).cloned().collect();
    for (k, d) in again.into_iter().enumerate() {
        new.push(JsonDoc { url: format!("http://copies.example.com/again/{k}"), text: d.text });
    }
    new.push(JsonDoc { url: "http://copies.example.com/empty".into(), text: " \n ".into() });
    (reference, new)
}

/// What the brute force is told of a run.
#[derive(Clone, Copy)]
struct Flags {
    spec: &'static str,
    threshold: usize,
    /// In ten-thousandths.
    jaccard: Option<u64>,
    containment: Option<u64>,
    /// (min, share in ten-thousandths).
    template: Option<(usize, u64)>,
    max_df: Option<usize>,
    host_scope: bool,
}

impl Flags {
    fn args(&self) -> Vec<String> {
        let mut a = vec!["--chunk".into(), self.spec.into(), "-T".into(), self.threshold.to_string()];
        let ratio = |q: u64| format!("{}.{:04}", q / 10_000, q % 10_000);
        if let Some(j) = self.jaccard {
            a.extend(["--jaccard".into(), ratio(j)]);
        }
        if let Some(c) = self.containment {
            a.extend(["--containment".into(), ratio(c)]);
        }
        if let Some((min, share)) = self.template {
            a.extend(["--template".into(), format!("{min}:{}", ratio(share))]);
        }
        if let Some(m) = self.max_df {
            a.extend(["--max-df".into(), m.to_string()]);
        }
        if self.host_scope {
            a.extend(["--scope".into(), "host".into()]);
        }
        a
    }

    fn passes(&self, s: usize, a: usize, b: usize) -> bool {
        let (s, a, b) = (s as u64, a as u64, b as u64);
        s >= self.threshold as u64
            && self.jaccard.is_none_or(|q| s * 10_000 >= q * (a + b - s))
            && self.containment.is_none_or(|q| s * 10_000 >= q * a.min(b))
    }
}

/// One side as the brute force sees it.
struct Side {
    scopes: Vec<String>,
    hosts: Vec<String>,
    /// Each document's exact-group center (smallest docID of its text in
    /// its scope), `None` when empty.
    centers: Vec<Option<usize>>,
    texts: Vec<Vec<String>>,
    /// The sets of counted documents, after the rule.
    sets: BTreeMap<usize, BTreeSet<String>>,
}

impl Side {
    fn new(docs: &[JsonDoc], flags: &Flags) -> Side {
        let hosts: Vec<String> = docs.iter().map(|d| host_of(&d.url)).collect();
        let scopes: Vec<String> =
            hosts.iter().map(|h| if flags.host_scope { h.clone() } else { String::new() }).collect();
        let texts: Vec<Vec<String>> = docs.iter().map(|d| normalize(&d.text)).collect();
        let mut first: HashMap<(String, Vec<String>), usize> = HashMap::new();
        let centers = texts
            .iter()
            .enumerate()
            .map(|(i, t)| (!t.is_empty()).then(|| *first.entry((scopes[i].clone(), t.clone())).or_insert(i)))
            .collect::<Vec<_>>();
        let sets = (0..docs.len())
            .filter(|&i| centers[i] == Some(i))
            .map(|i| (i, chunk_texts(&texts[i], Spec::parse(flags.spec)).into_iter().collect()))
            .collect();
        Side { scopes, hosts, centers, texts, sets }
    }
}

/// Leaves out of both sides' sets the template chunks of each host (over
/// both sides' counted pages), then the stop chunks of each scope.
fn apply_rule(sides: &mut [Side; 2], flags: &Flags) {
    if let Some((min, share)) = flags.template {
        let mut pages: HashMap<String, usize> = HashMap::new();
        let mut holders: HashMap<(String, String), usize> = HashMap::new();
        for side in sides.iter() {
            for (&d, set) in &side.sets {
                *pages.entry(side.hosts[d].clone()).or_default() += 1;
                for c in set {
                    *holders.entry((side.hosts[d].clone(), c.clone())).or_default() += 1;
                }
            }
        }
        for side in sides.iter_mut() {
            for (&d, set) in side.sets.iter_mut() {
                let host = &side.hosts[d];
                let limit = min.max((share * pages[host] as u64 / 10_000) as usize);
                set.retain(|c| holders[&(host.clone(), c.clone())] <= limit);
            }
        }
    }
    if let Some(max_df) = flags.max_df {
        let mut df: HashMap<(String, String), usize> = HashMap::new();
        for side in sides.iter() {
            for (&d, set) in &side.sets {
                for c in set {
                    *df.entry((side.scopes[d].clone(), c.clone())).or_default() += 1;
                }
            }
        }
        for side in sides.iter_mut() {
            for (&d, set) in side.sets.iter_mut() {
                let scope = side.scopes[d].clone();
                set.retain(|c| df[&(scope.clone(), c.clone())] <= max_df);
            }
        }
    }
}

/// `against.csv` and `against-pairs.csv` as the brute force makes them,
/// without the URL columns: (doc_id, chunks, in_reference, best, exact,
/// held) with best = (ref_doc_id, shared, ref_chunks).
type Row = (usize, usize, usize, Option<(usize, usize, usize)>, bool, bool);
type Pair = (usize, usize, usize, usize, usize);

fn brute_force(reference: &[JsonDoc], new: &[JsonDoc], flags: &Flags) -> (Vec<Row>, Vec<Pair>) {
    let mut sides = [Side::new(new, flags), Side::new(reference, flags)];
    apply_rule(&mut sides, flags);
    let [here, there] = &sides;
    let mut pairs = Vec::new();
    let mut best: BTreeMap<usize, (usize, usize, bool)> = BTreeMap::new();
    let mut held: BTreeMap<usize, usize> = BTreeMap::new();
    let mut exact: BTreeMap<usize, usize> = BTreeMap::new();
    for (&n, a) in &here.sets {
        let scope = &here.scopes[n];
        let mut in_reference: BTreeSet<&String> = BTreeSet::new();
        let copy = (0..reference.len()).find(|&r| {
            there.centers[r].is_some() && &there.scopes[r] == scope && there.texts[r] == here.texts[n]
        });
        if let Some(r) = copy {
            exact.insert(n, r);
        }
        for (&r, b) in there.sets.iter().filter(|(r, _)| &there.scopes[**r] == scope) {
            let shared = a.intersection(b).count();
            in_reference.extend(a.intersection(b));
            if shared < flags.threshold || shared == 0 {
                continue;
            }
            if !flags.passes(shared, a.len(), b.len()) {
                continue;
            }
            pairs.push((n, r, shared, a.len(), b.len()));
            // The most shared chunks, then the exact copy, then the
            // smallest docID.
            let key = |r: usize, shared: usize| (shared, copy == Some(r));
            if best.get(&n).is_none_or(|&(br, bs, _)| key(r, shared) > key(br, bs)) {
                best.insert(n, (r, shared, true));
            }
        }
        held.insert(n, in_reference.len());
    }
    let rows = (0..new.len())
        .map(|d| match here.centers[d] {
            None => (d, 0, 0, None, false, false),
            Some(c) => {
                let b = best.get(&c).map(|&(r, s, _)| (r, s, there.sets[&r].len()));
                let is_exact = exact.contains_key(&c);
                let passes = best.get(&c).is_some_and(|b| b.2);
                (d, here.sets[&c].len(), held[&c], b, is_exact, is_exact || passes)
            }
        })
        .collect();
    (rows, pairs)
}

fn read_against(dir: &Path, new: &[JsonDoc], reference: &[JsonDoc]) -> (Vec<Row>, Vec<Pair>) {
    let (header, rows) = read_csv(&dir.join("against.csv"));
    assert_eq!(
        header.join(","),
        "doc_id,url,chunks,chunks_in_reference,ref_doc_id,ref_url,ref_shared,ref_chunks,share_in_ref,\
         share_of_ref,exact,held"
    );
    let n = |s: &str| s.parse::<usize>().unwrap();
    let rows = rows
        .iter()
        .map(|r| {
            let d = n(&r[0]);
            assert_eq!(r[1], new[d].url);
            let best = (!r[4].is_empty()).then(|| {
                assert_eq!(r[5], reference[n(&r[4])].url);
                // Each measure is shared / size, in millionths.
                for (col, den) in [(8, n(&r[2])), (9, n(&r[7]))] {
                    let want = (2 * n(&r[6]) as u64 * 1_000_000 + den as u64) / (2 * den as u64);
                    assert_eq!(r[col], format!("{}.{:06}", want / 1_000_000, want % 1_000_000));
                }
                (n(&r[4]), n(&r[6]), n(&r[7]))
            });
            (d, n(&r[2]), n(&r[3]), best, r[10] == "true", r[11] == "true")
        })
        .collect();
    let (header, pairs) = read_csv(&dir.join("against-pairs.csv"));
    assert_eq!(header.join(","), "doc_id,ref_doc_id,shared,chunks,ref_chunks");
    let pairs = pairs.iter().map(|p| (n(&p[0]), n(&p[1]), n(&p[2]), n(&p[3]), n(&p[4]))).collect();
    (rows, pairs)
}

fn check(flags: Flags) {
    check_with(flags, |_, _, _, _| {});
}

/// Runs both analyses with `flags`, checks the tables against the brute
/// force, then hands the directories and the rows to `more`.
fn check_with(flags: Flags, more: impl FnOnce(&Path, &[JsonDoc], &[JsonDoc], &[Row])) {
    let tmp = tempdir();
    let (reference, new) = crawls(tmp.path());
    let (ref_in, new_in) = (tmp.path().join("ref.jsonl"), tmp.path().join("new.jsonl"));
    write_jsonl(&ref_in, &reference);
    write_jsonl(&new_in, &new);
    let (ref_dir, new_dir) = (tmp.path().join("ref"), tmp.path().join("new"));
    let mut args = vec!["run".to_string(), arg(&ref_in), "--out".into(), arg(&ref_dir), "-q".into()];
    args.extend(flags.args());
    overlap_ok(&args);
    let mut args = vec!["run".to_string(), arg(&new_in), "--out".into(), arg(&new_dir), "-q".into()];
    args.extend(flags.args());
    args.extend(["--against".into(), arg(&ref_dir)]);
    overlap_ok(&args);
    let (want_rows, want_pairs) = brute_force(&reference, &new, &flags);
    let (rows, pairs) = read_against(&new_dir, &new, &reference);
    let what = flags.args().join(" ");
    assert_eq!(rows.len(), new.len(), "{what}");
    for (got, want) in rows.iter().zip(&want_rows) {
        assert_eq!(got, want, "{what}: against.csv row of docID {}", want.0);
    }
    assert_eq!(pairs, want_pairs, "{what}: against-pairs.csv");
    // The answer must not be trivial: some pages held exactly, some near,
    // some not at all, and pairs below the criterion.
    let exact = rows.iter().filter(|r| r.4).count();
    let near = rows.iter().filter(|r| r.5 && !r.4).count();
    let not_held = rows.iter().filter(|r| !r.5).count();
    assert!(
        exact > 20 && near > 3 && not_held > 20,
        "{what}: {exact} exact, {near} near, {not_held} not held"
    );
    let stats = read_stats(&new_dir);
    let s = &stats["pairs"]["against"];
    assert_eq!(s["held"], rows.iter().filter(|r| r.5).count() as u64, "{what}");
    assert_eq!(s["documents"], new.len() as u64);
    assert_eq!(s["pairs_emitted"], pairs.len() as u64);
    if flags.max_df.is_some() {
        assert!(s["stop_chunks"].as_u64().unwrap() > 0, "{what}: no stop chunk was left out");
    }
    // The report's figures are against.csv's, empty pages left out.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(new_dir.join("report.json")).unwrap()).unwrap();
    let a = &report["against"];
    let non_empty: Vec<&Row> = rows.iter().filter(|r| !normalize(&new[r.0].text).is_empty()).collect();
    assert_eq!(a["documents"], non_empty.len() as u64, "{what}");
    assert_eq!(a["held"], non_empty.iter().filter(|r| r.5).count() as u64, "{what}");
    assert_eq!(a["exact"], non_empty.iter().filter(|r| r.4).count() as u64, "{what}");
    let hosts: u64 = a["hosts"].as_array().unwrap().iter().map(|h| h["held"].as_u64().unwrap()).sum();
    assert_eq!(a["held"], hosts, "{what}: every host is listed");
    more(&new_dir, &new, &reference, &rows);
}

#[test]
fn counts_against_the_reference_as_the_brute_force_does_at_t() {
    let flags = Flags {
        spec: "lines:2",
        threshold: 3,
        jaccard: None,
        containment: None,
        template: None,
        max_df: None,
        host_scope: false,
    };
    check_with(flags, |dir, new, reference, rows| {
        // dedup --level against writes the pages the reference does not
        // hold, in docID order, and the skip list names the others'
        // reference pages.
        let tmp = tempdir();
        let urls = tmp.path().join("urls.txt");
        overlap_ok(["dedup", &arg(dir), "--level", "against", "--format", "urls", "-o", &arg(&urls), "-q"]);
        let want: Vec<&str> = rows.iter().filter(|r| !r.5).map(|r| new[r.0].url.as_str()).collect();
        let got = std::fs::read_to_string(&urls).unwrap();
        assert_eq!(got.lines().collect::<Vec<_>>(), want);
        let skip = tmp.path().join("skip.csv");
        overlap_ok(["dedup", &arg(dir), "--level", "against", "--format", "skip", "-o", &arg(&skip), "-q"]);
        let (header, skipped) = read_csv(&skip);
        assert_eq!(header.join(","), "url,kept_url,why,rule");
        let want: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r.5)
            .map(|r| {
                let kept = r.3.map_or(String::new(), |b| reference[b.0].url.clone());
                let why = if r.4 { "exact" } else { "near" };
                vec![new[r.0].url.clone(), kept, why.into(), "against".into()]
            })
            .collect();
        assert_eq!(skipped, want);
        let jsonl = tmp.path().join("kept.jsonl");
        overlap_ok(["dedup", &arg(dir), "--level", "against", "--format", "jsonl", "-o", &arg(&jsonl), "-q"]);
        let kept = read_jsonl(&jsonl);
        assert_eq!(kept.len(), rows.iter().filter(|r| !r.5).count());
    });
}

#[test]
fn counts_against_the_reference_with_similarity_and_templates_over_both_crawls() {
    let flags = Flags {
        spec: "lines:1",
        threshold: 1,
        jaccard: Some(5000),
        containment: Some(8000),
        template: Some((5, 100)),
        max_df: None,
        host_scope: false,
    };
    check_with(flags, |dir, _, _, _| {
        // Every counting method counts the two crawls to the same tables,
        // and the one that ran is the one asked for.
        let reference = dir.parent().unwrap().join("ref");
        let tables =
            || ["against.csv", "against-pairs.csv"].map(|name| std::fs::read(dir.join(name)).unwrap());
        let first = tables();
        let criterion: Vec<String> = flags.args().into_iter().skip(2).collect();
        for method in ["sort", "coarse", "prefix"] {
            let mut args = vec!["pairs".to_string(), arg(dir), "--method".into(), method.into()];
            args.extend(["--against".into(), arg(&reference), "-q".into()]);
            args.extend(criterion.iter().cloned());
            overlap_ok(&args);
            assert_eq!(read_stats(dir)["pairs"]["against"]["method"], method);
            assert!(tables() == first, "--method {method} counts other against tables");
        }
    });
}

#[test]
fn counts_against_the_reference_within_hosts_with_stop_chunks() {
    check(Flags {
        spec: "lines:1",
        threshold: 2,
        jaccard: None,
        containment: Some(7000),
        template: None,
        max_df: Some(6),
        host_scope: true,
    });
}

#[test]
fn a_reference_that_cannot_be_compared_is_refused_in_one_line() {
    let tmp = tempdir();
    let (reference, new) = crawls(tmp.path());
    let (ref_in, new_in) = (tmp.path().join("ref.jsonl"), tmp.path().join("new.jsonl"));
    write_jsonl(&ref_in, &reference);
    write_jsonl(&new_in, &new);
    let (r, n, half) = (tmp.path().join("ref"), tmp.path().join("new"), tmp.path().join("half"));
    overlap_ok(["run", &arg(&ref_in), "--out", &arg(&r), "-q"]);
    overlap_ok(["fingerprint", &arg(&ref_in), "--out", &arg(&half), "-q"]);
    let (ni, no, rd) = (arg(&new_in), arg(&n), arg(&r));
    let run = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["run", &ni, "--out", &no, "-q"].map(String::from).to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    for (extra, mentions) in [
        (vec!["--against", "no/such/analysis"], "no such analysis"),
        (vec!["--against", rd.as_str(), "--chunk", "lines:2"], "--chunk"),
        (vec!["--against", rd.as_str(), "--scope", "host"], "--scope"),
        (vec!["--against", &arg(&half)], "incomplete analysis"),
        (vec!["--against", &arg(&ref_in)], "not a directory"),
    ] {
        let args = run(&extra);
        assert_usage_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[mentions]);
    }
    // An analysis is not its own reference.
    overlap_ok(run(&[]));
    assert_usage_error(&run(&["--against", &no]).iter().map(String::as_str).collect::<Vec<_>>(), &["itself"]);
    // dedup --level against needs against.csv, and refuses --keep and
    // revisits.
    let o = arg(&tmp.path().join("o"));
    assert_usage_error(&["dedup", &no, "--level", "against", "--format", "urls", "-o", &o], &["against.csv"]);
    overlap_ok(run(&["--against", &rd]));
    assert_usage_error(
        &["dedup", &no, "--level", "against", "--format", "urls", "--keep", "newest", "-o", &o],
        &["--keep"],
    );
    assert_usage_error(
        &["dedup", &no, "--level", "against", "--format", "warc-revisits", "-o", &o],
        &["revisit"],
    );
    // Counting without --against again removes the tables.
    overlap_ok(run(&[]));
    assert!(!n.join("against.csv").exists() && !n.join("against-pairs.csv").exists());
}
