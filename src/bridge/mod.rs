//! The live bridge: `run` loads the skeletons, binds the configured inputs and
//! outputs, starts the solver thread and the tokio tasks around it (`wiring`, in
//! stages), and stops them all, in order (`shutdown`), when the caller's shutdown
//! future completes (Ctrl-C, SIGTERM or SIGHUP in the CLI, a oneshot in tests), the
//! replays end, or the solver thread stops on a bug (a panic it could not catch).
//! `config` reads and writes the configuration file.

pub mod config;
mod shutdown;
mod start;
mod wiring;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::humanoid::CustomNames;
use crate::io::web::avatars::ConfiguredAvatars;
use crate::io::web::websocket::Controls;
use crate::record::recorder::FinishedTake;
use crate::takes::replay::Replay;
use config::BridgeConfig;
use shutdown::RunningBridge;
use start::{AvatarPlan, Skeletons};
use wiring::{SolverThread, Wiring, keep_calibrations};

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
    /// A file the configuration names that cannot be used: `place` is the
    /// configuration file and the key (`bridge.json: vmcInputs[0].rest`),
    /// `message` the loader's reason.
    #[error("{place}: {message}")]
    Setting { place: String, message: String },
    #[error("performer name `{0}` is empty or longer than 32 bytes")]
    PerformerName(String),
    #[error("cannot start the solver thread")]
    Thread(#[source] std::io::Error),
    #[error(transparent)]
    Nats(#[from] crate::io::nats::NatsError),
    #[error("cannot subscribe to NATS subjects `{subjects}`")]
    Subscribe {
        subjects: String,
        #[source]
        source: async_nats::SubscribeError,
    },
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
    /// Print the monitor lines (each performer's motion) every
    /// `status.monitorIntervalS`.
    pub monitor: bool,
    /// Print when a performer appears and when it goes.
    pub announce: bool,
    /// Called once every socket is bound and the solver runs, with a line naming
    /// the endpoints.
    pub on_ready: Option<ReadyCallback>,
    /// The configuration file `config` came from, if any: calibrations taken
    /// live are saved into it.
    pub config_file: Option<PathBuf>,
    /// The avatar files given on the command line (`run --avatar`): an error
    /// loading one names the flag, not a key of the configuration.
    pub avatar_flags: Vec<PathBuf>,
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
    /// The solver thread panicked (outside any one frame's solve, which it
    /// catches): the bridge stopped on that, not on the caller's shutdown.
    pub solver_panicked: bool,
}

/// The avatar the viewer draws a performer on (`Some(name)`), or every performer
/// without one of its own (`None`): the config's avatar keys (`avatar`, each
/// performer's, the VMC outputs'), as `run --avatar` left them, served as
/// `avatars` made them for the viewer when they loaded.
fn configured_avatars(config: &BridgeConfig, avatars: &AvatarPlan) -> ConfiguredAvatars {
    let config = config.clone();
    let viewers = avatars.viewers.clone();
    Arc::new(move |performer: Option<&str>| {
        match performer {
            Some(name) => config.avatar_for(name),
            None => config.default_avatar(),
        }
        .map(|path| start::viewer_of(&viewers, path))
    })
}

/// Runs the bridge until `shutdown` completes (or, without looping, the replays
/// end) and everything has been drained and written.
pub async fn run(
    config: BridgeConfig,
    options: RunOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<RunSummary, BridgeError> {
    // Loaded before anything binds: a bad skeleton fails start-up at once.
    let file = options.config_file.as_deref();
    let skeletons = Skeletons::load(&config, file)?;
    let lab_plans = skeletons.lab_plans(&config.lab_inputs)?;
    let avatars = AvatarPlan::load(&config, file, &options.avatar_flags)?;
    let sender_rests = start::sender_rests(&config.vmc_inputs, file)?;
    let avatar_rest = avatars.default_rest().clone();

    // The solver thread starts first: inputs need its handle to wake it.
    let stopping = Arc::new(AtomicBool::new(false));
    let solver_thread = SolverThread::start(stopping.clone())?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let (mut wiring, record_commands) =
        Wiring::new(&config.pipeline, solver_thread.wake(), stop_rx);

    wiring.vmc_inputs(&config.vmc_inputs, sender_rests)?;
    wiring.lab_inputs(lab_plans, &skeletons)?;
    wiring.vrchat_inputs(&config.vrchat_inputs)?;
    wiring.replays(options.replays, options.loop_replays, options.fast_replays)?;
    let received_from = wiring
        .nats_inputs(&config.nats_inputs, &config.bridge_name)
        .await?;
    wiring.vmc_outputs(&config.vmc_outputs, &avatars).await?;
    let bridge = &config.bridge_name;
    wiring
        .nats_outputs(
            &config.nats_outputs,
            bridge,
            &received_from,
            &skeletons.streams,
        )
        .await?;
    let websocket = match &config.websocket {
        Some(ws) => Some(wiring.websocket_output(ws, &skeletons).await?),
        None => None,
    };
    let recorder = wiring.recorder(&config.recorder, &avatar_rest, record_commands);
    let motion = Duration::from_secs_f32(config.status.monitor_interval_s.max(0.0));
    let motion = (options.monitor && !motion.is_zero()).then_some(motion);
    // The console's lines wait for the ready line.
    let (said_ready, ready) = watch::channel(false);
    if options.announce || motion.is_some() {
        wiring.monitor(motion, ready);
    }
    let solver = wiring.start_solver(&solver_thread, &config, &skeletons, &avatars);
    let (calibrations, calibration_requests) = mpsc::unbounded_channel();
    let calibration_keeper =
        tokio::spawn(keep_calibrations(options.config_file, calibration_requests));
    let server = websocket.map(|plan| {
        let controls = Controls {
            solver,
            solver_thread: wiring.wake.clone(),
            record: wiring.record.clone(),
            calibrations,
        };
        wiring.web_server(
            plan,
            &skeletons,
            controls,
            &avatar_rest,
            config.recorder.dir.clone(),
            configured_avatars(&config, &avatars),
        )
    });
    let status_log = wiring.status_log(Duration::from_secs_f32(
        config.status.log_interval_s.max(0.0),
    ));

    // Said once: to the caller, which prints it, or else in the log.
    let ready = wiring.ready_line();
    match options.on_ready {
        Some(on_ready) => on_ready(&ready),
        None => tracing::info!("{ready}"),
    }
    said_ready.send_replace(true);
    let mut running = RunningBridge {
        stop: stop_tx,
        inputs: wiring.inputs,
        server,
        calibration_keeper,
        replays: wiring.replays,
        stopping,
        solver_thread,
        outputs: wiring.outputs,
        recorder,
        status_log,
        status: wiring.status,
    };
    let has_replays = !running.replays.is_empty();
    let replays = &mut running.replays;
    let replays_done = async { while replays.join_next().await.is_some() {} };
    let solver_ended = &mut running.solver_thread.ended;
    tokio::pin!(shutdown);
    tokio::select! {
        () = &mut shutdown => {}
        () = replays_done, if has_replays && !options.loop_replays => {}
        _ = solver_ended => {
            tracing::error!("the solver thread stopped: stopping the bridge, finishing every take");
        }
    }
    Ok(running.shut_down().await)
}
