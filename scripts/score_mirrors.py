#!/usr/bin/env python3
"""Scores an overlap analysis of a crawl made by make_mirror_crawl.py
against the crawl's ground truth, per kind of copy.

    scripts/score_mirrors.py [--json] [--min R] DIR TRUTH_CSV

DIR is the output directory of `overlap run` over the crawl; TRUTH_CSV
its truth.csv (`url,kind,page,original`). Documents are matched by URL.

- Recall, per kind: of the known copies of that kind (every row with an
  `original`), the share found: the copy and its original are in the same
  exact group (docs.csv's `exact_center`), or their two centers are a pair
  of overlap.csv.
- Precision, per kind: of overlap.csv's pairs with a document of that kind
  on either side (its centers; a pair counts for both sides' kinds, so the
  `original` row holds every pair with an original page in it), the share
  whose two documents are the same page of their manual (the same `page`
  in the truth, which names twin pages of the manual alike).
- `all`: every known copy, every pair.

Prints a table, or with --json one object {"kinds": {KIND: {...}}, "all":
{...}}; with --min R exits 1 when a kind's recall or precision (where it
has copies or pairs) is below R.
"""

import argparse
import csv
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("truth")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--min", type=float)
    args = ap.parse_args()

    csv.field_size_limit(1 << 30)
    truth = {}
    with open(args.truth, newline="") as f:
        for row in csv.DictReader(f):
            truth[row["url"]] = row
    doc_of, center, page, kind = {}, {}, {}, {}
    with open(f"{args.dir}/docs.csv", newline="") as f:
        for row in csv.DictReader(f):
            d = int(row["doc_id"])
            t = truth.get(row["url"])
            if t is None:
                continue
            doc_of[row["url"]] = d
            center[d] = int(row["exact_center"]) if row["exact_center"] else d
            page[d], kind[d] = t["page"], t["kind"]
    missing = [u for u in truth if u not in doc_of]
    if missing:
        sys.exit(f"score_mirrors: {len(missing)} URLs of the truth are not in docs.csv, e.g. {missing[0]}")
    pairs = set()
    with open(f"{args.dir}/overlap.csv", newline="") as f:
        for row in csv.DictReader(f):
            pairs.add((int(row["doc_i"]), int(row["doc_j"])))

    kinds = {}

    def entry(k):
        return kinds.setdefault(k, {"copies": 0, "found": 0, "pairs": 0, "true_pairs": 0})

    for url, t in truth.items():
        e = entry(t["kind"])
        if not t["original"]:
            continue
        a, b = center[doc_of[url]], center[doc_of[t["original"]]]
        e["copies"] += 1
        if a == b or (min(a, b), max(a, b)) in pairs:
            e["found"] += 1
    for i, j in pairs:
        same = page[i] == page[j]
        for k in {kind[i], kind[j]}:
            e = entry(k)
            e["pairs"] += 1
            e["true_pairs"] += same
    total = {"copies": sum(e["copies"] for e in kinds.values()),
             "found": sum(e["found"] for e in kinds.values()),
             "pairs": len(pairs),
             "true_pairs": sum(page[i] == page[j] for i, j in pairs)}
    for e in list(kinds.values()) + [total]:
        e["recall"] = e["found"] / e["copies"] if e["copies"] else None
        e["precision"] = e["true_pairs"] / e["pairs"] if e["pairs"] else None

    if args.json:
        print(json.dumps({"kinds": kinds, "all": total}, sort_keys=True))
    else:
        fmt = lambda x: "-" if x is None else f"{100 * x:.1f}%"  # noqa: E731
        print(f"{'kind':16} {'copies':>7} {'found':>7} {'recall':>7} {'pairs':>9} {'precision':>9}")
        for k, e in sorted(kinds.items()) + [("all", total)]:
            print(f"{k:16} {e['copies']:7} {e['found']:7} {fmt(e['recall']):>7} {e['pairs']:9} "
                  f"{fmt(e['precision']):>9}")
    if args.min is not None:
        low = [k for k, e in list(kinds.items()) + [("all", total)]
               for m in ("recall", "precision") if e[m] is not None and e[m] < args.min]
        if low:
            print(f"score_mirrors: below {args.min}: {', '.join(sorted(set(low)))}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
