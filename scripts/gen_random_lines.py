#!/usr/bin/env python3
"""An unskewed corpus for comparing counting methods, as JSONL.

Every document draws 20 to 60 lines from one pool of random lines (a third
of the documents take a contiguous run of the pool, the rest a random
choice), so chunks are shared by chance and by copying, but no chunk is in
most documents: the opposite of a crawl dominated by site boilerplate.
Deterministic for a given --seed.

    python3 scripts/gen_random_lines.py --out target/bench/random-lines.jsonl
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--docs", type=int, default=60000)
    ap.add_argument("--pool", type=int, default=200000, help="distinct lines to draw from")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    words = ["w%d" % i for i in range(50000)]
    pool = [" ".join(rng.choices(words, k=rng.randint(3, 14))) for _ in range(args.pool)]
    with open(args.out, "w") as f:
        for d in range(args.docs):
            n = rng.randint(20, 60)
            if d % 3 == 0:
                start = rng.randrange(len(pool) - n)
                lines = pool[start:start + n]
            else:
                lines = rng.choices(pool, k=n)
            f.write(json.dumps({"url": "http://h%d.example/p%d" % (d % 500, d), "text": "\n".join(lines)}) + "\n")


if __name__ == "__main__":
    main()
