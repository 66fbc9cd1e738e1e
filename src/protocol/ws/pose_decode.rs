//! Decoders of the outgoing pose messages, for the tests only: `decode_pose_json`
//! and `decode_pose_binary` read back what `pose` writes, with every float bit for
//! bit, so the tests can hold the encoders to their layout. The bridge never reads
//! poses; integration tests have their own reader in `tests/common`.
//!
//! Pose floats are read as their JSON text and parsed by Rust's correctly rounded
//! `str::parse`, so every decimal the encoder wrote gives back the same bits
//! (serde_json's own float parsing is fast but not always correctly rounded).

use std::fmt;

use glam::{Quat, Vec3};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::checks::check_performer;
use super::error::{Problem, WsError, invalid, quoted};
use super::pose::PoseHeader;
use super::wire::{Text, from_json};
use super::{POSE_MAGIC, POSE_VERSION};
use crate::humanoid::bone::ALL;
use crate::humanoid::expression::PRESET_COUNT;
use crate::humanoid::{BONE_COUNT, CustomNames, HumanBone, HumanoidPose, LookAt, Preset};
use crate::protocol::frame::PerformerName;

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
pub(super) fn decode_pose_json(
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
pub(super) fn decode_pose_binary(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ws::pose::{encode_pose_binary, encode_pose_json};
    use crate::protocol::ws::test_support::{Rng, bits, custom_names, random_pose};

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
}
