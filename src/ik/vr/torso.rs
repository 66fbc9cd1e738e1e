//! Stage 2 of a frame: the torso. The spine turns on top of the hips (the chest
//! tracker's rotation, or a share of the head's tilt plus a share of the twist
//! between the head's and the hips' yaw, leaning forward in a crouch), the neck
//! takes half of the head's turn, and the hips go where this spine puts the head on
//! the headset;
//! with a hips tracker the spine bends toward the neck joint instead. Whatever the
//! spine's fixed length leaves is taken up by moving the hips, so the head is
//! always where the headset says.
//!
//! In: the calibrated devices and this frame's turns. Out: the torso's rotations and
//! the hips position in the pose; `TORSO` and `LIMBS` of the frame up to date.

use glam::{Quat, Vec3};

use super::FrameInputs;
use super::follower::{Follower, settle};
use crate::humanoid::{HumanBone, HumanoidPose};
use crate::ik::body::{BodyFrame, BodyProportions, LIMBS, TORSO};

/// The spine bones, hips to upper chest.
const SPINE: [HumanBone; 3] = [HumanBone::Spine, HumanBone::Chest, HumanBone::UpperChest];

/// The most a crouch leans the spine forward, radians (45°, a deep squat's).
const MAX_LEAN: f32 = std::f32::consts::FRAC_PI_4;

/// Places the torso for one frame (see the module header).
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic. Its
/// inputs are checked by `VrIk::validate`.
pub(super) struct PlaceTorso<'a> {
    /// Settings, avatar, devices and turns of this frame.
    pub(super) inputs: FrameInputs<'a>,
    /// Where the neck joint was aimed last frame; moved on, or reset.
    pub(super) neck_goal: &'a mut Follower,
    /// The head's drop below its standing height, avatar metres, smoothed over
    /// `crouch_seconds`; moved on, or reset.
    pub(super) crouch: &'a mut f32,
    /// In: anything. Out: `TORSO` and `LIMBS` of `pose`.
    pub(super) frame: &'a mut BodyFrame,
    /// In: the hips' rotation set, everything else at rest. Out: spine, neck and
    /// head rotations and the hips position set.
    pub(super) pose: &'a mut HumanoidPose,
}

/// The spine bones a body has and the hips' rotation they turn on.
struct Spine {
    /// Spine, chest, upper chest: `None` where the body has none.
    bones: [Option<HumanBone>; 3],
    /// How many of them the body has.
    count: usize,
    /// The hips' model rotation.
    hips_rotation: Quat,
}

impl Spine {
    fn new(body: &BodyProportions, hips_rotation: Quat) -> Self {
        let bones = SPINE.map(|b| body.has(b).then_some(b));
        let count = bones.iter().flatten().count();
        Self {
            bones,
            count,
            hips_rotation,
        }
    }

    /// Turns the spine by `turn` (model space) on top of the hips, in equal shares:
    /// each present bone turns by `part = slerp(1, turn, 1/n)` in model space; in its
    /// parent's frame that is `H⁻¹·part·H`, H the hips' rotation (the parts commute).
    fn set(&self, pose: &mut HumanoidPose, turn: Quat) {
        if self.count == 0 {
            return;
        }
        let part = Quat::IDENTITY.slerp(turn, 1.0 / self.count as f32);
        let local = (self.hips_rotation.conjugate() * part * self.hips_rotation).normalize();
        for bone in self.bones.iter().flatten() {
            pose.set_rotation(*bone, local);
        }
    }

    /// Model rotation of the highest spine bone the body has (the hips' when none).
    fn top(&self, frame: &BodyFrame) -> Quat {
        self.bones
            .iter()
            .rev()
            .flatten()
            .next()
            .map_or(self.hips_rotation, |b| frame.rotation(*b))
    }

    /// How much farther than the arc about the hips the spine's turn must go for the
    /// neck joint (`end`) to follow it: turning the spine's `n` bones by `δ/n` each
    /// moves the neck joint by `δ/n · Σ |T(neck) − T(bone)|` (straight, small turns),
    /// a turn of everything about the hips by `δ · |T(neck) − T(hips)|`; their ratio,
    /// at least 1.
    fn gain(&self, body: &BodyProportions, end: HumanBone) -> f32 {
        let top = body.rest_position(end);
        let (mut sum, mut n) = (0.0, 0.0);
        for bone in self.bones.iter().flatten() {
            sum += top.distance(body.rest_position(*bone));
            n += 1.0;
        }
        let whole = top.distance(body.rest_position(HumanBone::Hips));
        if sum > 0.0 {
            (whole * n / sum).max(1.0)
        } else {
            1.0
        }
    }
}

impl PlaceTorso<'_> {
    pub(super) fn run(mut self) {
        let spine = Spine::new(self.inputs.body, self.inputs.turns.hips);
        let turn = self.turn_spine(&spine);
        let neck_bone = if self.inputs.body.has(HumanBone::Neck) {
            HumanBone::Neck
        } else {
            HumanBone::Head
        };
        let neck_target = self.neck_and_head(&spine);
        // Unless a chest tracker sets the spine, the neck joint is aimed (see
        // `aim_neck_joint`) and the neck then turns to put the head on its target.
        let (c, devices) = (self.inputs.config, self.inputs.devices);
        let seconds = match devices.hips {
            Some(_) => c.tracked_torso_seconds,
            None => c.torso_seconds,
        };
        let aim_neck = (devices.hips.is_none() || devices.chest.is_none())
            && self.inputs.body.has(HumanBone::Neck)
            && seconds > 0.0;
        let neck_target = if aim_neck {
            self.aim_neck_joint(neck_target, seconds)
        } else {
            self.neck_goal.reset(neck_target)
        };
        self.place_hips(neck_bone, neck_target);
        if self.inputs.devices.chest.is_none() && self.inputs.devices.hips.is_some() {
            self.bend_spine(&spine, turn, neck_bone, neck_target);
        }
        if aim_neck {
            self.turn_neck_to_head();
        }
        self.put_head_on_target();
    }

    /// The spine's turn on top of the hips, set on the pose: the chest tracker's
    /// `C·H⁻¹`, else `slerp(1, tilt, share)·slerp(1, Y(head)·Y(hips)⁻¹,
    /// spine_twist)` with `tilt = head·Y(head)⁻¹`, the share `spine_share` without a
    /// hips tracker and 0 with one: the spine carries `spine_twist` of the head's
    /// yaw relative to the hips, and the neck and head (`set_neck_and_head`) turn
    /// the rest of the way. Returns the turn.
    fn turn_spine(&mut self, spine: &Spine) -> Quat {
        let turns = self.inputs.turns;
        let tilt = turns.head * turns.head_yaw.conjugate();
        let turn = match self.inputs.devices.chest {
            Some(chest) => chest * turns.hips.conjugate(),
            None => {
                let share = if self.inputs.devices.hips.is_some() {
                    0.0
                } else {
                    self.inputs.config.spine_share
                };
                let lean = match self.inputs.devices.hips {
                    Some(_) => Quat::IDENTITY,
                    None => self.crouch_lean(spine),
                };
                let twist = turns.head_yaw * turns.hips_yaw.conjugate();
                lean * Quat::IDENTITY.slerp(tilt, share)
                    * Quat::IDENTITY.slerp(twist, self.inputs.config.spine_twist)
            }
        }
        .normalize();
        spine.set(self.pose, turn);
        self.frame.update_bones(self.inputs.body, self.pose, &TORSO);
        turn
    }

    /// A head below its standing height is a crouch: the knees bend and the hips go
    /// back, so the spine leans forward about the hips' right axis, its turn
    /// `gain · asin(crouch_back · d / |T(neck) − T(hips)|)` (at most `MAX_LEAN`; the
    /// head joint without a neck), `d` the head's drop below its rest height smoothed
    /// over `crouch_seconds` (the head's bob with each step does not rock the hips),
    /// `gain` the spine's (`Spine::gain`: its shares turn
    /// the neck joint less than a turn of the whole spine would).
    fn crouch_lean(&mut self, spine: &Spine) -> Quat {
        let (body, c) = (self.inputs.body, self.inputs.config);
        let drop = body.rest_height(HumanBone::Head) - self.inputs.devices.head.position.y;
        *self.crouch = if self.inputs.turns.smooth {
            *self.crouch + (drop - *self.crouch) * settle(self.inputs.dt, c.crouch_seconds)
        } else {
            drop
        };
        let neck = if body.has(HumanBone::Neck) {
            HumanBone::Neck
        } else {
            HumanBone::Head
        };
        let length = body
            .rest_position(neck)
            .distance(body.rest_position(HumanBone::Hips));
        // Not `<= 0.0`: a NaN setting leans nothing.
        if !(*self.crouch > 0.0 && length > 0.0 && c.crouch_back > 0.0) {
            return Quat::IDENTITY;
        }
        let arc = (c.crouch_back * *self.crouch / length).min(1.0).asin();
        let angle = (arc * spine.gain(body, neck)).min(MAX_LEAN);
        Quat::from_axis_angle(self.inputs.turns.hips_yaw * Vec3::X, angle)
    }

    /// Sets neck and head on the turned spine (`set_neck_and_head`) and returns where
    /// the neck joint must be for the head to sit on the headset:
    /// `P(head) − M(neck)·(T(head) − T(neck))` (the head joint without a neck).
    fn neck_and_head(&mut self, spine: &Spine) -> Vec3 {
        let (body, head) = (self.inputs.body, self.inputs.devices.head);
        let chest_top = spine.top(self.frame);
        let neck_model = set_neck_and_head(
            self.pose,
            body,
            chest_top,
            self.inputs.turns.head,
            head.rotation,
        );
        let neck_target = if body.has(HumanBone::Neck) {
            head.position
                - neck_model
                    * (body.rest_position(HumanBone::Head) - body.rest_position(HumanBone::Neck))
        } else {
            head.position
        };
        self.frame.update_bones(body, self.pose, &TORSO);
        neck_target
    }

    /// The neck joint follows `target` smoothed over `seconds` (`torso_seconds`:
    /// the whole body hangs from it; `tracked_torso_seconds` with a hips tracker:
    /// only the spine bends toward it), ahead of its own motion (`Follower`; on
    /// `target` itself on the first frame and after a jump, so every frame is solved
    /// the same way and the first ones join the rest without a jerk), and is kept a
    /// neck's length from the head:
    /// `P(head) − normalize(P(head) − goal)·|T(head) − T(neck)|`.
    fn aim_neck_joint(&mut self, target: Vec3, seconds: f32) -> Vec3 {
        let (body, head) = (self.inputs.body, self.inputs.devices.head);
        let goal = if self.inputs.turns.smooth {
            self.neck_goal.follow(target, seconds, self.inputs.dt)
        } else {
            self.neck_goal.reset(target)
        };
        let neck_length = body.rest_position(HumanBone::Head) - body.rest_position(HumanBone::Neck);
        head.position - (head.position - goal).normalize_or_zero() * neck_length.length()
    }

    /// The hips at the hips tracker, else where this spine puts the neck joint
    /// (`neck_bone`) on `neck_target`: `target − (P(neck) − P(hips))` (the frame was
    /// made with the hips at the origin).
    fn place_hips(&mut self, neck_bone: HumanBone, neck_target: Vec3) {
        let frame = &mut *self.frame;
        self.pose.hips_position = match self.inputs.devices.hips {
            Some(t) => t.position,
            None => neck_target - (frame.position(neck_bone) - frame.position(HumanBone::Hips)),
        };
        frame.update_bones(self.inputs.body, self.pose, &TORSO);
    }

    /// With a hips tracker and no chest tracker, the spine bends toward the neck
    /// joint's target: two arc corrections about the hips, each scaled by
    /// `Spine::gain` since the spine's shares turn the neck joint less than a turn of
    /// the whole spine would. The neck follows the chest's new turn; the head keeps
    /// its own.
    fn bend_spine(&mut self, spine: &Spine, turn: Quat, neck_bone: HumanBone, neck_target: Vec3) {
        let (body, head, head_turn) = (
            self.inputs.body,
            self.inputs.devices.head,
            self.inputs.turns.head,
        );
        let gain = spine.gain(body, neck_bone);
        let mut turn = turn;
        for _ in 0..2 {
            let hips = self.frame.position(HumanBone::Hips);
            let now = self.frame.position(neck_bone) - hips;
            let want = neck_target - hips;
            if let (Some(a), Some(b)) = (now.try_normalize(), want.try_normalize()) {
                // The arc's angle times `gain`, near enough for small arcs (the
                // vector part scaled: no trigonometry).
                let arc = Quat::from_rotation_arc(a, b);
                let arc = Quat::from_xyzw(arc.x * gain, arc.y * gain, arc.z * gain, arc.w);
                turn = (arc.normalize() * turn).normalize();
                spine.set(self.pose, turn);
                self.frame.update_bones(body, self.pose, &TORSO);
                let top = spine.top(self.frame);
                set_neck_and_head(self.pose, body, top, head_turn, head.rotation);
                self.frame.update_bones(body, self.pose, &TORSO);
            }
        }
    }

    /// The neck turns by the arc from where the head is to the headset, about the
    /// neck joint; the head keeps the headset's rotation.
    fn turn_neck_to_head(&mut self) {
        let (frame, head) = (&mut *self.frame, self.inputs.devices.head);
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
            self.pose.set_rotation(
                HumanBone::Neck,
                (parent.conjugate() * neck_model).normalize(),
            );
            self.pose.set_rotation(
                HumanBone::Head,
                (neck_model.conjugate() * head.rotation).normalize(),
            );
            frame.update_bones(self.inputs.body, self.pose, &TORSO[4..]);
        }
    }

    /// Whatever is left: the hips move by `P(headset) − P(head)`, so the head is
    /// exactly on its target; the limbs are then placed on the torso.
    fn put_head_on_target(&mut self) {
        let miss = self.inputs.devices.head.position - self.frame.position(HumanBone::Head);
        self.pose.hips_position += miss;
        self.frame.translate_bones(miss, &TORSO);
        self.frame.update_bones(self.inputs.body, self.pose, &LIMBS);
    }
}

/// Turns the neck halfway from the chest's rotation `top` to `toward` (the head's,
/// smoothed), and the head the rest of the way to `head`; returns the neck's model
/// rotation (`top` without one).
fn set_neck_and_head(
    pose: &mut HumanoidPose,
    body: &BodyProportions,
    top: Quat,
    toward: Quat,
    head: Quat,
) -> Quat {
    let neck_model = if body.has(HumanBone::Neck) {
        let m = top.slerp(toward, 0.5).normalize();
        pose.set_rotation(HumanBone::Neck, (top.conjugate() * m).normalize());
        m
    } else {
        top
    };
    pose.set_rotation(HumanBone::Head, (neck_model.conjugate() * head).normalize());
    neck_model
}
