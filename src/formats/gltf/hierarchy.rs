//! The node tree of a glTF file as a skeleton: parent links (checked for bad
//! indices, a node with two parents and cycles), which nodes become joints and in
//! what order, every node's TRS, joint names and end sites; and the affine helpers
//! the bind pose shares (`decompose`, `to_affine`, `world_transforms`).

use std::collections::HashSet;

use glam::{DAffine3, DMat4, DQuat, DVec3, Quat, Vec3};
use gltf::json;

use super::{Document, GltfError};
use crate::skeleton::Transform;

/// Parent links of every node, checked for cycles and double parents.
pub(super) struct Hierarchy {
    pub(super) parent: Vec<Option<usize>>,
    pub(super) children: Vec<Vec<usize>>,
}

impl Document<'_> {
    /// Parent of every node from the `children` lists; rejects bad indices, a node
    /// with two parents and cycles.
    pub(super) fn hierarchy(&self) -> Result<Hierarchy, GltfError> {
        let count = self.doc.root.nodes.len();
        let mut parent: Vec<Option<usize>> = vec![None; count];
        let mut children = vec![Vec::new(); count];
        for (i, node) in self.doc.root.nodes.iter().enumerate() {
            for child in node.children.iter().flatten() {
                let c = child.value();
                if c >= count {
                    return Err(self.invalid(
                        format!("node {i}"),
                        format!("child node {c} does not exist"),
                    ));
                }
                if let Some(first) = parent[c] {
                    return Err(self.invalid(
                        format!("node {c}"),
                        format!("listed as a child of node {first} and of node {i}"),
                    ));
                }
                parent[c] = Some(i);
                children[i].push(c);
            }
        }
        // 0: not seen, 1: on the chain being walked, 2: known to reach a root.
        let mut state = vec![0u8; count];
        let mut chain = Vec::new();
        for start in 0..count {
            let mut node = Some(start);
            while let Some(n) = node {
                match state[n] {
                    0 => {
                        state[n] = 1;
                        chain.push(n);
                        node = parent[n];
                    }
                    1 => {
                        return Err(GltfError::Cycle {
                            path: self.doc.path.to_owned(),
                            node: n,
                        });
                    }
                    _ => break,
                }
            }
            for n in chain.drain(..) {
                state[n] = 2;
            }
        }
        Ok(Hierarchy { parent, children })
    }

    /// The skeleton's nodes (joint set and ancestors), parents first: depth-first
    /// from the scene's roots, then from the roots of joints outside the scene.
    pub(super) fn skeleton_order(
        &self,
        hierarchy: &Hierarchy,
        in_joint_set: &[bool],
    ) -> Result<Vec<usize>, GltfError> {
        let count = self.doc.root.nodes.len();
        let mut in_skeleton = vec![false; count];
        for start in (0..count).filter(|&n| in_joint_set[n]) {
            let mut node = Some(start);
            while let Some(n) = node {
                if in_skeleton[n] {
                    break;
                }
                in_skeleton[n] = true;
                node = hierarchy.parent[n];
            }
        }
        let topmost = |mut n: usize| {
            while let Some(p) = hierarchy.parent[n] {
                n = p;
            }
            n
        };
        let mut roots = Vec::new();
        for n in self.scene_roots()? {
            roots.push(topmost(n));
        }
        roots.extend((0..count).filter(|&n| in_skeleton[n]).map(topmost));

        let mut visited = vec![false; count];
        let mut order = Vec::new();
        let mut stack = Vec::new();
        for root in roots {
            if !in_skeleton[root] || visited[root] {
                continue;
            }
            stack.push(root);
            while let Some(n) = stack.pop() {
                visited[n] = true;
                order.push(n);
                let next = hierarchy.children[n].iter().rev();
                stack.extend(next.filter(|&&c| in_skeleton[c] && !visited[c]));
            }
        }
        Ok(order)
    }

    /// The joint set of a file with no skin and no humanoid map: every node with a
    /// parent or a child, except leaves that carry a mesh, camera or light and are
    /// not animated (a static prop, a body mesh beside the hierarchy).
    pub(super) fn plain_node_joints(&self, hierarchy: &Hierarchy) -> Vec<bool> {
        let count = self.doc.root.nodes.len();
        let mut animated = vec![false; count];
        for animation in &self.doc.root.animations {
            for channel in &animation.channels {
                if let Some(slot) = animated.get_mut(channel.target.node.value()) {
                    *slot = true;
                }
            }
        }
        let raw_nodes = self
            .doc
            .raw
            .get("nodes")
            .and_then(serde_json::Value::as_array);
        (0..count)
            .map(|n| {
                let node = &self.doc.root.nodes[n];
                let light = raw_nodes
                    .and_then(|nodes| nodes.get(n))
                    .and_then(|node| node.get("extensions"))
                    .is_some_and(|e| e.get("KHR_lights_punctual").is_some());
                let attachment = node.mesh.is_some() || node.camera.is_some() || light;
                let leaf = hierarchy.children[n].is_empty();
                let in_tree = hierarchy.parent[n].is_some() || !leaf;
                in_tree && (animated[n] || !(leaf && attachment))
            })
            .collect()
    }

    /// Root nodes of the default scene (or scene 0), checked.
    fn scene_roots(&self) -> Result<Vec<usize>, GltfError> {
        let scene_index = match self.doc.root.scene {
            Some(index) => index.value(),
            None if self.doc.root.scenes.is_empty() => return Ok(Vec::new()),
            None => 0,
        };
        let scene =
            self.doc.root.scenes.get(scene_index).ok_or_else(|| {
                self.invalid("scene", format!("scene {scene_index} does not exist"))
            })?;
        scene
            .nodes
            .iter()
            .map(|n| match n.value() {
                n if n < self.doc.root.nodes.len() => Ok(n),
                n => Err(self.invalid(
                    format!("scene {scene_index}"),
                    format!("node {n} does not exist"),
                )),
            })
            .collect()
    }

    /// The node's TRS (or its decomposed `matrix`), checked to be finite.
    pub(super) fn node_transform(&self, index: usize) -> Result<Transform, GltfError> {
        let place = format!("node {index}");
        let Some(node) = self.doc.root.nodes.get(index) else {
            return Err(self.invalid(place, "does not exist"));
        };
        if let Some(m) = node.matrix {
            if !m.iter().all(|v| v.is_finite()) {
                return Err(self.invalid(place, "matrix is not finite"));
            }
            let matrix = DAffine3::from_mat4(DMat4::from_cols_array(&m.map(f64::from)));
            let (scale, rotation, translation) = decompose(matrix)
                .or_else(|| decompose_hidden(matrix))
                .ok_or_else(|| self.invalid(&place, "matrix does not decompose into TRS"))?;
            return Ok(Transform {
                translation: translation.as_vec3(),
                rotation: rotation.as_quat().normalize(),
                scale: scale.as_vec3(),
            });
        }
        let translation = Vec3::from(node.translation.unwrap_or([0.0; 3]));
        let rotation = Quat::from_array(node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |r| r.0));
        let scale = Vec3::from(node.scale.unwrap_or([1.0; 3]));
        if !translation.is_finite() {
            return Err(self.invalid(place, "translation is not finite"));
        }
        if !rotation.is_finite() {
            return Err(self.invalid(place, "rotation is not finite"));
        }
        if !scale.is_finite() {
            return Err(self.invalid(place, "scale is not finite"));
        }
        if rotation.length() < 1e-6 {
            return Err(self.invalid(place, "rotation is a zero quaternion"));
        }
        Ok(Transform {
            translation,
            rotation: rotation.normalize(),
            scale,
        })
    }

    /// A leaf joint's end: the translation of its only child that is an empty leaf
    /// (not a joint, no mesh, camera, skin or children), as Blender's `_end` bones.
    pub(super) fn end_site(
        &self,
        node: usize,
        hierarchy: &Hierarchy,
        position: &[Option<usize>],
    ) -> Result<Option<Vec3>, GltfError> {
        let children = &hierarchy.children[node];
        if children.iter().any(|&c| position[c].is_some()) {
            return Ok(None);
        }
        let mut empties = children.iter().filter(|&&c| {
            let child = &self.doc.root.nodes[c];
            child.mesh.is_none()
                && child.camera.is_none()
                && child.skin.is_none()
                && hierarchy.children[c].is_empty()
        });
        match (empties.next(), empties.next()) {
            (Some(&only), None) => {
                let end = self.node_transform(only)?.translation;
                Ok((end.length() > 1e-9).then_some(end))
            }
            _ => Ok(None),
        }
    }
}

/// Scale, rotation, translation of an affine matrix; `None` when it is singular or
/// not finite.
pub(super) fn decompose(affine: DAffine3) -> Option<(DVec3, DQuat, DVec3)> {
    let m = affine.matrix3;
    let det = m.determinant();
    let axes_ok = [m.x_axis, m.y_axis, m.z_axis]
        .iter()
        .all(|a| a.length() > 0.0);
    if !det.is_finite() || det == 0.0 || !axes_ok || !affine.translation.is_finite() {
        return None;
    }
    let (scale, rotation, translation) = affine.to_scale_rotation_translation();
    let finite = scale.is_finite() && rotation.is_finite() && rotation.length() > 1e-9;
    finite.then(|| (scale, rotation.normalize(), translation))
}

/// Scale, rotation, translation of a matrix whose scale is zero on one or more axes
/// (a node hidden by its `matrix`, as a TRS node is by a zero `scale`): the zero
/// columns take a scale of 0 and the others their lengths, and the rotation is the
/// right-handed frame of the columns left (any frame that keeps the one column
/// left, none when no column is left). `None` when the columns left are not
/// orthogonal (a shear, which no TRS holds) or not finite.
pub(super) fn decompose_hidden(affine: DAffine3) -> Option<(DVec3, DQuat, DVec3)> {
    /// Columns shorter than this are zero: no rig is scaled this small.
    const ZERO: f64 = 1e-9;
    let m = affine.matrix3;
    let columns = [m.x_axis, m.y_axis, m.z_axis];
    if !columns.iter().all(|c| c.is_finite()) || !affine.translation.is_finite() {
        return None;
    }
    let scale = DVec3::from_array(columns.map(|c| c.length()));
    let kept: Vec<usize> = (0..3).filter(|&i| scale[i] > ZERO).collect();
    let unit = |i: usize| columns[i] / scale[i];
    let mut axes = [DVec3::X, DVec3::Y, DVec3::Z];
    match kept[..] {
        [] => {}
        [i] => {
            let turn = DQuat::from_rotation_arc(axes[i], unit(i));
            axes = axes.map(|a| turn * a);
        }
        [i, j] => {
            let (a, b) = (unit(i), unit(j));
            if a.dot(b).abs() > 1e-4 {
                return None;
            }
            let k = 3 - i - j;
            axes[i] = a;
            axes[j] = b;
            // The third axis completes a right-handed frame: x × y = z and its turns.
            axes[k] = axes[(k + 1) % 3].cross(axes[(k + 2) % 3]);
        }
        _ => return None,
    }
    let rotation = DQuat::from_mat3(&glam::DMat3::from_cols(axes[0], axes[1], axes[2]));
    let scale = DVec3::select(scale.cmpgt(DVec3::splat(ZERO)), scale, DVec3::ZERO);
    rotation
        .is_finite()
        .then(|| (scale, rotation.normalize(), affine.translation))
}

/// A transform as an f64 affine matrix.
pub(super) fn to_affine(t: &Transform) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(
        t.scale.as_dvec3(),
        t.rotation.as_dquat(),
        t.translation.as_dvec3(),
    )
}

/// Model-space transforms from local ones (parents come first).
pub(super) fn world_transforms(locals: &[Transform], parents: &[Option<usize>]) -> Vec<DAffine3> {
    let mut world: Vec<DAffine3> = Vec::with_capacity(locals.len());
    for (local, parent) in locals.iter().zip(parents) {
        let parent_world = parent.and_then(|p| world.get(p).copied());
        world.push(parent_world.unwrap_or(DAffine3::IDENTITY) * to_affine(local));
    }
    world
}

/// Joint names: the node's name, `node{index}` when it has none, `{name}#{index}` for
/// a name already taken.
pub(super) fn joint_names(root: &json::Root, order: &[usize]) -> Vec<String> {
    let mut used = HashSet::new();
    order
        .iter()
        .map(|&node| {
            let name = root
                .nodes
                .get(node)
                .and_then(|n| n.name.clone())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("node{node}"));
            let mut unique = name.clone();
            while used.contains(&unique) {
                unique = format!("{unique}#{node}");
            }
            used.insert(unique.clone());
            unique
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use glam::Mat4;
    use serde_json::json;

    #[test]
    fn infinite_translation_is_named() {
        // JSON has no NaN; 1e39 overflows f32 to infinity.
        let mut nodes = hips_spine_head();
        nodes[1]["translation"] = json!([1e39, 0.0, 0.0]);
        let doc = skinned(nodes, &[0, 1, 2], &[Mat4::IDENTITY; 3]);
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: node 1: translation is not finite")
        );
    }

    #[test]
    fn node_cycle_is_named() {
        let mut nodes = hips_spine_head();
        nodes[0]["children"] = json!([]);
        nodes[2]["children"] = json!([1]);
        let doc = skinned(nodes, &[0], &[Mat4::IDENTITY]);
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: node 1 is its own ancestor")
        );
        let mut nodes = hips_spine_head();
        nodes[2]["children"] = json!([1]);
        let doc = skinned(nodes, &[0], &[Mat4::IDENTITY]);
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: node 1: listed as a child of node 0 and of node 2")
        );
        let mut nodes = hips_spine_head();
        nodes[0]["children"] = json!([0]);
        let doc = skinned(nodes, &[0], &[Mat4::IDENTITY]);
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: node 0 is its own ancestor")
        );
    }

    #[test]
    fn armature_scale_above_the_hips_is_a_joint_and_mesh_nodes_are_not() {
        let doc = json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "Armature", "scale": [0.01, 0.01, 0.01], "children": [1, 4]},
                {"name": "Hips", "translation": [0.0, 100.0, 0.0], "children": [2]},
                {"name": "Spine", "translation": [0.0, 20.0, 0.0], "children": [3, 5]},
                {"name": "Spine_end", "translation": [0.0, 15.0, 0.0]},
                {"name": "Body", "mesh": 0, "skin": 0},
                {"name": "Badge", "mesh": 0}
            ],
            "meshes": [{"primitives": [{"attributes": {}}]}],
            "skins": [{"joints": [1, 2]}]
        });
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(names(&rig), ["Armature", "Hips", "Spine"]);
        let armature = &rig.skeleton.joints()[0];
        assert_eq!(armature.rest.scale, Vec3::splat(0.01));
        assert!(position(&rig, "Hips").abs_diff_eq(Vec3::new(0.0, 1.0, 0.0), 1e-6));
        assert_eq!(
            rig.skeleton.joints()[2].end,
            Some(Vec3::new(0.0, 15.0, 0.0))
        );
        assert_eq!(rig.skeleton.joints()[1].end, None);
        assert!(rig.bone_map.is_none() && rig.clips.is_empty() && rig.notes.is_empty());
    }

    #[test]
    fn unnamed_and_duplicate_node_names_become_unique_joint_names() {
        let nodes = json!([
            {"name": "Bone", "children": [1]},
            {"children": [2]},
            {"name": "Bone", "children": [3]},
            {"name": ""}
        ]);
        let rig = parse_doc(&skinned(nodes, &[0, 1, 2, 3], &[Mat4::IDENTITY; 4])).unwrap();
        assert_eq!(names(&rig), ["Bone", "node1", "Bone#2", "node3"]);
    }

    #[test]
    fn joints_outside_the_scene_are_included_from_their_own_roots() {
        let doc = json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "Mesh", "mesh": 0},
                {"name": "Hips", "children": [2]},
                {"name": "Spine", "matrix": [
                    1.0, 0.0, 0.0, 0.0,  0.0, 1.0, 0.0, 0.0,
                    0.0, 0.0, 1.0, 0.0,  0.0, 0.5, 0.0, 1.0
                ]}
            ],
            "meshes": [{"primitives": [{"attributes": {}}]}],
            "skins": [{"joints": [2, 1]}]
        });
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(names(&rig), ["Hips", "Spine"]);
        assert_eq!(rig.skeleton.joints()[1].parent, Some(0));
        assert!(
            rig.skeleton.joints()[1]
                .rest
                .translation
                .abs_diff_eq(Vec3::Y * 0.5, 1e-7)
        );
    }
}
