// Plays a recorded take (.vrma) on an avatar in the page with
// @pixiv/three-vrm-animation: the take's clip made for the avatar
// (`createVRMAnimationClip`: humanoid rotations, hips scaled to the avatar,
// expressions, lookAt) and run by a three.js AnimationMixer; play/pause, a
// scrub bar and a speed.

import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import {
  VRMAnimationLoaderPlugin,
  VRMLookAtQuaternionProxy,
  createVRMAnimationClip,
} from "@pixiv/three-vrm-animation";

/// Reads a .vrma's bytes; throws when the file holds no VRM animation.
export async function loadVrma(bytes) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMAnimationLoaderPlugin(parser));
  const gltf = await loader.parseAsync(bytes, "");
  const animations = gltf.userData.vrmAnimations;
  if (!animations || animations.length === 0) throw new Error("not a VRM animation (no VRMC_vrm_animation)");
  return animations[0];
}

export class Player {
  /// `controls`: the elements of the player's bar (play, time, speed, label).
  constructor(controls) {
    this.controls = controls;
    this.avatar = null;
    this.animation = null;
    this.name = "";
    this.mixer = null;
    this.action = null;
    this.playing = false;
    controls.play.addEventListener("click", () => this.toggle());
    controls.time.addEventListener("input", () => this.seek(Number(controls.time.value)));
    controls.speed.addEventListener("change", () => {
      if (this.mixer) this.mixer.timeScale = Number(controls.speed.value);
    });
  }

  /// Opens a take (its name and bytes) and plays it from the start.
  async open(name, bytes) {
    this.animation = await loadVrma(bytes);
    this.name = name;
    this.bind();
    this.playing = true;
    this.show();
  }

  /// Plays on `avatar` (an avatar.js `Avatar`) from now on.
  setAvatar(avatar) {
    this.avatar = avatar;
    this.bind();
  }

  /// Makes the clip for the current avatar, keeping the time.
  bind() {
    const time = this.action ? this.action.time : 0;
    if (this.mixer) this.mixer.stopAllAction();
    this.mixer = null;
    this.action = null;
    if (!this.avatar || !this.animation) return;
    const vrm = this.avatar.vrm;
    if (vrm.lookAt && !vrm.scene.children.some((o) => o instanceof VRMLookAtQuaternionProxy)) {
      const proxy = new VRMLookAtQuaternionProxy(vrm.lookAt);
      proxy.name = "VRMLookAtQuaternionProxy";
      vrm.scene.add(proxy);
    }
    const clip = createVRMAnimationClip(this.animation, vrm);
    this.mixer = new THREE.AnimationMixer(vrm.scene);
    this.mixer.timeScale = Number(this.controls.speed.value);
    this.action = this.mixer.clipAction(clip);
    this.action.play();
    this.action.time = time;
    this.mixer.update(0);
    this.controls.time.max = String(this.animation.duration);
  }

  /// Stops and forgets the take; the avatar is hidden.
  close() {
    if (this.mixer) this.mixer.stopAllAction();
    this.mixer = null;
    this.action = null;
    this.animation = null;
    this.name = "";
    this.playing = false;
    this.show();
  }

  get isOpen() {
    return this.action !== null;
  }

  toggle() {
    this.playing = !this.playing;
    this.show();
  }

  /// Goes to `t` seconds into the take (paused or playing).
  seek(t) {
    if (!this.action) return;
    this.action.time = Math.max(0, Math.min(t, this.animation.duration));
    this.mixer.update(0);
    this.avatar.update(0);
  }

  /// Advances by `dt` seconds of page time (times the speed) when playing.
  tick(dt) {
    if (!this.action) return;
    this.mixer.update(this.playing ? dt : 0);
    this.avatar.update(dt);
    if (this.playing) this.controls.time.value = String(this.action.time);
  }

  show() {
    const c = this.controls;
    c.bar.hidden = !this.animation;
    c.play.textContent = this.playing ? "Pause" : "Play";
    c.label.textContent = this.name;
  }

  /// The normalized rotation of every bone the avatar has, now: name → [x, y, z, w].
  rotations() {
    const out = {};
    const humanoid = this.avatar.vrm.humanoid;
    for (const name of Object.keys(humanoid.humanBones)) {
      const node = humanoid.getNormalizedBoneNode(name);
      if (node) out[name] = node.quaternion.toArray();
    }
    return out;
  }
}
