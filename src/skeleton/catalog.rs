//! Bone maps for well-known skeletons, embedded in the binary so `inspect` and the
//! tests find them from any directory: the lab's 19-joint skeleton, the CMU mocap
//! skeleton, Cesium Man and the KayKit character rig. A rig with no map of its own gets the catalog map that
//! resolves against it and maps the most bones.
//!
//! The automatic recognizer of arbitrary rigs is separate work; this catalog is the
//! exact, hand-checked maps for skeletons the project ships or tests against.

use std::path::Path;

use crate::skeleton::{BoneMap, NamedBoneMap, Skeleton};

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
/// the skeleton; a skeleton file's map (lab19) only when the skeleton is that one,
/// with no joint the file does not have: a rig that shares its names but has more
/// joints (a lower back, toes) is another skeleton, left to the recognizer.
#[must_use]
pub fn find_map(skeleton: &Skeleton) -> Option<(String, NamedBoneMap)> {
    entries()
        .filter(|(_, m, joints)| {
            let same_joints = joints
                .as_ref()
                .is_none_or(|names| skeleton.joints().iter().all(|j| names.contains(&j.name)));
            same_joints && BoneMap::resolve(m, skeleton).is_ok()
        })
        .max_by_key(|(_, m, _)| m.bones.len())
        .map(|(e, map, _)| (format!("catalog map {} ({})", e.name, e.file), map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_map_parses() {
        assert_eq!(maps().count(), ENTRIES.len());
        for entry in &ENTRIES {
            assert!(map_named(entry.name).is_some(), "{}", entry.name);
        }
    }
}
