//! A built-in performance for running without hardware or files: the lab19 skeleton
//! (arms-down rest, centimetres, joint-named bones) waving and marching in place.
//!
//! The motion is written in normalized space (readable angles from the T-pose) and
//! turned into lab19's own local rotations with `FromNormalized`, so what comes out
//! is a capture in the lab's conventions, exactly what the bridge must undo.

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec3};

use crate::formats::Motion;
use crate::humanoid::{HumanBone as B, HumanoidPose};
use crate::retarget::{FromNormalized, MappedSkeleton, TargetRig};

/// Frames per second of the built-in performance.
pub const FPS: f32 = 60.0;

/// Length of one loop of the performance, seconds.
pub const LOOP_SECONDS: f32 = 4.0;

/// The normalized pose of the performance at `t` seconds for a body whose hips
/// stand `hips_height` metres above the floor.
///
/// The walk in place is a march: each leg in turn lifts its knee and sets the foot
/// down where it was, while the other stands straight under the hips, so one foot
/// is always on the floor and a standing foot does not move.
#[must_use]
pub fn pose_at(t: f32, hips_height: f32) -> HumanoidPose {
    let step = TAU * t / (LOOP_SECONDS / 2.0); // two steps per loop
    let wave = TAU * t * 1.5;
    let mut pose = HumanoidPose::default();
    pose.hips_position = Vec3::new(0.0, hips_height, 0.0);
    pose.rest_hips_height = hips_height;
    pose.set_rotation(B::Spine, Quat::from_rotation_y(-0.06 * step.sin()));
    pose.set_rotation(B::Chest, Quat::from_rotation_x(0.05));
    pose.set_rotation(B::Neck, Quat::from_rotation_x(0.1 * (wave * 0.5).sin()));
    pose.set_rotation(B::Head, Quat::from_rotation_z(0.15 * (wave * 0.5).sin()));
    // Legs: the thigh lifts forward (negative X), the knee bends backward (+X) and
    // the foot tips its toes down (+X), eased in and out (sin²: no jolt at lift-off
    // or touch-down) over the half step the leg is in the air.
    for (thigh, knee, foot, phase) in [
        (B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot, 0.0),
        (B::RightUpperLeg, B::RightLowerLeg, B::RightFoot, PI),
    ] {
        let lift = (step + phase).sin().max(0.0).powi(2);
        pose.set_rotation(thigh, Quat::from_rotation_x(-0.75 * lift));
        pose.set_rotation(knee, Quat::from_rotation_x(1.3 * lift));
        pose.set_rotation(foot, Quat::from_rotation_x(-0.35 * lift));
    }
    // Left arm down and swinging with the walk; right arm raised and waving.
    pose.set_rotation(
        B::LeftUpperArm,
        Quat::from_rotation_x(0.35 * step.sin()) * Quat::from_rotation_z(-70f32.to_radians()),
    );
    pose.set_rotation(B::LeftLowerArm, Quat::from_rotation_y(-0.3));
    pose.set_rotation(B::RightUpperArm, Quat::from_rotation_z(-55f32.to_radians()));
    pose.set_rotation(
        B::RightLowerArm,
        Quat::from_rotation_z((-45.0 + 30.0 * wave.sin()).to_radians()),
    );
    pose.set_rotation(B::RightHand, Quat::from_rotation_x(0.3 * wave.cos()));
    pose
}

/// The performance as lab19 would capture it: `loops` loops at `FPS`, as local
/// rotations and translations of lab19's joints.
#[must_use]
pub fn lab19_performance(lab19: &MappedSkeleton, loops: u32) -> Motion {
    let target = TargetRig::new(lab19);
    let frames = (LOOP_SECONDS * FPS) as usize * loops.max(1) as usize;
    let joints = lab19.skeleton.len();
    let mut rotations = vec![Quat::IDENTITY; frames * joints];
    let mut translations = Vec::with_capacity(frames * joints);
    let hips = target.hips_joint();
    let height = lab19.rest_hips_height();
    for (i, out) in rotations.chunks_mut(joints).enumerate() {
        let pose = pose_at(i as f32 / FPS, height);
        let mut hips_translation = Vec3::ZERO;
        FromNormalized {
            target: &target,
            pose: &pose,
            local_rotations: out,
            hips_translation: &mut hips_translation,
        }
        .run()
        .unwrap_or_else(|e| unreachable!("the built-in pose fits lab19: {e}"));
        let mut frame = lab19.skeleton.rest_translations();
        frame[hips] = hips_translation;
        translations.extend(frame);
    }
    Motion::uniform(1.0 / FPS, joints, rotations, translations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::inspect::choose_map;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::skeleton::builtin::{HUMANOID_JSON, LAB19_JSON};

    #[test]
    fn embedded_skeletons_parse_and_map() {
        for (name, json) in [("lab19.json", LAB19_JSON), ("humanoid.json", HUMANOID_JSON)] {
            let rig = embedded_rig(name, json);
            let map = choose_map(&rig, None).expect("embedded rigs carry a map");
            assert!(
                MappedSkeleton::new(rig.skeleton, &map.map).is_ok(),
                "{name}"
            );
        }
    }

    #[test]
    fn the_performance_moves_and_loops() {
        let a = pose_at(0.3, 0.9);
        let b = pose_at(1.3, 0.9);
        let c = pose_at(0.3 + LOOP_SECONDS, 0.9);
        let arm = |p: &HumanoidPose| p.rotation(B::RightLowerArm).unwrap_or_default();
        assert!(arm(&a).angle_between(arm(&b)) > 0.1);
        assert!(arm(&a).angle_between(arm(&c)) < 1e-3);
    }

    /// The march keeps one foot on the floor: on every frame the lower ankle is at
    /// its rest height, and an ankle standing on two frames in a row has not moved;
    /// the lifted foot clears the floor by a good step.
    #[test]
    fn one_foot_always_stands_still_on_the_floor() {
        let rig = embedded_rig("lab19.json", LAB19_JSON);
        let map = choose_map(&rig, None).expect("lab19 carries a map");
        let lab19 = MappedSkeleton::new(rig.skeleton, &map.map).expect("lab19 maps");
        let ankles = [B::LeftFoot, B::RightFoot].map(|b| lab19.map.joint(b).expect("feet"));
        let motion = lab19_performance(&lab19, 1);
        // At 0 s both legs stand straight: each ankle's height on the floor.
        let first = motion.frame(0);
        let first = lab19
            .skeleton
            .world_transforms(first.rotations, first.translations);
        let standing_heights = ankles.map(|j| first[j].translation.y);
        let mut before: Option<[Vec3; 2]> = None;
        let mut highest = 0.0_f32;
        let mut stood = 0;
        for f in motion.frames() {
            let world = lab19.skeleton.world_transforms(f.rotations, f.translations);
            let at = ankles.map(|j| Vec3::from(world[j].translation));
            let lift = [0, 1].map(|s| at[s].y - standing_heights[s]);
            let low = lift[0].min(lift[1]);
            assert!(
                low.abs() < 1e-5,
                "the lower ankle {low} m off its rest height"
            );
            highest = highest.max(lift[0].max(lift[1]));
            // While the other foot is in the air on this frame and the one before,
            // the standing foot does not move.
            if let Some(before) = before {
                for s in 0..2 {
                    let other = 1 - s;
                    let up = |p: [Vec3; 2]| p[other].y - standing_heights[other] > 0.01;
                    if up(at) && up(before) {
                        let slide = at[s].distance(before[s]);
                        assert!(slide < 1e-5, "a standing foot slides {slide} m");
                        stood += 1;
                    }
                }
            }
            before = Some(at);
        }
        assert!(highest > 0.1, "the lifted foot rises {highest} m");
        // A foot stands alone for most of the loop.
        assert!(
            stood >= motion.frame_count() / 2,
            "{stood} frames on one foot"
        );
        assert!(standing_heights.iter().all(|h| (0.03..0.1).contains(h)));
    }
}
