//! A glTF humanoid that is not a VRM, written as a VRM 1.0 GLB for the viewer: the same
//! nodes, meshes, skins, materials, textures and animations, every buffer and image (the
//! GLB chunk, base64 data URIs, files beside a `.gltf`) embedded in one binary chunk, with
//! a `VRMC_vrm` extension whose humanoid is the bone map the bridge solves for, and
//! every node's local transform rewritten so the nodes stand in the bridge's T-pose for
//! the model, facing +Z (`RestCorrection::t_pose_world`), in metres.
//!
//! The inverse bind matrices stay as they are, so the skinned meshes follow the joints
//! into that T-pose: the file's rest is the T-pose VRM 1.0 asks for, and three-vrm poses
//! it as it poses any VRM. A file in centimetres or millimetres (`Rig::units`, which
//! the loader scaled the rig by) keeps its lengths below its top nodes: each joint
//! stands where the T-pose in metres puts it, scaled by the file's metres per unit, so
//! its meshes and bind matrices stay in file units and the scene's top nodes carry the
//! scale into metres. Nodes outside the skeleton (meshes, props) keep their place
//! under their parents. The `meta` names the source file and grants nothing beyond what
//! its author did: only the author may use it as an avatar, no redistribution.
//!
//! Pure over bytes but for the buffer and image files a `.gltf` names, read only inside
//! its folder (`external`). Does not decode meshes or images; a VRM (1.0 or 0.x) is left
//! to be served as it is (`to_vrm` returns `None`).

use std::collections::HashMap;
use std::path::Path;

use glam::{DAffine3, DMat4, DQuat, DVec3};
use serde_json::{Map, Value, json};

use super::doc::{DocError, GltfDoc, decode_base64, percent_decode};
use super::external;
use crate::formats::Units;
use crate::formats::glb::write_start;
use crate::retarget::MappedSkeleton;

/// The license VRM 1.0 models use when their author gives no other.
const LICENSE_URL: &str = "https://vrm.dev/licenses/1.0/";

/// Largest image file beside a `.gltf` embedded, bytes.
const MAX_IMAGE_BYTES: u64 = 1 << 28;

/// Why a glTF humanoid cannot be written as a VRM.
#[derive(Debug, thiserror::Error)]
pub enum AsVrmError {
    #[error(transparent)]
    Doc(#[from] DocError),
    #[error("{path}: {place}: {message}")]
    Invalid {
        path: String,
        place: String,
        message: String,
    },
}

/// `bytes` (the `.gltf`, `.glb` at `path`) as a VRM 1.0 GLB whose humanoid is `mapped`'s
/// map and whose rest is `mapped`'s T-pose; `None` when the file is a VRM already.
/// `mapped` is the file's rig as `inspect::map_rig` maps it, and `units` the units the
/// loader read the file in (`Rig::units`).
pub fn to_vrm(
    bytes: &[u8],
    path: &Path,
    mapped: &MappedSkeleton,
    units: Units,
) -> Result<Option<Vec<u8>>, AsVrmError> {
    let mut doc = GltfDoc::from_bytes(bytes, path)?;
    let extensions = doc.raw.get("extensions");
    if ["VRMC_vrm", "VRM"]
        .iter()
        .any(|key| extensions.and_then(|e| e.get(key)).is_some())
    {
        return Ok(None);
    }
    let invalid = |place: String, message: String| AsVrmError::Invalid {
        path: path.display().to_string(),
        place,
        message,
    };
    let mut json = doc.raw.clone();
    let mut bin = Vec::new();
    embed_buffers(&mut doc, &mut json, &mut bin)?;
    embed_images(path, &mut json, &mut bin).map_err(|(place, m)| invalid(place, m))?;

    let nodes = NodeTree::read(&json).map_err(|(place, m)| invalid(place, m))?;
    let joint_nodes = joint_nodes(&json, mapped).map_err(|m| invalid("nodes".into(), m))?;
    let t_pose = mapped.correction.t_pose_world(&mapped.skeleton);
    // A VRM stands on its origin: the whole scene is lifted so that the hips stand
    // their hips height over it (a rig centred on its origin, its feet below it).
    let hips = mapped
        .map
        .joint(crate::humanoid::HumanBone::Hips)
        .map_or(0.0, |j| t_pose[j].translation.y);
    let stand = DAffine3::from_translation(DVec3::new(
        0.0,
        f64::from(mapped.rest_hips_height() - hips),
        0.0,
    ));
    // World transforms in metres: a file unit is `to_metres` long. A joint stands in
    // the T-pose (metres) with its frame scaled into metres, so that what hangs below
    // it in file units (its children, its meshes, the inverse bind matrices) keeps
    // its size; every other node stays where it is under its parent.
    let to_metres = DAffine3::from_scale(DVec3::splat(f64::from(units.metres_per_unit())));
    let mut world = vec![None::<DAffine3>; nodes.local.len()];
    for &node in &nodes.order {
        let parent_world = nodes.parent[node]
            .and_then(|p| world[p])
            .unwrap_or(to_metres);
        world[node] = Some(match joint_nodes.get(&node) {
            Some(&joint) => affine_f64(&t_pose[joint]) * to_metres,
            None => parent_world * nodes.local[node],
        });
    }
    for &node in &nodes.order {
        let (Some(own), parent) = (world[node], nodes.parent[node].and_then(|p| world[p])) else {
            continue;
        };
        let local = match parent {
            Some(parent) => parent.inverse() * own,
            None => stand * own,
        };
        let (scale, rotation, translation) = DMat4::from(local).to_scale_rotation_translation();
        // A skinned mesh's node transform does nothing (the joints place the mesh):
        // it is left as it is, as the validator asks.
        let node_json = json["nodes"].get_mut(node).and_then(Value::as_object_mut);
        if let Some(n) = node_json.filter(|n| !n.contains_key("skin")) {
            n.remove("matrix");
            n.insert("translation".into(), json!(translation.to_array()));
            n.insert("rotation".into(), json!(rotation.normalize().to_array()));
            n.insert("scale".into(), json!(scale.to_array()));
        }
    }

    let mut human_bones = Map::new();
    let node_of: HashMap<usize, usize> = joint_nodes.iter().map(|(&n, &j)| (j, n)).collect();
    for (bone, joint) in mapped.map.pairs() {
        let Some(&node) = node_of.get(&joint) else {
            let name = &mapped.skeleton.joints()[joint].name;
            return Err(invalid(
                "nodes".into(),
                format!("no node for joint `{name}` ({})", bone.name()),
            ));
        };
        human_bones.insert(bone.name().into(), json!({ "node": node }));
    }
    let file = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let vrm = json!({
        "specVersion": "1.0",
        "meta": {
            "name": file,
            "version": "",
            "authors": [format!("the author of {file}")],
            "copyrightInformation": "",
            "references": [file],
            "licenseUrl": LICENSE_URL,
            "avatarPermission": "onlyAuthor",
            "allowExcessivelyViolentUsage": false,
            "allowExcessivelySexualUsage": false,
            "commercialUsage": "personalNonProfit",
            "allowPoliticalOrReligiousUsage": false,
            "allowAntisocialOrHateUsage": false,
            "creditNotation": "required",
            "allowRedistribution": false,
            "modification": "prohibited"
        },
        "humanoid": { "humanBones": human_bones }
    });
    let root = json
        .as_object_mut()
        .ok_or_else(|| invalid("the JSON".into(), "is not an object".into()))?;
    let ext = root
        .entry("extensions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| invalid("extensions".into(), "is not an object".into()))?;
    ext.insert("VRMC_vrm".into(), vrm);
    let used = root
        .entry("extensionsUsed")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| invalid("extensionsUsed".into(), "is not an array".into()))?;
    if !used.iter().any(|u| u == "VRMC_vrm") {
        used.push(json!("VRMC_vrm"));
    }

    let mut out = Vec::with_capacity(bin.len() + 4096);
    write_start(&mut out, &json, bin.len())
        .map_err(|e| invalid("the GLB".into(), e.to_string()))?;
    out.extend_from_slice(&bin);
    Ok(Some(out))
}

/// Appends every buffer to `bin` (each at a multiple of 4) and points every buffer
/// view at the one buffer that is the GLB chunk.
fn embed_buffers(doc: &mut GltfDoc, json: &mut Value, bin: &mut Vec<u8>) -> Result<(), DocError> {
    let count = json["buffers"].as_array().map_or(0, Vec::len);
    let mut offsets = Vec::with_capacity(count);
    for i in 0..count {
        offsets.push(bin.len());
        bin.extend_from_slice(doc.buffer(i)?);
        pad(bin);
    }
    if let Some(views) = json["bufferViews"].as_array_mut() {
        for (v, view) in views.iter_mut().enumerate() {
            let buffer = view["buffer"].as_u64().unwrap_or(0) as usize;
            let Some(&start) = offsets.get(buffer) else {
                return Err(doc.invalid(format!("bufferView {v}"), "names no buffer"));
            };
            let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
            view["buffer"] = json!(0);
            view["byteOffset"] = json!(start + offset);
        }
    }
    // A meshopt-compressed view names the buffer of its compressed bytes too.
    if let Some(views) = json["bufferViews"].as_array_mut() {
        for view in views {
            let meshopt = view
                .get_mut("extensions")
                .and_then(|e| e.get_mut("EXT_meshopt_compression"))
                .and_then(Value::as_object_mut);
            if let Some(ext) = meshopt
                && let Some(buffer) = ext.get("buffer").and_then(Value::as_u64)
            {
                let start = offsets.get(buffer as usize).copied().unwrap_or(0);
                let offset = ext.get("byteOffset").and_then(Value::as_u64).unwrap_or(0);
                ext.insert("buffer".into(), json!(0));
                ext.insert("byteOffset".into(), json!(start + offset as usize));
            }
        }
    }
    json["buffers"] = json!([{ "byteLength": bin.len() }]);
    Ok(())
}

/// Moves every image a URI names (a data URI, a file beside a `.gltf`) into `bin`,
/// behind a buffer view of its own.
fn embed_images(path: &Path, json: &mut Value, bin: &mut Vec<u8>) -> Result<(), (String, String)> {
    let folder = path.parent().unwrap_or(Path::new(""));
    let count = json["images"].as_array().map_or(0, Vec::len);
    for i in 0..count {
        let Some(uri) = json["images"][i]["uri"].as_str().map(str::to_owned) else {
            continue;
        };
        let place = format!("images[{i}]");
        let (bytes, mime) = if let Some(data) = uri.strip_prefix("data:") {
            let (header, encoded) = data.split_once(',').unwrap_or(("", ""));
            let mime = header.split(';').next().unwrap_or_default().to_owned();
            let bytes = decode_base64(encoded)
                .ok_or_else(|| (place.clone(), "data URI is not valid base64".to_owned()))?;
            (bytes, mime)
        } else if uri.contains("://") {
            return Err((place, format!("`{uri}` is not a relative file path")));
        } else {
            let relative = percent_decode(&uri);
            let bytes = external::read(folder, &relative, MAX_IMAGE_BYTES, external::trusted())
                .map_err(|e| (place.clone(), format!("`{uri}`: {e}")))?;
            (bytes, mime_of(&relative).to_owned())
        };
        let mime = json["images"][i]["mimeType"]
            .as_str()
            .map_or(mime, str::to_owned);
        let view = json["bufferViews"].as_array().map_or(0, Vec::len);
        let start = bin.len();
        bin.extend_from_slice(&bytes);
        pad(bin);
        let views = json
            .as_object_mut()
            .map(|o| o.entry("bufferViews").or_insert_with(|| json!([])));
        if let Some(Value::Array(views)) = views {
            views.push(json!({ "buffer": 0, "byteOffset": start, "byteLength": bytes.len() }));
        }
        if let Some(image) = json["images"][i].as_object_mut() {
            image.remove("uri");
            image.insert("bufferView".into(), json!(view));
            image.insert("mimeType".into(), json!(mime));
        }
    }
    if let Some(b) = json["buffers"].as_array_mut().and_then(|b| b.first_mut()) {
        b["byteLength"] = json!(bin.len());
    }
    Ok(())
}

/// An image's MIME type from its file name.
fn mime_of(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    match lower.rsplit('.').next() {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("ktx2") => "image/ktx2",
        _ => "image/png",
    }
}

fn pad(bin: &mut Vec<u8>) {
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
}

/// The nodes' local transforms and parents, and an order with parents first.
struct NodeTree {
    local: Vec<DAffine3>,
    parent: Vec<Option<usize>>,
    order: Vec<usize>,
}

impl NodeTree {
    fn read(json: &Value) -> Result<Self, (String, String)> {
        let empty = Vec::new();
        let nodes = json["nodes"].as_array().unwrap_or(&empty);
        let mut parent = vec![None; nodes.len()];
        let mut local = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            local.push(
                node_local(node).ok_or_else(|| {
                    (format!("nodes[{i}]"), "transform is not numbers".to_owned())
                })?,
            );
            for child in node["children"].as_array().unwrap_or(&empty) {
                let c = child
                    .as_u64()
                    .map(|c| c as usize)
                    .filter(|&c| c < nodes.len());
                match c {
                    Some(c) if parent[c].is_none() && c != i => parent[c] = Some(i),
                    _ => {
                        return Err((
                            format!("nodes[{i}].children"),
                            format!("names {child}, not a node of its own"),
                        ));
                    }
                }
            }
        }
        let mut order = Vec::with_capacity(nodes.len());
        let mut stack: Vec<usize> = (0..nodes.len())
            .rev()
            .filter(|&n| parent[n].is_none())
            .collect();
        while let Some(n) = stack.pop() {
            order.push(n);
            let children = nodes[n]["children"].as_array().unwrap_or(&empty);
            stack.extend(
                children
                    .iter()
                    .rev()
                    .filter_map(|c| c.as_u64())
                    .map(|c| c as usize),
            );
        }
        if order.len() != nodes.len() {
            return Err(("nodes".into(), "a node is its own ancestor".into()));
        }
        Ok(Self {
            local,
            parent,
            order,
        })
    }
}

/// A node's `matrix`, else its TRS.
fn node_local(node: &Value) -> Option<DAffine3> {
    let floats = |key: &str, default: &[f64]| -> Option<Vec<f64>> {
        match node.get(key) {
            None => Some(default.to_vec()),
            Some(v) => v.as_array()?.iter().map(Value::as_f64).collect(),
        }
    };
    if node.get("matrix").is_some() {
        let m = floats("matrix", &[])?;
        let m: [f64; 16] = m.try_into().ok()?;
        return Some(DAffine3::from_mat4(DMat4::from_cols_array(&m)));
    }
    let t: [f64; 3] = floats("translation", &[0.0; 3])?.try_into().ok()?;
    let r: [f64; 4] = floats("rotation", &[0.0, 0.0, 0.0, 1.0])?.try_into().ok()?;
    let s: [f64; 3] = floats("scale", &[1.0; 3])?.try_into().ok()?;
    Some(DAffine3::from_scale_rotation_translation(
        DVec3::from(s),
        DQuat::from_array(r).normalize(),
        DVec3::from(t),
    ))
}

/// The node of each skeleton joint, by the names the loader gives joints (the node's
/// name, `node{i}` when it has none, `#{i}` added when taken): node → joint.
fn joint_nodes(json: &Value, mapped: &MappedSkeleton) -> Result<HashMap<usize, usize>, String> {
    let empty = Vec::new();
    let nodes = json["nodes"].as_array().unwrap_or(&empty);
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let name = node["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("node{i}"), str::to_owned);
        by_name.entry(name).or_default().push(i);
    }
    let mut out = HashMap::new();
    for (j, joint) in mapped.skeleton.joints().iter().enumerate() {
        let node = match by_name.get(&joint.name).map(Vec::as_slice) {
            Some([only]) => Some(*only),
            Some([first, ..]) => Some(*first),
            _ => joint
                .name
                .rsplit_once('#')
                .and_then(|(_, i)| i.parse::<usize>().ok())
                .filter(|&i| i < nodes.len()),
        };
        let node = node.ok_or_else(|| format!("no node is joint `{}`", joint.name))?;
        out.insert(node, j);
    }
    Ok(out)
}

fn affine_f64(a: &glam::Affine3A) -> DAffine3 {
    DAffine3::from_mat4(glam::Mat4::from(*a).as_dmat4())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::skinned;
    use super::*;
    use crate::formats::inspect::map_rig;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::formats::{LoadOptions, Rig, load_rig};
    use crate::skeleton::TPoseSource;
    use glam::{Mat4, Quat, Vec3};

    /// The built-in humanoid's joints as a skinned glTF under an `Armature` node
    /// turned to face -Z and centred on the origin, its upper arms 45° down (an
    /// A-pose), bound as it stands; `units` file units to a metre (100: centimetres
    /// with no node scaling them).
    fn a_pose_facing_back(units: f32) -> Value {
        let humanoid = embedded_rig("humanoid", crate::skeleton::builtin::HUMANOID_JSON);
        let joints = humanoid.skeleton.joints();
        let down = 45f32.to_radians();
        // Centred on its origin, as Blender's metarigs are: the feet 0.9 m below it.
        let mut nodes = vec![json!({
            "name": "Armature",
            "translation": [0.0, -0.9 * units, 0.0],
            "rotation": Quat::from_rotation_y(std::f32::consts::PI).to_array(),
            "children": [1],
        })];
        let mut local = vec![Mat4::from_rotation_translation(
            Quat::from_rotation_y(std::f32::consts::PI),
            Vec3::new(0.0, -0.9 * units, 0.0),
        )];
        for (j, joint) in joints.iter().enumerate() {
            let rotation = match joint.name.as_str() {
                "leftUpperArm" => Quat::from_rotation_z(-down),
                "rightUpperArm" => Quat::from_rotation_z(down),
                _ => Quat::IDENTITY,
            };
            let children: Vec<usize> = humanoid.skeleton.children(j).map(|c| c + 1).collect();
            let translation = joint.rest.translation * units;
            let mut node = json!({
                "name": joint.name,
                "translation": translation.to_array(),
                "rotation": rotation.to_array(),
            });
            if !children.is_empty() {
                node["children"] = json!(children);
            }
            nodes.push(node);
            let parent = joint.parent.map_or(local[0], |p| local[p + 1]);
            local.push(parent * Mat4::from_rotation_translation(rotation, translation));
        }
        let skin_joints: Vec<usize> = (1..nodes.len()).collect();
        let inverse_binds: Vec<Mat4> = local[1..].iter().map(Mat4::inverse).collect();
        skinned(json!(nodes), &skin_joints, &inverse_binds)
    }

    fn loaded(dir: &Path, name: &str, bytes: &[u8]) -> (std::path::PathBuf, Rig) {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let rig = load_rig(&path, &LoadOptions::default()).expect("loads");
        (path, rig)
    }

    #[test]
    fn an_a_pose_rig_facing_back_becomes_a_vrm_1_in_the_t_pose_facing_front() {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = serde_json::to_vec(&a_pose_facing_back(1.0)).expect("JSON");
        let (path, rig) = loaded(dir.path(), "a-pose.gltf", &source);
        let mapped = map_rig("a-pose.gltf", &rig, None).expect("a humanoid");
        // The source really is turned and in an A-pose.
        let turn = mapped
            .correction
            .facing
            .angle_between(Quat::IDENTITY)
            .to_degrees();
        assert!((turn - 180.0).abs() < 0.1, "facing turned {turn}°");
        assert!((mapped.correction.arm_angle_deg - 45.0).abs() < 0.5);

        let vrm = to_vrm(&source, &path, &mapped, rig.units)
            .expect("converts")
            .expect("not a VRM");
        let (_, back) = loaded(dir.path(), "converted.vrm", &vrm);
        assert_eq!(back.map_source.as_deref(), Some("VRMC_vrm humanoid"));
        let converted = map_rig("converted.vrm", &back, None).expect("a humanoid");
        let names = |m: &MappedSkeleton| -> Vec<(HumanBoneName, String)> {
            m.map
                .pairs()
                .map(|(b, j)| (b.name(), m.skeleton.joints()[j].name.clone()))
                .collect()
        };
        assert_eq!(names(&converted), names(&mapped));
        let c = &converted.correction;
        assert!(matches!(c.source, TPoseSource::Declared { .. }));
        let facing = c.facing.angle_between(Quat::IDENTITY).to_degrees();
        assert!(facing < 0.01, "facing turned {facing}°");
        for b in &c.bones {
            assert!(
                b.angle_deg < 0.05,
                "{} {}° from the T-pose",
                b.bone.name(),
                b.angle_deg
            );
        }
        assert!(c.bones.len() >= 8, "{} bones checked", c.bones.len());
        // It stands on its origin, as a VRM does: the hips their height over it.
        let hips = converted.skeleton.rest_world()[converted
            .map
            .joint(crate::humanoid::HumanBone::Hips)
            .expect("hips")]
        .translation
        .y;
        let height = mapped.rest_hips_height();
        assert!(
            (hips - height).abs() < 1e-4,
            "hips at {hips}, {height} tall"
        );
        assert!((converted.rest_hips_height() - height).abs() < 1e-4);
        // The hands are where the T-pose puts them: out to the sides, facing +Z.
        let world = converted.skeleton.rest_world();
        let hand = |bone| Vec3::from(world[converted.map.joint(bone).expect("mapped")].translation);
        let (left, right) = (
            hand(crate::humanoid::HumanBone::LeftHand),
            hand(crate::humanoid::HumanBone::RightHand),
        );
        assert!(
            left.x > 0.6 && right.x < -0.6,
            "hands at {left} and {right}"
        );
        assert!(
            (left.y - right.y).abs() < 1e-4 && left.y > 1.3,
            "hands at {left} and {right}"
        );
    }

    type HumanBoneName = &'static str;

    #[test]
    fn a_vrm_is_left_as_it_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vrm = crate::formats::mannequin::mannequin_vrm();
        let (path, rig) = loaded(dir.path(), "mannequin.vrm", &vrm);
        let mapped = map_rig("mannequin.vrm", &rig, None).expect("a humanoid");
        assert!(
            to_vrm(&vrm, &path, &mapped, rig.units)
                .expect("reads")
                .is_none()
        );
    }

    #[test]
    fn a_rig_in_centimetres_becomes_a_vrm_in_metres_with_its_meshes_in_scale() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (units, name) in [(1.0, "metres.gltf"), (100.0, "centimetres.gltf")] {
            let doc = a_pose_facing_back(units);
            let source = serde_json::to_vec(&doc).expect("JSON");
            let (path, rig) = loaded(dir.path(), name, &source);
            assert_eq!(rig.units.metres_per_unit(), 1.0 / units, "{name}");
            let mapped = map_rig(name, &rig, None).expect("a humanoid");
            let vrm = to_vrm(&source, &path, &mapped, rig.units)
                .expect("converts")
                .expect("not a VRM");
            let (_, back) = loaded(dir.path(), "converted.vrm", &vrm);
            let converted = map_rig("converted.vrm", &back, None).expect("a humanoid");
            // The VRM stands as tall as the rig the poses are solved for, in metres.
            let (height, hips) = (mapped.rest_hips_height(), converted.rest_hips_height());
            assert!(
                (0.8..1.1).contains(&height) && (hips - height).abs() < 1e-4,
                "{name}: hips {hips} m in the VRM, {height} m solved for"
            );
            // A vertex 10 cm above the left hand's bind position, skinned to the hand
            // by the file's own inverse bind matrix, lands 10 cm from the hand.
            let hand = "leftHand";
            let j = back.skeleton.find(hand).expect("the hand");
            let node = doc["nodes"]
                .as_array()
                .and_then(|n| n.iter().position(|n| n["name"] == hand))
                .expect("a node");
            let skin = doc["skins"][0]["joints"].as_array().expect("joints");
            let k = skin.iter().position(|n| n == node).expect("a skin joint");
            let bind = bind_matrices(&doc)[k];
            let joint_world = Mat4::from(back.skeleton.rest_world()[j]);
            let at = bind.inverse().transform_point3(Vec3::ZERO);
            let above = at + Vec3::new(0.0, 0.1 * units, 0.0);
            let skinned = |v: Vec3| (joint_world * bind).transform_point3(v);
            let apart = skinned(above).distance(skinned(at));
            assert!((apart - 0.1).abs() < 1e-4, "{name}: {apart} m apart");
        }
    }

    /// The inverse bind matrices of a document `skinned` built.
    fn bind_matrices(doc: &Value) -> Vec<Mat4> {
        let uri = doc["buffers"][0]["uri"].as_str().expect("a data URI");
        let data = uri.split_once(',').map(|(_, d)| d).expect("base64");
        let bytes = decode_base64(data).expect("base64");
        bytes
            .chunks_exact(64)
            .map(|m| {
                let floats: Vec<f32> = m
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                Mat4::from_cols_slice(&floats)
            })
            .collect()
    }
}
