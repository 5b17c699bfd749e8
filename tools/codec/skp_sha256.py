#!/usr/bin/env python3
"""skp_sha256.py OLD NEW [ASSETS_DIR] [--effort E] [--jobs N]

Compresses every shared asset (glTF, BVH, FBX, ACL raw clips; `format_reference` too) with
two skelpack binaries at four settings (the defaults, `--preset acl`, `--preset aggressive`,
`--preset ozz --method linear`) and compares the .skp files: sha256 and size per file, and
a summary (how many identical, smaller, larger; the largest growth). A binary may be given
as `PATH:VAR=VALUE,...` to run it with environment variables set (an A/B of one build's
switch). Exit status 1 when any .skp grew.
"""
import argparse, hashlib, os, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

SETTINGS = [
    ('default', []),
    ('acl', ['--preset', 'acl']),
    ('aggressive', ['--preset', 'aggressive']),
    ('ozz-linear', ['--preset', 'ozz', '--method', 'linear']),
]
EXTS = ('.glb', '.gltf', '.bvh', '.fbx', '.acl.sjson')


def binary(spec):
    path, _, envs = spec.partition(':')
    env = dict(os.environ)
    for kv in filter(None, envs.split(',')):
        k, _, v = kv.partition('=')
        env[k] = v
    return path, env


def run(spec, asset, extra, out, effort):
    path, env = binary(spec)
    cmd = [path, 'compress', asset, *extra, '-o', out]
    if effort:
        cmd += ['--effort', effort]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if p.returncode != 0 or not os.path.exists(out):
        return None, None
    data = open(out, 'rb').read()
    os.remove(out)
    return hashlib.sha256(data).hexdigest(), len(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('assets', nargs='?', default=os.path.join(os.path.dirname(__file__), '..', '..', '..', 'shared', 'assets'))
    ap.add_argument('--effort', default=None)
    ap.add_argument('--jobs', type=int, default=1)
    a = ap.parse_args()
    assets = sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk(a.assets)
        for f in fs
        if f.endswith(EXTS) and os.path.dirname(os.path.join(d, f)).count(os.sep) - a.assets.rstrip(os.sep).count(os.sep) <= 1
    )
    tmp = tempfile.mkdtemp()
    jobs = [(asset, name, extra) for asset in assets for name, extra in SETTINGS]

    def one(i):
        asset, name, extra = jobs[i]
        old = run(a.old, asset, extra, os.path.join(tmp, f'{i}.old.skp'), a.effort)
        new = run(a.new, asset, extra, os.path.join(tmp, f'{i}.new.skp'), a.effort)
        return asset, name, old, new

    with ThreadPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(one, range(len(jobs))))
    same = smaller = larger = failed = skipped = 0
    worst = (0.0, None)
    for asset, name, (osha, osz), (nsha, nsz) in rows:
        label = f'{os.path.basename(asset)} [{name}]'
        if osha is None and nsha is None:
            skipped += 1  # neither binary compresses it (format_reference: scalar tracks only)
        elif osha is None or nsha is None:
            failed += 1
            print(f'FAILED   {label}: old {osz} new {nsz}')
        elif osha == nsha:
            same += 1
        else:
            change = (nsz - osz) / osz
            if nsz > osz:
                larger += 1
                worst = max(worst, (change, label))
            else:
                smaller += 1
            print(f'{"LARGER " if nsz > osz else "differs"}  {label}: {osz} -> {nsz} B ({100 * change:+.2f} %)')
    print(f'{len(rows)} .skp: {same} identical (sha256), {smaller} different and not larger, {larger} larger, {failed} failed; {skipped} compressed by neither')
    if worst[1]:
        print(f'largest growth: {worst[1]} {100 * worst[0]:+.2f} %')
    os.rmdir(tmp)
    sys.exit(1 if larger or failed else 0)


if __name__ == '__main__':
    main()
