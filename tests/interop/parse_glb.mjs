// Shared by the node scripts here: parses a .glb / .vrm / .vrma file with three's
// GLTFLoader and one loader plugin, as a browser page would, keeping what the
// plugin reports with console.warn (problems it tolerates) instead of printing it.

import { readFileSync } from 'node:fs';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

// Returns { gltf, warnings }. `Plugin` is a loader plugin class such as
// VRMLoaderPlugin or VRMAnimationLoaderPlugin.
export async function parseGlb(path, Plugin) {
  const bytes = readFileSync(path);
  // A small Buffer can be a view into Node's shared pool: hand the loader a copy
  // holding exactly the file's bytes.
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  try {
    const loader = new GLTFLoader();
    loader.register((parser) => new Plugin(parser));
    return { gltf: await loader.parseAsync(arrayBuffer, ''), warnings };
  } finally {
    console.warn = warn;
  }
}
