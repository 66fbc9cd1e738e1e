//! The humanoid model every source is mapped onto: the 55 VRM 1.0 bones, the
//! normalized `HumanoidPose`, expressions and lookAt,
//! and what VR devices report (device poses, tracked hand joints).

pub mod bone;
pub mod device;
pub mod expression;
pub mod pose;

pub use bone::{BONE_COUNT, HumanBone, Side};
pub use device::{DevicePose, HAND_JOINTS};
pub use expression::{CustomNames, Expressions, Preset};
pub use pose::{HumanoidPose, LookAt};
