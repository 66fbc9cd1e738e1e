//! Stage 10: fingers. Every leaf path below the hand is a digit whose last three
//! joints are its phalanges (`phalanges`); digits are named by their names when
//! those are distinct, else the thumb starts nearest the wrist and the others are
//! ordered away from it (`solve_fingers`).

use glam::Vec3;

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use super::names::Role;
use super::rest_joints::RestJoints;

/// The left hand's bone for phalanx `k` (0..3) of finger `f` (0 thumb .. 4 little;
/// the right hand's are their mirror). Finger bones follow `leftThumbMetacarpal`
/// three by three in `HumanBone` order.
pub(super) fn left_digit(f: usize, k: usize) -> Option<HumanBone> {
    HumanBone::from_index(B::LeftThumbMetacarpal.index() + 3 * f.min(4) + k.min(2))
}

const DIGIT_ROLES: [Role; 5] = [
    Role::Thumb,
    Role::Index,
    Role::Middle,
    Role::Ring,
    Role::Little,
];

/// One digit: its phalanges (up to three) and which finger it is (0 thumb .. 4
/// little).
pub(super) struct Digit {
    pub(super) joints: Vec<usize>,
    pub(super) finger: usize,
    pub(super) by_name: bool,
}

/// Heuristic: every leaf path below the hand is a digit (controls and attachments
/// left out); its phalanges are its last three joints, once coincident joints are
/// merged and an end nub dropped (a fourth joint past the third, unless the first
/// joint is a metacarpal: named so, or a bone 1.9 times the next, where a proximal
/// phalanx is about 1.6 times, or the last joint has an end site). Three or more digits are needed. Fingers are named by their
/// names when every digit has a distinct finger name; otherwise the thumb is the
/// digit starting nearest the hand (by a clear margin, or always with five digits)
/// and the others are ordered from the thumb's side (index) away (little).
pub(super) fn solve_fingers(rig: &RestJoints, hand: usize, front: Vec3) -> Vec<Digit> {
    let mut paths: Vec<Vec<usize>> = Vec::new();
    for start in rig.body_kids(hand) {
        for leaf in rig.subtree(start) {
            if !rig.kids[leaf].is_empty() {
                continue;
            }
            let path = rig.path(start, leaf);
            // End nubs are dropped below; controls and attachments are not digits.
            if path.iter().all(|&x| !rig.avoid(x) || rig.names[x].helper) {
                paths.push(path);
            }
        }
    }
    let mut digits: Vec<Vec<usize>> = paths.iter().map(|p| phalanges(rig, p)).collect();
    digits.retain(|d| !d.is_empty());
    if digits.len() > 5 {
        digits.retain(|d| d.len() >= 2);
        digits.sort_by(|a, b| {
            let len = |d: &Vec<usize>| rig.pos[d[0]].distance(rig.pos[d[d.len() - 1]]);
            len(b)
                .partial_cmp(&len(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        digits.truncate(5);
    }
    if digits.len() < 3 {
        return Vec::new();
    }
    let hand_pos = rig.pos[hand];
    // By name, when every digit names a different finger.
    let named: Vec<Option<usize>> = digits
        .iter()
        .map(|d| {
            d.iter().find_map(|&j| {
                rig.names[j]
                    .role
                    .and_then(|r| DIGIT_ROLES.iter().position(|&x| x == r))
            })
        })
        .collect();
    let mut distinct: Vec<usize> = named.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == digits.len() && named.iter().all(Option::is_some) {
        return digits
            .into_iter()
            .zip(named)
            .filter_map(|(joints, f)| {
                f.map(|finger| Digit {
                    joints,
                    finger,
                    by_name: true,
                })
            })
            .collect();
    }
    // By geometry: the thumb starts nearest the hand.
    let start: Vec<f32> = digits
        .iter()
        .map(|d| rig.pos[d[0]].distance(hand_pos))
        .collect();
    let nearest = (0..digits.len()).min_by(|&a, &b| {
        start[a]
            .partial_cmp(&start[b])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut sorted = start.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    // The median start of the digits other than the nearest one.
    let median_other = sorted
        .get(1 + (sorted.len() - 1) / 2)
        .copied()
        .unwrap_or(0.0);
    let thumb = nearest.filter(|&t| digits.len() == 5 || start[t] <= 0.75 * median_other);
    let fingers: Vec<usize> = (0..digits.len()).filter(|&i| Some(i) != thumb).collect();
    let along = (fingers.iter().map(|&i| rig.pos[digits[i][0]]).sum::<Vec3>()
        / fingers.len().max(1) as f32
        - hand_pos)
        .normalize_or_zero();
    let toward_thumb = match thumb {
        Some(t) => (rig.pos[digits[t][0]] - hand_pos).reject_from(along),
        None => front.reject_from(along),
    }
    .normalize_or_zero();
    let mut order = fingers.clone();
    order.sort_by(|&a, &b| {
        let s = |i: usize| (rig.pos[digits[i][0]] - hand_pos).dot(toward_thumb);
        s(b).partial_cmp(&s(a)).unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out = Vec::new();
    let mut slots = digits.into_iter().map(Some).collect::<Vec<_>>();
    if let Some(t) = thumb
        && let Some(joints) = slots[t].take()
    {
        out.push(Digit {
            joints,
            finger: 0,
            by_name: false,
        });
    }
    for (rank, i) in order.into_iter().take(4).enumerate() {
        if let Some(joints) = slots[i].take() {
            out.push(Digit {
                joints,
                finger: rank + 1,
                by_name: false,
            });
        }
    }
    out
}

/// The phalanges of one leaf path below the hand (see `solve_fingers`).
fn phalanges(rig: &RestJoints, path: &[usize]) -> Vec<usize> {
    let mut joints = rig.collapse(path);
    while joints.last().is_some_and(|&j| rig.names[j].helper) {
        joints.pop();
    }
    while joints.len() > 2
        && joints
            .first()
            .is_some_and(|&j| rig.names[j].role == Some(Role::Metacarpal))
    {
        joints.remove(0);
    }
    if joints.len() >= 4 {
        let n = joints.len();
        let last = joints[n - 1];
        let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
        let second_bone = rig.pos[joints[1]].distance(rig.pos[joints[2]]);
        let metacarpal = rig.names[joints[0]].role == Some(Role::Metacarpal)
            || first_bone >= 1.9 * second_bone
            || rig.end[last].is_some();
        if !metacarpal && rig.kids[last].is_empty() {
            joints.pop();
        }
    }
    let n = joints.len();
    joints.split_off(n.saturating_sub(3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::recognize::test_support::skeleton;

    #[test]
    fn fourth_finger_joint_is_a_nub_unless_the_first_is_a_metacarpal() {
        // A proximal phalanx is about 1.6 times the next bone, a metacarpal twice.
        for (bones, want) in [
            ([0.045, 0.025, 0.02], ["f1", "f2", "f3"]),
            ([0.09, 0.045, 0.025], ["f2", "f3", "f4"]),
        ] {
            let x1 = 0.01;
            let x2 = x1 + bones[0];
            let x3 = x2 + bones[1];
            let x4 = x3 + bones[2];
            let s = skeleton(&[
                ("hand", None, [0.0, 0.0, 0.0]),
                ("f1", Some("hand"), [x1, 0.0, 0.0]),
                ("f2", Some("f1"), [x2, 0.0, 0.0]),
                ("f3", Some("f2"), [x3, 0.0, 0.0]),
                ("f4", Some("f3"), [x4, 0.0, 0.0]),
            ]);
            let rig = RestJoints::new(&s);
            let got: Vec<&str> = phalanges(&rig, &[1, 2, 3, 4])
                .into_iter()
                .map(|j| rig.name(j))
                .collect();
            assert_eq!(got, want, "bones {bones:?}");
        }
    }
}
