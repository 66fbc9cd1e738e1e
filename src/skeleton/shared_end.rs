//! End sites that are one writer's constant. A skeleton solved from markers may close
//! every leaf with the same offset (a BVH `OFFSET 0 -5 0` on the head, both wrists
//! and both toes) whatever way the leaf's bone goes: the hands' ends then hang at
//! right angles off arms held out, and the leaves' channels hold 0 in every frame. No
//! figure's head, hands and feet point one way, so such an end tells no bone's
//! direction: `rest::skeleton_tip` reads it as none, and the leaf keeps its rest turn
//! against its parent. Where the figure stands is left to them (`floor_ends`): below
//! a marker at the toes, such an end is nearer the ground than the toe joint.
//!
//! A writer may also close both sides' leaves of one pair with one offset across the
//! body (both feet `OFFSET -1 0 0`, toward the right): left and right are mirror
//! images, so one offset on both sides points one of them the wrong way, and
//! neither tells where its foot points (`unmirrored_end`). Pure: rest offsets in,
//! the shared offset or a yes/no out.

use glam::{Affine3A, Vec3};

use super::{BoneMap, Skeleton};
use crate::humanoid::HumanBone;

/// Fewest end sites sharing one offset for it to be a constant: a head and two
/// hands, or two hands and a foot, never end along one line.
const LEAST_SHARED: usize = 3;

/// Difference between two offsets, as a share of their length, under which they are
/// the same number written again (the file's digits).
const SAME_SHARE: f32 = 1e-4;

/// Distance from an end site to its mirror image across the body, as a share of its
/// length, over which one offset on both sides cannot be both sides' direction: the
/// end reaches across the body by more than a twentieth of its length.
const MIRROR_SHARE: f32 = 0.1;

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

/// Whether `joint` (mapped as `bone`) and the joint of the same bone on the other side
/// both end in an end site with one offset (model space) that is no mirror image of
/// itself across the body: that end tells neither bone's direction. The body's left
/// is the left upper leg's side of the right one's, else the left upper arm's;
/// `world` is the rest pose's world transform of each joint.
#[must_use]
pub(crate) fn unmirrored_end(
    skeleton: &Skeleton,
    map: &BoneMap,
    world: &[Affine3A],
    bone: HumanBone,
    joint: usize,
) -> bool {
    let mirror = bone.mirrored();
    let Some(other) = map.joint(mirror).filter(|_| mirror != bone) else {
        return false;
    };
    let end = |j: usize| {
        skeleton.joints()[j]
            .end
            .map(|e| world[j].transform_vector3(e))
    };
    let (Some(here), Some(there)) = (end(joint), end(other)) else {
        return false;
    };
    let place = |b: HumanBone| map.joint(b).map(|j| Vec3::from(world[j].translation));
    let across = |l: HumanBone, r: HumanBone| Some(place(l)? - place(r)?);
    let left = [
        across(HumanBone::LeftUpperLeg, HumanBone::RightUpperLeg),
        across(HumanBone::LeftUpperArm, HumanBone::RightUpperArm),
    ]
    .into_iter()
    .flatten()
    .find_map(|v| v.try_normalize());
    let Some(left) = left else {
        return false;
    };
    let length = here.length();
    // The mirror image of `here` lies `2 · |here · left|` from it.
    length > 0.0
        && here.distance(there) <= SAME_SHARE * length
        && 2.0 * here.dot(left).abs() > MIRROR_SHARE * length
}
