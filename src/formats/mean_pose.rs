//! The mean of a motion's poses, joint by joint: a run or a sprint never stands
//! with both legs down in any one frame, but its strides and arm swings average
//! out to a body standing. BVH takes (`bvh::rest_frame`) and glTF clips
//! (`gltf::rest_from_clips`) rest on it when no single frame stands.

use glam::{Quat, Vec3};

use super::FrameRef;

/// Every joint's mean local rotation (each on the first pose's hemisphere,
/// summed and normalized; the first pose's where the sum vanishes) and mean
/// translation over `poses`, as (rotations, translations); `None` when there are
/// none.
pub fn mean_pose<'a>(
    poses: impl Iterator<Item = FrameRef<'a>> + Clone,
) -> Option<(Vec<Quat>, Vec<Vec3>)> {
    let first = poses.clone().next()?;
    let count = poses.clone().count() as f32;
    let mut rotations = vec![Quat::from_xyzw(0.0, 0.0, 0.0, 0.0); first.rotations.len()];
    let mut translations = vec![Vec3::ZERO; first.translations.len()];
    for pose in poses {
        for ((sum, q), reference) in rotations
            .iter_mut()
            .zip(pose.rotations)
            .zip(first.rotations)
        {
            *sum += if q.dot(*reference) < 0.0 { -*q } else { *q };
        }
        for (sum, t) in translations.iter_mut().zip(pose.translations) {
            *sum += *t / count;
        }
    }
    for (q, fallback) in rotations.iter_mut().zip(first.rotations) {
        let length = q.length();
        *q = if length > 1e-6 {
            *q / length
        } else {
            *fallback
        };
    }
    Some((rotations, translations))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swing_back_and_forth_averages_to_the_middle() {
        // One joint swung 40° forward and 40° back, on either hemisphere, moved
        // 10 cm up and down: the mean is unturned and in the middle.
        let forward = [Quat::from_rotation_x(0.7)];
        let back = [-Quat::from_rotation_x(-0.7)];
        let (up, down) = ([Vec3::new(0.0, 1.1, 0.0)], [Vec3::new(0.0, 0.9, 0.0)]);
        let poses = [
            FrameRef {
                rotations: &forward,
                translations: &up,
            },
            FrameRef {
                rotations: &back,
                translations: &down,
            },
        ];
        let (rotations, translations) = mean_pose(poses.iter().copied()).unwrap();
        assert!(rotations[0].angle_between(Quat::IDENTITY) < 1e-5);
        assert!(translations[0].distance(Vec3::Y) < 1e-6);
        assert!(mean_pose(std::iter::empty()).is_none());
    }
}
