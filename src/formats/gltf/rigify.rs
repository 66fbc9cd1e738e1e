//! A Rigify rig read as its deform skeleton. Blender's Rigify generates a body of
//! `DEF-` bones (the ones the mesh is skinned to) beside its `ORG-` copies of the
//! metarig, `MCH-` helpers and controls, and hangs each `DEF-` chain from those:
//! `DEF-thigh.L` from `ORG-spine`, `DEF-upper_arm.L` from `ORG-shoulder.L`. Exported
//! with its deform bones only, every chain hangs from the armature instead. Either
//! way no joint joins the legs, arms and spine, and the rig stands as no body.
//!
//! The skeleton is then the `DEF-` bones, each hung from its deform parent (names
//! steer, geometry decides where they cannot; a name is read without the `_<number>`
//! that Sketchfab's conversions append to every node, `DEF-spine_013`):
//! 1. the nearest `DEF-` ancestor, or the `DEF-` bone of the nearest `ORG-`/`MCH-`
//!    ancestor's name (`ORG-spine` → `DEF-spine`), not the bone itself;
//! 2. for a chain hanging from the armature, where the human metarig hangs that
//!    chain (`CHAIN_PARENTS`), when that bone is there;
//! 3. else the `DEF-` bone nearest the chain's first joint among those already
//!    joined to `DEF-spine`.
//!
//! The joints above `DEF-spine` (the armature, a `root` bone) stay; every other bone
//! deforms nothing and is left out. Each joint keeps its place and frame in the rest
//! and in every clip frame: its local transform is rewritten under its new parent.
//! Only for a rig that declares no humanoid map. Pure: runs on the skeleton and clips
//! `mod.rs` has read.

use std::collections::HashMap;

use glam::Affine3A;

use super::super::{Clip, Motion};
use crate::skeleton::{Joint, Skeleton, Transform};

/// The prefix of Rigify's deform bones.
const DEFORM: &str = "DEF-";
/// Prefixes of Rigify's copies of the metarig's bones and its helpers.
const COPIES: [&str; 2] = ["ORG-", "MCH-"];
/// The bone Rigify's torso starts at (the hips), under which the others join.
const TRUNK: &str = "DEF-spine";
/// Fewer `DEF-` bones than this are names, not a Rigify body.
const MIN_DEFORM_BONES: usize = 8;
/// Where the human metarig hangs a chain that starts a limb or the pelvis, by base
/// name (the side suffix of the chain is kept on its parent).
const CHAIN_PARENTS: [(&str, &str); 5] = [
    ("thigh", "spine"),
    ("pelvis", "spine"),
    ("shoulder", "spine.003"),
    ("upper_arm", "shoulder"),
    ("breast", "spine.003"),
];

/// Where a walk up the deform parents has been (`deform_parents`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Walk {
    Unseen,
    OnPath,
    Done,
}

/// How a chain hanging apart found its deform parent.
#[derive(Debug, Clone, Copy, PartialEq)]
enum JoinedBy {
    /// Through an `ORG-`/`MCH-` copy's name (or a `DEF-` bone above a helper).
    Copy,
    /// Where the metarig hangs the chain.
    Metarig,
    /// The nearest bone joined to the trunk.
    Place,
}

/// The rig's deform skeleton, its clips rewritten onto it and a note saying so;
/// `None` when the rig is no Rigify rig (no `DEF-spine`, few `DEF-` bones) or its
/// deform bones already are its whole skeleton.
pub(super) fn deform_skeleton(
    skeleton: &Skeleton,
    clips: &[Clip],
) -> Option<(Skeleton, Vec<Clip>, String)> {
    let joints = skeleton.joints();
    let names = Names::new(skeleton);
    let trunk = names.find(TRUNK)?;
    let deform: Vec<bool> = joints.iter().map(|j| j.name.starts_with(DEFORM)).collect();
    if deform.iter().filter(|&&d| d).count() < MIN_DEFORM_BONES {
        return None;
    }
    let rest_world = skeleton.rest_world();
    let (parent, found) = deform_parents(skeleton, &names, &deform, trunk, &rest_world);
    let count = |how| found.iter().filter(|&&f| f == Some(how)).count();

    // The new order: the joints above the trunk, then the deform tree depth first.
    let mut order: Vec<usize> = (0..joints.len())
        .filter(|&k| skeleton.is_ancestor(k, trunk))
        .collect();
    let mut stack = vec![trunk];
    while let Some(k) = stack.pop() {
        order.push(k);
        let children = (0..joints.len()).filter(|&c| parent[c] == Some(k));
        stack.extend(children.collect::<Vec<_>>().into_iter().rev());
    }
    let mut position = vec![None; joints.len()];
    for (i, &k) in order.iter().enumerate() {
        position[k] = Some(i);
    }
    let new_parent: Vec<Option<usize>> = order
        .iter()
        .map(|&k| match deform[k] && k != trunk {
            true => parent[k],
            false => joints[k].parent,
        })
        .collect();
    let unchanged = order.len() == joints.len()
        && order
            .iter()
            .zip(&new_parent)
            .all(|(&k, p)| joints[k].parent == *p);
    if unchanged {
        return None;
    }

    let rebuilt: Vec<Joint> = order
        .iter()
        .zip(&new_parent)
        .map(|(&k, &p)| Joint {
            name: joints[k].name.clone(),
            parent: p.and_then(|p| position[p]),
            rest: relative(&rest_world, p, k, joints[k].rest),
            end: joints[k].end,
        })
        .collect();
    let rebuilt = Skeleton::new(rebuilt).ok()?;
    let clips = clips
        .iter()
        .map(|clip| Clip {
            name: clip.name.clone(),
            motion: rewrite_motion(skeleton, &clip.motion, &order, &new_parent),
        })
        .collect();
    let left_out = joints.len() - order.len();
    let bones = order.iter().filter(|&&k| deform[k]).count();
    let mut note = format!(
        "Rigify rig: the skeleton is its {bones} `DEF-` deform bones, each chain under its \
         deform parent ({} through `ORG-`/`MCH-` copies, {} where the metarig hangs the chain, \
         {} by place)",
        count(JoinedBy::Copy),
        count(JoinedBy::Metarig),
        count(JoinedBy::Place)
    );
    if left_out > 0 {
        note.push_str(&format!(
            "; the {left_out} other bones (controls, `ORG-`, `MCH-`) deform nothing and are \
             left out"
        ));
    }
    Some((rebuilt, clips, note))
}

/// Each `DEF-` bone's deform parent (`None` for the trunk and every other joint),
/// every one of them joined to the trunk, and how each chain hanging apart in the
/// file found its parent.
fn deform_parents(
    skeleton: &Skeleton,
    names: &Names,
    deform: &[bool],
    trunk: usize,
    rest_world: &[Affine3A],
) -> (Vec<Option<usize>>, Vec<Option<JoinedBy>>) {
    let joints = skeleton.joints();
    let mut found = vec![None; joints.len()];
    let mut parent: Vec<Option<usize>> = vec![None; joints.len()];
    for k in (0..joints.len()).filter(|&k| deform[k] && k != trunk) {
        if let Some(p) = by_ancestor(skeleton, names, deform, k) {
            parent[k] = Some(p);
            if joints[k].parent != Some(p) {
                found[k] = Some(JoinedBy::Copy);
            }
        } else if let Some(p) = by_metarig(skeleton, names, k) {
            parent[k] = Some(p);
            found[k] = Some(JoinedBy::Metarig);
        }
    }
    // Chains that do not reach the trunk (none found, or a loop) hang from the
    // nearest bone that does: each such chain's first joint (a loop is cut where
    // it closes). One pass, so that a file of thousands of loose bones costs no
    // more than comparing each with each.
    let joined: Vec<bool> = (0..joints.len())
        .map(|k| reaches(&parent, k, trunk))
        .collect();
    let mut state = vec![Walk::Unseen; joints.len()];
    let mut firsts = Vec::new();
    for start in (0..joints.len()).filter(|&k| deform[k] && !joined[k]) {
        let mut at = start;
        loop {
            match state[at] {
                Walk::Done => break,
                Walk::OnPath => {
                    firsts.push(at);
                    break;
                }
                Walk::Unseen => state[at] = Walk::OnPath,
            }
            match parent[at] {
                Some(p) if !joined[p] => at = p,
                _ => {
                    firsts.push(at);
                    break;
                }
            }
        }
        let mut at = start;
        while state[at] == Walk::OnPath {
            state[at] = Walk::Done;
            match parent[at] {
                Some(p) if !joined[p] => at = p,
                _ => break,
            }
        }
    }
    for k in firsts {
        let at = rest_world[k].translation;
        let nearest = (0..joints.len()).filter(|&j| joined[j]).min_by(|&a, &b| {
            let d = |j: usize| at.distance(rest_world[j].translation);
            d(a).total_cmp(&d(b))
        });
        parent[k] = nearest;
        found[k] = Some(JoinedBy::Place);
    }
    (parent, found)
}

/// The deform parent rule 1 finds: the nearest ancestor that is a `DEF-` bone, or an
/// `ORG-`/`MCH-` copy of a `DEF-` bone other than `joint`.
fn by_ancestor(skeleton: &Skeleton, names: &Names, deform: &[bool], joint: usize) -> Option<usize> {
    let joints = skeleton.joints();
    let mut at = joints[joint].parent;
    while let Some(a) = at {
        if deform[a] {
            return Some(a);
        }
        let copy_of = COPIES
            .iter()
            .find_map(|prefix| unnumbered(&joints[a].name).strip_prefix(prefix))
            .and_then(|base| names.find(&format!("{DEFORM}{base}")));
        if let Some(d) = copy_of
            && d != joint
        {
            return Some(d);
        }
        at = joints[a].parent;
    }
    None
}

/// Where the metarig hangs the chain `joint` starts (rule 2), when that bone is in
/// the rig.
fn by_metarig(skeleton: &Skeleton, names: &Names, joint: usize) -> Option<usize> {
    let name = unnumbered(&skeleton.joints()[joint].name).strip_prefix(DEFORM)?;
    let (base, side) = match name.rfind(['.', '_']) {
        Some(i) if matches!(&name[i + 1..], "L" | "R" | "l" | "r") => name.split_at(i),
        _ => (name, ""),
    };
    let &(_, parent) = CHAIN_PARENTS.iter().find(|(chain, _)| *chain == base)?;
    let side = match parent.starts_with("spine") {
        true => "",
        false => side,
    };
    names
        .find(&format!("{DEFORM}{parent}{side}"))
        .filter(|&p| p != joint)
}

/// `name` without the `_<number>` Sketchfab's conversions append to every node's
/// name (`DEF-spine.001_014`, `ORG-spine_0142`); Rigify's own names never end so.
fn unnumbered(name: &str) -> &str {
    match name.rsplit_once('_') {
        Some((base, n))
            if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => name,
    }
}

/// The rig's joints by name: a name as written, else as it reads without a
/// converter's node number (`unnumbered`); the first joint of a name wins.
struct Names {
    exact: HashMap<String, usize>,
    unnumbered: HashMap<String, usize>,
}

impl Names {
    fn new(skeleton: &Skeleton) -> Self {
        let mut exact = HashMap::new();
        let mut plain = HashMap::new();
        for (k, joint) in skeleton.joints().iter().enumerate() {
            exact.entry(joint.name.clone()).or_insert(k);
            plain.entry(unnumbered(&joint.name).to_owned()).or_insert(k);
        }
        Names {
            exact,
            unnumbered: plain,
        }
    }

    /// The joint named `name`, or read so without its node number.
    fn find(&self, name: &str) -> Option<usize> {
        self.exact
            .get(name)
            .or_else(|| self.unnumbered.get(name))
            .copied()
    }
}

/// Whether following `parent` from `joint` reaches `trunk` (the trunk reaches
/// itself; a loop does not).
fn reaches(parent: &[Option<usize>], joint: usize, trunk: usize) -> bool {
    let mut at = joint;
    for _ in 0..=parent.len() {
        if at == trunk {
            return true;
        }
        match parent[at] {
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

/// Joint `k`'s local transform under `parent` for the model-space frames `world`
/// (`rest` kept when the parent is unchanged: its scale, exactly).
fn relative(world: &[Affine3A], parent: Option<usize>, k: usize, rest: Transform) -> Transform {
    let local = match parent {
        Some(p) => world[p].inverse() * world[k],
        None => world[k],
    };
    let (scale, rotation, translation) = local.to_scale_rotation_translation();
    Transform {
        translation,
        rotation: rotation.normalize(),
        scale: match (scale - rest.scale).abs().max_element() < 1e-4 {
            true => rest.scale,
            false => scale,
        },
    }
}

/// `motion` (over `skeleton`'s joints) over the joints `order` picks, each frame's
/// local transforms rewritten under `new_parent` (indices into the old joints).
fn rewrite_motion(
    skeleton: &Skeleton,
    motion: &Motion,
    order: &[usize],
    new_parent: &[Option<usize>],
) -> Motion {
    let n = order.len();
    let mut rotations = Vec::with_capacity(n * motion.frame_count());
    let mut translations = Vec::with_capacity(n * motion.frame_count());
    for frame in motion.frames() {
        let world = skeleton.world_transforms(frame.rotations, frame.translations);
        for (&k, &p) in order.iter().zip(new_parent) {
            let local = relative(&world, p, k, skeleton.joints()[k].rest);
            rotations.push(local.rotation);
            translations.push(local.translation);
        }
    }
    Motion::new(motion.times().to_vec(), n, rotations, translations)
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::skeleton::{Recognition, recognize};

    /// A Rigify body in a T-pose facing +Z: (name, parent, model-space position),
    /// metres. `parent` names the file's parent, so the chains can hang from the
    /// armature (a deform-only export) or from `ORG-` copies (a whole rig).
    type Bone = (&'static str, &'static str, [f32; 3]);

    const DEFORM_BONES: [(&str, [f32; 3]); 25] = [
        ("DEF-spine", [0.0, 1.0, 0.0]),
        ("DEF-spine.001", [0.0, 1.12, 0.0]),
        ("DEF-spine.002", [0.0, 1.24, 0.0]),
        ("DEF-spine.003", [0.0, 1.36, 0.0]),
        ("DEF-spine.004", [0.0, 1.52, 0.0]),
        ("DEF-spine.005", [0.0, 1.58, 0.0]),
        ("DEF-spine.006", [0.0, 1.64, 0.0]),
        ("DEF-pelvis.L", [0.02, 1.0, 0.02]),
        ("DEF-pelvis.R", [-0.02, 1.0, 0.02]),
        ("DEF-thigh.L", [0.1, 0.95, 0.0]),
        ("DEF-shin.L", [0.1, 0.52, 0.0]),
        ("DEF-foot.L", [0.1, 0.08, 0.0]),
        ("DEF-toe.L", [0.1, 0.0, 0.12]),
        ("DEF-thigh.R", [-0.1, 0.95, 0.0]),
        ("DEF-shin.R", [-0.1, 0.52, 0.0]),
        ("DEF-foot.R", [-0.1, 0.08, 0.0]),
        ("DEF-toe.R", [-0.1, 0.0, 0.12]),
        ("DEF-shoulder.L", [0.02, 1.48, 0.06]),
        ("DEF-upper_arm.L", [0.18, 1.46, 0.0]),
        ("DEF-forearm.L", [0.46, 1.46, 0.0]),
        ("DEF-hand.L", [0.71, 1.46, 0.0]),
        ("DEF-shoulder.R", [-0.02, 1.48, 0.06]),
        ("DEF-upper_arm.R", [-0.18, 1.46, 0.0]),
        ("DEF-forearm.R", [-0.46, 1.46, 0.0]),
        ("DEF-hand.R", [-0.71, 1.46, 0.0]),
    ];

    /// The file parent of each deform bone in a rig exported with deform bones
    /// only: the chains that start a limb or the pelvis hang from the armature.
    fn deform_only_parent(name: &str) -> &'static str {
        match name {
            "DEF-spine" | "DEF-pelvis.L" | "DEF-pelvis.R" | "DEF-thigh.L" | "DEF-thigh.R"
            | "DEF-shoulder.L" | "DEF-shoulder.R" | "DEF-upper_arm.L" | "DEF-upper_arm.R" => "rig",
            _ => "",
        }
    }

    /// Builds a skeleton from bones listed parents first; an empty parent is the
    /// bone listed before, `none` no parent.
    fn skeleton(bones: &[Bone]) -> Skeleton {
        let mut joints: Vec<Joint> = Vec::new();
        let mut at: Vec<Vec3> = Vec::new();
        for (i, &(name, parent, pos)) in bones.iter().enumerate() {
            let parent = match parent {
                "" => Some(i - 1),
                p => joints.iter().position(|j| j.name == p),
            };
            let here = Vec3::from(pos);
            let from = parent.map_or(Vec3::ZERO, |p| at[p]);
            joints.push(Joint {
                name: name.to_owned(),
                parent,
                rest: Transform::from_translation(here - from),
                end: None,
            });
            at.push(here);
        }
        Skeleton::new(joints).unwrap()
    }

    fn deform_only() -> Skeleton {
        let mut bones: Vec<Bone> = vec![("rig", "none", [0.0; 3])];
        for &(name, pos) in &DEFORM_BONES {
            bones.push((name, deform_only_parent(name), pos));
        }
        skeleton(&bones)
    }

    /// The whole generated rig: `ORG-` copies of the trunk and shoulders under a
    /// control (`torso`), IK targets on the armature, and each `DEF-` chain hanging
    /// from the `ORG-` copy of the bone its metarig bone hangs from.
    fn whole_rig() -> Skeleton {
        let mut bones: Vec<Bone> = vec![
            ("rig", "none", [0.0; 3]),
            ("root", "rig", [0.0; 3]),
            ("torso", "root", [0.0, 1.0, -0.1]),
            ("ORG-spine", "torso", [0.0, 1.0, 0.0]),
            ("ORG-spine.003", "ORG-spine", [0.0, 1.36, 0.0]),
            ("ORG-shoulder.L", "ORG-spine.003", [0.02, 1.48, 0.06]),
            ("ORG-shoulder.R", "ORG-spine.003", [-0.02, 1.48, 0.06]),
            ("ORG-pelvis.L", "ORG-spine", [0.02, 1.0, 0.02]),
            ("ORG-pelvis.R", "ORG-spine", [-0.02, 1.0, 0.02]),
            ("MCH-upper_arm_ik_target.L", "root", [0.71, 1.46, -0.3]),
            ("MCH-upper_arm_ik_target.R", "root", [-0.71, 1.46, -0.3]),
        ];
        for &(name, pos) in &DEFORM_BONES {
            let parent = match name {
                "DEF-spine" => "root",
                "DEF-thigh.L" | "DEF-thigh.R" => "ORG-spine",
                "DEF-pelvis.L" => "ORG-pelvis.L",
                "DEF-pelvis.R" => "ORG-pelvis.R",
                "DEF-shoulder.L" | "DEF-upper_arm.L" => "ORG-shoulder.L",
                "DEF-shoulder.R" | "DEF-upper_arm.R" => "ORG-shoulder.R",
                _ => "",
            };
            bones.push((name, parent, pos));
        }
        skeleton(&bones)
    }

    fn parent_name(skeleton: &Skeleton, name: &str) -> String {
        let k = skeleton.find(name).unwrap();
        let p = skeleton.parent(k).unwrap();
        skeleton.joints()[p].name.clone()
    }

    #[test]
    fn deform_chains_under_the_armature_join_where_the_metarig_hangs_them() {
        let rig = deform_only();
        assert!(matches!(recognize(&rig), Recognition::NotHumanoid(_)));
        let (joined, _, note) = deform_skeleton(&rig, &[]).unwrap();
        assert_eq!(parent_name(&joined, "DEF-thigh.L"), "DEF-spine");
        assert_eq!(parent_name(&joined, "DEF-pelvis.R"), "DEF-spine");
        assert_eq!(parent_name(&joined, "DEF-shoulder.L"), "DEF-spine.003");
        assert_eq!(parent_name(&joined, "DEF-upper_arm.R"), "DEF-shoulder.R");
        assert!(note.contains("(0 through"), "{note}");
        assert!(note.contains("8 where the metarig"), "{note}");
        let Recognition::Humanoid(r) = recognize(&joined) else {
            panic!("not a humanoid: {:?}", recognize(&joined));
        };
        use crate::humanoid::HumanBone::*;
        let name = |bone| r.map.bones.get(&bone).cloned();
        assert_eq!(name(Hips).as_deref(), Some("DEF-spine"));
        assert_eq!(name(LeftUpperLeg).as_deref(), Some("DEF-thigh.L"));
        assert_eq!(name(LeftUpperArm).as_deref(), Some("DEF-upper_arm.L"));
        assert_eq!(name(RightHand).as_deref(), Some("DEF-hand.R"));
        // Every joint keeps its place.
        let before = rig.rest_world();
        let after = joined.rest_world();
        for (k, joint) in joined.joints().iter().enumerate() {
            let old = rig.find(&joint.name).unwrap();
            assert!(
                after[k]
                    .translation
                    .abs_diff_eq(before[old].translation, 1e-6),
                "{}",
                joint.name
            );
        }
    }

    #[test]
    fn a_whole_generated_rig_is_its_deform_bones_under_their_org_copies() {
        let rig = whole_rig();
        assert!(matches!(recognize(&rig), Recognition::NotHumanoid(_)));
        let (joined, _, note) = deform_skeleton(&rig, &[]).unwrap();
        assert_eq!(parent_name(&joined, "DEF-spine"), "root");
        assert_eq!(parent_name(&joined, "DEF-thigh.R"), "DEF-spine");
        assert_eq!(parent_name(&joined, "DEF-pelvis.L"), "DEF-spine");
        assert_eq!(parent_name(&joined, "DEF-shoulder.L"), "DEF-spine.003");
        assert_eq!(parent_name(&joined, "DEF-upper_arm.L"), "DEF-shoulder.L");
        assert!(joined.find("MCH-upper_arm_ik_target.L").is_none());
        assert!(joined.find("torso").is_none());
        assert_eq!(joined.len(), 2 + DEFORM_BONES.len());
        assert!(note.contains("(8 through"), "{note}");
        assert!(note.contains("9 other bones"), "{note}");
        assert!(matches!(recognize(&joined), Recognition::Humanoid(_)));
    }

    #[test]
    fn a_generated_rig_with_sketchfab_node_numbers_is_read_as_its_deform_bones() {
        // Sketchfab's conversions append `_<number>` to every node's name, the
        // `ORG-` copy and its `DEF-` bone numbered apart (`ORG-spine_0142`,
        // `DEF-spine_013`): the deform bones still join under their copies.
        let plain = whole_rig();
        let numbered: Vec<Joint> = plain
            .joints()
            .iter()
            .enumerate()
            .map(|(k, joint)| Joint {
                name: format!("{}_0{}", joint.name, 3 * k + 7),
                ..joint.clone()
            })
            .collect();
        let rig = Skeleton::new(numbered).unwrap();
        assert!(matches!(recognize(&rig), Recognition::NotHumanoid(_)));
        let (joined, _, note) = deform_skeleton(&rig, &[]).unwrap();
        let number = |name: &str| plain.find(name).map(|k| format!("{name}_0{}", 3 * k + 7));
        let parent_of = |name: &str| parent_name(&joined, &number(name).unwrap());
        assert_eq!(parent_of("DEF-thigh.R"), number("DEF-spine").unwrap());
        assert_eq!(
            parent_of("DEF-shoulder.L"),
            number("DEF-spine.003").unwrap()
        );
        assert_eq!(
            parent_of("DEF-upper_arm.L"),
            number("DEF-shoulder.L").unwrap()
        );
        assert_eq!(joined.len(), 2 + DEFORM_BONES.len());
        assert!(note.contains("(8 through"), "{note}");
        let Recognition::Humanoid(r) = recognize(&joined) else {
            panic!("not a humanoid: {:?}", recognize(&joined));
        };
        use crate::humanoid::HumanBone::*;
        let name = |bone| r.map.bones.get(&bone).cloned();
        assert_eq!(name(Hips), number("DEF-spine"));
        assert_eq!(name(LeftUpperLeg), number("DEF-thigh.L"));
        assert_eq!(name(RightHand), number("DEF-hand.R"));
    }

    #[test]
    fn clip_frames_keep_every_joints_place_and_frame() {
        // The armature turns and the left arm's chain swings: under its new parent
        // each joint is where and as the file's hierarchy puts it.
        let rig = deform_only();
        let n = rig.len();
        let mut rotations = rig.rest_rotations();
        let mut translations = rig.rest_translations();
        rotations[0] = Quat::from_rotation_y(0.4);
        let arm = rig.find("DEF-upper_arm.L").unwrap();
        rotations[arm] = Quat::from_rotation_z(-1.1) * Quat::from_rotation_x(0.3);
        translations[arm] += Vec3::new(0.0, 0.01, 0.0);
        let frames = [rig.rest_rotations(), rotations.clone()].concat();
        let moves = [rig.rest_translations(), translations.clone()].concat();
        let clip = Clip {
            name: "swing".into(),
            motion: Motion::new(vec![0.0, 1.0], n, frames, moves),
        };
        let (joined, clips, _) = deform_skeleton(&rig, &[clip]).unwrap();
        let frame = clips[0].motion.frame(1);
        let after = joined.world_transforms(frame.rotations, frame.translations);
        let before = rig.world_transforms(&rotations, &translations);
        for (k, joint) in joined.joints().iter().enumerate() {
            let old = rig.find(&joint.name).unwrap();
            assert!(after[k].abs_diff_eq(before[old], 1e-5), "{}", joint.name);
        }
    }

    #[test]
    fn chains_in_a_loop_or_with_no_known_parent_hang_from_the_nearest_joined_bone() {
        // Two ear bones under each other's `ORG-` copies (a loop) and a tail under
        // the armature with no metarig parent: each is joined by place, the ears to
        // the head, the tail to the hips.
        let mut bones: Vec<Bone> = vec![("rig", "none", [0.0; 3])];
        for &(name, pos) in &DEFORM_BONES {
            bones.push((name, deform_only_parent(name), pos));
        }
        bones.extend([
            ("ORG-ear.L", "DEF-spine.006", [0.08, 1.7, 0.0]),
            ("ORG-ear.R", "DEF-spine.006", [-0.08, 1.7, 0.0]),
            ("DEF-ear.L", "ORG-ear.R", [0.08, 1.7, 0.0]),
            ("DEF-ear.R", "ORG-ear.L", [-0.08, 1.7, 0.0]),
            ("DEF-tail", "rig", [0.0, 0.98, -0.1]),
        ]);
        let rig = skeleton(&bones);
        let (joined, _, note) = deform_skeleton(&rig, &[]).unwrap();
        assert_eq!(parent_name(&joined, "DEF-tail"), "DEF-spine");
        let ears = [
            parent_name(&joined, "DEF-ear.L"),
            parent_name(&joined, "DEF-ear.R"),
        ];
        // One ear's loop is cut where it closes and hangs from the head; the other
        // keeps hanging from it.
        assert!(ears.contains(&"DEF-spine.006".to_owned()), "{ears:?}");
        assert!(note.contains("2 by place"), "{note}");
        assert!(matches!(recognize(&joined), Recognition::Humanoid(_)));
    }

    #[test]
    fn a_rig_whose_deform_bones_are_one_tree_or_few_is_kept() {
        // Deform bones already one tree under the armature: nothing to rewrite.
        let mut bones: Vec<Bone> = vec![("rig", "none", [0.0; 3])];
        let mut previous = "rig";
        for &(name, pos) in &DEFORM_BONES[..7] {
            bones.push((name, previous, pos));
            previous = name;
        }
        for (name, pos) in [("DEF-a", [0.1, 1.0, 0.0]), ("DEF-b", [0.2, 1.0, 0.0])] {
            bones.push((name, "DEF-spine", pos));
        }
        assert!(deform_skeleton(&skeleton(&bones), &[]).is_none());
        // A few `DEF-` names are not a Rigify body.
        let few: Vec<Bone> = vec![
            ("rig", "none", [0.0; 3]),
            ("DEF-spine", "rig", [0.0, 1.0, 0.0]),
            ("DEF-thigh.L", "rig", [0.1, 0.95, 0.0]),
        ];
        assert!(deform_skeleton(&skeleton(&few), &[]).is_none());
    }
}
