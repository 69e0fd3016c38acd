#!/usr/bin/env python3
"""Build the test inputs under testdata/ from the source texts in testdata/src/.

Usage: python3 scripts/make_testdata.py [TESTDATA_DIR]

testdata/src/ holds real, redistributable texts, copied once with their
relative names:
  common-licenses/NAME        Debian's license texts (plain text)
  doc/PACKAGE/copyright       Debian package copyright files (plain text)
  rust/VERSION/PATH.html      pages of the Rust documentation (HTML)

From them this script writes (standard library only, same bytes every run):
  sample.warc.gz          a crawl as a per-record gzip WARC/1.1: a warcinfo
                          record, a request + response pair for every page,
                          metadata records, two 404 responses, a revisit record
                          (a document: a copy of the page it revisits)
                          and one empty 200 page. Some pages are served by two
                          hosts (a mirror), which makes exact copies.
  sample.manifest.json    what a reader must make of sample.warc.gz: the
                          documents in order with url, host, gzip member
                          offset, content type and source text, plus counts of
                          the records that are not documents.
  real.jsonl.gz           the sample's documents as JSONL ({"url","text"}),
                          with the HTML pages turned into text by this script,
                          for comparing the tool with a brute-force reference.
                          Gzipped to keep the repository small: tests
                          decompress it before use.
  equiv/docs.warc.gz      one set of plain-text documents in three formats, in
  equiv/docs.jsonl        the same order and with byte-identical text: WARC
  equiv/docs.pagefeed     (resource, conversion and response records mixed with records
                          that are not documents), JSONL, and WebBase page feed
                          (records with and without an HTTP header block).
  corrupt.warc.gz         a per-record gzip WARC in which, among good records,
                          one gzip member is corrupted, one record has a header
                          line without a colon, and the last record is cut short.
  corrupt.manifest.json   the good documents and the damaged records of
                          corrupt.warc.gz with their offsets.
"""

import base64
import gzip
import hashlib
import html.parser
import json
import os
import sys
import uuid
import zlib
from datetime import datetime, timedelta, timezone

SEPARATOR = "==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>"
BASE_DATE = datetime(2024, 3, 1, 8, 0, 0, tzinfo=timezone.utc)
USER_AGENT = "overlap-testcrawler/0.1"


# ---------------------------------------------------------------- sources


def list_sources(src_dir):
    """Every source text as (relative path with '/', bytes), sorted by path."""
    out = []
    for dirpath, dirnames, filenames in os.walk(src_dir):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, src_dir).replace(os.sep, "/")
            with open(full, "rb") as f:
                data = f.read()
            data.decode("utf-8")  # every source text must be valid UTF-8
            out.append((rel, data))
    out.sort()
    return out


def primary_url(rel):
    """The URL a source text is crawled from on its main host."""
    kind, rest = rel.split("/", 1)
    if kind == "common-licenses":
        return "http://mirror-a.example.org/licenses/" + rest
    if kind == "doc":
        return "http://mirror-a.example.org/doc/" + rest
    if kind == "rust":
        return "https://doc.rust-lang.org/" + rest
    raise ValueError("unexpected source " + rel)


def mirror_urls(rel, index_in_kind):
    """Further URLs that serve the very same bytes (mirrors, aliases)."""
    kind, rest = rel.split("/", 1)
    if kind == "common-licenses" and index_in_kind % 3 == 0:
        return ["http://mirror-b.example.net/debian/licenses/" + rest]
    if kind == "doc" and index_in_kind % 4 == 1:
        return ["http://mirror-b.example.net/debian/doc/" + rest]
    if kind == "rust" and rest.startswith("1.95.0/book/"):
        return ["https://doc.rust-lang.org/stable/" + rest[len("1.95.0/"):]]
    return []


def content_type_for(rel):
    if rel.endswith(".html"):
        return "text/html; charset=utf-8"
    if rel.startswith("common-licenses/"):
        return "text/plain"
    return "text/plain; charset=utf-8"


def host_of(url):
    return url.split("://", 1)[1].split("/", 1)[0]


def path_of(url):
    rest = url.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def crawl_order_key(url):
    """A stable, crawl-like order (hosts interleaved, not alphabetical)."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest()


def pages_from_sources(sources):
    """Every (url, rel, body, content_type) to crawl, in crawl order."""
    pages = []
    per_kind = {}
    for rel, data in sources:
        kind = rel.split("/", 1)[0]
        i = per_kind.get(kind, 0)
        per_kind[kind] = i + 1
        ctype = content_type_for(rel)
        for url in [primary_url(rel)] + mirror_urls(rel, i):
            pages.append((url, rel, data, ctype))
    pages.sort(key=lambda p: crawl_order_key(p[0]))
    return pages


# ---------------------------------------------------------------- HTML to text


class _TextExtractor(html.parser.HTMLParser):
    """A small HTML-to-text converter for the JSONL copy of the HTML pages.

    Block elements and <br> start lines; script and style are dropped; text
    inside <pre> keeps its line breaks. It only has to turn real pages into
    real text for the JSONL files; the tool's own extractor is not compared
    with it.
    """

    BLOCK = {
        "address", "article", "aside", "blockquote", "br", "dd", "details",
        "div", "dl", "dt", "figcaption", "figure", "footer", "form", "h1",
        "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
        "ol", "p", "pre", "section", "summary", "table", "td", "th", "title",
        "tr", "ul",
    }
    SKIP = {"script", "style", "noscript", "template"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "pre":
            self.pre += 1

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skip:
            self.skip -= 1
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "pre" and self.pre:
            self.pre -= 1

    def handle_data(self, data):
        if self.skip:
            return
        if self.pre:
            self.parts.append(data)
        else:
            self.parts.append(data.replace("\r", " ").replace("\n", " "))


def html_to_text(data):
    p = _TextExtractor()
    p.feed(data.decode("utf-8"))
    p.close()
    lines = [line.rstrip() for line in "".join(p.parts).split("\n")]
    out = []
    for line in lines:  # collapse runs of blank lines, as text dumps do
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def text_of(rel, data):
    return html_to_text(data) if rel.endswith(".html") else data.decode("utf-8")


# ---------------------------------------------------------------- WARC


def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def record_id(key):
    return "<urn:uuid:%s>" % uuid.uuid5(uuid.NAMESPACE_URL, "overlap-testdata:" + key)


class WarcWriter:
    """Writes WARC/1.1 records, each as its own gzip member (mtime 0)."""

    def __init__(self, filename, per_record_gzip=True):
        self.filename = filename
        self.per_record_gzip = per_record_gzip
        self.out = bytearray()
        self.members = []  # (offset, end, record type, url or None)
        self.clock = 0
        self.warcinfo_id = None

    def date(self):
        self.clock += 1
        return (BASE_DATE + timedelta(seconds=7 * self.clock)).strftime("%Y-%m-%dT%H:%M:%SZ")

    @staticmethod
    def record_bytes(wtype, headers, block, content_length=None):
        lines = ["WARC/1.1", "WARC-Type: " + wtype]
        lines += ["%s: %s" % kv for kv in headers]
        lines.append("Content-Length: %d" % (len(block) if content_length is None else content_length))
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"

    def add_raw(self, raw, wtype, url=None, member=None):
        """Append one record's bytes (or a given member) and remember where."""
        start = len(self.out)
        self.out += member if member is not None else gzip.compress(raw, compresslevel=9, mtime=0)
        self.members.append((start, len(self.out), wtype, url))
        return start

    def add(self, wtype, headers, block, url=None):
        return self.add_raw(self.record_bytes(wtype, headers, block), wtype, url)

    def warcinfo(self, description):
        block = (
            "software: make_testdata.py (overlap test data)\r\n"
            "format: WARC File Format 1.1\r\n"
            "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
            "isPartOf: overlap-testdata\r\n"
            "description: %s\r\n"
            "robots: obey\r\n" % description
        ).encode("utf-8")
        self.warcinfo_id = record_id("warcinfo:" + self.filename)
        return self.add(
            "warcinfo",
            [
                ("WARC-Date", self.date()),
                ("WARC-Record-ID", self.warcinfo_id),
                ("WARC-Filename", self.filename),
                ("Content-Type", "application/warc-fields"),
            ],
            block,
        )

    def request(self, url, concurrent_to):
        block = (
            "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n\r\n"
            % (path_of(url), host_of(url), USER_AGENT)
        ).encode("utf-8")
        return self.add(
            "request",
            [
                ("WARC-Date", self.date()),
                ("WARC-Record-ID", record_id("request:" + self.filename + ":" + url)),
                ("WARC-Target-URI", url),
                ("WARC-Concurrent-To", concurrent_to),
                ("Content-Type", "application/http;msgtype=request"),
            ],
            block,
            url,
        )

    @staticmethod
    def http_response(status, content_type, body, date):
        head = (
            "HTTP/1.1 %s\r\nDate: %s\r\nServer: Apache/2.4.62\r\n"
            "Content-Type: %s\r\nContent-Length: %d\r\n\r\n"
            % (status, date, content_type, len(body))
        ).encode("utf-8")
        return head + body

    def response(self, url, status, content_type, body, key=None):
        rid = record_id("response:" + self.filename + ":" + (key or url))
        date = self.date()
        http_date = datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").strftime("%a, %d %b %Y %H:%M:%S GMT")
        block = self.http_response(status, content_type, body, http_date)
        offset = self.add(
            "response",
            [
                ("WARC-Date", date),
                ("WARC-Record-ID", rid),
                ("WARC-Target-URI", url),
                ("WARC-IP-Address", "192.0.2.%d" % (1 + int(crawl_order_key(host_of(url))[:2], 16) % 250)),
                ("WARC-Payload-Digest", sha1_b32(body)),
                ("Content-Type", "application/http;msgtype=response"),
            ],
            block,
            url,
        )
        return offset, rid, date

    def resource(self, url, content_type, body, wtype="resource"):
        return self.add(
            wtype,
            [
                ("WARC-Date", self.date()),
                ("WARC-Record-ID", record_id(wtype + ":" + self.filename + ":" + url)),
                ("WARC-Target-URI", url),
                ("WARC-Warcinfo-ID", self.warcinfo_id),
                ("WARC-Block-Digest", sha1_b32(body)),
                ("Content-Type", content_type),
            ],
            body,
            url,
        )

    def metadata(self, url, concurrent_to, hops):
        block = ("via: %s\r\nhopsFromSeed: %s\r\nfetchTimeMs: %d\r\n" % (
            "http://%s/" % host_of(url), hops, 10 + len(url))).encode("utf-8")
        return self.add(
            "metadata",
            [
                ("WARC-Date", self.date()),
                ("WARC-Record-ID", record_id("metadata:" + self.filename + ":" + url)),
                ("WARC-Target-URI", url),
                ("WARC-Warcinfo-ID", self.warcinfo_id),
                ("WARC-Concurrent-To", concurrent_to),
                ("Content-Type", "application/warc-fields"),
            ],
            block,
            url,
        )

    def revisit(self, url, refers_to, refers_date, body, content_type):
        date = self.date()
        http_date = datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").strftime("%a, %d %b %Y %H:%M:%S GMT")
        head = self.http_response("200 OK", content_type, body, http_date)[: -len(body) or None]
        return self.add(
            "revisit",
            [
                ("WARC-Date", date),
                ("WARC-Record-ID", record_id("revisit:" + self.filename + ":" + url)),
                ("WARC-Target-URI", url),
                ("WARC-Warcinfo-ID", self.warcinfo_id),
                ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                ("WARC-Refers-To", refers_to),
                ("WARC-Refers-To-Target-URI", url),
                ("WARC-Refers-To-Date", refers_date),
                ("WARC-Payload-Digest", sha1_b32(body)),
                ("WARC-Block-Digest", sha1_b32(head)),
                ("Content-Type", "application/http;msgtype=response"),
            ],
            head,
            url,
        )

    def fetch(self, url, status, content_type, body, key=None):
        """A request record followed by its response record."""
        rid = record_id("response:" + self.filename + ":" + (key or url))
        self.request(url, rid)
        return self.response(url, status, content_type, body, key)


def write_file(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_json(path, obj):
    """Pretty enough to read, one list element per line, and compact."""
    parts = []
    for key, value in obj.items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(v, ensure_ascii=False) for v in value)
            parts.append(" %s: [\n  %s\n ]" % (json.dumps(key), items))
        else:
            parts.append(" %s: %s" % (json.dumps(key), json.dumps(value, ensure_ascii=False)))
    write_file(path, ("{\n" + ",\n".join(parts) + "\n}\n").encode("utf-8"))


def jsonl_line(url, text):
    return json.dumps({"url": url, "text": text}, ensure_ascii=False) + "\n"


NOT_FOUND_HTML = (
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
    b"<body><h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n"
    b"<hr><address>Apache/2.4.62 (Debian) Server</address></body></html>\n"
)


# ---------------------------------------------------------------- sample.warc.gz


def make_sample(td, sources):
    pages = pages_from_sources(sources)
    w = WarcWriter("sample.warc.gz")
    w.warcinfo("a small crawl of Debian license texts and Rust documentation, with a mirror")
    docs = []
    counts = {"warcinfo": 1, "request": 0, "metadata": 0, "revisit": 0, "not_200": 0}
    first_fetch = {}

    def fetch_doc(url, rel, body, ctype):
        offset, rid, date = w.fetch(url, "200 OK", ctype, body)
        counts["request"] += 1
        docs.append({
            "url": url,
            "offset": offset,
            "content_type": ctype.split(";")[0],
            "src": rel,
            "body_bytes": len(body),
        })
        first_fetch.setdefault(url, (rid, date, body, ctype))
        return rid

    missing = {
        40: "http://mirror-a.example.org/doc/libfoo-removed/copyright",
        170: "https://doc.rust-lang.org/1.95.0/std/old_module/index.html",
    }
    for n, (url, rel, body, ctype) in enumerate(pages):
        if n in missing:
            w.fetch(missing[n], "404 Not Found", "text/html; charset=utf-8", NOT_FOUND_HTML)
            counts["request"] += 1
            counts["not_200"] += 1
        if n == 120:  # a page that is empty: a document without text
            fetch_doc("http://mirror-a.example.org/doc/empty-page/README", None, b"", "text/plain")
        rid = fetch_doc(url, rel, body, ctype)
        if n % 60 == 7:
            w.metadata(url, rid, "L" * (1 + n % 3))
            counts["metadata"] += 1
        if n == 250:  # the crawler came back to an early page: payload unchanged
            old_url = pages[3][0]
            old_rid, old_date, old_body, old_ctype = first_fetch[old_url]
            w.request(old_url, record_id("revisit:sample.warc.gz:" + old_url))
            counts["request"] += 1
            offset = w.revisit(old_url, old_rid, old_date, old_body, old_ctype)
            counts["revisit"] += 1
            # A revisit is a document: a copy of the record it refers to.
            original = next(i for i, d in enumerate(docs) if d["url"] == old_url)
            docs.append(dict(docs[original], offset=offset, revisit_of=original))

    write_file(os.path.join(td, "sample.warc.gz"), bytes(w.out))
    write_json(os.path.join(td, "sample.manifest.json"), {
        "file": "sample.warc.gz",
        "documents": docs,
        "empty_documents": sum(1 for d in docs if d["body_bytes"] == 0),
        "records_not_documents": counts,
    })

    # The same documents as JSONL, HTML turned into text here.
    by_rel = dict(sources)
    lines = []
    for d in docs:
        if "revisit_of" in d:
            continue
        text = text_of(d["src"], by_rel[d["src"]]) if d["src"] else ""
        lines.append(jsonl_line(d["url"], text))
    write_file(os.path.join(td, "real.jsonl.gz"),
               gzip.compress("".join(lines).encode("utf-8"), compresslevel=9, mtime=0))
    return docs


# ---------------------------------------------------------------- equiv/


HTML_TAGS = ("<!doctype", "<html", "<head", "<body", "<title", "<script", "<style", "<p>", "<p ",
             "<div", "<br", "<a ", "<table", "<h1", "<h2", "<pre", "<span", "<b>", "<i>", "<font",
             "<iframe", "<!--", "<?xml")


def looks_plain(text):
    """Safe to store without a content type: nothing a sniffer could take for HTML
    (no markup at the start, no HTML tag anywhere, no HTTP status line). Angle
    brackets around e-mail addresses are fine."""
    low = text.lower()
    start = text.lstrip()
    return (not start.startswith("<") and not any(t in low for t in HTML_TAGS)
            and not start.startswith("HTTP/"))


def equiv_documents(sources):
    """(url, text) pairs: real plain texts with exact copies and near-replicas."""
    by_rel = dict(sources)
    chosen = []
    for name in ["BSD", "CC0-1.0", "LGPL-3"]:
        chosen.append(("http://licenses.example.org/" + name, by_rel["common-licenses/" + name].decode("utf-8")))
    copyrights = [rel for rel, _ in sources if rel.startswith("doc/")]
    for i, rel in enumerate(copyrights):
        pkg = rel.split("/")[1]
        if i % 8 == 2 or pkg in ("libdav1d6", "librav1e0", "libxv1"):
            url = "http://packages.example.org/%s/copyright" % pkg
            chosen.append((url, by_rel[rel].decode("utf-8")))
            if i % 32 == 2:  # the same file again on a mirror: an exact copy
                chosen.append(("http://mirror.example.net/debian/%s/copyright" % pkg, by_rel[rel].decode("utf-8")))
    for rel in ["rust/1.95.0/std/cell/index.html", "rust/1.95.0/core/cell/index.html",
                "rust/1.95.0/std/mem/index.html", "rust/1.95.0/core/mem/index.html",
                "rust/1.95.0/std/mem/fn.swap.html", "rust/1.95.0/core/mem/fn.swap.html"]:
        chosen.append(("https://doc.rust-lang.org/" + rel[len("rust/"):].replace(".html", ".txt"),
                       text_of(rel, by_rel[rel])))
    chosen.sort(key=lambda d: crawl_order_key(d[0]))
    # One document without text, early on, so that later docIDs depend on it.
    chosen.insert(5, ("http://packages.example.org/empty/NEWS", ""))
    for url, text in chosen:
        assert SEPARATOR not in text
    return chosen


def make_equiv(td, sources):
    docs = equiv_documents(sources)
    ed = os.path.join(td, "equiv")

    # JSONL
    write_file(os.path.join(ed, "docs.jsonl"), "".join(jsonl_line(u, t) for u, t in docs).encode("utf-8"))

    # WARC: resource records and HTTP 200 responses, with non-documents between.
    w = WarcWriter("docs.warc.gz")
    w.warcinfo("plain-text documents for the format equivalence test")
    for i, (url, text) in enumerate(docs):
        body = text.encode("utf-8")
        if i % 9 == 6:  # text converted from another record, e.g. a PDF
            w.resource(url, "text/plain", body, wtype="conversion")
        elif i % 3 == 0:
            w.resource(url, "text/plain", body)
        else:
            _, rid, _ = w.fetch(url, "200 OK", "text/plain; charset=utf-8", body)
            if i % 5 == 1:
                w.metadata(url, rid, "L")
        if i == 10:
            w.fetch(url + ".orig", "404 Not Found", "text/html; charset=utf-8", NOT_FOUND_HTML)
    write_file(os.path.join(ed, "docs.warc.gz"), bytes(w.out))

    # Page feed: header block only where the text could be mistaken for HTML,
    # and on every other record besides.
    out = []
    for i, (url, text) in enumerate(docs):
        rec = [SEPARATOR, "URL: " + url]
        if i % 2 == 0:
            rec.append("Date: " + (BASE_DATE + timedelta(minutes=i)).strftime("%a, %d %b %Y %H:%M:%S GMT"))
        if i % 3 == 0:
            rec.append("Position: %d" % (1000 * i))
        if i % 4 == 0:
            rec.append("DocId: %d" % i)
        rec.append("")
        if not looks_plain(text) or i % 2 == 1 or text == "":
            rec += ["HTTP/1.0 200 OK", "Content-Type: text/plain", "Content-Length: %d" % len(text.encode("utf-8")), ""]
        # The page runs up to the newline before the next separator.
        out.append("\n".join(rec) + "\n" + text + "\n")
    write_file(os.path.join(ed, "docs.pagefeed"), "".join(out).encode("utf-8"))
    return docs


# ---------------------------------------------------------------- corrupt.warc.gz


def corrupt_member(member):
    """Damage the deflate data of a gzip member so that it cannot be inflated."""
    bad = bytearray(member)
    start = 10 + (len(member) - 18) // 3  # inside the deflate stream
    for k in range(24):
        bad[start + k] ^= 0xA5
    bad = bytes(bad)
    try:
        zlib.decompress(bad, 31)
    except zlib.error:
        pass
    else:
        raise AssertionError("corrupted member still decompresses")
    assert b"\x1f\x8b\x08" not in bad[3:], "corruption made a false gzip magic"
    return bad


def make_corrupt(td, sources):
    by_rel = dict(sources)
    w = WarcWriter("corrupt.warc.gz")
    w.warcinfo("a damaged crawl: corrupt gzip member, bad header line, truncated end")
    good = []
    corrupt = []

    def good_fetch(url, rel):
        body = by_rel[rel]
        offset, _, _ = w.fetch(url, "200 OK", "text/plain", body)
        good.append({"url": url, "offset": offset, "src": rel})

    good_fetch("http://mirror-a.example.org/licenses/BSD", "common-licenses/BSD")
    w.resource("http://mirror-a.example.org/licenses/CC0-1.0", "text/plain", by_rel["common-licenses/CC0-1.0"])
    good.append({"url": "http://mirror-a.example.org/licenses/CC0-1.0", "offset": w.members[-1][0],
                 "src": "common-licenses/CC0-1.0"})

    # A response whose gzip member is damaged.
    body = by_rel["common-licenses/Artistic"]
    block = WarcWriter.http_response("200 OK", "text/plain", body, "Fri, 01 Mar 2024 08:10:00 GMT")
    raw = WarcWriter.record_bytes("response", [
        ("WARC-Date", w.date()),
        ("WARC-Record-ID", record_id("corrupt:gzip")),
        ("WARC-Target-URI", "http://mirror-a.example.org/licenses/Artistic"),
        ("Content-Type", "application/http;msgtype=response"),
    ], block)
    member = corrupt_member(gzip.compress(raw, compresslevel=9, mtime=0))
    start = w.add_raw(None, "response", "http://mirror-a.example.org/licenses/Artistic", member=member)
    corrupt.append({"reason": "corrupt_gzip", "offset": start, "end": len(w.out)})

    good_fetch("http://mirror-a.example.org/doc/libxv1/copyright", "doc/libxv1/copyright")

    # A response with a header line that has no colon.
    body = by_rel["common-licenses/MPL-2.0"]
    block = WarcWriter.http_response("200 OK", "text/plain", body, "Fri, 01 Mar 2024 08:11:00 GMT")
    raw = WarcWriter.record_bytes("response", [
        ("WARC-Date", w.date()),
        ("WARC-Record-ID", record_id("corrupt:header")),
        ("WARC-Target-URI", "http://mirror-a.example.org/licenses/MPL-2.0"),
    ], block)
    raw = raw.replace(b"\r\nWARC-Target-URI", b"\r\nthis header line has no colon\r\nWARC-Target-URI", 1)
    start = w.add_raw(raw, "response", "http://mirror-a.example.org/licenses/MPL-2.0")
    corrupt.append({"reason": "corrupt_header", "offset": start, "end": len(w.out)})

    w.resource("http://mirror-a.example.org/licenses/Apache-2.0", "text/plain", by_rel["common-licenses/Apache-2.0"])
    good.append({"url": "http://mirror-a.example.org/licenses/Apache-2.0", "offset": w.members[-1][0],
                 "src": "common-licenses/Apache-2.0"})
    good_fetch("http://mirror-a.example.org/licenses/GPL-2", "common-licenses/GPL-2")

    # The last record is cut off: its declared length runs past the end of the
    # file (the gzip member itself is whole).
    body = by_rel["common-licenses/LGPL-2.1"]
    block = WarcWriter.http_response("200 OK", "text/plain", body, "Fri, 01 Mar 2024 08:12:00 GMT")
    raw = WarcWriter.record_bytes("response", [
        ("WARC-Date", w.date()),
        ("WARC-Record-ID", record_id("corrupt:truncated")),
        ("WARC-Target-URI", "http://mirror-a.example.org/licenses/LGPL-2.1"),
        ("Content-Type", "application/http;msgtype=response"),
    ], block)
    raw = raw[: len(raw) - len(block) // 2]
    start = w.add_raw(raw, "response", "http://mirror-a.example.org/licenses/LGPL-2.1")
    corrupt.append({"reason": "truncated_record", "offset": start, "end": len(w.out)})

    write_file(os.path.join(td, "corrupt.warc.gz"), bytes(w.out))
    write_json(os.path.join(td, "corrupt.manifest.json"), {
        "file": "corrupt.warc.gz",
        "documents": good,
        "corrupt": corrupt,
    })


# ---------------------------------------------------------------- checks


def check_members(path, expect_bad=()):
    """Every gzip member of a per-record gzip file decompresses on its own."""
    data = open(path, "rb").read()
    pos = 0
    n = 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        try:
            d.decompress(data[pos:])
            ok = d.eof
        except zlib.error:
            ok = False
        if not ok:
            assert pos in expect_bad, "%s: bad gzip member at %d" % (path, pos)
            nxt = data.find(b"\x1f\x8b\x08", pos + 1)
            pos = len(data) if nxt < 0 else nxt
        else:
            pos = len(data) - len(d.unused_data)
        n += 1
    return n


def warc_documents(path):
    """(url, payload) of every document record of a per-record gzip WARC,
    checking each record's framing and HTTP Content-Length on the way."""
    data = open(path, "rb").read()
    pos = 0
    out = []
    while pos < len(data):
        d = zlib.decompressobj(31)
        raw = d.decompress(data[pos:])
        assert d.eof
        pos = len(data) - len(d.unused_data)
        head_end = raw.index(b"\r\n\r\n") + 4
        fields = {}
        for line in raw[:head_end].decode("utf-8").split("\r\n")[1:]:
            if line:
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        n = int(fields["content-length"])
        block = raw[head_end:head_end + n]
        assert raw[head_end + n:] == b"\r\n\r\n", "%s: record framing" % path
        if fields["warc-type"] == "response":
            split = block.index(b"\r\n\r\n") + 4
            http_head, body = block[:split].decode("utf-8"), block[split:]
            length = [l for l in http_head.split("\r\n") if l.lower().startswith("content-length:")]
            assert int(length[0].split(":")[1]) == len(body), "%s: HTTP Content-Length" % path
            if http_head.split(" ")[1] == "200":
                out.append((fields["warc-target-uri"], body))
        elif fields["warc-type"] in ("resource", "conversion"):
            out.append((fields["warc-target-uri"], block))
    return out


def pagefeed_documents(path):
    """(url, page) of every record of a page feed written by make_equiv."""
    text = open(path, "rb").read().decode("utf-8")
    out = []
    for rec in text.split(SEPARATOR + "\n")[1:]:
        head, rest = rec.split("\n\n", 1)
        url = head.split("\n")[0][len("URL: "):]
        if rest.startswith("HTTP/"):
            rest = rest.split("\n\n", 1)[1]
        assert rest.endswith("\n")
        out.append((url, rest[:-1].encode("utf-8")))
    return out


def check_equiv(td, docs):
    """The three equiv files hold the same documents with byte-identical text."""
    want = [(u, t.encode("utf-8")) for u, t in docs]
    jsonl = [json.loads(l) for l in open(os.path.join(td, "equiv", "docs.jsonl"), encoding="utf-8")]
    assert [(d["url"], d["text"].encode("utf-8")) for d in jsonl] == want, "docs.jsonl"
    assert warc_documents(os.path.join(td, "equiv", "docs.warc.gz")) == want, "docs.warc.gz"
    assert pagefeed_documents(os.path.join(td, "equiv", "docs.pagefeed")) == want, "docs.pagefeed"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    td = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "testdata")
    td = os.path.normpath(td)
    sources = list_sources(os.path.join(td, "src"))
    docs = make_sample(td, sources)
    equiv = make_equiv(td, sources)
    make_corrupt(td, sources)
    check_members(os.path.join(td, "sample.warc.gz"))
    check_members(os.path.join(td, "equiv", "docs.warc.gz"))
    check_equiv(td, equiv)
    fetched = [d for d in docs if "revisit_of" not in d]
    assert len(warc_documents(os.path.join(td, "sample.warc.gz"))) == len(fetched)
    bad = [c["offset"] for c in json.load(open(os.path.join(td, "corrupt.manifest.json")))["corrupt"]]
    check_members(os.path.join(td, "corrupt.warc.gz"), expect_bad=bad)
    print("sample: %d documents; equiv: %d documents" % (len(docs), len(equiv)))


if __name__ == "__main__":
    main()
