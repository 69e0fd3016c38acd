//! The Parquet layout: the copies of an analysis's outputs for engines
//! that read Parquet and not our `.fpd` records or CSV (Spark, DuckDB,
//! pandas), written by two export stages of `--format parquet`:
//!
//! | file | export | columns |
//! |---|---|---|
//! | `parquet/postings.parquet` | [`FINGERPRINT_EXPORT`] | `fp` INT64, `doc` INT64 (the docID): one row per FPrint-DocID-Chunk record, in `(fp as u64, doc)` order |
//! | `parquet/fingerprint-docs.parquet` | [`FINGERPRINT_EXPORT`] | `fingerprint-docs.csv`'s columns, then `exact_hash`, `source_path`, `source_offset` ([`super::parquet_tables`]) |
//! | `parquet/NAME.parquet` | [`TABLES_EXPORT`] | `NAME.csv` for every table of [`super::parquet_tables::TABLES`] the analysis holds, with its columns' declared types |
//!
//! Every integer is signed INT64: `fp` is the u64 fingerprint's bits read
//! as an i64 (`fp as i64`), because Spark reads unsigned 64-bit Parquet
//! columns as DECIMAL(20,0) and spends about twice the CPU on them. Joins
//! and equality only need the bits, so the sign does not matter to them.
//!
//! `exact_hash` is a string rather than FIXED_LEN_BYTE_ARRAY(16): every
//! engine groups and compares strings the same way, and DuckDB, pandas and
//! Spark show it as the text `dump` prints; dictionary encoding and Snappy
//! keep the cost to about the 16 bytes of the binary form on disk.
//!
//! The files are written from the stages' own outputs (the sorted
//! partitions, `fprint-exact.fpd`, the CSV tables), streamed in row
//! groups, so memory stays bounded whatever the crawl size, and the bytes
//! are the same for the same inputs: no timestamps, a fixed row-group size,
//! one codec (Snappy).
//!
//! # A copy is never older than its table
//!
//! Each export is a stage of its own, stamped and chained on the stage
//! whose tables it copies. When a stage it follows runs again (another
//! `-T`, new inputs, an output rebuilt), the export's files and stamp are
//! removed as that stage begins (`stage::remove_copies_of`), whether or not
//! this command exports again: a rerun with `--format csv` leaves no
//! Parquet file beside a newer CSV.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde::{Deserialize, Serialize};

use super::handles::DocIds;
use super::manifest::Manifest;
use super::parquet_tables::{self, Column, FINGERPRINT_DOCS, Kind, TABLES};
use super::registry::{self, StageName};
use super::{CannotWrite, ChunkRecord, Mapped, OutDir, Stamp, commit, remove_file_if_exists, temp_path};

/// Postings per row group: 1 Mi rows is 16 MiB of buffered values, small
/// next to any memory budget and large enough for Spark to split on.
pub(crate) const POSTINGS_ROW_GROUP: usize = 1 << 20;

const POSTINGS: [Column; 2] = [
    Column { name: "fp", kind: Kind::Int, nullable: false },
    Column { name: "doc", kind: Kind::Int, nullable: false },
];

/// What goes into every export's stage key besides its upstream's: a
/// change of the files' layout makes the next run export again.
pub(crate) const LAYOUT: &str = "parquet layout 2: fingerprint-docs.parquet, NAME.parquet per table";

/// An export stage: its name, the stages whose tables its files copy, and
/// every file it can write.
pub(crate) struct Export {
    pub stage: &'static StageName,
    pub follows: &'static [&'static StageName],
    pub files: fn(&OutDir) -> Vec<PathBuf>,
}

/// `postings.parquet` and `fingerprint-docs.parquet`, after the
/// fingerprint stage (`fingerprint`, `run`).
pub(crate) const FINGERPRINT_EXPORT: Export = Export {
    stage: &registry::PARQUET,
    follows: &[&registry::FINGERPRINT],
    files: |out| vec![out.parquet_postings(), out.parquet_table(FINGERPRINT_DOCS.name)],
};

/// `NAME.parquet` for every table, after the report (`report`, `run`):
/// it copies tables of all four stages (docs.csv is the exact stage's and
/// the report's).
pub(crate) const TABLES_EXPORT: Export = Export {
    stage: &registry::PARQUET_TABLES,
    follows: &registry::ANALYSIS,
    files: |out| TABLES.iter().map(|t| out.parquet_table(t.name)).collect(),
};

/// The exports whose files copy `stage`'s tables.
pub(crate) fn exports_following(stage: &StageName) -> impl Iterator<Item = &'static Export> {
    [&FINGERPRINT_EXPORT, &TABLES_EXPORT].into_iter().filter(move |e| e.follows.contains(&stage))
}

/// Removes the stamp and every file of `export`: every file it can
/// write, not only those its stamp lists, so that a failed or killed
/// export leaves nothing either.
pub(crate) fn remove_export(out: &OutDir, export: &Export) -> anyhow::Result<()> {
    Stamp::remove(&out.stamp(export.stage.name))?;
    for file in (export.files)(out) {
        remove_file_if_exists(&file)?;
    }
    Ok(())
}

/// What the fingerprint stage's export wrote, for `stats.json`.
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

/// Writes `parquet/postings.parquet` and `parquet/fingerprint-docs.parquet`
/// from the fingerprint stage's outputs in `out`; returns the files.
pub(crate) fn write(out: &OutDir, stats: &mut ParquetStats) -> anyhow::Result<Vec<PathBuf>> {
    create_dir(out)?;
    let (postings, docs) = (out.parquet_postings(), out.parquet_table(FINGERPRINT_DOCS.name));
    stats.postings = write_postings(out, &postings)?;
    stats.postings_bytes = file_len(&postings)?;
    stats.documents = parquet_tables::write_table(out, &FINGERPRINT_DOCS, &docs)?;
    stats.docs_bytes = file_len(&docs)?;
    Ok(vec![postings, docs])
}

/// What the report's export wrote, for `stats.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TablesStats {
    /// The tables written, by name, in [`TABLES`]' order.
    pub tables: Vec<String>,
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// Writes `parquet/NAME.parquet` for every table of [`TABLES`] whose CSV
/// is in `out`, and removes the copy of any that is not; returns the
/// files written.
pub(crate) fn write_tables(out: &OutDir, stats: &mut TablesStats) -> anyhow::Result<Vec<PathBuf>> {
    create_dir(out)?;
    let mut written = Vec::new();
    for table in &TABLES {
        let dest = out.parquet_table(table.name);
        if !(table.csv)(out).exists() {
            remove_file_if_exists(&dest)?;
            continue;
        }
        stats.rows += parquet_tables::write_table(out, table, &dest)?;
        stats.bytes += file_len(&dest)?;
        stats.tables.push(table.name.to_string());
        written.push(dest);
    }
    Ok(written)
}

fn create_dir(out: &OutDir) -> anyhow::Result<()> {
    let dir = out.parquet_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))
}

fn file_len(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?.len())
}

/// One column's values for a row group.
#[derive(Clone, Copy)]
pub(crate) enum Values<'a> {
    Int64(&'a [i64]),
    Double(&'a [f64]),
    Bool(&'a [bool]),
    Bytes(&'a [ByteArray]),
}

/// A Parquet file being written under its temporary name.
pub(crate) struct Writer {
    path: PathBuf,
    inner: SerializedFileWriter<File>,
}

impl Writer {
    /// Starts `path` with `columns`: INT64, DOUBLE, BOOLEAN or STRING,
    /// required or optional (nullable).
    pub(crate) fn create(path: &Path, columns: &[Column]) -> anyhow::Result<Writer> {
        let fields = columns
            .iter()
            .map(|c| {
                let (physical, logical) = match c.kind {
                    Kind::Int => (PhysicalType::INT64, None),
                    Kind::Double => (PhysicalType::DOUBLE, None),
                    Kind::Bool => (PhysicalType::BOOLEAN, None),
                    Kind::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
                };
                let repetition = if c.nullable { Repetition::OPTIONAL } else { Repetition::REQUIRED };
                Type::primitive_type_builder(c.name, physical)
                    .with_repetition(repetition)
                    .with_logical_type(logical)
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()
            .context("bad Parquet schema")?;
        let schema = Arc::new(
            Type::group_type_builder("schema").with_fields(fields).build().context("bad Parquet schema")?,
        );
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build());
        crate::base::interrupt::check()?;
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let inner =
            SerializedFileWriter::new(file, schema, props).with_context(|| CannotWrite(tmp.clone()))?;
        Ok(Writer { path: path.to_path_buf(), inner })
    }

    /// Writes one row group, one column at a time in schema order; each
    /// column's definition levels when it is optional (1 present, 0 null;
    /// values only for the present ones).
    pub(crate) fn row_group(&mut self, columns: &[(Values<'_>, Option<&[i16]>)]) -> anyhow::Result<()> {
        let tmp = temp_path(&self.path);
        let err = || CannotWrite(tmp.clone());
        let mut group = self.inner.next_row_group().with_context(err)?;
        let mut given = columns.iter();
        while let Some(mut writer) = group.next_column().with_context(err)? {
            let Some(&(values, defs)) = given.next() else {
                bail!("{}: too few columns given", tmp.display())
            };
            match values {
                Values::Int64(v) => writer.typed::<Int64Type>().write_batch(v, defs, None),
                Values::Double(v) => writer.typed::<DoubleType>().write_batch(v, defs, None),
                Values::Bool(v) => writer.typed::<BoolType>().write_batch(v, defs, None),
                Values::Bytes(v) => writer.typed::<ByteArrayType>().write_batch(v, defs, None),
            }
            .with_context(err)?;
            writer.close().with_context(err)?;
        }
        group.close().with_context(err)?;
        Ok(())
    }

    pub(crate) fn finish(self) -> anyhow::Result<()> {
        let tmp = temp_path(&self.path);
        self.inner.close().with_context(|| CannotWrite(tmp))?;
        commit(&self.path)
    }
}

/// Streams the sorted partitions, in partition order, into
/// `postings.parquet`; returns the number of rows.
fn write_postings(out: &OutDir, path: &Path) -> anyhow::Result<u64> {
    let doc_ids = DocIds::open(out, &Manifest::read(out)?)?;
    let mut writer = Writer::create(path, &POSTINGS)?;
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
                writer.row_group(&[(Values::Int64(&fps), None), (Values::Int64(&docs), None)])?;
                rows += fps.len() as u64;
                fps.clear();
                docs.clear();
            }
        }
    }
    if !fps.is_empty() || rows == 0 {
        writer.row_group(&[(Values::Int64(&fps), None), (Values::Int64(&docs), None)])?;
        rows += fps.len() as u64;
    }
    writer.finish()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each export follows the stages whose tables it copies, and a stage
    /// that runs again finds the exports to remove.
    #[test]
    fn exports_follow_the_stages_whose_tables_they_copy() {
        use super::registry::{EXACT, FINGERPRINT, PAIRS, REPORT};
        assert_eq!(FINGERPRINT_EXPORT.follows, [&FINGERPRINT]);
        assert_eq!(TABLES_EXPORT.follows, [&FINGERPRINT, &EXACT, &PAIRS, &REPORT]);
        assert_ne!(FINGERPRINT_EXPORT.stage, TABLES_EXPORT.stage);
        let followed = |stage| exports_following(stage).map(|e| e.stage.name).collect::<Vec<_>>();
        assert_eq!(followed(&PAIRS), ["parquet-tables"]);
        assert_eq!(followed(&FINGERPRINT), ["parquet", "parquet-tables"]);
    }
}
