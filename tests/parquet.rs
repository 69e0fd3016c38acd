//! `--format parquet`: the Parquet copies of the fingerprint stage's
//! outputs and of every CSV table, read back with the `parquet` crate's
//! own reader and, when Python has them, by DuckDB and pandas
//! (`scripts/check_parquet.py`, `scripts/check_parquet_tables.py`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;
use parquet::basic::{ConvertedType, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

fn fingerprint_parquet(out: &Path, extra: &[&str]) {
    let mut args = vec!["fingerprint", "testdata/sample.warc.gz", "--out"];
    let out_arg = arg(out);
    args.push(&out_arg);
    args.extend_from_slice(&["--format", "parquet", "-q"]);
    args.extend_from_slice(extra);
    overlap_ok(&args);
}

/// A first analysis with stop chunks (`--max-df 5`), all as Parquet.
fn first_analysis(out: &Path, extra: &[&str]) {
    let mut args = vec!["run".to_string(), "testdata/sample.warc.gz".into(), "--out".into(), arg(out)];
    args.extend(["--max-df", "5", "--format", "parquet", "-q"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    overlap_ok(&args);
}

/// An analysis carried forward from `first` (so it has changes.csv), of
/// more inputs (URL aliases, redirects, a corrupt record), with Jaccard
/// and containment columns in overlap.csv.
fn second_analysis(first: &Path, out: &Path) {
    overlap_ok([
        "run",
        "testdata/sample.warc.gz",
        "testdata/sample.arc.gz",
        "testdata/report/crawl.warc.gz",
        "testdata/real/wget.warc.gz",
        "testdata/corrupt.warc.gz",
        "--out",
        &arg(out),
        "--previous",
        &arg(first),
        "--keep-missing",
        "2",
        "--against",
        &arg(first),
        "-T",
        "3",
        "--jaccard",
        "0.5",
        "--containment",
        "0.5",
        "--format",
        "parquet",
        "-q",
    ]);
}

fn open(path: &Path) -> SerializedFileReader<fs::File> {
    let file = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    SerializedFileReader::new(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The columns' names and physical types.
fn columns(reader: &SerializedFileReader<fs::File>) -> Vec<(String, PhysicalType)> {
    let schema = reader.metadata().file_metadata().schema_descr();
    schema.columns().iter().map(|c| (c.name().to_string(), c.physical_type())).collect()
}

/// Every row as its fields.
fn rows(reader: &SerializedFileReader<fs::File>) -> Vec<Vec<Field>> {
    reader
        .get_row_iter(None)
        .expect("row iterator")
        .map(|r| r.expect("a row").get_column_iter().map(|(_, f)| f.clone()).collect())
        .collect()
}

fn long(f: &Field) -> i64 {
    match f {
        Field::Long(v) => *v,
        other => panic!("expected an INT64, got {other:?}"),
    }
}

fn text(f: &Field) -> String {
    match f {
        Field::Str(s) => s.clone(),
        other => panic!("expected a string, got {other:?}"),
    }
}

/// The stdout of `overlap dump DIR [--exact]` as CSV rows, header dropped.
fn dump(dir: &Path, exact: bool) -> Vec<Vec<String>> {
    let mut args = vec!["dump".to_string(), arg(dir)];
    if exact {
        args.push("--exact".into());
    }
    let out = overlap_ok(&args);
    let text = String::from_utf8(out.stdout).expect("dump prints UTF-8");
    text.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect()
}

/// What a column holds, as the outputs page describes the tables: the
/// test's own account, by column name (a name means the same in every
/// table), kept apart from the store's schema table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Double,
    Bool,
    Text,
}

const INTS: &[&str] = &[
    "doc_id",
    "bytes",
    "lines",
    "chunks",
    "exact_center",
    "missing_for",
    "near_group",
    "doc_i",
    "doc_j",
    "shared",
    "group",
    "documents",
    "centers",
    "pairs",
    "hosts",
    "diameter",
    "docs_a",
    "docs_b",
    "replicated_a_on_b",
    "replicated_b_on_a",
    "exact_copies",
    "near_replicas",
    "skippable",
    "partner_hosts",
    "doc_a",
    "doc_b",
    "exact_signature_copycount",
    "fuzzy_signature_copycount",
    "near_replica_count",
    "center_before",
    "center_after",
    "moved_from",
    "chunks_before",
    "chunks_kept",
    "df",
    "example_doc",
    "status",
    "original",
    "source_offset",
    "chunks_in_reference",
    "ref_doc_id",
    "ref_shared",
    "ref_chunks",
];
const DOUBLES: &[&str] =
    &["jaccard", "containment", "density", "coverage_a", "coverage_b", "share_in_ref", "share_of_ref"];
const BOOLS: &[&str] = &[
    "chained",
    "mirror",
    "www_unique",
    "http_unique",
    "exact_signature_unique",
    "fuzzy_signature_unique",
    "title_unique",
    "kept",
    "exact",
    "held",
];
/// The columns whose cell can be empty: null in Parquet. Texts never are.
const NULLABLE: &[&str] = &[
    "exact_center",
    "near_group",
    "diameter",
    "exact_signature_unique",
    "exact_signature_copycount",
    "fuzzy_signature_unique",
    "fuzzy_signature_copycount",
    "title_unique",
    "near_replica_count",
    "center_before",
    "center_after",
    "moved_from",
    "chunks_before",
    "chunks_kept",
    "exact_hash",
    // against.csv leaves them empty without a match; against-pairs.csv
    // never does.
    "against.ref_doc_id",
    "against.ref_shared",
    "against.ref_chunks",
    "share_in_ref",
    "share_of_ref",
];

fn kind(column: &str) -> Kind {
    if INTS.contains(&column) {
        Kind::Int
    } else if DOUBLES.contains(&column) {
        Kind::Double
    } else if BOOLS.contains(&column) {
        Kind::Bool
    } else {
        Kind::Text
    }
}

/// The CSV file of table `name`: at the top of the analysis, but for the
/// fingerprint stage's document table, which is with the record files.
fn csv_of(dir: &Path, name: &str) -> std::path::PathBuf {
    match name {
        "fingerprint-docs" => dir.join("records/fingerprint-docs.csv"),
        _ => dir.join(format!("{name}.csv")),
    }
}

/// The tables an analysis holds as CSV, by name, that the export copies
/// (fingerprint-changes.csv is an intermediate; fingerprint-docs.csv is
/// the fingerprint stage's export, here too).
fn csv_tables(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    if csv_of(dir, "fingerprint-docs").exists() {
        names.insert("fingerprint-docs".to_string());
    }
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".csv")
            && stem != "fingerprint-changes"
        {
            names.insert(stem.to_string());
        }
    }
    names
}

/// The Parquet copies in `dir/parquet/`, by name, postings.parquet left out.
fn parquet_tables(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = fs::read_dir(dir.join("parquet")) else { return BTreeSet::new() };
    entries
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".parquet").map(String::from))
        .filter(|n| n != "postings")
        .collect()
}

/// An analysis of `run --format parquet`: one Parquet file per CSV table,
/// each equal to its CSV ([`check_tables`]).
fn check_all(dir: &Path) -> BTreeMap<String, usize> {
    let tables = csv_tables(dir);
    assert_eq!(parquet_tables(dir), tables, "{}: one Parquet file per CSV table", dir.display());
    check_tables(dir, &tables)
}

/// The Parquet copies of `tables` in `dir` against their CSV: the CSV's
/// columns in order (the document tables then `exact_hash`, `source_path`,
/// `source_offset`), each of its kind's type, required or optional as
/// [`NULLABLE`] says, and every cell equal; returns the rows per table.
fn check_tables(dir: &Path, tables: &BTreeSet<String>) -> BTreeMap<String, usize> {
    let hashes: BTreeMap<String, String> =
        dump(dir, true).into_iter().map(|r| (r[1].clone(), r[0].clone())).collect();
    let mut counts = BTreeMap::new();
    for name in tables {
        let (header, csv_rows) = read_csv(&csv_of(dir, name));
        let path = dir.join("parquet").join(format!("{name}.parquet"));
        let reader = open(&path);
        let docs = name == "docs" || name == "fingerprint-docs";
        let mut want: Vec<String> = header.clone();
        if docs {
            want.extend(["exact_hash", "source_path", "source_offset"].map(String::from));
        }
        let schema = reader.metadata().file_metadata().schema_descr();
        let got: Vec<String> = schema.columns().iter().map(|c| c.name().to_string()).collect();
        assert_eq!(got, want, "{name}: the columns");
        for c in schema.columns() {
            let (physical, utf8) = match kind(c.name()) {
                Kind::Int => (PhysicalType::INT64, false),
                Kind::Double => (PhysicalType::DOUBLE, false),
                Kind::Bool => (PhysicalType::BOOLEAN, false),
                Kind::Text => (PhysicalType::BYTE_ARRAY, true),
            };
            assert_eq!(c.physical_type(), physical, "{name}.{}", c.name());
            assert_eq!(c.converted_type() == ConvertedType::UTF8, utf8, "{name}.{}: a STRING", c.name());
            let nullable =
                NULLABLE.contains(&c.name()) || NULLABLE.contains(&format!("{name}.{}", c.name()).as_str());
            assert_eq!(c.max_def_level() == 1, nullable, "{name}.{}: nullable", c.name());
        }
        let got = rows(&reader);
        assert_eq!(got.len(), csv_rows.len(), "{name}: one row per CSV row");
        for (i, (row, cells)) in got.iter().zip(&csv_rows).enumerate() {
            for ((field, cell), column) in row.iter().zip(cells).zip(&header) {
                let same = match (field, kind(column)) {
                    (Field::Null, Kind::Int | Kind::Double | Kind::Bool) => cell.is_empty(),
                    (Field::Long(v), Kind::Int) => cell.parse::<i64>().ok() == Some(*v),
                    (Field::Double(v), Kind::Double) => cell.parse::<f64>().ok() == Some(*v),
                    (Field::Bool(v), Kind::Bool) => cell == if *v { "true" } else { "false" },
                    (Field::Str(v), Kind::Text) => v == cell,
                    _ => false,
                };
                assert!(same, "{name} row {i} {column}: {field:?}, the CSV has {cell:?}");
            }
            if docs {
                let extra = &row[header.len()..];
                let source = &cells[header.iter().position(|h| h == "source").unwrap()];
                assert_eq!(format!("{}:{}", text(&extra[1]), long(&extra[2])), *source, "{name} row {i}");
                match (&extra[0], hashes.get(&cells[0])) {
                    (Field::Str(h), Some(want)) => {
                        assert_eq!(h, want, "{name}: exact_hash of doc {}", cells[0])
                    }
                    (Field::Null, None) => {}
                    (got, want) => {
                        panic!("{name} doc {}: exact_hash {got:?}, dump --exact {want:?}", cells[0])
                    }
                }
            }
        }
        counts.insert(name.clone(), got.len());
    }
    counts
}

#[test]
fn every_table_is_copied_with_its_types_cell_for_cell() {
    let tmp = tempdir();
    let (first, second) = (tmp.path().join("first"), tmp.path().join("second"));
    first_analysis(&first, &[]);
    second_analysis(&first, &second);
    let a = check_all(&first);
    let b = check_all(&second);
    // Every table is there, with rows to compare (aliases.csv only has rows
    // in the second; changes.csv and stop-chunks.csv are there only with
    // --previous and --max-df).
    for (counts, names) in [
        (&a, &["docs", "overlap", "groups", "hosts", "host-summary", "flags", "stop-chunks", "copies"][..]),
        (
            &b,
            &[
                "docs",
                "overlap",
                "groups",
                "hosts",
                "aliases",
                "flags",
                "changes",
                "redirects",
                "against",
                "against-pairs",
            ][..],
        ),
    ] {
        for name in names {
            assert!(counts.get(*name).is_some_and(|&n| n > 0), "{name}: {counts:?}");
        }
    }
    assert!(!b.contains_key("stop-chunks") && !a.contains_key("changes") && !a.contains_key("against"));
    let (_, against) = read_csv(&second.join("against.csv"));
    assert!(against.iter().any(|r| r[4].is_empty()), "a page the reference shares nothing with");
    // With the nulls to compare: empty documents, no groups, new URLs.
    let (_, changes) = read_csv(&second.join("changes.csv"));
    assert!(changes.iter().any(|r| r[5].is_empty()), "a change without center_before");
    let (_, docs) = read_csv(&first.join("docs.csv"));
    assert!(docs.iter().any(|r| r[7].is_empty()) && docs.iter().any(|r| r[13].is_empty()));
}

#[test]
fn standard_input_is_source_path_dash() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let sample = fs::read(testdata("sample.warc.gz")).unwrap();
    let done = overlap_stdin(["run", "-", "--out", &arg(&out), "--format", "parquet", "-q"], &sample);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    let docs = rows(&open(&out.join("parquet/docs.parquet")));
    assert!(!docs.is_empty());
    let at = 14;
    for row in &docs {
        assert_eq!(text(&row[at + 1]), "-");
        assert_eq!(text(&row[3]), format!("-:{}", long(&row[at + 2])));
    }
    check_all(&out);
}

#[test]
fn postings_and_fingerprint_docs_equal_the_stage_outputs() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    fingerprint_parquet(&out, &[]);
    assert_eq!(
        parquet_tables(&out),
        BTreeSet::from(["fingerprint-docs".to_string()]),
        "fingerprint writes postings.parquet and fingerprint-docs.parquet only"
    );

    let postings = open(&out.join("parquet/postings.parquet"));
    assert_eq!(
        columns(&postings),
        vec![("fp".to_string(), PhysicalType::INT64), ("doc".to_string(), PhysicalType::INT64)]
    );
    let want = dump(&out, false);
    let got = rows(&postings);
    assert!(want.len() > 1000, "the sample has many postings: {}", want.len());
    assert_eq!(got.len(), want.len(), "one posting row per FPrint-DocID record");
    for (i, (row, w)) in got.iter().zip(&want).enumerate() {
        // fp is the u64 fingerprint's bits as an i64.
        let fp = format!("{:016x}", long(&row[0]) as u64);
        assert_eq!(
            (fp.as_str(), long(&row[1]).to_string().as_str()),
            (w[0].as_str(), w[1].as_str()),
            "row {i}"
        );
    }
    assert!(got.iter().any(|r| long(&r[0]) < 0), "fingerprints with the top bit set are negative");

    // fingerprint-docs.csv cell for cell, with the exact hashes of dump.
    let counts = check_tables(&out, &parquet_tables(&out));
    assert_eq!(counts["fingerprint-docs"], read_csv(&out.join("records/fingerprint-docs.csv")).1.len());
    let docs = rows(&open(&out.join("parquet/fingerprint-docs.parquet")));
    let empty = docs.iter().filter(|r| r[12] == Field::Null).count();
    assert_eq!(dump(&out, true).len() + empty, docs.len(), "every exact hash is in a row");
}

#[test]
fn same_inputs_give_the_same_bytes_and_csv_writes_none() {
    let tmp = tempdir();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    first_analysis(&a, &["--threads", "1"]);
    first_analysis(&b, &["--threads", "2"]);
    let mut names: Vec<String> = parquet_tables(&a).into_iter().collect();
    names.push("postings".into());
    assert!(names.len() > 10, "{names:?}");
    for name in &names {
        let name = format!("parquet/{name}.parquet");
        let (x, y) = (fs::read(a.join(&name)).unwrap(), fs::read(b.join(&name)).unwrap());
        assert!(x == y, "{name} differs between two runs");
    }
    // Up to date: the second run over the same directory rewrites nothing.
    let modified = |name: &str| fs::metadata(a.join(name)).unwrap().modified().unwrap();
    let before = [modified("parquet/postings.parquet"), modified("parquet/overlap.parquet")];
    first_analysis(&a, &[]);
    let after = [modified("parquet/postings.parquet"), modified("parquet/overlap.parquet")];
    assert_eq!(before, after, "an up-to-date export is not rewritten");

    let c = tmp.path().join("c");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&c), "-q"]);
    assert!(!c.join("parquet").exists(), "the default format writes no Parquet");
    assert!(
        overlap(["fingerprint", "testdata/sample.warc.gz", "--out", &arg(&c), "--format", "orc"])
            .status
            .code()
            == Some(2)
    );
    // `report --format parquet` exports an analysis made without.
    overlap_ok(["report", &arg(&c), "--format", "parquet", "-q"]);
    let mut tables = csv_tables(&c);
    tables.remove("fingerprint-docs");
    assert_eq!(parquet_tables(&c), tables, "every table but the fingerprint stage's");
    check_tables(&c, &tables);
    assert!(
        !c.join("parquet/fingerprint-docs.parquet").exists() && !c.join("parquet/postings.parquet").exists()
    );
}

/// A stage that runs again removes the Parquet copies of the tables it
/// rewrites, whatever --format the command has: no Parquet file is ever
/// older than the CSV it copies.
#[test]
fn a_rerun_leaves_no_copy_older_than_its_table() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    first_analysis(&out, &[]);
    let all = parquet_tables(&out);
    let tables: BTreeSet<String> = all.iter().filter(|n| *n != "fingerprint-docs").cloned().collect();
    assert!(tables.contains("overlap") && tables.contains("docs"));
    let stats = || fs::read_to_string(out.join("stats.json")).unwrap();
    assert!(stats().contains("\"parquet-tables\""));

    // Another -T, as CSV: the pairs stage runs, and every table's copy
    // goes (the report's tables and docs.csv's near_group change too);
    // the fingerprint stage's export is still up to date and stays.
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&out), "--max-df", "5", "-T", "10", "-q"]);
    assert_eq!(parquet_tables(&out), BTreeSet::from(["fingerprint-docs".to_string()]));
    assert!(out.join("parquet/postings.parquet").exists());
    assert!(!out.join(".overlap/parquet-tables.stamp").exists());
    assert!(!stats().contains("\"parquet-tables\""), "its stats.json section goes with it");

    // Exported again, then the pairs stage alone with another -T.
    overlap_ok(["report", &arg(&out), "--format", "parquet", "-q"]);
    assert_eq!(check_all(&out)["overlap"], read_csv(&out.join("overlap.csv")).1.len());
    overlap_ok(["pairs", &arg(&out), "--max-df", "5", "-T", "12", "-q"]);
    assert!(!out.join("parquet/overlap.parquet").exists(), "pairs removes overlap.parquet");
    assert_eq!(parquet_tables(&out), BTreeSet::from(["fingerprint-docs".to_string()]));

    // A report with nothing to redo keeps an export that is up to date.
    overlap_ok(["report", &arg(&out), "--format", "parquet", "-q"]);
    overlap_ok(["report", &arg(&out), "-q"]);
    assert_eq!(parquet_tables(&out), all);

    // Another chunking, as CSV: the fingerprint stage runs, and its
    // export goes too.
    overlap_ok(["fingerprint", "testdata/sample.warc.gz", "--out", &arg(&out), "--chunk", "lines:2", "-q"]);
    assert!(!out.join("parquet/postings.parquet").exists());
    assert_eq!(parquet_tables(&out), BTreeSet::new());
}

#[test]
fn a_damaged_table_is_one_line_and_exit_2() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&out), "-q"]);
    let groups = out.join("groups.csv");
    let text = fs::read_to_string(&groups).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    assert!(lines[1].contains(",false,") || lines[1].contains(",true,"), "{}", lines[1]);
    lines[1] = lines[1].replacen(",false,", ",maybe,", 1).replacen(",true,", ",maybe,", 1);
    fs::write(&groups, lines.join("\n") + "\n").unwrap();
    let dir = arg(&out);
    assert_usage_error(
        &["report", &dir, "--format", "parquet"],
        &["groups.csv line 2: chained is not true or false ('maybe')"],
    );
    assert_eq!(parquet_tables(&out), BTreeSet::new(), "a failed export leaves no table");
    assert!(!out.join(".overlap/parquet-tables.stamp").exists());
}

/// `python3 -c "import MODULES"` succeeds; else the test skips, saying
/// why (or fails under OVERLAP_REQUIRE_PEERS).
fn python_has(modules: &str, install: &str) -> bool {
    let probe = Command::new("python3").args(["-c", &format!("import {modules}")]).output();
    if probe.is_ok_and(|o| o.status.success()) {
        return true;
    }
    skip_without_peer(&format!("python3 cannot import {modules} (python3 -m pip install {install})"));
    false
}

fn run_python(script: &str, args: &[String]) {
    let result = Command::new("python3")
        .arg(root().join("scripts").join(script))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    assert!(
        result.status.success(),
        "{script} failed\n{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
}

/// DuckDB reads the fingerprint stage's files and finds the same rows as
/// `dump` and fingerprint-docs.csv.
#[test]
fn duckdb_reads_the_fingerprint_files() {
    if !python_has("duckdb", "duckdb") {
        return;
    }
    let tmp = tempdir();
    let out = tmp.path().join("out");
    fingerprint_parquet(&out, &[]);
    for (exact, name) in [(false, "dump.csv"), (true, "dump-exact.csv")] {
        let mut args = vec!["dump".to_string(), arg(&out)];
        if exact {
            args.push("--exact".into());
        }
        fs::write(tmp.path().join(name), overlap_ok(&args).stdout).unwrap();
    }
    run_python(
        "check_parquet.py",
        &[arg(&out), arg(&tmp.path().join("dump.csv")), arg(&tmp.path().join("dump-exact.csv"))],
    );
}

/// DuckDB and pandas read every table's Parquet copy as they read its CSV
/// with the types the overlap_crawl module lists.
#[test]
fn duckdb_and_pandas_read_every_table_as_its_csv() {
    let duckdb = python_has("duckdb", "duckdb");
    let pandas = python_has("pandas, pyarrow", "pandas pyarrow");
    if !duckdb && !pandas {
        return;
    }
    let tmp = tempdir();
    let (first, second) = (tmp.path().join("first"), tmp.path().join("second"));
    first_analysis(&first, &[]);
    second_analysis(&first, &second);
    for (reader, wanted) in [("duckdb", duckdb), ("pandas", pandas)] {
        if wanted {
            run_python("check_parquet_tables.py", &[reader.to_string(), arg(&first), arg(&second)]);
        }
    }
}
