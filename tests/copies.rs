//! Copies declared by the WARC file: responses with the same payload digest
//! (not extracted again), revisit records, and what is not a document:
//! redirects (listed in redirects.csv) and segmented records.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

fn response(url: &str, date: &str, digest: Option<&str>, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut fields =
        vec![("WARC-Target-URI", url), ("WARC-Date", date), ("Content-Type", "application/http")];
    if let Some(d) = digest {
        fields.push(("WARC-Payload-Digest", d));
    }
    warc_record(
        "response",
        &fields,
        &http_response("200 OK", &format!("Content-Type: {content_type}\r\n"), body),
    )
}

fn page(name: &str) -> Vec<u8> {
    fs::read(testdata(&format!("src/rust/1.95.0/{name}"))).unwrap()
}

// sha1 of two payloads, as base32 and base16 (values need not be the real
// sha1 of the bodies: digests are trusted as written).
const D1_B32: &str = "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N";
const D1_B16: &str = "SHA1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d";
const D2: &str = "sha1:2JHYZ6U3KAGHNM6HP5DLSNW6I3MYD4GY";
const D_IMG: &str = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const D_UNSEEN: &str = "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

/// A crawl with every kind of declared copy. The first part (documents
/// 0..=3 and the skips between them) reads the same with and without the
/// digests; revisits come after it.
fn crawl(with_digests: bool) -> Vec<u8> {
    let d = |digest: &'static str| with_digests.then_some(digest);
    let take = page("std/mem/fn.take.html");
    let swap = page("std/mem/fn.swap.html");
    let replace = page("std/mem/fn.replace.html");
    [
        // 0: original.
        response("http://a.example/take", "2024-01-01T00:00:00Z", d(D1_B32), "text/html", &take),
        // Not a document, then the same payload again: skipped alike.
        response("http://a.example/logo", "2024-01-01T00:00:01Z", d(D_IMG), "image/png", b"\x89PNG...."),
        response("http://b.example/logo", "2024-01-01T00:00:02Z", d(D_IMG), "image/png", b"\x89PNG...."),
        // 1: same digest (base16), same type: a copy of 0, not extracted.
        response("http://mirror.example/take", "2024-01-01T00:00:03Z", d(D1_B16), "text/html", &take),
        // 2: same digest as text/plain: another document.
        response("http://c.example/take.txt", "2024-01-01T00:00:04Z", d(D1_B32), "text/plain", &take),
        // 3: no digest; revisited below by URI and date.
        response("http://a.example/swap", "2024-01-01T00:00:05Z", None, "text/html", &swap),
        // A redirect, relative.
        warc_record(
            "response",
            &[("WARC-Target-URI", "http://a.example/old"), ("Content-Type", "application/http")],
            &http_response("301 Moved Permanently", "Location: ../new/take\r\n", b""),
        ),
        // A segmented record: its first segment and its continuation.
        warc_record(
            "response",
            &[("WARC-Target-URI", "http://big.example/"), ("WARC-Segment-Number", "1")],
            &http_response("200 OK", "Content-Type: text/html\r\n", b"<p>first part"),
        ),
        warc_record(
            "continuation",
            &[("WARC-Segment-Number", "2"), ("WARC-Segment-Total-Length", "100")],
            b" second part</p>",
        ),
        // 4: another page (digest D2), so later revisits are not the last.
        response("http://a.example/replace", "2024-01-01T00:00:06Z", d(D2), "text/html", &replace),
        // 5: revisit of 0 by digest, with the new capture's HTTP header.
        warc_record(
            "revisit",
            &[
                ("WARC-Target-URI", "<http://a.example/take>"),
                ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                ("WARC-Payload-Digest", D1_B16),
                ("WARC-Refers-To-Target-URI", "http://a.example/take"),
                ("WARC-Refers-To-Date", "2024-01-01T00:00:00Z"),
            ],
            &http_response("200 OK", "Content-Type: text/html\r\n", b""),
        ),
        // 6: revisit of 3 by URI and date (3 has no digest), no block.
        warc_record(
            "revisit",
            &[
                ("WARC-Target-URI", "http://www.a.example/swap"),
                ("WARC-Refers-To-Target-URI", "<http://a.example/swap>"),
                ("WARC-Refers-To-Date", "2024-01-01T00:00:05Z"),
            ],
            b"",
        ),
        // Revisit of something never read: unresolved.
        warc_record(
            "revisit",
            &[("WARC-Target-URI", "http://z.example/"), ("WARC-Payload-Digest", D_UNSEEN)],
            b"",
        ),
        // Revisit of the image: skipped as the image was.
        warc_record(
            "revisit",
            &[("WARC-Target-URI", "http://c.example/logo"), ("WARC-Payload-Digest", D_IMG)],
            b"",
        ),
        // Revisit whose new capture was a 404: not a copy.
        warc_record(
            "revisit",
            &[("WARC-Target-URI", "http://a.example/take"), ("WARC-Payload-Digest", D1_B32)],
            &http_response("404 Not Found", "", b""),
        ),
    ]
    .concat()
}

fn run(input: &Path, out: &Path, threads: &str) {
    overlap_ok([
        "run",
        &arg(input),
        "--out",
        &arg(out),
        "-T",
        "2",
        "--chunk",
        "lines:2",
        "--threads",
        threads,
        "-q",
    ]);
}

#[test]
fn declared_copies_are_documents_in_their_originals_group() {
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc");
    fs::write(&input, crawl(true)).unwrap();
    let out = tmp.path().join("out");
    run(&input, &out, "2");

    let docs = read_docs(&out);
    let urls: Vec<&str> = docs.iter().map(|d| d.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://a.example/take",
            "http://mirror.example/take",
            "http://c.example/take.txt",
            "http://a.example/swap",
            "http://a.example/replace",
            "http://a.example/take",
            "http://www.a.example/swap",
        ]
    );
    // Copies: the original's group (the original is the center) and its
    // text fields; their own URL, host and source.
    for (copy, original) in [(1, 0), (5, 0), (6, 3)] {
        let (c, o) = (&docs[copy], &docs[original]);
        assert_eq!(c.exact_center, Some(original), "doc {copy}");
        assert_eq!(
            (c.bytes, c.lines, c.chunks, &c.title),
            (o.bytes, o.lines, o.chunks, &o.title),
            "doc {copy}"
        );
        assert!(o.lines > 4 && !o.title.is_empty(), "test data: a real page");
        assert_ne!(c.source, o.source);
    }
    assert_eq!(docs[6].host, "www.a.example");
    assert_eq!(
        fs::read_to_string(out.join("copies.csv")).unwrap(),
        "doc_id,original,kind\n1,0,payload_digest\n5,0,revisit\n6,3,revisit\n"
    );
    // The same bytes as plain text are a document of their own.
    assert_eq!(docs[2].exact_center, Some(2));
    assert_ne!(docs[2].lines, docs[0].lines);
    // Copies carry their original's fingerprints.
    let fprints = fingerprints_by_doc(&out);
    assert_eq!(fprints[&1], fprints[&0]);
    assert_eq!(fprints[&5], fprints[&0]);
    assert_eq!(fprints[&6], fprints[&3]);
    // And their fuzzy signatures (stored by the fingerprint stage; flags.csv
    // shows them).
    let flags = read_csv(&out.join("flags.csv"));
    let column = flags.0.iter().position(|c| c == "fuzzy_signature").unwrap();
    let fuzzy: Vec<&str> = flags.1.iter().map(|r| r[column].as_str()).collect();
    assert!(!fuzzy[0].is_empty() && !fuzzy[3].is_empty() && fuzzy[0] != fuzzy[3], "{fuzzy:?}");
    for (copy, original) in [(1, 0), (5, 0), (6, 3)] {
        assert_eq!(fuzzy[copy], fuzzy[original], "doc {copy}");
    }

    let stats = read_stats(&out);
    let fp = &stats["fingerprint"];
    assert_eq!(fp["payload_digest_copies"], 1);
    assert_eq!(fp["payload_digest_copy_bytes"], docs[0].bytes);
    assert_eq!(fp["revisits"], 2);
    let nonzero = nonzero_skipped(fp);
    assert_eq!(
        nonzero,
        BTreeMap::from([
            ("http_redirect".to_string(), 1),
            ("http_status_not_200".to_string(), 1),
            ("revisit_unresolved".to_string(), 1),
            ("segmented_record".to_string(), 2),
            ("unsupported_content_type".to_string(), 3),
        ])
    );
    let skipped_total: u64 = nonzero.values().sum();
    assert_eq!(fp["records"], fp["documents"].as_u64().unwrap() + skipped_total);
    assert_eq!(fp["records"], 15);
    assert_eq!(stats["exact"]["copies_removed"], 3);

    let redirects = fs::read_to_string(out.join("redirects.csv")).unwrap();
    let lines: Vec<&str> = redirects.lines().collect();
    assert_eq!(lines[0], "source,url,status,target");
    assert_eq!(lines.len(), 2, "{redirects}");
    assert!(lines[1].ends_with(",http://a.example/old,301,http://a.example/new/take"), "{redirects}");
    let source = lines[1].split(',').next().unwrap();
    let at: usize = source.rsplit(':').next().unwrap().parse().unwrap();
    assert!(
        crawl(true)[at..]
            .starts_with(b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.example/old")
    );

    // One thread gives the same files.
    let one = tmp.path().join("one");
    run(&input, &one, "1");
    assert_same_outputs(&out, &one, "--threads 1 vs 2 with declared copies");
}

#[test]
fn the_digest_shortcut_gives_what_extraction_gives() {
    // Without digests, every response is extracted; the documents before
    // the revisits must come out the same, byte for byte.
    let tmp = tempdir();
    let (with, without) = (tmp.path().join("with.warc"), tmp.path().join("without.warc"));
    fs::write(&with, crawl(true)).unwrap();
    fs::write(&without, crawl(false)).unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&with, &a, "2");
    run(&without, &b, "2");
    let strip = |d: &DocRow| (d.url.clone(), d.bytes, d.lines, d.chunks, d.exact_center, d.title.clone());
    let da: Vec<_> = read_docs(&a).iter().take(5).map(strip).collect();
    let db: Vec<_> = read_docs(&b).iter().take(5).map(strip).collect();
    assert_eq!(da, db);
    let (fa, fb) = (fingerprints_by_doc(&a), fingerprints_by_doc(&b));
    for doc in 0..5 {
        assert_eq!(fa.get(&doc), fb.get(&doc), "doc {doc}");
    }
    assert_eq!(read_stats(&b)["fingerprint"]["payload_digest_copies"], 0);
    // Without digests the two revisits naming URI and date still resolve.
    assert_eq!(read_stats(&b)["fingerprint"]["revisits"], 2);
    assert_eq!(read_stats(&b)["fingerprint"]["skipped"]["revisit_unresolved"], 2);
}

/// More responses with a digest than the copy index's table holds at the
/// smallest `--memory` (57,344 slots at 32 MiB), so that most originals
/// are in runs on disk when their copies and revisits come: the outputs
/// are those of a budget that holds them all.
#[test]
fn copies_of_originals_spilled_to_disk_are_found_alike() {
    const PAGES: u64 = 80_000;
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc");
    let mut warc = Vec::with_capacity(40 << 20);
    let mut seen = std::collections::HashSet::new();
    let mut expected_copies = 0;
    let mut expected_revisits = 0;
    for i in 0..PAGES {
        let date = format!("2024-01-01T00:00:{:02}Z", i % 60);
        // Every seventh response repeats the payload of a page read long
        // before it (the same digest, type and body): a copy.
        let (page, url) = if i % 7 == 6 {
            (i / 3, format!("http://mirror.example/{i}"))
        } else {
            (i, format!("http://a.example/{i}"))
        };
        expected_copies += u64::from(!seen.insert(page));
        let body = format!(
            "<html><head><title>page {page}</title></head><body><p>first line of page {page}</p>\n\
             <p>second line {page}</p>\n<p>third line {}</p></body></html>",
            page % 97
        );
        let digest = format!("sha1:{page:040x}");
        warc.extend(response(&url, &date, Some(&digest), "text/html", body.as_bytes()));
        // Now and then a revisit of an early page, by its digest.
        if i % 1000 == 999 {
            let digest = format!("sha1:{:040x}", i / 10);
            let uri = format!("http://revisit.example/{i}");
            warc.extend(warc_record(
                "revisit",
                &[("WARC-Target-URI", &uri), ("WARC-Payload-Digest", &digest)],
                b"",
            ));
            expected_revisits += u64::from(seen.contains(&(i / 10)));
        }
    }
    fs::write(&input, &warc).unwrap();
    let run = |out: &Path, memory: &str| {
        overlap_ok(["run", &arg(&input), "--out", &arg(out), "-T", "2", "--memory", memory, "-q"]);
    };
    let (small, large) = (tmp.path().join("small"), tmp.path().join("large"));
    run(&small, "32M");
    run(&large, "1G");
    assert_same_outputs(&small, &large, "--memory 32M (copy index spilled) vs 1G");
    let fp = &read_stats(&small)["fingerprint"];
    assert_eq!(fp["payload_digest_copies"], expected_copies);
    assert_eq!(fp["revisits"], expected_revisits);
    assert_eq!(fp["documents"], PAGES + expected_revisits);
}

/// A revisit read before the file that holds its original is a document
/// all the same, whatever the input order: settled once every input is
/// read, numbered after every input's documents. One whose capture no input
/// holds is skipped as unresolved, and the run says so, naming where.
#[test]
fn revisits_resolve_whatever_the_input_order() {
    let tmp = tempdir();
    let take = page("std/mem/fn.take.html");
    let originals = tmp.path().join("crawl.warc");
    fs::write(
        &originals,
        response("http://a.example/take", "2024-01-01T00:00:00Z", Some(D1_B32), "text/html", &take),
    )
    .unwrap();
    // Named so that a glob sorts it first, as wget's `-dedup` files are.
    let revisits = tmp.path().join("crawl-dedup.warc");
    let revisit = warc_record(
        "revisit",
        &[
            ("WARC-Target-URI", "http://a.example/take"),
            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
            ("WARC-Payload-Digest", D1_B16),
        ],
        &http_response("200 OK", "Content-Type: text/html\r\n", b""),
    );
    // And one of a capture in no input, which nothing resolves.
    let elsewhere = warc_record(
        "revisit",
        &[("WARC-Target-URI", "http://z.example/"), ("WARC-Payload-Digest", D_UNSEEN)],
        b"",
    );
    let elsewhere_at = revisit.len();
    fs::write(&revisits, [revisit, elsewhere].concat()).unwrap();

    let run = |name: &str, inputs: [&Path; 2]| {
        let out = tmp.path().join(name);
        let args = ["run", &arg(inputs[0]), &arg(inputs[1]), "--out", &arg(&out), "-T", "2"];
        let run = overlap_ok(args);
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("revisit_unresolved")).collect();
        assert_eq!(warned.len(), 1, "{stderr}");
        assert!(
            warned[0].contains("1 revisit record skipped as revisit_unresolved")
                && warned[0].contains("a capture that no input holds")
                && warned[0].contains(&format!("{}:{elsewhere_at}", arg(&revisits))),
            "{stderr}"
        );
        let fp = &read_stats(&out)["fingerprint"];
        assert_eq!((fp["documents"].as_u64(), fp["revisits"].as_u64()), (Some(2), Some(1)), "{name}");
        assert_eq!(fp["skipped"]["revisit_unresolved"], 1, "{name}");
        out
    };
    let late = run("late", [&revisits, &originals]);
    let right = run("right", [&originals, &revisits]);
    assert_eq!(read_stats(&late)["fingerprint"]["late_revisits"], 1);
    assert_eq!(read_stats(&right)["fingerprint"]["late_revisits"], 0);
    // The same documents either way: the original first (its docID the
    // smaller, so the center of the two), then the revisit as its copy.
    for out in [&late, &right] {
        let docs = read_docs(out);
        let rows: Vec<(&str, &str)> = docs.iter().map(|d| (d.url.as_str(), d.source.as_str())).collect();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].0, "http://a.example/take");
        assert!(rows[0].1.starts_with(&arg(&originals)), "{rows:?}");
        assert!(rows[1].1.starts_with(&arg(&revisits)), "{rows:?}");
        assert_eq!(docs[1].exact_center, Some(0), "the revisit is an exact copy of its original");
    }
    assert_eq!(fingerprints_by_doc(&late), fingerprints_by_doc(&right));
    // Its input's docIDs are no range: the manifest says none.
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(late.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["inputs"].as_array().unwrap().iter().all(|i| i["first_doc"].is_null()), "{manifest}");
}
