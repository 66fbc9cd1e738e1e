//! `EXT_skeleton_humanoid` animations (spec: `../shared/seeds/EXT_skeleton_humanoid.txt`):
//! writing a performance as a self-contained GLB, reading the humanoid channels of any
//! file into normalized `HumanoidPose`s, and applying such a clip to a model with the
//! spec's inverse-bind-matrix formula.
//!
//! One file per part: `canonical` (the frames `C(b)`), `write` (the GLB writer),
//! `read` (clips from any file) and `apply` (the spec's formula on a model).
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

mod apply;
mod canonical;
mod read;
#[cfg(test)]
mod test_support;
mod write;

use std::io;
use std::path::{Path, PathBuf};

pub use apply::{apply_to_model, model_hips_translation};
pub use canonical::{canonical_frame, from_channel_rotation, to_channel_rotation};
pub use read::{ExtHumanoidClip, has_humanoid_channels, load, parse, reference_rig};
pub use write::ExtHumanoidWriter;

use super::gltf::{DocError, GltfError};

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

/// An `Invalid` error at `place` in the file at `path`.
fn invalid(path: &Path, place: &str, message: impl Into<String>) -> ExtHumanoidError {
    ExtHumanoidError::Invalid {
        path: path.to_owned(),
        place: place.to_owned(),
        message: message.into(),
    }
}
