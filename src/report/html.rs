//! `report.html`: the report as one self-contained page (inline CSS and
//! SVG, no scripts, no fetches), for people rather than pipelines.

use std::fmt::Write;

use super::Report;
use super::histogram::{BINS, Histogram};

const STYLE: &str = r#"
:root { --ink:#1d2430; --muted:#5b6575; --line:#e3e7ee; --bg:#f6f8fb; --exact:#1f4e8c; --near:#6fa8dc; --warn:#b54708; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
main { max-width:1080px; margin:0 auto; padding:32px 28px 48px; }
h1 { font-size:26px; margin:0 0 4px; letter-spacing:-0.01em; }
h2 { font-size:18px; margin:0 0 12px; }
.sub { color:var(--muted); margin:0 0 24px; }
.cards { display:grid; grid-template-columns:repeat(4, 1fr); gap:14px; margin-bottom:22px; }
.card { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 16px; }
.card .v { font-size:26px; font-weight:650; font-variant-numeric:tabular-nums; }
.card .l { color:var(--muted); font-size:13px; }
section { background:#fff; border:1px solid var(--line); border-radius:10px; padding:20px 22px; margin-bottom:18px; }
.note { color:var(--muted); font-size:13px; margin:10px 0 0; }
table { border-collapse:collapse; width:100%; font-size:14px; }
th, td { text-align:left; padding:7px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); font-weight:600; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.url { word-break:break-all; color:#2b4a75; }
.badge { display:inline-block; padding:1px 8px; border-radius:9px; font-size:12px; background:#fdecdc; color:var(--warn); }
.empty { color:var(--muted); font-style:italic; }
.legend { display:flex; gap:18px; font-size:13px; color:var(--muted); margin-bottom:6px; }
.legend i { display:inline-block; width:12px; height:12px; border-radius:2px; margin-right:6px; vertical-align:-1px; }
ul.examples { margin:12px 0 0; padding:0; list-style:none; font-size:13px; color:var(--muted); }
ul.examples li { margin:4px 0; }
ul.examples .url { color:#2b4a75; overflow-wrap:anywhere; }
ul.examples .kind { display:inline-block; min-width:52px; font-weight:600; color:var(--ink); }
footer { color:var(--muted); font-size:12px; text-align:center; margin-top:18px; }
"#;

/// Rows a table on the page shows; the CSV files have them all.
const TOP_ROWS: usize = 20;

/// Bar colors of the near-replica series, this run's first.
const NEAR_COLORS: [&str; 4] = ["var(--near)", "#2a9d8f", "#e9a23b", "#9b72cf"];

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole number with thousands separators.
fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun in the number it needs.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", num(n), if n == 1 { one } else { many })
}

/// A byte count in readable units.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 { format!("{n} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// Renders the page.
pub fn render(r: &Report) -> String {
    let mut h = String::with_capacity(32 << 10);
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Crawl audit</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>"
    );
    let _ = writeln!(
        h,
        "<h1>Crawl audit</h1>\n<p class=\"sub\">{} ({} empty), {} of payload &middot; chunking <code>{}</code>, \
         T&nbsp;=&nbsp;{} &middot; scope {} &middot; overlap {}</p>",
        plural(r.documents, "document", "documents"),
        num(r.empty_documents),
        bytes(r.bytes),
        escape(&r.chunk),
        r.threshold,
        escape(&r.scope),
        escape(&r.overlap_version)
    );
    cards(&mut h, r);
    if let Some(s) = &r.since_previous {
        since_previous(&mut h, s);
    }
    let mut series = vec![("exact copies".to_string(), &r.histogram.exact, "var(--exact)")];
    for (k, run) in r.runs.iter().enumerate() {
        let name = format!("near-replicas: {}, T = {}", run.chunk, run.threshold);
        series.push((name, &run.near, NEAR_COLORS[k % NEAR_COLORS.len()]));
    }
    let _ = writeln!(
        h,
        "<section>\n<h2>Replicas per document</h2>\n<div class=\"legend\">{}</div>\n{}\
         <p class=\"note\">For each non-empty document, the number of replicas counting itself, as a percentage of documents \
         (after Shivakumar &amp; Garcia-Molina, Figure&nbsp;1). Near-replicas are the document's connected component over exact \
         copies and pairs sharing at least T chunks.</p>\n</section>",
        series
            .iter()
            .map(|(name, _, color)| format!(
                "<span><i style=\"background:{color}\"></i>{}</span>",
                escape(name)
            ))
            .collect::<String>(),
        chart(&series)
    );
    savings(&mut h, r);
    groups(&mut h, r);
    mirrors(&mut h, r);
    aliases(&mut h, r);
    flags(&mut h, r);
    h.push_str(
        "<footer>Tables: groups.csv, hosts.csv, aliases.csv, flags.csv &middot; figures: report.json</footer>\n</main>\n</body>\n</html>\n",
    );
    h
}

fn cards(h: &mut String, r: &Report) {
    let card = |h: &mut String, value: String, label: &str| {
        let _ = writeln!(
            h,
            "<div class=\"card\"><div class=\"v\">{value}</div><div class=\"l\">{label}</div></div>"
        );
    };
    h.push_str("<div class=\"cards\">\n");
    card(h, num(r.documents), "documents");
    card(h, format!("{:.1}%", r.histogram.exact_replicated_percent), "have an exact copy");
    card(h, format!("{:.1}%", r.histogram.near_replicated_percent), "have a near-replica");
    card(h, format!("{:.1}%", r.savings.near.pages_percent), "of pages a recrawl could skip");
    h.push_str("</div>\n");
}

/// The grouped bar chart: exact and near side by side for every bin.
fn chart(series: &[(String, &Histogram, &str)]) -> String {
    let (w, ht) = (980.0, 300.0);
    let (left, right, top, bottom) = (48.0, 12.0, 16.0, 44.0);
    let plot_w = w - left - right;
    let plot_h = ht - top - bottom;
    let max = series.iter().flat_map(|(_, h, _)| h.percent).fold(0.0f64, f64::max);
    let step = if max > 50.0 {
        20.0
    } else if max > 20.0 {
        10.0
    } else if max > 10.0 {
        5.0
    } else {
        2.0
    };
    let y_max = ((max / step).ceil() * step).max(step);
    let y = |p: f64| top + plot_h - p / y_max * plot_h;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg viewBox=\"0 0 {w} {ht}\" width=\"100%\" role=\"img\" aria-label=\"Replicas per document\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"inherit\" font-size=\"12\">"
    );
    let mut t = 0.0;
    while t <= y_max + 1e-9 {
        let yy = y(t);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#e3e7ee\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#5b6575\">{t:.0}%</text>",
            w - right,
            left - 8.0,
            yy + 4.0
        );
        t += step;
    }
    let slot = plot_w / BINS.len() as f64;
    let gap = slot * 0.04;
    let bar = (slot * 0.72 - gap * (series.len() as f64 - 1.0)) / series.len() as f64;
    // Value labels fit over bars up to three to a bin.
    let labels = series.len() <= 3;
    for (i, label) in BINS.iter().enumerate() {
        let x0 = left + slot * i as f64 + slot * 0.14;
        for (k, (name, h, color)) in series.iter().enumerate() {
            let (p, n) = (h.percent[i], h.documents[i]);
            let x = x0 + k as f64 * (bar + gap);
            if n == 0 {
                continue;
            }
            let yy = y(p);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{yy:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" rx=\"2\" style=\"fill:{color}\">\
                 <title>{}, {label}: {} ({p}%)</title></rect>",
                (top + plot_h - yy).max(0.0),
                escape(name),
                plural(n, "document", "documents")
            );
            if labels {
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#1d2430\" font-size=\"11\">{p:.1}</text>",
                    x + bar / 2.0,
                    yy - 4.0
                );
            }
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#1d2430\">{}</text>",
            left + slot * (i as f64 + 0.5),
            top + plot_h + 18.0,
            escape(label)
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#9aa4b2\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#5b6575\">replicas per document (counting itself)</text>\n</svg>",
        w - right,
        top + plot_h,
        top + plot_h,
        left + plot_w / 2.0,
        ht - 6.0
    );
    s
}

fn savings(h: &mut String, r: &Report) {
    h.push_str(
        "<section>\n<h2>What a recrawl could skip</h2>\n<table>\n<tr><th>keeping</th><th class=\"n\">pages skipped</th>\
         <th class=\"n\">of pages</th><th class=\"n\">bytes skipped</th><th class=\"n\">of bytes</th></tr>\n",
    );
    let row = |h: &mut String, what: &str, s: &super::savings::Skippable| {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}%</td><td class=\"n\">{}</td>\
             <td class=\"n\">{:.1}%</td></tr>",
            num(s.pages),
            s.pages_percent,
            bytes(s.bytes),
            s.bytes_percent
        );
    };
    row(h, "one copy of each exact group", &r.savings.exact);
    for run in &r.runs {
        let what = format!(
            "one page per near-replica cluster ({}, T&nbsp;=&nbsp;{})",
            escape(&run.chunk),
            run.threshold
        );
        row(h, &what, &run.savings_near);
    }
    let _ = writeln!(h, "</table>\n<p class=\"note\">{}</p>\n</section>", escape(r.savings.rule));
}

fn groups(h: &mut String, r: &Report) {
    let _ = writeln!(
        h,
        "<section>\n<h2>Largest replica groups</h2>\n<p class=\"note\" style=\"margin:0 0 10px\">{} of two or more \
         documents {} {}; the largest has {}. {} chained.</p>",
        plural(r.near.groups, "group", "groups"),
        if r.near.groups == 1 { "holds" } else { "hold" },
        plural(r.near.documents_in_groups, "document", "documents"),
        num(r.near.largest_group),
        if r.near.chained_groups == 1 {
            "One looks".to_string()
        } else {
            format!("{} look", num(r.near.chained_groups))
        }
    );
    if r.groups.top.is_empty() {
        h.push_str("<p class=\"empty\">No document has a replica.</p>\n</section>\n");
        return;
    }
    h.push_str(
        "<table>\n<tr><th>sample URL</th><th class=\"n\">documents</th><th class=\"n\">distinct texts</th>\
         <th class=\"n\">hosts</th><th class=\"n\">diameter</th><th></th></tr>\n",
    );
    for g in &r.groups.top {
        let _ = writeln!(
            h,
            "<tr><td class=\"url\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            escape(&g.sample_url),
            num(g.documents),
            num(g.centers),
            num(g.hosts),
            g.diameter.map_or("&ndash;".to_string(), |d| d.to_string()),
            if g.chained { "<span class=\"badge\">chained</span>" } else { "" }
        );
    }
    let _ = writeln!(h, "</table>\n<p class=\"note\">{}</p>\n</section>", escape(&r.groups.chain_rule));
}

/// The comparison with the previous analysis of a chain.
fn since_previous(h: &mut String, s: &super::since::SincePrevious) {
    let _ = writeln!(h, "<section>\n<h2>Since the previous analysis</h2>");
    let p = &s.pages;
    h.push_str("<table>\n<tr><th>pages</th><th class=\"n\">URLs</th></tr>\n");
    for (what, n) in [
        ("new", p.new),
        ("unchanged", p.unchanged),
        ("modified", p.modified),
        ("lost (HTTP error)", p.lost),
        ("orphaned (not in the new inputs)", p.orphaned),
        ("redirected", p.redirected),
        ("returned", p.returned),
        ("lost or orphaned, still kept (--keep-missing)", p.kept_missing),
    ] {
        let _ = writeln!(h, "<tr><td>{what}</td><td class=\"n\">{}</td></tr>", num(n));
    }
    h.push_str("</table>\n");
    h.push_str(
        "<table>\n<tr><th>pages in both analyses</th><th class=\"n\">became</th><th class=\"n\">stopped</th></tr>\n",
    );
    for (what, b) in [("with an exact copy", &s.exact), ("with a near-replica", &s.near)] {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            num(b.became),
            num(b.stopped)
        );
    }
    let _ = writeln!(
        h,
        "</table>\n<p class=\"note\" style=\"margin:0 0 10px\">{} promoted to center of their exact group.</p>",
        plural(s.promotions, "copy", "copies")
    );
    let g = &s.groups;
    let _ = writeln!(
        h,
        "<table>\n<tr><th>near-replica groups ({} before, {} now)</th><th class=\"n\">groups</th></tr>",
        num(g.before),
        num(g.after)
    );
    for (what, n) in [
        ("unchanged", g.unchanged),
        ("grew", g.grew),
        ("shrank", g.shrank),
        ("changed members, same size", g.changed_members),
        ("split", g.split),
        ("merged", g.merged),
        ("appeared", g.appeared),
        ("vanished", g.vanished),
    ] {
        let _ = writeln!(h, "<tr><td>{what}</td><td class=\"n\">{}</td></tr>", num(n));
    }
    h.push_str(
        "</table>\n<table>\n<tr><th>the previous analysis said a recrawl could skip</th>\
         <th class=\"n\">pages</th><th class=\"n\">found unchanged</th><th class=\"n\"></th></tr>\n",
    );
    for (what, c) in [
        ("keeping one copy of each exact group", &s.recrawl.exact),
        ("skipping near-replicas too", &s.recrawl.near),
    ] {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}%</td></tr>",
            num(c.skippable),
            num(c.unchanged),
            c.unchanged_percent
        );
    }
    let _ = writeln!(h, "</table>\n<p class=\"note\">{}</p>\n</section>", escape(s.rules));
}

fn mirrors(h: &mut String, r: &Report) {
    if r.scope == "host" {
        let _ = writeln!(
            h,
            "<section>\n<h2>Mirrored hosts</h2>\n<p class=\"note\">{}</p>\n</section>",
            escape(r.hosts.scope_note.as_deref().unwrap_or_default())
        );
        return;
    }
    let _ = writeln!(
        h,
        "<section>\n<h2>Mirrored hosts</h2>\n<p class=\"note\" style=\"margin:0 0 10px\">{} share replicas; {} {}.</p>",
        plural(r.hosts.host_pairs, "host pair", "host pairs"),
        num(r.hosts.mirror_pairs),
        if r.hosts.mirror_pairs == 1 { "is a mirror" } else { "are mirrors" }
    );
    if r.hosts.mirrors.is_empty() {
        h.push_str("<p class=\"empty\">No mirrored hosts.</p>\n");
    } else {
        h.push_str("<table>\n<tr><th>host A</th><th>host B</th><th class=\"n\">of A replicated on B</th><th class=\"n\">of B replicated on A</th></tr>\n");
        for m in r.hosts.mirrors.iter().take(TOP_ROWS) {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{:.0}% <span class=\"note\">({}/{})</span></td>\
                 <td class=\"n\">{:.0}% <span class=\"note\">({}/{})</span></td></tr>",
                escape(&m.host_a),
                escape(&m.host_b),
                m.coverage_a,
                m.replicated_a_on_b,
                m.docs_a,
                m.coverage_b,
                m.replicated_b_on_a,
                m.docs_b
            );
        }
        h.push_str("</table>\n");
        if r.hosts.mirrors.len() > TOP_ROWS {
            let _ = writeln!(
                h,
                "<p class=\"note\">The {TOP_ROWS} most covered of {} mirror pairs; all host pairs are in hosts.csv.</p>",
                num(r.hosts.mirrors.len() as u64)
            );
        }
    }
    let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&r.hosts.mirror_rule));
    if let Some(note) = &r.hosts.scope_note {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(note));
    }
    h.push_str("</section>\n");
}

fn aliases(h: &mut String, r: &Report) {
    h.push_str(
        "<section>\n<h2>URL aliases</h2>\n<table>\n<tr><th>URLs differ only by</th><th class=\"n\">pairs</th>\
         <th class=\"n\">exact</th><th class=\"n\">near</th><th class=\"n\">different</th></tr>\n",
    );
    let a = &r.aliases;
    for (name, c) in [
        ("<code>www.</code> prefix", &a.www),
        ("scheme (http/https)", &a.scheme),
        ("trailing slash or index page", &a.index),
        ("query string", &a.query),
    ] {
        let _ = writeln!(
            h,
            "<tr><td>{name}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            num(c.pairs),
            num(c.exact),
            num(c.near),
            num(c.different + c.empty)
        );
    }
    h.push_str("</table>\n");
    if !r.alias_examples.is_empty() {
        h.push_str("<ul class=\"examples\">\n");
        for e in &r.alias_examples {
            let _ = writeln!(
                h,
                "<li><span class=\"kind\">{}</span> <span class=\"url\">{}</span> and <span class=\"url\">{}</span>: {}</li>",
                e.kind.name(),
                escape(&e.url_a),
                escape(&e.url_b),
                e.content.name()
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<p class=\"note\">Exact and near pairs are copies that URL normalization would have avoided fetching; \
         different pairs show where it would be wrong.</p>\n</section>\n",
    );
}

fn flags(h: &mut String, r: &Report) {
    let f = &r.flags;
    let _ = writeln!(
        h,
        "<section>\n<h2>Double-content flags</h2>\n<table>\n<tr><th>flag</th><th class=\"n\">not unique</th></tr>\n\
         <tr><td><code>www_unique</code></td><td class=\"n\">{}</td></tr>\n\
         <tr><td><code>http_unique</code></td><td class=\"n\">{}</td></tr>\n\
         <tr><td><code>exact_signature_unique</code></td><td class=\"n\">{}</td></tr>\n\
         <tr><td><code>fuzzy_signature_unique</code></td><td class=\"n\">{}</td></tr>\n\
         <tr><td><code>title_unique</code></td><td class=\"n\">{}</td></tr>\n</table>\n\
         <p class=\"note\">Per document in flags.csv, after YaCy's double-content detection. Fuzzy signatures of {}, MIN_TOKEN_LEN&nbsp;=&nbsp;{}, \
         QUANT_RATE&nbsp;=&nbsp;{}.</p>\n</section>",
        num(f.www_not_unique),
        num(f.http_not_unique),
        num(f.exact_signature_not_unique),
        num(f.fuzzy_signature_not_unique),
        num(f.title_not_unique),
        plural(f.fuzzy_signatures, "document", "documents"),
        f.min_token_len,
        f.quant_rate
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_formats() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(num(1234567), "1,234,567");
        assert_eq!(num(12), "12");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_500_000), "1.5 MB");
    }
}
