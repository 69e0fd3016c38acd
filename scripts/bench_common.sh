# Shared by the interleaved-rounds benchmarks (bench_ingest.sh,
# bench_zstd.sh, bench_projection.sh), bench_side_by_side.sh and, for its
# messages, build_pgo.sh; sourced, not run. The caller sets
# NAME (its name in messages) and ROOT (the repository) first.

die() { echo "$NAME: $*" >&2; exit 2; }
note() { echo "$NAME: $*" >&2; }

# parse_rounds_threads ARG...: --rounds N (default 3), --threads N
# (default 2), -h/--help (prints the caller's header comment); the other
# arguments are files, in FILES.
parse_rounds_threads() {
    ROUNDS=3
    THREADS=2
    FILES=()
    while [ $# -gt 0 ]; do
        case $1 in
            --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
            --threads) [ $# -ge 2 ] || die "--threads needs a value"; THREADS=$2; shift 2 ;;
            -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
            -*) die "unknown option $1" ;;
            *) FILES+=("$1"); shift ;;
        esac
    done
    [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, not '$ROUNDS'"
    [[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || die "--threads must be a positive integer, not '$THREADS'"
    [ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"
}

# build_binaries: BIN (OVERLAP_BIN, or target/release/overlap built here)
# and FLOOR (examples/floor.rs: the tool's own one-thread decompression).
build_binaries() {
    cd "$ROOT"
    if [ -n "${OVERLAP_BIN:-}" ]; then
        BIN=$OVERLAP_BIN
        [ -x "$BIN" ] || die "OVERLAP_BIN=$BIN is not an executable"
    else
        cargo build --release --quiet
        BIN=$ROOT/target/release/overlap
    fi
    cargo build --release --quiet --example floor
    FLOOR=$ROOT/target/release/examples/floor
}

# timed NAME CMD...: appends "wall cpu" of CMD to $WORK/NAME. Its time
# and stderr go to files of NAME's own, so that two runs of different
# NAMEs may be timed at once (bench_side_by_side.sh).
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.err" \
        || { cat "$WORK/$name.err" >&2; die "$name failed: $*"; }
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$WORK/$name.time" >>"$WORK/$name"
}
