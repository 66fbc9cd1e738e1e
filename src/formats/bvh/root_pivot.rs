//! When the root lies away from the body it turns: Kinect exporters write the root
//! (`SpineBase`) at the floor or at the camera's origin and hang the legs and the
//! spine (`HipLeft`, `HipRight`, `SpineMid`) from it with one `OFFSET`, up to the
//! pelvis. The body branches at that point, not at the root: taken as the hips, the
//! root would pivot the whole figure about a point under its feet, and the legs would
//! hang from a joint beside them rather than below it.
//!
//! `move_root_to_children` moves the root onto the point its children share, when the
//! root lies farther from it than any bone leaving it is long (outside the pelvis):
//! the root's `OFFSET` gains the shared one, the children's become zero, and in every
//! frame the root's translation gains the shared offset turned by the root's rotation,
//! so every joint stays where the file puts it (only the root, a pivot, moves). The
//! file's own `OFFSET` stays readable (`JointDef::file_offset`) for what reads the
//! channels against it (all-zero position channels, teleports).
//!
//! Works on `JointDef`s in file space, before any pose is built.

use glam::Vec3;

use super::hierarchy::{JointDef, only_root_and_children};

/// Children start at one point when each `OFFSET` lies within this fraction of the
/// first child's `OFFSET` length from it (written with the same digits, in practice).
const SAME_POINT: f32 = 1e-4;

/// Moves the only root onto the point all its children start from (two or more
/// children, each with the same non-zero `OFFSET` and no position channel, the root
/// farther from that point than any bone leaving it is long): the root's `pivot`
/// becomes that offset (see `JointDef::pivot`). Returns a note naming the root and the
/// distance, in file units; `None` (and nothing changed) for any other hierarchy.
pub(super) fn move_root_to_children(defs: &mut [JointDef]) -> Option<String> {
    let (root, kids) = only_root_and_children(defs)?;
    let shared = defs.get(*kids.first()?)?.offset;
    let length = shared.length();
    let same = |d: &JointDef| d.offset.distance(shared) <= SAME_POINT * length && !d.has_position();
    if kids.len() < 2
        || !length.is_finite()
        || length == 0.0
        || !kids.iter().all(|&k| same(&defs[k]))
    {
        return None;
    }
    // Away from the body: farther from the shared point than any bone leaving it is
    // long (MakeHuman's root sits a few cm under the pelvis, inside it: left alone).
    let bones = defs
        .iter()
        .filter(|d| d.parent.is_some_and(|p| kids.contains(&p)))
        .map(|d| d.offset)
        .chain(kids.iter().filter_map(|&k| defs[k].end));
    if bones.map(Vec3::length).any(|bone| bone >= length) {
        return None;
    }
    for &k in &kids {
        defs[k].offset = Vec3::ZERO;
    }
    let def = &mut defs[root];
    def.offset += shared;
    def.pivot = shared;
    Some(format!(
        "the root `{}` lies {length:.4} units from the point where all {} of its children \
         start; it is moved there (its rotation turns the body about that point, every other \
         joint stays where the file puts it)",
        def.name,
        kids.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::{AS_IS, motion, rig};
    use crate::formats::Rig;
    use glam::{Affine3A, Vec3};
    use std::path::Path;

    /// A Kinect-style figure: the root `Base` at the floor, `HipL`, `HipR` and `Mid`
    /// hanging from it with one `OFFSET` up to the pelvis (`lift`), each with a
    /// joint below or above; one frame turning the root `turn` degrees about X and
    /// standing it at (0, 0, 5).
    fn floor_root(lift: &str, turn: f32) -> String {
        let kid = |name: &str, child: &str, offset: &str, end: &str| {
            format!(
                "  JOINT {name}\n  {{\n    OFFSET {lift}\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT {child}\n    {{\n      OFFSET {offset}\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      End Site\n      {{\n        OFFSET {end}\n      }}\n    }}\n  }}\n"
            )
        };
        format!(
            "HIERARCHY\nROOT Base\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n{}{}{}}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 0 5 0 {turn} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            kid("HipL", "KneeL", "10 -5 0", "0 -40 0"),
            kid("HipR", "KneeR", "-10 -5 0", "0 -40 0"),
            kid("Mid", "Chest", "0 30 0", "0 20 0"),
        )
    }

    /// Every joint's name and world position.
    type Places = Vec<(String, Vec3)>;

    /// World position of every joint in frame 0 and at rest, by name.
    fn places(rig: &Rig) -> (Places, Places) {
        let skeleton = &rig.skeleton;
        let f = motion(rig).frame(0);
        let named = |all: Vec<Affine3A>| {
            skeleton
                .joints()
                .iter()
                .zip(all)
                .map(|(j, a)| (j.name.clone(), Vec3::from(a.translation)))
                .collect()
        };
        (
            named(skeleton.world_transforms(f.rotations, f.translations)),
            named(skeleton.rest_world()),
        )
    }

    #[test]
    fn a_root_below_its_children_moves_up_to_them_with_every_joint_in_place() {
        for turn in [0.0, 30.0, -75.0] {
            let text = floor_root("0 90 0", turn);
            let moved = rig(&text);
            let (frame, rest) = places(&moved);
            // Where the file puts each joint: the root at (0, 0, 5) turned about X.
            let turned = glam::Quat::from_rotation_x(turn.to_radians());
            let base = Vec3::new(0.0, 0.0, 5.0);
            let pelvis = base + turned * Vec3::new(0.0, 90.0, 0.0);
            for (name, place) in &frame {
                let want = match name.as_str() {
                    "Base" | "HipL" | "HipR" | "Mid" => pelvis,
                    "KneeL" => pelvis + turned * Vec3::new(10.0, -5.0, 0.0),
                    "KneeR" => pelvis + turned * Vec3::new(-10.0, -5.0, 0.0),
                    "Chest" => pelvis + turned * Vec3::new(0.0, 30.0, 0.0),
                    other => panic!("unexpected joint {other}"),
                };
                assert!(
                    place.distance(want) < 1e-3,
                    "{name} at {place}, want {want} (turn {turn})"
                );
            }
            let root = rest.iter().find(|(n, _)| n == "Base").map(|(_, p)| *p);
            assert_eq!(
                root,
                Some(Vec3::new(0.0, 90.0, 0.0)),
                "the rest root is at the pelvis"
            );
            assert!(
                moved
                    .notes
                    .iter()
                    .any(|n| n.contains("the root `Base` lies 90.0000 units"))
            );
        }
    }

    #[test]
    fn a_root_whose_children_start_apart_or_at_it_is_left_alone() {
        // Children at the root itself (CMU's zero-length hip joints).
        let at_root = rig(&floor_root("0 0 0", 30.0));
        assert!(!at_root.notes.iter().any(|n| n.contains("is moved there")));
        // A root just under the point, inside the pelvis (MakeHuman's).
        let inside = rig(&floor_root("0 3 0", 30.0));
        assert!(!inside.notes.iter().any(|n| n.contains("is moved there")));
        // Children starting at different points (most rigs).
        let apart = floor_root("0 90 0", 30.0).replacen("OFFSET 0 90 0", "OFFSET 0 91 0", 1);
        let parsed = parse(&apart, Path::new("apart.bvh"), &AS_IS).expect("parses");
        assert!(!parsed.notes.iter().any(|n| n.contains("is moved there")));
        let (_, rest) = places(&parsed);
        let root = rest.iter().find(|(n, _)| n == "Base").map(|(_, p)| *p);
        assert_eq!(root, Some(Vec3::ZERO));
    }
}
