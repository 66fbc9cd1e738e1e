//! Inverse kinematics on normalized humanoid poses: two-bone limbs, mocap mode, VR
//! mode (headset, controllers, trackers) and its calibration. These are the jobs
//! the solver runs; `eval` measures them.
//!
//! Everything works in the *humanoid model space* of one body: the facing-corrected
//! model space in which a `HumanoidPose`'s normalized rotations live (glTF axes,
//! metres). A `BodyProportions` holds where each humanoid bone of a skeleton sits in
//! its T-pose; with a pose's normalized rotations it gives model positions
//! (`BodyFrame`), and the IK jobs edit the pose's rotations (and hips position) in
//! place, so any skeleton can be posed from the result with `FromNormalized`.
//!
//! Pure code: no I/O, no allocation per frame. Built types (`BodyProportions`) are
//! made once from a `MappedSkeleton`; per-frame jobs (`TwoBoneIk`, `LimbIk`, `MocapIk`, `VrIk`)
//! run on the stack.

pub mod body;
pub mod calibration;
pub mod fingers;
pub mod limb;
pub mod mocap;
pub mod vr;

pub use body::{BodyFrame, BodyProportions, Limb};
pub use calibration::Calibration;
pub use limb::{LimbIk, LimbRotations, TwoBoneIk};
pub use mocap::{MocapIk, MocapIkConfig, MocapIkState};
pub use vr::{VrIk, VrIkConfig, VrIkState, VrInput};

/// Why an IK job cannot run.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum IkError {
    #[error("bone lengths {upper} and {lower} are not positive finite numbers")]
    DegenerateLimb { upper: f32, lower: f32 },
    #[error("target {0} is not finite")]
    BadTarget(glam::Vec3),
    #[error("weight {0} is not in 0..=1")]
    BadWeight(f32),
    #[error("softness {0} is not in 0..1")]
    BadSoftness(f32),
    #[error("the body has no `{0}`, which the limb needs")]
    MissingBone(crate::humanoid::HumanBone),
    #[error("frame interval {0} is not a positive number of seconds")]
    BadInterval(f32),
    #[error("pose has a rest hips height of {0}, which is not a positive number")]
    BadHipsHeight(f32),
}
