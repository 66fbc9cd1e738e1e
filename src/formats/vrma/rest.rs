//! The T-pose written as a `.vrma`'s node hierarchy: a model-space position for
//! every humanoid bone, from the recorded rig when it is known, else from standard
//! human proportions scaled to the rig's hips height.

use glam::Vec3;

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B};
use crate::retarget::MappedSkeleton;

/// Hips height of the standard proportions below, metres.
const STANDARD_HIPS_HEIGHT: f32 = 0.95;

/// Offset of each bone from its spec parent in the standard T-pose (left side;
/// the right side mirrors X), metres.
fn standard_offset(bone: HumanBone) -> Vec3 {
    let right = bone.side() == crate::humanoid::Side::Right;
    let left_bone = if right { bone.mirrored() } else { bone };
    let left = match left_bone {
        B::Hips => Vec3::new(0.0, STANDARD_HIPS_HEIGHT, 0.0),
        B::Spine => Vec3::new(0.0, 0.10, 0.0),
        B::Chest | B::UpperChest => Vec3::new(0.0, 0.12, 0.0),
        B::Neck => Vec3::new(0.0, 0.14, 0.0),
        B::Head => Vec3::new(0.0, 0.10, 0.0),
        B::Jaw => Vec3::new(0.0, -0.02, 0.05),
        B::LeftEye => Vec3::new(0.03, 0.06, 0.08),
        B::LeftUpperLeg => Vec3::new(0.09, -0.06, 0.0),
        B::LeftLowerLeg => Vec3::new(0.0, -0.42, 0.0),
        B::LeftFoot => Vec3::new(0.0, -0.40, 0.0),
        B::LeftToes => Vec3::new(0.0, -0.06, 0.12),
        B::LeftShoulder => Vec3::new(0.02, 0.10, 0.0),
        B::LeftUpperArm => Vec3::new(0.12, 0.0, 0.0),
        B::LeftLowerArm => Vec3::new(0.28, 0.0, 0.0),
        B::LeftHand => Vec3::new(0.25, 0.0, 0.0),
        B::LeftThumbMetacarpal => Vec3::new(0.02, -0.01, 0.02),
        B::LeftThumbProximal => Vec3::new(0.03, 0.0, 0.03),
        B::LeftThumbDistal => Vec3::new(0.025, 0.0, 0.025),
        B::LeftIndexProximal => Vec3::new(0.08, 0.0, 0.025),
        B::LeftMiddleProximal => Vec3::new(0.085, 0.0, 0.005),
        B::LeftRingProximal => Vec3::new(0.08, 0.0, -0.015),
        B::LeftLittleProximal => Vec3::new(0.07, 0.0, -0.035),
        B::LeftIndexIntermediate | B::LeftMiddleIntermediate | B::LeftRingIntermediate => {
            Vec3::new(0.04, 0.0, 0.0)
        }
        B::LeftLittleIntermediate => Vec3::new(0.03, 0.0, 0.0),
        _ => Vec3::new(0.025, 0.0, 0.0), // distal phalanges
    };
    if right {
        Vec3::new(-left.x, left.y, left.z)
    } else {
        left
    }
}

/// Model-space T-pose position of every humanoid bone, metres.
#[derive(Debug, Clone, PartialEq)]
pub struct VrmaRest {
    positions: [Vec3; BONE_COUNT],
    /// The bones the model has, bit `HumanBone::index()` per bone; the others'
    /// positions are standard proportions filled in.
    own: u64,
    /// Where the eyes look from, relative to the head, when the rig says so.
    pub look_at_offset: Option<Vec3>,
}

impl VrmaRest {
    /// Standard human proportions with the hips `hips_height` metres up.
    #[must_use]
    pub fn standard(hips_height: f32) -> Self {
        Self {
            own: u64::MAX >> (64 - BONE_COUNT),
            ..Self::fill(&[None; BONE_COUNT], hips_height / STANDARD_HIPS_HEIGHT)
        }
    }

    /// The T-pose of a mapped rig (facing-corrected), standard proportions scaled to
    /// its hips height for the bones it does not have.
    #[must_use]
    pub fn from_mapped(m: &MappedSkeleton) -> Self {
        let world = m.correction.t_pose_world(&m.skeleton);
        // Stand the rig on the floor: mocap skeletons often rest with the hips at
        // the origin, but a `.vrma`'s rest hips height is how far they are above
        // the feet.
        let hips = m.map.joint(B::Hips).map_or(0.0, |j| world[j].translation.y);
        let lift = Vec3::new(0.0, m.rest_hips_height() - hips, 0.0);
        let mut known = [None; BONE_COUNT];
        for (bone, joint) in m.map.pairs() {
            known[bone.index()] = Some(Vec3::from(world[joint].translation) + lift);
        }
        let eyes = match (
            known[B::LeftEye.index()],
            known[B::RightEye.index()],
            known[B::Head.index()],
        ) {
            (Some(l), Some(r), Some(head)) => Some((l + r) * 0.5 - head),
            _ => None,
        };
        Self::from_positions(&known, eyes)
    }

    /// Known model-space positions (a file's bone nodes), standard proportions scaled
    /// to the hips height for the rest.
    #[must_use]
    pub fn from_positions(
        known: &[Option<Vec3>; BONE_COUNT],
        look_at_offset: Option<Vec3>,
    ) -> Self {
        let hips_y = known[B::Hips.index()].map_or(STANDARD_HIPS_HEIGHT, |p| p.y);
        let scale = if hips_y > 0.05 {
            hips_y / STANDARD_HIPS_HEIGHT
        } else {
            1.0
        };
        Self {
            look_at_offset,
            ..Self::fill(known, scale)
        }
    }

    /// Standard proportions at `scale` for every bone `known` leaves out, which
    /// the rest then does not count as the model's own (but for `standard`,
    /// where every bone is the standard model's own).
    fn fill(known: &[Option<Vec3>; BONE_COUNT], scale: f32) -> Self {
        let mut positions = [Vec3::ZERO; BONE_COUNT];
        let mut own = 0;
        for bone in ALL {
            positions[bone.index()] = match known[bone.index()] {
                Some(p) => {
                    own |= 1 << bone.index();
                    p
                }
                None => {
                    let parent = bone.parent().map_or(Vec3::ZERO, |p| positions[p.index()]);
                    parent + standard_offset(bone) * scale
                }
            };
        }
        Self {
            positions,
            own,
            look_at_offset: None,
        }
    }

    /// Whether the model has `bone` (not filled in from standard proportions).
    #[must_use]
    pub fn has(&self, bone: HumanBone) -> bool {
        self.own & (1 << bone.index()) != 0
    }

    /// The same T-pose scaled about the floor's origin so that the hips stand
    /// `hips_height` metres up: the rest of a take whose performer has that hips
    /// height. Unchanged when `hips_height` is not a positive number or the hips
    /// stand on the floor.
    #[must_use]
    pub fn scaled_to_hips_height(&self, hips_height: f32) -> Self {
        let current = self.position(B::Hips).y;
        if !(hips_height.is_finite() && hips_height > 0.0 && current > 0.0) {
            return self.clone();
        }
        let scale = hips_height / current;
        Self {
            positions: self.positions.map(|p| p * scale),
            own: self.own,
            look_at_offset: self.look_at_offset.map(|o| o * scale),
        }
    }

    /// The T-pose position of `bone`, model space.
    #[must_use]
    pub fn position(&self, bone: HumanBone) -> Vec3 {
        self.positions[bone.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_scaled_to_a_hips_height_keeps_its_proportions() {
        let rest = VrmaRest::standard(0.94);
        let scaled = rest.scaled_to_hips_height(0.9305);
        assert!((scaled.position(B::Hips).y - 0.9305).abs() < 1e-6);
        let ratio = 0.9305 / rest.position(B::Hips).y;
        for bone in ALL {
            let want = rest.position(bone) * ratio;
            assert!(scaled.position(bone).distance(want) < 1e-6, "{bone}");
        }
        // A height that is no height leaves the rest as it was.
        for bad in [0.0, -1.0, f32::NAN] {
            assert_eq!(rest.scaled_to_hips_height(bad), rest);
        }
    }

    #[test]
    fn standard_rest_is_a_t_pose_facing_plus_z() {
        let rest = VrmaRest::standard(0.95);
        let l = rest.position(B::LeftHand) - rest.position(B::LeftLowerArm);
        let r = rest.position(B::RightHand) - rest.position(B::RightLowerArm);
        assert!(l.normalize().abs_diff_eq(Vec3::X, 1e-6));
        assert!(r.normalize().abs_diff_eq(Vec3::NEG_X, 1e-6));
        assert!(rest.position(B::LeftToes).z > rest.position(B::LeftFoot).z);
        let scaled = VrmaRest::standard(1.9);
        assert!((scaled.position(B::Head).y - 2.0 * rest.position(B::Head).y).abs() < 1e-5);
    }
}
