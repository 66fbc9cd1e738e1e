//! The `mocap-bridge` command line: parses arguments, loads files, calls the library.
//! Errors print as `error: …` with each cause on its own line, and exit with code 2.

mod cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mocap_bridge::formats::inspect::{self, Report};
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::formats::{self, Units, UpAxis};
use mocap_bridge::protocol::vmc::ExpressionNames;
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::takes::convert::Bake;

use cli::convert::convert;
use cli::retarget::{RetargetOptions, retarget};
use cli::{explicit_map, load_options, mapped};

#[derive(Parser)]
#[command(
    name = "mocap-bridge",
    version,
    about = "Live motion capture onto VRM 1.0 humanoids"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options shared by commands that read rigs.
#[derive(clap::Args, Clone)]
struct RigArgs {
    /// Bone map JSON (`{"hips": "Hips", ...}` or a skeleton file's `boneMap`);
    /// default: the file's own humanoid map, else the catalog map that fits, else
    /// the recognized one.
    #[arg(long, value_name = "MAP")]
    map: Option<PathBuf>,
    /// Units of BVH/JSON files: m, cm, mm, in, or metres per unit (default: from
    /// the file, else guessed from the figure's height).
    #[arg(long, value_parser = parse_units)]
    units: Option<Units>,
    /// Up axis of BVH/JSON files: y or z (default: from the file, else guessed).
    #[arg(long, value_parser = parse_up)]
    up: Option<UpAxis>,
}

#[derive(Subcommand)]
enum Command {
    /// Convert a recording into a VRM Animation (.vrma) or an EXT_skeleton_humanoid
    /// GLB (.glb): from a BVH, a glTF/GLB/VRM clip (through its bone map), a .vrma,
    /// or an EXT_skeleton_humanoid clip.
    Convert {
        /// The recording: .bvh, .glb, .gltf, .vrm (with animations), .vrma, or a
        /// glTF/GLB with EXT_skeleton_humanoid channels; default: the built-in lab19
        /// performance.
        input: Option<PathBuf>,
        /// The file to write: .vrma (VRM Animation) or .glb (EXT_skeleton_humanoid).
        /// With --all-clips, the name each clip's file is derived from
        /// (`walk.vrma` -> `walk_Idle.vrma`, ...).
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        #[command(flatten)]
        rig: RigArgs,
        /// Which animation to convert, by name or index (default: the first).
        #[arg(long, value_name = "NAME|INDEX", conflicts_with = "all_clips")]
        clip: Option<String>,
        /// Convert every animation, one file each.
        #[arg(long)]
        all_clips: bool,
        /// Resample at this many frames per second (default: keep the source's frames).
        #[arg(long, value_name = "FPS")]
        fps: Option<f32>,
        /// Bake onto this model's proportions: its T-pose becomes the file's rest and
        /// hips positions are scaled to its hips height.
        #[arg(long, value_name = "MODEL")]
        target: Option<PathBuf>,
        /// Bone map for --target (default: its own, else the catalog's, else recognized).
        #[arg(long, value_name = "MAP")]
        target_map: Option<PathBuf>,
    },
    /// Retarget a capture onto a model frame by frame, printing the motion and
    /// checking every frame: the target's arm and leg directions against the
    /// source's. With no arguments: the built-in lab19 performance (arms-down rest,
    /// centimetres) onto the built-in VRM 1.0 T-pose humanoid.
    Retarget {
        /// Source with motion (.bvh, .glb/.gltf/.vrm with animations, .vrma);
        /// default: the built-in lab19 performance.
        source: Option<PathBuf>,
        /// Target model (.vrm, .glb, .gltf, .bvh or skeleton .json); default: the
        /// built-in VRM 1.0 T-pose humanoid (config/skeletons/humanoid.json).
        #[arg(long, value_name = "MODEL")]
        target: Option<PathBuf>,
        /// Bone map for the target (default: its own, else the catalog's, else recognized).
        #[arg(long, value_name = "MAP")]
        target_map: Option<PathBuf>,
        #[command(flatten)]
        rig: RigArgs,
        /// Print a line every N frames; 0 prints only the summary.
        #[arg(long, default_value_t = 15, value_name = "N")]
        every: usize,
        /// How many loops of the built-in performance to play.
        #[arg(long, default_value_t = 2)]
        loops: u32,
        /// Which animation of the source to play, by name or index (default: the first).
        #[arg(long, value_name = "NAME|INDEX")]
        clip: Option<String>,
        /// Play in real time (frames paced by their timestamps) instead of as fast as
        /// possible.
        #[arg(long)]
        realtime: bool,
    },
    /// Stream a recording over VMC (OSC/UDP) to a VMC receiver (VSeeFace, VMC,
    /// Warudo, ...), paced in real time: a BVH or glTF clip through its map, a
    /// .vrma, an EXT_skeleton_humanoid clip, or the built-in lab19 performance.
    Send(cli::vmc::SendArgs),
    /// Run the live bridge: VMC, lab OSC and WebSocket inputs, the solver, VMC and
    /// WebSocket outputs and the recorder, on the embedded defaults or --config.
    /// With --replay FILE it shows the pipeline working with no hardware.
    Run(cli::run::RunArgs),
    /// Stream a recording over lab OSC (UDP) as a mocap lab's system would, to a
    /// bridge: the lab skeleton's joints in its skeleton file's stream format, one or
    /// several subjects, paced in real time. A recording of the lab skeleton is sent
    /// joint by joint, any other (BVH, glTF clip, .vrma) retargeted onto it.
    Simulate(cli::simulate::SimulateArgs),
    /// Record what a VMC sender streams (VSeeFace, VMC, `mocap-bridge send`, ...)
    /// into a .vrma, until Ctrl-C or --duration.
    Record(cli::vmc::RecordArgs),
    /// Measure IK on a capture. Mocap mode (default): retarget it onto a model with
    /// its legs scaled, rotation only and with IK, and print foot skate during
    /// contact, the lowest foot heights and the hips lowering. VR mode: solve the body
    /// from devices synthesized from the capture (3-point, 6-point, perturbed) and
    /// print MPJPE, MPJRE, MPJVE, jitter, hand error, foot skate and flips.
    EvalIk(cli::ik::EvalIkArgs),
    /// Turn the journal a crashed recording left behind (`take.vrma.journal`) into
    /// the .vrma: every frame up to the last flush, a torn tail dropped and reported.
    Recover(cli::recover::RecoverArgs),
    /// Print a rig's joint tree, its bone map, its rest pose and the correction to
    /// the T-pose, and every problem found.
    Inspect {
        /// A .bvh, .glb, .gltf, .vrm or skeleton .json file.
        file: PathBuf,
        #[command(flatten)]
        rig: RigArgs,
        /// Also write the bone map used (given, the file's own, the catalog's or the
        /// recognized one) as a map file, to check, edit and pass back with --map.
        #[arg(long, value_name = "MAP.json")]
        write_map: Option<PathBuf>,
    },
}

fn parse_units(s: &str) -> Result<Units, String> {
    Units::parse(s).ok_or_else(|| format!("`{s}` is not m, cm, mm, in or a positive number"))
}

fn parse_names(s: &str) -> Result<ExpressionNames, String> {
    match s.to_ascii_lowercase().as_str() {
        "vrm0" => Ok(ExpressionNames::Vrm0),
        "vrm1" => Ok(ExpressionNames::Vrm1),
        _ => Err(format!("`{s}` is not vrm0 or vrm1")),
    }
}

fn parse_up(s: &str) -> Result<UpAxis, String> {
    UpAxis::parse(s).ok_or_else(|| format!("`{s}` is not y or z"))
}

type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Run(_)) {
        quiet_on_closed_pipe();
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err)
            if err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            // The reader went away (`| head`): nothing more to say.
            ExitCode::SUCCESS
        }
        Err(err) => {
            let message = err.to_string();
            eprintln!("error: {message}");
            let mut source = err.source();
            while let Some(cause) = source {
                // Messages that already quote their cause are not repeated.
                let text = cause.to_string();
                if !message.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                source = cause.source();
            }
            ExitCode::from(2)
        }
    }
}

/// A printing command stops quietly when its reader goes away (`| head`), as
/// Unix tools do, instead of panicking in `println!`: SIGPIPE back to its default.
/// Not for `run`, whose sockets must see a closed peer as an error, not a signal.
/// (Linux only, where the project already links libc.)
fn quiet_on_closed_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: called once at start-up, before any thread is spawned; restoring a
    // signal's default disposition touches no memory of ours.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn run(cli: Cli) -> CliResult<()> {
    match cli.command {
        Command::Record(args) => cli::vmc::record(args),
        Command::Send(args) => cli::vmc::send(args),
        Command::Run(args) => cli::run::run(args),
        Command::Simulate(args) => cli::simulate::simulate(args),
        Command::EvalIk(args) => cli::ik::eval_ik(args),
        Command::Recover(args) => cli::recover::recover(args),
        Command::Convert {
            input,
            output,
            rig,
            clip,
            all_clips,
            fps,
            target,
            target_map,
        } => {
            let bake = match target {
                None => None,
                Some(path) => {
                    let loaded = formats::load_rig(&path, &load_options(&rig))?;
                    let m = mapped(
                        &path.display().to_string(),
                        &loaded,
                        explicit_map(target_map.as_deref())?,
                    )?;
                    Some(Bake {
                        rest: VrmaRest::from_mapped(&m),
                        hips_height: m.rest_hips_height(),
                    })
                }
            };
            if let Some(rate) = fps
                && !(rate.is_finite() && rate > 0.0)
            {
                return Err(format!("--fps {rate}: not a positive number").into());
            }
            convert(
                input.as_deref(),
                &output,
                &rig,
                clip.as_deref(),
                all_clips,
                fps,
                bake.as_ref(),
            )
        }
        Command::Retarget {
            source,
            target,
            target_map,
            rig,
            every,
            loops,
            clip,
            realtime,
        } => retarget(
            source.as_deref(),
            target.as_deref(),
            target_map.as_deref(),
            &rig,
            &RetargetOptions {
                clip,
                every,
                loops,
                realtime,
            },
        ),
        Command::Inspect {
            file,
            rig,
            write_map,
        } => {
            let loaded = formats::load_rig(&file, &load_options(&rig))?;
            let explicit = explicit_map(rig.map.as_deref())?;
            if let Some(chosen) = &explicit {
                // An explicit map that does not fit is an error, not a remark.
                MappedSkeleton::new(loaded.skeleton.clone(), &chosen.map)
                    .map_err(|e| format!("{}: {e}", chosen.source))?;
            }
            let chosen = inspect::choose_map(&loaded, explicit);
            print!(
                "{}",
                Report::new(&file.display().to_string(), &loaded, chosen.as_ref())
            );
            if let Some(out) = write_map {
                let chosen = chosen.ok_or_else(|| {
                    format!(
                        "{}: no bone map to write: {}",
                        file.display(),
                        inspect::why_no_map(&loaded)
                    )
                })?;
                let text = serde_json::to_string_pretty(&chosen.map.to_json())?;
                std::fs::write(&out, text + "\n")
                    .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                println!(
                    "\nwrote {}: {} bones ({})",
                    out.display(),
                    chosen.map.bones.len(),
                    chosen.source
                );
            }
            Ok(())
        }
    }
}
