//! glTF, GLB and VRM rigs: the skeleton of a glTF scene and the humanoid map the file
//! declares (VRM 1.0 `VRMC_vrm`, VRM 0.x `VRM`, `EXT_skeleton_humanoid`).
//!
//! The skeleton is every skin joint (of every skin) and every node the humanoid map
//! names, plus all their ancestors (so an `Armature` node with scale 0.01 or an axis
//! turn above the hips is a joint too), parents first in depth-first scene order.
//! Mesh-only nodes are left out. glTF is already metres, +Y up and right-handed: no
//! unit or axis conversion happens here. A VRM 0.x model faces -Z; that is noted and
//! left to the rest correction.
//!
//! Rest transforms are the nodes' TRS, unless a skin's inverse bind matrices say the
//! nodes are posed away from the bind pose (a file saved mid-animation, arms down
//! while the mesh was bound in T-pose): then the whole skin takes its rest from the
//! bind pose. Bind worlds are `inverse(IBM)`, carried into the scene by the transform
//! that puts the skin's root joint where its node is (exporters write IBMs relative to
//! the mesh's own frame, often Z-up centimetres).
//!
//! Animations become `Rig::clips`, one per animation that moves a joint, each
//! sampled into a `Motion` (see `formats::sampler`): at the channels' own key times
//! when one channel's keys cover all the others', else on a uniform grid at a
//! standard rate. Rotation and translation channels on skeleton joints are read;
//! scale and morph-weight channels and channels on other nodes are ignored (noted).
//! An unanimated joint holds its node TRS, as in a glTF player (see `read_clips`).
//!
//! Does not read meshes or materials. Parsing is pure over bytes except for
//! external `.bin` buffers, resolved next to the file.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use glam::{DAffine3, DMat4, DQuat, DVec3, Quat, Vec3};
use gltf::json;
use gltf::json::accessor::Type;
use gltf::json::animation::{Interpolation as JsonInterpolation, Property};
use gltf::json::validation::Checked;
use serde_json::Value;

use super::gltf_doc::{AccessorSpec, DocError, GltfDoc};
use super::sampler::{self, Interpolation, KeyValue, KeyframeError, Keyframes};
use super::{Clip, Motion, Rig};
use crate::humanoid::HumanBone;
use crate::skeleton::{InvalidSkeleton, Joint, NamedBoneMap, Skeleton, Transform};

/// Why a glTF file cannot be loaded as a rig.
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Bad magic, a truncated GLB, JSON that does not parse as glTF.
    #[error("{path}: not a glTF file: {detail}")]
    NotGltf { path: PathBuf, detail: String },
    /// An external buffer file that is not there.
    #[error("{path}: buffer {buffer} (`{uri}`) is missing")]
    MissingBuffer {
        path: PathBuf,
        buffer: usize,
        uri: String,
    },
    #[error("{path}: node {node} is its own ancestor")]
    Cycle { path: PathBuf, node: usize },
    /// Anything else wrong in the file; `place` is a node, skin or JSON path.
    #[error("{path}: {place}: {message}")]
    Invalid {
        path: PathBuf,
        place: String,
        message: String,
    },
    #[error("{path}: {source}")]
    Skeleton {
        path: PathBuf,
        #[source]
        source: InvalidSkeleton,
    },
}

/// The container, buffer and accessor errors of `GltfDoc`, worded as they are.
impl From<DocError> for GltfError {
    fn from(e: DocError) -> Self {
        match e {
            DocError::Read { path, source } => Self::Read { path, source },
            DocError::NotGltf { path, detail } => Self::NotGltf { path, detail },
            DocError::MissingBuffer { path, buffer, uri } => {
                Self::MissingBuffer { path, buffer, uri }
            }
            DocError::Invalid {
                path,
                place,
                message,
            } => Self::Invalid {
                path,
                place,
                message,
            },
        }
    }
}

/// Reads a `.gltf`, `.glb` or `.vrm` file (and the external buffers it names).
pub fn load(path: &Path) -> Result<Rig, GltfError> {
    let bytes = std::fs::read(path).map_err(|source| GltfError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&bytes, path)
}

/// Parses glTF JSON or GLB bytes. `path` names the file in errors and is where
/// external buffer URIs are resolved from; nothing else touches the disk.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Rig, GltfError> {
    let doc = GltfDoc::from_bytes(bytes, path)?;
    Document { doc }.into_rig()
}

/// Most samples (frames × joints) one clip may hold: 16 M, about 450 MB of
/// rotations and translations. Keeps a file from asking for a huge grid.
const MAX_CLIP_SAMPLES: usize = 16_000_000;

/// A bind world counts as posed away from the node world beyond this angle.
const POSED_ANGLE_DEG: f64 = 0.01;

/// ... or beyond this fraction of the model's size in translation.
const POSED_DISTANCE_FRACTION: f64 = 1e-4;

/// What the accessors read here must hold: floats, or for rotations also
/// normalized integers, as the glTF spec allows.
const MATRICES: AccessorSpec = AccessorSpec::floats(Type::Mat4);
const TIMES: AccessorSpec = AccessorSpec::floats(Type::Scalar);
const TRANSLATIONS: AccessorSpec = AccessorSpec::floats(Type::Vec3);
const ROTATIONS: AccessorSpec = AccessorSpec {
    type_: Type::Vec4,
    normalized_integers: true,
};

/// A parsed file, read into a rig.
struct Document<'a> {
    doc: GltfDoc<'a>,
}

/// The humanoid map a file declares, in node indices.
struct DeclaredMap {
    source: &'static str,
    bones: Vec<(HumanBone, usize)>,
}

/// Parent links of every node, checked for cycles and double parents.
struct Hierarchy {
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
}

/// One skin: its joints and, when the file has them, their inverse bind matrices.
struct Skin {
    joints: Vec<usize>,
    inverse_binds: Option<Vec<DMat4>>,
}

/// One animated property of one joint, keyed.
enum Track {
    Rotation { joint: usize, keys: Keyframes<Quat> },
    Translation { joint: usize, keys: Keyframes<Vec3> },
}

impl Track {
    fn times(&self) -> &[f32] {
        match self {
            Self::Rotation { keys, .. } => keys.times(),
            Self::Translation { keys, .. } => keys.times(),
        }
    }
}

/// Channels no clip uses, counted over every animation of a file: one note each.
#[derive(Debug, Default)]
struct IgnoredChannels {
    scale: usize,
    weights: usize,
    unknown_path: usize,
    /// Rotation and translation channels on nodes outside the skeleton.
    outside: usize,
    outside_nodes: BTreeSet<usize>,
}

impl Document<'_> {
    fn invalid(&self, place: impl Into<String>, message: impl Into<String>) -> GltfError {
        self.doc.invalid(place, message).into()
    }

    /// Builds the rig: hierarchy, joint set, rest transforms, names, humanoid map.
    fn into_rig(mut self) -> Result<Rig, GltfError> {
        let mut notes = Vec::new();
        let node_count = self.doc.root.nodes.len();
        let hierarchy = self.hierarchy()?;
        let declared = read_humanoid(&self.doc.raw, node_count, self.doc.path, &mut notes)?;
        let skins = self.read_skins()?;

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
        let order = self.skeleton_order(&hierarchy, &in_joint_set)?;
        let mut position = vec![None; node_count];
        for (k, &node) in order.iter().enumerate() {
            position[node] = Some(k);
        }
        let parents: Vec<Option<usize>> = order
            .iter()
            .map(|&node| hierarchy.parent[node].and_then(|p| position[p]))
            .collect();

        let node_rest = order
            .iter()
            .map(|&node| self.node_transform(node))
            .collect::<Result<Vec<_>, _>>()?;
        let node_world = world_transforms(&node_rest, &parents);
        let bind_worlds = self.bind_worlds(&skins, &position, &node_world, &mut notes)?;
        let rest = rest_transforms(&order, &parents, &node_rest, &bind_worlds);

        let names = joint_names(&self.doc.root, &order);
        let mut joints = Vec::with_capacity(order.len());
        for (k, &node) in order.iter().enumerate() {
            joints.push(Joint {
                name: names[k].clone(),
                parent: parents[k],
                rest: rest[k],
                end: self.end_site(node, &hierarchy, &position)?,
            });
        }
        let skeleton = Skeleton::new(joints).map_err(|source| GltfError::Skeleton {
            path: self.doc.path.to_owned(),
            source,
        })?;

        let clips = self.read_clips(&position, &node_rest, &mut notes)?;

        let (bone_map, map_source) = match declared {
            Some(map) => {
                let bones = map
                    .bones
                    .iter()
                    .filter_map(|&(bone, node)| position[node].map(|k| (bone, names[k].clone())))
                    .collect();
                (Some(NamedBoneMap { bones }), Some(map.source.to_owned()))
            }
            None => (None, None),
        };
        Ok(Rig {
            skeleton,
            bone_map,
            map_source,
            clips,
            notes,
        })
    }

    /// Parent of every node from the `children` lists; rejects bad indices, a node
    /// with two parents and cycles.
    fn hierarchy(&self) -> Result<Hierarchy, GltfError> {
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
    fn skeleton_order(
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
    fn node_transform(&self, index: usize) -> Result<Transform, GltfError> {
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
                .ok_or_else(|| self.invalid(&place, "matrix does not decompose (a zero scale)"))?;
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

    /// Every skin's joints (checked) and inverse bind matrices (read and checked).
    fn read_skins(&mut self) -> Result<Vec<Skin>, GltfError> {
        let node_count = self.doc.root.nodes.len();
        let mut skins = Vec::with_capacity(self.doc.root.skins.len());
        for s in 0..self.doc.root.skins.len() {
            let mut joints = Vec::new();
            let mut ibm_accessor = None;
            if let Some(skin) = self.doc.root.skins.get(s) {
                for joint in &skin.joints {
                    match joint.value() {
                        j if j < node_count => joints.push(j),
                        j => {
                            return Err(self.invalid(
                                format!("skin {s}"),
                                format!("joint node {j} does not exist"),
                            ));
                        }
                    }
                }
                ibm_accessor = skin.inverse_bind_matrices.map(|a| a.value());
            }
            let inverse_binds = match ibm_accessor {
                Some(accessor) => Some(self.read_inverse_binds(s, accessor, &joints)?),
                None => None,
            };
            skins.push(Skin {
                joints,
                inverse_binds,
            });
        }
        Ok(skins)
    }

    /// Reads skin `s`'s inverse bind matrices (MAT4 of f32), one per joint, with every
    /// offset, stride and length checked against the view and the buffer.
    fn read_inverse_binds(
        &mut self,
        s: usize,
        accessor_index: usize,
        joints: &[usize],
    ) -> Result<Vec<DMat4>, GltfError> {
        let place = format!("skin {s}");
        let what = format!("inverseBindMatrices accessor {accessor_index}");
        let floats = self
            .doc
            .read_accessor(accessor_index, MATRICES, &place, &what)?;
        let Some(floats) = floats else {
            // No buffer view: all zeros, which no joint can be bound with.
            return match joints.first() {
                Some(&node) => Err(self.invalid(
                    place,
                    format!("inverse bind matrix 0 (node {node}) is not invertible"),
                )),
                None => Ok(Vec::new()),
            };
        };
        let count = floats.len() / 16;
        if count < joints.len() {
            return Err(self.invalid(
                place,
                format!("{what} holds {count} matrices for {} joints", joints.len()),
            ));
        }
        let mut matrices = Vec::with_capacity(joints.len());
        for (i, (&node, m)) in joints.iter().zip(floats.chunks_exact(16)).enumerate() {
            if !m.iter().all(|v| v.is_finite()) {
                return Err(self.invalid(
                    place,
                    format!("inverse bind matrix {i} (node {node}) is not finite"),
                ));
            }
            let mut columns = [0f64; 16];
            for (value, &f) in columns.iter_mut().zip(m) {
                *value = f64::from(f);
            }
            matrices.push(DMat4::from_cols_array(&columns));
        }
        Ok(matrices)
    }

    /// Bind worlds of the joints whose rest comes from their skin's inverse bind
    /// matrices, by node. Decides per skin; notes each skin that is used.
    fn bind_worlds(
        &self,
        skins: &[Skin],
        position: &[Option<usize>],
        node_world: &[DAffine3],
        notes: &mut Vec<String>,
    ) -> Result<HashMap<usize, DAffine3>, GltfError> {
        // The first skin listing a joint owns it.
        let mut owner: HashMap<usize, usize> = HashMap::new();
        for (s, skin) in skins.iter().enumerate() {
            for &joint in &skin.joints {
                owner.entry(joint).or_insert(s);
            }
        }
        let size = model_size(position, node_world, skins);
        let mut result = HashMap::new();
        for (s, skin) in skins.iter().enumerate() {
            let Some(inverse_binds) = &skin.inverse_binds else {
                continue;
            };
            let worlds = self.skin_bind_worlds(s, skin, inverse_binds, position, node_world)?;
            let posed = worlds.iter().any(|(node, bind)| {
                position[*node].is_some_and(|k| is_posed_away(node_world[k], *bind, size))
            });
            if !posed {
                continue;
            }
            let mut owns_any = false;
            for (node, bind) in worlds {
                if owner.get(&node) == Some(&s) && !result.contains_key(&node) {
                    result.insert(node, bind);
                    owns_any = true;
                }
            }
            if owns_any {
                notes.push(format!(
                    "rest pose taken from skin {s}'s inverse bind matrices (the nodes are posed differently)"
                ));
            }
        }
        Ok(result)
    }

    /// `G · inverse(IBM)` for each joint of skin `s`, where `G` puts the skin's first
    /// root joint (no ancestor in the skin) where its node is.
    fn skin_bind_worlds(
        &self,
        s: usize,
        skin: &Skin,
        inverse_binds: &[DMat4],
        position: &[Option<usize>],
        node_world: &[DAffine3],
    ) -> Result<Vec<(usize, DAffine3)>, GltfError> {
        let mut raw = Vec::with_capacity(skin.joints.len());
        let mut seen = HashSet::new();
        for (i, (&node, ibm)) in skin.joints.iter().zip(inverse_binds).enumerate() {
            if !seen.insert(node) {
                continue;
            }
            let affine = DAffine3::from_mat4(*ibm);
            let Some(bind) = invert(affine) else {
                return Err(self.invalid(
                    format!("skin {s}"),
                    format!("inverse bind matrix {i} (node {node}) is not invertible"),
                ));
            };
            raw.push((node, affine, bind));
        }
        // The root: the joint that comes first in the skeleton's (parents-first) order.
        let root = raw
            .iter()
            .filter_map(|(node, ibm, _)| position[*node].map(|k| (k, *ibm)))
            .min_by_key(|(k, _)| *k);
        let Some((root_position, root_ibm)) = root else {
            return Ok(Vec::new());
        };
        let align = node_world[root_position] * root_ibm;
        Ok(raw
            .into_iter()
            .map(|(node, _, bind)| (node, align * bind))
            .collect())
    }

    /// Every animation that moves a joint, as a clip over the whole skeleton (see
    /// `sampler::frame_times` for when frames are), in file order; named after the
    /// animation, or `animation{i}`.
    ///
    /// A joint or property no channel animates holds the node's own TRS
    /// (`node_rest`), not the skeleton's rest. The two differ only for skins whose
    /// rest came from inverse bind matrices, and there the node TRS is right:
    /// - glTF animates node TRS, and a property without a channel keeps its node
    ///   value: that is what every player shows. RobotExpressive's `Idle` keys no
    ///   arm; its nodes hang the arms down, its bind pose holds them out. With the
    ///   bind rest the clip would play arms out, a pose the file never shows.
    /// - The keyed values are node TRS too, and both poses are locals in the same
    ///   frame: a bind local is `IBM_parent · IBM_joint⁻¹`, independent
    ///   of the frame the IBMs were written in, so a motion local is a rotation of
    ///   the same joint against the same parent as the skeleton's rest, which is all
    ///   retargeting asks (it measures motion against the rest per joint).
    /// - Rotation and translation of a joint come from the same place (the node,
    ///   or its channel), never a keyed rotation over a bind-pose translation.
    ///   Ancestors above the skin and skins posed at their bind pose have rest =
    ///   node TRS, so for them nothing differs.
    fn read_clips(
        &mut self,
        position: &[Option<usize>],
        node_rest: &[Transform],
        notes: &mut Vec<String>,
    ) -> Result<Vec<Clip>, GltfError> {
        let node_rotations: Vec<Quat> = node_rest.iter().map(|t| t.rotation).collect();
        let node_translations: Vec<Vec3> = node_rest.iter().map(|t| t.translation).collect();
        let max_frames = MAX_CLIP_SAMPLES / node_rest.len().max(1);
        let mut ignored = IgnoredChannels::default();
        let (mut resampled, mut skipped) = (Vec::new(), Vec::new());
        let mut clips = Vec::with_capacity(self.doc.root.animations.len());
        for a in 0..self.doc.root.animations.len() {
            let name = self.doc.root.animations[a]
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("animation{a}"));
            let tracks = self.read_tracks(a, position, &mut ignored, notes)?;
            if tracks.is_empty() {
                skipped.push(format!("`{name}`"));
                continue;
            }
            let channel_times: Vec<&[f32]> = tracks.iter().map(Track::times).collect();
            let frames = sampler::frame_times(&channel_times, max_frames)
                .map_err(|e| self.invalid(format!("animations[{a}]"), e.to_string()))?;
            if let Some(fps) = frames.resampled_fps {
                resampled.push(format!("`{name}` at {fps} fps"));
            }
            let motion = sample_motion(&tracks, frames.times, &node_rotations, &node_translations);
            clips.push(Clip { name, motion });
        }
        if !resampled.is_empty() {
            notes.push(format!(
                "animations resampled on a uniform grid (their channels' key times differ): {}",
                resampled.join(", ")
            ));
        }
        if !skipped.is_empty() {
            notes.push(format!(
                "animations that move no joint of the skeleton skipped: {}",
                skipped.join(", ")
            ));
        }
        self.note_ignored(&ignored, notes);
        Ok(clips)
    }

    /// The rotation and translation channels of animation `a` on skeleton joints,
    /// read and checked; other channels are counted in `ignored`.
    fn read_tracks(
        &mut self,
        a: usize,
        position: &[Option<usize>],
        ignored: &mut IgnoredChannels,
        notes: &mut Vec<String>,
    ) -> Result<Vec<Track>, GltfError> {
        // A copy of the indices, so buffers can load while they are walked.
        let animation = self.doc.root.animations[a].clone();
        // (node, is rotation) -> the channel animating it.
        let mut animated: HashMap<(usize, bool), usize> = HashMap::new();
        let mut tracks = Vec::new();
        for (c, channel) in animation.channels.iter().enumerate() {
            let place = format!("animations[{a}].channels[{c}]");
            let node = channel.target.node.value();
            if node >= self.doc.root.nodes.len() {
                return Err(self.invalid(place, format!("node {node} does not exist")));
            }
            let s = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(s) else {
                return Err(self.invalid(place, format!("sampler {s} does not exist")));
            };
            let is_rotation = match channel.target.path {
                Checked::Valid(Property::Rotation) => true,
                Checked::Valid(Property::Translation) => false,
                Checked::Valid(Property::Scale) => {
                    ignored.scale += 1;
                    continue;
                }
                Checked::Valid(Property::MorphTargetWeights) => {
                    ignored.weights += 1;
                    continue;
                }
                Checked::Invalid => {
                    ignored.unknown_path += 1;
                    continue;
                }
            };
            let Some(joint) = position[node] else {
                ignored.outside += 1;
                ignored.outside_nodes.insert(node);
                continue;
            };
            let first = *animated.entry((node, is_rotation)).or_insert(c);
            if first != c {
                let property = if is_rotation {
                    "rotation"
                } else {
                    "translation"
                };
                notes.push(format!(
                    "{place}: node {node} {property} is already animated by channels[{first}]; ignored"
                ));
                continue;
            }
            let place = format!("animations[{a}].samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(JsonInterpolation::Step) => Interpolation::Step,
                Checked::Valid(JsonInterpolation::Linear) => Interpolation::Linear,
                Checked::Valid(JsonInterpolation::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    let pointer = format!("/animations/{a}/samplers/{s}/interpolation");
                    let found = self
                        .doc
                        .raw
                        .pointer(&pointer)
                        .map_or("?".to_owned(), Value::to_string);
                    return Err(self.invalid(
                        place,
                        format!("interpolation {found} is not STEP, LINEAR or CUBICSPLINE"),
                    ));
                }
            };
            let (input, output) = (sampler.input.value(), sampler.output.value());
            let input_name = format!("input accessor {input}");
            let times = self.animation_accessor(&place, &input_name, input, TIMES)?;
            let output_name = format!("output accessor {output}");
            let track = if is_rotation {
                let kind = ROTATIONS;
                let values = self.animation_accessor(&place, &output_name, output, kind)?;
                let values = values.chunks_exact(4).map(Quat::from_slice).collect();
                let keys = self.keyframes(&place, input, output, times, values, interpolation)?;
                Track::Rotation { joint, keys }
            } else {
                let kind = TRANSLATIONS;
                let values = self.animation_accessor(&place, &output_name, output, kind)?;
                let values = values.chunks_exact(3).map(Vec3::from_slice).collect();
                let keys = self.keyframes(&place, input, output, times, values, interpolation)?;
                Track::Translation { joint, keys }
            };
            tracks.push(track);
        }
        Ok(tracks)
    }

    /// An animation sampler's accessor; one without a buffer view (all zeros) is
    /// refused, as no exporter writes one and zero times or rotations mean nothing.
    fn animation_accessor(
        &mut self,
        place: &str,
        what: &str,
        index: usize,
        kind: AccessorSpec,
    ) -> Result<Vec<f32>, GltfError> {
        self.doc
            .read_accessor(index, kind, place, what)?
            .ok_or_else(|| self.invalid(place, format!("{what} has no buffer view")))
    }

    /// Builds keyframes, naming the accessor at fault: the input for times, the
    /// output for values.
    fn keyframes<T: KeyValue>(
        &self,
        place: &str,
        input: usize,
        output: usize,
        times: Vec<f32>,
        values: Vec<T>,
        interpolation: Interpolation,
    ) -> Result<Keyframes<T>, GltfError> {
        Keyframes::new(times, values, interpolation).map_err(|e| {
            let accessor = match e {
                KeyframeError::NoKeys
                | KeyframeError::TimeNotFinite { .. }
                | KeyframeError::TimesNotIncreasing { .. } => format!("input accessor {input}"),
                _ => format!("output accessor {output}"),
            };
            self.invalid(place, format!("{accessor}: {e}"))
        })
    }

    /// One note per kind of channel no clip uses.
    fn note_ignored(&self, ignored: &IgnoredChannels, notes: &mut Vec<String>) {
        if ignored.scale > 0 {
            notes.push(format!(
                "animations: {} ignored (joints keep their rest scale)",
                channels(ignored.scale, "`scale` channel")
            ));
        }
        if ignored.weights > 0 {
            notes.push(format!(
                "animations: {} ignored (morph targets are not read)",
                channels(ignored.weights, "`weights` channel")
            ));
        }
        if ignored.unknown_path > 0 {
            notes.push(format!(
                "animations: {} with an unknown target path ignored",
                channels(ignored.unknown_path, "channel")
            ));
        }
        if ignored.outside > 0 {
            let mut names: Vec<String> = ignored
                .outside_nodes
                .iter()
                .take(4)
                .map(|&n| match self.doc.root.nodes[n].name.as_deref() {
                    Some(name) if !name.is_empty() => format!("`{name}`"),
                    _ => format!("node {n}"),
                })
                .collect();
            if ignored.outside_nodes.len() > names.len() {
                names.push("...".to_owned());
            }
            notes.push(format!(
                "animations: {} on nodes outside the skeleton ignored ({})",
                channels(ignored.outside, "channel"),
                names.join(", ")
            ));
        }
    }

    /// A leaf joint's end: the translation of its only child that is an empty leaf
    /// (not a joint, no mesh, camera, skin or children), as Blender's `_end` bones.
    fn end_site(
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

/// Samples every track at every frame time; what no track animates keeps the given
/// locals (one per joint).
fn sample_motion(
    tracks: &[Track],
    times: Vec<f32>,
    rotations: &[Quat],
    translations: &[Vec3],
) -> Motion {
    let joints = rotations.len();
    let samples = times.len() * joints;
    let (mut frame_rotations, mut frame_translations) =
        (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for &t in &times {
        let frame = frame_rotations.len();
        frame_rotations.extend_from_slice(rotations);
        frame_translations.extend_from_slice(translations);
        for track in tracks {
            match track {
                Track::Rotation { joint, keys } => frame_rotations[frame + joint] = keys.sample(t),
                Track::Translation { joint, keys } => {
                    frame_translations[frame + joint] = keys.sample(t);
                }
            }
        }
    }
    Motion::new(times, joints, frame_rotations, frame_translations)
}

/// `1 channel`, `3 channels`.
fn channels(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// Scale, rotation, translation of an affine matrix; `None` when it is singular or
/// not finite.
fn decompose(affine: DAffine3) -> Option<(DVec3, DQuat, DVec3)> {
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

/// The inverse of an affine matrix, or `None` when it is singular.
fn invert(affine: DAffine3) -> Option<DAffine3> {
    let det = affine.matrix3.determinant();
    if !det.is_finite() || det == 0.0 {
        return None;
    }
    let inverse = affine.inverse();
    inverse.is_finite().then_some(inverse)
}

/// A transform as an f64 affine matrix.
fn to_affine(t: &Transform) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(
        t.scale.as_dvec3(),
        t.rotation.as_dquat(),
        t.translation.as_dvec3(),
    )
}

/// Model-space transforms from local ones (parents come first).
fn world_transforms(locals: &[Transform], parents: &[Option<usize>]) -> Vec<DAffine3> {
    let mut world: Vec<DAffine3> = Vec::with_capacity(locals.len());
    for (local, parent) in locals.iter().zip(parents) {
        let parent_world = parent.and_then(|p| world.get(p).copied());
        world.push(parent_world.unwrap_or(DAffine3::IDENTITY) * to_affine(local));
    }
    world
}

/// The diagonal of the box around the skin joints in the node rest pose (1 when the
/// joints are all in one spot): the scale for "translation differs".
fn model_size(position: &[Option<usize>], node_world: &[DAffine3], skins: &[Skin]) -> f64 {
    let mut low = DVec3::splat(f64::INFINITY);
    let mut high = DVec3::splat(f64::NEG_INFINITY);
    let joints = skins.iter().flat_map(|s| s.joints.iter());
    for k in joints.filter_map(|&node| position[node]) {
        let p = node_world[k].translation;
        low = low.min(p);
        high = high.max(p);
    }
    let size = (high - low).length();
    if size.is_finite() && size > 0.0 {
        size
    } else {
        1.0
    }
}

/// Whether a bind world differs from the node world by more than the tolerances.
fn is_posed_away(node_world: DAffine3, bind_world: DAffine3, size: f64) -> bool {
    let moved =
        (node_world.translation - bind_world.translation).length() > POSED_DISTANCE_FRACTION * size;
    let turned = match (decompose(node_world), decompose(bind_world)) {
        (Some((_, a, _)), Some((_, b, _))) => {
            let d = a.inverse() * b;
            let angle = 2.0 * DVec3::new(d.x, d.y, d.z).length().atan2(d.w.abs());
            angle.to_degrees() > POSED_ANGLE_DEG
        }
        _ => true,
    };
    moved || turned
}

/// Rest locals: the node TRS, or for joints taking the bind pose
/// `inverse(parent world) · bind world`, decomposed.
fn rest_transforms(
    order: &[usize],
    parents: &[Option<usize>],
    node_rest: &[Transform],
    bind_worlds: &HashMap<usize, DAffine3>,
) -> Vec<Transform> {
    let mut world: Vec<DAffine3> = Vec::with_capacity(order.len());
    let mut rest = Vec::with_capacity(order.len());
    for (k, &node) in order.iter().enumerate() {
        let parent_world = parents[k]
            .and_then(|p| world.get(p).copied())
            .unwrap_or(DAffine3::IDENTITY);
        let local = node_rest[k];
        let bind = bind_worlds.get(&node).and_then(|&bind| {
            let local = invert(parent_world)? * bind;
            let (scale, rotation, translation) = decompose(local)?;
            Some((bind, scale, rotation, translation))
        });
        match bind {
            Some((bind, scale, rotation, translation)) => {
                rest.push(Transform {
                    translation: translation.as_vec3(),
                    rotation: rotation.as_quat().normalize(),
                    scale: scale.as_vec3(),
                });
                world.push(bind);
            }
            None => {
                rest.push(local);
                world.push(parent_world * to_affine(&local));
            }
        }
    }
    rest
}

/// Joint names: the node's name, `node{index}` when it has none, `{name}#{index}` for
/// a name already taken.
fn joint_names(root: &json::Root, order: &[usize]) -> Vec<String> {
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

/// Which humanoid extension to read, in order of precedence.
const HUMANOID_EXTENSIONS: [(&str, &str); 3] = [
    ("VRMC_vrm", "VRMC_vrm humanoid"),
    ("VRM", "VRM 0.x humanoid"),
    ("EXT_skeleton_humanoid", "EXT_skeleton_humanoid"),
];

/// The humanoid map of the highest-precedence extension present (see
/// `HUMANOID_EXTENSIONS`), with node indices checked.
fn read_humanoid(
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
    let bones = match key {
        "VRMC_vrm" => reader.vrm1(value)?,
        "VRM" => {
            notes.push("VRM 0.x model: faces -Z; the rest correction turns it to +Z".to_owned());
            reader.vrm0(value, notes)?
        }
        _ => reader.ext_skeleton_humanoid(value, notes)?,
    };
    Ok(Some(DeclaredMap { source, bones }))
}

/// Reads the three humanoid extensions' JSON, naming the JSON path in errors.
struct HumanoidReader<'a> {
    path: &'a Path,
    node_count: usize,
}

impl HumanoidReader<'_> {
    fn invalid(&self, place: &str, message: impl Into<String>) -> GltfError {
        GltfError::Invalid {
            path: self.path.to_owned(),
            place: place.to_owned(),
            message: message.into(),
        }
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

    /// VRM 1.0: `humanoid.humanBones = {"hips": {"node": 3}, ...}`.
    fn vrm1(&self, vrm: &Value) -> Result<Vec<(HumanBone, usize)>, GltfError> {
        let place = "extensions.VRMC_vrm.humanoid.humanBones";
        let bones = vrm
            .get("humanoid")
            .and_then(|h| h.get("humanBones"))
            .ok_or_else(|| self.invalid(place, "missing"))?
            .as_object()
            .ok_or_else(|| self.invalid(place, "expected an object of bone: {\"node\": index}"))?;
        let mut out = Vec::with_capacity(bones.len());
        for (name, entry) in bones {
            let bone = self.bone(name, &format!("{place}.{name}"))?;
            let node = self.node(entry.get("node"), &format!("{place}.{name}.node"))?;
            out.push((bone, node));
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
    use super::*;
    use crate::skeleton::BoneMap;
    use glam::{Affine3A, Mat4};
    use serde_json::json;

    const PATH: &str = "tests/rig.gltf";

    fn parse_doc(doc: &Value) -> Result<Rig, GltfError> {
        parse(doc.to_string().as_bytes(), Path::new(PATH))
    }

    fn error_of(doc: &Value) -> String {
        match parse_doc(doc) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    fn base64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
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

    fn matrix_bytes(matrices: &[Mat4]) -> Vec<u8> {
        matrices
            .iter()
            .flat_map(|m| m.to_cols_array())
            .flat_map(f32::to_le_bytes)
            .collect()
    }

    /// A GLB with `json` and an optional binary chunk.
    fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
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
    fn skinned(nodes: Value, joints: &[usize], inverse_binds: &[Mat4]) -> Value {
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
    fn with_extensions(nodes: Value, extensions: Value) -> Value {
        json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": nodes,
            "extensions": extensions
        })
    }

    fn hips_spine_head() -> Value {
        json!([
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
            {"name": "Spine", "translation": [0.0, 0.2, 0.0], "children": [2]},
            {"name": "Head", "translation": [0.0, 0.4, 0.0]}
        ])
    }

    fn names(rig: &Rig) -> Vec<&str> {
        rig.skeleton
            .joints()
            .iter()
            .map(|j| j.name.as_str())
            .collect()
    }

    fn world(rig: &Rig, joint: &str) -> Affine3A {
        let i = rig
            .skeleton
            .find(joint)
            .unwrap_or_else(|| panic!("no joint {joint}"));
        rig.skeleton.rest_world()[i]
    }

    fn position(rig: &Rig, joint: &str) -> Vec3 {
        world(rig, joint).translation.into()
    }

    fn mapped(rig: &Rig, bone: HumanBone) -> Option<&str> {
        rig.bone_map.as_ref()?.bones.get(&bone).map(String::as_str)
    }

    /// Arm posed down in the nodes, T-pose in the bind pose; world positions of the
    /// bind pose: hips (0, 1, 0), arm (0.2, 1.5, 0), forearm (0.5, 1.5, 0).
    fn arm_posed_down() -> Value {
        json!([
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
            {
                "name": "Arm", "translation": [0.2, 0.5, 0.0], "children": [2],
                "rotation": [0.0, 0.0, -std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::FRAC_1_SQRT_2]
            },
            {"name": "Forearm", "translation": [0.3, 0.0, 0.0]}
        ])
    }

    fn t_pose_bind_worlds() -> [Mat4; 3] {
        [
            Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0)),
            Mat4::from_translation(Vec3::new(0.2, 1.5, 0.0)),
            Mat4::from_translation(Vec3::new(0.5, 1.5, 0.0)),
        ]
    }

    // --- bad input --------------------------------------------------------------

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
    fn inverse_bind_accessor_out_of_range_is_named() {
        let cases: [(&str, Value, &str); 5] = [
            (
                "/accessors/0/count",
                json!(4),
                "skin 0: inverseBindMatrices accessor 0 reads past the end of buffer view 0",
            ),
            (
                "/accessors/0/byteOffset",
                json!(16),
                "skin 0: inverseBindMatrices accessor 0 reads past the end of buffer view 0",
            ),
            (
                "/bufferViews/0/byteLength",
                json!(256),
                "skin 0: inverseBindMatrices accessor 0 reads past the end of buffer 0",
            ),
            (
                "/accessors/0/type",
                json!("VEC4"),
                "skin 0: inverseBindMatrices accessor 0 is not MAT4 of floats",
            ),
            (
                "/skins/0/inverseBindMatrices",
                json!(5),
                "skin 0: inverseBindMatrices accessor 5 does not exist",
            ),
        ];
        for (pointer, value, expected) in cases {
            let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &[Mat4::IDENTITY; 3]);
            if let Some(slot) = doc.pointer_mut(pointer) {
                *slot = value;
            } else {
                doc["accessors"][0]["byteOffset"] = value;
            }
            assert_eq!(error_of(&doc), format!("{PATH}: {expected}"), "{pointer}");
        }
    }

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
    fn skeleton_problems_name_the_file() {
        let doc = json!({"asset": {"version": "2.0"}, "nodes": [{"name": "Mesh"}]});
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: the skeleton has no joints")
        );
        let mut nodes = hips_spine_head();
        nodes[1]["scale"] = json!([1.0, 0.0, 1.0]);
        assert_eq!(
            error_of(&skinned(nodes, &[2], &[Mat4::IDENTITY])),
            format!("{PATH}: joint `Spine` has a zero or negative scale")
        );
    }

    #[test]
    fn singular_inverse_bind_matrix_is_named() {
        let doc = skinned(hips_spine_head(), &[0, 1, 2], &[Mat4::ZERO; 3]);
        assert_eq!(
            error_of(&doc),
            format!("{PATH}: skin 0: inverse bind matrix 0 (node 0) is not invertible")
        );
    }

    // --- skeleton --------------------------------------------------------------

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
    fn bind_pose_from_inverse_bind_matrices_replaces_posed_nodes() {
        let bind = t_pose_bind_worlds();
        let doc = skinned(arm_posed_down(), &[0, 1, 2], &bind.map(|m| m.inverse()));
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(
            rig.notes,
            [
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"
            ]
        );
        let arm = &rig.skeleton.joints()[1];
        assert!(arm.rest.rotation.abs_diff_eq(Quat::IDENTITY, 1e-6));
        assert!(
            arm.rest
                .translation
                .abs_diff_eq(Vec3::new(0.2, 0.5, 0.0), 1e-6)
        );
        let forearm = &rig.skeleton.joints()[2];
        assert!(
            forearm
                .rest
                .translation
                .abs_diff_eq(Vec3::new(0.3, 0.0, 0.0), 1e-6)
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-5), "{joint}");
        }
    }

    #[test]
    fn matching_inverse_bind_matrices_keep_the_node_rest() {
        let mut nodes = arm_posed_down();
        nodes[1]["rotation"] = json!([0.0, 0.0, 0.0, 1.0]);
        let bind = t_pose_bind_worlds();
        let rig = parse_doc(&skinned(nodes, &[0, 1, 2], &bind.map(|m| m.inverse()))).unwrap();
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        assert_eq!(rig.skeleton.joints()[1].rest.rotation, Quat::IDENTITY);
    }

    #[test]
    fn bind_pose_in_the_mesh_frame_is_carried_to_the_skin_root() {
        // IBMs relative to a mesh frame that is Z-up and 100 times smaller than the
        // scene, as three.js exporters write them.
        let mesh_frame = Mat4::from_scale_rotation_translation(
            Vec3::splat(100.0),
            Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
            Vec3::new(0.0, 0.3, 0.0),
        );
        let bind = t_pose_bind_worlds();
        let inverse_binds = bind.map(|world| (mesh_frame.inverse() * world).inverse());
        let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse_binds)).unwrap();
        assert_eq!(rig.notes.len(), 1);
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-4), "{joint}: {got}");
        }
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

    // --- humanoid maps --------------------------------------------------------

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
        assert_eq!(mapped(&rig, HumanBone::LeftThumbMetacarpal), Some("thumbA"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbProximal), Some("thumbB"));
        assert_eq!(mapped(&rig, HumanBone::LeftThumbDistal), Some("thumbC"));
        assert_eq!(rig.bone_map.as_ref().map(|m| m.bones.len()), Some(4));
        assert_eq!(names(&rig), ["root", "hips", "thumbA", "thumbB", "thumbC"]);
        assert_eq!(
            rig.notes,
            [
                "VRM 0.x model: faces -Z; the rest correction turns it to +Z",
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
            "VRMC_vrm": {"humanoid": {"humanBones": {"hips": {"node": 0}}}}
        });
        let rig = parse_doc(&with_extensions(hips_spine_head(), extensions)).unwrap();
        assert_eq!(rig.map_source.as_deref(), Some("VRMC_vrm humanoid"));
        assert_eq!(mapped(&rig, HumanBone::Hips), Some("Hips"));
        assert_eq!(names(&rig), ["Hips"]);
        assert_eq!(
            rig.notes,
            [
                "the file also declares VRM 0.x humanoid and EXT_skeleton_humanoid; using VRMC_vrm humanoid"
            ]
        );
    }

    // --- animations -------------------------------------------------------------

    /// Binary data for a test file: accessors appended one by one, each over its own
    /// buffer view, all in buffer 0.
    #[derive(Default)]
    struct Data {
        bytes: Vec<u8>,
        views: Vec<Value>,
        accessors: Vec<Value>,
    }

    impl Data {
        fn push(&mut self, bytes: &[u8], component_type: u32, count: usize, type_: &str) -> usize {
            while !self.bytes.len().is_multiple_of(4) {
                self.bytes.push(0);
            }
            self.views.push(json!({
                "buffer": 0, "byteOffset": self.bytes.len(), "byteLength": bytes.len()
            }));
            self.bytes.extend_from_slice(bytes);
            self.accessors.push(json!({
                "bufferView": self.views.len() - 1, "componentType": component_type,
                "count": count, "type": type_
            }));
            self.accessors.len() - 1
        }

        fn floats(&mut self, values: &[f32], type_: &str, per_element: usize) -> usize {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.push(&bytes, 5126, values.len() / per_element, type_)
        }

        fn times(&mut self, times: &[f32]) -> usize {
            self.floats(times, "SCALAR", 1)
        }

        fn rotations(&mut self, rotations: &[Quat]) -> usize {
            let flat: Vec<f32> = rotations.iter().flat_map(|q| q.to_array()).collect();
            self.floats(&flat, "VEC4", 4)
        }

        fn translations(&mut self, translations: &[Vec3]) -> usize {
            let flat: Vec<f32> = translations.iter().flat_map(|v| v.to_array()).collect();
            self.floats(&flat, "VEC3", 3)
        }

        fn matrices(&mut self, matrices: &[Mat4]) -> usize {
            self.floats(
                &matrices
                    .iter()
                    .flat_map(|m| m.to_cols_array())
                    .collect::<Vec<_>>(),
                "MAT4",
                16,
            )
        }

        /// `doc` with this data as its accessors, views and (data URI) buffer 0.
        fn into_doc(self, mut doc: Value) -> Value {
            doc["accessors"] = json!(self.accessors);
            doc["bufferViews"] = json!(self.views);
            doc["buffers"] = json!([{
                "byteLength": self.bytes.len(),
                "uri": format!("data:application/octet-stream;base64,{}", base64(&self.bytes))
            }]);
            doc
        }
    }

    /// Hips (node 0) > Spine (1) > Head (2), skinned to a mesh node (3) outside the
    /// skeleton, no inverse bind matrices.
    fn animated(data: Data, animations: Value) -> Value {
        let mut nodes = hips_spine_head();
        if let Some(list) = nodes.as_array_mut() {
            list.push(json!({"name": "Mesh", "mesh": 0, "skin": 0}));
        }
        data.into_doc(json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0, 3]}],
            "nodes": nodes,
            "meshes": [{"primitives": [{"attributes": {}}]}],
            "skins": [{"joints": [0, 1, 2]}],
            "animations": animations
        }))
    }

    fn sampler(input: usize, output: usize, interpolation: &str) -> Value {
        json!({"input": input, "output": output, "interpolation": interpolation})
    }

    fn channel(sampler: usize, node: usize, path: &str) -> Value {
        json!({"sampler": sampler, "target": {"node": node, "path": path}})
    }

    const KEY_TIMES: [f32; 3] = [0.0, 0.5, 1.0];

    fn spine_keys() -> [Quat; 3] {
        [
            Quat::IDENTITY,
            Quat::from_rotation_y(1.0),
            Quat::from_rotation_x(0.4) * Quat::from_rotation_y(2.0),
        ]
    }

    fn hips_keys() -> [Vec3; 3] {
        [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.1, 1.2, 0.0),
            Vec3::new(0.0, 0.8, -0.3),
        ]
    }

    /// "Walk": a LINEAR rotation on Spine (sampler 0: accessors 0 -> 2) and a STEP
    /// translation on Hips (sampler 1: accessors 1 -> 3), with separate but equal
    /// time accessors unless `hips_times` says otherwise.
    fn walk(spine_times: &[f32], rotations: &[Quat], hips_times: &[f32], hips: &[Vec3]) -> Value {
        let mut data = Data::default();
        let (t0, t1) = (data.times(spine_times), data.times(hips_times));
        let (r, t) = (data.rotations(rotations), data.translations(hips));
        animated(
            data,
            json!([{
                "name": "Walk",
                "samplers": [sampler(t0, r, "LINEAR"), sampler(t1, t, "STEP")],
                "channels": [channel(0, 1, "rotation"), channel(1, 0, "translation")]
            }]),
        )
    }

    fn shared_walk() -> Value {
        walk(&KEY_TIMES, &spine_keys(), &KEY_TIMES, &hips_keys())
    }

    fn only_clip(rig: &Rig) -> &Motion {
        assert_eq!(
            rig.clips.len(),
            1,
            "{:?}",
            rig.clips.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        &rig.clips[0].motion
    }

    #[test]
    fn shared_key_times_give_one_frame_per_key_with_the_key_values() {
        let rig = parse_doc(&shared_walk()).unwrap();
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        assert_eq!(rig.clips[0].name, "Walk");
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), KEY_TIMES);
        for (k, frame) in motion.frames().enumerate() {
            assert_eq!(frame.rotations[1], spine_keys()[k], "Spine at key {k}");
            assert_eq!(frame.translations[0], hips_keys()[k], "Hips at key {k}");
            // Unanimated: the node's TRS.
            assert_eq!(frame.rotations[0], Quat::IDENTITY);
            assert_eq!(frame.translations[1], Vec3::new(0.0, 0.2, 0.0));
            assert_eq!(frame.rotations[2], Quat::IDENTITY);
            assert_eq!(frame.translations[2], Vec3::new(0.0, 0.4, 0.0));
        }
    }

    #[test]
    fn keys_covered_by_the_densest_channel_are_not_resampled() {
        // Blender keeps a constant channel's first and last key only.
        let ends = [0.0, 1.0];
        let rig = parse_doc(&walk(&KEY_TIMES, &spine_keys(), &ends, &hips_keys()[..2])).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), KEY_TIMES);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        // STEP holds the first key until the last.
        assert_eq!(motion.frame(1).translations[0], hips_keys()[0]);
        assert_eq!(motion.frame(2).translations[0], hips_keys()[1]);
    }

    #[test]
    fn different_key_times_are_resampled_on_a_standard_grid() {
        let spine_times: Vec<f32> = (0..=30).map(|i| i as f32 / 30.0).collect();
        let rotations: Vec<Quat> = spine_times
            .iter()
            .map(|&t| Quat::from_rotation_y(t))
            .collect();
        let hips_times = [0.0, 0.25, 1.01];
        let mut doc = walk(&spine_times, &rotations, &hips_times, &hips_keys());
        doc["animations"][0]["name"] = Value::Null;
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(rig.clips[0].name, "animation0");
        assert_eq!(
            rig.notes,
            [
                "animations resampled on a uniform grid (their channels' key times differ): `animation0` at 30 fps"
            ]
        );
        let motion = only_clip(&rig);
        // 0..1 s at 30 fps, then the last key at 1.01 s exactly.
        assert_eq!(motion.frame_count(), 32);
        assert_eq!(motion.times().last(), Some(&1.01));
        for (i, frame) in motion.frames().enumerate().take(31) {
            let t = motion.times()[i];
            assert!((t - i as f32 / 30.0).abs() < 1e-6, "frame {i} at {t}");
            let expected = Quat::from_rotation_y(t);
            assert!(frame.rotations[1].abs_diff_eq(expected, 1e-5), "frame {i}");
            let step = if t < 0.25 { 0 } else { 1 };
            assert_eq!(frame.translations[0], hips_keys()[step], "frame {i} at {t}");
        }
        let last = motion.frame(31);
        assert_eq!(last.translations[0], hips_keys()[2]);
        assert!(last.rotations[1].abs_diff_eq(Quat::from_rotation_y(1.0), 1e-6));
    }

    #[test]
    fn a_clip_with_zero_duration_has_one_frame() {
        let doc = walk(&[0.5], &spine_keys()[1..2], &[0.5], &hips_keys()[2..]);
        let rig = parse_doc(&doc).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), [0.5]);
        assert_eq!(motion.duration(), 0.0);
        assert_eq!(motion.frame(0).translations[0], hips_keys()[2]);
    }

    #[test]
    fn unanimated_joints_hold_the_node_pose_not_the_bind_rest() {
        // Arm posed down in the nodes, T-pose in the bind pose: the rest is the bind
        // pose, but a clip that keys only the hips keeps the arm down, as players show.
        let mut data = Data::default();
        let ibm = data.matrices(&t_pose_bind_worlds().map(|m| m.inverse()));
        let times = data.times(&[0.0, 1.0]);
        let hips = data.translations(&[Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.1, 0.0)]);
        let doc = data.into_doc(json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": arm_posed_down(),
            "skins": [{"joints": [0, 1, 2], "inverseBindMatrices": ibm}],
            "animations": [{
                "name": "Bob",
                "samplers": [sampler(times, hips, "LINEAR")],
                "channels": [channel(0, 0, "translation")]
            }]
        }));
        let rig = parse_doc(&doc).unwrap();
        let arm = rig.skeleton.find("Arm").unwrap();
        assert!(
            rig.skeleton.joints()[arm]
                .rest
                .rotation
                .abs_diff_eq(Quat::IDENTITY, 1e-6)
        );
        let down = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
        let motion = only_clip(&rig);
        for frame in motion.frames() {
            assert!(frame.rotations[arm].abs_diff_eq(down, 1e-6));
            let world = rig
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            let (shoulder, hand) = (world[1].translation, world[2].translation);
            let (shoulder, hand) = (Vec3::from(shoulder), Vec3::from(hand));
            let along = (hand - shoulder).normalize();
            assert!(
                along.abs_diff_eq(-Vec3::Y, 1e-5),
                "the forearm hangs down: {along}"
            );
        }
        let hips_y: Vec<f32> = motion.frames().map(|f| f.translations[0].y).collect();
        assert_eq!(hips_y, [1.0, 1.1]);
    }

    #[test]
    fn normalized_short_and_byte_rotations_are_converted() {
        let turn = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        // (componentType, bytes of [identity, a quarter turn about Z])
        let shorts: Vec<u8> = [0i16, 0, 0, 32767, 0, 0, 23170, 23170]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes: Vec<u8> = [0i8, 0, 0, 127, 0, 0, 90, 90]
            .iter()
            .map(|&v| v as u8)
            .collect();
        let minus_one: Vec<u8> = [0i8, 0, 0, -128, 0, 0, 90, 90]
            .iter()
            .map(|&v| v as u8)
            .collect();
        for (component_type, values) in [(5122, shorts), (5120, bytes), (5120, minus_one)] {
            let mut data = Data::default();
            let times = data.times(&[0.0, 1.0]);
            let rotations = data.push(&values, component_type, 2, "VEC4");
            data.accessors[rotations]["normalized"] = json!(true);
            let doc = animated(
                data,
                json!([{"samplers": [sampler(times, rotations, "LINEAR")],
                        "channels": [channel(0, 1, "rotation")]}]),
            );
            let rig = parse_doc(&doc).unwrap();
            let motion = only_clip(&rig);
            let (first, last) = (motion.frame(0).rotations[1], motion.frame(1).rotations[1]);
            // -128 is -1 like -127; -identity is identity.
            assert!(
                first.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6,
                "{component_type}: {first}"
            );
            assert!(last.abs_diff_eq(turn, 1e-4), "{component_type}: {last}");
            assert!(first.is_normalized() && last.is_normalized());
        }
    }

    #[test]
    fn ignored_channels_are_noted_once_per_kind() {
        let mut data = Data::default();
        let times = data.times(&KEY_TIMES);
        let rotations = data.rotations(&spine_keys());
        let scales = data.translations(&[Vec3::ONE; 3]);
        let weights = data.times(&[0.0, 0.5, 1.0]);
        let sample = |output| sampler(times, output, "LINEAR");
        let doc = animated(
            data,
            json!([
                {
                    "name": "Walk",
                    "samplers": [sample(rotations), sample(scales), sample(weights)],
                    "channels": [
                        channel(0, 1, "rotation"),
                        channel(1, 1, "scale"),
                        channel(1, 2, "scale"),
                        channel(2, 3, "weights"),
                        channel(0, 3, "rotation"),
                        channel(0, 1, "rotation")
                    ]
                },
                {
                    "name": "Blink",
                    "samplers": [sample(weights)],
                    "channels": [channel(0, 3, "weights")]
                }
            ]),
        );
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(only_clip(&rig).frame_count(), 3);
        assert_eq!(
            rig.notes,
            [
                "animations[0].channels[5]: node 1 rotation is already animated by channels[0]; ignored",
                "animations that move no joint of the skeleton skipped: `Blink`",
                "animations: 2 `scale` channels ignored (joints keep their rest scale)",
                "animations: 2 `weights` channels ignored (morph targets are not read)",
                "animations: 1 channel on nodes outside the skeleton ignored (`Mesh`)",
            ]
        );
    }

    #[test]
    fn bad_animation_json_is_named() {
        let cases: [(&str, Value, &str); 14] = [
            (
                "/animations/0/channels/1/sampler",
                json!(9),
                "animations[0].channels[1]: sampler 9 does not exist",
            ),
            (
                "/animations/0/channels/0/target/node",
                json!(99),
                "animations[0].channels[0]: node 99 does not exist",
            ),
            (
                "/animations/0/samplers/0/interpolation",
                json!("SMOOTH"),
                "animations[0].samplers[0]: interpolation \"SMOOTH\" is not STEP, LINEAR or CUBICSPLINE",
            ),
            (
                "/animations/0/samplers/1/input",
                json!(7),
                "animations[0].samplers[1]: input accessor 7 does not exist",
            ),
            (
                "/accessors/0/type",
                json!("VEC3"),
                "animations[0].samplers[0]: input accessor 0 is not SCALAR of floats",
            ),
            (
                "/accessors/2/count",
                json!(4),
                "animations[0].samplers[0]: output accessor 2 reads past the end of buffer view 2",
            ),
            (
                "/accessors/1/byteOffset",
                json!(4),
                "animations[0].samplers[1]: input accessor 1 reads past the end of buffer view 1",
            ),
            (
                "/bufferViews/2/byteLength",
                json!(4000),
                "animations[0].samplers[0]: output accessor 2 reads past the end of buffer 0",
            ),
            (
                "/bufferViews/2/byteStride",
                json!(8),
                "animations[0].samplers[0]: output accessor 2: buffer view 2 has byteStride 8, less than its 16-byte elements",
            ),
            (
                "/accessors/3/count",
                json!(2),
                "animations[0].samplers[1]: output accessor 3: 2 values for 3 keys; STEP needs 3",
            ),
            (
                "/animations/0/samplers/0/interpolation",
                json!("CUBICSPLINE"),
                "animations[0].samplers[0]: output accessor 2: 3 values for 3 keys; CUBICSPLINE needs 9",
            ),
            (
                "/accessors/2/componentType",
                json!(5122),
                "animations[0].samplers[0]: output accessor 2 is not VEC4 of floats or normalized integers",
            ),
            (
                "/accessors/3/normalized",
                json!(true),
                "animations[0].samplers[1]: output accessor 3 is not VEC3 of floats",
            ),
            (
                "/accessors/0/bufferView",
                Value::Null,
                "animations[0].samplers[0]: input accessor 0 has no buffer view",
            ),
        ];
        for (pointer, value, expected) in cases {
            let mut doc = shared_walk();
            if pointer.ends_with("normalized") {
                doc["accessors"][3]["componentType"] = json!(5122);
                doc["accessors"][3]["normalized"] = value;
            } else if pointer.ends_with("byteStride") {
                doc["bufferViews"][2]["byteStride"] = value;
            } else if pointer.ends_with("byteOffset") {
                doc["accessors"][1]["byteOffset"] = value;
            } else {
                *doc.pointer_mut(pointer)
                    .unwrap_or_else(|| panic!("{pointer}")) = value;
            }
            assert_eq!(error_of(&doc), format!("{PATH}: {expected}"), "{pointer}");
        }
    }

    #[test]
    fn bad_keys_name_the_accessor_and_the_key() {
        let nan_quat = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
        let zero_quat = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let hips = hips_keys();
        let spine = spine_keys();
        let cases = [
            (
                walk(&[0.0, 0.5, 0.4], &spine, &KEY_TIMES, &hips),
                "animations[0].samplers[0]: input accessor 0: times are not increasing at key 2",
            ),
            (
                walk(&KEY_TIMES, &spine, &[0.0, f32::NAN, 1.0], &hips),
                "animations[0].samplers[1]: input accessor 1: time at key 1 is not finite",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &[spine[0], zero_quat, spine[2]],
                    &KEY_TIMES,
                    &hips,
                ),
                "animations[0].samplers[0]: output accessor 2: value 1 is a zero quaternion",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &[spine[0], spine[1], nan_quat],
                    &KEY_TIMES,
                    &hips,
                ),
                "animations[0].samplers[0]: output accessor 2: value 2 is not finite",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &spine,
                    &KEY_TIMES,
                    &[Vec3::INFINITY, hips[1], hips[2]],
                ),
                "animations[0].samplers[1]: output accessor 3: value 0 is not finite",
            ),
            (
                walk(&[], &[], &KEY_TIMES, &hips),
                "animations[0].samplers[0]: input accessor 0: no keys",
            ),
        ];
        for (doc, expected) in cases {
            assert_eq!(error_of(&doc), format!("{PATH}: {expected}"));
        }
    }

    #[test]
    fn a_grid_too_long_to_hold_is_refused() {
        let doc = walk(&KEY_TIMES, &spine_keys(), &[0.0, 5.0e6], &hips_keys()[..2]);
        let err = error_of(&doc);
        assert!(
            err.starts_with(&format!(
                "{PATH}: animations[0]: 120000002 frames from 0 s to 5000000 s, more than the"
            )),
            "{err}"
        );
    }

    #[test]
    fn flipped_bytes_in_an_animated_glb_never_panic() {
        let mut doc = shared_walk();
        let text = doc.to_string();
        let mut data = GltfDoc::from_bytes(text.as_bytes(), Path::new(PATH)).unwrap();
        let bin = data.buffer(0).unwrap().to_vec();
        doc["buffers"][0] = json!({"byteLength": bin.len()});
        let bytes = glb(&doc, &bin);
        assert_eq!(parse(&bytes, Path::new("walk.glb")).unwrap().clips.len(), 1);
        for at in 0..bytes.len() {
            for value in [0u8, b'9', b'-', 0xFF] {
                let mut flipped = bytes.clone();
                flipped[at] = value;
                let _ = parse(&flipped, Path::new("flipped.glb"));
            }
        }
    }

    // --- real files -------------------------------------------------------------

    use crate::assets::assets_dir as assets;

    fn load_asset(name: &str) -> Option<Rig> {
        let path = assets()?.join(name);
        Some(load(&path).unwrap_or_else(|e| panic!("{e}")))
    }

    /// Angle of the segment from `a` to `b` below the horizontal, in degrees.
    fn droop_deg(rig: &Rig, a: &str, b: &str) -> f32 {
        let d = position(rig, b) - position(rig, a);
        (-d.y).atan2(Vec3::new(d.x, 0.0, d.z).length()).to_degrees()
    }

    #[test]
    fn every_real_gltf_and_vrm_file_loads() {
        let Some(dir) = assets() else { return };
        let mut count = 0;
        for sub in ["vrm", "gltf"] {
            let mut files: Vec<_> = std::fs::read_dir(dir.join(sub))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            for file in files {
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
        assert_eq!(count, 10);
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
            ["VRM 0.x model: faces -Z; the rest correction turns it to +Z"]
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

    /// World position of a node in the file's own node TRS (no bind pose).
    fn node_rest_position(bytes: &[u8], name: &str) -> Vec3 {
        let doc = Document {
            doc: GltfDoc::from_bytes(bytes, Path::new("x.glb")).unwrap(),
        };
        let hierarchy = doc.hierarchy().unwrap();
        let mut node = doc
            .doc
            .root
            .nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name));
        let mut world = DAffine3::IDENTITY;
        while let Some(n) = node {
            world = to_affine(&doc.node_transform(n).unwrap()) * world;
            node = hierarchy.parent[n];
        }
        world.translation.as_vec3()
    }

    #[test]
    fn robot_expressive_takes_its_t_pose_rest_from_the_bind_matrices() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/RobotExpressive.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        assert_eq!(
            rig.notes,
            [
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)",
                "animations: 42 `weights` channels ignored (morph targets are not read)",
            ]
        );
        assert_eq!(
            rig.skeleton.len(),
            46,
            "43 joints, RobotArmature, RootNode, Root_Scene"
        );
        assert!(rig.bone_map.is_none());
        // Still the scene's frame: +Y up, metres, hips at 1.34 m.
        assert!((position(&rig, "Hips").y - 1.34).abs() < 0.02);
        assert!(position(&rig, "Head").y > position(&rig, "Hips").y + 1.0);
        for (upper, lower, palm) in [
            ("UpperArmL", "LowerArmL", "Palm2L"),
            ("UpperArmR", "LowerArmR", "Palm2R"),
        ] {
            for (a, b) in [(upper, lower), (lower, palm)] {
                let d = position(&rig, b) - position(&rig, a);
                assert!(d.x.abs() > 3.0 * d.y.abs().max(d.z.abs()), "{a}->{b}: {d}");
            }
            // In the nodes' own pose the forearms hang down.
            let d = node_rest_position(&bytes, palm) - node_rest_position(&bytes, lower);
            assert!(
                -d.y > 3.0 * d.x.abs().max(d.z.abs()),
                "{lower} node pose: {d}"
            );
        }
        let foot = &rig.skeleton.joints()[rig.skeleton.find("FootL").unwrap()];
        assert!(foot.end.is_some(), "FootL_end");
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
    fn rest_a_pose_files_rest_in_a_pose_and_t_pose() {
        for (file, droop) in [
            ("vrm/rest_a_pose_t_position_rest_vrm0.vrm", 45.0),
            ("vrm/rest_a_pose_t_position_pose_vrm0.vrm", 0.0),
        ] {
            let Some(rig) = load_asset(file) else { return };
            // Node rest and bind pose agree in both files: no bind-pose note.
            assert_eq!(rig.notes.len(), 1, "{file}: {:?}", rig.notes);
            for (upper, hand) in [("upper_arm.L", "hand.L"), ("upper_arm.R", "hand.R")] {
                let got = droop_deg(&rig, upper, hand);
                assert!((got - droop).abs() < 1.5, "{file} {upper}: {got}");
            }
        }
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
        assert_eq!(
            rig.notes,
            ["animations: 360 `scale` channels ignored (joints keep their rest scale)"]
        );
    }

    /// Largest angle between a joint's rotation in any frame and in the first, degrees.
    fn swing_deg(motion: &Motion, joint: usize) -> f32 {
        let first = motion.frame(0).rotations[joint];
        motion
            .frames()
            .map(|f| f.rotations[joint].angle_between(first).to_degrees())
            .fold(0.0, f32::max)
    }

    /// For every rotation channel of `animation`: its node's name and its sampler's
    /// key times and values, as the accessors hold them.
    fn raw_rotation_keys(bytes: &[u8], animation: usize) -> Vec<(String, Vec<f32>, Vec<Quat>)> {
        let mut doc = Document {
            doc: GltfDoc::from_bytes(bytes, Path::new("x.glb")).unwrap(),
        };
        let anim = doc.doc.root.animations[animation].clone();
        let mut out = Vec::new();
        for channel in &anim.channels {
            if channel.target.path != Checked::Valid(Property::Rotation) {
                continue;
            }
            let sampler = &anim.samplers[channel.sampler.value()];
            let times = doc
                .animation_accessor("", "", sampler.input.value(), TIMES)
                .unwrap();
            let values = doc
                .animation_accessor("", "", sampler.output.value(), ROTATIONS)
                .unwrap();
            let values = values.chunks_exact(4).map(Quat::from_slice);
            let name = doc.doc.root.nodes[channel.target.node.value()].name.clone();
            out.push((name.unwrap_or_default(), times, values.collect()));
        }
        out
    }

    /// Every frame at a key time of a rotation channel holds that key's value, bit
    /// for bit.
    fn assert_key_values_exact(rig: &Rig, bytes: &[u8], animation: usize, clip: usize) {
        let motion = &rig.clips[clip].motion;
        let mut checked = 0;
        for (name, times, values) in raw_rotation_keys(bytes, animation) {
            let joint = rig.skeleton.find(&name).unwrap_or_else(|| panic!("{name}"));
            for (i, &t) in motion.times().iter().enumerate() {
                if let Ok(k) = times.binary_search_by(|x| x.total_cmp(&t)) {
                    assert_eq!(motion.frame(i).rotations[joint], values[k], "{name} at {t}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn cesium_man_walks_for_two_seconds_and_moves_its_legs() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/CesiumMan.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].name, "Anim_0");
        let motion = &rig.clips[0].motion;
        // 49 LINEAR keys over 2 s (24 fps); constant channels keep 2 STEP keys.
        assert_eq!(motion.frame_count(), 49);
        assert!(
            (motion.duration() - 2.0).abs() < 1e-4,
            "{}",
            motion.duration()
        );
        assert!((motion.mean_rate() - 24.0).abs() < 0.01);
        for thigh in ["leg_joint_L_1", "leg_joint_R_1"] {
            let joint = rig.skeleton.find(thigh).unwrap();
            let swing = swing_deg(motion, joint);
            assert!(swing > 20.0, "{thigh} swings {swing}°");
        }
        assert_key_values_exact(&rig, &bytes, 0, 0);
    }

    #[test]
    fn med_general_has_15_clips_keyed_at_30_fps() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/Med_General.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        assert_eq!(rig.clips.len(), 15);
        let idle = rig.clip(Some("Rig_Medium|Idle_A")).expect("Idle_A");
        assert_eq!(idle.motion.frame_count(), 33);
        assert!((idle.motion.times()[0] - 1.0 / 30.0).abs() < 1e-6);
        assert!((idle.motion.duration() - 32.0 / 30.0).abs() < 1e-4);
        for clip in &rig.clips {
            let rate = clip.motion.mean_rate();
            assert!((rate - 30.0).abs() < 0.01, "{}: {rate} fps", clip.name);
        }
        let upper_leg = rig.skeleton.find("upperleg.l").unwrap();
        let death = rig.clip(Some("Rig_Medium|Death_A")).expect("Death_A");
        assert!(swing_deg(&death.motion, upper_leg) > 10.0);
        let t_pose = rig.clip(Some("Rig_Medium|T-Pose")).expect("T-Pose");
        assert_eq!(t_pose.motion.frame_count(), 2);
        assert_key_values_exact(&rig, &bytes, 7, 7);
    }

    #[test]
    fn robot_expressive_has_14_named_clips_and_keeps_unkeyed_arms_down() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/RobotExpressive.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Dance", "Death", "Idle", "Jump", "No", "Punch", "Running", "Sitting", "Standing",
                "ThumbsUp", "Walking", "WalkJump", "Wave", "Yes"
            ]
        );
        let walking = &rig.clip(Some("Walking")).unwrap().motion;
        assert_eq!(walking.frame_count(), 24);
        assert!((walking.duration() - 23.0 / 24.0).abs() < 1e-4);
        let leg = rig.skeleton.find("UpperLegL").unwrap();
        assert!(swing_deg(walking, leg) > 20.0);
        assert_key_values_exact(&rig, &bytes, 10, 10);
        // Idle keys no arm: the arms hang as the nodes hold them, not in the T-pose
        // of the rest (from the bind matrices).
        let idle = &rig.clip(Some("Idle")).unwrap().motion;
        let (lower, palm) = (
            rig.skeleton.find("LowerArmL").unwrap(),
            rig.skeleton.find("Palm2L").unwrap(),
        );
        for frame in idle.frames() {
            let world = rig
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            let d = Vec3::from(world[palm].translation - world[lower].translation);
            assert!(-d.y > 3.0 * d.x.abs().max(d.z.abs()), "forearm {d}");
        }
    }
}
