//! A mirrored armature (a node with a negative scale above or among the joints) read
//! as the figure the scene shows: every joint keeps its place, and a joint whose
//! world frame is mirrored gets that frame flipped in X, so that no joint's frame is
//! a reflection. A quaternion cannot hold a reflection: left mirrored, the rest world
//! rotations a retarget is built on would be those of the unmirrored figure, and the
//! motion would come out mirrored and turned.
//!
//! With `F = diag(-1, 1, 1)`, a joint's world frame `W` becomes `W·F` when it is
//! mirrored (`F_j`, else the identity), so its local transform `L = T·R·S` becomes
//! `F_p·L·F_j` (its parent's flip on the left): the translation `F_p·t`, the
//! rotation `F_p·R·F_p` and the scale `F_p·S·F_j`, which has no or two negative
//! components (two are a half turn about the third axis and a positive scale).
//! Every frame of a clip is turned the same way, and a leaf's end by `F_j`. Pure:
//! runs on the joints and clips `mod.rs` has read.

use glam::{Quat, Vec3};

use super::super::Clip;
use crate::skeleton::Transform;

/// How one joint's local transform is rewritten.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Unmirror {
    /// The parent's world frame is mirrored: conjugate by `F` (translations and
    /// rotations are in the parent's frame).
    parent_flipped: bool,
    /// The joint's own world frame is mirrored: its end site flips in X.
    flipped: bool,
    /// The half turn the scale's two negative components make, applied after the
    /// rotation (the identity when none).
    half_turn: Quat,
}

impl Unmirror {
    /// Whether the joint's world frame is mirrored (and so flipped).
    pub(super) fn is_flipped(&self) -> bool {
        self.flipped
    }

    /// The joint's local translation in the unmirrored parent frame.
    fn translation(&self, t: Vec3) -> Vec3 {
        match self.parent_flipped {
            true => Vec3::new(-t.x, t.y, t.z),
            false => t,
        }
    }

    /// The joint's local rotation in the unmirrored frames (`F_p·R·F_p`, then the
    /// scale's half turn).
    fn rotation(&self, r: Quat) -> Quat {
        let conjugated = match self.parent_flipped {
            true => Quat::from_xyzw(r.x, -r.y, -r.z, r.w),
            false => r,
        };
        (conjugated * self.half_turn).normalize()
    }
}

/// The rewrite of every joint (parents first) when any joint's world frame is
/// mirrored; `None` when none is. `rest` holds local transforms, `parents` each
/// joint's parent index.
pub(super) fn unmirror_plan(
    rest: &[Transform],
    parents: &[Option<usize>],
) -> Option<Vec<Unmirror>> {
    let mut flipped: Vec<bool> = Vec::with_capacity(rest.len());
    for (k, t) in rest.iter().enumerate() {
        let parent = parents[k]
            .and_then(|p| flipped.get(p).copied())
            .unwrap_or(false);
        let own = t.scale.x * t.scale.y * t.scale.z < 0.0;
        flipped.push(parent ^ own);
    }
    if !flipped.contains(&true) {
        return None;
    }
    let plan = rest
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let parent_flipped = parents[k].is_some_and(|p| flipped[p]);
            // F_p·S·F_j: X changes sign when exactly one of the two flips.
            let x_sign = if parent_flipped == flipped[k] {
                1.0
            } else {
                -1.0
            };
            let s = Vec3::new(x_sign * t.scale.x, t.scale.y, t.scale.z);
            let half_turn = match (s.x < 0.0, s.y < 0.0, s.z < 0.0) {
                (false, true, true) => Quat::from_rotation_x(std::f32::consts::PI),
                (true, false, true) => Quat::from_rotation_y(std::f32::consts::PI),
                (true, true, false) => Quat::from_rotation_z(std::f32::consts::PI),
                _ => Quat::IDENTITY,
            };
            Unmirror {
                parent_flipped,
                flipped: flipped[k],
                half_turn,
            }
        })
        .collect();
    Some(plan)
}

/// Rewrites joint rests (and ends) by `plan`.
pub(super) fn unmirror_rest(plan: &[Unmirror], rest: &mut [Transform], ends: &mut [Option<Vec3>]) {
    for ((step, t), end) in plan.iter().zip(rest).zip(ends) {
        t.translation = step.translation(t.translation);
        t.rotation = step.rotation(t.rotation);
        t.scale = t.scale.abs();
        if step.flipped {
            *end = end.map(|e| Vec3::new(-e.x, e.y, e.z));
        }
    }
}

/// Rewrites every frame of every clip by `plan` (a frame holds each joint's local
/// rotation and translation, as the rest does).
pub(super) fn unmirror_clips(plan: &[Unmirror], clips: &mut [Clip]) {
    for clip in clips {
        clip.motion.map_joints(|joint, r, t| match plan.get(joint) {
            Some(step) => (step.rotation(r), step.translation(t)),
            None => (r, t),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Affine3A, Mat3};

    fn world(rest: &[Transform], parents: &[Option<usize>]) -> Vec<Affine3A> {
        let mut out: Vec<Affine3A> = Vec::new();
        for (t, p) in rest.iter().zip(parents) {
            let local =
                Affine3A::from_scale_rotation_translation(t.scale, t.rotation, t.translation);
            out.push(p.map_or(local, |p| out[p] * local));
        }
        out
    }

    #[test]
    fn joints_keep_their_places_and_frames_lose_their_mirror() {
        // A root mirrored in X (then in all three axes), a joint turned under it, and
        // a child that mirrors back in Y: every joint stays where it was, each
        // frame is a rotation, equal to the mirrored one with X flipped.
        let parents = [None, Some(0), Some(1)];
        for root_scale in [Vec3::new(-1.0, 1.0, 1.0), Vec3::new(-2.0, -2.0, -2.0)] {
            let mut rest = [
                Transform {
                    translation: Vec3::new(0.0, 1.0, 0.0),
                    rotation: Quat::from_rotation_y(0.3),
                    scale: root_scale,
                },
                Transform {
                    translation: Vec3::new(0.2, 0.1, 0.0),
                    rotation: Quat::from_rotation_z(0.7),
                    scale: Vec3::ONE,
                },
                Transform {
                    translation: Vec3::new(0.0, 0.3, 0.1),
                    rotation: Quat::from_rotation_x(0.2),
                    scale: Vec3::new(1.0, -1.0, 1.0),
                },
            ];
            let before = world(&rest, &parents);
            let plan = unmirror_plan(&rest, &parents).unwrap();
            let mut ends = [None, Some(Vec3::X), None];
            unmirror_rest(&plan, &mut rest, &mut ends);
            let after = world(&rest, &parents);
            let flip = Mat3::from_diagonal(Vec3::new(-1.0, 1.0, 1.0));
            for (k, (a, b)) in before.iter().zip(&after).enumerate() {
                assert!(a.translation.abs_diff_eq(b.translation, 1e-5), "{k}");
                assert!(b.matrix3.determinant() > 0.0, "{k}");
                let expected = if plan[k].flipped {
                    Mat3::from(a.matrix3) * flip
                } else {
                    Mat3::from(a.matrix3)
                };
                assert!(Mat3::from(b.matrix3).abs_diff_eq(expected, 1e-5), "{k}");
            }
            assert_eq!(ends[1], Some(Vec3::NEG_X));
        }
    }

    #[test]
    fn an_unmirrored_rig_has_no_plan() {
        let rest = [Transform::IDENTITY, Transform::IDENTITY];
        assert!(unmirror_plan(&rest, &[None, Some(0)]).is_none());
    }
}
