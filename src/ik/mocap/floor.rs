//! The source's floor, followed live (`LiveFloor`): the `floor_percentile` low
//! quantile of the lowest slow sole (`contact::is_slow`) over the frames seen,
//! each frame weighing its duration, the past fading with time constant
//! `floor_seconds`. It is what `eval` finds over a whole clip (the same percentile
//! of the same soles), seen as it comes: a glitch that throws a foot through the
//! floor for a few frames is outweighed within a step or two, a jump or a step onto
//! a box does not lift it (the lowest sole of a moving foot is no evidence, and the
//! floor moves only once most of the recent weight is above it), and a capture
//! whose floor drifts is followed within a few `floor_seconds`. And no floor stands
//! above both feet: when the higher sole is under it (the capture steps or jumps
//! down from a box the floor has followed up, or starts on one), the floor is that
//! sole until the slow soles below outweigh the past, so the avatar's feet never
//! go through its floor while the quantile catches up.
//!
//! The weights are kept in `FLOOR_BINS` bins of `FLOOR_BIN` hips heights around the
//! first sole seen (a sole farther out counts in the end bin) and the quantile is
//! interpolated within its bin: exact to a fraction of a millimetre on a
//! human, on a fixed array (no heap; it runs on the solver thread). The past fades
//! by a scale kept beside the bins (a new weight goes in divided by it; the bins
//! are rescaled only when it grows small), and the quantile is looked for from the
//! lowest bin ever weighed: a frame costs a few bins, not all of them.
//! Hand-written: no crate keeps a decaying weighted quantile on a fixed array.

use super::MocapIkConfig;

/// Width of one bin, source hips heights (2 mm on a 1 m hips height).
pub const FLOOR_BIN: f32 = 0.002;

/// Number of bins: ±1.024 hips heights around the first sole seen.
pub const FLOOR_BINS: usize = 1024;

/// Below this, `LiveFloor::scale` is folded into the bins (every
/// `ln(10²⁰) ≈ 46` `floor_seconds` of frames).
const RESCALE_BELOW: f32 = 1e-20;

/// The live floor of one performer's source.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFloor {
    /// Seconds of weight per bin, decayed, over `scale`: bin `k` weighs
    /// `weights[k] · scale`; and their sum, decayed (not over `scale`).
    weights: [f32; FLOOR_BINS],
    scale: f32,
    total: f32,
    /// The lowest bin ever weighed since the last rescale (`FLOOR_BINS` before).
    lowest: usize,
    /// Height of the low edge of bin 0, source model metres, and the bin width;
    /// `None` before the first slow sole.
    origin: Option<(f32, f32)>,
    /// The floor as of the last frame, source model metres.
    floor: Option<f32>,
}

impl Default for LiveFloor {
    fn default() -> Self {
        Self {
            weights: [0.0; FLOOR_BINS],
            scale: 1.0,
            total: 0.0,
            lowest: FLOOR_BINS,
            origin: None,
            floor: None,
        }
    }
}

impl LiveFloor {
    /// The floor as of the last frame, source model metres (0 before the first).
    #[must_use]
    pub fn height(&self) -> f32 {
        self.floor.unwrap_or(0.0)
    }

    /// Forgets everything (after a jump in the stream).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Takes one frame lasting `dt` seconds: `slow_sole`, the lowest sole of the feet
    /// slow on it (`None` when no foot is), and `soles`, the lowest and the highest
    /// sole of the two feet: the lowest is the floor until a slow foot was seen, and
    /// the floor is never above the highest. `hips_height` is the source's. Returns
    /// the floor.
    pub fn follow(
        &mut self,
        slow_sole: Option<f32>,
        soles: (f32, f32),
        dt: f32,
        hips_height: f32,
        config: &MocapIkConfig,
    ) -> f32 {
        let (lowest_sole, highest_sole) = soles;
        let fade = if config.floor_seconds > 0.0 {
            (-dt / config.floor_seconds).exp()
        } else {
            0.0
        };
        self.scale *= fade;
        self.total *= fade;
        if self.scale < RESCALE_BELOW {
            for w in &mut self.weights {
                *w *= self.scale;
            }
            self.scale = 1.0;
            self.lowest = self
                .weights
                .iter()
                .position(|&w| w > 0.0)
                .unwrap_or(FLOOR_BINS);
        }
        if let Some(sole) = slow_sole.filter(|s| s.is_finite()) {
            let (low, bin) = *self.origin.get_or_insert_with(|| {
                let bin = FLOOR_BIN * hips_height;
                (sole - bin * (FLOOR_BINS / 2) as f32, bin)
            });
            let at = ((sole - low) / bin)
                .floor()
                .clamp(0.0, (FLOOR_BINS - 1) as f32) as usize;
            if self.scale > 0.0 {
                self.weights[at] += dt / self.scale;
                self.total += dt;
                self.lowest = self.lowest.min(at);
            }
        }
        let floor = match (self.quantile(config.floor_percentile), self.floor) {
            (Some(q), _) => q,
            (None, Some(f)) if self.origin.is_some() => f,
            _ if lowest_sole.is_finite() => lowest_sole,
            (None, f) => f.unwrap_or(0.0),
        };
        let floor = if highest_sole.is_finite() {
            floor.min(highest_sole)
        } else {
            floor
        };
        self.floor = Some(floor);
        floor
    }

    /// The `p` quantile of the weights, interpolated within its bin; `None`
    /// without weight.
    fn quantile(&self, p: f32) -> Option<f32> {
        let (low, bin) = self.origin?;
        let total = self.total / self.scale;
        if self.total <= 0.0 || !total.is_finite() {
            return None;
        }
        let wanted = total * p.clamp(0.0, 1.0);
        let mut below = 0.0;
        for (k, w) in self.weights.iter().enumerate().skip(self.lowest) {
            if *w > 0.0 && below + w >= wanted {
                let within = ((wanted - below) / w).clamp(0.0, 1.0);
                return Some(low + (k as f32 + within) * bin);
            }
            below += w;
        }
        Some(low + FLOOR_BINS as f32 * bin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `seconds` of frames at `rate` Hz, the slow sole at `sole(t)`.
    fn run(floor: &mut LiveFloor, rate: f32, seconds: f32, sole: impl Fn(f32) -> Option<f32>) {
        let config = MocapIkConfig::default();
        let dt = 1.0 / rate;
        for i in 0..(seconds * rate) as usize {
            let s = sole(i as f32 * dt);
            let sole = s.unwrap_or(0.5);
            floor.follow(s, (sole, sole + 0.1), dt, 1.0, &config);
        }
    }

    #[test]
    fn a_glitch_through_the_floor_is_outweighed_and_a_jump_does_not_lift_it() {
        for rate in [25.0, 120.0] {
            let mut floor = LiveFloor::default();
            // 0.1 s of soles 10 cm under the floor, then steps on a floor 3 cm up
            // (each sole 0..2 cm over it) for 3 s.
            run(&mut floor, rate, 0.1, |_| Some(-0.1));
            run(&mut floor, rate, 3.0, |t| {
                Some(0.03 + 0.02 * (t * 7.0).sin().abs())
            });
            assert!(
                (floor.height() - 0.03).abs() < 0.005,
                "{rate} Hz: {}",
                floor.height()
            );
            // A 1 s jump: no foot slow, the floor stays.
            run(&mut floor, rate, 1.0, |_| None);
            assert!(
                (floor.height() - 0.03).abs() < 0.005,
                "{rate} Hz: {}",
                floor.height()
            );
        }
    }

    #[test]
    fn a_floor_that_moves_is_followed_within_a_few_floor_seconds() {
        let config = MocapIkConfig::default();
        let mut floor = LiveFloor::default();
        run(&mut floor, 60.0, 5.0, |_| Some(0.0));
        run(&mut floor, 60.0, 4.0 * config.floor_seconds, |_| Some(0.2));
        assert!((floor.height() - 0.2).abs() < 0.003, "{}", floor.height());
    }

    #[test]
    fn the_fading_holds_over_a_long_take_and_without_memory() {
        // 200 s on the floor at 0 (the fading's scale folded into the bins once,
        // at about 138 s), then the floor 20 cm up: followed as within a short take.
        let config = MocapIkConfig::default();
        let mut floor = LiveFloor::default();
        run(&mut floor, 60.0, 200.0, |t| {
            Some(0.01 * (t * 5.0).sin().abs())
        });
        assert!(floor.height().abs() < 0.003, "{}", floor.height());
        run(&mut floor, 60.0, 4.0 * config.floor_seconds, |_| Some(0.2));
        assert!((floor.height() - 0.2).abs() < 0.003, "{}", floor.height());
        // No memory: the floor is this frame's slow sole.
        let config = MocapIkConfig {
            floor_seconds: 0.0,
            ..MocapIkConfig::default()
        };
        let mut floor = LiveFloor::default();
        for sole in [0.1, 0.3, 0.05] {
            let f = floor.follow(Some(sole), (sole, sole + 0.1), 0.01, 1.0, &config);
            assert!((f - sole).abs() < 0.003, "{f} for {sole}");
        }
    }

    #[test]
    fn no_floor_stands_above_both_feet_while_the_slow_soles_catch_up() {
        for rate in [30.0, 120.0] {
            let config = MocapIkConfig::default();
            let dt = 1.0 / rate;
            let mut floor = LiveFloor::default();
            // 20 s standing on a box 0.7 up: the floor follows it up.
            for _ in 0..(20.0 * rate) as usize {
                floor.follow(Some(0.7), (0.7, 0.7), dt, 1.0, &config);
            }
            assert!((floor.height() - 0.7).abs() < 0.003, "{}", floor.height());
            // Down from it: 0.3 s falling (no foot slow), both soles under the box top,
            // then landing on the floor at 0, the feet not yet slow for 0.1 s.
            for i in 0..(0.4 * rate) as usize {
                let t = i as f32 * dt;
                let sole = (0.7 - 0.7 * (t / 0.3).powi(2)).max(0.0);
                let f = floor.follow(None, (sole, sole + 0.02), dt, 1.0, &config);
                assert!(
                    f <= sole + 0.02 + 1e-6,
                    "{rate} Hz at {t} s: {f} over {sole}"
                );
            }
            // Standing on the floor: the slow soles take over, the floor stays down.
            for _ in 0..(1.0 * rate) as usize {
                floor.follow(Some(0.0), (0.0, 0.0), dt, 1.0, &config);
            }
            assert!(floor.height().abs() < 0.003, "{}", floor.height());
            // A glitch of one foot 0.3 under the floor moves it no more than before.
            for _ in 0..3 {
                floor.follow(None, (-0.3, 0.0), dt, 1.0, &config);
            }
            assert!(floor.height().abs() < 0.003, "{}", floor.height());
        }
    }

    #[test]
    fn before_a_slow_foot_the_floor_is_the_lowest_sole() {
        let config = MocapIkConfig::default();
        let mut floor = LiveFloor::default();
        assert_eq!(floor.follow(None, (0.07, 0.2), 0.01, 1.0, &config), 0.07);
        assert_eq!(floor.follow(None, (0.05, 0.2), 0.01, 1.0, &config), 0.05);
    }
}
