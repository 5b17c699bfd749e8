#!/usr/bin/env python3
"""instructions.py SKELPACK CLIP.acl.sjson... [--efforts fast,default] [--old BIN] [--acl]

Counts the codec's instructions, a figure that does not move with the machine's load:
`valgrind --tool=cachegrind --cache-sim=no` of `skelpack compress CLIP --preset acl
--effort E` less `skelpack inspect CLIP` (one thread), in millions; with `--old`, the same
for a second binary and the ratio; with `--acl`, ACL 2.1's `acl_compressor` less its
`acl_parse_only` (the shared tools, as versus_acl.py runs them) and each effort's ratio to
it. On this project's clips the ratio of instructions follows the ratio of CPU time within
a factor of about 1.4 (skelpack's f64 scalar chains retire fewer instructions per cycle
than ACL's f32 SIMD; docs/COMPRESSION.md, "Session 21"), so it is an A/B of builds, and a
floor under the time ratio beside ACL, never a replacement for versus_acl.py.
"""
import argparse, os, re, subprocess, sys, tempfile


def acl_tools():
    """ACL's compressor and parse-only build, found as versus_acl_efforts.py finds them
    ($ACL_TOOLS, else shared/tools/acl above the checkout)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'acl'))
    from versus_acl_efforts import ACLC, ACLP
    return ACLC, ACLP


def instructions(cmd):
    r = subprocess.run(['valgrind', '--tool=cachegrind', '--cache-sim=no',
                        '--cachegrind-out-file=/dev/null', *cmd],
                       capture_output=True, text=True,
                       env=dict(os.environ, RAYON_NUM_THREADS='1'))
    m = re.search(r'I\s+refs:\s+([\d,]+)', r.stderr)
    if not m:
        sys.exit(f'no count from {cmd}: {r.stderr[-400:]}')
    return int(m.group(1).replace(',', ''))


def codec(binary, clip, effort, tmp):
    out = os.path.join(tmp, 'out.skp')
    c = instructions([binary, 'compress', clip, '--preset', 'acl', '--effort', effort, '--force', '-o', out])
    return (c - instructions([binary, 'inspect', clip])) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('skelpack')
    ap.add_argument('clips', nargs='+')
    ap.add_argument('--efforts', default='fast,default')
    ap.add_argument('--old')
    ap.add_argument('--acl', action='store_true')
    a = ap.parse_args()
    efforts = a.efforts.split(',')
    aclc, aclp = acl_tools() if a.acl else (None, None)
    head = ['clip']
    if a.acl:
        head.append('ACL M')
    for e in efforts:
        head += [f'{e} old M', f'{e} M', 'new / old'] if a.old else [f'{e} M']
        if a.acl:
            head.append(f'{e} / ACL')
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' + '---:|' * (len(head) - 1))
    with tempfile.TemporaryDirectory() as tmp:
        for clip in a.clips:
            row = [os.path.basename(clip).replace('.acl.sjson', '')]
            acl = None
            if a.acl:
                acl = (instructions([aclc, '-acl=' + clip]) - instructions([aclp, clip])) / 1e6
                row.append(f'{acl:.1f}')
            for e in efforts:
                new = codec(a.skelpack, clip, e, tmp)
                if a.old:
                    old = codec(a.old, clip, e, tmp)
                    row += [f'{old:.1f}', f'{new:.1f}', f'{new / old:.2f}']
                else:
                    row.append(f'{new:.1f}')
                if acl:
                    row.append(f'{new / acl:.2f}')
            print('| ' + ' | '.join(row) + ' |', flush=True)


if __name__ == '__main__':
    main()
