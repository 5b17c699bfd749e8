// Writes a copy of a .glb with every EXT/KHR_meshopt_compression buffer view decoded by
// meshoptimizer's reference decoder (npm `meshoptimizer`, pinned in package-lock.json), so
// tools that cannot decode meshopt (animeval.py) judge exactly what a meshopt-aware player
// loads. Independent of skelpack's own decoder (the `meshopt` crate).
//
//   node tools/peers/decode_meshopt.mjs IN.glb OUT.glb

import { readFileSync, writeFileSync } from 'node:fs';
import { MeshoptDecoder } from 'meshoptimizer/decoder';

const EXTS = ['EXT_meshopt_compression', 'KHR_meshopt_compression'];
const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node decode_meshopt.mjs IN.glb OUT.glb');
  process.exit(1);
}
await MeshoptDecoder.ready;
const glb = readFileSync(input);
if (glb.readUInt32LE(0) !== 0x46546c67) throw new Error(`${input}: not a .glb`);
const jsonLen = glb.readUInt32LE(12);
const json = JSON.parse(glb.subarray(20, 20 + jsonLen).toString('utf8'));
let bin = Buffer.alloc(0);
const binAt = 20 + jsonLen;
if (binAt + 8 <= glb.length) bin = glb.subarray(binAt + 8, binAt + 8 + glb.readUInt32LE(binAt));
if ((json.buffers ?? []).some((b, i) => b.uri !== undefined || (i > 0 && !isFallback(b)))) {
  throw new Error(`${input}: only single-buffer .glb files (plus a meshopt fallback) are handled`);
}
function isFallback(b) {
  return EXTS.some((k) => b.extensions?.[k]?.fallback);
}
const parts = [];
let length = 0;
function append(bytes) {
  const pad = (4 - (length % 4)) % 4;
  if (pad) parts.push(Buffer.alloc(pad));
  length += pad;
  const at = length;
  parts.push(Buffer.from(bytes));
  length += bytes.length;
  return at;
}
for (const view of json.bufferViews ?? []) {
  const key = EXTS.find((k) => view.extensions?.[k]);
  let bytes;
  if (key) {
    const m = view.extensions[key];
    const src = bin.subarray(m.byteOffset ?? 0, (m.byteOffset ?? 0) + m.byteLength);
    const out = new Uint8Array(m.count * m.byteStride);
    MeshoptDecoder.decodeGltfBuffer(out, m.count, m.byteStride, src, m.mode, m.filter ?? 'NONE');
    bytes = out;
    delete view.extensions[key];
    if (Object.keys(view.extensions).length === 0) delete view.extensions;
  } else {
    const o = view.byteOffset ?? 0;
    bytes = bin.subarray(o, o + view.byteLength);
  }
  view.buffer = 0;
  view.byteOffset = append(bytes);
  view.byteLength = bytes.length;
}
json.buffers = [{ byteLength: length }];
for (const key of ['extensionsUsed', 'extensionsRequired']) {
  if (!json[key]) continue;
  json[key] = json[key].filter((e) => !EXTS.includes(e));
  if (json[key].length === 0) delete json[key];
}
const body = Buffer.concat(parts);
const binPad = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
let text = Buffer.from(JSON.stringify(json), 'utf8');
text = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
const header = Buffer.alloc(12);
header.writeUInt32LE(0x46546c67, 0);
header.writeUInt32LE(2, 4);
header.writeUInt32LE(12 + 8 + text.length + 8 + binPad.length, 8);
const chunk = (type, data) => {
  const h = Buffer.alloc(8);
  h.writeUInt32LE(data.length, 0);
  h.writeUInt32LE(type, 4);
  return Buffer.concat([h, data]);
};
writeFileSync(output, Buffer.concat([header, chunk(0x4e4f534a, text), chunk(0x004e4942, binPad)]));
