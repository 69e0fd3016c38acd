#!/usr/bin/env python3
"""Build testdata/sample.arc.gz from the source texts in testdata/src/.

Usage: python3 scripts/make_arc_testdata.py [TESTDATA_DIR]

Writes (standard library only, same bytes every run):
  sample.arc.gz   a small crawl as an ARC v1 file with one gzip member per
                  record, as the Internet Archive's crawlers wrote them:
                    0  filedesc://   the version block (with XML metadata)
                    1  dns:          a DNS lookup
                    2  http://       200, text/plain (a license text)
                    3  http://       404
                    4  http://       200, text/html (a Rust documentation page)
                    5  http://       200, text/plain, the same bytes as 2 on
                                     a mirror, with a header line whose
                                     content type field has a space in it
                    6  ftp://        a plain text file, no HTTP header
                    7  http://       200, text/html, gzip content coding
                    8  http://       200, text/plain, chunked transfer coding
                  So it has six documents, in the order 2 4 5 6 7 8, of which
                  5 is an exact copy of 2. Record offsets are the offsets of
                  the gzip members.

Every record is `header-line LF content LF`, with the v1 header line
`URL IP-address Archive-date Content-type Archive-length`; the content of an
http:// record is the HTTP response, status line and header included.
"""

import gzip
import os
import sys
from datetime import datetime, timedelta, timezone

BASE_DATE = datetime(2024, 3, 1, 8, 0, 0, tzinfo=timezone.utc)


def arc_date(i):
    return (BASE_DATE + timedelta(seconds=17 * i)).strftime("%Y%m%d%H%M%S")


def http_date(i):
    return (BASE_DATE + timedelta(seconds=17 * i)).strftime("%a, %d %b %Y %H:%M:%S GMT")


def http_response(i, status, headers, body):
    head = ["HTTP/1.1 " + status, "Date: " + http_date(i), "Server: Apache/1.3.27 (Unix)"]
    head += [name + ": " + value for name, value in headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode("ascii") + body


def chunked(body, size=500):
    out = b""
    for at in range(0, len(body), size):
        piece = body[at:at + size]
        out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def record(url, ip, i, content_type, content):
    line = "%s %s %s %s %d\n" % (url, ip, arc_date(i), content_type, len(content))
    return line.encode("ascii") + content + b"\n"


def make(td):
    def src(rel):
        with open(os.path.join(td, "src", rel), "rb") as f:
            return f.read()

    bsd = src("common-licenses/BSD")
    std_swap = src("rust/1.95.0/std/mem/fn.swap.html")
    core_swap = src("rust/1.95.0/core/mem/fn.swap.html")
    bzip2 = src("doc/bzip2/copyright")
    fakeroot = src("doc/fakeroot/copyright")

    version_block = (
        b"1 0 overlap-testdata\n"
        b"URL IP-address Archive-date Content-type Archive-length\n"
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b"<arcmetadata><software>make_arc_testdata.py</software>"
        b"<operator>overlap tests</operator></arcmetadata>\n"
    )
    not_found = b"<html><body><h1>Not Found</h1></body></html>\n"
    records = [
        record("filedesc://sample.arc", "0.0.0.0", 0, "text/plain", version_block),
        record("dns:mirror-a.example.org", "192.0.2.53", 1, "text/dns",
               ("%s\nmirror-a.example.org.\t3600\tIN\tA\t192.0.2.10\n" % arc_date(1)).encode("ascii")),
        record("http://mirror-a.example.org/licenses/BSD", "192.0.2.10", 2, "text/plain",
               http_response(2, "200 OK", [("Content-Type", "text/plain"),
                                           ("Content-Length", str(len(bsd)))], bsd)),
        record("http://mirror-a.example.org/licenses/GPL-4", "192.0.2.10", 3, "text/html",
               http_response(3, "404 Not Found", [("Content-Type", "text/html"),
                                                  ("Content-Length", str(len(not_found)))], not_found)),
        record("https://doc.rust-lang.org/1.95.0/std/mem/fn.swap.html", "192.0.2.20", 4, "text/html",
               http_response(4, "200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                           ("Content-Length", str(len(std_swap)))], std_swap)),
        record("http://mirror-b.example.net/debian/licenses/BSD", "192.0.2.30", 5,
               "text/plain; charset=us-ascii",
               http_response(5, "200 OK", [("Content-Type", "text/plain; charset=us-ascii"),
                                           ("Content-Length", str(len(bsd)))], bsd)),
        record("ftp://ftp.example.org/pub/doc/bzip2/copyright", "192.0.2.40", 6, "text/plain", bzip2),
        record("https://doc.rust-lang.org/1.95.0/core/mem/fn.swap.html", "192.0.2.20", 7, "text/html",
               http_response(7, "200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                           ("Content-Encoding", "gzip")],
                             gzip.compress(core_swap, compresslevel=9, mtime=0))),
        record("http://mirror-a.example.org/doc/fakeroot/copyright", "192.0.2.10", 8, "text/plain",
               http_response(8, "200 OK", [("Content-Type", "text/plain; charset=utf-8"),
                                           ("Transfer-Encoding", "chunked")], chunked(fakeroot))),
    ]
    out = b"".join(gzip.compress(r, compresslevel=9, mtime=0) for r in records)
    path = os.path.join(td, "sample.arc.gz")
    with open(path, "wb") as f:
        f.write(out)
    print("wrote %s: %d records, %d bytes" % (path, len(records), len(out)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    td = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "testdata")
    make(os.path.normpath(td))


if __name__ == "__main__":
    main()
