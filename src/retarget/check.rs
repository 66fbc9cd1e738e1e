//! Checks a retarget by its outcome: the direction of each arm and leg segment, in
//! facing-corrected model space, against where the frame's normalized rotations
//! put it. A segment of bone `b` in a pose with model rotations `M` points along
//! `M(b)` applied to its rest direction: the T-pose the source was corrected to on
//! the source, and on the target the rest it is driven from (for a VRM, the file's
//! own rest, which need not be a T-pose: every VRM player takes it as it is). Used
//! by `mocap-bridge retarget` to report its worst error on every run.

use glam::{Affine3A, Quat, Vec3};

use crate::humanoid::HumanBone as B;
use crate::humanoid::{BONE_COUNT, HumanBone};

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

/// The canonical T-pose's direction of each of `LIMBS`: the left arm along +X, the
/// right arm along −X, the legs down.
const T_POSE: [Vec3; 8] = [
    Vec3::X,
    Vec3::X,
    Vec3::NEG_X,
    Vec3::NEG_X,
    Vec3::NEG_Y,
    Vec3::NEG_Y,
    Vec3::NEG_Y,
    Vec3::NEG_Y,
];

/// Direction (not normalized) of each of `LIMBS` for joint transforms `world`.
#[must_use]
pub fn limb_vectors(m: &MappedSkeleton, world: &[Affine3A]) -> [Vec3; 8] {
    let facing = Affine3A::from_quat(m.correction.facing);
    segments(m, world, facing)
}

/// `LIMBS` of `world`, turned by `turn`.
fn segments(m: &MappedSkeleton, world: &[Affine3A], turn: Affine3A) -> [Vec3; 8] {
    let pos = |b: HumanBone| {
        m.map
            .joint(b)
            .and_then(|j| world.get(j))
            .map_or(Vec3::ZERO, |w| Vec3::from(w.translation))
    };
    LIMBS.map(|(from, to)| turn.transform_vector3(pos(to) - pos(from)))
}

/// Largest angle between matching limb vectors, degrees.
#[must_use]
pub fn worst_angle_deg(a: &[Vec3; 8], b: &[Vec3; 8]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.cross(*y).length().atan2(x.dot(*y)).to_degrees())
        .fold(0.0, f32::max)
}

/// The rest directions a retarget's frames are checked against (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimbCheck {
    /// The source's limbs in the T-pose it is corrected to, when it has a skeleton.
    source_rest: Option<[Vec3; 8]>,
    /// The target's limbs in the rest it is driven from.
    target_rest: [Vec3; 8],
}

impl LimbCheck {
    /// The rests of `target` and, when the take has one, of `source`.
    #[must_use]
    pub fn new(source: Option<&MappedSkeleton>, target: &MappedSkeleton) -> Self {
        // `t_pose_world` is turned to face +Z already.
        let rest = |m: &MappedSkeleton| {
            segments(
                m,
                &m.correction.t_pose_world(&m.skeleton),
                Affine3A::IDENTITY,
            )
        };
        Self {
            source_rest: source.map(rest),
            target_rest: rest(target),
        }
    }

    /// How far the target's rest limbs are from the canonical T-pose's, degrees
    /// (0 to rounding for every rig corrected to its T-pose).
    #[must_use]
    pub fn target_rest_offset_deg(&self) -> f32 {
        worst_angle_deg(&T_POSE, &self.target_rest)
    }

    /// The worst error of one frame, degrees: the target's limbs (`limb_vectors`)
    /// and, when given, the source's against where the frame's normalized model
    /// rotations `model` put each from its rest.
    #[must_use]
    pub fn worst_error_deg(
        &self,
        model: &[Quat; BONE_COUNT],
        target: &[Vec3; 8],
        source: Option<&[Vec3; 8]>,
    ) -> f32 {
        let posed = |rest: &[Vec3; 8]| {
            let mut out = *rest;
            for (v, (bone, _)) in out.iter_mut().zip(LIMBS) {
                *v = model[bone.index()] * *v;
            }
            out
        };
        let on_target = worst_angle_deg(target, &posed(&self.target_rest));
        let on_source = match (source, &self.source_rest) {
            (Some(got), Some(rest)) => worst_angle_deg(got, &posed(rest)),
            _ => 0.0,
        };
        on_target.max(on_source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rest with the arms `down` degrees below the horizontal, legs straight down.
    fn arms_down(down: f32) -> [Vec3; 8] {
        let (s, c) = down.to_radians().sin_cos();
        let mut rest = T_POSE;
        for v in &mut rest[..2] {
            *v = Vec3::new(c, -s, 0.0);
        }
        for v in &mut rest[2..4] {
            *v = Vec3::new(-c, -s, 0.0);
        }
        rest
    }

    #[test]
    fn a_target_resting_in_an_a_pose_is_checked_against_its_own_rest() {
        let check = LimbCheck {
            source_rest: Some(T_POSE),
            target_rest: arms_down(45.0),
        };
        assert!((check.target_rest_offset_deg() - 45.0).abs() < 1e-3);
        // The left upper arm raised 30° (about +Z), the rest of the body at rest.
        let mut model = [Quat::IDENTITY; BONE_COUNT];
        let raise = Quat::from_rotation_z(30f32.to_radians());
        model[HumanBone::LeftUpperArm.index()] = raise;
        let mut source = T_POSE;
        source[0] = raise * source[0];
        let mut target = arms_down(45.0);
        target[0] = raise * target[0];
        let error = check.worst_error_deg(&model, &target, Some(&source));
        assert!(error < 1e-3, "{error}°");
        // The target's arm where the source's is: off by its rest's 45°.
        let mut wrong = target;
        wrong[0] = source[0];
        let error = check.worst_error_deg(&model, &wrong, Some(&source));
        assert!((error - 45.0).abs() < 1e-3, "{error}°");
        // A source limb the rotations do not explain is caught too.
        let mut bent = source;
        bent[5] = Vec3::new(0.0, -1.0, 1.0);
        let error = check.worst_error_deg(&model, &target, Some(&bent));
        assert!((error - 45.0).abs() < 1e-3, "{error}°");
    }
}
