//! Lab OSC: how a mocap lab streams its own skeleton (lab19 first) over OSC/UDP,
//! both ways: datagrams decoded into `JointFrame`s (`LabAssembler`, allocation-free
//! per datagram) and frames encoded into datagrams (`LabSkeleton::encode`, for
//! `mocap-bridge simulate` and tests). Pure over bytes: no sockets here.
//!
//! # Schema
//!
//! Each datagram (at most `MAX_DATAGRAM` = 1500 bytes) is one OSC bundle holding
//! one *part* of one performer's frame: a header, then the part's messages.
//!
//! ```text
//! /lab/frame  s subject  i frame  d time  i part  i parts
//! /lab/root   f x  f y  f z                      part 0 only; optional
//! /lab/joint  s name  f x  f y  f z  f w         quaternion streams
//! /lab/joint  s name  f a  f b  f c              Euler streams
//! ```
//!
//! - `subject`: the performer's name (1 to 32 bytes of UTF-8), so several
//!   performers share one port. Each subject's skeleton is the caller's choice.
//! - `frame`: the sender's frame number, counting up (`i`, or `h` past 2³¹).
//! - `time`: the capture time, seconds (`d`; `f` is accepted).
//! - `part`, `parts`: this datagram is part `part` (from 0) of `parts` (1 to
//!   `MAX_PARTS`). A frame is complete, and handed on at once, when every part of
//!   it has arrived, in any order; a frame too big for one datagram is split
//!   between joint messages. Every part repeats the header, so each datagram
//!   stands alone.
//! - `/lab/root`: the root joint's (the skeleton's first joint's) position in
//!   the sender's units and axes.
//! - `/lab/joint`: one joint's rotation, by its name in the skeleton file. A
//!   quaternion need not be unit length (it is normalized); Euler angles are
//!   intrinsic, in the stream's `eulerOrder` (ZXY: the first angle about Z, the
//!   rotation Rz·Rx·Ry, as BVH writes `Zrotation Xrotation Yrotation`), in degrees
//!   or radians. Numbers may be `f`, `d` or `i`. A joint not sent keeps its
//!   previous rotation at the receiver.
//!
//! `docs/lab-osc.md` says the same for senders, with an example frame.
//!
//! How rotations are written (local to the parent or global in the sender's world,
//! quaternion or Euler) and the sender's units and axes are the skeleton file's
//! `"stream"` object (`formats::skeleton_json::StreamFormat`). A local rotation is
//! the joint's whole rotation relative to its parent, rest rotation included. A
//! left-handed sender's axes are the right-handed ones with X mirrored.
//!
//! # Decoding
//!
//! `LabSkeleton` is built once per skeleton file: joint names to indices, parents,
//! rest rotations and the stream's conversion into internal axes (glTF:
//! right-handed, +Y up, metres). `LabAssembler` is owned by the input task; it
//! keeps one partial frame per subject (made when a subject first appears, the
//! least recently seen forgotten when there are too many) and hands each
//! completed frame to a callback as a `JointFrame` of local rotations in internal
//! axes. Global rotations are made local with the skeleton's parents when the
//! frame completes (a joint not sent counts as resting under its parent).
//!
//! The input is untrusted: broken OSC, wrongly typed or counted arguments,
//! values not finite or out of range and zero quaternions are counted by kind in
//! `LabStats` and dropped, one message at a time, and so are unknown joints and
//! subjects, duplicate and late parts, and frames given up with parts missing.
//! A refused header drops its datagram's messages (they cannot be placed).
//! Nothing panics.

use glam::{DQuat, Quat, Vec3};

use super::frame::{JointFrame, MAX_JOINTS, PerformerName};
use super::osc::{self, Arg, Message};
use crate::formats::skeleton_json::{
    AngleUnit, Handedness, RotationFormat, RotationSpace, StreamFormat,
};
use crate::skeleton::Skeleton;

/// Address of the frame header.
pub const FRAME_ADDRESS: &str = "/lab/frame";
/// Address of the root position.
pub const ROOT_ADDRESS: &str = "/lab/root";
/// Address of a joint rotation.
pub const JOINT_ADDRESS: &str = "/lab/joint";

/// Largest datagram sent: a typical Ethernet MTU, so nothing fragments.
pub const MAX_DATAGRAM: usize = 1500;

/// Most parts a frame may have.
pub const MAX_PARTS: usize = 64;

/// Longest joint name a streamed skeleton may have, bytes (so that any frame of
/// `MAX_JOINTS` joints fits in `MAX_PARTS` datagrams).
pub const MAX_JOINT_NAME: usize = 200;

/// How many subjects an assembler keeps by default.
pub const DEFAULT_MAX_SUBJECTS: usize = 16;

/// Largest position accepted, metres; anything farther is a broken sender.
const MAX_POSITION: f32 = 10_000.0;

/// Largest quaternion length accepted before normalizing; smaller than
/// `MIN_QUATERNION` is a zero quaternion.
const MAX_QUATERNION: f64 = 1e6;
const MIN_QUATERNION: f64 = 1e-6;

/// Largest Euler angle accepted, radians (32 turns).
const MAX_EULER: f32 = 64.0 * std::f32::consts::PI;

/// A part of a frame up to this many frames older than the newest one of its
/// subject is late (dropped); further back, the sender is taken to have restarted.
const STALE_WINDOW: u64 = 120;

/// Why a skeleton cannot be streamed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabSkeletonError {
    #[error("the skeleton has {0} joints, more than the {MAX_JOINTS} a lab stream carries")]
    TooManyJoints(usize),
    #[error(
        "joint name `{0}` cannot be streamed: empty, longer than {MAX_JOINT_NAME} bytes or holding a NUL"
    )]
    BadJointName(String),
}

/// A streamed skeleton: joint names, parents, rest rotations and the stream's
/// conversion into internal axes. Built once per skeleton file.
#[derive(Debug, Clone)]
pub struct LabSkeleton {
    /// Joint names, in the skeleton's joint order.
    names: Vec<String>,
    /// Joint indices sorted by name bytes, for lookups without allocation.
    by_name: Vec<u16>,
    /// Parent of each joint (always a smaller index).
    parents: Vec<Option<u16>>,
    /// Rest local rotation of each joint, internal axes.
    rest_rotations: Vec<Quat>,
    stream: StreamFormat,
    /// The sender's up axis turned to +Y.
    to_y_up: Quat,
    /// Metres per sender unit.
    metres_per_unit: f32,
}

impl LabSkeleton {
    /// Prepares `skeleton` (joints in its order, internal axes) for streams in
    /// `stream`'s format.
    pub fn new(skeleton: &Skeleton, stream: StreamFormat) -> Result<Self, LabSkeletonError> {
        if skeleton.len() > MAX_JOINTS {
            return Err(LabSkeletonError::TooManyJoints(skeleton.len()));
        }
        let joints = skeleton.joints();
        for joint in joints {
            let n = &joint.name;
            if n.is_empty() || n.len() > MAX_JOINT_NAME || n.contains('\0') {
                return Err(LabSkeletonError::BadJointName(n.clone()));
            }
        }
        let names: Vec<String> = joints.iter().map(|j| j.name.clone()).collect();
        let mut by_name: Vec<u16> = (0..names.len() as u16).collect();
        by_name.sort_by(|&a, &b| names[usize::from(a)].cmp(&names[usize::from(b)]));
        Ok(Self {
            by_name,
            parents: joints.iter().map(|j| j.parent.map(|p| p as u16)).collect(),
            rest_rotations: skeleton.rest_rotations(),
            to_y_up: stream.up.to_y_up(),
            metres_per_unit: stream.units.metres_per_unit(),
            stream,
            names,
        })
    }

    /// How many joints a frame of this skeleton has.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.names.len()
    }

    /// How the lab writes this skeleton's frames.
    #[must_use]
    pub fn stream(&self) -> &StreamFormat {
        &self.stream
    }

    /// The index of the joint whose name is `name`'s bytes.
    fn joint_index(&self, name: &[u8]) -> Option<usize> {
        self.by_name
            .binary_search_by(|&j| self.names[usize::from(j)].as_bytes().cmp(name))
            .ok()
            .map(|i| usize::from(self.by_name[i]))
    }

    /// A rotation in the sender's axes into internal axes: mirror X (left-handed
    /// senders), then turn the up axis to +Y (`B·q·B⁻¹`).
    fn rotation_to_internal(&self, q: Quat) -> Quat {
        let q = match self.stream.handedness {
            Handedness::Right => q,
            Handedness::Left => Quat::from_xyzw(q.x, -q.y, -q.z, q.w),
        };
        self.to_y_up * q * self.to_y_up.conjugate()
    }

    /// The inverse of `rotation_to_internal`.
    fn rotation_to_sender(&self, q: Quat) -> Quat {
        let q = self.to_y_up.conjugate() * q * self.to_y_up;
        match self.stream.handedness {
            Handedness::Right => q,
            Handedness::Left => Quat::from_xyzw(q.x, -q.y, -q.z, q.w),
        }
    }

    /// A position in the sender's units and axes into metres, internal axes.
    fn position_to_internal(&self, p: Vec3) -> Vec3 {
        let p = match self.stream.handedness {
            Handedness::Right => p,
            Handedness::Left => Vec3::new(-p.x, p.y, p.z),
        };
        self.to_y_up * p * self.metres_per_unit
    }

    /// The inverse of `position_to_internal`.
    fn position_to_sender(&self, p: Vec3) -> Vec3 {
        let p = self.to_y_up.conjugate() * p / self.metres_per_unit;
        match self.stream.handedness {
            Handedness::Right => p,
            Handedness::Left => Vec3::new(-p.x, p.y, p.z),
        }
    }

    /// A joint message's values (after the name) as a rotation in internal axes.
    fn read_rotation(&self, values: &[Arg<'_>]) -> Result<Quat, Refusal> {
        let q = match self.stream.rotation {
            RotationFormat::Quaternion => {
                let [x, y, z, w] = values else {
                    return Err(Refusal::Malformed);
                };
                let v = [number(x)?, number(y)?, number(z)?, number(w)?];
                if v.iter().any(|c| !c.is_finite()) {
                    return Err(Refusal::NotFinite);
                }
                let length = v.iter().map(|&c| f64::from(c).powi(2)).sum::<f64>().sqrt();
                if length > MAX_QUATERNION {
                    return Err(Refusal::OutOfRange);
                }
                if length < MIN_QUATERNION {
                    return Err(Refusal::ZeroRotation);
                }
                let [x, y, z, w] = v.map(|c| (f64::from(c) / length) as f32);
                Quat::from_xyzw(x, y, z, w)
            }
            RotationFormat::Euler { order, angles } => {
                let [a, b, c] = values else {
                    return Err(Refusal::Malformed);
                };
                let k = angles.radians_per_unit();
                let v = [number(a)?, number(b)?, number(c)?];
                if v.iter().any(|c| !c.is_finite()) {
                    return Err(Refusal::NotFinite);
                }
                if v.iter().any(|c| (c * k).abs() > MAX_EULER) {
                    return Err(Refusal::OutOfRange);
                }
                Quat::from_euler(order, v[0] * k, v[1] * k, v[2] * k)
            }
        };
        Ok(self.rotation_to_internal(q))
    }

    /// A root message's values as a position in metres, internal axes.
    fn read_position(&self, values: &[Arg<'_>]) -> Result<Vec3, Refusal> {
        let [x, y, z] = values else {
            return Err(Refusal::Malformed);
        };
        let p = Vec3::new(number(x)?, number(y)?, number(z)?);
        if !p.is_finite() {
            return Err(Refusal::NotFinite);
        }
        let p = self.position_to_internal(p);
        if !p.is_finite() || p.abs().max_element() > MAX_POSITION {
            return Err(Refusal::OutOfRange);
        }
        Ok(p)
    }

    /// Model rotation of every joint for `frame`'s local rotations, joints not
    /// present at their rest, into `globals`.
    fn model_rotations(&self, frame: &JointFrame, globals: &mut [Quat]) {
        for (j, parent) in self.parents.iter().enumerate() {
            let parent = parent.map_or(Quat::IDENTITY, |p| globals[usize::from(p)]);
            let local = if frame.has(j) {
                frame.rotations[j]
            } else {
                self.rest_rotations[j]
            };
            globals[j] = parent * local;
        }
    }

    /// Turns a completed frame's global rotations (internal axes) into local ones:
    /// `L(j) = G(parent)⁻¹ · G(j)`, with `G` of a joint not sent its parent's `G`
    /// times its rest rotation.
    fn globals_to_locals(&self, frame: &mut JointFrame, globals: &mut [Quat]) {
        for (j, parent) in self.parents.iter().enumerate() {
            let parent = parent.map_or(Quat::IDENTITY, |p| globals[usize::from(p)]);
            if frame.has(j) {
                globals[j] = frame.rotations[j];
                frame.rotations[j] = (parent.conjugate() * globals[j]).normalize();
            } else {
                globals[j] = parent * self.rest_rotations[j];
            }
        }
    }

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

/// A numeric argument as `f32`: floats, doubles and integers are accepted.
fn number(arg: &Arg<'_>) -> Result<f32, Refusal> {
    match *arg {
        Arg::Float(v) => Ok(v),
        Arg::Int(v) => Ok(v as f32),
        Arg::Long(v) => Ok(v as f32),
        Arg::Double(v) => {
            let f = v as f32;
            if v.is_finite() && !f.is_finite() {
                Err(Refusal::OutOfRange)
            } else {
                Ok(f)
            }
        }
        Arg::Str(_) | Arg::Other(_) => Err(Refusal::Malformed),
    }
}

/// Why one message was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Malformed,
    NotFinite,
    OutOfRange,
    ZeroRotation,
}

/// What one datagram (or, summed with `+=`, a stream) held, counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabStats {
    /// Frames completed and handed on.
    pub frames: u32,
    /// Frame parts accepted (datagrams, for one part per datagram).
    pub parts: u32,
    /// Joint rotations read into frames.
    pub joints: u32,
    /// Broken OSC framing: garbage datagrams, truncated bundles and elements.
    pub broken: u32,
    /// Messages with missing, extra, wrongly typed or cut-short arguments, and
    /// headers with a bad subject name, a negative frame number, a part outside
    /// its count or a part count other than their frame's.
    pub malformed: u32,
    /// Values that are NaN or infinite.
    pub not_finite: u32,
    /// Values too large to be a pose: positions past 10 km, quaternions longer
    /// than 10⁶, Euler angles past 32 turns.
    pub out_of_range: u32,
    /// Quaternions too short to normalize.
    pub zero_rotations: u32,
    /// Joint messages naming no joint of the subject's skeleton.
    pub unknown_joints: u32,
    /// Headers naming a subject no skeleton is given for.
    pub unknown_subjects: u32,
    /// Messages at addresses the schema does not define.
    pub ignored: u32,
    /// Root and joint messages with no header before them in their datagram.
    pub orphaned: u32,
    /// Parts received twice, parts of frames already complete and parts older
    /// than the frame being assembled.
    pub stale_parts: u32,
    /// Frames given up with parts missing, when a newer frame began.
    pub incomplete_frames: u32,
    /// Subjects forgotten (the least recently seen) to make room for a new one.
    pub evicted_subjects: u32,
}

impl LabStats {
    fn refused(&mut self, refusal: Refusal) {
        match refusal {
            Refusal::Malformed => self.malformed += 1,
            Refusal::NotFinite => self.not_finite += 1,
            Refusal::OutOfRange => self.out_of_range += 1,
            Refusal::ZeroRotation => self.zero_rotations += 1,
        }
    }

    /// Everything dropped, of every kind.
    #[must_use]
    pub fn dropped(&self) -> u32 {
        self.broken
            + self.malformed
            + self.not_finite
            + self.out_of_range
            + self.zero_rotations
            + self.unknown_joints
            + self.unknown_subjects
            + self.orphaned
            + self.stale_parts
            + self.incomplete_frames
    }
}

impl std::ops::AddAssign for LabStats {
    fn add_assign(&mut self, o: Self) {
        self.frames += o.frames;
        self.parts += o.parts;
        self.joints += o.joints;
        self.broken += o.broken;
        self.malformed += o.malformed;
        self.not_finite += o.not_finite;
        self.out_of_range += o.out_of_range;
        self.zero_rotations += o.zero_rotations;
        self.unknown_joints += o.unknown_joints;
        self.unknown_subjects += o.unknown_subjects;
        self.ignored += o.ignored;
        self.orphaned += o.orphaned;
        self.stale_parts += o.stale_parts;
        self.incomplete_frames += o.incomplete_frames;
        self.evicted_subjects += o.evicted_subjects;
    }
}

/// One subject's frame being assembled.
struct Subject {
    /// The frame so far: name, number, time, root, joints of the parts received
    /// (global rotations until complete, for global streams).
    frame: JointFrame,
    /// Part count of the frame being assembled; 0 when none is.
    parts: u8,
    /// Which parts have arrived, bit `part`.
    received: u64,
    /// The number of the last frame completed.
    last_complete: Option<u64>,
    /// The assembler's datagram count when this subject last sent a header.
    last_seen: u64,
}

/// What the messages read so far in a datagram belong to.
#[derive(Clone, Copy)]
enum Part<'s> {
    /// No header yet: root and joint messages are orphans.
    None,
    /// The header was refused (and counted): messages are skipped up to the next.
    Skip,
    /// Part `part` of subject `slot`'s frame, of `skeleton`.
    Open {
        slot: usize,
        skeleton: &'s LabSkeleton,
        part: u8,
    },
}

/// The frame header's fields.
struct Header<'a> {
    subject: &'a [u8],
    frame: u64,
    time: f64,
    part: u8,
    parts: u8,
}

fn read_header<'a>(message: &Message<'a>) -> Result<Header<'a>, Refusal> {
    let mut args = [Arg::Int(0); 6];
    let n = message.args(&mut args).map_err(|_| Refusal::Malformed)?;
    let [
        Arg::Str(subject),
        frame,
        time,
        Arg::Int(part),
        Arg::Int(parts),
    ] = args[..n]
    else {
        return Err(Refusal::Malformed);
    };
    let frame = match frame {
        Arg::Int(v) => u64::try_from(v),
        Arg::Long(v) => u64::try_from(v),
        _ => return Err(Refusal::Malformed),
    }
    .map_err(|_| Refusal::Malformed)?;
    let time = match time {
        Arg::Double(t) => t,
        Arg::Float(t) => f64::from(t),
        _ => return Err(Refusal::Malformed),
    };
    if !time.is_finite() {
        return Err(Refusal::NotFinite);
    }
    if !(1..=MAX_PARTS as i32).contains(&parts) || !(0..parts).contains(&part) {
        return Err(Refusal::Malformed);
    }
    Ok(Header {
        subject,
        frame,
        time,
        part: part as u8,
        parts: parts as u8,
    })
}

/// Assembles frames from lab OSC datagrams, per subject. Owned by one input task.
pub struct LabAssembler {
    subjects: Vec<Subject>,
    max_subjects: usize,
    /// Datagrams seen, the clock of `Subject::last_seen`.
    clock: u64,
    /// Scratch model rotations for global streams.
    globals: Box<[Quat; MAX_JOINTS]>,
}

impl Default for LabAssembler {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SUBJECTS)
    }
}

impl LabAssembler {
    /// An assembler keeping at most `max_subjects` subjects (at least 1); all its
    /// memory is taken here.
    #[must_use]
    pub fn new(max_subjects: usize) -> Self {
        let max_subjects = max_subjects.max(1);
        Self {
            subjects: Vec::with_capacity(max_subjects),
            max_subjects,
            clock: 0,
            globals: Box::new([Quat::IDENTITY; MAX_JOINTS]),
        }
    }

    /// Reads one datagram. `skeleton_for` gives the skeleton of a subject (by
    /// name), `None` for subjects not to be read; `on_frame` gets every frame the
    /// datagram completes: local rotations in internal axes, root position in
    /// metres. Allocates nothing (beyond a new subject's first header, within the
    /// capacity taken by `new`), never panics.
    pub fn datagram<'s>(
        &mut self,
        bytes: &[u8],
        skeleton_for: impl Fn(&str) -> Option<&'s LabSkeleton>,
        mut on_frame: impl FnMut(&JointFrame),
    ) -> LabStats {
        self.clock += 1;
        let mut stats = LabStats::default();
        let mut part = Part::None;
        for message in osc::messages(bytes) {
            match message {
                Ok(m) => self.message(&m, &mut part, &skeleton_for, &mut on_frame, &mut stats),
                Err(_) => stats.broken += 1,
            }
        }
        self.close(part, &mut on_frame, &mut stats);
        stats
    }

    fn message<'s>(
        &mut self,
        message: &Message<'_>,
        part: &mut Part<'s>,
        skeleton_for: &impl Fn(&str) -> Option<&'s LabSkeleton>,
        on_frame: &mut impl FnMut(&JointFrame),
        stats: &mut LabStats,
    ) {
        let address = message.address;
        if address == FRAME_ADDRESS.as_bytes() {
            self.close(*part, on_frame, stats);
            *part = self.open(message, skeleton_for, stats);
            return;
        }
        let is_joint = address == JOINT_ADDRESS.as_bytes();
        if !is_joint && address != ROOT_ADDRESS.as_bytes() {
            stats.ignored += 1;
            return;
        }
        let (slot, skeleton) = match *part {
            Part::None => {
                stats.orphaned += 1;
                return;
            }
            Part::Skip => return,
            Part::Open { slot, skeleton, .. } => (slot, skeleton),
        };
        let mut args = [Arg::Int(0); 6];
        let Ok(n) = message.args(&mut args) else {
            stats.malformed += 1;
            return;
        };
        let frame = &mut self.subjects[slot].frame;
        if !is_joint {
            match skeleton.read_position(&args[..n]) {
                Ok(p) => frame.root_position = Some(p),
                Err(r) => stats.refused(r),
            }
            return;
        }
        let Some((Arg::Str(name), values)) = args[..n].split_first() else {
            stats.malformed += 1;
            return;
        };
        let Some(joint) = skeleton.joint_index(name) else {
            stats.unknown_joints += 1;
            return;
        };
        match skeleton.read_rotation(values) {
            Ok(q) => {
                frame.set(joint, q);
                stats.joints += 1;
            }
            Err(r) => stats.refused(r),
        }
    }

    /// Reads a header and decides what its part is: accepted into its subject's
    /// frame (a new one, or the one being assembled), or refused and counted.
    fn open<'s>(
        &mut self,
        message: &Message<'_>,
        skeleton_for: &impl Fn(&str) -> Option<&'s LabSkeleton>,
        stats: &mut LabStats,
    ) -> Part<'s> {
        let header = match read_header(message) {
            Ok(h) => h,
            Err(r) => {
                stats.refused(r);
                return Part::Skip;
            }
        };
        let Some(name) = PerformerName::from_bytes(header.subject) else {
            stats.malformed += 1;
            return Part::Skip;
        };
        let Some(skeleton) = skeleton_for(name.as_str()) else {
            stats.unknown_subjects += 1;
            return Part::Skip;
        };
        let slot = self.slot(name, stats);
        let subject = &mut self.subjects[slot];
        subject.last_seen = self.clock;
        let n = header.frame;
        let late = |newest: u64| n < newest && newest - n <= STALE_WINDOW;
        let bit = 1u64 << header.part;
        if subject.parts != 0 {
            let current = subject.frame.frame;
            if n == current {
                if header.parts != subject.parts {
                    stats.malformed += 1;
                    return Part::Skip;
                }
                if subject.received & bit != 0 {
                    stats.stale_parts += 1;
                    return Part::Skip;
                }
                stats.parts += 1;
                return Part::Open {
                    slot,
                    skeleton,
                    part: header.part,
                };
            }
            if late(current) {
                stats.stale_parts += 1;
                return Part::Skip;
            }
            stats.incomplete_frames += 1;
        } else if let Some(last) = subject.last_complete
            && (n == last || late(last))
        {
            stats.stale_parts += 1;
            return Part::Skip;
        }
        // A new frame.
        let frame = &mut subject.frame;
        frame.frame = n;
        frame.time = header.time;
        frame.root_position = None;
        frame.joint_count = skeleton.joint_count() as u16;
        frame.present = [0; MAX_JOINTS / 64];
        frame.rotations = [Quat::IDENTITY; MAX_JOINTS];
        subject.parts = header.parts;
        subject.received = 0;
        stats.parts += 1;
        Part::Open {
            slot,
            skeleton,
            part: header.part,
        }
    }

    /// The slot of subject `name`: found, new, or the least recently seen one
    /// taken over.
    fn slot(&mut self, name: PerformerName, stats: &mut LabStats) -> usize {
        if let Some(i) = self.subjects.iter().position(|s| s.frame.performer == name) {
            return i;
        }
        let fresh = Subject {
            frame: JointFrame::new(name),
            parts: 0,
            received: 0,
            last_complete: None,
            last_seen: self.clock,
        };
        if self.subjects.len() < self.max_subjects {
            self.subjects.push(fresh);
            return self.subjects.len() - 1;
        }
        let oldest = (0..self.subjects.len())
            .min_by_key(|&i| self.subjects[i].last_seen)
            .unwrap_or(0);
        self.subjects[oldest] = fresh;
        stats.evicted_subjects += 1;
        oldest
    }

    /// Ends the part being read: marks it received, and hands the frame on when
    /// it was the last one missing.
    fn close(
        &mut self,
        part: Part<'_>,
        on_frame: &mut impl FnMut(&JointFrame),
        stats: &mut LabStats,
    ) {
        let Part::Open {
            slot,
            skeleton,
            part,
        } = part
        else {
            return;
        };
        let subject = &mut self.subjects[slot];
        subject.received |= 1u64 << part;
        let all = u64::MAX >> (64 - u32::from(subject.parts));
        if subject.received != all {
            return;
        }
        if skeleton.stream.space == RotationSpace::Global {
            skeleton.globals_to_locals(&mut subject.frame, &mut self.globals[..]);
        }
        subject.parts = 0;
        subject.last_complete = Some(subject.frame.frame);
        stats.frames += 1;
        on_frame(&subject.frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skeleton_json::parse_with_stream;
    use crate::formats::{LoadOptions, Units, UpAxis};
    use crate::skeleton::{Joint, Transform};
    use glam::{DMat3, DVec3, EulerRot};
    use rosc::{OscMessage, OscPacket, OscType};

    fn lab19() -> Skeleton {
        parse_with_stream(
            crate::skeleton::builtin::LAB19_JSON,
            std::path::Path::new("lab19.json"),
            &LoadOptions::default(),
        )
        .unwrap()
        .0
        .skeleton
    }

    fn stream(
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
    fn plain() -> StreamFormat {
        StreamFormat::local_quaternions(Units::Metres, UpAxis::Y)
    }

    fn euler(order: EulerRot, angles: AngleUnit) -> RotationFormat {
        RotationFormat::Euler { order, angles }
    }

    fn msg(addr: &str, args: Vec<OscType>) -> Vec<u8> {
        rosc::encoder::encode(&OscPacket::Message(OscMessage {
            addr: addr.into(),
            args,
        }))
        .unwrap()
    }

    fn header_msg(subject: &str, frame: i32, part: i32, parts: i32) -> Vec<u8> {
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

    fn joint_msg(name: &str, values: &[f32]) -> Vec<u8> {
        let mut args = vec![OscType::String(name.into())];
        args.extend(values.iter().map(|&v| OscType::Float(v)));
        msg(JOINT_ADDRESS, args)
    }

    /// A bundle of the given elements, framed by hand (so elements may be garbage).
    fn bundle(elements: &[Vec<u8>]) -> Vec<u8> {
        let mut d = b"#bundle\0".to_vec();
        d.extend_from_slice(&1u64.to_be_bytes());
        for e in elements {
            d.extend_from_slice(&(e.len() as u32).to_be_bytes());
            d.extend_from_slice(e);
        }
        d
    }

    /// Every frame the datagrams complete, and the summed counts.
    fn decode(
        assembler: &mut LabAssembler,
        skeleton: &LabSkeleton,
        datagrams: &[Vec<u8>],
    ) -> (Vec<JointFrame>, LabStats) {
        let mut frames = Vec::new();
        let mut total = LabStats::default();
        for d in datagrams {
            total += assembler.datagram(d, |_| Some(skeleton), |f| frames.push(*f));
        }
        (frames, total)
    }

    /// Angle between two rotations, radians, computed in f64.
    fn angle(a: Quat, b: Quat) -> f64 {
        let d = a.as_dquat().conjugate() * b.as_dquat();
        2.0 * d.xyz().length().atan2(d.w.abs())
    }

    /// A deterministic xorshift generator for test poses.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }

        /// A uniformly random rotation (Shoemake).
        fn rotation(&mut self) -> Quat {
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

    fn random_frame(rng: &mut Rng, joints: usize, subject: &str, number: u64) -> JointFrame {
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

    fn assert_same_frame(sent: &JointFrame, got: &JointFrame, what: &str) {
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

    #[test]
    fn new_rejects_too_many_joints_and_unsendable_names() {
        let chain = |n: usize, name: &dyn Fn(usize) -> String| {
            let joints = (0..n)
                .map(|i| Joint {
                    name: name(i),
                    parent: i.checked_sub(1),
                    rest: Transform::from_translation(Vec3::Y),
                    end: None,
                })
                .collect();
            Skeleton::new(joints).unwrap()
        };
        let too_many = chain(MAX_JOINTS + 1, &|i| format!("j{i}"));
        assert_eq!(
            LabSkeleton::new(&too_many, plain()).err(),
            Some(LabSkeletonError::TooManyJoints(MAX_JOINTS + 1))
        );
        let long = chain(2, &|i| "x".repeat(MAX_JOINT_NAME + i));
        assert!(matches!(
            LabSkeleton::new(&long, plain()),
            Err(LabSkeletonError::BadJointName(_))
        ));
        let nul = chain(1, &|_| "a\0b".into());
        assert!(matches!(
            LabSkeleton::new(&nul, plain()),
            Err(LabSkeletonError::BadJointName(_))
        ));
    }

    /// One datagram per case: the count it raises, how many frames it completes
    /// and whether the good joint after the bad message (`Chest`) still arrives.
    #[test]
    fn bad_input_is_counted_by_kind_and_the_rest_still_read() {
        type Count = fn(&LabStats) -> u32;
        /// What is sent, the count it raises and by how much, frames completed,
        /// whether `Chest` arrives.
        type Case = (&'static str, Vec<u8>, Count, u32, u32, bool);
        let h = || header_msg("ann", 7, 0, 1);
        let chest = || joint_msg("Chest", &[0.0, 0.0, 0.0, 1.0]);
        // A good header, `bad`, then a good joint.
        let bad = |bad: Vec<u8>| bundle(&[h(), bad, chest()]);
        let hips = |v: &[f32]| joint_msg("Hips", v);
        let root = |args: Vec<OscType>| msg(ROOT_ADDRESS, args);
        let head = |subject: &str, frame, part, parts| {
            bundle(&[header_msg(subject, frame, part, parts), chest()])
        };
        let head_args = |frame: OscType, time: OscType| {
            let args = vec!["ann".into(), frame, time, OscType::Int(0), OscType::Int(1)];
            bundle(&[msg(FRAME_ADDRESS, args), chest()])
        };
        let mut cut = bundle(&[h(), chest()]);
        cut.truncate(cut.len() - 6);
        let (f, d, i) = (OscType::Float, OscType::Double, OscType::Int);
        let (nan, inf) = (f32::NAN, f32::INFINITY);
        #[rustfmt::skip] // one line per case
        let cases: Vec<Case> = vec![
            ("garbage", b"not osc at all".to_vec(), |s| s.broken, 1, 0, false),
            ("empty", Vec::new(), |s| s.broken, 1, 0, false),
            ("truncated bundle", cut, |s| s.broken, 1, 1, false),
            ("garbage element", bad(b"garbage!".to_vec()), |s| s.broken, 1, 1, true),
            ("garbage in a nested bundle", bad(bundle(&[b"junk".to_vec()])), |s| s.broken, 1, 1, true),
            ("string for a float", bad(msg(JOINT_ADDRESS, vec!["Hips".into(), f(0.0), "x".into(), f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("too few values", bad(hips(&[0.0, 0.0, 1.0])), |s| s.malformed, 1, 1, true),
            ("too many values", bad(hips(&[0.0, 0.0, 0.0, 1.0, 0.0])), |s| s.malformed, 1, 1, true),
            ("no joint name", bad(msg(JOINT_ADDRESS, vec![f(0.0), f(0.0), f(0.0), f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("root of two values", bad(root(vec![f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("NaN quaternion", bad(hips(&[nan, 0.0, 0.0, 1.0])), |s| s.not_finite, 1, 1, true),
            ("infinite quaternion", bad(hips(&[0.0, inf, 0.0, 1.0])), |s| s.not_finite, 1, 1, true),
            ("NaN root", bad(root(vec![f(0.0), f(nan), f(0.0)])), |s| s.not_finite, 1, 1, true),
            ("huge quaternion", bad(hips(&[1e30, 0.0, 0.0, 1.0])), |s| s.out_of_range, 1, 1, true),
            ("huge root", bad(root(vec![f(0.0), f(1e5), f(0.0)])), |s| s.out_of_range, 1, 1, true),
            ("double beyond f32", bad(root(vec![f(0.0), d(1e300), f(0.0)])), |s| s.out_of_range, 1, 1, true),
            ("zero quaternion", bad(hips(&[0.0, 0.0, 0.0, 0.0])), |s| s.zero_rotations, 1, 1, true),
            ("unknown joint", bad(joint_msg("Tail", &[0.0, 0.0, 0.0, 1.0])), |s| s.unknown_joints, 1, 1, true),
            ("unknown address", bad(msg("/lab/tail", vec![f(1.0)])), |s| s.ignored, 1, 1, true),
            ("joint before any header", bundle(&[chest(), h()]), |s| s.orphaned, 1, 1, false),
            ("unknown subject", head("nobody", 7, 0, 1), |s| s.unknown_subjects, 1, 0, false),
            ("part outside its count", head("ann", 7, 2, 2), |s| s.malformed, 1, 0, false),
            ("no parts", head("ann", 7, 0, 0), |s| s.malformed, 1, 0, false),
            ("negative frame number", head("ann", -7, 0, 1), |s| s.malformed, 1, 0, false),
            ("subject name too long", head(&"a".repeat(33), 7, 0, 1), |s| s.malformed, 1, 0, false),
            ("header time NaN", head_args(i(7), d(f64::NAN)), |s| s.not_finite, 1, 0, false),
            ("float frame number", head_args(f(7.0), d(0.1)), |s| s.malformed, 1, 0, false),
            ("good", bundle(&[h(), chest()]), |s| s.dropped(), 0, 1, true),
        ];
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let chest = skeleton.joint_index(b"Chest").unwrap();
        for (case, datagram, count, expected, frames, chest_arrives) in cases {
            let mut assembler = LabAssembler::default();
            let mut got = Vec::new();
            let stats = assembler.datagram(
                &datagram,
                |name| (name == "ann").then_some(&skeleton),
                |f| got.push(*f),
            );
            assert_eq!(count(&stats), expected, "{case}: {stats:?}");
            // Nothing else dropped.
            let others = stats.dropped().saturating_sub(count(&stats));
            assert_eq!(others, 0, "{case}: {stats:?}");
            assert_eq!((got.len() as u32, stats.frames), (frames, frames), "{case}");
            let arrived = got.first().is_some_and(|f| f.has(chest));
            assert_eq!(arrived, chest_arrives, "{case}");
        }
    }

    #[test]
    fn quaternions_are_normalized_and_frames_carry_the_header() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let datagram = bundle(&[
            msg(
                FRAME_ADDRESS,
                vec![
                    "ann".into(),
                    OscType::Long(5_000_000_000),
                    OscType::Float(2.5),
                    OscType::Int(0),
                    OscType::Int(1),
                ],
            ),
            msg(
                ROOT_ADDRESS,
                vec![OscType::Int(1), OscType::Double(0.5), OscType::Float(-2.0)],
            ),
            joint_msg("Chest", &[2.0, 0.0, 0.0, 0.0]),
        ]);
        let (frames, stats) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
        assert_eq!(stats.dropped(), 0, "{stats:?}");
        let f = &frames[0];
        assert_eq!((f.frame, f.time, f.joint_count), (5_000_000_000, 2.5, 19));
        assert_eq!(f.root_position, Some(Vec3::new(1.0, 0.5, -2.0)));
        assert_eq!(f.rotations[1], Quat::from_xyzw(1.0, 0.0, 0.0, 0.0));
        assert!(f.has(1) && !f.has(0));
    }

    /// The sender's axes into internal ones: a root position and a quarter turn
    /// about the sender's up axis, per up axis and handedness.
    #[test]
    fn sender_axes_become_internal_axes() {
        let q = std::f32::consts::FRAC_PI_2;
        let (x, y, z) = (
            Quat::from_rotation_x,
            Quat::from_rotation_y,
            Quat::from_rotation_z,
        );
        let v = Vec3::new;
        #[rustfmt::skip] // one line per case
        let cases = [
            (UpAxis::Y, Handedness::Right, v(1.0, 2.0, 3.0), v(1.0, 2.0, 3.0), y(q), y(q)),
            (UpAxis::Y, Handedness::Left, v(1.0, 2.0, 3.0), v(-1.0, 2.0, 3.0), y(q), y(-q)),
            (UpAxis::Z, Handedness::Right, v(1.0, 2.0, 3.0), v(1.0, 3.0, -2.0), z(q), y(q)),
            (UpAxis::Z, Handedness::Left, v(1.0, 2.0, 3.0), v(-1.0, 3.0, -2.0), z(q), y(-q)),
            (UpAxis::Z, Handedness::Right, Vec3::ZERO, Vec3::ZERO, x(q), x(q)),
        ];
        for (up, hand, sent_position, position, sent_rotation, rotation) in cases {
            let format = stream(
                RotationSpace::Local,
                RotationFormat::Quaternion,
                Units::Centimetres,
                up,
                hand,
            );
            let skeleton = LabSkeleton::new(&lab19(), format).unwrap();
            let p = sent_position * 100.0;
            let datagram = bundle(&[
                header_msg("ann", 1, 0, 1),
                msg(ROOT_ADDRESS, vec![p.x.into(), p.y.into(), p.z.into()]),
                joint_msg("Hips", &sent_rotation.to_array()),
            ]);
            let (frames, _) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
            let what = format!("{up:?} {hand:?}");
            let got = frames[0].root_position.unwrap();
            assert!(got.distance(position) < 1e-6, "{what}: {got}");
            assert!(angle(frames[0].rotations[0], rotation) < 1e-6, "{what}");
        }
    }

    /// `R = R(axis1, a) · R(axis2, b) · R(axis3, c)`, from the textbook matrices.
    fn euler_matrix(order: &str, angles: [f64; 3]) -> DMat3 {
        let mut m = DMat3::IDENTITY;
        for (axis, a) in order.chars().zip(angles) {
            let (s, c) = a.sin_cos();
            let r = match axis {
                'X' => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
                'Y' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
                _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            };
            // DMat3::from_cols_array_2d takes columns; `r` is rows.
            m *= DMat3::from_cols_array_2d(&r).transpose();
        }
        m
    }

    #[test]
    fn euler_angles_follow_their_order_intrinsically() {
        let orders = [
            ("XYZ", EulerRot::XYZ),
            ("XZY", EulerRot::XZY),
            ("YXZ", EulerRot::YXZ),
            ("YZX", EulerRot::YZX),
            ("ZXY", EulerRot::ZXY),
            ("ZYX", EulerRot::ZYX),
        ];
        let mut rng = Rng(7);
        for (name, order) in orders {
            for angles in [AngleUnit::Degrees, AngleUnit::Radians] {
                let format = stream(
                    RotationSpace::Local,
                    euler(order, angles),
                    Units::Metres,
                    UpAxis::Y,
                    Handedness::Right,
                );
                let skeleton = LabSkeleton::new(&lab19(), format).unwrap();
                for _ in 0..20 {
                    let radians = [0, 1, 2].map(|_| f64::from(rng.next() * 6.0 - 3.0));
                    let sent = radians.map(|a| match angles {
                        AngleUnit::Degrees => a.to_degrees() as f32,
                        AngleUnit::Radians => a as f32,
                    });
                    let datagram = bundle(&[header_msg("ann", 1, 0, 1), joint_msg("Chest", &sent)]);
                    let (frames, _) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
                    let q = frames[0].rotations[1];
                    let m = euler_matrix(name, radians);
                    for v in [DVec3::X, DVec3::Y, DVec3::Z] {
                        let got = q.as_dquat() * v;
                        assert!(got.distance(m * v) < 1e-5, "{name} {angles:?} {radians:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn global_rotations_become_local_through_the_parents() {
        let lab = lab19();
        let format = stream(
            RotationSpace::Global,
            RotationFormat::Quaternion,
            Units::Metres,
            UpAxis::Y,
            Handedness::Right,
        );
        let skeleton = LabSkeleton::new(&lab, format).unwrap();
        let mut rng = Rng(11);
        for round in 0..20 {
            let locals: Vec<Quat> = (0..lab.len()).map(|_| rng.rotation()).collect();
            // Model rotations by the skeleton's own forward kinematics (matrices).
            let world = lab.world_transforms(&locals, &lab.rest_translations());
            let mut elements = vec![header_msg("ann", round, 0, 1)];
            for (joint, w) in lab.joints().iter().zip(&world) {
                let g = Quat::from_mat3a(&w.matrix3);
                elements.push(joint_msg(&joint.name, &g.to_array()));
            }
            let (frames, stats) = decode(
                &mut LabAssembler::default(),
                &skeleton,
                &[bundle(&elements)],
            );
            assert_eq!(stats.dropped(), 0, "{stats:?}");
            for (j, local) in locals.iter().enumerate() {
                let a = angle(*local, frames[0].rotations[j]);
                assert!(a < 1e-5, "joint {j} off by {a} rad");
            }
        }
    }

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

    /// A 128-joint chain with long names: several datagrams per frame.
    fn big_skeleton(format: StreamFormat) -> LabSkeleton {
        let joints = (0..MAX_JOINTS)
            .map(|i| Joint {
                name: format!("{i:03}{}", "-".repeat(MAX_JOINT_NAME - 3)),
                parent: i.checked_sub(1),
                rest: Transform {
                    translation: Vec3::Y,
                    rotation: Quat::from_rotation_z(0.1 * i as f32),
                    scale: Vec3::ONE,
                },
                end: None,
            })
            .collect();
        LabSkeleton::new(&Skeleton::new(joints).unwrap(), format).unwrap()
    }

    #[test]
    fn multi_part_frames_are_handed_on_when_their_last_part_arrives() {
        let format = stream(
            RotationSpace::Global,
            euler(EulerRot::ZXY, AngleUnit::Degrees),
            Units::Centimetres,
            UpAxis::Z,
            Handedness::Left,
        );
        let skeleton = big_skeleton(format);
        let mut rng = Rng(5);
        let sent = random_frame(&mut rng, MAX_JOINTS, "ann", 10);
        let datagrams = skeleton.encode(&sent);
        assert!(datagrams.len() > 10, "{} parts", datagrams.len());
        assert!(datagrams.iter().all(|d| d.len() <= MAX_DATAGRAM));

        // In order: nothing until the last part, then the whole frame.
        let mut assembler = LabAssembler::default();
        for (i, d) in datagrams.iter().enumerate() {
            let (got, stats) = decode(&mut assembler, &skeleton, std::slice::from_ref(d));
            assert_eq!(stats.dropped(), 0, "{stats:?}");
            assert_eq!(got.len(), usize::from(i + 1 == datagrams.len()), "part {i}");
            if let Some(frame) = got.first() {
                assert_same_frame(&sent, frame, "in order");
            }
        }
        // Reversed: the frame completes on part 0, now the last to arrive.
        let mut assembler = LabAssembler::default();
        let mut reversed = datagrams.clone();
        reversed.reverse();
        let (head, last) = reversed.split_at(reversed.len() - 1);
        assert!(decode(&mut assembler, &skeleton, head).0.is_empty());
        let (got, _) = decode(&mut assembler, &skeleton, last);
        assert_same_frame(&sent, &got[0], "reversed");

        // A lost part: the frame is given up when the next one begins; repeated
        // and late parts are dropped.
        let mut assembler = LabAssembler::default();
        let next = random_frame(&mut rng, MAX_JOINTS, "ann", 11);
        let next_datagrams = skeleton.encode(&next);
        let mut stream = datagrams[1..].to_vec();
        stream.push(next_datagrams[0].clone());
        stream.push(next_datagrams[0].clone());
        stream.push(datagrams[0].clone());
        stream.extend(next_datagrams[1..].iter().cloned());
        stream.push(next_datagrams[2].clone());
        let (got, stats) = decode(&mut assembler, &skeleton, &stream);
        assert_eq!(got.len(), 1);
        assert_same_frame(&next, &got[0], "after a lost part");
        assert_eq!(stats.incomplete_frames, 1, "{stats:?}");
        assert_eq!(stats.stale_parts, 3, "{stats:?}");
    }

    #[test]
    fn subjects_share_a_port_and_the_least_recently_seen_makes_room() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let mut rng = Rng(9);
        let mut assembler = LabAssembler::new(2);
        let mut stream = Vec::new();
        for n in 0..3 {
            for subject in ["ann", "bob", "cy"] {
                stream.extend(skeleton.encode(&random_frame(&mut rng, 19, subject, n)));
            }
        }
        let (got, stats) = decode(&mut assembler, &skeleton, &stream);
        assert_eq!(got.len(), 9);
        assert_eq!(stats.evicted_subjects, 7, "{stats:?}");
        let names: Vec<&str> = got.iter().map(|f| f.performer.as_str()).collect();
        assert_eq!(&names[..3], ["ann", "bob", "cy"]);
    }

    #[test]
    fn no_input_makes_it_panic() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let mut rng = Rng(13);
        let good = skeleton
            .encode(&random_frame(&mut rng, 19, "ann", 1))
            .remove(0);
        let mut assembler = LabAssembler::default();
        for len in 0..good.len() {
            let _ = decode(&mut assembler, &skeleton, &[good[..len].to_vec()]);
        }
        for _ in 0..2000 {
            let mut d = good.clone();
            for _ in 0..4 {
                let i = (rng.next() * d.len() as f32) as usize % d.len();
                d[i] = (rng.next() * 256.0) as u8;
            }
            let _ = decode(&mut assembler, &skeleton, &[d]);
        }
    }
}
