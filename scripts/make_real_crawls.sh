#!/usr/bin/env bash
# Rebuilds testdata/real/: WARC files written by third-party writers, over
# real pages served from 127.0.0.1 only (no network), and their manifest of
# independently counted records (scripts/count_warc_records.py, warcio).
#
#   wget.warc.gz        GNU Wget (--warc-file), a crawl of the site below
#   wget-dedup.warc.gz  Wget again, deduplicating against the first crawl's
#                       CDX: unchanged pages become revisit records
#   warcio.warc.gz      warcio's capture_http over the same server
#
# The site: the Rust documentation pages and Debian copyright files in
# testdata/src, an index linking to them, a directory link (a 301 from the
# server), and a link to a missing page (a 404).
#
# Needs: wget, python3 with warcio (pip install warcio). Usage:
#   scripts/make_real_crawls.sh [OUT_DIR]     (default testdata/real)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/testdata/real}" && cd "${1:-$root/testdata/real}" && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

site="$work/site"
mkdir -p "$site/rust" "$site/doc"
cp -r "$root/testdata/src/rust/1.95.0/." "$site/rust/"
docs=(bzip2 grep gzip hostname debconf base-files)
for d in "${docs[@]}"; do
    mkdir -p "$site/doc/$d"
    cp "$root/testdata/src/doc/$d/copyright" "$site/doc/$d/copyright"
done
{
    echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Local documentation</title></head><body>'
    echo '<h1>Local documentation</h1><ul>'
    (cd "$site" && find rust -name '*.html' | sort) | while read -r p; do echo "<li><a href=\"$p\">$p</a></li>"; done
    for d in "${docs[@]}"; do echo "<li><a href=\"doc/$d/copyright\">$d</a></li>"; done
    echo '<li><a href="doc">all packages</a></li>'
    echo '<li><a href="removed.html">a removed page</a></li>'
    echo '</ul></body></html>'
} > "$site/index.html"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$site" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
server=$!
for _ in $(seq 50); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
    sleep 0.1
done
base="http://127.0.0.1:$port/"

cd "$work"
# -l 1: the index and what it links to (the directory link through its 301).
wget -q -r -l 1 --no-parent --delete-after -P crawl1 --warc-file=wget --warc-cdx "$base" || true
# The same crawl again: unchanged payloads become revisits of crawl 1.
wget -q -r -l 1 --no-parent --delete-after -P crawl2 --warc-file=wget-dedup --warc-dedup=wget.cdx "$base" || true
python3 - "$base" <<'PY'
import sys, urllib.request
from warcio.capture_http import capture_http
base = sys.argv[1]
pages = ["", "rust/std/mem/fn.take.html", "rust/core/mem/fn.take.html", "doc/grep/copyright",
         "doc", "removed.html", "rust/std/mem/fn.take.html"]
with capture_http("warcio.warc.gz"):
    for p in pages:
        try:
            urllib.request.urlopen(base + p).read()
        except urllib.error.HTTPError as e:
            e.read()
PY
cp wget.warc.gz wget-dedup.warc.gz warcio.warc.gz "$out/"
python3 "$root/scripts/count_warc_records.py" "$out/wget.warc.gz" "$out/wget-dedup.warc.gz" \
    "$out/warcio.warc.gz" > "$out/manifest.json"
ls -l "$out"
