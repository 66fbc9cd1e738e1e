//! Incoming messages: `parse` checks one client text message into a
//! `ClientMessage`; a `skeleton` frame is then decoded against the performer's
//! skeleton by `SkeletonMessage::decode_into`. `rejected_request_id` says
//! whether a message `parse` rejected is a request to answer, and with which id.

use std::borrow::Cow;

use glam::{Quat, Vec3};

use super::MAX_MESSAGE;
use super::checks::{
    check_performer, check_position, check_recording_name, check_rotation, check_time, joint_field,
};
use super::error::{Problem, WsError, invalid, quoted};
use super::wire::{
    CalibrateWire, DeviceWire, Envelope, Joints, LooseEnvelope, PointWire, RequestWire,
    SkeletonWire, StartRecordingWire, StopRecordingWire, TrackersWire, from_json,
};
use crate::humanoid::{DevicePose, HAND_JOINTS};
use crate::protocol::frame::{
    JointFrame, MAX_JOINTS, MAX_NAME, PerformerName, TrackedPoint, TrackerFrame,
};
use crate::skeleton::Skeleton;

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

/// The request types, which are answered even when rejected.
const REQUESTS: [&str; 5] = [
    "startRecording",
    "stopRecording",
    "listPerformers",
    "status",
    "calibrate",
];

/// How to answer a message that `parse` rejected: `Some(id)` for a request (a
/// request type, or any other type but a frame's with an `id` key), whose `error`
/// reply carries `id`: its `id` when that is an integer ≥ 0, else `None` (JSON
/// `null`). `None`, no reply, for a frame (`skeleton`, `trackers`), for a message
/// whose type cannot be read and for an unknown type without an `id` (a sender of
/// frames at 90 Hz would otherwise be flooded).
#[must_use]
pub fn rejected_request_id(text: &str) -> Option<Option<u64>> {
    if text.len() > MAX_MESSAGE {
        return None;
    }
    let envelope = from_json::<LooseEnvelope<'_>>(text).ok()?;
    let kind = &*envelope.kind.0;
    let request = REQUESTS.contains(&kind) || envelope.id.is_some();
    match kind {
        "skeleton" | "trackers" => None,
        _ if request => Some(envelope.id.as_ref().and_then(serde_json::Value::as_u64)),
        _ => None,
    }
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
        (TrackedPoint::LeftHand, wire.left_hand.map(full)),
        (TrackedPoint::RightHand, wire.right_hand.map(full)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::protocol::ws::ErrorKind;
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
                r#"{"type":"trackers","performer":"vr","head":{"position":[0,1.6,0],"rotation":[0,0,0,1]},"hips":{"position":[0,1,0],"rotation":[0,0,0,1]}}"#,
                r#"trackers vr time=0 ["head", "hips"]"#,
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
        let id = rejected_request_id;
        assert_eq!(id(r#"{"type":"calibrate","id":9}"#), Some(Some(9)));
        assert_eq!(id(r#"{"type":"dance","id":10,"x":[]}"#), Some(Some(10)));
        // A request without an id, or with one that is not an integer ≥ 0, is
        // answered with `id: null`.
        assert_eq!(id(r#"{"type":"status","x":1}"#), Some(None));
        for bad in [r#"-1"#, r#""7""#, "1.5", "null", "[1]", "1e300"] {
            let text = format!(r#"{{"type":"status","id":{bad}}}"#);
            assert_eq!(id(&text), Some(None), "{text}");
        }
        // Frames and messages without a readable type get no reply.
        assert_eq!(id(r#"{"type":"skeleton","id":1,"joints":7}"#), None);
        assert_eq!(id(r#"{"type":"trackers","head":1}"#), None);
        assert_eq!(id("{"), None);
        assert_eq!(id(r#"{"id":3}"#), None);
        assert_eq!(id(r#"{"type":"teleport"}"#), None);
        assert_eq!(id(r#"{"type":"teleport","id":"x"}"#), Some(None));
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
}
