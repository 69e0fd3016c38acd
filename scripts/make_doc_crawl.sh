#!/usr/bin/env bash
# Makes a real crawl of local documentation, for benchmarks on real text:
# GNU Wget crawls pages served from 127.0.0.1 only (no network) and writes
# per-record gzip WARC files, like a crawler's output.
#
#   scripts/make_doc_crawl.sh [--size SMALL|FULL] [--jobs N] OUT_DIR
#
# The sites, each under its own host name (scripts/serve_docs.py maps host
# names to directories and Wget reaches it as its HTTP proxy, so nothing is
# resolved or fetched from outside):
#
#   rust-1.95.0.test   the Rust documentation of the 1.95.0 toolchain
#   rust-nightly.test  the same of the nightly toolchain (FULL only): the
#                      two versions share most of their pages, with small
#                      differences, and every page carries rustdoc's
#                      boilerplate: real near-replicas across hosts
#   debian-doc.test    /usr/share/doc: copyright files, changelogs (served
#                      gzip-encoded) and READMEs, with many exact and near
#                      copies, directory listings for directories
#
# SMALL crawls std, alloc and core without core::arch from 1.95.0, and
# /usr/share/doc; FULL every page reachable from each site's root. The
# crawl is split into subtrees (one Wget each, with its own WARC files,
# at most --jobs at a time; default 2), since one Wget parsing links is
# the bottleneck (from 30 to 700 pages a second, by page size). Every Wget runs with
# --recursive --level inf --no-parent --wait 0 and robots off; the
# subtrees do not overlap (-X), so every URL is fetched once.
#
# OUT_DIR gets NAME-00000.warc.gz ... (--warc-max-size 1G) per subtree,
# Wget's own records (its log and arguments) in meta/NAME-meta.warc.gz,
# so that OUT_DIR/*.warc.gz holds only the crawled pages, and manifest.json:
# per subtree its start URL, responses saved (pages, any type) and their
# bytes, error responses by status, and seconds; the files with their
# sizes; and the totals. Earlier *.warc.gz, meta/ and manifest.json in
# OUT_DIR are replaced.
#
# Needs: GNU Wget (1.14 or newer, for --warc-file), python3, and the
# toolchains' documentation (rustup component add rust-docs, under
# $RUSTUP_HOME or ~/.rustup). Took, on two busy cores: SMALL (10,219
# responses, 368 MB; 126 MB of WARC) under 2 minutes, FULL (76,668
# responses, 1.13 GB; 391 MB of WARC) 3 minutes.
set -euo pipefail

size=SMALL
jobs=2
out_arg=""
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:-}"; shift 2 ;;
        --jobs) jobs="${2:-}"; shift 2 ;;
        -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
        -*) echo "make_doc_crawl: unknown option $1" >&2; exit 2 ;;
        *) [ -z "$out_arg" ] || { echo "make_doc_crawl: one OUT_DIR only" >&2; exit 2; }; out_arg="$1"; shift ;;
    esac
done
case "$size" in SMALL|FULL) ;; *) echo "make_doc_crawl: --size is SMALL or FULL, not '$size'" >&2; exit 2 ;; esac
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "make_doc_crawl: --jobs needs a positive number" >&2; exit 2; }
[ -n "$out_arg" ] || { echo "usage: scripts/make_doc_crawl.sh [--size SMALL|FULL] [--jobs N] OUT_DIR" >&2; exit 2; }
command -v wget >/dev/null || { echo "make_doc_crawl: needs GNU Wget (apt-get install wget)" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
toolchains="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
docs_of() {
    local d
    for d in "$toolchains"/"$1"-*/share/doc/rust/html; do
        [ -f "$d/index.html" ] && { echo "$d"; return; }
    done
    echo "make_doc_crawl: no Rust documentation at $toolchains/$1-*/share/doc/rust/html (rustup component add rust-docs --toolchain $1)" >&2
    exit 2
}
hosts=("rust-1.95.0.test=$(docs_of 1.95.0)" "debian-doc.test=/usr/share/doc")
[ "$size" = FULL ] && hosts+=("rust-nightly.test=$(docs_of nightly)")

# name|start URL|Wget options (directories left to other subtrees).
if [ "$size" = SMALL ]; then
    crawls=(
        "rust-1.95.0-core|http://rust-1.95.0.test/core/|-X /core/arch"
        "rust-1.95.0-std|http://rust-1.95.0.test/std/|"
        "debian-doc|http://debian-doc.test/|"
        "rust-1.95.0-alloc|http://rust-1.95.0.test/alloc/|"
    )
else
    crawls=()
    for v in 1.95.0 nightly; do
        crawls+=(
            "rust-$v-core-arch|http://rust-$v.test/core/arch/|"
            "rust-$v-core|http://rust-$v.test/core/|-X /core/arch"
            "rust-$v-rest|http://rust-$v.test/|-X /core,/std"
            "rust-$v-std|http://rust-$v.test/std/|"
        )
    done
    crawls+=("debian-doc|http://debian-doc.test/|")
fi

mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
work=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 "$root/scripts/serve_docs.py" "$work/port" "${hosts[@]}" &
server=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "make_doc_crawl: the server did not start" >&2; exit 1; }
proxy="http://127.0.0.1:$(cat "$work/port")/"

mkdir -p "$work/warc"
crawl() {
    local name="$1" url="$2" opts="$3" start rc=0
    start=$(date +%s.%N)
    # shellcheck disable=SC2086 # opts holds separate Wget options
    wget -e robots=off -e use_proxy=on -e "http_proxy=$proxy" --no-verbose -o "$work/$name.log" \
        --recursive --level inf --no-parent --wait 0 --delete-after -P "$work/files-$name" \
        --warc-file "$work/warc/$name" --warc-max-size 1G $opts "$url" || rc=$?
    # 8: the server answered some requests with an error (links to missing
    # pages, which a real crawl meets too); anything else is a failure.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 8 ]; then
        echo "make_doc_crawl: wget $url exited $rc; the end of its log:" >&2
        tail -5 "$work/$name.log" >&2
        return 1
    fi
    echo "$name $url $start $(date +%s.%N)" >> "$work/times"
    echo "make_doc_crawl: $name done ($(grep -c ' URL:' "$work/$name.log") pages)" >&2
}

echo "make_doc_crawl: $size crawl, ${#crawls[@]} subtrees, $jobs at a time, into $out" >&2
began=$(date +%s)
running=0
failed=0
for c in "${crawls[@]}"; do
    IFS='|' read -r name url opts <<< "$c"
    if [ "$running" -ge "$jobs" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
    crawl "$name" "$url" "$opts" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done
[ "$failed" -eq 0 ] || exit 1

rm -rf "$out/meta" "$out/manifest.json"
rm -f "$out"/*.warc.gz
mkdir -p "$out/meta"
mv "$work"/warc/*-meta.warc.gz "$out/meta/"
mv "$work"/warc/*.warc.gz "$out/"
python3 - "$out" "$work" "$size" "$(( $(date +%s) - began ))" <<'PY'
import json, os, re, sys
from collections import Counter
out, work, size, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
saved = re.compile(r" URL:\S+ \[(\d+)(?:/\d+)?\] -> ")
error = re.compile(r" ERROR (\d+): ")
crawls = []
for line in open(os.path.join(work, "times")):
    name, url, start, end = line.split()
    pages = nbytes = 0
    errors = Counter()
    for l in open(os.path.join(work, name + ".log"), errors="replace"):
        m = saved.search(l)
        if m:
            pages += 1
            nbytes += int(m.group(1))
        else:
            m = error.search(l)
            if m:
                errors[m.group(1)] += 1
    crawls.append({"name": name, "start": url, "pages": pages, "bytes": nbytes,
                   "errors": dict(sorted(errors.items())), "seconds": round(float(end) - float(start), 1)})
crawls.sort(key=lambda c: c["name"])
files = []
for d in ("", "meta"):
    for f in sorted(os.listdir(os.path.join(out, d))):
        p = os.path.join(out, d, f)
        if f.endswith(".warc.gz") and os.path.isfile(p):
            files.append({"file": os.path.join(d, f), "bytes": os.path.getsize(p)})
manifest = {
    "generated_by": "scripts/make_doc_crawl.sh (GNU Wget)",
    "size": size,
    "pages": sum(c["pages"] for c in crawls),
    "bytes": sum(c["bytes"] for c in crawls),
    "warc_bytes": sum(f["bytes"] for f in files if not f["file"].startswith("meta")),
    "seconds": seconds,
    "crawls": crawls,
    "files": files,
}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
print(f"make_doc_crawl: {manifest['pages']} pages, {manifest['bytes'] / 1e6:.0f} MB, "
      f"{manifest['warc_bytes'] / 1e6:.0f} MB of WARC in {len(files)} files, {seconds} s", file=sys.stderr)
PY
