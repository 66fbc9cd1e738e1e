//! The 55 VRM 1.0 humanoid bones: spec names, parents and the required set.
//!
//! `HumanBone` is a dense `u8` index (0..55) so per-frame data can live in fixed
//! arrays. The order is the spec's table order, which is also a topological order:
//! every bone comes after its parent. Spec spellings appear only in `NAMES`.

use std::fmt;
use std::str::FromStr;

/// One of the 55 VRM 1.0 humanoid bones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum HumanBone {
    Hips,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    LeftEye,
    RightEye,
    Jaw,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftThumbMetacarpal,
    LeftThumbProximal,
    LeftThumbDistal,
    LeftIndexProximal,
    LeftIndexIntermediate,
    LeftIndexDistal,
    LeftMiddleProximal,
    LeftMiddleIntermediate,
    LeftMiddleDistal,
    LeftRingProximal,
    LeftRingIntermediate,
    LeftRingDistal,
    LeftLittleProximal,
    LeftLittleIntermediate,
    LeftLittleDistal,
    RightThumbMetacarpal,
    RightThumbProximal,
    RightThumbDistal,
    RightIndexProximal,
    RightIndexIntermediate,
    RightIndexDistal,
    RightMiddleProximal,
    RightMiddleIntermediate,
    RightMiddleDistal,
    RightRingProximal,
    RightRingIntermediate,
    RightRingDistal,
    RightLittleProximal,
    RightLittleIntermediate,
    RightLittleDistal,
}

/// How many humanoid bones there are.
pub const BONE_COUNT: usize = 55;

use HumanBone as B;

/// Every bone, in index order (parents before children).
pub const ALL: [HumanBone; BONE_COUNT] = [
    B::Hips,
    B::Spine,
    B::Chest,
    B::UpperChest,
    B::Neck,
    B::Head,
    B::LeftEye,
    B::RightEye,
    B::Jaw,
    B::LeftUpperLeg,
    B::LeftLowerLeg,
    B::LeftFoot,
    B::LeftToes,
    B::RightUpperLeg,
    B::RightLowerLeg,
    B::RightFoot,
    B::RightToes,
    B::LeftShoulder,
    B::LeftUpperArm,
    B::LeftLowerArm,
    B::LeftHand,
    B::RightShoulder,
    B::RightUpperArm,
    B::RightLowerArm,
    B::RightHand,
    B::LeftThumbMetacarpal,
    B::LeftThumbProximal,
    B::LeftThumbDistal,
    B::LeftIndexProximal,
    B::LeftIndexIntermediate,
    B::LeftIndexDistal,
    B::LeftMiddleProximal,
    B::LeftMiddleIntermediate,
    B::LeftMiddleDistal,
    B::LeftRingProximal,
    B::LeftRingIntermediate,
    B::LeftRingDistal,
    B::LeftLittleProximal,
    B::LeftLittleIntermediate,
    B::LeftLittleDistal,
    B::RightThumbMetacarpal,
    B::RightThumbProximal,
    B::RightThumbDistal,
    B::RightIndexProximal,
    B::RightIndexIntermediate,
    B::RightIndexDistal,
    B::RightMiddleProximal,
    B::RightMiddleIntermediate,
    B::RightMiddleDistal,
    B::RightRingProximal,
    B::RightRingIntermediate,
    B::RightRingDistal,
    B::RightLittleProximal,
    B::RightLittleIntermediate,
    B::RightLittleDistal,
];

/// Spec names (VRM 1.0 `humanBones` keys), indexed like `ALL`.
const NAMES: [&str; BONE_COUNT] = [
    "hips",
    "spine",
    "chest",
    "upperChest",
    "neck",
    "head",
    "leftEye",
    "rightEye",
    "jaw",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftThumbMetacarpal",
    "leftThumbProximal",
    "leftThumbDistal",
    "leftIndexProximal",
    "leftIndexIntermediate",
    "leftIndexDistal",
    "leftMiddleProximal",
    "leftMiddleIntermediate",
    "leftMiddleDistal",
    "leftRingProximal",
    "leftRingIntermediate",
    "leftRingDistal",
    "leftLittleProximal",
    "leftLittleIntermediate",
    "leftLittleDistal",
    "rightThumbMetacarpal",
    "rightThumbProximal",
    "rightThumbDistal",
    "rightIndexProximal",
    "rightIndexIntermediate",
    "rightIndexDistal",
    "rightMiddleProximal",
    "rightMiddleIntermediate",
    "rightMiddleDistal",
    "rightRingProximal",
    "rightRingIntermediate",
    "rightRingDistal",
    "rightLittleProximal",
    "rightLittleIntermediate",
    "rightLittleDistal",
];

/// The spec parent of each bone (VRM 1.0 humanoid table), indexed like `ALL`.
const PARENTS: [Option<HumanBone>; BONE_COUNT] = [
    None,                   // hips
    Some(B::Hips),          // spine
    Some(B::Spine),         // chest
    Some(B::Chest),         // upperChest
    Some(B::UpperChest),    // neck
    Some(B::Neck),          // head
    Some(B::Head),          // leftEye
    Some(B::Head),          // rightEye
    Some(B::Head),          // jaw
    Some(B::Hips),          // leftUpperLeg
    Some(B::LeftUpperLeg),  // leftLowerLeg
    Some(B::LeftLowerLeg),  // leftFoot
    Some(B::LeftFoot),      // leftToes
    Some(B::Hips),          // rightUpperLeg
    Some(B::RightUpperLeg), // rightLowerLeg
    Some(B::RightLowerLeg), // rightFoot
    Some(B::RightFoot),     // rightToes
    Some(B::UpperChest),    // leftShoulder
    Some(B::LeftShoulder),  // leftUpperArm
    Some(B::LeftUpperArm),  // leftLowerArm
    Some(B::LeftLowerArm),  // leftHand
    Some(B::UpperChest),    // rightShoulder
    Some(B::RightShoulder), // rightUpperArm
    Some(B::RightUpperArm), // rightLowerArm
    Some(B::RightLowerArm), // rightHand
    Some(B::LeftHand),      // leftThumbMetacarpal
    Some(B::LeftThumbMetacarpal),
    Some(B::LeftThumbProximal),
    Some(B::LeftHand), // leftIndexProximal
    Some(B::LeftIndexProximal),
    Some(B::LeftIndexIntermediate),
    Some(B::LeftHand), // leftMiddleProximal
    Some(B::LeftMiddleProximal),
    Some(B::LeftMiddleIntermediate),
    Some(B::LeftHand), // leftRingProximal
    Some(B::LeftRingProximal),
    Some(B::LeftRingIntermediate),
    Some(B::LeftHand), // leftLittleProximal
    Some(B::LeftLittleProximal),
    Some(B::LeftLittleIntermediate),
    Some(B::RightHand), // rightThumbMetacarpal
    Some(B::RightThumbMetacarpal),
    Some(B::RightThumbProximal),
    Some(B::RightHand), // rightIndexProximal
    Some(B::RightIndexProximal),
    Some(B::RightIndexIntermediate),
    Some(B::RightHand), // rightMiddleProximal
    Some(B::RightMiddleProximal),
    Some(B::RightMiddleIntermediate),
    Some(B::RightHand), // rightRingProximal
    Some(B::RightRingProximal),
    Some(B::RightRingIntermediate),
    Some(B::RightHand), // rightLittleProximal
    Some(B::RightLittleProximal),
    Some(B::RightLittleIntermediate),
];

/// The 15 bones every VRM 1.0 humanoid must have.
pub const REQUIRED: [HumanBone; 15] = [
    B::Hips,
    B::Spine,
    B::Head,
    B::LeftUpperLeg,
    B::LeftLowerLeg,
    B::LeftFoot,
    B::RightUpperLeg,
    B::RightLowerLeg,
    B::RightFoot,
    B::LeftUpperArm,
    B::LeftLowerArm,
    B::LeftHand,
    B::RightUpperArm,
    B::RightLowerArm,
    B::RightHand,
];

/// Which side of the body a bone is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
    Centre,
}

impl HumanBone {
    /// The bone with dense index `i`, if `i < 55`.
    #[must_use]
    pub fn from_index(i: usize) -> Option<HumanBone> {
        ALL.get(i).copied()
    }

    /// Dense index 0..55, for fixed per-bone arrays.
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The VRM 1.0 spec name (`leftUpperArm`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }

    /// The parent in the full spec hierarchy (`None` for hips).
    #[must_use]
    pub const fn parent(self) -> Option<HumanBone> {
        PARENTS[self as usize]
    }

    /// The nearest ancestor for which `present` holds, skipping missing optional
    /// bones as the spec asks (no chest: upperChest hangs from spine).
    #[must_use]
    pub fn parent_in(self, present: impl Fn(HumanBone) -> bool) -> Option<HumanBone> {
        let mut bone = self.parent();
        while let Some(b) = bone {
            if present(b) {
                return Some(b);
            }
            bone = b.parent();
        }
        None
    }

    /// Whether a VRM 1.0 humanoid must have this bone.
    #[must_use]
    pub fn is_required(self) -> bool {
        REQUIRED.contains(&self)
    }

    /// Left, right or centre, from the spec name.
    #[must_use]
    pub fn side(self) -> Side {
        let name = self.name();
        if name.starts_with("left") {
            Side::Left
        } else if name.starts_with("right") {
            Side::Right
        } else {
            Side::Centre
        }
    }

    /// Whether this is a finger or thumb bone.
    #[must_use]
    pub fn is_finger(self) -> bool {
        self.index() >= B::LeftThumbMetacarpal.index()
    }

    /// Whether this is a thumb bone.
    #[must_use]
    pub fn is_thumb(self) -> bool {
        self.name().contains("Thumb")
    }

    /// The same bone on the other side (centre bones map to themselves).
    #[must_use]
    pub fn mirrored(self) -> HumanBone {
        let name = self.name();
        let other = if let Some(rest) = name.strip_prefix("left") {
            format!("right{rest}")
        } else if let Some(rest) = name.strip_prefix("right") {
            format!("left{rest}")
        } else {
            return self;
        };
        other.parse().unwrap_or(self)
    }
}

impl fmt::Display for HumanBone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A bone name that is not one of the 55 VRM 1.0 humanoid bones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a VRM 1.0 humanoid bone name")]
pub struct UnknownBone(pub String);

impl FromStr for HumanBone {
    type Err = UnknownBone;

    /// Parses a spec name, exactly as spelled in VRM 1.0 (`leftUpperArm`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| ALL[i])
            .ok_or_else(|| UnknownBone(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bone_comes_after_its_parent() {
        for bone in ALL {
            if let Some(parent) = bone.parent() {
                assert!(parent.index() < bone.index(), "{bone} before {parent}");
            }
        }
    }

    #[test]
    fn names_round_trip_and_indices_are_dense() {
        for (i, bone) in ALL.iter().enumerate() {
            assert_eq!(bone.index(), i);
            assert_eq!(bone.name().parse::<HumanBone>(), Ok(*bone));
        }
        assert!("LeftUpperArm".parse::<HumanBone>().is_err());
    }

    #[test]
    fn fifteen_bones_are_required() {
        assert_eq!(ALL.iter().filter(|b| b.is_required()).count(), 15);
        assert!(!HumanBone::Chest.is_required());
        assert!(!HumanBone::Neck.is_required());
    }

    #[test]
    fn missing_optional_parent_is_skipped() {
        let present = |b: HumanBone| !matches!(b, HumanBone::Chest | HumanBone::UpperChest);
        assert_eq!(HumanBone::Neck.parent_in(present), Some(HumanBone::Spine));
        assert_eq!(
            HumanBone::LeftShoulder.parent_in(present),
            Some(HumanBone::Spine)
        );
        assert_eq!(HumanBone::Hips.parent_in(present), None);
    }

    #[test]
    fn mirrored_swaps_sides() {
        assert_eq!(HumanBone::LeftUpperArm.mirrored(), HumanBone::RightUpperArm);
        assert_eq!(
            HumanBone::RightLittleDistal.mirrored(),
            HumanBone::LeftLittleDistal
        );
        assert_eq!(HumanBone::Spine.mirrored(), HumanBone::Spine);
    }
}
