//! Arms: how far a shoulder turns toward a far hand, and the share of the hand's
//! roll the forearm takes.

use glam::{Quat, Vec3};

use crate::humanoid::HumanoidPose;
use crate::ik::body::{BodyFrame, BodyProportions, Limb};

/// The fraction (at most `most`) of the turn from `root` toward `target` (both
/// from the shoulder joint) that brings the arm's root within `reach` of the
/// target: 0 when it already is. The root moves on a circle about the joint, its
/// distance to the target falling as it turns, so the angle is the law of cosines'.
pub(super) fn shoulder_to_reach(root: Vec3, target: Vec3, reach: f32, most: f32) -> f32 {
    let (r, d) = (root.length(), target.length());
    let full = root.angle_between(target);
    if root.distance(target) <= reach || r < 1e-6 || d < 1e-6 || full < 1e-6 {
        return 0.0;
    }
    let cos = ((r * r + d * d - reach * reach) / (2.0 * r * d)).clamp(-1.0, 1.0);
    ((full - cos.acos()) / full).clamp(0.0, most)
}

/// Moves `share` of the hand's twist about the forearm (its roll relative to the lower
/// arm) into the lower arm. The wrist stays put (the lower arm turns about its own
/// axis) and so does the hand's model rotation.
pub(super) fn share_forearm_twist(
    body: &BodyProportions,
    limb: Limb,
    share: f32,
    frame: &mut BodyFrame,
    pose: &mut HumanoidPose,
) {
    let [_, lower, hand] = limb.bones();
    let Some(axis) = (body.rest_position(hand) - body.rest_position(lower)).try_normalize() else {
        return;
    };
    let local = pose.rotation_or_identity(hand);
    // Swing-twist: the twist keeps the rotation's vector part along the axis.
    let v = Vec3::new(local.x, local.y, local.z);
    let along = axis * v.dot(axis);
    let twist = Quat::from_xyzw(along.x, along.y, along.z, local.w);
    let norm = twist.length();
    if norm < 1e-6 {
        return;
    }
    let twist = twist / norm;
    let part = Quat::IDENTITY.slerp(twist, share);
    let lower_local = pose.rotation_or_identity(lower);
    pose.set_rotation(lower, (lower_local * part).normalize());
    pose.set_rotation(hand, (part.conjugate() * local).normalize());
    let i = lower.index();
    frame.model_rotations[i] = (frame.model_rotations[i] * part).normalize();
}
