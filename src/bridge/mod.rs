//! The live bridge: `run` binds the configured inputs and outputs, starts the
//! solver thread and the tokio tasks around it, and stops them all, in order, when
//! the caller's shutdown future completes (Ctrl-C or SIGTERM in `main.rs`, a
//! oneshot in tests) or the replays end:
//!
//! 1. input tasks stop receiving (their rings keep what they hold);
//! 2. the solver drains every input ring, announces every performer gone, hands
//!    the recorder everything it still waits for, and ends;
//! 3. each output drains its ring and ends; the recorder finishes every open take.

pub mod config;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::formats::inspect;
use crate::formats::vrma::VrmaRest;
use crate::formats::{self, LoadOptions, skeleton_json};
use crate::humanoid::CustomNames;
use crate::io::inputs::lab::LabInput;
use crate::io::inputs::vmc::VmcInput;
use crate::io::inputs::vrchat::VrchatInput;
use crate::io::outputs::vmc::{self, Shows, VmcOutput};
use crate::io::web::WebServer;
use crate::io::web::websocket::{Shared, Subscribers, WebSocketOutput};
use crate::pipeline::performer::{Avatar, StreamSkeleton};
use crate::pipeline::solver::{Solver, SolverConfig, SolverControl};
use crate::pipeline::{
    Delivery, InputRing, InputStats, OutputPort, OutputStats, input_ring, output_ring,
};
use crate::protocol::frame::PerformerName;
use crate::protocol::lab_osc::{LabAssembler, LabSkeleton};
use crate::protocol::vmc::frames::SenderRest;
use crate::protocol::vmc::{Datagrams, VmcEncoder};
use crate::protocol::vrchat::VrchatTrackers;
use crate::record::recorder::{FinishedTake, Recorder};
use crate::retarget::MappedSkeleton;
use crate::takes::replay::Replay;

use crate::io::inputs::replay::ReplayInput;
use crate::pipeline::status::{Latency, Status};
use config::BridgeConfig;

/// Why the bridge cannot start.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("cannot listen on {addr} ({what})")]
    Bind {
        what: String,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot send to {addr} ({what})")]
    Connect {
        what: String,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("{name}: {message}")]
    Skeleton { name: String, message: String },
    #[error("performer name `{0}` is empty or longer than 32 bytes")]
    PerformerName(String),
    #[error("cannot start the solver thread")]
    Thread(#[source] std::io::Error),
}

/// A recording to play as a performer.
pub struct ReplaySource {
    pub performer: String,
    pub replay: Replay,
    pub names: CustomNames,
}

/// Told the line naming the endpoints once the bridge runs.
pub type ReadyCallback = Box<dyn FnOnce(&str) + Send>;

/// What `run` does beyond the configuration.
#[derive(Default)]
pub struct RunOptions {
    pub replays: Vec<ReplaySource>,
    /// Loop the replays (else the bridge stops when they have all ended).
    pub loop_replays: bool,
    /// Replays as fast as the pipeline takes them instead of in real time.
    pub fast_replays: bool,
    /// Print the monitor lines (each performer's motion) every status interval.
    pub monitor: bool,
    /// Called once every socket is bound and the solver runs, with a line naming
    /// the endpoints.
    pub on_ready: Option<ReadyCallback>,
    /// The configuration file `config` came from, if any: calibrations taken
    /// live are saved into it.
    pub config_file: Option<PathBuf>,
}

/// What a finished run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The final status report (see `Status::report`).
    pub status: serde_json::Value,
    /// The status line at the end.
    pub line: String,
    /// Every take the recorder wrote.
    pub takes: Vec<FinishedTake>,
}

/// The skeletons senders may stream, built-in ones first, then the config's, with
/// their lab OSC form when their stream format allows one.
fn load_skeletons(
    config: &BridgeConfig,
) -> Result<(Vec<StreamSkeleton>, Vec<Option<LabSkeleton>>), BridgeError> {
    let fail = |name: &str, message: String| BridgeError::Skeleton {
        name: format!("skeleton `{name}`"),
        message,
    };
    let mut loaded = Vec::new();
    for (name, json) in [
        ("lab19", crate::skeleton::builtin::LAB19_JSON),
        ("humanoid", crate::skeleton::builtin::HUMANOID_JSON),
    ] {
        let parsed =
            skeleton_json::parse_with_stream(json, Path::new(name), &LoadOptions::default())
                .map_err(|e| fail(name, e.to_string()))?;
        loaded.push((name.to_owned(), parsed));
    }
    for (name, path) in &config.skeletons {
        let parsed = skeleton_json::load_with_stream(path, &LoadOptions::default())
            .map_err(|e| fail(name, e.to_string()))?;
        loaded.retain(|(n, _)| n != name);
        loaded.push((name.clone(), parsed));
    }
    let mut skeletons = Vec::new();
    let mut labs = Vec::new();
    for (name, (rig, stream)) in loaded {
        let map = rig
            .bone_map
            .clone()
            .ok_or_else(|| fail(&name, "the skeleton file has no boneMap".into()))?;
        labs.push(LabSkeleton::new(&rig.skeleton, stream).ok());
        let mapped =
            MappedSkeleton::new(rig.skeleton, &map).map_err(|e| fail(&name, e.to_string()))?;
        skeletons.push(StreamSkeleton::new(&name, mapped));
    }
    Ok((skeletons, labs))
}

/// The rest pose of VMC senders whose avatar is the model at `path`.
fn sender_rest(path: &Path) -> Result<SenderRest, BridgeError> {
    let fail = |message: String| BridgeError::Skeleton {
        name: path.display().to_string(),
        message,
    };
    let rig = formats::load_rig(path, &LoadOptions::default()).map_err(|e| fail(e.to_string()))?;
    let chosen = inspect::choose_map(&rig, None).ok_or_else(|| {
        fail(format!(
            "no humanoid bone map: it is {}",
            inspect::why_no_map(&rig)
        ))
    })?;
    let mapped = MappedSkeleton::new(rig.skeleton, &chosen.map).map_err(|e| fail(e.to_string()))?;
    Ok(SenderRest::from_mapped(&mapped))
}

/// The built-in avatar: the VRM 1.0 T-pose humanoid.
fn built_in_avatar() -> (Avatar, VrmaRest) {
    let rig = crate::formats::skeleton_json::embedded_rig(
        "humanoid",
        crate::skeleton::builtin::HUMANOID_JSON,
    );
    // The embedded humanoid is checked by the test suite: it has its bone map.
    let map = rig.bone_map.clone().unwrap_or_default();
    let mapped = MappedSkeleton::new(rig.skeleton, &map)
        .unwrap_or_else(|e| unreachable!("the embedded humanoid is valid: {e}"));
    (Avatar::new(&mapped), VrmaRest::from_mapped(&mapped))
}

/// A UDP input socket with a receive buffer of `buffer` bytes (the kernel may
/// cap it), so bursts from many senders wait in the kernel instead of being lost.
fn bind(what: &str, addr: SocketAddr, buffer: usize) -> Result<UdpSocket, BridgeError> {
    let open = || -> std::io::Result<UdpSocket> {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )?;
        // A smaller buffer than asked for still works: not an error.
        let _ = socket.set_recv_buffer_size(buffer);
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        UdpSocket::from_std(socket.into())
    };
    open().map_err(|source| BridgeError::Bind {
        what: what.to_owned(),
        addr,
        source,
    })
}

fn performer_name(name: &str) -> Result<PerformerName, BridgeError> {
    PerformerName::new(name).ok_or_else(|| BridgeError::PerformerName(name.to_owned()))
}

/// Runs the bridge until `shutdown` completes (or, without looping, the replays
/// end) and everything has been drained and written.
pub async fn run(
    config: BridgeConfig,
    options: RunOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<RunSummary, BridgeError> {
    let (skeletons, labs) = load_skeletons(&config)?;
    let skeleton_index = |name: &str| {
        skeletons
            .iter()
            .position(|s| s.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| BridgeError::Skeleton {
                name: format!("skeleton `{name}`"),
                message: "no such skeleton: add it to `skeletons`".into(),
            })
    };
    let mut lab_plans = Vec::new();
    for lab in &config.lab_inputs {
        let default = skeleton_index(&lab.skeleton)?;
        let mut subjects = HashMap::new();
        for (subject, skeleton) in &lab.subjects {
            subjects.insert(subject.clone(), skeleton_index(skeleton)?);
        }
        lab_plans.push((lab.listen, default, subjects));
    }
    let skeletons: Arc<[StreamSkeleton]> = skeletons.into();
    let labs: Arc<[Option<LabSkeleton>]> = labs.into();
    let (avatar, avatar_rest) = built_in_avatar();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (control_tx, control_rx) = std::sync::mpsc::channel::<SolverControl>();
    let (record_tx, record_rx) = mpsc::unbounded_channel();
    let stopping = Arc::new(AtomicBool::new(false));

    // The solver thread starts first (inputs need its handle to wake it) and waits
    // for its solver.
    let (solver_tx, solver_rx) = std::sync::mpsc::channel::<Solver>();
    let solver_stop = stopping.clone();
    let solver_thread = std::thread::Builder::new()
        .name("solver".into())
        .spawn(move || {
            if let Ok(solver) = solver_rx.recv() {
                solver.run(&solver_stop);
            }
        })
        .map_err(BridgeError::Thread)?;
    let wake = solver_thread.thread().clone();

    let p = &config.pipeline;
    let mut status = Status::default();
    let mut input_rings: Vec<InputRing> = Vec::new();
    // Every input: its own ring to the solver, counted in the status.
    let mut new_input = |name: String| {
        let (port, ring) = input_ring(&name, p.input_ring, wake.clone());
        status.inputs.push((name, ring.stats.clone()));
        input_rings.push(ring);
        port
    };
    let mut output_ports: Vec<OutputPort> = Vec::new();
    let mut inputs = JoinSet::new();
    let mut replays = JoinSet::new();
    let mut outputs = JoinSet::new();

    for (i, vmc) in config.vmc_inputs.iter().enumerate() {
        let name = format!("vmc-in:{}", vmc.listen);
        let socket = bind(&format!("VMC input {i}"), vmc.listen, p.udp_receive_buffer)?;
        performer_name(&vmc.performer)?;
        let port = new_input(name);
        let task = VmcInput {
            socket,
            port,
            performer: vmc.performer.clone(),
            devices: vmc.device_points(),
            rest: match &vmc.rest {
                None => None,
                Some(path) => Some(Arc::new(sender_rest(path)?)),
            },
            record: record_tx.clone(),
            shutdown: stop_rx.clone(),
        };
        inputs.spawn(async move {
            if let Err(e) = task.run().await {
                tracing::error!(%e, "VMC input ended");
            }
        });
    }
    for (i, (listen, default_skeleton, subjects)) in lab_plans.into_iter().enumerate() {
        let name = format!("lab-in:{listen}");
        let socket = bind(&format!("lab OSC input {i}"), listen, p.udp_receive_buffer)?;
        let port = new_input(name);
        let task = LabInput {
            socket,
            port,
            assembler: LabAssembler::new(p.max_performers),
            skeletons: labs.clone(),
            default_skeleton,
            subjects,
            record: record_tx.clone(),
            shutdown: stop_rx.clone(),
        };
        inputs.spawn(async move {
            if let Err(e) = task.run().await {
                tracing::error!(%e, "lab OSC input ended");
            }
        });
    }
    for (i, vrchat) in config.vrchat_inputs.iter().enumerate() {
        let name = format!("vrchat-in:{}", vrchat.listen);
        let socket = bind(
            &format!("VRChat OSC input {i}"),
            vrchat.listen,
            p.udp_receive_buffer,
        )?;
        let port = new_input(name);
        let task = VrchatInput {
            socket,
            port,
            trackers: VrchatTrackers::new(vrchat.assignment()),
            performer: performer_name(&vrchat.performer)?,
            shutdown: stop_rx.clone(),
        };
        inputs.spawn(async move {
            if let Err(e) = task.run().await {
                tracing::error!(%e, "VRChat OSC input ended");
            }
        });
    }
    for source in options.replays {
        let name = format!("replay:{}", source.performer);
        let performer = performer_name(&source.performer)?;
        let port = new_input(name);
        let task = ReplayInput {
            replay: source.replay,
            names: source.names,
            performer,
            port,
            looping: options.loop_replays,
            fast: options.fast_replays,
            shutdown: stop_rx.clone(),
        };
        replays.spawn(task.run());
    }

    for out in &config.vmc_outputs {
        let name = format!("vmc-out:{}", out.to);
        let socket = vmc::socket_to(out.to)
            .await
            .map_err(|source| BridgeError::Connect {
                what: "VMC output".into(),
                addr: out.to,
                source,
            })?;
        let (port, ring) = output_ring(&name, p.output_ring, Delivery::Newest);
        let (latency, histogram) = Latency::new();
        status
            .outputs
            .push((name, ring.stats.clone(), Some(histogram)));
        output_ports.push(port);
        let shows = match out.performer.as_deref() {
            None => Shows::First,
            Some("*") => Shows::All,
            Some(name) => Shows::Named(name.to_owned()),
        };
        let task = VmcOutput {
            socket,
            encoder: VmcEncoder::new(out.names.into(), &avatar_rest),
            ring,
            min_interval: (out.rate_hz > 0.0).then(|| Duration::from_secs_f32(1.0 / out.rate_hz)),
            shows,
            latency,
            datagrams: Datagrams::new(),
        };
        outputs.spawn(task.run());
    }
    // The WebSocket server: its output ring now, its clients once the solver runs.
    let websocket = match &config.websocket {
        None => None,
        Some(ws) => {
            let listener = tokio::net::TcpListener::bind(ws.listen)
                .await
                .map_err(|source| BridgeError::Bind {
                    what: "WebSocket server".into(),
                    addr: ws.listen,
                    source,
                })?;
            let name = format!("websocket:{}", ws.listen);
            let (port, ring) = output_ring(&name, p.output_ring, Delivery::Newest);
            let (latency, histogram) = Latency::new();
            let (poses, _) = tokio::sync::broadcast::channel(ws.client_queue.max(1));
            let (sources, _) = tokio::sync::broadcast::channel(ws.client_queue.max(1));
            let subscribers = Arc::new(Subscribers::default());
            let port = port.with_sources(subscribers.sources.clone());
            let input_stats = Arc::new(InputStats::default());
            let output_stats = Arc::new(OutputStats::default());
            status.inputs.push((name.clone(), input_stats.clone()));
            status
                .outputs
                .push((name.clone(), ring.stats.clone(), Some(histogram)));
            status
                .outputs
                .push((format!("{name} clients"), output_stats.clone(), None));
            output_ports.push(port);
            outputs.spawn(
                WebSocketOutput {
                    ring,
                    poses: poses.clone(),
                    sources: sources.clone(),
                    skeletons: skeletons.clone(),
                    subscribers: subscribers.clone(),
                    latency,
                }
                .run(),
            );
            Some((
                listener,
                ws.clone(),
                poses,
                sources,
                subscribers,
                input_stats,
                output_stats,
            ))
        }
    };
    let recorder = {
        let r = &config.recorder;
        let wants_poses = Arc::new(AtomicBool::new(r.record_on_start));
        let (port, ring) = output_ring("recorder", p.recorder_ring, Delivery::Every);
        status
            .outputs
            .push(("recorder".into(), ring.stats.clone(), None));
        output_ports.push(port.with_poses_gate(wants_poses.clone()));
        tokio::spawn(
            Recorder {
                ring,
                commands: record_rx,
                dir: r.dir.clone(),
                flush_interval: Duration::from_millis(r.flush_ms),
                sync: r.sync,
                record_all: r.record_on_start,
                rest: avatar_rest.clone(),
                wants_poses,
            }
            .run(),
        )
    };
    let monitor_interval = Duration::from_secs_f32(config.status.monitor_interval_s.max(0.0));
    if options.monitor && !monitor_interval.is_zero() {
        let (port, ring) = output_ring("monitor", p.output_ring, Delivery::Newest);
        output_ports.push(port);
        outputs.spawn(
            crate::io::outputs::monitor::Monitor {
                ring,
                interval: monitor_interval,
                shutdown: stop_rx.clone(),
            }
            .run(),
        );
    }

    let skeletons_for_clients = skeletons.clone();
    let solver = Solver::new(
        SolverConfig {
            performer_timeout: Duration::from_secs_f32(p.performer_timeout_s),
            max_performers: p.max_performers,
            humanoid: config.performer_defaults.humanoid.settings(),
            skeleton: config.performer_defaults.skeleton.settings(),
            trackers: config.performer_defaults.trackers.settings(),
            performers: config
                .performers
                .iter()
                .map(|(name, c)| (name.clone(), c.settings()))
                .collect::<HashMap<_, _>>(),
        },
        skeletons,
        avatar,
        input_rings,
        output_ports,
        control_rx,
    );
    status.solver = solver.stats.clone();
    // The thread waits for exactly this message.
    let _ = solver_tx.send(solver);
    let mut server = None;
    if let Some((listener, ws, poses, sources, subscribers, input_stats, output_stats)) = websocket
    {
        let shared = Arc::new(Shared {
            token: ws.token.clone(),
            max_message_bytes: ws.max_message_bytes,
            skeletons: skeletons_for_clients,
            solver: control_tx.clone(),
            solver_thread: wake.clone(),
            input_ring: p.input_ring,
            input_stats,
            output_stats,
            poses,
            sources,
            subscribers,
            record: record_tx.clone(),
            status: status.clone(),
            config_file: options.config_file.clone(),
        });
        server = Some(tokio::spawn(
            WebServer {
                listener,
                shared,
                rig: avatar_rest.clone(),
                recordings: config.recorder.dir.clone(),
                shutdown: stop_rx.clone(),
            }
            .run(),
        ));
    }
    drop(control_tx);

    let interval = Duration::from_secs_f32(config.status.log_interval_s.max(0.0));
    let status_task = {
        let status = status.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            if interval.is_zero() {
                return;
            }
            let mut tick = tokio::time::interval(interval);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tick.tick() => tracing::info!("{}", status.line()),
                    _ = stop.changed() => return,
                }
            }
        })
    };

    let endpoints: Vec<String> = status
        .inputs
        .iter()
        .map(|(n, _)| n.clone())
        .chain(status.outputs.iter().map(|(n, _, _)| n.clone()))
        .collect();
    let ready = format!("ready: {}", endpoints.join(", "));
    tracing::info!("{ready}");
    if let Some(on_ready) = options.on_ready {
        on_ready(&ready);
    }
    let has_replays = !replays.is_empty();
    let replays_done = async { while replays.join_next().await.is_some() {} };
    tokio::pin!(shutdown);
    tokio::select! {
        () = &mut shutdown => {}
        () = replays_done, if has_replays && !options.loop_replays => {}
    }

    // 1. Inputs stop.
    let _ = stop_tx.send(true);
    while inputs.join_next().await.is_some() {}
    if let Some(server) = server {
        let _ = server.await;
    }
    replays.abort_all();
    while replays.join_next().await.is_some() {}
    // 2. The solver drains and ends.
    stopping.store(true, Ordering::Relaxed);
    solver_thread.thread().unpark();
    let joined = tokio::task::spawn_blocking(move || solver_thread.join()).await;
    if !matches!(joined, Ok(Ok(()))) {
        tracing::error!("the solver thread panicked");
    }
    // 3. Outputs drain and end; the recorder writes every open take.
    while outputs.join_next().await.is_some() {}
    let takes = recorder.await.unwrap_or_else(|e| {
        tracing::error!("the recorder failed: {e}");
        Vec::new()
    });
    let _ = status_task.await;
    Ok(RunSummary {
        status: status.report(),
        line: status.line(),
        takes,
    })
}
