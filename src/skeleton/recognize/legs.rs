//! Stage 3: the legs. Along each leg's line down from the pelvis, the thigh is the
//! first joint out to the side whose bone points down, the knee the joint halfway
//! down, the ankle the first joint below half the knee's height and the toes the
//! joint after it (`solve_leg`).

use super::facing::Midline;
use super::names::Role;
use super::pelvis::Pelvis;
use super::rest_joints::RestJoints;

/// One leg's joints along its line.
#[derive(Default, Clone)]
pub(super) struct Leg {
    pub(super) line: Vec<usize>,
    pub(super) upper: Option<usize>,
    pub(super) lower: Option<usize>,
    pub(super) foot: Option<usize>,
    pub(super) toes: Option<usize>,
    pub(super) problem: Option<String>,
}

/// The knee before the thigh is known: the line joint nearest half the hips' height.
pub(super) fn rough_knee(rig: &RestJoints, line: &[usize], pelvis: &Pelvis) -> Option<usize> {
    let half = pelvis.floor + 0.5 * pelvis.span;
    line.iter().copied().min_by(|&a, &b| {
        (rig.pos[a].y - half)
            .abs()
            .partial_cmp(&(rig.pos[b].y - half).abs())
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// Heuristic: the thigh is the first joint of the leg's line out to the side (at
/// least 35% of the knee's distance from the midline: hip helpers start at the
/// centre) whose bone points down; the knee is the joint nearest half the thigh's
/// height above the floor; the ankle the first joint below half the knee's height;
/// the toes the next joint, unless it is an end nub. Names steer between candidates
/// that the geometry allows.
pub(super) fn solve_leg(rig: &RestJoints, line: Vec<usize>, midline: &Midline) -> Leg {
    let reps = rig.collapse(&line);
    let mut leg = Leg {
        line,
        ..Leg::default()
    };
    let Some(&root) = reps.first() else {
        return leg;
    };
    let floor = rig.low[root];
    let knee_out = midline.rough_knee_lateral.max(rig.eps);
    let thigh_like = |k: usize| {
        midline.lateral_of(rig.pos[reps[k]]).abs() >= 0.35 * knee_out
            && rig.bone_dir(&reps, k).is_some_and(|d| d.y < -0.5)
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
    let knee = (u + 1..reps.len())
        .find(|&k| {
            rig.names[reps[k]].role == Some(Role::LowerLeg)
                && !rig.names[reps[k]].helper
                && (0.25..=0.75).contains(&rel(k))
        })
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
        leg.problem = Some(format!(
            "leg `{}`: no knee joint halfway down",
            rig.name(reps[u])
        ));
        return leg;
    };
    leg.lower = Some(reps[k]);
    let knee_rel = rel(k);
    let ankle = (k + 1..reps.len())
        .find(|&i| {
            rig.names[reps[i]].role == Some(Role::Foot)
                && !rig.names[reps[i]].helper
                && rel(i) < 0.75 * knee_rel
        })
        .or_else(|| (k + 1..reps.len()).find(|&i| rel(i) < 0.5 * knee_rel));
    let Some(a) = ankle else {
        leg.problem = Some(format!(
            "leg `{}`: no foot joint below the knee `{}` (the line ends at `{}`)",
            rig.name(reps[u]),
            rig.name(reps[k]),
            rig.name(reps[reps.len() - 1])
        ));
        return leg;
    };
    leg.foot = Some(reps[a]);
    leg.toes = reps
        .get(a + 1)
        .copied()
        .filter(|&t| !rig.names[t].helper && rig.names[t].role != Some(Role::HeadTop));
    leg
}
