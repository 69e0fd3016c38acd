#!/usr/bin/env python3
"""The Overlap table on a Spark cluster, with `overlap` doing the map step.

Usage:
    python3 spark/overlap_job.py --overlap BIN --out DIR [--master URL]
        [--chunk SPEC] [-T N] INPUT...

(or the same arguments after `spark-submit spark/overlap_job.py`).

1. Map, in Rust: one Spark task per input runs
   `overlap fingerprint INPUT --format parquet` into DIR/map/map-NNNNN/,
   which holds that input's postings and documents with docIDs counted from
   0. A retried task rewrites the same directory.
2. DocIDs as a local run gives them: each input's documents are offset by
   the number of documents in the inputs before it, so the smallest docID
   is still the first in input order, on any number of machines.
3. Exact copies: the center of each exact hash is its smallest docID; only
   centers keep their postings (empty documents have none).
4. Pairs, in Spark SQL: the postings' self-join on the fingerprint, counted
   per document pair, `HAVING COUNT(*) >= T`.
5. DIR/overlap.csv (`doc_i,doc_j,shared`, sorted) and DIR/centers.csv
   (`doc_id,exact_center`) as a local run would write them.

The binary must be reachable at the same path on every executor.
"""

import argparse
import csv
import os
import subprocess
import sys

from pyspark.sql import SparkSession, functions as F


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--overlap", required=True, help="the overlap binary")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    p.add_argument("--chunk", default="lines:4")
    p.add_argument("-T", "--threshold", type=int, default=15)
    return p.parse_args(argv)


def map_inputs(binary, cwd, map_dir, chunk):
    """A mapPartitions function: fingerprints each (index, input) of the
    partition into its own directory and yields (index, directory)."""

    def run(items):
        for index, path in items:
            out = os.path.join(map_dir, f"map-{index:05d}")
            cmd = [binary, "fingerprint", path, "--out", out, "--chunk", chunk,
                   "--format", "parquet", "--threads", "1", "-q"]
            done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
            yield index, out

    return run


def main(argv):
    args = parse_args(argv)
    out = os.path.abspath(args.out)
    map_dir = os.path.join(out, "map")
    os.makedirs(map_dir, exist_ok=True)
    builder = SparkSession.builder.appName("overlap")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        run(spark, args, out, map_dir)
    finally:
        spark.stop()


def run(spark, args, out, map_dir):
    sc = spark.sparkContext
    binary = os.path.abspath(args.overlap)
    items = list(enumerate(args.inputs))
    dirs = dict(
        sc.parallelize(items, len(items))
        .mapPartitions(map_inputs(binary, os.getcwd(), map_dir, args.chunk))
        .collect()
    )
    ordered = [dirs[i] for i, _ in items]

    # Per-input document counts, then offsets in input order.
    file_index = F.regexp_extract(F.input_file_name(), r"map-(\d+)/parquet/", 1).cast("long")
    docs = spark.read.parquet(*[os.path.join(d, "parquet", "docs.parquet") for d in ordered])
    docs = docs.withColumn("input", file_index)
    counts = dict(docs.groupBy("input").count().collect())
    offsets, total = [], 0
    for i, _ in items:
        offsets.append((i, total))
        total += counts.get(i, 0)
    offsets = spark.createDataFrame(offsets, "input long, offset long")

    docs = (docs.join(F.broadcast(offsets), "input")
            .select((F.col("doc_id") + F.col("offset")).alias("doc"), "exact_hash"))
    postings = spark.read.parquet(*[os.path.join(d, "parquet", "postings.parquet") for d in ordered])
    postings = (postings.withColumn("input", file_index)
                .join(F.broadcast(offsets), "input")
                .select("fp", (F.col("doc") + F.col("offset")).alias("doc")))
    docs.createOrReplaceTempView("docs")
    postings.createOrReplaceTempView("postings")

    # Exact copies: the smallest docID of each exact hash is the center.
    centers = spark.sql("""
        SELECT d.doc, c.center
        FROM docs d LEFT JOIN (
            SELECT exact_hash, MIN(doc) AS center FROM docs
            WHERE exact_hash IS NOT NULL GROUP BY exact_hash
        ) c ON d.exact_hash = c.exact_hash
    """)
    centers.createOrReplaceTempView("centers")
    pairs = spark.sql(f"""
        WITH kept AS (
            SELECT p.fp, p.doc FROM postings p JOIN centers c ON p.doc = c.doc AND c.center = c.doc
        )
        SELECT a.doc AS doc_i, b.doc AS doc_j, COUNT(*) AS shared
        FROM kept a JOIN kept b ON a.fp = b.fp AND a.doc < b.doc
        GROUP BY a.doc, b.doc
        HAVING COUNT(*) >= {int(args.threshold)}
        ORDER BY doc_i, doc_j
    """)
    write_csv(os.path.join(out, "overlap.csv"), ["doc_i", "doc_j", "shared"], pairs.toLocalIterator())
    rows = centers.orderBy("doc").toLocalIterator()
    write_csv(os.path.join(out, "centers.csv"), ["doc_id", "exact_center"],
              ((r["doc"], "" if r["center"] is None else r["center"]) for r in rows))


def write_csv(path, header, rows):
    """Writes rows under a temporary name, then renames, as a local run does."""
    tmp = path + ".partial"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow(list(r))
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1:])
