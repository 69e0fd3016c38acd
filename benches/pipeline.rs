//! Throughput of the library functions on the hot path of `overlap
//! fingerprint`, one by one: HTML to text, line normalization, chunk
//! fingerprints (`lines:4`, `words:8`), and the sort of FPrint-DocID records
//! that the stages after it are built on.
//!
//! Run with `cargo bench --bench pipeline [FILTER]`: only cases whose name
//! contains FILTER run. A plain `harness = false` program rather than a
//! benchmark framework, to keep the build light: every case runs a few
//! times on the same input, and the best and the median time are reported
//! with the throughput in MB/s of the case's input (1 MB = 10^6 bytes).
//!
//! The input is generated deterministically by `common`, shared with the
//! Criterion benchmarks of `benches/micro.rs` (which measure the same
//! functions and a few more with statistics, at the cost of a longer run).

use std::hint::black_box;
use std::time::{Duration, Instant};

use overlap::bytes::chunk::{Chunker, Chunking};
use overlap::bytes::extract::html::html_to_text;
use overlap::bytes::extract::normalize::normalize;

mod common;

/// HTML bytes generated for the extraction cases.
const HTML_BYTES: usize = 48 << 20;
/// Records sorted in the sort case.
const SORT_RECORDS: usize = 10_000_000;
/// Runs of each case.
const RUNS: usize = 5;

fn main() {
    // `cargo bench` passes `--bench`; anything else not starting with `-`
    // filters the cases by name.
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));

    let started = Instant::now();
    let (mut rng, pages) = common::corpus(HTML_BYTES);
    let html_bytes: usize = pages.iter().map(String::len).sum();
    let (texts, normalized) = common::texts(&pages);
    let text_bytes: usize = texts.iter().map(String::len).sum();
    let norm_bytes: usize = normalized.iter().map(String::len).sum();
    eprintln!(
        "input: {} pages, {:.1} MB of HTML, {:.1} MB of text, {:.1} MB normalized (made in {:.1} s)",
        pages.len(),
        html_bytes as f64 / 1e6,
        text_bytes as f64 / 1e6,
        norm_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    println!(
        "{:<24} {:>10} {:>10} {:>10} {:>10} {:>10}  per item",
        "case", "input MB", "best ms", "median ms", "MB/s best", "MB/s med"
    );

    if wanted("html_to_text") {
        let r = measure(|| {
            for p in &pages {
                black_box(html_to_text(black_box(p)));
            }
        });
        report("html_to_text", html_bytes, &r, pages.len(), "page");
    }

    if wanted("normalize") {
        let mut out = String::with_capacity(1 << 20);
        let r = measure(|| {
            let mut total = 0u64;
            for t in &texts {
                out.clear();
                total += normalize(black_box(t), &mut out);
            }
            black_box(total);
        });
        report("normalize", text_bytes, &r, texts.len(), "page");
    }

    for spec in ["lines:4", "words:8"] {
        let name = format!("fingerprints {spec}");
        if !wanted(&name) {
            continue;
        }
        let chunking: Chunking = spec.parse().expect("a valid chunk spec");
        let mut chunker = Chunker::new();
        let mut out = Vec::with_capacity(1 << 16);
        let mut chunks = 0u64;
        let r = measure(|| {
            chunks = 0;
            for t in &normalized {
                out.clear();
                chunks += chunker.fingerprints(black_box(t), chunking, &mut out);
                black_box(&out);
            }
        });
        report(&name, norm_bytes, &r, chunks as usize, "chunk");
    }

    if wanted("fuzzy") {
        let r = measure(|| {
            for t in &normalized {
                black_box(overlap::bytes::fuzzy::fuzzy(
                    black_box(t),
                    overlap::bytes::fuzzy::MIN_TOKEN_LEN,
                    overlap::bytes::fuzzy::QUANT_RATE,
                ));
            }
        });
        report("fuzzy signature", norm_bytes, &r, normalized.len(), "page");
    }

    if wanted("sort") {
        let records: Vec<(u64, u32)> =
            (0..SORT_RECORDS).map(|i| (rng.next_u64() >> (rng.next_u64() & 15), i as u32)).collect();
        let mut work = records.clone();
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            work.copy_from_slice(&records);
            let t = Instant::now();
            work.sort_unstable();
            black_box(&work);
            times.push(t.elapsed());
        }
        assert!(work.windows(2).all(|w| w[0] <= w[1]));
        let r = timings(times);
        let bytes = SORT_RECORDS * std::mem::size_of::<(u64, u32)>();
        report("sort_unstable (u64,u32)", bytes, &r, SORT_RECORDS, "record");
    }
}

// ------------------------------------------------------------ measuring

struct Timings {
    best: Duration,
    median: Duration,
}

/// Runs `f` RUNS times.
fn measure(mut f: impl FnMut()) -> Timings {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    timings(times)
}

fn timings(mut times: Vec<Duration>) -> Timings {
    times.sort();
    Timings { best: times[0], median: times[times.len() / 2] }
}

fn report(name: &str, bytes: usize, t: &Timings, items: usize, unit: &str) {
    let mb = bytes as f64 / 1e6;
    let best = t.best.as_secs_f64();
    let median = t.median.as_secs_f64();
    let per_item = if items > 0 { best * 1e9 / items as f64 } else { 0.0 };
    println!(
        "{:<24} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}  {:.0} ns/{unit} ({items} {unit}s)",
        name,
        mb,
        best * 1e3,
        median * 1e3,
        mb / best,
        mb / median,
        per_item
    );
}
