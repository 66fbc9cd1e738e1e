//! Calibration of one performer from a T-pose ("stand straight, arms out"): how tall
//! the user is, how wide the arms reach, and where the wrists and the head joint sit
//! relative to the devices held and worn. Measured once, stored per performer.
//!
//! Device poses are in the same model space as the avatar (+Y up, facing +Z, left =
//! +X, metres, floor at `y = 0`). In the T-pose the user's head and hands are in their
//! T-pose orientation, so a device's rotation then, `D₀`, is its mount offset: later,
//! the bone's rotation relative to its T-pose is `D · D₀⁻¹`, and a point fixed to the
//! bone at offset `o` (device frame) is at `p + D · o`.

use glam::{Quat, Vec3};

use super::body::BodyProportions;
use crate::humanoid::{DevicePose, HumanBone};

/// Where the wrist is behind a held controller in the T-pose, along the arm: a
/// controller's grip centre sits about this far out from the wrist joint (metres).
pub const GRIP_OFFSET: f32 = 0.08;

/// Head joint to the headset (between the eyes), metres in the T-pose: up and forward.
pub const HEAD_TO_EYE: Vec3 = Vec3::new(0.0, 0.07, 0.09);

/// One performer's measurements; see the module header. Serializable for the config.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Calibration {
    /// Height of the head joint above the floor in the T-pose, metres.
    pub height: f32,
    /// Wrist to wrist in the T-pose, metres.
    pub arm_span: f32,
    /// The headset's rotation in the T-pose (`D₀`).
    pub head_rotation: Quat,
    /// Head joint to headset, in the headset's frame, metres: the head joint is at
    /// `hmd.point(−head_to_eye)`.
    pub head_to_eye: Vec3,
    /// The controllers' rotations in the T-pose (left, right).
    pub hand_rotations: [Quat; 2],
    /// Controller to wrist joint, in each controller's frame, metres (left, right).
    pub wrist_offsets: [Vec3; 2],
}

impl Default for Calibration {
    fn default() -> Self {
        Self {
            height: 1.5,
            arm_span: 1.5,
            head_rotation: Quat::IDENTITY,
            head_to_eye: HEAD_TO_EYE,
            hand_rotations: [Quat::IDENTITY; 2],
            wrist_offsets: [Vec3::ZERO; 2],
        }
    }
}

impl Calibration {
    /// Measures a user standing in a T-pose: headset `head`, controllers `left` and
    /// `right` held with arms out. The head joint is taken `HEAD_TO_EYE` behind and
    /// below the headset, each wrist `GRIP_OFFSET` in from its controller along the
    /// line between the controllers.
    #[must_use]
    pub fn from_t_pose(head: DevicePose, left: DevicePose, right: DevicePose) -> Self {
        let head_joint = head.position - HEAD_TO_EYE;
        let outward = (left.position - right.position)
            .try_normalize()
            .unwrap_or(Vec3::X);
        let wrists = [
            left.position - outward * GRIP_OFFSET,
            right.position + outward * GRIP_OFFSET,
        ];
        let controllers = [left, right];
        Self {
            height: head_joint.y,
            arm_span: wrists[0].distance(wrists[1]),
            head_rotation: head.rotation,
            head_to_eye: head.rotation.conjugate() * HEAD_TO_EYE,
            hand_rotations: controllers.map(|c| c.rotation),
            wrist_offsets: [0, 1].map(|i| {
                controllers[i].rotation.conjugate() * (wrists[i] - controllers[i].position)
            }),
        }
    }

    /// Measures a user standing straight with no controllers: the height and the
    /// headset's mount as `from_t_pose` takes them; the hands keep the defaults (no
    /// mount, the wrist at the device), for controllers or wrist trackers that come
    /// later.
    #[must_use]
    pub fn from_head(head: DevicePose) -> Self {
        Self {
            height: (head.position - HEAD_TO_EYE).y,
            head_rotation: head.rotation,
            head_to_eye: head.rotation.conjugate() * HEAD_TO_EYE,
            ..Self::default()
        }
    }

    /// The calibration of a user built exactly like `body`, with devices in the bones'
    /// T-pose orientation on the head (headset `head_to_eye` from the head joint) and
    /// on the wrists: what the evaluation uses.
    #[must_use]
    pub fn of_body(body: &BodyProportions, head_to_eye: Vec3) -> Self {
        let [l, r] = [HumanBone::LeftHand, HumanBone::RightHand].map(|b| body.rest_position(b));
        Self {
            height: body.rest_height(HumanBone::Head),
            arm_span: l.distance(r),
            head_to_eye,
            ..Self::default()
        }
    }

    /// Avatar metres per user metre: the avatar's head height over the user's.
    #[must_use]
    pub fn avatar_scale(&self, body: &BodyProportions) -> f32 {
        body.rest_height(HumanBone::Head) / self.height
    }

    /// The head joint and the head's rotation relative to its T-pose, user metres.
    #[must_use]
    pub fn head(&self, hmd: &DevicePose) -> DevicePose {
        DevicePose::new(
            hmd.point(-self.head_to_eye),
            hmd.rotation * self.head_rotation.conjugate(),
        )
    }

    /// The wrist joint and the hand's rotation relative to its T-pose (0 left, 1
    /// right), user metres.
    #[must_use]
    pub fn hand(&self, side: usize, controller: &DevicePose) -> DevicePose {
        let side = side.min(1);
        DevicePose::new(
            controller.point(self.wrist_offsets[side]),
            controller.rotation * self.hand_rotations[side].conjugate(),
        )
    }
}
