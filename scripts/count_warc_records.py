#!/usr/bin/env python3
"""Counts the records of WARC files with warcio, independently of overlap's
reader, and says what overlap's input contract makes of each: the expected
documents (with their URLs, in order) and skipped records by reason. Prints
a JSON manifest with one entry per run of `overlap fingerprint`: each file
alone, and every file after the ones before it (so that revisits can find
the records they revisit in an earlier file).

    scripts/count_warc_records.py A.warc.gz B.warc.gz ... > manifest.json

Needs warcio (pip install warcio).
"""

import base64
import binascii
import json
import os
import sys

from warcio.archiveiterator import ArchiveIterator

TEXT = {"text/plain", "text/html", "application/xhtml+xml"}


def media_type(value):
    return (value or "").split(";")[0].strip().lower()


def digest_key(value):
    """A payload digest as (algorithm, raw bytes), whatever its encoding."""
    if not value or ":" not in value:
        return None
    alg, enc = value.strip().split(":", 1)
    alg = alg.strip().lower().replace("-", "")
    enc = enc.strip()
    try:
        raw = binascii.unhexlify(enc) if len(enc) == 40 else base64.b32decode(enc.upper())
    except (binascii.Error, ValueError):
        raw = enc.encode()
    return alg, raw


def classify(files):
    """What overlap makes of every record of `files`, read in order."""
    seen = {}  # digest or (uri, date) -> "document" or a skip reason
    runs = []
    for path in files:
        run = {"file": os.path.basename(path), "records": 0, "by_type": {}, "http_status": {},
               "documents": [], "skipped": {}}
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f):
                run["records"] += 1
                wtype = rec.rec_type
                run["by_type"][wtype] = run["by_type"].get(wtype, 0) + 1
                url = (rec.rec_headers.get_header("WARC-Target-URI") or "").strip("<>")
                status = None
                if rec.http_headers is not None and wtype in ("response", "revisit"):
                    status = int(rec.http_headers.get_statuscode())
                    run["http_status"][str(status)] = run["http_status"].get(str(status), 0) + 1
                outcome = outcome_of(rec, wtype, status, seen)
                if outcome == "document":
                    run["documents"].append(url)
                else:
                    run["skipped"][outcome] = run["skipped"].get(outcome, 0) + 1
        runs.append(run)
    return runs


def outcome_of(rec, wtype, status, seen):
    simple = {"warcinfo": "warc_warcinfo", "request": "warc_request", "metadata": "warc_metadata",
              "continuation": "segmented_record"}
    if wtype in simple:
        return simple[wtype]
    if wtype not in ("response", "resource", "revisit", "conversion"):
        return "warc_other_type"
    if status is not None and status != 200:
        location = rec.http_headers.get_header("Location")
        return "http_redirect" if 300 <= status < 400 and location else "http_status_not_200"
    digest = digest_key(rec.rec_headers.get_header("WARC-Payload-Digest"))
    if wtype == "revisit":
        refers = (rec.rec_headers.get_header("WARC-Refers-To-Target-URI") or "").strip("<>")
        ref_date = (rec.rec_headers.get_header("WARC-Refers-To-Date") or "").strip()
        found = seen.get(digest) or seen.get((refers, ref_date))
        return found or "revisit_unresolved"
    if rec.http_headers is not None and wtype == "response":
        ctype = media_type(rec.http_headers.get_header("Content-Type"))
    else:
        ctype = media_type(rec.rec_headers.get_header("Content-Type"))
        if wtype == "conversion" and not ctype:
            ctype = "text/plain"
    outcome = "document" if ctype in TEXT or not ctype else "unsupported_content_type"
    date = (rec.rec_headers.get_header("WARC-Date") or "").strip()
    url = (rec.rec_headers.get_header("WARC-Target-URI") or "").strip("<>")
    if digest is not None:
        seen.setdefault(digest, outcome)
    elif url and date:
        seen.setdefault((url, date), outcome)
    return outcome


def main():
    files = sys.argv[1:]
    runs = []
    for path in files:
        runs.append({"inputs": [os.path.basename(path)], "per_file": classify([path])})
    if len(files) > 1:
        runs.append({"inputs": [os.path.basename(p) for p in files], "per_file": classify(files)})
    json.dump({"generated_by": "scripts/count_warc_records.py (warcio)", "runs": runs},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
