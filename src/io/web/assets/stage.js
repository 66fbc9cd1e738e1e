// The 3D stage the avatars stand on: a three.js WebGL canvas under the 2D canvas
// the stick figures and labels are drawn on (scene.js). It takes its camera from
// that canvas's orbit each frame, so both show the same view: +Y up, metres,
// characters facing +Z.

import * as THREE from "three";

const DEG = Math.PI / 180;

/// Whether WebGL here is drawn by the CPU (SwiftShader, llvmpipe), as far as the
/// browser says.
function isSoftware() {
  const gl = document.createElement("canvas").getContext("webgl2");
  const info = gl && gl.getExtension("WEBGL_debug_renderer_info");
  const name = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : "";
  if (gl) gl.getExtension("WEBGL_lose_context")?.loseContext();
  return /swiftshader|llvmpipe|softpipe|software/i.test(name);
}

export class Stage {
  /// Throws when the browser has no WebGL.
  constructor(canvas) {
    this.canvas = canvas;
    // Smoothed edges cost a software renderer four times the pixels: kept for GPUs.
    this.software = isSoftware();
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: !this.software });
    this.renderer.setPixelRatio(1);
    this.background = new THREE.Color("#15181d");
    this.renderer.setClearColor(this.background, 1);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(50, 1, 0.05, 200);
    const hemisphere = new THREE.HemisphereLight(0xffffff, 0x444a55, 1.6);
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(1.5, 3, 2.5);
    this.scene.add(hemisphere, sun);
    // A 10 m floor grid, 0.5 m squares, with the +X (red) and +Z (blue) axes.
    const grid = new THREE.GridHelper(10, 20, 0x3b4250, 0x262b33);
    const axes = new THREE.LineSegments(
      new THREE.BufferGeometry().setFromPoints([
        new THREE.Vector3(0, 0.001, 0), new THREE.Vector3(0.5, 0.001, 0),
        new THREE.Vector3(0, 0.001, 0), new THREE.Vector3(0, 0.001, 0.5),
      ]).setAttribute("color", new THREE.Float32BufferAttribute([
        0.75, 0.31, 0.3, 0.75, 0.31, 0.3, 0.31, 0.51, 0.74, 0.31, 0.51, 0.74,
      ], 3)),
      new THREE.LineBasicMaterial({ vertexColors: true }),
    );
    this.scene.add(grid, axes);
  }

  /// Adds `object` to the stage in a group of its own (moved and hidden as one).
  place(object) {
    const group = new THREE.Group();
    group.add(object);
    this.scene.add(group);
    return group;
  }

  remove(group) {
    this.scene.remove(group);
  }

  /// Draws the scene as `view` (a scene.js `Scene` after its `begin`) sees it.
  render(view) {
    const w = view.width, h = view.height;
    const c = this.canvas;
    if (c.width !== w || c.height !== h) this.renderer.setSize(w, h, false);
    const camera = this.camera;
    camera.aspect = w / h;
    // scene.js's focal length: half the height over tan(half the vertical field).
    camera.fov = 2 * Math.atan((0.5 * h) / view.focal) / DEG;
    camera.position.set(view.eye[0], view.eye[1], view.eye[2]);
    camera.up.set(0, 1, 0);
    camera.lookAt(view.target[0], view.target[1], view.target[2]);
    camera.updateProjectionMatrix();
    this.renderer.render(this.scene, camera);
  }

  /// Pixels of the last frame (RGBA, rows from the bottom) in a box of device
  /// pixels, read back at once (call right after `render`, in the same task).
  readPixels(x, y, width, height) {
    const gl = this.renderer.getContext();
    const out = new Uint8Array(width * height * 4);
    gl.readPixels(x, this.canvas.height - y - height, width, height, gl.RGBA, gl.UNSIGNED_BYTE, out);
    return out;
  }
}
