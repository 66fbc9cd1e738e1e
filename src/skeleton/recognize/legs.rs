//! Stage 3: the legs. Along each leg's line down from the pelvis, the thigh is the
//! first joint out to the side whose bone points down, the knee the joint halfway
//! down (or one named as the knee wherever the leg goes down through it to an
//! ankle), the ankle the first joint below half the knee's height (or a joint beside it
//! reaching farther along the ground, `foot_beside`; never an end nub with a joint
//! between the knee and it, a digitigrade hock) and the toes the ankle's child
//! reaching farthest along the ground, never a heel behind the ankle (`solve_leg`,
//! `toes`, `is_heel`); a foot hanging from the root instead of the leg is told apart
//! (`detached_foot`).

use glam::Vec3;

use super::facing::Midline;
use super::names::Role;
use super::pelvis::Pelvis;
use super::rest_joints::{RestJoints, horizontal};

/// One leg's joints along its line.
#[derive(Default, Clone)]
pub(super) struct Leg {
    pub(super) line: Vec<usize>,
    pub(super) upper: Option<usize>,
    pub(super) lower: Option<usize>,
    pub(super) foot: Option<usize>,
    pub(super) toes: Option<usize>,
    /// The foot hangs outside the leg (`detached_foot`): driven by IK in the rig, by
    /// the leg here.
    pub(super) detached: bool,
    pub(super) problem: Option<String>,
}

/// The knee before the thigh is known: the line joint nearest half the hips' height,
/// the first down the line of those as near within `eps` (joints at one height, a
/// hip joint and the thigh out to its side, differ by rounding alone, by how each
/// joint's frame is turned).
pub(super) fn rough_knee(rig: &RestJoints, line: &[usize], pelvis: &Pelvis) -> Option<usize> {
    let half = pelvis.floor + 0.5 * pelvis.span;
    let off = |j: usize| (rig.pos[j].y - half).abs();
    let nearest = line.iter().map(|&j| off(j)).min_by(f32::total_cmp)?;
    line.iter().copied().find(|&j| off(j) <= nearest + rig.eps)
}

/// Share of the hips' height out of the midline that is out to the side for a
/// thigh, whatever the knees do: hip joints sit about a tenth of the hips' height
/// out, hip helpers at the centre within a few hundredths.
const THIGH_OUT: f32 = 0.05;

/// Heuristic: the thigh is the first joint of the leg's line out to the side (at
/// least 35% of the knee's distance from the midline, or `THIGH_OUT` of the hips'
/// height: hip helpers start at the centre) whose bone points down, and is no less
/// than a quarter of the next or goes on along it (a buttock helper just above the
/// thigh is short and bent off the thigh's line); the knee is the joint named as one
/// in the middle half of the thigh's height above the floor, or outside it where the
/// leg goes down to it and on down to an ankle, else the joint nearest half that
/// height; the ankle the first joint below half the
/// knee's height, or a joint beside it reaching farther ahead (`foot_beside`); the
/// toes the ankle's child reaching farthest ahead (`toes`). Names steer between
/// candidates that the geometry allows.
pub(super) fn solve_leg(
    rig: &RestJoints,
    line: Vec<usize>,
    midline: &Midline,
    pelvis: &Pelvis,
) -> Leg {
    let reps = rig.collapse(&line);
    let detached = detached_foot(rig, &line, pelvis.hips, pelvis.span);
    let mut leg = Leg {
        line,
        ..Leg::default()
    };
    let Some(&root) = reps.first() else {
        return leg;
    };
    let floor = detached.map_or(rig.low[root], |f| rig.low[root].min(rig.pos[f].y));
    let knee_out = midline.rough_knee_lateral.max(rig.eps);
    // A buttock or hip helper a few centimetres above the thigh is no thigh: its
    // bone is under a quarter of the next one and not along it (a thigh split in
    // two segments goes on straight).
    let vector = |k: usize| match (reps.get(k), reps.get(k + 1)) {
        (Some(&a), Some(&b)) => Some(rig.pos[b] - rig.pos[a]),
        _ => None,
    };
    let long = |k: usize| match (vector(k), vector(k + 1)) {
        (Some(this), Some(next)) => {
            this.length() >= 0.25 * next.length()
                || this.normalize_or_zero().dot(next.normalize_or_zero()) >= 0.9
        }
        _ => true,
    };
    // Out to the side: 35% of the knee's distance from the midline, or
    // `THIGH_OUT` of the hips' height when legs splayed in the rest put the knees
    // far out (an ASF skeleton's femurs point 20 degrees out from hip joints close
    // to the midline).
    let out = (0.35 * knee_out).min(THIGH_OUT * pelvis.span);
    let thigh_like = |k: usize| {
        midline.lateral_of(rig.pos[reps[k]]).abs() >= out
            && rig.bone_dir(&reps, k).is_some_and(|d| d.y < -0.5)
            && long(k)
    };
    let named = (0..reps.len()).find(|&k| {
        thigh_like(k)
            && !rig.names[reps[k]].helper
            && rig.names[reps[k]].role == Some(Role::UpperLeg)
    });
    let Some(u) = named.or_else(|| (0..reps.len()).find(|&k| thigh_like(k))) else {
        leg.problem = Some(format!(
            "leg `{}`: no joint out to the side with a bone going down",
            rig.name(root)
        ));
        return leg;
    };
    leg.upper = Some(reps[u]);
    let length = rig.pos[reps[u]].y - floor;
    if length <= rig.eps {
        leg.problem = Some(format!("leg `{}` does not go down", rig.name(reps[u])));
        return leg;
    }
    let rel = |k: usize| (rig.pos[reps[k]].y - floor) / length;
    // A plain `Leg` after a thigh named as one (Mixamo's and CMU's `UpLeg`, `Leg`)
    // is the shin: with cartoon feet reaching far down and ahead of a high ankle,
    // the ankle, not the knee, may be the joint nearest half the leg's height.
    let thigh_named = rig.names[reps[u]].role == Some(Role::UpperLeg);
    let knee_named = |k: usize| {
        let role = rig.names[reps[k]].role;
        (role == Some(Role::LowerLeg) || (thigh_named && role == Some(Role::Leg)))
            && !rig.names[reps[k]].helper
    };
    // The ankle under a knee `k`: a joint named as the foot below three quarters of
    // the knee's height, else the first joint below half of it.
    let ankle_under = |k: usize| {
        let knee_rel = rel(k);
        (k + 1..reps.len())
            .find(|&i| {
                rig.names[reps[i]].role == Some(Role::Foot)
                    && !rig.names[reps[i]].helper
                    && rel(i) < 0.75 * knee_rel
            })
            .or_else(|| (k + 1..reps.len()).find(|&i| rel(i) < 0.5 * knee_rel))
    };
    // A named knee outside the middle half of the leg's height (a cartoon figure's
    // short thigh over a long shin and high heels, a squat figure's knee low over
    // its foot) is still the knee where the geometry has a knee there: the leg goes
    // down from the thigh to it, through thigh segments and helpers alone, and on
    // down from it to an ankle (`ankle_under`), every joint between below it. A
    // joint named as the shin under a plain joint (an ankle helper under an unnamed
    // knee) or where the leg turns back up (a kneeling frame's ankle over its knee, a
    // digitigrade hock) is no knee, and a shin twist is named as a helper.
    let knee_in_leg = |k: usize| {
        let thigh_part = |i: usize| {
            (rig.names[reps[i]].helper || rig.names[reps[i]].role == Some(Role::UpperLeg))
                && rel(i) > rel(k)
        };
        (u + 1..k).all(thigh_part)
            && ankle_under(k).is_some_and(|a| (k + 1..a).all(|i| rel(i) < rel(k)))
    };
    let knee = (u + 1..reps.len())
        .find(|&k| knee_named(k) && (0.25..=0.75).contains(&rel(k)))
        .or_else(|| (u + 1..reps.len()).find(|&k| knee_named(k) && knee_in_leg(k)))
        .or_else(|| {
            (u + 1..reps.len())
                .filter(|&k| (0.2..=0.85).contains(&rel(k)))
                .min_by(|&a, &b| {
                    (rel(a) - 0.5)
                        .abs()
                        .partial_cmp(&(rel(b) - 0.5).abs())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
        });
    let Some(k) = knee else {
        // A thigh and a shin, nothing below the knee (a metarig figure's leg): the
        // line's last joint is the knee, and the foot is what is missing.
        leg.problem = Some(match reps[u + 1..] {
            [knee] if rig.kids[knee].is_empty() => format!(
                "leg `{}` ends at the knee (`{}`, with nothing below): no foot",
                rig.name(reps[u]),
                rig.name(knee)
            ),
            _ => format!("leg `{}`: no knee joint halfway down", rig.name(reps[u])),
        });
        return leg;
    };
    leg.lower = Some(reps[k]);
    let knee_rel = rel(k);
    let ankle = ankle_under(k)
        // An end nub under the knee is where the shin ends, not a foot, when the
        // foot hangs from the root under it.
        .filter(|&i| detached.is_none() || !rig.names[reps[i]].nub)
        // An end nub is where the bone before it ends, never a joint of the leg: with
        // a joint between the knee and it (a digitigrade hock, high over the floor),
        // that joint is the ankle and the nub the foot's tip.
        .map(|i| {
            let nub = rig.names[reps[i]].nub && rig.kids[reps[i]].is_empty();
            if nub && i > k + 1 { i - 1 } else { i }
        });
    let Some(a) = ankle else {
        let ik = detached.map_or_else(String::new, |f| {
            format!(
                "; the foot `{}` hangs from `{}`, outside the leg (a foot driven by IK), so no \
                 VRM map has the required feet",
                rig.name(f),
                rig.skeleton.parent(f).map_or("", |p| rig.name(p))
            )
        });
        leg.problem = Some(format!(
            "leg `{}`: no foot joint below the knee `{}` (the line ends at `{}`){ik}",
            rig.name(reps[u]),
            rig.name(reps[k]),
            rig.name(reps[reps.len() - 1])
        ));
        // No strict VRM map, but one driving that foot from the leg
        // (`NotHumanoid::limbs_outside`, `BoneMap::detached_bones`).
        if let Some(f) = detached {
            leg.foot = Some(f);
            leg.toes = toes(rig, f);
            leg.detached = true;
        }
        return leg;
    };
    let foot = foot_beside(rig, reps[a], |j| {
        rig.pos[j].y < floor + 0.5 * knee_rel * length
    });
    leg.foot = Some(foot);
    leg.toes = toes(rig, foot);
    leg
}

/// Heuristic: of the joints leaving the shin together, below half the knee's height
/// (`low_enough`), the foot is the one whose subtree reaches farthest from the
/// ankle along the ground; the line down the leg follows the lowest, and a heel
/// control of a Blender rig reaches back and below the sole. The line's joint stays
/// when its name says foot; helpers and controls are never taken.
fn foot_beside(rig: &RestJoints, ankle: usize, low_enough: impl Fn(usize) -> bool) -> usize {
    let named = |j: usize| rig.names[j].role == Some(Role::Foot) && !rig.names[j].helper;
    let Some(shin) = rig.skeleton.parent(ankle).filter(|_| !named(ankle)) else {
        return ankle;
    };
    let reach = |root: usize| {
        rig.subtree(root)
            .into_iter()
            .flat_map(|j| std::iter::once(rig.pos[j]).chain(rig.end[j]))
            .map(|p| horizontal(p - rig.pos[ankle]).length())
            .fold(0.0f32, f32::max)
    };
    rig.plain_kids(shin)
        .into_iter()
        .filter(|&j| low_enough(j))
        .map(|j| (named(j), reach(j), j == ankle, j))
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)))
        .map_or(ankle, |(.., j)| j)
}

/// Heuristic: game rigs (Quaternius) end the leg at the knee and hang the foot from
/// the root, where IK moves it. Such a foot is a joint outside the body hanging from
/// a joint above the hips (the root or an armature node), directly or through a foot
/// control, under the end of the leg's line: within a third of `span` (the hips'
/// height over the leg's end) or of its own drop below that end (a long shin under
/// a short thigh) of it horizontally, and no higher than the line's lowest point
/// plus a tenth of `span` (an IK pole target sits in front of the knee, not under
/// it). The first plain joint down such a chain (not its toes), the lowest first,
/// then the nearest; controls and helpers last. An end nub closing the line (FBX2glTF's
/// `LowerLeg.L_end`) is where the shin ends: its own tail, which exporters write at
/// any length, is no part of the leg.
pub(super) fn detached_foot(
    rig: &RestJoints,
    line: &[usize],
    hips: usize,
    span: f32,
) -> Option<usize> {
    let &last = line.last()?;
    if !rig.kids[last].is_empty() {
        return None;
    }
    let nub = rig.names[last].nub;
    let (below, lowest) = match nub {
        true => (rig.pos[last], rig.pos[last].y),
        false => (rig.end[last].unwrap_or(rig.pos[last]), rig.low[last]),
    };
    rig.outside_body(hips)
        .into_iter()
        .filter(|&j| {
            let drop = below.y - rig.pos[j].y;
            horizontal(rig.pos[j] - below).length() <= span.max(drop) / 3.0
                && rig.pos[j].y <= lowest + 0.1 * span
        })
        .min_by(|&a, &b| {
            // Plain joints above it outside the body: the foot's toes have one.
            let plain = |j: usize| !rig.avoid(j) && !rig.names[j].helper;
            let under_plain = |j: usize| {
                std::iter::successors(rig.skeleton.parent(j), |&p| rig.skeleton.parent(p))
                    .take_while(|&p| !rig.skeleton.is_ancestor(p, hips))
                    .filter(|&p| plain(p))
                    .count()
            };
            let key = |j: usize| (!plain(j), under_plain(j));
            // Feet level with each other (both legs' feet under a wide tolerance):
            // the one under this leg's end.
            let lower = match rig.pos[a].y - rig.pos[b].y {
                d if d.abs() <= rig.eps => std::cmp::Ordering::Equal,
                d => d.total_cmp(&0.0),
            };
            let off = |j: usize| horizontal(rig.pos[j] - below).length();
            key(a)
                .cmp(&key(b))
                .then(lower)
                .then(off(a).total_cmp(&off(b)))
        })
}

/// Heuristic: the toes are the ankle's child (through joints in the same place)
/// whose subtree reaches farthest from the ankle along the ground: a heel bone
/// (Rigify's `heel.02.L`) or a foot-roll helper reaches down, not far ahead, even
/// when it is the lowest. End nubs, helpers, controls and a heel joint carrying the
/// forefoot (`is_heel`) are never the toes, and a fan of three or more toe chains
/// (MakeHuman's metatarsals) has no one toes bone. A sole joint under the ankle with
/// one joint ahead of it is passed over for that joint (`past_sole`).
fn toes(rig: &RestJoints, ankle: usize) -> Option<usize> {
    let ahead = |root: usize| horizontal(forefoot(rig, ankle, root) - rig.pos[ankle]).length();
    let kids = rig.body_kids(ankle);
    if kids.len() >= 3 {
        return None;
    }
    kids.into_iter()
        .map(|c| {
            // Down through joints in the same place (pivots, wrappers), but not onto
            // a helper leaf there: an end nub a file placed nowhere rests on the toes
            // (`formats::gltf::skin`).
            let mut j = c;
            while let [only] = rig.kids[j].as_slice() {
                let nub = rig.names[*only].helper && rig.kids[*only].is_empty();
                if !rig.coincident(*only, j) || nub {
                    break;
                }
                j = *only;
            }
            j
        })
        .filter(|&t| {
            !rig.names[t].helper
                && rig.names[t].role != Some(Role::HeadTop)
                && !is_heel(rig, ankle, t)
        })
        .max_by(|&a, &b| ahead(a).total_cmp(&ahead(b)))
        .map(|t| past_sole(rig, ankle, t))
}

/// The point of `root`'s subtree (joints and bone ends) reaching farthest from the
/// ankle along the ground: the tip of the forefoot, whichever joint carries it.
fn forefoot(rig: &RestJoints, ankle: usize, root: usize) -> Vec3 {
    let along_ground = |p: &Vec3| horizontal(*p - rig.pos[ankle]).length();
    rig.subtree(root)
        .into_iter()
        .flat_map(|j| std::iter::once(rig.pos[j]).chain(rig.end[j]))
        .max_by(|a, b| along_ground(a).total_cmp(&along_ground(b)))
        .unwrap_or(rig.pos[root])
}

/// Share of the foot's length (the ankle to the forefoot's tip) past which a joint
/// behind the ankle, against the forefoot it carries, is the heel and not the toes.
const HEEL_SHARE: f32 = 0.15;

/// Heuristic: a joint lying behind the ankle along the ground, against the
/// direction of the forefoot's tip that its subtree reaches, by more than
/// `HEEL_SHARE` of the foot's length (ankle to tip) is a heel carrying the
/// forefoot's end (Poser's `LeftFootHeel`, below and behind the ankle, its End Site
/// far ahead), never the toes. It holds whatever way the rest turns the foot: the
/// ankle stands over the rear of the foot, so the heel's back lies a fifth to a
/// third of the ankle-to-tip length behind it, while the toes lie between the ankle
/// and the tip, and fall behind the ankle only when a rest taken from a clip's frame
/// points the foot straight down with the toes bent forward, by under a tenth.
fn is_heel(rig: &RestJoints, ankle: usize, joint: usize) -> bool {
    let tip = forefoot(rig, ankle, joint) - rig.pos[ankle];
    let forward = horizontal(tip).normalize_or_zero();
    let behind = -horizontal(rig.pos[joint] - rig.pos[ankle]).dot(forward);
    behind > HEEL_SHARE * tip.length()
}

/// Share of its one child's distance ahead of the ankle under which a joint stands
/// under the ankle rather than ahead of it.
const SOLE_SHARE: f32 = 0.25;

/// Heuristic: a joint standing under the ankle (less than `SOLE_SHARE` of its child's
/// distance ahead of it, along the ground) whose one plain child is ahead is a sole
/// joint, and the toes begin at that child. Vicon and MotionBuilder exports put
/// `LeftForeFoot` a few centimetres straight below the ankle, never rotated, and
/// `LeftToeBase` under it at the ball of the foot carries the toes' flex. A sole
/// joint with nothing under it but an end site is the only joint that can carry the
/// forefoot and stays the toes.
fn past_sole(rig: &RestJoints, ankle: usize, joint: usize) -> usize {
    let ahead = |j: usize| horizontal(rig.pos[j] - rig.pos[ankle]).length();
    let mut joint = joint;
    while let [next] = rig.plain_kids(joint).as_slice() {
        let next = *next;
        if rig.names[next].role == Some(Role::HeadTop)
            || ahead(joint) >= SOLE_SHARE * ahead(next)
            || ahead(next) <= rig.eps
        {
            break;
        }
        joint = next;
    }
    joint
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::recognize::test_support::skeleton;

    #[test]
    fn joints_at_one_height_give_the_first_down_the_line_as_the_rough_knee() {
        // A blocky figure (Arena-Shooter's player): each leg's hip joint `L` at the
        // hips, its thigh out to the side at the same height, both as near half the
        // hips' height as the foot. Rounding puts one or the other a tenth of a
        // micrometre nearer as the joints' frames are turned: the knee is the same
        // either way.
        for nearer in [1e-7f32, -1e-7] {
            let s = skeleton(&[
                ("hips", None, [0.0, 1.0, 0.0]),
                ("L", Some("hips"), [0.0, 1.0, 0.0]),
                ("upper", Some("L"), [0.3, 1.0 + nearer, 0.0]),
                ("leg", Some("upper"), [0.3, 0.0, 0.0]),
            ]);
            let rig = RestJoints::new(&s);
            let pelvis = Pelvis {
                hips: 0,
                legs: [1, 1],
                leg_branch: None,
                spine_root: 0,
                span: 1.0,
                floor: 0.0,
            };
            let knee = rough_knee(&rig, &[1, 2, 3], &pelvis).map(|j| rig.name(j));
            assert_eq!(knee, Some("L"), "{nearer}");
        }
    }
}
