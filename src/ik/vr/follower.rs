//! A point that follows a moving target without lagging behind it (`Follower`):
//! where VR mode aims the neck joint without a hips tracker; and `settle`, the
//! share of the way a value smoothed over a time constant goes in one frame.

use glam::Vec3;

/// A point that follows a moving target smoothly: smoothed over a time constant,
/// ahead of the target's own (smoothed) velocity, so that it does not lag behind a
/// target moving steadily.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Follower {
    at: Vec3,
    target: Vec3,
    velocity: Vec3,
}

/// The share of the way to its target a value smoothed over `seconds` goes in a
/// frame of `dt` seconds: `min(dt / seconds, 1)` (`seconds` at least 1 ms).
pub(super) fn settle(dt: f32, seconds: f32) -> f32 {
    (dt / seconds.max(1e-3)).min(1.0)
}

/// Time constant of `Follower::velocity`, seconds.
const FOLLOW_VELOCITY_SECONDS: f32 = 0.1;

impl Follower {
    /// Puts the point on `target`, at rest; returns it.
    pub(super) fn reset(&mut self, target: Vec3) -> Vec3 {
        *self = Self {
            at: target,
            target,
            velocity: Vec3::ZERO,
        };
        target
    }

    /// One frame toward `target`, time constant `seconds`; returns the point.
    pub(super) fn follow(&mut self, target: Vec3, seconds: f32, dt: f32) -> Vec3 {
        let v = (target - self.target) / dt;
        self.target = target;
        self.velocity = self.velocity.lerp(v, settle(dt, FOLLOW_VELOCITY_SECONDS));
        self.at = (self.at + self.velocity * dt).lerp(target, settle(dt, seconds));
        self.at
    }
}
