//! A point that follows a moving target without lagging behind it (`Follower`):
//! where VR mode aims the neck joint without a hips tracker.

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
        self.velocity = self
            .velocity
            .lerp(v, (dt / FOLLOW_VELOCITY_SECONDS).min(1.0));
        self.at = (self.at + self.velocity * dt).lerp(target, (dt / seconds.max(1e-3)).min(1.0));
        self.at
    }
}
