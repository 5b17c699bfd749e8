# Measures skelpack watch's save -> rewritten export latency (docs/APP.md).
# python3 docs/watch_latency.py SKELPACK SOURCE EXT [watch flags...]
import os, shutil, subprocess, sys, time, tempfile
exe, src, out_ext = sys.argv[1], sys.argv[2], sys.argv[3]
d = tempfile.mkdtemp()
name = os.path.basename(src)
f = os.path.join(d, name); out = os.path.join(d, 'out.' + out_ext)
shutil.copy(src, f)
p = subprocess.Popen([exe, 'watch', f, '--export', out] + sys.argv[4:], stdout=subprocess.PIPE, text=True)
while 'watching' not in p.stdout.readline():
    pass
data = open(src, 'rb').read()
lat = []
for i in range(5):
    time.sleep(1.0)
    before = os.stat(out).st_mtime_ns
    tmp = f + '.tmp'
    open(tmp, 'wb').write(data)
    t0 = time.time(); os.rename(tmp, f)
    while os.stat(out).st_mtime_ns == before:
        time.sleep(0.002)
    lat.append((time.time() - t0) * 1000)
    line = p.stdout.readline().strip()
p.terminate(); p.wait()
print(name, out_ext, 'save->export ms:', ' '.join('%.0f' % x for x in lat), '| last line:', line)
shutil.rmtree(d)
