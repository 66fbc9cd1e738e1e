//! The change of frame in the carry of a bind pose onto its skin's root joint.
//!
//! A skin's bind worlds, `inverse(IBM)`, are put where the nodes are by the
//! transform that takes the root joint's bind world onto its node world (see
//! `skin`). That carry holds two things: the change of frame between the mesh and
//! the scene (exporters write inverse bind matrices in a frame of their own, Z-up,
//! centimetres), and whatever pose the root joint's node holds (a file saved
//! mid-animation with the hips turned or leaning). A change of frame is a change of
//! units and of axes: a uniform scale and a turn that maps every axis onto an axis
//! (one of the 24 quarter-turn rotations). So the carry's turn is snapped to the
//! nearest of those; what is left over is the root's pose, which is not carried
//! (carried, it would lean and turn the whole bind pose with the root). The carry
//! takes the root joint's bind position onto its node's.
//!
//! A carry whose scale is not uniform (a sheared frame) is kept whole: it cannot be
//! split this way.

use glam::{DAffine3, DMat3, DQuat, DVec3};

/// Relative tolerance for a uniform scale.
const UNIFORM_SCALE: f64 = 1e-3;

/// The change of frame in `carry` (the transform taking the root joint's bind world
/// onto its node world): its turn snapped to the nearest quarter-turn rotation, its
/// scale kept, and translated so that it still takes `anchor_bind`, the root joint's
/// bind position, where `carry` takes it. With the angle of the turn left out
/// (degrees) when that angle is more than `min_deg`; `None` when the carry is a
/// change of frame already, within `min_deg`, or cannot be split (scale not
/// uniform).
#[must_use]
pub(super) fn pose_free_carry(
    carry: DAffine3,
    anchor_bind: DVec3,
    min_deg: f64,
) -> Option<(DAffine3, f64)> {
    let (snapped, scale, angle) = split(carry)?;
    if angle <= min_deg {
        return None;
    }
    let matrix3 = snapped * scale;
    let translation = carry.transform_point3(anchor_bind) - matrix3 * anchor_bind;
    Some((
        DAffine3 {
            matrix3,
            translation,
        },
        angle,
    ))
}

/// The axes of a carry that is a change of frame only: its turn, when that turn is
/// one of the 24 quarter-turn rotations within `max_deg` and its scale is uniform.
/// `None` for a carry that also holds a pose (a turn off the axes), or a sheared one.
#[must_use]
pub(super) fn frame_axes(carry: DAffine3, max_deg: f64) -> Option<DMat3> {
    let (snapped, _, angle) = split(carry)?;
    (angle <= max_deg).then_some(snapped)
}

/// `carry`'s turn snapped to the nearest quarter-turn rotation, its uniform scale,
/// and the angle of the turn left out, degrees. `None` when the scale is not uniform
/// or the turn mirrors.
fn split(carry: DAffine3) -> Option<(DMat3, f64, f64)> {
    let m = carry.matrix3;
    let scale = m.x_axis.length();
    if !(scale.is_finite() && scale > 0.0)
        || [m.y_axis.length(), m.z_axis.length()]
            .iter()
            .any(|s| ((s - scale) / scale).abs() > UNIFORM_SCALE)
    {
        return None;
    }
    let turn = m * (1.0 / scale);
    if turn.determinant() < 0.0 {
        return None;
    }
    let snapped = nearest_quarter_turn(turn)?;
    // The turn left out: snapped⁻¹ · turn.
    let rest = DQuat::from_mat3(&(snapped.transpose() * turn)).normalize();
    let angle = (2.0 * rest.xyz().length().atan2(rest.w.abs())).to_degrees();
    Some((snapped, scale, angle))
}

/// The rotation among the 24 that map each axis onto an axis (signed) nearest to
/// the rotation `turn`: each column onto the axis it points closest to, when those
/// axes are three different ones.
fn nearest_quarter_turn(turn: DMat3) -> Option<DMat3> {
    let snap = |c: DVec3| -> (usize, DVec3) {
        let a = c.abs();
        let i = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let mut axis = DVec3::ZERO;
        axis[i] = c[i].signum();
        (i, axis)
    };
    let (i, x) = snap(turn.x_axis);
    let (j, y) = snap(turn.y_axis);
    let (k, z) = snap(turn.z_axis);
    if i == j || j == k || i == k {
        return None;
    }
    let snapped = DMat3::from_cols(x, y, z);
    (snapped.determinant() > 0.0).then_some(snapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_of_units_and_axes_is_a_frame_already() {
        let carry = DAffine3::from_scale_rotation_translation(
            DVec3::splat(100.0),
            DQuat::from_rotation_x(-std::f64::consts::FRAC_PI_2),
            DVec3::new(0.0, 0.3, 0.0),
        );
        assert!(pose_free_carry(carry, DVec3::new(0.0, 1.0, 0.0), 0.01).is_none());
    }

    #[test]
    fn a_lean_is_left_out_and_the_anchor_still_lands() {
        for frame in [
            DQuat::IDENTITY,
            DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
            DQuat::from_rotation_y(std::f64::consts::PI),
        ] {
            let lean = DQuat::from_rotation_z(0.05) * DQuat::from_rotation_y(0.07);
            let carry = DAffine3::from_scale_rotation_translation(
                DVec3::splat(0.01),
                frame * lean,
                DVec3::new(1.0, 2.0, 3.0),
            );
            let anchor = DVec3::new(0.0, 90.0, 4.0);
            let (frame_only, angle) = pose_free_carry(carry, anchor, 0.01).unwrap();
            let expected = DMat3::from_quat(frame) * 0.01;
            assert!(frame_only.matrix3.abs_diff_eq(expected, 1e-9));
            assert!(
                frame_only
                    .transform_point3(anchor)
                    .abs_diff_eq(carry.transform_point3(anchor), 1e-9)
            );
            assert!(
                (angle - lean.to_axis_angle().1.to_degrees()).abs() < 1e-6,
                "{angle}"
            );
        }
    }

    #[test]
    fn a_sheared_carry_is_not_split() {
        let carry = DAffine3::from_scale(DVec3::new(0.5, 0.603, 0.5));
        assert!(pose_free_carry(carry, DVec3::ZERO, 0.01).is_none());
    }
}
