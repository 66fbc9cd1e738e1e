//! Whether one of the source's feet is in contact with the floor, frame by frame
//! (`FootContact`): the test mocap mode runs live and `eval` runs over a whole clip,
//! so the two differ only by the floor they are given.
//!
//! A foot's speed is its ankle's motion over the last `SPEED_SPAN` seconds (the whole
//! number of frames nearest it, one at 30 Hz and below): a standing foot's capture
//! noise of a few millimetres a frame reads as a speed that grows with the frame
//! rate when measured frame to frame (30-100 cm/s at 120 Hz), over a fixed span it
//! does not. A foot comes into contact while it is slower than `contact_speed` hips
//! heights per second and its ankle is within `contact_height` hips heights of its
//! rest height over the floor, and stays in contact until either goes over
//! `contact_release` times its limit.
//! The margin is what keeps a noisy or floating foot (a video estimate's feet drift
//! a centimetre a frame and hover a few centimetres) from flickering in and out
//! of contact on every frame of a step. A slow sole (the toe joint, the ankle
//! without toes), in contact or not, is where the floor is (`is_slow`): the floor
//! is found from slow soles only, so a glitch that throws a foot through the floor
//! for a frame is no floor, and a toe pushing off while the heel rises is.

use glam::Vec3;

use super::MocapIkConfig;
use super::levels::STANDING;

/// The time a foot's speed is measured over, seconds (module header).
pub const SPEED_SPAN: f32 = 1.0 / 30.0;
/// How many past frames a foot remembers: `SPEED_SPAN` at up to 240 Hz (shorter
/// above).
const HISTORY: usize = 8;

/// One foot's contact state, carried from frame to frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootContact {
    /// The last `HISTORY` frames' ankle and sole joint, each with the time since the
    /// frame before it: a ring, the newest at `newest`, `filled` of them set.
    past: [(Vec3, Vec3, f32); HISTORY],
    newest: usize,
    filled: usize,
    /// In contact on the last frame.
    in_contact: bool,
    /// How long the sole has been slow on end, seconds (`stands`).
    slow_for: f32,
}

/// How fast a foot moves on one frame (over `SPEED_SPAN`), in the metres of its
/// positions per second; `None` on the first frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootSpeeds {
    /// The ankle's: what contact is decided on.
    pub ankle: Option<f32>,
    /// The sole joint's (`sole_joint`): whether the sole shows the floor.
    pub sole: Option<f32>,
}

impl FootContact {
    /// The speeds of the `ankle` and `sole` joint (`sole_joint`) this frame, `dt`
    /// seconds after the previous one (positions in any metres): their displacement
    /// from where they were the whole number of frames of `dt` nearest `SPEED_SPAN`
    /// ago (at least one, as many as were seen) over the time since; remembers both.
    pub fn track(&mut self, ankle: Vec3, sole: Vec3, dt: f32) -> FootSpeeds {
        let dt = dt.max(1e-6);
        let stride = ((SPEED_SPAN / dt).round() as usize).clamp(1, HISTORY);
        let back = stride.min(self.filled);
        let at = |k: usize| self.past[(self.newest + HISTORY - k) % HISTORY];
        let speeds = match back {
            0 => FootSpeeds::default(),
            _ => {
                // The time from the frame `back` frames ago (at `back - 1`) to this one.
                let span = dt + (0..back - 1).map(|k| at(k).2).sum::<f32>();
                let (a, s, _) = at(back - 1);
                FootSpeeds {
                    ankle: Some(a.distance(ankle) / span),
                    sole: Some(s.distance(sole) / span),
                }
            }
        };
        self.newest = (self.newest + 1) % HISTORY;
        self.past[self.newest] = (ankle, sole, dt);
        self.filled = (self.filled + 1).min(HISTORY);
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

    #[test]
    fn a_noisy_standing_foot_is_slow_at_any_frame_rate() {
        // A foot standing still with 5 mm of white noise (RMS distance from its
        // place), hips 1 m up, 2 s. At 120 Hz, frame to frame, it reads about
        // 0.8 m/s, well over `contactSpeed`; over `SPEED_SPAN` about 0.2 m/s, in
        // contact. At 30 Hz the span is one frame: the speeds are frame to frame.
        let config = MocapIkConfig::default();
        let mut seed = 12345_u32;
        let mut noise = move || {
            let mut unit = || {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (seed >> 8) as f32 / (1 << 24) as f32 - 0.5
            };
            // Sum of 3 uniforms (sigma 0.5) per axis: roughly Gaussian, 5 mm / √3.
            let mut axis = || (unit() + unit() + unit()) * 0.01 / 3f32.sqrt();
            Vec3::new(axis(), axis(), axis())
        };
        let rest = Vec3::new(0.1, 0.08, 0.0);
        let mut share = |rate: f32| {
            let mut foot = FootContact::default();
            let frames = (2.0 * rate) as usize;
            let positions: Vec<Vec3> = (0..frames).map(|_| rest + noise()).collect();
            let mut contacts = 0;
            for (i, &at) in positions.iter().enumerate() {
                let speeds = foot.track(at, at + Vec3::Z * 0.12, 1.0 / rate);
                if rate <= 30.0 && i > 0 {
                    let step = at.distance(positions[i - 1]) * rate;
                    assert!((speeds.ankle.unwrap() - step).abs() < 1e-4, "frame {i}");
                }
                contacts += usize::from(foot.update(speeds.ankle, 0.0, 1.0, &config));
            }
            contacts as f32 / frames as f32
        };
        let (fast, slow) = (share(120.0), share(30.0));
        assert!(fast > 0.9, "120 Hz: {fast}");
        assert!(slow > 0.9, "30 Hz: {slow}");
    }
}
