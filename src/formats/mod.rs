//! File formats that carry skeletons (and their motion): BVH, glTF/GLB (plain rigs,
//! VRM 0.x, VRM 1.0, EXT_skeleton_humanoid) and the project's skeleton JSON.
//!
//! Every loader returns a `Rig` already in the internal space: metres, +Y up, glTF
//! handedness. Loaders are pure over bytes (`parse_*` functions) with a thin
//! `load(path)` that reads the file; errors name the file and the place. A glTF
//! file's lengths are scaled in `load_rig`, after the glTF loader (`gltf::in_metres`:
//! a file an exporter left in centimetres or millimetres).
//! `mannequin` writes the other way: the avatar the bridge ships, as a VRM 1.0.

pub mod bvh;
pub mod ext_humanoid;
pub mod file_type;
pub mod frame_ranges;
pub mod glb;
pub mod gltf;
pub mod ik_limbs;
pub mod inspect;
pub mod knee_bend;
pub mod mannequin;
pub mod mean_pose;
pub mod sampler;
pub mod skeleton_json;
pub mod still_map;
pub mod text_encoding;
pub mod tracks;
pub mod units;
pub mod vrma;

use std::path::{Path, PathBuf};

use glam::{Quat, Vec3};

use crate::skeleton::{NamedBoneMap, Skeleton};

pub use file_type::file_type;
pub use units::{Basis, Units, UpAxis};

/// A skeleton read from a file, with what the file says about it.
#[derive(Debug, Clone)]
pub struct Rig {
    pub skeleton: Skeleton,
    /// The humanoid map the file declares itself (VRM humanoid,
    /// EXT_skeleton_humanoid, a skeleton JSON's `boneMap`).
    pub bone_map: Option<NamedBoneMap>,
    /// Where `bone_map` came from, for messages (`VRMC_vrm humanoid`).
    pub map_source: Option<String>,
    /// Animation clips the file carries (a BVH's `MOTION`, a glTF's animations),
    /// sampled per frame; empty when the file has none.
    pub clips: Vec<Clip>,
    /// What the loader noticed and a user should know (guessed units, ...).
    pub notes: Vec<String>,
    /// The file's length unit: every length the file holds was multiplied by its
    /// `metres_per_unit` into the metres of `skeleton` and `clips`.
    pub units: Units,
}

/// A named animation of a rig.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// The animation's name in the file (a BVH clip is named after the file).
    pub name: String,
    pub motion: Motion,
}

impl Rig {
    /// The clip called `name`, or the one at index `name` parses to; the first clip
    /// when `name` is `None`.
    #[must_use]
    pub fn clip(&self, name: Option<&str>) -> Option<&Clip> {
        match name {
            None => self.clips.first(),
            Some(n) => self
                .clips
                .iter()
                .find(|c| c.name == n)
                .or_else(|| n.parse::<usize>().ok().and_then(|i| self.clips.get(i))),
        }
    }
}

/// Frames of local joint transforms with their times, in internal space.
#[derive(Debug, Clone, PartialEq)]
pub struct Motion {
    /// Time of each frame, seconds from the clip's start, non-decreasing.
    times: Vec<f32>,
    joint_count: usize,
    rotations: Vec<Quat>,
    translations: Vec<Vec3>,
}

/// One frame of a `Motion`: local rotation and translation per joint.
#[derive(Debug, Clone, Copy)]
pub struct FrameRef<'a> {
    pub rotations: &'a [Quat],
    pub translations: &'a [Vec3],
}

impl Motion {
    /// Builds a motion from frame times and flat per-frame arrays
    /// (`times.len() × joint_count` each).
    ///
    /// # Panics
    /// When the arrays are not whole frames of the same length (a loader bug).
    #[must_use]
    pub fn new(
        times: Vec<f32>,
        joint_count: usize,
        rotations: Vec<Quat>,
        translations: Vec<Vec3>,
    ) -> Self {
        assert!(joint_count > 0 && rotations.len() == times.len() * joint_count);
        assert_eq!(rotations.len(), translations.len());
        Self {
            times,
            joint_count,
            rotations,
            translations,
        }
    }

    /// Builds a motion sampled every `frame_time` seconds from time 0.
    #[must_use]
    pub fn uniform(
        frame_time: f32,
        joint_count: usize,
        rotations: Vec<Quat>,
        translations: Vec<Vec3>,
    ) -> Self {
        let frames = rotations.len() / joint_count.max(1);
        let times = (0..frames).map(|i| i as f32 * frame_time).collect();
        Self::new(times, joint_count, rotations, translations)
    }

    /// Time of every frame, seconds.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Length of the clip, seconds (0 for a single frame).
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.times.last().copied().unwrap_or(0.0) - self.times.first().copied().unwrap_or(0.0)
    }

    /// Frames per second on average (0 for a single frame).
    #[must_use]
    pub fn mean_rate(&self) -> f32 {
        let d = self.duration();
        if d > 0.0 {
            (self.frame_count() - 1) as f32 / d
        } else {
            0.0
        }
    }

    /// How many frames there are.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Frame `i` (`i < frame_count()`).
    #[must_use]
    pub fn frame(&self, i: usize) -> FrameRef<'_> {
        let range = i * self.joint_count..(i + 1) * self.joint_count;
        FrameRef {
            rotations: &self.rotations[range.clone()],
            translations: &self.translations[range],
        }
    }

    /// Moves `joint` by `by` (in its parent's space) in every frame.
    pub fn translate_joint(&mut self, joint: usize, by: Vec3) {
        if joint < self.joint_count {
            for t in self
                .translations
                .iter_mut()
                .skip(joint)
                .step_by(self.joint_count)
            {
                *t += by;
            }
        }
    }

    /// Rewrites every joint's rotation and translation in every frame by
    /// `f(joint, rotation, translation)`.
    pub fn map_joints(&mut self, f: impl Fn(usize, Quat, Vec3) -> (Quat, Vec3)) {
        let joints = self.joint_count.max(1);
        for (i, (r, t)) in self
            .rotations
            .iter_mut()
            .zip(self.translations.iter_mut())
            .enumerate()
        {
            (*r, *t) = f(i % joints, *r, *t);
        }
    }

    /// Every frame in order.
    pub fn frames(&self) -> impl Iterator<Item = FrameRef<'_>> {
        (0..self.frame_count()).map(|i| self.frame(i))
    }

    /// The pose at `t` seconds, clamped to the clip: rotations slerped and
    /// translations lerped between the frames around `t`. Writes into the given
    /// buffers (one entry per joint); allocates nothing.
    pub fn sample_into(&self, t: f32, rotations: &mut [Quat], translations: &mut [Vec3]) {
        let n = self.frame_count();
        if n == 0 {
            return;
        }
        // The last frame at or before t, and how far t is toward the next one.
        let after = self.times.partition_point(|&x| x <= t);
        let (a, b, f) = if after == 0 {
            (0, 0, 0.0)
        } else if after >= n {
            (n - 1, n - 1, 0.0)
        } else {
            let (t0, t1) = (self.times[after - 1], self.times[after]);
            let f = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
            (after - 1, after, f)
        };
        let (fa, fb) = (self.frame(a), self.frame(b));
        for j in 0..self
            .joint_count
            .min(rotations.len())
            .min(translations.len())
        {
            rotations[j] = fa.rotations[j].slerp(fb.rotations[j], f);
            translations[j] = fa.translations[j].lerp(fb.translations[j], f);
        }
    }
}

/// How to read files whose units or axes the format does not fix.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Override the unit (otherwise from the file or guessed from the height).
    pub units: Option<Units>,
    /// Override the up axis (otherwise from the file or guessed from the shape).
    pub up: Option<UpAxis>,
    /// A BVH take's rest from this other BVH file of the same skeleton (otherwise
    /// its zero pose, or a frame of its motion when that is no pose); a glTF rig's
    /// from this other glTF file of the same skeleton (otherwise its bind pose, its
    /// nodes' pose or a frame of its clips).
    pub rest_from: Option<PathBuf>,
}

/// Why a rig file cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error(transparent)]
    Bvh(#[from] bvh::BvhError),
    #[error(transparent)]
    Gltf(#[from] gltf::GltfError),
    #[error(transparent)]
    Json(#[from] skeleton_json::SkeletonJsonError),
    /// `LoadOptions::rest_from` given for a file that is no BVH take and no glTF rig.
    #[error(
        "{path}: --rest-from gives the rest of a BVH take or a glTF rig, and this is no .bvh, \
         .gltf, .glb or .vrm file"
    )]
    RestFromUnsupported { path: PathBuf },
    /// `expected` names the types the caller reads: `RIG_TYPES`, or
    /// `RIG_AND_VRMA_TYPES` after `or_vrma`.
    #[error("{path}: unknown file type (expected {expected})")]
    UnknownType {
        path: PathBuf,
        expected: &'static str,
    },
}

/// The file types `load_rig` reads.
pub const RIG_TYPES: &str = ".bvh, .gltf, .glb, .vrm or .json";

/// The file types of a command that reads VRM Animations as well as rigs.
pub const RIG_AND_VRMA_TYPES: &str = ".bvh, .gltf, .glb, .vrm, .vrma or .json";

impl FormatError {
    /// The error as a caller that reads `.vrma` files too (before `load_rig`)
    /// says it: an unknown type names `.vrma` among the types expected.
    #[must_use]
    pub fn or_vrma(self) -> Self {
        match self {
            Self::UnknownType { path, .. } => Self::UnknownType {
                path,
                expected: RIG_AND_VRMA_TYPES,
            },
            other => other,
        }
    }
}

/// Refuses `options.rest_from` for a `source` that is no BVH or glTF file (the
/// built-in performance when `None`; a `.vrma` is one only as a glTF clip of nodes,
/// `vrma::is_node_clip`): only those read their rest from another file.
pub fn check_rest_from(source: Option<&Path>, options: &LoadOptions) -> Result<(), FormatError> {
    let reads_rest = |p: &Path| match file_type(p).as_deref() {
        Some("bvh" | "gltf" | "glb" | "vrm") => true,
        Some("vrma") => vrma::is_node_clip(p),
        _ => false,
    };
    match source {
        Some(path) if reads_rest(path) => Ok(()),
        _ if options.rest_from.is_none() => Ok(()),
        _ => Err(FormatError::RestFromUnsupported {
            path: source
                .unwrap_or(Path::new("the built-in performance"))
                .to_owned(),
        }),
    }
}

/// Loads any supported rig file, chosen by its extension (`file_type`); a `.vrma`
/// only when it is a glTF clip of nodes under that name (`vrma::is_node_clip`).
pub fn load_rig(path: &Path, options: &LoadOptions) -> Result<Rig, FormatError> {
    match file_type(path).as_deref() {
        Some("bvh") => Ok(bvh::load(path, options)?),
        Some(e @ ("gltf" | "glb" | "vrm" | "vrma")) if e != "vrma" || vrma::is_node_clip(path) => {
            let rig = match &options.rest_from {
                Some(from) => gltf::load_with_rest_from(path, from)?,
                None => gltf::load(path)?,
            };
            // After every way the loader finds a rest: one scale of the whole rig.
            Ok(gltf::in_metres(rig, options.units, path)?)
        }
        _ if options.rest_from.is_some() => Err(FormatError::RestFromUnsupported {
            path: path.to_owned(),
        }),
        Some("json") => Ok(skeleton_json::load(path, options)?),
        _ => Err(FormatError::UnknownType {
            path: path.to_owned(),
            expected: RIG_TYPES,
        }),
    }
}
