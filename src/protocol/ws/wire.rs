//! Incoming JSON plumbing: how each client message is laid out on the wire
//! (`*Wire` structs, read by serde with unknown fields refused), strings borrowed
//! from the message when they have no escapes (`Text`), a skeleton frame's joints
//! read by name or in skeleton order with at most `MAX_JOINTS` kept
//! (`JointsWire`), and `from_json`, which names the JSON path of whatever is wrong.
//! Values are raw here; `checks` bounds them and `client` builds the messages.

use std::borrow::Cow;
use std::fmt;

use glam::Quat;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::error::{MAX_PARSER_MESSAGE, WsError, clipped, quoted};
use crate::humanoid::HAND_JOINTS;
use crate::protocol::frame::MAX_JOINTS;

/// A string from the message, borrowed when it has no escapes.
pub(super) struct Text<'a>(pub(super) Cow<'a, str>);

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

/// The `joints` of a skeleton message as sent: by name or in skeleton order, the
/// first `MAX_JOINTS` kept, every entry counted.
pub(super) struct JointsWire<'a> {
    pub(super) joints: Joints<'a>,
    pub(super) count: usize,
}

/// Joint rotations, raw until checked, then normalized.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Joints<'a> {
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
pub(super) fn from_json<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, WsError> {
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

/// What a rejected message still shows: its type, and whatever its `id` is.
#[derive(Deserialize)]
pub(super) struct LooseEnvelope<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Text<'a>,
    pub(super) id: Option<serde_json::Value>,
}

/// What every message has: its type (each type's own fields, a request's `id`
/// among them, are read by its own wire struct).
#[derive(Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Text<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct SkeletonWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    #[serde(borrow)]
    pub(super) performer: Text<'a>,
    #[serde(borrow)]
    pub(super) skeleton: Text<'a>,
    #[serde(default)]
    pub(super) frame: u64,
    #[serde(default)]
    pub(super) time: f64,
    pub(super) root_position: Option<[f32; 3]>,
    #[serde(borrow)]
    pub(super) joints: JointsWire<'a>,
}

/// A device with position and rotation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeviceWire {
    pub(super) position: [f32; 3],
    pub(super) rotation: [f32; 4],
}

/// A tracked point whose rotation is optional (elbows, knees).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PointWire {
    pub(super) position: [f32; 3],
    pub(super) rotation: Option<[f32; 4]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct TrackersWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    #[serde(borrow)]
    pub(super) performer: Text<'a>,
    #[serde(default)]
    pub(super) time: f64,
    pub(super) head: DeviceWire,
    pub(super) left_hand: Option<DeviceWire>,
    pub(super) right_hand: Option<DeviceWire>,
    pub(super) hips: Option<DeviceWire>,
    pub(super) chest: Option<DeviceWire>,
    pub(super) left_foot: Option<DeviceWire>,
    pub(super) right_foot: Option<DeviceWire>,
    pub(super) left_elbow: Option<PointWire>,
    pub(super) right_elbow: Option<PointWire>,
    pub(super) left_knee: Option<PointWire>,
    pub(super) right_knee: Option<PointWire>,
    pub(super) left_hand_joints: Option<[[f32; 3]; HAND_JOINTS]>,
    pub(super) right_hand_joints: Option<[[f32; 3]; HAND_JOINTS]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StartRecordingWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    pub(super) id: Option<u64>,
    #[serde(borrow)]
    pub(super) performer: Option<Text<'a>>,
    #[serde(borrow)]
    pub(super) name: Option<Text<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StopRecordingWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    pub(super) id: Option<u64>,
    #[serde(borrow)]
    pub(super) performer: Option<Text<'a>>,
}

/// A request with nothing but its id (`listPerformers`, `status`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RequestWire {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    pub(super) id: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CalibrateWire<'a> {
    #[serde(rename = "type")]
    _type: IgnoredAny,
    pub(super) id: Option<u64>,
    #[serde(borrow)]
    pub(super) performer: Text<'a>,
}
