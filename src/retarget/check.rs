//! Checks a retarget by its outcome: the direction of each arm and leg segment of
//! the target, in its facing-corrected model space, against the source's. Used by
//! `mocap-bridge retarget` to report its worst error on every run.

use glam::{Affine3A, Vec3};

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use super::MappedSkeleton;

/// The limb segments compared: from a bone's joint to the next bone's joint.
pub const LIMBS: [(HumanBone, HumanBone); 8] = [
    (B::LeftUpperArm, B::LeftLowerArm),
    (B::LeftLowerArm, B::LeftHand),
    (B::RightUpperArm, B::RightLowerArm),
    (B::RightLowerArm, B::RightHand),
    (B::LeftUpperLeg, B::LeftLowerLeg),
    (B::LeftLowerLeg, B::LeftFoot),
    (B::RightUpperLeg, B::RightLowerLeg),
    (B::RightLowerLeg, B::RightFoot),
];

/// Direction (not normalized) of each of `LIMBS` for joint transforms `world`.
#[must_use]
pub fn limb_vectors(m: &MappedSkeleton, world: &[Affine3A]) -> [Vec3; 8] {
    let pos = |b: HumanBone| {
        m.map
            .joint(b)
            .map_or(Vec3::ZERO, |j| Vec3::from(world[j].translation))
    };
    LIMBS.map(|(from, to)| m.correction.facing * (pos(to) - pos(from)))
}

/// Largest angle between matching limb vectors, degrees.
#[must_use]
pub fn worst_angle_deg(a: &[Vec3; 8], b: &[Vec3; 8]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.cross(*y).length().atan2(x.dot(*y)).to_degrees())
        .fold(0.0, f32::max)
}
