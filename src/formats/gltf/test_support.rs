//! Builders and probes the glTF loader's unit tests share: small glTF documents
//! (skinned, with humanoid extensions), GLB bytes, and where a loaded rig puts its
//! joints.

use std::path::Path;

use glam::{Affine3A, Mat4, Vec3};
use serde_json::{Value, json};

use super::{GltfError, load, parse};
use crate::formats::Rig;
use crate::humanoid::HumanBone;

pub(super) const PATH: &str = "tests/rig.gltf";

pub(super) fn parse_doc(doc: &Value) -> Result<Rig, GltfError> {
    parse(doc.to_string().as_bytes(), Path::new(PATH))
}

pub(super) fn error_of(doc: &Value) -> String {
    match parse_doc(doc) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(super) fn matrix_bytes(matrices: &[Mat4]) -> Vec<u8> {
    matrices
        .iter()
        .flat_map(|m| m.to_cols_array())
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// A GLB with `json` and an optional binary chunk.
pub(super) fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut text = json.to_string().into_bytes();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let mut bin = bin.to_vec();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin.len() };
    let total = 12 + 8 + text.len() + bin_chunk;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

/// A glTF with `nodes` (scene root: node 0), one skin over `joints` whose
/// inverse bind matrices are `inverse_binds`, in a base64 data-URI buffer.
pub(super) fn skinned(nodes: Value, joints: &[usize], inverse_binds: &[Mat4]) -> Value {
    let bytes = matrix_bytes(inverse_binds);
    json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "skins": [{"joints": joints, "inverseBindMatrices": 0}],
        "accessors": [{
            "bufferView": 0, "componentType": 5126,
            "count": inverse_binds.len(), "type": "MAT4"
        }],
        "bufferViews": [{"buffer": 0, "byteLength": bytes.len()}],
        "buffers": [{
            "byteLength": bytes.len(),
            "uri": format!("data:application/octet-stream;base64,{}", base64(&bytes))
        }]
    })
}

/// Nodes only, no skin: the humanoid extension makes the joint set.
pub(super) fn with_extensions(nodes: Value, extensions: Value) -> Value {
    json!({
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "extensions": extensions
    })
}

pub(super) fn hips_spine_head() -> Value {
    json!([
        {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
        {"name": "Spine", "translation": [0.0, 0.2, 0.0], "children": [2]},
        {"name": "Head", "translation": [0.0, 0.4, 0.0]}
    ])
}

pub(super) fn names(rig: &Rig) -> Vec<&str> {
    rig.skeleton
        .joints()
        .iter()
        .map(|j| j.name.as_str())
        .collect()
}

pub(super) fn world(rig: &Rig, joint: &str) -> Affine3A {
    let i = rig
        .skeleton
        .find(joint)
        .unwrap_or_else(|| panic!("no joint {joint}"));
    rig.skeleton.rest_world()[i]
}

pub(super) fn position(rig: &Rig, joint: &str) -> Vec3 {
    world(rig, joint).translation.into()
}

pub(super) fn mapped(rig: &Rig, bone: HumanBone) -> Option<&str> {
    rig.bone_map.as_ref()?.bones.get(&bone).map(String::as_str)
}

/// Arm posed down in the nodes, T-pose in the bind pose; world positions of the
/// bind pose: hips (0, 1, 0), arm (0.2, 1.5, 0), forearm (0.5, 1.5, 0).
pub(super) fn arm_posed_down() -> Value {
    json!([
        {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
        {
            "name": "Arm", "translation": [0.2, 0.5, 0.0], "children": [2],
            "rotation": [0.0, 0.0, -std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::FRAC_1_SQRT_2]
        },
        {"name": "Forearm", "translation": [0.3, 0.0, 0.0]}
    ])
}

pub(super) fn t_pose_bind_worlds() -> [Mat4; 3] {
    [
        Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        Mat4::from_translation(Vec3::new(0.2, 1.5, 0.0)),
        Mat4::from_translation(Vec3::new(0.5, 1.5, 0.0)),
    ]
}

pub(super) use crate::assets::assets_dir as assets;

pub(super) fn load_asset(name: &str) -> Option<Rig> {
    let path = assets()?.join(name);
    Some(load(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// Angle of the segment from `a` to `b` below the horizontal, in degrees.
pub(super) fn droop_deg(rig: &Rig, a: &str, b: &str) -> f32 {
    let d = position(rig, b) - position(rig, a);
    (-d.y).atan2(Vec3::new(d.x, 0.0, d.z).length()).to_degrees()
}

/// A glTF document built in a test: one data-URI buffer the accessors append to,
/// each in its own buffer view (4-byte aligned, as the validator wants).
pub(super) struct Fixture {
    pub(super) doc: Value,
    bytes: Vec<u8>,
}

impl Fixture {
    /// `doc` without buffers, views or accessors yet.
    pub(super) fn new(doc: Value) -> Self {
        Self {
            doc,
            bytes: Vec::new(),
        }
    }

    /// Appends `values` as a buffer view and returns its index.
    pub(super) fn view(&mut self, values: &[u8]) -> usize {
        let offset = self.bytes.len();
        let views = self.list("bufferViews");
        let index = views.len();
        views.push(json!({
            "buffer": 0, "byteOffset": offset, "byteLength": values.len()
        }));
        self.bytes.extend_from_slice(values);
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        index
    }

    /// Appends a FLOAT accessor of `type_` (`SCALAR`, `VEC3`, `VEC4`, `MAT4`) over
    /// `values` and returns its index; key times get their min and max.
    pub(super) fn floats(&mut self, type_: &str, values: &[f32]) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.view(&bytes);
        let per = match type_ {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 16,
        };
        let mut accessor = json!({
            "bufferView": view, "componentType": 5126,
            "count": values.len() / per, "type": type_
        });
        if type_ == "SCALAR" {
            let min = values.iter().copied().fold(f32::INFINITY, f32::min);
            let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            accessor["min"] = json!([min]);
            accessor["max"] = json!([max]);
        }
        self.accessor(accessor)
    }

    /// Appends `accessor` as it is and returns its index.
    pub(super) fn accessor(&mut self, accessor: Value) -> usize {
        let accessors = self.list("accessors");
        accessors.push(accessor);
        accessors.len() - 1
    }

    fn list(&mut self, key: &str) -> &mut Vec<Value> {
        if !self.doc[key].is_array() {
            self.doc[key] = json!([]);
        }
        match &mut self.doc[key] {
            Value::Array(list) => list,
            _ => unreachable!("just made an array"),
        }
    }

    /// The document with its buffer.
    pub(super) fn finish(mut self) -> Value {
        self.doc["buffers"] = json!([{
            "byteLength": self.bytes.len(),
            "uri": format!("data:application/octet-stream;base64,{}", base64(&self.bytes))
        }]);
        self.doc
    }
}
