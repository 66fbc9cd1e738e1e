//! Stage 10: fingers. Every leaf path below the hand is a digit whose last three
//! joints are its phalanges (`phalanges`); digits are named by their names when
//! those are distinct, else the thumb starts nearest the wrist and the others are
//! ordered away from it (`solve_fingers`).

use glam::Vec3;

use crate::humanoid::HumanBone;
use crate::humanoid::HumanBone as B;

use crate::skeleton::rest::PLACEHOLDER_END;

use super::names::Role;
use super::rest_joints::RestJoints;

/// The left hand's bone for phalanx `k` (0..3) of finger `f` (0 thumb .. 4 little;
/// the right hand's are their mirror). Finger bones follow `leftThumbMetacarpal`
/// three by three in `HumanBone` order.
pub(super) fn left_digit(f: usize, k: usize) -> Option<HumanBone> {
    HumanBone::from_index(B::LeftThumbMetacarpal.index() + 3 * f.min(4) + k.min(2))
}

/// How far from the hand, in lengths of its first bone, a digit starting at the
/// knuckles starts: a proximal phalanx starts past the palm, about 2.5 of its
/// lengths from the wrist; a metacarpal starts at the wrist, well within one of
/// its lengths.
const KNUCKLE: f32 = 1.5;

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
    /// Which phalanx (0..3) the first joint is: 1 for a two-joint thumb with no
    /// metacarpal (`thumb_first_phalanx`).
    pub(super) first: usize,
}

/// Heuristic: every leaf path below the hand is a digit (controls and attachments
/// left out); its phalanges are its last three joints, once coincident joints are
/// merged and an end nub dropped: a fourth joint past the third, unless the first
/// joint is no phalanx or the fourth is one. The first is none when it is a metacarpal
/// (named so, or a bone 1.9 times the next, where a proximal phalanx is about 1.6
/// times, starting at the wrist rather than at the knuckles: a Mixamo `Pinky1` is often
/// twice `Pinky2`), when most of the hand's digits start at the wrist, or when it is a
/// helper reaching across the hand to the digit's own knuckle
/// (`starts_with_a_knuckle_helper`); the fourth is one when it has an end site that is
/// no placeholder, unless most of the hand's digits of four joints start at the
/// knuckles (then the hand's fourth joints are nubs). Fingers are named by their
/// names when every digit has a distinct finger name (a cartoon hand's one or two
/// fingers so too, when each is a chain of two joints or more); otherwise, from
/// three digits up, the thumb is the
/// digit starting nearest the hand (by a clear margin, or always with five digits;
/// else the one digit named the thumb, if one is) and the others are ordered from
/// the thumb's side (index) away (little).
pub(super) fn solve_fingers(rig: &RestJoints, hand: usize, front: Vec3) -> Vec<Digit> {
    let mut digits = name_digits(rig, hand, front);
    for d in digits.iter_mut().filter(|d| d.finger == 0) {
        thumb_metacarpal_back(rig, hand, &mut d.joints);
    }
    let first = thumb_first_phalanx(rig, hand, &digits);
    for d in digits.iter_mut().filter(|d| d.finger == 0) {
        d.first = first;
    }
    digits
}

/// Heuristic: a thumb of fewer than three joints takes back the joint named a
/// metacarpal it was found below (`digit_joints` drops those, the fingers'
/// metacarpals being no VRM bones), when that joint hangs from the hand and leads
/// to the thumb alone: VRM's thumb has a metacarpal bone. Rokoko names its thumb
/// `Finger1`, the metacarpal `LeftFinger1Metacarpal` (no word for the thumb in it).
fn thumb_metacarpal_back(rig: &RestJoints, hand: usize, joints: &mut Vec<usize>) {
    if joints.len() >= 3 {
        return;
    }
    let Some(parent) = joints
        .first()
        .and_then(|&j| rig.skeleton.joints()[j].parent)
    else {
        return;
    };
    let from_hand = rig.skeleton.joints()[parent].parent == Some(hand);
    if from_hand
        && parent != hand
        && rig.names[parent].role == Some(Role::Metacarpal)
        && rig.body_kids(parent).len() == 1
    {
        joints.insert(0, parent);
    }
}

/// Heuristic: a thumb of two joints lacks one phalanx. It lacks the metacarpal
/// (its joints are the proximal and distal phalanges, as Quaternius' `Thumb2`,
/// `Thumb3`) when it starts at least half as far from the wrist as the other
/// digits do (a metacarpal starts at the wrist; the proximal phalanx past the
/// palm's base); else the distal.
fn thumb_first_phalanx(rig: &RestJoints, hand: usize, digits: &[Digit]) -> usize {
    let Some(thumb) = digits.iter().find(|d| d.finger == 0 && d.joints.len() == 2) else {
        return 0;
    };
    let from_wrist = |d: &Digit| rig.pos[d.joints[0]].distance(rig.pos[hand]);
    let mut others: Vec<f32> = digits
        .iter()
        .filter(|d| d.finger != 0)
        .map(from_wrist)
        .collect();
    others.sort_by(f32::total_cmp);
    match others.get(others.len() / 2) {
        Some(&median) if from_wrist(thumb) >= 0.5 * median => 1,
        _ => 0,
    }
}

/// The digits below `hand` and which finger each is (see `solve_fingers`).
fn name_digits(rig: &RestJoints, hand: usize, front: Vec3) -> Vec<Digit> {
    let mut paths: Vec<Vec<usize>> = Vec::new();
    for start in digit_starts(rig, hand) {
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
    // Most of the hand's long digits (two at least) end past their tips.
    let long = paths
        .iter()
        .filter(|p| digit_joints(rig, p).len() >= 4)
        .count();
    let past = paths
        .iter()
        .filter(|p| ends_past_the_tip(rig, hand, p))
        .count();
    let nubs = past >= 2 && 2 * past > long;
    // Most of the hand's long digits (two at least) start at the wrist.
    let at_wrist = paths
        .iter()
        .filter(|p| starts_at_the_wrist(rig, hand, p))
        .count();
    let metacarpals = at_wrist >= 2 && 2 * at_wrist > long;
    let mut digits: Vec<Vec<usize>> = paths
        .iter()
        .map(|p| phalanges(rig, hand, p, nubs, metacarpals))
        .collect();
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
    let hand_pos = rig.pos[hand];
    // By name, when every digit names a different finger.
    let mut named: Vec<Option<usize>> = digits
        .iter()
        .map(|d| {
            d.iter().find_map(|&j| {
                rig.names[j]
                    .role
                    .and_then(|r| DIGIT_ROLES.iter().position(|&x| x == r))
            })
        })
        .collect();
    drop_lone_unnamed(rig, &mut digits, &mut named);
    let mut distinct: Vec<usize> = named.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    // Fewer than three digits are named only as chains: a lone joint (CMU's
    // `lthumb`) says too little of which phalanx it is.
    let chains = digits.len() >= 3 || digits.iter().all(|d| d.len() >= 2);
    if chains && distinct.len() == digits.len() && named.iter().all(Option::is_some) {
        return digits
            .into_iter()
            .zip(named)
            .filter_map(|(joints, f)| {
                f.map(|finger| Digit {
                    joints,
                    finger,
                    by_name: true,
                    first: 0,
                })
            })
            .collect();
    }
    // By geometry, from three digits: the thumb starts nearest the hand.
    if digits.len() < 3 {
        return biped_numbered(rig, hand, digits);
    }
    // Starts in one place are one start, the first digit's: which of them lies
    // nearer the hand is a matter of rounding (`place`).
    let start: Vec<f32> = (0..digits.len())
        .map(|i| {
            let first = (0..digits.len())
                .find(|&k| rig.coincident(digits[k][0], digits[i][0]))
                .unwrap_or(i);
            rig.pos[digits[first][0]].distance(hand_pos)
        })
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
    // Where the starts tell no thumb apart, the one digit named the thumb (a
    // mitten's `HandThumb` beside `Hand.Index` and `Hand.Fingers`) is it.
    let named_thumb = {
        let mut thumbs = (0..digits.len()).filter(|&i| named[i] == Some(0));
        match (thumbs.next(), thumbs.next()) {
            (Some(t), None) => Some(t),
            _ => None,
        }
    };
    let thumb = nearest
        .filter(|&t| digits.len() == 5 || start[t] <= 0.75 * median_other)
        .or(named_thumb);
    let fingers: Vec<usize> = (0..digits.len()).filter(|&i| Some(i) != thumb).collect();
    let places: Vec<Vec3> = (0..digits.len()).map(|i| place(rig, &digits, i)).collect();
    let along = (fingers.iter().map(|&i| places[i]).sum::<Vec3>() / fingers.len().max(1) as f32
        - hand_pos)
        .normalize_or_zero();
    let toward_thumb = match thumb {
        Some(t) => (places[t] - hand_pos).reject_from(along),
        None => front.reject_from(along),
    }
    .normalize_or_zero();
    let mut order = fingers.clone();
    order.sort_by(|&a, &b| {
        let s = |i: usize| (places[i] - hand_pos).dot(toward_thumb);
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
            first: 0,
        });
    }
    for (rank, i) in order.into_iter().take(4).enumerate() {
        if let Some(joints) = slots[i].take() {
            out.push(Digit {
                joints,
                finger: rank + 1,
                by_name: false,
                first: 0,
            });
        }
    }
    out
}

/// Where digit `i` of `digits` lies across the hand: its first joint, unless another
/// digit starts in the same place (digits fanning out of one point, a fist's from one
/// knuckle): then the first place down the digit past that one (its next joint, its
/// end, or the nubs below its last joint). Starts in one place differ by rounding
/// alone, by how each joint's frame is turned, not by where the digits go.
fn place(rig: &RestJoints, digits: &[Vec<usize>], i: usize) -> Vec3 {
    let d = &digits[i];
    let start = rig.pos[d[0]];
    let shared = digits
        .iter()
        .enumerate()
        .any(|(k, other)| k != i && rig.coincident(other[0], d[0]));
    let away = |p: &Vec3| p.distance(start) > rig.eps;
    if !shared {
        return start;
    }
    let last = d[d.len() - 1];
    let mut below = Vec::new();
    let mut j = last;
    while let Some(&k) = rig.kids[j].first() {
        below.push(rig.pos[k]);
        j = k;
    }
    d.iter()
        .map(|&j| rig.pos[j])
        .chain(rig.end[last])
        .chain(below)
        .find(away)
        .unwrap_or(start)
}

/// The joints the digits start from: the hand's children, each one in the hand's
/// place with children of its own (a palm root at the wrist that every finger
/// hangs from, `L_handRoot_jnt` beside `L_hand_jnt`) replaced by its children, as
/// the hand again.
fn digit_starts(rig: &RestJoints, hand: usize) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut stack = rig.body_kids(hand);
    while let Some(j) = stack.pop() {
        if rig.coincident(j, hand) && !rig.body_kids(j).is_empty() {
            stack.extend(rig.body_kids(j));
        } else {
            starts.push(j);
        }
    }
    starts.reverse();
    starts
}

/// Heuristic: a lone joint whose name says no body part (not even a finger)
/// below the hand, beside chains of two joints or more that all name different
/// fingers, is no digit (a misspelt IK target, `Fist_Targer`, beside
/// `HandMiddle1`-`3` and `HandThumb1`-`3`): it is dropped so that the chains are
/// named by their names, not ordered by where they start (a cartoon hand's
/// thumb may start past its fingers).
fn drop_lone_unnamed(
    rig: &RestJoints,
    digits: &mut Vec<Vec<usize>>,
    named: &mut Vec<Option<usize>>,
) {
    let lone = |i: usize| digits[i].len() == 1 && rig.names[digits[i][0]].role.is_none();
    let kept: Vec<usize> = (0..digits.len()).filter(|&i| !lone(i)).collect();
    if kept.len() == digits.len() || kept.len() < 2 || kept.iter().any(|&i| digits[i].len() < 2) {
        return;
    }
    let mut fingers: Vec<usize> = kept.iter().filter_map(|&i| named[i]).collect();
    fingers.sort_unstable();
    fingers.dedup();
    if fingers.len() != kept.len() {
        return;
    }
    *digits = kept
        .iter()
        .map(|&i| std::mem::take(&mut digits[i]))
        .collect();
    *named = kept.iter().map(|&i| named[i]).collect();
}

/// A path's joints once coincident joints are merged, end nubs named so dropped,
/// helpers wrapping the next joint dropped from the start (MakeHuman's `__lthumb`
/// above `lthumb`, its only child: no phalanx), joints named metacarpals dropped
/// from the start (keeping one: a one-joint finger past a palm bone, as Rigify's
/// `palm.01` -> `finger_index.01`, is that finger's proximal phalanx) and a
/// finger's metacarpal numbered 0 dropped (`numbered_metacarpal`).
fn digit_joints(rig: &RestJoints, path: &[usize]) -> Vec<usize> {
    let mut joints = rig.collapse(path);
    while joints.last().is_some_and(|&j| rig.names[j].helper) {
        joints.pop();
    }
    while joints.len() > 1
        && joints
            .first()
            .is_some_and(|&j| rig.names[j].helper && rig.body_kids(j).len() == 1)
    {
        joints.remove(0);
    }
    while joints.len() > 1
        && joints
            .first()
            .is_some_and(|&j| rig.names[j].role == Some(Role::Metacarpal))
    {
        joints.remove(0);
    }
    if let [first, next, ..] = joints[..]
        && numbered_metacarpal(rig, first, next)
    {
        joints.remove(0);
    }
    joints
}

/// Heuristic: a finger's joint numbered 0 (H-Anim's `l_index0` .. `l_pinky0`, the
/// carpometacarpal joints; its thumb's is `l_thumb1`) that starts at the wrist,
/// within `KNUCKLE` lengths of its bone (to `next`) from its parent, is the
/// metacarpal: no VRM bone, so the phalanges start at the joint numbered 1. A
/// finger counted from 0 at the knuckles (`Index0` .. `Index2`, a proximal phalanx
/// past the palm) keeps its 0.
fn numbered_metacarpal(rig: &RestJoints, joint: usize, next: usize) -> bool {
    let finger = matches!(
        rig.names[joint].role,
        Some(Role::Index | Role::Middle | Role::Ring | Role::Little)
    );
    let Some(parent) = rig.skeleton.joints()[joint].parent else {
        return false;
    };
    let bone = rig.pos[joint].distance(rig.pos[next]);
    finger
        && rig.names[joint].key.rsplit(' ').next() == Some("0")
        && bone > 0.0
        && rig.pos[joint].distance(rig.pos[parent]) < KNUCKLE * bone
}

/// Heuristic: whether a digit of four or more joints starts at the knuckles (at
/// least `KNUCKLE` lengths of its first bone from the hand, past the palm, where a
/// metacarpal starts at the wrist) with a bone longer than the next, as a proximal
/// phalanx is (a short knuckle helper is not): its first joint is then the proximal phalanx,
/// and its fourth is past the fingertip, a nub, whatever its end site says. Blender
/// ends every leaf bone with an end site at its tail, so a Mixamo `Index4` exported
/// through it carries a bone-long end site like a phalanx.
fn ends_past_the_tip(rig: &RestJoints, hand: usize, path: &[usize]) -> bool {
    let joints = digit_joints(rig, path);
    if joints.len() < 4 {
        return false;
    }
    let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
    let second_bone = rig.pos[joints[1]].distance(rig.pos[joints[2]]);
    first_bone >= second_bone && starts_at_the_knuckles(rig, hand, &joints)
}

/// Whether a digit's first joint lies `KNUCKLE` lengths of its first bone or more from
/// the hand: past the palm, where a proximal phalanx starts; a metacarpal starts at the
/// wrist.
fn starts_at_the_knuckles(rig: &RestJoints, hand: usize, joints: &[usize]) -> bool {
    let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
    rig.pos[joints[0]].distance(rig.pos[hand]) >= KNUCKLE * first_bone
}

/// The digit 3ds Max's Biped numbers `joint` in: `Finger0` the thumb to `Finger4` the
/// little finger, the joints after the first adding their phalanx (`Finger01`,
/// `Finger02`), so the first figure after `finger` is the digit's.
fn biped_digit(rig: &RestJoints, joint: usize) -> Option<usize> {
    let name = rig.name(joint).to_ascii_lowercase();
    let after = &name[name.rfind("finger")? + "finger".len()..];
    let digit = after.chars().next()?.to_digit(10)?;
    (digit <= 4).then_some(digit as usize)
}

/// Heuristic: a hand of one or two digits, too few for their geometry, named in
/// Biped's numbering (`biped_digit`: `Finger0`, `Finger01` the thumb, `Finger1`,
/// `Finger11` the next): each digit a chain of two joints or more all numbered
/// alike, the numbers distinct, and a thumb beside another digit starting nearer the
/// hand than it. Beside a thumb, the one other digit is a mitten over the fingers
/// (Biped's hand of two digits), driven as the middle finger, as a mitten named so
/// is. Otherwise none.
fn biped_numbered(rig: &RestJoints, hand: usize, digits: Vec<Vec<usize>>) -> Vec<Digit> {
    let numbers: Option<Vec<usize>> = digits
        .iter()
        .map(|d| {
            let first = biped_digit(rig, *d.first()?)?;
            let alike = d.iter().all(|&j| biped_digit(rig, j) == Some(first));
            (d.len() >= 2 && alike).then_some(first)
        })
        .collect();
    let Some(numbers) = numbers else {
        return Vec::new();
    };
    let start = |d: &[usize]| rig.pos[d[0]].distance(rig.pos[hand]);
    let distinct = numbers.len() < 2 || numbers[0] != numbers[1];
    let thumb_nearest = digits
        .iter()
        .zip(&numbers)
        .all(|(d, &n)| n != 0 || digits.iter().all(|other| start(d) <= start(other)));
    if !distinct || !thumb_nearest {
        return Vec::new();
    }
    let mitten = numbers.len() == 2 && numbers.contains(&0);
    digits
        .into_iter()
        .zip(numbers)
        .map(|(joints, number)| (joints, if mitten && number != 0 { 2 } else { number }))
        .map(|(joints, finger)| Digit {
            joints,
            finger,
            by_name: true,
            first: 0,
        })
        .collect()
}

/// Heuristic: whether a digit of four joints starts at the wrist, its first joint
/// within one length of its first bone from the hand, as a metacarpal does (Meta's
/// avatars: `LeftHandIndexMeta_jnt` 3.8 cm past the wrist, 6.2 cm to the knuckle,
/// then `Proximal`, `Intermediate`, `Distal`; the thumb's `Trapezium` before its
/// `Meta`).
fn starts_at_the_wrist(rig: &RestJoints, hand: usize, path: &[usize]) -> bool {
    let joints = digit_joints(rig, path);
    if joints.len() != 4 {
        return false;
    }
    let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
    rig.pos[joints[0]].distance(rig.pos[hand]) < first_bone
}

/// Heuristic: whether a digit of four joints starts with a knuckle helper: a first
/// joint at the knuckles (`starts_at_the_knuckles`) where another digit starts too,
/// the digits fanning out from one point, and a first bone turning more than
/// `ACROSS_THE_DIGIT` from the next, across the hand to the digit's own knuckle,
/// where a proximal phalanx runs on along the finger. Its other three joints are the
/// phalanges, the fourth one too when no end site shows it has a bone (walk1's
/// `__Index1_L`, `__Ring1_L` and `__Pinky1_L` start where `Middle1_L` does and reach
/// sideways to `Index1_L`, `Ring1_L` and `Pinky1_L`; a writer that leaves out End
/// Sites leaves `Index3_L` a leaf). Fingers curled at rest bend as far, each from its
/// own knuckle.
fn starts_with_a_knuckle_helper(rig: &RestJoints, hand: usize, joints: &[usize]) -> bool {
    if joints.len() != 4 || !starts_at_the_knuckles(rig, hand, joints) {
        return false;
    }
    let shared = digit_starts(rig, hand)
        .into_iter()
        .any(|s| !joints.contains(&s) && rig.coincident(s, joints[0]));
    if !shared {
        return false;
    }
    let first = rig.pos[joints[1]] - rig.pos[joints[0]];
    let second = rig.pos[joints[2]] - rig.pos[joints[1]];
    first.length() > 0.0
        && second.length() > 0.0
        && first.angle_between(second) > ACROSS_THE_DIGIT.to_radians()
}

/// Degrees a digit's first bone turns from the next, at rest, past which it is no
/// phalanx but a helper reaching across the hand: a resting finger bends far less at
/// its middle knuckle.
const ACROSS_THE_DIGIT: f32 = 60.0;

/// The phalanges of one leaf path below `hand` (see `solve_fingers`). `nubs`:
/// the hand's digits end past the fingertip (`ends_past_the_tip`), so a fourth
/// joint's end site makes it no phalanx. `metacarpals`: the hand's digits start at
/// the wrist (`starts_at_the_wrist`), so a digit of four joints starts with its
/// metacarpal (or, for the thumb, a carpal) and its fourth joint is a phalanx; so
/// does a digit whose own four joints hang from a joint it shares with another (a
/// little finger's metacarpal hung from the ring finger's, as 3ds Max exports
/// write it). A digit of four joints led by a knuckle helper
/// (`starts_with_a_knuckle_helper`) keeps its fourth joint too.
fn phalanges(
    rig: &RestJoints,
    hand: usize,
    path: &[usize],
    nubs: bool,
    metacarpals: bool,
) -> Vec<usize> {
    let mut joints = digit_joints(rig, path);
    if joints.len() >= 4 {
        let n = joints.len();
        let last = joints[n - 1];
        let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
        let second_bone = rig.pos[joints[1]].distance(rig.pos[joints[2]]);
        // An end site past the last joint makes it a phalanx, unless it is a
        // placeholder (Mixamo's `Index4` ends in `OFFSET 0 0 0`: `Index4` is the tip)
        // or the hand's digits end past their tips.
        let into = rig.pos[joints[n - 2]].distance(rig.pos[last]);
        let end_site = !nubs
            && rig.end[last].is_some_and(|e| e.distance(rig.pos[last]) > PLACEHOLDER_END * into);
        let metacarpal = rig.names[joints[0]].role == Some(Role::Metacarpal)
            || (first_bone >= 1.9 * second_bone && !starts_at_the_knuckles(rig, hand, &joints))
            || end_site
            || (metacarpals && (n == 4 || own_joints(rig, &joints) == 4))
            || starts_with_a_knuckle_helper(rig, hand, &joints);
        // The tip: a leaf, or a joint with only end nubs below (Blender's `_end`
        // under a Mixamo `Index4`).
        let tip = rig.kids[last].iter().all(|&k| rig.names[k].helper);
        if !metacarpal && tip {
            joints.pop();
        }
    }
    let n = joints.len();
    joints.split_off(n.saturating_sub(3))
}

/// How many of a digit's `joints` are its own: those past the last joint that
/// carries another digit too (more than one child that is no control or
/// attachment).
fn own_joints(rig: &RestJoints, joints: &[usize]) -> usize {
    let shared = joints[..joints.len().saturating_sub(1)]
        .iter()
        .rposition(|&j| rig.body_kids(j).len() > 1);
    joints.len() - shared.map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::Skeleton;
    use crate::skeleton::recognize::test_support::skeleton;
    use glam::Quat;

    /// `skeleton` from rows with owned names.
    fn owned_skeleton(table: &[(String, Option<String>, [f32; 3])]) -> Skeleton {
        let rows: Vec<(&str, Option<&str>, [f32; 3])> = table
            .iter()
            .map(|(n, p, x)| (n.as_str(), p.as_deref(), *x))
            .collect();
        skeleton(&rows)
    }

    /// Appends a chain `{prefix}0`, `{prefix}1`, ... at `points` to `rows`, each joint
    /// under the one before, the first under `parent`.
    fn push_chain(
        rows: &mut Vec<(String, Option<String>, [f32; 3])>,
        prefix: &str,
        parent: &str,
        points: impl IntoIterator<Item = [f32; 3]>,
    ) {
        let mut parent = parent.to_owned();
        for (k, p) in points.into_iter().enumerate() {
            let name = format!("{prefix}{k}");
            rows.push((name.clone(), Some(parent), p));
            parent = name;
        }
    }

    /// Each digit `solve_fingers` finds on the hand at joint 0 (facing +Z), as its
    /// finger and its joints' names, in finger order.
    fn digits_by_joints<'a>(rig: &'a RestJoints) -> Vec<(usize, Vec<&'a str>)> {
        let mut got: Vec<(usize, Vec<&str>)> = solve_fingers(rig, 0, Vec3::Z)
            .iter()
            .map(|d| (d.finger, d.joints.iter().map(|&j| rig.name(j)).collect()))
            .collect();
        got.sort();
        got
    }

    /// Each digit `solve_fingers` finds on the hand at joint 0 (facing +Z), as its
    /// finger and first joint's name, in finger order.
    fn digits_by_first_joint<'a>(rig: &'a RestJoints) -> Vec<(usize, &'a str)> {
        let mut got: Vec<(usize, &str)> = solve_fingers(rig, 0, Vec3::Z)
            .iter()
            .map(|d| (d.finger, rig.name(d.joints[0])))
            .collect();
        got.sort_unstable();
        got
    }

    #[test]
    fn a_little_finger_hung_from_the_ring_metacarpal_keeps_its_fourth_joint() {
        // A 3ds Max export without End Sites (offsets in cm): the index and ring
        // fingers start with a metacarpal at the wrist, the thumb hangs from the
        // index's, and the little finger's metacarpal from the ring's; the middle
        // finger has none. Every digit ends in a leaf, its distal phalanx.
        let rows: Vec<(String, Option<String>, [f32; 3])> = [
            ("Hand", "", [0.0, 0.0, 0.0]),
            ("Middle1", "Hand", [3.576, 0.0, 0.0]),
            ("Middle2", "Middle1", [1.891, 0.0, 0.0]),
            ("Middle3", "Middle2", [1.233, 0.0, 0.0]),
            ("Ring", "Hand", [0.098, -0.098, -0.368]),
            ("Ring1", "Ring", [3.146, 0.0, -0.284]),
            ("Ring2", "Ring1", [1.754, 0.0, -0.158]),
            ("Ring3", "Ring2", [1.204, 0.0, -0.109]),
            ("Pinky", "Ring", [0.065, -0.098, -0.375]),
            ("Pinky1", "Pinky", [2.594, 0.0, -0.58]),
            ("Pinky2", "Pinky1", [1.405, 0.0, -0.314]),
            ("Pinky3", "Pinky2", [0.899, 0.0, -0.201]),
            ("Index", "Hand", [0.098, -0.098, 0.368]),
            ("Index1", "Index", [3.449, 0.0, 0.311]),
            ("Index2", "Index1", [1.832, 0.0, 0.165]),
            ("Index3", "Index2", [1.095, 0.0, 0.099]),
            ("Thumb1", "Index", [0.065, -0.295, 0.375]),
            ("Thumb2", "Thumb1", [2.138, 0.0, 0.785]),
            ("Thumb3", "Thumb2", [1.428, 0.0, 0.524]),
        ]
        .iter()
        .scan(
            Vec::<(String, Vec3)>::new(),
            |placed, &(name, parent, offset)| {
                let at = placed
                    .iter()
                    .find(|(n, _)| n == parent)
                    .map_or(Vec3::ZERO, |(_, p)| *p)
                    + Vec3::from(offset) * 0.01;
                placed.push((name.to_owned(), at));
                let parent = (!parent.is_empty()).then(|| parent.to_owned());
                Some((name.to_owned(), parent, at.to_array()))
            },
        )
        .collect();
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let got = digits_by_joints(&rig);
        assert_eq!(
            got,
            [
                (0, vec!["Thumb1", "Thumb2", "Thumb3"]),
                (1, vec!["Index1", "Index2", "Index3"]),
                (2, vec!["Middle1", "Middle2", "Middle3"]),
                (3, vec!["Ring1", "Ring2", "Ring3"]),
                (4, vec!["Pinky1", "Pinky2", "Pinky3"]),
            ]
        );
    }

    #[test]
    fn a_thumb_led_by_a_helper_wrapping_its_first_joint_starts_below_it() {
        // MakeHuman's rig without End Sites (CMU captures through MocapNET): each
        // finger a metacarpal, then three phalanges; the thumb `__lthumb`, a helper
        // whose only child is `lthumb`, the thumb's metacarpal, then two phalanges,
        // the distal one a leaf. The helper is no bone of the thumb.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> =
            vec![("lhand".into(), None, [0.0, 0.0, 0.0])];
        for (k, z) in [(2, 0.01f32), (3, 0.0), (4, -0.01), (5, -0.02)] {
            let metacarpal = format!("metacarpal{}.l", k - 1);
            rows.push((metacarpal.clone(), Some("lhand".into()), [0.003, 0.0, z]));
            let mut parent = metacarpal;
            for (j, x) in [(1, 0.066f32), (2, 0.09), (3, 0.11)] {
                let name = format!("finger{k}-{j}.l");
                rows.push((name.clone(), Some(parent), [x, 0.0, z]));
                parent = name;
            }
        }
        for (name, parent, at) in [
            ("__lthumb", "lhand", [0.028f32, -0.003, 0.015]),
            ("lthumb", "__lthumb", [0.031, -0.004, 0.017]),
            ("finger1-2.l", "lthumb", [0.04, -0.026, 0.03]),
            ("finger1-3.l", "finger1-2.l", [0.072, -0.03, 0.035]),
        ] {
            rows.push((name.into(), Some(parent.into()), at));
        }
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let thumb = solve_fingers(&rig, 0, Vec3::Z)
            .into_iter()
            .find(|d| d.finger == 0)
            .expect("a thumb");
        let names: Vec<&str> = thumb.joints.iter().map(|&j| rig.name(j)).collect();
        assert_eq!(names, ["lthumb", "finger1-2.l", "finger1-3.l"]);
    }

    #[test]
    fn four_joint_digits_starting_at_the_wrist_keep_their_fourth_joint() {
        // A Meta (Oculus) avatar's hand: each finger `Meta` (its metacarpal, from
        // 3.8 cm past the wrist to the knuckle 6.2 cm on), `Proximal`,
        // `Intermediate`, `Distal`, a leaf; the thumb `Trapezium` (a carpal),
        // `Meta`, `Proximal`, `Distal`. The digits start at the wrist: the fourth
        // joint is the distal phalanx, no nub.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> =
            vec![("HandWrist".into(), None, [0.0, 0.0, 0.0])];
        for (f, z) in [
            ("Index", 0.02f32),
            ("Middle", 0.0),
            ("Ring", -0.02),
            ("Pinky", -0.04),
        ] {
            let mut parent = "HandWrist".to_owned();
            for (part, x) in [
                ("Meta", 0.038f32),
                ("Proximal", 0.1),
                ("Intermediate", 0.137),
                ("Distal", 0.161),
            ] {
                let name = format!("Hand{f}{part}");
                rows.push((name.clone(), Some(parent), [x, 0.0, z]));
                parent = name;
            }
        }
        let mut parent = "HandWrist".to_owned();
        for (part, [x, z]) in [
            ("Trapezium", [0.017f32, 0.012]),
            ("Meta", [0.035, 0.03]),
            ("Proximal", [0.06, 0.05]),
            ("Distal", [0.08, 0.07]),
        ] {
            let name = format!("HandThumb{part}");
            rows.push((name.clone(), Some(parent), [x, 0.0, z]));
            parent = name;
        }
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let got = digits_by_joints(&rig);
        assert_eq!(
            got[0],
            (
                0,
                vec!["HandThumbMeta", "HandThumbProximal", "HandThumbDistal"]
            )
        );
        assert_eq!(
            got[1],
            (
                1,
                vec![
                    "HandIndexProximal",
                    "HandIndexIntermediate",
                    "HandIndexDistal"
                ]
            )
        );
        assert_eq!(got.len(), 5, "{got:?}");
    }

    #[test]
    fn digits_below_a_palm_root_at_the_wrist_start_below_it() {
        // anim_utils' Maya rig: `L_hand_jnt` holds an end nub and, in its place,
        // `L_handRoot_jnt`, which every finger hangs from. The root is the hand
        // again, no phalanx of every digit.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("hand".into(), None, [0.0, 0.0, 0.0]),
            ("hand_end".into(), Some("hand".into()), [0.03, 0.0, 0.0]),
            ("handRoot".into(), Some("hand".into()), [0.0, 0.0, 0.0]),
        ];
        for (f, z) in [("a", 0.04f32), ("b", 0.02), ("c", 0.0), ("d", -0.02)] {
            let points = [0.09f32, 0.135, 0.16, 0.18].map(|x| [x, 0.0, z]);
            push_chain(&mut rows, f, "handRoot", points);
        }
        let thumb = [[0.02f32, 0.03], [0.045, 0.055], [0.07, 0.07]].map(|[x, z]| [x, 0.0, z]);
        push_chain(&mut rows, "t", "handRoot", thumb);
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let digits = solve_fingers(&rig, 0, Vec3::Z);
        let joints: Vec<(usize, Vec<&str>)> = digits
            .iter()
            .map(|d| (d.finger, d.joints.iter().map(|&j| rig.name(j)).collect()))
            .collect();
        assert_eq!(digits.len(), 5, "{joints:?}");
        for (finger, names) in &joints {
            assert!(!names.contains(&"handRoot"), "{joints:?}");
            assert_eq!(names.len(), 3, "finger {finger}: {names:?}");
        }
        assert!(joints.contains(&(0, vec!["t0", "t1", "t2"])), "{joints:?}");
        assert!(joints.contains(&(1, vec!["a0", "a1", "a2"])), "{joints:?}");
    }

    #[test]
    fn digits_led_by_knuckle_helpers_keep_their_leaf_phalanges() {
        // walk1's hand written without End Sites: the middle finger `Middle1_L`-
        // `Middle3_L` from the middle knuckle; every other finger a helper from that
        // same knuckle (`__Index1_L`) reaching sideways to its own knuckle, then three
        // phalanges, the distal one a leaf. The helper is no phalanx, so the leaf is
        // the distal phalanx, as the End Site the file had showed.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> =
            vec![("hand".into(), None, [0.0, 0.0, 0.0])];
        rows.push(("m1".into(), Some("hand".into()), [1.0, 0.0, 0.0]));
        rows.push(("m2".into(), Some("m1".into()), [1.31, 0.0, 0.0]));
        rows.push(("m3".into(), Some("m2".into()), [1.58, 0.0, 0.0]));
        for (f, z, bones) in [
            ("i", 0.19f32, [0.265f32, 0.21]),
            ("r", -0.21, [0.29, 0.23]),
            ("l", -0.42, [0.23, 0.13]),
        ] {
            // The helper at the middle knuckle, then the finger from its own knuckle.
            let x = [1.0, 1.0 + bones[0], 1.0 + bones[0] + bones[1]];
            let points = [[1.0, 0.0, 0.0]].into_iter().chain(x.map(|x| [x, 0.0, z]));
            push_chain(&mut rows, f, "hand", points);
        }
        let thumb = [[0.3f32, 0.3], [0.6, 0.6], [0.85, 0.8]].map(|[x, z]| [x, 0.0, z]);
        push_chain(&mut rows, "t", "hand", thumb);
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let got = digits_by_first_joint(&rig);
        assert_eq!(
            got,
            [(0, "t0"), (1, "i1"), (2, "m1"), (3, "r1"), (4, "l1")],
            "{got:?}"
        );
    }

    #[test]
    fn digits_fanning_out_of_one_point_are_ordered_by_where_they_go() {
        // A fist (knuckles.glb): five unnamed digits start in one place past the
        // wrist, written thumb first, then the little, ring, index and middle
        // fingers, and fan out from there. Their starts differ by rounding alone
        // (the little finger's 0.1 µm nearer the hand here, as turning the joints'
        // frames leaves it): the thumb is the first digit written there, and the
        // fingers are ordered from the thumb's side by where they go, not by
        // rounding or the order they are written in.
        let at = [0.06f32, 0.0, 0.0];
        let mut rows: Vec<(String, Option<String>, [f32; 3])> =
            vec![("hand".into(), None, [0.0, 0.0, 0.0])];
        for (prefix, [x1, z1], [x2, z2]) in [
            ("a", [0.08f32, 0.04], [0.1, 0.06]),
            ("b", [0.09, -0.04], [0.11, -0.05]),
            ("c", [0.1, -0.015], [0.125, -0.02]),
            ("d", [0.1, 0.025], [0.125, 0.03]),
            ("e", [0.105, 0.005], [0.135, 0.005]),
        ] {
            let start = if prefix == "b" {
                [at[0] - 1e-7, 0.0, 0.0]
            } else {
                at
            };
            push_chain(
                &mut rows,
                prefix,
                "hand",
                [start, [x1, 0.0, z1], [x2, 0.0, z2]],
            );
        }
        let s = owned_skeleton(&rows);
        let rig = RestJoints::new(&s);
        let got = digits_by_first_joint(&rig);
        assert_eq!(
            got,
            [(0, "a0"), (1, "d0"), (2, "e0"), (3, "c0"), (4, "b0")],
            "{got:?}"
        );
    }

    #[test]
    fn a_finger_curled_at_rest_from_its_own_knuckle_still_ends_in_its_tip() {
        // A Mixamo cartoon hand (`Index1`-`Index4`) curled at rest, bending 70° at
        // each knuckle: its first bone turns as far as a knuckle helper's, but no
        // other digit starts where it does, so `Index1` is the proximal phalanx.
        let bend = |deg: f32, length: f32| {
            let r = deg.to_radians();
            Vec3::new(r.cos(), -r.sin(), 0.0) * length
        };
        let f1 = Vec3::new(0.09, 0.0, 0.0);
        let f2 = f1 + bend(0.0, 0.04);
        let f3 = f2 + bend(70.0, 0.025);
        let f4 = f3 + bend(140.0, 0.02);
        let s = skeleton(&[
            ("hand", None, [0.0, 0.0, 0.0]),
            ("f1", Some("hand"), f1.to_array()),
            ("f2", Some("f1"), f2.to_array()),
            ("f3", Some("f2"), f3.to_array()),
            ("f4", Some("f3"), f4.to_array()),
        ]);
        let rig = RestJoints::new(&s);
        let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4], false, false)
            .into_iter()
            .map(|j| rig.name(j))
            .collect();
        assert_eq!(got, ["f1", "f2", "f3"]);
    }

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
            let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4], false, false)
                .into_iter()
                .map(|j| rig.name(j))
                .collect();
            assert_eq!(got, want, "bones {bones:?}");
        }
    }

    #[test]
    fn a_long_first_bone_starting_at_the_knuckles_is_the_proximal_phalanx() {
        // A Mixamo little finger through Blender's glTF export: `Pinky1` 9.7 cm past
        // the wrist, a 2.9 cm bone, then 1.3 cm and 2 cm, `Pinky4` a leaf. The first
        // bone is twice the next, as a metacarpal's, but it starts at the knuckles,
        // past the palm: the proximal phalanx, and `Pinky4` the nub. Under any rest
        // frame the reading is the same.
        for (origin, turn) in [
            (Vec3::ZERO, Quat::IDENTITY),
            (Vec3::new(0.6, 1.4, -0.1), Quat::from_rotation_z(-0.9)),
            (Vec3::new(-0.3, 1.2, 0.2), Quat::from_rotation_y(2.5)),
        ] {
            let at = |x: f32| (origin + turn * Vec3::new(x, 0.0, 0.0)).to_array();
            let s = skeleton(&[
                ("hand", None, at(0.0)),
                ("f1", Some("hand"), at(0.097)),
                ("f2", Some("f1"), at(0.126)),
                ("f3", Some("f2"), at(0.139)),
                ("f4", Some("f3"), at(0.159)),
            ]);
            let rig = RestJoints::new(&s);
            let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4], false, false)
                .into_iter()
                .map(|j| rig.name(j))
                .collect();
            assert_eq!(got, ["f1", "f2", "f3"], "origin {origin}");
        }
    }

    #[test]
    fn a_fourth_finger_joint_with_an_end_nub_below_is_still_the_tip() {
        // A Mixamo hand through Blender: `Index4` (the tip) gets an `Index4_end`.
        let s = skeleton(&[
            ("hand", None, [0.0, 0.0, 0.0]),
            ("f1", Some("hand"), [0.01, 0.0, 0.0]),
            ("f2", Some("f1"), [0.055, 0.0, 0.0]),
            ("f3", Some("f2"), [0.08, 0.0, 0.0]),
            ("f4", Some("f3"), [0.1, 0.0, 0.0]),
            ("f4_end", Some("f4"), [0.12, 0.0, 0.0]),
        ]);
        let rig = RestJoints::new(&s);
        let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4, 5], false, false)
            .into_iter()
            .map(|j| rig.name(j))
            .collect();
        assert_eq!(got, ["f1", "f2", "f3"]);
    }

    #[test]
    fn an_end_site_written_as_a_node_named_endsite_is_a_nub() {
        // A BVH converted to glTF by three.js: each digit `Index1`-`Index3`, then the
        // BVH's `Index3_end`, then its End Site as a node of its own, `ENDSITE`. The
        // phalanges are the first three joints from the knuckles, not the last three.
        let s = skeleton(&[
            ("LeftHand", None, [0.0, 0.0, 0.0]),
            ("LeftHandIndex1", Some("LeftHand"), [0.08, 0.0, 0.0]),
            ("LeftHandIndex2", Some("LeftHandIndex1"), [0.105, 0.0, 0.0]),
            ("LeftHandIndex3", Some("LeftHandIndex2"), [0.121, 0.0, 0.0]),
            (
                "LeftHandIndex3_end",
                Some("LeftHandIndex3"),
                [0.142, 0.0, 0.0],
            ),
            ("ENDSITE", Some("LeftHandIndex3_end"), [0.163, 0.0, 0.0]),
        ]);
        let rig = RestJoints::new(&s);
        let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4, 5], false, false)
            .into_iter()
            .map(|j| rig.name(j))
            .collect();
        assert_eq!(got, ["LeftHandIndex1", "LeftHandIndex2", "LeftHandIndex3"]);
    }

    #[test]
    fn a_fourth_finger_joint_whose_end_site_is_at_the_joint_is_the_tip() {
        // Mixamo's BVH export: `Index1`-`Index4`, `Index4` ending in `OFFSET 0 0 0`.
        // An end site a bone long past the fourth joint makes it the distal phalanx
        // (the hand's digits not known to end past their tips).
        for (end, want) in [(0.0, ["f1", "f2", "f3"]), (0.02, ["f2", "f3", "f4"])] {
            let s = skeleton(&[
                ("hand", None, [0.0, 0.0, 0.0]),
                ("f1", Some("hand"), [0.09, 0.0, 0.0]),
                ("f2", Some("f1"), [0.127, 0.0, 0.0]),
                ("f3", Some("f2"), [0.156, 0.0, 0.0]),
                ("f4", Some("f3"), [0.18, 0.0, 0.0]),
            ]);
            let mut joints = s.joints().to_vec();
            joints[4].end = Some(Vec3::new(end, 0.0, 0.0));
            let s = Skeleton::new(joints).expect("a skeleton");
            let rig = RestJoints::new(&s);
            let got: Vec<&str> = phalanges(&rig, 0, &[1, 2, 3, 4], false, false)
                .into_iter()
                .map(|j| rig.name(j))
                .collect();
            assert_eq!(got, want, "end site {end}");
        }
    }

    #[test]
    fn digits_from_the_knuckles_with_bone_long_end_sites_end_in_nubs() {
        // A Mixamo hand through Blender's BVH export: four joints per digit, every
        // last one with an end site at its tail, a bone long. The fingers start at
        // the knuckles (9 cm from the wrist, 3.7 cm bones): their fourth joints are
        // nubs, and so is the thumb's, which starts near the wrist. Digits of a
        // hand with metacarpals from the wrist keep their end sites' phalanges.
        for (knuckles, finger, thumb) in [
            (
                0.09f32,
                ["index1", "index2", "index3"],
                ["thumb1", "thumb2", "thumb3"],
            ),
            (
                0.01,
                ["index2", "index3", "index4"],
                ["thumb2", "thumb3", "thumb4"],
            ),
        ] {
            let mut table = vec![("hand".to_owned(), None, [0.0f32, 0.0, 0.0])];
            let mut chain = |name: &str, from: [f32; 3], step: [f32; 3]| {
                let mut at = from;
                for k in 1..=4 {
                    let parent = match k {
                        1 => "hand".to_owned(),
                        _ => format!("{name}{}", k - 1),
                    };
                    table.push((format!("{name}{k}"), Some(parent), at));
                    at = [at[0] + step[0], at[1] + step[1], at[2] + step[2]];
                }
            };
            let bone = if knuckles > 0.05 { 0.037 } else { 0.075 };
            for (f, z) in [("index", 0.03f32), ("middle", 0.01), ("ring", -0.01)] {
                chain(f, [knuckles, 0.0, z], [bone, 0.0, 0.0]);
            }
            chain("pinky", [knuckles, 0.0, -0.03], [0.8 * bone, 0.0, 0.0]);
            chain("thumb", [0.02, 0.0, 0.03], [0.025, 0.0, 0.02]);
            let mut joints = owned_skeleton(&table).joints().to_vec();
            for joint in joints.iter_mut().filter(|j| j.name.ends_with('4')) {
                joint.end = Some(Vec3::new(0.02, 0.0, 0.0));
            }
            let s = Skeleton::new(joints).expect("a skeleton");
            let rig = RestJoints::new(&s);
            let digits = solve_fingers(&rig, 0, Vec3::Z);
            let names = |f: usize| -> Vec<&str> {
                let d = digits.iter().find(|d| d.finger == f).expect("a digit");
                d.joints.iter().map(|&j| rig.name(j)).collect()
            };
            assert_eq!(names(1), finger, "knuckles {knuckles}");
            assert_eq!(names(0), thumb, "knuckles {knuckles}");
        }
    }

    #[test]
    fn a_two_joint_thumb_past_the_palm_base_has_no_metacarpal() {
        // Four fingers from the knuckles 0.15 from the wrist; a two-joint thumb
        // starting 0.1 out (Quaternius' Thumb2, Thumb3) or at the wrist.
        for (thumb_start, want) in [(0.1f32, 1), (0.02, 0)] {
            let mut table = vec![("hand".to_owned(), None, [0.0f32, 0.0, 0.0])];
            for (f, z) in [
                ("index", 0.03f32),
                ("middle", 0.01),
                ("ring", -0.01),
                ("pinky", -0.03),
            ] {
                table.push((format!("{f}2"), Some("hand".to_owned()), [0.15, 0.0, z]));
                table.push((format!("{f}3"), Some(format!("{f}2")), [0.19, 0.0, z]));
                table.push((format!("{f}4"), Some(format!("{f}3")), [0.22, 0.0, z]));
            }
            let t = thumb_start;
            table.push(("thumb2".to_owned(), Some("hand".to_owned()), [t, 0.0, 0.06]));
            table.push((
                "thumb3".to_owned(),
                Some("thumb2".to_owned()),
                [t + 0.03, 0.0, 0.08],
            ));
            let s = owned_skeleton(&table);
            let rig = RestJoints::new(&s);
            let digits = solve_fingers(&rig, 0, Vec3::Z);
            let thumb = digits.iter().find(|d| d.finger == 0).expect("a thumb");
            assert_eq!(rig.name(thumb.joints[0]), "thumb2");
            assert_eq!(thumb.first, want, "thumb from {thumb_start}");
        }
    }

    #[test]
    fn a_thumb_named_by_number_keeps_its_metacarpal() {
        // Rokoko's hand: `LeftFinger1` is the thumb, every digit starts with a
        // joint named a metacarpal at the wrist. The fingers' metacarpals are no
        // VRM bones; the thumb's is.
        let mut table = vec![("LeftHand".to_owned(), None, [0.0f32, 0.0, 0.0])];
        let mut digit = |n: usize, z: f32, bones: &[(&str, f32)]| {
            let mut parent = "LeftHand".to_owned();
            for &(part, x) in bones {
                let name = format!("LeftFinger{n}{part}");
                table.push((name.clone(), Some(parent), [x, 0.0, z]));
                parent = name;
            }
        };
        digit(
            1,
            0.05,
            &[("Metacarpal", 0.02), ("Proximal", 0.05), ("Distal", 0.08)],
        );
        for (n, z) in [(2, 0.03f32), (3, 0.01), (4, -0.01), (5, -0.03)] {
            digit(
                n,
                z,
                &[
                    ("Metacarpal", 0.02),
                    ("Proximal", 0.09),
                    ("Medial", 0.13),
                    ("Distal", 0.16),
                ],
            );
        }
        let s = owned_skeleton(&table);
        let rig = RestJoints::new(&s);
        let digits = solve_fingers(&rig, 0, Vec3::Z);
        let names = |f: usize| -> (Vec<&str>, usize) {
            let d = digits.iter().find(|d| d.finger == f).expect("the digit");
            (d.joints.iter().map(|&j| rig.name(j)).collect(), d.first)
        };
        assert_eq!(
            names(0),
            (
                vec![
                    "LeftFinger1Metacarpal",
                    "LeftFinger1Proximal",
                    "LeftFinger1Distal"
                ],
                0
            )
        );
        assert_eq!(
            names(1).0,
            [
                "LeftFinger2Proximal",
                "LeftFinger2Medial",
                "LeftFinger2Distal"
            ]
        );
    }

    #[test]
    fn a_one_joint_finger_past_a_palm_bone_is_its_proximal_phalanx() {
        // A Rigify-style game hand: `palm.01`..`palm.03` run from the wrist to the
        // knuckles, each carrying one finger joint (a leaf); the thumb hangs from
        // `palm.01`. The palms are metacarpals, no VRM bones.
        let s = skeleton(&[
            ("hand.L", None, [0.0, 0.0, 0.0]),
            ("palm.01.L", Some("hand.L"), [0.03, 0.0, 0.02]),
            ("finger_index.01.L", Some("palm.01.L"), [0.08, 0.0, 0.02]),
            ("thumb.01.L", Some("palm.01.L"), [0.015, 0.0, 0.035]),
            ("thumb.02.L", Some("thumb.01.L"), [0.04, 0.0, 0.06]),
            ("palm.02.L", Some("hand.L"), [0.03, 0.0, 0.0]),
            ("finger_middle.01.L", Some("palm.02.L"), [0.085, 0.0, 0.0]),
            ("palm.03.L", Some("hand.L"), [0.03, 0.0, -0.02]),
            ("finger_ring.01.L", Some("palm.03.L"), [0.08, 0.0, -0.02]),
        ]);
        let rig = RestJoints::new(&s);
        let digits = solve_fingers(&rig, 0, Vec3::Z);
        let mut got: Vec<(usize, Vec<&str>)> = digits
            .iter()
            .map(|d| (d.finger, d.joints.iter().map(|&j| rig.name(j)).collect()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                (0, vec!["thumb.01.L", "thumb.02.L"]),
                (1, vec!["finger_index.01.L"]),
                (2, vec!["finger_middle.01.L"]),
                (3, vec!["finger_ring.01.L"]),
            ]
        );
    }

    #[test]
    fn a_lone_unnamed_joint_beside_named_digits_is_no_digit() {
        // A cartoon hand (a Sketchfab Miku): one mitten `HandMiddle1`-`3` starting
        // nearer the wrist than the thumb `HandThumb1`-`3`, and an IK target with a
        // misspelt name, `Fist_Targer`, past the fingertips.
        let s = skeleton(&[
            ("Hand.L", None, [0.0, 0.0, 0.0]),
            ("HandMiddle1.L", Some("Hand.L"), [0.05, 0.0, 0.0]),
            ("HandMiddle2.L", Some("HandMiddle1.L"), [0.09, 0.0, 0.0]),
            ("HandMiddle3.L", Some("HandMiddle2.L"), [0.12, 0.0, 0.0]),
            ("HandThumb1.L", Some("Hand.L"), [0.08, 0.0, 0.034]),
            ("HandThumb2.L", Some("HandThumb1.L"), [0.08, 0.0, 0.053]),
            ("HandThumb3.L", Some("HandThumb2.L"), [0.08, 0.0, 0.076]),
            ("Fist_Targer.L", Some("Hand.L"), [0.16, -0.02, 0.03]),
        ]);
        let rig = RestJoints::new(&s);
        assert_eq!(
            digits_by_first_joint(&rig),
            [(0, "HandThumb1.L"), (2, "HandMiddle1.L")]
        );
    }

    #[test]
    fn a_finger_joint_numbered_0_at_the_wrist_is_its_metacarpal() {
        // H-Anim: `l_index0` .. `l_pinky0` are the carpometacarpal joints, at the
        // wrist; the proximal phalanx starts at `l_index1`, past the palm. A hand
        // counted from 0 at the knuckles (`LeftIndex0`) keeps its 0.
        for (names, start, want) in [
            (["l_index0", "l_index1", "l_index2"], 0.01f32, 1),
            (["LeftIndex0", "LeftIndex1", "LeftIndex2"], 0.09, 0),
        ] {
            let hand = if start < 0.05 { "l_wrist" } else { "LeftHand" };
            let mut rows = vec![(hand.to_owned(), None, [0.0f32, 0.0, 0.0])];
            let xs = if start < 0.05 {
                [start, 0.09, 0.13]
            } else {
                [start, 0.13, 0.16]
            };
            let mut parent = hand.to_owned();
            for (name, x) in names.iter().zip(xs) {
                rows.push((name.to_string(), Some(parent), [x, 0.0, 0.02]));
                parent = name.to_string();
            }
            let s = owned_skeleton(&rows);
            let rig = RestJoints::new(&s);
            let digits = solve_fingers(&rig, 0, Vec3::Z);
            let d = digits.first().expect("the index finger");
            assert_eq!(d.finger, 1, "{names:?}");
            let got: Vec<&str> = d.joints.iter().map(|&j| rig.name(j)).collect();
            assert_eq!(got, names[want..], "{names:?}");
        }
    }

    #[test]
    fn a_hand_of_one_named_finger_has_that_finger_and_an_unnamed_one_has_none() {
        // A cartoon skeleton's hand (Mixamo names): `Index1`-`Index4` and no thumb.
        // A lone chain with no finger name could be any digit, or none.
        for (name, want) in [("LeftHandIndex", Some(1)), ("LeftHandBone", None)] {
            let rows: Vec<(String, Option<String>, [f32; 3])> =
                std::iter::once(("LeftHand".to_owned(), None, [0.0f32, 0.0, 0.0]))
                    .chain((1..=4).map(|k| {
                        let parent = match k {
                            1 => "LeftHand".to_owned(),
                            _ => format!("{name}{}", k - 1),
                        };
                        let x = 0.09 + 0.03 * (k - 1) as f32;
                        (format!("{name}{k}"), Some(parent), [x, 0.0, 0.02])
                    }))
                    .collect();
            let s = owned_skeleton(&rows);
            let rig = RestJoints::new(&s);
            let digits = solve_fingers(&rig, 0, Vec3::Z);
            assert_eq!(digits.first().map(|d| d.finger), want, "{name}");
            if let Some(d) = digits.first() {
                let got: Vec<&str> = d.joints.iter().map(|&j| rig.name(j)).collect();
                assert_eq!(got, ["LeftHandIndex1", "LeftHandIndex2", "LeftHandIndex3"]);
            }
        }
    }

    #[test]
    fn a_biped_hand_of_two_digits_is_read_by_their_numbers() {
        // A 3ds Max Biped with two digits per hand (a robot through Sketchfab):
        // `Finger0` the thumb, starting nearer the wrist, and `Finger1` a mitten over
        // the fingers in the hand's middle, each two joints and a nub. Too few digits
        // for their geometry; the numbers say, the mitten driven as the middle finger.
        // With the thumb starting farther out than the mitten, they say nothing.
        let hand = |x: f32| {
            skeleton(&[
                ("lpBip L Hand_011", None, [0.0, 0.0, 0.0]),
                (
                    "lpBip L Finger0_012",
                    Some("lpBip L Hand_011"),
                    [x, -0.02, 0.04],
                ),
                (
                    "lpBip L Finger01_013",
                    Some("lpBip L Finger0_012"),
                    [x + 0.04, -0.03, 0.06],
                ),
                (
                    "lpBip L Finger0Nub_014",
                    Some("lpBip L Finger01_013"),
                    [x + 0.09, -0.05, 0.09],
                ),
                (
                    "lpBip L Finger1_015",
                    Some("lpBip L Hand_011"),
                    [0.1, 0.0, 0.0],
                ),
                (
                    "lpBip L Finger11_016",
                    Some("lpBip L Finger1_015"),
                    [0.17, 0.0, 0.0],
                ),
                (
                    "lpBip L Finger1Nub_017",
                    Some("lpBip L Finger11_016"),
                    [0.23, -0.03, 0.0],
                ),
            ])
        };
        let s = hand(0.04);
        let rig = RestJoints::new(&s);
        let mut digits = solve_fingers(&rig, 0, Vec3::Z);
        digits.sort_by_key(|d| d.finger);
        let read: Vec<(usize, &str)> = digits
            .iter()
            .map(|d| (d.finger, rig.name(d.joints[0])))
            .collect();
        assert_eq!(
            read,
            [(0, "lpBip L Finger0_012"), (2, "lpBip L Finger1_015")]
        );
        let s = hand(0.12);
        let rig = RestJoints::new(&s);
        assert!(solve_fingers(&rig, 0, Vec3::Z).is_empty());
    }

    #[test]
    fn an_equipment_joint_below_the_hand_is_no_digit() {
        // A game's 3ds Max biped hand: three two-joint digits with nubs and, nearer
        // the wrist than any of them, the leaf the weapon hangs from.
        let s = skeleton(&[
            ("Bip01 R Hand", None, [0.0, 0.0, 0.0]),
            (
                "equip_right_hand",
                Some("Bip01 R Hand"),
                [-0.02, -0.01, 0.0],
            ),
            ("Bip01 R Finger0", Some("Bip01 R Hand"), [-0.02, 0.0, 0.03]),
            (
                "Bip01 R Finger01",
                Some("Bip01 R Finger0"),
                [-0.05, 0.0, 0.05],
            ),
            (
                "Bip01 R Finger0Nub",
                Some("Bip01 R Finger01"),
                [-0.07, 0.0, 0.06],
            ),
            ("Bip01 R Finger1", Some("Bip01 R Hand"), [-0.08, 0.0, 0.01]),
            (
                "Bip01 R Finger11",
                Some("Bip01 R Finger1"),
                [-0.11, 0.0, 0.01],
            ),
            (
                "Bip01 R Finger1Nub",
                Some("Bip01 R Finger11"),
                [-0.13, 0.0, 0.01],
            ),
            ("Bip01 R Finger2", Some("Bip01 R Hand"), [-0.08, 0.0, -0.01]),
            (
                "Bip01 R Finger21",
                Some("Bip01 R Finger2"),
                [-0.11, 0.0, -0.01],
            ),
            (
                "Bip01 R Finger2Nub",
                Some("Bip01 R Finger21"),
                [-0.13, 0.0, -0.01],
            ),
        ]);
        let rig = RestJoints::new(&s);
        let got = digits_by_first_joint(&rig);
        assert_eq!(
            got,
            [
                (0, "Bip01 R Finger0"),
                (1, "Bip01 R Finger1"),
                (2, "Bip01 R Finger2")
            ]
        );
    }

    #[test]
    fn a_digit_named_the_thumb_is_the_thumb_when_the_starts_tell_none_apart() {
        // A cartoon mitten (a Blender game rig, the arm out along +X, facing +Z): a
        // thumb of two joints starting below the palm, a one-joint index and the
        // other fingers as one, `Hand.Fingers`, which names no finger. The thumb
        // starts 0.79 of the others' distance from the wrist, no clear margin.
        let s = skeleton(&[
            ("Hand.L", None, [0.0, 0.0, 0.0]),
            ("HandThumb.L", Some("Hand.L"), [-0.059, -0.124, 0.074]),
            (
                "HandThumb.L.001",
                Some("HandThumb.L"),
                [0.028, -0.16, 0.141],
            ),
            ("Hand.Index.L", Some("Hand.L"), [0.178, -0.018, 0.105]),
            ("Hand.Fingers.L", Some("Hand.L"), [0.178, -0.018, -0.083]),
        ]);
        let rig = RestJoints::new(&s);
        assert_eq!(
            digits_by_first_joint(&rig),
            [
                (0, "HandThumb.L"),
                (1, "Hand.Index.L"),
                (2, "Hand.Fingers.L")
            ]
        );
    }

    #[test]
    fn a_hold_point_in_the_palm_is_no_digit() {
        // A game's hand of four digits (no little finger) with the leaf held items
        // hang from, `hold.l`, in the palm between the index and the middle finger.
        let s = skeleton(&[
            ("hand_l", None, [0.0, 0.0, 0.0]),
            ("hold.l", Some("hand_l"), [0.081, -0.018, 0.015]),
            ("c_thumb1_l", Some("hand_l"), [0.021, -0.03, 0.046]),
            ("c_thumb2_l", Some("c_thumb1_l"), [0.045, -0.045, 0.07]),
            ("c_thumb3_l", Some("c_thumb2_l"), [0.07, -0.055, 0.085]),
            ("c_index1_l", Some("hand_l"), [0.085, 0.009, 0.07]),
            ("c_index2_l", Some("c_index1_l"), [0.125, 0.0, 0.07]),
            ("c_index3_l", Some("c_index2_l"), [0.167, -0.033, 0.069]),
            ("c_middle1_l", Some("hand_l"), [0.094, 0.008, 0.023]),
            ("c_middle2_l", Some("c_middle1_l"), [0.137, 0.0, 0.023]),
            ("c_middle3_l", Some("c_middle2_l"), [0.18, -0.033, 0.022]),
            ("c_ring1_l", Some("hand_l"), [0.084, 0.004, -0.029]),
            ("c_ring2_l", Some("c_ring1_l"), [0.124, -0.004, -0.029]),
            ("c_ring3_l", Some("c_ring2_l"), [0.163, -0.035, -0.03]),
        ]);
        let rig = RestJoints::new(&s);
        let got = digits_by_first_joint(&rig);
        assert_eq!(
            got,
            [
                (0, "c_thumb1_l"),
                (1, "c_index1_l"),
                (2, "c_middle1_l"),
                (3, "c_ring1_l")
            ]
        );
    }
}
