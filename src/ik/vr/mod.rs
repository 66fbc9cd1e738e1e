//! VR mode: a full humanoid pose from a headset and whatever controllers and
//! trackers are present.
//!
//! Order of a frame (all in the avatar's humanoid model space, device positions
//! scaled by `Calibration::avatar_scale`), each stage a job or function in the file
//! named, run on the stack with plain data in and out:
//!
//! 0. `AvatarDevices` (`devices.rs`): the devices calibrated and scaled.
//! 1. `HeadSmoothing::follow` (`turns.rs`): head joint and head rotation from the
//!    headset (`Calibration::head`); the head's turn smoothed over `neck_seconds`
//!    for the torso, and the hips' rotation: the hips tracker's, else the head's yaw
//!    smoothed over `body_turn_seconds`.
//! 2. `PlaceTorso` (`torso.rs`): the spine (spine, chest, upperChest, equal shares)
//!    carries `spine_share` of the head's tilt, or the chest tracker's rotation, and
//!    `spine_twist` of the twist between the head's and the hips' yaw (the neck and
//!    head turn the rest), and without a hips tracker leans forward in a crouch
//!    (the head below its standing height: the hips go back by `crouch_back` of the
//!    head's drop, smoothed over `crouch_seconds`);
//!    the neck takes half of the head's turn relative to the upper chest, so the
//!    neck joint is `P(head) − M(neck)·(T(head) − T(neck))`. Unless a chest
//!    tracker sets the spine, the neck joint follows where it must be over
//!    `torso_seconds` (`tracked_torso_seconds` with a hips tracker; a neck's length
//!    from the head, `Follower` in `follower.rs`) and the neck turns to put the head
//!    on its target. Without a hips tracker the hips go where this spine
//!    puts the neck joint; with one, the spine bends toward it (two arc
//!    corrections, scaled by `Spine::gain`). Whatever the spine's fixed length leaves
//!    is taken up by moving the hips, so the head is always where the headset says.
//! 3. `PlaceArm` (`arms.rs`), per arm: the shoulder turns up to `shoulder_share` of
//!    the way toward a raised hand beyond `shoulder_reach` of the arm's length, and
//!    eases the arm's root in as any hand nears the arm's full reach.
//! 4. The arm by `LimbIk` to the wrist, hand rotation from the controller, elbow
//!    pole from the elbow tracker, else across the arm from a hinge out to the side
//!    (back for a hanging arm, down and out for one held forward), turned a little
//!    with the controller's roll; then `forearm_twist` of the hand's roll moves into
//!    the lower arm.
//! 5. `PlaceLegs` (`legs.rs`): legs by `LimbIk` to the foot trackers, else to
//!    planted feet (knee pole from the knee tracker, else forward between the hips'
//!    and the foot's facing), softened by `leg_softness`. A step lands on the foot's
//!    footprint (where it stands under the hips) `step_lead` seconds of the hips'
//!    motion ahead along the head's direction of travel, lifted by `step_height`.
//!    While the hips move faster than `gait_speed` (half of it while the arms
//!    swing) the feet walk (`Gait` in `gait.rs`): the arms swing against the legs
//!    (else the head sways over the foot the body stands on), each change of side
//!    makes the other foot step (one sooner than the shortest half stride after
//!    the last is noise flipping the side and back, and is not read), and a step
//!    takes a step's time at `walk_ratio` for the hips' speed (a foot still in the
//!    air lands on its own time, never hurried). When the head's vertical
//!    acceleration (`Bob` in `gait.rs`, its rms over a second) says the body runs,
//!    or the hips go faster than a walker's stiff leg can vault over (Froude
//!    number), a step lands within the leg's forward sweep, a planted foot lifts
//!    once the hips have carried it as far behind (a flight: both feet in the air)
//!    and lands at the change of side after next (re-timed at the next change to
//!    half a stride), lifted higher. Standing, or when
//!    the gait says nothing, a foot steps
//!    once its landing is more than `step_distance` of the user's height away, over
//!    `step_seconds` for a step that long and by the square root of its length
//!    longer for a longer one, one foot at a time. A head above its standing
//!    height by more than tiptoes reach is a body in the air: the feet keep their
//!    take-off places under the hips and go with them, and land when it comes down.
//!
//! The settings are `VrIkConfig` (`config.rs`).

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

use glam::Vec3;

use super::IkError;
use super::body::{BodyFrame, BodyProportions, Limb};
use super::calibration::Calibration;
use crate::humanoid::{HumanBone, HumanoidPose};
use arms::{ARMS, PlaceArm};
use devices::AvatarDevices;
use follower::Follower;
use legs::{Feet, PlaceLegs};
use torso::PlaceTorso;
use turns::{HeadSmoothing, Turns};

/// What VR mode carries from frame to frame for one performer, and its scratch
/// space. Made when the performer is added; `reset` after a jump.
#[derive(Debug, Clone, Default)]
pub struct VrIkState {
    /// Whether a frame ran since the performer was added or `reset`.
    started: bool,
    /// Last frame's head joint, the head's turn smoothed for the torso, and the
    /// smoothed yaw the body faces without a hips tracker.
    head: HeadSmoothing,
    /// Where the neck joint was aimed without a hips tracker.
    neck_goal: Follower,
    /// The head's drop below its standing height, smoothed (the crouch).
    crouch: f32,
    /// The untracked feet, the hips' motion and the gait.
    legs: Feet,
    /// Forward kinematics of the result: `TORSO` and `LIMBS` (the eyes, jaw, toes and
    /// fingers are stale).
    pub frame: BodyFrame,
}

impl VrIkState {
    /// Forgets the planted feet (they are put under the hips on the next frame).
    pub fn reset(&mut self) {
        self.started = false;
    }

    /// Whether the left (0) or right (1) untracked foot is planted (not stepping, not
    /// in the air).
    #[must_use]
    pub fn is_planted(&self, foot: usize) -> bool {
        self.legs.is_planted(foot)
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

/// What the stages after the first read, for one frame: plain data, copied into
/// each stage's job.
#[derive(Clone, Copy)]
struct FrameInputs<'a> {
    config: &'a VrIkConfig,
    /// The avatar, built once.
    body: &'a BodyProportions,
    /// This frame's devices, avatar model space.
    devices: &'a AvatarDevices,
    /// This frame's head and hips turns.
    turns: &'a Turns,
    /// Seconds since the previous frame.
    dt: f32,
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
        for w in [
            c.spine_share,
            c.spine_twist,
            c.shoulder_share,
            c.forearm_twist,
        ] {
            if !(0.0..=1.0).contains(&w) {
                return Err(IkError::BadWeight(w));
            }
        }
        let i = self.input;
        let positions = [i.head.position]
            .into_iter()
            .chain(i.hands.iter().flatten().map(|d| d.position))
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
        let rotations = [i.head]
            .into_iter()
            .chain(i.hands.iter().flatten().copied())
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

    /// One frame, stage by stage (see the module header); each stage is a job in
    /// its own file, on the stack.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let VrIk {
            config,
            body,
            calibration,
            input,
            dt,
            state,
            pose,
        } = self;
        let devices = AvatarDevices::new(calibration, body, input);
        *pose = HumanoidPose::default();
        pose.rest_hips_height = body.rest_hips_height();
        // 1. The head's turn, smoothed for the torso, and the hips' turn.
        let turns = state
            .head
            .follow(config, &devices, calibration.height, state.started, dt);
        pose.set_rotation(HumanBone::Hips, turns.hips);
        let inputs = FrameInputs {
            config,
            body,
            devices: &devices,
            turns: &turns,
            dt,
        };
        // 2. Spine, neck and head, and the hips where they put the head.
        PlaceTorso {
            inputs,
            neck_goal: &mut state.neck_goal,
            crouch: &mut state.crouch,
            frame: &mut state.frame,
            pose,
        }
        .run();
        // 3, 4. Shoulders and arms.
        for (side, (limb, shoulder)) in ARMS.into_iter().enumerate() {
            PlaceArm {
                config,
                body,
                limb,
                shoulder,
                wrist: devices.hands[side],
                elbow: devices.elbows[side],
                hips_yaw: turns.hips_yaw,
                frame: &mut state.frame,
                pose,
            }
            .run()?;
        }
        // 5. Legs.
        PlaceLegs {
            inputs,
            height: calibration.height * devices.scale,
            started: state.started,
            state: &mut state.legs,
            frame: &mut state.frame,
            pose,
        }
        .run()?;
        state.started = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::DevicePose;
    use crate::ik::calibration::HEAD_TO_EYE;
    use crate::retarget::MappedSkeleton;
    use gait::tests::runner_head;
    use glam::Quat;

    fn humanoid() -> BodyProportions {
        let rig = crate::formats::skeleton_json::embedded_rig(
            "humanoid.json",
            crate::skeleton::builtin::HUMANOID_JSON,
        );
        let map = rig
            .bone_map
            .clone()
            .expect("the built-in humanoid has a map");
        BodyProportions::new(&MappedSkeleton::new(rig.skeleton, &map).expect("it maps"))
    }

    /// The runner of the running tests at `t`: its head from `head0`, along +Z at
    /// `speed`, bobbing `bob` times as much as `runner_head` with each `step`, and
    /// its devices, the hands swinging 20 cm against the legs.
    fn runner(head0: Vec3, t: f32, speed: f32, step: f32, bob: f32) -> (Vec3, VrInput) {
        let head = head0 + Vec3::new(0.0, bob * runner_head(t, step, 0.55, 2.0), speed * t);
        let swing = 0.2 * (std::f32::consts::PI * t / step).sin();
        let hand = |x: f32, z: f32| DevicePose::new(head + Vec3::new(x, -0.55, z), Quat::IDENTITY);
        let input = VrInput {
            head: DevicePose::new(head + HEAD_TO_EYE, Quat::IDENTITY),
            hands: [Some(hand(0.2, 0.1 + swing)), Some(hand(-0.2, 0.1 - swing))],
            ..VrInput::default()
        };
        (head, input)
    }

    /// The running tests' frame interval, seconds (90 Hz, a headset's rate).
    const RUN_DT: f32 = 1.0 / 90.0;

    /// Solves `frames` frames of the runner (`runner`: from `head0`, at `speed`,
    /// a `step` long, bobbing `bob` times as much) on the built-in humanoid, and
    /// hands `each` every frame's time, head and solved state.
    fn run_runner(
        head0: impl FnOnce(&BodyProportions) -> Vec3,
        (speed, step, bob): (f32, f32, f32),
        frames: usize,
        mut each: impl FnMut(f32, Vec3, &BodyProportions, &VrIkState),
    ) {
        let body = humanoid();
        let cal = Calibration::of_body(&body, HEAD_TO_EYE);
        let head0 = head0(&body);
        let mut state = VrIkState::default();
        let mut pose = HumanoidPose::default();
        for i in 0..frames {
            let t = i as f32 * RUN_DT;
            let (head, input) = runner(head0, t, speed, step, bob);
            solve(&body, &cal, &input, RUN_DT, &mut state, &mut pose);
            each(t, head, &body, &state);
        }
    }

    /// A head 5 cm under the rest's: a runner's, knees bent.
    fn runners_head(body: &BodyProportions) -> Vec3 {
        body.rest_position(HumanBone::Head) - Vec3::Y * 0.05
    }

    /// One frame of VR IK on `body` with the default settings.
    fn solve(
        body: &BodyProportions,
        calibration: &Calibration,
        input: &VrInput,
        dt: f32,
        state: &mut VrIkState,
        pose: &mut HumanoidPose,
    ) {
        VrIk {
            config: &VrIkConfig::default(),
            body,
            calibration,
            input,
            dt,
            state,
            pose,
        }
        .run()
        .expect("vr ik runs");
    }

    #[test]
    fn a_runner_lands_under_the_body_and_flies_between_steps() {
        // Running 3.5 m/s along +Z at 2.8 steps a second, the head bobbing 15 cm
        // (in the air half of each step) and the arms swinging 20 cm against the
        // legs: once under way, a planted foot is within reach ahead of the hips
        // and, under or ahead of them, on the floor (a step landing `step_lead`
        // of the hips' motion ahead, 1 m, would leave it hanging from a straight
        // leg), and for part of each step both feet are in the air.
        let (mut planted, mut off, mut flying, mut frames) = (0, 0, 0, 0);
        run_runner(runners_head, (3.5, 0.36, 1.0), 360, |t, _, body, state| {
            if t >= 1.5 {
                frames += 1;
                let (p, o) = planted_under_the_body(body, state);
                (planted, off) = (planted + p, off + o);
                flying += usize::from(p == 0);
            }
        });
        assert!(
            off * 10 < planted,
            "{off} of {planted} planted feet off the floor or ahead"
        );
        assert!(
            flying * 10 > frames,
            "both feet in the air on {flying} of {frames} frames"
        );
    }

    /// Whether each planted foot of `state` is within reach ahead of the hips and,
    /// under or ahead of them, on the floor: (planted feet, those that are not).
    fn planted_under_the_body(body: &BodyProportions, state: &VrIkState) -> (usize, usize) {
        let (upper, lower) = body.limb_lengths(Limb::LeftLeg);
        let hips = state.frame.position(HumanBone::Hips);
        let (mut planted, mut off) = (0, 0);
        for (side, bone) in [HumanBone::LeftFoot, HumanBone::RightFoot]
            .into_iter()
            .enumerate()
        {
            if state.is_planted(side) {
                planted += 1;
                let ankle = state.frame.position(bone);
                let ahead = ankle.z - hips.z;
                // Behind the hips the heel may rise before the foot leaves.
                let floor = body.rest_height(bone);
                if ahead > 0.35 * (upper + lower) || (ahead > 0.0 && ankle.y > floor + 0.02) {
                    off += 1;
                }
            }
        }
        (planted, off)
    }

    #[test]
    fn a_walker_going_backwards_steps_back_with_the_gait() {
        // Walking 1 m/s backwards (along −Z, facing +Z) with 0.55 s steps, the head
        // swaying to the foot it is over and the arms swinging with the opposite
        // leg (the left hand going back as the right foot steps back): once under
        // way the feet step one after the other, a step each half stride, and land
        // behind the hips (along the way the body goes) as much as they leave the
        // floor in front of them: planted, they are on average within 8 cm of under
        // the hips. Taken for a standing user's, the feet would step only once left
        // behind, and trail the hips (17 cm).
        let body = humanoid();
        let cal = Calibration::of_body(&body, HEAD_TO_EYE);
        let head0 = body.rest_position(HumanBone::Head);
        let (step, speed) = (0.55, 1.0);
        let mut state = VrIkState::default();
        let mut pose = HumanoidPose::default();
        let (mut along, mut planted, mut steps) = (0.0, 0, [0; 2]);
        let mut was_planted = [true; 2];
        for i in 0..720 {
            let t = i as f32 * RUN_DT;
            let phase = std::f32::consts::PI * t / step;
            // Over the left foot (+X) while `phase.sin()` is positive.
            let head = head0 + Vec3::new(0.03 * phase.sin(), 0.0, -speed * t);
            let swing = 0.15 * phase.cos();
            let hand =
                |x: f32, z: f32| DevicePose::new(head + Vec3::new(x, -0.55, z), Quat::IDENTITY);
            let input = VrInput {
                head: DevicePose::new(head + HEAD_TO_EYE, Quat::IDENTITY),
                hands: [Some(hand(0.2, 0.1 + swing)), Some(hand(-0.2, 0.1 - swing))],
                ..VrInput::default()
            };
            solve(&body, &cal, &input, RUN_DT, &mut state, &mut pose);
            let hips = state.frame.position(HumanBone::Hips);
            for (side, bone) in [HumanBone::LeftFoot, HumanBone::RightFoot]
                .into_iter()
                .enumerate()
            {
                let now = state.is_planted(side);
                if t > 2.0 {
                    steps[side] += usize::from(was_planted[side] && !now);
                    if now {
                        along += -(state.frame.position(bone).z - hips.z);
                        planted += 1;
                    }
                }
                was_planted[side] = now;
            }
        }
        let mean = along / planted as f32;
        assert!(
            mean.abs() < 0.08,
            "planted feet {mean} m along the way from the hips"
        );
        // 6 s: about 5.5 steps a foot.
        for n in steps {
            assert!((5..=6).contains(&n), "steps {steps:?}");
        }
    }

    #[test]
    fn a_runner_whose_head_barely_bobs_lands_under_the_body() {
        // The runner of `a_runner_lands_under_the_body_and_flies_between_steps`
        // (3.5 m/s, Froude 1.5 on this body's 0.82 m legs), its head bobbing a tenth
        // as much (1.5 cm: the bob alone says a walk): no walker goes that fast, so
        // the feet land within the leg's forward sweep, not a walker's `step_lead`
        // of the hips' motion (1 m) ahead.
        let (mut planted, mut off) = (0, 0);
        run_runner(runners_head, (3.5, 0.36, 0.1), 360, |t, _, body, state| {
            if t > 1.5 {
                let (p, o) = planted_under_the_body(body, state);
                (planted, off) = (planted + p, off + o);
            }
        });
        assert!(
            off * 10 < planted,
            "{off} of {planted} planted feet off the floor or ahead"
        );
    }

    #[test]
    fn a_sprinter_quicker_than_the_gaits_start_lands_each_foot_within_a_stride() {
        // A sprinter at 3.5 m/s from the first frame (a run by its speed at once),
        // taking 4 steps a second (0.25 s each, half the half stride the gait starts
        // from, 0.5 s): a foot that leaves the floor lands as the body comes over
        // it, so no foot is in the air for longer than a stride (0.5 s) and half a
        // step. Timed once, as it leaves the floor, from the gait's first half
        // stride, the first step would take 0.9 s.
        let step = 0.25;
        let mut up = [0.0f32; 2];
        let mut longest = 0.0f32;
        run_runner(runners_head, (3.5, step, 0.1), 270, |_, _, _, state| {
            for (side, time) in up.iter_mut().enumerate() {
                *time = if state.is_planted(side) {
                    0.0
                } else {
                    *time + RUN_DT
                };
                longest = longest.max(*time);
            }
        });
        assert!(longest < 2.5 * step, "a foot in the air for {longest} s");
    }

    #[test]
    fn a_runner_whose_head_tops_tiptoe_height_moves_the_feet_smoothly_in_and_out_of_the_air() {
        // The runner of `a_runner_lands_under_the_body_and_flies_between_steps`, its
        // head 6% above its standing height on the mean: at the top of each flight
        // (5 cm higher) the body is in the air, and back on the floor as the stance
        // catches it, with a foot mid-step each time. A step of a stride (twice
        // the body's travel in a step, 2 × 1.26 m) over a step's time (0.36 s) has
        // a peak acceleration of 5.77·d/T², 112 m/s²: no ankle may change speed
        // faster than that from frame to frame (a foot snapped onto the hips or
        // restarted from rest changes speed by metres per second in one frame).
        let (speed, step) = (3.5, 0.36);
        let standing = humanoid().rest_position(HumanBone::Head);
        let peak = 5.77 * 2.0 * speed * step / (step * step);
        let mut ankles: Vec<[Vec3; 2]> = Vec::new();
        let mut planted: Vec<[bool; 2]> = Vec::new();
        let mut flights = 0;
        let mut high = false;
        let tiptoe = |_: &BodyProportions| standing * Vec3::new(1.0, 1.06, 1.0);
        run_runner(tiptoe, (speed, step, 1.0), 360, |t, head, _, state| {
            let above = head.y / standing.y - 1.0 > 0.07;
            flights += usize::from(above && !high && t > 1.0);
            high = above;
            if t > 1.0 {
                ankles.push(
                    [HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| state.frame.position(b)),
                );
                planted.push([0, 1].map(|side| state.is_planted(side)));
            }
        });
        let dt = RUN_DT;
        assert!(flights >= 5, "{flights} flights");
        let mut worst = 0.0f32;
        let mut moving = 0;
        for (w, on) in ankles.windows(3).zip(planted.windows(3)) {
            // A foot in a step or in the air on all three frames.
            for side in (0..2).filter(|&side| on.iter().all(|p| !p[side])) {
                moving += 1;
                let a = (w[2][side] - 2.0 * w[1][side] + w[0][side]).length() / (dt * dt);
                worst = worst.max(a);
            }
        }
        assert!(moving > 200, "{moving} frames of a foot in the air");
        assert!(
            worst < peak,
            "an ankle accelerates at {worst} m/s² (a step's peak: {peak})"
        );
    }

    #[test]
    fn feet_leave_the_floor_with_a_leaping_body_and_land_under_it() {
        // Standing, then a standing long jump: 1.2 m forward along +Z in a flight
        // of 0.5 s, the head 31 cm above its standing height at the top (falling
        // freely), the hands held still at the sides. In the air the feet go with
        // the body (no foot stays planted where the jump left from, the legs
        // stretched back toward it); a second after landing both stand on the
        // floor (as high as before the jump) under the hips.
        let body = humanoid();
        let cal = Calibration::of_body(&body, HEAD_TO_EYE);
        let (dt, flight, distance) = (1.0 / 90.0, 0.5, 1.2);
        let standing = body.rest_position(HumanBone::Head) - Vec3::Y * 0.01;
        let rise = |s: f32| 9.81 * s * (flight - s) / 2.0;
        let mut state = VrIkState::default();
        let mut pose = HumanoidPose::default();
        let (mut high, mut stand) = (0, [0.0; 2]);
        for i in 0..270 {
            let t = i as f32 * dt;
            let s = (t - 1.0).clamp(0.0, flight);
            let head = standing + Vec3::new(0.0, rise(s), distance * s / flight);
            let hand = |x: f32| DevicePose::new(head + Vec3::new(x, -0.6, 0.0), Quat::IDENTITY);
            let input = VrInput {
                head: DevicePose::new(head + HEAD_TO_EYE, Quat::IDENTITY),
                hands: [Some(hand(0.25)), Some(hand(-0.25))],
                ..VrInput::default()
            };
            solve(&body, &cal, &input, dt, &mut state, &mut pose);
            let hips = state.frame.position(HumanBone::Hips);
            let ankles =
                [HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| state.frame.position(b));
            if rise(s) > 0.2 {
                high += 1;
                for (side, ankle) in ankles.into_iter().enumerate() {
                    let behind = Vec3::new(hips.x - ankle.x, 0.0, hips.z - ankle.z).length();
                    assert!(
                        behind < 0.25,
                        "{t}: an ankle {behind} m from under the hips"
                    );
                    assert!(!state.is_planted(side), "{t}: foot {side} planted");
                }
            }
            if t < 1.0 {
                stand = ankles.map(|a| a.y);
            }
            if t > 1.0 + flight + 1.0 {
                for (side, ankle) in ankles.into_iter().enumerate() {
                    assert!(state.is_planted(side), "{t}: foot {side} in the air");
                    assert!(
                        (ankle.y - stand[side]).abs() < 0.01,
                        "{t}: {ankle} {stand:?}"
                    );
                    assert!((ankle.z - hips.z).abs() < 0.25, "{t}: {ankle} from {hips}");
                }
            }
        }
        assert!(high > 20, "{high} frames high in the air");
    }

    #[test]
    fn raised_hands_hold_their_elbows_down_and_out() {
        // Hands up: each upper arm out level to its side, the forearm raised 75° or
        // straight up, the hand along the forearm. The arm then points up and out,
        // near the line of the pole's hinge, where the hinge alone bends the elbow
        // back; the hand's axis brings it down, below the line from shoulder to
        // wrist (more down than back or forward), as a waving arm holds it.
        let body = humanoid();
        let cal = Calibration::of_body(&body, HEAD_TO_EYE);
        let head = body.rest_position(HumanBone::Head);
        for degrees in [75.0f32, 90.0] {
            let raise = degrees.to_radians();
            let hand = |limb: Limb, out: f32| {
                let [upper, _, _] = limb.bones();
                let (l1, l2) = body.limb_lengths(limb);
                let elbow = body.rest_position(upper) + Vec3::X * out * l1;
                let wrist = elbow + Vec3::new(out * raise.cos(), raise.sin(), 0.0) * l2;
                Some(DevicePose::new(wrist, Quat::from_rotation_z(out * raise)))
            };
            let input = VrInput {
                head: DevicePose::new(head + HEAD_TO_EYE, Quat::IDENTITY),
                hands: [hand(Limb::LeftArm, 1.0), hand(Limb::RightArm, -1.0)],
                ..VrInput::default()
            };
            let (mut state, mut pose) = (VrIkState::default(), HumanoidPose::default());
            for _ in 0..10 {
                solve(&body, &cal, &input, 1.0 / 60.0, &mut state, &mut pose);
            }
            let f = &state.frame;
            for limb in [Limb::LeftArm, Limb::RightArm] {
                let [upper, lower, hand] = limb.bones();
                let (root, elbow, wrist) = (f.position(upper), f.position(lower), f.position(hand));
                let line = (wrist - root).normalize();
                let off = (elbow - root).reject_from_normalized(line);
                assert!(off.length() > 0.05, "{degrees}° {limb:?}: elbow straight");
                let off = off.normalize();
                assert!(
                    -off.y > off.z.abs(),
                    "{degrees}° {limb:?}: elbow bent toward {off}"
                );
            }
        }
    }

    #[test]
    fn arms_no_controller_holds_hang_at_the_sides_or_from_their_elbow_trackers() {
        // A headset, a hips tracker and two ankle trackers (the trackers a VRChat
        // OSC sender has), the user turned 90° to face +X. No controllers: each
        // hand hangs below its shoulder, out to its own side of the body, no
        // farther forward than a relaxed elbow's bend and never behind, the elbow
        // bent a little. Then an elbow tracker out level with the shoulder: the
        // upper arm points at it and the forearm hangs from it.
        let body = humanoid();
        let cal = Calibration::of_body(&body, HEAD_TO_EYE);
        let yaw = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let at = |b: HumanBone| yaw * body.rest_position(b);
        let tracker = |b: HumanBone| Some(DevicePose::new(at(b), yaw));
        let mut input = VrInput {
            head: DevicePose::new(at(HumanBone::Head) + yaw * HEAD_TO_EYE, yaw),
            hips: tracker(HumanBone::Hips),
            feet: [tracker(HumanBone::LeftFoot), tracker(HumanBone::RightFoot)],
            ..VrInput::default()
        };
        let (mut state, mut pose) = (VrIkState::default(), HumanoidPose::default());
        for _ in 0..10 {
            solve(&body, &cal, &input, 1.0 / 60.0, &mut state, &mut pose);
        }
        let f = &state.frame;
        let (forward, left) = (yaw * Vec3::Z, yaw * Vec3::X);
        for (limb, out) in [(Limb::LeftArm, 1.0), (Limb::RightArm, -1.0)] {
            let [upper, lower, hand] = limb.bones();
            let (l1, l2) = body.limb_lengths(limb);
            let (root, elbow, wrist) = (f.position(upper), f.position(lower), f.position(hand));
            let drop = root.y - wrist.y;
            assert!(drop > 0.9 * (l1 + l2), "{limb:?}: the hand {drop} m below");
            let side = (wrist - root).dot(left) * out;
            assert!(
                (0.0..0.25 * (l1 + l2)).contains(&side),
                "{limb:?}: out {side}"
            );
            let ahead = (wrist - root).dot(forward);
            assert!(
                (0.0..0.25 * (l1 + l2)).contains(&ahead),
                "{limb:?}: ahead {ahead}"
            );
            let bend = (elbow - root).angle_between(wrist - elbow).to_degrees();
            assert!((5.0..40.0).contains(&bend), "{limb:?}: elbow bent {bend}°");
            let hips = f.position(HumanBone::Hips);
            assert!(
                (hips - at(HumanBone::Hips)).length() < 0.02,
                "hips at {hips}"
            );
        }
        // The left elbow tracker 20 cm out beyond the arm's reach along the T-pose.
        let root = f.position(HumanBone::LeftUpperArm);
        let (l1, _) = body.limb_lengths(Limb::LeftArm);
        input.elbows[0] = Some(root + left * (l1 + 0.2));
        for _ in 0..10 {
            solve(&body, &cal, &input, 1.0 / 60.0, &mut state, &mut pose);
        }
        let f = &state.frame;
        let upper = f.position(HumanBone::LeftLowerArm) - f.position(HumanBone::LeftUpperArm);
        assert!(
            upper.angle_between(left).to_degrees() < 3.0,
            "upper arm {upper}"
        );
        let forearm = f.position(HumanBone::LeftHand) - f.position(HumanBone::LeftLowerArm);
        assert!(forearm.normalize().y < -0.9, "forearm {forearm}");
    }
}
