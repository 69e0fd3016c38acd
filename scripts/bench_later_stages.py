#!/usr/bin/env python3
"""The later stages' cost per page as the crawl grows.

Usage: scripts/bench_later_stages.py [--overlap BIN] [--rounds N]
                                     [--out DIR] [-- FLAG...] SET SET...

Each SET is a comma-separated list of input files (a crawl, or a part of
one); give them smallest first, ideally a factor of 4 apart in size. For
each round, and each set in turn (so that a drift of the machine's speed
falls on every set alike), it runs `overlap run SET --out DIR/run -q`
with the default flags, or those after `--`, and reads the stages' seconds
from stats.json. It prints, per set, at the median of the rounds: the
documents, the fingerprint stage's seconds, the exact, pairs and report
stages' microseconds per document, the later stages against the
fingerprint stage (the goal: under a third), and each later stage's cost
per document against the smallest set's (flat when it grows linearly with
the crawl). The same figures go to DIR/later-stages.json.

Example, three nested parts of the documentation crawl
(scripts/make_doc_crawl.sh --size FULL crawl), about a factor of 4 apart
in documents (5,572, 19,861 and 75,835):

    c=crawl
    scripts/bench_later_stages.py \\
        $c/rust-1.95.0-core-00000.warc.gz,$c/rust-1.95.0-std-00000.warc.gz,$c/rust-nightly-core-00000.warc.gz \\
        "$(ls $c/*.warc.gz | grep -v core-arch | paste -sd,)" \\
        "$(ls $c/*.warc.gz | paste -sd,)"
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

LATER = ["exact", "pairs", "report"]


def main() -> int:
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:
        at = argv.index("--")
        argv, flags = argv[:at], argv[at + 1 :]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--overlap", default="target/release/overlap", help="the binary (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="target/bench/later-stages", help="work directory (default: %(default)s)")
    ap.add_argument("sets", nargs="+", metavar="SET")
    args = ap.parse_args(argv)
    if len(args.sets) < 2 or args.rounds < 1:
        print("bench_later_stages: give at least two sets and one round", file=sys.stderr)
        return 2
    sets = [s.split(",") for s in args.sets]
    for files in sets:
        for f in files:
            if not os.path.isfile(f):
                print(f"bench_later_stages: {f}: no such file", file=sys.stderr)
                return 2
    if not os.access(args.overlap, os.X_OK):
        print(f"bench_later_stages: {args.overlap}: not an executable (cargo build --release)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    run_dir = os.path.join(args.out, "run")

    seconds = [[] for _ in sets]  # per set, per round: {stage: seconds}
    docs = [0] * len(sets)
    for r in range(args.rounds):
        for i, files in enumerate(sets):
            shutil.rmtree(run_dir, ignore_errors=True)
            cmd = [args.overlap, "run", *files, "--out", run_dir, "-q", *flags]
            done = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                print(f"bench_later_stages: {' '.join(cmd)} failed: {done.stderr.strip()}", file=sys.stderr)
                return 1
            with open(os.path.join(run_dir, "stats.json")) as f:
                stats = json.load(f)
            seconds[i].append({s: stats[s]["seconds"] for s in ["fingerprint", *LATER]})
            docs[i] = stats["fingerprint"]["documents"]
            print(f"round {r + 1} set {i + 1}: {docs[i]} documents, "
                  + ", ".join(f"{s} {v:.2f} s" for s, v in seconds[i][-1].items()), file=sys.stderr)

    rows = []
    for i, files in enumerate(sets):
        med = {s: statistics.median(rd[s] for rd in seconds[i]) for s in seconds[i][0]}
        per_doc = {s: med[s] / docs[i] * 1e6 for s in LATER}
        later = sum(med[s] for s in LATER)
        rows.append({
            "inputs": files,
            "input_bytes": sum(os.path.getsize(f) for f in files),
            "documents": docs[i],
            "seconds": med,
            "us_per_document": per_doc,
            "later_over_fingerprint": later / med["fingerprint"] if med["fingerprint"] > 0 else None,
        })
    base = rows[0]["us_per_document"]
    for row in rows:
        row["per_document_vs_first"] = {s: (row["us_per_document"][s] / base[s] if base[s] > 0 else None) for s in LATER}

    print("| set | MB | documents | fingerprint s | exact µs/doc | pairs µs/doc | report µs/doc | later / fingerprint | per doc vs first (exact, pairs, report) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, row in enumerate(rows):
        u = row["us_per_document"]
        v = row["per_document_vs_first"]
        ratio = "" if row["later_over_fingerprint"] is None else f"{row['later_over_fingerprint']:.2f}"
        print(f"| {i + 1} | {row['input_bytes'] / 1e6:.0f} | {row['documents']:,} | {row['seconds']['fingerprint']:.2f} "
              f"| {u['exact']:.1f} | {u['pairs']:.1f} | {u['report']:.1f} | {ratio} "
              f"| {', '.join('-' if v[s] is None else f'{v[s]:.2f}' for s in LATER)} |")
    with open(os.path.join(args.out, "later-stages.json"), "w") as f:
        json.dump({"flags": flags, "rounds": args.rounds, "sets": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
