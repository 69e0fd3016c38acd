//! Pages of many megabytes are read within `--memory`, however many
//! threads would read them side by side: measured by the fingerprint
//! stage's peak resident memory in stats.json, over what the same binary
//! and flags take for a crawl of small pages (the binary itself, its
//! threads, and in this unoptimized build a base that the release build
//! does not have).

mod common;

use std::io::Write;
use std::path::Path;

use common::*;

const MIB: u64 = 1 << 20;

/// A text/plain page of about `bytes` bytes: lines of a few words and a
/// number, so that its vocabulary stays small and its lines distinct
/// enough to fingerprint.
fn text_page(seed: usize, bytes: usize) -> Vec<u8> {
    const WORDS: [&str; 8] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
    let mut page = Vec::with_capacity(bytes + 64);
    let mut line = 0usize;
    while page.len() < bytes {
        for k in 0..6 {
            page.extend_from_slice(WORDS[(seed + line + k * k) % WORDS.len()].as_bytes());
            page.push(b' ');
        }
        page.extend_from_slice(format!("{}\n", line % 1000).as_bytes());
        line += 1;
    }
    page
}

/// A WARC response record of `body`, sent gzip-encoded if `gzip`.
fn response(url: &str, body: &[u8], gzip: bool) -> Vec<u8> {
    let (headers, body) = if gzip {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(body).unwrap();
        ("Content-Type: text/plain\r\nContent-Encoding: gzip\r\n", enc.finish().unwrap())
    } else {
        ("Content-Type: text/plain\r\n", body.to_vec())
    };
    warc_record("response", &[("WARC-Target-URI", url)], &http_response("200 OK", headers, &body))
}

/// A plain WARC file of `pages` pages of `bytes` bytes, every other one
/// sent gzip-encoded (so decoded as it is read).
fn write_crawl(path: &Path, pages: usize, bytes: usize) {
    let mut data = Vec::new();
    for i in 0..pages {
        data.extend(response(&format!("http://big.example/{i}"), &text_page(i, bytes), i % 2 == 1));
    }
    std::fs::write(path, data).unwrap();
}

/// The fingerprint stage's peak resident memory and document count of a
/// run of `input` with `flags`.
fn fingerprint_peak(tmp: &Path, name: &str, input: &Path, flags: &[&str]) -> (u64, u64) {
    let out = tmp.join(name);
    let mut args = vec!["run".to_string(), arg(input), "--out".to_string(), arg(&out), "-q".to_string()];
    args.extend(flags.iter().map(|f| f.to_string()));
    overlap_ok(&args);
    let stats = read_stats(&out);
    let peak = stats["fingerprint"]["peak_rss_bytes"].as_u64().expect("the stage's peak is measured");
    (peak, stats["fingerprint"]["documents"].as_u64().unwrap())
}

// Peak resident memory is read from /proc.
#[cfg(target_os = "linux")]
#[test]
fn big_pages_read_by_many_threads_stay_within_the_budget() {
    let tmp = tempdir();
    // Eight pages of 8 MiB: each needs about 30 MiB while it is read,
    // decoded and worked on, and eight threads reading them side by side
    // took 163 MiB over the base before pages were read under a lease of
    // the budget.
    let big = tmp.path().join("big.warc");
    write_crawl(&big, 8, 8 << 20);
    let small = tmp.path().join("small.warc");
    write_crawl(&small, 8, 4 << 10);
    let flags = ["--memory", "48M", "--threads", "8"];
    let (base, _) = fingerprint_peak(tmp.path(), "small", &small, &flags);
    let (peak, documents) = fingerprint_peak(tmp.path(), "big", &big, &flags);
    assert_eq!(documents, 8, "every big page is read");
    let over = peak.saturating_sub(base);
    assert!(
        over <= 48 * MIB,
        "the big pages took {} MiB over the {} MiB of small pages, more than --memory 48M",
        over / MIB,
        base / MIB
    );
}

#[test]
fn a_record_limit_above_the_budget_and_pages_beyond_it_are_warned_of() {
    let tmp = tempdir();
    let big = tmp.path().join("big.warc");
    write_crawl(&big, 2, 12 << 20);
    let out = tmp.path().join("out");
    let args: Vec<String> =
        ["run", &arg(&big), "--out", &arg(&out), "--memory", "32M", "--max-record-bytes", "40M"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let run = overlap_ok(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("--max-record-bytes 40.0 MiB is more than --memory 32.0 MiB"),
        "{}",
        describe(&args, &run)
    );
    assert!(
        stderr.contains("2 pages needed more than half of --memory 32.0 MiB")
            && stderr.contains("3.7 MiB or less"),
        "{}",
        describe(&args, &run)
    );
    assert_eq!(read_stats(&out)["fingerprint"]["documents"].as_u64(), Some(2), "{}", describe(&args, &run));
}
