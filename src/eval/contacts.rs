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

#[cfg(test)]
mod tests {
    use glam::Vec3A;

    use super::*;
    use crate::humanoid::BONE_COUNT;

    #[test]
    fn contacts_are_the_slow_feet_near_the_floor_the_toes_stand_on() {
        use HumanBone as B;
        // Hips 1 m up, ankles 8 cm, toes 2 cm; the capture's floor 3 cm above its rig's.
        let mut rest = [None; BONE_COUNT];
        rest[B::Hips.index()] = Some(Vec3::Y);
        for (x, foot, toe) in [
            (0.1, B::LeftFoot, B::LeftToes),
            (-0.1, B::RightFoot, B::RightToes),
        ] {
            rest[foot.index()] = Some(Vec3::new(x, 0.08, 0.0));
            rest[toe.index()] = Some(Vec3::new(x, 0.02, 0.12));
        }
        let body = BodyProportions::from_positions(&rest, 1.0);
        let floor = 0.03;
        // 40 frames at 40 Hz: the left foot stands for 20 then moves at 1 m/s; the
        // right foot stands on the floor throughout.
        let times: Vec<f32> = (0..40).map(|i| i as f32 / 40.0).collect();
        let mut contacts = SourceContacts::with_capacity(times.len());
        for t in &times {
            let mut frame = BodyFrame::default();
            let left = Vec3::new(0.1, 0.08 + floor, (t - 0.5).max(0.0));
            let right = Vec3::new(-0.1, 0.08 + floor, 0.0);
            for (bone, at) in [
                (B::LeftFoot, left),
                (B::LeftToes, left + Vec3::new(0.0, -0.06, 0.12)),
                (B::RightFoot, right),
                (B::RightToes, right + Vec3::new(0.0, -0.06, 0.12)),
            ] {
                frame.model_positions[bone.index()] = Vec3A::from(at);
            }
            contacts.push(&frame, &body);
        }
        contacts.finish(&body, &times, &MocapIkConfig::default());
        assert!((contacts.floor - floor).abs() < 1e-5, "{}", contacts.floor);
        for (i, [left, right]) in contacts.contacts.iter().enumerate() {
            assert!(*right, "frame {i}");
            assert_eq!(*left, times[i] <= 0.5, "frame {i}");
        }
    }
}
