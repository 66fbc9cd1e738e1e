//! One frame of VR devices as VR mode takes them (`VrInput`): headset, two
//! controllers and whatever trackers are present, in model space, user metres.

use glam::Vec3;

use crate::humanoid::DevicePose;

/// One frame of devices, model space, user metres. Rotations of the headset and
/// controllers are raw (the calibration removes their mount); trackers give the
/// tracked joint's position and the bone's rotation relative to its T-pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VrInput {
    pub head: DevicePose,
    /// Left, right controller.
    pub hands: [DevicePose; 2],
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
