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
"""

import argparse
import array
import csv
import json
import os
import shutil
import struct
import sys


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('source', help='an output directory the pairs stage completed')
    ap.add_argument('target', help='the directory to create')
    ap.add_argument('tiles', type=int, help='how many times larger (2 or more)')
    args = ap.parse_args()
    if args.tiles < 2:
        sys.exit('tile_outdir.py: tiles must be 2 or more')
    src, dst, k = args.source, args.target, args.tiles
    if os.path.exists(dst):
        sys.exit(f'tile_outdir.py: {dst} exists')
    os.makedirs(os.path.join(dst, '.overlap'))
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

    fuzzy = os.path.join(src, 'fuzzy.fpd')
    if os.path.exists(fuzzy):
        with open(fuzzy, 'rb') as f:
            head, records = bytearray(f.read(64)), f.read()
        if struct.unpack_from('<Q', head, 32)[0] != n:
            sys.exit(f'tile_outdir.py: {fuzzy} does not hold one record per row of docs.csv')
        struct.pack_into('<Q', head, 32, n * k)
        with open(os.path.join(dst, 'fuzzy.fpd'), 'wb') as f:
            f.write(head)
            f.write(records)
            for t in range(1, k):
                f.write(tiled_signatures(records, t))

    with open(os.path.join(src, 'manifest.json')) as f:
        manifest = json.load(f)
    if manifest.get('next_doc_id') != n:
        sys.exit('tile_outdir.py: the source is a chain of analyses (docIDs with gaps); tile a first analysis')
    manifest['documents'] = manifest['next_doc_id'] = n * k
    with open(os.path.join(dst, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
    shutil.copy(os.path.join(src, 'stats.json'), dst)
    for stage in ('fingerprint', 'exact', 'pairs'):
        shutil.copy(os.path.join(src, '.overlap', f'{stage}.stamp'), os.path.join(dst, '.overlap'))
    print(f'{n} documents, {n * k} in {k} tiles')


if __name__ == '__main__':
    main()
