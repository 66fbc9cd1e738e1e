//! Source and target skeletons: joints, parents, rest transforms, and what is built
//! on them (bone maps, rest correction, recognition of the humanoid bones).
//!
//! A `Skeleton` is a *built* type: made once by a loader in `formats`, checked when
//! built, then shared read-only. Joints are in topological order (a parent before
//! its children), positions are in metres and axes are glTF's (+Y up, facing +Z
//! once the rest correction's facing turn is applied); loaders convert units and up
//! axes before building.

pub mod bone_map;
pub mod builtin;
pub mod catalog;
pub mod floor_ends;
pub(crate) mod leaf_nub;
pub mod recognize;
pub mod rest;
pub(crate) mod shared_end;

pub use rest::{BoneCorrection, HeldBone, RestCorrection, RestPose, TPoseSource, place_held};

use glam::{Affine3A, Quat, Vec3};

pub use bone_map::{BoneMap, DetachedBone, MapError, NamedBoneMap};
pub use recognize::{Recognition, RecognizedMap, recognize};

/// A rest transform relative to the parent joint (translation in metres).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A rotation-free, scale-free offset.
    #[must_use]
    pub fn from_translation(translation: Vec3) -> Self {
        Self {
            translation,
            ..Self::IDENTITY
        }
    }

    /// The same transform as an affine matrix.
    #[must_use]
    pub fn to_affine(self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Whether every component is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// One joint of a skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// The name in the source file (unique within the skeleton).
    pub name: String,
    /// Index of the parent joint, always smaller than this joint's index.
    pub parent: Option<usize>,
    /// Rest transform relative to the parent (or to the skeleton origin for a root).
    pub rest: Transform,
    /// Where the bone ends, in this joint's frame (metres), when the file says so
    /// (a BVH `End Site`, a leaf's tail). Used to tell a leaf bone's direction.
    pub end: Option<Vec3>,
}

/// Why a list of joints is not a skeleton. Loaders add the file name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvalidSkeleton {
    #[error("the skeleton has no joints")]
    Empty,
    #[error("joint `{joint}` names joint {parent} as parent, which does not come before it")]
    ParentOrder { joint: String, parent: usize },
    #[error("joint name `{0}` is used twice")]
    DuplicateName(String),
    #[error("joint `{0}` has a rest transform that is not finite (NaN or infinity)")]
    NotFinite(String),
    #[error("joint `{0}` has a zero scale")]
    BadScale(String),
    #[error("the skeleton has {0} joints, more than the 4096 supported")]
    TooMany(usize),
}

/// Largest skeleton accepted; keeps per-frame buffers bounded.
pub const MAX_JOINTS: usize = 4096;

/// Joints in topological order with their rest transforms.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    joints: Vec<Joint>,
}

impl Skeleton {
    /// Checks the joints and builds a skeleton. Rest rotations are renormalized
    /// (files store them rounded); anything non-finite or a zero scale (a rest that
    /// cannot be inverted) is rejected; a negative scale (a mirror) is kept.
    pub fn new(mut joints: Vec<Joint>) -> Result<Self, InvalidSkeleton> {
        if joints.is_empty() {
            return Err(InvalidSkeleton::Empty);
        }
        if joints.len() > MAX_JOINTS {
            return Err(InvalidSkeleton::TooMany(joints.len()));
        }
        let mut names = std::collections::HashSet::new();
        for (i, joint) in joints.iter_mut().enumerate() {
            if let Some(parent) = joint.parent
                && parent >= i
            {
                return Err(InvalidSkeleton::ParentOrder {
                    joint: joint.name.clone(),
                    parent,
                });
            }
            if !names.insert(joint.name.clone()) {
                return Err(InvalidSkeleton::DuplicateName(joint.name.clone()));
            }
            let end_finite = joint.end.is_none_or(|e| e.is_finite());
            if !joint.rest.is_finite() || !end_finite || joint.rest.rotation.length() < 1e-6 {
                return Err(InvalidSkeleton::NotFinite(joint.name.clone()));
            }
            if joint.rest.scale.cmpeq(Vec3::ZERO).any() {
                return Err(InvalidSkeleton::BadScale(joint.name.clone()));
            }
            joint.rest.rotation = joint.rest.rotation.normalize();
        }
        Ok(Self { joints })
    }

    /// All joints, parents first.
    #[must_use]
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    /// How many joints there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Always false: a skeleton has at least one joint.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The index of the joint called `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// The joint's parent index.
    #[must_use]
    pub fn parent(&self, joint: usize) -> Option<usize> {
        self.joints[joint].parent
    }

    /// Direct children of `joint`, in index order.
    pub fn children(&self, joint: usize) -> impl Iterator<Item = usize> + '_ {
        self.joints
            .iter()
            .enumerate()
            .filter(move |(_, j)| j.parent == Some(joint))
            .map(|(i, _)| i)
    }

    /// Whether `ancestor` is a strict ancestor of `joint`.
    #[must_use]
    pub fn is_ancestor(&self, ancestor: usize, joint: usize) -> bool {
        let mut j = self.joints[joint].parent;
        while let Some(p) = j {
            if p == ancestor {
                return true;
            }
            j = self.joints[p].parent;
        }
        false
    }

    /// Rest local rotations, indexed by joint (the pose a skeleton shows unanimated).
    #[must_use]
    pub fn rest_rotations(&self) -> Vec<Quat> {
        self.joints.iter().map(|j| j.rest.rotation).collect()
    }

    /// Rest local translations, indexed by joint.
    #[must_use]
    pub fn rest_translations(&self) -> Vec<Vec3> {
        self.joints.iter().map(|j| j.rest.translation).collect()
    }

    /// Model-space transforms of every joint for the given local rotations and
    /// translations (scales stay at rest). Used by builders and tests, not per frame.
    #[must_use]
    pub fn world_transforms(&self, rotations: &[Quat], translations: &[Vec3]) -> Vec<Affine3A> {
        let mut world: Vec<Affine3A> = Vec::with_capacity(self.joints.len());
        for (i, joint) in self.joints.iter().enumerate() {
            let local = Affine3A::from_scale_rotation_translation(
                joint.rest.scale,
                rotations[i],
                translations[i],
            );
            let w = match joint.parent {
                Some(p) => world[p] * local,
                None => local,
            };
            world.push(w);
        }
        world
    }

    /// Model-space transforms of every joint in the rest pose.
    #[must_use]
    pub fn rest_world(&self) -> Vec<Affine3A> {
        self.world_transforms(&self.rest_rotations(), &self.rest_translations())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joint(name: &str, parent: Option<usize>, y: f32) -> Joint {
        Joint {
            name: name.into(),
            parent,
            rest: Transform::from_translation(Vec3::new(0.0, y, 0.0)),
            end: None,
        }
    }

    #[test]
    fn new_rejects_parent_after_child() {
        let err = Skeleton::new(vec![joint("a", Some(1), 0.0), joint("b", None, 0.0)]);
        assert!(matches!(err, Err(InvalidSkeleton::ParentOrder { .. })));
    }

    #[test]
    fn new_rejects_duplicates_nan_and_empty() {
        assert_eq!(Skeleton::new(vec![]), Err(InvalidSkeleton::Empty));
        let dup = Skeleton::new(vec![joint("a", None, 0.0), joint("a", Some(0), 1.0)]);
        assert!(matches!(dup, Err(InvalidSkeleton::DuplicateName(_))));
        let nan = Skeleton::new(vec![joint("a", None, f32::NAN)]);
        assert!(matches!(nan, Err(InvalidSkeleton::NotFinite(_))));
    }

    #[test]
    fn rest_world_accumulates_offsets() {
        let s = Skeleton::new(vec![
            joint("a", None, 1.0),
            joint("b", Some(0), 2.0),
            joint("c", Some(1), 3.0),
        ])
        .unwrap();
        let world = s.rest_world();
        assert!(
            world[2]
                .translation
                .abs_diff_eq(Vec3::new(0.0, 6.0, 0.0).into(), 1e-6)
        );
        assert!(s.is_ancestor(0, 2));
        assert!(!s.is_ancestor(2, 0));
        assert_eq!(s.children(0).collect::<Vec<_>>(), vec![1]);
    }
}
