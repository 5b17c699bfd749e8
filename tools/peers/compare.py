#!/usr/bin/env python3
"""Compares skelpack's glTF exports with gltfpack and glTF-Transform on every shared glTF asset.

    (cd tools/peers && npm ci)            # the pinned peers and meshoptimizer's decoder
    cargo build --release
    python3 tools/peers/compare.py [--assets ../shared/assets] [--only NAME] [--markdown]
                                  [--skelpack-only] [--skelpack PATH]

`--skelpack-only` runs skelpack's two exports and no peer (a quick loop: every asset in about a
minute); `--skelpack PATH` judges another skelpack binary (e.g. main's, for a before / after).

Every output (peer or skelpack) is judged by ../shared/tools/animeval.py against the original
at the asset's tolerance (0.1 mm at 3 cm markers, in scene units as `skelpack inspect --json`
reports them) with `--markers physical --player portable`. Meshopt-compressed outputs are first
decoded by meshoptimizer's reference decoder (decode_meshopt.mjs), since animeval.py needs a
helper the shared kit does not ship; "stored" bytes are then counted on the compressed file the
way animeval.py counts them (each compressed view's bytes pro-rated over its accessors; each
accessor once per animation, summed over animations). "raw" bytes are animeval's animation
bytes (count x element size).

Prints, per asset, every output's raw and stored bytes and max error, then the summary table
(docs/EXPORT.md): skelpack's raw / stored against the smallest peer within the tolerance.
"""
import argparse, json, os, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(HERE, 'node_modules', '.bin')
SKELPACK = os.path.join(ROOT, 'target', 'release', 'skelpack')
MESHOPT = ('EXT_meshopt_compression', 'KHR_meshopt_compression')
NCOMP = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4}
CSIZE = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}

# gltfpack -cc at ten settings (-af 0 keeps the source keys; rotation / translation bits).
GLTFPACK_CC = [['-kn', '-af', '0', '-cc']] + [
    ['-kn', '-af', '0', '-cc', '-ar', str(r), '-at', str(t), '-as', str(t)]
    for r in (16, 14, 12) for t in (24, 20, 16)
]


def peers(skelpack_only=False):
    """(label, kind, argv builder): kind 'raw' or 'stored' (byte-compressed)."""
    if skelpack_only:
        return [
            ('skelpack', 'raw', lambda i, o: [SKELPACK, 'compress', i, '-o', o, '--force']),
            ('skelpack --meshopt', 'stored',
             lambda i, o: [SKELPACK, 'compress', i, '-o', o, '--force', '--meshopt']),
        ]
    out = [('gltfpack -kn -af 0', 'raw', lambda i, o: [f'{BIN}/gltfpack', '-i', i, '-o', o, '-kn', '-af', '0'])]
    for args in GLTFPACK_CC:
        label = 'gltfpack ' + ' '.join(args)
        out.append((label, 'stored', lambda i, o, a=args: [f'{BIN}/gltfpack', '-i', i, '-o', o] + a))
    out.append(('gltf-transform resample', 'raw', lambda i, o: [f'{BIN}/gltf-transform', 'resample', i, o]))
    out.append(('gltf-transform quantize', 'raw', lambda i, o: [f'{BIN}/gltf-transform', 'quantize', i, o]))
    out.append(('gltf-transform meshopt', 'stored', lambda i, o: [f'{BIN}/gltf-transform', 'meshopt', i, o]))
    out.append(('skelpack', 'raw', lambda i, o: [SKELPACK, 'compress', i, '-o', o, '--force']))
    out.append(('skelpack --meshopt', 'stored', lambda i, o: [SKELPACK, 'compress', i, '-o', o, '--force', '--meshopt']))
    return out


def glb_json(path):
    b = open(path, 'rb').read()
    if b[:4] != b'glTF':
        return json.loads(b)
    n = struct.unpack('<I', b[12:16])[0]
    return json.loads(b[20:20 + n])


def stored_bytes(path):
    """animeval.py's count on the file as stored: meshopt views pro-rated per accessor."""
    j = glb_json(path)
    total = 0.0
    for anim in j.get('animations', []):
        seen = set()
        for s in anim.get('samplers', []):
            seen.update([s['input'], s['output']])
        for ai in seen:
            a = j['accessors'][ai]
            size = a['count'] * NCOMP[a['type']] * CSIZE[a['componentType']]
            v = j['bufferViews'][a['bufferView']] if 'bufferView' in a else {}
            m = next((v.get('extensions', {})[k] for k in MESHOPT if k in v.get('extensions', {})), None)
            if m:
                size = m['byteLength'] * (a['count'] * m['byteStride']) / max(1, m['count'] * m['byteStride'])
            total += size
    return round(total)


def uses_meshopt(path):
    return any(e in MESHOPT for e in glb_json(path).get('extensionsUsed', []))


def judge(original, output, shell):
    """animeval.py's overall report (portable players, physical markers)."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, '..', 'shared', 'tools', 'animeval.py'),
                        original, output, '--json', '--shell', str(shell), '--markers', 'physical',
                        '--player', 'portable', '--oversample', '4'], capture_output=True)
    if r.returncode not in (0, 2):
        raise RuntimeError(r.stderr.decode()[-400:])
    return json.loads(r.stdout)


def defaults(path):
    r = subprocess.run([SKELPACK, 'inspect', path, '--json'], capture_output=True, check=True)
    d = json.loads(r.stdout)[0]
    return d['tolerance'], d['marker_offset'], d['scene_units_per_metre']


def run_asset(path, tmp, skelpack_only=False):
    tol, shell, per_m = defaults(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    rows = []
    for i, (label, kind, argv) in enumerate(peers(skelpack_only)):
        out = os.path.join(tmp, f'{stem}.{i}.glb')
        r = subprocess.run(argv(path, out), capture_output=True)
        if r.returncode or not os.path.isfile(out):
            rows.append((label, kind, None, None, None, 'failed: ' + r.stderr.decode()[-200:].strip()))
            continue
        judged = out
        if uses_meshopt(out):
            judged = out + '.decoded.glb'
            subprocess.run(['node', os.path.join(HERE, 'decode_meshopt.mjs'), out, judged], check=True)
        try:
            rep = judge(path, judged, shell)
        except RuntimeError as e:
            rows.append((label, kind, None, None, None, f'animeval: {e}'))
            continue
        o = rep['overall']
        unmatched = rep.get('unmatched_animations') or []
        err = o['max'] if not unmatched else float('inf')
        rows.append((label, kind, o['bytes_compressed'], stored_bytes(out), err, ''))
    return stem, tol, per_m, rows


def within(tol):
    """Whether an output row's max error is within `tol` (scene units)."""
    return lambda r: r[4] is not None and r[4] <= tol * (1 + 1e-6)


def mm(x, per_m):
    return x / per_m * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--assets', default=os.path.join(ROOT, '..', 'shared', 'assets'))
    ap.add_argument('--only', help='one asset file name')
    ap.add_argument('--markdown', action='store_true', help='print only the summary table')
    ap.add_argument('--skelpack-only', action='store_true', help='run no peer')
    ap.add_argument('--skelpack', help='the skelpack binary (default: this tree\'s release build)')
    args = ap.parse_args()
    if args.skelpack:
        global SKELPACK
        SKELPACK = os.path.abspath(args.skelpack)
    files = sorted(f for f in os.listdir(args.assets) if f.endswith(('.glb', '.gltf')))
    if args.only:
        files = [f for f in files if f == args.only]
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            stem, tol, per_m, rows = run_asset(os.path.join(args.assets, f), tmp, args.skelpack_only)
            ok = within(tol)
            if not args.markdown:
                print(f'== {f} (tolerance {mm(tol, per_m):.3f} mm)')
                print(f'  {"output":<52} {"raw B":>9} {"stored B":>9} {"max mm":>9}  within')
                for r in rows:
                    if r[2] is None:
                        print(f'  {r[0]:<52} {r[5]}')
                        continue
                    print(f'  {r[0]:<52} {r[2]:>9} {r[3]:>9} {mm(r[4], per_m):>9.4f}  {"yes" if ok(r) else "NO"}')
            mine = {r[0]: r for r in rows if r[0].startswith('skelpack')}
            peer_raw = [r for r in rows if not r[0].startswith('skelpack') and r[1] == 'raw' and ok(r)]
            peer_stored = [r for r in rows if not r[0].startswith('skelpack') and ok(r)]
            best_raw = min(peer_raw, key=lambda r: r[2], default=None)
            best_stored = min(peer_stored, key=lambda r: r[3], default=None)
            summary.append((f, mine.get('skelpack'), mine.get('skelpack --meshopt'), best_raw, best_stored, ok, per_m))
    print()
    print('| asset | skelpack raw B (max mm) | best peer raw within 0.1 mm | skelpack --meshopt stored B (max mm) | best peer stored within 0.1 mm |')
    print('|---|---:|---:|---:|---:|')
    for f, raw, st, br, bs, ok, per_m in summary:
        def cell(r, col):
            if r is None or r[2] is None:
                return 'failed'
            mark = '' if ok(r) else ' **over**'
            return f'{r[col]:,} ({mm(r[4], per_m):.4f}){mark}'
        peer = lambda r, col: 'none' if r is None else f'{r[col]:,} ({r[0]})'
        print(f'| {f} | {cell(raw, 2)} | {peer(br, 2)} | {cell(st, 3)} | {peer(bs, 3)} |')


if __name__ == '__main__':
    main()
