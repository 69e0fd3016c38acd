//! `--format skip`: the skip list a recrawl can be planned from. CSV
//! `url,kept_url,why,rule`, in docID order, a row for each document the
//! savings rule skips: its URL, the URL of the kept document that stands
//! for it (the member of its exact group that the `--keep` rule puts
//! first, or the first kept page in that order that is a near-replica of
//! its group), `exact` or `near`, and the criterion of the `--keep` rule
//! that put the kept document first (`input-order` when only their docIDs
//! do). A skipped document without a URL has no row; one whose stand-in
//! has no URL has an empty `kept_url`.
//!
//! Two passes over docs.csv: the first gathers the URLs and keys of the
//! kept documents that stand for another (held until the end: one per
//! such document, not per document), the second writes the rows.

use std::collections::HashMap;

use super::{DedupStats, KEPT, is_exact_copy};
use crate::base::progress::Progress;
use crate::store::OutDir;
use crate::store::analysis::documents::{self, Docs};
use crate::store::analysis::keep::{KeepRule, Key};
use crate::store::destination::Destination;

/// Writes the skip list; returns its rows.
pub(super) fn write(
    out: &OutDir,
    docs: &Docs,
    stand_in: &[u32],
    rule: &KeepRule,
    dest: &Destination,
    stats: &mut DedupStats,
    progress: &Progress,
) -> anyhow::Result<u64> {
    let mut kept: HashMap<u32, (String, Key)> =
        stand_in.iter().filter(|&&s| s != KEPT).map(|&s| (s, Default::default())).collect();
    documents::for_each_doc(&out.docs(), |row, doc| {
        if let Some((url, key)) = kept.get_mut(&row) {
            url.push_str(doc.url);
            *key = rule.key(doc);
        }
        Ok(())
    })?;
    let mut sink = dest.open()?;
    sink.write(HEADER)?;
    let bar = progress.items("dedup", docs.len() as u64, "documents");
    let mut rows = 0;
    documents::for_each_doc(&out.docs(), |row, doc| {
        bar.inc(1);
        let by = stand_in[row as usize];
        if by == KEPT {
            return Ok(());
        }
        if doc.url.is_empty() {
            stats.no_url += 1;
            return Ok(());
        }
        let why = if is_exact_copy(docs, row, by) { "exact" } else { "near" };
        let (kept_url, kept_key) = &kept[&by];
        let decided = rule.deciding(kept_key, &rule.key(doc)).map_or("input-order", |c| c.name());
        sink.write(line(doc.url, kept_url, why, decided).as_bytes())?;
        rows += 1;
        Ok(())
    })?;
    bar.finish_and_clear();
    stats.bytes = sink.finish()?;
    Ok(rows)
}

/// The skip list's header.
pub(super) const HEADER: &[u8] = b"url,kept_url,why,rule\n";

/// One row of the skip list: `url,kept_url,why,rule` and the line end.
pub(super) fn line(url: &str, kept_url: &str, why: &str, rule: &str) -> String {
    let mut line = String::with_capacity(url.len() + kept_url.len() + why.len() + rule.len() + 8);
    field(&mut line, url);
    line.push(',');
    field(&mut line, kept_url);
    line.push(',');
    line.push_str(why);
    line.push(',');
    line.push_str(rule);
    line.push('\n');
    line
}

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn field(line: &mut String, value: &str) {
    if value.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&value.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(value);
    }
}

#[cfg(test)]
mod tests {
    use super::{field, line};

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let mut line = String::new();
        for v in ["http://a/b", "http://a/?x=1,2", "say \"hi\"", "a\nb"] {
            field(&mut line, v);
            line.push('|');
        }
        assert_eq!(line, "http://a/b|\"http://a/?x=1,2\"|\"say \"\"hi\"\"\"|\"a\nb\"|");
    }

    #[test]
    fn a_row_quotes_its_urls_only() {
        assert_eq!(
            line("http://a/?x=1,2", "http://b/", "near", "against"),
            "\"http://a/?x=1,2\",http://b/,near,against\n"
        );
    }
}
