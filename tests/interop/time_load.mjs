// Times @pixiv/three-vrm-animation loading one .vrma (GLTFLoader.parseAsync with
// VRMAnimationLoaderPlugin, from bytes already in memory: the file is read once,
// outside the timing) and prints one JSON object on stdout:
//
//   { "path", "bytes", "ms": [ <milliseconds of each load>, ... ], "best_ms" }
//
// The first load includes V8's warm-up; best_ms is the fastest load. Used by a
// benchmark to compare with our loader's time in the same run on the same machine.
//
// Usage: node time_load.mjs FILE [--repeat N]   (N defaults to 3)

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { VRMAnimationLoaderPlugin } from '@pixiv/three-vrm-animation';

function usage(message) {
  process.stderr.write(`${message}\nusage: node time_load.mjs FILE [--repeat N]\n`);
  process.exit(2);
}

let path = null;
let repeat = 3;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '--repeat') {
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 1) usage('--repeat needs a positive integer');
    repeat = n;
  } else if (arg.startsWith('--')) {
    usage(`unknown option ${arg}`);
  } else if (path == null) {
    path = arg;
  } else {
    usage('only one file');
  }
}
if (path == null) usage('no file given');

const bytes = readFileSync(path);
const ms = [];
// The plugin's console.warn (e.g. about the T-pose) would be timed too and clutter
// the output: silence it here, dump_vrma.mjs reports it.
console.warn = () => {};
for (let i = 0; i < repeat; i++) {
  // A fresh copy per load, so no run can reuse another's buffer.
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const start = performance.now();
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMAnimationLoaderPlugin(parser));
  const gltf = await loader.parseAsync(arrayBuffer, '');
  const elapsed = performance.now() - start;
  if (gltf.userData.vrmAnimations == null) {
    process.stdout.write(JSON.stringify({ path, error: 'not loaded as a VRM animation' }) + '\n');
    process.exit(1);
  }
  ms.push(elapsed);
}
process.stdout.write(JSON.stringify({ path, bytes: bytes.byteLength, ms, best_ms: Math.min(...ms) }) + '\n');
