//! `retarget`: a recording onto a model, frame by frame, printed and checked; and
//! loading what `retarget` and `send` play.

use std::io::Write as _;
use std::path::Path;

use glam::{Quat, Vec3};
use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::formats::{self, Motion};
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig, check};
use mocap_bridge::takes::demo;
use mocap_bridge::takes::replay::{Pacer, Replay};

use super::convert::ext_clips;
use super::{explicit_map, load_options, mapped};
use crate::{CliResult, RigArgs};

/// Where `retarget` takes its frames from.
pub enum Take {
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
pub struct RetargetOptions {
    pub clip: Option<String>,
    pub every: usize,
    pub loops: u32,
    pub realtime: bool,
}

pub fn retarget(
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
            let humanoid = mocap_bridge::formats::skeleton_json::embedded_rig(
                "humanoid.json",
                mocap_bridge::skeleton::builtin::HUMANOID_JSON,
            );
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
pub fn load_take(
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
            let lab19 = mocap_bridge::formats::skeleton_json::embedded_rig(
                "lab19.json",
                mocap_bridge::skeleton::builtin::LAB19_JSON,
            );
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

pub fn is_vrma(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("vrma"))
}
