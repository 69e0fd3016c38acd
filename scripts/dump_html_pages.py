#!/usr/bin/env python3
"""Dumps the HTML pages of WARC files to one file of length-prefixed records,
so that extractors in different languages can be timed on exactly the same
strings, loaded into memory with no parsing cost.

    scripts/dump_html_pages.py pages.bin crawl/*.warc.gz [--urls urls.txt]

A page is the body of a `response` record whose HTTP status is 200 and whose
Content-Type is text/html or application/xhtml+xml. The body is decoded as
a client saw it: warcio's `content_stream()` undoes chunked transfer
encoding and gzip or deflate content encoding (brotli too, when the brotli
module is installed; a body labelled compressed that is not is passed
through as it is). The bytes are then decoded as UTF-8 with errors='replace',
whatever charset the page declares, so that every record of the output is
valid UTF-8.

Output format: for each page, in input order, its UTF-8 byte length as a u32
little-endian, then the bytes. Nothing else (no header, no count). Read by
`examples/extract.rs` and `scripts/bench_extract.py`.

With `--plain`, the pages are the `text/plain` responses instead (Debian's
changelogs and copyright files in the documentation crawl), for
`examples/extract.rs --plain`, which times the passes that plain text goes
through (normalization and the fuzzy signature) without HTML conversion.

With `--urls FILE`, also writes each page's target URI to FILE, one a line,
in the same order, so that a page index printed by a benchmark can be looked
up. Prints the page count, the total page bytes and the records skipped, by
reason, to stderr. Needs warcio (pip install warcio).
"""

import argparse
import collections
import struct
import sys

from warcio.archiveiterator import ArchiveIterator

HTML = {"text/html", "application/xhtml+xml"}
MAX_PAGE = 0xFFFFFFFF


def media_type(value):
    return (value or "").split(";")[0].strip().lower()


def pages(path, skipped, types=HTML):
    """The (target URI, decoded page) of each page of one WARC file whose
    media type is one of `types`."""
    with open(path, "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type != "response":
                continue
            http = record.http_headers
            if http is None:
                skipped["response without HTTP headers"] += 1
                continue
            if http.get_statuscode() != "200":
                skipped["status " + str(http.get_statuscode())] += 1
                continue
            if media_type(http.get_header("Content-Type")) not in types:
                skipped["not " + "/".join(sorted(types))] += 1
                continue
            try:
                body = record.content_stream().read()
            except Exception as e:  # a damaged chunked or compressed body
                skipped["undecodable body: " + type(e).__name__] += 1
                continue
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            yield uri, body.decode("utf-8", errors="replace")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", metavar="OUT.bin", help="the pages file to write")
    parser.add_argument("warcs", metavar="WARC", nargs="+", help="WARC files, gzipped or not")
    parser.add_argument("--plain", action="store_true", help="dump the text/plain pages, not the HTML ones")
    parser.add_argument("--urls", metavar="FILE", help="also write each page's URL to FILE, one a line")
    args = parser.parse_args(argv[1:])
    count = 0
    total = 0
    skipped = collections.Counter()
    urls = open(args.urls, "w", encoding="utf-8") if args.urls else None
    try:
        with open(args.out, "wb") as out:
            for path in args.warcs:
                for uri, page in pages(path, skipped, {"text/plain"} if args.plain else HTML):
                    data = page.encode("utf-8")
                    if len(data) > MAX_PAGE:
                        skipped["longer than 4 GiB"] += 1
                        continue
                    out.write(struct.pack("<I", len(data)))
                    out.write(data)
                    if urls:
                        urls.write(uri.replace("\n", " ") + "\n")
                    count += 1
                    total += len(data)
    finally:
        if urls:
            urls.close()
    print(f"{count} pages, {total} bytes ({total / 1e6:.1f} MB) written to {args.out}", file=sys.stderr)
    for reason, n in sorted(skipped.items()):
        print(f"skipped {n}: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
