//! A glTF rig's rest from another file of the same skeleton (`LoadOptions::
//! rest_from`, `--rest-from`). A file of plain nodes has no bind pose: its rest is the
//! nodes' pose, else a frame of its clips that stands (`rest_from_clips`). An
//! animation library's clip that flies, swims or lies in every frame has neither,
//! but another clip exported from the same library (an idle, a walk) stands. That
//! file's rest, as loading it finds it, is this rig's rest when both hold the same
//! joints under the same parents with the same bone lengths; the clips stay this
//! file's own, as a BVH take's do (`bvh::rest_from`). Any rig that declares no
//! humanoid map takes it so, a skinned one too (the other file's rest in place of
//! its bind pose).

use std::path::Path;

use super::GltfError;
use crate::formats::Rig;
use crate::skeleton::{Joint, Skeleton};

/// How far a bone's length may differ from the other file's, as a share of the
/// figure's size: the same skeleton exported twice differs by rounding alone.
const SAME_BONE: f32 = 1e-3;

/// `rig` (loaded from `path`) with the rest of `other` (loaded from `from`), and a
/// note saying so; refused, naming both files, when `rig` declares its own humanoid
/// map (which declares its rest) or the two skeletons differ.
pub(super) fn with_rest_of(
    mut rig: Rig,
    path: &Path,
    other: &Rig,
    from: &Path,
) -> Result<Rig, GltfError> {
    let refuse = |reason: String| GltfError::RestFrom {
        path: path.to_owned(),
        from: from.to_owned(),
        reason,
    };
    if rig.map_source.is_some() {
        return Err(refuse(
            "this file declares its humanoid map, and with it its rest".to_owned(),
        ));
    }
    let moving = |name: &str| moves(&rig, name) || moves(other, name);
    let joints = same_skeleton(&rig.skeleton, &other.skeleton, moving).map_err(refuse)?;
    rig.skeleton = Skeleton::new(joints).map_err(|source| GltfError::Skeleton {
        path: path.to_owned(),
        source,
    })?;
    let name = from
        .file_name()
        .unwrap_or(from.as_os_str())
        .to_string_lossy();
    rig.notes.push(format!(
        "rest pose: the rest of `{name}` as it loads (--rest-from)"
    ));
    Ok(rig)
}

/// Whether the clips of `rig` move the joint `name` along its bone, by more than
/// `SAME_BONE` of the figure: its offset is where the motion puts it (the hips'
/// root motion under an `Armature` node), not a bone, and each clip's rest holds
/// its own first place.
fn moves(rig: &Rig, name: &str) -> bool {
    let Some(j) = rig.skeleton.find(name) else {
        return false;
    };
    let rest = rig.skeleton.joints()[j].rest.translation.length();
    let size = figure_size(&rig.skeleton);
    rig.clips.iter().any(|clip| {
        clip.motion
            .frames()
            .any(|f| (f.translations[j].length() - rest).abs() > SAME_BONE * size)
    })
}

/// The joints of `own` with the rests of `other`'s joints of the same names, or why
/// `other` is another skeleton: a joint count, a joint missing or under another
/// parent, a bone of another length (but for joints `moving` says the clips move).
fn same_skeleton(
    own: &Skeleton,
    other: &Skeleton,
    moving: impl Fn(&str) -> bool,
) -> Result<Vec<Joint>, String> {
    let (mine, theirs) = (own.joints(), other.joints());
    if mine.len() != theirs.len() {
        return Err(format!(
            "it has {} joints, this file {}",
            theirs.len(),
            mine.len()
        ));
    }
    let size = figure_size(other).max(f32::EPSILON);
    let placed = placement(own);
    let mut joints = Vec::with_capacity(mine.len());
    for (j, joint) in mine.iter().enumerate() {
        let Some(k) = other.find(&joint.name) else {
            return Err(format!("it has no joint `{}`", joint.name));
        };
        let parent_name = |s: &Skeleton, p: Option<usize>| p.map(|p| s.joints()[p].name.clone());
        let (want, got) = (
            parent_name(own, joint.parent),
            parent_name(other, theirs[k].parent),
        );
        if want != got {
            return Err(format!(
                "its `{}` hangs from {}, this file's from {}",
                joint.name,
                got.map_or("nothing".to_owned(), |n| format!("`{n}`")),
                want.map_or("nothing".to_owned(), |n| format!("`{n}`"))
            ));
        }
        // The offsets down to where the body branches are where the figure stands,
        // not bones.
        let bone = |j: &Joint| j.rest.translation.length();
        // The length first: whether the clips move a joint reads every frame.
        if !placed[j]
            && (bone(joint) - bone(&theirs[k])).abs() > SAME_BONE * size
            && !moving(&joint.name)
        {
            return Err(format!(
                "its bone into `{}` is {:.4} long, this file's {:.4}",
                joint.name,
                bone(&theirs[k]),
                bone(joint)
            ));
        }
        joints.push(Joint {
            rest: theirs[k].rest,
            ..joint.clone()
        });
    }
    Ok(joints)
}

/// Which joints' offsets place the figure rather than measure a bone: the root's,
/// and, when the line of single children from the root reaches a joint that
/// branches (the hips under `RootNode` and `Armature`), every offset along it down
/// to that joint. An animation library's clips that never move the hips keep the
/// hips where their clip's first frame stands them (a run lower than a walk), so
/// that offset differs between two exports of one skeleton. A skeleton that never
/// branches has only its root placed.
fn placement(skeleton: &Skeleton) -> Vec<bool> {
    let joints = skeleton.joints();
    let children = |p: usize| (0..joints.len()).filter(move |&k| joints[k].parent == Some(p));
    let mut placed: Vec<bool> = joints.iter().map(|j| j.parent.is_none()).collect();
    let Some(mut at) = joints.iter().position(|j| j.parent.is_none()) else {
        return placed;
    };
    let mut line = vec![at];
    loop {
        let mut kids = children(at);
        match (kids.next(), kids.next()) {
            (Some(only), None) => {
                line.push(only);
                at = only;
            }
            (Some(_), Some(_)) => {
                for j in line {
                    placed[j] = true;
                }
                return placed;
            }
            _ => return placed,
        }
    }
}

/// The largest extent of the skeleton's rest along any axis.
fn figure_size(skeleton: &Skeleton) -> f32 {
    let world = skeleton.rest_world();
    let mut lo = glam::Vec3A::splat(f32::INFINITY);
    let mut hi = glam::Vec3A::splat(f32::NEG_INFINITY);
    for m in &world {
        lo = lo.min(m.translation);
        hi = hi.max(m.translation);
    }
    (hi - lo).max_element()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::Transform;
    use glam::{Quat, Vec3};

    fn joint(name: &str, parent: Option<usize>, at: [f32; 3], rotation: Quat) -> Joint {
        Joint {
            name: name.to_owned(),
            parent,
            rest: Transform {
                translation: Vec3::from(at),
                rotation,
                scale: Vec3::ONE,
            },
            end: None,
        }
    }

    /// A standing chain and the same chain lying along +Z (the clip's flying pose).
    fn chains(lying: Quat) -> (Skeleton, Skeleton) {
        let rows = |root: Quat| {
            vec![
                joint("Hips", None, [0.0, 1.0, 0.0], root),
                joint("Spine", Some(0), [0.0, 0.3, 0.0], Quat::IDENTITY),
                joint("Head", Some(1), [0.0, 0.4, 0.0], Quat::IDENTITY),
            ]
        };
        (
            Skeleton::new(rows(Quat::IDENTITY)).expect("standing"),
            Skeleton::new(rows(lying)).expect("lying"),
        )
    }

    #[test]
    fn a_file_of_plain_nodes_takes_the_rest_of_another_file() {
        // The same three nodes written lying along +Z (a flying clip's pose) and
        // standing (an idle of the same library).
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, nodes: serde_json::Value| {
            let doc = serde_json::json!({
                "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": nodes
            });
            let path = dir.path().join(name);
            std::fs::write(&path, doc.to_string()).expect("written");
            path
        };
        let mut lying = super::super::test_support::hips_spine_head();
        let half = std::f32::consts::FRAC_1_SQRT_2;
        lying[0]["rotation"] = serde_json::json!([half, 0.0, 0.0, half]);
        let fly = write("fly.gltf", lying);
        let idle = write("idle.gltf", super::super::test_support::hips_spine_head());
        let rig = super::super::load_with_rest_from(&fly, &idle).expect("same skeleton");
        let world = rig.skeleton.rest_world();
        let head = rig.skeleton.find("Head").expect("head");
        assert!((world[head].translation.y - 1.6).abs() < 1e-5, "{world:?}");
        assert!(
            rig.notes
                .iter()
                .any(|n| n == "rest pose: the rest of `idle.gltf` as it loads (--rest-from)"),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_lying_rig_takes_the_standing_rest_of_the_same_skeleton() {
        let lying = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let (standing, flying) = chains(lying);
        let joints = same_skeleton(&flying, &standing, |_| false).expect("same skeleton");
        assert_eq!(joints.len(), 3);
        assert!(joints[0].rest.rotation.angle_between(Quat::IDENTITY) < 1e-6);
        assert_eq!(joints[2].name, "Head");
    }

    /// `RootNode` → `Armature` → `Hips` with two legs and a spine, the hips `hips`
    /// above the root and the shins `shin` long.
    fn library_rig(hips: f32, shin: f32) -> Skeleton {
        let q = Quat::IDENTITY;
        Skeleton::new(vec![
            joint("RootNode", None, [0.0, 0.0, 0.0], q),
            joint("Armature", Some(0), [0.0, 0.0, 0.0], q),
            joint("Hips", Some(1), [0.0, hips, 0.0], q),
            joint("LeftUpLeg", Some(2), [0.1, 0.0, 0.0], q),
            joint("LeftLeg", Some(3), [0.0, -0.45, 0.0], q),
            joint("LeftFoot", Some(4), [0.0, -shin, 0.0], q),
            joint("RightUpLeg", Some(2), [-0.1, 0.0, 0.0], q),
            joint("RightLeg", Some(6), [0.0, -0.45, 0.0], q),
            joint("RightFoot", Some(7), [0.0, -shin, 0.0], q),
            joint("Spine", Some(2), [0.0, 0.15, 0.0], q),
            joint("Head", Some(9), [0.0, 0.45, 0.0], q),
        ])
        .expect("library rig")
    }

    #[test]
    fn the_hips_placed_under_root_nodes_are_no_bone() {
        // A run clip that never moves the hips holds them 14 cm lower than a walk's.
        let (run, walk) = (library_rig(0.87, 0.42), library_rig(1.01, 0.42));
        let joints = same_skeleton(&run, &walk, |_| false).expect("same skeleton");
        assert!((joints[2].rest.translation.y - 1.01).abs() < 1e-6);
        // A shin of another length is still another skeleton.
        let refused =
            same_skeleton(&library_rig(0.87, 0.5), &walk, |_| false).expect_err("another shin");
        assert!(refused.contains("`LeftFoot`"), "{refused}");
    }

    #[test]
    fn another_skeleton_is_refused_naming_the_joint() {
        let (standing, _) = chains(Quat::IDENTITY);
        let longer = Skeleton::new(vec![
            joint("Hips", None, [0.0, 1.0, 0.0], Quat::IDENTITY),
            joint("Spine", Some(0), [0.0, 0.3, 0.0], Quat::IDENTITY),
            joint("Head", Some(1), [0.0, 0.5, 0.0], Quat::IDENTITY),
        ])
        .expect("longer");
        let refused = same_skeleton(&longer, &standing, |_| false).expect_err("another neck");
        assert!(refused.contains("`Head`"), "{refused}");
        let renamed = Skeleton::new(vec![
            joint("Hips", None, [0.0, 1.0, 0.0], Quat::IDENTITY),
            joint("Spine", Some(0), [0.0, 0.3, 0.0], Quat::IDENTITY),
            joint("Neck", Some(1), [0.0, 0.4, 0.0], Quat::IDENTITY),
        ])
        .expect("renamed");
        let refused = same_skeleton(&renamed, &standing, |_| false).expect_err("another joint");
        assert!(refused.contains("no joint `Neck`"), "{refused}");
    }
}
