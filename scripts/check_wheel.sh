#!/usr/bin/env bash
# Builds the Python wheel from this checkout, installs it into a fresh
# virtual environment, and checks what a user of the wheel gets:
# - `overlap` on the environment's PATH, whose analysis of the bundled
#   sample is byte for byte that of `cargo run` (every table and report);
# - `python -m overlap_crawl` running the same binary;
# - the overlap_crawl module reading every table of real analyses (a first
#   one with --max-df and --format parquet, a second with --previous) with
#   the types it lists, through csv, pandas and DuckDB alike
#   (scripts/check_wheel.py).
#
# Usage: scripts/check_wheel.sh [--release]
#   --release  build the wheel as it ships (`maturin build --release`, the
#              LTO build: about 5 minutes on two cores); by default the dev
#              profile, which the test suite has already built, so that CI
#              checks the packaging without a second optimized build.
# Needs python3 with venv and pip, and maturin (`python3 -m pip install
# maturin`); the venv fetches duckdb and pandas.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
profile=(--profile dev)
[ "${1:-}" = --release ] && profile=(--release)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m maturin build --locked "${profile[@]}" --out "$work/wheels" --quiet
wheel=$(ls "$work"/wheels/overlap_crawl-*.whl)
echo "built $(basename "$wheel")"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[duckdb,pandas]"

installed="$work/venv/bin/overlap"
[ -x "$installed" ] || { echo "the wheel put no overlap in $work/venv/bin" >&2; exit 1; }
# On the environment's PATH, as an activated venv has it.
found=$(PATH="$work/venv/bin:/usr/bin:/bin" command -v overlap)
[ "$found" = "$installed" ] || { echo "overlap on PATH is $found, not the wheel's" >&2; exit 1; }

# The installed binary against the checkout's, on the same input spelled
# the same way (docs.csv's source names it).
cargo build --locked --quiet
reference="$root/${CARGO_TARGET_DIR:-target}/debug/overlap"
cp testdata/sample.warc.gz "$work/"
cd "$work"
"$installed" run sample.warc.gz --out wheel-out -q
"$reference" run sample.warc.gz --out cargo-out -q
for f in $(cd cargo-out && find . -type f ! -name stats.json ! -path './.overlap/*' | sort); do
    cmp -s "cargo-out/$f" "wheel-out/$f" || { echo "the wheel's binary wrote another $f" >&2; exit 1; }
done
echo "the installed overlap wrote the same $(cd cargo-out && find . -type f ! -name stats.json ! -path './.overlap/*' | wc -l) files as cargo's"
"$work/venv/bin/python" -m overlap_crawl --version

"$installed" run sample.warc.gz --out first --max-df 20 --format parquet -q
"$installed" run sample.warc.gz --out second --previous first -q
"$work/venv/bin/python" "$root/scripts/check_wheel.py" "$installed" first second
