//! What the journal tests share: random poses with every kind of field, a pose's
//! every bit, a header, a take whose custom names change, and journals written to
//! a temporary file and read back from their bytes.

use std::fs;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use glam::{Quat, Vec3};

use super::JournalError;
use super::format::JournalHeader;
use super::reader::{JournalEnd, JournalReader};
use super::writer::JournalWriter;
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::ALL;
use crate::humanoid::expression::CUSTOM_CAPACITY;
use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};

/// xorshift64*: deterministic random poses without a dependency.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// In [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    fn signed(&mut self) -> f32 {
        // Now and then an exact -0.0, whose sign must survive too.
        if self.chance(0.05) {
            -0.0
        } else {
            self.unit() * 2.0 - 1.0
        }
    }
}

/// A pose with every kind of field set, some bones, expressions and the lookAt
/// absent; custom weights also in slots no name covers.
pub(super) fn random_pose(rng: &mut Rng) -> HumanoidPose {
    let mut pose = HumanoidPose::default();
    for bone in ALL {
        if rng.chance(0.7) {
            let axis = Vec3::new(rng.signed(), rng.signed(), rng.signed() + 2.0);
            let q = Quat::from_axis_angle(axis.normalize(), rng.signed() * 3.0);
            pose.set_rotation(bone, q);
        }
    }
    pose.hips_position = Vec3::new(rng.signed(), rng.unit() + 0.5, rng.signed());
    pose.rest_hips_height = 0.8 + rng.unit() * 0.2;
    for preset in Preset::all() {
        if rng.chance(0.4) {
            pose.expressions.set_preset(preset, rng.unit());
        }
    }
    for slot in 0..CUSTOM_CAPACITY {
        if rng.chance(0.3) {
            pose.expressions.set_custom(slot, rng.unit());
        }
    }
    if rng.chance(0.6) {
        pose.look_at = Some(LookAt {
            yaw: rng.signed(),
            pitch: rng.signed() * 0.5,
        });
    }
    pose
}

/// Every bit of a pose that its public accessors show.
pub(super) fn bits(pose: &HumanoidPose) -> Vec<u32> {
    let mut out = vec![
        pose.present_mask() as u32,
        (pose.present_mask() >> 32) as u32,
    ];
    for bone in ALL {
        out.extend(pose.rotation_or_identity(bone).to_array().map(f32::to_bits));
    }
    out.extend(pose.hips_position.to_array().map(f32::to_bits));
    out.push(pose.rest_hips_height.to_bits());
    for preset in Preset::all() {
        out.push(
            pose.expressions
                .preset(preset)
                .map_or(u32::MAX, f32::to_bits),
        );
    }
    for slot in 0..CUSTOM_CAPACITY {
        out.push(pose.expressions.custom(slot).map_or(u32::MAX, f32::to_bits));
    }
    match pose.look_at {
        None => out.push(u32::MAX),
        Some(l) => out.extend([l.yaw.to_bits(), l.pitch.to_bits()]),
    }
    out
}

pub(super) fn header() -> JournalHeader {
    let mut rest = VrmaRest::standard(0.93);
    rest.look_at_offset = Some(Vec3::new(0.0, 0.06, 0.09));
    JournalHeader {
        performer: "Ａｉ (stage left)".into(),
        animation: "take 7".into(),
        rest,
        created: UNIX_EPOCH + Duration::new(1_767_000_000, 123_456_789),
    }
}

/// A take of `count` random frames, 1/60 s apart, whose custom names grow at
/// frames 5 and 12 and are replaced by another table at frame 20.
pub(super) fn take(count: usize) -> Vec<(f32, HumanoidPose, CustomNames)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut names = CustomNames::default();
    (0..count)
        .map(|i| {
            match i {
                5 => {
                    names.slot_or_insert("smirk");
                }
                12 => {
                    names.slot_or_insert("tongue out");
                    names.slot_or_insert("ウインク");
                }
                20 => {
                    names = CustomNames::default();
                    names.slot_or_insert("wink");
                }
                _ => {}
            }
            (i as f32 / 60.0, random_pose(&mut rng), names.clone())
        })
        .collect()
}

/// Writes `frames` to a fresh journal, flushing after each; returns the file's
/// bytes and where each record group (header, then each frame with the names
/// record before it) ends.
pub(super) fn journal_bytes(frames: &[(f32, HumanoidPose, CustomNames)]) -> (Vec<u8>, Vec<usize>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("take.vrma.journal");
    let mut writer = JournalWriter::create(&path, &header()).unwrap();
    let mut ends = vec![fs::metadata(&path).unwrap().len() as usize];
    for (time, pose, names) in frames {
        writer.append(*time, pose, names).unwrap();
        writer.flush().unwrap();
        ends.push(fs::metadata(&path).unwrap().len() as usize);
    }
    (fs::read(&path).unwrap(), ends)
}

pub(super) fn reader(bytes: &[u8]) -> Result<JournalReader<&[u8]>, JournalError> {
    JournalReader::new(bytes, Path::new("take.journal"))
}

pub(super) fn read_all(bytes: &[u8]) -> (Vec<(f32, HumanoidPose)>, JournalEnd) {
    let mut r = reader(bytes).unwrap();
    let mut frames = Vec::new();
    while let Some(frame) = r.next_frame().unwrap() {
        frames.push(frame);
    }
    (frames, r.end().unwrap())
}
