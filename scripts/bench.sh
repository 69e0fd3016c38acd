#!/usr/bin/env bash
# Benchmark the overlap pipeline against a decompression floor.
#
# Usage: scripts/bench.sh [CORPUS] [--threads N] [--size SIZE] [--seed N]
#                         [--small-size SIZE] [--memory SIZE] [--skip-threads-check]
#
#   CORPUS         a per-record gzip WARC file. Default: a synthetic crawl of
#                  --size (default 1G, compressed) made by scripts/gen_corpus.py
#                  with --seed (default 1) in the work directory, reused when a
#                  complete one with the same size and seed is already there.
#   --threads N    worker threads for the overlap stages (default: the tool's
#                  default, the number of cores).
#   --small-size   size of the corpus for the determinism check (default 50M).
#   --memory SIZE  passed to every stage as --memory (default: the tool's).
#
# Environment: BENCH_DIR (work directory, default target/bench); OVERLAP_BIN (a
# binary to benchmark instead of building target/release/overlap);
# OVERLAP_FLOOR_CMD (a command line to time as the tool's own read-only floor;
# CORPUS is appended).
#
# In one run it measures:
#   (a) the decompression floor: `gzip -dc CORPUS > /dev/null`, and the
#       tool's own floor when it has one;
#   (b) `overlap fingerprint`, `overlap exact` and `overlap pairs -T 15`, each
#       under /usr/bin/time -v (wall time and maximum resident set size);
#   (c) `overlap run` with --threads 1 and --threads 2 on a small corpus,
#       checking that docs.csv and overlap.csv are byte-identical.
# It prints a table and writes the same figures to BENCH_DIR/results.json.
# Every stage writes into a fresh output directory, so nothing is skipped as
# up to date.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

CORPUS=""
THREADS=""
SIZE=${BENCH_SIZE:-1G}
SEED=${BENCH_SEED:-1}
SMALL_SIZE=${BENCH_SMALL_SIZE:-50M}
MEMORY=""
THREADS_CHECK=1
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) [ $# -ge 2 ] || die "--threads needs a value"; THREADS=$2; shift 2 ;;
        --threads=*) THREADS=${1#*=}; shift ;;
        --size) [ $# -ge 2 ] || die "--size needs a value"; SIZE=$2; shift 2 ;;
        --size=*) SIZE=${1#*=}; shift ;;
        --seed) [ $# -ge 2 ] || die "--seed needs a value"; SEED=$2; shift 2 ;;
        --seed=*) SEED=${1#*=}; shift ;;
        --small-size) [ $# -ge 2 ] || die "--small-size needs a value"; SMALL_SIZE=$2; shift 2 ;;
        --small-size=*) SMALL_SIZE=${1#*=}; shift ;;
        --memory) [ $# -ge 2 ] || die "--memory needs a value"; MEMORY=$2; shift 2 ;;
        --memory=*) MEMORY=${1#*=}; shift ;;
        --skip-threads-check) THREADS_CHECK=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [ -z "$CORPUS" ] || die "only one CORPUS can be given"; CORPUS=$1; shift ;;
    esac
done
if [ -n "$THREADS" ] && ! [[ "$THREADS" =~ ^[1-9][0-9]*$ ]]; then
    die "--threads must be a positive integer, not '$THREADS'"
fi

# ---------------------------------------------------------------- tools

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"
/usr/bin/time -v true 2>/dev/null || die "/usr/bin/time does not take -v (GNU time needed: apt-get install -y time)"
command -v gzip >/dev/null || die "gzip is missing"
command -v python3 >/dev/null || die "python3 is missing (needed for the corpus generator and the report)"
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

# ---------------------------------------------------------------- corpus

# Makes (or reuses) the synthetic corpus of size $1 and seed $2; prints its path.
corpus_for() {
    local size=$1 seed=$2
    local file="$WORK/corpus-$size-seed$seed.warc.gz"
    local stats="$WORK/corpus-$size-seed$seed.stats.json"
    # The stats file is written after the corpus is complete (the corpus
    # itself is renamed into place only when finished).
    if [ -s "$file" ] && [ -s "$stats" ]; then
        note "reusing $(basename "$file")"
    else
        note "generating $(basename "$file") (this takes a while for large sizes)"
        rm -f "$stats"
        python3 "$ROOT/scripts/gen_corpus.py" --out "$file" --size "$size" --seed "$seed" \
            --stats "$stats" --jobs 2 -q 2>"$WORK/gen-$size-seed$seed.log" \
            || { cat "$WORK/gen-$size-seed$seed.log" >&2; die "corpus generation failed"; }
    fi
    echo "$file"
}

CORPUS_STATS=""
if [ -z "$CORPUS" ]; then
    CORPUS=$(corpus_for "$SIZE" "$SEED")
    CORPUS_STATS=${CORPUS%.warc.gz}.stats.json
else
    [ -f "$CORPUS" ] || die "$CORPUS: no such file"
    CORPUS=$(cd "$(dirname "$CORPUS")" && pwd)/$(basename "$CORPUS")
fi

# ---------------------------------------------------------------- timing

# timed NAME CMD...: runs CMD under /usr/bin/time -v with stdout discarded,
# writes NAME.time in $WORK/logs; fails the bench if CMD fails.
LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
timed() {
    local name=$1
    shift
    note "$name: $*"
    if ! /usr/bin/time -v -o "$LOGS/$name.time" "$@" >/dev/null 2>"$LOGS/$name.err"; then
        cat "$LOGS/$name.err" >&2
        die "$name failed (log: $LOGS/$name.err)"
    fi
}

# The same, with stdout kept (for commands that write elsewhere anyway).
threads_args=()
[ -n "$THREADS" ] && threads_args=(--threads "$THREADS")
memory_args=()
[ -n "$MEMORY" ] && memory_args=(--memory "$MEMORY")

# Warm the page cache so that the floor and the stages read the same way.
cat "$CORPUS" >/dev/null
# The cores may be shared: the load before and after goes into the results.
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# (a) decompression floor
timed floor_gzip gzip -dc "$CORPUS"
FLOOR_TOOL=""
if [ -n "${OVERLAP_FLOOR_CMD:-}" ]; then
    # shellcheck disable=SC2086
    timed floor_tool $OVERLAP_FLOOR_CMD "$CORPUS" && FLOOR_TOOL="$OVERLAP_FLOOR_CMD"
elif "$BIN" help floor >/dev/null 2>&1; then
    timed floor_tool "$BIN" floor "$CORPUS" "${threads_args[@]}" && FLOOR_TOOL="overlap floor"
else
    note "the tool has no floor command of its own: skipped"
fi

# Uncompressed size: from the generator's summary, else one more pass.
if [ -n "$CORPUS_STATS" ] && [ -s "$CORPUS_STATS" ]; then
    RAW_BYTES=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uncompressed_bytes"])' "$CORPUS_STATS")
else
    RAW_BYTES=$(gzip -dc "$CORPUS" | wc -c)
fi

# (b) the three stages, each in a fresh output directory
OUT=$WORK/out
rm -rf "$OUT"
timed fingerprint "$BIN" fingerprint "$CORPUS" --out "$OUT" "${threads_args[@]}" "${memory_args[@]}" -q
cp "$OUT/stats.json" "$LOGS/stats.fingerprint.json"
timed exact "$BIN" exact "$OUT" "${threads_args[@]}" "${memory_args[@]}" -q
timed pairs "$BIN" pairs "$OUT" -T 15 "${threads_args[@]}" "${memory_args[@]}" -q
cp "$OUT/stats.json" "$LOGS/stats.json"
OUT_BYTES=$(du -sb "$OUT" | cut -f1)

# (c) thread-count determinism and speedup on a small corpus
if [ "$THREADS_CHECK" = 1 ]; then
    SMALL=$(corpus_for "$SMALL_SIZE" "$SEED")
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
else
    SMALL=""
    SAME=""
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# ---------------------------------------------------------------- report

python3 - "$WORK" "$CORPUS" "$RAW_BYTES" "$OUT_BYTES" "${CORPUS_STATS:-}" "${SMALL:-}" "${SAME:-}" \
    "$FLOOR_TOOL" "${THREADS:-default}" "$(nproc)" "$LOAD_BEFORE" "$LOAD_AFTER" <<'PYEOF'
import json, os, re, sys

(work, corpus, raw_bytes, out_bytes, corpus_stats, small, same, floor_tool, threads, cores,
 load_before, load_after) = sys.argv[1:13]
logs = os.path.join(work, "logs")
comp_bytes = os.path.getsize(corpus)
raw_bytes = int(raw_bytes)
MB = 1e6


def parse_time(name):
    """Wall seconds and max RSS bytes from a /usr/bin/time -v report."""
    path = os.path.join(logs, name + ".time")
    if not os.path.exists(path):
        return None
    text = open(path).read()
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
    parts = [float(p) for p in m.group(1).split(":")]
    secs = 0.0
    for p in parts:
        secs = secs * 60 + p
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) * 1024
    user = float(re.search(r"User time \(seconds\): (\S+)", text).group(1))
    sys_ = float(re.search(r"System time \(seconds\): (\S+)", text).group(1))
    return {"seconds": secs, "peak_rss_bytes": rss, "cpu_seconds": round(user + sys_, 2)}


stats = json.load(open(os.path.join(logs, "stats.json")))
fp = stats.get("fingerprint", {})
docs = fp.get("documents")
floor = parse_time("floor_gzip")
floor_s = floor["seconds"]

rows = []


def row(stage, t, command, tool=None):
    s = t["seconds"]
    r = {
        "stage": stage,
        "command": command,
        "seconds": s,
        "cpu_seconds": t["cpu_seconds"],
        "documents_per_s": round(docs / s, 1) if docs and s > 0 else None,
        "mb_per_s_compressed": round(comp_bytes / MB / s, 2) if s > 0 else None,
        "mb_per_s_uncompressed": round(raw_bytes / MB / s, 2) if s > 0 else None,
        "peak_rss_mb": round(t["peak_rss_bytes"] / MB, 1),
        "ratio_to_floor": round(s / floor_s, 2) if floor_s > 0 else None,
    }
    if tool:
        r["tool_seconds"] = tool.get("seconds")
        r["tool_peak_rss_mb"] = round(tool["peak_rss_bytes"] / MB, 1) if tool.get("peak_rss_bytes") else None
    rows.append(r)
    return r


row("floor: gzip -dc", floor, "gzip -dc CORPUS > /dev/null")
ft = parse_time("floor_tool")
if ft:
    row("floor: " + floor_tool, ft, floor_tool + " CORPUS")
total = {"seconds": 0.0, "peak_rss_bytes": 0, "cpu_seconds": 0.0}
for stage, cmd in (("fingerprint", "overlap fingerprint CORPUS --out DIR"),
                   ("exact", "overlap exact DIR"),
                   ("pairs", "overlap pairs DIR -T 15")):
    t = parse_time(stage)
    row(stage, t, cmd, stats.get(stage, {}))
    total["seconds"] += t["seconds"]
    total["cpu_seconds"] += t["cpu_seconds"]
    total["peak_rss_bytes"] = max(total["peak_rss_bytes"], t["peak_rss_bytes"])
total["cpu_seconds"] = round(total["cpu_seconds"], 2)
row("total (3 stages)", total, "")

result = {
    "corpus": {
        "file": os.path.basename(corpus),
        "compressed_bytes": comp_bytes,
        "uncompressed_bytes": raw_bytes,
        "generator": json.load(open(corpus_stats)) if corpus_stats else None,
    },
    "machine": {"cores": int(cores), "threads": threads,
                "load_average_before": load_before, "load_average_after": load_after},
    "tool": {
        "documents": docs,
        "records": fp.get("records"),
        "document_bytes": fp.get("document_bytes"),
        "text_bytes": fp.get("text_bytes"),
        "fingerprints": fp.get("fingerprints"),
        "distinct_fingerprints": fp.get("distinct_fingerprints"),
        "exact_groups": stats.get("exact", {}).get("groups"),
        "copies_removed": stats.get("exact", {}).get("copies_removed"),
        "pairs_generated": stats.get("pairs", {}).get("pairs_generated"),
        "distinct_pairs": stats.get("pairs", {}).get("distinct_pairs"),
        "pairs_emitted": stats.get("pairs", {}).get("pairs_emitted"),
        "output_dir_bytes": int(out_bytes),
    },
    "stages": rows,
    "fingerprint_to_floor": next(r["ratio_to_floor"] for r in rows if r["stage"] == "fingerprint"),
}
if small:
    t1, t2 = parse_time("run_t1"), parse_time("run_t2")
    result["threads_check"] = {
        "corpus": os.path.basename(small),
        "compressed_bytes": os.path.getsize(small),
        "seconds_threads_1": t1["seconds"],
        "seconds_threads_2": t2["seconds"],
        "peak_rss_mb_threads_1": round(t1["peak_rss_bytes"] / MB, 1),
        "peak_rss_mb_threads_2": round(t2["peak_rss_bytes"] / MB, 1),
        "speedup": round(t1["seconds"] / t2["seconds"], 2) if t2["seconds"] > 0 else None,
        "outputs_identical": same == "true",
    }
with open(os.path.join(work, "results.json"), "w") as f:
    json.dump(result, f, indent=2)
    f.write("\n")


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


print(f"corpus: {os.path.basename(corpus)}: {comp_bytes / MB:.1f} MB compressed, "
      f"{raw_bytes / MB:.1f} MB uncompressed, {fmt(docs, ',')} documents; "
      f"threads: {threads} ({cores} cores, load average {load_before} before, {load_after} after)")
hdr = (f"{'stage':<18} {'seconds':>8} {'CPU s':>7} {'docs/s':>10} {'MB/s gz':>9} {'MB/s raw':>9} "
       f"{'peak RSS MB':>12} {'x floor':>8}")
print("(seconds: wall time; CPU s: user + system; MB/s of the compressed and the uncompressed corpus;")
print(" x floor: wall time over that of gzip -dc)")
print(hdr)
print("-" * len(hdr))
for r in rows:
    print(f"{r['stage']:<18} {r['seconds']:>8.2f} {r['cpu_seconds']:>7.1f} {fmt(r['documents_per_s'], ',.0f'):>10} "
          f"{fmt(r['mb_per_s_compressed'], '.1f'):>9} {fmt(r['mb_per_s_uncompressed'], '.1f'):>9} "
          f"{r['peak_rss_mb']:>12.1f} {fmt(r['ratio_to_floor'], '.2f'):>8}")
t = result["tool"]
print(f"fingerprints: {fmt(t['fingerprints'], ',')}; exact groups: {fmt(t['exact_groups'], ',')}, "
      f"copies removed: {fmt(t['copies_removed'], ',')}; pairs generated: {fmt(t['pairs_generated'], ',')}, "
      f"emitted (T=15): {fmt(t['pairs_emitted'], ',')}")
gen = result["corpus"]["generator"]
if gen:
    # The generator knows which pages are byte-identical copies: the exact
    # stage must find the same groups (near-replicas always differ).
    truth = {"documents": gen["pages"], "exact_groups": gen["exact_groups"],
             "copies_removed": gen["exact_copies_removable"]}
    found = {"documents": docs, "exact_groups": t["exact_groups"], "copies_removed": t["copies_removed"]}
    result["ground_truth_check"] = {"expected": truth, "found": found, "match": truth == found}
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print("ground truth (generator): " + ", ".join(f"{k} {v:,}" for k, v in truth.items())
          + ("; the tool agrees" if truth == found else "; the tool found " + ", ".join(
              f"{k} {fmt(v, ',')}" for k, v in found.items()) + "  <-- MISMATCH"))
print(f"fingerprint / gzip floor: {result['fingerprint_to_floor']}x")
if small:
    c = result["threads_check"]
    print(f"overlap run on {c['corpus']}: --threads 1 {c['seconds_threads_1']:.2f} s, --threads 2 "
          f"{c['seconds_threads_2']:.2f} s, speedup {c['speedup']}x; docs.csv and overlap.csv "
          + ("identical" if c["outputs_identical"] else "DIFFER"))
print(f"results: {os.path.join(work, 'results.json')}")
PYEOF

if [ "$SAME" = false ]; then
    die "outputs differ between --threads 1 and --threads 2"
fi
