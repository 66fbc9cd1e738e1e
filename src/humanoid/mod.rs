//! The humanoid model every source is mapped onto: the 55 VRM 1.0 bones, the
//! normalized `HumanoidPose`, expressions and lookAt.

pub mod bone;
pub mod expression;
pub mod pose;

pub use bone::{BONE_COUNT, HumanBone, Side};
pub use expression::{CustomNames, Expressions, Preset};
pub use pose::{HumanoidPose, LookAt};
