//! Retargeting: source skeleton -> normalized `HumanoidPose` -> target skeleton.
//!
//! With `W(j)` the model-space rotation of joint `j` in the T-pose (after the rest
//! correction and the facing turn), the normalized rotation of humanoid bone `b`
//! whose nearest mapped humanoid parent is `p` is
//!
//! ```text
//! N(b) = W(p) · L(c1) · … · L(ck) · L(b) · W(b)⁻¹
//! ```
//!
//! where `c1 … ck` are the non-humanoid joints between `p` and `b` (none in most rigs,
//! so `N = W(p) · L · W(b)⁻¹`, the `.vrma`/UniVRM formula); for the hips, `W(p)` is
//! the facing turn and the chain runs from the root. Going the other way, a target
//! joint `t` driving bone `b`, whose parent *joint* has T-pose rotation `W(par)` and
//! whose nearest mapped humanoid ancestor is `q`, gets
//!
//! ```text
//! L(t) = W(par)⁻¹ · N(q→b) · W(t),    N(q→b) = product of N over the humanoid bones
//!                                     below q down to b (absent bones: identity)
//! ```
//!
//! with the target's non-humanoid joints left at rest. `q` is found from the joint:
//! the bone driving its nearest mapped ancestor joint. When that bone `a` is not a
//! humanoid ancestor of `b` (a declared map hanging the legs below the spine's joint,
//! as a VRM whose `hips` is a node at the floor), `q` is where the two branches meet
//! and `a`'s branch, which the joint's parent carries, is undone:
//! `L(t) = W(par)⁻¹ · N(q→a)⁻¹ · N(q→b) · W(t)`.
//!
//! A bone hanging outside the hips' subtree (a foot IK moves, hung from the root, or
//! an upper leg beside the hips: `BoneMap::detached_bones`) is driven from the bone
//! it belongs to. As a source, its rotation is taken relative to its humanoid
//! parent's joint: the chains run from where the two branches meet, the parent's
//! inverted, `N = W(p) · L(p-chain…)⁻¹ · L(chain…) · W(b)⁻¹`. As a target, `q` is the
//! nearest mapped ancestor whose joint is one of the bone's (none: the chain starts
//! at the hips), and `TargetRig::place_held_bones` puts the joint where the rest has
//! it in its anchor's frame (a foot at the lower leg's end, an upper leg at the hips).
//!
//! A limb bone (upper or lower arm or leg) points where its joint's rotation points
//! the segment to the next limb bone's joint as it rests, which is where the
//! source's segment points only while that segment keeps its rest direction in the
//! bone's joint frame. It does not when the segment runs through joints of its own
//! (MakeHuman's `upperarm02`, a helper between knee and ankle) that bend it, not
//! only turn about it (a twist), or when a clip moves the next joint off its rest
//! place (a translation channel on the hand that stretches the forearm and turns
//! it). Then the bone is swung onto the source's segment, and the next bone takes
//! the swing back so that it keeps its own rotation: with `A` the swing in the
//! bone's joint frame from the segment's T-pose direction to the frame's,
//! `G = W(b) · A · W(b)⁻¹`, `N(b) ← N(b) · G` and `N(next) ← G⁻¹ · N(next)`.
//!
//! Everything that does not
//! change per frame (`W(p)`, `W(b)⁻¹`, the joint chains) is precomputed when a
//! `SourceRig` or `TargetRig` is built; `ToNormalized` and `FromNormalized` are the
//! per-frame jobs: a few quaternion products per bone, no allocation.
//!
//! Hips translation: the source's hips position in the facing-corrected model space;
//! the target places its hips at that position scaled by the ratio of T-pose hips
//! heights.

pub mod check;

use glam::{Affine3A, Quat, Vec3};

use crate::humanoid::{HumanBone, HumanoidPose};
use crate::skeleton::rest::shortest_arc;
use crate::skeleton::{BoneMap, MapError, NamedBoneMap, RestCorrection, Skeleton, TPoseSource};

/// A skeleton with its resolved bone map and rest correction. Built once.
#[derive(Debug, Clone)]
pub struct MappedSkeleton {
    pub skeleton: Skeleton,
    pub map: BoneMap,
    pub correction: RestCorrection,
}

impl MappedSkeleton {
    /// Resolves `named` against `skeleton` and computes the rest correction.
    pub fn new(skeleton: Skeleton, named: &NamedBoneMap) -> Result<Self, MapError> {
        let map = BoneMap::resolve(named, &skeleton)?;
        let correction = RestCorrection::compute(&skeleton, &map);
        Ok(Self {
            skeleton,
            map,
            correction,
        })
    }

    /// Hips height in the T-pose above the rig's floor (`rest_floor`), metres.
    #[must_use]
    pub fn rest_hips_height(&self) -> f32 {
        let (hips, floor, _) = self.rest_hips_and_floor();
        hips - floor
    }

    /// Why poses cannot be scaled onto this rig, if they cannot: its hips rest at
    /// its floor or less than `LOWEST_HIPS` of the way up from it to the head joint.
    /// A hips translation is scaled by the hips height, so such a rig takes every
    /// walk as one in place at the floor. A map that puts `hips` where no pelvis is
    /// (a VRM whose map names its root node on the ground) does this.
    #[must_use]
    pub fn hips_at_the_floor(&self) -> Option<String> {
        let (hips, floor, _) = self.rest_hips_and_floor();
        let head = self.map.joint(HumanBone::Head)?;
        let head = self.correction.t_pose_world(&self.skeleton)[head]
            .translation
            .y
            - floor;
        let height = hips - floor;
        (height.is_finite() && head > 0.0 && height < LOWEST_HIPS * head).then(|| {
            format!(
                "the hips (joint `{}`) rest {height:.3} m above the floor, with the head \
                 {head:.3} m up: no pelvis sits that low, so the map's `hips` is no pelvis, \
                 and poses cannot be scaled onto it",
                self.map
                    .joint(HumanBone::Hips)
                    .map_or("?", |j| self.skeleton.joints()[j].name.as_str())
            )
        })
    }

    /// What the hips height is measured from. A VRM model (its rest declared the
    /// T-pose) stands on its origin, y = 0, as VRM players scale hips motion by the
    /// hips' height above it; a joint below the origin lowers the floor to it. Other
    /// rigs stand on their body's lowest point (joint or bone end, `Skeleton::floor_ends`;
    /// the body as `rest_hips_and_floor` reads it), not the origin, because mocap
    /// skeletons often rest with the hips at the origin.
    #[must_use]
    pub fn rest_floor(&self) -> Floor {
        self.rest_hips_and_floor().2
    }

    /// The hips' height and the floor's in the T-pose, model space, and the floor's kind.
    /// The floor is read from the body: the mapped joints, the joints below them and
    /// those above them. A branch that holds no mapped joint (IK controls or a
    /// root-motion helper beside the hips, a prop, a second armature) is no point the
    /// figure stands on: a game rig that skins its foot-roll controls ends them under
    /// the soles. Nor is a drawn tail (`Skeleton::floor_points`), an importer's `_end`
    /// joint that may hang a toe's length under the sole, nor what hangs from the
    /// spine outside the legs (`floor_joints`).
    fn rest_hips_and_floor(&self) -> (f32, f32, Floor) {
        let world = self.correction.t_pose_world(&self.skeleton);
        let hips = self.map.joint(HumanBone::Hips).unwrap_or_default();
        let body = self.floor_joints();
        let lowest = self
            .skeleton
            .floor_points()
            .into_iter()
            .zip(&world)
            .zip(body)
            .filter(|&(_, on_body)| on_body)
            .flat_map(|((points, w), _)| points.at(w).map(|p| p.y))
            .fold(f32::INFINITY, f32::min);
        let (floor, kind) = match self.map.t_pose() {
            TPoseSource::Declared { .. } if lowest >= -BELOW_ORIGIN_M => (0.0, Floor::Origin),
            _ => (lowest, Floor::LowestPoint),
        };
        (world[hips].translation.y, floor, kind)
    }

    /// For each joint, whether the figure may stand on it (`rest_hips_and_floor`): a
    /// joint of the body (`body_joints`) that is in a leg (a mapped leg bone's joint
    /// or below one) or does not hang from the spine's joint. The chest, the arms, the
    /// head and whatever they carry are held up by the spine: an accessory joint under
    /// the head or the chest that its file places below the feet (a Blender-exported
    /// VRM's layer joints, at the armature's origin) is no floor.
    fn floor_joints(&self) -> Vec<bool> {
        let mut floor = self.body_joints();
        let Some(spine) = self.map.joint(HumanBone::Spine) else {
            return floor;
        };
        let mut leg = vec![false; self.skeleton.len()];
        for (bone, j) in self.map.pairs() {
            leg[j] |= matches!(
                bone,
                HumanBone::LeftUpperLeg
                    | HumanBone::LeftLowerLeg
                    | HumanBone::LeftFoot
                    | HumanBone::LeftToes
                    | HumanBone::RightUpperLeg
                    | HumanBone::RightLowerLeg
                    | HumanBone::RightFoot
                    | HumanBone::RightToes
            );
        }
        for (j, on_floor) in floor.iter_mut().enumerate() {
            // Up from the joint: a leg's joint first keeps it, the spine's drops it.
            let mut at = Some(j);
            while let Some(a) = at {
                if leg[a] {
                    break;
                }
                if a == spine {
                    *on_floor = false;
                    break;
                }
                at = self.skeleton.parent(a);
            }
        }
        floor
    }

    /// For each joint, whether it is part of the body: a mapped joint, below one or
    /// above one (`floor_joints`).
    fn body_joints(&self) -> Vec<bool> {
        let n = self.skeleton.len();
        let mut mapped = vec![false; n];
        for (_, j) in self.map.pairs() {
            mapped[j] = true;
        }
        let mut body = vec![false; n];
        for j in 0..n {
            // Below a mapped joint (or one itself)?
            let mut at = Some(j);
            while let Some(a) = at {
                if mapped[a] {
                    body[j] = true;
                    break;
                }
                at = self.skeleton.parent(a);
            }
            // Above one: mark its ancestors.
            if mapped[j] {
                let mut at = self.skeleton.parent(j);
                while let Some(a) = at {
                    body[a] = true;
                    at = self.skeleton.parent(a);
                }
            }
        }
        body
    }
}

/// Least share of the head joint's height above the floor the hips rest at: a
/// person's hips are about half of it, a crouching or big-headed figure's a third.
const LOWEST_HIPS: f32 = 0.1;

/// How far below a VRM model's origin a joint must reach to be its floor, metres:
/// exporters leave soles a rounding error below y = 0.
const BELOW_ORIGIN_M: f32 = 1e-3;

/// Where a rig's rest hips height is measured from (`MappedSkeleton::rest_floor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// The rig's lowest point, joint or bone end.
    LowestPoint,
    /// The model's origin, y = 0, on which a VRM model stands.
    Origin,
}

/// Why a per-frame job cannot run.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error("frame has {got} joints, the skeleton needs {needed}")]
    SourceTooShort { needed: usize, got: usize },
    #[error("output has room for {got} joints, the skeleton has {needed}")]
    OutputTooShort { needed: usize, got: usize },
    #[error("pose has a rest hips height of {0}, which is not a positive number")]
    BadHipsHeight(f32),
}

/// One mapped bone of a source: `N = pre · L(chain…) · post`.
#[derive(Debug, Clone)]
struct SourceBone {
    bone: HumanBone,
    /// `W(p)`: T-pose model rotation of the nearest mapped humanoid parent.
    pre: Quat,
    /// `W(b)⁻¹`.
    post: Quat,
    /// Range in `SourceRig::chains`: joints below `p` down to `b`, parents first
    /// (for a detached bone, below where the two branches meet).
    chain: (u16, u16),
    /// Range in `SourceRig::chains`: for a detached bone, the joints below where the
    /// branches meet down to `p`, parents first; else empty.
    back: (u16, u16),
}

/// A limb bone whose segment to the next limb bone's joint is swung onto the
/// source's segment in every frame where the joints between bend it or the next
/// joint's translation turns it (module header).
#[derive(Debug, Clone)]
struct LimbSwing {
    bone: HumanBone,
    next: HumanBone,
    /// Range in `SourceRig::chains`: the joints below `bone`'s down to `next`'s,
    /// parents first.
    chain: (u16, u16),
    /// The segment's direction in the T-pose, in `bone`'s joint frame, unit length.
    rest: Vec3,
    /// `W(b)`.
    world: Quat,
    /// With no joints between, the next joint's rest translation: a frame that
    /// holds it there (every live source) leaves the segment at rest.
    resting_next: Option<Vec3>,
}

/// Everything needed to turn a source's frames into normalized poses. Built once.
#[derive(Debug, Clone)]
pub struct SourceRig {
    bones: Vec<SourceBone>,
    swings: Vec<LimbSwing>,
    chains: Vec<u16>,
    /// Joints from the root down to the hips' parent.
    hips_ancestors: Vec<u16>,
    hips: usize,
    scales: Vec<Vec3>,
    facing: Quat,
    rest_hips_height: f32,
    joint_count: usize,
}

/// The joints strictly below `ancestor` (or from the root, when `None`) down to and
/// including `joint`, parents first.
fn chain_below(skeleton: &Skeleton, ancestor: Option<usize>, joint: usize) -> Vec<u16> {
    let mut chain = Vec::new();
    let mut j = Some(joint);
    while let Some(k) = j {
        if Some(k) == ancestor {
            break;
        }
        chain.push(k as u16);
        j = skeleton.parent(k);
    }
    chain.reverse();
    chain
}

/// The nearest joint that is `a` or an ancestor of it and also `b` or an ancestor
/// of `b`; `None` when they share no root.
fn meeting_joint(skeleton: &Skeleton, a: usize, b: usize) -> Option<usize> {
    let mut j = Some(b);
    while let Some(k) = j {
        if k == a || skeleton.is_ancestor(k, a) {
            return Some(k);
        }
        j = skeleton.parent(k);
    }
    None
}

fn rotation_of(affine: &Affine3A) -> Quat {
    affine.to_scale_rotation_translation().1.normalize()
}

/// The limb bones of `mapped` whose next limb bone's joint hangs below their own,
/// their chains (the joints between and the next joint) appended to `chains`.
/// `world`: every joint's T-pose model rotation.
fn limb_swings(mapped: &MappedSkeleton, world: &[Quat], chains: &mut Vec<u16>) -> Vec<LimbSwing> {
    let skeleton = &mapped.skeleton;
    let mut swings = Vec::new();
    for (bone, next) in check::LIMBS {
        let (Some(from), Some(to)) = (mapped.map.joint(bone), mapped.map.joint(next)) else {
            continue;
        };
        if mapped.map.parent(next) != Some(bone) || !skeleton.is_ancestor(from, to) {
            continue;
        }
        let chain = chain_below(skeleton, Some(from), to);
        let Some((_, between)) = chain.split_last() else {
            continue;
        };
        // The next joint in `bone`'s frame with the joints between at their T-pose
        // rotations: t(c1) + T(c1) · s(c1) · (t(c2) + … t(next)).
        let joints = skeleton.joints();
        let mut rest = joints[to].rest.translation;
        for &j in between.iter().rev() {
            let j = usize::from(j);
            let parent = skeleton.parent(j).map_or(Quat::IDENTITY, |p| world[p]);
            let t_pose_local = parent.conjugate() * world[j];
            rest = joints[j].rest.translation + t_pose_local * (joints[j].rest.scale * rest);
        }
        let Some(rest) = rest.try_normalize() else {
            continue;
        };
        let resting_next = between.is_empty().then_some(joints[to].rest.translation);
        let start = chains.len() as u16;
        chains.extend(chain);
        swings.push(LimbSwing {
            bone,
            next,
            chain: (start, chains.len() as u16),
            rest,
            world: world[from],
            resting_next,
        });
    }
    swings
}

impl SourceRig {
    /// Precomputes the per-bone products for `mapped`.
    #[must_use]
    pub fn new(mapped: &MappedSkeleton) -> Self {
        let skeleton = &mapped.skeleton;
        let world: Vec<Quat> = mapped
            .correction
            .t_pose_world(skeleton)
            .iter()
            .map(rotation_of)
            .collect();
        let facing = mapped.correction.facing;
        let mut bones = Vec::new();
        let mut chains = Vec::new();
        for (bone, joint) in mapped.map.pairs() {
            let parent_joint = mapped.map.parent(bone).and_then(|p| mapped.map.joint(p));
            let pre = parent_joint.map_or(facing, |p| world[p]);
            // A detached bone: both chains from where the branches meet.
            let detached = parent_joint.filter(|&p| !skeleton.is_ancestor(p, joint));
            let from = match detached {
                Some(p) => meeting_joint(skeleton, p, joint),
                None => parent_joint,
            };
            let start = chains.len() as u16;
            chains.extend(chain_below(skeleton, from, joint));
            let chain = (start, chains.len() as u16);
            if let Some(p) = detached {
                chains.extend(chain_below(skeleton, from, p));
            }
            bones.push(SourceBone {
                bone,
                pre,
                post: world[joint].conjugate(),
                chain,
                back: (chain.1, chains.len() as u16),
            });
        }
        let swings = limb_swings(mapped, &world, &mut chains);
        let hips = mapped.map.joint(HumanBone::Hips).unwrap_or_default();
        let mut hips_ancestors = chain_below(skeleton, None, hips);
        hips_ancestors.pop();
        Self {
            bones,
            swings,
            chains,
            hips_ancestors,
            hips,
            scales: skeleton.joints().iter().map(|j| j.rest.scale).collect(),
            facing,
            rest_hips_height: mapped.rest_hips_height(),
            joint_count: skeleton.len(),
        }
    }

    /// How many joints a frame must have.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
}

/// Turns one frame of a source rig's local transforms into a normalized pose.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct ToNormalized<'a> {
    /// The source, built once.
    pub source: &'a SourceRig,
    /// Input: local rotation of every source joint (joint order).
    pub local_rotations: &'a [Quat],
    /// Input: local translation of every source joint, metres (joint order).
    pub local_translations: &'a [Vec3],
    /// Output: rotation of every mapped bone, hips position and rest hips height;
    /// other bones, expressions and lookAt are untouched.
    pub pose: &'a mut HumanoidPose,
}

impl ToNormalized<'_> {
    /// Rejects frames shorter than the skeleton.
    pub fn validate(&self) -> Result<(), JobError> {
        let needed = self.source.joint_count;
        let got = self
            .local_rotations
            .len()
            .min(self.local_translations.len());
        if got < needed {
            return Err(JobError::SourceTooShort { needed, got });
        }
        Ok(())
    }

    pub fn run(mut self) -> Result<(), JobError> {
        self.validate()?;
        let src = self.source;
        for b in &src.bones {
            // N(b) = W(p) · L(back…)⁻¹ · L(chain…) · W(b)⁻¹ (`back` empty but for a
            // detached bone)
            let mut q = b.pre;
            if b.back.0 != b.back.1 {
                let mut back = Quat::IDENTITY;
                for &j in &src.chains[usize::from(b.back.0)..usize::from(b.back.1)] {
                    back *= self.local_rotations[usize::from(j)];
                }
                q *= back.conjugate();
            }
            for &j in &src.chains[usize::from(b.chain.0)..usize::from(b.chain.1)] {
                q *= self.local_rotations[usize::from(j)];
            }
            self.pose.set_rotation(b.bone, (q * b.post).normalize());
        }
        for s in &src.swings {
            self.swing(s);
        }
        // Hips position: facing · (ancestors' transforms) · hips translation.
        let mut parent = Affine3A::IDENTITY;
        for &j in &src.hips_ancestors {
            let j = usize::from(j);
            parent *= Affine3A::from_scale_rotation_translation(
                src.scales[j],
                self.local_rotations[j],
                self.local_translations[j],
            );
        }
        self.pose.hips_position =
            src.facing * parent.transform_point3(self.local_translations[src.hips]);
        self.pose.rest_hips_height = src.rest_hips_height;
        Ok(())
    }
}

impl ToNormalized<'_> {
    /// Swings limb bone `s.bone` onto the source's segment and gives the swing back
    /// to `s.next` (module header). No swing where the segment keeps its rest
    /// direction (no joints between, or joints that only twist, and the next joint
    /// at its rest place).
    fn swing(&mut self, s: &LimbSwing) {
        let chain = &self.source.chains[usize::from(s.chain.0)..usize::from(s.chain.1)];
        let Some((&to, between)) = chain.split_last() else {
            return;
        };
        // The next joint in the bone's frame: t(c1) + L(c1) · s(c1) · (t(c2) + … t(next)).
        let mut segment = self.local_translations[usize::from(to)];
        if s.resting_next == Some(segment) {
            return;
        }
        for &j in between.iter().rev() {
            let j = usize::from(j);
            segment = self.local_translations[j]
                + self.local_rotations[j] * (self.source.scales[j] * segment);
        }
        let Some(segment) = segment.try_normalize() else {
            return;
        };
        // A segment along its rest direction (joints between that only twist, the
        // next joint where it rests or moved along the segment): nothing to swing.
        if s.rest.cross(segment).length() < 1e-6 && s.rest.dot(segment) > 0.0 {
            return;
        }
        let (Some(bone), Some(next)) = (self.pose.rotation(s.bone), self.pose.rotation(s.next))
        else {
            return;
        };
        // Exact for the smallest bends too: glam's `from_rotation_arc` drops any
        // swing under about 0.04°, which would leave the segment that far off.
        let g = s.world * shortest_arc(s.rest, segment) * s.world.conjugate();
        self.pose.set_rotation(s.bone, (bone * g).normalize());
        self.pose
            .set_rotation(s.next, (g.conjugate() * next).normalize());
    }
}

/// Longest run of humanoid bones below a target bone's nearest mapped ancestor:
/// with the required bones mapped, at most chest → upperChest → leftShoulder →
/// leftUpperArm (4), and for a branch undone, spine → chest → upperChest → neck →
/// head (5).
const MAX_CHAIN: usize = 5;

/// The humanoid bones strictly below `ancestor` (from the hips when `None`) down to
/// and including `bone`, parents first, with their count (at most `MAX_CHAIN`).
fn humanoid_chain(bone: HumanBone, ancestor: Option<HumanBone>) -> ([HumanBone; MAX_CHAIN], u8) {
    let mut chain = [HumanBone::Hips; MAX_CHAIN];
    let mut len = 0;
    let mut b = Some(bone);
    while let Some(k) = b {
        // A resolved map has every required bone, so chains stay short.
        if Some(k) == ancestor || len == MAX_CHAIN {
            break;
        }
        chain[len] = k;
        len += 1;
        b = k.parent();
    }
    chain[..len].reverse();
    (chain, len as u8)
}

/// One mapped bone of a target: `L = pre · N(back…)⁻¹ · N(chain…) · post`.
#[derive(Debug, Clone)]
struct TargetBone {
    joint: u16,
    /// `W(par)⁻¹`: inverse T-pose model rotation of the joint's parent joint
    /// (for a root joint, the inverse facing turn).
    pre: Quat,
    /// `W(t)`.
    post: Quat,
    /// Humanoid bones below the nearest mapped ancestor down to this one.
    chain: [HumanBone; MAX_CHAIN],
    chain_len: u8,
    /// Humanoid bones below that ancestor down to the one driving the joint's
    /// nearest mapped ancestor joint, when that one is on another branch (a leg
    /// hung below the spine: the spine), whose turn the joint's parent carries.
    back: [HumanBone; MAX_CHAIN],
    back_len: u8,
}

/// A detached bone of a target, placed where its anchor holds it every frame.
#[derive(Debug, Clone)]
struct HeldTarget {
    joint: u16,
    /// Range in `TargetRig::paths`: the joints below the hips down to the anchor,
    /// parents first (empty when the anchor is the hips).
    path: (u16, u16),
    /// The joint's place in the anchor joint's frame.
    offset: Vec3,
    /// From the hips' parent joint's space into the joint's parent's, both at rest
    /// (neither is below a humanoid bone).
    into_parent: Affine3A,
}

/// Everything needed to pose a target skeleton from normalized poses. Built once.
#[derive(Debug, Clone)]
pub struct TargetRig {
    bones: Vec<TargetBone>,
    held: Vec<HeldTarget>,
    paths: Vec<u16>,
    rest_translations: Vec<Vec3>,
    scales: Vec<Vec3>,
    rest_locals: Vec<Quat>,
    hips: usize,
    /// From the facing-corrected model space into the hips' parent joint's space.
    hips_parent_inverse: Affine3A,
    rest_hips_height: f32,
}

impl TargetRig {
    /// Precomputes the per-bone products for `mapped`.
    #[must_use]
    pub fn new(mapped: &MappedSkeleton) -> Self {
        let skeleton = &mapped.skeleton;
        let t_world = mapped.correction.t_pose_world(skeleton);
        let world: Vec<Quat> = t_world.iter().map(rotation_of).collect();
        let facing = mapped.correction.facing;
        let mut bones = Vec::new();
        for (bone, joint) in mapped.map.pairs() {
            // The humanoid bone driving the joint's nearest mapped ancestor joint (a
            // detached bone has none: its chain starts at the hips). Most often it is
            // a humanoid ancestor of `bone`; when not (legs hung below the spine), the
            // chain runs from where the two meet and the other branch is undone.
            let driver = std::iter::successors(skeleton.parent(joint), |&j| skeleton.parent(j))
                .find_map(|j| mapped.map.bone_of(j));
            let meet = driver.map(|a| {
                std::iter::successors(Some(a), |&b| b.parent())
                    .find(|&c| std::iter::successors(Some(bone), |&b| b.parent()).any(|b| b == c))
            });
            let ancestor = meet.flatten();
            let (chain, len) = humanoid_chain(bone, ancestor);
            let (back, back_len) = match driver {
                Some(a) if Some(a) != ancestor => humanoid_chain(a, ancestor),
                _ => ([HumanBone::Hips; MAX_CHAIN], 0),
            };
            let pre = match skeleton.parent(joint) {
                Some(p) => world[p].conjugate(),
                None => facing.conjugate(),
            };
            bones.push(TargetBone {
                joint: joint as u16,
                pre,
                post: world[joint],
                chain,
                chain_len: len,
                back,
                back_len,
            });
        }
        let hips = mapped.map.joint(HumanBone::Hips).unwrap_or_default();
        let space = |joint: Option<usize>| match joint {
            Some(p) => t_world[p],
            None => Affine3A::from_quat(facing),
        };
        let hips_parent = space(skeleton.parent(hips));
        let mut paths = Vec::new();
        let held = mapped
            .correction
            .held
            .iter()
            .map(|held| {
                let (joint, anchor) = (held.detached.joint, held.detached.anchor);
                let start = paths.len() as u16;
                if anchor != hips {
                    paths.extend(chain_below(skeleton, Some(hips), anchor));
                }
                HeldTarget {
                    joint: joint as u16,
                    path: (start, paths.len() as u16),
                    offset: held.offset,
                    into_parent: space(skeleton.parent(joint)).inverse() * hips_parent,
                }
            })
            .collect();
        Self {
            bones,
            held,
            paths,
            rest_translations: skeleton.rest_translations(),
            scales: skeleton.joints().iter().map(|j| j.rest.scale).collect(),
            rest_locals: skeleton.rest_rotations(),
            hips,
            hips_parent_inverse: hips_parent.inverse(),
            rest_hips_height: mapped.rest_hips_height(),
        }
    }

    /// How many joints the output holds.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.rest_locals.len()
    }

    /// The joint index of the hips (where `hips_translation` goes).
    #[must_use]
    pub fn hips_joint(&self) -> usize {
        self.hips
    }

    /// Every joint's local translation for the local rotations and hips translation
    /// `FromNormalized` wrote: the rest's, the hips' given, and a detached bone's
    /// where its anchor holds it (see the module header). Per frame: no allocation.
    pub fn place_held_bones(
        &self,
        local_rotations: &[Quat],
        hips_translation: Vec3,
        local_translations: &mut [Vec3],
    ) -> Result<(), JobError> {
        let needed = self.rest_translations.len();
        let got = local_rotations.len().min(local_translations.len());
        if got < needed {
            return Err(JobError::OutputTooShort { needed, got });
        }
        local_translations[..needed].copy_from_slice(&self.rest_translations);
        local_translations[self.hips] = hips_translation;
        let local = |j: usize, translation: Vec3| {
            Affine3A::from_scale_rotation_translation(
                self.scales[j],
                local_rotations[j],
                translation,
            )
        };
        for held in &self.held {
            // The lower leg's transform in the hips' parent's space (the joints below
            // the hips keep their rest translations).
            let mut leg = local(self.hips, hips_translation);
            for &j in &self.paths[usize::from(held.path.0)..usize::from(held.path.1)] {
                let j = usize::from(j);
                leg *= local(j, self.rest_translations[j]);
            }
            let at = held
                .into_parent
                .transform_point3(leg.transform_point3(held.offset));
            local_translations[usize::from(held.joint)] = at;
        }
        Ok(())
    }
}

/// Poses a target skeleton from one normalized frame. A target with bones hung
/// outside its hips' subtree (`BoneMap::detached_bones`) also needs
/// `TargetRig::place_held_bones` for where those joints stand.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct FromNormalized<'a> {
    /// The target, built once.
    pub target: &'a TargetRig,
    /// Input: the normalized pose.
    pub pose: &'a HumanoidPose,
    /// Output: local rotation of every target joint; unmapped joints get their rest.
    pub local_rotations: &'a mut [Quat],
    /// Output: local translation of the target's hips joint, metres.
    pub hips_translation: &'a mut Vec3,
}

impl FromNormalized<'_> {
    /// Rejects an output shorter than the skeleton and a pose without a usable
    /// rest hips height.
    pub fn validate(&self) -> Result<(), JobError> {
        let needed = self.target.rest_locals.len();
        if self.local_rotations.len() < needed {
            return Err(JobError::OutputTooShort {
                needed,
                got: self.local_rotations.len(),
            });
        }
        let h = self.pose.rest_hips_height;
        if !(h.is_finite() && h > 0.0) {
            return Err(JobError::BadHipsHeight(h));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        let target = self.target;
        let n = target.rest_locals.len();
        self.local_rotations[..n].copy_from_slice(&target.rest_locals);
        for b in &target.bones {
            // L(t) = W(par)⁻¹ · N(q→a)⁻¹ · N(q→b) · W(t)
            let mut q = b.pre;
            if b.back_len > 0 {
                let mut back = Quat::IDENTITY;
                for &bone in &b.back[..usize::from(b.back_len)] {
                    back *= self.pose.rotation_or_identity(bone);
                }
                q *= back.conjugate();
            }
            for &bone in &b.chain[..usize::from(b.chain_len)] {
                q *= self.pose.rotation_or_identity(bone);
            }
            self.local_rotations[usize::from(b.joint)] = (q * b.post).normalize();
        }
        let scale = target.rest_hips_height / self.pose.rest_hips_height;
        *self.hips_translation = target
            .hips_parent_inverse
            .transform_point3(self.pose.hips_position * scale);
        Ok(())
    }
}

/// A source and a target prepared for each other: source frame in, target locals out.
#[derive(Debug, Clone)]
pub struct Retargeter {
    pub source: SourceRig,
    pub target: TargetRig,
}

impl Retargeter {
    /// Precomputes both sides.
    #[must_use]
    pub fn new(source: &MappedSkeleton, target: &MappedSkeleton) -> Self {
        Self {
            source: SourceRig::new(source),
            target: TargetRig::new(target),
        }
    }

    /// Source locals -> `pose` -> target locals and hips translation.
    pub fn run(
        &self,
        local_rotations: &[Quat],
        local_translations: &[Vec3],
        pose: &mut HumanoidPose,
        target_rotations: &mut [Quat],
        hips_translation: &mut Vec3,
    ) -> Result<(), JobError> {
        ToNormalized {
            source: &self.source,
            local_rotations,
            local_translations,
            pose,
        }
        .run()?;
        FromNormalized {
            target: &self.target,
            pose,
            local_rotations: target_rotations,
            hips_translation,
        }
        .run()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::formats::{LoadOptions, skeleton_json};

    fn lab19() -> MappedSkeleton {
        let rig = skeleton_json::parse(
            crate::skeleton::builtin::LAB19_JSON,
            std::path::Path::new("lab19.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap()
    }

    #[test]
    fn a_map_whose_hips_rest_at_the_floor_is_said_to_be_no_pelvis() {
        assert_eq!(lab19().hips_at_the_floor(), None);
        // `hips` on the ground node under the pelvis, as a VRM map naming its
        // armature's root does: 0 m up, the head 1.5 m (also `cli`'s avatar).
        let rig = skeleton_json::parse(
            include_str!("../../tests/data/hips_at_the_floor.json"),
            std::path::Path::new("grounded.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        let mapped = MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap();
        let problem = mapped.hips_at_the_floor().expect("a problem");
        assert!(
            problem.starts_with(
                "the hips (joint `Armature`) rest 0.000 m above the floor, with the head 1.500 m up"
            ),
            "{problem}"
        );
    }

    /// A skeleton file `name`: hips `hips_y` up, a spine to the head, arms, and legs
    /// to ankles 6 cm above its origin; `more` joints and `more_map` bone map entries
    /// (each starting with a comma) after those.
    fn body_file(name: &str, hips_y: f32, more: &str, more_map: &str) -> String {
        format!(
            r#"{{"name": "{name}", "units": "m", "up": "y", "joints": [
                {{"name": "hips", "parent": null, "offset": [0, {hips_y}, 0]}},
                {{"name": "spine", "parent": "hips", "offset": [0, 0.1, 0]}},
                {{"name": "chest", "parent": "spine", "offset": [0, 0.1, 0]}},
                {{"name": "neck", "parent": "chest", "offset": [0, 0.2, 0]}},
                {{"name": "head", "parent": "neck", "offset": [0, 0.1, 0]}},
                {{"name": "lArm", "parent": "chest", "offset": [0.15, 0.18, 0]}},
                {{"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]}},
                {{"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0]}},
                {{"name": "rArm", "parent": "chest", "offset": [-0.15, 0.18, 0]}},
                {{"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]}},
                {{"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0]}},
                {{"name": "lThigh", "parent": "hips", "offset": [0.1, 0, 0]}},
                {{"name": "lShin", "parent": "lThigh", "offset": [0, -0.4, 0]}},
                {{"name": "lAnkle", "parent": "lShin", "offset": [0, -0.4, 0]}},
                {{"name": "rThigh", "parent": "hips", "offset": [-0.1, 0, 0]}},
                {{"name": "rShin", "parent": "rThigh", "offset": [0, -0.4, 0]}},
                {{"name": "rAnkle", "parent": "rShin", "offset": [0, -0.4, 0]}}{more}
            ], "boneMap": {{"hips": "hips", "spine": "spine", "chest": "chest", "neck": "neck",
                "head": "head", "leftUpperArm": "lArm", "leftLowerArm": "lFore",
                "leftHand": "lHand", "rightUpperArm": "rArm", "rightLowerArm": "rFore",
                "rightHand": "rHand", "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
                "leftFoot": "lAnkle", "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin",
                "rightFoot": "rAnkle"{more_map}}}}}"#
        )
    }

    /// A rig without toes whose ankles are 6 cm above its origin, hips at `hips_y`.
    fn ankles_above_the_origin(hips_y: f32) -> crate::formats::Rig {
        skeleton_json::parse(
            &body_file("no toes", hips_y, "", ""),
            std::path::Path::new("no_toes.json"),
            &LoadOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_vrm_model_stands_on_its_origin_and_other_rigs_on_their_lowest_point() {
        let declared = TPoseSource::Declared { half_turn: false };
        let height = |hips_y: f32, t_pose: TPoseSource| {
            let rig = ankles_above_the_origin(hips_y);
            let mut named = rig.bone_map.unwrap();
            named.t_pose = t_pose;
            let mapped = MappedSkeleton::new(rig.skeleton, &named).unwrap();
            (mapped.rest_hips_height(), mapped.rest_floor())
        };
        // A skeleton file: its ankles are its floor.
        let (h, floor) = height(0.86, TPoseSource::Measured);
        assert!((h - 0.80).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::LowestPoint);
        // The same bones as a VRM: it stands on y = 0, as three-vrm scales it.
        let (h, floor) = height(0.86, declared);
        assert!((h - 0.86).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::Origin);
        // A VRM whose ankles reach below its origin stands on them; a rounding error
        // below it is still the origin.
        let (h, floor) = height(0.70, declared);
        assert!((h - 0.80).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::LowestPoint);
        let (h, floor) = height(0.7999, declared);
        assert!((h - 0.7999).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::Origin);
    }

    #[test]
    fn joints_beside_the_hips_do_not_set_the_floor() {
        // A game rig: `root` on the ground holds the hips (ankles 6 cm up, no toes)
        // and, beside them, a foot-roll control whose end nub reaches 20 cm under the
        // soles; a prop is a second root further down.
        let text = r#"{"name": "controls", "units": "m", "up": "y", "joints": [
            {"name": "root", "parent": null, "offset": [0, 0, 0]},
            {"name": "hips", "parent": "root", "offset": [0, 0.86, 0]},
            {"name": "spine", "parent": "hips", "offset": [0, 0.1, 0]},
            {"name": "chest", "parent": "spine", "offset": [0, 0.1, 0]},
            {"name": "neck", "parent": "chest", "offset": [0, 0.2, 0]},
            {"name": "head", "parent": "neck", "offset": [0, 0.1, 0]},
            {"name": "lArm", "parent": "chest", "offset": [0.15, 0.18, 0]},
            {"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]},
            {"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0]},
            {"name": "rArm", "parent": "chest", "offset": [-0.15, 0.18, 0]},
            {"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]},
            {"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0]},
            {"name": "lThigh", "parent": "hips", "offset": [0.1, 0, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.4, 0]},
            {"name": "lAnkle", "parent": "lShin", "offset": [0, -0.4, 0]},
            {"name": "rThigh", "parent": "hips", "offset": [-0.1, 0, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.4, 0]},
            {"name": "rAnkle", "parent": "rShin", "offset": [0, -0.4, 0]},
            {"name": "FootIK", "parent": "root", "offset": [0.1, 0.06, 0]},
            {"name": "FootIK_end", "parent": "FootIK", "offset": [0, -0.26, 0.3]},
            {"name": "prop", "parent": null, "offset": [0.5, -0.5, 0]}
        ], "boneMap": {"hips": "hips", "spine": "spine", "chest": "chest", "neck": "neck",
            "head": "head", "leftUpperArm": "lArm", "leftLowerArm": "lFore",
            "leftHand": "lHand", "rightUpperArm": "rArm", "rightLowerArm": "rFore",
            "rightHand": "rHand", "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
            "leftFoot": "lAnkle", "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin",
            "rightFoot": "rAnkle"}}"#;
        let rig = skeleton_json::parse(
            text,
            std::path::Path::new("controls.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        let mapped = MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap();
        // It stands on its root, the lowest point of the body, not on the control.
        let h = mapped.rest_hips_height();
        assert!((h - 0.86).abs() < 1e-5, "{h}");
        assert_eq!(mapped.rest_floor(), Floor::LowestPoint);

        // Legs that are roots of their own beside the hips (a stick figure's) are
        // body: it stands on their ankles, 6 cm above the root.
        let detached = text
            .replace(
                r#""name": "lThigh", "parent": "hips", "offset": [0.1, 0, 0]"#,
                r#""name": "lThigh", "parent": null, "offset": [0.1, 0.86, 0]"#,
            )
            .replace(
                r#""name": "rThigh", "parent": "hips", "offset": [-0.1, 0, 0]"#,
                r#""name": "rThigh", "parent": null, "offset": [-0.1, 0.86, 0]"#,
            )
            .replace(
                r#""name": "hips", "parent": "root", "offset": [0, 0.86, 0]"#,
                r#""name": "hips", "parent": null, "offset": [0, 0.86, 0]"#,
            );
        let rig = skeleton_json::parse(
            &detached,
            std::path::Path::new("detached.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        let mapped = MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap();
        let h = mapped.rest_hips_height();
        assert!((h - 0.80).abs() < 1e-5, "{h}");
    }

    #[test]
    fn joints_hanging_from_the_spine_below_the_feet_do_not_set_the_floor() {
        // A VRM exported from Blender: the head carries a layer joint that the
        // file places at the armature's origin, 44 cm below the origin the model
        // stands on (its ankles are 6 cm up).
        let declared = TPoseSource::Declared { half_turn: false };
        let text = body_file(
            "layers",
            0.86,
            r#",
                {"name": "mouthLayer", "parent": "head", "offset": [0, -1.8, 0.03]}"#,
            "",
        );
        let height = |t_pose: TPoseSource| {
            let rig = skeleton_json::parse(
                &text,
                std::path::Path::new("layers.json"),
                &LoadOptions::default(),
            )
            .unwrap();
            let mut named = rig.bone_map.unwrap();
            named.t_pose = t_pose;
            let mapped = MappedSkeleton::new(rig.skeleton, &named).unwrap();
            (mapped.rest_hips_height(), mapped.rest_floor())
        };
        // As a VRM it stands on its origin, as the same model without the layer does.
        let (h, floor) = height(declared);
        assert!((h - 0.86).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::Origin);
        // As another rig, on its ankles.
        let (h, floor) = height(TPoseSource::Measured);
        assert!((h - 0.80).abs() < 1e-5, "{h}");
        assert_eq!(floor, Floor::LowestPoint);
    }

    #[test]
    fn a_drawn_tail_under_a_toe_does_not_set_the_floor() {
        // Toes on the ground 15 cm ahead of the ankles; the right toe's `_end` joint
        // (an importer's drawn tail) hangs the foot bone's length under it, the left
        // one's stands above it.
        let text = body_file(
            "tails",
            0.86,
            r#",
                {"name": "lToes", "parent": "lAnkle", "offset": [0, -0.06, 0.15]},
                {"name": "lToes_end", "parent": "lToes", "offset": [0, 0.16155, 0]},
                {"name": "rToes", "parent": "rAnkle", "offset": [0, -0.06, 0.15]},
                {"name": "rToes_end", "parent": "rToes", "offset": [0, -0.16155, 0]}"#,
            r#", "leftToes": "lToes", "rightToes": "rToes""#,
        );
        let height = |text: &str| {
            let rig = skeleton_json::parse(
                text,
                std::path::Path::new("tails.json"),
                &LoadOptions::default(),
            )
            .unwrap();
            MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap())
                .unwrap()
                .rest_hips_height()
        };
        // It stands on its toes, not on the tail 16 cm under one of them.
        let h = height(&text);
        assert!((h - 0.86).abs() < 0.01, "{h}");
        // A nub of its own length under the toe is a point of the figure.
        let h = height(&text.replace("[0, -0.16155, 0]", "[0, -0.08, 0]"));
        assert!((h - 0.94).abs() < 0.01, "{h}");
    }

    #[test]
    fn validate_rejects_a_frame_shorter_than_the_skeleton() {
        let m = lab19();
        let source = SourceRig::new(&m);
        let mut pose = HumanoidPose::default();
        let job = ToNormalized {
            source: &source,
            local_rotations: &[Quat::IDENTITY; 3],
            local_translations: &[Vec3::ZERO; 19],
            pose: &mut pose,
        };
        assert_eq!(
            job.validate(),
            Err(JobError::SourceTooShort { needed: 19, got: 3 })
        );
    }

    #[test]
    fn validate_rejects_a_short_output_and_a_bad_hips_height() {
        let m = lab19();
        let target = TargetRig::new(&m);
        let mut pose = HumanoidPose::default();
        let mut out = [Quat::IDENTITY; 19];
        let mut hips = Vec3::ZERO;
        let job = FromNormalized {
            target: &target,
            pose: &pose,
            local_rotations: &mut out[..5],
            hips_translation: &mut hips,
        };
        assert!(matches!(
            job.validate(),
            Err(JobError::OutputTooShort { .. })
        ));
        pose.rest_hips_height = f32::NAN;
        let job = FromNormalized {
            target: &target,
            pose: &pose,
            local_rotations: &mut out,
            hips_translation: &mut hips,
        };
        assert!(matches!(job.validate(), Err(JobError::BadHipsHeight(_))));
    }

    #[test]
    fn the_rest_pose_of_an_arms_down_rig_has_its_arms_down_in_normalized_space() {
        let m = lab19();
        let source = SourceRig::new(&m);
        let mut pose = HumanoidPose::default();
        ToNormalized {
            source: &source,
            local_rotations: &m.skeleton.rest_rotations(),
            local_translations: &m.skeleton.rest_translations(),
            pose: &mut pose,
        }
        .run()
        .unwrap();
        let model = pose.model_rotations();
        let left_arm = model[HumanBone::LeftUpperArm.index()] * Vec3::X;
        assert!(left_arm.y < -0.95, "{left_arm}");
        let right_arm = model[HumanBone::RightUpperArm.index()] * Vec3::NEG_X;
        assert!(right_arm.y < -0.95, "{right_arm}");
    }

    /// A game rig: the root `Bone` holds the hips `Body` (and the body above them),
    /// and `legs` (skeleton-file joints, with a comma before each) hang from it as
    /// each layout has them. Every bone is mapped, toes too.
    fn game_rig(legs: &str) -> MappedSkeleton {
        let text = format!(
            r#"{{"name": "game rig", "units": "m", "up": "y", "joints": [
            {{"name": "Bone", "parent": null, "offset": [0, 0, 0]}},
            {{"name": "Body", "parent": "Bone", "offset": [0, 0.9, 0]}},
            {{"name": "spine", "parent": "Body", "offset": [0, 0.1, 0]}},
            {{"name": "chest", "parent": "spine", "offset": [0, 0.2, 0]}},
            {{"name": "neck", "parent": "chest", "offset": [0, 0.2, 0]}},
            {{"name": "head", "parent": "neck", "offset": [0, 0.1, 0], "end": [0, 0.2, 0]}},
            {{"name": "lArm", "parent": "chest", "offset": [0.15, 0.18, 0]}},
            {{"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]}},
            {{"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0], "end": [0.1, 0, 0]}},
            {{"name": "rArm", "parent": "chest", "offset": [-0.15, 0.18, 0]}},
            {{"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]}},
            {{"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0], "end": [-0.1, 0, 0]}}
            {legs}
        ], "boneMap": {{"hips": "Body", "spine": "spine", "chest": "chest", "neck": "neck",
            "head": "head", "leftUpperArm": "lArm", "leftLowerArm": "lFore",
            "leftHand": "lHand", "rightUpperArm": "rArm", "rightLowerArm": "rFore",
            "rightHand": "rHand", "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
            "leftFoot": "lFoot", "leftToes": "lToe", "rightUpperLeg": "rThigh",
            "rightLowerLeg": "rShin", "rightFoot": "rFoot", "rightToes": "rToe"}}}}"#
        );
        let rig = skeleton_json::parse(
            &text,
            std::path::Path::new("game_rig.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap()
    }

    /// Quaternius' layout: the legs end at the knee's bone, bent in the rest, and each
    /// foot hangs from the root at the shin's end, with a toe.
    pub(crate) fn feet_under_the_root() -> MappedSkeleton {
        game_rig(
            r#",
            {"name": "lThigh", "parent": "Body", "offset": [0.1, -0.05, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.38, 0.06],
             "end": [0, -0.37, -0.06]},
            {"name": "rThigh", "parent": "Body", "offset": [-0.1, -0.05, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.38, 0.06],
             "end": [0, -0.37, -0.06]},
            {"name": "lFoot", "parent": "Bone", "offset": [0.1, 0.1, 0]},
            {"name": "lToe", "parent": "lFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]},
            {"name": "rFoot", "parent": "Bone", "offset": [-0.1, 0.1, 0]},
            {"name": "rToe", "parent": "rFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]}"#,
        )
    }

    #[test]
    fn a_foot_hung_from_the_root_stands_at_its_leg_end_in_the_t_pose() {
        let m = feet_under_the_root();
        let joint = |name: &str| m.skeleton.find(name).unwrap();
        assert_eq!(m.map.detached_bones(&m.skeleton).len(), 2);
        let world = m.correction.t_pose_world(&m.skeleton);
        let at = |name: &str| Vec3::from(world[joint(name)].translation);
        // The bent shin is swung straight down: the foot stays at its end, a shin's
        // length straight under the knee.
        let shin = 0.37f32.hypot(0.06);
        for side in ["l", "r"] {
            let (knee, foot) = (at(&format!("{side}Shin")), at(&format!("{side}Foot")));
            assert!(
                (foot - knee).distance(Vec3::NEG_Y * shin) < 1e-4,
                "{side}: knee {knee}, foot {foot}"
            );
        }
    }

    /// Quaternius' modular women: the legs hang from the root beside the hips.
    pub(crate) fn legs_beside_the_hips() -> MappedSkeleton {
        game_rig(
            r#",
            {"name": "lThigh", "parent": "Bone", "offset": [0.1, 0.87, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.38, 0.06]},
            {"name": "lFoot", "parent": "lShin", "offset": [0, -0.37, -0.06]},
            {"name": "lToe", "parent": "lFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]},
            {"name": "rThigh", "parent": "Bone", "offset": [-0.1, 0.87, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.38, 0.06]},
            {"name": "rFoot", "parent": "rShin", "offset": [0, -0.37, -0.06]},
            {"name": "rToe", "parent": "rFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]}"#,
        )
    }

    /// A frame of `m` (every joint but the root turned, the hips moved, each
    /// `(held, anchor)` joint where its anchor holds it, as the rig's IK or root
    /// motion would put it) goes to a normalized pose and back onto `m`: every mapped
    /// joint lands where it was, turned as it was.
    fn round_trip_is_exact(m: &MappedSkeleton, held: &[(&str, &str)]) {
        let (source, target) = (SourceRig::new(m), TargetRig::new(m));
        assert_eq!(target.held.is_empty(), held.is_empty());
        let joint = |name: &str| m.skeleton.find(name).unwrap();
        let n = m.skeleton.len();
        let rest_world = m.skeleton.rest_world();
        let mut rotations = m.skeleton.rest_rotations();
        for (i, r) in rotations.iter_mut().enumerate().skip(1) {
            let axis = Vec3::new(i as f32, 1.0 + (i % 3) as f32, -(i as f32) * 0.5).normalize();
            *r = (Quat::from_axis_angle(axis, 0.1 * i as f32) * *r).normalize();
        }
        let mut translations = m.skeleton.rest_translations();
        translations[joint("Body")] = Vec3::new(0.2, 0.8, -0.3);
        for &(bone, anchor) in held {
            let before = m.skeleton.world_transforms(&rotations, &translations);
            let offset = rest_world[joint(anchor)]
                .inverse()
                .transform_point3(Vec3::from(rest_world[joint(bone)].translation));
            translations[joint(bone)] = before[joint(anchor)].transform_point3(offset);
        }
        let source_world = m.skeleton.world_transforms(&rotations, &translations);

        let mut pose = HumanoidPose::default();
        ToNormalized {
            source: &source,
            local_rotations: &rotations,
            local_translations: &translations,
            pose: &mut pose,
        }
        .run()
        .unwrap();
        let mut out = vec![Quat::IDENTITY; n];
        let mut hips = Vec3::ZERO;
        FromNormalized {
            target: &target,
            pose: &pose,
            local_rotations: &mut out,
            hips_translation: &mut hips,
        }
        .run()
        .unwrap();
        let mut out_translations = vec![Vec3::ZERO; n];
        target
            .place_held_bones(&out, hips, &mut out_translations)
            .unwrap();
        let target_world = m.skeleton.world_transforms(&out, &out_translations);
        for (bone, j) in m.map.pairs() {
            let (a, b) = (source_world[j], target_world[j]);
            let angle = rotation_of(&a).angle_between(rotation_of(&b)).to_degrees();
            let apart = Vec3::from(a.translation).distance(Vec3::from(b.translation));
            assert!(angle < 0.01, "{bone}: {angle}°");
            assert!(apart < 1e-5, "{bone}: {apart} m");
        }
    }

    /// Arms whose upper arm runs through a joint of its own halfway to the elbow
    /// (MakeHuman's `upperarm02`), and legs with one between knee and ankle.
    fn limbs_through_joints() -> MappedSkeleton {
        let text = r#"{"name": "helper joints", "units": "m", "up": "y", "joints": [
            {"name": "Body", "parent": null, "offset": [0, 0.9, 0]},
            {"name": "spine", "parent": "Body", "offset": [0, 0.1, 0]},
            {"name": "chest", "parent": "spine", "offset": [0, 0.2, 0]},
            {"name": "neck", "parent": "chest", "offset": [0, 0.2, 0]},
            {"name": "head", "parent": "neck", "offset": [0, 0.1, 0], "end": [0, 0.2, 0]},
            {"name": "lArm", "parent": "chest", "offset": [0.15, 0.18, 0]},
            {"name": "lArm2", "parent": "lArm", "offset": [0.125, 0, 0]},
            {"name": "lFore", "parent": "lArm2", "offset": [0.125, 0, 0]},
            {"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0], "end": [0.1, 0, 0]},
            {"name": "rArm", "parent": "chest", "offset": [-0.15, 0.18, 0]},
            {"name": "rArm2", "parent": "rArm", "offset": [-0.125, 0, 0]},
            {"name": "rFore", "parent": "rArm2", "offset": [-0.125, 0, 0]},
            {"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0], "end": [-0.1, 0, 0]},
            {"name": "lThigh", "parent": "Body", "offset": [0.1, -0.05, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.4, 0]},
            {"name": "lShin2", "parent": "lShin", "offset": [0, -0.2, 0]},
            {"name": "lFoot", "parent": "lShin2", "offset": [0, -0.2, 0], "end": [0, -0.05, 0.12]},
            {"name": "rThigh", "parent": "Body", "offset": [-0.1, -0.05, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.4, 0]},
            {"name": "rShin2", "parent": "rShin", "offset": [0, -0.2, 0]},
            {"name": "rFoot", "parent": "rShin2", "offset": [0, -0.2, 0], "end": [0, -0.05, 0.12]}
        ], "boneMap": {"hips": "Body", "spine": "spine", "chest": "chest", "neck": "neck",
            "head": "head", "leftUpperArm": "lArm", "leftLowerArm": "lFore",
            "leftHand": "lHand", "rightUpperArm": "rArm", "rightLowerArm": "rFore",
            "rightHand": "rHand", "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
            "leftFoot": "lFoot", "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin",
            "rightFoot": "rFoot"}}"#;
        let rig = skeleton_json::parse(
            text,
            std::path::Path::new("helper_joints.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap()).unwrap()
    }

    /// `m`'s joints at local `rotations` (rest translations) made normalized: the
    /// model rotations, the source's world transforms, and the worst limb direction
    /// error between them, degrees.
    fn normalized_limb_error(
        m: &MappedSkeleton,
        rotations: &[Quat],
    ) -> ([Quat; crate::humanoid::BONE_COUNT], Vec<Affine3A>, f32) {
        normalized_limb_error_at(m, rotations, &m.skeleton.rest_translations())
    }

    /// `normalized_limb_error` with the joints at local `translations`.
    fn normalized_limb_error_at(
        m: &MappedSkeleton,
        rotations: &[Quat],
        translations: &[Vec3],
    ) -> ([Quat; crate::humanoid::BONE_COUNT], Vec<Affine3A>, f32) {
        let source = SourceRig::new(m);
        let mut pose = HumanoidPose::default();
        ToNormalized {
            source: &source,
            local_rotations: rotations,
            local_translations: translations,
            pose: &mut pose,
        }
        .run()
        .unwrap();
        let model = pose.model_rotations();
        let world = m.skeleton.world_transforms(rotations, translations);
        let limbs = check::limb_vectors(m, &world);
        let error = check::LimbCheck::new(Some(m), m).worst_error_deg(&model, &limbs, Some(&limbs));
        (model, world, error)
    }

    #[test]
    fn limbs_bent_at_joints_of_their_own_point_where_the_source_points() {
        // The joints between bend (30° and 40°, about axes off the limb) as well as
        // turn about it, the limb joints turn too: every limb segment of the
        // normalized pose points where the source's does, and every hand and foot
        // keeps its own rotation.
        let m = limbs_through_joints();
        let joint = |name: &str| m.skeleton.find(name).unwrap();
        let mut rotations = m.skeleton.rest_rotations();
        let turn = |axis: Vec3, deg: f32| Quat::from_axis_angle(axis.normalize(), deg.to_radians());
        for (name, axis, deg) in [
            ("lArm", Vec3::new(0.0, 1.0, 0.3), 25.0),
            ("lArm2", Vec3::new(0.2, 0.3, 1.0), 30.0),
            ("lFore", Vec3::Y, 50.0),
            ("rArm2", Vec3::new(1.0, 0.0, 1.0), -40.0),
            ("lShin2", Vec3::new(1.0, 0.4, 0.0), 40.0),
            ("rShin", Vec3::X, 60.0),
            ("rShin2", Vec3::new(0.0, 1.0, 0.5), 30.0),
        ] {
            rotations[joint(name)] = turn(axis, deg) * rotations[joint(name)];
        }
        let (model, world, error) = normalized_limb_error(&m, &rotations);
        assert!(error < 0.01, "worst limb direction error {error}°");
        let t_pose = m.correction.t_pose_world(&m.skeleton);
        for (bone, name) in [
            (HumanBone::LeftHand, "lHand"),
            (HumanBone::RightHand, "rHand"),
            (HumanBone::LeftFoot, "lFoot"),
            (HumanBone::RightFoot, "rFoot"),
        ] {
            let j = joint(name);
            let own =
                m.correction.facing * rotation_of(&world[j]) * rotation_of(&t_pose[j]).conjugate();
            // Half the angle is the vector part's length (acos near 1 is too coarse).
            let apart = model[bone.index()].conjugate() * own;
            let angle = 2.0 * apart.xyz().length().asin().to_degrees();
            assert!(angle < 0.01, "{bone}: {angle}°");
        }
    }

    #[test]
    fn limbs_bent_a_hair_at_joints_of_their_own_point_where_the_source_points() {
        // A bend of 0.06° at the joint halfway down the upper arm turns the segment
        // to the elbow by 0.03°: under the angle glam's `from_rotation_arc` resolves
        // (it gave the identity, leaving the upper arm 0.03° off), still swung onto
        // the source's segment (a game rig's idle sway at its elbow cap).
        let m = limbs_through_joints();
        let mut rotations = m.skeleton.rest_rotations();
        let arm2 = m.skeleton.find("lArm2").unwrap();
        rotations[arm2] = Quat::from_rotation_z(0.06f32.to_radians()) * rotations[arm2];
        let (_, _, error) = normalized_limb_error(&m, &rotations);
        assert!(error < 0.002, "worst limb direction error {error}°");
    }

    #[test]
    fn limbs_whose_next_joint_a_clip_moves_point_where_the_source_points() {
        // A clip that moves a limb joint off its rest place (a Sketchfab rig's
        // translation keys: the wrist 10% nearer the elbow and 10° off the forearm's
        // line, the knee pushed forward) turns the segment the bone's rotation alone
        // does not: the bone is swung onto it, and the hand keeps its own rotation.
        let m = lab19();
        let joint = |name: &str| m.skeleton.find(name).unwrap();
        let mut rotations = m.skeleton.rest_rotations();
        let mut translations = m.skeleton.rest_translations();
        let elbow = joint("LeftElbow");
        rotations[elbow] = Quat::from_rotation_x(40f32.to_radians()) * rotations[elbow];
        let wrist = joint("LeftWrist");
        translations[wrist] = Quat::from_rotation_z(10f32.to_radians()) * translations[wrist] * 0.9;
        let knee = joint("RightKnee");
        translations[knee] += Vec3::new(0.0, 0.0, 0.08);
        let (model, world, error) = normalized_limb_error_at(&m, &rotations, &translations);
        assert!(error < 0.01, "worst limb direction error {error}°");
        let t_pose = m.correction.t_pose_world(&m.skeleton);
        let own = m.correction.facing
            * rotation_of(&world[wrist])
            * rotation_of(&t_pose[wrist]).conjugate();
        let apart = model[HumanBone::LeftHand.index()].conjugate() * own;
        let angle = 2.0 * apart.xyz().length().asin().to_degrees();
        assert!(angle < 0.01, "leftHand: {angle}°");
    }

    #[test]
    fn a_foot_hung_from_the_root_follows_the_leg_exactly() {
        round_trip_is_exact(
            &feet_under_the_root(),
            &[("lFoot", "lShin"), ("rFoot", "rShin")],
        );
    }

    #[test]
    fn legs_hung_beside_the_hips_follow_the_hips_exactly() {
        let m = legs_beside_the_hips();
        let held: Vec<HumanBone> = m
            .map
            .detached_bones(&m.skeleton)
            .iter()
            .map(|d| d.bone)
            .collect();
        assert_eq!(held, [HumanBone::LeftUpperLeg, HumanBone::RightUpperLeg]);
        round_trip_is_exact(&m, &[("lThigh", "Body"), ("rThigh", "Body")]);
    }

    /// A declared map whose legs hang in the node tree below the spine, as a VRM
    /// whose `hips` is a node at the floor and whose `spine` is the pelvis: the
    /// spine's turn reaches the legs, and the legs undo it.
    fn legs_below_the_spine() -> MappedSkeleton {
        game_rig(
            r#",
            {"name": "lThigh", "parent": "spine", "offset": [0.1, -0.15, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.38, 0.06]},
            {"name": "lFoot", "parent": "lShin", "offset": [0, -0.37, -0.06]},
            {"name": "lToe", "parent": "lFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]},
            {"name": "rThigh", "parent": "spine", "offset": [-0.1, -0.15, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.38, 0.06]},
            {"name": "rFoot", "parent": "rShin", "offset": [0, -0.37, -0.06]},
            {"name": "rToe", "parent": "rFoot", "offset": [0, -0.05, 0.12], "end": [0, 0, 0.05]}"#,
        )
    }

    #[test]
    fn legs_hung_below_the_spine_follow_the_hips_not_the_spine() {
        round_trip_is_exact(&legs_below_the_spine(), &[]);
    }
}
