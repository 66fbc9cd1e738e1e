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
//!
//! Files: `skeleton` (`LabSkeleton`, the stream's conversions), `encode` (frames
//! into datagrams), `assembler` (`LabAssembler`, datagrams into frames), `stats`
//! (`LabStats`).

mod assembler;
mod encode;
mod skeleton;
mod stats;
#[cfg(test)]
mod test_support;

pub use assembler::LabAssembler;
pub use skeleton::{LabSkeleton, LabSkeletonError};
pub use stats::LabStats;

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
