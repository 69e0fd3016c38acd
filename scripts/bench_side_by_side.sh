#!/usr/bin/env bash
# Two builds of overlap timed side by side: each round runs the
# fingerprint stage of both on the same files at the same time, so that
# the machine's drift weighs on both alike.
#
# Usage: scripts/bench_side_by_side.sh [--rounds N] [--threads N]
#                                      [--memory SIZE] BEFORE AFTER FILE...
#
# BEFORE, AFTER: two overlap binaries (say one built at the base commit
#   with `cargo build --release --target-dir DIR`, and target/release/
#   overlap).
#   --rounds N     rounds (default 3); the binary started first alternates.
#   --threads N    threads of each run (default 2).
#   --memory SIZE  passed to both (default 2G).
#
# Interleaved rounds (bench_ingest.sh, bench_projection.sh) time one run
# after the other, and on a shared machine the cores' speed moves by 10%
# and more between runs minutes apart: a change worth a few percent is
# lost in it. Run at the same time, the two builds share the same minutes.
# Each then has half the machine, so CPU time, not wall time, is the
# measure (the one that finishes first leaves the other the whole machine
# for its last seconds). Trying jemalloc as the allocator, six
# interleaved rounds of the paper-size crawl ranged over 16 points (10%
# faster to 6% slower), two rounds side by side agreed within 1.3 (2.4%
# and 3.7% less CPU time). What it cannot show is a change to how one
# run's threads share the cores, which four threads on two cores blur:
# freeing each batch on the worker that made it measured 1.00x here and
# 3% less in interleaved rounds.
#
# Prints each round, then the median of AFTER's CPU time over BEFORE's.
# Each binary's outputs are checked against the other's in every round
# (md5 of every table but the stamps, stats.json and manifest.json, which
# hold times and paths).
#
# Environment: BENCH_DIR (work directory, default target/bench).
set -euo pipefail

NAME=bench_side_by_side
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"

MEMORY=2G
REST=()
while [ $# -gt 0 ]; do
    case $1 in
        --memory) [ $# -ge 2 ] || die "--memory needs a value"; MEMORY=$2; shift 2 ;;
        *) REST+=("$1"); shift ;;
    esac
done
parse_rounds_threads "${REST[@]}"
[ ${#FILES[@]} -ge 3 ] || die "needs BEFORE, AFTER and at least one input file (see --help)"
BEFORE=${FILES[0]}
AFTER=${FILES[1]}
INPUTS=("${FILES[@]:2}")
for bin in "$BEFORE" "$AFTER"; do
    [ -x "$bin" ] || die "$bin is not an executable"
done
for f in "${INPUTS[@]}"; do
    [ -f "$f" ] || die "$f: no such file"
done

WORK=${BENCH_DIR:-$ROOT/target/bench}/side_by_side
rm -rf "$WORK"
mkdir -p "$WORK"
# Warm the page cache, so that the first round reads the files as the
# others do.
cat "${INPUTS[@]}" >/dev/null

# run WHO BIN: the fingerprint stage into $WORK/WHO.out, its "wall cpu"
# appended to $WORK/WHO.
run() {
    local who=$1 bin=$2
    rm -rf "$WORK/$who.out"
    timed "$who" "$bin" fingerprint "${INPUTS[@]}" --out "$WORK/$who.out" \
        --memory "$MEMORY" --threads "$THREADS" -q
}

# tables WHO: the md5 of every output table of WHO's last run.
tables() {
    (cd "$WORK/$1.out" && find . -type f ! -path './.overlap/*' ! -name stats.json \
        ! -name manifest.json -print0 | sort -z | xargs -0 md5sum)
}

for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then
        run before "$BEFORE" & first=$!
        run after "$AFTER" & second=$!
    else
        run after "$AFTER" & first=$!
        run before "$BEFORE" & second=$!
    fi
    wait "$first" || die "a run failed in round $round"
    wait "$second" || die "a run failed in round $round"
    cmp -s <(tables before) <(tables after) || die "round $round: the two builds wrote different tables"
    read -r bw bc < <(tail -n 1 "$WORK/before")
    read -r aw ac < <(tail -n 1 "$WORK/after")
    awk -v r="$round" -v bw="$bw" -v bc="$bc" -v aw="$aw" -v ac="$ac" 'BEGIN {
        printf "round %d: before %.2f s (%.1f s CPU), after %.2f s (%.1f s CPU): CPU %.3fx\n",
            r, bw, bc, aw, ac, ac / bc }'
done

python3 - "$WORK/before" "$WORK/after" <<'EOF'
import statistics, sys
cpu = lambda path: [float(line.split()[1]) for line in open(path)]
ratios = [a / b for b, a in zip(cpu(sys.argv[1]), cpu(sys.argv[2]))]
print(f"median CPU, after over before: {statistics.median(ratios):.3f}x "
      f"({len(ratios)} rounds, {min(ratios):.3f}x to {max(ratios):.3f}x)")
EOF
