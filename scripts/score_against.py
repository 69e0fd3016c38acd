#!/usr/bin/env python3
"""Score an analysis made with --against against what a generated recrawl
knows (scripts/gen_recrawl.py --urls FILE, the reference being the analysis
of the crawl it was made from).

Usage:
  python3 scripts/score_against.py ANALYSIS URLS_TSV

For each class of URL the recrawl wrote (unchanged, modified, new, moved,
...), prints how many of its pages against.csv has with text, how many it
says the reference holds as exact copies, as near-replicas only, and not at
all, and the median share of the page's chunks the reference holds. Pages
without text (revisit records, HTTP 304 responses, error pages without a
body) are counted apart. Exits 1 when an unchanged page is not held.
"""

import csv
import os
import statistics
import sys


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    analysis, urls = argv
    truth = {}
    for line in open(urls, encoding="utf-8", errors="surrogateescape"):
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "class":
            continue
        if parts[0] == "moved":
            truth[parts[1]] = "moved (new URL)"
        else:
            truth.setdefault(parts[1], parts[0])
    rows = csv.DictReader(open(os.path.join(analysis, "against.csv"), encoding="utf-8", errors="surrogateescape"))
    by_class = {}
    for r in rows:
        c = by_class.setdefault(truth.get(r["url"], "(not in the recrawl's list)"),
                                {"pages": 0, "exact": 0, "near": 0, "no": 0, "empty": 0, "share": []})
        if r["chunks"] == "0":
            c["empty"] += 1
            continue
        c["pages"] += 1
        if r["exact"] == "true":
            c["exact"] += 1
        elif r["held"] == "true":
            c["near"] += 1
        else:
            c["no"] += 1
        c["share"].append(int(r["chunks_in_reference"]) / int(r["chunks"]))
    print("| class | pages | held exact | held near | not held | median share of chunks held | no text |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    for name in sorted(by_class):
        c = by_class[name]
        median = statistics.median(c["share"]) if c["share"] else 0.0
        print(f"| {name} | {c['pages']} | {c['exact']} | {c['near']} | {c['no']} | {median:.3f} | {c['empty']} |")
        if name.startswith("unchanged") and c["no"] > 0:
            bad += c["no"]
    if bad:
        print(f"{bad} unchanged pages are not held", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
