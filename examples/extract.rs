//! The speed of HTML extraction on its own: loads a file of pages into
//! memory, then times one pass of `html_to_text` over every page and,
//! separately, one pass of `normalize` over the texts it produced and one
//! of the fuzzy signature (YaCy's defaults) over the normalized texts, on one
//! thread, with no reading, decompression or decoding in the timed loops.
//! `scripts/bench_extract.py` runs it beside Resiliparse on the same pages,
//! so that the two extractors are compared as a ratio measured in one run.
//!
//! Usage: `cargo run --release --example extract -- pages.bin [--plain] [--slowest N]`,
//! where `pages.bin` is written by `scripts/dump_html_pages.py`: for each
//! page, its byte length as a u32 little-endian, then that many bytes of
//! UTF-8. Prints `key value` lines to stdout: the page count and input
//! size, then seconds and MB/s (of the pass's own input; MB are 10^6 bytes)
//! and output bytes for each pass. With `--slowest N`, an extra, untimed
//! pass measures each page alone and prints to stderr the N pages with the
//! lowest `html_to_text` throughput, by their index in the file, among the
//! pages of at least 16 kB (a smaller page's time is mostly fixed costs).
//! With `--plain`, the pages are plain text (`dump_html_pages.py --plain`):
//! each is its own text, as the fingerprint stage takes a `text/plain`
//! page, and no HTML conversion is timed.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use overlap::bytes::extract::html::{HtmlText, html_to_text};
use overlap::bytes::extract::normalize::normalize;
use overlap::bytes::fuzzy::{MIN_TOKEN_LEN, QUANT_RATE, fuzzy};

fn main() -> ExitCode {
    let mut path = None;
    let mut slowest = 0usize;
    let mut plain = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--plain" {
            plain = true;
        } else if arg == "--slowest" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => slowest = n,
                None => {
                    eprintln!("extract: --slowest needs a number");
                    return ExitCode::from(2);
                }
            }
        } else if path.is_none() {
            path = Some(arg);
        } else {
            eprintln!("usage: extract PAGES.bin [--plain] [--slowest N]");
            return ExitCode::from(2);
        }
    }
    let Some(path) = path else {
        eprintln!("usage: extract PAGES.bin [--plain] [--slowest N]");
        return ExitCode::from(2);
    };
    let pages = match std::fs::read(&path).map_err(|e| e.to_string()).and_then(|data| split(&data)) {
        Ok(pages) => pages,
        Err(e) => {
            eprintln!("extract: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let input: usize = pages.iter().map(String::len).sum();

    let start = Instant::now();
    let mut texts: Vec<HtmlText> = Vec::with_capacity(pages.len());
    for page in &pages {
        texts.push(if plain {
            HtmlText { text: page.clone(), title: None, canonical: None }
        } else {
            html_to_text(black_box(page))
        });
    }
    let html_time = start.elapsed();
    black_box(&texts);
    let text_bytes: usize = texts.iter().map(|t| t.text.len()).sum();

    // Into one reused buffer, as the fingerprint stage does: a fresh
    // string per page would time the kernel's zeroing of new pages.
    let start = Instant::now();
    let mut out = String::new();
    let mut normalized = 0usize;
    let mut lines = 0u64;
    for text in &texts {
        out.clear();
        lines += normalize(black_box(&text.text), &mut out);
        normalized += black_box(&out).len();
    }
    let normalize_time = start.elapsed();
    // The normalized texts for the fuzzy pass, made again untimed.
    let outs: Vec<String> = texts
        .iter()
        .map(|text| {
            let mut out = String::new();
            normalize(&text.text, &mut out);
            out
        })
        .collect();

    let start = Instant::now();
    let mut signatures = 0u128;
    for out in &outs {
        signatures ^= fuzzy(black_box(out), MIN_TOKEN_LEN, QUANT_RATE);
    }
    let fuzzy_time = start.elapsed();
    black_box(signatures);

    println!("pages {}", pages.len());
    println!("input_bytes {input}");
    println!("input_mb {:.1}", mb(input));
    println!("html_to_text_seconds {:.6}", html_time.as_secs_f64());
    println!("html_to_text_mb_per_s {:.1}", rate(input, html_time));
    println!("text_bytes {text_bytes}");
    println!("titles {}", texts.iter().filter(|t| t.title.is_some()).count());
    println!("normalize_seconds {:.6}", normalize_time.as_secs_f64());
    println!("normalize_mb_per_s {:.1}", rate(text_bytes, normalize_time));
    println!("normalized_bytes {normalized}");
    println!("normalized_lines {lines}");
    println!("fuzzy_seconds {:.6}", fuzzy_time.as_secs_f64());
    println!("fuzzy_mb_per_s {:.1}", rate(normalized, fuzzy_time));
    println!("fuzzy_xor {signatures:032x}");

    if slowest > 0 && !plain {
        report_slowest(&pages, slowest);
    }
    ExitCode::SUCCESS
}

/// The pages of a length-prefixed file, or what is wrong with it.
fn split(data: &[u8]) -> Result<Vec<String>, String> {
    let mut pages = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(format!("truncated length after page {}", pages.len()));
        };
        let len = u32::from_le_bytes(*len) as usize;
        let Some((page, tail)) = tail.split_at_checked(len) else {
            return Err(format!("page {} is truncated", pages.len()));
        };
        match std::str::from_utf8(page) {
            Ok(page) => pages.push(page.to_owned()),
            Err(e) => return Err(format!("page {} is not UTF-8: {e}", pages.len())),
        }
        rest = tail;
    }
    Ok(pages)
}

/// Pages smaller than this are left out of `--slowest`.
const SLOWEST_MIN_BYTES: usize = 16_000;

/// Times `html_to_text` on each page of at least `SLOWEST_MIN_BYTES` alone
/// and prints the `n` pages with the lowest throughput to stderr.
fn report_slowest(pages: &[String], n: usize) {
    let mut times: Vec<(usize, Duration)> = pages
        .iter()
        .enumerate()
        .filter(|(_, page)| page.len() >= SLOWEST_MIN_BYTES)
        .map(|(i, page)| {
            let start = Instant::now();
            black_box(html_to_text(black_box(page)));
            (i, start.elapsed())
        })
        .collect();
    // Lowest bytes per second first: compare len_a / t_a with len_b / t_b
    // as len_a * t_b against len_b * t_a, in nanoseconds.
    times.sort_by(|&(a, ta), &(b, tb)| {
        let left = pages[a].len() as u128 * tb.as_nanos();
        let right = pages[b].len() as u128 * ta.as_nanos();
        left.cmp(&right)
    });
    eprintln!("slowest pages by html_to_text throughput (index bytes microseconds MB/s):");
    for &(i, t) in times.iter().take(n) {
        eprintln!("{i} {} {:.1} {:.1}", pages[i].len(), t.as_secs_f64() * 1e6, rate(pages[i].len(), t));
    }
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// MB per second, 0 when no time was measured.
fn rate(bytes: usize, time: Duration) -> f64 {
    let secs = time.as_secs_f64();
    if secs > 0.0 { mb(bytes) / secs } else { 0.0 }
}
