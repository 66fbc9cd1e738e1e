//! Legs without foot trackers: where each untracked foot stands or steps.

use glam::Vec3;

/// One untracked foot.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct PlantedFoot {
    /// Where the ankle is (avatar model space) and the foot's yaw.
    pub(super) at: Vec3,
    pub(super) yaw: f32,
    /// A step under way: from where, how far along (0 → 1).
    pub(super) from: Vec3,
    pub(super) from_yaw: f32,
    pub(super) progress: Option<f32>,
    /// How long the step under way takes, seconds.
    pub(super) seconds: f32,
}

/// Below this fraction of their rest height the hips are not walking (crouching,
/// crawling, sitting).
pub(super) const UPRIGHT: f32 = 0.7;

/// A foot still stepping when the body sways over it lands within this, seconds.
pub(super) const LAND_WITHIN: f32 = 0.1;
