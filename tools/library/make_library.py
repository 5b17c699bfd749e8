#!/usr/bin/env python3
"""Write a library-scale batch of ACL clips made from the shared ones, for cache and shard runs.

Each clip is a window of frames cut from a shared ACL clip (its start and length drawn from a
seeded generator), renamed, in its own folder tree like a studio's: OUT/<character>/<n>.acl.sjson.
Different windows are different motion, so every clip has its own cache key; the same seed
writes the same library.

    python3 tools/library/make_library.py ../shared/assets/acl /tmp/library --clips 2000

Then, e.g. (docs/PIPELINE.md):

    /usr/bin/time -v target/release/skelpack report /tmp/library --jsonl --cache /tmp/cache
"""

import argparse
import os
import random
import re

SOURCES = ["13_07", "104_30", "49_15", "81_18", "09_02", "121_10"]
TRACK_KEYS = ("rotations =", "translations =", "scales =")


def window(lines, start, length, name):
    """The clip's lines with every track cut to frames [start, start + length)."""
    out = []
    in_clip = False
    renamed = False
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s == "clip =":
            in_clip = True
        if in_clip and not renamed and s.startswith("name ="):
            line = re.sub(r'"[^"]*"', f'"{name}"', line, count=1)
            renamed = True
        if in_clip and s.startswith("num_samples ="):
            line = re.sub(r"\d+", str(length), line, count=1)
        if s == "}":
            in_clip = False
        out.append(line)
        if s in TRACK_KEYS:
            # "[" then one sample per line up to the closing "]".
            out.append(lines[i + 1])
            j = i + 2
            samples = []
            while lines[j].strip() != "]":
                samples.append(lines[j])
                j += 1
            out.extend(samples[start : start + length])
            out.append(lines[j])
            i = j + 1
            continue
        i += 1
    return out


def frames(lines):
    for line in lines:
        m = re.match(r"\s*num_samples\s*=\s*(\d+)", line)
        if m:
            return int(m.group(1))
    raise SystemExit("no num_samples")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("acl_folder")
    ap.add_argument("out")
    ap.add_argument("--clips", type=int, default=2000)
    ap.add_argument("--frames", type=int, default=24, help="frames per clip (at most)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    sources = {}
    for s in SOURCES:
        path = os.path.join(args.acl_folder, f"{s}.acl.sjson")
        if os.path.exists(path):
            with open(path) as f:
                sources[s] = f.read().split("\n")
    names = sorted(sources)
    for n in range(args.clips):
        src = names[n % len(names)]
        lines = sources[src]
        total = frames(lines)
        length = min(args.frames, total)
        start = rng.randrange(0, total - length + 1)
        folder = os.path.join(args.out, src)
        os.makedirs(folder, exist_ok=True)
        name = f"{src}_{n:05d}_f{start}"
        with open(os.path.join(folder, f"{name}.acl.sjson"), "w") as f:
            f.write("\n".join(window(lines, start, length, name)))
    print(f"wrote {args.clips} clips from {len(names)} sources to {args.out}")


if __name__ == "__main__":
    main()
