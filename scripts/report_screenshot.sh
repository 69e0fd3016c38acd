#!/bin/sh
# Renders an output directory's report.html with headless Chromium and
# writes a PNG screenshot, to check that the page reads well.
#
# Usage: scripts/report_screenshot.sh OUT_DIR [PNG] [WIDTHxHEIGHT]
#
# Needs chromium (Debian: apt-get install chromium). The page is
# self-contained; networking is switched off all the same, so a render
# that needed the network would show it.
set -eu
dir=${1:?usage: scripts/report_screenshot.sh OUT_DIR [PNG] [WIDTHxHEIGHT]}
png=${2:-$dir/report.png}
size=${3:-1200x2000}
html=$(cd "$dir" && pwd)/report.html
[ -f "$html" ] || { echo "no report.html in $dir (run overlap report first)" >&2; exit 2; }
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chromium" ] || { echo "chromium not found (apt-get install chromium)" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
case $png in /*) ;; *) png=$(pwd)/$png ;; esac
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars \
    --window-size="$(echo "$size" | tr x ,)" --screenshot="$png" "file://$html" 2>/dev/null
[ -s "$png" ] || { echo "chromium wrote no screenshot" >&2; exit 1; }
echo "$png"
