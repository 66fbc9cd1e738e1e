//! glTF, GLB and VRM rigs: the skeleton of a glTF scene, the humanoid map the file
//! declares (VRM 1.0 `VRMC_vrm`, VRM 0.x `VRM`, `EXT_skeleton_humanoid`) and its
//! animations as clips.
//!
//! The skeleton is every skin joint (of every skin) and every node the humanoid map
//! names, plus all their ancestors (so an `Armature` node with scale 0.01 or an axis
//! turn above the hips is a joint too), parents first in depth-first scene order.
//! Mesh-only nodes are left out. A file with neither skin nor humanoid map takes
//! its node hierarchy (node hierarchies animate too): every node in a tree of two
//! or more, but for leaves that only carry a mesh, camera or light and are not
//! animated. Several scenes, a missing default scene, scenes without nodes and
//! joints outside every scene are all read: the skeleton is the nodes', whichever
//! scene shows them. glTF is metres, +Y up and right-handed: the only unit
//! conversion is a figure's that an exporter left in centimetres or millimetres
//! (`unit_scale`), and the only axis turn is a figure's lying along Z (`stand_up`).
//! A VRM model's map declares its rest the T-pose (a VRM 1.0 model's rest is its nodes'
//! pose, as three-vrm reads it, whatever its inverse bind matrices bind); a VRM 0.x
//! model faces -Z, which is noted and left to the rest correction's facing turn. A
//! node scaled to zero (hidden), by TRS or by its `matrix`, is read at scale 1 on its
//! zero axes, with a note; joints under a negative scale (a mirror) are read as the
//! figure the scene shows, their frames flipped in X (`mirror`).
//!
//! One file per part of the file read (and `as_vrm`, which writes a glTF humanoid as a
//! VRM 1.0 for the viewer):
//! - `doc`: the GLB container, the JSON, buffers and accessors, every length checked
//!   (the `.vrma` and `EXT_skeleton_humanoid` readers open their files with it too);
//! - `external`: buffer files a `.gltf` names, read only inside its folder and up to
//!   a size limit;
//! - `hierarchy`: parent links, the joint set and its order, node transforms, joint
//!   names and end sites;
//! - `skin`: skins, their inverse bind matrices and the rest pose they give when the
//!   nodes are posed away from it;
//! - `bind_frame`: the change of frame (units, axes) in carrying a bind pose onto
//!   its root joint's node, without the root's own pose;
//! - `clips`: animations, sampled into `Rig::clips`;
//! - `armature_copy`: animations keyed on a copy of the skeleton, read onto it;
//! - `humanoid_map`: the humanoid map of whichever extension the file has;
//! - `mirror`: a mirrored armature's joints and clips rewritten without the mirror;
//! - `stand_up`: a figure written lying along Z (Z-up with no node turning it up,
//!   or turned up once too often), turned to stand along +Y with its clips;
//! - `rest_from_clips`: the rest from a clip frame when the nodes' pose stands as
//!   no body;
//! - `rest_from_file`: the rest from another file of the same skeleton
//!   (`--rest-from`), for a clip that stands in no frame;
//! - `rigify`: a Rigify rig read as its `DEF-` deform bones, each chain under its
//!   deform parent;
//! - `unit_scale`: a rig an exporter left in centimetres or millimetres, scaled into
//!   metres once loaded (`in_metres`, which `formats::load_rig` calls).
//!
//! Does not read meshes, materials, cameras or lights, so whatever they hold (Draco
//! or meshopt compression, which `extensionsRequired` may name) does not stop the
//! skeleton. Sparse accessors are read, and buffer views compressed with
//! `EXT_meshopt_compression` decoded (`meshopt`: animation keys, bind matrices).
//! Parsing is pure over bytes except for external `.bin` buffers, resolved next to
//! the file.

mod animation_pointer;
mod armature_copy;
pub mod as_vrm;
mod bind_frame;
mod clips;
mod doc;
mod external;
mod glb_chunk;
mod hierarchy;
mod humanoid_map;
mod meshopt;
mod mirror;
mod rest_from_clips;
mod rest_from_file;
mod rigify;
mod skin;
mod stand_up;
#[cfg(test)]
mod test_support;
mod unit_scale;
#[cfg(test)]
mod valid_files;

use glam::Quat;
use std::path::{Path, PathBuf};

pub use doc::{AccessorSpec, DocError, GltfDoc};
pub use unit_scale::in_metres;

use super::{Rig, Units};
use crate::skeleton::{InvalidSkeleton, Joint, NamedBoneMap, Skeleton};
use hierarchy::{joint_names, world_transforms};
use humanoid_map::read_humanoid;
use mirror::{unmirror_clips, unmirror_plan, unmirror_rest};
use rest_from_clips::{ClipRest, rest_from_clips};
use rigify::deform_skeleton;
use skin::{SkeletonNodes, rest_on_parents, rest_transforms};
use stand_up::{Turns, stand_up};

/// Why a glTF file cannot be loaded as a rig.
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The document cannot be read (the container, a buffer, an accessor), or is
    /// wrong at a place: a node, a skin, a JSON path.
    #[error(transparent)]
    Doc(#[from] DocError),
    #[error("{path}: node {node} is its own ancestor")]
    Cycle { path: PathBuf, node: usize },
    /// No skin, no humanoid map, and no node hierarchy to read as a skeleton: a
    /// static model.
    #[error(
        "{path}: no skeleton: no skin, no humanoid map, and no node with a parent or a child \
         among its {nodes} (a static model)"
    )]
    NoSkeleton { path: PathBuf, nodes: usize },
    #[error("{path}: {source}")]
    Skeleton {
        path: PathBuf,
        #[source]
        source: InvalidSkeleton,
    },
    /// The rest asked for from another file (`LoadOptions::rest_from`) is not
    /// this rig's: the other file does not load, or holds another skeleton.
    #[error("{path}: no rest from {from} (--rest-from): {reason}")]
    RestFrom {
        path: PathBuf,
        from: PathBuf,
        reason: String,
    },
}

/// Reads a `.gltf`, `.glb` or `.vrm` file (and the external buffers it names).
pub fn load(path: &Path) -> Result<Rig, GltfError> {
    load_stood(path).map(|(rig, _)| rig)
}

/// `load`, and the turns that stood the figure up from lying along Z (`stand_up`).
fn load_stood(path: &Path) -> Result<(Rig, Turns), GltfError> {
    let bytes = std::fs::read(path).map_err(|source| DocError::Read {
        path: path.to_owned(),
        source,
    })?;
    let doc = GltfDoc::from_bytes(&bytes, path)?;
    Document { doc, clips: true }.read()
}

/// Reads a glTF file with the rest of another file of the same skeleton, `from`
/// (`rest_from_file`): for a clip whose every frame flies, swims or lies. When the
/// two were turned up from lying along Z differently (`stand_up`: a figure lying
/// along Z in its rest is turned, a clip lying in every frame is not), the clips of
/// `path` take the turn of `from`'s rest instead of the one their keys took, so
/// that the two keep to one frame.
pub fn load_with_rest_from(path: &Path, from: &Path) -> Result<Rig, GltfError> {
    let (mut rig, own) = load_stood(path)?;
    let (other, other_turns) = load_stood(from).map_err(|e| GltfError::RestFrom {
        path: path.to_owned(),
        from: from.to_owned(),
        reason: e.to_string(),
    })?;
    let turn = other_turns.rest * own.clips.inverse();
    if turn.angle_between(Quat::IDENTITY) > 1e-3 {
        stand_up::turn_root_keys(&rig.skeleton, &mut rig.clips, turn);
        // Both turns are about X: the angle is where they take +Y.
        let up = turn * glam::Vec3::Y;
        let degrees = up.z.atan2(up.y).to_degrees();
        rig.notes.push(format!(
            "up axis: the clips are turned {degrees:+.0}° about X to the rest of `{}`, whose \
             figure is turned up from lying along Z otherwise than this file's",
            from.display()
        ));
    }
    rest_from_file::with_rest_of(rig, path, &other, from)
}

/// Parses glTF JSON or GLB bytes. `path` names the file in errors and is where
/// external buffer URIs are resolved from; nothing else touches the disk.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Rig, GltfError> {
    let doc = GltfDoc::from_bytes(bytes, path)?;
    Document { doc, clips: true }.read().map(|(rig, _)| rig)
}

/// Reads a file's rig without its animations (`clips` empty, no notes about
/// them): for a `.vrma`, whose nodes are its rest humanoid and whose animations
/// `formats::vrma` reads.
pub fn load_skeleton(path: &Path) -> Result<Rig, GltfError> {
    let doc = GltfDoc::open(path)?;
    Document { doc, clips: false }.read().map(|(rig, _)| rig)
}

/// A parsed file, read into a rig.
struct Document<'a> {
    doc: GltfDoc<'a>,
    /// Whether to read the animations into `Rig::clips`.
    clips: bool,
}

impl Document<'_> {
    /// An error at `place` in the file.
    fn invalid(&self, place: impl Into<String>, message: impl Into<String>) -> GltfError {
        self.doc.invalid(place, message).into()
    }

    /// Builds the rig: hierarchy, joint set, rest transforms, names, humanoid map;
    /// and the turns that stood its figure up from lying along Z (`stand_up`).
    fn read(mut self) -> Result<(Rig, Turns), GltfError> {
        let mut notes = Vec::new();
        notes.extend(glb_chunk::views_past_byte_length(&self.doc));
        let node_count = self.doc.root.nodes.len();
        let hierarchy = self.hierarchy()?;
        let declared = read_humanoid(&self.doc.raw, node_count, self.doc.path, &mut notes)?;
        let mut skins = self.read_skins()?;
        self.drop_meshless_skins(&mut skins, &mut notes);

        let mut in_joint_set = vec![false; node_count];
        for skin in &skins {
            for &joint in &skin.joints {
                in_joint_set[joint] = true;
            }
        }
        if let Some(map) = &declared {
            for &(_, node) in &map.bones {
                in_joint_set[node] = true;
            }
        }
        if !in_joint_set.contains(&true) {
            // No skin and no humanoid map: the node hierarchy is the skeleton.
            in_joint_set = self.plain_node_joints(&hierarchy);
            let count = in_joint_set.iter().filter(|&&j| j).count();
            if count == 0 {
                return Err(GltfError::NoSkeleton {
                    path: self.doc.path.to_owned(),
                    nodes: node_count,
                });
            }
            notes.push(format!(
                "no skin and no humanoid map: the skeleton is the node hierarchy ({count} nodes)"
            ));
        }
        let order = self.skeleton_order(&hierarchy, &in_joint_set)?;
        let mut position = vec![None; node_count];
        for (k, &node) in order.iter().enumerate() {
            position[node] = Some(k);
        }
        let parents: Vec<Option<usize>> = order
            .iter()
            .map(|&node| hierarchy.parent[node].and_then(|p| position[p]))
            .collect();

        let mut node_rest = order
            .iter()
            .map(|&node| self.node_transform(node))
            .collect::<Result<Vec<_>, _>>()?;
        let hidden = unhide(&mut node_rest);
        let node_world = world_transforms(&node_rest, &parents);
        let nodes = SkeletonNodes {
            position: &position,
            order: &order,
            parents: &parents,
            node_rest: &node_rest,
        };
        // A VRM 1.0 model's rest is its nodes' pose, as three-vrm reads it, whatever
        // its inverse bind matrices bind (a model the bridge stood up in its T-pose
        // keeps the bind of its source, `as_vrm`).
        let vrm_1 = self.doc.raw["extensions"].get("VRMC_vrm").is_some();
        let (bind_worlds, unplaced) = match vrm_1 {
            true => (std::collections::HashMap::new(), Vec::new()),
            false => {
                let binds = self.bind_worlds(&skins, &nodes, &node_world, &mut notes)?;
                (binds.placed, binds.unplaced)
            }
        };
        let mut rest = rest_transforms(&order, &parents, &node_rest, &bind_worlds);
        rest_on_parents(&mut rest, &position, &unplaced);

        let names = joint_names(&self.doc.root, &order);
        for k in hidden {
            notes.push(format!(
                "joint `{}` is scaled to zero (hidden in the scene): it is read at scale 1 on \
                 the zero axes, so the joints below it keep their places",
                names[k]
            ));
        }
        let mut ends = order
            .iter()
            .map(|&node| self.end_site(node, &hierarchy, &position))
            .collect::<Result<Vec<_>, _>>()?;
        let mirror = unmirror_plan(&rest, &parents);
        if let Some(plan) = &mirror {
            unmirror_rest(plan, &mut rest, &mut ends);
            let mirrored = plan.iter().filter(|step| step.is_flipped()).count();
            notes.push(format!(
                "{mirrored} joints sit under a negative scale (a mirror): they are read as the figure the scene shows, each one's frame flipped in X"
            ));
        }
        let mut joints = Vec::with_capacity(order.len());
        for (k, end) in ends.into_iter().enumerate() {
            joints.push(Joint {
                name: names[k].clone(),
                parent: parents[k],
                rest: rest[k],
                end,
            });
        }
        let skeleton = Skeleton::new(joints).map_err(|source| GltfError::Skeleton {
            path: self.doc.path.to_owned(),
            source,
        })?;
        if let Some(note) = uneven_scale_note(&skeleton) {
            notes.push(note);
        }

        let mut clips = match self.clips {
            true => self.read_clips(&position, &hierarchy.parent, &node_rest, &mut notes)?,
            false => Vec::new(),
        };
        if let Some(plan) = &mirror {
            unmirror_clips(plan, &mut clips);
        }

        // A Rigify rig is its deform bones (a declared map names its own joints).
        let (skeleton, clips) = match declared
            .is_none()
            .then(|| deform_skeleton(&skeleton, &clips))
            .flatten()
        {
            Some((deformed, rewritten, note)) => {
                notes.push(note);
                (deformed, rewritten)
            }
            None => (skeleton, clips),
        };

        // A file's own humanoid map declares its rest; any other rest must stand,
        // along +Y (a figure lying along Z is turned up), or in a clip frame. The
        // clips are looked at first: whether they stand as written decides whether
        // a turn that stands the rest goes onto their keys too.
        let (skeleton, mut clips) = (skeleton, clips);
        let mut turns = Turns::NONE;
        let skeleton = match declared {
            Some(_) => skeleton,
            None => {
                let from_clips = rest_from_clips(&skeleton, &clips);
                let clips_stand = matches!(from_clips, ClipRest::Frame(..));
                match (stand_up(&skeleton, &mut clips, clips_stand), from_clips) {
                    (Some(up), _) => {
                        notes.push(up.note);
                        turns = up.turns;
                        up.skeleton
                    }
                    (None, ClipRest::Frame(posed, note)) => {
                        notes.push(note);
                        posed
                    }
                    (None, ClipRest::NoFrame(note)) => {
                        notes.push(note);
                        skeleton
                    }
                    (None, ClipRest::NotLooked) => skeleton,
                }
            }
        };

        let (bone_map, map_source) = match declared {
            Some(map) => {
                let bones = map
                    .bones
                    .iter()
                    .filter_map(|&(bone, node)| position[node].map(|k| (bone, names[k].clone())))
                    .collect();
                let map_file = NamedBoneMap {
                    bones,
                    t_pose: map.t_pose,
                };
                (Some(map_file), Some(map.source.to_owned()))
            }
            None => (None, None),
        };
        let rig = Rig {
            skeleton,
            bone_map,
            map_source,
            clips,
            notes,
            // glTF is metres; `in_metres` reads a file an exporter left in other units.
            units: Units::Metres,
        };
        Ok((rig, turns))
    }
}

/// Sets the zero components of each node scale to 1 and returns the nodes changed.
/// glTF scales a node to zero to hide it (and the nodes below it); a skeleton needs
/// an invertible rest, and a hidden bone is still a bone, so it is read unhidden.
fn unhide(node_rest: &mut [crate::skeleton::Transform]) -> Vec<usize> {
    let mut hidden = Vec::new();
    for (k, rest) in node_rest.iter_mut().enumerate() {
        let zero = rest.scale.cmpeq(glam::Vec3::ZERO);
        if zero.any() {
            rest.scale = glam::Vec3::select(zero, glam::Vec3::ONE, rest.scale);
            hidden.push(k);
        }
    }
    hidden
}

/// A note naming the first joint with children whose rest scale differs between
/// axes by more than 1%: under it the figure is sheared as it moves, which the
/// rotations a humanoid is driven by cannot follow, so limbs under it point a few
/// degrees off the file's own figure (an `Armature` object scaled unevenly in
/// Blender).
fn uneven_scale_note(skeleton: &Skeleton) -> Option<String> {
    let joints = skeleton.joints();
    let (i, joint) = joints.iter().enumerate().find(|&(i, j)| {
        let s = j.rest.scale.abs();
        s.max_element() > 1.01 * s.min_element() && skeleton.children(i).next().is_some()
    })?;
    let s = joint.rest.scale;
    let below = (0..joints.len())
        .filter(|&j| skeleton.is_ancestor(i, j))
        .count();
    Some(format!(
        "joint `{}` scales unevenly ({:.3}, {:.3}, {:.3}): the {below} joints under it are driven by their rotations, and their limbs point up to a few degrees off the sheared figure's",
        joint.name, s.x, s.y, s.z
    ))
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::skeleton::BoneMap;
    use glam::{Mat4, Vec3};
    use serde_json::json;

    #[test]
    fn wrong_magic_is_not_a_gltf_file() {
        let mut bytes = glb(&hips_spine_head(), &[]);
        bytes[3] = b'X';
        let err = parse(&bytes, Path::new("bad.glb")).unwrap_err().to_string();
        assert!(
            err.starts_with("bad.glb: not a glTF file: starts with \"glTX\""),
            "{err}"
        );
    }

    #[test]
    fn truncated_glb_is_not_a_gltf_file() {
        let doc = skinned(arm_posed_down(), &[0, 1, 2], &[Mat4::IDENTITY; 3]);
        let bytes = glb(&doc, &[]);
        let err = parse(&bytes[..bytes.len() / 2], Path::new("cut.glb"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cut.glb: not a glTF file: truncated GLB"),
            "{err}"
        );
    }

    #[test]
    fn every_prefix_of_a_glb_fails_without_panicking() {
        let bind = t_pose_bind_worlds().map(|m| m.inverse());
        let doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
        let mut doc_glb = doc.clone();
        doc_glb["buffers"][0] = json!({"byteLength": 192});
        let bytes = glb(&doc_glb, &matrix_bytes(&bind));
        assert!(parse(&bytes, Path::new("whole.glb")).is_ok());
        for len in 0..bytes.len() {
            assert!(parse(&bytes[..len], Path::new("cut.glb")).is_err(), "{len}");
        }
        // A header whose length is smaller than the header itself.
        let mut short = bytes.clone();
        short[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert!(parse(&short, Path::new("short.glb")).is_err());
    }

    #[test]
    fn flipped_bytes_never_panic() {
        let bind = t_pose_bind_worlds().map(|m| m.inverse());
        let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
        doc["buffers"][0] = json!({"byteLength": 192});
        doc["extensions"] = json!({"VRM": {"humanoid": {"humanBones": [
            {"bone": "hips", "node": 0}, {"bone": "leftUpperArm", "node": 1}
        ]}}});
        let bytes = glb(&doc, &matrix_bytes(&bind));
        for at in 0..bytes.len() {
            for value in [0u8, b'9', b'-', 0xFF] {
                let mut flipped = bytes.clone();
                flipped[at] = value;
                let _ = parse(&flipped, Path::new("flipped.glb"));
            }
        }
    }

    #[test]
    fn garbled_json_names_line_and_column() {
        let text = "{\n  \"asset\": {\"version\": \"2.0\"},\n  \"nodes\": [ { ] \n}";
        let err = parse(text.as_bytes(), Path::new("garbled.gltf"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("garbled.gltf: not a glTF file: "), "{err}");
        assert!(err.contains("line 3 column"), "{err}");
    }

    #[test]
    fn missing_external_buffer_is_named() {
        let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &[Mat4::IDENTITY; 3]);
        doc["buffers"][0]["uri"] = json!("model.bin");
        let err = parse(
            doc.to_string().as_bytes(),
            Path::new("/nonexistent/rig.gltf"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "/nonexistent/rig.gltf: buffer 0 (`model.bin`) is missing"
        );
    }

    #[test]
    fn external_buffer_next_to_the_gltf_is_read() {
        let dir = std::env::temp_dir().join(format!("gltf_rig_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bind = t_pose_bind_worlds().map(|m| m.inverse());
        let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
        doc["buffers"][0]["uri"] = json!("my%20model.bin");
        std::fs::write(dir.join("my model.bin"), matrix_bytes(&bind)).unwrap();
        std::fs::write(dir.join("rig.gltf"), doc.to_string()).unwrap();
        let rig = load(&dir.join("rig.gltf"));
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(rig.unwrap().notes.len(), 1);
    }

    #[test]
    fn skeleton_problems_name_the_file() {
        let doc = json!({"asset": {"version": "2.0"}, "nodes": [{"name": "Mesh"}]});
        assert_eq!(
            error_of(&doc),
            format!(
                "{PATH}: no skeleton: no skin, no humanoid map, and no node with a parent or a \
                 child among its 1 (a static model)"
            )
        );
    }

    #[test]
    fn a_joint_scaled_to_zero_is_read_unhidden_and_noted() {
        // Spine hidden (scale 0 on one axis, then on all): Head keeps its place.
        for scale in [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]] {
            let mut nodes = hips_spine_head();
            nodes[1]["scale"] = json!(scale);
            let rig = parse_doc(&skinned(nodes, &[2], &[Mat4::IDENTITY])).unwrap();
            assert!((position(&rig, "Head") - Vec3::new(0.0, 1.6, 0.0)).length() < 1e-5);
            assert!(
                rig.notes
                    .iter()
                    .any(|n| n.starts_with("joint `Spine` is scaled to zero (hidden")),
                "{:?}",
                rig.notes
            );
        }
        // A hidden mesh node outside the skeleton does not matter.
        let mut nodes = hips_spine_head();
        nodes[2]["children"] = json!([3]);
        nodes
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Prop", "mesh": 0, "scale": [0.0, 0.0, 0.0]}));
        let rig = parse_doc(&skinned(nodes, &[2], &[Mat4::IDENTITY])).unwrap();
        assert_eq!(names(&rig), ["Hips", "Spine", "Head"]);
        assert!(rig.notes.iter().all(|n| !n.contains("scaled to zero")));
    }

    #[test]
    fn a_joint_hidden_by_its_matrix_loads_as_one_hidden_by_its_scale() {
        // Spine turned 90° about Y and scaled to zero on one or two axes, given as TRS
        // and as the same matrix: both load, noted, with every joint in one place.
        let turn = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let spine_at = Vec3::new(0.0, 0.2, 0.0);
        for scale in [
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::ZERO,
        ] {
            let mut trs = hips_spine_head();
            trs[1]["rotation"] = json!(turn.to_array());
            trs[1]["scale"] = json!(scale.to_array());
            trs[2]["translation"] = json!([0.1, 0.4, 0.0]);
            let mut matrix = trs.clone();
            let m = Mat4::from_scale_rotation_translation(scale, turn, spine_at);
            matrix[1] = json!({"name": "Spine", "matrix": m.to_cols_array(), "children": [2]});
            let from_trs = parse_doc(&skinned(trs, &[2], &[Mat4::IDENTITY])).unwrap();
            let from_matrix = parse_doc(&skinned(matrix, &[2], &[Mat4::IDENTITY])).unwrap();
            assert!(
                from_matrix
                    .notes
                    .iter()
                    .any(|n| n.starts_with("joint `Spine` is scaled to zero (hidden")),
                "{:?}",
                from_matrix.notes
            );
            if scale == Vec3::ZERO {
                // No axis is left to tell the turn: the matrix rests unturned.
                let head = position(&from_matrix, "Head");
                assert!((head - Vec3::new(0.1, 1.6, 0.0)).length() < 1e-5, "{head}");
                continue;
            }
            for joint in ["Hips", "Spine", "Head"] {
                let (a, b) = (world(&from_trs, joint), world(&from_matrix, joint));
                assert!(a.abs_diff_eq(b, 1e-5), "{joint} at {scale}: {a:?} != {b:?}");
            }
        }
        // A sheared matrix (two columns along one line) is no TRS: refused at its node.
        let mut sheared = hips_spine_head();
        sheared[1] = json!({"name": "Spine", "children": [2], "matrix": [
            1.0, 0.0, 0.0, 0.0,  1.0, 0.0, 0.0, 0.0,  0.0, 0.0, 0.0, 0.0,  0.0, 0.2, 0.0, 1.0
        ]});
        let error = error_of(&skinned(sheared, &[2], &[Mat4::IDENTITY]));
        assert_eq!(
            error,
            format!("{PATH}: node 1: matrix does not decompose into TRS")
        );
    }

    #[test]
    fn a_mirrored_node_loads_and_places_its_joints_mirrored() {
        // Negative scales mirror (legal glTF): the joints below sit mirrored.
        let mut nodes = hips_spine_head();
        nodes[1]["scale"] = json!([-1.0, -1.0, -0.5]);
        nodes[2]["translation"] = json!([0.3, 0.4, 0.0]);
        let rig = parse_doc(&skinned(nodes, &[2], &[Mat4::IDENTITY])).unwrap();
        assert!((position(&rig, "Head") - Vec3::new(-0.3, 0.8, 0.0)).length() < 1e-5);
    }

    // --- real files -------------------------------------------------------------

    #[test]
    fn every_real_gltf_and_vrm_file_loads() {
        let Some(dir) = assets() else { return };
        let mut count = 0;
        for sub in ["vrm", "gltf"] {
            // Every glTF of the folders (not the buffers and images beside them).
            let mut files: Vec<_> = std::fs::read_dir(dir.join(sub))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| ["gltf", "glb", "vrm"].contains(&e))
                })
                .collect();
            files.sort();
            for file in files {
                let name = file.file_name().unwrap().to_string_lossy().to_lowercase();
                if name.contains("broken") {
                    // A deliberately invalid file is refused in one line naming it.
                    let error = load(&file)
                        .map(|_| ())
                        .expect_err("a broken file is refused");
                    let message = error.to_string();
                    assert!(
                        message.starts_with(&file.display().to_string()) && !message.contains('\n'),
                        "{message}"
                    );
                    continue;
                }
                let rig = load(&file).unwrap_or_else(|e| panic!("{e}"));
                let bones = rig.bone_map.as_ref().map_or(0, |m| m.bones.len());
                println!(
                    "{}: {} joints, {bones} bones from {:?}, notes {:?}",
                    file.display(),
                    rig.skeleton.len(),
                    rig.map_source,
                    rig.notes
                );
                for clip in &rig.clips {
                    let m = &clip.motion;
                    println!(
                        "  clip `{}`: {} frames, {:.3}..{:.3} s, {:.1} fps",
                        clip.name,
                        m.frame_count(),
                        m.times()[0],
                        m.times()[m.frame_count() - 1],
                        m.mean_rate()
                    );
                }
                if let Some(map) = &rig.bone_map {
                    BoneMap::resolve(map, &rig.skeleton).unwrap_or_else(|e| panic!("{e}"));
                }
                count += 1;
            }
        }
        assert!(count >= 10, "only {count} files loaded");
    }

    #[test]
    fn an_unevenly_scaled_armature_is_noted() {
        // Blender's armature object scaled (0.5, 0.6, 0.5): the figure under it shears
        // as it moves, which rotations cannot follow. An even scale says nothing.
        for (scale, noted) in [([0.5, 0.6, 0.5], true), ([0.01, 0.01, 0.01], false)] {
            let mut nodes = hips_spine_head();
            nodes[0]["scale"] = json!(scale);
            let doc = json!({"asset": {"version": "2.0"}, "nodes": nodes,
                "scenes": [{"nodes": [0]}]});
            let rig = parse_doc(&doc).unwrap();
            let sheared = "joint `Hips` scales unevenly (0.500, 0.600, 0.500): the 2 joints under it are driven by their rotations, and their limbs point up to a few degrees off the sheared figure's";
            assert_eq!(
                rig.notes.iter().any(|n| n == sheared),
                noted,
                "{:?}",
                rig.notes
            );
            assert_eq!(rig.notes.len(), 1 + usize::from(noted), "{:?}", rig.notes);
        }
    }

    #[test]
    fn cesium_man_has_19_skin_joints_and_the_armature_above() {
        let Some(rig) = load_asset("gltf/CesiumMan.glb") else {
            return;
        };
        assert_eq!(rig.skeleton.len(), 20);
        assert_eq!(rig.skeleton.joints()[0].name, "Armature");
        assert!(rig.skeleton.find("Skeleton_arm_joint_L__4_").is_some());
        assert!(rig.bone_map.is_none());
        assert_eq!(
            rig.notes,
            ["animations: 19 `scale` channels ignored (joints keep their rest scale)"]
        );
    }

    #[test]
    fn rigged_simple_loads_with_no_map() {
        let Some(rig) = load_asset("gltf/RiggedSimple.glb") else {
            return;
        };
        assert_eq!(rig.skeleton.len(), 5);
        assert!(rig.bone_map.is_none() && rig.map_source.is_none());
    }

    #[test]
    fn vrmc_expressions_sample_has_hips_at_half_a_metre() {
        let Some(rig) = load_asset("vrm/VRMC_vrm_expressions_isBinary_Overrides.vrm") else {
            return;
        };
        assert_eq!(rig.skeleton.len(), 22);
        assert_eq!(rig.bone_map.as_ref().map(|m| m.bones.len()), Some(22));
        assert!((position(&rig, "Hips").y - 0.5).abs() < 1e-4);
    }

    #[test]
    fn med_general_has_23_joints_under_rig_medium() {
        let Some(rig) = load_asset("gltf/Med_General.glb") else {
            return;
        };
        assert_eq!(rig.skeleton.len(), 24);
        assert_eq!(rig.skeleton.joints()[0].name, "Rig_Medium");
        // Its spawn clips key every joint's scale 0 on their first frame.
        assert_eq!(
            rig.notes,
            [
                "animations whose scale keys shrink the whole figure to nothing on some frames \
                 (a glTF player shows nothing there; the joints' keys on them are no pose) hold \
                 the nearest frame the figure shows on: `Rig_Medium|Spawn_Air` (frame 1), \
                 `Rig_Medium|Spawn_Ground` (frame 1)",
                "animations: 360 `scale` channels ignored (joints keep their rest scale)"
            ]
        );
    }
}
