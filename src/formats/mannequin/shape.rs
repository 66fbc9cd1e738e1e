//! One piece of the mannequin's surface: the hull of two spheres (a capsule,
//! tapered when the radii differ, an ellipsoid when the centres meet), stretched
//! across its axis, tessellated into rings of vertices with their normals.
//!
//! The shape is built in a local frame where the axis is x, then mapped to model
//! space by a rotation and a stretch: positions by `R·S`, normals by `R·S⁻¹`
//! (normalized). The frame is right-handed and the stretch positive, so triangles
//! keep their outward winding.

use std::f32::consts::{FRAC_PI_2, PI, TAU};

use glam::{Mat3, Vec3};

/// A stretched hull of two spheres, in model space (metres).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Centre of the first sphere.
    start: Vec3,
    /// Centre of the second sphere (the first's for an ellipsoid).
    end: Vec3,
    /// Radii of the two spheres, before the stretch.
    start_radius: f32,
    end_radius: f32,
    /// Unit axis, start to end.
    axis: Vec3,
    /// Unit, perpendicular to `axis`: the direction `scale.y` stretches.
    across: Vec3,
    /// Stretch along (axis, across, axis × across).
    scale: Vec3,
}

/// A tessellated shape: vertices with unit normals, and triangles wound
/// counter-clockwise seen from outside.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// Model space, metres.
    pub positions: Vec<Vec3>,
    /// Unit length, outward.
    pub normals: Vec<Vec3>,
    /// Each vertex's distance along the axis from the first centre, metres
    /// (negative in the first cap, beyond `length` in the second).
    pub axial: Vec<f32>,
    /// Three vertex indices per triangle, into this surface's vertices.
    pub triangles: Vec<[u32; 3]>,
    /// Distance between the two centres, metres.
    pub length: f32,
    /// The radii at the two ends along the axis, metres (stretched by the axis scale).
    pub end_radii: (f32, f32),
}

/// How finely a shape is cut: vertices around, and rings over each cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    pub segments: usize,
    pub cap_rings: usize,
}

impl Shape {
    /// A capsule from `start` to `end` (distinct points) with sphere radii
    /// `start_radius` and `end_radius`, round across.
    #[must_use]
    pub fn capsule(start: Vec3, end: Vec3, start_radius: f32, end_radius: f32) -> Self {
        let axis = (end - start).normalize();
        Self {
            start,
            end,
            start_radius,
            end_radius,
            axis,
            across: axis.any_orthonormal_vector(),
            scale: Vec3::ONE,
        }
    }

    /// An ellipsoid at `centre` with semi-axes `radii` along model x, y and z.
    #[must_use]
    pub fn ellipsoid(centre: Vec3, radii: Vec3) -> Self {
        Self {
            start: centre,
            end: centre,
            start_radius: 1.0,
            end_radius: 1.0,
            // Local axes (y, z, y × z = x): a right-handed frame.
            axis: Vec3::Y,
            across: Vec3::Z,
            scale: Vec3::new(radii.y, radii.z, radii.x),
        }
    }

    /// The same shape with its radius along `across` (made perpendicular to the
    /// axis) multiplied by `factor`.
    #[must_use]
    pub fn stretched(self, across: Vec3, factor: f32) -> Self {
        let across = (across - self.axis * across.dot(self.axis)).normalize();
        Self {
            across,
            scale: Vec3::new(self.scale.x, factor, self.scale.z),
            ..self
        }
    }

    /// Local frame to model space, rotation only.
    fn frame(&self) -> Mat3 {
        Mat3::from_cols(self.axis, self.across, self.axis.cross(self.across))
    }

    /// Cuts the shape into rings: `cap_rings` over each cap (the cone between the
    /// caps, where the hull is a tapered cylinder, is one band), `segments` around.
    #[must_use]
    pub fn tessellate(&self, detail: Detail) -> Surface {
        let Detail {
            segments,
            cap_rings,
        } = detail;
        let frame = self.frame();
        let length = self.start.distance(self.end);
        // The second centre in the local, unstretched shape.
        let local_length = length / self.scale.x;
        // The polar angle (from the first cap's pole) where the hull's cone touches
        // both spheres: its normal there leans by asin((r0 − r1) / d) toward the
        // smaller end.
        let lean = if local_length > 0.0 {
            ((self.start_radius - self.end_radius) / local_length)
                .clamp(-1.0, 1.0)
                .asin()
        } else {
            0.0
        };
        let touch = FRAC_PI_2 + lean;
        // Rings as (polar angle, local centre on the axis, sphere radius).
        let mut rings = Vec::with_capacity(2 * cap_rings);
        for k in 1..=cap_rings {
            rings.push((touch * k as f32 / cap_rings as f32, 0.0, self.start_radius));
        }
        // An ellipsoid's two caps meet in one ring, which is not repeated.
        let first_second = usize::from(local_length == 0.0);
        for k in first_second..cap_rings {
            let angle = touch + (PI - touch) * k as f32 / cap_rings as f32;
            rings.push((angle, local_length, self.end_radius));
        }

        let mut surface = Surface {
            length,
            end_radii: (
                self.start_radius * self.scale.x,
                self.end_radius * self.scale.x,
            ),
            ..Surface::default()
        };
        let mut vertex = |angle: f32, around: f32, centre: f32, radius: f32| {
            // Unit direction from the sphere's centre, local frame.
            let (sin, cos) = angle.sin_cos();
            let direction = Vec3::new(-cos, sin * around.cos(), sin * around.sin());
            let local = Vec3::new(centre, 0.0, 0.0) + radius * direction;
            surface
                .positions
                .push(self.start + frame * (self.scale * local));
            surface
                .normals
                .push((frame * (direction / self.scale)).normalize());
            surface.axial.push(self.scale.x * local.x);
        };
        vertex(0.0, 0.0, 0.0, self.start_radius);
        for &(angle, centre, radius) in &rings {
            for j in 0..segments {
                vertex(angle, TAU * j as f32 / segments as f32, centre, radius);
            }
        }
        vertex(PI, 0.0, local_length, self.end_radius);

        // Index of ring `i`'s vertex `j` (`j` wraps around).
        let at = |i: usize, j: usize| (1 + i * segments + j % segments) as u32;
        let last_pole = (1 + rings.len() * segments) as u32;
        for j in 0..segments {
            surface.triangles.push([0, at(0, j + 1), at(0, j)]);
        }
        for i in 0..rings.len() - 1 {
            for j in 0..segments {
                surface
                    .triangles
                    .push([at(i, j), at(i, j + 1), at(i + 1, j)]);
                surface
                    .triangles
                    .push([at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)]);
            }
        }
        let last = rings.len() - 1;
        for j in 0..segments {
            surface
                .triangles
                .push([at(last, j), at(last, j + 1), last_pole]);
        }
        surface
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DETAIL: Detail = Detail {
        segments: 12,
        cap_rings: 5,
    };

    /// Every triangle faces the way its vertices' normals point, and has area.
    fn assert_wound_outward(s: &Surface) {
        for t in &s.triangles {
            let [a, b, c] = t.map(|i| s.positions[i as usize]);
            let face = (b - a).cross(c - a);
            assert!(face.length() > 1e-12, "degenerate triangle {t:?}");
            let normal: Vec3 = t.iter().map(|&i| s.normals[i as usize]).sum();
            assert!(face.dot(normal) > 0.0, "triangle {t:?} faces inward");
        }
    }

    #[test]
    fn a_tapered_capsule_is_closed_outward_and_unit_normal() {
        let shape = Shape::capsule(
            Vec3::new(0.1, 1.0, 0.0),
            Vec3::new(0.4, 1.0, 0.0),
            0.05,
            0.03,
        )
        .stretched(Vec3::Y, 0.6);
        let s = shape.tessellate(DETAIL);
        assert_eq!(
            s.positions.len(),
            2 + 2 * DETAIL.cap_rings * DETAIL.segments
        );
        assert_wound_outward(&s);
        for n in &s.normals {
            assert!((n.length() - 1.0).abs() < 1e-6);
        }
        // A closed surface: every edge is shared by exactly two triangles.
        let mut edges = std::collections::HashMap::new();
        for t in &s.triangles {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&n| n == 2));
        // Its extent: the two caps along x, the stretched radius in y.
        let max_x = s.positions.iter().map(|p| p.x).fold(f32::MIN, f32::max);
        let min_x = s.positions.iter().map(|p| p.x).fold(f32::MAX, f32::min);
        let max_y = s.positions.iter().map(|p| p.y).fold(f32::MIN, f32::max);
        assert!((max_x - 0.43).abs() < 1e-5 && (min_x - 0.05).abs() < 1e-5);
        assert!((max_y - 1.03).abs() < 0.002, "{max_y}");
        assert!(
            s.axial
                .iter()
                .all(|&a| (-0.05 - 1e-6..=0.33 + 1e-6).contains(&a))
        );
    }

    #[test]
    fn an_ellipsoid_has_its_radii_along_the_model_axes() {
        let s = Shape::ellipsoid(Vec3::new(0.0, 1.6, 0.0), Vec3::new(0.08, 0.11, 0.095))
            .tessellate(DETAIL);
        assert_wound_outward(&s);
        for (axis, radius) in [(0, 0.08), (1, 0.11), (2, 0.095)] {
            let centre = [0.0, 1.6, 0.0][axis];
            let far = s
                .positions
                .iter()
                .map(|p| (p[axis] - centre).abs())
                .fold(0.0, f32::max);
            assert!((far - radius).abs() < 1e-3, "axis {axis}: {far}");
        }
        // On an ellipsoid the normal is the gradient (x/a², y/b², z/c²).
        for (p, n) in s.positions.iter().zip(&s.normals) {
            let local = *p - Vec3::new(0.0, 1.6, 0.0);
            let gradient = (local / Vec3::new(0.0064, 0.0121, 0.009025)).normalize();
            assert!(gradient.dot(*n) > 0.9999, "{p} {n}");
        }
    }
}
