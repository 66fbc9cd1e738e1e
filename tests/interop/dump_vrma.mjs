// Loads .vrma files with @pixiv/three-vrm-animation (an implementation nobody on
// this project wrote) and prints what it reads, as one JSON object on stdout:
//
//   { "files": [ { "path", "animationCount", "duration", "restHipsPosition": [x, y, z],
//                  "rotation":    { "<vrmHumanBoneName>": { "times": [...], "values": [x, y, z, w, ...] } },
//                  "translation": { "hips": { "times": [...], "values": [x, y, z, ...] } },
//                  "preset":      { "<presetExpressionName>": { "times": [...], "values": [w, ...] } },
//                  "custom":      { "<customExpressionName>": { "times": [...], "values": [w, ...] } },
//                  "lookAt":      { "times": [...], "values": [x, y, z, w, ...] } | null,
//                  "warnings":    [ "<console.warn text printed while loading>", ... ] } ] }
//
// With --at T1,T2,... each file also gets "samples": { "times": [T1, ...],
//   "rotation": { "<bone>": [x, y, z, w, ...] }, "translation": { "hips": [x, y, z, ...] } }:
// every humanoid track evaluated at those times by the track's own three.js
// interpolant (what an AnimationMixer plays: STEP, LINEAR, or GLTFLoader's
// CUBICSPLINE), one value per time in order.
//
// A file that fails to load gives { "path", "error": "<message>" } instead, and the
// exit status is then 1 (the other files are still dumped).
//
// Humanoid rotation and hips translation tracks are the ones three-vrm-animation
// builds, i.e. already converted to three-vrm's normalized humanoid space (rest
// rotations removed, translation in the hips parent's world space). The lookAt
// track is the file's own rotation track, unchanged (that is what the library keeps).
// Expression values are the x component of the expression node's translation.
// Numbers are the library's Float32Array values widened to JSON doubles.
//
// Usage: node dump_vrma.mjs [--animation N] [--at T1,T2,...] FILE.vrma [FILE ...]
//   --animation N  which of gltf.userData.vrmAnimations to dump (default 0)
//   --at TIMES     also sample every humanoid track at these times (seconds)

import { parseGlb } from './parse_glb.mjs';
import { VRMAnimationLoaderPlugin } from '@pixiv/three-vrm-animation';

function usage(message) {
  process.stderr.write(`${message}\nusage: node dump_vrma.mjs [--animation N] [--at T1,T2,...] FILE.vrma [FILE ...]\n`);
  process.exit(2);
}

const paths = [];
let animationIndex = 0;
let sampleTimes = null;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '--animation') {
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 0) usage('--animation needs a non-negative integer');
    animationIndex = n;
  } else if (arg === '--at') {
    sampleTimes = (argv[++i] ?? '').split(',').map(Number);
    if (sampleTimes.some((t) => !Number.isFinite(t))) usage('--at needs comma-separated seconds');
  } else if (arg.startsWith('--')) {
    usage(`unknown option ${arg}`);
  } else {
    paths.push(arg);
  }
}
if (paths.length === 0) usage('no files given');

const plain = (track) => ({ times: Array.from(track.times), values: Array.from(track.values) });
const plainMap = (map) => Object.fromEntries([...map].map(([name, track]) => [name, plain(track)]));

// A track evaluated at each of `times` by its own interpolant, values concatenated.
function sampled(track, times) {
  const interpolant = track.createInterpolant();
  return times.flatMap((t) => Array.from(interpolant.evaluate(t)));
}
const sampledMap = (map, times) =>
  Object.fromEntries([...map].map(([name, track]) => [name, sampled(track, times)]));

async function dump(path) {
  // The plugin reports problems it tolerates (T-pose violation, translation on a
  // non-hips bone, draft spec version) with console.warn: kept in `warnings`.
  const { gltf, warnings } = await parseGlb(path, VRMAnimationLoaderPlugin);

  const animations = gltf.userData.vrmAnimations;
  if (animations == null) {
    // The plugin returns silently when VRMC_vrm_animation is not in extensionsUsed,
    // is missing, or has an unknown specVersion.
    throw new Error(`not loaded as a VRM animation (no VRMC_vrm_animation?)${warnings.length ? ': ' + warnings.join('; ') : ''}`);
  }
  const animation = animations[animationIndex];
  if (animation == null) {
    throw new Error(`no animation ${animationIndex}: the file has ${animations.length}`);
  }
  return {
    path,
    animationCount: animations.length,
    duration: animation.duration,
    restHipsPosition: animation.restHipsPosition.toArray(),
    rotation: plainMap(animation.humanoidTracks.rotation),
    translation: plainMap(animation.humanoidTracks.translation),
    preset: plainMap(animation.expressionTracks.preset),
    custom: plainMap(animation.expressionTracks.custom),
    lookAt: animation.lookAtTrack == null ? null : plain(animation.lookAtTrack),
    warnings,
    ...(sampleTimes == null ? {} : {
      samples: {
        times: sampleTimes,
        rotation: sampledMap(animation.humanoidTracks.rotation, sampleTimes),
        translation: sampledMap(animation.humanoidTracks.translation, sampleTimes),
      },
    }),
  };
}

const files = [];
let failed = false;
for (const path of paths) {
  try {
    files.push(await dump(path));
  } catch (e) {
    failed = true;
    files.push({ path, error: String(e?.stack ?? e) });
  }
}
process.stdout.write(JSON.stringify({ files }) + '\n');
process.exitCode = failed ? 1 : 0;
