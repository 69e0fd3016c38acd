#!/usr/bin/env bash
# The ingest against its floor, and two threads against one.
#
# Usage: scripts/bench_ingest.sh [--rounds N] [--threads N] FILE...
#
# Times, in interleaved rounds on the same files:
#   floor   the tool's own decompression of the files, one thread, doing
#           nothing with the bytes (`examples/floor.rs`: the same gzip
#           backend and buffers as the readers);
#   tN      `overlap fingerprint` (read, HTML to text, normalize, chunk,
#           fingerprint, write and sort the partitions) with --threads N
#           (default: 2);
#   t1      the same with --threads 1.
# One round runs the three one after another, so that a slow spell of a
# shared machine weighs on all three alike; each round gives its own ratios
# tN/floor and t1/tN. It prints every round, then the median and the best
# round of each ratio, and the CPU time (user + system) of each command,
# which drifts much less than wall time. The fingerprint stage writes into a
# fresh directory each time, so nothing is reused as up to date.
#
# Environment: OVERLAP_BIN (a binary to time instead of building
# target/release/overlap); BENCH_DIR (work directory, default target/bench).

set -euo pipefail

NAME=bench_ingest
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"
parse_rounds_threads "$@"
[ ${#FILES[@]} -gt 0 ] || die "no files given (see --help)"
for f in "${FILES[@]}"; do
    [ -f "$f" ] || die "$f: no such file"
done

build_binaries

WORK=${BENCH_DIR:-$ROOT/target/bench}/ingest
rm -rf "$WORK"
mkdir -p "$WORK"
# Warm the page cache, so that every command reads the files the same way.
cat "${FILES[@]}" >/dev/null

# fingerprint NAME THREADS: times the stage into a fresh directory.
fingerprint() {
    rm -rf "$WORK/out"
    timed "$1" "$BIN" fingerprint "${FILES[@]}" --out "$WORK/out" --threads "$2" -q
}

note "$ROUNDS rounds of: floor, fingerprint --threads $THREADS, fingerprint --threads 1"
for round in $(seq "$ROUNDS"); do
    timed floor "$FLOOR" "${FILES[@]}"
    fingerprint tN "$THREADS"
    fingerprint t1 1
    note "round $round done"
done
rm -rf "$WORK/out"

python3 - "$WORK" "$THREADS" <<'EOF'
import statistics, sys
work, threads = sys.argv[1], sys.argv[2]
def load(name):
    return [tuple(map(float, line.split())) for line in open(f"{work}/{name}")]
floor, tn, t1 = load("floor"), load("tN"), load("t1")
print(f"{'round':>5} {'floor s':>8} {'t' + threads + ' s':>8} {'t1 s':>8} "
      f"{'t' + threads + '/floor':>9} {'t1/t' + threads:>8}")
over, speedup = [], []
for i, (f, n, o) in enumerate(zip(floor, tn, t1), 1):
    over.append(n[0] / f[0])
    speedup.append(o[0] / n[0])
    print(f"{i:>5} {f[0]:>8.2f} {n[0]:>8.2f} {o[0]:>8.2f} {over[-1]:>9.2f} {speedup[-1]:>8.2f}")
print(f"median t{threads}/floor {statistics.median(over):.2f}x (best {min(over):.2f}x); "
      f"median t1/t{threads} {statistics.median(speedup):.2f}x (best {max(speedup):.2f}x)")
cpu = lambda rows: statistics.median(r[1] for r in rows)
print(f"median CPU s: floor {cpu(floor):.2f}, t{threads} {cpu(tn):.2f}, t1 {cpu(t1):.2f}")
EOF
