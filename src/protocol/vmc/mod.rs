//! The VMC protocol (OSC over UDP, https://protocol.vmc.info), both ways: normalized
//! poses as `/VMC/Ext/*` messages packed into bundles that fit one datagram
//! (`VmcEncoder::encode_into`), and datagrams decoded back into events in internal
//! axes (`decode`). Both run every frame and allocate nothing; both are written by
//! hand for speed (`benches/vmc.rs`), and the tests hold them to `rosc`'s bytes
//! and to the `vmc` crate's reading.
//!
//! What goes out per frame: `/VMC/Ext/OK 1`, `/VMC/Ext/T time`, `/VMC/Ext/Root/Pos`
//! (identity), one `/VMC/Ext/Bone/Pos` per present bone (Unity `HumanBodyBones`
//! names, local position and rotation), then `/VMC/Ext/Blend/Val` per expression and
//! `/VMC/Ext/Blend/Apply` last. LookAt drives the eye bones when the pose has none.
//!
//! Rotations are the normalized local rotations, which is what VMC receivers apply
//! to a UniVRM-normalized avatar (every bone's rest rotation the identity, the
//! VRM 0 convention). Positions are the bone's rest offset from its parent (the hips:
//! its position). Both cross into Unity's left-handed space with an X flip:
//! position (-x, y, z), rotation (x, -y, -z, w); an avatar facing +Z stays facing +Z.
//! Unity's thumb names are shifted one against VRM 1.0: `LeftThumbProximal` is
//! `leftThumbMetacarpal`. Expression names follow VRM 1.0 (`happy`, `aa`) or VRM 0
//! (`Joy`, `A`), as the receiver expects.
//!
//! Files: `names` (Unity bone names, expression names), `encode` (`VmcEncoder`,
//! `Datagrams`), `decode` (`decode`, `VmcEvent`); then what the inputs build from
//! the events: `frames` (frames per sender) and `devices` (tracked devices).

mod decode;
pub mod devices;
mod encode;
pub mod frames;
mod names;

pub use decode::{DecodeStats, Device, VmcEvent, decode};
pub use encode::{Datagrams, VmcEncoder};
pub use names::{ExpressionNames, bone_from_unity, preset_from_name, preset_name, unity_name};

use glam::{Quat, Vec3};

/// Largest datagram sent: a typical Ethernet MTU, so nothing fragments.
pub const MAX_DATAGRAM: usize = 1500;

/// Internal (glTF, right-handed) position into Unity's left-handed space.
#[must_use]
#[inline]
pub fn to_unity_position(p: Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

/// Internal rotation into Unity's left-handed space.
#[must_use]
#[inline]
pub fn to_unity_rotation(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x_flip_keeps_a_rotation_a_rotation_of_the_mirrored_world() {
        let q = Quat::from_euler(glam::EulerRot::YXZ, 0.4, -0.3, 0.2);
        let v = Vec3::new(0.3, 0.5, -0.7);
        let rotated_then_flipped = to_unity_position(q * v);
        let flipped_then_rotated = to_unity_rotation(q) * to_unity_position(v);
        assert!(rotated_then_flipped.abs_diff_eq(flipped_then_rotated, 1e-6));
    }
}
