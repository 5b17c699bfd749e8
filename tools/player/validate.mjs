#!/usr/bin/env node
// validate.mjs FILE... : runs the Khronos glTF validator (npm gltf-validator, validateBytes) on
// each file and prints a JSON array, one report per file:
//   { file, errors, warnings, infos, hints, messages: [ { code, severity, message, pointer } ] }
// severity: 0 error, 1 warning, 2 info, 3 hint (the validator's numbering). No issue limit.
// Exit: 0 reported (whatever the files hold), 1 usage error or a file the validator rejects.

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import validator from 'gltf-validator';

async function validate(path) {
  const bytes = new Uint8Array(readFileSync(path));
  const report = await validator.validateBytes(bytes, {
    uri: basename(path),
    maxIssues: 0,
    writeTimestamp: false,
    externalResourceFunction: (uri) =>
      readFile(resolve(dirname(resolve(path)), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
  });
  const issues = report.issues;
  return {
    file: path,
    errors: issues.numErrors,
    warnings: issues.numWarnings,
    infos: issues.numInfos,
    hints: issues.numHints,
    messages: issues.messages.map(({ code, severity, message, pointer }) => ({
      code,
      severity,
      message,
      pointer: pointer ?? null,
    })),
  };
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0 || files.some((f) => f.startsWith('--'))) {
    console.error('usage: validate.mjs FILE...');
    process.exit(1);
  }
  const out = [];
  for (const f of files) {
    try {
      out.push(await validate(f));
    } catch (e) {
      console.error(`validate.mjs: ${f}: ${e?.message ?? e}`);
      process.exit(1);
    }
  }
  console.log(JSON.stringify(out, null, 1));
}

main();
