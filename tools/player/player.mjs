#!/usr/bin/env node
// player.mjs ORIGINAL EXPORT [--shell 0.03] [--stops 0.25,0.5,0.75,1] [--sockets | --morph] [--json]
//
// Plays both files in three.js (GLTFLoader + AnimationMixer) and measures how far the export's
// joints land from the original's, with the project's metric (DESIGN.md §2, the same as
// `animeval.py --markers physical`): three markers per joint at `shell / s_j` along its axes,
// s_j the mean axis length of the joint's rest-pose transform relative to the scene root.
//
// Every clip B is measured from a clean start ("clean": the rest pose, which is also what
// three.js shows after `stop()` since it puts bones back to the state they were bound in) and
// after every clip A, as a game switching clips does whenever gameplay says so: A is played to
// each of the `--stops` fractions of its duration (default 25, 50, 75 and 100 %; these fall
// between A's keys as often as not), then B plays on the same scene without resetting it, so
// bones B does not key keep A's pose at that moment (Blender and engines that keep the last
// written pose). A's mixer is dropped rather than stopped, because three.js' `stop()` would
// restore the rest pose. The original plays original A then B, the
// export plays export A then B. Samples: the original clip's key times (every sampler of the
// animation) and the midpoints between them (animeval --oversample 2).
//
// Joints: the union of the original's skins' joints (no skin: every node an animation moves by
// translation, rotation or scale), matched to the export by name, then by skin slot.
// With --sockets the measured nodes are the original's sockets instead: every node that is not
// a joint, carries no skin, and whose nearest joint-or-skeleton ancestor is a skin joint (`*_end`
// tips, rigid parts, attachment empties), each with its origin as a fourth marker.
// With --morph the measured things are the meshes with morph targets (glTF `weights`
// channels): at each time, sum over targets of |Δ influence| x the target's largest vertex
// offset (three.js' morphAttributes.position, relative) x the mesh's largest world scale
// in the original: a bound on how far a vertex moves, in scene units.
// Distances are in scene units. Exit: 0 measured, 1 usage or load error, 2 a clip or joint of
// the original is missing from the export (reported, and the rest measured).

import { AnimationMixer, LoopOnce } from 'three';
import { loadGltf, readScalars } from './load.mjs';

const USAGE =
  'usage: player.mjs ORIGINAL EXPORT [--shell 0.03] [--stops 0.25,0.5,0.75,1] [--sockets | --morph] [--json]';

function parseArgs(argv) {
  const files = [];
  let shell = 0.03;
  let json = false;
  let sockets = false;
  let morph = false;
  let stops = [0.25, 0.5, 0.75, 1];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') json = true;
    else if (a === '--sockets') sockets = true;
    else if (a === '--morph') morph = true;
    else if (a === '--stops') {
      stops = String(argv[++i]).split(',').map(Number);
      if (!stops.length || !stops.every((x) => x >= 0 && x <= 1))
        throw new Error('--stops needs fractions in [0, 1], comma-separated');
    }
    else if (a === '--shell') {
      shell = Number(argv[++i]);
      if (!(shell > 0 && Number.isFinite(shell))) throw new Error('--shell needs a positive number');
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else files.push(a);
  }
  if (files.length !== 2) throw new Error(USAGE);
  if (sockets && morph) throw new Error('--sockets and --morph measure different things: one at a time');
  return { original: files[0], exported: files[1], shell, json, stops, sockets, morph };
}

const TRS = new Set(['translation', 'rotation', 'scale']);

/** The original's measured joints: skins' joints (union), or every node moved by a clip. */
function measuredJoints(json) {
  const set = new Set();
  for (const skin of json.skins ?? []) for (const j of skin.joints) set.add(j);
  if (set.size === 0) {
    for (const anim of json.animations ?? [])
      for (const ch of anim.channels)
        if (ch.target.node !== undefined && TRS.has(ch.target.path)) set.add(ch.target.node);
  }
  return [...set];
}

/**
 * The original's sockets: nodes that are not skin joints, carry no skin, and whose nearest
 * ancestor among the skin joints and the joints' ancestors is a skin joint.
 */
function socketNodes(json) {
  const nodes = json.nodes ?? [];
  const joints = new Set();
  for (const skin of json.skins ?? []) for (const j of skin.joints) joints.add(j);
  const parent = new Map();
  nodes.forEach((n, i) => (n.children ?? []).forEach((c) => parent.set(c, i)));
  const skeleton = new Set(joints);
  for (const j of joints) {
    for (let p = parent.get(j); p !== undefined && !skeleton.has(p); p = parent.get(p)) skeleton.add(p);
  }
  const out = [];
  nodes.forEach((n, i) => {
    if (skeleton.has(i) || n.skin !== undefined) return;
    let p = parent.get(i);
    while (p !== undefined && !skeleton.has(p)) p = parent.get(p);
    if (p !== undefined && joints.has(p)) out.push(i);
  });
  return out;
}

/** Nodes whose mesh has morph targets. */
function morphNodes(json) {
  const out = [];
  (json.nodes ?? []).forEach((n, i) => {
    const mesh = n.mesh !== undefined ? json.meshes?.[n.mesh] : undefined;
    if (mesh?.primitives?.some((p) => p.targets?.length)) out.push(i);
  });
  return out;
}

/** The three.js meshes (one per primitive) of a node that carry morph influences. */
function morphMeshes(object) {
  const out = [];
  object.traverse((o) => {
    if (o.isMesh && o.morphTargetInfluences?.length) out.push(o);
  });
  return out;
}

/** Per target of a mesh: its largest vertex offset (relative morph positions). */
function targetReach(mesh) {
  const attrs = mesh.geometry.morphAttributes.position ?? [];
  return attrs.map((a) => {
    let r = 0;
    for (let i = 0; i < a.count; i++) r = Math.max(r, Math.hypot(a.getX(i), a.getY(i), a.getZ(i)));
    return mesh.geometry.morphTargetsRelative ? r : NaN;
  });
}

function uniqueNames(json) {
  const count = new Map();
  for (const n of json.nodes ?? []) if (n.name) count.set(n.name, (count.get(n.name) ?? 0) + 1);
  const index = new Map();
  (json.nodes ?? []).forEach((n, i) => {
    if (n.name && count.get(n.name) === 1) index.set(n.name, i);
  });
  return index;
}

/**
 * Original joint node -> export node: unique name, the same index for a name several nodes
 * share, then the same slot of the same skin.
 */
function matchJoints(o, c, joints) {
  const on = uniqueNames(o.json);
  const cn = uniqueNames(c.json);
  const map = new Map();
  for (const j of joints) {
    const name = o.json.nodes[j].name;
    if (name && on.has(name) && cn.has(name)) map.set(j, cn.get(name));
    // A name shared by several nodes (a joint and the mesh hanging from it): the node at the
    // same index when it has that name (skelpack's exports keep the original's nodes).
    else if (name && !on.has(name) && c.json.nodes?.[j]?.name === name) map.set(j, j);
  }
  (o.json.skins ?? []).forEach((skin, s) => {
    const cs = (c.json.skins ?? [])[s];
    if (!cs) return;
    skin.joints.forEach((j, k) => {
      if (!map.has(j) && cs.joints[k] !== undefined && !cn.has(o.json.nodes[j].name))
        map.set(j, cs.joints[k]);
    });
  });
  return map;
}

/** Every Object3D's local transform (and morph weights) in the scene, to put back later. */
function snapshot(scene) {
  const s = [];
  scene.traverse((o) =>
    s.push([o, o.position.clone(), o.quaternion.clone(), o.scale.clone(),
      o.morphTargetInfluences ? [...o.morphTargetInfluences] : null]),
  );
  return s;
}

function restore(snap) {
  for (const [o, p, q, sc, w] of snap) {
    o.position.copy(p);
    o.quaternion.copy(q);
    o.scale.copy(sc);
    if (w) w.forEach((v, i) => (o.morphTargetInfluences[i] = v));
  }
}

/** Starts `clip` on a new mixer over the scene as it stands; returns a function posing time t. */
function start(scene, clip) {
  const mixer = new AnimationMixer(scene);
  const action = mixer.clipAction(clip);
  action.setLoop(LoopOnce, 1);
  action.clampWhenFinished = true;
  action.play();
  return (t) => {
    action.enabled = true;
    action.paused = false;
    action.time = t; // an update of 0 s evaluates exactly at action.time
    mixer.update(0);
    scene.updateMatrixWorld(true);
  };
}

/**
 * Joint matrices (scene-root space, 12 numbers each) of `file` playing `after` (or nothing)
 * to `stop` x its duration and then `clip` at each of `times`.
 */
function play(file, objects, after, stop, clip, times) {
  restore(file.rest);
  if (after) start(file.gltf.scene, after)(after.duration * stop);
  const pose = start(file.gltf.scene, clip);
  const out = new Float64Array(times.length * objects.length * 12);
  let k = 0;
  for (const t of times) {
    pose(t);
    for (const o of objects) {
      const e = o.matrixWorld.elements;
      for (const i of [0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14]) out[k++] = e[i];
    }
  }
  return out;
}

/**
 * Morph influences of `meshes` (and each mesh's largest world scale) of `file` playing `after`
 * (or nothing) to `stop` x its duration and then `clip` at each of `times`.
 */
function playMorph(file, meshes, after, stop, clip, times) {
  restore(file.rest);
  if (after) start(file.gltf.scene, after)(after.duration * stop);
  const pose = start(file.gltf.scene, clip);
  const out = [];
  for (const t of times) {
    pose(t);
    out.push(
      meshes.map((m) => {
        const e = m.matrixWorld.elements;
        const s = Math.max(Math.hypot(e[0], e[1], e[2]), Math.hypot(e[4], e[5], e[6]), Math.hypot(e[8], e[9], e[10]));
        return { w: [...m.morphTargetInfluences], s };
      }),
    );
  }
  return out;
}

/** Largest vertex-distance bound between two morph sequences: { max, joint, time }. */
function compareMorph(a, b, times, names, reach) {
  let best = { max: 0, joint: null, time: null };
  for (let s = 0; s < times.length; s++) {
    a[s].forEach((ma, m) => {
      const mb = b[s][m];
      let d = 0;
      ma.w.forEach((w, k) => (d += Math.abs(w - (mb.w[k] ?? 0)) * reach[m][k]));
      d *= ma.s;
      if (d > best.max || best.joint === null) best = { max: d, joint: names[m], time: times[s] };
    });
  }
  return best;
}

/** Largest marker distance between two played sequences: { max, joint, time }. */
function compare(a, b, times, names, offsets, origins = false) {
  let best = { max: -1, joint: null, time: null };
  const nj = names.length;
  for (let s = 0; s < times.length; s++) {
    for (let j = 0; j < nj; j++) {
      const k = (s * nj + j) * 12;
      const tx = a[k + 9] - b[k + 9];
      const ty = a[k + 10] - b[k + 10];
      const tz = a[k + 11] - b[k + 11];
      const d = offsets[j];
      if (origins) {
        const e = Math.hypot(tx, ty, tz);
        if (!(e <= best.max)) best = { max: e, joint: names[j], time: times[s] };
      }
      for (let ax = 0; ax < 3; ax++) {
        const x = d * (a[k + 3 * ax] - b[k + 3 * ax]) + tx;
        const y = d * (a[k + 3 * ax + 1] - b[k + 3 * ax + 1]) + ty;
        const z = d * (a[k + 3 * ax + 2] - b[k + 3 * ax + 2]) + tz;
        const e = Math.hypot(x, y, z);
        if (!(e <= best.max)) best = { max: e, joint: names[j], time: times[s] };
      }
    }
  }
  return best.max < 0 ? { max: 0, joint: null, time: null } : best;
}

/** The original clip's key times (all samplers) and the midpoints between them. */
async function sampleTimes(file, anim) {
  const keys = new Set();
  for (const s of anim.samplers) for (const t of await readScalars(file, s.input)) keys.add(t);
  const k = [...keys].sort((x, y) => x - y);
  const out = [];
  for (let i = 0; i < k.length; i++) {
    out.push(k[i]);
    if (i + 1 < k.length) out.push(k[i] + (k[i + 1] - k[i]) / 2);
  }
  return out;
}

function clipName(json, i) {
  return json.animations[i].name ?? `#${i}`;
}

/** Export clip index for original clip i: same name, else the same index when unnamed there. */
function matchClip(o, c, i) {
  const name = o.json.animations[i].name;
  const cn = (c.json.animations ?? []).map((a) => a.name);
  if (name !== undefined && cn.includes(name)) return cn.indexOf(name);
  if (name === undefined && i < cn.length && cn[i] === undefined) return i;
  return -1;
}

async function measure(originalPath, exportPath, shell, stops, sockets, morph) {
  const o = await loadGltf(originalPath);
  const c = await loadGltf(exportPath);
  for (const f of [o, c]) f.rest = snapshot(f.gltf.scene);

  const measured = morph ? morphNodes(o.json) : sockets ? socketNodes(o.json) : measuredJoints(o.json);
  const jointMap = matchJoints(o, c, measured);
  const unmatched = [];
  const names = [];
  const objO = [];
  const objC = [];
  for (const j of measured) {
    const name = o.json.nodes[j].name ?? `#${j}`;
    const a = o.nodeObjects.get(j);
    const b = jointMap.has(j) ? c.nodeObjects.get(jointMap.get(j)) : undefined;
    if (!a) continue; // not in the played scene: no player shows it
    if (!b) {
      unmatched.push(name);
      continue;
    }
    if (morph) {
      // one entry per primitive mesh, in the same order in both files
      const [ma, mb] = [morphMeshes(a), morphMeshes(b)];
      if (ma.length !== mb.length) {
        unmatched.push(name);
        continue;
      }
      ma.forEach((m, k) => {
        names.push(ma.length > 1 ? `${name}[${k}]` : name);
        objO.push(m);
        objC.push(mb[k]);
      });
      continue;
    }
    names.push(name);
    objO.push(a);
    objC.push(b);
  }
  const reach = morph ? objO.map(targetReach) : null;
  // rest-pose scale of each joint relative to the scene root -> physical marker offsets
  o.gltf.scene.updateMatrixWorld(true);
  const offsets = objO.map((obj) => {
    const e = obj.matrixWorld.elements;
    const s =
      (Math.hypot(e[0], e[1], e[2]) + Math.hypot(e[4], e[5], e[6]) + Math.hypot(e[8], e[9], e[10])) / 3;
    return shell / Math.max(s, 1e-12);
  });

  const anims = o.json.animations ?? [];
  const clips = [];
  const missing = [];
  for (let b = 0; b < anims.length; b++) {
    const cb = matchClip(o, c, b);
    if (cb < 0) missing.push(clipName(o.json, b));
    clips.push({ o: b, c: cb, name: clipName(o.json, b) });
  }
  const playable = clips.filter((x) => x.c >= 0);

  const results = [];
  for (const B of playable) {
    const times = await sampleTimes(o, anims[B.o]);
    const run = (A, stop) => {
      if (morph) {
        const ro = playMorph(o, objO, A && o.gltf.animations[A.o], stop, o.gltf.animations[B.o], times);
        const rc = playMorph(c, objC, A && c.gltf.animations[A.c], stop, c.gltf.animations[B.c], times);
        return compareMorph(ro, rc, times, names, reach);
      }
      const ro = play(o, objO, A && o.gltf.animations[A.o], stop, o.gltf.animations[B.o], times);
      const rc = play(c, objC, A && c.gltf.animations[A.c], stop, c.gltf.animations[B.c], times);
      return compare(ro, rc, times, names, offsets, sockets);
    };
    const clean = run(null, 1);
    // pairs[A]: the worst over A's stops
    const pairs = {};
    let after = null;
    for (const A of playable) {
      for (const stop of stops) {
        const r = run(A, stop);
        pairs[A.name] = Math.max(pairs[A.name] ?? 0, r.max);
        if (!after || r.max > after.max) after = { ...r, after: A.name, stop };
      }
    }
    results.push({ name: B.name, samples: times.length, clean, after_any: after, pairs });
  }
  const max = (k) => results.reduce((m, r) => Math.max(m, r[k].max), 0);
  return {
    original: originalPath,
    export: exportPath,
    player: 'three.js AnimationMixer',
    shell,
    stops,
    markers: 'physical',
    measured: morph ? 'morph' : sockets ? 'sockets' : 'joints',
    joints: names.length,
    joints_unmatched: unmatched,
    clips_missing: missing,
    max_clean: max('clean'),
    max_after_any: max('after_any'),
    clips: results,
  };
}

function printText(r) {
  const f = (x) => x.toPrecision(4);
  console.log(`${r.original} -> ${r.export}: ${r.joints} joints, shell ${r.shell} (scene units)`);
  if (r.joints_unmatched.length) console.log(`  joints missing in export: ${r.joints_unmatched.join(', ')}`);
  if (r.clips_missing.length) console.log(`  clips missing in export: ${r.clips_missing.join(', ')}`);
  for (const c of r.clips) {
    const a = c.after_any;
    console.log(
      `  ${c.name}: clean ${f(c.clean.max)} (${c.clean.joint} @ ${c.clean.time}), ` +
        `after any ${f(a.max)} (after ${a.after} stopped at ${a.stop}, ${a.joint} @ ${a.time})`,
    );
  }
  console.log(`  max clean ${f(r.max_clean)}, max after any clip ${f(r.max_after_any)}`);
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`player.mjs: ${e.message}`);
    process.exit(1);
  }
  let r;
  try {
    r = await measure(args.original, args.exported, args.shell, args.stops, args.sockets, args.morph);
  } catch (e) {
    console.error(`player.mjs: ${e.message}`);
    process.exit(1);
  }
  if (args.json) console.log(JSON.stringify(r, null, 1));
  else printText(r);
  process.exit(r.joints_unmatched.length || r.clips_missing.length ? 2 : 0);
}

main();
