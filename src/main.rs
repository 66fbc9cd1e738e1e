//! The `mocap-bridge` command line: parses arguments, loads files, calls the library.
//! Errors print as `error: …` with each cause on its own line, and exit with code 2.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use glam::{Quat, Vec3};
use mocap_bridge::convert::{Bake, OutputFormat, replay_into};
use mocap_bridge::demo;
use mocap_bridge::formats::Motion;
use mocap_bridge::formats::ext_humanoid;
use mocap_bridge::formats::vrma::VrmaWriter;
use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::formats::{self, LoadOptions, Units, UpAxis};
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::inspect::{self, ChosenMap, Report};
use mocap_bridge::net::vmc_out::VmcSender;
use mocap_bridge::protocol::vmc::{DecodeStats, ExpressionNames, VmcEncoder, decode as vmc_decode};
use mocap_bridge::record::vmc_frames::VmcFrames;
use mocap_bridge::replay::Pacer;
use mocap_bridge::replay::Replay;
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig, check};
use mocap_bridge::skeleton::NamedBoneMap;

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
        /// glTF/GLB with EXT_skeleton_humanoid channels.
        input: PathBuf,
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
    Send {
        /// The recording (default: the built-in lab19 performance).
        source: Option<PathBuf>,
        /// Where the receiver listens.
        #[arg(long, default_value = "127.0.0.1:39539", value_name = "HOST:PORT")]
        to: std::net::SocketAddr,
        /// Expression names the receiver knows: vrm0 (`Joy`, `A`) or vrm1 (`happy`, `aa`).
        #[arg(long, default_value = "vrm0", value_parser = parse_names)]
        names: ExpressionNames,
        /// Send at most this many frames per second (default: every frame).
        #[arg(long, value_name = "HZ")]
        rate: Option<f32>,
        /// Play again and again until interrupted.
        #[arg(long = "loop")]
        repeat: bool,
        /// Send as fast as possible instead of in real time.
        #[arg(long)]
        fast: bool,
        #[command(flatten)]
        rig: RigArgs,
        /// Which animation of the source to play, by name or index.
        #[arg(long, value_name = "NAME|INDEX")]
        clip: Option<String>,
        /// How many loops of the built-in performance to play.
        #[arg(long, default_value_t = 2)]
        loops: u32,
    },
    /// Record what a VMC sender streams (VSeeFace, VMC, `mocap-bridge send`, ...)
    /// into a .vrma, until Ctrl-C or --duration.
    Record {
        /// The .vrma to write.
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Where to listen for VMC (OSC over UDP).
        #[arg(long, default_value = "127.0.0.1:39540", value_name = "HOST:PORT")]
        listen: std::net::SocketAddr,
        /// Stop after this many seconds (default: at Ctrl-C).
        #[arg(long, value_name = "SECONDS")]
        duration: Option<f32>,
        /// The performer's hips height standing, metres (default: the first
        /// frame's hips height).
        #[arg(long, value_name = "METRES")]
        hips_height: Option<f32>,
    },
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

/// `record`: VMC datagrams on `listen` -> frames -> a .vrma at `output`.
fn record(
    output: &Path,
    listen: std::net::SocketAddr,
    duration: Option<f32>,
    hips_height: Option<f32>,
) -> CliResult<()> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let socket =
        std::net::UdpSocket::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    socket.set_read_timeout(Some(std::time::Duration::from_millis(100)))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "recording VMC on {listen} into {}; Ctrl-C to stop",
        output.display()
    )?;
    stdout.flush()?;

    let started = std::time::Instant::now();
    let mut frames = VmcFrames::default();
    let mut writer: Option<(VrmaWriter, f32)> = None;
    let (mut datagrams, mut rejected) = (0u64, 0u64);
    let mut totals = DecodeStats::default();
    let mut push = |writer: &mut Option<(VrmaWriter, f32)>,
                    t: f32,
                    mut pose: HumanoidPose,
                    names: &CustomNames| {
        let (w, height) = writer.get_or_insert_with(|| {
            let height = hips_height.unwrap_or(pose.hips_position.y);
            let height = if height > 0.3 { height } else { 0.9 };
            (
                VrmaWriter::new(VrmaRest::standard(height), "vmc take"),
                height,
            )
        });
        pose.rest_hips_height = *height;
        if w.push(t, &pose, names).is_err() {
            rejected += 1;
        }
    };
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed)
        && duration.is_none_or(|d| started.elapsed().as_secs_f32() < d)
    {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => return Err(format!("cannot receive on {listen}: {e}").into()),
        };
        datagrams += 1;
        let now = started.elapsed().as_secs_f32();
        let mut finished = None;
        let stats = vmc_decode(&buf[..n], &mut |event| {
            if let Some(frame) = frames.event(event, now) {
                finished = Some(frame);
            }
        });
        if let Some((t, pose)) = finished {
            push(&mut writer, t, pose, frames.custom_names());
        }
        totals.events += stats.events;
        totals.ignored += stats.ignored;
        totals.malformed += stats.malformed;
        totals.unknown_bones += stats.unknown_bones;
        totals.broken += stats.broken;
    }
    if let Some((t, pose)) = frames.finish() {
        push(&mut writer, t, pose, frames.custom_names());
    }
    let Some((writer, _)) = writer else {
        return Err(format!("no VMC frame arrived on {listen}; nothing written").into());
    };
    writer.save(output)?;
    writeln!(
        stdout,
        "wrote {}: {} frames from {datagrams} datagrams; dropped: {} malformed, {} unknown bones, {} broken, {} frames out of order; {} unknown addresses ignored",
        output.display(),
        writer.frame_count(),
        totals.malformed,
        totals.unknown_bones,
        totals.broken,
        rejected,
        totals.ignored
    )?;
    Ok(())
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
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
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

fn run(cli: Cli) -> CliResult<()> {
    match cli.command {
        Command::Record {
            output,
            listen,
            duration,
            hips_height,
        } => record(&output, listen, duration, hips_height),
        Command::Send {
            source,
            to,
            names,
            rate,
            repeat,
            fast,
            rig,
            clip,
            loops,
        } => {
            let (label, take) = load_take(source.as_deref(), &rig, clip.as_deref(), loops)?;
            let (mut replay, rest, custom) = match take {
                Take::Rig { mapped, motion } => (
                    Replay::from_rig(&mapped, motion, None),
                    VrmaRest::from_mapped(&mapped),
                    CustomNames::default(),
                ),
                Take::Normalized {
                    replay,
                    rest,
                    names,
                    ..
                } => (*replay, *rest, names),
            };
            let mut sender = VmcSender::connect(to, VmcEncoder::new(names, &rest), rate)
                .map_err(|e| format!("cannot send to {to}: {e}"))?;
            let mut stdout = std::io::stdout().lock();
            writeln!(
                stdout,
                "sending {label} ({} frames, {:.2} s) to {to} as VMC{}",
                replay.len(),
                replay.times().last().copied().unwrap_or(0.0),
                if repeat {
                    ", looping until interrupted"
                } else {
                    ""
                }
            )?;
            let mut pose = HumanoidPose::default();
            loop {
                let pacer = (!fast).then(Pacer::start);
                replay.rewind();
                while let Some(t) = replay.next_frame(&mut pose) {
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
                &input,
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

/// One clip to convert: its name, how to play it and the rest it was recorded in.
struct Job {
    name: String,
    replay: Replay,
    rest: VrmaRest,
    custom_names: CustomNames,
}

fn convert(
    input: &Path,
    output: &Path,
    rig: &RigArgs,
    clip: Option<&str>,
    all_clips: bool,
    fps: Option<f32>,
    bake: Option<&Bake>,
) -> CliResult<()> {
    let format = OutputFormat::from_path(output).ok_or_else(|| {
        format!(
            "{}: the output must be a .vrma file (VRM Animation) or a .glb file (EXT_skeleton_humanoid)",
            output.display()
        )
    })?;
    let label = input.display().to_string();
    let mut jobs = Vec::new();
    if let Some(clips) = ext_clips(input, clip, all_clips)? {
        for (i, c) in clips.into_iter().enumerate() {
            let name = c.name.clone().unwrap_or_else(|| format!("animation{i}"));
            let rest = c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95));
            jobs.push(Job {
                name,
                replay: Replay::from_ext(c, fps),
                rest,
                custom_names: CustomNames::default(),
            });
        }
    } else if is_vrma(input) {
        let bytes = std::fs::read(input).map_err(|e| format!("cannot read {label}: {e}"))?;
        let animations = if all_clips {
            vrma::parse_all(&bytes, input)?
        } else {
            vec![vrma::parse(&bytes, input, clip)?]
        };
        for (i, animation) in animations.into_iter().enumerate() {
            let name = animation
                .name
                .clone()
                .unwrap_or_else(|| format!("animation{i}"));
            let rest = animation.rest().clone();
            let custom_names = animation.custom_names().clone();
            jobs.push(Job {
                name,
                replay: Replay::from_vrma(animation, fps),
                rest,
                custom_names,
            });
        }
    } else {
        let loaded = formats::load_rig(input, &load_options(rig))?;
        let src = mapped(&label, &loaded, explicit_map(rig.map.as_deref())?)?;
        let clips: Vec<&formats::Clip> = if all_clips {
            loaded.clips.iter().collect()
        } else {
            loaded.clip(clip).into_iter().collect()
        };
        if clips.is_empty() {
            return Err(match clip {
                Some(c) => format!("{label}: the file has no clip `{c}`"),
                None => format!("{label}: the file has no animation to convert"),
            }
            .into());
        }
        for c in clips {
            jobs.push(Job {
                name: c.name.clone(),
                replay: Replay::from_rig(&src, c.motion.clone(), fps),
                rest: VrmaRest::from_mapped(&src),
                custom_names: CustomNames::default(),
            });
        }
    }
    let mut stdout = std::io::stdout().lock();
    let several = jobs.len() > 1;
    for mut job in jobs {
        let out = if several {
            clip_path(output, &job.name)
        } else {
            output.to_owned()
        };
        let started = std::time::Instant::now();
        let bar = indicatif::ProgressBar::new(job.replay.len() as u64);
        if job.replay.len() < 10_000 {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bar.set_message(job.name.clone());
        let writer = replay_into(
            &mut job.replay,
            format,
            job.rest,
            &job.name,
            &job.custom_names,
            bake,
            &mut |done| {
                if done % 1024 == 0 {
                    bar.set_position(done as u64);
                }
            },
        )
        .map_err(|e| format!("{label}: clip `{}`: {e}", job.name))?;
        bar.finish_and_clear();
        writer.save(&out)?;
        let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        writeln!(
            stdout,
            "wrote {}: clip `{}`, {} frames, {:.3} s, {} bytes, in {:.0} ms",
            out.display(),
            job.name,
            writer.frame_count(),
            job.replay.times().last().copied().unwrap_or(0.0),
            bytes,
            started.elapsed().as_secs_f64() * 1e3
        )?;
    }
    Ok(())
}

/// The EXT_skeleton_humanoid clips of a glTF/GLB that has some (channels naming a
/// `humanoidBoneName`); `None` for any other file.
fn ext_clips(
    input: &Path,
    clip: Option<&str>,
    all_clips: bool,
) -> CliResult<Option<Vec<ext_humanoid::ExtHumanoidClip>>> {
    let ext = input
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("glb" | "gltf")) {
        return Ok(None);
    }
    let bytes =
        std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    if !ext_humanoid::has_humanoid_channels(&bytes) {
        return Ok(None);
    }
    if !all_clips {
        return Ok(Some(vec![ext_humanoid::parse(&bytes, input, clip)?]));
    }
    let mut clips = Vec::new();
    for i in 0.. {
        match ext_humanoid::parse(&bytes, input, Some(&i.to_string())) {
            Ok(c) => clips.push(c),
            Err(_) if i > 0 => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(clips))
}

/// `walk.vrma` + clip `Idle` -> `walk_Idle.vrma` (clip names made file-safe).
fn clip_path(output: &Path, clip: &str) -> PathBuf {
    let safe: String = clip
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let extension = output
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}_{safe}.{extension}"))
}

/// A rig with its chosen map, resolved and rest-corrected.
fn mapped(
    label: &str,
    rig: &formats::Rig,
    explicit: Option<ChosenMap>,
) -> CliResult<MappedSkeleton> {
    let chosen = inspect::choose_map(rig, explicit).ok_or_else(|| {
        format!(
            "{label}: no bone map: the file declares none, no catalog map fits, and it is {}; pass a map",
            inspect::why_no_map(rig)
        )
    })?;
    Ok(MappedSkeleton::new(rig.skeleton.clone(), &chosen.map)
        .map_err(|e| format!("{}: {e}", chosen.source))?)
}

/// Where `retarget` takes its frames from.
enum Take {
    /// A rig's clip: retargeted through its map, and checked frame by frame.
    Rig {
        mapped: Box<MappedSkeleton>,
        motion: Motion,
    },
    /// A `.vrma` or EXT_skeleton_humanoid clip: already normalized.
    Normalized {
        rest: Box<VrmaRest>,
        names: CustomNames,
        replay: Box<Replay>,
        summary: String,
    },
}

/// Options of `retarget` besides the files.
struct RetargetOptions {
    clip: Option<String>,
    every: usize,
    loops: u32,
    realtime: bool,
}

fn retarget(
    source: Option<&Path>,
    target: Option<&Path>,
    target_map: Option<&Path>,
    rig: &RigArgs,
    opts: &RetargetOptions,
) -> CliResult<()> {
    let options = load_options(rig);
    let mut stdout = std::io::stdout().lock();
    let clip = opts.clip.as_deref();
    let (source_label, take) = load_take(source, rig, clip, opts.loops)?;
    let (target_label, dst) = match target {
        Some(path) => {
            let loaded = formats::load_rig(path, &options)?;
            let label = path.display().to_string();
            let dst = mapped(&label, &loaded, explicit_map(target_map)?)?;
            (label, dst)
        }
        None => {
            let humanoid = demo::embedded_rig("humanoid.json", demo::HUMANOID_JSON);
            let dst = mapped("humanoid.json", &humanoid, explicit_map(target_map)?)?;
            ("built-in VRM 1.0 humanoid".to_owned(), dst)
        }
    };
    let describe = match &take {
        Take::Rig { mapped, motion } => format!(
            "{}, {} joints, {} frames at {:.0} fps",
            mapped.correction.pose,
            mapped.skeleton.len(),
            motion.frame_count(),
            motion.mean_rate()
        ),
        Take::Normalized { summary, .. } => summary.clone(),
    };
    writeln!(
        stdout,
        "{source_label} ({describe}) -> {target_label} ({}, {} joints)",
        dst.correction.pose,
        dst.skeleton.len()
    )?;
    if opts.every > 0 {
        writeln!(
            stdout,
            "{:>6} {:>7}  {:>24}  {:>13}  {:>9}  {:>13}  {:>9}",
            "frame",
            "time s",
            "target hips (m)",
            "arms up L/R°",
            "elbow R°",
            "knees L/R°",
            "error °"
        )?;
    }
    let target_rig = TargetRig::new(&dst);
    let hips_joint = target_rig.hips_joint();
    let mut out = vec![Quat::IDENTITY; dst.skeleton.len()];
    let mut translations = dst.skeleton.rest_translations();
    let (mut worst, mut busy, mut frames) = (None::<f32>, std::time::Duration::ZERO, 0usize);
    let pacer = opts.realtime.then(Pacer::start);
    let (mut replay, take) = match take {
        Take::Rig { mapped, motion } => {
            let replay = Replay::from_rig(&mapped, motion.clone(), None);
            (replay, Some((mapped, motion)))
        }
        Take::Normalized { replay, .. } => (*replay, None),
    };
    let mut pose = HumanoidPose::default();
    while let Some(t) = {
        let started = std::time::Instant::now();
        let next = replay.next_frame(&mut pose);
        busy += started.elapsed();
        next
    } {
        if let Some(p) = &pacer {
            p.wait_for(t);
        }
        let started = std::time::Instant::now();
        let mut hips = Vec3::ZERO;
        FromNormalized {
            target: &target_rig,
            pose: &pose,
            local_rotations: &mut out,
            hips_translation: &mut hips,
        }
        .run()?;
        busy += started.elapsed();
        translations[hips_joint] = hips;
        let world = dst.skeleton.world_transforms(&out, &translations);
        let got = check::limb_vectors(&dst, &world);
        // The check: the source's own limbs at this frame, when it has a skeleton.
        let error = match &take {
            Some((mapped, motion)) => {
                let frame = motion.frame(frames.min(motion.frame_count() - 1));
                let source_world = mapped
                    .skeleton
                    .world_transforms(frame.rotations, frame.translations);
                Some(check::worst_angle_deg(
                    &check::limb_vectors(mapped, &source_world),
                    &got,
                ))
            }
            None => None,
        };
        if let Some(e) = error {
            worst = Some(worst.unwrap_or(0.0).max(e));
        }
        if opts.every > 0 && frames % opts.every == 0 {
            let p = dst.correction.facing * Vec3::from(world[hips_joint].translation);
            let up = |v: Vec3| v.normalize().y.clamp(-1.0, 1.0).asin().to_degrees();
            let bend = |a: Vec3, b: Vec3| a.angle_between(b).to_degrees();
            let error = error.map_or_else(|| "-".to_owned(), |e| format!("{e:.5}"));
            writeln!(
                stdout,
                "{frames:>6} {t:>7.3}  ({:+.3}, {:+.3}, {:+.3})  {:>6.1} {:>6.1}  {:>9.1}  {:>6.1} {:>6.1}  {error:>9}",
                p.x,
                p.y,
                p.z,
                up(got[0]),
                up(got[2]),
                bend(got[2], got[3]),
                bend(got[4], got[5]),
                bend(got[6], got[7]),
            )?;
        }
        frames += 1;
    }
    let check = match worst {
        Some(w) => format!("worst limb direction error {w:.5}°"),
        None => "no source skeleton to check against".to_owned(),
    };
    writeln!(
        stdout,
        "{frames} frames retargeted, {:.0} ns per frame (source -> normalized -> target), {check}",
        busy.as_nanos() as f64 / frames.max(1) as f64
    )?;
    Ok(())
}

/// Loads what `retarget` and `send` play: a rig's clip, a `.vrma`, an
/// EXT_skeleton_humanoid clip, or the built-in performance (`loops` loops).
fn load_take(
    source: Option<&Path>,
    rig: &RigArgs,
    clip: Option<&str>,
    loops: u32,
) -> CliResult<(String, Take)> {
    let options = load_options(rig);
    Ok(match source {
        Some(path) if is_vrma(path) => {
            let a = vrma::load(path, clip)?;
            let summary = format!(
                "VRM animation, {} bones, {} keys, {:.2} s",
                a.bones().count(),
                a.key_times().len(),
                a.duration
            );
            let (rest, names) = (Box::new(a.rest().clone()), a.custom_names().clone());
            let replay = Box::new(Replay::from_vrma(a, None));
            (
                path.display().to_string(),
                Take::Normalized {
                    rest,
                    names,
                    replay,
                    summary,
                },
            )
        }
        Some(path) if let Some(mut clips) = ext_clips(path, clip, false)? => {
            let Some(c) = clips.pop() else {
                return Err(format!("{}: no EXT_skeleton_humanoid clip", path.display()).into());
            };
            let summary = format!(
                "EXT_skeleton_humanoid clip, {} bones, {} keys, {:.2} s",
                c.bones().count(),
                c.key_times().len(),
                c.duration
            );
            let rest = Box::new(c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95)));
            let names = CustomNames::default();
            let replay = Box::new(Replay::from_ext(c, None));
            (
                path.display().to_string(),
                Take::Normalized {
                    rest,
                    names,
                    replay,
                    summary,
                },
            )
        }
        Some(path) => {
            let loaded = formats::load_rig(path, &options)?;
            let label = path.display().to_string();
            let mapped = mapped(&label, &loaded, explicit_map(rig.map.as_deref())?)?;
            let motion = loaded
                .clip(clip)
                .map(|c| c.motion.clone())
                .ok_or_else(|| match clip {
                    None => format!("{label}: the file has no motion to retarget"),
                    Some(c) => format!("{label}: the file has no clip `{c}`"),
                })?;
            let mapped = Box::new(mapped);
            (label, Take::Rig { mapped, motion })
        }
        None => {
            let lab19 = demo::embedded_rig("lab19.json", demo::LAB19_JSON);
            let mapped = mapped("lab19.json", &lab19, explicit_map(rig.map.as_deref())?)?;
            let motion = demo::lab19_performance(&mapped, loops);
            let mapped = Box::new(mapped);
            (
                "built-in lab19 performance".to_owned(),
                Take::Rig { mapped, motion },
            )
        }
    })
}

fn is_vrma(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("vrma"))
}

fn load_options(rig: &RigArgs) -> LoadOptions {
    LoadOptions {
        units: rig.units,
        up: rig.up,
    }
}

fn explicit_map(path: Option<&Path>) -> CliResult<Option<ChosenMap>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let map = NamedBoneMap::load(path)?;
    Ok(Some(ChosenMap::new(path.display().to_string(), map)))
}
