//! Skinning the mannequin: each piece of surface is bound to its bone, and near a
//! joint its vertices share their weight with the bone across that joint, so that
//! a bent elbow or knee stays closed. Weights are multiples of 1/64, so the four of
//! a vertex sum to exactly 1 in floats.
//!
//! The skin's joints are the 55 humanoid bones in `HumanBone` order, so a bone's
//! joint index is its `index()`.

use glam::Vec3;

use crate::humanoid::HumanBone;

use super::shape::Surface;

/// The step weights are rounded to.
const WEIGHT_STEP: f32 = 1.0 / 64.0;

/// Which bones move a piece's vertices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// The bone the piece belongs to.
    pub bone: HumanBone,
    /// The bone across the joint at the piece's start, sharing the weight there.
    pub start: Option<HumanBone>,
    /// The bone across the joint at the piece's end.
    pub end: Option<HumanBone>,
}

impl Binding {
    /// Every vertex on `bone` alone.
    #[must_use]
    pub fn rigid(bone: HumanBone) -> Self {
        Self {
            bone,
            start: None,
            end: None,
        }
    }

    /// On `bone`, blended with `start` and `end` near the joints.
    #[must_use]
    pub fn blended(bone: HumanBone, start: HumanBone, end: Option<HumanBone>) -> Self {
        Self {
            bone,
            start: Some(start),
            end,
        }
    }

    /// The joints and weights of a vertex `axial` metres along a piece of `length`
    /// metres with the end radii `radii`: half the weight at a joint goes across
    /// it, easing to none one radius (at most half the piece) in.
    #[must_use]
    pub fn influence(&self, axial: f32, length: f32, radii: (f32, f32)) -> ([u8; 4], [f32; 4]) {
        let share = |distance: f32, radius: f32| {
            let reach = radius.min(0.5 * length);
            let x = (1.0 - distance / reach).clamp(0.0, 1.0);
            let eased = x * x * (3.0 - 2.0 * x);
            (0.5 * eased / WEIGHT_STEP).round() * WEIGHT_STEP
        };
        let mut joints = [self.bone.index() as u8, 0, 0, 0];
        let mut weights = [1.0, 0.0, 0.0, 0.0];
        let mut slot = 1;
        let across = [
            (self.start, share(axial, radii.0)),
            (self.end, share(length - axial, radii.1)),
        ];
        for (bone, weight) in across {
            if let Some(bone) = bone.filter(|_| weight > 0.0) {
                joints[slot] = bone.index() as u8;
                weights[slot] = weight;
                weights[0] -= weight;
                slot += 1;
            }
        }
        (joints, weights)
    }
}

/// A skinned triangle list: what one glTF primitive holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkinnedMesh {
    /// Model space, metres (the bind pose is the T-pose).
    pub positions: Vec<Vec3>,
    /// Unit length.
    pub normals: Vec<Vec3>,
    /// Skin joint indices (bone indices), four per vertex.
    pub joints: Vec<[u8; 4]>,
    /// Weights of `joints`, summing to 1.
    pub weights: Vec<[f32; 4]>,
    /// Three per triangle.
    pub indices: Vec<u16>,
}

impl SkinnedMesh {
    /// Appends `surface`, its vertices weighted by `binding`.
    ///
    /// # Panics
    /// When the mesh would pass 65 536 vertices (the mannequin has a few thousand).
    pub fn add(&mut self, surface: &Surface, binding: Binding) {
        let first = self.positions.len();
        assert!(first + surface.positions.len() <= usize::from(u16::MAX) + 1);
        self.positions.extend_from_slice(&surface.positions);
        self.normals.extend_from_slice(&surface.normals);
        for &axial in &surface.axial {
            let (joints, weights) = binding.influence(axial, surface.length, surface.end_radii);
            self.joints.push(joints);
            self.weights.push(weights);
        }
        self.indices.extend(
            surface
                .triangles
                .iter()
                .flatten()
                .map(|&i| (first + i as usize) as u16),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone as B;

    #[test]
    fn weights_sum_to_one_and_share_half_at_a_joint() {
        let binding = Binding::blended(B::LeftLowerArm, B::LeftUpperArm, Some(B::LeftHand));
        let (length, radii) = (0.25, (0.04, 0.03));
        for i in -50..=310 {
            let axial = i as f32 * 0.001;
            let (joints, weights) = binding.influence(axial, length, radii);
            assert_eq!(weights.iter().sum::<f32>(), 1.0, "at {axial}");
            assert_eq!(joints[0], B::LeftLowerArm.index() as u8);
            assert!(weights.iter().all(|w| *w >= 0.0));
        }
        // At the elbow and beyond it: half each.
        let (joints, weights) = binding.influence(-0.01, length, radii);
        assert_eq!(joints[..2], [B::LeftLowerArm as u8, B::LeftUpperArm as u8]);
        assert_eq!(weights, [0.5, 0.5, 0.0, 0.0]);
        // Mid-bone: the bone alone.
        assert_eq!(
            binding.influence(0.12, length, radii).1,
            [1.0, 0.0, 0.0, 0.0]
        );
        // Near the wrist: shared with the hand.
        let (joints, weights) = binding.influence(0.245, length, radii);
        assert_eq!(joints[1], B::LeftHand as u8);
        assert!(weights[1] > 0.3 && weights[1] <= 0.5);
    }

    #[test]
    fn a_rigid_piece_is_on_its_bone_alone() {
        let (joints, weights) = Binding::rigid(B::Head).influence(0.0, 0.0, (0.1, 0.1));
        assert_eq!(
            (joints, weights),
            ([B::Head as u8, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])
        );
    }
}
