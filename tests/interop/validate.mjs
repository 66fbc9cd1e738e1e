// Runs the Khronos glTF validator (gltf-validator on npm) over glTF / GLB files and
// prints one JSON object on stdout:
//
//   { "files": [ { "path", "validatorVersion", "numErrors", "numWarnings", "numInfos", "numHints",
//                  "truncated",
//                  "messages": [ { "code", "message", "severity", "pointer" }, ... ] } ] }
//
// severity is the validator's number: 0 error, 1 warning, 2 info, 3 hint. pointer is
// the JSON pointer the validator gives, or null for messages about the binary chunk
// (those carry a byte "offset" instead, included when present). At most 100
// messages are listed per file (maxIssues: 100; "truncated" says when more were cut).
// External resources (other files named by URI) are refused: a .vrma must be one GLB.
//
// A file that cannot be read or that the validator throws on gives
// { "path", "error": "<message>" } and the exit status 1. Validation *findings* do not
// change the exit status: the caller decides what counts.
//
// Usage: node validate.mjs FILE [FILE ...]

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { validateBytes, version } from 'gltf-validator';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: node validate.mjs FILE [FILE ...]\n');
  process.exit(2);
}

async function validate(path) {
  const bytes = readFileSync(path);
  const report = await validateBytes(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    uri: basename(path),
    maxIssues: 100,
    externalResourceFunction: (uri) =>
      Promise.reject(new Error(`external resource ${uri} refused: expected a self-contained GLB`)),
  });
  const issues = report.issues;
  return {
    path,
    validatorVersion: report.validatorVersion,
    numErrors: issues.numErrors,
    numWarnings: issues.numWarnings,
    numInfos: issues.numInfos,
    numHints: issues.numHints,
    truncated: issues.truncated,
    messages: issues.messages.map((m) => ({
      code: m.code,
      message: m.message,
      severity: m.severity,
      pointer: m.pointer ?? null,
      ...(m.offset != null ? { offset: m.offset } : {}),
    })),
  };
}

const files = [];
let failed = false;
for (const path of paths) {
  try {
    files.push(await validate(path));
  } catch (e) {
    failed = true;
    files.push({ path, error: String(e?.stack ?? e), validatorVersion: version() });
  }
}
process.stdout.write(JSON.stringify({ files }) + '\n');
process.exitCode = failed ? 1 : 0;
