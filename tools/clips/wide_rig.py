#!/usr/bin/env python3
"""Writes a wide rig for the latency and speed figures (docs/APP.md): a BVH whose root's
limbs (every joint block directly under the root) are repeated COPIES times, each copy
renamed and playing the same motion a few frames later, so the copies differ.

    python3 tools/clips/wide_rig.py ../shared/assets/CMU_131_01.bvh /tmp/wide_rig.bvh 28 [FRAMES]

CMU_131_01 has 31 joints (the root and 5 limbs of 30 joints); 28 copies of the limbs make
1 + 28 * 30 = 841 joints: the issue's "840-joint rig", at the capture's 994 frames or its
first FRAMES.
"""
import sys


def blocks(lines, start, end):
    """(first, last) line indices of each JOINT block directly inside lines[start:end]."""
    out, depth, first = [], 0, None
    for i in range(start, end):
        s = lines[i].strip()
        if depth == 0 and s.startswith("JOINT"):
            first = i
        if s == "{":
            depth += 1
        elif s == "}":
            depth -= 1
            if depth == 0 and first is not None:
                out.append((first, i))
                first = None
    return out


def channels(lines):
    return sum(int(l.split()[1]) for l in lines if l.strip().startswith("CHANNELS"))


def main(source: str, out: str, copies: int, keep: int = 0) -> None:
    lines = open(source, encoding="utf-8").read().splitlines()
    motion = next(i for i, l in enumerate(lines) if l.strip() == "MOTION")
    root_open = next(i for i, l in enumerate(lines) if l.strip() == "{")
    root_close = max(i for i in range(motion) if lines[i].strip() == "}")
    limbs = blocks(lines, root_open + 1, root_close)
    root_channels = channels(lines[root_open:limbs[0][0]])
    header = lines[: limbs[0][0]]
    limb_lines = [lines[a : b + 1] for a, b in limbs]
    limb_channels = [channels(l) for l in limb_lines]
    body = []
    for k in range(copies):
        for limb in limb_lines:
            for l in limb:
                s = l.strip()
                if k and (s.startswith("JOINT") or s.startswith("ROOT")):
                    l = f"{l}_{k}"
                body.append(l)
    samples = [l.split() for l in lines[motion + 3 :] if l.strip()]
    n = len(samples)
    kept = min(keep, n) if keep > 0 else n
    frames = []
    for f in range(kept):
        row = samples[f][:root_channels]
        for k in range(copies):
            src = samples[(f + 7 * k) % n] if k else samples[f]
            at = root_channels
            for c in limb_channels:
                row += src[at : at + c]
                at += c
        frames.append(" ".join(row))
    text = header + body + lines[root_close : motion + 1] + [f"Frames: {kept}", lines[motion + 2]]
    text += frames
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else 0)
