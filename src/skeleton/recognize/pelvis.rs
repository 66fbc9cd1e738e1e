//! Stage 2: the pelvis. A hips candidate is a joint where two legs (child chains
//! going down side by side to the same level) and a body going up meet
//! (`find_pelvis`); `pelvis_above` moves the hips up one joint for 3ds Max Biped.
//! `recognize` tries every joint and keeps the most complete body.

use glam::Vec3;

use super::legs::detached_foot;
use super::names::Role;
use super::rest_joints::{RestJoints, horizontal};

/// A hips candidate: the joint, its two legs and the root of the body above.
pub(super) struct Pelvis {
    pub(super) hips: usize,
    pub(super) legs: [usize; 2],
    /// The joint both legs hang from, when it is not the hips themselves.
    pub(super) leg_branch: Option<usize>,
    pub(super) spine_root: usize,
    /// Height of the hips above the lowest point of their subtree.
    pub(super) span: f32,
    pub(super) floor: f32,
}

impl Pelvis {
    /// Where the body leaves the hips: the hips joint, or the body's first joint when
    /// it starts with the legs' joint away from the hips (a root bone placed off the
    /// body, behind or above it, its children all hung from its tail).
    pub(super) fn body_start(&self, rig: &RestJoints) -> Vec3 {
        match self.leg_branch {
            Some(b) if rig.coincident(b, self.spine_root) => rig.pos[self.spine_root],
            _ => rig.pos[self.hips],
        }
    }
}

/// Heuristic: the pelvis is where two legs and the body meet. Legs are a pair of
/// child chains of two or more joints going down (rising above the joint by less
/// than half their drop, where the body carries a head) and ending at the same level
/// (within 12% of their drop) side by side, symmetric about the joint; the deepest such pair wins, then
/// deforming names over IK/FK duplicates. Their end is the floor; no global lowest
/// point is trusted, so hands hanging below the feet do not matter. Both legs may
/// hang from one joint close below (a game rig's `Hips` under `Root`), or from one
/// starting where the body does (a Blender root bone whose head lies off the body,
/// its children all hung from its tail: spine, legs' joint, tail), when those legs
/// reach the figure's lowest point (not a theropod's short arms). The hips stand
/// a fifth of the figure's height (end nubs left out) or more above the floor (a
/// big-headed chibi's stand at 22%), measured from the feet hung from the root under
/// legs that end at the knee (`detached_foot`). The body is
/// the child reaching highest, at least 15% of the hips' height above them (the
/// arms, found next, are the real test).
pub(super) fn find_pelvis(rig: &RestJoints, joint: usize) -> Option<Pelvis> {
    if rig.kids[joint].len() < 2 {
        return None;
    }
    let y = rig.pos[joint].y;
    let spine_root = spine_root(rig, joint)?;
    let pair_below = |j: usize| legs_below(rig, joint, j, spine_root);
    let figure_low = || rig.body_low.iter().copied().fold(f32::INFINITY, f32::min);
    let (legs, floor, leg_branch) = match pair_below(joint) {
        Some((legs, floor)) => (legs, floor, None),
        None => rig.kids[joint]
            .iter()
            .copied()
            .filter(|&c| c != spine_root)
            .find_map(|c| {
                let (legs, floor) = pair_below(c)?;
                // A root bone placed off the body (behind it, above it) hangs the legs'
                // joint and the body from one point, its tail: the legs start with the body.
                // Such legs reach the figure's lowest point (within 12% of their drop, as
                // two legs' ends are level): from one point a body also hangs its arms (a
                // theropod's short arms where its level spine goes on, its legs far lower).
                let on_floor = || floor - figure_low() <= 0.12 * (y - floor);
                let near = rig.pos[c].distance(rig.pos[joint]) <= 0.35 * (y - floor)
                    || (rig.coincident(c, spine_root) && on_floor());
                near.then_some((legs, floor, Some(c)))
            })?,
    };
    // Legs ending at the knee with the feet hung from the root (driven by IK): the
    // hips' height against the body's is measured from the feet, not the knees, so
    // that a short-legged figure's hips stand as high as they are.
    let span = y - floor;
    let feet: Option<Vec<usize>> = legs
        .iter()
        .map(|&leg| detached_foot(rig, &follow_down(rig, leg, span), joint, span))
        .collect();
    let ground = feet
        .into_iter()
        .flatten()
        .fold(floor, |low, f| low.min(rig.pos[f].y));
    if span <= rig.eps
        || y - ground < 0.2 * (rig.body_high[joint] - ground)
        || rig.high[spine_root] < y + 0.15 * span
    {
        return None;
    }
    Some(Pelvis {
        hips: joint,
        legs,
        leg_branch,
        spine_root,
        span,
        floor,
    })
}

/// The body's root among `joint`'s children: the plain child reaching highest (never
/// a leg, whatever its arms reach).
fn spine_root(rig: &RestJoints, joint: usize) -> Option<usize> {
    rig.kids[joint].iter().copied().max_by(|&a, &b| {
        (!rig.avoid(a), rig.high[a])
            .partial_cmp(&(!rig.avoid(b), rig.high[b]))
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// The best pair of legs among `j`'s children other than the body (`spine_root`) for
/// hips at `joint` (see `find_pelvis`), with the level they reach.
fn legs_below(
    rig: &RestJoints,
    joint: usize,
    j: usize,
    spine_root: usize,
) -> Option<([usize; 2], f32)> {
    let y = rig.pos[joint].y;
    let candidates: Vec<usize> = rig.kids[j]
        .iter()
        .copied()
        .filter(|&c| {
            let drop = y - rig.low[c];
            c != spine_root
                && rig.low_depth[c] >= 2
                && drop > rig.eps
                && rig.high[c] - y <= 0.5 * drop
        })
        .collect();
    best_leg_pair(rig, joint, &candidates)
}

/// For the reasons a rig is no humanoid: each joint with a body (`spine_root`) and a
/// pair of legs below it (`legs_below`), with the body, the legs and how far they
/// drop.
fn joints_over_legs(rig: &RestJoints) -> impl Iterator<Item = (usize, usize, [usize; 2], f32)> {
    (0..rig.len()).filter_map(|joint| {
        if rig.kids[joint].len() < 2 {
            return None;
        }
        let body = spine_root(rig, joint)?;
        let (legs, floor) = legs_below(rig, joint, joint, body)?;
        Some((joint, body, legs, rig.pos[joint].y - floor))
    })
}

/// For the reason a rig is no humanoid: legs that end at the knee. A joint with a
/// body going up and a pair of legs whose lines down have two joints each (a thigh
/// and a shin, nothing below the knee): VRM requires a foot on each leg. Returns
/// the joint and the two legs' lines.
pub(super) fn legs_without_feet(rig: &RestJoints) -> Option<(usize, [[usize; 2]; 2])> {
    joints_over_legs(rig).find_map(|(joint, body, [a, b], span)| {
        let rises = rig.high[body] >= rig.pos[joint].y + 0.15 * span;
        let (line_a, line_b) = (follow_down(rig, a, span), follow_down(rig, b, span));
        match (line_a.as_slice(), line_b.as_slice()) {
            (&[a0, a1], &[b0, b1]) if rises => Some((joint, [[a0, a1], [b0, b1]])),
            _ => None,
        }
    })
}

/// For the reason a rig is no humanoid: legs with no body. A joint with a pair of
/// legs reaching below their knees, down to the figure's lowest point (within 12% of
/// their drop, as in `find_pelvis`) over half the figure's height (fingers hanging
/// from a hand are no legs), whose other children rise less than `find_pelvis` asks
/// of a body (0.15 of the legs' drop above it): legs alone, or a figure too short
/// above its hips for a torso. Returns the joint, the two legs, the child reaching
/// highest and how high it reaches, as a fraction of the legs' drop.
pub(super) fn legs_without_body(rig: &RestJoints) -> Option<(usize, [usize; 2], usize, f32)> {
    let figure_low = rig.body_low.iter().copied().fold(f32::INFINITY, f32::min);
    let figure_high = rig
        .body_high
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    joints_over_legs(rig).find_map(|(joint, body, [a, b], span)| {
        let y = rig.pos[joint].y;
        let rise = (rig.high[body] - y) / span;
        let below_the_knee = |leg| follow_down(rig, leg, span).len() >= 3;
        let on_floor =
            y - span - figure_low <= 0.12 * span && span >= 0.5 * (figure_high - figure_low);
        let legs = below_the_knee(a) && below_the_knee(b);
        (span > rig.eps && on_floor && rise < 0.15 && legs).then_some((joint, [a, b], body, rise))
    })
}

/// The line of joints from `root` down toward the floor: at each joint the child
/// reaching lowest without the end nubs hanging in it, then with them (names break
/// ties), stopping at a leaf or at a toe fan (three or more children near the
/// floor). A nub says only where a bone ends, at whatever length its writer gave
/// it: Blender's leaf after a calf twist chain ending at the ankle reaches a bone's
/// length below the foot, and the leg still goes on down the foot.
pub(super) fn follow_down(rig: &RestJoints, root: usize, span: f32) -> Vec<usize> {
    let mut line = vec![root];
    let mut j = root;
    loop {
        let kept = rig.body_kids(j);
        let kids = if kept.is_empty() {
            rig.kids[j].clone()
        } else {
            kept
        };
        let near_floor = rig.pos[j].y - rig.low[j] < 0.3 * span;
        if kids.is_empty() || (kids.len() >= 3 && near_floor) {
            return line;
        }
        let next = kids.iter().copied().min_by(|&a, &b| {
            let key = |j: usize| {
                (
                    rig.body_low[j],
                    rig.low[j],
                    -rig.pref(j),
                    rig.names[j].helper,
                )
            };
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        match next {
            Some(n) => {
                line.push(n);
                j = n;
            }
            None => return line,
        }
    }
}

/// The deepest matched pair of `roots` side by side (see `find_pelvis`), with the
/// level they reach.
fn best_leg_pair(rig: &RestJoints, hips: usize, roots: &[usize]) -> Option<([usize; 2], f32)> {
    let y = rig.pos[hips].y;
    let deepest = roots.iter().map(|&r| rig.low[r]).reduce(f32::min)?;
    let centroid = |root: usize| -> Vec3 {
        let line = follow_down(rig, root, y - rig.low[root]);
        horizontal(line.iter().map(|&j| rig.pos[j]).sum::<Vec3>() / line.len() as f32)
    };
    let centroids: Vec<Vec3> = roots.iter().map(|&r| centroid(r)).collect();
    let mut best: Option<(f32, [usize; 2], f32)> = None;
    for (i, &a) in roots.iter().enumerate() {
        for (k, &b) in roots.iter().enumerate().skip(i + 1) {
            let (low_a, low_b) = level_ends(rig, y, a, b);
            let drop = y - low_a.max(low_b);
            let (ca, cb) = (centroids[i], centroids[k]);
            if (low_a - low_b).abs() > 0.12 * drop || ca.distance(cb) < 0.05 * drop {
                continue;
            }
            let off_centre = ((ca + cb) * 0.5).distance(horizontal(rig.pos[hips]));
            let score = rig.pref(a) + rig.pref(b)
                - 5.0 * (low_a.max(low_b) - deepest) / drop
                - off_centre / drop;
            if best.is_none_or(|(s, ..)| score > s) {
                best = Some((score, [a, b], low_a.min(low_b)));
            }
        }
    }
    best.map(|(_, pair, floor)| (pair, floor))
}

/// Where legs `a` and `b` of hips at height `y` end: their subtrees' lowest points,
/// or, when those are not level (within 12% of the drop) and the legs' own joints
/// are, the lowest points without the end nubs. Blender writes a leaf bone's `_end`
/// nub along the bone's local Y, and on a rig whose bones point along X (Unreal's
/// mannequin) one toe's nub may point up and the other's down, below the floor.
fn level_ends(rig: &RestJoints, y: f32, a: usize, b: usize) -> (f32, f32) {
    let level = |(la, lb): (f32, f32)| (la - lb).abs() <= 0.12 * (y - la.max(lb));
    let raw = (rig.low[a], rig.low[b]);
    let own = (rig.body_low[a], rig.body_low[b]);
    if !level(raw) && level(own) { own } else { raw }
}

/// Heuristic: 3ds Max Biped hangs the thighs from `Bip01 Spine`, below which
/// `Bip01 Pelvis` is the only parent. When the joint where legs and body meet is
/// named spine and its parent, close by (but not in the same place: that is an
/// offset node) with no other child, is named pelvis or hips, the parent is the hips
/// and the joint the first spine joint.
pub(super) fn pelvis_above(rig: &RestJoints, pelvis: &Pelvis) -> Option<usize> {
    let parent = rig.skeleton.parent(pelvis.hips)?;
    let named = rig.names[pelvis.hips].role == Some(Role::Spine)
        && rig.names[parent].role == Some(Role::Hips);
    let alone = rig.kids[parent].len() == 1;
    let apart = rig.pos[parent].distance(rig.pos[pelvis.hips]);
    let near = apart > rig.eps && apart <= 0.3 * pelvis.span;
    (named && alone && near).then_some(parent)
}

/// Heuristic: a body on more than two legs (a spider, a four-legged animal whose
/// legs all hang from one joint, a radial robot). Besides the two legs,
/// the joint they hang from has two or more chains more that go down to the same
/// level as the legs (within 12% of the hips' height), as legs do (rising above
/// the hips by less than half their drop), with as many joints on their line down
/// as a leg, each standing apart from every other leg (not an IK/FK copy lying on
/// one). A biped has two legs; chains the names call controls or attachments are
/// no legs. Returns the joint the legs hang from and how many legs it has: once
/// there are four, the chain the pelvis took for the spine counts too when it is
/// as much a leg (a spider's leg rising over its body before it goes down), so the
/// reason gives the number the rig has.
pub(super) fn many_legs(rig: &RestJoints, pelvis: &Pelvis) -> Option<(usize, usize)> {
    let from = pelvis.leg_branch.unwrap_or(pelvis.hips);
    let (y, span) = (rig.pos[pelvis.hips].y, pelvis.span);
    let line = |root: usize| follow_down(rig, root, span);
    let centroid = |line: &[usize]| {
        horizontal(line.iter().map(|&j| rig.pos[j]).sum::<Vec3>() / line.len() as f32)
    };
    let leg_lines = pelvis.legs.map(line);
    let joints = leg_lines[0].len().max(leg_lines[1].len());
    let mut feet: Vec<Vec3> = leg_lines.iter().map(|l| centroid(l)).collect();
    // A child that goes down as a leg, standing apart from the legs counted: its
    // foot.
    let another_leg = |c: usize, feet: &[Vec3]| {
        let drop = y - rig.low[c];
        let leg_like = !pelvis.legs.contains(&c)
            && !rig.avoid(c)
            && rig.low_depth[c] >= 2
            && drop > rig.eps
            && rig.high[c] - y <= 0.5 * drop
            && (rig.low[c] - pelvis.floor).abs() <= 0.12 * span;
        if !leg_like {
            return None;
        }
        let other = line(c);
        let at = centroid(&other);
        (other.len() == joints && feet.iter().all(|f| f.distance(at) >= 0.05 * span)).then_some(at)
    };
    for c in rig.kids[from].iter().copied() {
        if c == pelvis.spine_root {
            continue;
        }
        if let Some(at) = another_leg(c, &feet) {
            feet.push(at);
        }
    }
    if feet.len() < 4 {
        return None;
    }
    let spine_is_a_leg = rig.kids[from].contains(&pelvis.spine_root)
        && another_leg(pelvis.spine_root, &feet).is_some();
    Some((from, feet.len() + usize::from(spine_is_a_leg)))
}

/// Heuristic, for the reason a rig is no humanoid: legs that hang beside the body
/// instead of below it. Some game rigs (Quaternius' modular women and platformer
/// characters) hang both legs and the hips from one root at the floor: two child
/// chains of two or more joints that start up at the body's height and go down to
/// the same level, beside the child the body rises from. VRM's upper legs hang
/// below its hips, and a hips at the floor is no pelvis, so no map fits. Chains the
/// names call attachments (a dress's or a skirt's bones) are no legs. The legs stand
/// on the rig's floor: arms hanging from the chest beside the head, on a rig whose
/// legs have no feet, also drop to the joint they hang from, but the legs below
/// reach far lower. Returns the root, the legs' top joints and the body's first joint.
pub(super) fn legs_beside_the_body(rig: &RestJoints) -> Option<(usize, [usize; 2], usize)> {
    let floor = rig.low.iter().copied().fold(f32::INFINITY, f32::min);
    (0..rig.len()).find_map(|joint| {
        let y = rig.pos[joint].y;
        let kids = &rig.kids[joint];
        let body = kids.iter().copied().max_by(|&a, &b| {
            rig.high[a]
                .partial_cmp(&rig.high[b])
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        let legs: Vec<usize> = kids
            .iter()
            .copied()
            .filter(|&c| {
                let top = rig.pos[c].y;
                let drop = top - rig.low[c];
                c != body
                    && !rig.avoid(c)
                    && rig.low_depth[c] >= 2
                    && drop > rig.eps
                    && rig.high[c] - top <= 0.5 * drop
                    && top - y > 0.5 * drop
                    && rig.low[c] - y < 0.25 * drop
            })
            .collect();
        let [a, b] = legs[..] else { return None };
        let drop = rig.pos[a].y - rig.low[a];
        let level = (rig.low[a] - rig.low[b]).abs() <= 0.12 * drop;
        let on_floor = rig.low[a].max(rig.low[b]) - floor <= 0.25 * drop;
        let beside = rig.high[body] > rig.pos[a].y.max(rig.pos[b].y) + 0.15 * drop;
        (level && on_floor && beside).then_some((joint, [a, b], body))
    })
}

/// The pelvis of a rig whose legs hang beside the body (`legs_beside_the_body`): the
/// hips are the body's joint, the legs hang from `root` (`leg_branch`). No strict VRM
/// map exists for it; the legs are driven from the hips (`BoneMap::detached_bones`).
pub(super) fn beside_the_body(
    rig: &RestJoints,
    root: usize,
    legs: [usize; 2],
    body: usize,
) -> Option<Pelvis> {
    let floor = rig.low[legs[0]].min(rig.low[legs[1]]);
    let span = rig.pos[body].y - floor;
    (span > rig.eps).then_some(Pelvis {
        hips: body,
        legs,
        leg_branch: Some(root),
        spine_root: spine_root(rig, body)?,
        span,
        floor,
    })
}

#[cfg(test)]
mod tests {
    use super::super::recognize;
    use super::super::rest_joints::RestJoints;
    use super::super::test_support::{borrowed, skeleton, with_limbs_named};
    use super::find_pelvis;
    use crate::humanoid::HumanBone as B;

    #[test]
    fn legs_starting_where_the_body_does_under_a_root_off_the_body_are_the_legs() {
        // A cartoon dog standing upright (Blender, unnamed bones): the root bone's head
        // lies behind and above the pelvis, and its children (the spine, the legs'
        // joint and a tail) all start at its tail, the pelvis. The arms hang down to
        // the waist from the chest and long ears from the head: taken for legs and
        // arms when the root's legs are not found.
        let body = [
            ("Bone", "", [0.0, 1.05, -0.35]),
            ("Bone.001", "Bone", [0.0, 0.8, 0.0]),
            ("Bone.002", "Bone.001", [0.0, 1.0, 0.0]),
            ("Bone.003", "Bone.002", [0.0, 1.25, 0.0]),
            ("Bone.004", "Bone.003", [0.0, 1.42, 0.0]),
            ("Bone.005", "Bone.004", [0.0, 1.55, 0.0]),
            ("Bone.006", "Bone.005", [0.0, 1.75, 0.0]),
            ("Bone.007", "Bone", [0.0, 0.8, 0.0]),
            ("Bone.008", "Bone", [0.0, 0.8, 0.0]),
            ("Bone.009", "Bone.008", [0.0, 0.72, -0.15]),
            ("Bone.010", "Bone.009", [0.0, 0.66, -0.35]),
        ];
        let limb = [
            ("Q1", "Bone.003", [0.06, 1.38, 0.0]),
            ("Q2", "Q1", [0.16, 1.36, 0.0]),
            ("Q3", "Q2", [0.25, 1.1, 0.0]),
            ("Q4", "Q3", [0.3, 0.88, 0.0]),
            ("Q5", "Q4", [0.33, 0.8, 0.0]),
            ("P1", "Bone.005", [0.05, 1.72, 0.0]),
            ("P2", "P1", [0.17, 1.7, 0.0]),
            ("P3", "P2", [0.26, 1.55, 0.0]),
            ("P4", "P3", [0.3, 1.38, 0.0]),
            ("P5", "P4", [0.3, 1.25, 0.0]),
            ("K1", "Bone.007", [0.06, 0.76, 0.0]),
            ("K2", "K1", [0.11, 0.74, 0.0]),
            ("K3", "K2", [0.11, 0.42, 0.02]),
            ("K4", "K3", [0.11, 0.07, 0.0]),
            ("K5", "K4", [0.11, 0.0, 0.12]),
        ];
        let s = with_limbs_named(
            &body,
            |side, name| format!("{name}.{}", ["L", "R"][side]),
            &limb,
        );
        let r = recognize(&s).into_humanoid().expect("a humanoid");
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Hips), Some("Bone"));
        assert_eq!(at(B::Spine), Some("Bone.001"));
        assert_eq!(at(B::Head), Some("Bone.005"));
        assert_eq!(at(B::LeftFoot), Some("K4.L"));
        assert_eq!(at(B::RightFoot), Some("K4.R"));
        assert_eq!(at(B::LeftUpperArm), Some("Q2.L"));
        assert_eq!(at(B::LeftHand), Some("Q4.L"));
    }

    #[test]
    fn short_arms_hung_where_a_level_spine_goes_on_are_no_legs() {
        // A theropod: from its pelvis `Root` the legs go down to the floor and the
        // spine runs forward, level; `S1` hangs the rest of the spine and the short
        // arms' joint from one point, as a root bone placed off the body hangs a
        // body and its legs. The arms end far above the feet: no legs, so `S1` is no
        // pelvis, where `Root` is one.
        let mut table = vec![
            ("Root", None, [0.0, 1.0, 0.0]),
            ("Tail1", Some("Root"), [0.0, 1.0, -0.3]),
            ("Tail2", Some("Tail1"), [0.0, 0.95, -1.0]),
            ("S1", Some("Root"), [0.0, 1.05, 0.2]),
            ("S2", Some("S1"), [0.0, 1.1, 0.7]),
            ("Neck", Some("S2"), [0.0, 1.5, 1.0]),
            ("Head", Some("Neck"), [0.0, 2.0, 1.2]),
            ("HeadEnd", Some("Head"), [0.0, 2.2, 1.3]),
            ("ArmRoot", Some("S1"), [0.0, 1.1, 0.7]),
        ];
        let names = [
            [
                "Thigh.L", "Shin.L", "Foot.L", "Toe.L", "Arm.L", "Fore.L", "Hand.L",
            ],
            [
                "Thigh.R", "Shin.R", "Foot.R", "Toe.R", "Arm.R", "Fore.R", "Hand.R",
            ],
        ];
        for (side, [thigh, shin, foot, toe, arm, fore, hand]) in names.into_iter().enumerate() {
            let x = [0.15, -0.15][side];
            table.extend([
                (thigh, Some("Root"), [x, 0.95, 0.0]),
                (shin, Some(thigh), [x, 0.55, 0.05]),
                (foot, Some(shin), [x, 0.08, 0.0]),
                (toe, Some(foot), [x, 0.0, 0.15]),
                (arm, Some("ArmRoot"), [x, 1.0, 0.75]),
                (fore, Some(arm), [x, 0.85, 0.85]),
                (hand, Some(fore), [x, 0.75, 0.95]),
            ]);
        }
        let s = skeleton(&table);
        let rig = RestJoints::new(&s);
        let at = |name| s.find(name).expect("a joint of the table");
        assert!(find_pelvis(&rig, at("S1")).is_none());
        assert!(find_pelvis(&rig, at("Root")).is_some());
    }

    /// A radial robot: a body at (0, 1, 0), `legs` legs spread evenly around it going
    /// down to the floor (a thigh, a shin, a foot), and as many legs above them going
    /// up and out and down again, as a sphere robot folds its upper legs.
    fn radial_robot(legs: usize) -> Vec<(String, Option<String>, [f32; 3])> {
        let row = |n: &str, p: &str, at: [f32; 3]| (n.to_owned(), Some(p.to_owned()), at);
        let mut table = vec![
            ("body".to_owned(), None, [0.0, 1.0, 0.0]),
            row("upper", "body", [0.0, 1.1, 0.0]),
            row("lower", "body", [0.0, 0.95, 0.0]),
        ];
        for k in 0..legs {
            let a = std::f32::consts::TAU * k as f32 / legs as f32;
            let (c, s) = (a.cos(), a.sin());
            let halves = [
                ("up", "upper", [(0.1, 1.15), (0.2, 1.5), (0.7, 1.05)]),
                ("down", "lower", [(0.1, 0.9), (0.3, 0.5), (0.45, 0.05)]),
            ];
            for (half, parent, points) in halves {
                let joint = |j: usize| format!("{half}_{k}_{j}");
                for (j, (r, y)) in points.into_iter().enumerate() {
                    let parent = if j == 0 {
                        parent.to_owned()
                    } else {
                        joint(j - 1)
                    };
                    table.push(row(&joint(j), &parent, [r * c, y, r * s]));
                }
            }
        }
        table
    }

    #[test]
    fn a_body_with_more_than_two_legs_is_refused_as_many_legged() {
        // Any two opposite legs below would pass for a biped's legs, two of the upper
        // legs for its arms and another for its neck and head; but the other legs
        // below are no less legs.
        for legs in [4, 6] {
            let t = radial_robot(legs);
            match recognize(&skeleton(&borrowed(&t))) {
                crate::skeleton::Recognition::NotHumanoid(n) => assert!(
                    n.reason
                        .starts_with(&format!("`lower` has {legs} legs going down")),
                    "{}",
                    n.reason
                ),
                crate::skeleton::Recognition::Humanoid(_) => {
                    panic!("{legs} legs taken for a humanoid")
                }
            }
        }
    }

    /// Why the rig of `t` (name, parent, position) is no humanoid; panics when it
    /// is taken for one.
    fn refusal(t: &[(String, Option<String>, [f32; 3])]) -> String {
        match recognize(&skeleton(&borrowed(t))) {
            crate::skeleton::Recognition::NotHumanoid(n) => n.reason,
            crate::skeleton::Recognition::Humanoid(_) => panic!("taken for a humanoid"),
        }
    }

    #[test]
    fn four_legs_from_one_joint_are_named_a_body_on_four_legs_and_more_a_many_legged_one() {
        for (legs, kind) in [
            (4, "a body on four legs (a four-legged animal"),
            (6, "a many-legged body (a spider"),
        ] {
            let reason = refusal(&radial_robot(legs));
            assert!(reason.contains(kind), "{reason}");
        }
    }

    #[test]
    fn a_spider_whose_legs_rise_over_its_body_is_refused_with_all_its_legs_counted() {
        // Eight legs from one body joint, out and down to the floor; two of them
        // first rise over the body, as a spider's do, and the highest is what a
        // pelvis would take for the spine going up.
        let mut t = vec![("body".to_owned(), None, [0.0, 1.0, 0.0])];
        for k in 0..8 {
            let a = std::f32::consts::TAU * (k as f32 + 0.5) / 8.0;
            let (c, s) = (a.cos(), a.sin());
            let heights = match k {
                2 => [1.2, 1.4, 0.05],
                6 => [1.2, 1.35, 0.05],
                _ => [0.9, 0.5, 0.05],
            };
            for (j, (r, y)) in [0.3, 0.7, 1.0].into_iter().zip(heights).enumerate() {
                let parent = if j == 0 {
                    "body".to_owned()
                } else {
                    format!("leg_{k}_{}", j - 1)
                };
                t.push((format!("leg_{k}_{j}"), Some(parent), [r * c, y, r * s]));
            }
        }
        let reason = refusal(&t);
        assert!(
            reason.starts_with("`body` has 8 legs going down"),
            "{reason}"
        );
    }

    #[test]
    fn toe_nubs_pointing_up_and_down_leave_the_legs_level() {
        // Blender's leaf bones on an Unreal mannequin (bones along X): each `_end` nub
        // lies along its toe's local Y, the left one 18 cm up, the right one 18 cm
        // down through the floor. The legs still end at the same level.
        let mut table = vec![
            ("root", None, [0.0, 0.0, 0.0]),
            ("pelvis", Some("root"), [0.0, 1.0, 0.0]),
            ("spine_01", Some("pelvis"), [0.0, 1.1, 0.0]),
            ("spine_03", Some("spine_01"), [0.0, 1.35, 0.0]),
            ("neck_01", Some("spine_03"), [0.0, 1.5, 0.0]),
            ("head", Some("neck_01"), [0.0, 1.6, 0.0]),
        ];
        let limbs = [
            [
                ("upperarm_l", "spine_03", [0.18, 1.4, 0.0]),
                ("lowerarm_l", "upperarm_l", [0.46, 1.4, 0.0]),
                ("hand_l", "lowerarm_l", [0.71, 1.4, 0.0]),
                ("thigh_l", "pelvis", [0.1, 0.95, 0.0]),
                ("calf_l", "thigh_l", [0.1, 0.5, 0.0]),
                ("foot_l", "calf_l", [0.1, 0.08, 0.0]),
                ("ball_l", "foot_l", [0.1, 0.02, 0.12]),
                ("ball_l_end", "ball_l", [0.1, 0.2, 0.12]),
            ],
            [
                ("upperarm_r", "spine_03", [-0.18, 1.4, 0.0]),
                ("lowerarm_r", "upperarm_r", [-0.46, 1.4, 0.0]),
                ("hand_r", "lowerarm_r", [-0.71, 1.4, 0.0]),
                ("thigh_r", "pelvis", [-0.1, 0.95, 0.0]),
                ("calf_r", "thigh_r", [-0.1, 0.5, 0.0]),
                ("foot_r", "calf_r", [-0.1, 0.08, 0.0]),
                ("ball_r", "foot_r", [-0.1, 0.02, 0.12]),
                ("ball_r_end", "ball_r", [-0.1, -0.16, 0.12]),
            ],
        ];
        for (name, parent, at) in limbs.iter().flatten() {
            table.push((*name, Some(*parent), *at));
        }
        let r = recognize(&skeleton(&table))
            .into_humanoid()
            .expect("a humanoid");
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Hips), Some("pelvis"));
        assert_eq!(at(B::LeftFoot), Some("foot_l"));
        assert_eq!(at(B::RightToes), Some("ball_r"));
        assert_eq!(at(B::LeftHand), Some("hand_l"));
    }
}
