//! Reading the earlier stages' outputs: `docs.csv` into per-document
//! arrays, and `overlap.csv` as a stream.
//!
//! The report holds a few fixed-width values per document (center, bytes,
//! host) and never the Overlap table: every pass over the table streams
//! `overlap.csv` again, so the report's memory grows with the documents,
//! not with the pairs.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Marks an empty document in [`Docs::center`].
pub const EMPTY: u32 = u32::MAX;

/// Columns of docs.csv the report reads.
const DOC_ID: usize = 0;
const URL: usize = 1;
const HOST: usize = 2;
const SOURCE: usize = 3;
const BYTES: usize = 4;
const CENTER: usize = 7;
const TITLE: usize = 8;

/// The document table, column by column.
#[derive(Clone, Debug, Default)]
pub struct Docs {
    /// The exact-group center of each document, [`EMPTY`] for an empty one.
    pub center: Vec<u32>,
    /// Payload bytes.
    pub bytes: Vec<u64>,
    /// Index into `hosts`.
    pub host: Vec<u32>,
    /// Host names, in order of first appearance.
    pub hosts: Vec<String>,
    /// Documents in each exact group, indexed by the center's docID (0 for
    /// a document that is not a center).
    pub group_size: Vec<u32>,
}

impl Docs {
    pub fn len(&self) -> usize {
        self.center.len()
    }

    pub fn is_empty(&self) -> bool {
        self.center.is_empty()
    }

    pub fn is_empty_doc(&self, doc: u32) -> bool {
        self.center[doc as usize] == EMPTY
    }

    pub fn is_center(&self, doc: u32) -> bool {
        self.center[doc as usize] == doc
    }

    /// The documents in `doc`'s exact group (1 when it has no copies, 0 for
    /// an empty document).
    pub fn exact_size(&self, doc: u32) -> u32 {
        match self.center[doc as usize] {
            EMPTY => 0,
            c => self.group_size[c as usize],
        }
    }
}

/// One row of docs.csv as the report reads it.
pub struct DocRow<'a> {
    pub doc: u32,
    pub url: &'a str,
    pub host: &'a str,
    pub source: &'a str,
    pub bytes: u64,
    /// `None` for an empty document.
    pub center: Option<u32>,
    pub title: &'a str,
}

/// Calls `f` with every row of docs.csv, checking that docIDs are dense
/// and in order; a malformed row is an error naming the file and line.
pub fn for_each_doc(path: &Path, mut f: impl FnMut(&DocRow<'_>) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut record = csv::StringRecord::new();
    let mut expected: u64 = 0;
    loop {
        let line = reader.position().line() + 1;
        let more = reader
            .read_record(&mut record)
            .with_context(|| format!("cannot read {} (line {line})", path.display()))?;
        if !more {
            break;
        }
        let line = record.position().map_or(line, |p| p.line());
        let bad = |what: &str| anyhow::anyhow!("{} line {line}: {what}", path.display());
        if record.len() < TITLE + 1 {
            return Err(bad(&format!("expected 9 columns, found {}", record.len())));
        }
        let doc: u32 = record[DOC_ID].parse().map_err(|_| bad("doc_id is not a number"))?;
        if u64::from(doc) != expected {
            return Err(bad(&format!("expected doc_id {expected}, found {doc}")));
        }
        let bytes: u64 = record[BYTES].parse().map_err(|_| bad("bytes is not a number"))?;
        let center = match &record[CENTER] {
            "" => None,
            c => {
                let c: u32 = c.parse().map_err(|_| bad("exact_center is not a number"))?;
                if c > doc {
                    return Err(bad("exact_center is larger than doc_id"));
                }
                Some(c)
            }
        };
        f(&DocRow {
            doc,
            url: &record[URL],
            host: &record[HOST],
            source: &record[SOURCE],
            bytes,
            center,
            title: &record[TITLE],
        })
        .with_context(|| format!("{} line {line}", path.display()))?;
        expected += 1;
    }
    Ok(())
}

/// Loads the columns of docs.csv the report keeps for every document.
pub fn load_docs(path: &Path) -> anyhow::Result<Docs> {
    let mut docs = Docs::default();
    let mut host_ids: HashMap<String, u32> = HashMap::new();
    for_each_doc(path, |row| {
        let center = match row.center {
            None => EMPTY,
            Some(c) if c == row.doc => c,
            Some(c) if docs.center[c as usize] == c => c,
            Some(c) => bail!("exact_center {c} is not the center of its own group"),
        };
        docs.center.push(center);
        docs.group_size.push(0);
        if center != EMPTY {
            docs.group_size[center as usize] += 1;
        }
        docs.bytes.push(row.bytes);
        let next = host_ids.len() as u32;
        let id = *host_ids.entry(row.host.to_string()).or_insert_with(|| {
            docs.hosts.push(row.host.to_string());
            next
        });
        docs.host.push(id);
        Ok(())
    })?;
    Ok(docs)
}

/// Calls `f(doc_i, doc_j, shared)` for every row of overlap.csv, checking
/// what the pairs stage promises: both documents are centers of `docs`,
/// i < j, rows sorted by (i, j).
pub fn for_each_pair(
    path: &Path,
    docs: &Docs,
    mut f: impl FnMut(u32, u32, u32) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    let mut number = 0u64;
    let mut last: Option<(u32, u32)> = None;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .with_context(|| format!("cannot read {} (line {})", path.display(), number + 1))?;
        if n == 0 {
            break;
        }
        number += 1;
        let text = line.trim_end_matches(['\n', '\r']);
        if number == 1 {
            if text != "doc_i,doc_j,shared" {
                bail!("{} line 1: expected the header doc_i,doc_j,shared", path.display());
            }
            continue;
        }
        let bad = |what: &str| anyhow::anyhow!("{} line {number}: {what}", path.display());
        let mut fields = text.split(',');
        let mut next = |name: &str| -> anyhow::Result<u32> {
            fields
                .next()
                .and_then(|v| v.parse::<u32>().ok())
                .ok_or_else(|| bad(&format!("{name} is missing or not a number")))
        };
        let (i, j, shared) = (next("doc_i")?, next("doc_j")?, next("shared")?);
        if fields.next().is_some() {
            return Err(bad("expected 3 columns"));
        }
        if i >= j {
            return Err(bad("doc_i is not smaller than doc_j"));
        }
        if j as usize >= docs.len() {
            return Err(bad(&format!("doc_j {j} is not in docs.csv")));
        }
        if !docs.is_center(i) || !docs.is_center(j) {
            return Err(bad("a document that is not an exact-group center"));
        }
        if last.is_some_and(|l| l >= (i, j)) {
            return Err(bad("rows are not sorted by (doc_i, doc_j)"));
        }
        last = Some((i, j));
        f(i, j, shared).with_context(|| format!("{} line {number}", path.display()))?;
    }
    if number == 0 {
        bail!("{} is empty: expected the header doc_i,doc_j,shared", path.display());
    }
    Ok(())
}

/// The URLs of the `wanted` documents (sorted), from a second pass over
/// docs.csv: the report keeps URLs only for the documents it prints.
pub fn urls_of(path: &Path, wanted: &[u32]) -> anyhow::Result<HashMap<u32, String>> {
    let mut urls = HashMap::with_capacity(wanted.len());
    if wanted.is_empty() {
        return Ok(urls);
    }
    for_each_doc(path, |row| {
        if wanted.binary_search(&row.doc).is_ok() {
            urls.insert(row.doc, row.url.to_string());
        }
        Ok(())
    })?;
    Ok(urls)
}

/// A `source` column (`INPUT:OFFSET`) split into its parts.
pub fn parse_source(source: &str) -> Option<(PathBuf, u64)> {
    let (path, offset) = source.rsplit_once(':')?;
    Some((PathBuf::from(path), offset.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const HEADER: &str = "doc_id,url,host,source,bytes,lines,chunks,exact_center,title\n";

    #[test]
    fn loads_docs_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "docs.csv",
            &format!(
                "{HEADER}0,http://a/x,a,in:0,10,1,1,0,\n1,http://b/x,b,in:5,10,1,1,0,T\n2,,,in:9,0,0,0,,\n"
            ),
        );
        let docs = load_docs(&p).unwrap();
        assert_eq!(docs.center, vec![0, 0, EMPTY]);
        assert_eq!(docs.exact_size(1), 2);
        assert_eq!(docs.exact_size(2), 0);
        assert_eq!(docs.hosts, vec!["a", "b", ""]);
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "docs.csv", &format!("{HEADER}0,u,h,s,10,1,1,0,\n1,u,h,s,ten,1,1,1,\n"));
        let e = format!("{:#}", load_docs(&p).unwrap_err());
        assert!(e.contains("docs.csv line 3") && e.contains("bytes"), "{e}");
        let docs =
            load_docs(&write(dir.path(), "d2.csv", &format!("{HEADER}0,u,h,s,1,1,1,0,\n1,u,h,s,1,1,1,1,\n")))
                .unwrap();
        let o = write(dir.path(), "overlap.csv", "doc_i,doc_j,shared\n0,1,5\n1,0,5\n");
        let e = format!("{:#}", for_each_pair(&o, &docs, |_, _, _| Ok(())).unwrap_err());
        assert!(e.contains("overlap.csv line 3"), "{e}");
        let o = write(dir.path(), "o2.csv", "doc_i,doc_j,shared\n0,x,5\n");
        let e = format!("{:#}", for_each_pair(&o, &docs, |_, _, _| Ok(())).unwrap_err());
        assert!(e.contains("line 2") && e.contains("doc_j"), "{e}");
    }
}
