#!/usr/bin/env python3
"""Recompute an `overlap report` from docs.csv and overlap.csv, independently
of the tool, and compare with report.json, the CSV tables and docs.csv's
near_group column.

Usage: python3 scripts/check_report.py OUT_DIR

Exits 0 when every number agrees, 1 with one line per difference
otherwise. Standard library only. The definitions are those of
src/stages/report/mod.rs, computed the plain way: replica sets by breadth-first
search instead of union-find, host replication by listing every
document's replicas, aliases by comparing URLs with urllib. The fuzzy
signature is not recomputed (it needs the inputs' text); its uniqueness
columns are checked against the signatures flags.csv gives.
"""

import csv
import json
import os
import sys
from collections import defaultdict, deque
from urllib.parse import urlsplit

BINS = ["1", "2", "3", "4-10", "11-100", "101-1000", ">1000"]
INDEX_PAGES = {
    "index.html", "index.htm", "index.shtml", "index.php", "index.asp", "index.aspx",
    "index.jsp", "index.cgi", "default.htm", "default.html", "default.asp", "default.aspx",
}
MIRROR_SHARE, MIRROR_MIN_DOCS = 0.5, 2
DIAMETER_MAX_CENTERS, DIAMETER_MAX_STEPS, CHAIN_DENSITY = 2000, 50_000_000, 0.5


def pct(part, whole):
    return 0.0 if whole == 0 else part * 100.0 / whole


def bin_of(n):
    if n <= 1:
        return 0
    if n <= 3:
        return n - 1
    if n <= 10:
        return 3
    if n <= 100:
        return 4
    if n <= 1000:
        return 5
    return 6


class Checker:
    def __init__(self):
        self.errors = []

    def eq(self, what, got, want):
        if isinstance(want, float) or isinstance(got, float):
            ok = got is not None and abs(float(got) - float(want)) <= 1e-3
        else:
            ok = got == want
        if not ok:
            self.errors.append(f"{what}: report has {got!r}, recomputed {want!r}")


def _eq_rows(self, what, got, want):
    """Compares two row lists, naming the rows only one side has."""
    if got == want:
        return
    extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    self.errors.append(f"{what}: {len(got)} rows, recomputed {len(want)}; only in the report: {extra[:10]}; only recomputed: {missing[:10]}")


Checker.eq_rows = _eq_rows


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def url_parts(url):
    """(scheme, host and port, path, query) of an http(s) URL, or None; the
    query is None without a `?`, so `x?` and `x` differ, as they do on the
    wire."""
    try:
        u = urlsplit(url)
    except ValueError:
        return None
    if u.scheme not in ("http", "https") or not u.hostname:
        return None
    query = u.query if "?" in url.split("#", 1)[0] else None
    return (u.scheme, u.netloc.lower(), u.path or "/", query)


def unsplit(scheme, netloc, path, query):
    return f"{scheme}://{netloc}{path}" + ("" if query is None else "?" + query)


def alias_key(parts, kind):
    scheme, netloc, path, query = parts
    if kind == "www":
        if netloc.startswith("www.") and len(netloc) > 4:
            netloc = netloc[4:]
        return unsplit(scheme, netloc, path, query)
    if kind == "scheme":
        return unsplit("http", netloc, path, query)
    if kind == "index":
        last = path.rsplit("/", 1)[-1]
        if last.lower() in INDEX_PAGES:
            path = path[: len(path) - len(last)]
        return (scheme, netloc, path.rstrip("/"), query)
    if kind == "query":
        return unsplit(scheme, netloc, path, None)
    raise ValueError(kind)


def diameter(nodes, adj):
    best = 0
    for s in nodes:
        dist = {s: 0}
        q = deque([s])
        while q:
            x = q.popleft()
            for y in adj[x]:
                if y not in dist:
                    dist[y] = dist[x] + 1
                    q.append(y)
        best = max(best, max(dist.values()))
    return best


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    c = Checker()
    report = json.load(open(os.path.join(out, "report.json"), encoding="utf-8"))
    docs = read_csv(os.path.join(out, "docs.csv"))
    n = len(docs)
    # Rows, not docIDs, index everything below: an analysis carried
    # forward (--previous) has gaps in its docIDs.
    ids = [int(d["doc_id"]) for d in docs]
    row_of = {x: r for r, x in enumerate(ids)}
    center = [row_of[int(d["exact_center"])] if d["exact_center"] else None for d in docs]
    size = defaultdict(int)
    for x in center:
        if x is not None:
            size[x] += 1
    links = defaultdict(set)
    pairs = 0
    with open(os.path.join(out, "overlap.csv"), newline="") as f:
        for row in csv.DictReader(f):
            i, j = row_of[int(row["doc_i"])], row_of[int(row["doc_j"])]
            links[i].add(j)
            links[j].add(i)
            pairs += 1
    nonempty = [d for d in range(n) if center[d] is not None]

    # Documents and exact groups.
    c.eq("documents", report["documents"], n)
    c.eq("empty_documents", report["empty_documents"], n - len(nonempty))
    c.eq("bytes", report["bytes"], sum(int(d["bytes"]) for d in docs))
    c.eq("exact.groups", report["exact"]["groups"], sum(1 for k, v in size.items() if v >= 2))
    c.eq("exact.documents_in_groups", report["exact"]["documents_in_groups"], sum(v for v in size.values() if v >= 2))
    c.eq("exact.copies", report["exact"]["copies"], sum(v - 1 for v in size.values()))
    c.eq("near.pairs", report["near"]["pairs"], pairs)

    # Components by breadth-first search over documents.
    members = defaultdict(list)
    for d in nonempty:
        members[center[d]].append(d)
    component = [None] * n
    comps = []
    for start in range(n):
        if component[start] is not None:
            continue
        todo, seen = [start], {start}
        while todo:
            x = todo.pop()
            nbrs = set()
            if center[x] is not None:
                nbrs.update(members[center[x]])
                if x == center[x]:
                    nbrs.update(links[x])
                    nbrs.update(members[x])
            for y in nbrs:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        for x in seen:
            component[x] = len(comps)
        comps.append(sorted(seen))

    # Histogram.
    exact_bins, near_bins = [0] * 7, [0] * 7
    for d in nonempty:
        exact_bins[bin_of(size[center[d]])] += 1
        near_bins[bin_of(len(comps[component[d]]))] += 1
    h = report["histogram"]
    c.eq("histogram.bins", h["bins"], BINS)
    for name, bins in (("exact", exact_bins), ("near", near_bins)):
        c.eq(f"histogram.{name}.documents", h[name]["documents"], bins)
        for k in range(7):
            c.eq(f"histogram.{name}.percent[{k}]", h[name]["percent"][k], pct(bins[k], len(nonempty)))
        c.eq(f"histogram.{name}_replicated_percent", h[f"{name}_replicated_percent"], pct(len(nonempty) - bins[0], len(nonempty)))

    run = report["runs"][0]
    c.eq("runs[0].chunk", run["chunk"], report["chunk"])
    c.eq("runs[0].near.documents", run["near"]["documents"], near_bins)
    c.eq("runs[0].near_replicated_percent", run["near_replicated_percent"], pct(len(nonempty) - near_bins[0], len(nonempty)))

    # Savings: exact, then greedy in docID order.
    byte = [int(d["bytes"]) for d in docs]
    total_bytes = sum(byte)
    kept = set()
    for d in range(n):
        if center[d] is None:
            kept.add(d)
        elif center[d] in kept:
            continue
        elif any(k in kept for k in links[center[d]]) or any(m in kept for m in members[center[d]]):
            continue
        else:
            kept.add(d)
    exact_skip = [d for d in nonempty if center[d] != d]
    near_skip = [d for d in range(n) if d not in kept]
    c.eq("runs[0].savings_near.pages", run["savings_near"]["pages"], len(near_skip))
    for name, skip in (("exact", exact_skip), ("near", near_skip)):
        s = report["savings"][name]
        c.eq(f"savings.{name}.pages", s["pages"], len(skip))
        c.eq(f"savings.{name}.pages_percent", s["pages_percent"], pct(len(skip), n))
        c.eq(f"savings.{name}.bytes", s["bytes"], sum(byte[d] for d in skip))
        c.eq(f"savings.{name}.bytes_percent", s["bytes_percent"], pct(sum(byte[d] for d in skip), total_bytes))

    # With --previous: the headline over this crawl's documents, the pages
    # kept while missing counted apart.
    cur = report["current_crawl"]
    chained = os.path.exists(os.path.join(out, "changes.csv"))
    c.eq("current_crawl present", cur is not None, chained)
    if cur is not None:
        now = [d for d in range(n) if docs[d]["missing_for"] == "0"]
        now_set = set(now)
        full = [d for d in now if center[d] is not None]
        exact_now = [d for d in full if size[center[d]] >= 2]
        near_now = [d for d in full if len(comps[component[d]]) >= 2]
        skip_exact = [d for d in exact_skip if d in now_set]
        skip_near = [d for d in near_skip if d in now_set]
        for key, want in (
            ("documents", len(now)), ("empty_documents", len(now) - len(full)), ("kept_missing", n - len(now)),
            ("exact_copies", len(exact_now)), ("exact_copy_percent", pct(len(exact_now), len(full))),
            ("near_replicas", len(near_now)), ("near_replica_percent", pct(len(near_now), len(full))),
            ("skippable_exact", len(skip_exact)), ("skippable_exact_percent", pct(len(skip_exact), len(now))),
            ("skippable_near", len(skip_near)), ("skippable_near_percent", pct(len(skip_near), len(now))),
        ):
            c.eq(f"current_crawl.{key}", cur[key], want)

    # Groups.
    want_groups = []
    for comp in comps:
        if len(comp) < 2:
            continue
        centers = [d for d in comp if center[d] == d]
        edges = sum(len(links[x]) for x in centers) // 2
        hosts = {docs[d]["host"] for d in comp if docs[d]["host"]}
        k = len(centers)
        full = k * (k - 1) // 2
        density = 1.0 if k < 2 else edges / full
        if k <= 1:
            diam = 0
        elif edges == full:
            diam = 1
        elif k <= DIAMETER_MAX_CENTERS and k * (k + edges) <= DIAMETER_MAX_STEPS:
            diam = diameter(centers, links)
        else:
            diam = None
        chained = diam > 2 if diam is not None else density < CHAIN_DENSITY
        want_groups.append({
            "group": ids[comp[0]], "documents": len(comp), "centers": k, "pairs": edges, "hosts": len(hosts),
            "diameter": diam, "density": density, "chained": chained, "sample_url": docs[comp[0]]["url"],
        })
    want_groups.sort(key=lambda g: (-g["documents"], g["group"]))
    got_groups = read_csv(os.path.join(out, "groups.csv"))
    c.eq("groups.csv rows", len(got_groups), len(want_groups))
    for got, want in zip(got_groups, want_groups):
        for key in ("group", "documents", "centers", "pairs", "hosts"):
            c.eq(f"groups.csv group {want['group']} {key}", int(got[key]), want[key])
        c.eq(f"groups.csv group {want['group']} diameter", got["diameter"], "" if want["diameter"] is None else str(want["diameter"]))
        c.eq(f"groups.csv group {want['group']} density", float(got["density"]), want["density"])
        c.eq(f"groups.csv group {want['group']} chained", got["chained"], str(want["chained"]).lower())
        c.eq(f"groups.csv group {want['group']} sample_url", got["sample_url"], want["sample_url"])
    c.eq("near.groups", report["near"]["groups"], len(want_groups))
    c.eq("near.documents_in_groups", report["near"]["documents_in_groups"], sum(g["documents"] for g in want_groups))
    c.eq("near.largest_group", report["near"]["largest_group"], max((g["documents"] for g in want_groups), default=0))
    c.eq("near.chained_groups", report["near"]["chained_groups"], sum(1 for g in want_groups if g["chained"]))
    c.eq("groups.top", [g["group"] for g in report["groups"]["top"]], [g["group"] for g in want_groups[:20]])
    # The hosts a listed group spans: the first eight in order of their
    # first document, with the group's documents on each.
    comp_of = {ids[comp[0]]: comp for comp in comps}
    for g in report["groups"]["top"]:
        spans = {}
        for d in comp_of.get(g["group"], []):
            h_d = docs[d]["host"]
            if h_d and (h_d in spans or len(spans) < 8):
                spans[h_d] = spans.get(h_d, 0) + 1
        c.eq(f"groups.top {g['group']} first_hosts", [(x["host"], x["documents"]) for x in g["first_hosts"]],
             list(spans.items()))
    # docs.csv's near_group: the group's id (its smallest docID), empty alone.
    for comp in comps:
        want = str(ids[comp[0]]) if len(comp) >= 2 else ""
        for d in comp:
            c.eq(f"docs.csv doc {ids[d]} near_group", docs[d]["near_group"], want)

    # Host overlap: each document's replicas, listed.
    host = [d["host"] for d in docs]
    host_docs = defaultdict(int)
    on_other = defaultdict(int)
    for d in nonempty:
        if not host[d]:
            continue
        host_docs[host[d]] += 1
        cd = center[d]
        replicas = set(members[cd])
        for k in links[cd]:
            replicas.update(members[k])
        for hh in {host[r] for r in replicas if r != d and host[r] and host[r] != host[d]}:
            on_other[(host[d], hh)] += 1
    want_hosts = {}
    for (a, b) in on_other:
        x, y = min(a, b), max(a, b)
        want_hosts[(x, y)] = (on_other.get((x, y), 0), on_other.get((y, x), 0))
    got_hosts = read_csv(os.path.join(out, "hosts.csv"))
    c.eq("hosts.csv rows", len(got_hosts), len(want_hosts))
    mirror_pairs = 0
    for row in got_hosts:
        key = (row["host_a"], row["host_b"])
        if key not in want_hosts:
            c.errors.append(f"hosts.csv: unexpected pair {key}")
            continue
        a_on_b, b_on_a = want_hosts[key]
        da, db = host_docs[key[0]], host_docs[key[1]]
        mirror = any(r >= MIRROR_MIN_DOCS and r > MIRROR_SHARE * t for r, t in ((a_on_b, da), (b_on_a, db)))
        mirror_pairs += mirror
        for col, want in (("docs_a", da), ("docs_b", db), ("replicated_a_on_b", a_on_b), ("replicated_b_on_a", b_on_a)):
            c.eq(f"hosts.csv {key} {col}", int(row[col]), want)
        c.eq(f"hosts.csv {key} coverage_a", float(row["coverage_a"]), pct(a_on_b, da))
        c.eq(f"hosts.csv {key} coverage_b", float(row["coverage_b"]), pct(b_on_a, db))
        c.eq(f"hosts.csv {key} mirror", row["mirror"], str(mirror).lower())
    c.eq("hosts.host_pairs", report["hosts"]["host_pairs"], len(want_hosts))
    c.eq("hosts.mirror_pairs", report["hosts"]["mirror_pairs"], mirror_pairs)

    # Per host: documents, with an exact copy, with a near-replica, and the
    # hosts it has the most documents replicated on.
    per_host = defaultdict(lambda: [0, 0, 0, 0])
    for d in range(n):
        if host[d]:
            per_host[host[d]][0] += 1
            per_host[host[d]][1] += center[d] is not None and size[center[d]] >= 2
            per_host[host[d]][2] += len(comps[component[d]]) >= 2
            per_host[host[d]][3] += d not in kept
    want_rows = []
    for h, (docs_h, exact_h, near_h, skip_h) in per_host.items():
        partners = sorted(((-k, b) for (a, b), k in on_other.items() if a == h and k > 0))
        shares = " ".join(f"{b}={-k}" for k, b in partners[:3])
        want_rows.append((h, docs_h, exact_h, near_h, skip_h, len(partners), shares))
    want_rows.sort(key=lambda r: (-r[3], -r[1], r[0]))
    got_rows = [(r["host"], int(r["documents"]), int(r["exact_copies"]), int(r["near_replicas"]),
                 int(r["skippable"]), int(r["partner_hosts"]), r["shares_most_with"])
                for r in read_csv(os.path.join(out, "host-summary.csv"))]
    c.eq_rows("host-summary.csv", got_rows, want_rows)
    c.eq("hosts.hosts", report["hosts"]["hosts"], len(want_rows))

    # URL aliases.
    parts = [url_parts(d["url"]) for d in docs]
    want_aliases = []
    for kind in ("www", "scheme", "index", "query"):
        by_key = defaultdict(list)
        for d in range(n):
            if parts[d] is not None:
                by_key[alias_key(parts[d], kind)].append(d)
        for group in by_key.values():
            text_first = {}
            for d in group:
                cd = center[d]
                if cd is not None and cd in text_first:
                    first = text_first[cd]
                else:
                    if cd is not None:
                        text_first[cd] = d
                    first = group[0]
                if first == d or parts[d] == parts[first]:
                    continue
                if center[first] is None or center[d] is None:
                    content = "empty"
                elif center[first] == center[d]:
                    content = "exact"
                elif center[d] in links[center[first]]:
                    content = "near"
                else:
                    content = "different"
                want_aliases.append((kind, ids[first], ids[d], content))
    order = {"www": 0, "scheme": 1, "index": 2, "query": 3}
    want_aliases.sort(key=lambda a: (order[a[0]], a[1], a[2]))
    got_aliases = [(r["kind"], int(r["doc_a"]), int(r["doc_b"]), r["content"]) for r in read_csv(os.path.join(out, "aliases.csv"))]
    c.eq_rows("aliases.csv", got_aliases, want_aliases)
    for kind in order:
        mine = [a for a in want_aliases if a[0] == kind]
        got = report["aliases"][kind]
        c.eq(f"aliases.{kind}.pairs", got["pairs"], len(mine))
        for content in ("exact", "near", "different", "empty"):
            c.eq(f"aliases.{kind}.{content}", got[content], sum(1 for a in mine if a[3] == content))
    total = report["aliases"]["total"]
    c.eq("aliases.total.pairs", total["pairs"], len(want_aliases))
    for content in ("exact", "near", "different", "empty"):
        c.eq(f"aliases.total.{content}", total[content], sum(1 for a in want_aliases if a[3] == content))
    c.eq("aliases.same_content", report["aliases"]["same_content"], sum(1 for a in want_aliases if a[3] in ("exact", "near")))

    # Per-document flags.
    flags = read_csv(os.path.join(out, "flags.csv"))
    c.eq("flags.csv rows", len(flags), n)
    urls = {unsplit(*p) for p in parts if p is not None}
    fuzzy_count = defaultdict(int)
    for row in flags:
        if row["fuzzy_signature"]:
            fuzzy_count[row["fuzzy_signature"]] += 1
    seen_fuzzy, seen_title = set(), set()
    counts = defaultdict(int)
    for d, row in enumerate(flags[:n]):
        p = parts[d]
        if p is None:
            www = http = True
        else:
            scheme, netloc, path, query = p
            www = netloc.startswith("www.") or unsplit(scheme, "www." + netloc, path, query) not in urls
            http = scheme == "https" or unsplit("https", netloc, path, query) not in urls
        c.eq(f"flags.csv doc {d} www_unique", row["www_unique"], str(www).lower())
        c.eq(f"flags.csv doc {d} http_unique", row["http_unique"], str(http).lower())
        counts["www"] += not www
        counts["http"] += not http
        if center[d] is None:
            want = ("", "", "")
        else:
            near = size[center[d]] - 1 + sum(size[k] for k in links[center[d]])
            want = (str(center[d] == d).lower(), str(size[center[d]]), str(near))
            counts["exact"] += center[d] != d
        c.eq(f"flags.csv doc {d} exact/near", (row["exact_signature_unique"], row["exact_signature_copycount"], row["near_replica_count"]), want)
        sig = row["fuzzy_signature"]
        if sig:
            first = sig not in seen_fuzzy
            seen_fuzzy.add(sig)
            counts["fuzzy"] += not first
            c.eq(f"flags.csv doc {d} fuzzy", (row["fuzzy_signature_unique"], row["fuzzy_signature_copycount"]), (str(first).lower(), str(fuzzy_count[sig])))
        title = docs[d]["title"]
        if title:
            first = (host[d], title) not in seen_title
            seen_title.add((host[d], title))
            counts["title"] += not first
            c.eq(f"flags.csv doc {d} title_unique", row["title_unique"], str(first).lower())
        else:
            c.eq(f"flags.csv doc {d} title_unique", row["title_unique"], "")
    f = report["flags"]
    c.eq("flags.www_not_unique", f["www_not_unique"], counts["www"])
    c.eq("flags.http_not_unique", f["http_not_unique"], counts["http"])
    c.eq("flags.exact_signature_not_unique", f["exact_signature_not_unique"], counts["exact"])
    c.eq("flags.fuzzy_signature_not_unique", f["fuzzy_signature_not_unique"], counts["fuzzy"])
    c.eq("flags.title_not_unique", f["title_not_unique"], counts["title"])
    c.eq("flags.fuzzy_signatures", f["fuzzy_signatures"], sum(fuzzy_count.values()))

    for e in c.errors:
        print(e)
    if c.errors:
        print(f"{len(c.errors)} differences", file=sys.stderr)
        sys.exit(1)
    print(f"report.json and tables agree with docs.csv and overlap.csv ({n} documents, {pairs} pairs)")


if __name__ == "__main__":
    main()
