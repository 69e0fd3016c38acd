//! Every CSV table of an analysis as Parquet, with the types of its
//! columns declared once, here ([`TABLES`], [`FINGERPRINT_DOCS`]), and
//! the one writer that copies a table to Parquet through them
//! ([`write_table`]).
//!
//! A table's Parquet file has the CSV's columns, in the CSV's order and
//! under the same names, each with its declared type; the document tables
//! then add three columns of their own ([`Derived`]). The types:
//!
//! | kind | Parquet | CSV cell |
//! |---|---|---|
//! | integer | INT64 | a decimal integer; empty only in a nullable column, where it is null |
//! | float | DOUBLE | a decimal number (`0.833300`, `38.0753`) |
//! | boolean | BOOLEAN | `true` or `false`; empty only in a nullable column, where it is null |
//! | text | STRING (UTF-8), never null | the cell as written: an empty text is an empty string |
//!
//! | table | columns (nullable ones marked `?`) |
//! |---|---|
//! | `docs` | `doc_id`, `url`, `host`, `source`, `bytes`, `lines`, `chunks`, `exact_center`?, `title`, `missing_for`, `date`, `capture`, `canonical`, `near_group`?, then `exact_hash`?, `source_path`, `source_offset` |
//! | `fingerprint-docs` | `doc_id`, `url`, `host`, `source`, `bytes`, `lines`, `chunks`, `title`, `missing_for`, `date`, `capture`, `canonical`, then `exact_hash`?, `source_path`, `source_offset` |
//! | `overlap` | `doc_i`, `doc_j`, `shared`, and `jaccard`, `containment` (DOUBLE) when the CSV has them |
//! | `groups` | `group`, `documents`, `centers`, `pairs`, `hosts`, `diameter`?, `density` (DOUBLE), `chained` (BOOLEAN), `sample_url` |
//! | `hosts` | `host_a`, `host_b`, `docs_a`, `docs_b`, `replicated_a_on_b`, `replicated_b_on_a`, `coverage_a`, `coverage_b` (DOUBLE), `mirror` (BOOLEAN) |
//! | `host-summary` | `host`, `documents`, `exact_copies`, `near_replicas`, `skippable`, `partner_hosts`, `shares_most_with` |
//! | `aliases` | `kind`, `doc_a`, `doc_b`, `url_a`, `url_b`, `content` |
//! | `flags` | `doc_id`, `url`, `www_unique`, `http_unique` (BOOLEAN), `exact_signature_unique`? (BOOLEAN), `exact_signature_copycount`?, `fuzzy_signature`, `fuzzy_signature_unique`? (BOOLEAN), `fuzzy_signature_copycount`?, `title_unique`? (BOOLEAN), `near_replica_count`? |
//! | `changes` | `doc_id`, `url`, `change`, `missing_for`, `kept` (BOOLEAN), `center_before`?, `center_after`?, `moved_from`?, `moved_from_url`, `chunks_before`?, `chunks_kept`? |
//! | `stop-chunks` | `fprint` (the 16 hex digits, as in the CSV), `df`, `pairs`, `example_doc`, `text` |
//! | `against` | `doc_id`, `url`, `chunks`, `chunks_in_reference`, `ref_doc_id`?, `ref_url`, `ref_shared`?, `ref_chunks`?, `share_in_ref`? (DOUBLE), `share_of_ref`? (DOUBLE), `exact` (BOOLEAN), `held` (BOOLEAN) |
//! | `against-pairs` | `doc_id`, `ref_doc_id`, `shared`, `chunks`, `ref_chunks` |
//! | `redirects` | `source`, `url`, `status`, `target` |
//! | `copies` | `doc_id`, `original`, `kind` |
//!
//! (the table above is [`TABLES`] written out; its unit test keeps the
//! two alike). The derived columns of the document tables: `exact_hash`,
//! the xxh3-128 of the normalized text as 32 lowercase hex digits (as
//! `overlap dump --exact` prints it), null for an empty document, joined
//! from `fprint-exact.fpd` by row; `source_path` and `source_offset`,
//! `source` cut at its last colon ([`Source`]): the input as given (`-`
//! for standard input) and the record's offset in it.
//!
//! A table is streamed from its CSV in row groups of [`ROW_GROUP`] rows,
//! so memory stays bounded whatever its size; the bytes are the same for
//! the same CSV (no timestamps, one codec, a fixed row-group size). A cell
//! that does not parse as its column's type is the error "FILE line N:
//! COLUMN is not an integer ('CELL')" (or a number, true or false; "COLUMN
//! is empty" where it cannot be), a column the table does not declare
//! "FILE: column 'NAME' is not one of TABLE.csv's": the CSV is damaged, or
//! was written by another version.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use parquet::data_type::ByteArray;

use super::docs::Source;
use super::parquet::{Values, Writer};
use super::{ExactRecord, Mapped, OutDir};

/// Rows per row group: a few MiB of buffered values for the widest
/// tables (docs.csv, flags.csv, a few hundred bytes a row).
pub(crate) const ROW_GROUP: usize = 1 << 16;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// INT64.
    Int,
    /// DOUBLE.
    Double,
    /// BOOLEAN, `true`/`false` in the CSV.
    Bool,
    /// STRING, never null.
    Text,
}

/// One column of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// Whether its cell can be empty (a null in Parquet); never for a text.
    pub nullable: bool,
}

const fn int(name: &'static str) -> Column {
    Column { name, kind: Kind::Int, nullable: false }
}

const fn int_or_empty(name: &'static str) -> Column {
    Column { name, kind: Kind::Int, nullable: true }
}

const fn double(name: &'static str) -> Column {
    Column { name, kind: Kind::Double, nullable: false }
}

const fn double_or_empty(name: &'static str) -> Column {
    Column { name, kind: Kind::Double, nullable: true }
}

const fn boolean(name: &'static str) -> Column {
    Column { name, kind: Kind::Bool, nullable: false }
}

const fn boolean_or_empty(name: &'static str) -> Column {
    Column { name, kind: Kind::Bool, nullable: true }
}

const fn text(name: &'static str) -> Column {
    Column { name, kind: Kind::Text, nullable: false }
}

/// A column of a document table's Parquet file that its CSV does not
/// have, made from the CSV's row and the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Derived {
    /// The whole-text hash of `fprint-exact.fpd`, by row.
    ExactHash,
    /// `source`'s input.
    SourcePath,
    /// `source`'s offset.
    SourceOffset,
}

impl Derived {
    pub(crate) fn column(self) -> Column {
        match self {
            Derived::ExactHash => Column { name: "exact_hash", kind: Kind::Text, nullable: true },
            Derived::SourcePath => text("source_path"),
            Derived::SourceOffset => int("source_offset"),
        }
    }
}

/// A CSV table and its columns' types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Table {
    /// `NAME.csv`, copied to `parquet/NAME.parquet`.
    pub name: &'static str,
    /// The CSV's path in an output directory.
    pub csv: fn(&OutDir) -> PathBuf,
    /// Every column the CSV can have, in its order; a CSV may leave some
    /// out (overlap.csv's `jaccard` and `containment`).
    pub columns: &'static [Column],
    /// Columns added after the CSV's.
    pub derived: &'static [Derived],
}

impl Table {
    fn column(&self, name: &str) -> Option<Column> {
        self.columns.iter().copied().find(|c| c.name == name)
    }
}

const DOC_DERIVED: &[Derived] = &[Derived::ExactHash, Derived::SourcePath, Derived::SourceOffset];

/// `fingerprint-docs.csv`, which the fingerprint stage's export copies
/// ([`super::parquet`]).
pub(crate) const FINGERPRINT_DOCS: Table = Table {
    name: "fingerprint-docs",
    csv: OutDir::fingerprint_docs,
    columns: &[
        int("doc_id"),
        text("url"),
        text("host"),
        text("source"),
        int("bytes"),
        int("lines"),
        int("chunks"),
        text("title"),
        int("missing_for"),
        text("date"),
        text("capture"),
        text("canonical"),
    ],
    derived: DOC_DERIVED,
};

/// Every table of an analysis the report's export copies, each when its
/// CSV is there (`changes` needs `--previous`, `stop-chunks` `--max-df`,
/// `against` and `against-pairs` `--against`).
/// The intermediate `fingerprint-changes.csv` is left out, and
/// `fingerprint-docs.csv` is the fingerprint stage's export.
pub(crate) const TABLES: [Table; 13] = [
    Table {
        name: "docs",
        csv: OutDir::docs,
        columns: &[
            int("doc_id"),
            text("url"),
            text("host"),
            text("source"),
            int("bytes"),
            int("lines"),
            int("chunks"),
            int_or_empty("exact_center"),
            text("title"),
            int("missing_for"),
            text("date"),
            text("capture"),
            text("canonical"),
            int_or_empty("near_group"),
        ],
        derived: DOC_DERIVED,
    },
    Table {
        name: "overlap",
        csv: OutDir::overlap,
        columns: &[int("doc_i"), int("doc_j"), int("shared"), double("jaccard"), double("containment")],
        derived: &[],
    },
    Table {
        name: "groups",
        csv: OutDir::groups,
        columns: &[
            int("group"),
            int("documents"),
            int("centers"),
            int("pairs"),
            int("hosts"),
            int_or_empty("diameter"),
            double("density"),
            boolean("chained"),
            text("sample_url"),
        ],
        derived: &[],
    },
    Table {
        name: "hosts",
        csv: OutDir::hosts,
        columns: &[
            text("host_a"),
            text("host_b"),
            int("docs_a"),
            int("docs_b"),
            int("replicated_a_on_b"),
            int("replicated_b_on_a"),
            double("coverage_a"),
            double("coverage_b"),
            boolean("mirror"),
        ],
        derived: &[],
    },
    Table {
        name: "host-summary",
        csv: OutDir::host_summary,
        columns: &[
            text("host"),
            int("documents"),
            int("exact_copies"),
            int("near_replicas"),
            int("skippable"),
            int("partner_hosts"),
            text("shares_most_with"),
        ],
        derived: &[],
    },
    Table {
        name: "aliases",
        csv: OutDir::aliases,
        columns: &[text("kind"), int("doc_a"), int("doc_b"), text("url_a"), text("url_b"), text("content")],
        derived: &[],
    },
    Table {
        name: "flags",
        csv: OutDir::flags,
        columns: &[
            int("doc_id"),
            text("url"),
            boolean("www_unique"),
            boolean("http_unique"),
            boolean_or_empty("exact_signature_unique"),
            int_or_empty("exact_signature_copycount"),
            text("fuzzy_signature"),
            boolean_or_empty("fuzzy_signature_unique"),
            int_or_empty("fuzzy_signature_copycount"),
            boolean_or_empty("title_unique"),
            int_or_empty("near_replica_count"),
        ],
        derived: &[],
    },
    Table {
        name: "changes",
        csv: OutDir::changes,
        columns: &[
            int("doc_id"),
            text("url"),
            text("change"),
            int("missing_for"),
            boolean("kept"),
            int_or_empty("center_before"),
            int_or_empty("center_after"),
            int_or_empty("moved_from"),
            text("moved_from_url"),
            int_or_empty("chunks_before"),
            int_or_empty("chunks_kept"),
        ],
        derived: &[],
    },
    Table {
        name: "stop-chunks",
        csv: OutDir::stop_chunks,
        columns: &[text("fprint"), int("df"), int("pairs"), int("example_doc"), text("text")],
        derived: &[],
    },
    Table {
        name: "against",
        csv: OutDir::against,
        columns: &[
            int("doc_id"),
            text("url"),
            int("chunks"),
            int("chunks_in_reference"),
            int_or_empty("ref_doc_id"),
            text("ref_url"),
            int_or_empty("ref_shared"),
            int_or_empty("ref_chunks"),
            double_or_empty("share_in_ref"),
            double_or_empty("share_of_ref"),
            boolean("exact"),
            boolean("held"),
        ],
        derived: &[],
    },
    Table {
        name: "against-pairs",
        csv: OutDir::against_pairs,
        columns: &[int("doc_id"), int("ref_doc_id"), int("shared"), int("chunks"), int("ref_chunks")],
        derived: &[],
    },
    Table {
        name: "redirects",
        csv: OutDir::redirects,
        columns: &[text("source"), text("url"), int("status"), text("target")],
        derived: &[],
    },
    Table {
        name: "copies",
        csv: OutDir::copies,
        columns: &[int("doc_id"), int("original"), text("kind")],
        derived: &[],
    },
];

/// One column's values for the row group being filled.
struct Buffer {
    column: Column,
    data: Data,
    /// Definition levels (1 a value, 0 a null), for a nullable column.
    defs: Vec<i16>,
}

/// A column's values, of its kind.
enum Data {
    Int(Vec<i64>),
    Double(Vec<f64>),
    Bool(Vec<bool>),
    Text(Vec<ByteArray>),
}

impl Buffer {
    fn new(column: Column) -> Buffer {
        let data = match column.kind {
            Kind::Int => Data::Int(Vec::new()),
            Kind::Double => Data::Double(Vec::new()),
            Kind::Bool => Data::Bool(Vec::new()),
            Kind::Text => Data::Text(Vec::new()),
        };
        Buffer { column, data, defs: Vec::new() }
    }

    fn null(&mut self) {
        self.defs.push(0);
    }

    fn int(&mut self, v: i64) {
        if let Data::Int(vs) = &mut self.data {
            vs.push(v);
        }
        self.defined();
    }

    fn text(&mut self, v: &str) {
        if let Data::Text(vs) = &mut self.data {
            vs.push(ByteArray::from(v));
        }
        self.defined();
    }

    fn defined(&mut self) {
        if self.column.nullable {
            self.defs.push(1);
        }
    }

    /// Parses one CSV cell into the column; `Err` says what is wrong.
    fn push(&mut self, cell: &str) -> Result<(), String> {
        let column = self.column;
        if cell.is_empty() && column.kind != Kind::Text {
            if !column.nullable {
                return Err("is empty".into());
            }
            self.null();
            return Ok(());
        }
        let not = |what: &str| {
            let mut shown: String = cell.chars().take(40).collect();
            if shown.len() < cell.len() {
                shown.push_str("...");
            }
            format!("is not {what} ('{shown}')")
        };
        match &mut self.data {
            Data::Int(vs) => vs.push(cell.parse().map_err(|_| not("an integer"))?),
            Data::Double(vs) => match cell.parse::<f64>() {
                Ok(v) if v.is_finite() => vs.push(v),
                _ => return Err(not("a number")),
            },
            Data::Bool(vs) => vs.push(match cell {
                "true" => true,
                "false" => false,
                _ => return Err(not("true or false")),
            }),
            Data::Text(vs) => vs.push(ByteArray::from(cell)),
        }
        self.defined();
        Ok(())
    }

    fn values(&self) -> (Values<'_>, Option<&[i16]>) {
        let values = match &self.data {
            Data::Int(v) => Values::Int64(v),
            Data::Double(v) => Values::Double(v),
            Data::Bool(v) => Values::Bool(v),
            Data::Text(v) => Values::Bytes(v),
        };
        (values, self.column.nullable.then_some(self.defs.as_slice()))
    }

    fn clear(&mut self) {
        match &mut self.data {
            Data::Int(v) => v.clear(),
            Data::Double(v) => v.clear(),
            Data::Bool(v) => v.clear(),
            Data::Text(v) => v.clear(),
        }
        self.defs.clear();
    }
}

/// The column types of a table's Parquet file given its CSV's header:
/// the header's columns, then the derived ones.
fn schema(table: &Table, header: &csv::StringRecord, path: &Path) -> anyhow::Result<Vec<Column>> {
    let mut columns = Vec::with_capacity(header.len() + table.derived.len());
    for name in header {
        let Some(column) = table.column(name) else {
            bail!("{}: column '{name}' is not one of {}.csv's", path.display(), table.name);
        };
        if columns.iter().any(|c: &Column| c.name == name) {
            bail!("{}: column '{name}' is there twice", path.display());
        }
        columns.push(column);
    }
    if !table.derived.is_empty() && !header.iter().any(|h| h == "source") {
        bail!("{}: no source column", path.display());
    }
    columns.extend(table.derived.iter().map(|d| d.column()));
    Ok(columns)
}

/// Copies `table`'s CSV in `out` to `dest` as Parquet; returns its rows.
pub(crate) fn write_table(out: &OutDir, table: &Table, dest: &Path) -> anyhow::Result<u64> {
    let src = (table.csv)(out);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(&src)
        .with_context(|| format!("cannot open {}", src.display()))?;
    let header = reader.headers().with_context(|| format!("cannot read {}", src.display()))?.clone();
    let columns = schema(table, &header, &src)?;
    let source_at = header.iter().position(|h| h == "source");
    let mut writer = Writer::create(dest, &columns)?;
    let mut buffers: Vec<Buffer> = columns.iter().map(|&c| Buffer::new(c)).collect();
    let csv_columns = header.len();

    // The exact hashes, by row (empty documents have none).
    let exact = if table.derived.contains(&Derived::ExactHash) {
        Some(Mapped::<ExactRecord>::open(&out.fprint_exact())?)
    } else {
        None
    };
    let mut hashes = exact.as_ref().map(|e| e.iter().peekable());

    let mut record = csv::StringRecord::new();
    let mut rows = 0u64;
    let mut in_group = 0usize;
    loop {
        let more =
            reader.read_record(&mut record).with_context(|| format!("cannot read {}", src.display()))?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line());
        let bad = |column: &str, why: &str| anyhow::anyhow!("{} line {line}: {column} {why}", src.display());
        for (buffer, cell) in buffers[..csv_columns].iter_mut().zip(record.iter()) {
            buffer.push(cell).map_err(|why| bad(buffer.column.name, &why))?;
        }
        let source = match source_at {
            Some(at) if !table.derived.is_empty() => {
                Some(Source::parse(&record[at]).ok_or_else(|| bad("source", "is not INPUT:OFFSET"))?)
            }
            _ => None,
        };
        let derived = &mut buffers[csv_columns..];
        for (buffer, d) in derived.iter_mut().zip(table.derived) {
            match d {
                Derived::ExactHash => {
                    // Records name rows, from 0: this row is `rows`.
                    let hashes = hashes.as_mut().expect("opened for a table with exact_hash");
                    match hashes.peek() {
                        Some(r) if u64::from(r.doc) == rows => {
                            buffer.text(&format!("{:032x}", r.hash));
                            hashes.next();
                        }
                        Some(r) if u64::from(r.doc) < rows => {
                            bail!("{} is not in docID order at doc {}", out.fprint_exact().display(), r.doc)
                        }
                        _ => buffer.null(),
                    }
                }
                Derived::SourcePath => buffer.text(source.expect("checked in schema").input),
                Derived::SourceOffset => {
                    let offset = source.expect("checked in schema").offset;
                    buffer.int(i64::try_from(offset).map_err(|_| bad("source", "has an offset past INT64"))?);
                }
            }
        }
        rows += 1;
        in_group += 1;
        if in_group == ROW_GROUP {
            flush(&mut writer, &mut buffers)?;
            in_group = 0;
        }
    }
    if let Some(r) = hashes.as_mut().and_then(|h| h.next()) {
        bail!(
            "{} names doc {} but {} lists {rows} documents",
            out.fprint_exact().display(),
            r.doc,
            src.display()
        );
    }
    // An empty table is one empty row group, as readers expect.
    if in_group > 0 || rows == 0 {
        flush(&mut writer, &mut buffers)?;
    }
    writer.finish()?;
    Ok(rows)
}

fn flush(writer: &mut Writer, buffers: &mut [Buffer]) -> anyhow::Result<()> {
    let columns: Vec<(Values<'_>, Option<&[i16]>)> = buffers.iter().map(Buffer::values).collect();
    writer.row_group(&columns)?;
    buffers.iter_mut().for_each(Buffer::clear);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_names_its_csv_and_texts_are_never_null() {
        let out = OutDir::new("/o");
        for t in TABLES.iter().chain([&FINGERPRINT_DOCS]) {
            let csv = (t.csv)(&out);
            assert_eq!(csv.file_name().unwrap().to_str().unwrap(), format!("{}.csv", t.name));
            for c in t.columns.iter().copied().chain(t.derived.iter().map(|d| d.column())) {
                assert!(!(c.kind == Kind::Text && c.nullable) || c.name == "exact_hash", "{}", c.name);
            }
        }
    }

    /// The module's table of columns says what [`TABLES`] declares.
    #[test]
    fn the_documented_columns_are_the_declared_ones() {
        let doc = include_str!("parquet_tables.rs");
        for t in TABLES.iter().chain([&FINGERPRINT_DOCS]) {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("//! | `{}` |", t.name)))
                .unwrap_or_else(|| panic!("no row for {}", t.name));
            let mut at = 0;
            for c in t.columns.iter().copied().chain(t.derived.iter().map(|d| d.column())) {
                let name = format!("`{}`", c.name);
                let found =
                    row[at..].find(&name).unwrap_or_else(|| panic!("{}: {name} not in order", t.name));
                at += found + name.len();
                assert_eq!(row[at..].starts_with('?'), c.nullable, "{}: {name}'s ?", t.name);
            }
        }
    }

    fn roundtrip(table: &Table, csv: &str) -> anyhow::Result<u64> {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        std::fs::write((table.csv)(&out), csv).unwrap();
        let dest = dir.path().join("t.parquet");
        write_table(&out, table, &dest)
    }

    #[test]
    fn bad_cells_name_the_file_line_and_column() {
        let hosts = &TABLES[3];
        let head =
            "host_a,host_b,docs_a,docs_b,replicated_a_on_b,replicated_b_on_a,coverage_a,coverage_b,mirror\n";
        assert_eq!(roundtrip(hosts, &format!("{head}a,b,1,2,1,1,100.0000,50.0000,true\n")).unwrap(), 1);
        for (row, want) in [
            ("a,b,1,2,1,1,x,50.0000,true", "line 2: coverage_a is not a number ('x')"),
            ("a,b,,2,1,1,1.0,50.0000,true", "line 2: docs_a is empty"),
            ("a,b,1,2,1,1,1.0,50.0000,yes", "line 2: mirror is not true or false ('yes')"),
            ("a,b,1.5,2,1,1,1.0,50.0000,true", "line 2: docs_a is not an integer ('1.5')"),
        ] {
            let e = roundtrip(hosts, &format!("{head}{row}\n")).unwrap_err();
            assert!(format!("{e:#}").contains(want), "{e:#}");
        }
        let e = roundtrip(hosts, "host_a,colour\n").unwrap_err();
        assert!(format!("{e:#}").contains("column 'colour' is not one of hosts.csv's"), "{e:#}");
    }
}
