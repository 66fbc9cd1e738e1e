// Talking to the bridge that served this page: the WebSocket (same host and
// port, `wss:` under HTTPS), requests answered by id, the token the page was
// opened with (`?token=...`), passed on to everything that carries data and to
// the links between the pages, and the words for the bridge's replies that both
// pages show.

export const token = new URLSearchParams(location.search).get("token");

/// `path` with the page's token added to its query.
export function withToken(path, params = {}) {
  const query = new URLSearchParams(params);
  if (token !== null) query.set("token", token);
  const q = query.toString();
  return q ? `${path}?${q}` : path;
}

/// A `calibrated` reply in words: where the calibration was saved, or why not.
export function describeCalibrated(reply) {
  if (reply.saved) return `calibrated; saved in ${reply.saved}`;
  if (reply.saveError) return `calibrated (in use), but not saved: ${reply.saveError}`;
  return "calibrated (in use until the bridge stops: it runs without a config file)";
}

/// GETs JSON from the bridge; throws with the bridge's answer on an error.
export async function getJson(path) {
  const response = await fetch(withToken(path));
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/// GETs a file from the bridge: its bytes and the name the bridge gives it
/// (`Content-Disposition`), else the last part of `path`.
export async function getFile(path) {
  const response = await fetch(withToken(path));
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  const disposition = response.headers.get("content-disposition") || "";
  const named = /filename="([^"]*)"/.exec(disposition);
  const name = named ? named[1] : decodeURIComponent(path.split("/").pop());
  // 204: an avatar that is a skeleton without a mesh (a .bvh, a skeleton .json).
  if (response.status === 204) return { name, bytes: null };
  return { name, bytes: await response.arrayBuffer() };
}

/// A WebSocket session with the bridge. `params` go in the URL (`format`,
/// `poses`, `sources`); `onPose(ArrayBuffer | object)` gets each pose,
/// `onSource(object)` each `source` message, `onState(text)` each change of the
/// connection. Reconnects after a second when the bridge goes.
export class Connection {
  constructor(params, { onPose = () => {}, onSource = () => {}, onState = () => {}, onOpen = () => {} } = {}) {
    this.setUrl(params);
    this.onPose = onPose;
    this.onSource = onSource;
    this.onState = onState;
    this.onOpen = onOpen;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.open();
  }

  setUrl(params) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.url = `${scheme}//${location.host}${withToken("/", params)}`;
  }

  /// Connects again with other URL options.
  reopen(params) {
    this.setUrl(params);
    if (this.socket) {
      this.socket.onclose = null;
      this.socket.close();
    }
    this.open();
  }

  open() {
    const socket = new WebSocket(this.url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.onState("connecting");
    socket.onopen = () => {
      this.onState("connected");
      this.onOpen();
    };
    socket.onclose = (event) => {
      for (const [, { reject }] of this.pending) reject(new Error("connection closed"));
      this.pending.clear();
      this.onState(event.code === 1006 ? "unreachable (wrong token, or the bridge stopped)" : "closed");
      setTimeout(() => this.open(), 1000);
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        this.onPose(event.data);
        return;
      }
      const message = JSON.parse(event.data);
      if (message.type === "pose") {
        this.onPose(message);
        return;
      }
      if (message.type === "source") {
        this.onSource(message);
        return;
      }
      const waiting = message.id !== undefined && message.id !== null && this.pending.get(message.id);
      if (waiting) {
        this.pending.delete(message.id);
        if (message.type === "error") waiting.reject(new Error(message.message));
        else waiting.resolve(message);
      }
    };
  }

  get isOpen() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /// Sends a message as is (a frame: no reply).
  send(message) {
    if (this.isOpen) this.socket.send(JSON.stringify(message));
    return this.isOpen;
  }

  /// Sends a request and resolves with its reply (rejects on an `error` reply).
  request(message) {
    if (!this.isOpen) return Promise.reject(new Error("not connected"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ ...message, id }));
    });
  }
}
