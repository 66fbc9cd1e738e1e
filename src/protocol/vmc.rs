//! The VMC protocol (OSC over UDP, https://protocol.vmc.info), both ways: normalized
//! poses as `/VMC/Ext/*` messages packed into bundles that fit one datagram, and
//! datagrams decoded back into events in internal axes (`decode`, allocation-free).
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

use super::osc::{self, Arg};
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

/// The bone a Unity `HumanBodyBones` name stands for (thumbs shifted one).
#[must_use]
pub fn bone_from_unity(name: &str) -> Option<HumanBone> {
    bone_from_unity_bytes(name.as_bytes())
}

/// `bone_from_unity` on a name's bytes, as they arrive (no UTF-8 check needed).
fn bone_from_unity_bytes(name: &[u8]) -> Option<HumanBone> {
    use HumanBone as B;
    Some(match name {
        b"Hips" => B::Hips,
        b"Spine" => B::Spine,
        b"Chest" => B::Chest,
        b"UpperChest" => B::UpperChest,
        b"Neck" => B::Neck,
        b"Head" => B::Head,
        b"LeftEye" => B::LeftEye,
        b"RightEye" => B::RightEye,
        b"Jaw" => B::Jaw,
        b"LeftUpperLeg" => B::LeftUpperLeg,
        b"LeftLowerLeg" => B::LeftLowerLeg,
        b"LeftFoot" => B::LeftFoot,
        b"LeftToes" => B::LeftToes,
        b"RightUpperLeg" => B::RightUpperLeg,
        b"RightLowerLeg" => B::RightLowerLeg,
        b"RightFoot" => B::RightFoot,
        b"RightToes" => B::RightToes,
        b"LeftShoulder" => B::LeftShoulder,
        b"LeftUpperArm" => B::LeftUpperArm,
        b"LeftLowerArm" => B::LeftLowerArm,
        b"LeftHand" => B::LeftHand,
        b"RightShoulder" => B::RightShoulder,
        b"RightUpperArm" => B::RightUpperArm,
        b"RightLowerArm" => B::RightLowerArm,
        b"RightHand" => B::RightHand,
        b"LeftThumbProximal" => B::LeftThumbMetacarpal,
        b"LeftThumbIntermediate" => B::LeftThumbProximal,
        b"LeftThumbDistal" => B::LeftThumbDistal,
        b"LeftIndexProximal" => B::LeftIndexProximal,
        b"LeftIndexIntermediate" => B::LeftIndexIntermediate,
        b"LeftIndexDistal" => B::LeftIndexDistal,
        b"LeftMiddleProximal" => B::LeftMiddleProximal,
        b"LeftMiddleIntermediate" => B::LeftMiddleIntermediate,
        b"LeftMiddleDistal" => B::LeftMiddleDistal,
        b"LeftRingProximal" => B::LeftRingProximal,
        b"LeftRingIntermediate" => B::LeftRingIntermediate,
        b"LeftRingDistal" => B::LeftRingDistal,
        b"LeftLittleProximal" => B::LeftLittleProximal,
        b"LeftLittleIntermediate" => B::LeftLittleIntermediate,
        b"LeftLittleDistal" => B::LeftLittleDistal,
        b"RightThumbProximal" => B::RightThumbMetacarpal,
        b"RightThumbIntermediate" => B::RightThumbProximal,
        b"RightThumbDistal" => B::RightThumbDistal,
        b"RightIndexProximal" => B::RightIndexProximal,
        b"RightIndexIntermediate" => B::RightIndexIntermediate,
        b"RightIndexDistal" => B::RightIndexDistal,
        b"RightMiddleProximal" => B::RightMiddleProximal,
        b"RightMiddleIntermediate" => B::RightMiddleIntermediate,
        b"RightMiddleDistal" => B::RightMiddleDistal,
        b"RightRingProximal" => B::RightRingProximal,
        b"RightRingIntermediate" => B::RightRingIntermediate,
        b"RightRingDistal" => B::RightRingDistal,
        b"RightLittleProximal" => B::RightLittleProximal,
        b"RightLittleIntermediate" => B::RightLittleIntermediate,
        b"RightLittleDistal" => B::RightLittleDistal,
        _ => return None,
    })
}

/// The preset a VMC blend shape name stands for, in VRM 1.0 or VRM 0 spelling
/// (VRM 0 names match case-insensitively, as receivers do).
#[must_use]
pub fn preset_from_name(name: &str) -> Option<Preset> {
    if let Ok(p) = name.parse::<Preset>() {
        return Some(p);
    }
    Preset::all().find(|p| preset_name(*p, ExpressionNames::Vrm0).eq_ignore_ascii_case(name))
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

/// Which device a `/VMC/Ext/{Hmd,Con,Tra}/Pos` message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Hmd,
    Controller,
    Tracker,
}

/// One VMC message, in internal axes (glTF: right-handed, +Y up, facing +Z).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VmcEvent<'a> {
    /// `/VMC/Ext/OK`: whether the sender has an avatar loaded.
    Available { loaded: bool },
    /// `/VMC/Ext/T`: the sender's clock, seconds.
    Time(f32),
    /// `/VMC/Ext/Root/Pos`: the avatar root in the sender's world.
    Root { position: Vec3, rotation: Quat },
    /// `/VMC/Ext/Bone/Pos`: a bone's local position and rotation.
    Bone {
        bone: HumanBone,
        position: Vec3,
        rotation: Quat,
    },
    /// `/VMC/Ext/Blend/Val`.
    Blend { name: &'a str, value: f32 },
    /// `/VMC/Ext/Blend/Apply`: the blend values sent so far make one set.
    Apply,
    /// `/VMC/Ext/{Hmd,Con,Tra}/Pos` (and `/Local`): a tracked device.
    Device {
        device: Device,
        serial: &'a str,
        local: bool,
        position: Vec3,
        rotation: Quat,
    },
}

/// What one datagram held, counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Messages turned into events.
    pub events: u32,
    /// Messages with addresses VMC does not define here (ignored, as the spec asks).
    pub ignored: u32,
    /// Messages with missing or wrongly typed arguments, or values not finite,
    /// out of range or a zero quaternion (dropped).
    pub malformed: u32,
    /// Bone messages naming no humanoid bone (dropped).
    pub unknown_bones: u32,
    /// Broken OSC framing: truncated or garbled elements (the rest still read).
    pub broken: u32,
}

/// Largest position accepted, metres; anything farther is a broken sender.
const MAX_POSITION: f32 = 10_000.0;

/// Position and rotation from seven floats (Unity space) into internal axes; `None`
/// when not finite, out of range or a zero quaternion. Non-unit quaternions are
/// normalized.
fn transform(f: &[f32; 7]) -> Option<(Vec3, Quat)> {
    let p = Vec3::new(f[0], f[1], f[2]);
    let q = Quat::from_xyzw(f[3], f[4], f[5], f[6]);
    if !p.is_finite() || p.abs().max_element() > MAX_POSITION || !q.is_finite() {
        return None;
    }
    let len = q.length();
    if !(1e-3..=1e3).contains(&len) {
        return None;
    }
    Some((to_unity_position(p), to_unity_rotation(q / len)))
}

/// Seven floats after a leading string argument.
fn string_and_seven<'a>(args: &[Arg<'a>]) -> Option<(&'a [u8], [f32; 7])> {
    let Some(Arg::Str(name)) = args.first() else {
        return None;
    };
    let mut f = [0.0; 7];
    for (slot, arg) in f.iter_mut().zip(args.get(1..8)?) {
        match arg {
            Arg::Float(v) => *slot = *v,
            _ => return None,
        }
    }
    Some((name, f))
}

/// Decodes a datagram (a bundle or a bare message) into events, in order. Unknown
/// addresses and extra arguments are ignored, as the VMC spec asks; a malformed
/// message is counted and dropped without losing the rest of the packet.
/// Allocates nothing.
pub fn decode<'a>(datagram: &'a [u8], on_event: &mut impl FnMut(VmcEvent<'a>)) -> DecodeStats {
    let stats = std::cell::Cell::new(DecodeStats::default());
    let bump = |f: fn(&mut DecodeStats)| {
        let mut s = stats.get();
        f(&mut s);
        stats.set(s);
    };
    osc::visit(
        datagram,
        &mut |message| {
            // Bones are most of the traffic: read them straight from their known
            // shape before falling back to the general argument reader.
            if message.address == b"/VMC/Ext/Bone/Pos"
                && let Some((name, f)) = message.str_and_floats::<7>()
            {
                match (bone_from_unity_bytes(name), transform(&f)) {
                    (Some(bone), Some((position, rotation))) => {
                        bump(|s| s.events += 1);
                        on_event(VmcEvent::Bone {
                            bone,
                            position,
                            rotation,
                        });
                    }
                    (None, _) => bump(|s| s.unknown_bones += 1),
                    (_, None) => bump(|s| s.malformed += 1),
                }
                return;
            }
            let mut args = [Arg::Int(0); 8];
            let n = match message.args(&mut args) {
                Ok(n) => n,
                Err(_) => return bump(|s| s.malformed += 1),
            };
            let args = &args[..n];
            let event = match message.address {
                b"/VMC/Ext/Bone/Pos" => match string_and_seven(args) {
                    Some((name, f)) => match (bone_from_unity_bytes(name), transform(&f)) {
                        (Some(bone), Some((position, rotation))) => Some(VmcEvent::Bone {
                            bone,
                            position,
                            rotation,
                        }),
                        (None, _) => return bump(|s| s.unknown_bones += 1),
                        (_, None) => None,
                    },
                    None => None,
                },
                b"/VMC/Ext/Root/Pos" => string_and_seven(args)
                    .and_then(|(_, f)| transform(&f))
                    .map(|(position, rotation)| VmcEvent::Root { position, rotation }),
                b"/VMC/Ext/Blend/Val" => match args {
                    [name @ Arg::Str(_), Arg::Float(value), ..] if value.is_finite() => {
                        name.as_str().map(|name| VmcEvent::Blend {
                            name,
                            value: *value,
                        })
                    }
                    _ => None,
                },
                b"/VMC/Ext/Blend/Apply" => Some(VmcEvent::Apply),
                b"/VMC/Ext/T" => match args {
                    [Arg::Float(t), ..] if t.is_finite() => Some(VmcEvent::Time(*t)),
                    _ => None,
                },
                b"/VMC/Ext/OK" => match args {
                    [Arg::Int(loaded), ..] => Some(VmcEvent::Available {
                        loaded: *loaded == 1,
                    }),
                    _ => None,
                },
                address => {
                    let device = match address {
                        b"/VMC/Ext/Hmd/Pos" | b"/VMC/Ext/Hmd/Pos/Local" => Device::Hmd,
                        b"/VMC/Ext/Con/Pos" | b"/VMC/Ext/Con/Pos/Local" => Device::Controller,
                        b"/VMC/Ext/Tra/Pos" | b"/VMC/Ext/Tra/Pos/Local" => Device::Tracker,
                        _ => return bump(|s| s.ignored += 1),
                    };
                    string_and_seven(args).and_then(|(serial, f)| {
                        let (position, rotation) = transform(&f)?;
                        Some(VmcEvent::Device {
                            device,
                            serial: std::str::from_utf8(serial).ok()?,
                            local: address.ends_with(b"/Local"),
                            position,
                            rotation,
                        })
                    })
                }
            };
            match event {
                Some(e) => {
                    bump(|s| s.events += 1);
                    on_event(e);
                }
                None => bump(|s| s.malformed += 1),
            }
        },
        &mut |_| bump(|s| s.broken += 1),
    );
    stats.get()
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
    fn unity_names_read_back_for_every_bone() {
        for bone in ALL {
            assert_eq!(bone_from_unity(&unity_name(bone)), Some(bone));
        }
        assert_eq!(bone_from_unity("Tail"), None);
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

    /// A datagram holding one message.
    fn datagram(addr: &str, args: Vec<OscType>) -> Vec<u8> {
        rosc::encoder::encode(&OscPacket::Message(message(addr, args))).unwrap()
    }

    fn events(bytes: &[u8]) -> (Vec<String>, DecodeStats) {
        let mut got = Vec::new();
        let stats = decode(bytes, &mut |e| got.push(format!("{e:?}")));
        (got, stats)
    }

    fn bone_args(name: &str, f: [f32; 7]) -> Vec<OscType> {
        let mut args = vec![OscType::String(name.into())];
        args.extend(f.iter().map(|v| OscType::Float(*v)));
        args
    }

    #[test]
    fn decoding_what_we_encode_gives_the_pose_back() {
        let mut names = CustomNames::default();
        let slot = names.slot_or_insert("Smirk").unwrap();
        let mut pose = crate::demo::pose_at(0.7, 0.9);
        pose.expressions.set_preset(Preset::Happy, 0.75);
        pose.expressions.set_custom(slot, 0.5);
        let encoder = VmcEncoder::new(ExpressionNames::Vrm0, &VrmaRest::standard(0.9));
        let mut back = HumanoidPose::default();
        let mut blends = Vec::new();
        for d in encoder.encode(0.7, &pose, &names).unwrap() {
            let stats = decode(&d, &mut |e| match e {
                VmcEvent::Bone {
                    bone,
                    position,
                    rotation,
                } => {
                    back.set_rotation(bone, rotation);
                    if bone == HumanBone::Hips {
                        back.hips_position = position;
                    }
                }
                VmcEvent::Blend { name, value } => blends.push((name.to_owned(), value)),
                _ => {}
            });
            assert_eq!(
                (
                    stats.malformed,
                    stats.unknown_bones,
                    stats.broken,
                    stats.ignored
                ),
                (0, 0, 0, 0)
            );
        }
        for (bone, q) in pose.bones() {
            assert!(
                q.angle_between(back.rotation(bone).unwrap()) < 1e-5,
                "{bone}"
            );
        }
        assert!(back.hips_position.abs_diff_eq(pose.hips_position, 1e-6));
        assert!(blends.contains(&("Joy".to_owned(), 0.75)));
        assert_eq!(preset_from_name("Joy"), Some(Preset::Happy));
        assert_eq!(preset_from_name("blink_l"), Some(Preset::BlinkLeft));
        assert_eq!(preset_from_name("happy"), Some(Preset::Happy));
        assert_eq!(preset_from_name("Smirk"), None);
    }

    #[test]
    fn bad_messages_are_counted_and_dropped_and_the_rest_kept() {
        let unit = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let cases: Vec<(&str, Vec<u8>, DecodeStats)> = vec![
            (
                "garbage",
                b"\x00\x01garbage".to_vec(),
                DecodeStats {
                    broken: 1,
                    ..Default::default()
                },
            ),
            (
                "empty",
                Vec::new(),
                DecodeStats {
                    broken: 1,
                    ..Default::default()
                },
            ),
            (
                "NaN",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "huge",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [1e30, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "zero quaternion",
                datagram("/VMC/Ext/Bone/Pos", bone_args("Hips", [0.0; 7])),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "non-unit quaternion",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0]),
                ),
                DecodeStats {
                    events: 1,
                    ..Default::default()
                },
            ),
            (
                "unknown bone",
                datagram("/VMC/Ext/Bone/Pos", bone_args("Tail", unit)),
                DecodeStats {
                    unknown_bones: 1,
                    ..Default::default()
                },
            ),
            (
                "wrong types",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    vec![OscType::Int(3), OscType::Float(1.0)],
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "extra arguments",
                datagram(
                    "/VMC/Ext/Blend/Val",
                    vec![OscType::String("A".into()), 0.5f32.into(), OscType::Int(9)],
                ),
                DecodeStats {
                    events: 1,
                    ..Default::default()
                },
            ),
            (
                "unknown address",
                datagram("/VMC/Ext/Set/Period", vec![OscType::Int(1)]),
                DecodeStats {
                    ignored: 1,
                    ..Default::default()
                },
            ),
        ];
        for (what, bytes, want) in cases {
            assert_eq!(events(&bytes).1, want, "{what}");
        }
        // A bundle whose middle message is bad and whose end is cut off: the good
        // messages before survive.
        let good = datagram("/VMC/Ext/Bone/Pos", bone_args("Spine", unit));
        let bad = datagram("/VMC/Ext/Bone/Pos", bone_args("Hips", [f32::INFINITY; 7]));
        let mut bundle = b"#bundle\0".to_vec();
        bundle.extend_from_slice(&1u64.to_be_bytes());
        for element in [&good, &bad, &good] {
            bundle.extend_from_slice(&(element.len() as u32).to_be_bytes());
            bundle.extend_from_slice(element);
        }
        let (got, stats) = events(&bundle[..bundle.len() - 5]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((stats.events, stats.malformed, stats.broken), (1, 1, 1));
        let (got, _) = events(&bundle);
        assert_eq!(got.len(), 2);
    }
}
