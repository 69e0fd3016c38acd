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
//! The input is generated here, deterministically, by a small PRNG: web
//! pages made like those of `scripts/gen_corpus.py` (a site template with
//! inline style and script, navigation, a footer, and a body of paragraphs,
//! lists and tables of Zipf-distributed words), so that the figures are
//! comparable with those of the whole pipeline.

use std::hint::black_box;
use std::time::{Duration, Instant};

use overlap::chunk::{Chunker, Chunking};
use overlap::extract::html::html_to_text;
use overlap::extract::normalize::normalize;

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
    let mut rng = Rng::new(0x0005_EED0_F0E7_E1A9);
    let words = Words::new(&mut rng, 20_000);
    let pages = make_pages(&mut rng, &words, HTML_BYTES);
    let html_bytes: usize = pages.iter().map(String::len).sum();
    // Inputs of the later cases are the outputs of the earlier ones, as in
    // the pipeline.
    let texts: Vec<String> = pages.iter().map(|p| html_to_text(p).text).collect();
    let text_bytes: usize = texts.iter().map(String::len).sum();
    let normalized: Vec<String> = texts
        .iter()
        .map(|t| {
            let mut out = String::new();
            normalize(t, &mut out);
            out
        })
        .collect();
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
                black_box(overlap::fuzzy::fuzzy(
                    black_box(t),
                    overlap::fuzzy::MIN_TOKEN_LEN,
                    overlap::fuzzy::QUANT_RATE,
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

// ------------------------------------------------------------ input

/// SplitMix64: small, fast and good enough for making test input.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi].
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() - 1)]
    }
}

/// A made-up vocabulary drawn with Zipf frequencies.
struct Words {
    words: Vec<String>,
    /// Cumulative weights, for sampling by binary search.
    cum: Vec<f64>,
}

impl Words {
    fn new(rng: &mut Rng, n: usize) -> Words {
        const COMMON: &str = "the of and to a in is that for it as was with be by on not he this are or \
                              his from at which but have an they you were her she there had been one all";
        const ONSETS: [&str; 24] = [
            "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "bl", "br",
            "ch", "cr", "st", "th", "tr",
        ];
        const VOWELS: [&str; 9] = ["a", "e", "i", "o", "u", "ea", "ai", "ou", "é"];
        const CODAS: [&str; 12] = ["", "", "", "", "n", "r", "s", "t", "nd", "st", "ck", "ng"];
        let mut words: Vec<String> = COMMON.split(' ').map(String::from).collect();
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        while words.len() < n {
            let syllables = if words.len() < 2000 { rng.range(1, 2) } else { rng.range(1, 4) };
            let mut w = String::new();
            for _ in 0..syllables {
                w.push_str(rng.pick(&ONSETS));
                w.push_str(rng.pick(&VOWELS));
            }
            w.push_str(rng.pick(&CODAS));
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cum = (0..words.len())
            .map(|r| {
                total += 1.0 / (r as f64 + 2.7).powf(1.1);
                total
            })
            .collect();
        Words { words, cum }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        let u = rng.f64() * self.cum[self.cum.len() - 1];
        let i = self.cum.partition_point(|&c| c <= u).min(self.words.len() - 1);
        &self.words[i]
    }

    /// `n` words separated by spaces, appended to `out`.
    fn push_words(&self, rng: &mut Rng, n: usize, capital: bool, out: &mut String) {
        for k in 0..n {
            if k > 0 {
                out.push(' ');
            }
            let w = self.word(rng);
            if capital && k == 0 {
                let mut chars = w.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push_str(w);
            }
        }
    }

    fn sentence(&self, rng: &mut Rng, out: &mut String) {
        let n = rng.range(4, 24);
        let link = rng.f64() < 0.08;
        self.push_words(rng, n, true, out);
        if link {
            out.push_str(" <a href=\"/tag/");
            out.push_str(self.word(rng));
            out.push_str("\">");
            self.push_words(rng, 2, false, out);
            out.push_str("</a>");
        }
        out.push_str(if rng.f64() < 0.9 { ". " } else { "? " });
    }
}

/// A site template: the parts around a page body.
struct Template {
    head: String,
    top: String,
    bottom: String,
}

fn make_template(rng: &mut Rng, words: &Words) -> Template {
    let mut head = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>\n",
    );
    for _ in 0..rng.range(20, 120) {
        head.push_str(&format!(
            ".{} {{ margin: {}px; padding: {}em; font-size: {}% }}\n",
            words.word(rng),
            rng.range(0, 40),
            rng.range(0, 9),
            rng.range(50, 200)
        ));
    }
    head.push_str(
        "</style>\n<script>\n  window.dataLayer = window.dataLayer || [];\n  \
         function gtag(){dataLayer.push(arguments);}\n  gtag('js', new Date());\n</script>\n</head>\n",
    );
    let mut top =
        String::from("<body>\n<header class=\"site-header\">\n<p class=\"site-title\"><a href=\"/\">");
    words.push_words(rng, 2, true, &mut top);
    top.push_str("</a></p>\n</header>\n<nav>\n<ul class=\"menu\">\n");
    for _ in 0..rng.range(4, 25) {
        top.push_str("  <li class=\"menu-item\"><a href=\"/section/\">");
        let n = rng.range(1, 3);
        words.push_words(rng, n, true, &mut top);
        top.push_str("</a></li>\n");
    }
    top.push_str("</ul>\n</nav>\n<main>\n");
    let mut bottom = String::from("</main>\n<footer>\n<p>&copy; 2024 ");
    words.push_words(rng, 2, true, &mut bottom);
    bottom.push_str(". All rights reserved.</p>\n<p><a href=\"/privacy\">Privacy</a> &middot; <a href=\"/terms\">Terms</a></p>\n");
    for _ in 0..rng.range(0, 3) {
        bottom.push_str("<p>");
        words.sentence(rng, &mut bottom);
        bottom.push_str("</p>\n");
    }
    bottom.push_str("</footer>\n</body>\n</html>\n");
    Template { head, top, bottom }
}

/// Pages of about 5-60 KB from a few dozen site templates, up to `total` bytes.
fn make_pages(rng: &mut Rng, words: &Words, total: usize) -> Vec<String> {
    let templates: Vec<Template> = (0..40).map(|_| make_template(rng, words)).collect();
    let mut pages = Vec::new();
    let mut size = 0;
    while size < total {
        let t = &templates[rng.range(0, templates.len() - 1)];
        // Body text: log-uniform between 1.5 and 40 KB, most pages small.
        let target = (1500.0 * (40000.0f64 / 1500.0).powf(rng.f64() * rng.f64())) as usize;
        let mut p = String::with_capacity(target * 2 + 8192);
        p.push_str(&t.head[..t.head.len() - "</head>\n".len()]);
        p.push_str("<title>");
        let n = rng.range(3, 8);
        words.push_words(rng, n, true, &mut p);
        p.push_str("</title>\n</head>\n");
        p.push_str(&t.top);
        p.push_str("<h1>");
        let n = rng.range(3, 8);
        words.push_words(rng, n, true, &mut p);
        p.push_str("</h1>\n<p class=\"date\">Posted on March 3, 2024</p>\n");
        let body_start = p.len();
        while p.len() - body_start < target {
            let x = rng.f64();
            if x < 0.6 {
                p.push_str("<!-- wp:paragraph -->\n<p>");
                for _ in 0..rng.range(1, 6) {
                    words.sentence(rng, &mut p);
                    if rng.f64() < 0.3 {
                        p.push('\n');
                    }
                }
                p.push_str("</p>\n<!-- /wp:paragraph -->\n");
            } else if x < 0.72 {
                p.push_str("<h2>");
                let n = rng.range(2, 7);
                words.push_words(rng, n, true, &mut p);
                p.push_str("</h2>\n");
            } else if x < 0.9 {
                p.push_str("<ul>\n");
                for _ in 0..rng.range(3, 10) {
                    p.push_str("  <li>");
                    words.sentence(rng, &mut p);
                    p.push_str("</li>\n");
                }
                p.push_str("</ul>\n");
            } else {
                p.push_str("<table class=\"data\">\n");
                let cols = rng.range(2, 5);
                for _ in 0..rng.range(3, 12) {
                    p.push_str("<tr>");
                    for c in 0..cols {
                        p.push_str("<td>");
                        if c > 0 && rng.f64() < 0.4 {
                            p.push_str(&format!("{}.{:02}", rng.range(0, 999), rng.range(0, 99)));
                        } else {
                            let n = rng.range(1, 4);
                            words.push_words(rng, n, false, &mut p);
                        }
                        p.push_str("</td>");
                    }
                    p.push_str("</tr>\n");
                }
                p.push_str("</table>\n");
            }
        }
        p.push_str(&t.bottom);
        size += p.len();
        pages.push(p);
    }
    pages
}
