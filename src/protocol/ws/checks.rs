//! Incoming checks: every number finite and at most `MAX_MAGNITUDE`, quaternions
//! not zero (and normalized), names within their bounds. Each failure is a
//! `WsError::InvalidValue` naming the field.

use std::borrow::Cow;

use glam::{Quat, Vec3};

use super::MAX_MAGNITUDE;
use super::error::{Problem, WsError, invalid, quoted};
use super::wire::Text;
use crate::protocol::frame::{MAX_NAME, PerformerName};

/// What is wrong with incoming numbers: non-finite or over `MAX_MAGNITUDE`.
fn number_problem(values: &[f32]) -> Option<Problem> {
    if values.iter().any(|v| !v.is_finite()) {
        Some(Problem::NotFinite)
    } else if values.iter().any(|v| v.abs() > MAX_MAGNITUDE) {
        Some(Problem::TooLarge)
    } else {
        None
    }
}

pub(super) fn check_position(field: impl FnOnce() -> String, p: [f32; 3]) -> Result<Vec3, WsError> {
    match number_problem(&p) {
        Some(problem) => Err(invalid(field(), problem)),
        None => Ok(Vec3::from_array(p)),
    }
}

/// A finite, bounded, non-zero quaternion, normalized.
pub(super) fn check_rotation(field: impl FnOnce() -> String, q: Quat) -> Result<Quat, WsError> {
    // Used only once the components are known to be at most 1e4: their squares sum
    // to at most 4e8, no overflow.
    let length = q.length();
    let problem = number_problem(&q.to_array())
        .or_else(|| (length < 1e-6).then_some(Problem::ZeroQuaternion));
    match problem {
        Some(problem) => Err(invalid(field(), problem)),
        None => Ok(q / length),
    }
}

pub(super) fn check_time(time: f64) -> Result<f64, WsError> {
    if time.is_finite() {
        Ok(time)
    } else {
        Err(invalid("time", Problem::NotFinite))
    }
}

pub(super) fn check_performer(field: &str, name: &Text<'_>) -> Result<PerformerName, WsError> {
    PerformerName::new(&name.0).ok_or_else(|| invalid(field, Problem::NameLength))
}

pub(super) fn check_recording_name(name: Text<'_>) -> Result<Cow<'_, str>, WsError> {
    let ok = (1..=MAX_NAME).contains(&name.0.len())
        && name
            .0
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(name.0)
    } else {
        Err(invalid("name", Problem::RecordingName))
    }
}

/// The field name of joint `key` in an error message (`joints.Hips`).
pub(super) fn joint_field(key: &str) -> String {
    format!("joints.{}", quoted(key))
}
