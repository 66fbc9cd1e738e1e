//! Frames into lab OSC datagrams (`LabSkeleton::encode`), as a lab sends them: for
//! `mocap-bridge simulate` and the tests. Not on the bridge's live path, so it
//! builds its messages in fresh buffers.

use glam::{DQuat, Quat};

use super::skeleton::LabSkeleton;
use super::{FRAME_ADDRESS, JOINT_ADDRESS, MAX_DATAGRAM, MAX_PARTS, ROOT_ADDRESS};
use crate::formats::skeleton_json::{AngleUnit, RotationFormat, RotationSpace};
use crate::protocol::frame::{JointFrame, MAX_JOINTS};

impl LabSkeleton {
    /// One frame as the datagrams the lab sends, in order: `frame`'s present joints
    /// (local rotations in internal axes, indexed as this skeleton's joints) and
    /// root position, converted into the stream's format, split into parts of at
    /// most `MAX_DATAGRAM` bytes. Joints past this skeleton's count are not sent.
    #[must_use]
    pub fn encode(&self, frame: &JointFrame) -> Vec<Vec<u8>> {
        let mut globals = [Quat::IDENTITY; MAX_JOINTS];
        if self.stream.space == RotationSpace::Global {
            self.model_rotations(frame, &mut globals);
        }
        let mut joints: Vec<Vec<u8>> = Vec::new();
        for (j, name) in self.names.iter().enumerate() {
            if !frame.has(j) {
                continue;
            }
            let q = match self.stream.space {
                RotationSpace::Local => frame.rotations[j],
                RotationSpace::Global => globals[j],
            };
            let q = self.rotation_to_sender(q.normalize());
            let mut m = Vec::with_capacity(64 + name.len());
            match self.stream.rotation {
                RotationFormat::Quaternion => {
                    put_message_start(&mut m, JOINT_ADDRESS, ",sffff");
                    put_str(&mut m, name.as_bytes());
                    for c in q.to_array() {
                        m.extend_from_slice(&c.to_be_bytes());
                    }
                }
                RotationFormat::Euler { order, angles } => {
                    put_message_start(&mut m, JOINT_ADDRESS, ",sfff");
                    put_str(&mut m, name.as_bytes());
                    let (a, b, c) = DQuat::from_xyzw(
                        f64::from(q.x),
                        f64::from(q.y),
                        f64::from(q.z),
                        f64::from(q.w),
                    )
                    .normalize()
                    .to_euler(order);
                    let per_radian = match angles {
                        AngleUnit::Degrees => 180.0 / std::f64::consts::PI,
                        AngleUnit::Radians => 1.0,
                    };
                    for v in [a, b, c] {
                        m.extend_from_slice(&((v * per_radian) as f32).to_be_bytes());
                    }
                }
            }
            joints.push(m);
        }
        let root = frame.root_position.map(|p| {
            let p = self.position_to_sender(p);
            let mut m = Vec::with_capacity(32);
            put_message_start(&mut m, ROOT_ADDRESS, ",fff");
            for c in p.to_array() {
                m.extend_from_slice(&c.to_be_bytes());
            }
            m
        });
        // Parts: the header (same size in every part), the root in part 0, then
        // as many joints as fit.
        const BUNDLE_HEADER: usize = 16;
        let header_len = header(frame, 0, 1).len();
        let mut room = MAX_DATAGRAM - BUNDLE_HEADER - 4 - header_len;
        if let Some(r) = &root {
            room -= 4 + r.len();
        }
        let mut parts: Vec<std::ops::Range<usize>> = Vec::new();
        let (mut start, mut used) = (0, 0);
        for (i, m) in joints.iter().enumerate() {
            if used + 4 + m.len() > room && i > start {
                parts.push(start..i);
                start = i;
                used = 0;
                room = MAX_DATAGRAM - BUNDLE_HEADER - 4 - header_len;
            }
            used += 4 + m.len();
        }
        parts.push(start..joints.len());
        // At most MAX_JOINTS names of MAX_JOINT_NAME bytes: 27 parts at worst.
        debug_assert!(parts.len() <= MAX_PARTS);
        let count = parts.len();
        parts
            .into_iter()
            .enumerate()
            .map(|(i, range)| {
                let mut d = Vec::with_capacity(MAX_DATAGRAM);
                d.extend_from_slice(b"#bundle\0");
                d.extend_from_slice(&1u64.to_be_bytes()); // time tag: immediately
                let put_element = |d: &mut Vec<u8>, m: &[u8]| {
                    d.extend_from_slice(&(m.len() as u32).to_be_bytes());
                    d.extend_from_slice(m);
                };
                put_element(&mut d, &header(frame, i, count));
                if let (0, Some(r)) = (i, &root) {
                    put_element(&mut d, r);
                }
                for m in &joints[range] {
                    put_element(&mut d, m);
                }
                d
            })
            .collect()
    }
}

/// An OSC string: its bytes, a NUL, and NULs up to a multiple of 4.
fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.resize(out.len() + 4 - s.len() % 4, 0);
}

fn put_message_start(out: &mut Vec<u8>, address: &str, tags: &str) {
    put_str(out, address.as_bytes());
    put_str(out, tags.as_bytes());
}

/// The `/lab/frame` message of part `part` of `parts`.
fn header(frame: &JointFrame, part: usize, parts: usize) -> Vec<u8> {
    let mut m = Vec::with_capacity(96);
    let number = frame.frame.min(i64::MAX as u64);
    let small = i32::try_from(number).ok();
    put_message_start(
        &mut m,
        FRAME_ADDRESS,
        if small.is_some() { ",sidii" } else { ",shdii" },
    );
    put_str(&mut m, frame.performer.as_str().as_bytes());
    match small {
        Some(n) => m.extend_from_slice(&n.to_be_bytes()),
        None => m.extend_from_slice(&(number as i64).to_be_bytes()),
    }
    m.extend_from_slice(&frame.time.to_be_bytes());
    for v in [part, parts] {
        m.extend_from_slice(&(v as i32).to_be_bytes());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::EulerRot;

    use crate::formats::skeleton_json::Handedness;
    use crate::formats::{Units, UpAxis};
    use crate::protocol::lab_osc::LabAssembler;
    use crate::protocol::lab_osc::test_support::{
        Rng, assert_same_frame, decode, euler, lab19, random_frame, stream,
    };

    #[test]
    fn random_lab19_poses_round_trip_in_every_stream_format() {
        let lab = lab19();
        let rotations = [
            RotationFormat::Quaternion,
            euler(EulerRot::ZXY, AngleUnit::Degrees),
            euler(EulerRot::XYZ, AngleUnit::Radians),
        ];
        let mut rng = Rng(3);
        for rotation in rotations {
            for space in [RotationSpace::Local, RotationSpace::Global] {
                for up in [UpAxis::Y, UpAxis::Z] {
                    for units in [Units::Centimetres, Units::Metres] {
                        for hand in [Handedness::Right, Handedness::Left] {
                            let format = stream(space, rotation, units, up, hand);
                            let what = format!("{format:?}");
                            let skeleton = LabSkeleton::new(&lab, format).unwrap();
                            let mut assembler = LabAssembler::default();
                            for n in 0..20 {
                                let mut sent = random_frame(&mut rng, lab.len(), "ann", n);
                                if n % 4 == 3 {
                                    // Some joints not sent; the root position neither.
                                    sent.present[0] &= 0b1010_1010_1010_1010_1011;
                                    sent.root_position = None;
                                }
                                let datagrams = skeleton.encode(&sent);
                                assert_eq!(datagrams.len(), 1, "{what}");
                                let (got, stats) = decode(&mut assembler, &skeleton, &datagrams);
                                assert_eq!(stats.dropped(), 0, "{what}: {stats:?}");
                                assert_eq!(got.len(), 1, "{what}");
                                assert_same_frame(&sent, &got[0], &what);
                            }
                        }
                    }
                }
            }
        }
    }
}
