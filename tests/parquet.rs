//! `--format parquet`: the Parquet copies of the fingerprint stage's
//! outputs, read back with the `parquet` crate's own reader and, when
//! DuckDB is importable, by `scripts/check_parquet.py`.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;
use parquet::basic::Type as PhysicalType;
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

#[test]
fn postings_and_docs_equal_the_stage_outputs() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    fingerprint_parquet(&out, &[]);

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

    let docs = open(&out.join("parquet/docs.parquet"));
    let names: Vec<String> = columns(&docs).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["doc_id", "url", "host", "source", "bytes", "lines", "chunks", "exact_hash", "title", "missing_for"]
    );
    let (header, csv_rows) = read_csv(&out.join("fingerprint-docs.csv"));
    assert_eq!(
        header,
        ["doc_id", "url", "host", "source", "bytes", "lines", "chunks", "title", "missing_for"]
    );
    let hashes: std::collections::BTreeMap<String, String> =
        dump(&out, true).into_iter().map(|r| (r[1].clone(), r[0].clone())).collect();
    let got = rows(&docs);
    assert_eq!(got.len(), csv_rows.len(), "one row per document");
    let mut empty = 0;
    for (row, c) in got.iter().zip(&csv_rows) {
        let ints = [0, 4, 5, 6].map(|i| long(&row[i]).to_string());
        assert_eq!(ints, [0, 4, 5, 6].map(|i| c[i].clone()), "doc {}", c[0]);
        assert_eq!([1, 2, 3].map(|i| text(&row[i])), [1, 2, 3].map(|i| c[i].clone()), "doc {}", c[0]);
        assert_eq!(text(&row[8]), c[7], "title of doc {}", c[0]);
        assert_eq!(long(&row[9]).to_string(), c[8], "missing_for of doc {}", c[0]);
        match (&row[7], hashes.get(&c[0])) {
            (Field::Str(h), Some(want)) => assert_eq!(h, want, "exact_hash of doc {}", c[0]),
            (Field::Null, None) => empty += 1,
            (got, want) => panic!("doc {}: exact_hash {got:?}, dump --exact says {want:?}", c[0]),
        }
    }
    assert_eq!(hashes.len() + empty, got.len(), "every exact hash is in a row");
}

#[test]
fn same_inputs_give_the_same_bytes_and_csv_writes_none() {
    let tmp = tempdir();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    fingerprint_parquet(&a, &["--threads", "1"]);
    fingerprint_parquet(&b, &["--threads", "2"]);
    for name in ["parquet/postings.parquet", "parquet/docs.parquet"] {
        let (x, y) = (fs::read(a.join(name)).unwrap(), fs::read(b.join(name)).unwrap());
        assert!(x == y, "{name} differs between two runs");
    }
    // Up to date: the second run over the same directory rewrites nothing.
    let before = fs::metadata(a.join("parquet/postings.parquet")).unwrap().modified().unwrap();
    fingerprint_parquet(&a, &[]);
    let after = fs::metadata(a.join("parquet/postings.parquet")).unwrap().modified().unwrap();
    assert_eq!(before, after, "an up-to-date export is not rewritten");

    let c = tmp.path().join("c");
    overlap_ok(["fingerprint", "testdata/sample.warc.gz", "--out", &arg(&c), "-q"]);
    assert!(!c.join("parquet").exists(), "the default format writes no Parquet");
    assert!(
        overlap(["fingerprint", "testdata/sample.warc.gz", "--out", &arg(&c), "--format", "orc"])
            .status
            .code()
            == Some(2)
    );
}

/// DuckDB reads the files and finds the same rows as `dump` and
/// fingerprint-docs.csv; skipped, saying why, when Python has no duckdb.
#[test]
fn duckdb_reads_the_files() {
    let probe = Command::new("python3").args(["-c", "import duckdb"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_without_peer("python3 cannot import duckdb (python3 -m pip install duckdb)");
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
    let result = Command::new("python3")
        .arg(root().join("scripts/check_parquet.py"))
        .arg(&out)
        .arg(tmp.path().join("dump.csv"))
        .arg(tmp.path().join("dump-exact.csv"))
        .output()
        .expect("python3 runs");
    assert!(
        result.status.success(),
        "check_parquet.py failed\n{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
}
