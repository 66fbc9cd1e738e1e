//! Angles about the vertical: a rotation's yaw and angles wrapped into −π..π.

use glam::{Quat, Vec3};

/// A head that moves farther than this in one frame, fraction of the user's height,
/// jumped: the torso's smoothing starts afresh.
pub(super) const JUMP: f32 = 0.2;

/// Turn about +Y that faces +Z toward `forward`'s horizontal part, radians.
pub(super) fn yaw_of(rotation: Quat) -> f32 {
    let f = rotation * Vec3::Z;
    if f.x.abs() + f.z.abs() < 1e-4 {
        // Looking straight up or down: the head's up points where it faces.
        let u = rotation * Vec3::Y;
        return (-u.x * f.y.signum()).atan2(-u.z * f.y.signum());
    }
    f.x.atan2(f.z)
}

/// An angle brought into −π..π.
pub(super) fn wrap(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaw_survives_looking_straight_down_and_angles_wrap() {
        let yaw = 0.7;
        let level = Quat::from_rotation_y(yaw);
        assert!((yaw_of(level) - yaw).abs() < 1e-5);
        let tilted = level * Quat::from_rotation_x(0.5);
        assert!((yaw_of(tilted) - yaw).abs() < 1e-5);
        let down = level * Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        assert!((yaw_of(down) - yaw).abs() < 1e-3, "{}", yaw_of(down));
        // 3π is π or −π, the same turn.
        assert!((wrap(3.0 * std::f32::consts::PI).abs() - std::f32::consts::PI).abs() < 1e-5);
        assert!((wrap(0.1 - std::f32::consts::TAU) - 0.1).abs() < 1e-5);
    }
}
