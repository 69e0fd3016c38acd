#!/usr/bin/env python3
"""The bookkeeping of scripts/bench_similarity.sh, in three steps.

    bench_similarity_report.py texts DEDUP.jsonl TEXTS.jsonl SUMMARY.json
    bench_similarity_report.py overlap OVERLAP_DIR SUMMARY.json
    bench_similarity_report.py failed LOG SUMMARY.json
    bench_similarity_report.py table OUT_DIR ROUNDS JACCARD TEXT_DEDUP_VERSION

`texts` copies `overlap dedup`'s JSONL, leaving out documents of fewer
than 3 characters (empty pages and the like: text-dedup's SimHash, over
character 3-grams, fails on them with an AssertionError, and such a text
has no 5-word window to share), and counts documents, bytes of text and
repeated URLs. `overlap` sums up an analysis: its stats, the rows of
overlap.csv, and the clusters they make with the exact groups (connected
components, as text-dedup's union-find makes them), and its peak memory:
overlap resets the kernel's peak-RSS counter at each stage (so getrusage
sees only the last one) and records each stage's peak in stats.json.
`failed` records a run that failed, with the last line of its log.
`table` reads the rounds' measurements and writes results.json and
table.md.
"""

import csv
import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def dump(value, path):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def texts(src, dst, summary):
    docs = dropped = text_bytes = duplicate_urls = 0
    urls = set()
    with open(src, encoding="utf-8") as f, open(dst + ".tmp", "w", encoding="utf-8") as out:
        for line in f:
            d = json.loads(line)
            text = d.get("text") or ""
            if len(text) < 3:
                dropped += 1
                continue
            out.write(line)
            docs += 1
            text_bytes += len(text.encode("utf-8"))
            if d.get("url") in urls:
                duplicate_urls += 1
            urls.add(d.get("url"))
    os.replace(dst + ".tmp", dst)
    dump({"documents": docs, "text_bytes": text_bytes, "dropped_short": dropped,
          "duplicate_urls": duplicate_urls}, summary)


def overlap(directory, summary):
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        a, b = find(a), find(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    with open(os.path.join(directory, "docs.csv"), newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["exact_center"] != row["doc_id"]:
                union(int(row["doc_id"]), int(row["exact_center"]))
    pairs = 0
    with open(os.path.join(directory, "overlap.csv"), newline="") as f:
        for row in csv.DictReader(f):
            union(int(row["doc_i"]), int(row["doc_j"]))
            pairs += 1
    sizes = {}
    for x in list(parent):
        r = find(x)
        sizes[r] = sizes.get(r, 0) + 1
    stats = load(os.path.join(directory, "stats.json"))
    dump({"method_chosen": stats["pairs"]["method"], "pairs": pairs, "clusters": len(sizes),
          "documents_in_clusters": sum(sizes.values()), "largest_cluster": max(sizes.values(), default=0),
          "documents": stats["fingerprint"]["documents"], "text_bytes": stats["fingerprint"]["text_bytes"],
          "exact_copies": stats["exact"]["copies_removed"],
          "stage_peak_mb": round(max((v.get("peak_rss_bytes") or 0 for v in stats.values() if isinstance(v, dict)),
                                     default=0) / 2**20, 1),
          "stage_seconds": {k: round(v["seconds"], 3) for k, v in stats.items()
                            if isinstance(v, dict) and "seconds" in v}}, summary)


def failed(log, summary):
    with open(log, errors="replace") as f:
        lines = [l.strip() for l in f if l.strip()]
    dump({"failed": lines[-1] if lines else "no message"}, summary)


def table(out, rounds, jaccard, td_version):
    rounds = int(rounds)
    last = os.path.join(out, "rounds", str(rounds))
    runs = []
    for input in ("warc", "jsonl"):
        methods = ("auto", "sort", "prefix")
        if input == "jsonl":
            methods += ("minhash", "simhash", "simhash:8", "simhash:12")
        for method in methods:
            name = f"overlap-{input}-{method.replace(':', '-')}"
            s = load(os.path.join(last, name + ".summary.json"))
            runs.append({"name": name, "tool": "overlap", "input": input, "method": method, **s})
            evals = "ov-" + name[len("overlap-"):]
            if method.startswith(("minhash", "simhash")):
                runs[-1]["eval"] = evals
    for name, method in (("minhash-default", "minhash, defaults (t=0.7, 25x10)"),
                         (f"minhash-{jaccard}", f"minhash, t={jaccard}"),
                         ("simhash-default", "simhash, defaults (64 bits, k=3)")):
        s = load(os.path.join(last, f"td-{name}.summary.json"))
        runs.append({"name": f"td-{name}", "tool": f"text-dedup {td_version}", "input": "jsonl",
                     "method": method, "pairs": None, "eval": f"td-{name}-clusters", **s})
    # overlap eval's measures, against the exact table: precision of the
    # pairs, recall at the threshold and at 0.9. Exact methods are the
    # table (1 and 1).
    for run in runs:
        if "eval" not in run:
            if run["input"] == "jsonl" and "failed" not in run:
                run["precision"] = run["recall"] = run["recall_0.9"] = run["cluster_recall"] = 1.0
            continue
        for j, key in ((jaccard, "recall"), ("0.9", "recall_0.9")):
            path = os.path.join(out, f"eval-{run['eval']}-{j}.json")
            if os.path.exists(path):
                e = load(path)
                run[key] = e["pairs"]["recall"]
                if key == "recall":
                    run["precision"] = e["pairs"]["precision"]
                    run["cluster_recall"] = e["clusters"]["recall"]
    base = "overlap-jsonl-auto"
    for run in runs:
        ms = [load(os.path.join(out, "rounds", str(r), run["name"] + ".json")) for r in range(1, rounds + 1)]
        bs = [load(os.path.join(out, "rounds", str(r), base + ".json")) for r in range(1, rounds + 1)]
        run["rounds"] = ms
        if "stage_peak_mb" in run:
            for m in ms:
                m["peak_mb"] = max(m["peak_mb"], run["stage_peak_mb"])
        for k in ("seconds", "cpu_seconds", "peak_mb"):
            run[k] = statistics.median(m[k] for m in ms)
        run["ratio"] = statistics.median(m["seconds"] / b["seconds"] for m, b in zip(ms, bs))
        run["cpu_ratio"] = statistics.median(m["cpu_seconds"] / b["cpu_seconds"] for m, b in zip(ms, bs))
    warc = next(r for r in runs if r["tool"] == "overlap" and "documents" in r)
    jsonl = load(os.path.join(out, "texts.summary.json"))
    result = {
        "jaccard": jaccard, "rounds": rounds, "text_dedup": td_version, "cores": os.cpu_count(),
        "load_average_at_end": os.getloadavg(),
        "warc": {"documents": warc["documents"], "text_bytes": warc["text_bytes"],
                 "exact_copies": warc["exact_copies"]},
        "jsonl": jsonl,
        "auto_chose": {r["input"]: r.get("method_chosen") for r in runs if r["method"] == "auto"},
        "runs": runs,
    }
    dump(result, os.path.join(out, "results.json"))

    fmt = lambda v: "-" if v is None else f"{v:,}"
    measure = lambda v: "-" if v is None else f"{v:.4f}"
    lines = [
        f"WARC: {warc['documents']:,} documents, {warc['text_bytes'] / 1e6:.1f} MB of text, "
        f"{warc['exact_copies']:,} exact copies. JSONL (one copy of each, less "
        f"{jsonl['dropped_short']} texts under 3 characters): {jsonl['documents']:,} documents, "
        f"{jsonl['text_bytes'] / 1e6:.1f} MB of text. Jaccard >= {jaccard}, words:5; "
        f"{os.cpu_count()} cores; {'median of ' + str(rounds) + ' rounds' if rounds > 1 else 'one round'}.",
        "",
        f"| tool | input | method | seconds | CPU s | peak MB | pairs | clusters | docs in clusters | precision | recall J >= {jaccard} | recall J >= 0.9 | cluster recall | time / overlap auto on JSONL | CPU / overlap auto on JSONL |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        method = r["method"] + (f" (chose {r['method_chosen']})" if r.get("method_chosen") and r["method"] == "auto" else "")
        if "failed" in r:
            # The time is that of failing: no ratio.
            why = r["failed"].replace(out, "DIR").replace("|", "/")
            lines.append(f"| {r['tool']} | {r['input']} | {method} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
                         f"{r['peak_mb']:.0f} | failed: {why} | | | | | | | | |")
            continue
        lines.append(f"| {r['tool']} | {r['input']} | {method} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
                     f"{r['peak_mb']:.0f} | {fmt(r['pairs'])} | {fmt(r['clusters'])} | "
                     f"{fmt(r['documents_in_clusters'])} | {measure(r.get('precision'))} | "
                     f"{measure(r.get('recall'))} | {measure(r.get('recall_0.9'))} | "
                     f"{measure(r.get('cluster_recall'))} | "
                     f"{r['ratio']:.2f}x | {r['cpu_ratio']:.2f}x |")
    if jsonl["duplicate_urls"]:
        lines.append(f"\nnote: {jsonl['duplicate_urls']} URLs repeat in texts.jsonl; text-dedup merges "
                     "such rows (--idx_column url)")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    steps = {"texts": (texts, 3), "overlap": (overlap, 2), "failed": (failed, 2), "table": (table, 4)}
    if len(sys.argv) < 2 or sys.argv[1] not in steps or len(sys.argv) != 2 + steps[sys.argv[1]][1]:
        sys.exit(__doc__.split("\n\n")[1])
    step, _ = steps[sys.argv[1]]
    step(*sys.argv[2:])
