// Loads a .glb / .gltf file with three.js' GLTFLoader in Node (no DOM, no textures).
//
// Shims: `self` (GLTFLoader reads self.URL), a `createImageBitmap` stand-in so the loader picks
// ImageBitmapLoader, whose load() is stubbed to hand back a 1x1 placeholder without decoding:
// images do not move bones. External buffers of a .gltf are read from disk beside the file.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ImageBitmapLoader, LoadingManager } from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
// EXT_meshopt_compression (skelpack compress --meshopt, gltfpack -cc): three's own decoder.
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';

globalThis.self ??= globalThis;
// FileLoader reports progress with a DOM ProgressEvent
globalThis.ProgressEvent ??= class ProgressEvent extends Event {
  constructor(type, init = {}) {
    super(type);
    Object.assign(this, init);
  }
};
globalThis.createImageBitmap ??= async () => ({ width: 1, height: 1, close() {} });
ImageBitmapLoader.prototype.load = function (url, onLoad) {
  onLoad({ width: 1, height: 1, close() {} });
};

/** The loaded file: three's result plus the parser (raw JSON, accessors, node associations). */
export async function loadGltf(path) {
  const bytes = readFileSync(path);
  const dir = dirname(resolve(path));
  const manager = new LoadingManager();
  // Relative URIs (external .bin of a .gltf) become data: URIs read from disk: Node's fetch
  // has no file: scheme.
  manager.setURLModifier((url) => {
    if (/^(data|blob):/.test(url)) return url;
    const file = resolve(dir, decodeURIComponent(url.replace(/^file:\/\//, '')));
    return 'data:application/octet-stream;base64,' + readFileSync(file).toString('base64');
  });
  const loader = new GLTFLoader(manager);
  loader.setMeshoptDecoder(MeshoptDecoder);
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await new Promise((ok, fail) =>
    loader.parse(ab, '', ok, (e) => fail(new Error(`${path}: ${e?.message ?? e}`))),
  );
  const parser = gltf.parser;
  // glTF node index -> the Object3D that plays it in gltf.scene
  const nodeObjects = new Map();
  gltf.scene.traverse((o) => {
    const a = parser.associations.get(o);
    if (a && a.nodes !== undefined && !nodeObjects.has(a.nodes)) nodeObjects.set(a.nodes, o);
  });
  return { path, gltf, parser, json: parser.json, nodeObjects };
}

/** The values of a scalar accessor (e.g. an animation sampler's input), as an array. */
export async function readScalars(file, accessorIndex) {
  const attr = await file.parser.getDependency('accessor', accessorIndex);
  const out = new Array(attr.count);
  for (let i = 0; i < attr.count; i++) out[i] = attr.getX(i);
  return out;
}
