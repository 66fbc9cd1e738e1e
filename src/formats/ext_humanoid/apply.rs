//! Applying a clip to a model the spec's way: `animatedLocal = bindLocal · r(b)`
//! for every mapped bone (see "Applying a clip to a model" in the module header of
//! `ext_humanoid`).

use glam::{Quat, Vec3};

use super::{ExtHumanoidClip, ExtHumanoidError, to_channel_rotation};
use crate::formats::Rig;
use crate::humanoid::HumanBone as B;

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
    use super::super::test_support::*;
    use super::super::{parse, reference_rig};
    use super::*;
    use crate::formats::glb::GlbFile;
    use crate::humanoid::HumanoidPose;
    use crate::retarget::{FromNormalized, MappedSkeleton, TargetRig};
    use std::path::Path;

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
