#!/usr/bin/env python3
"""Why SimpleSkin.gltf cannot go below 144 raw bytes within 0.1 mm (portable players).

    python3 tools/peers/byte_rotation_floor.py [--shell 0.03] [--tolerance 1e-4]

A player that uses stored keys without normalizing (animeval's `raw` rule, three.js) builds
each key's matrix from the quaternion as stored. A rotation accessor holds one component type
for all its keys, so a layout smaller than normalized SHORT (8 B a key) needs normalized BYTE
(4 B a key). This checks every normalized signed BYTE quaternion (x, y, z, w) / 127 against
z rotations of 85 to 90 degrees (SimpleSkin's plateaus are at 90): the marker error (animeval's:
markers `shell` along each joint axis) of the best BYTE key at each angle on a 0.1-degree grid.
Between grid angles the target moves by at most 0.05 degrees, i.e. `shell * 0.05 * pi / 180`
per marker, so a grid minimum above `tolerance` plus that margin proves that no BYTE key holds
any angle of the range. Keys with |x| or |y| above sqrt(tol / shell / 2) * 127 are skipped:
their z-axis marker alone moves by 2 (x^2 + y^2) / 127^2 * shell > tol.
"""
import argparse
import numpy as np


def mat(q):
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shell', type=float, default=0.03)
    ap.add_argument('--tolerance', type=float, default=1e-4)
    args = ap.parse_args()
    shell, tol = args.shell, args.tolerance
    lim = int(np.floor(np.sqrt(tol / shell / 2) * 127))
    v = np.arange(-127, 128)
    Z, W = (a.ravel() for a in np.meshgrid(v, v, indexing='ij'))
    angles = np.arange(85.0, 90.0 + 1e-9, 0.1)
    best = np.full(len(angles), np.inf)
    targets = [mat(np.array([0, 0, np.sin(np.radians(a) / 2), np.cos(np.radians(a) / 2)]))
               for a in angles]
    for x in range(-lim, lim + 1):
        for y in range(-lim, lim + 1):
            q = np.stack([np.full(Z.shape, x), np.full(Z.shape, y), Z, W], -1) / 127.0
            M = mat(q)
            for i, R in enumerate(targets):
                e = shell * np.linalg.norm(M - R, axis=-2).max(-1)
                best[i] = min(best[i], float(e.min()))
    margin = shell * np.radians(0.05)
    worst = int(np.argmin(best))
    print(f'|x|, |y| <= {lim}; {len(v) ** 2 * (2 * lim + 1) ** 2} BYTE keys; '
          f'{len(angles)} angles 85..90 degrees')
    print(f'smallest marker error of any BYTE key: {best[worst] * 1000:.4f} mm at '
          f'{angles[worst]:.1f} degrees (tolerance {tol * 1000:.4f} mm + grid margin '
          f'{margin * 1000:.4f} mm)')
    held = best[worst] <= tol + margin
    print('a BYTE key may hold some angle' if held else
          'no BYTE key holds any z rotation of 85 to 90 degrees within the tolerance')
    return 1 if held else 0


if __name__ == '__main__':
    raise SystemExit(main())
