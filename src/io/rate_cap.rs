//! The rate cap of the VMC senders, `run`'s `vmcOutputs.rateHz` and `send --rate`:
//! frames at least `1/hz` apart, the first always sent. Each sender measures the
//! gap on its own clock: the live output on the wall clock (a frame held back goes
//! when the cap allows), `send` on the take's clock (a frame too soon is skipped).

use std::time::Duration;

/// At most `hz` frames per second: frames at least `1/hz` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateCap {
    /// The shortest gap between two frames sent.
    min_gap: Duration,
}

impl RateCap {
    /// A cap of `hz` frames per second; `None` (no cap) for 0, less, or not finite.
    #[must_use]
    pub fn from_hz(hz: f32) -> Option<Self> {
        (hz.is_finite() && hz > 0.0).then(|| {
            let interval = 1.0 / f64::from(hz);
            // Frame times and clocks are not exact (a 60 fps take's frame times
            // are f32): a gap short of the interval by 1 % still passes, so that
            // every other frame of 60 fps passes a cap of 30.
            Self {
                min_gap: Duration::from_secs_f64(interval * 0.99),
            }
        })
    }

    /// The shortest gap between two frames sent.
    #[must_use]
    pub fn min_gap(self) -> Duration {
        self.min_gap
    }

    /// Whether a frame `since` after the last one sent may go (`None`: none sent
    /// yet, or a new run of frames: it goes).
    #[must_use]
    pub fn allows(self, since: Option<Duration>) -> bool {
        since.is_none_or(|gap| gap >= self.min_gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_pass_at_least_an_interval_apart_the_first_always() {
        assert_eq!(RateCap::from_hz(0.0), None);
        assert_eq!(RateCap::from_hz(-5.0), None);
        assert_eq!(RateCap::from_hz(f32::NAN), None);
        let cap = RateCap::from_hz(30.0).unwrap();
        assert!(cap.allows(None));
        // Two frames of 60 fps apart, as f32 times make it.
        let two = f64::from(2.0f32 / 60.0);
        assert!(cap.allows(Some(Duration::from_secs_f64(two))));
        assert!(cap.allows(Some(Duration::from_secs_f64(1.0 / 30.0 - 1e-6))));
        assert!(!cap.allows(Some(Duration::from_secs_f64(1.0 / 60.0))));
        assert!(!cap.allows(Some(Duration::ZERO)));
    }
}
