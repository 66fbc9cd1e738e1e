//! Outgoing pose messages: a `HumanoidPose` as `pose` JSON (`encode_pose_json`)
//! or in the compact little-endian binary form (`encode_pose_binary`, layout in
//! `docs/websocket.md`), and where a performer's source is as a `source` JSON
//! message (`encode_source_json`). Each writes into a caller-owned buffer and
//! allocates only while that buffer grows; floats keep their exact bits (JSON
//! numbers in their shortest round-trip form).

use std::fmt::{self, Write as _};

use glam::Vec3;

use super::{MAX_EXPRESSION_NAME, POSE_MAGIC, POSE_VERSION};
use crate::humanoid::expression::CUSTOM_CAPACITY;
use crate::humanoid::{CustomNames, HumanoidPose};
use crate::protocol::frame::PerformerName;

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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    use crate::humanoid::expression::PRESET_COUNT;
    use crate::humanoid::{HumanBone, LookAt, Preset};
    use crate::protocol::ws::pose_decode::{decode_pose_binary, decode_pose_json};
    use crate::protocol::ws::test_support::{CUSTOM, Rng, custom_names, random_pose};

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
}
