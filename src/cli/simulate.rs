//! `simulate`: streams a recording over lab OSC (`protocol::lab_osc`) exactly as a
//! mocap lab's system would: the lab skeleton's joints in the skeleton file's
//! stream format, one or several subjects, paced in real time or as fast as
//! possible. A recording of the lab skeleton itself (same joint names and parents)
//! is sent joint by joint; any other is retargeted onto the lab skeleton (its
//! normalized pose through `FromNormalized`).

use std::io::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use glam::{Quat, Vec3};
use mocap_bridge::formats::skeleton_json::{self, StreamFormat};
use mocap_bridge::formats::{self, LoadOptions, Motion, Rig};
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::protocol::frame::{JointFrame, PerformerName};
use mocap_bridge::protocol::lab_osc::LabSkeleton;
use mocap_bridge::retarget::{FromNormalized, TargetRig};
use mocap_bridge::skeleton::Skeleton;
use mocap_bridge::takes::demo;
use mocap_bridge::takes::replay::{Pacer, Replay, frame_times};

use super::load_take;
use super::{CliResult, RigArgs, load_options, stop_on_interrupt};
use mocap_bridge::formats::inspect::map_rig;
use mocap_bridge::takes::load::{LoadedTake, reads_as_vrma};

/// How far ahead in the recording each further subject plays, seconds.
const SUBJECT_OFFSET: f32 = 0.25;

/// Most subjects `--subjects` may ask for.
const MAX_SUBJECTS: usize = 1000;

/// Options of `simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The recording: .bvh, .glb/.gltf/.vrm with animations, .vrma, or an
    /// EXT_skeleton_humanoid clip (default: the built-in lab19 performance).
    pub source: Option<PathBuf>,
    /// Where the bridge listens for lab OSC.
    #[arg(long, default_value = "127.0.0.1:39541", value_name = "HOST:PORT")]
    pub to: SocketAddr,
    /// A performer's name (1 to 32 bytes); repeat for several (default: subject-1).
    #[arg(long = "subject", value_name = "NAME", conflicts_with = "subjects")]
    pub subject: Vec<String>,
    /// Send N performers, subject-1 ... subject-N, each 0.25 s further into the
    /// recording than the one before.
    #[arg(long, value_name = "N")]
    pub subjects: Option<usize>,
    /// The lab's skeleton JSON, with its "stream" format (default: the built-in
    /// config/skeletons/lab19.json).
    #[arg(long, value_name = "FILE")]
    pub skeleton: Option<PathBuf>,
    /// Play again and again until interrupted.
    #[arg(long = "loop")]
    pub repeat: bool,
    /// Send as fast as possible instead of in real time.
    #[arg(long)]
    pub fast: bool,
    /// The lab's frame rate: resample the recording at HZ (default: its own frames).
    #[arg(long, value_name = "HZ")]
    pub rate: Option<f32>,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Which animation of the source to play, by name or index.
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// How many loops of the built-in performance to play.
    #[arg(long, default_value_t = 2)]
    pub loops: u32,
}

/// What the lab skeleton does over time.
enum Performance {
    /// A recording of the lab skeleton: its joints are sent as they are.
    Own {
        motion: Motion,
        /// The recording's joint for each lab joint.
        joints: Vec<usize>,
        rotations: Vec<Quat>,
        translations: Vec<Vec3>,
    },
    /// Any other recording, retargeted onto the lab skeleton.
    Retargeted {
        replay: Box<Replay>,
        target: Box<TargetRig>,
        pose: Box<HumanoidPose>,
        rotations: Vec<Quat>,
        /// The lab root's rest translation, sent when the root is not the hips.
        root_rest: Vec3,
    },
}

impl Performance {
    /// The recording's own frame times, seconds.
    fn times(&self) -> &[f32] {
        match self {
            Performance::Own { motion, .. } => motion.times(),
            Performance::Retargeted { replay, .. } => replay.times(),
        }
    }

    /// Fills `frame` with every lab joint's local rotation and the root position
    /// at `t` seconds.
    fn sample(&mut self, t: f32, frame: &mut JointFrame) -> CliResult<()> {
        match self {
            Performance::Own {
                motion,
                joints,
                rotations,
                translations,
            } => {
                motion.sample_into(t, rotations, translations);
                for (lab, &source) in joints.iter().enumerate() {
                    frame.set(lab, rotations[source]);
                }
                frame.root_position = Some(translations[joints[0]]);
            }
            Performance::Retargeted {
                replay,
                target,
                pose,
                rotations,
                root_rest,
            } => {
                replay.pose_at(t, pose);
                let mut hips = Vec3::ZERO;
                FromNormalized {
                    target,
                    pose,
                    local_rotations: rotations,
                    hips_translation: &mut hips,
                }
                .run()?;
                for (lab, q) in rotations.iter().enumerate() {
                    frame.set(lab, *q);
                }
                // The schema carries the root's position only: the hips move when
                // they are the root, and stay at rest under another root.
                frame.root_position = Some(if target.hips_joint() == 0 {
                    hips
                } else {
                    *root_rest
                });
            }
        }
        Ok(())
    }
}

/// The recording's joint for each joint of `lab`, when the recording is of the
/// lab skeleton: every lab joint found by name, under a parent of the same name.
fn same_skeleton(lab: &Skeleton, source: &Skeleton) -> Option<Vec<usize>> {
    let name = |s: &Skeleton, j: Option<usize>| j.map(|j| s.joints()[j].name.clone());
    lab.joints()
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let k = source.find(&joint.name)?;
            (name(lab, lab.parent(j)) == name(source, source.parent(k))).then_some(k)
        })
        .collect()
}

fn own(motion: Motion, joints: Vec<usize>, source: &Skeleton) -> Performance {
    Performance::Own {
        motion,
        joints,
        rotations: source.rest_rotations(),
        translations: source.rest_translations(),
    }
}

/// What to play and how it reaches the lab skeleton, with a label for each.
fn performance(
    args: &SimulateArgs,
    lab_label: &str,
    lab: &Rig,
) -> CliResult<(String, &'static str, Performance)> {
    let source = args.source.as_deref();
    if let Some(path) = source
        && !reads_as_vrma(path)
        && let Ok(loaded) = formats::load_rig(path, &load_options(&args.rig))
        && let Some(joints) = same_skeleton(&lab.skeleton, &loaded.skeleton)
        && let Some(clip) = loaded.clip(args.clip.as_deref())
    {
        let performance = own(clip.motion.clone(), joints, &loaded.skeleton);
        return Ok((path.display().to_string(), "joint by joint", performance));
    }
    let (label, take) = load_take(source, &args.rig, args.clip.as_deref(), args.loops)?;
    let replay = match take {
        LoadedTake::Rig { mapped, motion } => {
            if let Some(joints) = same_skeleton(&lab.skeleton, &mapped.skeleton) {
                return Ok((
                    label,
                    "joint by joint",
                    own(motion, joints, &mapped.skeleton),
                ));
            }
            Replay::from_rig(&mapped, motion, None)
        }
        LoadedTake::Normalized { replay, .. } => *replay,
    };
    let lab_mapped = map_rig(lab_label, lab, None)?;
    let target = TargetRig::new(&lab_mapped);
    let performance = Performance::Retargeted {
        replay: Box::new(replay),
        target: Box::new(target),
        pose: Box::default(),
        rotations: lab.skeleton.rest_rotations(),
        root_rest: lab.skeleton.rest_translations()[0],
    };
    Ok((label, "retargeted", performance))
}

/// The subjects' names: as given, or subject-1 ... subject-N.
fn subject_names(given: &[String], count: Option<usize>) -> CliResult<Vec<PerformerName>> {
    let names: Vec<String> = if given.is_empty() {
        let n = count.unwrap_or(1);
        if !(1..=MAX_SUBJECTS).contains(&n) {
            return Err(format!("--subjects {n}: not 1 to {MAX_SUBJECTS}").into());
        }
        (1..=n).map(|i| format!("subject-{i}")).collect()
    } else {
        given.to_vec()
    };
    let mut out: Vec<PerformerName> = Vec::with_capacity(names.len());
    for name in &names {
        let p = PerformerName::new(name)
            .ok_or_else(|| format!("--subject `{name}`: a name is 1 to 32 bytes"))?;
        if out.contains(&p) {
            return Err(format!("--subject `{name}` is given twice").into());
        }
        out.push(p);
    }
    Ok(out)
}

/// The lab skeleton with its stream format: the file given, or the built-in lab19.
fn lab_skeleton(path: Option<&Path>) -> CliResult<(String, Rig, StreamFormat)> {
    let options = LoadOptions::default();
    Ok(match path {
        Some(p) => {
            let (rig, stream) = skeleton_json::load_with_stream(p, &options)?;
            (p.display().to_string(), rig, stream)
        }
        None => {
            let (rig, stream) = skeleton_json::parse_with_stream(
                mocap_bridge::skeleton::builtin::LAB19_JSON,
                Path::new("lab19.json"),
                &options,
            )?;
            ("lab19.json".to_owned(), rig, stream)
        }
    })
}

/// What has been sent.
#[derive(Default)]
struct Sent {
    frames: u64,
    datagrams: u64,
    bytes: u64,
    refused: u64,
}

/// `simulate`: plays a recording to a lab OSC receiver as the lab's system would.
pub fn run(args: SimulateArgs) -> CliResult<()> {
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(format!("--rate {rate}: not a positive number").into());
    }
    let subjects = subject_names(&args.subject, args.subjects)?;
    let (lab_label, lab_rig, stream) = lab_skeleton(args.skeleton.as_deref())?;
    let lab =
        LabSkeleton::new(&lab_rig.skeleton, stream).map_err(|e| format!("{lab_label}: {e}"))?;
    let (label, how, mut performance) = performance(&args, &lab_label, &lab_rig)?;
    let own_times = performance.times();
    let end = own_times.last().copied().unwrap_or(0.0);
    let times = frame_times(own_times, end, args.rate);
    // A loop lasts its frames and the gap of one frame before it starts again.
    let interval = if times.len() > 1 {
        end / (times.len() - 1) as f32
    } else {
        1.0 / demo::FPS
    };
    let period = end + interval;

    let to = args.to;
    let local: SocketAddr = if to.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let socket = UdpSocket::bind(local)
        .and_then(|s| s.connect(to).map(|()| s))
        .map_err(|e| format!("cannot send to {to}: {e}"))?;
    let stop = stop_on_interrupt()?;

    let mut stdout = std::io::stdout().lock();
    let names: Vec<&str> = subjects.iter().map(PerformerName::as_str).collect();
    writeln!(
        stdout,
        "simulating {label} ({how}, {} frames, {end:.2} s) as {} ({} joints, {}) for {} to {to}{}",
        times.len(),
        lab_label,
        lab.joint_count(),
        lab.stream(),
        names.join(", "),
        if args.repeat {
            ", looping until interrupted"
        } else {
            ""
        }
    )?;
    stdout.flush()?;

    let mut sent = Sent::default();
    let mut loop_start = 0.0f64;
    'play: loop {
        let pacer = (!args.fast).then(Pacer::start);
        for &t in &times {
            if stop.load(Ordering::Relaxed) {
                break 'play;
            }
            if let Some(p) = &pacer {
                p.wait_for(t);
            }
            for (k, name) in subjects.iter().enumerate() {
                let mut frame = JointFrame::new(*name);
                frame.frame = sent.frames;
                frame.time = loop_start + f64::from(t);
                frame.joint_count = lab.joint_count() as u16;
                // Further subjects play further on, wrapping round the loop.
                let at = (t + k as f32 * SUBJECT_OFFSET) % period;
                performance.sample(at, &mut frame)?;
                for d in lab.encode(&frame) {
                    match socket.send(&d) {
                        Ok(_) => {
                            sent.datagrams += 1;
                            sent.bytes += d.len() as u64;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                            sent.refused += 1;
                        }
                        Err(e) => return Err(format!("cannot send to {to}: {e}").into()),
                    }
                }
            }
            sent.frames += 1;
        }
        if !args.repeat {
            break;
        }
        if let Some(p) = &pacer {
            p.wait_for(period);
        }
        loop_start += f64::from(period);
    }
    writeln!(
        stdout,
        "sent {} frames x {} subject{} in {} datagrams ({} bytes); {} refused (no receiver listening)",
        sent.frames,
        subjects.len(),
        if subjects.len() == 1 { "" } else { "s" },
        sent.datagrams,
        sent.bytes,
        sent.refused
    )?;
    Ok(())
}
