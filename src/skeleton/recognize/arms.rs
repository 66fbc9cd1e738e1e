//! Stages 5 and 6: the arms. The upper chest is the joint with two subtrees
//! reaching far out to either side (`find_arm_branch`); along each arm's line out to
//! the hand, upper arm, forearm and hand are chosen by proportion, with the shoulder
//! (clavicle) before the upper arm (`solve_arm`).

use glam::Vec3;

use crate::humanoid::HumanBone as B;

use super::facing::Midline;
use super::names::{Role, name_cost, role_cost};
use super::pelvis::Pelvis;
use super::rest_joints::{RestJoints, horizontal, off_line};

/// Where the arms and the head leave the body.
pub(super) struct ArmBranch {
    pub(super) branch: usize,
    /// Arm roots: `[0]` on leg A's side of the midline, `[1]` on leg B's.
    pub(super) arms: [usize; 2],
    pub(super) head: Option<usize>,
    /// The spine joint the head chain leaves: `branch`, or a joint below it when
    /// nothing goes up from the branch (`neck_below_branch`).
    pub(super) neck_from: usize,
}

/// Heuristic: the upper chest is the joint (in the body above the hips) with two
/// children whose subtrees each reach out to one side, at least 1.4 hip half-widths
/// from the midline, crossing it by little (`crosses_little`), and three or
/// more joints deep (a quadruped's front legs are no wider than its hind legs, so
/// they do not qualify). The reach counts end sites, the crossing only joints: an
/// End Site is a bone's tip with no joint of its own, and a writer's stray one (an
/// arm's last offset thrown across the body to the other hand) moves no joint over.
/// Among several, one named as the head loses (hair or ribbons hanging from `Head`
/// reach farther out than the hands of an A-pose), then deforming names win, then the
/// farthest reach (hands are the body's farthest-out joints in any rest pose). The
/// head is the branch's tallest child starting within a hip half-width of the branch
/// across the body (a body leaning to one side carries its neck over with the chest).
/// The spine rises to the branch: a branch further ahead of the hips (where the body
/// leaves them, `Pelvis::body_start`) than above them is a four-legged animal's
/// chest, its front legs splayed wider than the hind ones.
/// When nothing goes up from the branch, the head may leave the spine below it
/// (`neck_below_branch`).
pub(super) fn find_arm_branch(
    rig: &RestJoints,
    pelvis: &Pelvis,
    midline: &Midline,
) -> Result<ArmBranch, String> {
    let n = rig.len();
    let mut lat_hi = vec![f32::NEG_INFINITY; n];
    let mut lat_lo = vec![f32::INFINITY; n];
    // The same over joints alone, for how far a subtree crosses the midline.
    let mut cross_hi = vec![f32::NEG_INFINITY; n];
    let mut cross_lo = vec![f32::INFINITY; n];
    let mut attached = vec![false; n];
    let body = rig.subtree(pelvis.spine_root);
    for &j in body.iter().rev() {
        let at = midline.lateral_of(rig.pos[j]);
        // A leaf whose End Site is zero-length, beside a sibling, is a point hung on the
        // limb, not a bone of it: a writer's helper such as MotionBuilder's
        // `R_Radius_RIGMESH` next to the hand, whose OFFSET some exporters copy from the
        // other arm. It counts for the reach, as an End Site does, not for the side. A
        // hand that is its forearm's only child still counts wherever it is.
        let point = rig.kids[j].is_empty()
            && rig.end[j].is_some_and(|e| e.distance(rig.pos[j]) <= rig.eps)
            && rig.skeleton.joints()[j]
                .parent
                .is_some_and(|p| rig.kids[p].len() > 1);
        (cross_hi[j], cross_lo[j]) = if point {
            (f32::NEG_INFINITY, f32::INFINITY)
        } else {
            (at, at)
        };
        for p in std::iter::once(rig.pos[j]).chain(rig.end[j]) {
            let l = midline.lateral_of(p);
            lat_hi[j] = lat_hi[j].max(l);
            lat_lo[j] = lat_lo[j].min(l);
        }
        // A chain of attachments or controls alone hanging from a body joint (a
        // `weapon` held in one hand across the body, `Ear` chains on the head) is no
        // part of the limb it hangs from: it counts for neither its reach nor its side.
        // Under a joint named so too (a rig of `ORG-` joints alone) it is the body.
        attached[j] = rig.avoid(j) && rig.kids[j].iter().all(|&c| attached[c]);
        let own = |c: usize| !attached[c] || rig.avoid(j);
        for &c in rig.kids[j].iter().filter(|&&c| own(c)) {
            lat_hi[j] = lat_hi[j].max(lat_hi[c]);
            lat_lo[j] = lat_lo[j].min(lat_lo[c]);
            cross_hi[j] = cross_hi[j].max(cross_hi[c]);
            cross_lo[j] = cross_lo[j].min(cross_lo[c]);
        }
    }
    let half = midline.hip_half.max(0.02 * pelvis.span);
    let mut best: Option<((bool, f32, f32), ArmBranch)> = None;
    // Arms kept to their own side first; arms held across the body only when no
    // joint has two of those (`crosses_little`). Both measured from the legs'
    // midline first, then from the branch itself (`from_branch`): the chest carries
    // the arms wherever it stands over the hips, and a body leaning to one side, or a
    // zero pose with the pelvis shifted sideways under the chest (a Kinect frame),
    // brings the near arm closer to the legs' midline than the arms' own spread
    // (hands hanging at the sides reach no farther out than the shoulders). The
    // midline comes first, so a rig found so before keeps its branch; from the
    // branch, the two arms must reach out alike.
    for (across, from_branch) in [(false, false), (true, false), (false, true), (true, true)] {
        if best.is_some() {
            break;
        }
        for &b in &body {
            if rig.kids[b].len() < 2 {
                continue;
            }
            let at = if from_branch {
                midline.lateral_of(rig.pos[b])
            } else {
                0.0
            };
            let mut sides: [Option<(f32, f32, usize)>; 2] = [None, None];
            for &c in &rig.kids[b] {
                if rig.depth[c] < 3 {
                    continue;
                }
                for (s, (far, back)) in [
                    (lat_hi[c] - at, at - cross_lo[c]),
                    (at - lat_lo[c], cross_hi[c] - at),
                ]
                .into_iter()
                .enumerate()
                {
                    if far >= 1.4 * half && crosses_little(far, back, half, across) {
                        let candidate = (rig.pref(c), far / half, c);
                        if sides[s].is_none_or(|(p, f, _)| (candidate.0, candidate.1) > (p, f)) {
                            sides[s] = Some(candidate);
                        }
                    }
                }
            }
            let [Some((pa, fa, a)), Some((pb, fb, bb))] = sides else {
                continue;
            };
            // Measured from the chest, a body's two arms reach out alike (the same
            // length, both out or both hanging): one reaching less than half as far
            // as the other is a limb thrown across a zero pose that is no body, not
            // an arm of a body leaning aside.
            if a == bb || (from_branch && 2.0 * fa.min(fb) < fa.max(fb)) {
                continue;
            }
            let head = rig.kids[b]
                .iter()
                .copied()
                .filter(|&c| {
                    c != a
                        && c != bb
                        && !rig.avoid(c)
                        && rig.high[c] > rig.pos[b].y + 0.02 * pelvis.span
                        && (midline.lateral_of(rig.pos[c]) - midline.lateral_of(rig.pos[b])).abs()
                            < half
                })
                .max_by(|&x, &y| {
                    (rig.pref(x), rig.high[x])
                        .partial_cmp(&(rig.pref(y), rig.high[y]))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
            let below = match head {
                Some(_) => None,
                None => neck_below_branch(rig, pelvis, b, |c| {
                    midline.lateral_of(rig.pos[c]).abs() < half
                        && lat_hi[c] < 1.4 * half
                        && -lat_lo[c] < 1.4 * half
                }),
            };
            let (head, neck_from) = match below {
                Some((from, h)) => (Some(h), from),
                None => (head, b),
            };
            // A branch named as the head carries hair, ears or ribbons, not arms: long
            // twin tails hanging from `Head` reach farther out than hands in an A-pose.
            let on_head = matches!(rig.names[b].role, Some(Role::Head | Role::HeadTop));
            let key = (!on_head, pa + pb, fa.min(fb));
            if best.as_ref().is_none_or(|(k, _)| key > *k) {
                best = Some((
                    key,
                    ArmBranch {
                        branch: b,
                        arms: [a, bb],
                        head,
                        neck_from,
                    },
                ));
            }
        }
    }
    if let Some((_, found)) = &best {
        let hips = pelvis.body_start(rig);
        let at = rig.pos[found.branch];
        let (rise, ahead) = (at.y - hips.y, horizontal(at - hips).length());
        if rise < ahead {
            return Err(format!(
                "the body runs forward from the hips `{}`, not up: `{}`, where the front \
                 limbs leave it, is {:.0}% of the hips' height ahead of them and {:.0}% above \
                 (a four-legged animal's spine)",
                rig.name(pelvis.hips),
                rig.name(found.branch),
                100.0 * ahead / pelvis.span,
                100.0 * rise / pelvis.span
            ));
        }
    }
    best.map(|(_, branch)| branch).ok_or_else(|| {
        let sides = |c: usize| {
            [(lat_hi[c], -cross_lo[c]), (-lat_lo[c], cross_hi[c])]
                .map(|(far, back)| rig.depth[c] >= 2 && far >= 1.4 * half && back <= 0.5 * half)
        };
        handless_arms(rig, &body, sides)
            .or_else(|| arms_on_the_hips(rig, pelvis, midline, half))
            .or_else(|| front_legs(rig, pelvis, &body, midline))
            .unwrap_or_else(|| {
            format!(
                "no arms: no joint above the hips `{}` has two chains reaching out to either side",
                rig.name(pelvis.hips)
            )
        })
    })
}

/// Heuristic: whether a chain reaching `far` out to one side of the midline and
/// crossing it by `back` (hip half-width `half`) stays on its side. Kept to its side,
/// an arm crosses by less than half a hip half-width. Held `across` the body (hands
/// clasped, a sword in both hands, arms folded), the forearm and hand cross over
/// while the shoulder and elbow stay out: then it crosses by less than half its
/// reach on its own side, where a body's two arms together reach as far either way.
fn crosses_little(far: f32, back: f32, half: f32, across: bool) -> bool {
    if across {
        back < 0.5 * far
    } else {
        back <= 0.5 * half
    }
}

/// Heuristic: a head chain that leaves the spine below the arm branch `branch`.
/// Some Biovision-style writers hang `Neck` from the lower chest joint, beside the
/// upper one that carries the collars: nothing goes up from the arm branch, and the
/// head rises from the joint below. Going down the spine from the branch's parent to
/// the hips' body child, the first joint with another child (`near`: starting near
/// the midline and staying there, no arm) whose subtree rises above the branch is
/// where the head chain leaves; returns that joint and the child.
fn neck_below_branch(
    rig: &RestJoints,
    pelvis: &Pelvis,
    branch: usize,
    near: impl Fn(usize) -> bool,
) -> Option<(usize, usize)> {
    let mut path = rig.path(pelvis.spine_root, branch);
    // From the branch down to the spine root.
    path.reverse();
    path.windows(2).find_map(|w| {
        let (above, at) = (w[0], w[1]);
        rig.kids[at]
            .iter()
            .copied()
            .filter(|&c| {
                c != above
                    && !rig.avoid(c)
                    && near(c)
                    && rig.high[c] > rig.pos[branch].y + 0.02 * pelvis.span
            })
            .max_by(|&x, &y| {
                rig.high[x]
                    .partial_cmp(&rig.high[y])
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|c| (at, c))
    })
}

/// Heuristic, for the reason a rig is no humanoid: arms that end at the forearm.
/// Some game rigs (robots, toys) have a joint above the hips with two chains reaching
/// out to either side (`sides(c)`: whether child `c` reaches out to each side) where
/// one or both are only two joints deep: an upper arm and a forearm, no hand, and VRM
/// requires both hands. Names the arms that end so.
fn handless_arms(
    rig: &RestJoints,
    body: &[usize],
    sides: impl Fn(usize) -> [bool; 2],
) -> Option<String> {
    body.iter().find_map(|&b| {
        let out: Vec<(usize, [bool; 2])> = rig.kids[b].iter().map(|&c| (c, sides(c))).collect();
        let on = |s: usize| out.iter().find(|(_, o)| o[s]).map(|&(c, _)| c);
        let (Some(a), Some(c)) = (on(0), on(1)) else {
            return None;
        };
        let short: Vec<String> = [a, c]
            .into_iter()
            .filter(|&arm| a != c && rig.depth[arm] == 2)
            .map(|arm| {
                let end = rig.kids[arm].first().map_or(arm, |&k| k);
                format!("`{}` ends at `{}`", rig.name(arm), rig.name(end))
            })
            .collect();
        (!short.is_empty()).then(|| {
            format!(
                "no hands: the arms reaching out from `{}` end at the forearm ({}: an upper \
                 arm and a forearm, no hand joint), so no VRM map has the required hands",
                rig.name(b),
                short.join(", ")
            )
        })
    })
}

/// Heuristic, for the reason a rig is no humanoid: arms that hang from the hips
/// joint itself. Some game rigs (toys, robots, IK/FK control rigs) have one root joint
/// at the pelvis carrying the legs, the head and both arms, with no joint between the
/// hips and the arms; VRM requires a spine there. Two children of the hips other than
/// the legs, two or more joints deep, starting a quarter of the hips' height or more
/// above them and reaching out to either side (at least 1.4 hip half-widths `half`
/// from the midline, crossing it by less than half of one), are named. The body (the
/// child reaching highest) is one of them when the arms reach higher than anything
/// else on the hips (a robot with no torso joint, a head bone no higher than the
/// shoulders): a body carrying both arms crosses the midline by far more, so it never
/// passes for one arm.
fn arms_on_the_hips(
    rig: &RestJoints,
    pelvis: &Pelvis,
    midline: &Midline,
    half: f32,
) -> Option<String> {
    let hips = pelvis.hips;
    let skip = [
        pelvis.leg_branch,
        Some(pelvis.legs[0]),
        Some(pelvis.legs[1]),
    ];
    let mut sides: [Option<(f32, usize)>; 2] = [None, None];
    for &c in &rig.kids[hips] {
        let above = rig.pos[c].y - rig.pos[hips].y;
        if skip.contains(&Some(c)) || rig.depth[c] < 2 || above < 0.25 * pelvis.span {
            continue;
        }
        let (mut hi, mut lo) = (f32::NEG_INFINITY, f32::INFINITY);
        for j in rig.subtree(c) {
            for p in std::iter::once(rig.pos[j]).chain(rig.end[j]) {
                let l = midline.lateral_of(p);
                (hi, lo) = (hi.max(l), lo.min(l));
            }
        }
        for (s, (far, back)) in [(hi, -lo), (-lo, hi)].into_iter().enumerate() {
            if far >= 1.4 * half && back <= 0.5 * half && sides[s].is_none_or(|(f, _)| far > f) {
                sides[s] = Some((far, c));
            }
        }
    }
    let [Some((_, a)), Some((_, b))] = sides else {
        return None;
    };
    let beside = match [a, b].contains(&pelvis.spine_root) {
        true => "reaching higher than any other joint on the hips, with no joint between the \
                 hips and the arms"
            .to_owned(),
        false => format!(
            "beside the body `{}`, with no joint between the hips and the arms",
            rig.name(pelvis.spine_root)
        ),
    };
    Some(format!(
        "no spine: the arms `{}` and `{}` hang from the hips `{}` itself, {beside}, so no VRM \
         map has the required spine",
        rig.name(a),
        rig.name(b),
        rig.name(hips),
    ))
}

/// Heuristic, for the reason a rig is no humanoid: a four-legged animal's front
/// legs. A joint of the body above the hips with two children on either side of
/// the midline whose chains go down near the floor the legs stand on (within a
/// quarter of the hips' height: a fox's front paws end at a joint, its hind feet at
/// their toes) from well above it (more than half the hips' height) is where front
/// legs hang, as a horse's or a fox's do from the chest, however their joints are
/// named; the hind legs found as the legs, their joint was taken for the hips. Arms
/// hanging from a biped's shoulders end far higher, at about its hips' height.
/// Names the front legs, where they hang from and the hips.
fn front_legs(
    rig: &RestJoints,
    pelvis: &Pelvis,
    body: &[usize],
    midline: &Midline,
) -> Option<String> {
    let reaches_floor = |c: usize| {
        rig.pos[c].y - pelvis.floor > 0.5 * pelvis.span
            && rig.low[c] - pelvis.floor <= 0.25 * pelvis.span
            && rig.low_depth[c] >= 2
            && !rig.avoid(c)
    };
    body.iter().find_map(|&j| {
        let on = |side: f32| {
            rig.kids[j]
                .iter()
                .copied()
                .find(|&c| reaches_floor(c) && side * midline.lateral_of(rig.pos[c]) > rig.eps)
        };
        let (a, b) = (on(1.0)?, on(-1.0)?);
        Some(format!(
            "four legs, no arms: `{}` and `{}` hang from `{}` down to the floor, as the legs \
             from the hips `{}` do (a four-legged animal)",
            rig.name(a),
            rig.name(b),
            rig.name(j),
            rig.name(pelvis.hips)
        ))
    })
}

/// One arm's joints.
pub(super) struct Arm {
    pub(super) shoulder: Option<usize>,
    pub(super) upper: usize,
    pub(super) lower: usize,
    pub(super) hand: usize,
    /// The line ended at a fork of short chains: the hand with its fingers.
    pub(super) hand_fork: bool,
    /// The hand hangs outside the arm (`detached_hand`): driven by IK in the rig, by
    /// the arm here.
    pub(super) detached: bool,
    /// How well the proportions fit (0 is perfect), for the confidence.
    pub(super) cost: f32,
}

/// A leaf reaching no farther from its parent than this share of its farthest
/// sibling's reach is a marker, no branch of a fork (a physics body's proxy beside an
/// elbow, as MSS's `L_Radius` 0.4 cm off it beside a 28 cm forearm).
const STUB: f32 = 0.1;

/// The line of joints from an arm's root out to the hand: at each joint the child
/// reaching farthest from the arm branch. It stops at a leaf or at the hand's fork:
/// two or more children that are not markers (`STUB`), none reaching farther from
/// their parent than 0.6 of the
/// parent's distance from the branch (fingers; a twist bone's fork does not qualify
/// since the forearm beside it is long), or three or more chains of two or more
/// joints reaching no farther than that distance (`is_finger_fork`). Chains that
/// start together away from their parent are measured from where they start
/// (`chains_start`): a hand split per finger under the elbow forks at the wrist,
/// and from the elbow each chain would reach a forearm farther. A chain lying along
/// a sibling's bone (`along_sibling`: a twist chain beside the hand) is no branch of
/// a fork.
fn follow_out(rig: &RestJoints, root: usize, branch: usize) -> (Vec<usize>, bool) {
    let origin = rig.pos[branch];
    let mut line = vec![root];
    let mut j = root;
    loop {
        let kids = rig.body_kids(j);
        if kids.is_empty() {
            return (line, false);
        }
        if kids.len() >= 2 {
            let at = chains_start(rig, &kids).unwrap_or(rig.pos[j]);
            let reaches: Vec<f32> = kids.iter().map(|&c| rig.reach(c, at)).collect();
            let fork_reach = reaches.iter().copied().fold(0.0, f32::max);
            let branches = kids
                .iter()
                .zip(&reaches)
                .filter(|&(&c, &r)| !rig.kids[c].is_empty() || r > STUB * fork_reach)
                .filter(|&(&c, _)| !along_sibling(rig, j, c, &kids))
                .count();
            let out = at.distance(origin);
            let fork = fork_reach <= 0.6 * out || is_finger_fork(rig, &kids, at, fork_reach, out);
            if branches >= 2 && fork {
                return (line, true);
            }
        }
        let next = kids.iter().copied().max_by(|&a, &b| {
            (rig.reach(a, origin), rig.pref(a))
                .partial_cmp(&(rig.reach(b, origin), rig.pref(b)))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        match next {
            Some(n) => {
                line.push(n);
                j = n;
            }
            None => return (line, false),
        }
    }
}

/// How far off the bone from a fork to a sibling, as a share of that bone, a chain's
/// joints may lie and still lie along it (`along_sibling`).
const ALONG: f32 = 0.1;

/// Heuristic: a child chain of `fork` whose joints all lie on the bone from `fork` to
/// one of its siblings (within `ALONG` of that bone, none behind `fork` or past the
/// bone's end) is a twist chain along that bone, no finger: Tripo's auto-rig hangs
/// from the elbow the hand (a leaf, no fingers: the forearm alone reaches no farther
/// than fingers would, under 0.6 of the elbow's distance from the chest, on any
/// figure and more so on a cartoon's short arms) beside `ForearmTwist01` at the
/// elbow, `ForearmTwist02` halfway to the wrist. Fingers spread from the wrist, each
/// its own way, none lying on a sibling's bone.
fn along_sibling(rig: &RestJoints, fork: usize, child: usize, kids: &[usize]) -> bool {
    let from = rig.pos[fork];
    let mut chain = vec![child];
    let mut stack = vec![child];
    while let Some(j) = stack.pop() {
        for &c in &rig.kids[j] {
            chain.push(c);
            stack.push(c);
        }
    }
    kids.iter().filter(|&&s| s != child).any(|&s| {
        let bone = rig.pos[s] - from;
        let length = bone.length();
        length > rig.eps
            && chain.iter().all(|&c| {
                let along = (rig.pos[c] - from).dot(bone) / length;
                (-rig.eps..=length + rig.eps).contains(&along)
                    && off_line(rig.pos[c], from, rig.pos[s]) <= ALONG * length
            })
    })
}

/// Where a fork's chains (children with children of their own) start, when two or
/// more start together, each from its own joint, away from the forking joint (a
/// hand split per finger under the elbow: the wrist, as `split_palm` reads it).
fn chains_start(rig: &RestJoints, kids: &[usize]) -> Option<Vec3> {
    let chains: Vec<usize> = kids
        .iter()
        .copied()
        .filter(|&c| !rig.kids[c].is_empty())
        .collect();
    let (&first, rest) = chains.split_first()?;
    let fork = rig.skeleton.parent(first)?;
    let together = rest.iter().all(|&c| rig.coincident(c, first));
    (!rest.is_empty() && together && !rig.coincident(first, fork)).then_some(rig.pos[first])
}

/// Heuristic: a stylized hand (a cartoon's, a chibi's) reaches farther past the wrist
/// than 0.6 of the wrist's distance from the arm branch, farther than the forearm is
/// long. It is still a fork of three or more chains of two or more joints (fingers,
/// or palm bones with fingers under them) reaching no farther than the wrist is out
/// from the branch, the third longest at least half as far as the longest (fingers
/// are alike), unless the names put the wrist at the fork (`names_say_wrist`: one
/// finger of a cartoon's glove stretched out twice as far as the others). An elbow
/// forks into the forearm and short twist or corrective chains. Reaches are measured
/// from `from`, where the chains start (`follow_out`).
fn is_finger_fork(rig: &RestJoints, kids: &[usize], from: Vec3, fork_reach: f32, out: f32) -> bool {
    let Some(fork) = kids.first().and_then(|&c| rig.skeleton.parent(c)) else {
        return false;
    };
    let mut reaches: Vec<f32> = kids
        .iter()
        .filter(|&&c| rig.depth[c] >= 2)
        .map(|&c| rig.reach(c, from))
        .collect();
    reaches.sort_by(|a, b| b.total_cmp(a));
    let alike = || reaches[2] >= 0.5 * reaches[0];
    reaches.len() >= 3 && fork_reach <= out && (names_say_wrist(rig, fork) || alike())
}

/// Heuristic: a hand split per finger (Quaternius' mechs and astronauts): at the
/// fork, two or more chains start together, each from its own joint, farther from
/// the forking joint than half the bone into it: the forking joint is the elbow,
/// the chains' start the wrist, and no joint is the hand. A hand's fingers start at
/// the hand joint or spread over the palm. The chains, when split so. A fork the names
/// call the hand under a joint they call the forearm is the wrist: its chains start
/// at the knuckles of a palm as long as the forearm (a cartoon's glove, Mixamo's
/// `LeftHand` over `LeftForeArm`).
fn split_palm(rig: &RestJoints, fork: usize) -> Option<Vec<usize>> {
    let parent = rig.skeleton.parent(fork)?;
    if names_say_wrist(rig, fork) {
        return None;
    }
    let chains: Vec<usize> = rig
        .body_kids(fork)
        .into_iter()
        .filter(|&c| !rig.kids[c].is_empty())
        .collect();
    let (&first, rest) = chains.split_first()?;
    let into = rig.pos[parent].distance(rig.pos[fork]);
    let away = rig.pos[first].distance(rig.pos[fork]);
    (!rest.is_empty() && away > 0.5 * into && rest.iter().all(|&c| rig.coincident(c, first)))
        .then_some(chains)
}

/// Whether the names call `joint` the hand and its parent the forearm (neither a
/// helper): they put the wrist there.
fn names_say_wrist(rig: &RestJoints, joint: usize) -> bool {
    let named = |j: usize, role: Role| rig.names[j].role == Some(role) && !rig.names[j].helper;
    named(joint, Role::Hand)
        && rig
            .skeleton
            .parent(joint)
            .is_some_and(|p| named(p, Role::LowerArm))
}

/// A palm joint past the wrist is shorter than this share of the bone into the wrist.
const PALM: f32 = 0.6;

/// Heuristic: a hand whose fingers fork from a palm joint past the wrist, the thumb
/// hanging from the wrist beside it (Maya rigs: `LF_wrist_JNT` with `LF_thumb_a_JNT`
/// and `LF_hand_JNT`, the four fingers under the latter). The wrist before the fork
/// has two children: the fork, a bone shorter than `PALM` of the bone into the
/// wrist, and a chain of two or more joints (no control or attachment) starting no
/// farther out and reaching no farther than the fingers. The wrist is the hand then,
/// as VRM's hand is the joint all five digits hang from.
fn thumb_beside_a_palm(rig: &RestJoints, line: &[usize]) -> bool {
    let [.., before, wrist, fork] = *line else {
        return false;
    };
    let kids = rig.body_kids(wrist);
    let [a, b] = kids[..] else {
        return false;
    };
    let thumb = if a == fork { b } else { a };
    let at = rig.pos[wrist];
    let palm = at.distance(rig.pos[fork]);
    palm < PALM * rig.pos[before].distance(at)
        && rig.depth[thumb] >= 2
        && !rig.names[thumb].helper
        && at.distance(rig.pos[thumb]) <= palm
        && rig.reach(thumb, at) <= rig.reach(fork, at)
}

/// A leaf past the wrist shorter than this share of the forearm is the hand's far end.
const HAND_END: f32 = 0.5;

/// Heuristic: the hand is where the forearm ends. Along `line` (from the elbow out to
/// a leaf with no fingers), a last joint closer to the one before it than half that
/// joint's distance from the elbow is the hand's far end (SMPL's knuckles, a
/// pose estimator's nub beside the wrist), so the joint before it is the hand, whatever
/// the names say.
fn is_hand_end(rig: &RestJoints, line: &[usize]) -> bool {
    let [elbow, .., wrist, end] = *line else {
        return false;
    };
    let (wrist, end) = (rig.pos[wrist], rig.pos[end]);
    end.distance(wrist) < HAND_END * rig.pos[elbow].distance(wrist)
}

/// A joint closer to the chest's middle (halfway between where the two arms start)
/// than this many hip half-widths, across the body, starts a clavicle (or is an
/// offset node at the centre), never the upper arm: a shoulder joint is out to the
/// side in any rest pose (the clavicle's turn moves it no nearer the middle).
const ON_MIDLINE: f32 = 0.25;

/// The roles of the arm line's joints as their names read in context: a `shoulder`
/// followed on the line by an `arm` or `upper arm` (Mixamo's and MotionBuilder's
/// `LeftShoulder`, `LeftArm`; VRoid's `J_Bip_L_Shoulder`, `J_Bip_L_UpperArm`) is the
/// clavicle and that `arm` the upper arm, whatever the proportions say; a `shoulder`
/// with none after it may be the upper arm (joint-named mocap's `LeftShoulder` below a
/// `LeftCollar`). Helpers (twist, roll) are not read.
fn line_roles<'a>(rig: &'a RestJoints<'_>, line: &[usize]) -> impl Fn(usize) -> Option<Role> + 'a {
    let pair = shoulder_and_arm(rig, line);
    move |j: usize| match pair {
        Some((s, _)) if j == s => Some(Role::Clavicle),
        Some((_, a)) if j == a => Some(Role::UpperArm),
        _ => rig.names[j].role,
    }
}

/// The line's `shoulder` and the `arm` or `upper arm` named after it, when names
/// give both (`line_roles`).
fn shoulder_and_arm(rig: &RestJoints, line: &[usize]) -> Option<(usize, usize)> {
    let plain = |j: usize, role: fn(Role) -> bool| {
        !rig.names[j].helper && rig.names[j].role.is_some_and(role)
    };
    let shoulder = line
        .iter()
        .position(|&j| plain(j, |r| r == Role::Shoulder))?;
    let arm = line[shoulder + 1..]
        .iter()
        .copied()
        .find(|&j| plain(j, |r| matches!(r, Role::Arm | Role::UpperArm)))?;
    Some((line[shoulder], arm))
}

/// The shortest upper arm, in forearms, that proportions allow (`solve_arm`).
const UPPER_ARM_MIN: f32 = 0.4;

/// The shortest upper arm, in forearms, allowed to the arm named after a named
/// shoulder (`shoulder_and_arm`): an auto-rig on a cartoon figure (Mixamo's on a
/// chibi) can put the elbow a third of a forearm past the shoulder joint, and the
/// clips turn the arm there; the clavicle before it is no upper arm.
const NAMED_UPPER_ARM_MIN: f32 = 0.2;

/// Why an arm has no VRM bones: the reason, and whether it holds in any pose of the
/// rig (`NotHumanoid::any_pose`), so that no frame of a clip is tried as the rest.
pub(super) struct ArmRefusal {
    pub(super) reason: String,
    pub(super) any_pose: bool,
}

impl ArmRefusal {
    /// A refusal that another pose of the rig may lift.
    fn posed(reason: String) -> Self {
        Self {
            reason,
            any_pose: false,
        }
    }
}

/// Heuristic: upper arm, elbow and hand are the joints `u < e < h` of the arm's line
/// (coincident joints merged) minimizing a cost: the upper arm 1.15 forearms long
/// (log ratio, 0.4 to 2.5 allowed, from 0.2 for the arm named after a named shoulder:
/// `NAMED_UPPER_ARM_MIN`), the upper arm starting out to the side (at least
/// 1.15 hip half-widths from the chest's middle `chest`: clavicles start near it;
/// never in that middle, `ON_MIDLINE`), what hangs past
/// the hand no longer than the forearm, joints in between on the straight line
/// (twist bones), and names (-0.3 for one that says the bone, +0.3 for one that says
/// another). The hand is the fork of the fingers when there is one, and never a short
/// leaf past the wrist (`is_hand_end`). The shoulder is the joint before the upper
/// arm (past a zero-length branch joint at the chest, `RestJoints::is_branch_pivot`)
/// that names call a clavicle, else the one whose bone
/// is longest weighted by how near the midline it starts (a clavicle, not a deltoid
/// helper or an offset node at the centre). A line that is a clavicle from the midline
/// and then only two joints, an upper arm and a forearm (a physics character's arm
/// ending at the elbow), has no hand: refused, naming them. A line ending in a leaf
/// with a hand hung outside the arm past it (`detached_hand`) goes on through that
/// hand.
pub(super) fn solve_arm(
    rig: &RestJoints,
    root: usize,
    branch: usize,
    midline: &Midline,
    chest: Vec3,
    hips: usize,
) -> Result<Arm, ArmRefusal> {
    let (mut line, mut hand_fork) = follow_out(rig, root, branch);
    let side = |j: usize| (rig.pos[j] - chest).dot(midline.lateral);
    let outside = match line.last() {
        Some(&last) if !hand_fork && rig.kids[last].is_empty() => {
            detached_hand(rig, &line, branch, hips, side)
        }
        _ => None,
    };
    if let Some(hand) = outside {
        let (past, fork) = follow_out(rig, hand, branch);
        line.extend(past);
        hand_fork = fork;
    }
    if hand_fork && thumb_beside_a_palm(rig, &line) {
        line.pop();
    }
    if let Some(&fork) = line.last().filter(|_| hand_fork)
        && let Some(chains) = split_palm(rig, fork)
    {
        // The chains' starts and their distance from the fork are bone lengths, the
        // same in every pose: no frame of a clip has a hand joint either.
        return Err(ArmRefusal {
            reason: format!(
                "arm `{}`: no hand joint: the chains `{}` start together past `{}`, each \
                 from its own joint, where the wrist is, so no joint is the hand",
                rig.name(root),
                chains
                    .iter()
                    .map(|&j| rig.name(j))
                    .collect::<Vec<_>>()
                    .join("`, `"),
                rig.name(fork)
            ),
            any_pose: true,
        });
    }
    let reps = rig.collapse(&line);
    let n = reps.len();
    let half = midline.hip_half.max(rig.eps);
    // How far out to the side of the chest's middle: a body leaning to one side
    // carries its arms over with the chest, off the legs' midline.
    let out = |j: usize| (rig.pos[j] - chest).dot(midline.lateral).abs();
    let on_midline = |j: usize| out(j) < ON_MIDLINE * half;
    let roles = line_roles(rig, &line);
    let named_arm = shoulder_and_arm(rig, &line).map(|(_, arm)| arm);
    let mut best: Option<(f32, usize, usize, usize)> = None;
    let hands = if hand_fork { n - 1..n } else { 2..n };
    for h in hands {
        let tail = if h + 1 < n || !hand_fork {
            rig.reach(reps[h], rig.pos[reps[h]])
        } else {
            0.0
        };
        for e in 1..h {
            if !hand_fork && h == n - 1 && e + 1 < h && is_hand_end(rig, &reps[e..]) {
                continue;
            }
            let fore = rig.pos[reps[e]].distance(rig.pos[reps[h]]);
            for u in 0..e {
                if on_midline(reps[u]) {
                    continue;
                }
                let upper = rig.pos[reps[u]].distance(rig.pos[reps[e]]);
                if fore <= rig.eps || upper <= rig.eps {
                    continue;
                }
                let ratio = upper / fore;
                let shortest = if named_arm == Some(reps[u]) {
                    NAMED_UPPER_ARM_MIN
                } else {
                    UPPER_ARM_MIN
                };
                if !(shortest..=2.5).contains(&ratio) {
                    continue;
                }
                let mut cost = (ratio / 1.15).ln().abs();
                cost += 2.0 * (1.15 - out(reps[u]) / half).max(0.0);
                cost += 2.0 * (tail / fore - 1.0).max(0.0);
                let (pu, pe, ph) = (rig.pos[reps[u]], rig.pos[reps[e]], rig.pos[reps[h]]);
                for &m in &reps[u + 1..e] {
                    cost += 2.0 * off_line(rig.pos[m], pu, pe) / upper;
                }
                for &m in &reps[e + 1..h] {
                    cost += 2.0 * off_line(rig.pos[m], pe, ph) / fore;
                }
                cost += role_cost(roles(reps[u]), B::LeftUpperArm)
                    + name_cost(rig, reps[e], B::LeftLowerArm)
                    + name_cost(rig, reps[h], B::LeftHand);
                if best.is_none_or(|(c, ..)| cost < c) {
                    best = Some((cost, u, e, h));
                }
            }
        }
    }
    let Some((cost, u, e, h)) = best else {
        let out: Vec<usize> = reps
            .iter()
            .copied()
            .skip_while(|&j| on_midline(j))
            .collect();
        if let [upper, fore] = out[..]
            && out.len() < n
            && !hand_fork
        {
            return Err(ArmRefusal::posed(format!(
                "no hands: the arm `{}` is a clavicle from the midline, then `{}` ends at `{}` \
                 (an upper arm and a forearm, no hand joint), so no VRM map has the required \
                 hands",
                rig.name(root),
                rig.name(upper),
                rig.name(fore)
            )));
        }
        return Err(ArmRefusal::posed(format!(
            "arm `{}`: no upper arm, forearm and hand in proportion along `{}`",
            rig.name(root),
            line.iter()
                .map(|&j| rig.name(j))
                .collect::<Vec<_>>()
                .join("`, `")
        )));
    };
    let upper = reps[u];
    let before: Vec<usize> = line
        .iter()
        .copied()
        .take_while(|&j| j != upper)
        .filter(|&j| !rig.coincident(j, upper))
        .collect();
    // A zero-length branch joint at the chest is no clavicle when a joint follows it.
    let before = match before.iter().position(|&j| !rig.is_branch_pivot(j)) {
        Some(first) => before[first..].to_vec(),
        None => before,
    };
    let upper_out = out(upper).max(rig.eps);
    let shoulder = before.iter().copied().max_by(|&a, &b| {
        let key = |j: usize| {
            let named = match rig.names[j].role {
                Some(Role::Clavicle) => 2.0,
                Some(Role::Shoulder) => 1.0,
                _ => 0.0,
            };
            let helper = if rig.names[j].helper { -3.0 } else { 0.0 };
            // The clavicle: a long bone starting near the midline.
            let bone = line
                .iter()
                .skip_while(|&&x| x != j)
                .nth(1)
                .map_or(0.0, |&x| rig.pos[x].distance(rig.pos[j]));
            let inward = 1.0 - out(j) / upper_out;
            (named + helper, bone * inward.max(0.0))
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Arm {
        shoulder,
        upper,
        lower: reps[e],
        hand: reps[h],
        hand_fork,
        detached: outside.is_some() && !rig.skeleton.is_ancestor(hips, reps[h]),
        cost,
    })
}

/// A joint within this share of its forearm of the place mirroring the other arm's
/// hand sits there (`mirror_hands`).
const MIRRORED: f32 = 0.1;

/// Heuristic: a rig's two arms are mirror images, so its hands are too. When one
/// arm's hand, mirrored across the midline through the chest's middle `chest`, lands
/// on a joint between the other arm's forearm and hand, that joint is the other's
/// hand: the line went past the wrist on that side alone, because a digit hangs
/// from a palm joint there (Quaternius' `Thumb1.R` under `MiddleHand.R`, where
/// `Thumb1.L` hangs from `Palm.L`) or is stretched out along the arm in the rest (a
/// Mixamo soldier's `RightHandThumb1`, 2.65 units past its wrist against 0.44 on the
/// left, read as the hand). The reading nearer the wrist wins, as VRM's hand
/// is the joint at the wrist. A hand already at the mirror place stays (a joint
/// coincident with it above, as a scale-compensation node, is no wrist), and so do
/// hands hung outside the arms.
pub(super) fn mirror_hands(
    rig: &RestJoints,
    arms: &mut [Result<Arm, ArmRefusal>; 2],
    midline: &Midline,
    chest: Vec3,
) {
    let [Ok(a), Ok(b)] = arms else {
        return;
    };
    if a.detached || b.detached {
        return;
    }
    let mirror = |p: Vec3| p - 2.0 * (p - chest).dot(midline.lateral) * midline.lateral;
    // The joint of `to` between its forearm and hand at the mirror of `from`'s hand.
    let wrist_at = |from: &Arm, to: &Arm| {
        let at = mirror(rig.pos[from.hand]);
        let fore = rig.pos[to.lower].distance(rig.pos[to.hand]);
        let there = |j: usize| rig.pos[j].distance(at) <= MIRRORED * fore;
        if there(to.hand) {
            return None;
        }
        let mut j = rig.skeleton.parent(to.hand)?;
        while j != to.lower {
            if there(j) && !rig.coincident(j, to.hand) {
                return Some(j);
            }
            j = rig.skeleton.parent(j)?;
        }
        None
    };
    if let Some(wrist) = wrist_at(a, b) {
        b.hand = wrist;
        b.hand_fork = false;
    } else if let Some(wrist) = wrist_at(b, a) {
        a.hand = wrist;
        a.hand_fork = false;
    }
}

/// Heuristic: game rigs end the arm at the forearm and hang the hand from the root,
/// where IK moves it, as they do the feet (`legs::detached_foot`). Such a hand is a
/// plain joint outside the body hanging from a joint above the hips
/// (`RestJoints::outside_body`), on the arm's side of the chest (`side`), farther
/// from the arm branch than the line's last joint, and a forearm from it: between a
/// quarter of the line's reach from the branch and all of it (an IK target at the
/// wrist's place of a hand the arm holds is no hand past it). The nearest such
/// joint.
fn detached_hand(
    rig: &RestJoints,
    line: &[usize],
    branch: usize,
    hips: usize,
    side: impl Fn(usize) -> f32,
) -> Option<usize> {
    let &last = line.last()?;
    let origin = rig.pos[branch];
    let reach = rig.pos[last].distance(origin);
    let gap = |j: usize| rig.pos[j].distance(rig.pos[last]);
    rig.outside_body(hips)
        .into_iter()
        .filter(|&j| !rig.avoid(j) && !rig.names[j].helper && !rig.names[j].nub)
        .filter(|&j| side(j) * side(last) > 0.0)
        .filter(|&j| rig.pos[j].distance(origin) > reach)
        .filter(|&j| (0.25 * reach..=reach).contains(&gap(j)))
        .min_by(|&a, &b| gap(a).total_cmp(&gap(b)))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{recognized_with_limbs, with_limbs};
    use super::super::{Recognition, recognize};
    use crate::humanoid::HumanBone as B;

    #[test]
    fn a_twist_chain_beside_a_short_forearms_hand_is_no_finger_fork() {
        // Tripo's auto-rig on a cartoon plumber: the elbow carries the hand (a leaf,
        // no fingers) and `ForearmTwist01` at the elbow, `ForearmTwist02` halfway to
        // the wrist. The forearm (8 cm) is short beside the elbow's 24 cm from the
        // chest, so the elbow's two children reach no farther than fingers would.
        let body = [
            ("Hip", "", [0.0, 0.342, 0.0]),
            ("Spine01", "Hip", [0.0, 0.394, 0.0]),
            ("Spine02", "Spine01", [0.0, 0.496, 0.0]),
            ("NeckTwist01", "Spine02", [0.0, 0.586, 0.0]),
            ("Head", "NeckTwist01", [0.0, 0.654, 0.0]),
        ];
        let limb = [
            ("Clavicle", "Spine02", [0.02, 0.586, 0.0]),
            ("Upperarm", "Clavicle", [0.113, 0.599, 0.0]),
            ("UpperarmTwist01", "Upperarm", [0.113, 0.599, 0.0]),
            ("UpperarmTwist02", "UpperarmTwist01", [0.166, 0.599, 0.0]),
            ("Forearm", "Upperarm", [0.219, 0.599, 0.0]),
            ("ForearmTwist01", "Forearm", [0.219, 0.599, 0.0]),
            ("ForearmTwist02", "ForearmTwist01", [0.258, 0.612, 0.0]),
            ("Hand", "Forearm", [0.297, 0.626, 0.0]),
            ("Thigh", "Hip", [0.084, 0.342, 0.0]),
            ("Calf", "Thigh", [0.092, 0.218, 0.01]),
            ("Foot", "Calf", [0.094, 0.082, 0.0]),
            ("Toe", "Foot", [0.094, 0.0, 0.06]),
        ];
        let r = recognized_with_limbs(&body, ["L_", "R_"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftShoulder), Some("L_Clavicle"));
        assert_eq!(at(B::LeftUpperArm), Some("L_Upperarm"));
        assert_eq!(at(B::LeftLowerArm), Some("L_Forearm"));
        assert_eq!(at(B::LeftHand), Some("L_Hand"));
        assert_eq!(at(B::RightUpperArm), Some("R_Upperarm"));
        assert_eq!(at(B::RightHand), Some("R_Hand"));
    }

    #[test]
    fn arms_hanging_from_a_chest_leaning_to_one_side_are_the_arms() {
        // A Kinect-style zero pose: the chest stands 5 cm to the left of the middle
        // between the thighs, the arms hang straight down at the sides. The right
        // shoulder, elbow and hand are 10 cm from the thighs' middle, less than 1.4
        // hip half-widths (12.6 cm), though 15 cm from the chest like the left ones.
        let rig = super::super::test_support::skeleton(&[
            ("Hips", None, [0.0, 1.0, 0.0]),
            ("Spine", Some("Hips"), [0.02, 1.12, 0.0]),
            ("Chest", Some("Spine"), [0.05, 1.3, 0.0]),
            ("Neck", Some("Chest"), [0.06, 1.45, 0.0]),
            ("Head", Some("Neck"), [0.07, 1.58, 0.0]),
            ("LeftCollar", Some("Chest"), [0.08, 1.4, 0.0]),
            ("LeftShoulder", Some("LeftCollar"), [0.2, 1.4, 0.0]),
            ("LeftElbow", Some("LeftShoulder"), [0.2, 1.12, 0.0]),
            ("LeftWrist", Some("LeftElbow"), [0.2, 0.86, 0.0]),
            ("RightCollar", Some("Chest"), [0.02, 1.4, 0.0]),
            ("RightShoulder", Some("RightCollar"), [-0.1, 1.4, 0.0]),
            ("RightElbow", Some("RightShoulder"), [-0.1, 1.12, 0.0]),
            ("RightWrist", Some("RightElbow"), [-0.1, 0.86, 0.0]),
            ("LeftHip", Some("Hips"), [0.09, 1.0, 0.0]),
            ("LeftKnee", Some("LeftHip"), [0.09, 0.53, 0.0]),
            ("LeftAnkle", Some("LeftKnee"), [0.09, 0.08, 0.0]),
            ("LeftToe", Some("LeftAnkle"), [0.09, 0.0, 0.12]),
            ("RightHip", Some("Hips"), [-0.09, 1.0, 0.0]),
            ("RightKnee", Some("RightHip"), [-0.09, 0.53, 0.0]),
            ("RightAnkle", Some("RightKnee"), [-0.09, 0.08, 0.0]),
            ("RightToe", Some("RightAnkle"), [-0.09, 0.0, 0.12]),
        ]);
        let Recognition::Humanoid(r) = recognize(&rig) else {
            panic!("not recognized as a humanoid")
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Chest), Some("Chest"));
        assert_eq!(at(B::Head), Some("Head"));
        assert_eq!(at(B::LeftShoulder), Some("LeftCollar"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftShoulder"));
        assert_eq!(at(B::LeftHand), Some("LeftWrist"));
        assert_eq!(at(B::RightShoulder), Some("RightCollar"));
        assert_eq!(at(B::RightUpperArm), Some("RightShoulder"));
        assert_eq!(at(B::RightLowerArm), Some("RightElbow"));
        assert_eq!(at(B::RightHand), Some("RightWrist"));
    }

    #[test]
    fn a_neck_leaving_the_spine_below_the_arm_branch_is_the_neck() {
        // Biovision style: `Neck` hangs from the lower chest joint `Chest`, beside
        // `Chest2`, which carries the collars; arms down, no toes below the ankles
        // but a nub.
        let body = [
            ("Hips", "", [0.0, 1.0, 0.0]),
            ("Chest", "Hips", [0.0, 1.12, 0.0]),
            ("Chest2", "Chest", [0.0, 1.28, 0.0]),
            ("Neck", "Chest", [0.0, 1.39, 0.0]),
            ("Head", "Neck", [0.0, 1.52, 0.0]),
            ("HeadTop", "Head", [0.0, 1.63, 0.0]),
        ];
        let limb = [
            ("Collar", "Chest2", [0.03, 1.39, 0.04]),
            ("Shoulder", "Collar", [0.17, 1.39, 0.04]),
            ("Elbow", "Shoulder", [0.17, 1.08, 0.04]),
            ("Wrist", "Elbow", [0.17, 0.83, 0.04]),
            ("Fingers", "Wrist", [0.17, 0.70, 0.04]),
            ("Hip", "Hips", [0.09, 1.0, 0.0]),
            ("Knee", "Hip", [0.09, 0.53, 0.0]),
            ("Ankle", "Knee", [0.09, 0.08, 0.0]),
            ("Toe", "Ankle", [0.09, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Spine), Some("Chest"));
        assert_eq!(at(B::Chest), None);
        assert_eq!(at(B::Neck), Some("Neck"));
        assert_eq!(at(B::Head), Some("Head"));
        assert_eq!(at(B::LeftShoulder), Some("LeftCollar"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftShoulder"));
        assert_eq!(at(B::RightHand), Some("RightWrist"));
        assert_eq!(at(B::LeftFoot), Some("LeftAnkle"));
    }

    #[test]
    fn hair_hanging_from_the_head_farther_out_than_the_hands_is_no_arm() {
        // An A-pose figure with two long strands hanging from `Head` out past the
        // hands: the head also branches into two one-sided chains reaching far out.
        let body = [
            ("Hips", "", [0.0, 1.0, 0.0]),
            ("Spine", "Hips", [0.0, 1.12, 0.0]),
            ("Chest", "Spine", [0.0, 1.3, 0.0]),
            ("Neck", "Chest", [0.0, 1.45, 0.0]),
            ("Head", "Neck", [0.0, 1.55, 0.0]),
            ("HeadTop", "Head", [0.0, 1.7, 0.0]),
        ];
        let limb = [
            ("Shoulder", "Chest", [0.04, 1.42, 0.0]),
            ("UpperArm", "Shoulder", [0.15, 1.40, 0.0]),
            ("LowerArm", "UpperArm", [0.35, 1.20, 0.0]),
            ("Hand", "LowerArm", [0.52, 1.03, 0.0]),
            ("Middle1", "Hand", [0.58, 0.97, 0.0]),
            ("Middle2", "Middle1", [0.62, 0.93, 0.0]),
            ("Strand1", "Head", [0.08, 1.65, -0.05]),
            ("Strand2", "Strand1", [0.25, 1.4, -0.15]),
            ("Strand3", "Strand2", [0.45, 1.1, -0.2]),
            ("Strand4", "Strand3", [0.7, 0.8, -0.25]),
            ("Strand5", "Strand4", [0.75, 0.4, -0.3]),
            ("UpperLeg", "Hips", [0.09, 1.0, 0.0]),
            ("LowerLeg", "UpperLeg", [0.09, 0.53, 0.0]),
            ("Foot", "LowerLeg", [0.09, 0.08, 0.0]),
            ("Toes", "Foot", [0.09, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Chest), Some("Chest"));
        assert_eq!(at(B::UpperChest), None);
        assert_eq!(at(B::Head), Some("Head"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftUpperArm"));
        assert_eq!(at(B::RightHand), Some("RightHand"));
    }

    #[test]
    fn a_weapon_held_across_the_body_leaves_the_arms_at_the_chest() {
        // An A-pose Biped-style figure whose right hand holds a weapon: a 3-joint
        // `weapon` chain hanging from `Bip01 R Hand` reaches across the midline past
        // the left hand. The hand then branches into two chains reaching out to
        // either side (fingers and weapon), and the right arm seems to cross the body.
        let mut table: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("Bip01 Pelvis".into(), None, [0.0, 1.0, 0.0]),
            (
                "Bip01 Spine".into(),
                Some("Bip01 Pelvis".into()),
                [0.0, 1.12, 0.0],
            ),
            (
                "Bip01 Spine1".into(),
                Some("Bip01 Spine".into()),
                [0.0, 1.3, 0.0],
            ),
            (
                "Bip01 Neck".into(),
                Some("Bip01 Spine1".into()),
                [0.0, 1.45, 0.0],
            ),
            (
                "Bip01 Head".into(),
                Some("Bip01 Neck".into()),
                [0.0, 1.55, 0.0],
            ),
        ];
        for (s, x) in [("L", 1.0f32), ("R", -1.0)] {
            let n = |part: &str| format!("Bip01 {s} {part}");
            for (part, parent, [px, py, pz]) in [
                ("Clavicle", "Bip01 Neck", [0.06, 1.42, 0.0]),
                ("UpperArm", "Clavicle", [0.17, 1.40, 0.0]),
                ("Forearm", "UpperArm", [0.37, 1.20, 0.0]),
                ("Hand", "Forearm", [0.55, 1.03, 0.0]),
                ("Finger0", "Hand", [0.58, 1.0, 0.04]),
                ("Finger01", "Finger0", [0.6, 0.97, 0.06]),
                ("Finger1", "Hand", [0.62, 0.97, 0.0]),
                ("Finger11", "Finger1", [0.66, 0.93, 0.0]),
                ("Thigh", "Bip01 Pelvis", [0.09, 1.0, 0.0]),
                ("Calf", "Thigh", [0.09, 0.53, 0.0]),
                ("Foot", "Calf", [0.09, 0.08, 0.0]),
                ("Toe0", "Foot", [0.09, 0.0, 0.12]),
            ] {
                let parent = if parent.starts_with("Bip01") {
                    parent.to_owned()
                } else {
                    n(parent)
                };
                table.push((n(part), Some(parent), [x * px, py, pz]));
            }
        }
        for (name, parent, at) in [
            ("weapon_01", "Bip01 R Hand", [0.2, 0.9, 0.1]),
            ("Bone_weapon_01", "weapon_01", [0.9, 0.6, 0.1]),
            ("Bone_weapon_02", "Bone_weapon_01", [1.0, 0.55, 0.1]),
        ] {
            table.push((name.into(), Some(parent.into()), at));
        }
        let rows = super::super::test_support::borrowed(&table);
        let rig = super::super::test_support::skeleton(&rows);
        let Recognition::Humanoid(r) = recognize(&rig) else {
            panic!("not recognized as a humanoid")
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Head), Some("Bip01 Head"));
        assert_eq!(at(B::RightUpperArm), Some("Bip01 R UpperArm"));
        assert_eq!(at(B::RightHand), Some("Bip01 R Hand"));
        assert_eq!(at(B::LeftHand), Some("Bip01 L Hand"));
    }

    #[test]
    fn a_rig_named_in_french_keeps_its_arms_head_and_weapon_apart() {
        // An A-pose figure named in French, as a Sketchfab export of a game character
        // has it: each arm `epaule` (the shoulder joint), `coude` (elbow), `poignet`
        // (wrist) and a `main` leaf, the hand's end; the head chain `cou`, `tete` and a
        // `machoire` (jaw) leaf in front; a sword, `arme`, held forward in the right
        // hand, reaching farther than the hand. By proportions alone the elbow, wrist
        // and hand's end read as upper arm, forearm and hand, the sword as the right
        // arm's line, and the jaw as the head.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("bassin_01".into(), None, [0.0, 1.0, 0.0]),
            ("spine1".into(), Some("bassin_01".into()), [0.0, 1.15, 0.0]),
            ("spine2".into(), Some("spine1".into()), [0.0, 1.3, 0.0]),
            ("plexus".into(), Some("spine2".into()), [0.0, 1.45, 0.0]),
            ("cou_13".into(), Some("plexus".into()), [0.0, 1.6, 0.0]),
            ("tete_14".into(), Some("cou_13".into()), [0.0, 1.72, 0.0]),
            (
                "machoire_15".into(),
                Some("tete_14".into()),
                [0.0, 1.68, 0.08],
            ),
        ];
        for (s, x) in [("L", 1.0f32), ("R", -1.0)] {
            let n = |part: &str| format!("{part}_{s}");
            for (part, parent, [px, py, pz]) in [
                ("epaule", "plexus", [0.2, 1.55, 0.0]),
                ("coude", "epaule", [0.45, 1.35, 0.0]),
                ("poignet", "coude", [0.62, 1.2, 0.0]),
                ("main1", "poignet", [0.74, 1.08, 0.0]),
                ("hanche", "bassin_01", [0.1, 0.95, 0.0]),
                ("genou", "hanche", [0.1, 0.52, 0.03]),
                ("cheville", "genou", [0.1, 0.1, 0.0]),
                ("pied", "cheville", [0.1, 0.0, 0.14]),
            ] {
                let parent = if parent.contains('_') || parent == "plexus" {
                    parent.to_owned()
                } else {
                    n(parent)
                };
                rows.push((n(part), Some(parent), [x * px, py, pz]));
            }
        }
        for (name, parent, at) in [
            ("arme_20", "poignet_R", [-0.66, 1.12, 0.05]),
            ("arme2_21", "arme_20", [-0.7, 1.12, 0.5]),
            ("arme3_22", "arme2_21", [-0.72, 1.15, 0.95]),
        ] {
            rows.push((name.into(), Some(parent.into()), at));
        }
        let r = recognized(&super::super::test_support::borrowed(&rows));
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Head), Some("tete_14"));
        assert_eq!(at(B::Neck), Some("cou_13"));
        for (side, upper, lower, hand) in [
            ("L", B::LeftUpperArm, B::LeftLowerArm, B::LeftHand),
            ("R", B::RightUpperArm, B::RightLowerArm, B::RightHand),
        ] {
            assert_eq!(at(upper).map(str::to_owned), Some(format!("epaule_{side}")));
            assert_eq!(at(lower).map(str::to_owned), Some(format!("coude_{side}")));
            assert_eq!(at(hand).map(str::to_owned), Some(format!("poignet_{side}")));
        }
    }

    /// The joints of a MotionBuilder `Character1_` rig as DeepPushRecovery and
    /// MASS write it: a T-pose, metres.
    fn character1() -> Vec<crate::skeleton::Joint> {
        let body = [
            ("Character1_Hips", "", [0.0, 1.0, 0.0]),
            ("Character1_Spine", "Character1_Hips", [0.0, 1.09, -0.01]),
            ("Character1_Spine1", "Character1_Spine", [0.0, 1.20, -0.02]),
            ("Character1_Neck", "Character1_Spine1", [0.0, 1.51, -0.01]),
            ("Character1_Head", "Character1_Neck", [0.0, 1.59, 0.02]),
        ];
        let limb = [
            ("Shoulder", "Character1_Spine1", [0.015, 1.47, -0.01]),
            ("Arm", "Shoulder", [0.20, 1.45, -0.01]),
            ("ForeArm", "Arm", [0.52, 1.48, 0.02]),
            ("Hand", "ForeArm", [0.81, 1.49, 0.05]),
            ("UpLeg", "Character1_Hips", [0.09, 0.95, 0.02]),
            ("Leg", "UpLeg", [0.10, 0.55, 0.03]),
            ("Foot", "Leg", [0.08, 0.09, -0.01]),
            ("ToeBase", "Foot", [0.06, 0.02, 0.14]),
        ];
        let sides = ["Character1_Left", "Character1_Right"];
        with_limbs(&body, sides, &limb).joints().to_vec()
    }

    #[test]
    fn point_helpers_thrown_across_the_body_still_leave_the_arm_one_sided() {
        // MASS-style `Character1_` rig: MotionBuilder `_RIGMESH` helpers are leaves
        // with zero-length End Sites; the right arm's copy their OFFSETs from the left
        // arm, so they sit across the body. Every bone of the right arm is on the right.
        let mut joints = character1();
        let at = |j: &[crate::skeleton::Joint], n: &str| {
            j.iter().position(|j| j.name == n).expect("a joint")
        };
        // Helpers under the right upper arm and forearm, placed on the left side.
        for (helper, parent, x) in [
            ("R_Humerus_RIGMESH", "Character1_RightArm", 0.20),
            ("R_Radius_RIGMESH", "Character1_RightForeArm", 0.52),
        ] {
            let p = at(&joints, parent);
            let from = (0..)
                .scan(Some(p), |j, _| {
                    let i = (*j)?;
                    *j = joints[i].parent;
                    Some(joints[i].rest.translation)
                })
                .fold(glam::Vec3::ZERO, |a, t| a + t);
            joints.push(crate::skeleton::Joint {
                name: helper.to_owned(),
                parent: Some(p),
                rest: crate::skeleton::Transform::from_translation(
                    glam::Vec3::new(x, from.y, from.z) - from,
                ),
                end: Some(glam::Vec3::ZERO),
            });
        }
        let rig = crate::skeleton::Skeleton::new(joints).unwrap();
        let Recognition::Humanoid(r) = recognize(&rig) else {
            panic!("not recognized as a humanoid")
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::RightUpperArm), Some("Character1_RightArm"));
        assert_eq!(at(B::RightHand), Some("Character1_RightHand"));
        assert_eq!(at(B::LeftHand), Some("Character1_LeftHand"));
    }

    #[test]
    fn a_stray_end_site_thrown_across_the_body_still_leaves_the_arm_one_sided() {
        // A writer's bug (DeepPushRecovery-style `Character1_` rig): the right hand's
        // End Site offset is 1.6 m along +X, so the tip lands beyond the left hand;
        // every joint of the right arm stays on the right.
        let mut joints = character1();
        let hand = |j: &[crate::skeleton::Joint], n: &str| {
            j.iter().position(|j| j.name == n).expect("the hand")
        };
        let left = hand(&joints, "Character1_LeftHand");
        joints[left].end = Some(glam::Vec3::new(0.003, 0.001, 0.009));
        let right = hand(&joints, "Character1_RightHand");
        joints[right].end = Some(glam::Vec3::new(1.62, 0.001, 0.009));
        let rig = crate::skeleton::Skeleton::new(joints).unwrap();
        let Recognition::Humanoid(r) = recognize(&rig) else {
            panic!("not recognized as a humanoid")
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftHand), Some("Character1_LeftHand"));
        assert_eq!(at(B::RightUpperArm), Some("Character1_RightArm"));
        assert_eq!(at(B::RightHand), Some("Character1_RightHand"));
    }

    #[test]
    fn a_marker_leaf_beside_the_elbow_is_no_hand_fork() {
        // MotionBuilder's `Character1_` rig with a physics body's proxy leaves (MSS):
        // `Radius` 0.4 cm off the elbow beside a 27 cm forearm ending in a hand with
        // no fingers, and a long clavicle, so the forearm is within 0.6 of the
        // elbow's distance from the chest.
        let body = [
            ("Character1_Hips", "", [0.0, 1.0, 0.0]),
            ("Character1_Spine", "Character1_Hips", [0.0, 1.12, 0.0]),
            ("Character1_Spine1", "Character1_Spine", [0.0, 1.40, 0.0]),
            ("Character1_Neck", "Character1_Spine1", [0.0, 1.50, 0.0]),
            ("Character1_Head", "Character1_Neck", [0.0, 1.59, 0.03]),
        ];
        let limb = [
            ("Shoulder", "Character1_Spine1", [0.02, 1.45, 0.0]),
            ("Arm", "Shoulder", [0.19, 1.45, 0.0]),
            ("ForeArm", "Arm", [0.47, 1.45, 0.0]),
            ("Hand", "ForeArm", [0.74, 1.45, 0.0]),
            ("Radius", "ForeArm", [0.47, 1.446, -0.001]),
            ("UpLeg", "Character1_Hips", [0.09, 0.95, 0.0]),
            ("Leg", "UpLeg", [0.09, 0.52, 0.0]),
            ("Foot", "Leg", [0.09, 0.08, 0.0]),
            ("ToeBase", "Foot", [0.09, 0.0, 0.12]),
        ];
        let r = recognized_with_limbs(&body, ["Character1_Left", "Character1_Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftShoulder), Some("Character1_LeftShoulder"));
        assert_eq!(at(B::LeftUpperArm), Some("Character1_LeftArm"));
        assert_eq!(at(B::LeftLowerArm), Some("Character1_LeftForeArm"));
        assert_eq!(at(B::LeftHand), Some("Character1_LeftHand"));
        assert_eq!(at(B::RightHand), Some("Character1_RightHand"));
    }

    /// A body standing 1.8 m tall, hips to head top, for the arm tests' limbs.
    const UPRIGHT_BODY: [(&str, &str, [f32; 3]); 6] = [
        ("Hips", "", [0.0, 1.0, 0.0]),
        ("Spine", "Hips", [0.0, 1.15, 0.0]),
        ("Chest", "Spine", [0.0, 1.35, 0.0]),
        ("Neck", "Chest", [0.0, 1.5, 0.0]),
        ("Head", "Neck", [0.0, 1.6, 0.0]),
        ("HeadTop", "Head", [0.0, 1.8, 0.0]),
    ];

    #[test]
    fn fingers_starting_together_a_forearm_past_a_named_hand_are_its_fingers() {
        // A cartoon's glove on a Mixamo rig (Sketchfab's conversion of Knuckles):
        // past `ForeArm`, `Hand` forks into chains each starting from its own joint
        // where the knuckles are, a palm as long as the forearm past the wrist, and one
        // finger stretched out twice as far as the third longest. The names put the
        // wrist at the fork: the fork is the hand, not an elbow.
        let mut limb = vec![
            ("Shoulder", "Chest", [0.05, 1.45, 0.0]),
            ("Arm", "Shoulder", [0.18, 1.45, 0.0]),
            ("ForeArm", "Arm", [0.44, 1.45, 0.0]),
            ("Hand", "ForeArm", [0.68, 1.45, 0.0]),
            ("UpLeg", "Hips", [0.1, 0.95, 0.0]),
            ("Leg", "UpLeg", [0.1, 0.5, 0.0]),
            ("Foot", "Leg", [0.1, 0.08, 0.0]),
            ("ToeBase", "Foot", [0.1, 0.0, 0.12]),
        ];
        for (root, mid, tip, reach, z) in [
            ("Hand.001", "Hand.010", "Hand.011", 0.65f32, 0.0f32),
            ("Hand.002", "Hand.003", "Hand.004", 0.3, 0.04),
            ("Hand.005", "Hand.007", "Hand.009", 0.28, -0.02),
            ("Hand.006", "Hand.016", "Hand.017", 0.26, -0.04),
        ] {
            limb.push((root, "Hand", [0.92, 1.45, 0.0]));
            limb.push((mid, root, [0.68 + 0.5 * (0.24 + reach), 1.45, z]));
            limb.push((tip, mid, [0.68 + reach, 1.45, z]));
        }
        let s = with_limbs(&UPRIGHT_BODY, ["Left", "Right"], &limb);
        let r = match recognize(&s) {
            Recognition::Humanoid(r) => r,
            Recognition::NotHumanoid(n) => panic!("{}", n.reason),
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperArm), Some("LeftArm"));
        assert_eq!(at(B::LeftLowerArm), Some("LeftForeArm"));
        assert_eq!(at(B::LeftHand), Some("LeftHand"));
        assert_eq!(at(B::RightHand), Some("RightHand"));
    }

    #[test]
    fn fingers_starting_together_at_the_wrist_of_a_long_forearm_have_no_hand() {
        // A Blender rig with arms half down and a forearm longer than the upper arm:
        // three finger chains start together at the wrist, each from its own joint,
        // under the elbow joint `C3`. From the elbow they reach farther than the elbow
        // is out from the chest, yet they fork at the wrist: no joint is the hand, and
        // no finger is the arm.
        let mut limb = vec![
            ("C1", "Chest", [0.02, 1.45, 0.0]),
            ("C2", "C1", [0.1, 1.42, 0.0]),
            ("C3", "C2", [0.2, 1.2, 0.0]),
            ("Thigh", "Hips", [0.1, 0.95, 0.0]),
            ("Shin", "Thigh", [0.1, 0.5, 0.0]),
            ("Foot", "Shin", [0.1, 0.08, 0.0]),
            ("Toe", "Foot", [0.1, 0.0, 0.12]),
        ];
        for (first, second, third, z, out) in [
            ("P1", "P1b", "P1c", 0.02f32, 0.0f32),
            ("P2", "P2b", "P2c", 0.0, 0.01),
            ("P3", "P3b", "P3c", -0.02, -0.01),
        ] {
            limb.push((first, "C3", [0.3, 0.95, 0.0]));
            limb.push((second, first, [0.32 + out, 0.89, z]));
            limb.push((third, second, [0.33 + out, 0.83, 1.5 * z]));
        }
        let s = with_limbs(&UPRIGHT_BODY, ["L_", "R_"], &limb);
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized")
        };
        assert!(n.reason.contains("no hand joint"), "{}", n.reason);
        assert!(
            n.reason.contains("past `L_C3`") || n.reason.contains("past `R_C3`"),
            "{}",
            n.reason
        );
    }

    #[test]
    fn fingers_starting_together_a_forearm_past_the_elbow_have_no_hand() {
        // A Quaternius mech: past the forearm joint four palm chains start together
        // where the wrist is, each from its own joint; no joint is the hand.
        let mut limb = vec![
            ("Shoulder", "Chest", [0.05, 1.45, 0.0]),
            ("UpperArm", "Shoulder", [0.18, 1.45, 0.0]),
            ("LowerArm", "UpperArm", [0.46, 1.45, 0.0]),
            ("Thigh", "Hips", [0.1, 0.95, 0.0]),
            ("Shin", "Thigh", [0.1, 0.5, 0.0]),
            ("Foot", "Shin", [0.1, 0.08, 0.0]),
            ("Toe", "Foot", [0.1, 0.0, 0.12]),
        ];
        for (palm, finger, tip, z) in [
            ("PalmI", "Index1", "Index2", 0.03f32),
            ("PalmR", "Ring1", "Ring2", -0.01),
            ("PalmP", "Pinky1", "Pinky2", -0.03),
        ] {
            limb.push((palm, "LowerArm", [0.71, 1.45, 0.0]));
            limb.push((finger, palm, [0.79, 1.45, z]));
            limb.push((tip, finger, [0.83, 1.45, z]));
        }
        let s = with_limbs(&UPRIGHT_BODY, ["L_", "R_"], &limb);
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized")
        };
        assert!(n.reason.contains("no hand joint"), "{}", n.reason);
        assert!(
            n.reason.contains("past `L_LowerArm`") || n.reason.contains("past `R_LowerArm`"),
            "{}",
            n.reason
        );
        // Bone lengths say so, the same in every pose: no clip frame is tried as the rest.
        assert!(n.any_pose, "{}", n.reason);
        // One palm joint at the wrist carrying the three is the hand.
        limb.push(("Palm", "LowerArm", [0.71, 1.45, 0.0]));
        for row in limb
            .iter_mut()
            .filter(|r| r.0.starts_with("Palm") && r.0 != "Palm")
        {
            row.1 = "Palm";
        }
        let r = recognized_with_limbs(&UPRIGHT_BODY, ["L_", "R_"], &limb);
        assert_eq!(
            r.map.bones.get(&B::LeftHand).map(String::as_str),
            Some("L_Palm")
        );
        assert_eq!(
            r.map.bones.get(&B::LeftLowerArm).map(String::as_str),
            Some("L_LowerArm")
        );
    }

    /// A Mixamo auto-rig (hips at 1.06 m, facing +Z) whose arms have their shoulder,
    /// upper arm, forearm and hand joints at `arm` (out along X, height), two fingers
    /// past the hand, recognized.
    fn mixamo_arms(arm: [[f32; 2]; 4]) -> super::super::RecognizedMap {
        let body = [
            ("mixamorig:Hips", "", [0.0, 1.06, 0.0]),
            ("mixamorig:Spine", "mixamorig:Hips", [0.0, 1.16, 0.0]),
            ("mixamorig:Spine1", "mixamorig:Spine", [0.0, 1.26, 0.0]),
            ("mixamorig:Spine2", "mixamorig:Spine1", [0.0, 1.38, 0.0]),
            ("mixamorig:Neck", "mixamorig:Spine2", [0.0, 1.52, 0.0]),
            ("mixamorig:Head", "mixamorig:Neck", [0.0, 1.60, 0.0]),
            ("mixamorig:HeadTop_End", "mixamorig:Head", [0.0, 1.85, 0.0]),
        ];
        let [shoulder, upper, fore, hand] = arm.map(|[x, y]| [x, y, 0.0]);
        let finger = |dx: f32, z: f32| [hand[0] + dx, hand[1], z];
        let limb = [
            ("Shoulder", "mixamorig:Spine2", shoulder),
            ("Arm", "Shoulder", upper),
            ("ForeArm", "Arm", fore),
            ("Hand", "ForeArm", hand),
            ("HandIndex1", "Hand", finger(0.07, 0.02)),
            ("HandIndex2", "HandIndex1", finger(0.11, 0.02)),
            ("HandIndex3", "HandIndex2", finger(0.14, 0.02)),
            ("HandRing1", "Hand", finger(0.07, -0.02)),
            ("HandRing2", "HandRing1", finger(0.11, -0.02)),
            ("HandRing3", "HandRing2", finger(0.14, -0.02)),
            ("UpLeg", "mixamorig:Hips", [0.1, 1.0, 0.0]),
            ("Leg", "UpLeg", [0.1, 0.55, 0.0]),
            ("Foot", "Leg", [0.1, 0.1, 0.0]),
            ("ToeBase", "Foot", [0.1, 0.0, 0.12]),
        ];
        recognized_with_limbs(&body, ["mixamorig:Left", "mixamorig:Right"], &limb)
    }

    #[test]
    fn a_shoulder_before_an_arm_is_the_clavicle_whatever_the_proportions() {
        // A Mixamo auto-rig with the elbow marker placed early: `LeftForeArm` a third of
        // the way down the real upper arm, so `LeftArm` to `LeftForeArm` is half the
        // forearm and `LeftShoulder` to `LeftForeArm` looks like the upper arm, with
        // `LeftArm` bent 20° off that line. Mixamo's `LeftShoulder` before a `LeftArm`
        // is the clavicle, and the clips turn the arm at `LeftArm`.
        let r = mixamo_arms([[0.10, 1.49], [0.31, 1.43], [0.45, 1.44], [0.72, 1.45]]);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftShoulder), Some("mixamorig:LeftShoulder"));
        assert_eq!(at(B::LeftUpperArm), Some("mixamorig:LeftArm"));
        assert_eq!(at(B::LeftLowerArm), Some("mixamorig:LeftForeArm"));
        assert_eq!(at(B::LeftHand), Some("mixamorig:LeftHand"));
        assert_eq!(at(B::RightUpperArm), Some("mixamorig:RightArm"));
    }

    #[test]
    fn a_thumb_hanging_from_the_wrist_beside_a_palm_joint_makes_the_wrist_the_hand() {
        // A Maya rig (FBX2glTF): `LF_wrist_JNT`, then `LF_hand_JNT` 2.2 cm on in the
        // palm with the four fingers under it (each from a metacarpal joint), and the
        // thumb hanging from the wrist beside it. The wrist is the hand all five
        // digits hang from; the palm joint is none.
        let body = [
            ("pelvis_JNT", "", [0.0, 0.9, 0.0]),
            ("spine_a_JNT", "pelvis_JNT", [0.0, 1.05, 0.0]),
            ("chest_JNT", "spine_a_JNT", [0.0, 1.25, 0.0]),
            ("neck_JNT", "chest_JNT", [0.0, 1.45, 0.0]),
            ("head_JNT", "neck_JNT", [0.0, 1.55, 0.0]),
            ("head_tip_JNT", "head_JNT", [0.0, 1.75, 0.0]),
        ];
        let mut limb = vec![
            ("clavicle_JNT", "chest_JNT", [0.03, 1.38, 0.0]),
            ("shoulder_JNT", "clavicle_JNT", [0.18, 1.38, 0.0]),
            ("elbow_JNT", "shoulder_JNT", [0.46, 1.38, 0.0]),
            ("wrist_JNT", "elbow_JNT", [0.72, 1.38, 0.0]),
            ("hand_JNT", "wrist_JNT", [0.84, 1.39, -0.02]),
            ("thumb_a_JNT", "wrist_JNT", [0.79, 1.38, 0.04]),
            ("thumb_b_JNT", "thumb_a_JNT", [0.87, 1.38, 0.13]),
            ("thumb_c_JNT", "thumb_b_JNT", [0.94, 1.38, 0.2]),
            ("thumb_d_JNT", "thumb_c_JNT", [1.0, 1.38, 0.27]),
            ("upLeg_JNT", "pelvis_JNT", [0.09, 0.88, 0.0]),
            ("knee_JNT", "upLeg_JNT", [0.09, 0.48, 0.01]),
            ("ankle_JNT", "knee_JNT", [0.09, 0.08, 0.0]),
            ("ball_JNT", "ankle_JNT", [0.09, 0.0, 0.12]),
        ];
        for (k, finger) in ["idx", "mid", "ring", "lit"].into_iter().enumerate() {
            let z = 0.05 - 0.035 * k as f32;
            for (i, x) in [0.86, 0.96, 1.1, 1.19, 1.28].into_iter().enumerate() {
                let name: &'static str =
                    format!("{finger}_{}_JNT", ["a", "b", "c", "d", "e"][i]).leak();
                let parent: &'static str = match i {
                    0 => "hand_JNT",
                    _ => format!("{finger}_{}_JNT", ["a", "b", "c", "d", "e"][i - 1]).leak(),
                };
                limb.push((name, parent, [x, 1.39, z]));
            }
        }
        let r = super::super::test_support::recognized_with_limbs(&body, ["LF_", "RT_"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftLowerArm), Some("LF_elbow_JNT"));
        assert_eq!(at(B::LeftHand), Some("LF_wrist_JNT"));
        assert_eq!(at(B::RightHand), Some("RT_wrist_JNT"));
        assert_eq!(at(B::LeftThumbMetacarpal), Some("LF_thumb_a_JNT"));
        assert_eq!(at(B::LeftIndexProximal), Some("LF_idx_b_JNT"));
        assert_eq!(at(B::LeftLittleProximal), Some("LF_lit_b_JNT"));
    }

    #[test]
    fn a_thumb_hung_past_the_wrist_on_one_side_leaves_both_hands_at_the_wrist() {
        // A Quaternius human (FBX2glTF), facing +Z, left at +X: `Palm` at the wrist,
        // `MiddleHand` on in the palm carrying the fingers' mitten. The left thumb
        // hangs from `Palm.L`, the right one from `MiddleHand.R`, so the right hand's
        // digits fork a palm past its wrist. The arms mirror each other: both hands
        // are the wrists.
        let mut rows = vec![
            ("Hips", None, [0.0, 0.9, 0.0]),
            ("Abdomen", Some("Hips"), [0.0, 1.05, 0.0]),
            ("Torso", Some("Abdomen"), [0.0, 1.25, 0.0]),
            ("Neck", Some("Torso"), [0.0, 1.45, 0.0]),
            ("Head", Some("Neck"), [0.0, 1.55, 0.0]),
            ("Head_end", Some("Head"), [0.0, 1.75, 0.0]),
        ];
        let names: Vec<[String; 9]> = ["L", "R"]
            .iter()
            .map(|s| {
                [
                    "Shoulder",
                    "UpperArm",
                    "LowerArm",
                    "Palm",
                    "MiddleHand",
                    "Fingers",
                    "Fingers_end",
                    "Thumb1",
                    "Thumb2",
                ]
                .map(|n| format!("{n}.{s}"))
            })
            .collect();
        for (side, x) in [(0, 1.0f32), (1, -1.0)] {
            let n = &names[side];
            let thumb_from = if side == 0 { &n[3] } else { &n[4] };
            rows.extend([
                (n[0].as_str(), Some("Torso"), [x * 0.03, 1.38, 0.0]),
                (n[1].as_str(), Some(n[0].as_str()), [x * 0.18, 1.38, 0.0]),
                (n[2].as_str(), Some(n[1].as_str()), [x * 0.46, 1.38, 0.0]),
                (n[3].as_str(), Some(n[2].as_str()), [x * 0.72, 1.38, 0.0]),
                (n[4].as_str(), Some(n[3].as_str()), [x * 0.78, 1.38, 0.0]),
                (n[5].as_str(), Some(n[4].as_str()), [x * 0.84, 1.38, 0.0]),
                (n[6].as_str(), Some(n[5].as_str()), [x * 0.89, 1.38, 0.0]),
                (
                    n[7].as_str(),
                    Some(thumb_from.as_str()),
                    [x * 0.75, 1.37, 0.03],
                ),
                (n[8].as_str(), Some(n[7].as_str()), [x * 0.79, 1.36, 0.07]),
            ]);
        }
        let legs: Vec<(String, String, [f32; 3])> = [("L", 1.0f32), ("R", -1.0)]
            .iter()
            .flat_map(|&(s, x)| {
                [
                    ("UpperLeg", "Hips", [x * 0.09, 0.88, 0.0]),
                    ("LowerLeg", "UpperLeg", [x * 0.09, 0.48, 0.01]),
                    ("Foot", "LowerLeg", [x * 0.09, 0.08, 0.0]),
                    ("Toes", "Foot", [x * 0.09, 0.0, 0.12]),
                ]
                .map(|(n, p, at)| {
                    let p = if p == "Hips" {
                        p.to_owned()
                    } else {
                        format!("{p}.{s}")
                    };
                    (format!("{n}.{s}"), p, at)
                })
            })
            .collect();
        rows.extend(
            legs.iter()
                .map(|(n, p, at)| (n.as_str(), Some(p.as_str()), *at)),
        );
        let r = match super::super::recognize(&super::super::test_support::skeleton(&rows)) {
            super::super::Recognition::Humanoid(r) => r,
            other => panic!("not recognized as a humanoid: {other:?}"),
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftHand), Some("Palm.L"));
        assert_eq!(at(B::RightHand), Some("Palm.R"));
        assert_eq!(at(B::RightLowerArm), Some("LowerArm.R"));
    }

    #[test]
    fn a_cartoon_upper_arm_a_third_of_the_forearm_is_still_the_upper_arm() {
        // A Mixamo auto-rig on a chibi figure: the elbow marker 9 cm past `LeftArm`, the
        // forearm 28 cm, so the named upper arm is 0.32 forearms, shorter than
        // proportions allow, and `LeftShoulder` to `LeftForeArm` looks like an upper arm
        // 1.1 forearms long. The clips raise the arm at `LeftArm`.
        let r = mixamo_arms([[0.08, 1.49], [0.31, 1.43], [0.40, 1.42], [0.68, 1.43]]);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftShoulder), Some("mixamorig:LeftShoulder"));
        assert_eq!(at(B::LeftUpperArm), Some("mixamorig:LeftArm"));
        assert_eq!(at(B::LeftLowerArm), Some("mixamorig:LeftForeArm"));
        assert_eq!(at(B::RightShoulder), Some("mixamorig:RightShoulder"));
        assert_eq!(at(B::RightUpperArm), Some("mixamorig:RightArm"));
    }

    /// Legs standing straight under hips at 0.9 m, facing +Z, the left at +X.
    const LEGS: [(&str, Option<&str>, [f32; 3]); 8] = [
        ("LeftUpperLeg", Some("Hips"), [0.09, 0.88, 0.0]),
        ("LeftLowerLeg", Some("LeftUpperLeg"), [0.09, 0.48, 0.01]),
        ("LeftFoot", Some("LeftLowerLeg"), [0.09, 0.08, 0.0]),
        ("LeftToes", Some("LeftFoot"), [0.09, 0.0, 0.12]),
        ("RightUpperLeg", Some("Hips"), [-0.09, 0.88, 0.0]),
        ("RightLowerLeg", Some("RightUpperLeg"), [-0.09, 0.48, 0.01]),
        ("RightFoot", Some("RightLowerLeg"), [-0.09, 0.08, 0.0]),
        ("RightToes", Some("RightFoot"), [-0.09, 0.0, 0.12]),
    ];

    /// The joints of a table `(name, parent, model-space position)` recognized, or
    /// why not.
    fn recognized(rows: &[(&str, Option<&str>, [f32; 3])]) -> super::super::RecognizedMap {
        match recognize(&super::super::test_support::skeleton(rows)) {
            Recognition::Humanoid(r) => r,
            other => panic!("not recognized as a humanoid: {other:?}"),
        }
    }

    #[test]
    fn an_arm_held_across_the_body_is_an_arm() {
        // Waving with the right hand raised, the left hand held across the belly: the
        // left forearm crosses the legs' midline by 8 cm, more than half a hip
        // half-width (4.5 cm), while its shoulder and elbow stay out on the left.
        let r = recognized(
            &[
                ("Hips", None, [0.0, 0.9, 0.0]),
                ("Spine", Some("Hips"), [0.0, 1.05, 0.0]),
                ("Chest", Some("Spine"), [0.0, 1.2, 0.0]),
                ("Neck", Some("Chest"), [0.0, 1.4, 0.0]),
                ("Head", Some("Neck"), [0.0, 1.5, 0.0]),
                ("HeadTop", Some("Head"), [0.0, 1.65, 0.0]),
                ("LeftShoulder", Some("Chest"), [0.04, 1.36, 0.0]),
                ("LeftUpperArm", Some("LeftShoulder"), [0.16, 1.36, 0.0]),
                ("LeftLowerArm", Some("LeftUpperArm"), [0.18, 1.08, 0.05]),
                ("LeftHand", Some("LeftLowerArm"), [-0.08, 0.98, 0.15]),
                ("RightShoulder", Some("Chest"), [-0.04, 1.36, 0.0]),
                ("RightUpperArm", Some("RightShoulder"), [-0.16, 1.36, 0.0]),
                ("RightLowerArm", Some("RightUpperArm"), [-0.3, 1.58, 0.0]),
                ("RightHand", Some("RightLowerArm"), [-0.32, 1.82, 0.02]),
            ]
            .iter()
            .chain(&LEGS)
            .copied()
            .collect::<Vec<_>>(),
        );
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperArm), Some("LeftUpperArm"));
        assert_eq!(at(B::LeftHand), Some("LeftHand"));
        assert_eq!(at(B::RightHand), Some("RightHand"));
        assert_eq!(at(B::Head), Some("Head"));
    }

    #[test]
    fn end_nubs_written_far_past_the_fingertips_leave_the_hand_its_fingers() {
        // Blender re-exporting an FBX import (Mixamo names) writes every leaf's `_end`
        // node in the armature's unscaled units: a 2 cm fingertip bone's nub 2.5 m
        // out. Reached through them, the fingers would carry the arm past the hand
        // (a fingertip taken for the elbow); the nubs are no part of the reach.
        let mut rows: Vec<(String, Option<String>, [f32; 3])> = Vec::new();
        let mut add = |name: &str, parent: Option<&str>, at: [f32; 3]| {
            rows.push((name.to_owned(), parent.map(str::to_owned), at));
        };
        for (name, parent, at) in [
            ("Hips", None, [0.0, 0.9, 0.0]),
            ("Spine", Some("Hips"), [0.0, 1.05, 0.0]),
            ("Chest", Some("Spine"), [0.0, 1.2, 0.0]),
            ("Neck", Some("Chest"), [0.0, 1.4, 0.0]),
            ("Head", Some("Neck"), [0.0, 1.5, 0.0]),
        ] {
            add(name, parent, at);
        }
        for (side, x) in [("Left", 1.0f32), ("Right", -1.0)] {
            let n = |part: &str| format!("{side}{part}");
            add(&n("Shoulder"), Some("Chest"), [0.04 * x, 1.36, 0.0]);
            add(&n("UpperArm"), Some(&n("Shoulder")), [0.16 * x, 1.36, 0.0]);
            add(&n("LowerArm"), Some(&n("UpperArm")), [0.42 * x, 1.36, 0.0]);
            add(&n("Hand"), Some(&n("LowerArm")), [0.66 * x, 1.36, 0.0]);
            for (finger, z) in [("Index", 0.02), ("Ring", -0.02)] {
                let mut parent = n("Hand");
                for (k, out) in [0.74f32, 0.78, 0.81].into_iter().enumerate() {
                    let joint = n(&format!("Hand{finger}{}", k + 1));
                    add(&joint, Some(&parent), [out * x, 1.36, z]);
                    parent = joint;
                }
                add(&format!("{parent}_end"), Some(&parent), [3.31 * x, 1.36, z]);
            }
        }
        let table: Vec<(&str, Option<&str>, [f32; 3])> = rows
            .iter()
            .map(|(name, parent, at)| (name.as_str(), parent.as_deref(), *at))
            .chain(LEGS.iter().copied())
            .collect();
        let r = recognized(&table);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftLowerArm), Some("LeftLowerArm"));
        assert_eq!(at(B::LeftHand), Some("LeftHand"));
        assert_eq!(at(B::RightHand), Some("RightHand"));
        assert_eq!(at(B::LeftIndexProximal), Some("LeftHandIndex1"));
    }

    /// A figure leaning to its left, recognized: the spine 6 cm over at the chest, the
    /// left arm hanging, the right one raised along its clavicle's line. The neck, head
    /// and head top go over to `head_x` each, and the arms' joints are named by `arm`
    /// from `Shoulder`, `UpperArm`, `LowerArm`, `Hand` with the side before them.
    fn leaning(head_x: [f32; 3], arm: fn(&str) -> String) -> super::super::RecognizedMap {
        let [neck, head, top] = head_x;
        let arms = [
            ("LeftShoulder", "Chest", [0.1, 1.33, 0.0]),
            ("LeftUpperArm", "LeftShoulder", [0.22, 1.3, 0.0]),
            ("LeftLowerArm", "LeftUpperArm", [0.25, 1.02, 0.0]),
            ("LeftHand", "LeftLowerArm", [0.24, 0.78, 0.03]),
            ("RightShoulder", "Chest", [0.04, 1.36, 0.0]),
            ("RightUpperArm", "RightShoulder", [-0.02, 1.39, 0.0]),
            ("RightLowerArm", "RightUpperArm", [-0.24, 1.52, 0.0]),
            ("RightHand", "RightLowerArm", [-0.2, 1.76, 0.05]),
        ]
        .map(|(name, parent, at)| {
            let parent = if parent == "Chest" {
                parent.to_owned()
            } else {
                arm(parent)
            };
            (arm(name), parent, at)
        });
        let mut rows: Vec<(&str, Option<&str>, [f32; 3])> = vec![
            ("Hips", None, [0.0, 0.9, 0.0]),
            ("Spine", Some("Hips"), [0.03, 1.05, 0.0]),
            ("Chest", Some("Spine"), [0.06, 1.2, 0.0]),
            ("Neck", Some("Chest"), [neck, 1.37, 0.0]),
            ("Head", Some("Neck"), [head, 1.47, 0.0]),
            ("HeadTop", Some("Head"), [top, 1.61, 0.0]),
        ];
        rows.extend(LEGS);
        rows.extend(
            arms.iter()
                .map(|(n, p, at)| (n.as_str(), Some(p.as_str()), *at)),
        );
        recognized(&rows)
    }

    #[test]
    fn a_body_leaning_to_one_side_keeps_its_head_over_the_chest() {
        // The neck leaves the chest 11 cm left of the legs' midline, more than a hip
        // half-width (9 cm), 5 cm from the chest.
        let r = leaning([0.11, 0.13, 0.15], str::to_owned);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::Neck), Some("Neck"));
        assert_eq!(at(B::Head), Some("Head"));
        assert_eq!(at(B::RightShoulder), Some("RightShoulder"));
        assert_eq!(at(B::RightUpperArm), Some("RightUpperArm"));
    }

    #[test]
    fn a_leaning_body_starts_its_upper_arm_out_from_the_chest() {
        // The head bends back over the hips. The right upper arm starts on the legs'
        // midline and its clavicle left of it; names say nothing (`RightA` to
        // `RightD`): out from the chest's middle, the upper arm starts farther out.
        let plain = |name: &str| {
            let side = if name.starts_with("Left") {
                "Left"
            } else {
                "Right"
            };
            let part = ["Shoulder", "UpperArm", "LowerArm", "Hand"]
                .iter()
                .position(|p| name.ends_with(p))
                .map_or("", |i| ["A", "B", "C", "D"][i]);
            format!("{side}{part}")
        };
        let r = leaning([0.05, 0.03, 0.02], plain);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::RightShoulder), Some("RightA"));
        assert_eq!(at(B::RightUpperArm), Some("RightB"));
        assert_eq!(at(B::RightLowerArm), Some("RightC"));
        assert_eq!(at(B::LeftUpperArm), Some("LeftB"));
    }
}
