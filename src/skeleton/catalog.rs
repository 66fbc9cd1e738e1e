//! Bone maps for well-known skeletons, embedded in the binary so `inspect` and the
//! tests find them from any directory: the lab's 19-joint skeleton, the CMU mocap
//! skeleton, Cesium Man and the KayKit character rig. A rig with no map of its own
//! gets the catalog map that resolves against it, keeps the sides its geometry gives
//! (checked against the recognizer's map), and maps the most bones.
//!
//! These are exact, hand-checked maps for skeletons the project ships or tests
//! against; the recognizer (`skeleton::recognize`) maps every other rig.

use std::path::Path;

use crate::skeleton::{BoneMap, NamedBoneMap, Skeleton, recognize};

/// One embedded map: its name and the JSON file it comes from.
struct Entry {
    name: &'static str,
    file: &'static str,
    json: &'static str,
}

const ENTRIES: [Entry; 4] = [
    Entry {
        name: "lab19",
        file: "config/skeletons/lab19.json",
        json: super::builtin::LAB19_JSON,
    },
    Entry {
        name: "cmu",
        file: "config/maps/cmu.json",
        json: include_str!("../../config/maps/cmu.json"),
    },
    Entry {
        name: "cesium_man",
        file: "config/maps/cesium_man.json",
        json: include_str!("../../config/maps/cesium_man.json"),
    },
    Entry {
        name: "kaykit",
        file: "config/maps/kaykit.json",
        json: include_str!("../../config/maps/kaykit.json"),
    },
];

/// The named maps of the catalog, parsed. The embedded files are checked by a test,
/// so a parse failure here is a build defect and the entry is skipped.
fn maps() -> impl Iterator<Item = (&'static str, &'static str, NamedBoneMap)> {
    entries().map(|(e, map, _)| (e.name, e.file, map))
}

/// Each entry with its map and, for a skeleton file, the names of all its joints.
fn entries() -> impl Iterator<Item = (&'static Entry, NamedBoneMap, Option<Vec<String>>)> {
    ENTRIES.iter().filter_map(|e| {
        let value: serde_json::Value = serde_json::from_str(e.json).ok()?;
        let map = NamedBoneMap::from_json(&value, Path::new(e.file)).ok()?;
        let joints = value["joints"].as_array().map(|joints| {
            joints
                .iter()
                .filter_map(|j| j["name"].as_str().map(str::to_owned))
                .collect()
        });
        Some((e, map, joints))
    })
}

/// The catalog map by name (`lab19`, `cmu`, `cesium_man`, `kaykit`).
#[must_use]
pub fn map_named(name: &str) -> Option<NamedBoneMap> {
    maps().find(|(n, _, _)| *n == name).map(|(_, _, m)| m)
}

/// The catalog map that fits `skeleton` best, with where it came from
/// (`catalog map cmu (config/maps/cmu.json)`). A map fits when it resolves against
/// the skeleton and its sides are the figure's; a skeleton file's map (lab19) only
/// when the skeleton is that one, with no joint the file does not have: a rig that
/// shares its names but has more joints (a lower back, toes) is another skeleton,
/// left to the recognizer.
#[must_use]
pub fn find_map(skeleton: &Skeleton) -> Option<(String, NamedBoneMap)> {
    let mut fits = entries()
        .filter(|(_, m, joints)| {
            let same_joints = joints
                .as_ref()
                .is_none_or(|names| skeleton.joints().iter().all(|j| names.contains(&j.name)));
            same_joints && BoneMap::resolve(m, skeleton).is_ok()
        })
        .peekable();
    // Recognized once, only for a rig some map's names fit.
    fits.peek()?;
    let seen = recognize(skeleton).into_humanoid();
    fits.filter(|(_, m, _)| {
        seen.as_ref()
            .is_none_or(|r| !sides_swapped(skeleton, m, &r.map))
    })
    .max_by_key(|(_, m, _)| m.bones.len())
    .map(|(e, map, _)| (format!("catalog map {} ({})", e.name, e.file), map))
}

/// Whether `map` puts the legs or the arms on the sides opposite to those the
/// figure's geometry gives them (`seen`, the recognizer's map): a mirrored rig
/// keeps its names, its `Left` joints on the figure's right. Names lie; the
/// recognizer, which takes sides from the geometry, is then left to map it. A
/// limb counts as swapped when each side's joint lies on the chain the other side's
/// is seen on (the same joint, or one above the other: a hip joint and a thigh).
fn sides_swapped(skeleton: &Skeleton, map: &NamedBoneMap, seen: &NamedBoneMap) -> bool {
    use crate::humanoid::HumanBone as B;
    let joint = |m: &NamedBoneMap, b| m.bones.get(&b).and_then(|name| skeleton.find(name));
    let one_chain = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => a == b || skeleton.is_ancestor(a, b) || skeleton.is_ancestor(b, a),
        _ => false,
    };
    [
        (B::LeftUpperLeg, B::RightUpperLeg),
        (B::LeftUpperArm, B::RightUpperArm),
    ]
    .into_iter()
    .any(|(left, right)| {
        one_chain(joint(map, left), joint(seen, right))
            && one_chain(joint(map, right), joint(seen, left))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirrored_rig_keeps_no_catalog_map_whose_sides_its_geometry_swaps() {
        use crate::formats::skeleton_json::embedded_rig;
        use crate::humanoid::HumanBone as B;
        let lab19 = embedded_rig("lab19", super::super::builtin::LAB19_JSON).skeleton;
        let found = find_map(&lab19).map(|(source, _)| source);
        assert_eq!(
            found.as_deref(),
            Some("catalog map lab19 (config/skeletons/lab19.json)")
        );
        // The same rig seen in a mirror: every `Left` joint on the figure's right.
        let x = glam::Vec3::new(-1.0, 1.0, 1.0);
        let joints = lab19
            .joints()
            .iter()
            .map(|j| {
                let mut j = j.clone();
                let r = j.rest.rotation;
                j.rest.translation *= x;
                j.rest.rotation = glam::Quat::from_xyzw(r.x, -r.y, -r.z, r.w);
                j.end = j.end.map(|e| e * x);
                j
            })
            .collect();
        let mirrored = Skeleton::new(joints).unwrap();
        assert_eq!(find_map(&mirrored), None);
        let seen = recognize(&mirrored).into_humanoid().unwrap().map;
        assert_eq!(seen.bones[&B::LeftUpperLeg], "RightHip");
        assert_eq!(seen.bones[&B::LeftUpperArm], "RightShoulder");
    }

    #[test]
    fn every_embedded_map_parses() {
        assert_eq!(maps().count(), ENTRIES.len());
        for entry in &ENTRIES {
            assert!(map_named(entry.name).is_some(), "{}", entry.name);
        }
    }
}
