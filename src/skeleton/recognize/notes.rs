//! The notes on the whole rig that come with a recognized map: where it faces and how
//! that was told, a stance with one foot ahead, the transform nodes skipped above the
//! hips, and names whose sides are swapped.

use glam::Vec3;

use crate::humanoid::Side;

use super::body::Body;
use super::facing::Midline;
use super::legs::Leg;
use super::rest_joints::RestJoints;

/// `faces +Z (from the toes)`: the front direction and how it was told.
pub(super) fn faces(front: Vec3, how: &str) -> String {
    format!("faces {} ({})", direction_name(front), how)
}

/// The nodes above the hips, root first, when there are any: transform nodes that
/// are not part of the humanoid.
pub(super) fn ignored_above(rig: &RestJoints, hips: usize) -> Option<String> {
    let mut above = Vec::new();
    let mut up = rig.skeleton.parent(hips);
    while let Some(p) = up {
        above.push(rig.name(p));
        up = rig.skeleton.parent(p);
    }
    if above.is_empty() {
        return None;
    }
    above.reverse();
    Some(format!(
        "{} node(s) above the hips ignored (`{}`)",
        above.len(),
        above.join("`, `")
    ))
}

/// `stands with one foot ahead: …`: the lateral axis taken from the thighs alone
/// (`stance_midline`), and how far off the legs' axis it is.
pub(super) fn stance(
    rig: &RestJoints,
    legs: &[Leg; 2],
    legs_axis: &Midline,
    thighs: &Midline,
) -> String {
    let name = |j: Option<usize>| j.map_or("?", |j| rig.name(j));
    let off = thighs
        .lateral
        .dot(legs_axis.lateral)
        .clamp(-1.0, 1.0)
        .acos();
    format!(
        "stands with one foot ahead of the other: the sides are told across the thighs `{}` \
         and `{}`, {:.0}° off the line of the knees and feet",
        name(legs[0].upper),
        name(legs[1].upper),
        off.to_degrees()
    )
}

/// `the legs cross below the thighs: …`: the lateral axis taken from the thighs
/// and the pairs on their sides (`legs_and_midline`).
pub(super) fn legs_crossed(rig: &RestJoints, legs: &[Leg; 2]) -> String {
    let name = |j: Option<usize>| j.map_or("?", |j| rig.name(j));
    format!(
        "the legs cross below the thighs: the sides are told across the thighs `{}` and `{}`",
        name(legs[0].upper),
        name(legs[1].upper)
    )
}

/// Names on the limbs all on the other side: said once, when more than half of the
/// sided bones' names claim the other side.
pub(super) fn mirrored_names(rig: &RestJoints, body: &Body) -> Option<String> {
    let mirrored = body
        .bones
        .iter()
        .filter(|(b, f)| {
            b.side() != Side::Centre && rig.names[f.joint].side.is_some_and(|s| s != b.side())
        })
        .count();
    let sided = body
        .bones
        .keys()
        .filter(|b| b.side() != Side::Centre)
        .count();
    (mirrored * 2 > sided)
        .then(|| "left and right are swapped in the names; sides follow the geometry".to_owned())
}

/// `+X`, `-X`, `+Z` or `-Z` for a horizontal direction along an axis, else its
/// `(x, z)`.
fn direction_name(v: Vec3) -> String {
    let axes = [
        (Vec3::X, "+X"),
        (Vec3::NEG_X, "-X"),
        (Vec3::Z, "+Z"),
        (Vec3::NEG_Z, "-Z"),
    ];
    let (axis, name) = axes
        .iter()
        .copied()
        .max_by(|a, b| {
            a.0.dot(v)
                .partial_cmp(&b.0.dot(v))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or((Vec3::Z, "+Z"));
    if axis.dot(v) > 0.996 {
        name.to_owned()
    } else {
        format!("({:+.2}, {:+.2})", v.x, v.z)
    }
}
