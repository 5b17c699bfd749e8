#!/usr/bin/env python3
"""versus_acl_decode.py SKELPACK WARM_DECODE CLIP.acl.sjson... [--rounds N] [--iters N] [--batches N]

Warm whole-pose decoding of skelpack's runtime beside ACL 2.1's, in one run (issue 28).
Each clip is one ACL raw clip (write a glTF clip as one with ../shared/tools/acl/gltf2acl.py),
so both tools decode the same motion:

  ACL       acl_compressor -acl=CLIP -out=CLIP.acl         (ACL's defaults)
            acl_warm_decomp CLIP.acl ITERS BATCHES
  skelpack  SKELPACK compress CLIP --preset acl -o CLIP.skp
            WARM_DECODE CLIP.skp - ITERS BATCHES             (runtime/examples/warm_decode.rs)

Both harnesses time batches of ITERS whole poses after a warm-up batch and print the median
ns per pose for forward playback at 59 Hz and for random access (the same LCG). The two
decoders alternate per round (which goes first alternates too); the script prints, per clip
and pattern, the median over rounds of each tool's median and the ratio skelpack / ACL.
WARM_DECODE is built by `cargo build --release -p skelpack-runtime --example warm_decode`.

--base OTHER_WARM_DECODE times a second build of the harness (say, the runtime before a
change) on the same .skp files in the same rounds, the three rotating their order, and adds
its medians and the ratio skelpack / base.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_ACL = os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'tools', 'acl', 'bin'))
LINE = re.compile(r'^(forward59|random) median_ns_per_pose=([0-9.]+)', re.M)


def medians(cmd):
    """The harness's `pattern median_ns_per_pose=` lines as a dict."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)} exited {p.returncode}: {p.stderr}')
    found = dict((m.group(1), float(m.group(2))) for m in LINE.finditer(p.stdout))
    if set(found) != {'forward59', 'random'}:
        sys.exit(f'{" ".join(cmd)} printed no timings: {p.stdout}')
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('skelpack')
    ap.add_argument('warm_decode')
    ap.add_argument('clips', nargs='+')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iters', type=int, default=20000)
    ap.add_argument('--batches', type=int, default=15)
    ap.add_argument('--acl-bin', default=SHARED_ACL, help='folder of acl_compressor and acl_warm_decomp')
    ap.add_argument('--base', help='a second warm_decode build to time beside (A/B)')
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    prepared = []
    for i, c in enumerate(a.clips):
        acl_out, skp_out = os.path.join(tmp, f'{i}.acl'), os.path.join(tmp, f'{i}.skp')
        subprocess.run([os.path.join(a.acl_bin, 'acl_compressor'), '-acl=' + c, '-out=' + acl_out],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([a.skelpack, 'compress', c, '--preset', 'acl', '--force', '-o', skp_out],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        prepared.append((c, acl_out, skp_out))
    runs = {c: {'acl': [], 'sp': [], 'base': []} for c, _, _ in prepared}
    n = [str(a.iters), str(a.batches)]
    for r in range(a.rounds):
        for c, acl_out, skp_out in prepared:
            both = [('acl', [os.path.join(a.acl_bin, 'acl_warm_decomp'), acl_out] + n),
                    ('sp', [a.warm_decode, skp_out, '-'] + n)]
            if a.base:
                both.append(('base', [a.base, skp_out, '-'] + n))
                order = both[r % 3:] + both[:r % 3]
            else:
                order = both if r % 2 == 0 else both[::-1]
            for key, cmd in order:
                runs[c][key].append(medians(cmd))
    rows = []
    for c, d in runs.items():
        for pattern in ('forward59', 'random'):
            acl = statistics.median(x[pattern] for x in d['acl'])
            sp = statistics.median(x[pattern] for x in d['sp'])
            row = {'clip': os.path.basename(c), 'pattern': pattern, 'acl_ns': round(acl, 1),
                   'skelpack_ns': round(sp, 1), 'ratio': round(sp / acl, 2)}
            if a.base:
                base = statistics.median(x[pattern] for x in d['base'])
                row.update(base_ns=round(base, 1), base_ratio=round(base / acl, 2),
                           vs_base=round(sp / base, 2))
            rows.append(row)
    load = open('/proc/loadavg').read().split()[0]
    if a.json:
        print(json.dumps({'rounds': a.rounds, 'load': float(load), 'rows': rows}, indent=1))
        return
    head = f'{"clip":34} {"pattern":10} {"ACL ns":>8} {"skelpack ns":>12} {"ratio":>6}'
    print(head + (f' {"base ns":>8} {"base ratio":>10} {"vs base":>8}' if a.base else ''))
    for r in rows:
        line = f'{r["clip"]:34} {r["pattern"]:10} {r["acl_ns"]:8.1f} {r["skelpack_ns"]:12.1f} {r["ratio"]:6.2f}'
        if a.base:
            line += f' {r["base_ns"]:8.1f} {r["base_ratio"]:10.2f} {r["vs_base"]:8.2f}'
        print(line)
    print(f'ns per pose; medians of {a.rounds} alternating rounds of {a.batches} batches x '
          f'{a.iters} poses; load average {load}')


if __name__ == '__main__':
    main()
