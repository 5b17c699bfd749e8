"""Blender's playback of a glTF file against another's, for tests/sockets.rs: every
clip of both files played in Blender, and at every key time of either file and every
midpoint between two of them, the world positions of every joint (its bone's head) and every
socket (an object parented to a bone: RobotExpressive's `*_end` tips and rigid parts), and of
three markers at `MARKER` scene units along each one's own axes. The export as Blender plays
it is compared with the original as the glTF spec plays it (slerp between rotation keys),
posed on Blender's rig; Blender's own playback of the original (per-component rotation
curves: nlerp) is compared with the same, for reference.

    blender -b --factory-startup -noaudio --python-exit-code 1 \
        --python tests/blender/gltf_sockets.py -- ORIGINAL.glb EXPORT.glb MARKER OUT.json

Blender 3.4's glTF importer needs numpy's `np.bool` (gone since numpy 1.24). It makes one
action per clip and object (`CLIP_ARMATURE`), keys rotations as per-component curves, and
leaves a bone an action does not key where the previous action put it: each clip is played
from a reset pose (every pose bone at its rest), its action alone, the NLA muted.

OUT.json: {"fps", "clips": [{"name", "times" (count of evaluated times), "points": [{"name",
"kind" ("joint" or "socket"), "parent" (a socket's bone), "max" (the export's largest distance
of the point or a marker from the spec's original, scene units), "at" (its frame),
"original_max" / "original_at" (the same for Blender's playback of the original)}]}],
"missing": points or clips of one file absent from the other}.
"""

import json
import sys

import numpy as np

np.bool = bool  # Blender 3.4's glTF importer still calls np.bool
import bpy  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
original, export, marker, out = argv[0], argv[1], float(argv[2]), argv[3]


def load(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=path)
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    return arms


def clip_actions(arms):
    """{clip name: {armature name: action}} from the importer's NLA tracks."""
    clips = {}
    for arm in arms:
        ad = arm.animation_data
        if not ad:
            continue
        for track in ad.nla_tracks:
            for strip in track.strips:
                clips.setdefault(track.name, {})[arm.name] = strip.action
    return clips


def key_frames(actions):
    frames = set()
    for action in actions.values():
        for fc in action.fcurves:
            for k in fc.keyframe_points:
                frames.add(round(k.co[0], 6))
    return frames


def play(arms, actions):
    for arm in arms:
        ad = arm.animation_data_create()
        for track in ad.nla_tracks:
            track.mute = True
        ad.action = None
        for pb in arm.pose.bones:
            pb.location = (0.0, 0.0, 0.0)
            pb.rotation_mode = "QUATERNION"
            pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
            pb.rotation_euler = (0.0, 0.0, 0.0)
            pb.scale = (1.0, 1.0, 1.0)
        ad.action = actions.get(arm.name)


def points_of(arms):
    """(name, kind, parent, getter) of every bone and every object parented to a bone."""
    pts = []
    for arm in arms:
        for pb in arm.pose.bones:
            pts.append(("joint:" + pb.name, "joint", None, (lambda a, p: lambda: a.matrix_world @ p.matrix)(arm, pb)))
    for obj in bpy.data.objects:
        if obj.parent is not None and obj.parent.type == "ARMATURE" and obj.parent_type == "BONE":
            pts.append(("socket:" + obj.name, "socket", obj.parent_bone, (lambda o: lambda: o.matrix_world)(obj)))
    return pts


def sample(m):
    o = m.translation.copy()
    out = [o]
    for i in range(3):
        axis = m.col[i].xyz
        if axis.length > 0.0:
            out.append(o + axis.normalized() * marker)
    return [(p.x, p.y, p.z) for p in out]


def spec_pose(actions, t):
    """Sets every keyed bone to its keys interpolated as the glTF spec says (slerp for
    rotations, lerp otherwise, the key before for CONSTANT), `t` in frames. The importer's
    conversion to bone space multiplies each rotation key by constants on both sides, which
    slerp commutes with, so this is the spec's pose of the file on Blender's rig."""
    from mathutils import Quaternion, Vector

    for arm_name, action in actions.items():
        arm = bpy.data.objects[arm_name]
        groups = {}
        for fc in action.fcurves:
            groups.setdefault(fc.data_path, {})[fc.array_index] = fc
        for path, comps in groups.items():
            fcs = [comps[i] for i in sorted(comps)]
            keys = [[(k.co[0], k.co[1], k.interpolation) for k in fc.keyframe_points] for fc in fcs]
            times = [k[0] for k in keys[0]]
            if t <= times[0]:
                i, f = 0, 0.0
            elif t >= times[-1]:
                i, f = len(times) - 1, 0.0
            else:
                i = max(j for j in range(len(times)) if times[j] <= t)
                f = (t - times[i]) / (times[i + 1] - times[i])
                if keys[0][i][2] == "CONSTANT":
                    f = 0.0
            a = [keys[c][i][1] for c in range(len(fcs))]
            b = [keys[c][min(i + 1, len(times) - 1)][1] for c in range(len(fcs))]
            bone = path[len('pose.bones["'):path.index('"]')]
            pb = arm.pose.bones[bone]
            if path.endswith("rotation_quaternion"):
                value = Quaternion(a).slerp(Quaternion(b), f) if f > 0.0 else Quaternion(a)
                pb.rotation_quaternion = value.normalized()
            else:
                value = Vector(a).lerp(Vector(b), f)
                setattr(pb, path[path.rindex(".") + 1:], value)


def evaluate(path, times_of, spec):
    """Positions of every point at every time of every clip: played by Blender's own
    animation system, or (`spec`) posed by `spec_pose`."""
    arms = load(path)
    scene = bpy.context.scene
    pts = points_of(arms)
    clips = clip_actions(arms)
    result = {}
    for name, actions in clips.items():
        play(arms, {} if spec else actions)
        rows = []
        for t in times_of[name]:
            if spec:
                spec_pose(actions, t)
                bpy.context.view_layer.update()
            else:
                whole = int(np.floor(t))
                scene.frame_set(whole, subframe=t - whole)
            rows.append({n: sample(get()) for n, _, _, get in pts})
        result[name] = rows
    return result, {n: (k, p) for n, k, p, _ in pts}


def worst(times, ra_rows, rb_rows):
    """{point: (largest distance of it or its markers, frame)} between two playbacks."""
    out = {}
    for t, ra, rb in zip(times, ra_rows, rb_rows):
        for n in ra:
            if n not in rb:
                continue
            d = max(
                sum((x - y) ** 2 for x, y in zip(pa, pb)) ** 0.5 for pa, pb in zip(ra[n], rb[n])
            )
            if n not in out or d > out[n][0]:
                out[n] = (d, t)
    return out


# Key times of both files, clip by clip.
keys = {}
for path in (original, export):
    for name, actions in clip_actions(load(path)).items():
        keys.setdefault(name, set()).update(key_frames(actions))
times_of = {}
for name, frames in keys.items():
    frames = sorted(frames)
    mids = [(a + b) / 2 for a, b in zip(frames, frames[1:])]
    times_of[name] = sorted(set(frames) | {round(m, 6) for m in mids})

spec, points = evaluate(original, times_of, True)
played, _ = evaluate(original, times_of, False)
b, points_b = evaluate(export, times_of, False)
fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base

missing = sorted(set(points) ^ set(points_b))
clips = []
for name in sorted(times_of):
    if name not in spec or name not in b:
        missing.append("clip:" + name)
        continue
    export_err = worst(times_of[name], spec[name], b[name])
    own_err = worst(times_of[name], spec[name], played[name])
    clips.append(
        {
            "name": name,
            "times": len(times_of[name]),
            "points": [
                {
                    "name": n.split(":", 1)[1],
                    "kind": points[n][0],
                    "parent": points[n][1],
                    "max": export_err[n][0],
                    "at": export_err[n][1],
                    "original_max": own_err[n][0],
                    "original_at": own_err[n][1],
                }
                for n in sorted(export_err)
            ],
        }
    )

with open(out, "w") as fh:
    json.dump({"fps": fps, "clips": clips, "missing": missing}, fh)
