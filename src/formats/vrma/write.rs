//! The `.vrma` writer: frames are appended as they come (`push`), the file is
//! written at the end (`write_to`), streaming the binary chunk straight from the
//! per-track buffers (in memory, or read back from a spool file for a long take)
//! so that writing needs no second copy of the data.
//!
//! What it writes (see the module header of `vrma`): a node per recorded humanoid
//! bone in the T-pose of `VrmaRest` with identity rotations and no scale, the hips
//! first and the root of the scene; then one node per expression and the lookAt
//! node. One animation: hips translation, then one rotation channel per bone, then
//! expression weights (translation.x), then lookAt rotation; every sampler LINEAR
//! (or STEP, for a clip whose poses hold between frames: `hold_between_frames`)
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
use crate::formats::tracks::{self, PushError, Spool, Track};

/// Appends frames of a performance, then writes them as one `.vrma`.
///
/// Its tracks are in memory (`new`), or in a spool file but for their newest
/// chunk (`spooled`): memory then stays flat however long the take.
#[derive(Debug)]
pub struct VrmaWriter {
    rest: VrmaRest,
    name: String,
    spool: Option<Spool>,
    times: Track,
    /// x, y, z, w per frame, for every bone seen so far.
    rotations: Vec<Option<Track>>,
    /// x, y, z per frame: the hips position, model space.
    hips: Track,
    /// Weight per frame, for every preset seen so far.
    presets: Vec<Option<Track>>,
    /// Weight per frame, for every custom expression seen so far, by name.
    customs: Vec<(String, Track)>,
    /// x, y, z, w per frame, once a frame has carried a lookAt.
    look_at: Option<Track>,
    /// Each frame's pose holds until the next (STEP samplers), instead of moving
    /// towards it (LINEAR).
    hold: bool,
}

impl VrmaWriter {
    /// An empty recording whose nodes will stand in the T-pose `rest`; `name`
    /// becomes the animation's name.
    #[must_use]
    pub fn new(rest: VrmaRest, name: &str) -> Self {
        Self {
            rest,
            name: name.to_owned(),
            spool: None,
            times: Track::new(1),
            rotations: vec![None; BONE_COUNT],
            hips: Track::new(3),
            presets: vec![None; PRESET_COUNT],
            customs: Vec::new(),
            look_at: None,
            hold: false,
        }
    }

    /// The same, keeping its tracks in `spool` but for their newest chunk.
    #[must_use]
    pub fn spooled(rest: VrmaRest, name: &str, spool: Spool) -> Self {
        Self {
            spool: Some(spool),
            ..Self::new(rest, name)
        }
    }

    /// Why the spool stopped taking the tracks' chunks (they then stay in memory).
    #[must_use]
    pub fn spool_failure(&self) -> Option<&str> {
        self.spool.as_ref().and_then(Spool::failure)
    }

    /// How many frames have been appended.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Bytes of the binary chunk the file would have now (its floats; the JSON adds
    /// a few kilobytes).
    #[must_use]
    pub fn binary_bytes(&self) -> u64 {
        let floats = |tracks: &mut dyn Iterator<Item = &Track>| -> u64 {
            tracks.map(|t| t.len() as u64).sum()
        };
        let direct = floats(
            &mut [&self.times, &self.hips]
                .into_iter()
                .chain(self.rotations.iter().flatten())
                .chain(&self.look_at),
        );
        // Expression weights are written as VEC3s.
        let weights = floats(
            &mut self
                .presets
                .iter()
                .flatten()
                .chain(self.customs.iter().map(|(_, t)| t)),
        );
        4 * direct + 12 * weights
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
        tracks::check_frame(self.times.last(), time, pose)?;
        let spool = self.spool.as_ref();
        let frames = self.times.len();
        self.times.push(&[time], spool);
        self.hips.push(&pose.hips_position.to_array(), spool);
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
                spool,
            );
        }
        for preset in Preset::all().filter(|p| !p.is_look_at()) {
            let value = pose.expressions.preset(preset).map(|w| [w]);
            tracks::record(
                &mut self.presets[preset as usize],
                frames,
                &[0.0],
                value.as_ref().map(|v| &v[..]),
                spool,
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
                Some((_, track)) => track.push(&[w], spool),
                None => {
                    let mut track = None;
                    tracks::record(&mut track, frames, &[0.0], Some(&[w]), spool);
                    self.customs.extend(track.map(|t| (name.to_owned(), t)));
                }
            }
        }
        for (_, track) in &mut self.customs {
            if track.len() == frames {
                // Not in this frame: hold the last weight.
                track.repeat_last(spool);
            }
        }
        let look = pose.look_at.map(|l| l.to_rotation().to_array());
        tracks::record(
            &mut self.look_at,
            frames,
            &identity,
            look.as_ref().map(|v| &v[..]),
            spool,
        );
        Ok(())
    }

    /// Writes every sampler STEP: each frame's pose holds until the next frame, as
    /// in a clip keyed STEP (LINEAR would move between them).
    pub fn hold_between_frames(&mut self) {
        self.hold = true;
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
        bones: &[(HumanBone, &Track)],
        presets: &[(Preset, &Track)],
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
        let interpolation = if self.hold { "STEP" } else { "LINEAR" };
        let samplers: Vec<Value> = (1..accessor_count)
            .map(|output| json!({"input": 0, "output": output, "interpolation": interpolation}))
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
    /// tracks (read back from the spool where they were spooled).
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let spool = self.spool.as_ref();
        // No frame: one frame of the T-pose, so that readers find an animation.
        let rest_hips = self.rest.position(HumanBone::Hips).to_array();
        let (times, hips) = if self.times.is_empty() {
            (
                FloatAccessor::key_times(&[0.0]),
                FloatAccessor::new(&rest_hips, ElementType::Vec3),
            )
        } else {
            (
                FloatAccessor::track(&self.times, spool, ElementType::Scalar).as_key_times(),
                FloatAccessor::track(&self.hips, spool, ElementType::Vec3),
            )
        };
        let bones: Vec<(HumanBone, &Track)> = ALL
            .iter()
            .filter_map(|b| self.rotations[b.index()].as_ref().map(|t| (*b, t)))
            .collect();
        let presets: Vec<(Preset, &Track)> = Preset::all()
            .filter_map(|p| self.presets[p as usize].as_ref().map(|t| (p, t)))
            .collect();

        // The binary chunk: one accessor per track, in this order; expression
        // weights are translations (w, 0, 0).
        let mut accessors = vec![times, hips];
        accessors.extend(
            bones
                .iter()
                .map(|(_, t)| FloatAccessor::track(t, spool, ElementType::Vec4)),
        );
        accessors.extend(
            presets
                .iter()
                .map(|(_, t)| FloatAccessor::track(t, spool, ElementType::Scalar).as_vec3_x()),
        );
        accessors.extend(
            self.customs
                .iter()
                .map(|(_, t)| FloatAccessor::track(t, spool, ElementType::Scalar).as_vec3_x()),
        );
        if let Some(look) = &self.look_at {
            accessors.push(FloatAccessor::track(look, spool, ElementType::Vec4));
        }
        let properties = self.properties(&bones, &presets, accessors.len());
        glb::write_floats(out, properties, &accessors)
    }
}
