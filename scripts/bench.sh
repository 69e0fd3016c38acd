#!/usr/bin/env bash
# Benchmark the overlap pipeline, stage by stage, against decompression floors.
#
# Usage: scripts/bench.sh [SIZE | CORPUS...] [--threads N] [--size SIZE] [--seed N]
#                         [--files N] [--small-size SIZE] [--memory SIZE]
#                         [--skip-threads-check] [--skip-methods] [--json FILE]
#
#   SIZE           the compressed size of the synthetic crawl to run on (e.g.
#                  100M, 2500M, 10G; same as --size). The crawl is made by
#                  scripts/gen_crawl.py (the replication profile of the
#                  paper's Figure 1) with --seed (default 1) and --files
#                  (default one file per 256 MiB) in the work directory, as
#                  crawl-SIZE-seedN-filesF/crawl-00000.warc.gz ... with
#                  crawl-SIZE-seedN-filesF.stats.json beside it (written last:
#                  a crawl with its stats file is complete and is reused).
#                  Default: 1G.
#   CORPUS...      crawl files to run on instead (any format the tool reads).
#   --threads N    worker threads for the stages (default: the tool's, the
#                  number of cores); the tool's own floor runs with it too.
#   --small-size   size of the crawl for the determinism check (default 50M).
#   --memory SIZE  passed to every stage as --memory (default: the tool's).
#   --skip-threads-check   no determinism check (--threads 1 against 2).
#   --skip-methods         no timing of each counting method.
#   --json FILE    also write the results to FILE.
#
# Environment: BENCH_DIR (work directory, default target/bench); OVERLAP_BIN (a
# binary to benchmark instead of building target/release/overlap);
# OVERLAP_FLOOR_CMD (a command line to time as the tool's own floor instead
# of the `floor` example; the crawl files are appended).
#
# In one run it measures:
#   (a) the decompression floors: `gzip -dc FILES > /dev/null`, and the
#       tool's own gzip backend (`cargo run --release --example floor --
#       FILES`, single-threaded, and with --threads N when given), when the
#       example exists;
#   (b) `overlap fingerprint`, `exact`, `pairs -T 15` and `report`, each
#       under /usr/bin/time -v (wall time, peak RSS), with the size of the
#       output directory (outputs and scratch) sampled every half second
#       for the peak temporary disk; `run` is their sum, as `overlap run`
#       runs the four in a row;
#   (c) `overlap pairs` again with each counting method (--method sort,
#       coarse, prefix) on the same fingerprints;
#   (d) `overlap run` with --threads 1 and --threads 2 on a small crawl,
#       checking that docs.csv and overlap.csv are byte-identical.
# It prints one table (wall time, MB/s of the compressed and of the
# uncompressed input, documents/s, peak RSS, peak disk, and the ratio to
# gzip -dc of the same files in the same run) and writes the same figures to
# BENCH_DIR/results.json. Every stage writes into a fresh output directory,
# so nothing is skipped as up to date.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

CORPUS=()
THREADS=""
SIZE=${BENCH_SIZE:-1G}
SEED=${BENCH_SEED:-1}
FILES=""
SMALL_SIZE=${BENCH_SMALL_SIZE:-50M}
MEMORY=""
THREADS_CHECK=1
METHODS=1
JSON_OUT=""
is_size() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?[KMGTkmgt]?(i?[Bb])?$ ]]; }
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) [ $# -ge 2 ] || die "--threads needs a value"; THREADS=$2; shift 2 ;;
        --threads=*) THREADS=${1#*=}; shift ;;
        --size) [ $# -ge 2 ] || die "--size needs a value"; SIZE=$2; shift 2 ;;
        --size=*) SIZE=${1#*=}; shift ;;
        --seed) [ $# -ge 2 ] || die "--seed needs a value"; SEED=$2; shift 2 ;;
        --seed=*) SEED=${1#*=}; shift ;;
        --files) [ $# -ge 2 ] || die "--files needs a value"; FILES=$2; shift 2 ;;
        --files=*) FILES=${1#*=}; shift ;;
        --small-size) [ $# -ge 2 ] || die "--small-size needs a value"; SMALL_SIZE=$2; shift 2 ;;
        --small-size=*) SMALL_SIZE=${1#*=}; shift ;;
        --memory) [ $# -ge 2 ] || die "--memory needs a value"; MEMORY=$2; shift 2 ;;
        --memory=*) MEMORY=${1#*=}; shift ;;
        --json) [ $# -ge 2 ] || die "--json needs a value"; JSON_OUT=$2; shift 2 ;;
        --json=*) JSON_OUT=${1#*=}; shift ;;
        --skip-threads-check) THREADS_CHECK=0; shift ;;
        --skip-methods) METHODS=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *)
            if [ ! -e "$1" ] && is_size "$1"; then
                SIZE=$1
            else
                CORPUS+=("$1")
            fi
            shift ;;
    esac
done
if [ -n "$THREADS" ] && ! [[ "$THREADS" =~ ^[1-9][0-9]*$ ]]; then
    die "--threads must be a positive integer, not '$THREADS'"
fi
if [ -n "$FILES" ] && ! [[ "$FILES" =~ ^[1-9][0-9]*$ ]]; then
    die "--files must be a positive integer, not '$FILES'"
fi
is_size "$SIZE" || die "'$SIZE' is not a size (use e.g. 100M, 2500M, 10G)"

# ---------------------------------------------------------------- tools

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"
/usr/bin/time -v true 2>/dev/null || die "/usr/bin/time does not take -v (GNU time needed: apt-get install -y time)"
command -v gzip >/dev/null || die "gzip is missing"
command -v python3 >/dev/null || die "python3 is missing (needed for the crawl generator and the report)"
command -v cargo >/dev/null || die "cargo is missing"

WORK=${BENCH_DIR:-$ROOT/target/bench}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

if [ -n "${OVERLAP_BIN:-}" ]; then
    BIN=$OVERLAP_BIN
    [ -x "$BIN" ] || die "OVERLAP_BIN=$BIN is not an executable"
else
    note "building the release binary"
    cargo build --release --quiet
    BIN=$ROOT/target/release/overlap
    [ -x "$BIN" ] || die "no binary at target/release/overlap after the build"
fi

# ---------------------------------------------------------------- crawl

# Files for a crawl of size $1: one per 256 MiB, at least one.
files_for() {
    python3 -c 'import math, sys; sys.path.insert(0, sys.argv[1]); import gen_corpus as g
print(max(1, math.ceil(g.parse_size(sys.argv[2]) / (256 << 20))))' "$ROOT/scripts" "$1"
}

# crawl_for SIZE SEED FILES: makes (or reuses) the synthetic crawl and sets
# CRAWL_DIR and CRAWL_STATS.
crawl_for() {
    local size=$1 seed=$2 files=$3
    local name="crawl-$size-seed$seed-files$files"
    CRAWL_DIR="$WORK/$name"
    CRAWL_STATS="$WORK/$name.stats.json"
    # The stats file is written after the crawl is complete.
    if [ -d "$CRAWL_DIR" ] && [ -s "$CRAWL_STATS" ]; then
        note "reusing $name"
    else
        note "generating $name (this takes a while for large sizes)"
        rm -rf "$CRAWL_DIR" "$CRAWL_STATS"
        python3 "$ROOT/scripts/gen_crawl.py" --out "$CRAWL_DIR" --size "$size" --seed "$seed" \
            --files "$files" --stats "$CRAWL_STATS" --jobs 2 -q 2>"$WORK/gen-$name.log" \
            || { cat "$WORK/gen-$name.log" >&2; die "crawl generation failed"; }
    fi
}

CORPUS_STATS=""
if [ ${#CORPUS[@]} -eq 0 ]; then
    [ -n "$FILES" ] || FILES=$(files_for "$SIZE")
    crawl_for "$SIZE" "$SEED" "$FILES"
    CORPUS=("$CRAWL_DIR"/crawl-*.warc.gz)
    CORPUS_STATS=$CRAWL_STATS
    LABEL=$(basename "$CRAWL_DIR")
else
    for i in "${!CORPUS[@]}"; do
        f=${CORPUS[$i]}
        [ -f "$f" ] || die "$f: no such file"
        CORPUS[i]=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
    done
    LABEL=$(basename "${CORPUS[0]}")
    [ ${#CORPUS[@]} -eq 1 ] || LABEL="$LABEL and $((${#CORPUS[@]} - 1)) more"
fi

# ---------------------------------------------------------------- timing

LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"

# timed NAME CMD...: runs CMD under /usr/bin/time -v with stdout discarded,
# writes NAME.time in $LOGS; fails the bench if CMD fails.
# With MAY_FAIL=1 a failure is noted (NAME.failed) and the bench goes on.
timed() {
    local name=$1
    shift
    note "$name: $*"
    if ! /usr/bin/time -v -o "$LOGS/$name.time" "$@" >/dev/null 2>"$LOGS/$name.err"; then
        cat "$LOGS/$name.err" >&2
        if [ "${MAY_FAIL:-0}" = 1 ]; then
            note "$name failed (log: $LOGS/$name.err); going on"
            rm -f "$LOGS/$name.time"
            tail -n 1 "$LOGS/$name.err" >"$LOGS/$name.failed"
            return 1
        fi
        die "$name failed (log: $LOGS/$name.err)"
    fi
}

# stage NAME CMD...: timed, while the size of $OUT (outputs and scratch
# space, which stages keep inside it) is sampled; the peak goes to NAME.disk.
stage() {
    local name=$1
    shift
    (
        peak=0
        while :; do
            s=$(du -sb "$OUT" 2>/dev/null | cut -f1) || s=0
            if [ "${s:-0}" -gt "$peak" ]; then
                peak=$s
                echo "$peak" >"$LOGS/$name.disk"
            fi
            sleep 0.5
        done
    ) &
    local sampler=$! ok=0
    timed "$name" "$@" || ok=1
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    # The last sample may be older than the stage's end.
    local s
    s=$(du -sb "$OUT" | cut -f1)
    if [ ! -s "$LOGS/$name.disk" ] || [ "$s" -gt "$(cat "$LOGS/$name.disk")" ]; then
        echo "$s" >"$LOGS/$name.disk"
    fi
    cp "$OUT/stats.json" "$LOGS/stats.$name.json" 2>/dev/null || true
    return $ok
}

threads_args=()
[ -n "$THREADS" ] && threads_args=(--threads "$THREADS")
memory_args=()
[ -n "$MEMORY" ] && memory_args=(--memory "$MEMORY")

# Warm the page cache so that the floors and the stages read the same way.
cat "${CORPUS[@]}" >/dev/null
# The cores may be shared: the load before and after goes into the results.
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# (a) decompression floors
timed floor_gzip gzip -dc "${CORPUS[@]}"
FLOOR_TOOL=""
if [ -n "${OVERLAP_FLOOR_CMD:-}" ]; then
    # shellcheck disable=SC2086
    timed floor_tool $OVERLAP_FLOOR_CMD "${CORPUS[@]}"
    FLOOR_TOOL="$OVERLAP_FLOOR_CMD"
elif [ -f "$ROOT/examples/floor.rs" ] && cargo build --release --quiet --example floor 2>"$LOGS/floor-build.err"; then
    timed floor_tool "$ROOT/target/release/examples/floor" "${CORPUS[@]}"
    FLOOR_TOOL="floor example, 1 thread"
    if [ -n "$THREADS" ] && [ "$THREADS" != 1 ]; then
        timed floor_tool_threads "$ROOT/target/release/examples/floor" "${CORPUS[@]}" --threads "$THREADS"
    fi
else
    note "no floor example (examples/floor.rs) or it does not build: the tool's own floor is skipped"
fi

# Uncompressed size: from the generator's summary, else one more pass.
if [ -n "$CORPUS_STATS" ] && [ -s "$CORPUS_STATS" ]; then
    RAW_BYTES=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uncompressed_bytes"])' "$CORPUS_STATS")
else
    RAW_BYTES=$(gzip -dc "${CORPUS[@]}" | wc -c)
fi

# (b) the four stages, in a fresh output directory
OUT=$WORK/out
rm -rf "$OUT"
mkdir -p "$OUT"
stage fingerprint "$BIN" fingerprint "${CORPUS[@]}" --out "$OUT" "${threads_args[@]}" "${memory_args[@]}" -q
stage exact "$BIN" exact "$OUT" "${threads_args[@]}" "${memory_args[@]}" -q
stage pairs "$BIN" pairs "$OUT" -T 15 "${threads_args[@]}" "${memory_args[@]}" -q
stage report "$BIN" report "$OUT" "${threads_args[@]}" "${memory_args[@]}" -q
cp "$OUT/stats.json" "$LOGS/stats.json"
OUT_BYTES=$(du -sb "$OUT" | cut -f1)

# (c) each counting method on the same fingerprints
if [ "$METHODS" = 1 ]; then
    for m in sort coarse prefix; do
        rm -f "$OUT/.overlap/pairs.stamp"
        # A method may refuse a crawl (sort, when its runs would not fit on
        # the disk): the others are still measured.
        MAY_FAIL=1 stage "method_$m" "$BIN" pairs "$OUT" -T 15 --method "$m" "${threads_args[@]}" \
            "${memory_args[@]}" -q || continue
        if ! cmp -s "$OUT/overlap.csv" "$LOGS/overlap.csv" 2>/dev/null; then
            if [ -f "$LOGS/overlap.csv" ]; then
                die "--method $m gave a different overlap.csv"
            fi
            cp "$OUT/overlap.csv" "$LOGS/overlap.csv"
        fi
    done
    rm -f "$LOGS/overlap.csv"
fi

# (d) thread-count determinism and speedup on a small crawl
SMALL=""
SAME=""
if [ "$THREADS_CHECK" = 1 ]; then
    crawl_for "$SMALL_SIZE" "$SEED" 1
    SMALL=$CRAWL_DIR/crawl-00000.warc.gz
    for t in 1 2; do
        rm -rf "$WORK/run-t$t"
        timed "run_t$t" "$BIN" run "$SMALL" --out "$WORK/run-t$t" --threads "$t" "${memory_args[@]}" -q
    done
    SAME=true
    for f in docs.csv overlap.csv; do
        if ! cmp "$WORK/run-t1/$f" "$WORK/run-t2/$f"; then
            SAME=false
            note "DIFFERENT: $f with --threads 1 and --threads 2"
        fi
    done
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# ---------------------------------------------------------------- report

COMP_BYTES=$(cat "${CORPUS[@]}" | wc -c)
python3 "$ROOT/scripts/bench_report.py" --work "$WORK" --label "$LABEL" --files "${#CORPUS[@]}" \
    --compressed "$COMP_BYTES" --uncompressed "$RAW_BYTES" --out-bytes "$OUT_BYTES" \
    --generator-stats "$CORPUS_STATS" --small "$SMALL" --same "$SAME" --floor-tool "$FLOOR_TOOL" \
    --threads "${THREADS:-default}" --memory "${MEMORY:-default}" --cores "$(nproc)" \
    --load-before "$LOAD_BEFORE" --load-after "$LOAD_AFTER" --json "$JSON_OUT"

if [ "$SAME" = false ]; then
    die "outputs differ between --threads 1 and --threads 2"
fi
