//! Normalized poses into VMC datagrams: `VmcEncoder::encode_into` writes one
//! frame's `/VMC/Ext/*` messages, by hand and allocation-free, packed into bundles
//! of at most `MAX_DATAGRAM` bytes in a reusable `Datagrams`. Its bytes are
//! `rosc`'s, byte for byte (the tests encode random poses both ways).

use glam::{Quat, Vec3};

use super::names::{ExpressionNames, preset_name, unity_name};
use super::{MAX_DATAGRAM, to_unity_position, to_unity_rotation};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::ALL;
use crate::humanoid::{CustomNames, HumanBone, HumanoidPose};

/// Encodes poses as VMC datagrams. Built once per output; names, rest offsets and
/// the bytes of each bone's message before its floats are precomputed.
#[derive(Debug, Clone)]
pub struct VmcEncoder {
    names: ExpressionNames,
    /// Rest offset of each bone from its nearest sent ancestor, Unity space.
    offsets: Vec<Vec3>,
    /// The bones sent, bit `HumanBone::index()` per bone: every bone, or those
    /// of the avatar the receiver shows.
    sent: u64,
    /// Per bone, its ancestors up to its nearest sent one that are not sent,
    /// nearest first: their rotations are carried by the bone.
    folded: Vec<Vec<HumanBone>>,
    /// The hips height of the avatar the receiver shows, metres: hips positions
    /// are scaled from the pose's rest hips height to it.
    avatar_hips_height: Option<f32>,
    /// Per bone, its `/VMC/Ext/Bone/Pos` message up to the seven floats: the
    /// address, the type tags and the bone's Unity name, each OSC-padded.
    bone_headers: Vec<Vec<u8>>,
    max_datagram: usize,
}

impl VmcEncoder {
    /// An encoder naming expressions as `names`, sending every bone a pose has,
    /// with the bone offsets of `rest` and the hips where the pose has them (the
    /// receiver's avatar unknown).
    #[must_use]
    pub fn new(names: ExpressionNames, rest: &VrmaRest) -> Self {
        Self::build(names, rest, |_| true, None)
    }

    /// An encoder for a receiver showing the avatar whose T-pose is `rest`: it
    /// sends the avatar's bones only, each with its offset from its nearest
    /// ancestor the avatar has. A bone the avatar lacks (an `upperChest`, a
    /// shoulder) hands its rotation on to the bones below it, so they turn in the
    /// world as the pose turns them; the hips are scaled from the pose's rest hips
    /// height to the avatar's.
    #[must_use]
    pub fn for_avatar(names: ExpressionNames, rest: &VrmaRest) -> Self {
        let hips = rest.position(HumanBone::Hips).y;
        let height = (hips.is_finite() && hips > 0.0).then_some(hips);
        Self::build(names, rest, |b| b == HumanBone::Hips || rest.has(b), height)
    }

    fn build(
        names: ExpressionNames,
        rest: &VrmaRest,
        sent: impl Fn(HumanBone) -> bool,
        avatar_hips_height: Option<f32>,
    ) -> Self {
        let offsets = ALL
            .iter()
            .map(|b| {
                let parent = b.parent_in(&sent).map_or(Vec3::ZERO, |p| rest.position(p));
                to_unity_position(rest.position(*b) - parent)
            })
            .collect();
        let folded = ALL
            .iter()
            .map(|b| {
                let mut chain = Vec::new();
                let mut above = b.parent();
                while let Some(a) = above.filter(|a| !sent(*a)) {
                    chain.push(a);
                    above = a.parent();
                }
                chain
            })
            .collect();
        let bone_headers = ALL
            .iter()
            .map(|b| {
                let mut header = Vec::new();
                for s in ["/VMC/Ext/Bone/Pos", ",sfffffff", unity_name(*b)] {
                    push_osc_str(&mut header, s);
                }
                header
            })
            .collect();
        Self {
            names,
            offsets,
            sent: ALL
                .iter()
                .filter(|b| sent(**b))
                .fold(0, |m, b| m | 1 << b.index()),
            folded,
            avatar_hips_height,
            bone_headers,
            max_datagram: MAX_DATAGRAM,
        }
    }

    /// The `/VMC/Ext/Bone/Pos` bones of a frame, parents first: each bone sent
    /// that the pose has, or whose folded ancestors it has, with its position
    /// (Unity space) and its rotation (internal axes); the hips always (they carry
    /// the body's place; an absent bone is at its T-pose); then the eyes from the
    /// lookAt when the pose has none.
    fn bones<'a>(
        &'a self,
        pose: &'a HumanoidPose,
    ) -> impl Iterator<Item = (HumanBone, Vec3, Quat)> + 'a {
        let sent = move |b: HumanBone| self.sent & (1 << b.index()) != 0;
        let posed = ALL.into_iter().filter_map(move |b| {
            let folded = &self.folded[b.index()];
            let moved = pose.has(b) || folded.iter().any(|a| pose.has(*a));
            if !sent(b) || !(moved || b == HumanBone::Hips) {
                return None;
            }
            let rotation = folded.iter().fold(pose.rotation_or_identity(b), |q, a| {
                pose.rotation_or_identity(*a) * q
            });
            let position = if b == HumanBone::Hips {
                to_unity_position(self.hips_position(pose))
            } else {
                self.offsets[b.index()]
            };
            Some((b, position, rotation))
        });
        let eyes = [HumanBone::LeftEye, HumanBone::RightEye]
            .into_iter()
            .filter(move |e| sent(*e) && !pose.has(*e))
            .filter_map(move |e| {
                let look = pose.look_at?;
                Some((e, self.offsets[e.index()], look.to_rotation()))
            });
        posed.chain(eyes)
    }

    /// The pose's hips position, scaled to the avatar's hips height when the
    /// receiver shows one.
    fn hips_position(&self, pose: &HumanoidPose) -> Vec3 {
        match self.avatar_hips_height {
            Some(h) if pose.rest_hips_height.is_finite() && pose.rest_hips_height > 0.0 => {
                pose.hips_position * (h / pose.rest_hips_height)
            }
            _ => pose.hips_position,
        }
    }

    /// One frame into `out` (cleared first), in sending order: `/VMC/Ext/OK`,
    /// `/VMC/Ext/T`, `/VMC/Ext/Root/Pos`, a `/VMC/Ext/Bone/Pos` per present bone
    /// (and the eyes, from lookAt, when the pose has none), `/VMC/Ext/Blend/Val`
    /// per expression and `/VMC/Ext/Blend/Apply` last; whole messages packed into
    /// bundles of at most 1500 bytes.
    ///
    /// Written by hand for the live output, which encodes every frame: `rosc`
    /// allocates a `Vec` per message and a `String` per address and argument.
    /// This writes straight into `out`'s buffers and allocates nothing once they
    /// have grown to a frame's size. Its bytes are `rosc`'s, byte for byte (the
    /// tests encode random poses both ways).
    pub fn encode_into(
        &self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
        out: &mut Datagrams,
    ) {
        use OscArg::{Float, Int, Str};
        let max = self.max_datagram;
        out.clear();
        out.push_message(max, "/VMC/Ext/OK", ",i", &[Int(1)]);
        out.push_message(max, "/VMC/Ext/T", ",f", &[Float(time)]);
        let args = [
            Str("root"),
            Float(0.0),
            Float(0.0),
            Float(0.0),
            Float(0.0),
            Float(0.0),
            Float(0.0),
            Float(1.0),
        ];
        out.push_message(max, "/VMC/Ext/Root/Pos", ",sfffffff", &args);
        let mut bone = |b: HumanBone, p: Vec3, rotation: Quat| {
            let q = to_unity_rotation(rotation.normalize());
            let mut floats = [0u8; 28];
            for (bytes, f) in floats
                .chunks_exact_mut(4)
                .zip([p.x, p.y, p.z, q.x, q.y, q.z, q.w])
            {
                bytes.copy_from_slice(&f.to_be_bytes());
            }
            out.push_encoded(max, &self.bone_headers[b.index()], &floats);
        };
        for (b, position, rotation) in self.bones(pose) {
            bone(b, position, rotation);
        }
        let mut blend = |name: &str, weight: f32| {
            out.push_message(
                max,
                "/VMC/Ext/Blend/Val",
                ",sf",
                &[Str(name), Float(weight)],
            );
        };
        for (preset, weight) in pose.expressions.presets() {
            blend(preset_name(preset, self.names), weight);
        }
        for slot in 0..crate::humanoid::expression::CUSTOM_CAPACITY {
            if let (Some(w), Some(name)) = (pose.expressions.custom(slot), custom.name(slot)) {
                blend(name, w);
            }
        }
        // Apply closes every frame, blends or not: receivers (ours included) take
        // it as the end of the frame instead of waiting for the next one.
        out.push_message(max, "/VMC/Ext/Blend/Apply", ",", &[]);
        out.finish();
    }
}

/// One OSC argument the encoder writes.
#[derive(Clone, Copy)]
enum OscArg<'a> {
    Int(i32),
    Float(f32),
    Str(&'a str),
}

/// Bytes of a string written with its NUL and padded to 4, as OSC strings are.
fn padded(len: usize) -> usize {
    (len / 4 + 1) * 4
}

/// Datagrams back to back in reusable buffers: `VmcEncoder::encode_into` refills
/// them every frame, `io::udp::SendBatch` queues them for one system call;
/// nothing is allocated once they have grown to their working size.
#[derive(Debug, Clone)]
pub struct Datagrams {
    /// Every datagram, back to back.
    bytes: Vec<u8>,
    /// Where each datagram ends in `bytes`.
    ends: Vec<usize>,
}

/// A bundle's header: "#bundle\0", then an 8-byte time tag (1 = immediately).
const BUNDLE_HEADER: usize = 16;

impl Default for Datagrams {
    fn default() -> Self {
        Self::new()
    }
}

impl Datagrams {
    /// Buffers sized for a full frame (55 bones, every expression).
    #[must_use]
    pub fn new() -> Self {
        Self {
            bytes: Vec::with_capacity(8 * 1024),
            ends: Vec::with_capacity(16),
        }
    }

    /// The datagrams, in sending order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(start, end)| &self.bytes[start..end])
    }

    /// Datagram `i` (in sending order).
    #[must_use]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Datagrams `first..first + count` as they lie, back to back (one buffer for
    /// a UDP GSO send).
    #[must_use]
    pub fn span(&self, first: usize, count: usize) -> &[u8] {
        let start = if first == 0 { 0 } else { self.ends[first - 1] };
        &self.bytes[start..self.ends[first + count - 1]]
    }

    /// Appends a whole datagram.
    pub fn push(&mut self, datagram: &[u8]) {
        self.bytes.extend_from_slice(datagram);
        self.ends.push(self.bytes.len());
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Length of the datagram being written.
    fn current(&self) -> usize {
        self.bytes.len() - self.ends.last().copied().unwrap_or(0)
    }

    /// Ends the datagram being written, if it holds any message.
    fn finish(&mut self) {
        if self.current() > BUNDLE_HEADER {
            self.ends.push(self.bytes.len());
        }
    }

    /// Appends one message as a bundle element, starting a new bundle when it
    /// would not fit in `max` bytes (a message alone in a bundle is sent however
    /// long it is).
    fn push_message(&mut self, max: usize, address: &str, tags: &str, args: &[OscArg<'_>]) {
        let size = padded(address.len())
            + padded(tags.len())
            + args
                .iter()
                .map(|a| match a {
                    OscArg::Int(_) | OscArg::Float(_) => 4,
                    OscArg::Str(s) => padded(s.len()),
                })
                .sum::<usize>();
        self.begin_message(max, size);
        push_osc_str(&mut self.bytes, address);
        push_osc_str(&mut self.bytes, tags);
        for arg in args {
            match arg {
                OscArg::Int(v) => self.bytes.extend_from_slice(&v.to_be_bytes()),
                OscArg::Float(v) => self.bytes.extend_from_slice(&v.to_be_bytes()),
                OscArg::Str(s) => push_osc_str(&mut self.bytes, s),
            }
        }
    }

    /// `push_message` for a message already encoded, as a header and a tail.
    fn push_encoded(&mut self, max: usize, header: &[u8], tail: &[u8]) {
        self.begin_message(max, header.len() + tail.len());
        self.bytes.extend_from_slice(header);
        self.bytes.extend_from_slice(tail);
    }

    /// Starts a bundle element of `size` bytes: a new bundle when needed, then
    /// the element's size.
    fn begin_message(&mut self, max: usize, size: usize) {
        if self.current() + 4 + size > max && self.current() > BUNDLE_HEADER {
            self.finish();
        }
        if self.current() == 0 {
            self.bytes.extend_from_slice(b"#bundle\0");
            self.bytes.extend_from_slice(&1u64.to_be_bytes());
        }
        let size = u32::try_from(size).unwrap_or(u32::MAX);
        self.bytes.extend_from_slice(&size.to_be_bytes());
    }
}

/// Appends an OSC string: its bytes, a NUL, zeros up to a multiple of 4.
fn push_osc_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    let pad = padded(s.len()) - s.len();
    out.extend_from_slice(&[0; 4][..pad]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::Preset;
    use rosc::{OscMessage, OscPacket, OscType};

    fn message(addr: &str, args: Vec<OscType>) -> OscMessage {
        OscMessage {
            addr: addr.to_owned(),
            args,
        }
    }

    /// The messages of one frame as the `rosc`-based encoder made them, before
    /// `encode_into` replaced it: the reference its bytes are checked against.
    fn rosc_messages(
        encoder: &VmcEncoder,
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
                    OscType::String(unity_name(b).to_owned()),
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
        for (b, position, rotation) in encoder.bones(pose) {
            out.push(bone(b, position, rotation));
        }
        let blend = |name: &str, weight: f32| {
            message(
                "/VMC/Ext/Blend/Val",
                vec![OscType::String(name.to_owned()), weight.into()],
            )
        };
        for (preset, weight) in pose.expressions.presets() {
            out.push(blend(preset_name(preset, encoder.names), weight));
        }
        for slot in 0..crate::humanoid::expression::CUSTOM_CAPACITY {
            if let (Some(w), Some(name)) = (pose.expressions.custom(slot), custom.name(slot)) {
                out.push(blend(name, w));
            }
        }
        out.push(message("/VMC/Ext/Blend/Apply", vec![]));
        out
    }

    /// `rosc_messages` packed as the `rosc`-based encoder packed them.
    fn rosc_encode(
        encoder: &VmcEncoder,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> Vec<Vec<u8>> {
        // A bundle: "#bundle\0", an 8-byte time tag (1 = immediately), then each
        // element as a 4-byte big-endian size and its bytes.
        const HEADER: usize = 16;
        let mut datagrams = Vec::new();
        let mut bundle: Vec<u8> = Vec::with_capacity(encoder.max_datagram);
        for m in rosc_messages(encoder, time, pose, custom) {
            let bytes = rosc::encoder::encode(&OscPacket::Message(m)).unwrap();
            if bundle.len() + 4 + bytes.len() > encoder.max_datagram && bundle.len() > HEADER {
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
        datagrams
    }

    #[test]
    fn every_datagram_fits_and_apply_comes_last() {
        let mut pose = crate::takes::demo::pose_at(0.5, 0.9);
        for bone in ALL {
            pose.set_rotation(bone, Quat::from_rotation_y(0.1));
        }
        for preset in Preset::all() {
            pose.expressions.set_preset(preset, 0.5);
        }
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.9));
        let mut datagrams = Datagrams::new();
        encoder.encode_into(0.5, &pose, &CustomNames::default(), &mut datagrams);
        assert!(datagrams.len() >= 3);
        let mut addresses = Vec::new();
        for d in datagrams.iter() {
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

    /// A random pose: random bones, hips, lookAt, expressions and custom names of
    /// every padding length.
    fn random_pose(seed: u64) -> (HumanoidPose, CustomNames, f32) {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut unit = move || (next() % 20_001) as f32 / 10_000.0 - 1.0;
        let mut pose = HumanoidPose::default();
        for bone in ALL {
            if unit() > -0.3 {
                let axis = Vec3::new(unit(), unit(), unit() + 1.5).normalize();
                pose.set_rotation(bone, Quat::from_axis_angle(axis, 3.0 * unit()));
            }
        }
        pose.hips_position = Vec3::new(unit(), 1.0 + unit(), unit()) * 2.0;
        if unit() > 0.0 {
            pose.look_at = Some(crate::humanoid::LookAt {
                yaw: unit(),
                pitch: unit(),
            });
        }
        for preset in Preset::all() {
            if unit() > 0.0 {
                pose.expressions.set_preset(preset, (unit() + 1.0) / 2.0);
            }
        }
        let mut names = CustomNames::default();
        for len in 1..6 {
            if unit() > 0.0 {
                let slot = names.slot_or_insert(&"xyzwv"[..len]).unwrap();
                pose.expressions.set_custom(slot, (unit() + 1.0) / 2.0);
            }
        }
        (pose, names, 100.0 * (unit() + 1.0))
    }

    #[test]
    fn the_hand_written_encoder_writes_what_rosc_writes() {
        let mut out = Datagrams::new();
        for seed in 0..300u64 {
            let (pose, names, time) = random_pose(seed * 7919 + 1);
            let expression_names = if seed % 2 == 0 {
                ExpressionNames::Vrm0
            } else {
                ExpressionNames::Vrm1
            };
            let encoder = VmcEncoder::new(expression_names, &VrmaRest::standard(0.8));
            encoder.encode_into(time, &pose, &names, &mut out);
            let want = rosc_encode(&encoder, time, &pose, &names);
            let got: Vec<&[u8]> = out.iter().collect();
            assert_eq!(got, want, "seed {seed}");
        }
        // An empty pose: OK, T, Root and the hips (at the pose's place), one datagram.
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.8));
        let empty = HumanoidPose::default();
        encoder.encode_into(0.0, &empty, &CustomNames::default(), &mut out);
        assert_eq!(out.len(), 1);
        let want = rosc_encode(&encoder, 0.0, &empty, &CustomNames::default());
        assert_eq!(out.iter().collect::<Vec<_>>(), want);
    }

    /// The bones one frame sends, decoded (back to internal axes): bone →
    /// (position, rotation).
    fn sent_bones(
        encoder: &VmcEncoder,
        pose: &HumanoidPose,
    ) -> std::collections::HashMap<HumanBone, (Vec3, Quat)> {
        let mut out = Datagrams::new();
        encoder.encode_into(0.0, pose, &CustomNames::default(), &mut out);
        let mut bones = std::collections::HashMap::new();
        for d in out.iter() {
            super::super::decode(d, &mut |e| {
                if let super::super::VmcEvent::Bone {
                    bone,
                    position,
                    rotation,
                } = e
                {
                    bones.insert(bone, (position, rotation));
                }
            });
        }
        bones
    }

    #[test]
    fn a_receivers_avatar_gets_its_own_bones_offsets_and_hips_height() {
        // An avatar without upperChest and left shoulder, hips 0.8 m up.
        let standard = VrmaRest::standard(0.8);
        let mut known = [None; crate::humanoid::bone::BONE_COUNT];
        for b in ALL {
            known[b.index()] = Some(standard.position(b));
        }
        for b in [HumanBone::UpperChest, HumanBone::LeftShoulder] {
            known[b.index()] = None;
        }
        let rest = VrmaRest::from_positions(&known, None);
        let avatar = VmcEncoder::for_avatar(ExpressionNames::Vrm1, &rest);
        // A pose of a taller body (hips 1.0 m) bending every spine bone.
        let (mut pose, _, _) = random_pose(11);
        pose.rest_hips_height = 1.0;
        pose.hips_position = Vec3::new(0.1, 1.0, -0.2);
        for b in [
            HumanBone::Chest,
            HumanBone::UpperChest,
            HumanBone::Neck,
            HumanBone::LeftShoulder,
            HumanBone::LeftUpperArm,
        ] {
            let axis = Vec3::new(0.3, 1.0, 0.2 + b.index() as f32 * 0.1).normalize();
            pose.set_rotation(b, Quat::from_axis_angle(axis, 0.4));
        }
        let got = sent_bones(&avatar, &pose);
        // Only the avatar's bones.
        assert!(!got.contains_key(&HumanBone::UpperChest));
        assert!(!got.contains_key(&HumanBone::LeftShoulder));
        // Offsets from the nearest bone the avatar has.
        let offset = |b: HumanBone, from: HumanBone| rest.position(b) - rest.position(from);
        for (b, from) in [
            (HumanBone::Neck, HumanBone::Chest),
            (HumanBone::RightShoulder, HumanBone::Chest),
            (HumanBone::LeftUpperArm, HumanBone::Chest),
            (HumanBone::Chest, HumanBone::Spine),
        ] {
            assert!(got[&b].0.abs_diff_eq(offset(b, from), 1e-6), "{b:?}");
        }
        // The missing bones' turns are carried below them: the neck and the arm
        // turn in the world as the pose turns them.
        let world = |bones: &[HumanBone]| {
            bones
                .iter()
                .fold(Quat::IDENTITY, |q, b| q * pose.rotation_or_identity(*b))
        };
        let sent = |b: HumanBone| got[&b].1;
        let chest = sent(HumanBone::Chest);
        assert!(chest.abs_diff_eq(pose.rotation_or_identity(HumanBone::Chest), 1e-6));
        let neck = world(&[HumanBone::UpperChest, HumanBone::Neck]);
        assert!(sent(HumanBone::Neck).abs_diff_eq(neck, 1e-5));
        let arm = world(&[
            HumanBone::UpperChest,
            HumanBone::LeftShoulder,
            HumanBone::LeftUpperArm,
        ]);
        assert!(sent(HumanBone::LeftUpperArm).abs_diff_eq(arm, 1e-5));
        // The hips at the avatar's height.
        let hips = got[&HumanBone::Hips].0;
        assert!(
            hips.abs_diff_eq(Vec3::new(0.08, 0.8, -0.16), 1e-6),
            "{hips}"
        );
        // With no avatar named, every bone the pose has, where the pose has it.
        let every = sent_bones(&VmcEncoder::new(ExpressionNames::Vrm1, &rest), &pose);
        assert!(every.contains_key(&HumanBone::UpperChest));
        assert!(
            every[&HumanBone::Hips]
                .0
                .abs_diff_eq(pose.hips_position, 1e-6)
        );
    }
}
