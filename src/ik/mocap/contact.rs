//! Whether one of the source's feet is in contact with the floor, frame by frame
//! (`FootContact`): the test mocap mode runs live and `eval` runs over a whole clip,
//! so the two differ only by the floor they are given.
//!
//! A foot's speed is its ankle's motion since the previous frame; a foot comes into
//! contact while it is slower than `contact_speed` hips heights per second and its
//! ankle is within `contact_height` hips heights of its rest height over the floor,
//! and stays in contact until either goes over `contact_release` times its limit.
//! The margin is what keeps a noisy or floating foot (a video estimate's feet drift
//! a centimetre a frame and hover a few centimetres) from flickering in and out
//! of contact on every frame of a step. A slow sole (the toe joint, the ankle
//! without toes), in contact or not, is where the floor is (`is_slow`): the floor
//! is found from slow soles only, so a glitch that throws a foot through the floor
//! for a frame is no floor, and a toe pushing off while the heel rises is.

use glam::Vec3;

use super::MocapIkConfig;
use super::levels::STANDING;

/// One foot's contact state, carried from frame to frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootContact {
    /// Last frame's ankle and sole joint, `None` before the first frame.
    previous: Option<(Vec3, Vec3)>,
    /// In contact on the last frame.
    in_contact: bool,
    /// How long the sole has been slow on end, seconds (`stands`).
    slow_for: f32,
}

/// How fast a foot moves on one frame, in the metres of its positions per second;
/// `None` on the first frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootSpeeds {
    /// The ankle's: what contact is decided on.
    pub ankle: Option<f32>,
    /// The sole joint's (`sole_joint`): whether the sole shows the floor.
    pub sole: Option<f32>,
}

impl FootContact {
    /// The speeds of the `ankle` and `sole` joint (`sole_joint`) since the previous
    /// frame (positions in any metres, `dt` seconds); remembers both.
    pub fn track(&mut self, ankle: Vec3, sole: Vec3, dt: f32) -> FootSpeeds {
        let dt = dt.max(1e-6);
        let speeds = self
            .previous
            .map_or(FootSpeeds::default(), |(a, s)| FootSpeeds {
                ankle: Some(a.distance(ankle) / dt),
                sole: Some(s.distance(sole) / dt),
            });
        self.previous = Some((ankle, sole));
        speeds
    }

    /// Whether the sole stands: `slow` (`is_slow` on this frame's sole speed) for
    /// `levels::STANDING` seconds on end, this frame lasting `dt`.
    pub fn stands(&mut self, slow: bool, dt: f32) -> bool {
        self.slow_for = if slow { self.slow_for + dt } else { 0.0 };
        self.slow_for >= STANDING
    }

    /// Decides this frame's contact from the ankle's `speed` (from `track`), its
    /// `height` above its rest height over the floor and the body's `hips_height`,
    /// all in the same metres (module header), and returns it.
    pub fn update(
        &mut self,
        speed: Option<f32>,
        height: f32,
        hips_height: f32,
        config: &MocapIkConfig,
    ) -> bool {
        let margin = if self.in_contact {
            config.contact_release.max(1.0)
        } else {
            1.0
        };
        self.in_contact = speed.is_some_and(|s| s < config.contact_speed * margin * hips_height)
            && height < config.contact_height * margin * hips_height;
        self.in_contact
    }

    /// Whether the foot is in contact (as of the last `update`).
    #[must_use]
    pub fn is_in_contact(&self) -> bool {
        self.in_contact
    }
}

/// Whether a sole moving at `speed` (`FootSpeeds::sole`) is slow enough to stand:
/// where the floor is looked for.
#[must_use]
pub fn is_slow(speed: Option<f32>, hips_height: f32, config: &MocapIkConfig) -> bool {
    speed.is_some_and(|s| s < config.contact_speed * hips_height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foot_in_contact_stays_until_past_the_release_margin() {
        let config = MocapIkConfig::default();
        let limit = config.contact_speed;
        let mut foot = FootContact::default();
        // Hips 1 m up, 60 Hz, on the floor; speeds as multiples of contactSpeed.
        let within = (1.0 + config.contact_release) / 2.0;
        let steps = [
            (0.5, true),
            (within, true),
            (config.contact_release * 0.95, true),
            (config.contact_release * 1.05, false),
            (within, false),
            (0.9, true),
        ];
        let mut step = |x: f32| foot.track(Vec3::X * x, Vec3::new(x, 0.0, 0.1), 1.0 / 60.0);
        let first = step(0.0);
        assert_eq!(first, FootSpeeds::default());
        let mut x = 0.0;
        let mut speeds = Vec::new();
        for (factor, _) in steps {
            x += factor * limit / 60.0;
            speeds.push(step(x));
        }
        let still = step(x);
        assert!(!foot.update(first.ankle, 0.0, 1.0, &config));
        for (i, (speed, (_, wanted))) in speeds.into_iter().zip(steps).enumerate() {
            assert_eq!(
                foot.update(speed.ankle, 0.0, 1.0, &config),
                wanted,
                "step {i}"
            );
        }
        // Slow but above the height margin: no contact.
        let high = config.contact_height * config.contact_release * 1.01;
        assert!(!foot.update(still.ankle, high, 1.0, &config));
        assert!(is_slow(still.sole, 1.0, &config));
    }
}
