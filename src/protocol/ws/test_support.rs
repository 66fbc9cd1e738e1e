//! What the WebSocket codec's tests share: random poses (every float, tiny and
//! huge ones included, now and then), a table of awkward custom expression names,
//! and a pose's every float as bits, to compare bit for bit.

use glam::{Quat, Vec3};

use super::PoseHeader;
use crate::humanoid::bone::ALL;
use crate::humanoid::expression::CUSTOM_CAPACITY;
use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};
use crate::protocol::frame::PerformerName;

/// splitmix64: deterministic, no dependency.
pub(super) struct Rng(pub(super) u64);

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

pub(super) const CUSTOM: [&str; 6] = [
    "smirk",
    "say \"cheese\"",
    "back\\slash",
    "tab\there\u{1}",
    "ünïcødé 表情",
    "wink",
];

pub(super) fn custom_names() -> CustomNames {
    let mut names = CustomNames::default();
    for name in CUSTOM {
        names.slot_or_insert(name);
    }
    names
}

pub(super) fn random_pose(rng: &mut Rng, everything: bool) -> (PoseHeader, HumanoidPose) {
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
pub(super) fn bits(header: &PoseHeader, pose: &HumanoidPose) -> Vec<u64> {
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
