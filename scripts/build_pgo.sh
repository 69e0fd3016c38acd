#!/usr/bin/env bash
# A release build of overlap optimized with the profile of its own runs
# (profile-guided optimization): for the binary one deploys to run large
# crawls, not for development.
#
# Usage: scripts/build_pgo.sh [--train FILE...]
#
# 1. Builds overlap instrumented (`-Cprofile-generate`) in target/pgo-gen.
# 2. Trains it: `overlap run` on every bundled input of testdata/ (WARC,
#    ARC, JSONL, the wget and warcio crawls, a damaged file), which goes
#    through every stage on real and generated markup. The training set
#    is in the repository, so the build is the same wherever it is made,
#    and it is not the crawl the benchmarks measure. With --train, one
#    more `overlap run` on the FILEs given (crawl dumps like the ones the
#    binary will read: their markup, page sizes and content types decide
#    which paths are hot, and the bundled inputs are small and mixed).
#    The build then depends on those files; say which in what it measures.
# 3. Builds it again with the merged profile (`-Cprofile-use`) in
#    target/pgo, and prints the binary's path.
#
# The outputs are those of the plain build, byte for byte: the profile
# changes how the compiler lays out and inlines the code, not what it
# computes (the tests of the plain build cover the code; compare two
# output directories with md5sum to see it on a crawl). What it gains is
# measured in docs/performance.md and docs/performance-log.md.
#
# Needs `llvm-profdata` of the LLVM major version rustc uses (`rustc -vV`):
# `rustup component add llvm-tools`, or Debian's `llvm-N` package.
set -euo pipefail

NAME=build_pgo
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench_common.sh
. "$ROOT/scripts/bench_common.sh"

extra=()
case ${1:-} in
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    "") ;;
    --train)
        shift
        [ $# -gt 0 ] || die "--train needs at least one file"
        for f in "$@"; do
            [ -f "$f" ] || die "$f: no such file"
            extra+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
        done
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
esac

# The profile's format follows LLVM's major version: the tool that merges
# it must be of rustc's.
major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
[ -n "$major" ] || die "cannot tell rustc's LLVM version from 'rustc -vV'"
profdata=""
for candidate in \
    "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata \
    "$(command -v "llvm-profdata-$major" || true)" \
    "/usr/lib/llvm-$major/bin/llvm-profdata"; do
    if [ -x "$candidate" ]; then
        profdata=$candidate
        break
    fi
done
[ -n "$profdata" ] || die "no llvm-profdata of LLVM $major: install it with 'rustup component add llvm-tools' or 'apt-get install llvm-$major'"

cd "$ROOT"
gen=$ROOT/target/pgo-gen
raw=$gen/profiles
rm -rf "$raw"
mkdir -p "$raw"

note "building the instrumented binary in $gen"
RUSTFLAGS="-Cprofile-generate=$raw" cargo build --release --quiet --target-dir "$gen"

note "training on testdata/"
work=$gen/train
train() {
    rm -rf "$work"
    "$gen/release/overlap" run "$@" --out "$work" -q >/dev/null || die "training run failed: overlap run $*"
}
train testdata/sample.warc.gz
train testdata/sample.arc.gz
train testdata/real.jsonl.gz
train testdata/real/*.warc.gz
train testdata/sample.warc.gz testdata/real/*.warc.gz testdata/corrupt.warc.gz
train testdata/sample.warc.gz --method coarse --memory 64M
if [ ${#extra[@]} -gt 0 ]; then
    note "training on ${#extra[@]} more file(s)"
    train "${extra[@]}"
fi
rm -rf "$work"
ls "$raw"/*.profraw >/dev/null 2>&1 || die "the training runs wrote no profile in $raw"

"$profdata" merge -o "$gen/merged.profdata" "$raw"
note "building the optimized binary in target/pgo"
RUSTFLAGS="-Cprofile-use=$gen/merged.profdata" cargo build --release --quiet --target-dir "$ROOT/target/pgo"
echo "$ROOT/target/pgo/release/overlap"
