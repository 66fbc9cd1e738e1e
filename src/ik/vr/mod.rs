//! VR mode: a full humanoid pose from a headset, two controllers and whatever
//! trackers are present.
//!
//! Order of a frame (all in the avatar's humanoid model space, device positions
//! scaled by `Calibration::avatar_scale`):
//!
//! 1. Head joint and head rotation from the headset (`Calibration::head`); the neck
//!    takes half of the head's turn (smoothed over `neck_seconds`) relative to the
//!    upper chest, so the neck joint is `P(head) − M(neck)·(T(head) − T(neck))`.
//! 2. Hips: rotation from the hips tracker, else the head's yaw smoothed over
//!    `body_turn_seconds`; the spine (spine, chest, upperChest, equal shares) carries
//!    `spine_share` of the head's tilt, or the chest tracker's rotation, and the twist
//!    between the head's and the hips' yaw. Unless a chest tracker sets the spine,
//!    the neck joint follows where it must be over `torso_seconds` (a neck's length
//!    from the head) and the neck turns to put the head on its target. Without a
//!    hips tracker the hips go where this spine puts the neck joint; with one, the
//!    spine bends toward it (two arc corrections, scaled by `spine_gain`). Whatever
//!    the spine's fixed length leaves is taken up by moving the hips, so the head is
//!    always where the headset says.
//! 3. Shoulders turn up to `shoulder_share` of the way toward a hand beyond
//!    `shoulder_reach` of the arm's length.
//! 4. Arms by `LimbIk` to the wrists, hand rotation from the controllers, elbow pole
//!    from the elbow tracker, else down, back and out from the body, turned with the
//!    controller's roll.
//! 5. Legs by `LimbIk` to the foot trackers, else to planted feet (knee pole from the
//!    knee tracker, else forward between the hips' and the foot's facing), softened by
//!    `leg_softness`. A step lands on the foot's footprint (where it stands under the
//!    hips) `step_lead` seconds of the hips' motion ahead, lifted by `step_height`.
//!    While the hips move faster than `gait_speed` the feet walk (`Gait`): the head
//!    sways over the foot the body stands on, each change of side makes the other
//!    foot step, and a step takes the time between changes. Standing, or when the
//!    sway says nothing, a foot steps once its landing is more than `step_distance`
//!    of the user's height away, over `step_seconds`, one foot at a time.
//!
//! After the arms, `forearm_twist` of each hand's roll moves into the lower arm.

mod arms;
mod config;
mod devices;
mod follower;
mod gait;
mod legs;
mod torso;
mod turns;

pub use config::VrIkConfig;
pub use devices::VrInput;

use glam::{Quat, Vec3};

use super::IkError;
use super::body::{BodyFrame, BodyProportions, LIMBS, Limb, TORSO};
use super::calibration::Calibration;
use super::limb::LimbIk;
use crate::humanoid::DevicePose;
use crate::humanoid::{HumanBone, HumanoidPose};
use arms::{share_forearm_twist, shoulder_to_reach};
use follower::Follower;
use gait::Gait;
use legs::{LAND_WITHIN, PlantedFoot, UPRIGHT};
use torso::{set_neck_and_head, spine_gain, top_of_spine};
use turns::{JUMP, wrap, yaw_of};

/// What VR mode carries from frame to frame for one performer, and its scratch
/// space. Made when the performer is added; `reset` after a jump.
#[derive(Debug, Clone, Default)]
pub struct VrIkState {
    feet: [PlantedFoot; 2],
    started: bool,
    /// Last frame's hips and their smoothed horizontal velocity.
    hips: Vec3,
    hips_velocity: Vec3,
    /// Last frame's head joint, the head's turn smoothed for the torso, and the
    /// smoothed yaw the body faces without a hips tracker.
    head: Vec3,
    head_turn: Quat,
    body_yaw: f32,
    /// Where the neck joint was aimed without a hips tracker.
    neck_goal: Follower,
    gait: Gait,
    /// Forward kinematics of the result: `TORSO` and `LIMBS` (the eyes, jaw, toes and
    /// fingers are stale).
    pub frame: BodyFrame,
}

impl VrIkState {
    /// Forgets the planted feet (they are put under the hips on the next frame).
    pub fn reset(&mut self) {
        self.started = false;
    }

    /// Whether the left (0) or right (1) untracked foot is planted (not stepping).
    #[must_use]
    pub fn is_planted(&self, foot: usize) -> bool {
        self.feet.get(foot).is_some_and(|f| f.progress.is_none())
    }
}

/// VR-mode IK on one frame: devices in, a whole normalized pose out, ready for
/// `FromNormalized`.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct VrIk<'a> {
    pub config: &'a VrIkConfig,
    /// The avatar, built once.
    pub body: &'a BodyProportions,
    pub calibration: &'a Calibration,
    pub input: &'a VrInput,
    /// Seconds since the previous frame.
    pub dt: f32,
    pub state: &'a mut VrIkState,
    /// Out: replaced by every body bone's rotation and the hips position (avatar
    /// metres, `rest_hips_height` the avatar's); fingers and toes at rest.
    pub pose: &'a mut HumanoidPose,
}

const SPINE: [HumanBone; 3] = [HumanBone::Spine, HumanBone::Chest, HumanBone::UpperChest];
const ARMS: [(Limb, HumanBone); 2] = [
    (Limb::LeftArm, HumanBone::LeftShoulder),
    (Limb::RightArm, HumanBone::RightShoulder),
];
const LEGS: [Limb; 2] = [Limb::LeftLeg, Limb::RightLeg];

fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

impl VrIk<'_> {
    /// Rejects a bad interval, calibration, settings, non-finite (or zero) device
    /// positions and rotations, and a body without hips, head or limbs.
    pub fn validate(&self) -> Result<(), IkError> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(IkError::BadInterval(self.dt));
        }
        for h in [self.body.rest_hips_height(), self.calibration.height] {
            if !(h.is_finite() && h > 0.0) {
                return Err(IkError::BadHipsHeight(h));
            }
        }
        for bone in [HumanBone::Hips, HumanBone::Head] {
            if !self.body.has(bone) {
                return Err(IkError::MissingBone(bone));
            }
        }
        for limb in Limb::ALL {
            if let Some(b) = limb.bones().into_iter().find(|b| !self.body.has(*b)) {
                return Err(IkError::MissingBone(b));
            }
        }
        let c = self.config;
        let cal = self.calibration;
        for softness in [c.softness, c.leg_softness, c.tracked_leg_softness] {
            if !(0.0..1.0).contains(&softness) {
                return Err(IkError::BadSoftness(softness));
            }
        }
        for w in [c.spine_share, c.shoulder_share, c.forearm_twist] {
            if !(0.0..=1.0).contains(&w) {
                return Err(IkError::BadWeight(w));
            }
        }
        let i = self.input;
        let positions = [i.head.position, i.hands[0].position, i.hands[1].position]
            .into_iter()
            .chain(i.hips.map(|d| d.position))
            .chain(i.chest.map(|d| d.position))
            .chain(i.feet.iter().flatten().map(|d| d.position))
            .chain(i.elbows.iter().flatten().copied())
            .chain(i.knees.iter().flatten().copied());
        for p in positions {
            if !p.is_finite() {
                return Err(IkError::BadTarget(p));
            }
        }
        // Rotations: a non-finite or zero one would poison the pose.
        let rotations = [i.head, i.hands[0], i.hands[1]]
            .into_iter()
            .chain(i.hips)
            .chain(i.chest)
            .chain(i.feet.iter().flatten().copied())
            .map(|d| d.rotation)
            .chain([
                cal.head_rotation,
                cal.hand_rotations[0],
                cal.hand_rotations[1],
            ]);
        for r in rotations {
            if !(r.is_finite() && r.length() > 0.5) {
                return Err(IkError::BadTarget(Vec3::new(r.x, r.y, r.z)));
            }
        }
        let offsets = [cal.head_to_eye, cal.wrist_offsets[0], cal.wrist_offsets[1]];
        if let Some(o) = offsets.into_iter().find(|o| !o.is_finite()) {
            return Err(IkError::BadTarget(o));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let VrIk {
            config: c,
            body,
            calibration: cal,
            input,
            dt,
            state,
            pose,
        } = self;
        let s = cal.avatar_scale(body);
        let scaled = |d: DevicePose| DevicePose::new(d.position * s, d.rotation);
        let head = scaled(cal.head(&input.head));
        let hands = [0, 1].map(|i| scaled(cal.hand(i, &input.hands[i])));
        let hips_tracker = input.hips.map(scaled);

        *pose = HumanoidPose::default();
        pose.rest_hips_height = body.rest_hips_height();
        // The torso follows the head's turn smoothed over `neck_seconds` (the head
        // itself turns exactly), and without a hips tracker the body faces where the
        // head has been facing over the last `body_turn_seconds`: a glance aside
        // turns the neck and spine, not the hips.
        let settle = |seconds: f32| (dt / seconds.max(1e-3)).min(1.0);
        // A head that jumped (a teleport, a lost and found headset) starts the
        // smoothing afresh.
        let smooth = state.started
            && head.position.distance(state.head) < JUMP * cal.height * s
            && state.head_turn.angle_between(head.rotation) < std::f32::consts::FRAC_PI_2;
        state.head = head.position;
        if smooth {
            state.head_turn = state
                .head_turn
                .slerp(head.rotation, settle(c.neck_seconds))
                .normalize();
        } else {
            state.head_turn = head.rotation;
        }
        let head_turn = state.head_turn;
        let facing = yaw_of(head_turn);
        let head_yaw = Quat::from_rotation_y(facing);
        if smooth {
            state.body_yaw += wrap(facing - state.body_yaw) * settle(c.body_turn_seconds);
        } else {
            state.body_yaw = facing;
        }
        let body_turn = Quat::from_rotation_y(state.body_yaw);
        let hips_rotation = hips_tracker.map_or(body_turn, |t| t.rotation.normalize());
        let hips_yaw = Quat::from_rotation_y(yaw_of(hips_rotation));
        pose.set_rotation(HumanBone::Hips, hips_rotation);

        // 2. The spine's turn on top of the hips: chest tracker, or a share of the
        // head's tilt plus the twist between head and hips.
        let spine: [Option<HumanBone>; 3] = SPINE.map(|b| body.has(b).then_some(b));
        let spine_count = spine.iter().flatten().count();
        let tilt = head_turn * head_yaw.conjugate();
        let mut turn = match input.chest {
            Some(chest) => chest.rotation * hips_rotation.conjugate(),
            None => {
                let share = if hips_tracker.is_some() {
                    0.0
                } else {
                    c.spine_share
                };
                Quat::IDENTITY.slerp(tilt, share) * head_yaw * hips_yaw.conjugate()
            }
        }
        .normalize();
        let set_spine = |pose: &mut HumanoidPose, turn: Quat| {
            if spine_count == 0 {
                return;
            }
            let part = Quat::IDENTITY.slerp(turn, 1.0 / spine_count as f32);
            // Each present spine bone turns by `part` in model space: in its parent's
            // frame that is H⁻¹·part·H, H the hips' rotation (the parts commute).
            let local = (hips_rotation.conjugate() * part * hips_rotation).normalize();
            for bone in spine.iter().flatten() {
                pose.set_rotation(*bone, local);
            }
        };
        set_spine(pose, turn);
        let frame = &mut state.frame;
        frame.update_bones(body, pose, &TORSO);
        // Neck and head.
        let chest_top = top_of_spine(&spine, frame, hips_rotation);
        let neck_model = set_neck_and_head(pose, body, chest_top, head_turn, head.rotation);
        let neck_bone = if body.has(HumanBone::Neck) {
            HumanBone::Neck
        } else {
            HumanBone::Head
        };
        let neck_target = if body.has(HumanBone::Neck) {
            head.position
                - neck_model
                    * (body.rest_position(HumanBone::Head) - body.rest_position(HumanBone::Neck))
        } else {
            head.position
        };
        frame.update_bones(body, pose, &TORSO);
        // Unless a chest tracker sets the spine, the neck joint follows its target
        // smoothed over `torso_seconds`, ahead of its own motion, and kept a neck's
        // length from the head (the neck then turns to put the head on its target).
        // Without a hips tracker the hips go where this spine puts the neck joint
        // (the frame was made with the hips at the origin); with one, the spine bends
        // toward it.
        let aim_neck = (hips_tracker.is_none() || input.chest.is_none())
            && body.has(HumanBone::Neck)
            && c.torso_seconds > 0.0
            && smooth;
        let neck_target = if aim_neck {
            let goal = state.neck_goal.follow(neck_target, c.torso_seconds, dt);
            let neck_length =
                body.rest_position(HumanBone::Head) - body.rest_position(HumanBone::Neck);
            head.position - (head.position - goal).normalize_or_zero() * neck_length.length()
        } else {
            state.neck_goal.reset(neck_target)
        };
        pose.hips_position = match hips_tracker {
            Some(t) => t.position,
            None => neck_target - (frame.position(neck_bone) - frame.position(HumanBone::Hips)),
        };
        frame.update_bones(body, pose, &TORSO);
        if input.chest.is_none() && hips_tracker.is_some() {
            // The spine bends toward the neck joint: two arc corrections about the
            // hips, each scaled by `spine_gain` since the spine's shares turn the
            // neck joint less than a turn of the whole spine would.
            let gain = spine_gain(body, &spine, neck_bone);
            for _ in 0..2 {
                let hips = frame.position(HumanBone::Hips);
                let now = frame.position(neck_bone) - hips;
                let want = neck_target - hips;
                if let (Some(a), Some(b)) = (now.try_normalize(), want.try_normalize()) {
                    // The arc's angle times `gain`, near enough for small arcs (the
                    // vector part scaled: no trigonometry).
                    let arc = Quat::from_rotation_arc(a, b);
                    let arc = Quat::from_xyzw(arc.x * gain, arc.y * gain, arc.z * gain, arc.w);
                    turn = (arc.normalize() * turn).normalize();
                    set_spine(pose, turn);
                    // The neck follows the chest's new turn; keep the head's.
                    frame.update_bones(body, pose, &TORSO);
                    let top = top_of_spine(&spine, frame, hips_rotation);
                    set_neck_and_head(pose, body, top, head_turn, head.rotation);
                    frame.update_bones(body, pose, &TORSO);
                }
            }
        }
        if aim_neck {
            let neck_at = frame.position(HumanBone::Neck);
            let now = frame.position(HumanBone::Head) - neck_at;
            if let (Some(a), Some(b)) = (
                now.try_normalize(),
                (head.position - neck_at).try_normalize(),
            ) {
                let parent = HumanBone::Neck
                    .parent()
                    .map_or(Quat::IDENTITY, |p| frame.rotation(p));
                let neck_model =
                    (Quat::from_rotation_arc(a, b) * frame.rotation(HumanBone::Neck)).normalize();
                pose.set_rotation(
                    HumanBone::Neck,
                    (parent.conjugate() * neck_model).normalize(),
                );
                pose.set_rotation(
                    HumanBone::Head,
                    (neck_model.conjugate() * head.rotation).normalize(),
                );
                frame.update_bones(body, pose, &TORSO[4..]);
            }
        }
        // Whatever is left: move the hips so the head is exactly on its target.
        let miss = head.position - frame.position(HumanBone::Head);
        pose.hips_position += miss;
        frame.translate_bones(miss, &TORSO);
        frame.update_bones(body, pose, &LIMBS);

        // 3, 4. Shoulders and arms.
        for (side, (limb, shoulder)) in ARMS.into_iter().enumerate() {
            let [upper, lower, hand] = limb.bones();
            let wrist = hands[side];
            if body.has(shoulder) && c.shoulder_share > 0.0 {
                let (l1, l2) = body.limb_lengths(limb);
                let joint = frame.position(shoulder);
                let arm_root = frame.position(upper);
                let reach = arm_root.distance(wrist.position) / (l1 + l2);
                // A raised hand (level or above the shoulder) turns the shoulder by
                // its share; a hanging one does not (the clavicle stays put when
                // the arm hangs), unless it is out of reach (`shoulder_to_reach`).
                let raised =
                    ((wrist.position.y - arm_root.y) / (l1 + l2) * 2.0 + 1.0).clamp(0.0, 1.0);
                let share = ((reach - c.shoulder_reach) / (1.0 - c.shoulder_reach).max(1e-3))
                    .clamp(0.0, 1.0)
                    * c.shoulder_share
                    * raised;
                let amount = share.max(shoulder_to_reach(
                    arm_root - joint,
                    wrist.position - joint,
                    (l1 + l2) * 0.999,
                    c.shoulder_share,
                ));
                if let (Some(a), Some(b)) = (
                    (arm_root - joint).try_normalize(),
                    (wrist.position - joint).try_normalize(),
                ) && amount > 0.0
                {
                    let lift = Quat::IDENTITY.slerp(Quat::from_rotation_arc(a, b), amount);
                    let parent = shoulder
                        .parent()
                        .map_or(Quat::IDENTITY, |p| frame.rotation(p));
                    let model = (lift * frame.rotation(shoulder)).normalize();
                    pose.set_rotation(shoulder, (parent.conjugate() * model).normalize());
                    frame.update_bones(body, pose, &[shoulder, upper, lower, hand]);
                }
            }
            let root = frame.position(upper);
            let sign = if side == 0 { 1.0 } else { -1.0 };
            let pole = input.elbows[side].map_or_else(
                || {
                    let away = hips_yaw * Vec3::new(0.4 * sign, -1.0, -0.6)
                        + wrist.rotation * Vec3::NEG_Z * 0.5;
                    root.lerp(wrist.position, 0.5) + away
                },
                |e| e * s,
            );
            LimbIk {
                body,
                limb,
                target: wrist.position,
                pole,
                end_rotation: Some(wrist.rotation),
                softness: c.softness,
                weight: 1.0,
                frame,
                pose,
            }
            .run()?;
            share_forearm_twist(body, limb, c.forearm_twist, frame, pose);
        }

        // 5. Legs.
        let height = cal.height * s;
        let hips_at = frame.position(HumanBone::Hips);
        let body_yaw = yaw_of(hips_rotation);
        if state.started {
            let v = horizontal(hips_at - state.hips) / dt;
            let k = (dt / 0.1).min(1.0);
            state.hips_velocity = state.hips_velocity.lerp(v, k);
        } else {
            state.hips_velocity = Vec3::ZERO;
            state.gait = Gait::new(horizontal(head.position));
        }
        state.hips = hips_at;
        // Walking: upright (the hips above `UPRIGHT` of their rest height) and moving
        // forward faster than `gait_speed`; `walk` eases it in from half that speed.
        let forward = hips_yaw * Vec3::Z;
        let ahead = state.hips_velocity.dot(forward).max(0.0);
        let upright = hips_at.y > UPRIGHT * body.rest_hips_height();
        let walking = upright && ahead > c.gait_speed * height;
        let walk = if upright {
            (ahead / (c.gait_speed * height).max(1e-3) * 2.0 - 1.0).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let swayed = state.gait.read(c, horizontal(head.position), height, dt);
        // Where each untracked foot goes next: its footprint (where it stands under
        // the hips) plus, while walking, `step_lead` of the hips' forward motion.
        let lead = forward * (ahead * c.step_lead * walk);
        let landing = LEGS.map(|limb| {
            let foot = limb.bones()[2];
            let rest = body.rest_position(foot) - body.rest_position(HumanBone::Hips);
            horizontal(hips_at + hips_yaw * rest) + Vec3::Y * body.rest_height(foot) + lead
        });
        if !state.started {
            for (f, at) in state.feet.iter_mut().zip(landing) {
                *f = PlantedFoot {
                    at,
                    yaw: body_yaw,
                    ..PlantedFoot::default()
                };
            }
        }
        let untracked = [0, 1].map(|side| input.feet[side].is_none());
        let step = |f: &mut PlantedFoot, seconds: f32| {
            f.from = f.at;
            f.from_yaw = f.yaw;
            f.progress = Some(0.0);
            f.seconds = seconds;
        };
        match swayed {
            Some(over) if walking => {
                // Over the left (1): the left foot stands (landing now if it is still
                // stepping) and the right one steps, and the other way round.
                let stance = usize::from(over < 0.0);
                let f = &mut state.feet[stance];
                if let Some(p) = f.progress {
                    f.seconds = f.seconds.min(LAND_WITHIN / (1.0 - p).max(1e-3));
                }
                if untracked[1 - stance] {
                    step(&mut state.feet[1 - stance], state.gait.half_stride);
                }
            }
            _ if (!walking || state.gait.is_stalled())
                && state.feet.iter().all(|f| f.progress.is_none()) =>
            {
                // No gait to go by: the foot farther than `step_distance` of the
                // height from where it should land steps (one at a time).
                let off =
                    [0, 1].map(|side| horizontal(state.feet[side].at - landing[side]).length());
                if let Some(side) = [0, 1]
                    .into_iter()
                    .filter(|&side| untracked[side] && off[side] > c.step_distance * height)
                    .max_by(|&a, &b| off[a].total_cmp(&off[b]))
                {
                    step(&mut state.feet[side], c.step_seconds);
                }
            }
            _ => {}
        }
        for (side, limb) in LEGS.into_iter().enumerate() {
            let [upper, _, _] = limb.bones();
            let (target, rotation) = match input.feet[side] {
                Some(t) => {
                    let t = scaled(t);
                    state.feet[side] = PlantedFoot {
                        at: t.position,
                        yaw: yaw_of(t.rotation),
                        ..PlantedFoot::default()
                    };
                    (t.position, t.rotation)
                }
                None => {
                    let f = &mut state.feet[side];
                    if let Some(p) = f.progress {
                        let p = (p + dt / f.seconds.max(1e-3)).min(1.0);
                        // Smootherstep along, 64·p³(1 − p)³ up: no jump in speed or
                        // acceleration where the step starts and ends.
                        let ease = p * p * p * (p * (6.0 * p - 15.0) + 10.0);
                        let q = p * (1.0 - p);
                        f.at = f.from.lerp(landing[side], ease)
                            + Vec3::Y * (64.0 * q * q * q) * c.step_height * height;
                        f.yaw = f.from_yaw + wrap(body_yaw - f.from_yaw) * ease;
                        f.progress = (p < 1.0).then_some(p);
                    }
                    (f.at, Quat::from_rotation_y(f.yaw))
                }
            };
            let root = frame.position(upper);
            // The knee bends forward, between where the hips and the foot face (the
            // foot alone turns too much in a step, heel to toe).
            let pole = input.knees[side].map_or_else(
                || root.lerp(target, 0.5) + hips_rotation * Vec3::Z + rotation * Vec3::Z * 0.5,
                |k| k * s,
            );
            LimbIk {
                body,
                limb,
                target,
                pole,
                end_rotation: Some(rotation),
                softness: if untracked[side] {
                    c.leg_softness * walk
                } else {
                    c.tracked_leg_softness
                },
                weight: 1.0,
                frame,
                pose,
            }
            .run()?;
        }
        state.started = true;
        Ok(())
    }
}
