//! The canonical frames `C(b)` of the reference T-pose (the table in the module
//! header of `ext_humanoid`), and the conjugations that turn a normalized rotation
//! into a channel value and back.

use std::sync::OnceLock;

use glam::{Mat3, Quat, Vec3};

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B, Side};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::vrma::VrmaRest;

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
}
