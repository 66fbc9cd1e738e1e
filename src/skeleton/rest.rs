//! Rest pose detection and the correction that turns any rest pose into the VRM
//! T-pose (the retargeting blog's "pose retargeting transforms", computed from joint
//! positions rather than typed in).
//!
//! The T-pose (EXT_skeleton_humanoid, VRM 1.0): the character faces +Z, arms along
//! ±X with palms down, legs straight down, feet toward +Z, fingers along ±X, thumbs
//! 45° between ±X and +Z. Only bones whose T-pose *direction* is fixed by that
//! definition are corrected: arms, hands, fingers and legs get a swing onto their
//! canonical direction (hands also a roll that puts the palm down, when the fingers
//! tell where the palm is); feet and toes get a turn about +Y only, and none when
//! steeper than 75° from the ground (their pitch is the foot's shape, not a pose).
//! A foot whose next joint lies behind it (a heel joint carrying the forefoot's end
//! site) points where its subtree reaches farthest along the ground (`forefoot`).
//! Spine, neck, head and shoulders (clavicles) keep their rest: their T-pose
//! direction is a matter of the body's shape.
//!
//! The facing turn `facing` is a world rotation about +Y applied in front of the
//! whole rig, so a rig that faces -Z (VRM 0.x) or sideways is seen facing +Z.
//! A correction is applied by multiplying `local[j]` onto joint `j`'s rest local
//! rotation: `T-pose local = rest local · local[j]`.
//!
//! That is for rigs that say nothing about their rest (BVH, plain glTF, skeleton
//! files): their T-pose is measured. A VRM model declares its rest to be the
//! T-pose (both VRM specifications require it), and every VRM consumer (three-vrm,
//! UniVRM, each VMC receiver) takes normalized rotations relative to that rest as
//! the file has it, fingers and hands included. For a map that says so
//! (`TPoseSource::Declared`) the correction turns nothing: only the facing turn is
//! applied, exactly half a turn for VRM 0.x as three-vrm's `rotateVRM0` gives it.
//! A declared rest whose left side shows it facing the other way (a VRM 0.x file
//! facing +Z, a VRM 1.0 file facing -Z) is turned all the same, as players turn it,
//! and reported as a problem. A map crossing one pair of limbs (its legs' left side
//! and its arms' pointing opposite ways) is reported as that pair, not as a facing.
//! The rest is still measured, for `inspect`: its class, and how far each bone's
//! rest direction is from the canonical one.

use std::fmt;

use glam::{Affine3A, Quat, Vec3};

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use super::leaf_nub::is_leaf_nub_off_the_bone;
use super::shared_end::{shared_end, unmirrored_end};
use super::{BoneMap, DetachedBone, Skeleton};

/// Where a rig's T-pose comes from: what its bone map's file says about its rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TPoseSource {
    /// Nothing is said: the T-pose is measured from the joint positions (see the
    /// module header).
    #[default]
    Measured,
    /// The file declares its rest to be the T-pose (a VRM's own humanoid map): the
    /// rest is taken as it is, turned half a turn about +Y when `half_turn` (VRM
    /// 0.x models face -Z).
    Declared { half_turn: bool },
}

/// What kind of rest pose a rig has, judged by its upper arms and legs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestPose {
    /// Arms within 12° of horizontal.
    TPose,
    /// Arms 12°–60° below horizontal.
    APose,
    /// Arms more than 60° below horizontal.
    ArmsDown,
    /// Anything else: arms raised or forward, legs not down.
    Other,
}

impl fmt::Display for RestPose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RestPose::TPose => "T-pose",
            RestPose::APose => "A-pose",
            RestPose::ArmsDown => "arms down",
            RestPose::Other => "other",
        })
    }
}

/// What the correction did to one bone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoneCorrection {
    pub bone: HumanBone,
    /// Rest direction of the bone in the facing-corrected model space (unit).
    pub rest_direction: Vec3,
    /// Angle of the correction, degrees. With a declared T-pose nothing is turned:
    /// the angle is how far the bone's rest is from the canonical T-pose.
    pub angle_deg: f32,
}

/// The correction from a rig's rest pose to the T-pose. Built once per rig.
#[derive(Debug, Clone, PartialEq)]
pub struct RestCorrection {
    /// Measured, or declared by the file (then `local` is all identity).
    pub source: TPoseSource,
    /// World turn about +Y in front of the whole rig, making it face +Z.
    pub facing: Quat,
    /// Per joint: multiply onto the rest local rotation to get the T-pose local.
    pub local: Vec<Quat>,
    /// The detected rest pose.
    pub pose: RestPose,
    /// Mean angle of the upper arms below horizontal at rest, degrees.
    pub arm_angle_deg: f32,
    /// Every corrected bone, parents first.
    pub bones: Vec<BoneCorrection>,
    /// What could not be corrected, one line each.
    pub problems: Vec<String>,
    /// Mapped bones whose direction could not be told (no mapped next bone, child
    /// joint or end site away from the joint), with their joint: left uncorrected,
    /// keeping their rest turn against their parent.
    pub undirected: Vec<(HumanBone, usize)>,
    /// Bones hanging outside the hips' subtree (`BoneMap::detached_bones`), held at
    /// their rest place in their anchor's frame: in the T-pose a foot stays at the
    /// lower leg's end when the correction swings the leg. Parents first.
    pub held: Vec<HeldBone>,
}

/// A detached bone and its rest place in its anchor joint's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldBone {
    pub detached: DetachedBone,
    /// The bone's joint's rest position in the anchor joint's frame.
    pub offset: Vec3,
}

/// Sets the local translation of each `held` bone's joint so that it stands at its
/// offset in its anchor's frame, for the local `rotations` and the other
/// `translations`; parents first (an upper leg placed at the hips moves its lower
/// leg, which a foot may be held to). The model-space transforms that result.
pub fn place_held(
    skeleton: &Skeleton,
    rotations: &[Quat],
    translations: &mut [Vec3],
    held: &[HeldBone],
) -> Vec<Affine3A> {
    let mut world = skeleton.world_transforms(rotations, translations);
    for held in held {
        let at = world[held.detached.anchor].transform_point3(held.offset);
        let parent = skeleton
            .parent(held.detached.joint)
            .map_or(Affine3A::IDENTITY, |p| world[p]);
        translations[held.detached.joint] = parent.inverse().transform_point3(at);
        world = skeleton.world_transforms(rotations, translations);
    }
    world
}

/// How a bone's T-pose direction is fixed.
#[derive(Clone, Copy)]
enum Rule {
    /// Swing onto this model-space direction.
    Along(Vec3),
    /// Turn about +Y until the bone points to +Z (keeps its pitch).
    YawToFront,
}

fn rule(bone: HumanBone) -> Option<Rule> {
    use crate::humanoid::Side;
    let sign = match bone.side() {
        Side::Left => 1.0,
        Side::Right => -1.0,
        Side::Centre => return None,
    };
    if bone.is_thumb() {
        return Some(Rule::Along(Vec3::new(sign, 0.0, 1.0).normalize()));
    }
    match bone {
        B::LeftUpperArm | B::LeftLowerArm | B::LeftHand => Some(Rule::Along(Vec3::X)),
        B::RightUpperArm | B::RightLowerArm | B::RightHand => Some(Rule::Along(Vec3::NEG_X)),
        B::LeftUpperLeg | B::LeftLowerLeg | B::RightUpperLeg | B::RightLowerLeg => {
            Some(Rule::Along(Vec3::NEG_Y))
        }
        B::LeftFoot | B::LeftToes | B::RightFoot | B::RightToes => Some(Rule::YawToFront),
        b if b.is_finger() => Some(Rule::Along(Vec3::X * sign)),
        _ => None,
    }
}

/// The humanoid bones whose joint positions tell where `bone` points, best first.
fn next_bones(bone: HumanBone) -> &'static [HumanBone] {
    match bone {
        B::LeftUpperArm => &[B::LeftLowerArm],
        B::LeftLowerArm => &[B::LeftHand],
        B::LeftHand => &[
            B::LeftMiddleProximal,
            B::LeftRingProximal,
            B::LeftIndexProximal,
        ],
        B::RightUpperArm => &[B::RightLowerArm],
        B::RightLowerArm => &[B::RightHand],
        B::RightHand => &[
            B::RightMiddleProximal,
            B::RightRingProximal,
            B::RightIndexProximal,
        ],
        B::LeftUpperLeg => &[B::LeftLowerLeg],
        B::LeftLowerLeg => &[B::LeftFoot],
        B::LeftFoot => &[B::LeftToes],
        B::RightUpperLeg => &[B::RightLowerLeg],
        B::RightLowerLeg => &[B::RightFoot],
        B::RightFoot => &[B::RightToes],
        B::LeftThumbMetacarpal => &[B::LeftThumbProximal],
        B::LeftThumbProximal => &[B::LeftThumbDistal],
        B::LeftIndexProximal => &[B::LeftIndexIntermediate],
        B::LeftIndexIntermediate => &[B::LeftIndexDistal],
        B::LeftMiddleProximal => &[B::LeftMiddleIntermediate],
        B::LeftMiddleIntermediate => &[B::LeftMiddleDistal],
        B::LeftRingProximal => &[B::LeftRingIntermediate],
        B::LeftRingIntermediate => &[B::LeftRingDistal],
        B::LeftLittleProximal => &[B::LeftLittleIntermediate],
        B::LeftLittleIntermediate => &[B::LeftLittleDistal],
        B::RightThumbMetacarpal => &[B::RightThumbProximal],
        B::RightThumbProximal => &[B::RightThumbDistal],
        B::RightIndexProximal => &[B::RightIndexIntermediate],
        B::RightIndexIntermediate => &[B::RightIndexDistal],
        B::RightMiddleProximal => &[B::RightMiddleIntermediate],
        B::RightMiddleIntermediate => &[B::RightMiddleDistal],
        B::RightRingProximal => &[B::RightRingIntermediate],
        B::RightRingIntermediate => &[B::RightRingDistal],
        B::RightLittleProximal => &[B::RightLittleIntermediate],
        B::RightLittleIntermediate => &[B::RightLittleDistal],
        _ => &[],
    }
}

/// Shorter than this (metres) is "the same place".
const COINCIDENT: f32 = 1e-5;

/// Horizontal share of a foot's or toes' rest direction (cos 75°) under which it is
/// not turned about +Y: a bone steeper than 75° from the ground tells little of
/// where the foot points (an end nub along +Y, as SMPL exporters write every leaf's).
const LEAST_FLAT: f32 = 0.26;

/// Where bone `bone` (at joint `joint`) ends in the rest pose, in model space.
fn tip(
    skeleton: &Skeleton,
    map: &BoneMap,
    world: &[Affine3A],
    bone: HumanBone,
    joint: usize,
) -> Option<Vec3> {
    let origin = Vec3::from(world[joint].translation);
    for next in next_bones(bone) {
        if let Some(j) = map.joint(*next) {
            let p = Vec3::from(world[j].translation);
            if p.distance(origin) > COINCIDENT {
                return Some(p);
            }
        }
    }
    // A foot's children are toes and heels fanned every way, none in line with the
    // shin: among those as deep, the first written stays its direction.
    let in_line = !matches!(
        bone,
        B::LeftFoot | B::RightFoot | B::LeftToes | B::RightToes
    );
    // Both sides closed by one offset across the body: no mirror images, no direction.
    if unmirrored_end(skeleton, map, world, bone, joint) {
        return None;
    }
    skeleton_tip(skeleton, world, joint, origin, in_line)
}

/// An end site shorter than this share of the bone leading to its joint is a
/// placeholder (a writer's `OFFSET 0 0 0.1` on every leaf), not the bone's direction.
pub(crate) const PLACEHOLDER_END: f32 = 0.1;

/// Cosine of the widest angle (135°) an end site may make with the bone into its
/// joint. One folded back further points back along that bone, toward the parent
/// joint: a writer's copy of the bone reversed (a Rokoko-style exporter ends the
/// head with the neck bone turned back down, a fingertip back onto its knuckle, the
/// toes behind the ball of the foot), no point of the figure; no fingertip, toe or
/// head bends back onto the bone before it.
pub(crate) const FOLDED_BACK: f32 = -0.707;

/// The end of a joint's bone from the skeleton alone: its end site, or the first
/// place down its main child chain (the child with the most descendants, one away
/// from the joint before one at its place, then, when `in_line`, the one most in
/// line with the bone into the joint) that is not the joint itself. A placeholder
/// end site tells nothing, nor does a leaf joint as short, nor an end site folded
/// back onto the bone into the joint (`FOLDED_BACK`), nor one whose offset every end
/// site of the rig shares (`shared_end`): the bone then keeps its rest turn against
/// its parent.
fn skeleton_tip(
    skeleton: &Skeleton,
    world: &[Affine3A],
    joint: usize,
    origin: Vec3,
    in_line: bool,
) -> Option<Vec3> {
    let into_bone = skeleton
        .parent(joint)
        .map_or(Vec3::ZERO, |p| origin - Vec3::from(world[p].translation));
    let into = into_bone.length();
    let least_end = COINCIDENT.max(PLACEHOLDER_END * into);
    // One offset on every end site of the rig is the writer's, not the bone's.
    let shared = shared_end(skeleton, world);
    let folded_back = |p: Vec3| {
        into > COINCIDENT && (p - origin).normalize_or_zero().dot(into_bone / into) < FOLDED_BACK
    };
    let mut j = joint;
    loop {
        if let Some(end) = skeleton.joints()[j].end
            && shared.is_none()
        {
            let p = world[j].transform_point3(end);
            if p.distance(origin) > least_end && !(j == joint && folded_back(p)) {
                return Some(p);
            }
        }
        // Among children as deep, one leaving the joint before one at its place:
        // SFU's hands hold a thumb at the wrist (its end ahead) and a wrist end
        // along the hand. Among those, the one that carries on the bone into the
        // joint: an Xsens wrist holds `Prop1` and `Prop2` leaves off to the side
        // before its own end (`RightWrist_Site`, where the hand points), and the
        // first of them would turn the hand a third of a right angle.
        let key = |c: usize| {
            let at = Vec3::from(world[c].translation);
            let away = at.distance(origin) > COINCIDENT;
            let along = if in_line && into > COINCIDENT {
                (at - origin).normalize_or_zero().dot(into_bone / into)
            } else {
                0.0
            };
            ((descendant_count(skeleton, c), away), along)
        };
        let child = skeleton.children(j).max_by(|&a, &b| {
            let ((ka, la), (kb, lb)) = (key(a), key(b));
            ka.cmp(&kb).then(la.total_cmp(&lb)).then(b.cmp(&a))
        })?;
        // Blender's leaf nub along local +Y on a rig whose bones run along another
        // axis, as long as the bone into the joint and off it: no direction either
        // (`leaf_nub`).
        if j == joint && is_leaf_nub_off_the_bone(skeleton, world, joint, child) {
            return None;
        }
        let p = Vec3::from(world[child].translation);
        // A leaf written as a node where a placeholder end site would be (three.js
        // writes a BVH's End Sites as `ENDSITE` nodes a millimetre up) tells no more.
        let leaf = skeleton.children(child).next().is_none();
        if leaf && p.distance(origin) > COINCIDENT && p.distance(origin) <= least_end {
            return None;
        }
        if p.distance(origin) > COINCIDENT {
            return Some(p);
        }
        j = child;
    }
}

/// The point of `joint`'s subtree (joints and end sites) reaching farthest from it
/// along the ground: the forefoot, whichever joint carries it. A writer may hang the
/// forefoot's end site on a heel joint behind and below the ankle (`LeftFootHeel`),
/// and that joint, the ankle's only child, is the toes: the foot points ahead of
/// the ankle all the same, never back along the heel.
fn forefoot(skeleton: &Skeleton, world: &[Affine3A], joint: usize) -> Option<Vec3> {
    let origin = Vec3::from(world[joint].translation);
    let along_ground = |p: &Vec3| {
        let d = *p - origin;
        Vec3::new(d.x, 0.0, d.z).length()
    };
    (joint..skeleton.len())
        .filter(|&j| j == joint || skeleton.is_ancestor(joint, j))
        .flat_map(|j| {
            let end = skeleton.joints()[j]
                .end
                .map(|e| world[j].transform_point3(e));
            std::iter::once(Vec3::from(world[j].translation)).chain(end)
        })
        .filter(|p| along_ground(p) > COINCIDENT)
        .max_by(|a, b| along_ground(a).total_cmp(&along_ground(b)))
}

fn descendant_count(skeleton: &Skeleton, joint: usize) -> usize {
    (joint + 1..skeleton.len())
        .filter(|&j| skeleton.is_ancestor(joint, j))
        .count()
}

/// The turn about +Y that makes a rig whose left side points along `left` face +Z.
fn facing_from_left(left: Vec3) -> Option<Quat> {
    let flat = Vec3::new(left.x, 0.0, left.z);
    if flat.length() < COINCIDENT {
        return None;
    }
    // left = R_y(phi)·X, so R_y(-phi) turns it onto +X (and the front onto +Z).
    let phi = (-flat.z).atan2(flat.x);
    Some(Quat::from_rotation_y(-phi))
}

/// How far (degrees) a declared rest's left side, turned by the declared `facing`,
/// points from +X, when more than 90°: the file faces the other way than its VRM
/// version says (a VRM 0.x model facing +Z, a VRM 1.0 model facing -Z). `None` when
/// it faces as declared, or when left and right coincide.
fn facing_against_declared(facing: Quat, left: Vec3) -> Option<f32> {
    let turned = facing * left;
    let flat = Vec3::new(turned.x, 0.0, turned.z);
    if flat.length() < COINCIDENT || turned.x >= 0.0 {
        return None;
    }
    Some(flat.angle_between(Vec3::X).to_degrees())
}

/// The pair of limbs the map crosses, as (left bone, right bone, "legs" or "arms"),
/// when the legs' left side and the arms' left side point to opposite sides: the
/// pair whose left side, turned by `facing`, points away from +X (the facing comes
/// from the legs unless the map declares it, so a measured map can only cross its
/// arms). A VRM 0.x file declaring `leftUpperLeg` on the `mixamorig:RightUpLeg`
/// joint, its arms right, is such a map: it faces -Z as declared, and only its legs
/// are wrong. `None` when both pairs agree or either is missing.
fn crossed_pair(
    facing: Quat,
    leg_left: Option<Vec3>,
    arm_left: Option<Vec3>,
) -> Option<(HumanBone, HumanBone, &'static str)> {
    let (legs, arms) = (leg_left?, arm_left?);
    let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
    if flat(legs).dot(flat(arms)) >= 0.0 {
        return None;
    }
    if (facing * legs).x < 0.0 {
        Some((B::LeftUpperLeg, B::RightUpperLeg, "legs"))
    } else {
        Some((B::LeftUpperArm, B::RightUpperArm, "arms"))
    }
}

/// The smallest rotation turning unit `from` onto unit `to`, exact for tiny angles
/// too (glam's `from_rotation_arc` returns the identity below about 0.04°).
pub(crate) fn shortest_arc(from: Vec3, to: Vec3) -> Quat {
    let dot = from.dot(to);
    if dot < -1.0 + 1e-6 {
        // Opposite: half a turn about any axis perpendicular to both.
        return Quat::from_axis_angle(to.any_orthonormal_vector(), std::f32::consts::PI);
    }
    // (from × to, 1 + from·to) is twice the half-angle quaternion, unnormalized.
    let axis = from.cross(to);
    Quat::from_xyzw(axis.x, axis.y, axis.z, 1.0 + dot).normalize()
}

/// Signed angle turning `from` onto `to` about `axis` (all perpendicular-ish).
fn signed_angle(from: Vec3, to: Vec3, axis: Vec3) -> f32 {
    let from = from.reject_from_normalized(axis);
    let to = to.reject_from_normalized(axis);
    from.cross(to).dot(axis).atan2(from.dot(to))
}

impl RestCorrection {
    /// Detects the rest pose and computes the correction, as the map's
    /// `TPoseSource` says (see the module header).
    #[must_use]
    pub fn compute(skeleton: &Skeleton, map: &BoneMap) -> Self {
        let mut problems = Vec::new();
        let mut undirected = Vec::new();
        let world = skeleton.rest_world();
        let pos = |b: HumanBone| map.joint(b).map(|j| Vec3::from(world[j].translation));
        let side = |l: B, r: B| Some(pos(l)? - pos(r)?).filter(|v| v.length() > COINCIDENT);
        let leg_left = side(B::LeftUpperLeg, B::RightUpperLeg);
        let arm_left = side(B::LeftUpperArm, B::RightUpperArm);
        let left = leg_left.or(arm_left);
        let source = map.t_pose();
        let facing = match (source, left.and_then(facing_from_left)) {
            (TPoseSource::Declared { half_turn: true }, _) => {
                Quat::from_rotation_y(std::f32::consts::PI)
            }
            (TPoseSource::Declared { half_turn: false }, _) => Quat::IDENTITY,
            (TPoseSource::Measured, Some(f)) => f,
            (TPoseSource::Measured, None) => {
                problems.push(
                    "cannot tell which way the rig faces (left and right coincide); assumed +Z"
                        .into(),
                );
                Quat::IDENTITY
            }
        };
        let declared = matches!(source, TPoseSource::Declared { .. });
        let crossed = crossed_pair(facing, leg_left, arm_left);
        if let Some((l, r, pair)) = crossed {
            let name = |b: HumanBone| {
                map.joint(b)
                    .map_or("", |j| skeleton.joints()[j].name.as_str())
            };
            problems.push(format!(
                "the map crosses the {pair}: {l} is `{}`, on the model's right, and {r} is `{}`, on \
                 its left (the {} and the facing put the left on the other side), so each is driven \
                 by the other's motion",
                name(l),
                name(r),
                if pair == "legs" { "arms" } else { "legs" }
            ));
        }
        if let TPoseSource::Declared { half_turn } = source
            && crossed.is_none()
            && let Some(off) = left.and_then(|l| facing_against_declared(facing, l))
        {
            let (version, front) = if half_turn {
                ("0.x", "-Z")
            } else {
                ("1.0", "+Z")
            };
            problems.push(format!(
                "the model does not face {front} as VRM {version} requires: turned as every VRM \
                 player turns it, its left side points {off:.0}° from +X, so it stands facing \
                 away and its limbs are driven from that turned-round rest"
            ));
        }

        let joints = skeleton.joints();
        let mut local = vec![Quat::IDENTITY; joints.len()];
        // Corrected world rotation and affine of every joint, facing included.
        let mut rotation: Vec<Quat> = Vec::with_capacity(joints.len());
        let mut affine: Vec<Affine3A> = Vec::with_capacity(joints.len());
        let mut bones = Vec::new();
        let root = Affine3A::from_quat(facing);
        for (j, joint) in joints.iter().enumerate() {
            let (parent_rotation, parent_affine) = match joint.parent {
                Some(p) => (rotation[p], affine[p]),
                None => (facing, root),
            };
            let uncorrected = parent_rotation * joint.rest.rotation;
            let mut swing = Quat::IDENTITY;
            if let Some(bone) = map.bone_of(j)
                && let Some(rule) = rule(bone)
            {
                match tip(skeleton, map, &world, bone, j) {
                    // Only a correction needs the direction.
                    None if declared => {}
                    None => undirected.push((bone, j)),
                    Some(tip_world) => {
                        let here = parent_affine
                            * Affine3A::from_scale_rotation_translation(
                                joint.rest.scale,
                                joint.rest.rotation,
                                joint.rest.translation,
                            );
                        // The tip in the joint's own frame does not change when the
                        // joint or its ancestors are corrected.
                        let direction = |tip_world: Vec3| {
                            let tip_local = world[j].inverse().transform_point3(tip_world);
                            here.transform_vector3(tip_local).normalize()
                        };
                        let mut d = direction(tip_world);
                        // A foot whose next joint lies behind it (a heel joint that
                        // carries the forefoot's end site) points where its subtree
                        // reaches farthest along the ground (`forefoot`).
                        if matches!(rule, Rule::YawToFront)
                            && d.z < 0.0
                            && let Some(ahead) = forefoot(skeleton, &world, j)
                                .map(direction)
                                .filter(|a| a.z > 0.0)
                        {
                            d = ahead;
                        }
                        swing = match rule {
                            Rule::Along(target) => shortest_arc(d, target),
                            Rule::YawToFront => {
                                let flat = Vec3::new(d.x, 0.0, d.z);
                                if flat.length() < LEAST_FLAT {
                                    Quat::IDENTITY
                                } else {
                                    Quat::from_rotation_y(signed_angle(flat, Vec3::Z, Vec3::Y))
                                }
                            }
                        };
                        if matches!(bone, B::LeftHand | B::RightHand)
                            && let Rule::Along(axis) = rule
                            && let Some(roll) = palm_roll(map, &world, j, swing * uncorrected, axis)
                        {
                            swing = roll * swing;
                        }
                        bones.push(BoneCorrection {
                            bone,
                            rest_direction: d,
                            angle_deg: swing.angle_between(Quat::IDENTITY).to_degrees(),
                        });
                        if declared {
                            // Measured, not applied: the file's rest is the T-pose.
                            swing = Quat::IDENTITY;
                        }
                    }
                }
            }
            let corrected = (swing * uncorrected).normalize();
            local[j] = (uncorrected.conjugate() * corrected).normalize();
            rotation.push(corrected);
            affine.push(
                parent_affine
                    * Affine3A::from_scale_rotation_translation(
                        joint.rest.scale,
                        joint.rest.rotation * local[j],
                        joint.rest.translation,
                    ),
            );
        }

        let held = map
            .detached_bones(skeleton)
            .into_iter()
            .map(|detached| HeldBone {
                detached,
                offset: world[detached.anchor]
                    .inverse()
                    .transform_point3(Vec3::from(world[detached.joint].translation)),
            })
            .collect();
        let (pose, arm_angle_deg) = classify(&bones);
        Self {
            source,
            facing,
            local,
            pose,
            arm_angle_deg,
            bones,
            problems,
            undirected,
            held,
        }
    }

    /// The T-pose local rotation of every joint: rest local · correction.
    #[must_use]
    pub fn t_pose_locals(&self, skeleton: &Skeleton) -> Vec<Quat> {
        skeleton
            .joints()
            .iter()
            .zip(&self.local)
            .map(|(j, c)| (j.rest.rotation * *c).normalize())
            .collect()
    }

    /// Model-space transforms of every joint in the T-pose, facing turn included; a
    /// detached bone where its anchor holds it (`held`).
    #[must_use]
    pub fn t_pose_world(&self, skeleton: &Skeleton) -> Vec<Affine3A> {
        let turn = Affine3A::from_quat(self.facing);
        let locals = self.t_pose_locals(skeleton);
        let mut translations = skeleton.rest_translations();
        place_held(skeleton, &locals, &mut translations, &self.held)
            .into_iter()
            .map(|w| turn * w)
            .collect()
    }

    /// The correction of one humanoid bone, if it was corrected.
    #[must_use]
    pub fn bone(&self, bone: HumanBone) -> Option<&BoneCorrection> {
        self.bones.iter().find(|c| c.bone == bone)
    }
}

/// The roll about the hand's T-pose direction `axis` that puts the palm down: the
/// index side of the hand toward +Z (the front), judged from the finger bases.
fn palm_roll(
    map: &BoneMap,
    world: &[Affine3A],
    hand: usize,
    swung: Quat,
    axis: Vec3,
) -> Option<Quat> {
    let left = axis.x > 0.0;
    let (index, little) = if left {
        (
            B::LeftIndexProximal,
            [B::LeftLittleProximal, B::LeftRingProximal],
        )
    } else {
        (
            B::RightIndexProximal,
            [B::RightLittleProximal, B::RightRingProximal],
        )
    };
    let index = map.joint(index)?;
    let little = little.iter().find_map(|b| map.joint(*b))?;
    let hand_rotation = world[hand].to_scale_rotation_translation().1;
    let side_world = Vec3::from(world[index].translation - world[little].translation);
    let side_local = hand_rotation.conjugate() * side_world;
    let side = swung * side_local;
    if side.reject_from_normalized(axis).length() < COINCIDENT {
        return None;
    }
    Some(Quat::from_axis_angle(
        axis,
        signed_angle(side, Vec3::Z, axis),
    ))
}

/// Classifies the rest pose from the upper arms' and legs' rest directions.
fn classify(bones: &[BoneCorrection]) -> (RestPose, f32) {
    let dir = |b: HumanBone| bones.iter().find(|c| c.bone == b).map(|c| c.rest_direction);
    let arms: Vec<Vec3> = [B::LeftUpperArm, B::RightUpperArm]
        .iter()
        .filter_map(|b| dir(*b))
        .collect();
    if arms.is_empty() {
        return (RestPose::Other, f32::NAN);
    }
    let below: f32 = arms
        .iter()
        .map(|d| (-d.y).clamp(-1.0, 1.0).asin().to_degrees())
        .sum::<f32>()
        / arms.len() as f32;
    let forward = arms.iter().any(|d| d.z.abs() > 0.5);
    let legs_down = [B::LeftUpperLeg, B::RightUpperLeg]
        .iter()
        .filter_map(|b| dir(*b))
        .all(|d| d.angle_between(Vec3::NEG_Y).to_degrees() < 35.0);
    let pose = if forward || !legs_down || below < -12.0 {
        RestPose::Other
    } else if below <= 12.0 {
        RestPose::TPose
    } else if below <= 60.0 {
        RestPose::APose
    } else {
        RestPose::ArmsDown
    };
    (pose, below)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::{Joint, NamedBoneMap, Transform};

    /// A T-posed body whose left hand points 7.125° forward of the arm (its middle
    /// finger 1 cm ahead over 8 cm), as the Blender-made VRMs' hands do, facing +Z
    /// (`turn` 1) or half a turn round, facing -Z (`turn` -1); mapped with `t_pose`.
    fn body_with_a_turned_hand(turn: f32, t_pose: TPoseSource) -> (Skeleton, BoneMap) {
        let joints = [
            ("hips", None, Vec3::new(0.0, 1.0, 0.0)),
            ("spine", Some(0), Vec3::new(0.0, 0.1, 0.0)),
            ("head", Some(1), Vec3::new(0.0, 0.5, 0.0)),
            ("leftUpperArm", Some(1), Vec3::new(0.2 * turn, 0.4, 0.0)),
            ("leftLowerArm", Some(3), Vec3::new(0.3 * turn, 0.0, 0.0)),
            ("leftHand", Some(4), Vec3::new(0.25 * turn, 0.0, 0.0)),
            (
                "leftMiddleProximal",
                Some(5),
                Vec3::new(0.08 * turn, 0.0, 0.01 * turn),
            ),
            ("rightUpperArm", Some(1), Vec3::new(-0.2 * turn, 0.4, 0.0)),
            ("rightLowerArm", Some(7), Vec3::new(-0.3 * turn, 0.0, 0.0)),
            ("rightHand", Some(8), Vec3::new(-0.25 * turn, 0.0, 0.0)),
            ("leftUpperLeg", Some(0), Vec3::new(0.1 * turn, -0.05, 0.0)),
            ("leftLowerLeg", Some(10), Vec3::new(0.0, -0.45, 0.0)),
            ("leftFoot", Some(11), Vec3::new(0.0, -0.45, 0.0)),
            ("rightUpperLeg", Some(0), Vec3::new(-0.1 * turn, -0.05, 0.0)),
            ("rightLowerLeg", Some(13), Vec3::new(0.0, -0.45, 0.0)),
            ("rightFoot", Some(14), Vec3::new(0.0, -0.45, 0.0)),
        ];
        let skeleton = Skeleton::new(
            joints
                .iter()
                .map(|&(name, parent, at)| Joint {
                    name: name.into(),
                    parent,
                    rest: Transform::from_translation(at),
                    end: None,
                })
                .collect(),
        )
        .unwrap();
        let named = NamedBoneMap {
            bones: joints
                .iter()
                .map(|&(name, _, _)| (name.parse().unwrap(), name.to_owned()))
                .collect(),
            t_pose,
        };
        let map = BoneMap::resolve(&named, &skeleton).unwrap();
        (skeleton, map)
    }

    /// Children of one joint of each side: (name without the side, offset from
    /// the joint, end site), for the side `1.0` (left) or `-1.0` (right).
    type Kids = Vec<(&'static str, Vec3, Option<Vec3>)>;

    /// A T-posed body facing +Z, mapped by its joint names (measured), each side's
    /// hand and foot with the children `hand_kids` and `foot_kids` give.
    fn t_posed_body(
        hand_kids: impl Fn(f32) -> Kids,
        foot_kids: impl Fn(f32) -> Kids,
    ) -> (Skeleton, BoneMap) {
        let v = Vec3::new;
        let mut joints: Vec<(String, Option<usize>, Vec3, Option<Vec3>)> = vec![
            ("hips".into(), None, v(0.0, 1.0, 0.0), None),
            ("spine".into(), Some(0), v(0.0, 0.1, 0.0), None),
            ("head".into(), Some(1), v(0.0, 0.5, 0.0), None),
        ];
        for (side, name) in [(1.0f32, "left"), (-1.0, "right")] {
            let mut add = |n: &str, parent: usize, at: Vec3, end: Option<Vec3>| {
                joints.push((format!("{name}{n}"), Some(parent), at, end));
                joints.len() - 1
            };
            let arm = add("UpperArm", 1, v(0.2 * side, 0.4, 0.0), None);
            let lower = add("LowerArm", arm, v(0.3 * side, 0.0, 0.0), None);
            let hand = add("Hand", lower, v(0.25 * side, 0.0, 0.0), None);
            for (n, at, end) in hand_kids(side) {
                add(n, hand, at, end);
            }
            let leg = add("UpperLeg", 0, v(0.1 * side, -0.05, 0.0), None);
            let shin = add("LowerLeg", leg, v(0.0, -0.45, 0.0), None);
            let foot = add("Foot", shin, v(0.0, -0.45, 0.0), None);
            for (n, at, end) in foot_kids(side) {
                add(n, foot, at, end);
            }
        }
        let skeleton = Skeleton::new(
            joints
                .iter()
                .map(|(name, parent, at, end)| Joint {
                    name: name.clone(),
                    parent: *parent,
                    rest: Transform::from_translation(*at),
                    end: *end,
                })
                .collect(),
        )
        .unwrap();
        let named = NamedBoneMap {
            bones: joints
                .iter()
                .filter_map(|(n, ..)| Some((n.parse().ok()?, n.clone())))
                .collect(),
            t_pose: TPoseSource::Measured,
        };
        let map = BoneMap::resolve(&named, &skeleton).unwrap();
        (skeleton, map)
    }

    /// How far the correction turns `bones`, degrees, each.
    fn turns(skeleton: &Skeleton, map: &BoneMap, bones: [HumanBone; 2]) -> [f32; 2] {
        let c = RestCorrection::compute(skeleton, map);
        bones.map(|b| {
            c.local[map.joint(b).unwrap()]
                .angle_between(Quat::IDENTITY)
                .to_degrees()
        })
    }

    #[test]
    fn a_hand_with_a_thumb_at_the_wrist_points_along_its_wrist_end() {
        // No finger mapped: a hand's end is its child along the hand, not the
        // thumb that starts at the wrist and ends ahead of it (both as deep).
        let (skeleton, map) = t_posed_body(
            |side| {
                vec![
                    ("thumb", Vec3::ZERO, Some(Vec3::new(0.0, 0.0, 0.1))),
                    ("handEnd", Vec3::new(0.1 * side, 0.0, 0.0), None),
                ]
            },
            |_| vec![],
        );
        let turned = turns(&skeleton, &map, [B::LeftHand, B::RightHand]);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
    }

    #[test]
    fn a_hand_points_along_its_own_end_not_a_prop_beside_it() {
        // Xsens MVN's right wrist: two prop leaves off to the side and back (each with
        // an end site 0.8 m away) written before the wrist's own end, which the BVH
        // reader makes a leaf joint since the figure branches there. No finger is
        // mapped: the hand points along its end, not to the first prop (32.6° off).
        let (skeleton, map) = t_posed_body(
            |side| {
                let prop = Vec3::new(0.036 * side, -0.01, -0.02);
                let far = Some(Vec3::new(0.76 * side, -0.31, 0.24));
                vec![
                    ("Prop1", prop, far),
                    ("Prop2", prop, far),
                    ("Hand_Site", Vec3::new(0.187 * side, 0.0, 0.0), None),
                ]
            },
            |_| vec![],
        );
        let turned = turns(&skeleton, &map, [B::LeftHand, B::RightHand]);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
    }

    #[test]
    fn a_heel_joint_carrying_the_forefoot_leaves_the_foot_pointing_ahead() {
        // bvh2json's rig: each foot's only child is `FootHeel`, 9 cm below and 4 cm
        // behind the ankle, its end site 15 cm ahead of it. The foot points to the
        // forefoot, not back along the heel: no half turn about +Y.
        let (skeleton, map) = t_posed_body(
            |_| vec![],
            |_| {
                let end = Vec3::new(0.0, 0.0, 0.152);
                vec![("Toes", Vec3::new(0.0, -0.089, -0.038), Some(end))]
            },
        );
        let feet = turns(&skeleton, &map, [B::LeftFoot, B::RightFoot]);
        assert!(feet.iter().all(|&t| t < 0.01), "{feet:?}");
        let toes = turns(&skeleton, &map, [B::LeftToes, B::RightToes]);
        assert!(toes.iter().all(|&t| t < 0.01), "{toes:?}");
    }

    #[test]
    fn a_placeholder_end_site_is_no_direction_and_a_real_one_is() {
        // Some writers put `OFFSET 0 0 0.1` (1 mm up in a Z-up file) on every leaf: a
        // fingertip's end that short says nothing, so the finger is not turned 90°.
        let (skeleton, map) = middle_fingers_ending_at(|_| Vec3::new(0.0, 0.001, 0.0));
        let fingers = [B::LeftMiddleProximal, B::RightMiddleProximal];
        let turned = turns(&skeleton, &map, fingers);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // An end a tenth of the bone long and more is the bone's direction.
        let (skeleton, map) = middle_fingers_ending_at(|side| Vec3::new(0.03 * side, 0.0, 0.003));
        let turned = turns(&skeleton, &map, fingers);
        let expected = 0.1f32.atan().to_degrees();
        assert!(
            turned.iter().all(|&t| (t - expected).abs() < 0.01),
            "{turned:?}"
        );
    }

    #[test]
    fn one_end_offset_across_both_feet_is_no_direction_and_mirrored_ends_are() {
        // A writer closing both toes with `OFFSET -0.1 0 0` (toward the right) points
        // the left toes inward and the right ones outward: no mirror images, so the
        // toes are not turned 90° about +Y, either of them.
        let toes_ending_at = |end: fn(f32) -> Vec3| {
            t_posed_body(
                |_| vec![],
                move |side| vec![("Toes", Vec3::new(0.0, -0.05, 0.1), Some(end(side)))],
            )
        };
        let toes = [B::LeftToes, B::RightToes];
        let (skeleton, map) = toes_ending_at(|_| Vec3::new(-0.1, 0.0, 0.0));
        let turned = turns(&skeleton, &map, toes);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // Ends that mirror each other (toes turned in by half their length) are read.
        let (skeleton, map) = toes_ending_at(|side| Vec3::new(-0.05 * side, 0.0, 0.1));
        let turned = turns(&skeleton, &map, toes);
        let expected = 0.5f32.atan().to_degrees();
        assert!(
            turned.iter().all(|&t| (t - expected).abs() < 0.01),
            "{turned:?}"
        );
    }

    /// `t_posed_body` with a middle finger on each hand ending at `end(side)`
    /// (side 1 left, -1 right) from its joint.
    fn middle_fingers_ending_at(end: impl Fn(f32) -> Vec3) -> (Skeleton, BoneMap) {
        t_posed_body(
            |side| {
                vec![(
                    "MiddleProximal",
                    Vec3::new(0.08 * side, 0.0, 0.0),
                    Some(end(side)),
                )]
            },
            |_| vec![],
        )
    }

    /// How far each middle finger of `middle_fingers_ending_at` turns when a leaf
    /// joint named by `name` (from the finger's name) replaces its end site, `up` along
    /// the model's +Y.
    fn leaf_turns(name: impl Fn(&str) -> String, up: f32) -> [f32; 2] {
        leaf_turns_in_frame(name, up, Quat::IDENTITY)
    }

    /// `leaf_turns` with each finger joint's local frame turned by `frame` (the leaf
    /// turned back: every joint stays where it was).
    fn leaf_turns_in_frame(name: impl Fn(&str) -> String, up: f32, frame: Quat) -> [f32; 2] {
        let (skeleton, map) = middle_fingers_ending_at(|_| Vec3::ZERO);
        let fingers = [B::LeftMiddleProximal, B::RightMiddleProximal];
        let mut joints = skeleton.joints().to_vec();
        for bone in fingers {
            let finger = map.joint(bone).unwrap();
            joints[finger].end = None;
            joints[finger].rest.rotation = frame;
            joints.push(Joint {
                name: name(&joints[finger].name),
                parent: Some(finger),
                rest: Transform::from_translation(frame.inverse() * Vec3::new(0.0, up, 0.0)),
                end: None,
            });
        }
        let skeleton = Skeleton::new(joints).unwrap();
        turns(&skeleton, &map, fingers)
    }

    #[test]
    fn a_leaf_nub_along_another_local_axis_is_no_direction() {
        // Blender's FBX import on Unreal's mannequin: each fingertip's `_end` joint is
        // as long as the finger bone and lies along its local +Y while the bone runs
        // along X; the fingertip keeps its rest turn rather than turned 90° up.
        let turned = leaf_turns(|finger| format!("{finger}_end"), 0.08);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
    }

    #[test]
    fn a_leaf_nub_off_its_bone_is_no_direction_whatever_the_joints_frames() {
        // The same nubs with each fingertip's local frame turned (the nub turned back,
        // where it was): no local axis says which way the nub lies, but it is as long
        // as the finger bone and at right angles to it, and the fingertip keeps its
        // rest turn all the same. Read by its local axes, it was turned 90° up.
        let frame = Quat::from_euler(glam::EulerRot::XYZ, 0.4, -0.7, 1.1);
        let turned = leaf_turns_in_frame(|finger| format!("{finger}_end"), 0.08, frame);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // As long as the bone and 14° off it, it is the bone's end: the finger turns
        // those 14°, whatever its frame.
        let (skeleton, map) = middle_fingers_ending_at(|_| Vec3::ZERO);
        let fingers = [B::LeftMiddleProximal, B::RightMiddleProximal];
        let mut joints = skeleton.joints().to_vec();
        for bone in fingers {
            let finger = map.joint(bone).unwrap();
            let bent = 14f32.to_radians();
            let x = joints[finger].rest.translation.x;
            let along = Vec3::new(x * bent.cos(), x.abs() * bent.sin(), 0.0);
            joints[finger].end = None;
            joints[finger].rest.rotation = frame;
            joints.push(Joint {
                name: format!("{}_end", joints[finger].name),
                parent: Some(finger),
                rest: Transform::from_translation(frame.inverse() * along),
                end: None,
            });
        }
        let skeleton = Skeleton::new(joints).unwrap();
        let turned = turns(&skeleton, &map, fingers);
        assert!(turned.iter().all(|&t| (t - 14.0).abs() < 0.1), "{turned:?}");
    }

    #[test]
    fn a_leaf_joint_as_short_as_a_placeholder_end_site_is_no_direction() {
        // three.js writes a BVH's End Sites as leaf nodes `ENDSITE` a millimetre up
        // from the fingertip: the fingertip keeps its rest turn rather than being
        // turned 90° up.
        let turned = leaf_turns(|finger| format!("ENDSITE#{finger}"), 0.001);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
    }

    #[test]
    fn an_end_site_folded_back_onto_its_bone_is_no_direction() {
        // A Rokoko-style writer ends each distal phalanx with the bone turned back
        // onto its knuckle (`OFFSET -2.77 0 0` after a joint at `+2.77 0 0`): the
        // fingertip keeps its rest turn rather than being turned half a turn.
        let (skeleton, map) = middle_fingers_ending_at(|side| Vec3::new(-0.03 * side, 0.0, 0.0));
        let fingers = [B::LeftMiddleProximal, B::RightMiddleProximal];
        let turned = turns(&skeleton, &map, fingers);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // Toes whose end points back behind the ball of the foot, 154° from the
        // bone into it, keep their rest turn too.
        let (skeleton, map) = t_posed_body(
            |_| vec![],
            |_| {
                let end = Vec3::new(0.0, 0.0, -0.146);
                vec![("Toes", Vec3::new(0.0, -0.062, 0.132), Some(end))]
            },
        );
        let turned = turns(&skeleton, &map, [B::LeftToes, B::RightToes]);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // A fingertip bent 120° back from its bone is still its direction.
        let (skeleton, map) =
            middle_fingers_ending_at(|side| Vec3::new(-0.015 * side, -0.026, 0.0));
        let turned = turns(&skeleton, &map, fingers);
        assert!(
            turned.iter().all(|&t| (t - 120.0).abs() < 0.05),
            "{turned:?}"
        );
    }

    #[test]
    fn one_end_site_offset_on_every_leaf_is_no_direction() {
        // A marker solver closes the head, both hands and both feet with `0 -5 0`:
        // hands held out keep their rest turn rather than being bent 90° down.
        let hands = [B::LeftHand, B::RightHand];
        let with_ends = |head: Vec3| {
            let (skeleton, _) = t_posed_body(|_| vec![], |_| vec![]);
            let mut joints = skeleton.joints().to_vec();
            for joint in &mut joints {
                let leaf = ["Hand", "Foot"].iter().any(|n| joint.name.ends_with(n));
                if leaf {
                    joint.end = Some(Vec3::new(0.0, -0.05, 0.0));
                } else if joint.name == "head" {
                    joint.end = Some(head);
                }
            }
            let skeleton = Skeleton::new(joints).unwrap();
            let named = NamedBoneMap {
                bones: skeleton
                    .joints()
                    .iter()
                    .filter_map(|j| Some((j.name.parse().ok()?, j.name.clone())))
                    .collect(),
                t_pose: TPoseSource::Measured,
            };
            let map = BoneMap::resolve(&named, &skeleton).unwrap();
            turns(&skeleton, &map, hands)
        };
        let turned = with_ends(Vec3::new(0.0, -0.05, 0.0));
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // With the head ending above it, the hands' ends are their own: bent down.
        let turned = with_ends(Vec3::new(0.0, 0.1, 0.0));
        assert!(
            turned.iter().all(|&t| (t - 90.0).abs() < 0.05),
            "{turned:?}"
        );
    }

    #[test]
    fn toes_whose_end_points_up_are_not_turned_about_the_vertical() {
        // SMPL exporters end every leaf with a nub along +Y: the toes' end says
        // nothing of where they point, and a slight lean of it is no heading.
        let (skeleton, map) = t_posed_body(
            |_| vec![],
            |side| {
                let end = Vec3::new(0.01 * side, 0.14, -0.02);
                vec![("Toes", Vec3::new(0.0, -0.05, 0.1), Some(end))]
            },
        );
        let turned = turns(&skeleton, &map, [B::LeftToes, B::RightToes]);
        assert!(turned.iter().all(|&t| t < 0.01), "{turned:?}");
        // Toes pointing ahead and out are turned ahead.
        let (skeleton, map) = t_posed_body(
            |_| vec![],
            |side| {
                let end = Vec3::new(0.05 * side, 0.0, 0.05);
                vec![("Toes", Vec3::new(0.0, -0.05, 0.1), Some(end))]
            },
        );
        let turned = turns(&skeleton, &map, [B::LeftToes, B::RightToes]);
        assert!(
            turned.iter().all(|&t| (t - 45.0).abs() < 0.01),
            "{turned:?}"
        );
    }

    #[test]
    fn a_measured_t_pose_turns_the_hand_onto_the_arm() {
        let (skeleton, map) = body_with_a_turned_hand(1.0, TPoseSource::Measured);
        let c = RestCorrection::compute(&skeleton, &map);
        let hand = map.joint(B::LeftHand).unwrap();
        let turned = c.local[hand].angle_between(Quat::IDENTITY).to_degrees();
        assert!((turned - 7.125).abs() < 0.01, "{turned}°");
        assert!(c.facing.abs_diff_eq(Quat::IDENTITY, 1e-6));
    }

    #[test]
    fn a_declared_t_pose_turns_nothing_but_the_facing_and_is_still_measured() {
        for (turn, half_turn) in [(1.0, false), (-1.0, true)] {
            let (skeleton, map) =
                body_with_a_turned_hand(turn, TPoseSource::Declared { half_turn });
            let c = RestCorrection::compute(&skeleton, &map);
            assert_eq!(c.source, TPoseSource::Declared { half_turn });
            assert!(
                c.local.iter().all(|q| *q == Quat::IDENTITY),
                "{:?}",
                c.local
            );
            let facing = if half_turn {
                Quat::from_rotation_y(std::f32::consts::PI)
            } else {
                Quat::IDENTITY
            };
            assert_eq!(c.facing, facing);
            // Its rest is measured all the same, for `inspect`.
            assert_eq!(c.pose, RestPose::TPose);
            let off = c.bone(B::LeftHand).unwrap().angle_deg;
            assert!((off - 7.125).abs() < 0.01, "{off}°");
            assert!(c.undirected.is_empty() && c.problems.is_empty());
            // The T-pose is the rest, turned: the hand stays 7.125° forward.
            let world = c.t_pose_world(&skeleton);
            let at = |b: HumanBone| Vec3::from(world[map.joint(b).unwrap()].translation);
            let hand = (at(B::LeftMiddleProximal) - at(B::LeftHand)).normalize();
            let want = Vec3::new(0.08, 0.0, 0.01).normalize();
            assert!(hand.abs_diff_eq(want, 1e-5), "{hand}");
        }
    }

    #[test]
    fn a_declared_rest_facing_against_its_vrm_version_is_a_problem_and_still_turned() {
        // A VRM 0.x file facing +Z, a VRM 1.0 file facing -Z.
        for (turn, half_turn) in [(1.0, true), (-1.0, false)] {
            let (skeleton, map) =
                body_with_a_turned_hand(turn, TPoseSource::Declared { half_turn });
            let c = RestCorrection::compute(&skeleton, &map);
            // Turned as VRM players turn it, nothing else: the map's rest is kept.
            let facing = if half_turn {
                Quat::from_rotation_y(std::f32::consts::PI)
            } else {
                Quat::IDENTITY
            };
            assert_eq!(c.facing, facing);
            assert!(c.local.iter().all(|q| *q == Quat::IDENTITY));
            assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
            let version = if half_turn { "VRM 0.x" } else { "VRM 1.0" };
            assert!(c.problems[0].contains(version), "{}", c.problems[0]);
            assert!(c.problems[0].contains("180°"), "{}", c.problems[0]);
        }
    }

    #[test]
    fn a_declared_map_crossing_the_legs_is_named_not_taken_for_a_wrong_facing() {
        // A VRM 0.x body facing -Z as declared, its arms right, its legs declared
        // crossed (`leftUpperLeg` on the right leg's joint).
        let (skeleton, _) =
            body_with_a_turned_hand(-1.0, TPoseSource::Declared { half_turn: true });
        let swap = |n: &str| {
            n.replace("left", "LEFT")
                .replace("right", "left")
                .replace("LEFT", "right")
        };
        let named = NamedBoneMap {
            bones: skeleton
                .joints()
                .iter()
                .map(|j| {
                    let joint = if j.name.contains("Leg") || j.name.contains("Foot") {
                        swap(&j.name)
                    } else {
                        j.name.clone()
                    };
                    (j.name.parse().unwrap(), joint)
                })
                .collect(),
            t_pose: TPoseSource::Declared { half_turn: true },
        };
        let map = BoneMap::resolve(&named, &skeleton).unwrap();
        let c = RestCorrection::compute(&skeleton, &map);
        assert_eq!(c.facing, Quat::from_rotation_y(std::f32::consts::PI));
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(
            c.problems[0].starts_with(
                "the map crosses the legs: leftUpperLeg is `rightUpperLeg`, on the model's right"
            ),
            "{}",
            c.problems[0]
        );
    }

    #[test]
    fn shortest_arc_is_exact_for_tiny_and_opposite_angles() {
        let tiny = Quat::from_rotation_z(1e-5) * Vec3::NEG_Y;
        let q = shortest_arc(tiny, Vec3::NEG_Y);
        assert!((q * tiny).abs_diff_eq(Vec3::NEG_Y, 1e-7));
        // sin(half angle) of a 1e-5 rad turn; glam's from_rotation_arc gives 0 here.
        assert!(Vec3::new(q.x, q.y, q.z).length() > 4.9e-6);
        let q = shortest_arc(Vec3::X, Vec3::NEG_X);
        assert!((q * Vec3::X).abs_diff_eq(Vec3::NEG_X, 1e-6));
    }

    #[test]
    fn facing_turns_any_left_direction_onto_plus_x() {
        for degrees in [0.0f32, 37.0, 90.0, 180.0, -135.0] {
            let left = Quat::from_rotation_y(degrees.to_radians()) * Vec3::X;
            let facing = facing_from_left(left * 0.2 + Vec3::Y * 0.05).unwrap();
            assert!((facing * left).abs_diff_eq(Vec3::X, 1e-5), "{degrees}");
            // A turn about +Y only: up stays up.
            assert!((facing * Vec3::Y).abs_diff_eq(Vec3::Y, 1e-6));
        }
        assert_eq!(facing_from_left(Vec3::Y), None);
    }

    #[test]
    fn classify_reads_the_upper_arm_angle() {
        let arm = |bone, degrees: f32| BoneCorrection {
            bone,
            rest_direction: Quat::from_rotation_z(-degrees.to_radians()) * Vec3::X,
            angle_deg: degrees,
        };
        let legs = [
            BoneCorrection {
                bone: B::LeftUpperLeg,
                rest_direction: Vec3::NEG_Y,
                angle_deg: 0.0,
            },
            BoneCorrection {
                bone: B::RightUpperLeg,
                rest_direction: Vec3::NEG_Y,
                angle_deg: 0.0,
            },
        ];
        for (degrees, expected) in [
            (0.0, RestPose::TPose),
            (30.0, RestPose::APose),
            (45.0, RestPose::APose),
            (85.0, RestPose::ArmsDown),
            (-40.0, RestPose::Other),
        ] {
            let mut bones = vec![arm(B::LeftUpperArm, degrees)];
            bones.extend(legs);
            assert_eq!(classify(&bones).0, expected, "{degrees}");
        }
    }
}
