# Save -> result latency of the live source (docs/APP.md, issue 27).
#
#   python3 docs/live_latency.py SKELPACK SOURCE app   [--saves N]
#   python3 docs/live_latency.py SKELPACK SOURCE watch [--saves N] [watch flags...]
#   (either: --touch saves the same bytes; --clip NAME moves a key of that glTF animation;
#    --glb exports a compressed glTF of a BVH / FBX / ACL source too, not only its .skp)
#
# SOURCE is copied to a temporary folder and saved there N times the way Blender and
# Maya save (a modified copy written under a temporary name, renamed over it). Each save
# modifies the motion: a BVH's first channel of one frame, a .glb's first translation
# (else rotation) key of its first animation; other formats are saved with the same bytes
# (a "touch" save: everything is still reloaded, recompressed and exported).
#   app:   `skelpack view` (under xvfb-run) with "Export on save" and a sidecar naming a
#          .skp export (and a compressed .glb one for glTF sources); prints per save the
#          time to the reloaded result on screen (the app's status line, read from its
#          log) and to every export rewritten.
#   watch: `skelpack watch FILE --export OUT.glb` (.skp for non-glTF sources); prints the
#          time to the export rewritten.
import json, os, shutil, signal, struct, subprocess, sys, tempfile, threading, time, queue

exe, src, mode = sys.argv[1], sys.argv[2], sys.argv[3]
rest = sys.argv[4:]
saves = 5
if '--saves' in rest:
    i = rest.index('--saves'); saves = int(rest[i + 1]); del rest[i:i + 2]
touch = '--touch' in rest  # save the same bytes (nothing changed)
if touch:
    rest.remove('--touch')
clip = None  # the glTF animation whose key is moved (default: the first)
if '--clip' in rest:
    i = rest.index('--clip'); clip = rest[i + 1]; del rest[i:i + 2]
exe = os.path.abspath(exe)
d = tempfile.mkdtemp(prefix='skelpack-live-')
name = os.path.basename(src)
f = os.path.join(d, name)
shutil.copy(src, f)
data = open(src, 'rb').read()
is_gltf = name.lower().endswith(('.glb', '.gltf'))
# --glb: a compressed glTF target for a BVH / FBX / ACL source too (a new scene in metres).
want_glb = is_gltf or '--glb' in rest
if '--glb' in rest:
    rest.remove('--glb')


def modified(k):
    """The source with one key changed (k-th variant); the same bytes if unsupported."""
    if touch:
        return data
    if name.lower().endswith('.bvh'):
        text = data.decode('latin-1').split('\n')
        m = next(i for i, l in enumerate(text) if l.strip().startswith('Frame Time'))
        row = m + 1 + (k % 10)
        vals = text[row].split()
        vals[0] = '%.5f' % (float(vals[0]) + 0.5 * (k + 1))
        text[row] = ' '.join(vals)
        return '\n'.join(text).encode('latin-1')
    if name.lower().endswith('.glb'):
        b = bytearray(data)
        jlen = struct.unpack_from('<I', b, 12)[0]
        doc = json.loads(b[20:20 + jlen])
        bin_at = 20 + jlen + 8
        anim = [a for a in doc['animations'] if clip in (None, a.get('name'))][0]
        ch = sorted(anim['channels'], key=lambda c: c['target']['path'] != 'translation')[0]
        acc = doc['accessors'][anim['samplers'][ch['sampler']]['output']]
        bv = doc['bufferViews'][acc['bufferView']]
        at = bin_at + bv.get('byteOffset', 0) + acc.get('byteOffset', 0)
        v = struct.unpack_from('<f', b, at)[0]
        struct.pack_into('<f', b, at, v + 0.002 * (k + 1))
        return bytes(b)
    return data


def save(k):
    tmp = f + '.tmp~'
    open(tmp, 'wb').write(modified(k))
    t0 = time.time()
    os.rename(tmp, f)
    return t0


def mtimes(paths):
    return [os.stat(p).st_mtime_ns if os.path.exists(p) else 0 for p in paths]


lines = queue.Queue()


def reader(stream):
    for l in stream:
        lines.put((time.time(), l.rstrip('\n')))


def wait_line(pred, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        try:
            t, l = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if pred(l):
            return t, l
    raise SystemExit('timed out waiting for a line')


def wait_exports(outs, before, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        now = mtimes(outs)
        if all(a != b for a, b in zip(now, before)):
            return time.time()
        time.sleep(0.002)
    raise SystemExit('timed out waiting for the exports')


rows = []
if mode == 'app':
    outs = [os.path.join(d, 'out.skp')] + ([os.path.join(d, 'out.glb')] if want_glb else [])
    side = ''.join('[[exports]]\npath = "%s"\nformat = "%s"\n\n' % (o, o[-3:]) for o in outs)
    open(f + '.skelpack.toml', 'w').write(side)
    env = dict(os.environ, XDG_RUNTIME_DIR=tempfile.mkdtemp())
    # Its own process group: terminating xvfb-run alone leaves the app and Xvfb running
    # (they went on using CPU beside the next measurements).
    p = subprocess.Popen(['xvfb-run', '-a', exe, 'view', f, '--window', '1280x800',
                          '--export-on-save', '--measure-idle', '3600'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    threading.Thread(target=reader, args=(p.stderr,), daemon=True).start()
    wait_line(lambda l: l.startswith('live: watching'))
    time.sleep(8)  # the opening's own compression
    if want_glb:  # and the glTF target's first export, in the background (its memo)
        wait_line(lambda l: 'target(s) prepared' in l, timeout=300)
    for k in range(saves):
        before = mtimes(outs)
        t0 = save(k)
        t1, l = wait_line(lambda l: 'on screen' in l)
        t2 = wait_exports(outs, before)
        # A compressed glTF is written at `fast` effort first, then the final one.
        for _ in outs:
            t3, _ = wait_line(lambda l: l.startswith('live: Export on save') and '(fast' not in l)
        rows.append(((t1 - t0) * 1e3, (t2 - t0) * 1e3, (t3 - t0) * 1e3))
        time.sleep(1.0)
    os.killpg(p.pid, signal.SIGTERM); p.wait()
    print(name, 'app: save -> on screen ms:', ' '.join('%.0f' % r[0] for r in rows),
          '| save -> %d export(s) rewritten ms:' % len(outs), ' '.join('%.0f' % r[1] for r in rows),
          '| final exports ms:', ' '.join('%.0f' % r[2] for r in rows))
    print('  last status:', l)
else:
    out = os.path.join(d, 'out.' + ('glb' if want_glb else 'skp'))
    p = subprocess.Popen([exe, 'watch', f, '--export', out] + rest, stdout=subprocess.PIPE, text=True)
    threading.Thread(target=reader, args=(p.stdout,), daemon=True).start()
    wait_line(lambda l: 'watching' in l)
    for k in range(saves):
        time.sleep(1.0)
        before = mtimes([out])
        t0 = save(k)
        t2 = wait_exports([out], before)
        # A compressed glTF is written at `fast` effort first, then the final one.
        t3, l = wait_line(lambda l: 'after the save' in l and '(fast' not in l)
        rows.append(((t2 - t0) * 1e3, (t3 - t0) * 1e3))
    p.terminate(); p.wait()
    print(name, 'watch -> %s: save -> export rewritten ms:' % os.path.basename(out),
          ' '.join('%.0f' % r[0] for r in rows), '| final export ms:',
          ' '.join('%.0f' % r[1] for r in rows))
    print('  last line:', l)
shutil.rmtree(d)
