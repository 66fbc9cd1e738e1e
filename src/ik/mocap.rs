//! Mocap mode: after the rotation retarget, put the target's hands and feet where the
//! source's are (scaled to the target), keep planted feet planted, and lower the hips
//! when a foot cannot reach.
//!
//! The normalized pose is the source's and the target's at once: forward kinematics on
//! each body (`BodyFrame`) gives where the source's end effectors are and where the
//! rotation retarget put the target's. With `s` the ratio of rest hips heights
//! (target / source), the floor at `y = 0` in both model spaces and `h(b)` a bone's
//! T-pose height above the floor:
//!
//! ```text
//! foot target  = (x, (y − h_source(foot)) + h_target(foot)/s, z) · s    x, y, z: the source's foot
//! hand target  = P_t(upperArm) + (P_s(hand) − P_s(upperArm)) · arm_t / arm_s
//! pole         = P_t(root) + (P_s(middle) − P_s(root)) · s
//! ```
//!
//! A foot is in contact while its target moves slower than `contact_speed` hips heights
//! per second and is within `contact_height` hips heights of its rest height; the first
//! contact frame plants it there, and it stays there until contact ends, then eases back
//! to its target over `release_seconds`. The hips go down as far as needed (at most
//! `max_hips_drop` hips heights) for every foot target to be within the leg's reach.

use glam::{Quat, Vec3};

use super::IkError;
use super::body::{BodyFrame, BodyProportions, LIMBS, Limb, TORSO};
use super::limb::LimbIk;
use crate::humanoid::{HumanBone, HumanoidPose};

/// Per-performer mocap-mode settings; every field has a default.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MocapIkConfig {
    /// Run mocap-mode IK at all (default true).
    pub enabled: bool,
    /// Move the hands to the source's (default true).
    pub hands: bool,
    /// Blend of the hand IK, 0..=1 (default 1).
    pub hand_weight: f32,
    /// Move the feet to the source's and plant them (default true).
    pub feet: bool,
    /// Blend of the foot IK, 0..=1 (default 1).
    pub foot_weight: f32,
    /// `TwoBoneIk::softness` for all limbs (default 0.01).
    pub softness: f32,
    /// Contact when the foot moves slower than this, target hips heights per second
    /// (default 0.3).
    pub contact_speed: f32,
    /// Contact only within this of the foot's rest height, target hips heights
    /// (default 0.06).
    pub contact_height: f32,
    /// Seconds a released foot takes to ease back to its target (default 0.1).
    pub release_seconds: f32,
    /// Lower the hips when a foot cannot reach (default true).
    pub lower_hips: bool,
    /// At most this much lowering, target hips heights (default 0.15).
    pub max_hips_drop: f32,
}

impl Default for MocapIkConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            hands: true,
            hand_weight: 1.0,
            feet: true,
            foot_weight: 1.0,
            softness: 0.01,
            contact_speed: 0.3,
            contact_height: 0.06,
            release_seconds: 0.1,
            lower_hips: true,
            max_hips_drop: 0.15,
        }
    }
}

/// One foot's contact state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct FootState {
    /// Last frame's foot target before planting; `None` before the first frame.
    previous: Option<Vec3>,
    /// Where the foot is planted while in contact.
    planted: Option<Vec3>,
    /// Where a released foot was planted, and how much of it is left (1 → 0).
    released_from: Vec3,
    release: f32,
}

/// What mocap mode carries from frame to frame for one performer, and its scratch
/// space. Made when the performer is added.
#[derive(Debug, Clone, Default)]
pub struct MocapIkState {
    feet: [FootState; 2],
    /// Forward kinematics of the pose on the source's body: the hips, spine, chest,
    /// upperChest and `LIMBS` only (the neck, head, eyes, jaw, toes and fingers are
    /// stale).
    pub source_frame: BodyFrame,
    /// Forward kinematics of the result on the target's body, the same bones.
    pub target_frame: BodyFrame,
    /// How far the hips were lowered this frame, metres of the target.
    pub hips_drop: f32,
}

impl MocapIkState {
    /// Whether the left (0) or right (1) foot is in contact this frame.
    #[must_use]
    pub fn is_planted(&self, foot: usize) -> bool {
        self.feet.get(foot).is_some_and(|f| f.planted.is_some())
    }

    /// Forgets contacts (after a jump in the stream).
    pub fn reset(&mut self) {
        self.feet = Default::default();
    }
}

/// Mocap-mode IK on one frame, after `ToNormalized`, before `FromNormalized`.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct MocapIk<'a> {
    pub config: &'a MocapIkConfig,
    /// The body the pose came from.
    pub source: &'a BodyProportions,
    /// The body the pose goes to.
    pub target: &'a BodyProportions,
    /// Seconds since the previous frame.
    pub dt: f32,
    pub state: &'a mut MocapIkState,
    /// In: the retargeted pose. Out: limbs solved, hips lowered.
    pub pose: &'a mut HumanoidPose,
}

const FEET: [(Limb, HumanBone); 2] = [
    (Limb::LeftLeg, HumanBone::LeftFoot),
    (Limb::RightLeg, HumanBone::RightFoot),
];

impl MocapIk<'_> {
    /// Rejects a bad frame interval or hips height, bodies without limbs, and
    /// weights or softness out of range.
    pub fn validate(&self) -> Result<(), IkError> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(IkError::BadInterval(self.dt));
        }
        for h in [
            self.pose.rest_hips_height,
            self.source.rest_hips_height(),
            self.target.rest_hips_height(),
        ] {
            if !(h.is_finite() && h > 0.0) {
                return Err(IkError::BadHipsHeight(h));
            }
        }
        for body in [self.source, self.target] {
            for limb in Limb::ALL {
                if let Some(b) = limb.bones().into_iter().find(|b| !body.has(*b)) {
                    return Err(IkError::MissingBone(b));
                }
            }
        }
        let c = self.config;
        for w in [c.hand_weight, c.foot_weight] {
            if !(0.0..=1.0).contains(&w) {
                return Err(IkError::BadWeight(w));
            }
        }
        if !(0.0..1.0).contains(&c.softness) {
            return Err(IkError::BadSoftness(c.softness));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let MocapIk {
            config: c,
            source,
            target,
            dt,
            state,
            pose,
        } = self;
        let bodies = Bodies {
            config: c,
            source,
            target,
        };
        // Only what the stages read: the spine up to the shoulders, and the limbs.
        for bones in [&TORSO[..4], &LIMBS] {
            BodyFrame::update_bones_pair(
                (&mut state.source_frame, source),
                (&mut state.target_frame, target),
                pose,
                bones,
            );
        }
        state.hips_drop = 0.0;
        if !c.enabled {
            return Ok(());
        }
        let scale = target.rest_hips_height() / source.rest_hips_height();
        let height = target.rest_hips_height();
        let mut foot_targets = [Vec3::ZERO; 2];
        if c.feet {
            for (i, (_, foot)) in FEET.into_iter().enumerate() {
                let wanted = bodies.foot_target(state, foot, scale);
                let rest_height = target.rest_height(foot);
                foot_targets[i] =
                    plant_foot(&mut state.feet[i], wanted, rest_height, height, dt, c);
            }
            if c.lower_hips {
                let drop = bodies
                    .hips_drop(state, &foot_targets)
                    .min(c.max_hips_drop * height);
                if drop > 0.0 {
                    // The pose's hips are in source metres: P_t(hips) = hips_position · s.
                    pose.hips_position.y -= drop / scale;
                    for bones in [&TORSO[..4], &LIMBS] {
                        (state.target_frame).translate_bones(Vec3::NEG_Y * drop, bones);
                    }
                    state.hips_drop = drop;
                }
            }
            for (i, (limb, _)) in FEET.into_iter().enumerate() {
                let pole = bodies.pole(state, limb, scale);
                bodies.solve(state, pose, limb, foot_targets[i], pole, c.foot_weight)?;
            }
        }
        if c.hands {
            for limb in [Limb::LeftArm, Limb::RightArm] {
                let goal = bodies.hand_target(state, limb);
                let pole = bodies.pole(state, limb, scale);
                bodies.solve(state, pose, limb, goal, pole, c.hand_weight)?;
            }
        }
        Ok(())
    }
}

/// What a frame's stages share.
struct Bodies<'a> {
    config: &'a MocapIkConfig,
    source: &'a BodyProportions,
    target: &'a BodyProportions,
}

impl Bodies<'_> {
    /// The source's foot, scaled, at the target's ankle height (module header).
    fn foot_target(&self, state: &MocapIkState, foot: HumanBone, scale: f32) -> Vec3 {
        let p = state.source_frame.position(foot);
        let y = p.y - self.source.rest_height(foot) + self.target.rest_height(foot) / scale;
        Vec3::new(p.x, y, p.z) * scale
    }

    /// The source's hand relative to its shoulder joint, scaled by arm length.
    fn hand_target(&self, state: &MocapIkState, limb: Limb) -> Vec3 {
        let [root, _, end] = limb.bones();
        let (s1, s2) = self.source.limb_lengths(limb);
        let (t1, t2) = self.target.limb_lengths(limb);
        let offset = state.source_frame.position(end) - state.source_frame.position(root);
        state.target_frame.position(root) + offset * ((t1 + t2) / (s1 + s2))
    }

    fn pole(&self, state: &MocapIkState, limb: Limb, scale: f32) -> Vec3 {
        let [root, middle, _] = limb.bones();
        let bend = state.source_frame.position(middle) - state.source_frame.position(root);
        state.target_frame.position(root) + bend * scale
    }

    /// The smallest lowering δ of the hips that brings every foot target within reach
    /// `L` of its hip joint: with `v = target − hip`, `|v + δ·ŷ| = L` gives
    /// `δ = −v.y − sqrt(v.y² − |v|² + L²)` (δ = −v.y when even that is not enough).
    fn hips_drop(&self, state: &MocapIkState, targets: &[Vec3; 2]) -> f32 {
        let mut drop = 0.0f32;
        for ((limb, _), target) in FEET.iter().zip(targets) {
            let (l1, l2) = self.target.limb_lengths(*limb);
            let reach = (l1 + l2) * (1.0 - self.config.softness) * 0.999;
            let v = *target - state.target_frame.position(limb.bones()[0]);
            if v.length() <= reach {
                continue;
            }
            let disc = v.y * v.y - v.length_squared() + reach * reach;
            let needed = if disc >= 0.0 {
                -v.y - disc.sqrt()
            } else {
                -v.y
            };
            drop = drop.max(needed);
        }
        drop
    }

    fn solve(
        &self,
        state: &mut MocapIkState,
        pose: &mut HumanoidPose,
        limb: Limb,
        target: Vec3,
        pole: Vec3,
        weight: f32,
    ) -> Result<(), IkError> {
        LimbIk {
            body: self.target,
            limb,
            target,
            pole,
            end_rotation: None::<Quat>,
            softness: self.config.softness,
            weight,
            frame: &mut state.target_frame,
            pose,
        }
        .run()
    }
}

/// Contact detection and planting for one foot (module header); returns the foot's
/// target for this frame.
fn plant_foot(
    foot: &mut FootState,
    wanted: Vec3,
    rest_height: f32,
    hips_height: f32,
    dt: f32,
    config: &MocapIkConfig,
) -> Vec3 {
    let speed = foot.previous.map_or(0.0, |p| p.distance(wanted) / dt);
    foot.previous = Some(wanted);
    let contact = speed < config.contact_speed * hips_height
        && wanted.y - rest_height < config.contact_height * hips_height;
    match (contact, foot.planted) {
        (true, Some(planted)) => planted,
        (true, None) => {
            // A foot landing while still easing out lands where it eases to.
            let at = wanted.lerp(foot.released_from, foot.release);
            foot.planted = Some(at);
            foot.release = 0.0;
            at
        }
        (false, planted) => {
            if let Some(p) = planted {
                foot.released_from = p;
                foot.release = 1.0;
                foot.planted = None;
            }
            let at = wanted.lerp(foot.released_from, foot.release);
            let step = if config.release_seconds > 0.0 {
                dt / config.release_seconds
            } else {
                1.0
            };
            foot.release = (foot.release - step).max(0.0);
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::BONE_COUNT;

    #[test]
    fn validate_rejects_a_bad_interval_and_a_body_without_legs() {
        let mut positions = [None; BONE_COUNT];
        positions[HumanBone::Hips.index()] = Some(Vec3::Y);
        let body = BodyProportions::from_positions(&positions, 1.0);
        let mut state = MocapIkState::default();
        let mut pose = HumanoidPose::default();
        let config = MocapIkConfig::default();
        let mut job = MocapIk {
            config: &config,
            source: &body,
            target: &body,
            dt: 0.0,
            state: &mut state,
            pose: &mut pose,
        };
        assert_eq!(job.validate(), Err(IkError::BadInterval(0.0)));
        job.dt = 1.0 / 60.0;
        assert_eq!(
            job.validate(),
            Err(IkError::MissingBone(HumanBone::LeftUpperArm))
        );
    }
}
