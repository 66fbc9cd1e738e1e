//! `run`: the live bridge, on a configuration file or the embedded defaults, with
//! recordings replayed as performers. Stops at Ctrl-C, SIGTERM or SIGHUP (finishing
//! every open recording), after `--duration`, or when the replays end (without
//! `--loop`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mocap_bridge::bridge::config::{BridgeConfig, ConfigError};
use mocap_bridge::bridge::{self, ReplaySource, RunOptions};
use mocap_bridge::formats::LoadOptions;
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::record::recorder::not_written;
use mocap_bridge::takes::load::{LoadedTake, is_framed, load_take};
use mocap_bridge::takes::replay::{Replay, stream_fps};

use super::CliResult;

/// Options of `run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Configuration (default: the embedded defaults, spelled out in
    /// config/bridge.json).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Play a recording as a performer named after the file (.vrma, BVH, glTF
    /// clip; repeatable). Without --loop the bridge stops when they have all ended.
    #[arg(long, value_name = "FILE")]
    pub replay: Vec<PathBuf>,
    /// Play the built-in lab19 performance as the performer `demo`.
    #[arg(long)]
    pub demo: bool,
    /// Loop the replays until interrupted.
    #[arg(long = "loop")]
    pub repeat: bool,
    /// Play replays as fast as the pipeline takes them (tests, benchmarks).
    #[arg(long)]
    pub fast: bool,
    /// Stream replays at this many frames per second, each pose interpolated as
    /// the file says (default: the config's `replay.fps`, else a BVH's own frame
    /// rate, else 60).
    #[arg(long, value_name = "FPS", value_parser = super::parse_fps)]
    pub fps: Option<f32>,
    /// Record every performer from its first frame into the recordings folder.
    #[arg(long)]
    pub record: bool,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f32>,
    /// Do not print each performer's motion every status interval.
    #[arg(long)]
    pub quiet: bool,
    /// The avatar the poses are solved for (.vrm, .glb/.gltf, .bvh, skeleton
    /// .json): FILE for every performer, NAME=FILE for one (repeatable; the text
    /// before the first `=` is a name when it has no `/`, `\` or `.`: write
    /// ./a=b.vrm for a file with `=` in its name). Overrides the config's
    /// `avatar` and `performers.<name>.avatar`, not a VMC output's `avatar` (a
    /// receiver's: FILE must be the same as one showing every performer); turns
    /// mocap-mode IK on unless the config says `enabled: false`.
    #[arg(long, value_name = "[NAME=]FILE")]
    pub avatar: Vec<String>,
}

/// One `--avatar`: the performer it is for (`None`: every performer) and the file.
fn avatar_arg(text: &str) -> (Option<&str>, PathBuf) {
    match text.split_once('=') {
        Some((name, file))
            if !name.is_empty() && !name.contains(['/', '\\', '.']) && !file.is_empty() =>
        {
            (Some(name), PathBuf::from(file))
        }
        _ => (None, PathBuf::from(text)),
    }
}

/// The `--avatar` arguments over the config's avatars: `--avatar FILE` first (it
/// replaces the config's `avatar` and the performers' own, not what a VMC
/// output's receiver shows: checked against those as `avatar` is, the error
/// naming `file`, the configuration file), then each `--avatar NAME=FILE`,
/// whatever their order.
fn set_avatars(
    config: &mut BridgeConfig,
    args: &[String],
    file: Option<&Path>,
) -> Result<(), ConfigError> {
    let avatars: Vec<_> = args.iter().map(|a| avatar_arg(a)).collect();
    if let Some((_, every)) = avatars.iter().rfind(|(name, _)| name.is_none()) {
        for own in config.performers.values_mut() {
            own.avatar = None;
        }
        config.avatar = Some(every.clone());
        // Without a file no output names an avatar.
        if let Some(file) = file {
            config.check_avatars(file, "run --avatar")?;
        }
    }
    for (name, file) in avatars {
        if let Some(name) = name {
            config.performers.entry(name.to_owned()).or_default().avatar = Some(file);
        }
    }
    Ok(())
}

/// A performer name from a file name: its stem, cut to 32 bytes, made unique.
fn replay_name(path: &std::path::Path, taken: &[String]) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("replay");
    let mut name: String = stem.chars().take(24).collect();
    if name.is_empty() {
        name = "replay".into();
    }
    let base = name.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// A take as a replayed performer, streamed on the grid `fps` (`None`: its own
/// frames).
fn replay_source(performer: String, take: LoadedTake, fps: Option<f32>) -> ReplaySource {
    let (replay, names) = match take {
        LoadedTake::Rig { mapped, motion } => (
            Replay::from_rig(&mapped, motion, fps),
            CustomNames::default(),
        ),
        LoadedTake::Normalized {
            mut replay, names, ..
        } => {
            replay.set_fps(fps);
            (*replay, names)
        }
    };
    ReplaySource {
        performer,
        replay,
        names,
    }
}

/// `run`.
pub fn run(args: RunArgs) -> CliResult<()> {
    let mut config = match &args.config {
        Some(path) => BridgeConfig::load(path)?,
        None => BridgeConfig::default(),
    };
    if args.record {
        config.recorder.record_on_start = true;
    }
    set_avatars(&mut config, &args.avatar, args.config.as_deref())?;
    let mut replays = Vec::new();
    let mut names: Vec<String> = Vec::new();
    // Replays are read as they are: their own units, axes and maps.
    let own = LoadOptions::default();
    let fps = args.fps.or(config.replay.fps);
    for path in &args.replay {
        let (_, take) = load_take(Some(path), &own, None, None, 1)?;
        let name = replay_name(path, &names);
        names.push(name.clone());
        let grid = stream_fps(fps, is_framed(Some(path)));
        replays.push(replay_source(name, take, grid));
    }
    if args.demo {
        let (_, take) = load_take(None, &own, None, None, 1)?;
        let grid = stream_fps(fps, is_framed(None));
        replays.push(replay_source("demo".into(), take, grid));
    }
    // Where to look, printed with the ready line.
    let viewer = config.websocket.as_ref().map(|ws| {
        let mut at = ws.listen;
        if at.ip().is_unspecified() {
            at.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let token = if ws.token.is_some() { "?token=..." } else { "" };
        format!("viewer: http://{at}/{token}  (WebXR sender: /xr)")
    });
    let options = RunOptions {
        replays,
        loop_replays: args.repeat,
        fast_replays: args.fast,
        monitor: !args.quiet,
        announce: true,
        config_file: args.config.clone(),
        avatar_flags: args.avatar.iter().map(|a| avatar_arg(a).1).collect(),
        on_ready: Some(Box::new(|line: &str| {
            let mut out = std::io::stdout().lock();
            // A closed stdout does not stop the bridge.
            let _ = writeln!(out, "{line}");
            if let Some(viewer) = viewer {
                let _ = writeln!(out, "{viewer}");
            }
            let _ = out.flush();
        })),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let duration = args.duration;
    let summary = runtime.block_on(async move {
        // Listening from now on, before anything binds: a stop that comes as soon
        // as the ready line is out still finishes the takes.
        let interrupts = Interrupts::listen();
        let shutdown = async move {
            let timer = async {
                match duration {
                    Some(s) if s.is_finite() && s >= 0.0 => {
                        tokio::time::sleep(Duration::from_secs_f32(s)).await;
                    }
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                () = timer => {}
                () = interrupts.received() => eprintln!("stopping: finishing recordings"),
            }
        };
        bridge::run(config, options, shutdown).await
    })?;
    // The takes are written; a console gone by now (a closed pipe) misses the summary.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", summary.line);
    for take in &summary.takes {
        let _ = if take.written {
            writeln!(
                out,
                "wrote {}: {}, {:.2} s ({})",
                take.file,
                super::frames(take.frames),
                take.seconds,
                take.performer
            )
        } else {
            writeln!(out, "{}", not_written(&take.performer, &take.file))
        };
    }
    if summary.solver_panicked {
        return Err(
            "the solver stopped on a bug (its panic is in the log above), so the bridge \
                    stopped; the takes above hold every frame solved until then"
                .into(),
        );
    }
    Ok(())
}

/// Ctrl-C, or on Unix SIGTERM (a service manager, `kill`) or SIGHUP (the terminal
/// closed, an ssh session dropped): each stops the bridge as Ctrl-C does. Each is
/// caught from `listen` on (a handler is installed when its stream is made, not
/// when it is first awaited); one whose handler cannot be installed is waited on
/// never.
struct Interrupts {
    #[cfg(unix)]
    signals: Vec<tokio::signal::unix::Signal>,
}

impl Interrupts {
    /// Installs the handlers (inside the runtime).
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let kinds = [
                SignalKind::interrupt(),
                SignalKind::terminate(),
                SignalKind::hangup(),
            ];
            Self {
                signals: kinds.into_iter().filter_map(|k| signal(k).ok()).collect(),
            }
        }
        #[cfg(not(unix))]
        {
            Self {}
        }
    }

    /// Completes when one of them arrives.
    async fn received(self) {
        #[cfg(unix)]
        {
            let waits = self.signals.into_iter().map(|mut s| {
                Box::pin(async move {
                    s.recv().await;
                })
            });
            if waits.len() == 0 {
                return std::future::pending().await;
            }
            futures_util::future::select_all(waits).await;
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop that comes before anything awaits it (the ready line just out, the
    /// bridge not yet waiting) is caught, not the end of the process.
    #[cfg(unix)]
    #[test]
    fn a_stop_signal_before_anything_waits_for_it_is_caught() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let interrupts = Interrupts::listen();
            let pid = std::process::id().to_string();
            let sent = std::process::Command::new("kill")
                .args(["-HUP", &pid])
                .status()
                .unwrap();
            assert!(sent.success());
            tokio::time::timeout(Duration::from_secs(30), interrupts.received())
                .await
                .expect("the hangup is caught");
        });
    }

    #[test]
    fn an_avatar_argument_is_for_one_performer_when_it_starts_with_a_name() {
        assert_eq!(
            avatar_arg("alice=models/a.vrm"),
            (Some("alice"), PathBuf::from("models/a.vrm"))
        );
        for file in ["models/a.vrm", "./x=y.vrm", "a.b=c.vrm", "=a.vrm", "alice="] {
            assert_eq!(avatar_arg(file), (None, PathBuf::from(file)), "{file}");
        }
    }

    #[test]
    fn avatar_arguments_override_the_config() {
        let text = r#"{"avatar": "all.vrm",
            "performers": {"alice": {"avatar": "alice.vrm"}, "bob": {"avatar": "bob.vrm"}}}"#;
        let config = || BridgeConfig::parse(Path::new("bridge.json"), text).unwrap();
        // One performer's: the others keep theirs.
        let mut one = config();
        set_avatars(
            &mut one,
            &["carol=carol.vrm".into(), "bob=b2.vrm".into()],
            None,
        )
        .unwrap();
        for (name, want) in [
            ("alice", "alice.vrm"),
            ("bob", "b2.vrm"),
            ("carol", "carol.vrm"),
            ("dave", "all.vrm"),
        ] {
            assert_eq!(one.avatar_for(name), Some(Path::new(want)), "{name}");
        }
        // Every performer's, whatever the order: a NAME=FILE still wins for NAME.
        let mut every = config();
        set_avatars(&mut every, &["bob=b2.vrm".into(), "new.vrm".into()], None).unwrap();
        for (name, want) in [("alice", "new.vrm"), ("bob", "b2.vrm"), ("dave", "new.vrm")] {
            assert_eq!(every.avatar_for(name), Some(Path::new(want)), "{name}");
        }
        // None: the config as it was.
        let mut none = config();
        set_avatars(&mut none, &[], None).unwrap();
        assert_eq!(none, config());
    }

    #[test]
    fn an_avatar_for_every_performer_must_be_the_one_a_receiver_of_all_shows() {
        let text = r#"{"vmcOutputs": [{"performer": "alice", "avatar": "alice.vrm"},
                                     {"performer": "*", "avatar": "all.vrm"}]}"#;
        let file = Path::new("bridge.json");
        let config = || BridgeConfig::parse(file, text).unwrap();
        let mut other = config();
        let error = set_avatars(&mut other, &["new.vrm".into()], Some(file)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "bridge.json: vmcOutputs[1].avatar: every performer already has avatar new.vrm from run --avatar"
        );
        // The same file is no conflict; the receiver naming alice still decides hers,
        // and `NAME=FILE` beats it.
        let mut same = config();
        set_avatars(
            &mut same,
            &["./all.vrm".into(), "bob=b.vrm".into()],
            Some(file),
        )
        .unwrap();
        for (name, want) in [
            ("alice", "alice.vrm"),
            ("bob", "b.vrm"),
            ("carol", "./all.vrm"),
        ] {
            assert_eq!(same.avatar_for(name), Some(Path::new(want)), "{name}");
        }
        let mut named = config();
        set_avatars(&mut named, &["alice=mine.vrm".into()], Some(file)).unwrap();
        assert_eq!(named.avatar_for("alice"), Some(Path::new("mine.vrm")));
    }
}
