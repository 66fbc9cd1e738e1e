//! What VR devices report: a device's pose in model space, and the tracked hand
//! joints a WebXR hand gives. Plain data shared by the wire codecs (which decode
//! them) and the IK (which solves a body from them).
//!
//! Device poses are in the avatar's model space: +Y up, facing +Z, left = +X,
//! metres, floor at `y = 0`.

use glam::{Quat, Vec3};

/// A device (headset, controller, tracker) pose in model space.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct DevicePose {
    /// Metres.
    pub position: Vec3,
    pub rotation: Quat,
}

impl DevicePose {
    #[must_use]
    pub fn new(position: Vec3, rotation: Quat) -> Self {
        Self { position, rotation }
    }

    /// Where a point at `offset` in the device's frame is.
    #[must_use]
    pub fn point(&self, offset: Vec3) -> Vec3 {
        self.position + self.rotation * offset
    }
}

/// Joints of a tracked hand, in WebXR's order: the wrist, then the thumb
/// (metacarpal, proximal, distal, tip), then index, middle, ring and little
/// finger (metacarpal, proximal, intermediate, distal, tip each).
pub const HAND_JOINTS: usize = 25;
