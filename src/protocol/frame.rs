//! What the input codecs produce for the solver: fixed-size frames, no heap, so they
//! can travel through the lock-free rings between input tasks and the solver thread.
//!
//! - `JointFrame`: one frame of a streamed source skeleton (lab OSC, WebSocket
//!   skeleton messages), already converted to local rotations in internal axes
//!   (glTF: right-handed, +Y up, metres), indexed as the performer's skeleton lists
//!   its joints.
//! - `TrackerFrame`: one frame of tracked devices (headset, controllers, trackers)
//!   for VR-mode IK, internal axes, metres.
//!
//! Both carry the performer's name inline (`PerformerName`), so several performers
//! can share one port or one connection.

use glam::{Quat, Vec3};

use crate::humanoid::DevicePose;
use crate::humanoid::HAND_JOINTS;

/// Most joints a streamed skeleton may have.
pub const MAX_JOINTS: usize = 128;

/// Longest performer name, bytes of UTF-8.
pub const MAX_NAME: usize = 32;

/// A performer's name, stored inline: at most `MAX_NAME` bytes of UTF-8.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PerformerName {
    len: u8,
    bytes: [u8; MAX_NAME],
}

impl PerformerName {
    /// `None` when `name` is empty or longer than `MAX_NAME` bytes.
    #[must_use]
    pub fn new(name: &str) -> Option<Self> {
        let len = name.len();
        if len == 0 || len > MAX_NAME {
            return None;
        }
        let mut bytes = [0; MAX_NAME];
        bytes[..len].copy_from_slice(name.as_bytes());
        Some(Self {
            len: len as u8,
            bytes,
        })
    }

    /// `None` when `name` is not UTF-8, empty or too long.
    #[must_use]
    pub fn from_bytes(name: &[u8]) -> Option<Self> {
        Self::new(std::str::from_utf8(name).ok()?)
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        // Built only from a `&str` cut at its full length: always UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for PerformerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for PerformerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One frame of a streamed skeleton: local rotations per joint, internal axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointFrame {
    pub performer: PerformerName,
    /// The sender's frame number.
    pub frame: u64,
    /// The sender's capture time, seconds.
    pub time: f64,
    /// The root joint's position (model space, metres), when sent.
    pub root_position: Option<Vec3>,
    /// How many joints the sender's skeleton has (entries of `rotations` in use).
    pub joint_count: u16,
    /// Which joints this frame carries, bit `j % 64` of word `j / 64`; absent joints
    /// keep their previous (or rest) rotation.
    pub present: [u64; MAX_JOINTS / 64],
    /// Local rotation of each joint relative to its parent, internal axes.
    pub rotations: [Quat; MAX_JOINTS],
}

impl JointFrame {
    /// An empty frame for `performer`: no joints present, rotations at identity.
    #[must_use]
    pub fn new(performer: PerformerName) -> Self {
        Self {
            performer,
            frame: 0,
            time: 0.0,
            root_position: None,
            joint_count: 0,
            present: [0; MAX_JOINTS / 64],
            rotations: [Quat::IDENTITY; MAX_JOINTS],
        }
    }

    /// Sets joint `j`'s local rotation and marks it present (ignored past `MAX_JOINTS`).
    pub fn set(&mut self, joint: usize, rotation: Quat) {
        if joint < MAX_JOINTS {
            self.rotations[joint] = rotation;
            self.present[joint / 64] |= 1 << (joint % 64);
        }
    }

    #[must_use]
    pub fn has(&self, joint: usize) -> bool {
        joint < MAX_JOINTS && self.present[joint / 64] & (1 << (joint % 64)) != 0
    }
}

/// Which tracked point a device pose stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackedPoint {
    Head,
    LeftHand,
    RightHand,
    Hips,
    Chest,
    LeftFoot,
    RightFoot,
    LeftElbow,
    RightElbow,
    LeftKnee,
    RightKnee,
}

impl TrackedPoint {
    pub const COUNT: usize = 11;

    pub const ALL: [TrackedPoint; Self::COUNT] = [
        Self::Head,
        Self::LeftHand,
        Self::RightHand,
        Self::Hips,
        Self::Chest,
        Self::LeftFoot,
        Self::RightFoot,
        Self::LeftElbow,
        Self::RightElbow,
        Self::LeftKnee,
        Self::RightKnee,
    ];

    /// The wire name: `head`, `leftHand`, `rightHand`, `hips`, `chest`, `leftFoot`,
    /// `rightFoot`, `leftElbow`, `rightElbow`, `leftKnee`, `rightKnee`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Head => "head",
            Self::LeftHand => "leftHand",
            Self::RightHand => "rightHand",
            Self::Hips => "hips",
            Self::Chest => "chest",
            Self::LeftFoot => "leftFoot",
            Self::RightFoot => "rightFoot",
            Self::LeftElbow => "leftElbow",
            Self::RightElbow => "rightElbow",
            Self::LeftKnee => "leftKnee",
            Self::RightKnee => "rightKnee",
        }
    }

    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// One frame of tracked devices for VR-mode IK: model space, metres. Headset and
/// controller rotations are raw (the performer's calibration removes the mounts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackerFrame {
    pub performer: PerformerName,
    /// The sender's time, seconds.
    pub time: f64,
    /// Device pose per `TrackedPoint` (index `TrackedPoint as usize`), when tracked.
    pub points: [Option<DevicePose>; TrackedPoint::COUNT],
    /// Tracked hand joints (left, right) in `humanoid::HAND_JOINTS` order,
    /// positions in metres, when the hands are tracked this frame.
    pub hand_joints: [Option<[Vec3; HAND_JOINTS]>; 2],
}

impl TrackerFrame {
    #[must_use]
    pub fn new(performer: PerformerName) -> Self {
        Self {
            performer,
            time: 0.0,
            points: [None; TrackedPoint::COUNT],
            hand_joints: [None; 2],
        }
    }

    #[must_use]
    pub fn point(&self, point: TrackedPoint) -> Option<DevicePose> {
        self.points[point as usize]
    }

    pub fn set(&mut self, point: TrackedPoint, pose: DevicePose) {
        self.points[point as usize] = Some(pose);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn performer_names_are_checked_and_kept() {
        assert_eq!(
            PerformerName::new("alice").map(|n| n.to_string()),
            Some("alice".into())
        );
        assert!(PerformerName::new("").is_none());
        assert!(PerformerName::new(&"x".repeat(MAX_NAME + 1)).is_none());
        assert!(PerformerName::from_bytes(&[0xff, 0xfe]).is_none());
    }

    #[test]
    fn joint_frames_mark_what_they_carry() {
        let mut frame = JointFrame::new(PerformerName::new("a").unwrap());
        frame.set(70, Quat::from_rotation_x(1.0));
        frame.set(MAX_JOINTS, Quat::IDENTITY);
        assert!(frame.has(70) && !frame.has(69) && !frame.has(MAX_JOINTS));
    }

    #[test]
    fn tracked_point_names_round_trip() {
        for p in TrackedPoint::ALL {
            assert_eq!(TrackedPoint::from_name(p.name()), Some(p));
        }
    }
}
