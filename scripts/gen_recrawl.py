#!/usr/bin/env python3
"""Generate a recrawl of a synthetic crawl: the same sites fetched again
later, with some pages changed, as per-record gzip WARC/1.1 files.

Usage:
  python3 scripts/gen_recrawl.py --crawl DIR_OR_FILES... --out DIR [--files N]
                                 [--change 0.10] [--redirects 0.01]
                                 [--revisits 0.3] [--not-modified 0.05] [--moves 0]
                                 [--after DAYS] [--seed N] [--words FILE]
                                 [--stats FILE] [--urls FILE] [--level N]
                                 [--jobs N] [-q]

The previous crawl is one made by gen_crawl.py or gen_corpus.py (any WARC
files with one record per gzip member do): --crawl takes directories (their
*.warc.gz files, in name order) and files, in crawl order. Its pages are
its `response` records with HTTP status 200 and a text content type
(text/html, text/plain, application/xhtml+xml), one per URL (a URL fetched
twice keeps its first capture; the later ones are left out of the
recrawl). A URL keeps its identity across the two crawls, and each page
becomes one of:

- changed, a share --change of the pages (default 0.10), of which a share
  --redirects of all pages (default 0.01) becomes a redirect (HTTP 301 to
  a moved URL or to the site's home page), and the rest is split evenly
  between
    - modified: the same URL with a few lines of text edited, added or
      removed (gen_corpus.py's near-replica edit), a later Last-Modified,
      a new payload digest;
    - lost: the URL answers with an error, 404 mostly, 410 or 500 one time
      in ten each;
    - orphaned: the URL is not fetched again (no record at all);
    - new: as many new pages as orphaned ones, so that the crawl keeps its
      size: new URLs on the hosts of the crawl, each written after a page
      of its host with that page's template (head, navigation, footer) and
      a new title and body made by gen_corpus.py's page builder;
  (with --change 0.10: 1% redirected, 2.25% each of modified, lost,
  orphaned and new); a share --moves (default 0) of the redirects to a
  moved URL have that URL fetched too, right after the redirect, serving
  the page: half of them its payload as it was, half edited as a modified
  page is (the pages overlap's changes.csv calls `moved`; class `moved` in
  the stats and in --urls, whose line for each is `moved`, the new URL and
  the old one, tab-separated, and `moved_edited` counting the edited ones);
- unchanged, every other page, the same payload fetched again, as
    - a `revisit` record, a share --revisits of them (default 0.3): profile
      identical-payload-digest, WARC-Refers-To-Target-URI, -Date and
      WARC-Refers-To naming the earlier capture, the same
      WARC-Payload-Digest, and as block the new HTTP header (status 200)
      with no body;
    - a response `HTTP/1.1 304 Not Modified` with no body, a share
      --not-modified (default 0.05), its request conditional
      (If-Modified-Since);
    - the rest a full response: the same HTTP header (its Date updated)
      and the same body bytes, so the same WARC-Payload-Digest.

The crawl's other fetches come back as they were (a 404 is a 404 again, a
301 the same redirect, and so are any revisit or 304 records of the
input): they are no page in either crawl, so no change, and no URL is
`returned`.

Records keep the previous crawl's order, each fetch a request and its
response, with the metadata records that followed them; the dates move
on by the previous crawl's span plus --after days (default 30), so every
date of the recrawl is later than every date of the crawl. Every record
gets a new WARC-Record-ID, WARC-Date, Content-Length and SHA-1 block and
payload digests in gen_corpus.py's `sha1:BASE32` form. The recrawl is
written as --files N files (recrawl-00000.warc.gz ... in --out, default 1)
of about equal size, each beginning with a `warcinfo` record.

The input is read twice, record by record, in bounded memory (what is kept
is a few hundred bytes per page: its URL, place and class): once to list
the pages, then to write the recrawl. One process makes about 11 MiB/s
of compressed input, most of it spent compressing at the default --level
6 (--level 1: about 15 MiB/s, the output 10% larger); with --jobs N the
input files are scanned, and the output written in pieces of 32 MiB of
input, by N processes (2 make about 21 MiB/s). The output depends
only on the crawl, --seed, --files, the shares, --after, --words and
--level, not on --jobs.

The ground truth (URLs per class: unchanged_response, unchanged_revisit,
unchanged_304, modified, lost, orphaned, redirected, new; the records and
statuses written) is printed to stderr at the end and written as JSON to
--stats, last, so its presence means the recrawl is complete; --urls
writes each URL's class (TSV: class, URL). overlap's changes.csv should
count as `unchanged` the three unchanged_* classes added up.

Only the Python standard library is used.
"""

import argparse
import bisect
import hashlib
import math
import multiprocessing
import os
import random
import sys
import time
import uuid
import zlib
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_corpus as gc  # noqa: E402

SCRIPT_VERSION = "1"

TEXT_TYPES = ("text/html", "text/plain", "application/xhtml+xml")
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
# Shares of the lost pages answering 410 and 500 (the rest 404).
LOST_410 = 0.1
LOST_500 = 0.1
# Share of the redirects that go to the site's home page (the rest to a
# moved URL, not fetched).
REDIRECT_HOME = 0.5
# Classes, in the order of the summary.
CLASSES = ("unchanged_response", "unchanged_revisit", "unchanged_304", "modified", "lost",
           "orphaned", "redirected", "new", "moved", "moved_edited")
EMPTY_DIGEST = "sha1:" + gc.sha1_b32(b"")

GONE_BODY = ("<!DOCTYPE html>\n<html><head><title>410 Gone</title></head>\n<body>\n"
             "<h1>Gone</h1>\n<p>The requested resource is no longer available on this server "
             "and there is no forwarding address.</p>\n</body></html>\n")
ERROR_BODY = ("<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n<body>\n"
              "<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was "
              "unable to complete your request.</p>\n</body></html>\n")
REASONS = {404: "Not Found", 410: "Gone", 500: "Internal Server Error"}

# Input bytes read at once.
READ_BLOCK = 4 << 20
# Input bytes of a piece of the output, made by one process (in memory).
CHUNK = 32 << 20


# ------------------------------------------------------------ arguments


def share(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a share between 0 and 1")
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Generate a recrawl of a synthetic crawl (gen_crawl.py, gen_corpus.py) "
                    "as per-record gzip WARC files, with the ground truth of what changed.")
    p.add_argument("--crawl", required=True, nargs="+",
                   help="the previous crawl: directories (their *.warc.gz files) or files, in order")
    p.add_argument("--out", required=True, help="output directory (files recrawl-00000.warc.gz, ...)")
    p.add_argument("--files", type=int, default=1, help="number of output files (default 1)")
    p.add_argument("--change", type=share, default=0.10,
                   help="share of the pages changed: redirected, modified, lost, orphaned, and as "
                        "many new pages as orphaned ones (default 0.10)")
    p.add_argument("--redirects", type=share, default=0.01,
                   help="share of the pages that become redirects, part of --change (so at most "
                        "--change; default 0.01)")
    p.add_argument("--revisits", type=share, default=0.3,
                   help="share of the unchanged pages written as revisit records (default 0.3)")
    p.add_argument("--not-modified", type=share, default=0.05,
                   help="share of the unchanged pages written as HTTP 304 responses (default 0.05)")
    p.add_argument("--moves", type=share, default=0.0,
                   help="share of the redirects to a moved URL whose new URL is fetched too, serving "
                        "the page (half of them edited); default 0")
    p.add_argument("--after", type=float, default=30.0,
                   help="days between the end of the crawl and the start of the recrawl (default 30)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--words", help="vocabulary file for the new text, one word per line, most "
                   "frequent first (default: gen_corpus.py's built-in word generator)")
    p.add_argument("--stats", help="write the ground-truth summary as JSON to this file")
    p.add_argument("--urls", help="write each URL's class to this file (TSV: class, URL)")
    p.add_argument("--level", type=int, default=6, choices=range(1, 10), metavar="1-9",
                   help="gzip level of the output (default 6, as gen_corpus.py; 1 is about a third "
                        "faster and 10%% larger)")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes scanning the input files and writing the output "
                        "(output is the same for any value; default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    if args.files < 1:
        p.error("--files must be at least 1")
    if args.revisits + args.not_modified > 1.0:
        p.error("--revisits and --not-modified add up to more than 1")
    # The redirects are part of the changed pages.
    args.redirects = min(args.redirects, args.change)
    if args.after < 0:
        p.error("--after must not be negative")
    args.jobs = max(1, args.jobs)
    return args


def input_files(specs):
    files = []
    for spec in specs:
        if os.path.isdir(spec):
            names = sorted(n for n in os.listdir(spec) if n.endswith(".warc.gz"))
            if not names:
                sys.exit(f"gen_recrawl: {spec}: no .warc.gz files")
            files += [os.path.join(spec, n) for n in names]
        elif os.path.isfile(spec):
            files.append(spec)
        else:
            sys.exit(f"gen_recrawl: {spec}: no such file or directory")
    return files


# ------------------------------------------------------------ reading


def members(path, start=0, end=None):
    """(offset, decompressed bytes) of each gzip member of `path` that
    starts in [start, end)."""
    with open(path, "rb") as f:
        f.seek(start)
        buf, pos, base = b"", 0, start
        while True:
            if end is not None and base + pos >= end:
                return
            if len(buf) - pos < (1 << 20):
                more = f.read(READ_BLOCK)
                buf, base, pos = buf[pos:] + more, base + pos, 0
                if not buf:
                    return
            here = pos
            d = zlib.decompressobj(31)
            out = []
            step = 4096
            while True:
                if pos >= len(buf):
                    more = f.read(READ_BLOCK)
                    if not more:
                        raise ValueError(f"{path}: gzip member at offset {base + here} is truncated")
                    buf, base, here, pos = buf[pos:] + more, base + pos, here - pos, 0
                chunk = memoryview(buf)[pos:pos + step]
                try:
                    out.append(d.decompress(chunk))
                except zlib.error as e:
                    raise ValueError(f"{path}: bad gzip member at offset {base + here}: {e}")
                if d.eof:
                    pos += len(chunk) - len(d.unused_data)
                    break
                pos += len(chunk)
                step = min(step * 4, 1 << 20)
            yield base + here, b"".join(out)


def decode(b):
    return b.decode("utf-8", "surrogateescape")


def encode(s):
    return s.encode("utf-8", "surrogateescape")


class Record:
    __slots__ = ("fields", "block", "type", "uri", "key")

    def get(self, name):
        name = name.lower()
        for n, v in self.fields:
            if n.lower() == name:
                return v
        return None


def records(data, where):
    """The WARC records in one decompressed member (one, in a per-record
    gzip file)."""
    pos = 0
    n = len(data)
    k = 0
    while pos < n:
        while data.startswith(b"\r\n", pos):
            pos += 2
        if pos >= n:
            return
        hend = data.find(b"\r\n\r\n", pos)
        if hend < 0 or not data.startswith(b"WARC/", pos):
            raise ValueError(f"{where}: not a WARC record")
        lines = decode(data[pos:hend]).split("\r\n")
        r = Record()
        fields = []
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip(), value.strip()
            if name.lower() == "content-length":
                length = int(value)
            else:
                fields.append((name, value))
        if length is None:
            raise ValueError(f"{where}: WARC record without Content-Length")
        r.fields = fields
        r.block = data[hend + 4:hend + 4 + length]
        r.type = (r.get("WARC-Type") or "").lower()
        r.uri = (r.get("WARC-Target-URI") or "").strip("<>")
        r.key = k
        pos = hend + 4 + length
        k += 1
        yield r


def split_http(block):
    """(status, header lines without the final blank line, payload) of an
    HTTP response block; status None if it is not one."""
    end = block.find(b"\r\n\r\n")
    if not block.startswith(b"HTTP/") or end < 0:
        return None, None, None
    lines = decode(block[:end]).split("\r\n")
    parts = lines[0].split(None, 2)
    try:
        status = int(parts[1])
    except (IndexError, ValueError):
        return None, None, None
    return status, lines, block[end + 4:]


def header_value(lines, name):
    name = name.lower()
    for line in lines[1:]:
        n, _, v = line.partition(":")
        if n.strip().lower() == name:
            return v.strip()
    return None


def page_kind(r):
    """None if the record is no page; "html" or "text" for a 200 response
    with a text content type (and "raw" for one whose payload is encoded,
    which is left as it is); with the HTTP parts."""
    if r.type != "response":
        return None, None, None
    status, lines, payload = split_http(r.block)
    if status != 200:
        return None, None, None
    ctype = (header_value(lines, "Content-Type") or "").split(";")[0].strip().lower()
    if ctype not in TEXT_TYPES:
        return None, None, None
    if header_value(lines, "Content-Encoding") or header_value(lines, "Transfer-Encoding"):
        return "raw", lines, payload
    return ("text" if ctype == "text/plain" else "html"), lines, payload


def parse_warc_date(s):
    s = s.strip()
    if len(s) == 20 and s[4] == "-" and s[10] == "T" and s[19] == "Z":
        try:
            return datetime(int(s[0:4]), int(s[5:7]), int(s[8:10]), int(s[11:13]), int(s[14:16]),
                            int(s[17:19]), tzinfo=timezone.utc)
        except ValueError:
            pass
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return datetime.strptime(s, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return None


# ------------------------------------------------------------ pass 1: the pages


def scan(job):
    """The pages, other URLs, fetch boundaries and dates of one input file."""
    fi, path = job
    pages = []  # (offset, record in member, url, kind)
    others = []  # URLs of the other records
    cuts = []  # offsets where a fetch begins (a range of the output may start there)
    first = last = None
    records_n = 0
    prev_request = None
    for off, data in members(path):
        for r in records(data, f"{path} at offset {off}"):
            records_n += 1
            d = r.get("WARC-Date")
            if d:
                when = parse_warc_date(d)
                if when:
                    if first is None or when < first:
                        first = when
                    if last is None or when > last:
                        last = when
            t = r.type
            if r.key == 0:
                paired = t in ("response", "revisit") and prev_request == r.uri
                if t != "metadata" and not paired:
                    cuts.append(off)
            prev_request = r.uri if t == "request" else None
            kind = page_kind(r)[0]
            if kind:
                pages.append((off, r.key, r.uri, kind))
            elif r.uri and t in ("response", "revisit", "resource"):
                others.append(r.uri)
    return {"pages": pages, "others": others, "cuts": cuts, "first": first, "last": last,
            "records": records_n, "size": os.path.getsize(path)}


# ------------------------------------------------------------ decisions


def stable_int(*parts):
    h = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big")


def stable_random(*parts):
    return random.Random(stable_int(*parts))


def split_url(url):
    i = url.find("://")
    j = url.find("/", i + 3) if i >= 0 else -1
    if i < 0:
        return "", url, "/"
    if j < 0:
        return url[:i], url[i + 3:], "/"
    return url[:i], url[i + 3:j], url[j:]


def decide(pages, args, rng):
    """Class of every page, as {page index: action}, and the planned counts."""
    n = len(pages)
    changed = round(args.change * n)
    redirected = min(changed, round(args.redirects * n))
    rest = changed - redirected
    orphaned = rest // 4
    modified = lost = orphaned
    left = rest - 4 * orphaned
    modified += (left + 1) // 2
    lost += left // 2
    new = orphaned
    order = list(range(n))
    rng.shuffle(order)
    # Pages whose payload is encoded cannot be edited: they are given the
    # other classes.
    editable = [i for i in order if pages[i][3] != "raw"]
    modified = min(modified, len(editable))
    mod_set = set(editable[:modified])
    rest_order = [i for i in order if i not in mod_set]
    actions = {}
    plan = dict.fromkeys(CLASSES, 0)
    plan["modified"] = modified
    pos = 0
    for i in rest_order[pos:pos + redirected]:
        scheme, host, path = split_url(pages[i][2])
        if rng.random() < REDIRECT_HOME or path == "/":
            loc = f"{scheme}://{host}/"
            if loc == pages[i][2]:
                loc = f"{scheme}://{host}/index.html"
        else:
            loc = f"{scheme}://{host}/archive{path}"
            # Drawn apart from rng, so that --moves 0 makes the same crawl.
            if args.moves > 0 and stable_random(args.seed, "move", i).random() < args.moves:
                edited = pages[i][3] != "raw" and stable_random(args.seed, "move-edit", i).random() < 0.5
                actions[i] = ("D", loc, "edited" if edited else "same")
                plan["moved"] += 1
                plan["moved_edited"] += int(edited)
                continue
        actions[i] = ("D", loc)
    plan["redirected"] = redirected
    pos += redirected
    for i in rest_order[pos:pos + lost]:
        x = rng.random()
        actions[i] = ("L", 410 if x < LOST_410 else 500 if x < LOST_410 + LOST_500 else 404)
    plan["lost"] = lost
    pos += lost
    for i in rest_order[pos:pos + orphaned]:
        actions[i] = ("O",)
    plan["orphaned"] = orphaned
    pos += orphaned
    for i in mod_set:
        actions[i] = ("M",)
    unchanged = rest_order[pos:]
    revisits = round(args.revisits * len(unchanged))
    not_modified = round(args.not_modified * len(unchanged))
    for i in unchanged[:revisits]:
        actions[i] = ("V",)
    for i in unchanged[revisits:revisits + not_modified]:
        actions[i] = ("N",)
    plan["unchanged_revisit"] = revisits
    plan["unchanged_304"] = not_modified
    plan["unchanged_response"] = len(unchanged) - revisits - not_modified
    plan["new"] = new
    return actions, plan


def slug(title):
    return "-".join(title.lower().split()[:5])


def new_pages(pages, actions, count, args, rng, text, known):
    """`count` new pages, each (anchor page index, URL, title, number):
    a new URL on the host of an HTML page still fetched, after which it is
    written, in the style of that page's URL."""
    anchors = [i for i in range(len(pages)) if pages[i][3] == "html"
               and actions.get(i, ("R",))[0] in ("R", "V", "N", "M")]
    if count > len(anchors):
        count = len(anchors)
    picks = sorted(rng.sample(anchors, count))
    out = []
    saved = text.rng
    try:
        for j, i in enumerate(picks):
            text.rng = stable_random(args.seed, "new", j)
            title = text.title()
            scheme, host, path = split_url(pages[i][2])
            path = path.split("?", 1)[0].split("#", 1)[0]
            trailing = path.endswith("/") and path != "/"
            stem = path.rstrip("/")
            folder = stem[:stem.rfind("/") + 1] or "/"
            if trailing and folder == "/":
                folder = stem + "/" if stem else "/"
            if stem.endswith(".php"):
                base = f"{scheme}://{host}{stem}?id={100000 + stable_int(args.seed, 'id', j) % 900000}"
                make = lambda k, base=base: base + (f"{k}" if k else "")
            else:
                s = slug(title) or f"page-{j}"
                tail = "/" if trailing else ".html"
                make = lambda k, s=s, tail=tail, folder=folder: (
                    f"{scheme}://{host}{folder}{s}{'-' + str(k) if k else ''}{tail}")
            k = 1
            url = make(0)
            while url in known:
                k += 1
                url = make(k)
            known.add(url)
            out.append((i, url, title, j))
    finally:
        text.rng = saved
    return out


def output_chunks(files, scans, n):
    """The pieces of the output, in order: (output file, first piece of its
    file, [(input file index, start, end)]). Output file k begins at the
    first fetch at or after k/n of the input bytes; within a file, a piece
    begins at the first fetch after each CHUNK bytes of input (the pieces
    are written in parallel and put end to end: gzip members concatenate).
    The cuts depend on the input and n only."""
    total = sum(s["size"] for s in scans)
    bounds = []  # global positions of the possible cuts, and (file index, offset)
    places = []
    base = 0
    for fi, s in enumerate(scans):
        for off in s["cuts"]:
            bounds.append(base + off)
            places.append((fi, off))
        base += s["size"]
    end_place = (len(files), 0)

    def cut(target):
        b = bisect.bisect_left(bounds, target)
        return (bounds[b], places[b]) if b < len(bounds) else (total, end_place)

    file_starts = [(0, (0, 0))] + [cut(total * k / n) for k in range(1, n)] + [(total, end_place)]
    pieces = []
    for k in range(n):
        (ga, pa), (gb, pb) = file_starts[k], file_starts[k + 1]
        starts = [(ga, pa)]
        t = ga + CHUNK
        while t < gb:
            g, p = cut(t)
            if g >= gb:
                break
            if g > starts[-1][0]:
                starts.append((g, p))
            t = max(t + CHUNK, g + 1)
        starts.append((gb, pb))
        for m in range(len(starts) - 1):
            (fa, oa), (fb, ob) = starts[m][1], starts[m + 1][1]
            segs = []
            if (fa, oa) < (fb, ob):
                for fi in range(fa, min(fb, len(files) - 1) + 1):
                    s0 = oa if fi == fa else 0
                    e0 = ob if fi == fb else None
                    if e0 is None or s0 < e0:
                        segs.append((fi, s0, e0))
            pieces.append((k, m == 0, segs))
    return pieces


# ------------------------------------------------------------ pass 2: writing

# Set before the writing processes are forked.
STATE = None


class PageRandom:
    """What gen_corpus.py's body_lines and edit_body need of a plan."""

    def __init__(self, rng, text):
        self.rng = rng
        self.text = text


class Shape:
    """What gen_corpus.py's body_lines needs of a template, read off a page."""

    def __init__(self, cms, wrap_source, date_style=0):
        self.cms = cms
        self.wrap_source = wrap_source
        self.date_style = date_style


ENTRY = '<div class="entry-content">\n'


def body_span(html):
    """Where a gen_corpus.py page's body lines are: (start, end), or None."""
    s = html.find(ENTRY)
    if s < 0:
        return None
    s += len(ENTRY)
    art = html.find("</article>", s)
    if art < 0:
        return None
    e = html.rfind("\n</div>\n", s, art)
    if e < 0:
        return None
    return s, e


def source_lines(body):
    """A page body as gen_corpus.py's body lines: a paragraph broken over
    several source lines is one."""
    out = []
    open_p = False
    for ln in body.split("\n"):
        if open_p:
            out[-1] += "\n" + ln
        else:
            out.append(ln)
        if ln.startswith("<p>") and not open_p:
            open_p = "</p>" not in ln
        elif open_p and "</p>" in ln:
            open_p = False
    return out


def edit_html(html, rng, text):
    """The page with a few lines of text edited, added or removed."""
    span = body_span(html)
    saved, text.rng = text.rng, rng
    try:
        if span is None:
            extra = f"<p><em>Update:</em> {text.sentence()}</p>\n"
            i = html.rfind("</body>")
            return html[:i] + extra + html[i:] if i >= 0 else html + extra
        s, e = span
        lines = source_lines(html[s:e])
        try:
            new = gc.edit_body(PageRandom(rng, text), lines)
        except ValueError:
            new = lines
        if new == lines:
            new = lines + [f"<p><em>Update:</em> {text.sentence()}</p>"]
        return html[:s] + "\n".join(new) + html[e:]
    finally:
        text.rng = saved


def edit_plain(payload, rng, text):
    saved, text.rng = text.rng, rng
    try:
        return payload.rstrip(b"\n") + b"\n\n" + encode(gc.html_escape(text.paragraph())) + b"\n"
    finally:
        text.rng = saved


def replace_between(html, start, end, new, begin=0):
    s = html.find(start, begin)
    if s < 0:
        return html, -1
    s += len(start)
    e = html.find(end, s)
    if e < 0:
        return html, -1
    return html[:s] + new + html[e:], s


def new_html(anchor, title, number, when, rng, text):
    """A new page with the template of `anchor` (a page of its host):
    a new title, date, post number and body."""
    saved, text.rng = text.rng, rng
    try:
        span = body_span(anchor)
        if span is None:
            lines = gc.body_lines(PageRandom(rng, text), 5500, Shape("plain", False))
            return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + title
                    + "</title>\n</head>\n<body>\n<h1>" + title + "</h1>\n" + "\n".join(lines)
                    + "\n</body>\n</html>\n")
        s, e = span
        old = anchor[s:e]
        wp = "<!-- wp:" in old or "/wp-content/" in anchor
        wrap = any(ln.startswith("<p>") and not ln.endswith("</p>") for ln in old.split("\n"))
        target = min(30000, max(1500, int(rng.lognormvariate(math.log(5500), 0.8))))
        lines = gc.body_lines(PageRandom(rng, text), target, Shape("wordpress" if wp else "plain", wrap))
        html = anchor[:s] + "\n".join(lines) + anchor[e:]
        t0 = html.find("<title>")
        if t0 >= 0:
            t1 = html.find("</title>", t0)
            old_title = html[t0 + 7:t1]
            bar = old_title.rfind(" | ")
            html = html[:t0 + 7] + title + (old_title[bar:] if bar >= 0 else "") + html[t1:]
        html, at = replace_between(html, '<h1 class="entry-title">', "</h1>", title)
        if at >= 0:
            # The date line after the title, in the site's style, dated
            # between the crawl and the recrawl.
            d0 = html.find("</h1>\n", at) + 6
            d1 = html.find("\n</header>", d0)
            old_line = html[d0:d1] if d1 >= 0 else ""
            style = (0 if old_line.startswith('<p class="date">') else
                     1 if old_line.startswith('<div class="entry-meta">') else
                     2 if old_line.startswith('<div class="meta">') else None)
            if style is not None:
                html = html[:d0] + gc.Template.date_line(Shape("plain", False, style), when) + html[d1:]
        a = html.find('<article id="post-')
        if a >= 0:
            q = html.find('"', a + 18)
            old_id = html[a + 18:q]
            html = (html[:a] + f'<article id="post-{number}"'
                    + html[q + 1:].replace(f"post-{old_id} ", f"post-{number} ", 1))
        return html
    finally:
        text.rng = saved


def record_id(*parts):
    return f"<urn:uuid:{uuid.UUID(bytes=hashlib.blake2b(':'.join(map(str, parts)).encode(), digest_size=16).digest(), version=4)}>"


def warc_record(fields, block):
    head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + \
        f"Content-Length: {len(block)}\r\n\r\n"
    return encode(head) + block + b"\r\n\r\n"


def set_header(lines, name, value, add=True):
    """The HTTP header lines with `name` set to `value` (added before the
    end if missing and `add`)."""
    low = name.lower()
    out = []
    done = False
    for k, line in enumerate(lines):
        if k and line.partition(":")[0].strip().lower() == low:
            if not done:
                out.append(f"{name}: {value}")
                done = True
            continue
        out.append(line)
    if not done and add:
        out.append(f"{name}: {value}")
    return out


def http_block(lines, payload=b""):
    return encode("\r\n".join(lines) + "\r\n\r\n") + payload


class Output:
    """A piece of an output file: records compressed one gzip member each,
    kept in memory."""

    def __init__(self, level):
        self.level = level
        self.out = []
        self.compressed = 0
        self.uncompressed = 0
        self.records = 0
        self.record_types = {}
        self.statuses = {}

    def add(self, rtype, data, status=None):
        c = zlib.compressobj(self.level, zlib.DEFLATED, 31)
        m = c.compress(data) + c.flush()
        self.out.append(m)
        self.compressed += len(m)
        self.uncompressed += len(data)
        self.records += 1
        self.record_types[rtype] = self.record_types.get(rtype, 0) + 1
        if status is not None:
            self.statuses[status] = self.statuses.get(status, 0) + 1


def file_name(index):
    return f"recrawl-{index:05d}.warc.gz"


def write_piece(number):
    """Piece `number` of the output (see output_chunks): its bytes and
    counts."""
    st = STATE
    args = st["args"]
    seed = args.seed
    files = st["files"]
    shift = st["shift"]
    actions = st["actions"]
    inserts = st["inserts"]
    text = st["text"]
    index, first_piece, segments = st["pieces"][number]
    name = file_name(index)
    out = Output(args.level)
    classes = dict.fromkeys(CLASSES, 0)
    lost_statuses = {}
    other = {}  # other responses fetched again, by status
    dropped = {"duplicate_captures": 0}
    info_id = record_id(seed, "warcinfo", index)
    # Only the first piece of a file begins with the warcinfo record.
    state = {"info": not first_piece, "last_date": None}

    def warcinfo(when):
        body = ("software: gen_recrawl.py/" + SCRIPT_VERSION + " (synthetic recrawl)\r\n"
                "format: WARC File Format 1.1\r\n"
                "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
                "robots: obey\r\n"
                f"http-header-user-agent: {gc.USER_AGENT}\r\n"
                "isPartOf: synthetic-recrawl\r\n"
                "description: Synthetic recrawl of a synthetic web crawl, for benchmarking "
                "change detection\r\n").encode()
        out.add("warcinfo", warc_record([
            ("WARC-Type", "warcinfo"), ("WARC-Date", gc.warc_date(when)),
            ("WARC-Filename", name), ("WARC-Record-ID", info_id),
            ("Content-Type", "application/warc-fields")], body))
        state["info"] = True

    def new_date(r):
        d = r.get("WARC-Date")
        when = parse_warc_date(d) if d else None
        when = (when + shift) if when else (state["last_date"] or st["start"])
        if not state["info"]:
            warcinfo(when)
        state["last_date"] = when
        return when

    def fields_of(r, rid, wdate, block, concurrent=None):
        """The record's fields with a new ID, date and block digest."""
        out_fields = []
        for n, v in r.fields:
            low = n.lower()
            if low == "warc-record-id":
                v = rid
            elif low == "warc-date":
                v = wdate
            elif low == "warc-block-digest":
                v = "sha1:" + gc.sha1_b32(block)
            elif low == "warc-concurrent-to":
                if concurrent is None:
                    continue
                v = concurrent
            elif low == "warc-warcinfo-id":
                v = info_id
            out_fields.append((n, v))
        if r.get("WARC-Block-Digest") is None:
            out_fields.append(("WARC-Block-Digest", "sha1:" + gc.sha1_b32(block)))
        return out_fields

    def request_record(req, key, url, when, resp_id, conditional=None):
        if req is None:
            return
        block = req.block
        if conditional:
            status_end = block.find(b"\r\n\r\n")
            if status_end >= 0:
                block = block[:status_end] + encode(f"\r\nIf-Modified-Since: {conditional}") + block[status_end:]
        rid = record_id(seed, "request", *key)
        out.add("request", warc_record(fields_of(req, rid, gc.warc_date(when), block, resp_id), block))

    def response(fields, block, status):
        out.add(fields[0][1], warc_record(fields, block), status)

    def resp_fields(rtype, rid, when, url, ip, block, pdigest):
        f = [("WARC-Type", rtype), ("WARC-Record-ID", rid), ("WARC-Date", gc.warc_date(when)),
             ("WARC-Target-URI", url)]
        if ip:
            f.append(("WARC-IP-Address", ip))
        f.append(("WARC-Block-Digest", "sha1:" + gc.sha1_b32(block)))
        if pdigest:
            f.append(("WARC-Payload-Digest", pdigest))
        f.append(("Content-Type", "application/http; msgtype=response"))
        return f

    def write_new(anchor, anchor_lines, anchor_when, ip, new):
        url, title, j = new
        rng = stable_random(seed, "new-page", j)
        number = 100000 + stable_int(seed, "post", j) % 900000
        when = anchor_when
        # Published since the previous crawl.
        modified = when - timedelta(seconds=int(shift.total_seconds() * rng.random()))
        html = encode(new_html(decode(anchor), title, number, modified, rng, text))
        _, hostname, target = split_url(url)
        req = (f"GET {target} HTTP/1.1\r\nHost: {hostname}\r\nUser-Agent: {gc.USER_AGENT}\r\n"
               "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
               "Accept-Language: en-US,en;q=0.5\r\nConnection: close\r\n\r\n").encode()
        rid = record_id(seed, "new-response", j)
        out.add("request", warc_record([
            ("WARC-Type", "request"), ("WARC-Record-ID", record_id(seed, "new-request", j)),
            ("WARC-Date", gc.warc_date(when)), ("WARC-Target-URI", url), ("WARC-Concurrent-To", rid),
            ("WARC-Block-Digest", "sha1:" + gc.sha1_b32(req)),
            ("Content-Type", "application/http; msgtype=request")], req))
        server = header_value(anchor_lines, "Server") or "Apache"
        head = ["HTTP/1.1 200 OK", f"Date: {gc.http_date(when)}", f"Server: {server}",
                f"Last-Modified: {gc.http_date(modified)}", "Content-Type: text/html; charset=utf-8",
                f"Content-Length: {len(html)}", "Connection: close"]
        block = http_block(head, html)
        response(resp_fields("response", rid, when, url, ip, block, "sha1:" + gc.sha1_b32(html)), block, 200)
        classes["new"] += 1

    held = None  # a request waiting for its response
    pending = []  # new pages to write after the current fetch's metadata
    concurrent = {}  # old response ID -> new ID (None if dropped), of the current fetch
    started = time.monotonic()

    def flush_pending():
        for p in pending:
            write_new(*p)
        pending.clear()

    def copy(r, key):
        """A record other than a page's, fetched or written again."""
        when = new_date(r)
        rid = record_id(seed, "record", *key)
        block = r.block
        status = None
        if r.type in ("response", "revisit"):
            status, lines, payload = split_http(block)
            if status is not None:
                lines = set_header(lines, "Date", gc.http_date(when), add=False)
                block = http_block(lines, payload)
                if r.type == "response":
                    other[status] = other.get(status, 0) + 1
        conc = None
        old_conc = (r.get("WARC-Concurrent-To") or "").strip()
        if old_conc and concurrent.get(old_conc):
            conc = concurrent[old_conc]
        out.add(r.type or "unknown", warc_record(fields_of(r, rid, gc.warc_date(when), block, conc), block), status)
        if r.type in ("response", "revisit", "resource"):
            old_id = r.get("WARC-Record-ID")
            if old_id:
                concurrent[old_id] = rid
        return rid

    def page(r, key, kind, lines, payload, req):
        """A page of the crawl, fetched again."""
        action = actions.get(key, ("R",))
        code = action[0]
        old_id = r.get("WARC-Record-ID")
        if code in ("O", "X"):
            if code == "X":
                dropped["duplicate_captures"] += 1
            else:
                classes["orphaned"] += 1
            if old_id:
                concurrent[old_id] = None
            return
        old_when = parse_warc_date(r.get("WARC-Date") or "")
        when = new_date(r)
        wdate = gc.warc_date(when)
        url = r.uri
        ip = r.get("WARC-IP-Address")
        rid = record_id(seed, "response", *key)
        if old_id:
            concurrent[old_id] = rid
        pdigest = r.get("WARC-Payload-Digest") or ("sha1:" + gc.sha1_b32(payload))
        server = header_value(lines, "Server") or "Apache"
        _, hostname, _ = split_url(url)
        if code == "N":
            request_record(req, key, url, when, rid, header_value(lines, "Last-Modified"))
        else:
            request_record(req, key, url, when, rid)
        if code == "R":
            block = http_block(set_header(lines, "Date", gc.http_date(when), add=False), payload)
            response(fields_of(r, rid, wdate, block), block, 200)
            classes["unchanged_response"] += 1
        elif code == "V":
            block = http_block(set_header(lines, "Date", gc.http_date(when), add=False))
            f = [("WARC-Type", "revisit"), ("WARC-Record-ID", rid), ("WARC-Date", wdate),
                 ("WARC-Target-URI", url)]
            if ip:
                f.append(("WARC-IP-Address", ip))
            f.append(("WARC-Profile", REVISIT_PROFILE))
            if old_id:
                f.append(("WARC-Refers-To", old_id))
            f += [("WARC-Refers-To-Target-URI", url), ("WARC-Refers-To-Date", r.get("WARC-Date")),
                  ("WARC-Block-Digest", "sha1:" + gc.sha1_b32(block)), ("WARC-Payload-Digest", pdigest),
                  ("Content-Type", "application/http; msgtype=response")]
            response(f, block, 200)
            classes["unchanged_revisit"] += 1
        elif code == "N":
            head = ["HTTP/1.1 304 Not Modified", f"Date: {gc.http_date(when)}", f"Server: {server}"]
            etag = header_value(lines, "ETag")
            if etag:
                head.append(f"ETag: {etag}")
            head.append("Connection: close")
            block = http_block(head)
            response(resp_fields("response", rid, when, url, ip, block, EMPTY_DIGEST), block, 304)
            classes["unchanged_304"] += 1
        elif code == "M":
            rng = stable_random(seed, "edit", *key)
            if kind == "html":
                new = encode(edit_html(decode(payload), rng, text))
            else:
                new = edit_plain(payload, rng, text)
            before = old_when or (when - shift)
            modified = before + (when - before) * rng.uniform(0.05, 0.95)
            head = set_header(lines, "Date", gc.http_date(when), add=False)
            head = set_header(head, "Last-Modified", gc.http_date(modified))
            head = set_header(head, "Content-Length", str(len(new)))
            block = http_block(head, new)
            response(resp_fields("response", rid, when, url, ip, block, "sha1:" + gc.sha1_b32(new)), block, 200)
            classes["modified"] += 1
        elif code == "L":
            status = action[1]
            if status == 404:
                body = gc.NOT_FOUND_BODY.format(server=server.split()[0], host=hostname,
                                                port=443 if url.startswith("https") else 80)
                ctype = "text/html; charset=iso-8859-1"
            else:
                body = GONE_BODY if status == 410 else ERROR_BODY
                ctype = "text/html; charset=utf-8"
            body = encode(body)
            head = [f"HTTP/1.1 {status} {REASONS[status]}", f"Date: {gc.http_date(when)}", f"Server: {server}",
                    f"Content-Type: {ctype}", f"Content-Length: {len(body)}", "Connection: close"]
            block = http_block(head, body)
            response(resp_fields("response", rid, when, url, ip, block, "sha1:" + gc.sha1_b32(body)), block, status)
            classes["lost"] += 1
            lost_statuses[status] = lost_statuses.get(status, 0) + 1
        elif code == "D":
            loc = action[1]
            body = encode(gc.MOVED_BODY.format(loc=loc))
            head = ["HTTP/1.1 301 Moved Permanently", f"Date: {gc.http_date(when)}", f"Server: {server}",
                    f"Location: {loc}", "Content-Type: text/html; charset=utf-8",
                    f"Content-Length: {len(body)}", "Connection: close"]
            block = http_block(head, body)
            response(resp_fields("response", rid, when, url, ip, block, "sha1:" + gc.sha1_b32(body)), block, 301)
            classes["redirected"] += 1
            if len(action) > 2:
                # The page at its new URL.
                moved = payload
                if action[2] == "edited":
                    rng = stable_random(seed, "move-text", *key)
                    moved = encode(edit_html(decode(payload), rng, text)) if kind == "html" else \
                        edit_plain(payload, rng, text)
                _, mhost, mtarget = split_url(loc)
                mrid = record_id(seed, "moved-response", *key)
                mreq = (f"GET {mtarget} HTTP/1.1\r\nHost: {mhost}\r\nUser-Agent: {gc.USER_AGENT}\r\n"
                        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
                        "Connection: close\r\n\r\n").encode()
                out.add("request", warc_record([
                    ("WARC-Type", "request"), ("WARC-Record-ID", record_id(seed, "moved-request", *key)),
                    ("WARC-Date", wdate), ("WARC-Target-URI", loc), ("WARC-Concurrent-To", mrid),
                    ("WARC-Block-Digest", "sha1:" + gc.sha1_b32(mreq)),
                    ("Content-Type", "application/http; msgtype=request")], mreq))
                mhead = set_header(lines, "Date", gc.http_date(when), add=False)
                mhead = set_header(mhead, "Content-Length", str(len(moved)))
                mblock = http_block(mhead, moved)
                response(resp_fields("response", mrid, when, loc, ip, mblock, "sha1:" + gc.sha1_b32(moved)),
                         mblock, 200)
                classes["moved"] += 1
                classes["moved_edited"] += int(action[2] == "edited")
        for new in inserts.get(key, ()):
            pending.append((payload, lines, when, ip, new))

    def handle(r, key, req_pair):
        """One record, with the request held before it if it is its pair."""
        req, req_key = req_pair if req_pair else (None, None)
        kind, lines, payload = page_kind(r)
        if kind:
            page(r, key, kind, lines, payload, req)
            return
        if req is not None:
            # The request of a fetch that is no page: written as it was.
            when = new_date(req)
            rid = record_id(seed, "record", *key)
            request_record(req, req_key, req.uri, when, rid)
            r_id = copy(r, key)
            assert r_id == rid
            return
        copy(r, key)

    for fi, start, end in segments:
        path = files[fi]
        for off, data in members(path, start, end):
            for r in records(data, f"{path} at offset {off}"):
                key = (fi, off, r.key)
                t = r.type
                if t == "warcinfo":
                    continue
                if t == "metadata":
                    conc = (r.get("WARC-Concurrent-To") or "").strip()
                    if conc in concurrent and concurrent[conc] is None:
                        continue  # the metadata of a page no longer fetched
                    handle(r, key, None)
                    continue
                # A new fetch: the new pages after the last one first.
                if pending:
                    flush_pending()
                if held is not None:
                    hr, hkey = held
                    held = None
                    if t in ("response", "revisit") and r.uri == hr.uri:
                        concurrent.clear()
                        handle(r, key, (hr, hkey))
                        continue
                    # A request without its response.
                    when = new_date(hr)
                    out.add("request", warc_record(
                        fields_of(hr, record_id(seed, "request", *hkey), gc.warc_date(when), hr.block), hr.block))
                if t == "request":
                    held = (r, key)
                    continue
                concurrent.clear()
                handle(r, key, None)
    if held is not None:
        hr, hkey = held
        when = new_date(hr)
        out.add("request", warc_record(
            fields_of(hr, record_id(seed, "request", *hkey), gc.warc_date(when), hr.block), hr.block))
    flush_pending()
    if not state["info"]:
        warcinfo(st["start"])
    return {"index": index, "data": b"".join(out.out), "compressed": out.compressed,
            "uncompressed": out.uncompressed,
            "records": out.records, "record_types": out.record_types, "statuses": out.statuses,
            "classes": classes, "lost_statuses": lost_statuses, "other": other, "dropped": dropped,
            "input": sum(((e if e is not None else os.path.getsize(files[fi])) - s)
                         for fi, s, e in segments),
            "seconds": time.monotonic() - started}


# ------------------------------------------------------------ main


def merge(dst, src):
    for k, v in src.items():
        dst[k] = dst.get(k, 0) + v


def main(argv):
    global STATE
    args = parse_args(argv)
    started = time.monotonic()
    files = input_files(args.crawl)
    os.makedirs(args.out, exist_ok=True)
    in_bytes = sum(os.path.getsize(f) for f in files)

    def say(msg):
        if not args.quiet:
            print("gen_recrawl: " + msg, file=sys.stderr, flush=True)

    # Pass 1: the pages.
    jobs = [(fi, path) for fi, path in enumerate(files)]
    ctx = multiprocessing.get_context("fork")
    if args.jobs > 1 and len(files) > 1:
        with ctx.Pool(min(args.jobs, len(files))) as pool:
            scans = pool.map(scan, jobs)
    else:
        scans = [scan(j) for j in jobs]
    t_scan = time.monotonic() - started
    say(f"read {len(files)} files, {in_bytes / 2**20:.1f} MiB, in {t_scan:.1f} s "
        f"({in_bytes / 2**20 / max(t_scan, 1e-9):.1f} MiB/s)")

    pages = []  # (file index, offset, record, url, kind)
    seen = {}
    duplicates = []
    known = set()
    first = last = None
    for fi, s in enumerate(scans):
        for off, k, url, kind in s["pages"]:
            known.add(url)
            if url in seen:
                duplicates.append((fi, off, k))
                continue
            seen[url] = len(pages)
            pages.append((fi, off, k, url, kind))
        known.update(s["others"])
        if s["first"] and (first is None or s["first"] < first):
            first = s["first"]
        if s["last"] and (last is None or s["last"] > last):
            last = s["last"]
        s["pages"] = s["others"] = None
    del seen
    if not pages:
        sys.exit("gen_recrawl: the crawl has no pages (200 responses with a text content type)")
    first = first or gc.BASE_DATE
    last = last or first
    span = last - first
    shift = span + timedelta(days=args.after) + timedelta(seconds=1)
    shift = timedelta(seconds=math.ceil(shift.total_seconds()))

    # Decisions.
    rng = random.Random(args.seed)
    page_tuples = [(None, None, p[3], p[4]) for p in pages]  # what decide and new_pages read: url, kind
    actions_by_index, plan = decide(page_tuples, args, rng)
    text = None
    if plan["modified"] or plan["new"] or plan["moved_edited"]:
        trng = random.Random(args.seed * 7919 + 17)
        vocab = gc.file_vocabulary(args.words) if args.words else gc.builtin_vocabulary(trng, 50_000)
        text = gc.Text(trng, vocab)
    news = new_pages(page_tuples, actions_by_index, plan["new"], args, rng, text, known) if plan["new"] else []
    plan["new"] = len(news)
    del known
    actions = {}
    for i, a in actions_by_index.items():
        fi, off, k = pages[i][:3]
        actions[(fi, off, k)] = a
    for key in duplicates:
        actions[key] = ("X",)
    inserts = {}
    for i, url, title, j in news:
        fi, off, k = pages[i][:3]
        inserts.setdefault((fi, off, k), []).append((url, title, j))

    if args.urls:
        with open(args.urls + ".part", "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("class\turl\n")
            names = {"R": "unchanged_response", "V": "unchanged_revisit", "N": "unchanged_304",
                     "M": "modified", "L": "lost", "O": "orphaned", "D": "redirected"}
            for i, p in enumerate(pages):
                action = actions_by_index.get(i, ('R',))
                f.write(f"{names[action[0]]}\t{p[3]}\n")
                if len(action) > 2:
                    f.write(f"moved\t{action[1]}\t{p[3]}\n")
            for _, url, _, _ in news:
                f.write(f"new\t{url}\n")
        os.replace(args.urls + ".part", args.urls)
    page_count = len(pages)
    del pages, page_tuples, actions_by_index

    pieces = output_chunks(files, scans, args.files)
    STATE = {"args": args, "files": files, "shift": shift, "actions": actions, "inserts": inserts,
             "text": text, "pieces": pieces, "start": first + shift}

    # Pass 2: the recrawl, piece by piece, each file's pieces put end to end.
    t2 = time.monotonic()
    results = [{"index": k, "name": file_name(k), "compressed": 0, "uncompressed": 0, "records": 0,
                "record_types": {}, "statuses": {}, "classes": {}, "lost_statuses": {}, "other": {},
                "dropped": {}} for k in range(args.files)]
    pool = ctx.Pool(args.jobs) if args.jobs > 1 and len(pieces) > 1 else None
    made = pool.imap(write_piece, range(len(pieces))) if pool else map(write_piece, range(len(pieces)))
    f = None
    done_in = 0
    for res in made:
        k = res["index"]
        path = os.path.join(args.out, file_name(k))
        if f is None or f.name != path + ".part":
            if f is not None:
                f.close()
                os.replace(f.name, f.name[:-5])
            f = open(path + ".part", "wb")
        f.write(res.pop("data"))
        r = results[k]
        for name in ("compressed", "uncompressed", "records"):
            r[name] += res[name]
        for name in ("record_types", "statuses", "classes", "lost_statuses", "other", "dropped"):
            merge(r[name], res[name])
        done_in += res["input"]
        if not args.quiet:
            el = time.monotonic() - started
            print(f"gen_recrawl: {done_in / 2**20:8.1f} of {in_bytes / 2**20:.1f} MiB read, "
                  f"file {k + 1}/{args.files}, {el:.0f} s, {done_in / 2**20 / max(el, 1e-9):.1f} MiB/s\r",
                  end="", file=sys.stderr, flush=True)
    if f is not None:
        f.close()
        os.replace(f.name, f.name[:-5])
    if pool:
        pool.close()
        pool.join()
    if not args.quiet:
        print(file=sys.stderr)
    elapsed = time.monotonic() - started
    t_write = time.monotonic() - t2

    classes = dict.fromkeys(CLASSES, 0)
    lost_statuses, other, record_types, statuses, dropped = {}, {}, {}, {}, {}
    for r in results:
        merge(classes, r["classes"])
        merge(lost_statuses, r["lost_statuses"])
        merge(other, r["other"])
        merge(record_types, r["record_types"])
        merge(statuses, r["statuses"])
        merge(dropped, r["dropped"])
    if classes != plan:
        print(f"gen_recrawl: warning: written {classes} differ from planned {plan}", file=sys.stderr)
    out_bytes = sum(r["compressed"] for r in results)
    unchanged = classes["unchanged_response"] + classes["unchanged_revisit"] + classes["unchanged_304"]
    summary = {
        "generator": "gen_recrawl.py",
        "generator_version": SCRIPT_VERSION,
        "seed": args.seed,
        "previous_crawl": [os.path.basename(f) for f in files],
        "previous_compressed_bytes": in_bytes,
        "previous_pages": page_count,
        "previous_first_date": gc.warc_date(first),
        "previous_last_date": gc.warc_date(last),
        "shares": {"change": args.change, "redirects": args.redirects, "revisits": args.revisits,
                   "not_modified": args.not_modified, "moves": args.moves},
        "date_shift_seconds": int(shift.total_seconds()),
        "files": [{"name": r["name"], "compressed_bytes": r["compressed"],
                   "uncompressed_bytes": r["uncompressed"], "records": r["records"]} for r in results],
        "compressed_bytes": out_bytes,
        "uncompressed_bytes": sum(r["uncompressed"] for r in results),
        "records": sum(r["records"] for r in results),
        "record_types": record_types,
        "http_statuses": {str(k): v for k, v in sorted(statuses.items())},
        # What became of each URL with a page in either crawl (the rows of
        # overlap's changes.csv): unchanged is the three unchanged_* added up.
        "classes": classes,
        "unchanged": unchanged,
        "returned": 0,
        "lost_statuses": {str(k): v for k, v in sorted(lost_statuses.items())},
        "pages_now": unchanged + classes["modified"] + classes["new"],
        # Fetches that were no page before and are none now (no change).
        "other_responses": {str(k): v for k, v in sorted(other.items())},
        "duplicate_captures_dropped": dropped.get("duplicate_captures", 0),
        "seconds": round(elapsed, 1),
        "seconds_reading": round(t_scan, 1),
        "seconds_writing": round(t_write, 1),
        "input_mib_per_second": round(in_bytes / 2**20 / max(elapsed, 1e-9), 1),
        "jobs": args.jobs,
    }
    gc.write_summary(summary, args.stats)


if __name__ == "__main__":
    main(sys.argv[1:])
