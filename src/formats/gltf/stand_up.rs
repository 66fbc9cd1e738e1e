//! A figure written lying along Z: glTF is +Y up, but some writers put a Z-up
//! skeleton into it as it is, with no node above it turning it up (an Unreal
//! skeleton loaded from FBX into three.js and written back by its GLTFExporter; the
//! app turns it at run time), and some turn a Y-up skeleton up once too often (a
//! Sketchfab conversion of an FBX export that already stood along +Y lies on its
//! back, head along -Z). Such a rest is refused as it lies; turned about X (+Z onto
//! +Y, the turn Blender, Unreal and 3ds Max files get on the way into glTF, or -Z
//! onto +Y, undoing the extra turn), it stands. The turn goes onto every root
//! joint's rest and onto its keys in every clip, so the figure and its motion keep
//! their shape; but for clips that stand along +Y as written (`clips_stand`: a 3ds
//! Max Biped's keyed root joint stands the figure in every frame while its node
//! lies), whose keys keep their turn.
//!
//! Only for a rig that declares no humanoid map, is refused as it lies, reaches at
//! least twice as far along Z as along Y, and is recognized once turned: a rig that
//! stands along +Y (refused or not) and a snake or a car lying along Z keep their
//! rest. Pure: runs on the skeleton and clips `mod.rs` has read.

use glam::Quat;

use super::super::Clip;
use crate::skeleton::{Joint, Recognition, Skeleton, Transform, recognize};

/// How much farther the joints must reach along Z than along Y for the rest to be
/// taken as standing along Z (a standing figure is several times taller than deep).
const LYING_RATIO: f32 = 2.0;

/// A figure stood up: the turned skeleton, the note saying so, and the turns.
pub(super) struct StoodUp {
    pub skeleton: Skeleton,
    pub note: String,
    pub turns: Turns,
}

/// The turns that stood a figure up from lying along Z, put onto its root joints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Turns {
    /// Onto the root joints' rest.
    pub rest: Quat,
    /// Onto the root joints' keys in every clip: the rest's, or the identity for
    /// clips that stand as written.
    pub clips: Quat,
}

impl Turns {
    /// A figure that stands as written.
    pub const NONE: Turns = Turns {
        rest: Quat::IDENTITY,
        clips: Quat::IDENTITY,
    };
}

/// The skeleton turned to stand along +Y and the note saying so, with the same turn
/// put onto the root joints' keys in `clips` unless `clips_stand` (a frame of them
/// stands as written); `None` (and `clips` untouched) when the rest does not lie
/// along Z or is no humanoid turned up either way.
pub(super) fn stand_up(
    skeleton: &Skeleton,
    clips: &mut [Clip],
    clips_stand: bool,
) -> Option<StoodUp> {
    // The reach first: a rig standing along +Y is never recognized here.
    let world = skeleton.rest_world();
    let (low, high) = world.iter().fold(
        (
            glam::Vec3A::splat(f32::INFINITY),
            glam::Vec3A::splat(f32::NEG_INFINITY),
        ),
        |(lo, hi), w| (lo.min(w.translation), hi.max(w.translation)),
    );
    let reach = high - low;
    if reach.z < LYING_RATIO * reach.y {
        return None;
    }
    let Recognition::NotHumanoid(refused) = recognize(skeleton) else {
        return None;
    };
    if refused.limbs_outside.is_some() || refused.any_pose {
        // It stands already (only limbs outside the hips), or is no biped at all.
        return None;
    }
    // Z-up as written first (the common case); then a figure turned up once too often.
    let (turned, turn, axis) = [
        (up_turn(), "+Z", "-90°"),
        (up_turn().inverse(), "-Z", "+90°"),
    ]
    .into_iter()
    .find_map(|(turn, up, angle)| {
        let turned = turned_roots(skeleton, turn)?;
        matches!(recognize(&turned), Recognition::Humanoid(_)).then_some((
            turned,
            turn,
            (up, angle),
        ))
    })?;
    let (up, angle) = axis;
    let (turned_clips, how) = match clips_stand {
        false => {
            turn_root_keys(skeleton, clips, turn);
            (turn, "the figure and its clips are turned")
        }
        true => (
            Quat::IDENTITY,
            "its clips stand along +Y as written and keep their keys; the rest is turned",
        ),
    };
    let note = format!(
        "up axis: {up} (the rest reaches {:.2} units along Z and {:.2} along Y, no node turns \
         it to glTF's +Y, and lying it is refused: {}): {how} {angle} about X to stand along +Y",
        reach.z, reach.y, refused.reason
    );
    Some(StoodUp {
        skeleton: turned,
        note,
        turns: Turns {
            rest: turn,
            clips: turned_clips,
        },
    })
}

/// `skeleton` with `turn` put onto its root joints' rest.
fn turned_roots(skeleton: &Skeleton, turn: Quat) -> Option<Skeleton> {
    let joints: Vec<Joint> = skeleton
        .joints()
        .iter()
        .map(|joint| match joint.parent {
            Some(_) => joint.clone(),
            None => Joint {
                rest: Transform {
                    translation: turn * joint.rest.translation,
                    rotation: turn * joint.rest.rotation,
                    scale: joint.rest.scale,
                },
                ..joint.clone()
            },
        })
        .collect();
    Skeleton::new(joints).ok()
}

/// The turn that stands a figure written along +Z up along +Y: -90° about X.
fn up_turn() -> Quat {
    Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2)
}

/// Puts `turn` onto the keys of `skeleton`'s root joints in every clip.
pub(super) fn turn_root_keys(skeleton: &Skeleton, clips: &mut [Clip], turn: Quat) {
    let roots: Vec<bool> = skeleton
        .joints()
        .iter()
        .map(|j| j.parent.is_none())
        .collect();
    for clip in clips {
        clip.motion
            .map_joints(|k, rotation, translation| match roots.get(k) {
                Some(true) => (turn * rotation, turn * translation),
                _ => (rotation, translation),
            });
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::formats::Motion;

    /// A figure in a T-pose facing +Z, +Y up: (name, parent, model-space position),
    /// metres; `root` at the floor above everything, as Unreal's.
    const FIGURE: [(&str, Option<usize>, [f32; 3]); 20] = [
        ("root", None, [0.0, 0.0, 0.0]),
        ("pelvis", Some(0), [0.0, 1.0, 0.0]),
        ("spine_01", Some(1), [0.0, 1.15, 0.0]),
        ("spine_02", Some(2), [0.0, 1.3, 0.0]),
        ("neck_01", Some(3), [0.0, 1.5, 0.0]),
        ("head", Some(4), [0.0, 1.6, 0.0]),
        ("upperarm_l", Some(3), [0.18, 1.45, 0.0]),
        ("lowerarm_l", Some(6), [0.46, 1.45, 0.0]),
        ("hand_l", Some(7), [0.71, 1.45, 0.0]),
        ("upperarm_r", Some(3), [-0.18, 1.45, 0.0]),
        ("lowerarm_r", Some(9), [-0.46, 1.45, 0.0]),
        ("hand_r", Some(10), [-0.71, 1.45, 0.0]),
        ("thigh_l", Some(1), [0.1, 0.95, 0.0]),
        ("calf_l", Some(12), [0.1, 0.5, 0.0]),
        ("foot_l", Some(13), [0.1, 0.08, 0.0]),
        ("ball_l", Some(14), [0.1, 0.0, 0.12]),
        ("thigh_r", Some(1), [-0.1, 0.95, 0.0]),
        ("calf_r", Some(16), [-0.1, 0.5, 0.0]),
        ("foot_r", Some(17), [-0.1, 0.08, 0.0]),
        ("ball_r", Some(18), [-0.1, 0.0, 0.12]),
    ];

    /// The figure with every model-space position put through `to_file` (the
    /// writer's axes), as local translations.
    fn figure(to_file: Quat) -> Skeleton {
        let at = |k: usize| to_file * Vec3::from(FIGURE[k].2);
        let joints = FIGURE
            .iter()
            .enumerate()
            .map(|(k, &(name, parent, _))| Joint {
                name: name.to_owned(),
                parent,
                rest: Transform::from_translation(at(k) - parent.map_or(Vec3::ZERO, at)),
                end: None,
            })
            .collect();
        Skeleton::new(joints).unwrap()
    }

    /// Z-up as Blender, Unreal and 3ds Max write it: +Y onto +Z.
    fn z_up() -> Quat {
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)
    }

    /// One clip of two frames over the figure's rest, the root moved 1 m up (along
    /// the file's up axis) in the second.
    fn clip(skeleton: &Skeleton, up: Vec3) -> Clip {
        let mut rotations = skeleton.rest_rotations();
        rotations.extend(skeleton.rest_rotations());
        let mut translations = skeleton.rest_translations();
        let mut raised = skeleton.rest_translations();
        raised[0] += up;
        translations.extend(raised);
        Clip {
            name: "hop".into(),
            motion: Motion::uniform(1.0 / 30.0, skeleton.len(), rotations, translations),
        }
    }

    #[test]
    fn a_figure_standing_along_z_is_turned_up_with_its_clips() {
        let lying = figure(z_up());
        assert!(matches!(recognize(&lying), Recognition::NotHumanoid(_)));
        let mut clips = vec![clip(&lying, Vec3::Z)];
        let StoodUp {
            skeleton: stood,
            note,
            ..
        } = stand_up(&lying, &mut clips, false).expect("turned up");
        assert!(note.starts_with("up axis: +Z"), "{note}");
        let Recognition::Humanoid(r) = recognize(&stood) else {
            panic!("not recognized once turned");
        };
        assert_eq!(
            r.map
                .bones
                .get(&crate::humanoid::HumanBone::Hips)
                .map(String::as_str),
            Some("pelvis")
        );
        // The turned rest is the figure standing, joint for joint.
        let upright = figure(Quat::IDENTITY).rest_world();
        for (k, w) in stood.rest_world().iter().enumerate() {
            let d = (Vec3::from(w.translation) - Vec3::from(upright[k].translation)).length();
            assert!(d < 1e-5, "{}: {d}", FIGURE[k].0);
        }
        // The root's keys are turned too: the hop goes up +Y, other joints untouched.
        let second = clips[0].motion.frame(1);
        assert!((second.translations[0] - Vec3::Y).length() < 1e-5);
        assert!(second.rotations[0].angle_between(z_up().inverse()) < 1e-3);
        assert_eq!(second.translations[1], lying.joints()[1].rest.translation);
    }

    #[test]
    fn a_z_up_node_hierarchy_loads_standing_and_mapped() {
        // The figure as plain nodes (no skin, no map), written Z-up with nothing
        // above `root` turning it, as three.js writes an Unreal skeleton.
        let doc = document(&figure(z_up()), Quat::IDENTITY);
        let rig = super::super::test_support::parse_doc(&doc).unwrap();
        assert!(
            rig.notes.iter().any(|n| n.starts_with("up axis: +Z")),
            "{:?}",
            rig.notes
        );
        let Recognition::Humanoid(r) = recognize(&rig.skeleton) else {
            panic!("the Z-up figure is not recognized: {:?}", rig.notes);
        };
        let hips = r.map.bones.get(&crate::humanoid::HumanBone::Hips);
        assert_eq!(hips.map(String::as_str), Some("pelvis"));
        let head = super::super::test_support::position(&rig, "head");
        assert!((head - Vec3::new(0.0, 1.6, 0.0)).length() < 1e-5, "{head}");
    }

    /// `figure` as plain nodes of a glTF document, `root` turned by `root`, with a
    /// clip of two keys holding that turn on `root` when `root` is not the identity.
    fn document(figure: &Skeleton, root: Quat) -> serde_json::Value {
        let nodes: Vec<serde_json::Value> = figure
            .joints()
            .iter()
            .enumerate()
            .map(|(k, joint)| {
                let children: Vec<usize> = figure.children(k).collect();
                let t = joint.rest.translation;
                let r = if k == 0 { root } else { Quat::IDENTITY };
                serde_json::json!({"name": joint.name, "translation": [t.x, t.y, t.z],
                    "rotation": [r.x, r.y, r.z, r.w], "children": children})
            })
            .collect();
        let mut doc = serde_json::json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": nodes
        });
        if root != Quat::IDENTITY {
            let floats = [0.0, 1.0 / 30.0]
                .into_iter()
                .chain([root, root].into_iter().flat_map(|q| q.to_array()));
            let bytes: Vec<u8> = floats.flat_map(f32::to_le_bytes).collect();
            let uri = format!(
                "data:application/octet-stream;base64,{}",
                super::super::test_support::base64(&bytes)
            );
            doc["buffers"] = serde_json::json!([{"byteLength": bytes.len(), "uri": uri}]);
            doc["bufferViews"] = serde_json::json!([
                {"buffer": 0, "byteOffset": 0, "byteLength": 8},
                {"buffer": 0, "byteOffset": 8, "byteLength": 32}
            ]);
            doc["accessors"] = serde_json::json!([
                {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR",
                    "min": [0.0], "max": [1.0 / 30.0]},
                {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"}
            ]);
            doc["animations"] = serde_json::json!([{
                "name": "fly",
                "samplers": [{"input": 0, "output": 1}],
                "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}]
            }]);
        }
        doc
    }

    #[test]
    fn a_rest_lying_while_its_clips_stand_is_turned_up_and_its_clips_keep_their_keys() {
        // The figure lies along +Z in its nodes, but its clip keys `root` with the
        // turn that stands it, as a 3ds Max Biped's keyed root joint does.
        let mut doc = document(&figure(z_up()), up_turn());
        doc["nodes"][0]["rotation"] = serde_json::json!([0.0, 0.0, 0.0, 1.0]);
        let rig = super::super::test_support::parse_doc(&doc).unwrap();
        assert!(
            rig.notes.iter().any(|n| n.starts_with("up axis: +Z")
                && n.contains("its clips stand along +Y as written")),
            "{:?}",
            rig.notes
        );
        assert!(matches!(recognize(&rig.skeleton), Recognition::Humanoid(_)));
        let head = rig.skeleton.find("head").expect("head");
        let rest = rig.skeleton.rest_world();
        let standing = Vec3::new(0.0, 1.6, 0.0);
        assert!((Vec3::from(rest[head].translation) - standing).length() < 1e-5);
        // Every frame stands as the file keys it.
        let frame = rig.clips[0].motion.frame(1);
        let world = rig
            .skeleton
            .world_transforms(frame.rotations, frame.translations);
        let got = Vec3::from(world[head].translation);
        assert!((got - standing).length() < 1e-4, "{got}");
    }

    #[test]
    fn a_clip_lying_in_every_frame_takes_the_turn_of_a_rest_turned_up() {
        // The same figure written twice Z-up as plain nodes: an idle standing along
        // +Z (turned up on loading) and a flight lying along +X in its nodes and in
        // every key of its root (no frame stands, so it is not turned up).
        let dir = tempfile::tempdir().expect("temp dir");
        let written = figure(z_up());
        let lay = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let write = |name: &str, doc: serde_json::Value| {
            let path = dir.path().join(name);
            std::fs::write(&path, doc.to_string()).expect("written");
            path
        };
        let idle = write("idle.gltf", document(&written, Quat::IDENTITY));
        let fly = write("fly.gltf", document(&written, lay));
        let alone = super::super::load(&fly).expect("the flight loads");
        assert!(!alone.notes.iter().any(|n| n.starts_with("up axis")));
        let rig = super::super::load_with_rest_from(&fly, &idle).expect("same skeleton");
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("up axis: the clips are turned -90° about X")),
            "{:?}",
            rig.notes
        );
        // The flight's frame lies as written, turned up with the rest it stands on:
        // the head where the file puts it, turned -90° about X.
        let frame = rig.clips[0].motion.frame(0);
        let world = rig
            .skeleton
            .world_transforms(frame.rotations, frame.translations);
        let head = rig.skeleton.find("head").expect("head");
        let want = up_turn() * (lay * (z_up() * Vec3::new(0.0, 1.6, 0.0)));
        let got = Vec3::from(world[head].translation);
        assert!((got - want).length() < 1e-4, "{got} against {want}");
    }

    #[test]
    fn a_figure_lying_on_its_back_head_along_minus_z_is_turned_up_with_its_clips() {
        // A +Y-up figure turned up once too often (+Y onto -Z): it lies on its back,
        // head along -Z, as a Sketchfab conversion of a Y-up FBX export holds it.
        let turned_twice = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let lying = figure(turned_twice);
        assert!(matches!(recognize(&lying), Recognition::NotHumanoid(_)));
        let mut clips = vec![clip(&lying, -Vec3::Z)];
        let stood = stand_up(&lying, &mut clips, false).expect("turned up");
        assert!(stood.note.starts_with("up axis: -Z"), "{}", stood.note);
        assert!(stood.note.contains("turned +90° about X"), "{}", stood.note);
        assert!(matches!(
            recognize(&stood.skeleton),
            Recognition::Humanoid(_)
        ));
        let upright = figure(Quat::IDENTITY).rest_world();
        for (k, w) in stood.skeleton.rest_world().iter().enumerate() {
            let d = (Vec3::from(w.translation) - Vec3::from(upright[k].translation)).length();
            assert!(d < 1e-5, "{}: {d}", FIGURE[k].0);
        }
        // The hop along the file's -Z goes up +Y.
        let second = clips[0].motion.frame(1);
        assert!((second.translations[0] - Vec3::Y).length() < 1e-5);
    }

    #[test]
    fn a_standing_figure_and_a_lying_body_without_legs_keep_their_rest() {
        // Upright (recognized): nothing to do.
        let upright = figure(Quat::IDENTITY);
        let mut clips = vec![clip(&upright, Vec3::Y)];
        assert!(stand_up(&upright, &mut clips, false).is_none());
        // A spine with arms and no legs lying along Z (as a snake or a car would):
        // turned either way it is no humanoid.
        let legless: Vec<Joint> = figure(z_up()).joints()[..12].to_vec();
        let legless = Skeleton::new(legless).unwrap();
        let mut clips = vec![clip(&legless, Vec3::Z)];
        let before = clips.clone();
        assert!(stand_up(&legless, &mut clips, false).is_none());
        assert_eq!(clips, before);
    }
}
