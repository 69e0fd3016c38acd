#!/usr/bin/env bash
# Counting methods against each other on a pair-heavy crawl.
#
#   scripts/bench_pairs.sh [--chunk SPEC] [-T N] [--memory SIZE] [CORPUS]
#
# Fingerprints CORPUS once (default: the 1 GB corpus of scripts/bench.sh,
# generated if missing) with a fine chunking, so that shared boilerplate
# lines generate a billion or more pair instances, then runs `overlap pairs`
# with every method at the same --memory and prints, per method: wall time,
# peak RSS, temporary disk written, candidates and false positives. All
# methods must give the same overlap.csv; the script fails if they do not.
set -euo pipefail

chunk="lines:2"
threshold=25
memory="2G"
corpus=""
while [ $# -gt 0 ]; do
    case "$1" in
        --chunk) chunk="$2"; shift 2 ;;
        -T) threshold="$2"; shift 2 ;;
        --memory) memory="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) corpus="$1"; shift ;;
    esac
done

cd "$(dirname "$0")/.."
work="target/bench"
mkdir -p "$work"
if [ ! -x /usr/bin/time ]; then
    echo "bench_pairs: /usr/bin/time is missing (apt-get install -y time)" >&2
    exit 2
fi
cargo build --release --quiet
bin="target/release/overlap"
if [ -z "$corpus" ]; then
    corpus="$work/corpus-1G-seed1.warc.gz"
    if [ ! -f "$corpus" ]; then
        echo "bench_pairs: generating $corpus" >&2
        python3 scripts/gen_corpus.py --out "$corpus" --size 1G --seed 1
    fi
fi

out="$work/pairs-${chunk//:/-}"
echo "bench_pairs: fingerprint $corpus --chunk $chunk" >&2
"$bin" fingerprint "$corpus" --out "$out" --chunk "$chunk" --memory "$memory" -q
"$bin" exact "$out" --memory "$memory" -q

methods=("sort" "prefix" "coarse --coarse coarse-count" "coarse --coarse multi-hash:2" "coarse --coarse multi-hash:3" "coarse --coarse multi-scan-shared:2" "coarse --coarse defer-count" "coarse --coarse multi-stage")
results="$work/pairs-results.jsonl"
: > "$results"
reference=""
for m in "${methods[@]}"; do
    echo "bench_pairs: pairs -T $threshold --method $m" >&2
    rm -f "$out/.overlap/pairs.stamp"
    # shellcheck disable=SC2086
    /usr/bin/time -v -o "$work/pairs.time" "$bin" pairs "$out" -T "$threshold" --memory "$memory" --method $m -q
    sum=$(md5sum < "$out/overlap.csv")
    if [ -z "$reference" ]; then
        reference="$sum"
    elif [ "$sum" != "$reference" ]; then
        echo "bench_pairs: --method $m gave a different overlap.csv" >&2
        exit 1
    fi
    python3 - "$m" "$out/stats.json" "$work/pairs.time" >> "$results" <<'PY'
import json, re, sys
method, stats_path, time_path = sys.argv[1:4]
pairs = json.load(open(stats_path))["pairs"]
timing = open(time_path).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", timing).group(1)
parts = [float(x) for x in wall.split(":")]
seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
# The stage's own peak: the kernel's high-water mark is reset per pass
# (/proc/self/clear_refs), so /usr/bin/time sees only the last pass's.
rss_kb = (pairs.get("peak_rss_bytes") or 0) // 1024
coarse = pairs.get("coarse") or {}
print(json.dumps({
    "method": method.replace("coarse --coarse ", ""),
    "seconds": round(seconds, 2),
    "peak_rss_mb": round(rss_kb / 1024, 1),
    "spill_mb": round(pairs["spill_bytes"] / 1e6, 1),
    "pair_instances": pairs["pairs_generated"],
    "candidates": coarse.get("candidates", pairs["distinct_pairs"]),
    "false_positives": coarse.get("false_positives", pairs["distinct_pairs"] - pairs["pairs_emitted"]),
    "pairs_emitted": pairs["pairs_emitted"],
}))
PY
done

python3 - "$results" "$chunk" "$threshold" "$memory" <<'PY'
import json, sys
path, chunk, t, memory = sys.argv[1:5]
rows = [json.loads(l) for l in open(path)]
print(f"--chunk {chunk} -T {t} --memory {memory}: {rows[0]['pair_instances']:,} pair instances, "
      f"{rows[0]['pairs_emitted']:,} pairs in the table (identical for every method)")
print(f"{'method':<16} {'seconds':>8} {'x sort':>7} {'peak RSS MB':>12} {'temp disk MB':>13} "
      f"{'candidates':>14} {'false pos.':>14}")
base = rows[0]
for r in rows:
    print(f"{r['method']:<16} {r['seconds']:>8.2f} {r['seconds'] / base['seconds']:>7.2f} "
          f"{r['peak_rss_mb']:>12.1f} {r['spill_mb']:>13.1f} {r['candidates']:>14,} {r['false_positives']:>14,}")
PY
