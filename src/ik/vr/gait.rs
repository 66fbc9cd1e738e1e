//! The walking gait read from the arms' swing and the head's sway (`Gait`): which
//! foot the body is over, and when it changes.

use glam::Vec3;

use super::VrIkConfig;
use super::follower::settle;

/// The arms' swing is smoothed over this, seconds (a frame's jerk out, no lag a
/// stride would notice).
const ARM_SWING_SECONDS: f32 = 0.05;

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
    /// Whether the body walks backwards (`turn_round`): the hips went back faster
    /// than half `gait_speed` and have not gone forward so fast since; the left of
    /// its path is the body's right.
    backward: bool,
    /// The side the body is over: 1 left, −1 right, 0 not known yet.
    side: f32,
    /// Seconds since the side last changed, and the smoothed time between changes.
    since: f32,
    pub(super) half_stride: f32,
    /// How far the left hand is ahead of the right along where the hips face,
    /// avatar metres, last frame; and its rate, smoothed over `ARM_SWING_SECONDS`,
    /// metres per second.
    arms: f32,
    arms_rate: f32,
    /// The rate last frame, unsmoothed, and the mean square of its change from
    /// frame to frame over `HALF_STRIDE.1` (a swing's rate barely changes in a
    /// frame: this is mostly the devices' noise), (metres per second)².
    arms_raw_rate: f32,
    arms_noise: f32,
    /// Seconds since the arms last swung (faster than `arm_swing_threshold` and
    /// their noise).
    arms_still: f32,
    /// Whether the walk's first step, taken before any change of side, has started
    /// (`Gait::take_first_step`).
    first_step: bool,
    /// Whether the side has changed since the gait started (the side read first is
    /// no change).
    changed: bool,
}

/// Bounds of `Gait::half_stride` (the shortest is also the least time between two
/// changes of side), and where it starts, seconds.
const HALF_STRIDE: (f32, f32, f32) = (0.25, 1.0, 0.5);

impl Gait {
    /// A gait starting afresh: the head's horizontal position, and how far the left
    /// hand is ahead of the right (`arms`, avatar metres).
    pub(super) fn new(head: Vec3, arms: f32) -> Self {
        Self {
            fast: head,
            slow: head,
            arms,
            // Arms not seen swinging: the sway says from the start.
            arms_still: HALF_STRIDE.1,
            half_stride: HALF_STRIDE.2,
            ..Self::default()
        }
    }

    /// Follows the arms (`arms`: how far the left hand is ahead of the right along
    /// where the hips face, avatar metres) and the head's horizontal position for
    /// one frame; the side the body has just come over (1 left, −1 right), if it
    /// changed (the first side read is none: the body was over it already; nor is
    /// a change sooner than the shortest half stride after the last one): the
    /// arms' while they swing faster than `arm_swing_threshold` of `height` per
    /// second and than three times the noise measured on that rate, the side kept
    /// while they turn back, and the head's sway
    /// once they have not swung so for half a stride. Sideways is across the path's
    /// velocity; the two smoothings lag behind the head along the path by
    /// velocity · time constant, and that difference is taken out.
    pub(super) fn read(
        &mut self,
        c: &VrIkConfig,
        head: Vec3,
        arms: f32,
        height: f32,
        dt: f32,
    ) -> Option<f32> {
        let rate = (arms - self.arms) / dt;
        self.arms = arms;
        let change = rate - self.arms_raw_rate;
        self.arms_raw_rate = rate;
        self.arms_noise += (change * change - self.arms_noise) * settle(dt, HALF_STRIDE.1);
        let smooth = settle(dt, ARM_SWING_SECONDS);
        self.arms_rate += (rate - self.arms_rate) * smooth;
        let tau = c.sway_seconds.max(1e-3);
        let fast_tau = tau / 4.0;
        let k = settle(dt, tau);
        self.fast = self.fast.lerp(head, (dt / fast_tau).min(1.0));
        let slow = self.slow.lerp(head, k);
        self.velocity = self.velocity.lerp((slow - self.slow) / dt, k);
        self.slow = slow;
        // The body's left: the path's, or its right walking backwards.
        let across = if self.backward { -Vec3::Y } else { Vec3::Y };
        let left = across.cross(self.velocity).normalize_or_zero();
        let offset = (self.fast - self.slow - self.velocity * (tau - fast_tau)).dot(left);
        self.bias += (offset - self.bias) * k;
        let sway = offset - self.bias;
        let threshold = c.sway_threshold * height;
        // The noise left on the smoothed rate: a white rate of variance s² changes
        // by 2s² a frame in mean square, and smoothing it by `smooth` leaves
        // s²·smooth/(2 − smooth). The arms swing only when their rate is past the
        // threshold and past three standard deviations of that noise (a noisy rate
        // crossing zero at the arms' turns, or barely swinging arms, would
        // otherwise flip the side and back, and keep the sway from saying).
        let noise = (self.arms_noise / 2.0 * smooth / (2.0 - smooth)).sqrt();
        let swing = (c.arm_swing_threshold * height).max(3.0 * noise);
        self.arms_still = if self.arms_rate.abs() > swing {
            0.0
        } else {
            self.arms_still + dt
        };
        let side = if self.arms_rate > swing {
            1.0
        } else if self.arms_rate < -swing {
            -1.0
        } else if self.arms_still < self.half_stride {
            self.side
        } else if sway > threshold {
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
        // No foot lands and the other lifts sooner than the shortest half stride:
        // a change that soon after the last one is noise on the arms or the head
        // flipping the side and back, and is not read (it would lift the foot the
        // body stands on, both feet in the air for a step's time).
        if self.changed && self.since < HALF_STRIDE.0 {
            return None;
        }
        if self.side != 0.0 {
            let (low, high, _) = HALF_STRIDE;
            self.half_stride += (self.since.clamp(low, high) - self.half_stride) * 0.5;
        }
        self.since = 0.0;
        // The first side read is where the body already was, not a change of
        // support: no foot steps for it.
        let first = self.side == 0.0;
        self.changed |= !first;
        self.side = side;
        (!first).then_some(side)
    }

    /// The body walks the other way round (backwards, or forwards again): the arms
    /// are read along the opposite way from now on, and the body's left is the
    /// other side of its path. What is kept of both turns round too, so that the
    /// turn is neither a swing nor a sway.
    pub(super) fn turn_round(&mut self) {
        self.backward = !self.backward;
        self.arms = -self.arms;
        self.arms_rate = -self.arms_rate;
        self.arms_raw_rate = -self.arms_raw_rate;
        self.bias = -self.bias;
    }

    /// Whether the body walks backwards (`turn_round`).
    pub(super) fn is_backward(&self) -> bool {
        self.backward
    }

    /// The side the body is over: 1 left, −1 right, 0 not known yet.
    pub(super) fn side(&self) -> f32 {
        self.side
    }

    /// Whether the walk's first step may start now: the side the body is over is
    /// read and has not changed yet, and no such step was taken; marks it taken.
    pub(super) fn take_first_step(&mut self) -> bool {
        let now = self.side != 0.0 && !self.changed && !self.first_step;
        self.first_step |= now;
        now
    }

    /// Seconds since the side last changed.
    pub(super) fn since(&self) -> f32 {
        self.since
    }

    /// Whether the arms have swung (faster than `arm_swing_threshold` and their
    /// noise) within the last half stride.
    pub(super) fn arms_swing(&self) -> bool {
        self.arms_still < self.half_stride
    }

    /// Whether the gait says nothing to step by: not seen yet, or overdue.
    pub(super) fn is_stalled(&self) -> bool {
        self.side == 0.0 || self.since > self.half_stride
    }
}

/// The head's height and then its vertical velocity are smoothed over this
/// before each is differentiated, seconds: a headset's millimetres of noise,
/// differentiated twice at 90 Hz, would be metres per second squared; a
/// runner's bob (three steps a second) keeps about half its amplitude through
/// the two smoothings, a walker's (two) more.
const BOB_SMOOTHING_SECONDS: f32 = 0.1;

/// The mean square of the head's vertical acceleration is taken over this,
/// seconds: a stride or two of a walker or runner.
const BOB_SECONDS: f32 = 1.0;

/// The head's vertical bob (`Bob`): how hard it accelerates up and down with each
/// step. A walker vaults over a stiff leg, so the head's downward acceleration
/// stays below gravity (an inverted pendulum falls at `v²/l`, under `g` at a
/// walk); a runner's body falls freely between steps and is caught by a springy
/// leg, so the head accelerates at about `g` either way.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Bob {
    /// The head's height and vertical velocity, smoothed over
    /// `BOB_SMOOTHING_SECONDS`; whether they have been seeded.
    height: f32,
    velocity: f32,
    started: bool,
    /// The mean square of the vertical acceleration over `BOB_SECONDS` (over the
    /// time seen, until that is longer), (avatar metres per second squared)²;
    /// the time seen, seconds.
    mean_square: f32,
    seen: f32,
}

impl Bob {
    /// Follows the head's height (avatar metres) for one frame; the root mean
    /// square of its vertical acceleration over the last `BOB_SECONDS`, avatar
    /// metres per second squared.
    pub(super) fn follow(&mut self, height: f32, dt: f32) -> f32 {
        if !self.started {
            *self = Self {
                height,
                started: true,
                ..Self::default()
            };
            return 0.0;
        }
        let k = settle(dt, BOB_SMOOTHING_SECONDS);
        let smoothed = self.height + (height - self.height) * k;
        let velocity = self.velocity + ((smoothed - self.height) / dt - self.velocity) * k;
        let acceleration = (velocity - self.velocity) / dt;
        self.height = smoothed;
        self.velocity = velocity;
        self.seen += dt;
        let k = settle(dt, BOB_SECONDS).max(dt / self.seen);
        self.mean_square += (acceleration * acceleration - self.mean_square) * k;
        self.mean_square.sqrt()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A runner's head, metres above its mean, `t` seconds in: steps of `step`
    /// seconds, each a flight of `flight` of it (falling freely) and a stance
    /// that catches the fall, dipping `catch` times as deep as a sinusoid that
    /// merely turns the velocity round would.
    pub(in crate::ik::vr) fn runner_head(t: f32, step: f32, flight: f32, catch: f32) -> f32 {
        let (fly, stand) = (flight * step, (1.0 - flight) * step);
        let up = GRAVITY_TEST * fly / 2.0;
        let s = t.rem_euclid(step);
        if s < fly {
            up * s - GRAVITY_TEST * s * s / 2.0
        } else {
            -catch * up * stand / std::f32::consts::PI
                * (std::f32::consts::PI * (s - fly) / stand).sin()
        }
    }

    const GRAVITY_TEST: f32 = 9.81;

    #[test]
    fn the_bob_tells_a_runner_from_a_brisk_walker() {
        // A runner at 2.8 steps a second, in the air half the time, bobbing 15 cm;
        // a brisk walker's head rising and falling 6 cm twice a second, with 1 mm of
        // noise on every sample. Once a second has been seen, the runner's rms
        // stays above 0.3 g, the walker's under 0.15 g (the gait's bounds are
        // 0.25 g and 0.4 g).
        let dt = 1.0 / 90.0;
        let mut noise = crate::filter::device::uniform_noise(0x2545_f491, 0.001);
        let (mut runner, mut walker) = (Bob::default(), Bob::default());
        for i in 0..270 {
            let t = i as f32 * dt;
            let run = runner.follow(1.6 + runner_head(t, 0.36, 0.55, 2.0), dt);
            let walk = walker.follow(
                1.6 + 0.03 * (std::f32::consts::TAU * 2.0 * t).sin() + noise(),
                dt,
            );
            if t > 1.0 {
                assert!(run > 0.3 * GRAVITY_TEST, "{t}: {run}");
                assert!(walk < 0.15 * GRAVITY_TEST, "{t}: {walk}");
            }
        }
    }

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
        let mut gait = Gait::new(path(0.0).0, 0.0);
        let (mut agree, mut frames, mut changes) = (0, 0, 0);
        for i in 1..=1200 {
            let t = i as f32 * dt;
            let (head, sway) = path(t);
            if gait.read(&config, head, 0.0, height, dt).is_some() && t > 2.0 {
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

    #[test]
    fn walking_backwards_the_sway_says_the_side_of_the_body_not_of_the_path() {
        // Walking 1 m/s backwards (along −Z, the body facing +Z), swaying ±3 cm to
        // the body's left (+X) and right every 1.2 s, the arms still: once turned
        // round, the side read is the body's. The left of the path is the body's
        // right: read across the path alone, the side would be the other foot.
        let config = VrIkConfig::default();
        let (dt, period, height) = (1.0 / 90.0, 1.2, 1.6);
        let sway = |t: f32| 0.03 * (std::f32::consts::TAU * t / period).sin();
        let head = |t: f32| Vec3::new(sway(t), 0.0, -t);
        let mut gait = Gait::new(head(0.0), 0.0);
        gait.turn_round();
        let (mut agree, mut frames) = (0, 0);
        for i in 1..=900 {
            let t = i as f32 * dt;
            gait.read(&config, head(t), 0.0, height, dt);
            if t > 2.0 {
                frames += 1;
                agree += usize::from(gait.side == sway(t).signum());
            }
        }
        assert!(agree as f32 > 0.8 * frames as f32, "{agree} of {frames}");
    }

    #[test]
    fn the_first_side_read_starts_no_step() {
        // Arms swinging from the first frame: the side is read at once, but only
        // its next change is a step.
        let config = VrIkConfig::default();
        let (dt, height) = (1.0 / 90.0, 1.6);
        let arms = |t: f32| 0.15 * (std::f32::consts::TAU * t / 1.1).sin();
        let mut gait = Gait::new(Vec3::ZERO, arms(0.0));
        let mut changes = Vec::new();
        for i in 1..=60 {
            let t = i as f32 * dt;
            if let Some(side) = gait.read(&config, Vec3::ZERO, arms(t), height, dt) {
                changes.push((t, side));
            }
        }
        assert_ne!(gait.side, 0.0);
        // The arms turn back at a quarter stride (0.275 s): the one change.
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].0 > 0.25 && changes[0].1 < 0.0, "{changes:?}");
    }

    #[test]
    fn swinging_arms_say_which_foot_steps_even_against_the_sway() {
        // Walking 1.2 m/s straight ahead with a 1.1 s stride, the left hand gaining
        // ±15 cm on the right, and the head swaying the wrong way round: the side
        // read is the arms' (left hand coming forward: the right foot steps, the body
        // is over the left) once started, but for the smoothing's lag and the
        // threshold after each of the arms' turns (about 6% of a half stride each).
        let config = VrIkConfig::default();
        let (dt, period, height) = (1.0 / 90.0, 1.1, 1.6);
        let phase = |t: f32| std::f32::consts::TAU * t / period;
        let head = |t: f32| Vec3::new(-0.03 * phase(t).cos(), 0.0, 1.2 * t);
        let arms = |t: f32| 0.15 * phase(t).sin();
        let mut gait = Gait::new(head(0.0), arms(0.0));
        let (mut agree, mut frames, mut changes) = (0, 0, 0);
        for i in 1..=900 {
            let t = i as f32 * dt;
            let changed = gait.read(&config, head(t), arms(t), height, dt).is_some();
            if t > 1.0 {
                changes += usize::from(changed);
                frames += 1;
                agree += usize::from(gait.side == phase(t).cos().signum());
            }
        }
        assert!(agree as f32 > 0.85 * frames as f32, "{agree} of {frames}");
        // Two changes a stride over the 9 s after the first, give or take one.
        let expected = (9.0 / period * 2.0) as i32;
        assert!(
            (changes as i32 - expected).abs() <= 1,
            "{changes} changes, {expected} expected"
        );
    }

    #[test]
    fn noise_on_still_arms_leaves_the_side_to_the_sway() {
        // Walking 1.2 m/s straight ahead, swaying ±3 cm every 1.2 s, with the arms
        // held still but for 1 cm of white noise on each hand every frame: the
        // noise's rate is no swing (it would flip the side at random and keep the
        // sway from saying), so the side read is the sway's.
        let config = VrIkConfig::default();
        let (dt, period, height) = (1.0 / 90.0, 1.2, 1.6);
        let mut left = crate::filter::device::uniform_noise(0x9e37_79b9, 0.01);
        let mut right = crate::filter::device::uniform_noise(0x7f4a_7c15, 0.01);
        let sway = |t: f32| 0.03 * (std::f32::consts::TAU * t / period).sin();
        let head = |t: f32| Vec3::new(sway(t), 0.0, 1.2 * t);
        let mut gait = Gait::new(head(0.0), left() - right());
        let (mut agree, mut frames, mut changes) = (0, 0, 0);
        for i in 1..=900 {
            let t = i as f32 * dt;
            let changed = gait
                .read(&config, head(t), left() - right(), height, dt)
                .is_some();
            if t > 2.0 {
                changes += usize::from(changed);
                frames += 1;
                agree += usize::from(gait.side == sway(t).signum());
            }
        }
        assert!(agree as f32 > 0.8 * frames as f32, "{agree} of {frames}");
        // Two changes a period over the 8 s after settling, give or take one.
        let expected = (8.0 / period * 2.0) as i32;
        assert!(
            (changes as i32 - expected).abs() <= 1,
            "{changes} changes, {expected} expected"
        );
    }
}
