//! Measuring the IK on whole clips: the numbers `mocap-bridge eval-ik` prints and the
//! tests check. Runs the per-frame jobs over a `Motion` and compares joint positions of
//! the posed target skeleton (its own forward kinematics, not the IK's). Pure code: it
//! allocates per clip, not per frame, and reads no files.

use glam::{Quat, Vec3};

use super::body::BodyProportions;
use super::mocap::{MocapIk, MocapIkConfig, MocapIkState};
use crate::formats::Motion;
use crate::humanoid::{HumanBone, HumanoidPose};
use crate::retarget::{
    FromNormalized, JobError, MappedSkeleton, SourceRig, TargetRig, ToNormalized,
};
use crate::skeleton::{RestCorrection, Skeleton};

/// Why an evaluation cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("retarget: {0}")]
    Retarget(#[from] JobError),
    #[error("ik: {0}")]
    Ik(#[from] super::IkError),
    #[error("the target has no `{0}`")]
    MissingBone(HumanBone),
    #[error("scaled skeleton: {0}")]
    Skeleton(#[from] crate::skeleton::InvalidSkeleton),
}

/// One frame of the feet: positions and toe heights (rotation only, with IK; left,
/// right) and contacts.
type FeetSample = ([[Vec3; 2]; 2], [[f32; 2]; 2], [bool; 2]);

/// A copy of `mapped` with its legs `factor` times as long: the rest offsets of the
/// lower legs and feet (the upper and lower leg bones) scaled, and the hips moved so
/// the soles stay at the same height.
pub fn scale_legs(mapped: &MappedSkeleton, factor: f32) -> Result<MappedSkeleton, EvalError> {
    use HumanBone as B;
    let mut joints = mapped.skeleton.joints().to_vec();
    for bone in [B::LeftLowerLeg, B::RightLowerLeg, B::LeftFoot, B::RightFoot] {
        let joint = mapped.map.joint(bone).ok_or(EvalError::MissingBone(bone))?;
        if let Some(j) = joints.get_mut(joint) {
            j.rest.translation *= factor;
        }
    }
    // Keep the soles where they were: move the hips by the change in the lowest
    // foot point (ankle, toe or end site), so the floor stays put.
    let lowest_foot = |skeleton: &Skeleton| {
        let world = skeleton.rest_world();
        [B::LeftFoot, B::RightFoot, B::LeftToes, B::RightToes]
            .into_iter()
            .filter_map(|b| mapped.map.joint(b))
            .flat_map(|j| {
                let w = world[j];
                let end = skeleton.joints()[j].end.map(|e| w.transform_point3(e).y);
                std::iter::once(w.translation.y).chain(end)
            })
            .fold(f32::INFINITY, f32::min)
    };
    let hips = mapped
        .map
        .joint(B::Hips)
        .ok_or(EvalError::MissingBone(B::Hips))?;
    let scaled = Skeleton::new(joints.clone())?;
    let rise = lowest_foot(&mapped.skeleton) - lowest_foot(&scaled);
    if rise.is_finite() {
        let parent = scaled.parent(hips).map(|p| scaled.rest_world()[p]);
        let up = parent.map_or(Vec3::Y, |w| w.inverse().transform_vector3(Vec3::Y));
        if let Some(j) = joints.get_mut(hips) {
            j.rest.translation += up * rise;
        }
    }
    let skeleton = Skeleton::new(joints)?;
    let correction = RestCorrection::compute(&skeleton, &mapped.map);
    Ok(MappedSkeleton {
        skeleton,
        map: mapped.map.clone(),
        correction,
    })
}

/// Foot skate and floor contact of one retargeted clip.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootReport {
    /// Mean horizontal motion of a foot in contact, cm per frame.
    pub skate_cm: f32,
    /// Largest horizontal motion of a foot in contact, cm in one frame.
    pub max_skate_cm: f32,
    /// Lowest foot joint (ankle) height, cm above the floor (`y = 0`).
    pub lowest_ankle_cm: f32,
    /// Lowest toe joint height (ankle when there are no toes), cm above the floor.
    pub lowest_toe_cm: f32,
}

/// Mocap mode against the rotation-only retarget on one clip.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MocapReport {
    pub frames: usize,
    /// Foot-frames in contact (both feet counted).
    pub contact_frames: usize,
    pub rotation_only: FootReport,
    pub with_ik: FootReport,
    /// Largest hips lowering, cm.
    pub max_hips_drop_cm: f32,
}

/// Retargets `motion` from `source` onto `target` twice, rotation only and with
/// mocap-mode IK, and measures the feet on the target skeleton during the contacts
/// mocap mode detected.
pub fn evaluate_mocap(
    source: &MappedSkeleton,
    motion: &Motion,
    target: &MappedSkeleton,
    config: &MocapIkConfig,
) -> Result<MocapReport, EvalError> {
    use HumanBone as B;
    let source_rig = SourceRig::new(source);
    let target_rig = TargetRig::new(target);
    let source_body = BodyProportions::new(source);
    let target_body = BodyProportions::new(target);
    let mut state = MocapIkState::default();
    let mut pose = HumanoidPose::default();
    let mut locals = vec![Quat::IDENTITY; target.skeleton.len()];
    let mut translations = target.skeleton.rest_translations();
    let hips = target_rig.hips_joint();
    let foot_joints = [B::LeftFoot, B::RightFoot].map(|b| target.map.joint(b));
    let [Some(left), Some(right)] = foot_joints else {
        return Err(EvalError::MissingBone(B::LeftFoot));
    };
    let toes = [
        target.map.joint(B::LeftToes).unwrap_or(left),
        target.map.joint(B::RightToes).unwrap_or(right),
    ];
    let feet = [left, right];
    let times = motion.times();
    let mut report = MocapReport {
        frames: motion.frame_count(),
        ..MocapReport::default()
    };
    // Per frame: foot positions without and with IK, and contacts.
    let mut tracks: Vec<FeetSample> = Vec::new();
    for (i, frame) in motion.frames().enumerate() {
        ToNormalized {
            source: &source_rig,
            local_rotations: frame.rotations,
            local_translations: frame.translations,
            pose: &mut pose,
        }
        .run()?;
        let mut pose_feet = [[Vec3::ZERO; 2]; 2];
        let mut toe_heights = [[0.0; 2]; 2];
        for (k, ik) in [false, true].into_iter().enumerate() {
            let mut solved = pose;
            if ik {
                let dt = match i {
                    0 => times.get(1).copied().unwrap_or(1.0 / 30.0),
                    _ => times[i] - times[i - 1],
                }
                .max(1e-4);
                MocapIk {
                    config,
                    source: &source_body,
                    target: &target_body,
                    dt,
                    state: &mut state,
                    pose: &mut solved,
                }
                .run()?;
                report.max_hips_drop_cm = report.max_hips_drop_cm.max(state.hips_drop * 100.0);
            }
            FromNormalized {
                target: &target_rig,
                pose: &solved,
                local_rotations: &mut locals,
                hips_translation: &mut translations[hips],
            }
            .run()?;
            let world = target.skeleton.world_transforms(&locals, &translations);
            for s in 0..2 {
                pose_feet[k][s] = Vec3::from(world[feet[s]].translation);
                toe_heights[k][s] = world[toes[s]].translation.y;
            }
        }
        let contacts = [state.is_planted(0), state.is_planted(1)];
        tracks.push((pose_feet, toe_heights, contacts));
    }
    let mut sums = [0.0f32; 2];
    let mut reports = [FootReport {
        lowest_ankle_cm: f32::INFINITY,
        lowest_toe_cm: f32::INFINITY,
        ..FootReport::default()
    }; 2];
    for (i, (positions, toe_heights, contacts)) in tracks.iter().enumerate() {
        for s in 0..2 {
            for k in 0..2 {
                let r = &mut reports[k];
                r.lowest_ankle_cm = r.lowest_ankle_cm.min(positions[k][s].y * 100.0);
                r.lowest_toe_cm = r.lowest_toe_cm.min(toe_heights[k][s] * 100.0);
            }
            let Some((before, _, was)) = i.checked_sub(1).map(|p| &tracks[p]) else {
                continue;
            };
            if !(contacts[s] && was[s]) {
                continue;
            }
            report.contact_frames += 1;
            for k in 0..2 {
                let d = positions[k][s] - before[k][s];
                let skate = Vec3::new(d.x, 0.0, d.z).length() * 100.0;
                sums[k] += skate;
                reports[k].max_skate_cm = reports[k].max_skate_cm.max(skate);
            }
        }
    }
    for k in 0..2 {
        reports[k].skate_cm = sums[k] / report.contact_frames.max(1) as f32;
    }
    report.rotation_only = reports[0];
    report.with_ik = reports[1];
    Ok(report)
}
