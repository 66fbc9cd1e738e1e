//! The commands: one file each, with its arguments and its `run`. This file holds
//! the command table and the arguments several commands share.

pub mod avatar;
pub mod convert;
pub mod eval_ik;
pub mod inspect;
pub mod record;
pub mod recover;
pub mod retarget;
pub mod run;
pub mod send;
pub mod simulate;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};
use mocap_bridge::formats::{LoadOptions, Units, UpAxis};
use mocap_bridge::protocol::vmc::ExpressionNames;
use mocap_bridge::takes::replay::MAX_FPS;
use mocap_bridge::takes::{self, load::LoadedTake};

/// What a command returns: any error prints as `error: …` and exits with code 2.
pub type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// `1 frame`, `181 frames`: a count of frames for a message.
pub fn frames(count: usize) -> String {
    if count == 1 {
        "1 frame".to_owned()
    } else {
        format!("{count} frames")
    }
}

/// An output file that exists is refused unless `force` says to overwrite it: a
/// take is never lost to a mistyped `-o`.
pub fn refuse_existing(output: &Path, force: bool) -> CliResult<()> {
    if !force && output.exists() {
        return Err(format!(
            "{}: already exists; pass --force to overwrite it, or -o to write elsewhere",
            output.display()
        )
        .into());
    }
    Ok(())
}

#[derive(Parser)]
#[command(
    name = "mocap-bridge",
    version,
    about = "Live motion capture onto VRM 1.0 humanoids"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by commands that read rigs.
#[derive(clap::Args, Clone)]
pub struct RigArgs {
    /// Bone map JSON (`{"hips": "Hips", ...}` or a skeleton file's `boneMap`);
    /// default: the file's own humanoid map, else the catalog map that fits, else
    /// the recognized one.
    #[arg(long, value_name = "MAP")]
    pub map: Option<PathBuf>,
    /// Units of BVH, skeleton JSON and glTF/GLB files (not VRM): m, dm, cm, mm, in,
    /// or metres per unit (default: from the file, else guessed from the figure's
    /// height). Never a --target model's.
    #[arg(long, value_parser = parse_units)]
    pub units: Option<Units>,
    /// Up axis of BVH/JSON files: y or z (default: from the file, else guessed).
    #[arg(long, value_parser = parse_up)]
    pub up: Option<UpAxis>,
    /// BVH and glTF: take the rest pose from another recording of the same skeleton
    /// (the rest its own load takes: a BVH's zero pose when that stands, a glTF's bind
    /// or nodes' pose, else a frame of its motion), for a take that stands in no
    /// frame, such as a crawl or a flying clip of an animation library.
    #[arg(long, value_name = "FILE")]
    pub rest_from: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Convert a recording into a VRM Animation (.vrma) or an EXT_skeleton_humanoid
    /// GLB (.glb): from a BVH, a glTF/GLB/VRM clip (through its bone map), a .vrma,
    /// or an EXT_skeleton_humanoid clip.
    Convert(convert::ConvertArgs),
    /// Retarget a capture onto a model frame by frame, printing the motion and
    /// checking every frame: the target's arm and leg directions against the
    /// source's. With no arguments: the built-in lab19 performance (arms-down rest,
    /// centimetres) onto the built-in VRM 1.0 T-pose humanoid.
    Retarget(retarget::RetargetArgs),
    /// Stream a recording over VMC (OSC/UDP) to a VMC receiver (VSeeFace, VMC,
    /// Warudo, ...), paced in real time: a BVH or glTF clip through its map, a
    /// .vrma, an EXT_skeleton_humanoid clip, or the built-in lab19 performance.
    Send(send::SendArgs),
    /// Run the live bridge: VMC, lab OSC and WebSocket inputs, the solver, VMC and
    /// WebSocket outputs and the recorder, on the embedded defaults or --config.
    /// With --replay FILE it shows the pipeline working with no hardware.
    Run(run::RunArgs),
    /// Stream a recording over lab OSC (UDP) as a mocap lab's system would, to a
    /// bridge: the lab skeleton's joints in its skeleton file's stream format, one or
    /// several subjects, paced in real time. A recording of the lab skeleton is sent
    /// joint by joint, any other (BVH, glTF clip, .vrma) retargeted onto it.
    Simulate(simulate::SimulateArgs),
    /// Record what a VMC sender streams (VSeeFace, VMC, `mocap-bridge send`, ...)
    /// into a .vrma, until Ctrl-C or --duration.
    Record(record::RecordArgs),
    /// Measure IK on a capture. Mocap mode (default): retarget it onto a model with
    /// its legs scaled, rotation only and with IK, and print foot skate during
    /// contact, the lowest foot heights and the hips lowering. VR mode: solve the body
    /// from devices synthesized from the capture (3-point, 6-point, perturbed) and
    /// print MPJPE, MPJRE, MPJVE, jitter, hand error, foot skate and flips.
    EvalIk(eval_ik::EvalIkArgs),
    /// Turn the journal a crashed recording left behind (`take.vrma.journal`) into
    /// the .vrma: every frame up to the last flush, a torn tail dropped and reported.
    Recover(recover::RecoverArgs),
    /// Print a rig's joint tree, its bone map, its rest pose and the correction to
    /// the T-pose, and every problem found.
    Inspect(inspect::InspectArgs),
    /// Write the avatar the bridge ships: a mannequin VRM 1.0 with all 55 humanoid
    /// bones, the preset expressions and eyes that follow lookAt, free to use,
    /// change and pass on (VRM Public License 1.0).
    Avatar(avatar::AvatarArgs),
}

impl Command {
    /// Runs the command.
    pub fn run(self) -> CliResult<()> {
        match self {
            Command::Convert(args) => convert::run(args),
            Command::Retarget(args) => retarget::run(args),
            Command::Send(args) => send::run(args),
            Command::Run(args) => run::run(args),
            Command::Simulate(args) => simulate::run(args),
            Command::Record(args) => record::run(args),
            Command::EvalIk(args) => eval_ik::run(args),
            Command::Recover(args) => recover::run(args),
            Command::Inspect(args) => inspect::run(args),
            Command::Avatar(args) => avatar::run(args),
        }
    }
}

pub fn parse_units(s: &str) -> Result<Units, String> {
    Units::parse(s).ok_or_else(|| format!("`{s}` is not m, dm, cm, mm, in or a positive number"))
}

pub fn parse_names(s: &str) -> Result<ExpressionNames, String> {
    match s.to_ascii_lowercase().as_str() {
        "vrm0" => Ok(ExpressionNames::Vrm0),
        "vrm1" => Ok(ExpressionNames::Vrm1),
        _ => Err(format!("`{s}` is not vrm0 or vrm1")),
    }
}

pub fn parse_up(s: &str) -> Result<UpAxis, String> {
    UpAxis::parse(s).ok_or_else(|| format!("`{s}` is not y or z"))
}

/// A frame rate given on the command line: a positive number.
pub fn parse_fps(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(fps) if fps > 0.0 && fps <= MAX_FPS => Ok(fps),
        _ => Err(format!(
            "`{s}` is not a number of frames per second above 0 and at most {MAX_FPS}"
        )),
    }
}

/// A flag set when the user stops a command that streams until interrupted:
/// Ctrl-C, SIGTERM (`kill`, a service manager) or SIGHUP (the terminal closed). The
/// command sees it between frames and ends as it would have ended by itself, with
/// its summary.
pub fn stop_on_interrupt() -> CliResult<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
    Ok(stop)
}

pub fn load_options(rig: &RigArgs) -> LoadOptions {
    LoadOptions {
        units: rig.units,
        up: rig.up,
        rest_from: rig.rest_from.clone(),
    }
}

/// The load options of a command's target model: the up axis given, never the
/// source take's `--units` (a BVH's centimetres would shrink a glTF model in
/// metres) or `--rest-from`.
pub fn target_load_options(rig: &RigArgs) -> LoadOptions {
    LoadOptions {
        units: None,
        rest_from: None,
        ..load_options(rig)
    }
}

/// Loads what a command plays (see `takes::load`), with the rig options and the
/// `--map` given.
pub fn load_take(
    source: Option<&Path>,
    rig: &RigArgs,
    clip: Option<&str>,
    loops: u32,
) -> CliResult<(String, LoadedTake)> {
    let options = load_options(rig);
    Ok(takes::load::load_take(
        source,
        &options,
        rig.map.as_deref(),
        clip,
        loops,
    )?)
}
