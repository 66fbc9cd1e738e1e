//! Stage 5 of a frame: the legs. Each leg goes by `LimbIk` to its foot tracker, else
//! to its planted foot (knee pole from the knee tracker, else forward between the
//! hips' and the foot's facing), softened by `leg_softness`. A step
//! lands on the foot's footprint (where it stands under the hips) `step_lead`
//! seconds of the hips' motion ahead, along where the body goes (the head's
//! direction of travel: on a curve the hips' facing lags it), lifted by
//! `step_height`. While the hips move faster than `gait_speed`, forwards or
//! backwards (the way turns round past half that speed the other way), the feet
//! walk (`Gait`): each change of the side the body is over (the arms' swing says, else
//! the head's sway; none within the shortest half stride of the last one) makes the
//! other foot step, over a step's time at `walk_ratio` for the hips' speed; a foot
//! still in the air then lands on its own time. When the head's vertical bob says
//! the body runs (`Bob`: a runner falls freely between steps, a walker vaults over
//! a stiff leg), or the hips go faster than a stiff leg can vault over
//! (`RUN_FROUDE`), the feet move as a runner's: a step lands no farther ahead than
//! the leg sweeps forward, a planted foot leaves the floor once the hips have
//! carried it as far behind (both feet are in the air until the other lands) and
//! lands at the change of side after next, re-timed at the next change to land
//! half a stride later, and a swinging foot folds up higher.
//! Standing, or when the sway says nothing, a foot steps once its landing is more
//! than `step_distance` of the user's height away, over `step_seconds` for a step
//! that long and longer for a longer one, one foot at a time. When the head is higher
//! above its standing height than rising onto the toes allows (`TIPTOE`), the body is
//! in the air: no untracked foot is planted, each keeps its take-off place under the
//! hips and goes with them (`hang_foot`; a foot mid-step gets there from its place and
//! velocity, `take_off`), and once the head is back down each steps to its landing
//! from its place and velocity, on its own time (`land_feet`).
//!
//! What keeps a stepping foot as smooth as a walker's: a minimum-jerk step of
//! length `d` over `T` seconds has a jerk of `d/T³` times a fixed profile, so a step
//! is never hurried (a foot still in the air when the body comes over it keeps its
//! time), a longer step takes longer (`T ∝ √d`, the same peak acceleration), and
//! the knee's softness does not change with the hips' speed (a softness that eases
//! in and out as a walker slows, turns and speeds up moves every knee and foot with
//! it).

use glam::{Quat, Vec3};

use super::follower::settle;
use super::gait::{Bob, Gait};
use super::turns::{wrap, yaw_of};
use super::{FrameInputs, VrIkConfig};
use crate::humanoid::{HumanBone, HumanoidPose};
use crate::ik::IkError;
use crate::ik::body::{BodyFrame, Limb};
use crate::ik::limb::LimbIk;

/// The legs, left then right.
const LEGS: [Limb; 2] = [Limb::LeftLeg, Limb::RightLeg];

/// Below this fraction of their rest height the hips are not walking (crouching,
/// crawling, sitting).
const UPRIGHT: f32 = 0.7;

/// Gravity, metres per second squared (avatar metres: times the devices' scale).
const GRAVITY: f32 = 9.81;

/// The root mean square of the head's smoothed vertical acceleration (`Bob`),
/// fractions of gravity, over which the gait turns from a walk into a run. A
/// runner's head falls freely between steps (−g) and is caught at two to three
/// `g`: an rms of 0.7 g and more, about half of it through `Bob`'s smoothing; a
/// walker's, vaulting over a stiff leg, peaks under half of `g` even at a brisk
/// walk (the pendulum's `v²/l`), under a quarter in rms through the smoothing.
/// Below the first, a walker's steps are untouched.
const RUN_BOB: (f32, f32) = (0.25, 0.4);

/// The Froude number of the hips' forward speed over the leg's length (`v²/(g·l)`)
/// over which the gait turns into a run whatever the head's bob says. A walker
/// vaults over a stiff leg, which holds the body on its arc only while the
/// centripetal acceleration `v²/l` is under gravity (Froude 1); people change from
/// a walk to a run at about 0.5.
const RUN_FROUDE: (f32, f32) = (0.5, 1.0);

/// Running, how far a foot lands ahead of its footprint and leaves the floor
/// behind it, fractions of the leg's length: the stance leg sweeps about 17°
/// forward and 24° back of the vertical (sin 17° ≈ 0.3, sin 24° ≈ 0.4; the heel
/// rises before the toe leaves), so a runner's stance is short and both feet are
/// in the air between steps.
const RUN_REACH: (f32, f32) = (0.3, 0.4);

/// Running, how high the swinging ankle lifts, fraction of the leg's length: the
/// knee folds to swing the leg through quickly, bringing the heel up behind.
const RUN_LIFT: f32 = 0.4;

/// How far above its standing height the head rises, fraction of that height, before
/// the feet are off the floor, and below which they are back on it. Rising onto the
/// toes lifts the heel, and the head with it, by up to about 5½% of a standing head's
/// height (9 cm of 1.6 m); a head higher than that is carried by no foot on the floor
/// (a jump, a leap, a hop, a runner at the top of a long stride; or a floor higher
/// than the one calibrated on, where the feet also stand under the hips). The body
/// leaves the floor a centimetre or so above that, so that a headset's noise about
/// it does not lift and land the feet frame by frame.
const TIPTOE: (f32, f32) = (0.065, 0.055);

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
    /// How long the step under way takes, seconds.
    seconds: f32,
    /// How high the step under way lifts the foot, avatar metres.
    lift: f32,
    /// Whether the step under way is a runner's: the foot left the floor behind
    /// the hips before the gait asked it to step, and lands on its own time.
    running: bool,
    /// In the air (the body off the floor): where the ankle is from under its hip
    /// joint (`hang_foot`), in the frame of the hips' yaw, avatar metres: the leg's
    /// pose as the foot left the floor.
    hanging: Option<Vec3>,
    /// A step under way in the hips' frame (from the air, or going on into it): it
    /// starts from this place from under the hip joint (as `hanging`), carried on
    /// with the hips, so the foot keeps the body's speed as it leaves that place.
    from_air: Option<Vec3>,
    /// In the air: the step under way ends at this place from under the hip joint
    /// (as `hanging`), carried with the hips.
    to_air: Option<Vec3>,
    /// The velocity the step under way starts with, relative to its start
    /// (`from`), avatar metres per second.
    from_velocity: Vec3,
    /// How fast the ankle moved over the last frame, avatar metres per second.
    velocity: Vec3,
}

impl PlantedFoot {
    /// Starts a step from where the foot is, taking `seconds`, lifting the foot
    /// `lift` (avatar metres) halfway.
    fn step(&mut self, seconds: f32, lift: f32) {
        self.from = self.at;
        self.from_yaw = self.yaw;
        self.progress = Some(0.0);
        self.seconds = seconds;
        self.lift = lift;
        self.running = false;
        self.hanging = None;
        self.from_air = None;
        self.to_air = None;
        self.from_velocity = Vec3::ZERO;
    }

    /// Gives a step under way `seconds` more from where the foot is, going on with
    /// its velocity (`from_velocity`, so it neither jumps nor changes speed); a foot
    /// still rising (before the middle of its step) still rises as high as its step
    /// was to lift it. A foot not stepping is left alone.
    fn retime(&mut self, seconds: f32) {
        if let Some(p) = self.progress {
            let lift = if p < 0.5 {
                (self.lift - (self.at.y - self.from.y)).max(0.0)
            } else {
                0.0
            };
            let (running, velocity) = (self.running, self.velocity);
            self.step(seconds, lift);
            self.running = running;
            self.from_velocity = velocity;
        }
    }

    /// Moves a step under way on by `dt` toward `landing`, turning to `yaw`:
    /// smootherstep along, `64·p³(1 − p)³` of the step's lift up, and the velocity
    /// it starts with (`from_velocity`) dying out as `T·(p − 6p³ + 8p⁴ − 3p⁵)`: the
    /// minimum-jerk path from that place and velocity to a standstill at `landing`
    /// (no jump in speed or acceleration where the step starts and ends).
    fn advance(&mut self, landing: Vec3, yaw: f32, dt: f32) {
        if let Some(p) = self.progress {
            let seconds = self.seconds.max(1e-3);
            let p = (p + dt / seconds).min(1.0);
            let ease = p * p * p * (p * (6.0 * p - 15.0) + 10.0);
            let q = p * (1.0 - p);
            let coast = p * (1.0 + p * p * (-6.0 + p * (8.0 - 3.0 * p)));
            self.at = self.from.lerp(landing, ease)
                + Vec3::Y * (64.0 * q * q * q) * self.lift
                + self.from_velocity * (seconds * coast);
            self.yaw = self.from_yaw + wrap(yaw - self.from_yaw) * ease;
            self.progress = (p < 1.0).then_some(p);
        }
    }
}

/// What the legs carry from frame to frame: the untracked feet, the hips' motion
/// and the gait.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Feet {
    /// Left, right.
    feet: [PlantedFoot; 2],
    /// Last frame's hips and their smoothed horizontal velocity.
    hips: Vec3,
    hips_velocity: Vec3,
    /// Whether `hips_velocity` has been measured yet (from the second frame).
    measured: bool,
    gait: Gait,
    /// The head's vertical bob: walking or running.
    bob: Bob,
    /// Whether the body is in the air: the head above its standing height by more
    /// than `TIPTOE` allows.
    airborne: bool,
}

impl Feet {
    /// Whether the left (0) or right (1) untracked foot is planted (not stepping, not
    /// in the air).
    pub(super) fn is_planted(&self, foot: usize) -> bool {
        self.feet
            .get(foot)
            .is_some_and(|f| f.progress.is_none() && f.hanging.is_none())
    }
}

/// How the hips move this frame.
struct HipsMotion {
    /// Where the hips are, avatar model space.
    at: Vec3,
    /// The way the body walks: where the hips face, or the opposite walking
    /// backwards (`Gait::is_backward`); horizontal unit vector.
    axis: Vec3,
    /// Where the body goes: the head's direction of travel where it is within 60°
    /// of `axis`, easing to `axis` at 90°; horizontal unit vector.
    heading: Vec3,
    /// How far the hips moved since the last frame, avatar metres.
    moved: Vec3,
    /// The hips' smoothed speed along `axis`, avatar metres per second (0 going
    /// the other way).
    ahead: f32,
    /// Upright and faster along `axis` than `gait_speed` (or than half of it while
    /// the arms swing): the feet walk.
    walking: bool,
    /// 0 → 1 from half `gait_speed` to `gait_speed` (0 when not upright): how much
    /// the steps lead.
    walk: f32,
    /// 0 → 1 as the head's vertical bob goes from `RUN_BOB.0` to `RUN_BOB.1` of
    /// gravity, or the hips' Froude number from `RUN_FROUDE.0` to `RUN_FROUDE.1`
    /// (0 when not walking): how much the feet move as a runner's.
    run: f32,
}

/// Places both legs for one frame (see the module header).
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic. Its
/// inputs are checked by `VrIk::validate`.
pub(super) struct PlaceLegs<'a> {
    /// Settings, avatar, devices and turns of this frame.
    pub(super) inputs: FrameInputs<'a>,
    /// The user's height, avatar metres.
    pub(super) height: f32,
    /// Whether an earlier frame ran; else the feet are put under the hips.
    pub(super) started: bool,
    /// The feet, the hips' motion and the gait, moved on by one frame.
    pub(super) state: &'a mut Feet,
    /// In: the torso of `pose`. Out: the legs' bones updated.
    pub(super) frame: &'a mut BodyFrame,
    /// Out: upper leg, lower leg and foot rotations set.
    pub(super) pose: &'a mut HumanoidPose,
}

impl PlaceLegs<'_> {
    pub(super) fn run(mut self) -> Result<(), IkError> {
        let mut hips = self.follow_hips();
        let head = horizontal(self.inputs.devices.head.position);
        let arms = self.arms_ahead(hips.axis);
        let swayed =
            self.state
                .gait
                .read(self.inputs.config, head, arms, self.height, self.inputs.dt);
        // Swinging arms say a walk has begun from half `gait_speed`.
        hips.walking |= hips.walk > 0.0 && self.state.gait.arms_swing();
        let landing = self.landing(&hips);
        if !self.started {
            for (f, at) in self.state.feet.iter_mut().zip(landing) {
                *f = PlantedFoot {
                    at,
                    yaw: self.inputs.turns.hips_yaw_angle,
                    ..PlantedFoot::default()
                };
            }
        }
        let untracked = self.inputs.devices.feet.map(|f| f.is_none());
        let was_airborne = self.state.airborne;
        let airborne = self.follow_flight();
        let before = self.state.feet.map(|f| f.at);
        if airborne && !was_airborne {
            self.take_off(&hips, untracked);
        }
        if !airborne {
            self.land_feet(&hips, &landing);
            self.start_steps(swayed, &hips, untracked, &landing);
        }
        self.carry_feet(&hips);
        for (side, limb) in LEGS.into_iter().enumerate() {
            let to = match self.state.feet[side].to_air {
                Some(offset) => self.hang_point(&hips, side, offset),
                None => landing[side],
            };
            let (target, rotation) = self.foot_target(side, to);
            if airborne && untracked[side] {
                self.hang_foot(&hips, side);
            }
            let f = &mut self.state.feet[side];
            f.velocity = (f.at - before[side]) / self.inputs.dt;
            let softness = if untracked[side] {
                self.inputs.config.leg_softness
            } else {
                self.inputs.config.tracked_leg_softness
            };
            self.solve_leg(side, limb, target, rotation, softness)?;
        }
        Ok(())
    }

    /// The hips' position and smoothed speed along the way the body walks (velocity
    /// smoothed over 0.1 s from the first one measured; backwards once they go back
    /// faster than half `gait_speed`, forwards again once they go forward so fast),
    /// and whether that is walking: upright (the
    /// hips above `UPRIGHT` of their rest height) and faster than
    /// `gait_speed`; `walk` eases it in from half that speed; and how much of a run
    /// the head's bob or the hips' speed says (`run`). The first frame starts the gait and the bob
    /// afresh.
    fn follow_hips(&mut self) -> HipsMotion {
        let (c, height, dt) = (self.inputs.config, self.height, self.inputs.dt);
        let at = self.frame.position(HumanBone::Hips);
        let forward = self.inputs.turns.hips_yaw * Vec3::Z;
        let leg = self.leg_length();
        let started = self.started;
        let moved = if started {
            at - self.state.hips
        } else {
            Vec3::ZERO
        };
        if started {
            let state = &mut *self.state;
            let v = horizontal(at - state.hips) / dt;
            // The smoothing starts from the first velocity measured, not from rest.
            let k = if state.measured { settle(dt, 0.1) } else { 1.0 };
            state.measured = true;
            state.hips_velocity = state.hips_velocity.lerp(v, k);
            // The way turns round only past half `gait_speed` the other way: a
            // standing user's small to and fro keeps it. The arms' swing is read
            // along it (a walker's arms swing with the opposite leg either way),
            // and the sway across the path, so the gait turns round with it.
            let along = state.hips_velocity.dot(forward);
            let turn = 0.5 * c.gait_speed * height;
            let backward = state.gait.is_backward();
            if (backward && along > turn) || (!backward && along < -turn) {
                state.gait.turn_round();
            }
        } else {
            let arms = self.arms_ahead(forward);
            let state = &mut *self.state;
            state.hips_velocity = Vec3::ZERO;
            state.measured = false;
            state.gait = Gait::new(horizontal(self.inputs.devices.head.position), arms);
            state.bob = Bob::default();
        }
        let state = &mut *self.state;
        state.hips = at;
        let axis = if state.gait.is_backward() {
            -forward
        } else {
            forward
        };
        let ahead = state.hips_velocity.dot(axis).max(0.0);
        let upright = at.y > UPRIGHT * self.inputs.body.rest_hips_height();
        let walking = upright && ahead > c.gait_speed * height;
        let walk = if upright {
            (ahead / (c.gait_speed * height).max(1e-3) * 2.0 - 1.0).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let travel = self.inputs.turns.travel;
        let trust = (2.0 * travel.dot(axis)).clamp(0.0, 1.0);
        let devices = self.inputs.devices;
        let bob = state.bob.follow(devices.head.position.y, dt) / (GRAVITY * devices.scale);
        // A walker's stiff leg holds the body only while `v²/l` is under gravity:
        // faster, whatever the head's bob says, the feet run.
        let froude = ahead * ahead / (GRAVITY * devices.scale * leg).max(1e-6);
        let ramp = |x: f32, (low, high): (f32, f32)| ((x - low) / (high - low)).clamp(0.0, 1.0);
        let run = if walking {
            ramp(bob, RUN_BOB).max(ramp(froude, RUN_FROUDE))
        } else {
            0.0
        };
        HipsMotion {
            at,
            axis,
            heading: axis.lerp(travel, trust).normalize_or(axis),
            moved,
            ahead,
            walking,
            walk,
            run,
        }
    }

    /// How far the left hand (wrist) is ahead of the right along `axis`, avatar
    /// metres: what the arms' swing is read from; 0 without both hands (hanging
    /// arms never swing, and the head's sway says the steps).
    fn arms_ahead(&self, axis: Vec3) -> f32 {
        match self.inputs.devices.hands {
            [Some(left), Some(right)] => (left.position - right.position).dot(axis),
            _ => 0.0,
        }
    }

    /// Where each untracked foot goes next: its footprint (where it stands under the
    /// hips, `horizontal(P(hips) + Y(hips)·(T(foot) − T(hips)))` at the foot's rest
    /// height) plus, while walking, `step_lead` of the hips' forward motion along
    /// `HipsMotion::heading`.
    fn landing(&self, hips: &HipsMotion) -> [Vec3; 2] {
        let body = self.inputs.body;
        let lead = hips.heading * self.lead(hips);
        LEGS.map(|limb| {
            let foot = limb.bones()[2];
            let rest = body.rest_position(foot) - body.rest_position(HumanBone::Hips);
            horizontal(hips.at + self.inputs.turns.hips_yaw * rest)
                + Vec3::Y * body.rest_height(foot)
                + lead
        })
    }

    /// The avatar's leg length (hip joint to ankle), avatar metres.
    fn leg_length(&self) -> f32 {
        let (upper, lower) = self.inputs.body.limb_lengths(Limb::LeftLeg);
        upper + lower
    }

    /// How far ahead of its footprint a step lands, avatar metres: `step_lead`
    /// seconds of the hips' forward motion, no farther than `RUN_REACH.0` of the
    /// leg's length as the gait becomes a run (`HipsMotion::run`).
    fn lead(&self, hips: &HipsMotion) -> f32 {
        let lead = hips.ahead * self.inputs.config.step_lead * hips.walk;
        let reach = RUN_REACH.0 * self.leg_length();
        lead + (lead.min(reach) - lead) * hips.run
    }

    /// Which untracked foot starts a step. Walking, when the body comes over one
    /// foot, the other steps, over a step's time at `walk_ratio`:
    /// `√(walk_ratio · height / v)` at the hips' forward speed `v`; the foot the body
    /// comes over, if still in the air, lands on its own time (hurried, it would land
    /// with a jerk of the remaining way over the remaining time cubed). With no gait
    /// to go by, the foot farther than `step_distance` of the height from where it
    /// should land steps, one at a time, over `step_seconds · √(d / step_distance)`
    /// for its distance `d` (of the height): a longer step takes longer, with the
    /// same peak acceleration as a step of `step_distance` over `step_seconds`.
    fn start_steps(
        &mut self,
        swayed: Option<f32>,
        hips: &HipsMotion,
        untracked: [bool; 2],
        landing: &[Vec3; 2],
    ) {
        let (c, height) = (self.inputs.config, self.height);
        let leg = self.leg_length();
        let lead = self.lead(hips);
        let walk_lift = c.step_height * height;
        let lift = walk_lift + (RUN_LIFT * leg - walk_lift).max(0.0) * hips.run;
        // A step's time at `walk_ratio` for the hips' forward speed.
        let speed = hips.ahead.max(c.gait_speed * height).max(1e-3);
        let step_time = (c.walk_ratio.max(0.0) * height / speed).sqrt();
        let state = &mut *self.state;
        let reach = c.step_distance * height;
        // The foot the body is not over, and how far it is from where it lands.
        let swing = usize::from(state.gait.side() > 0.0);
        let lag = horizontal(state.feet[swing].at - landing[swing]).length();
        match swayed {
            Some(over) if hips.walking => {
                // Over the left (1): the right foot steps, and the other way round.
                let stance = usize::from(over < 0.0);
                let half_stride = state.gait.half_stride;
                let foot = &mut state.feet[1 - stance];
                // A runner's foot already in the air, or one coming down from a body
                // in the air, is not restarted from rest.
                let own_time = foot.running || foot.from_air.is_some();
                if untracked[1 - stance] && !(own_time && foot.progress.is_some()) {
                    foot.step(step_time, lift);
                } else if untracked[1 - stance] && foot.running && foot.from_air.is_none() {
                    // A runner's foot in the air lands as the body comes over it: at
                    // the next change of side, half a stride from now. The time it
                    // was given as it left the floor came from an older half stride
                    // (a run's first ones are shorter than the gait's start).
                    foot.retime(half_stride);
                }
            }
            // A walk seen from its middle (the bridge started, the tracking back): the
            // side the body is over is read, with no change of it yet, and the other
            // foot lags where it lands: it steps now, not a half stride late, as a
            // step with no gait to go by takes (landing before the gait's first
            // change of side starts the other foot). A run lifts its feet itself.
            _ if hips.walking
                && hips.run == 0.0
                && state.feet.iter().all(|f| f.progress.is_none())
                && untracked[swing]
                && lag > reach
                && state.gait.take_first_step() =>
            {
                let seconds = standing_step_seconds(c, reach, lag);
                state.feet[swing].step(seconds, walk_lift);
            }
            _ if (!hips.walking || state.gait.is_stalled())
                && state.feet.iter().all(|f| f.progress.is_none()) =>
            {
                let off =
                    [0, 1].map(|side| horizontal(state.feet[side].at - landing[side]).length());
                if let Some(side) = [0, 1]
                    .into_iter()
                    .filter(|&side| untracked[side] && off[side] > reach)
                    .max_by(|&a, &b| off[a].total_cmp(&off[b]))
                {
                    let seconds = standing_step_seconds(c, reach, off[side]);
                    state.feet[side].step(seconds, walk_lift);
                }
            }
            _ => {}
        }
        // Running, a planted foot leaves the floor once the hips have carried it
        // `RUN_REACH.1` of the leg's length behind its footprint, before the gait
        // asks it to step (the stance is shorter than a step's time: both feet
        // are in the air until the other lands), and lands at the change of side
        // after next: two half strides after the last change.
        // Only the foot the body is over lifts so (the other is the one in the
        // air); with no gait to go by, either foot while the other stands, over a
        // step's time at `walk_ratio`.
        if hips.run > 0.0 {
            let trail = RUN_REACH.1 * leg / hips.run;
            let half_stride = state.gait.half_stride;
            let (seconds, over) = match state.gait.side() {
                side if side != 0.0 && !state.gait.is_stalled() => (
                    (2.0 * half_stride - state.gait.since()).max(0.5 * half_stride),
                    Some(usize::from(side < 0.0)),
                ),
                _ => (step_time, None),
            };
            for side in 0..2 {
                let other_planted = state.feet[1 - side].progress.is_none();
                let f = &mut state.feet[side];
                let footprint = landing[side] - hips.heading * lead;
                if untracked[side]
                    && f.progress.is_none()
                    && over.map_or(other_planted, |o| o == side)
                    && (footprint - f.at).dot(hips.heading) > trail
                {
                    f.step(seconds, lift);
                    f.running = true;
                }
            }
        }
    }

    /// Whether the body is in the air: the head above its standing height by more
    /// than `TIPTOE.0` of it, until it is back under `TIPTOE.1` of it.
    fn follow_flight(&mut self) -> bool {
        let standing = self.inputs.body.rest_height(HumanBone::Head);
        let rise = self.inputs.devices.head.position.y / standing.max(1e-3) - 1.0;
        let state = &mut *self.state;
        let (take_off, land) = TIPTOE;
        state.airborne = self.started && rise > if state.airborne { land } else { take_off };
        state.airborne
    }

    /// As the body leaves the floor, a step under way goes on in the hips' frame: it
    /// starts afresh from where the foot is, with its velocity relative to the hips,
    /// over the rest of its time (`PlantedFoot::advance`), its start carried with
    /// the hips (`PlantedFoot::from_air`), so that the foot neither jumps nor
    /// changes speed.
    fn take_off(&mut self, hips: &HipsMotion, untracked: [bool; 2]) {
        let yaw = self.inputs.turns.hips_yaw;
        let hips_velocity = hips.moved / self.inputs.dt;
        for side in (0..2).filter(|&side| untracked[side]) {
            // Where the foot was from under the hip joint as it moved last.
            let under = self.hang_point(hips, side, Vec3::ZERO) - hips.moved;
            let f = &mut self.state.feet[side];
            if let Some(p) = f.progress {
                let (running, velocity) = (f.running, f.velocity);
                let rest = (1.0 - p) * f.seconds;
                let at = yaw.inverse() * (f.at - under);
                f.step(rest.max(self.inputs.dt), 0.0);
                f.running = running;
                f.from_air = Some(at);
                f.to_air = Some(at);
                f.from_velocity = velocity - hips_velocity;
            }
        }
    }

    /// In the air, no untracked foot is on the floor. A foot not stepping (planted,
    /// or its step done) hangs where it is from under its hip joint (`hang_point`),
    /// turned and carried with the hips from the next frame on (`carry_feet`): the legs
    /// keep their pose from the take-off (a leap's trailing foot trails, a jump's feet
    /// stay under the body). A foot stepping goes on with its step, on its own time:
    /// snapped to a hanging place it would jump by the rest of its way.
    fn hang_foot(&mut self, hips: &HipsMotion, side: usize) {
        let yaw = self.inputs.turns.hips_yaw;
        let under = self.hang_point(hips, side, Vec3::ZERO);
        let f = &mut self.state.feet[side];
        if f.progress.is_none() && f.hanging.is_none() {
            f.hanging = Some(yaw.inverse() * (f.at - under));
            f.from_air = None;
        }
    }

    /// Moves what goes with the hips: a hanging foot to its place under them, and
    /// the start of a step that left from the air (`PlantedFoot::from_air`), so that
    /// the foot leaves that place at the body's speed.
    fn carry_feet(&mut self, hips: &HipsMotion) {
        for side in 0..2 {
            let f = self.state.feet[side];
            if let Some(offset) = f.hanging {
                self.state.feet[side].at = self.hang_point(hips, side, offset);
            }
            if let (Some(offset), Some(_)) = (f.from_air, f.progress) {
                self.state.feet[side].from = self.hang_point(hips, side, offset);
            }
        }
    }

    /// Where a foot hangs in the air `offset` (in the frame of the hips' yaw, avatar
    /// metres) from under its hip joint, `P(hips) + Y(hips)·(T(foot) − T(hips))` (the
    /// leg straight down), never below its standing height.
    fn hang_point(&self, hips: &HipsMotion, side: usize, offset: Vec3) -> Vec3 {
        let body = self.inputs.body;
        let foot = LEGS[side].bones()[2];
        let rest = body.rest_position(foot) - body.rest_position(HumanBone::Hips);
        let at = hips.at + self.inputs.turns.hips_yaw * (rest + offset);
        Vec3::new(at.x, at.y.max(body.rest_height(foot)), at.z)
    }

    /// Back on the floor, a foot in the air (hanging, or mid-step from the take-off)
    /// steps to where the gait lands it, in the time a body falls from its height
    /// (`√(2h/g)`), or a standing step's time for the way (`start_steps`), whichever
    /// is longer; the step starts from where the foot is, carried on with the hips
    /// (`PlantedFoot::from_air`), with its velocity relative to them.
    fn land_feet(&mut self, hips: &HipsMotion, landing: &[Vec3; 2]) {
        let (c, height) = (self.inputs.config, self.height);
        let gravity = GRAVITY * self.inputs.devices.scale;
        let reach = c.step_distance * height;
        let yaw = self.inputs.turns.hips_yaw;
        let hips_velocity = hips.moved / self.inputs.dt;
        for side in 0..2 {
            let floor = self.inputs.body.rest_height(LEGS[side].bones()[2]);
            // Where the foot was from under the hip joint as it moved last.
            let under = self.hang_point(hips, side, Vec3::ZERO) - hips.moved;
            let f = &mut self.state.feet[side];
            if f.hanging.is_some() || (f.to_air.is_some() && f.progress.is_some()) {
                let fall = (2.0 * (f.at.y - floor).max(0.0) / gravity).sqrt();
                let step = standing_step_seconds(c, reach, f.at.distance(landing[side]));
                let (at, velocity) = (f.at, f.velocity);
                f.step(fall.max(step), 0.0);
                f.from_air = Some(yaw.inverse() * (at - under));
                f.from_velocity = velocity - hips_velocity;
            }
        }
    }

    /// Where the ankle goes and the foot's model rotation: the foot tracker (which
    /// also plants the foot there), else the planted foot, its step moved on.
    fn foot_target(&mut self, side: usize, landing: Vec3) -> (Vec3, Quat) {
        let f = &mut self.state.feet[side];
        match self.inputs.devices.feet[side] {
            Some(t) => {
                *f = PlantedFoot {
                    at: t.position,
                    yaw: yaw_of(t.rotation),
                    ..PlantedFoot::default()
                };
                (t.position, t.rotation)
            }
            None => {
                let yaw = self.inputs.turns.hips_yaw_angle;
                f.advance(landing, yaw, self.inputs.dt);
                (f.at, Quat::from_rotation_y(f.yaw))
            }
        }
    }

    /// The leg by `LimbIk` to `target`. The knee bends toward the knee tracker, else
    /// forward, between where the hips and the foot face (the foot alone turns too
    /// much in a step, heel to toe): `lerp(root, target, ½) + H·Z + R(foot)·Z·½`.
    fn solve_leg(
        &mut self,
        side: usize,
        limb: Limb,
        target: Vec3,
        rotation: Quat,
        softness: f32,
    ) -> Result<(), IkError> {
        let [upper, _, _] = limb.bones();
        let root = self.frame.position(upper);
        let hips_rotation = self.inputs.turns.hips;
        let pole = self.inputs.devices.knees[side].unwrap_or_else(|| {
            root.lerp(target, 0.5) + hips_rotation * Vec3::Z + rotation * Vec3::Z * 0.5
        });
        LimbIk {
            body: self.inputs.body,
            limb,
            target,
            pole,
            end_rotation: Some(rotation),
            softness,
            weight: 1.0,
            frame: self.frame,
            pose: self.pose,
        }
        .run()
    }
}

/// How long a step of `way` (avatar metres) takes when not walking: `step_seconds` for
/// one of `reach` (`step_distance` of the height), longer by `√(way / reach)` for a
/// longer one. The peak acceleration of a minimum-jerk step, 5.77·d/T², is kept at a
/// `step_distance` step's by T ∝ √d (with no distance set, a step takes
/// `step_seconds`).
fn standing_step_seconds(c: &VrIkConfig, reach: f32, way: f32) -> f32 {
    if reach > 0.0 {
        c.step_seconds * (way / reach).sqrt()
    } else {
        c.step_seconds
    }
}

/// `v` with its vertical part dropped.
fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}
