#!/usr/bin/env python3
"""ab_cpu.py ROUNDS CLIP... -- NAME=[BIN:PATH][;VAR:VALUE...]...

A/B of skelpack builds (or one build with environment switches) in one run: CPU (user +
sys) of `compress CLIP --preset acl --effort $EFFORT` (default fast), one thread, variants
alternated per clip and round; prints the median per clip and variant, its ratio to the
first variant and the payload bytes. $BIN is the default binary (target/release/skelpack).
"""
import os, resource, statistics, subprocess, sys, json
args = sys.argv[1:]
rounds = int(args[0]); i = args.index('--')
clips = args[1:i]; variants = args[i+1:]
effort = os.environ.get('EFFORT', 'fast')
binary = os.environ.get('BIN', 'target/release/skelpack')
res = {}
for r in range(rounds):
    for c in clips:
        for v in variants:
            name, _, envs = v.partition('=')
            env = dict(os.environ, RAYON_NUM_THREADS='1')
            b = binary
            for kv in envs.split(';'):
                if kv.startswith('BIN:'): b = kv[4:]
                elif kv: k, _, val = kv.partition(':'); env[k] = val
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run([b, 'compress', c, '--preset', 'acl', '--effort', effort, '--json', '-o', '/tmp/codec_ab/x.skp'], capture_output=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            ms = 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            size = sum(x['payload_bytes'] for x in json.loads(p.stdout)['clips'])
            res.setdefault((c, name), []).append((ms, size))
for c in clips:
    base = None
    for v in variants:
        name = v.partition('=')[0]
        xs = res[(c, name)]
        m = statistics.median(x[0] for x in xs)
        base = base or m
        print(f"{os.path.basename(c)[:24]:24} {name:12} {m:8.1f} ms  {m/base:5.2f}  {xs[0][1]} B")
