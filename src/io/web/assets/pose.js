// Poses as the bridge sends them (docs/websocket.md): the binary decoder, and
// forward kinematics from normalized rotations to joint positions on a rig.

export const BONES = ["hips", "spine", "chest", "upperChest", "neck", "head", "leftEye",
  "rightEye", "jaw", "leftUpperLeg", "leftLowerLeg", "leftFoot", "leftToes",
  "rightUpperLeg", "rightLowerLeg", "rightFoot", "rightToes", "leftShoulder",
  "leftUpperArm", "leftLowerArm", "leftHand", "rightShoulder", "rightUpperArm",
  "rightLowerArm", "rightHand", "leftThumbMetacarpal", "leftThumbProximal",
  "leftThumbDistal", "leftIndexProximal", "leftIndexIntermediate", "leftIndexDistal",
  "leftMiddleProximal", "leftMiddleIntermediate", "leftMiddleDistal",
  "leftRingProximal", "leftRingIntermediate", "leftRingDistal", "leftLittleProximal",
  "leftLittleIntermediate", "leftLittleDistal", "rightThumbMetacarpal",
  "rightThumbProximal", "rightThumbDistal", "rightIndexProximal",
  "rightIndexIntermediate", "rightIndexDistal", "rightMiddleProximal",
  "rightMiddleIntermediate", "rightMiddleDistal", "rightRingProximal",
  "rightRingIntermediate", "rightRingDistal", "rightLittleProximal",
  "rightLittleIntermediate", "rightLittleDistal"];

export const PRESETS = ["happy", "angry", "sad", "relaxed", "surprised", "aa", "ih", "ou",
  "ee", "oh", "blink", "blinkLeft", "blinkRight", "lookUp", "lookDown", "lookLeft",
  "lookRight", "neutral"];

const BONE_COUNT = BONES.length;
const PRESET_COUNT = PRESETS.length;
/// Custom expressions a pose carries at most (docs/websocket.md).
const MAX_CUSTOM = 16;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/// A pose to decode into and draw from: flat arrays, reused for every message.
export class Pose {
  constructor() {
    this.performer = "";
    this.seq = 0;
    this.time = 0;
    this.hips = new Float32Array(3);
    this.restHipsHeight = 1;
    // x, y, z, w per bone; identity where a bone is absent.
    this.rotations = new Float32Array(BONE_COUNT * 4);
    this.present = new Uint8Array(BONE_COUNT);
    // Preset expression weights, with a mask of those present.
    this.presets = new Float32Array(PRESET_COUNT);
    this.presetMask = 0;
    // Custom expressions: the first `customCount` names and weights.
    this.customNames = new Array(MAX_CUSTOM).fill("");
    this.customWeights = new Float32Array(MAX_CUSTOM);
    this.customCount = 0;
    // lookAt yaw and pitch, radians, when `hasLookAt`.
    this.hasLookAt = false;
    this.lookYaw = 0;
    this.lookPitch = 0;
  }

  copyFrom(other) {
    this.performer = other.performer;
    this.seq = other.seq;
    this.time = other.time;
    this.hips.set(other.hips);
    this.restHipsHeight = other.restHipsHeight;
    this.rotations.set(other.rotations);
    this.present.set(other.present);
    this.presets.set(other.presets);
    this.presetMask = other.presetMask;
    for (let i = 0; i < other.customCount; i++) this.customNames[i] = other.customNames[i];
    this.customWeights.set(other.customWeights);
    this.customCount = other.customCount;
    this.hasLookAt = other.hasLookAt;
    this.lookYaw = other.lookYaw;
    this.lookPitch = other.lookPitch;
  }
}

/// Reads a binary pose (layout in docs/websocket.md) into `pose`; throws on a
/// message that is not one.
export function decodeBinaryPose(buffer, pose) {
  const view = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  let at = 0;
  const need = (n) => {
    if (at + n > bytes.length) throw new Error("truncated pose");
  };
  need(7);
  if (bytes[0] !== 0x4d || bytes[1] !== 0x42 || bytes[2] !== 0x50 || bytes[3] !== 0x4f) {
    throw new Error("not a binary pose");
  }
  if (bytes[4] !== 1) throw new Error("unsupported pose version " + bytes[4]);
  const flags = bytes[5];
  const n = bytes[6];
  at = 7;
  need(n + 40);
  pose.performer = utf8.decode(bytes.subarray(at, at + n));
  at += n;
  pose.seq = Number(view.getBigUint64(at, true));
  at += 8;
  pose.time = view.getFloat64(at, true);
  at += 8;
  const lo = view.getUint32(at, true);
  const hi = view.getUint32(at + 4, true);
  at += 8;
  for (let i = 0; i < 3; i++) pose.hips[i] = view.getFloat32(at + 4 * i, true);
  pose.restHipsHeight = view.getFloat32(at + 12, true);
  at += 16;
  const r = pose.rotations;
  for (let b = 0; b < BONE_COUNT; b++) {
    const set = b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1;
    pose.present[b] = set;
    if (set) {
      need(16);
      for (let k = 0; k < 4; k++) r[4 * b + k] = view.getFloat32(at + 4 * k, true);
      at += 16;
    } else {
      r[4 * b] = 0; r[4 * b + 1] = 0; r[4 * b + 2] = 0; r[4 * b + 3] = 1;
    }
  }
  need(4);
  const presets = view.getUint32(at, true);
  at += 4;
  pose.presetMask = presets;
  for (let i = 0; i < PRESET_COUNT; i++) {
    if ((presets >>> i) & 1) {
      need(4);
      pose.presets[i] = view.getFloat32(at, true);
      at += 4;
    } else {
      pose.presets[i] = 0;
    }
  }
  need(1);
  const custom = bytes[at++];
  if (custom > MAX_CUSTOM) throw new Error("pose with " + custom + " custom expressions");
  for (let i = 0; i < custom; i++) {
    need(1);
    const m = bytes[at++];
    need(m + 4);
    pose.customNames[i] = utf8.decode(bytes.subarray(at, at + m));
    pose.customWeights[i] = view.getFloat32(at + m, true);
    at += m + 4;
  }
  pose.customCount = custom;
  pose.hasLookAt = (flags & 1) === 1;
  if (pose.hasLookAt) {
    need(8);
    pose.lookYaw = view.getFloat32(at, true);
    pose.lookPitch = view.getFloat32(at + 4, true);
    at += 8;
  }
  if (at !== bytes.length) throw new Error("pose with extra or missing bytes");
  return pose;
}

/// q = a · b (quaternions as [x, y, z, w] at offsets in flat arrays).
export function mulQuat(out, o, a, ai, b, bi) {
  const ax = a[ai], ay = a[ai + 1], az = a[ai + 2], aw = a[ai + 3];
  const bx = b[bi], by = b[bi + 1], bz = b[bi + 2], bw = b[bi + 3];
  out[o] = aw * bx + ax * bw + ay * bz - az * by;
  out[o + 1] = aw * by - ax * bz + ay * bw + az * bx;
  out[o + 2] = aw * bz + ax * by - ay * bx + az * bw;
  out[o + 3] = aw * bw - ax * bx - ay * by - az * bz;
}

/// v rotated by the unit quaternion q at q[qi]; written to out[o..o+3].
export function rotate(out, o, q, qi, vx, vy, vz) {
  const x = q[qi], y = q[qi + 1], z = q[qi + 2], w = q[qi + 3];
  // t = 2 (q.xyz × v); v' = v + w t + q.xyz × t
  const tx = 2 * (y * vz - z * vy);
  const ty = 2 * (z * vx - x * vz);
  const tz = 2 * (x * vy - y * vx);
  out[o] = vx + w * tx + (y * tz - z * ty);
  out[o + 1] = vy + w * ty + (z * tx - x * tz);
  out[o + 2] = vz + w * tz + (x * ty - y * tx);
}

/// The avatar's T-pose from `/api/rig`, and forward kinematics on it.
export class Rig {
  constructor(json) {
    this.names = json.bones.map((b) => b.name);
    this.parents = new Int32Array(BONE_COUNT);
    this.rest = new Float32Array(BONE_COUNT * 3);
    this.hipsHeight = json.hipsHeight;
    json.bones.forEach((b, i) => {
      if (b.name !== BONES[i]) throw new Error("rig bone " + i + " is " + b.name);
      this.parents[i] = b.parent === null ? -1 : BONES.indexOf(b.parent);
      this.rest.set(b.position, 3 * i);
    });
    this.world = new Float32Array(BONE_COUNT * 4);
  }

  /// Joint positions of `pose` (metres, model space) into `out` (3 per bone).
  /// Normalized rotations have the identity as every rest, so a bone's world
  /// rotation is the product down its chain, and each joint hangs off its
  /// parent by the T-pose offset turned by the parent's world rotation.
  positions(pose, out) {
    const w = this.world;
    const scale = this.hipsHeight / (pose.restHipsHeight > 0.01 ? pose.restHipsHeight : this.hipsHeight);
    for (let b = 0; b < BONE_COUNT; b++) {
      const p = this.parents[b];
      if (p < 0) {
        for (let k = 0; k < 4; k++) w[4 * b + k] = pose.rotations[4 * b + k];
        out[3 * b] = pose.hips[0] * scale;
        out[3 * b + 1] = pose.hips[1] * scale;
        out[3 * b + 2] = pose.hips[2] * scale;
        continue;
      }
      mulQuat(w, 4 * b, w, 4 * p, pose.rotations, 4 * b);
      rotate(out, 3 * b, w, 4 * p,
        this.rest[3 * b] - this.rest[3 * p],
        this.rest[3 * b + 1] - this.rest[3 * p + 1],
        this.rest[3 * b + 2] - this.rest[3 * p + 2]);
      out[3 * b] += out[3 * p];
      out[3 * b + 1] += out[3 * p + 1];
      out[3 * b + 2] += out[3 * p + 2];
    }
    return out;
  }
}
