//! A large per-record gzip WARC file is cut into segments that are read in
//! parallel: the result must be the one a single reader of the whole file
//! gives, whatever the thread count.

mod common;

use common::*;
use std::fs;
use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use xxhash_rust::xxh3::xxh3_128;

/// Above two segments (2 x 8 MiB) of compressed bytes.
const CRAWL_BYTES: usize = 20 << 20;

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Pages of plain text lines made of random words, with exact copies and
/// near-replicas among them (every page of a site shares its two header
/// lines; every 7th page copies an earlier one; every 5th edits one line
/// of an earlier one).
fn pages(total: usize) -> Vec<(String, String)> {
    let mut rng = Rng(42);
    let words: Vec<String> = (0..5000).map(|i| format!("w{i:x}q{}", i * 7 % 13)).collect();
    let line = |rng: &mut Rng| -> String {
        let n = 4 + rng.next() as usize % 8;
        (0..n).map(|_| words[rng.next() as usize % words.len()].as_str()).collect::<Vec<_>>().join(" ")
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut size = 0;
    let mut i = 0;
    while size < total {
        let site = i % 40;
        let url = format!("http://site{site}.example/page{i}");
        let text = if i % 7 == 6 {
            out[rng.next() as usize % out.len()].1.clone()
        } else if i % 5 == 4 {
            let mut lines: Vec<String> =
                out[rng.next() as usize % out.len()].1.lines().map(String::from).collect();
            let at = rng.next() as usize % lines.len();
            lines[at] = line(&mut rng);
            lines.join("\n")
        } else {
            let mut lines = vec![format!("header of site {site}"), format!("menu of site {site} home about")];
            for _ in 0..(20 + rng.next() as usize % 60) {
                lines.push(line(&mut rng));
            }
            lines.join("\n")
        };
        size += text.len();
        out.push((url, text));
        i += 1;
    }
    out
}

/// The records of a crawl of `pages`: one response record each, with a
/// payload digest, so that exact copies are found by their digest. Every
/// 11th page is served as HTML: the same bytes as another page decoded
/// another way, which is not a copy of it.
fn records(pages: &[(String, String)]) -> Vec<Vec<u8>> {
    pages
        .iter()
        .enumerate()
        .map(|(i, (url, text))| {
            let kind = if i % 11 == 10 { "text/html" } else { "text/plain" };
            let http =
                http_response("200 OK", &format!("Content-Type: {kind}; charset=utf-8\r\n"), text.as_bytes());
            let digest = format!("sha1:{:08x}{:032x}", text.len(), xxh3_128(text.as_bytes()));
            warc_record(
                "response",
                &[
                    ("WARC-Target-URI", url),
                    ("Content-Type", "application/http; msgtype=response"),
                    ("WARC-Payload-Digest", &digest),
                ],
                &http,
            )
        })
        .collect()
}

/// Writes the records as a per-record gzip file (stored blocks, so that the
/// file is large without generating much text) and as a plain file.
fn write_crawls(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let records = records(&pages(CRAWL_BYTES));
    let gz = dir.join("crawl.warc.gz");
    let plain = dir.join("crawl.warc");
    let mut gz_bytes = Vec::new();
    let mut plain_bytes = Vec::new();
    for record in &records {
        let mut enc = GzEncoder::new(Vec::new(), Compression::none());
        enc.write_all(record).unwrap();
        gz_bytes.extend(enc.finish().unwrap());
        plain_bytes.extend_from_slice(record);
    }
    assert!(gz_bytes.len() > 16 << 20, "the crawl must span at least two segments");
    fs::write(&gz, gz_bytes).unwrap();
    fs::write(&plain, plain_bytes).unwrap();
    (gz, plain)
}

fn run(input: &Path, out: &Path, threads: &str) {
    overlap_ok(["run", &arg(input), "--out", &arg(out), "-T", "20", "--threads", threads, "-q"]);
}

/// Columns of docs.csv other than `source` (whose offsets are compressed
/// offsets in a gzip file and plain ones otherwise).
fn docs_without_source(dir: &Path) -> Vec<Vec<String>> {
    let (header, rows) = read_csv(&dir.join("docs.csv"));
    let source = header.iter().position(|h| h == "source").expect("docs.csv has a source column");
    rows.into_iter()
        .map(|mut row| {
            row.remove(source);
            row
        })
        .collect()
}

#[test]
fn a_split_file_gives_what_one_reader_gives() {
    let tmp = tempdir();
    let (gz, plain) = write_crawls(tmp.path());
    let one = tmp.path().join("gz-1");
    let two = tmp.path().join("gz-2");
    let whole = tmp.path().join("plain");
    run(&gz, &one, "1");
    run(&gz, &two, "2");
    run(&plain, &whole, "2");
    assert_same_outputs(&one, &two, "split file, --threads 1 vs 2");

    // The plain file is read by one reader: the same documents, copies and
    // pairs.
    let stats = read_stats(&one);
    assert!(stats["fingerprint"]["inputs"][0]["segments"].as_u64().unwrap() >= 2, "the file was split");
    assert_eq!(read_stats(&whole)["fingerprint"]["inputs"][0]["segments"], 1);
    assert!(stats["fingerprint"]["documents"].as_u64().unwrap() > 1000);
    assert_eq!(stats["fingerprint"]["corrupt_records"], 0);
    assert_eq!(docs_without_source(&one), docs_without_source(&whole));
    assert!(!read_overlap(&one).is_empty(), "the crawl has near-replicas");
    assert_eq!(read_overlap(&one), read_overlap(&whole));
    let copies = stats["fingerprint"]["payload_digest_copies"].as_u64().unwrap();
    assert!(copies > 100, "copies are found by their digest ({copies})");
    assert_eq!(read_stats(&whole)["fingerprint"]["payload_digest_copies"].as_u64().unwrap(), copies);
    for name in ["copies.csv", "records/fingerprint-docs.csv"] {
        let rows = |dir: &Path| -> Vec<Vec<String>> {
            let (header, rows) = read_csv(&dir.join(name));
            let keep: Vec<usize> = (0..header.len()).filter(|&i| header[i] != "source").collect();
            rows.into_iter().map(|r| keep.iter().map(|&i| r[i].clone()).collect()).collect()
        };
        assert_eq!(rows(&one), rows(&whole), "{name} differs");
    }
    for name in ["records/fprint-exact.fpd", "records/fuzzy.fpd", "groups.csv"] {
        assert!(fs::read(one.join(name)).unwrap() == fs::read(whole.join(name)).unwrap(), "{name} differs");
    }
    // Every record offset is a member start, in order.
    let (header, rows) = read_csv(&one.join("docs.csv"));
    let source = header.iter().position(|h| h == "source").unwrap();
    let offsets: Vec<u64> =
        rows.iter().map(|r| r[source].rsplit(':').next().unwrap().parse().unwrap()).collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "offsets are in file order");
}
