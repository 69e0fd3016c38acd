#!/usr/bin/env python3
"""Read every Parquet copy of an analysis's tables with DuckDB or pandas
and compare it with its CSV, cell for cell and type for type.

Usage: python3 scripts/check_parquet_tables.py duckdb|pandas DIR...

Each DIR is an analysis made with `--format parquet` (`overlap run`).
For every table NAME.csv of DIR that the Parquet export copies (all but
fingerprint-changes.csv; fingerprint-docs.csv too), parquet/NAME.parquet
must exist, and every parquet/*.parquet but postings.parquet must copy a
CSV. The CSV is read with the types the overlap_crawl module of this
checkout lists (python/overlap_crawl, an account of the tables kept apart
from the Rust code): a Parquet column must have the type the module gives
its CSV column (DuckDB: BIGINT, DOUBLE, BOOLEAN, VARCHAR; pandas, read
with dtype_backend="numpy_nullable": Int64, Float64, boolean, string),
and the same values in the same order, an empty integer, float or
boolean cell as null and an empty text as an empty string. The document
tables' extra columns: source_path and source_offset must join back into
source (INPUT:OFFSET), and exact_hash must be null exactly for the empty
documents, one hash per exact group in docs.

Exits 0 when everything agrees, 1 with one line per difference otherwise.
"""

import math
import sys
from pathlib import Path

# The module of this checkout, leaving no __pycache__ in it.
sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from overlap_crawl import TABLES, Analysis  # noqa: E402

DERIVED = {"exact_hash": "text", "source_path": "text", "source_offset": "int"}
DOC_TABLES = {"docs", "fingerprint-docs"}
SQL = {"int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "text": "VARCHAR"}
PANDAS = {"int": "Int64", "float": "Float64", "bool": "boolean", "text": "string"}


def copied(directory):
    """The tables whose CSV the export copies, by name."""
    top = [p.stem for p in Path(directory).glob("*.csv")]
    # The fingerprint stage's document table is with the record files.
    fingerprint = [p.stem for p in (Path(directory) / "records").glob("fingerprint-docs.csv")]
    return sorted(n for n in top + fingerprint if n != "fingerprint-changes")


def parquet_names(directory):
    return sorted(p.stem for p in (Path(directory) / "parquet").glob("*.parquet") if p.stem != "postings")


def null(v):
    return v is None or (isinstance(v, float) and math.isnan(v)) or repr(v) == "<NA>"


def plain(v):
    """A value as Python compares it: None for any null, ints as int."""
    if null(v):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v


def rows_duckdb(audit, name, path):
    import duckdb

    con = duckdb.connect()
    types = [(r[0], r[1]) for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()]
    got = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
    want = audit.relation(name, con, source="csv").fetchall()
    return types, [list(r) for r in got], [list(r) for r in want]


def rows_pandas(audit, name, path):
    import pandas as pd

    frame = pd.read_parquet(path, dtype_backend="numpy_nullable")
    types = [(c, str(frame[c].dtype)) for c in frame.columns]
    got = [[plain(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    csv = audit.df(name)
    want = [[plain(v) for v in row] for row in csv.itertuples(index=False, name=None)]
    return types, got, want


def check(reader, directory, errors):
    audit = Analysis(directory)
    tables = copied(directory)
    if parquet_names(directory) != tables:
        errors.append(f"{directory}: parquet/ holds {parquet_names(directory)}, the CSV tables are {tables}")
    checked = 0
    for name in tables:
        path = Path(directory) / "parquet" / f"{name}.parquet"
        if not path.is_file():
            continue
        csv_types = audit.columns(name)
        if any(c not in TABLES[name] for c in csv_types):
            errors.append(f"{name}.csv: a column overlap_crawl does not type")
            continue
        extra = list(DERIVED) if name in DOC_TABLES else []
        kinds = {**csv_types, **{c: DERIVED[c] for c in extra}}
        names = list(csv_types) + extra
        mapping = SQL if reader == "duckdb" else PANDAS
        want_types = [(c, mapping[kinds[c]]) for c in names]
        types, got, want = (rows_duckdb if reader == "duckdb" else rows_pandas)(audit, name, path)
        if reader == "pandas":
            # pandas names its string dtype "string" or "string[python]".
            types = [(c, "string" if t.startswith("string") else t) for c, t in types]
        if types != want_types:
            errors.append(f"{path}: columns {types}, expected {want_types}")
            continue
        if len(got) != len(want):
            errors.append(f"{path}: {len(got)} rows, {name}.csv has {len(want)}")
            continue
        width = len(csv_types)
        for i, (g, w) in enumerate(zip(got, want)):
            g_csv, w_csv = [plain(v) for v in g[:width]], [plain(v) for v in w]
            if g_csv != w_csv:
                errors.append(f"{path} row {i}: {g_csv}, {name}.csv has {w_csv}")
                break
        if extra:
            at = {c: i for i, c in enumerate(names)}
            for g in got:
                source = g[at["source"]]
                if f"{g[at['source_path']]}:{g[at['source_offset']]}" != source:
                    errors.append(f"{path}: source_path and source_offset {g[at['source_path']]!r}, "
                                  f"{g[at['source_offset']]!r} for source {source!r}")
                    break
            if name == "docs":
                groups = {}
                for g in got:
                    center, digest = plain(g[at["exact_center"]]), plain(g[at["exact_hash"]])
                    if (center is None) != (digest is None) or groups.setdefault(center, digest) != digest:
                        errors.append(f"{path}: exact_hash {digest!r} for exact_center {center!r}")
                        break
                if len(set(groups.values())) != len(groups):
                    errors.append(f"{path}: two exact groups with one exact_hash")
        checked += 1
    return checked


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("duckdb", "pandas"):
        sys.exit(__doc__)
    reader, dirs = sys.argv[1], sys.argv[2:]
    errors = []
    total = sum(check(reader, d, errors) for d in dirs)
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"ok: {reader} read {total} tables of {len(dirs)} analyses as their CSV")


if __name__ == "__main__":
    main()
