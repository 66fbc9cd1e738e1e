//! Smoothing of tracked device poses before VR-mode IK: a causal FIR filter
//! designed for the performer's frame rate, so noisy headsets, controllers and
//! trackers do not shake the avatar while it keeps up with the motion.
//!
//! Why not a low-pass (or the One Euro filter): those lag, and removing enough
//! jitter to reach the ground truth's jerk with them costs centimetres of lag.
//! Here the estimate of the position now is `x̂ = Σ hₖ·y₋ₖ` over the last `N`
//! samples, with `h` the minimiser of
//!
//! `E[(x̂ − x)²] + λ·E[(jerk of the noise part of x̂)²]`
//!
//! under a prior on the motion (random velocity, acceleration and jerk of given
//! RMS, so `x₋ₖ − x = Σₘ cₘ·(−k·dt)ᵐ/m!`), white noise of the given RMS on every
//! sample, and `Σ hₖ = 1` (a device at rest stays exactly where it is). The jerk
//! is weighed up to `SHAKE_CUTOFF_HZ`, and shake faster than that as shake at it
//! (`ShakeWeight`): weighed at every frequency, the jerk's growth as `ω⁶` makes
//! the filter spend its smoothing on shimmer between frames and leave a wobble
//! over a few frames, where the eye sees it. That is
//! `(P + σ²·I + λσ²·R)·w = 1`, `h = w / Σw`, with `P` the prior's covariance of
//! the past samples' offsets and `R` the shake weight's Toeplitz matrix: a small
//! symmetric positive definite system, solved by Cholesky when the frame rate
//! changes, on fixed arrays (no heap; it runs on the solver thread).
//! Hand-written because no crate designs this filter.
//!
//! One prior cannot be both still and agile: a standing foot, a resting hand
//! or a head carried at a steady walk want heavy smoothing, a swing wants
//! little. So positions run three designs of the filter at once, under the
//! prior with its acceleration and jerk scaled by `MOTION_SCALES` (steady, the
//! person's, a swing; the speed is the person's in all three), and weigh their
//! estimates each frame by how likely each model finds the recent samples. The
//! evidence is the contrast `d = x̂_swing − x̂_steady` of the two outer
//! estimates: a linear function of the window, so under model `m` it is normal
//! with variance `cᵀ·(Pₘ + σ²·I)·c` per axis (`c` the difference of the two
//! designs' weights, which sums to 0, so the device's place drops out). The
//! models' probabilities are updated with that likelihood (to the power `1/N`:
//! consecutive windows share all but one sample, so each frame adds a window's
//! evidence once per `N` frames) and a Markov chain that leaves a model with
//! probability `dt / MODEL_DWELL_S` per frame, as in an interacting multiple
//! model filter without the state mixing (a window filter has no state to
//! mix). The weighted estimates sum to an offset from the newest sample, so a
//! device at rest stays exactly put.
//!
//! Rotations get the same kind of filter, designed as the motion of a point
//! `ROTATION_ARM` out from the device under the same prior: the quaternions of
//! the window, each put on the hemisphere of the one before it, are summed with
//! the weights and normalized. That is not a geodesic mean, but a steady 3 rad/s
//! turn still comes out within 0.2° of the device (see the tests).

use glam::{Quat, Vec3, Vec3A, Vec4};

/// The most taps a filter can have.
pub const MAX_TAPS: usize = 48;

/// The frame interval the `smoothness` weight is given at (120 Hz).
const REFERENCE_DT: f64 = 1.0 / 120.0;

/// The frequency up to which the noise the filter leaves is weighed by its jerk,
/// Hz; faster shake weighs as much as shake at this frequency, no more. Human
/// motion has next to nothing above 10 Hz (gait analysis low-passes at 6-12 Hz);
/// up to twice that, shake is weighed as jerk. Weighed so at every frequency, the
/// jerk's growth as `ω⁶` would spend the smoothing on shimmer between frames and
/// leave a wobble over a few frames, where the eye sees it.
const SHAKE_CUTOFF_HZ: f64 = 20.0;

/// A rotation is filtered as the motion of a point this far out from the device
/// (metres: a forearm), so its noise is weighed against the positions' motion
/// prior: 1° of rotation noise counts as 5.2 mm at this arm.
pub const ROTATION_ARM: f32 = 0.3;

/// The motion models positions are filtered under: the factors on the prior's
/// RMS acceleration and jerk (its speed stays the person's).
/// - 0.1: a device held still or carried at a steady speed (a standing foot, a
///   resting hand, a headset over an even walk), where what changes is a tenth
///   of the person's average, the body's sway;
/// - 1: the person's motion as configured;
/// - 3: a swing: a foot's push-off and heel strike or a hand's turn at the end
///   of its swing reach several times the RMS acceleration of a stride.
const MOTION_SCALES: [f64; MODELS] = [0.1, 1.0, 3.0];

/// How many motion models positions are filtered under.
const MODELS: usize = 3;

/// The motion model the filter starts in: the person's.
const CONFIGURED_MODEL: usize = 1;

/// How long a person's motion keeps its character, seconds: about a step (a
/// stance phase lasts some 0.6 s at a walk, a swing 0.4 s). A model is left
/// with probability `dt / MODEL_DWELL_S` per frame.
const MODEL_DWELL_S: f32 = 0.5;

/// How noisy the devices are and what motion to expect of them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DeviceFilterConfig {
    /// RMS noise of a device position on each axis, metres; 0 leaves positions
    /// unfiltered.
    pub noise_m: f32,
    /// RMS noise of a device rotation about each axis, degrees; 0 leaves rotations
    /// unfiltered.
    pub rotation_noise_deg: f32,
    /// RMS speed of a device, m/s.
    pub velocity: f32,
    /// RMS acceleration, m/s².
    pub acceleration: f32,
    /// RMS jerk, m/s³.
    pub jerk: f32,
    /// Weight of the jitter the noise leaves against position error (at 120 Hz;
    /// scaled with the frame rate so it means the same jerk in m/s³): higher is
    /// smoother and lags more.
    pub smoothness: f32,
    /// Past samples the estimate is made of at 120 Hz: the window spans
    /// `taps / 120` seconds at every frame rate (2..=48 samples), so a 30 Hz device
    /// is averaged over the same time as a 120 Hz one, not four times as long.
    pub taps: usize,
}

impl Default for DeviceFilterConfig {
    /// Consumer headsets and controllers: 2 mm and 0.25° of noise, a person's
    /// motion.
    fn default() -> Self {
        Self {
            noise_m: 0.002,
            rotation_noise_deg: 0.25,
            velocity: 1.0,
            acceleration: 3.0,
            jerk: 100.0,
            smoothness: 800.0,
            taps: 32,
        }
    }
}

/// The filter's weights for one frame interval: `weights[k]` multiplies the
/// sample `k` frames back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taps {
    weights: [f32; MAX_TAPS],
    len: usize,
}

impl Taps {
    /// Passes samples through unchanged.
    pub const IDENTITY: Self = {
        let mut weights = [0.0; MAX_TAPS];
        weights[0] = 1.0;
        Self { weights, len: 1 }
    };

    /// Designs the weights for samples `dt` seconds apart (see the module docs).
    #[must_use]
    pub fn design(config: &DeviceFilterConfig, dt: f32) -> Self {
        Self::design_scaled(config, dt, 1.0)
    }

    /// The weights under the motion prior with its acceleration and jerk scaled
    /// by `scale`.
    fn design_scaled(config: &DeviceFilterConfig, dt: f32, scale: f64) -> Self {
        Self::design_weighed(config, dt, scale, SHAKE_CUTOFF_HZ)
    }

    /// The weights with the noise weighed by its jerk up to `cutoff_hz`.
    fn design_weighed(config: &DeviceFilterConfig, dt: f32, scale: f64, cutoff_hz: f64) -> Self {
        let sigma2 = f64::from(config.noise_m).powi(2);
        let dt = f64::from(dt);
        if sigma2.is_nan() || sigma2 <= 0.0 || !dt.is_finite() || dt <= 0.0 {
            return Self::IDENTITY;
        }
        // The same span in seconds at every rate: `taps` samples at 120 Hz.
        let span = config.taps as f64 * REFERENCE_DT;
        let n = ((span / dt).round() as usize).clamp(2, MAX_TAPS);
        let lambda = f64::from(config.smoothness.max(0.0)) * (REFERENCE_DT / dt).powi(6);
        let prior = Prior::new(config, scale);
        let shake = ShakeWeight::new(dt, n, cutoff_hz);
        let mut m = [[0.0f64; MAX_TAPS]; MAX_TAPS];
        for (i, row) in m.iter_mut().enumerate().take(n) {
            for (j, value) in row.iter_mut().enumerate().take(n) {
                let p = prior.covariance(i, j, dt);
                let d = shake.0[i.abs_diff(j)];
                let identity = if i == j { 1.0 } else { 0.0 };
                *value = p + sigma2 * identity + lambda * sigma2 * d;
            }
        }
        let Some(w) = solve_spd(&mut m, n) else {
            return Self::IDENTITY;
        };
        let sum: f64 = w[..n].iter().sum();
        if !sum.is_finite() || sum.abs() <= f64::EPSILON {
            return Self::IDENTITY;
        }
        let mut weights = [0.0; MAX_TAPS];
        for (out, w) in weights.iter_mut().zip(&w[..n]) {
            *out = (w / sum) as f32;
        }
        Self { weights, len: n }
    }

    /// The weights for device rotations (see the module docs).
    #[must_use]
    pub fn design_rotation(config: &DeviceFilterConfig, dt: f32) -> Self {
        let as_position = DeviceFilterConfig {
            noise_m: config.rotation_noise_deg.to_radians() * ROTATION_ARM,
            ..*config
        };
        Self::design(&as_position, dt)
    }

    /// The weights, newest sample first.
    #[must_use]
    pub fn weights(&self) -> &[f32] {
        &self.weights[..self.len]
    }
}

/// The weight of the noise the estimate keeps, by frequency: its jerk, `ω⁶` (`ω`
/// in radians per sample; in m²/s⁶ over `dt⁶`), up to a cut-off `a` and as much as
/// there above, as the autocorrelation of that spectrum by lag:
/// `r(k) = (1/π)·∫₀^π min(ω, a)⁶·cos(kω) dω`. The penalty is `Σᵢⱼ hᵢ·hⱼ·r(|i−j|)`.
struct ShakeWeight([f64; MAX_TAPS]);

impl ShakeWeight {
    /// The weights of lags `0..n` for samples `dt` seconds apart, cut off at
    /// `cutoff_hz` (at the samples' Nyquist frequency at most).
    fn new(dt: f64, n: usize, cutoff_hz: f64) -> Self {
        use std::f64::consts::{FRAC_PI_2, PI};
        let a = (std::f64::consts::TAU * cutoff_hz * dt).min(PI);
        let mut r = [0.0; MAX_TAPS];
        r[0] = (a.powi(7) / 7.0 + a.powi(6) * (PI - a)) / PI;
        for (k, r) in r.iter_mut().enumerate().take(n).skip(1) {
            let k = k as f64;
            // ∫₀^a ω⁶·cos(kω) dω = Σⱼ 6!/(6−j)!·a^(6−j)·sin(ka + jπ/2)/k^(j+1)
            // (the antiderivative is 0 at 0), then a⁶·∫_a^π cos(kω) dω.
            let (mut head, mut factor) = (0.0, 1.0);
            for j in 0..=6 {
                head += factor * a.powi(6 - j) * (k * a + f64::from(j) * FRAC_PI_2).sin()
                    / k.powi(j + 1);
                factor *= f64::from(6 - j);
            }
            let tail = -a.powi(6) * (k * a).sin() / k;
            *r = (head + tail) / PI;
        }
        Self(r)
    }
}

/// The motion prior's variances: velocity, acceleration and jerk, m²/sⁿ.
struct Prior([f64; 3]);

impl Prior {
    /// The configured prior with its acceleration and jerk scaled by `scale`.
    fn new(config: &DeviceFilterConfig, scale: f64) -> Self {
        let rms = [
            f64::from(config.velocity),
            f64::from(config.acceleration) * scale,
            f64::from(config.jerk) * scale,
        ];
        Self(rms.map(|s| s * s))
    }

    /// The covariance of the offsets from now of the samples `i` and `j`
    /// frames back, m²: `x₋ₖ − x = Σₘ cₘ·(−k·dt)ᵐ/m!`.
    fn covariance(&self, i: usize, j: usize, dt: f64) -> f64 {
        let (ti, tj) = (-(i as f64) * dt, -(j as f64) * dt);
        let (mut pi, mut pj, mut factorial) = (1.0, 1.0, 1.0);
        let mut p = 0.0;
        for (order, variance) in self.0.iter().enumerate() {
            pi *= ti;
            pj *= tj;
            factorial *= (order + 1) as f64;
            p += variance * pi * pj / (factorial * factorial);
        }
        p
    }
}

/// Solves `m·w = 1` for the symmetric positive definite top-left `n×n` block of
/// `m` by Cholesky (in place); `None` when it is not positive definite.
fn solve_spd(m: &mut [[f64; MAX_TAPS]; MAX_TAPS], n: usize) -> Option<[f64; MAX_TAPS]> {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    for j in 0..n {
        let (upper, lower) = m.split_at_mut(j + 1);
        let row = &mut upper[j];
        let d = row[j] - dot(&row[..j], &row[..j]);
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        row[j] = d.sqrt();
        for other in lower.iter_mut().take(n - j - 1) {
            other[j] = (other[j] - dot(&other[..j], &row[..j])) / row[j];
        }
    }
    // L·z = 1, then Lᵀ·w = z.
    let mut w = [0.0f64; MAX_TAPS];
    for i in 0..n {
        w[i] = (1.0 - dot(&m[i][..i], &w[..i])) / m[i][i];
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| m[k][i] * w[k]).sum();
        w[i] = (w[i] - s) / m[i][i];
    }
    Some(w)
}

/// What a `History` holds: a position (`Vec3A`) or a quaternion (`Vec4`).
trait Sample:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<f32, Output = Self>
{
    const ZERO: Self;
}

impl Sample for Vec3A {
    const ZERO: Self = Vec3A::ZERO;
}

impl Sample for Vec4 {
    const ZERO: Self = Vec4::ZERO;
}

/// The last samples of one device position or rotation: a ring written twice, at
/// `at` and `at + MAX_TAPS`, so the newest `MAX_TAPS` samples always sit side by
/// side (newest last, ending at `at + MAX_TAPS`) and the sum runs without
/// wrapping.
#[derive(Debug, Clone, Copy, PartialEq)]
struct History<S> {
    samples: [S; 2 * MAX_TAPS],
    at: usize,
    primed: bool,
}

impl<S: Sample> Default for History<S> {
    fn default() -> Self {
        Self {
            samples: [S::ZERO; 2 * MAX_TAPS],
            at: 0,
            primed: false,
        }
    }
}

impl<S: Sample> History<S> {
    /// Adds `p`. Before the ring is full the first sample stands in for the
    /// missing older ones.
    fn push(&mut self, p: S) {
        if !self.primed {
            self.samples = [p; 2 * MAX_TAPS];
            self.primed = true;
        }
        self.at = (self.at + 1) % MAX_TAPS;
        self.samples[self.at] = p;
        self.samples[self.at + MAX_TAPS] = p;
    }

    /// The weighted sum of the samples, newest first, as an offset from the
    /// newest sample (so a device at rest stays exactly put).
    fn offset(&self, taps: &Taps) -> S {
        let newest = self.at + MAX_TAPS;
        let p = self.samples[newest];
        let window = &self.samples[newest + 1 - taps.len..newest];
        let mut offset = S::ZERO;
        for (w, s) in taps.weights()[1..].iter().zip(window.iter().rev()) {
            offset = offset + (*s - p) * *w;
        }
        offset
    }

    /// The newest sample.
    fn newest(&self) -> Option<S> {
        self.primed.then(|| self.samples[self.at])
    }
}

/// The position filter's motion models for one frame interval (see the module
/// docs).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Models {
    /// The weights under each model, in the order of `MOTION_SCALES`.
    taps: [Taps; MODELS],
    /// Per model, the variance of the contrast per axis, m², and the log of
    /// the 3-D normal's scale, `−1.5·ln(variance)`.
    contrast_variance: [f32; MODELS],
    log_scale: [f32; MODELS],
    /// The share of a window's evidence one frame's contrast carries: `1/n` for
    /// `n` taps, since consecutive windows share all but one sample.
    evidence: f32,
    /// Probability per frame of leaving a model (for either other one).
    leave: f32,
    /// Whether the models are weighed: not when positions pass unfiltered or a
    /// contrast variance is not positive.
    adaptive: bool,
}

impl Models {
    const IDENTITY: Self = Self {
        taps: [Taps::IDENTITY; MODELS],
        contrast_variance: [0.0; MODELS],
        log_scale: [0.0; MODELS],
        evidence: 0.0,
        leave: 0.0,
        adaptive: false,
    };

    fn design(config: &DeviceFilterConfig, dt: f32) -> Self {
        let mut models = Self::IDENTITY;
        for (taps, scale) in models.taps.iter_mut().zip(MOTION_SCALES) {
            *taps = Taps::design_scaled(config, dt, scale);
        }
        let n = models.taps[0].len;
        if n < 2 || models.taps.iter().any(|t| t.len != n) {
            return models;
        }
        // The contrast's weights: the swing design's less the steady one's.
        let mut c = [0.0f64; MAX_TAPS];
        let [steady, .., swing] = &models.taps;
        for (c, (a, b)) in c
            .iter_mut()
            .zip(swing.weights().iter().zip(steady.weights()))
        {
            *c = f64::from(*a) - f64::from(*b);
        }
        let sigma2 = f64::from(config.noise_m).powi(2);
        let dt64 = f64::from(dt);
        for (m, scale) in MOTION_SCALES.into_iter().enumerate() {
            // cᵀ·(Pₘ + σ²·I)·c
            let prior = Prior::new(config, scale);
            let mut variance = 0.0;
            for i in 0..n {
                for j in 0..n {
                    let noise = if i == j { sigma2 } else { 0.0 };
                    variance += c[i] * c[j] * (prior.covariance(i, j, dt64) + noise);
                }
            }
            if !variance.is_finite() || variance <= 0.0 {
                return models;
            }
            models.contrast_variance[m] = variance as f32;
            models.log_scale[m] = (-1.5 * variance.ln()) as f32;
        }
        models.evidence = 1.0 / n as f32;
        models.leave = (dt / MODEL_DWELL_S).clamp(0.0, 0.5);
        models.adaptive = models.contrast_variance.iter().all(|v| v.is_normal());
        models
    }
}

/// One device's positions and how likely each motion model is for it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Track {
    history: History<Vec3A>,
    probability: [f32; MODELS],
}

impl Default for Track {
    fn default() -> Self {
        let mut probability = [0.0; MODELS];
        probability[CONFIGURED_MODEL] = 1.0;
        Self {
            history: History::default(),
            probability,
        }
    }
}

impl Track {
    /// Adds `p` and returns the estimate now: the models' estimates weighed by
    /// their probabilities given the window.
    fn push(&mut self, p: Vec3A, models: &Models) -> Vec3A {
        self.history.push(p);
        if !models.adaptive {
            return p + self.history.offset(&models.taps[CONFIGURED_MODEL]);
        }
        let offsets = models.taps.map(|taps| self.history.offset(&taps));
        let d2 = (offsets[MODELS - 1] - offsets[0]).length_squared();
        // Log-likelihood of the contrast under each model (3-D normal), the
        // share of it this frame adds.
        let mut log = [0.0f32; MODELS];
        for (m, log) in log.iter_mut().enumerate() {
            let full = models.log_scale[m] - d2 / (2.0 * models.contrast_variance[m]);
            *log = full * models.evidence;
        }
        let most = log.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        // Markov step (stay, or leave for either other model), then Bayes.
        let leave = models.leave;
        let mut total = 0.0;
        for (probability, log) in self.probability.iter_mut().zip(log) {
            let prior =
                *probability * (1.0 - leave) + (1.0 - *probability) * leave / (MODELS - 1) as f32;
            *probability = prior * (log - most).exp();
            total += *probability;
        }
        if total.is_normal() {
            for probability in &mut self.probability {
                *probability /= total;
            }
        } else {
            *self = Self {
                history: self.history,
                ..Self::default()
            };
        }
        let mut offset = Vec3A::ZERO;
        for (o, probability) in offsets.iter().zip(self.probability) {
            offset += *o * probability;
        }
        p + offset
    }
}

/// The filter over `P` device poses sharing one frame rate.
#[derive(Debug, Clone)]
pub struct DeviceFilter<const P: usize> {
    config: DeviceFilterConfig,
    /// The positions' motion models.
    models: Models,
    rotation_taps: Taps,
    /// The frame interval the taps are designed for, and the running mean of
    /// the measured one.
    designed_dt: f32,
    mean_dt: f32,
    positions: [Track; P],
    /// Quaternions as 4-vectors, each on the hemisphere of the one before.
    rotations: [History<Vec4>; P],
}

impl<const P: usize> DeviceFilter<P> {
    #[must_use]
    pub fn new(config: DeviceFilterConfig) -> Self {
        Self {
            config,
            models: Models::IDENTITY,
            rotation_taps: Taps::IDENTITY,
            designed_dt: 0.0,
            mean_dt: 0.0,
            positions: [Track::default(); P],
            rotations: [History::default(); P],
        }
    }

    /// Starts a frame `dt` seconds after the previous one: redesigns the taps
    /// when the mean frame interval moved more than 5 % from the design's.
    pub fn step(&mut self, dt: f32) {
        if !dt.is_finite() || dt <= 0.0 {
            return;
        }
        self.mean_dt = if self.mean_dt > 0.0 {
            self.mean_dt + 0.1 * (dt - self.mean_dt)
        } else {
            dt
        };
        if (self.mean_dt - self.designed_dt).abs() > 0.05 * self.designed_dt {
            self.models = Models::design(&self.config, self.mean_dt);
            self.rotation_taps = Taps::design_rotation(&self.config, self.mean_dt);
            self.designed_dt = self.mean_dt;
        }
    }

    /// Forgets device `point`'s samples: it starts afresh when it comes back.
    pub fn forget(&mut self, point: usize) {
        if let (Some(p), Some(r)) = (self.positions.get_mut(point), self.rotations.get_mut(point)) {
            *p = Track::default();
            *r = History::default();
        }
    }

    /// Filters device `point`'s position this frame, under the motion models
    /// weighed by how likely each finds its recent samples.
    pub fn filter(&mut self, point: usize, p: Vec3) -> Vec3 {
        match self.positions.get_mut(point) {
            Some(track) => track.push(Vec3A::from(p), &self.models).into(),
            None => p,
        }
    }

    /// Filters device `point`'s rotation this frame (a unit quaternion; the result
    /// is one, on the same hemisphere as `q`).
    pub fn filter_rotation(&mut self, point: usize, q: Quat) -> Quat {
        let Some(history) = self.rotations.get_mut(point) else {
            return q;
        };
        let v = Vec4::from(q);
        let flip = history.newest().is_some_and(|last| last.dot(v) < 0.0);
        let aligned = if flip { -v } else { v };
        history.push(aligned);
        let sum = aligned + history.offset(&self.rotation_taps);
        let out = if sum == aligned {
            aligned
        } else {
            sum.normalize_or(aligned)
        };
        Quat::from_vec4(if flip { -out } else { out })
    }

    /// The weights of the configured prior's design (the positions' middle model).
    #[must_use]
    pub fn taps(&self) -> &Taps {
        &self.models.taps[CONFIGURED_MODEL]
    }

    #[must_use]
    pub fn rotation_taps(&self) -> &Taps {
        &self.rotation_taps
    }
}

/// Uniform noise of `rms` (xorshift from `seed`), for tests of the filter and of
/// what it feeds.
#[cfg(test)]
pub(crate) fn uniform_noise(mut seed: u32, rms: f32) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed as f32 / u32::MAX as f32 - 0.5) * 12f32.sqrt() * rms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: f32 = 1.0 / 120.0;

    /// Summed third differences, once the ring is full.
    fn jerk(xs: &[Vec3]) -> f32 {
        xs.windows(4)
            .skip(64)
            .map(|w| (w[3] - 3.0 * w[2] + 3.0 * w[1] - w[0]).length())
            .sum()
    }

    /// 1 cm and 1° of noise.
    fn noisy_config() -> DeviceFilterConfig {
        DeviceFilterConfig {
            noise_m: 0.01,
            rotation_noise_deg: 1.0,
            ..DeviceFilterConfig::default()
        }
    }

    #[test]
    fn weights_sum_to_one_and_no_noise_passes_through() {
        let taps = Taps::design(&noisy_config(), DT);
        assert_eq!(taps.weights().len(), 32);
        let sum: f32 = taps.weights().iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{sum}");
        let off = DeviceFilterConfig {
            noise_m: 0.0,
            ..DeviceFilterConfig::default()
        };
        assert_eq!(Taps::design(&off, DT), Taps::IDENTITY);
        assert_eq!(Taps::design(&noisy_config(), 0.0), Taps::IDENTITY);
    }

    #[test]
    fn the_shake_weight_is_the_jerk_spectrum_cut_off() {
        // The closed form against the integral by the midpoint rule.
        for (dt, cutoff) in [
            (DT, SHAKE_CUTOFF_HZ),
            (1.0 / 30.0, SHAKE_CUTOFF_HZ),
            (DT, 1e9),
        ] {
            let dt = f64::from(dt);
            let shake = ShakeWeight::new(dt, MAX_TAPS, cutoff);
            let a = (std::f64::consts::TAU * cutoff * dt).min(std::f64::consts::PI);
            let steps = 100_000;
            let h = std::f64::consts::PI / f64::from(steps);
            for (k, r) in shake.0.iter().enumerate() {
                let integral: f64 = (0..steps)
                    .map(|i| {
                        let w = (f64::from(i) + 0.5) * h;
                        w.min(a).powi(6) * (k as f64 * w).cos()
                    })
                    .sum::<f64>()
                    * h
                    / std::f64::consts::PI;
                assert!(
                    (r - integral).abs() < 1e-7 * shake.0[0],
                    "lag {k} at {dt} s, cut off at {cutoff} Hz: {r} against {integral}"
                );
            }
        }
    }

    /// What the weights leave of a swing at `hz` (of unit size) and how much jerk
    /// over 1/30 s steps they leave of white noise (per unit of noise), at 120 Hz.
    fn lag_and_wobble(taps: &Taps, hz: f64) -> (f64, f64) {
        let w = std::f64::consts::TAU * hz * f64::from(DT);
        let (mut re, mut im) = (-1.0, 0.0);
        for (k, h) in taps.weights().iter().enumerate() {
            re += f64::from(*h) * (w * k as f64).cos();
            im -= f64::from(*h) * (w * k as f64).sin();
        }
        // The third difference of samples 4 apart, convolved with the weights.
        let mut out = [0.0f64; MAX_TAPS + 12];
        for (k, h) in taps.weights().iter().enumerate() {
            for (m, d) in [1.0, -3.0, 3.0, -1.0].into_iter().enumerate() {
                out[k + 4 * m] += f64::from(*h) * d;
            }
        }
        (re.hypot(im), out.iter().map(|x| x * x).sum::<f64>().sqrt())
    }

    #[test]
    fn for_the_same_lag_the_filter_leaves_less_wobble_than_weighing_jerk_at_every_frequency() {
        // The jerk weighed at every frequency up to 60 Hz, with its smoothness
        // chosen to lag a 1.5 Hz swing as much: more of the noise is left in the
        // band a 1/30 s step sees.
        let config = noisy_config();
        let cut = Taps::design(&config, DT);
        let (lag, wobble) = lag_and_wobble(&cut, 1.5);
        let every = |smoothness: f32| {
            let config = DeviceFilterConfig {
                smoothness,
                ..config
            };
            Taps::design_weighed(&config, DT, 1.0, f64::INFINITY)
        };
        let (mut low, mut high) = (1e-3f32, 1e7f32);
        for _ in 0..60 {
            let mid = (low * high).sqrt();
            if lag_and_wobble(&every(mid), 1.5).0 > lag {
                high = mid;
            } else {
                low = mid;
            }
        }
        let (every_lag, every_wobble) = lag_and_wobble(&every(low), 1.5);
        assert!(
            (every_lag - lag).abs() < 0.01 * lag,
            "{every_lag} against {lag}"
        );
        assert!(
            wobble < 0.9 * every_wobble,
            "wobble {wobble} against {every_wobble} at the same lag"
        );
    }

    #[test]
    fn a_device_at_rest_stays_exactly_put() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let p = Vec3::new(0.2234, 1.4567, -0.0519);
        for _ in 0..100 {
            filter.step(DT);
            assert_eq!(filter.filter(0, p), p);
        }
    }

    #[test]
    fn steady_motion_is_followed_without_lag() {
        // Constant velocity of about 1 m/s: followed to within 2 mm once the ring
        // is full (a moving average of as many samples lags 13 cm).
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let v = Vec3::new(0.8, -0.3, 0.5);
        let mut worst = 0.0f32;
        for i in 0..200 {
            filter.step(DT);
            let p = v * (i as f32 * DT);
            let out = filter.filter(0, p);
            if i > 64 {
                worst = worst.max(out.distance(p));
            }
        }
        assert!(worst < 2e-3, "lag {worst} m");
    }

    /// A hand's swing: 0.25 m at 1.5 Hz along a tilted line (peak acceleration
    /// 22 m/s²) for `swing` frames, then held still where it stopped.
    fn swing_then_rest(i: usize, swing: usize) -> Vec3 {
        let t = i.min(swing) as f32 * DT;
        let line = Vec3::new(0.8, 0.3, -0.5).normalize();
        Vec3::new(0.2, 1.1, 0.3) + line * 0.25 * (std::f32::consts::TAU * 1.5 * t).sin()
    }

    /// `track` through the adaptive filter and through the configured prior's
    /// design alone, with 1 cm of noise: the truth, then both outputs.
    fn adaptive_and_one_design(
        frames: usize,
        track: impl Fn(usize) -> Vec3,
    ) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let taps = Taps::design(&noisy_config(), DT);
        let mut one = History::<Vec3A>::default();
        let mut noise = uniform_noise(0x0bad_cafe, 0.01);
        let (mut truth, mut adaptive, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..frames {
            filter.step(DT);
            let x = track(i);
            let y = x + Vec3::new(noise(), noise(), noise());
            truth.push(x);
            adaptive.push(filter.filter(0, y));
            one.push(y.into());
            fixed.push(y + Vec3::from(one.offset(&taps)));
        }
        (truth, adaptive, fixed)
    }

    #[test]
    fn a_still_device_after_a_swing_settles_with_less_jitter_than_one_design() {
        // Two swings, then 1.5 s at rest; jerk over the last second (0.063
        // against 0.087).
        let (_, adaptive, fixed) = adaptive_and_one_design(300, |i| swing_then_rest(i, 120));
        let still = |xs: &[Vec3]| jerk(&xs[300 - 120 - 64..]);
        let (a, f) = (still(&adaptive), still(&fixed));
        assert!(a < 0.8 * f, "jerk at rest {a} against one design's {f}");
    }

    #[test]
    fn a_swing_is_followed_with_no_more_error_than_one_design() {
        let (truth, adaptive, fixed) = adaptive_and_one_design(600, |i| swing_then_rest(i, 600));
        let rms = |xs: &[Vec3]| {
            let sum: f32 = xs
                .iter()
                .zip(&truth)
                .skip(64)
                .map(|(x, t)| x.distance_squared(*t))
                .sum();
            (sum / (xs.len() - 64) as f32).sqrt()
        };
        let (a, f) = (rms(&adaptive), rms(&fixed));
        assert!(
            a <= f * 1.02,
            "error in a swing {a} m against one design's {f} m"
        );
    }

    #[test]
    fn a_device_at_rest_after_a_swing_stays_exactly_put() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        for i in 0..300 {
            filter.step(DT);
            let p = swing_then_rest(i, 100);
            let out = filter.filter(0, p);
            if i > 100 + MAX_TAPS {
                assert_eq!(out, p);
            }
        }
    }

    #[test]
    fn white_noise_loses_most_of_its_jerk_and_some_of_its_size() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let mut noise = uniform_noise(0x2545_f491, 0.01);
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            filter.step(DT);
            let y = Vec3::new(noise(), noise(), noise());
            raw.push(y);
            out.push(filter.filter(0, y));
        }
        let size = |xs: &[Vec3]| xs.iter().skip(64).map(|p| p.length()).sum::<f32>();
        assert!(jerk(&out) < jerk(&raw) / 20.0);
        assert!(size(&out) < size(&raw) * 0.9);
    }

    #[test]
    fn a_device_turned_still_stays_exactly_put_on_either_hemisphere() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let q = Quat::from_euler(glam::EulerRot::YXZ, 0.7, -0.3, 1.9);
        for i in 0..100 {
            filter.step(DT);
            // A device may report either sign of the same rotation.
            let given = if i % 3 == 0 { -q } else { q };
            assert_eq!(filter.filter_rotation(0, given), given);
        }
    }

    #[test]
    fn steady_turning_is_followed_without_lag() {
        // 3 rad/s about a tilted axis, through several full turns (and sign
        // changes of the quaternion): within 0.2° once the ring is full, where a
        // moving average of as many samples lags 22°.
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let axis = Vec3::new(0.3, 1.0, -0.4).normalize();
        let start = Quat::from_rotation_x(0.4);
        let mut worst = 0.0f32;
        for i in 0..600 {
            filter.step(DT);
            let q = Quat::from_axis_angle(axis, 3.0 * i as f32 * DT) * start;
            let out = filter.filter_rotation(0, q);
            assert!((out.length() - 1.0).abs() < 1e-5);
            if i > 64 {
                worst = worst.max(out.angle_between(q));
            }
        }
        assert!(worst < 0.2f32.to_radians(), "lag {}°", worst.to_degrees());
    }

    #[test]
    fn rotation_noise_loses_most_of_its_jerk() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        let mut noise = uniform_noise(0x1234_5678, 1f32.to_radians());
        let rest = Quat::from_rotation_y(2.5);
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            filter.step(DT);
            let q = rest * Quat::from_scaled_axis(Vec3::new(noise(), noise(), noise()));
            // A point at the arm's length off the device, as the design sees it.
            let arm = Vec3::Z * ROTATION_ARM;
            raw.push(q * arm);
            out.push(filter.filter_rotation(0, q) * arm);
        }
        assert!(jerk(&out) < jerk(&raw) / 20.0);
    }

    #[test]
    fn no_rotation_noise_passes_rotations_through() {
        let mut filter = DeviceFilter::<1>::new(DeviceFilterConfig {
            rotation_noise_deg: 0.0,
            ..noisy_config()
        });
        filter.step(DT);
        assert_eq!(*filter.rotation_taps(), Taps::IDENTITY);
        assert_ne!(*filter.taps(), Taps::IDENTITY);
        let q = Quat::from_rotation_z(0.3);
        filter.filter_rotation(0, Quat::IDENTITY);
        assert_eq!(filter.filter_rotation(0, q), q);
    }

    #[test]
    fn taps_follow_the_frame_rate() {
        let mut filter = DeviceFilter::<1>::new(noisy_config());
        filter.step(DT);
        let at_120 = *filter.taps();
        for _ in 0..100 {
            filter.step(1.0 / 72.0);
        }
        assert_ne!(*filter.taps(), at_120);
        assert_eq!(
            *filter.taps(),
            Taps::design(&noisy_config(), filter.designed_dt)
        );
    }

    #[test]
    fn the_window_spans_the_same_time_at_every_rate() {
        // 32 taps at 120 Hz are 0.27 s: 8 samples at 30 Hz, 48 at most at 240 Hz.
        let config = noisy_config();
        for (rate, samples) in [(120.0, 32), (30.0, 8), (25.0, 7), (90.0, 24), (240.0, 48)] {
            assert_eq!(
                Taps::design(&config, 1.0 / rate).weights().len(),
                samples,
                "{rate} Hz"
            );
        }
    }
}
