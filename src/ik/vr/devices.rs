//! One frame of VR devices: as they come (`VrInput`: the headset and whatever
//! controllers and trackers are present, model space, user metres) and as VR mode's stages
//! use them (`AvatarDevices`: calibrated and scaled into the avatar's model space).

use glam::{Quat, Vec3};

use crate::humanoid::DevicePose;
use crate::ik::body::BodyProportions;
use crate::ik::calibration::Calibration;

/// One frame of devices, model space, user metres. Rotations of the headset and
/// controllers are raw (the calibration removes their mount); trackers give the
/// tracked joint's position and the bone's rotation relative to its T-pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VrInput {
    pub head: DevicePose,
    /// Left, right controller (or a tracker on the wrist); an arm without one hangs.
    pub hands: [Option<DevicePose>; 2],
    pub hips: Option<DevicePose>,
    /// The upper chest (the chest when the body has none).
    pub chest: Option<DevicePose>,
    /// Left, right ankle.
    pub feet: [Option<DevicePose>; 2],
    /// Left, right elbow position (a pole: the elbow bends toward it).
    pub elbows: [Option<Vec3>; 2],
    /// Left, right knee position (a pole).
    pub knees: [Option<Vec3>; 2],
}

/// One frame of devices in the avatar's model space: the headset's and controllers'
/// mounts removed (`Calibration::head`, `Calibration::hand`) and every position
/// scaled by `scale`. The first stage of a frame.
#[derive(Debug, Clone, Copy)]
pub(super) struct AvatarDevices {
    /// Avatar metres per user metre (`Calibration::avatar_scale`).
    pub(super) scale: f32,
    /// The head joint and the head's rotation relative to its T-pose.
    pub(super) head: DevicePose,
    /// Left, right wrist joint and the hand's rotation relative to its T-pose.
    pub(super) hands: [Option<DevicePose>; 2],
    pub(super) hips: Option<DevicePose>,
    /// The chest tracker's rotation (its position is not used).
    pub(super) chest: Option<Quat>,
    /// Left, right ankle.
    pub(super) feet: [Option<DevicePose>; 2],
    /// Left, right elbow pole.
    pub(super) elbows: [Option<Vec3>; 2],
    /// Left, right knee pole.
    pub(super) knees: [Option<Vec3>; 2],
}

impl AvatarDevices {
    /// `input` calibrated and scaled onto `body`: positions times
    /// `s = avatar_scale(body)`, rotations as they are.
    pub(super) fn new(calibration: &Calibration, body: &BodyProportions, input: &VrInput) -> Self {
        let s = calibration.avatar_scale(body);
        let scaled = |d: DevicePose| DevicePose::new(d.position * s, d.rotation);
        Self {
            scale: s,
            head: scaled(calibration.head(&input.head)),
            hands: [0, 1].map(|i| input.hands[i].map(|h| scaled(calibration.hand(i, &h)))),
            hips: input.hips.map(scaled),
            chest: input.chest.map(|d| d.rotation),
            feet: input.feet.map(|f| f.map(scaled)),
            elbows: input.elbows.map(|e| e.map(|e| e * s)),
            knees: input.knees.map(|k| k.map(|k| k * s)),
        }
    }
}
