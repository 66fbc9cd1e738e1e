//! What the lab OSC tests share: lab19 and stream formats, OSC messages and
//! bundles built with `rosc` (or by hand, so they may be garbage), random frames,
//! and decoding through a `LabAssembler` with the counts summed.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use glam::{EulerRot, Quat, Vec3};
use rosc::{OscMessage, OscPacket, OscType};

use super::{FRAME_ADDRESS, JOINT_ADDRESS, LabAssembler, LabSkeleton, LabStats};
use crate::formats::skeleton_json::{
    AngleUnit, Handedness, RotationFormat, RotationSpace, StreamFormat, parse_with_stream,
};
use crate::formats::{LoadOptions, Units, UpAxis};
use crate::protocol::frame::{JointFrame, PerformerName};
use crate::skeleton::Skeleton;

pub(super) fn lab19() -> Skeleton {
    parse_with_stream(
        crate::skeleton::builtin::LAB19_JSON,
        std::path::Path::new("lab19.json"),
        &LoadOptions::default(),
    )
    .unwrap()
    .0
    .skeleton
}

pub(super) fn stream(
    space: RotationSpace,
    rotation: RotationFormat,
    units: Units,
    up: UpAxis,
    handedness: Handedness,
) -> StreamFormat {
    StreamFormat {
        space,
        rotation,
        units,
        up,
        handedness,
    }
}

/// Local quaternions, metres, +Y up, right-handed: the sender's axes are the
/// internal ones.
pub(super) fn plain() -> StreamFormat {
    StreamFormat::local_quaternions(Units::Metres, UpAxis::Y)
}

pub(super) fn euler(order: EulerRot, angles: AngleUnit) -> RotationFormat {
    RotationFormat::Euler { order, angles }
}

pub(super) fn msg(addr: &str, args: Vec<OscType>) -> Vec<u8> {
    rosc::encoder::encode(&OscPacket::Message(OscMessage {
        addr: addr.into(),
        args,
    }))
    .unwrap()
}

pub(super) fn header_msg(subject: &str, frame: i32, part: i32, parts: i32) -> Vec<u8> {
    msg(
        FRAME_ADDRESS,
        vec![
            subject.into(),
            OscType::Int(frame),
            OscType::Double(frame as f64 / 60.0),
            OscType::Int(part),
            OscType::Int(parts),
        ],
    )
}

pub(super) fn joint_msg(name: &str, values: &[f32]) -> Vec<u8> {
    let mut args = vec![OscType::String(name.into())];
    args.extend(values.iter().map(|&v| OscType::Float(v)));
    msg(JOINT_ADDRESS, args)
}

/// A bundle of the given elements, framed by hand (so elements may be garbage).
pub(super) fn bundle(elements: &[Vec<u8>]) -> Vec<u8> {
    let mut d = b"#bundle\0".to_vec();
    d.extend_from_slice(&1u64.to_be_bytes());
    for e in elements {
        d.extend_from_slice(&(e.len() as u32).to_be_bytes());
        d.extend_from_slice(e);
    }
    d
}

/// The instant the tests' datagrams are received at, unless they say otherwise.
pub(super) fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Every frame the datagrams complete, and the summed counts, all received at
/// `epoch()`.
pub(super) fn decode(
    assembler: &mut LabAssembler,
    skeleton: &LabSkeleton,
    datagrams: &[Vec<u8>],
) -> (Vec<JointFrame>, LabStats) {
    decode_at(assembler, skeleton, datagrams, 0.0)
}

/// As `decode`, the datagrams received `seconds` after `epoch()`.
pub(super) fn decode_at(
    assembler: &mut LabAssembler,
    skeleton: &LabSkeleton,
    datagrams: &[Vec<u8>],
    seconds: f64,
) -> (Vec<JointFrame>, LabStats) {
    let received = epoch() + Duration::from_secs_f64(seconds);
    let mut frames = Vec::new();
    let mut total = LabStats::default();
    for d in datagrams {
        total += assembler.datagram(d, received, |_| Some(skeleton), |f| frames.push(*f));
    }
    (frames, total)
}

/// Angle between two rotations, radians, computed in f64.
pub(super) fn angle(a: Quat, b: Quat) -> f64 {
    let d = a.as_dquat().conjugate() * b.as_dquat();
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// A deterministic xorshift generator for test poses.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniformly random rotation (Shoemake).
    pub(super) fn rotation(&mut self) -> Quat {
        let (u1, u2, u3) = (self.next(), self.next(), self.next());
        let tau = std::f32::consts::TAU;
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        Quat::from_xyzw(
            a * (tau * u2).sin(),
            a * (tau * u2).cos(),
            b * (tau * u3).sin(),
            b * (tau * u3).cos(),
        )
        .normalize()
    }
}

pub(super) fn random_frame(rng: &mut Rng, joints: usize, subject: &str, number: u64) -> JointFrame {
    let mut frame = JointFrame::new(PerformerName::new(subject).unwrap());
    frame.frame = number;
    frame.time = number as f64 / 120.0;
    frame.joint_count = joints as u16;
    frame.root_position = Some(Vec3::new(
        rng.next() * 4.0 - 2.0,
        rng.next() * 2.0,
        rng.next() * 4.0 - 2.0,
    ));
    for j in 0..joints {
        frame.set(j, rng.rotation());
    }
    frame
}

pub(super) fn assert_same_frame(sent: &JointFrame, got: &JointFrame, what: &str) {
    assert_eq!(got.performer, sent.performer, "{what}");
    assert_eq!(got.frame, sent.frame, "{what}");
    assert_eq!(got.time, sent.time, "{what}");
    assert_eq!(got.present, sent.present, "{what}");
    for j in 0..usize::from(sent.joint_count) {
        if sent.has(j) {
            let a = angle(sent.rotations[j], got.rotations[j]);
            assert!(a < 1e-5, "{what}: joint {j} off by {a} rad");
        }
    }
    match (sent.root_position, got.root_position) {
        (Some(a), Some(b)) => assert!(a.distance(b) < 1e-5, "{what}: root {a} vs {b}"),
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}"),
    }
}
