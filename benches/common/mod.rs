//! Deterministic input for the benchmarks: web pages made like those of
//! `scripts/gen_corpus.py` (a site template with inline style and script,
//! navigation, a footer, and a body of paragraphs, lists and tables of
//! Zipf-distributed words), by a small PRNG, so that every run measures
//! the same bytes and the figures are comparable with those of the whole
//! pipeline. Shared by the bench programs (`mod common;`); each uses part
//! of it.
#![allow(dead_code)]

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

/// Pages of about `total` bytes of HTML, always the same, and the
/// generator after them (for further input that follows them).
pub fn corpus(total: usize) -> (Rng, Vec<String>) {
    let mut rng = Rng::new(0x0005_EED0_F0E7_E1A9);
    let words = Words::new(&mut rng, 20_000);
    let pages = make_pages(&mut rng, &words, total);
    (rng, pages)
}

/// The pages' text (`html_to_text`) and its normalized form (`normalize`):
/// the inputs of the later cases are the outputs of the earlier ones, as in
/// the pipeline.
pub fn texts(pages: &[String]) -> (Vec<String>, Vec<String>) {
    let texts: Vec<String> =
        pages.iter().map(|p| overlap::bytes::extract::html::html_to_text(p).text).collect();
    let normalized = texts
        .iter()
        .map(|t| {
            let mut out = String::new();
            overlap::bytes::extract::normalize::normalize(t, &mut out);
            out
        })
        .collect();
    (texts, normalized)
}

/// SplitMix64: small, fast and good enough for making test input.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi].
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() - 1)]
    }
}

/// A made-up vocabulary drawn with Zipf frequencies.
pub struct Words {
    words: Vec<String>,
    /// Cumulative weights, for sampling by binary search.
    cum: Vec<f64>,
}

impl Words {
    pub fn new(rng: &mut Rng, n: usize) -> Words {
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

    pub fn word(&self, rng: &mut Rng) -> &str {
        let u = rng.f64() * self.cum[self.cum.len() - 1];
        let i = self.cum.partition_point(|&c| c <= u).min(self.words.len() - 1);
        &self.words[i]
    }

    /// `n` words separated by spaces, appended to `out`.
    pub fn push_words(&self, rng: &mut Rng, n: usize, capital: bool, out: &mut String) {
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

    pub fn sentence(&self, rng: &mut Rng, out: &mut String) {
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
pub struct Template {
    head: String,
    top: String,
    bottom: String,
}

pub fn make_template(rng: &mut Rng, words: &Words) -> Template {
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
pub fn make_pages(rng: &mut Rng, words: &Words, total: usize) -> Vec<String> {
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

/// The pages as a WARC file of `response` records (with an HTTP header),
/// each record its own gzip member when `gzip` (as crawlers write them).
pub fn warc_file(pages: &[String], gzip: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let http = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            page.len()
        );
        let mut record = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{i:012x}>\r\n\
             WARC-Date: 2024-03-01T06:00:00Z\r\nWARC-Target-URI: http://site{}.example/page/{i}.html\r\n\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
            i % 40,
            http.len() + page.len()
        )
        .into_bytes();
        record.extend_from_slice(http.as_bytes());
        record.extend_from_slice(page.as_bytes());
        record.extend_from_slice(b"\r\n\r\n");
        if gzip {
            let mut gz = GzEncoder::new(Vec::new(), Compression::new(6));
            gz.write_all(&record).expect("writing to memory");
            out.extend_from_slice(&gz.finish().expect("writing to memory"));
        } else {
            out.extend_from_slice(&record);
        }
    }
    out
}
