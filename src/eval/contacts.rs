//! The source's own foot contacts over a whole clip (`SourceContacts`): what mocap
//! mode's evaluation scores skate on, and what the solver's live contacts are compared
//! with. Found from the source's feet alone, on the source's body: its floor is a low
//! percentile (`FLOOR_PERCENTILE`) of the lowest sole of each frame
//! (`ik::mocap::sole_height`: a toe joint less the toe's rest height over the soles),
//! and a foot is in contact while its ankle is near its rest height over that floor
//! and slow (`MocapIkConfig::is_contact`, on the source's hips height; the speed is
//! the ankle's motion since the previous frame, the next for the first frame). Pure
//! code over frames already retargeted to normalized poses.

use glam::Vec3;

use crate::humanoid::HumanBone;
use crate::ik::body::{BodyFrame, BodyProportions};
use crate::ik::mocap::{FLOOR_PERCENTILE, MocapIkConfig, sole_height};

/// Where the source's feet are on each frame, collected before `finish`.
#[derive(Debug, Clone, Default)]
pub struct SourceContacts {
    /// Per frame: ankle positions and sole heights (left, right), source metres.
    ankles: Vec<[Vec3; 2]>,
    soles: Vec<[f32; 2]>,
    /// Per frame and foot, once `finish` ran: in contact.
    pub contacts: Vec<[bool; 2]>,
    /// The floor found, source model metres.
    pub floor: f32,
}

impl SourceContacts {
    /// Room for `frames` frames.
    #[must_use]
    pub fn with_capacity(frames: usize) -> Self {
        Self {
            ankles: Vec::with_capacity(frames),
            soles: Vec::with_capacity(frames),
            ..Self::default()
        }
    }

    /// Adds one frame: `frame` is the pose's forward kinematics on the source's `body`
    /// (feet and toes up to date).
    pub fn push(&mut self, frame: &BodyFrame, body: &BodyProportions) {
        let feet = [HumanBone::LeftFoot, HumanBone::RightFoot];
        self.ankles.push(feet.map(|f| frame.position(f)));
        self.soles
            .push([0, 1].map(|side| sole_height(frame, body, side)));
    }

    /// Finds the floor and the contacts (module header); `times` are the frames'.
    pub fn finish(&mut self, body: &BodyProportions, times: &[f32], config: &MocapIkConfig) {
        let mut lowest: Vec<f32> = self
            .soles
            .iter()
            .map(|s| s[0].min(s[1]))
            .filter(|s| s.is_finite())
            .collect();
        lowest.sort_by(f32::total_cmp);
        let at = ((lowest.len().saturating_sub(1)) as f32 * FLOOR_PERCENTILE).round() as usize;
        self.floor = lowest.get(at).copied().unwrap_or(0.0);
        let hips_height = body.rest_hips_height();
        let feet = [HumanBone::LeftFoot, HumanBone::RightFoot];
        let n = self.ankles.len();
        self.contacts = (0..n)
            .map(|i| {
                let (a, b) = match i {
                    0 => (0, 1.min(n - 1)),
                    _ => (i - 1, i),
                };
                let dt = (times.get(b).copied().unwrap_or(0.0)
                    - times.get(a).copied().unwrap_or(0.0))
                .max(1e-4);
                [0, 1].map(|side| {
                    let speed = self.ankles[a][side].distance(self.ankles[b][side]) / dt;
                    let height = self.ankles[i][side].y - self.floor - body.rest_height(feet[side]);
                    config.is_contact(height, speed, hips_height)
                })
            })
            .collect();
    }
}
