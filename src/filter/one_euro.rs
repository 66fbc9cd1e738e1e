//! The One Euro filter on scalars, and on a whole `HumanoidPose`.
//!
//! Per value: `x̂ = x̂₋ + α(f_c)·(x − x̂₋)` with `α(f) = 1 / (1 + 1/(2π·f·dt))` and
//! cutoff `f_c = min_cutoff + beta·|dx̂|`, where `dx̂` is the derivative low-passed at
//! `d_cutoff`. A rotation is filtered as its four components (after turning it into
//! the previous output's hemisphere, so `q` and `−q` are one rotation) and then
//! normalized; the hips position as three scalars. Fixed arrays, no heap: the
//! filter runs on the solver thread every frame.

use glam::{Quat, Vec4};

use crate::humanoid::HumanoidPose;
use crate::humanoid::bone::{ALL, BONE_COUNT};

/// The filter's three parameters, as the paper names them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct OneEuroConfig {
    /// Cutoff frequency at rest, Hz: lower removes more jitter, adds lag when slow.
    pub min_cutoff: f32,
    /// How fast the cutoff rises with speed (per unit/s): higher follows fast motion.
    pub beta: f32,
    /// Cutoff for the derivative, Hz.
    pub d_cutoff: f32,
}

impl Default for OneEuroConfig {
    fn default() -> Self {
        Self {
            min_cutoff: 1.0,
            beta: 0.5,
            d_cutoff: 1.0,
        }
    }
}

/// `α` of a first-order low-pass at `cutoff` Hz over `dt` seconds.
fn alpha(cutoff: f32, dt: f32) -> f32 {
    let tau = 1.0 / (std::f32::consts::TAU * cutoff);
    1.0 / (1.0 + tau / dt)
}

/// One filtered signal of `N` components (a scalar, a position, a quaternion).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Signal {
    value: Vec4,
    derivative: Vec4,
    primed: bool,
}

impl Signal {
    fn filter(&mut self, config: &OneEuroConfig, x: Vec4, dt: f32) -> Vec4 {
        if !self.primed || dt.is_nan() || dt <= 0.0 {
            *self = Self {
                value: x,
                derivative: Vec4::ZERO,
                primed: true,
            };
            return x;
        }
        let dx = (x - self.value) / dt;
        self.derivative += alpha(config.d_cutoff, dt) * (dx - self.derivative);
        let cutoff = config.min_cutoff + config.beta * self.derivative.length();
        self.value += alpha(cutoff, dt) * (x - self.value);
        self.value
    }
}

/// The One Euro filter over every bone of a pose and its hips position.
#[derive(Debug, Clone)]
pub struct PoseFilter {
    config: OneEuroConfig,
    bones: [Signal; BONE_COUNT],
    hips: Signal,
}

impl PoseFilter {
    #[must_use]
    pub fn new(config: OneEuroConfig) -> Self {
        Self {
            config,
            bones: [Signal::default(); BONE_COUNT],
            hips: Signal::default(),
        }
    }

    /// Forgets the past (after a jump in the stream): the next frame passes as is.
    pub fn reset(&mut self) {
        *self = Self::new(self.config);
    }

    /// Filters `pose` in place, `dt` seconds after the previous frame. Absent bones
    /// are skipped (and start afresh when they come back).
    pub fn run(&mut self, pose: &mut HumanoidPose, dt: f32) {
        for bone in ALL {
            let signal = &mut self.bones[bone.index()];
            let Some(q) = pose.rotation(bone) else {
                signal.primed = false;
                continue;
            };
            let x = Vec4::from(q);
            // q and −q are one rotation: follow the previous output's hemisphere.
            let x = if signal.primed && x.dot(signal.value) < 0.0 {
                -x
            } else {
                x
            };
            let filtered = signal.filter(&self.config, x, dt);
            let q = Quat::from_vec4(filtered);
            let length = q.length();
            if length > 1e-6 {
                pose.set_rotation(bone, q / length);
            }
        }
        let hips = self
            .hips
            .filter(&self.config, pose.hips_position.extend(0.0), dt);
        pose.hips_position = hips.truncate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone;
    use glam::Vec3;

    fn pose_with(spine: Quat, hips: Vec3) -> HumanoidPose {
        let mut pose = HumanoidPose::default();
        pose.set_rotation(HumanBone::Spine, spine);
        pose.hips_position = hips;
        pose
    }

    #[test]
    fn a_still_signal_passes_unchanged() {
        let mut filter = PoseFilter::new(OneEuroConfig::default());
        let q = Quat::from_rotation_x(0.4);
        for _ in 0..100 {
            let mut pose = pose_with(q, Vec3::new(0.0, 0.9, 0.0));
            filter.run(&mut pose, 1.0 / 120.0);
            assert!(
                pose.rotation(HumanBone::Spine)
                    .unwrap()
                    .abs_diff_eq(q, 1e-6)
            );
            assert!(
                pose.hips_position
                    .abs_diff_eq(Vec3::new(0.0, 0.9, 0.0), 1e-6)
            );
        }
    }

    #[test]
    fn jitter_is_reduced_and_a_step_is_followed() {
        let config = OneEuroConfig::default();
        let mut filter = PoseFilter::new(config);
        let dt = 1.0 / 120.0;
        // ±1 cm alternating jitter around 0.9 m: the output moves far less.
        let mut spread = 0.0f32;
        for i in 0..240 {
            let jitter = if i % 2 == 0 { 0.01 } else { -0.01 };
            let mut pose = pose_with(Quat::IDENTITY, Vec3::new(0.0, 0.9 + jitter, 0.0));
            filter.run(&mut pose, dt);
            if i > 120 {
                spread = spread.max((pose.hips_position.y - 0.9).abs());
            }
        }
        assert!(spread < 0.002, "{spread}");
        // A 20 cm step is reached within half a second.
        let mut y = 0.0;
        for _ in 0..60 {
            let mut pose = pose_with(Quat::IDENTITY, Vec3::new(0.0, 1.1, 0.0));
            filter.run(&mut pose, dt);
            y = pose.hips_position.y;
        }
        assert!((y - 1.1).abs() < 0.005, "{y}");
    }

    #[test]
    fn opposite_quaternion_signs_are_one_rotation() {
        let mut filter = PoseFilter::new(OneEuroConfig::default());
        let q = Quat::from_rotation_y(1.0);
        for i in 0..20 {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            let mut pose = pose_with(q * sign, Vec3::ZERO);
            filter.run(&mut pose, 1.0 / 60.0);
            let out = pose.rotation(HumanBone::Spine).unwrap();
            assert!(out.angle_between(q) < 1e-4);
        }
    }
}
