//! The `.vrma` writer: frames are appended as they come (`push`), the file is
//! written at the end (`write_to`), streaming the binary chunk straight from the
//! per-track buffers so that writing needs no second copy of the data.
//!
//! What it writes (see the module header of `vrma`): a node per recorded humanoid
//! bone in the T-pose of `VrmaRest` with identity rotations and no scale, the hips
//! first and the root of the scene; then one node per expression and the lookAt
//! node. One animation: hips translation, then one rotation channel per bone, then
//! expression weights (translation.x), then lookAt rotation; every sampler LINEAR
//! over one shared time accessor that carries min/max.

use std::io::{self, Write};
use std::path::Path;

use glam::{Quat, Vec3};
use serde_json::{Value, json};

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::expression::PRESET_COUNT;
use crate::humanoid::{CustomNames, HumanBone, HumanoidPose, Preset};

use super::{EXTENSION, VrmaError, VrmaRest};
use crate::formats::glb::{self, ElementType, FloatAccessor, GlbFile};
use crate::formats::tracks::{self, PushError};

/// Appends frames of a performance, then writes them as one `.vrma`.
#[derive(Debug, Clone)]
pub struct VrmaWriter {
    rest: VrmaRest,
    name: String,
    times: Vec<f32>,
    /// x, y, z, w per frame, for every bone seen so far.
    rotations: Vec<Option<Vec<f32>>>,
    /// x, y, z per frame: the hips position, model space.
    hips: Vec<f32>,
    /// Weight per frame, for every preset seen so far.
    presets: Vec<Option<Vec<f32>>>,
    /// Weight per frame, for every custom expression seen so far, by name.
    customs: Vec<(String, Vec<f32>)>,
    /// x, y, z, w per frame, once a frame has carried a lookAt.
    look_at: Option<Vec<f32>>,
}

impl VrmaWriter {
    /// An empty recording whose nodes will stand in the T-pose `rest`; `name`
    /// becomes the animation's name.
    #[must_use]
    pub fn new(rest: VrmaRest, name: &str) -> Self {
        Self {
            rest,
            name: name.to_owned(),
            times: Vec::new(),
            rotations: vec![None; BONE_COUNT],
            hips: Vec::new(),
            presets: vec![None; PRESET_COUNT],
            customs: Vec::new(),
            look_at: None,
        }
    }

    /// How many frames have been appended.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Appends one frame at `time` seconds. A bone, expression or lookAt that first
    /// appears now holds its rest (identity, weight 0) in the earlier frames; one
    /// that a frame lacks holds its previous value. Eyes are never written as bones
    /// (lookAt carries the gaze), nor the lookUp/Down/Left/Right presets.
    pub fn push(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        custom_names: &CustomNames,
    ) -> Result<(), PushError> {
        tracks::check_frame(&self.times, time, pose)?;
        let frames = self.times.len();
        self.times.push(time);
        self.hips.extend_from_slice(&pose.hips_position.to_array());
        let identity = Quat::IDENTITY.to_array();
        for bone in ALL {
            if matches!(bone, HumanBone::LeftEye | HumanBone::RightEye) {
                continue;
            }
            let value = pose.rotation(bone).map(|q| q.normalize().to_array());
            tracks::record(
                &mut self.rotations[bone.index()],
                frames,
                &identity,
                value.as_ref().map(|v| &v[..]),
            );
        }
        for preset in Preset::all().filter(|p| !p.is_look_at()) {
            let value = pose.expressions.preset(preset).map(|w| [w]);
            tracks::record(
                &mut self.presets[preset as usize],
                frames,
                &[0.0],
                value.as_ref().map(|v| &v[..]),
            );
        }
        for slot in 0..crate::humanoid::expression::CUSTOM_CAPACITY {
            let (Some(w), Some(name)) = (pose.expressions.custom(slot), custom_names.name(slot))
            else {
                continue;
            };
            // The spec forbids custom expressions named like presets.
            if name.parse::<Preset>().is_ok() {
                continue;
            }
            match self.customs.iter_mut().find(|(n, _)| n == name) {
                Some((_, track)) => track.push(w),
                None => {
                    let mut values = vec![0.0; frames];
                    values.push(w);
                    self.customs.push((name.to_owned(), values));
                }
            }
        }
        for (_, track) in &mut self.customs {
            if track.len() == frames
                && let Some(&last) = track.last()
            {
                // Not in this frame: hold the last weight.
                track.push(last);
            }
        }
        let look = pose.look_at.map(|l| l.to_rotation().to_array());
        tracks::record(
            &mut self.look_at,
            frames,
            &identity,
            look.as_ref().map(|v| &v[..]),
        );
        Ok(())
    }

    /// Writes the file to `path`.
    pub fn save(&self, path: &Path) -> Result<(), VrmaError> {
        self.write_file(path).map_err(|source| VrmaError::Write {
            path: path.to_owned(),
            source,
        })
    }

    /// The file's own top-level JSON: the extension, the scene and its nodes, the
    /// animation over accessors `0..accessor_count` (0 holds the key times).
    fn properties(
        &self,
        bones: &[(HumanBone, &[f32])],
        presets: &[(Preset, &[f32])],
        accessor_count: usize,
    ) -> [(&'static str, Value); 6] {
        // Nodes: hips and every recorded bone, parents first.
        let mut node_bones: Vec<HumanBone> = vec![HumanBone::Hips];
        node_bones.extend(
            bones
                .iter()
                .map(|(b, _)| *b)
                .filter(|b| *b != HumanBone::Hips),
        );
        let node_of = |bone: HumanBone| node_bones.iter().position(|b| *b == bone);
        let mut nodes: Vec<Value> = Vec::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); node_bones.len()];
        for (i, &bone) in node_bones.iter().enumerate() {
            let parent = bone.parent_in(|b| node_of(b).is_some());
            let origin = parent.map_or(Vec3::ZERO, |p| self.rest.position(p));
            let offset = self.rest.position(bone) - origin;
            if let Some(p) = parent.and_then(node_of) {
                children[p].push(i);
            }
            nodes.push(json!({"name": bone.name(), "translation": offset.to_array()}));
        }
        for (node, kids) in nodes.iter_mut().zip(&children) {
            if !kids.is_empty() {
                node["children"] = json!(kids);
            }
        }
        let mut roots = vec![0];
        let mut preset_map = serde_json::Map::new();
        for (preset, _) in presets {
            preset_map.insert(preset.name().into(), json!({"node": nodes.len()}));
            roots.push(nodes.len());
            nodes.push(json!({"name": format!("expression.{}", preset.name())}));
        }
        let mut custom_map = serde_json::Map::new();
        for (name, _) in &self.customs {
            custom_map.insert(name.clone(), json!({"node": nodes.len()}));
            roots.push(nodes.len());
            nodes.push(json!({"name": format!("expression.custom.{name}")}));
        }
        let look_at_node = self.look_at.as_ref().map(|_| {
            roots.push(nodes.len());
            nodes.push(json!({"name": "lookAt"}));
            nodes.len() - 1
        });

        let mut human_bones = serde_json::Map::new();
        for (i, bone) in node_bones.iter().enumerate() {
            human_bones.insert(bone.name().into(), json!({"node": i}));
        }
        let mut extension = json!({"specVersion": "1.0", "humanoid": {"humanBones": human_bones}});
        if !preset_map.is_empty() || !custom_map.is_empty() {
            let mut expressions = serde_json::Map::new();
            if !preset_map.is_empty() {
                expressions.insert("preset".into(), Value::Object(preset_map));
            }
            if !custom_map.is_empty() {
                expressions.insert("custom".into(), Value::Object(custom_map));
            }
            extension["expressions"] = Value::Object(expressions);
        }
        if let Some(node) = look_at_node {
            let mut look = json!({"node": node});
            if let Some(offset) = self.rest.look_at_offset {
                look["offsetFromHeadBone"] = json!(offset.to_array());
            }
            extension["lookAt"] = look;
        }

        // Channels: hips translation, bone rotations, expressions, lookAt.
        let mut channels =
            vec![json!({"sampler": 0, "target": {"node": 0, "path": "translation"}})];
        for (bone, _) in bones {
            let node = node_of(*bone).unwrap_or(0);
            channels.push(
                json!({"sampler": channels.len(), "target": {"node": node, "path": "rotation"}}),
            );
        }
        let first_expression_node = node_bones.len();
        for k in 0..presets.len() + self.customs.len() {
            channels.push(json!({
                "sampler": channels.len(),
                "target": {"node": first_expression_node + k, "path": "translation"}
            }));
        }
        if let Some(node) = look_at_node {
            channels.push(
                json!({"sampler": channels.len(), "target": {"node": node, "path": "rotation"}}),
            );
        }
        let samplers: Vec<Value> = (1..accessor_count)
            .map(|output| json!({"input": 0, "output": output, "interpolation": "LINEAR"}))
            .collect();

        [
            ("extensionsUsed", json!([EXTENSION])),
            ("extensions", json!({EXTENSION: extension})),
            ("scene", json!(0)),
            ("scenes", json!([{"nodes": roots}])),
            ("nodes", Value::Array(nodes)),
            (
                "animations",
                json!([{"name": self.name, "channels": channels, "samplers": samplers}]),
            ),
        ]
    }
}

impl GlbFile for VrmaWriter {
    /// Writes the GLB: header, JSON chunk, then the binary chunk streamed from the
    /// track buffers.
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let (times, hips) = if self.times.is_empty() {
            // No frame: one frame of the T-pose, so that readers find an animation.
            let hips = self.rest.position(HumanBone::Hips);
            (vec![0.0], hips.to_array().to_vec())
        } else {
            (self.times.clone(), self.hips.clone())
        };
        let bones: Vec<(HumanBone, &[f32])> = ALL
            .iter()
            .filter_map(|b| self.rotations[b.index()].as_deref().map(|t| (*b, t)))
            .collect();
        let presets: Vec<(Preset, &[f32])> = Preset::all()
            .filter_map(|p| self.presets[p as usize].as_deref().map(|t| (p, t)))
            .collect();

        // The binary chunk: one accessor per track, in this order; expression
        // weights are translations (w, 0, 0).
        let mut accessors = vec![
            FloatAccessor::key_times(&times),
            FloatAccessor::new(&hips, ElementType::Vec3),
        ];
        accessors.extend(
            bones
                .iter()
                .map(|(_, t)| FloatAccessor::new(t, ElementType::Vec4)),
        );
        accessors.extend(presets.iter().map(|(_, t)| FloatAccessor::vec3_x(t)));
        accessors.extend(self.customs.iter().map(|(_, t)| FloatAccessor::vec3_x(t)));
        if let Some(look) = &self.look_at {
            accessors.push(FloatAccessor::new(look, ElementType::Vec4));
        }
        let properties = self.properties(&bones, &presets, accessors.len());
        glb::write_floats(out, properties, &accessors)
    }
}
