#!/usr/bin/env bash
# Runs the fuzz targets in fuzz/ one after another and prints a table of
# what each did.
#
#   scripts/fuzz.sh [-t SECONDS | -n RUNS] [-j JOBS] [-s SANITIZER] [TARGET...]
#
#   -t SECONDS  run each target this long (default 60)
#   -n RUNS     run each target for this many executions instead
#   -j JOBS     fuzzing processes per target (default 1); with -n, each
#               process makes RUNS / JOBS executions
#   -s SANITIZER  none (default) or address. The code the targets drive
#               (src/bytes/read, src/bytes/extract) has no unsafe block, so AddressSanitizer
#               finds nothing there that a panic would not while it costs
#               executions; -s address checks the dependencies' unsafe code
#               too (zstd's C decoder, charset decoders).
#   TARGET      warc arc jsonl pagefeed gzip zstd html charset (default: all)
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Seeds are cut from testdata/ by scripts/fuzz_seeds.py into fuzz/corpus/,
# which grows with what the fuzzer finds and is kept between runs (it is
# not committed). A crash stops that target, leaves the input in
# fuzz/artifacts/TARGET/ and makes the script exit 1; copy it to
# fuzz/regressions/TARGET/ (the tests at the end of src/fuzzing.rs run
# every input there through its target) before fixing it.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=60
runs=
jobs=1
sanitizer=none
while getopts "t:n:j:s:" opt; do
    case $opt in
        t) seconds=$OPTARG ;;
        n) runs=$OPTARG ;;
        j) jobs=$OPTARG ;;
        s) sanitizer=$OPTARG ;;
        *) sed -n '4,18p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(warc arc jsonl pagefeed gzip zstd html charset)

command -v cargo-fuzz >/dev/null || { echo "fuzz.sh: cargo-fuzz is not installed: cargo install cargo-fuzz" >&2; exit 2; }
python3 scripts/fuzz_seeds.py testdata fuzz/corpus
(cd fuzz && cargo +nightly fuzz build -O -s "$sanitizer")

logs=fuzz/logs
mkdir -p "$logs"
status=0
printf '%-9s %14s %10s %8s %8s %7s  %s\n' target executions "exec/s" seconds corpus cover result
for t in "${targets[@]}"; do
    mkdir -p "fuzz/artifacts/$t"
    limit=(-max_total_time="$seconds")
    if [ -n "$runs" ]; then
        limit=(-runs=$((runs / jobs)))
    fi
    start=$(date +%s)
    result=ok
    if [ "$jobs" -gt 1 ]; then
        # Each job writes fuzz-N.log in the current directory.
        (cd "$logs" && ../../fuzz/target/x86_64-unknown-linux-gnu/release/"$t" \
            -jobs="$jobs" -workers="$jobs" -print_final_stats=1 -max_len=16384 -rss_limit_mb=4096 \
            -artifact_prefix="../artifacts/$t/" "${limit[@]}" "../corpus/$t" >/dev/null 2>&1) || result=CRASH
        cat "$logs"/fuzz-*.log > "$logs/$t.log"
        rm -f "$logs"/fuzz-*.log
    else
        fuzz/target/x86_64-unknown-linux-gnu/release/"$t" \
            -print_final_stats=1 -max_len=16384 -rss_limit_mb=4096 \
            -artifact_prefix="fuzz/artifacts/$t/" "${limit[@]}" "fuzz/corpus/$t" > "$logs/$t.log" 2>&1 || result=CRASH
    fi
    elapsed=$(( $(date +%s) - start ))
    execs=$(grep -h 'stat::number_of_executed_units' "$logs/$t.log" | awk '{s += $2} END {print s + 0}')
    corpus=$(find "fuzz/corpus/$t" -type f | wc -l)
    cover=$(grep -ho 'cov: [0-9]*' "$logs/$t.log" | awk '{print $2}' | sort -n | tail -1)
    [ "$result" = ok ] || status=1
    printf '%-9s %14s %10s %8s %8s %7s  %s\n' "$t" "$execs" $((execs / (elapsed > 0 ? elapsed : 1))) "$elapsed" "$corpus" "${cover:-?}" "$result"
done
exit $status
