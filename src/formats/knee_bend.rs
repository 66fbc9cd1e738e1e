//! Which way a rig faces, told from its clips: knees bend forward
//! (`front_from_knees`).
//!
//! A rest pose with no toes, no eyes and straight legs shows no front, and the
//! recognizer then takes the sides from the names, which lie on some rigs (a
//! generated figure naming its right side `L_`). A clip that bends the knees shows
//! the front: a knee bends one way only, its joint coming forward of the line from
//! the hip to the ankle, whatever way the hips turn. Pure: a rig and a resolved map
//! in, a direction out. Not per frame: `inspect::choose_map` runs it once, when the
//! rest pose showed no front.

use glam::Vec3;

use super::Rig;
use crate::humanoid::HumanBone;
use crate::skeleton::BoneMap;

/// A knee counts where the shin turns off the thigh's line by this much or more
/// (radians; 25°): past what a standing leg's rest or a clip's noise gives.
const BENT: f32 = 0.44;

/// The deepest bend (radians; 60°) the knees must reach the way they agree on: a
/// crouch, a seat, a run's swing. A knee that a depth camera or a video estimates
/// wanders up to 40° off straight on a figure standing still (Kinect takes, bent
/// backward by their names), and never so far.
const DEEP: f32 = 1.05;

/// Bent knees (legs times frames) needed before the clips say anything.
const ENOUGH: usize = 10;

/// The mean agreement (cosine, -1 to 1) of the bent knees' hinges with the body's
/// left, or more against it, needed before the clips say anything: knees bending
/// every way (a leg twisted round, a cartoon's joints turned any way) say nothing.
const AGREE: f32 = 0.5;

/// Heuristic: where the body of `rig` faces at rest (horizontal, unit, in the rest's
/// model space), as its clips bend the knees. A knee bends one way: the thigh turns
/// into the shin about the body's left (thigh × shin points left, whether the figure
/// stands, sits or lies, and whatever way the hips turn). Over every frame of every
/// clip, each knee bent by `BENT` or more has that hinge compared with the left
/// `map` gives the body in that frame (from its right hip to its left); when
/// `ENOUGH` bent knees agree with it, or disagree, by `AGREE` on average, and one of
/// them bends that way by `DEEP` or more, the front is the map's front at rest, or
/// its back. None when the map has no legs, the clips bend no knee so far, or the
/// knees do not agree.
#[must_use]
pub fn front_from_knees(rig: &Rig, map: &BoneMap) -> Option<Vec3> {
    use HumanBone as B;
    let leg = |bones: [HumanBone; 3]| -> Option<[usize; 3]> {
        let [u, k, a] = bones.map(|bone| map.joint(bone));
        Some([u?, k?, a?])
    };
    let legs = [
        leg([B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot])?,
        leg([B::RightUpperLeg, B::RightLowerLeg, B::RightFoot])?,
    ];
    let skeleton = &rig.skeleton;
    let (mut agreement, mut bent) = (0.0_f32, 0_usize);
    // The deepest bend about the map's left, and about its right.
    let mut deepest = [0.0_f32; 2];
    for clip in &rig.clips {
        let motion = &clip.motion;
        for f in 0..motion.frame_count() {
            let frame = motion.frame(f);
            let world = skeleton.world_transforms(frame.rotations, frame.translations);
            let at = |j: usize| Vec3::from(world[j].translation);
            let Some(left) = (at(legs[0][0]) - at(legs[1][0])).try_normalize() else {
                continue;
            };
            for [u, k, a] in legs {
                let (thigh, shin) = (at(k) - at(u), at(a) - at(k));
                let (hinge, angle) = (
                    thigh.cross(shin).normalize_or_zero(),
                    thigh.angle_between(shin),
                );
                if angle >= BENT && hinge != Vec3::ZERO {
                    let along = hinge.dot(left);
                    let side = usize::from(along < 0.0);
                    deepest[side] = deepest[side].max(angle);
                    agreement += along;
                    bent += 1;
                }
            }
        }
    }
    if bent < ENOUGH {
        return None;
    }
    let mean = agreement / bent as f32;
    let rest = skeleton.rest_world();
    let left = Vec3::from(rest[legs[0][0]].translation - rest[legs[1][0]].translation);
    // Left at +X with +Y up faces +Z.
    let front = Vec3::new(left.x, 0.0, left.z)
        .cross(Vec3::Y)
        .try_normalize()?;
    if mean >= AGREE && deepest[0] >= DEEP {
        Some(front)
    } else if mean <= -AGREE && deepest[1] >= DEEP {
        Some(-front)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::inspect::choose_map;
    use crate::formats::{Clip, Motion, Units};
    use crate::skeleton::{Joint, Skeleton, Transform};
    use glam::Quat;

    /// A generated figure facing +Z with no toes, no eyes and straight legs, which
    /// names its right side (at -X) `L_` and its left `R_`.
    const FIGURE: [(&str, &str, [f32; 3]); 16] = [
        ("Root", "", [0.0, 0.95, 0.0]),
        ("Spine", "Root", [0.0, 1.1, 0.0]),
        ("Chest", "Spine", [0.0, 1.3, 0.0]),
        ("Head", "Chest", [0.0, 1.55, 0.0]),
        ("L_Shoulder", "Chest", [-0.2, 1.45, 0.0]),
        ("L_Elbow", "L_Shoulder", [-0.2, 1.17, 0.0]),
        ("L_Hand", "L_Elbow", [-0.2, 0.92, 0.0]),
        ("R_Shoulder", "Chest", [0.2, 1.45, 0.0]),
        ("R_Elbow", "R_Shoulder", [0.2, 1.17, 0.0]),
        ("R_Hand", "R_Elbow", [0.2, 0.92, 0.0]),
        ("L_Hip", "Root", [-0.1, 0.9, 0.0]),
        ("L_Knee", "L_Hip", [-0.1, 0.48, 0.0]),
        ("L_Foot", "L_Knee", [-0.1, 0.06, 0.0]),
        ("R_Hip", "Root", [0.1, 0.9, 0.0]),
        ("R_Knee", "R_Hip", [0.1, 0.48, 0.0]),
        ("R_Foot", "R_Knee", [0.1, 0.06, 0.0]),
    ];

    /// `FIGURE` with one clip of `frames` frames, each bending both knees by `bend`
    /// radians toward +Z (thighs forward, shins back).
    fn figure(frames: usize, bend: f32) -> Rig {
        let joints: Vec<Joint> = FIGURE
            .iter()
            .map(|&(name, parent, at)| {
                let parent = FIGURE.iter().position(|&(n, ..)| n == parent);
                let from = parent.map_or(Vec3::ZERO, |p| Vec3::from(FIGURE[p].2));
                Joint {
                    name: name.into(),
                    parent,
                    rest: Transform {
                        translation: Vec3::from(at) - from,
                        ..Transform::IDENTITY
                    },
                    end: None,
                }
            })
            .collect();
        let skeleton = Skeleton::new(joints).expect("a skeleton");
        let count = skeleton.len();
        let mut rotations = Vec::new();
        let mut translations = Vec::new();
        for _ in 0..frames {
            let mut pose = skeleton.rest_rotations();
            for (name, turn) in [("Hip", -bend), ("Knee", 2.0 * bend)] {
                for side in ["L_", "R_"] {
                    let j = skeleton
                        .find(&format!("{side}{name}"))
                        .expect("a leg joint");
                    pose[j] = Quat::from_rotation_x(turn);
                }
            }
            rotations.extend(pose);
            translations.extend(skeleton.rest_translations());
        }
        let times = (0..frames).map(|f| f as f32 / 30.0).collect();
        Rig {
            skeleton,
            bone_map: None,
            map_source: None,
            clips: vec![Clip {
                name: "crouch".into(),
                motion: Motion::new(times, count, rotations, translations),
            }],
            notes: Vec::new(),
            units: Units::Metres,
        }
    }

    fn left_hip(rig: &Rig) -> (String, Vec<String>) {
        let chosen = choose_map(rig, None).expect("a map");
        (
            chosen.map.bones[&HumanBone::LeftUpperLeg].clone(),
            chosen.notes,
        )
    }

    #[test]
    fn knees_the_clips_bend_tell_the_sides_where_the_rest_shows_no_front() {
        let (hip, notes) = left_hip(&figure(12, 0.6));
        assert_eq!(hip, "R_Hip", "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("from the knees as the clips bend them")),
            "{notes:?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("swapped in the names")),
            "{notes:?}"
        );
    }

    #[test]
    fn straight_legs_or_too_few_bent_knees_leave_the_sides_to_the_names() {
        // Knees bent 5.7°, 29° (past `BENT`, short of `DEEP`), and 69° in 4 frames
        // only.
        for (frames, bend) in [(30, 0.05), (30, 0.25), (4, 0.6)] {
            let (hip, notes) = left_hip(&figure(frames, bend));
            assert_eq!(hip, "L_Hip", "{frames} frames at {bend}: {notes:?}");
            assert!(
                notes.iter().any(|n| n.contains("from the names")),
                "{notes:?}"
            );
        }
    }
}
