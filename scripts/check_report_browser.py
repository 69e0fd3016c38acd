#!/usr/bin/env python3
"""Render an output directory's report.html in headless Chromium and check,
in the page as a browser built it after its script ran, what a reader
relies on: at 1400 px the headline figures (the skip figure among them)
and the first mirror set are on the first screen; a click on a column
header sorts the rows (and a second click the other way), the filter box hides the rows without its text, a group
opens to its members, every URL is a link that sends no referrer, and no
table is wider than the window.

Usage: python3 scripts/check_report_browser.py OUT_DIR [--widths 700,1400]
                                               [--screenshots DIR]

For each width the page is copied with a checking script added after its
own; Chromium runs it (`--dump-dom`) and the script writes what it found
into the page, which is read back. With --screenshots, writes
report-WIDTH.png of the checked page (sorted, one group open) into DIR, to
look at. Exits 0 when every check passes at every width, 1 with one line
per failure, 2 when Chromium is not installed (Debian: apt-get install
chromium). Standard library only.
"""

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Runs after the page's own script: exercises the tables as a reader would
# and writes the findings into <pre id="overlap-check">.
CHECK = r"""
<script>
(function () {
  "use strict";
  var out = { width: window.innerWidth, errors: [], done: [] };
  function fail(m) { out.errors.push(m); }
  // A closed <details> keeps its content laid out but unrendered
  // (content-visibility), which checkVisibility() tells.
  function visible(el) {
    return el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0 && el.offsetHeight > 0;
  }
  function column(table, name) {
    var cells = table.tHead.rows[0].cells;
    for (var i = 0; i < cells.length; i++) {
      if (cells[i].textContent.trim().toLowerCase() === name) return i;
    }
    return -1;
  }
  function values(table, col) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return Number(r.cells[col].getAttribute("data-v"));
    });
  }
  function ordered(v, ascending) {
    for (var i = 1; i < v.length; i++) {
      if (ascending ? v[i - 1] > v[i] : v[i - 1] < v[i]) return false;
    }
    return true;
  }
  try {
    // The first screen, before anything is clicked: at 1400 px the
    // headline figures (the skip figure among them) and the first mirror
    // set are in view.
    if (window.innerWidth >= 1400) {
      var fold = window.innerHeight;
      var cards = document.querySelector(".cards");
      if (!cards) fail("no headline figures");
      else if (cards.getBoundingClientRect().bottom > fold) fail("the headline figures end below the first screen");
      else if (!/recrawl could skip/.test(cards.textContent)) fail("the headline figures have no skip figure");
      var set = document.querySelector("#mirror-sets tbody tr");
      if (set && set.getBoundingClientRect().bottom > fold) {
        fail("the first mirror set ends at " + Math.round(set.getBoundingClientRect().bottom) + " px, below the first screen of " + fold);
      }
      out.done.push("first screen: headline figures" + (set ? " and the first mirror set" : "") + " in view");
    }
    var root = document.documentElement;
    if (root.scrollWidth > window.innerWidth) {
      fail("the page is " + root.scrollWidth + " px wide in a " + window.innerWidth + " px window");
    }
    Array.prototype.forEach.call(document.querySelectorAll(".tw"), function (w) {
      if (w.scrollWidth > w.clientWidth + 1) {
        var s = w.closest("section");
        fail("a table of section '" + (s ? s.id : "?") + "' is " + w.scrollWidth + " px wide in " + w.clientWidth + " px");
      }
    });

    var table = document.querySelector("#groups table");
    if (!table) throw new Error("no groups table");
    var rows = table.tBodies[0].rows;
    var col = column(table, "documents");
    var button = col < 0 ? null : table.tHead.rows[0].cells[col].querySelector("button.sort");
    if (!button) throw new Error("the groups table's documents header is not a sort button");
    var first = rows[0];
    button.click();
    var up = values(table, col);
    if (!ordered(up, true)) fail("one click on 'documents' did not sort ascending: " + up.join(","));
    if (up[0] !== up[up.length - 1] && rows[0] === first) fail("the click on 'documents' left the first row in place");
    button.click();
    var down = values(table, col);
    if (!ordered(down, false)) fail("a second click on 'documents' did not sort descending: " + down.join(","));
    out.done.push("sorted " + rows.length + " groups by documents both ways");
    // The hosts a group spans sort by their number, not their names.
    var spanCol = column(table, "hosts it spans");
    if (spanCol < 0) throw new Error("the groups table has no 'hosts it spans' column");
    table.tHead.rows[0].cells[spanCol].querySelector("button").click();
    if (!ordered(values(table, spanCol), true)) fail("a click on 'hosts it spans' did not sort by the hosts' number");
    var hostTable = document.querySelector("#hosts table");
    var skipCol = hostTable ? column(hostTable, "a recrawl could skip") : -1;
    if (skipCol < 0) throw new Error("the hosts table has no 'a recrawl could skip' column");
    hostTable.tHead.rows[0].cells[skipCol].querySelector("button").click();
    if (!ordered(values(hostTable, skipCol), true)) fail("a click on 'a recrawl could skip' did not sort the hosts' shares");
    out.done.push("sorted the groups by the hosts they span and the hosts by their skippable share");
    var idCol = column(table, "group");
    table.tHead.rows[0].cells[idCol].querySelector("button").click();
    if (!ordered(values(table, idCol), true)) fail("a click on 'group' did not sort the ids");
    table.tHead.rows[0].cells[col].querySelector("button").click();
    table.tHead.rows[0].cells[col].querySelector("button").click();

    var filter = document.querySelector("#groups div.filter input");
    if (rows.length > 10) {
      if (!filter) throw new Error("the groups table has no filter box");
      var last = rows[rows.length - 1].cells[1].querySelector("a").textContent;
      filter.value = last;
      filter.dispatchEvent(new Event("input"));
      var shown = Array.prototype.filter.call(rows, function (r) { return !r.hidden; });
      if (shown.length < 1 || shown.length >= rows.length) fail("filtering by '" + last + "' shows " + shown.length + " of " + rows.length + " rows");
      shown.forEach(function (r) { if (r.textContent.indexOf(last) < 0) fail("a row without the filter's text is shown"); });
      filter.value = "";
      filter.dispatchEvent(new Event("input"));
      if (Array.prototype.some.call(rows, function (r) { return r.hidden; })) fail("an empty filter hides rows");
      out.done.push("filtered the groups to " + shown.length + " of " + rows.length);
    }

    var details = rows[0].querySelector("details.members");
    if (!details) throw new Error("the first group cannot open to its members");
    var items = details.querySelectorAll("li");
    if (items.length === 0) fail("the first group lists no member");
    if (details.open || visible(items[0])) fail("a group's members show before it is opened");
    details.querySelector("summary").click();
    if (!details.open || !visible(items[0])) fail("a click on the group's summary did not show its members");
    var documents = Number(rows[0].cells[col].getAttribute("data-v"));
    var members = details.querySelectorAll("li .id").length;
    if (members !== Math.min(documents, 50)) fail("the first group lists " + members + " members of " + documents);
    out.done.push("opened group " + rows[0].cells[0].textContent + " to its " + members + " members listed");

    Array.prototype.forEach.call(document.querySelectorAll("a[href^='http']"), function (a) {
      if ((a.getAttribute("rel") || "").split(/\s+/).indexOf("noreferrer") < 0) fail("a link without rel=noreferrer: " + a.href);
    });
    var walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
    var texts = 0;
    while (walker.nextNode()) {
      var node = walker.currentNode;
      if (!/https?:\/\//.test(node.nodeValue)) continue;
      texts++;
      var a = node.parentElement.closest("a");
      if (!a || (a.getAttribute("rel") || "").indexOf("noreferrer") < 0) fail("a URL that is not a link: " + node.nodeValue.trim().slice(0, 80));
    }
    out.done.push(texts + " URLs, each a link");
    if (root.scrollWidth > window.innerWidth) fail("with a group open the page is " + root.scrollWidth + " px wide");
  } catch (e) {
    fail("check stopped: " + e.message);
  }
  var pre = document.createElement("pre");
  pre.id = "overlap-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, profile, width, height, *args):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def check(binary, page, width, shots):
    """The failures at one width, as lines; a screenshot into `shots`."""
    with tempfile.TemporaryDirectory() as tmp:
        done = chromium(binary, os.path.join(tmp, "profile"), width, 1000, "--dump-dom", f"file://{page}")
        if shots:
            png = os.path.join(shots, f"report-{width}.png")
            chromium(binary, os.path.join(tmp, "profile2"), width, 9000, f"--screenshot={png}", f"file://{page}")
            print(f"{width} px: screenshot {png}")
    found = re.search(r'<pre id="overlap-check">(.*?)</pre>', done.stdout, re.S)
    if not found:
        return [f"{width} px: Chromium gave no result (exit {done.returncode}): {done.stderr.strip()[-500:]}"]
    result = json.loads(html.unescape(found.group(1)))
    errors = [f"{width} px: {e}" for e in result["errors"]]
    if result["width"] != width:
        errors.append(f"{width} px: the window was {result['width']} px wide")
    if not errors:
        print(f"{width} px: " + "; ".join(result["done"]))
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--widths", default="700,1400")
    parser.add_argument("--screenshots", metavar="DIR")
    args = parser.parse_args()
    binary = find_chromium()
    if binary is None:
        print("chromium not found (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    report = os.path.join(os.path.abspath(args.out_dir), "report.html")
    if not os.path.isfile(report):
        print(f"no report.html in {args.out_dir} (run overlap report first)", file=sys.stderr)
        return 2
    with open(report, encoding="utf-8") as f:
        text = f.read()
    if "</body>" not in text:
        print(f"{report} has no </body>", file=sys.stderr)
        return 1
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "report.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(text.replace("</body>", CHECK + "</body>", 1))
        for width in (int(w) for w in args.widths.split(",")):
            errors += check(binary, page, width, args.screenshots)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
