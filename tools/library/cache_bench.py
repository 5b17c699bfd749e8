#!/usr/bin/env python3
"""Cold cache against warm cache, and 4 shards merged against one run, interleaved in one run.

    python3 tools/library/cache_bench.py target/release/skelpack ../shared/assets --rounds 5

Each round: `report --json` with an empty cache folder (cold), then again with the same folder
(warm), and without a cache (none); wall and CPU (user + system) time of each. Then the four
shards of one run, each with the warm cache, merged with `report --merge`, compared byte for byte
with the warm single run's report. Prints a Markdown table (medians) and the load.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr.decode()}")
    return wall, cpu, out.stdout, out.stderr.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("skelpack")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shards", type=int, default=4)
    args = ap.parse_args()
    rows = {"none": [], "cold": [], "warm": []}
    scratch = tempfile.mkdtemp(prefix="skelpack-cache-bench-")
    cache = os.path.join(scratch, "cache")
    load = [os.getloadavg()[0]]
    warm_report = None
    for _ in range(args.rounds):
        shutil.rmtree(cache, ignore_errors=True)
        base = [args.skelpack, "report", "--json", *args.paths]
        rows["cold"].append(timed(base + ["--cache", cache])[:2])
        wall, cpu, warm_report, err = timed(base + ["--cache", cache])
        rows["warm"].append((wall, cpu))
        rows["none"].append(timed(base)[:2])
        load.append(os.getloadavg()[0])
    print(err.strip().splitlines()[-1])
    shard_files = []
    shard_wall = []
    for i in range(args.shards):
        wall, _, out, _ = timed(
            [args.skelpack, "report", "--json", *args.paths, "--cache", cache,
             "--shard", f"{i}/{args.shards}"])
        shard_wall.append(wall)
        path = os.path.join(scratch, f"shard{i}.json")
        with open(path, "wb") as f:
            f.write(out)
        shard_files.append(path)
    _, _, merged, _ = timed([args.skelpack, "report", "--merge", *shard_files])
    print("| run | wall s (median) | CPU s (median) |")
    print("|---|---:|---:|")
    for k in ("none", "cold", "warm"):
        print(f"| {k} | {statistics.median(w for w, _ in rows[k]):.3f} | "
              f"{statistics.median(c for _, c in rows[k]):.3f} |")
    cold_w = statistics.median(w for w, _ in rows["cold"])
    warm_w = statistics.median(w for w, _ in rows["warm"])
    cold_c = statistics.median(c for _, c in rows["cold"])
    warm_c = statistics.median(c for _, c in rows["warm"])
    print(f"\nwarm vs cold: {cold_w / warm_w:.1f}x wall, {cold_c / warm_c:.1f}x CPU "
          f"({args.rounds} interleaved rounds)")
    print(f"{args.shards} shards merged == one run: {merged == warm_report} "
          f"(shards {', '.join(f'{w:.2f}' for w in shard_wall)} s wall)")
    print(f"load (1 min) during the run: {min(load):.1f}-{max(load):.1f}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
