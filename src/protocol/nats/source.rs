//! The source payload: where a performer's source was when its pose was solved,
//! for receivers that draw it beside the pose (a streamed skeleton's joints in the
//! skeleton's order, or the tracked devices in `TrackedPoint` order).
//!
//! Little-endian: magic `MBSR`, version u8, performer (u8 length + UTF-8), seq
//! u64 (the pose's), skeleton (u8 length + UTF-8; empty for tracked devices),
//! count u8 (≤ 128), present u128 (bit `i`: point `i` follows), then x, y, z f32
//! per present point, metres in model space.

use glam::Vec3;

use super::pose::DecodeError;
use crate::protocol::frame::{MAX_JOINTS, PerformerName};
use crate::protocol::ws::MAX_MAGNITUDE;

/// The first four bytes of a source payload.
pub const SOURCE_MAGIC: [u8; 4] = *b"MBSR";

/// The source layout's version; any change to the layout bumps it.
pub const SOURCE_VERSION: u8 = 1;

/// One source payload, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub performer: PerformerName,
    /// The `seq` of the pose solved from the same frame.
    pub seq: u64,
    /// The skeleton's name in the publishing bridge; `None` for tracked devices.
    pub skeleton: Option<String>,
    /// The present points, with their index.
    pub points: Vec<(usize, Vec3)>,
}

/// Writes a source payload into `out` (cleared first): the `count` first entries
/// of `points`, those whose bit is set in `present`. A skeleton name longer than
/// 255 bytes is cut at a character boundary.
pub fn encode_source(
    source: (&str, u64, Option<&str>),
    present: u128,
    points: &[Vec3],
    out: &mut Vec<u8>,
) {
    let (performer, seq, skeleton) = source;
    out.clear();
    out.extend_from_slice(&SOURCE_MAGIC);
    out.push(SOURCE_VERSION);
    push_name(out, performer);
    out.extend_from_slice(&seq.to_le_bytes());
    push_name(out, skeleton.unwrap_or(""));
    let count = points.len().min(MAX_JOINTS);
    out.push(count as u8);
    let present = if count < 128 {
        present & ((1u128 << count) - 1)
    } else {
        present
    };
    out.extend_from_slice(&present.to_le_bytes());
    for (i, p) in points.iter().take(count).enumerate() {
        if present & (1 << i) != 0 {
            for v in p.to_array() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

fn push_name(out: &mut Vec<u8>, name: &str) {
    let mut end = name.len().min(255);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    out.push(end as u8);
    out.extend_from_slice(&name.as_bytes()[..end]);
}

/// Reads a source payload.
pub fn decode_source(bytes: &[u8]) -> Result<Source, DecodeError> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], DecodeError> {
        let got = bytes
            .get(at..at.saturating_add(n))
            .ok_or(DecodeError::Truncated { at: bytes.len() })?;
        at += n;
        Ok(got)
    };
    if take(4)? != SOURCE_MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = take(1)?[0];
    if version != SOURCE_VERSION {
        return Err(DecodeError::Version(version));
    }
    let len = usize::from(take(1)?[0]);
    let performer = PerformerName::from_bytes(take(len)?).ok_or(DecodeError::Performer)?;
    let seq = u64::from_le_bytes(take(8)?.try_into().map_err(|_| DecodeError::BadMagic)?);
    let len = usize::from(take(1)?[0]);
    let skeleton = std::str::from_utf8(take(len)?).map_err(|_| DecodeError::Performer)?;
    let count = usize::from(take(1)?[0]);
    if count > MAX_JOINTS {
        return Err(DecodeError::ReservedBits("count"));
    }
    let present = u128::from_le_bytes(take(16)?.try_into().map_err(|_| DecodeError::BadMagic)?);
    if count < 128 && present >> count != 0 {
        return Err(DecodeError::ReservedBits("present"));
    }
    let mut points = Vec::new();
    for i in (0..count).filter(|i| present & (1 << i) != 0) {
        let mut p = [0f32; 3];
        for v in &mut p {
            *v = f32::from_le_bytes(take(4)?.try_into().map_err(|_| DecodeError::BadMagic)?);
            if !v.is_finite() || v.abs() > MAX_MAGNITUDE {
                return Err(DecodeError::OutOfRange("point"));
            }
        }
        points.push((i, Vec3::from_array(p)));
    }
    match bytes.len() - at {
        0 => Ok(Source {
            performer,
            seq,
            skeleton: (!skeleton.is_empty()).then(|| skeleton.to_owned()),
            points,
        }),
        extra => Err(DecodeError::TrailingBytes { extra }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points() -> Vec<Vec3> {
        (0..19).map(|i| Vec3::new(i as f32, 1.5, -0.25)).collect()
    }

    #[test]
    fn sources_read_back_with_their_present_points() {
        for (skeleton, present) in [
            (Some("lab19"), 0b101u128),
            (None, (1 << 19) - 1),
            (Some("x"), 0),
        ] {
            let mut bytes = Vec::new();
            encode_source(("bob", 7, skeleton), present, &points(), &mut bytes);
            let got = decode_source(&bytes).unwrap();
            assert_eq!(got.performer.as_str(), "bob");
            assert_eq!(got.seq, 7);
            assert_eq!(got.skeleton.as_deref(), skeleton);
            let expected: Vec<(usize, Vec3)> = points()
                .into_iter()
                .enumerate()
                .filter(|(i, _)| present & (1 << i) != 0)
                .collect();
            assert_eq!(got.points, expected);
        }
    }

    #[test]
    fn a_source_written_from_the_documented_layout_decodes() {
        // fuzz/seeds.sh writes it with python's struct from docs/nats.md's table.
        let got = decode_source(include_bytes!(
            "../../../fuzz/corpus/nats/source-skeleton.bin"
        ));
        let got = got.unwrap();
        assert_eq!((got.performer.as_str(), got.seq), ("bob", 7));
        assert_eq!(got.skeleton.as_deref(), Some("lab19"));
        let expected = vec![(0, Vec3::new(0.0, 1.0, 0.0)), (2, Vec3::new(0.1, 1.2, 0.0))];
        assert_eq!(got.points, expected);
    }

    #[test]
    fn bad_sources_are_refused_by_kind() {
        let mut bytes = Vec::new();
        encode_source(("bob", 7, Some("lab19")), 0b11, &points()[..2], &mut bytes);
        let present_at = 4 + 1 + 4 + 8 + 6 + 1;
        let mut high_bit = bytes.clone();
        high_bit[present_at] = 0b111;
        let mut nan = bytes.clone();
        let n = nan.len();
        nan[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
        for (payload, expected) in [
            (b"MBPO".to_vec(), DecodeError::BadMagic),
            (high_bit, DecodeError::ReservedBits("present")),
            (nan, DecodeError::OutOfRange("point")),
            (
                [bytes.clone(), vec![1]].concat(),
                DecodeError::TrailingBytes { extra: 1 },
            ),
        ] {
            assert_eq!(decode_source(&payload), Err(expected), "{expected}");
        }
        for end in 0..bytes.len() {
            assert!(decode_source(&bytes[..end]).is_err(), "{end}");
        }
    }
}
