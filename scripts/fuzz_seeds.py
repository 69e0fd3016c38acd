#!/usr/bin/env python3
"""Seed corpora for the fuzz targets in fuzz/, cut from testdata/.

The test files are whole crawls of up to 700 KB; libFuzzer works best on
inputs of a few KiB, so each seed is one to three records (or lines, or
pages) of them, plain and, for the readers that take it, gzip per record.
Usage: fuzz_seeds.py TESTDATA_DIR CORPUS_DIR (one folder per target).
"""

import gzip
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MAX_SEED = 6000
PER_FILE = 40


def write(corpus, target, data):
    if not data or len(data) > 3 * MAX_SEED:
        return
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def decompressed(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except Exception:
            return b""
    return raw


def split_at(data, pattern):
    """The pieces of data that start where pattern matches (a line start)."""
    starts = [m.start() for m in re.finditer(pattern, data)]
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def groups(pieces, size):
    """Runs of one to three consecutive small pieces."""
    small = [p for p in pieces if len(p) <= MAX_SEED]
    out = []
    for i, p in enumerate(small[:PER_FILE]):
        out.append(p)
        if i % 3 == 0 and i + 2 < len(small):
            out.append(b"".join(small[i : i + size]))
    return out


def member(data):
    return gzip.compress(data, mtime=0)


def zstd_frames(records):
    """The records as a .warc.zst: a dictionary frame (when the zstd tool
    can train one on them) and one frame per record. None without the
    zstd command-line tool."""
    if not shutil.which("zstd"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = []
        for i, r in enumerate(records):
            paths.append(tmp / f"r{i:04}")
            paths[-1].write_bytes(r)
        dict_path = tmp / "dict"
        trained = subprocess.run(
            ["zstd", "-q", "--train", *map(str, paths), "--maxdict=4096", "-o", str(dict_path)],
            capture_output=True,
        ).returncode == 0
        dict_args = ["-D", str(dict_path)] if trained else []
        out = b""
        if trained:
            stored = dict_path.read_bytes()
            out = b"\x5d\x2a\x4d\x18" + len(stored).to_bytes(4, "little") + stored
        for p in paths:
            out += subprocess.run(["zstd", "-q", "-c", *dict_args, str(p)], capture_output=True, check=True).stdout
        return out


def main():
    testdata, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    files = sorted(p for p in testdata.rglob("*") if p.is_file())

    html_pages = []
    for path in files:
        name = path.name
        if ".warc" in name or ".wet" in name:
            data = decompressed(path)
            records = split_at(data, rb"(?m)^WARC/1\.")
            for seed in groups(records, 3):
                write(corpus, "warc", seed)
            for rec in records[:8]:
                if len(rec) <= MAX_SEED:
                    write(corpus, "warc", member(rec))
                    write(corpus, "gzip", bytes([len(rec) & 7]) + member(rec) + member(rec[: len(rec) // 2]))
                    body = rec.split(b"\r\n\r\n", 2)[-1]
                    if b"<" in body:
                        html_pages.append(body)
            small = [r for r in records if len(r) <= MAX_SEED][:12]
            frames = zstd_frames(small) if len(small) >= 2 else None
            if frames:
                write(corpus, "warc", frames)
                write(corpus, "zstd", bytes([len(frames) & 7]) + frames)
            if path.stat().st_size <= MAX_SEED:
                write(corpus, "warc", path.read_bytes())
                write(corpus, "gzip", b"\x00" + path.read_bytes())
        elif ".arc" in name:
            data = decompressed(path)
            records = split_at(data, rb"(?m)^(?:filedesc|https?)://")
            for seed in groups(records, 3):
                write(corpus, "arc", seed)
            write(corpus, "arc", data[:MAX_SEED])
            write(corpus, "arc", member(data[:MAX_SEED]))
        elif ".jsonl" in name:
            lines = decompressed(path).splitlines(keepends=True)
            for seed in groups(lines, 3):
                write(corpus, "jsonl", seed)
        elif ".pagefeed" in name:
            data = decompressed(path)
            pages = split_at(data, rb"(?m)^==P=>>>>=i===<<<<=T===>=A=<=!Junghoo!==>")
            for seed in groups(pages, 2):
                write(corpus, "pagefeed", seed)
        elif name.endswith(".html"):
            html_pages.append(path.read_bytes()[:MAX_SEED])

    for page in html_pages[:200]:
        write(corpus, "html", page[:MAX_SEED])
    for i, page in enumerate(html_pages[:60]):
        text = page[:2000].decode("utf-8", "replace")
        text += " caf\u00e9 \u00fcber \u65e5\u672c\u8a9e"
        for mode, codec in enumerate(
            ["utf-8", "utf-8", "cp1252", "shift_jis", "utf-16-le", "utf-16-be", "iso2022_jp", "latin-1"]
        ):
            data = text.encode(codec, "replace")
            write(corpus, "charset", bytes([mode + 8 * (i & 1)]) + data)
        write(corpus, "charset", bytes([8]) + b'<meta charset="shift_jis">' + text.encode("shift_jis", "replace"))


if __name__ == "__main__":
    main()
