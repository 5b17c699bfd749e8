#!/usr/bin/env python3
"""fbx_open.py SKELPACK FBX... [--rounds N] [--json]

Opening an FBX file against opening the same scene as glTF (issue 25's benchmark), in one
run. For each FBX file, `SKELPACK convert` first writes the scene as glTF into a temporary
folder; then, per round and alternating which goes first:

  app      SKELPACK view FILE --screenshot T.png under xvfb-run: the app prints
           "open: first result shown N ms after the file started to be read", the time from
           the first byte read to the first compressed result drawn (import, first codec
           pass, upload, paint). The app's start (window, adapter) is not in it.
  inspect  SKELPACK inspect FILE: the command's CPU (user + system, getrusage of the child),
           the whole process: start, read, import, print.

Prints per file the medians of FBX and glTF and their ratio (FBX / glTF). The issue's target
is a ratio of at most 2.
"""
import argparse, json, os, re, resource, statistics, subprocess, sys, tempfile

FIRST = re.compile(r'open: first result shown (\d+(?:\.\d+)?) ms')


def cpu_ms(cmd):
    """CPU (user + sys) of one child process in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)} exited {p.returncode}')
    return 1000.0 * ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def first_result_ms(skelpack, path, shot):
    """The app's own figure: file read to first result on screen, in ms."""
    env = dict(os.environ, XDG_RUNTIME_DIR=tempfile.mkdtemp())
    cmd = ['xvfb-run', '-a', '-s', '-screen 0 1600x1000x24', skelpack, 'view', path,
           '--window', '1600x1000', '--screenshot', shot]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = FIRST.search(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)} exited {p.returncode}:\n{p.stderr}')
    return float(m.group(1)) if m else None  # a file with no take has no result to show


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('skelpack')
    ap.add_argument('files', nargs='+')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    pairs = []
    for f in a.files:
        glb = os.path.join(tmp, os.path.splitext(os.path.basename(f))[0] + '.glb')
        subprocess.run([a.skelpack, 'convert', f, glb], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pairs.append((f, glb))
    runs = {f: {k: [] for k in ('app_fbx', 'app_gltf', 'inspect_fbx', 'inspect_gltf')} for f, _ in pairs}
    shot = os.path.join(tmp, 'shot.png')
    for r in range(a.rounds):
        for f, glb in pairs:
            order = [('fbx', f), ('gltf', glb)]
            if r % 2:
                order.reverse()
            for kind, path in order:
                runs[f]['inspect_' + kind].append(cpu_ms([a.skelpack, 'inspect', path]))
                runs[f]['app_' + kind].append(first_result_ms(a.skelpack, path, shot))
    rows = []
    for f, d in runs.items():
        m = {k: statistics.median(v) if None not in v else None for k, v in d.items()}
        app = m['app_fbx'] is not None and m['app_gltf'] is not None
        rows.append({'file': os.path.basename(f),
                     **{k + '_ms': round(v, 1) if v is not None else None for k, v in m.items()},
                     'app_ratio': round(m['app_fbx'] / m['app_gltf'], 2) if app else None,
                     'inspect_ratio': round(m['inspect_fbx'] / m['inspect_gltf'], 2)})
    load = open('/proc/loadavg').read().split()[0]
    if a.json:
        print(json.dumps({'rounds': a.rounds, 'load': float(load), 'files': rows}, indent=1))
        return
    print(f'{"file":46} {"app FBX":>8} {"glTF":>7} {"x":>5} {"inspect FBX":>12} {"glTF":>7} {"x":>5}')
    def cell(v, width, digits=1):
        return f'{v:{width}.{digits}f}' if v is not None else f'{"-":>{width}}'
    for r in rows:
        print(f'{r["file"]:46} {cell(r["app_fbx_ms"], 8)} {cell(r["app_gltf_ms"], 7)} '
              f'{cell(r["app_ratio"], 5, 2)} {r["inspect_fbx_ms"]:12.1f} {r["inspect_gltf_ms"]:7.1f} {r["inspect_ratio"]:5.2f}')
    print(f'ms; medians of {a.rounds} alternating rounds; load average {load}')


if __name__ == '__main__':
    main()
