// The live viewer: every performer's pose as a skeleton on the bridge's avatar,
// the performers' state, recording and calibration controls, the recordings.
// Poses arrive in the binary form (docs/websocket.md) and are decoded into one
// slot per performer; the canvas draws the newest of each once per display frame.

import { Connection, getJson, withToken } from "./bridge.js";
import { BONES, Pose, Rig, decodeBinaryPose } from "./pose.js";
import { Scene } from "./scene.js";

const REQUIRED = new Set(["hips", "spine", "head", "leftUpperLeg", "leftLowerLeg", "leftFoot",
  "rightUpperLeg", "rightLowerLeg", "rightFoot", "leftUpperArm", "leftLowerArm", "leftHand",
  "rightUpperArm", "rightLowerArm", "rightHand"]);
const COLORS = ["#f2b84b", "#5bc0eb", "#9bc53d", "#e55934", "#c879ff", "#fde74c", "#4dd0a8",
  "#ff8fab", "#8fa7ff", "#ffb86b", "#7ee081", "#ff6b6b", "#6bd5ff", "#d4a5ff", "#f7d794", "#a0e7e5"];

const $ = (id) => document.getElementById(id);

/// Everything the page knows about one performer.
class Performer {
  constructor(name, index) {
    this.name = name;
    this.color = COLORS[index % COLORS.length];
    this.pose = new Pose(); // newest received
    this.positions = new Float32Array(BONES.length * 3);
    this.shown = new Uint8Array(BONES.length);
    this.received = 0;
    this.gaps = 0; // poses this page never got (seq jumps)
    this.lastSeq = -1;
    this.drawnSeq = -1;
    this.receivedAt = 0;
    this.rate = 0;
    this.rateCount = 0;
    this.info = null; // from listPerformers
    this.row = null;
    this.source = null; // the newest `source` message, when asked for
    this.sourcePositions = new Float32Array(0);
    this.sourceParents = new Int32Array(0);
    this.sourceShown = new Uint8Array(0);
  }
}

/// Counters the page keeps about itself (read by the tests, shown at the bottom).
const stats = {
  received: 0, // poses decoded
  rendered: 0, // display frames drawn
  posesDrawn: 0, // newest poses that reached the screen
  skipped: 0, // poses replaced by a newer one before a frame drew them
  decodeErrors: 0,
  maxDelayMs: 0, // receive → draw, worst
  sumDelayMs: 0,
};

const performers = new Map();
const scratch = new Pose();
let rig = null;
let scene = null;
let connection = null;
let hovered = null;
let bridgeStatus = null;

function performer(name) {
  let p = performers.get(name);
  if (!p) {
    p = new Performer(name, performers.size);
    performers.set(name, p);
    renderPanel();
  }
  return p;
}

function onPose(data) {
  try {
    decodeBinaryPose(data, scratch);
  } catch (e) {
    stats.decodeErrors++;
    return;
  }
  const p = performer(scratch.performer);
  if (p.lastSeq >= 0 && scratch.seq > p.lastSeq + 1) p.gaps += scratch.seq - p.lastSeq - 1;
  if (p.drawnSeq !== p.pose.seq && p.received > 0) stats.skipped++;
  p.lastSeq = scratch.seq;
  p.pose.copyFrom(scratch);
  p.received++;
  p.rateCount++;
  p.receivedAt = performance.now();
  stats.received++;
}

function onSource(message) {
  const p = performer(message.performer);
  p.source = message;
}

/// Where a skeleton source is drawn: beside its performer, a metre to the
/// avatar's right (it would overlap the avatar otherwise).
const SOURCE_OFFSET = -1.0;

function drawSource(p, dx) {
  const s = p.source;
  if (!s || !$("sources").checked) return;
  if (s.skeleton === null) {
    // Tracked devices sit where they are: on the avatar's head and hands when the
    // calibration is right.
    scene.points(s.points.map((t) => ({
      position: [t.position[0] + dx, t.position[1], t.position[2]],
      label: `${p.name} · ${t.name} (device)`,
    })), "#ffffff");
    return;
  }
  const n = s.points.length;
  if (p.sourcePositions.length !== 3 * n) {
    p.sourcePositions = new Float32Array(3 * n);
    p.sourceParents = new Int32Array(n);
    p.sourceShown = new Uint8Array(n).fill(1);
  }
  s.points.forEach((point, i) => {
    p.sourcePositions[3 * i] = point.position[0] + dx + SOURCE_OFFSET;
    p.sourcePositions[3 * i + 1] = point.position[1];
    p.sourcePositions[3 * i + 2] = point.position[2];
    p.sourceParents[i] = point.parent === null ? -1 : point.parent;
  });
  scene.skeleton(p.sourcePositions, p.sourceParents, p.sourceShown, "#8a93a3",
    (i) => `${p.name} · ${s.points[i].name} (${s.skeleton})`);
}

function draw() {
  requestAnimationFrame(draw);
  if (!rig) return;
  const now = performance.now();
  scene.begin();
  scene.grid();
  const spread = $("spread").checked;
  let i = 0;
  for (const p of performers.values()) {
    if (p.received === 0) continue;
    rig.positions(p.pose, p.positions);
    const dx = spread ? (i - (performers.size - 1) / 2) * 2.0 : 0;
    for (let b = 0; b < BONES.length; b++) p.positions[3 * b] += dx;
    drawSource(p, dx);
    for (let b = 0; b < BONES.length; b++) p.shown[b] = p.pose.present[b] || REQUIRED.has(BONES[b]) ? 1 : 0;
    scene.skeleton(p.positions, rig.parents, p.shown, p.color, (b) => `${p.name} · ${BONES[b]}`);
    if (p.drawnSeq !== p.pose.seq) {
      p.drawnSeq = p.pose.seq;
      stats.posesDrawn++;
      const delay = now - p.receivedAt;
      stats.sumDelayMs += delay;
      if (delay > stats.maxDelayMs) stats.maxDelayMs = delay;
    }
    i++;
  }
  hovered = scene.finish();
  stats.rendered++;
}

// --- the side panel ---------------------------------------------------------

function button(text, onClick, title = "") {
  const b = document.createElement("button");
  b.textContent = text;
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

async function act(what, request) {
  try {
    const reply = await connection.request(request);
    note(`${what}: ${describe(reply)}`);
    refreshPerformers();
    refreshRecordings();
  } catch (e) {
    note(`${what}: ${e.message}`, true);
  }
}

function describe(reply) {
  if (reply.recordings) {
    return reply.recordings.map((r) => r.frames === undefined ? r.file : `${r.file} (${r.frames} frames)`).join(", ") || "nothing";
  }
  return reply.type;
}

function note(text, error = false) {
  const n = $("note");
  n.textContent = text;
  n.className = error ? "error" : "";
}

function renderPanel() {
  const list = $("performers");
  for (const p of performers.values()) {
    if (p.row) continue;
    const row = document.createElement("div");
    row.className = "performer";
    row.dataset.name = p.name;
    const head = document.createElement("div");
    head.className = "head";
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = p.color;
    const name = document.createElement("strong");
    name.textContent = p.name;
    head.append(swatch, name);
    const facts = document.createElement("div");
    facts.className = "facts";
    const actions = document.createElement("div");
    actions.className = "actions";
    p.calibrate = button("Calibrate", () => act(`calibrate ${p.name}`, { type: "calibrate", performer: p.name }),
      "The performer stands in a T-pose now (tracker sources)");
    p.calibrate.hidden = true;
    actions.append(
      button("Record", () => act(`record ${p.name}`, { type: "startRecording", performer: p.name })),
      button("Stop", () => act(`stop ${p.name}`, { type: "stopRecording", performer: p.name })),
      p.calibrate,
    );
    row.append(head, facts, actions);
    list.append(row);
    p.row = row;
    p.facts = facts;
  }
}

function updateFacts() {
  const latency = bridgeStatus && bridgeStatus.outputs.find((o) => o.latency && o.name.startsWith("websocket"));
  for (const p of performers.values()) {
    if (!p.facts) continue;
    const info = p.info;
    const parts = [];
    if (info) {
      parts.push(info.skeleton ? `${info.source} (${info.skeleton})` : info.source);
      if (info.sinceLastFrame > 2) parts.push(`silent ${info.sinceLastFrame.toFixed(0)} s`);
    } else {
      parts.push("gone");
    }
    parts.push(`${p.rate.toFixed(0)} Hz`);
    parts.push(`missed ${p.gaps}`);
    if (latency) parts.push(`latency p50 ${(latency.latency.p50Us / 1000).toFixed(1)} ms p99 ${(latency.latency.p99Us / 1000).toFixed(1)} ms`);
    if (info && info.source === "trackers") parts.push(info.calibrated ? "calibrated" : "not calibrated");
    if (info && info.recording) parts.push("● recording");
    p.facts.textContent = parts.join(" · ");
    p.row.classList.toggle("recording", Boolean(info && info.recording));
    p.calibrate.hidden = !(info && info.source === "trackers");
    p.row.classList.toggle("gone", !info);
  }
}

async function refreshPerformers() {
  if (!connection.isOpen) return;
  try {
    const reply = await connection.request({ type: "listPerformers" });
    const listed = new Set();
    for (const info of reply.performers) {
      performer(info.name).info = info;
      listed.add(info.name);
    }
    for (const p of performers.values()) if (!listed.has(p.name)) p.info = null;
    const status = await connection.request({ type: "status" });
    bridgeStatus = status.status;
    const outputs = bridgeStatus.outputs.filter((o) => o.name.endsWith("clients"));
    const drops = bridgeStatus.outputs.reduce((sum, o) => sum + o.drops, 0);
    $("bridge").textContent = `solver ${bridgeStatus.solver.frames} frames · ${bridgeStatus.solver.performers} performers · output drops ${drops}` +
      (outputs.length ? ` · sent to clients ${outputs[0].packets}` : "");
    updateFacts();
  } catch (e) {
    // The connection went; it reconnects by itself.
  }
}

async function refreshRecordings() {
  try {
    const { recordings } = await getJson("/api/recordings");
    const list = $("recordings");
    list.replaceChildren(...recordings.map((r) => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = withToken(`/recordings/${encodeURIComponent(r.file)}`);
      a.download = r.file;
      a.textContent = r.file;
      const size = document.createElement("span");
      size.textContent = ` ${(r.bytes / 1024).toFixed(0)} KiB · ${new Date(r.modified * 1000).toLocaleTimeString()}`;
      li.append(a, size);
      return li;
    }));
    if (recordings.length === 0) list.innerHTML = "<li class=none>none yet</li>";
  } catch (e) {
    note(e.message, true);
  }
}

function measureRates() {
  for (const p of performers.values()) {
    p.rate = p.rateCount;
    p.rateCount = 0;
  }
  const s = stats;
  $("page").textContent = `page: received ${s.received} poses · drew ${s.rendered} frames · ` +
    `newest drawn ${s.posesDrawn} · replaced before drawn ${s.skipped} · ` +
    `receive→draw mean ${(s.sumDelayMs / Math.max(1, s.posesDrawn)).toFixed(1)} ms`;
}

async function main() {
  scene = new Scene($("view"));
  $("recordAll").addEventListener("click", () => act("record all", { type: "startRecording" }));
  $("stopAll").addEventListener("click", () => act("stop all", { type: "stopRecording" }));
  const params = () => ($("sources").checked ? { format: "binary", sources: "true" } : { format: "binary" });
  $("sources").addEventListener("change", () => connection.reopen(params()));
  connection = new Connection(params(), {
    onPose,
    onSource,
    onState: (s) => ($("connection").textContent = s),
    onOpen: () => refreshPerformers(),
  });
  requestAnimationFrame(draw);
  try {
    rig = new Rig(await getJson("/api/rig"));
  } catch (e) {
    note(`the avatar's rig: ${e.message}`, true);
  }
  refreshRecordings();
  setInterval(refreshPerformers, 1000);
  setInterval(refreshRecordings, 3000);
  setInterval(measureRates, 1000);
}

// For tests and the curious (the browser console): the page's own counters.
window.viewer = {
  stats,
  performers,
  get hovered() {
    return hovered;
  },
  /// A performer's joint position as last drawn, metres.
  joint(name, bone) {
    const p = performers.get(name);
    const b = BONES.indexOf(bone);
    return p && b >= 0 ? Array.from(p.positions.subarray(3 * b, 3 * b + 3)) : null;
  },
  /// Where a performer's joint was last drawn, in CSS pixels of the canvas.
  screen(name, bone) {
    const at = this.joint(name, bone);
    const out = [0, 0];
    if (!at || !scene.project(at[0], at[1], at[2], out, 0)) return null;
    return [out[0] / scene.ratio, out[1] / scene.ratio];
  },
  refreshRecordings,
  /// The bridge's status report, asked now.
  async status() {
    return (await connection.request({ type: "status" })).status;
  },
};

main();
