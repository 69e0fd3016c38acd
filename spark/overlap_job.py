#!/usr/bin/env python3
"""The Overlap table on a Spark cluster, with `overlap` doing the map step.

Version 2: `--max-df`, salted joins for large fingerprint groups, tables
written by the executors, and an output directory laid out as a local
run's, so that `overlap report DIR` reads it unchanged.

Usage:
    python3 spark/overlap_job.py --overlap BIN --out DIR [--master URL]
        [--chunk SPEC] [-T N] [--max-df N] [--skew-limit N] INPUT...

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
4. Stop chunks (`--max-df N`): fingerprints of more than N of the kept
   documents are left out of counting and listed in stop-chunks.csv, whose
   texts `overlap stop-texts` then reads back from the inputs, as the
   local pairs stage does.
5. Pairs, in Spark SQL: the postings' self-join on the fingerprint,
   counted per document pair, `HAVING COUNT(*) >= T`. A fingerprint group
   of more than `--skew-limit` documents is not joined in one task: its
   documents are hashed into blocks of about that size, each posting is
   copied once per block, and each pair of blocks is joined on its own key
   (see `pair_instances`), so no task holds more than two blocks.
6. The output directory of a local run, each table written sorted by the
   executors and concatenated in order by streaming, so the driver never
   holds the Overlap table or the document table: manifest.json (the
   maps' input identities with the docIDs of the whole run), docs.csv,
   overlap.csv, stop-chunks.csv, records/fuzzy.fpd, redirects.csv, copies.csv,
   stats.json (fingerprint, exact, pairs and spark sections) and the stage
   stamps that `overlap report` chains on.

The binary, the inputs and DIR must be at the same paths on every
executor and the driver (a shared file system).

Its defaults are the paper's (`--chunk lines:4`, T = 15, every chunk kept:
a local `overlap run --preset paper`), not the local default, which also
leaves each host's template chunks out and keeps pairs by Jaccard and
containment: the job does neither yet, so it gives the local answer of
`--preset paper` with the same --chunk, -T and --max-df.
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time

from pyspark.sql import SparkSession, functions as F

VERSION = "2"

# Where an analysis keeps its record files (format version 2, see
# src/store/layout.rs).
RECORDS = "records"

# The fuzzy.fpd header (see src/store/mod.rs): the record count is the
# only field that differs between one input's file and the whole run's.
FPD_HEADER = 64
FPD_COUNT_OFFSET = 32

# Rust's csv writer quotes a field holding one of these; so does the job.
CSV_SPECIAL = '[,"\\r\\n]'


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--overlap", required=True, help="the overlap binary")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    p.add_argument("--chunk", default="lines:4")
    p.add_argument("-T", "--threshold", type=int, default=15)
    p.add_argument("--max-df", type=int, help="leave out fingerprints of more than N documents")
    p.add_argument("--partitions", type=int,
                   help="shuffle partitions (spark.sql.shuffle.partitions; default Spark's)")
    p.add_argument("--skew-limit", type=int, default=2000,
                   help="fingerprint groups over N documents are joined in blocks of about N")
    args = p.parse_args(argv)
    if args.threshold < 1 or args.skew_limit < 1 or (args.max_df is not None and args.max_df < 1):
        p.error("-T, --max-df and --skew-limit must be at least 1")
    return args


def main(argv):
    args = parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "map"), exist_ok=True)
    # Progress bars would fill the driver's log; the stages are in the UI.
    builder = SparkSession.builder.appName("overlap").config("spark.ui.showConsoleProgress", "false")
    if args.master:
        builder = builder.master(args.master)
    if args.partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(args.partitions))
    spark = builder.getOrCreate()
    try:
        run(spark, args, out)
    finally:
        spark.stop()


def run(spark, args, out):
    binary = os.path.abspath(args.overlap)
    private = os.path.join(out, ".overlap")
    os.makedirs(private, exist_ok=True)
    # A stamp left by an earlier job or run would vouch for files this job
    # is about to replace.
    for stamp in glob.glob(os.path.join(private, "*.stamp")):
        os.remove(stamp)
    timer = Timer()
    maps = map_step(spark.sparkContext, binary, args, out)
    timer.lap("map")
    map_stats = [read_json(os.path.join(d, "stats.json"))["fingerprint"] for d in maps]
    offsets = document_offsets(map_stats)

    docs, postings = load_tables(spark, maps, offsets)
    tables = count_pairs(docs, postings, args)
    pairs_emitted = write_sorted_csv(
        tables["pairs"].orderBy("doc_i", "doc_j"), os.path.join(out, "overlap.csv"),
        "doc_i,doc_j,shared", os.path.join(private, "spark", "overlap"))
    timer.lap("pairs")
    write_sorted_csv(docs_lines(tables["centers"]), os.path.join(out, "docs.csv"),
                     "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,"
                     "date,capture,canonical,near_group",
                     os.path.join(private, "spark", "docs"))
    os.makedirs(os.path.join(out, RECORDS), exist_ok=True)
    concat_fuzzy(maps, os.path.join(out, RECORDS, "fuzzy.fpd"))
    concat_redirects(maps, os.path.join(out, "redirects.csv"))
    concat_copies(maps, offsets, os.path.join(out, "copies.csv"))
    outputs = ["docs.csv", "overlap.csv", RECORDS + "/fuzzy.fpd", "redirects.csv", "copies.csv"]
    timer.lap("outputs")

    summary = tables["summary"]
    stats = {
        "overlap_version": read_json(os.path.join(maps[0], "stats.json")).get("overlap_version", ""),
        "fingerprint": merge_fingerprint_stats(map_stats, summary["distinct_fingerprints"], timer),
        "exact": tables["exact"],
        "pairs": pairs_stats(args, summary, sum(s["fingerprints"] for s in map_stats), pairs_emitted, timer),
        "spark": {
            "job_version": VERSION,
            "inputs": len(maps),
            "skew_limit": args.skew_limit,
            "salted_groups": summary["salted_groups"],
            "salted_postings": summary["salted_postings"],
            "largest_group_before_salting": summary["largest_group"],
            "seconds": timer.laps,
        },
    }
    write_atomic(os.path.join(out, "stats.json"), (json.dumps(stats, indent=2, sort_keys=True) + "\n").encode())
    # stop-texts and the later stages read how the inputs were read from
    # the manifest.
    write_manifest(maps, offsets, args, os.path.join(out, "manifest.json"))
    if args.max_df is not None:
        write_stop_chunks(tables["stops"], os.path.join(out, "stop-chunks.csv"))
        run_binary([binary, "stop-texts", out, "-q"], os.getcwd())
        outputs.append("stop-chunks.csv")
    elif os.path.exists(os.path.join(out, "stop-chunks.csv")):
        os.remove(os.path.join(out, "stop-chunks.csv"))
    write_stamps(private, args, outputs)


class Timer:
    """Wall-clock seconds per phase of the job, for stats.json."""

    def __init__(self):
        self.start = self.last = time.monotonic()
        self.laps = {}

    def lap(self, name):
        now = time.monotonic()
        self.laps[name] = round(now - self.last, 3)
        self.last = now

    def total(self):
        return time.monotonic() - self.start


# ---- 1. Map: overlap fingerprint per input, in the executors ----

def map_step(sc, binary, args, out):
    """Runs the map step, one task per input; returns the map directories
    in input order."""
    items = list(enumerate(args.inputs))
    run = map_inputs(binary, os.getcwd(), os.path.join(out, "map"), args.chunk)
    dirs = dict(sc.parallelize(items, len(items)).mapPartitions(run).collect())
    return [dirs[i] for i, _ in items]


def map_inputs(binary, cwd, map_dir, chunk):
    """A mapPartitions function: fingerprints each (index, input) of the
    partition into its own directory and yields (index, directory)."""

    def run(items):
        for index, path in items:
            out = os.path.join(map_dir, f"map-{index:05d}")
            run_binary([binary, "fingerprint", path, "--out", out, "--chunk", chunk,
                        "--format", "parquet", "--threads", "1", "-q"], cwd)
            yield index, out

    return run


def run_binary(cmd, cwd):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")


def document_offsets(map_stats):
    """The first docID of each input: the documents of the inputs before it."""
    offsets, total = [], 0
    for s in map_stats:
        offsets.append(total)
        total += s["documents"]
    return offsets


# ---- 2-5. The tables, in Spark SQL ----

def load_tables(spark, maps, offsets):
    """The document table (doc, exact_hash and the docs.csv columns) and the
    postings (fp, doc), with docIDs offset in input order."""
    index = F.regexp_extract(F.input_file_name(), r"map-(\d+)/parquet/", 1).cast("long")
    offsets = F.broadcast(spark.createDataFrame(list(enumerate(offsets)), "input long, offset long"))

    def read(name):
        df = spark.read.parquet(*[os.path.join(d, "parquet", name) for d in maps])
        return df.withColumn("input", index).join(offsets, "input")

    docs = read("fingerprint-docs.parquet").withColumn("doc", F.col("doc_id") + F.col("offset"))
    postings = read("postings.parquet").select("fp", (F.col("doc") + F.col("offset")).alias("doc"))
    return docs, postings


def count_pairs(docs, postings, args):
    """Centers, stop chunks, the Overlap table and the figures stats.json
    reports, as DataFrames and driver-side numbers."""
    centers = exact_centers(docs).cache()
    kept = centers.select("doc", (F.col("exact_center") == F.col("doc")).alias("kept"))
    posted = postings.join(kept, "doc")
    counted = posted.where(F.col("kept")).select("fp", "doc")
    # One aggregation over every posting: df counts kept documents only,
    # and fingerprints only copies hold still count as distinct.
    groups = posted.groupBy("fp").agg(
        F.sum(F.col("kept").cast("long")).alias("df"),
        F.min(F.when(F.col("kept"), F.col("doc"))).alias("example_doc"))
    stop = F.col("df") > args.max_df if args.max_df is not None else F.lit(False)
    groups = groups.withColumn("stop", stop).cache()
    summary = summarize(groups, args.skew_limit)

    # Only fingerprints shared by two or more documents make pairs.
    shared = groups.where(~F.col("stop") & (F.col("df") >= 2)).select("fp", "df")
    # Cached: the self-joins read it four times (two sides, direct and salted).
    instances = pair_instances(counted.join(shared, "fp").cache(), args.skew_limit)
    pairs = (instances.groupBy("doc_i", "doc_j").agg(F.count("*").alias("shared"))
             .where(F.col("shared") >= args.threshold))
    return {
        "centers": centers,
        "pairs": pairs,
        "stops": groups.where(F.col("stop")),
        "summary": summary,
        "exact": exact_stats(centers),
    }


def exact_centers(docs):
    """Every document with its exact-group center (the smallest docID of
    its exact hash; null for an empty document) and its exact group size."""
    hashed = docs.where(F.col("exact_hash").isNotNull())
    groups = hashed.groupBy("exact_hash").agg(F.min("doc").alias("exact_center"),
                                              F.count("*").alias("group_size"))
    return docs.join(groups, "exact_hash", "left")


def exact_stats(centers):
    """The exact section of stats.json, as the local exact stage counts."""
    row = centers.agg(
        F.count("*").alias("documents"),
        F.sum(F.col("exact_hash").isNull().cast("long")).alias("empty_documents"),
        F.sum(((F.col("group_size") >= 2) & (F.col("doc") == F.col("exact_center"))).cast("long")).alias("groups"),
        F.sum((F.col("group_size") >= 2).cast("long")).alias("documents_in_groups"),
        F.sum((F.col("doc") != F.col("exact_center")).cast("long")).alias("copies_removed"),
        F.max("group_size").alias("largest_group"),
    ).first().asDict()
    return {k: int(v or 0) for k, v in row.items()}


def summarize(groups, skew_limit):
    """One pass over the fingerprint groups: what stats.json reports."""
    kept = ~F.col("stop")
    pairs = F.col("df") * (F.col("df") - 1) / 2
    row = groups.agg(
        F.sum((kept & (F.col("df") >= 2)).cast("long")).alias("shared_fingerprints"),
        F.max(F.when(kept, F.col("df"))).alias("largest_fingerprint_group"),
        F.sum(F.when(kept, pairs)).cast("long").alias("pairs_generated"),
        F.sum(F.col("stop").cast("long")).alias("stop_chunks"),
        F.sum(F.when(F.col("stop"), pairs)).cast("long").alias("stop_chunk_pairs"),
        F.sum((kept & (F.col("df") > skew_limit)).cast("long")).alias("salted_groups"),
        F.sum(F.when(kept & (F.col("df") > skew_limit), F.col("df"))).alias("salted_postings"),
        F.max("df").alias("largest_group"),
        F.sum("df").alias("counted_postings"),
        F.count("*").alias("distinct_fingerprints"),
    ).first().asDict()
    return {k: int(v or 0) for k, v in row.items()}


def pair_instances(shared, limit):
    """One (doc_i, doc_j) row per fingerprint the two documents share, from
    postings (fp, doc, df).

    A group of at most `limit` documents is joined with itself on fp. A
    larger group would put df^2/2 pairs in one task, so its documents are
    hashed into S = ceil(df / limit) blocks; each posting is copied under
    the keys (fp, min(b, t), max(b, t)) for its block b and every t < S,
    so the key (fp, lo, hi) holds exactly blocks lo and hi. Joining on the
    key and keeping pairs from two different blocks (or, for lo = hi, from
    the one block) yields every pair of the group exactly once, with at
    most two blocks in any task.
    """
    small = shared.where(F.col("df") <= limit)
    a, b = small.alias("a"), small.alias("b")
    direct = a.join(b, (F.col("a.fp") == F.col("b.fp")) & (F.col("a.doc") < F.col("b.doc")))
    direct = direct.select(F.col("a.doc").alias("doc_i"), F.col("b.doc").alias("doc_j"))

    blocks = F.ceil(F.col("df") / F.lit(limit)).cast("int")
    big = (shared.where(F.col("df") > limit)
           .withColumn("block", F.pmod(F.xxhash64("doc"), blocks).cast("int"))
           .withColumn("other", F.explode(F.sequence(F.lit(0), blocks - 1)))
           .select("fp", "doc", "block",
                   F.least("block", "other").alias("lo"), F.greatest("block", "other").alias("hi")))
    a, b = big.alias("a"), big.alias("b")
    on = [F.col("a." + k) == F.col("b." + k) for k in ("fp", "lo", "hi")]
    salted = a.join(b, on[0] & on[1] & on[2] & (F.col("a.doc") < F.col("b.doc"))
                    & ((F.col("a.lo") == F.col("a.hi")) | (F.col("a.block") != F.col("b.block"))))
    salted = salted.select(F.col("a.doc").alias("doc_i"), F.col("b.doc").alias("doc_j"))
    return direct.unionAll(salted)


# ---- 6. Outputs laid out as a local run's ----

def csv_field(col):
    """A string column as Rust's csv writer writes it: quoted, with quotes
    doubled, when it holds a comma, a quote or a line end."""
    col = F.coalesce(col.cast("string"), F.lit(""))
    quoted = F.concat(F.lit('"'), F.regexp_replace(col, '"', '""'), F.lit('"'))
    return F.when(col.rlike(CSV_SPECIAL), quoted).otherwise(col)


def docs_lines(centers):
    """docs.csv rows as text lines, in docID order, with near_group empty
    as the exact stage writes it: `overlap report` fills it in."""
    cols = ["doc", "url", "host", "source", "bytes", "lines", "chunks", "exact_center", "title", "missing_for",
            "date", "capture", "canonical"]
    fields = [csv_field(F.col(c)) for c in cols] + [F.lit("")]
    return centers.orderBy("doc").select(F.concat_ws(",", *fields).alias("value"))


def write_sorted_csv(df, path, header, parts_dir):
    """Writes a sorted DataFrame as one CSV file: the executors write one
    part per range in order, and the driver streams the parts after the
    header. Returns the rows written."""
    if df.columns != ["value"]:
        df = df.select(F.concat_ws(",", *[F.col(c).cast("string") for c in df.columns]).alias("value"))
    df.write.mode("overwrite").text(parts_dir)
    rows = 0
    tmp = path + ".partial"
    with open(tmp, "wb") as w:
        w.write(header.encode() + b"\n")
        for part in sorted(glob.glob(os.path.join(parts_dir, "part-*"))):
            with open(part, "rb") as r:
                while chunk := r.read(1 << 20):
                    rows += chunk.count(b"\n")
                    w.write(chunk)
    os.replace(tmp, path)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return rows


def write_stop_chunks(stops, path):
    """stop-chunks.csv without texts, most frequent first (ties by the
    fingerprint as unsigned, as the local pairs stage orders them); stop
    chunks are few (each stands for more than --max-df postings), so the
    driver sorts them."""
    rows = [(r["df"], r["fp"] & 0xFFFFFFFFFFFFFFFF, r["example_doc"]) for r in stops.toLocalIterator()]
    rows.sort(key=lambda r: (-r[0], r[1]))
    lines = [f"{fp:016x},{df},{df * (df - 1) // 2},{doc},\n" for df, fp, doc in rows]
    write_atomic(path, ("fprint,df,pairs,example_doc,text\n" + "".join(lines)).encode())


def concat_fuzzy(maps, path):
    """fuzzy.fpd of the whole run: the inputs' records in docID order under
    one header whose record count is their sum."""
    files = [os.path.join(d, RECORDS, "fuzzy.fpd") for d in maps]
    headers = []
    for f in files:
        with open(f, "rb") as r:
            headers.append(r.read(FPD_HEADER))
    count = sum(struct.unpack_from("<Q", h, FPD_COUNT_OFFSET)[0] for h in headers)
    header = bytearray(headers[0])
    struct.pack_into("<Q", header, FPD_COUNT_OFFSET, count)
    concat_files(path, bytes(header), files, FPD_HEADER)


def concat_redirects(maps, path):
    """redirects.csv: no docIDs, so the inputs' files follow each other."""
    files = [os.path.join(d, "redirects.csv") for d in maps]
    with open(files[0], "rb") as r:
        header = r.readline()
    concat_files(path, header, files, len(header))


def concat_copies(maps, offsets, path):
    """copies.csv (`doc_id,original,kind`) with both docIDs offset."""
    tmp = path + ".partial"
    with open(tmp, "w") as w:
        w.write("doc_id,original,kind\n")
        for d, offset in zip(maps, offsets):
            name = os.path.join(d, "copies.csv")
            with open(name) as r:
                next(r)
                for number, line in enumerate(r, start=2):
                    doc, original, kind = split_copy(line, name, number)
                    w.write(f"{doc + offset},{original + offset},{kind}\n")
    os.replace(tmp, path)


def split_copy(line, name, number):
    try:
        doc, original, kind = line.rstrip("\n").split(",")
        return int(doc), int(original), kind
    except ValueError:
        raise RuntimeError(f"{name} line {number}: expected doc_id,original,kind") from None


def concat_files(path, header, files, skip):
    """Writes header, then each file from byte `skip` on, streamed."""
    tmp = path + ".partial"
    with open(tmp, "wb") as w:
        w.write(header)
        for f in files:
            with open(f, "rb") as r:
                r.seek(skip)
                shutil.copyfileobj(r, w, 1 << 20)
    os.replace(tmp, path)


def write_manifest(maps, offsets, args, path):
    """manifest.json as a local run writes it (see src/store/manifest.rs):
    the maps' settings, which are all the same, and each map's one input
    with its docIDs in the whole run; without `record_files`, the checksums
    of the record files (most of which, the partitions, the job does not
    write): overlap reads the job's files as those of an analysis written
    before checksums were recorded, and `overlap report` run on it records
    its own."""
    manifests = [read_json(os.path.join(d, "manifest.json")) for d in maps]
    first = manifests[0]
    inputs = []
    for m, offset in zip(manifests, offsets):
        for entry in m["inputs"]:
            # null where a map's docIDs are no range (a revisit read
            # before its original is numbered after the map's documents).
            start = entry["first_doc"]
            inputs.append(dict(entry, first_doc=None if start is None else start + offset))
    manifest = {
        "format_version": first["format_version"],
        "overlap_version": first["overlap_version"],
        "chunk": first["chunk"],
        "read": first["read"],
        "inputs": inputs,
        "documents": sum(m["documents"] for m in manifests),
        "next_doc_id": sum(m["documents"] for m in manifests),
        # The job looks for copies and pairs across the whole crawl.
        "exact": {"scope": "crawl"},
        "pairs": {"threshold": args.threshold, "max_df": args.max_df},
    }
    # serde_json's pretty form: two-space indent, UTF-8 as is.
    write_atomic(path, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())


def merge_fingerprint_stats(sections, distinct_fingerprints, timer):
    """The fingerprint section of the whole run: counts summed, per-input
    lists concatenated, the settings of the first input (all the same)."""
    merged = {}
    for s in sections:
        for key, value in s.items():
            if key not in merged:
                merged[key] = value
            elif isinstance(value, bool) or isinstance(value, str) or value is None:
                continue
            elif isinstance(value, (int, float)):
                merged[key] += value
            elif isinstance(value, list):
                merged[key] = merged[key] + value
            elif isinstance(value, dict):
                merged[key] = {k: merged[key].get(k, 0) + value.get(k, 0) for k in merged[key].keys() | value}
    merged["corrupt"] = merged.get("corrupt", [])[:100]
    merged["distinct_fingerprints"] = distinct_fingerprints
    # The job has no fprint-docid partitions; the peak is one map task's.
    merged.pop("partitions", None)
    merged["peak_rss_bytes"] = max((s.get("peak_rss_bytes") or 0 for s in sections), default=0) or None
    merged["seconds"] = timer.laps.get("map", 0.0)
    return merged


def pairs_stats(args, summary, postings, pairs_emitted, timer):
    """The pairs section of stats.json, with the figures a local run gives
    that the job counts too."""
    return {
        "method": "spark",
        "method_auto": False,
        "threshold": args.threshold,
        "max_df": args.max_df,
        "fingerprints_removed": postings - summary["counted_postings"],
        "shared_fingerprints": summary["shared_fingerprints"],
        "largest_fingerprint_group": summary["largest_fingerprint_group"],
        "pairs_generated": summary["pairs_generated"],
        "pairs_emitted": pairs_emitted,
        "stop_chunks": summary["stop_chunks"],
        "stop_chunk_pairs": summary["stop_chunk_pairs"],
        "seconds": timer.laps.get("pairs", 0.0),
        "peak_rss_bytes": None,
    }


def write_stamps(private, args, outputs):
    """The stamps `overlap report` chains on. Their keys cover the job's
    version, the flags that change the answer and every input's identity
    (canonical path, size and modification time, as a local run's), so a
    report made over an earlier job's output is redone."""
    key = hashlib.sha256()
    for value in [VERSION, args.chunk, str(args.threshold), str(args.max_df)] + inputs_key(args.inputs):
        key.update(len(value).to_bytes(8, "little") + value.encode())
    stages = {
        "fingerprint": ["manifest.json", RECORDS + "/fuzzy.fpd", "redirects.csv", "copies.csv"],
        "exact": ["docs.csv"],
        "pairs": [o for o in outputs if o in ("overlap.csv", "stop-chunks.csv")],
    }
    for stage, files in stages.items():
        key.update(stage.encode())
        stamp = {"stage": stage, "key": "spark-" + key.hexdigest()[:32], "outputs": files}
        write_atomic(os.path.join(private, f"{stage}.stamp"), json.dumps(stamp, indent=2).encode())


def inputs_key(inputs):
    values = []
    for path in inputs:
        st = os.stat(path)
        values.append(f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}")
    return values


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_atomic(path, data):
    """Writes under a temporary name, then renames, as a local run does."""
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1:])
