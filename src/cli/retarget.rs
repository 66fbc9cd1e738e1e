//! `retarget`: a recording onto a model, frame by frame, printed and checked.

use std::io::Write as _;
use std::path::PathBuf;

use glam::{Quat, Vec3};
use mocap_bridge::formats;
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::retarget::{FromNormalized, TargetRig, check};
use mocap_bridge::takes::replay::{Pacer, Replay};

use super::load_take;
use super::{CliResult, RigArgs, target_load_options};
use mocap_bridge::formats::inspect::{explicit_map, map_rig};
use mocap_bridge::takes::load::LoadedTake;

/// Above this (degrees), `retarget` says that the target's limbs keep their rest's
/// offset from a T-pose: far above rounding, below any pose a user would call
/// other than a T-pose.
const REST_OFFSET_NOTE_DEG: f32 = 0.5;

/// Options of `retarget`.
#[derive(clap::Args)]
pub struct RetargetArgs {
    /// Source with motion (.bvh, .glb/.gltf/.vrm with animations, .vrma);
    /// default: the built-in lab19 performance.
    pub source: Option<PathBuf>,
    /// Target model (.vrm, .glb, .gltf, .bvh or skeleton .json); default: the
    /// built-in VRM 1.0 T-pose humanoid (config/skeletons/humanoid.json).
    #[arg(long, value_name = "MODEL")]
    pub target: Option<PathBuf>,
    /// Bone map for the target (default: its own, else the catalog's, else recognized).
    #[arg(long, value_name = "MAP")]
    pub target_map: Option<PathBuf>,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Print a line every N frames; 0 prints only the summary.
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub every: usize,
    /// How many loops of the built-in performance to play.
    #[arg(long, default_value_t = 2)]
    pub loops: u32,
    /// Which animation of the source to play, by name or index (default: the first).
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// Play in real time (frames paced by their timestamps) instead of as fast as
    /// possible.
    #[arg(long)]
    pub realtime: bool,
}

pub fn run(args: RetargetArgs) -> CliResult<()> {
    let RetargetArgs {
        source,
        target,
        target_map,
        rig,
        ..
    } = &args;
    let (source, target, target_map, rig) = (
        source.as_deref(),
        target.as_deref(),
        target_map.as_deref(),
        rig,
    );
    let opts = &args;
    let mut stdout = std::io::stdout().lock();
    let clip = opts.clip.as_deref();
    let (source_label, take) = load_take(source, rig, clip, opts.loops)?;
    let (target_label, dst) = match target {
        Some(path) => {
            let loaded = formats::load_rig(path, &target_load_options(rig))?;
            let label = path.display().to_string();
            let dst = map_rig(&label, &loaded, explicit_map(target_map)?)?;
            (label, dst)
        }
        None => {
            let humanoid = mocap_bridge::formats::skeleton_json::embedded_rig(
                "humanoid.json",
                mocap_bridge::skeleton::builtin::HUMANOID_JSON,
            );
            let dst = map_rig("humanoid.json", &humanoid, explicit_map(target_map)?)?;
            ("built-in VRM 1.0 humanoid".to_owned(), dst)
        }
    };
    let describe = match &take {
        LoadedTake::Rig { mapped, motion } => format!(
            "{}, {} joints, {}",
            mapped.correction.pose,
            mapped.skeleton.len(),
            frames_at(motion.frame_count(), motion.mean_rate())
        ),
        LoadedTake::Normalized { summary, .. } => summary.clone(),
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
    let source_rig = match &take {
        LoadedTake::Rig { mapped, .. } => Some(&**mapped),
        LoadedTake::Normalized { .. } => None,
    };
    let limb_check = check::LimbCheck::new(source_rig, &dst);
    let has_source = source_rig.is_some();
    let offset = limb_check.target_rest_offset_deg();
    if offset > REST_OFFSET_NOTE_DEG {
        writeln!(
            stdout,
            "note: the target is driven from a rest whose limbs are up to {offset:.1}° from a \
             T-pose's (a VRM from its own rest, as VRM players drive it): its limbs keep that \
             offset from the source's, and are checked against that rest"
        )?;
    }
    let target_rig = TargetRig::new(&dst);
    let hips_joint = target_rig.hips_joint();
    let mut out = vec![Quat::IDENTITY; dst.skeleton.len()];
    let mut translations = dst.skeleton.rest_translations();
    let (mut worst, mut busy, mut frames) = (0.0f32, std::time::Duration::ZERO, 0usize);
    let pacer = opts.realtime.then(Pacer::start);
    let (mut replay, take) = match take {
        LoadedTake::Rig { mapped, motion } => {
            let replay = Replay::from_rig(&mapped, motion.clone(), None);
            (replay, Some((mapped, motion)))
        }
        LoadedTake::Normalized { replay, .. } => (*replay, None),
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
        target_rig.place_held_bones(&out, hips, &mut translations)?;
        busy += started.elapsed();
        let world = dst.skeleton.world_transforms(&out, &translations);
        let got = check::limb_vectors(&dst, &world);
        // The check: the target's limbs and, when it has a skeleton, the source's own
        // at this frame, against where the frame's normalized rotations put them.
        let source_limbs = take.as_ref().map(|(mapped, motion)| {
            let frame = motion.frame(frames.min(motion.frame_count() - 1));
            let source_world = mapped
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            check::limb_vectors(mapped, &source_world)
        });
        let error =
            limb_check.worst_error_deg(&pose.model_rotations(), &got, source_limbs.as_ref());
        worst = worst.max(error);
        if opts.every > 0 && frames % opts.every == 0 {
            let p = dst.correction.facing * Vec3::from(world[hips_joint].translation);
            let up = |v: Vec3| v.normalize().y.clamp(-1.0, 1.0).asin().to_degrees();
            let bend = |a: Vec3, b: Vec3| a.angle_between(b).to_degrees();
            writeln!(
                stdout,
                "{frames:>6} {t:>7.3}  ({:+.3}, {:+.3}, {:+.3})  {:>6.1} {:>6.1}  {:>9.1}  {:>6.1} {:>6.1}  {error:>9.5}",
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
    let check = if has_source {
        format!("worst limb direction error {worst:.5}°")
    } else {
        format!("worst limb direction error {worst:.5}° (on the target; no source skeleton)")
    };
    writeln!(
        stdout,
        "{} retargeted, {:.0} ns per frame (source -> normalized -> target), {check}",
        super::frames(frames),
        busy.as_nanos() as f64 / frames.max(1) as f64
    )?;
    Ok(())
}

/// `count` frames at `rate` for the header: under 10 fps with a decimal or two (a
/// clip keyed every few seconds is no "0 fps"), a single frame with no rate.
fn frames_at(count: usize, rate: f32) -> String {
    let frames = super::frames(count);
    if count < 2 {
        return frames;
    }
    let decimals = match rate {
        r if r >= 10.0 => 0,
        r if r >= 1.0 => 1,
        _ => 2,
    };
    format!("{frames} at {rate:.decimals$} fps")
}

#[cfg(test)]
mod tests {
    use super::frames_at;

    #[test]
    fn a_slow_clips_rate_keeps_its_digits_and_one_frame_has_none() {
        assert_eq!(frames_at(120, 30.0), "120 frames at 30 fps");
        assert_eq!(frames_at(2, 0.4), "2 frames at 0.40 fps");
        assert_eq!(frames_at(5, 2.5), "5 frames at 2.5 fps");
        assert_eq!(frames_at(1, 0.0), "1 frame");
    }
}
