//! The pose payload: written by the WebSocket's binary pose encoder (one layout
//! for both), read back here from untrusted bytes.
//!
//! `decode_pose` checks everything a remote bridge (or anybody who can publish on
//! the subject) could get wrong: lengths, reserved bits, UTF-8 names, finite
//! numbers within `MAX_MAGNITUDE`, unit rotations, expression weights in [0, 1],
//! and no trailing bytes. Rotations and positions keep their exact bits, so a pose
//! relayed through any number of bridges arrives as it was solved.

use glam::{Quat, Vec3};

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::expression::PRESET_COUNT;
use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};
use crate::protocol::frame::PerformerName;
use crate::protocol::ws::{MAX_MAGNITUDE, POSE_MAGIC, POSE_VERSION, PoseHeader};

/// How far a rotation's length may be from 1 (a sender's f32 rounding is ~1e-7).
const UNIT_TOLERANCE: f32 = 1e-3;

/// Writes a pose payload into `out` (cleared first): the WebSocket's binary pose,
/// whose layout `docs/nats.md` spells out. Allocates only while `out` grows.
pub fn encode_pose(
    header: &PoseHeader,
    pose: &HumanoidPose,
    custom: &CustomNames,
    out: &mut Vec<u8>,
) {
    crate::protocol::ws::encode_pose_binary(header, pose, custom, out);
}

/// Why a pose payload was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("pose truncated at byte {at}")]
    Truncated { at: usize },
    #[error("not a pose (bad magic)")]
    BadMagic,
    #[error("pose version {0}, expected {POSE_VERSION}")]
    Version(u8),
    #[error("{0}: bits set that version {POSE_VERSION} does not define")]
    ReservedBits(&'static str),
    #[error("performer name is empty, longer than 32 bytes or not UTF-8")]
    Performer,
    #[error("custom expression name is not UTF-8")]
    ExpressionName,
    #[error("more custom expressions than a performer has slots")]
    TooManyExpressions,
    #[error("{0}: not a finite number within 10 km")]
    OutOfRange(&'static str),
    #[error("rotation of `{0}` is not a unit quaternion")]
    NotUnit(&'static str),
    #[error("expression weight outside [0, 1]")]
    Weight,
    #[error("{extra} bytes after the pose")]
    TrailingBytes { extra: usize },
}

/// Reads the layout front to back.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.saturating_add(n);
        let taken = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated {
            at: self.bytes.len(),
        })?;
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let at = self.at;
        self.take(N)?
            .try_into()
            .map_err(|_| DecodeError::Truncated { at })
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_le_bytes)
    }

    fn f64(&mut self) -> Result<f64, DecodeError> {
        self.array().map(f64::from_le_bytes)
    }

    /// A finite f32 of magnitude at most `MAX_MAGNITUDE`.
    fn number(&mut self, field: &'static str) -> Result<f32, DecodeError> {
        let v = f32::from_le_bytes(self.array()?);
        if v.is_finite() && v.abs() <= MAX_MAGNITUDE {
            Ok(v)
        } else {
            Err(DecodeError::OutOfRange(field))
        }
    }

    fn weight(&mut self) -> Result<f32, DecodeError> {
        let w = f32::from_le_bytes(self.array()?);
        if (0.0..=1.0).contains(&w) {
            Ok(w)
        } else {
            Err(DecodeError::Weight)
        }
    }

    fn name(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = usize::from(self.u8()?);
        self.take(len)
    }
}

/// Reads a pose payload. The performer's custom expression names are interned in
/// the `CustomNames` that `custom` gives for the performer (slots stay the same
/// from frame to frame).
pub fn decode_pose<'n>(
    bytes: &[u8],
    custom: impl FnOnce(PerformerName) -> &'n mut CustomNames,
) -> Result<(PoseHeader, HumanoidPose), DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    if r.array::<4>()? != POSE_MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = r.u8()?;
    if version != POSE_VERSION {
        return Err(DecodeError::Version(version));
    }
    let flags = r.u8()?;
    if flags & !1 != 0 {
        return Err(DecodeError::ReservedBits("flags"));
    }
    let performer = PerformerName::from_bytes(r.name()?).ok_or(DecodeError::Performer)?;
    let seq = r.u64()?;
    let time = r.f64()?;
    if !time.is_finite() {
        return Err(DecodeError::OutOfRange("time"));
    }
    let bone_mask = r.u64()?;
    if bone_mask >> BONE_COUNT != 0 {
        return Err(DecodeError::ReservedBits("boneMask"));
    }
    let mut pose = HumanoidPose::default();
    pose.hips_position = Vec3::new(r.number("hips")?, r.number("hips")?, r.number("hips")?);
    pose.rest_hips_height = r.number("restHipsHeight")?;
    if pose.rest_hips_height <= 0.0 {
        return Err(DecodeError::OutOfRange("restHipsHeight"));
    }
    for bone in ALL {
        if bone_mask & (1 << bone.index()) != 0 {
            let field = bone.name();
            let q = Quat::from_array([
                r.number(field)?,
                r.number(field)?,
                r.number(field)?,
                r.number(field)?,
            ]);
            if (q.length() - 1.0).abs() > UNIT_TOLERANCE {
                return Err(DecodeError::NotUnit(field));
            }
            pose.set_rotation(bone, q);
        }
    }
    let preset_mask = r.u32()?;
    if preset_mask >> PRESET_COUNT != 0 {
        return Err(DecodeError::ReservedBits("presetMask"));
    }
    for preset in Preset::all() {
        if preset_mask & (1 << preset as u32) != 0 {
            pose.expressions.set_preset(preset, r.weight()?);
        }
    }
    let customs = r.u8()?;
    let names = custom(performer);
    for _ in 0..customs {
        let name = std::str::from_utf8(r.name()?).map_err(|_| DecodeError::ExpressionName)?;
        let weight = r.weight()?;
        let slot = names
            .slot_or_insert(name)
            .ok_or(DecodeError::TooManyExpressions)?;
        pose.expressions.set_custom(slot, weight);
    }
    if flags & 1 != 0 {
        pose.look_at = Some(LookAt {
            yaw: r.number("lookAt")?,
            pitch: r.number("lookAt")?,
        });
    }
    match bytes.len() - r.at {
        0 => Ok((
            PoseHeader {
                performer,
                seq,
                time,
            },
            pose,
        )),
        extra => Err(DecodeError::TrailingBytes { extra }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone;

    fn name(s: &str) -> PerformerName {
        PerformerName::new(s).unwrap()
    }

    fn sample() -> (PoseHeader, HumanoidPose, CustomNames) {
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::new(0.1, 0.93, -0.25);
        pose.rest_hips_height = 0.97;
        pose.set_rotation(
            HumanBone::Hips,
            Quat::from_rotation_y(0.3) * Quat::from_rotation_x(-0.1),
        );
        pose.set_rotation(HumanBone::LeftUpperArm, Quat::from_rotation_z(1.2));
        pose.set_rotation(HumanBone::RightLittleDistal, Quat::from_rotation_x(0.05));
        pose.expressions.set_preset(Preset::Happy, 0.75);
        let mut names = CustomNames::default();
        pose.expressions
            .set_custom(names.slot_or_insert("tongueOut").unwrap(), 0.5);
        pose.look_at = Some(LookAt {
            yaw: 0.2,
            pitch: -0.1,
        });
        let header = PoseHeader {
            performer: name("alice"),
            seq: 42,
            time: 1.25,
        };
        (header, pose, names)
    }

    fn encoded() -> Vec<u8> {
        let (header, pose, names) = sample();
        let mut bytes = Vec::new();
        encode_pose(&header, &pose, &names, &mut bytes);
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<(PoseHeader, HumanoidPose), DecodeError> {
        let mut names = CustomNames::default();
        decode_pose(bytes, |_| &mut names)
    }

    /// Byte offsets in `encoded()`: magic 0, version 4, flags 5, name 6..12,
    /// seq 12, time 20, bone mask 28, hips 36, rest hips height 48, rotations 52.
    const FLAGS: usize = 5;
    const BONE_MASK: usize = 28;
    const HIPS_Y: usize = 40;
    const REST: usize = 48;
    const FIRST_ROTATION: usize = 52;

    fn with(at: usize, patch: &[u8]) -> Vec<u8> {
        let mut bytes = encoded();
        bytes[at..at + patch.len()].copy_from_slice(patch);
        bytes
    }

    #[test]
    fn a_pose_reads_back_bit_for_bit() {
        let (header, pose, names) = sample();
        let mut got_names = CustomNames::default();
        let (h, p) = decode_pose(&encoded(), |performer| {
            assert_eq!(performer, name("alice"));
            &mut got_names
        })
        .unwrap();
        assert_eq!(h, header);
        assert_eq!(p, pose);
        assert_eq!(got_names, names);
    }

    #[test]
    fn custom_expressions_keep_their_slot_across_frames() {
        let mut names = CustomNames::default();
        names.slot_or_insert("blink2");
        let (_, pose) = decode_pose(&encoded(), |_| &mut names).unwrap();
        assert_eq!(names.slot("tongueOut"), Some(1));
        assert_eq!(pose.expressions.custom(1), Some(0.5));
    }

    #[test]
    fn bad_payloads_are_refused_by_kind() {
        let bytes = encoded();
        let nan = f32::NAN.to_le_bytes();
        let far = 2.0e4f32.to_le_bytes();
        let cases: Vec<(Vec<u8>, DecodeError)> = vec![
            (Vec::new(), DecodeError::Truncated { at: 0 }),
            (b"MBPX".to_vec(), DecodeError::BadMagic),
            (with(4, &[2]), DecodeError::Version(2)),
            (with(FLAGS, &[2]), DecodeError::ReservedBits("flags")),
            (with(6, &[0]), DecodeError::Performer),
            (with(7, &[0xff]), DecodeError::Performer),
            (
                with(20, &f64::INFINITY.to_le_bytes()),
                DecodeError::OutOfRange("time"),
            ),
            (
                with(BONE_MASK + 7, &[0x80]),
                DecodeError::ReservedBits("boneMask"),
            ),
            (with(HIPS_Y, &nan), DecodeError::OutOfRange("hips")),
            (with(HIPS_Y, &far), DecodeError::OutOfRange("hips")),
            (
                with(REST, &(-1.0f32).to_le_bytes()),
                DecodeError::OutOfRange("restHipsHeight"),
            ),
            (
                with(FIRST_ROTATION, &0.5f32.to_le_bytes()),
                DecodeError::NotUnit("hips"),
            ),
            (
                bytes[..bytes.len() - 1].to_vec(),
                DecodeError::Truncated {
                    at: bytes.len() - 1,
                },
            ),
            (
                [bytes.clone(), vec![0]].concat(),
                DecodeError::TrailingBytes { extra: 1 },
            ),
        ];
        for (payload, expected) in cases {
            assert_eq!(decode(&payload), Err(expected), "{expected}");
        }
    }

    #[test]
    fn weights_outside_zero_to_one_and_a_full_name_table_are_refused() {
        // After the three rotations: the preset mask, then happy's weight.
        let happy = FIRST_ROTATION + 3 * 16 + 4;
        assert_eq!(encoded()[happy..happy + 4], 0.75f32.to_le_bytes());
        let bytes = with(happy, &1.5f32.to_le_bytes());
        assert_eq!(decode(&bytes), Err(DecodeError::Weight));
        let mut full = CustomNames::default();
        for i in 0..crate::humanoid::expression::CUSTOM_CAPACITY {
            full.slot_or_insert(&format!("x{i}"));
        }
        assert_eq!(
            decode_pose(&encoded(), |_| &mut full),
            Err(DecodeError::TooManyExpressions)
        );
    }

    #[test]
    fn a_pose_written_from_the_documented_layout_decodes() {
        // fuzz/seeds.sh writes it with python's struct from docs/nats.md's table.
        let bytes = include_bytes!("../../../fuzz/corpus/nats/pose.bin");
        let mut names = CustomNames::default();
        let (header, pose) = decode_pose(bytes, |_| &mut names).unwrap();
        assert_eq!(
            (header.performer, header.seq, header.time),
            (name("alice"), 42, 1.25)
        );
        assert_eq!(pose.hips_position, Vec3::new(0.1, 0.93, -0.2));
        assert_eq!(pose.rest_hips_height, 0.95);
        let hips = pose.rotation(HumanBone::Hips).unwrap();
        assert!(hips.angle_between(Quat::from_rotation_y(0.4)) < 1e-6);
        assert!(pose.rotation(HumanBone::LeftUpperArm).is_some());
        assert_eq!(pose.expressions.preset(Preset::Happy), Some(0.75));
        assert_eq!(
            pose.expressions.custom(names.slot("tongueOut").unwrap()),
            Some(0.5)
        );
        assert_eq!(
            pose.look_at,
            Some(LookAt {
                yaw: 0.2,
                pitch: -0.1
            })
        );
    }

    #[test]
    fn every_prefix_of_a_pose_is_refused_without_panic() {
        let bytes = encoded();
        for end in 0..bytes.len() {
            assert!(decode(&bytes[..end]).is_err(), "{end}");
        }
    }
}
