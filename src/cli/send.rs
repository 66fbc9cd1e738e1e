//! `send`: a recording out to a VMC receiver, paced in real time, until it ends or
//! the user stops it (then with its summary all the same).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::io::rate_cap::RateCap;
use mocap_bridge::io::vmc_sender::VmcSender;
use mocap_bridge::protocol::vmc::{ExpressionNames, VmcEncoder};
use mocap_bridge::takes::load::is_framed;
use mocap_bridge::takes::replay::{Pacer, Replay, stream_fps};

use super::load_take;
use super::{CliResult, RigArgs, stop_on_interrupt};
use mocap_bridge::takes::load::LoadedTake;

/// Options of `send`.
#[derive(clap::Args)]
pub struct SendArgs {
    /// The recording (default: the built-in lab19 performance).
    pub source: Option<PathBuf>,
    /// Where the receiver listens.
    #[arg(long, default_value = "127.0.0.1:39539", value_name = "HOST:PORT")]
    pub to: std::net::SocketAddr,
    /// Expression names the receiver knows: vrm0 (`Joy`, `A`) or vrm1 (`happy`, `aa`).
    #[arg(long, default_value = "vrm0", value_parser = super::parse_names)]
    pub names: ExpressionNames,
    /// Send at most this many frames per second of the take: frames at least 1/HZ
    /// apart in its time, also with --fast (default: every frame).
    #[arg(long, value_name = "HZ")]
    pub rate: Option<f32>,
    /// Stream at this many frames per second, each pose interpolated as the file
    /// says (default: a BVH's own frame rate, else 60).
    #[arg(long, value_name = "FPS", value_parser = super::parse_fps)]
    pub fps: Option<f32>,
    /// Play again and again until interrupted.
    #[arg(long = "loop")]
    pub repeat: bool,
    /// Send as fast as possible instead of in real time.
    #[arg(long)]
    pub fast: bool,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Which animation of the source to play, by name or index.
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// How many loops of the built-in performance to play.
    #[arg(long, default_value_t = 2)]
    pub loops: u32,
}

/// `send`: plays a recording to a VMC receiver.
pub fn run(args: SendArgs) -> CliResult<()> {
    let SendArgs {
        source,
        to,
        names,
        rate,
        fps,
        repeat,
        fast,
        rig,
        clip,
        loops,
    } = args;
    let (label, take) = load_take(source.as_deref(), &rig, clip.as_deref(), loops)?;
    let grid = stream_fps(fps, is_framed(source.as_deref()));
    let (mut replay, rest, custom) = match take {
        LoadedTake::Rig { mapped, motion } => (
            Replay::from_rig(&mapped, motion, grid),
            VrmaRest::from_mapped(&mapped),
            CustomNames::default(),
        ),
        LoadedTake::Normalized {
            mut replay,
            rest,
            names,
            ..
        } => {
            replay.set_fps(grid);
            (*replay, *rest, names)
        }
    };
    let cap = rate.and_then(RateCap::from_hz);
    let mut sender = VmcSender::connect(to, VmcEncoder::new(names, &rest), cap)
        .map_err(|e| format!("cannot send to {to}: {e}"))?;
    let stop = stop_on_interrupt()?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "sending {label} ({}, {:.2} s) to {to} as VMC{}",
        super::frames(replay.len()),
        replay.times().last().copied().unwrap_or(0.0),
        if repeat {
            ", looping until interrupted"
        } else {
            ""
        }
    )?;
    stdout.flush()?;
    let mut pose = HumanoidPose::default();
    'play: loop {
        let pacer = (!fast).then(Pacer::start);
        replay.rewind();
        while let Some(t) = replay.next_frame(&mut pose) {
            if stop.load(Ordering::Relaxed) {
                break 'play;
            }
            if let Some(p) = &pacer {
                p.wait_for(t);
            }
            sender
                .send(t, &pose, &custom)
                .map_err(|e| format!("cannot send to {to}: {e}"))?;
        }
        if !repeat {
            break;
        }
    }
    let st = sender.stats;
    writeln!(
        stdout,
        "sent {} frames in {} datagrams ({} bytes); {} skipped by the rate cap, {} refused (no receiver listening)",
        st.frames, st.datagrams, st.bytes, st.skipped, st.refused
    )?;
    Ok(())
}
