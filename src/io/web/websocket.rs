//! The WebSocket side of the bridge's web server (axum's upgrade over
//! tokio-tungstenite; the HTTP routes are in `crate::io::web`): skeleton and tracker frames in,
//! control requests (recording, performers, status, calibration) answered, and
//! every performer's solved pose streamed out, as `docs/websocket.md` describes.
//!
//! - `WebSocketOutput` is the solver's output for this server: it keeps the newest
//!   pose per performer, encodes it once (JSON and/or the binary form, only the
//!   forms some client asked for) and publishes it on a broadcast channel.
//! - Each client has its own task. A client that reads slowly lags behind on the
//!   channel: the poses it missed are counted as drops and it gets the newest pose
//!   of each performer next; nobody else waits for it.
//! - Frames a client sends go through its own ring to the solver (made on its first
//!   frame). Messages over `max_message_bytes` are counted and dropped unread;
//!   malformed ones are counted and dropped (frames) or answered with an `error`
//!   reply (requests). Nothing a client sends can stop the server.
//! - Connecting needs `?token=...` when a token is configured (always, when the
//!   server listens on a non-loopback address); `?format=binary` asks for binary
//!   poses, `?poses=none` for none (a sender only).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread::Thread;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::humanoid::CustomNames;
use crate::ik::calibration::Calibration;
use crate::pipeline::performer::StreamSkeleton;
use crate::pipeline::solver::SolverControl;
use crate::pipeline::status::{Latency, Status};
use crate::pipeline::{
    InputFrame, InputPort, InputStats, OutputMsg, OutputRing, OutputStats, PoseFrame, SourceFrame,
    SourcePoints, input_ring_sharing,
};
use crate::protocol::frame::{JointFrame, PerformerName, TrackedPoint};
use crate::protocol::ws::{
    self, ClientMessage, PerformerSummary, PoseHeader, Reply, SourcePoint, StartedRecording,
    StoppedRecording,
};
use crate::record::recorder::RecordCommand;

/// One pose, encoded once for every client.
#[derive(Debug)]
pub struct EncodedPose {
    pub performer: PerformerName,
    pub json: Option<Utf8Bytes>,
    pub binary: Option<Bytes>,
}

/// Where a performer's source is (`OutputMsg::Source`), encoded once.
#[derive(Debug)]
pub struct EncodedSource {
    pub performer: PerformerName,
    pub json: Utf8Bytes,
}

/// How many clients want each form, so the output encodes only those.
#[derive(Debug, Default)]
pub struct Subscribers {
    pub json: AtomicUsize,
    pub binary: AtomicUsize,
    /// Clients that asked for sources; the solver's port reads it too.
    pub sources: Arc<AtomicUsize>,
}

/// The solver's output for the WebSocket clients.
pub struct WebSocketOutput {
    pub ring: OutputRing,
    pub poses: broadcast::Sender<Arc<EncodedPose>>,
    pub sources: broadcast::Sender<Arc<EncodedSource>>,
    /// For the names and parents of a skeleton source's joints.
    pub skeletons: Arc<[StreamSkeleton]>,
    pub subscribers: Arc<Subscribers>,
    pub latency: Latency,
}

impl WebSocketOutput {
    /// Publishes until the solver is done.
    pub async fn run(mut self) {
        let mut names: HashMap<PerformerName, CustomNames> = HashMap::new();
        let mut newest: HashMap<PerformerName, PoseFrame> = HashMap::new();
        let mut newest_sources: HashMap<PerformerName, SourcePoints> = HashMap::new();
        let mut text = String::new();
        let mut bytes = Vec::new();
        loop {
            self.ring.ready().await;
            while let Some(msg) = self.ring.try_pop() {
                match msg {
                    OutputMsg::Pose(frame) => {
                        if newest.insert(frame.performer, frame).is_some() {
                            self.ring.stats.drops.fetch_add(1, Relaxed);
                        }
                    }
                    OutputMsg::ExpressionName {
                        performer,
                        slot,
                        name,
                    } => {
                        names
                            .entry(performer)
                            .or_default()
                            .name_slot(usize::from(slot), name.as_str());
                    }
                    OutputMsg::Source(points) => {
                        newest_sources.insert(points.performer, points);
                    }
                    OutputMsg::Gone { performer } => {
                        names.remove(&performer);
                        newest.remove(&performer);
                        newest_sources.remove(&performer);
                    }
                    OutputMsg::Appeared { .. } => {}
                }
            }
            let want_json = self.subscribers.json.load(Relaxed) > 0;
            let want_binary = self.subscribers.binary.load(Relaxed) > 0;
            for (performer, frame) in newest.drain() {
                self.latency.record(frame.received);
                self.ring.stats.frames.fetch_add(1, Relaxed);
                if !want_json && !want_binary {
                    continue;
                }
                let header = PoseHeader {
                    performer,
                    seq: frame.seq,
                    time: frame.time,
                };
                let custom = names.get(&performer).cloned().unwrap_or_default();
                let json = want_json.then(|| {
                    ws::encode_pose_json(&header, &frame.pose, &custom, &mut text);
                    Utf8Bytes::from(text.clone())
                });
                let binary = want_binary.then(|| {
                    ws::encode_pose_binary(&header, &frame.pose, &custom, &mut bytes);
                    Bytes::copy_from_slice(&bytes)
                });
                // No client listening is fine.
                let _ = self.poses.send(Arc::new(EncodedPose {
                    performer,
                    json,
                    binary,
                }));
            }
            for (_, points) in newest_sources.drain() {
                self.publish_source(&points, &mut text);
            }
            if self.ring.is_closed() {
                self.latency.merge();
                return;
            }
        }
    }
}

impl WebSocketOutput {
    /// Encodes a source once and hands it to the clients that asked.
    fn publish_source(&self, points: &SourcePoints, text: &mut String) {
        let skeleton = points
            .skeleton
            .and_then(|s| self.skeletons.get(usize::from(s)));
        match skeleton {
            Some(s) => {
                let joints = s.mapped.skeleton.joints();
                let known = points.known().filter_map(|(i, position)| {
                    joints.get(i).map(|j| SourcePoint {
                        name: &j.name,
                        parent: j.parent,
                        position,
                    })
                });
                ws::encode_source_json(points.performer, points.seq, Some(&s.name), known, text);
            }
            None => {
                let known = points.known().filter_map(|(i, position)| {
                    TrackedPoint::ALL.get(i).map(|p| SourcePoint {
                        name: p.name(),
                        parent: None,
                        position,
                    })
                });
                ws::encode_source_json(points.performer, points.seq, None, known, text);
            }
        }
        // No client listening is fine.
        let _ = self.sources.send(Arc::new(EncodedSource {
            performer: points.performer,
            json: Utf8Bytes::from(text.clone()),
        }));
    }
}

/// What every client task shares.
pub struct Shared {
    pub rules: ClientRules,
    /// The skeletons clients may stream, by index.
    pub skeletons: Arc<[StreamSkeleton]>,
    pub feeds: Feeds,
    pub controls: Controls,
    /// All clients' input counters, as one input.
    pub input_stats: Arc<InputStats>,
    /// All clients' output counters: poses delivered (a frame per pose per client),
    /// messages, bytes, lag drops.
    pub output_stats: Arc<OutputStats>,
    pub status: Status,
}

/// What a client must respect.
pub struct ClientRules {
    /// The token a client must give (`?token=`), if any.
    pub token: Option<String>,
    /// Larger messages are counted and dropped unread.
    pub max_message_bytes: usize,
    /// Frames of the ring a sending client gets to the solver.
    pub input_ring: usize,
}

/// What clients receive: the encoded poses and sources, and who asked for which.
pub struct Feeds {
    pub poses: broadcast::Sender<Arc<EncodedPose>>,
    pub sources: broadcast::Sender<Arc<EncodedSource>>,
    pub subscribers: Arc<Subscribers>,
}

/// Where client requests go: the solver (woken through its thread), the recorder,
/// and whoever keeps calibrations.
pub struct Controls {
    pub solver: std::sync::mpsc::Sender<SolverControl>,
    pub solver_thread: Thread,
    pub record: mpsc::UnboundedSender<RecordCommand>,
    pub calibrations: mpsc::UnboundedSender<SaveCalibration>,
}

/// A calibration taken live, to be kept: the bridge writes it into the
/// configuration file it runs on and answers with that file (`None` when it runs
/// on no file), or why it could not.
#[derive(Debug)]
pub struct SaveCalibration {
    pub performer: String,
    pub calibration: Calibration,
    pub reply: oneshot::Sender<Result<Option<PathBuf>, String>>,
}

/// The pose form a client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Binary,
    None,
}

/// The options a client put in its URL's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    pub token: Option<String>,
    pub format: Format,
    /// `?sources=true`: also `source` messages (where each performer's source is).
    pub sources: bool,
}

impl ClientOptions {
    /// Reads `token`, `format` and `poses` from a URL query; others are ignored.
    #[must_use]
    pub fn from_query(query: &str) -> Self {
        let mut options = ClientOptions {
            token: None,
            format: Format::Json,
            sources: false,
        };
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match (key.as_ref(), value.as_ref()) {
                ("token", v) => options.token = Some(v.to_owned()),
                ("format", "binary") => options.format = Format::Binary,
                ("format", "json") => options.format = Format::Json,
                ("poses", "none") => options.format = Format::None,
                ("sources", "true") => options.sources = true,
                _ => {}
            }
        }
        options
    }

    /// Whether the token is right (any, when none is configured).
    #[must_use]
    pub fn authorized(&self, token: Option<&str>) -> bool {
        token.is_none_or(|t| self.token.as_deref() == Some(t))
    }
}

/// Upgrades an HTTP request to a client session (the token already checked).
pub fn accept(
    upgrade: WebSocketUpgrade,
    peer: SocketAddr,
    options: ClientOptions,
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
    alive: mpsc::Sender<()>,
) -> axum::response::Response {
    // A hard cap well above the configured limit: messages between the two are
    // counted and dropped with the connection kept; beyond it the connection closes.
    let hard_cap = shared.rules.max_message_bytes.saturating_mul(16);
    let failed = shared.input_stats.clone();
    upgrade
        .max_message_size(hard_cap)
        .max_frame_size(hard_cap)
        .on_failed_upgrade(move |e| {
            failed.bad.fetch_add(1, Relaxed);
            tracing::info!(%peer, %e, "WebSocket upgrade failed");
        })
        .on_upgrade(move |socket| async move {
            client(socket, peer, options, shared, shutdown).await;
            // The server's shutdown waits for every client to drop this.
            drop(alive);
        })
}

async fn client(
    socket: WebSocket,
    peer: SocketAddr,
    options: ClientOptions,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let format = options.format;
    tracing::info!(%peer, "WebSocket client connected");
    let counter = match format {
        Format::Json => Some(&shared.feeds.subscribers.json),
        Format::Binary => Some(&shared.feeds.subscribers.binary),
        Format::None => None,
    };
    if let Some(c) = counter {
        c.fetch_add(1, Relaxed);
    }
    let (mut sink, mut source) = socket.split();
    let mut poses = shared.feeds.poses.subscribe();
    let mut sources = shared.feeds.sources.subscribe();
    if options.sources {
        shared.feeds.subscribers.sources.fetch_add(1, Relaxed);
    }
    let mut session = Session {
        shared: shared.clone(),
        peer,
        bad_logged: false,
        port: None,
        frame: Box::new(JointFrame::new(
            PerformerName::new("_").unwrap_or_else(|| unreachable!("a one-letter name is valid")),
        )),
    };
    let out = &shared.output_stats;
    loop {
        // What goes out, and whether it is poses (each one a frame delivered).
        let (outgoing, poses_out): (Vec<Message>, bool) = tokio::select! {
            incoming = source.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    shared.input_stats.packets.fetch_add(1, Relaxed);
                    let replies = session.text(&text).await;
                    (replies.into_iter().map(Message::from).collect(), false)
                }
                Some(Ok(Message::Binary(_))) => {
                    shared.input_stats.packets.fetch_add(1, Relaxed);
                    session.bad(&"a binary message: the bridge reads JSON text");
                    (Vec::new(), false)
                }
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => (Vec::new(), false), // ping/pong: answered by tungstenite
                Some(Err(e)) => {
                    shared.input_stats.bad.fetch_add(1, Relaxed);
                    tracing::info!(%peer, %e, "WebSocket client dropped");
                    break;
                }
            },
            pose = poses.recv(), if format != Format::None => match pose {
                Ok(first) => {
                    let messages = newest_poses(first, &mut poses, out)
                        .into_iter()
                        .filter_map(|p| match format {
                            Format::Json => p.json.clone().map(Message::Text),
                            Format::Binary => p.binary.clone().map(Message::Binary),
                            Format::None => None,
                        })
                        .collect();
                    (messages, true)
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    out.drops.fetch_add(n, Relaxed);
                    (Vec::new(), false)
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            source = sources.recv(), if options.sources => match source {
                Ok(s) => (vec![Message::Text(s.json.clone())], false),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    out.drops.fetch_add(n, Relaxed);
                    (Vec::new(), false)
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = shutdown.changed() => {
                let _ = sink.send(Message::Close(None)).await;
                break;
            }
        };
        for message in outgoing {
            let len = match &message {
                Message::Text(t) => t.len(),
                Message::Binary(b) => b.len(),
                _ => 0,
            };
            if let Err(e) = sink.send(message).await {
                out.errors.fetch_add(1, Relaxed);
                tracing::info!(%peer, %e, "WebSocket client gone");
                unsubscribe(counter, &shared, &options);
                return;
            }
            out.packets.fetch_add(1, Relaxed);
            out.bytes.fetch_add(len as u64, Relaxed);
            if poses_out {
                out.frames.fetch_add(1, Relaxed);
            }
        }
    }
    unsubscribe(counter, &shared, &options);
    tracing::info!(%peer, "WebSocket client closed");
}

/// A client leaves: it no longer counts as wanting its forms.
fn unsubscribe(counter: Option<&AtomicUsize>, shared: &Shared, options: &ClientOptions) {
    if let Some(c) = counter {
        c.fetch_sub(1, Relaxed);
    }
    if options.sources {
        shared.feeds.subscribers.sources.fetch_sub(1, Relaxed);
    }
}

/// `first` and whatever else is waiting, the newest per performer (older ones
/// counted as drops).
fn newest_poses(
    first: Arc<EncodedPose>,
    poses: &mut broadcast::Receiver<Arc<EncodedPose>>,
    stats: &OutputStats,
) -> Vec<Arc<EncodedPose>> {
    let mut newest = vec![first];
    loop {
        match poses.try_recv() {
            Ok(p) => match newest.iter_mut().find(|q| q.performer == p.performer) {
                Some(slot) => {
                    *slot = p;
                    stats.drops.fetch_add(1, Relaxed);
                }
                None => newest.push(p),
            },
            Err(broadcast::error::TryRecvError::Lagged(n)) => {
                stats.drops.fetch_add(n, Relaxed);
            }
            Err(_) => return newest,
        }
    }
}

/// One client's side of the conversation.
struct Session {
    shared: Arc<Shared>,
    /// The client's address, for the log.
    peer: SocketAddr,
    /// Whether a bad message of this client's has been logged: the first is, with
    /// why; the rest are only counted (a sender at 90 Hz would flood the log).
    bad_logged: bool,
    /// This client's ring to the solver, made on its first frame.
    port: Option<InputPort>,
    /// Reused for every skeleton frame.
    frame: Box<JointFrame>,
}

impl Session {
    /// Counts a bad message that gets no reply, logging why for the first.
    fn bad(&mut self, why: &dyn std::fmt::Display) {
        self.shared.input_stats.bad.fetch_add(1, Relaxed);
        if !self.bad_logged {
            self.bad_logged = true;
            tracing::warn!(
                peer = %self.peer,
                %why,
                "WebSocket message dropped (more bad ones from this client are only counted)"
            );
        }
    }

    fn push(&mut self, frame: SourceFrame) {
        let shared = &self.shared;
        let port = self.port.get_or_insert_with(|| {
            let (port, ring) = input_ring_sharing(
                "websocket",
                shared.rules.input_ring,
                shared.controls.solver_thread.clone(),
                shared.input_stats.clone(),
            );
            let _ = shared.controls.solver.send(SolverControl::AddInput(ring));
            shared.controls.solver_thread.unpark();
            port
        });
        port.push(InputFrame {
            received: Instant::now(),
            frame,
        });
    }

    /// Handles one text message; returns the reply, if any.
    async fn text(&mut self, text: &str) -> Option<String> {
        let stats = self.shared.input_stats.clone();
        let limit = self.shared.rules.max_message_bytes;
        if text.len() > limit {
            self.bad(&format_args!(
                "{} bytes, over maxMessageBytes ({limit})",
                text.len()
            ));
            return None;
        }
        let message = match ws::parse(text) {
            Ok(m) => m,
            Err(e) => {
                // Requests get an error reply; frames are only counted.
                let Some(id) = ws::rejected_request_id(text) else {
                    self.bad(&e);
                    return None;
                };
                stats.bad.fetch_add(1, Relaxed);
                return Some(
                    Reply::Error {
                        id,
                        message: &e.to_string(),
                    }
                    .to_json(),
                );
            }
        };
        match message {
            ClientMessage::Skeleton(s) => {
                let index = self
                    .shared
                    .skeletons
                    .iter()
                    .position(|k| k.name == s.skeleton());
                let Some(index) = index else {
                    stats.unknown.fetch_add(1, Relaxed);
                    return None;
                };
                let skeleton = &self.shared.skeletons[index].mapped.skeleton;
                *self.frame = JointFrame::new(s.performer());
                match s.decode_into(skeleton, &mut self.frame) {
                    Ok(decoded) => {
                        stats.unknown.fetch_add(decoded.unknown as u64, Relaxed);
                        let frame = *self.frame;
                        self.push(SourceFrame::Joints {
                            skeleton: index as u16,
                            frame,
                        });
                    }
                    Err(e) => self.bad(&e),
                }
                None
            }
            ClientMessage::Trackers(t) => {
                self.push(SourceFrame::Trackers(t));
                None
            }
            ClientMessage::StartRecording {
                id,
                performer,
                name,
            } => {
                let (reply, answer) = oneshot::channel();
                let _ = self.shared.controls.record.send(RecordCommand::Start {
                    performer: performer.map(|p| p.to_string()),
                    name: name.map(|n| n.into_owned()),
                    reply: Some(reply),
                });
                Some(answer_json(id, answer.await, |started| {
                    let entries: Vec<StartedRecording<'_>> = started
                        .recordings
                        .iter()
                        .map(|(performer, file)| StartedRecording { performer, file })
                        .collect();
                    let waiting: Vec<&str> = started.waiting.iter().map(String::as_str).collect();
                    Reply::RecordingStarted {
                        id,
                        recordings: &entries,
                        waiting: &waiting,
                    }
                    .to_json()
                }))
            }
            ClientMessage::StopRecording { id, performer } => {
                let (reply, answer) = oneshot::channel();
                let _ = self.shared.controls.record.send(RecordCommand::Stop {
                    performer: performer.map(|p| p.to_string()),
                    reply: Some(reply),
                });
                Some(answer_json(id, answer.await, |takes| {
                    let entries: Vec<StoppedRecording<'_>> = takes
                        .iter()
                        .map(|t| StoppedRecording {
                            performer: &t.performer,
                            file: t.written.then_some(t.file.as_str()),
                            frames: t.frames as u64,
                        })
                        .collect();
                    Reply::RecordingStopped {
                        id,
                        recordings: &entries,
                    }
                    .to_json()
                }))
            }
            ClientMessage::ListPerformers { id } => Some(self.performers(id).await),
            ClientMessage::Status { id } => {
                let status = self.shared.status.report();
                Some(
                    Reply::Status {
                        id,
                        status: &status,
                    }
                    .to_json(),
                )
            }
            ClientMessage::Calibrate { id, performer } => {
                let (reply, answer) = oneshot::channel();
                self.solver(SolverControl::Calibrate {
                    performer: performer.to_string(),
                    reply,
                });
                let calibration = match answer.await {
                    Ok(Ok(calibration)) => calibration,
                    other => return Some(answer_json(id, other, |_| String::new())),
                };
                let (saved, save_error) =
                    self.keep_calibration(performer.as_str(), calibration).await;
                Some(
                    Reply::Calibrated {
                        id,
                        performer: performer.as_str(),
                        saved: saved.as_deref(),
                        save_error: save_error.as_deref(),
                    }
                    .to_json(),
                )
            }
        }
    }

    /// Hands a calibration to whoever keeps them: (the file written, why it could not be).
    fn keep_calibration(
        &self,
        performer: &str,
        calibration: Calibration,
    ) -> impl Future<Output = (Option<String>, Option<String>)> + use<> {
        let (reply, answer) = oneshot::channel();
        let save = SaveCalibration {
            performer: performer.to_owned(),
            calibration,
            reply,
        };
        // Sent now, awaited without `self` (a session is not `Sync`).
        let sent = self.shared.controls.calibrations.send(save).is_ok();
        async move {
            match (sent, answer.await) {
                (true, Ok(Ok(file))) => (file.map(|f| f.display().to_string()), None),
                (true, Ok(Err(e))) => (None, Some(e)),
                _ => (None, Some("the bridge is stopping".into())),
            }
        }
    }

    fn solver(&self, control: SolverControl) {
        let _ = self.shared.controls.solver.send(control);
        self.shared.controls.solver_thread.unpark();
    }

    async fn performers(&mut self, id: Option<u64>) -> String {
        let (reply, answer) = oneshot::channel();
        self.solver(SolverControl::Performers { reply });
        let Ok(list) = answer.await else {
            return stopping(id);
        };
        let (reply, answer) = oneshot::channel();
        let _ = self
            .shared
            .controls
            .record
            .send(RecordCommand::List { reply });
        let recording = answer.await.unwrap_or_default();
        let sources: Vec<String> = list
            .iter()
            .map(|p| format!("{:?}", p.source).to_lowercase())
            .collect();
        let summaries: Vec<PerformerSummary<'_>> = list
            .iter()
            .zip(&sources)
            .map(|(p, source)| PerformerSummary {
                name: &p.name,
                source,
                skeleton: p.skeleton.as_deref(),
                frames: p.frames,
                since_last_frame: p.last_seen_ms as f64 / 1000.0,
                recording: recording.iter().any(|(r, _, _)| *r == p.name),
                calibrated: p.calibrated,
            })
            .collect();
        Reply::Performers {
            id,
            performers: &summaries,
        }
        .to_json()
    }
}

/// The reply to a request answered through a oneshot: `ok` of the answer, an
/// `error` naming why not, or "stopping" when the answerer is gone.
fn answer_json<T>(
    id: Option<u64>,
    answer: Result<Result<T, String>, oneshot::error::RecvError>,
    ok: impl FnOnce(T) -> String,
) -> String {
    match answer {
        Ok(Ok(value)) => ok(value),
        Ok(Err(message)) => Reply::Error {
            id,
            message: &message,
        }
        .to_json(),
        Err(_) => stopping(id),
    }
}

fn stopping(id: Option<u64>) -> String {
    Reply::Error {
        id,
        message: "the bridge is stopping",
    }
    .to_json()
}
