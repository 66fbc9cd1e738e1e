//! Test helpers shared by the recognizer's unit tests: skeletons from tables.

use glam::Vec3;

use crate::skeleton::{Joint, Skeleton, Transform};

/// A skeleton from `(name, parent, model-space position)`, parents first.
pub(super) fn skeleton(table: &[(&str, Option<&str>, [f32; 3])]) -> Skeleton {
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
