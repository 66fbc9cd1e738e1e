//! A bone map the rig's clips leave still: the map is on joints no clip moves
//! while the clips move others across the body (`clips_leave_the_map_still`).
//!
//! Some exporters write a clean reference skeleton beside the bones the clips
//! animate. Auto-Rig Pro's glTF export has a `*_ref` tree (`thigh_ref.l`) that
//! stands as a humanoid, and deforming bones (`thigh.l`) hung from control bones,
//! so the recognizer finds the reference tree. Every frame retargeted through such
//! a map is the rest pose, and a converted take would hold one frozen pose with
//! nothing to say why. Pure: a rig and a resolved map in, a problem line out.

use glam::Quat;

use super::Rig;
use crate::skeleton::BoneMap;

/// A joint turned by more than this (radians, 0.2°) from its first frame moves;
/// less is a float's noise in a key that holds.
const TURN: f32 = 0.0035;

/// Unmapped joints that move across at least this share of the figure's height
/// animate a body, not a tail, the hair or a face.
const ACROSS_THE_BODY: f32 = 0.5;

/// Heuristic: why the clips of `rig` leave `map` still, if they do. They do when
/// `rig` has clips, no mapped joint turns in any of them (nor do the hips move),
/// and the joints that turn, none of them mapped, stand (at rest) over at least
/// half the figure's height: those are the body the clips animate. A clip that
/// keys only a tail, the hair or the face moves a small part of the figure and is
/// no such case.
#[must_use]
pub fn clips_leave_the_map_still(rig: &Rig, map: &BoneMap) -> Option<String> {
    if rig.clips.is_empty() {
        return None;
    }
    let skeleton = &rig.skeleton;
    let count = skeleton.len();
    let mut moves = vec![false; count];
    let mut hips_travel = false;
    let hips = map.joint(crate::humanoid::HumanBone::Hips);
    for clip in &rig.clips {
        let motion = &clip.motion;
        if motion.frame_count() == 0 {
            continue;
        }
        let first = motion.frame(0);
        for f in 1..motion.frame_count() {
            let frame = motion.frame(f);
            for (j, moved) in moves.iter_mut().enumerate() {
                *moved |= turned(first.rotations[j], frame.rotations[j]);
            }
            if let Some(h) = hips {
                hips_travel |= (frame.translations[h] - first.translations[h]).length() > 1e-3;
            }
        }
    }
    let mapped = |j: usize| map.bone_of(j).is_some();
    if hips_travel || (0..count).any(|j| moves[j] && mapped(j)) {
        return None;
    }
    let heights: Vec<f32> = skeleton
        .rest_world()
        .iter()
        .map(|w| w.translation.y)
        .collect();
    let span = |joints: &mut dyn Iterator<Item = usize>| {
        let (lo, hi) = joints.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), j| {
            (lo.min(heights[j]), hi.max(heights[j]))
        });
        hi - lo
    };
    let figure = span(&mut (0..count));
    let moving: Vec<usize> = (0..count).filter(|&j| moves[j]).collect();
    if moving.is_empty() || span(&mut moving.iter().copied()) < ACROSS_THE_BODY * figure {
        return None;
    }
    let names: Vec<String> = moving
        .iter()
        .take(3)
        .map(|&j| format!("`{}`", skeleton.joints()[j].name))
        .collect();
    Some(format!(
        "the clips leave the mapped bones still: no mapped joint turns in any clip, while {} \
         other joints ({}{}) turn over the whole body; the map is on a skeleton the clips do \
         not animate (a reference or guide rig): pass --map MAP.json naming the joints that move",
        moving.len(),
        names.join(", "),
        if moving.len() > names.len() {
            ", ..."
        } else {
            ""
        }
    ))
}

/// Whether `to` is turned from `from` by more than `TURN`.
fn turned(from: Quat, to: Quat) -> bool {
    from.normalize().angle_between(to.normalize()) > TURN
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::formats::{Clip, Motion};
    use crate::skeleton::builtin::HUMANOID_JSON;
    use crate::skeleton::{Joint, Skeleton};

    /// The built-in humanoid (mapped) beside a copy of it, `def_*`, not mapped, as
    /// an exporter writes a reference skeleton beside the deforming one; one clip
    /// turns the joints named in `turning`.
    fn rig(turning: &[&str]) -> (Rig, BoneMap) {
        let reference = embedded_rig("humanoid.json", HUMANOID_JSON);
        let own = reference.skeleton.joints();
        let copies = own.iter().map(|j| Joint {
            name: format!("def_{}", j.name),
            parent: Some(j.parent.map_or(0, |p| p + own.len())),
            ..j.clone()
        });
        let mut joints: Vec<Joint> = own.to_vec();
        joints.extend(copies);
        // The copy's root hangs from the reference's hips at the origin.
        joints[own.len()].rest.translation -= own[0].rest.translation;
        let skeleton = Skeleton::new(joints).unwrap();
        let names: Vec<String> = skeleton.joints().iter().map(|j| j.name.clone()).collect();
        let mut rotations = Vec::new();
        for f in 0..3 {
            for name in &names {
                let angle = if turning.contains(&name.as_str()) {
                    0.2 * f as f32
                } else {
                    0.0
                };
                rotations.push(Quat::from_rotation_x(angle));
            }
        }
        let translations = (0..3).flat_map(|_| skeleton.rest_translations()).collect();
        let motion = Motion::new(vec![0.0, 0.1, 0.2], names.len(), rotations, translations);
        let map = BoneMap::resolve(reference.bone_map.as_ref().unwrap(), &skeleton).unwrap();
        let rig = Rig {
            skeleton,
            bone_map: None,
            map_source: None,
            clips: vec![Clip {
                name: "walk".into(),
                motion,
            }],
            notes: Vec::new(),
            units: crate::formats::Units::Metres,
        };
        (rig, map)
    }

    #[test]
    fn a_map_no_clip_moves_beside_a_body_the_clips_move_is_a_problem() {
        let (rig, map) = rig(&["def_hips", "def_head", "def_leftFoot", "def_rightHand"]);
        let problem = clips_leave_the_map_still(&rig, &map).expect("a problem");
        assert!(
            problem.contains("4 other joints (`def_hips`, `def_head`, `def_rightHand`, ...)"),
            "{problem}"
        );
    }

    #[test]
    fn a_moving_map_a_clip_of_the_head_alone_and_no_clip_are_none() {
        let cases: [&[&str]; 3] = [
            &["leftUpperArm", "def_hips", "def_head", "def_leftFoot"],
            &["def_neck", "def_head"],
            &[],
        ];
        for turning in cases {
            let (rig, map) = rig(turning);
            assert_eq!(clips_leave_the_map_still(&rig, &map), None, "{turning:?}");
        }
        let (mut rig, map) = rig(&["def_hips", "def_head", "def_leftFoot"]);
        rig.clips.clear();
        assert_eq!(clips_leave_the_map_still(&rig, &map), None);
    }
}
