#!/usr/bin/env bash
# A recrawl analysed with --previous against the same recrawl analysed in full.
#
# Usage: scripts/bench_previous.sh --old DIR_OR_FILE... --new DIR_OR_FILE...
#                                  [--same-documents] [--rounds N] [--threads N]
#                                  [-- OVERLAP_FLAG...]
#        scripts/bench_previous.sh --generate SIZE [--same-documents] [--rounds N]
#                                  [--threads N] [-- OVERLAP_FLAG...]
#
#   --old ...        the previous crawl: *.warc.gz files, or directories (their
#                    *.warc.gz files, in name order), in crawl order.
#   --new ...        the recrawl of the same sites, given the same way.
#   --generate SIZE  make both instead, in BENCH_DIR: the crawl with
#                    `scripts/gen_crawl.py --size SIZE --files 4 --jobs 2
#                    --seed 1` (as crawl-SIZE-seed1-files4/, the name
#                    scripts/bench.sh gives it), and its recrawl with
#                    `scripts/gen_recrawl.py --files 4 --jobs 2 --change 0.10`
#                    (as crawl-SIZE-seed1-files4-recrawl/). Each has its stats
#                    file beside it (DIR.stats.json, written last): data with
#                    its stats file is complete and is reused.
#   --same-documents both analyses hold the same documents: the recrawl has
#                    no revisit records and no 304s (generated with
#                    --revisits 0 --not-modified 0, as ...-recrawl-same/;
#                    with --new, that is up to you), and the --previous run
#                    has --keep-missing 0. Then overlap.csv of the two is
#                    compared through URLs (doc ids mapped by each docs.csv's
#                    url column), and must be the same table.
#   --rounds N       rounds (default 3).
#   --threads N      passed to every run (default: the tool's, the cores).
#   -- FLAG...       further flags for every `overlap run` alike (the first
#                    analysis, the full and the --previous runs), e.g.
#                    `-- --chunk lines:4 -T 15`.
#
# Without --same-documents a full run of the recrawl has fewer documents than
# the --previous analysis: a revisit of a capture not in the inputs, and a
# 304, are no document in a plain run, while the --previous run keeps those
# pages unchanged, and keeps lost and orphaned pages for --keep-missing
# (default 1) analyses. Its tables are then not comparable, only its times.
#
# First `overlap run OLD --out old` (timed once, as the first analysis), then
# in each round, one after another, into fresh directories:
#   full  `overlap run NEW --out full-R`;
#   prev  `overlap run NEW --out prev-R --previous old`.
# A slow spell of a shared machine thus weighs on both alike; each round gives
# its own ratios prev/full. Each run is timed with /usr/bin/time (wall time,
# and CPU time user + system, which drifts much less), and each stage's
# `seconds` is read from its stats.json. It prints every round, then the
# median (and range) of the ratios prev/full of wall time, CPU time, and
# each stage (fingerprint, exact, pairs, report), and checks the targets on
# the medians: the --previous run takes at most 50% of the full run's wall
# time, and its pairs stage at most 20% of the full run's. It prints the
# documents of each analysis, the counting method of the --previous run
# (`pairs.method`, which must be `delta`; if not, `pairs.delta_skipped` says
# why) and its chain figures (`fingerprint.chain`: payloads not extracted,
# bodies not even decompressed, pages kept without a payload or missing).
# Exits 1 if a target fails, the method is not delta, or (with
# --same-documents) the documents or tables differ; 2 on a usage error.
#
# Environment: OVERLAP_BIN (a binary to time instead of building
# target/release/overlap); BENCH_DIR (work directory, default target/bench;
# the runs go to BENCH_DIR/previous, emptied first).

set -euo pipefail

die() { echo "bench_previous: $*" >&2; exit 2; }
note() { echo "bench_previous: $*" >&2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3
THREADS=""
GENERATE=""
SAME=0
OLD_ARGS=()
NEW_ARGS=()
EXTRA=()
list=""
while [ $# -gt 0 ]; do
    case $1 in
        --old) list=old; shift ;;
        --new) list=new; shift ;;
        --generate) [ $# -ge 2 ] || die "--generate needs a size"; GENERATE=$2; list=""; shift 2 ;;
        --same-documents) SAME=1; list=""; shift ;;
        --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; list=""; shift 2 ;;
        --threads) [ $# -ge 2 ] || die "--threads needs a value"; THREADS=$2; list=""; shift 2 ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        --) shift; EXTRA=("$@"); break ;;
        -*) die "unknown option $1 (flags for overlap go after --)" ;;
        *)
            case $list in
                old) OLD_ARGS+=("$1") ;;
                new) NEW_ARGS+=("$1") ;;
                *) die "$1: give inputs after --old or --new" ;;
            esac
            shift ;;
    esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, not '$ROUNDS'"
[ -z "$THREADS" ] || [[ "$THREADS" =~ ^[1-9][0-9]*$ ]] \
    || die "--threads must be a positive integer, not '$THREADS'"
if [ -n "$GENERATE" ]; then
    [ ${#OLD_ARGS[@]} -eq 0 ] && [ ${#NEW_ARGS[@]} -eq 0 ] || die "--generate makes the crawls: no --old or --new with it"
    [[ "$GENERATE" =~ ^[0-9]+(\.[0-9]+)?[KMGTkmgt]?(i?[Bb])?$ ]] || die "--generate needs a size such as 200M, not '$GENERATE'"
else
    [ ${#OLD_ARGS[@]} -gt 0 ] || die "no previous crawl: give --old DIR_OR_FILE... or --generate SIZE (see --help)"
    [ ${#NEW_ARGS[@]} -gt 0 ] || die "no recrawl: give --new DIR_OR_FILE... (see --help)"
fi
for f in ${EXTRA[@]+"${EXTRA[@]}"}; do
    case $f in
        --out|--out=*|--previous|--previous=*) die "$f is set by the benchmark; not after --" ;;
        --keep-missing|--keep-missing=*) die "$f would apply to the runs without --previous too; --same-documents sets --keep-missing 0" ;;
        --threads|--threads=*) die "give --threads before --, so that it applies to every run" ;;
    esac
done
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time); install it with: apt-get install -y time"
command -v python3 >/dev/null || die "python3 is missing"

# expand NAME ARG...: sets the array NAME to the files, a directory giving its
# *.warc.gz in name order.
expand() {
    local -n out=$1
    shift
    out=()
    local a f found
    for a in "$@"; do
        if [ -d "$a" ]; then
            found=0
            while IFS= read -r f; do out+=("$f"); found=1; done \
                < <(find "$a" -maxdepth 1 -name '*.warc.gz' \( -type f -o -type l \) | LC_ALL=C sort)
            [ $found = 1 ] || die "$a: no *.warc.gz in this directory"
        elif [ -f "$a" ]; then
            out+=("$a")
        else
            die "$a: no such file or directory"
        fi
    done
}

cd "$ROOT"
BENCH=${BENCH_DIR:-$ROOT/target/bench}
mkdir -p "$BENCH"
BENCH=$(cd "$BENCH" && pwd)

if [ -n "$GENERATE" ]; then
    crawl=$BENCH/crawl-$GENERATE-seed1-files4
    if [ -f "$crawl.stats.json" ]; then
        note "reusing $crawl"
    else
        note "generating $crawl (gen_crawl.py --size $GENERATE)"
        rm -rf "$crawl"
        python3 scripts/gen_crawl.py --out "$crawl" --size "$GENERATE" --files 4 --jobs 2 --seed 1 \
            --stats "$crawl.stats.json.tmp" >&2 || die "gen_crawl.py failed"
        mv "$crawl.stats.json.tmp" "$crawl.stats.json"
    fi
    recrawl=$crawl-recrawl
    shares=()
    if [ $SAME = 1 ]; then
        recrawl=$crawl-recrawl-same
        shares=(--revisits 0 --not-modified 0)
    fi
    if [ -f "$recrawl.stats.json" ]; then
        note "reusing $recrawl"
    else
        note "generating $recrawl (gen_recrawl.py --change 0.10${shares[*]+ ${shares[*]}})"
        rm -rf "$recrawl"
        python3 scripts/gen_recrawl.py --crawl "$crawl" --out "$recrawl" --files 4 --jobs 2 \
            --change 0.10 ${shares[@]+"${shares[@]}"} --stats "$recrawl.stats.json.tmp" -q >&2 \
            || die "gen_recrawl.py failed"
        mv "$recrawl.stats.json.tmp" "$recrawl.stats.json"
    fi
    OLD_ARGS=("$crawl")
    NEW_ARGS=("$recrawl")
fi
expand OLD "${OLD_ARGS[@]}"
expand NEW "${NEW_ARGS[@]}"

if [ -n "${OVERLAP_BIN:-}" ]; then
    BIN=$OVERLAP_BIN
    [ -x "$BIN" ] || die "OVERLAP_BIN=$BIN is not an executable"
else
    cargo build --release --quiet || die "cargo build failed"
    BIN=$ROOT/target/release/overlap
fi

WORK=$BENCH/previous
rm -rf "$WORK"
mkdir -p "$WORK/stats"
FLAGS=(-q)
[ -z "$THREADS" ] || FLAGS+=(--threads "$THREADS")
FLAGS+=(${EXTRA[@]+"${EXTRA[@]}"})
KEEP=()
[ $SAME = 0 ] || KEEP=(--keep-missing 0)

# Warm the page cache, so that every run reads the files the same way.
cat "${OLD[@]}" "${NEW[@]}" >/dev/null

# run NAME ROUND OVERLAP_ARG...: `overlap run` into a fresh $WORK/NAME-ROUND;
# appends "round wall cpu" to $WORK/stats/NAME.times and keeps the stats.json.
run() {
    local name=$1 round=$2
    shift 2
    local dir=$WORK/$name-$round
    rm -rf "$dir"
    /usr/bin/time -f "%e %U %S" -o "$WORK/last.time" "$BIN" run "$@" --out "$dir" "${FLAGS[@]}" \
        >/dev/null 2>"$WORK/last.err" \
        || { cat "$WORK/last.err" >&2; die "$name (round $round) failed: overlap run $* --out $dir ${FLAGS[*]}"; }
    awk -v r="$round" '{ printf "%s %s %.2f\n", r, $1, $2 + $3 }' "$WORK/last.time" >>"$WORK/stats/$name.times"
    cp "$dir/stats.json" "$WORK/stats/$name-$round.json"
    # Documents: the rows of docs.csv.
    echo "$(($(wc -l <"$dir/docs.csv") - 1))" >"$WORK/stats/$name-$round.docs"
}

note "first analysis: overlap run OLD (${#OLD[@]} files) --out old ${FLAGS[*]}"
run old 1 "${OLD[@]}"
mv "$WORK/old-1" "$WORK/old"
note "$ROUNDS rounds of: full (overlap run NEW, ${#NEW[@]} files), previous (... --previous old${KEEP[*]+ ${KEEP[*]}})"
for round in $(seq "$ROUNDS"); do
    run full "$round" "${NEW[@]}"
    run prev "$round" "${NEW[@]}" --previous "$WORK/old" ${KEEP[@]+"${KEEP[@]}"}
    # Keep the last round's outputs (for the comparison), not every round's.
    if [ "$round" -lt "$ROUNDS" ]; then rm -rf "$WORK/full-$round" "$WORK/prev-$round"; fi
    note "round $round done"
done
rm -f "$WORK/last.time" "$WORK/last.err"

python3 - "$WORK" "$ROUNDS" "$SAME" "${#OLD[@]}" "${#NEW[@]}" "${FLAGS[*]}" <<'EOF'
import collections, csv, json, statistics, sys

work, rounds, same = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
n_old, n_new, flags = sys.argv[4], sys.argv[5], sys.argv[6]
STAGES = ("fingerprint", "exact", "pairs", "report")
failed = []

def times(name):
    return {int(r): (float(w), float(c)) for r, w, c in (l.split() for l in open(f"{work}/stats/{name}.times"))}

def stats(name, r):
    return json.load(open(f"{work}/stats/{name}-{r}.json"))

def docs(name, r):
    return int(open(f"{work}/stats/{name}-{r}.docs").read())

def ratio(a, b):
    return a / b if b > 0 else float("nan")

def med(xs):
    xs = [x for x in xs if x == x]
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3

old_t, full_t, prev_t = times("old"), times("full"), times("prev")
old_s = stats("old", 1)
print(f"flags: {flags}; old {n_old} files, new {n_new} files"
      + ("; --same-documents (--keep-missing 0)" if same else ""))
print(f"first analysis (old): {old_t[1][0]:.2f} s wall, {old_t[1][1]:.2f} s CPU, "
      f"{docs('old', 1):,} documents; stages s: "
      + ", ".join(f"{s} {old_s[s]['seconds']:.2f}" for s in STAGES))
print()
head = (f"{'round':>5} {'run':>4} {'wall s':>7} {'CPU s':>7} "
        + " ".join(f"{s[:6]:>7}" for s in STAGES))
print(head)
rows = collections.defaultdict(list)
for r in range(1, rounds + 1):
    f, p = stats("full", r), stats("prev", r)
    for name, t, s in (("full", full_t[r], f), ("prev", prev_t[r], p)):
        print(f"{r:>5} {name:>4} {t[0]:>7.2f} {t[1]:>7.2f} "
              + " ".join(f"{s[st]['seconds']:>7.2f}" for st in STAGES))
    rw, rc = ratio(prev_t[r][0], full_t[r][0]), ratio(prev_t[r][1], full_t[r][1])
    rs = [ratio(p[st]["seconds"], f[st]["seconds"]) for st in STAGES]
    rows["wall"].append(rw)
    rows["CPU"].append(rc)
    for st, x in zip(STAGES, rs):
        rows[st].append(x)
    print(f"{r:>5} {'p/f':>4} {rw:>7.2f} {rc:>7.2f} " + " ".join(f"{x:>7.2f}" for x in rs))
print()
print("median prev/full (range over rounds):")
for key in ("wall", "CPU") + STAGES:
    m, lo, hi = med(rows[key])
    print(f"  {key:<12} {m:5.2f}x  ({lo:.2f} .. {hi:.2f})")
wall, pairs = med(rows["wall"])[0], med(rows["pairs"])[0]
ok_wall, ok_pairs = wall <= 0.50, pairs <= 0.20
print(f"target: --previous run <= 50% of the full run's wall time: {wall:.0%} -> "
      f"{'holds' if ok_wall else 'DOES NOT HOLD'} (CPU {med(rows['CPU'])[0]:.0%})")
print(f"target: --previous pairs stage <= 20% of the full run's: {pairs:.0%} -> "
      f"{'holds' if ok_pairs else 'DOES NOT HOLD'}")
if not ok_wall:
    failed.append("wall-time target")
if not ok_pairs:
    failed.append("pairs target")

f, p = stats("full", rounds), stats("prev", rounds)
print()
print(f"documents: old {docs('old', 1):,}; full {docs('full', rounds):,} "
      f"({f['fingerprint']['documents']:,} read); previous {docs('prev', rounds):,} "
      f"({p['fingerprint']['documents']:,} read)")
pp = p["pairs"]
if pp.get("method") == "delta":
    d = pp.get("delta") or {}
    print(f"pairs method (--previous): delta; counted documents {d.get('counted_documents', '?'):,}, "
          f"touched {d.get('touched_documents', '?'):,}, candidates {d.get('candidates', '?'):,}, "
          f"pairs counted {d.get('counted_pairs', '?'):,} and carried {d.get('carried_pairs', '?'):,} "
          f"(full run: {f['pairs']['method']}, {f['pairs']['pairs_emitted']:,} pairs)")
else:
    why = pp.get("delta_skipped") or "no delta_skipped given (a --method flag turns delta off)"
    msg = (f"WARNING: the --previous run counted pairs with '{pp.get('method')}', NOT delta: "
           f"pairs.delta_skipped = {why}")
    print("!" * 78)
    print(msg)
    print("!" * 78)
    print(f"bench_previous: {msg}", file=sys.stderr)
    failed.append("delta method")
fp = p["fingerprint"]
chain = fp.get("chain")
key = "fingerprint.chain"
if chain is None and "previous" in fp:
    chain, key = fp["previous"], "fingerprint.previous"
if chain is None:
    print("chain: no fingerprint.chain in the --previous run's stats.json")
    failed.append("chain figures")
else:
    read = fp["documents"]
    print(f"chain ({key}): length {chain.get('chain_length')}, keep_missing {chain.get('keep_missing')}, "
          f"{chain.get('documents', 0):,} documents")
    up, un = chain.get("unchanged_payloads", 0), chain.get("unread_payloads", 0)
    print(f"  not extracted (same payload as in old): {up:,} of {read:,} documents read ({ratio(up, read):.0%}); "
          f"unread (body not decompressed): {un:,}")
    print(f"  unchanged without payload (revisit, 304): {chain.get('unchanged_without_payload', 0):,}; "
          f"kept missing: {chain.get('kept_missing', 0):,}; superseded captures: "
          f"{chain.get('superseded_captures', 0):,}; previous superseded: {chain.get('previous_superseded', 0):,}")
    print("  changes: " + ", ".join(f"{k} {v:,}" for k, v in chain.get("changes", {}).items()))
print(f"payload digest copies: full {f['fingerprint'].get('payload_digest_copies', 0):,}, "
      f"previous {fp.get('payload_digest_copies', 0):,}; revisits resolved: full "
      f"{f['fingerprint'].get('revisits', 0):,}, previous {fp.get('revisits', 0):,}")

if same:
    print()
    def table(name):
        d = f"{work}/{name}-{rounds}"
        with open(f"{d}/docs.csv", newline="", encoding="utf-8") as fh:
            url = {row["doc_id"]: row["url"] for row in csv.DictReader(fh)}
        urls = collections.Counter(url.values())
        with open(f"{d}/overlap.csv", newline="") as fh:
            pairs = collections.Counter()
            for row in csv.DictReader(fh):
                a, b = url[row["doc_i"]], url[row["doc_j"]]
                pairs[(min(a, b), max(a, b), int(row["shared"]))] += 1
        return urls, pairs
    fu, fpairs = table("full")
    pu, ppairs = table("prev")
    dup = sum(1 for c in fu.values() if c > 1) + sum(1 for c in pu.values() if c > 1)
    if fu == pu:
        print(f"same documents: yes, {sum(fu.values()):,} URLs in both docs.csv"
              + (f" ({dup} URLs with several documents)" if dup else ""))
    else:
        only_f, only_p = set(fu) - set(pu), set(pu) - set(fu)
        several = sorted(u for u in set(fu) | set(pu) if fu[u] != pu[u] and fu[u] and pu[u])
        print(f"same documents: NO: {sum(fu.values()):,} in full, {sum(pu.values()):,} in previous; "
              f"{len(only_f):,} URLs only in full, {len(only_p):,} only in previous, "
              f"{len(several):,} with more documents in one than in the other; e.g. "
              f"{sorted(only_f)[:1]} / {sorted(only_p)[:1]} / {several[:1]}")
        failed.append("same documents")
    if fpairs == ppairs:
        print(f"overlap.csv through URLs: identical ({sum(fpairs.values()):,} pairs)")
    else:
        only_f, only_p = fpairs - ppairs, ppairs - fpairs
        print(f"overlap.csv through URLs: DIFFERENT: {sum(only_f.values()):,} rows only in full, "
              f"{sum(only_p.values()):,} only in previous (of {sum(fpairs.values()):,} and "
              f"{sum(ppairs.values()):,}), e.g. {sorted(only_f)[:2]} / {sorted(only_p)[:2]}")
        failed.append("overlap.csv equality")
if failed:
    print(f"\nFAILED: {', '.join(failed)}")
sys.exit(1 if failed else 0)
EOF
