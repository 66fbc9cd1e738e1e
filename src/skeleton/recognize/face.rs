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
