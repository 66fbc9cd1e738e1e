//! The mannequin's face and its expressions: eyelids, brows and a mouth on the head
//! bone, one skinned mesh whose morph targets are the VRM 1.0 preset expressions.
//!
//! An expression is described as a whole face (`Face`: how far each lid is closed,
//! how high each end of the brows, how wide and open the mouth); its morph target
//! is that face's vertices less the neutral face's. Every part is built by the same
//! tessellation whatever the face, so vertex `i` is the same point of the same
//! part in every face. The lookUp/Down/Left/Right presets are not here: lookAt
//! turns the eye bones.

use glam::Vec3;

use crate::formats::vrma::VrmaRest;
use crate::humanoid::{HumanBone as B, Preset};

use super::body::{EYE_RADIUS, FINE, Side};
use super::material::Material;
use super::shape::{Detail, Shape, Surface};
use super::skin::{Binding, SkinnedMesh};

/// The face at rest or with one expression at full weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Face {
    /// How far each upper lid (left, right) is down: 0 open, 1 closed; below 0
    /// raised, eyes wide.
    pub lids: [f32; 2],
    /// How far the inner and outer ends of both brows are raised, metres.
    pub brow_inner: f32,
    pub brow_outer: f32,
    /// Half the mouth's width and half its opening, metres.
    pub mouth_width: f32,
    pub mouth_open: f32,
    /// How far the mouth moves forward (rounded lips) and down, metres.
    pub mouth_forward: f32,
    pub mouth_drop: f32,
    /// How far the mouth's corners rise (below 0: fall), metres.
    pub smile: f32,
}

/// The face at rest.
pub const NEUTRAL: Face = Face {
    lids: [0.0, 0.0],
    brow_inner: 0.0,
    brow_outer: 0.0,
    mouth_width: 0.02,
    mouth_open: 0.0035,
    mouth_forward: 0.0,
    mouth_drop: 0.0,
    smile: 0.0,
};

/// Every expression the face shows, in morph target order.
pub const EXPRESSIONS: [(Preset, Face); 13] = [
    (
        Preset::Happy,
        Face {
            lids: [0.3, 0.3],
            brow_inner: 0.003,
            brow_outer: 0.002,
            mouth_width: 0.024,
            mouth_open: 0.005,
            smile: 0.007,
            ..NEUTRAL
        },
    ),
    (
        Preset::Angry,
        Face {
            lids: [0.1, 0.1],
            brow_inner: -0.006,
            brow_outer: 0.001,
            mouth_width: 0.017,
            mouth_open: 0.003,
            smile: -0.003,
            ..NEUTRAL
        },
    ),
    (
        Preset::Sad,
        Face {
            lids: [0.25, 0.25],
            brow_inner: 0.005,
            brow_outer: -0.002,
            mouth_width: 0.018,
            smile: -0.005,
            ..NEUTRAL
        },
    ),
    (
        Preset::Relaxed,
        Face {
            lids: [0.45, 0.45],
            brow_inner: -0.001,
            brow_outer: -0.001,
            mouth_width: 0.021,
            smile: 0.003,
            ..NEUTRAL
        },
    ),
    (
        Preset::Surprised,
        Face {
            lids: [-0.25, -0.25],
            brow_inner: 0.008,
            brow_outer: 0.007,
            mouth_width: 0.013,
            mouth_open: 0.012,
            mouth_forward: 0.002,
            mouth_drop: 0.002,
            ..NEUTRAL
        },
    ),
    (
        Preset::Aa,
        Face {
            mouth_width: 0.018,
            mouth_open: 0.013,
            mouth_drop: 0.006,
            ..NEUTRAL
        },
    ),
    (
        Preset::Ih,
        Face {
            mouth_width: 0.023,
            mouth_open: 0.006,
            mouth_drop: 0.001,
            ..NEUTRAL
        },
    ),
    (
        Preset::Ou,
        Face {
            mouth_width: 0.01,
            mouth_open: 0.008,
            mouth_forward: 0.005,
            ..NEUTRAL
        },
    ),
    (
        Preset::Ee,
        Face {
            mouth_width: 0.025,
            mouth_open: 0.007,
            smile: 0.002,
            ..NEUTRAL
        },
    ),
    (
        Preset::Oh,
        Face {
            mouth_width: 0.014,
            mouth_open: 0.011,
            mouth_forward: 0.003,
            mouth_drop: 0.003,
            ..NEUTRAL
        },
    ),
    (
        Preset::Blink,
        Face {
            lids: [1.0, 1.0],
            ..NEUTRAL
        },
    ),
    (
        Preset::BlinkLeft,
        Face {
            lids: [1.0, 0.0],
            ..NEUTRAL
        },
    ),
    (
        Preset::BlinkRight,
        Face {
            lids: [0.0, 1.0],
            ..NEUTRAL
        },
    ),
];

/// Whether `preset` shuts the eyes partly itself, so that a blink on top of it is
/// faded by its weight (VRM's `overrideBlink: blend`).
#[must_use]
pub fn blends_blink(preset: Preset) -> bool {
    matches!(preset, Preset::Happy | Preset::Relaxed | Preset::Surprised)
}

/// One primitive of the face: its material, its mesh in the neutral face and one
/// position offset per vertex for each of `EXPRESSIONS`.
#[derive(Debug, Clone, PartialEq)]
pub struct FacePrimitive {
    pub material: Material,
    pub mesh: SkinnedMesh,
    pub targets: Vec<Vec<Vec3>>,
}

/// The face's primitives (lids, brows, mouth) on the T-pose `rest`.
#[must_use]
pub fn primitives(rest: &VrmaRest) -> Vec<FacePrimitive> {
    let neutral = surfaces(rest, &NEUTRAL);
    let faces: Vec<[Vec<Surface>; 3]> = EXPRESSIONS
        .iter()
        .map(|(_, face)| surfaces(rest, face))
        .collect();
    let materials = [Material::Body, Material::Brow, Material::Mouth];
    let mut primitives = Vec::with_capacity(3);
    for (k, (material, parts)) in materials.into_iter().zip(&neutral).enumerate() {
        let mut mesh = SkinnedMesh::default();
        for surface in parts {
            mesh.add(surface, Binding::rigid(B::Head));
        }
        let targets = faces
            .iter()
            .map(|face| {
                let moved = face[k].iter().flat_map(|s| &s.positions);
                moved.zip(&mesh.positions).map(|(m, n)| *m - *n).collect()
            })
            .collect();
        primitives.push(FacePrimitive {
            material,
            mesh,
            targets,
        });
    }
    primitives
}

/// The face's parts as `face` sets them: [lids, brows, mouth].
fn surfaces(rest: &VrmaRest, face: &Face) -> [Vec<Surface>; 3] {
    let mut lids = Vec::with_capacity(2);
    let mut brows = Vec::with_capacity(2);
    for (side, closed) in [Side::Left, Side::Right].into_iter().zip(face.lids) {
        let eye = rest.position(side.bone(B::LeftEye));
        lids.push(lid(eye, closed).tessellate(FINE));
        // A straight bar whose middle clears the curve of the forehead.
        let inner = eye + side.offset(-0.018, 0.022 + face.brow_inner, 0.0125);
        let outer = eye + side.offset(0.015, 0.026 + face.brow_outer, -0.0025);
        let brow = Shape::capsule(inner, outer, 0.004, 0.004).stretched(Vec3::Y, 0.7);
        brows.push(brow.tessellate(FINE));
    }
    [lids, brows, vec![mouth(rest, face)]]
}

/// An upper lid `closed` of the way down (see `Face::lids`): a thin shell over the
/// top of the eyeball that grows into a ball just larger than the eye and its iris.
fn lid(eye: Vec3, closed: f32) -> Shape {
    let cover = EYE_RADIUS + 0.0027;
    let (open_centre, open_radii) = (
        Vec3::new(0.0, 0.0115, 0.0015),
        Vec3::new(cover, 0.0035, 0.013),
    );
    let (shut_centre, shut_radii) = (Vec3::new(0.0, 0.0, 0.0005), Vec3::splat(cover));
    Shape::ellipsoid(
        eye + open_centre.lerp(shut_centre, closed),
        open_radii.lerp(shut_radii, closed),
    )
}

/// The mouth: a dark flattened ellipsoid on the front of the face below the eyes,
/// its corners raised by `smile` times the square of how far out they are.
fn mouth(rest: &VrmaRest, face: &Face) -> Surface {
    const DETAIL: Detail = Detail {
        segments: 16,
        cap_rings: 4,
    };
    let centre = rest.position(B::Head)
        + Vec3::new(0.0, 0.032 - face.mouth_drop, 0.067 + face.mouth_forward);
    let radii = Vec3::new(face.mouth_width, face.mouth_open, 0.0055);
    let mut surface = Shape::ellipsoid(centre, radii).tessellate(DETAIL);
    for p in &mut surface.positions {
        let out = (p.x - centre.x) / face.mouth_width;
        p.y += face.smile * out * out;
    }
    surface
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_expression_moves_the_face_and_the_neutral_face_does_not() {
        let rest = VrmaRest::standard(0.95);
        let primitives = primitives(&rest);
        for (k, (preset, _)) in EXPRESSIONS.iter().enumerate() {
            let moved = primitives
                .iter()
                .flat_map(|p| &p.targets[k])
                .map(|d| d.length())
                .fold(0.0, f32::max);
            assert!(moved > 0.002, "{preset} moves the face {moved} m");
        }
        let again = surfaces(&rest, &NEUTRAL);
        for (p, parts) in primitives.iter().zip(&again) {
            let positions: Vec<Vec3> = parts.iter().flat_map(|s| s.positions.clone()).collect();
            assert_eq!(positions, p.mesh.positions);
        }
    }

    #[test]
    fn a_closed_lid_covers_the_iris_and_a_one_sided_blink_closes_one_eye() {
        let rest = VrmaRest::standard(0.95);
        let eye = rest.position(B::LeftEye);
        let shut = lid(eye, 1.0).tessellate(FINE);
        let nearest = shut
            .positions
            .iter()
            .map(|p| p.distance(eye))
            .fold(f32::MAX, f32::min);
        // The iris reaches 11.5 + 2.5 mm from the eye's centre.
        assert!(nearest > 0.0145, "{nearest}");
        let primitives = primitives(&rest);
        let lids = &primitives[0];
        let k = EXPRESSIONS
            .iter()
            .position(|(p, _)| *p == Preset::BlinkLeft)
            .unwrap();
        let half = lids.mesh.positions.len() / 2;
        assert!(lids.targets[k][..half].iter().any(|d| d.length() > 0.005));
        assert!(lids.targets[k][half..].iter().all(|d| *d == Vec3::ZERO));
        // The left lid is on the left (+x) eye.
        assert!(lids.mesh.positions[..half].iter().all(|p| p.x > 0.0));
    }
}
