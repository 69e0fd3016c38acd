#!/usr/bin/env bash
# The projection to the paper's workload, measured in one session.
#
# Usage: scripts/bench_projection.sh [--rounds N] [--memory SIZE] [--pages N]
#                                    [--at-floor S] [--tiled DIR] CORPUS...
#
# CORPUS: gzip WARC files at the paper's page size (scripts/gen_crawl.py).
#   --rounds N     interleaved rounds (default 3).
#   --memory SIZE  passed to every stage (default 2G).
#   --pages N      the workload projected to (default 24000000, the paper's).
#   --at-floor S   the floor's wall time on CORPUS on a reference day: the
#                  fingerprint stage is then taken at each round's ratio
#                  times S rather than at its own wall time, so that
#                  projections made on different days compare.
#   --tiled DIR    an output directory of many documents whose stages have
#                  run (scripts/tile_outdir.py makes one from CORPUS's):
#                  the exact, pairs and report stages are timed on it.
#
# On a shared machine the speed of the cores moves by 10% and more between
# runs minutes apart, more than most changes this projection is asked to
# show. So every term is measured in the same session, in interleaved
# rounds: each round times the tool's one-thread decompression floor
# (examples/floor.rs) and then `overlap fingerprint CORPUS` on its default
# threads, and gives their ratio; with --tiled, each round also runs the
# exact, pairs and report stages on DIR in a row, each stamp removed first,
# as `overlap run` runs them. The stages after the fingerprint stage grow
# faster than the crawl (their tables outgrow the page cache), so they are
# timed on DIR's documents rather than on CORPUS's.
#
# Prints each round, then the projection to --pages at the best, middle
# and worst round: the fingerprint stage's wall time per page of CORPUS,
# plus the later stages' per document of DIR. The ratio to the floor is
# what the code decides; the floor itself is the day's. Beside the wall
# time ratio it prints the ratio of CPU times, divided by the cores: what
# the wall time ratio would be were the cores the stage's alone. A run on
# every core loses more to the machine's other load than the one-thread
# floor does (in one session the stage's CPU time for the same work rose
# from 109 to 135 s over five rounds, the floor's staying at 45 to 49 s),
# so the CPU ratio moves less with the hour.
#
# Environment: OVERLAP_BIN (the binary to time; default target/release/
# overlap, built here), BENCH_DIR (work directory, default target/bench).
set -euo pipefail

NAME=bench_projection
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"

ROUNDS=3
MEMORY=2G
PAGES=24000000
TILED=""
AT_FLOOR=0
FILES=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --memory) [ $# -ge 2 ] || die "--memory needs a value"; MEMORY=$2; shift 2 ;;
        --pages) [ $# -ge 2 ] || die "--pages needs a value"; PAGES=$2; shift 2 ;;
        --tiled) [ $# -ge 2 ] || die "--tiled needs a value"; TILED=$2; shift 2 ;;
        --at-floor) [ $# -ge 2 ] || die "--at-floor needs a value"; AT_FLOOR=$2; shift 2 ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) FILES+=("$1"); shift ;;
    esac
done
[ ${#FILES[@]} -gt 0 ] || die "no corpus given (see --help)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, not '$ROUNDS'"
[[ "$PAGES" =~ ^[1-9][0-9]*$ ]] || die "--pages must be a positive integer, not '$PAGES'"
[[ "$AT_FLOOR" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--at-floor must be a number of seconds, not '$AT_FLOOR'"
for f in "${FILES[@]}"; do
    [ -f "$f" ] || die "$f: no such file"
done
if [ -n "$TILED" ]; then
    [ -f "$TILED/manifest.json" ] || die "$TILED is not an output directory (no manifest.json)"
fi
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"

build_binaries

WORK=${BENCH_DIR:-$ROOT/target/bench}/projection
rm -rf "$WORK"
mkdir -p "$WORK"
# Warm the page cache, so that every command reads the files the same way.
cat "${FILES[@]}" >/dev/null

note "$ROUNDS rounds of: floor, fingerprint${TILED:+, then exact, pairs and report on $TILED}"
for round in $(seq "$ROUNDS"); do
    timed floor "$FLOOR" "${FILES[@]}"
    rm -rf "$WORK/out"
    timed fingerprint "$BIN" fingerprint "${FILES[@]}" --out "$WORK/out" --memory "$MEMORY" -q
    if [ -n "$TILED" ]; then
        for stage in exact pairs report; do rm -f "$TILED/.overlap/$stage.stamp"; done
        for stage in exact pairs report; do
            timed "$stage" "$BIN" "$stage" "$TILED" --memory "$MEMORY" -q
        done
    fi
    note "round $round done"
done

python3 - "$WORK" "$TILED" "$PAGES" "$AT_FLOOR" <<'EOF'
import json, os, statistics, sys
from pathlib import Path

work, tiled, pages, at_floor = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
stats_path = Path(work, "out", "stats.json")
def column(kind, i):
    return [float(line.split()[i]) for line in Path(work, kind).read_text().splitlines()]
def walls(kind):
    return column(kind, 0)
floor, fp = walls("floor"), walls("fingerprint")
cores = os.cpu_count() or 1
cpu_ratios = [f / g / cores for f, g in zip(column("fingerprint", 1), column("floor", 1))]
docs = json.loads(Path(stats_path).read_text())["fingerprint"]["documents"]
ratios = [f / g for f, g in zip(fp, floor)]
print(f"corpus: {docs:,} documents; {len(ratios)} rounds")
print("round  floor s  fingerprint s  ratio  CPU ratio / cores" + ("  later stages s" if tiled else ""))
later = []
if tiled:
    tiled_docs = json.loads(Path(tiled, "manifest.json").read_text())["documents"]
    ex, pa, re = walls("exact"), walls("pairs"), walls("report")
    later = [a + b + c for a, b, c in zip(ex, pa, re)]
for i, (f, g, r) in enumerate(zip(floor, fp, ratios)):
    tail = f"  {later[i]:.1f} ({ex[i]:.1f} + {pa[i]:.1f} + {re[i]:.1f})" if later else ""
    print(f"{i + 1:>5}  {f:7.2f}  {g:13.2f}  {r:5.3f}x  {cpu_ratios[i]:16.3f}x{tail}")
print(f"fingerprint against the one-thread floor: median {statistics.median(ratios):.3f}x "
      f"({min(ratios):.3f}x to {max(ratios):.3f}x)")
print(f"its CPU time against the floor's, over {cores} cores: median {statistics.median(cpu_ratios):.3f}x "
      f"({min(cpu_ratios):.3f}x to {max(cpu_ratios):.3f}x)")
# Each round's fingerprint time, ordered by its ratio: the best, middle
# (the better of the two middle ones for an even count) and worst rounds
# of the code, whatever the day did to the floor.
by_ratio = sorted((r, r * at_floor if at_floor else g) for r, g in zip(ratios, fp))
if at_floor:
    print(f"fingerprint times taken at the ratio times a floor of {at_floor} s")
picks = [("best", by_ratio[0]), ("middle", by_ratio[(len(by_ratio) - 1) // 2]), ("worst", by_ratio[-1])]
later_per_doc = sorted(x / tiled_docs for x in later) if later else []
for name, (ratio, wall) in picks:
    fp_s = wall / docs * pages
    line = f"{name:>6} round ({ratio:.3f}x): fingerprint {wall / docs * 1e6:.2f} us a page, {fp_s:.0f} s"
    if later_per_doc:
        lo, hi = later_per_doc[0] * pages, later_per_doc[-1] * pages
        line += (f"; later stages {lo:.0f} to {hi:.0f} s; {pages:,} pages in "
                 f"{(fp_s + lo) / 60:.1f} to {(fp_s + hi) / 60:.1f} minutes")
    print(line)
EOF
