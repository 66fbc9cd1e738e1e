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

pub mod devices;
pub mod frames;

use glam::{Quat, Vec3};

use super::osc::{self, Arg};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::{ALL, BONE_COUNT};
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

/// Unity `HumanBodyBones` names, indexed by `HumanBone`: thumbs shifted one, as
/// Unity names them (`LeftThumbProximal` is `leftThumbMetacarpal`).
const UNITY_NAMES: [&str; BONE_COUNT] = [
    "Hips",
    "Spine",
    "Chest",
    "UpperChest",
    "Neck",
    "Head",
    "LeftEye",
    "RightEye",
    "Jaw",
    "LeftUpperLeg",
    "LeftLowerLeg",
    "LeftFoot",
    "LeftToes",
    "RightUpperLeg",
    "RightLowerLeg",
    "RightFoot",
    "RightToes",
    "LeftShoulder",
    "LeftUpperArm",
    "LeftLowerArm",
    "LeftHand",
    "RightShoulder",
    "RightUpperArm",
    "RightLowerArm",
    "RightHand",
    "LeftThumbProximal",
    "LeftThumbIntermediate",
    "LeftThumbDistal",
    "LeftIndexProximal",
    "LeftIndexIntermediate",
    "LeftIndexDistal",
    "LeftMiddleProximal",
    "LeftMiddleIntermediate",
    "LeftMiddleDistal",
    "LeftRingProximal",
    "LeftRingIntermediate",
    "LeftRingDistal",
    "LeftLittleProximal",
    "LeftLittleIntermediate",
    "LeftLittleDistal",
    "RightThumbProximal",
    "RightThumbIntermediate",
    "RightThumbDistal",
    "RightIndexProximal",
    "RightIndexIntermediate",
    "RightIndexDistal",
    "RightMiddleProximal",
    "RightMiddleIntermediate",
    "RightMiddleDistal",
    "RightRingProximal",
    "RightRingIntermediate",
    "RightRingDistal",
    "RightLittleProximal",
    "RightLittleIntermediate",
    "RightLittleDistal",
];

/// The Unity `HumanBodyBones` name of a bone (thumbs shifted one, as Unity names
/// them).
#[must_use]
pub fn unity_name(bone: HumanBone) -> &'static str {
    UNITY_NAMES[bone.index()]
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
    bone_from_words(name_words(name)?)
}

/// Bone names are looked up as three little-endian words, the name zero-padded to
/// 24 bytes: one perfect-hash probe and one comparison of three words, instead of
/// a scan of 55 names (bone names are most of what a VMC decoder reads).
type NameWords = [u64; 3];

/// The longest Unity bone name is 23 bytes (`RightMiddleIntermediate`).
const NAME_BYTES: usize = 24;

/// `name` as `NameWords`; `None` when longer than any bone name or holding a
/// zero byte (which the padding could not be told from).
const fn name_words(name: &[u8]) -> Option<NameWords> {
    if name.len() >= NAME_BYTES {
        return None;
    }
    let mut words = [0u64; 3];
    let mut i = 0;
    while i < name.len() {
        if name[i] == 0 {
            return None;
        }
        words[i / 8] |= (name[i] as u64) << (8 * (i % 8));
        i += 1;
    }
    Some(words)
}

/// Where a name lands in `BONE_SLOTS`: a multiplicative hash of its words.
const fn name_slot(words: &NameWords) -> usize {
    let key = words[0] ^ words[1].rotate_left(21) ^ words[2].rotate_left(42);
    // Found by search: no two Unity bone names share a slot (checked below).
    (key.wrapping_mul(0x49c8_080e_6618_5813) >> (64 - SLOT_BITS)) as usize
}

const SLOT_BITS: u32 = 7;

/// One hash slot: the name that lands here and its bone (`None`: no name does).
#[derive(Clone, Copy)]
struct BoneSlot {
    name: NameWords,
    bone: Option<HumanBone>,
}

/// Every Unity bone name in its hash slot; built, and checked, at compile time.
const BONE_SLOTS: [BoneSlot; 1 << SLOT_BITS] = {
    let mut slots = [BoneSlot {
        name: [0; 3],
        bone: None,
    }; 1 << SLOT_BITS];
    let mut b = 0;
    while b < BONE_COUNT {
        let Some(name) = name_words(UNITY_NAMES[b].as_bytes()) else {
            panic!("a Unity bone name longer than NAME_BYTES");
        };
        let slot = name_slot(&name);
        assert!(
            slots[slot].bone.is_none(),
            "two Unity bone names share a hash slot"
        );
        slots[slot] = BoneSlot {
            name,
            bone: Some(ALL[b]),
        };
        b += 1;
    }
    slots
};

#[inline(always)]
fn bone_from_words(name: NameWords) -> Option<HumanBone> {
    let slot = &BONE_SLOTS[name_slot(&name)];
    // An empty slot holds no bone, so an empty name matching its zeros is `None`.
    // Word by word: an array `==` may load the words as one vector, which waits
    // for the separate word stores to reach memory.
    let differ = (slot.name[0] ^ name[0]) | (slot.name[1] ^ name[1]) | (slot.name[2] ^ name[2]);
    if differ == 0 { slot.bone } else { None }
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

/// Encodes poses as VMC datagrams. Built once per output; names, rest offsets and
/// the bytes of each bone's message before its floats are precomputed.
#[derive(Debug, Clone)]
pub struct VmcEncoder {
    names: ExpressionNames,
    /// Rest offset of each bone from its spec parent, Unity space.
    offsets: Vec<Vec3>,
    /// Per bone, its `/VMC/Ext/Bone/Pos` message up to the seven floats: the
    /// address, the type tags and the bone's Unity name, each OSC-padded.
    bone_headers: Vec<Vec<u8>>,
    max_datagram: usize,
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
            bone_headers,
            max_datagram: MAX_DATAGRAM,
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
        for (b, q) in pose.bones() {
            let position = if b == HumanBone::Hips {
                to_unity_position(pose.hips_position)
            } else {
                self.offsets[b.index()]
            };
            bone(b, position, q);
        }
        if let Some(look) = pose.look_at {
            for eye in [HumanBone::LeftEye, HumanBone::RightEye] {
                if !pose.has(eye) {
                    bone(eye, self.offsets[eye.index()], look.to_rotation());
                }
            }
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
/// them every frame, `net::udp::SendBatch` queues them for one system call;
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

/// Quaternions are accepted with lengths from 1e-3 to 1e3 (then normalized);
/// shorter ones have no reliable direction, longer ones come from a broken sender.
const MIN_QUAT_LENGTH_SQUARED: f32 = 1e-6;
const MAX_QUAT_LENGTH_SQUARED: f32 = 1e6;

/// Position and rotation from seven floats (Unity space) into internal axes; `None`
/// when not finite, out of range or a zero quaternion. Non-unit quaternions are
/// normalized.
#[inline(always)]
fn transform(f: &[f32; 7]) -> Option<(Vec3, Quat)> {
    let p = Vec3::new(f[0], f[1], f[2]);
    let q = Quat::from_xyzw(f[3], f[4], f[5], f[6]);
    // Written so that NaN fails each comparison, with no separate finiteness
    // checks: an infinite or NaN component makes the squared length so too.
    let squared = q.length_squared();
    let in_range = p.abs().cmple(Vec3::splat(MAX_POSITION)).all()
        && (MIN_QUAT_LENGTH_SQUARED..=MAX_QUAT_LENGTH_SQUARED).contains(&squared);
    if !in_range {
        return None;
    }
    Some((to_unity_position(p), to_unity_rotation(q / squared.sqrt())))
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

/// What one message became.
enum Outcome<'a> {
    Event(VmcEvent<'a>),
    Ignored,
    Malformed,
    UnknownBone,
}

/// A bone message's name and seven floats, as an outcome.
fn bone(name: &[u8], f: &[f32; 7]) -> Outcome<'static> {
    match (bone_from_unity_bytes(name), transform(f)) {
        (Some(bone), Some((position, rotation))) => Outcome::Event(VmcEvent::Bone {
            bone,
            position,
            rotation,
        }),
        (None, _) => Outcome::UnknownBone,
        (_, None) => Outcome::Malformed,
    }
}

/// A bone message read: its bone (`None`: unknown) and its position and rotation
/// in internal axes (`None`: malformed).
type BoneRead = (Option<HumanBone>, Option<(Vec3, Quat)>);

/// The arguments of a `/VMC/Ext/Bone/Pos` message (string, seven floats) read in
/// one go: the first 24 bytes as `NameWords`, the name ending at their first zero
/// byte, then the floats after its padding. `None` when the name is longer than any
/// bone's or the bytes are not all there: the general path then reads (and
/// counts) the message, to the same result as this one where it gives one.
// Always inlined into `decode`: returned from a call, its result goes through
// memory in pieces and is read back whole, a store-forwarding stall that cost
// more than the rest of the decoding (seen in the bench build, where `#[inline]`
// alone did not inline it).
#[inline(always)]
fn bone_in_one_go(data: &[u8]) -> Option<BoneRead> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let Some(
        &[
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
            i,
            j,
            k,
            l,
            m,
            n,
            o,
            p,
            q,
            r,
            s,
            t,
            u,
            v,
            w,
            x,
        ],
    ) = data.get(..NAME_BYTES)
    else {
        return None;
    };
    let words = [
        u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        u64::from_le_bytes([i, j, k, l, m, n, o, p]),
        u64::from_le_bytes([q, r, s, t, u, v, w, x]),
    ];
    // The high bit of each zero byte, exact up to a word's first zero byte.
    let zeros = words.map(|w| w.wrapping_sub(LOW) & !w & HIGH);
    let len = match zeros {
        [z, _, _] if z != 0 => z.trailing_zeros() / 8,
        [_, z, _] if z != 0 => 8 + z.trailing_zeros() / 8,
        [_, _, z] if z != 0 => 16 + z.trailing_zeros() / 8,
        _ => return None,
    } as usize;
    // Keep the name's bytes only: padding and float bytes follow it.
    let mut name = words;
    for (k, word) in name.iter_mut().enumerate() {
        let kept = len.saturating_sub(8 * k).min(8);
        *word &= u64::MAX.checked_shr(64 - 8 * kept as u32).unwrap_or(0);
    }
    // The floats follow the name's padding. They are nearly always the last 28
    // bytes (no extra arguments): read from there, their loads need not wait for
    // the name's length; read again when they are not.
    let floats = |at: usize| {
        let mut f = [0.0; 7];
        for (f, b) in f.iter_mut().zip(data.get(at..at + 28)?.chunks_exact(4)) {
            *f = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some(f)
    };
    let last = data.len().saturating_sub(28);
    let mut f = floats(last)?;
    let at = (len / 4 + 1) * 4;
    if at != last {
        f = floats(at)?;
    }
    Some((bone_from_words(name), transform(&f)))
}

/// Decodes a datagram (a bundle or a bare message) into events, in order. Unknown
/// addresses and extra arguments are ignored, as the VMC spec asks; a malformed
/// message is counted and dropped without losing the rest of the packet.
/// Allocates nothing.
pub fn decode<'a>(datagram: &'a [u8], on_event: &mut impl FnMut(VmcEvent<'a>)) -> DecodeStats {
    let mut stats = DecodeStats::default();
    for message in osc::messages(datagram) {
        let Ok(message) = message else {
            stats.broken += 1;
            continue;
        };
        // Bones are most of the traffic: one of the usual shape is read here,
        // inline, anything else by `read_message`.
        // (The event is made right where it is handed on: a merged `Outcome`
        // went through memory, which cost more than the rest of the decoding.)
        if is(message.address, b"/VMC/Ext/Bone/Pos")
            && message.tags.get(..8).is_some_and(|t| is(t, b"sfffffff"))
            && let Some((bone, transform)) = bone_in_one_go(message.data)
        {
            match (bone, transform) {
                (Some(bone), Some((position, rotation))) => {
                    stats.events += 1;
                    on_event(VmcEvent::Bone {
                        bone,
                        position,
                        rotation,
                    });
                }
                (None, _) => stats.unknown_bones += 1,
                (_, None) => stats.malformed += 1,
            }
            continue;
        }
        match read_message(message) {
            Outcome::Event(e) => {
                stats.events += 1;
                on_event(e);
            }
            Outcome::Ignored => stats.ignored += 1,
            Outcome::Malformed => stats.malformed += 1,
            Outcome::UnknownBone => stats.unknown_bones += 1,
        }
    }
    stats
}

/// `bytes == name`, compared as arrays, in a few word compares (a `match` on byte
/// strings compares byte by byte).
fn is<const N: usize>(bytes: &[u8], name: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(bytes).is_ok_and(|b| b == name)
}

/// One message as an event, or why not: blend values straight from their known
/// shape, then the general argument reader.
#[inline(never)]
fn read_message(message: osc::Message<'_>) -> Outcome<'_> {
    let address = message.address;
    if is(address, b"/VMC/Ext/Bone/Pos")
        && let Some((name, f)) = message.str_and_floats::<7>()
    {
        return bone(name, &f);
    }
    if is(address, b"/VMC/Ext/Blend/Val")
        && let Some((name, [value])) = message.str_and_floats::<1>()
    {
        return match std::str::from_utf8(name) {
            Ok(name) if value.is_finite() => Outcome::Event(VmcEvent::Blend { name, value }),
            _ => Outcome::Malformed,
        };
    }
    let mut args = [Arg::Int(0); 8];
    let Ok(n) = message.args(&mut args) else {
        return Outcome::Malformed;
    };
    let args = &args[..n];
    let event = match message.address {
        b"/VMC/Ext/Bone/Pos" => match string_and_seven(args) {
            Some((name, f)) => return bone(name, &f),
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
                _ => return Outcome::Ignored,
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
    event.map_or(Outcome::Malformed, Outcome::Event)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        for (b, q) in pose.bones() {
            let position = if b == HumanBone::Hips {
                to_unity_position(pose.hips_position)
            } else {
                encoder.offsets[b.index()]
            };
            out.push(bone(b, position, q));
        }
        if let Some(look) = pose.look_at {
            for eye in [HumanBone::LeftEye, HumanBone::RightEye] {
                if !pose.has(eye) {
                    out.push(bone(eye, encoder.offsets[eye.index()], look.to_rotation()));
                }
            }
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
            assert_eq!(bone_from_unity(unity_name(bone)), Some(bone));
        }
        assert_eq!(bone_from_unity("Tail"), None);
    }

    #[test]
    fn unity_names_are_the_vrm_names_capitalized_with_the_thumbs_shifted() {
        let shifted = [
            (HumanBone::LeftThumbMetacarpal, "LeftThumbProximal"),
            (HumanBone::LeftThumbProximal, "LeftThumbIntermediate"),
            (HumanBone::RightThumbMetacarpal, "RightThumbProximal"),
            (HumanBone::RightThumbProximal, "RightThumbIntermediate"),
        ];
        for bone in ALL {
            let want = match shifted.iter().find(|(b, _)| *b == bone) {
                Some((_, name)) => (*name).to_owned(),
                None => {
                    let name = bone.name();
                    name[..1].to_ascii_uppercase() + &name[1..]
                }
            };
            assert_eq!(unity_name(bone), want);
        }
    }

    #[test]
    fn the_bone_name_hash_finds_only_exact_names() {
        let names: Vec<&[u8]> = ALL.iter().map(|b| unity_name(*b).as_bytes()).collect();
        let misses: [&[u8]; 9] = [
            b"",
            b"Hip",
            b"Hips\0",
            b"hips",
            b"Jaw ",
            b"LeftMiddleDistaL",
            b"RightMiddleIntermediat",
            b"RightMiddleIntermediateX",
            b"RightMiddleIntermediate and more",
        ];
        for miss in misses {
            assert_eq!(bone_from_unity_bytes(miss), None, "{miss:?}");
        }
        // Every one-byte change of every name: a bone only when it is a name.
        for name in &names {
            for at in 0..name.len() {
                for byte in [0u8, b'a', b'L', b'R', 0x80, 0xff] {
                    let mut changed = name.to_vec();
                    changed[at] = byte;
                    let want = names
                        .iter()
                        .position(|n| *n == changed.as_slice())
                        .map(|i| ALL[i]);
                    assert_eq!(bone_from_unity_bytes(&changed), want, "{changed:?}");
                }
            }
        }
    }

    /// A bone message's argument bytes: the name, its padding, then `floats`,
    /// then `extra` bytes.
    fn bone_data(name: &[u8], floats: &[f32], extra: &[u8]) -> Vec<u8> {
        let mut data = name.to_vec();
        data.resize((name.len() / 4 + 1) * 4, 0);
        for f in floats {
            data.extend_from_slice(&f.to_be_bytes());
        }
        data.extend_from_slice(extra);
        data
    }

    #[test]
    fn bones_read_in_one_go_read_as_the_general_reader_reads_them() {
        let unit = [0.1, 1.0, -0.2, 0.0, 0.0, 0.0, 1.0];
        let mut cases = Vec::new();
        let long = [b"x".repeat(23), b"x".repeat(24), b"x".repeat(31)];
        let mut names: Vec<&[u8]> = vec![b"", b"Tail", b"Hips\xff", &long[0], &long[1], &long[2]];
        names.extend(ALL.iter().map(|b| unity_name(*b).as_bytes()));
        for name in names {
            for floats in [
                &unit[..],
                &[f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                &[1e30, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                &[0.0; 7],
                &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0],
                &unit[..6],
            ] {
                for extra in [&[][..], &[0, 0, 0, 9], &[1, 2]] {
                    cases.push(bone_data(name, floats, extra));
                }
            }
        }
        // Cut-off copies of a good one.
        let good = bone_data(b"LeftUpperArm", &unit, &[]);
        cases.extend((0..good.len()).map(|n| good[..n].to_vec()));
        let mut read_in_one_go = 0;
        for data in &cases {
            let mut datagram = b"/VMC/Ext/Bone/Pos\0\0\0,sfffffff\0\0\0".to_vec();
            datagram.extend_from_slice(data);
            let Some(Ok(message)) = osc::messages(&datagram).next() else {
                panic!("{datagram:?}");
            };
            let general = message
                .str_and_floats::<7>()
                .map(|(name, f)| (bone_from_unity_bytes(name), transform(&f)));
            if let Some(fast) = bone_in_one_go(message.data) {
                assert_eq!(Some(fast), general, "{data:?}");
                read_in_one_go += 1;
            }
        }
        // The usual messages do take the fast path.
        assert!(read_in_one_go > cases.len() / 2, "{read_in_one_go}");
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
        // An empty pose: OK, T and Root only, one datagram.
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.8));
        let empty = HumanoidPose::default();
        encoder.encode_into(0.0, &empty, &CustomNames::default(), &mut out);
        assert_eq!(out.len(), 1);
        let want = rosc_encode(&encoder, 0.0, &empty, &CustomNames::default());
        assert_eq!(out.iter().collect::<Vec<_>>(), want);
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
        let mut pose = crate::takes::demo::pose_at(0.7, 0.9);
        pose.expressions.set_preset(Preset::Happy, 0.75);
        pose.expressions.set_custom(slot, 0.5);
        let encoder = VmcEncoder::new(ExpressionNames::Vrm0, &VrmaRest::standard(0.9));
        let mut back = HumanoidPose::default();
        let mut blends = Vec::new();
        let mut datagrams = Datagrams::new();
        encoder.encode_into(0.7, &pose, &names, &mut datagrams);
        for d in datagrams.iter() {
            let stats = decode(d, &mut |e| match e {
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
