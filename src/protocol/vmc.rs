//! VMC protocol output (OSC over UDP, https://protocol.vmc.info): normalized poses
//! as `/VMC/Ext/*` messages packed into bundles that fit one datagram.
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

use glam::{Quat, Vec3};
use rosc::{OscMessage, OscPacket, OscType};

use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::ALL;
use crate::humanoid::{CustomNames, HumanBone, HumanoidPose, Preset};

/// Largest datagram sent: a typical Ethernet MTU, so nothing fragments.
pub const MAX_DATAGRAM: usize = 1500;

/// Which expression names the receiver knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionNames {
    /// VRM 1.0 preset names (`happy`, `aa`, `blinkLeft`).
    Vrm1,
    /// VRM 0.x blend shape names (`Joy`, `A`, `Blink_L`).
    Vrm0,
}

/// The Unity `HumanBodyBones` name of a bone (thumbs shifted one, as Unity names
/// them).
#[must_use]
pub fn unity_name(bone: HumanBone) -> String {
    use HumanBone as B;
    let shifted = match bone {
        B::LeftThumbMetacarpal => "LeftThumbProximal",
        B::LeftThumbProximal => "LeftThumbIntermediate",
        B::RightThumbMetacarpal => "RightThumbProximal",
        B::RightThumbProximal => "RightThumbIntermediate",
        _ => "",
    };
    if !shifted.is_empty() {
        return shifted.to_owned();
    }
    let name = bone.name();
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The name a receiver knows a preset by.
#[must_use]
pub fn preset_name(preset: Preset, names: ExpressionNames) -> &'static str {
    if names == ExpressionNames::Vrm1 {
        return preset.name();
    }
    match preset {
        Preset::Happy => "Joy",
        Preset::Angry => "Angry",
        Preset::Sad => "Sorrow",
        Preset::Relaxed => "Fun",
        Preset::Surprised => "Surprised",
        Preset::Aa => "A",
        Preset::Ih => "I",
        Preset::Ou => "U",
        Preset::Ee => "E",
        Preset::Oh => "O",
        Preset::Blink => "Blink",
        Preset::BlinkLeft => "Blink_L",
        Preset::BlinkRight => "Blink_R",
        Preset::LookUp => "LookUp",
        Preset::LookDown => "LookDown",
        Preset::LookLeft => "LookLeft",
        Preset::LookRight => "LookRight",
        Preset::Neutral => "Neutral",
    }
}

/// Internal (glTF, right-handed) position into Unity's left-handed space.
#[must_use]
pub fn to_unity_position(p: Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

/// Internal rotation into Unity's left-handed space.
#[must_use]
pub fn to_unity_rotation(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

/// Encodes poses as VMC datagrams. Built once per output; names and rest offsets
/// are precomputed.
#[derive(Debug, Clone)]
pub struct VmcEncoder {
    names: ExpressionNames,
    bone_names: Vec<String>,
    /// Rest offset of each bone from its spec parent, Unity space.
    offsets: Vec<Vec3>,
    max_datagram: usize,
}

fn message(addr: &str, args: Vec<OscType>) -> OscMessage {
    OscMessage {
        addr: addr.to_owned(),
        args,
    }
}

impl VmcEncoder {
    /// An encoder naming expressions as `names`, sending bone offsets of `rest`.
    #[must_use]
    pub fn new(names: ExpressionNames, rest: &VrmaRest) -> Self {
        let offsets = ALL
            .iter()
            .map(|b| {
                let parent = b.parent().map_or(Vec3::ZERO, |p| rest.position(p));
                to_unity_position(rest.position(*b) - parent)
            })
            .collect();
        Self {
            names,
            bone_names: ALL.iter().map(|b| unity_name(*b)).collect(),
            offsets,
            max_datagram: MAX_DATAGRAM,
        }
    }

    /// The messages of one frame, in sending order.
    #[must_use]
    pub fn messages(
        &self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> Vec<OscMessage> {
        let mut out = vec![
            message("/VMC/Ext/OK", vec![OscType::Int(1)]),
            message("/VMC/Ext/T", vec![OscType::Float(time)]),
            message(
                "/VMC/Ext/Root/Pos",
                vec![
                    OscType::String("root".into()),
                    0.0f32.into(),
                    0.0f32.into(),
                    0.0f32.into(),
                    0.0f32.into(),
                    0.0f32.into(),
                    0.0f32.into(),
                    1.0f32.into(),
                ],
            ),
        ];
        let bone = |b: HumanBone, position: Vec3, rotation: Quat| {
            let p = position;
            let q = to_unity_rotation(rotation.normalize());
            message(
                "/VMC/Ext/Bone/Pos",
                vec![
                    OscType::String(self.bone_names[b.index()].clone()),
                    p.x.into(),
                    p.y.into(),
                    p.z.into(),
                    q.x.into(),
                    q.y.into(),
                    q.z.into(),
                    q.w.into(),
                ],
            )
        };
        for (b, q) in pose.bones() {
            let position = if b == HumanBone::Hips {
                to_unity_position(pose.hips_position)
            } else {
                self.offsets[b.index()]
            };
            out.push(bone(b, position, q));
        }
        if let Some(look) = pose.look_at {
            for eye in [HumanBone::LeftEye, HumanBone::RightEye] {
                if !pose.has(eye) {
                    out.push(bone(eye, self.offsets[eye.index()], look.to_rotation()));
                }
            }
        }
        let blend = |name: &str, weight: f32| {
            message(
                "/VMC/Ext/Blend/Val",
                vec![OscType::String(name.to_owned()), weight.into()],
            )
        };
        let mut any_blend = false;
        for (preset, weight) in pose.expressions.presets() {
            out.push(blend(preset_name(preset, self.names), weight));
            any_blend = true;
        }
        for slot in 0..crate::humanoid::expression::CUSTOM_CAPACITY {
            if let (Some(w), Some(name)) = (pose.expressions.custom(slot), custom.name(slot)) {
                out.push(blend(name, w));
                any_blend = true;
            }
        }
        if any_blend {
            out.push(message("/VMC/Ext/Blend/Apply", vec![]));
        }
        out
    }

    /// One frame as datagrams: bundles of whole messages, each at most 1500 bytes,
    /// in sending order (so `Blend/Apply` comes after every `Blend/Val`).
    pub fn encode(
        &self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> Result<Vec<Vec<u8>>, rosc::OscError> {
        // A bundle: "#bundle\0", an 8-byte time tag (1 = immediately), then each
        // element as a 4-byte big-endian size and its bytes.
        const HEADER: usize = 16;
        let mut datagrams = Vec::new();
        let mut bundle: Vec<u8> = Vec::with_capacity(self.max_datagram);
        for m in self.messages(time, pose, custom) {
            let bytes = rosc::encoder::encode(&OscPacket::Message(m))?;
            if bundle.len() + 4 + bytes.len() > self.max_datagram && bundle.len() > HEADER {
                datagrams.push(std::mem::take(&mut bundle));
            }
            if bundle.is_empty() {
                bundle.extend_from_slice(b"#bundle\0");
                bundle.extend_from_slice(&1u64.to_be_bytes());
            }
            let size = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            bundle.extend_from_slice(&size.to_be_bytes());
            bundle.extend_from_slice(&bytes);
        }
        if bundle.len() > HEADER {
            datagrams.push(bundle);
        }
        Ok(datagrams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unity_names_shift_the_thumbs() {
        let cases = [
            (HumanBone::Hips, "Hips"),
            (HumanBone::LeftUpperArm, "LeftUpperArm"),
            (HumanBone::UpperChest, "UpperChest"),
            (HumanBone::LeftThumbMetacarpal, "LeftThumbProximal"),
            (HumanBone::LeftThumbProximal, "LeftThumbIntermediate"),
            (HumanBone::LeftThumbDistal, "LeftThumbDistal"),
            (HumanBone::RightThumbMetacarpal, "RightThumbProximal"),
            (HumanBone::RightLittleDistal, "RightLittleDistal"),
        ];
        for (bone, name) in cases {
            assert_eq!(unity_name(bone), name);
        }
    }

    #[test]
    fn expression_names_follow_the_receiver() {
        assert_eq!(preset_name(Preset::Happy, ExpressionNames::Vrm1), "happy");
        assert_eq!(preset_name(Preset::Happy, ExpressionNames::Vrm0), "Joy");
        assert_eq!(
            preset_name(Preset::BlinkLeft, ExpressionNames::Vrm0),
            "Blink_L"
        );
        assert_eq!(preset_name(Preset::Aa, ExpressionNames::Vrm0), "A");
    }

    #[test]
    fn the_x_flip_keeps_a_rotation_a_rotation_of_the_mirrored_world() {
        let q = Quat::from_euler(glam::EulerRot::YXZ, 0.4, -0.3, 0.2);
        let v = Vec3::new(0.3, 0.5, -0.7);
        let rotated_then_flipped = to_unity_position(q * v);
        let flipped_then_rotated = to_unity_rotation(q) * to_unity_position(v);
        assert!(rotated_then_flipped.abs_diff_eq(flipped_then_rotated, 1e-6));
    }

    #[test]
    fn every_datagram_fits_and_apply_comes_last() {
        let mut pose = crate::demo::pose_at(0.5, 0.9);
        for bone in ALL {
            pose.set_rotation(bone, Quat::from_rotation_y(0.1));
        }
        for preset in Preset::all() {
            pose.expressions.set_preset(preset, 0.5);
        }
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.9));
        let datagrams = encoder.encode(0.5, &pose, &CustomNames::default()).unwrap();
        assert!(datagrams.len() >= 3);
        let mut addresses = Vec::new();
        for d in &datagrams {
            assert!(d.len() <= MAX_DATAGRAM, "{}", d.len());
            let (_, packet) = rosc::decoder::decode_udp(d).unwrap();
            let OscPacket::Bundle(bundle) = packet else {
                panic!("not a bundle")
            };
            for element in bundle.content {
                if let OscPacket::Message(m) = element {
                    addresses.push(m.addr);
                }
            }
        }
        assert_eq!(
            addresses
                .iter()
                .filter(|a| *a == "/VMC/Ext/Bone/Pos")
                .count(),
            55
        );
        assert_eq!(
            addresses.last().map(String::as_str),
            Some("/VMC/Ext/Blend/Apply")
        );
        assert_eq!(
            addresses
                .iter()
                .filter(|a| *a == "/VMC/Ext/Blend/Val")
                .count(),
            18
        );
    }
}
