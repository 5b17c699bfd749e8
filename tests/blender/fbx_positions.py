"""Blender's reading of an FBX file, for tests/import_fbx.rs: the world position of every
bone (its head) and every other object at every frame of the imported animation.

    blender -b --factory-startup -noaudio --python-exit-code 1 \
        --python tests/blender/fbx_positions.py -- IN.fbx OUT.json

OUT.json: {"fps", "first_frame" (Blender's frame of FBX time 0), "frames": [F, ...],
"points": [{"name", "object"}] (a bone and its armature object, or an object and itself),
"positions": [[[x, y, z] per point] per frame], "keyed": {"bone:NAME" or "object:NAME":
frames where every non-constant F-curve of that bone or object has a key, or null}}.
Blender's importer keys each node at the union of its FBX curves' key times and interpolates
linearly in between, so only where a node and its parents are fully keyed does Blender hold
the file's values.
"""

import json
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
source, out = argv[0], argv[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.fbx(filepath=source)
scene = bpy.context.scene
fps = scene.render.fps / scene.render.fps_base
first_frame = 1  # the importer's default anim_offset: FBX time t is frame 1 + t * fps

points = []  # (name, owner, object, pose bone or None)
seen = set()
for obj in bpy.data.objects:
    if obj.type == "ARMATURE":
        for pb in obj.pose.bones:
            points.append((pb.name, obj.name, obj, pb))
            seen.add(pb.name)
for obj in bpy.data.objects:
    if obj.name not in seen:
        points.append((obj.name, obj.name, obj, None))

keyed = {}  # "object:NAME" / "bone:NAME" -> fully keyed frames (None: nothing animated)
lo, hi = None, None
for obj in bpy.data.objects:
    ad = obj.animation_data
    if not ad or not ad.action:
        continue
    for fc in ad.action.fcurves:
        keys = [k.co for k in fc.keyframe_points]
        if not keys:
            continue
        lo = keys[0][0] if lo is None else min(lo, keys[0][0])
        hi = keys[-1][0] if hi is None else max(hi, keys[-1][0])
        path = fc.data_path
        if path.startswith('pose.bones["'):
            owner = "bone:" + path[len('pose.bones["'):path.index('"]')]
        else:
            owner = "object:" + obj.name
        keyed.setdefault(owner, None)
        if all(abs(k[1] - keys[0][1]) < 1e-12 for k in keys):
            continue
        mine = {round(k[0]) for k in keys if abs(k[0] - round(k[0])) < 1e-3}
        keyed[owner] = mine if keyed[owner] is None else keyed[owner] & mine
keyed = {k: (sorted(v) if v is not None else None) for k, v in keyed.items()}

frames = list(range(int(round(lo)), int(round(hi)) + 1)) if lo is not None else []
positions = []
for f in frames:
    scene.frame_set(f)
    row = []
    for _, _, obj, pb in points:
        m = obj.matrix_world @ pb.matrix if pb is not None else obj.matrix_world
        row.append([m.translation.x, m.translation.y, m.translation.z])
    positions.append(row)

with open(out, "w") as fh:
    json.dump(
        {
            "fps": fps,
            "first_frame": first_frame,
            "frames": frames,
            "points": [{"name": n, "object": o} for n, o, _, _ in points],
            "positions": positions,
            "keyed": keyed,
        },
        fh,
    )
