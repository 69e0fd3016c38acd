"""The `overlap` binary, and an analysis's tables for Python.

`overlap` measures how much of a web crawl is copied: exact copies,
near-replicas, mirrored sites, URL aliases, what changed since the last
crawl. This package installs its binary on the environment's PATH
(`overlap run crawl/*.warc.gz --out audit`) and reads the tables an
analysis writes with the types they hold, so that a pipeline does not
repeat the CSV options each table needs:

    import overlap_crawl
    overlap_crawl.run("run", "crawl.warc.gz", "--out", "audit")
    audit = overlap_crawl.Analysis("audit")
    docs = audit.df("docs")              # pandas, nullable integers
    pairs = audit.relation("overlap")    # a DuckDB relation
    for row in audit.rows("groups"):     # plain dicts, no dependency
        ...

The analysis itself is the binary's: this module reads what it wrote and
computes nothing of its own.
"""

from ._analysis import Analysis, NotAnAnalysis, TABLES
from ._binary import binary, run

__all__ = ["Analysis", "NotAnAnalysis", "TABLES", "binary", "run"]
