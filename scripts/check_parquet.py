#!/usr/bin/env python3
"""Read an output directory's Parquet files with DuckDB and compare them
with the tool's own text outputs.

Usage: python3 scripts/check_parquet.py OUT_DIR DUMP_CSV DUMP_EXACT_CSV

OUT_DIR is the output of `overlap fingerprint --format parquet`;
DUMP_CSV and DUMP_EXACT_CSV are what `overlap dump OUT_DIR` and
`overlap dump OUT_DIR --exact` print. Checks that postings.parquet holds
the FPrint-DocID records in order (fp read back as the unsigned
fingerprint), that fingerprint-docs.parquet holds fingerprint-docs.csv
with each document's exact hash (NULL for an empty document) and its
source cut into source_path and source_offset, and that every integer
column is BIGINT, the signed INT64 Spark reads without decimals.

Exits 0 when everything agrees, 1 with one line per difference otherwise.
"""

import csv
import os
import sys

import duckdb


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, dump_csv, exact_csv = sys.argv[1:]
    postings = os.path.join(out, "parquet", "postings.parquet")
    docs = os.path.join(out, "parquet", "fingerprint-docs.parquet")
    con = duckdb.connect()
    errors = []

    def types(path):
        rows = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
        return [(r[0], r[1]) for r in rows]

    want = [("fp", "BIGINT"), ("doc", "BIGINT")]
    if types(postings) != want:
        errors.append(f"postings.parquet columns {types(postings)}, expected {want}")
    want = [("doc_id", "BIGINT"), ("url", "VARCHAR"), ("host", "VARCHAR"), ("source", "VARCHAR"),
            ("bytes", "BIGINT"), ("lines", "BIGINT"), ("chunks", "BIGINT"), ("title", "VARCHAR"),
            ("missing_for", "BIGINT"), ("date", "VARCHAR"), ("capture", "VARCHAR"),
            ("canonical", "VARCHAR"), ("exact_hash", "VARCHAR"), ("source_path", "VARCHAR"),
            ("source_offset", "BIGINT")]
    if types(docs) != want:
        errors.append(f"fingerprint-docs.parquet columns {types(docs)}, expected {want}")

    # Postings in file order; fp back to the unsigned fingerprint's hex.
    got = con.execute("SELECT fp, doc FROM read_parquet(?)", [postings]).fetchall()
    with open(dump_csv, newline="") as f:
        expected = [(r["fprint"], int(r["doc_id"])) for r in csv.DictReader(f)]
    got = [(format(fp & 0xFFFFFFFFFFFFFFFF, "016x"), doc) for fp, doc in got]
    if len(got) != len(expected):
        errors.append(f"postings.parquet has {len(got)} rows, dump prints {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            errors.append(f"postings row {i}: {g}, dump says {e}")
            break

    with open(exact_csv, newline="") as f:
        hashes = {int(r["doc_id"]): r["hash"] for r in csv.DictReader(f)}
    with open(os.path.join(out, "records", "fingerprint-docs.csv"), newline="") as f:
        table = list(csv.DictReader(f))
    got = con.execute(
        "SELECT doc_id, url, host, source, bytes, lines, chunks, title, missing_for, date, capture, "
        "canonical, exact_hash, source_path, source_offset FROM read_parquet(?)", [docs]).fetchall()
    if len(got) != len(table):
        errors.append(f"fingerprint-docs.parquet has {len(got)} rows, fingerprint-docs.csv {len(table)}")
    for g, r in zip(got, table):
        doc = int(r["doc_id"])
        path, offset = r["source"].rsplit(":", 1)
        e = (doc, r["url"], r["host"], r["source"], int(r["bytes"]), int(r["lines"]),
             int(r["chunks"]), r["title"], int(r["missing_for"]), r["date"], r["capture"], r["canonical"],
             hashes.get(doc), path, int(offset))
        if tuple(g) != e:
            errors.append(f"fingerprint-docs row {doc}: {tuple(g)}, expected {e}")
            break

    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"ok: {len(expected)} postings, {len(table)} documents")


if __name__ == "__main__":
    main()
