//! Stage 11: the face. Eyes and jaw below the head by name, or the eyes as the one
//! mirrored pair of leaves on the head (`solve_face`).

use super::facing::Midline;
use super::names::{Level, Role, jaw_level};
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
/// The jaw: `pick_jaw`.
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
    let jaw = pick_jaw(rig, head, &below);
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

/// Heuristic: the jaw is the joint below the head named jaw (no control) nearest
/// the head, non-helpers first. VRM's jaw is the lower jaw, the one that opens the
/// mouth; a joint named for the upper one (`JawUp`, `CC_Base_UpperJaw`: the upper
/// lip and teeth, which move with the skull) is never it beside a non-helper jaw
/// whose name does not say upper. Of the nearest left at one depth, a name saying
/// lower wins; where names do not tell them apart and each carries joints, the one
/// whose joints reach lowest: the lower lip, teeth and chin hang below the upper
/// lip and teeth, whether the rest pose holds the mouth shut or open.
fn pick_jaw(rig: &RestJoints, head: usize, below: &[usize]) -> Option<usize> {
    let named: Vec<usize> = below
        .iter()
        .copied()
        .filter(|&j| j != head && rig.names[j].role == Some(Role::Jaw) && rig.pref(j) > -0.9)
        .collect();
    let level = |j: usize| jaw_level(&rig.names[j]);
    let beside_upper = named
        .iter()
        .any(|&j| !rig.names[j].helper && level(j) != Some(Level::Upper));
    let named: Vec<usize> = named
        .into_iter()
        .filter(|&j| !(beside_upper && level(j) == Some(Level::Upper)))
        .collect();
    let key = |j: usize| (rig.names[j].helper, rig.path(head, j).len());
    let nearest = named.iter().map(|&j| key(j)).min()?;
    let mut tied: Vec<usize> = named.into_iter().filter(|&j| key(j) == nearest).collect();
    if tied.iter().any(|&j| level(j) == Some(Level::Lower)) {
        tied.retain(|&j| level(j) == Some(Level::Lower));
    }
    // Where the joints a jaw carries reach lowest (its own pivot says nothing: a lower
    // jaw turns at the hinge, high by the ear); a jaw carrying none shows no mouth,
    // and then the names' order decides as for any tie.
    let carried_low = |j: usize| {
        rig.kids[j]
            .iter()
            .filter(|&&c| !rig.names[c].nub)
            .map(|&c| rig.body_low[c])
            .reduce(f32::min)
    };
    let lows: Option<Vec<f32>> = tied.iter().map(|&j| carried_low(j)).collect();
    let Some(lows) = lows else {
        return tied.into_iter().min();
    };
    let lowest = lows.iter().copied().fold(f32::INFINITY, f32::min);
    tied.into_iter()
        .zip(lows)
        .filter(|&(_, low)| low <= lowest + rig.eps)
        .map(|(j, _)| j)
        .min()
}

#[cfg(test)]
mod tests {
    use super::super::recognize;
    use super::super::test_support::{with_limbs, with_limbs_named};
    use crate::humanoid::HumanBone as B;

    /// The joint recognized as the jaw of a plain figure (head at 1.55 m, facing +Z)
    /// with `face` (joints and parents, `head` the head) added.
    fn jaw_of(face: &[(&str, &str, [f32; 3])]) -> Option<String> {
        let mut body = vec![
            ("hips", "", [0.0, 0.90, 0.0]),
            ("spine", "hips", [0.0, 1.05, 0.0]),
            ("chest", "spine", [0.0, 1.25, 0.0]),
            ("neck", "chest", [0.0, 1.45, 0.0]),
            ("head", "neck", [0.0, 1.55, 0.0]),
        ];
        body.extend_from_slice(face);
        let limb = [
            ("shoulder", "chest", [0.03, 1.40, 0.0]),
            ("upperarm", "shoulder", [0.15, 1.40, 0.0]),
            ("forearm", "upperarm", [0.42, 1.40, 0.0]),
            ("hand", "forearm", [0.66, 1.40, 0.0]),
            ("thigh", "hips", [0.09, 0.88, 0.0]),
            ("calf", "thigh", [0.09, 0.48, 0.0]),
            ("foot", "calf", [0.09, 0.08, 0.0]),
            ("toes", "foot", [0.09, 0.0, 0.12]),
        ];
        let r = recognize(&with_limbs(&body, ["l_", "r_"], &limb))
            .into_humanoid()
            .expect("a humanoid");
        r.map.bones.get(&B::Jaw).cloned()
    }

    #[test]
    fn a_jaw_named_upper_is_no_jaw_beside_another() {
        // A Sketchfab werehog (FBX game rig): `Mouth_Reference_047` under the head
        // holds, at one depth, `JawUp_048` (the upper lip and teeth, binding nothing)
        // before `JawLow_057` (the lower lip and teeth). Its upper lip's joint sits a
        // little below the lower lip's: the names tell, not the heights.
        let werehog = [
            ("Mouth_Reference_047", "head", [0.0, 1.56, 0.0]),
            ("JawUp_048", "Mouth_Reference_047", [0.0, 1.58, 0.05]),
            ("LipUp_C_049", "JawUp_048", [0.0, 1.560, 0.11]),
            ("TeethUp_053", "JawUp_048", [0.0, 1.600, 0.06]),
            ("JawLow_057", "Mouth_Reference_047", [0.0, 1.58, 0.06]),
            ("LipLow_C_058", "JawLow_057", [0.0, 1.563, 0.105]),
            ("TeethLow_061", "JawLow_057", [0.0, 1.585, 0.04]),
        ];
        assert_eq!(jaw_of(&werehog).as_deref(), Some("JawLow_057"));
        // Character Creator's face, upper jaw first: `CC_Base_JawRoot` opens the
        // mouth, `CC_Base_UpperJaw` holds the upper teeth.
        let cc = [
            ("CC_Base_FacialBone", "head", [0.0, 1.60, 0.0]),
            ("CC_Base_UpperJaw", "CC_Base_FacialBone", [0.0, 1.60, 0.02]),
            ("CC_Base_Teeth01", "CC_Base_UpperJaw", [0.0, 1.59, 0.07]),
            ("CC_Base_JawRoot", "CC_Base_FacialBone", [0.0, 1.59, 0.01]),
            ("CC_Base_Teeth02", "CC_Base_JawRoot", [0.0, 1.57, 0.07]),
        ];
        assert_eq!(jaw_of(&cc).as_deref(), Some("CC_Base_JawRoot"));
    }

    #[test]
    fn of_jaws_whose_names_do_not_tell_the_lower_reaching_one_is_the_jaw() {
        // Two numbered jaw joints side by side on the head: the first carries the
        // upper teeth, the second the lower teeth and the chin below them.
        let face = [
            ("jaw_01", "head", [0.0, 1.60, 0.02]),
            ("teeth_01", "jaw_01", [0.0, 1.59, 0.07]),
            ("jaw_02", "head", [0.0, 1.60, 0.02]),
            ("teeth_02", "jaw_02", [0.0, 1.57, 0.07]),
            ("chin", "teeth_02", [0.0, 1.53, 0.08]),
        ];
        assert_eq!(jaw_of(&face).as_deref(), Some("jaw_02"));
        // A Rigify face exported flat: `DEF-jaw_master` (the lower jaw's root, at the
        // hinge) and `DEF-jaw` (lower, toward the chin) are both leaves on the head.
        // Neither carries a mouth, so no height tells them: the first stays the jaw.
        let flat = [
            ("DEF-jaw_master", "head", [0.0, 1.62, 0.03]),
            ("DEF-jaw", "head", [0.0, 1.55, 0.02]),
        ];
        assert_eq!(jaw_of(&flat).as_deref(), Some("DEF-jaw_master"));
    }

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
