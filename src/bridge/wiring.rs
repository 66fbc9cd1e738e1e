//! Start-up in stages: each stage binds its sockets, makes its rings and spawns
//! its tasks, counting every input and output in the status. The solver starts
//! last among the pipeline's parts, once it knows every ring; the web server
//! starts after it, since its clients talk to the solver. The NATS stages are in
//! `nats`.

mod nats;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinSet;

use super::config::{
    BridgeConfig, PerformerOverrides, PipelineConfig, RecorderConfig, VmcInputConfig,
    VmcOutputConfig, VrchatInputConfig, WebSocketConfig,
};
use super::start::{AvatarPlan, LabPlan, Skeletons, bind, performer_name};
use super::{BridgeError, ReplaySource};
use crate::formats::vrma::VrmaRest;
use crate::io::inputs::lab::LabInput;
use crate::io::inputs::replay::ReplayInput;
use crate::io::inputs::vmc::VmcInput;
use crate::io::inputs::vrchat::VrchatInput;
use crate::io::outputs::monitor::Monitor;
use crate::io::outputs::vmc::{self, Shows, VmcOutput};
use crate::io::rate_cap::RateCap;
use crate::io::web::WebServer;
use crate::io::web::avatars::ConfiguredAvatars;
use crate::io::web::guard::Guard;
use crate::io::web::websocket::{
    ClientRules, Controls, Feeds, SaveCalibration, Shared, Subscribers, WebSocketOutput,
};
use crate::pipeline::solver::{SettingsByKind, Solver, SolverConfig, SolverControl};
use crate::pipeline::status::{Latency, Status};
use crate::pipeline::{
    Delivery, InputRing, InputStats, OutputPort, OutputStats, input_ring, output_ring,
};
use crate::protocol::lab_osc::LabAssembler;
use crate::protocol::vmc::Datagrams;
use crate::protocol::vmc::frames::SenderRest;
use crate::protocol::vrchat::VrchatTrackers;
use crate::record::recorder::{RecordCommand, Recorder, TakeBounds, Takes};

/// The solver's thread, started before anything that must wake it; it waits for
/// its `Solver`, which `Wiring::start_solver` sends once every ring exists.
pub(super) struct SolverThread {
    pub handle: JoinHandle<()>,
    solver: std::sync::mpsc::Sender<Solver>,
    /// Closes when the thread ends, however it ends: the thread holds the sender,
    /// which is dropped on its return and as a panic unwinds it alike. Before the
    /// bridge is told to stop, that is a bug stopping the solver (a panic outside
    /// any one frame's solve, which `Solver` catches itself).
    pub ended: oneshot::Receiver<()>,
}

impl SolverThread {
    /// Starts the thread; it runs its solver until `stopping` is set.
    pub fn start(stopping: Arc<AtomicBool>) -> Result<Self, BridgeError> {
        let (solver, solver_rx) = std::sync::mpsc::channel::<Solver>();
        let (alive, ended) = oneshot::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("solver".into())
            .spawn(move || {
                let _alive = alive;
                if let Ok(solver) = solver_rx.recv() {
                    solver.run(&stopping);
                }
            })
            .map_err(BridgeError::Thread)?;
        Ok(Self {
            handle,
            solver,
            ended,
        })
    }

    pub fn wake(&self) -> Thread {
        self.handle.thread().clone()
    }
}

/// The WebSocket port, bound and fed by its output, waiting for the solver.
pub(super) struct WebSocketPlan {
    listener: TcpListener,
    config: WebSocketConfig,
    feeds: Feeds,
    input_stats: Arc<InputStats>,
    output_stats: Arc<OutputStats>,
}

/// Everything start-up has made so far.
pub(super) struct Wiring<'a> {
    pipeline: &'a PipelineConfig,
    /// Wakes the solver when an input pushed a frame.
    pub wake: Thread,
    /// Turns `true` when inputs must stop.
    pub stop: watch::Receiver<bool>,
    /// Where record commands go (the recorder's queue).
    pub record: mpsc::UnboundedSender<RecordCommand>,
    pub status: Status,
    input_rings: Vec<InputRing>,
    output_ports: Vec<OutputPort>,
    pub inputs: JoinSet<()>,
    pub replays: JoinSet<u64>,
    pub outputs: JoinSet<()>,
}

impl<'a> Wiring<'a> {
    /// Nothing wired yet; the receiver of record commands is the recorder's.
    pub fn new(
        pipeline: &'a PipelineConfig,
        wake: Thread,
        stop: watch::Receiver<bool>,
    ) -> (Self, mpsc::UnboundedReceiver<RecordCommand>) {
        let (record, record_commands) = mpsc::unbounded_channel();
        let wiring = Self {
            pipeline,
            wake,
            stop,
            record,
            status: Status::default(),
            input_rings: Vec::new(),
            output_ports: Vec::new(),
            inputs: JoinSet::new(),
            replays: JoinSet::new(),
            outputs: JoinSet::new(),
        };
        (wiring, record_commands)
    }

    /// A new input: its own ring to the solver, counted in the status.
    fn new_input(&mut self, name: String) -> crate::pipeline::InputPort {
        let (port, ring) = input_ring(&name, self.pipeline.input_ring, self.wake.clone());
        self.status.inputs.push((name, ring.stats.clone()));
        self.input_rings.push(ring);
        port
    }

    /// Spawns an input task, logging how it ended if it failed.
    fn spawn_input(
        &mut self,
        what: &'static str,
        task: impl Future<Output = std::io::Result<()>> + Send + 'static,
    ) {
        self.inputs.spawn(async move {
            if let Err(e) = task.await {
                tracing::error!(%e, "{what} ended");
            }
        });
    }

    /// Binds and starts the VMC inputs; `rests` holds each one's sender rest
    /// (`start::sender_rests`), in order.
    pub fn vmc_inputs(
        &mut self,
        inputs: &[VmcInputConfig],
        rests: Vec<Option<Arc<SenderRest>>>,
    ) -> Result<(), BridgeError> {
        for ((i, vmc), rest) in inputs.iter().enumerate().zip(rests) {
            let name = format!("vmc-in:{}", vmc.listen);
            let socket = bind(
                &format!("VMC input {i}"),
                vmc.listen,
                self.pipeline.udp_receive_buffer,
            )?;
            performer_name(&vmc.performer)?;
            let port = self.new_input(name);
            let task = VmcInput {
                socket,
                port,
                performer: vmc.performer.clone(),
                devices: vmc.device_points(),
                rest,
                record: self.record.clone(),
                record_commands: vmc.record_commands,
                sender_timeout: Duration::from_secs_f32(self.pipeline.performer_timeout_s),
                shutdown: self.stop.clone(),
            };
            self.spawn_input("VMC input", task.run());
        }
        Ok(())
    }

    pub fn lab_inputs(
        &mut self,
        plans: Vec<LabPlan>,
        skeletons: &Skeletons,
    ) -> Result<(), BridgeError> {
        for (i, plan) in plans.into_iter().enumerate() {
            let name = format!("lab-in:{}", plan.listen);
            let socket = bind(
                &format!("lab OSC input {i}"),
                plan.listen,
                self.pipeline.udp_receive_buffer,
            )?;
            let port = self.new_input(name);
            let task = LabInput {
                socket,
                port,
                assembler: LabAssembler::new(self.pipeline.max_performers),
                skeletons: skeletons.labs.clone(),
                default_skeleton: plan.default_skeleton,
                subjects: plan.subjects,
                record: self.record.clone(),
                record_commands: plan.record_commands,
                shutdown: self.stop.clone(),
            };
            self.spawn_input("lab OSC input", task.run());
        }
        Ok(())
    }

    pub fn vrchat_inputs(&mut self, inputs: &[VrchatInputConfig]) -> Result<(), BridgeError> {
        for (i, vrchat) in inputs.iter().enumerate() {
            let name = format!("vrchat-in:{}", vrchat.listen);
            let socket = bind(
                &format!("VRChat OSC input {i}"),
                vrchat.listen,
                self.pipeline.udp_receive_buffer,
            )?;
            let port = self.new_input(name);
            let task = VrchatInput {
                socket,
                port,
                trackers: VrchatTrackers::new(vrchat.assignment()),
                performer: performer_name(&vrchat.performer)?,
                shutdown: self.stop.clone(),
            };
            self.spawn_input("VRChat OSC input", task.run());
        }
        Ok(())
    }

    /// Each recording as a performer, looping or not, in real time or `fast`.
    pub fn replays(
        &mut self,
        sources: Vec<ReplaySource>,
        looping: bool,
        fast: bool,
    ) -> Result<(), BridgeError> {
        for source in sources {
            let name = format!("replay:{}", source.performer);
            let performer = performer_name(&source.performer)?;
            let port = self.new_input(name);
            let task = ReplayInput {
                replay: source.replay,
                names: source.names,
                performer,
                port,
                looping,
                fast,
                shutdown: self.stop.clone(),
            };
            self.replays.spawn(task.run());
        }
        Ok(())
    }

    pub async fn vmc_outputs(
        &mut self,
        outputs: &[VmcOutputConfig],
        avatars: &AvatarPlan,
    ) -> Result<(), BridgeError> {
        for (i, out) in outputs.iter().enumerate() {
            let name = format!("vmc-out:{}", out.to);
            let socket = vmc::socket_to(out.to)
                .await
                .map_err(|source| BridgeError::Connect {
                    what: "VMC output".into(),
                    addr: out.to,
                    source,
                })?;
            let (port, ring) = output_ring(&name, self.pipeline.output_ring, Delivery::Newest);
            let (latency, histogram) = Latency::new();
            self.status
                .outputs
                .push((name, ring.stats.clone(), Some(histogram)));
            self.output_ports.push(port);
            let shows = match out.performer.as_deref() {
                None => Shows::First,
                Some("*") => Shows::All,
                Some(name) => Shows::Named(name.to_owned()),
            };
            let task = VmcOutput {
                socket,
                // Bone offsets of the avatar the receiver shows.
                encoder: avatars.output_encoder(i, out.names.into()),
                ring,
                rate_cap: RateCap::from_hz(out.rate_hz),
                shows,
                latency,
                datagrams: Datagrams::new(),
            };
            self.outputs.spawn(task.run());
        }
        Ok(())
    }

    /// The WebSocket port: bound, with its output ring and output task now; its
    /// clients once the solver runs (`web_server`).
    pub async fn websocket_output(
        &mut self,
        ws: &WebSocketConfig,
        skeletons: &Skeletons,
    ) -> Result<WebSocketPlan, BridgeError> {
        let listener = TcpListener::bind(ws.listen)
            .await
            .map_err(|source| BridgeError::Bind {
                what: "WebSocket server".into(),
                addr: ws.listen,
                source,
            })?;
        let name = format!("websocket:{}", ws.listen);
        let (port, ring) = output_ring(&name, self.pipeline.output_ring, Delivery::Newest);
        let (latency, histogram) = Latency::new();
        let (poses, _) = broadcast::channel(ws.client_queue.max(1));
        let (sources, _) = broadcast::channel(ws.client_queue.max(1));
        let subscribers = Arc::new(Subscribers::default());
        let port = port.with_sources(subscribers.sources.clone());
        let input_stats = Arc::new(InputStats::default());
        let output_stats = Arc::new(OutputStats::default());
        self.status.inputs.push((name.clone(), input_stats.clone()));
        self.status
            .outputs
            .push((name.clone(), ring.stats.clone(), Some(histogram)));
        self.status
            .outputs
            .push((format!("{name} clients"), output_stats.clone(), None));
        self.output_ports.push(port);
        self.outputs.spawn(
            WebSocketOutput {
                ring,
                poses: poses.clone(),
                sources: sources.clone(),
                skeletons: skeletons.streams.clone(),
                subscribers: subscribers.clone(),
                latency,
            }
            .run(),
        );
        Ok(WebSocketPlan {
            listener,
            config: ws.clone(),
            feeds: Feeds {
                poses,
                sources,
                subscribers,
            },
            input_stats,
            output_stats,
        })
    }

    /// The recorder: its ring never drops, and it takes poses only while some
    /// take is open (or from the start with `record_on_start`).
    pub fn recorder(
        &mut self,
        config: &RecorderConfig,
        avatar_rest: &VrmaRest,
        commands: mpsc::UnboundedReceiver<RecordCommand>,
    ) -> tokio::task::JoinHandle<Takes> {
        let wants_poses = Arc::new(AtomicBool::new(config.record_on_start));
        let (port, ring) = output_ring("recorder", self.pipeline.recorder_ring, Delivery::Every);
        self.status
            .outputs
            .push(("recorder".into(), ring.stats.clone(), None));
        self.output_ports
            .push(port.with_poses_gate(wants_poses.clone()));
        tokio::spawn(
            Recorder {
                ring,
                commands,
                dir: config.dir.clone(),
                flush_interval: Duration::from_millis(config.flush_ms),
                sync: config.sync,
                record_all: config.record_on_start,
                bounds: TakeBounds::new(
                    config.max_minutes,
                    config.max_megabytes,
                    config.min_free_megabytes,
                ),
                rest: avatar_rest.clone(),
                wants_poses,
            }
            .run(),
        )
    }

    /// The console monitor: when a performer appears and goes, and with `motion`,
    /// each performer's newest pose that often (without, it is sent no poses).
    pub fn monitor(&mut self, motion: Option<Duration>, ready: watch::Receiver<bool>) {
        let (port, ring) = output_ring("monitor", self.pipeline.output_ring, Delivery::Newest);
        let wants_poses = Arc::new(AtomicBool::new(motion.is_some()));
        self.output_ports.push(port.with_poses_gate(wants_poses));
        self.outputs.spawn(
            Monitor {
                ring,
                interval: motion,
                ready,
                shutdown: self.stop.clone(),
            }
            .run(),
        );
    }

    /// Hands the solver every ring; returns the sender of control requests.
    pub fn start_solver(
        &mut self,
        thread: &SolverThread,
        config: &BridgeConfig,
        skeletons: &Skeletons,
        avatars: &AvatarPlan,
    ) -> std::sync::mpsc::Sender<SolverControl> {
        let p = self.pipeline;
        let (control, control_rx) = std::sync::mpsc::channel::<SolverControl>();
        let defaults = &config.performer_defaults;
        let has_default_avatar = config.default_avatar().is_some();
        // A performer named only by a VMC output's avatar changes no setting.
        let no_overrides = PerformerOverrides::default();
        let solver = Solver::new(
            SolverConfig {
                performer_timeout: Duration::from_secs_f32(p.performer_timeout_s),
                max_performers: p.max_performers,
                humanoid: defaults.humanoid.settings(has_default_avatar),
                skeleton: defaults.skeleton.settings(has_default_avatar),
                trackers: defaults.trackers.settings(has_default_avatar),
                performers: config
                    .named_performers()
                    .into_iter()
                    .map(|name| {
                        let own = config.performers.get(name).unwrap_or(&no_overrides);
                        let has_avatar = config.avatar_for(name).is_some();
                        let settings = SettingsByKind {
                            humanoid: own.apply(&defaults.humanoid).settings(has_avatar),
                            skeleton: own.apply(&defaults.skeleton).settings(has_avatar),
                            trackers: own.apply(&defaults.trackers).settings(has_avatar),
                            avatar: avatars.index(name),
                        };
                        (name.to_owned(), settings)
                    })
                    .collect::<HashMap<_, _>>(),
            },
            skeletons.streams.clone(),
            avatars.avatars.clone(),
            std::mem::take(&mut self.input_rings),
            std::mem::take(&mut self.output_ports),
            control_rx,
        );
        self.status.solver = solver.stats.clone();
        // The thread waits for exactly this message.
        let _ = thread.solver.send(solver);
        control
    }

    /// The web server on the WebSocket port: pages, data routes and clients.
    pub fn web_server(
        &self,
        plan: WebSocketPlan,
        skeletons: &Skeletons,
        controls: Controls,
        avatar_rest: &VrmaRest,
        recordings: std::path::PathBuf,
        avatars: ConfiguredAvatars,
    ) -> tokio::task::JoinHandle<()> {
        let guard = Guard::new(&plan.config.allowed_hosts, &plan.config.allowed_origins);
        let shared = Arc::new(Shared {
            rules: ClientRules {
                token: plan.config.token.clone(),
                max_message_bytes: plan.config.max_message_bytes,
                input_ring: self.pipeline.input_ring,
            },
            skeletons: skeletons.streams.clone(),
            feeds: plan.feeds,
            controls,
            input_stats: plan.input_stats,
            output_stats: plan.output_stats,
            status: self.status.clone(),
        });
        tokio::spawn(
            WebServer {
                listener: plan.listener,
                shared,
                rig: avatar_rest.clone(),
                recordings,
                avatars,
                guard,
                shutdown: self.stop.clone(),
            }
            .run(),
        )
    }

    /// Logs the status line every `interval` until stopped (never when zero).
    pub fn status_log(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let status = self.status.clone();
        let mut stop = self.stop.clone();
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
    }

    /// The line naming every endpoint, for the log and the caller.
    /// Each endpoint once: the WebSocket port, an input and an output with a
    /// third count for its clients, is one endpoint.
    pub fn ready_line(&self) -> String {
        let mut endpoints: Vec<&str> = Vec::new();
        let names = self.status.inputs.iter().map(|(n, _)| n.as_str());
        let outputs = self.status.outputs.iter().map(|(n, _, _)| n.as_str());
        for name in names.chain(outputs) {
            let endpoint = name.strip_suffix(" clients").unwrap_or(name);
            if !endpoints.contains(&endpoint) {
                endpoints.push(endpoint);
            }
        }
        format!("ready: {}", endpoints.join(", "))
    }
}

/// Keeps calibrations taken live: writes each into the configuration file the
/// bridge runs on (off the async threads) and answers with the file, until every
/// client is gone. Without a file, a calibration lives only for this run.
pub(super) async fn keep_calibrations(
    file: Option<std::path::PathBuf>,
    mut requests: mpsc::UnboundedReceiver<SaveCalibration>,
) {
    while let Some(save) = requests.recv().await {
        let Some(path) = file.clone() else {
            let _ = save.reply.send(Ok(None));
            continue;
        };
        let performer = save.performer.clone();
        let calibration = save.calibration;
        let saved = tokio::task::spawn_blocking(move || {
            super::config::save_calibration(&path, &performer, &calibration).map(|()| path)
        })
        .await;
        let answer = match saved {
            Ok(Ok(path)) => {
                tracing::info!(performer = save.performer, file = %path.display(), "calibration saved");
                Ok(Some(path))
            }
            Ok(Err(e)) => {
                tracing::warn!(performer = save.performer, "calibration not saved: {e}");
                Err(e)
            }
            Err(e) => Err(e.to_string()),
        };
        let _ = save.reply.send(answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ended` stays open while the solver thread runs and closes as it ends, so
    /// the bridge hears of a solver gone before its shutdown. (The thread here ends
    /// by returning, with no solver sent; a panic drops the same sender as it
    /// unwinds the thread.)
    #[tokio::test]
    async fn the_bridge_hears_when_the_solver_thread_ends() {
        let SolverThread {
            handle,
            solver,
            mut ended,
        } = SolverThread::start(Arc::new(AtomicBool::new(false))).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(ended.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        drop(solver);
        let closed = tokio::time::timeout(Duration::from_secs(10), ended).await;
        assert!(matches!(closed, Ok(Err(_))), "{closed:?}");
        assert!(handle.join().is_ok());
    }
}
