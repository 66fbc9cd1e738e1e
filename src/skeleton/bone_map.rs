//! Bone maps: which source joint drives each humanoid bone.
//!
//! A `NamedBoneMap` is what a file or the user says (humanoid bone -> joint name);
//! `BoneMap::resolve` checks it against a `Skeleton` and turns names into joint
//! indices. Checks: every name exists, no joint is used twice, the 15 required bones
//! are there, and each mapped bone's nearest mapped humanoid parent drives a joint
//! that is a strict ancestor of its own (so no humanoid bone sits between a mapped
//! parent and child in the wrong order). The exceptions are limbs hung outside the
//! hips' subtree, as game rigs (Quaternius) hang them from the root: a foot or a
//! hand that IK moves (its lower leg or forearm under the hips), or an upper leg
//! beside the hips. Such a *detached* bone is driven from the bone it belongs to: its
//! rotation relative to that bone's joint, its place where the rest has it in that
//! joint's frame, at the lower leg's or forearm's end or at the hips
//! (`BoneMap::detached_bones`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::humanoid::HumanBone;
use crate::humanoid::bone::{ALL, BONE_COUNT, REQUIRED};

use super::Skeleton;
use super::rest::TPoseSource;

/// Humanoid bone -> joint name, as written in a file, and what the file says of
/// its rest pose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedBoneMap {
    pub bones: BTreeMap<HumanBone, String>,
    /// Whether the file declares its rest the T-pose (a VRM's own humanoid map),
    /// else it is measured (maps written by hand, the catalog's, recognized ones).
    pub t_pose: TPoseSource,
}

/// Why a bone map does not fit a skeleton, or cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("bone map: `{bone}` names joint `{joint}`, which the skeleton does not have")]
    MissingJoint { bone: HumanBone, joint: String },
    #[error("bone map: joint `{joint}` drives both `{first}` and `{second}`")]
    JointTwice {
        joint: String,
        first: HumanBone,
        second: HumanBone,
    },
    /// Every required bone the map leaves out, in spec order.
    #[error("bone map: {}", missing_required(.0))]
    MissingRequired(Vec<HumanBone>),
    #[error(
        "bone map: `{bone}` (joint `{joint}`) is not below `{parent}` (joint `{parent_joint}`) in the skeleton"
    )]
    WrongOrder {
        bone: HumanBone,
        joint: String,
        parent: HumanBone,
        parent_joint: String,
    },
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// "required bone `head` is not mapped", or for several "required bones `head`,
/// `leftUpperArm` ... are not mapped": all of them, so one message says what the map
/// lacks.
fn missing_required(bones: &[HumanBone]) -> String {
    let listed: Vec<String> = bones.iter().map(|b| format!("`{b}`")).collect();
    match listed.as_slice() {
        [one] => format!("required bone {one} is not mapped"),
        _ => format!("required bones {} are not mapped", listed.join(", ")),
    }
}

impl NamedBoneMap {
    /// Reads a map from a JSON object of `"humanBone": "jointName"` pairs, either at
    /// the top level or under `"boneMap"` (as in a skeleton file).
    pub fn from_json(value: &serde_json::Value, path: &Path) -> Result<Self, MapError> {
        let err = |message: String| MapError::File {
            path: path.display().to_string(),
            message,
        };
        let object = value
            .get("boneMap")
            .unwrap_or(value)
            .as_object()
            .ok_or_else(|| err("expected a JSON object of \"humanBone\": \"joint\"".into()))?;
        let mut bones = BTreeMap::new();
        for (key, joint) in object {
            let bone: HumanBone = key
                .parse()
                .map_err(|e| err(format!("field `{key}`: {e}")))?;
            let joint = joint
                .as_str()
                .ok_or_else(|| err(format!("field `{key}`: expected a joint name string")))?;
            bones.insert(bone, joint.to_owned());
        }
        Ok(Self {
            bones,
            t_pose: TPoseSource::Measured,
        })
    }

    /// Reads a map file (see `from_json`).
    pub fn load(path: &Path) -> Result<Self, MapError> {
        let text = std::fs::read_to_string(path).map_err(|source| MapError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| MapError::File {
            path: path.display().to_string(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
        })?;
        Self::from_json(&value, path)
    }

    /// The map as a JSON object, bones in spec order.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let object = self
            .bones
            .iter()
            .map(|(b, j)| (b.name().to_owned(), serde_json::Value::from(j.as_str())))
            .collect();
        serde_json::Value::Object(object)
    }
}

/// A bone hanging outside the hips' subtree (see the module header): its joint and
/// the joint it is held to (the lower leg's for a foot, the hips' for an upper leg).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetachedBone {
    pub bone: HumanBone,
    pub joint: usize,
    pub anchor: usize,
}

/// A bone map resolved against one skeleton: joint index per humanoid bone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoneMap {
    joints: [Option<u16>; BONE_COUNT],
    t_pose: TPoseSource,
}

impl BoneMap {
    /// Checks `named` against `skeleton` (see the module header).
    pub fn resolve(named: &NamedBoneMap, skeleton: &Skeleton) -> Result<Self, MapError> {
        let mut joints = [None; BONE_COUNT];
        let mut used: BTreeMap<usize, HumanBone> = BTreeMap::new();
        for (&bone, name) in &named.bones {
            let joint = skeleton.find(name).ok_or_else(|| MapError::MissingJoint {
                bone,
                joint: name.clone(),
            })?;
            if let Some(&first) = used.get(&joint) {
                return Err(MapError::JointTwice {
                    joint: name.clone(),
                    first,
                    second: bone,
                });
            }
            used.insert(joint, bone);
            joints[bone.index()] = Some(joint as u16);
        }
        let map = Self {
            joints,
            t_pose: named.t_pose,
        };
        let missing: Vec<HumanBone> = REQUIRED
            .into_iter()
            .filter(|&bone| map.joint(bone).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(MapError::MissingRequired(missing));
        }
        for bone in ALL {
            let Some(joint) = map.joint(bone) else {
                continue;
            };
            if let Some(parent) = map.parent(bone) {
                let parent_joint = map.joint(parent).unwrap_or_default();
                if !skeleton.is_ancestor(parent_joint, joint) && !map.is_detached(bone, skeleton) {
                    return Err(MapError::WrongOrder {
                        bone,
                        joint: skeleton.joints()[joint].name.clone(),
                        parent,
                        parent_joint: skeleton.joints()[parent_joint].name.clone(),
                    });
                }
            }
        }
        Ok(map)
    }

    /// The joint `bone` is held to when its own hangs outside the hips' subtree (and
    /// is not above the hips): a foot or a hand driven by IK, held to its lower leg or
    /// forearm (which is in the hips' subtree), or an upper leg beside the hips, held
    /// to the hips.
    fn anchor_of_detached(&self, bone: HumanBone, skeleton: &Skeleton) -> Option<usize> {
        use HumanBone as B;
        let joint = self.joint(bone)?;
        let hips = self.joint(B::Hips)?;
        if joint == hips || skeleton.is_ancestor(hips, joint) || skeleton.is_ancestor(joint, hips) {
            return None;
        }
        match bone {
            B::LeftUpperLeg | B::RightUpperLeg => Some(hips),
            B::LeftFoot | B::RightFoot | B::LeftHand | B::RightHand => {
                let lower = match bone {
                    B::LeftFoot => B::LeftLowerLeg,
                    B::RightFoot => B::RightLowerLeg,
                    B::LeftHand => B::LeftLowerArm,
                    _ => B::RightLowerArm,
                };
                self.joint(lower).filter(|&l| skeleton.is_ancestor(hips, l))
            }
            _ => None,
        }
    }

    fn is_detached(&self, bone: HumanBone, skeleton: &Skeleton) -> bool {
        self.anchor_of_detached(bone, skeleton).is_some()
    }

    /// The detached bones (see the module header), parents first.
    #[must_use]
    pub fn detached_bones(&self, skeleton: &Skeleton) -> Vec<DetachedBone> {
        self.pairs()
            .filter_map(|(bone, joint)| {
                Some(DetachedBone {
                    bone,
                    joint,
                    anchor: self.anchor_of_detached(bone, skeleton)?,
                })
            })
            .collect()
    }

    /// Where the skeleton's T-pose comes from (see `TPoseSource`).
    #[must_use]
    pub fn t_pose(&self) -> TPoseSource {
        self.t_pose
    }

    /// The joint driving `bone`, if mapped.
    #[must_use]
    pub fn joint(&self, bone: HumanBone) -> Option<usize> {
        self.joints[bone.index()].map(usize::from)
    }

    /// Whether `bone` is mapped.
    #[must_use]
    pub fn has(&self, bone: HumanBone) -> bool {
        self.joints[bone.index()].is_some()
    }

    /// The nearest mapped humanoid ancestor of `bone`.
    #[must_use]
    pub fn parent(&self, bone: HumanBone) -> Option<HumanBone> {
        bone.parent_in(|b| self.has(b))
    }

    /// Mapped bones with their joints, parents first.
    pub fn pairs(&self) -> impl Iterator<Item = (HumanBone, usize)> + '_ {
        ALL.into_iter()
            .filter_map(|b| self.joint(b).map(|j| (b, j)))
    }

    /// The humanoid bone a joint drives, if any.
    #[must_use]
    pub fn bone_of(&self, joint: usize) -> Option<HumanBone> {
        self.pairs().find(|(_, j)| *j == joint).map(|(b, _)| b)
    }

    /// The largest joint index used plus one: how long a frame must be.
    #[must_use]
    pub fn source_joint_count(&self) -> usize {
        self.pairs().map(|(_, j)| j + 1).max().unwrap_or(0)
    }

    /// Back to names, for printing and writing.
    #[must_use]
    pub fn to_named(&self, skeleton: &Skeleton) -> NamedBoneMap {
        NamedBoneMap {
            bones: self
                .pairs()
                .map(|(b, j)| (b, skeleton.joints()[j].name.clone()))
                .collect(),
            t_pose: self.t_pose,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::{Joint, Transform};

    /// A chain of joints named `names`, each 10 cm above its parent.
    fn chain(names: &[&str]) -> Skeleton {
        let joints = names
            .iter()
            .enumerate()
            .map(|(i, name)| Joint {
                name: (*name).to_owned(),
                parent: i.checked_sub(1),
                rest: Transform {
                    translation: glam::Vec3::new(0.0, 0.1, 0.0),
                    ..Transform::IDENTITY
                },
                end: None,
            })
            .collect();
        Skeleton::new(joints).unwrap()
    }

    fn named(pairs: &[(HumanBone, &str)]) -> NamedBoneMap {
        NamedBoneMap {
            bones: pairs.iter().map(|&(b, j)| (b, j.to_owned())).collect(),
            t_pose: TPoseSource::Measured,
        }
    }

    #[test]
    fn resolve_names_every_missing_required_bone() {
        // Hips and spine only, as a partial VRM declares them: the message lists the
        // other 13 required bones, not just the first.
        let skeleton = chain(&["hips", "spine"]);
        let map = named(&[(HumanBone::Hips, "hips"), (HumanBone::Spine, "spine")]);
        let err = BoneMap::resolve(&map, &skeleton).unwrap_err();
        let MapError::MissingRequired(missing) = &err else {
            panic!("{err}");
        };
        assert_eq!(missing.len(), REQUIRED.len() - 2);
        let message = err.to_string();
        assert!(
            message.starts_with("bone map: required bones `head`, `leftUpperLeg`, "),
            "{message}"
        );
        assert!(
            message.ends_with("`rightLowerArm`, `rightHand` are not mapped"),
            "{message}"
        );
    }

    #[test]
    fn resolve_names_a_single_missing_required_bone_alone() {
        let all: Vec<(HumanBone, String)> = REQUIRED
            .into_iter()
            .filter(|&b| b != HumanBone::Head)
            .map(|b| (b, b.name().to_owned()))
            .collect();
        let names: Vec<&str> = all.iter().map(|(_, n)| n.as_str()).collect();
        let skeleton = chain(&names);
        let pairs: Vec<(HumanBone, &str)> = all.iter().map(|(b, n)| (*b, n.as_str())).collect();
        let err = BoneMap::resolve(&named(&pairs), &skeleton).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bone map: required bone `head` is not mapped"
        );
    }
}
