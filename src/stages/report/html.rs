//! `report.html`: the report as one self-contained page for people rather
//! than pipelines: inline CSS, SVG and script, nothing fetched.
//!
//! Every URL is a link (`rel="noreferrer"`, http and https only: a crawl's
//! URLs are not to be trusted with other schemes). Every table sorts by
//! its column headers and, past ten rows, filters, through the small
//! script in `report.js`; without it the page shows every row of every
//! table, and each group still opens to its members (`<details>`). Tables
//! wrap their long names rather than widen the page, from 700 pixels up.
//! How many rows each table lists is bounded (see the report module's
//! "report.html's bounds"), so the page of a crawl of millions of
//! documents opens as fast as that of a small one.

use std::fmt::Write;

use super::Report;
use super::histogram::{BINS, Histogram};
use super::quality::{self, Quality};

const STYLE: &str = r#"
:root { --ink:#1d2430; --muted:#5b6575; --line:#e3e7ee; --bg:#f6f8fb; --exact:#1f4e8c; --near:#6fa8dc; --warn:#b54708; --link:#2b4a75; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
main { max-width:1080px; margin:0 auto; padding:32px 28px 48px; }
h1 { font-size:26px; margin:0 0 4px; letter-spacing:-0.01em; }
h2 { font-size:18px; margin:0 0 12px; }
h3 { font-size:15px; margin:18px 0 8px; }
a { color:var(--link); }
.sub { color:var(--muted); margin:0 0 12px; }
nav.toc { display:flex; flex-wrap:wrap; gap:4px 16px; font-size:13px; margin:0 0 20px; }
nav.toc a { text-decoration:none; }
.cards { display:grid; grid-template-columns:repeat(4, 1fr); gap:14px; margin-bottom:18px; }
.card { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 16px; }
.card .v { font-size:26px; font-weight:650; font-variant-numeric:tabular-nums; }
.card .l { color:var(--muted); font-size:13px; }
.alert { background:#fff4e5; border:1px solid #f3c58c; color:#7a3e00; border-radius:10px; padding:12px 16px; margin:0 0 18px; }
.ok { color:#1e7b4f; }
section { background:#fff; border:1px solid var(--line); border-radius:10px; padding:20px 22px; margin-bottom:18px; }
.note { color:var(--muted); font-size:13px; margin:10px 0 0; }
.lead { margin:0 0 12px; }
.tw { overflow-x:auto; }
.tw + .tw, .tw + div.filter, .tw + p.note { margin-top:16px; }
table { border-collapse:collapse; width:100%; font-size:14px; }
th, td { text-align:left; padding:7px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); font-weight:600; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; }
td.n { white-space:nowrap; }
td.url, td.wrap, td.file { overflow-wrap:anywhere; }
td.file { min-width:8em; }
td.url a, li a, .examples a { word-break:break-all; }
tfoot td { font-weight:600; border-bottom:0; }
th button.sort { font:inherit; color:inherit; text-transform:inherit; letter-spacing:inherit; text-align:inherit; background:none; border:0; padding:0; cursor:pointer; }
th[aria-sort=ascending] button.sort::after { content:" \25B2"; }
th[aria-sort=descending] button.sort::after { content:" \25BC"; }
div.filter { display:flex; flex-wrap:wrap; gap:4px 12px; align-items:center; margin:0 0 8px; font-size:13px; color:var(--muted); }
div.filter input { font:inherit; padding:5px 9px; border:1px solid var(--line); border-radius:6px; width:min(100%, 300px); }
.badge { display:inline-block; padding:1px 8px; border-radius:9px; font-size:12px; background:#fdecdc; color:var(--warn); }
.muted, .id { color:var(--muted); }
.id { font-variant-numeric:tabular-nums; font-size:12px; }
details.members { display:inline; margin-left:6px; font-size:13px; }
details.members[open] { display:block; margin:2px 0 0; }
details.members summary { display:inline; cursor:pointer; color:var(--muted); white-space:nowrap; }
details.members summary::before { content:"\25B8  "; }
details.members[open] summary::before { content:"\25BE  "; }
details.members ol { margin:6px 0 2px; padding-left:24px; }
details.members li { margin:2px 0; }
.empty { color:var(--muted); font-style:italic; }
.legend { display:flex; flex-wrap:wrap; gap:4px 18px; font-size:13px; color:var(--muted); margin-bottom:6px; }
.legend i { display:inline-block; width:12px; height:12px; border-radius:2px; margin-right:6px; vertical-align:-1px; }
ul.examples { margin:12px 0 0; padding:0; list-style:none; font-size:13px; color:var(--muted); }
ul.examples li { margin:4px 0; }
ul.examples .kind { display:inline-block; min-width:52px; font-weight:600; color:var(--ink); }
footer { color:var(--muted); font-size:12px; text-align:center; margin-top:18px; }
@media (max-width:760px) {
  main { padding:18px 10px 32px; }
  section { padding:14px 12px; }
  .cards { grid-template-columns:repeat(2, 1fr); gap:10px; }
  table { font-size:13px; }
  th, td { padding:6px 5px; }
  th { font-size:11px; letter-spacing:0; }
}
"#;

/// The page's script (sorting and filtering), inlined.
const SCRIPT: &str = include_str!("report.js");

/// Rows the mirror table lists, most covered first; hosts.csv has them all.
pub const TABLE_ROWS: usize = 100;

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

/// The characters of a URL a link shows; a longer one is cut (its target
/// is whole), so that thousands of them keep the page small.
pub const URL_SHOWN: usize = 160;

/// A URL as a link that sends no referrer; one that is not http(s) (a
/// `javascript:` URL in a crawl, say) is shown as text, and a missing
/// one says so.
pub fn link(url: &str) -> String {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let shown = match url.char_indices().nth(URL_SHOWN) {
        Some((cut, _)) => format!("{}&hellip;", escape(&url[..cut])),
        None => escape(url),
    };
    match scheme.as_deref() {
        _ if url.is_empty() => "<span class=\"muted\">(no URL)</span>".to_string(),
        Some("http" | "https") => format!("<a href=\"{}\" rel=\"noreferrer\">{shown}</a>", escape(url)),
        _ => shown,
    }
}

/// A host name that may wrap after its dots, where a reader expects it
/// to, in a narrow column.
fn host(name: &str) -> String {
    escape(name).replace('.', ".<wbr>")
}

/// An input's path, which may wrap after its slashes.
fn path(name: &str) -> String {
    escape(name).replace('/', "/<wbr>")
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

/// A number cell that sorts by its value.
fn n_cell(n: u64) -> String {
    format!("<td class=\"n\" data-v=\"{n}\">{}</td>", num(n))
}

/// Opens a table: its scrolling frame (a last resort; tables are made to
/// fit), its header row, its body. `columns` are (label, numeric).
fn table_start(h: &mut String, columns: &[(&str, bool)]) {
    h.push_str("<div class=\"tw\"><table>\n<thead><tr>");
    for &(label, numeric) in columns {
        let _ = write!(h, "<th{}>{label}</th>", if numeric { " class=\"n\"" } else { "" });
    }
    h.push_str("</tr></thead>\n<tbody>\n");
}

fn table_end(h: &mut String) {
    h.push_str("</tbody>\n</table></div>\n");
}

/// A table of counts, one row per (label, count); labels are HTML.
fn counts_table(h: &mut String, columns: [&str; 2], rows: impl IntoIterator<Item = (String, u64)>) {
    table_start(h, &[(columns[0], false), (columns[1], true)]);
    for (label, n) in rows {
        let _ = writeln!(h, "<tr><td>{label}</td>{}</tr>", n_cell(n));
    }
    table_end(h);
}

/// Renders the page.
pub fn render(r: &Report) -> String {
    let mut h = String::with_capacity(64 << 10);
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>Crawl audit</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>"
    );
    let documents = match &r.current_crawl {
        Some(c) => format!(
            "{} of this crawl ({} empty) and {} kept while missing",
            plural(c.documents, "document", "documents"),
            num(c.empty_documents),
            num(c.kept_missing)
        ),
        None => {
            format!("{} ({} empty)", plural(r.documents, "document", "documents"), num(r.empty_documents))
        }
    };
    let _ = writeln!(
        h,
        "<h1>Crawl audit</h1>\n<p class=\"sub\">{documents}, {} of payload &middot; chunking <code>{}</code>, \
         {} &middot; scope {} &middot; overlap {}</p>",
        bytes(r.bytes),
        escape(&r.chunk),
        escape(&r.criterion).replace(' ', "&nbsp;"),
        escape(&r.scope),
        escape(&r.overlap_version)
    );
    let mut toc = Vec::new();
    if !r.hosts.mirror_sets.is_empty() {
        toc.push(("mirror-sets", "Mirror sets"));
    }
    toc.extend([("hosts", "Hosts"), ("groups", "Groups"), ("replicas", "Replicas"), ("savings", "Savings")]);
    toc.extend([
        ("mirrors", "Mirrors"),
        ("aliases", "URL aliases"),
        ("flags", "Flags"),
        ("quality", "Data quality"),
    ]);
    if r.since_previous.is_some() {
        toc.insert(usize::from(!r.hosts.mirror_sets.is_empty()), ("since", "Since the previous analysis"));
    }
    if r.against.is_some() {
        let at = usize::from(!r.hosts.mirror_sets.is_empty()) + usize::from(r.since_previous.is_some());
        toc.insert(at, ("against", "Against the reference"));
    }
    h.push_str("<nav class=\"toc\">");
    for (id, name) in toc {
        let _ = write!(h, "<a href=\"#{id}\">{name}</a>");
    }
    h.push_str("</nav>\n");
    cards(&mut h, r);
    if let Some(q) = r.quality.as_ref().filter(|q| q.has_problems()) {
        alert(&mut h, q);
    }
    for w in &r.warnings {
        let _ = writeln!(
            h,
            "<p class=\"alert\" role=\"status\"><strong>Replication may be missed:</strong> {}.</p>",
            escape(w)
        );
    }
    mirror_sets(&mut h, r);
    if let Some(s) = &r.since_previous {
        since_previous(&mut h, s);
    }
    if let Some(a) = &r.against {
        against(&mut h, a);
    }
    hosts(&mut h, r);
    groups(&mut h, r);
    let mut series = vec![("exact copies".to_string(), &r.histogram.exact, "var(--exact)")];
    for (k, run) in r.runs.iter().enumerate() {
        let name = format!("near-replicas: {}, {}", run.chunk, run.criterion);
        series.push((name, &run.near, NEAR_COLORS[k % NEAR_COLORS.len()]));
    }
    let _ = writeln!(
        h,
        "<section id=\"replicas\">\n<h2>Replicas per document</h2>\n<div class=\"legend\">{}</div>\n{}\
         <p class=\"note\">For each non-empty document, the number of replicas counting itself, as a percentage of documents \
         (after Shivakumar &amp; Garcia-Molina, Figure&nbsp;1). Near-replicas are the document's connected component over exact \
         copies and Overlap-table pairs ({}).</p>\n</section>",
        series
            .iter()
            .map(|(name, _, color)| format!(
                "<span><i style=\"background:{color}\"></i>{}</span>",
                escape(name)
            ))
            .collect::<String>(),
        chart(&series),
        escape(&r.criterion)
    );
    savings(&mut h, r);
    mirrors(&mut h, r);
    aliases(&mut h, r);
    flags(&mut h, r);
    data_quality(&mut h, r.quality.as_ref());
    let _ = writeln!(
        h,
        "<footer>Tables: groups.csv, host-summary.csv, hosts.csv, aliases.csv, flags.csv, and docs.csv's near_group \
         &middot; figures: report.json &middot; how the inputs were read: stats.json</footer>\n</main>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>"
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
    // A chain's headline is this crawl's documents; the pages kept while
    // missing are counted apart, under the first figure.
    let (documents, label, exact, near, skip) = match &r.current_crawl {
        Some(c) => {
            let kept = if c.kept_missing == 0 {
                String::new()
            } else {
                format!(
                    "<br><span title=\"lost or orphaned pages kept by --keep-missing, not counted here\">\
                     + {} kept while missing</span>",
                    num(c.kept_missing)
                )
            };
            let label = format!("documents in this crawl{kept}");
            (c.documents, label, c.exact_copy_percent, c.near_replica_percent, c.skippable_near_percent)
        }
        None => (
            r.documents,
            "documents".to_string(),
            r.histogram.exact_replicated_percent,
            r.histogram.near_replicated_percent,
            r.savings.near.pages_percent,
        ),
    };
    card(h, num(documents), &label);
    card(h, format!("{exact:.1}%"), "have an exact copy");
    card(h, format!("{near:.1}%"), "have a near-replica");
    card(h, format!("{skip:.1}%"), "of pages a recrawl could skip");
    h.push_str("</div>\n");
}

/// What went wrong in reading, above everything else: a run that skipped
/// corrupt records must not look like one that read every record.
fn alert(h: &mut String, q: &Quality) {
    let s = &q.summary;
    let mut what = Vec::new();
    if s.corrupt_records > 0 {
        what.push(format!(
            "{} skipped as corrupt, in {}",
            plural(s.corrupt_records, "record was", "records were"),
            plural(s.inputs_with_corrupt_records, "input", "inputs")
        ));
    }
    if s.inputs_skipped > 0 {
        what.push(format!("{} skipped whole", plural(s.inputs_skipped, "input was", "inputs were")));
    }
    if s.capped_documents > 0 {
        what.push(format!(
            "{} cut at --max-doc-bytes",
            plural(s.capped_documents, "document was", "documents were")
        ));
    }
    let _ = writeln!(
        h,
        "<p class=\"alert\" role=\"status\"><strong>Not every record was read:</strong> {}. \
         <a href=\"#quality\">Data quality</a></p>",
        what.join("; ")
    );
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
    h.push_str("<section id=\"savings\">\n<h2>What a recrawl could skip</h2>\n");
    table_start(
        h,
        &[
            ("keeping", false),
            ("pages skipped", true),
            ("of pages", true),
            ("bytes skipped", true),
            ("of bytes", true),
        ],
    );
    let row = |h: &mut String, what: &str, s: &crate::store::analysis::savings::Skippable| {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td>{}<td class=\"n\" data-v=\"{}\">{:.1}%</td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{}\">{:.1}%</td></tr>",
            n_cell(s.pages),
            s.pages_percent,
            s.pages_percent,
            s.bytes,
            bytes(s.bytes),
            s.bytes_percent,
            s.bytes_percent
        );
    };
    row(h, "one copy of each exact group", &r.savings.exact);
    for run in &r.runs {
        let what = format!(
            "one page per near-replica cluster ({}, {})",
            escape(&run.chunk),
            escape(&run.criterion).replace(' ', "&nbsp;")
        );
        row(h, &what, &run.savings_near);
    }
    table_end(h);
    let keep = match r.savings.keep.as_str() {
        "input-order" => String::new(),
        rule => format!(" Pages are taken in the order of --keep {rule}, not by docID."),
    };
    let _ = writeln!(h, "<p class=\"note\">{}{}</p>\n</section>", escape(r.savings.rule), escape(&keep));
}

fn groups(h: &mut String, r: &Report) {
    let _ = writeln!(
        h,
        "<section id=\"groups\">\n<h2>Largest replica groups</h2>\n<p class=\"lead\">{} of two or more \
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
    if r.shown_groups.is_empty() {
        h.push_str("<p class=\"empty\">No document has a replica.</p>\n</section>\n");
        return;
    }
    table_start(
        h,
        &[
            ("group", true),
            ("sample URL and members", false),
            ("documents", true),
            ("hosts it spans", false),
            ("distinct texts", true),
            ("diameter", true),
            ("chained", false),
        ],
    );
    for s in &r.shown_groups {
        let g = &s.group;
        let _ = write!(
            h,
            "<tr><td class=\"n\" data-v=\"{0}\">{0}</td><td class=\"url\">{1} <details class=\"members\">\
             <summary>members</summary><ol>",
            g.group,
            link(&g.sample_url),
        );
        for m in &s.members {
            let _ = write!(h, "<li>{} <span class=\"id\">#{}", link(&m.url), m.doc_id);
            if let Some(c) = m.copy_of {
                let _ = write!(h, ", exact copy of #{c}");
            }
            h.push_str("</span></li>");
        }
        let more = g.documents.saturating_sub(s.members.len() as u64);
        if more > 0 {
            let _ = write!(
                h,
                "<li class=\"muted\">&hellip; and {} more: the rows of docs.csv whose near_group is {}</li>",
                num(more),
                g.group
            );
        }
        let _ = writeln!(
            h,
            "</ol></details></td>{}{}{}<td class=\"n\" data-v=\"{}\">{}</td>{}</tr>",
            n_cell(g.documents),
            spans(g),
            n_cell(g.centers),
            g.diameter.map_or(String::new(), |d| d.to_string()),
            g.diameter.map_or("&ndash;".to_string(), |d| d.to_string()),
            if g.chained {
                "<td data-v=\"1\"><span class=\"badge\">chained</span></td>"
            } else {
                "<td data-v=\"0\" class=\"muted\">no</td>"
            }
        );
    }
    table_end(h);
    let listed = r.shown_groups.len() as u64;
    let _ = writeln!(
        h,
        "<p class=\"note\">{} Each opens to its first {} documents, smallest docID first (#docID); docs.csv's \
         near_group column names the group of every document, and groups.csv lists every group. {}</p>\n</section>",
        if listed < r.near.groups {
            format!("The {} largest of {} groups.", num(listed), num(r.near.groups))
        } else {
            format!("All {}.", plural(listed, "group", "groups"))
        },
        super::MEMBERS_SHOWN,
        escape(&r.groups.chain_rule)
    );
}

/// A group's hosts cell: how many it spans, and the first it names, each
/// with the group's documents there (sorts by the count).
fn spans(g: &super::groups::Group) -> String {
    let mut named: Vec<String> =
        g.first_hosts.iter().map(|s| format!("{} ({})", host(&s.host), num(s.documents))).collect();
    let more = g.hosts.saturating_sub(g.first_hosts.len() as u64);
    if more > 0 {
        named.push(format!("and {} more", num(more)));
    }
    let names = if named.is_empty() {
        String::new()
    } else {
        format!("<br><span class=\"muted\">{}</span>", named.join(", "))
    };
    format!(
        "<td class=\"wrap\" data-v=\"{}\"><strong>{}</strong>{names}</td>",
        g.hosts,
        plural(g.hosts, "host", "hosts")
    )
}

/// Per host: its documents with exact copies and near-replicas, and the
/// hosts it shares most with.
fn hosts(h: &mut String, r: &Report) {
    let _ = writeln!(
        h,
        "<section id=\"hosts\">\n<h2>Hosts</h2>\n<p class=\"lead\">{}{}</p>",
        plural(r.hosts.hosts, "host", "hosts"),
        if (r.host_rows.len() as u64) < r.hosts.hosts {
            format!(
                ", the {} with the most near-replicas listed (host-summary.csv has every host).",
                num(r.host_rows.len() as u64)
            )
        } else {
            ".".to_string()
        }
    );
    if r.host_rows.is_empty() {
        h.push_str("<p class=\"empty\">No document has a host.</p>\n</section>\n");
        return;
    }
    table_start(
        h,
        &[
            ("host", false),
            ("documents", true),
            ("with an exact copy", true),
            ("with a near-replica", true),
            ("a recrawl could skip", true),
            ("shares most with", false),
        ],
    );
    for row in &r.host_rows {
        let partners: Vec<String> =
            row.shares_most_with.iter().map(|(p, n)| format!("{} ({})", escape(p), num(*n))).collect();
        let share = |n: u64| {
            let p = super::histogram::percent(n, row.documents);
            format!(
                "<td class=\"n\" data-v=\"{p}\" title=\"{} of {}\">{p:.1}%</td>",
                num(n),
                plural(row.documents, "document", "documents")
            )
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"wrap\">{}</td>{}{}{}{}<td class=\"wrap\">{}</td></tr>",
            host(&row.host),
            n_cell(row.documents),
            share(row.exact_copies),
            share(row.near_replicas),
            share(row.skippable),
            if partners.is_empty() {
                "<span class=\"muted\">none</span>".to_string()
            } else {
                partners.join(", ")
            }
        );
    }
    table_end(h);
    h.push_str(
        "<p class=\"note\">Shares of each host's documents (hover for the counts; host-summary.csv has them). \
         A document counts when it has an exact copy, or a near-replica, anywhere in the crawl, and a recrawl could skip \
         it when a page it keeps stands for it (the savings' near-replica rule). A host shares with another the documents it has replicated there (an exact copy, or an Overlap-table pair: \
         direct links, as in hosts.csv); in brackets, how many.</p>\n</section>\n",
    );
}

/// The comparison with the previous analysis of a chain.
fn against(h: &mut String, a: &super::against::Against) {
    let _ = writeln!(h, "<section id=\"against\">\n<h2>Against the reference</h2>");
    let _ = writeln!(
        h,
        "<p>The reference <code>{}</code> holds {:.1}% of this crawl's {} ({} exact copies, {} near-replicas), \
         and {:.1}% of their chunks. {}</p>",
        escape(&a.reference),
        a.held_percent,
        plural(a.documents, "page", "pages"),
        num(a.exact),
        num(a.near),
        a.chunks_percent,
        escape(a.rule)
    );
    table_start(
        h,
        &[("host", false), ("pages", true), ("held", true), ("held %", true), ("chunks held %", true)],
    );
    for x in &a.hosts {
        let _ = writeln!(
            h,
            "<tr><td>{}</td>{}{}<td class=\"n\" data-v=\"{}\">{:.1}</td><td class=\"n\" data-v=\"{}\">{:.1}</td></tr>",
            host(&x.host),
            n_cell(x.documents),
            n_cell(x.held),
            x.held_percent,
            x.held_percent,
            x.chunks_percent,
            x.chunks_percent
        );
    }
    table_end(h);
    if a.host_count > a.hosts.len() as u64 {
        let _ = writeln!(
            h,
            "<p class=\"note\" style=\"margin:0 0 10px\">The {} hosts with the most pages of {}; against.csv \
             has every page.</p>",
            a.hosts.len(),
            num(a.host_count)
        );
    }
    h.push_str("</section>\n");
}

fn since_previous(h: &mut String, s: &super::since::SincePrevious) {
    let _ = writeln!(h, "<section id=\"since\">\n<h2>Since the previous analysis</h2>");
    let p = &s.pages;
    let pages = [
        ("new", p.new),
        ("moved (a new URL with the text of a page gone)", p.moved),
        ("unchanged", p.unchanged),
        ("modified", p.modified),
        ("lost (HTTP error)", p.lost),
        ("orphaned (not in the new inputs)", p.orphaned),
        ("redirected", p.redirected),
        ("returned", p.returned),
        ("lost or orphaned, still kept (--keep-missing)", p.kept_missing),
    ];
    counts_table(h, ["pages", "URLs"], pages.map(|(what, n)| (what.to_string(), n)));
    if !s.moves.is_empty() {
        table_start(h, &[("moved to", false), ("from", false)]);
        for m in &s.moves {
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", link(&m.url), link(&m.from_url));
        }
        table_end(h);
        if p.moved > s.moves.len() as u64 {
            let _ = writeln!(
                h,
                "<p class=\"note\" style=\"margin:0 0 10px\">The first {} of {} moves; changes.csv has them all \
                 (<code>moved_from</code>).</p>",
                s.moves.len(),
                num(p.moved)
            );
        }
    }
    let m = &s.modified;
    if m.measured > 0 {
        let title = format!(
            "modified pages by the share of their previous text kept (median {:.1}%)",
            m.median_kept_percent
        );
        let rows = m.kept_tenths.iter().enumerate().map(|(i, &n)| {
            let what = match i {
                10 => "all of it (only additions)".to_string(),
                0 => "under 10%".to_string(),
                i => format!("{}% to under {}%", i * 10, i * 10 + 10),
            };
            (what, n)
        });
        counts_table(h, [&title, "pages"], rows);
    }
    table_start(h, &[("pages in both analyses", false), ("became", true), ("stopped", true)]);
    for (what, b) in [("with an exact copy", &s.exact), ("with a near-replica", &s.near)] {
        let _ = writeln!(h, "<tr><td>{what}</td>{}{}</tr>", n_cell(b.became), n_cell(b.stopped));
    }
    table_end(h);
    let _ = writeln!(
        h,
        "<p class=\"note\" style=\"margin:0 0 10px\">{} promoted to center of their exact group.</p>",
        plural(s.promotions, "copy", "copies")
    );
    let g = &s.groups;
    let title = format!("near-replica groups ({} before, {} now)", num(g.before), num(g.after));
    let groups = [
        ("unchanged", g.unchanged),
        ("grew", g.grew),
        ("shrank", g.shrank),
        ("changed members, same size", g.changed_members),
        ("split", g.split),
        ("merged", g.merged),
        ("appeared", g.appeared),
        ("vanished", g.vanished),
    ];
    counts_table(h, [&title, "groups"], groups.map(|(what, n)| (what.to_string(), n)));
    table_start(
        h,
        &[
            ("the previous analysis said a recrawl could skip", false),
            ("pages", true),
            ("found unchanged", true),
            ("", true),
        ],
    );
    for (what, c) in [
        ("keeping one copy of each exact group", &s.recrawl.exact),
        ("skipping near-replicas too", &s.recrawl.near),
    ] {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td>{}{}<td class=\"n\" data-v=\"{}\">{:.1}%</td></tr>",
            n_cell(c.skippable),
            n_cell(c.unchanged),
            c.unchanged_percent,
            c.unchanged_percent
        );
    }
    table_end(h);
    let _ = writeln!(h, "<p class=\"note\">{}</p>\n</section>", escape(s.rules));
}

/// Mirror sets shown on the first screen; report.json has them all.
const SETS_SHOWN: usize = 10;
/// Mirrors named in a set's row before "and N more".
const SET_MEMBERS_SHOWN: usize = 8;

/// The mirror sets, near the top: which sites are mirrors of which, a row
/// a site; nothing when no host mirrors another.
fn mirror_sets(h: &mut String, r: &Report) {
    let sets = &r.hosts.mirror_sets;
    if sets.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<section id=\"mirror-sets\">\n<h2>Mirror sets</h2>\n<p class=\"lead\">{} with {} \
         (<a href=\"#mirrors\">the pairs</a>; hosts.csv has them all).</p>",
        plural(sets.len() as u64, "site", "sites"),
        plural(sets.iter().map(|s| s.mirrors.len() as u64).sum(), "mirror", "mirrors"),
    );
    table_start(
        h,
        &[
            ("site", false),
            ("non-empty documents", true),
            ("its mirrors: share of the site on each, and of each on the site", false),
        ],
    );
    let pct = |p: Option<f64>| p.map_or("&ndash;".to_string(), |p| format!("{p:.0}%"));
    for set in sets.iter().take(SETS_SHOWN) {
        let mut named: Vec<String> = set
            .mirrors
            .iter()
            .take(SET_MEMBERS_SHOWN)
            .map(|m| {
                format!(
                    "{} <span class=\"muted\">({} of the site, {} of it)</span>",
                    host(&m.host),
                    pct(m.coverage_of_site),
                    pct(m.coverage_of_host)
                )
            })
            .collect();
        if set.mirrors.len() > SET_MEMBERS_SHOWN {
            named.push(format!("and {} more", num((set.mirrors.len() - SET_MEMBERS_SHOWN) as u64)));
        }
        let _ = writeln!(
            h,
            "<tr><td class=\"wrap\">{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"wrap\">{}</td></tr>",
            host(&set.site),
            set.site_docs,
            num(set.site_docs),
            named.join("; ")
        );
    }
    table_end(h);
    if sets.len() > SETS_SHOWN {
        let _ =
            writeln!(h, "<p class=\"note\">The {SETS_SHOWN} largest of {} sets.</p>", num(sets.len() as u64));
    }
    h.push_str("</section>\n");
}

fn mirrors(h: &mut String, r: &Report) {
    if r.scope == "host" {
        let _ = writeln!(
            h,
            "<section id=\"mirrors\">\n<h2>Mirrored hosts</h2>\n<p class=\"note\">{}</p>\n</section>",
            escape(r.hosts.scope_note.as_deref().unwrap_or_default())
        );
        return;
    }
    let _ = writeln!(
        h,
        "<section id=\"mirrors\">\n<h2>Mirrored hosts</h2>\n<p class=\"lead\">{} share replicas; {} {}.</p>",
        plural(r.hosts.host_pairs, "host pair", "host pairs"),
        num(r.hosts.mirror_pairs),
        if r.hosts.mirror_pairs == 1 { "is a mirror" } else { "are mirrors" }
    );
    if r.hosts.mirrors.is_empty() {
        h.push_str("<p class=\"empty\">No mirrored hosts.</p>\n");
    } else {
        table_start(
            h,
            &[
                ("host A", false),
                ("host B", false),
                ("of A replicated on B", true),
                ("of B replicated on A", true),
            ],
        );
        for m in r.hosts.mirrors.iter().take(TABLE_ROWS) {
            let _ = writeln!(
                h,
                "<tr><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"n\" data-v=\"{}\">{:.0}% \
                 <span class=\"muted\">({}/{})</span></td><td class=\"n\" data-v=\"{}\">{:.0}% \
                 <span class=\"muted\">({}/{})</span></td></tr>",
                host(&m.host_a),
                host(&m.host_b),
                m.coverage_a,
                m.coverage_a,
                m.replicated_a_on_b,
                m.docs_a,
                m.coverage_b,
                m.coverage_b,
                m.replicated_b_on_a,
                m.docs_b
            );
        }
        table_end(h);
        if r.hosts.mirrors.len() > TABLE_ROWS {
            let _ = writeln!(
                h,
                "<p class=\"note\">The {TABLE_ROWS} most covered of {} mirror pairs; all host pairs are in hosts.csv.</p>",
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
    let a = &r.aliases;
    let t = &a.total;
    let _ = writeln!(
        h,
        "<section id=\"aliases\">\n<h2>URL aliases</h2>\n<p class=\"lead\"><strong>{}</strong> with the same content: \
         {} and {}, fetches that URL normalization would have saved. {}</p>",
        plural(a.same_content, "URL alias", "URL aliases"),
        plural(t.exact, "exact copy", "exact copies"),
        plural(t.near, "near-replica", "near-replicas"),
        match t.different + t.empty {
            0 => "No URL pair that looks like an alias holds different content.".to_string(),
            1 => "One more URL pair looks like an alias but holds different content (or an empty page): it is not one."
                .to_string(),
            n => format!(
                "{} more URL pairs look like aliases but hold different content (or an empty page): they are not.",
                num(n)
            ),
        }
    );
    table_start(
        h,
        &[
            ("URLs differ only by", false),
            ("same content", true),
            ("exact", true),
            ("near", true),
            ("different content", true),
            ("all pairs", true),
        ],
    );
    let row = |name: &str, c: &super::aliases::AliasCounts| {
        format!(
            "<tr><td>{name}</td>{}{}{}{}{}</tr>",
            n_cell(c.exact + c.near),
            n_cell(c.exact),
            n_cell(c.near),
            n_cell(c.different + c.empty),
            n_cell(c.pairs)
        )
    };
    for (name, c) in [
        ("<code>www.</code> prefix", &a.www),
        ("scheme (http/https)", &a.scheme),
        ("trailing slash or index page", &a.index),
        ("query string", &a.query),
    ] {
        h.push_str(&row(name, c));
        h.push('\n');
    }
    h.push_str("</tbody>\n<tfoot>");
    h.push_str(&row("all kinds", t));
    h.push_str("</tfoot>\n</table></div>\n");
    if !r.alias_examples.is_empty() {
        h.push_str("<ul class=\"examples\">\n");
        for e in &r.alias_examples {
            let _ = writeln!(
                h,
                "<li><span class=\"kind\">{}</span> {} and {}: {}</li>",
                e.kind.name(),
                link(&e.url_a),
                link(&e.url_b),
                e.content.name()
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<p class=\"note\">Exact and near pairs are copies that URL normalization would have avoided fetching; \
         pairs of different content show where it would be wrong. aliases.csv lists every pair.</p>\n</section>\n",
    );
}

fn flags(h: &mut String, r: &Report) {
    let f = &r.flags;
    h.push_str("<section id=\"flags\">\n<h2>Double-content flags</h2>\n");
    let flags = [
        ("www_unique", f.www_not_unique),
        ("http_unique", f.http_not_unique),
        ("exact_signature_unique", f.exact_signature_not_unique),
        ("fuzzy_signature_unique", f.fuzzy_signature_not_unique),
        ("title_unique", f.title_not_unique),
    ];
    counts_table(h, ["flag", "not unique"], flags.map(|(name, n)| (format!("<code>{name}</code>"), n)));
    let _ = writeln!(
        h,
        "<p class=\"note\">Per document in flags.csv, after YaCy's double-content detection. Fuzzy signatures of {}, \
         MIN_TOKEN_LEN&nbsp;=&nbsp;{}, QUANT_RATE&nbsp;=&nbsp;{}.</p>\n</section>",
        plural(f.fuzzy_signatures, "document", "documents"),
        f.min_token_len,
        f.quant_rate
    );
}

/// Each input with what reading it gave, the records skipped by reason,
/// and the corrupt records with where they are.
fn data_quality(h: &mut String, q: Option<&Quality>) {
    h.push_str("<section id=\"quality\">\n<h2>Data quality</h2>\n");
    let Some(q) = q else {
        h.push_str(
            "<p class=\"empty\">stats.json has no fingerprint section: nothing is known of how the inputs were read.</p>\n\
             </section>\n",
        );
        return;
    };
    let s = &q.summary;
    let skipped: u64 = s.skipped_records.values().sum();
    let _ = write!(
        h,
        "<p class=\"lead\">{} read from {} made {}; {} not documents",
        plural(s.records, "record", "records"),
        plural(s.inputs, "input", "inputs"),
        plural(s.documents, "document", "documents"),
        plural(skipped, "record was", "records were"),
    );
    if s.corrupt_records > 0 {
        let _ = write!(h, ", <span class=\"badge\">{} of them corrupt</span>", num(s.corrupt_records));
    }
    h.push('.');
    if s.inputs_skipped > 0 {
        let _ = write!(
            h,
            " <span class=\"badge\">{} skipped whole</span>",
            plural(s.inputs_skipped, "input was", "inputs were")
        );
    }
    if s.capped_documents > 0 {
        let _ = write!(
            h,
            " <span class=\"badge\">{} cut at --max-doc-bytes</span>",
            plural(s.capped_documents, "document was", "documents were")
        );
    }
    if !q.has_problems() {
        h.push_str(" <span class=\"ok\">No corrupt record, no input skipped, no document cut.</span>");
    }
    h.push_str("</p>\n<h3>Inputs</h3>\n");
    table_start(
        h,
        &[
            ("input", false),
            ("records", true),
            ("documents", true),
            ("not documents", false),
            ("corrupt", true),
            ("cut", true),
        ],
    );
    for i in &q.inputs {
        let reasons = match &i.skipped {
            Some(why) => format!("<span class=\"badge\">whole input: {}</span>", escape(why)),
            None if i.skipped_records.is_empty() => "<span class=\"muted\">none</span>".to_string(),
            None => i
                .skipped_records
                .iter()
                .map(|(why, n)| format!("{} {}", escape(why), num(*n)))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"file\">{}</td>{}{}<td class=\"wrap\">{}</td>{}{}</tr>",
            path(&i.file),
            n_cell(i.records),
            n_cell(i.documents),
            reasons,
            n_cell(i.corrupt_records),
            n_cell(i.capped_documents)
        );
    }
    table_end(h);
    if (q.inputs.len() as u64) < s.inputs {
        let _ = writeln!(
            h,
            "<p class=\"note\">{} of {} inputs, those with the most corrupt and skipped records; stats.json's \
             fingerprint.inputs lists every input.</p>",
            num(q.inputs.len() as u64),
            num(s.inputs)
        );
    }
    if !s.skipped_records.is_empty() {
        h.push_str("<h3>Records that are not documents</h3>\n");
        table_start(h, &[("reason", false), ("records", true), ("kind", false)]);
        for (why, n) in &s.skipped_records {
            let kind = if quality::is_corrupt(why) {
                "<span class=\"badge\">corrupt</span>"
            } else {
                "<span class=\"muted\">not a document</span>"
            };
            let _ =
                writeln!(h, "<tr><td><code>{}</code></td>{}<td>{kind}</td></tr>", escape(why), n_cell(*n));
        }
        table_end(h);
    }
    if !q.corrupt.is_empty() {
        h.push_str("<h3>Corrupt records</h3>\n");
        table_start(h, &[("where", false), ("reason", false), ("what was wrong", false)]);
        for c in &q.corrupt {
            let at = match c.line {
                Some(line) => format!("{}:{} (line {line})", path(&c.file), c.offset),
                None => format!("{}:{}", path(&c.file), c.offset),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"file\"><code>{at}</code></td><td><code>{}</code></td><td class=\"wrap\">{}</td></tr>",
                escape(&c.reason),
                escape(&c.detail)
            );
        }
        table_end(h);
        let _ = writeln!(
            h,
            "<p class=\"note\">{} as stats.json's fingerprint.corrupt lists them: file and byte offset (for a gzip or \
             zstd input, of its member or frame), as the warnings named them.</p>",
            if (q.corrupt.len() as u64) < s.corrupt_records {
                format!(
                    "The first {} of {} corrupt records,",
                    num(q.corrupt.len() as u64),
                    num(s.corrupt_records)
                )
            } else {
                "Every corrupt record,".to_string()
            }
        );
    }
    h.push_str("</section>\n");
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

    #[test]
    fn only_web_urls_are_links() {
        assert_eq!(
            link("http://a.example/?q=\"x\"&y"),
            "<a href=\"http://a.example/?q=&quot;x&quot;&amp;y\" rel=\"noreferrer\">http://a.example/?q=&quot;x&quot;&amp;y</a>"
        );
        assert!(link("HTTPS://a.example/").starts_with("<a href"));
        assert_eq!(link("javascript:alert(1)"), "javascript:alert(1)");
        assert_eq!(link("urn:isbn:1"), "urn:isbn:1");
        assert!(link("").contains("no URL"));
        let long = format!("https://a.example/{}", "\u{e9}".repeat(400));
        let a = link(&long);
        assert!(a.contains(&format!("href=\"{long}\"")) && a.ends_with("&hellip;</a>"));
        assert_eq!(a.matches('\u{e9}').count(), 400 + URL_SHOWN - "https://a.example/".len());
    }
}
