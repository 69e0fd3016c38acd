#!/usr/bin/env bash
# Measures candidate default settings on a crawl of known replication
# (scripts/make_mirror_crawl.py): for each, the whole `overlap run`'s wall
# time and peak memory, and scripts/score_mirrors.py's recall and precision
# per kind of copy, as one Markdown table (docs/defaults.md has the one that
# chose the default).
#
#   scripts/bench_defaults.sh [--rounds N] CRAWL_DIR [WORK_DIR]
#
# CRAWL_DIR holds crawl.warc.gz and truth.csv. Each candidate runs N times
# (default 1) in rotated order, and the table shows the median wall time;
# recall and precision do not depend on the round. WORK_DIR (default a
# temporary directory, removed afterwards) gets one output directory per
# candidate. Uses target/release/overlap (built first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=1
if [ "${1:-}" = --rounds ]; then rounds="$2"; shift 2; fi
crawl="${1:?usage: scripts/bench_defaults.sh [--rounds N] CRAWL_DIR [WORK_DIR]}"
work="${2:-}"
[ -f "$crawl/crawl.warc.gz" ] && [ -f "$crawl/truth.csv" ] || { echo "bench_defaults: $crawl has no crawl.warc.gz and truth.csv" >&2; exit 2; }
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work"
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/overlap"

# name|flags
candidates=(
    "paper: lines:4, T = 15|--preset paper"
    "paper-lines2: lines:2, T = 25|--preset paper-lines2"
    "lines:4:1, Jaccard 0.5|--preset paper --chunk lines:4:1 --jaccard 0.5"
    "lines:4:1, Jaccard 0.5, --max-df 50|--preset paper --chunk lines:4:1 --jaccard 0.5 --max-df 50"
    "lines:1, Jaccard 0.5|--preset paper --chunk lines:1 --jaccard 0.5"
    "lines:1, Jaccard 0.5, --max-df 200|--preset paper --chunk lines:1 --jaccard 0.5 --max-df 200"
    "lines:1, containment 0.9, --max-df 50|--preset paper --chunk lines:1 --containment 0.9 --max-df 50"
    "lines:1, J 0.5 and C 0.8, no template|--template off"
    "lines:4:1, J 0.5 and C 0.8, template 5:0.01|--chunk lines:4:1"
    "lines:2:1, J 0.5 and C 0.8, template 5:0.01|--chunk lines:2:1"
    "lines:1, Jaccard 0.5, template 5:0.01|--jaccard 0.5"
    "lines:1, J 0.5 and C 0.8, template 5 (no share)|--template 5"
    "default: lines:1, J 0.5 and C 0.8, template 5:0.01|"
)

declare -A times
for round in $(seq "$rounds"); do
    n=${#candidates[@]}
    for i in $(seq 0 $((n - 1))); do
        c=${candidates[$(( (i + round - 1) % n ))]}
        name=${c%%|*}; flags=${c#*|}
        out="$work/$(echo "$name" | tr -c 'a-zA-Z0-9' '_')"
        rm -rf "$out"
        # shellcheck disable=SC2086 # flags are separate arguments
        /usr/bin/time -f "%e %M" -o "$work/time" "$bin" run "$crawl/crawl.warc.gz" --out "$out" -q $flags
        times[$name]+="$(cat "$work/time");"
    done
done

echo "| settings | wall s | peak MB | worst recall | worst precision | pairs | per kind (recall / precision) |"
echo "|---|---|---|---|---|---|---|"
for c in "${candidates[@]}"; do
    name=${c%%|*}
    out="$work/$(echo "$name" | tr -c 'a-zA-Z0-9' '_')"
    python3 - "$root/scripts/score_mirrors.py" "$out" "$crawl/truth.csv" "${times[$name]}" "$name" <<'PY'
import json, statistics, subprocess, sys
score, out, truth, times, name = sys.argv[1:6]

s = json.loads(subprocess.run([sys.executable, score, "--json", out, truth],
                              check=True, capture_output=True, text=True).stdout)
walls = [float(t.split()[0]) for t in times.strip(";").split(";")]
peak = max(int(t.split()[1]) for t in times.strip(";").split(";")) / 1024
kinds = s["kinds"]
rec = [e["recall"] for k, e in kinds.items() if e["recall"] is not None]
pre = [e["precision"] for k, e in kinds.items() if e["precision"] is not None]
pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
per = ", ".join(f"{k} {pct(e['recall'])} / {pct(e['precision'])}" for k, e in sorted(kinds.items())
                if k not in ("original", "alias-www", "alias-https"))
print(f"| {name} | {statistics.median(walls):.2f} | {peak:.0f} | {pct(min(rec))} | {pct(min(pre) if pre else None)} "
      f"| {s['all']['pairs']} | {per} |")
PY
done
