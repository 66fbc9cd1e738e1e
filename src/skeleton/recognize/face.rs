//! Stage 11: the face. Eyes and jaw below the head by name, or the eyes as the one
//! mirrored pair of leaves on the head (`solve_face`).

use super::facing::Midline;
use super::names::Role;
use super::rest_joints::RestJoints;

/// The eyes and jaw found below the head.
pub(super) struct Face {
    /// The eye on leg A's side of the midline, the one on leg B's, and whether their
    /// names told them.
    pub(super) eyes: Option<(usize, usize, bool)>,
    pub(super) jaw: Option<usize>,
}

/// Heuristic: eyes are joints below the head named eye (not brow, lid or lash),
/// the non-helper nearest the head on each side; without such names, the only pair
/// of the head's plain leaf children sitting mirrored about it, above it.
/// The jaw is the nearest joint below the head named jaw.
pub(super) fn solve_face(rig: &RestJoints, head: usize, midline: &Midline) -> Face {
    let below = rig.subtree(head);
    let depth_of = |j: usize| rig.path(head, j).len();
    let pick = |role: Role, side: Option<f32>| {
        below
            .iter()
            .copied()
            .filter(|&j| j != head && rig.names[j].role == Some(role) && rig.pref(j) > -0.9)
            .filter(|&j| {
                side.is_none_or(|s| {
                    (midline.lateral_of(rig.pos[j]) - midline.lateral_of(rig.pos[head])) * s > 0.0
                })
            })
            .min_by_key(|&j| (rig.names[j].helper, depth_of(j), j))
    };
    let jaw = pick(Role::Jaw, None);
    if let (Some(a), Some(b)) = (pick(Role::Eye, Some(1.0)), pick(Role::Eye, Some(-1.0))) {
        return Face {
            eyes: Some((a, b, true)),
            jaw,
        };
    }
    let leaves: Vec<usize> = rig
        .plain_kids(head)
        .into_iter()
        .filter(|&c| rig.kids[c].is_empty())
        .collect();
    let centre = midline.lateral_of(rig.pos[head]);
    let mut pairs = Vec::new();
    for (i, &x) in leaves.iter().enumerate() {
        for &y in &leaves[i + 1..] {
            let (lx, ly) = (
                midline.lateral_of(rig.pos[x]) - centre,
                midline.lateral_of(rig.pos[y]) - centre,
            );
            let apart = (lx - ly).abs();
            let mirrored = apart > rig.eps
                && (lx + ly).abs() < 0.25 * apart
                && (rig.pos[x].y - rig.pos[y].y).abs() < 0.25 * apart
                && rig.pos[x].y >= rig.pos[head].y;
            if mirrored {
                pairs.push(if lx > 0.0 {
                    (x, y, false)
                } else {
                    (y, x, false)
                });
            }
        }
    }
    let pair = match pairs.as_slice() {
        [only] => Some(*only),
        _ => None,
    };
    Face { eyes: pair, jaw }
}

#[cfg(test)]
mod tests {
    use super::super::recognize;
    use super::super::test_support::with_limbs_named;
    use crate::humanoid::HumanBone as B;

    #[test]
    fn a_joint_tracking_the_eye_target_beside_the_eye_is_no_eye() {
        // An Auto-Rig Pro face (Blender): under the head, `c_eye_offset.l` holds, all
        // in one place, `c_eye_ref_track.l` (aimed at the eye target by a Track To
        // constraint, binding nothing) before `c_eye.l` (the eyeball's joint) and the
        // lids. The eye is `c_eye.l`.
        let body = [
            ("root.x", "", [0.0, 0.90, 0.0]),
            ("spine_01.x", "root.x", [0.0, 1.05, 0.0]),
            ("spine_02.x", "spine_01.x", [0.0, 1.20, 0.0]),
            ("spine_03.x", "spine_02.x", [0.0, 1.33, 0.0]),
            ("neck.x", "spine_03.x", [0.0, 1.45, 0.0]),
            ("head.x", "neck.x", [0.0, 1.55, 0.0]),
        ];
        let limb = [
            ("c_eye_offset", "head.x", [0.03, 1.65, 0.08]),
            ("c_eye_ref_track", "c_eye_offset", [0.03, 1.65, 0.08]),
            ("c_eye", "c_eye_offset", [0.03, 1.65, 0.08]),
            ("c_eyelid_top", "c_eye_offset", [0.03, 1.65, 0.08]),
            ("shoulder", "spine_03.x", [0.03, 1.40, 0.0]),
            ("arm_stretch", "shoulder", [0.15, 1.40, 0.0]),
            ("forearm_stretch", "arm_stretch", [0.42, 1.40, 0.0]),
            ("hand", "forearm_stretch", [0.66, 1.40, 0.0]),
            ("thigh_stretch", "root.x", [0.09, 0.88, 0.0]),
            ("leg_stretch", "thigh_stretch", [0.09, 0.48, 0.0]),
            ("foot", "leg_stretch", [0.09, 0.08, 0.0]),
            ("toes_01", "foot", [0.09, 0.0, 0.12]),
        ];
        let s = with_limbs_named(
            &body,
            |side, name| format!("{name}.{}", ["l", "r"][side]),
            &limb,
        );
        let r = recognize(&s).into_humanoid().expect("a humanoid");
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftEye), Some("c_eye.l"));
        assert_eq!(at(B::RightEye), Some("c_eye.r"));
        assert_eq!(at(B::Head), Some("head.x"));
    }
}
