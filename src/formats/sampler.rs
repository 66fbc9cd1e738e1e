//! Keyframe sampling with the glTF 2.0 animation sampler semantics (spec §3.11 and
//! Appendix C): STEP, LINEAR (slerp for rotations) and CUBICSPLINE, clamped before
//! the first key and after the last. Also picks the frame times a clip of several
//! channels is sampled at (`frame_times`), and the times a CUBICSPLINE channel
//! needs so that frames played back LINEAR follow its curve (`playback_times`).
//!
//! Pure: no I/O, no file formats. Loaders read keys from their files, build one
//! `Keyframes` per channel (validated once, may allocate) and sample it per frame
//! (binary search, no allocation). Errors say what is wrong with the keys; callers
//! add the file and the place.

use std::sync::Arc;

use glam::{Quat, Vec3, Vec4};

/// How values between two keys are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// The value of the last key at or before the time, until the next key.
    Step,
    /// Straight-line interpolation; spherical (shortest path) for rotations.
    Linear,
    /// Cubic Hermite spline through the keys with explicit in- and out-tangents
    /// (three values per key: in-tangent, value, out-tangent).
    CubicSpline,
}

impl Interpolation {
    /// Values a key stores: 3 for CUBICSPLINE (in-tangent, value, out-tangent), else 1.
    #[must_use]
    pub fn values_per_key(self) -> usize {
        match self {
            Self::CubicSpline => 3,
            Self::Step | Self::Linear => 1,
        }
    }
}

impl std::fmt::Display for Interpolation {
    /// The glTF spelling (`STEP`, `LINEAR`, `CUBICSPLINE`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Step => "STEP",
            Self::Linear => "LINEAR",
            Self::CubicSpline => "CUBICSPLINE",
        })
    }
}

/// Why keyframes cannot be sampled (callers add the file and place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyframeError {
    #[error("no keys")]
    NoKeys,
    #[error("time at key {key} is not finite")]
    TimeNotFinite { key: usize },
    /// `times[key] < times[key - 1]`; equal times (a jump) are allowed.
    #[error("times are not increasing at key {key}")]
    TimesNotIncreasing { key: usize },
    #[error("{found} values for {keys} keys; {interpolation} needs {expected}")]
    ValueCount {
        keys: usize,
        found: usize,
        expected: usize,
        interpolation: Interpolation,
    },
    /// `value` counts every stored value (tangents included), as a file's array does.
    #[error("value {value} is not finite")]
    ValueNotFinite { value: usize },
    #[error("value {value} is a zero quaternion")]
    ZeroQuaternion { value: usize },
}

/// A value keyframes can hold: `Vec3` (translation, scale), `Quat` (rotation), `f32`
/// (morph weight). Sealed; the operations are the glTF sampler's for each type.
pub trait KeyValue: Copy + sealed::Sealed {
    /// The value as stored when built (quaternions normalized), or why it cannot be:
    /// not finite, or a zero quaternion. `value` is its index, for the error.
    #[doc(hidden)]
    fn checked(self, value: usize, is_tangent: bool) -> Result<Self, KeyframeError>;
    /// Between `a` (at `s = 0`) and `b` (at `s = 1`): lerp, or slerp for rotations.
    #[doc(hidden)]
    fn interpolate(a: Self, b: Self, s: f32) -> Self;
    /// `Σ weights[i] · points[i]` (a spline on components), then normalized for
    /// rotations; `fallback` when that is degenerate.
    #[doc(hidden)]
    fn combine(points: [Self; 4], weights: [f32; 4], fallback: Self) -> Self;
    /// How far apart two values are, in the value's own measure: radians between
    /// rotations, metres between points, the difference between weights.
    #[doc(hidden)]
    fn distance(a: Self, b: Self) -> f32;
    /// How far LINEAR playback between frames may stray from a CUBICSPLINE channel
    /// (`Keyframes::playback_times`), in the measure of `distance`.
    #[doc(hidden)]
    const PLAYBACK_TOLERANCE: f32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for glam::Vec3 {}
    impl Sealed for glam::Quat {}
}

impl KeyValue for f32 {
    fn checked(self, value: usize, _: bool) -> Result<Self, KeyframeError> {
        if self.is_finite() {
            Ok(self)
        } else {
            Err(KeyframeError::ValueNotFinite { value })
        }
    }

    fn interpolate(a: Self, b: Self, s: f32) -> Self {
        a + (b - a) * s
    }

    fn combine(p: [Self; 4], w: [f32; 4], _: Self) -> Self {
        w[0] * p[0] + w[1] * p[1] + w[2] * p[2] + w[3] * p[3]
    }

    fn distance(a: Self, b: Self) -> f32 {
        (a - b).abs()
    }

    /// A thousandth of a morph or expression weight.
    const PLAYBACK_TOLERANCE: f32 = 1e-3;
}

impl KeyValue for Vec3 {
    fn checked(self, value: usize, _: bool) -> Result<Self, KeyframeError> {
        if self.is_finite() {
            Ok(self)
        } else {
            Err(KeyframeError::ValueNotFinite { value })
        }
    }

    fn interpolate(a: Self, b: Self, s: f32) -> Self {
        a.lerp(b, s)
    }

    fn combine(p: [Self; 4], w: [f32; 4], _: Self) -> Self {
        w[0] * p[0] + w[1] * p[1] + w[2] * p[2] + w[3] * p[3]
    }

    fn distance(a: Self, b: Self) -> f32 {
        a.distance(b)
    }

    /// A tenth of a millimetre.
    const PLAYBACK_TOLERANCE: f32 = 1e-4;
}

/// A key rotation whose squared length is this close to 1 is kept as it is.
const UNIT_TOLERANCE: f32 = 1e-6;

impl KeyValue for Quat {
    /// Normalizes key values that are not unit already; tangents are kept as they
    /// are (they are not rotations).
    fn checked(self, value: usize, is_tangent: bool) -> Result<Self, KeyframeError> {
        if !self.is_finite() {
            return Err(KeyframeError::ValueNotFinite { value });
        }
        // Unit to f32 precision already (as files store them): kept bit for bit, so
        // sampling at a key time gives the file's value.
        if is_tangent || (self.length_squared() - 1.0).abs() <= UNIT_TOLERANCE {
            return Ok(self);
        }
        Vec4::from(self)
            .try_normalize()
            .map(Quat::from_vec4)
            .ok_or(KeyframeError::ZeroQuaternion { value })
    }

    fn interpolate(a: Self, b: Self, s: f32) -> Self {
        // glam's slerp takes the shortest path (flips `b` when `a · b < 0`).
        a.slerp(b, s).normalize()
    }

    fn combine(p: [Self; 4], w: [f32; 4], fallback: Self) -> Self {
        let sum = w[0] * Vec4::from(p[0])
            + w[1] * Vec4::from(p[1])
            + w[2] * Vec4::from(p[2])
            + w[3] * Vec4::from(p[3]);
        sum.try_normalize().map_or(fallback, Quat::from_vec4)
    }

    /// The angle of `a⁻¹ · b` from its vector part (precise near zero, where
    /// `acos` of the dot product is not).
    fn distance(a: Self, b: Self) -> f32 {
        let d = a.conjugate() * b;
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }

    /// 0.006 degrees.
    const PLAYBACK_TOLERANCE: f32 = 1e-4;
}

/// Keyframes of one channel. Built once (validated), sampled per frame without
/// allocating.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyframes<T> {
    /// Seconds, finite, non-decreasing, at least one. Shared: the channels of an
    /// animation usually use one time accessor, read once.
    times: Arc<[f32]>,
    /// One value per key, or three (in-tangent, value, out-tangent) for CUBICSPLINE;
    /// finite, rotations normalized (tangents excepted).
    values: Vec<T>,
    interpolation: Interpolation,
}

impl<T> Keyframes<T> {
    /// Time of every key, seconds.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// How many keys there are (at least one).
    #[must_use]
    pub fn key_count(&self) -> usize {
        self.times.len()
    }

    /// Time of the first key, seconds.
    #[must_use]
    pub fn start(&self) -> f32 {
        self.times.first().copied().unwrap_or(0.0)
    }

    /// Time of the last key, seconds.
    #[must_use]
    pub fn end(&self) -> f32 {
        self.times.last().copied().unwrap_or(0.0)
    }

    /// From the first key to the last, seconds (0 for one key).
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.end() - self.start()
    }
}

impl<T: KeyValue> Keyframes<T> {
    /// Checks and builds keyframes: at least one key, finite non-decreasing times
    /// (equal consecutive times are a jump), `values_per_key` finite values per key.
    /// Rotations are normalized.
    pub fn new(
        times: impl Into<Arc<[f32]>>,
        mut values: Vec<T>,
        interpolation: Interpolation,
    ) -> Result<Self, KeyframeError> {
        let times: Arc<[f32]> = times.into();
        if times.is_empty() {
            return Err(KeyframeError::NoKeys);
        }
        let mut previous = f32::NEG_INFINITY;
        for (key, &time) in times.iter().enumerate() {
            if !time.is_finite() {
                return Err(KeyframeError::TimeNotFinite { key });
            }
            if time < previous {
                return Err(KeyframeError::TimesNotIncreasing { key });
            }
            previous = time;
        }
        let per_key = interpolation.values_per_key();
        let expected = times.len() * per_key;
        if values.len() != expected {
            return Err(KeyframeError::ValueCount {
                keys: times.len(),
                found: values.len(),
                expected,
                interpolation,
            });
        }
        for (index, value) in values.iter_mut().enumerate() {
            let is_tangent = per_key == 3 && index % 3 != 1;
            *value = value.checked(index, is_tangent)?;
        }
        Ok(Self {
            times,
            values,
            interpolation,
        })
    }

    /// The value of key `key` (the middle of the three for CUBICSPLINE).
    #[must_use]
    pub fn key_value(&self, key: usize) -> T {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * key + 1],
            Interpolation::Step | Interpolation::Linear => self.values[key],
        }
    }

    /// The value at time `t` seconds. Clamped: the first key's value before it, the
    /// last key's after it. At a key's time, exactly that key's value (the later
    /// key of a jump). A NaN `t` gives the first value.
    #[must_use]
    pub fn sample(&self, t: f32) -> T {
        // Keys at or before `t`; the last of them is the segment's start.
        let after = self.times.partition_point(|&k| k <= t);
        let Some(key) = after.checked_sub(1) else {
            return self.key_value(0);
        };
        let start = self.times[key];
        if after == self.times.len() || start == t {
            return self.key_value(key);
        }
        // start < t < end, so the segment is never empty.
        let interval = self.times[after] - start;
        let s = (t - start) / interval;
        match self.interpolation {
            Interpolation::Step => {
                // A time a rounding error short of the next key (a grid time computed
                // as i / fps against a key stored as f32) is that key: STEP jumps there.
                let end = self.times[after];
                if end - t <= ROUNDING_STEPS * f32::EPSILON * end.abs().max(1.0) {
                    self.key_value(after)
                } else {
                    self.key_value(key)
                }
            }
            Interpolation::Linear => T::interpolate(self.key_value(key), self.key_value(after), s),
            Interpolation::CubicSpline => {
                // glTF Appendix C, with tangents scaled by the key interval td:
                // p(s) = (2s³ − 3s² + 1)·v_k + td·(s³ − 2s² + s)·b_k
                //      + (−2s³ + 3s²)·v_k+1 + td·(s³ − s²)·a_k+1
                let (s2, s3) = (s * s, s * s * s);
                let weights = [
                    2.0 * s3 - 3.0 * s2 + 1.0,
                    interval * (s3 - 2.0 * s2 + s),
                    -2.0 * s3 + 3.0 * s2,
                    interval * (s3 - s2),
                ];
                let v = &self.values;
                let points = [
                    v[3 * key + 1],
                    v[3 * key + 2],
                    v[3 * after + 1],
                    v[3 * after],
                ];
                T::combine(points, weights, points[0])
            }
        }
    }
}

impl<T: KeyValue> Keyframes<T> {
    /// The times to sample this channel at so that playing the samples back LINEAR
    /// (as a written `.vrma` or a clip's frames play) gives the channel: its key
    /// times, and for CUBICSPLINE also times between keys. Each key interval is
    /// halved until LINEAR between the split points stays within
    /// `T::PLAYBACK_TOLERANCE` of the spline at a quarter, half and three quarters of
    /// the way, at most `MAX_PLAYBACK_SPLITS` times (64 parts).
    #[must_use]
    pub fn playback_times(&self) -> std::borrow::Cow<'_, [f32]> {
        if self.interpolation != Interpolation::CubicSpline {
            return std::borrow::Cow::Borrowed(&self.times);
        }
        let mut times = Vec::with_capacity(self.times.len());
        for pair in self.times.windows(2) {
            times.push(pair[0]);
            if pair[1] > pair[0] {
                self.split_until_linear(pair[0], pair[1], 0, &mut times);
            }
        }
        times.extend(self.times.last());
        std::borrow::Cow::Owned(times)
    }

    /// Pushes the times strictly between `start` and `end` that LINEAR playback of
    /// this spline needs (see `playback_times`), in order.
    fn split_until_linear(&self, start: f32, end: f32, depth: u32, out: &mut Vec<f32>) {
        let (a, b) = (self.sample(start), self.sample(end));
        let strays = [0.25, 0.5, 0.75].iter().any(|&s| {
            let spline = self.sample(start + (end - start) * s);
            T::distance(spline, T::interpolate(a, b, s)) > T::PLAYBACK_TOLERANCE
        });
        let middle = start + (end - start) * 0.5;
        if !strays || depth >= MAX_PLAYBACK_SPLITS || !(start < middle && middle < end) {
            return;
        }
        self.split_until_linear(start, middle, depth + 1, out);
        out.push(middle);
        self.split_until_linear(middle, end, depth + 1, out);
    }
}

/// How many times `Keyframes::playback_times` halves a key interval at most.
const MAX_PLAYBACK_SPLITS: u32 = 6;

/// How many `f32` steps (relative, at least those of 1 s) short of a key a STEP
/// channel's time is still that key's: rounding, not a time between keys.
const ROUNDING_STEPS: f32 = 4.0;

/// Frame rates a resampled clip snaps to, frames per second.
pub const STANDARD_RATES: [f32; 8] = [24.0, 25.0, 30.0, 50.0, 60.0, 90.0, 120.0, 240.0];

/// When to sample a clip made of several channels.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameTimes {
    /// Seconds, strictly increasing, at least one.
    pub times: Vec<f32>,
    /// The uniform grid's rate when the channels were resampled; `None` when
    /// `times` are the channels' own key times.
    pub resampled_fps: Option<f32>,
}

/// A clip would have more frames than a caller allows.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{frames} frames from {start} s to {end} s, more than the {max} supported")]
pub struct TooManyFrames {
    pub frames: f64,
    pub start: f32,
    pub end: f32,
    pub max: usize,
}

/// Key times of different tracks closer than this (seconds) are one frame in
/// `merged_key_times`.
const MERGE_SECONDS: f32 = 1e-6;

/// Every track's key times merged, in order, a time within `MERGE_SECONDS` of one
/// already taken counting once: the frames that play tracks back key for key. A
/// file whose tracks are keyed at their own times (keyframe reduction keeps each
/// track's keys apart) loses no key of any track, as it would by taking one
/// track's times. Tracks sharing the times already merged (most files: one time
/// accessor for every track) add nothing, so a long take's times are held once.
pub fn merged_key_times<'a>(tracks: impl IntoIterator<Item = &'a [f32]>) -> Vec<f32> {
    let mut merged: Vec<f32> = Vec::new();
    for times in tracks {
        if times != merged.as_slice() {
            merged = merge_two(&merged, times);
        }
    }
    merged
}

/// Two increasing lists of times as one, a time of `b` within `MERGE_SECONDS` of
/// one already taken counting once.
fn merge_two(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut out: Vec<f32> = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let t = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        if out.last().is_none_or(|last| t - last > MERGE_SECONDS) {
            out.push(t);
        }
    }
    out
}

/// Frame times for sampling channels together, each given by its key times (as
/// `Keyframes::times`: finite, non-decreasing).
///
/// When one channel's keys include every other channel's (all channels share their
/// times, or constant channels keep only the first and last key, as Blender writes
/// them), those key times, each moment once (`one_per_moment`): no resampling.
/// Otherwise a uniform grid from the earliest key to the latest at the rate of the
/// densest channel (the smallest median key interval), snapped to the nearest
/// `STANDARD_RATES`, plus the latest key time exactly. When no channel has two distinct keys, every distinct key
/// time. Empty `channels` give no frames.
pub fn frame_times(channels: &[&[f32]], max_frames: usize) -> Result<FrameTimes, TooManyFrames> {
    let too_many = |frames: f64, start: f32, end: f32| TooManyFrames {
        frames,
        start,
        end,
        max: max_frames,
    };
    let densest = channels.iter().max_by_key(|times| times.len());
    let Some(&densest) = densest else {
        return Ok(FrameTimes {
            times: Vec::new(),
            resampled_fps: None,
        });
    };
    let start = channels
        .iter()
        .filter_map(|c| c.first())
        .fold(f32::INFINITY, |a, &b| a.min(b));
    let end = channels
        .iter()
        .filter_map(|c| c.last())
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let has_key_at = |t: f32| densest.get(densest.partition_point(|&k| k < t)) == Some(&t);
    let covers_all = channels
        .iter()
        .all(|times| times.iter().all(|&t| has_key_at(t)));
    if covers_all {
        let times = one_per_moment(densest);
        if times.len() > max_frames {
            return Err(too_many(times.len() as f64, start, end));
        }
        return Ok(FrameTimes {
            times,
            resampled_fps: None,
        });
    }
    let Some(interval) = channels
        .iter()
        .filter_map(|times| median_interval(times))
        .reduce(f32::min)
    else {
        let mut times: Vec<f32> = channels.iter().flat_map(|c| c.iter().copied()).collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        if times.len() > max_frames {
            return Err(too_many(times.len() as f64, start, end));
        }
        return Ok(FrameTimes {
            times,
            resampled_fps: None,
        });
    };
    let fps = nearest_standard_rate(1.0 / interval);
    let (start64, end64, fps64) = (f64::from(start), f64::from(end), f64::from(fps));
    let steps = ((end64 - start64) * fps64).floor();
    let frames = steps + 2.0;
    if frames.is_nan() || frames > max_frames as f64 {
        return Err(too_many(frames, start, end));
    }
    // Grid points closer to the end than a thousandth of a frame are the end itself.
    let last = end64 - 1e-3 / fps64;
    let mut times: Vec<f32> = (0..=steps as usize)
        .map(|i| start64 + i as f64 / fps64)
        .take_while(|&t| t < last)
        .map(|t| t as f32)
        .collect();
    times.push(end);
    Ok(FrameTimes {
        times,
        resampled_fps: Some(fps),
    })
}

/// Key times of one channel closer than this share of its mean key interval are one
/// moment (a converter's times rounded apart: Sketchfab's conversions key 0.01999 and
/// 0.02 s in one channel, values alike), played as one frame, not two frames 10 µs
/// apart.
const SAME_MOMENT: f32 = 0.01;

/// `times` (non-decreasing) with each run of times within `SAME_MOMENT` of the mean
/// interval as one: the run's last, which keeps the clip's end key, except that the
/// first time stays the start.
fn one_per_moment(times: &[f32]) -> Vec<f32> {
    let span = match (times.first(), times.last()) {
        (Some(first), Some(last)) => last - first,
        _ => 0.0,
    };
    let within = SAME_MOMENT * span / times.len().saturating_sub(1).max(1) as f32;
    let mut out: Vec<f32> = Vec::with_capacity(times.len());
    for &t in times {
        match out.len() {
            0 => out.push(t),
            n if t - out[n - 1] > within => out.push(t),
            1 => {}
            n => out[n - 1] = t,
        }
    }
    out
}

/// The median of the positive intervals between keys; `None` with fewer than two
/// distinct times.
fn median_interval(times: &[f32]) -> Option<f32> {
    let mut intervals: Vec<f32> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0.0)
        .collect();
    intervals.sort_by(f32::total_cmp);
    intervals.get(intervals.len() / 2).copied()
}

/// The entry of `STANDARD_RATES` closest to `fps`.
fn nearest_standard_rate(fps: f32) -> f32 {
    STANDARD_RATES
        .iter()
        .copied()
        .min_by(|a, b| (a - fps).abs().total_cmp(&(b - fps).abs()))
        .unwrap_or(30.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::{FRAC_PI_2, PI};

    use Interpolation::{CubicSpline, Linear, Step};

    #[test]
    fn merged_key_times_keep_every_tracks_keys_once() {
        let a = [0.0, 0.25, 1.0];
        let b = [0.0, 0.5, 1.0 + 1e-7];
        assert_eq!(merged_key_times([&a[..], &b[..]]), [0.0, 0.25, 0.5, 1.0]);
        assert_eq!(merged_key_times([&a[..], &a[..]]), a);
        assert!(merged_key_times([]).is_empty());
    }

    /// The largest distance, over 400 times per key interval, between `keys` and
    /// LINEAR playback of `keys` sampled at `times`.
    fn linear_playback_error<T: KeyValue>(keys: &Keyframes<T>, times: &[f32]) -> f32 {
        let mut worst = 0.0f32;
        for pair in times.windows(2) {
            let (a, b) = (keys.sample(pair[0]), keys.sample(pair[1]));
            for i in 1..400 {
                let s = i as f32 / 400.0;
                let t = pair[0] + (pair[1] - pair[0]) * s;
                worst = worst.max(T::distance(keys.sample(t), T::interpolate(a, b, s)));
            }
        }
        worst
    }

    #[test]
    fn playback_times_let_linear_frames_follow_a_cubic_spline() {
        // Zero tangents: each interval eases in and out, which LINEAR between the
        // keys alone misses by degrees (keys up to 0.4 rad apart: 64 parts an
        // interval bring LINEAR within the tolerance).
        let times = vec![0.0, 0.5, 1.5];
        let rotations = [
            Quat::IDENTITY,
            Quat::from_rotation_y(0.4),
            Quat::from_rotation_x(0.2) * Quat::from_rotation_y(0.6),
        ];
        let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let values = rotations.iter().flat_map(|&q| [zero, q, zero]).collect();
        let spline = Keyframes::new(times.clone(), values, CubicSpline).unwrap();
        assert!(linear_playback_error(&spline, &times).to_degrees() > 1.0);
        let playback = spline.playback_times();
        for key in &times {
            assert!(playback.contains(key), "{key}");
        }
        assert!(playback.windows(2).all(|w| w[0] < w[1]));
        let error = linear_playback_error(&spline, &playback);
        assert!(error.to_degrees() < 0.01, "{} deg", error.to_degrees());

        let points = [
            Vec3::ZERO,
            Vec3::new(0.3, 1.0, -0.2),
            Vec3::new(0.0, 0.5, 0.4),
        ];
        let values = points
            .iter()
            .flat_map(|&p| [Vec3::ZERO, p, Vec3::ZERO])
            .collect();
        let spline = Keyframes::new(times.clone(), values, CubicSpline).unwrap();
        assert!(linear_playback_error(&spline, &spline.playback_times()) < 2e-4);

        let linear = scalar(&times, &[0.0, 1.0, 0.0], Linear);
        assert_eq!(*linear.playback_times(), times[..]);
        let step = scalar(&times, &[0.0, 1.0, 0.0], Step);
        assert_eq!(*step.playback_times(), times[..]);
    }

    fn scalar(times: &[f32], values: &[f32], interpolation: Interpolation) -> Keyframes<f32> {
        Keyframes::new(times.to_vec(), values.to_vec(), interpolation).unwrap()
    }

    // --- errors -----------------------------------------------------------------

    #[test]
    fn new_rejects_bad_keys() {
        let cases: [(&[f32], &[f32], Interpolation, KeyframeError); 7] = [
            (&[], &[], Linear, KeyframeError::NoKeys),
            (
                &[0.0, f32::NAN],
                &[1.0, 2.0],
                Linear,
                KeyframeError::TimeNotFinite { key: 1 },
            ),
            (
                &[f32::INFINITY],
                &[1.0],
                Step,
                KeyframeError::TimeNotFinite { key: 0 },
            ),
            (
                &[0.0, 1.0, 0.5],
                &[1.0, 2.0, 3.0],
                Step,
                KeyframeError::TimesNotIncreasing { key: 2 },
            ),
            (
                &[0.0, 1.0],
                &[1.0, 2.0, 3.0],
                Linear,
                KeyframeError::ValueCount {
                    keys: 2,
                    found: 3,
                    expected: 2,
                    interpolation: Linear,
                },
            ),
            (
                &[0.0, 1.0],
                &[1.0, 2.0],
                CubicSpline,
                KeyframeError::ValueCount {
                    keys: 2,
                    found: 2,
                    expected: 6,
                    interpolation: CubicSpline,
                },
            ),
            (
                &[0.0, 1.0],
                &[0.0, 1.0, 0.0, 0.0, f32::NAN, 0.0],
                CubicSpline,
                KeyframeError::ValueNotFinite { value: 4 },
            ),
        ];
        for (times, values, interpolation, expected) in cases {
            let got = Keyframes::new(times.to_vec(), values.to_vec(), interpolation);
            assert_eq!(got, Err(expected), "{times:?} {values:?}");
        }
    }

    #[test]
    fn new_rejects_non_finite_vectors_and_zero_quaternions() {
        let v = Keyframes::new(
            vec![0.0, 1.0],
            vec![Vec3::ZERO, Vec3::X * f32::INFINITY],
            Linear,
        );
        assert_eq!(v, Err(KeyframeError::ValueNotFinite { value: 1 }));
        let q = Keyframes::new(
            vec![0.0, 1.0],
            vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)],
            Linear,
        );
        assert_eq!(q, Err(KeyframeError::ZeroQuaternion { value: 1 }));
        // A zero tangent is fine: only key values are rotations.
        let tangents = vec![
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            Quat::IDENTITY,
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        ];
        assert!(Keyframes::new(vec![0.0], tangents, CubicSpline).is_ok());
    }

    #[test]
    fn error_messages_read_as_one_line() {
        let count = KeyframeError::ValueCount {
            keys: 4,
            found: 10,
            expected: 12,
            interpolation: CubicSpline,
        };
        assert_eq!(
            count.to_string(),
            "10 values for 4 keys; CUBICSPLINE needs 12"
        );
        assert_eq!(
            KeyframeError::TimesNotIncreasing { key: 12 }.to_string(),
            "times are not increasing at key 12"
        );
    }

    // --- sampling ---------------------------------------------------------------

    #[test]
    fn a_step_time_a_rounding_error_short_of_a_key_is_that_key() {
        let key = 10.0_f32 / 30.0;
        let keys = scalar(&[0.0, key, 1.0], &[1.0, 2.0, 3.0], Step);
        let just_short = f32::from_bits(key.to_bits() - 1);
        assert_eq!(keys.sample(just_short), 2.0);
        assert_eq!(keys.sample(key - 1e-4), 1.0);
        // At a long take's end the rounding is coarser, and still no time between keys.
        let late = 600.0_f32 + 10.0 / 30.0;
        let keys = scalar(&[600.0, late, 601.0], &[1.0, 2.0, 3.0], Step);
        assert_eq!(keys.sample(f32::from_bits(late.to_bits() - 2)), 2.0);
        assert_eq!(keys.sample(late - 1.0 / 240.0), 1.0);
    }

    #[test]
    fn step_linear_and_clamping_table() {
        let times = [0.0, 1.0, 3.0];
        let values = [10.0, 20.0, 0.0];
        // (interpolation, t, expected)
        let cases = [
            (Step, -1.0, 10.0),
            (Step, 0.0, 10.0),
            (Step, 0.5, 10.0),
            (Step, 0.999, 10.0),
            (Step, 1.0, 20.0),
            (Step, 2.9, 20.0),
            (Step, 3.0, 0.0),
            (Step, 100.0, 0.0),
            (Linear, -1.0, 10.0),
            (Linear, 0.0, 10.0),
            (Linear, 0.25, 12.5),
            (Linear, 1.0, 20.0),
            (Linear, 2.0, 10.0),
            (Linear, 2.5, 5.0),
            (Linear, 3.0, 0.0),
            (Linear, 4.0, 0.0),
            (Linear, f32::NAN, 10.0),
        ];
        for (interpolation, t, expected) in cases {
            let keys = scalar(&times, &values, interpolation);
            let got = keys.sample(t);
            assert!(
                (got - expected).abs() < 1e-6,
                "{interpolation} at {t}: {got}"
            );
        }
    }

    #[test]
    fn one_key_is_that_value_everywhere() {
        for interpolation in [Step, Linear] {
            let keys = scalar(&[0.5], &[7.0], interpolation);
            for t in [-1.0, 0.5, 2.0] {
                assert_eq!(keys.sample(t), 7.0);
            }
            assert_eq!(keys.duration(), 0.0);
        }
        let cubic = scalar(&[0.5], &[1.0, 7.0, 3.0], CubicSpline);
        assert_eq!(cubic.sample(0.0), 7.0);
        assert_eq!(cubic.sample(9.0), 7.0);
    }

    #[test]
    fn equal_times_jump_to_the_later_key() {
        let times = [0.0, 1.0, 1.0, 2.0];
        let values = [0.0, 1.0, 5.0, 6.0];
        for interpolation in [Step, Linear] {
            let keys = scalar(&times, &values, interpolation);
            assert_eq!(keys.sample(1.0), 5.0, "{interpolation}");
        }
        let linear = scalar(&times, &values, Linear);
        assert!((linear.sample(0.5) - 0.5).abs() < 1e-6);
        assert!((linear.sample(1.5) - 5.5).abs() < 1e-6);
    }

    #[test]
    fn sampling_at_a_key_time_returns_the_key_value_exactly() {
        let times = [0.0, 0.1, 0.35, 0.7];
        let rotations = [
            Quat::from_rotation_x(0.3),
            Quat::from_rotation_y(1.1),
            Quat::from_rotation_z(-0.4),
            Quat::from_euler(glam::EulerRot::XYZ, 0.2, 0.7, -1.3),
        ];
        for interpolation in [Step, Linear] {
            let keys = Keyframes::new(times.to_vec(), rotations.to_vec(), interpolation).unwrap();
            for (k, &t) in times.iter().enumerate() {
                assert_eq!(keys.sample(t), keys.key_value(k));
                assert_eq!(keys.sample(t), rotations[k]);
            }
        }
        let cubic: Vec<Vec3> = (0..12).map(|i| Vec3::splat(i as f32)).collect();
        let keys = Keyframes::new(times.to_vec(), cubic, CubicSpline).unwrap();
        for (k, &t) in times.iter().enumerate() {
            assert_eq!(keys.sample(t), Vec3::splat((3 * k + 1) as f32));
        }
    }

    #[test]
    fn linear_vectors_lerp() {
        let keys = Keyframes::new(
            vec![1.0, 2.0],
            vec![Vec3::new(0.0, 1.0, 2.0), Vec3::new(4.0, -1.0, 2.0)],
            Linear,
        )
        .unwrap();
        assert!(
            keys.sample(1.25)
                .abs_diff_eq(Vec3::new(1.0, 0.5, 2.0), 1e-6)
        );
        assert_eq!(keys.sample(0.0), Vec3::new(0.0, 1.0, 2.0));
        assert_eq!(keys.sample(3.0), Vec3::new(4.0, -1.0, 2.0));
    }

    #[test]
    fn linear_rotations_slerp_like_glam_along_the_shortest_path() {
        let a = Quat::from_rotation_y(0.2);
        let b = Quat::from_euler(glam::EulerRot::YXZ, 2.0, 0.5, -0.3);
        // `-b` is the same rotation; slerp must still take the short way.
        for end in [b, -b] {
            let keys = Keyframes::new(vec![0.0, 2.0], vec![a, end], Linear).unwrap();
            for s in [0.1, 0.25, 0.5, 0.9] {
                let got = keys.sample(2.0 * s);
                let expected = a.slerp(b, s);
                assert!(
                    got.dot(expected).abs() > 1.0 - 1e-6,
                    "s {s}: {got} vs {expected}"
                );
                assert!(got.is_normalized());
            }
        }
        // 0.6π about Z stored as its negation: the middle is 0.3π about +Z, not
        // 0.7π the long way round.
        let end = -Quat::from_rotation_z(0.6 * PI);
        let keys = Keyframes::new(vec![0.0, 1.0], vec![Quat::IDENTITY, end], Linear).unwrap();
        let middle = keys.sample(0.5);
        assert!(
            middle.dot(Quat::from_rotation_z(0.3 * PI)).abs() > 1.0 - 1e-6,
            "{middle}"
        );
    }

    #[test]
    fn rotations_are_normalized_when_built_and_unit_ones_kept_bit_for_bit() {
        let long = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
        let short = Quat::from_xyzw(0.3, 0.0, 0.0, 0.9);
        // Unit within f32 rounding, but not what `normalize` would return.
        let unit = Quat::from_xyzw(-0.003_763_259_4, 0.722_826_96, 0.002_388_894, 0.691_014_8);
        let keys = Keyframes::new(vec![0.0, 1.0, 2.0], vec![long, short, unit], Step).unwrap();
        assert_eq!(keys.sample(0.0), Quat::IDENTITY);
        assert!(keys.sample(1.0).is_normalized());
        assert!(keys.sample(1.0).abs_diff_eq(short.normalize(), 1e-7));
        assert_eq!(keys.sample(2.0), unit);
    }

    #[test]
    fn cubic_spline_matches_hand_computed_values() {
        // Keys at t = 1 and t = 3 (td = 2): v0 = 0, b0 (out) = 1, a1 (in) = -1, v1 = 2.
        // At s = 0.5: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125, so
        // p = 0.5·0 + 2·0.125·1 + 0.5·2 + 2·(−0.125)·(−1) = 0.25 + 1 + 0.25 = 1.5.
        // At s = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = −0.046875,
        // p = 0.28125 + 0.3125 + 0.09375 = 0.6875.
        let values = [9.0, 0.0, 1.0, -1.0, 2.0, 9.0];
        let keys = scalar(&[1.0, 3.0], &values, CubicSpline);
        let cases = [
            (0.0, 0.0),
            (1.0, 0.0),
            (1.5, 0.6875),
            (2.0, 1.5),
            (3.0, 2.0),
            (4.0, 2.0),
        ];
        for (t, expected) in cases {
            let got = keys.sample(t);
            assert!((got - expected).abs() < 1e-6, "at {t}: {got}");
        }
        // Each component of a vector follows the same spline.
        let vectors: Vec<Vec3> = values.iter().map(|&v| Vec3::new(v, 2.0 * v, -v)).collect();
        let keys = Keyframes::new(vec![1.0, 3.0], vectors, CubicSpline).unwrap();
        assert!(
            keys.sample(2.0)
                .abs_diff_eq(Vec3::new(1.5, 3.0, -1.5), 1e-6)
        );
    }

    #[test]
    fn cubic_spline_rotation_is_normalized_component_spline() {
        // Zero tangents between identity and a quarter turn about Z: at s = 0.5 the
        // components are the average (h00 = h01 = 0.5), normalized.
        let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let quarter = Quat::from_rotation_z(FRAC_PI_2);
        let values = vec![zero, Quat::IDENTITY, zero, zero, quarter, zero];
        let keys = Keyframes::new(vec![0.0, 1.0], values, CubicSpline).unwrap();
        let expected = Quat::from_rotation_z(FRAC_PI_2 / 2.0);
        let got = keys.sample(0.5);
        assert!(got.is_normalized());
        assert!(got.abs_diff_eq(expected, 1e-6), "{got}");
    }

    // --- frame times --------------------------------------------------------------

    #[test]
    fn shared_or_covered_key_times_are_used_as_they_are() {
        let dense = [0.0, 0.1, 0.2, 0.2, 0.35];
        let ends = [0.0, 0.35];
        let got = frame_times(&[&dense, &ends, &dense], 100).unwrap();
        assert_eq!(got.times, [0.0, 0.1, 0.2, 0.35]);
        assert_eq!(got.resampled_fps, None);
    }

    #[test]
    fn key_times_rounded_apart_are_one_frame() {
        // A 50 fps channel whose converter wrote some keys twice, 10 µs apart, and a
        // channel with its first and last keys.
        let rounded = [0.0, 0.01999, 0.02, 0.04, 0.05999, 0.06, 0.08];
        let ends = [0.0, 0.08];
        let got = frame_times(&[&rounded, &ends], 100).unwrap();
        assert_eq!(got.times, [0.0, 0.02, 0.04, 0.06, 0.08]);
        assert_eq!(got.resampled_fps, None);
        // 1000 Hz keys stay every one, and a doubled first key keeps the start.
        let fast: Vec<f32> = (0..50).map(|i| i as f32 / 1000.0).collect();
        assert_eq!(frame_times(&[&fast], 100).unwrap().times, fast);
        let doubled_start = [0.0, 0.00001, 0.02, 0.04];
        assert_eq!(
            frame_times(&[&doubled_start], 100).unwrap().times,
            [0.0, 0.02, 0.04]
        );
    }

    #[test]
    fn different_key_times_are_resampled_at_the_nearest_standard_rate() {
        // (channels, expected fps, expected frame count)
        let at = |fps: f32, n: usize| (0..n).map(|i| i as f32 / fps).collect::<Vec<_>>();
        let odd = [0.0, 0.013, 0.5];
        let cases: [(Vec<Vec<f32>>, f32, usize); 4] = [
            // 29.97 fps keys and a stray one: 30 fps, 0..1 s.
            (vec![at(29.97, 30), vec![0.0, 0.55, 1.0]], 30.0, 31),
            // 24 fps keys ending at 1.01 s: 0..1 at 24 fps, then 1.01.
            (vec![at(24.0, 25), vec![0.3, 1.01]], 24.0, 26),
            // The densest channel decides: median of 0.013 and 0.487 vs 1/60.
            (vec![at(60.0, 61), odd.to_vec()], 60.0, 61),
            (vec![at(110.0, 111), odd.to_vec()], 120.0, 121),
        ];
        for (channels, fps, count) in cases {
            let slices: Vec<&[f32]> = channels.iter().map(Vec::as_slice).collect();
            let got = frame_times(&slices, 10_000).unwrap();
            assert_eq!(got.resampled_fps, Some(fps), "{channels:?}");
            assert_eq!(got.times.len(), count, "{:?}", got.times);
            let end = slices
                .iter()
                .map(|c| *c.last().unwrap())
                .fold(0.0, f32::max);
            assert_eq!(got.times.last().copied(), Some(end));
            assert_eq!(got.times[0], 0.0);
            assert!((got.times[1] - 1.0 / fps).abs() < 1e-6);
            assert!(got.times.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn single_keys_at_different_times_are_their_own_frames() {
        let got = frame_times(&[&[1.0], &[0.5], &[1.0]], 10).unwrap();
        assert_eq!(got.times, [0.5, 1.0]);
        assert_eq!(got.resampled_fps, None);
    }

    #[test]
    fn a_grid_longer_than_the_limit_is_refused() {
        let long = [0.0, 1.0 / 30.0, 3.0e7];
        let err = frame_times(&[&long, &[0.5]], 1000).unwrap_err();
        assert_eq!(err.max, 1000);
        assert!(err.frames > 1e8, "{err}");
        assert!(frame_times(&[&[0.0, 1.0, 2.0]], 2).is_err());
        assert_eq!(frame_times(&[], 2).unwrap().times, Vec::<f32>::new());
    }
}
