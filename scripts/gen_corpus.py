#!/usr/bin/env python3
"""Generate a synthetic web crawl as a per-record gzip WARC/1.1 file.

Usage:
  python3 scripts/gen_corpus.py --out FILE --size 1G [--seed N] [--words FILE]
                                [--stats FILE] [--jobs N]

The output is what a crawler such as Heritrix or wget writes: each record
is its own gzip member; a `warcinfo` record comes first, then for every
fetch a `request` record and a `response` record (`HTTP/1.1 200 OK`,
`Content-Type: text/html; charset=utf-8`, exact Content-Length, CRLF line
ends, SHA-1 block and payload digests), with a few percent of 404 pages,
301 redirects and `metadata` records among them. Generation stops once the
compressed file reaches --size (it may pass it by a few hundred records).

The content follows what Shivakumar & Garcia-Molina found on the web:

- sites of heavy-tailed size (Pareto: many with tens of pages, a few with
  thousands), each with its own HTML template: inline CSS and script, a
  header of a few lines, a navigation list, a footer of 2-5 lines, shared
  by every page of the site, around the page body;
- bodies made of headings, paragraphs, lists and tables of generated text:
  Zipf-distributed words, sentences of varied length built from a large
  pool of clauses, so that two unrelated pages practically never share
  four consecutive lines;
- exact copies (about 30% of pages are in a group of identical pages):
  server aliasing (www and bare host, http and https), URL aliasing
  (`dir/` and `dir/index.html`, session ids), mirror hosts that copy most
  of a site with its template, and popular manuals mirrored on many hosts;
- near-replicas (about 15% of pages): copies with a date line changed,
  a few lines edited, added or removed, on the same site (same template)
  or reposted by another site (its own template).

The output depends only on the arguments (same bytes for the same --seed,
--size, --words and version of this script; --jobs does not change it).
A summary with the ground truth (pages, hosts, exact-copy and near-replica
rates, sizes) is printed to stderr at the end and written as JSON to
--stats if given.

Only the Python standard library is used.
"""

import argparse
import base64
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time
import uuid
import zlib
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

SCRIPT_VERSION = "1"

# Targets for the share of pages in exact-copy groups and of near-replicas.
# Site-level decisions are steered towards them (see Plan.want_*), so the
# rates hold from small corpora to large ones whatever the seed.
TARGET_EXACT = 0.30
TARGET_NEAR = 0.15

# Shares of fetches that are not 200 pages, and of fetches followed by a
# metadata record.
RATE_404 = 0.025
RATE_REDIRECT = 0.02
RATE_METADATA = 0.04

BASE_DATE = datetime(2024, 3, 1, 6, 0, 0, tzinfo=timezone.utc)
USER_AGENT = "Mozilla/5.0 (compatible; synthcrawler/1.0; +http://crawler.invalid/bot)"

# Bytes of compressed output collected before one write.
WRITE_BLOCK = 16 << 20
# Records per compression batch (one task for a worker thread with --jobs > 1).
COMPRESS_BATCH = 256


# ------------------------------------------------------------ arguments


def parse_size(text):
    """'1G', '100M', '512K', '1.5G' or a byte count to bytes."""
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = 1
    if t and t[-1] in "KMGT":
        mult = 1 << (10 * ("KMGT".index(t[-1]) + 1))
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (use e.g. 100M, 1G)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive size")
    return int(value * mult)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Generate a synthetic web crawl as a per-record gzip WARC/1.1 file.")
    p.add_argument("--out", required=True, help="output file (.warc.gz)")
    p.add_argument("--size", required=True, type=parse_size,
                   help="target compressed size, e.g. 100M, 1G")
    add_common_args(p, jobs="compression threads")
    return p.parse_args(argv)


def add_common_args(p, jobs):
    """The options this generator shares with gen_crawl.py."""
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--words", help="vocabulary file, one word per line, most frequent first "
                   "(default: a built-in word generator)")
    p.add_argument("--stats", help="write the ground-truth summary as JSON to this file")
    p.add_argument("--jobs", type=int, default=1,
                   help=f"{jobs} (output is the same for any value; default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--page-scale", type=float, default=1.0,
                   help="scale page bodies and style sheets by this factor (default 1: pages of "
                        "about 21 KB of HTML on average; 0.3 gives about 10 KB, 0.1 about 6.7 KB, "
                        "the page size of Shivakumar & Garcia-Molina's crawl, where the rest of "
                        "the template, about 5 KB, is most of a page). The output for 1 is that "
                        "of earlier versions")


# Set from --page-scale before any page is made.
PAGE_SCALE = 1.0


def scaled(n):
    """`n` bytes or items scaled by --page-scale, at least 1."""
    return n if PAGE_SCALE == 1.0 else max(1, round(n * PAGE_SCALE))


# ------------------------------------------------------------ vocabulary

# The most frequent English words, most frequent first: they take the top
# Zipf ranks, as they do in real text.
FUNCTION_WORDS = (
    "the of and to a in is that for it as was with be by on not he this are or his "
    "from at which but have an they you were her she there had been one all we their "
    "has would when if can more no who its so will out up about than into them what "
    "some could other time these two may then do first any my now such like our over "
    "man me even most made after also did many before must through back years where "
    "much your way well down should because each just those people how too little "
    "state good very make world still own see men work long get here between both life "
    "being under never day same another know while last might us great old year off "
    "come since against go came right used take three"
).split()

ONSETS = ("b c d f g h j k l m n p r s t v w b c d f g h l m n p r s t w "
          "bl br ch cl cr dr fl fr gr pl pr sh sl sp st th tr").split()
VOWELS = "a e i o u a e i o a e i o u ea ee ai ou".split()
CODAS = [""] * 8 + "n r s t l m nd nt st ck ng ll rd".split()
ACCENTED = "é è á ö ü ñ ç å ø í".split()


def builtin_vocabulary(rng, size):
    """Function words, then pronounceable made-up words, frequent ones short."""
    words = list(FUNCTION_WORDS)
    seen = set(words)
    while len(words) < size:
        rank = len(words)
        # Frequent words are short: one or two syllables at the top ranks,
        # up to four far down the tail.
        syl = rng.choice((1, 1, 2, 2, 2)) if rank < 3000 else rng.choice((1, 2, 2, 2, 3, 3, 4))
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(syl)) + rng.choice(CODAS)
        if rng.random() < 0.015:
            i = rng.randrange(len(w))
            w = w[:i] + rng.choice(ACCENTED) + w[i + 1:]
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def file_vocabulary(path):
    words = []
    seen = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            w = line.strip().split()
            if w and w[0] not in seen:
                seen.add(w[0])
                words.append(w[0])
    if len(words) < 100:
        sys.exit(f"gen_corpus: {path}: need at least 100 distinct words, found {len(words)}")
    return words


def html_escape(s):
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    return s


class Text:
    """Zipf-distributed words, clauses, sentences and paragraphs, as HTML.

    Words are drawn once in bulk with a cumulative weight table
    (Zipf-Mandelbrot, s = 1.1) into a long run that phrases and titles are
    sliced from, and into a large pool of clauses (2-9 words or
    collocations, a few with a link or emphasis); a sentence joins one to three random clauses, so
    distinct sentences are combinatorially many while one costs a few
    look-ups. Everything returned is already HTML-escaped.
    """

    CLAUSES = 400_000
    RUN = 1_000_000

    def __init__(self, rng, vocab):
        self.rng = rng
        vocab = [html_escape(w) for w in vocab]
        self.vocab = vocab
        cum = list(itertools.accumulate(1.0 / (r + 2.7) ** 1.1 for r in range(len(vocab))))
        self.cum = cum
        self.run = rng.choices(vocab, cum_weights=cum, k=self.RUN)
        cap = {}
        for w in vocab:
            cap[w] = w[:1].upper() + w[1:]
        self.run_cap = [cap[w] for w in self.run]
        # Collocations ("of the new", "is one"), Zipf-distributed too: real
        # text repeats word sequences, not only words, and that is what
        # gzip finds.
        colloc = [" ".join(rng.choices(vocab, cum_weights=cum, k=rng.choice((2, 2, 3))))
                  for _ in range(4000)]
        ccum = list(itertools.accumulate(1.0 / (r + 30) for r in range(len(colloc))))
        lengths = [rng.choice((2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9)) for _ in range(self.CLAUSES)]
        total = sum(lengths)
        flat = rng.choices(vocab, cum_weights=cum, k=total)
        cflat = rng.choices(colloc, cum_weights=ccum, k=total)
        r = rng.random
        for i in range(total):
            if r() < 0.3:
                flat[i] = cflat[i]
        clauses = []
        pos = 0
        for ln in lengths:
            ws = flat[pos:pos + ln]
            pos += ln
            x = r()
            if x < 0.04 and ln > 3:
                # An inline link over two or three words.
                i = int(r() * (ln - 3))
                anchor = " ".join(ws[i:i + 2 + (x < 0.02)])
                ws[i:i + 2 + (x < 0.02)] = [f"<a href=\"/{ws[i]}/{ws[-1]}-{int(r() * 9999)}\">{anchor}</a>"]
            elif x < 0.06:
                i = int(r() * ln)
                ws[i] = f"<{'em' if x < 0.05 else 'strong'}>{ws[i]}</{'em' if x < 0.05 else 'strong'}>"
            clauses.append(" ".join(ws))
        self.clauses = clauses
        # Capitalized variants for sentence starts, built once.
        self.starts = [c[0].upper() + c[1:] if c[0] != "<" else c for c in clauses]
        self.nclauses = len(clauses)
        self.joiners = (", ", ", ", " and ", " but ", "; ", " which ", " while ", ", so ")
        self.ends = (".",) * 14 + ("?", "!")

    def sentence(self):
        r = self.rng.random
        n = self.nclauses
        s = self.starts[int(r() * n)]
        parts = 1 + (r() < 0.55) + (r() < 0.2)
        for _ in range(parts - 1):
            s += self.joiners[int(r() * 8)] + self.clauses[int(r() * n)]
        return s + self.ends[int(r() * 16)]

    def paragraph(self, sep=" "):
        r = self.rng.random()
        k = 1 + int(r * r * 7)  # 1-7 sentences, mostly few
        return sep.join([self.sentence() for _ in range(k)])

    def title(self, lo=3, hi=8):
        k = self.rng.randint(lo, hi)
        o = int(self.rng.random() * (self.RUN - k))
        return " ".join(self.run_cap[o:o + k])

    def phrase(self, lo=1, hi=3):
        k = self.rng.randint(lo, hi)
        o = int(self.rng.random() * (self.RUN - k))
        return " ".join(self.run[o:o + k])

    def name(self):
        """A site or person name: one or two less common, short words."""
        ws = [self.rng.choice(self.vocab[200:6000]) for _ in range(self.rng.randint(1, 2))]
        return "".join(w.capitalize() for w in ws if w.isalpha()) or "Site"


# ------------------------------------------------------------ sites


TLDS = ["com"] * 10 + ["org"] * 4 + ["net"] * 3 + ["edu"] * 2 + ["de", "uk", "fr", "io", "info", "jp", "nl"]
SERVERS = ["Apache/2.4.41 (Ubuntu)", "Apache/2.4.57 (Debian)", "nginx/1.18.0", "nginx/1.24.0",
           "nginx", "Microsoft-IIS/10.0", "cloudflare", "LiteSpeed", "Apache"]
FONTS = ["Georgia, serif", "Helvetica, Arial, sans-serif", "Verdana, sans-serif",
         "\"Times New Roman\", serif", "system-ui, -apple-system, sans-serif", "Tahoma, sans-serif"]
SECTION_WORDS = ["news", "blog", "docs", "articles", "products", "about", "help", "faq",
                 "support", "archive", "events", "reviews", "guide", "manual", "projects",
                 "research", "people", "library", "forum", "wiki", "press", "stories"]
CSS_PROPS = ["margin", "padding", "border-width", "font-size", "line-height", "width",
             "max-width", "margin-top", "margin-bottom", "padding-left", "letter-spacing"]
CSS_UNITS = ["px", "px", "em", "%", "rem"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
CMS = ["wordpress", "plain", "bootstrap"]


class Template:
    """A site's HTML template: everything around a page body.

    Made of constant parts (head assets, header, navigation, sidebar,
    footer: the same on every page of the site) and slots for the page
    title, date line, body and related links. The navigation, header and
    sidebar are kept under about 50 text lines, so that boilerplate alone
    gives two pages of a site fewer than 15 shared four-line chunks.
    """

    def __init__(self, rng, text, site_name, domain):
        self.site_name = site_name
        self.cms = rng.choice(CMS)
        lang = rng.choice(["en"] * 6 + ["en-US", "en-GB"])
        font = rng.choice(FONTS)
        color = "#%06x" % rng.randrange(1 << 24)
        theme = text.name().lower()
        ver = f"{rng.randint(1, 6)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}"
        rules = [f"body {{ font-family: {font}; color: {color}; background: #fff; }}",
                 "a { color: %s; text-decoration: none; }" % ("#%06x" % rng.randrange(1 << 24)),
                 "a:hover { text-decoration: underline; }"]
        classes = [w for w in text.vocab[100:3000:7] if w.isalpha()]
        for _ in range(rng.randint(scaled(20), scaled(160))):
            sel = rng.choice([".", "#", ".site-", ".entry-", ".widget-"]) + rng.choice(classes)
            props = "; ".join(
                f"{rng.choice(CSS_PROPS)}: {rng.randint(0, 40)}{rng.choice(CSS_UNITS)}"
                for _ in range(rng.randint(1, 5)))
            rules.append(f"{sel} {{ {props}; }}")
        rules.append("@media (max-width: 768px) { .sidebar { display: none; } #content { width: 100%; } }")
        css = "\n".join(rules)
        assets = []
        if self.cms == "wordpress":
            for name in rng.sample(["style", "blocks", "theme", "print", "fonts", "gallery", "comments"], rng.randint(2, 6)):
                assets.append(f"<link rel=\"stylesheet\" id=\"{theme}-{name}-css\" "
                              f"href=\"/wp-content/themes/{theme}/css/{name}.css?ver={ver}\" media=\"all\">")
            for name in rng.sample(["jquery.min", "jquery-migrate.min", "navigation", "skip-link-focus-fix", "wp-embed.min"], rng.randint(1, 4)):
                assets.append(f"<script src=\"/wp-includes/js/{name}.js?ver={ver}\" id=\"{name.split('.')[0]}-js\"></script>")
            assets.append("<meta name=\"generator\" content=\"WordPress %d.%d\">" % (rng.randint(4, 6), rng.randint(0, 9)))
        elif self.cms == "bootstrap":
            assets.append(f"<link rel=\"stylesheet\" href=\"/assets/css/bootstrap.min.css?v={ver}\">")
            assets.append(f"<script src=\"/assets/js/bootstrap.bundle.min.js?v={ver}\" defer></script>")
        else:
            assets.append("<link rel=\"stylesheet\" href=\"/style.css\">")
        scripts = ""
        if rng.random() < 0.7:
            tag = "UA-%d-%d" % (rng.randrange(10**7, 10**8), rng.randint(1, 9))
            scripts = ("<script async src=\"/gtag/js?id=%s\"></script>\n<script>\n"
                       "  window.dataLayer = window.dataLayer || [];\n"
                       "  function gtag(){dataLayer.push(arguments);}\n"
                       "  gtag('js', new Date());\n  gtag('config', '%s', { 'anonymize_ip': true });\n"
                       "  document.addEventListener('DOMContentLoaded', function () {\n"
                       "    var links = document.querySelectorAll('a[href^=\"http\"]');\n"
                       "    for (var i = 0; i < links.length; i++) { links[i].setAttribute('rel', 'noopener'); }\n"
                       "  });\n</script>\n") % (tag, tag)
        if rng.random() < 0.4:
            scripts += ("<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\","
                        f"\"@type\":\"Organization\",\"name\":\"{site_name}\",\"url\":\"https://{domain}/\","
                        f"\"logo\":\"https://{domain}/static/logo.png\"}}</script>\n")
        self.head_pre = (f"<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                         "<meta http-equiv=\"X-UA-Compatible\" content=\"IE=edge\">\n<title>")
        self.head_post = (f" | {site_name}</title>\n"
                          f"<meta name=\"description\" content=\"{text.sentence().replace(chr(34), '')[:150]}\">\n"
                          f"<meta property=\"og:site_name\" content=\"{site_name}\">\n"
                          "<meta property=\"og:type\" content=\"article\">\n"
                          + "\n".join(assets) + f"\n<style>\n{css}\n</style>\n{scripts}</head>\n")

        header = [f"<body class=\"{'home blog' if rng.random() < 0.5 else 'page'} {theme}\">\n"
                  "<a class=\"skip-link screen-reader-text\" href=\"#content\">Skip to content</a>\n"
                  "<div id=\"page\" class=\"site\">\n<header id=\"masthead\" class=\"site-header\">\n"
                  f"<p class=\"site-title\"><a href=\"/\" rel=\"home\">{site_name}</a></p>\n"]
        if rng.random() < 0.7:
            header.append(f"<p class=\"site-description\">{text.title(3, 9)}</p>\n")
        if rng.random() < 0.3:
            header.append(f"<div class=\"notice\">{text.sentence()}</div>\n")
        if rng.random() < 0.4:
            header.append("<form role=\"search\" method=\"get\" class=\"search-form\" action=\"/\">"
                          "<label><span class=\"screen-reader-text\">Search for:</span>"
                          "<input type=\"search\" class=\"search-field\" placeholder=\"Search &hellip;\" name=\"s\">"
                          "</label><input type=\"submit\" class=\"search-submit\" value=\"Search\"></form>\n")
        self.sections = rng.sample(SECTION_WORDS, rng.randint(3, 8))
        nav_items = [("/", "Home")] + [(f"/{s}/", s.capitalize()) for s in self.sections]
        for _ in range(rng.choice((0, 2, 5, 8, 12, 18))):
            t = text.title(1, 3)
            nav_items.append((f"/{rng.choice(self.sections)}/{t.lower().replace(' ', '-')}/", t))
        if rng.random() < 0.3:
            nav_items.append(("/contact/", "Contact &amp; Support"))
        if rng.random() < 0.25:
            # All links on one line, as many sites do.
            nav = ("<nav class=\"main-navigation\">" + " | ".join(f"<a href=\"{h}\">{t}</a>" for h, t in nav_items)
                   + "</nav>\n")
        elif self.cms == "wordpress":
            ids = rng.randrange(10, 5000)
            nav = ("<nav id=\"site-navigation\" class=\"main-navigation\">\n"
                   "<button class=\"menu-toggle\" aria-controls=\"primary-menu\" aria-expanded=\"false\">Menu</button>\n"
                   "<div class=\"menu-main-container\"><ul id=\"primary-menu\" class=\"menu\">\n"
                   + "".join(f"<li id=\"menu-item-{ids + k}\" class=\"menu-item menu-item-type-"
                             f"{'custom' if k == 0 else 'post_type'} menu-item-object-page menu-item-{ids + k}\">"
                             f"<a href=\"{h}\">{t}</a></li>\n" for k, (h, t) in enumerate(nav_items))
                   + "</ul></div>\n</nav>\n")
        else:
            nav = ("<nav class=\"navbar navbar-expand-lg\">\n<ul class=\"navbar-nav\">\n"
                   + "".join(f"  <li class=\"nav-item\"><a class=\"nav-link\" href=\"{h}\">{t}</a></li>\n"
                             for h, t in nav_items) + "</ul>\n</nav>\n")
        header.append("</header>\n")
        self.top = "".join(header) + nav + "<div id=\"content\" class=\"site-content\">\n<main id=\"main\" class=\"site-main\">\n"

        sidebar = ""
        if rng.random() < 0.45:
            year = rng.randint(2015, 2023)
            months = [f"<li><a href=\"/{year + (m // 12)}/{1 + m % 12:02d}/\">{MONTHS[m % 12]} {year + m // 12}</a></li>"
                      for m in range(rng.randint(3, 12))]
            sidebar = ("<aside id=\"secondary\" class=\"widget-area\">\n"
                       "<section class=\"widget widget_categories\"><h2 class=\"widget-title\">Categories</h2>\n<ul>\n"
                       + "\n".join(f"<li class=\"cat-item\"><a href=\"/{s}/\">{s.capitalize()}</a></li>" for s in self.sections)
                       + "\n</ul></section>\n<section class=\"widget widget_archive\"><h2 class=\"widget-title\">Archives</h2>\n<ul>\n"
                       + "\n".join(months) + "\n</ul></section>\n</aside>\n")
        year = rng.randint(1998, 2023)
        footer = [f"<p class=\"copyright\">&copy; {year}&ndash;2024 {site_name}. All rights reserved.</p>"]
        extra = [
            "<p><a href=\"/privacy/\">Privacy policy</a> &middot; <a href=\"/terms/\">Terms of use</a> &middot; <a href=\"/imprint/\">Imprint</a></p>",
            f"<p>{text.sentence()}</p>",
            f"<p>Contact: webmaster@{domain} &middot; Phone +1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}</p>",
            "<p class=\"powered\">Proudly powered by " + rng.choice(["WordPress", "Drupal", "Hugo", "Jekyll", "a custom CMS", "MediaWiki"]) + "</p>",
            f"<p>{text.title(2, 5)} &middot; {text.title(2, 5)}</p>",
        ]
        footer += rng.sample(extra, rng.randint(1, 4))
        self.bottom = ("</main>\n" + sidebar + "</div>\n<footer id=\"colophon\" class=\"site-footer\">\n"
                       "<div class=\"site-info\">\n" + "\n".join(footer) + "\n</div>\n</footer>\n</div>\n"
                       + (f"<script src=\"/wp-includes/js/wp-embed.min.js?ver={ver}\"></script>\n" if self.cms == "wordpress" else "")
                       + "</body>\n</html>\n")
        self.wrap_source = rng.random() < 0.3  # paragraphs broken at sentence ends in the source
        self.date_style = rng.randrange(3)
        self.post_base = rng.randrange(100, 90000)
        self.share = ""
        if rng.random() < 0.4:
            nets = rng.sample(["Facebook", "Twitter", "LinkedIn", "Reddit", "Pinterest", "Email", "WhatsApp"], rng.randint(2, 6))
            self.share = ("<div class=\"sharedaddy sd-sharing-enabled\"><div class=\"robots-nocontent sd-block sd-social\">"
                          "<h3 class=\"sd-title\">Share this:</h3>\n<div class=\"sd-content\"><ul>\n"
                          + "".join(f"<li class=\"share-{n.lower()}\"><a rel=\"nofollow noopener noreferrer\" class=\"share-{n.lower()} sd-button share-icon\" "
                                    f"href=\"?share={n.lower()}&amp;nb=1\" target=\"_blank\" title=\"Click to share on {n}\"><span>{n}</span></a></li>\n"
                                    for n in nets)
                          + "<li class=\"share-end\"></li>\n</ul></div></div></div>\n")

    def date_line(self, when):
        if self.date_style == 0:
            return f"<p class=\"date\">Last updated: {when:%Y-%m-%d}</p>"
        if self.date_style == 1:
            return (f"<div class=\"entry-meta\"><span class=\"posted-on\">Posted on <time class=\"entry-date published\" "
                    f"datetime=\"{when:%Y-%m-%dT%H:%M:%S}+00:00\">{MONTHS[when.month - 1]} {when.day}, {when.year}</time></span></div>")
        return f"<div class=\"meta\">{when:%d %b %Y %H:%M}</div>"

    def render(self, title, date_html, body_lines, related, post_id):
        parts = [self.head_pre, title, self.head_post, self.top,
                 f"<article id=\"post-{post_id}\" class=\"post-{post_id} post type-post status-publish format-standard hentry\">\n"
                 "<header class=\"entry-header\">\n<h1 class=\"entry-title\">", title, "</h1>\n",
                 date_html, "\n</header>\n<div class=\"entry-content\">\n"]
        parts.append("\n".join(body_lines))
        parts.append("\n</div>\n")
        if self.share:
            parts.append(self.share)
        parts.append("</article>\n")
        if related:
            parts.append("<div class=\"related-posts\"><h3>Related posts</h3>\n<ul>\n")
            parts.append("".join(f"<li><a href=\"{u}\" rel=\"bookmark\">{t}</a></li>\n" for u, t in related))
            parts.append("</ul></div>\n")
        parts.append(self.bottom)
        return "".join(parts)


class Page:
    __slots__ = ("path", "title", "date", "body", "related", "key", "html", "digest", "target")


class Site:
    def __init__(self, plan):
        rng, text = plan.rng, plan.text
        self.name = text.name()
        self.domain = f"{self.name.lower()}.{rng.choice(TLDS)}"
        plan.hosts_made += 1
        self.www = rng.random() < 0.6
        self.scheme = "https" if rng.random() < 0.7 else "http"
        self.server = rng.choice(SERVERS)
        self.ip = plan.ip()
        self.template = Template(rng, text, self.name, self.domain)
        self.path_style = rng.randrange(3)

    @property
    def host(self):
        return ("www." if self.www else "") + self.domain

    def base(self):
        return f"{self.scheme}://{self.host}"


def body_lines(plan, target_bytes, template):
    """A page body as HTML source lines, each one line of extracted text
    (wrapper tags like <ul> and block comments stand alone and carry no
    text). `target_bytes` counts the text lines only."""
    rng, text = plan.rng, plan.text
    r = rng.random
    sep = "\n" if template.wrap_source else " "
    wp = template.cms == "wordpress"
    out = []
    size = 0
    while size < target_bytes:
        x = r()
        if x < 0.60:
            line = f"<p>{text.paragraph(sep)}</p>"
            if wp:
                out.append("<!-- wp:paragraph -->")
                out.append(line)
                out.append("<!-- /wp:paragraph -->")
            else:
                out.append(line)
            size += len(line)
        elif x < 0.72:
            t = text.title()
            if wp:
                out.append("<!-- wp:heading -->")
                line = f"<h2 class=\"wp-block-heading\" id=\"{t.lower().replace(' ', '-')}\">{t}</h2>"
                out.append(line)
                out.append("<!-- /wp:heading -->")
            else:
                line = f"<h2>{t}</h2>"
                out.append(line)
            size += len(t)
        elif x < 0.86:
            tag = "ul" if r() < 0.75 else "ol"
            if wp:
                out.append("<!-- wp:list -->")
            out.append(f"<{tag} class=\"wp-block-list\">" if wp else f"<{tag}>")
            for _ in range(rng.randint(3, 10)):
                li = f"  <li>{text.sentence() if r() < 0.6 else text.title(2, 6)}</li>"
                out.append(li)
                size += len(li)
            out.append(f"</{tag}>")
            if wp:
                out.append("<!-- /wp:list -->")
        elif x < 0.95:
            cols = rng.randint(2, 5)
            out.append("<table class=\"data\">")
            out.append("<thead><tr>" + "".join(f"<th>{text.title(1, 2)}</th>" for _ in range(cols)) + "</tr></thead>")
            out.append("<tbody>")
            for _ in range(rng.randint(3, 15)):
                cells = []
                for c in range(cols):
                    if c and r() < 0.4:
                        cells.append(f"<td class=\"num\">{int(r() * 99999) / 100:.2f}</td>")
                    else:
                        cells.append(f"<td>{text.phrase(1, 4)}</td>")
                row = "<tr>" + "".join(cells) + "</tr>"
                out.append(row)
                size += len(row)
            out.append("</tbody>\n</table>")
        else:
            # A few reader comments.
            out.append("<div id=\"comments\" class=\"comments-area\">")
            for _ in range(rng.randint(1, 5)):
                who = text.name()
                n = int(r() * 10**6)
                day = 1 + int(r() * 28)
                out.append(f"<div class=\"comment\" id=\"comment-{n}\"><span class=\"comment-author\">{who}</span> "
                           f"<span class=\"says\">says:</span> <a href=\"#comment-{n}\">{MONTHS[n % 12]} {day}, 20{10 + n % 14}</a>")
                line = f"<p>{text.paragraph(sep)}</p></div>"
                out.append(line)
                size += len(line) + 40
            out.append("</div>")
    return out


TEXT_TAGS = ("<p>", "<h2", "  <li>")


def edit_body(plan, lines):
    """A near-replica's body: a few text lines edited, added or removed."""
    rng, text = plan.rng, plan.text
    lines = list(lines)
    text_idx = [i for i, ln in enumerate(lines) if ln.startswith(TEXT_TAGS)]
    if not text_idx:
        return lines + [f"<p>{text.paragraph()}</p>"]
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        i = rng.choice(text_idx)
        # Earlier insertions and deletions shift lines: edit text lines only.
        if i >= len(lines) or not lines[i].startswith(TEXT_TAGS):
            continue
        if op < 0.5:
            # Edit: the line's text replaced by a new sentence.
            ln = lines[i]
            tag_open = ln[: ln.index(">") + 1]
            tag_close = ln[ln.rindex("</"):]
            lines[i] = f"{tag_open}{text.sentence()}{tag_close}"
        elif op < 0.75:
            lines.insert(i, f"<p>{text.paragraph()}</p>")
        elif len(text_idx) > 4:
            del lines[i]
    if rng.random() < 0.3:
        lines.append(f"<p><em>Update:</em> {text.sentence()}</p>")
    return lines


# ------------------------------------------------------------ plan


class Plan:
    """Decides what gets crawled: sites, their pages and all copies, and
    keeps the ground truth."""

    def __init__(self, rng, text, target_bytes):
        self.rng = rng
        self.text = text
        # About 7 KB of compressed output per page fetched.
        est_pages = max(200, target_bytes // 7000)
        self.max_site = int(min(5000, max(30, est_pages // 40)))
        self.max_mirror_pages = max(40, est_pages // 25)  # pages one mirror set may add
        self.hosts_made = 0
        self.next_key = 0
        self.next_ip = 0
        # Planned counts (at decision time) that steer the rates.
        self.planned_docs = 0
        self.planned_exact = 0  # pages planned in exact-copy groups
        self.planned_near = 0
        # Ground truth, counted when a page is written.
        self.group_size = {}  # content key -> pages written with it
        self.docs = 0
        self.docs_in_groups = 0
        self.docs_near = 0
        self.origin_sites = 0
        self.kinds = {}

    def ip(self):
        self.next_ip += 1
        block = ("192.0.2", "198.51.100", "203.0.113")[self.next_ip % 3]
        return f"{block}.{1 + self.next_ip % 254}"

    def key(self):
        self.next_key += 1
        return self.next_key

    def exact_rate(self):
        return self.planned_exact / max(1, self.planned_docs)

    def near_rate(self):
        return self.planned_near / max(1, self.planned_docs)

    def want_exact(self):
        """Steering: copy more while below target, less above."""
        return self.exact_rate() < TARGET_EXACT

    def want_near(self):
        return self.near_rate() < TARGET_NEAR

    def site_size(self):
        u = 1.0 - self.rng.random()
        n = int(8 / u ** (1 / 1.1))
        return max(5, min(self.max_site, n))

    def written(self, key, kind, near):
        """Ground truth for one page written."""
        self.docs += 1
        c = self.group_size.get(key, 0) + 1
        self.group_size[key] = c
        if c == 2:
            self.docs_in_groups += 2
        elif c > 2:
            self.docs_in_groups += 1
        if near:
            self.docs_near += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


def make_page(plan, site, i, used_paths, body=True):
    """A new page of `site`. With body=False its body is left to the caller
    (p.body is None, p.target its size in bytes), drawn with another
    generator, as gen_crawl.py does in worker processes."""
    rng, text = plan.rng, plan.text
    p = Page()
    p.title = text.title()
    slug = "-".join(p.title.lower().split()[:5])
    sec = rng.choice(site.template.sections)
    if i == 0:
        path = "/"
    elif site.path_style == 0:
        path = f"/{sec}/{slug}.html"
    elif site.path_style == 1:
        path = f"/{sec}/{slug}/"
    else:
        path = f"/{sec}/view.php?id={1000 + i}"
    while path in used_paths:
        path = path.rstrip("/") + f"-{rng.randint(2, 99)}" + ("/" if path.endswith("/") else "")
    used_paths.add(path)
    p.path = path
    p.date = BASE_DATE - timedelta(days=rng.randint(0, 3000), minutes=rng.randint(0, 1440))
    # Body text bytes: log-normal, median ~7 KB; with the template a page is
    # 5-60 KB of HTML.
    target = min(scaled(30000), max(scaled(1500), int(rng.lognormvariate(math.log(scaled(5500)), 0.8))))
    p.target = target
    p.body = body_lines(plan, target, site.template) if body else None
    p.related = None
    p.key = plan.key()
    p.html = None
    return p


def render(template, page, date=None, body=None, post_id=None):
    return template.render(page.title, template.date_line(date or page.date),
                           body if body is not None else page.body, page.related,
                           template.post_base + (post_id or page.key))


# A fetch is (url, status, page, host, extra): `page` (with its HTML) for a
# 200, None otherwise; `extra` is the ground truth (content key, kind,
# whether a near-replica) for a 200 and the Location of a 301.

def cluster(plan, popular=False):
    """All fetches of one site and of the copies made of it, in crawl order:
    the site's pages (each maybe followed by aliases and same-site near
    copies), then its mirrors and reposts."""
    rng = plan.rng
    n = plan.site_size()
    if popular:
        n = rng.randint(30, min(400, max(30, plan.max_mirror_pages // 8)))
    site = Site(plan)
    plan.origin_sites += 1
    pages = []
    used = set()

    # Site-level decisions, steered by the running rates.
    alias = None
    if plan.want_exact() and rng.random() < 0.5:
        alias = rng.choice(["www", "https", "index", "session"])
        alias_frac = rng.uniform(0.1, 0.6)
    mirrors = []
    if popular:
        m = rng.randint(8, 40)
        m = max(2, min(m, plan.max_mirror_pages // max(1, n)))
        mirrors = [(MirrorHost(plan, site), rng.uniform(0.85, 1.0)) for _ in range(m)]
    elif plan.want_exact() and rng.random() < 0.35:
        m = 1 + int(rng.paretovariate(1.5)) - 1 + (rng.random() < 0.5)
        m = max(1, min(m, 12, plan.max_mirror_pages // max(1, n)))
        mirrors = [(MirrorHost(plan, site), rng.uniform(0.6, 1.0)) for _ in range(m)]
    reposts = []
    if plan.want_near() and rng.random() < 0.3:
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            reposts.append((Site(plan), rng.uniform(0.2, 0.9)))
    same_site_near = 0.12 if plan.want_near() else 0.02

    mirror_lists = [[] for _ in mirrors]
    repost_lists = [[] for _ in reposts]

    for i in range(n):
        p = make_page(plan, site, i, used)
        pages.append(p)
        plan.planned_docs += 1
        group = 1
        # Related links to earlier pages of the site: page-specific boilerplate.
        if i > 3 and rng.random() < 0.5:
            picks = rng.sample(pages[:-1], min(len(pages) - 1, rng.randint(3, 6)))
            p.related = [(q.path, q.title) for q in picks]
        p.html = render(site.template, p).encode("utf-8")
        p.digest = sha1_b32(p.html)
        yield (site.base() + p.path, 200, p, site, (p.key, "original", False))

        if alias and ((rng.random() < alias_frac and p.path != "/") or (alias == "index" and p.path == "/")):
            url = alias_url(site, p.path, alias, rng)
            if alias == "https" and rng.random() < 0.4:
                # The crawler got a redirect from the other scheme instead.
                yield (url, 301, None, site, site.base() + p.path)
            else:
                plan.planned_docs += 1
                group += 1
                yield (url, 200, p, site, (p.key, "alias-" + alias, False))

        mirrored = False
        for j, (mhost, frac) in enumerate(mirrors):
            if rng.random() < frac:
                plan.planned_docs += 1
                group += 1
                mirror_lists[j].append(p)
                mirrored = True

        if rng.random() < same_site_near and i > 0:
            # Same page under a second URL after an edit: new date, a few
            # lines changed (print version, later revision, category page).
            plan.planned_docs += 1
            plan.planned_near += 1
            q = Page()
            q.title, q.related, q.key = p.title, p.related, plan.key()
            q.path = p.path.rstrip("/") + rng.choice(["?print=1", "?rev=2", "/amp", "?lang=en"])
            q.date = p.date + timedelta(days=rng.randint(1, 400))
            q.html = render(site.template, p, date=q.date, body=edit_body(plan, p.body), post_id=q.key).encode("utf-8")
            q.digest = sha1_b32(q.html)
            yield (site.base() + q.path, 200, q, site, (q.key, "near-same-site", True))

        reposted = False
        for j, (rsite, frac) in enumerate(reposts):
            if rng.random() < frac:
                plan.planned_docs += 1
                plan.planned_near += 1
                repost_lists[j].append(p)
                reposted = True

        if group > 1:
            plan.planned_exact += group
        # Keep only what the copies still to come need (big sites are
        # large): later pages link to this one by path and title only.
        if not mirrored:
            p.html = None
        if not reposted:
            p.body = None

    for j, (mhost, _) in enumerate(mirrors):
        for p in mirror_lists[j]:
            yield (mhost.base() + mhost.prefix + p.path, 200, p, mhost, (p.key, "mirror", False))

    for j, (rsite, _) in enumerate(reposts):
        for p in repost_lists[j]:
            q = Page()
            q.title, q.key = p.title, plan.key()
            q.related = None
            q.path = f"/{rng.choice(rsite.template.sections)}/{'-'.join(p.title.lower().split()[:4])}-{q.key}.html"
            q.date = p.date + timedelta(days=rng.randint(0, 60))
            body = edit_body(plan, p.body)
            if rng.random() < 0.5:
                body.append(f"<p>Originally published at <a href=\"{site.base()}{p.path}\">{html_escape(site.name)}</a>.</p>")
            q.html = render(rsite.template, q, body=body).encode("utf-8")
            q.digest = sha1_b32(q.html)
            yield (rsite.base() + q.path, 200, q, rsite, (q.key, "near-repost", True))


class MirrorHost:
    """A host that serves copies of another site's pages, byte for byte,
    under its own name and often under a path prefix."""

    def __init__(self, plan, site):
        rng, text = plan.rng, plan.text
        kind = rng.randrange(3)
        name = text.name().lower()
        tld = rng.choice(TLDS)
        if kind == 0:
            self.host = f"mirror.{name}.{tld}"
            self.prefix = f"/pub/{site.name.lower()}"
        elif kind == 1:
            self.host = f"{site.name.lower()}.{name}.{tld}"
            self.prefix = ""
        else:
            self.host = f"www.{name}.{tld}"
            self.prefix = f"/mirrors/{site.domain}"
        plan.hosts_made += 1
        self.scheme = rng.choice(("http", "https"))
        self.server = rng.choice(SERVERS)
        self.ip = plan.ip()

    def base(self):
        return f"{self.scheme}://{self.host}"


def alias_url(site, path, alias, rng):
    if alias == "www":
        host = site.domain if site.www else "www." + site.domain
        return f"{site.scheme}://{host}{path}"
    if alias == "https":
        other = "http" if site.scheme == "https" else "https"
        return f"{other}://{site.host}{path}"
    if alias == "index":
        if path.endswith("/"):
            return f"{site.base()}{path}index.html"
        return f"{site.base()}{path}?"
    sid = "%032x" % rng.getrandbits(128)
    sep = "&" if "?" in path else "?"
    return f"{site.base()}{path}{sep}sessionid={sid}"


def sha1_b32(data):
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


# ------------------------------------------------------------ WARC records


def record_id(rng):
    return f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>"


def warc_record(fields, block):
    head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + \
        f"Content-Length: {len(block)}\r\n\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


def http_date(when):
    return when.strftime("%a, %d %b %Y %H:%M:%S GMT")


def warc_date(when):
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


NOT_FOUND_BODY = ("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n<body>\n"
                  "<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n"
                  "<hr>\n<address>{server} Server at {host} Port {port}</address>\n</body></html>\n")

MOVED_BODY = ("<!DOCTYPE html>\n<html><head><title>301 Moved Permanently</title></head>\n<body>\n"
              "<h1>Moved Permanently</h1>\n<p>The document has moved <a href=\"{loc}\">here</a>.</p>\n"
              "</body></html>\n")


class Writer:
    """Builds records and writes them as gzip members.

    Records are compressed in batches of COMPRESS_BATCH, in worker threads
    when --jobs > 1 (zlib releases the GIL). The size estimate that decides
    when to stop counts the compressed size of every batch but the last
    LAG ones, whatever the number of threads, so the output does not
    depend on --jobs or on timing.
    """

    LAG = 4
    # Named in the warcinfo record (scripts that import this one set theirs).
    SOFTWARE = "gen_corpus.py/" + SCRIPT_VERSION

    def __init__(self, plan, path, jobs):
        self.plan = plan
        self.rng = plan.rng
        self.path = path
        self.f = open(path + ".part", "wb")
        self.compressed = 0  # bytes written or ready to write
        self.uncompressed = 0
        self.records = 0
        self.record_types = {}
        self.statuses = {}
        self.pending = []  # records of the batch being filled
        self.pending_bytes = 0
        self.out = []  # compressed members not yet written
        self.out_bytes = 0
        self.pool = ThreadPoolExecutor(jobs) if jobs > 1 else None
        self.in_flight = []  # futures or results of batches, oldest first
        self.batches = 0  # batches submitted
        self.counted = 0  # batches whose sizes are counted
        self.counted_in = 0  # their uncompressed bytes
        self.counted_out = 0  # their compressed bytes
        self.now = BASE_DATE

    def tick(self):
        self.now += timedelta(milliseconds=self.rng.randint(20, 1500))
        return self.now

    def add(self, rtype, data):
        self.records += 1
        self.record_types[rtype] = self.record_types.get(rtype, 0) + 1
        self.uncompressed += len(data)
        self.pending.append(data)
        self.pending_bytes += len(data)

    def batch_full(self):
        """Whether a batch boundary was reached; if so the batch is sent."""
        if len(self.pending) < COMPRESS_BATCH and self.pending_bytes < WRITE_BLOCK // 4:
            return False
        self.submit()
        return True

    def submit(self):
        if not self.pending:
            return
        batch, self.pending, self.pending_bytes = self.pending, [], 0
        self.batches += 1
        if self.pool:
            self.in_flight.append(self.pool.submit(compress_batch, batch))
        else:
            self.in_flight.append(compress_batch(batch))
        self.settle(self.batches - self.LAG)

    def settle(self, upto):
        """Writes out, in order, the batches up to number `upto`."""
        while self.counted < upto and self.in_flight:
            item = self.in_flight.pop(0)
            members, size = item.result() if self.pool else item
            self.counted += 1
            self.counted_in += size
            for m in members:
                self.out.append(m)
                self.out_bytes += len(m)
                self.counted_out += len(m)
            if self.out_bytes >= WRITE_BLOCK:
                self.write_out()
        self.compressed = self.counted_out

    def write_out(self):
        self.f.write(b"".join(self.out))
        self.out, self.out_bytes = [], 0

    def close(self):
        self.submit()
        self.settle(self.batches)
        self.write_out()
        self.f.close()
        if self.pool:
            self.pool.shutdown()
        os.replace(self.path + ".part", self.path)

    def size_estimate(self):
        """Compressed bytes of the counted batches, plus the rest at their
        compression ratio."""
        ratio = self.counted_out / self.counted_in if self.counted_in else 0.4
        return self.counted_out + int((self.uncompressed - self.counted_in) * ratio)

    # -- records

    def warcinfo(self, filename):
        body = ("software: " + self.SOFTWARE + " (synthetic crawl)\r\n"
                "format: WARC File Format 1.1\r\n"
                "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
                "robots: obey\r\n"
                f"http-header-user-agent: {USER_AGENT}\r\n"
                "isPartOf: synthetic-crawl\r\n"
                "description: Synthetic web crawl for benchmarking copy detection\r\n").encode()
        fields = [("WARC-Type", "warcinfo"), ("WARC-Date", warc_date(self.now)),
                  ("WARC-Filename", filename), ("WARC-Record-ID", record_id(self.rng)),
                  ("Content-Type", "application/warc-fields")]
        self.add("warcinfo", warc_record(fields, body))

    def fetch(self, url, status, page, host, extra):
        when = self.tick()
        wdate = warc_date(when)
        resp_id = record_id(self.rng)
        scheme_end = url.index("://") + 3
        slash = url.find("/", scheme_end)
        hostname = url[scheme_end:slash] if slash >= 0 else url[scheme_end:]
        target = url[slash:] if slash >= 0 else "/"
        req = (f"GET {target} HTTP/1.1\r\nHost: {hostname}\r\nUser-Agent: {USER_AGENT}\r\n"
               "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
               "Accept-Language: en-US,en;q=0.5\r\nConnection: close\r\n\r\n").encode()
        self.add("request", warc_record([
            ("WARC-Type", "request"), ("WARC-Record-ID", record_id(self.rng)),
            ("WARC-Date", wdate), ("WARC-Target-URI", url), ("WARC-Concurrent-To", resp_id),
            ("WARC-Block-Digest", "sha1:" + sha1_b32(req)),
            ("Content-Type", "application/http; msgtype=request")], req))

        if status == 200:
            payload, pdigest = page.html, page.digest
            head = (f"HTTP/1.1 200 OK\r\nDate: {http_date(when)}\r\nServer: {host.server}\r\n"
                    f"Last-Modified: {http_date(page.date)}\r\n"
                    "Content-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n")
        elif status == 404:
            payload = NOT_FOUND_BODY.format(server=host.server.split()[0], host=hostname,
                                            port=443 if url.startswith("https") else 80).encode()
            pdigest = sha1_b32(payload)
            head = (f"HTTP/1.1 404 Not Found\r\nDate: {http_date(when)}\r\nServer: {host.server}\r\n"
                    "Content-Type: text/html; charset=iso-8859-1\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n")
        else:
            loc = extra
            payload = MOVED_BODY.format(loc=loc).encode()
            pdigest = sha1_b32(payload)
            head = (f"HTTP/1.1 301 Moved Permanently\r\nDate: {http_date(when)}\r\nServer: {host.server}\r\n"
                    f"Location: {loc}\r\nContent-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n")
        block = head.encode() + payload
        self.statuses[status] = self.statuses.get(status, 0) + 1
        self.add("response", warc_record([
            ("WARC-Type", "response"), ("WARC-Record-ID", resp_id), ("WARC-Date", wdate),
            ("WARC-Target-URI", url), ("WARC-IP-Address", host.ip),
            ("WARC-Block-Digest", "sha1:" + sha1_b32(block)),
            ("WARC-Payload-Digest", "sha1:" + pdigest),
            ("Content-Type", "application/http; msgtype=response")], block))

        if self.rng.random() < RATE_METADATA:
            links = "".join(f"outlink: {url.rsplit('/', 1)[0]}/{self.plan.text.phrase(1, 2).replace(' ', '-')} L a/@href\r\n"
                            for _ in range(self.rng.randint(1, 6)))
            body = (f"via: {url.rsplit('/', 1)[0]}/\r\nhopsFromSeed: {'L' * self.rng.randint(1, 4)}\r\n"
                    f"fetchTimeMs: {self.rng.randint(30, 4000)}\r\ncharsetForLinkExtraction: UTF-8\r\n"
                    + links).encode()
            self.add("metadata", warc_record([
                ("WARC-Type", "metadata"), ("WARC-Record-ID", record_id(self.rng)),
                ("WARC-Date", wdate), ("WARC-Target-URI", url), ("WARC-Concurrent-To", resp_id),
                ("Content-Type", "application/warc-fields")], body))


def compress_batch(records):
    out = []
    for data in records:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        out.append(c.compress(data) + c.flush())
    return out, sum(map(len, records))


# ------------------------------------------------------------ main


def main(argv):
    args = parse_args(argv)
    started = time.monotonic()
    global PAGE_SCALE
    PAGE_SCALE = args.page_scale
    rng = random.Random(args.seed)
    if args.words:
        vocab = file_vocabulary(args.words)
    else:
        vocab = builtin_vocabulary(rng, 50_000)
    text = Text(rng, vocab)
    plan = Plan(rng, text, args.size)
    writer = Writer(plan, args.out, max(1, args.jobs))
    writer.warcinfo(os.path.basename(args.out))

    def progress(final=False):
        el = time.monotonic() - started
        mb = writer.compressed / 2**20
        msg = (f"gen_corpus: {mb:8.1f} MiB compressed ({writer.uncompressed / 2**20:.0f} MiB raw), "
               f"{plan.docs} pages, {plan.hosts_made} hosts, {el:.0f} s, {mb / max(el, 1e-9):.1f} MiB/s")
        print(msg + ("" if final else "\r"), end="\n" if final else "", file=sys.stderr, flush=True)

    # A few clusters crawled at once, as a crawler interleaves hosts.
    active = []
    last_report = started
    done = False
    while not done:
        while len(active) < 6:
            popular = rng.random() < 0.02 and plan.want_exact()
            active.append(cluster(plan, popular))
        i = rng.randrange(len(active))
        try:
            url, status, page, host, extra = next(active[i])
        except StopIteration:
            active.pop(i)
            continue
        # Now and then the crawler follows a dead link or a redirect.
        x = rng.random()
        if x < RATE_404:
            bad = url.rsplit("/", 1)[0] + "/" + text.phrase(1, 2).replace(" ", "-") + ".html"
            writer.fetch(bad, 404, None, host, None)
        elif x < RATE_404 + RATE_REDIRECT:
            writer.fetch(url.rstrip("/") + "/old", 301, None, host, url)
        writer.fetch(url, status, page, host, extra)
        if status == 200:
            key, kind, near = extra
            plan.written(key, kind, near)
        if writer.batch_full() and writer.size_estimate() >= args.size:
            done = True
        now = time.monotonic()
        if not args.quiet and now - last_report > 2:
            last_report = now
            progress()
    writer.close()
    elapsed = time.monotonic() - started
    if not args.quiet:
        progress(final=True)

    write_summary(summarize(plan, writer, args, elapsed), args.stats)


def write_summary(summary, path):
    """Prints the ground truth to stderr and writes it to `path` if given,
    renamed into place once complete: a stats file means a finished corpus."""
    print(json.dumps(summary, indent=2), file=sys.stderr)
    if path:
        with open(path + ".part", "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
        os.replace(path + ".part", path)


def summarize(plan, writer, args, elapsed):
    groups = sum(1 for c in plan.group_size.values() if c >= 2)
    return {
        "generator_version": SCRIPT_VERSION,
        "seed": args.seed,
        "page_scale": args.page_scale,
        "target_size": args.size,
        "words": os.path.basename(args.words) if args.words else "builtin",
        "compressed_bytes": writer.compressed,
        "uncompressed_bytes": writer.uncompressed,
        "records": writer.records,
        "record_types": writer.record_types,
        "http_statuses": {str(k): v for k, v in sorted(writer.statuses.items())},
        "pages": plan.docs,
        "hosts": plan.hosts_made,
        "origin_sites": plan.origin_sites,
        "largest_site_allowed": plan.max_site,
        "page_kinds": plan.kinds,
        "exact_groups": groups,
        "pages_in_exact_groups": plan.docs_in_groups,
        "exact_copy_rate": round(plan.docs_in_groups / max(1, plan.docs), 4),
        "exact_copies_removable": plan.docs - len(plan.group_size),
        "removable_rate": round((plan.docs - len(plan.group_size)) / max(1, plan.docs), 4),
        "near_replicas": plan.docs_near,
        "near_replica_rate": round(plan.docs_near / max(1, plan.docs), 4),
        "seconds": round(elapsed, 1),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
