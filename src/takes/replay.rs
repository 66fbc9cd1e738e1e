//! Recordings played as a stream of timestamped `HumanoidPose` frames: a `.vrma`
//! clip, an EXT_skeleton_humanoid clip, or a rig's clip (BVH, glTF) through its
//! bone map. Frames come at the
//! recording's own key times, or on a fixed grid when a rate is asked for. The
//! live bridge uses a `Replay` as an input; `convert` uses it to re-encode.
//!
//! `Replay` is pure: it says which frame comes at which time. `Pacer` turns those
//! times into real time for a live stream; without it frames come as fast as the
//! caller takes them.

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};

use crate::formats::Motion;
use crate::formats::ext_humanoid::ExtHumanoidClip;
use crate::formats::vrma::VrmaAnimation;
use crate::humanoid::HumanoidPose;
use crate::retarget::{MappedSkeleton, SourceRig, ToNormalized};

/// Where the frames come from.
enum FrameSource {
    Vrma(Box<VrmaAnimation>),
    Ext(Box<ExtHumanoidClip>),
    Rig {
        rig: Box<SourceRig>,
        motion: Motion,
        rotations: Vec<Quat>,
        translations: Vec<Vec3>,
    },
}

/// A recording as a sequence of (time, pose) frames.
pub struct Replay {
    source: FrameSource,
    times: Vec<f32>,
    next: usize,
}

/// Frame times: the recording's own, or a grid at `fps` from 0 to `duration`
/// (the last frame exactly at `duration`).
#[must_use]
pub fn frame_times(own: &[f32], duration: f32, fps: Option<f32>) -> Vec<f32> {
    match fps {
        Some(rate) if rate > 0.0 && rate.is_finite() => {
            let steps = (duration * rate).ceil().max(0.0) as usize;
            let mut times: Vec<f32> = (0..steps).map(|i| i as f32 / rate).collect();
            times.push(duration);
            times.dedup();
            times
        }
        _ if own.is_empty() => vec![0.0],
        _ => own.to_vec(),
    }
}

impl Replay {
    /// Plays a `.vrma` clip at its key times, or at `fps`.
    #[must_use]
    pub fn from_vrma(animation: VrmaAnimation, fps: Option<f32>) -> Self {
        let times = frame_times(animation.key_times(), animation.duration, fps);
        Self {
            source: FrameSource::Vrma(Box::new(animation)),
            times,
            next: 0,
        }
    }

    /// Plays an EXT_skeleton_humanoid clip at its key times, or at `fps`.
    #[must_use]
    pub fn from_ext(clip: ExtHumanoidClip, fps: Option<f32>) -> Self {
        let times = frame_times(clip.key_times(), clip.duration, fps);
        Self {
            source: FrameSource::Ext(Box::new(clip)),
            times,
            next: 0,
        }
    }

    /// Plays a rig's clip through its bone map, at its frame times or at `fps`.
    #[must_use]
    pub fn from_rig(mapped: &MappedSkeleton, motion: Motion, fps: Option<f32>) -> Self {
        let times = frame_times(motion.times(), motion.duration(), fps);
        let joints = mapped.skeleton.len();
        Self {
            source: FrameSource::Rig {
                rig: Box::new(SourceRig::new(mapped)),
                motion,
                rotations: mapped.skeleton.rest_rotations(),
                translations: vec![Vec3::ZERO; joints],
            },
            times,
            next: 0,
        }
    }

    /// How many frames the replay has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether there is no frame at all (never: a replay has at least one).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of every frame, seconds.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Starts again from the first frame.
    pub fn rewind(&mut self) {
        self.next = 0;
    }

    /// Fills `pose` with the next frame and returns its time; `None` at the end.
    pub fn next_frame(&mut self, pose: &mut HumanoidPose) -> Option<f32> {
        let t = *self.times.get(self.next)?;
        self.next += 1;
        self.pose_at(t, pose);
        Some(t)
    }

    /// Fills `pose` at `t` seconds.
    pub fn pose_at(&mut self, t: f32, pose: &mut HumanoidPose) {
        match &mut self.source {
            FrameSource::Vrma(animation) => animation.sample(t, pose),
            FrameSource::Ext(clip) => clip.sample(t, pose),
            FrameSource::Rig {
                rig,
                motion,
                rotations,
                translations,
            } => {
                motion.sample_into(t, rotations, translations);
                // The buffers were sized for this rig, so the job cannot fail.
                let _ = ToNormalized {
                    source: rig,
                    local_rotations: rotations,
                    local_translations: translations,
                    pose,
                }
                .run();
            }
        }
    }
}

/// Turns frame times into real time: `wait_for(t)` sleeps until `t` seconds after
/// the pacer started.
#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    start: Instant,
}

impl Pacer {
    /// A pacer whose time 0 is now.
    #[must_use]
    pub fn start() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    /// Sleeps until `t` seconds after the start (returns at once if that is past).
    pub fn wait_for(&self, t: f32) {
        let due = self.start + Duration::from_secs_f32(t.max(0.0));
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_times_follow_the_recording_or_a_grid() {
        assert_eq!(
            frame_times(&[0.0, 0.5, 1.0], 1.0, None),
            vec![0.0, 0.5, 1.0]
        );
        assert_eq!(frame_times(&[], 0.0, None), vec![0.0]);
        let grid = frame_times(&[0.0, 1.0], 1.0, Some(4.0));
        assert_eq!(grid, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let uneven = frame_times(&[0.0, 0.9], 0.9, Some(2.0));
        assert_eq!(uneven, vec![0.0, 0.5, 0.9]);
    }
}
