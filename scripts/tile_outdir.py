#!/usr/bin/env python3
"""Make an analysed output directory K times larger, for measuring the
report stage at a crawl size no crawl at hand has.

The copy holds K tiles of the source's documents: in tile t, every docID
and exact center is offset by t times the source's documents, every host
is renamed (`t3.example.org`, or `www.t3.example.org` for
`www.example.org`, so that the www rule still pairs URLs; an IP address
is left as it is, and its documents' URLs then repeat across tiles),
and the Overlap table is repeated with the same offsets, the fuzzy
signatures changed per tile. Documents, hosts, copies, groups and pairs all grow K-fold, and
every figure `overlap report` prints for the copy is K times the
source's, its percentages the same: the report's memory and time at K
times the crawl, on the same answer.

    scripts/tile_outdir.py OUT TILED 11
    overlap report TILED --memory 256M

It takes what the report reads (docs.csv, overlap.csv, fuzzy.fpd,
manifest.json, stats.json and the earlier stages' stamps); the tiled
directory serves the report only.

With `--from fingerprint` it tiles the fingerprint stage's outputs
instead, so that the exact and pairs stages (and the report after them)
run on K independent copies of the crawl:

    scripts/tile_outdir.py --from fingerprint OUT TILED 11
    overlap exact TILED --memory 256M
    overlap pairs TILED --memory 256M
    overlap report TILED --memory 256M

Tile t's documents get docIDs offset by t times the source's (in
fingerprint-docs.csv, copies.csv, doc-ids.fpd, urls.fpd and every record
file), its hosts are renamed as above (fingerprint-docs.csv,
redirects.csv), its exact hashes and fuzzy signatures are xor-masked per
tile, and its chunk fingerprints get t xor-ed into their lowest bits
(ceil(log2 K) of them): the partition (the top bits) is unchanged, two
fingerprints of one tile keep their order (so every method, prefix
filtering's tie-breaks included, sees each tile as it saw the source),
and no fingerprint is in two tiles. Each partition file is written
sorted by (fingerprint, docID) as the readers require; tile 0 is the
source unchanged. The exact and pairs stages then give exactly K times
the source's counts (stats.json, overlap.csv's rows, copies in
centers.fpd). urls.fpd's keys are the source's xor-ed in the same way,
not hashes of the renamed URLs, so the tiled directory cannot be the
`--previous` analysis of a recrawl; stats.json keeps the source's
fingerprint section as it is. Parquet outputs are not tiled (a source
with them is refused).
"""

import argparse
import array
import concurrent.futures
import csv
import json
import os
import shutil
import struct
import sys

# Where an analysis keeps its record files (src/store/layout.rs).
RECORDS = 'records'


def tiled_url(url, tag):
    """`url` with its host, written as in the URL (an IDNA host may be in
    Unicode there and in ASCII in docs.csv's host column), tagged."""
    scheme, sep, rest = url.partition('//')
    if not sep:
        return url
    cut = len(rest)
    for c in '/?#':
        i = rest.find(c)
        if i != -1:
            cut = min(cut, i)
    authority, tail = rest[:cut], rest[cut:]
    userinfo, at, hostport = authority.rpartition('@')
    name, colon, port = hostport.partition(':')
    if is_address(name) or hostport.startswith('['):
        return url
    return f'{scheme}//{userinfo}{at}{tiled_host(name, tag)}{colon}{port}{tail}'


def is_address(host):
    return host.startswith('[') or host.replace('.', '').isdigit()


def tiled_host(host, tag):
    if is_address(host):
        return host
    if host[:4].lower() == 'www.':
        return f'{host[:4]}{tag}.{host[4:]}'
    return f'{tag}.{host}'


def tiled_signatures(records, t):
    """The fuzzy signatures of tile `t`: each but an empty document's (0)
    changed by the same mask, so that two rows share a signature within a
    tile as in the source, and never across tiles."""
    mask = (t * 0x9E3779B97F4A7C15F39CC0605CEDC835) % (1 << 128)
    signatures = array.array('Q', records)
    if sys.byteorder != 'little':
        signatures.byteswap()
    lo, hi = mask & ((1 << 64) - 1), mask >> 64
    for i in range(0, len(signatures), 2):
        if signatures[i] or signatures[i + 1]:
            signatures[i] ^= lo
            signatures[i + 1] ^= hi
    if sys.byteorder != 'little':
        signatures.byteswap()
    return signatures.tobytes()


HEADER = 64
NONE = 0xFFFFFFFF
CHUNK = struct.Struct('<QI')        # kind 1: fprint, doc
EXACT = struct.Struct('<QQI')       # kind 2: hash (low 64 bits first), doc
DOC_ID = struct.Struct('<IHH')      # kind 11: doc_id, missing_for, flags
URL = struct.Struct('<QQIQI')       # kind 9: key (low first), doc_id, payload digest, decoding


def fail(message):
    sys.exit(f'tile_outdir.py: {message}')


def read_records(path, kind, size):
    """The header (a bytearray) and the records of a record file,
    checked against the header."""
    with open(path, 'rb') as f:
        head, records = bytearray(f.read(HEADER)), f.read()
    if head[:8] != b'OVLPFPD\0':
        fail(f'{path} is not an overlap record file')
    k, s = struct.unpack_from('<II', head, 12)
    count = struct.unpack_from('<Q', head, 32)[0]
    if (k, s) != (kind, size) or len(records) != count * size:
        fail(f'{path}: expected {count} records of kind {kind} ({size} bytes), '
             f'found kind {k} ({s} bytes) and {len(records)} bytes')
    return head, records


def write_records(path, head, count, chunks):
    head = bytearray(head)
    struct.pack_into('<Q', head, 32, count)
    with open(path, 'wb') as f:
        f.write(head)
        for chunk in chunks:
            f.write(chunk)


def exact_mask(t):
    """The mask of tile `t`'s exact hashes (0 for tile 0), as two 64-bit
    halves."""
    mask = (t * 0xD6E8FEB86659FD93C2B2AE3D27D4EB4F) % (1 << 128)
    return mask & ((1 << 64) - 1), mask >> 64


def tile_bits(k):
    """How many of a fingerprint's lowest bits carry the tile number."""
    return max(1, (k - 1).bit_length())


def tile_orders(k, bits):
    """For each value of a fingerprint's lowest `bits` bits, the tiles in
    the order their copies of it sort in (by fingerprint xor tile)."""
    return [sorted(range(k), key=lambda t: low ^ t) for low in range(1 << bits)]


def tile_partition(job):
    """Tiles one FPrint-DocID partition file. Tile t's copy of fingerprint
    f is f ^ t: only the lowest bits change, so the copies of a
    fingerprint sort next to each other (the source may not hold two
    fingerprints that differ only there), and the output is the source's
    fingerprint groups, each followed by its copies in fingerprint order."""
    src, dst, k, n = job
    head, data = read_records(src, 1, CHUNK.size)
    count = len(data) // CHUNK.size
    bits = tile_bits(k)
    low = (1 << bits) - 1
    orders = tile_orders(k, bits)
    offsets = [t * n for t in range(k)]
    records = list(CHUNK.iter_unpack(data))
    del data
    out = bytearray(count * k * CHUNK.size)
    pack_into, size = CHUNK.pack_into, CHUNK.size
    pos, i, previous = 0, 0, None
    while i < count:
        f = records[i][0]
        j = i + 1
        while j < count and records[j][0] == f:
            j += 1
        if previous is not None and f <= previous:
            fail(f'{src} is not sorted by fingerprint')
        if previous is not None and f >> bits == previous >> bits:
            fail(f'{src}: fingerprints {previous:#x} and {f:#x} differ only in their lowest {bits} bits, '
                 'which carry the tile: their tiled copies would collide')
        previous = f
        docs = [r[1] for r in records[i:j]]
        for t in orders[f & low]:
            ft, off = f ^ t, offsets[t]
            for d in docs:
                pack_into(out, pos, ft, d + off)
                pos += size
        i = j
    write_records(dst, head, count * k, [out])
    return count


def tile_table(src, dst, k, n, rewrite):
    """Writes K tiles of the CSV table at `src`: `rewrite(row, t)` changes
    a row (a list) for tile t >= 1 in place. Rows are read again for each
    tile, so no table is held in memory. Returns the source's rows."""
    rows = 0
    with open(dst, 'w', newline='', encoding='utf-8') as out:
        w = csv.writer(out, lineterminator='\n')
        for t in range(k):
            with open(src, newline='', encoding='utf-8') as f:
                r = csv.reader(f)
                header = next(r)
                if t == 0:
                    w.writerow(header)
                count = 0
                for row in r:
                    if t:
                        rewrite(header, row, t, t * n)
                    w.writerow(row)
                    count += 1
            rows = count
    return rows


def tile_fingerprint(src, dst, k, jobs):
    """Writes K tiles of the fingerprint stage's outputs of `src` into
    `dst` (see the module comment)."""
    with open(os.path.join(src, 'manifest.json')) as f:
        manifest = json.load(f)
    n = manifest.get('documents')
    if manifest.get('chain') is not None or manifest.get('next_doc_id') != n:
        fail('the source is a chain of analyses (docIDs with gaps); tile a first analysis')
    if n * k >= NONE:
        fail(f'{n * k} documents do not fit 32-bit docIDs')
    stamp_path = os.path.join(src, '.overlap', 'fingerprint.stamp')
    if not os.path.exists(stamp_path):
        fail(f'{src} has no complete fingerprint stage')
    with open(stamp_path) as f:
        stamp = json.load(f)
    if os.path.exists(os.path.join(src, 'parquet')) or any(o.startswith('parquet/') for o in stamp['outputs']):
        fail('the source has Parquet outputs, which are not tiled')
    os.makedirs(os.path.join(dst, '.overlap'))
    os.makedirs(os.path.join(dst, RECORDS, 'fprint-docid'))
    csv.field_size_limit(1 << 30)

    # The chunk fingerprints, a partition file at a time, in parallel.
    parts = sorted(p for p in os.listdir(os.path.join(src, RECORDS, 'fprint-docid'))
                   if p.startswith('part-') and p.endswith('.fpd'))
    work = [(os.path.join(src, RECORDS, 'fprint-docid', p), os.path.join(dst, RECORDS, 'fprint-docid', p), k, n) for p in parts]
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        fingerprints = sum(pool.map(tile_partition, work))

    # The document table and the tables naming documents or URLs.
    def doc_row(header, row, t, off):
        if row[0] == '' or int(row[0]) >= n:
            fail(f'fingerprint-docs.csv: doc_id {row[0]!r} is not a row of a first analysis')
        row[0] = str(int(row[0]) + off)
        if row[2]:
            row[2] = tiled_host(row[2], f't{t}')
        row[1] = tiled_url(row[1], f't{t}')

    def copy_row(header, row, t, off):
        row[0], row[1] = str(int(row[0]) + off), str(int(row[1]) + off)

    def redirect_row(header, row, t, off):
        row[1], row[3] = tiled_url(row[1], f't{t}'), tiled_url(row[3], f't{t}')

    rows = tile_table(os.path.join(src, RECORDS, 'fingerprint-docs.csv'), os.path.join(dst, RECORDS, 'fingerprint-docs.csv'), k, n,
                      doc_row)
    if rows != n:
        fail(f'fingerprint-docs.csv has {rows} rows; the manifest says {n} documents')
    copies = tile_table(os.path.join(src, 'copies.csv'), os.path.join(dst, 'copies.csv'), k, n, copy_row)
    redirects = tile_table(os.path.join(src, 'redirects.csv'), os.path.join(dst, 'redirects.csv'), k, n,
                           redirect_row)

    # Whole-text hashes: one per non-empty document, in docID order.
    head, data = read_records(os.path.join(src, RECORDS, 'fprint-exact.fpd'), 2, EXACT.size)
    records = list(EXACT.iter_unpack(data))
    del data

    def exact_tiles():
        for t in range(k):
            lo, hi = exact_mask(t)
            off = t * n
            yield b''.join(EXACT.pack(a ^ lo, b ^ hi, d + off) for a, b, d in records)

    write_records(os.path.join(dst, RECORDS, 'fprint-exact.fpd'), head, len(records) * k, exact_tiles())
    exact = len(records)
    del records

    # Fuzzy signatures, one per row.
    head, data = read_records(os.path.join(src, RECORDS, 'fuzzy.fpd'), 6, 16)
    if len(data) // 16 != n:
        fail('fuzzy.fpd does not hold one record per document')
    write_records(os.path.join(dst, RECORDS, 'fuzzy.fpd'), head, n * k,
                  [data] + [tiled_signatures(data, t) for t in range(1, k)])

    # Each row's docID.
    path = os.path.join(src, RECORDS, 'doc-ids.fpd')
    if os.path.exists(path):
        head, data = read_records(path, 11, DOC_ID.size)
        records = list(DOC_ID.iter_unpack(data))
        if len(records) != n or any(r[0] != i for i, r in enumerate(records)):
            fail('doc-ids.fpd does not give each row its own docID (not a first analysis)')
        tiles = (b''.join(DOC_ID.pack(d + t * n, m, fl) for d, m, fl in records) for t in range(k))
        write_records(os.path.join(dst, RECORDS, 'doc-ids.fpd'), head, n * k, tiles)
        del records

    # Each URL's docID, sorted by key: tile t's key is the source's xor t,
    # as for fingerprints, so each record is followed by its copies.
    path = os.path.join(src, RECORDS, 'urls.fpd')
    if os.path.exists(path):
        head, data = read_records(path, 9, URL.size)
        bits = tile_bits(k)
        orders = tile_orders(k, bits)
        low = (1 << bits) - 1
        urls = len(data) // URL.size
        out = bytearray(urls * k * URL.size)
        pos, previous = 0, None
        for lo, hi, doc, digest, decoding in URL.iter_unpack(data):
            if previous is not None and (hi, lo >> bits) <= previous:
                fail('urls.fpd: keys not sorted, or two differing only in the bits that carry the tile')
            previous = (hi, lo >> bits)
            for t in orders[lo & low]:
                URL.pack_into(out, pos, lo ^ t, hi, doc if doc == NONE else doc + t * n, digest, decoding)
                pos += URL.size
        del data
        write_records(os.path.join(dst, RECORDS, 'urls.fpd'), head, urls * k, [out])
        del out

    # The manifest: K times the documents, no later stage's settings, and
    # no record files' checksums, which were the source's: overlap reads
    # the tiled files as those of an analysis written before checksums
    # were recorded, and the stages run on them record their own.
    manifest['documents'] = manifest['next_doc_id'] = n * k
    manifest.pop('exact', None)
    manifest.pop('pairs', None)
    manifest.pop('record_files', None)
    with open(os.path.join(dst, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')
    with open(os.path.join(src, 'stats.json')) as f:
        stats = json.load(f)
    with open(os.path.join(dst, 'stats.json'), 'w') as f:
        json.dump({'overlap_version': stats.get('overlap_version'), 'fingerprint': stats['fingerprint']}, f,
                  indent=2)
        f.write('\n')
    missing = [o for o in stamp['outputs'] if not os.path.exists(os.path.join(dst, o))]
    if missing:
        fail(f'the fingerprint stage lists outputs not tiled: {", ".join(missing)}')
    shutil.copy(stamp_path, os.path.join(dst, '.overlap'))
    print(f'{n} documents, {n * k} in {k} tiles: {fingerprints * k} chunk fingerprint records, '
          f'{exact * k} exact hashes, {(copies or 0) * k} copies, {(redirects or 0) * k} redirects')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('source', help='an output directory the pairs stage completed (with --from fingerprint, the fingerprint stage)')
    ap.add_argument('target', help='the directory to create')
    ap.add_argument('tiles', type=int, help='how many times larger (2 or more)')
    ap.add_argument('--from', dest='stage', choices=('report', 'fingerprint'), default='report',
                    help="what the copy serves: 'report' (the default) tiles what the report reads; "
                         "'fingerprint' tiles the fingerprint stage's outputs, for the exact and pairs "
                         "stages to run on")
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1,
                    help='processes tiling fingerprint partitions (with --from fingerprint)')
    args = ap.parse_args()
    if args.tiles < 2:
        sys.exit('tile_outdir.py: tiles must be 2 or more')
    src, dst, k = args.source, args.target, args.tiles
    if os.path.exists(dst):
        sys.exit(f'tile_outdir.py: {dst} exists')
    if args.stage == 'fingerprint':
        tile_fingerprint(src, dst, k, max(1, args.jobs))
        return
    os.makedirs(os.path.join(dst, '.overlap'))
    os.makedirs(os.path.join(dst, RECORDS))
    csv.field_size_limit(1 << 30)

    with open(os.path.join(src, 'docs.csv'), newline='', encoding='utf-8') as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    n = len(rows)
    col = {c: header.index(c) for c in ('doc_id', 'url', 'host', 'exact_center', 'near_group')}
    with open(os.path.join(dst, 'docs.csv'), 'w', newline='', encoding='utf-8') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(header)
        for t in range(k):
            off, tag = t * n, f't{t}'
            for r in rows:
                r = list(r)
                r[col['doc_id']] = str(int(r[col['doc_id']]) + off)
                if r[col['exact_center']]:
                    r[col['exact_center']] = str(int(r[col['exact_center']]) + off)
                if t:
                    if r[col['host']]:
                        r[col['host']] = tiled_host(r[col['host']], tag)
                    r[col['url']] = tiled_url(r[col['url']], tag)
                r[col['near_group']] = ''
                w.writerow(r)
    del rows

    with open(os.path.join(src, 'overlap.csv')) as f:
        first = f.readline()
        pairs = [line.rstrip('\n').split(',') for line in f if line.strip()]
    with open(os.path.join(dst, 'overlap.csv'), 'w') as f:
        f.write(first)
        for t in range(k):
            off = t * n
            f.write(''.join(f'{int(i) + off},{int(j) + off},{s}\n' for i, j, s in pairs))

    fuzzy = os.path.join(src, RECORDS, 'fuzzy.fpd')
    if os.path.exists(fuzzy):
        with open(fuzzy, 'rb') as f:
            head, records = bytearray(f.read(64)), f.read()
        if struct.unpack_from('<Q', head, 32)[0] != n:
            sys.exit(f'tile_outdir.py: {fuzzy} does not hold one record per row of docs.csv')
        struct.pack_into('<Q', head, 32, n * k)
        with open(os.path.join(dst, RECORDS, 'fuzzy.fpd'), 'wb') as f:
            f.write(head)
            f.write(records)
            for t in range(1, k):
                f.write(tiled_signatures(records, t))

    with open(os.path.join(src, 'manifest.json')) as f:
        manifest = json.load(f)
    if manifest.get('next_doc_id') != n:
        sys.exit('tile_outdir.py: the source is a chain of analyses (docIDs with gaps); tile a first analysis')
    manifest['documents'] = manifest['next_doc_id'] = n * k
    # The source's checksums describe none of the tiled files (see above).
    manifest.pop('record_files', None)
    with open(os.path.join(dst, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
    shutil.copy(os.path.join(src, 'stats.json'), dst)
    for stage in ('fingerprint', 'exact', 'pairs'):
        shutil.copy(os.path.join(src, '.overlap', f'{stage}.stamp'), os.path.join(dst, '.overlap'))
    print(f'{n} documents, {n * k} in {k} tiles')


if __name__ == '__main__':
    main()
