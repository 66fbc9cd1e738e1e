// The WebXR sender: an immersive-vr session on local-floor; every frame the
// headset and the controllers it sees (grip poses; the wrist joint when hands are
// tracked instead) go to the bridge as a `trackers` message (docs/websocket.md)
// at the device's frame rate, with the 25 joints of each tracked hand, which
// bend the avatar's fingers. The table shows what was last sent.
//
// WebXR's local-floor space is right-handed, +Y up, metres, floor at y = 0, the
// user facing -Z at the start; the bridge's characters face +Z. So positions and
// rotations turn half a turn about +Y: (x, y, z) → (-x, y, -z), and a rotation
// (x, y, z, w) → (-x, y, -z, w) (the same turn applied to the device's frame).

import { Connection, describeCalibrated, withToken } from "./bridge.js";

const $ = (id) => document.getElementById(id);
const DEVICES = ["head", "leftHand", "rightHand"];

const state = {
  session: null,
  space: null,
  gl: null,
  sent: 0,
  skipped: 0, // frames without the headset's pose
  handJoints: { left: 0, right: 0 },
  last: {},
  rateCount: 0,
  rate: 0,
};

const connection = new Connection({ poses: "none" }, {
  onState: (s) => ($("connection").textContent = s),
});

function toBridge(pose) {
  const p = pose.transform.position;
  const q = pose.transform.orientation;
  return {
    position: [-p.x, p.y, -p.z],
    rotation: [-q.x, q.y, -q.z, q.w],
  };
}

/// A tracked hand's 25 joints (WebXR's order: wrist, thumb, index, middle, ring,
/// little), in the bridge's axes; null unless every joint is tracked.
function handJoints(frame, source) {
  if (!source.hand || !frame.getJointPose) return null;
  const joints = [];
  for (const joint of source.hand.values()) {
    const pose = frame.getJointPose(joint, state.space);
    if (!pose) break;
    joints.push(toBridge(pose).position);
  }
  state.handJoints[source.handedness] = joints.length;
  return joints.length === 25 ? joints : null;
}

/// The pose of one hand: the controller's grip, else the tracked wrist.
function handPose(frame, source) {
  if (source.gripSpace) {
    const pose = frame.getPose(source.gripSpace, state.space);
    if (pose) return pose;
  }
  if (source.hand && frame.getJointPose) {
    const wrist = source.hand.get("wrist");
    return wrist ? frame.getJointPose(wrist, state.space) : null;
  }
  return null;
}

function onFrame(time, frame) {
  const session = frame.session;
  session.requestAnimationFrame(onFrame);
  const gl = state.gl;
  const layer = session.renderState.baseLayer;
  if (gl && layer) {
    gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
    gl.clearColor(0.08, 0.09, 0.11, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
  }
  const viewer = frame.getViewerPose(state.space);
  const message = { type: "trackers", performer: $("performer").value, time: time / 1000 };
  if (viewer) message.head = toBridge(viewer);
  for (const source of session.inputSources) {
    const pose = handPose(frame, source);
    if (!pose) continue;
    const joints = handJoints(frame, source);
    if (source.handedness === "left") {
      message.leftHand = toBridge(pose);
      if (joints) message.leftHandJoints = joints;
    }
    if (source.handedness === "right") {
      message.rightHand = toBridge(pose);
      if (joints) message.rightHandJoints = joints;
    }
  }
  // A hand the session does not see is left out: the bridge holds it for half a
  // second, then that arm hangs until it is seen again.
  if (message.head && connection.send(message)) {
    state.sent++;
    state.rateCount++;
    state.last = message;
  } else {
    state.skipped++;
  }
}

async function enter() {
  const button = $("enter");
  try {
    const session = await navigator.xr.requestSession("immersive-vr", {
      requiredFeatures: ["local-floor"],
      optionalFeatures: ["hand-tracking"],
    });
    state.session = session;
    const canvas = document.createElement("canvas");
    const gl = canvas.getContext("webgl", { xrCompatible: true });
    if (!gl) throw new Error("this browser gives no WebGL context for XR");
    state.gl = gl;
    session.updateRenderState({ baseLayer: new XRWebGLLayer(session, gl) });
    state.space = await session.requestReferenceSpace("local-floor");
    session.addEventListener("end", () => {
      state.session = null;
      button.textContent = "Enter VR";
      $("xrState").textContent = "session ended";
    });
    session.addEventListener("select", () => {
      if ($("triggerCalibrates").checked) calibrate();
    });
    session.requestAnimationFrame(onFrame);
    button.textContent = "Exit VR";
    $("xrState").textContent = "sending";
  } catch (e) {
    $("xrState").textContent = `could not start: ${e.message}`;
    $("xrState").className = "error";
  }
}

/// The performer stands in a T-pose now: the bridge measures it.
async function calibrate() {
  try {
    const reply = await connection.request({ type: "calibrate", performer: $("performer").value });
    $("xrState").textContent = describeCalibrated(reply);
  } catch (e) {
    $("xrState").textContent = `calibration: ${e.message}`;
  }
}

function fmt(v) {
  return v.map((x) => x.toFixed(3).padStart(7)).join(" ");
}

function show() {
  state.rate = state.rateCount;
  state.rateCount = 0;
  const rows = DEVICES.map((d) => {
    const pose = state.last[d];
    return `<tr><td>${d}</td><td>${pose ? fmt(pose.position) : "—"}</td><td>${pose ? fmt(pose.rotation) : "—"}</td></tr>`;
  });
  $("devices").innerHTML = rows.join("");
  $("counts").textContent = `sent ${state.sent} frames · ${state.rate} Hz · skipped ${state.skipped} (no headset pose)` +
    ` · hand joints tracked: left ${state.handJoints.left}, right ${state.handJoints.right}`;
}

async function main() {
  $("viewerLink").href = withToken("/");
  const button = $("enter");
  const secure = window.isSecureContext;
  $("secure").textContent = secure
    ? "This page is a secure context: WebXR may start."
    : "This page is not a secure context (not HTTPS and not localhost): browsers refuse WebXR here.";
  if (!navigator.xr) {
    $("xrState").textContent = "this browser has no WebXR";
    button.disabled = true;
  } else if (!(await navigator.xr.isSessionSupported("immersive-vr"))) {
    $("xrState").textContent = "no immersive-vr device here";
    button.disabled = true;
  } else {
    $("xrState").textContent = "ready";
  }
  button.addEventListener("click", () => (state.session ? state.session.end() : enter()));
  $("calibrate").addEventListener("click", calibrate);
  setInterval(show, 1000);
}

window.xrSender = state;
main();
