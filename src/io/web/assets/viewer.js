// The live viewer: every performer on an avatar (its configured .vrm, the
// bridge's mannequin, or one dropped on the page), the stick figure on the
// bridge's rig as a toggle, the performers' state, recording and calibration
// controls, the recordings, and a player for them. Poses arrive in the binary
// form (docs/websocket.md) and are decoded into one slot per performer; each
// display frame poses every avatar with the newest pose of its performer and
// draws once: poses that came in between are replaced, never queued. A performer
// the bridge no longer lists (gone) leaves the view until it is listed again;
// while the page has no connection to the bridge, the rows say they are not live.

import { Connection, describeCalibrated, getFile, getJson, withToken } from "./bridge.js";
import { BONES, PRESETS, Pose, Rig, decodeBinaryPose } from "./pose.js";
import { Scene } from "./scene.js";
import { Stage } from "./stage.js";
import { Avatar, loadVrm } from "./avatar.js";
import { Player } from "./player.js";

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
    this.gone = false; // the bridge's list left it out: not drawn until listed again
    this.inView = false; // drawn in the last display frame
    this.row = null;
    this.source = null; // the newest `source` message, when asked for
    this.sourcePositions = new Float32Array(0);
    this.sourceParents = new Int32Array(0);
    this.sourceShown = new Uint8Array(0);
    this.avatar = null; // avatar.js Avatar, once loaded
    this.group = null; // where the avatar stands on the stage
    this.avatarName = ""; // the .vrm's name, shown in the panel
    this.avatarFile = null; // a .vrm dropped on this performer's row: { name, bytes }
    this.avatarLoads = 0; // loads started, so a late one does not win over a newer
    this.drawn = new Pose(); // the pose the avatar shows
    this.posed = false; // whether the avatar shows a pose yet
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
  sumPoseMs: 0, // posing avatars and stick figures, all frames
  sumRenderMs: 0, // the stage's WebGL draw, all frames (to the GPU's queue)
};

const performers = new Map();
const scratch = new Pose();
let rig = null;
let scene = null;
let stage = null; // null without WebGL: stick figures only
let player = null;
let playerAvatarLoads = 0;
let dropped = null; // a .vrm dropped on the view, for everyone: { name, bytes }
let lastFrame = 0;
let connection = null;
let hovered = null;
let bridgeStatus = null;
let noteClearsOnConnect = false; // the note is an error from losing the bridge

function performer(name) {
  let p = performers.get(name);
  if (!p) {
    p = new Performer(name, performers.size);
    performers.set(name, p);
    renderPanel();
    assignAvatar(p);
  }
  return p;
}

// --- avatars ----------------------------------------------------------------

/// The .vrm a performer is drawn on: one dropped on its row, else one dropped on
/// the view, else what the bridge serves for it (its configured avatar, or the
/// mannequin).
function avatarFileFor(p) {
  if (p.avatarFile) return Promise.resolve(p.avatarFile);
  if (dropped) return Promise.resolve(dropped);
  return getFile(`/api/avatar/${encodeURIComponent(p.name)}`);
}

/// (Re)loads a performer's avatar; the stick figure stands in until it is ready.
async function assignAvatar(p) {
  if (!stage) return;
  const load = ++p.avatarLoads;
  try {
    const file = await avatarFileFor(p);
    if (!file.bytes) {
      // A skeleton without a mesh: the stick figure is what there is to draw.
      if (load !== p.avatarLoads) return;
      p.avatarName = `${file.name} (stick figure)`;
      updateFacts();
      note(`${p.name}'s avatar ${file.name}: a skeleton without a mesh: stick figure`);
      return;
    }
    const vrm = await loadVrm(file.bytes);
    if (load !== p.avatarLoads) {
      new Avatar(vrm).dispose();
      return;
    }
    if (p.group) {
      p.avatar.dispose();
      stage.remove(p.group);
    }
    p.avatar = new Avatar(vrm);
    p.group = stage.place(vrm.scene);
    p.avatarName = file.name;
    p.drawnSeq = -1;
    p.posed = false;
    updateFacts();
  } catch (e) {
    note(`${p.name}'s avatar: ${e.message}`, true);
  }
}

/// (Re)loads the player's avatar: the one dropped on the view, else the bridge's
/// own (the configured avatar, or the mannequin).
async function assignPlayerAvatar() {
  if (!stage) return;
  const load = ++playerAvatarLoads;
  try {
    const file = dropped || await getFile("/api/avatar");
    // A skeleton without a mesh: the take plays on the mannequin.
    const bytes = file.bytes || (await getFile("/avatars/mannequin.vrm")).bytes;
    const vrm = await loadVrm(bytes);
    if (load !== playerAvatarLoads) return;
    if (player.avatar) {
      player.avatar.dispose();
      stage.remove(player.group);
    }
    player.group = stage.place(vrm.scene);
    player.setAvatar(new Avatar(vrm));
  } catch (e) {
    note(`the player's avatar: ${e.message}`, true);
  }
}

/// A .vrm dropped on the page: checked by loading it once, then every performer
/// (dropped on the view) or one (dropped on its row) is drawn on it. It stays in
/// this page; nothing is sent to the bridge.
async function onDrop(event) {
  event.preventDefault();
  document.body.classList.remove("dragging");
  const file = event.dataTransfer && event.dataTransfer.files[0];
  if (!file) return;
  if (!stage) {
    note("this browser has no WebGL: avatars cannot be drawn", true);
    return;
  }
  const bytes = await file.arrayBuffer();
  try {
    new Avatar(await loadVrm(bytes)).dispose();
  } catch (e) {
    note(`${file.name}: ${e.message}`, true);
    return;
  }
  const row = event.target.closest && event.target.closest(".performer");
  const target = row ? performers.get(row.dataset.name) : null;
  if (target) {
    target.avatarFile = { name: file.name, bytes };
    assignAvatar(target);
    note(`${target.name} is drawn on ${file.name}`);
    return;
  }
  dropped = { name: file.name, bytes };
  // A performer with a .vrm dropped on its row keeps it.
  const own = [];
  for (const p of performers.values()) {
    if (p.avatarFile) own.push(p.name);
    else assignAvatar(p);
  }
  if (player.avatar) assignPlayerAvatar();
  note(`every performer is drawn on ${file.name}` + (own.length ? ` (${own.join(", ")}: the one dropped on its row)` : ""));
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

/// Where the player's avatar stands: a little to the side of the performers, or
/// in the middle when there are none.
const PLAYER_OFFSET = -1.5;

function draw() {
  requestAnimationFrame(draw);
  if (!rig) return;
  const now = performance.now();
  const dt = lastFrame ? Math.min(0.1, (now - lastFrame) / 1000) : 0;
  lastFrame = now;
  scene.begin();
  if (!stage) scene.grid();
  const spread = $("spread").checked;
  const avatars = stage !== null && $("avatarsShown").checked;
  const skeletons = $("skeleton").checked || !avatars;
  const start = performance.now();
  let shown = 0;
  for (const p of performers.values()) {
    p.inView = p.received > 0 && !p.gone;
    if (p.group) p.group.visible = p.inView && avatars;
    if (p.inView) shown++;
  }
  let i = 0;
  for (const p of performers.values()) {
    if (!p.inView) continue;
    rig.positions(p.pose, p.positions);
    const dx = spread ? (i - (shown - 1) / 2) * 2.0 : 0;
    for (let b = 0; b < BONES.length; b++) p.positions[3 * b] += dx;
    drawSource(p, dx);
    if (p.avatar) {
      if (avatars && p.drawnSeq !== p.pose.seq) {
        p.avatar.setPose(p.pose);
        p.drawn.copyFrom(p.pose);
        p.posed = true;
      }
      p.group.position.x = dx;
      if (avatars) p.avatar.update(dt);
    }
    if (skeletons || !p.avatar) {
      if (avatars && p.avatar && p.posed) {
        // Over an avatar, the stick figure is the avatar's own bones.
        p.group.updateMatrixWorld(true);
        p.avatar.bonePositions(p.positions, p.shown);
      } else {
        for (let b = 0; b < BONES.length; b++) p.shown[b] = p.pose.present[b] || REQUIRED.has(BONES[b]) ? 1 : 0;
      }
      scene.skeleton(p.positions, rig.parents, p.shown, p.color, (b) => `${p.name} · ${BONES[b]}`);
    }
    if (p.drawnSeq !== p.pose.seq) {
      p.drawnSeq = p.pose.seq;
      stats.posesDrawn++;
      const delay = now - p.receivedAt;
      stats.sumDelayMs += delay;
      if (delay > stats.maxDelayMs) stats.maxDelayMs = delay;
    }
    i++;
  }
  if (player && player.avatar) {
    player.group.position.x = i > 0 ? PLAYER_OFFSET : 0;
    player.group.visible = player.isOpen && avatars;
    player.tick(dt);
  }
  const posed = performance.now();
  stats.sumPoseMs += posed - start;
  if (stage) {
    stage.render(scene);
    stats.sumRenderMs += performance.now() - posed;
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
    const lines = reply.recordings.map((r) => {
      if (r.frames === undefined) return r.file;
      return r.file === null ? `${r.performer}: no frame, nothing written` : `${r.file} (${r.frames} frames)`;
    });
    // A performer not present records from its first frame.
    for (const p of reply.waiting || []) lines.push(`${p}: not here; records from its next frame`);
    return lines.join(", ") || "nothing";
  }
  if (reply.type === "calibrated") return describeCalibrated(reply);
  return reply.type;
}

/// Says one line under the performers; an error said while the page has no
/// connection to the bridge goes once it is connected again.
function note(text, error = false) {
  const n = $("note");
  n.textContent = text;
  n.className = error ? "error" : "";
  noteClearsOnConnect = error && !(connection && connection.isOpen);
}

function onConnected() {
  if (noteClearsOnConnect) note("");
  refreshPerformers();
  refreshRecordings();
}

function renderPanel() {
  const list = $("performers");
  list.querySelector(".none")?.remove();
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

/// Each row's facts; while the page has no connection to the bridge, the rows
/// say so and show no rates (the bridge's own facts are the last it gave).
function updateFacts() {
  const online = connection !== null && connection.isOpen;
  const latency = online && bridgeStatus && bridgeStatus.outputs.find((o) => o.latency && o.name.startsWith("websocket"));
  for (const p of performers.values()) {
    if (!p.facts) continue;
    const info = p.info;
    const parts = [];
    if (!online) parts.push("not live: no connection to the bridge");
    if (p.gone) parts.push("gone");
    if (info) {
      parts.push(info.skeleton ? `${info.source} (${info.skeleton})` : info.source);
      if (online && info.sinceLastFrame > 2) parts.push(`silent ${info.sinceLastFrame.toFixed(0)} s`);
    }
    const live = online && !p.gone;
    if (live) parts.push(`${p.rate.toFixed(0)} Hz`);
    parts.push(`missed ${p.gaps}`);
    if (live && latency) parts.push(`latency p50 ${(latency.latency.p50Us / 1000).toFixed(1)} ms p99 ${(latency.latency.p99Us / 1000).toFixed(1)} ms`);
    if (info && info.source === "trackers") parts.push(info.calibrated ? "calibrated" : "not calibrated");
    if (info && info.recording) parts.push("● recording");
    if (p.avatarName) parts.push(`on ${p.avatarName}`);
    p.facts.textContent = parts.join(" · ");
    p.row.classList.toggle("recording", Boolean(info && info.recording));
    p.calibrate.hidden = !(info && info.source === "trackers");
    p.row.classList.toggle("gone", p.gone);
    p.row.classList.toggle("offline", !online);
  }
}

async function refreshPerformers() {
  if (!connection.isOpen) return;
  try {
    const reply = await connection.request({ type: "listPerformers" });
    const listed = new Set();
    for (const info of reply.performers) {
      const p = performer(info.name);
      p.info = info;
      p.gone = false;
      listed.add(info.name);
    }
    for (const p of performers.values()) {
      if (!listed.has(p.name)) {
        p.info = null;
        p.gone = true;
      }
    }
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
      size.textContent = ` ${(r.bytes / 1024).toFixed(0)} KiB · ${new Date(r.modified * 1000).toLocaleTimeString()} `;
      li.append(a, size);
      if (stage && r.file.endsWith(".vrma")) {
        li.append(button("Play", () => play(r.file), "Play this take on an avatar, beside the performers"));
      }
      return li;
    }));
    if (recordings.length === 0) list.innerHTML = "<li class=none>none yet</li>";
  } catch (e) {
    console.warn("the recordings:", e);
    note(connection.isOpen ? `the recordings: ${e.message}` : "the recordings: the bridge cannot be reached", true);
  }
}

/// Opens a take from the recordings in the player.
async function play(file) {
  try {
    const take = await getFile(`/recordings/${encodeURIComponent(file)}`);
    if (!player.avatar) await assignPlayerAvatar();
    await player.open(file, take.bytes);
    note(`playing ${file}`);
  } catch (e) {
    note(`${file}: ${e.message}`, true);
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
  try {
    stage = new Stage($("avatars"));
  } catch (e) {
    note(`no avatars: this browser has no WebGL (${e.message}); stick figures only`, true);
    $("avatarsShown").checked = false;
    $("avatarsShown").disabled = true;
  }
  scene = new Scene($("view"), { overlay: stage !== null });
  player = new Player({
    bar: $("player"), play: $("playPause"), time: $("playTime"), speed: $("playSpeed"), label: $("playName"),
  });
  $("playClose").addEventListener("click", () => {
    player.close();
  });
  window.addEventListener("dragover", (e) => {
    e.preventDefault();
    document.body.classList.add("dragging");
  });
  window.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  window.addEventListener("drop", onDrop);
  $("recordAll").addEventListener("click", () => act("record all", { type: "startRecording" }));
  $("stopAll").addEventListener("click", () => act("stop all", { type: "stopRecording" }));
  const params = () => ($("sources").checked ? { format: "binary", sources: "true" } : { format: "binary" });
  $("sources").addEventListener("change", () => connection.reopen(params()));
  connection = new Connection(params(), {
    onPose,
    onSource,
    onState: (s) => {
      $("connection").textContent = s;
      updateFacts();
    },
    onOpen: onConnected,
  });
  $("xrLink").href = withToken("/xr");
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
  /// Whether a performer was in the 3D view in the last frame drawn.
  inView(name) {
    const p = performers.get(name);
    return Boolean(p && p.inView);
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
  player: () => player,
  /// A performer's avatar as last drawn: the pose it shows (`seq`, hips, rest
  /// hips height, rotations, expressions, lookAt), the .vrm's name and VRM
  /// version, its hips height, the world position of each of its bones (three-vrm's
  /// raw bones, metres), its expression weights and its lookAt (degrees).
  avatar(name) {
    const p = performers.get(name);
    if (!p || !p.avatar || !p.posed) return null;
    const pose = p.drawn;
    const vrm = p.avatar.vrm;
    const expressions = {};
    if (vrm.expressionManager) {
      for (const e of vrm.expressionManager.expressions) expressions[e.expressionName] = e.weight;
    }
    const presets = {};
    PRESETS.forEach((preset, i) => {
      if ((pose.presetMask >>> i) & 1) presets[preset] = pose.presets[i];
    });
    return {
      seq: pose.seq,
      file: p.avatarName,
      metaVersion: p.avatar.vrm.meta.metaVersion,
      hipsHeight: p.avatar.hipsHeight,
      pose: {
        hips: Array.from(pose.hips),
        restHipsHeight: pose.restHipsHeight,
        rotations: Array.from(pose.rotations),
        present: Array.from(pose.present),
        presets,
        lookAt: pose.hasLookAt ? { yaw: pose.lookYaw, pitch: pose.lookPitch } : null,
      },
      bones: p.avatar.boneWorldPositions(),
      expressions,
      lookAt: vrm.lookAt ? { yaw: vrm.lookAt.yaw, pitch: vrm.lookAt.pitch } : null,
    };
  },
  /// Pixels of a performer's avatar on screen: the stage drawn with and without
  /// it, and the pixels that differ counted in the box its bones span (padded).
  avatarPixels(name) {
    const p = performers.get(name);
    if (!p || !p.avatar || !stage) return null;
    const at = [0, 0];
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const position of Object.values(p.avatar.boneWorldPositions())) {
      if (!scene.project(position[0], position[1], position[2], at, 0)) continue;
      x0 = Math.min(x0, at[0]); x1 = Math.max(x1, at[0]);
      y0 = Math.min(y0, at[1]); y1 = Math.max(y1, at[1]);
    }
    const pad = 0.15 * (y1 - y0);
    const box = {
      x: Math.max(0, Math.floor(x0 - pad)), y: Math.max(0, Math.floor(y0 - pad)),
    };
    box.width = Math.min(scene.width, Math.ceil(x1 + pad)) - box.x;
    box.height = Math.min(scene.height, Math.ceil(y1 + pad)) - box.y;
    stage.render(scene);
    const shown = stage.readPixels(box.x, box.y, box.width, box.height);
    p.group.visible = false;
    stage.render(scene);
    const hidden = stage.readPixels(box.x, box.y, box.width, box.height);
    p.group.visible = true;
    stage.render(scene);
    let pixels = 0;
    for (let i = 0; i < shown.length; i += 4) {
      if (shown[i] !== hidden[i] || shown[i + 1] !== hidden[i + 1] || shown[i + 2] !== hidden[i + 2]) pixels++;
    }
    const ratio = scene.ratio;
    return {
      pixels, boxPixels: box.width * box.height,
      box: { x: box.x / ratio, y: box.y / ratio, width: box.width / ratio, height: box.height / ratio },
    };
  },
  /// The bridge's status report, asked now.
  async status() {
    return (await connection.request({ type: "status" })).status;
  },
};

main();
