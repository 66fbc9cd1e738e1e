//! The WebSocket message schema, as a pure codec: no sockets here (the live bridge's
//! WebSocket server moves the text and bytes). `docs/websocket.md` is the schema for
//! client authors; this header is the map for readers of the code.
//!
//! Incoming (client → bridge), JSON text messages tagged by `"type"`:
//! - `skeleton`: one frame of a streamed source skeleton, decoded in two steps: `parse`
//!   checks the message and gives the performer and skeleton names; the caller looks
//!   the skeleton up and `SkeletonMessage::decode_into` fills a `JointFrame` against it.
//! - `trackers`: one frame of VR devices, decoded straight into a `TrackerFrame`.
//! - control requests (`startRecording`, `stopRecording`, `listPerformers`, `status`,
//!   `calibrate`), each with an optional client `id` that the reply echoes.
//!
//! Everything incoming is untrusted: the server drops a message longer than
//! `MAX_MESSAGE` before parsing; numbers must be finite and at most `MAX_MAGNITUDE`;
//! quaternions must not be zero and are normalized; names are bounded by `MAX_NAME`;
//! a frame carries at most `MAX_JOINTS` joints; unknown fields are errors, unknown
//! joint names are counted. Every rejection is a `WsError` whose `kind()` says which
//! counter it belongs to.
//!
//! Outgoing (bridge → client):
//! - `pose`: a `HumanoidPose` as JSON (`encode_pose_json`) or in a compact
//!   little-endian binary form (`encode_pose_binary`), both written into a
//!   caller-owned buffer with no allocation once it has grown; floats keep their
//!   exact bits (shortest round-trip decimals in JSON, parsed back from their text).
//!   Both have decoders (`decode_pose_json`, `decode_pose_binary`) for tests and
//!   Rust clients.
//! - replies (`Reply`): `performers`, `recordingStarted`, `recordingStopped`,
//!   `calibrated`, `status` (a caller-built `serde_json::Value`) and `error`.
//!
//! All positions and rotations are in the internal space: glTF axes (right-handed,
//! +Y up, the character facing +Z), metres, quaternions (x, y, z, w), radians.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use glam::{Quat, Vec3};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use super::frame::{JointFrame, MAX_JOINTS, MAX_NAME, PerformerName, TrackedPoint, TrackerFrame};
use crate::humanoid::DevicePose;
use crate::humanoid::HAND_JOINTS;
use crate::humanoid::bone::ALL;
use crate::humanoid::expression::{CUSTOM_CAPACITY, PRESET_COUNT};
use crate::humanoid::{BONE_COUNT, CustomNames, HumanBone, HumanoidPose, LookAt, Preset};
use crate::skeleton::Skeleton;

/// Longest incoming message, bytes. The server drops longer messages before parsing
/// (and `parse` rejects them too).
pub const MAX_MESSAGE: usize = 64 * 1024;

/// Largest magnitude of any incoming position or quaternion component: 10 km in
/// metres. Anything bigger is a broken sender, not a performer.
pub const MAX_MAGNITUDE: f32 = 10_000.0;

/// Longest custom expression name an outgoing pose carries, bytes of UTF-8 (the
/// binary form stores the length in one byte); longer names are not sent.
pub const MAX_EXPRESSION_NAME: usize = 255;

/// The first four bytes of a binary pose.
pub const POSE_MAGIC: [u8; 4] = *b"MBPO";

/// The binary pose layout version; any change to the layout bumps it.
pub const POSE_VERSION: u8 = 1;

/// Longest piece of client text (a name, a JSON path) quoted in an error, bytes.
const MAX_QUOTED: usize = 64;

/// Longest parser message kept in an error (it may quote the client's text), bytes.
const MAX_PARSER_MESSAGE: usize = 160;

/// Which counter a rejected message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Not JSON, a wrong type, a missing or unknown field, an unknown message type.
    Malformed,
    /// Well-formed but out of bounds: non-finite, too large, zero quaternion, a bad name.
    InvalidValue,
    /// Too long a message, too many joints, too big a skeleton.
    Oversize,
}

/// What is wrong with a well-formed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    NotFinite,
    TooLarge,
    ZeroQuaternion,
    /// A performer or skeleton name that is empty or longer than `MAX_NAME` bytes.
    NameLength,
    /// A recording name that is not 1 to `MAX_NAME` of `A-Z a-z 0-9 _ -`.
    RecordingName,
    /// A bone or expression name this schema does not know.
    UnknownName,
    /// More custom expressions than `CUSTOM_CAPACITY` slots.
    NoFreeSlot,
    /// Bits set that this version of the binary layout does not define.
    ReservedBits,
    /// Bytes that should be UTF-8 text and are not.
    NotUtf8,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFinite => f.write_str("not a finite number"),
            Self::TooLarge => write!(f, "magnitude over {MAX_MAGNITUDE}"),
            Self::ZeroQuaternion => f.write_str("zero quaternion"),
            Self::NameLength => write!(f, "empty or longer than {MAX_NAME} bytes"),
            Self::RecordingName => {
                write!(f, "not 1 to {MAX_NAME} of `A-Z a-z 0-9 _ -`")
            }
            Self::UnknownName => f.write_str("unknown name"),
            Self::NoFreeSlot => {
                write!(f, "more than {CUSTOM_CAPACITY} custom expressions")
            }
            Self::ReservedBits => f.write_str("reserved bits set"),
            Self::NotUtf8 => f.write_str("not UTF-8"),
        }
    }
}

/// Why a message was rejected. One line, naming the JSON field (or byte offset).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WsError {
    #[error("message of {len} bytes is over the {MAX_MESSAGE}-byte limit")]
    Oversize { len: usize },
    #[error("`joints`: {count} joints, more than {MAX_JOINTS}")]
    TooManyJoints { count: usize },
    #[error("the skeleton has {joints} joints, a frame holds at most {MAX_JOINTS}")]
    SkeletonTooBig { joints: usize },
    #[error("{}{message}", field_prefix(.field.as_deref()))]
    Malformed {
        /// The JSON path of the fault (`joints.Hips[3]`), `None` at the top level.
        field: Option<String>,
        message: String,
    },
    #[error("unknown message type `{0}`")]
    UnknownType(String),
    #[error("`{field}`: {problem}")]
    InvalidValue { field: String, problem: Problem },
    #[error("binary pose truncated at byte {at}")]
    Truncated { at: usize },
    #[error("binary pose has {extra} bytes after its end")]
    TrailingBytes { extra: usize },
    #[error("not a binary pose (bad magic)")]
    BadMagic,
    #[error("binary pose version {0}, expected {POSE_VERSION}")]
    UnsupportedVersion(u8),
}

impl WsError {
    /// Which counter this rejection belongs to.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Oversize { .. } | Self::TooManyJoints { .. } | Self::SkeletonTooBig { .. } => {
                ErrorKind::Oversize
            }
            Self::InvalidValue { .. } => ErrorKind::InvalidValue,
            Self::Malformed { .. }
            | Self::UnknownType(_)
            | Self::Truncated { .. }
            | Self::TrailingBytes { .. }
            | Self::BadMagic
            | Self::UnsupportedVersion(_) => ErrorKind::Malformed,
        }
    }
}

/// "`field`: " before a message, or nothing.
fn field_prefix(field: Option<&str>) -> String {
    field.map(|f| format!("`{f}`: ")).unwrap_or_default()
}

fn invalid(field: impl Into<String>, problem: Problem) -> WsError {
    WsError::InvalidValue {
        field: field.into(),
        problem,
    }
}

/// `text` cut to at most `MAX_QUOTED` bytes on a character boundary, marked when cut.
fn quoted(text: &str) -> String {
    clipped(text, MAX_QUOTED)
}

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
fn clipped(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

// ---------------------------------------------------------------------------------
// Incoming: JSON plumbing.

/// A string from the message, borrowed when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(std::marker::PhantomData<&'a str>);
        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor(std::marker::PhantomData))
    }
}

/// A JSON object read as its entries, in order, keys borrowed when possible.
struct Pairs<'a, T>(Vec<(Text<'a>, T)>);

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Pairs<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor<'a, T>(std::marker::PhantomData<(&'a str, T)>);
        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for PairsVisitor<'a, T> {
            type Value = Pairs<'a, T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut pairs = Vec::new();
                while let Some(key) = map.next_key::<Text<'a>>()? {
                    pairs.push((key, map.next_value()?));
                }
                Ok(Pairs(pairs))
            }
        }
        deserializer.deserialize_map(PairsVisitor(std::marker::PhantomData))
    }
}

/// The `joints` of a skeleton message as sent: by name or in skeleton order, the
/// first `MAX_JOINTS` kept, every entry counted.
struct JointsWire<'a> {
    joints: Joints<'a>,
    count: usize,
}

/// Joint rotations, raw until checked, then normalized.
#[derive(Debug, Clone, PartialEq)]
enum Joints<'a> {
    ByName(Vec<(Cow<'a, str>, Quat)>),
    InOrder(Vec<Option<Quat>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for JointsWire<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct JointsVisitor<'a>(std::marker::PhantomData<&'a str>);
        impl<'de: 'a, 'a> Visitor<'de> for JointsVisitor<'a> {
            type Value = JointsWire<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of joint rotations or an array in skeleton order")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut joints = Vec::new();
                let mut count = 0;
                while let Some(Text(name)) = map.next_key::<Text<'a>>()? {
                    count += 1;
                    if count > MAX_JOINTS {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        let q: [f32; 4] = map.next_value()?;
                        joints.push((name, Quat::from_array(q)));
                    }
                }
                Ok(JointsWire {
                    joints: Joints::ByName(joints),
                    count,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut joints = Vec::new();
                let mut count = 0;
                loop {
                    if count >= MAX_JOINTS {
                        if seq.next_element::<IgnoredAny>()?.is_none() {
                            break;
                        }
                    } else {
                        match seq.next_element::<Option<[f32; 4]>>()? {
                            Some(q) => joints.push(q.map(Quat::from_array)),
                            None => break,
                        }
                    }
                    count += 1;
                }
                Ok(JointsWire {
                    joints: Joints::InOrder(joints),
                    count,
                })
            }
        }
        deserializer.deserialize_any(JointsVisitor(std::marker::PhantomData))
    }
}

/// Parses `text` as a `T`, naming the JSON path of whatever is wrong.
fn from_json<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, WsError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        WsError::Malformed {
            field: (path != ".").then(|| quoted(&path)),
            message: clipped(&err.into_inner().to_string(), MAX_PARSER_MESSAGE),
        }
    })?;
    deserializer.end().map_err(|err| WsError::Malformed {
        field: None,
        message: clipped(&err.to_string(), MAX_PARSER_MESSAGE),
    })?;
    Ok(value)
}

/// What every message has: its type, and a request's id.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    id: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SkeletonWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    #[serde(borrow)]
    performer: Text<'a>,
    #[serde(borrow)]
    skeleton: Text<'a>,
    #[serde(default)]
    frame: u64,
    #[serde(default)]
    time: f64,
    root_position: Option<[f32; 3]>,
    #[serde(borrow)]
    joints: JointsWire<'a>,
}

/// A device with position and rotation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceWire {
    position: [f32; 3],
    rotation: [f32; 4],
}

/// A tracked point whose rotation is optional (elbows, knees).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointWire {
    position: [f32; 3],
    rotation: Option<[f32; 4]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TrackersWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    #[serde(borrow)]
    performer: Text<'a>,
    #[serde(default)]
    time: f64,
    head: DeviceWire,
    left_hand: DeviceWire,
    right_hand: DeviceWire,
    hips: Option<DeviceWire>,
    chest: Option<DeviceWire>,
    left_foot: Option<DeviceWire>,
    right_foot: Option<DeviceWire>,
    left_elbow: Option<PointWire>,
    right_elbow: Option<PointWire>,
    left_knee: Option<PointWire>,
    right_knee: Option<PointWire>,
    left_hand_joints: Option<[[f32; 3]; HAND_JOINTS]>,
    right_hand_joints: Option<[[f32; 3]; HAND_JOINTS]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRecordingWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    id: Option<u64>,
    #[serde(borrow)]
    performer: Option<Text<'a>>,
    #[serde(borrow)]
    name: Option<Text<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StopRecordingWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    id: Option<u64>,
    #[serde(borrow)]
    performer: Option<Text<'a>>,
}

/// A request with nothing but its id (`listPerformers`, `status`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestWire {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    id: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrateWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    id: Option<u64>,
    #[serde(borrow)]
    performer: Text<'a>,
}

// ---------------------------------------------------------------------------------
// Incoming: checks.

/// What is wrong with incoming numbers: non-finite or over `MAX_MAGNITUDE`.
fn number_problem(values: &[f32]) -> Option<Problem> {
    if values.iter().any(|v| !v.is_finite()) {
        Some(Problem::NotFinite)
    } else if values.iter().any(|v| v.abs() > MAX_MAGNITUDE) {
        Some(Problem::TooLarge)
    } else {
        None
    }
}

fn check_position(field: impl FnOnce() -> String, p: [f32; 3]) -> Result<Vec3, WsError> {
    match number_problem(&p) {
        Some(problem) => Err(invalid(field(), problem)),
        None => Ok(Vec3::from_array(p)),
    }
}

/// A finite, bounded, non-zero quaternion, normalized.
fn check_rotation(field: impl FnOnce() -> String, q: Quat) -> Result<Quat, WsError> {
    // Used only once the components are known to be at most 1e4: their squares sum
    // to at most 4e8, no overflow.
    let length = q.length();
    let problem = number_problem(&q.to_array())
        .or_else(|| (length < 1e-6).then_some(Problem::ZeroQuaternion));
    match problem {
        Some(problem) => Err(invalid(field(), problem)),
        None => Ok(q / length),
    }
}

fn check_time(time: f64) -> Result<f64, WsError> {
    if time.is_finite() {
        Ok(time)
    } else {
        Err(invalid("time", Problem::NotFinite))
    }
}

fn check_performer(field: &str, name: &Text<'_>) -> Result<PerformerName, WsError> {
    PerformerName::new(&name.0).ok_or_else(|| invalid(field, Problem::NameLength))
}

fn check_recording_name(name: Text<'_>) -> Result<Cow<'_, str>, WsError> {
    let ok = (1..=MAX_NAME).contains(&name.0.len())
        && name
            .0
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(name.0)
    } else {
        Err(invalid("name", Problem::RecordingName))
    }
}

/// The field name of joint `key` in an error message (`joints.Hips`).
fn joint_field(key: &str) -> String {
    format!("joints.{}", quoted(key))
}

// ---------------------------------------------------------------------------------
// Incoming: the messages.

/// One checked incoming message.
#[derive(Debug, Clone, PartialEq)]
// A `TrackerFrame` is the biggest variant on purpose: it travels by value, no heap.
#[expect(clippy::large_enum_variant)]
pub enum ClientMessage<'a> {
    /// A frame of a streamed skeleton; see `SkeletonMessage::decode_into`.
    Skeleton(SkeletonMessage<'a>),
    /// A frame of VR devices, ready for the performer's ring.
    Trackers(TrackerFrame),
    /// Start recording `performer` (every performer when `None`) into a file named
    /// after `name` (the bridge picks one when `None`).
    StartRecording {
        id: Option<u64>,
        performer: Option<PerformerName>,
        /// 1 to `MAX_NAME` of `A-Z a-z 0-9 _ -`: safe as part of a file name.
        name: Option<Cow<'a, str>>,
    },
    /// Stop recording `performer` (every performer when `None`).
    StopRecording {
        id: Option<u64>,
        performer: Option<PerformerName>,
    },
    /// Ask for the `performers` reply.
    ListPerformers { id: Option<u64> },
    /// Ask for the `status` reply.
    Status { id: Option<u64> },
    /// Calibrate `performer` from the pose it holds now (a T-pose).
    Calibrate {
        id: Option<u64>,
        performer: PerformerName,
    },
}

impl ClientMessage<'_> {
    /// The client's request id, to echo in the reply (`None` for frames).
    #[must_use]
    pub fn id(&self) -> Option<u64> {
        match self {
            Self::Skeleton(_) | Self::Trackers(_) => None,
            Self::StartRecording { id, .. }
            | Self::StopRecording { id, .. }
            | Self::ListPerformers { id }
            | Self::Status { id }
            | Self::Calibrate { id, .. } => *id,
        }
    }
}

/// A checked `skeleton` message whose joints still need the performer's skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct SkeletonMessage<'a> {
    performer: PerformerName,
    skeleton: Cow<'a, str>,
    frame: u64,
    time: f64,
    root_position: Option<Vec3>,
    joints: Joints<'a>,
}

/// What `SkeletonMessage::decode_into` did with the joints it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecodedJoints {
    /// Joints set in the frame.
    pub applied: usize,
    /// Joints the skeleton does not have (by name, or past its end in skeleton order):
    /// add these to the unknown-joint counter.
    pub unknown: usize,
}

impl SkeletonMessage<'_> {
    /// Who sent the frame.
    #[must_use]
    pub fn performer(&self) -> PerformerName {
        self.performer
    }

    /// The name of the skeleton the frame's joints belong to (`lab19`).
    #[must_use]
    pub fn skeleton(&self) -> &str {
        &self.skeleton
    }

    /// Fills `frame` (all of it: joints not sent are absent) from this message,
    /// matching joints against `skeleton`, the one `self.skeleton()` names.
    pub fn decode_into(
        &self,
        skeleton: &Skeleton,
        frame: &mut JointFrame,
    ) -> Result<DecodedJoints, WsError> {
        let joints = skeleton.joints();
        if joints.len() > MAX_JOINTS {
            return Err(WsError::SkeletonTooBig {
                joints: joints.len(),
            });
        }
        *frame = JointFrame::new(self.performer);
        frame.frame = self.frame;
        frame.time = self.time;
        frame.root_position = self.root_position;
        // At most MAX_JOINTS (128): fits.
        frame.joint_count = joints.len() as u16;
        let mut decoded = DecodedJoints::default();
        match &self.joints {
            Joints::ByName(named) => {
                for (i, (name, rotation)) in named.iter().enumerate() {
                    // Senders usually list joints in skeleton order: try that first.
                    let index = match joints.get(i) {
                        Some(joint) if joint.name == *name => Some(i),
                        _ => skeleton.find(name),
                    };
                    match index {
                        Some(j) => {
                            frame.set(j, *rotation);
                            decoded.applied += 1;
                        }
                        None => decoded.unknown += 1,
                    }
                }
            }
            Joints::InOrder(list) => {
                for (j, rotation) in list.iter().enumerate() {
                    let Some(rotation) = rotation else { continue };
                    if j < joints.len() {
                        frame.set(j, *rotation);
                        decoded.applied += 1;
                    } else {
                        decoded.unknown += 1;
                    }
                }
            }
        }
        Ok(decoded)
    }
}

/// Parses and checks one incoming text message.
pub fn parse(text: &str) -> Result<ClientMessage<'_>, WsError> {
    if text.len() > MAX_MESSAGE {
        return Err(WsError::Oversize { len: text.len() });
    }
    let envelope: Envelope<'_> = from_json(text)?;
    match &*envelope.kind.0 {
        "skeleton" => parse_skeleton(from_json(text)?).map(ClientMessage::Skeleton),
        "trackers" => parse_trackers(from_json(text)?).map(ClientMessage::Trackers),
        "startRecording" => {
            let wire: StartRecordingWire<'_> = from_json(text)?;
            Ok(ClientMessage::StartRecording {
                id: wire.id,
                performer: wire
                    .performer
                    .map(|p| check_performer("performer", &p))
                    .transpose()?,
                name: wire.name.map(check_recording_name).transpose()?,
            })
        }
        "stopRecording" => {
            let wire: StopRecordingWire<'_> = from_json(text)?;
            Ok(ClientMessage::StopRecording {
                id: wire.id,
                performer: wire
                    .performer
                    .map(|p| check_performer("performer", &p))
                    .transpose()?,
            })
        }
        "listPerformers" => {
            let wire: RequestWire = from_json(text)?;
            Ok(ClientMessage::ListPerformers { id: wire.id })
        }
        "status" => {
            let wire: RequestWire = from_json(text)?;
            Ok(ClientMessage::Status { id: wire.id })
        }
        "calibrate" => {
            let wire: CalibrateWire<'_> = from_json(text)?;
            Ok(ClientMessage::Calibrate {
                id: wire.id,
                performer: check_performer("performer", &wire.performer)?,
            })
        }
        other => Err(WsError::UnknownType(quoted(other))),
    }
}

/// The `id` of a request that `parse` rejected, when it can still be read, so the
/// `error` reply can echo it.
#[must_use]
pub fn request_id(text: &str) -> Option<u64> {
    if text.len() > MAX_MESSAGE {
        return None;
    }
    from_json::<Envelope<'_>>(text).ok()?.id
}

fn parse_skeleton(wire: SkeletonWire<'_>) -> Result<SkeletonMessage<'_>, WsError> {
    let performer = check_performer("performer", &wire.performer)?;
    if !(1..=MAX_NAME).contains(&wire.skeleton.0.len()) {
        return Err(invalid("skeleton", Problem::NameLength));
    }
    if wire.joints.count > MAX_JOINTS {
        return Err(WsError::TooManyJoints {
            count: wire.joints.count,
        });
    }
    let root_position = wire
        .root_position
        .map(|p| check_position(|| "rootPosition".into(), p))
        .transpose()?;
    let mut joints = wire.joints.joints;
    match &mut joints {
        Joints::ByName(named) => {
            for (name, rotation) in named.iter_mut() {
                *rotation = check_rotation(|| joint_field(name), *rotation)?;
            }
        }
        Joints::InOrder(list) => {
            for (j, rotation) in list.iter_mut().enumerate() {
                if let Some(rotation) = rotation {
                    *rotation = check_rotation(|| format!("joints[{j}]"), *rotation)?;
                }
            }
        }
    }
    Ok(SkeletonMessage {
        performer,
        skeleton: wire.skeleton.0,
        frame: wire.frame,
        time: check_time(wire.time)?,
        root_position,
        joints,
    })
}

fn parse_trackers(wire: TrackersWire<'_>) -> Result<TrackerFrame, WsError> {
    let mut frame = TrackerFrame::new(check_performer("performer", &wire.performer)?);
    frame.time = check_time(wire.time)?;
    let full = |d: DeviceWire| PointWire {
        position: d.position,
        rotation: Some(d.rotation),
    };
    let points = [
        (TrackedPoint::Head, Some(full(wire.head))),
        (TrackedPoint::LeftHand, Some(full(wire.left_hand))),
        (TrackedPoint::RightHand, Some(full(wire.right_hand))),
        (TrackedPoint::Hips, wire.hips.map(full)),
        (TrackedPoint::Chest, wire.chest.map(full)),
        (TrackedPoint::LeftFoot, wire.left_foot.map(full)),
        (TrackedPoint::RightFoot, wire.right_foot.map(full)),
        (TrackedPoint::LeftElbow, wire.left_elbow),
        (TrackedPoint::RightElbow, wire.right_elbow),
        (TrackedPoint::LeftKnee, wire.left_knee),
        (TrackedPoint::RightKnee, wire.right_knee),
    ];
    for (point, sent) in points {
        let Some(sent) = sent else { continue };
        let position = check_position(|| format!("{}.position", point.name()), sent.position)?;
        let rotation = match sent.rotation {
            Some(q) => {
                check_rotation(|| format!("{}.rotation", point.name()), Quat::from_array(q))?
            }
            None => Quat::IDENTITY,
        };
        frame.set(point, DevicePose::new(position, rotation));
    }
    let hands = [
        ("leftHandJoints", wire.left_hand_joints),
        ("rightHandJoints", wire.right_hand_joints),
    ];
    for (slot, (field, sent)) in frame.hand_joints.iter_mut().zip(hands) {
        let Some(sent) = sent else { continue };
        let mut joints = [Vec3::ZERO; HAND_JOINTS];
        for (i, (joint, p)) in joints.iter_mut().zip(sent).enumerate() {
            *joint = check_position(|| format!("{field}[{i}]"), p)?;
        }
        *slot = Some(joints);
    }
    Ok(frame)
}

// ---------------------------------------------------------------------------------
// Outgoing: the pose.

/// What a pose message carries besides the pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseHeader {
    pub performer: PerformerName,
    /// The bridge's frame counter for this performer's output.
    pub seq: u64,
    /// The pose's time, seconds (the source's clock as the bridge sees it).
    pub time: f64,
}

/// The custom expressions a pose sends: set in the pose, named in `custom`, and
/// with a name of at most `MAX_EXPRESSION_NAME` bytes.
fn sent_customs<'a>(
    pose: &'a HumanoidPose,
    custom: &'a CustomNames,
) -> impl Iterator<Item = (&'a str, f32)> + 'a {
    (0..CUSTOM_CAPACITY).filter_map(|slot| {
        let weight = pose.expressions.custom(slot)?;
        let name = custom.name(slot)?;
        (name.len() <= MAX_EXPRESSION_NAME).then_some((name, weight))
    })
}

/// One point of a `source` message: a joint of a streamed skeleton (with its
/// parent's index among the points) or a tracked device (no parent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourcePoint<'a> {
    pub name: &'a str,
    pub parent: Option<usize>,
    pub position: Vec3,
}

/// Writes a `source` message into `out` (cleared first): where a performer's
/// source is, for clients that asked with `?sources=true`. `skeleton` names a
/// streamed skeleton; `None` for tracker sources.
pub fn encode_source_json<'a>(
    performer: PerformerName,
    seq: u64,
    skeleton: Option<&str>,
    points: impl Iterator<Item = SourcePoint<'a>>,
    out: &mut String,
) {
    out.clear();
    // Writing into a `String` cannot fail.
    let _ = write_source_json(performer, seq, skeleton, points, out);
}

fn write_source_json<'a>(
    performer: PerformerName,
    seq: u64,
    skeleton: Option<&str>,
    points: impl Iterator<Item = SourcePoint<'a>>,
    out: &mut String,
) -> fmt::Result {
    out.push_str("{\"type\":\"source\",\"performer\":");
    write_json_str(out, performer.as_str());
    write!(out, ",\"seq\":{seq},\"skeleton\":")?;
    match skeleton {
        Some(name) => write_json_str(out, name),
        None => out.push_str("null"),
    }
    out.push_str(",\"points\":[");
    for (i, point) in points.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_json_str(out, point.name);
        match point.parent {
            Some(p) => write!(out, ",\"parent\":{p}")?,
            None => out.push_str(",\"parent\":null"),
        }
        out.push_str(",\"position\":");
        write_f32s(out, &point.position.to_array())?;
        out.push('}');
    }
    out.push_str("]}");
    Ok(())
}

/// Writes `pose` as a `pose` JSON message into `out` (cleared first). Allocates only
/// while `out` grows; a reused `String` stops growing after the largest pose.
pub fn encode_pose_json(
    header: &PoseHeader,
    pose: &HumanoidPose,
    custom: &CustomNames,
    out: &mut String,
) {
    out.clear();
    // Writing into a `String` cannot fail.
    let _ = write_pose_json(header, pose, custom, out);
}

fn write_pose_json(
    header: &PoseHeader,
    pose: &HumanoidPose,
    custom: &CustomNames,
    out: &mut String,
) -> fmt::Result {
    out.push_str("{\"type\":\"pose\",\"performer\":");
    write_json_str(out, header.performer.as_str());
    write!(out, ",\"seq\":{},\"time\":", header.seq)?;
    write_number(out, header.time, header.time.is_finite())?;
    out.push_str(",\"hips\":");
    write_f32s(out, &pose.hips_position.to_array())?;
    out.push_str(",\"restHipsHeight\":");
    write_f32(out, pose.rest_hips_height)?;
    out.push_str(",\"bones\":{");
    for (i, (bone, rotation)) in pose.bones().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "\"{}\":", bone.name())?;
        write_f32s(out, &rotation.to_array())?;
    }
    out.push_str("},\"expressions\":{");
    for (i, (preset, weight)) in pose.expressions.presets().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "\"{}\":", preset.name())?;
        write_f32(out, weight)?;
    }
    out.push_str("},\"customExpressions\":{");
    for (i, (name, weight)) in sent_customs(pose, custom).enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_str(out, name);
        out.push(':');
        write_f32(out, weight)?;
    }
    out.push_str("},\"lookAt\":");
    match pose.look_at {
        Some(look) => {
            out.push_str("{\"yaw\":");
            write_f32(out, look.yaw)?;
            out.push_str(",\"pitch\":");
            write_f32(out, look.pitch)?;
            out.push('}');
        }
        None => out.push_str("null"),
    }
    out.push('}');
    Ok(())
}

/// A finite number in its shortest round-trip form (`{:?}` writes `1.0`, `0.1`,
/// `1e-7`: all JSON numbers); a non-finite one as `null`.
fn write_number(out: &mut String, v: impl fmt::Debug, finite: bool) -> fmt::Result {
    if finite {
        write!(out, "{v:?}")
    } else {
        out.push_str("null");
        Ok(())
    }
}

fn write_f32(out: &mut String, v: f32) -> fmt::Result {
    write_number(out, v, v.is_finite())
}

fn write_f32s(out: &mut String, values: &[f32]) -> fmt::Result {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_f32(out, *v)?;
    }
    out.push(']');
    Ok(())
}

/// A JSON string literal, escaped.
fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `pose` in the binary form (layout in `docs/websocket.md`) into `out`
/// (cleared first). Allocates only while `out` grows.
pub fn encode_pose_binary(
    header: &PoseHeader,
    pose: &HumanoidPose,
    custom: &CustomNames,
    out: &mut Vec<u8>,
) {
    out.clear();
    out.extend_from_slice(&POSE_MAGIC);
    out.push(POSE_VERSION);
    out.push(u8::from(pose.look_at.is_some()));
    let name = header.performer.as_str().as_bytes();
    // A `PerformerName` holds at most MAX_NAME (32) bytes.
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(&header.seq.to_le_bytes());
    out.extend_from_slice(&header.time.to_le_bytes());
    out.extend_from_slice(&pose.present_mask().to_le_bytes());
    for v in pose.hips_position.to_array() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&pose.rest_hips_height.to_le_bytes());
    for (_, rotation) in pose.bones() {
        for v in rotation.to_array() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let preset_mask = pose
        .expressions
        .presets()
        .fold(0u32, |mask, (p, _)| mask | (1 << p as u32));
    out.extend_from_slice(&preset_mask.to_le_bytes());
    for (_, weight) in pose.expressions.presets() {
        out.extend_from_slice(&weight.to_le_bytes());
    }
    // At most CUSTOM_CAPACITY (16) customs, names at most 255 bytes: both fit a byte.
    out.push(sent_customs(pose, custom).count() as u8);
    for (name, weight) in sent_customs(pose, custom) {
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&weight.to_le_bytes());
    }
    if let Some(look) = pose.look_at {
        out.extend_from_slice(&look.yaw.to_le_bytes());
        out.extend_from_slice(&look.pitch.to_le_bytes());
    }
}

// ---------------------------------------------------------------------------------
// Outgoing: decoders for clients and tests.

// Pose floats are read as their JSON text and parsed by Rust's correctly rounded
// `str::parse`, so every decimal the encoder wrote gives back the same bits
// (serde_json's own float parsing is fast but not always correctly rounded).

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LookAtWire<'a> {
    #[serde(borrow)]
    yaw: &'a RawValue,
    #[serde(borrow)]
    pitch: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PoseWire<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    performer: Text<'a>,
    seq: u64,
    #[serde(borrow)]
    time: &'a RawValue,
    #[serde(borrow)]
    hips: [&'a RawValue; 3],
    #[serde(borrow)]
    rest_hips_height: &'a RawValue,
    #[serde(borrow)]
    bones: Pairs<'a, [&'a RawValue; 4]>,
    #[serde(borrow)]
    expressions: Pairs<'a, &'a RawValue>,
    #[serde(borrow)]
    custom_expressions: Pairs<'a, &'a RawValue>,
    #[serde(borrow)]
    look_at: Option<LookAtWire<'a>>,
}

/// A finite JSON number, parsed exactly from its text.
fn exact<T: std::str::FromStr + Into<f64> + Copy>(
    field: impl FnOnce() -> String,
    raw: &RawValue,
) -> Result<T, WsError> {
    match raw.get().parse::<T>() {
        Ok(v) if v.into().is_finite() => Ok(v),
        _ => Err(invalid(field(), Problem::NotFinite)),
    }
}

/// Several finite JSON numbers, each parsed exactly (`field[i]` in errors).
fn exact_f32s<const N: usize>(
    field: impl Fn() -> String,
    raw: [&RawValue; N],
) -> Result<[f32; N], WsError> {
    let mut out = [0.0; N];
    for (i, r) in raw.iter().enumerate() {
        out[i] = exact(|| format!("{}[{i}]", field()), r)?;
    }
    Ok(out)
}

/// A decoded rotation, kept bit for bit; only non-finite values are refused.
fn finite_rotation(field: impl FnOnce() -> String, q: [f32; 4]) -> Result<Quat, WsError> {
    if q.iter().all(|v| v.is_finite()) {
        Ok(Quat::from_array(q))
    } else {
        Err(invalid(field(), Problem::NotFinite))
    }
}

/// Refuses a binary pose whose time, hips or lookAt is not finite (rotations are
/// checked as they are read).
fn check_decoded(header: &PoseHeader, pose: &HumanoidPose) -> Result<(), WsError> {
    let look = pose.look_at.unwrap_or_default();
    let fields = [
        ("time", header.time.is_finite()),
        ("hips", pose.hips_position.is_finite()),
        ("restHipsHeight", pose.rest_hips_height.is_finite()),
        ("lookAt", look.yaw.is_finite() && look.pitch.is_finite()),
    ];
    match fields.iter().find(|(_, finite)| !finite) {
        Some((field, _)) => Err(invalid(*field, Problem::NotFinite)),
        None => Ok(()),
    }
}

/// Interns a custom expression name and sets its weight.
fn set_custom(
    pose: &mut HumanoidPose,
    custom: &mut CustomNames,
    name: &str,
    weight: f32,
) -> Result<(), WsError> {
    let slot = custom
        .slot_or_insert(name)
        .ok_or_else(|| invalid("customExpressions", Problem::NoFreeSlot))?;
    pose.expressions.set_custom(slot, weight);
    Ok(())
}

/// Decodes a `pose` JSON message; custom expression names are interned in `custom`.
pub fn decode_pose_json(
    text: &str,
    custom: &mut CustomNames,
) -> Result<(PoseHeader, HumanoidPose), WsError> {
    let wire: PoseWire<'_> = from_json(text)?;
    if wire.kind.0 != "pose" {
        return Err(WsError::UnknownType(quoted(&wire.kind.0)));
    }
    let header = PoseHeader {
        performer: check_performer("performer", &wire.performer)?,
        seq: wire.seq,
        time: exact(|| "time".into(), wire.time)?,
    };
    let mut pose = HumanoidPose::default();
    pose.hips_position = Vec3::from_array(exact_f32s(|| "hips".into(), wire.hips)?);
    pose.rest_hips_height = exact(|| "restHipsHeight".into(), wire.rest_hips_height)?;
    if let Some(look) = wire.look_at {
        pose.look_at = Some(LookAt {
            yaw: exact(|| "lookAt.yaw".into(), look.yaw)?,
            pitch: exact(|| "lookAt.pitch".into(), look.pitch)?,
        });
    }
    for (Text(name), q) in wire.bones.0 {
        let bone: HumanBone = name
            .parse()
            .map_err(|_| invalid(format!("bones.{}", quoted(&name)), Problem::UnknownName))?;
        let q = exact_f32s(|| format!("bones.{name}"), q)?;
        pose.set_rotation(bone, Quat::from_array(q));
    }
    for (Text(name), weight) in wire.expressions.0 {
        let field = || format!("expressions.{}", quoted(&name));
        let preset: Preset = name
            .parse()
            .map_err(|()| invalid(field(), Problem::UnknownName))?;
        pose.expressions.set_preset(preset, exact(field, weight)?);
    }
    for (Text(name), weight) in wire.custom_expressions.0 {
        let weight = exact(|| format!("customExpressions.{}", quoted(&name)), weight)?;
        set_custom(&mut pose, custom, &name, weight)?;
    }
    Ok((header, pose))
}

/// Reads the binary layout front to back.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WsError> {
        let end = self.at.saturating_add(n);
        let taken = self.bytes.get(self.at..end).ok_or(WsError::Truncated {
            at: self.bytes.len(),
        })?;
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WsError> {
        let at = self.at;
        self.take(N)?
            .try_into()
            .map_err(|_| WsError::Truncated { at })
    }

    fn u8(&mut self) -> Result<u8, WsError> {
        Ok(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, WsError> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, WsError> {
        self.array().map(u64::from_le_bytes)
    }

    fn f32(&mut self) -> Result<f32, WsError> {
        self.array().map(f32::from_le_bytes)
    }

    fn f64(&mut self) -> Result<f64, WsError> {
        self.array().map(f64::from_le_bytes)
    }

    fn str(&mut self, n: usize, field: &str) -> Result<&'a str, WsError> {
        std::str::from_utf8(self.take(n)?).map_err(|_| invalid(field, Problem::NotUtf8))
    }
}

/// Decodes a binary pose; custom expression names are interned in `custom`.
pub fn decode_pose_binary(
    bytes: &[u8],
    custom: &mut CustomNames,
) -> Result<(PoseHeader, HumanoidPose), WsError> {
    let mut r = Reader { bytes, at: 0 };
    if r.array::<4>()? != POSE_MAGIC {
        return Err(WsError::BadMagic);
    }
    let version = r.u8()?;
    if version != POSE_VERSION {
        return Err(WsError::UnsupportedVersion(version));
    }
    let flags = r.u8()?;
    if flags & !1 != 0 {
        return Err(invalid("flags", Problem::ReservedBits));
    }
    let name_len = usize::from(r.u8()?);
    let performer = PerformerName::new(r.str(name_len, "performer")?)
        .ok_or_else(|| invalid("performer", Problem::NameLength))?;
    let header = PoseHeader {
        performer,
        seq: r.u64()?,
        time: r.f64()?,
    };
    let bone_mask = r.u64()?;
    if bone_mask >> BONE_COUNT != 0 {
        return Err(invalid("boneMask", Problem::ReservedBits));
    }
    let mut pose = HumanoidPose::default();
    pose.hips_position = Vec3::new(r.f32()?, r.f32()?, r.f32()?);
    pose.rest_hips_height = r.f32()?;
    for bone in ALL {
        if bone_mask & (1 << bone.index()) != 0 {
            let q = [r.f32()?, r.f32()?, r.f32()?, r.f32()?];
            pose.set_rotation(bone, finite_rotation(|| bone.name().into(), q)?);
        }
    }
    let preset_mask = r.u32()?;
    if preset_mask >> PRESET_COUNT != 0 {
        return Err(invalid("presetMask", Problem::ReservedBits));
    }
    for preset in Preset::all() {
        if preset_mask & (1 << preset as u32) != 0 {
            pose.expressions.set_preset(preset, r.f32()?);
        }
    }
    let customs = r.u8()?;
    for _ in 0..customs {
        let len = usize::from(r.u8()?);
        let name = r.str(len, "customExpressions")?;
        let weight = r.f32()?;
        set_custom(&mut pose, custom, name, weight)?;
    }
    if flags & 1 != 0 {
        pose.look_at = Some(LookAt {
            yaw: r.f32()?,
            pitch: r.f32()?,
        });
    }
    check_decoded(&header, &pose)?;
    match bytes.len() - r.at {
        0 => Ok((header, pose)),
        extra => Err(WsError::TrailingBytes { extra }),
    }
}

// ---------------------------------------------------------------------------------
// Outgoing: replies.

/// One performer in the `performers` reply.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PerformerSummary<'a> {
    pub name: &'a str,
    /// Where its frames come from: `vmc`, `osc`, `websocket`, `trackers`, `replay`,
    /// `demo`.
    pub source: &'a str,
    /// The source skeleton's name, for skeleton sources.
    pub skeleton: Option<&'a str>,
    /// Frames received so far.
    pub frames: u64,
    /// Seconds since the last frame arrived.
    pub since_last_frame: f64,
    /// Whether it is being recorded.
    pub recording: bool,
    /// Whether a T-pose calibration is in use (tracker sources only).
    pub calibrated: bool,
}

/// A recording that `startRecording` started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StartedRecording<'a> {
    pub performer: &'a str,
    /// The file being written, as the bridge names it.
    pub file: &'a str,
}

/// A recording that `stopRecording` finished.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StoppedRecording<'a> {
    pub performer: &'a str,
    pub file: &'a str,
    /// Frames written.
    pub frames: u64,
}

/// A reply to a request, echoing its `id` (`null` when it had none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Reply<'a> {
    /// To `listPerformers`.
    Performers {
        id: Option<u64>,
        performers: &'a [PerformerSummary<'a>],
    },
    /// To `startRecording`: one entry per performer now recording.
    RecordingStarted {
        id: Option<u64>,
        recordings: &'a [StartedRecording<'a>],
    },
    /// To `stopRecording`: one entry per file finished.
    RecordingStopped {
        id: Option<u64>,
        recordings: &'a [StoppedRecording<'a>],
    },
    /// To `calibrate`: `saved` names the configuration file the calibration was
    /// written into (`null` when the bridge runs without one, or writing failed:
    /// `saveError` says why).
    #[serde(rename_all = "camelCase")]
    Calibrated {
        id: Option<u64>,
        performer: &'a str,
        saved: Option<&'a str>,
        save_error: Option<&'a str>,
    },
    /// To `status`: whatever the bridge reports about itself.
    Status {
        id: Option<u64>,
        status: &'a serde_json::Value,
    },
    /// To a request that failed (or could not be read: `id` is then `null`).
    Error { id: Option<u64>, message: &'a str },
}

impl Reply<'_> {
    /// The reply as a JSON text message.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Strings, integers, booleans, floats (non-finite ones become `null`) and a
        // `Value` (string keys only): serializing cannot fail.
        serde_json::to_string(self).expect("replies always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::skeleton::builtin::LAB19_JSON;
    use crate::skeleton::{Joint, Transform};

    fn lab19() -> Skeleton {
        embedded_rig("lab19", LAB19_JSON).skeleton
    }

    /// A one-line account of a parsed message, decoding skeleton frames against lab19.
    fn summary(msg: &ClientMessage<'_>) -> String {
        match msg {
            ClientMessage::Skeleton(m) => {
                let mut frame = JointFrame::new(m.performer());
                let skeleton = lab19();
                let decoded = m.decode_into(&skeleton, &mut frame).unwrap();
                let present: Vec<&str> = (0..skeleton.len())
                    .filter(|j| frame.has(*j))
                    .map(|j| skeleton.joints()[j].name.as_str())
                    .collect();
                let joints = match present.len() {
                    n if n == skeleton.len() => "all".to_owned(),
                    _ => format!("{present:?}"),
                };
                format!(
                    "skeleton {} {} frame={} time={} root={:?} joints={joints} unknown={}",
                    frame.performer,
                    m.skeleton(),
                    frame.frame,
                    frame.time,
                    frame.root_position.map(|p| p.to_array()),
                    decoded.unknown
                )
            }
            ClientMessage::Trackers(f) => {
                let points: Vec<&str> = TrackedPoint::ALL
                    .into_iter()
                    .filter(|p| f.point(*p).is_some())
                    .map(TrackedPoint::name)
                    .collect();
                format!("trackers {} time={} {points:?}", f.performer, f.time)
            }
            other => format!("{other:?}"),
        }
    }

    const HANDS: &str = r#""head":{"position":[0,1.6,0],"rotation":[0,0,0,1]},"leftHand":{"position":[0.8,1.4,0],"rotation":[0,0,0,1]},"rightHand":{"position":[-0.8,1.4,0],"rotation":[0,0,0,1]}"#;

    #[test]
    fn valid_messages_parse() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"type":"skeleton","performer":"alice","skeleton":"lab19","joints":{"Hips":[0,0,0,1],"Chest":[0,0,0,2]}}"#,
                r#"skeleton alice lab19 frame=0 time=0 root=None joints=["Hips", "Chest"] unknown=0"#,
            ),
            (
                r#"{"joints":{"Head":[0,0,0,1],"Tail":[0,0,0,1]},"time":1.5,"frame":7,"rootPosition":[0,0.9,0.1],"skeleton":"lab19","performer":"bob","type":"skeleton"}"#,
                r#"skeleton bob lab19 frame=7 time=1.5 root=Some([0.0, 0.9, 0.1]) joints=["Head"] unknown=1"#,
            ),
            (
                r#"{"type":"skeleton","performer":"a","skeleton":"lab19","joints":[[0,0,0,1],null,[1,0,0,0]]}"#,
                r#"skeleton a lab19 frame=0 time=0 root=None joints=["Hips", "Chest2"] unknown=0"#,
            ),
            (
                r#"{"type":"skeleton","performer":"a","skeleton":"lab19","joints":{}}"#,
                "skeleton a lab19 frame=0 time=0 root=None joints=[] unknown=0",
            ),
            (
                r#"{"type":"skeleton","performer":"\u0061","skeleton":"lab19","joints":{"\u0048ips":[0,0,0,1]}}"#,
                r#"skeleton a lab19 frame=0 time=0 root=None joints=["Hips"] unknown=0"#,
            ),
            (
                &format!(
                    r#"{{"type":"skeleton","performer":"a","skeleton":"lab19","joints":[{}]}}"#,
                    ["[0,0,0,1]"; 21].join(",")
                ),
                "skeleton a lab19 frame=0 time=0 root=None joints=all unknown=2",
            ),
            (
                &format!(r#"{{"type":"trackers","performer":"vr",{HANDS}}}"#),
                r#"trackers vr time=0 ["head", "leftHand", "rightHand"]"#,
            ),
            (
                &format!(
                    r#"{{"type":"trackers","performer":"vr","time":2.5,{HANDS},"hips":{{"position":[0,1,0],"rotation":[0,1,0,0]}},"leftKnee":{{"position":[0.1,0.5,0]}}}}"#
                ),
                r#"trackers vr time=2.5 ["head", "leftHand", "rightHand", "hips", "leftKnee"]"#,
            ),
            (
                r#"{"type":"startRecording"}"#,
                "StartRecording { id: None, performer: None, name: None }",
            ),
            (
                r#"{"type":"startRecording","id":3,"performer":"alice","name":"take-01_b"}"#,
                r#"StartRecording { id: Some(3), performer: Some("alice"), name: Some("take-01_b") }"#,
            ),
            (
                r#"{"type":"stopRecording","id":4}"#,
                "StopRecording { id: Some(4), performer: None }",
            ),
            (
                r#"{"type":"listPerformers","id":5}"#,
                "ListPerformers { id: Some(5) }",
            ),
            (r#" {"type":"status"} "#, "Status { id: None }"),
            (
                r#"{"type":"calibrate","id":6,"performer":"vr"}"#,
                r#"Calibrate { id: Some(6), performer: "vr" }"#,
            ),
        ];
        for (text, expected) in cases {
            let msg = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(summary(&msg), *expected, "{text}");
        }
    }

    #[test]
    fn invalid_messages_are_rejected_naming_the_field() {
        use ErrorKind::{InvalidValue as Value, Malformed, Oversize};
        let skel = |rest: &str| {
            format!(r#"{{"type":"skeleton","performer":"a","skeleton":"lab19",{rest}}}"#)
        };
        let long = "x".repeat(MAX_NAME + 1);
        let cases: Vec<(String, ErrorKind, &str)> = vec![
            ("not json".into(), Malformed, "expected ident"),
            (r#"{"type":"skeleton""#.into(), Malformed, "EOF"),
            (r#"{"type":"status"} x"#.into(), Malformed, "trailing"),
            ("{}".into(), Malformed, "missing field `type`"),
            (r#"{"type":7}"#.into(), Malformed, "`type`"),
            (
                r#"{"type":"dance"}"#.into(),
                Malformed,
                "unknown message type `dance`",
            ),
            (r#"{"type":"status","id":-1}"#.into(), Malformed, "`id`"),
            (
                r#"{"type":"status","extra":1}"#.into(),
                Malformed,
                "unknown field `extra`",
            ),
            (
                skel(r#""joints":{"Hips":[0,0,1]}"#),
                Malformed,
                "`joints.Hips`",
            ),
            (
                skel(r#""joints":{"Hips":"up"}"#),
                Malformed,
                "`joints.Hips`",
            ),
            (skel(r#""joints":7"#), Malformed, "`joints`"),
            (skel(r#""frame":-1,"joints":{}"#), Malformed, "`frame`"),
            (
                skel(r#""joints":{"Hips":[0,0,0,1e400]}"#),
                Malformed,
                "`joints.Hips[3]`",
            ),
            (
                skel(r#""root":[0,0,0],"joints":{}"#),
                Malformed,
                "unknown field `root`",
            ),
            (
                r#"{"type":"skeleton","performer":"a","joints":{}}"#.into(),
                Malformed,
                "missing field `skeleton`",
            ),
            (
                skel(r#""joints":{"Hips":[0,0,0,0]}"#),
                Value,
                "`joints.Hips`: zero quaternion",
            ),
            (
                skel(r#""joints":[null,[0,0,0,1e-9]]"#),
                Value,
                "`joints[1]`: zero quaternion",
            ),
            (
                skel(r#""joints":{"Hips":[0,0,0,1e39]}"#),
                Value,
                "`joints.Hips`: not a finite number",
            ),
            (
                skel(r#""joints":{"Hips":[0,0,2e4,1]}"#),
                Value,
                "`joints.Hips`: magnitude",
            ),
            (
                skel(r#""rootPosition":[0,10001,0],"joints":{}"#),
                Value,
                "`rootPosition`: magnitude over 10000",
            ),
            (
                skel(r#""rootPosition":[0,-1e39,0],"joints":{}"#),
                Value,
                "`rootPosition`: not a finite number",
            ),
            (
                format!(
                    r#"{{"type":"skeleton","performer":"{long}","skeleton":"s","joints":{{}}}}"#
                ),
                Value,
                "`performer`: empty or longer than 32 bytes",
            ),
            (
                format!(
                    r#"{{"type":"skeleton","performer":"a","skeleton":"{long}","joints":{{}}}}"#
                ),
                Value,
                "`skeleton`",
            ),
            (
                r#"{"type":"calibrate","performer":""}"#.into(),
                Value,
                "`performer`: empty",
            ),
            (
                r#"{"type":"startRecording","name":"../etc/passwd"}"#.into(),
                Value,
                "`name`: not 1 to 32",
            ),
            (
                r#"{"type":"trackers","performer":"vr","time":1}"#.into(),
                Malformed,
                "missing field `head`",
            ),
            (
                format!(
                    r#"{{"type":"trackers","performer":"vr",{HANDS},"chest":{{"position":[0,1,0]}}}}"#
                ),
                Malformed,
                "missing field `rotation`",
            ),
            (
                format!(
                    r#"{{"type":"trackers","performer":"vr",{HANDS},"leftElbow":{{"position":[0,1,0],"rotation":[0,0,0,0]}}}}"#
                ),
                Value,
                "`leftElbow.rotation`: zero quaternion",
            ),
            (
                format!(
                    r#"{{"type":"trackers","performer":"vr",{HANDS},"rightFoot":{{"position":[1e5,0,0],"rotation":[0,0,0,1]}}}}"#
                ),
                Value,
                "`rightFoot.position`: magnitude",
            ),
            (
                skel(&format!(
                    r#""joints":[{}]"#,
                    ["null"; MAX_JOINTS + 1].join(",")
                )),
                Oversize,
                "129 joints, more than 128",
            ),
            (
                skel(&format!(
                    r#""joints":{{{}}}"#,
                    (0..200)
                        .map(|i| format!(r#""j{i}":[0,0,0,1]"#))
                        .collect::<Vec<_>>()
                        .join(",")
                )),
                Oversize,
                "200 joints",
            ),
            (
                format!(r#"{{"type":"status","pad":"{}"}}"#, " ".repeat(MAX_MESSAGE)),
                Oversize,
                "over the 65536-byte limit",
            ),
        ];
        for (text, kind, needle) in &cases {
            let err = parse(text).expect_err(&quoted(text));
            let message = err.to_string();
            assert_eq!(err.kind(), *kind, "{}: {message}", quoted(text));
            assert!(message.contains(needle), "{}: {message}", quoted(text));
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn long_client_text_is_cut_in_error_messages() {
        let long = "é".repeat(100);
        let err = parse(&format!(r#"{{"type":"{long}"}}"#)).unwrap_err();
        assert!(err.to_string().len() < 100, "{err}");
        let text = format!(
            r#"{{"type":"skeleton","performer":"a","skeleton":"s","joints":{{"{long}":[0,0,0,0]}}}}"#
        );
        let err = parse(&text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert!(err.to_string().len() < 120, "{err}");
    }

    #[test]
    fn request_ids_are_read_back_from_rejected_requests() {
        assert_eq!(request_id(r#"{"type":"calibrate","id":9}"#), Some(9));
        assert_eq!(request_id(r#"{"type":"dance","id":10,"x":[]}"#), Some(10));
        assert_eq!(request_id(r#"{"type":"status"}"#), None);
        assert_eq!(request_id("{"), None);
        let msg = parse(r#"{"type":"status","id":11}"#).unwrap();
        assert_eq!(msg.id(), Some(11));
    }

    #[test]
    fn rotations_are_normalized_and_frames_fully_replaced() {
        let skeleton = lab19();
        let text = r#"{"type":"skeleton","performer":"a","skeleton":"lab19","joints":{"Chest":[0,0,0,3],"LeftElbow":[0,3,0,4]}}"#;
        let ClientMessage::Skeleton(msg) = parse(text).unwrap() else {
            panic!("not a skeleton message");
        };
        let mut frame = JointFrame::new(PerformerName::new("old").unwrap());
        frame.set(0, Quat::from_rotation_x(1.0));
        let decoded = msg.decode_into(&skeleton, &mut frame).unwrap();
        assert_eq!(
            decoded,
            DecodedJoints {
                applied: 2,
                unknown: 0
            }
        );
        assert!(!frame.has(skeleton.find("Hips").unwrap()));
        assert_eq!(frame.performer.as_str(), "a");
        assert_eq!(usize::from(frame.joint_count), skeleton.len());
        let elbow = skeleton.find("LeftElbow").unwrap();
        assert!(frame.rotations[elbow].abs_diff_eq(Quat::from_xyzw(0.0, 0.6, 0.0, 0.8), 1e-6));
        assert_eq!(
            frame.rotations[skeleton.find("Chest").unwrap()],
            Quat::IDENTITY
        );
    }

    #[test]
    fn a_skeleton_too_big_for_a_frame_is_refused() {
        let joints = (0..=MAX_JOINTS)
            .map(|i| Joint {
                name: format!("j{i}"),
                parent: i.checked_sub(1),
                rest: Transform::from_translation(Vec3::Y),
                end: None,
            })
            .collect();
        let skeleton = Skeleton::new(joints).unwrap();
        let ClientMessage::Skeleton(msg) =
            parse(r#"{"type":"skeleton","performer":"a","skeleton":"big","joints":{}}"#).unwrap()
        else {
            panic!("not a skeleton message");
        };
        let mut frame = JointFrame::new(msg.performer());
        let err = msg.decode_into(&skeleton, &mut frame).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Oversize);
    }

    /// splitmix64: deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }

        /// In [lo, hi).
        fn float(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * (self.next() >> 40) as f32 / (1u64 << 24) as f32
        }

        /// Any finite f32, tiny and huge included, now and then.
        fn any_finite(&mut self) -> f32 {
            loop {
                let v = f32::from_bits(self.next() as u32);
                if v.is_finite() {
                    return v;
                }
            }
        }

        fn component(&mut self) -> f32 {
            if self.chance(10) {
                self.any_finite()
            } else {
                self.float(-1.0, 1.0)
            }
        }
    }

    const CUSTOM: [&str; 6] = [
        "smirk",
        "say \"cheese\"",
        "back\\slash",
        "tab\there\u{1}",
        "ünïcødé 表情",
        "wink",
    ];

    fn custom_names() -> CustomNames {
        let mut names = CustomNames::default();
        for name in CUSTOM {
            names.slot_or_insert(name);
        }
        names
    }

    fn random_pose(rng: &mut Rng, everything: bool) -> (PoseHeader, HumanoidPose) {
        let header = PoseHeader {
            performer: PerformerName::new(["alice", "b\"o\\b", "ü"][(rng.next() % 3) as usize])
                .unwrap(),
            seq: rng.next(),
            time: f64::from(rng.float(0.0, 1e5)) + f64::from(rng.float(0.0, 1.0)) * 1e-3,
        };
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::new(rng.component(), rng.float(0.0, 2.0), rng.component());
        pose.rest_hips_height = rng.float(0.5, 1.2);
        for bone in ALL {
            if everything || rng.chance(60) {
                let q = [0; 4].map(|_| rng.component());
                pose.set_rotation(bone, Quat::from_array(q));
            }
        }
        for preset in Preset::all() {
            if everything || rng.chance(30) {
                pose.expressions.set_preset(preset, rng.float(0.0, 1.0));
            }
        }
        for slot in 0..CUSTOM.len() {
            if everything || rng.chance(30) {
                pose.expressions.set_custom(slot, rng.float(0.0, 1.0));
            }
        }
        if everything || rng.chance(50) {
            pose.look_at = Some(LookAt {
                yaw: rng.component(),
                pitch: rng.component(),
            });
        }
        (header, pose)
    }

    /// Every float of a pose, as bits, with its presence: equal means bit-exact.
    fn bits(header: &PoseHeader, pose: &HumanoidPose) -> Vec<u64> {
        let mut out = vec![header.seq, header.time.to_bits(), pose.present_mask()];
        let f = |v: f32| u64::from(v.to_bits());
        out.extend(pose.hips_position.to_array().map(f));
        out.push(f(pose.rest_hips_height));
        for bone in ALL {
            out.extend(pose.rotation_or_identity(bone).to_array().map(f));
        }
        for preset in Preset::all() {
            out.push(pose.expressions.preset(preset).map_or(u64::MAX, f));
        }
        for slot in 0..CUSTOM_CAPACITY {
            out.push(pose.expressions.custom(slot).map_or(u64::MAX, f));
        }
        match pose.look_at {
            Some(l) => out.extend([f(l.yaw), f(l.pitch)]),
            None => out.push(u64::MAX),
        }
        out
    }

    #[test]
    fn poses_round_trip_bit_exact_through_json_and_binary() {
        let mut rng = Rng(7);
        let names = custom_names();
        let mut text = String::new();
        let mut bytes = Vec::new();
        for i in 0..2000 {
            let (header, pose) = random_pose(&mut rng, i % 10 == 0);
            let expected = bits(&header, &pose);

            encode_pose_json(&header, &pose, &names, &mut text);
            let mut json_names = names.clone();
            let (h, p) =
                decode_pose_json(&text, &mut json_names).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(h.performer, header.performer);
            assert_eq!(bits(&h, &p), expected, "{text}");
            assert_eq!(json_names, names);

            encode_pose_binary(&header, &pose, &names, &mut bytes);
            let mut binary_names = names.clone();
            let (h, p) = decode_pose_binary(&bytes, &mut binary_names).unwrap();
            assert_eq!(h.performer, header.performer);
            assert_eq!(bits(&h, &p), expected);
            assert_eq!(binary_names, names);
        }
    }

    #[test]
    fn a_fresh_decoder_learns_custom_names_by_name() {
        let names = custom_names();
        let mut pose = HumanoidPose::default();
        pose.expressions.set_custom(4, 0.25);
        let header = PoseHeader {
            performer: PerformerName::new("a").unwrap(),
            seq: 1,
            time: 0.5,
        };
        let mut text = String::new();
        let mut bytes = Vec::new();
        encode_pose_json(&header, &pose, &names, &mut text);
        encode_pose_binary(&header, &pose, &names, &mut bytes);
        for decoded in [
            decode_pose_json(&text, &mut CustomNames::default()),
            decode_pose_binary(&bytes, &mut CustomNames::default()),
        ] {
            let (_, back) = decoded.unwrap();
            assert_eq!(back.expressions.custom(0), Some(0.25));
            assert_eq!(back.expressions.custom(1), None);
        }
    }

    #[test]
    fn over_long_custom_names_are_not_sent() {
        let mut names = CustomNames::default();
        names.slot_or_insert(&"n".repeat(MAX_EXPRESSION_NAME + 1));
        names.slot_or_insert("ok");
        let mut pose = HumanoidPose::default();
        pose.expressions.set_custom(0, 1.0);
        pose.expressions.set_custom(1, 0.5);
        let header = PoseHeader {
            performer: PerformerName::new("a").unwrap(),
            seq: 0,
            time: 0.0,
        };
        let mut text = String::new();
        let mut bytes = Vec::new();
        encode_pose_json(&header, &pose, &names, &mut text);
        encode_pose_binary(&header, &pose, &names, &mut bytes);
        let json = decode_pose_json(&text, &mut CustomNames::default())
            .unwrap()
            .1;
        let binary = decode_pose_binary(&bytes, &mut CustomNames::default())
            .unwrap()
            .1;
        for back in [json, binary] {
            assert_eq!(back.expressions.custom(0), Some(0.5));
            assert_eq!(back.expressions.custom(1), None);
        }
    }

    #[test]
    fn pose_json_reads_back_with_plain_serde_json() {
        let mut rng = Rng(11);
        let names = custom_names();
        let mut text = String::new();
        for i in 0..200 {
            let (header, pose) = random_pose(&mut rng, i == 0);
            encode_pose_json(&header, &pose, &names, &mut text);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["type"], "pose");
            assert_eq!(v["performer"], header.performer.as_str());
            assert_eq!(v["seq"].as_u64(), Some(header.seq));
            let bones = v["bones"].as_object().unwrap();
            assert_eq!(bones.len(), pose.bones().count());
            for (bone, q) in pose.bones() {
                let sent: Vec<f32> = bones[bone.name()]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect();
                assert_eq!(sent, q.to_array(), "{bone}");
            }
            let expressions = v["expressions"].as_object().unwrap();
            assert_eq!(expressions.len(), pose.expressions.presets().count());
            let customs = v["customExpressions"].as_object().unwrap();
            for (slot, name) in CUSTOM.iter().enumerate() {
                let sent = customs.get(*name).and_then(serde_json::Value::as_f64);
                assert_eq!(sent.map(|w| w as f32), pose.expressions.custom(slot));
            }
            assert_eq!(v["lookAt"].is_null(), pose.look_at.is_none());
        }
    }

    #[test]
    fn pose_encoders_stop_allocating_once_warmed_up() {
        let mut rng = Rng(3);
        let names = custom_names();
        let poses: Vec<_> = (0..300)
            .map(|i| random_pose(&mut rng, i % 7 == 0))
            .collect();
        let mut text = String::new();
        let mut bytes = Vec::new();
        for (header, pose) in &poses {
            encode_pose_json(header, pose, &names, &mut text);
            encode_pose_binary(header, pose, &names, &mut bytes);
        }
        let (text_capacity, text_ptr) = (text.capacity(), text.as_ptr());
        let (bytes_capacity, bytes_ptr) = (bytes.capacity(), bytes.as_ptr());
        for _ in 0..10 {
            for (header, pose) in poses.iter().rev() {
                encode_pose_json(header, pose, &names, &mut text);
                encode_pose_binary(header, pose, &names, &mut bytes);
                assert_eq!((text.capacity(), text.as_ptr()), (text_capacity, text_ptr));
                assert_eq!(
                    (bytes.capacity(), bytes.as_ptr()),
                    (bytes_capacity, bytes_ptr)
                );
            }
        }
    }

    #[test]
    fn the_binary_layout_is_as_documented() {
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::new(0.0, 1.0, 0.0);
        pose.rest_hips_height = 0.9;
        pose.look_at = Some(LookAt {
            yaw: 0.5,
            pitch: -0.25,
        });
        pose.set_rotation(HumanBone::Spine, Quat::IDENTITY);
        pose.expressions.set_preset(Preset::Aa, 0.5);
        let names = custom_names();
        pose.expressions.set_custom(0, 1.0);
        let header = PoseHeader {
            performer: PerformerName::new("al").unwrap(),
            seq: 258,
            time: 2.0,
        };
        let mut bytes = Vec::new();
        encode_pose_binary(&header, &pose, &names, &mut bytes);
        let mut expected = b"MBPO\x01\x01\x02al".to_vec();
        expected.extend(258u64.to_le_bytes());
        expected.extend(2.0f64.to_le_bytes());
        expected.extend(2u64.to_le_bytes()); // bit 1: spine
        for v in [0.0f32, 1.0, 0.0, 0.9, 0.0, 0.0, 0.0, 1.0] {
            expected.extend(v.to_le_bytes());
        }
        expected.extend((1u32 << 5).to_le_bytes()); // preset 5: aa
        expected.extend(0.5f32.to_le_bytes());
        expected.extend(b"\x01\x05smirk");
        expected.extend(1.0f32.to_le_bytes());
        expected.extend(0.5f32.to_le_bytes());
        expected.extend((-0.25f32).to_le_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(Preset::Aa as usize, 5);
        assert_eq!(HumanBone::Spine.index(), 1);
        assert_eq!(PRESET_COUNT, 18);
    }

    #[test]
    fn bad_binary_poses_are_rejected() {
        let mut pose = HumanoidPose::default();
        pose.set_rotation(HumanBone::Hips, Quat::IDENTITY);
        let header = PoseHeader {
            performer: PerformerName::new("a").unwrap(),
            seq: 0,
            time: 0.0,
        };
        let mut good = Vec::new();
        encode_pose_binary(&header, &pose, &CustomNames::default(), &mut good);
        let with = |at: usize, byte: u8| {
            let mut b = good.clone();
            b[at] = byte;
            b
        };
        let mut nan = good.clone();
        let hips_x = 7 + 1 + 8 + 8 + 8;
        nan[hips_x..hips_x + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (Vec::new(), "truncated at byte 0"),
            (good[..good.len() - 1].to_vec(), "truncated"),
            ([good.as_slice(), &[0]].concat(), "1 bytes after its end"),
            (with(0, b'X'), "bad magic"),
            (with(4, 2), "version 2"),
            (with(5, 2), "`flags`: reserved bits"),
            (with(6, 0), "`performer`: empty"),
            (with(7, 0xff), "`performer`: not UTF-8"),
            (with(7 + 1 + 8 + 8 + 7, 0x80), "`boneMask`: reserved bits"),
            (nan, "`hips`: not a finite number"),
        ];
        for (bytes, needle) in cases {
            let err = decode_pose_binary(&bytes, &mut CustomNames::default()).unwrap_err();
            assert!(err.to_string().contains(needle), "{needle}: {err}");
        }
    }

    #[test]
    fn bad_pose_json_is_rejected() {
        let cases = [
            (r#"{"type":"skeleton"}"#, "missing field"),
            (
                r#"{"type":"posture","performer":"a","seq":0,"time":0,"hips":[0,0,0],"restHipsHeight":1,"bones":{},"expressions":{},"customExpressions":{},"lookAt":null}"#,
                "unknown message type `posture`",
            ),
            (
                r#"{"type":"pose","performer":"a","seq":0,"time":0,"hips":[0,0,0],"restHipsHeight":1,"bones":{"tail":[0,0,0,1]},"expressions":{},"customExpressions":{},"lookAt":null}"#,
                "`bones.tail`: unknown name",
            ),
            (
                r#"{"type":"pose","performer":"a","seq":0,"time":0,"hips":[0,0,0],"restHipsHeight":1,"bones":{},"expressions":{"grin":1},"customExpressions":{},"lookAt":null}"#,
                "`expressions.grin`: unknown name",
            ),
            (
                r#"{"type":"pose","performer":"a","seq":0,"time":0,"hips":[0,null,0],"restHipsHeight":1,"bones":{},"expressions":{},"customExpressions":{},"lookAt":null}"#,
                "`hips[1]`: not a finite number",
            ),
        ];
        for (text, needle) in cases {
            let err = decode_pose_json(text, &mut CustomNames::default()).unwrap_err();
            assert!(err.to_string().contains(needle), "{needle}: {err}");
        }
    }

    #[test]
    fn tracked_hand_joints_are_read_and_checked() {
        let joints: Vec<String> = (0..25)
            .map(|i| format!("[{},1.4,0.1]", 0.8 + 0.01 * f64::from(i)))
            .collect();
        let text = format!(
            r#"{{"type":"trackers","performer":"vr",{HANDS},"leftHandJoints":[{}]}}"#,
            joints.join(",")
        );
        let Ok(ClientMessage::Trackers(frame)) = parse(&text) else {
            panic!("not read: {text}");
        };
        let left = frame.hand_joints[0].expect("left hand joints");
        assert!((left[24] - Vec3::new(1.04, 1.4, 0.1)).length() < 1e-6);
        assert!(frame.hand_joints[1].is_none());
        // 24 joints, or a joint 20 km away: refused, naming the field.
        let short = format!(
            r#"{{"type":"trackers","performer":"vr",{HANDS},"rightHandJoints":[{}]}}"#,
            joints[..24].join(",")
        );
        let err = parse(&short).expect_err("24 joints");
        assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
        let mut far = joints.clone();
        far[3] = "[20000,0,0]".into();
        let far = format!(
            r#"{{"type":"trackers","performer":"vr",{HANDS},"leftHandJoints":[{}]}}"#,
            far.join(",")
        );
        let err = parse(&far).expect_err("20 km");
        assert_eq!(err.kind(), ErrorKind::InvalidValue, "{err}");
        assert!(err.to_string().contains("leftHandJoints[3]"), "{err}");
    }

    #[test]
    fn source_messages_list_points_with_parents() {
        let performer = PerformerName::new("alice").unwrap();
        let mut out = String::new();
        let points = [
            SourcePoint {
                name: "Hips",
                parent: None,
                position: Vec3::new(0.0, 0.95, 0.0),
            },
            SourcePoint {
                name: "Spine \"1\"",
                parent: Some(0),
                position: Vec3::new(0.0, 1.05, 0.5),
            },
        ];
        encode_source_json(performer, 7, Some("lab19"), points.into_iter(), &mut out);
        assert_eq!(
            out,
            r#"{"type":"source","performer":"alice","seq":7,"skeleton":"lab19","points":[{"name":"Hips","parent":null,"position":[0.0,0.95,0.0]},{"name":"Spine \"1\"","parent":0,"position":[0.0,1.05,0.5]}]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["points"][1]["name"], "Spine \"1\"");
        encode_source_json(performer, 8, None, std::iter::empty(), &mut out);
        assert_eq!(
            out,
            r#"{"type":"source","performer":"alice","seq":8,"skeleton":null,"points":[]}"#
        );
    }

    #[test]
    fn replies_are_json_with_the_id_echoed() {
        let performers = [PerformerSummary {
            name: "alice",
            source: "websocket",
            skeleton: Some("lab19"),
            frames: 120,
            since_last_frame: 0.25,
            recording: true,
            calibrated: false,
        }];
        let started = [StartedRecording {
            performer: "alice",
            file: "recordings/take-01-alice.vrma",
        }];
        let stopped = [StoppedRecording {
            performer: "alice",
            file: "recordings/take-01-alice.vrma",
            frames: 600,
        }];
        let status = serde_json::json!({"uptime": 12.5, "clients": 2});
        let cases = [
            (
                Reply::Performers {
                    id: Some(1),
                    performers: &performers,
                },
                r#"{"type":"performers","id":1,"performers":[{"name":"alice","source":"websocket","skeleton":"lab19","frames":120,"sinceLastFrame":0.25,"recording":true,"calibrated":false}]}"#,
            ),
            (
                Reply::RecordingStarted {
                    id: Some(2),
                    recordings: &started,
                },
                r#"{"type":"recordingStarted","id":2,"recordings":[{"performer":"alice","file":"recordings/take-01-alice.vrma"}]}"#,
            ),
            (
                Reply::RecordingStopped {
                    id: None,
                    recordings: &stopped,
                },
                r#"{"type":"recordingStopped","id":null,"recordings":[{"performer":"alice","file":"recordings/take-01-alice.vrma","frames":600}]}"#,
            ),
            (
                Reply::Calibrated {
                    id: Some(4),
                    performer: "vr",
                    saved: Some("config/bridge.json"),
                    save_error: None,
                },
                r#"{"type":"calibrated","id":4,"performer":"vr","saved":"config/bridge.json","saveError":null}"#,
            ),
            (
                Reply::Status {
                    id: Some(5),
                    status: &status,
                },
                r#"{"type":"status","id":5,"status":{"uptime":12.5,"clients":2}}"#,
            ),
            (
                Reply::Error {
                    id: Some(6),
                    message: "unknown performer `x`",
                },
                r#"{"type":"error","id":6,"message":"unknown performer `x`"}"#,
            ),
        ];
        for (reply, expected) in cases {
            let json = reply.to_json();
            assert_eq!(json, expected);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert!(v["type"].is_string() && v.get("id").is_some());
        }
    }
}
