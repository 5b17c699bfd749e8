#!/usr/bin/env python3
"""Builds of runtime/examples/pose_cost.rs timed against the first, alternated round by round.

    python3 tools/runtime/ab_pose_cost.py ROUNDS POSES FILE.skp random|forward BASE NEW...

Each round runs every binary once on POSES poses of the file's first clip (the order
reversed every other round) and takes its user+sys CPU time per pose (less sensitive than
wall time to other processes on a shared machine). Prints each build's fastest round
("min") and median, the ratio of fastest rounds, and the median of the per-round ratios
to the first build ("paired"), with the load average before and after.
"""
import os, resource, subprocess, sys, statistics
rounds, poses, skp, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
bins = sys.argv[5:]
def run(b, n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([b, skp, "-", mode, str(n)], check=True, stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
t = {b: [] for b in bins}
print("load", os.getloadavg())
for r in range(rounds):
    order = bins if r % 2 == 0 else bins[::-1]
    for b in order:
        t[b].append(run(b, poses) * 1e9 / poses)
print("load", os.getloadavg())
base = bins[0]
for b in bins:
    ratios = [x / y for x, y in zip(t[b], t[base])]
    print(f"{os.path.basename(b):28s} min {min(t[b]):7.1f} med {statistics.median(t[b]):7.1f} ns  ratio-to-first: min/min {min(t[b])/min(t[base]):.3f} median-of-paired {statistics.median(ratios):.3f}")
