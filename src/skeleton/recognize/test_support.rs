//! Test helpers shared by the recognizer's unit tests: skeletons from tables.

use glam::Vec3;

use crate::skeleton::{Joint, Skeleton, Transform};

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
