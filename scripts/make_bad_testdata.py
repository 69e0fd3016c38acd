#!/usr/bin/env python3
"""Writes testdata/bad/: small WARC files, each damaged one way, and
manifest.json with what `overlap fingerprint` must count for each: the
documents, the skipped records by reason, and the corrupt records with
their offsets (known here by construction). Standard library only; the
same bytes every run.

    python3 scripts/make_bad_testdata.py [OUT_DIR]    (default testdata/bad)
"""

import gzip
import json
import os
import sys


def record(url, body, length=None, extra=b""):
    body = body if isinstance(body, bytes) else body.encode()
    n = len(body) if length is None else length
    head = (b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: " + url.encode() + b"\r\n" + extra
            + b"Content-Type: text/plain\r\nContent-Length: " + str(n).encode() + b"\r\n\r\n")
    return head + body + b"\r\n\r\n"


def gz(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


A = record("http://a.example/", "the first page\nwith two lines\n")
B = record("http://b.example/", "the second page\n")
C = record("http://c.example/", "the third page, long enough to be cut in the middle of its block\n")


def offsets(pieces):
    out, at = [], 0
    for p in pieces:
        out.append(at)
        at += len(p)
    return out


def arc_record(url, body, length=None):
    body = body if isinstance(body, bytes) else body.encode()
    n = len(body) if length is None else length
    return url.encode() + b" 192.0.2.7 20240301080000 text/plain " + str(n).encode() + b"\n" + body + b"\n"


def case(name, pieces, documents, bad=(), skipped=None, inputs_skipped=0, note="", whole_gzip=False):
    """`bad`: (piece index, reason) of the corrupt records, at the piece's offset
    (in the decompressed data for `whole_gzip`, which compresses the file as one
    member)."""
    at = offsets(pieces)
    skipped = dict(skipped or {})
    corrupt = []
    for index, reason in bad:
        skipped[reason] = skipped.get(reason, 0) + 1
        corrupt.append({"offset": at[index], "reason": reason})
    data = b"".join(pieces)
    return name, gz(data) if whole_gzip else data, {
        "note": note, "documents": documents, "skipped": skipped, "corrupt": corrupt,
        "inputs_skipped": inputs_skipped,
    }


def cases():
    cut = gz(C)
    flipped = bytearray(gz(C))
    for i in range(12, 20):
        flipped[i] ^= 0xA5
    huge = record("http://h.example/", "claims more than it has", length=99999999999)
    yield case("truncated-member.warc.gz", [gz(A), gz(B), cut[: len(cut) // 2]], 2,
               bad=[(2, "truncated_record")], note="the last gzip member is cut in half")
    yield case("corrupt-member.warc.gz", [gz(A), bytes(flipped), gz(B)], 2, bad=[(1, "corrupt_gzip")],
               note="the deflate data of the middle member is damaged")
    yield case("garbage-between.warc", [A, b"this line is not a record\r\n\x00\x01\x02 nor this\n", B], 2,
               bad=[(1, "garbage_between_records")], note="bytes between two records")
    yield case("no-colon.warc.gz", [gz(A), gz(record("http://x/", "x", extra=b"no colon on this line\r\n")), gz(B)],
               2, bad=[(1, "corrupt_header")], note="a header line without a colon")
    yield case("negative-length.warc", [A, record("http://n/", "minus", length=-5), B], 2,
               bad=[(1, "corrupt_header")], note="Content-Length: -5")
    yield case("huge-length.warc.gz", [gz(A), gz(huge), gz(B)], 2, bad=[(1, "corrupt_header")],
               note="a Content-Length far past its gzip member")
    yield case("huge-length-last.warc", [A, huge], 1, bad=[(1, "truncated_record")],
               note="a Content-Length far past the end of the file")
    long_b = record("http://b.example/", "the second page\n", length=len("the second page\n") + 50)
    yield case("long-length.warc", [A, long_b, C], 2, bad=[(1, "corrupt_header")],
               note="a Content-Length 50 bytes too long, into the next record's header")
    yield case("huge-length-middle.warc", [A, huge, B], 2, bad=[(1, "corrupt_header")],
               note="a Content-Length far past the end of the file, records after it")
    yield case("huge-length-middle-whole.warc.gz", [A, huge, B], 2, bad=[(1, "corrupt_header")],
               whole_gzip=True, note="the same in one gzip member for the whole file")
    arc_a = arc_record("http://a.example/", "the first page\n")
    arc_b = arc_record("http://b.example/", "the second page\n")
    arc_long = arc_record("http://l.example/", "claims more\n", length=len("claims more\n") + 30)
    arc_huge = arc_record("http://h.example/", "claims far more\n", length=1000000000)
    yield case("long-length.arc", [arc_a, arc_long, arc_b], 2, bad=[(1, "corrupt_header")],
               note="an ARC length 30 bytes too long, into the next header line")
    yield case("huge-length-middle.arc", [arc_a, arc_huge, arc_b], 2, bad=[(1, "corrupt_header")],
               note="an ARC length far past the end of the file, records after it")
    yield case("cut-at-eof.warc", [A, B, C[: len(C) - 30]], 2, bad=[(2, "truncated_record")],
               note="the last record is cut off")
    bad_utf8 = record("http://u.example/\xff\xfe".encode("latin-1").decode("latin-1"), "page\n",
                      extra=b"X-Bad-\xff: \xfe\xfd\r\n")
    yield case("invalid-utf8-headers.warc", [A, bad_utf8.replace(b"\xc3\xbf\xc3\xbe", b"\xff\xfe"), B], 3,
               note="header bytes that are not UTF-8: the record is still read")
    yield case("bad-http.warc", [A, record("http://h/", "HTTP/1.1 200 OK\r\nbroken header\r\n\r\nbody")
                                 .replace(b"resource", b"response").replace(b"text/plain", b"application/http"), B],
               2, bad=[(1, "corrupt_header")], note="an HTTP header line without a colon")
    yield case("empty.warc.gz", [b""], 0, inputs_skipped=1, note="an empty file")
    yield case("only-gzip-header.warc.gz", [gz(b"")], 0, inputs_skipped=1,
               note="a gzip member with nothing in it")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "testdata", "bad")
    os.makedirs(out, exist_ok=True)
    manifest = {}
    for name, data, expect in cases():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        manifest[name] = expect
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
