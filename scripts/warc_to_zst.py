#!/usr/bin/env python3
"""Rewrites a WARC file as .warc.zst, the way Wget-AT writes one.

Usage: warc_to_zst.py IN.warc[.gz] OUT.warc.zst [--level L] [--dict-records N]
                      [--dict-size BYTES] [--no-dict]

The records of IN (plain, per-record gzip or whole-file gzip) are found at
their `WARC/` version lines; a dictionary is trained on the first N
records (default 2000) and stored zstd-compressed in the dictionary frame
(skippable frame 0x184D2A5D) at the start of OUT; then every record is
one zstd frame of its own, with its content size, checksum and the
dictionary's ID, as the WARC-zstd specification asks. Used to make
.warc.zst inputs for the benchmarks (scripts/bench_zstd.sh); needs the
`zstandard` package (python3 -m pip install zstandard).
"""

import argparse
import gzip
import re
import struct
import sys

try:
    import zstandard
except ImportError:
    sys.exit("warc_to_zst: needs the zstandard package: python3 -m pip install zstandard")

RECORD_START = re.compile(rb"(?:^|(?<=\n))WARC/1\.[01]\r?\n")


def records(data):
    """The records of an uncompressed WARC, each from its version line to
    the next one (Content-Length decides where a block ends, so a version
    line inside a block is skipped over)."""
    pos = 0
    while True:
        m = RECORD_START.search(data, pos)
        if not m:
            return
        start = m.start()
        head_end = data.find(b"\r\n\r\n", start)
        if head_end < 0:
            yield data[start:]
            return
        length = re.search(rb"(?im)^content-length:\s*(\d+)", data[start:head_end])
        end = head_end + 4 + (int(length.group(1)) if length else 0)
        # The record's end: CRLF CRLF after the block.
        while end < len(data) and data[end : end + 1] in (b"\r", b"\n"):
            end += 1
        yield data[start:end]
        pos = max(end, start + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--level", type=int, default=3)
    ap.add_argument("--dict-records", type=int, default=2000)
    ap.add_argument("--dict-size", type=int, default=112640)
    ap.add_argument("--no-dict", action="store_true")
    args = ap.parse_args()

    with open(args.input, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    # GzipFile reads member after member as a stream; gzip.decompress
    # copies what is left of the input after each member, which made a
    # 100 MB per-record gzip WARC (28,000 members) take over an hour.
    with (gzip.open if gzipped else open)(args.input, "rb") as f:
        data = f.read()
    recs = list(records(data))
    if not recs:
        sys.exit(f"warc_to_zst: no WARC record in {args.input}")

    with open(args.output, "wb") as out:
        if args.no_dict:
            cctx = zstandard.ZstdCompressor(level=args.level, write_checksum=True, write_content_size=True)
        else:
            dict_data = zstandard.train_dictionary(args.dict_size, recs[: args.dict_records])
            stored = zstandard.ZstdCompressor(level=19, write_checksum=True).compress(dict_data.as_bytes())
            out.write(struct.pack("<II", 0x184D2A5D, len(stored)))
            out.write(stored)
            cctx = zstandard.ZstdCompressor(
                level=args.level,
                dict_data=dict_data,
                write_checksum=True,
                write_content_size=True,
                write_dict_id=True,
            )
        for r in recs:
            out.write(cctx.compress(r))
    print(f"{args.output}: {len(recs)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
