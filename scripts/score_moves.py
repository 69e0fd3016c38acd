#!/usr/bin/env python3
"""Score the moves of an analysis made with --previous against the moves a
generated recrawl made (scripts/gen_recrawl.py --moves SHARE --urls FILE).

Usage:
  python3 scripts/score_moves.py ANALYSIS URLS_TSV

ANALYSIS is the `overlap run RECRAWL --previous OLD` output directory;
URLS_TSV the recrawl's --urls file, whose `moved` lines name each new URL
and the URL it moved from. Prints, for the moves made with the page's
payload as it was and for those edited: how many the recrawl made, how many
changes.csv calls `moved` from the right page, from another page, and how
many it left `new`, with the candidate's figures of each one left; then
the rows called `moved` that the recrawl did not make (false moves), and
the modified pages' median share of chunks kept. Exits 1 when a move names
another page than the one it came from or a false move is found.
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
    for line in open(urls, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "moved":
            truth[parts[1]] = parts[2]
    changes = {r["url"]: r for r in csv.DictReader(open(os.path.join(analysis, "changes.csv"), encoding="utf-8"))}
    working = {r["url"]: r for r in csv.DictReader(
        open(os.path.join(analysis, "records", "fingerprint-changes.csv"), encoding="utf-8"))}
    bad = 0
    groups = {"same text": [], "edited": []}
    for url, old in truth.items():
        exact = working.get(url, {}).get("candidate_exact") == "true"
        groups["same text" if exact else "edited"].append((url, old))
    for name, moves in groups.items():
        right = other = left = 0
        for url, old in moves:
            row = changes.get(url)
            if row is None or row["change"] != "moved":
                left += 1
                w = working.get(url, {})
                print(f"  left new: {url}: chunks {w.get('chunks')}, candidate {w.get('candidate')} "
                      f"shared {w.get('candidate_shared')} of {w.get('candidate_chunks')}")
            elif row["moved_from_url"] == old:
                right += 1
            else:
                other += 1
                bad += 1
                print(f"  from another page: {url}: {row['moved_from_url']}, not {old}")
        print(f"{name}: {len(moves)} moves made, {right} found from the right page, {other} from another, "
              f"{left} left new")
    false = [u for u, r in changes.items() if r["change"] == "moved" and u not in truth]
    bad += len(false)
    print(f"false moves: {len(false)}")
    for u in false[:10]:
        print(f"  {u} from {changes[u]['moved_from_url']}")
    shares = [int(r["chunks_kept"]) / int(r["chunks_before"]) for r in changes.values()
              if r["change"] == "modified" and r["chunks_before"] not in ("", "0")]
    if shares:
        print(f"modified pages: {len(shares)}, median share of chunks kept {statistics.median(shares):.3f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
