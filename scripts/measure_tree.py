#!/usr/bin/env python3
"""Runs a command and measures its whole process tree: wall time, CPU
time, and peak memory, for tools that fork workers (text-dedup's
`num_proc`), where /usr/bin/time's maximum RSS is that of one process.

    scripts/measure_tree.py JSON_OUT -- COMMAND [ARG...]

Every 50 ms it finds the command's descendants in /proc and sums their
proportional set size (PSS: a page shared by n processes, as forked
workers share their parent's, counts 1/n in each) and their RSS. It
writes JSON_OUT with `seconds` (wall), `cpu_seconds` (user + system of
the tree, as the kernel accounts waited-for children), `peak_pss_mb`
(the largest sum sampled), `peak_rss_sum_mb`, `max_process_rss_mb` (the
largest single process's peak, from getrusage: exact, unless the program
resets its peak counter, as overlap does at each stage), `peak_mb` (the
larger of peak_pss_mb and max_process_rss_mb), `processes` (the most
seen at once) and `exit_code`; and exits with the command's code. Linux
only.
"""

import json
import os
import resource
import subprocess
import sys
import time


def children_map():
    """parent pid -> child pids, from /proc/*/stat."""
    kids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces.
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def task_children(pid):
    """The children of pid from /proc/PID/task/*/children, or None where
    the kernel has no such files."""
    kids = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            return None
        except OSError:
            pass
    return kids


def tree(root):
    """root and its descendants. Reading each process's children files is
    far cheaper than reading every process's stat, which the sampler
    would otherwise do 20 times a second beside the measured work."""
    out, todo, kids = [], [root], None
    while todo:
        p = todo.pop()
        out.append(p)
        found = task_children(p) if kids is None else None
        if found is None:
            kids = kids or children_map()
            found = kids.get(p, ())
        todo.extend(found)
    return out


def memory_kb(pid):
    """(PSS, RSS) in kB, or None for a process that is gone."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
    except OSError:
        return None
    return pss, rss


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: scripts/measure_tree.py JSON_OUT -- COMMAND [ARG...]")
    out, cmd = sys.argv[1], sys.argv[3:]
    start = time.monotonic()
    child = subprocess.Popen(cmd)
    peak_pss = peak_rss = most = 0
    while child.poll() is None:
        pss = rss = n = 0
        for pid in tree(child.pid):
            m = memory_kb(pid)
            if m:
                pss, rss, n = pss + m[0], rss + m[1], n + 1
        peak_pss, peak_rss, most = max(peak_pss, pss), max(peak_rss, rss), max(most, n)
        time.sleep(0.05)
    seconds = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "command": cmd,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_pss_mb": round(peak_pss / 1024, 1),
        "peak_rss_sum_mb": round(peak_rss / 1024, 1),
        "max_process_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "peak_mb": round(max(peak_pss, usage.ru_maxrss) / 1024, 1),
        "processes": most,
        "exit_code": child.returncode,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
