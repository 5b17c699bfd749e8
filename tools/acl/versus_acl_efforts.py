#!/usr/bin/env python3
"""versus_acl_efforts.py SKELPACK CLIP.acl.sjson... [--rounds N] [--efforts fast,default,max] [--json]

../shared/tools/acl/versus_acl.py at every effort in one run: for each ACL raw clip, in
alternating order per round, ACL 2.1 (`acl_compressor`, its defaults; `acl_parse_only`) and
skelpack (`compress CLIP --preset acl --effort E -o FILE`, one thread, per effort; `inspect
CLIP`) are timed as CPU (user + sys) of the child process. Neither timed run prints a report:
the sizes come from untimed runs (`--json`; `-stats`). skelpack's timed run still writes and
syncs its output file, which ACL's does not. Prints per clip and effort the process
ratio and the codec ratio (each minus its own parse) as versus_acl.py computes them, and the
sizes: skelpack's payload bytes (`--json`) against ACL's `compressed_size` (`-stats`).
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile



def shared_acl():
    """The shared ACL tools: $ACL_TOOLS, else the first `shared/tools/acl` above this file."""
    if 'ACL_TOOLS' in os.environ:
        return os.environ['ACL_TOOLS']
    d = os.path.dirname(os.path.abspath(__file__))
    while d != os.path.dirname(d):
        d = os.path.dirname(d)
        if os.path.isfile(os.path.join(d, 'shared', 'tools', 'acl', 'bin', 'acl_compressor')):
            return os.path.join(d, 'shared', 'tools', 'acl')
    sys.exit('no shared/tools/acl above this file: set ACL_TOOLS')


ACL_DIR = shared_acl()
ACLC = os.path.join(ACL_DIR, 'bin', 'acl_compressor')
ACLP = os.path.join(ACL_DIR, 'bin', 'acl_parse_only')


def cpu_ms(cmd, env=None, out=subprocess.DEVNULL):
    """CPU (user + sys) of one child process in ms, its exit code and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ms = 1000.0 * ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return ms, p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('skelpack')
    ap.add_argument('clips', nargs='+')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--efforts', default='fast,default,max')
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    efforts = a.efforts.split(',')
    one = dict(os.environ, RAYON_NUM_THREADS='1')
    tmp = tempfile.mkdtemp()
    keys = ['acl', 'acl_parse', 'sp_parse'] + ['sp_' + e for e in efforts]
    runs = {c: {k: [] for k in keys} for c in a.clips}
    sizes = {c: {} for c in a.clips}
    for c in a.clips:
        stats = os.path.join(tmp, 's.sjson')
        subprocess.run([ACLC, '-acl=' + c, '-stats=' + stats], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = open(stats).read()
        sizes[c]['acl'] = int(text.split('compressed_size', 1)[1].split('=', 1)[1].split()[0].strip(','))
        # Sizes from an untimed `--json` run, as ACL's come from an untimed `-stats` run: the
        # timed runs of both tools print no report.
        for e in efforts:
            out = subprocess.run([a.skelpack, 'compress', c, '--preset', 'acl', '--effort', e, '--force',
                                  '-o', tmp + '/t.skp', '--json'], capture_output=True, env=one).stdout
            sizes[c][e] = sum(cl['payload_bytes'] for cl in json.loads(out)['clips'])
    for r in range(a.rounds):
        for c in a.clips:
            acl = [('acl', [ACLC, '-acl=' + c], None), ('acl_parse', [ACLP, c], None)]
            sp = [('sp_' + e, [a.skelpack, 'compress', c, '--preset', 'acl', '--effort', e, '--force',
                               '-o', tmp + '/t.skp'], one) for e in efforts]
            sp.append(('sp_parse', [a.skelpack, 'inspect', c], one))
            for key, cmd, env in (acl + sp if r % 2 == 0 else sp + acl):
                ms, rc, _ = cpu_ms(cmd, env)
                if rc not in (0, 1):
                    sys.exit(f'{" ".join(cmd)} exited {rc}')
                runs[c][key].append(ms)
    rows = []
    for c, d in runs.items():
        m = {k: statistics.median(v) for k, v in d.items()}
        codec_acl = max(m['acl'] - m['acl_parse'], 1e-3)
        for e in efforts:
            sp = m['sp_' + e]
            rows.append({'clip': os.path.basename(c), 'effort': e, 'acl_ms': round(m['acl'], 1),
                         'acl_parse_ms': round(m['acl_parse'], 1), 'sp_ms': round(sp, 1),
                         'sp_parse_ms': round(m['sp_parse'], 1),
                         'process_ratio': round(sp / m['acl'], 2),
                         'codec_ratio': round(max(sp - m['sp_parse'], 1e-3) / codec_acl, 2),
                         'acl_bytes': sizes[c]['acl'], 'sp_bytes': sizes[c][e],
                         'size_ratio': round(sizes[c][e] / sizes[c]['acl'], 3)})
    load = open('/proc/loadavg').read().split()[0]
    if a.json:
        print(json.dumps({'rounds': a.rounds, 'load': float(load), 'rows': rows}, indent=1))
        return
    print(f'| clip | effort | ACL ms (parse) | skelpack ms (import) | process x | codec x | ACL B | skelpack B | size x |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        print(f'| {r["clip"].replace(".acl.sjson", "")} | {r["effort"]} | {r["acl_ms"]:.1f} ({r["acl_parse_ms"]:.1f}) | '
              f'{r["sp_ms"]:.1f} ({r["sp_parse_ms"]:.1f}) | {r["process_ratio"]:.2f} | {r["codec_ratio"]:.2f} | '
              f'{r["acl_bytes"]} | {r["sp_bytes"]} | {r["size_ratio"]:.3f} |')
    print(f'\nmedians of {a.rounds} interleaved rounds, one thread; load average {load}')


if __name__ == '__main__':
    main()
