#!/usr/bin/env python3
"""Turns the union-find text-dedup writes with `--debug` (OUTPUT/uf.pkl)
into a `url,cluster` CSV of its non-singleton clusters, the form
`overlap eval` scores: one row per document in a cluster of two or more,
`cluster` naming the cluster by its smallest URL, rows sorted by cluster
and URL. With `--idx_column url` the pickle's keys are URLs; without it, row
numbers of the input. Prints a JSON summary: clusters, documents in them,
the largest, and the pairs they imply (the sum of g(g-1)/2: text-dedup
unions every candidate without verifying it, and chains, so this counts
what its clusters claim, not pairs it checked).

    scripts/textdedup_clusters.py OUTPUT/uf.pkl CLUSTERS.csv

Reads the pickle without text-dedup installed: its UnionFind class is
replaced by a plain holder of the same fields (`parent`, `rank`).
"""

import csv
import json
import os
import pickle
import sys
from collections import defaultdict


class UnionFind:
    def __setstate__(self, state):
        self.__dict__.update(state)


class Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "text_dedup.utils.union_find" and name == "UnionFind":
            return UnionFind
        if module in ("collections", "builtins") and name in ("Counter", "dict", "int", "str"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"unexpected class {module}.{name} in uf.pkl")


def root_of(parent, x):
    path = []
    while parent.get(x, x) != x:
        path.append(x)
        x = parent[x]
    for p in path:  # path compression, as the original's find does
        parent[p] = x
    return x


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[1], "rb") as f:
        uf = Unpickler(f).load()
    parent = dict(uf.parent)
    clusters = defaultdict(list)
    for x in list(parent):
        clusters[root_of(parent, x)].append(x)
    groups = sorted((sorted(map(str, m)) for m in clusters.values() if len(m) > 1), key=lambda m: m[0])
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["url", "cluster"])
        for members in groups:
            for m in members:
                w.writerow([m, members[0]])
    os.replace(tmp, sys.argv[2])
    sizes = [len(m) for m in groups]
    print(json.dumps({"clusters": len(sizes), "documents_in_clusters": sum(sizes),
                      "largest_cluster": max(sizes, default=0),
                      "implied_pairs": sum(g * (g - 1) // 2 for g in sizes)}))


if __name__ == "__main__":
    main()
