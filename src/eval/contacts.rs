//! The source's own foot contacts over a whole clip (`SourceContacts`): what mocap
//! mode's evaluation scores skate on, and what the solver's live contacts are compared
//! with. Found from the source's feet alone, on the source's body: its floor is the
//! `floor_percentile` low percentile of the lowest slow sole of each frame
//! (`ik::mocap::sole_height`: a toe joint less the toe's rest height over the soles;
//! `ik::mocap::is_slow` on that joint's speed; every frame's lowest sole when no sole
//! is ever slow),
//! and a foot's contact is `ik::mocap::FootContact`'s test over that floor on the
//! source's hips height, frame after frame, as mocap mode runs it live on the floor it
//! follows. Pure code over frames already retargeted to normalized poses.

use glam::Vec3;

use crate::humanoid::HumanBone;
use crate::ik::body::{BodyFrame, BodyProportions};
use crate::ik::mocap::{FootContact, FootSpeeds, MocapIkConfig, is_slow, sole_height, sole_joint};

use super::frame_interval;

/// Where the source's feet are on each frame, collected before `finish`.
#[derive(Debug, Clone, Default)]
pub struct SourceContacts {
    /// Per frame: ankle and sole joint positions and sole heights (left, right),
    /// source metres.
    ankles: Vec<[(Vec3, Vec3); 2]>,
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
        self.ankles.push([0, 1].map(|side| {
            (
                frame.position(feet[side]),
                frame.position(sole_joint(body, side)),
            )
        }));
        self.soles
            .push([0, 1].map(|side| sole_height(frame, body, side)));
    }

    /// Finds the floor and the contacts (module header); `times` are the frames'.
    pub fn finish(&mut self, body: &BodyProportions, times: &[f32], config: &MocapIkConfig) {
        let hips_height = body.rest_hips_height();
        let mut feet = [FootContact::default(); 2];
        let speeds: Vec<[FootSpeeds; 2]> = (self.ankles.iter().enumerate())
            .map(|(i, ankles)| {
                let dt = frame_interval(times, i);
                [0, 1].map(|side| feet[side].track(ankles[side].0, ankles[side].1, dt))
            })
            .collect();
        let lowest_of = |slow_only: bool| {
            let mut lowest: Vec<f32> = (self.soles.iter().zip(&speeds))
                .filter_map(|(soles, speeds)| {
                    [0, 1]
                        .into_iter()
                        .filter(|&side| {
                            !slow_only || is_slow(speeds[side].sole, hips_height, config)
                        })
                        .map(|side| soles[side])
                        .filter(|s| s.is_finite())
                        .reduce(f32::min)
                })
                .collect();
            lowest.sort_by(f32::total_cmp);
            lowest
        };
        let mut lowest = lowest_of(true);
        if lowest.is_empty() {
            lowest = lowest_of(false);
        }
        let p = config.floor_percentile.clamp(0.0, 1.0);
        let at = ((lowest.len().saturating_sub(1)) as f32 * p).round() as usize;
        self.floor = lowest.get(at).copied().unwrap_or(0.0);
        let rest = [HumanBone::LeftFoot, HumanBone::RightFoot].map(|f| body.rest_height(f));
        self.contacts = (self.ankles.iter().zip(&speeds))
            .map(|(ankles, speeds)| {
                [0, 1].map(|side| {
                    let height = ankles[side].0.y - self.floor - rest[side];
                    feet[side].update(speeds[side].ankle, height, hips_height, config)
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
    fn contacts_are_the_slow_feet_near_the_floor_the_slow_toes_stand_on() {
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
        // 40 frames at 40 Hz: the left foot stands for 20 then moves at 1 m/s, thrown
        // 20 cm through the floor on 4 frames (10% of the clip); the right foot
        // stands on the floor throughout.
        let times: Vec<f32> = (0..40).map(|i| i as f32 / 40.0).collect();
        let mut contacts = SourceContacts::with_capacity(times.len());
        for (i, t) in times.iter().enumerate() {
            let mut frame = BodyFrame::default();
            let glitch = if (30..34).contains(&i) { -0.2 } else { 0.0 };
            let left = Vec3::new(0.1, 0.08 + floor + glitch, (t - 0.5).max(0.0));
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
        // No contact on the first frame: no speed yet.
        for (i, [left, right]) in contacts.contacts.iter().enumerate() {
            assert_eq!(*right, i > 0, "frame {i}");
            assert_eq!(*left, i > 0 && times[i] <= 0.5, "frame {i}");
        }
    }
}
