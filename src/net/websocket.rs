//! The WebSocket server (tokio-tungstenite): skeleton and tracker frames in,
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
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread::Thread;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::bridge::status::{Latency, Status};
use crate::humanoid::CustomNames;
use crate::pipeline::performer::StreamSkeleton;
use crate::pipeline::solver::SolverControl;
use crate::pipeline::{
    InputFrame, InputPort, InputStats, OutputMsg, OutputRing, OutputStats, PoseFrame, SourceFrame,
    input_ring_sharing,
};
use crate::protocol::frame::{JointFrame, PerformerName};
use crate::protocol::ws::{
    self, ClientMessage, ErrorKind, PerformerSummary, PoseHeader, Reply, StartedRecording,
    StoppedRecording,
};
use crate::record::recorder::RecordCommand;

/// One pose, encoded once for every client.
#[derive(Debug)]
pub struct EncodedPose {
    pub performer: PerformerName,
    pub json: Option<Utf8Bytes>,
    pub binary: Option<Vec<u8>>,
}

/// How many clients want each form, so the output encodes only those.
#[derive(Debug, Default)]
pub struct Subscribers {
    pub json: AtomicUsize,
    pub binary: AtomicUsize,
}

/// The solver's output for the WebSocket clients.
pub struct WebSocketOutput {
    pub ring: OutputRing,
    pub poses: broadcast::Sender<Arc<EncodedPose>>,
    pub subscribers: Arc<Subscribers>,
    pub latency: Latency,
}

impl WebSocketOutput {
    /// Publishes until the solver is done.
    pub async fn run(mut self) {
        let mut names: HashMap<PerformerName, CustomNames> = HashMap::new();
        let mut newest: HashMap<PerformerName, PoseFrame> = HashMap::new();
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
                    OutputMsg::Gone { performer } => {
                        names.remove(&performer);
                        newest.remove(&performer);
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
                    bytes.clone()
                });
                // No client listening is fine.
                let _ = self.poses.send(Arc::new(EncodedPose {
                    performer,
                    json,
                    binary,
                }));
            }
            if self.ring.is_closed() {
                self.latency.merge();
                return;
            }
        }
    }
}

/// What every client task shares.
pub struct Shared {
    pub token: Option<String>,
    pub max_message_bytes: usize,
    pub skeletons: Arc<[StreamSkeleton]>,
    pub solver: std::sync::mpsc::Sender<SolverControl>,
    pub solver_thread: Thread,
    pub input_ring: usize,
    /// All clients' input counters, as one input.
    pub input_stats: Arc<InputStats>,
    /// All clients' output counters (messages, bytes, lag drops).
    pub output_stats: Arc<OutputStats>,
    pub poses: broadcast::Sender<Arc<EncodedPose>>,
    pub subscribers: Arc<Subscribers>,
    pub record: mpsc::UnboundedSender<RecordCommand>,
    pub status: Status,
}

/// The accept loop.
pub struct WebSocketServer {
    pub listener: TcpListener,
    pub shared: Arc<Shared>,
    pub shutdown: watch::Receiver<bool>,
}

/// The pose form a client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Binary,
    None,
}

impl WebSocketServer {
    /// Accepts clients until shutdown, then waits for them to close.
    pub async fn run(mut self) {
        let mut clients = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let shared = self.shared.clone();
                        let shutdown = self.shutdown.clone();
                        clients.spawn(client(stream, peer, shared, shutdown));
                    }
                    Err(e) => tracing::debug!(%e, "accept failed"),
                },
                _ = self.shutdown.changed() => break,
                Some(_) = clients.join_next(), if !clients.is_empty() => {}
            }
        }
        while clients.join_next().await.is_some() {}
    }
}

/// Reads the options from the request's query; `false` when the token is wrong.
fn handshake(request: &Request, token: Option<&str>, format: &mut Format) -> bool {
    let query = request.uri().query().unwrap_or("");
    let mut given = None;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match (key.as_ref(), value.as_ref()) {
            ("token", v) => given = Some(v.to_owned()),
            ("format", "binary") => *format = Format::Binary,
            ("format", "json") => *format = Format::Json,
            ("poses", "none") => *format = Format::None,
            _ => {}
        }
    }
    token.is_none_or(|t| given.as_deref() == Some(t))
}

/// The answer to a client without the right token.
fn unauthorized() -> ErrorResponse {
    let mut refused = ErrorResponse::new(Some("a valid ?token= is required".into()));
    *refused.status_mut() = StatusCode::UNAUTHORIZED;
    refused
}

async fn client(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut format = Format::Json;
    let token = shared.token.clone();
    // A hard cap well above the configured limit: messages between the two are
    // counted and dropped with the connection kept; beyond it tungstenite closes it.
    let hard_cap = shared.max_message_bytes.saturating_mul(16);
    let config = WebSocketConfig::default()
        .max_message_size(Some(hard_cap))
        .max_frame_size(Some(hard_cap));
    // tungstenite's callback signature: its error is the HTTP response to send.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, response: Response| {
        if handshake(request, token.as_deref(), &mut format) {
            Ok(response)
        } else {
            Err(unauthorized())
        }
    };
    let ws = match tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config))
        .await
    {
        Ok(ws) => ws,
        Err(e) => {
            shared.input_stats.bad.fetch_add(1, Relaxed);
            tracing::info!(%peer, %e, "WebSocket handshake refused");
            return;
        }
    };
    tracing::info!(%peer, "WebSocket client connected");
    let counter = match format {
        Format::Json => Some(&shared.subscribers.json),
        Format::Binary => Some(&shared.subscribers.binary),
        Format::None => None,
    };
    if let Some(c) = counter {
        c.fetch_add(1, Relaxed);
    }
    let (mut sink, mut source) = ws.split();
    let mut poses = shared.poses.subscribe();
    let mut session = Session {
        shared: shared.clone(),
        port: None,
        frame: Box::new(JointFrame::new(
            PerformerName::new("_").unwrap_or_else(|| unreachable!("a one-letter name is valid")),
        )),
    };
    let out = &shared.output_stats;
    loop {
        let outgoing: Vec<Message> = tokio::select! {
            incoming = source.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    shared.input_stats.packets.fetch_add(1, Relaxed);
                    session.text(&text).await.into_iter().map(Message::text).collect()
                }
                Some(Ok(Message::Binary(_))) => {
                    shared.input_stats.packets.fetch_add(1, Relaxed);
                    shared.input_stats.bad.fetch_add(1, Relaxed);
                    Vec::new()
                }
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => Vec::new(), // ping/pong: answered by tungstenite
                Some(Err(e)) => {
                    shared.input_stats.bad.fetch_add(1, Relaxed);
                    tracing::info!(%peer, %e, "WebSocket client dropped");
                    break;
                }
            },
            pose = poses.recv(), if format != Format::None => match pose {
                Ok(first) => newest_poses(first, &mut poses, out)
                    .into_iter()
                    .filter_map(|p| match format {
                        Format::Json => p.json.clone().map(Message::Text),
                        Format::Binary => p.binary.clone().map(|b| Message::Binary(b.into())),
                        Format::None => None,
                    })
                    .collect(),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    out.drops.fetch_add(n, Relaxed);
                    Vec::new()
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = shutdown.changed() => {
                let _ = sink.send(Message::Close(None)).await;
                break;
            }
        };
        for message in outgoing {
            let len = message.len();
            if let Err(e) = sink.send(message).await {
                out.errors.fetch_add(1, Relaxed);
                tracing::info!(%peer, %e, "WebSocket client gone");
                if let Some(c) = counter {
                    c.fetch_sub(1, Relaxed);
                }
                return;
            }
            out.packets.fetch_add(1, Relaxed);
            out.bytes.fetch_add(len as u64, Relaxed);
        }
    }
    if let Some(c) = counter {
        c.fetch_sub(1, Relaxed);
    }
    tracing::info!(%peer, "WebSocket client closed");
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
    /// This client's ring to the solver, made on its first frame.
    port: Option<InputPort>,
    /// Reused for every skeleton frame.
    frame: Box<JointFrame>,
}

impl Session {
    fn push(&mut self, frame: SourceFrame) {
        let shared = &self.shared;
        let port = self.port.get_or_insert_with(|| {
            let (port, ring) = input_ring_sharing(
                "websocket",
                shared.input_ring,
                shared.solver_thread.clone(),
                shared.input_stats.clone(),
            );
            let _ = shared.solver.send(SolverControl::AddInput(ring));
            shared.solver_thread.unpark();
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
        if text.len() > self.shared.max_message_bytes {
            stats.bad.fetch_add(1, Relaxed);
            return None;
        }
        let message = match ws::parse(text) {
            Ok(m) => m,
            Err(e) => {
                match e.kind() {
                    ErrorKind::Malformed | ErrorKind::InvalidValue | ErrorKind::Oversize => {
                        stats.bad.fetch_add(1, Relaxed);
                    }
                }
                // Requests get an error reply; frames are only counted.
                return ws::request_id(text).map(|id| {
                    Reply::Error {
                        id: Some(id),
                        message: &e.to_string(),
                    }
                    .to_json()
                });
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
                    Err(_) => {
                        stats.bad.fetch_add(1, Relaxed);
                    }
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
                let _ = self.shared.record.send(RecordCommand::Start {
                    performer: performer.map(|p| p.to_string()),
                    name: name.map(|n| n.into_owned()),
                    reply: Some(reply),
                });
                Some(answer_json(id, answer.await, |files| {
                    let entries: Vec<StartedRecording<'_>> = files
                        .iter()
                        .map(|(performer, file)| StartedRecording { performer, file })
                        .collect();
                    Reply::RecordingStarted {
                        id,
                        recordings: &entries,
                    }
                    .to_json()
                }))
            }
            ClientMessage::StopRecording { id, performer } => {
                let (reply, answer) = oneshot::channel();
                let _ = self.shared.record.send(RecordCommand::Stop {
                    performer: performer.map(|p| p.to_string()),
                    reply: Some(reply),
                });
                Some(answer_json(id, answer.await, |takes| {
                    let entries: Vec<StoppedRecording<'_>> = takes
                        .iter()
                        .map(|t| StoppedRecording {
                            performer: &t.performer,
                            file: &t.file,
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
                Some(answer_json(id, answer.await, |_| {
                    Reply::Calibrated {
                        id,
                        performer: performer.as_str(),
                    }
                    .to_json()
                }))
            }
        }
    }

    fn solver(&self, control: SolverControl) {
        let _ = self.shared.solver.send(control);
        self.shared.solver_thread.unpark();
    }

    async fn performers(&mut self, id: Option<u64>) -> String {
        let (reply, answer) = oneshot::channel();
        self.solver(SolverControl::Performers { reply });
        let Ok(list) = answer.await else {
            return stopping(id);
        };
        let (reply, answer) = oneshot::channel();
        let _ = self.shared.record.send(RecordCommand::List { reply });
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
