//! Stop chunks: fingerprints shared by more than `--max-df` counted
//! documents (navigation lines, licence footers, "Back to top"). They
//! generate most pairs and carry no evidence of copying, so `--max-df`
//! leaves them out of every counting method; this module finds them, says
//! how many pairs each would have generated, and writes `stop-chunks.csv`
//! with one example text each, read back from the input.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rayon::prelude::*;

use super::{Counted, scan_groups};
use crate::bytes::chunk::Chunker;
use crate::store::handles::DocIds;
use crate::store::reread::{self, Located, Reread};
use crate::store::{CsvOut, Manifest, OutDir};

/// One stop chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StopChunk {
    pub fprint: u64,
    /// Counted documents that contain it.
    pub df: u64,
    /// Pairs it would have generated: df (df - 1) / 2.
    pub pairs: u64,
    /// The first document (smallest row) that contains it.
    pub example_doc: u32,
}

/// Finds the stop chunks of the partitions, most frequent first (ties by
/// fingerprint, so the order is deterministic). With `--scope host` or
/// `site`, a chunk's document frequency is counted in each scope, as if
/// each were a crawl of its own: a line on 50 pages of one host is a stop
/// chunk there, while a line on one page each of 50 hosts generates no
/// pair at all. Such a chunk has a row per scope it is a stop chunk in
/// (ties by example document).
pub(crate) fn find(parts: &[PathBuf], counted: &Counted, max_df: u32) -> anyhow::Result<Vec<StopChunk>> {
    let found: Vec<anyhow::Result<Vec<StopChunk>>> = parts
        .par_iter()
        .map(|part| {
            let mut stops = Vec::new();
            scan_groups(part, counted, |docs, fprint| {
                if docs.len() > max_df as usize {
                    let df = docs.len() as u64;
                    stops.push(StopChunk { fprint, df, pairs: df * (df - 1) / 2, example_doc: docs[0] });
                }
                Ok(())
            })?;
            Ok(stops)
        })
        .collect();
    let mut stops = Vec::new();
    for f in found {
        stops.extend(f?);
    }
    stops.sort_by(|a, b| {
        b.df.cmp(&a.df).then(a.fprint.cmp(&b.fprint)).then(a.example_doc.cmp(&b.example_doc))
    });
    Ok(stops)
}

/// How many stop chunks get their text looked up: the most frequent ones,
/// which are the ones a reader looks at.
const TEXTS: usize = 1000;

/// Writes `stop-chunks.csv`: `fprint,df,pairs,example_doc,text`, with the
/// text of the most frequent chunks read back from their example document
/// (empty where the input cannot be read again, such as standard input or
/// a record inside a whole-file gzip member).
pub(crate) fn write_csv(out: &OutDir, stops: &[StopChunk], manifest: &Manifest) -> anyhow::Result<()> {
    let texts = texts(out, &stops[..stops.len().min(TEXTS)], manifest)?;
    let doc_ids = DocIds::open(out, manifest)?;
    let mut w = CsvOut::create(&out.stop_chunks(), &["fprint", "df", "pairs", "example_doc", "text"])?;
    for s in stops {
        let text = texts.get(&s.fprint).map_or("", String::as_str);
        w.row([
            format!("{:016x}", s.fprint).as_str(),
            &s.df.to_string(),
            &s.pairs.to_string(),
            &doc_ids.doc_id(s.example_doc).to_string(),
            text,
        ])?;
    }
    w.finish()
}

/// Fills in the `text` column of a `stop-chunks.csv` whose other columns
/// another engine wrote (the Spark job, which cannot extract pages): the
/// rows are kept as they are and their texts looked up as the pairs stage
/// does, so the file is the one a local run writes. Returns the rows.
pub(crate) fn fill_texts(out: &OutDir) -> anyhow::Result<u64> {
    let manifest = Manifest::read(out)?;
    let doc_ids = DocIds::open(out, &manifest)?;
    let mut stops = read_csv(&out.stop_chunks())?;
    for s in &mut stops {
        s.example_doc = doc_ids.row(s.example_doc).with_context(|| {
            format!("{}: example_doc {} is not in docs.csv", out.stop_chunks().display(), s.example_doc)
        })?;
    }
    // A Parquet copy of the old file goes with it.
    crate::store::stage::remove_copies_of(out, &crate::store::registry::PAIRS)?;
    write_csv(out, &stops, &manifest)?;
    Ok(stops.len() as u64)
}

/// Reads the `fprint,df,pairs,example_doc` columns of stop-chunks.csv; a
/// malformed row is an error naming the file and line.
pub(super) fn read_csv(path: &Path) -> anyhow::Result<Vec<StopChunk>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut stops = Vec::new();
    for row in reader.records() {
        let row = row.with_context(|| format!("cannot read {}", path.display()))?;
        let line = row.position().map_or(0, |p| p.line());
        let bad = |what: &str| anyhow::anyhow!("{} line {line}: {what}", path.display());
        let field = |i: usize, name: &str| row.get(i).ok_or_else(|| bad(&format!("no {name} column")));
        let number = |i: usize, name: &str| -> anyhow::Result<u64> {
            field(i, name)?.parse().map_err(|_| bad(&format!("{name} is not a number")))
        };
        stops.push(StopChunk {
            fprint: u64::from_str_radix(field(0, "fprint")?, 16).map_err(|_| bad("fprint is not hex"))?,
            df: number(1, "df")?,
            pairs: number(2, "pairs")?,
            example_doc: u32::try_from(number(3, "example_doc")?)
                .map_err(|_| bad("example_doc is too large"))?,
        });
    }
    Ok(stops)
}

/// The text of each stop chunk, found by reading its example document
/// again from the input and cutting it into chunks.
fn texts(out: &OutDir, stops: &[StopChunk], manifest: &Manifest) -> anyhow::Result<HashMap<u64, String>> {
    let chunking = manifest.chunking()?;
    let mut wanted: HashMap<u32, Vec<u64>> = HashMap::new();
    for s in stops {
        wanted.entry(s.example_doc).or_default().push(s.fprint);
    }
    let located = reread::locate_rows(out, manifest, |row| wanted.contains_key(&row))?;
    let mut texts = HashMap::new();
    let mut chunker = Chunker::new();
    for (doc, fprints) in &wanted {
        let Some(Located { file: Ok(path), offset, .. }) = located.get(doc) else { continue };
        // Any failure only costs the example text; a record inside a gzip
        // member that starts before it is not read, since reaching it
        // means reading the input from its start, for each of up to a
        // thousand documents.
        let Ok(Reread::Text(text)) = reread::text_at(path, *offset, &manifest.read) else { continue };
        chunker.for_each_chunk(&text, chunking, |fp, chunk| {
            if fprints.contains(&fp) {
                texts.entry(fp).or_insert_with(|| chunk.to_string());
            }
        });
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rows_another_engine_wrote_and_names_a_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stop-chunks.csv");
        std::fs::write(
            &path,
            "fprint,df,pairs,example_doc,text\nff00000000000001,12,66,9,\n0000000000000002,6,15,3,\n",
        )
        .unwrap();
        let stops = read_csv(&path).unwrap();
        assert_eq!(stops[0], StopChunk { fprint: 0xff00_0000_0000_0001, df: 12, pairs: 66, example_doc: 9 });
        assert_eq!(stops.len(), 2);
        std::fs::write(&path, "fprint,df,pairs,example_doc,text\n0000000000000002,6,15,3,\nzz,6,15,3,\n")
            .unwrap();
        let e = format!("{:#}", read_csv(&path).unwrap_err());
        assert!(e.contains("stop-chunks.csv line 3") && e.contains("fprint"), "{e}");
    }
}
