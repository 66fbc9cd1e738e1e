//! Stages 3 and 4 of a frame: one arm. The shoulder turns up to `shoulder_share` of
//! the way toward a hand beyond `shoulder_reach` of the arm's length; the arm goes
//! by `LimbIk` to the wrist with the controller's hand rotation, the elbow bending
//! toward the elbow tracker, else across the arm from a hinge out to the side
//! (back for a hanging arm, down and out for one held forward), turned a little with
//! the controller's roll, and toward where the hand's axis points the forearm; then
//! `forearm_twist` of the hand's roll moves into the lower arm. An arm with no controller hangs (`PlaceArm::hang`): the upper arm toward the
//! elbow tracker, else down at the side, the forearm down and a little forward.

use glam::{Quat, Vec3};

use super::VrIkConfig;
use crate::humanoid::{DevicePose, HumanBone, HumanoidPose};
use crate::ik::IkError;
use crate::ik::body::{BodyFrame, BodyProportions, Limb};
use crate::ik::limb::LimbIk;

/// The arms and their shoulders, left then right.
pub(super) const ARMS: [(Limb, HumanBone); 2] = [
    (Limb::LeftArm, HumanBone::LeftShoulder),
    (Limb::RightArm, HumanBone::RightShoulder),
];

/// Places one arm, shoulder to hand, for one frame (see the module header).
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic. Its
/// inputs are checked by `VrIk::validate`.
pub(super) struct PlaceArm<'a> {
    pub(super) config: &'a VrIkConfig,
    /// The avatar, built once.
    pub(super) body: &'a BodyProportions,
    pub(super) limb: Limb,
    /// The arm's shoulder (clavicle) bone.
    pub(super) shoulder: HumanBone,
    /// The wrist joint and the hand's rotation relative to its T-pose, avatar model
    /// space; `None` when no controller holds the hand (the arm hangs).
    pub(super) wrist: Option<DevicePose>,
    /// The elbow tracker's position (a pole), avatar model space.
    pub(super) elbow: Option<Vec3>,
    /// The hips' yaw, a turn about +Y: which way "back" and "out" are.
    pub(super) hips_yaw: Quat,
    /// In: the torso and limbs of `pose`. Out: the arm's bones updated.
    pub(super) frame: &'a mut BodyFrame,
    /// Out: shoulder, upper arm, lower arm and hand rotations set.
    pub(super) pose: &'a mut HumanoidPose,
}

impl PlaceArm<'_> {
    pub(super) fn run(mut self) -> Result<(), IkError> {
        let Some(wrist) = self.wrist else {
            return self.hang();
        };
        if self.body.has(self.shoulder) && self.config.shoulder_share > 0.0 {
            self.turn_shoulder(wrist);
        }
        let pole = self.elbow_pole(wrist);
        let PlaceArm {
            config: c,
            body,
            limb,
            frame,
            pose,
            ..
        } = self;
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
        Ok(())
    }

    /// A raised hand (level or above the shoulder) turns the shoulder by its share
    /// of how far beyond `shoulder_reach` of the arm's length `l₁ + l₂` it is; a
    /// hanging one does not (the clavicle stays put when the arm hangs), unless it
    /// nears the arm's full reach: then the shoulder turns the root in to the
    /// `eased_reach` of the wrist (`shoulder_to_reach`). The turn is that fraction
    /// of the arc from the arm's root to the wrist about the shoulder joint.
    fn turn_shoulder(&mut self, wrist: DevicePose) {
        let (c, body, shoulder) = (self.config, self.body, self.shoulder);
        let frame = &mut *self.frame;
        let [upper, lower, hand] = self.limb.bones();
        let (l1, l2) = body.limb_lengths(self.limb);
        let joint = frame.position(shoulder);
        let arm_root = frame.position(upper);
        let reach = arm_root.distance(wrist.position) / (l1 + l2);
        let raised = ((wrist.position.y - arm_root.y) / (l1 + l2) * 2.0 + 1.0).clamp(0.0, 1.0);
        let share = ((reach - c.shoulder_reach) / (1.0 - c.shoulder_reach).max(1e-3))
            .clamp(0.0, 1.0)
            * c.shoulder_share
            * raised;
        let amount = share.max(shoulder_to_reach(
            arm_root - joint,
            wrist.position - joint,
            eased_reach(
                arm_root.distance(wrist.position),
                c.shoulder_reach * (l1 + l2),
                (l1 + l2) * 0.999,
            ),
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
            self.pose
                .set_rotation(shoulder, (parent.conjugate() * model).normalize());
            frame.update_bones(body, self.pose, &[shoulder, upper, lower, hand]);
        }
    }

    /// The elbow tracker, else a point off the middle of the arm toward where an
    /// elbow bends: across the arm from the hinge `(1, ±1, 0)` (out and up for the
    /// left arm, out and down for the right, turned with the hips' yaw), turned a
    /// little with the controller's roll, and toward where the hand's own axis
    /// points the forearm from the wrist (a wrist bends little):
    /// `lerp(root, wrist, ½) + Y(hips)·(k × d) + R(wrist)·(0, 0, −¼) + c·R(wrist)·(∓1, 0, 0)`,
    /// with `d` the root→wrist direction in the hips' yawed frame, `k` the unit
    /// hinge and `c` = `FOREARM_CUE`. The hinge bends a hanging arm back, one held
    /// forward down and out, one held out to the side back; alone, it would swing an
    /// arm raised up and out (a wave, hands up) from bending back to bending forward
    /// as the arm passes the hinge's line, where the hand holds the elbow down and
    /// out. The bend direction is always across the arm (never along it), so it
    /// turns smoothly with the arm: a fixed point below the body lies on a hanging
    /// arm's line, and an arm swinging back past it would swing the elbow from back
    /// to out and forward.
    fn elbow_pole(&self, wrist: DevicePose) -> Vec3 {
        let [upper, _, _] = self.limb.bones();
        let root = self.frame.position(upper);
        let sign = self.out();
        self.elbow.unwrap_or_else(|| {
            let d = (self.hips_yaw.conjugate() * (wrist.position - root)).normalize_or_zero();
            let hinge = Vec3::new(1.0, sign, 0.0).normalize();
            let forearm = wrist.rotation * Vec3::new(-sign, 0.0, 0.0);
            let bend = self.hips_yaw * hinge.cross(d)
                + wrist.rotation * Vec3::NEG_Z * 0.25
                + forearm * FOREARM_CUE;
            root.lerp(wrist.position, 0.5) + bend
        })
    }

    /// +1 for the left arm (out is +X), −1 for the right.
    fn out(&self) -> f32 {
        if self.limb == Limb::LeftArm {
            1.0
        } else {
            -1.0
        }
    }

    /// An arm no controller holds hangs: the upper arm from its root toward the
    /// elbow tracker, else `HANG` (down, a little out to the side); the forearm
    /// `FOREARM_HANG` from the elbow (down, a little out and forward), both turned
    /// with the hips' yaw; the hand goes on along the forearm. The shoulder stays at
    /// rest. `LimbIk` puts the elbow `l₁` along the upper arm's line (its pole) and
    /// the wrist `l₂` on from it.
    fn hang(self) -> Result<(), IkError> {
        let out = self.out();
        let turned = |v: Vec3| self.hips_yaw * Vec3::new(out * v.x, v.y, v.z).normalize();
        let [upper, _, _] = self.limb.bones();
        let (l1, l2) = self.body.limb_lengths(self.limb);
        let root = self.frame.position(upper);
        let along = self
            .elbow
            .and_then(|e| (e - root).try_normalize())
            .unwrap_or_else(|| turned(HANG));
        let elbow = root + along * l1;
        LimbIk {
            body: self.body,
            limb: self.limb,
            target: elbow + turned(FOREARM_HANG) * l2,
            pole: elbow,
            end_rotation: None,
            softness: self.config.softness,
            weight: 1.0,
            frame: self.frame,
            pose: self.pose,
        }
        .run()
    }
}

/// Weight of where the hand's axis points the forearm in the elbow's pole, as much
/// as the hinge's at most (`PlaceArm::elbow_pole`). Over Bandai Namco's waves, bows
/// and gestures it puts the elbows 5.2 cm from the capture's from 3 points (7.5 from
/// the hinge alone); weighted 2 or more, the hand's turns flip the elbows of dances.
const FOREARM_CUE: f32 = 1.0;

/// A hanging upper arm's direction, left arm (+X out), hips' yawed frame: down and
/// about 8° out from the side, clear of the body.
const HANG: Vec3 = Vec3::new(0.15, -1.0, 0.0);

/// A hanging forearm's direction from the elbow, left arm, hips' yawed frame: down,
/// as far out as the upper arm and about 17° forward, a relaxed elbow's bend.
const FOREARM_HANG: Vec3 = Vec3::new(0.15, -1.0, 0.3);

/// How far from the wrist target the arm's root should be for a target `distance`
/// away: the distance itself up to `start`, then eased toward `most` and never past
/// it: `start + w · tanh((distance − start) / w)`, `w = most − start`. The shoulder
/// turns the root in by the difference, so it takes over from the arm gradually as
/// the hand goes out of reach: the distance left to the arm, and so the elbow, keeps
/// its speed and acceleration (`tanh` bends away from the line with no second
/// derivative at the start) where a root turned only once the target is beyond
/// `most` would stop the elbow dead as the arm straightens and jerk it back into
/// motion as the hand comes in.
fn eased_reach(distance: f32, start: f32, most: f32) -> f32 {
    let start = start.min(most);
    let width = most - start;
    if distance <= start || width <= 1e-6 {
        return distance.min(most);
    }
    start + width * ((distance - start) / width).tanh()
}

/// The fraction (at most `most`) of the turn from `root` toward `target` (both
/// from the shoulder joint) that brings the arm's root within `reach` of the
/// target: 0 when it already is. The root moves on a circle about the joint, its
/// distance to the target falling as it turns, so the angle is the law of cosines'.
fn shoulder_to_reach(root: Vec3, target: Vec3, reach: f32, most: f32) -> f32 {
    let (r, d) = (root.length(), target.length());
    let full = root.angle_between(target);
    if root.distance(target) <= reach || r < 1e-6 || d < 1e-6 || full < 1e-6 {
        return 0.0;
    }
    let cos = ((r * r + d * d - reach * reach) / (2.0 * r * d)).clamp(-1.0, 1.0);
    ((full - cos.acos()) / full).clamp(0.0, most)
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

#[cfg(test)]
mod tests {
    use super::eased_reach;

    #[test]
    fn the_eased_reach_leaves_near_targets_and_never_passes_the_most() {
        let (start, most) = (0.45, 0.53);
        assert_eq!(eased_reach(0.3, start, most), 0.3);
        assert_eq!(eased_reach(start, start, most), start);
        let mut last = start;
        for k in 1..200 {
            let d = start + k as f32 * 0.002;
            let eased = eased_reach(d, start, most);
            assert!(eased > last && eased < most && eased <= d, "{d}: {eased}");
            last = eased;
        }
        // Slope 1 and no curvature where the easing starts: the speed and the
        // acceleration of the distance go on through it.
        let h = 1e-3;
        let slope = (eased_reach(start + h, start, most) - start) / h;
        assert!((slope - 1.0).abs() < 1e-3, "{slope}");
    }
}
