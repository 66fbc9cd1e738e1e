//! The journal's bytes: the header and the records (frames, custom expression
//! names), encoded into a buffer and decoded from one. Pure: the writer and the
//! reader move the bytes.
//!
//! # Byte layout (version 1)
//! Little-endian throughout; every `f32` is stored as its bits, so frames come back
//! bit for bit. A string is a `u32` byte length then UTF-8.
//!
//! ```text
//! header
//!   0   magic      8 bytes  "MBJOURNL"
//!   8   version    u16      1
//!   10  body_len   u32      bytes of the body
//!   14  body
//!         created    u64 seconds + u32 nanoseconds since the Unix epoch
//!         performer  string
//!         animation  string   (the .vrma animation's name)
//!         rest       55 x 3 f32: the VrmaRest T-pose position of every bone,
//!                    model space, metres, in `HumanBone` index order
//!         lookAt     u8 0 | 1, then 3 f32 (VrmaRest::look_at_offset) when 1
//!   14+body_len crc32 u32 of bytes 0 .. 14+body_len
//! records, one after another until the end of the file
//!   len      u32   bytes of kind + payload
//!   kind     u8    1 = frame, 2 = custom expression names
//!   payload
//!   crc32    u32   of len, kind and payload
//! frame payload
//!   time               f32 seconds
//!   hips_position      3 f32, model space, metres
//!   rest_hips_height   f32 metres
//!   bone mask          u64, bit `HumanBone::index()` per present bone
//!   rotations          4 f32 (x, y, z, w) per present bone, index order
//!   preset mask        u32, bit `Preset as u32` per preset set
//!   preset weights     f32 per preset set, `Preset::all()` order
//!   custom mask        u16, bit per custom slot set
//!   custom weights     f32 per custom slot set, slot order
//!   lookAt             u8 0 | 1, then yaw, pitch (f32 radians) when 1
//! custom names payload (written before the first frame after the performer's
//! `CustomNames` changed, so slots mean the same in recovery as they did live)
//!   count              u8, at most CUSTOM_CAPACITY
//!   names              string per slot, slot order
//! ```

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use glam::{Quat, Vec3};

use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::expression::{CUSTOM_CAPACITY, PRESET_COUNT};
use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};

/// The first 8 bytes of every journal.
pub const MAGIC: [u8; 8] = *b"MBJOURNL";

/// The layout version this build writes and reads.
pub const VERSION: u16 = 1;

/// Magic, version and body length.
pub(super) const HEADER_START: usize = 14;
/// Largest header body a reader accepts (names are the only variable part).
pub(super) const MAX_HEADER_BODY: u32 = 1 << 20;
/// Largest kind + payload a record may have (custom names are the largest).
pub(super) const MAX_RECORD: u32 = 1 << 21;

pub(super) const KIND_FRAME: u8 = 1;
pub(super) const KIND_NAMES: u8 = 2;

/// Largest frame payload: every bone, preset, custom slot and the lookAt.
const MAX_FRAME_PAYLOAD: usize =
    4 + 12 + 4 + 8 + BONE_COUNT * 16 + 4 + PRESET_COUNT * 4 + 2 + CUSTOM_CAPACITY * 4 + 1 + 8;
/// Length, kind, payload and checksum of the largest frame record.
pub(super) const MAX_FRAME_RECORD: usize = 4 + 1 + MAX_FRAME_PAYLOAD + 4;

/// What a journal says about its take before any frame.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalHeader {
    /// Who is being recorded (from the live bridge's performer config).
    pub performer: String,
    /// The `.vrma` animation's name.
    pub animation: String,
    /// The T-pose the `.vrma` will be written in; rebuilt exactly on recovery.
    pub rest: VrmaRest,
    /// When the take started. Times before the Unix epoch are stored as the epoch.
    pub created: SystemTime,
}

// ---- encoding ----

fn put_u16(buffer: &mut Vec<u8>, v: u16) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(buffer: &mut Vec<u8>, v: u32) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(buffer: &mut Vec<u8>, v: u64) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_f32s(buffer: &mut Vec<u8>, values: &[f32]) {
    for v in values {
        buffer.extend_from_slice(&v.to_le_bytes());
    }
}

/// A `u32` length, then the bytes. Callers bound the length (`MAX_RECORD`,
/// `MAX_HEADER_BODY`) before the record is written.
pub(super) fn put_str(buffer: &mut Vec<u8>, s: &str) {
    put_u32(buffer, u32::try_from(s.len()).unwrap_or(u32::MAX));
    buffer.extend_from_slice(s.as_bytes());
}

/// Starts a record of `kind`; returns where it starts, for `end_record`.
pub(super) fn begin_record(buffer: &mut Vec<u8>, kind: u8) -> usize {
    let start = buffer.len();
    buffer.extend_from_slice(&[0; 4]);
    buffer.push(kind);
    start
}

/// Fills in the length of the record starting at `start` and appends its checksum.
pub(super) fn end_record(buffer: &mut Vec<u8>, start: usize) {
    // Bounded by MAX_RECORD.
    let len = (buffer.len() - start - 4) as u32;
    buffer[start..start + 4].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&buffer[start..]);
    put_u32(buffer, crc);
}

pub(super) fn encode_header(buffer: &mut Vec<u8>, header: &JournalHeader) -> io::Result<()> {
    let start = buffer.len();
    buffer.extend_from_slice(&MAGIC);
    put_u16(buffer, VERSION);
    put_u32(buffer, 0);
    let body = buffer.len();
    let created = header
        .created
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    put_u64(buffer, created.as_secs());
    put_u32(buffer, created.subsec_nanos());
    put_str(buffer, &header.performer);
    put_str(buffer, &header.animation);
    for bone in ALL {
        put_f32s(buffer, &header.rest.position(bone).to_array());
    }
    match header.rest.look_at_offset {
        None => buffer.push(0),
        Some(offset) => {
            buffer.push(1);
            put_f32s(buffer, &offset.to_array());
        }
    }
    let body_len = u32::try_from(buffer.len() - body)
        .ok()
        .filter(|len| *len <= MAX_HEADER_BODY)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "performer and animation names too long for a journal header",
            )
        })?;
    buffer[body - 4..body].copy_from_slice(&body_len.to_le_bytes());
    let crc = crc32fast::hash(&buffer[start..]);
    put_u32(buffer, crc);
    Ok(())
}

pub(super) fn encode_frame(buffer: &mut Vec<u8>, time: f32, pose: &HumanoidPose) {
    put_f32s(buffer, &[time]);
    put_f32s(buffer, &pose.hips_position.to_array());
    put_f32s(buffer, &[pose.rest_hips_height]);
    put_u64(buffer, pose.present_mask());
    for bone in ALL {
        if let Some(q) = pose.rotation(bone) {
            put_f32s(buffer, &q.to_array());
        }
    }
    let e = &pose.expressions;
    let preset_mask = e
        .presets()
        .fold(0u32, |mask, (preset, _)| mask | (1 << preset as u32));
    put_u32(buffer, preset_mask);
    for (_, weight) in e.presets() {
        put_f32s(buffer, &[weight]);
    }
    let custom_mask = (0..CUSTOM_CAPACITY)
        .filter(|slot| e.custom(*slot).is_some())
        .fold(0u16, |mask, slot| mask | (1 << slot));
    put_u16(buffer, custom_mask);
    for slot in 0..CUSTOM_CAPACITY {
        if let Some(weight) = e.custom(slot) {
            put_f32s(buffer, &[weight]);
        }
    }
    match pose.look_at {
        None => buffer.push(0),
        Some(look) => {
            buffer.push(1);
            put_f32s(buffer, &[look.yaw, look.pitch]);
        }
    }
}

// ---- decoding ----

/// A cursor over a record's payload; every read fails past its end.
struct Payload<'a>(&'a [u8]);

impl<'a> Payload<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("the payload ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, &'static str> {
        self.array().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, &'static str> {
        self.array().map(u64::from_le_bytes)
    }

    fn f32(&mut self) -> Result<f32, &'static str> {
        self.array().map(f32::from_le_bytes)
    }

    fn vec3(&mut self) -> Result<Vec3, &'static str> {
        Ok(Vec3::new(self.f32()?, self.f32()?, self.f32()?))
    }

    fn str(&mut self) -> Result<&'a str, &'static str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).map_err(|_| "a name is not UTF-8")
    }

    fn flag(&mut self) -> Result<bool, &'static str> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a flag is neither 0 nor 1"),
        }
    }

    fn finish(&self) -> Result<(), &'static str> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("the payload has bytes left over")
        }
    }
}

pub(super) fn decode_header_body(body: &[u8]) -> Result<JournalHeader, &'static str> {
    let mut p = Payload(body);
    let secs = p.u64()?;
    let nanos = p.u32()?;
    if nanos >= 1_000_000_000 {
        return Err("creation time has too many nanoseconds");
    }
    let created = UNIX_EPOCH
        .checked_add(Duration::new(secs, nanos))
        .ok_or("creation time out of range")?;
    let performer = p.str()?.to_owned();
    let animation = p.str()?.to_owned();
    let mut positions = [None; BONE_COUNT];
    for bone in ALL {
        positions[bone.index()] = Some(p.vec3()?);
    }
    let look_at_offset = if p.flag()? { Some(p.vec3()?) } else { None };
    p.finish()?;
    Ok(JournalHeader {
        performer,
        animation,
        // Every position known: the rest is exactly these positions.
        rest: VrmaRest::from_positions(&positions, look_at_offset),
        created,
    })
}

pub(super) fn decode_frame(payload: &[u8]) -> Result<(f32, HumanoidPose), &'static str> {
    let mut p = Payload(payload);
    let time = p.f32()?;
    let mut pose = HumanoidPose::default();
    pose.hips_position = p.vec3()?;
    pose.rest_hips_height = p.f32()?;
    let bones = p.u64()?;
    if bones >> BONE_COUNT != 0 {
        return Err("the bone mask names bones that do not exist");
    }
    for bone in ALL {
        if bones & (1 << bone.index()) != 0 {
            let q = Quat::from_xyzw(p.f32()?, p.f32()?, p.f32()?, p.f32()?);
            if !q.is_finite() {
                return Err("a rotation is not finite");
            }
            pose.set_rotation(bone, q);
        }
    }
    let presets = p.u32()?;
    if presets >> PRESET_COUNT != 0 {
        return Err("the preset mask names presets that do not exist");
    }
    for preset in Preset::all() {
        if presets & (1 << preset as u32) != 0 {
            pose.expressions.set_preset(preset, p.f32()?);
        }
    }
    let customs = p.u16()?;
    for slot in 0..CUSTOM_CAPACITY {
        if customs & (1 << slot) != 0 {
            pose.expressions.set_custom(slot, p.f32()?);
        }
    }
    if p.flag()? {
        pose.look_at = Some(LookAt {
            yaw: p.f32()?,
            pitch: p.f32()?,
        });
    }
    p.finish()?;
    Ok((time, pose))
}

pub(super) fn decode_names(payload: &[u8]) -> Result<CustomNames, &'static str> {
    let mut p = Payload(payload);
    let count = usize::from(p.u8()?);
    if count > CUSTOM_CAPACITY {
        return Err("more custom names than slots");
    }
    let mut names = CustomNames::default();
    for slot in 0..count {
        if names.slot_or_insert(p.str()?) != Some(slot) {
            return Err("a custom name repeats");
        }
    }
    p.finish()?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone;
    use crate::record::journal::JournalEnd;
    use crate::record::journal::test_support::{
        bits, header, journal_bytes, read_all, reader, take,
    };

    #[test]
    fn frames_and_header_come_back_bit_for_bit() {
        let frames = take(40);
        let (bytes, _) = journal_bytes(&frames);
        let mut r = reader(&bytes).unwrap();
        assert_eq!(r.header(), &header());
        for (i, (time, pose, names)) in frames.iter().enumerate() {
            let (t, got) = r.next_frame().unwrap().unwrap();
            assert_eq!(t.to_bits(), time.to_bits(), "frame {i}");
            assert_eq!(bits(&got), bits(pose), "frame {i}");
            assert_eq!(&got, pose, "frame {i}");
            assert_eq!(r.custom_names(), names, "frame {i}");
        }
        assert_eq!(r.next_frame().unwrap(), None);
        assert_eq!(
            r.end(),
            Some(JournalEnd {
                dropped_tail_bytes: 0,
                defect: None
            })
        );
    }

    #[test]
    fn names_records_appear_only_when_the_names_change() {
        let frames = take(25);
        let (_, ends) = journal_bytes(&frames);
        let sizes: Vec<usize> = ends.windows(2).map(|w| w[1] - w[0]).collect();
        let frame_only = |i: usize| {
            let mut buffer = Vec::new();
            let start = begin_record(&mut buffer, KIND_FRAME);
            encode_frame(&mut buffer, frames[i].0, &frames[i].1);
            end_record(&mut buffer, start);
            buffer.len()
        };
        for (i, size) in sizes.iter().enumerate() {
            let with_names = matches!(i, 5 | 12 | 20);
            assert_eq!(*size > frame_only(i), with_names, "frame {i}");
        }
    }

    #[test]
    fn records_with_good_checksums_but_bad_payloads_stop_reading() {
        let (good, ends) = journal_bytes(&take(3));
        let header_end = ends[0];
        let record = |kind: u8, payload: &[u8]| {
            let mut buffer = Vec::new();
            let start = begin_record(&mut buffer, kind);
            buffer.extend_from_slice(payload);
            end_record(&mut buffer, start);
            buffer
        };
        let mut frame = Vec::new();
        encode_frame(&mut frame, 1.0, &HumanoidPose::default());
        let mut no_bones = frame.clone();
        no_bones[20..28].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let mut names = vec![2u8];
        put_str(&mut names, "wink");
        put_str(&mut names, "wink");
        let cases = [
            (record(9, &[]), "unknown record kind"),
            (
                record(KIND_FRAME, &frame[..frame.len() - 1]),
                "the payload ends early",
            ),
            (
                record(KIND_FRAME, &[&frame[..], &[0]].concat()),
                "bytes left over",
            ),
            (record(KIND_FRAME, &no_bones), "bones that do not exist"),
            (record(KIND_NAMES, &names), "a custom name repeats"),
            (record(KIND_NAMES, &[17]), "more custom names than slots"),
        ];
        for (bad, expected) in cases {
            let bytes = [&good[..header_end], &bad, &good[header_end..]].concat();
            let (got, end) = read_all(&bytes);
            assert!(got.is_empty(), "{expected}");
            let defect = end.defect.unwrap();
            assert_eq!(defect.at, header_end as u64);
            assert!(
                defect.to_string().contains(expected),
                "{defect} lacks {expected}"
            );
            assert_eq!(end.dropped_tail_bytes, (bytes.len() - header_end) as u64);
        }
    }

    #[test]
    fn rest_rebuilt_from_positions_is_the_same_rest() {
        // The header stores positions; recovery must get the identical VrmaRest back.
        let rest = header().rest;
        let positions = ALL.map(|b| Some(rest.position(b)));
        let rebuilt = VrmaRest::from_positions(&positions, rest.look_at_offset);
        assert_eq!(rebuilt, rest);
        assert_eq!(rebuilt.position(HumanBone::Hips).y, 0.93);
    }
}
