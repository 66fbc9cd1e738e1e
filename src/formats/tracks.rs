//! Growing keyframe buffers for writers that take frames as they come (`vrma`,
//! `ext_humanoid`): the checks every appended frame passes, and one float track per
//! channel where a channel that first appears late holds its rest value in the
//! earlier frames and a frame that lacks it repeats its last value.

use crate::humanoid::HumanoidPose;

/// Why a frame was not appended.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum PushError {
    #[error("frame time {time} s is not after the previous frame's {previous} s")]
    TimeNotIncreasing { time: f32, previous: f32 },
    #[error("frame at {0} s holds a value that is not finite")]
    NotFinite(f32),
}

/// Checks a frame before it is appended after `times`: a finite time after the
/// last one, a finite hips position and finite rotations.
pub fn check_frame(times: &[f32], time: f32, pose: &HumanoidPose) -> Result<(), PushError> {
    if !time.is_finite() || !pose.hips_position.is_finite() {
        return Err(PushError::NotFinite(time));
    }
    if let Some(&previous) = times.last()
        && time <= previous
    {
        return Err(PushError::TimeNotIncreasing { time, previous });
    }
    if pose.bones().any(|(_, q)| !q.is_finite()) {
        return Err(PushError::NotFinite(time));
    }
    Ok(())
}

/// Appends one frame to a channel's track, `rest.len()` floats per frame, when
/// `frames` frames were appended before this one. `value` is this frame's value, if
/// the frame has one; the track is created (back-filled with `rest`) when it first
/// gets a value, and repeats its last value when a frame has none.
pub fn record(track: &mut Option<Vec<f32>>, frames: usize, rest: &[f32], value: Option<&[f32]>) {
    match (value, track) {
        (Some(v), Some(track)) => track.extend_from_slice(v),
        (Some(v), track @ None) => {
            let mut values = rest.repeat(frames);
            values.extend_from_slice(v);
            *track = Some(values);
        }
        (None, Some(track)) => {
            let start = track.len() - rest.len();
            track.extend_from_within(start..);
        }
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_channels_are_back_filled_and_gaps_repeat() {
        let mut track = None;
        record(&mut track, 0, &[0.0], None);
        record(&mut track, 1, &[0.0], Some(&[5.0]));
        record(&mut track, 2, &[0.0], None);
        record(&mut track, 3, &[0.0], Some(&[7.0]));
        assert_eq!(track, Some(vec![0.0, 5.0, 5.0, 7.0]));
    }

    #[test]
    fn frames_must_move_forward_and_be_finite() {
        let pose = HumanoidPose::default();
        assert!(check_frame(&[1.0], 2.0, &pose).is_ok());
        assert!(matches!(
            check_frame(&[1.0], 1.0, &pose),
            Err(PushError::TimeNotIncreasing { .. })
        ));
        assert!(matches!(
            check_frame(&[], f32::NAN, &pose),
            Err(PushError::NotFinite(_))
        ));
    }
}
