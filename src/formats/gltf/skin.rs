//! Skins and the bind pose: every skin's joints and inverse bind matrices, read and
//! checked, and the rest transforms they give.
//!
//! Rest transforms are the nodes' TRS, unless the inverse bind matrices say the
//! nodes are posed away from the bind pose (a file saved mid-animation, arms down
//! while the mesh was bound in T-pose): then every skin joint takes its rest from the
//! bind pose. Bind worlds are `inverse(IBM)`, carried into the scene by the transform
//! that puts the skin's root joint where its node is (exporters write IBMs relative to
//! the mesh's own frame, often Z-up centimetres), unless that root joint is itself
//! posed and the IBMs are already in the scene's frame (`stands_in_the_scene_frame`).
//! What is carried is a change of frame only (units and axes): the turn the root
//! joint's own pose adds is left out (`bind_frame`), so a bind pose under an armature
//! node turned to Y-up does not lean and turn with the hips of a saved frame.
//! A root joint whose identity matrix disagrees in scale with its bound joints'
//! (Sketchfab's `GLTF_created_0_rootJoint`, binding no vertex) does not carry: the
//! first bound joint does, the first whose matrix is no identity in any scale
//! (`bound_anchor_for_unbound_root`). A joint below a bound one
//! whose matrix puts it at the mesh origin (an identity, scaled or turned, or the
//! uneven scale every matrix of its skin carries, alone: it binds no vertex), or where
//! the skin's root joint binds, hangs from its parent as its node does
//! (`drop_unbound_identities`).
//! Several skins over one armature (a mesh per body part) are carried into one frame
//! through the joints they share, so the armature gets one rest whichever skin binds
//! which joint.

use std::collections::{HashMap, HashSet};

use glam::{DAffine3, DMat4, DVec3};
use gltf::json::accessor::Type;

use super::bind_frame::{frame_axes, pose_free_carry};
use super::hierarchy::{decompose, to_affine};
use super::{AccessorSpec, Document, GltfError};
use crate::skeleton::Transform;

/// A bind world counts as posed away from the node world beyond this angle.
const POSED_ANGLE_DEG: f64 = 0.01;

/// ... or beyond this fraction of the model's size in translation.
const POSED_DISTANCE_FRACTION: f64 = 1e-4;

/// Carries of one skin's bind pose through two of its joints disagree in scale
/// beyond this fraction (an unscaled pose keeps them equal).
const CARRY_SCALE_MISMATCH: f64 = 0.01;

/// What inverse bind matrices must be: MAT4 of floats.
const MATRICES: AccessorSpec = AccessorSpec::floats(Type::Mat4);

/// One skin: its joints and, when the file has them, their inverse bind matrices.
pub(super) struct Skin {
    pub(super) joints: Vec<usize>,
    inverse_binds: Option<Vec<DMat4>>,
}

impl Document<'_> {
    /// Every skin's joints (checked) and inverse bind matrices (read and checked).
    pub(super) fn read_skins(&mut self) -> Result<Vec<Skin>, GltfError> {
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

    /// Empties the skins no mesh node is bound to, when another skin is and they
    /// hold joints it does not: Blender
    /// writes a skin for every armature object, and copies of the character's
    /// armature kept one per action (each resting in its action's pose) then sit
    /// beside the one the mesh follows. Their joints are no skeleton joints; their
    /// nodes stay copies that clips may key (`armature_copy`). A file whose skins
    /// no mesh uses (clips only) keeps them all. Notes the skins emptied.
    pub(super) fn drop_meshless_skins(&self, skins: &mut [Skin], notes: &mut Vec<String>) {
        let mut bound = vec![false; skins.len()];
        for node in &self.doc.root.nodes {
            if let (Some(skin), Some(_)) = (node.skin, node.mesh)
                && let Some(slot) = bound.get_mut(skin.value())
            {
                *slot = true;
            }
        }
        if !bound.contains(&true) {
            return;
        }
        let bound_joints: HashSet<usize> = (0..skins.len())
            .filter(|&s| bound[s])
            .flat_map(|s| skins[s].joints.iter().copied())
            .collect();
        // A meshless skin over the bound skins' joints (a subset) changes nothing.
        let elsewhere: Vec<usize> = (0..skins.len())
            .filter(|&s| !bound[s] && skins[s].joints.iter().any(|j| !bound_joints.contains(j)))
            .collect();
        if elsewhere.is_empty() {
            return;
        }
        for &s in &elsewhere {
            skins[s].joints.clear();
            skins[s].inverse_binds = None;
        }
        let dropped: Vec<String> = elsewhere.iter().map(usize::to_string).collect();
        notes.push(format!(
            "skin(s) {} bound to no mesh (another skin is): their joints are not the skeleton's",
            dropped.join(", ")
        ));
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
            // No buffer view: all zeros (valid glTF), which bind no joint.
            return Ok(vec![DMat4::ZERO; joints.len()]);
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

    /// Bind worlds of the joints whose rest comes from the skins' inverse bind
    /// matrices, by node: every skin joint's when any of them is posed away from
    /// its node, none otherwise. Notes the skins used.
    ///
    /// The skins are put into one frame, so that the whole armature gets one
    /// consistent rest: the skin with the most joints first, carried to its root
    /// joint's node; every other skin then carried to a joint an earlier skin
    /// already placed (its first in skeleton order), or, sharing none, to its own
    /// root joint where the rest placed so far puts it. A joint two skins bind keeps
    /// the first one's bind world.
    pub(super) fn bind_worlds(
        &self,
        skins: &[Skin],
        skeleton: &SkeletonNodes,
        node_world: &[DAffine3],
        notes: &mut Vec<String>,
    ) -> Result<BindWorlds, GltfError> {
        let position = skeleton.position;
        let size = model_size(position, node_world, skins);
        let mut unplaced = Vec::new();
        let mut by_size: Vec<usize> = (0..skins.len()).collect();
        by_size.sort_by_key(|&s| std::cmp::Reverse(skins[s].joints.len()));
        let mut placed: HashMap<usize, DAffine3> = HashMap::new();
        let mut used = Vec::new();
        for s in by_size {
            let skin = &skins[s];
            let Some(inverse_binds) = &skin.inverse_binds else {
                continue;
            };
            let raw = match skin_binds(skin, inverse_binds) {
                Ok(raw) => raw,
                Err((i, node)) => {
                    notes.push(format!(
                        "skin {s}: inverse bind matrix {i} (node {node}) is not invertible: its joints rest as the nodes are posed"
                    ));
                    continue;
                }
            };
            if binds_collapse(&raw, position, node_world) {
                notes.push(format!(
                    "skin {s}: its inverse bind matrices put its {} joints at one point (identity matrices): its joints rest as the nodes are posed",
                    raw.len()
                ));
                continue;
            }
            let raw = drop_unbound_identities(raw, skeleton);
            if !raw.dropped.is_empty() {
                let identities = if raw.at_root > 0 {
                    "inverse bind matrices that put them where the skin's root joint binds"
                } else if raw.turned > 0 {
                    "inverse bind matrices that turn them at the mesh origin"
                } else if raw.scaled > 0 {
                    "identity inverse bind matrices in a uniform scale"
                } else if raw.skin_scaled > 0 {
                    "identity inverse bind matrices in the skin's own uneven scale"
                } else {
                    "identity inverse bind matrices"
                };
                notes.push(format!(
                    "skin {s}: {} joints below bound ones have {identities} (joints that bind no vertex): they rest where their nodes hang from their parents",
                    raw.dropped.len()
                ));
            }
            let dropped = raw.dropped;
            let raw = raw.kept;
            // Anchor: the first joint (skeleton order) an earlier skin placed, else
            // the first joint, placed by the rest so far.
            let in_order = |node: &usize| position[*node];
            let anchor = raw
                .iter()
                .filter(|(node, ..)| placed.contains_key(node))
                .min_by_key(|(node, ..)| in_order(node))
                .or_else(|| raw.iter().min_by_key(|(node, ..)| in_order(node)));
            let Some(&(mut anchor, mut anchor_ibm, _)) = anchor else {
                continue;
            };
            let Some(mut anchor_world) = placed
                .get(&anchor)
                .copied()
                .or_else(|| skeleton.world_of(anchor, &placed))
            else {
                continue;
            };
            if placed.is_empty()
                && let Some((node, ibm, world)) =
                    bound_anchor_for_unbound_root(skeleton, &raw, anchor_world * anchor_ibm)
            {
                notes.push(format!(
                    "skin {s}'s root joint has an identity inverse bind matrix in another scale or \
                     on other axes than its bound joints: the bind pose is carried into the scene \
                     through its first bound joint"
                ));
                (anchor, anchor_ibm, anchor_world) = (node, ibm, world);
            }
            let mut align = anchor_world * anchor_ibm;
            if placed.is_empty()
                && stands_in_the_scene_frame(skeleton, node_world, anchor, anchor_ibm, align, &raw)
            {
                align = DAffine3::IDENTITY;
                notes.push(format!(
                    "skin {s}'s root joint is posed too: its bind pose is kept in the scene's frame"
                ));
            } else if placed.is_empty() {
                let anchor_bind = anchor_ibm.inverse().translation;
                if let Some((frame, turn)) = pose_free_carry(align, anchor_bind, POSED_ANGLE_DEG) {
                    align = frame;
                    notes.push(format!(
                        "skin {s}'s root joint is posed {turn:.2}° off its bind pose: the bind pose is \
                         carried into the scene without that turn"
                    ));
                }
            }
            let at_origin = nodes_at_the_origin(&dropped, align, skeleton, node_world, size);
            if !at_origin.is_empty() {
                notes.push(format!(
                    "skin {s}: {} of those sit at the mesh origin in their nodes too (a re-export \
                     wrote the matrix into the node): they rest on their parents",
                    at_origin.len()
                ));
                unplaced.extend(at_origin);
            }
            for (node, _, bind) in raw {
                placed.entry(node).or_insert(align * bind);
            }
            used.push(s);
        }
        let posed = placed.iter().any(|(node, bind)| {
            position[*node].is_some_and(|k| is_posed_away(node_world[k], *bind, size))
        });
        if !posed {
            return Ok(BindWorlds {
                placed: HashMap::new(),
                unplaced,
            });
        }
        used.sort_unstable();
        let listed: Vec<String> = used.iter().map(ToString::to_string).collect();
        notes.push(match listed.as_slice() {
            [one] => format!(
                "rest pose taken from skin {one}'s inverse bind matrices (the nodes are posed differently)"
            ),
            [many @ .., last] => format!(
                "rest pose taken from the inverse bind matrices of skins {} and {last}, in one frame (the nodes are posed differently)",
                many.join(", ")
            ),
            [] => "rest pose taken from the inverse bind matrices".to_owned(),
        });
        Ok(BindWorlds { placed, unplaced })
    }
}

/// What the skins say of the rest: the bind worlds of the joints whose rest comes
/// from the inverse bind matrices, by node (none when no joint is posed away from
/// its bind), and the joints placed nowhere (`nodes_at_the_origin`), which rest on
/// their parents (`rest_on_parents`).
pub(super) struct BindWorlds {
    pub(super) placed: HashMap<usize, DAffine3>,
    pub(super) unplaced: Vec<usize>,
}

/// The joints among `dropped` (matrices at the mesh origin, below bound joints) whose
/// binds and nodes both sit at the mesh origin carried into the scene by `align`, within
/// `POSED_DISTANCE_FRACTION` of the model's size, while their parents' nodes do not.
/// Such a joint is placed nowhere: its matrix and its node both hold the placeholder.
/// Blender re-exporting a Sketchfab conversion writes the end nubs' identity matrices
/// into their nodes, so every `_end` leaf hangs at the origin however far its parent
/// is (the head's 1.6 m up from the floor, a fingertip's 0.9 m out), and the head and
/// hands end on the floor. A joint under a parent at the origin (Unreal's
/// `ik_foot_root` under `root`) is where it belongs.
fn nodes_at_the_origin(
    dropped: &[JointBind],
    align: DAffine3,
    skeleton: &SkeletonNodes,
    node_world: &[DAffine3],
    size: f64,
) -> Vec<usize> {
    let near = POSED_DISTANCE_FRACTION * size;
    dropped
        .iter()
        .filter(|(node, _, bind)| {
            // The mesh origin in the scene, where a placeholder bind puts the joint (a
            // bind elsewhere is a place, however its matrix is written: gltfpack folds
            // its dequantization into the matrices, and nodes posed as bound sit there).
            let origin = align.translation;
            let at_origin = |k: usize| node_world[k].translation.distance(origin) <= near;
            (align * *bind).translation.distance(origin) <= near
                && skeleton.position[*node].is_some_and(|k| {
                    at_origin(k) && skeleton.parents[k].is_some_and(|p| !at_origin(p))
                })
        })
        .map(|&(node, ..)| node)
        .collect()
}

/// Puts each joint of `unplaced` (nodes) on its parent: its rest offset becomes zero,
/// so it adds no length and points nowhere, as a joint with no place of its own.
pub(super) fn rest_on_parents(
    rest: &mut [Transform],
    position: &[Option<usize>],
    unplaced: &[usize],
) {
    for k in unplaced.iter().filter_map(|&node| position[node]) {
        rest[k].translation = glam::Vec3::ZERO;
    }
}

/// A joint's node, its inverse bind matrix and that matrix's inverse (its bind world).
type JointBind = (usize, DAffine3, DAffine3);

/// A skin's joints (each once) with their inverse bind matrices and the inverses of
/// those, `inverse(IBM)`: bind worlds in the skin's own frame. The first matrix
/// that cannot be inverted, as (index, node), when one cannot.
fn skin_binds(skin: &Skin, inverse_binds: &[DMat4]) -> Result<Vec<JointBind>, (usize, usize)> {
    let mut raw = Vec::with_capacity(skin.joints.len());
    let mut seen = HashSet::new();
    for (i, (&node, ibm)) in skin.joints.iter().zip(inverse_binds).enumerate() {
        if !seen.insert(node) {
            continue;
        }
        let affine = DAffine3::from_mat4(*ibm);
        let bind = invert(affine).ok_or((i, node))?;
        raw.push((node, affine, bind));
    }
    Ok(raw)
}

/// The skeleton's nodes: each node's place in the skeleton order (`None` for
/// nodes outside it), the node at each place, each place's parent place and its
/// node TRS.
pub(super) struct SkeletonNodes<'a> {
    pub(super) position: &'a [Option<usize>],
    pub(super) order: &'a [usize],
    pub(super) parents: &'a [Option<usize>],
    pub(super) node_rest: &'a [Transform],
}

impl SkeletonNodes<'_> {
    /// Where the rest placed so far puts `node` (not placed itself): its nearest
    /// placed ancestor's bind world times the node transforms below it; the node
    /// world when no ancestor is placed.
    fn world_of(&self, node: usize, placed: &HashMap<usize, DAffine3>) -> Option<DAffine3> {
        let k = self.position.get(node).copied().flatten()?;
        // Walk up to the first placed ancestor (or the root), then back down.
        let mut chain = vec![k];
        let mut above = DAffine3::IDENTITY;
        let mut at = self.parents[k];
        while let Some(p) = at {
            if let Some(world) = placed.get(&self.order[p]) {
                above = *world;
                break;
            }
            chain.push(p);
            at = self.parents[p];
        }
        Some(
            chain
                .iter()
                .rev()
                .fold(above, |world, &j| world * to_affine(&self.node_rest[j])),
        )
    }
}

/// A carry's uniform scale: the cube root of its determinant's size.
fn carry_scale(carry: DAffine3) -> f64 {
    carry.matrix3.determinant().abs().cbrt()
}

/// The first bound joint (skeleton order, an inverse bind matrix that is no identity
/// in any scale) with its matrix and node world, when the skin's root joint has the
/// identity and carrying the bind pose through it (`root_carry`) scales the skin
/// otherwise than carrying it through that bound joint, by more than
/// `CARRY_SCALE_MISMATCH`, or turns it onto other axes while the bound joint's carry
/// is a change of frame and nothing else (its node not posed off its bind at all).
/// Sketchfab's FBX conversions write the identity for `GLTF_created_0_rootJoint` or
/// `_rootJoint`, which binds no vertex and hangs under the armature node with that
/// node's scale (0.01) or its quarter turn (Z-up to Y-up): through it the whole bind
/// pose would shrink to a point, or lie on its back. A joint below it whose matrix is
/// the identity scaled (the armature's inverse scale of 100 on a 3ds Max biped's
/// `Bip01`) binds no vertex either, and carried through it the bind pose would grow
/// a hundredfold. A bound joint's matrix pairs with its node; an unscaled pose cannot
/// change a carry's scale, and a posed joint's carry is off the axes, so the two agree
/// whenever the root's identity is a true bind.
fn bound_anchor_for_unbound_root(
    skeleton: &SkeletonNodes,
    raw: &[JointBind],
    root_carry: DAffine3,
) -> Option<(usize, DAffine3, DAffine3)> {
    let is_identity = |ibm: &DAffine3| ibm.abs_diff_eq(DAffine3::IDENTITY, 1e-6);
    let tolerance = origin_tolerance(raw);
    let binds_nothing = |ibm: &DAffine3| {
        matches!(
            at_origin(ibm, tolerance),
            Some(AtOrigin::Identity | AtOrigin::Scaled)
        )
    };
    let in_order = |node: &usize| skeleton.position[*node];
    let root = raw.iter().min_by_key(|(node, ..)| in_order(node))?;
    if !is_identity(&root.1) {
        return None;
    }
    let &(node, ibm, _) = raw
        .iter()
        .filter(|(node, ibm, _)| !binds_nothing(ibm) && in_order(node).is_some())
        .min_by_key(|(node, ..)| in_order(node))?;
    let world = skeleton.world_of(node, &HashMap::new())?;
    let (root_scale, bound_scale) = (carry_scale(root_carry), carry_scale(world * ibm));
    let mismatch = (root_scale / bound_scale - 1.0).abs();
    let scaled_otherwise =
        bound_scale > 0.0 && mismatch.is_finite() && mismatch > CARRY_SCALE_MISMATCH;
    let turned_otherwise = frame_axes(world * ibm, POSED_ANGLE_DEG)
        .is_some_and(|bound| frame_axes(root_carry, 45.0).is_some_and(|root| root != bound));
    (scaled_otherwise || turned_otherwise).then_some((node, ibm, world))
}

/// Heuristic: the inverse bind matrices are already in the scene's frame, and the
/// skin's root joint (`anchor`) is itself posed (a file saved mid-animation with the
/// hips moved), so carrying the bind pose onto the root's node (`carried`) would tip
/// the whole body over. Taken so when the root joint's parent frame is the scene's
/// (identity), its inverse bind matrix has no scale (a mesh frame in other units is
/// carried), and the bind pose stands taller along +Y (glTF's up) as it is than
/// carried: its joints' vertical extent a larger share of their whole extent, by 0.05.
fn stands_in_the_scene_frame(
    skeleton: &SkeletonNodes,
    node_world: &[DAffine3],
    anchor: usize,
    anchor_ibm: DAffine3,
    carried: DAffine3,
    raw: &[JointBind],
) -> bool {
    let parent_world = skeleton
        .position
        .get(anchor)
        .copied()
        .flatten()
        .and_then(|k| skeleton.parents[k])
        .map_or(DAffine3::IDENTITY, |p| node_world[p]);
    let identity = |m: DAffine3| m.abs_diff_eq(DAffine3::IDENTITY, 1e-6);
    let unscaled = [
        anchor_ibm.matrix3.x_axis,
        anchor_ibm.matrix3.y_axis,
        anchor_ibm.matrix3.z_axis,
    ]
    .iter()
    .all(|axis| (axis.length() - 1.0).abs() < 1e-3);
    if !identity(parent_world) || !unscaled || identity(carried) {
        return false;
    }
    let upright = |align: DAffine3| {
        let mut low = DVec3::splat(f64::INFINITY);
        let mut high = DVec3::splat(f64::NEG_INFINITY);
        for (_, _, bind) in raw {
            let p = (align * *bind).translation;
            low = low.min(p);
            high = high.max(p);
        }
        let extent = high - low;
        let size = extent.length();
        if size > 0.0 { extent.y / size } else { 0.0 }
    };
    upright(DAffine3::IDENTITY) > upright(carried) + 0.05
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

/// Whether a skin's bind pose puts all its joints at one point (within
/// `POSED_DISTANCE_FRACTION` of their spread in the nodes) while the nodes hold them
/// apart: identity inverse bind matrices, as generators write when they bind the mesh
/// in each joint's own frame. That is no skeleton's rest (every bone would be zero
/// long), so the nodes keep theirs.
fn binds_collapse(raw: &[JointBind], position: &[Option<usize>], node_world: &[DAffine3]) -> bool {
    let extent = |points: &mut dyn Iterator<Item = DVec3>| {
        let (low, high) = points.fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(low, high), p| (low.min(p), high.max(p)),
        );
        (high - low).length()
    };
    if raw.len() < 2 {
        return false;
    }
    let bind = extent(&mut raw.iter().map(|(_, _, bind)| bind.translation));
    let nodes = extent(
        &mut raw
            .iter()
            .filter_map(|(node, ..)| position[*node])
            .map(|k| node_world[k].translation),
    );
    nodes.is_finite() && nodes > 0.0 && bind <= POSED_DISTANCE_FRACTION * nodes
}

/// A skin's joints after `drop_unbound_identities`: those kept, how many went, and
/// how many of those had a scaled identity or a turn.
struct KeptBinds {
    kept: Vec<JointBind>,
    dropped: Vec<JointBind>,
    scaled: usize,
    turned: usize,
    /// Of those, how many were the skin's own uneven scale (`skin_scale`).
    skin_scaled: usize,
    /// Of those, how many were put where the skin's root joint binds.
    at_root: usize,
}

/// How an inverse bind matrix that puts its joint at the mesh frame's origin does so.
#[derive(Clone, Copy, PartialEq)]
enum AtOrigin {
    Identity,
    Scaled,
    Turned,
    /// The scale every bound joint's matrix carries, uneven (`skin_scale`), alone.
    SkinScaled,
}

/// How far an inverse bind matrix's 3×3 part may be from a turn, the identity or a
/// uniform scale, per element, and still be one. The matrices are floats, and an
/// exporter's products leave units of 10⁻⁶ to 10⁻⁵ on them: Sketchfab's conversions of
/// FBX files write an unbound neck's identity as the diagonal 1.0000015, 0.9999982,
/// 1.0000017, and Blender re-exporting such a file writes an end nub's quarter turn
/// scaled by 100 with 2.3·10⁻⁵ of it off the axes. A shear a rig means is far larger.
const MATRIX_TOLERANCE: f64 = 1e-4;

/// Whether an inverse bind matrix puts its joint at the mesh frame's origin with no
/// shear: a uniform positive scale and a turn, and no offset beyond `tolerance` (the
/// identity itself included), and which kind it is, each within `MATRIX_TOLERANCE`.
fn at_origin(ibm: &DAffine3, tolerance: f64) -> Option<AtOrigin> {
    let m = ibm.matrix3;
    let s = m.determinant().cbrt();
    if !s.is_finite() || s <= 0.0 || ibm.translation.length() > tolerance * s.max(1.0) {
        return None;
    }
    if !uniform_turn(m) {
        return None;
    }
    let turn = m * (1.0 / s);
    Some(
        if !turn.abs_diff_eq(glam::DMat3::IDENTITY, MATRIX_TOLERANCE) {
            AtOrigin::Turned
        } else if (s - 1.0).abs() > MATRIX_TOLERANCE {
            AtOrigin::Scaled
        } else {
            AtOrigin::Identity
        },
    )
}

/// Whether a matrix's 3×3 part is a uniform positive scale times a turn (no shear,
/// no mirror), within `MATRIX_TOLERANCE` per element.
fn uniform_turn(m: glam::DMat3) -> bool {
    let s = m.determinant().cbrt();
    if !s.is_finite() || s <= 0.0 {
        return false;
    }
    let turn = m * (1.0 / s);
    (turn.transpose() * turn).abs_diff_eq(glam::DMat3::IDENTITY, MATRIX_TOLERANCE)
}

/// Drops the joints whose inverse bind matrix puts them at the mesh frame's origin
/// (the identity, in any scale and on any axes) below a joint of the same skin whose
/// does not. Exporters write the identity for a joint that binds no vertex
/// (Sketchfab's conversions of FBX files, for fingers and twist joints), the identity
/// scaled by the armature node's inverse scale (100 under a centimetre armature: FBX
/// end nubs and IK targets), or a turn with no offset (the armature's Z-up axes, or
/// the joint's own, for end nubs); any of these would put the joint at the mesh
/// frame's origin however far its parent is, and its chain would end on the floor;
/// such a joint rests where its node hangs from its parent's bind pose; so does the
/// identity in the uneven scale a mesh frame puts into every matrix of its skin
/// (`skin_scale`: Sketchfab's conversions under an unevenly scaled root joint). So
/// does one whose matrix, a uniform scale and a turn with no shear, puts it where the
/// skin's root joint binds (Sketchfab's conversions of Mixamo rigs copy the root's matrix,
/// scaled, for the joints that bind no vertex: a glove's fingers would all sit at the
/// hips). A turned matrix above it still counts as bound (a root bone may rest at the
/// origin). "At" allows `POSED_DISTANCE_FRACTION` of the skin's bind extent, as the
/// matrices are written in floats. Matrices at the origin or the root's place from
/// the root down (root joints at the mesh's origin, hips on a root node) stay:
/// nothing bound is above them.
fn drop_unbound_identities(raw: Vec<JointBind>, skeleton: &SkeletonNodes) -> KeptBinds {
    let tolerance = origin_tolerance(&raw);
    // A mesh written in an unevenly scaled frame puts that scale into every matrix,
    // the placeholders' too: they are the identity once it is taken out.
    let skin_scale = skin_scale(&raw);
    let kind = |ibm: &DAffine3| {
        at_origin(ibm, tolerance).or_else(|| {
            let unscaled = DAffine3 {
                matrix3: ibm.matrix3 * glam::DMat3::from_diagonal(skin_scale?.recip()),
                translation: ibm.translation,
            };
            match at_origin(&unscaled, tolerance)? {
                AtOrigin::Identity | AtOrigin::Scaled => Some(AtOrigin::SkinScaled),
                AtOrigin::Turned | AtOrigin::SkinScaled => None,
            }
        })
    };
    // Where the skin's root joint binds: a placeholder matrix may copy the root's
    // place in another scale (Sketchfab's conversions of Mixamo rigs).
    let in_order = |node: &usize| skeleton.position[*node];
    let root_place = raw
        .iter()
        .min_by_key(|(node, ..)| in_order(node))
        .map(|(_, _, bind)| bind.translation);
    let at_root =
        |bind: &DAffine3| root_place.is_some_and(|at| bind.translation.distance(at) <= tolerance);
    // A turn at the origin may be a true bind (a root bone at the origin): it counts
    // as bound for the joints below it. A joint at the root's place is no bound one
    // for the placeholders copying that place.
    let bound: HashSet<usize> = raw
        .iter()
        .filter(|(_, ibm, _)| kind(ibm).is_none_or(|k| k == AtOrigin::Turned))
        .map(|&(node, ..)| node)
        .collect();
    let apart: HashSet<usize> = raw
        .iter()
        .filter(|(node, _, bind)| bound.contains(node) && !at_root(bind))
        .map(|&(node, ..)| node)
        .collect();
    let below = |set: &HashSet<usize>, node: usize| {
        let mut at = skeleton.position[node].and_then(|k| skeleton.parents[k]);
        while let Some(p) = at {
            if set.contains(&skeleton.order[p]) {
                return true;
            }
            at = skeleton.parents[p];
        }
        false
    };
    let (mut scaled, mut turned, mut skin_scaled, mut at_root_place) = (0, 0, 0, 0);
    let (kept, dropped): (Vec<_>, Vec<_>) = raw.into_iter().partition(|&(node, ibm, bind)| {
        match kind(&ibm) {
            Some(_) if !below(&bound, node) => return true,
            Some(AtOrigin::Scaled) => scaled += 1,
            Some(AtOrigin::Turned) => turned += 1,
            Some(AtOrigin::SkinScaled) => skin_scaled += 1,
            Some(AtOrigin::Identity) => {}
            None if at_root(&bind) && uniform_turn(ibm.matrix3) && below(&apart, node) => {
                at_root_place += 1
            }
            None => return true,
        }
        false
    });
    KeptBinds {
        kept,
        dropped,
        scaled,
        turned,
        skin_scaled,
        at_root: at_root_place,
    }
}

/// The uneven scale a skin's mesh frame puts into its inverse bind matrices: the
/// length of each matrix axis (a turn times a scale has its scale there), when more
/// than half of the matrices share it within `MATRIX_TOLERANCE` of its size and it
/// differs between axes by more than that; `None` otherwise (a uniform scale is
/// `at_origin`'s own). A Sketchfab conversion whose root joint scales the rig by
/// 12.0, 14.3 and 12.3 writes that scale into every matrix, and the identity in it
/// for the end nubs that bind no vertex.
fn skin_scale(raw: &[JointBind]) -> Option<DVec3> {
    let axes = |ibm: &DAffine3| {
        let m = ibm.matrix3;
        DVec3::new(m.x_axis.length(), m.y_axis.length(), m.z_axis.length())
    };
    let same =
        |a: DVec3, b: DVec3| (a - b).abs().max_element() <= MATRIX_TOLERANCE * a.max_element();
    raw.iter()
        .map(|(_, ibm, _)| axes(ibm))
        .filter(|&scale| {
            scale.max_element() - scale.min_element() > MATRIX_TOLERANCE * scale.max_element()
        })
        .find(|&scale| {
            2 * raw
                .iter()
                .filter(|(_, ibm, _)| same(scale, axes(ibm)))
                .count()
                > raw.len()
        })
}

/// How far from the mesh frame's origin a bind may be and still be at it:
/// `POSED_DISTANCE_FRACTION` of the skin's bind extent (the matrices are floats).
fn origin_tolerance(raw: &[JointBind]) -> f64 {
    let (low, high) = raw.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(low, high), (_, _, bind)| (low.min(bind.translation), high.max(bind.translation)),
    );
    let extent = (high - low).length();
    if extent.is_finite() {
        POSED_DISTANCE_FRACTION * extent
    } else {
        0.0
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
pub(super) fn rest_transforms(
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{GltfDoc, parse};
    use super::*;
    use glam::{Mat4, Quat, Vec3};
    use serde_json::{Value, json};
    use std::path::Path;

    #[test]
    fn a_skin_no_mesh_uses_is_no_skeleton_beside_the_one_a_mesh_uses() {
        // Blender's armature per action: `Armature` (skin 1, no mesh) first in the
        // scene, a copy posed with the spine bent; `Armature.001` (skin 0) drives
        // the mesh `Body`, its Hips at 1 m.
        let doc = json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0, 3]}],
            "nodes": [
                {"name": "Armature", "children": [1]},
                {"name": "Hips", "translation": [0.0, 0.6, 0.0], "children": [2]},
                {"name": "Spine", "translation": [0.0, 0.0, 0.2]},
                {"name": "Armature.001", "children": [4, 6]},
                {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [5]},
                {"name": "Spine", "translation": [0.0, 0.2, 0.0]},
                {"name": "Body", "mesh": 0, "skin": 0}
            ],
            "meshes": [{"primitives": [{"attributes": {}}]}],
            "skins": [{"joints": [4, 5]}, {"joints": [1, 2]}]
        });
        let rig = parse_doc(&doc).unwrap();
        let names: Vec<&str> = rig
            .skeleton
            .joints()
            .iter()
            .map(|j| j.name.as_str())
            .collect();
        assert_eq!(names, ["Armature.001", "Hips", "Spine"]);
        assert!(position(&rig, "Hips").abs_diff_eq(Vec3::new(0.0, 1.0, 0.0), 1e-6));
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("skin(s) 1 bound to no mesh")),
            "{:?}",
            rig.notes
        );
        // Without a mesh bound to any skin (clips only), every skin is the skeleton.
        let mut clips_only = doc.clone();
        clips_only["nodes"][6] = json!({"name": "Body"});
        let rig = parse_doc(&clips_only).unwrap();
        assert_eq!(rig.skeleton.joints().len(), 6);
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
    fn a_skin_with_singular_inverse_bind_matrices_rests_as_its_nodes_are_posed() {
        // Zero matrices, given in a buffer or as an accessor with no buffer view (all
        // zeros, which the glTF validator passes): the skin binds no joint, so the
        // joints rest as their nodes are posed, with a note naming the matrix.
        let zeros = skinned(hips_spine_head(), &[0, 1, 2], &[Mat4::ZERO; 3]);
        let mut no_view = zeros.clone();
        no_view["accessors"][0]
            .as_object_mut()
            .unwrap()
            .remove("bufferView");
        let mut one_singular = [Mat4::IDENTITY; 3];
        one_singular[1] = Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0));
        let singular = skinned(hips_spine_head(), &[0, 1, 2], &one_singular);
        for (doc, i) in [(zeros, 0), (no_view, 0), (singular, 1)] {
            let rig = parse_doc(&doc).unwrap();
            assert_eq!(
                rig.notes,
                [format!(
                    "skin 0: inverse bind matrix {i} (node {i}) is not invertible: its joints rest as the nodes are posed"
                )]
            );
            assert!((position(&rig, "Head") - Vec3::new(0.0, 1.6, 0.0)).length() < 1e-6);
        }
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
    fn an_identity_inverse_bind_matrix_below_a_bound_joint_hangs_from_its_parent() {
        // The arm is bound in a T-pose and posed down in the nodes; the forearm binds
        // no vertex, and its inverse bind matrix is the identity (Sketchfab's FBX
        // conversions write so for fingers and twist joints). Taken as a bind pose it
        // would put the forearm at the mesh origin, 1.6 m from the arm; it hangs
        // from the arm's bind pose where its node does, along the T-pose arm.
        let bind = t_pose_bind_worlds();
        let inverse = [bind[0].inverse(), bind[1].inverse(), Mat4::IDENTITY];
        let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse)).unwrap();
        assert_eq!(
            rig.notes,
            [
                "skin 0: 1 joints below bound ones have identity inverse bind matrices (joints that bind no vertex): they rest where their nodes hang from their parents",
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"
            ]
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-5), "{joint}: {got}");
        }
    }

    #[test]
    fn an_identity_written_with_float_noise_below_a_bound_joint_hangs_from_its_parent() {
        // As above, with the identity as Sketchfab's conversion of an FBX file wrote an
        // unbound neck's: a diagonal a few units of 10⁻⁶ off 1, which is no scale and
        // no turn of anything.
        let noisy = Mat4::from_scale(Vec3::new(1.000_001_5, 0.999_998_2, 1.000_001_7));
        assert_unbound_forearm_hangs_from_the_arm(noisy, "identity inverse bind matrices");
    }

    /// The arm bound in a T-pose and posed down in the nodes, the forearm's inverse
    /// bind matrix `forearm` (one that binds no vertex): the forearm is dropped with
    /// a note naming its matrix as `identities`, and rests along the T-pose arm.
    fn assert_unbound_forearm_hangs_from_the_arm(forearm: Mat4, identities: &str) {
        let bind = t_pose_bind_worlds();
        let inverse = [bind[0].inverse(), bind[1].inverse(), forearm];
        let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse)).unwrap();
        assert_eq!(
            rig.notes,
            [
                format!(
                    "skin 0: 1 joints below bound ones have {identities} (joints that bind no vertex): they rest where their nodes hang from their parents"
                ),
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)".to_owned()
            ]
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-5), "{joint}: {got}");
        }
    }

    #[test]
    fn a_scaled_identity_inverse_bind_matrix_below_a_bound_joint_hangs_from_its_parent() {
        // As above, but the unbound forearm's matrix is the identity scaled by 100:
        // Sketchfab's conversions of FBX files write so for end nubs and IK targets
        // under a centimetre armature. Taken as a bind pose it would put the forearm
        // at the mesh origin, and the arm's chain would end on the floor.
        let bind = t_pose_bind_worlds();
        let scaled = Mat4::from_scale(Vec3::splat(100.0));
        let inverse = [bind[0].inverse(), bind[1].inverse(), scaled];
        let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse)).unwrap();
        assert_eq!(
            rig.notes,
            [
                "skin 0: 1 joints below bound ones have identity inverse bind matrices in a uniform scale (joints that bind no vertex): they rest where their nodes hang from their parents",
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"
            ]
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-5), "{joint}: {got}");
        }
    }

    #[test]
    fn the_identity_in_the_skins_uneven_scale_below_a_bound_joint_hangs_from_its_parent() {
        // As above, but the mesh is written in a frame scaled unevenly (a Sketchfab
        // conversion whose root joint scales the rig by 12.0, 14.3 and 12.3): every
        // matrix carries that scale, and the unbound forearm's is that scale alone.
        // Taken as a bind pose it would put the forearm at the mesh origin.
        let bind = t_pose_bind_worlds();
        let uneven = Mat4::from_scale(Vec3::new(12.0, 14.3, 12.3));
        let inverse = [
            bind[0].inverse() * uneven,
            bind[1].inverse() * uneven,
            uneven,
        ];
        let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse)).unwrap();
        assert_eq!(
            rig.notes,
            [
                "skin 0: 1 joints below bound ones have identity inverse bind matrices in the skin's own uneven scale (joints that bind no vertex): they rest where their nodes hang from their parents",
                "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"
            ]
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-4), "{joint}: {got}");
        }
    }

    #[test]
    fn a_matrix_at_the_root_joints_bind_below_a_bound_joint_hangs_from_its_parent() {
        // As above, but the unbound forearm's matrix puts it where the skin's root
        // joint (the hips) binds, in another scale: Sketchfab's conversions of Mixamo
        // rigs write so for fingers and end nubs (61 joints of a cartoon's gloves).
        // Taken as a bind pose the hands' fingers would all sit at the hips.
        let bind = t_pose_bind_worlds();
        let at_hips = Mat4::from_scale(Vec3::splat(1.34)) * bind[0].inverse();
        assert_unbound_forearm_hangs_from_the_arm(
            at_hips,
            "inverse bind matrices that put them where the skin's root joint binds",
        );
    }

    #[test]
    fn a_turned_inverse_bind_matrix_at_the_origin_below_a_bound_joint_hangs_from_its_parent() {
        // As above, but the unbound forearm's matrix is a turn with no offset (a
        // quarter turn about X, the armature's Z-up axes, or about Y and Z, the
        // nub's own axes), and its offset is a float's rounding off zero: Sketchfab's
        // conversions of FBX files write so for end nubs. Taken as a bind pose it
        // would put the forearm at the mesh origin, and the arm's chain would end on
        // the floor.
        let bind = t_pose_bind_worlds();
        let quarter = std::f32::consts::FRAC_PI_2;
        for turn in [
            Quat::from_rotation_x(-quarter),
            Quat::from_euler(glam::EulerRot::YZX, quarter, -quarter, 0.0),
        ] {
            let turned = Mat4::from_rotation_translation(turn, Vec3::new(1e-7, 0.0, 2e-7));
            let inverse = [bind[0].inverse(), bind[1].inverse(), turned];
            let rig = parse_doc(&skinned(arm_posed_down(), &[0, 1, 2], &inverse)).unwrap();
            assert_eq!(
                rig.notes,
                [
                    "skin 0: 1 joints below bound ones have inverse bind matrices that turn them at the mesh origin (joints that bind no vertex): they rest where their nodes hang from their parents",
                    "rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"
                ]
            );
            for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
                let got = Mat4::from(world(&rig, joint));
                assert!(got.abs_diff_eq(expected, 1e-5), "{joint}: {got}");
            }
        }
    }

    #[test]
    fn an_unbound_nub_at_the_origin_in_its_node_too_rests_on_its_parent() {
        // Blender re-exporting a Sketchfab conversion: the forearm's end nub binds no
        // vertex, its matrix is a quarter turn scaled by 100 at the mesh origin, and
        // its node holds the same placeholder (it sits at the origin, 1.6 m from the
        // forearm). Neither places it: it rests on the forearm, adding no length. The
        // matrix carries float noise up to 2.3e-5 of its scale, clean or not alike.
        let bind = t_pose_bind_worlds();
        let quarter = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let mut nodes = json!([
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]},
            {"name": "Arm", "translation": [0.2, 0.5, 0.0], "children": [2]},
            {"name": "Forearm", "translation": [0.3, 0.0, 0.0], "children": [3]},
            {"name": "Forearm_end", "translation": [-0.5, -1.5, 0.0]}
        ]);
        let q = quarter.to_array();
        nodes[3]["rotation"] = json!(q);
        let placeholder = Mat4::from_scale(Vec3::splat(100.0)) * Mat4::from_quat(quarter.inverse());
        let mut noisy = placeholder;
        noisy.y_axis.x += 0.0023;
        noisy.z_axis.y -= 0.0009;
        for nub in [placeholder, noisy] {
            let inverse = [bind[0].inverse(), bind[1].inverse(), bind[2].inverse(), nub];
            let rig = parse_doc(&skinned(nodes.clone(), &[0, 1, 2, 3], &inverse)).unwrap();
            assert_eq!(
                rig.notes,
                [
                    "skin 0: 1 joints below bound ones have inverse bind matrices that turn them at the mesh origin (joints that bind no vertex): they rest where their nodes hang from their parents",
                    "skin 0: 1 of those sit at the mesh origin in their nodes too (a re-export wrote the matrix into the node): they rest on their parents"
                ]
            );
            assert!(
                position(&rig, "Forearm_end").abs_diff_eq(Vec3::new(0.5, 1.5, 0.0), 1e-5),
                "{}",
                position(&rig, "Forearm_end")
            );
            assert!(position(&rig, "Forearm").abs_diff_eq(Vec3::new(0.5, 1.5, 0.0), 1e-5));
        }
    }

    #[test]
    fn identity_inverse_bind_matrices_leave_the_node_rest() {
        // Every joint bound at the skin's origin: no bone would have a length. The
        // nodes keep their rest, under every node frame.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        for hips_rotation in [[0.0, 0.0, 0.0, 1.0], [0.0, h, 0.0, h]] {
            let mut nodes = hips_spine_head();
            nodes[0]["rotation"] = json!(hips_rotation);
            let rig = parse_doc(&skinned(nodes.clone(), &[0, 1, 2], &[Mat4::IDENTITY; 3])).unwrap();
            assert_eq!(
                rig.notes,
                [
                    "skin 0: its inverse bind matrices put its 3 joints at one point (identity matrices): its joints rest as the nodes are posed"
                ]
            );
            let plain = parse_doc(&json!({"asset": {"version": "2.0"}, "nodes": nodes,
                "scenes": [{"nodes": [0]}]}))
            .unwrap();
            for joint in ["Hips", "Spine", "Head"] {
                assert!(
                    position(&rig, joint).abs_diff_eq(position(&plain, joint), 1e-6),
                    "{joint}: {} vs {}",
                    position(&rig, joint),
                    position(&plain, joint)
                );
            }
            assert!(position(&rig, "Head").y - position(&rig, "Hips").y > 0.1);
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
    fn a_posed_root_joint_keeps_a_scene_frame_bind_pose_upright() {
        // Saved mid-run: the hips tipped 60 degrees forward and moved; the inverse
        // bind matrices are the T-pose in the scene's frame.
        let mut nodes = arm_posed_down();
        nodes[0]["rotation"] = json!([0.5, 0.0, 0.0, 0.866_025_4]);
        nodes[0]["translation"] = json!([0.0, 0.9, 0.2]);
        let bind = t_pose_bind_worlds();
        let rig = parse_doc(&skinned(nodes, &[0, 1, 2], &bind.map(|m| m.inverse()))).unwrap();
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("root joint is posed too")),
            "{:?}",
            rig.notes
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-4), "{joint}: {got}");
        }
    }

    #[test]
    fn a_root_joint_posed_under_a_turned_armature_keeps_its_bind_pose_upright() {
        // Blender's layout: an armature node turned a quarter about X (Z-up to Y-up)
        // above the hips; the inverse bind matrices hold the T-pose in the scene's
        // frame; the nodes are saved mid-dance, the hips leaning 2 degrees and
        // turned 4, the arm down. Carried whole onto the hips, the bind pose would
        // lean and turn with them.
        let armature = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let lean = Quat::from_rotation_y(0.07) * Quat::from_rotation_z(0.035);
        let hips_local = armature.inverse() * lean;
        let hips_at = armature.inverse() * Vec3::new(0.01, 0.97, -0.02);
        let mut nodes = arm_posed_down();
        nodes[0]["rotation"] = json!(hips_local.to_array());
        nodes[0]["translation"] = json!(hips_at.to_array());
        for node in nodes.as_array_mut().unwrap() {
            if let Some(children) = node.get_mut("children") {
                *children = json!([children[0].as_u64().unwrap() + 1]);
            }
        }
        let mut all = vec![json!({"name": "Armature", "rotation": armature.to_array(),
            "children": [1]})];
        all.extend(nodes.as_array().unwrap().iter().cloned());
        let bind = t_pose_bind_worlds();
        let rig = parse_doc(&skinned(json!(all), &[1, 2, 3], &bind.map(|m| m.inverse()))).unwrap();
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("carried into the scene without that turn")),
            "{:?}",
            rig.notes
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let (_, got, _) = Mat4::from(world(&rig, joint)).to_scale_rotation_translation();
            assert!(got.angle_between(Quat::IDENTITY) < 1e-4, "{joint}: {got}");
            let (_, _, at) = expected.to_scale_rotation_translation();
            let offset = position(&rig, joint) - position(&rig, "Hips");
            assert!(
                offset.abs_diff_eq(at - Vec3::new(0.0, 1.0, 0.0), 1e-4),
                "{joint}: {offset}"
            );
        }
    }

    #[test]
    fn an_unbound_root_joint_in_another_scale_does_not_carry_the_bind_pose() {
        // Sketchfab's layout of an FBX biped: a node turned Z-up to Y-up, the biped's
        // root node turned back, scaled 0.01 and lifted, a group, then the skin's root
        // joint with an identity inverse bind matrix (it binds no vertex), then the
        // hips. The other matrices hold the T-pose in a Z-up metre mesh frame; the
        // hips' node pairs with its matrix, the arm is posed down. Carried through
        // the root joint the bind pose would shrink a hundredfold.
        let quarter = std::f32::consts::FRAC_PI_2;
        let biped = Mat4::from_scale_rotation_translation(
            Vec3::splat(0.01),
            Quat::from_rotation_x(quarter),
            Vec3::new(0.0, 0.0, 1.0),
        );
        assert_bind_pose_under_unbound_root(biped, ["Model", "Bip01_1", "GLTF_created_0"], None);
    }

    #[test]
    fn a_scaled_identity_below_an_unbound_root_joint_does_not_carry_the_bind_pose() {
        // Sketchfab's conversion of a 3ds Max biped: the armature scaled 100, the
        // skin's root joint with the identity, then `Bip01` (binding no vertex) with
        // the identity scaled 100, then the hips. Carried through `Bip01` the bind
        // pose would grow a hundredfold over the armature's scale.
        let quarter = std::f32::consts::FRAC_PI_2;
        let armature = Mat4::from_scale_rotation_translation(
            Vec3::splat(100.0),
            Quat::from_rotation_x(quarter),
            Vec3::ZERO,
        );
        let names = ["Sketchfab_model", "goku_skeleton", "Object_5"];
        assert_bind_pose_under_unbound_root(armature, names, Some(100.0));
    }

    #[test]
    fn an_unbound_root_joint_on_other_axes_does_not_carry_the_bind_pose() {
        // Sketchfab's layout of an FBX armature in metres: the root joint has an
        // identity inverse bind matrix (it binds no vertex) and hangs under nodes that
        // turn a Z-up armature upright, so its node world is the scene's axes while
        // the other matrices hold the T-pose in a frame turned a quarter about X. The
        // hips' node pairs with its matrix exactly (not posed); the arm is posed down.
        // Carried through the root joint the bind pose would lie on its back.
        let armature = Mat4::from_quat(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2));
        let names = ["Sketchfab_model", "Armature", "Object_6"];
        assert_bind_pose_under_unbound_root(armature, names, None);
    }

    /// A skin whose root joint `_rootJoint` binds no vertex (an identity inverse
    /// bind matrix) under `names[0]` (turned Z-up to Y-up), `names[1]` (holding
    /// `armature`) and a group `names[2]`; the hips' node pairs with its matrix, the
    /// arm is posed down; with `scaled`, a joint `Bip01` between `_rootJoint` and the
    /// hips has the identity in that scale (it binds no vertex). The bind pose comes
    /// out as the matrices hold it, upright, with the note that it was carried through
    /// the first bound joint.
    fn assert_bind_pose_under_unbound_root(armature: Mat4, names: [&str; 3], scaled: Option<f32>) {
        let quarter = std::f32::consts::FRAC_PI_2;
        let model = Mat4::from_quat(Quat::from_rotation_x(-quarter));
        let root_world = model * armature;
        let bind = t_pose_bind_worlds();
        let hips_local = root_world.inverse() * bind[0];
        let extra = usize::from(scaled.is_some());
        let mut body = arm_posed_down();
        let body = body.as_array_mut().unwrap();
        body[0] = json!({"name": "Hips", "matrix": hips_local.to_cols_array(),
            "children": [5 + extra]});
        body[1]["children"] = json!([6 + extra]);
        let mut nodes = vec![
            json!({"name": names[0], "rotation": Quat::from_rotation_x(-quarter).to_array(),
                "children": [1]}),
            json!({"name": names[1], "matrix": armature.to_cols_array(), "children": [2]}),
            json!({"name": names[2], "children": [3]}),
            json!({"name": "_rootJoint", "children": [4]}),
        ];
        let mut inverse = vec![Mat4::IDENTITY];
        if let Some(scale) = scaled {
            nodes.push(json!({"name": "Bip01", "children": [5]}));
            inverse.push(Mat4::from_scale(Vec3::splat(scale)));
        }
        nodes.extend(body.iter().cloned());
        inverse.extend(bind.map(|world| (model.inverse() * world).inverse()));
        let joints: Vec<usize> = (3..nodes.len()).collect();
        let rig = parse_doc(&skinned(json!(nodes), &joints, &inverse)).unwrap();
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("carried into the scene through its first bound joint")),
            "{:?}",
            rig.notes
        );
        for (joint, expected) in ["Hips", "Arm", "Forearm"].iter().zip(bind) {
            let got = Mat4::from(world(&rig, joint));
            assert!(got.abs_diff_eq(expected, 1e-4), "{joint}: {got}");
        }
    }

    /// World position of a node in the file's own node TRS (no bind pose).
    fn node_rest_position(bytes: &[u8], name: &str) -> Vec3 {
        let doc = Document {
            doc: GltfDoc::from_bytes(bytes, Path::new("x.glb")).unwrap(),
            clips: true,
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
                "rest pose taken from the inverse bind matrices of skins 0, 1, 2 and 3, in one frame (the nodes are posed differently)",
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
}
