//! The evaluation for people: what was compared, the scores (pairs and
//! clusters), recall per Jaccard bin, then the notes.

use std::io::Write;

use super::{Evaluation, Recall, Scores, SideSummary};

pub(crate) fn write_table(e: &Evaluation, w: &mut impl Write) -> anyhow::Result<()> {
    let mut out = String::new();
    out.push_str(&side_line("RUN  ", &e.run));
    out.push_str(&side_line("TRUTH", &e.truth));
    match e.min_jaccard {
        Some(q) => out.push_str(&format!("Measured against TRUTH's pairs with Jaccard >= {q}.\n")),
        None => out.push_str("Measured against every pair of TRUTH.\n"),
    }
    out.push('\n');
    let scores = |name: &str, s: &Scores| {
        vec![
            name.to_string(),
            s.tp.to_string(),
            s.fp.to_string(),
            s.fn_.to_string(),
            ratio(s.precision),
            ratio(s.recall),
            ratio(s.f1),
        ]
    };
    out.push_str(&aligned(&[
        ["", "TP", "FP", "FN", "precision", "recall", "F1"].map(String::from).to_vec(),
        scores("pairs", &e.pairs),
        scores("clusters", &e.clusters.scores),
    ]));
    out.push_str(&format!(
        "Clusters: {} in TRUTH, {} in RUN (of two URLs or more); adjusted Rand index {}.\n\n",
        e.clusters.truth_clusters,
        e.clusters.run_clusters,
        ratio(e.clusters.ari)
    ));
    let recall = |name: String, r: &Recall| {
        vec![name, r.truth_pairs.to_string(), r.found.to_string(), ratio(r.recall)]
    };
    let mut rows = vec![["Jaccard", "truth pairs", "found", "recall"].map(String::from).to_vec()];
    for b in &e.bins {
        let close = if b.to >= 1.0 { ']' } else { ')' };
        rows.push(recall(format!("[{:.1}, {:.1}{close}", b.from, b.to), &b.recall));
    }
    rows.push(recall("exact copies".to_string(), &e.exact_copies));
    out.push_str(&aligned(&rows));
    let notes: Vec<&String> = e.bins_left_out.iter().chain(&e.notes).collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    w.write_all(out.as_bytes())?;
    Ok(())
}

/// `RUN    dir: analysis, words:5:1, Jaccard >= 0.8 and F >= 1; 20 URLs, 4 pairs`.
fn side_line(name: &str, s: &SideSummary) -> String {
    let what = match (&s.chunk, &s.criterion) {
        (Some(chunk), Some(criterion)) => {
            let mut what = format!("overlap analysis, {chunk}, {criterion}");
            if let Some(df) = s.max_df {
                what.push_str(&format!(", --max-df {df}"));
            }
            if let Some(scope) = s.scope.as_deref().filter(|&scope| scope != "crawl") {
                what.push_str(&format!(", --scope {scope}"));
            }
            what
        }
        _ if s.kind == "pairs" => "URL pairs (url_a,url_b)".to_string(),
        _ => "clusters (url,cluster)".to_string(),
    };
    format!("{name}  {}: {what}; {} URLs, {} URL pairs\n", s.path, s.urls, s.pairs)
}

/// Four decimals, `-` for a ratio of nothing.
fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.4}"))
}

/// Rows as columns: the first left-aligned, the others right-aligned.
fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                line.push_str(&format!("{cell:<w$}", w = width[0]));
            } else {
                line.push_str(&format!("  {cell:>w$}", w = width[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let rows = vec![
            vec!["".to_string(), "TP".to_string(), "recall".to_string()],
            vec!["pairs".to_string(), "12345".to_string(), "1.0000".to_string()],
        ];
        assert_eq!(aligned(&rows), "          TP  recall\npairs  12345  1.0000\n");
        assert_eq!(ratio(None), "-");
        assert_eq!(ratio(Some(2.0 / 3.0)), "0.6667");
    }
}
