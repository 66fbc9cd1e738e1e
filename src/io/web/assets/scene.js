// A 3D view on a 2D canvas: a perspective camera orbiting a target (drag to
// turn, shift-drag or right-drag to pan, wheel to zoom), a floor grid, and
// skeletons drawn as lines between joints. The bridge's axes: +Y up, metres,
// characters face +Z. A canvas is enough for stick figures and needs no library;
// as an overlay (`overlay: true`) it is transparent, over the avatars' WebGL
// canvas (stage.js), which takes its camera from here.

const DEG = Math.PI / 180;

export class Scene {
  constructor(canvas, { overlay = false } = {}) {
    this.canvas = canvas;
    this.overlay = overlay;
    this.ctx = canvas.getContext("2d");
    this.yaw = 20 * DEG; // camera around +Y, 0 = in front of the characters
    this.pitch = 12 * DEG;
    this.distance = 4.5;
    this.target = [0, 0.9, 0];
    this.focal = 1;
    this.width = 1;
    this.height = 1;
    // Projected joints of the last frame, for hover: x, y, label.
    this.hits = [];
    this.hover = null;
    this.listen();
  }

  listen() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("contextmenu", (e) => e.preventDefault());
    c.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener("pointerup", () => (drag = null));
    c.addEventListener("pointermove", (e) => {
      const rect = c.getBoundingClientRect();
      this.hover = { x: e.clientX - rect.left, y: e.clientY - rect.top };
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      drag.x = e.clientX;
      drag.y = e.clientY;
      if (drag.pan) {
        const s = this.distance / this.focal;
        const [rx, , rz] = this.right();
        this.target[0] -= (rx * dx) * s;
        this.target[2] -= (rz * dx) * s;
        this.target[1] += dy * s;
      } else {
        this.yaw -= dx * 0.01;
        this.pitch = Math.max(-80 * DEG, Math.min(85 * DEG, this.pitch + dy * 0.01));
      }
    });
    c.addEventListener("pointerleave", () => (this.hover = null));
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.distance = Math.max(0.5, Math.min(60, this.distance * Math.exp(e.deltaY * 0.001)));
    }, { passive: false });
  }

  right() {
    return [Math.cos(this.yaw), 0, -Math.sin(this.yaw)];
  }

  /// Sizes the canvas to its box and fixes the camera for this frame.
  begin() {
    const c = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(c.clientWidth * ratio));
    const h = Math.max(1, Math.round(c.clientHeight * ratio));
    if (c.width !== w || c.height !== h) {
      c.width = w;
      c.height = h;
    }
    this.ratio = ratio;
    this.width = w;
    this.height = h;
    this.focal = 0.5 * h / Math.tan(25 * DEG);
    const cp = Math.cos(this.pitch), sp = Math.sin(this.pitch);
    const cy = Math.cos(this.yaw), sy = Math.sin(this.yaw);
    // Camera axes: forward f (toward the target), right r, up u.
    this.f = [-sy * cp, -sp, -cy * cp];
    this.r = [cy, 0, -sy];
    this.u = [-sy * sp, cp, -cy * sp];
    this.eye = [
      this.target[0] - this.f[0] * this.distance,
      this.target[1] - this.f[1] * this.distance,
      this.target[2] - this.f[2] * this.distance,
    ];
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (this.overlay) {
      ctx.clearRect(0, 0, w, h);
    } else {
      ctx.fillStyle = "#15181d";
      ctx.fillRect(0, 0, w, h);
    }
    this.hits.length = 0;
  }

  /// Screen position of a world point into out[o], out[o+1]; false behind the eye.
  project(x, y, z, out, o) {
    const dx = x - this.eye[0], dy = y - this.eye[1], dz = z - this.eye[2];
    const depth = dx * this.f[0] + dy * this.f[1] + dz * this.f[2];
    if (depth < 0.05) return false;
    const sx = dx * this.r[0] + dy * this.r[1] + dz * this.r[2];
    const sy = dx * this.u[0] + dy * this.u[1] + dz * this.u[2];
    out[o] = this.width / 2 + (sx * this.focal) / depth;
    out[o + 1] = this.height / 2 - (sy * this.focal) / depth;
    return true;
  }

  /// A 10 m floor grid, 0.5 m squares, with the +X and +Z axes marked.
  grid() {
    const ctx = this.ctx;
    const a = [0, 0], b = [0, 0];
    ctx.lineWidth = 1;
    for (let i = -10; i <= 10; i++) {
      const t = i * 0.5;
      ctx.strokeStyle = i === 0 ? "#3b4250" : "#262b33";
      for (const [x0, z0, x1, z1] of [[t, -5, t, 5], [-5, t, 5, t]]) {
        if (this.project(x0, 0, z0, a, 0) && this.project(x1, 0, z1, b, 0)) {
          ctx.beginPath();
          ctx.moveTo(a[0], a[1]);
          ctx.lineTo(b[0], b[1]);
          ctx.stroke();
        }
      }
    }
    const o = [0, 0];
    if (this.project(0, 0, 0, o, 0)) {
      for (const [x, z, color] of [[0.5, 0, "#c0504d"], [0, 0.5, "#4f81bd"]]) {
        if (this.project(x, 0, z, a, 0)) {
          ctx.strokeStyle = color;
          ctx.lineWidth = 2 * this.ratio;
          ctx.beginPath();
          ctx.moveTo(o[0], o[1]);
          ctx.lineTo(a[0], a[1]);
          ctx.stroke();
        }
      }
    }
  }

  /// A skeleton: `positions` (3 per joint), `parents` (-1 for a root), joints
  /// with `shown[i]` false skipped; `label(i)` names a joint for hover.
  skeleton(positions, parents, shown, color, label) {
    const ctx = this.ctx;
    const n = parents.length;
    const screen = this.screen && this.screen.length >= 2 * n ? this.screen : (this.screen = new Float32Array(2 * n));
    const visible = this.visible && this.visible.length >= n ? this.visible : (this.visible = new Uint8Array(n));
    for (let i = 0; i < n; i++) {
      visible[i] = shown[i] && this.project(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2], screen, 2 * i) ? 1 : 0;
    }
    ctx.strokeStyle = color;
    ctx.lineWidth = 3 * this.ratio;
    ctx.lineCap = "round";
    ctx.beginPath();
    for (let i = 0; i < n; i++) {
      let p = parents[i];
      while (p >= 0 && !shown[p]) p = parents[p];
      if (p < 0 || !visible[i] || !visible[p]) continue;
      ctx.moveTo(screen[2 * p], screen[2 * p + 1]);
      ctx.lineTo(screen[2 * i], screen[2 * i + 1]);
    }
    ctx.stroke();
    ctx.fillStyle = color;
    for (let i = 0; i < n; i++) {
      if (!visible[i]) continue;
      ctx.beginPath();
      ctx.arc(screen[2 * i], screen[2 * i + 1], 2.5 * this.ratio, 0, 2 * Math.PI);
      ctx.fill();
      this.hits.push({ x: screen[2 * i], y: screen[2 * i + 1], label, index: i });
    }
  }

  /// Points (trackers) as squares, each labelled.
  points(list, color) {
    const ctx = this.ctx;
    const s = [0, 0];
    ctx.fillStyle = color;
    for (const { position, label } of list) {
      if (!this.project(position[0], position[1], position[2], s, 0)) continue;
      ctx.fillRect(s[0] - 4 * this.ratio, s[1] - 4 * this.ratio, 8 * this.ratio, 8 * this.ratio);
      this.hits.push({ x: s[0], y: s[1], label: () => label, index: 0 });
    }
  }

  /// The name of the joint under the pointer, if any.
  finish() {
    if (!this.hover) return null;
    const x = this.hover.x * this.ratio, y = this.hover.y * this.ratio;
    let best = null, bestD = (10 * this.ratio) ** 2;
    for (const h of this.hits) {
      const d = (h.x - x) ** 2 + (h.y - y) ** 2;
      if (d < bestD) {
        bestD = d;
        best = h;
      }
    }
    if (!best) return null;
    const text = best.label(best.index);
    const ctx = this.ctx;
    ctx.font = `${12 * this.ratio}px system-ui, sans-serif`;
    const w = ctx.measureText(text).width + 10 * this.ratio;
    ctx.fillStyle = "rgba(0,0,0,0.75)";
    ctx.fillRect(best.x + 8 * this.ratio, best.y - 20 * this.ratio, w, 18 * this.ratio);
    ctx.fillStyle = "#fff";
    ctx.fillText(text, best.x + 13 * this.ratio, best.y - 7 * this.ratio);
    return text;
  }
}
