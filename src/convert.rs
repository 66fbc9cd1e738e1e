//! Re-encoding recordings as `.vrma`: any `Replay` (a BVH or glTF clip through its
//! bone map, another `.vrma`) frame by frame into a `VrmaWriter`, optionally baked
//! onto a target model's proportions.

use crate::formats::vrma::{PushError, VrmaRest, VrmaWriter};
use crate::humanoid::{CustomNames, HumanoidPose};
use crate::replay::Replay;

/// Proportions to bake a recording onto: the target's T-pose and hips height.
#[derive(Debug, Clone)]
pub struct Bake {
    /// The T-pose the file's nodes will stand in.
    pub rest: VrmaRest,
    /// The target's rest hips height, metres: hips positions are scaled by it over
    /// the source's.
    pub hips_height: f32,
}

/// Plays `replay` into a new writer. `rest` is the source's T-pose, used unless
/// `bake` gives a target's; `progress` hears the number of frames done so far.
pub fn replay_to_vrma(
    replay: &mut Replay,
    rest: VrmaRest,
    name: &str,
    custom_names: &CustomNames,
    bake: Option<&Bake>,
    progress: &mut dyn FnMut(usize),
) -> Result<VrmaWriter, PushError> {
    let mut writer = VrmaWriter::new(bake.map_or(rest, |b| b.rest.clone()), name);
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
