//! A rig whose rest stands as no body while its clips do: Ready Player Me's
//! animation files hold a frame of the motion in their nodes (a stride, the feet
//! apart in height), which the recognizer refuses. The rest is then taken from the
//! clips, as a BVH rest is from its motion (`bvh::rest_frame`): among frames sampled
//! evenly over every clip, the one the recognizer is surest of, with a note. A frame
//! standing with only limbs hung outside the hips (hands or feet moved by IK) counts:
//! its map drives them from the body (`NotHumanoid::limbs_outside`). When no frame
//! stands (a run: one foot always high), a clip's mean pose over its sampled frames
//! (`formats::mean_pose`) may: the strides average out to a body standing.
//!
//! Only for a rig that declares no humanoid map; a rig that never stands as a body
//! (a quadruped, a vehicle) keeps its rest and is refused as before, and so does one
//! refused whatever its pose (`NotHumanoid::any_pose`): a many-legged body, though a
//! frame with all but two legs lifted might pass for a biped, and a hand split per
//! finger, though a frame may swing one palm chain out where the recognizer takes it
//! for the hand. Pure: runs on the skeleton and clips `mod.rs` has read.

use super::super::mean_pose::mean_pose;
use super::super::{Clip, FrameRef};
use crate::humanoid::bone::REQUIRED;
use crate::skeleton::{Joint, Recognition, Skeleton, Transform, recognize};

/// Most frames looked at over all clips, spread evenly over each.
const FRAMES_SAMPLED: usize = 64;

/// What the clips give a rest that stands as no body.
#[derive(Debug)]
pub(super) enum ClipRest {
    /// The rest stands, or is refused in any pose or with only limbs outside the
    /// hips: the clips are not looked at.
    NotLooked,
    /// The skeleton with the clip frame that stands as a body most surely as its
    /// rest, and the note saying so.
    Frame(Skeleton, String),
    /// No sampled frame stands either: the note says so, and, for a rig of joints
    /// enough for VRM's required bones, that `--rest-from` gives a body that never
    /// stands up in its clips (a crawl, a flight) another file's rest.
    NoFrame(String),
}

/// The rest the clips give `skeleton` (see `ClipRest`).
pub(super) fn rest_from_clips(skeleton: &Skeleton, clips: &[Clip]) -> ClipRest {
    let Recognition::NotHumanoid(refused) = recognize(skeleton) else {
        return ClipRest::NotLooked;
    };
    if refused.any_pose || refused.limbs_outside.is_some() {
        // Refused in any pose, or the rest stands with only limbs outside the hips.
        return ClipRest::NotLooked;
    }
    let total: usize = clips.iter().map(|c| c.motion.frame_count()).sum();
    let step = total.div_ceil(FRAMES_SAMPLED).max(1);
    let mut sampled = 0;
    let mut best: Option<(f32, Skeleton, &str, usize)> = None;
    for clip in clips {
        for i in (0..clip.motion.frame_count()).step_by(step) {
            let Some(posed) = posed(skeleton, clip.motion.frame(i)) else {
                continue;
            };
            sampled += 1;
            if let Some(sure) = how_sure(&posed)
                && best.as_ref().is_none_or(|(surest, ..)| sure > *surest)
            {
                best = Some((sure, posed, &clip.name, i));
            }
        }
    }
    if best.is_none() {
        // No frame stands: each clip's mean pose over its sampled frames may.
        let mut surest_mean: Option<(f32, Skeleton, &str, usize)> = None;
        for clip in clips {
            let frames = (0..clip.motion.frame_count()).step_by(step);
            let count = frames.len();
            let Some((rotations, translations)) = mean_pose(frames.map(|i| clip.motion.frame(i)))
            else {
                continue;
            };
            let frame = FrameRef {
                rotations: &rotations,
                translations: &translations,
            };
            if let Some(posed) = posed(skeleton, frame)
                && let Some(sure) = how_sure(&posed)
                && surest_mean
                    .as_ref()
                    .is_none_or(|(surest, ..)| sure > *surest)
            {
                surest_mean = Some((sure, posed, &clip.name, count));
            }
        }
        if let Some((_, posed, clip, count)) = surest_mean {
            return ClipRest::Frame(
                posed,
                format!(
                    "rest: the nodes' pose stands as no body ({}), nor does any of the \
                     {sampled} frames sampled from the clips, so the rest is the mean pose of \
                     {count} frames of clip `{clip}` (a run's strides average out to a body \
                     standing)",
                    refused.reason
                ),
            );
        }
    }
    match best {
        Some((_, posed, clip, frame)) => ClipRest::Frame(
            posed,
            format!(
                "rest: the nodes' pose stands as no body ({}), so the rest is frame {frame} of \
                 clip `{clip}`, the frame sampled from the clips that the recognizer is surest \
                 of",
                refused.reason
            ),
        ),
        None if sampled > 0 && skeleton.len() >= REQUIRED.len() => ClipRest::NoFrame(format!(
            "rest: the nodes' pose stands as no body ({}), nor does any of the {sampled} \
             frames sampled from the clips, as in a clip that never stands up (a crawl, a \
             flight); `--rest-from` reads it against the rest of another file of the same \
             skeleton",
            refused.reason
        )),
        None => ClipRest::NotLooked,
    }
}

/// How sure the recognizer is of `posed` standing as a body (its mean confidence),
/// counting a body with only limbs outside the hips; `None` when it does not stand.
fn how_sure(posed: &Skeleton) -> Option<f32> {
    match recognize(posed) {
        Recognition::Humanoid(r) => Some(r.confidence()),
        Recognition::NotHumanoid(n) => n.limbs_outside.map(|r| r.confidence()),
    }
}

/// `skeleton` with `frame` as its rest (each joint's scale kept).
fn posed(skeleton: &Skeleton, frame: FrameRef) -> Option<Skeleton> {
    let joints: Vec<Joint> = skeleton
        .joints()
        .iter()
        .enumerate()
        .map(|(k, joint)| {
            Some(Joint {
                rest: Transform {
                    translation: *frame.translations.get(k)?,
                    rotation: *frame.rotations.get(k)?,
                    scale: joint.rest.scale,
                },
                ..joint.clone()
            })
        })
        .collect::<Option<_>>()?;
    Skeleton::new(joints).ok()
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::formats::Motion;

    /// A figure standing in a T-pose, facing +Z: (name, parent, model-space
    /// position), metres.
    const FIGURE: [(&str, Option<usize>, [f32; 3]); 19] = [
        ("Hips", None, [0.0, 1.0, 0.0]),
        ("Spine", Some(0), [0.0, 1.15, 0.0]),
        ("Chest", Some(1), [0.0, 1.3, 0.0]),
        ("Neck", Some(2), [0.0, 1.5, 0.0]),
        ("Head", Some(3), [0.0, 1.6, 0.0]),
        ("LeftArm", Some(2), [0.18, 1.45, 0.0]),
        ("LeftForeArm", Some(5), [0.46, 1.45, 0.0]),
        ("LeftHand", Some(6), [0.71, 1.45, 0.0]),
        ("RightArm", Some(2), [-0.18, 1.45, 0.0]),
        ("RightForeArm", Some(8), [-0.46, 1.45, 0.0]),
        ("RightHand", Some(9), [-0.71, 1.45, 0.0]),
        ("LeftUpLeg", Some(0), [0.1, 0.95, 0.0]),
        ("LeftLeg", Some(11), [0.1, 0.5, 0.0]),
        ("LeftFoot", Some(12), [0.1, 0.08, 0.0]),
        ("LeftToeBase", Some(13), [0.1, 0.0, 0.12]),
        ("RightUpLeg", Some(0), [-0.1, 0.95, 0.0]),
        ("RightLeg", Some(15), [-0.1, 0.5, 0.0]),
        ("RightFoot", Some(16), [-0.1, 0.08, 0.0]),
        ("RightToeBase", Some(17), [-0.1, 0.0, 0.12]),
    ];

    /// The figure's local translations, standing, or with the left thigh raised
    /// level ahead (the knee 45 cm forward, the foot hanging from it).
    fn translations(raised: bool) -> Vec<Vec3> {
        let mut local: Vec<Vec3> = FIGURE
            .iter()
            .map(|&(_, parent, at)| {
                Vec3::from(at) - parent.map_or(Vec3::ZERO, |p| FIGURE[p].2.into())
            })
            .collect();
        if raised {
            local[12] = Vec3::new(0.0, 0.0, 0.45);
        }
        local
    }

    fn figure(raised: bool) -> Skeleton {
        let joints = FIGURE
            .iter()
            .zip(translations(raised))
            .map(|(&(name, parent, _), t)| Joint {
                name: name.to_owned(),
                parent,
                rest: Transform::from_translation(t),
                end: None,
            })
            .collect();
        Skeleton::new(joints).unwrap()
    }

    #[test]
    fn nodes_posed_mid_stride_rest_on_the_clip_frame_that_stands() {
        // The nodes hold a stride (the left foot 45 cm up): no body. The clip's
        // second frame stands, and becomes the rest.
        let striding = figure(true);
        assert!(matches!(recognize(&striding), Recognition::NotHumanoid(_)));
        let n = FIGURE.len();
        let frames = [true, false, true].map(translations).concat();
        let clip = Clip {
            name: "walk".into(),
            motion: Motion::new(vec![0.0, 0.5, 1.0], n, vec![Quat::IDENTITY; 3 * n], frames),
        };
        let ClipRest::Frame(rest, note) = rest_from_clips(&striding, std::slice::from_ref(&clip))
        else {
            panic!("no rest from the clip");
        };
        assert!(note.contains("frame 1 of clip `walk`"), "{note}");
        assert_eq!(rest.joints()[12].rest.translation, translations(false)[12]);
        let Recognition::Humanoid(r) = recognize(&rest) else {
            panic!("the rest does not stand");
        };
        assert_eq!(
            r.map.bones[&crate::humanoid::HumanBone::LeftLowerLeg],
            "LeftLeg"
        );
        // A rest that stands is kept; a clip that never stands gives none.
        assert!(matches!(
            rest_from_clips(&figure(false), std::slice::from_ref(&clip)),
            ClipRest::NotLooked
        ));
        let striding_clip = Clip {
            name: "stride".into(),
            motion: Motion::new(vec![0.0], n, vec![Quat::IDENTITY; n], translations(true)),
        };
        assert!(matches!(
            rest_from_clips(&striding, &[striding_clip]),
            ClipRest::NoFrame(_)
        ));
    }

    #[test]
    fn a_clip_frame_standing_with_hands_driven_from_the_arms_is_the_rest() {
        // A game rig: under a root joint, each arm a collar, an upper arm and a
        // forearm; the hands hang from the root (moved by IK) at the forearms' ends.
        // The nodes hold a stride; a clip frame standing so is a body with hands
        // outside the arms, which the map drives from the arms.
        let mut table: Vec<(String, String, [f32; 3])> = [
            ("Root", "", [0.0, 0.0, 0.0]),
            ("Hips", "Root", [0.0, 1.0, 0.0]),
            ("Spine", "Hips", [0.0, 1.15, 0.0]),
            ("Chest", "Spine", [0.0, 1.3, 0.0]),
            ("Neck", "Chest", [0.0, 1.5, 0.0]),
            ("Head", "Neck", [0.0, 1.6, 0.0]),
        ]
        .map(|(name, parent, at)| (name.to_owned(), parent.to_owned(), at))
        .to_vec();
        for (side, x) in [("Left", 1.0f32), ("Right", -1.0)] {
            for (part, parent, [px, py, pz]) in [
                ("Shoulder", "Chest", [0.04, 1.45, 0.0]),
                ("Arm", "Shoulder", [0.18, 1.45, 0.0]),
                ("ForeArm", "Arm", [0.46, 1.45, 0.0]),
                ("Hand", "Root", [0.71, 1.45, 0.0]),
                ("UpLeg", "Hips", [0.1, 0.95, 0.0]),
                ("Leg", "UpLeg", [0.1, 0.5, 0.0]),
                ("Foot", "Leg", [0.1, 0.08, 0.0]),
                ("ToeBase", "Foot", [0.1, 0.0, 0.12]),
            ] {
                let parent = match parent {
                    "Root" | "Hips" | "Chest" => parent.to_owned(),
                    _ => format!("{side}{parent}"),
                };
                table.push((format!("{side}{part}"), parent, [x * px, py, pz]));
            }
        }
        let index = |name: &str| table.iter().position(|r| r.0 == name);
        let standing: Vec<Vec3> = table
            .iter()
            .map(|(_, parent, at)| {
                Vec3::from(*at) - index(parent).map_or(Vec3::ZERO, |p| table[p].2.into())
            })
            .collect();
        let knee = index("LeftLeg").unwrap();
        let mut striding = standing.clone();
        striding[knee] = Vec3::new(0.0, 0.0, 0.45);
        let joints = table
            .iter()
            .zip(&striding)
            .map(|((name, parent, _), &t)| Joint {
                name: name.clone(),
                parent: index(parent),
                rest: Transform::from_translation(t),
                end: None,
            })
            .collect();
        let rig = Skeleton::new(joints).unwrap();
        assert!(
            matches!(recognize(&rig), Recognition::NotHumanoid(n) if n.limbs_outside.is_none())
        );
        let n = rig.len();
        let clip = Clip {
            name: "idle".into(),
            motion: Motion::new(
                vec![0.0, 0.5],
                n,
                vec![Quat::IDENTITY; 2 * n],
                [striding, standing].concat(),
            ),
        };
        let ClipRest::Frame(rest, note) = rest_from_clips(&rig, std::slice::from_ref(&clip)) else {
            panic!("no rest from the clip");
        };
        assert!(note.contains("frame 1 of clip `idle`"), "{note}");
        let Recognition::NotHumanoid(refused) = recognize(&rest) else {
            panic!("hands outside the arms read as a strict humanoid");
        };
        let map = refused
            .limbs_outside
            .expect("the hands driven from the arms");
        let bones = &map.map.bones;
        assert_eq!(bones[&crate::humanoid::HumanBone::LeftHand], "LeftHand");
        assert_eq!(
            bones[&crate::humanoid::HumanBone::RightUpperArm],
            "RightArm"
        );
    }

    #[test]
    fn a_run_that_stands_in_no_frame_rests_on_its_mean_pose() {
        // A run of two frames: one thigh raised 80° ahead, the other 10° back, then
        // the other way round. In no frame do the feet reach the same level; in the
        // mean both thighs are 35° ahead and the body stands.
        let striding = figure(true);
        let n = FIGURE.len();
        let (ahead, back) = (Quat::from_rotation_x(-1.4), Quat::from_rotation_x(0.17));
        let frame = |left: Quat, right: Quat| {
            let mut rotations = vec![Quat::IDENTITY; n];
            (rotations[11], rotations[15]) = (left, right);
            rotations
        };
        let run = |rotations: Vec<Quat>| Clip {
            name: "run".into(),
            motion: Motion::new(
                vec![0.0, 0.5],
                n,
                rotations,
                [false, false].map(translations).concat(),
            ),
        };
        let clip = run([frame(ahead, back), frame(back, ahead)].concat());
        let ClipRest::Frame(rest, note) = rest_from_clips(&striding, std::slice::from_ref(&clip))
        else {
            panic!("no rest from the run");
        };
        for part in [
            "nor does any of the 2 frames sampled from the clips",
            "the rest is the mean pose of 2 frames of clip `run`",
        ] {
            assert!(note.contains(part), "`{part}` in {note}");
        }
        let thigh = rest.joints()[11].rest.rotation;
        assert!(
            thigh.angle_between(Quat::from_rotation_x(-0.615)) < 1e-4,
            "{thigh}"
        );
        let Recognition::Humanoid(r) = recognize(&rest) else {
            panic!("the mean pose does not stand");
        };
        let bones = &r.map.bones;
        assert_eq!(bones[&crate::humanoid::HumanBone::LeftLowerLeg], "LeftLeg");
        assert_eq!(bones[&crate::humanoid::HumanBone::RightFoot], "RightFoot");
        // A clip raising the same thigh in every frame has no standing mean either.
        let hop = run([frame(ahead, back), frame(ahead, back)].concat());
        assert!(matches!(
            rest_from_clips(&striding, &[hop]),
            ClipRest::NoFrame(_)
        ));
    }

    #[test]
    fn a_clip_that_never_stands_says_so_and_points_to_rest_from() {
        // Every frame strides as the nodes do: the rest stays, and the note names
        // the frames looked at and `--rest-from`.
        let striding = figure(true);
        let n = FIGURE.len();
        let clip = Clip {
            name: "stride".into(),
            motion: Motion::new(
                vec![0.0, 0.5],
                n,
                vec![Quat::IDENTITY; 2 * n],
                [true, true].map(translations).concat(),
            ),
        };
        let ClipRest::NoFrame(note) = rest_from_clips(&striding, std::slice::from_ref(&clip))
        else {
            panic!("a rest from a clip that never stands");
        };
        for part in [
            "the nodes' pose stands as no body (",
            "nor does any of the 2 frames sampled from the clips",
            "a clip that never stands up",
            "`--rest-from` reads it against the rest of another file of the same skeleton",
        ] {
            assert!(note.contains(part), "`{part}` in {note}");
        }
        // Fewer joints than VRM's required bones: no body in any frame, no note.
        let few: Vec<Joint> = striding.joints()[..REQUIRED.len() - 1].to_vec();
        let few = Skeleton::new(few).unwrap();
        let m = few.len();
        let short = Clip {
            name: "stride".into(),
            motion: Motion::new(
                vec![0.0],
                m,
                vec![Quat::IDENTITY; m],
                translations(true)[..m].to_vec(),
            ),
        };
        assert!(matches!(recognize(&few), Recognition::NotHumanoid(n) if !n.any_pose));
        assert!(matches!(
            rest_from_clips(&few, &[short]),
            ClipRest::NotLooked
        ));
    }

    #[test]
    fn a_many_legged_rig_keeps_its_rest_though_a_frame_lifts_all_but_two_legs() {
        // A radial robot: four legs down around the body, four folded up above it.
        // Its rest is refused in any pose; a frame with two legs lifted would pass
        // for a biped (the upper legs for arms and a head) and is not looked for.
        let mut rows: Vec<(String, Option<usize>, Vec3)> = vec![
            ("body".into(), None, Vec3::new(0.0, 1.0, 0.0)),
            ("upper".into(), Some(0), Vec3::new(0.0, 1.1, 0.0)),
            ("lower".into(), Some(0), Vec3::new(0.0, 0.95, 0.0)),
        ];
        let mut lifted = Vec::new();
        for k in 0..4 {
            let a = std::f32::consts::FRAC_PI_2 * k as f32;
            let (c, s) = (a.cos(), a.sin());
            // (half, its root, joints at (radius, height), the shin and foot lifted).
            let halves = [
                ("up", 1, [(0.1, 1.15), (0.2, 1.5), (0.7, 1.05)], None),
                (
                    "down",
                    2,
                    [(0.1, 0.9), (0.3, 0.5), (0.45, 0.05)],
                    Some([(0.4, 0.9), (0.55, 1.0)]),
                ),
            ];
            for (half, root, points, raised) in halves {
                for (j, (r, y)) in points.into_iter().enumerate() {
                    let parent = if j == 0 { root } else { rows.len() - 1 };
                    if let Some(raised) = raised
                        && j >= 1
                        && k % 2 == 1
                    {
                        let (r, y): (f32, f32) = raised[j - 1];
                        lifted.push((rows.len(), Vec3::new(r * c, y, r * s)));
                    }
                    let at = Vec3::new(r * c, y, r * s);
                    rows.push((format!("{half}_{k}_{j}"), Some(parent), at));
                }
            }
        }
        let locals = |at: &[Vec3]| -> Vec<Vec3> {
            rows.iter()
                .enumerate()
                .map(|(i, (_, parent, _))| at[i] - parent.map_or(Vec3::ZERO, |p| at[p]))
                .collect()
        };
        let standing: Vec<Vec3> = rows.iter().map(|r| r.2).collect();
        let mut raised = standing.clone();
        for &(i, at) in &lifted {
            raised[i] = at;
        }
        let joints = rows
            .iter()
            .zip(locals(&standing))
            .map(|((name, parent, _), t)| Joint {
                name: name.clone(),
                parent: *parent,
                rest: Transform::from_translation(t),
                end: None,
            })
            .collect();
        let robot = Skeleton::new(joints).unwrap();
        let Recognition::NotHumanoid(refused) = recognize(&robot) else {
            panic!("four legs taken for a humanoid");
        };
        assert!(refused.any_pose, "{}", refused.reason);
        let n = rows.len();
        let clip = Clip {
            name: "lift".into(),
            motion: Motion::new(vec![0.0], n, vec![Quat::IDENTITY; n], locals(&raised)),
        };
        assert!(
            matches!(
                recognize(&posed(&robot, clip.motion.frame(0)).unwrap()),
                Recognition::Humanoid(_)
            ),
            "the lifted frame no longer passes for a biped: the test shows nothing"
        );
        assert!(matches!(
            rest_from_clips(&robot, &[clip]),
            ClipRest::NotLooked
        ));
    }
}
