# CPU of the compressed glTF export against the .skp compression, and two binaries side by
# side, in one run (docs/EXPORT.md, issue 28).
#
#   python3 docs/export_cpu.py NEW SOURCE... [--old OLD] [--rounds N] [--effort E]
#
# Per source and round, interleaved: `NEW compress SOURCE -o x.skp`, `NEW compress SOURCE
# -o x.glb` and (with OLD) `OLD compress SOURCE -o x.glb`; each process's user+system CPU
# (getrusage of the child), the median over rounds, the glb / skp ratio, new / old, and
# whether the two binaries' .glb files are byte-identical (sha256). With --effort E every
# process (.skp and .glb, both binaries) runs at that effort.
import argparse, hashlib, os, resource, statistics, subprocess, sys, tempfile

ap = argparse.ArgumentParser(
    description='CPU of the compressed glTF export against the .skp compression, and of two '
    'binaries side by side, in one run (docs/EXPORT.md, issue 28).')
ap.add_argument('new', help='the skelpack binary measured')
ap.add_argument('sources', nargs='+', help='source files (glTF, BVH, FBX, ACL)')
ap.add_argument('--old', help='a second skelpack binary whose .glb export is timed beside it')
ap.add_argument('--rounds', type=int, default=1, help='interleaved rounds (median reported)')
ap.add_argument('--effort', choices=['fast', 'default', 'max'],
                help='the effort every process runs at (default: the binaries\' default)')
a = ap.parse_args()
rounds = a.rounds
effort = ['--effort', a.effort] if a.effort else []
old = os.path.abspath(a.old) if a.old else None
new = os.path.abspath(a.new)
sources = a.sources
d = tempfile.mkdtemp(prefix='skelpack-export-cpu-')


def cpu(exe, src, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([exe, 'compress', src, '-o', out] + effort, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def sha(path):
    return hashlib.sha256(open(path, 'rb').read()).hexdigest()[:16]


print('| source | .skp CPU s | .glb CPU s (new) | glb / skp | .glb CPU s (old) | new / old | .glb identical |')
print('|---|---:|---:|---:|---:|---:|---|')
for src in sources:
    skp, glb, glb_old = [], [], []
    same = '-'
    for _ in range(rounds):
        skp.append(cpu(new, src, os.path.join(d, 'x.skp')))
        glb.append(cpu(new, src, os.path.join(d, 'new.glb')))
        if old:
            glb_old.append(cpu(old, src, os.path.join(d, 'old.glb')))
            same = 'yes' if sha(os.path.join(d, 'new.glb')) == sha(os.path.join(d, 'old.glb')) else 'NO'
    s, g = statistics.median(skp), statistics.median(glb)
    o = statistics.median(glb_old) if old else float('nan')
    print(f'| {os.path.basename(src)} | {s:.2f} | {g:.2f} | {g / s:.1f}x | '
          f'{o:.2f} | {g / o:.2f} | {same} |', flush=True)
for f in os.listdir(d):
    os.remove(os.path.join(d, f))
os.rmdir(d)
