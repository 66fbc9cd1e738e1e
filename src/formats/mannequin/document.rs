//! The mannequin as one glTF document: a node per humanoid bone in the T-pose
//! (identity rotations, offsets from the parent bone), the body and face meshes on
//! nodes of their own at the scene's root (glTF ignores a skinned mesh node's
//! transform and parents), one skin over the 55 bones with inverse bind matrices
//! that undo each bone's T-pose position, the materials, and `VRMC_vrm`.

use std::io::{self, Write};

use glam::{Mat4, Vec3};
use serde_json::{Value, json};

use crate::formats::glb::{self, GlbFile};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::ALL;

use super::body;
use super::buffer::Buffer;
use super::face::{self, EXPRESSIONS};
use super::material::Material;
use super::skin::SkinnedMesh;
use super::vrm::{self, Nodes};

/// The mannequin's JSON and binary chunk, ready to be written as a GLB.
#[derive(Debug, Clone)]
pub struct Mannequin {
    json: Value,
    bin: Vec<u8>,
}

impl Mannequin {
    /// The mannequin standing in the T-pose `rest`.
    #[must_use]
    pub fn new(rest: &VrmaRest) -> Self {
        let nodes = Nodes {
            first_bone: 0,
            body: ALL.len(),
            face: ALL.len() + 1,
        };
        let mut buffer = Buffer::default();

        // The body: one primitive per material, in material order.
        let mut by_material: Vec<(Material, SkinnedMesh)> = Vec::new();
        for part in body::parts(rest) {
            let surface = part.shape.tessellate(part.detail);
            match by_material.iter_mut().find(|(m, _)| *m == part.material) {
                Some((_, mesh)) => mesh.add(&surface, part.binding),
                None => {
                    let mut mesh = SkinnedMesh::default();
                    mesh.add(&surface, part.binding);
                    by_material.push((part.material, mesh));
                }
            }
        }
        by_material.sort_by_key(|(m, _)| m.index());
        let body_primitives: Vec<Value> = by_material
            .iter()
            .map(|(material, mesh)| primitive(&mut buffer, *material, mesh))
            .collect();

        // The face: its primitives carry a morph target per expression.
        let face_primitives: Vec<Value> = face::primitives(rest)
            .iter()
            .map(|p| {
                let mut value = primitive(&mut buffer, p.material, &p.mesh);
                let targets: Vec<Value> = p
                    .targets
                    .iter()
                    .map(|offsets| json!({"POSITION": buffer.vec3(offsets, true)}))
                    .collect();
                value["targets"] = Value::Array(targets);
                value
            })
            .collect();
        let target_names: Vec<&str> = EXPRESSIONS.iter().map(|(p, _)| p.name()).collect();

        // Bones: each node offset from its parent; the skin undoes the T-pose.
        let mut bone_nodes: Vec<Value> = ALL
            .iter()
            .map(|bone| {
                let origin = bone.parent().map_or(Vec3::ZERO, |p| rest.position(p));
                json!({"name": bone.name(), "translation": (rest.position(*bone) - origin).to_array()})
            })
            .collect();
        for bone in ALL {
            let children: Vec<usize> = ALL
                .iter()
                .filter(|child| child.parent() == Some(bone))
                .map(|child| nodes.first_bone + child.index())
                .collect();
            if !children.is_empty() {
                bone_nodes[bone.index()]["children"] = json!(children);
            }
        }
        let inverse_binds: Vec<Mat4> = ALL
            .iter()
            .map(|bone| Mat4::from_translation(-rest.position(*bone)))
            .collect();
        let inverse_binds = buffer.mat4(&inverse_binds);
        let joints: Vec<usize> = ALL.iter().map(|b| nodes.first_bone + b.index()).collect();

        let mut all_nodes = bone_nodes;
        all_nodes.push(json!({"name": "body", "mesh": 0, "skin": 0}));
        all_nodes.push(json!({"name": "face", "mesh": 1, "skin": 0}));
        let finished = buffer.finish();
        let json = json!({
            "asset": {"version": "2.0", "generator": glb::GENERATOR},
            "extensionsUsed": [vrm::EXTENSION],
            "extensions": {vrm::EXTENSION: vrm::extension(rest, nodes)},
            "scene": 0,
            "scenes": [{"name": vrm::NAME, "nodes": [nodes.first_bone, nodes.body, nodes.face]}],
            "nodes": all_nodes,
            "meshes": [
                {"name": "body", "primitives": body_primitives},
                {
                    "name": "face",
                    "primitives": face_primitives,
                    "weights": vec![0.0; EXPRESSIONS.len()],
                    "extras": {"targetNames": target_names},
                },
            ],
            "skins": [{
                "name": "humanoid",
                "inverseBindMatrices": inverse_binds,
                "joints": joints,
                "skeleton": nodes.first_bone,
            }],
            "materials": Material::ALL.map(Material::to_json),
            "accessors": finished.accessors,
            "bufferViews": finished.buffer_views,
            "buffers": finished.buffers,
        });
        Self {
            json,
            bin: finished.bytes,
        }
    }

    /// The glTF JSON.
    #[must_use]
    pub fn json(&self) -> &Value {
        &self.json
    }
}

/// A skinned primitive's attributes and indices written to `buffer`.
fn primitive(buffer: &mut Buffer, material: Material, mesh: &SkinnedMesh) -> Value {
    json!({
        "attributes": {
            "POSITION": buffer.vec3(&mesh.positions, true),
            "NORMAL": buffer.vec3(&mesh.normals, false),
            "JOINTS_0": buffer.joints(&mesh.joints),
            "WEIGHTS_0": buffer.vec4(&mesh.weights),
        },
        "indices": buffer.indices(&mesh.indices),
        "material": material.index(),
    })
}

impl GlbFile for Mannequin {
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        glb::write_start(out, &self.json, self.bin.len())?;
        out.write_all(&self.bin)
    }
}
