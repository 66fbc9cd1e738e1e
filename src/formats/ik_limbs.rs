//! Feet and hands driven by IK that the clips move off the legs and arms
//! (`clips_move_ik_limbs`).
//!
//! A rig whose feet hang outside the legs (from the root, moved by IK targets, as
//! Quaternius' rigs have them), or whose hands hang outside the arms, maps each foot
//! or hand and drives it from its limb: as a source, from the lower leg's or
//! forearm's rotation, at its end (see the `retarget` module header). When an
//! exporter writes the feet's places without baking the IK into the legs' rotations,
//! or a leg stretches to reach its foot, a clip puts a foot where the leg does not:
//! every frame retargeted or converted follows the leg, and the feet land where its
//! rotations put them, off the clip's feet, with nothing to say why. Hands alike.
//! Pure: a rig and a resolved map in, note lines out. Not per frame: `inspect` runs
//! it once.

use glam::Vec3;

use super::Rig;
use crate::humanoid::HumanBone;
use crate::skeleton::BoneMap;

/// A foot this many lower-leg lengths or more from the lower leg's end, in some
/// frame, is off the leg (a hand from the forearm's, off the arm). A baked IK leaves
/// the foot at the leg's end (rounding, a stretch of a few percent); a quarter of the
/// shin is a gap anyone sees.
const OFF_THE_LEG: f32 = 0.25;

/// Heuristic: for each foot hung outside its leg, or hand outside its arm
/// (`BoneMap::detached_bones`), a note when some clip puts it `OFF_THE_LEG` lower-leg
/// (forearm) lengths or more from where the lower leg's (forearm's) rotation puts its
/// end (the foot's rest place in the lower leg's frame): the clip that does most, how
/// far, when, and how many clips do. None for feet in the legs, hands in the arms,
/// rigs without clips and limbs the clips keep at their ends.
#[must_use]
pub fn clips_move_ik_limbs(rig: &Rig, map: &BoneMap) -> Vec<String> {
    let skeleton = &rig.skeleton;
    let rest = skeleton.rest_world();
    let mut notes = Vec::new();
    for detached in map.detached_bones(skeleton) {
        let (kind, whole, segment) = match detached.bone {
            HumanBone::LeftFoot | HumanBone::RightFoot => ("foot", "leg", "lower leg"),
            HumanBone::LeftHand | HumanBone::RightHand => ("hand", "arm", "forearm"),
            _ => continue,
        };
        let (limb, lower) = (detached.joint, detached.anchor);
        // Where the foot (hand) is at rest, in the lower leg's (forearm's) frame: the
        // limb's end. Lengths are the model's (a joint's frame may carry an armature's
        // scale).
        let (at_rest, start) = (
            Vec3::from(rest[limb].translation),
            Vec3::from(rest[lower].translation),
        );
        let end = rest[lower].inverse().transform_point3(at_rest);
        let length = at_rest.distance(start);
        if !length.is_finite() || length <= 0.0 {
            continue;
        }
        // (gap in lower-leg or forearm lengths, clip index, time) of the worst frame,
        // and how many clips have a frame off the limb.
        let mut worst: Option<(f32, usize, f32)> = None;
        let mut clips_off = 0;
        for (c, clip) in rig.clips.iter().enumerate() {
            let motion = &clip.motion;
            let mut off = false;
            for f in 0..motion.frame_count() {
                let frame = motion.frame(f);
                let world = skeleton.world_transforms(frame.rotations, frame.translations);
                let gap = world[lower]
                    .transform_point3(end)
                    .distance(Vec3::from(world[limb].translation))
                    / length;
                if !gap.is_finite() {
                    continue;
                }
                off |= gap >= OFF_THE_LEG;
                if worst.is_none_or(|(g, _, _)| gap > g) {
                    worst = Some((gap, c, motion.times()[f]));
                }
            }
            clips_off += usize::from(off);
        }
        let Some((gap, c, time)) = worst.filter(|&(g, _, _)| g >= OFF_THE_LEG) else {
            continue;
        };
        let joints = skeleton.joints();
        notes.push(format!(
            "the {kind} `{}` hangs outside the {whole} (an IK {kind}) and {} of {} clips move it \
             off the end of `{}`, most `{}`: {:.0}% of the {segment} ({:.1} cm) at {:.2} s; the \
             {kind} follows the {whole}'s rotations, not where the clips put it",
            joints[limb].name,
            clips_off,
            rig.clips.len(),
            joints[lower].name,
            rig.clips[c].name,
            gap * 100.0,
            gap * length * 100.0,
            time
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::inspect::{ChosenMap, Report};
    use crate::formats::skeleton_json::embedded_rig;
    use crate::formats::{Clip, Motion};
    use crate::skeleton::builtin::HUMANOID_JSON;
    use crate::skeleton::{Joint, Skeleton, Transform};

    /// The built-in humanoid under a root at the origin, its left foot (with its
    /// toes) hung from that root where it stands at rest, as an IK foot; one clip of
    /// two frames, the rest and the rest with the left foot moved by `lift` in the
    /// root's space.
    fn ik_rig(lift: Vec3) -> (Rig, BoneMap) {
        ik_rig_of("leftFoot", lift)
    }

    /// `ik_rig` with the joint `limb` (a foot or a hand, with what hangs from it)
    /// hung from the root and moved by `lift`.
    fn ik_rig_of(limb: &str, lift: Vec3) -> (Rig, BoneMap) {
        let reference = embedded_rig("humanoid.json", HUMANOID_JSON);
        let own = reference.skeleton.joints();
        let rest = reference.skeleton.rest_world();
        let foot = reference.skeleton.find(limb).unwrap();
        let mut joints = vec![Joint {
            name: "root".into(),
            parent: None,
            rest: Transform::IDENTITY,
            end: None,
        }];
        joints.extend(own.iter().map(|j| Joint {
            parent: Some(j.parent.map_or(0, |p| p + 1)),
            ..j.clone()
        }));
        let (_, rotation, translation) = rest[foot].to_scale_rotation_translation();
        joints[foot + 1].parent = Some(0);
        joints[foot + 1].rest.rotation = rotation;
        joints[foot + 1].rest.translation = translation;
        let skeleton = Skeleton::new(joints).unwrap();
        let count = skeleton.len();
        let rotations = [skeleton.rest_rotations(), skeleton.rest_rotations()].concat();
        let mut translations =
            [skeleton.rest_translations(), skeleton.rest_translations()].concat();
        translations[count + foot + 1] += lift;
        let motion = Motion::new(vec![0.0, 0.5], count, rotations, translations);
        let map = BoneMap::resolve(reference.bone_map.as_ref().unwrap(), &skeleton).unwrap();
        assert_eq!(
            map.detached_bones(&skeleton).len(),
            1,
            "the {limb} is detached"
        );
        let rig = Rig {
            skeleton,
            bone_map: None,
            map_source: None,
            clips: vec![Clip {
                name: "hit".into(),
                motion,
            }],
            notes: Vec::new(),
            units: crate::formats::Units::Metres,
        };
        (rig, map)
    }

    #[test]
    fn an_ik_foot_a_clip_lifts_off_the_leg_is_a_note() {
        let (rig, map) = ik_rig(Vec3::new(0.0, 0.15, 0.05));
        let notes = clips_move_ik_limbs(&rig, &map);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("the foot `leftFoot` hangs outside the leg")
                && notes[0]
                    .contains("1 of 1 clips move it off the end of `leftLowerLeg`, most `hit`")
                && notes[0].contains("(15.8 cm) at 0.50 s"),
            "{notes:?}"
        );
        // `inspect` prints it among its notes.
        let chosen = ChosenMap::new("test".into(), map.to_named(&rig.skeleton));
        let report = Report::new("ik.glb", &rig, Some(&chosen)).to_string();
        assert!(report.contains(&format!("note: {}", notes[0])), "{report}");
    }

    #[test]
    fn an_ik_hand_a_clip_moves_off_the_arm_is_a_note() {
        let (rig, map) = ik_rig_of("leftHand", Vec3::new(0.0, 0.1, 0.0));
        let notes = clips_move_ik_limbs(&rig, &map);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("the hand `leftHand` hangs outside the arm (an IK hand)")
                && notes[0].contains("move it off the end of `leftLowerArm`, most `hit`")
                && notes[0].contains("of the forearm (10.0 cm) at 0.50 s")
                && notes[0].contains("the hand follows the arm's rotations"),
            "{notes:?}"
        );
        let (rig, map) = ik_rig_of("leftHand", Vec3::new(0.0, 0.01, 0.0));
        assert_eq!(clips_move_ik_limbs(&rig, &map), Vec::<String>::new());
    }

    #[test]
    fn an_ik_foot_the_clips_keep_at_the_leg_and_no_clip_are_no_note() {
        let (rig, map) = ik_rig(Vec3::new(0.0, 0.01, 0.0));
        assert_eq!(clips_move_ik_limbs(&rig, &map), Vec::<String>::new());
        let (mut rig, map) = ik_rig(Vec3::new(0.0, 0.3, 0.0));
        rig.clips.clear();
        assert_eq!(clips_move_ik_limbs(&rig, &map), Vec::<String>::new());
    }
}
