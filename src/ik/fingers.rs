//! Fingers from tracked hand joints (WebXR hand input, sent in a `trackers`
//! frame): each finger bone is turned, in the order of its chain, by the smallest
//! rotation that points it from its T-pose direction where the tracked joints
//! say. Directions only, so the tracked hand's size does not matter; the bone's
//! twist stays its parent's (finger joints barely twist).
//!
//! Pure and allocation-free, on a normalized pose whose hand is already placed
//! (VR-mode IK runs first).

use glam::{Quat, Vec3};

use crate::humanoid::{BONE_COUNT, HAND_JOINTS, HumanBone, HumanoidPose, Side};

/// Per VRM finger bone of the left hand: the tracked joints its direction runs
/// between (the right hand is the same with right-side bones).
const LEFT: [(HumanBone, usize, usize); 15] = [
    (HumanBone::LeftThumbMetacarpal, 1, 2),
    (HumanBone::LeftThumbProximal, 2, 3),
    (HumanBone::LeftThumbDistal, 3, 4),
    (HumanBone::LeftIndexProximal, 6, 7),
    (HumanBone::LeftIndexIntermediate, 7, 8),
    (HumanBone::LeftIndexDistal, 8, 9),
    (HumanBone::LeftMiddleProximal, 11, 12),
    (HumanBone::LeftMiddleIntermediate, 12, 13),
    (HumanBone::LeftMiddleDistal, 13, 14),
    (HumanBone::LeftRingProximal, 16, 17),
    (HumanBone::LeftRingIntermediate, 17, 18),
    (HumanBone::LeftRingDistal, 18, 19),
    (HumanBone::LeftLittleProximal, 21, 22),
    (HumanBone::LeftLittleIntermediate, 22, 23),
    (HumanBone::LeftLittleDistal, 23, 24),
];

/// The avatar's T-pose direction of every finger bone (unit, model space).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FingerRest {
    directions: [Vec3; BONE_COUNT],
}

impl FingerRest {
    /// From the T-pose positions of the bones: a bone points at its finger's next
    /// bone; the last bone of a finger continues the one before it.
    #[must_use]
    pub fn new(position: impl Fn(HumanBone) -> Vec3) -> Self {
        let mut directions = [Vec3::ZERO; BONE_COUNT];
        for side in [Side::Left, Side::Right] {
            for finger in bones(side).chunks(3) {
                for (k, &(bone, _, _)) in finger.iter().enumerate() {
                    let d = match finger.get(k + 1) {
                        Some(&(next, _, _)) => position(next) - position(bone),
                        None => position(bone) - position(finger[k - 1].0),
                    };
                    directions[bone.index()] = d.normalize_or(side_x(side));
                }
            }
        }
        Self { directions }
    }
}

/// Straight out to the side: left hand's fingers point to +X in the T-pose.
fn side_x(side: Side) -> Vec3 {
    match side {
        Side::Right => Vec3::NEG_X,
        _ => Vec3::X,
    }
}

/// The finger bones of one hand with their joints, as in `LEFT`.
fn bones(side: Side) -> [(HumanBone, usize, usize); 15] {
    LEFT.map(|(bone, a, b)| match side {
        Side::Right => (bone.mirrored(), a, b),
        _ => (bone, a, b),
    })
}

/// The world rotation of `bone` in `pose`: the product of the normalized local
/// rotations down its chain (absent bones follow their parent).
fn world(pose: &HumanoidPose, bone: HumanBone) -> Quat {
    let mut rotation = pose.rotation_or_identity(bone);
    let mut at = bone.parent();
    while let Some(parent) = at {
        rotation = pose.rotation_or_identity(parent) * rotation;
        at = parent.parent();
    }
    rotation
}

/// Bends `side`'s fingers in `pose` to the tracked `joints` (model space, metres;
/// a joint pair closer than 0.1 mm leaves that bone as it is).
pub fn apply(pose: &mut HumanoidPose, rest: &FingerRest, side: Side, joints: &[Vec3; HAND_JOINTS]) {
    let hand = match side {
        Side::Right => HumanBone::RightHand,
        _ => HumanBone::LeftHand,
    };
    let hand_world = world(pose, hand);
    for finger in bones(side).chunks(3) {
        let mut parent_world = hand_world;
        for &(bone, a, b) in finger {
            let wanted = joints[b] - joints[a];
            let current = parent_world * pose.rotation_or_identity(bone);
            let mut bone_world = current;
            if wanted.length_squared() > 1e-8 {
                let pointing = current * rest.directions[bone.index()];
                bone_world = Quat::from_rotation_arc(pointing, wanted.normalize()) * current;
                let local = (parent_world.conjugate() * bone_world).normalize();
                pose.set_rotation(bone, local);
            }
            parent_world = bone_world;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A T-pose hand from a rest, every bone's joints at its rest positions plus
    /// a tip past the last bone.
    fn joints_of(position: impl Fn(HumanBone) -> Vec3, side: Side) -> [Vec3; HAND_JOINTS] {
        let mut joints = [Vec3::ZERO; HAND_JOINTS];
        for finger in bones(side).chunks(3) {
            for (k, &(bone, a, b)) in finger.iter().enumerate() {
                joints[a] = position(bone);
                if k == 2 {
                    let before = position(finger[1].0);
                    joints[b] = position(bone) + (position(bone) - before);
                }
            }
        }
        joints
    }

    fn standard(bone: HumanBone) -> Vec3 {
        crate::formats::vrma::VrmaRest::standard(0.95).position(bone)
    }

    #[test]
    fn a_t_pose_hand_leaves_the_fingers_straight() {
        let rest = FingerRest::new(standard);
        for side in [Side::Left, Side::Right] {
            let mut pose = HumanoidPose::default();
            apply(&mut pose, &rest, side, &joints_of(standard, side));
            for (bone, _, _) in bones(side) {
                let q = pose.rotation_or_identity(bone);
                assert!(q.angle_between(Quat::IDENTITY) < 1e-3, "{bone:?}: {q}");
            }
        }
    }

    #[test]
    fn a_curled_finger_points_where_its_joints_do_under_a_turned_hand() {
        let rest = FingerRest::new(standard);
        let mut pose = HumanoidPose::default();
        // The arm raised and the hand turned: fingers still follow world directions.
        pose.set_rotation(HumanBone::LeftUpperArm, Quat::from_rotation_z(0.7));
        pose.set_rotation(HumanBone::LeftHand, Quat::from_rotation_y(0.4));
        let mut joints = [Vec3::ZERO; HAND_JOINTS];
        // The index finger curls down in three 40° steps; others stay unset.
        let mut at = Vec3::new(0.8, 1.4, 0.0);
        let mut dir = Vec3::X;
        for joint in &mut joints[6..=9] {
            *joint = at;
            at += dir * 0.03;
            dir = Quat::from_rotation_z(-0.7) * dir;
        }
        apply(&mut pose, &rest, Side::Left, &joints);
        for (bone, a, b) in bones(Side::Left) {
            let wanted = joints[b] - joints[a];
            if wanted.length() < 1e-4 {
                continue;
            }
            let got = world(&pose, bone) * rest.directions[bone.index()];
            let angle = got.angle_between(wanted.normalize()).to_degrees();
            assert!(angle < 0.01, "{bone:?} off by {angle}°");
        }
    }
}
