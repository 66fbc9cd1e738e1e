//! The ranges of the solver's settings (`filter`, `deviceFilter`, `mocapIk`,
//! `vrIk`, `calibration`), as docs/configuration.md states them. Each type lists
//! its numbers once, with their keys as the file spells them and their ranges;
//! `Ranges::check_ranges` gives the first one out of range. `BridgeConfig::check`
//! holds every `performerDefaults` and `performers` entry to them, and `eval-ik`
//! its `--config` and `--device-filter`.

use std::fmt;

use glam::{Quat, Vec3};

use super::PerformerConfig;
use crate::filter::{DeviceFilterConfig, OneEuroConfig};
use crate::ik::calibration::Calibration;
use crate::ik::mocap::MocapIkConfig;
use crate::ik::vr::VrIkConfig;

/// The longest time a setting may give, seconds (a day), as `MAX_SECONDS`.
const DAY: f32 = super::MAX_SECONDS;

/// The numbers a setting may take. Every range excludes NaN and infinities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// From the first to the second, both included.
    Between(f32, f32),
    /// This or more.
    AtLeast(f32),
    /// More than 0 and at most this.
    Positive(f32),
}

impl Range {
    #[must_use]
    pub fn contains(self, value: f32) -> bool {
        value.is_finite()
            && match self {
                Self::Between(low, high) => (low..=high).contains(&value),
                Self::AtLeast(low) => value >= low,
                Self::Positive(high) => value > 0.0 && value <= high,
            }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Between(low, high) => write!(f, "from {low} to {high}"),
            Self::AtLeast(low) => write!(f, "{low} or more"),
            Self::Positive(high) if high.is_finite() => write!(f, "more than 0, at most {high}"),
            Self::Positive(_) => write!(f, "more than 0"),
        }
    }
}

/// A setting out of its range: its key (within the object checked, dotted:
/// `mocapIk.handWeight`) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub key: String,
    pub message: String,
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl OutOfRange {
    /// The same, its key inside `object` (`filter` + `beta`: `filter.beta`).
    #[must_use]
    pub fn inside(self, object: &str) -> Self {
        Self {
            key: format!("{object}.{}", self.key),
            ..self
        }
    }
}

/// Settings whose numbers have documented ranges.
pub trait Ranges {
    /// Each number with its key and its range.
    fn numbers(&self) -> Vec<(&'static str, f32, Range)>;

    /// Other values that must hold (rotations, vectors), checked after the
    /// numbers.
    fn others(&self) -> Result<(), OutOfRange> {
        Ok(())
    }

    /// The first setting out of its range.
    fn check_ranges(&self) -> Result<(), OutOfRange> {
        for (key, value, range) in self.numbers() {
            if !range.contains(value) {
                return Err(OutOfRange {
                    key: key.to_owned(),
                    message: format!("{value} is not {range}"),
                });
            }
        }
        self.others()
    }
}

impl Ranges for OneEuroConfig {
    fn numbers(&self) -> Vec<(&'static str, f32, Range)> {
        vec![
            ("minCutoff", self.min_cutoff, Range::Positive(f32::INFINITY)),
            ("beta", self.beta, Range::AtLeast(0.0)),
            ("dCutoff", self.d_cutoff, Range::Positive(f32::INFINITY)),
        ]
    }
}

impl Ranges for DeviceFilterConfig {
    fn numbers(&self) -> Vec<(&'static str, f32, Range)> {
        let max_taps = crate::filter::device::MAX_TAPS as f32;
        vec![
            ("noiseM", self.noise_m, Range::AtLeast(0.0)),
            (
                "rotationNoiseDeg",
                self.rotation_noise_deg,
                Range::AtLeast(0.0),
            ),
            ("velocity", self.velocity, Range::Positive(f32::INFINITY)),
            (
                "acceleration",
                self.acceleration,
                Range::Positive(f32::INFINITY),
            ),
            ("jerk", self.jerk, Range::Positive(f32::INFINITY)),
            ("smoothness", self.smoothness, Range::AtLeast(0.0)),
            // A count: exact in an f32 far past any range it is checked against.
            ("taps", self.taps as f32, Range::Between(2.0, max_taps)),
        ]
    }
}

impl Ranges for MocapIkConfig {
    fn numbers(&self) -> Vec<(&'static str, f32, Range)> {
        let share = Range::Between(0.0, 1.0);
        let at_least_0 = Range::AtLeast(0.0);
        vec![
            ("handWeight", self.hand_weight, share),
            ("footWeight", self.foot_weight, share),
            ("softness", self.softness, at_least_0),
            ("contactSpeed", self.contact_speed, at_least_0),
            ("contactHeight", self.contact_height, at_least_0),
            ("contactRelease", self.contact_release, Range::AtLeast(1.0)),
            ("floorPercentile", self.floor_percentile, share),
            ("floorSeconds", self.floor_seconds, Range::Positive(DAY)),
            (
                "releaseSeconds",
                self.release_seconds,
                Range::Between(0.0, DAY),
            ),
            ("maxHipsDrop", self.max_hips_drop, at_least_0),
        ]
    }
}

impl Ranges for VrIkConfig {
    fn numbers(&self) -> Vec<(&'static str, f32, Range)> {
        let share = Range::Between(0.0, 1.0);
        let at_least_0 = Range::AtLeast(0.0);
        let seconds = Range::Between(0.0, DAY);
        let positive = Range::Positive(f32::INFINITY);
        vec![
            ("softness", self.softness, at_least_0),
            ("spineShare", self.spine_share, share),
            ("spineTwist", self.spine_twist, share),
            ("shoulderShare", self.shoulder_share, share),
            ("shoulderReach", self.shoulder_reach, share),
            ("stepDistance", self.step_distance, positive),
            ("forearmTwist", self.forearm_twist, share),
            ("stepLead", self.step_lead, seconds),
            ("stepSeconds", self.step_seconds, Range::Positive(DAY)),
            ("stepHeight", self.step_height, at_least_0),
            ("legSoftness", self.leg_softness, at_least_0),
            ("trackedLegSoftness", self.tracked_leg_softness, at_least_0),
            ("gaitSpeed", self.gait_speed, positive),
            ("swaySeconds", self.sway_seconds, Range::Positive(DAY)),
            ("swayThreshold", self.sway_threshold, at_least_0),
            ("armSwingThreshold", self.arm_swing_threshold, at_least_0),
            ("walkRatio", self.walk_ratio, positive),
            ("neckSeconds", self.neck_seconds, seconds),
            ("bodyTurnSeconds", self.body_turn_seconds, seconds),
            ("torsoSeconds", self.torso_seconds, seconds),
            ("trackedTorsoSeconds", self.tracked_torso_seconds, seconds),
            ("crouchBack", self.crouch_back, at_least_0),
            ("crouchSeconds", self.crouch_seconds, seconds),
        ]
    }
}

impl Ranges for Calibration {
    fn numbers(&self) -> Vec<(&'static str, f32, Range)> {
        vec![
            ("height", self.height, Range::Positive(f32::INFINITY)),
            ("armSpan", self.arm_span, Range::Positive(f32::INFINITY)),
        ]
    }

    fn others(&self) -> Result<(), OutOfRange> {
        let rotation = |key: String, q: Quat| {
            if q.is_finite() && q.length() > 1e-6 {
                Ok(())
            } else {
                Err(OutOfRange {
                    key,
                    message: format!(
                        "{:?} is not a rotation: a quaternion [x, y, z, w] of non-zero length",
                        q.to_array()
                    ),
                })
            }
        };
        let vector = |key: String, v: Vec3| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(OutOfRange {
                    key,
                    message: "not a vector of finite numbers".into(),
                })
            }
        };
        rotation("headRotation".into(), self.head_rotation)?;
        vector("headToEye".into(), self.head_to_eye)?;
        for (i, (q, v)) in self
            .hand_rotations
            .iter()
            .zip(&self.wrist_offsets)
            .enumerate()
        {
            rotation(format!("handRotations[{i}]"), *q)?;
            vector(format!("wristOffsets[{i}]"), *v)?;
        }
        Ok(())
    }
}

impl PerformerConfig {
    /// The first setting out of its range, its key inside the entry
    /// (`mocapIk.handWeight`).
    pub fn check_ranges(&self) -> Result<(), OutOfRange> {
        if let Some(filter) = &self.filter {
            filter.check_ranges().map_err(|e| e.inside("filter"))?;
        }
        if let Some(filter) = &self.device_filter {
            filter
                .check_ranges()
                .map_err(|e| e.inside("deviceFilter"))?;
        }
        self.mocap_ik
            .ik
            .check_ranges()
            .map_err(|e| e.inside("mocapIk"))?;
        self.vr_ik.check_ranges().map_err(|e| e.inside("vrIk"))?;
        if let Some(calibration) = &self.calibration {
            calibration
                .check_ranges()
                .map_err(|e| e.inside("calibration"))?;
        }
        Ok(())
    }
}
