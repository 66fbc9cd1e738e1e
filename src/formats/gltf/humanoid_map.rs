//! The humanoid map a glTF file declares, in node indices: VRM 1.0's `VRMC_vrm`,
//! VRM 0.x's `VRM` (Unity's thumb names shifted to VRM 1.0's),
//! `EXT_skeleton_humanoid` (in any of the three forms the spec's README and schema
//! give) or a `.vrma`'s `VRMC_vrm_animation`, in that order of precedence. Node indices are checked; errors name the
//! JSON path.

use std::path::Path;

use serde_json::Value;

use super::{DocError, GltfError};
use crate::humanoid::HumanBone;
use crate::skeleton::TPoseSource;

/// The humanoid map a file declares, in node indices.
pub(super) struct DeclaredMap {
    pub(super) source: &'static str,
    pub(super) bones: Vec<(HumanBone, usize)>,
    /// A VRM model's rest is its T-pose (both VRM specifications say so); the other
    /// extensions' rests are measured.
    pub(super) t_pose: TPoseSource,
}

/// Which humanoid extension to read, in order of precedence.
const HUMANOID_EXTENSIONS: [(&str, &str); 4] = [
    ("VRMC_vrm", "VRMC_vrm humanoid"),
    ("VRM", "VRM 0.x humanoid"),
    ("EXT_skeleton_humanoid", "EXT_skeleton_humanoid"),
    ("VRMC_vrm_animation", "VRMC_vrm_animation humanoid"),
];

/// Whether a file whose map comes from `source` (a `DeclaredMap::source`) is in
/// metres by its own specification: a VRM model (1.0 or 0.x) or a VRM Animation.
pub(super) fn metres_by_spec(source: &str) -> bool {
    HUMANOID_EXTENSIONS
        .iter()
        .any(|&(key, s)| s == source && key != "EXT_skeleton_humanoid")
}

/// The humanoid map of the highest-precedence extension present (see
/// `HUMANOID_EXTENSIONS`), with node indices checked.
pub(super) fn read_humanoid(
    raw: &Value,
    node_count: usize,
    path: &Path,
    notes: &mut Vec<String>,
) -> Result<Option<DeclaredMap>, GltfError> {
    let Some(extensions) = raw.get("extensions").and_then(Value::as_object) else {
        return Ok(None);
    };
    let present: Vec<_> = HUMANOID_EXTENSIONS
        .iter()
        .filter_map(|&(key, source)| extensions.get(key).map(|v| (key, source, v)))
        .collect();
    let Some(&(key, source, value)) = present.first() else {
        return Ok(None);
    };
    if present.len() > 1 {
        let others: Vec<_> = present.iter().skip(1).map(|p| p.1).collect();
        notes.push(format!(
            "the file also declares {}; using {source}",
            others.join(" and ")
        ));
    }
    let reader = HumanoidReader { path, node_count };
    if !value.is_object() {
        return Err(reader.invalid(
            &format!("extensions.{key}"),
            format!("expected an object, found {}", json_kind(value)),
        ));
    }
    let mut half_turn_note = None;
    let (bones, t_pose) = match key {
        "VRMC_vrm" => {
            reader.vrm1_spec_version(value, notes)?;
            let beta_thumbs = beta_thumb_names(value, notes);
            (
                reader.vrm1(key, value, None, beta_thumbs)?,
                TPoseSource::Declared { half_turn: false },
            )
        }
        "VRMC_vrm_animation" => (
            reader.vrm1(key, value, Some(notes), false)?,
            TPoseSource::Measured,
        ),
        "VRM" => {
            half_turn_note = Some(notes.len());
            notes.push(
                "VRM 0.x model: the rest correction turns it half a turn about +Y (VRM 0.x \
                 models face -Z)"
                    .to_owned(),
            );
            (
                reader.vrm0(value, notes)?,
                TPoseSource::Declared { half_turn: true },
            )
        }
        _ => (
            reader.ext_skeleton_humanoid(value, notes)?,
            TPoseSource::Measured,
        ),
    };
    // A map that names no bone declares nothing: a `.vrma` converted from an FBX
    // clip keeps the extension with `humanBones: {}`, its skeleton a whole humanoid.
    if bones.is_empty() {
        // No map, no VRM 0.x half turn of it.
        if let Some(at) = half_turn_note {
            notes.remove(at);
        }
        notes.push(format!(
            "extensions.{key}: the humanoid map names no bone: the skeleton is recognized \
             as if the file declared none"
        ));
        return Ok(None);
    }
    Ok(Some(DeclaredMap {
        source,
        bones,
        t_pose,
    }))
}

/// Whether a `VRMC_vrm` map uses the thumb names of VRM 1.0's pre-release (UniVRM's
/// 1.0 betas wrote `leftThumbProximal`, `leftThumbIntermediate`, `leftThumbDistal`,
/// as VRM 0.x does): a `leftThumbIntermediate` or `rightThumbIntermediate` entry says
/// so, and then the thumb is read one bone down, Proximal as Metacarpal and
/// Intermediate as Proximal, as three-vrm reads such a file. Noted when it applies.
fn beta_thumb_names(vrm: &Value, notes: &mut Vec<String>) -> bool {
    let bones = vrm.get("humanoid").and_then(|h| h.get("humanBones"));
    let beta = ["leftThumbIntermediate", "rightThumbIntermediate"]
        .iter()
        .any(|name| bones.and_then(|b| b.get(name)).is_some());
    if beta {
        notes.push(
            "VRMC_vrm names the thumb as VRM 1.0's pre-release did (`ThumbIntermediate`): \
             read as 1.0's, Proximal as Metacarpal and Intermediate as Proximal"
                .to_owned(),
        );
    }
    beta
}

/// A pre-release VRM 1.0 thumb name (`beta_thumb_names`) as VRM 1.0 names the bone;
/// any other name unchanged.
fn vrm1_thumb_name(name: &str) -> &str {
    match name {
        "leftThumbProximal" => "leftThumbMetacarpal",
        "leftThumbIntermediate" => "leftThumbProximal",
        "rightThumbProximal" => "rightThumbMetacarpal",
        "rightThumbIntermediate" => "rightThumbProximal",
        other => other,
    }
}

/// What a JSON value is, for an error: `an array`, `a string`, ...
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads the three humanoid extensions' JSON, naming the JSON path in errors.
struct HumanoidReader<'a> {
    path: &'a Path,
    node_count: usize,
}

impl HumanoidReader<'_> {
    fn invalid(&self, place: &str, message: impl Into<String>) -> GltfError {
        DocError::Invalid {
            path: self.path.to_owned(),
            place: place.to_owned(),
            message: message.into(),
        }
        .into()
    }

    /// A node index that exists.
    fn node(&self, value: Option<&Value>, place: &str) -> Result<usize, GltfError> {
        let value = value.ok_or_else(|| self.invalid(place, "missing"))?;
        let index = value
            .as_u64()
            .ok_or_else(|| self.invalid(place, format!("expected a node index, found {value}")))?;
        match usize::try_from(index) {
            Ok(i) if i < self.node_count => Ok(i),
            _ => Err(self.invalid(place, format!("node {index} does not exist"))),
        }
    }

    fn bone(&self, name: &str, place: &str) -> Result<HumanBone, GltfError> {
        name.parse()
            .map_err(|e: crate::humanoid::bone::UnknownBone| self.invalid(place, e.to_string()))
    }

    /// `VRMC_vrm.specVersion`: 1.0; its pre-release `1.0-beta` (VRoid Studio and
    /// UniVRM betas wrote it; three-vrm reads it as 1.0) and a missing one are read
    /// as 1.0 with a note; any other version is refused, as three-vrm refuses it.
    fn vrm1_spec_version(&self, vrm: &Value, notes: &mut Vec<String>) -> Result<(), GltfError> {
        match vrm.get("specVersion") {
            Some(Value::String(v)) if v == "1.0" => {}
            Some(Value::String(v)) if v == "1.0-beta" => notes
                .push("VRMC_vrm specVersion is the pre-release `1.0-beta`: read as 1.0".to_owned()),
            None => notes.push("VRMC_vrm has no specVersion: read as 1.0".to_owned()),
            Some(other) => {
                return Err(self.invalid(
                    "extensions.VRMC_vrm.specVersion",
                    format!(
                        "`{}`; only 1.0 (or its pre-release `1.0-beta`) is supported",
                        other.to_string().trim_matches('"')
                    ),
                ));
            }
        }
        Ok(())
    }

    /// VRM 1.0 (`VRMC_vrm`, and `VRMC_vrm_animation` alike):
    /// `humanoid.humanBones = {"hips": {"node": 3}, ...}`. With `skipped`, names
    /// outside VRM 1.0 are left out with a note there (a `.vrma`'s, as its reader
    /// does: `vrma::read`); without, they are refused. With `beta_thumbs`, the
    /// thumb names are the pre-release's (`beta_thumb_names`).
    fn vrm1(
        &self,
        key: &str,
        vrm: &Value,
        skipped: Option<&mut Vec<String>>,
        beta_thumbs: bool,
    ) -> Result<Vec<(HumanBone, usize)>, GltfError> {
        let place = &format!("extensions.{key}.humanoid.humanBones");
        let bones = vrm
            .get("humanoid")
            .and_then(|h| h.get("humanBones"))
            .ok_or_else(|| self.invalid(place, "missing"))?
            .as_object()
            .ok_or_else(|| self.invalid(place, "expected an object of bone: {\"node\": index}"))?;
        let mut out = Vec::with_capacity(bones.len());
        let mut unknown = Vec::new();
        for (name, entry) in bones {
            if skipped.is_some() && name.parse::<HumanBone>().is_err() {
                unknown.push(format!("`{name}`"));
                continue;
            }
            let spec_name = if beta_thumbs {
                vrm1_thumb_name(name)
            } else {
                name
            };
            let bone = self.bone(spec_name, &format!("{place}.{name}"))?;
            let node = self.node(entry.get("node"), &format!("{place}.{name}.node"))?;
            out.push((bone, node));
        }
        if let (Some(notes), false) = (skipped, unknown.is_empty()) {
            notes.push(format!(
                "{place}: {} not VRM 1.0 humanoid bone names, ignored (no avatar has such a bone): {}",
                unknown.len(),
                unknown.join(", ")
            ));
        }
        Ok(out)
    }

    /// VRM 0.x: `humanoid.humanBones = [{"bone": "hips", "node": 1}, ...]`, Unity thumb
    /// names. Entries without a node or with a bone VRM 0.x lacks are skipped (noted).
    fn vrm0(
        &self,
        vrm: &Value,
        notes: &mut Vec<String>,
    ) -> Result<Vec<(HumanBone, usize)>, GltfError> {
        let place = "extensions.VRM.humanoid.humanBones";
        let entries = vrm
            .get("humanoid")
            .and_then(|h| h.get("humanBones"))
            .ok_or_else(|| self.invalid(place, "missing"))?
            .as_array()
            .ok_or_else(|| self.invalid(place, "expected an array of {\"bone\", \"node\"}"))?;
        let mut out: Vec<(HumanBone, usize)> = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("{place}[{i}]");
            let name = entry
                .get("bone")
                .and_then(Value::as_str)
                .ok_or_else(|| self.invalid(&format!("{at}.bone"), "expected a bone name"))?;
            let node_place = format!("{at}.node");
            let node_value = entry.get("node");
            if node_value.and_then(Value::as_i64).is_some_and(|n| n < 0) {
                notes.push(format!("{at}: `{name}` has no node; skipped"));
                continue;
            }
            let node = self.node(node_value, &node_place)?;
            let Some(bone) = vrm0_bone(name) else {
                notes.push(format!(
                    "{at}: `{name}` is not a VRM 0.x humanoid bone; skipped"
                ));
                continue;
            };
            if out.iter().any(|(b, _)| *b == bone) {
                notes.push(format!(
                    "{at}: `{name}` is listed twice; the first entry wins"
                ));
                continue;
            }
            out.push((bone, node));
        }
        Ok(out)
    }

    /// EXT_skeleton_humanoid: the README's `humanoidSkeletons` array (first one
    /// used), the schema's single `humanoidSkeleton`, or the skeleton itself.
    fn ext_skeleton_humanoid(
        &self,
        ext: &Value,
        notes: &mut Vec<String>,
    ) -> Result<Vec<(HumanBone, usize)>, GltfError> {
        let base = "extensions.EXT_skeleton_humanoid";
        let (skeleton, place) = if let Some(list) = ext.get("humanoidSkeletons") {
            let place = format!("{base}.humanoidSkeletons");
            let list = list
                .as_array()
                .ok_or_else(|| self.invalid(&place, "expected an array of skeletons"))?;
            let first = list
                .first()
                .ok_or_else(|| self.invalid(&place, "is empty"))?;
            if list.len() > 1 {
                notes.push(format!(
                    "EXT_skeleton_humanoid declares {} humanoid skeletons; using the first",
                    list.len()
                ));
            }
            (first, format!("{place}[0]"))
        } else if let Some(one) = ext.get("humanoidSkeleton") {
            (one, format!("{base}.humanoidSkeleton"))
        } else if ext.get("humanoidBones").is_some() {
            (ext, base.to_owned())
        } else {
            return Err(self.invalid(
                base,
                "expected `humanoidSkeletons`, `humanoidSkeleton` or `humanoidBones`",
            ));
        };
        if let Some(root) = skeleton.get("rootNode") {
            self.node(Some(root), &format!("{place}.rootNode"))?;
        }
        let bones_place = format!("{place}.humanoidBones");
        let bones = skeleton
            .get("humanoidBones")
            .ok_or_else(|| self.invalid(&bones_place, "missing"))?
            .as_object()
            .ok_or_else(|| self.invalid(&bones_place, "expected an object of bone: node"))?;
        let mut out = Vec::with_capacity(bones.len());
        for (name, node) in bones {
            let at = format!("{bones_place}.{name}");
            out.push((self.bone(name, &at)?, self.node(Some(node), &at)?));
        }
        Ok(out)
    }
}

/// A VRM 0.x bone name as a VRM 1.0 bone. Unity's thumb names are shifted by one:
/// its `ThumbProximal/Intermediate/Distal` are VRM 1.0's `ThumbMetacarpal/Proximal/Distal`.
fn vrm0_bone(name: &str) -> Option<HumanBone> {
    let renamed = match name {
        "leftThumbProximal" => "leftThumbMetacarpal",
        "leftThumbIntermediate" => "leftThumbProximal",
        "rightThumbProximal" => "rightThumbMetacarpal",
        "rightThumbIntermediate" => "rightThumbProximal",
        "leftThumbMetacarpal" | "rightThumbMetacarpal" => return None,
        other => other,
    };
    renamed.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn human_bones_node_out_of_range_is_named() {
        let vrm1 = json!({"VRMC_vrm": {"humanoid": {"humanBones": {
            "hips": {"node": 0}, "leftHand": {"node": 99}
        }}}});
        assert_eq!(
            error_of(&with_extensions(hips_spine_head(), vrm1)),
            format!(
                "{PATH}: extensions.VRMC_vrm.humanoid.humanBones.leftHand.node: node 99 does not exist"
            )
        );
        let vrm0 = json!({"VRM": {"humanoid": {"humanBones": [
            {"bone": "hips", "node": 0}, {"bone": "head", "node": 3}
        ]}}});
        assert_eq!(
            error_of(&with_extensions(hips_spine_head(), vrm0)),
            format!("{PATH}: extensions.VRM.humanoid.humanBones[1].node: node 3 does not exist")
        );
    }

    #[test]
    fn a_humanoid_extension_that_is_not_an_object_is_named_at_the_extension() {
        let cases = [
            (
                json!({"VRMC_vrm": []}),
                "extensions.VRMC_vrm: expected an object, found an array",
            ),
            (
                json!({"VRM": "1.0"}),
                "extensions.VRM: expected an object, found a string",
            ),
            (
                json!({"EXT_skeleton_humanoid": null}),
                "extensions.EXT_skeleton_humanoid: expected an object, found null",
            ),
        ];
        for (extensions, expected) in cases {
            assert_eq!(
                error_of(&with_extensions(hips_spine_head(), extensions)),
                format!("{PATH}: {expected}")
            );
        }
    }

    #[test]
    fn unknown_humanoid_bone_name_is_named() {
        let vrm1 = json!({"VRMC_vrm": {"humanoid": {"humanBones": {"leftPinky": {"node": 2}}}}});
        assert_eq!(
            error_of(&with_extensions(hips_spine_head(), vrm1)),
            format!(
                "{PATH}: extensions.VRMC_vrm.humanoid.humanBones.leftPinky: `leftPinky` is not a VRM 1.0 humanoid bone name"
            )
        );
        let ext = json!({"EXT_skeleton_humanoid": {"humanoidSkeletons": [
            {"rootNode": 0, "humanoidBones": {"hips": 0, "tail": 1}}
        ]}});
        assert_eq!(
            error_of(&with_extensions(hips_spine_head(), ext)),
            format!(
                "{PATH}: extensions.EXT_skeleton_humanoid.humanoidSkeletons[0].humanoidBones.tail: `tail` is not a VRM 1.0 humanoid bone name"
            )
        );
    }

    #[test]
    fn a_vrma_map_leaves_out_names_outside_vrm_with_a_note() {
        // A BVH-to-VRMA converter's finger end joints (`leftThumbTip`): read as
        // the `.vrma` reader reads them; an avatar's map still refuses such a name.
        let vrma = json!({"VRMC_vrm_animation": {"specVersion": "1.0", "humanoid": {"humanBones": {
            "hips": {"node": 0}, "spine": {"node": 1}, "head": {"node": 2},
            "leftThumbTip": {"node": 2}
        }}}});
        let rig = parse_doc(&with_extensions(hips_spine_head(), vrma)).unwrap();
        assert_eq!(
            rig.notes,
            [
                "extensions.VRMC_vrm_animation.humanoid.humanBones: 1 not VRM 1.0 humanoid bone names, ignored (no avatar has such a bone): `leftThumbTip`"
            ]
        );
        assert_eq!(mapped(&rig, HumanBone::Head), Some("Head"));
        assert_eq!(mapped(&rig, HumanBone::Hips), Some("Hips"));
    }

    #[test]
    fn a_humanoid_map_naming_no_bone_is_no_map_and_the_nodes_are_the_skeleton() {
        // An FBX clip converted to `.vrma` with `humanBones: {}`: the nodes are the
        // skeleton and nothing is mapped from the file (recognition maps it).
        let empty = [
            json!({"VRMC_vrm_animation": {"specVersion": "1.0", "humanoid": {"humanBones": {}}}}),
            json!({"VRM": {"humanoid": {"humanBones": []}}}),
        ];
        for extensions in empty {
            let key = extensions
                .as_object()
                .and_then(|o| o.keys().next().cloned());
            let rig = parse_doc(&with_extensions(hips_spine_head(), extensions)).unwrap();
            assert!(rig.bone_map.is_none(), "{key:?}");
            assert!(rig.map_source.is_none(), "{key:?}");
            assert_eq!(names(&rig), ["Hips", "Spine", "Head"], "{key:?}");
            assert!(
                rig.notes
                    .iter()
                    .any(|n| n.contains("the humanoid map names no bone")),
                "{key:?}: {:?}",
                rig.notes
            );
            assert!(
                !rig.notes.iter().any(|n| n.starts_with("VRM 0.x model")),
                "{key:?}: {:?}",
                rig.notes
            );
        }
    }

    #[test]
    fn vrmc_vrm_spec_version_beta_or_missing_reads_with_a_note_and_another_is_refused() {
        let vrm1 = |version: Value| {
            let mut ext = json!({"humanoid": {"humanBones": {"hips": {"node": 0}}}});
            if !version.is_null() {
                ext["specVersion"] = version;
            }
            with_extensions(hips_spine_head(), json!({ "VRMC_vrm": ext }))
        };
        let notes = |version: Value| parse_doc(&vrm1(version)).unwrap().notes;
        assert!(notes(json!("1.0")).is_empty());
        assert_eq!(
            notes(json!("1.0-beta")),
            ["VRMC_vrm specVersion is the pre-release `1.0-beta`: read as 1.0"]
        );
        assert_eq!(
            notes(Value::Null),
            ["VRMC_vrm has no specVersion: read as 1.0"]
        );
        for version in [json!("2.0"), json!(1.0)] {
            assert_eq!(
                error_of(&vrm1(version.clone())),
                format!(
                    "{PATH}: extensions.VRMC_vrm.specVersion: `{}`; only 1.0 (or its pre-release `1.0-beta`) is supported",
                    version.to_string().trim_matches('"')
                )
            );
        }
    }

    #[test]
    fn vrmc_vrm_with_the_pre_release_thumb_names_reads_them_one_bone_down() {
        // UniVRM's 1.0 betas wrote VRM 0.x's thumb names into `VRMC_vrm`: three-vrm
        // reads Proximal as Metacarpal and Intermediate as Proximal when either
        // side has an Intermediate, and so does this reader.
        let nodes = json!([
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
            {"name": "Thumb1", "translation": [0.1, 0.0, 0.0], "children": [2]},
            {"name": "Thumb2", "translation": [0.03, 0.0, 0.0], "children": [3]},
            {"name": "Thumb3", "translation": [0.03, 0.0, 0.0]}
        ]);
        let vrm1 = |bones: Value| {
            with_extensions(
                nodes.clone(),
                json!({"VRMC_vrm": {"specVersion": "1.0-beta", "humanoid": {"humanBones": bones}}}),
            )
        };
        let rig = parse_doc(&vrm1(json!({
            "hips": {"node": 0}, "leftThumbProximal": {"node": 1},
            "leftThumbIntermediate": {"node": 2}, "leftThumbDistal": {"node": 3}
        })))
        .unwrap();
        assert_eq!(mapped(&rig, HumanBone::LeftThumbMetacarpal), Some("Thumb1"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbProximal), Some("Thumb2"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbDistal), Some("Thumb3"));
        assert_eq!(
            rig.notes,
            [
                "VRMC_vrm specVersion is the pre-release `1.0-beta`: read as 1.0",
                "VRMC_vrm names the thumb as VRM 1.0's pre-release did (`ThumbIntermediate`): \
                 read as 1.0's, Proximal as Metacarpal and Intermediate as Proximal"
            ]
        );
        // 1.0's own names are read as they are: Proximal stays Proximal.
        let rig = parse_doc(&vrm1(json!({
            "hips": {"node": 0}, "leftThumbMetacarpal": {"node": 1},
            "leftThumbProximal": {"node": 2}, "leftThumbDistal": {"node": 3}
        })))
        .unwrap();
        assert_eq!(mapped(&rig, HumanBone::LeftThumbMetacarpal), Some("Thumb1"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbProximal), Some("Thumb2"));
        assert_eq!(rig.notes.len(), 1);
    }

    #[test]
    fn ext_skeleton_humanoid_is_read_in_all_three_forms() {
        let bones = json!({"hips": 0, "spine": 1, "head": 2});
        let forms = [
            json!({"humanoidSkeletons": [{"rootNode": 0, "humanoidBones": bones}]}),
            json!({"humanoidSkeleton": {"rootNode": 0, "humanoidBones": bones}}),
            json!({"rootNode": 0, "humanoidBones": bones}),
        ];
        for form in forms {
            let doc = with_extensions(hips_spine_head(), json!({"EXT_skeleton_humanoid": form}));
            let rig = parse_doc(&doc).unwrap();
            assert_eq!(rig.map_source.as_deref(), Some("EXT_skeleton_humanoid"));
            // Not a VRM: its rest is measured.
            assert_eq!(
                rig.bone_map.as_ref().map(|m| m.t_pose),
                Some(TPoseSource::Measured)
            );
            assert_eq!(mapped(&rig, HumanBone::Hips), Some("Hips"));
            assert_eq!(mapped(&rig, HumanBone::Spine), Some("Spine"));
            assert_eq!(mapped(&rig, HumanBone::Head), Some("Head"));
            assert_eq!(names(&rig), ["Hips", "Spine", "Head"]);
            assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        }
        let two = json!({"EXT_skeleton_humanoid": {"humanoidSkeletons": [
            {"rootNode": 0, "humanoidBones": {"hips": 0}},
            {"rootNode": 0, "humanoidBones": {"hips": 1}}
        ]}});
        let rig = parse_doc(&with_extensions(hips_spine_head(), two)).unwrap();
        assert_eq!(mapped(&rig, HumanBone::Hips), Some("Hips"));
        assert_eq!(
            rig.notes,
            ["EXT_skeleton_humanoid declares 2 humanoid skeletons; using the first"]
        );
    }

    #[test]
    fn vrm0_thumb_names_are_shifted_to_vrm1_and_bad_entries_skipped() {
        let nodes = json!([
            {"name": "root", "children": [1]},
            {"name": "hips", "children": [2, 5]},
            {"name": "thumbA", "children": [3]},
            {"name": "thumbB", "children": [4]},
            {"name": "thumbC"},
            {"name": "tail"}
        ]);
        let vrm0 = json!({"VRM": {"humanoid": {"humanBones": [
            {"bone": "hips", "node": 1},
            {"bone": "leftThumbProximal", "node": 2},
            {"bone": "leftThumbIntermediate", "node": 3},
            {"bone": "leftThumbDistal", "node": 4},
            {"bone": "spine", "node": -1},
            {"bone": "tail", "node": 5}
        ]}}});
        let rig = parse_doc(&with_extensions(nodes, vrm0)).unwrap();
        assert_eq!(rig.map_source.as_deref(), Some("VRM 0.x humanoid"));
        // A VRM's rest is its T-pose; a VRM 0.x model's turned half a turn.
        assert_eq!(
            rig.bone_map.as_ref().map(|m| m.t_pose),
            Some(TPoseSource::Declared { half_turn: true })
        );
        assert_eq!(mapped(&rig, HumanBone::LeftThumbMetacarpal), Some("thumbA"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbProximal), Some("thumbB"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbDistal), Some("thumbC"));
        assert_eq!(rig.bone_map.as_ref().map(|m| m.bones.len()), Some(4));
        assert_eq!(names(&rig), ["root", "hips", "thumbA", "thumbB", "thumbC"]);
        assert_eq!(
            rig.notes,
            [
                "VRM 0.x model: the rest correction turns it half a turn about +Y (VRM 0.x models face -Z)",
                "extensions.VRM.humanoid.humanBones[4]: `spine` has no node; skipped",
                "extensions.VRM.humanoid.humanBones[5]: `tail` is not a VRM 0.x humanoid bone; skipped",
            ]
        );
    }

    #[test]
    fn vrmc_vrm_wins_over_vrm0_and_ext_skeleton_humanoid() {
        let extensions = json!({
            "EXT_skeleton_humanoid": {"humanoidBones": {"hips": 1}},
            "VRM": {"humanoid": {"humanBones": [{"bone": "hips", "node": 2}]}},
            "VRMC_vrm": {"specVersion": "1.0", "humanoid": {"humanBones": {"hips": {"node": 0}}}}
        });
        let rig = parse_doc(&with_extensions(hips_spine_head(), extensions)).unwrap();
        assert_eq!(rig.map_source.as_deref(), Some("VRMC_vrm humanoid"));
        assert_eq!(
            rig.bone_map.as_ref().map(|m| m.t_pose),
            Some(TPoseSource::Declared { half_turn: false })
        );
        assert_eq!(mapped(&rig, HumanBone::Hips), Some("Hips"));
        assert_eq!(names(&rig), ["Hips"]);
        assert_eq!(
            rig.notes,
            [
                "the file also declares VRM 0.x humanoid and EXT_skeleton_humanoid; using VRMC_vrm humanoid"
            ]
        );
    }

    #[test]
    fn example_vrm_maps_53_bones_from_vrmc_vrm_and_faces_plus_z() {
        let Some(rig) = load_asset("vrm/Example.vrm") else {
            return;
        };
        assert_eq!(rig.map_source.as_deref(), Some("VRMC_vrm humanoid"));
        assert_eq!(rig.bone_map.as_ref().map(|m| m.bones.len()), Some(53));
        assert_eq!(rig.skeleton.len(), 54);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        assert!(position(&rig, "upper_arm.L").x > 0.0);
        assert!(position(&rig, "toes.L").z > position(&rig, "foot.L").z);
        assert!(
            droop_deg(&rig, "upper_arm.L", "hand.L").abs() < 1.0,
            "T-pose"
        );
    }

    #[test]
    fn basic_armature_vrm0_has_a_vrm0_map_and_faces_minus_z() {
        let Some(rig) = load_asset("vrm/basic_armature_vrm0.vrm") else {
            return;
        };
        assert_eq!(rig.map_source.as_deref(), Some("VRM 0.x humanoid"));
        assert_eq!(rig.bone_map.as_ref().map(|m| m.bones.len()), Some(53));
        assert_eq!(rig.skeleton.len(), 54, "53 humanoid nodes and `root`");
        assert_eq!(
            rig.notes,
            [
                "VRM 0.x model: the rest correction turns it half a turn about +Y (VRM 0.x models face -Z)"
            ]
        );
        assert_eq!(
            mapped(&rig, HumanBone::LeftThumbMetacarpal),
            Some("thumb_proximal.L")
        );
        assert_eq!(
            mapped(&rig, HumanBone::LeftThumbDistal),
            Some("thumb_distal.L")
        );
        assert!(position(&rig, "upper_arm.L").x < 0.0);
        assert!(position(&rig, "toes.L").z < position(&rig, "foot.L").z);
    }
}
