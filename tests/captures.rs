//! docs.csv's capture columns: each document's `date`, `capture` and
//! `canonical`, from every kind of record that makes a document, through
//! the declared copies, an ARC file and a chain of analyses.

mod common;

use common::*;
use std::fs;
use std::path::Path;

fn response(url: &str, date: &str, digest: &str, body: &str) -> Vec<u8> {
    warc_record(
        "response",
        &[
            ("WARC-Target-URI", url),
            ("WARC-Date", date),
            ("WARC-Payload-Digest", digest),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        &http_response("200 OK", "Content-Type: text/html\r\n", body.as_bytes()),
    )
}

/// A page of a few lines with a canonical link, so that it is a document
/// of its own.
fn page(name: &str, canonical: &str) -> String {
    let lines: String = (0..6).map(|i| format!("<p>{name} line {i} of the page body.</p>\n")).collect();
    format!("<html><head><title>{name}</title>{canonical}</head><body>{lines}</body></html>")
}

const D_A: &str = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const D_B: &str = "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

fn crawl(date_a: &str) -> Vec<u8> {
    let a = page(
        "a",
        r#"<link rel="alternate" href="/feed"><LINK REL=canonical HREF="https://a.example/a?x=1&amp;y=2">"#,
    );
    [
        // 0: a response with a canonical link.
        response("http://a.example/a?utm=1", date_a, D_A, &a),
        // 1: a resource record: no HTTP status.
        warc_record(
            "resource",
            &[
                ("WARC-Target-URI", "file:///notes.txt"),
                ("WARC-Date", "2024-05-01T10:00:01Z"),
                ("Content-Type", "text/plain"),
            ],
            b"notes line one\nnotes line two\nnotes line three\n",
        ),
        // 2: the same payload as 0: a copy, its own date, 0's canonical.
        response("http://mirror.example/a", "2024-05-01T10:00:02Z", D_A, &a),
        // 3: a page without a canonical link, a WARC/1.1 date with a
        // fraction.
        response("http://b.example/b", "2024-05-01T10:00:03.250Z", D_B, &page("b", "")),
        // 4: a revisit of 0 under another URL, seen later.
        warc_record(
            "revisit",
            &[
                ("WARC-Target-URI", "http://www.a.example/a"),
                ("WARC-Date", "2024-06-01T00:00:00Z"),
                ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                ("WARC-Payload-Digest", D_A),
                ("WARC-Refers-To-Target-URI", "http://a.example/a?utm=1"),
                ("WARC-Refers-To-Date", date_a),
            ],
            &http_response("200 OK", "Content-Type: text/html\r\n", b""),
        ),
    ]
    .concat()
}

/// `(date, capture, canonical)` of each row of `out`'s docs.csv.
fn captures(out: &Path) -> Vec<(String, String, String)> {
    read_doc_rows(out).into_iter().map(|d| (d.date, d.capture, d.canonical)).collect()
}

fn row(date: &str, capture: &str, canonical: &str) -> (String, String, String) {
    (date.to_string(), capture.to_string(), canonical.to_string())
}

#[test]
fn every_document_has_its_own_capture_and_its_texts_canonical() {
    let tmp = tempdir();
    let input = tmp.path().join("crawl.warc");
    fs::write(&input, crawl("2024-05-01T10:00:00Z")).unwrap();
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--out", &arg(&out), "-q"]);
    let canonical = "https://a.example/a?x=1&y=2";
    let want = [
        row("2024-05-01T10:00:00Z", "response", canonical),
        row("2024-05-01T10:00:01Z", "", ""),
        row("2024-05-01T10:00:02Z", "response", canonical),
        row("2024-05-01T10:00:03.250Z", "response", ""),
        row("2024-06-01T00:00:00Z", "revisit", canonical),
    ];
    assert_eq!(captures(&out), want);
    assert_eq!(
        fs::read_to_string(out.join("copies.csv")).unwrap(),
        "doc_id,original,kind\n2,0,payload_digest\n4,0,revisit\n"
    );
    // The fingerprint stage's table has them too, after `missing_for`.
    let (header, rows) = read_csv(&out.join("records/fingerprint-docs.csv"));
    assert_eq!(header[9..], ["date", "capture", "canonical"]);
    let fp: Vec<_> = rows.iter().map(|r| (r[9].clone(), r[10].clone(), r[11].clone())).collect();
    assert_eq!(fp, want);
}

#[test]
fn an_arc_records_date_is_written_as_a_warc_date() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&testdata("sample.arc.gz")), "--out", &arg(&out), "-q"]);
    let docs = read_docs(&out);
    assert!(docs.iter().any(|d| d.url.starts_with("http")) && docs.iter().any(|d| d.url.starts_with("ftp")));
    for d in &docs {
        let date = d.date.as_bytes();
        assert_eq!(date.len(), 20, "{:?}", d.date);
        assert!(d.date.starts_with("2024-03-01T") && d.date.ends_with('Z'), "{:?}", d.date);
        assert_eq!((date[4], date[7], date[13], date[16]), (b'-', b'-', b':', b':'), "{:?}", d.date);
        // An http record holds an HTTP response; an ftp one only the file.
        let http = d.url.starts_with("http");
        assert_eq!(d.capture, if http { "response" } else { "" }, "{}", d.url);
    }
}

#[test]
fn a_page_unchanged_since_the_previous_analysis_has_this_captures_date() {
    let tmp = tempdir();
    let (first, second) = (tmp.path().join("first.warc"), tmp.path().join("second.warc"));
    fs::write(&first, crawl("2024-05-01T10:00:00Z")).unwrap();
    fs::write(&second, crawl("2024-07-01T10:00:00Z")).unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    overlap_ok(["run", &arg(&first), "--out", &arg(&old), "-q"]);
    overlap_ok(["run", &arg(&second), "--out", &arg(&new), "--previous", &arg(&old), "-q"]);
    // Every page is unchanged: the text fields are the previous
    // analysis's, the capture this crawl's, whose first page and revisit
    // are a later capture.
    let mut want = captures(&old);
    want[0].0 = "2024-07-01T10:00:00Z".into();
    assert_eq!(captures(&new), want);
    let changes = fs::read_to_string(new.join("changes.csv")).unwrap();
    assert_eq!(changes.matches(",unchanged,").count(), 5, "{changes}");
}
