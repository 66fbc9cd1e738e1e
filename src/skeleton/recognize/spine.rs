//! Stages 8 and 9: spine, neck and head. The joints between the hips and the arm
//! branch become spine, chest and upper chest (`split_spine`); the chain above the
//! branch up to its first fork is neck and head, without an end nub (`solve_neck`).

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use super::names::Role;
use super::rest_joints::RestJoints;

/// Heuristic: the spine chain is every joint from the hips' body child to the arm
/// branch (coincident joints merged). One joint is the spine; two are spine and
/// chest (upper chest if so named); three or more are spine (first), chest (the middle one, or the one named
/// chest) and upper chest (the branch). When the arms hang from a joint named neck
/// (3ds Max Biped), that joint is the neck and the chain ends below it. Detours out
/// and back are no part of the spine (`without_detours`).
pub(super) fn split_spine(
    rig: &RestJoints,
    chain: &[usize],
) -> Vec<(HumanBone, usize, f32, String)> {
    let reps = rig.collapse(&without_detours(rig, chain));
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
/// children (controls and helpers ignored) to the first fork or leaf: the head.
/// A leaf at the top of three or more joints without an end site, whose bone is 1.5
/// times the others or whose name says end, is the nub above the head (Mixamo's
/// `HeadTop_End`). With two or more joints left, the first is the neck.
pub(super) fn solve_neck(rig: &RestJoints, branch: usize, head_root: usize) -> Neck {
    let mut line = vec![head_root];
    let mut j = head_root;
    while let [only] = rig.plain_kids(j).as_slice() {
        line.push(*only);
        j = *only;
    }
    let mut nub = None;
    if let [.., prev, last] = line.as_slice()
        && rig.kids[*last].is_empty()
        && rig.end[*last].is_none()
    {
        let mut below = vec![rig.pos[branch]];
        below.extend(line[..line.len() - 1].iter().map(|&x| rig.pos[x]));
        let segments: Vec<f32> = below.windows(2).map(|w| w[0].distance(w[1])).collect();
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
    let reps = rig.collapse(&line);
    let named_head = reps
        .iter()
        .skip(1)
        .position(|&x| rig.names[x].role == Some(Role::Head))
        .map(|p| p + 1);
    let head_at = named_head.unwrap_or(reps.len().saturating_sub(1));
    let head = reps.get(head_at).copied().unwrap_or(head_root);
    let neck = (head_at > 0).then(|| reps[0]);
    Neck { neck, head, nub }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::recognized_with_limbs;
    use crate::humanoid::HumanBone as B;

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
}
