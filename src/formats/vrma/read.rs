//! The `.vrma` reader: any conforming file, not just ours. Rest rotations of any
//! kind, partial humanoids, extra non-humanoid nodes, zero-length clips, STEP /
//! LINEAR / CUBICSPLINE samplers, several animations. Tracks are converted to
//! normalized space once, when read; `VrmaAnimation::sample` then fills a
//! `HumanoidPose` at any time without allocating.

use std::path::Path;
use std::sync::Arc;

use glam::{Affine3A, Quat, Vec3};
use gltf::json;
use serde_json::Value;

use crate::formats::gltf::GltfDoc;
use crate::formats::sampler::{Interpolation, KeyValue, Keyframes, merged_key_times};
use crate::humanoid::bone::BONE_COUNT;
use crate::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt, Preset};

use super::{EXTENSION, VrmaError, VrmaRest};

/// One animation of a `.vrma`, in normalized space.
#[derive(Debug, Clone)]
pub struct VrmaAnimation {
    /// The animation's name, if the file gives one.
    pub name: Option<String>,
    /// Time of the last key, seconds (0 for a zero-length clip).
    pub duration: f32,
    rotations: Vec<(HumanBone, Keyframes<Quat>)>,
    hips: Option<Keyframes<Vec3>>,
    /// Hips position in the file's rest pose, model space.
    pub rest_hips_position: Vec3,
    presets: Vec<(Preset, Keyframes<f32>)>,
    customs: Vec<(String, Keyframes<f32>)>,
    custom_names: CustomNames,
    look_at: Option<Keyframes<Quat>>,
    rest: VrmaRest,
    /// Every expression the file declares, animated or not: presets, then custom.
    declared_expressions: Vec<String>,
    notes: Vec<String>,
}

/// Reads a `.vrma` file; `animation` picks one by name or index (the first when
/// `None`). Only the JSON is read whole; each track reads its own bytes from the
/// file, so a long recording is not held in memory twice. A file without
/// animations is `VrmaError::NoAnimation`.
pub fn load(path: &Path, animation: Option<&str>) -> Result<VrmaAnimation, VrmaError> {
    read_doc(GltfDoc::open(path)?, Pick::Animation(animation))
}

/// Parses every animation of a `.vrma`; `VrmaError::NoAnimation` when it has none.
pub fn parse_all(bytes: &[u8], path: &Path) -> Result<Vec<VrmaAnimation>, VrmaError> {
    let count = GltfDoc::from_bytes(bytes, path)?.root.animations.len();
    if count == 0 {
        return Err(VrmaError::NoAnimation {
            path: path.to_owned(),
        });
    }
    (0..count)
        .map(|i| parse(bytes, path, Some(&i.to_string())))
        .collect()
}

/// Parses `.vrma` bytes; `path` names the file in messages and resolves external
/// buffers. A file without animations is `VrmaError::NoAnimation`.
pub fn parse(
    bytes: &[u8],
    path: &Path,
    animation: Option<&str>,
) -> Result<VrmaAnimation, VrmaError> {
    read_doc(
        GltfDoc::from_bytes(bytes, path)?,
        Pick::Animation(animation),
    )
}

/// Parses what a `.vrma` declares whatever its animations: the humanoid rest, the
/// expressions and what the reader noticed; no tracks.
pub fn parse_rest(bytes: &[u8], path: &Path) -> Result<VrmaAnimation, VrmaError> {
    read_doc(GltfDoc::from_bytes(bytes, path)?, Pick::RestOnly)
}

/// Whether the `.vrma` at `path` is a glTF clip of nodes under another name: its
/// humanoid map names no bone while a channel of one of its animations turns or
/// moves a node (an FBX clip converted to `.vrma` with `humanBones: {}`). Such a
/// file reads as the glTF clip it is, its skeleton recognized
/// (`formats::load_rig`). `false` for a file that does not read, so that the
/// `.vrma` reader says why.
#[must_use]
pub fn is_node_clip(path: &Path) -> bool {
    let Ok(doc) = GltfDoc::open(path) else {
        return false;
    };
    let Ok(declared) = Declared::read(&doc, &mut Vec::new()) else {
        return false;
    };
    declared.bones.iter().all(Option::is_none)
        && doc
            .root
            .animations
            .iter()
            .any(|anim| node_channels(&declared, anim) > 0)
}

/// How many channels of `anim` turn or move a node that is no humanoid bone,
/// expression or look-at target.
fn node_channels(declared: &Declared, anim: &json::Animation) -> usize {
    use json::animation::Property;
    anim.channels
        .iter()
        .filter(|c| {
            matches!(declared.target(c.target.node.value()), Target::Other)
                && matches!(
                    c.target.path,
                    json::validation::Checked::Valid(Property::Rotation | Property::Translation)
                )
        })
        .count()
}

/// What `read_doc` reads besides the declarations and the rest.
enum Pick<'a> {
    /// The animation of this name or index, the first when `None`.
    Animation(Option<&'a str>),
    /// No animation.
    RestOnly,
}

fn read_doc(mut doc: GltfDoc, pick: Pick) -> Result<VrmaAnimation, VrmaError> {
    let path = doc.path;
    let mut notes = Vec::new();
    let declared = Declared::read(&doc, &mut notes)?;
    let world = node_worlds(&doc)?;
    let rotation_of = |node: usize| world[node].to_scale_rotation_translation().1.normalize();

    // Rest world rotation of every mapped bone's node, and of the hips' parent.
    let node_of = |bone: HumanBone| declared.bones[bone.index()];
    let hips_node = node_of(HumanBone::Hips);
    let hips_parent = hips_node.and_then(|n| parent_of(&doc, n)).map(|p| world[p]);
    let hips_parent = hips_parent.unwrap_or(Affine3A::IDENTITY);

    let mut rest_positions = [None; BONE_COUNT];
    for bone in crate::humanoid::bone::ALL {
        rest_positions[bone.index()] = node_of(bone).map(|n| Vec3::from(world[n].translation));
    }
    let lift = standing_lift(&rest_positions, &mut notes);
    for position in rest_positions.iter_mut().flatten() {
        *position += lift;
    }
    // The hips track's points are lifted with the rest.
    let hips_parent = Affine3A::from_translation(lift) * hips_parent;
    let rest = VrmaRest::from_positions(&rest_positions, declared.look_at_offset);
    let rest_hips_position = rest_positions[HumanBone::Hips.index()].unwrap_or(Vec3::ZERO);

    let mut result = VrmaAnimation {
        name: None,
        duration: 0.0,
        rotations: Vec::new(),
        hips: None,
        rest_hips_position,
        presets: Vec::new(),
        customs: Vec::new(),
        custom_names: CustomNames::default(),
        look_at: None,
        rest,
        declared_expressions: declared
            .presets
            .iter()
            .map(|(p, _)| p.name().to_owned())
            .chain(declared.customs.iter().map(|(name, _)| name.clone()))
            .collect(),
        notes,
    };
    let index = match pick {
        Pick::RestOnly => return Ok(result),
        Pick::Animation(animation) => pick_animation(&doc, animation)?,
    };
    let anim = doc.root.animations[index].clone();
    result.name = anim.name.clone();
    // A map that names no bone while channels turn or move other nodes (an FBX clip
    // converted to `.vrma` with `humanBones: {}`): the clip would play as a still
    // rest, so it is refused, saying how its skeleton can be read.
    if declared.bones.iter().all(Option::is_none) {
        let moved = node_channels(&declared, &anim);
        if moved > 0 {
            return Err(invalid(
                path,
                &format!("extensions.{EXTENSION}.humanoid.humanBones"),
                format!(
                    "names no bone, so the {moved} channels of animations[{index}] that turn \
                     or move nodes drive none; read as a glTF clip (the file renamed .glb), \
                     its skeleton is recognized"
                ),
            ));
        }
    }
    let unbounded = anim
        .samplers
        .iter()
        .map(|s| s.input.value())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|&i| {
            doc.root
                .accessors
                .get(i)
                .is_some_and(|a| a.min.is_none() || a.max.is_none())
        })
        .count();
    if unbounded > 0 {
        result.notes.push(format!(
            "{unbounded} key-time accessor{} without min/max (glTF requires them; UniVRM leaves them out): read anyway",
            if unbounded == 1 { "" } else { "s" }
        ));
    }
    for (c, channel) in anim.channels.iter().enumerate() {
        let place = format!("animations[{index}].channels[{c}]");
        let node = channel.target.node.value();
        if node >= doc.root.nodes.len() {
            return Err(invalid(path, &place, format!("node {node} does not exist")));
        }
        let path_kind = match channel.target.path {
            json::validation::Checked::Valid(p) => p,
            json::validation::Checked::Invalid => continue,
        };
        let sampler_index = channel.sampler.value();
        let Some(sampler) = anim.samplers.get(sampler_index) else {
            return Err(invalid(
                path,
                &place,
                format!("sampler {sampler_index} does not exist"),
            ));
        };
        let place = format!("animations[{index}].samplers[{sampler_index}]");
        let interpolation = match sampler.interpolation {
            json::validation::Checked::Valid(json::animation::Interpolation::Step) => {
                Interpolation::Step
            }
            json::validation::Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            _ => Interpolation::Linear,
        };
        use json::animation::Property;
        let target = declared.target(node);
        match (target, path_kind) {
            (Target::Bone(bone), Property::Rotation)
                if !matches!(bone, HumanBone::LeftEye | HumanBone::RightEye) =>
            {
                // N = W(p) · L · W(b)⁻¹, p the nearest humanoid parent (hips: the
                // hips' parent node). Linear in L, so tangents convert the same way.
                let parent = bone.parent_in(|b| node_of(b).is_some());
                let pre = match parent.and_then(node_of) {
                    Some(p) => rotation_of(p),
                    None => hips_parent.to_scale_rotation_translation().1.normalize(),
                };
                let post = node_of(bone).map_or(Quat::IDENTITY, |n| rotation_of(n).conjugate());
                let (times, values) = read_quats(&mut doc, sampler, &place)?;
                let values = values.into_iter().map(|q| pre * q * post).collect();
                let keys = keyframes(path, &place, times, values, interpolation)?;
                result.rotations.push((bone, keys));
            }
            (Target::Bone(HumanBone::Hips), Property::Translation) => {
                let (times, values) = read_vec3s(&mut doc, sampler, &place)?;
                let values = convert_points(values, interpolation, &hips_parent);
                result.hips = Some(keyframes(path, &place, times, values, interpolation)?);
            }
            (Target::Preset(preset), Property::Translation) => {
                let (times, values) = read_vec3s(&mut doc, sampler, &place)?;
                let values = values.into_iter().map(|v| v.x).collect();
                result.presets.push((
                    preset,
                    keyframes(path, &place, times, values, interpolation)?,
                ));
            }
            (Target::Custom(name), Property::Translation) => {
                let (times, values) = read_vec3s(&mut doc, sampler, &place)?;
                let values = values.into_iter().map(|v| v.x).collect();
                let keys = keyframes(path, &place, times, values, interpolation)?;
                result.custom_names.slot_or_insert(&name);
                result.customs.push((name, keys));
            }
            (Target::LookAt, Property::Rotation) => {
                let (times, values) = read_quats(&mut doc, sampler, &place)?;
                result.look_at = Some(keyframes(path, &place, times, values, interpolation)?);
            }
            // Scale, translation of other bones, and non-humanoid nodes: not part of
            // a VRM animation; ignored.
            _ => {}
        }
    }
    let turned: Vec<bool> = (0..doc.root.nodes.len())
        .map(|n| {
            anim.channels.iter().any(|c| {
                c.target.node.value() == n
                    && c.target.path
                        == json::validation::Checked::Valid(json::animation::Property::Rotation)
            })
        })
        .collect();
    let notes = unplayed_turns(&doc, &declared, &turned, &result);
    result.notes.extend(notes);
    result.duration = result.last_key_time();
    Ok(result)
}

/// A note for each declared bone no channel turns that hangs below nodes of no
/// humanoid bone which channels do turn (between it and its humanoid parent's
/// node): a bone is played from its own node's channel, here as in
/// three-vrm-animation, so those turns move no bone. A `.vrma` written from a BVH
/// (pixiv's `idle_loop.vrma`) names as `head` the end site above the keyed head.
fn unplayed_turns(
    doc: &GltfDoc,
    declared: &Declared,
    turned: &[bool],
    read: &VrmaAnimation,
) -> Vec<String> {
    let node_of = |bone: HumanBone| declared.bones[bone.index()];
    let name = |n: usize| {
        doc.root.nodes[n]
            .name
            .clone()
            .map_or_else(|| format!("node {n}"), |name| format!("`{name}`"))
    };
    let mut notes = Vec::new();
    for bone in crate::humanoid::bone::ALL {
        let Some(node) = node_of(bone) else { continue };
        // The hips have no parent to turn them; the eyes are not played by rotation.
        let unplayed = matches!(
            bone,
            HumanBone::Hips | HumanBone::LeftEye | HumanBone::RightEye
        );
        if unplayed || read.rotations.iter().any(|(b, _)| *b == bone) {
            continue;
        }
        let stop = bone.parent_in(|b| node_of(b).is_some()).and_then(node_of);
        let mut between = Vec::new();
        let mut at = parent_of(doc, node);
        // No cycle: `node_worlds` refused the file before.
        while let Some(n) = at.filter(|&n| Some(n) != stop) {
            if turned.get(n).copied().unwrap_or(false) {
                between.push(name(n));
            }
            at = parent_of(doc, n);
        }
        if !between.is_empty() {
            notes.push(format!(
                "`{}` is node {}, which no channel turns, below {}, which channels turn and \
                 which hold no humanoid bone: their turns are played on no bone (as \
                 three-vrm-animation plays the file)",
                bone.name(),
                name(node),
                between.join(" and ")
            ));
        }
    }
    notes
}

/// How far up a rest whose hips lie at or below the origin (a figure hanging below
/// it: the VRM Add-on exports an armature turned over so) is moved to stand on its
/// lowest bone, as a written `.vrma`'s rest stands (`VrmaRest::from_mapped`): the
/// hips height is then how far the hips are above the feet, and hips motion scales
/// onto an avatar with its sign. Zero for a rest with the hips above the origin, or
/// with no bone below the hips (legs hanging from above them). three-vrm-animation
/// scales such a file's hips motion by a negative factor.
fn standing_lift(rest_positions: &[Option<Vec3>; BONE_COUNT], notes: &mut Vec<String>) -> Vec3 {
    let Some(hips) = rest_positions[HumanBone::Hips.index()] else {
        return Vec3::ZERO;
    };
    let lowest = rest_positions
        .iter()
        .flatten()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    if hips.y > 0.0 || lowest.partial_cmp(&hips.y) != Some(std::cmp::Ordering::Less) {
        return Vec3::ZERO;
    }
    notes.push(format!(
        "the rest's hips lie {:.3} m below the origin (the figure hangs below it): the rest stands on its lowest bone, hips {:.3} m up, and the hips motion moves with it",
        -hips.y,
        hips.y - lowest
    ));
    Vec3::new(0.0, -lowest, 0.0)
}

/// What a node stands for in the file's extension.
enum Target {
    Bone(HumanBone),
    Preset(Preset),
    Custom(String),
    LookAt,
    Other,
}

/// The extension's declarations, in node indices.
struct Declared {
    bones: [Option<usize>; BONE_COUNT],
    presets: Vec<(Preset, usize)>,
    customs: Vec<(String, usize)>,
    look_at: Option<usize>,
    look_at_offset: Option<Vec3>,
}

impl Declared {
    fn read(doc: &GltfDoc, notes: &mut Vec<String>) -> Result<Self, VrmaError> {
        let path = doc.path;
        let ext = doc
            .raw
            .get("extensions")
            .and_then(|e| e.get(EXTENSION))
            .ok_or_else(|| VrmaError::NotVrma {
                path: path.to_owned(),
            })?;
        match ext.get("specVersion") {
            Some(Value::String(v)) if v == "1.0" => {}
            // The pre-release name of the same format, which three-vrm-animation
            // also reads as 1.0.
            Some(Value::String(v)) if v == "1.0-draft" => notes.push(format!(
                "{EXTENSION} specVersion is the pre-release `1.0-draft`: read as 1.0"
            )),
            None => notes.push(format!(
                "{EXTENSION} has no specVersion (older UniVRM writes none): read as 1.0"
            )),
            Some(other) => {
                return Err(VrmaError::SpecVersion {
                    path: path.to_owned(),
                    found: other.to_string().trim_matches('"').to_owned(),
                });
            }
        }
        let node_count = doc.root.nodes.len();
        let node_at = |value: &Value, place: &str| -> Result<usize, VrmaError> {
            let node = value
                .get("node")
                .and_then(Value::as_u64)
                .ok_or_else(|| invalid(path, place, "expected an object with a `node` index"))?;
            usize::try_from(node)
                .ok()
                .filter(|n| *n < node_count)
                .ok_or_else(|| invalid(path, place, format!("node {node} does not exist")))
        };
        let object = |value: Option<&Value>,
                      place: &str|
         -> Result<serde_json::Map<String, Value>, VrmaError> {
            match value {
                None => Ok(serde_json::Map::new()),
                Some(Value::Object(map)) => Ok(map.clone()),
                Some(_) => Err(invalid(path, place, "expected an object")),
            }
        };
        let base = format!("extensions.{EXTENSION}");
        let mut bones = [None; BONE_COUNT];
        let humanoid = ext.get("humanoid");
        let bones_place = format!("{base}.humanoid.humanBones");
        // Names outside VRM 1.0 (`leftThumbTip` on a BVH converter's end joints) name
        // no bone of any avatar: three-vrm-animation reads the file and plays the
        // others, and so does this reader.
        let mut unknown = Vec::new();
        for (name, value) in object(humanoid.and_then(|h| h.get("humanBones")), &bones_place)? {
            let place = format!("{bones_place}.{name}");
            let Ok(bone) = name.parse::<HumanBone>() else {
                unknown.push(format!("`{name}`"));
                continue;
            };
            let node = node_at(&value, &place)?;
            // One node, one bone: its channels could not say which bone they move.
            if let Some(other) = bones.iter().position(|n| *n == Some(node)) {
                let other = crate::humanoid::bone::ALL[other].name();
                return Err(invalid(
                    path,
                    &place,
                    format!("node {node} is `{other}` too"),
                ));
            }
            bones[bone.index()] = Some(node);
        }
        if !unknown.is_empty() {
            notes.push(format!(
                "{bones_place}: {} not VRM 1.0 humanoid bone names, ignored (no avatar has such a bone): {}",
                unknown.len(),
                unknown.join(", ")
            ));
        }
        let expressions = ext.get("expressions");
        let mut presets = Vec::new();
        let preset_place = format!("{base}.expressions.preset");
        for (name, value) in object(expressions.and_then(|e| e.get("preset")), &preset_place)? {
            let place = format!("{preset_place}.{name}");
            let preset: Preset = name
                .parse()
                .map_err(|_| invalid(path, &place, "not a VRM 1.0 preset expression"))?;
            if preset.is_look_at() {
                // The spec keeps these four for lookAt; files keyed them anyway.
                notes.push(format!(
                    "{place}: {EXTENSION} keeps `{name}` for lookAt, not for expressions: read as an expression weight, left out of a written .vrma"
                ));
            }
            presets.push((preset, node_at(&value, &place)?));
        }
        let mut customs = Vec::new();
        let custom_place = format!("{base}.expressions.custom");
        for (name, value) in object(expressions.and_then(|e| e.get("custom")), &custom_place)? {
            let place = format!("{custom_place}.{name}");
            customs.push((name, node_at(&value, &place)?));
        }
        let look = ext.get("lookAt");
        let look_place = format!("{base}.lookAt");
        let look_at = match look.and_then(|l| l.get("node")) {
            Some(_) => Some(node_at(look.unwrap_or(&Value::Null), &look_place)?),
            None => None,
        };
        let look_at_offset = match look.and_then(|l| l.get("offsetFromHeadBone")) {
            None => None,
            Some(v) => {
                let numbers: Option<Vec<f32>> = v.as_array().map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_f64().map(|f| f as f32))
                        .collect()
                });
                match numbers.as_deref() {
                    Some(&[x, y, z]) if x.is_finite() && y.is_finite() && z.is_finite() => {
                        Some(Vec3::new(x, y, z))
                    }
                    _ => {
                        return Err(invalid(
                            path,
                            &format!("{look_place}.offsetFromHeadBone"),
                            "expected three finite numbers",
                        ));
                    }
                }
            }
        };
        Ok(Self {
            bones,
            presets,
            customs,
            look_at,
            look_at_offset,
        })
    }

    fn target(&self, node: usize) -> Target {
        if let Some(i) = self.bones.iter().position(|n| *n == Some(node))
            && let Some(bone) = HumanBone::from_index(i)
        {
            return Target::Bone(bone);
        }
        if let Some((p, _)) = self.presets.iter().find(|(_, n)| *n == node) {
            return Target::Preset(*p);
        }
        if let Some((name, _)) = self.customs.iter().find(|(_, n)| *n == node) {
            return Target::Custom(name.clone());
        }
        if self.look_at == Some(node) {
            return Target::LookAt;
        }
        Target::Other
    }
}

fn invalid(path: &Path, place: &str, message: impl Into<String>) -> VrmaError {
    VrmaError::Invalid {
        path: path.to_owned(),
        place: place.to_owned(),
        message: message.into(),
    }
}

/// The index of the animation called `name` (or at index `name`); the first when
/// `None`.
fn pick_animation(doc: &GltfDoc, name: Option<&str>) -> Result<usize, VrmaError> {
    let animations = &doc.root.animations;
    if animations.is_empty() {
        return Err(VrmaError::NoAnimation {
            path: doc.path.to_owned(),
        });
    }
    let Some(n) = name else { return Ok(0) };
    animations
        .iter()
        .position(|a| a.name.as_deref() == Some(n))
        .or_else(|| n.parse::<usize>().ok().filter(|i| *i < animations.len()))
        .ok_or_else(|| {
            let names: Vec<String> = animations
                .iter()
                .enumerate()
                .map(|(i, a)| a.name.clone().unwrap_or_else(|| i.to_string()))
                .collect();
            invalid(
                doc.path,
                "animations",
                format!("no animation `{n}` (the file has: {})", names.join(", ")),
            )
        })
}

/// The parent node of `node`, if any.
fn parent_of(doc: &GltfDoc, node: usize) -> Option<usize> {
    doc.root.nodes.iter().position(|n| {
        n.children
            .as_ref()
            .is_some_and(|c| c.iter().any(|child| child.value() == node))
    })
}

/// Rest world transform of every node. Cycles and non-finite transforms are errors.
fn node_worlds(doc: &GltfDoc) -> Result<Vec<Affine3A>, VrmaError> {
    let nodes = &doc.root.nodes;
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for child in node.children.iter().flatten() {
            let c = child.value();
            if c >= nodes.len() {
                return Err(invalid(
                    doc.path,
                    &format!("nodes[{i}].children"),
                    format!("node {c} does not exist"),
                ));
            }
            if parent[c].is_some_and(|p| p != i) {
                return Err(invalid(doc.path, &format!("nodes[{c}]"), "has two parents"));
            }
            parent[c] = Some(i);
        }
    }
    let mut local = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let affine = match &node.matrix {
            Some(m) => Affine3A::from_mat4(glam::Mat4::from_cols_array(m)),
            None => Affine3A::from_scale_rotation_translation(
                node.scale.map_or(Vec3::ONE, Vec3::from),
                node.rotation
                    .map_or(Quat::IDENTITY, |r| Quat::from_array(r.0).normalize()),
                node.translation.map_or(Vec3::ZERO, Vec3::from),
            ),
        };
        if !affine.is_finite() {
            return Err(invalid(
                doc.path,
                &format!("nodes[{i}]"),
                "transform is not finite",
            ));
        }
        local.push(affine);
    }
    let mut world: Vec<Option<Affine3A>> = vec![None; nodes.len()];
    for start in 0..nodes.len() {
        let mut chain = Vec::new();
        let mut j = Some(start);
        while let Some(k) = j {
            if world[k].is_some() {
                break;
            }
            if chain.len() > nodes.len() {
                return Err(invalid(
                    doc.path,
                    &format!("nodes[{start}]"),
                    "is its own ancestor",
                ));
            }
            chain.push(k);
            j = parent[k];
        }
        for &k in chain.iter().rev() {
            let above = parent[k]
                .and_then(|p| world[p])
                .unwrap_or(Affine3A::IDENTITY);
            world[k] = Some(above * local[k]);
        }
    }
    Ok(world
        .into_iter()
        .map(|w| w.unwrap_or(Affine3A::IDENTITY))
        .collect())
}

fn read_quats(
    doc: &mut GltfDoc,
    sampler: &json::animation::Sampler,
    place: &str,
) -> Result<(Arc<[f32]>, Vec<Quat>), VrmaError> {
    let times = doc.read_times(sampler.input.value())?;
    let flat = doc.read_floats(sampler.output.value(), 4)?;
    let values: Vec<Quat> = flat
        .chunks_exact(4)
        .map(|c| Quat::from_xyzw(c[0], c[1], c[2], c[3]))
        .collect();
    if values.iter().any(|q| !q.is_finite()) {
        return Err(invalid(
            doc.path,
            place,
            "output holds a value that is not finite",
        ));
    }
    Ok((times, values))
}

fn read_vec3s(
    doc: &mut GltfDoc,
    sampler: &json::animation::Sampler,
    place: &str,
) -> Result<(Arc<[f32]>, Vec<Vec3>), VrmaError> {
    let times = doc.read_times(sampler.input.value())?;
    let flat = doc.read_floats(sampler.output.value(), 3)?;
    let values: Vec<Vec3> = flat.chunks_exact(3).map(Vec3::from_slice).collect();
    if values.iter().any(|v| !v.is_finite()) {
        return Err(invalid(
            doc.path,
            place,
            "output holds a value that is not finite",
        ));
    }
    Ok((times, values))
}

/// Hips keys into model space: points through the hips' parent node; a cubic
/// spline's tangents (every element but the middle of each triple) as vectors.
fn convert_points(values: Vec<Vec3>, interpolation: Interpolation, parent: &Affine3A) -> Vec<Vec3> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let is_tangent = interpolation == Interpolation::CubicSpline && i % 3 != 1;
            if is_tangent {
                parent.transform_vector3(v)
            } else {
                parent.transform_point3(v)
            }
        })
        .collect()
}

fn keyframes<T: KeyValue>(
    path: &Path,
    place: &str,
    times: Arc<[f32]>,
    values: Vec<T>,
    interpolation: Interpolation,
) -> Result<Keyframes<T>, VrmaError> {
    Keyframes::new(times, values, interpolation).map_err(|e| invalid(path, place, e.to_string()))
}

impl VrmaAnimation {
    fn last_key_time(&self) -> f32 {
        let rotations = self.rotations.iter().map(|(_, k)| k.end());
        let presets = self.presets.iter().map(|(_, k)| k.end());
        let customs = self.customs.iter().map(|(_, k)| k.end());
        rotations
            .chain(presets)
            .chain(customs)
            .chain(self.hips.as_ref().map(Keyframes::end))
            .chain(self.look_at.as_ref().map(Keyframes::end))
            .fold(0.0, f32::max)
    }

    /// What the reader noticed and a user should know: a file that bends the spec
    /// in a way the reader tolerates (no `specVersion`, key times without min/max).
    #[must_use]
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Every expression the file declares (presets by their VRM name, then custom
    /// ones), animated or not.
    #[must_use]
    pub fn declared_expressions(&self) -> &[String] {
        &self.declared_expressions
    }

    /// The expressions this animation keys: presets by their VRM name, then custom.
    pub fn animated_expressions(&self) -> impl Iterator<Item = &str> + '_ {
        let presets = self.presets.iter().map(|(p, _)| p.name());
        presets.chain(self.customs.iter().map(|(name, _)| name.as_str()))
    }

    /// Whether the hips position is keyed.
    #[must_use]
    pub fn has_hips_track(&self) -> bool {
        self.hips.is_some()
    }

    /// The lowest and the highest height of the keyed hips over their keys, model
    /// space metres; `None` when the hips position is not keyed.
    #[must_use]
    pub fn hips_height_range(&self) -> Option<(f32, f32)> {
        let hips = self.hips.as_ref()?;
        let heights = hips.times().iter().map(|&t| hips.sample(t).y);
        heights.fold(None, |range, y| match range {
            None => Some((y, y)),
            Some((low, high)) => Some((low.min(y), high.max(y))),
        })
    }

    /// Whether the lookAt is keyed.
    #[must_use]
    pub fn has_look_at_track(&self) -> bool {
        self.look_at.is_some()
    }

    /// The interpolations the tracks use, each once, in the order first met.
    #[must_use]
    pub fn interpolations(&self) -> Vec<Interpolation> {
        let rotations = self.rotations.iter().map(|(_, k)| k.interpolation());
        let presets = self.presets.iter().map(|(_, k)| k.interpolation());
        let customs = self.customs.iter().map(|(_, k)| k.interpolation());
        let mut found = Vec::new();
        for i in rotations
            .chain(self.hips.as_ref().map(Keyframes::interpolation))
            .chain(presets)
            .chain(customs)
            .chain(self.look_at.as_ref().map(Keyframes::interpolation))
        {
            if !found.contains(&i) {
                found.push(i);
            }
        }
        found
    }

    /// The humanoid bones that have a rotation track.
    pub fn bones(&self) -> impl Iterator<Item = HumanBone> + '_ {
        self.rotations.iter().map(|(b, _)| *b)
    }

    /// The names behind the custom expression slots `sample` fills.
    #[must_use]
    pub fn custom_names(&self) -> &CustomNames {
        &self.custom_names
    }

    /// The file's T-pose (bone node positions), for writing the clip again.
    #[must_use]
    pub fn rest(&self) -> &VrmaRest {
        &self.rest
    }

    /// Every track's key times merged, in order: the frames that play the clip back
    /// key for key. A file whose tracks are keyed at their own times (keyframe
    /// reduction keeps each track's keys apart) loses no key of any track, as it
    /// would by taking one track's times. A CUBICSPLINE track adds the times between
    /// its keys that frames played back LINEAR need to follow its curve
    /// (`Keyframes::playback_times`).
    #[must_use]
    pub fn frame_times(&self) -> Vec<f32> {
        let rotations = self.rotations.iter().map(|(_, k)| k.playback_times());
        let presets = self.presets.iter().map(|(_, k)| k.playback_times());
        let customs = self.customs.iter().map(|(_, k)| k.playback_times());
        let tracks: Vec<_> = rotations
            .chain(self.hips.as_ref().map(Keyframes::playback_times))
            .chain(presets)
            .chain(customs)
            .chain(self.look_at.as_ref().map(Keyframes::playback_times))
            .collect();
        merged_key_times(tracks.iter().map(|t| &**t))
    }

    /// Fills `pose` at `t` seconds (clamped to the clip): the rotation of every
    /// tracked bone, the hips position (the rest position when untracked), the
    /// rest hips height, expressions (custom slots as `custom_names`) and lookAt.
    pub fn sample(&self, t: f32, pose: &mut HumanoidPose) {
        for (bone, keys) in &self.rotations {
            pose.set_rotation(*bone, keys.sample(t));
        }
        pose.hips_position = self
            .hips
            .as_ref()
            .map_or(self.rest_hips_position, |k| k.sample(t));
        if self.rest_hips_position.y > 0.0 {
            pose.rest_hips_height = self.rest_hips_position.y;
        }
        for (preset, keys) in &self.presets {
            pose.expressions.set_preset(*preset, keys.sample(t));
        }
        for (name, keys) in &self.customs {
            if let Some(slot) = self.custom_names.slot(name) {
                pose.expressions.set_custom(slot, keys.sample(t));
            }
        }
        pose.look_at = self
            .look_at
            .as_ref()
            .map(|k| LookAt::from_rotation(k.sample(t)));
    }
}
