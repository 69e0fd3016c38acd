#!/usr/bin/env bash
# overlap's similarity join against text-dedup's MinHash and SimHash, side
# by side on the same texts, in one run.
#
#   scripts/bench_similarity.sh [--rounds N] [--jaccard J] [--out DIR] CRAWL_DIR
#
# CRAWL_DIR holds *.warc.gz files (scripts/make_doc_crawl.sh makes such a
# crawl). A first, untimed `overlap run` over them (which also brings the
# files into the page cache) gives the texts: `overlap dedup --level exact
# --format jsonl` writes one JSON line {doc_id, url, source, text} per
# exact group, the normalized text overlap fingerprints, so that every
# tool below reads the very same texts (texts.jsonl; texts of fewer than
# 3 characters are left out: text-dedup's SimHash fails on them). Then,
# per round (each run with fresh output and cache directories):
#
#   overlap run CRAWL/*.warc.gz --chunk words:5 --jaccard J   method auto,
#                                                              sort, prefix
#   overlap run texts.jsonl --input-format jsonl (same flags)  the same three,
#                                     and the approximate minhash (default
#                                     bands), simhash (K = 3), simhash:8,
#                                     simhash:12, whose candidates are verified
#   python -m text_dedup.minhash, defaults (threshold 0.7: 25 bands x 10 rows)
#   python -m text_dedup.minhash --threshold J (0.8: 16 x 15)
#   python -m text_dedup.simhash, defaults (char 3-grams, 64 bits, 3 bits apart)
#
# each timed by scripts/measure_tree.py: wall and CPU seconds, and peak
# memory of the whole process tree (text-dedup forks --num_proc workers,
# as many as cores; overlap runs as many threads, and its stats.json gives
# each stage's peak too). A run that fails (sort refuses when its pair
# runs would not fit on the disk) is shown as such. It prints one table
# (medians over the rounds): tool, input, method, seconds, CPU seconds,
# peak MB, pairs (overlap's verified rows), clusters and documents in them
# (connected components of the pairs and exact groups for overlap,
# union-find clusters for text-dedup), and the time as a ratio to
# overlap's auto run on the same JSONL in the same round; and which method
# auto chose. It writes to DIR (default target/bench/similarity-NAME/):
# results.json, table.md, texts.jsonl, the auto runs' analyses (ov-*-auto/,
# for `overlap eval`; the other methods' are removed, being the same
# tables), text-dedup's uf.pkl and its clusters as url,cluster CSV
# (td-*-clusters.csv), and each run's log and measurements (rounds/).
# Every approximate run (overlap's and text-dedup's) is then measured by
# `overlap eval` against the exact JSONL table (ov-jsonl-auto): pair
# precision, and recall of the pairs at J >= the threshold and at J >= 0.9
# (eval-*.json, last round); the table adds those columns.
#
# text-dedup 0.4.0 runs from TD_PYTHON if set, else from a virtual
# environment made once in target/td-venv with the versions pinned below
# (python3 >= 3.10; about 1.4 GB, as text-dedup pulls pyspark and others).
# The runs use no network: datasets reads the JSONL as a local file,
# offline. Pitfalls of the peer avoided here: --split train, --path json
# --data_files (a bare path is taken for a Hub dataset), --idx_column url
# (URLs are unique in such a crawl; counted), a fresh --cache_dir per run,
# --debug for uf.pkl, COLUMNS=200 for its timing log.
set -euo pipefail

rounds=1
jaccard=0.8
out=""
crawl=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="${2:-}"; shift 2 ;;
        --jaccard) jaccard="${2:-}"; shift 2 ;;
        --out) out="${2:-}"; shift 2 ;;
        -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
        -*) echo "bench_similarity: unknown option $1" >&2; exit 2 ;;
        *) [ -z "$crawl" ] || { echo "bench_similarity: one CRAWL_DIR only" >&2; exit 2; }; crawl="$1"; shift ;;
    esac
done
[ -n "$crawl" ] || { echo "usage: scripts/bench_similarity.sh [--rounds N] [--jaccard J] [--out DIR] CRAWL_DIR" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench_similarity: --rounds needs a positive number" >&2; exit 2; }
crawl=$(cd "$crawl" && pwd)
shopt -s nullglob
warcs=("$crawl"/*.warc.gz)
shopt -u nullglob
[ "${#warcs[@]}" -gt 0 ] || { echo "bench_similarity: no *.warc.gz in $crawl" >&2; exit 2; }

cd "$(dirname "$0")/.."
repo=$(pwd)
out=${out:-target/bench/similarity-$(basename "$crawl")}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# text-dedup and what its resolver chose when this benchmark was written.
td_pins=(text-dedup==0.4.0 datasets==5.2.0 numpy==2.4.6 pyarrow==26.0.1 scipy==1.17.1 xxhash==4.1.0 bitarray==3.12.3)
if [ -n "${TD_PYTHON:-}" ]; then
    td_python="$TD_PYTHON"
else
    td_python="$repo/target/td-venv/bin/python"
    # The marker is written last, so an install cut short is done again.
    if [ ! -f target/td-venv/installed ]; then
        echo "bench_similarity: making target/td-venv (${td_pins[*]})" >&2
        python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
            || { echo "bench_similarity: text-dedup needs python3 >= 3.10" >&2; exit 2; }
        rm -rf target/td-venv
        python3 -m venv target/td-venv
        target/td-venv/bin/pip install --quiet "${td_pins[@]}"
        printf '%s\n' "${td_pins[@]}" > target/td-venv/installed
    fi
fi
td_version=$("$td_python" -c 'import importlib.metadata as m; print(m.version("text-dedup"))')
[ "$td_version" = 0.4.0 ] || echo "bench_similarity: note: text-dedup $td_version, not 0.4.0" >&2

cargo build --release --quiet
bin="$repo/target/release/overlap"
measure=("python3" "$repo/scripts/measure_tree.py")
flags=(--chunk words:5 --jaccard "$jaccard")

echo "bench_similarity: preparing texts from ${#warcs[@]} WARC files" >&2
rm -rf "$out/prep"
"$bin" run "${warcs[@]}" --out "$out/prep" "${flags[@]}" -q
"$bin" dedup "$out/prep" --level exact --format jsonl -o "$out/dedup.jsonl"
rm -rf "$out/prep"
python3 scripts/bench_similarity_report.py texts "$out/dedup.jsonl" "$out/texts.jsonl" "$out/texts.summary.json"
rm -f "$out/dedup.jsonl"

rm -rf "$out/rounds"
mkdir -p "$out/rounds"
export COLUMNS=200 HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
for r in $(seq "$rounds"); do
    rd="$out/rounds/$r"
    mkdir -p "$rd"
    for input in warc jsonl; do
        methods=(auto sort prefix)
        [ "$input" = warc ] || methods+=(minhash simhash simhash:8 simhash:12)
        for method in "${methods[@]}"; do
            name="overlap-$input-${method/:/-}"
            dir="$out/ov-$input-${method/:/-}"
            echo "bench_similarity: round $r/$rounds: $name" >&2
            rm -rf "$dir"
            if [ "$input" = warc ]; then
                args=("${warcs[@]}")
            else
                args=("$out/texts.jsonl" --input-format jsonl)
            fi
            # A method may refuse (sort, when its pair runs would not fit on
            # the disk): the table says so, and the other runs go on.
            if "${measure[@]}" "$rd/$name.json" -- "$bin" run "${args[@]}" --out "$dir" \
                "${flags[@]}" --method "$method" -q 2> "$rd/$name.log"; then
                python3 scripts/bench_similarity_report.py overlap "$dir" "$rd/$name.summary.json"
            else
                [ "$name" != overlap-jsonl-auto ] || { cat "$rd/$name.log" >&2; exit 1; }
                echo "bench_similarity: $name failed: $(tail -1 "$rd/$name.log")" >&2
                python3 scripts/bench_similarity_report.py failed "$rd/$name.log" "$rd/$name.summary.json"
            fi
            # The auto runs stay for `overlap eval`, the approximate ones
            # until they are measured; the others give the same table and
            # take as much room.
            case "$method" in auto|minhash*|simhash*) ;; *) rm -rf "$dir" ;; esac
        done
    done
    for run in "minhash-default|minhash|" "minhash-$jaccard|minhash|--threshold $jaccard" "simhash-default|simhash|"; do
        IFS='|' read -r name module opts <<< "$run"
        echo "bench_similarity: round $r/$rounds: text-dedup $name" >&2
        rm -rf "$out/td-$name" "$out/td-cache"
        # shellcheck disable=SC2086 # opts holds separate options
        if "${measure[@]}" "$rd/td-$name.json" -- "$td_python" -m "text_dedup.$module" \
            --path json --data_files "$out/texts.jsonl" --split train --column text --idx_column url \
            --output "$out/td-$name" --debug --cache_dir "$out/td-cache" $opts > "$rd/td-$name.log" 2>&1; then
            python3 scripts/textdedup_clusters.py "$out/td-$name/uf.pkl" "$out/td-$name-clusters.csv" > "$rd/td-$name.summary.json"
        else
            echo "bench_similarity: text-dedup $name failed; its log: $rd/td-$name.log" >&2
            tail -3 "$rd/td-$name.log" >&2
            python3 scripts/bench_similarity_report.py failed "$rd/td-$name.log" "$rd/td-$name.summary.json"
        fi
        # Keep uf.pkl; the kept documents' Arrow copy is as large as the texts.
        [ ! -d "$out/td-$name" ] || find "$out/td-$name" -name '*.arrow' -delete
        rm -rf "$out/td-cache"
    done
done
# Recall of the approximate runs against the exact table, at the threshold
# and at 0.9.
truth="$out/ov-jsonl-auto"
for run in "$out"/ov-jsonl-minhash "$out"/ov-jsonl-simhash* "$out"/td-*-clusters.csv; do
    [ -e "$run" ] || continue
    name=$(basename "$run" .csv)
    for j in "$jaccard" 0.9; do
        "$bin" eval "$run" "$truth" --min-jaccard "$j" --json -q > "$out/eval-$name-$j.json"
    done
done
rm -rf "$out"/ov-jsonl-minhash "$out"/ov-jsonl-simhash*
python3 scripts/bench_similarity_report.py table "$out" "$rounds" "$jaccard" "$td_version"
