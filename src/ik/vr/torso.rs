//! The torso: how the spine's turn moves the neck joint, and the neck's and head's
//! rotations under the chest.

use glam::Quat;

use crate::humanoid::{HumanBone, HumanoidPose};
use crate::ik::body::{BodyFrame, BodyProportions};

/// How much farther than the arc about the hips the spine's turn must go for the
/// neck joint to follow it: turning the spine's `n` bones by `δ/n` each moves the
/// neck joint by `δ/n · Σ |T(neck) − T(bone)|` (straight, small turns), a turn of
/// everything about the hips by `δ · |T(neck) − T(hips)|`; their ratio, at least 1.
pub(super) fn spine_gain(
    body: &BodyProportions,
    spine: &[Option<HumanBone>; 3],
    end: HumanBone,
) -> f32 {
    let top = body.rest_position(end);
    let (mut sum, mut n) = (0.0, 0.0);
    for bone in spine.iter().flatten() {
        sum += top.distance(body.rest_position(*bone));
        n += 1.0;
    }
    let whole = top.distance(body.rest_position(HumanBone::Hips));
    if sum > 0.0 {
        (whole * n / sum).max(1.0)
    } else {
        1.0
    }
}

/// Model rotation of the highest spine bone the body has (the hips' when none).
pub(super) fn top_of_spine(
    spine: &[Option<HumanBone>; 3],
    frame: &BodyFrame,
    hips_rotation: Quat,
) -> Quat {
    spine
        .iter()
        .rev()
        .flatten()
        .next()
        .map_or(hips_rotation, |b| frame.rotation(*b))
}

/// Turns the neck halfway from the chest's rotation `top` to `toward` (the head's,
/// smoothed), and the head the rest of the way to `head`; returns the neck's model
/// rotation (`top` without one).
pub(super) fn set_neck_and_head(
    pose: &mut HumanoidPose,
    body: &BodyProportions,
    top: Quat,
    toward: Quat,
    head: Quat,
) -> Quat {
    let neck_model = if body.has(HumanBone::Neck) {
        let m = top.slerp(toward, 0.5).normalize();
        pose.set_rotation(HumanBone::Neck, (top.conjugate() * m).normalize());
        m
    } else {
        top
    };
    pose.set_rotation(HumanBone::Head, (neck_model.conjugate() * head).normalize());
    neck_model
}
