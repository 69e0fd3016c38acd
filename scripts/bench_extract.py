#!/usr/bin/env python3
"""Times Resiliparse's HTML-to-text extraction on a file of pages, on one
thread, and, with `--overlap`, overlap's `examples/extract` on the same
file, so that the two are compared as a ratio measured in one run.

    cargo build --release --example extract
    scripts/bench_extract.py pages.bin --overlap target/release/examples/extract --rounds 3

`pages.bin` is written by `scripts/dump_html_pages.py` (per page: a u32
little-endian byte length, then UTF-8). Every page is loaded into memory as
a str before anything is timed. Each timed pass is, for every page,
`extract_plain_text(HTMLTree.parse(page), ...)`: parsing and extraction
together, as a caller holding a str pays for them, with the garbage
collector off. The variants:

* `full`: `main_content=False, preserve_formatting=True`, the whole page's
  visible text with block structure kept as lines: what overlap's
  `html_to_text` produces, and Resiliparse's defaults (2.0).
* `main`: `main_content=True`, Resiliparse's main-content heuristic, which
  drops navigation, headers, footers and the like.
* `parse`: `HTMLTree.parse(page)` alone, to show how the time splits
  between the lexbor parser and the extraction.

Rounds are interleaved (overlap, then each Resiliparse variant, then again)
and the table shows medians. overlap's times are the example's own, measured
inside its process around the two passes; its `html_to_text` output is not
whitespace-collapsed, so `html_to_text + normalize` is the fair comparison
with Resiliparse, which collapses whitespace as it extracts. MB are 10^6
bytes of input HTML (UTF-8); output sizes are UTF-8 bytes, from the last
round.

With `--slowest N`, one more, untimed pass per side measures every page on
its own and prints the N pages with the lowest throughput, by index (see
`dump_html_pages.py --urls`), among the pages of at least 16 kB (a smaller
page's time is mostly fixed costs).

Needs resiliparse (pip install resiliparse).
"""

import argparse
import gc
import statistics
import struct
import subprocess
import sys
import time

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

SLOWEST_MIN_BYTES = 16_000  # as in examples/extract.rs

VARIANTS = {
    "full": lambda page: extract_plain_text(HTMLTree.parse(page), main_content=False, preserve_formatting=True),
    "main": lambda page: extract_plain_text(HTMLTree.parse(page), main_content=True),
    "parse": HTMLTree.parse,
}


def load(path):
    """The pages of a length-prefixed file, as str."""
    with open(path, "rb") as f:
        data = f.read()
    pages = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise ValueError(f"{path}: truncated length after page {len(pages)}")
        (size,) = struct.unpack_from("<I", data, at)
        at += 4
        if at + size > len(data):
            raise ValueError(f"{path}: page {len(pages)} is truncated")
        pages.append(data[at : at + size].decode("utf-8"))
        at += size
    return pages


def run_variant(pages, name):
    """Seconds for one pass of a variant over all pages, and its output bytes."""
    extract = VARIANTS[name]
    outputs = []
    # Texts are kept to be measured after the clock stops; trees are not, so
    # each is freed inside the timed loop, as after an extraction.
    append = outputs.append if name != "parse" else lambda tree: None
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for page in pages:
            append(extract(page))
        seconds = time.perf_counter() - start
    finally:
        gc.enable()
    if name == "parse":
        return seconds, None
    return seconds, sum(len(text.encode("utf-8")) for text in outputs)


def run_overlap(binary, path, slowest=0):
    """The `key value` lines the example prints, as a dict of numbers (a
    value that is not a number, such as the signatures' hex digest, is kept
    as its string)."""
    command = [binary, path] + (["--slowest", str(slowest)] if slowest else [])
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    result = {}
    for line in done.stdout.splitlines():
        key, value = line.split()
        try:
            result[key] = float(value)
        except ValueError:
            result[key] = value
    return result


def slowest_resiliparse(pages, n):
    """Prints the n pages of at least SLOWEST_MIN_BYTES that `full` extracts
    with the lowest throughput."""
    extract = VARIANTS["full"]
    sizes = [len(page.encode("utf-8")) for page in pages]
    times = []
    for i, page in enumerate(pages):
        if sizes[i] < SLOWEST_MIN_BYTES:
            continue
        start = time.perf_counter()
        extract(page)
        times.append((i, time.perf_counter() - start))
    times.sort(key=lambda it: sizes[it[0]] / max(it[1], 1e-9))
    print("slowest pages by Resiliparse `full` throughput (index bytes microseconds MB/s):", file=sys.stderr)
    for i, t in times[:n]:
        print(f"{i} {sizes[i]} {t * 1e6:.1f} {sizes[i] / 1e6 / t:.1f}", file=sys.stderr)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", metavar="PAGES.bin")
    parser.add_argument("--overlap", metavar="BINARY", help="overlap's examples/extract, built with --release")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--variants", default="full,main,parse", help="Resiliparse variants to time (default: full,main,parse)"
    )
    parser.add_argument("--slowest", type=int, default=0, metavar="N", help="list the N slowest pages per side")
    args = parser.parse_args(argv[1:])
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or args.rounds < 1:
        parser.error(f"unknown variant {unknown[0]}" if unknown else "--rounds must be positive")

    try:
        pages = load(args.pages)
    except (OSError, ValueError) as e:
        print(f"bench_extract: {e}", file=sys.stderr)
        return 2
    input_bytes = sum(len(page.encode("utf-8")) for page in pages)
    mb = input_bytes / 1e6
    print(f"{len(pages)} pages, {mb:.1f} MB of HTML; {args.rounds} interleaved rounds, one thread", file=sys.stderr)

    times = {}  # row -> seconds per round
    output = {}  # row -> output bytes (last round)
    for r in range(args.rounds):
        if args.overlap:
            o = run_overlap(args.overlap, args.pages)
            if int(o["pages"]) != len(pages) or int(o["input_bytes"]) != input_bytes:
                print("bench_extract: overlap read a different pages file", file=sys.stderr)
                return 1
            html, norm = o["html_to_text_seconds"], o["normalize_seconds"]
            times.setdefault("overlap html_to_text", []).append(html)
            times.setdefault("overlap html_to_text + normalize", []).append(html + norm)
            output["overlap html_to_text"] = int(o["text_bytes"])
            output["overlap html_to_text + normalize"] = int(o["normalized_bytes"])
            print(f"round {r + 1}: overlap {html:.2f} s + normalize {norm:.2f} s", file=sys.stderr)
        for name in variants:
            seconds, size = run_variant(pages, name)
            row = f"resiliparse {name}"
            times.setdefault(row, []).append(seconds)
            output[row] = size
            print(f"round {r + 1}: {row} {seconds:.2f} s", file=sys.stderr)

    median = {row: statistics.median(ts) for row, ts in times.items()}
    base = median.get("overlap html_to_text + normalize")
    print(f"pages {len(pages)}, input {mb:.1f} MB, median of {args.rounds} rounds, one thread")
    header = f"{'':36} {'seconds':>8} {'MB/s':>8} {'output bytes':>14}"
    if base:
        header += f" {'overlap / this':>15}"
    print(header)
    for row, seconds in median.items():
        size = output[row]
        line = f"{row:36} {seconds:8.3f} {mb / seconds:8.1f} {size if size is not None else '-':>14}"
        if base:
            line += f" {base / seconds:15.3f}"
        print(line)
    if base:
        print("overlap / this: overlap's html_to_text + normalize time over the row's time (lower: overlap faster)")

    if args.slowest:
        if args.overlap:
            run_overlap(args.overlap, args.pages, args.slowest)
        slowest_resiliparse(pages, args.slowest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
