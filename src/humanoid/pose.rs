//! `HumanoidPose`: the one pose representation between decoding and encoding.
//!
//! Rotations are *normalized local rotations*: relative to the VRM T-pose, in a frame
//! where every bone's rest rotation is the identity and the axes are the model's
//! (glTF: right-handed, +Y up, facing +Z). The hips position is in metres in model
//! space; `rest_hips_height` is the source's hips height in its T-pose, so a target
//! with other proportions can scale the translation. Fixed-size, `Copy`, no heap.

use glam::{Quat, Vec3};

use super::bone::{BONE_COUNT, HumanBone};
use super::expression::Expressions;

/// Where the eyes look, relative to the head's forward (+Z), as VRM 1.0 defines it:
/// Euler angles of a right-handed system, the gaze rotation being `Ry(yaw)·Rx(pitch)`
/// (the `.vrma` lookAt node's rotation read as extrinsic ZXY).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LookAt {
    /// Radians about +Y; positive turns the gaze toward the character's left (+X).
    pub yaw: f32,
    /// Radians about +X; positive turns the gaze down.
    pub pitch: f32,
}

impl LookAt {
    /// The gaze as a rotation of the +Z forward: `Ry(yaw)·Rx(pitch)`.
    #[must_use]
    pub fn to_rotation(self) -> Quat {
        Quat::from_rotation_y(self.yaw) * Quat::from_rotation_x(self.pitch)
    }

    /// Yaw and pitch of a gaze rotation (its roll about the gaze, if any, is dropped,
    /// as extrinsic ZXY Euler angles drop Z).
    #[must_use]
    pub fn from_rotation(rotation: Quat) -> Self {
        let (yaw, pitch, _roll) = rotation.to_euler(glam::EulerRot::YXZ);
        Self { yaw, pitch }
    }
}

/// One frame of a humanoid in normalized space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HumanoidPose {
    rotations: [Quat; BONE_COUNT],
    present: u64,
    /// Hips position in model space, metres.
    pub hips_position: Vec3,
    /// The source's hips height in its T-pose, metres (> 0).
    pub rest_hips_height: f32,
    /// Expression weights.
    pub expressions: Expressions,
    /// Eye gaze, when the source sends one.
    pub look_at: Option<LookAt>,
}

impl Default for HumanoidPose {
    fn default() -> Self {
        Self {
            rotations: [Quat::IDENTITY; BONE_COUNT],
            present: 0,
            hips_position: Vec3::ZERO,
            rest_hips_height: 1.0,
            expressions: Expressions::default(),
            look_at: None,
        }
    }
}

impl HumanoidPose {
    /// Sets a bone's normalized local rotation and marks it present.
    pub fn set_rotation(&mut self, bone: HumanBone, rotation: Quat) {
        debug_assert!(rotation.is_finite(), "{bone}: {rotation}");
        self.rotations[bone.index()] = rotation;
        self.present |= 1 << bone.index();
    }

    /// A bone's normalized local rotation, if present.
    #[must_use]
    pub fn rotation(&self, bone: HumanBone) -> Option<Quat> {
        self.has(bone).then(|| self.rotations[bone.index()])
    }

    /// A bone's normalized local rotation, the identity (T-pose) when absent.
    #[must_use]
    pub fn rotation_or_identity(&self, bone: HumanBone) -> Quat {
        if self.has(bone) {
            self.rotations[bone.index()]
        } else {
            Quat::IDENTITY
        }
    }

    /// Whether the pose carries a rotation for `bone`.
    #[must_use]
    pub fn has(&self, bone: HumanBone) -> bool {
        self.present & (1 << bone.index()) != 0
    }

    /// Removes a bone (it then follows its parent, as in the T-pose).
    pub fn clear(&mut self, bone: HumanBone) {
        self.present &= !(1 << bone.index());
        self.rotations[bone.index()] = Quat::IDENTITY;
    }

    /// The presence mask, bit `HumanBone::index()` per bone.
    #[must_use]
    pub fn present_mask(&self) -> u64 {
        self.present
    }

    /// The present bones, parents first.
    pub fn bones(&self) -> impl Iterator<Item = (HumanBone, Quat)> + '_ {
        super::bone::ALL
            .into_iter()
            .filter(|b| self.has(*b))
            .map(|b| (b, self.rotations[b.index()]))
    }

    /// Model-space rotation of every bone relative to its T-pose ("normalized world"):
    /// the product of normalized locals from the hips down, absent bones contributing
    /// the identity.
    #[must_use]
    pub fn model_rotations(&self) -> [Quat; BONE_COUNT] {
        let mut model = [Quat::IDENTITY; BONE_COUNT];
        for bone in super::bone::ALL {
            let parent = bone.parent().map_or(Quat::IDENTITY, |p| model[p.index()]);
            model[bone.index()] = parent * self.rotation_or_identity(bone);
        }
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_bones_follow_their_parent() {
        let mut pose = HumanoidPose::default();
        let bend = Quat::from_rotation_z(0.5);
        pose.set_rotation(HumanBone::Spine, bend);
        pose.set_rotation(HumanBone::UpperChest, bend);
        let model = pose.model_rotations();
        assert!(model[HumanBone::Chest.index()].abs_diff_eq(bend, 1e-6));
        assert!(model[HumanBone::Head.index()].abs_diff_eq(bend * bend, 1e-6));
        assert_eq!(pose.rotation(HumanBone::Chest), None);
        assert_eq!(pose.bones().count(), 2);
    }

    #[test]
    fn look_at_round_trips_through_a_rotation() {
        let look = LookAt {
            yaw: 0.4,
            pitch: -0.2,
        };
        let back = LookAt::from_rotation(look.to_rotation());
        assert!((back.yaw - 0.4).abs() < 1e-6 && (back.pitch + 0.2).abs() < 1e-6);
        // Positive pitch looks down: the forward +Z turns toward -Y.
        let down = LookAt {
            yaw: 0.0,
            pitch: 0.3,
        }
        .to_rotation()
            * Vec3::Z;
        assert!(down.y < 0.0);
    }

    #[test]
    fn clear_removes_a_bone() {
        let mut pose = HumanoidPose::default();
        pose.set_rotation(HumanBone::Hips, Quat::from_rotation_y(1.0));
        pose.clear(HumanBone::Hips);
        assert!(!pose.has(HumanBone::Hips));
        assert_eq!(pose.present_mask(), 0);
    }
}
