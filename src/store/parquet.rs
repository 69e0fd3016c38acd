//! Parquet copies of the fingerprint stage's outputs, for cluster engines
//! (Spark, DuckDB) that read Parquet and not our `.fpd` records.
//!
//! `overlap fingerprint --format parquet` writes, next to the usual files:
//!
//! | file | columns |
//! |---|---|
//! | `parquet/postings.parquet` | `fp` INT64, `doc` INT64 (the docID): one row per FPrint-DocID-Chunk record, in `(fp as u64, doc)` order |
//! | `parquet/docs.parquet` | `doc_id` INT64, `url`, `host`, `source` STRING, `bytes`, `lines`, `chunks` INT64, `exact_hash` STRING (nullable), `title` STRING, `missing_for` INT64: one row per document, in docID order |
//!
//! Every integer is signed INT64: `fp` is the u64 fingerprint's bits read
//! as an i64 (`fp as i64`), because Spark reads unsigned 64-bit Parquet
//! columns as DECIMAL(20,0) and spends about twice the CPU on them. Joins
//! and equality only need the bits, so the sign does not matter to them.
//!
//! `exact_hash` is the xxh3-128 of the normalized text as 32 lowercase hex
//! digits, as `overlap dump --exact` prints it, and null for an empty
//! document. A string rather than FIXED_LEN_BYTE_ARRAY(16): every engine
//! groups and compares strings the same way, and DuckDB, pandas and Spark
//! show it as the text `dump` prints; dictionary encoding and Snappy keep
//! the cost to about the 16 bytes of the binary form on disk.
//!
//! The files are written from the stage's own outputs (the sorted
//! partitions, `fprint-exact.fpd`, `fingerprint-docs.csv`), streamed in row
//! groups, so memory stays bounded whatever the crawl size, and the bytes
//! are the same for the same inputs: no timestamps, a fixed row-group size,
//! one codec.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde::{Deserialize, Serialize};

use super::docs::{DocTable, DocsReader};
use super::handles::DocIds;
use super::manifest::Manifest;
use super::{CannotWrite, ChunkRecord, ExactRecord, Mapped, OutDir, commit, temp_path};

/// Postings per row group: 1 Mi rows is 16 MiB of buffered values, small
/// next to any memory budget and large enough for Spark to split on.
pub(crate) const POSTINGS_ROW_GROUP: usize = 1 << 20;

/// Documents per row group: the strings (URL, title) make a document row
/// up to a few hundred bytes.
pub(crate) const DOCS_ROW_GROUP: usize = 1 << 16;

const POSTINGS_SCHEMA: &str = "message postings { required int64 fp; required int64 doc; }";

const DOCS_SCHEMA: &str = "message docs {
    required int64 doc_id;
    required binary url (STRING);
    required binary host (STRING);
    required binary source (STRING);
    required int64 bytes;
    required int64 lines;
    required int64 chunks;
    optional binary exact_hash (STRING);
    required binary title (STRING);
    required int64 missing_for;
}";

/// What the export wrote, for `stats.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ParquetStats {
    pub postings: u64,
    pub documents: u64,
    pub postings_bytes: u64,
    pub docs_bytes: u64,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// Writes `parquet/postings.parquet` and `parquet/docs.parquet` from the
/// fingerprint stage's outputs in `out`.
pub(crate) fn write(out: &OutDir, stats: &mut ParquetStats) -> anyhow::Result<()> {
    let dir = out.parquet_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    stats.postings = write_postings(out, &out.parquet_postings())?;
    stats.postings_bytes = file_len(&out.parquet_postings())?;
    stats.documents = write_docs(out, &out.parquet_docs())?;
    stats.docs_bytes = file_len(&out.parquet_docs())?;
    Ok(())
}

fn file_len(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?.len())
}

/// A Parquet file being written under its temporary name.
struct Writer {
    path: std::path::PathBuf,
    inner: SerializedFileWriter<File>,
}

impl Writer {
    fn create(path: &Path, schema: &str) -> anyhow::Result<Writer> {
        let schema = Arc::new(parse_message_type(schema).context("bad Parquet schema")?);
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build());
        crate::interrupt::check()?;
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let inner =
            SerializedFileWriter::new(file, schema, props).with_context(|| CannotWrite(tmp.clone()))?;
        Ok(Writer { path: path.to_path_buf(), inner })
    }

    /// Writes one row group, one column at a time in schema order.
    fn row_group(&mut self, columns: &[Column<'_>]) -> anyhow::Result<()> {
        let tmp = temp_path(&self.path);
        let err = || CannotWrite(tmp.clone());
        let mut group = self.inner.next_row_group().with_context(err)?;
        let mut given = columns.iter();
        while let Some(mut writer) = group.next_column().with_context(err)? {
            let Some(column) = given.next() else { bail!("{}: too few columns given", tmp.display()) };
            match column {
                Column::Int64(values) => {
                    writer.typed::<Int64Type>().write_batch(values, None, None).with_context(err)?;
                }
                Column::Bytes(values, defs) => {
                    writer.typed::<ByteArrayType>().write_batch(values, *defs, None).with_context(err)?;
                }
            }
            writer.close().with_context(err)?;
        }
        group.close().with_context(err)?;
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        let tmp = temp_path(&self.path);
        self.inner.close().with_context(|| CannotWrite(tmp))?;
        commit(&self.path)
    }
}

/// One column's values for a row group; `Bytes` carries definition levels
/// when the column is optional (1 present, 0 null; values only for the
/// present ones).
enum Column<'a> {
    Int64(&'a [i64]),
    Bytes(&'a [ByteArray], Option<&'a [i16]>),
}

/// Streams the sorted partitions, in partition order, into
/// `postings.parquet`; returns the number of rows.
fn write_postings(out: &OutDir, path: &Path) -> anyhow::Result<u64> {
    let doc_ids = DocIds::open(out, &Manifest::read(out)?)?;
    let mut writer = Writer::create(path, POSTINGS_SCHEMA)?;
    let mut fps = Vec::with_capacity(POSTINGS_ROW_GROUP);
    let mut docs = Vec::with_capacity(POSTINGS_ROW_GROUP);
    let mut rows = 0u64;
    for part in out.fprint_parts()? {
        let records = Mapped::<ChunkRecord>::open(&part)?;
        for r in records.iter() {
            // The fingerprint's bits as a signed integer, for Spark.
            fps.push(r.fprint as i64);
            docs.push(i64::from(doc_ids.doc_id(r.doc)));
            if fps.len() == POSTINGS_ROW_GROUP {
                writer.row_group(&[Column::Int64(&fps), Column::Int64(&docs)])?;
                rows += fps.len() as u64;
                fps.clear();
                docs.clear();
            }
        }
    }
    if !fps.is_empty() || rows == 0 {
        writer.row_group(&[Column::Int64(&fps), Column::Int64(&docs)])?;
        rows += fps.len() as u64;
    }
    writer.finish()?;
    Ok(rows)
}

/// The document columns of one row group.
#[derive(Default)]
struct DocColumns {
    doc_id: Vec<i64>,
    url: Vec<ByteArray>,
    host: Vec<ByteArray>,
    source: Vec<ByteArray>,
    bytes: Vec<i64>,
    lines: Vec<i64>,
    chunks: Vec<i64>,
    exact_hash: Vec<ByteArray>,
    exact_defined: Vec<i16>,
    title: Vec<ByteArray>,
    missing_for: Vec<i64>,
}

impl DocColumns {
    fn len(&self) -> usize {
        self.doc_id.len()
    }

    fn flush(&mut self, writer: &mut Writer) -> anyhow::Result<()> {
        writer.row_group(&[
            Column::Int64(&self.doc_id),
            Column::Bytes(&self.url, None),
            Column::Bytes(&self.host, None),
            Column::Bytes(&self.source, None),
            Column::Int64(&self.bytes),
            Column::Int64(&self.lines),
            Column::Int64(&self.chunks),
            Column::Bytes(&self.exact_hash, Some(&self.exact_defined)),
            Column::Bytes(&self.title, None),
            Column::Int64(&self.missing_for),
        ])?;
        *self = DocColumns::default();
        Ok(())
    }
}

/// Streams `fingerprint-docs.csv` joined with `fprint-exact.fpd` (both in
/// docID order; empty documents have no exact record) into
/// `docs.parquet`; returns the number of rows.
fn write_docs(out: &OutDir, path: &Path) -> anyhow::Result<u64> {
    let src = out.fingerprint_docs();
    let exact_path = out.fprint_exact();
    let exact = Mapped::<ExactRecord>::open(&exact_path)?;
    let mut hashes = exact.iter().peekable();
    let mut reader = DocsReader::open(&src, DocTable::Fingerprint)?;
    let mut writer = Writer::create(path, DOCS_SCHEMA)?;
    let mut cols = DocColumns::default();
    // Exact hashes are kept by row.
    let mut row = 0u32;
    while let Some(d) = reader.next_doc()? {
        let Some(text) = d.text else {
            bail!("{} line {}: a copy whose fields were never filled in", src.display(), reader.line());
        };
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        cols.doc_id.push(i64::from(d.id));
        cols.url.push(ByteArray::from(d.url));
        cols.host.push(ByteArray::from(d.host));
        cols.source.push(ByteArray::from(d.source.to_string().as_str()));
        cols.bytes.push(int(text.bytes));
        cols.lines.push(int(text.lines));
        cols.chunks.push(int(text.chunks));
        cols.title.push(ByteArray::from(text.title));
        cols.missing_for.push(i64::from(d.missing_for));
        match hashes.peek() {
            Some(r) if r.doc == row => {
                cols.exact_hash.push(ByteArray::from(format!("{:032x}", r.hash).as_str()));
                cols.exact_defined.push(1);
                hashes.next();
            }
            Some(r) if r.doc < row => {
                bail!("{} is not in docID order at doc {}", exact_path.display(), r.doc)
            }
            _ => cols.exact_defined.push(0),
        }
        if cols.len() == DOCS_ROW_GROUP {
            cols.flush(&mut writer)?;
        }
        row += 1;
    }
    let doc = u64::from(reader.rows());
    if let Some(r) = hashes.next() {
        bail!("{} names doc {} but {} lists {doc} documents", exact_path.display(), r.doc, src.display());
    }
    if cols.len() > 0 || doc == 0 {
        cols.flush(&mut writer)?;
    }
    writer.finish()?;
    Ok(doc)
}
