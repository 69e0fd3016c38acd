#!/usr/bin/env bash
# The cost of `overlap dedup --format warc-revisits` (and of its undo,
# `overlap expand`) against a plain `zcat` of the same files, in
# interleaved rounds, and the bytes it saves.
#
# Usage: scripts/bench_revisits.sh [--rounds N] [--threads N] CRAWL.warc.gz...
#
# The crawl is analysed once (`overlap run`, default flags); then each
# round times, one after another: `zcat` of every file to /dev/null, the
# tool's own one-thread decompression (`examples/floor.rs`), the rewrite
# with `--level exact --cdxj`, and `expand` of what it wrote, so that a
# slow spell of a shared machine weighs on all alike. It prints every
# round, the medians, the ratios to zcat, the input and output sizes and
# the revisits written, and checks that `expand` gave the crawl back
# (every file decompressed byte for byte, compared by md5).
#
# Environment: OVERLAP_BIN (a binary to time instead of building
# target/release/overlap); BENCH_DIR (work directory, default target/bench).

set -euo pipefail

NAME=bench_revisits
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"
parse_rounds_threads "$@"
[ ${#FILES[@]} -ge 1 ] || die "give the crawl's .warc.gz files (see --help)"
build_binaries
WORK=${BENCH_DIR:-$ROOT/target/bench}/revisits
rm -rf "$WORK"
mkdir -p "$WORK"

note "analysing ${#FILES[@]} files"
"$BIN" run "${FILES[@]}" --out "$WORK/analysis" --threads "$THREADS" -q
zcat_all() { for f in "$@"; do gzip -dc "$f"; done >/dev/null; }
for round in $(seq "$ROUNDS"); do
    timed zcat bash -c "$(declare -f zcat_all); zcat_all \"\$@\"" _ "${FILES[@]}"
    timed floor "$FLOOR" "${FILES[@]}" --threads 1
    rm -rf "$WORK/deduped" "$WORK/full"
    timed rewrite "$BIN" dedup "$WORK/analysis" --level exact --format warc-revisits --cdxj \
        -o "$WORK/deduped" --threads "$THREADS" --stats
    timed expand "$BIN" expand "$WORK/deduped"/*.warc.gz -o "$WORK/full" --stats
    note "round $round: zcat $(tail -1 "$WORK/zcat"), floor $(tail -1 "$WORK/floor"), rewrite $(tail -1 "$WORK/rewrite"), expand $(tail -1 "$WORK/expand") (wall cpu, s)"
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
zc=$(cut -d' ' -f1 "$WORK/zcat" | median)
fl=$(cut -d' ' -f1 "$WORK/floor" | median)
rw=$(cut -d' ' -f1 "$WORK/rewrite" | median)
ex=$(cut -d' ' -f1 "$WORK/expand" | median)
in_bytes=$(cat "${FILES[@]}" | wc -c)
out_bytes=$(cat "$WORK/deduped"/*.warc.gz | wc -c)
echo "median wall: zcat $zc s, floor $fl s, rewrite $rw s, expand $ex s"
awk -v z="$zc" -v f="$fl" -v r="$rw" -v e="$ex" 'BEGIN {
    printf "rewrite/zcat %.2fx, rewrite/floor %.2fx, expand/zcat %.2fx\n", r / z, r / f, e / z }'
awk -v i="$in_bytes" -v o="$out_bytes" 'BEGIN {
    printf "WARC bytes: %d in, %d out (%.1f%% saved)\n", i, o, (i - o) * 100 / i }'
grep -h "dedup:" "$WORK/rewrite.err" | tail -1
grep -h "expand:" "$WORK/expand.err" | tail -1
for f in "${FILES[@]}"; do
    name=$(basename "$f")
    a=$(gzip -dc "$f" | md5sum | cut -d' ' -f1)
    b=$(gzip -dc "$WORK/full/${name%.gz}.gz" | md5sum | cut -d' ' -f1)
    [ "$a" = "$b" ] || die "expand did not give $name back"
done
echo "expand gave every file back (decompressed md5 equal)"
