//! The walking gait read from the head's sway (`Gait`): which foot the body is
//! over, when it changes, and how long half a stride takes.

use glam::Vec3;

use super::VrIkConfig;

/// The walking gait as the head shows it. The body sways over the foot it stands
/// on, so the head's sideways offset from the path it walks says which foot that
/// is; each change of side is a step of the other foot, and the time between
/// changes (half a stride) is how long a step takes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Gait {
    /// The head's horizontal position smoothed over a quarter of `sway_seconds`
    /// (noise out) and over `sway_seconds` (the path), and the path's velocity,
    /// smoothed over `sway_seconds` again.
    fast: Vec3,
    slow: Vec3,
    velocity: Vec3,
    /// The sideways offset's own average over `sway_seconds` (a curving path, a
    /// user leaning to one side): the sway is about it.
    bias: f32,
    /// The side the body is over: 1 left, −1 right, 0 not known yet.
    side: f32,
    /// Seconds since the side last changed, and the smoothed time between changes.
    since: f32,
    pub(super) half_stride: f32,
}

/// Bounds of `Gait::half_stride`, and where it starts, seconds.
const HALF_STRIDE: (f32, f32, f32) = (0.25, 1.0, 0.5);

impl Gait {
    pub(super) fn new(head: Vec3) -> Self {
        Self {
            fast: head,
            slow: head,
            half_stride: HALF_STRIDE.2,
            ..Self::default()
        }
    }

    /// Follows the head's horizontal position for one frame; the side the body has
    /// just swayed over (1 left, −1 right), if it changed. Sideways is across the
    /// path's velocity; the two smoothings lag behind the head along the path by
    /// velocity · time constant, and that difference is taken out.
    pub(super) fn read(&mut self, c: &VrIkConfig, head: Vec3, height: f32, dt: f32) -> Option<f32> {
        let tau = c.sway_seconds.max(1e-3);
        let fast_tau = tau / 4.0;
        let k = (dt / tau).min(1.0);
        self.fast = self.fast.lerp(head, (dt / fast_tau).min(1.0));
        let slow = self.slow.lerp(head, k);
        self.velocity = self.velocity.lerp((slow - self.slow) / dt, k);
        self.slow = slow;
        let left = Vec3::Y.cross(self.velocity).normalize_or_zero();
        let offset = (self.fast - self.slow - self.velocity * (tau - fast_tau)).dot(left);
        self.bias += (offset - self.bias) * k;
        let sway = offset - self.bias;
        let threshold = c.sway_threshold * height;
        let side = if sway > threshold {
            1.0
        } else if sway < -threshold {
            -1.0
        } else {
            self.side
        };
        self.since += dt;
        if side == self.side {
            return None;
        }
        if self.side != 0.0 {
            let (low, high, _) = HALF_STRIDE;
            self.half_stride += (self.since.clamp(low, high) - self.half_stride) * 0.5;
        }
        self.since = 0.0;
        self.side = side;
        Some(side)
    }

    /// Whether the sway says nothing to step by: not seen yet, or overdue.
    pub(super) fn is_stalled(&self) -> bool {
        self.side == 0.0 || self.since > self.half_stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gait_follows_the_side_the_head_sways_to_while_walking_on_a_turn() {
        // Walking 1 m/s along a wide arc (and at an angle), swaying ±3 cm across the
        // path every 1.2 s: once settled, the side read is the sway's most of the
        // time (the smoothing's lead about makes up for the threshold's lag).
        let config = VrIkConfig::default();
        let (dt, period, height) = (1.0 / 120.0, 1.2, 1.5);
        let path = |t: f32| {
            let angle = 0.3 + 0.1 * t;
            let (centre, radius) = (Vec3::new(0.0, 0.0, 0.0), 10.0);
            let along = Vec3::new(angle.sin(), 0.0, angle.cos());
            let across = Vec3::Y.cross(along);
            let sway = 0.03 * (std::f32::consts::TAU * t / period).sin();
            (
                centre + Vec3::new(-angle.cos(), 0.0, angle.sin()) * radius + across * sway,
                sway,
            )
        };
        let mut gait = Gait::new(path(0.0).0);
        let (mut agree, mut frames, mut changes) = (0, 0, 0);
        for i in 1..=1200 {
            let t = i as f32 * dt;
            let (head, sway) = path(t);
            if gait.read(&config, head, height, dt).is_some() && t > 2.0 {
                changes += 1;
            }
            if t > 2.0 {
                frames += 1;
                agree += usize::from(gait.side == sway.signum());
            }
        }
        assert!(agree as f32 > 0.8 * frames as f32, "{agree} of {frames}");
        // Two changes a period over the 8 s after settling, give or take one.
        let expected = (8.0 / period * 2.0) as i32;
        assert!((changes - expected).abs() <= 1, "{changes} changes");
        assert!(
            (gait.half_stride - period / 2.0).abs() < 0.05,
            "{}",
            gait.half_stride
        );
    }
}
