//! Recordings played as a stream of timestamped `HumanoidPose` frames: a `.vrma`
//! clip, an EXT_skeleton_humanoid clip, or a rig's clip (BVH, glTF) through its
//! bone map. Frames come at the
//! recording's own key times, or on a fixed grid when a rate is asked for, each
//! pose interpolated as the file says (STEP, LINEAR or CUBICSPLINE for keyframed
//! clips). The live bridge streams a `Replay` as an input (`stream_fps` says at
//! which rate); `convert` uses it to re-encode.
//!
//! `Replay` is pure: it says which frame comes at which time. `Pacer` turns those
//! times into real time for a live stream; without it frames come as fast as the
//! caller takes them.

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};

use crate::formats::Motion;
use crate::formats::ext_humanoid::ExtHumanoidClip;
use crate::formats::sampler::Interpolation;
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

/// A grid time this close to the end (seconds) is the end: `f32` rounding of a
/// clip's last key (`479 / 60`) must not add a frame a hair before it.
const END_TOLERANCE: f32 = 1e-4;

/// Frame times: the recording's own, or a grid at `fps` from 0 to `duration`
/// (the last frame exactly at `duration`).
#[must_use]
pub fn frame_times(own: &[f32], duration: f32, fps: Option<f32>) -> Vec<f32> {
    match fps {
        Some(rate) if rate > 0.0 && rate.is_finite() => {
            let mut times: Vec<f32> = (0..)
                .map(|i| i as f32 / rate)
                .take_while(|t| *t < duration - END_TOLERANCE)
                .collect();
            times.push(duration.max(0.0));
            times
        }
        _ if own.is_empty() => vec![0.0],
        _ => own.to_vec(),
    }
}

/// The most frames per second a replay streams at or a take is resampled to
/// (`run --fps`, `replay.fps`, `send --fps`, `convert --fps`): past every
/// capture and display rate, and each frame's time and pose are kept in memory.
pub const MAX_FPS: f32 = 1000.0;

/// Frames per second of a replay streamed live whose file has no frame rate of
/// its own (see `stream_fps`).
pub const DEFAULT_STREAM_FPS: f32 = 60.0;

/// The grid a replay streams on: `fps` when one is asked for; else `None` (the
/// file's own frames) for a file that has a frame rate (`framed`: a BVH's `Frame
/// Time`, the built-in performance); else `DEFAULT_STREAM_FPS`. Keyframed clips
/// (.vrma, glTF) place keys where the motion changes, not at a frame rate: a clip
/// with 7 keys over 3 s is still a smooth motion to stream at a live rate.
#[must_use]
pub fn stream_fps(fps: Option<f32>, framed: bool) -> Option<f32> {
    match fps {
        Some(rate) => Some(rate),
        None if framed => None,
        None => Some(DEFAULT_STREAM_FPS),
    }
}

impl Replay {
    /// Plays a `.vrma` clip at its key times, or at `fps`.
    #[must_use]
    pub fn from_vrma(animation: VrmaAnimation, fps: Option<f32>) -> Self {
        let times = frame_times(&animation.frame_times(), animation.duration, fps);
        Self {
            source: FrameSource::Vrma(Box::new(animation)),
            times,
            next: 0,
        }
    }

    /// Plays an EXT_skeleton_humanoid clip at its key times, or at `fps`.
    #[must_use]
    pub fn from_ext(clip: ExtHumanoidClip, fps: Option<f32>) -> Self {
        let times = frame_times(&clip.frame_times(), clip.duration, fps);
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

    /// Whether each frame's pose holds until the next: a `.vrma` or
    /// EXT_skeleton_humanoid clip whose every track is keyed STEP, played at its own
    /// key times or on a grid. A writer of its
    /// frames writes them STEP too, or the poses would move between frames.
    #[must_use]
    pub fn holds_between_frames(&self) -> bool {
        match &self.source {
            FrameSource::Vrma(a) => a.interpolations() == [Interpolation::Step],
            FrameSource::Ext(c) => c.holds_between_keys(),
            FrameSource::Rig { .. } => false,
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

    /// Plays at the recording's own times (`None`) or on a grid at `fps` from
    /// now on, from the first frame.
    pub fn set_fps(&mut self, fps: Option<f32>) {
        self.times = match &self.source {
            FrameSource::Vrma(a) => frame_times(&a.frame_times(), a.duration, fps),
            FrameSource::Ext(c) => frame_times(&c.frame_times(), c.duration, fps),
            FrameSource::Rig { motion, .. } => frame_times(motion.times(), motion.duration(), fps),
        };
        self.next = 0;
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
        // A clip of 480 frames at 60 Hz is 480 frames on the 60 Hz grid.
        let end = 479.0 / 60.0;
        assert_eq!(frame_times(&[0.0, end], end, Some(60.0)).len(), 480);
        assert_eq!(frame_times(&[0.0], 0.0, Some(60.0)), vec![0.0]);
    }

    /// Every frame of `replay`: its time, `bone`'s rotation and the hips position.
    fn play(
        replay: &mut Replay,
        bone: crate::humanoid::HumanBone,
    ) -> Vec<(f32, Option<Quat>, Vec3)> {
        let mut pose = HumanoidPose::default();
        let mut frames = Vec::new();
        while let Some(t) = replay.next_frame(&mut pose) {
            frames.push((t, pose.rotation(bone), pose.hips_position));
        }
        frames
    }

    #[test]
    fn a_vrma_whose_tracks_have_their_own_key_times_plays_every_key_of_each() {
        use crate::formats::glb::{ElementType, FloatAccessor, write_floats};
        use crate::humanoid::HumanBone;
        use serde_json::json;
        // The hips turn keyed at 0, 0.25 and 1 s, their position at 0, 0.5 and 1 s,
        // as a keyframe-reduced file keys them.
        let turn = Quat::from_rotation_y(1.0);
        let rotation_times = [0.0, 0.25, 1.0];
        let rotations = [Quat::IDENTITY, turn, Quat::IDENTITY].map(|q| q.to_array());
        let position_times = [0.0, 0.5, 1.0];
        let positions = [[0.0, 1.0, 0.0], [0.3, 1.0, 0.0], [0.0, 1.0, 0.0]];
        let mut bytes = Vec::new();
        write_floats(
            &mut bytes,
            [
                ("scene", json!(0)),
                ("scenes", json!([{"nodes": [0]}])),
                (
                    "nodes",
                    json!([{"name": "hips", "translation": [0.0, 1.0, 0.0]}]),
                ),
                (
                    "animations",
                    json!([{
                        "channels": [
                            {"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                            {"sampler": 1, "target": {"node": 0, "path": "translation"}}
                        ],
                        "samplers": [{"input": 0, "output": 1}, {"input": 2, "output": 3}]
                    }]),
                ),
                ("extensionsUsed", json!(["VRMC_vrm_animation"])),
                (
                    "extensions",
                    json!({"VRMC_vrm_animation": {
                        "specVersion": "1.0",
                        "humanoid": {"humanBones": {"hips": {"node": 0}}}
                    }}),
                ),
            ],
            &[
                FloatAccessor::key_times(&rotation_times),
                FloatAccessor::new(rotations.as_flattened(), ElementType::Vec4),
                FloatAccessor::key_times(&position_times),
                FloatAccessor::new(positions.as_flattened(), ElementType::Vec3),
            ],
        )
        .unwrap();
        let animation =
            crate::formats::vrma::parse(&bytes, std::path::Path::new("own.vrma"), None).unwrap();
        let mut replay = Replay::from_vrma(animation, None);
        assert_eq!(replay.times(), [0.0, 0.25, 0.5, 1.0]);
        let frames = play(&mut replay, HumanBone::Hips);
        let (_, turned, _) = frames[1];
        assert!(turned.unwrap().angle_between(turn) < 1e-6);
        let (_, _, moved) = frames[2];
        assert!(moved.distance(Vec3::new(0.3, 1.0, 0.0)) < 1e-6);
    }

    #[test]
    fn an_ext_clip_whose_tracks_have_their_own_key_times_plays_every_key_of_each() {
        use crate::formats::sampler::Keyframes;
        use crate::humanoid::HumanBone;
        // The spine keyed at 0, 0.25 and 1 s, the hips' offset at 0, 0.5 and 1 s.
        let bend = Quat::from_rotation_x(0.5);
        let spine = Keyframes::new(
            vec![0.0, 0.25, 1.0],
            vec![Quat::IDENTITY, bend, Quat::IDENTITY],
            Interpolation::Linear,
        )
        .unwrap();
        let offset = Vec3::new(0.3, 0.0, 0.0);
        let hips = Keyframes::new(
            vec![0.0, 0.5, 1.0],
            vec![Vec3::ZERO, offset, Vec3::ZERO],
            Interpolation::Linear,
        )
        .unwrap();
        let clip = ExtHumanoidClip {
            name: None,
            duration: 1.0,
            tracks: vec![(HumanBone::Spine, spine)],
            hips_translation: Some(hips),
            hips_bind_world: glam::Affine3A::from_translation(Vec3::new(0.0, 0.9, 0.0)),
            rest: None,
        };
        let mut replay = Replay::from_ext(clip, None);
        assert_eq!(replay.times(), [0.0, 0.25, 0.5, 1.0]);
        let frames = play(&mut replay, HumanBone::Spine);
        let (_, bent, _) = frames[1];
        assert!(bent.unwrap().angle_between(bend) < 1e-6);
        let (_, _, moved) = frames[2];
        assert!(moved.distance(Vec3::new(0.3, 0.9, 0.0)) < 1e-6);
    }

    #[test]
    fn keyframed_clips_stream_at_the_default_rate_and_framed_ones_at_their_own() {
        assert_eq!(stream_fps(None, false), Some(DEFAULT_STREAM_FPS));
        assert_eq!(stream_fps(None, true), None);
        assert_eq!(stream_fps(Some(24.0), true), Some(24.0));
        assert_eq!(stream_fps(Some(24.0), false), Some(24.0));
        // 7 keys over 3 s at 60 Hz: a frame every 1/60 s, the last at 3 s.
        let keys = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0];
        let times = frame_times(&keys, 3.0, stream_fps(None, false));
        assert_eq!(times.len(), 181);
        assert_eq!(times[1], 1.0 / 60.0);
        assert_eq!(times.last(), Some(&3.0));
    }
}
