#!/usr/bin/env python3
"""Build testdata/report/crawl.jsonl and crawl.warc.gz: a small crawl with
known replication, for checking `overlap report` against its construction.

Usage: python3 scripts/make_report_testdata.py [OUT_DIR]

The WARC holds the same documents as HTML pages (one <p> per line, so the
text is the same) with titles: the manual's chapters are titled alike on
every host, the two cart pages share a title on one host, and the misc
pages are all "Untitled"; the empty page has no title.

Standard library only; the same bytes every run. Run the tool on it with
`--chunk lines:4 -T 3`: every page is whole blocks of four lines, so each
block is one chunk.

docID  URL                                              text
0-5    http://docs.example.org/manual/chN.html          manual chapters M1..M6 (40 lines each)
6-11   http://mirror.example.net/manual/chN.html        M1..M6 again: exact copies (a mirror host)
12-17  http://old.example.com/manual-v1/chN.html        an older manual: M1..M6 with 2 lines edited
                                                        each (8 of 10 chunks shared: near-replicas)
18     http://example.com/about                         A
19     http://www.example.com/about                     A            (www. alias, exact)
20     http://shop.example.com/cart                     B
21     https://shop.example.com/cart                    B            (scheme alias, exact)
22     http://blog.example.com/posts/                   C
23     http://blog.example.com/posts/index.html         C            (index-page alias, exact)
24     http://news.example.com/story?id=1               D1
25     http://news.example.com/story?id=2               D2           (query alias, different)
26     http://news.example.com/article?page=1&utm_source=feed   E' = E with one block changed
27     http://news.example.com/article?page=1           E            (query alias, near)
28-31  http://chain.example.org/x, /y, /z, /w           X~Y~Z~W: each shares 3 blocks with the next
                                                        only (a chain: X and W share nothing)
32-34  http://misc.example.org/u1, /u2, /u3             unique pages
35     http://misc.example.org/empty                    empty text
"""

import gzip
import html
import json
import os
import random
import sys

SYLLABLES = ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "qui", "dan", "pe", "zu", "or", "im", "bra", "fel", "nox"]


def line(rng):
    words = []
    for _ in range(rng.randint(6, 9)):
        words.append("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return " ".join(words)


def block(rng):
    """Four lines: one chunk under --chunk lines:4."""
    return [line(rng) for _ in range(4)]


def page(rng, blocks):
    return [l for _ in range(blocks) for l in block(rng)]


def title_of(url):
    """The page title the WARC gives each URL."""
    if "/manual" in url:
        return "Manual: chapter " + url.rsplit("ch", 1)[1].split(".")[0]
    if "/cart" in url:
        return "Your cart"
    if "misc.example.org/u" in url:
        return "Untitled"
    if url.endswith("/empty"):
        return None
    return url.split("://", 1)[1]


def warc_record(n, url, lines):
    title = title_of(url)
    head = f"<title>{html.escape(title)}</title>" if title else ""
    body = "".join(f"<p>{html.escape(l)}</p>\n" for l in lines)
    page = f"<!DOCTYPE html>\n<html><head>{head}</head><body>\n{body}</body></html>\n".encode()
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n" + f"Content-Length: {len(page)}\r\n\r\n".encode() + page
    header = (
        "WARC/1.1\r\nWARC-Type: response\r\n"
        f"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{n:012d}>\r\n"
        "WARC-Date: 2024-01-01T00:00:00Z\r\n"
        f"WARC-Target-URI: {url}\r\n"
        "Content-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(http)}\r\n\r\n"
    ).encode()
    return gzip.compress(header + http + b"\r\n\r\n", mtime=0)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "testdata/report"
    out = os.path.join(out_dir, "crawl.jsonl")
    rng = random.Random(5)
    docs = []
    manual = [page(rng, 10) for _ in range(6)]
    for n, text in enumerate(manual, 1):
        docs.append((f"http://docs.example.org/manual/ch{n}.html", text))
    for n, text in enumerate(manual, 1):
        docs.append((f"http://mirror.example.net/manual/ch{n}.html", text))
    for n, text in enumerate(manual, 1):
        old = list(text)
        for i in (5, 29):  # one line in the second block, one in the eighth
            old[i] = line(rng)
        docs.append((f"http://old.example.com/manual-v1/ch{n}.html", old))
    a, b, c = page(rng, 3), page(rng, 3), page(rng, 3)
    docs += [
        ("http://example.com/about", a),
        ("http://www.example.com/about", a),
        ("http://shop.example.com/cart", b),
        ("https://shop.example.com/cart", b),
        ("http://blog.example.com/posts/", c),
        ("http://blog.example.com/posts/index.html", c),
        ("http://news.example.com/story?id=1", page(rng, 5)),
        ("http://news.example.com/story?id=2", page(rng, 5)),
    ]
    e = page(rng, 6)
    e_edited = e[:20] + block(rng)
    docs += [
        ("http://news.example.com/article?page=1&utm_source=feed", e_edited),
        ("http://news.example.com/article?page=1", e),
    ]
    p, q, r, s = (page(rng, 3) for _ in range(4))
    pre = page(rng, 3)
    docs += [
        ("http://chain.example.org/x", pre + p),
        ("http://chain.example.org/y", p + q),
        ("http://chain.example.org/z", q + r),
        ("http://chain.example.org/w", r + s),
    ]
    for n in range(1, 4):
        docs.append((f"http://misc.example.org/u{n}", page(rng, 4)))
    docs.append(("http://misc.example.org/empty", []))
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for url, lines in docs:
            f.write(json.dumps({"url": url, "text": "\n".join(lines)}, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "crawl.warc.gz"), "wb") as f:
        for n, (url, lines) in enumerate(docs):
            f.write(warc_record(n, url, lines))


if __name__ == "__main__":
    main()
