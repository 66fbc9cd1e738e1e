//! The mannequin's body: a piece of surface on every humanoid bone, placed from the
//! bones' T-pose positions. Limbs, neck, spine and fingers are tapered capsules from
//! their joint to the next one, blended with the bones across both joints; the
//! pelvis, head, chin, hands, feet and toes are rigid pieces shaped by hand; the eyes
//! are an eyeball and an iris on each eye bone, so that lookAt shows.
//!
//! Both sides are built from their own bones' positions; only the hand-made offsets
//! change sign. The soles stand on y = 0 whatever the ankle height.

use glam::Vec3;

use crate::formats::vrma::VrmaRest;
use crate::humanoid::{HumanBone, HumanBone as B};

use super::material::Material;
use super::shape::{Detail, Shape};
use super::skin::Binding;

/// Torso, limbs and head.
pub const COARSE: Detail = Detail {
    segments: 16,
    cap_rings: 5,
};
/// Fingers, eyes and the face's small parts.
pub const FINE: Detail = Detail {
    segments: 10,
    cap_rings: 3,
};
/// The head.
const HEAD: Detail = Detail {
    segments: 24,
    cap_rings: 9,
};

/// One piece of the body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    pub shape: Shape,
    pub binding: Binding,
    pub detail: Detail,
    pub material: Material,
}

impl Part {
    fn new(shape: Shape, binding: Binding, detail: Detail) -> Self {
        Self {
            shape,
            binding,
            detail,
            material: Material::Body,
        }
    }
}

/// Every piece of the body on the T-pose `rest`.
#[must_use]
pub fn parts(rest: &VrmaRest) -> Vec<Part> {
    let mut parts = torso(rest);
    for side in [Side::Left, Side::Right] {
        parts.extend(arm(rest, side));
        parts.extend(hand(rest, side));
        parts.extend(leg(rest, side));
        parts.extend(eye(rest, side));
    }
    parts
}

/// Which side a limb is on: the sign of its hand-made x offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    /// The side's bone for a left bone.
    #[must_use]
    pub fn bone(self, left: HumanBone) -> HumanBone {
        match self {
            Side::Left => left,
            Side::Right => left.mirrored(),
        }
    }

    /// A left-side offset on this side.
    #[must_use]
    pub fn offset(self, x: f32, y: f32, z: f32) -> Vec3 {
        match self {
            Side::Left => Vec3::new(x, y, z),
            Side::Right => Vec3::new(-x, y, z),
        }
    }
}

/// A capsule from `bone`'s joint to `to`'s, blended with the bones across both.
fn segment(
    rest: &VrmaRest,
    bone: HumanBone,
    to: HumanBone,
    radii: (f32, f32),
    detail: Detail,
) -> Part {
    let start = rest.position(bone);
    let shape = Shape::capsule(start, rest.position(to), radii.0, radii.1);
    let parent = bone.parent().unwrap_or(bone);
    Part::new(shape, Binding::blended(bone, parent, Some(to)), detail)
}

fn torso(rest: &VrmaRest) -> Vec<Part> {
    let at = |bone| rest.position(bone);
    let pelvis = Shape::capsule(
        at(B::RightUpperLeg) + Vec3::new(0.015, 0.03, 0.0),
        at(B::LeftUpperLeg) + Vec3::new(-0.015, 0.03, 0.0),
        0.1,
        0.1,
    )
    .stretched(Vec3::Z, 0.85);
    let mut spine = segment(rest, B::Spine, B::Chest, (0.1, 0.105), COARSE);
    spine.shape = spine.shape.stretched(Vec3::X, 1.3);
    let mut chest = segment(rest, B::Chest, B::UpperChest, (0.105, 0.11), COARSE);
    chest.shape = chest.shape.stretched(Vec3::X, 1.35);
    // The upper chest ends below the neck, rounding into the shoulders.
    let upper_chest = Shape::capsule(
        at(B::UpperChest),
        at(B::Neck) - Vec3::new(0.0, 0.03, 0.0),
        0.11,
        0.09,
    )
    .stretched(Vec3::X, 1.5);
    let head = Shape::ellipsoid(
        at(B::Head) + Vec3::new(0.0, 0.105, 0.0),
        Vec3::new(0.08, 0.11, 0.095),
    );
    let chin = Shape::ellipsoid(
        at(B::Jaw) + Vec3::new(0.0, 0.03, -0.018),
        Vec3::new(0.036, 0.026, 0.033),
    );
    vec![
        Part::new(pelvis, Binding::rigid(B::Hips), COARSE),
        spine,
        chest,
        Part::new(
            upper_chest,
            Binding::blended(B::UpperChest, B::Chest, None),
            COARSE,
        ),
        segment(rest, B::Neck, B::Head, (0.045, 0.042), COARSE),
        Part::new(head, Binding::rigid(B::Head), HEAD),
        Part::new(chin, Binding::rigid(B::Jaw), COARSE),
    ]
}

fn arm(rest: &VrmaRest, side: Side) -> [Part; 3] {
    let b = |left| side.bone(left);
    [
        segment(
            rest,
            b(B::LeftShoulder),
            b(B::LeftUpperArm),
            (0.055, 0.05),
            COARSE,
        ),
        segment(
            rest,
            b(B::LeftUpperArm),
            b(B::LeftLowerArm),
            (0.048, 0.04),
            COARSE,
        ),
        segment(
            rest,
            b(B::LeftLowerArm),
            b(B::LeftHand),
            (0.04, 0.031),
            COARSE,
        ),
    ]
}

/// The palm and three pieces per finger, the last reaching past the distal joint.
fn hand(rest: &VrmaRest, side: Side) -> Vec<Part> {
    let b = |left| side.bone(left);
    let hand = b(B::LeftHand);
    let palm = Shape::ellipsoid(
        rest.position(hand) + side.offset(0.045, 0.0, -0.005),
        Vec3::new(0.045, 0.016, 0.04),
    );
    let mut parts = vec![Part::new(palm, Binding::rigid(hand), COARSE)];
    // (the finger's three bones, radius at the base, length of the fingertip)
    let fingers = [
        (
            [
                B::LeftThumbMetacarpal,
                B::LeftThumbProximal,
                B::LeftThumbDistal,
            ],
            0.012,
            0.022,
        ),
        (
            [
                B::LeftIndexProximal,
                B::LeftIndexIntermediate,
                B::LeftIndexDistal,
            ],
            0.009,
            0.022,
        ),
        (
            [
                B::LeftMiddleProximal,
                B::LeftMiddleIntermediate,
                B::LeftMiddleDistal,
            ],
            0.009,
            0.024,
        ),
        (
            [
                B::LeftRingProximal,
                B::LeftRingIntermediate,
                B::LeftRingDistal,
            ],
            0.0085,
            0.022,
        ),
        (
            [
                B::LeftLittleProximal,
                B::LeftLittleIntermediate,
                B::LeftLittleDistal,
            ],
            0.0075,
            0.018,
        ),
    ];
    for (bones, base, tip) in fingers {
        let [first, second, third] = bones.map(b);
        // Radii taper by a tenth per piece.
        let radius = |k: f32| base * (1.0 - 0.1 * k);
        parts.push(segment(
            rest,
            first,
            second,
            (radius(0.0), radius(1.0)),
            FINE,
        ));
        parts.push(segment(
            rest,
            second,
            third,
            (radius(1.0), radius(2.0)),
            FINE,
        ));
        let (from, at) = (rest.position(second), rest.position(third));
        let end = at + (at - from).normalize() * tip;
        let shape = Shape::capsule(at, end, radius(2.0), radius(3.0));
        parts.push(Part::new(
            shape,
            Binding::blended(third, second, None),
            FINE,
        ));
    }
    parts
}

/// Thigh and shin blended at the hip, knee and ankle; the foot and toes rigid, with
/// flat soles on the floor.
fn leg(rest: &VrmaRest, side: Side) -> [Part; 4] {
    let b = |left| side.bone(left);
    let (foot, toes) = (rest.position(b(B::LeftFoot)), rest.position(b(B::LeftToes)));
    const SOLE: f32 = 0.038;
    const TOE: f32 = 0.026;
    let foot_shape = Shape::capsule(
        Vec3::new(foot.x, SOLE, foot.z - 0.035),
        Vec3::new(foot.x, SOLE, toes.z - 0.005),
        SOLE,
        SOLE,
    )
    .stretched(Vec3::X, 1.15);
    let toes_shape = Shape::capsule(
        Vec3::new(toes.x, TOE, toes.z),
        Vec3::new(toes.x, TOE, toes.z + 0.035),
        TOE,
        TOE,
    )
    .stretched(Vec3::X, 1.6);
    [
        segment(
            rest,
            b(B::LeftUpperLeg),
            b(B::LeftLowerLeg),
            (0.075, 0.05),
            COARSE,
        ),
        segment(
            rest,
            b(B::LeftLowerLeg),
            b(B::LeftFoot),
            (0.05, 0.037),
            COARSE,
        ),
        Part::new(foot_shape, Binding::rigid(b(B::LeftFoot)), COARSE),
        Part::new(toes_shape, Binding::rigid(b(B::LeftToes)), FINE),
    ]
}

/// Radius of an eyeball, metres.
pub const EYE_RADIUS: f32 = 0.0125;

/// An eyeball centred on the eye bone and a dark iris on its front: both turn with
/// the eye.
fn eye(rest: &VrmaRest, side: Side) -> [Part; 2] {
    let bone = side.bone(B::LeftEye);
    let centre = rest.position(bone);
    let ball = Shape::ellipsoid(centre, Vec3::splat(EYE_RADIUS));
    let iris = Shape::ellipsoid(
        centre + Vec3::new(0.0, 0.0, 0.0115),
        Vec3::new(0.0055, 0.0055, 0.0025),
    );
    [
        Part {
            material: Material::EyeWhite,
            ..Part::new(ball, Binding::rigid(bone), FINE)
        },
        Part {
            material: Material::Iris,
            ..Part::new(iris, Binding::rigid(bone), FINE)
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::bone::ALL;

    #[test]
    fn every_bone_has_a_piece_of_its_own() {
        let rest = VrmaRest::standard(0.95);
        let parts = parts(&rest);
        for bone in ALL {
            assert!(
                parts.iter().any(|p| p.binding.bone == bone),
                "{bone} has no geometry"
            );
        }
    }

    #[test]
    fn the_lowest_point_is_on_the_floor() {
        let rest = VrmaRest::standard(0.95);
        let lowest = parts(&rest)
            .iter()
            .flat_map(|p| p.shape.tessellate(p.detail).positions)
            .map(|p| p.y)
            .fold(f32::MAX, f32::min);
        assert!(lowest.abs() < 1e-6, "{lowest}");
    }

    #[test]
    fn the_sides_mirror_each_other() {
        let rest = VrmaRest::standard(0.95);
        let parts = parts(&rest);
        for part in parts
            .iter()
            .filter(|p| p.binding.bone.side() == crate::humanoid::Side::Left)
        {
            let left = part.shape.tessellate(part.detail);
            let right = parts
                .iter()
                .find(|p| {
                    p.binding.bone == part.binding.bone.mirrored() && p.material == part.material
                })
                .map(|p| p.shape.tessellate(p.detail));
            let right = right.unwrap_or_else(|| panic!("no mirror of {}", part.binding.bone));
            let extent = |s: &super::super::shape::Surface| {
                s.positions.iter().fold(Vec3::splat(f32::MIN), |m, p| {
                    m.max(Vec3::new(p.x.abs(), p.y, p.z))
                })
            };
            assert!(extent(&left).abs_diff_eq(extent(&right), 1e-5));
        }
    }
}
