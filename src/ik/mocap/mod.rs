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
//! foot target  = (x, max(0, y − h_source(foot) + h_target(foot)/s), z) · s   (x, y, z: source's)
//! hand target  = P_t(upperArm) + (P_s(hand) − P_s(upperArm)) · arm_t / arm_s
//! pole         = P_t(root) + (P_s(middle) − P_s(root)) · s
//! ```
//!
//! where `y` is measured from the *source's own floor*, not from its model origin: a
//! capture's floor is wherever its feet stand, which need not be where its T-pose puts
//! the soles. The floor is a low percentile of the lowest sole of the slow feet (a
//! toe joint's height less that toe's T-pose height above the soles, the ankle's
//! without toes), followed live (`floor::LiveFloor`): a jump does not lift it.
//!
//! Whether a foot is in contact is `contact::FootContact`'s test on the source's
//! foot over the floor under it (slow and near its rest height, with a margin to
//! leave contact; on a box or a step the source stood on, that level:
//! `levels::RaisedPatches`), the same test `eval` runs on the whole clip; the first contact frame
//! plants the foot there, and it stays there until contact ends, then eases back to
//! its target over `release_seconds`. The hips go down as far as needed (at most
//! `max_hips_drop` hips heights) for every foot target to be within the leg's reach.
//! Last, a toe the legs put lower than the source's toe (mapped the same way; the
//! toe's rest height over the floor when that is lower or the source has no toes;
//! never under the floor) is lifted by pitching the foot about the ankle: a longer
//! or flatter target foot does not push its toes through the floor.

mod contact;
mod floor;
mod levels;

pub use contact::{FootContact, FootSpeeds, is_slow};
pub use levels::{
    LEVEL_CELL, LEVEL_SECONDS, RAISED, STANDING, level_under, patch_of, same_surface,
};

use glam::{Quat, Vec2, Vec3};

use super::IkError;
use super::body::{BodyFrame, BodyProportions, LIMBS, Limb, TORSO};
use super::limb::LimbIk;
use crate::humanoid::{HumanBone, HumanoidPose};
use floor::LiveFloor;
use levels::RaisedPatches;

/// The toes, left then right.
const TOES: [HumanBone; 2] = [HumanBone::LeftToes, HumanBone::RightToes];

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
    /// Contact when the foot moves slower than this, hips heights per second, over
    /// `contact::SPEED_SPAN` (default 0.3).
    pub contact_speed: f32,
    /// Contact only within this of the foot's rest height over the floor, hips
    /// heights (default 0.1).
    pub contact_height: f32,
    /// A foot in contact stays in contact until its speed or height is over this
    /// many times `contact_speed` or `contact_height` (default 1.2; 1: no margin).
    pub contact_release: f32,
    /// The source's floor is this low quantile of the lowest sole of its slow feet:
    /// the share of that time a sole may be below it (default 0.05).
    pub floor_percentile: f32,
    /// Time constant, seconds, over which the live floor forgets the soles it saw
    /// (default 3).
    pub floor_seconds: f32,
    /// Seconds a released foot takes to ease back to its target (default 0.1).
    pub release_seconds: f32,
    /// Lower the hips when a foot cannot reach (default true).
    pub lower_hips: bool,
    /// At most this much lowering, target hips heights (default 0.15).
    pub max_hips_drop: f32,
}

/// The height of a foot's sole in `frame`, model metres: the toe joint's height less
/// the toe's T-pose height above the soles (the ankle's, for a body without toes).
/// 0 while the foot stands on the floor of the body's T-pose.
#[must_use]
pub fn sole_height(frame: &BodyFrame, body: &BodyProportions, side: usize) -> f32 {
    let joint = sole_joint(body, side);
    frame.position(joint).y - body.rest_height(joint)
}

/// The joint a foot's sole is measured at: the toe, or the ankle for a body
/// without toes (left 0, right 1).
#[must_use]
pub fn sole_joint(body: &BodyProportions, side: usize) -> HumanBone {
    let (foot, toe) = (FEET[side.min(1)].1, TOES[side.min(1)]);
    if body.has(toe) { toe } else { foot }
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
            contact_height: 0.1,
            contact_release: 1.2,
            floor_percentile: 0.05,
            floor_seconds: 3.0,
            release_seconds: 0.1,
            lower_hips: true,
            max_hips_drop: 0.15,
        }
    }
}

/// One foot's contact state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct FootState {
    /// Contact of the source's foot (its model position: the floor's own motion
    /// is no motion of the foot).
    contact: FootContact,
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
    /// The source's floor, and what stands above it.
    floor: LiveFloor,
    levels: RaisedPatches,
    /// Forward kinematics of the pose on the source's body: the hips, spine, chest,
    /// upperChest, `LIMBS` and toes only (the neck, head, eyes, jaw and fingers are
    /// stale).
    pub source_frame: BodyFrame,
    /// Forward kinematics of the result on the target's body, the same bones.
    pub target_frame: BodyFrame,
    /// How far the hips were lowered this frame, metres of the target.
    pub hips_drop: f32,
}

impl MocapIkState {
    /// Whether the left (0) or right (1) foot is planted (in contact) this frame.
    #[must_use]
    pub fn is_planted(&self, foot: usize) -> bool {
        self.feet.get(foot).is_some_and(|f| f.planted.is_some())
    }

    /// The source's floor as followed so far, source model metres (0 before the
    /// first frame).
    #[must_use]
    pub fn source_floor(&self) -> f32 {
        self.floor.height()
    }

    /// Forgets contacts and the floor (after a jump in the stream).
    pub fn reset(&mut self) {
        self.feet = Default::default();
        self.floor.reset();
        self.levels.reset();
    }

    /// Follows the source's floor and its raised patches by one frame and decides
    /// each foot's contact over the floor under its sole (module header); returns the
    /// floor.
    fn follow_feet(&mut self, source: &BodyProportions, dt: f32, config: &MocapIkConfig) -> f32 {
        let hips_height = source.rest_hips_height();
        let (mut slow_sole, mut lowest_sole, mut highest_sole) =
            (None::<f32>, f32::INFINITY, f32::NEG_INFINITY);
        let mut speeds = [FootSpeeds::default(); 2];
        // Per foot: where its sole is (X, Z), its height, and whether it stands.
        let mut soles = [(Vec2::ZERO, 0.0, false); 2];
        for (side, (_, foot)) in FEET.into_iter().enumerate() {
            let frame = &self.source_frame;
            let (ankle, sole_at) = (
                frame.position(foot),
                frame.position(sole_joint(source, side)),
            );
            speeds[side] = self.feet[side].contact.track(ankle, sole_at, dt);
            let sole = sole_height(frame, source, side);
            lowest_sole = lowest_sole.min(sole);
            highest_sole = highest_sole.max(sole);
            let slow = is_slow(speeds[side].sole, hips_height, config);
            if slow {
                slow_sole = Some(slow_sole.map_or(sole, |s| s.min(sole)));
            }
            let stands = self.feet[side].contact.stands(slow, dt);
            soles[side] = (Vec2::new(sole_at.x, sole_at.z), sole, stands);
        }
        let floor = self.floor.follow(
            slow_sole,
            (lowest_sole, highest_sole),
            dt,
            hips_height,
            config,
        );
        self.levels.next_frame();
        for (at, sole, standing) in soles {
            if standing {
                self.levels.take(at, sole, floor, dt, hips_height);
            }
        }
        for (side, (_, foot)) in FEET.into_iter().enumerate() {
            let (at, sole, _) = soles[side];
            let under = self.levels.floor_under(at, sole, floor, hips_height);
            let height = self.source_frame.position(foot).y - under - source.rest_height(foot);
            self.feet[side]
                .contact
                .update(speeds[side].ankle, height, hips_height, config);
        }
        floor
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
        // Only what the stages read: the spine up to the shoulders, the limbs and toes.
        for bones in [&TORSO[..4], &LIMBS[..], &TOES[..]] {
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
        let floor = state.follow_feet(source, dt, c);
        let mut foot_targets = [Vec3::ZERO; 2];
        if c.feet {
            // The whole body stands on the source's floor: down by it (source metres in
            // the pose, scaled in the target's frame).
            pose.hips_position.y -= floor;
            for bones in [&TORSO[..4], &LIMBS[..], &TOES[..]] {
                (state.target_frame).translate_bones(Vec3::NEG_Y * (floor * scale), bones);
            }
            for (i, (_, foot)) in FEET.into_iter().enumerate() {
                let wanted = bodies.foot_target(state, foot, scale, floor);
                foot_targets[i] = plant_foot(&mut state.feet[i], wanted, dt, c);
            }
            if c.lower_hips {
                let drop = bodies
                    .hips_drop(state, &foot_targets)
                    .min(c.max_hips_drop * height);
                if drop > 0.0 {
                    // The pose's hips are in source metres: P_t(hips) = hips_position · s.
                    pose.hips_position.y -= drop / scale;
                    for bones in [&TORSO[..4], &LIMBS[..], &TOES[..]] {
                        (state.target_frame).translate_bones(Vec3::NEG_Y * drop, bones);
                    }
                    state.hips_drop = drop;
                }
            }
            for (i, (limb, _)) in FEET.into_iter().enumerate() {
                let pole = bodies.pole(state, limb, scale);
                bodies.solve(state, pose, limb, foot_targets[i], pole, c.foot_weight)?;
                bodies.lift_toe(state, pose, i, scale, floor);
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
    /// The source's foot over the source's floor, scaled, at the target's ankle
    /// height (module header), never under the target's floor: an ankle resting on
    /// it (a foot without toes, its ankle the sole) is not pushed through it when the
    /// source's ankle comes nearer its floor than its rest height (a heel strike).
    fn foot_target(&self, state: &MocapIkState, foot: HumanBone, scale: f32, floor: f32) -> Vec3 {
        let p = state.source_frame.position(foot);
        let y = p.y - floor - self.source.rest_height(foot) + self.target.rest_height(foot) / scale;
        Vec3::new(p.x, y.max(0.0), p.z) * scale
    }

    /// Lifts the target's toe of foot `side` to where the source's is (its height
    /// over the source's floor above the toe's rest height, scaled onto the target's
    /// toe rest height), never asking more than the toe's rest height (all of it for
    /// a source without toes) nor less than the target's floor (a source's toe under
    /// the floor as followed so far is no reason to put the target's under its
    /// floor): the foot turns
    /// about the ankle, in the vertical plane of the toe, by
    /// `asin((wanted − ankle.y) / |toe − ankle|) − asin((toe − ankle).y / |toe − ankle|)`.
    /// Nothing to do for a target without toes or a toe already high enough.
    fn lift_toe(
        &self,
        state: &mut MocapIkState,
        pose: &mut HumanoidPose,
        side: usize,
        scale: f32,
        floor: f32,
    ) {
        let (foot, toe) = (FEET[side].1, TOES[side]);
        if !self.target.has(toe) {
            return;
        }
        let frame = &mut state.target_frame;
        frame.update_bones(self.target, pose, &[toe]);
        // A toe resting under the floor (the lowest joint, a rounding error below it,
        // or a VRM's toe up to `BELOW_ORIGIN_M` under its origin) is asked no lower
        // than the floor.
        let rest = self.target.rest_height(toe).max(0.0);
        let wanted = if self.source.has(toe) {
            let source_toe =
                state.source_frame.position(toe).y - floor - self.source.rest_height(toe);
            (source_toe * scale + rest).clamp(0.0, rest)
        } else {
            rest
        };
        let (ankle, tip) = (frame.position(foot), frame.position(toe));
        let v = tip - ankle;
        let length = v.length();
        let along = Vec3::new(v.x, 0.0, v.z).normalize_or_zero();
        if tip.y >= wanted || length < 1e-6 || along == Vec3::ZERO {
            return;
        }
        let sin = ((wanted - ankle.y) / length).clamp(-1.0, 1.0);
        let lifted = along * (1.0 - sin * sin).sqrt() + Vec3::Y * sin;
        let turn = Quat::from_rotation_arc(v / length, lifted);
        // The foot's model rotation turned; its normalized rotation is relative to
        // the lower leg's model rotation.
        let parent = foot.parent().map_or(Quat::IDENTITY, |p| frame.rotation(p));
        let model = turn * frame.rotation(foot);
        pose.set_rotation(foot, (parent.conjugate() * model).normalize());
        frame.update_bones(self.target, pose, &[foot, toe]);
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

/// Planting for one foot (module header): `wanted` is its target; its contact was
/// decided this frame. Returns the foot's target for this frame.
fn plant_foot(foot: &mut FootState, wanted: Vec3, dt: f32, config: &MocapIkConfig) -> Vec3 {
    match (foot.contact.is_in_contact(), foot.planted) {
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

    /// A stick body 1 m at the hips, its feet 8 cm up, toes (when given) `toe_length`
    /// ahead of the ankles and 6 cm lower.
    fn body(toe_length: Option<f32>) -> BodyProportions {
        body_with_toes_at(toe_length, 0.02)
    }

    /// `body`, its toes (when given) `toe_height` over the floor.
    fn body_with_toes_at(toe_length: Option<f32>, toe_height: f32) -> BodyProportions {
        stick_body(0.08, toe_length, toe_height)
    }

    /// `body`, its ankles `ankle_height` over the floor.
    fn stick_body(ankle_height: f32, toe_length: Option<f32>, toe_height: f32) -> BodyProportions {
        use HumanBone as B;
        let mut positions = [None; BONE_COUNT];
        let mut put =
            |b: B, x: f32, y: f32, z: f32| positions[b.index()] = Some(Vec3::new(x, y, z));
        put(B::Hips, 0.0, 1.0, 0.0);
        for (side, x) in [(0, 1.0), (1, -1.0)] {
            let pick = |l: B, r: B| if side == 0 { l } else { r };
            put(pick(B::LeftUpperLeg, B::RightUpperLeg), 0.1 * x, 0.95, 0.0);
            put(pick(B::LeftLowerLeg, B::RightLowerLeg), 0.1 * x, 0.5, 0.0);
            put(pick(B::LeftFoot, B::RightFoot), 0.1 * x, ankle_height, 0.0);
            if let Some(length) = toe_length {
                put(pick(B::LeftToes, B::RightToes), 0.1 * x, toe_height, length);
            }
            put(pick(B::LeftUpperArm, B::RightUpperArm), 0.2 * x, 1.5, 0.0);
            put(pick(B::LeftLowerArm, B::RightLowerArm), 0.5 * x, 1.5, 0.0);
            put(pick(B::LeftHand, B::RightHand), 0.8 * x, 1.5, 0.0);
        }
        BodyProportions::from_positions(&positions, 1.0)
    }

    /// Mocap mode run for a second at 60 Hz on `pose`; the result on `target`.
    fn settle(
        source: &BodyProportions,
        target: &BodyProportions,
        pose: &HumanoidPose,
    ) -> BodyFrame {
        let config = MocapIkConfig::default();
        let mut state = MocapIkState::default();
        let mut solved = *pose;
        for _ in 0..60 {
            solved = *pose;
            MocapIk {
                config: &config,
                source,
                target,
                dt: 1.0 / 60.0,
                state: &mut state,
                pose: &mut solved,
            }
            .run()
            .expect("runs");
        }
        let mut frame = BodyFrame::default();
        frame.update(target, &solved);
        frame
    }

    #[test]
    fn the_body_stands_on_the_source_floor_not_its_model_origin() {
        // The capture stands 5 cm above its rig's floor: the avatar stands as it does
        // when the capture stands on it, feet on its own floor.
        let (source, target) = (body(Some(0.12)), body(Some(0.12)));
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::Y;
        let on_floor = settle(&source, &target, &pose);
        pose.hips_position = Vec3::new(0.0, 1.05, 0.0);
        let floating = settle(&source, &target, &pose);
        for bone in [HumanBone::Hips, HumanBone::LeftFoot, HumanBone::RightToes] {
            let (a, b) = (on_floor.position(bone), floating.position(bone));
            assert!(a.distance(b) < 1e-3, "{bone}: {a} against {b}");
        }
        let foot = on_floor.position(HumanBone::LeftFoot);
        assert!((foot.y - 0.08).abs() < 1e-3, "{foot}");
    }

    #[test]
    fn a_foot_standing_on_a_box_is_planted_once_the_box_is_known() {
        // The right foot on the floor, the left up on a box: the thigh raised 60°
        // and the shin hanging straight down puts its ankle 22.5 cm over its rest
        // height, more than `contact_height` (10 cm). Standing there, it is planted
        // once it has stood for `STANDING` and the patch for `LEVEL_SECONDS` (the
        // box's level), not before.
        let source = body(Some(0.12));
        let config = MocapIkConfig::default();
        let mut state = MocapIkState::default();
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::Y;
        pose.set_rotation(
            HumanBone::LeftUpperLeg,
            Quat::from_rotation_x(-60f32.to_radians()),
        );
        pose.set_rotation(
            HumanBone::LeftLowerLeg,
            Quat::from_rotation_x(60f32.to_radians()),
        );
        let dt = 1.0 / 60.0;
        let mut planted_at = None;
        for i in 0..60 {
            let mut solved = pose;
            MocapIk {
                config: &config,
                source: &source,
                target: &source,
                dt,
                state: &mut state,
                pose: &mut solved,
            }
            .run()
            .expect("runs");
            let ankle = state.source_frame.position(HumanBone::LeftFoot);
            assert!((ankle.y - 0.305).abs() < 1e-3, "{ankle}");
            assert!(state.is_planted(1) || i == 0, "frame {i}");
            if state.is_planted(0) && planted_at.is_none() {
                planted_at = Some(i as f32 * dt);
            }
        }
        let known = STANDING + LEVEL_SECONDS;
        // Within half a walking stance (0.6 s at two steps a second): the first
        // stance on a step is planted for its second half.
        assert!(known <= 0.3 + 1e-6, "known after {known} s");
        let at = planted_at.expect("planted on the box");
        assert!(
            at >= known - 2.0 * dt && at <= known + 2.0 * dt,
            "planted at {at} s"
        );
        assert!(state.is_planted(0));
    }

    #[test]
    fn a_toe_the_legs_put_under_the_floor_is_lifted_by_pitching_the_foot() {
        // Heels raised, the feet pitched toe-down by 40° with the source's toes on its
        // floor (the hips up by what the pitch lifts the ankles): a foot twice as long
        // keeps its toes at their rest height, the ankles where the source's are. Without
        // toes in the source, its floor is the ankles' and the toes are kept at theirs.
        let pitch = 40f32.to_radians();
        let raise = 0.06 * pitch.cos() + 0.12 * pitch.sin() - 0.06;
        for (source, ankle) in [(body(Some(0.12)), 0.08 + raise), (body(None), 0.08)] {
            let target = body(Some(0.24));
            let mut pose = HumanoidPose::default();
            pose.hips_position = Vec3::new(0.0, 1.0 + raise, 0.0);
            for foot in [HumanBone::LeftFoot, HumanBone::RightFoot] {
                pose.set_rotation(foot, Quat::from_rotation_x(pitch));
            }
            let frame = settle(&source, &target, &pose);
            for (foot, toe) in [
                (HumanBone::LeftFoot, HumanBone::LeftToes),
                (HumanBone::RightFoot, HumanBone::RightToes),
            ] {
                assert!(
                    frame.position(toe).y > 0.02 - 1e-4,
                    "{}",
                    frame.position(toe)
                );
                let at = frame.position(foot);
                assert!((at.y - ankle).abs() < 1e-3, "{at}, wanted {ankle}");
            }
        }
    }

    #[test]
    fn a_target_whose_toes_rest_under_its_floor_is_solved() {
        // Toes resting a rounding error under the floor (the avatar's lowest joint) or
        // 0.4 mm under a VRM's origin: the toe is asked no lower than the floor, and
        // mocap mode runs (it asked for a height between 0 and a negative rest, and
        // panicked).
        let source = body(Some(0.12));
        for toe_height in [-3e-8, -4e-4] {
            let target = body_with_toes_at(Some(0.12), toe_height);
            let rest = target.rest_height(HumanBone::LeftToes);
            assert!(rest < 0.0, "{rest}");
            let mut pose = HumanoidPose::default();
            pose.hips_position = Vec3::Y;
            let frame = settle(&source, &target, &pose);
            for toe in [HumanBone::LeftToes, HumanBone::RightToes] {
                let at = frame.position(toe);
                assert!(at.y > toe_height - 1e-4 && at.y < 1e-3, "{toe}: {at}");
            }
        }
    }

    #[test]
    fn an_ankle_resting_on_the_floor_is_not_asked_under_it() {
        // The source's feet pitched toes up by 20°: its soles (the toes) 4.5 cm over
        // their rest, so its floor is there and its ankles 4.5 cm nearer it than their
        // rest height. A target without toes whose ankles rest on its floor keeps
        // them on it, not 4.5 cm under it.
        let source = body(Some(0.12));
        let target = stick_body(0.0, None, 0.0);
        let mut pose = HumanoidPose::default();
        pose.hips_position = Vec3::Y;
        for foot in [HumanBone::LeftFoot, HumanBone::RightFoot] {
            pose.set_rotation(foot, Quat::from_rotation_x(-20f32.to_radians()));
        }
        let frame = settle(&source, &target, &pose);
        for foot in [HumanBone::LeftFoot, HumanBone::RightFoot] {
            let at = frame.position(foot);
            assert!(at.y > -1e-3, "{foot}: {at}");
        }
    }
}
