//! VR mode: a full humanoid pose from a headset, two controllers and whatever
//! trackers are present.
//!
//! Order of a frame (all in the avatar's humanoid model space, device positions
//! scaled by `Calibration::avatar_scale`):
//!
//! 1. Head joint and head rotation from the headset (`Calibration::head`); the neck
//!    takes half of the head's turn relative to the upper chest, so the neck joint is
//!    `P(head) − M(neck)·(T(head) − T(neck))`.
//! 2. Hips: rotation from the hips tracker, else the head's yaw; the spine (spine,
//!    chest, upperChest, equal shares) carries `spine_share` of the head's tilt, or the
//!    chest tracker's rotation, and the twist between the head's and the hips' yaw.
//!    Without a hips tracker the hips go where this spine puts the neck joint where
//!    it must be; with one, the spine bends (two arc corrections) toward the neck
//!    joint. Whatever the spine's fixed length leaves is taken up by moving the hips,
//!    so the head is always where the headset says.
//! 3. Shoulders turn up to `shoulder_share` of the way toward a hand beyond
//!    `shoulder_reach` of the arm's length.
//! 4. Arms by `LimbIk` to the wrists, hand rotation from the controllers, elbow pole
//!    from the elbow tracker, else down, back and out from the body, turned with the
//!    controller's roll.
//! 5. Legs by `LimbIk` to the foot trackers, else to planted feet: a foot stays where
//!    it was put until the hips' footprint (where the foot would stand under the hips)
//!    is more than `step_distance` of the user's height away; it then steps there
//!    over `step_seconds` (one foot at a time), lifted by `step_height`, landing
//!    `step_lead` seconds of the hips' smoothed velocity ahead.
//!
//! After the arms, `forearm_twist` of each hand's roll moves into the lower arm.

use glam::{Quat, Vec3};

use super::IkError;
use super::body::{BodyFrame, BodyProportions, LIMBS, Limb, TORSO};
use super::calibration::{Calibration, DevicePose};
use super::limb::LimbIk;
use crate::humanoid::{HumanBone, HumanoidPose};

/// Per-performer VR-mode settings; every field has a default.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VrIkConfig {
    /// `TwoBoneIk::softness` for all limbs (default 0.0: reachable targets are hit).
    pub softness: f32,
    /// Share of the head's tilt the spine carries without a hips tracker (default 0.1).
    pub spine_share: f32,
    /// How far the shoulders turn toward a far hand, 0..=1 (default 0.3).
    pub shoulder_share: f32,
    /// A hand farther than this fraction of the arm's reach turns the shoulder
    /// (default 0.9).
    pub shoulder_reach: f32,
    /// A planted foot steps when its footprint is this far away, fraction of the
    /// user's height (default 0.12).
    pub step_distance: f32,
    /// Share of the hand's roll the lower arm takes (default 0.8).
    pub forearm_twist: f32,
    /// A step lands this many seconds of hips motion ahead of the footprint
    /// (default 0: on the CMU walk any lead raised the error).
    pub step_lead: f32,
    /// Seconds a step takes (default 0.25).
    pub step_seconds: f32,
    /// How high a stepping foot lifts, fraction of the height (default 0.03).
    pub step_height: f32,
}

impl Default for VrIkConfig {
    fn default() -> Self {
        Self {
            softness: 0.0,
            spine_share: 0.1,
            shoulder_share: 0.3,
            shoulder_reach: 0.9,
            step_distance: 0.12,
            forearm_twist: 0.8,
            step_lead: 0.0,
            step_seconds: 0.25,
            step_height: 0.03,
        }
    }
}

/// One frame of devices, model space, user metres. Rotations of the headset and
/// controllers are raw (the calibration removes their mount); trackers give the
/// tracked joint's position and the bone's rotation relative to its T-pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VrInput {
    pub head: DevicePose,
    /// Left, right controller.
    pub hands: [DevicePose; 2],
    pub hips: Option<DevicePose>,
    /// The upper chest (the chest when the body has none).
    pub chest: Option<DevicePose>,
    /// Left, right ankle.
    pub feet: [Option<DevicePose>; 2],
    /// Left, right elbow position (a pole: the elbow bends toward it).
    pub elbows: [Option<Vec3>; 2],
    /// Left, right knee position (a pole).
    pub knees: [Option<Vec3>; 2],
}

/// One untracked foot.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct PlantedFoot {
    /// Where the ankle is (avatar model space) and the foot's yaw.
    at: Vec3,
    yaw: f32,
    /// A step under way: from where, how far along (0 → 1).
    from: Vec3,
    from_yaw: f32,
    progress: Option<f32>,
}

/// What VR mode carries from frame to frame for one performer, and its scratch
/// space. Made when the performer is added; `reset` after a jump.
#[derive(Debug, Clone, Default)]
pub struct VrIkState {
    feet: [PlantedFoot; 2],
    started: bool,
    /// Last frame's hips and their smoothed horizontal velocity.
    hips: Vec3,
    hips_velocity: Vec3,
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

/// Turn about +Y that faces +Z toward `forward`'s horizontal part, radians.
fn yaw_of(rotation: Quat) -> f32 {
    let f = rotation * Vec3::Z;
    if f.x.abs() + f.z.abs() < 1e-4 {
        // Looking straight up or down: the head's up points where it faces.
        let u = rotation * Vec3::Y;
        return (-u.x * f.y.signum()).atan2(-u.z * f.y.signum());
    }
    f.x.atan2(f.z)
}

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
        if !(0.0..1.0).contains(&c.softness) {
            return Err(IkError::BadSoftness(c.softness));
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
        let head_yaw = Quat::from_rotation_y(yaw_of(head.rotation));
        let hips_rotation = hips_tracker.map_or(head_yaw, |t| t.rotation.normalize());
        let hips_yaw = Quat::from_rotation_y(yaw_of(hips_rotation));
        pose.set_rotation(HumanBone::Hips, hips_rotation);

        // 2. The spine's turn on top of the hips: chest tracker, or a share of the
        // head's tilt plus the twist between head and hips.
        let spine: [Option<HumanBone>; 3] = SPINE.map(|b| body.has(b).then_some(b));
        let spine_count = spine.iter().flatten().count();
        let tilt = head.rotation * head_yaw.conjugate();
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
        let neck_model = set_neck_and_head(pose, body, chest_top, head.rotation);
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
        match hips_tracker {
            None => {
                // The frame was made with the hips at the origin: move it along.
                let hips =
                    neck_target - (frame.position(neck_bone) - frame.position(HumanBone::Hips));
                frame.translate_bones(hips - frame.position(HumanBone::Hips), &TORSO);
                pose.hips_position = hips;
            }
            Some(t) if input.chest.is_none() => {
                pose.hips_position = t.position;
                for _ in 0..2 {
                    frame.update_bones(body, pose, &TORSO);
                    let hips = frame.position(HumanBone::Hips);
                    let now = frame.position(neck_bone) - hips;
                    let want = neck_target - hips;
                    if let (Some(a), Some(b)) = (now.try_normalize(), want.try_normalize()) {
                        turn = (Quat::from_rotation_arc(a, b) * turn).normalize();
                        set_spine(pose, turn);
                        // The neck follows the chest's new turn; keep the head's.
                        frame.update_bones(body, pose, &TORSO);
                        let top = top_of_spine(&spine, frame, hips_rotation);
                        set_neck_and_head(pose, body, top, head.rotation);
                    }
                }
            }
            Some(t) => pose.hips_position = t.position,
        }
        if hips_tracker.is_some() {
            frame.update_bones(body, pose, &TORSO);
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
                let amount = ((reach - c.shoulder_reach) / (1.0 - c.shoulder_reach).max(1e-3))
                    .clamp(0.0, 1.0)
                    * c.shoulder_share;
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
        let mut stepping = state.feet.iter().any(|f| f.progress.is_some());
        if state.started {
            let v = horizontal(hips_at - state.hips) / dt;
            let k = (dt / 0.1).min(1.0);
            state.hips_velocity = state.hips_velocity.lerp(v, k);
        } else {
            state.hips_velocity = Vec3::ZERO;
        }
        state.hips = hips_at;
        let lead = state.hips_velocity * c.step_lead;
        for (side, limb) in LEGS.into_iter().enumerate() {
            let [upper, _, foot] = limb.bones();
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
                    let rest = body.rest_position(foot) - body.rest_position(HumanBone::Hips);
                    let print =
                        horizontal(hips_at + hips_yaw * rest) + Vec3::Y * body.rest_height(foot);
                    let landing = print + lead;
                    let f = &mut state.feet[side];
                    if !state.started {
                        *f = PlantedFoot {
                            at: print,
                            yaw: body_yaw,
                            ..PlantedFoot::default()
                        };
                    }
                    if f.progress.is_none()
                        && !stepping
                        && horizontal(f.at - print).length() > c.step_distance * height
                    {
                        f.from = f.at;
                        f.from_yaw = f.yaw;
                        f.progress = Some(0.0);
                        stepping = true;
                    }
                    if let Some(p) = f.progress {
                        let p = (p + dt / c.step_seconds.max(1e-3)).min(1.0);
                        let ease = p * p * (3.0 - 2.0 * p);
                        f.at = f.from.lerp(landing, ease)
                            + Vec3::Y * (std::f32::consts::PI * p).sin() * c.step_height * height;
                        f.yaw = f.from_yaw + wrap(body_yaw - f.from_yaw) * ease;
                        f.progress = (p < 1.0).then_some(p);
                    }
                    (f.at, Quat::from_rotation_y(f.yaw))
                }
            };
            let root = frame.position(upper);
            let pole = input.knees[side]
                .map_or_else(|| root.lerp(target, 0.5) + rotation * Vec3::Z, |k| k * s);
            LimbIk {
                body,
                limb,
                target,
                pole,
                end_rotation: Some(rotation),
                softness: c.softness,
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

/// Moves `share` of the hand's twist about the forearm (its roll relative to the lower
/// arm) into the lower arm. The wrist stays put (the lower arm turns about its own
/// axis) and so does the hand's model rotation.
fn share_forearm_twist(
    body: &BodyProportions,
    limb: Limb,
    share: f32,
    frame: &mut BodyFrame,
    pose: &mut HumanoidPose,
) {
    let [_, lower, hand] = limb.bones();
    let Some(axis) = (body.rest_position(hand) - body.rest_position(lower)).try_normalize() else {
        return;
    };
    let local = pose.rotation_or_identity(hand);
    // Swing-twist: the twist keeps the rotation's vector part along the axis.
    let v = Vec3::new(local.x, local.y, local.z);
    let along = axis * v.dot(axis);
    let twist = Quat::from_xyzw(along.x, along.y, along.z, local.w);
    let norm = twist.length();
    if norm < 1e-6 {
        return;
    }
    let twist = twist / norm;
    let part = Quat::IDENTITY.slerp(twist, share);
    let lower_local = pose.rotation_or_identity(lower);
    pose.set_rotation(lower, (lower_local * part).normalize());
    pose.set_rotation(hand, (part.conjugate() * local).normalize());
    let i = lower.index();
    frame.model_rotations[i] = (frame.model_rotations[i] * part).normalize();
}

/// An angle brought into −π..π.
fn wrap(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}

/// Model rotation of the highest spine bone the body has (the hips' when none).
fn top_of_spine(spine: &[Option<HumanBone>; 3], frame: &BodyFrame, hips_rotation: Quat) -> Quat {
    spine
        .iter()
        .rev()
        .flatten()
        .next()
        .map_or(hips_rotation, |b| frame.rotation(*b))
}

/// Turns the neck halfway from the chest's rotation `top` to the headset's, and the
/// head the rest of the way; returns the neck's model rotation (`top` without one).
fn set_neck_and_head(
    pose: &mut HumanoidPose,
    body: &BodyProportions,
    top: Quat,
    head: Quat,
) -> Quat {
    let neck_model = if body.has(HumanBone::Neck) {
        let m = top.slerp(head, 0.5).normalize();
        pose.set_rotation(HumanBone::Neck, (top.conjugate() * m).normalize());
        m
    } else {
        top
    };
    pose.set_rotation(HumanBone::Head, (neck_model.conjugate() * head).normalize());
    neck_model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaw_survives_looking_straight_down_and_angles_wrap() {
        let yaw = 0.7;
        let level = Quat::from_rotation_y(yaw);
        assert!((yaw_of(level) - yaw).abs() < 1e-5);
        let tilted = level * Quat::from_rotation_x(0.5);
        assert!((yaw_of(tilted) - yaw).abs() < 1e-5);
        let down = level * Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        assert!((yaw_of(down) - yaw).abs() < 1e-3, "{}", yaw_of(down));
        // 3π is π or −π, the same turn.
        assert!((wrap(3.0 * std::f32::consts::PI).abs() - std::f32::consts::PI).abs() < 1e-5);
        assert!((wrap(0.1 - std::f32::consts::TAU) - 0.1).abs() < 1e-5);
    }
}
