//! `EXT_skeleton_humanoid` animations (spec: `../shared/seeds/EXT_skeleton_humanoid.txt`):
//! writing a performance as a self-contained GLB, reading the humanoid channels of any
//! file into normalized `HumanoidPose`s, and applying such a clip to a model with the
//! spec's inverse-bind-matrix formula.
//!
//! # What the spec says, and what is made of it
//!
//! A channel whose `target.extensions.EXT_skeleton_humanoid.humanoidBoneName` names a
//! bone (no `target.node`: the glTF schema does not require it, "the animated object
//! MAY be defined by an extension") holds the bone's transform *relative to its
//! reference pose*, to be applied to a model as
//!
//! ```text
//! bindLocal     = parentInverseBindMatrix · inverse(inverseBindMatrix)
//! animatedLocal = bindLocal · compose(t, r, s)
//! ```
//!
//! so a rotation `r(b)` is a delta in the bone's own bind frame. What that frame is
//! comes from the reference pose: a T-pose facing +Z in which every bone node has +Y
//! "from the parent joint to the child joint" and "+X rotation bends the joint like a
//! muscle contracting". With `C(b)` the model-space rotation of bone `b`'s canonical
//! frame (`canonical_frame`) and `N(b)` its normalized rotation (`HumanoidPose`: the
//! model-space delta from the T-pose, expressed relative to the parent's), a model
//! whose bind frames are the canonical ones poses bone `b` at
//! `G(b) = G(par) · C(par)⁻¹ · C(b) · r(b)`; its model-space delta from the T-pose is
//! `M(b) = G(b) · C(b)⁻¹ = M(par) · C(b) · r(b) · C(b)⁻¹`, hence
//!
//! ```text
//! N(b) = C(b) · r(b) · C(b)⁻¹          r(b) = C(b)⁻¹ · N(b) · C(b)
//! ```
//!
//! Both are conjugations, so they commute with slerp and are linear on quaternion
//! components: STEP, LINEAR and CUBICSPLINE keys (tangents included) convert alike.
//!
//! # The canonical frames `C(b)`
//!
//! The spec cites Vircadia's avatar standards and Godot's rest fixer; the axis rules
//! quoted above are those of Godot's rest fixer (*Overwrite Axis*, which rewrites
//! bone rests to the profile's), and Godot's `SkeletonProfileHumanoid`
//! (`scene/resources/skeleton_profile.cpp`) writes them down as reference poses. This table is Godot's, read in model space (Godot's
//! profile also faces +Z with the left arm on +X), with one change for the thumbs.
//! Left and centre bones (model axes; "does" is what a positive rotation about the
//! bone's +X does, from the T-pose):
//!
//! | bones                                    | +Y (along the bone)  | +X (bend axis) | does                                        |
//! |------------------------------------------|----------------------|----------------|---------------------------------------------|
//! | hips, spine, chest, upperChest, neck, head | +Y                 | +X             | bends forward                               |
//! | leftEye (rightEye the same)              | +Z (the gaze)        | +X             | looks down                                  |
//! | jaw                                      | +Z                   | −X             | chin up: closes the mouth                   |
//! | leftShoulder                             | +X                   | +Z             | raises the shoulder (shrug)                 |
//! | leftUpperArm                             | +X                   | −Z             | lowers the arm (adduction)                  |
//! | leftLowerArm                             | +X                   | −Y             | forearm forward (elbow flexion, palm down)  |
//! | leftHand                                 | +X                   | −Z             | hand down (wrist flexion, palm down)        |
//! | left Index/Middle/Ring/Little, 3 each    | +X                   | −Z             | curls down, toward the palm                 |
//! | left Thumb Metacarpal/Proximal/Distal    | (+X +Z)/√2           | +Y             | swings toward the fingers, across the palm  |
//! | leftUpperLeg                             | −Y                   | −X             | knee forward (hip flexion)                  |
//! | leftLowerLeg                             | −Y                   | +X             | shin back (knee flexion)                    |
//! | leftFoot                                 | +Z                   | −X             | toes up (dorsiflexion)                      |
//! | leftToes                                 | +Z                   | +X             | toes curl down                              |
//!
//! Right bones mirror the left through the YZ plane: +Y as a direction (x → −x), +X
//! as an axis of rotation (y → −y, z → −z), so every motion mirrors; +Z = X × Y
//! always (right-handed frames). Choices where the sources leave room:
//! - Thumbs: the spec says 45° between ±X and +Z; Godot's profile has about 35°. The
//!   spec wins for the direction; the bend axis (up for the left thumb) is Godot's.
//! - Feet: the spec says toes along +Z and feet perpendicular to the legs, which is
//!   not "toward the child joint" (the toes are below the ankle too). +Z, as Godot.
//! - Eyes, jaw and toes have no child joint: Godot's forward-pointing frames.
//! - Godot's arm frames bend the shoulder up but the upper arm down; kept as they are.
//!
//! # Files written (`ExtHumanoidWriter`)
//!
//! One GLB: 55 nodes, one per humanoid bone in spec order (hips is node 0 and the
//! scene root), standing in the T-pose of a `VrmaRest` (so `convert --target` bakes
//! proportions as for `.vrma`), whose rotations *are* the canonical frames (node
//! rotation `C(par)⁻¹ · C(b)`, translation `C(par)⁻¹ · (position(b) − position(par))`);
//! a skin over all of them whose inverse bind matrices invert the nodes' world
//! matrices; `extensions.EXT_skeleton_humanoid.humanoidSkeletons` (the README's
//! array form) with the hips as `rootNode`; `extensionsUsed`; one animation of
//! humanoid-bone channels, LINEAR over one shared time accessor with min/max: the hips
//! `translation`, then one `rotation` per recorded bone holding `r(b)`. The Khronos
//! validator finds no error or warning in it; its infos say that it cannot check the
//! extension and that the skin may be unused (there is no mesh).
//!
//! **Hips translation**: by the spec's formula applied to the hips,
//! `animatedWorld(hips) = bindWorld(hips) · translate(t)`, so the channel value `t` is
//! the hips' offset from its reference position, in the hips' bind frame. In our
//! files that frame is the model's (`C(hips)` is the identity, the hips is a root):
//! `t = hips_position − rest.position(hips)`, and reading gives it back exactly.
//!
//! # Files read (`parse`, `load`)
//!
//! Any file with humanoid-bone channels: a clip file like ours or a model carrying
//! animations. Rotations become `N(b)` with the table above, whatever the file's own
//! nodes look like (the channel values are defined by the convention, not by the
//! file's skeleton). The hips translation is placed with the hips' bind world of the
//! file's humanoid skeleton, when it declares one (read by `formats::gltf`), else with the
//! standard T-pose hips, 0.95 m up. Channels on plain nodes are ignored; humanoid
//! channels on `scale` and on the translation of bones other than the hips are
//! ignored (the spec says they cannot be applied accurately).
//!
//! The spec is inconsistent about the skeleton definition: the README uses an array
//! `humanoidSkeletons` of `{rootNode, humanoidBones}`, its JSON schema a single
//! object, and the schema's bone list omits `chest` (which the README's table and
//! hierarchy have). We write the README's array; we read the array (first skeleton),
//! a single `humanoidSkeleton` object and a bare `{rootNode, humanoidBones}` object,
//! and accept `chest` everywhere.
//!
//! gltf-json types `target.node` as required: `GltfDoc` leaves node-less channels out
//! of its typed JSON, so the channels are read here from its untyped JSON.
//!
//! # Applying a clip to a model (`apply_to_model`)
//!
//! Exactly the spec's method: for each mapped bone, `animatedLocal = bindLocal · r(b)`
//! with `bindLocal` the model's bind local rotation (a `Rig`'s rest locals are the
//! bind locals when the file has inverse bind matrices); unmapped joints keep their
//! rest. This is right only for models whose bind frames follow the table above; for
//! any other axes it bends the wrong way. `retarget::FromNormalized`, fed with
//! `ExtHumanoidClip::sample`, works for any axes and rest poses, since its `W(b)`
//! absorbs them. Both agree on a model that follows the convention.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use glam::{Affine3A, Mat3, Quat, Vec3};
use serde_json::{Value, json};

use super::Rig;
use super::glb;
use super::gltf::{self, DocError, GltfDoc, GltfError};
use super::sampler::{Interpolation, KeyValue, Keyframes};
use super::tracks;
use super::vrma::{PushError, VrmaRest};
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B, HumanoidPose, Side};

/// The extension's name.
pub const EXTENSION: &str = "EXT_skeleton_humanoid";

/// Hips height of the reference pose assumed for a clip whose file declares no
/// humanoid skeleton, metres (`VrmaRest::standard`'s proportions).
const STANDARD_HIPS_HEIGHT: f32 = 0.95;

/// Why an `EXT_skeleton_humanoid` file cannot be read or written, or a clip applied.
#[derive(Debug, thiserror::Error)]
pub enum ExtHumanoidError {
    #[error(transparent)]
    Doc(#[from] DocError),
    /// The file's humanoid skeleton, read as a rig.
    #[error(transparent)]
    Rig(#[from] GltfError),
    /// Anything else wrong; `place` is a JSON path (`animations[0].channels[3]`).
    #[error("{path}: {place}: {message}")]
    Invalid {
        path: PathBuf,
        place: String,
        message: String,
    },
    #[error("the model declares no humanoid bone map (VRMC_vrm, VRM or {EXTENSION})")]
    NoBoneMap,
    #[error("output has room for {got} joints, the model has {needed}")]
    OutputTooShort { needed: usize, got: usize },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn invalid(path: &Path, place: &str, message: impl Into<String>) -> ExtHumanoidError {
    ExtHumanoidError::Invalid {
        path: path.to_owned(),
        place: place.to_owned(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------
// Canonical frames

/// +X (bend axis) and +Y (bone direction) of a left or centre bone's canonical frame,
/// model space (the table in the module header).
fn left_axes(bone: HumanBone) -> (Vec3, Vec3) {
    let thumb = Vec3::new(1.0, 0.0, 1.0).normalize();
    match bone {
        B::Hips | B::Spine | B::Chest | B::UpperChest | B::Neck | B::Head => (Vec3::X, Vec3::Y),
        B::LeftEye | B::RightEye => (Vec3::X, Vec3::Z),
        B::Jaw => (Vec3::NEG_X, Vec3::Z),
        B::LeftShoulder => (Vec3::Z, Vec3::X),
        B::LeftUpperArm => (Vec3::NEG_Z, Vec3::X),
        B::LeftLowerArm => (Vec3::NEG_Y, Vec3::X),
        B::LeftUpperLeg => (Vec3::NEG_X, Vec3::NEG_Y),
        B::LeftLowerLeg => (Vec3::X, Vec3::NEG_Y),
        B::LeftFoot => (Vec3::NEG_X, Vec3::Z),
        B::LeftToes => (Vec3::X, Vec3::Z),
        b if b.is_thumb() => (Vec3::Y, thumb),
        // leftHand and the four fingers.
        _ => (Vec3::NEG_Z, Vec3::X),
    }
}

/// +X and +Y of any bone's canonical frame: right bones mirror their left twin, +Y
/// as a direction, +X as an axis of rotation (a pseudo-vector), so motions mirror.
fn canonical_axes(bone: HumanBone) -> (Vec3, Vec3) {
    if bone.side() != Side::Right {
        return left_axes(bone);
    }
    let (x, y) = left_axes(bone.mirrored());
    (Vec3::new(x.x, -x.y, -x.z), Vec3::new(-y.x, y.y, y.z))
}

fn canonical_frames() -> &'static [Quat; BONE_COUNT] {
    static FRAMES: OnceLock<[Quat; BONE_COUNT]> = OnceLock::new();
    FRAMES.get_or_init(|| {
        let mut frames = [Quat::IDENTITY; BONE_COUNT];
        for bone in ALL {
            let (x, y) = canonical_axes(bone);
            let basis = Mat3::from_cols(x, y, x.cross(y));
            frames[bone.index()] = Quat::from_mat3(&basis).normalize();
        }
        frames
    })
}

/// `C(b)`: the model-space rotation of `bone`'s canonical frame in the reference
/// T-pose (its columns are the bone's +X, +Y, +Z; see the module header).
#[must_use]
pub fn canonical_frame(bone: HumanBone) -> Quat {
    canonical_frames()[bone.index()]
}

/// A normalized rotation as a channel value: `r(b) = C(b)⁻¹ · N(b) · C(b)`.
#[must_use]
pub fn to_channel_rotation(bone: HumanBone, normalized: Quat) -> Quat {
    let c = canonical_frame(bone);
    c.conjugate() * normalized * c
}

/// A channel value as a normalized rotation: `N(b) = C(b) · r(b) · C(b)⁻¹`.
#[must_use]
pub fn from_channel_rotation(bone: HumanBone, channel: Quat) -> Quat {
    let c = canonical_frame(bone);
    c * channel * c.conjugate()
}

// ---------------------------------------------------------------------------------
// Writer

/// Appends frames of a performance, then writes them as one `EXT_skeleton_humanoid`
/// GLB (see the module header).
#[derive(Debug, Clone)]
pub struct ExtHumanoidWriter {
    rest: VrmaRest,
    name: String,
    times: Vec<f32>,
    /// Channel values `r(b)`, x, y, z, w per frame, for every bone seen so far.
    rotations: Vec<Option<Vec<f32>>>,
    /// Channel values of the hips translation, x, y, z per frame: the hips' offset
    /// from its reference position, model axes.
    hips: Vec<f32>,
}

impl ExtHumanoidWriter {
    /// An empty recording whose reference skeleton will stand in the T-pose `rest`;
    /// `name` becomes the animation's name.
    #[must_use]
    pub fn new(rest: VrmaRest, name: &str) -> Self {
        Self {
            rest,
            name: name.to_owned(),
            times: Vec::new(),
            rotations: vec![None; BONE_COUNT],
            hips: Vec::new(),
        }
    }

    /// How many frames have been appended.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Appends one frame at `time` seconds. A bone that first appears now holds its
    /// reference pose (identity) in the earlier frames; one that a frame lacks holds
    /// its previous value. Every bone is written, eyes included (this format has no
    /// lookAt); expressions are not part of the format.
    pub fn push(&mut self, time: f32, pose: &HumanoidPose) -> Result<(), PushError> {
        tracks::check_frame(&self.times, time, pose)?;
        let frames = self.times.len();
        self.times.push(time);
        let offset = pose.hips_position - self.rest.position(B::Hips);
        self.hips.extend_from_slice(&offset.to_array());
        for bone in ALL {
            let track = &mut self.rotations[bone.index()];
            let value = pose.rotation(bone).map(|q| {
                to_channel_rotation(bone, q.normalize())
                    .normalize()
                    .to_array()
            });
            tracks::record(
                track,
                frames,
                &Quat::IDENTITY.to_array(),
                value.as_ref().map(|v| &v[..]),
            );
        }
        Ok(())
    }

    /// The whole file as bytes.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the file to `path`.
    pub fn save(&self, path: &Path) -> Result<(), ExtHumanoidError> {
        glb::save(path, |out| self.write_to(out)).map_err(|source| ExtHumanoidError::Write {
            path: path.to_owned(),
            source,
        })
    }

    /// Writes the GLB: header, JSON chunk, then the binary chunk streamed from the
    /// track buffers.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let (times, hips) = if self.times.is_empty() {
            // No frame: one frame of the reference pose, so readers find a clip.
            (vec![0.0], vec![0.0; 3])
        } else {
            (self.times.clone(), self.hips.clone())
        };
        let frames = times.len();
        let bones: Vec<(HumanBone, &[f32])> = ALL
            .iter()
            .filter_map(|b| self.rotations[b.index()].as_deref().map(|t| (*b, t)))
            .collect();

        // Reference skeleton: world transform of every bone node, and its inverse.
        let world: Vec<Affine3A> = ALL
            .iter()
            .map(|&b| {
                Affine3A::from_rotation_translation(canonical_frame(b), self.rest.position(b))
            })
            .collect();
        let inverse_binds: Vec<f32> = world
            .iter()
            .flat_map(|w| glam::Mat4::from(w.inverse()).to_cols_array())
            .collect();

        // Binary layout: one buffer view per accessor, in this order.
        let mut blocks = vec![
            Block::new(&times, "SCALAR", 1),
            Block::new(&inverse_binds, "MAT4", 16),
            Block::new(&hips, "VEC3", 3),
        ];
        blocks.extend(bones.iter().map(|(_, t)| Block::new(t, "VEC4", 4)));

        let json = self.json(&bones, &blocks, &times);
        let bin_len: usize = blocks.iter().map(|b| b.values.len() * 4).sum();
        debug_assert_eq!(frames, times.len());
        glb::write_start(out, &json, bin_len)?;
        let mut staging = Vec::with_capacity(1 << 16);
        for block in &blocks {
            glb::write_f32s(out, block.values.iter().copied(), &mut staging)?;
        }
        Ok(())
    }

    fn json(&self, bones: &[(HumanBone, &[f32])], blocks: &[Block], times: &[f32]) -> Value {
        // Nodes: one per humanoid bone, index = `HumanBone::index` (parents first).
        let mut nodes: Vec<Value> = Vec::with_capacity(BONE_COUNT);
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); BONE_COUNT];
        for bone in ALL {
            let (origin, parent_frame) = match bone.parent() {
                Some(p) => {
                    children[p.index()].push(bone.index());
                    (self.rest.position(p), canonical_frame(p))
                }
                None => (Vec3::ZERO, Quat::IDENTITY),
            };
            let inverse_parent = parent_frame.conjugate();
            let translation = inverse_parent * (self.rest.position(bone) - origin);
            let rotation = (inverse_parent * canonical_frame(bone)).normalize();
            let mut node = json!({"name": bone.name(), "translation": translation.to_array()});
            if !rotation.abs_diff_eq(Quat::IDENTITY, 0.0) {
                node["rotation"] = json!(rotation.to_array());
            }
            nodes.push(node);
        }
        for (node, kids) in nodes.iter_mut().zip(&children) {
            if !kids.is_empty() {
                node["children"] = json!(kids);
            }
        }
        let human_bones: serde_json::Map<String, Value> = ALL
            .iter()
            .map(|b| (b.name().to_owned(), json!(b.index())))
            .collect();

        // Accessors and views, one each per block.
        let mut accessors = Vec::new();
        let mut views = Vec::new();
        let mut offset = 0usize;
        for (i, block) in blocks.iter().enumerate() {
            let len = block.values.len() * 4;
            views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": len}));
            let mut accessor = json!({
                "bufferView": i,
                "componentType": 5126,
                "count": block.values.len() / block.width,
                "type": block.kind,
            });
            if i == 0 {
                let min = times.first().copied().unwrap_or(0.0);
                let max = times.last().copied().unwrap_or(0.0);
                accessor["min"] = json!([min]);
                accessor["max"] = json!([max]);
            }
            accessors.push(accessor);
            offset += len;
        }

        // Channels: hips translation (accessor 2), then bone rotations (3, 4, ...).
        let target = |bone: HumanBone, path: &str| json!({"path": path, "extensions": {EXTENSION: {"humanoidBoneName": bone.name()}}});
        let mut channels = vec![json!({"sampler": 0, "target": target(B::Hips, "translation")})];
        let mut samplers = vec![json!({"input": 0, "output": 2, "interpolation": "LINEAR"})];
        for (k, (bone, _)) in bones.iter().enumerate() {
            channels.push(json!({"sampler": k + 1, "target": target(*bone, "rotation")}));
            samplers.push(json!({"input": 0, "output": k + 3, "interpolation": "LINEAR"}));
        }

        json!({
            "asset": {"version": "2.0", "generator": concat!("mocap-bridge ", env!("CARGO_PKG_VERSION"))},
            "extensionsUsed": [EXTENSION],
            "extensions": {EXTENSION: {"humanoidSkeletons": [
                {"rootNode": 0, "humanoidBones": human_bones}
            ]}},
            "scene": 0,
            "scenes": [{"nodes": [0]}],
            "nodes": nodes,
            "skins": [{"name": "reference T-pose", "joints": (0..BONE_COUNT).collect::<Vec<_>>(), "inverseBindMatrices": 1}],
            "animations": [{"name": self.name, "channels": channels, "samplers": samplers}],
            "accessors": accessors,
            "bufferViews": views,
            "buffers": [{"byteLength": offset}],
        })
    }
}

/// One accessor's floats in the binary chunk.
struct Block<'a> {
    values: &'a [f32],
    kind: &'static str,
    /// Floats per element.
    width: usize,
}

impl<'a> Block<'a> {
    fn new(values: &'a [f32], kind: &'static str, width: usize) -> Self {
        Self {
            values,
            kind,
            width,
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader

/// One animation's humanoid-bone channels, in normalized space.
#[derive(Debug, Clone)]
pub struct ExtHumanoidClip {
    /// The animation's name, if the file gives one.
    pub name: Option<String>,
    /// Time of the last key, seconds.
    pub duration: f32,
    /// `N(b)` per bone with a rotation channel, converted from the channel's `r(b)`.
    pub tracks: Vec<(HumanBone, Keyframes<Quat>)>,
    /// The hips translation channel as in the file: the hips' offset from its
    /// reference position, in the hips' bind frame.
    pub hips_translation: Option<Keyframes<Vec3>>,
    /// Bind world transform of the hips in the file's humanoid skeleton (model
    /// space); the standard T-pose hips, 0.95 m up, when the file declares none.
    pub hips_bind_world: Affine3A,
    /// The file's reference pose (its humanoid bones' bind positions, standard
    /// proportions for the rest), when it declares a humanoid skeleton.
    pub rest: Option<VrmaRest>,
}

/// Reads a file's humanoid-bone clip; `animation` picks one by name or index (the
/// first when `None`). The file is read whole (see the module header).
pub fn load(path: &Path, animation: Option<&str>) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let bytes = std::fs::read(path).map_err(|source| DocError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&bytes, path, animation)
}

/// Parses a glTF or GLB's humanoid-bone clip; `path` names the file in messages and
/// resolves external buffers.
pub fn parse(
    bytes: &[u8],
    path: &Path,
    animation: Option<&str>,
) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let mut doc = GltfDoc::from_bytes(bytes, path)?;
    // The channels live in the untyped JSON: gltf-json cannot type node-less ones.
    let animations = match doc.raw.get("animations") {
        None => Vec::new(),
        Some(Value::Array(list)) => list.clone(),
        Some(_) => return Err(invalid(path, "animations", "expected an array")),
    };
    let (hips_bind_world, rest) = if declares_skeleton(&doc.raw) {
        let rig = gltf::parse(bytes, path)?;
        reference_of(&rig)
    } else {
        let standard = Vec3::new(0.0, STANDARD_HIPS_HEIGHT, 0.0);
        (Affine3A::from_translation(standard), None)
    };
    let index = pick_animation(&animations, path, animation)?;
    let anim = &animations[index];
    let mut clip = read_channels(&mut doc, anim, index)?;
    clip.hips_bind_world = hips_bind_world;
    clip.rest = rest;
    clip.name = anim.get("name").and_then(Value::as_str).map(str::to_owned);
    Ok(clip)
}

/// Whether a glTF or GLB has animation channels that target a `humanoidBoneName`
/// (cheap: reads the JSON only; `false` for anything that does not parse).
#[must_use]
pub fn has_humanoid_channels(bytes: &[u8]) -> bool {
    let json = if bytes.starts_with(b"glTF") {
        match super::glb::split_glb(bytes) {
            Ok((json, _)) => json,
            Err(_) => return false,
        }
    } else {
        bytes
    };
    let json = json.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(json);
    let end = json
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let Ok(raw) = serde_json::from_slice::<Value>(&json[..end]) else {
        return false;
    };
    raw.get("animations")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter().any(|a| {
                a.get("channels")
                    .and_then(Value::as_array)
                    .is_some_and(|channels| {
                        channels.iter().any(|c| {
                            c.pointer(&format!("/target/extensions/{EXTENSION}"))
                                .is_some()
                        })
                    })
            })
        })
}

/// The humanoid skeleton(s) a glTF or GLB declares, read as a rig (`formats::gltf`), its
/// animations left out: for a clip file, its reference model.
pub fn reference_rig(bytes: &[u8], path: &Path) -> Result<Rig, ExtHumanoidError> {
    Ok(gltf::parse(bytes, path)?)
}

/// Whether the file's root extension declares a humanoid skeleton, in any form.
fn declares_skeleton(raw: &Value) -> bool {
    raw.get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(|ext| {
            ["humanoidSkeletons", "humanoidSkeleton", "humanoidBones"]
                .iter()
                .any(|key| ext.get(key).is_some())
        })
}

/// The hips' bind world and the reference T-pose of a file's humanoid skeleton.
fn reference_of(rig: &Rig) -> (Affine3A, Option<VrmaRest>) {
    let standard = Affine3A::from_translation(Vec3::new(0.0, STANDARD_HIPS_HEIGHT, 0.0));
    let Some(map) = &rig.bone_map else {
        return (standard, None);
    };
    let world = rig.skeleton.rest_world();
    let joint_of = |bone: HumanBone| map.bones.get(&bone).and_then(|n| rig.skeleton.find(n));
    let mut known = [None; BONE_COUNT];
    for bone in ALL {
        known[bone.index()] = joint_of(bone).map(|j| Vec3::from(world[j].translation));
    }
    let hips = joint_of(B::Hips).map_or(standard, |j| world[j]);
    (hips, Some(VrmaRest::from_positions(&known, None)))
}

/// The index of the animation called `name` (or at index `name`); the first when
/// `None`.
fn pick_animation(
    animations: &[Value],
    path: &Path,
    name: Option<&str>,
) -> Result<usize, ExtHumanoidError> {
    if animations.is_empty() {
        return Err(invalid(path, "animations", "the file has no animation"));
    }
    let Some(n) = name else { return Ok(0) };
    let name_of = |a: &Value| a.get("name").and_then(Value::as_str).map(str::to_owned);
    animations
        .iter()
        .position(|a| name_of(a).as_deref() == Some(n))
        .or_else(|| n.parse::<usize>().ok().filter(|i| *i < animations.len()))
        .ok_or_else(|| {
            let names: Vec<String> = animations
                .iter()
                .enumerate()
                .map(|(i, a)| name_of(a).unwrap_or_else(|| i.to_string()))
                .collect();
            invalid(
                path,
                "animations",
                format!("no animation `{n}` (the file has: {})", names.join(", ")),
            )
        })
}

/// What one channel of the animation targets.
enum ChannelTarget {
    /// A humanoid bone, by `humanoidBoneName`.
    Bone(HumanBone),
    /// A node, the core glTF way (ignored here).
    Node,
}

/// A channel's sampler, read from the untyped JSON.
struct SamplerRef {
    input: usize,
    output: usize,
    interpolation: Interpolation,
}

fn index_at(value: Option<&Value>) -> Option<usize> {
    value
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
}

fn read_channels(
    doc: &mut GltfDoc,
    anim: &Value,
    index: usize,
) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let path = doc.path;
    let empty = Vec::new();
    let list = |key: &str| -> Result<&Vec<Value>, ExtHumanoidError> {
        match anim.get(key) {
            None => Ok(&empty),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(invalid(
                path,
                &format!("animations[{index}].{key}"),
                "expected an array",
            )),
        }
    };
    let (channels, samplers) = (list("channels")?, list("samplers")?);
    let mut clip = ExtHumanoidClip {
        name: None,
        duration: 0.0,
        tracks: Vec::new(),
        hips_translation: None,
        hips_bind_world: Affine3A::IDENTITY,
        rest: None,
    };
    // Per sampler: the first channel using it, and whether that one is humanoid.
    let mut users: Vec<Option<(usize, bool)>> = vec![None; samplers.len()];
    // Per bone: the channel that gave its rotation.
    let mut rotation_from: [Option<usize>; BONE_COUNT] = [None; BONE_COUNT];
    let mut hips_from: Option<usize> = None;
    for (c, channel) in channels.iter().enumerate() {
        let place = format!("animations[{index}].channels[{c}]");
        let Some(s) = index_at(channel.get("sampler")) else {
            return Err(invalid(path, &place, "expected a `sampler` index"));
        };
        if s >= samplers.len() {
            return Err(invalid(path, &place, format!("sampler {s} does not exist")));
        }
        let target = channel.get("target");
        let property = target.and_then(|t| t.get("path")).and_then(Value::as_str);
        let Some(property) = property else {
            return Err(invalid(path, &place, "expected a `target.path` string"));
        };
        let ext = target
            .and_then(|t| t.get("extensions"))
            .and_then(|e| e.get(EXTENSION));
        let kind = match ext {
            None => ChannelTarget::Node,
            Some(ext) => {
                let bone_place = format!("{place}.target.extensions.{EXTENSION}.humanoidBoneName");
                let Some(name) = ext.get("humanoidBoneName").and_then(Value::as_str) else {
                    return Err(invalid(path, &bone_place, "expected a bone name string"));
                };
                let bone = name.parse::<HumanBone>().map_err(|_| {
                    invalid(
                        path,
                        &place,
                        format!("humanoidBoneName `{name}` is not an {EXTENSION} bone name"),
                    )
                })?;
                ChannelTarget::Bone(bone)
            }
        };
        let humanoid = matches!(kind, ChannelTarget::Bone(_));
        match users[s] {
            Some((first, was_humanoid)) if was_humanoid != humanoid => {
                return Err(invalid(
                    path,
                    &place,
                    format!(
                        "sampler {s} is shared with channels[{first}], but only one of them \
                         targets a humanoid bone ({EXTENSION} forbids that)"
                    ),
                ));
            }
            Some(_) => {}
            None => users[s] = Some((c, humanoid)),
        }
        let ChannelTarget::Bone(bone) = kind else {
            continue;
        };
        let duplicate = |first: usize| {
            invalid(
                path,
                &place,
                format!("`{bone}` {property} is already animated by channels[{first}]"),
            )
        };
        let sampler_place = format!("animations[{index}].samplers[{s}]");
        match property {
            "rotation" => {
                if let Some(first) = rotation_from[bone.index()] {
                    return Err(duplicate(first));
                }
                rotation_from[bone.index()] = Some(c);
                let sampler = sampler_ref(path, &samplers[s], &sampler_place)?;
                let (times, flat) = read_keys(doc, &sampler, 4)?;
                let values: Vec<Quat> = flat
                    .chunks_exact(4)
                    .map(|v| from_channel_rotation(bone, Quat::from_xyzw(v[0], v[1], v[2], v[3])))
                    .collect();
                let keys = keyframes(path, &sampler_place, times, values, sampler.interpolation)?;
                clip.tracks.push((bone, keys));
            }
            "translation" if bone == B::Hips => {
                if let Some(first) = hips_from {
                    return Err(duplicate(first));
                }
                hips_from = Some(c);
                let sampler = sampler_ref(path, &samplers[s], &sampler_place)?;
                let (times, flat) = read_keys(doc, &sampler, 3)?;
                let values: Vec<Vec3> = flat.chunks_exact(3).map(Vec3::from_slice).collect();
                let keys = keyframes(path, &sampler_place, times, values, sampler.interpolation)?;
                clip.hips_translation = Some(keys);
            }
            // Not applicable accurately across models, says the spec: ignored.
            "translation" | "scale" => {}
            other => {
                return Err(invalid(
                    path,
                    &place,
                    format!(
                        "a humanoid bone channel must animate rotation, translation or scale, not `{other}`"
                    ),
                ));
            }
        }
    }
    if clip.tracks.is_empty() && clip.hips_translation.is_none() {
        return Err(invalid(
            path,
            &format!("animations[{index}]"),
            format!("no channel animates a humanoid bone ({EXTENSION})"),
        ));
    }
    clip.tracks.sort_by_key(|(bone, _)| *bone);
    clip.duration = clip.last_key_time();
    Ok(clip)
}

fn sampler_ref(path: &Path, sampler: &Value, place: &str) -> Result<SamplerRef, ExtHumanoidError> {
    let (Some(input), Some(output)) = (
        index_at(sampler.get("input")),
        index_at(sampler.get("output")),
    ) else {
        return Err(invalid(
            path,
            place,
            "expected `input` and `output` accessor indices",
        ));
    };
    let interpolation = match sampler.get("interpolation").map(Value::as_str) {
        None | Some(Some("LINEAR")) => Interpolation::Linear,
        Some(Some("STEP")) => Interpolation::Step,
        Some(Some("CUBICSPLINE")) => Interpolation::CubicSpline,
        Some(other) => {
            return Err(invalid(
                path,
                place,
                format!(
                    "unknown interpolation {}",
                    other.map_or_else(|| "(not a string)".to_owned(), |s| format!("`{s}`"))
                ),
            ));
        }
    };
    Ok(SamplerRef {
        input,
        output,
        interpolation,
    })
}

/// A sampler's key times (shared between channels) and its output floats.
fn read_keys(
    doc: &mut GltfDoc,
    sampler: &SamplerRef,
    components: usize,
) -> Result<(Arc<[f32]>, Vec<f32>), ExtHumanoidError> {
    let times = doc.read_times(sampler.input)?;
    Ok((times, doc.read_floats(sampler.output, components)?))
}

fn keyframes<T: KeyValue>(
    path: &Path,
    place: &str,
    times: Arc<[f32]>,
    values: Vec<T>,
    interpolation: Interpolation,
) -> Result<Keyframes<T>, ExtHumanoidError> {
    Keyframes::new(times, values, interpolation).map_err(|e| invalid(path, place, e.to_string()))
}

impl ExtHumanoidClip {
    fn last_key_time(&self) -> f32 {
        let tracks = self.tracks.iter().map(|(_, k)| k.end());
        tracks
            .chain(self.hips_translation.as_ref().map(Keyframes::end))
            .fold(0.0, f32::max)
    }

    /// The humanoid bones that have a rotation track.
    pub fn bones(&self) -> impl Iterator<Item = HumanBone> + '_ {
        self.tracks.iter().map(|(b, _)| *b)
    }

    /// The key times of the densest track (the frames of a recording).
    #[must_use]
    pub fn key_times(&self) -> &[f32] {
        let rotations = self.tracks.iter().map(|(_, k)| k.times());
        rotations
            .chain(self.hips_translation.as_ref().map(|k| k.times()))
            .max_by_key(|times| times.len())
            .unwrap_or(&[])
    }

    /// The hips position at `t` seconds, model space: `bindWorld(hips) · translation`.
    #[must_use]
    pub fn hips_position(&self, t: f32) -> Vec3 {
        let offset = self
            .hips_translation
            .as_ref()
            .map_or(Vec3::ZERO, |k| k.sample(t));
        self.hips_bind_world.transform_point3(offset)
    }

    /// Fills `pose` at `t` seconds (clamped to the clip): the normalized rotation of
    /// every tracked bone, the hips position and the reference hips height. Other
    /// bones, expressions and lookAt are untouched. Allocates nothing.
    pub fn sample(&self, t: f32, pose: &mut HumanoidPose) {
        for (bone, keys) in &self.tracks {
            pose.set_rotation(*bone, keys.sample(t));
        }
        pose.hips_position = self.hips_position(t);
        let height = self.hips_bind_world.translation.y;
        if height > 0.0 && height.is_finite() {
            pose.rest_hips_height = height;
        }
    }
}

// ---------------------------------------------------------------------------------
// Applying a clip to a model, the spec's way

/// Poses `model` at `t` seconds with the spec's formula: every joint the model's
/// humanoid map names and the clip animates gets `bindLocal · r(b)` (`bindLocal` the
/// joint's rest local rotation, the bind local when the file has inverse bind
/// matrices); every other joint its rest. Exact only for models whose bind frames
/// follow the canonical frames (see the module header); `retarget::FromNormalized`
/// works for any. Looks joints up by name: build-time cost, not for a per-frame loop
/// over large rigs.
pub fn apply_to_model(
    clip: &ExtHumanoidClip,
    t: f32,
    model: &Rig,
    out_local_rotations: &mut [Quat],
) -> Result<(), ExtHumanoidError> {
    let map = model.bone_map.as_ref().ok_or(ExtHumanoidError::NoBoneMap)?;
    let joints = model.skeleton.joints();
    let Some(out) = out_local_rotations.get_mut(..joints.len()) else {
        return Err(ExtHumanoidError::OutputTooShort {
            needed: joints.len(),
            got: out_local_rotations.len(),
        });
    };
    for (slot, joint) in out.iter_mut().zip(joints) {
        *slot = joint.rest.rotation;
    }
    for (bone, keys) in &clip.tracks {
        let Some(j) = map.bones.get(bone).and_then(|n| model.skeleton.find(n)) else {
            continue;
        };
        let channel = to_channel_rotation(*bone, keys.sample(t));
        out[j] = (joints[j].rest.rotation * channel).normalize();
    }
    Ok(())
}

/// The local translation of `model`'s hips joint at `t` seconds with the spec's
/// formula, `bindLocal · translate(t)`: the bind local translation plus the channel
/// value in the hips' bind frame. `None` when the model maps no hips.
#[must_use]
pub fn model_hips_translation(clip: &ExtHumanoidClip, t: f32, model: &Rig) -> Option<Vec3> {
    let name = model.bone_map.as_ref()?.bones.get(&B::Hips)?;
    let rest = model.skeleton.joints()[model.skeleton.find(name)?].rest;
    let offset = clip
        .hips_translation
        .as_ref()
        .map_or(Vec3::ZERO, |k| k.sample(t));
    Some(rest.to_affine().transform_point3(offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retarget::{FromNormalized, MappedSkeleton, TargetRig};

    fn performance() -> (ExtHumanoidWriter, Vec<(f32, HumanoidPose)>) {
        let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "test take");
        let mut frames = Vec::new();
        for i in 0..40 {
            let t = i as f32 / 30.0;
            let pose = crate::takes::demo::pose_at(t, 0.9);
            writer.push(t, &pose).unwrap();
            frames.push((t, pose));
        }
        (writer, frames)
    }

    /// The bone whose position the T-pose direction of `bone` points at, if any.
    fn child(bone: HumanBone) -> Option<HumanBone> {
        let left = if bone.side() == Side::Right {
            bone.mirrored()
        } else {
            bone
        };
        let next = match left {
            B::Hips => B::Spine,
            B::Spine => B::Chest,
            B::Chest => B::UpperChest,
            B::UpperChest => B::Neck,
            B::Neck => B::Head,
            B::LeftShoulder => B::LeftUpperArm,
            B::LeftUpperArm => B::LeftLowerArm,
            B::LeftLowerArm => B::LeftHand,
            B::LeftHand => B::LeftMiddleProximal,
            B::LeftUpperLeg => B::LeftLowerLeg,
            B::LeftLowerLeg => B::LeftFoot,
            B::LeftFoot => B::LeftToes,
            b => ALL
                .into_iter()
                .find(|c| c.parent() == Some(b) && c.is_finger())?,
        };
        Some(if bone.side() == Side::Right {
            next.mirrored()
        } else {
            next
        })
    }

    /// Angle between two rotations, radians; precise for tiny angles, where
    /// `Quat::angle_between`'s acos is not (its f32 resolution is about 3e-4 rad).
    fn rotation_angle(a: Quat, b: Quat) -> f32 {
        let d = a.conjugate() * b;
        2.0 * d.xyz().length().atan2(d.w.abs())
    }

    fn angle(a: Vec3, b: Vec3) -> f32 {
        a.cross(b).length().atan2(a.dot(b)).to_degrees()
    }

    #[test]
    fn canonical_frames_point_along_the_t_pose_bones_and_mirror() {
        let rest = VrmaRest::standard(0.95);
        for bone in ALL {
            let c = canonical_frame(bone);
            assert!(c.is_normalized(), "{bone}");
            let (x, y) = canonical_axes(bone);
            assert!(x.dot(y).abs() < 1e-6 && x.is_normalized() && y.is_normalized());
            assert!((c * Vec3::X).abs_diff_eq(x, 1e-6), "{bone}");
            assert!((c * Vec3::Y).abs_diff_eq(y, 1e-6), "{bone}");
            if let Some(next) = child(bone) {
                let mut d = rest.position(next) - rest.position(bone);
                let tolerance = match bone {
                    // Toes are below the ankle: the foot is +Z by the spec, flattened.
                    B::LeftFoot | B::RightFoot => {
                        d.y = 0.0;
                        1e-4
                    }
                    // The middle finger's root sits 5 mm forward of the wrist's line.
                    B::LeftHand | B::RightHand => 4.0,
                    _ => 1e-4,
                };
                assert!(angle(c * Vec3::Y, d) <= tolerance, "{bone} toward {next}");
            }
            let m = canonical_frame(bone.mirrored());
            let mirror = |v: Vec3| Vec3::new(-v.x, v.y, v.z);
            assert!(
                (m * Vec3::Y).abs_diff_eq(mirror(c * Vec3::Y), 1e-6),
                "{bone}"
            );
            assert!(
                (m * Vec3::X).abs_diff_eq(-mirror(c * Vec3::X), 1e-6),
                "{bone}"
            );
        }
        // Leaves: head up, eyes and jaw forward, toes forward, thumbs 45°.
        assert!((canonical_frame(B::Head) * Vec3::Y).abs_diff_eq(Vec3::Y, 1e-6));
        assert!((canonical_frame(B::LeftEye) * Vec3::Y).abs_diff_eq(Vec3::Z, 1e-6));
        assert!((canonical_frame(B::LeftToes) * Vec3::Y).abs_diff_eq(Vec3::Z, 1e-6));
        let thumb = canonical_frame(B::RightThumbDistal) * Vec3::Y;
        assert!(thumb.abs_diff_eq(Vec3::new(-1.0, 0.0, 1.0).normalize(), 1e-6));
    }

    #[test]
    fn positive_x_rotations_bend_joints_like_muscles_contracting() {
        // Where the bone's +Y ends up after a positive turn about its own +X, as a
        // normalized (model-space) rotation would put it.
        let bent = |bone: HumanBone| {
            let n = from_channel_rotation(bone, Quat::from_rotation_x(0.5));
            n * (canonical_frame(bone) * Vec3::Y)
        };
        for side in [1.0f32, -1.0] {
            let pick = |left: HumanBone| if side > 0.0 { left } else { left.mirrored() };
            assert!(
                bent(pick(B::LeftLowerArm)).z > 0.4,
                "elbow: forearm forward"
            );
            assert!(bent(pick(B::LeftHand)).y < -0.4, "wrist: hand down");
            assert!(
                bent(pick(B::LeftIndexProximal)).y < -0.4,
                "finger: curls down"
            );
            assert!(bent(pick(B::LeftUpperLeg)).z > 0.4, "hip: knee forward");
            assert!(bent(pick(B::LeftLowerLeg)).z < -0.4, "knee: shin back");
            assert!(bent(pick(B::LeftFoot)).y > 0.4, "ankle: toes up");
            assert!(bent(pick(B::LeftToes)).y < -0.4, "toes: curl down");
            assert!(bent(pick(B::LeftShoulder)).y > 0.4, "shoulder: up");
            assert!(bent(pick(B::LeftUpperArm)).y < -0.4, "upper arm: down");
            let thumb = bent(pick(B::LeftThumbProximal));
            assert!(
                thumb.z < 0.6 && thumb.x * side > 0.75,
                "thumb: toward the fingers"
            );
        }
        assert!(bent(B::Spine).z > 0.4 && bent(B::Head).z > 0.4, "forward");
        assert!(bent(B::Jaw).y > 0.4, "jaw closes");
    }

    #[test]
    fn written_files_read_back_exactly() {
        let (writer, frames) = performance();
        let bytes = writer.to_bytes();
        let read = parse(&bytes, Path::new("take.glb"), None).unwrap();
        assert_eq!(read.name.as_deref(), Some("test take"));
        assert!((read.duration - 39.0 / 30.0).abs() < 1e-6);
        assert!(read.bones().any(|b| b == B::Chest));
        for (t, want) in &frames {
            let mut got = HumanoidPose::default();
            read.sample(*t, &mut got);
            for (bone, q) in want.bones() {
                let r = got.rotation(bone).unwrap();
                assert!(rotation_angle(q, r) <= 1e-5, "{bone} at {t}");
            }
            assert_eq!(got.bones().count(), want.bones().count());
            assert!(got.hips_position.distance(want.hips_position) < 1e-6);
            assert!((got.rest_hips_height - 0.9).abs() < 1e-6);
        }
        let rest = read.rest.unwrap();
        for bone in ALL {
            let want = VrmaRest::standard(0.9).position(bone);
            assert!(rest.position(bone).distance(want) < 1e-5, "{bone}");
        }
    }

    #[test]
    fn push_rejects_time_going_backwards_and_nan() {
        let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "x");
        let pose = HumanoidPose::default();
        writer.push(1.0, &pose).unwrap();
        assert!(matches!(
            writer.push(1.0, &pose),
            Err(PushError::TimeNotIncreasing { .. })
        ));
        assert!(matches!(
            writer.push(f32::NAN, &pose),
            Err(PushError::NotFinite(_))
        ));
        let mut bad = pose;
        bad.hips_position.x = f32::INFINITY;
        assert!(writer.push(2.0, &bad).is_err());
        assert_eq!(writer.frame_count(), 1);
    }

    #[test]
    fn an_empty_writer_writes_one_reference_pose_frame() {
        let writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "empty");
        let read = parse(&writer.to_bytes(), Path::new("e.glb"), None).unwrap();
        assert_eq!(read.duration, 0.0);
        assert_eq!(read.bones().count(), 0);
        let mut pose = HumanoidPose::default();
        read.sample(0.0, &mut pose);
        assert!(
            pose.hips_position
                .abs_diff_eq(Vec3::new(0.0, 0.9, 0.0), 1e-6)
        );
    }

    use crate::formats::glb::with_json;

    #[test]
    fn every_form_of_the_skeleton_definition_is_read() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        let skeleton = |v: &Value| v["extensions"][EXTENSION]["humanoidSkeletons"][0].clone();
        let forms: Vec<(&str, Vec<u8>)> = vec![
            ("array (README)", good.clone()),
            (
                "single object (schema)",
                with_json(&good, |v| {
                    let one = skeleton(v);
                    v["extensions"][EXTENSION] = json!({ "humanoidSkeleton": one });
                }),
            ),
            (
                "bare object",
                with_json(&good, |v| v["extensions"][EXTENSION] = skeleton(v)),
            ),
        ];
        for (what, bytes) in forms {
            let clip = parse(&bytes, Path::new("forms.glb"), None).unwrap();
            let hips = clip.hips_bind_world.translation;
            assert!((hips.y - 0.9).abs() < 1e-6, "{what}: {hips}");
            let rig = reference_rig(&bytes, Path::new("forms.glb")).unwrap();
            let map = rig.bone_map.unwrap();
            assert_eq!(map.bones.len(), BONE_COUNT, "{what}");
            assert!(map.bones.contains_key(&B::Chest), "{what}");
        }
        // A clip with no skeleton at all stands on the standard hips.
        let bare = with_json(&good, |v| {
            v.as_object_mut().unwrap().remove("extensions");
        });
        let clip = parse(&bare, Path::new("bare.glb"), None).unwrap();
        assert!(clip.rest.is_none());
        assert!((clip.hips_bind_world.translation.y - STANDARD_HIPS_HEIGHT).abs() < 1e-6);
    }

    #[test]
    fn bad_files_give_one_clear_error_each() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        let mut nan_key = good.clone();
        // The first float of the binary chunk is the first key time.
        let bin_len = crate::formats::glb::split_glb(&good)
            .unwrap()
            .1
            .unwrap()
            .len();
        let bin_start = good.len() - bin_len;
        nan_key[bin_start..bin_start + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        let channel = |v: &mut Value, c: usize| v["animations"][0]["channels"][c].take();
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            (
                "truncated GLB",
                good[..good.len() / 2].to_vec(),
                "truncated GLB",
            ),
            (
                "wrong magic",
                [b"GLTF", &good[4..]].concat(),
                "not a glTF file",
            ),
            (
                "missing buffer",
                with_json(&good, |v| v["buffers"][0]["uri"] = "gone.bin".into()),
                "buffer 0 (`gone.bin`) is missing",
            ),
            (
                "NaN key",
                nan_key,
                "animations[0].samplers[0]: time at key 0",
            ),
            (
                "unknown bone",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][3]["target"]["extensions"][EXTENSION]["humanoidBoneName"] =
                        "tail".into();
                }),
                "animations[0].channels[3]: humanoidBoneName `tail` is not an EXT_skeleton_humanoid bone name",
            ),
            (
                "shared sampler",
                with_json(&good, |v| {
                    let mut plain = channel(v, 2);
                    plain["target"] = json!({"node": 5, "path": "rotation"});
                    v["animations"][0]["channels"][2] = plain;
                    v["animations"][0]["channels"][2]["sampler"] = 1.into();
                }),
                "animations[0].channels[2]: sampler 1 is shared with channels[1]",
            ),
            (
                "same bone twice",
                with_json(&good, |v| {
                    let copy = v["animations"][0]["channels"][1].clone();
                    v["animations"][0]["channels"]
                        .as_array_mut()
                        .unwrap()
                        .push(copy);
                }),
                "`hips` rotation is already animated by channels[1]",
            ),
            (
                "weights",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][1]["target"]["path"] = "weights".into()
                }),
                "must animate rotation, translation or scale, not `weights`",
            ),
            (
                "no humanoid channel",
                with_json(&good, |v| {
                    // Plain node channels (the hips translation is channel 0).
                    let channels = v["animations"][0]["channels"].as_array_mut().unwrap();
                    for (i, c) in channels.iter_mut().enumerate() {
                        let path = if i == 0 { "translation" } else { "rotation" };
                        c["target"] = json!({"node": 0, "path": path});
                    }
                }),
                "animations[0]: no channel animates a humanoid bone",
            ),
            (
                "sampler out of range",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][4]["sampler"] = 999.into()
                }),
                "animations[0].channels[4]: sampler 999 does not exist",
            ),
            (
                "accessor out of range",
                with_json(&good, |v| v["accessors"][3]["count"] = 100_000.into()),
                "accessor 3",
            ),
            (
                "bad interpolation",
                with_json(&good, |v| {
                    v["animations"][0]["samplers"][2]["interpolation"] = "SMOOTH".into()
                }),
                "animations[0].samplers[2]: unknown interpolation `SMOOTH`",
            ),
            (
                "no animation",
                with_json(&good, |v| {
                    v.as_object_mut().unwrap().remove("animations");
                }),
                "animations: the file has no animation",
            ),
        ];
        for (what, bytes, expected) in cases {
            let err = match parse(&bytes, Path::new("bad.glb"), None) {
                Ok(_) => panic!("{what}: accepted"),
                Err(e) => e.to_string(),
            };
            assert!(err.starts_with("bad.glb"), "{what}: {err}");
            assert!(err.contains(expected), "{what}: `{err}` lacks `{expected}`");
            assert!(!err.contains('\n'), "{what}: {err}");
        }
        let err = parse(&good, Path::new("bad.glb"), Some("walk")).unwrap_err();
        assert!(
            err.to_string()
                .contains("no animation `walk` (the file has: test take)")
        );
    }

    #[test]
    fn every_prefix_of_a_file_fails_without_panicking() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        for len in (0..good.len()).step_by(89) {
            assert!(
                parse(&good[..len], Path::new("cut.glb"), None).is_err(),
                "{len}"
            );
        }
    }

    #[test]
    fn on_its_own_reference_model_the_spec_formula_is_the_retargeter() {
        let (writer, frames) = performance();
        let bytes = writer.to_bytes();
        let clip = parse(&bytes, Path::new("take.glb"), None).unwrap();
        let rig = reference_rig(&bytes, Path::new("take.glb")).unwrap();
        let mut mapped =
            MappedSkeleton::new(rig.skeleton.clone(), rig.bone_map.as_ref().unwrap()).unwrap();
        // The reference skeleton is the T-pose by definition: no rest correction.
        mapped.correction.local.fill(Quat::IDENTITY);
        let target = TargetRig::new(&mapped);
        let n = rig.skeleton.len();
        let (mut spec, mut retargeted) = (vec![Quat::IDENTITY; n], vec![Quat::IDENTITY; n]);
        for (t, _) in &frames {
            apply_to_model(&clip, *t, &rig, &mut spec).unwrap();
            let mut pose = HumanoidPose::default();
            clip.sample(*t, &mut pose);
            // Same body: no scaling of the hips (the retargeter measures the hips
            // height from the lowest joint, the clip from the origin).
            pose.rest_hips_height = mapped.rest_hips_height();
            let mut hips = Vec3::ZERO;
            FromNormalized {
                target: &target,
                pose: &pose,
                local_rotations: &mut retargeted,
                hips_translation: &mut hips,
            }
            .run()
            .unwrap();
            for j in 0..n {
                let d = rotation_angle(spec[j], retargeted[j]);
                assert!(d <= 1e-5, "joint {j} at {t}: {d} rad");
            }
            let spec_hips = model_hips_translation(&clip, *t, &rig).unwrap();
            assert!(spec_hips.distance(hips) < 1e-5, "hips at {t}");
        }
        let mut short = [Quat::IDENTITY; 3];
        assert!(matches!(
            apply_to_model(&clip, 0.0, &rig, &mut short),
            Err(ExtHumanoidError::OutputTooShort { got: 3, .. })
        ));
    }
}
