#!/usr/bin/env bash
# The same crawl as per-record gzip and as .warc.zst: size, decompression
# floor and a whole `overlap run` of each, in interleaved rounds, and a
# check that both give the same Overlap table.
#
# Usage: scripts/bench_zstd.sh [--rounds N] [--threads N] CRAWL.warc.gz [CRAWL.warc.zst]
#
# Without the .warc.zst, it is made beside the .warc.gz by
# scripts/warc_to_zst.py (one frame per record with a trained dictionary,
# as Wget-AT writes them; needs `python3 -m pip install zstandard`).
# One round times, one after another: the floor of each file (the tool's
# own one-thread decompression, `examples/floor.rs`) and `overlap run` of
# each with --threads N (default 2), so that a slow spell of a shared
# machine weighs on all four alike. It prints every round, the medians and
# the ratios zst/gz, and compares overlap.csv of the two runs byte for
# byte (docIDs follow input order, which is the same in both files).
#
# Environment: OVERLAP_BIN (a binary to time instead of building
# target/release/overlap); BENCH_DIR (work directory, default target/bench).

set -euo pipefail

NAME=bench_zstd
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"
parse_rounds_threads "$@"
[ ${#FILES[@]} -ge 1 ] && [ ${#FILES[@]} -le 2 ] || die "give CRAWL.warc.gz and optionally CRAWL.warc.zst (see --help)"
GZ=${FILES[0]}
ZST=${FILES[1]:-${GZ%.gz}.zst}
[ -f "$GZ" ] || die "$GZ: no such file"
if [ ! -f "$ZST" ]; then
    note "making $ZST"
    python3 "$ROOT/scripts/warc_to_zst.py" "$GZ" "$ZST" || die "cannot make $ZST"
fi

build_binaries

WORK=${BENCH_DIR:-$ROOT/target/bench}/zstd
rm -rf "$WORK"
mkdir -p "$WORK"
cat "$GZ" "$ZST" >/dev/null

note "$ROUNDS rounds of: floor gz, floor zst, run gz, run zst (--threads $THREADS)"
for round in $(seq "$ROUNDS"); do
    timed floor_gz "$FLOOR" "$GZ"
    timed floor_zst "$FLOOR" "$ZST"
    rm -rf "$WORK/gz" "$WORK/zst"
    timed run_gz "$BIN" run "$GZ" --out "$WORK/gz" --threads "$THREADS" -q
    timed run_zst "$BIN" run "$ZST" --out "$WORK/zst" --threads "$THREADS" -q
    note "round $round done"
done

cmp -s "$WORK/gz/overlap.csv" "$WORK/zst/overlap.csv" \
    || die "overlap.csv differs between $GZ and $ZST"

python3 - "$WORK" "$GZ" "$ZST" <<'EOF'
import os, statistics, sys
work, gz, zst = sys.argv[1:4]
def load(name):
    return [tuple(map(float, line.split())) for line in open(f"{work}/{name}")]
rows = {n: load(n) for n in ("floor_gz", "floor_zst", "run_gz", "run_zst")}
print(f"{'round':>5} {'floor gz':>9} {'floor zst':>9} {'run gz':>8} {'run zst':>8} {'zst/gz':>7}")
ratio = []
for i, (fg, fz, rg, rz) in enumerate(zip(*rows.values()), 1):
    ratio.append(rz[0] / rg[0])
    print(f"{i:>5} {fg[0]:>9.2f} {fz[0]:>9.2f} {rg[0]:>8.2f} {rz[0]:>8.2f} {ratio[-1]:>7.2f}")
med = {n: statistics.median(r[0] for r in v) for n, v in rows.items()}
cpu = {n: statistics.median(r[1] for r in v) for n, v in rows.items()}
size_gz, size_zst = os.path.getsize(gz), os.path.getsize(zst)
print(f"size: gz {size_gz / 1e6:.1f} MB, zst {size_zst / 1e6:.1f} MB ({size_zst / size_gz:.2f}x)")
print(f"median floor: gz {med['floor_gz']:.2f} s, zst {med['floor_zst']:.2f} s "
      f"({med['floor_zst'] / med['floor_gz']:.2f}x); CPU s {cpu['floor_gz']:.2f} / {cpu['floor_zst']:.2f}")
print(f"median run: gz {med['run_gz']:.2f} s, zst {med['run_zst']:.2f} s "
      f"({statistics.median(ratio):.2f}x, best {min(ratio):.2f}x); CPU s {cpu['run_gz']:.2f} / {cpu['run_zst']:.2f}")
print("overlap.csv: identical")
EOF
