"""The overlap_crawl module of the wheel, against real analyses.

Usage: check_wheel.py INSTALLED_BINARY DIR...

For every table each DIR holds: every column of its header is one the
module lists (a new column must be typed there), and the csv rows, the
pandas frame and the DuckDB relation agree with the file cell for cell
(integers as integers, an empty integer as missing, texts as written).
"""

import csv
import math
import sys
from pathlib import Path

import overlap_crawl
from overlap_crawl import TABLES, Analysis, NotAnAnalysis


def fail(message: str) -> None:
    print(f"check_wheel.py: {message}", file=sys.stderr)
    sys.exit(1)


def expect(raw: str, kind: str):
    if kind == "text":
        return raw
    if raw == "":
        return None
    return {"int": int, "float": float, "bool": lambda v: {"true": True, "false": False}[v]}[kind](raw)


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)
    return a == b


def missing(v) -> bool:
    import pandas as pd

    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def check(directory: str) -> int:
    audit = Analysis(directory)
    present = audit.tables()
    # The tables at the top, and the fingerprint stage's working tables
    # with the record files.
    on_disk = sorted(p.stem for d in ("", "records") for p in (Path(directory) / d).glob("*.csv"))
    unknown = [n for n in on_disk if n not in TABLES]
    if unknown:
        fail(f"{directory}: tables the module does not list: {unknown}")
    unseen = [n for n in on_disk if n not in present]
    if unseen:
        fail(f"{directory}: tables the module does not find: {unseen}")
    checked = 0
    parquet_tables = 0
    for name in present:
        if name not in TABLES:
            continue
        path = audit.file(name)
        with open(path, newline="", encoding="utf-8") as f:
            raw = list(csv.reader(f))
        header, body = raw[0], raw[1:]
        new = [c for c in header if c not in TABLES[name]]
        if new:
            fail(f"{path}: columns the module does not type: {new}")
        types = audit.columns(name)
        want = [{c: expect(v, types[c]) for c, v in zip(header, row)} for row in body]

        rows = list(audit.rows(name))
        if len(rows) != len(want) or any(not same(r[c], w[c]) for r, w in zip(rows, want) for c in header):
            fail(f"{path}: rows() differs from the file")

        frame = audit.df(name)
        if list(frame.columns) != header or len(frame) != len(want):
            fail(f"{path}: df() has columns {list(frame.columns)} and {len(frame)} rows")
        for c in header:
            for got, w in zip(frame[c].tolist(), (w[c] for w in want)):
                if not (missing(got) and w is None) and not same(None if missing(got) else got, w):
                    fail(f"{path}: df() column {c}: {got!r} where the file has {w!r}")

        # From the Parquet copy where there is one: the CSV's columns first.
        relation = audit.relation(name)
        if relation.columns[: len(header)] != header:
            fail(f"{path}: relation() has columns {relation.columns}")
        got_rows = relation.fetchall()
        if len(got_rows) != len(want) or any(
            not same(g, w[c]) for row, w in zip(got_rows, want) for g, c in zip(row, header)
        ):
            fail(f"{path}: relation() differs from the file")
        parquet_tables += audit.parquet(name) is not None or name == "fingerprint-changes"
        checked += 1
    if (Path(directory) / "parquet").is_dir():
        if parquet_tables != checked:
            fail(f"{directory}: {checked - parquet_tables} tables without their Parquet copy")
        if "postings" not in present or audit.relation("postings").count("*").fetchall()[0][0] == 0:
            fail(f"{directory}: no postings in parquet/postings.parquet")
    return checked


def main() -> None:
    installed, *dirs = sys.argv[1:]
    if overlap_crawl.binary() != installed:
        fail(f"binary() is {overlap_crawl.binary()}, not the installed {installed}")
    version = overlap_crawl.run("--version", capture_output=True, text=True).stdout
    if not version.startswith("overlap "):
        fail(f"run('--version') printed {version!r}")
    bad = overlap_crawl.run("run", "--out", "x", "no-such-input", check=False, capture_output=True, text=True)
    if bad.returncode != 2 or len(bad.stderr.strip().splitlines()) != 1:
        fail(f"a missing input gave exit {bad.returncode} and {bad.stderr!r}")
    try:
        Analysis(".")
        fail("Analysis('.') took a directory with no manifest.json")
    except NotAnAnalysis:
        pass
    total = sum(check(d) for d in dirs)
    needed = {"docs", "overlap", "groups", "host-summary", "changes", "stop-chunks"}
    seen = {n for d in dirs for n in Analysis(d).tables()}
    if not needed <= seen:
        fail(f"the analyses lack tables to check: {sorted(needed - seen)}")
    print(f"overlap_crawl read {total} tables of {len(dirs)} analyses alike through csv, pandas and DuckDB")


if __name__ == "__main__":
    main()
