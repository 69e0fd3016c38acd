#!/usr/bin/env python3
"""Generate a synthetic crawl with the replication profile of the paper's
Figure 1, as per-record gzip WARC/1.1 files.

Usage:
  python3 scripts/gen_crawl.py --out DIR --size 2500M [--files N] [--seed N]
                               [--words FILE] [--stats FILE] [--jobs N]
  python3 scripts/gen_crawl.py --out FILE.warc.gz --size 100M ...

Shivakumar & Garcia-Molina (1998, Figure 1) found that about 64% of the
pages of a 24-million-page crawl had no copy, about 18% had exactly one,
and the rest were in groups of three to a thousand or more copies, with
about 5% of pages in groups of 10 to 100. This crawl is built to that
profile:

- 64% of pages are unique;
- 18% are in exact-replica pairs: the same bytes under a second URL, a
  server or URL alias of the same host or a mirror host;
- 18% are in near-replica groups of 3 to 1,000 pages (sizes drawn from a
  power law, P(size >= s) = 3 / s, so that about a third of these pages
  are in groups of 100 or more): a page reposted on other hosts, each
  copy with the reposting host's template, its own date and a few lines
  edited, added or removed;
- every page carries its host's template (head, navigation, sidebar,
  footer): boilerplate lines shared by all pages of a host.

Copies are fetched later than their original, spread over the next part
of the crawl, so with --files N (files crawl-00000.warc.gz ... in the
--out directory, of about --size / N each, as a crawler rolls its output
files) the replicas of a page are often in other files.

Sites, templates, page bodies, near-replica edits and the WARC records
(request and response, a few 404s, redirects and metadata records) are
those of gen_corpus.py, imported from it. The output depends only on
--seed, --size, --files, --words and the versions of the two scripts,
not on --jobs. The ground truth (pages, the unique and one-replica
shares, the histogram of group sizes) is printed to stderr at the end and
written as JSON to --stats; the stats file is written last, so its
presence means the crawl is complete.

Only the Python standard library is used.
"""

import argparse
import collections
import gc as garbage_collector
import heapq
import itertools
import multiprocessing
import os
import random
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_corpus as gc  # noqa: E402

SCRIPT_VERSION = "1"

# Shares of pages (Figure 1): unique, in an exact-replica pair, and in a
# near-replica group of 3 or more (the rest).
TARGET_UNIQUE = 0.64
TARGET_PAIR = 0.18
TARGET_GROUP = 1.0 - TARGET_UNIQUE - TARGET_PAIR
GROUP_MIN = 3
GROUP_MAX = 1000

# About 7 KB of compressed output per page fetched (as in gen_corpus.py);
# used to scale the largest group and the copy delay to --size.
BYTES_PER_PAGE = 7000
# Copies are fetched within this many fetches after their original (at
# most), so that the copies waiting in memory stay bounded.
MAX_DELAY = 50_000
# Sites crawled at once, and recent sites that near-replicas are reposted to.
ACTIVE_SITES = 6
REPOST_SITES = 400


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Generate a synthetic crawl with the replication profile of Figure 1 "
                    "(Shivakumar & Garcia-Molina 1998) as per-record gzip WARC files.")
    p.add_argument("--out", required=True,
                   help="output directory (files crawl-00000.warc.gz, ...), or one FILE.warc.gz "
                        "with --files 1")
    p.add_argument("--size", required=True, type=gc.parse_size,
                   help="target compressed size of the whole crawl, e.g. 100M, 2500M, 10G")
    p.add_argument("--files", type=int, default=1, help="number of output files (default 1)")
    gc.add_common_args(p, jobs="processes making pages and threads compressing them")
    args = p.parse_args(argv)
    if args.files < 1:
        p.error("--files must be at least 1")
    if args.out.endswith(".warc.gz") and args.files != 1:
        p.error("--out FILE.warc.gz writes one file: give a directory with --files N")
    return args


class CrawlPlan(gc.Plan):
    """gen_corpus.py's plan (sites, keys, addresses, exact-copy accounting)
    with the Figure-1 roles on top: every original page is unique, the
    first of an exact pair, or the original of a near-replica group."""

    def __init__(self, rng, text, target_bytes):
        super().__init__(rng, text, target_bytes)
        est_pages = max(200, target_bytes // BYTES_PER_PAGE)
        # A group of 1,000 in a crawl of 14,000 pages would be most of the
        # group share: small crawls get smaller largest groups.
        self.group_max = max(GROUP_MIN, min(GROUP_MAX, est_pages // 40))
        self.delay = max(50, min(MAX_DELAY, est_pages // 8))
        self.planned = {"unique": 0, "pair": 0, "group": 0}
        # family (the original's key) -> [role, pages written]
        self.families = {}
        # Set once the crawl is full: no more original pages.
        self.stopping = False

    def role(self):
        """The role of the next original page: the one furthest below its
        share of the pages planned so far, with a little noise so that the
        roles do not come in a fixed cycle."""
        total = sum(self.planned.values()) + 1
        best, best_gap = None, None
        for name, share in (("unique", TARGET_UNIQUE), ("pair", TARGET_PAIR), ("group", TARGET_GROUP)):
            gap = share * total - self.planned[name] + self.rng.random() * 2
            if best is None or gap > best_gap:
                best, best_gap = name, gap
        return best

    def near_group_size(self):
        """Pages in a near-replica group: P(size >= s) = GROUP_MIN / s,
        drawn again above the largest size."""
        while True:
            s = int(GROUP_MIN / (1.0 - self.rng.random()))
            if s <= self.group_max:
                return s

    def family_written(self, family, role):
        f = self.families.get(family)
        if f is None:
            self.families[family] = [role, 1]
        else:
            f[1] += 1


def site_pages(plan, site):
    """The original pages of one site, in crawl order, without their bodies
    (made by `page_html`)."""
    rng = plan.rng
    used = set()
    links = []  # (path, title) of earlier pages, for related-post links
    for i in range(plan.site_size()):
        p = gc.make_page(plan, site, i, used, body=False)
        if i > 3 and rng.random() < 0.5:
            p.related = rng.sample(links, min(len(links), rng.randint(3, 6)))
        links.append((p.path, p.title))
        yield p


def near_copy(plan, page, site, same_site):
    """A near-replica of `page` on `site` (with that site's template), under
    a new URL and with a later date; its body is made by `page_html`."""
    rng = plan.rng
    q = gc.Page()
    q.title, q.key = page.title, plan.key()
    q.html = q.digest = None
    q.date = page.date + timedelta(days=rng.randint(0, 400))
    if same_site:
        q.related = page.related
        sep = "&" if "?" in page.path else "?"
        q.path = page.path + sep + rng.choice(["print=1", "rev=2", "amp=1", "lang=en"]) + f"&v={q.key}"
    else:
        q.related = None
        q.path = f"/{rng.choice(site.template.sections)}/{'-'.join(page.title.lower().split()[:4])}-{q.key}.html"
    return q


# The text generator, made before the worker processes are forked.
TEXT = None


class PageRandom:
    """What gen_corpus.py's body_lines and edit_body need of a plan: a
    generator and the text, here one generator per page."""

    def __init__(self, rng, text):
        self.rng = rng
        self.text = text


def page_html(job):
    """The HTML and digest of an original page and of its near-replicas.

    The bodies are the expensive part of the crawl, so they are made in
    worker processes, each page with its own generator seeded by the crawl's
    seed and the page's key: the output does not depend on which process
    makes which page, nor on how many there are."""
    seed, p, template, copies = job
    rng = random.Random(seed * 1_000_000_007 + p.key)
    saved, TEXT.rng = TEXT.rng, rng
    try:
        plan = PageRandom(rng, TEXT)
        p.body = gc.body_lines(plan, p.target, template)
        html = gc.render(template, p).encode("utf-8")
        out = [(html, gc.sha1_b32(html))]
        for q, qtemplate in copies:
            body = gc.edit_body(plan, p.body)
            html = gc.render(qtemplate, q, body=body).encode("utf-8")
            out.append((html, gc.sha1_b32(html)))
    finally:
        TEXT.rng = saved
    return out


def page_html_batch(jobs):
    return [page_html(job) for job in jobs]


class Pages:
    """Page jobs sent to the worker processes in batches of BATCH (one
    message each way per batch: pages are small, and a batch pickles the
    templates its pages share once). A job's result is asked for by its
    handle; a batch not yet full is sent when one of its results is needed.
    A batch's results go to its handles as soon as they are fetched, and are
    kept only by them: the copies still to write hold their original's
    result, nothing else does. With no pool, jobs are made at once, in the
    same order."""

    BATCH = 32

    def __init__(self, pool):
        self.pool = pool
        self.pending = []  # jobs of the batch being filled
        self.handles = []  # and their handles
        self.sent = {}  # batch number -> (AsyncResult, handles) until fetched
        self.batches = 0

    def submit(self, job):
        if not self.pool:
            return Done(page_html(job))
        handle = Handle(self, self.batches)
        self.pending.append(job)
        self.handles.append(handle)
        if len(self.pending) == self.BATCH:
            self.send()
        return handle

    def send(self):
        self.sent[self.batches] = (self.pool.apply_async(page_html_batch, (self.pending,)), self.handles)
        self.batches += 1
        self.pending, self.handles = [], []

    def fetch(self, batch):
        if batch == self.batches:
            self.send()
        future, handles = self.sent.pop(batch)
        for h, value in zip(handles, future.get()):
            h.value = value


class Handle:
    __slots__ = ("pages", "batch", "value")

    def __init__(self, pages, batch):
        self.pages, self.batch, self.value = pages, batch, None

    def get(self):
        if self.value is None:
            self.pages.fetch(self.batch)
        return self.value


class Done:
    """A page job already made (with --jobs 1)."""

    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


class Fetch:
    """One fetch of the crawl, decided ahead of its writing."""

    __slots__ = ("url", "status", "host", "location", "page", "job", "index", "family", "role", "kind", "near")

    def __init__(self, url, status, host, location=None, page=None, job=None, index=0,
                 family=None, role=None, kind=None, near=False):
        self.url, self.status, self.host, self.location = url, status, host, location
        self.page, self.job, self.index = page, job, index
        self.family, self.role, self.kind, self.near = family, role, kind, near


def decide(plan, seed, submit):
    """The crawl's fetches in order: original pages of a few sites crawled
    at once, with the copies of each scheduled over the fetches after it,
    and now and then a dead link or a redirect. Page bodies are submitted
    to `submit` as soon as a page is decided."""
    rng, text = plan.rng, plan.text
    waiting = []  # (fetch number, sequence, Fetch) of copies
    seq = 0
    fetches = 0
    active = []  # page iterators of the sites being crawled
    recent = []  # sites that near-replicas are reposted to

    def schedule(f):
        nonlocal seq
        seq += 1
        heapq.heappush(waiting, (fetches + 1 + int(rng.random() * plan.delay), seq, f))

    def original():
        """The next original page and its copies; None when a site ends."""
        while len(active) < ACTIVE_SITES:
            site = gc.Site(plan)
            plan.origin_sites += 1
            recent.append(site)
            if len(recent) > REPOST_SITES:
                recent.pop(0)
            active.append((site, site_pages(plan, site)))
        i = int(rng.random() * len(active))
        site, pages = active[i]
        p = next(pages, None)
        if p is None:
            active.pop(i)
            return None
        role = plan.role()
        copies = []
        if role == "unique":
            plan.planned["unique"] += 1
        elif role == "pair":
            plan.planned["pair"] += 2
            if rng.random() < 0.5:
                alias = rng.choice(("www", "https", "index", "session"))
                url, host, kind = gc.alias_url(site, p.path, alias, rng), site, "alias-" + alias
            else:
                host = gc.MirrorHost(plan, site)
                url, kind = host.base() + host.prefix + p.path, "mirror"
            copies.append(Fetch(url, 200, host, page=p, family=p.key, role=role, kind=kind))
        else:
            n = plan.near_group_size()
            plan.planned["group"] += n
            for _ in range(n - 1):
                same = rng.random() < 0.1
                host = site if same else recent[int(rng.random() * len(recent))]
                q = near_copy(plan, p, host, same)
                copies.append(Fetch(host.base() + q.path, 200, host, page=q, family=p.key, role=role,
                                    kind="near-same-site" if same else "near-repost", near=True))
        job = submit((seed, p, site.template, [(c.page, c.host.template) for c in copies if c.near]))
        for k, c in enumerate(copies):
            c.job = job
            c.index = k + 1 if c.near else 0
            schedule(c)
        return Fetch(site.base() + p.path, 200, site, page=p, job=job, family=p.key, role=role,
                     kind="original")

    while True:
        if waiting and waiting[0][0] <= fetches + 1:
            f = heapq.heappop(waiting)[2]
        else:
            f = original()
            if f is None:
                continue
        fetches += 1
        # Now and then the crawler follows a dead link or a redirect.
        x = rng.random()
        if x < gc.RATE_404:
            bad = f.url.rsplit("/", 1)[0] + "/" + text.phrase(1, 2).replace(" ", "-") + ".html"
            yield Fetch(bad, 404, f.host)
        elif x < gc.RATE_404 + gc.RATE_REDIRECT:
            yield Fetch(f.url.rstrip("/") + "/old", 301, f.host, location=f.url)
        yield f
        if plan.stopping:
            break
    # The copies still waiting, so that the groups are whole.
    while waiting:
        yield heapq.heappop(waiting)[2]


class Crawl:
    """Writes the crawl, rolling to the next file at about --size / --files."""

    def __init__(self, plan, args):
        self.plan = plan
        self.args = args
        self.single = args.out.endswith(".warc.gz")
        if not self.single:
            os.makedirs(args.out, exist_ok=True)
        self.per_file = args.size / args.files
        self.done_bytes = 0  # compressed bytes of the closed files
        self.files = []  # (name, compressed, uncompressed, records) of the closed files
        self.totals = {"records": 0, "uncompressed": 0, "record_types": {}, "statuses": {}}
        self.writer = None
        self.open_next()

    def path(self, index):
        if self.single:
            return self.args.out
        return os.path.join(self.args.out, f"crawl-{index:05d}.warc.gz")

    def open_next(self):
        path = self.path(len(self.files))
        now = self.writer.now if self.writer else gc.BASE_DATE
        self.writer = gc.Writer(self.plan, path, max(1, self.args.jobs))
        self.writer.SOFTWARE = "gen_crawl.py/" + SCRIPT_VERSION
        self.writer.now = now
        self.writer.warcinfo(os.path.basename(path))

    def close_current(self):
        w = self.writer
        w.close()
        self.done_bytes += w.compressed
        self.files.append((os.path.basename(w.path), w.compressed, w.uncompressed, w.records))
        t = self.totals
        t["records"] += w.records
        t["uncompressed"] += w.uncompressed
        for src, dst in ((w.record_types, t["record_types"]), (w.statuses, t["statuses"])):
            for k, v in src.items():
                dst[k] = dst.get(k, 0) + v

    def after_fetch(self):
        """At a batch boundary: rolls to the next file when this one is
        full. Whether the whole crawl is full."""
        w = self.writer
        if not w.batch_full():
            return False
        if self.done_bytes + w.size_estimate() >= self.args.size:
            return True
        if len(self.files) < self.args.files - 1 and w.size_estimate() >= self.per_file:
            self.close_current()
            self.open_next()
        return False

    def compressed(self):
        return self.done_bytes + self.writer.compressed

    def uncompressed(self):
        return self.totals["uncompressed"] + self.writer.uncompressed


# Fetches decided ahead of the one written, so that the worker processes
# have pages to make (a constant: the output does not depend on it).
LOOKAHEAD = 256


def main(argv):
    global TEXT
    args = parse_args(argv)
    started = time.monotonic()
    gc.PAGE_SCALE = args.page_scale
    rng = random.Random(args.seed)
    vocab = gc.file_vocabulary(args.words) if args.words else gc.builtin_vocabulary(rng, 50_000)
    text = gc.Text(rng, vocab)
    TEXT = text
    plan = CrawlPlan(rng, text, args.size)
    jobs = max(1, args.jobs)
    # The workers share the text generator's pools with this process: out of
    # the collector's sight, they are not copied by its passes.
    garbage_collector.freeze()
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    crawl = Crawl(plan, args)

    submit = Pages(pool).submit

    def progress(final=False):
        el = time.monotonic() - started
        mb = crawl.compressed() / 2**20
        msg = (f"gen_crawl: {mb:8.1f} MiB compressed ({crawl.uncompressed() / 2**20:.0f} MiB raw), "
               f"file {len(crawl.files) + 1}/{args.files}, {plan.docs} pages, {el:.0f} s, "
               f"{mb / max(el, 1e-9):.1f} MiB/s")
        print(msg + ("" if final else "\r"), end="\n" if final else "", file=sys.stderr, flush=True)

    def write(f):
        if f.status == 200:
            if f.page.html is None:
                f.page.html, f.page.digest = f.job.get()[f.index]
            crawl.writer.fetch(f.url, 200, f.page, f.host, None)
            plan.written(f.page.key, f.kind, f.near)
            plan.family_written(f.family, f.role)
            if f.kind == "original" and f.role != "pair":
                # Only an exact copy still needs the original's bytes.
                f.page.html = None
        else:
            crawl.writer.fetch(f.url, f.status, None, f.host, f.location)

    stream = decide(plan, args.seed, submit)
    ahead = collections.deque(itertools.islice(stream, LOOKAHEAD))
    last_report = started
    while ahead:
        f = ahead.popleft()
        write(f)
        nxt = next(stream, None)
        if nxt is not None:
            ahead.append(nxt)
        if crawl.after_fetch():
            break
        now = time.monotonic()
        if not args.quiet and now - last_report > 2:
            last_report = now
            progress()
    # Full: no more originals; the copies decided of the pages written are
    # written too (the crawl passes --size by about that much).
    plan.stopping = True
    for f in itertools.chain(ahead, stream):
        if f.status == 200 and f.kind != "original" and f.family in plan.families:
            write(f)
            crawl.writer.batch_full()
    crawl.close_current()
    if pool:
        pool.close()
        pool.join()
    elapsed = time.monotonic() - started
    if not args.quiet:
        progress(final=True)

    gc.write_summary(summarize(plan, crawl, args, elapsed), args.stats)


def summarize(plan, crawl, args, elapsed):
    pages = plan.docs
    unique = pair_pages = group_pages = 0
    sizes = {}  # near-replica group size -> groups
    for role, n in plan.families.values():
        if n == 1:
            unique += 1
        elif role == "pair":
            pair_pages += n
        else:
            group_pages += n
            sizes[n] = sizes.get(n, 0) + 1
    # Pages by the number of copies of their family, in the bins of Figure 1.
    bins = {"1": 0, "2": 0, "3-9": 0, "10-99": 0, "100-999": 0, "1000+": 0}
    for _, n in plan.families.values():
        key = ("1" if n == 1 else "2" if n == 2 else "3-9" if n < 10 else "10-99" if n < 100
               else "100-999" if n < 1000 else "1000+")
        bins[key] += n
    exact_groups = sum(1 for c in plan.group_size.values() if c >= 2)
    t = crawl.totals
    return {
        "generator": "gen_crawl.py",
        "generator_version": SCRIPT_VERSION,
        "seed": args.seed,
        "page_scale": args.page_scale,
        "target_size": args.size,
        "words": os.path.basename(args.words) if args.words else "builtin",
        "files": [{"name": n, "compressed_bytes": c, "uncompressed_bytes": u, "records": r}
                  for n, c, u, r in crawl.files],
        "compressed_bytes": crawl.done_bytes,
        "uncompressed_bytes": t["uncompressed"],
        "records": t["records"],
        "record_types": t["record_types"],
        "http_statuses": {str(k): v for k, v in sorted(t["statuses"].items())},
        "pages": pages,
        "hosts": plan.hosts_made,
        "unique_pages": unique,
        "unique_share": round(unique / max(1, pages), 4),
        "one_replica_pages": pair_pages,
        "one_replica_share": round(pair_pages / max(1, pages), 4),
        "near_group_pages": group_pages,
        "near_group_share": round(group_pages / max(1, pages), 4),
        "near_groups": sum(sizes.values()),
        "largest_group_allowed": plan.group_max,
        "near_group_sizes": {str(k): v for k, v in sorted(sizes.items())},
        "pages_by_copies": {k: {"pages": v, "share": round(v / max(1, pages), 4)} for k, v in bins.items()},
        "page_kinds": plan.kinds,
        # Byte-identical pages, as overlap's exact stage counts them.
        "exact_groups": exact_groups,
        "pages_in_exact_groups": plan.docs_in_groups,
        "exact_copies_removable": pages - len(plan.group_size),
        "near_replicas": plan.docs_near,
        "seconds": round(elapsed, 1),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
