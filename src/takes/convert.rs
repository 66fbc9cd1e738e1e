//! Re-encoding recordings: any `Replay` (a BVH or glTF clip through its bone map,
//! a `.vrma`, an EXT_skeleton_humanoid clip) frame by frame into a `.vrma` or an
//! EXT_skeleton_humanoid glTF, optionally baked onto a target model's proportions.

use std::path::Path;

use crate::formats::ext_humanoid::ExtHumanoidWriter;
use crate::formats::vrma::{PushError, VrmaRest, VrmaWriter};
use crate::humanoid::{CustomNames, HumanoidPose};
use crate::takes::replay::Replay;

/// Proportions to bake a recording onto: the target's T-pose and hips height.
#[derive(Debug, Clone)]
pub struct Bake {
    /// The T-pose the file's nodes will stand in.
    pub rest: VrmaRest,
    /// The target's rest hips height, metres: hips positions are scaled by it over
    /// the source's.
    pub hips_height: f32,
}

/// What a conversion writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// VRM Animation (`.vrma`).
    Vrma,
    /// A GLB whose channels target EXT_skeleton_humanoid bone names (`.glb`).
    ExtHumanoid,
}

impl OutputFormat {
    /// The format a path's extension asks for.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "vrma" => Some(Self::Vrma),
            "glb" => Some(Self::ExtHumanoid),
            _ => None,
        }
    }
}

/// A writer of either format.
pub enum Writer {
    Vrma(VrmaWriter),
    ExtHumanoid(ExtHumanoidWriter),
}

impl Writer {
    /// An empty writer of `format` whose nodes stand in `rest`.
    #[must_use]
    pub fn new(format: OutputFormat, rest: VrmaRest, name: &str) -> Self {
        match format {
            OutputFormat::Vrma => Self::Vrma(VrmaWriter::new(rest, name)),
            OutputFormat::ExtHumanoid => Self::ExtHumanoid(ExtHumanoidWriter::new(rest, name)),
        }
    }

    /// Appends a frame (custom expressions only reach `.vrma`, the other format
    /// has none).
    pub fn push(
        &mut self,
        t: f32,
        pose: &HumanoidPose,
        names: &CustomNames,
    ) -> Result<(), PushError> {
        match self {
            Self::Vrma(w) => w.push(t, pose, names),
            Self::ExtHumanoid(w) => w.push(t, pose),
        }
    }

    /// How many frames have been appended.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        match self {
            Self::Vrma(w) => w.frame_count(),
            Self::ExtHumanoid(w) => w.frame_count(),
        }
    }

    /// Writes the file.
    pub fn save(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        match self {
            Self::Vrma(w) => Ok(w.save(path)?),
            Self::ExtHumanoid(w) => Ok(w.save(path)?),
        }
    }
}

/// Plays `replay` into a new writer of `format`. `rest` is the source's T-pose,
/// used unless `bake` gives a target's; `progress` hears the frames done so far.
pub fn replay_into(
    replay: &mut Replay,
    format: OutputFormat,
    rest: VrmaRest,
    name: &str,
    custom_names: &CustomNames,
    bake: Option<&Bake>,
    progress: &mut dyn FnMut(usize),
) -> Result<Writer, PushError> {
    let mut writer = Writer::new(format, bake.map_or(rest, |b| b.rest.clone()), name);
    let mut pose = HumanoidPose::default();
    replay.rewind();
    while let Some(t) = replay.next_frame(&mut pose) {
        if let Some(b) = bake
            && pose.rest_hips_height > 0.0
        {
            pose.hips_position *= b.hips_height / pose.rest_hips_height;
            pose.rest_hips_height = b.hips_height;
        }
        writer.push(t, &pose, custom_names)?;
        progress(writer.frame_count());
    }
    Ok(writer)
}
