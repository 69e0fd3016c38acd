//! The crawl audit (`overlap report`): every figure checked against a crawl
//! built with known replication (`testdata/report/crawl.jsonl`, and the
//! same pages with titles in `crawl.warc.gz`, written by
//! `scripts/make_report_testdata.py`, whose docstring lists the
//! construction), and against an independent recomputation
//! (`scripts/check_report.py`) on that crawl and on the bundled sample.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const CRAWL: &str = "testdata/report/crawl.jsonl";

/// Runs the whole pipeline on the test crawl (whole blocks of four lines
/// are chunks; T = 3) and returns the output directory.
fn run_crawl(tmp: &Path, extra: &[&str]) -> PathBuf {
    let out = tmp.join("out");
    let mut args = vec!["run", CRAWL, "--chunk", "lines:4", "-T", "3", "-q", "--out"];
    let out_arg = arg(&out);
    args.push(&out_arg);
    args.extend_from_slice(extra);
    overlap_ok(&args);
    out
}

fn report_json(dir: &Path) -> Value {
    let text = fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report.json is JSON")
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a count")).collect()
}

/// Rows of a CSV output as maps from column to value.
fn rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let (header, rows) = read_csv(path);
    rows.into_iter().map(|r| header.iter().cloned().zip(r).collect()).collect()
}

fn check_script(dir: &Path) -> std::process::Output {
    Command::new("python3")
        .arg(root().join("scripts/check_report.py"))
        .arg(dir)
        .output()
        .expect("python3 is needed to run scripts/check_report.py")
}

#[test]
fn figures_match_the_construction() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let r = report_json(&out);
    let docs = read_docs(&out);
    assert_eq!(docs.len(), 36, "the crawl has 36 documents");
    assert_eq!((r["documents"].as_u64(), r["empty_documents"].as_u64()), (Some(36), Some(1)));
    assert_eq!((r["chunk"].as_str(), r["threshold"].as_u64()), (Some("lines:4:4"), Some(3)));

    // Exact groups: the six mirrored chapters and the three URL aliases.
    let exact: BTreeSet<(usize, usize)> = docs
        .iter()
        .filter_map(|d| d.exact_center.filter(|&c| c != d.doc_id).map(|c| (c, d.doc_id)))
        .collect();
    let want: BTreeSet<(usize, usize)> =
        (0..6).map(|i| (i, i + 6)).chain([(18, 19), (20, 21), (22, 23)]).collect();
    assert_eq!(exact, want, "exact copies");
    assert_eq!(r["exact"]["groups"], 9);
    assert_eq!(r["exact"]["copies"], 9);
    // Near pairs: each chapter with its old version, the edited article,
    // and the chain X~Y~Z~W.
    let pairs: Vec<(usize, usize)> = read_overlap(&out).into_iter().map(|(i, j, _)| (i, j)).collect();
    let want: Vec<(usize, usize)> =
        (0..6).map(|i| (i, i + 12)).chain([(26, 27), (28, 29), (29, 30), (30, 31)]).collect();
    assert_eq!(pairs, want, "overlap pairs");
    assert_eq!(r["near"]["pairs"], 10);

    // Figure 1: 35 non-empty documents. Exact: 18 in pairs, 17 alone. Near:
    // 18 chapter documents in threes, 8 in twos (three URL aliases and the
    // article), the chain of 4, and 5 alone.
    let h = &r["histogram"];
    assert_eq!(u64s(&h["exact"]["documents"]), [17, 18, 0, 0, 0, 0, 0]);
    assert_eq!(u64s(&h["near"]["documents"]), [5, 8, 18, 4, 0, 0, 0]);
    assert_eq!(h["near"]["percent"][2].as_f64(), Some(51.4286), "18 of 35");
    assert_eq!(h["exact_replicated_percent"].as_f64(), Some(51.4286));

    // Savings. Exact: the 9 copies. Near, greedy in docID order: also the
    // six old chapters, the article (27), and Y and W of the chain (Z is
    // kept: only Y, which was skipped, links to it).
    let bytes = |ids: &[usize]| ids.iter().map(|&i| docs[i].bytes).sum::<u64>();
    let exact_skip = [6, 7, 8, 9, 10, 11, 19, 21, 23];
    let near_skip = [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 21, 23, 27, 29, 31];
    let s = &r["savings"];
    assert_eq!(s["exact"]["pages"].as_u64(), Some(9));
    assert_eq!(s["exact"]["bytes"].as_u64(), Some(bytes(&exact_skip)));
    assert_eq!(s["exact"]["pages_percent"].as_f64(), Some(25.0));
    assert_eq!(s["near"]["pages"].as_u64(), Some(18));
    assert_eq!(s["near"]["bytes"].as_u64(), Some(bytes(&near_skip)));
    assert!(s["rule"].as_str().is_some_and(|t| t.contains("docID order")));

    // Groups: the chain is the largest and the only chained one.
    let groups = rows(&out.join("groups.csv"));
    assert_eq!(groups.len(), 11);
    let chain = &groups[0];
    assert_eq!(
        (
            chain["group"].as_str(),
            chain["documents"].as_str(),
            chain["diameter"].as_str(),
            chain["chained"].as_str()
        ),
        ("28", "4", "3", "true")
    );
    for g in &groups[1..7] {
        assert_eq!(
            (g["documents"].as_str(), g["hosts"].as_str(), g["chained"].as_str()),
            ("3", "3", "false")
        );
        assert!(g["sample_url"].starts_with("http://docs.example.org/manual/ch"), "{g:?}");
    }
    assert_eq!(groups.iter().filter(|g| g["chained"] == "true").count(), 1);
    assert_eq!(r["near"]["chained_groups"], 1);

    // Hosts: the manual's three hosts mirror each other; the www alias
    // pair shares one page, which is not a mirror.
    let hosts: Vec<(String, String, String, String, String)> = rows(&out.join("hosts.csv"))
        .into_iter()
        .map(|h| {
            let f = |k: &str| h[k].clone();
            (f("host_a"), f("host_b"), f("replicated_a_on_b"), f("replicated_b_on_a"), f("mirror"))
        })
        .collect();
    let t = |a: &str, b: &str, x: &str, y: &str, m: &str| (a.into(), b.into(), x.into(), y.into(), m.into());
    assert_eq!(
        hosts,
        vec![
            t("docs.example.org", "mirror.example.net", "6", "6", "true"),
            t("docs.example.org", "old.example.com", "6", "6", "true"),
            t("example.com", "www.example.com", "1", "1", "false"),
            t("mirror.example.net", "old.example.com", "6", "6", "true"),
        ]
    );
    assert_eq!(r["hosts"]["mirror_pairs"], 3);
    // Per host, the most near-replicas first: the manual's hosts share
    // every chapter with each other (the old edition by near-replicas
    // only), the chain is on one host, and misc.example.org has none.
    let summary: Vec<String> = rows(&out.join("host-summary.csv"))
        .into_iter()
        .map(|h| {
            let f = |k: &str| h[k].clone();
            [
                f("host"),
                f("documents"),
                f("exact_copies"),
                f("near_replicas"),
                f("skippable"),
                f("partner_hosts"),
                f("shares_most_with"),
            ]
            .join(" ")
        })
        .collect();
    assert_eq!(
        summary,
        [
            "docs.example.org 6 6 6 0 2 mirror.example.net=6 old.example.com=6",
            "mirror.example.net 6 6 6 6 2 docs.example.org=6 old.example.com=6",
            "old.example.com 6 0 6 6 2 docs.example.org=6 mirror.example.net=6",
            "chain.example.org 4 0 4 2 0 ",
            "news.example.com 4 0 2 1 0 ",
            "blog.example.com 2 2 2 1 0 ",
            "shop.example.com 2 2 2 1 0 ",
            "example.com 1 1 1 0 1 www.example.com=1",
            "www.example.com 1 1 1 1 1 example.com=1",
            "misc.example.org 4 0 0 0 0 ",
        ]
    );
    assert_eq!(r["hosts"]["hosts"], 10);

    // Aliases and their content class.
    let aliases: Vec<(String, String, String, String)> = rows(&out.join("aliases.csv"))
        .into_iter()
        .map(|a| (a["kind"].clone(), a["doc_a"].clone(), a["doc_b"].clone(), a["content"].clone()))
        .collect();
    let a = |k: &str, x: &str, y: &str, c: &str| (k.into(), x.into(), y.into(), c.into());
    assert_eq!(
        aliases,
        vec![
            a("www", "18", "19", "exact"),
            a("scheme", "20", "21", "exact"),
            a("index", "22", "23", "exact"),
            a("query", "24", "25", "different"),
            a("query", "26", "27", "near"),
        ]
    );
    assert_eq!(r["aliases"]["query"]["near"], 1);
    assert_eq!(r["aliases"]["query"]["different"], 1);

    // Flags.
    let flags = rows(&out.join("flags.csv"));
    assert_eq!(flags.len(), 36);
    let not = |col: &str| -> Vec<usize> { (0..36).filter(|&d| flags[d][col] == "false").collect() };
    assert_eq!(not("www_unique"), [18], "http://example.com/about has a www. twin");
    assert_eq!(not("http_unique"), [20], "http://shop.example.com/cart has an https twin");
    assert_eq!(not("exact_signature_unique"), exact_skip);
    for d in [0, 6] {
        assert_eq!(flags[d]["exact_signature_copycount"], "2");
        assert_eq!(flags[d]["near_replica_count"], "2", "doc {d}: its copy and the old chapter");
    }
    assert_eq!(flags[6]["fuzzy_signature"], flags[0]["fuzzy_signature"], "identical texts");
    assert_eq!(flags[6]["fuzzy_signature_unique"], "false");
    assert_ne!(flags[32]["fuzzy_signature"], flags[33]["fuzzy_signature"]);
    assert_eq!(flags[29]["near_replica_count"], "2", "Y links X and Z");
    assert_eq!(flags[24]["near_replica_count"], "0");
    assert_eq!(flags[35]["exact_signature_unique"], "", "the empty document has no signature");
    assert_eq!(flags[35]["fuzzy_signature"], "");
    assert!(flags.iter().all(|f| f["title_unique"].is_empty()), "JSONL pages have no titles");

    // The stage's stats section.
    let stats = read_stats(&out);
    assert_eq!(stats["report"]["documents"], 36);
    assert!(stats["report"]["seconds"].is_number());
}

#[test]
fn an_independent_recomputation_agrees() {
    let tmp = tempdir();
    let crawl = run_crawl(tmp.path(), &[]);
    let mut dirs = vec![crawl.clone()];
    // The bundled sample, its ARC form, and a WARC with damaged records.
    for input in ["testdata/sample.warc.gz", "testdata/sample.arc.gz", "testdata/corrupt.warc.gz"] {
        let dir = tmp.path().join(input.replace(['/', '.'], "_"));
        overlap_ok(["run", input, "-q", "--out", &arg(&dir)]);
        dirs.push(dir);
    }
    for dir in &dirs {
        let out = check_script(dir);
        assert!(
            out.status.success(),
            "scripts/check_report.py {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The script does catch a wrong number.
    let text = fs::read_to_string(crawl.join("report.json")).unwrap();
    let tampered = text.replacen("\"copies\": 9", "\"copies\": 8", 1);
    assert_ne!(text, tampered);
    fs::write(crawl.join("report.json"), tampered).unwrap();
    let out = check_script(&crawl);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("exact.copies"));
}

/// A chain's headline counts the documents of its crawl, the pages kept
/// while missing apart; the independent recomputation agrees with every
/// figure of each analysis, docIDs with gaps included.
#[test]
fn a_chain_counts_this_crawls_documents_and_the_kept_pages_apart() {
    let tmp = tempdir();
    let first = run_crawl(tmp.path(), &[]);
    // The next crawl lost the manual's own site: its six chapters are
    // orphaned and kept for one analysis (--keep-missing 1, the default).
    let lines: Vec<String> = fs::read_to_string(root().join(CRAWL))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("//docs.example.org/"))
        .map(|l| format!("{l}\n"))
        .collect();
    let next = tmp.path().join("next.jsonl");
    fs::write(&next, lines.concat()).unwrap();
    let chain = |name: &str, previous: &Path, extra: &[&str]| {
        let out = tmp.path().join(name);
        let (next, out_arg, prev) = (arg(&next), arg(&out), arg(previous));
        let mut args = vec!["run", &next, "--chunk", "lines:4", "-T", "3", "-q", "--out", &out_arg];
        args.extend(["--previous", &prev]);
        args.extend_from_slice(extra);
        overlap_ok(&args);
        out
    };
    let second = chain("second", &first, &[]);
    let r = report_json(&second);
    let c = &r["current_crawl"];
    assert_eq!(r["documents"], 36, "the analysis holds the kept pages");
    assert_eq!((c["documents"].as_u64(), c["empty_documents"].as_u64()), (Some(30), Some(1)));
    assert_eq!(c["kept_missing"], 6);
    assert_eq!(c["kept_missing"], r["since_previous"]["pages"]["kept_missing"]);
    // The mirror's chapters are still copies of the kept pages, which
    // stand for them: 6 of the crawl's copies, 6 more skippable pages.
    assert_eq!(c["exact_copies"], 12);
    assert_eq!(c["skippable_exact"], r["savings"]["exact"]["pages"]);
    let html = fs::read_to_string(second.join("report.html")).unwrap();
    assert!(html.contains(">30</div><div class=\"l\">documents in this crawl"), "the headline card");
    assert!(html.contains("+ 6 kept while missing"));
    assert!(html.contains("30 documents of this crawl (1 empty) and 6 kept while missing"));
    let stats = read_stats(&second);
    assert_eq!(stats["report"]["current_crawl"]["kept_missing"], 6);
    // The same crawl again without keeping missing pages: the six leave,
    // and the docIDs start at 6.
    let third = chain("third", &second, &["--keep-missing", "0"]);
    let r = report_json(&third);
    assert_eq!((r["documents"].as_u64(), r["current_crawl"]["kept_missing"].as_u64()), (Some(30), Some(0)));
    assert_eq!(read_doc_rows(&third)[0].doc_id, 6);
    // A first analysis has no such section.
    assert!(report_json(&first)["current_crawl"].is_null());
    for dir in [&first, &second, &third] {
        let check = check_script(dir);
        assert!(
            check.status.success(),
            "scripts/check_report.py {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

/// A listed group names the hosts it spans, in order of their first
/// document, with its documents on each.
#[test]
fn groups_are_summarized_by_the_hosts_they_span() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let r = report_json(&out);
    // The first chapter on the manual's site, its mirror and its old
    // edition (the chain on one host is the largest group).
    let top =
        r["groups"]["top"].as_array().unwrap().iter().find(|g| g["group"] == 0).expect("group 0 is listed");
    assert_eq!((top["documents"].as_u64(), top["hosts"].as_u64()), (Some(3), Some(3)));
    assert_eq!(r["groups"]["top"][0]["first_hosts"][0]["host"], "chain.example.org");
    let named: Vec<(String, u64)> = top["first_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap().to_string(), h["documents"].as_u64().unwrap()))
        .collect();
    let want = ["docs.example.org", "mirror.example.net", "old.example.com"].map(|h| (h.to_string(), 1));
    assert_eq!(named, want);
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(
        "<strong>3 hosts</strong><br><span class=\"muted\">docs.<wbr>example.<wbr>org (1), mirror.<wbr>example.<wbr>net (1), \
         old.<wbr>example.<wbr>com (1)</span>"
    ));
}

#[test]
fn outputs_do_not_depend_on_threads_and_a_rerun_is_up_to_date() {
    let tmp = tempdir();
    let one = run_crawl(&tmp.path().join("one"), &["--threads", "1"]);
    let two = run_crawl(&tmp.path().join("two"), &["--threads", "2"]);
    for file in ["report.json", "report.html", "groups.csv", "hosts.csv", "aliases.csv", "flags.csv"] {
        assert_eq!(fs::read(one.join(file)).unwrap(), fs::read(two.join(file)).unwrap(), "{file}");
    }
    let before = fs::metadata(one.join("report.json")).unwrap().modified().unwrap();
    overlap_ok(["report", &arg(&one), "-q"]);
    assert_eq!(fs::metadata(one.join("report.json")).unwrap().modified().unwrap(), before, "up to date");
    // Another QUANT_RATE redoes the stage and may change only the fuzzy columns.
    let flags = fs::read_to_string(one.join("flags.csv")).unwrap();
    overlap_ok(["report", &arg(&one), "-q", "--quant-rate", "0.5", "--min-token-len", "4"]);
    assert_eq!(report_json(&one)["flags"]["quant_rate"].as_f64(), Some(0.5));
    assert_ne!(fs::read_to_string(one.join("flags.csv")).unwrap(), flags);
    // Without the fuzzy signatures the inputs are not read again; the
    // other columns stay.
    overlap_ok(["report", &arg(&one), "-q", "--no-fuzzy"]);
    let r = report_json(&one);
    assert_eq!(r["flags"]["fuzzy_signatures"], 0);
    let without = rows(&one.join("flags.csv"));
    let with = rows(&two.join("flags.csv"));
    for (a, b) in without.iter().zip(&with) {
        assert_eq!(a["fuzzy_signature"], "");
        assert_eq!(a["fuzzy_signature_unique"], "");
        assert_eq!(
            (&a["exact_signature_copycount"], &a["near_replica_count"]),
            (&b["exact_signature_copycount"], &b["near_replica_count"])
        );
    }
}

#[test]
fn the_html_report_is_self_contained() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("<svg"));
    assert_eq!(html.matches("<rect").count(), 6, "one bar per non-empty bin: 2 exact, 4 near");
    for fetch in ["src=", "url(", "@import", "<link", "<iframe"] {
        assert!(!html.contains(fetch), "report.html must not fetch anything ({fetch})");
    }
    // Its one script is inline, and it is the last thing in the page.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("<script>\n") && html.trim_end().ends_with("</script>\n</body>\n</html>"));
    // Links go to the page's own sections or to the crawl's http(s) URLs.
    for (at, _) in html.match_indices("href=\"") {
        let target = &html[at + 6..];
        assert!(
            target.starts_with('#') || target.starts_with("http://") || target.starts_with("https://"),
            "{}",
            &target[..40.min(target.len())]
        );
    }
    assert!(html.contains("mirror.example.net") && html.contains(">http://chain.example.org/x</a>"));
    // One alias example per kind, the most similar content first.
    assert!(html.contains(">https://shop.example.com/cart</a>: exact"));
    assert!(html.contains(">http://news.example.com/article?page=1</a>: near"));
}

/// The text of `html` outside tags, scripts and styles, each piece with
/// whether it lies inside an `<a rel="noreferrer">`.
fn text_runs(html: &str) -> Vec<(String, bool)> {
    let mut runs = Vec::new();
    let mut links: Vec<bool> = Vec::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        runs.push((rest[..lt].to_string(), links.last() == Some(&true)));
        let gt = lt + rest[lt..].find('>').expect("tags close");
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '/').collect();
        match name.as_str() {
            "script" | "style" => rest = &rest[rest.find(&format!("</{name}>")).expect("closed")..],
            "a" => links.push(tag.contains(" rel=\"noreferrer\"") && tag.contains(" href=\"http")),
            "/a" => {
                links.pop();
            }
            _ => {}
        }
    }
    runs.push((rest.to_string(), false));
    runs
}

/// Every group of groups.csv (up to the page's cap of 100) is in
/// report.html with its id, and opens to its first 50 documents, those
/// docs.csv's near_group puts in it, smallest docID first; every URL the
/// page shows is a link that sends no referrer.
#[test]
fn the_html_report_lists_every_group_with_its_members_and_links_every_url() {
    let tmp = tempdir();
    // 60 copies of one page make a group larger than the members listed.
    let big = tmp.path().join("big.jsonl");
    let mut pages: Vec<JsonDoc> = (0..60)
        .map(|i| JsonDoc {
            url: format!("https://copies.example/p{i}"),
            text: "one\ntext\nof\nfour lines".into(),
        })
        .collect();
    pages.push(JsonDoc { url: "javascript:alert(1)".into(), text: "not a link\nat all".into() });
    pages.push(JsonDoc { url: "https://copies.example/other".into(), text: "not a link\nat all".into() });
    write_jsonl(&big, &pages);
    let mut dirs = vec![run_crawl(tmp.path(), &[])];
    for (name, input) in [("sample", "testdata/sample.warc.gz"), ("big", big.to_str().unwrap())] {
        let dir = tmp.path().join(name);
        overlap_ok(["run", input, "-T", "3", "-q", "--out", &arg(&dir)]);
        dirs.push(dir);
    }
    for dir in &dirs {
        let html = fs::read_to_string(dir.join("report.html")).unwrap();
        let groups = rows(&dir.join("groups.csv"));
        assert!(!groups.is_empty() && groups.len() <= 100, "test data: {} groups", groups.len());
        let docs = read_docs(dir);
        for g in &groups {
            let id: usize = g["group"].parse().unwrap();
            let start = format!("<tr><td class=\"n\" data-v=\"{id}\">{id}</td><td class=\"url\">");
            let at =
                html.find(&start).unwrap_or_else(|| panic!("{}: group {id} is not listed", dir.display()));
            let row = &html[at..at + html[at..].find("</tr>").unwrap()];
            let listed: Vec<usize> = row
                .split("<span class=\"id\">#")
                .skip(1)
                .map(|s| s[..s.find(|c: char| !c.is_ascii_digit()).unwrap()].parse().unwrap())
                .collect();
            let members: Vec<usize> =
                docs.iter().filter(|d| d.near_group == Some(id)).map(|d| d.doc_id).collect();
            assert_eq!(members.len().to_string(), g["documents"], "group {id}");
            assert_eq!(listed, members[..members.len().min(50)], "group {id}'s members in {}", dir.display());
            if members.len() > 50 {
                let more =
                    format!("and {} more: the rows of docs.csv whose near_group is {id}", members.len() - 50);
                assert!(row.contains(&more), "{row}");
            }
        }
        let urls: Vec<String> = text_runs(&html)
            .into_iter()
            .filter(|(text, _)| text.contains("http://") || text.contains("https://"))
            .map(|(text, link)| {
                assert!(link, "{}: a URL that is not a link: {text}", dir.display());
                text
            })
            .collect();
        assert!(urls.len() > groups.len(), "{}: {} URLs", dir.display(), urls.len());
        assert!(!html.contains("href=\"javascript"), "only http(s) URLs are links");
    }
    let html = fs::read_to_string(dirs[2].join("report.html")).unwrap();
    assert!(html.contains("and 10 more"), "the group of 60 lists 50");
    assert!(html.contains("javascript:alert(1)"), "shown as text");
}

#[test]
fn damaged_inputs_are_errors_naming_file_and_line() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let table = fs::read_to_string(out.join("overlap.csv")).unwrap();
    fs::write(out.join("overlap.csv"), table.replacen("1,13,8", "1,x,8", 1)).unwrap();
    fs::remove_file(out.join(".overlap/report.stamp")).unwrap();
    let res = overlap(["report", &arg(&out), "-q"]);
    assert_eq!(res.status.code(), Some(2));
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(err.contains("overlap.csv line 3") && err.lines().count() == 1, "{err}");

    let empty = tmp.path().join("nothing");
    fs::create_dir(&empty).unwrap();
    let res = overlap(["report", &arg(&empty), "-q"]);
    assert_eq!(res.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&res.stderr).contains("pairs"));
}

#[test]
fn runs_with_other_chunkings_are_shown_side_by_side() {
    let tmp = tempdir();
    let a = run_crawl(&tmp.path().join("a"), &[]);
    // Whole documents as one chunk: only exact copies share a chunk, and
    // T = 1 makes no pair (copies are removed before counting).
    let b = tmp.path().join("b");
    overlap_ok(["run", CRAWL, "--chunk", "doc", "-T", "1", "-q", "--out", &arg(&b)]);
    overlap_ok(["report", &arg(&a), "-q", "--compare", &arg(&b)]);
    let r = report_json(&a);
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0]["chunk"].as_str(), runs[1]["chunk"].as_str()), (Some("lines:4:4"), Some("doc")));
    assert_eq!(u64s(&runs[0]["near"]["documents"]), [5, 8, 18, 4, 0, 0, 0]);
    assert_eq!(
        u64s(&runs[1]["near"]["documents"]),
        u64s(&r["histogram"]["exact"]["documents"]),
        "doc chunks: exact only"
    );
    assert_eq!(runs[1]["savings_near"]["pages"], 9);
    let html = fs::read_to_string(a.join("report.html")).unwrap();
    assert!(html.contains("near-replicas: doc, F &gt;= 1"), "the compared run and its criterion");
    assert!(check_script(&a).status.success());

    // A run over another crawl is refused.
    let other = tmp.path().join("other");
    overlap_ok(["run", "testdata/sample.warc.gz", "-q", "--out", &arg(&other)]);
    let res = overlap(["report", &arg(&a), "-q", "--compare", &arg(&other)]);
    assert_eq!(res.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&res.stderr).contains("other inputs"));
}

#[test]
fn the_warc_crawl_gives_the_same_replication_and_titles_per_host() {
    let tmp = tempdir();
    let jsonl = run_crawl(&tmp.path().join("jsonl"), &[]);
    let warc = tmp.path().join("warc");
    overlap_ok([
        "run",
        "testdata/report/crawl.warc.gz",
        "--chunk",
        "lines:4",
        "-T",
        "3",
        "-q",
        "--out",
        &arg(&warc),
    ]);
    // The same texts: the same tables, whatever the payload bytes.
    for file in ["overlap.csv", "groups.csv", "hosts.csv", "aliases.csv"] {
        assert_eq!(fs::read(jsonl.join(file)).unwrap(), fs::read(warc.join(file)).unwrap(), "{file}");
    }
    let (a, b) = (report_json(&jsonl), report_json(&warc));
    assert_eq!(a["histogram"], b["histogram"]);
    assert_eq!(a["savings"]["near"]["pages"], b["savings"]["near"]["pages"]);
    // Titles are compared within a host: the manual's chapters share
    // titles across hosts only; the https cart page and two misc pages
    // repeat a title on their host; the empty page has none.
    let flags = rows(&warc.join("flags.csv"));
    let not_unique: Vec<usize> = (0..flags.len()).filter(|&d| flags[d]["title_unique"] == "false").collect();
    assert_eq!(not_unique, [21, 33, 34]);
    assert_eq!((flags[0]["title_unique"].as_str(), flags[6]["title_unique"].as_str()), ("true", "true"));
    assert_eq!(flags[35]["title_unique"], "");
    assert_eq!(b["flags"]["title_not_unique"], 3);
    assert!(check_script(&warc).status.success());
}

/// The fuzzy signatures the fingerprint stage stores are the ones the
/// report computes from the inputs read again, and with them stored the
/// report reads no text.
#[test]
fn stored_fuzzy_signatures_equal_those_of_the_texts_read_again() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let stats = read_stats(&out);
    assert_eq!(stats["report"]["texts_read"], 0, "the stored signatures were used");
    let stored = fs::read(out.join("flags.csv")).unwrap();
    let signed = rows(&out.join("flags.csv")).iter().filter(|r| !r["fuzzy_signature"].is_empty()).count();
    assert!(signed >= 30, "test data: {signed} documents signed");

    // Without them (as in an output directory of an earlier version), and
    // with the report no longer up to date, the texts are read again.
    fs::remove_file(out.join("records/fuzzy.fpd")).unwrap();
    fs::remove_file(out.join(".overlap").join("report.stamp")).unwrap();
    overlap_ok(["report", "-q", &arg(&out)]);
    let stats = read_stats(&out);
    assert_eq!(stats["report"]["texts_read"], signed as u64, "every signed text was read again");
    assert_eq!(fs::read(out.join("flags.csv")).unwrap(), stored);
}

/// Each document's near-replica group, recomputed here: the components of
/// the graph linking every document to its exact center and every
/// Overlap-table pair, named by their smallest docID; `None` alone.
fn components(docs: &[DocRow], pairs: &[(usize, usize, usize)]) -> Vec<Option<usize>> {
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut parent: Vec<usize> = (0..docs.len()).collect();
    let links = docs.iter().filter_map(|d| d.exact_center.map(|c| (c, d.doc_id)));
    for (a, b) in links.chain(pairs.iter().map(|&(i, j, _)| (i, j))) {
        let (a, b) = (find(&mut parent, a), find(&mut parent, b));
        parent[a.max(b)] = a.min(b);
    }
    let roots: Vec<usize> = (0..docs.len()).map(|d| find(&mut parent, d)).collect();
    let mut size = vec![0usize; docs.len()];
    for &r in &roots {
        size[r] += 1;
    }
    // With the smaller root kept, a root is its component's smallest docID.
    roots.iter().map(|&r| (size[r] >= 2).then_some(r)).collect()
}

/// docs.csv's near_group against the groups recomputed from the Overlap
/// table and the exact centers, and against groups.csv's own rows.
fn assert_near_groups(dir: &Path) {
    let docs = read_docs(dir);
    let got: Vec<Option<usize>> = docs.iter().map(|d| d.near_group).collect();
    assert_eq!(got, components(&docs, &read_overlap(dir)), "{}: near_group", dir.display());
    let groups = rows(&dir.join("groups.csv"));
    let mut sizes: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for g in got.iter().flatten() {
        *sizes.entry(*g).or_default() += 1;
    }
    let listed: std::collections::BTreeMap<usize, usize> =
        groups.iter().map(|g| (g["group"].parse().unwrap(), g["documents"].parse().unwrap())).collect();
    assert_eq!(sizes, listed, "{}: groups.csv's groups and sizes", dir.display());
}

#[test]
fn near_group_names_each_documents_group_in_groups_csv() {
    let tmp = tempdir();
    let crawl = run_crawl(tmp.path(), &[]);
    assert_near_groups(&crawl);
    let docs = read_docs(&crawl);
    assert_eq!((docs[30].near_group, docs[31].near_group), (Some(28), Some(28)), "the chain X~Y~Z~W");
    assert_eq!(docs[35].near_group, None, "the empty page");
    assert_eq!(docs[32].near_group, None, "a page alone");
    let sample = tmp.path().join("sample");
    overlap_ok([
        "run",
        "testdata/sample.warc.gz",
        "testdata/sample.arc.gz",
        "-T",
        "3",
        "-q",
        "--out",
        &arg(&sample),
    ]);
    assert_near_groups(&sample);
}

/// near_group is never older than the tables it comes from: a pairs stage
/// that runs empties it, an exact stage writes it empty, and the report
/// fills it in again even when its own key did not change.
#[test]
fn near_group_follows_the_stages_that_change_it() {
    let tmp = tempdir();
    let out = run_crawl(tmp.path(), &[]);
    let full = fs::read(out.join("docs.csv")).unwrap();
    let groups = |dir: &Path| read_docs(dir).iter().filter(|d| d.near_group.is_some()).count();
    assert_eq!(groups(&out), 30);

    overlap_ok(["pairs", &arg(&out), "-T", "40", "-q"]);
    assert_eq!(groups(&out), 0, "the pairs stage empties near_group");
    overlap_ok(["report", &arg(&out), "-q"]);
    assert_near_groups(&out);
    assert_eq!(groups(&out), 18, "at T = 40 only the exact groups are left");

    overlap_ok(["pairs", &arg(&out), "-T", "3", "-q"]);
    overlap_ok(["report", &arg(&out), "-q"]);
    assert!(fs::read(out.join("docs.csv")).unwrap() == full);

    // The exact stage rebuilding docs.csv under the same flags leaves the
    // pairs stage up to date, and the report's key as it was: the report
    // runs all the same.
    fs::remove_file(out.join("docs.csv")).unwrap();
    overlap_ok(["exact", &arg(&out), "-q"]);
    assert_eq!(groups(&out), 0);
    overlap_ok(["pairs", &arg(&out), "-q", "-T", "3"]);
    overlap_ok(["report", &arg(&out), "-q"]);
    assert!(fs::read(out.join("docs.csv")).unwrap() == full);
    // And a report that is up to date leaves docs.csv alone.
    let before = fs::metadata(out.join("docs.csv")).unwrap().modified().unwrap();
    overlap_ok(["report", &arg(&out), "-q"]);
    assert_eq!(fs::metadata(out.join("docs.csv")).unwrap().modified().unwrap(), before);
}

/// report.html's data quality names each corrupt record stats.json
/// samples by file and offset, and the per-input counts add up.
#[test]
fn the_data_quality_section_lists_the_corrupt_records() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", "testdata/sample.warc.gz", "testdata/corrupt.warc.gz", "-q", "--out", &arg(&out)]);
    // The page's text, without the places a path may wrap.
    let html = fs::read_to_string(out.join("report.html")).unwrap().replace("<wbr>", "");
    let fp = &read_stats(&out)["fingerprint"];
    let samples = fp["corrupt"].as_array().unwrap();
    assert!(samples.len() >= 3, "test data: {fp:#}");
    for c in samples {
        let at = format!("<code>{}:{}</code>", c["file"].as_str().unwrap(), c["offset"]);
        assert!(at.contains("testdata/corrupt.warc.gz:"), "{at}");
        assert!(html.contains(&at), "{at} is not in report.html");
        assert!(html.contains(&format!("<code>{}</code>", c["reason"].as_str().unwrap())));
    }
    assert!(html.contains("<strong>Not every record was read:</strong>"), "the alert");
    let q = &report_json(&out)["data_quality"];
    assert_eq!(q["corrupt_records"], fp["corrupt_records"]);
    assert_eq!((q["inputs"].as_u64(), q["inputs_with_corrupt_records"].as_u64()), (Some(2), Some(1)));
    // Each input's records are its documents and its skipped records, and
    // the inputs' skips add up to the whole run's, reason by reason.
    let mut by_reason: std::collections::BTreeMap<String, u64> = Default::default();
    for input in fp["inputs"].as_array().unwrap() {
        let skipped = input["skipped_records"].as_object().unwrap();
        let n: u64 = skipped.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(input["records"].as_u64().unwrap(), input["documents"].as_u64().unwrap() + n, "{input:#}");
        for (k, v) in skipped {
            *by_reason.entry(k.clone()).or_default() += v.as_u64().unwrap();
        }
    }
    assert_eq!(by_reason, nonzero_skipped(fp));
    assert_eq!(fp["inputs"][1]["corrupt_records"], fp["corrupt_records"]);
    assert_eq!(q["skipped_records"], serde_json::to_value(&by_reason).unwrap());

    // A run that read every record says so, and raises no alert.
    let clean = run_crawl(tmp.path(), &[]);
    let html = fs::read_to_string(clean.join("report.html")).unwrap();
    assert!(!html.contains("Not every record was read") && html.contains("No corrupt record"));
    assert_eq!(report_json(&clean)["data_quality"]["corrupt_records"], 0);
}

/// The alias counts by content are aliases.csv's, and the summaries lead
/// with the aliases of the same content.
#[test]
fn aliases_are_counted_by_content_and_the_real_ones_lead() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let run =
        overlap_ok(["run", CRAWL, "--chunk", "lines:4", "-T", "3", "-q", "--stats", "--out", &arg(&out)]);
    let r = report_json(&out);
    let aliases = rows(&out.join("aliases.csv"));
    let count = |kind: Option<&str>, content: &str| -> u64 {
        let of_kind = |a: &&std::collections::BTreeMap<String, String>| kind.is_none_or(|k| a["kind"] == k);
        aliases.iter().filter(of_kind).filter(|a| content == "pairs" || a["content"] == content).count()
            as u64
    };
    for kind in ["www", "scheme", "index", "query"] {
        for content in ["pairs", "exact", "near", "different", "empty"] {
            assert_eq!(
                r["aliases"][kind][content].as_u64(),
                Some(count(Some(kind), content)),
                "{kind} {content}"
            );
        }
    }
    for content in ["pairs", "exact", "near", "different", "empty"] {
        assert_eq!(r["aliases"]["total"][content].as_u64(), Some(count(None, content)), "total {content}");
    }
    let same = count(None, "exact") + count(None, "near");
    assert_eq!((r["aliases"]["same_content"].as_u64(), same), (Some(same), 4));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("4 URL aliases with the same content (1 more URL pair whose content differs)"),
        "{stderr}"
    );
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains(
            "<strong>4 URL aliases</strong> with the same content: 3 exact copies and 1 near-replica"
        )
    );
    let stats = &read_stats(&out)["report"];
    assert_eq!((stats["alias_pairs"].as_u64(), stats["alias_same_content"].as_u64()), (Some(5), Some(4)));
}

/// Numeric leaves of a JSON value by path, lists by their length.
fn numbers(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| numbers(v, format!("{path}.{k}"), out)),
        Value::Array(a) => out.push((format!("{path}[len]"), a.len() as f64)),
        Value::Number(n) => out.push((path, n.as_f64().unwrap())),
        _ => {}
    }
}

/// The sample analysed into `dir/one`, and `scripts/tile_outdir.py`'s
/// three tiles of it (with `flags`) in `dir/three`.
fn sample_tiled_three_times(dir: &Path, flags: &[&str]) -> (PathBuf, PathBuf) {
    let (one, three) = (dir.join("one"), dir.join("three"));
    overlap_ok(["run", "testdata/sample.warc.gz", "-q", "--out", &arg(&one)]);
    let tiled = Command::new("python3")
        .arg(root().join("scripts/tile_outdir.py"))
        .args(flags)
        .args([&one, &three])
        .arg("3")
        .output()
        .expect("python3 is needed to run scripts/tile_outdir.py");
    assert!(tiled.status.success(), "{}", String::from_utf8_lossy(&tiled.stderr));
    (one, three)
}

#[test]
fn a_crawl_tiled_three_times_has_three_times_every_count() {
    // scripts/tile_outdir.py makes the tables of a crawl K times larger
    // (hosts renamed, docIDs offset per tile) to measure the report at
    // sizes no crawl at hand has; the report of the copy must then be K
    // times the crawl's, count by count, with its shares unchanged.
    let tmp = tempdir();
    let (one, three) = sample_tiled_three_times(tmp.path(), &[]);
    overlap_ok(["report", &arg(&three), "-q", "--memory", "32M"]);

    let (mut a, mut b) = (Vec::new(), Vec::new());
    numbers(&report_json(&one), String::new(), &mut a);
    numbers(&report_json(&three), String::new(), &mut b);
    assert_eq!(a.iter().map(|(p, _)| p).collect::<Vec<_>>(), b.iter().map(|(p, _)| p).collect::<Vec<_>>());
    // Parameters, shares, the largest group, the histogram's bins, the
    // lists cut to a length (the largest groups) and the fingerprint
    // stage's record counts (the tiles are not read) stay.
    let same = |p: &str| {
        p.contains("percent")
            || p.starts_with(".histogram.") && p.ends_with("[len]")
            || p.starts_with(".data_quality.")
            || [
                ".threshold",
                ".near.largest_group",
                ".flags.min_token_len",
                ".flags.quant_rate",
                ".groups.top[len]",
                ".runs[len]",
                // Warnings are said once, from shares.
                ".warnings[len]",
            ]
            .contains(&p)
    };
    let mut tripled = 0;
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        if same(path) {
            assert_eq!(x, y, "{path}");
        } else {
            assert_eq!(*y, 3.0 * x, "{path}");
            tripled += usize::from(*x > 0.0);
        }
    }
    assert!(tripled >= 15, "{tripled} counts tripled");
    let one_report = report_json(&one);
    for key in ["/near/pairs", "/hosts/mirror_pairs", "/flags/fuzzy_signature_not_unique"] {
        assert!(one_report.pointer(key).and_then(Value::as_u64).unwrap() > 0, "{key}");
    }
    for (path, x) in a.iter().filter(|(p, _)| p.starts_with(".histogram.") && p.ends_with(".documents[len]"))
    {
        let key = path.trim_end_matches("[len]").replace('.', "/");
        let (x_counts, y_counts) =
            (u64s(one_report.pointer(&key).unwrap()), u64s(report_json(&three).pointer(&key).unwrap()));
        assert_eq!(x_counts.len() as f64, *x);
        assert_eq!(y_counts, x_counts.iter().map(|c| 3 * c).collect::<Vec<_>>(), "{path}");
    }
    for table in ["groups.csv", "hosts.csv", "host-summary.csv", "aliases.csv"] {
        let (rows_one, rows_three) =
            (read_csv(&one.join(table)).1.len(), read_csv(&three.join(table)).1.len());
        assert_eq!(rows_three, 3 * rows_one, "{table}");
    }
}

#[test]
fn a_fingerprinted_crawl_tiled_three_times_has_three_times_every_exact_and_pair_count() {
    // With --from fingerprint the script tiles what the exact and pairs
    // stages read, to measure them at sizes no crawl at hand has: each tile
    // an independent copy, so their counts are three times the crawl's.
    let tmp = tempdir();
    let (one, three) = sample_tiled_three_times(tmp.path(), &["--from", "fingerprint"]);
    overlap_ok(["exact", &arg(&three), "-q", "--memory", "32M"]);
    overlap_ok(["pairs", &arg(&three), "-q", "--memory", "32M"]);

    let stats = |dir: &Path| -> Value {
        serde_json::from_str(&fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap()
    };
    let (a, b) = (stats(&one), stats(&three));
    let tripled = [
        "/exact/documents",
        "/exact/groups",
        "/exact/documents_in_groups",
        "/exact/copies_removed",
        "/exact/empty_documents",
        "/pairs/pairs_emitted",
        "/pairs/pairs_generated",
        "/pairs/distinct_pairs",
        "/pairs/shared_fingerprints",
        "/pairs/fingerprints_removed",
    ];
    for key in tripled {
        let (x, y) = (
            a.pointer(key).and_then(Value::as_u64).unwrap(),
            b.pointer(key).and_then(Value::as_u64).unwrap(),
        );
        assert!(x > 0, "{key}");
        assert_eq!(y, 3 * x, "{key}");
    }
    for key in ["/exact/largest_group", "/pairs/largest_fingerprint_group"] {
        assert_eq!(a.pointer(key), b.pointer(key), "{key}");
    }
    // overlap.csv: the crawl's rows, then each again with its docIDs
    // offset by the crawl's documents per tile.
    let n = a.pointer("/exact/documents").and_then(Value::as_u64).unwrap();
    let (_, rows_one) = read_csv(&one.join("overlap.csv"));
    let (_, rows_three) = read_csv(&three.join("overlap.csv"));
    let shifted = |t: u64| {
        rows_one.iter().map(move |r| {
            let mut r = r.clone();
            for id in &mut r[..2] {
                *id = (id.parse::<u64>().unwrap() + t * n).to_string();
            }
            r
        })
    };
    assert_eq!(rows_three, (0..3).flat_map(shifted).collect::<Vec<_>>());
}
