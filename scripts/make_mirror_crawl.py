#!/usr/bin/env python3
"""Makes a crawl whose replication is known by construction, on real text,
and writes its ground truth beside it: the benchmark that chose overlap's
default chunking and criterion (docs/defaults.md), scored by
scripts/score_mirrors.py.

    scripts/make_mirror_crawl.py [--next DIR] [--subtree PATH ...]
                                 [--partial PATH] [--limit N] MANUAL OUT_DIR

MANUAL is a directory of HTML pages, a manual (the Rust documentation of a
toolchain, say: rustup's share/doc/rust/html); --subtree keeps only the
pages under those paths of it (repeatable; default every .html file). Its
pages are published, each as served (the HTML bytes as they are), by:

  docs.example.org/stable/PATH     the original site: kind `original`
  www.docs.example.org/stable/PATH the same bytes under the www. name:
                                   `alias-www`, every 4th page
  https://docs.example.org/...     the same bytes over https: `alias-https`,
                                   every 4th page, another quarter
  mirror-a.example.net/rust/PATH   full mirrors, each page wrapped in a
  mirror-b.example.com/docs/PATH   header and a footer that the mirror
  docs.mirror-c.example.org/PATH   injects after <body> and before </body>:
                                   1+1 lines (a), 2+2 (b) and 3+3 (c, whose
                                   header names the page's original URL):
                                   `mirror-a`, `mirror-b`, `mirror-c`
  reference.example.info/PATH      a partial mirror of the subtree --partial
                                   (default: the directory with the most
                                   pages at the second level), with a footer
                                   of 2 lines of its own: `mirror-partial`
  docs.example.org/next/PATH       the manual's next version (--next: a
                                   directory with the same layout; the real
                                   pages of a later toolchain), for every
                                   PATH both have: `version`

OUT_DIR gets crawl.warc.gz (one gzip member per record, a WARC/1.1
response record for each page, HTTP/1.1 200 with text/html) and
truth.csv: `url,kind,page,original`, one row a page of the crawl, where
`original` is the URL of the original site's page that a copy copies
(empty for the originals) and `page` names the page of the manual: two
URLs are the same page exactly when their `page` is the same. A manual
documents some things at two paths (rustdoc's re-exports, such as
std/simd/type.u16x1.html and std/simd/prelude/type.u16x1.html; a book's
stubs for the chapters of its old editions): the same text,
so not a false match. `page` is the smallest PATH of each such set of
twins, found independently of overlap: two original pages are twins when
their visible lines (Python's html.parser, a line per block element,
whitespace collapsed; each page's own module path, the directories of
PATH joined by ::, masked) have a Jaccard similarity of at least 0.8. The crawl is
the same bytes for the same arguments: no clock, no randomness. The pages
are written site by site in the order above (the original first, so it
has the smallest docIDs and is the center of its exact copies).

--limit N keeps the first N pages of the manual (by path) and the next
version's pages of the same paths.
"""

import argparse
import gzip
import hashlib
import html.parser
import math
import os
import re
import sys
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_corpus as gc  # noqa: E402

ORIGIN = "http://docs.example.org/stable/"
BASE_DATE = datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)

# Banners as mirror sites inject them: (kind, URL prefix, header lines,
# footer lines). `{url}` is the page's original URL.
MIRRORS = [
    ("mirror-a", "http://mirror-a.example.net/rust/",
     ["This is a mirror of docs.example.org, updated daily."],
     ["Mirror hosted by the Example University Computing Service."]),
    ("mirror-b", "http://mirror-b.example.com/docs/",
     ["Example Mirror Network", "Fast downloads from a server near you"],
     ["Mirror status: synchronized every six hours", "Report a problem with this mirror"]),
    ("mirror-c", "http://docs.mirror-c.example.org/",
     ["You are viewing a copy of", "{url}", "Last synchronized with the original site this week"],
     ["All content belongs to its original authors.", "Mirrored by the Example Archive Project",
      "Privacy policy | Terms of use | Contact"]),
]
PARTIAL = ("mirror-partial", "http://reference.example.info/",
           [], ["Part of the Example Reference Collection", "This collection mirrors selected documentation"])


def pages_of(root, subtrees):
    """The manual's .html pages as paths relative to `root`, sorted."""
    found = []
    for sub in subtrees or [""]:
        top = os.path.join(root, sub)
        if os.path.isfile(top):
            found.append(sub)
            continue
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for f in files:
                if f.endswith(".html"):
                    found.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(set(p.replace(os.sep, "/") for p in found))


BLOCKS = {"p", "div", "li", "ul", "ol", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
          "section", "nav", "header", "footer", "main", "br", "dt", "dd", "summary", "details", "table",
          "title", "body", "article", "aside", "blockquote", "hr"}


class Lines(html.parser.HTMLParser):
    """A page's visible text, a line per block element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.cur, self.skip = [], [], 0

    def end(self):
        line = re.sub(r"\s+", " ", "".join(self.cur)).strip()
        if line:
            self.lines.append(line)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in BLOCKS:
            self.end()

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in BLOCKS:
            self.end()

    def handle_data(self, data):
        if not self.skip:
            self.cur.append(data)


def text_lines(body):
    p = Lines()
    p.feed(body.decode("utf-8", "replace"))
    p.close()
    p.end()
    return p.lines


TWIN_JACCARD = 0.8


def twins(paths, bodies):
    """The twin class of each path, named by its smallest path: pages
    whose visible lines, the page's own module path masked, have a Jaccard
    similarity of at least TWIN_JACCARD (std/simd/prelude/type.u16x1.html
    names itself std::simd::prelude, its twin std/simd/type.u16x1.html
    std::simd), classes closed transitively. Exact, by prefix filtering:
    two sets that reach J share one of the first |A| - ceil(J |A|) + 1 of
    each one's lines in order of rarity."""
    sets = []
    for p, body in zip(paths, bodies):
        module = "::".join(p.split("/")[:-1])
        lines = text_lines(body)
        sets.append(frozenset(line.replace(module, "\0") if module else line for line in lines))
    df = {}
    for s in sets:
        for line in s:
            df[line] = df.get(line, 0) + 1
    parent = list(range(len(paths)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index = {}
    for i, s in enumerate(sets):
        ordered = sorted(s, key=lambda line: (df[line], line))
        prefix = ordered[:len(ordered) - math.ceil(TWIN_JACCARD * len(ordered) - 1e-9) + 1]
        candidates = set()
        for line in prefix:
            candidates.update(index.get(line, ()))
            index.setdefault(line, []).append(i)
        for j in candidates:
            if len(s & sets[j]) >= TWIN_JACCARD * len(s | sets[j]) - 1e-9:
                ri, rj = find(i), find(j)
                parent[max(ri, rj)] = min(ri, rj)
    return {p: paths[find(i)] for i, p in enumerate(paths)}


def wrap(html, header, footer):
    """The page with the banner lines injected as mirror sites do: after
    the opening <body> tag and before </body>, each line a paragraph of its
    own (at the ends of the page when it has no body tags)."""
    top = "".join(f'<div class="mirror-banner"><p>{line}</p></div>\n' for line in header).encode()
    bottom = "".join(f'<div class="mirror-footer"><p>{line}</p></div>\n' for line in footer).encode()
    lower = html.lower()
    start = lower.find(b"<body")
    start = lower.find(b">", start) + 1 if start >= 0 else 0
    end = lower.rfind(b"</body>")
    if end < start:
        end = len(html)
    return html[:start] + b"\n" + top + html[start:end] + bottom + html[end:]


class Crawl:
    def __init__(self, path):
        self.f = open(path + ".part", "wb")
        self.path = path
        self.now = BASE_DATE
        self.rows = []

    def page(self, url, kind, page, original, body):
        self.now += timedelta(seconds=1)
        head = (f"HTTP/1.1 200 OK\r\nDate: {gc.http_date(self.now)}\r\nServer: example\r\n"
                f"Content-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        block = head + body
        rid = hashlib.sha1(url.encode()).hexdigest()
        fields = [
            ("WARC-Type", "response"),
            ("WARC-Record-ID", f"<urn:uuid:{rid[:8]}-{rid[8:12]}-{rid[12:16]}-{rid[16:20]}-{rid[20:32]}>"),
            ("WARC-Date", gc.warc_date(self.now)),
            ("WARC-Target-URI", url),
            ("Content-Type", "application/http; msgtype=response"),
            ("WARC-Block-Digest", "sha1:" + gc.sha1_b32(block)),
            ("WARC-Payload-Digest", "sha1:" + gc.sha1_b32(body)),
        ]
        # mtime=0: the same bytes for the same arguments.
        self.f.write(gzip.compress(gc.warc_record(fields, block), compresslevel=6, mtime=0))
        self.rows.append((url, kind, page, original))

    def close(self):
        self.f.close()
        os.replace(self.path + ".part", self.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manual")
    ap.add_argument("out")
    ap.add_argument("--next", help="the manual's next version, same layout")
    ap.add_argument("--subtree", action="append", default=[], help="keep pages under PATH (repeatable)")
    ap.add_argument("--partial", help="the subtree the partial mirror copies")
    ap.add_argument("--limit", type=int, help="the first N pages only")
    args = ap.parse_args()

    paths = pages_of(args.manual, args.subtree)
    if args.limit:
        paths = paths[:args.limit]
    if not paths:
        sys.exit(f"make_mirror_crawl: no .html pages under {args.manual}")
    partial = args.partial
    if partial is None:
        counts = {}
        for p in paths:
            parts = p.split("/")
            if len(parts) >= 3:
                key = "/".join(parts[:2]) + "/"
                counts[key] = counts.get(key, 0) + 1
        partial = max(sorted(counts), key=lambda k: counts[k]) if counts else paths[0]

    def read(root, p):
        with open(os.path.join(root, p), "rb") as f:
            return f.read()

    os.makedirs(args.out, exist_ok=True)
    page = twins(paths, [read(args.manual, p) for p in paths])
    crawl = Crawl(os.path.join(args.out, "crawl.warc.gz"))
    for p in paths:
        crawl.page(ORIGIN + p, "original", page[p], "", read(args.manual, p))
    for i, p in enumerate(paths):
        if i % 4 == 1:
            crawl.page("http://www.docs.example.org/stable/" + p, "alias-www", page[p], ORIGIN + p,
                       read(args.manual, p))
        if i % 4 == 3:
            crawl.page("https://docs.example.org/stable/" + p, "alias-https", page[p], ORIGIN + p,
                       read(args.manual, p))
    for kind, prefix, header, footer in MIRRORS:
        for p in paths:
            h = [line.replace("{url}", ORIGIN + p) for line in header]
            crawl.page(prefix + p, kind, page[p], ORIGIN + p, wrap(read(args.manual, p), h, footer))
    kind, prefix, header, footer = PARTIAL
    for p in paths:
        if p.startswith(partial):
            crawl.page(prefix + p, kind, page[p], ORIGIN + p, wrap(read(args.manual, p), header, footer))
    versions = 0
    if args.next:
        for p in paths:
            if os.path.isfile(os.path.join(args.next, p)):
                crawl.page("http://docs.example.org/next/" + p, "version", page[p], ORIGIN + p, read(args.next, p))
                versions += 1
    crawl.close()
    with open(os.path.join(args.out, "truth.csv"), "w", newline="") as f:
        f.write("url,kind,page,original\n")
        for row in crawl.rows:
            f.write(",".join(gc_csv(v) for v in row) + "\n")
    classes = len(set(page.values()))
    print(f"make_mirror_crawl: {len(crawl.rows)} pages ({len(paths)} originals in {classes} twin classes, "
          f"partial mirror of {partial}, {versions} of the next version) in {args.out}", file=sys.stderr)


def gc_csv(v):
    """One CSV field, quoted when it needs to be."""
    if any(c in v for c in ',"\n'):
        return '"' + v.replace('"', '""') + '"'
    return v


if __name__ == "__main__":
    main()
