//! The poses bundle: every pose a bridge's NATS output took at one wake-up, in one
//! message on `<prefix>.<bridge>.poses`, for receivers that want every performer
//! (one message per wake-up to copy and to read instead of one per performer).
//!
//! Little-endian: magic `MBPB`, version u8, count u16, then per pose a u32 length
//! and that many bytes of pose payload (`encode_pose`), nothing after the last.
//! `split_bundle` checks the frame (magic, version, every length, the count, no
//! trailing bytes) before it hands out a single pose; each pose is then read by
//! `decode_pose` like one from its own subject.

use super::pose::DecodeError;

/// The first four bytes of a bundle.
pub const BUNDLE_MAGIC: [u8; 4] = *b"MBPB";

/// The bundle layout's version; any change to the layout bumps it.
pub const BUNDLE_VERSION: u8 = 1;

/// Magic, version and count.
const HEAD: usize = 7;

/// A bundle being written: `push` each pose payload, then send `as_bytes`.
#[derive(Debug)]
pub struct BundleWriter {
    bytes: Vec<u8>,
    count: u16,
}

impl Default for BundleWriter {
    fn default() -> Self {
        let mut writer = Self {
            bytes: Vec::new(),
            count: 0,
        };
        writer.clear();
        writer
    }
}

impl BundleWriter {
    /// Empties the bundle (keeps its memory).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.bytes.extend_from_slice(&BUNDLE_MAGIC);
        self.bytes.push(BUNDLE_VERSION);
        self.bytes.extend_from_slice(&0u16.to_le_bytes());
        self.count = 0;
    }

    /// Whether `pose` (a payload of `encode_pose`) still fits in a message of at
    /// most `max_bytes`, with the count below its limit.
    #[must_use]
    pub fn fits(&self, pose: &[u8], max_bytes: usize) -> bool {
        self.count < u16::MAX && self.bytes.len() + 4 + pose.len() <= max_bytes
    }

    /// Appends one pose payload (shorter than 4 GiB, as every pose is).
    pub fn push(&mut self, pose: &[u8]) {
        debug_assert!(self.count < u16::MAX && u32::try_from(pose.len()).is_ok());
        self.bytes
            .extend_from_slice(&(pose.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(pose);
        self.count += 1;
        self.bytes[5..HEAD].copy_from_slice(&self.count.to_le_bytes());
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The poses pushed so far.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The pose payloads of a bundle whose frame `split_bundle` checked, in order.
#[derive(Debug, Clone)]
pub struct BundlePoses<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for BundlePoses<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (len, rest) = self.rest.split_first_chunk::<4>()?;
        let (pose, rest) = rest.split_at_checked(u32::from_le_bytes(*len) as usize)?;
        self.rest = rest;
        Some(pose)
    }
}

/// Checks a bundle's frame and gives its pose payloads (each still untrusted: read
/// it with `decode_pose`).
pub fn split_bundle(bytes: &[u8]) -> Result<BundlePoses<'_>, DecodeError> {
    let head = bytes
        .first_chunk::<HEAD>()
        .ok_or(DecodeError::Truncated { at: bytes.len() })?;
    if head[..4] != BUNDLE_MAGIC {
        return Err(DecodeError::BadMagic);
    }
    if head[4] != BUNDLE_VERSION {
        return Err(DecodeError::Version(head[4]));
    }
    let count = u16::from_le_bytes([head[5], head[6]]);
    let poses = BundlePoses {
        rest: &bytes[HEAD..],
    };
    let mut walk = poses.clone();
    for _ in 0..count {
        if walk.next().is_none() {
            return Err(DecodeError::Truncated { at: bytes.len() });
        }
    }
    match walk.rest.len() {
        0 => Ok(poses),
        extra => Err(DecodeError::TrailingBytes { extra }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::{CustomNames, LookAt};
    use crate::protocol::frame::PerformerName;
    use crate::protocol::nats::decode_pose;

    fn bundle(poses: &[&[u8]]) -> Vec<u8> {
        let mut writer = BundleWriter::default();
        for pose in poses {
            assert!(writer.fits(pose, usize::MAX));
            writer.push(pose);
        }
        assert_eq!(writer.len(), poses.len());
        writer.as_bytes().to_vec()
    }

    #[test]
    fn poses_come_back_in_order_and_unchanged() {
        let poses: [&[u8]; 3] = [b"first", b"", b"third pose"];
        let bytes = bundle(&poses);
        assert_eq!(bytes[..7], [b'M', b'B', b'P', b'B', 1, 3, 0]);
        let got: Vec<&[u8]> = split_bundle(&bytes).unwrap().collect();
        assert_eq!(got, poses);
        assert_eq!(split_bundle(&bundle(&[])).unwrap().count(), 0);
    }

    #[test]
    fn a_cleared_writer_starts_again_and_a_full_one_says_so() {
        let mut writer = BundleWriter::default();
        writer.push(b"old");
        writer.clear();
        assert!(writer.is_empty());
        writer.push(b"new");
        assert_eq!(
            split_bundle(writer.as_bytes()).unwrap().collect::<Vec<_>>(),
            [b"new"]
        );
        // 7 head + 4 + 3 = 14 bytes so far; 4 + 2 more make 20.
        assert!(writer.fits(b"ab", 20));
        assert!(!writer.fits(b"abc", 20));
    }

    #[test]
    fn a_bundle_written_from_the_documented_layout_decodes() {
        // fuzz/seeds.sh writes it with python's struct from docs/nats.md's tables.
        let bytes = include_bytes!("../../../fuzz/corpus/nats/bundle.bin");
        let mut names = CustomNames::default();
        let got: Vec<(PerformerName, u64, f64, Option<LookAt>)> = split_bundle(bytes)
            .unwrap()
            .map(|pose| {
                let (h, p) = decode_pose(pose, |_| &mut names).unwrap();
                (h.performer, h.seq, h.time, p.look_at)
            })
            .collect();
        let name = |s| PerformerName::new(s).unwrap();
        assert_eq!(
            got,
            [
                (name("alice"), 42, 1.25, None),
                (
                    name("b"),
                    7,
                    0.5,
                    Some(LookAt {
                        yaw: 0.2,
                        pitch: -0.1
                    })
                ),
            ]
        );
    }

    #[test]
    fn bad_frames_are_refused_by_kind() {
        let bytes = bundle(&[b"abc", b"de"]);
        let patched = |at: usize, patch: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + patch.len()].copy_from_slice(patch);
            b
        };
        let cases: Vec<(Vec<u8>, DecodeError)> = vec![
            (Vec::new(), DecodeError::Truncated { at: 0 }),
            (b"MBPO\x01\x00\x00".to_vec(), DecodeError::BadMagic),
            (patched(4, &[2]), DecodeError::Version(2)),
            // Three poses announced, two there.
            (patched(5, &[3]), DecodeError::Truncated { at: bytes.len() }),
            // The second pose's length beyond the end.
            (
                patched(14, &[9]),
                DecodeError::Truncated { at: bytes.len() },
            ),
            // One pose announced: the second is trailing.
            (patched(5, &[1]), DecodeError::TrailingBytes { extra: 6 }),
            (
                [bytes.clone(), vec![0]].concat(),
                DecodeError::TrailingBytes { extra: 1 },
            ),
        ];
        for (payload, expected) in cases {
            assert_eq!(split_bundle(&payload).err(), Some(expected), "{expected}");
        }
        for end in 0..bytes.len() {
            assert!(split_bundle(&bytes[..end]).is_err(), "{end}");
        }
    }
}
