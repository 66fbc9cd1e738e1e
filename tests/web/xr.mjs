// The WebXR sender at `/xr` with a mocked `navigator.xr` (a headset standing
// still and two controllers, 72 frames a second): the page sends tracker frames,
// the bridge solves a body, and the viewer at `/` shows the avatar's left hand
// rise when the mocked left controller does, and hang once the session loses it.
// Calibrating from either page says where the calibration was saved.
// Usage: node xr.mjs --url http://127.0.0.1:PORT/ --out DIR
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out } = args();

// Runs in the page before its scripts: a WebXR device in WebXR's own space
// (local-floor, the user facing -Z, their left toward -X).
function mockXr() {
  window.__xrPhase = 0; // 0: hands at the sides; 1: left hand above the head;
  // 2: the left hand tracked as a hand, its index finger bent down after the knuckle;
  // 3: the left hand no longer seen (the session has only the right controller)
  window.__xrFrames = 0;
  const pose = (x, y, z, q = [0, 0, 0, 1]) => ({
    transform: { position: { x, y, z, w: 1 }, orientation: { x: q[0], y: q[1], z: q[2], w: q[3] } },
  });
  const left = { handedness: "left", gripSpace: { device: "left" }, targetRaySpace: {}, profiles: [] };
  // A left hand (WebXR space: pointing to -X, the user's left) with 25 joints in
  // WebXR's order: wrist, then 4 thumb joints, then 5 per finger.
  const wrist = [-0.2, 2.0, -0.05];
  const handJoint = (i) => {
    if (i === 0) return wrist;
    const finger = i < 5 ? 0 : Math.floor((i - 5) / 5) + 1;
    const k = i < 5 ? i - 1 : (i - 5) % 5;
    const z = -0.03 + 0.015 * finger;
    if (finger === 1 && k >= 3) {
      // Index: metacarpal, proximal, intermediate straight out; distal and tip down.
      return [wrist[0] - 0.12, wrist[1] - 0.03 * (k - 2), wrist[2] + z];
    }
    return [wrist[0] - 0.03 - 0.03 * k, wrist[1], wrist[2] + z];
  };
  const handSpaces = new Map(Array.from({ length: 25 }, (_, i) => [`joint-${i}`, { joint: i }]));
  const right = { handedness: "right", gripSpace: { device: "right" }, targetRaySpace: {}, profiles: [] };
  class Session extends EventTarget {
    constructor() {
      super();
      this.inputSources = [left, right];
      this.renderState = {};
      this.ended = false;
    }
    updateRenderState(state) { this.renderState = { ...this.renderState, ...state }; }
    async requestReferenceSpace(type) {
      if (type !== "local-floor") throw new Error("only local-floor in this mock");
      return { type };
    }
    requestAnimationFrame(callback) {
      return setTimeout(() => {
        if (this.ended) return;
        const t = performance.now();
        window.__xrFrames++;
        this.inputSources = window.__xrPhase === 3 ? [right] : [left, right];
        const up = window.__xrPhase >= 1;
        left.hand = window.__xrPhase === 2 ? handSpaces : undefined;
        const frame = {
          session: this,
          predictedDisplayTime: t,
          getViewerPose: () => pose(0, 1.6, 0),
          getJointPose: (space) => pose(...handJoint(space.joint)),
          getPose: (space) => space.device === "left"
            ? (up ? pose(-0.2, 2.0, -0.05) : pose(-0.22, 0.85, -0.05))
            : pose(0.22, 0.85, -0.05),
        };
        callback(t, frame);
      }, 1000 / 72);
    }
    async end() {
      this.ended = true;
      this.dispatchEvent(new Event("end"));
    }
  }
  const xr = {
    isSessionSupported: async (mode) => mode === "immersive-vr",
    requestSession: async (mode, options) => {
      if (mode !== "immersive-vr") throw new Error("unsupported mode");
      window.__xrOptions = options;
      return new Session();
    },
  };
  Object.defineProperty(Navigator.prototype, "xr", { get: () => xr, configurable: true });
  window.XRWebGLLayer = class {
    constructor(session, gl) {
      this.framebuffer = null;
      this.gl = gl;
    }
  };
}

const apart = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/// Reads `read()` every 200 ms until `point` of it has moved more than `away`
/// metres from `from` (when given) and then holds still (under 0.1 mm between two
/// reads): the mocked devices' change has come through the bridge and the viewer
/// at whatever pace a busy machine allows, not after a fixed wait. Gives up after
/// a minute.
async function settled(page, read, point, { from = null, away = 0 } = {}) {
  const deadline = Date.now() + 60000;
  let last = null;
  for (;;) {
    const now = await read();
    const p = point(now);
    const moved = p !== null && (from === null || apart(p, from) > away);
    if (moved && last !== null && apart(p, last) < 1e-4) return now;
    if (Date.now() > deadline) throw new Error(`never settled: ${JSON.stringify(now)}`);
    last = moved ? p : null;
    await page.waitForTimeout(200);
  }
}

run(async () => {
  const browser = await launch();
  const xrUrl = new URL("xr", url).toString();
  const { page: xr, errors: xrErrors } = await openPage(browser, xrUrl, { init: mockXr });
  await xr.waitForFunction(() => document.getElementById("xrState").textContent === "ready", null, { timeout: 60000 });
  await xr.click("#enter");
  await xr.waitForFunction(() => window.xrSender.sent > 20, null, { timeout: 60000 });
  const { page: viewer, errors: viewerErrors } = await openPage(browser, url);
  const hand = () => viewer.evaluate(() => ({
    left: window.viewer.joint("xr", "leftHand"),
    right: window.viewer.joint("xr", "rightHand"),
    head: window.viewer.joint("xr", "head"),
  }));
  await viewer.waitForFunction(() => window.viewer.joint("xr", "leftHand") !== null, null, { timeout: 60000 });
  const down = await settled(viewer, hand, (h) => h.left);
  await viewer.screenshot({ path: `${out}/xr-viewer-down.png` });
  await xr.evaluate(() => (window.__xrPhase = 1));
  // The hand leaves where it was (by more than a centimetre) and stops.
  const up = await settled(viewer, hand, (h) => h.left, { from: down.left, away: 0.01 });
  await viewer.screenshot({ path: `${out}/xr-viewer-up.png` });
  // A tracked hand bends the avatar's fingers.
  const finger = () => viewer.evaluate(() => Object.fromEntries(
    ["leftIndexProximal", "leftIndexIntermediate", "leftIndexDistal", "leftMiddleIntermediate", "leftMiddleDistal"]
      .map((b) => [b, window.viewer.joint("xr", b)])));
  const straight = await finger();
  await xr.evaluate(() => (window.__xrPhase = 2));
  // The index fingertip's joint leaves where it was (by more than a millimetre) and stops.
  const fingers = await settled(viewer, finger, (f) => f.leftIndexDistal, { from: straight.leftIndexDistal, away: 0.001 });
  // Asked for, the viewer shows where the devices are.
  await viewer.check("#sources");
  await viewer.waitForFunction(() => {
    const p = window.viewer.performers.get("xr");
    return p && p.source && p.source.points.length >= 3;
  }, null, { timeout: 60000 });
  await viewer.waitForTimeout(300);
  const devices = await viewer.evaluate(() => window.viewer.performers.get("xr").source);
  await viewer.screenshot({ path: `${out}/xr-viewer-sources.png` });
  // The viewer's Calibrate button on the performer's row, then the /xr page's.
  await viewer.click('.performer[data-name="xr"] button:has-text("Calibrate")');
  await viewer.waitForFunction(() => document.getElementById("note").textContent.startsWith("calibrate xr: "),
    null, { timeout: 60000 });
  const calibrated = { viewer: await viewer.textContent("#note") };
  await xr.click("#calibrate");
  await xr.waitForFunction(() => document.getElementById("xrState").textContent.startsWith("calibrated"),
    null, { timeout: 60000 });
  calibrated.xr = await xr.textContent("#xrState");
  // The left hand lost: the page goes on sending, and the arm comes down to hang.
  const held = await settled(viewer, hand, (h) => h.right);
  await xr.evaluate(() => (window.__xrPhase = 3));
  const hung = await settled(viewer, hand, (h) => h.left, { from: held.left, away: 0.3 });
  await viewer.screenshot({ path: `${out}/xr-viewer-hung.png` });
  await xr.waitForTimeout(1100); // the table refreshes each second
  await xr.screenshot({ path: `${out}/xr-page.png` });
  const sent = await xr.evaluate(() => ({
    sent: window.xrSender.sent,
    skipped: window.xrSender.skipped,
    frames: window.__xrFrames,
    options: window.__xrOptions,
    table: document.getElementById("devices").textContent,
  }));
  await browser.close();
  return { down, up, fingers, held, hung, sent, devices, calibrated, errors: [...xrErrors, ...viewerErrors] };
});
