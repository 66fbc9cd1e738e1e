//! Joints moved off their bone by their own position channels. Perception Neuron's
//! Axis software exports "with displacement" write six channels on every joint, and
//! each frame's position of a knee or an elbow strays from its `OFFSET` by a few
//! millimetres to a centimetre and a half: the bone into that joint points a degree
//! or three away from where the parent's rotation turns the `OFFSET`. A retarget
//! carries rotations only, so an avatar's limb would miss the capture's by that turn.
//!
//! `Displaced` moves that turn into the rotation of the parent, when the joint is
//! the parent's only child: the parent gains the shortest turn taking the joint's
//! rest place (its rest translation) onto its frame place, the joint's translation
//! and rotation get the inverse, so the joint and everything under it stay where the
//! file puts them, and the parent's bone points where the file's does. Only the
//! bone's length, which no rotation holds, stays the file's. A joint at its rest
//! place in a frame (every capture without displacement, position channels holding
//! the `OFFSET` or kept as it) is left exactly as it is.
//!
//! Works on `FilePose`s in file space, before the change to the internal basis (a
//! change of basis keeps products of rotations).

use glam::Vec3;

use super::hierarchy::JointDef;
use super::rest_frame::FilePose;
use crate::skeleton::rest::shortest_arc;

/// Shortest rest or frame translation (file units) that has a direction.
const POINTLESS: f32 = 1e-6;

/// Smallest turn (radians) worth moving: below it the joint is at its rest place.
const UNMOVED: f32 = 1e-5;

/// The joints whose displacement moves into their parent, found once.
pub(super) struct Displaced {
    /// `(joint, parent, rest translation)`, parents before children.
    joints: Vec<(usize, usize, Vec3)>,
}

impl Displaced {
    /// Joints with position channels, not a root, that are their parent's only
    /// child and have a rest place away from it (`rest` holds the rest pose's
    /// translations, file space). `None` when there is none.
    pub(super) fn find(defs: &[JointDef], rest: &FilePose) -> Option<Displaced> {
        let joints: Vec<(usize, usize, Vec3)> = defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.has_position())
            .filter_map(|(j, d)| {
                let parent = d.parent?;
                let only_child = defs.iter().filter(|o| o.parent == Some(parent)).count() == 1;
                let at = *rest.translations.get(j)?;
                (only_child && at.length() > POINTLESS).then_some((j, parent, at))
            })
            .collect();
        (!joints.is_empty()).then_some(Displaced { joints })
    }

    /// Moves each joint's turn off its rest place into its parent; returns whether
    /// any joint was off it in this frame.
    pub(super) fn apply(&self, pose: &mut FilePose) -> bool {
        let mut moved = false;
        for &(j, parent, at) in &self.joints {
            let here = pose.translations[j];
            if here.length() <= POINTLESS {
                continue;
            }
            // Exact for the smallest displacements too: glam's `from_rotation_arc`
            // gives no turn under about 0.04°, which would leave the bone that far off.
            let turn = shortest_arc(at.normalize(), here.normalize());
            // The angle from the sine of its half: `acos` of the scalar part cannot
            // tell the smallest turns from none in f32.
            if 2.0 * turn.xyz().length().asin() < UNMOVED {
                continue;
            }
            // parent' = parent · turn; joint' = turn⁻¹ · joint at turn⁻¹ · here: the
            // joint's world place and rotation are unchanged.
            pose.rotations[parent] = (pose.rotations[parent] * turn).normalize();
            pose.translations[j] = turn.conjugate() * here;
            pose.rotations[j] = (turn.conjugate() * pose.rotations[j]).normalize();
            moved = true;
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use glam::Vec3;

    /// A leg of hips, thigh, knee and ankle, six channels on every joint as Axis
    /// exports with displacement write them; one frame:
    /// the knee bent 40°, the knee displaced `knee` and the ankle `ankle` (cm) off
    /// their `OFFSET`s.
    fn displaced_leg(knee: Vec3, ankle: Vec3) -> String {
        let six = "CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation";
        format!(
            "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 90 0\n  {six}\n  JOINT Thigh\n  {{\n    \
             OFFSET 10 0 0\n    {six}\n    JOINT Knee\n    {{\n      OFFSET 0 -42 0\n      \
             {six}\n      JOINT Ankle\n      {{\n        OFFSET 0 -42 0\n        {six}\n        \
             End Site\n        {{\n          OFFSET 0 -8 15\n        }}\n      }}\n    }}\n  }}\n\
             }}\nMOTION\nFrames: 1\nFrame Time: 0.008\n\
             0 90 0 0 0 0  10 0 0 0 0 0  {} {} {} 0 40 0  {} {} {} 0 0 0\n",
            knee.x,
            -42.0 + knee.y,
            knee.z,
            ankle.x,
            -42.0 + ankle.y,
            ankle.z
        )
    }

    #[test]
    fn a_displaced_joint_turns_its_parent_onto_it_and_stays_in_place() {
        for (knee, ankle) in [
            (Vec3::new(1.4, 0.3, -0.8), Vec3::new(-0.6, 1.1, 1.2)),
            (Vec3::ZERO, Vec3::new(1.5, 0.0, 0.0)),
        ] {
            let rig = rig(&displaced_leg(knee, ankle));
            let at = places(&rig);
            // Every joint is where the file puts it (read as metres): the thigh at
            // (10, 90, 0), the knee displaced, the ankle displaced under the knee
            // turned 40° about +X.
            let thigh = Vec3::new(10.0, 90.0, 0.0);
            let knee_at = thigh + Vec3::new(knee.x, -42.0 + knee.y, knee.z);
            assert!(at[1].abs_diff_eq(thigh, 1e-3), "{at:?}");
            assert!(at[2].abs_diff_eq(knee_at, 1e-3), "{at:?}");
            let shin = glam::Quat::from_rotation_x(40f32.to_radians())
                * Vec3::new(ankle.x, -42.0 + ankle.y, ankle.z);
            assert!(at[3].abs_diff_eq(knee_at + shin, 1e-3), "{at:?}");
            // And the rotations alone carry the bones' directions: each parent's
            // rotation turns the child's rest place onto the child's frame place.
            let frame = motion(&rig).frame(0);
            let joints = rig.skeleton.joints();
            let mut world_rotation = vec![glam::Quat::IDENTITY; joints.len()];
            for (j, joint) in joints.iter().enumerate() {
                let parent = joint
                    .parent
                    .map_or(glam::Quat::IDENTITY, |p| world_rotation[p]);
                world_rotation[j] = parent * frame.rotations[j];
            }
            for (child, parent) in [(2, 1), (3, 2)] {
                let rest = joints[child].rest.translation.normalize();
                let bone = (at[child] - at[parent]).normalize();
                let angle = (world_rotation[parent] * rest)
                    .angle_between(bone)
                    .to_degrees();
                assert!(angle < 1e-3, "joint {child}: {angle}°");
            }
        }
    }

    #[test]
    fn a_joint_displaced_a_hair_turns_its_parent_onto_it_too() {
        // The knee 0.01 cm off its `OFFSET`, across the 42 cm thigh: a 0.014° turn,
        // under the angle glam's `from_rotation_arc` resolves.
        let rig = rig(&displaced_leg(Vec3::new(0.01, 0.0, 0.0), Vec3::ZERO));
        let at = places(&rig);
        let frame = motion(&rig).frame(0);
        let rest = rig.skeleton.joints()[2].rest.translation.normalize();
        let thigh = frame.rotations[0] * frame.rotations[1] * rest;
        let bone = (at[2] - at[1]).normalize();
        // The sine of the angle: exact for angles `acos` cannot resolve in f32.
        let off = thigh.cross(bone).length().asin().to_degrees();
        assert!(off < 1e-3, "the thigh points {off}° off the knee");
    }

    #[test]
    fn joints_at_their_offsets_are_left_as_the_file_has_them() {
        let rig = rig(&displaced_leg(Vec3::ZERO, Vec3::ZERO));
        let frame = motion(&rig).frame(0);
        assert!(same_rotation(frame.rotations[1], glam::Quat::IDENTITY));
        assert!(same_rotation(
            frame.rotations[2],
            glam::Quat::from_rotation_x(40f32.to_radians())
        ));
        assert!(same_rotation(frame.rotations[3], glam::Quat::IDENTITY));
    }
}
