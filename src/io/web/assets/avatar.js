// Avatars: a .vrm (VRM 0.x or 1.0) loaded with three.js and @pixiv/three-vrm, and
// a pose from the bridge applied to it the way three-vrm takes one: each bone's
// normalized rotation on its normalized bone node, the hips position scaled to
// the avatar, expression weights, the eyes' yaw and pitch, then `vrm.update`.
//
// A pose holds rotations relative to the T-pose in the bridge's axes (glTF: +Y up,
// the character facing +Z): what three-vrm's normalized bones take for a VRM 1.0
// model. A VRM 0.x model faces -Z; three-vrm turns its scene half a turn about +Y
// (`VRMUtils.rotateVRM0`), under which the same pose is its rotations and hips
// turned half a turn too: x and z negated (as three-vrm-animation does).
//
// A file that cannot be drawn is said in words (`FileProblem`: not a glTF/VRM
// file, cut short, not a usable VRM and why); what three.js or three-vrm threw
// goes to the console only.

import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";
import { BONES, PRESETS } from "./pose.js";

/// Each bone's parent in the VRM humanoid (`null` for the hips), by index.
const PARENT_NAMES = {
  spine: "hips", chest: "spine", upperChest: "chest", neck: "upperChest", head: "neck",
  leftEye: "head", rightEye: "head", jaw: "head",
  leftUpperLeg: "hips", leftLowerLeg: "leftUpperLeg", leftFoot: "leftLowerLeg", leftToes: "leftFoot",
  rightUpperLeg: "hips", rightLowerLeg: "rightUpperLeg", rightFoot: "rightLowerLeg", rightToes: "rightFoot",
  leftShoulder: "upperChest", leftUpperArm: "leftShoulder", leftLowerArm: "leftUpperArm", leftHand: "leftLowerArm",
  rightShoulder: "upperChest", rightUpperArm: "rightShoulder", rightLowerArm: "rightUpperArm", rightHand: "rightLowerArm",
};
for (const side of ["left", "right"]) {
  PARENT_NAMES[`${side}ThumbMetacarpal`] = `${side}Hand`;
  PARENT_NAMES[`${side}ThumbProximal`] = `${side}ThumbMetacarpal`;
  PARENT_NAMES[`${side}ThumbDistal`] = `${side}ThumbProximal`;
  for (const finger of ["Index", "Middle", "Ring", "Little"]) {
    PARENT_NAMES[`${side}${finger}Proximal`] = `${side}Hand`;
    PARENT_NAMES[`${side}${finger}Intermediate`] = `${side}${finger}Proximal`;
    PARENT_NAMES[`${side}${finger}Distal`] = `${side}${finger}Intermediate`;
  }
}
export const PARENTS = Int32Array.from(BONES, (name) => (name in PARENT_NAMES ? BONES.indexOf(PARENT_NAMES[name]) : -1));

const RAD2DEG = 180 / Math.PI;

/// What is wrong with a file, in words for the page (after the file's name).
export class FileProblem extends Error {}

const GLB_MAGIC = 0x46546c67; // "glTF"
const GLB_JSON = 0x4e4f534a; // "JSON"

/// A glTF's JSON from a GLB's or a .gltf's bytes, the container checked whole.
function gltfJson(bytes) {
  const view = new DataView(bytes);
  const size = bytes.byteLength;
  const cut = (length) => new FileProblem(`the file is cut short (${size} of its ${length} bytes)`);
  let text;
  if (size >= 4 && view.getUint32(0, true) === GLB_MAGIC) {
    if (size < 20) throw new FileProblem("the file is cut short");
    const length = view.getUint32(8, true);
    if (length > size) throw cut(length);
    const jsonLength = view.getUint32(12, true);
    if (view.getUint32(16, true) !== GLB_JSON) throw new FileProblem("not a glTF/VRM file (its first chunk is not JSON)");
    if (20 + jsonLength > length) throw cut(20 + jsonLength);
    const bin = 20 + jsonLength;
    if (bin + 8 <= length && bin + 8 + view.getUint32(bin, true) > length) throw cut(bin + 8 + view.getUint32(bin, true));
    text = new Uint8Array(bytes, 20, jsonLength);
  } else {
    const start = new Uint8Array(bytes, 0, Math.min(size, 64)).find((b) => b > 0x20);
    if (start !== 0x7b) throw new FileProblem("not a glTF/VRM file"); // "{"
    text = new Uint8Array(bytes);
  }
  let json;
  try {
    json = JSON.parse(new TextDecoder().decode(text));
  } catch (e) {
    console.warn("the file's glTF JSON:", e);
    throw new FileProblem("not a glTF/VRM file (its JSON does not parse)");
  }
  if (!json || typeof json.asset !== "object") throw new FileProblem("not a glTF/VRM file (no glTF asset)");
  return json;
}

/// Checks that a glTF is a VRM whose humanoid bones are nodes of the file.
function checkHumanoid(json) {
  const extensions = json.extensions || {};
  const vrm1 = extensions.VRMC_vrm && extensions.VRMC_vrm.humanoid;
  const vrm0 = extensions.VRM && extensions.VRM.humanoid;
  if (!vrm1 && !vrm0) throw new FileProblem("not a VRM (a glTF with no VRMC_vrm or VRM humanoid)");
  const bones = vrm1
    ? Object.entries(vrm1.humanBones || {}).map(([bone, b]) => [bone, b && b.node])
    : (vrm0.humanBones || []).map((b) => [b && b.bone, b && b.node]);
  const nodes = (json.nodes || []).length;
  for (const [bone, node] of bones) {
    if (!Number.isInteger(node) || node < 0 || node >= nodes) {
      throw new FileProblem(`not a usable VRM (its humanoid's ${bone} is node ${node}, which the file does not have)`);
    }
  }
}

/// Reads a .vrm's bytes into a VRM (three-vrm's object); throws a FileProblem
/// when the file is not a VRM that can be drawn.
export async function loadVrm(bytes) {
  checkHumanoid(gltfJson(bytes));
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  let gltf;
  try {
    gltf = await loader.parseAsync(bytes, "");
  } catch (e) {
    console.warn("three.js or three-vrm could not read the file:", e);
    throw new FileProblem("not a usable VRM (three.js or three-vrm could not read it; the console says why)");
  }
  const vrm = gltf.userData.vrm;
  if (!vrm || !vrm.humanoid || !vrm.humanoid.getNormalizedBoneNode("hips")) {
    throw new FileProblem("not a usable VRM (three-vrm finds no humanoid with hips in it)");
  }
  VRMUtils.removeUnnecessaryVertices(gltf.scene);
  VRMUtils.combineSkeletons(gltf.scene);
  VRMUtils.rotateVRM0(vrm);
  // Frustum culling uses the rest pose's bounds, which a walking avatar leaves.
  vrm.scene.traverse((o) => (o.frustumCulled = false));
  return vrm;
}

/// One avatar posed from the bridge's poses.
export class Avatar {
  constructor(vrm) {
    this.vrm = vrm;
    this.isVrm0 = vrm.meta && vrm.meta.metaVersion === "0";
    const humanoid = vrm.humanoid;
    // The avatar's bones, parents first, each with the pose's bones it takes:
    // itself and those between it and its nearest ancestor the avatar has (a pose
    // bone the avatar lacks turns the bones below it, as in the bridge's own
    // `FromNormalized`).
    this.nodes = [];
    this.chains = [];
    this.boneIndex = [];
    const has = BONES.map((name) => humanoid.getNormalizedBoneNode(name) !== null);
    for (let b = 0; b < BONES.length; b++) {
      if (!has[b]) continue;
      const chain = [];
      for (let k = b; k >= 0; k = PARENTS[k]) {
        if (k !== b && has[k]) break;
        chain.unshift(k);
      }
      this.nodes.push(humanoid.getNormalizedBoneNode(BONES[b]));
      this.chains.push(Int32Array.from(chain));
      this.boneIndex.push(b);
    }
    this.raw = BONES.map((name) => humanoid.getRawBoneNode(name));
    this.hips = humanoid.getNormalizedBoneNode("hips");
    // three-vrm-animation scales hips motion by the same height.
    this.hipsHeight = humanoid.normalizedRestPose.hips.position[1];
    this.expressions = vrm.expressionManager || null;
    this.customSet = new Set(); // custom expressions set by the last pose
  }

  /// Poses the avatar; `vrm.update(dt)` follows (in `update`).
  setPose(pose) {
    const r = pose.rotations;
    const flip = this.isVrm0 ? -1 : 1;
    for (let i = 0; i < this.nodes.length; i++) {
      const chain = this.chains[i];
      let x = 0, y = 0, z = 0, w = 1;
      for (let c = 0; c < chain.length; c++) {
        const o = 4 * chain[c];
        const bx = r[o], by = r[o + 1], bz = r[o + 2], bw = r[o + 3];
        const nx = w * bx + x * bw + y * bz - z * by;
        const ny = w * by - x * bz + y * bw + z * bx;
        const nz = w * bz + x * by - y * bx + z * bw;
        w = w * bw - x * bx - y * by - z * bz;
        x = nx; y = ny; z = nz;
      }
      this.nodes[i].quaternion.set(flip * x, y, flip * z, w);
    }
    const scale = this.hipsHeight / (pose.restHipsHeight > 0.01 ? pose.restHipsHeight : this.hipsHeight);
    this.hips.position.set(flip * pose.hips[0] * scale, pose.hips[1] * scale, flip * pose.hips[2] * scale);
    const e = this.expressions;
    if (e) {
      for (let i = 0; i < PRESETS.length; i++) {
        if (e.getExpression(PRESETS[i])) e.setValue(PRESETS[i], (pose.presetMask >>> i) & 1 ? pose.presets[i] : 0);
      }
      for (const name of this.customSet) e.setValue(name, 0);
      this.customSet.clear();
      for (let i = 0; i < pose.customCount; i++) {
        const name = pose.customNames[i];
        if (!e.getExpression(name)) continue;
        e.setValue(name, pose.customWeights[i]);
        this.customSet.add(name);
      }
    }
    const lookAt = this.vrm.lookAt;
    if (lookAt) {
      lookAt.yaw = pose.hasLookAt ? pose.lookYaw * RAD2DEG : 0;
      lookAt.pitch = pose.hasLookAt ? pose.lookPitch * RAD2DEG : 0;
    }
  }

  /// Advances spring bones and the like, and copies the normalized bones onto
  /// the model's own.
  update(dt) {
    this.vrm.update(dt);
  }

  /// World positions of the model's own (raw) bones, metres: bone name → [x, y, z].
  boneWorldPositions() {
    const out = {};
    BONES.forEach((name, b) => {
      const node = this.raw[b];
      if (!node) return;
      node.updateWorldMatrix(true, false);
      const m = node.matrixWorld.elements;
      out[name] = [m[12], m[13], m[14]];
    });
    return out;
  }

  /// The same into `out` (3 per bone, in `BONES` order), with `shown[b]` set for
  /// the bones the model has; world matrices as last updated (the caller updates
  /// them first).
  bonePositions(out, shown) {
    for (let b = 0; b < BONES.length; b++) {
      const node = this.raw[b];
      shown[b] = node ? 1 : 0;
      if (!node) continue;
      const m = node.matrixWorld.elements;
      out[3 * b] = m[12];
      out[3 * b + 1] = m[13];
      out[3 * b + 2] = m[14];
    }
  }

  dispose() {
    VRMUtils.deepDispose(this.vrm.scene);
  }
}
