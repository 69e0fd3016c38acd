//! `overlap explain DIR A B`: what two documents have in common, chunk by
//! chunk, so that a row of the Overlap table (or a pair missing from it)
//! can be checked by eye.
//!
//! A document's chunk set is the set of fingerprints of its text's chunks,
//! the set the fingerprint stage wrote into `fprint-docid/` under its row.
//! The text is read again from the document's record ([`crate::store::reread`]),
//! and taken only when its whole-text hash is the one `fprint-exact.fpd`
//! holds for the row: the same text, so the same chunks, whatever happened
//! to the input since. A record with no text of its own (a WARC revisit,
//! whose text is its original's) is stood in for by another document with
//! the same hash. Every shared fingerprint is also looked up in the
//! partitions ([`Postings`]), which both documents' rows must hold, and
//! whose group gives the chunk's document frequency: a chunk in more than
//! `--max-df` counted documents of the pair's scope is a stop chunk, left
//! out of F exactly as the pairs stage leaves it out, so that F is the
//! table's `shared` for every pair the table lists.
//!
//! Read-only: nothing is written into the directory, and its lock is not
//! taken, so it runs beside a command that writes (an analysis that is not
//! complete, because a stage is being run again, is refused).

use std::collections::HashSet;
use std::io::Write;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::bytes::chunk::{Chunker, exact_hash};
use crate::stages::pairs::template::Template;
use crate::stages::pairs::{Counted, Criterion, TemplateRule};
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::postings::Postings;
use crate::store::registry;
use crate::store::reread::{self, Located, Reread};
use crate::store::scopes::Scope;
use crate::store::{ExactRecord, Manifest, Mapped, OutDir};

/// How many other documents with the same text are tried for the text of
/// a document whose own record holds none; each try reads one record.
const STAND_INS: usize = 8;

/// What `explain` prints, in this order; `--json` prints it as one object
/// (keys are stable: add, never rename).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Explanation {
    /// The docIDs of A and B, in the order given.
    pub doc_i: u32,
    pub doc_j: u32,
    pub url_i: String,
    pub url_j: String,
    /// F: the distinct fingerprints both hold, stop chunks left out as the
    /// pairs stage leaves them out.
    pub shared: u64,
    /// |A ∩ B| / |A ∪ B| over the distinct fingerprints, stop chunks
    /// included; 0 when neither has a chunk.
    pub jaccard: f64,
    /// Every fingerprint both hold, stop chunks included, in the order of
    /// their first chunk in A's text.
    pub chunks: Vec<SharedChunk>,
    /// Distinct fingerprints of A and of B.
    pub size_i: u64,
    pub size_j: u64,
    /// How many of `chunks` are stop chunks.
    pub shared_stop: u64,
    /// The pairs stage's T and `--max-df`; null before it ran.
    pub threshold: Option<u32>,
    pub max_df: Option<u32>,
    /// The pairs stage's `--template` rule (`5:0.01`); null when it kept
    /// every chunk. A shared chunk that is the template of either
    /// document's host is marked `stop` and left out of F.
    pub template: Option<String>,
    /// Whether overlap.csv lists the pair; null before the pairs stage ran.
    pub in_table: Option<bool>,
    /// Why it does or does not, in words.
    #[serde(skip)]
    pub why: String,
}

/// One chunk both documents hold.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SharedChunk {
    /// The fingerprint as 16 hex digits, as `dump` and stop-chunks.csv
    /// print it.
    pub fprint: String,
    pub text: String,
    /// A stop chunk: in more than `--max-df` counted documents of A's or
    /// B's scope (the same scope for every pair the table can list), not
    /// counted in F.
    pub stop: bool,
}

/// A document as the command line names it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DocRef {
    Id(u32),
    Url(String),
}

impl DocRef {
    /// A whole number is a docID; anything else a URL.
    fn parse(arg: &str) -> DocRef {
        arg.parse().map_or_else(|_| DocRef::Url(arg.to_string()), DocRef::Id)
    }
}

/// One of the two documents, from docs.csv.
#[derive(Clone, Debug)]
struct DocInfo {
    row: u32,
    id: u32,
    url: String,
    /// The center's docID; `None` for an empty document.
    center: Option<u32>,
    located: Located,
}

/// Explains the pair `a`, `b` (docIDs or URLs) of the analysis in `out`.
pub(crate) fn explain(out: &OutDir, a: &str, b: &str) -> anyhow::Result<Explanation> {
    let manifest = Manifest::read(out)?;
    out.analysis_key(&registry::EXACT).map_err(|stage| {
        out.unfinished(format!(
            "{} is not a complete analysis: its {stage} stage has not finished (run `overlap run` into it)",
            out.root().display()
        ))
    })?;
    // The pairs stage's settings, if its table is there to agree with.
    let pairs = out.analysis_key(&registry::PAIRS).ok().and(manifest.pairs.clone());
    let [doc_a, doc_b] = resolve(out, &manifest, [DocRef::parse(a), DocRef::parse(b)])?;
    if doc_a.row == doc_b.row {
        bail!("{a} and {b} are the same document (docID {}): give two documents", doc_a.id);
    }

    let exact = Mapped::<ExactRecord>::open(&out.fprint_exact())?;
    let chunks_a = chunks(out, &manifest, &exact, &doc_a)?;
    let chunks_b = chunks(out, &manifest, &exact, &doc_b)?;
    let in_b: HashSet<u64> = chunks_b.iter().map(|(fp, _)| *fp).collect();

    let scope = manifest.scope()?;
    let counted = match scope {
        Scope::Crawl => Counted::open(&out.centers())?,
        _ => Counted::open(&out.centers())?.in_scopes(&out.scopes())?,
    };
    let postings = Postings::open(out, counted.documents())?;
    let max_df = pairs.as_ref().and_then(|p| p.max_df);
    let template = match pairs.as_ref().and_then(|p| p.template.as_deref()) {
        Some(rule) => {
            let rule: TemplateRule =
                rule.parse().map_err(|e: String| anyhow::anyhow!("manifest.json: pairs.template: {e}"))?;
            Some(Template::read(out, &counted, rule)?)
        }
        None => None,
    };
    // Of the documents that hold a chunk, those the pairs stage counts:
    // counted (exact-group centers), and not where it is their host's
    // template, since the filter leaves those out before --max-df counts.
    let counted_holders = |rows: &[u32]| -> Vec<u32> {
        let docs: Vec<u32> = rows.iter().copied().filter(|&r| counted.contains(r)).collect();
        match &template {
            Some(t) => t.kept(docs),
            None => docs,
        }
    };
    // A copy is counted as its center.
    let doc_ids = crate::store::handles::DocIds::open(out, &manifest)?;
    let counted_row = |doc: &DocInfo| -> u32 {
        match doc.center {
            Some(c) if c != doc.id => doc_ids.row(c).unwrap_or(doc.row),
            _ => doc.row,
        }
    };
    // Whether a chunk whose counted holders are `kept` is left out of
    // `doc`'s set: its host's template, or a stop chunk of its scope.
    let stop = |kept: &[u32], doc: &DocInfo| -> bool {
        if template.is_some() && kept.binary_search(&counted_row(doc)).is_err() {
            return true;
        }
        let scope = counted.scope(doc.row);
        max_df.is_some_and(|m| kept.iter().filter(|&&r| counted.scope(r) == scope).count() > m as usize)
    };
    let mut shared = Vec::new();
    for (fprint, text) in chunks_a.iter().filter(|(fp, _)| in_b.contains(fp)) {
        let rows: Vec<u32> = postings.rows(*fprint)?;
        for doc in [&doc_a, &doc_b] {
            if rows.binary_search(&doc.row).is_err() {
                bail!(
                    "{} does not hold fingerprint {fprint:016x} for document {}, whose text has it: \
                     the analysis is damaged",
                    out.fprint_dir().display(),
                    doc.id
                );
            }
        }
        // Document frequency as the pairs stage counts it: counted
        // documents (exact-group centers) of the document's scope, those
        // whose host's template it is left out.
        let kept = counted_holders(&rows);
        let stop = stop(&kept, &doc_a) || stop(&kept, &doc_b);
        shared.push(SharedChunk { fprint: format!("{fprint:016x}"), text: text.clone(), stop });
    }

    let both = shared.len() as u64;
    let shared_stop = shared.iter().filter(|c| c.stop).count() as u64;
    let f = both - shared_stop;
    let (size_i, size_j) = (chunks_a.len() as u64, chunks_b.len() as u64);
    let union = size_i + size_j - both;
    // A similarity criterion divides by the sets the pairs stage counts:
    // each document's chunks less the stop chunks of its own scope.
    let criterion = pairs.as_ref().map(|p| p.criterion()).transpose()?;
    let counted_size = |doc: &DocInfo, chunks: &[(u64, String)]| -> anyhow::Result<u32> {
        if max_df.is_none() && template.is_none() {
            return Ok(chunks.len() as u32);
        }
        let mut size = 0;
        for (fp, _) in chunks {
            size += u32::from(!stop(&counted_holders(&postings.rows(*fp)?), doc));
        }
        Ok(size)
    };
    let sizes = match criterion {
        Some(c) if c.needs_sizes() => (counted_size(&doc_a, &chunks_a)?, counted_size(&doc_b, &chunks_b)?),
        _ => (size_i as u32, size_j as u32),
    };
    let (mut in_table, mut why) = table_verdict(&doc_a, &doc_b, &counted, scope, f, criterion, sizes);
    // An approximate method may have missed a pair that passes: the table
    // itself says.
    if let (Some(true), Some(method)) = (in_table, pairs.as_ref().and_then(|p| p.approximate.as_ref())) {
        let (i, j) = (doc_a.id.min(doc_b.id), doc_a.id.max(doc_b.id));
        let mut listed = false;
        crate::store::overlap::for_each_pair(&out.overlap(), |o| {
            listed |= (o.doc_i as u64, o.doc_j as u64) == (i as u64, j as u64);
            Ok(())
        })?;
        if !listed {
            in_table = Some(false);
            why = format!(
                "the pair passes {}, but {method} (approximate) did not make it a candidate",
                criterion.map_or(String::new(), |c| c.describe())
            );
        }
    }
    Ok(Explanation {
        doc_i: doc_a.id,
        doc_j: doc_b.id,
        url_i: doc_a.url,
        url_j: doc_b.url,
        shared: f,
        jaccard: if union == 0 { 0.0 } else { both as f64 / union as f64 },
        chunks: shared,
        size_i,
        size_j,
        shared_stop,
        threshold: pairs.as_ref().map(|p| p.threshold),
        max_df,
        template: pairs.as_ref().and_then(|p| p.template.clone()),
        in_table,
        why,
    })
}

/// Finds the two documents in docs.csv, in one pass: by docID, or by URL
/// (which must name exactly one document).
fn resolve(out: &OutDir, manifest: &Manifest, refs: [DocRef; 2]) -> anyhow::Result<[DocInfo; 2]> {
    let locator = manifest.locator();
    let mut found: [Vec<DocInfo>; 2] = [Vec::new(), Vec::new()];
    let mut row = 0u32;
    for_each_doc(&out.docs(), DocTable::Final, |doc| {
        for (r, hits) in refs.iter().zip(&mut found) {
            let hit = match r {
                DocRef::Id(id) => doc.id == *id,
                DocRef::Url(url) => doc.url == url,
            };
            if hit {
                hits.push(DocInfo {
                    row,
                    id: doc.id,
                    url: doc.url.to_string(),
                    center: doc.center,
                    located: Located::new(&locator, &doc.source),
                });
            }
        }
        row += 1;
        Ok(())
    })?;
    let docs = out.docs();
    let pick = |r: &DocRef, hits: Vec<DocInfo>| -> anyhow::Result<DocInfo> {
        let n = hits.len();
        let mut hits = hits.into_iter();
        match (r, hits.next()) {
            (_, Some(doc)) if n == 1 => Ok(doc),
            (DocRef::Id(id), _) => bail!("{} has no document with docID {id}", docs.display()),
            (DocRef::Url(url), None) => bail!("{} has no document with the URL {url}", docs.display()),
            (DocRef::Url(url), Some(first)) => {
                const LISTED: usize = 20;
                let ids: Vec<String> =
                    std::iter::once(first).chain(hits).take(LISTED).map(|d| d.id.to_string()).collect();
                let more = if n > LISTED { format!(" and {} more", n - LISTED) } else { String::new() };
                bail!(
                    "the URL {url} is that of {n} documents in {} (docIDs {}{more}): give a docID",
                    docs.display(),
                    ids.join(", ")
                )
            }
        }
    };
    let [fa, fb] = found;
    let [ra, rb] = refs;
    Ok([pick(&ra, fa)?, pick(&rb, fb)?])
}

/// A document's distinct chunk fingerprints, each with the text of its
/// first chunk, in the order they first appear in its text; none for an
/// empty document.
fn chunks(
    out: &OutDir,
    manifest: &Manifest,
    exact: &Mapped<ExactRecord>,
    doc: &DocInfo,
) -> anyhow::Result<Vec<(u64, String)>> {
    let Some(hash) = exact.hash_of(doc.row) else { return Ok(Vec::new()) };
    let text = text(out, manifest, exact, doc, hash)?;
    let mut seen = HashSet::new();
    let mut chunks = Vec::new();
    Chunker::new().for_each_chunk(&text, manifest.chunking()?, |fp, chunk| {
        if seen.insert(fp) {
            chunks.push((fp, chunk.to_string()));
        }
    });
    Ok(chunks)
}

/// The text the fingerprint stage chunked for `doc` (whose whole-text
/// hash is `hash`): its own record's, or, when that record holds no text
/// of its own, another document's with the same hash.
fn text(
    out: &OutDir,
    manifest: &Manifest,
    exact: &Mapped<ExactRecord>,
    doc: &DocInfo,
    hash: u128,
) -> anyhow::Result<String> {
    let what = || format!("cannot read document {}'s text ({})", doc.id, doc.located.source);
    let path = match &doc.located.file {
        Ok(path) => path,
        Err(why) => bail!("{}: {why}", what()),
    };
    let own = match read_record(path, doc.located.offset, manifest)? {
        Reread::Text(text) if exact_hash(&text) == hash => return Ok(text),
        Reread::Text(_) => "holds another text than the analysis read",
        Reread::NoText | Reread::Inside => "holds no text of its own",
    };
    // A revisit's text is its original's; any document with the same
    // whole-text hash has the same text.
    let others: Vec<u32> =
        exact.iter().filter(|r| r.hash == hash && r.doc != doc.row).map(|r| r.doc).take(STAND_INS).collect();
    let located = reread::locate_rows(out, manifest, |row| others.contains(&row))?;
    for row in &others {
        let Some(Located { file: Ok(path), offset, .. }) = located.get(row) else { continue };
        if let Ok(Reread::Text(text)) = read_record(path, *offset, manifest)
            && exact_hash(&text) == hash
        {
            return Ok(text);
        }
    }
    let tried = match others.len() {
        0 => "no other document has its text".to_string(),
        n => format!(
            "nor could {} with its text be read",
            crate::base::progress::count(n as u64, "other document", "others")
        ),
    };
    bail!("{}: its record {own}, {tried}", what())
}

/// The text of the record at `offset` of `path`; a record inside a gzip
/// member that starts before it is reached by reading from the start.
fn read_record(path: &std::path::Path, offset: u64, manifest: &Manifest) -> anyhow::Result<Reread> {
    let read = || format!("cannot read {} at offset {offset}", path.display());
    match reread::text_at(path, offset, &manifest.read).with_context(read)? {
        Reread::Inside => reread::text_from_start(path, offset, &manifest.read).with_context(read),
        found => Ok(found),
    }
}

/// Whether overlap.csv lists the pair, and why, as the pairs stage decides
/// it: both documents counted (centers of their exact groups), of one
/// scope, sharing at least T fingerprints. `None` before the pairs stage
/// ran.
fn table_verdict(
    a: &DocInfo,
    b: &DocInfo,
    counted: &Counted,
    scope: Scope,
    f: u64,
    criterion: Option<Criterion>,
    (size_a, size_b): (u32, u32),
) -> (Option<bool>, String) {
    let Some(criterion) = criterion else {
        return (None, "the pairs stage has not finished: there is no overlap.csv".into());
    };
    let no = |why: String| (Some(false), why);
    if let (Some(center), Some(other)) = (a.center, b.center)
        && center == other
    {
        return no(format!("exact copies of each other, in the group of document {center}"));
    }
    for d in [a, b] {
        match d.center {
            None => return no(format!("document {} is empty", d.id)),
            Some(c) if c != d.id => {
                return no(format!(
                    "document {} is an exact copy of document {c}, whose pairs the table lists",
                    d.id
                ));
            }
            Some(_) => {}
        }
    }
    debug_assert!(counted.contains(a.row) && counted.contains(b.row));
    if counted.scope(a.row) != counted.scope(b.row) {
        let what = if scope == Scope::Host { "hosts" } else { "sites" };
        return no(format!("the documents are of different {what} (--scope {})", scope.name()));
    }
    let t = criterion.threshold;
    if f < u64::from(t) {
        return no(format!("F < T = {t}"));
    }
    if !criterion.passes(f as u32, size_a, size_b) {
        return no(format!(
            "F >= T = {t}, but the pair does not pass {} (sets of {size_a} and {size_b} chunks, stop chunks left out)",
            criterion.describe()
        ));
    }
    (Some(true), format!("overlap.csv lists the pair ({})", criterion.describe()))
}

/// Prints `e` for people: the figures, aligned, then every shared chunk
/// with its fingerprint and its text, indented.
pub(crate) fn write_text(e: &Explanation, w: &mut dyn Write) -> std::io::Result<()> {
    let url = |u: &str| if u.is_empty() { "(no URL)".to_string() } else { u.to_string() };
    let f_note = match (e.max_df, &e.template) {
        (None, None) => "chunks both hold: F, as overlap.csv counts it",
        (Some(_), None) => "chunks both hold, stop chunks left out: F, as overlap.csv counts it",
        (_, Some(_)) => "chunks both hold, template and stop chunks left out: F, as overlap.csv counts it",
    };
    let mut rows: Vec<(&str, String, String)> = vec![
        ("doc_i", e.doc_i.to_string(), url(&e.url_i)),
        ("doc_j", e.doc_j.to_string(), url(&e.url_j)),
        ("shared", e.shared.to_string(), f_note.to_string()),
    ];
    let mut left_out = Vec::new();
    if let Some(t) = &e.template {
        left_out.push(format!("a host's template, --template {t}"));
    }
    if let Some(m) = e.max_df {
        left_out.push(format!("in more than {m} documents"));
    }
    if !left_out.is_empty() {
        let note = format!("shared chunks left out ({}): marked stop below, not in F", left_out.join("; "));
        rows.push(("stop", e.shared_stop.to_string(), note));
    }
    rows.push((
        "jaccard",
        format!("{:.4}", e.jaccard),
        format!(
            "{} shared of {} distinct chunks ({} in doc_i, {} in doc_j)",
            e.chunks.len(),
            e.size_i + e.size_j - e.chunks.len() as u64,
            e.size_i,
            e.size_j
        ),
    ));
    let listed = match e.in_table {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    rows.push(("table", listed.to_string(), e.why.clone()));
    let width = rows.iter().map(|(_, v, _)| v.len()).max().unwrap_or(0);
    for (label, value, note) in &rows {
        writeln!(w, "{label:<8}{value:<width$}  {note}")?;
    }
    let n = e.chunks.len();
    for (i, c) in e.chunks.iter().enumerate() {
        let stop = if c.stop { "  stop chunk" } else { "" };
        writeln!(w, "\nchunk {}/{n}  {}{stop}", i + 1, c.fprint)?;
        for line in c.text.lines() {
            writeln!(w, "    {line}")?;
        }
    }
    Ok(())
}

/// Prints `e` as one JSON object.
pub(crate) fn write_json(e: &Explanation, w: &mut dyn Write) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *w, e).context("cannot write to standard output")?;
    writeln!(w).context("cannot write to standard output")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_number_is_a_doc_id_and_anything_else_a_url() {
        assert_eq!(DocRef::parse("42"), DocRef::Id(42));
        assert_eq!(DocRef::parse("http://a.example/42"), DocRef::Url("http://a.example/42".into()));
        assert_eq!(DocRef::parse("-1"), DocRef::Url("-1".into()));
        assert_eq!(DocRef::parse("99999999999"), DocRef::Url("99999999999".into()));
    }

    #[test]
    fn text_output_aligns_the_figures_and_indents_the_chunks() {
        let e = Explanation {
            doc_i: 3,
            doc_j: 166,
            url_i: "http://a.example/".into(),
            url_j: String::new(),
            shared: 1,
            jaccard: 0.5,
            chunks: vec![
                SharedChunk { fprint: "00000000000000ff".into(), text: "one\ntwo".into(), stop: false },
                SharedChunk { fprint: "0000000000000100".into(), text: "menu".into(), stop: true },
            ],
            size_i: 3,
            size_j: 3,
            shared_stop: 1,
            threshold: Some(15),
            max_df: Some(9),
            template: None,
            in_table: Some(false),
            why: "F < T = 15".into(),
        };
        let mut out = Vec::new();
        write_text(&e, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let want = "\
doc_i   3       http://a.example/
doc_j   166     (no URL)
shared  1       chunks both hold, stop chunks left out: F, as overlap.csv counts it
stop    1       shared chunks left out (in more than 9 documents): marked stop below, not in F
jaccard 0.5000  2 shared of 4 distinct chunks (3 in doc_i, 3 in doc_j)
table   no      F < T = 15

chunk 1/2  00000000000000ff
    one
    two

chunk 2/2  0000000000000100  stop chunk
    menu
";
        assert_eq!(text, want);
    }
}
