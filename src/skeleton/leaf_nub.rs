//! Leaf nubs written in another axis convention than their rig's bones.
//!
//! Blender's FBX import ends every leaf bone with an `_end` joint as long as the bone
//! before it, along the leaf's local +Y (Blender's bone axis). On a rig whose bones
//! run along another local axis (Unreal's mannequin: along X) that nub points at right
//! angles to the finger, the head or the toe, and tells nothing of where the bone
//! points. `rest::skeleton_tip` reads such a nub as no direction. Pure: rest offsets
//! in, a yes or no out.

use glam::Vec3;

use super::Skeleton;

/// Share of an offset's length along one local axis for it to lie along that axis
/// (cos 8°): a writer's own axis convention, not a measured direction.
const ALONG_AXIS: f32 = 0.99;

/// Relative difference of lengths under which a nub copies the bone before it.
const SAME_LENGTH: f32 = 0.01;

/// The local axis (0 x, 1 y, 2 z) `offset` lies along, if any.
fn axis_of(offset: Vec3) -> Option<usize> {
    let length = offset.length();
    if length <= f32::EPSILON {
        return None;
    }
    let a = offset.abs() / length;
    (0..3).find(|&k| a[k] >= ALONG_AXIS)
}

/// Whether `child`, a leaf under `joint`, is a leaf nub in another axis convention:
/// its rest offset lies along one local axis, as long as `joint`'s own offset from
/// its parent, which lies along another local axis.
#[must_use]
pub(crate) fn is_leaf_nub_off_axis(skeleton: &Skeleton, joint: usize, child: usize) -> bool {
    if skeleton.children(child).next().is_some() || skeleton.parent(joint).is_none() {
        return false;
    }
    let joints = skeleton.joints();
    let own = joints[joint].rest.translation;
    let nub = joints[child].rest.translation;
    let same_length = (nub.length() - own.length()).abs() <= SAME_LENGTH * own.length();
    match (axis_of(own), axis_of(nub)) {
        (Some(a), Some(b)) => same_length && a != b,
        _ => false,
    }
}
