"""An analysis directory's tables, read with the types they hold.

Each table's columns and types are listed once, here (`TABLES`), from
the outputs page of the user guide; the wheel's check reads every table
of a real analysis through them and fails on a column they do not list.
"""

import csv
import json
from pathlib import Path
from typing import Dict, Iterator, List, Optional

# Column types: "int" (a nullable integer: empty is missing), "float",
# "bool" (`true`/`false`, empty is missing), "text" (kept as written; an
# empty text stays an empty string, never missing).
_DOC = {
    "doc_id": "int", "url": "text", "host": "text", "source": "text", "bytes": "int",
    "lines": "int", "chunks": "int", "exact_center": "int", "title": "text",
    "missing_for": "int", "date": "text", "capture": "text", "canonical": "text", "near_group": "int",
}
_CHANGE_HEAD = {
    "doc_id": "int", "url": "text", "change": "text", "missing_for": "int", "kept": "bool",
    "center_before": "int",
}
_CHANGES = {
    **_CHANGE_HEAD, "center_after": "int", "moved_from": "int", "moved_from_url": "text",
    "chunks_before": "int", "chunks_kept": "int",
}

TABLES: Dict[str, Dict[str, str]] = {
    "docs": _DOC,
    "fingerprint-docs": {k: v for k, v in _DOC.items() if k not in ("exact_center", "near_group")},
    "overlap": {"doc_i": "int", "doc_j": "int", "shared": "int", "jaccard": "float", "containment": "float"},
    "groups": {
        "group": "int", "documents": "int", "centers": "int", "pairs": "int", "hosts": "int",
        "diameter": "int", "density": "float", "chained": "bool", "sample_url": "text",
    },
    "hosts": {
        "host_a": "text", "host_b": "text", "docs_a": "int", "docs_b": "int",
        "replicated_a_on_b": "int", "replicated_b_on_a": "int", "coverage_a": "float",
        "coverage_b": "float", "mirror": "bool",
    },
    "host-summary": {
        "host": "text", "documents": "int", "exact_copies": "int", "near_replicas": "int",
        "skippable": "int", "partner_hosts": "int", "shares_most_with": "text",
    },
    "aliases": {
        "kind": "text", "doc_a": "int", "doc_b": "int", "url_a": "text", "url_b": "text", "content": "text",
    },
    "flags": {
        "doc_id": "int", "url": "text", "www_unique": "bool", "http_unique": "bool",
        "exact_signature_unique": "bool", "exact_signature_copycount": "int",
        "fuzzy_signature": "text", "fuzzy_signature_unique": "bool",
        "fuzzy_signature_copycount": "int", "title_unique": "bool", "near_replica_count": "int",
    },
    "changes": _CHANGES,
    "fingerprint-changes": {
        **_CHANGE_HEAD, "chunks_before": "int", "chunks_kept": "int", "chunks": "int", "candidate": "int",
        "candidate_exact": "bool", "candidate_shared": "int", "candidate_chunks": "int",
    },
    "stop-chunks": {"fprint": "text", "df": "int", "pairs": "int", "example_doc": "int", "text": "text"},
    "against": {
        "doc_id": "int", "url": "text", "chunks": "int", "chunks_in_reference": "int",
        "ref_doc_id": "int", "ref_url": "text", "ref_shared": "int", "ref_chunks": "int",
        "share_in_ref": "float", "share_of_ref": "float", "exact": "bool", "held": "bool",
    },
    "against-pairs": {
        "doc_id": "int", "ref_doc_id": "int", "shared": "int", "chunks": "int", "ref_chunks": "int",
    },
    "redirects": {"source": "text", "url": "text", "status": "int", "target": "text"},
    "copies": {"doc_id": "int", "original": "int", "kind": "text"},
}

# The FPrint-DocID records of `--format parquet`, which have no CSV. Every
# table of TABLES has its Parquet copy beside it with `--format parquet`
# (`parquet/NAME.parquet`), which `relation` reads when it is there.
_PARQUET = {"postings": "parquet/postings.parquet"}
# The tables that are not at the top of the directory: the fingerprint
# stage's working tables are with the record files, in `records/`.
_CSV = {
    "fingerprint-docs": "records/fingerprint-docs.csv",
    "fingerprint-changes": "records/fingerprint-changes.csv",
}


def _csv(name: str) -> str:
    return _CSV.get(name, f"{name}.csv")

_SQL = {"int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "text": "VARCHAR"}


class NotAnAnalysis(ValueError):
    """The directory holds no analysis of `overlap` (no manifest.json)."""


class Analysis:
    """One output directory of `overlap run` (or its stages)."""

    def __init__(self, path):
        self.path = Path(path)
        if not (self.path / "manifest.json").is_file():
            raise NotAnAnalysis(f"{self.path} is not an overlap analysis (no manifest.json)")

    def __repr__(self) -> str:
        return f"Analysis({str(self.path)!r})"

    # ------------------------------------------------------------ what is there

    def tables(self) -> List[str]:
        """The tables this analysis holds, by name (`docs`, `overlap`, ...)."""
        names = [n for n in TABLES if (self.path / _csv(n)).is_file()]
        return names + [n for n, rel in _PARQUET.items() if (self.path / rel).is_file()]

    def file(self, name: str) -> Path:
        """The file of table `name`; KeyError for a name no analysis has,
        FileNotFoundError for one this analysis did not write (`changes`
        needs `--previous`, `stop-chunks` `--max-df`)."""
        if name in _PARQUET:
            path = self.path / _PARQUET[name]
        elif name in TABLES:
            path = self.path / _csv(name)
        else:
            raise KeyError(f"no table {name!r}: the tables are {', '.join([*TABLES, *_PARQUET])}")
        if not path.is_file():
            raise FileNotFoundError(f"{self.path} has no {path.name}")
        return path

    def parquet(self, name: str) -> Optional[Path]:
        """The Parquet copy of table `name` (`--format parquet`), or None."""
        if name in _PARQUET:
            path = self.path / _PARQUET[name]
        else:
            self.file(name)
            path = self.path / "parquet" / f"{name}.parquet"
        return path if path.is_file() else None

    def columns(self, name: str) -> Dict[str, str]:
        """The columns table `name` has in this analysis, with their types."""
        with open(self.file(name), newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        known = TABLES[name]
        return {c: known.get(c, "text") for c in header}

    # ------------------------------------------------------------- the JSON files

    def report(self) -> dict:
        """report.json: the audit's figures (keys in the guide's outputs page)."""
        return self._json("report.json")

    def stats(self) -> dict:
        """stats.json: what each stage read, skipped and counted."""
        return self._json("stats.json")

    def manifest(self) -> dict:
        """manifest.json: what the analysis is of and how it was made."""
        return self._json("manifest.json")

    def _json(self, name: str) -> dict:
        with open(self.path / name, encoding="utf-8") as f:
            return json.load(f)

    # ---------------------------------------------------------------- the tables

    def rows(self, name: str) -> Iterator[dict]:
        """Table `name`'s rows as dicts of typed values (None where an
        integer, float or boolean cell is empty), streamed: no dependency,
        and memory stays flat on tables of any size."""
        types = self.columns(name)
        convert = {c: _PY[t] for c, t in types.items()}
        with open(self.file(name), newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                yield {c: convert[c](v) for c, v in row.items()}

    def df(self, name: str):
        """Table `name` as a pandas DataFrame: nullable integers (`Int64`),
        booleans (`boolean`) and texts read as written (a title `NA` or
        `null` stays a text, an empty URL an empty string). Needs pandas
        (and for the Parquet tables pyarrow, or duckdb)."""
        import pandas as pd

        if name in _PARQUET:
            try:
                return pd.read_parquet(self.file(name))
            except ImportError:
                # pandas reads Parquet through pyarrow or fastparquet;
                # DuckDB reads it too.
                return self.relation(name).df()
        types = self.columns(name)
        frame = pd.read_csv(self.file(name), dtype=str, keep_default_na=False, na_filter=False)
        for column, kind in types.items():
            values = frame[column]
            if kind == "int":
                frame[column] = pd.to_numeric(values.replace("", None)).astype("Int64")
            elif kind == "float":
                frame[column] = pd.to_numeric(values.replace("", None)).astype("float64")
            elif kind == "bool":
                frame[column] = values.map({"true": True, "false": False, "": None}).astype("boolean")
            else:
                frame[column] = values.astype("string")
        return frame

    def relation(self, name: str, connection=None, source: str = "auto"):
        """Table `name` as a DuckDB relation, typed as the table is (empty
        texts stay empty strings): its Parquet copy where the analysis has
        one (`--format parquet`; the document tables' copies add
        `exact_hash`, `source_path` and `source_offset`), else the CSV read
        with the types listed; `source="csv"` reads the CSV whatever there
        is. Pass a `duckdb` connection to join it with others; by default
        DuckDB's. Needs duckdb."""
        import duckdb

        con = connection if connection is not None else duckdb.default_connection()
        if source not in ("auto", "csv"):
            raise ValueError(f"source is 'auto' or 'csv', not {source!r}")
        parquet = self.parquet(name) if source == "auto" or name in _PARQUET else None
        if parquet is not None:
            return con.sql(f"SELECT * FROM read_parquet('{_quoted(parquet)}')")
        path = _quoted(self.file(name))
        types = self.columns(name)
        columns = ", ".join(f"'{c}': '{_SQL[t]}'" for c, t in types.items())
        texts = ", ".join(f"'{c}'" for c, t in types.items() if t == "text")
        keep = f", force_not_null=[{texts}]" if texts else ""
        return con.sql(
            f"SELECT * FROM read_csv('{path}', header=true, auto_detect=false, delim=',', "
            f"quote='\"', escape='\"', columns={{{columns}}}{keep})"
        )


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _int(v: str) -> Optional[int]:
    return int(v) if v != "" else None


def _float(v: str) -> Optional[float]:
    return float(v) if v != "" else None


def _bool(v: str) -> Optional[bool]:
    return {"true": True, "false": False}.get(v)


_PY = {"int": _int, "float": _float, "bool": _bool, "text": str}
