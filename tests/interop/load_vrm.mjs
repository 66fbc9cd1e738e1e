// Loads .vrm files with @pixiv/three-vrm (an implementation nobody on this project
// wrote), as a browser page would, and prints what it finds, as one JSON object on
// stdout:
//
//   { "files": [ { "path", "metaVersion", "meta": { ...the VRM 1.0 meta as read... },
//                  "humanBones": [ "<vrmHumanBoneName>", ... ],
//                  "restPositions": { "<vrmHumanBoneName>": [x, y, z] },
//                  "expressions": [ "<expressionName>", ... ],
//                  "morphs": { "<expressionName>": [ { "mesh", "index", "influence" }, ... ] },
//                  "lookAt": { "type", "offsetFromHeadBone": [x, y, z],
//                              "eyeTurnDeg": { "left", "right", "up", "down" } } | null,
//                  "warnings": [ "<console.warn text printed while loading>", ... ] } ] }
//
// restPositions: each normalized humanoid bone's world position after loading, in
// the scene's space (metres, glTF axes), with no pose applied.
// morphs: for each expression set alone to 1 (then vrm.update(0)), every morph
// target influence that became non-zero, on meshes named by their node.
// eyeTurnDeg: how far the left eye bone turns, degrees, with lookAt at yaw 90° to
// the left and right and pitch 90° up and down (its range maps applied).
//
// A file that fails to load gives { "path", "error": "<message>" } instead, and the
// exit status is then 1 (the other files are still loaded).
//
// Usage: node load_vrm.mjs FILE.vrm [FILE ...]

import { parseGlb } from './parse_glb.mjs';
import { Quaternion, Vector3 } from 'three';
import { VRMLoaderPlugin } from '@pixiv/three-vrm';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: node load_vrm.mjs FILE.vrm [FILE ...]\n');
  process.exit(2);
}

// Every non-zero morph target influence in the scene.
function influences(scene) {
  const found = [];
  scene.traverse((object) => {
    (object.morphTargetInfluences ?? []).forEach((influence, index) => {
      if (influence !== 0) {
        found.push({ mesh: object.parent?.name || object.name, index, influence });
      }
    });
  });
  return found;
}

// Degrees the left eye bone turns from its rest with lookAt at (yaw, pitch).
function eyeTurn(vrm, yaw, pitch) {
  const eye = vrm.humanoid.getRawBoneNode('leftEye');
  const rest = eye.quaternion.clone();
  vrm.lookAt.yaw = yaw;
  vrm.lookAt.pitch = pitch;
  vrm.update(0);
  const turned = eye.quaternion.clone();
  vrm.lookAt.yaw = 0;
  vrm.lookAt.pitch = 0;
  vrm.update(0);
  return (rest.angleTo(turned) * 180) / Math.PI;
}

async function load(path) {
  const { gltf, warnings } = await parseGlb(path, VRMLoaderPlugin);
  const vrm = gltf.userData.vrm;
  if (vrm == null) {
    throw new Error(`not loaded as a VRM${warnings.length ? ': ' + warnings.join('; ') : ''}`);
  }
  vrm.scene.updateMatrixWorld(true);

  const humanBones = Object.keys(vrm.humanoid.humanBones).filter(
    (name) => vrm.humanoid.getRawBoneNode(name) != null,
  );
  const restPositions = {};
  for (const name of humanBones) {
    const node = vrm.humanoid.getNormalizedBoneNode(name);
    restPositions[name] = node.getWorldPosition(new Vector3()).toArray();
  }

  const manager = vrm.expressionManager;
  const expressions = manager == null ? [] : manager.expressions.map((e) => e.expressionName);
  const morphs = {};
  for (const name of expressions) {
    manager.resetValues();
    manager.setValue(name, 1);
    vrm.update(0);
    morphs[name] = influences(vrm.scene);
  }
  manager?.resetValues();
  vrm.update(0);

  let lookAt = null;
  if (vrm.lookAt != null) {
    vrm.lookAt.autoUpdate = false;
    lookAt = {
      type: vrm.lookAt.applier.constructor.type ?? null,
      offsetFromHeadBone: vrm.lookAt.offsetFromHeadBone.toArray(),
      eyeTurnDeg: {
        left: eyeTurn(vrm, 90, 0),
        right: eyeTurn(vrm, -90, 0),
        up: eyeTurn(vrm, 0, 90),
        down: eyeTurn(vrm, 0, -90),
      },
    };
  }

  return {
    path,
    metaVersion: vrm.meta.metaVersion,
    meta: vrm.meta,
    humanBones,
    restPositions,
    expressions,
    morphs,
    lookAt,
    warnings,
  };
}

const files = [];
let failed = false;
for (const path of paths) {
  try {
    files.push(await load(path));
  } catch (e) {
    failed = true;
    files.push({ path, error: String(e?.stack ?? e) });
  }
}
process.stdout.write(JSON.stringify({ files }) + '\n');
process.exitCode = failed ? 1 : 0;
