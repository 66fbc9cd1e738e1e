//! Stages 8 and 9: spine, neck and head. The joints between the hips and the arm
//! branch become spine, chest and upper chest (`split_spine`); the chain above the
//! branch up to its first fork is neck and head, without an end nub (`solve_neck`).

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use super::names::Role;
use super::rest_joints::RestJoints;

/// Heuristic: the spine chain is every joint from the hips' body child to the arm
/// branch (coincident joints merged). One joint is the spine; two are spine and
/// chest (upper chest if so named); three or more are spine (first), chest (the
/// middle one, or the one named chest) and upper chest (the branch). When the arms
/// hang from a joint named neck (3ds Max Biped), that joint is the neck and the chain
/// ends below it. Detours out and back are no part of the spine (`without_detours`),
/// nor a zero-length branch joint at the hips where the chain has more joints than
/// the three roles (`past_pivots`).
pub(super) fn split_spine(
    rig: &RestJoints,
    chain: &[usize],
) -> Vec<(HumanBone, usize, f32, String)> {
    let reps = rig.collapse(&without_detours(rig, chain));
    let reps = past_pivots(rig, &reps);
    let k = reps.len();
    let at = |bone, i: usize, conf, why: &str| (bone, reps[i], conf, why.to_owned());
    match k {
        0 => Vec::new(),
        1 => vec![at(B::Spine, 0, 0.8, "the only joint between hips and arms")],
        2 => {
            // A second joint named upper chest (with no chest) stays one.
            let named_upper = rig.names[reps[1]].role == Some(Role::UpperChest);
            let second = if named_upper { B::UpperChest } else { B::Chest };
            vec![
                at(B::Spine, 0, 0.8, "first joint above the hips"),
                at(second, 1, 0.8, "the arms and the head branch here"),
            ]
        }
        _ => {
            let named = (1..k - 1).filter(|&i| rig.names[reps[i]].role == Some(Role::Chest));
            let chest = match named.collect::<Vec<_>>().as_slice() {
                [only] => *only,
                _ => k / 2,
            };
            let conf = if k == 3 { 0.8 } else { 0.6 };
            vec![
                at(B::Spine, 0, 0.8, "first joint above the hips"),
                at(
                    B::Chest,
                    chest,
                    conf,
                    &format!("middle of the {k} spine joints"),
                ),
                at(
                    B::UpperChest,
                    k - 1,
                    0.8,
                    "the arms and the head branch here",
                ),
            ]
        }
    }
}

/// The spine `line` without the zero-length branch joints it starts with
/// (`RestJoints::is_branch_pivot`), keeping at least three joints: where the line
/// has more joints than the spine's three roles, the pivot is the one left out.
fn past_pivots<'l>(rig: &RestJoints, line: &'l [usize]) -> &'l [usize] {
    let skip = line
        .iter()
        .take(line.len().saturating_sub(3))
        .take_while(|&&j| rig.is_branch_pivot(j))
        .count();
    &line[skip..]
}

/// Heuristic: `chain` without its detours out and back. A joint back where an
/// earlier joint of the chain is, or where the chain's parent is, with joints
/// between, closes a detour: Second Life's Bento skeleton puts `mSpine1` 8 cm up
/// from the pelvis and `mSpine2` back down on it, then the torso where `mSpine1`
/// was, and `mSpine3`/`mSpine4` so again below the chest. The joints of the detour
/// and the one closing it are dropped; the body goes on from the earlier joint.
fn without_detours(rig: &RestJoints, chain: &[usize]) -> Vec<usize> {
    let start = chain.first().and_then(|&j| rig.skeleton.joints()[j].parent);
    let mut line: Vec<usize> = Vec::with_capacity(chain.len());
    for &j in chain {
        let back = line.iter().rposition(|&k| rig.coincident(k, j));
        match back {
            Some(k) if k + 1 < line.len() => line.truncate(k + 1),
            None if !line.is_empty() && start.is_some_and(|s| rig.coincident(s, j)) => {
                line.clear();
            }
            _ => line.push(j),
        }
    }
    line
}

/// The neck and head found above the arm branch.
pub(super) struct Neck {
    pub(super) neck: Option<usize>,
    pub(super) head: usize,
    /// An end nub dropped from the top of the chain.
    pub(super) nub: Option<usize>,
}

/// Heuristic: the head chain climbs from the branch's head child through single
/// children (controls and helpers ignored, twist joints in line with the neck
/// climbed through) to the first fork or leaf: the head.
/// A leaf at the top of three or more joints without an end site, whose bone is 1.5
/// times the others or whose name says end, is the nub above the head (Mixamo's
/// `HeadTop_End`); a leaf named jaw or eye hangs from the head. With two or more
/// joints left, the first is the neck. The lowest joint named head is the head, even
/// where it shares its place with the joint below it.
pub(super) fn solve_neck(rig: &RestJoints, branch: usize, head_root: usize) -> Neck {
    let mut line = vec![head_root];
    let mut j = head_root;
    while let Some(next) = next_up_the_neck(rig, j) {
        line.push(next);
        j = next;
    }
    let mut nub = None;
    // An end site at the joint's own place is no bone: a leaf named as a nub may end
    // in one (an End Site written as a joint, then closed by an End Site of its own).
    let point_end = |j: usize| rig.end[j].is_some_and(|e| e.distance(rig.pos[j]) <= rig.eps);
    if let [.., prev, last] = line.as_slice()
        && rig.kids[*last].is_empty()
        && (rig.end[*last].is_none() || (rig.names[*last].nub && point_end(*last)))
    {
        let mut below = vec![rig.pos[branch]];
        below.extend(line[..line.len() - 1].iter().map(|&x| rig.pos[x]));
        // Zero-length segments (branch pivots, coincident helpers) are no bones.
        let segments: Vec<f32> = below
            .windows(2)
            .map(|w| w[0].distance(w[1]))
            .filter(|&d| d > rig.eps)
            .collect();
        let mean = segments.iter().sum::<f32>() / segments.len().max(1) as f32;
        let long = rig.pos[*last].distance(rig.pos[*prev]) >= 1.5 * mean && line.len() >= 3;
        let named = rig.names[*last].helper || rig.names[*last].role == Some(Role::HeadTop);
        if long || named {
            nub = Some(*last);
        }
    }
    if nub.is_some() {
        line.pop();
    }
    // A leaf named jaw or eye that the chain climbs to hangs from the head, and is
    // not the head: a Rigify-style head `spine.005` with only its `jaw` under it, one
    // `Bone_eyes` joint for both eyes as a game rig's `Bip01 Head`'s only plain child.
    if let [.., _, last] = line.as_slice()
        && rig.kids[*last].is_empty()
        && matches!(rig.names[*last].role, Some(Role::Jaw | Role::Eye))
    {
        line.pop();
    }
    let (reps, group) = rig.collapse_groups(&line);
    // A joint named head may share its place with the joint below it (a `face`
    // pivot under `Head` in Sketchfab's conversions, the face hanging from it and
    // the hair from a helper beside it): the collapsed line keeps the lower one, so
    // the name is looked for in the line itself, and the named joint, which carries
    // everything the other does, is the head. The lowest joint named head is the
    // head, the first of the line too (a Biped's arms hang from its neck, and the
    // line starts at the head): a joint above it named head as well (`Bip001 Head
    // Mouse`, a leaf for the mouth) hangs from the head.
    let named_head = line
        .iter()
        .zip(&group)
        .find(|&(&x, _)| rig.names[x].role == Some(Role::Head) && !rig.names[x].helper)
        .map(|(&x, &g)| (g, x));
    let head_at = named_head.map_or(reps.len().saturating_sub(1), |(g, _)| g);
    let head = named_head
        .map(|(_, x)| x)
        .or_else(|| reps.get(head_at).copied())
        .unwrap_or(head_root);
    let neck = (head_at > 0).then(|| reps[0]);
    Neck { neck, head, nub }
}

/// Heuristic: the joint the head chain climbs to from `j`: its only plain child, or,
/// with none, its only child that is a twist bone with joints below it (Character
/// Creator's `CC_Base_NeckTwist01` → `CC_Base_NeckTwist02` → `CC_Base_Head`: a
/// twist joint in the line of the neck leads on to the head, where a twist bone
/// beside a limb ends). At a fork of plain children under a joint not named head,
/// its one child named head that goes up from it, when no other child is named
/// so: a rig's leaf markers beside the neck (MotionBuilder physics proxies, a
/// `Neck` leaf 1.6 cm off `Character1_Neck`) are no fork of the head. A joint named
/// head is the head whatever its children are called (`head_hair` beside the jaw
/// and eyes).
fn next_up_the_neck(rig: &RestJoints, j: usize) -> Option<usize> {
    let up = |c: usize| rig.pos[c].y > rig.pos[j].y + rig.eps;
    match rig.plain_kids(j).as_slice() {
        [only] => Some(*only),
        [] => match rig.body_kids(j).as_slice() {
            [only] if rig.names[*only].twist && !rig.kids[*only].is_empty() => Some(*only),
            [only] if rig.wraps_its_child(*only) => Some(*only),
            _ => None,
        },
        kids if rig.names[j].role != Some(Role::Head) => {
            let mut heads = kids
                .iter()
                .filter(|&&c| rig.names[c].role == Some(Role::Head));
            match (heads.next(), heads.next()) {
                (Some(&head), None) if up(head) => Some(head),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::recognized_with_limbs;
    use crate::humanoid::HumanBone as B;

    #[test]
    fn a_jaw_leaf_above_a_head_named_spine_is_the_jaw() {
        // A Rigify-style knight: `spine.005` is the head, with only its `jaw` under
        // it, forward at the chin.
        let body = [
            ("spine", "", [0.0, 1.0, 0.0]),
            ("spine.001", "spine", [0.0, 1.12, 0.0]),
            ("spine.002", "spine.001", [0.0, 1.25, 0.0]),
            ("spine.003", "spine.002", [0.0, 1.38, 0.0]),
            ("spine.004", "spine.003", [0.0, 1.5, 0.0]),
            ("spine.005", "spine.004", [0.0, 1.58, 0.0]),
            ("jaw", "spine.005", [0.0, 1.6, 0.08]),
        ];
        let limb = [
            ("shoulder", "spine.003", [0.03, 1.42, 0.0]),
            ("upper_arm", "shoulder", [0.18, 1.42, 0.0]),
            ("forearm", "upper_arm", [0.46, 1.42, 0.0]),
            ("hand", "forearm", [0.71, 1.42, 0.0]),
            ("thigh", "spine", [0.1, 0.95, 0.0]),
            ("shin", "thigh", [0.1, 0.5, 0.0]),
            ("foot", "shin", [0.1, 0.08, 0.0]),
            ("toe", "foot", [0.1, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["L_", "R_"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Head), Some("spine.005"));
        assert_eq!(at(B::Neck), Some("spine.004"));
        assert_eq!(at(B::Jaw), Some("jaw"));
    }

    #[test]
    fn a_single_eye_leaf_above_the_head_is_no_head() {
        // A 3ds Max Biped exported from a game: the collarbones hang from `Bip01
        // Neck`, and `Bip01 Head` carries one `Bone_eyes` leaf for both eyes and a
        // hair chain.
        let body = [
            ("Bip01 Pelvis", "", [0.0, 1.0, 0.0]),
            ("Bip01 Spine", "Bip01 Pelvis", [0.0, 1.12, 0.0]),
            ("Bip01 Spine1", "Bip01 Spine", [0.0, 1.26, 0.0]),
            ("Bip01 Neck", "Bip01 Spine1", [0.0, 1.5, -0.02]),
            ("Bip01 Head", "Bip01 Neck", [0.0, 1.58, 0.0]),
            ("Bone_eyes", "Bip01 Head", [0.0, 1.65, 0.02]),
            ("Bone_hair_01", "Bip01 Head", [0.0, 1.66, 0.03]),
            ("Bone_hair_02", "Bone_hair_01", [0.0, 1.69, -0.02]),
        ];
        let limb = [
            ("Clavicle", "Bip01 Neck", [0.07, 1.46, -0.05]),
            ("UpperArm", "Clavicle", [0.2, 1.43, -0.05]),
            ("Forearm", "UpperArm", [0.42, 1.28, -0.08]),
            ("Hand", "Forearm", [0.65, 1.12, -0.02]),
            ("Thigh", "Bip01 Pelvis", [0.12, 1.0, 0.0]),
            ("Calf", "Thigh", [0.17, 0.55, 0.03]),
            ("Foot", "Calf", [0.21, 0.11, -0.05]),
            ("Toe0", "Foot", [0.21, 0.0, 0.05]),
        ];
        let r = recognized_with_limbs(&body, ["Bip01 L ", "Bip01 R "], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Head), Some("Bip01 Head"));
        assert_eq!(at(B::Neck), Some("Bip01 Neck"));
        assert_eq!(at(B::LeftHand), Some("Bip01 L Hand"));
    }

    #[test]
    fn a_leaf_named_head_above_a_head_hanging_from_the_neck_is_no_head() {
        // A 3ds Max Biped through Sketchfab (centimetres, +Y up, facing +Z): the
        // collarbones hang from `Bip001 Neck_013`, so the chain above the arms
        // starts at `Bip001 Head_00`, whose only child `Bip001 Head Mouse_014` is a
        // 2.2 cm leaf for the mouth, named head as well.
        let body = [
            ("Bip001 Pelvis_02", "", [0.0, 103.8, 0.7]),
            ("Bip001 Spine_03", "Bip001 Pelvis_02", [0.0, 110.4, -1.7]),
            ("Bip001 Spine1_012", "Bip001 Spine_03", [0.0, 128.7, -1.7]),
            ("Bip001 Neck_013", "Bip001 Spine1_012", [0.0, 156.6, -6.5]),
            ("Bip001 Head_00", "Bip001 Neck_013", [0.0, 167.0, -1.9]),
            (
                "Bip001 Head Mouse_014",
                "Bip001 Head_00",
                [0.0, 169.2, -1.3],
            ),
        ];
        let limb = [
            ("Clavicle", "Bip001 Neck_013", [5.2, 154.5, -7.9]),
            ("UpperArm", "Clavicle", [17.3, 152.0, -7.9]),
            ("Forearm", "UpperArm", [33.5, 131.5, -10.2]),
            ("Hand", "Forearm", [50.3, 110.2, -4.8]),
            ("Thigh", "Bip001 Spine_03", [8.2, 103.8, 0.7]),
            ("Calf", "Thigh", [9.0, 57.0, 1.0]),
            ("Foot", "Calf", [10.6, 13.6, -10.4]),
            ("Toe0", "Foot", [12.3, 0.2, 6.9]),
        ];
        let r = recognized_with_limbs(&body, ["Bip001 L ", "Bip001 R "], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Head), Some("Bip001 Head_00"));
        assert_eq!(at(B::Neck), Some("Bip001 Neck_013"));
        assert_eq!(at(B::LeftUpperArm), Some("Bip001 L UpperArm"));
    }

    #[test]
    fn spine_joints_that_go_out_and_come_back_are_no_part_of_the_spine() {
        // Second Life's Bento skeleton (metres, +Y up, facing +Z): `mSpine1` up
        // from the pelvis and `mSpine2` back on it, the torso where `mSpine1` is;
        // `mSpine3` up from the torso and `mSpine4` back, the chest where
        // `mSpine3` is.
        let body = [
            ("hip", "", [0.0, 1.0, 0.0]),
            ("mSpine1", "hip", [0.0, 1.084, 0.0]),
            ("mSpine2", "mSpine1", [0.0, 1.0, 0.0]),
            ("abdomen", "mSpine2", [0.0, 1.084, 0.0]),
            ("mSpine3", "abdomen", [0.0, 1.289, -0.015]),
            ("mSpine4", "mSpine3", [0.0, 1.084, 0.0]),
            ("chest", "mSpine4", [0.0, 1.289, -0.015]),
            ("neck", "chest", [0.0, 1.54, -0.025]),
            ("head", "neck", [0.0, 1.616, -0.025]),
            ("headTop", "head", [0.0, 1.8, -0.025]),
        ];
        let limb = [
            ("Collar", "chest", [0.07, 1.45, -0.02]),
            ("Shldr", "Collar", [0.15, 1.45, -0.02]),
            ("ForeArm", "Shldr", [0.43, 1.45, -0.02]),
            ("Hand", "ForeArm", [0.67, 1.45, -0.02]),
            ("Thigh", "hip", [0.13, 0.96, 0.03]),
            ("Shin", "Thigh", [0.08, 0.47, 0.03]),
            ("Foot", "Shin", [0.08, 0.0, 0.0]),
            ("Toe", "Foot", [0.08, 0.0, 0.11]),
        ];
        let r = recognized_with_limbs(&body, ["l", "r"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Spine), Some("abdomen"));
        assert_eq!(at(B::Chest), Some("chest"));
        assert_eq!(at(B::UpperChest), None);
        assert_eq!(at(B::Neck), Some("neck"));
        assert_eq!(at(B::LeftUpperArm), Some("lShldr"));
    }

    #[test]
    fn a_head_sharing_its_place_with_a_face_pivot_below_it_is_the_head() {
        // Sketchfab's conversion of a Japanese school-uniform model (metres, +Y up,
        // facing +Z): `Head_034` at the top of the neck carries the hair under
        // `Head_null_035` (a helper by name) and, in the same place, `face_047`,
        // whose child `atama_n_048` ("head") 3 cm up carries the brows, eyes and jaw.
        // The head turns the hair and the face; `atama_n_048` turns the face alone.
        let body = [
            ("Hips_02", "", [0.0, 0.90, 0.0]),
            ("Spine_029", "Hips_02", [0.0, 1.00, 0.0]),
            ("Spine2_031", "Spine_029", [0.0, 1.15, 0.0]),
            ("Spine3_032", "Spine2_031", [0.0, 1.28, 0.0]),
            ("Neck_033", "Spine3_032", [0.0, 1.39, -0.04]),
            ("Head_034", "Neck_033", [0.0, 1.443, -0.02]),
            ("Head_null_035", "Head_034", [0.0, 1.65, -0.02]),
            ("FrontHair_036", "Head_null_035", [0.0, 1.57, 0.11]),
            ("BackHair1_037", "Head_null_035", [0.0, 1.60, -0.12]),
            ("BackHair2_038", "BackHair1_037", [0.0, 1.45, -0.13]),
            ("face_047", "Head_034", [0.0, 1.443, -0.02]),
            ("atama_n_048", "face_047", [0.0, 1.473, -0.017]),
            ("mayu_049", "atama_n_048", [0.0, 1.53, 0.07]),
            ("eye_Left_057", "atama_n_048", [0.035, 1.50, 0.07]),
            ("eye_Right_091", "atama_n_048", [-0.035, 1.50, 0.07]),
            ("jaw_063", "atama_n_048", [0.0, 1.43, 0.0]),
        ];
        let limb = [
            ("Shoulder", "Spine3_032", [0.03, 1.33, -0.03]),
            ("Arm", "Shoulder", [0.13, 1.33, -0.03]),
            ("ForeArm", "Arm", [0.37, 1.33, -0.03]),
            ("Hand", "ForeArm", [0.60, 1.33, -0.03]),
            ("UpLeg", "Hips_02", [0.08, 0.86, 0.0]),
            ("Leg", "UpLeg", [0.08, 0.47, 0.0]),
            ("Foot", "Leg", [0.08, 0.08, 0.0]),
            ("Toes", "Foot", [0.08, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Neck), Some("Neck_033"));
        assert_eq!(at(B::Head), Some("Head_034"));
        assert_eq!(at(B::LeftEye), Some("eye_Left_057"));
        assert_eq!(at(B::Jaw), Some("jaw_063"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftArm"));
    }

    #[test]
    fn joints_wrapped_by_nodes_named_like_them_in_their_place_are_the_joints() {
        // Sketchfab's conversion of a Maya rig with segment scale compensation (metres,
        // +Y up, facing +Z): every joint `X` hangs from a node `X_scaleCompensation` in
        // its place, which the skin does not bind. The jaw hangs in front of the head.
        let body = [
            ("Hips_1", "", [0.0, 1.0, 0.0]),
            ("Spine_6_scaleCompensation", "Hips_1", [0.0, 1.1, 0.0]),
            ("Spine_6", "Spine_6_scaleCompensation", [0.0, 1.1, 0.0]),
            ("Chest_8_scaleCompensation", "Spine_6", [0.0, 1.3, 0.0]),
            ("Chest_8", "Chest_8_scaleCompensation", [0.0, 1.3, 0.0]),
            ("Neck_13_scaleCompensation", "Chest_8", [0.0, 1.45, 0.01]),
            ("Neck_13", "Neck_13_scaleCompensation", [0.0, 1.45, 0.01]),
            ("Head_14_scaleCompensation", "Neck_13", [0.0, 1.55, 0.02]),
            ("Head_14", "Head_14_scaleCompensation", [0.0, 1.55, 0.02]),
            ("Jaw_15_scaleCompensation", "Head_14", [0.0, 1.52, 0.07]),
            ("Jaw_15", "Jaw_15_scaleCompensation", [0.0, 1.52, 0.07]),
        ];
        let limb = [
            ("Arm_scaleCompensation", "Chest_8", [0.15, 1.35, 0.0]),
            ("Arm", "Arm_scaleCompensation", [0.15, 1.35, 0.0]),
            ("ForeArm", "Arm", [0.40, 1.35, 0.0]),
            ("Hand", "ForeArm", [0.63, 1.35, 0.0]),
            ("UpLeg_scaleCompensation", "Hips_1", [0.09, 0.95, 0.0]),
            ("UpLeg", "UpLeg_scaleCompensation", [0.09, 0.95, 0.0]),
            ("Leg", "UpLeg", [0.09, 0.52, 0.0]),
            ("Foot", "Leg", [0.09, 0.08, 0.0]),
            ("Toes", "Foot", [0.09, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Spine), Some("Spine_6"));
        assert_eq!(at(B::Chest), Some("Chest_8"));
        assert_eq!(at(B::Neck), Some("Neck_13"));
        assert_eq!(at(B::Head), Some("Head_14"));
        assert_eq!(at(B::Jaw), Some("Jaw_15"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftArm"));
        assert_eq!(at(B::RightUpperLeg), Some("RightUpLeg"));
    }

    #[test]
    fn twist_joints_in_line_with_the_neck_lead_on_to_the_head() {
        // Reallusion Character Creator's rig as Blender writes it (metres, +Y up,
        // facing +Z): `CC_Base_NeckTwist01` and `CC_Base_NeckTwist02` are the neck,
        // one above the other, and `CC_Base_Head` above them carries the face.
        let body = [
            ("CC_Base_Hip", "", [0.0, 0.99, 0.0]),
            ("CC_Base_Waist", "CC_Base_Hip", [0.0, 1.06, 0.0]),
            ("CC_Base_Spine01", "CC_Base_Waist", [0.0, 1.16, 0.0]),
            ("CC_Base_Spine02", "CC_Base_Spine01", [0.0, 1.30, -0.02]),
            ("CC_Base_NeckTwist01", "CC_Base_Spine02", [0.0, 1.47, -0.03]),
            (
                "CC_Base_NeckTwist02",
                "CC_Base_NeckTwist01",
                [0.0, 1.51, -0.02],
            ),
            ("CC_Base_Head", "CC_Base_NeckTwist02", [0.0, 1.56, -0.01]),
            ("CC_Base_FacialBone", "CC_Base_Head", [0.0, 1.60, 0.05]),
            ("CC_Base_L_Eye", "CC_Base_FacialBone", [0.03, 1.62, 0.08]),
            ("CC_Base_R_Eye", "CC_Base_FacialBone", [-0.03, 1.62, 0.08]),
            ("CC_Base_JawRoot", "CC_Base_FacialBone", [0.0, 1.58, 0.03]),
        ];
        let limb = [
            ("Clavicle", "CC_Base_Spine02", [0.03, 1.42, -0.03]),
            ("Upperarm", "Clavicle", [0.17, 1.42, -0.04]),
            ("UpperarmTwist01", "Upperarm", [0.17, 1.42, -0.04]),
            ("Forearm", "Upperarm", [0.43, 1.42, -0.04]),
            ("Hand", "Forearm", [0.68, 1.42, -0.04]),
            ("Thigh", "CC_Base_Hip", [0.09, 0.93, 0.0]),
            ("Calf", "Thigh", [0.09, 0.50, 0.0]),
            ("Foot", "Calf", [0.09, 0.08, -0.02]),
            ("ToeBase", "Foot", [0.09, 0.01, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["CC_Base_L_", "CC_Base_R_"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::UpperChest), Some("CC_Base_Spine02"));
        assert_eq!(at(B::Neck), Some("CC_Base_NeckTwist01"));
        assert_eq!(at(B::Head), Some("CC_Base_Head"));
        assert_eq!(at(B::LeftEye), Some("CC_Base_L_Eye"));
        assert_eq!(at(B::LeftUpperArm), Some("CC_Base_L_Upperarm"));
    }

    #[test]
    fn a_marker_leaf_beside_the_neck_is_no_fork_of_the_head_and_a_named_head_keeps_its_face() {
        // A MotionBuilder rig with physics proxies as leaf joints (centimetres, +Y
        // up, facing +Z): `Neck` 1.6 cm beside `Character1_Neck`, the head 8.8 cm
        // above it; then a head named so whose children are its hair, jaw and eyes.
        let limb = [
            ("Shoulder", "Character1_Spine1", [4.0, 140.0, 0.0]),
            ("Arm", "Shoulder", [17.0, 140.0, 0.0]),
            ("ForeArm", "Arm", [45.0, 140.0, 0.0]),
            ("Hand", "ForeArm", [70.0, 140.0, 0.0]),
            ("UpLeg", "Character1_Hips", [9.0, 92.0, 0.0]),
            ("Leg", "UpLeg", [9.0, 50.0, 0.0]),
            ("Foot", "Leg", [9.0, 8.0, 0.0]),
            ("ToeBase", "Foot", [9.0, 1.0, 12.0]),
        ];
        let mut body = vec![
            ("Character1_Hips", "", [0.0, 95.0, 0.0]),
            ("Character1_Spine", "Character1_Hips", [0.0, 110.0, 0.0]),
            ("Character1_Spine1", "Character1_Spine", [0.0, 125.0, 0.0]),
            ("Character1_Neck", "Character1_Spine1", [0.0, 150.0, 0.6]),
            ("Character1_Head", "Character1_Neck", [0.0, 158.1, 4.1]),
            ("Neck", "Character1_Neck", [-1.1, 150.1, 1.7]),
        ];
        let r = recognized_with_limbs(&body, ["Character1_Left", "Character1_Right"], &limb);
        let at = |r: &super::super::RecognizedMap, bone| r.map.bones.get(&bone).cloned();
        assert_eq!(at(&r, B::Neck).as_deref(), Some("Character1_Neck"));
        assert_eq!(at(&r, B::Head).as_deref(), Some("Character1_Head"));
        body.truncate(5);
        body.extend([
            ("head_hair", "Character1_Head", [0.0, 170.0, 0.0]),
            ("jaw", "Character1_Head", [0.0, 155.0, 8.0]),
        ]);
        let r = recognized_with_limbs(&body, ["Character1_Left", "Character1_Right"], &limb);
        assert_eq!(at(&r, B::Head).as_deref(), Some("Character1_Head"));
    }

    /// SMPL's body as MoDi writes it (metres, +Y up, facing +Z): a zero-length joint
    /// at the pelvis and at the upper chest for each branch, the bones going on from
    /// their children; the head a leaf shorter than the neck, no nub.
    const PIVOTED_BODY: [(&str, &str, [f32; 3]); 8] = [
        ("Pelvis", "", [0.0, 0.94, 0.0]),
        ("Pelvis_Spine1", "Pelvis", [0.0, 0.94, 0.0]),
        ("Spine1", "Pelvis_Spine1", [0.0, 1.065, -0.04]),
        ("Spine2", "Spine1", [0.0, 1.205, -0.01]),
        ("Spine3", "Spine2", [0.0, 1.26, 0.0]),
        ("Spine3_Neck", "Spine3", [0.0, 1.26, 0.0]),
        ("Neck", "Spine3_Neck", [0.0, 1.40, -0.02]),
        ("Head", "Neck", [0.0, 1.52, 0.0]),
    ];
    const PIVOTED_LIMB: [(&str, &str, [f32; 3]); 10] = [
        ("CollarPivot", "Spine3", [0.0, 1.26, 0.0]),
        ("Collar", "CollarPivot", [0.072, 1.377, -0.01]),
        ("Shoulder", "Collar", [0.19, 1.32, -0.03]),
        ("Elbow", "Shoulder", [0.45, 1.32, -0.03]),
        ("Wrist", "Elbow", [0.70, 1.32, -0.03]),
        ("HipPivot", "Pelvis", [0.0, 0.94, 0.0]),
        ("Hip", "HipPivot", [0.07, 0.86, 0.0]),
        ("Knee", "Hip", [0.08, 0.47, 0.0]),
        ("Ankle", "Knee", [0.08, 0.06, -0.03]),
        ("Foot", "Ankle", [0.08, 0.0, 0.09]),
    ];

    #[test]
    fn zero_length_branch_joints_are_left_out_of_spine_and_shoulder_where_joints_outnumber_roles() {
        let r = recognized_with_limbs(&PIVOTED_BODY, ["L_", "R_"], &PIVOTED_LIMB);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Hips), Some("Pelvis"));
        assert_eq!(at(B::Spine), Some("Spine1"));
        assert_eq!(at(B::Chest), Some("Spine2"));
        assert_eq!(at(B::UpperChest), Some("Spine3"));
        // The neck keeps its pivot: CMU's `lowerneck`, at the thorax, turns the neck.
        assert_eq!(at(B::Neck), Some("Spine3_Neck"));
        assert_eq!(at(B::Head), Some("Head"));
        assert_eq!(at(B::LeftShoulder), Some("L_Collar"));
        assert_eq!(at(B::LeftUpperArm), Some("L_Shoulder"));
        assert_eq!(at(B::LeftUpperLeg), Some("L_Hip"));
    }

    #[test]
    fn a_zero_length_branch_joint_keeps_its_role_where_the_roles_need_it() {
        // CMU's ASF conversions: `lowerback` at the hips turns the lower back, and
        // with `upperback` and `thorax` above it the three spine roles are filled.
        let body: Vec<_> = PIVOTED_BODY
            .iter()
            .copied()
            .filter(|(name, ..)| *name != "Spine2")
            .map(|(name, parent, at)| match name {
                "Spine3" => (name, "Spine1", at),
                _ => (name, parent, at),
            })
            .collect();
        let r = recognized_with_limbs(&body, ["L_", "R_"], &PIVOTED_LIMB);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Spine), Some("Pelvis_Spine1"));
        assert_eq!(at(B::Chest), Some("Spine1"));
        assert_eq!(at(B::UpperChest), Some("Spine3"));
    }
}
