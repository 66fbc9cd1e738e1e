//! Test helpers shared by the recognizer's unit tests: skeletons from tables.

use glam::Vec3;

use super::{RecognizedMap, recognize};
use crate::skeleton::{Joint, Skeleton, Transform};

/// A table of `(name, parent, model-space position)` built with owned names, as
/// `skeleton` takes it.
pub(super) fn borrowed(
    table: &[(String, Option<String>, [f32; 3])],
) -> Vec<(&str, Option<&str>, [f32; 3])> {
    table
        .iter()
        .map(|(n, p, at)| (n.as_str(), p.as_deref(), *at))
        .collect()
}

/// A skeleton from `(name, parent, model-space position)` in any order (rows are
/// put parents first, otherwise in table order).
pub(super) fn skeleton(table: &[(&str, Option<&str>, [f32; 3])]) -> Skeleton {
    let mut ordered: Vec<(&str, Option<&str>, [f32; 3])> = Vec::with_capacity(table.len());
    while ordered.len() < table.len() {
        let before = ordered.len();
        for row in table {
            let placed = |n: &str| ordered.iter().any(|(o, ..)| *o == n);
            if !placed(row.0) && row.1.is_none_or(placed) {
                ordered.push(*row);
            }
        }
        assert!(
            ordered.len() > before,
            "a parent is missing or the table has a cycle"
        );
    }
    let table = ordered.as_slice();
    let at = |name: &str| table.iter().position(|(n, ..)| *n == name);
    let joints = table
        .iter()
        .map(|&(name, parent, p)| {
            let parent = parent.and_then(at);
            let from = parent.map_or(Vec3::ZERO, |i| Vec3::from(table[i].2));
            Joint {
                name: name.to_owned(),
                parent,
                rest: Transform::from_translation(Vec3::from(p) - from),
                end: None,
            }
        })
        .collect();
    Skeleton::new(joints).unwrap()
}

/// A skeleton of a `body` (`(name, parent, model-space position)`, `""` for no
/// parent) with `limb` (the left side's, at +X) mirrored to both sides: each limb
/// joint is named `{side}{name}` for `sides` `[left, right]`, its parent
/// `{side}{parent}` unless the parent is a body joint.
pub(super) fn with_limbs(
    body: &[(&str, &str, [f32; 3])],
    sides: [&str; 2],
    limb: &[(&str, &str, [f32; 3])],
) -> Skeleton {
    with_limbs_named(body, |side, name| format!("{}{name}", sides[side]), limb)
}

/// `with_limbs` with each limb joint named `named(side, name)`, side 0 the left
/// (+X) and 1 the right (`.L` and `.R` suffixes, say).
pub(super) fn with_limbs_named(
    body: &[(&str, &str, [f32; 3])],
    named: impl Fn(usize, &str) -> String,
    limb: &[(&str, &str, [f32; 3])],
) -> Skeleton {
    let mut rows: Vec<(String, String, [f32; 3])> = body
        .iter()
        .map(|(n, p, at)| (n.to_string(), p.to_string(), *at))
        .collect();
    for (side, x) in [1.0f32, -1.0].into_iter().enumerate() {
        for &(name, parent, [px, py, pz]) in limb {
            let parent = match body.iter().any(|(n, ..)| *n == parent) {
                true => parent.to_owned(),
                false => named(side, parent),
            };
            rows.push((named(side, name), parent, [x * px, py, pz]));
        }
    }
    let table: Vec<(&str, Option<&str>, [f32; 3])> = rows
        .iter()
        .map(|(n, p, at)| (n.as_str(), (!p.is_empty()).then_some(p.as_str()), *at))
        .collect();
    skeleton(&table)
}

/// The map recognized on `with_limbs(body, sides, limb)`. Panics when no humanoid
/// is recognized.
pub(super) fn recognized_with_limbs(
    body: &[(&str, &str, [f32; 3])],
    sides: [&str; 2],
    limb: &[(&str, &str, [f32; 3])],
) -> RecognizedMap {
    recognize(&with_limbs(body, sides, limb))
        .into_humanoid()
        .expect("a humanoid")
}
