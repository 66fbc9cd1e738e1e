//! Leaf nubs written in another axis convention than their rig's bones.
//!
//! Blender's FBX import ends every leaf bone with an `_end` joint as long as the bone
//! before it, along the leaf's local +Y (Blender's bone axis). On a rig whose bones
//! run along another local axis (Unreal's mannequin: along X) that nub points off to
//! the side of the finger, the head or the toe, and tells nothing of where the bone
//! points. `rest::skeleton_tip` reads such a nub as no direction.
//!
//! The nub is told by where it lies in model space, never by the joints' local
//! frames: a writer may give every joint any local axes, and the same rig written
//! with other frames reads the same. Pure: rest positions in, a yes or no out.

use glam::{Affine3A, Vec3};

use super::Skeleton;

/// Relative difference of lengths under which a nub copies the bone before it.
const SAME_LENGTH: f32 = 0.01;

/// Cosine of the least angle (45°) between a nub and the bone into its joint for the
/// nub to lie off that bone: a bone's end carries on about along the bone before it
/// (a resting fingertip, the toes, the head bend far less), where a copy of that
/// bone along another axis lies across it (the mannequin's fingertips 75°-105° off)
/// or back along it.
const OFF_THE_BONE: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Whether `child`, a leaf under `joint`, is a leaf nub in another axis convention:
/// in model space (`world`, the rest worlds), as long as the bone into `joint` (from
/// its parent) and lying off that bone (`OFF_THE_BONE`).
#[must_use]
pub(crate) fn is_leaf_nub_off_the_bone(
    skeleton: &Skeleton,
    world: &[Affine3A],
    joint: usize,
    child: usize,
) -> bool {
    if skeleton.children(child).next().is_some() {
        return false;
    }
    let Some(parent) = skeleton.parent(joint) else {
        return false;
    };
    let at = Vec3::from(world[joint].translation);
    let own = at - Vec3::from(world[parent].translation);
    let nub = Vec3::from(world[child].translation) - at;
    let (own_length, nub_length) = (own.length(), nub.length());
    if own_length <= f32::EPSILON || nub_length <= f32::EPSILON {
        return false;
    }
    let same_length = (nub_length - own_length).abs() <= SAME_LENGTH * own_length;
    same_length && own.dot(nub) < OFF_THE_BONE * own_length * nub_length
}
