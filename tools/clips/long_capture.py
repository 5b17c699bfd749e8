#!/usr/bin/env python3
"""Writes a long motion capture for the latency and speed figures (docs/APP.md): a BVH clip
played forward, backward, forward... until it has N frames, at its own frame rate.

    python3 tools/clips/long_capture.py ../shared/assets/CMU_131_01.bvh /tmp/long_capture.bvh 2400

CMU_131_01 (994 frames at 120 fps) becomes 2,400 frames, 20.0 s: the issue's "20 s of
120 fps capture". The motion turns around at each end, so it stays continuous.
"""
import sys


def main(source: str, out: str, frames: int) -> None:
    lines = open(source, encoding="utf-8").read().splitlines()
    motion = next(i for i, l in enumerate(lines) if l.strip() == "MOTION")
    header = lines[: motion + 1]
    frame_time = lines[motion + 2]
    samples = [l for l in lines[motion + 3 :] if l.strip()]
    order, step, i = [], 1, 0
    while len(order) < frames:
        order.append(samples[i])
        if not 0 <= i + step < len(samples):
            step = -step
        i += step
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(header + [f"Frames: {frames}", frame_time] + order) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
