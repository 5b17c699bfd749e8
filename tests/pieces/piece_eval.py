#!/usr/bin/env python3
"""Measures a take piece exported to glTF against the window of the original animation it
was cut from, with animeval.py's own evaluation: the spec's sampling of the original, the
portable players' rules (slerp, nlerp, keys as stored) on the export, physical markers.

    python3 piece_eval.py ANIMEVAL.py ORIGINAL EXPORT PIECE SOURCE T0 T1 [--shell 0.03]

The original's animation SOURCE is sampled at T0 + t and the export's animation PIECE at t,
for t on a grid of the original's key times inside [T0, T1] (and T0, T1 themselves) with
three points inside each interval. Prints one JSON object: the largest marker error (scene
units), the number of samples, and the export's key time range for the piece.
"""
import argparse, importlib.util, json
import numpy as np

ap = argparse.ArgumentParser()
for a in ('animeval', 'original', 'export', 'piece', 'source'):
    ap.add_argument(a)
ap.add_argument('t0', type=float)
ap.add_argument('t1', type=float)
ap.add_argument('--shell', type=float, default=0.03)
a = ap.parse_args()
spec = importlib.util.spec_from_file_location('animeval', a.animeval)
ae = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ae)

o, c = ae.Gltf(a.original), ae.Gltf(a.export)
oi, ci = ae.resolve_animation(o, a.source), ae.resolve_animation(c, a.piece)
anim = o.anims[oi]
keys = np.unique(np.concatenate([o.accessor(s['input'])[:, 0] for s in anim['samplers']]))
eps = 1e-6
keys = np.unique(np.concatenate([[a.t0, a.t1], keys[(keys > a.t0 + eps) & (keys < a.t1 - eps)]]))
grid = [keys] + [keys[:-1] + (keys[1:] - keys[:-1]) * k / 4 for k in range(1, 4)]
t = np.unique(np.concatenate(grid))
nmap = ae.match_nodes(o, c)
joints = list(dict.fromkeys(j for s in o.json.get('skins', []) for j in s['joints']))
joints = [j for j in joints if j in nmap]
shells = [a.shell / max(ae.rest_scale(o, j), 1e-12) for j in joints]
po = ae.Pose(o, oi, t)
worst = 0.0
for quat in ae.PLAYERS['portable']:
    pc = ae.Pose(c, ci, t - a.t0, quat)
    for k, j in enumerate(joints):
        Go, Gc = po.glob(j), pc.glob(nmap[j][0])
        for ax in range(3):
            d = shells[k] * (Go[:, :3, ax] - Gc[:, :3, ax]) + (Go[:, :3, 3] - Gc[:, :3, 3])
            worst = max(worst, float(np.linalg.norm(d, axis=1).max()))
piece = c.anims[ci]
times = [c.accessor(s['input'])[:, 0] for s in piece['samplers']]
print(json.dumps({
    'max': worst,
    'samples': int(len(t)),
    'joints': len(joints),
    'first_key': float(min(x.min() for x in times)),
    'last_key': float(max(x.max() for x in times)),
}))
