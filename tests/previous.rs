//! Carrying an analysis forward (`--previous`), checked against a model of
//! the rules written here from their definition, and against a first
//! analysis of the same documents.
//!
//! Random chains of three to five crawls of the same sites (pages edited,
//! removed, answering 404 or 500, redirected, revisited, answering 304,
//! added, coming back, captured twice; exact copies whose center goes
//! away; pages without a URL; empty pages) are analysed one after the
//! other, each with `--previous` the analysis before it. Each analysis
//! must hold the documents the model says, with the docIDs it says, and
//! its exact groups, Overlap table and report must be those of a first
//! analysis of those documents given in docID order, in the same
//! `--scope` (the sites are `a.example`, with its `www.` host, and
//! `b.example`); `changes.csv` must say what became of every URL as the
//! model does.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use common::Rng;
use common::*;
use proptest::prelude::*;

/// A record of a crawl.
#[derive(Clone, Debug)]
enum Rec {
    /// A 200 response (or, without a URL, a resource record).
    Page {
        url: Option<String>,
        text: String,
    },
    NotModified(String),
    Gone(String, u16),
    Moved(String),
    /// A revisit of a capture of an earlier crawl, of the page's text.
    Revisit(String, String),
}

/// A document of an analysis, as the model holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Doc {
    url: Option<String>,
    text: String,
    missing_for: u16,
}

/// An analysis, as the model holds it.
#[derive(Clone, Debug, Default)]
struct State {
    handles: BTreeMap<String, u32>,
    next: u32,
    current: BTreeMap<u32, Doc>,
    /// DocIDs that stand for their URL (in a first analysis, the last
    /// capture of each; later, every document with a URL).
    standing: BTreeSet<u32>,
}

/// A row `changes.csv` must have.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    doc_id: u32,
    url: String,
    change: &'static str,
    missing_for: u16,
    kept: bool,
    /// A move: the docID and URL of the page gone.
    moved_from: Option<(u32, String)>,
    /// A modified page: its previous text's distinct chunks, and how many
    /// of them it kept.
    chunks: Option<(u32, u32)>,
}

impl Expected {
    fn plain(doc_id: u32, url: String, change: &'static str, missing_for: u16, kept: bool) -> Expected {
        Expected { doc_id, url, change, missing_for, kept, moved_from: None, chunks: None }
    }
}

/// A text's distinct chunks, as the chain's flags cut them.
fn chunk_set(text: &str) -> BTreeSet<String> {
    chunk_texts(&normalize(text), Spec::parse("lines:2")).into_iter().collect()
}

/// The crawl as its documents are made: a revisit whose payload a
/// response of the same crawl has is a copy of that response (a document
/// of its own with that text), whether the response comes before it or
/// after it (one read first is settled once the crawl is read).
fn resolved(crawl: &[Rec]) -> Vec<Rec> {
    let served: BTreeSet<&str> = crawl
        .iter()
        .filter_map(|rec| match rec {
            Rec::Page { url: Some(_), text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    crawl
        .iter()
        .map(|rec| match rec {
            Rec::Revisit(u, text) if served.contains(text.as_str()) => {
                Rec::Page { url: Some(u.clone()), text: text.clone() }
            }
            _ => rec.clone(),
        })
        .collect()
}

/// A first analysis.
fn first(crawl: &[Rec]) -> State {
    let mut s = State::default();
    for rec in &resolved(crawl) {
        if let Rec::Page { url, text } = rec {
            if let Some(u) = url {
                s.handles.insert(u.clone(), s.next);
            }
            s.current.insert(s.next, Doc { url: url.clone(), text: text.clone(), missing_for: 0 });
            s.next += 1;
        }
    }
    s.standing = s.handles.values().copied().collect();
    s
}

/// An analysis of `crawl` carrying `prev` forward.
fn step(prev: &State, crawl: &[Rec], keep: u16) -> (State, Vec<Expected>) {
    let crawl = resolved(crawl);
    let mut by_url: BTreeMap<&str, Vec<(usize, &Rec)>> = BTreeMap::new();
    // (input order, URL, text, docID it had, change) of the pages that stand.
    type Pending = (usize, Option<String>, String, Option<u32>, &'static str);
    let mut pending: Vec<Pending> = Vec::new();
    for (order, rec) in crawl.iter().enumerate() {
        let url = match rec {
            Rec::Page { url: None, text } => {
                pending.push((order, None, text.clone(), None, "new"));
                continue;
            }
            Rec::Page { url: Some(u), .. }
            | Rec::NotModified(u)
            | Rec::Gone(u, _)
            | Rec::Moved(u)
            | Rec::Revisit(u, _) => u.as_str(),
        };
        by_url.entry(url).or_default().push((order, rec));
    }
    let mut next = State { handles: prev.handles.clone(), next: prev.next, ..State::default() };
    let mut rows = Vec::new();
    let mut visited = BTreeSet::new();
    let missing = |h: u32, d: &Doc, change: &'static str, next: &mut State, rows: &mut Vec<Expected>| {
        let m = d.missing_for + 1;
        let kept = m <= keep;
        if kept {
            next.current.insert(h, Doc { missing_for: m, ..d.clone() });
        }
        rows.push(Expected::plain(h, d.url.clone().unwrap_or_default(), change, m, kept));
    };
    for (url, caps) in &by_url {
        let old_h = prev.handles.get(*url).copied();
        let old =
            old_h.filter(|h| prev.standing.contains(h)).and_then(|h| prev.current.get(&h).map(|d| (h, d)));
        if let Some((h, _)) = old {
            visited.insert(h);
        }
        let (order, last) = *caps.last().unwrap();
        match last {
            Rec::Page { text, .. } => {
                let change = match (old_h, old) {
                    (None, _) => "new",
                    (Some(_), None) => "returned",
                    (Some(_), Some((_, d))) if d.missing_for > 0 => "returned",
                    (Some(_), Some((_, d))) if d.text == *text => "unchanged",
                    _ => "modified",
                };
                pending.push((order, Some(url.to_string()), text.clone(), old_h, change));
            }
            Rec::NotModified(_) | Rec::Revisit(..) => {
                if let Some((h, d)) = old {
                    let change = if d.missing_for > 0 { "returned" } else { "unchanged" };
                    next.current.insert(h, Doc { missing_for: 0, ..d.clone() });
                    rows.push(Expected::plain(h, url.to_string(), change, 0, true));
                }
            }
            Rec::Gone(..) => {
                if let Some((h, d)) = old {
                    missing(h, d, "lost", &mut next, &mut rows);
                }
            }
            Rec::Moved(_) => {
                if let Some((h, _)) = old {
                    let url = url.to_string();
                    rows.push(Expected::plain(h, url, "redirected", 0, false));
                }
            }
        }
    }
    for (&h, d) in &prev.current {
        if visited.contains(&h) {
            continue;
        }
        // Not reached through a URL of this crawl: absent, or without a
        // URL; an earlier capture in a first analysis leaves silently.
        if d.url.is_none() || prev.standing.contains(&h) {
            missing(h, d, "orphaned", &mut next, &mut rows);
        }
    }
    // The pages gone (their URL lost, orphaned or redirected now) that a
    // new URL may be.
    let gone: Vec<(u32, String, &str)> = rows
        .iter()
        .filter(|e| matches!(e.change, "lost" | "orphaned" | "redirected") && !e.url.is_empty())
        .map(|e| (e.doc_id, e.url.clone(), prev.current[&e.doc_id].text.as_str()))
        .collect();
    pending.sort_by_key(|p| p.0);
    for (_, url, text, old_h, change) in pending {
        let h = old_h.unwrap_or_else(|| {
            let h = next.next;
            next.next += 1;
            if let Some(u) = &url {
                next.handles.insert(u.clone(), h);
            }
            h
        });
        let mut row = Expected::plain(h, url.clone().unwrap_or_default(), change, 0, true);
        let now = chunk_set(&text);
        if change == "modified" {
            let before = chunk_set(&prev.current[&h].text);
            row.chunks = Some((before.len() as u32, before.intersection(&now).count() as u32));
        }
        if change == "new" && url.is_some() {
            // The same text first, then the most chunks shared (T = 2 of
            // the flags), then the smallest docID.
            let same = |t: &str| !normalize(t).is_empty() && normalize(t) == normalize(&text);
            let best = gone
                .iter()
                .map(|(id, u, t)| {
                    (same(t), chunk_set(t).intersection(&now).count(), std::cmp::Reverse(*id), u)
                })
                .max();
            if let Some((_, _, std::cmp::Reverse(id), u)) = best.filter(|b| b.0 || b.1 >= 2) {
                row.change = "moved";
                row.moved_from = Some((id, u.clone()));
            }
        }
        rows.push(row);
        next.current.insert(h, Doc { url, text, missing_for: 0 });
    }
    next.standing = next.current.iter().filter(|(_, d)| d.url.is_some()).map(|(&h, _)| h).collect();
    rows.sort();
    (next, rows)
}

/// A page's text: one of a few passages with some lines changed, so that
/// pages share chunks (near-replicas) and some are the same (exact copies);
/// now and then empty.
fn text(rng: &mut Rng) -> String {
    if rng.chance(5) {
        return String::new();
    }
    let passage = rng.below(4);
    let n = 3 + rng.below(10);
    let mut lines: Vec<String> = (0..n)
        .map(|i| {
            if rng.chance(15) {
                format!("an edited line {}", rng.below(1000))
            } else {
                format!("line {i} of passage {passage}")
            }
        })
        .collect();
    // Some pages are long enough that a reader inflates their headers
    // before their body, and may leave it compressed.
    if rng.chance(30) {
        lines.extend((0..150).map(|_| format!("a line of its own {:x}", rng.next())));
    }
    lines.join("\n")
}

/// The crawls of a chain: each from the sites' state after the one before.
/// A calm chain changes few pages between crawls (and starts with more),
/// so that pair counting carries most of the previous table forward.
fn crawls(seed: u64, count: usize, calm: bool) -> Vec<Vec<Rec>> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let hosts = ["a.example", "b.example", "www.a.example"];
    // Each URL's page now: Some(text) while it is served.
    let mut site: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut next_page = 0;
    let mut new_url = |rng: &mut Rng| {
        next_page += 1;
        format!("http://{}/p{next_page}", hosts[rng.below(hosts.len())])
    };
    for _ in 0..if calm { 30 } else { 12 } {
        let url = new_url(&mut rng);
        let t = text(&mut rng);
        site.insert(url, Some(t));
    }
    let mut out = Vec::new();
    for k in 0..count {
        let mut crawl = Vec::new();
        // Texts of pages that go this time: some turn up under a new URL.
        let mut went: Vec<String> = Vec::new();
        let urls: Vec<String> = site.keys().cloned().collect();
        for url in urls {
            let page = site[&url].clone();
            let r = rng.below(if calm { 400 } else { 100 });
            if let (Some(t), true) = (&page, k > 0 && (12..29).contains(&r)) {
                went.push(t.clone());
            }
            match page {
                Some(_) if k > 0 && r < 12 => crawl.push(Rec::Page { url: Some(url), text: text(&mut rng) }),
                Some(_) if k > 0 && r < 20 => {} // absent this time
                Some(_) if k > 0 && r < 26 => {
                    crawl.push(Rec::Gone(url, if rng.chance(50) { 404 } else { 500 }))
                }
                Some(_) if k > 0 && r < 29 => crawl.push(Rec::Moved(url)),
                Some(t) if k > 0 && r < 37 => crawl.push(Rec::Revisit(url, t)),
                Some(_) if k > 0 && r < 42 => crawl.push(Rec::NotModified(url)),
                Some(t) => {
                    // Now and then captured twice, the first time with
                    // another text.
                    if rng.chance(6) {
                        crawl.push(Rec::Page { url: Some(url.clone()), text: text(&mut rng) });
                    }
                    crawl.push(Rec::Page { url: Some(url), text: t });
                }
                // Back.
                None if r < 30 => crawl.push(Rec::Page { url: Some(url), text: text(&mut rng) }),
                None if r < 45 => crawl.push(Rec::Gone(url, 404)),
                None => {}
            }
        }
        for _ in 0..1 + rng.below(if calm { 2 } else { 4 }) {
            // New pages, some exact copies of a served one.
            let served: Vec<&String> = site.values().flatten().collect();
            let t = if !served.is_empty() && rng.chance(30) {
                served[rng.below(served.len())].clone()
            } else {
                text(&mut rng)
            };
            crawl.push(Rec::Page { url: Some(new_url(&mut rng)), text: t });
        }
        // Moves: the same text, or with a line edited, or much of it
        // rewritten.
        for t in went {
            if rng.chance(50) {
                let mut lines: Vec<String> = t.split('\n').map(str::to_string).collect();
                let edits = if rng.chance(30) {
                    0
                } else if rng.chance(50) {
                    1
                } else {
                    lines.len() / 2 + 1
                };
                for _ in 0..edits {
                    let i = rng.below(lines.len());
                    lines[i] = format!("a moved line {}", rng.below(1000));
                }
                crawl.push(Rec::Page { url: Some(new_url(&mut rng)), text: lines.join("\n") });
            }
        }
        if rng.chance(30) {
            crawl.push(Rec::Page { url: None, text: text(&mut rng) });
        }
        // A 304 or revisit for a URL never seen is no document.
        if rng.chance(20) {
            crawl.push(Rec::NotModified(new_url(&mut rng)));
        }
        // Shuffle a little: captures are not in URL order.
        for i in (1..crawl.len()).rev() {
            if rng.chance(30) {
                crawl.swap(i, rng.below(i + 1));
            }
        }
        // The sites as this crawl leaves them: a page is what its last
        // capture says.
        for rec in &crawl {
            match rec {
                Rec::Page { url: Some(u), text } => {
                    site.insert(u.clone(), Some(text.clone()));
                }
                Rec::Gone(u, _) | Rec::Moved(u) => {
                    site.insert(u.clone(), None);
                }
                _ => {}
            }
        }
        out.push(crawl);
    }
    out
}

/// A `WARC-Payload-Digest` of a text: 160 bits in hex, from two 64-bit
/// FNV-1a hashes and a length (any 160 bits that differ for different texts
/// serve; nothing checks them against the payload).
fn digest(text: &str) -> String {
    let fnv = |seed: u64| {
        text.bytes()
            .fold(0xcbf2_9ce4_8422_2325 ^ seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    };
    format!("sha1:{:016x}{:016x}{:08x}", fnv(0), fnv(1), text.len() as u32)
}

/// Writes a crawl as a WARC file: plain, or gzip with a member per record
/// (where an unchanged page's body is left compressed).
fn write_warc(path: &Path, crawl: &[Rec], version: usize) {
    write_warc_as(path, crawl, version, false);
}

fn write_warc_as(path: &Path, crawl: &[Rec], version: usize, gzip: bool) {
    let mut out = Vec::new();
    for (i, rec) in crawl.iter().enumerate() {
        let date = format!("2026-0{}-01T00:00:{:02}Z", version + 1, i % 60);
        let ok = |text: &str| http_response("200 OK", "Content-Type: text/plain\r\n", text.as_bytes());
        let record = match rec {
            Rec::Page { url: Some(u), text } => warc_record(
                "response",
                &[
                    ("WARC-Target-URI", u),
                    ("WARC-Date", &date),
                    ("Content-Type", "application/http; msgtype=response"),
                    ("WARC-Payload-Digest", &digest(text)),
                ],
                &ok(text),
            ),
            Rec::Page { url: None, text } => warc_record(
                "resource",
                &[("WARC-Date", &date), ("Content-Type", "text/plain")],
                text.as_bytes(),
            ),
            Rec::NotModified(u) => warc_record(
                "response",
                &[("WARC-Target-URI", u), ("WARC-Date", &date)],
                &http_response("304 Not Modified", "", b""),
            ),
            Rec::Gone(u, status) => warc_record(
                "response",
                &[("WARC-Target-URI", u), ("WARC-Date", &date)],
                &http_response(&format!("{status} Error"), "Content-Type: text/plain\r\n", b"error page"),
            ),
            Rec::Moved(u) => warc_record(
                "response",
                &[("WARC-Target-URI", u), ("WARC-Date", &date)],
                &http_response("301 Moved", "Location: /elsewhere\r\n", b""),
            ),
            Rec::Revisit(u, text) => warc_record(
                "revisit",
                &[
                    ("WARC-Target-URI", u),
                    ("WARC-Date", &date),
                    ("WARC-Payload-Digest", &digest(text)),
                    ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                ],
                &http_response("200 OK", "Content-Type: text/plain\r\n", b""),
            ),
        };
        if gzip {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut enc, &record).unwrap();
            out.extend(enc.finish().unwrap());
        } else {
            out.extend(record);
        }
    }
    fs::write(path, out).unwrap();
}

/// The flags every analysis of a case takes.
fn flags(max_df: Option<u32>, scope: &str) -> Vec<String> {
    let mut f: Vec<String> =
        ["--chunk", "lines:2", "-T", "2", "-q", "--scope", scope].iter().map(|s| s.to_string()).collect();
    if let Some(m) = max_df {
        f.extend(["--max-df".to_string(), m.to_string()]);
    }
    f
}

/// A first analysis of the model's current documents, in docID order.
fn reference(dir: &Path, state: &State, max_df: Option<u32>, scope: &str) -> PathBuf {
    let crawl: Vec<Rec> =
        state.current.values().map(|d| Rec::Page { url: d.url.clone(), text: d.text.clone() }).collect();
    let input = dir.join("reference.warc");
    write_warc(&input, &crawl, 0);
    let out = dir.join("reference");
    let mut args = vec!["run".to_string(), arg(&input), "--out".into(), arg(&out)];
    args.extend(flags(max_df, scope));
    overlap_ok(&args);
    out
}

/// `path`'s CSV rows with the docIDs of columns `ids` turned by `map`.
fn mapped_csv(path: &Path, ids: &[usize], map: &dyn Fn(u32) -> u32) -> Vec<Vec<String>> {
    let (_, rows) = read_csv(path);
    rows.into_iter()
        .map(|mut r| {
            for &i in ids {
                if !r[i].is_empty() {
                    r[i] = map(r[i].parse().unwrap()).to_string();
                }
            }
            r
        })
        .collect()
}

/// Checks one analysis against the model and the reference.
fn check(
    out: &Path,
    prev: Option<&Path>,
    state: &State,
    expected: Option<&[Expected]>,
    reference: &Path,
    what: &str,
) {
    // The documents, with their docIDs.
    let docs = read_doc_rows(out);
    let ids: Vec<u32> = docs.iter().map(|d| d.doc_id as u32).collect();
    let want: Vec<u32> = state.current.keys().copied().collect();
    assert_eq!(ids, want, "{what}: docIDs");
    for (d, m) in docs.iter().zip(state.current.values()) {
        assert_eq!(d.url, m.url.clone().unwrap_or_default(), "{what}: URL of doc {}", d.doc_id);
        assert_eq!(d.missing_for, m.missing_for, "{what}: missing_for of doc {}", d.doc_id);
        assert_eq!(d.bytes, m.text.len() as u64, "{what}: bytes of doc {}", d.doc_id);
    }
    // Row r of the reference is the r-th document in docID order.
    let to_id = |r: u32| want[r as usize];
    let ref_docs = read_docs(reference);
    let centers: Vec<Option<u32>> = docs.iter().map(|d| d.exact_center.map(|c| c as u32)).collect();
    let ref_centers: Vec<Option<u32>> =
        ref_docs.iter().map(|d| d.exact_center.map(|c| to_id(c as u32))).collect();
    assert_eq!(centers, ref_centers, "{what}: exact groups");
    let groups: Vec<Option<u32>> = docs.iter().map(|d| d.near_group.map(|g| g as u32)).collect();
    let ref_groups: Vec<Option<u32>> =
        ref_docs.iter().map(|d| d.near_group.map(|g| to_id(g as u32))).collect();
    assert_eq!(groups, ref_groups, "{what}: near_group");
    assert_eq!(
        mapped_csv(&out.join("overlap.csv"), &[], &|x| x),
        mapped_csv(&reference.join("overlap.csv"), &[0, 1], &to_id),
        "{what}: overlap.csv"
    );
    for (file, ids) in
        [("groups.csv", &[0][..]), ("aliases.csv", &[1, 2]), ("flags.csv", &[0]), ("hosts.csv", &[])]
    {
        assert_eq!(
            mapped_csv(&out.join(file), &[], &|x| x),
            mapped_csv(&reference.join(file), ids, &to_id),
            "{what}: {file}"
        );
    }
    if out.join("stop-chunks.csv").exists() {
        // A stop chunk's text is read back from its example document's
        // record, which the inputs may not give (a revisit's does not): the
        // analyses agree on the rest, and on the text where both have it.
        let mut ours = mapped_csv(&out.join("stop-chunks.csv"), &[], &|x| x);
        let mut theirs = mapped_csv(&reference.join("stop-chunks.csv"), &[3], &to_id);
        for (a, b) in ours.iter_mut().zip(theirs.iter_mut()) {
            if a[4].is_empty() || b[4].is_empty() {
                (a[4], b[4]) = (String::new(), String::new());
            }
        }
        assert_eq!(ours, theirs, "{what}: stop-chunks.csv");
    }
    let report = |dir: &Path, map: &dyn Fn(u32) -> u32| {
        let mut r: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("report.json")).unwrap()).unwrap();
        for g in r["groups"]["top"].as_array_mut().unwrap() {
            g["group"] = map(g["group"].as_u64().unwrap() as u32).into();
        }
        r
    };
    let mut ours = report(out, &|x| x);
    let since = ours.as_object_mut().unwrap().remove("since_previous").unwrap();
    let mut theirs = report(reference, &to_id);
    assert_eq!(theirs.as_object_mut().unwrap().remove("since_previous"), Some(serde_json::Value::Null));
    // The headline of this crawl's documents is a chain's own: its pages
    // kept while missing are those since_previous counts, and with this
    // crawl's documents they make the analysis's.
    let current = ours.as_object_mut().unwrap().remove("current_crawl").unwrap();
    assert_eq!(theirs.as_object_mut().unwrap().remove("current_crawl"), Some(serde_json::Value::Null));
    if !since.is_null() {
        assert_eq!(current["kept_missing"], since["pages"]["kept_missing"], "{what}: kept_missing");
        let sum = current["documents"].as_u64().unwrap() + current["kept_missing"].as_u64().unwrap();
        assert_eq!(Some(sum), ours["documents"].as_u64(), "{what}: current_crawl.documents");
    }
    // How the inputs were read is not the analysis: the chain read other
    // files than the reference's one.
    for r in [&mut ours, &mut theirs] {
        assert!(r.as_object_mut().unwrap().remove("data_quality").is_some_and(|q| q.is_object()));
    }
    assert_eq!(ours, theirs, "{what}: report.json");

    let Some(expected) = expected else {
        assert!(since.is_null(), "{what}: a first analysis has no since_previous");
        return;
    };
    let prev = prev.unwrap();
    assert_eq!(since, since_previous(prev, out, expected), "{what}: since_previous");
    let (header, rows) = read_csv(&out.join("changes.csv"));
    assert_eq!(
        header,
        [
            "doc_id",
            "url",
            "change",
            "missing_for",
            "kept",
            "center_before",
            "center_after",
            "moved_from",
            "moved_from_url",
            "chunks_before",
            "chunks_kept"
        ]
    );
    let number = |s: &str| -> Option<u32> { (!s.is_empty()).then(|| s.parse().unwrap()) };
    let got: Vec<Expected> = rows
        .iter()
        .map(|r| Expected {
            doc_id: r[0].parse().unwrap(),
            url: r[1].clone(),
            change: ["new", "moved", "unchanged", "modified", "lost", "orphaned", "redirected", "returned"]
                .into_iter()
                .find(|c| *c == r[2])
                .unwrap_or_else(|| panic!("{what}: change {:?}", r[2])),
            missing_for: r[3].parse().unwrap(),
            kept: r[4] == "true",
            moved_from: number(&r[7]).map(|id| (id, r[8].clone())),
            chunks: number(&r[9]).map(|b| (b, number(&r[10]).unwrap())),
        })
        .collect();
    assert_eq!(got, expected, "{what}: changes.csv");
    // Centers before and after are the two analyses' own.
    let center_of = |dir: &Path| -> BTreeMap<u32, Option<u32>> {
        read_doc_rows(dir).iter().map(|d| (d.doc_id as u32, d.exact_center.map(|c| c as u32))).collect()
    };
    let (before, after) = (center_of(prev), center_of(out));
    for r in &rows {
        let id: u32 = r[0].parse().unwrap();
        let opt = |s: &str| if s.is_empty() { None } else { Some(s.parse::<u32>().unwrap()) };
        assert_eq!(opt(&r[5]), before.get(&id).copied().flatten(), "{what}: center_before of {id}");
        assert_eq!(opt(&r[6]), after.get(&id).copied().flatten(), "{what}: center_after of {id}");
    }
}

/// What the report says of one document, derived here from docs.csv and
/// overlap.csv: whether it is empty, has an exact copy, its near-replica
/// group (smallest docID of its component over copies and pairs, when two
/// or more), and whether a recrawl could skip it keeping one page of each
/// exact group, and skipping near-replicas too (pages in docID order; a
/// center is kept unless a kept center shares a pair with it; copies are
/// skipped).
#[derive(Clone, Copy, Debug)]
struct Verdict {
    empty: bool,
    exact_copy: bool,
    group: Option<u32>,
    skip_exact: bool,
    skip_near: bool,
}

fn verdicts(dir: &Path) -> BTreeMap<u32, Verdict> {
    let docs = read_doc_rows(dir);
    let (_, pairs) = read_csv(&dir.join("overlap.csv"));
    let pairs: Vec<(u32, u32)> =
        pairs.iter().map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap())).collect();
    let mut parent: BTreeMap<u32, u32> = docs.iter().map(|d| (d.doc_id as u32, d.doc_id as u32)).collect();
    fn root(parent: &BTreeMap<u32, u32>, mut x: u32) -> u32 {
        while parent[&x] != x {
            x = parent[&x];
        }
        x
    }
    let mut join = |a: u32, b: u32| {
        let (ra, rb) = (root(&parent, a), root(&parent, b));
        parent.insert(ra.max(rb), ra.min(rb));
    };
    let mut exact_size: BTreeMap<u32, u32> = BTreeMap::new();
    for d in &docs {
        if let Some(c) = d.exact_center {
            join(d.doc_id as u32, c as u32);
            *exact_size.entry(c as u32).or_default() += 1;
        }
    }
    for &(i, j) in &pairs {
        join(i, j);
    }
    let mut size: BTreeMap<u32, u32> = BTreeMap::new();
    for d in &docs {
        *size.entry(root(&parent, d.doc_id as u32)).or_default() += 1;
    }
    let mut kept: BTreeSet<u32> = BTreeSet::new();
    let mut out = BTreeMap::new();
    for d in &docs {
        let id = d.doc_id as u32;
        let r = root(&parent, id);
        let v = match d.exact_center {
            None => {
                Verdict { empty: true, exact_copy: false, group: None, skip_exact: false, skip_near: false }
            }
            Some(c) => {
                let center = c as u32 == id;
                let covered = pairs.iter().any(|&(i, j)| j == id && kept.contains(&i));
                if center && !covered {
                    kept.insert(id);
                }
                Verdict {
                    empty: false,
                    exact_copy: exact_size[&(c as u32)] >= 2,
                    group: (size[&r] >= 2).then_some(r),
                    skip_exact: !center,
                    skip_near: !kept.contains(&id),
                }
            }
        };
        out.insert(id, v);
    }
    out
}

/// The report's `since_previous` of `out` carried forward from `prev`,
/// derived from the model's change rows and the two analyses' tables.
fn since_previous(prev: &Path, out: &Path, expected: &[Expected]) -> serde_json::Value {
    let (before, after) = (verdicts(prev), verdicts(out));
    let count = |c: &str| expected.iter().filter(|e| e.change == c).count();
    let kept_missing =
        expected.iter().filter(|e| e.kept && (e.change == "lost" || e.change == "orphaned")).count();
    // Promotions: a copy before, the center of a group of two or more now.
    let center_of = |dir: &Path| -> BTreeMap<u32, Option<u32>> {
        read_doc_rows(dir).iter().map(|d| (d.doc_id as u32, d.exact_center.map(|c| c as u32))).collect()
    };
    let (cb, ca) = (center_of(prev), center_of(out));
    let promotions = expected
        .iter()
        .filter(|e| {
            let id = e.doc_id;
            cb.get(&id).copied().flatten().is_some_and(|c| c != id)
                && ca.get(&id).copied().flatten() == Some(id)
                && after[&id].exact_copy
        })
        .count();
    let (mut exact, mut near) = ([0u64; 2], [0u64; 2]);
    // Groups, as sets of members, and which groups share pages.
    let members = |v: &BTreeMap<u32, Verdict>| -> BTreeMap<u32, BTreeSet<u32>> {
        let mut m: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for (&id, v) in v {
            if let Some(g) = v.group {
                m.entry(g).or_default().insert(id);
            }
        }
        m
    };
    let (gb, ga) = (members(&before), members(&after));
    for (id, b) in &before {
        let Some(a) = after.get(id) else { continue };
        if b.empty || a.empty {
            continue;
        }
        for (counts, was, is) in
            [(&mut exact, b.exact_copy, a.exact_copy), (&mut near, b.group.is_some(), a.group.is_some())]
        {
            if !was && is {
                counts[0] += 1;
            }
            if was && !is {
                counts[1] += 1;
            }
        }
    }
    let shares = |x: &BTreeSet<u32>, y: &BTreeSet<u32>| x.intersection(y).any(|id| !before[id].empty);
    let mut g = BTreeMap::<&str, u64>::new();
    for x in gb.values() {
        let matched: Vec<&BTreeSet<u32>> = ga.values().filter(|y| shares(x, y)).collect();
        match matched.len() {
            0 => *g.entry("vanished").or_default() += 1,
            1 => {
                let y = matched[0];
                if gb.values().filter(|z| shares(z, y)).count() == 1 {
                    let key = if y.len() > x.len() {
                        "grew"
                    } else if y.len() < x.len() {
                        "shrank"
                    } else if x == y {
                        "unchanged"
                    } else {
                        "changed_members"
                    };
                    *g.entry(key).or_default() += 1;
                }
            }
            _ => *g.entry("split").or_default() += 1,
        }
    }
    for y in ga.values() {
        match gb.values().filter(|x| shares(x, y)).count() {
            0 => *g.entry("appeared").or_default() += 1,
            1 => {}
            _ => *g.entry("merged").or_default() += 1,
        }
    }
    let unchanged: BTreeSet<u32> =
        expected.iter().filter(|e| e.change == "unchanged").map(|e| e.doc_id).collect();
    let prediction = |skip: &dyn Fn(&Verdict) -> bool| {
        let said: Vec<u32> = before.iter().filter(|(_, v)| skip(v)).map(|(&id, _)| id).collect();
        let right = said.iter().filter(|id| unchanged.contains(id)).count() as u64;
        let pct = if said.is_empty() {
            0.0
        } else {
            (right as f64 * 100.0 / said.len() as f64 * 10_000.0).round() / 10_000.0
        };
        serde_json::json!({"skippable": said.len(), "unchanged": right, "unchanged_percent": pct})
    };
    let moves: Vec<serde_json::Value> = expected
        .iter()
        .filter_map(|e| {
            let (from, from_url) = e.moved_from.as_ref()?;
            Some(serde_json::json!({"doc_id": e.doc_id, "url": e.url, "from_doc_id": from, "from_url": from_url}))
        })
        .take(20)
        .collect();
    let mut tenths = [0u64; 11];
    let mut shares: Vec<u64> = Vec::new();
    for (before, kept) in expected.iter().filter_map(|e| e.chunks).filter(|c| c.0 > 0) {
        tenths[(kept * 10 / before) as usize] += 1;
        shares.push(u64::from(kept) * 1_000_000 / u64::from(before));
    }
    shares.sort();
    let median = shares.get(shares.len().saturating_sub(1) / 2).map_or(0.0, |m| (m / 100) as f64 / 100.0);
    let analysis: serde_json::Value = serde_json::from_slice::<serde_json::Value>(
        &fs::read(out.join("manifest.json")).unwrap(),
    )
    .unwrap()["chain"]["analysis"]
        .clone();
    let gk = |k: &str| g.get(k).copied().unwrap_or(0);
    serde_json::json!({
        "analysis": analysis,
        "moves": moves,
        "modified": {"measured": shares.len(), "kept_tenths": tenths, "median_kept_percent": median},
        "pages": {
            "new": count("new"), "moved": count("moved"), "unchanged": count("unchanged"), "modified": count("modified"),
            "lost": count("lost"), "orphaned": count("orphaned"), "redirected": count("redirected"),
            "returned": count("returned"), "kept_missing": kept_missing,
        },
        "promotions": promotions,
        "exact": {"became": exact[0], "stopped": exact[1]},
        "near": {"became": near[0], "stopped": near[1]},
        "groups": {
            "before": gb.len(), "after": ga.len(), "unchanged": gk("unchanged"), "grew": gk("grew"),
            "shrank": gk("shrank"), "changed_members": gk("changed_members"), "split": gk("split"),
            "merged": gk("merged"), "appeared": gk("appeared"), "vanished": gk("vanished"),
        },
        "recrawl": {
            "exact": prediction(&|v: &Verdict| v.skip_exact),
            "near": prediction(&|v: &Verdict| v.skip_near),
        },
        "rules": serde_json::from_slice::<serde_json::Value>(&fs::read(out.join("report.json")).unwrap()).unwrap()
            ["since_previous"]["rules"]
            .clone(),
    })
}

/// Runs one chain and checks every analysis of it.
fn chain(seed: u64, length: usize, keep: u16, max_df: Option<u32>, calm: bool, gzip: bool, scope: &str) {
    let tmp = tempdir();
    let crawls = crawls(seed, length, calm);
    let mut state = first(&crawls[0]);
    let mut prev: Option<PathBuf> = None;
    for (k, crawl) in crawls.iter().enumerate() {
        let dir = tmp.path().join(format!("crawl-{k}"));
        fs::create_dir_all(&dir).unwrap();
        let input = dir.join(if gzip { "crawl.warc.gz" } else { "crawl.warc" });
        write_warc_as(&input, crawl, k, gzip);
        let out = dir.join("analysis");
        let mut args = vec!["run".to_string(), arg(&input), "--out".into(), arg(&out)];
        args.extend(flags(max_df, scope));
        let expected = match &prev {
            Some(p) => {
                args.extend(["--previous".into(), arg(p), "--keep-missing".into(), keep.to_string()]);
                let (next, rows) = step(&state, crawl, keep);
                state = next;
                Some(rows)
            }
            None => None,
        };
        overlap_ok(&args);
        let reference = reference(&dir, &state, max_df, scope);
        let what = format!(
            "seed {seed}, analysis {k} of {length}, --keep-missing {keep}, --max-df {max_df:?}, calm {calm}, gzip {gzip}, --scope {scope}"
        );
        check(&out, prev.as_deref(), &state, expected.as_deref(), &reference, &what);
        prev = Some(out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_chain_is_a_first_analysis_of_its_documents(
        seed in 1u64..u64::MAX,
        length in 3usize..=5,
        keep in prop_oneof![Just(0u16), Just(2u16)],
        max_df in prop_oneof![Just(None), Just(Some(3u32))],
        calm in proptest::bool::ANY,
        gzip in proptest::bool::ANY,
        scope in prop_oneof![Just("crawl"), Just("host"), Just("site")],
    ) {
        chain(seed, length, keep, max_df, calm, gzip, scope);
    }
}

/// A chain the property test found: a revisit read before the response
/// whose payload it has (a page of another URL, later in the same crawl)
/// is a copy of it, and brings its URL back under the docID it had.
#[test]
fn a_found_chain_is_a_first_analysis_of_its_documents() {
    chain(12238563155342380096, 3, 0, Some(3), false, true, "host");
}

/// Every file under `dir` with its bytes, `.overlap/` included.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(base).unwrap().to_string_lossy().into_owned(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn a_killed_update_leaves_the_previous_analysis_as_it_was_and_reruns_to_the_same_result() {
    let tmp = tempdir();
    let old = tmp.path().join("old");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&old), "-q"]);
    let before = snapshot(&old);
    let args = |out: &Path| -> Vec<String> {
        let mut a: Vec<String> = ["run", "testdata/real/wget.warc.gz", "testdata/sample.warc.gz", "--out"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend([arg(out), "--previous".into(), arg(&old), "--max-df".into(), "20".into(), "-q".into()]);
        a
    };
    let clean = tmp.path().join("clean");
    overlap_ok(args(&clean));
    assert_eq!(snapshot(&old), before, "the previous analysis is only read");
    for delay_ms in [5u64, 20, 50, 100, 200, 400] {
        let out = tmp.path().join(format!("killed-{delay_ms}"));
        let mut child = overlap_cmd(args(&out)).spawn().expect("overlap starts");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(snapshot(&old), before, "killed after {delay_ms} ms: the previous analysis is as it was");
        overlap_ok(args(&out));
        assert_same_outputs(&clean, &out, &format!("killed after {delay_ms} ms, then run again"));
    }
}

#[test]
fn a_previous_that_cannot_be_carried_forward_is_one_line_and_exit_2() {
    let tmp = tempdir();
    let old = tmp.path().join("old");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&old), "-q"]);
    let new = arg(&tmp.path().join("new"));
    let refused = |args: &[&str], says: &[&str]| {
        let mut all = vec!["run", "testdata/sample.warc.gz", "-q"];
        if !args.contains(&"--out") {
            all.extend(["--out", &new]);
        }
        all.extend_from_slice(args);
        let res = overlap(&all);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{all:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{all:?}: one line: {err}");
        for s in says {
            assert!(err.contains(s), "{all:?}: says {s:?}: {err}");
        }
    };
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    refused(&["--previous", &arg(&empty)], &[&arg(&empty), "manifest.json"]);
    let missing = tmp.path().join("missing");
    refused(&["--previous", &arg(&missing)], &[&arg(&missing), "no such analysis"]);
    refused(&["--previous", "testdata/sample.warc.gz"], &["testdata/sample.warc.gz", "not a directory"]);
    refused(&["--previous", &arg(&old), "--chunk", "words:5"], &[&arg(&old), "lines:4:4", "words:5:1"]);
    refused(&["--previous", &arg(&old), "--out", &arg(&old)], &["is the output directory"]);
    refused(&["--keep-missing", "2"], &["--previous"]);

    // An analysis whose report never finished.
    let partial = tmp.path().join("partial");
    overlap_ok(["fingerprint", "testdata/sample.warc.gz", "--out", &arg(&partial), "-q"]);
    overlap_ok(["exact", &arg(&partial), "-q"]);
    refused(&["--previous", &arg(&partial)], &[&arg(&partial), "incomplete", "pairs"]);
    // A cluster job's output has no FPrint-DocID partitions.
    let cluster = tmp.path().join("cluster");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&cluster), "-q"]);
    // As the job leaves it: no doc-ids.fpd or partitions, stamps that do
    // not name them.
    fs::remove_file(cluster.join("records/doc-ids.fpd")).unwrap();
    fs::remove_dir_all(cluster.join("records/fprint-docid")).unwrap();
    let stamp = cluster.join(".overlap/fingerprint.stamp");
    let mut st: serde_json::Value = serde_json::from_slice(&fs::read(&stamp).unwrap()).unwrap();
    let outputs: Vec<serde_json::Value> = st["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            !o.as_str().unwrap().starts_with("records/fprint-docid")
                && o.as_str() != Some("records/doc-ids.fpd")
        })
        .cloned()
        .collect();
    st["outputs"] = outputs.into();
    fs::write(&stamp, serde_json::to_vec(&st).unwrap()).unwrap();
    refused(&["--previous", &arg(&cluster)], &[&arg(&cluster), "doc-ids.fpd"]);
}

#[test]
fn pairs_of_a_changed_page_are_found_at_the_prefix_bound_and_the_rest_carried() {
    // The prefix of a changed page with exactly T shared chunks is its
    // rarest one: the pair must still be found from it alone.
    let tmp = tempdir();
    let lines = |xs: &[&str]| xs.join("\n");
    let a = lines(&["a1", "a2", "a3", "a4", "a5", "a6"]);
    let b = lines(&["b1", "b2", "b3", "b4", "b5", "b6"]);
    let c = lines(&["x1", "x2", "x3", "x4", "x5", "x6"]);
    let d = lines(&["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"]);
    let changed = lines(&["a1", "a2", "a3", "a4", "c1", "c2"]);
    let page = |u: &str, t: &str| Rec::Page { url: Some(format!("http://h.example/{u}")), text: t.into() };
    let old_crawl = [page("a", &a), page("b", &b), page("c", &c), page("d", &d)];
    let new_crawl = [page("a", &a), page("b", &changed), page("c", &c), page("d", &d)];
    let (old_in, new_in) = (tmp.path().join("old.warc"), tmp.path().join("new.warc"));
    write_warc(&old_in, &old_crawl, 0);
    write_warc(&new_in, &new_crawl, 1);
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    let flags = ["--chunk", "lines:2", "-T", "2", "-q"];
    overlap_ok([&["run", &arg(&old_in), "--out", &arg(&old)][..], &flags].concat());
    overlap_ok([&["run", &arg(&new_in), "--out", &arg(&new), "--previous", &arg(&old)][..], &flags].concat());
    let stats = read_stats(&new);
    assert_eq!(stats["pairs"]["method"], "delta", "{stats:#}");
    assert_eq!(stats["pairs"]["delta"]["touched_documents"], 1);
    assert_eq!(stats["pairs"]["delta"]["carried_pairs"], 1, "c~d comes from the previous table");
    assert_eq!(read_overlap(&new), [(0, 1, 2), (2, 3, 3)]);
}

#[test]
fn a_move_is_decided_by_the_criterion_and_a_new_criterion_decides_again() {
    // /a moves whole to /a2; /b is redirected and /b2 has four of its six
    // lines (2 of 3 chunks of lines:2, Jaccard 2/4); /c goes and /c2 shares
    // nothing with it; /d is modified, keeping one of its three chunks.
    let tmp = tempdir();
    let lines = |xs: &[&str]| xs.join("\n");
    let a = lines(&["a1", "a2", "a3", "a4"]);
    let b = lines(&["b1", "b2", "b3", "b4", "b5", "b6"]);
    let b2 = lines(&["b1", "b2", "b3", "b4", "n1", "n2"]);
    let c = lines(&["c1", "c2"]);
    let d = lines(&["d1", "d2", "d3", "d4", "d5", "d6"]);
    let d2 = lines(&["d1", "d2", "e3", "e4", "e5", "e6"]);
    let page = |u: &str, t: &str| Rec::Page { url: Some(format!("http://h.example/{u}")), text: t.into() };
    let old_crawl = [page("a", &a), page("b", &b), page("c", &c), page("d", &d)];
    let new_crawl = [
        Rec::Gone("http://h.example/a".into(), 404),
        Rec::Moved("http://h.example/b".into()),
        page("d", &d2),
        page("a2", &a),
        page("b2", &b2),
        page("c2", &lines(&["z1", "z2"])),
    ];
    let (old_in, new_in) = (tmp.path().join("old.warc"), tmp.path().join("new.warc"));
    write_warc(&old_in, &old_crawl, 0);
    write_warc(&new_in, &new_crawl, 1);
    let old = tmp.path().join("old");
    overlap_ok(["run", &arg(&old_in), "--out", &arg(&old), "--chunk", "lines:2", "-T", "2", "-q"]);
    let new = tmp.path().join("new");
    let changes = |extra: &[&str]| -> Vec<Vec<String>> {
        let (input, out, prev) = (arg(&new_in), arg(&new), arg(&old));
        let args =
            [&["run", &input, "--out", &out, "--previous", &prev, "--chunk", "lines:2", "-q"][..], extra]
                .concat();
        overlap_ok(&args);
        let (_, rows) = read_csv(&new.join("changes.csv"));
        rows.into_iter().map(|r| [&r[1..3], &r[7..11]].concat()).collect()
    };
    let row = |url: &str, change: &str, from: &str, chunks: (&str, &str)| -> Vec<String> {
        let from_url = if from.is_empty() { String::new() } else { format!("http://h.example/{from}") };
        let from_id = match from {
            "a" => "0",
            "b" => "1",
            _ => "",
        };
        [&format!("http://h.example/{url}"), change, from_id, &from_url, chunks.0, chunks.1]
            .map(str::to_string)
            .to_vec()
    };
    let none = ("", "");
    let want = |b2: &str| {
        vec![
            row("a", "lost", "", none),
            row("b", "redirected", "", none),
            row("c", "orphaned", "", none),
            row("d", "modified", "", ("3", "1")),
            row("a2", "moved", "a", none),
            if b2 == "moved" { row("b2", "moved", "b", none) } else { row("b2", "new", "", none) },
            row("c2", "new", "", none),
        ]
    };
    assert_eq!(changes(&["-T", "2"]), want("moved"));
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(new.join("report.json")).unwrap()).unwrap();
    let since = &report["since_previous"];
    assert_eq!(since["pages"]["moved"], 2);
    assert_eq!(since["moves"][1]["from_url"], "http://h.example/b");
    assert_eq!(since["modified"]["kept_tenths"][3], 1, "{since:#}");
    let html = fs::read_to_string(new.join("report.html")).unwrap();
    assert!(html.contains("moved to") && html.contains("http://h.example/b2"), "the report lists the moves");
    assert_eq!(read_stats(&new)["pairs"]["moved"], 2);
    // The same analysis under a criterion /b2 does not pass: the pairs
    // stage decides again, and the same text still moves.
    assert_eq!(changes(&["-T", "2", "--jaccard", "0.6"]), want("new"));
    assert_eq!(changes(&["-T", "3"]), want("new"));
    // The candidate stays in the working table, for a move not made.
    let (header, rows) = read_csv(&new.join("records/fingerprint-changes.csv"));
    let b2 = rows.iter().find(|r| r[1] == "http://h.example/b2").unwrap();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        [
            &b2[at("chunks")],
            &b2[at("candidate")],
            &b2[at("candidate_exact")],
            &b2[at("candidate_shared")],
            &b2[at("candidate_chunks")]
        ],
        ["3", "1", "false", "2", "3"]
    );
}
