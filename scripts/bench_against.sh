#!/usr/bin/env bash
# The cost of counting a crawl against a reference analysis (--against),
# against the same run without it, in interleaved rounds.
#
# Usage: scripts/bench_against.sh --reference DIR_OR_FILE... --new DIR_OR_FILE...
#                                 [--rounds N] [--threads N] [-- OVERLAP_FLAG...]
#
#   --reference ...  the reference crawl: *.warc.gz files, or directories
#                    (their *.warc.gz files, in name order).
#   --new ...        the crawl measured against it, given the same way.
#   --rounds N       rounds (default 3); --threads N (default 2).
#   -- FLAG...       further flags for every `overlap run`.
#
# First `overlap run REFERENCE --out ref` (once), then in each round, one
# after the other into fresh directories: `overlap run NEW --out out-plain`
# and `overlap run NEW --out out-against --against ref`. Each is timed with
# /usr/bin/time (wall and CPU); the pairs stage's seconds and its
# `pairs.against.seconds` are read from stats.json. Prints every round,
# then the medians: the wall-time ratio against/plain, the against count's
# seconds beside the fingerprint stage's and the whole plain run's, and
# the count's figures (pair instances, rows, pages held).
# Checks that every table the plain run writes is byte-identical in the
# --against run (the count adds tables, it changes none). Exits 1 if not,
# 2 on a usage error.
#
# Environment: OVERLAP_BIN (a binary to time instead of building
# target/release/overlap); BENCH_DIR (work directory, default
# target/bench/against).
set -euo pipefail
NAME=bench_against
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/bench_common.sh"

ROUNDS=3
THREADS=2
REFERENCE=()
NEW=()
EXTRA=()
side=
while [ $# -gt 0 ]; do
    case $1 in
        --reference) side=ref; shift ;;
        --new) side=new; shift ;;
        --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --threads) [ $# -ge 2 ] || die "--threads needs a value"; THREADS=$2; shift 2 ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        --) shift; EXTRA=("$@"); break ;;
        -*) die "unknown option $1" ;;
        *)
            [ -n "$side" ] || die "give --reference or --new before $1"
            if [ -d "$1" ]; then files=("$1"/*.warc.gz); else files=("$1"); fi
            for f in "${files[@]}"; do
                [ -f "$f" ] || die "no such input: $f"
                f=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
                if [ "$side" = ref ]; then REFERENCE+=("$f"); else NEW+=("$f"); fi
            done
            shift ;;
    esac
done
[ ${#REFERENCE[@]} -gt 0 ] || die "give the reference crawl: --reference DIR_OR_FILE..."
[ ${#NEW[@]} -gt 0 ] || die "give the crawl to measure: --new DIR_OR_FILE..."
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, not '$ROUNDS'"
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || die "--threads must be a positive integer, not '$THREADS'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"
build_binaries
WORK=${BENCH_DIR:-$ROOT/target/bench/against}
rm -rf "$WORK"
mkdir -p "$WORK"

FLAGS=(--threads "$THREADS" -q ${EXTRA[@]+"${EXTRA[@]}"})
note "reference: ${#REFERENCE[@]} files"
"$BIN" run "${REFERENCE[@]}" --out "$WORK/ref" "${FLAGS[@]}"
stat() { python3 -c "import json,sys; s=json.load(open(sys.argv[1]+'/stats.json')); print(eval(sys.argv[2]))" "$@"; }
for r in $(seq 1 "$ROUNDS"); do
    rm -rf "$WORK/out-plain" "$WORK/out-against"
    timed plain "$BIN" run "${NEW[@]}" --out "$WORK/out-plain" "${FLAGS[@]}"
    timed against "$BIN" run "${NEW[@]}" --out "$WORK/out-against" --against "$WORK/ref" "${FLAGS[@]}"
    fp=$(stat "$WORK/out-against" "s['fingerprint']['seconds']")
    ag=$(stat "$WORK/out-against" "s['pairs']['against']['seconds']")
    echo "$fp $ag" >>"$WORK/stages"
    printf 'round %s: plain %s s, against %s s (wall); against count %.2f s, fingerprint %.2f s\n' \
        "$r" "$(tail -1 "$WORK/plain" | cut -d' ' -f1)" "$(tail -1 "$WORK/against" | cut -d' ' -f1)" "$ag" "$fp"
done
status=0
for f in "$WORK"/out-plain/*.csv; do
    name=$(basename "$f")
    case $name in docs.csv|overlap.csv|changes.csv|groups.csv|hosts.csv|host-summary.csv|aliases.csv|flags.csv|stop-chunks.csv|redirects.csv|copies.csv)
        cmp -s "$f" "$WORK/out-against/$name" || { echo "$name differs with --against"; status=1; } ;;
    esac
done
python3 - "$WORK" <<'PY'
import json, statistics, sys
work = sys.argv[1]
wall = lambda name: [float(l.split()[0]) for l in open(f"{work}/{name}")]
plain, against = wall("plain"), wall("against")
stages = [tuple(map(float, l.split())) for l in open(f"{work}/stages")]
med = statistics.median
print(f"median wall: plain {med(plain):.2f} s, against {med(against):.2f} s, ratio {med(a / p for a, p in zip(against, plain)):.3f}")
print(f"median against count {med(s[1] for s in stages):.2f} s: "
      f"{med(s[1] / s[0] for s in stages):.3f}x the fingerprint stage, "
      f"{med(s[1] / p for s, p in zip(stages, plain)):.3f}x the plain run")
s = json.load(open(f"{work}/out-against/stats.json"))["pairs"]["against"]
print(f"documents {s['documents']} (reference {s['reference_documents']}), held {s['held']} "
      f"({s['exact']} exact), pair instances {s['pairs_generated']}, "
      f"rows {s['pairs_emitted']}, chunks held {s['chunks_in_reference']} of {s['chunks']}")
PY
exit $status
