//! Re-encoding recordings: any `Replay` (a BVH or glTF clip through its bone map,
//! a `.vrma`, an EXT_skeleton_humanoid clip) frame by frame into a `.vrma` or an
//! EXT_skeleton_humanoid glTF, optionally baked onto a target model's proportions.

use std::path::Path;

use crate::formats::ext_humanoid::ExtHumanoidWriter;
use crate::formats::file_type;
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
        match file_type(path)?.as_str() {
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

    /// Writes every sampler STEP, so each frame's pose holds until the next.
    pub fn hold_between_frames(&mut self) {
        match self {
            Self::Vrma(w) => w.hold_between_frames(),
            Self::ExtHumanoid(w) => w.hold_between_frames(),
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
    if replay.holds_between_frames() {
        writer.hold_between_frames();
    }
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use glam::Quat;

    use super::*;
    use crate::formats::glb::{GlbFile, with_json};
    use crate::formats::vrma;
    use crate::humanoid::HumanBone;

    /// The hips turned by each of `angles` (radians about +Y), a frame every 0.5 s,
    /// copied through `replay_into`; `step` keys the source STEP first.
    fn copied(angles: &[f32], step: bool) -> vrma::VrmaAnimation {
        let names = CustomNames::default();
        let mut source = VrmaWriter::new(VrmaRest::standard(0.9), "turns");
        for (i, angle) in angles.iter().enumerate() {
            let mut pose = HumanoidPose::default();
            pose.set_rotation(HumanBone::Hips, Quat::from_rotation_y(*angle));
            source.push(i as f32 * 0.5, &pose, &names).unwrap();
        }
        let mut bytes = source.to_bytes();
        if step {
            bytes = with_json(&bytes, |v| {
                for sampler in v["animations"][0]["samplers"].as_array_mut().unwrap() {
                    sampler["interpolation"] = "STEP".into();
                }
            });
        }
        let read = vrma::parse(&bytes, Path::new("turns.vrma"), None).unwrap();
        let rest = read.rest().clone();
        let mut replay = Replay::from_vrma(read, None);
        let format = OutputFormat::Vrma;
        let Writer::Vrma(copy) =
            replay_into(&mut replay, format, rest, "copy", &names, None, &mut |_| {}).unwrap()
        else {
            panic!("a .vrma writer")
        };
        vrma::parse(&copy.to_bytes(), Path::new("copy.vrma"), None).unwrap()
    }

    fn hips_turn_at(clip: &vrma::VrmaAnimation, t: f32) -> f32 {
        let mut pose = HumanoidPose::default();
        clip.sample(t, &mut pose);
        let (axis, angle) = pose.rotation(HumanBone::Hips).unwrap().to_axis_angle();
        angle * axis.y.signum()
    }

    #[test]
    fn a_clip_keyed_step_copies_to_one_that_holds_each_pose_and_a_linear_one_stays_linear() {
        let angles = [0.2, 1.0, 0.5];
        let step = copied(&angles, true);
        // 0.4 s is between the first two frames: the first pose still holds.
        assert!((hips_turn_at(&step, 0.4) - 0.2).abs() < 1e-5);
        assert!((hips_turn_at(&step, 0.9) - 1.0).abs() < 1e-5);
        let linear = copied(&angles, false);
        assert!((hips_turn_at(&linear, 0.25) - 0.6).abs() < 1e-5);
    }

    #[test]
    fn an_ext_clip_keyed_step_copies_to_one_that_holds_each_pose() {
        use crate::formats::ext_humanoid::{self, ExtHumanoidClip};
        use crate::formats::sampler::{Interpolation, Keyframes};
        let turns = [0.2, 1.0, 0.5].map(Quat::from_rotation_y).to_vec();
        let hips = Keyframes::new(vec![0.0, 0.5, 1.0], turns, Interpolation::Step).unwrap();
        let clip = ExtHumanoidClip {
            name: None,
            duration: 1.0,
            tracks: vec![(HumanBone::Hips, hips)],
            hips_translation: None,
            hips_bind_world: glam::Affine3A::from_translation(glam::Vec3::new(0.0, 0.9, 0.0)),
            rest: None,
        };
        let mut replay = Replay::from_ext(clip, None);
        let (format, names) = (OutputFormat::ExtHumanoid, CustomNames::default());
        let rest = VrmaRest::standard(0.9);
        let Writer::ExtHumanoid(copy) =
            replay_into(&mut replay, format, rest, "copy", &names, None, &mut |_| {}).unwrap()
        else {
            panic!("an EXT_skeleton_humanoid writer")
        };
        let read = ext_humanoid::parse(&copy.to_bytes(), Path::new("copy.glb"), None).unwrap();
        assert!(read.holds_between_keys());
        let mut pose = HumanoidPose::default();
        read.sample(0.4, &mut pose);
        let turned = pose.rotation(HumanBone::Hips).unwrap();
        assert!(turned.angle_between(Quat::from_rotation_y(0.2)) < 1e-5);
    }
}
