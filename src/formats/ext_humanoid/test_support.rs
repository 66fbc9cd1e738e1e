//! What the `EXT_skeleton_humanoid` unit tests share: a recorded performance and
//! a precise angle between rotations.

use glam::Quat;

use super::ExtHumanoidWriter;
use crate::formats::vrma::VrmaRest;
use crate::humanoid::HumanoidPose;

pub(super) fn performance() -> (ExtHumanoidWriter, Vec<(f32, HumanoidPose)>) {
    let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "test take");
    let mut frames = Vec::new();
    for i in 0..40 {
        let t = i as f32 / 30.0;
        let pose = crate::takes::demo::pose_at(t, 0.9);
        writer.push(t, &pose).unwrap();
        frames.push((t, pose));
    }
    (writer, frames)
}

/// Angle between two rotations, radians; precise for tiny angles, where
/// `Quat::angle_between`'s acos is not (its f32 resolution is about 3e-4 rad).
pub(super) fn rotation_angle(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}
