//! End sites that are one writer's constant. A skeleton solved from markers may close
//! every leaf with the same offset (a BVH `OFFSET 0 -5 0` on the head, both wrists
//! and both toes) whatever way the leaf's bone goes: the hands' ends then hang at
//! right angles off arms held out, and the leaves' channels hold 0 in every frame. No
//! figure's head, hands and feet point one way, so such an end tells no bone's
//! direction: `rest::skeleton_tip` reads it as none, and the leaf keeps its rest turn
//! against its parent. Where the figure stands is left to them (`floor_ends`): below
//! a marker at the toes, such an end is nearer the ground than the toe joint. Pure:
//! rest offsets in, the shared offset out.

use glam::{Affine3A, Vec3};

use super::Skeleton;

/// Fewest end sites sharing one offset for it to be a constant: a head and two
/// hands, or two hands and a foot, never end along one line.
const LEAST_SHARED: usize = 3;

/// Difference between two offsets, as a share of their length, under which they are
/// the same number written again (the file's digits).
const SAME_SHARE: f32 = 1e-4;

/// The offset (model space, from each joint) every end site of `skeleton` carries,
/// when it has `LEAST_SHARED` or more and they all carry one that is not zero;
/// `world` is the rest pose's world transform of each joint.
#[must_use]
pub(crate) fn shared_end(skeleton: &Skeleton, world: &[Affine3A]) -> Option<Vec3> {
    let mut ends = skeleton
        .joints()
        .iter()
        .zip(world)
        .filter_map(|(joint, w)| joint.end.map(|e| w.transform_vector3(e)));
    let first = ends.next()?;
    let length = first.length();
    let count = 1 + ends.clone().count();
    let shared = length > 0.0
        && count >= LEAST_SHARED
        && ends.all(|e| e.distance(first) <= SAME_SHARE * length);
    shared.then_some(first)
}
