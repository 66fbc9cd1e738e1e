//! One performer's state on the solver thread: where its frames come from, what it
//! carries from frame to frame (the last joint rotations, IK and filter state, its
//! calibration), and the per-frame solve for each kind of source:
//!
//! - humanoid frames (VMC, replays) are already normalized poses: filtered only;
//! - skeleton frames: `ToNormalized` with the skeleton's `SourceRig`, then
//!   `MocapIk` onto the performer's avatar when enabled, then the filter;
//! - tracker frames: device poses through the device filter, then `VrIk`
//!   (headset, controllers, trackers → full body) onto the performer's avatar,
//!   then the filter.
//!
//! Each performer is solved for its own avatar (`Avatars`, built once at start and
//! shared; a performer holds an index into them). Everything a performer needs is
//! allocated when it appears; a frame allocates nothing.

use std::sync::Arc;
use std::time::Instant;

use glam::{Affine3A, Quat, Vec3};

use crate::filter::{DeviceFilter, DeviceFilterConfig, OneEuroConfig, PoseFilter};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::DevicePose;
use crate::humanoid::{HumanBone, HumanoidPose, Side};
use crate::ik::IkError;
use crate::ik::body::BodyProportions;
use crate::ik::calibration::{Calibration, HEAD_TO_EYE};
use crate::ik::fingers::{self, FingerRest};
use crate::ik::mocap::{MocapIk, MocapIkConfig, MocapIkState};
use crate::ik::vr::{VrIk, VrIkConfig, VrIkState, VrInput};
use crate::protocol::frame::{JointFrame, MAX_JOINTS, PerformerName, TrackedPoint, TrackerFrame};
use crate::protocol::sender_clock::SenderClock;
use crate::retarget::{JobError, MappedSkeleton, SourceRig, ToNormalized};

use super::{SourceKind, SourcePoints};

/// A streamed source skeleton the bridge knows (lab OSC, WebSocket): built once.
#[derive(Debug, Clone)]
pub struct StreamSkeleton {
    /// What senders call it (`lab19`).
    pub name: String,
    pub mapped: MappedSkeleton,
    pub rig: SourceRig,
    /// The body its poses come from, for mocap-mode IK.
    pub body: BodyProportions,
}

impl StreamSkeleton {
    #[must_use]
    pub fn new(name: &str, mapped: MappedSkeleton) -> Self {
        Self {
            name: name.to_owned(),
            rig: SourceRig::new(&mapped),
            body: BodyProportions::new(&mapped),
            mapped,
        }
    }
}

/// How to solve one performer; from the config (defaults, or its own entry).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerformerSettings {
    /// Smoothing of the solved pose; `None` passes frames through untouched.
    pub filter: Option<OneEuroConfig>,
    /// Smoothing of tracked device poses before VR-mode IK; `None`: raw.
    pub device_filter: Option<DeviceFilterConfig>,
    /// Mocap-mode IK for skeleton sources (`enabled: false` skips it).
    pub mocap_ik: MocapIkConfig,
    pub vr_ik: VrIkConfig,
    /// A stored calibration for tracker sources; `None`: the avatar's own body.
    pub calibration: Option<Calibration>,
}

/// Why a frame was not solved (counted per input, never fatal).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum SolveError {
    #[error("frame of skeleton {got} for a performer streaming skeleton {expected}")]
    SkeletonChanged { expected: u16, got: u16 },
    #[error("frame kind differs from the performer's source")]
    SourceChanged,
    #[error(
        "tracker frame without the head (VR-mode IK needs the headset: the input's \
         device or tracker map assigns it)"
    )]
    MissingHead,
    #[error(
        "solving the frame panicked (a bug: the log has the panic's message; please report \
         it): the performer starts afresh from its next frame"
    )]
    Panicked,
    #[error(transparent)]
    Retarget(#[from] JobError),
    #[error(transparent)]
    Ik(#[from] IkError),
}

/// Per-kind state.
#[derive(Debug, Clone)]
enum KindState {
    Humanoid,
    Skeleton {
        skeleton: u16,
        /// Last local rotation and translation of every joint (absent joints hold).
        rotations: Vec<Quat>,
        translations: Vec<Vec3>,
        ik: Box<MocapIkState>,
    },
    Trackers {
        ik: Box<VrIkState>,
        calibration: Calibration,
        /// Whether `calibration` was measured (stored in the config or taken
        /// live) rather than guessed from the avatar's body.
        calibrated: bool,
        /// The devices as last seen (a frame may carry only some), and when each
        /// was last seen on the performer's timeline, seconds.
        last: Box<TrackerFrame>,
        seen: Box<[f64; TrackedPoint::COUNT]>,
        /// The devices as the IK takes them: `last` through the device filter.
        smoothed: Box<Smoothed>,
    },
}

/// A device a performer's frames leave out this long is lost, seconds: the IK
/// solves without it (a tracker whose battery died, or out of its base stations'
/// sight), where holding its last pose would pull the body away from the others.
/// Devices sent every frame at 30 Hz or more miss a dozen frames before.
const DEVICE_LOST_SECONDS: f64 = 0.5;

/// Device poses after the device filter.
#[derive(Debug, Clone)]
struct Smoothed {
    filter: Option<DeviceFilter<{ TrackedPoint::COUNT }>>,
    points: [Option<DevicePose>; TrackedPoint::COUNT],
}

impl Smoothed {
    /// Takes this frame's devices as last seen, `dt` after the previous frame.
    fn update(&mut self, last: &TrackerFrame, dt: f32) {
        if let Some(filter) = &mut self.filter {
            filter.step(dt);
        }
        for (k, (out, seen)) in self.points.iter_mut().zip(last.points).enumerate() {
            *out = seen.map(|d| match &mut self.filter {
                Some(filter) => DevicePose::new(
                    filter.filter(k, d.position),
                    filter.filter_rotation(k, d.rotation),
                ),
                None => d,
            });
        }
    }

    fn point(&self, point: TrackedPoint) -> Option<DevicePose> {
        self.points[point as usize]
    }

    /// Drops device `k`'s filter history.
    fn forget(&mut self, k: usize) {
        if let Some(filter) = &mut self.filter {
            filter.forget(k);
        }
    }
}

/// One performer on the solver thread.
#[derive(Debug, Clone)]
pub struct Performer {
    pub name: PerformerName,
    pub kind: SourceKind,
    pub settings: PerformerSettings,
    /// Which of the solver's `Avatars` this performer is solved for.
    pub avatar: usize,
    source: KindState,
    filter: Option<PoseFilter>,
    /// The last solved pose (bones a frame lacks hold).
    pub pose: HumanoidPose,
    pub seq: u64,
    pub last_seen: Instant,
    /// Whether the log has said why a frame of this performer was not solved.
    pub unsolved_said: bool,
    /// The sender's clock as a timeline from its first frame that never goes
    /// back; arrivals are read from `appeared`.
    clock: SenderClock,
    appeared: Instant,
}

/// The avatar the solved poses are for: its body scales tracker input and is the
/// target of mocap-mode IK.
#[derive(Debug, Clone)]
pub struct Avatar {
    pub body: BodyProportions,
    /// Its fingers' T-pose directions, for tracked hands.
    pub fingers: FingerRest,
    /// Whether a skeleton source's solved poses are given in this avatar's model
    /// space (see `express`), so a receiver showing this avatar puts the hips,
    /// and with them the solved feet, exactly where the IK did. Set for an avatar
    /// the user named (`from_model`); the built-in humanoid leaves the source's
    /// metres, as they came.
    pub own_metres: bool,
}

impl Avatar {
    /// The avatar of a mapped rig (its T-pose), leaving poses in the source's
    /// metres: the built-in humanoid.
    #[must_use]
    pub fn new(mapped: &MappedSkeleton) -> Self {
        let rest = VrmaRest::from_mapped(mapped);
        Self {
            body: BodyProportions::new(mapped),
            fingers: FingerRest::new(|bone| rest.position(bone)),
            own_metres: false,
        }
    }

    /// The avatar of a model the user named (its T-pose): poses are given in its
    /// metres (see `own_metres`).
    #[must_use]
    pub fn from_model(mapped: &MappedSkeleton) -> Self {
        Self {
            own_metres: true,
            ..Self::new(mapped)
        }
    }

    /// Puts a skeleton source's pose, solved for this avatar, into this avatar's
    /// model space when it keeps its own (`own_metres`): the hips position scaled
    /// by `h_avatar / rest_hips_height` and lifted by the height of the avatar's
    /// lowest T-pose joint above its origin (`y_hips − h_avatar`), and
    /// `rest_hips_height` set to `h_avatar`. The retarget and the IK stand a body
    /// with its lowest joint on `y = 0`; a model stands on its origin with that
    /// joint (a toe or an ankle inside the foot) above it, so without the lift a
    /// VRM whose toe joints sit 2 cm up sinks 2 cm into the floor. A receiver
    /// takes the hips position as the avatar's own (three-vrm's normalized hips,
    /// `FromNormalized` at a scale of 1). Poses without a usable rest hips height
    /// stay as they are.
    fn express(&self, pose: &mut HumanoidPose) {
        let (from, to) = (pose.rest_hips_height, self.body.rest_hips_height());
        if self.own_metres && from.is_finite() && from > 0.0 && to.is_finite() && to > 0.0 {
            pose.hips_position *= to / from;
            pose.hips_position.y += self.body.rest_position(HumanBone::Hips).y - to;
            pose.rest_hips_height = to;
        }
    }
}

/// The avatars performers are solved for, built once when the bridge starts and
/// shared with the solver: the first is the default (every performer without an
/// avatar of its own), the others are named by index in the performers' settings.
#[derive(Debug, Clone)]
pub struct Avatars(Arc<[Avatar]>);

impl Avatars {
    /// `default` first, then `others` (indices 1, 2, ...).
    #[must_use]
    pub fn new(default: Avatar, others: Vec<Avatar>) -> Self {
        Self(std::iter::once(default).chain(others).collect())
    }

    /// Avatar `index`, the default for an index out of range.
    #[must_use]
    pub fn get(&self, index: usize) -> &Avatar {
        self.0.get(index).unwrap_or(&self.0[0])
    }
}

impl From<Avatar> for Avatars {
    /// Only the default: every performer is solved for `avatar`.
    fn from(avatar: Avatar) -> Self {
        Self::new(avatar, Vec::new())
    }
}

impl Performer {
    /// A performer whose first frame is `kind`, solved for `avatars.get(avatar)`;
    /// a skeleton source names its skeleton.
    #[must_use]
    pub fn new(
        name: PerformerName,
        kind: SourceKind,
        skeleton: Option<(u16, &StreamSkeleton)>,
        settings: PerformerSettings,
        avatars: &Avatars,
        avatar_index: usize,
        now: Instant,
    ) -> Self {
        let avatar = avatars.get(avatar_index);
        let source = match (kind, skeleton) {
            (SourceKind::Skeleton, Some((index, s))) => KindState::Skeleton {
                skeleton: index,
                rotations: s.mapped.skeleton.rest_rotations(),
                translations: s.mapped.skeleton.rest_translations(),
                ik: Box::default(),
            },
            (SourceKind::Trackers, _) => KindState::Trackers {
                ik: Box::default(),
                calibrated: settings.calibration.is_some(),
                calibration: settings
                    .calibration
                    .unwrap_or_else(|| Calibration::of_body(&avatar.body, HEAD_TO_EYE)),
                last: Box::new(TrackerFrame::new(name)),
                seen: Box::new([0.0; TrackedPoint::COUNT]),
                smoothed: Box::new(Smoothed {
                    filter: settings.device_filter.map(DeviceFilter::new),
                    points: [None; TrackedPoint::COUNT],
                }),
            },
            _ => KindState::Humanoid,
        };
        Self {
            name,
            kind,
            settings,
            avatar: avatar_index,
            source,
            filter: settings.filter.map(PoseFilter::new),
            pose: HumanoidPose::default(),
            seq: 0,
            last_seen: now,
            unsolved_said: false,
            clock: SenderClock::default(),
            appeared: now,
        }
    }

    /// Seconds from this performer's first frame for a sender time `t` of a frame
    /// that arrived at `arrived` (never going back: `SenderClock`), and the
    /// interval since the previous frame (a guess of 1/60 s for the first frame
    /// and after a pause).
    fn clock(&mut self, t: f64, arrived: Instant) -> (f64, f32) {
        let arrived = arrived.saturating_duration_since(self.appeared);
        let before = self.clock.last();
        let time = self.clock.time(t, arrived.as_secs_f64());
        let dt = (time - before) as f32;
        let dt = if self.seq > 0 && dt > 0.0 && dt < 1.0 {
            dt
        } else {
            1.0 / 60.0
        };
        (time, dt)
    }

    fn finish(&mut self, dt: f32, now: Instant) {
        if let Some(filter) = &mut self.filter {
            filter.run(&mut self.pose, dt);
        }
        self.seq += 1;
        self.last_seen = now;
    }

    /// A pose already on the humanoid bones, `time` on the sender's clock, that
    /// arrived at `now` (as every `solve_*` takes it).
    pub fn solve_humanoid(
        &mut self,
        time: f64,
        pose: &HumanoidPose,
        now: Instant,
    ) -> Result<f64, SolveError> {
        if !matches!(self.source, KindState::Humanoid) {
            return Err(SolveError::SourceChanged);
        }
        let (time, dt) = self.clock(time, now);
        self.pose = *pose;
        self.finish(dt, now);
        Ok(time)
    }

    /// A streamed skeleton frame through its source rig (and mocap IK onto its
    /// avatar's body).
    pub fn solve_joints(
        &mut self,
        index: u16,
        skeleton: &StreamSkeleton,
        frame: &JointFrame,
        avatars: &Avatars,
        now: Instant,
    ) -> Result<f64, SolveError> {
        let avatar = avatars.get(self.avatar);
        let (time, dt) = self.clock(frame.time, now);
        let KindState::Skeleton {
            skeleton: expected,
            rotations,
            translations,
            ik,
        } = &mut self.source
        else {
            return Err(SolveError::SourceChanged);
        };
        if *expected != index {
            return Err(SolveError::SkeletonChanged {
                expected: *expected,
                got: index,
            });
        }
        for (j, rotation) in rotations.iter_mut().enumerate() {
            if frame.has(j) {
                *rotation = frame.rotations[j];
            }
        }
        if let (Some(root), Some(slot)) = (frame.root_position, translations.first_mut()) {
            *slot = root;
        }
        ToNormalized {
            source: &skeleton.rig,
            local_rotations: rotations,
            local_translations: translations,
            pose: &mut self.pose,
        }
        .run()?;
        if self.settings.mocap_ik.enabled {
            MocapIk {
                config: &self.settings.mocap_ik,
                source: &skeleton.body,
                target: &avatar.body,
                dt,
                state: ik,
                pose: &mut self.pose,
            }
            .run()?;
        }
        avatar.express(&mut self.pose);
        self.finish(dt, now);
        Ok(time)
    }

    /// Tracked devices through VR-mode IK onto its avatar's body (whose metres
    /// the pose is in).
    pub fn solve_trackers(
        &mut self,
        frame: &TrackerFrame,
        avatars: &Avatars,
        now: Instant,
    ) -> Result<f64, SolveError> {
        let avatar = avatars.get(self.avatar);
        let (time, dt) = self.clock(frame.time, now);
        let KindState::Trackers {
            ik,
            calibration,
            last,
            seen,
            smoothed,
            ..
        } = &mut self.source
        else {
            return Err(SolveError::SourceChanged);
        };
        for (k, (slot, pose)) in last.points.iter_mut().zip(frame.points).enumerate() {
            if pose.is_some() {
                *slot = pose;
                seen[k] = time;
            } else if slot.is_some() && time - seen[k] > DEVICE_LOST_SECONDS {
                // Lost: solved without it from now on, filtered afresh if it comes back.
                *slot = None;
                smoothed.forget(k);
            }
        }
        smoothed.update(last, dt);
        let point = |p: TrackedPoint| smoothed.point(p);
        let head = point(TrackedPoint::Head).ok_or(SolveError::MissingHead)?;
        let position = |p: TrackedPoint| point(p).map(|d: DevicePose| d.position);
        let input = VrInput {
            head,
            hands: [
                point(TrackedPoint::LeftHand),
                point(TrackedPoint::RightHand),
            ],
            hips: point(TrackedPoint::Hips),
            chest: point(TrackedPoint::Chest),
            feet: [
                point(TrackedPoint::LeftFoot),
                point(TrackedPoint::RightFoot),
            ],
            elbows: [
                position(TrackedPoint::LeftElbow),
                position(TrackedPoint::RightElbow),
            ],
            knees: [
                position(TrackedPoint::LeftKnee),
                position(TrackedPoint::RightKnee),
            ],
        };
        VrIk {
            config: &self.settings.vr_ik,
            body: &avatar.body,
            calibration,
            input: &input,
            dt,
            state: ik,
            pose: &mut self.pose,
        }
        .run()?;
        for (side, joints) in [Side::Left, Side::Right]
            .into_iter()
            .zip(&frame.hand_joints)
        {
            if let Some(joints) = joints {
                fingers::apply(&mut self.pose, &avatar.fingers, side, joints);
            }
        }
        self.finish(dt, now);
        Ok(time)
    }

    /// Takes the devices as last seen (filtered) as this performer's T-pose
    /// calibration: the headset and both controllers (`Calibration::from_t_pose`),
    /// else the headset alone (`Calibration::from_head`). `false` when the headset
    /// was never seen.
    pub fn calibrate(&mut self) -> bool {
        let KindState::Trackers {
            calibration,
            calibrated,
            smoothed,
            ik,
            ..
        } = &mut self.source
        else {
            return false;
        };
        let point = |p: TrackedPoint| smoothed.point(p);
        let Some(head) = point(TrackedPoint::Head) else {
            return false;
        };
        *calibration = match (
            point(TrackedPoint::LeftHand),
            point(TrackedPoint::RightHand),
        ) {
            (Some(left), Some(right)) => Calibration::from_t_pose(head, left, right),
            _ => Calibration::from_head(head),
        };
        *calibrated = true;
        ik.reset();
        true
    }

    /// The skeleton table index of a skeleton source.
    #[must_use]
    pub fn skeleton(&self) -> Option<u16> {
        match &self.source {
            KindState::Skeleton { skeleton, .. } => Some(*skeleton),
            _ => None,
        }
    }

    /// Where this performer's source is now, into `out` (see `SourcePoints`):
    /// a skeleton's joints by forward kinematics of the last frame, turned to face
    /// +Z like the avatar, or the devices as last seen. `false` for humanoid
    /// sources (their source is the pose itself).
    pub fn source_points(&self, skeletons: &[StreamSkeleton], out: &mut SourcePoints) -> bool {
        out.performer = self.name;
        out.seq = self.seq;
        out.present = 0;
        match &self.source {
            KindState::Humanoid => false,
            KindState::Skeleton {
                skeleton,
                rotations,
                translations,
                ..
            } => {
                let Some(s) = skeletons.get(usize::from(*skeleton)) else {
                    return false;
                };
                let joints = s.mapped.skeleton.joints();
                let facing = Affine3A::from_quat(s.mapped.correction.facing);
                let mut world = [Affine3A::IDENTITY; MAX_JOINTS];
                let n = joints.len().min(MAX_JOINTS);
                for (i, joint) in joints.iter().enumerate().take(n) {
                    let local = Affine3A::from_scale_rotation_translation(
                        joint.rest.scale,
                        rotations[i],
                        translations[i],
                    );
                    world[i] = match joint.parent {
                        Some(p) if p < i => world[p] * local,
                        _ => facing * local,
                    };
                    out.points[i] = world[i].translation.into();
                    out.present |= 1 << i;
                }
                out.skeleton = Some(*skeleton);
                out.count = n as u16;
                true
            }
            KindState::Trackers { last, .. } => {
                for (i, point) in last.points.iter().enumerate() {
                    if let Some(device) = point {
                        out.points[i] = device.position;
                        out.present |= 1 << i;
                    }
                }
                out.skeleton = None;
                out.count = TrackedPoint::COUNT as u16;
                true
            }
        }
    }

    /// The calibration in use (tracker sources).
    #[must_use]
    pub fn calibration(&self) -> Option<Calibration> {
        match &self.source {
            KindState::Trackers { calibration, .. } => Some(*calibration),
            _ => None,
        }
    }

    /// Whether a measured calibration is in use (see `calibration`).
    #[must_use]
    pub fn is_calibrated(&self) -> bool {
        matches!(
            self.source,
            KindState::Trackers {
                calibrated: true,
                ..
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::mocap::MocapIkState;

    fn mapped(name: &str, json: &str) -> MappedSkeleton {
        let rig = crate::formats::skeleton_json::embedded_rig(name, json);
        let map = rig.bone_map.clone().unwrap();
        MappedSkeleton::new(rig.skeleton, &map).unwrap()
    }

    fn humanoid() -> MappedSkeleton {
        mapped("humanoid.json", crate::skeleton::builtin::HUMANOID_JSON)
    }

    fn avatar() -> Avatars {
        Avatar::new(&humanoid()).into()
    }

    /// Default IK settings, no filters and no stored calibration.
    fn unfiltered() -> PerformerSettings {
        PerformerSettings {
            filter: None,
            device_filter: None,
            mocap_ik: MocapIkConfig::default(),
            vr_ik: VrIkConfig::default(),
            calibration: None,
        }
    }

    /// The built-in humanoid (default) and, as avatar 1, the humanoid with legs
    /// 1.3 times as long.
    fn two_avatars() -> (Avatars, MappedSkeleton) {
        let long = crate::eval::scale_legs(&humanoid(), 1.3).unwrap();
        let avatars = Avatars::new(Avatar::new(&humanoid()), vec![Avatar::from_model(&long)]);
        (avatars, long)
    }

    #[test]
    fn a_sender_restarting_its_clock_keeps_the_performer_time_going_forward() {
        // A VMC sender restarted: its clock goes from 5 s back to 0. The recorder
        // takes only frames later than the last, so the time must not go back.
        let avatars = avatar();
        let name = PerformerName::new("vmc").unwrap();
        let now = Instant::now();
        let mut p = Performer::new(
            name,
            SourceKind::Humanoid,
            None,
            unfiltered(),
            &avatars,
            0,
            now,
        );
        let pose = HumanoidPose::default();
        let times: Vec<f64> = [5.0, 5.02, 5.04, 0.0, 0.02]
            .iter()
            .map(|&t| p.solve_humanoid(t, &pose, now).unwrap())
            .collect();
        let want = [0.0, 0.02, 0.04, 0.06, 0.08];
        for (got, want) in times.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{times:?}");
        }
    }

    #[test]
    fn a_skeleton_performer_with_its_own_avatar_is_solved_for_that_body() {
        let (avatars, long) = two_avatars();
        let lab19 = StreamSkeleton::new(
            "lab19",
            mapped("lab19", crate::skeleton::builtin::LAB19_JSON),
        );
        let motion = crate::takes::demo::lab19_performance(&lab19.mapped, 1);
        let settings = unfiltered();
        let now = Instant::now();
        let performer = |name: &str, avatar: usize| {
            let name = PerformerName::new(name).unwrap();
            let skeleton = Some((0, &lab19));
            let kind = SourceKind::Skeleton;
            Performer::new(name, kind, skeleton, settings, &avatars, avatar, now)
        };
        let (mut own, mut default) = (performer("alice", 1), performer("bob", 0));
        let long_body = BodyProportions::new(&long);
        let mut state = MocapIkState::default();
        let mut legs_differ = 0.0f32;
        for i in 0..motion.frame_count().min(120) {
            let f = motion.frame(i);
            let mut frame = JointFrame::new(own.name);
            frame.time = i as f64 / 60.0;
            for (j, q) in f.rotations.iter().enumerate() {
                frame.set(j, *q);
            }
            frame.root_position = Some(f.translations[0]);
            own.solve_joints(0, &lab19, &frame, &avatars, now).unwrap();
            default
                .solve_joints(0, &lab19, &frame, &avatars, now)
                .unwrap();
            // The same frame through mocap IK onto the long-legged body by hand,
            // then into that body's metres.
            let mut expected = HumanoidPose::default();
            // A joint frame carries the root's translation only.
            let mut translations = lab19.mapped.skeleton.rest_translations();
            translations[0] = f.translations[0];
            ToNormalized {
                source: &lab19.rig,
                local_rotations: f.rotations,
                local_translations: &translations,
                pose: &mut expected,
            }
            .run()
            .unwrap();
            MocapIk {
                config: &settings.mocap_ik,
                source: &lab19.body,
                target: &long_body,
                dt: 1.0 / 60.0,
                state: &mut state,
                pose: &mut expected,
            }
            .run()
            .unwrap();
            let scale = long_body.rest_hips_height() / expected.rest_hips_height;
            expected.hips_position *= scale;
            expected.hips_position.y +=
                long_body.rest_position(HumanBone::Hips).y - long_body.rest_hips_height();
            expected.rest_hips_height = long_body.rest_hips_height();
            let got = own.pose;
            assert!(
                got.hips_position.distance(expected.hips_position) < 1e-5,
                "frame {i}"
            );
            assert_eq!(got.rest_hips_height, long_body.rest_hips_height());
            for (bone, q) in expected.bones() {
                // Where the bone's axes point (an acos of a dot product is all f32
                // noise this close to 1).
                let r = got.rotation_or_identity(bone);
                let off = [Vec3::X, Vec3::Y].map(|a| (r * a).distance(q * a));
                assert!(
                    off[0].max(off[1]) < 1e-5,
                    "frame {i}: {bone:?} off by {off:?}"
                );
            }
            let knee = HumanBone::LeftLowerLeg;
            legs_differ = legs_differ.max(
                got.rotation_or_identity(knee)
                    .angle_between(default.pose.rotation_or_identity(knee)),
            );
        }
        // The default performer stays on the built-in body, in the source's metres.
        assert_eq!(default.pose.rest_hips_height, lab19.body.rest_hips_height());
        assert!(
            legs_differ > 0.5f32.to_radians(),
            "the two bodies bend their knees differently: {legs_differ} rad"
        );
    }

    #[test]
    fn a_tracker_performer_with_its_own_avatar_stands_on_that_body() {
        let (avatars, long) = two_avatars();
        let settings = unfiltered();
        let now = Instant::now();
        let name = PerformerName::new("vr").unwrap();
        let mut own = Performer::new(name, SourceKind::Trackers, None, settings, &avatars, 1, now);
        let mut default =
            Performer::new(name, SourceKind::Trackers, None, settings, &avatars, 0, now);
        let long_body = BodyProportions::new(&long);
        // Its calibration is guessed from its own avatar's body.
        assert_eq!(
            own.calibration(),
            Some(Calibration::of_body(&long_body, HEAD_TO_EYE))
        );
        let mut frame = TrackerFrame::new(name);
        let head = long_body.rest_position(HumanBone::Head) + Vec3::new(0.0, 0.1, 0.08);
        for (point, at) in [
            (TrackedPoint::Head, head),
            (TrackedPoint::LeftHand, Vec3::new(0.3, 1.0, 0.2)),
            (TrackedPoint::RightHand, Vec3::new(-0.3, 1.0, 0.2)),
        ] {
            frame.set(point, DevicePose::new(at, Quat::IDENTITY));
        }
        own.solve_trackers(&frame, &avatars, now).unwrap();
        default.solve_trackers(&frame, &avatars, now).unwrap();
        assert_eq!(own.pose.rest_hips_height, long_body.rest_hips_height());
        assert_ne!(
            default.pose.rest_hips_height, own.pose.rest_hips_height,
            "the default avatar's hips are elsewhere"
        );
    }

    /// A tracker performer `name` on `avatar`'s default body, unfiltered.
    fn vr_performer(name: PerformerName, avatar: &Avatars, now: Instant) -> Performer {
        Performer::new(
            name,
            SourceKind::Trackers,
            None,
            unfiltered(),
            avatar,
            0,
            now,
        )
    }

    #[test]
    fn a_tracker_frame_without_the_head_says_so_and_one_without_controllers_is_solved() {
        let avatar = avatar();
        let (name, now) = (PerformerName::new("vr").unwrap(), Instant::now());
        let mut p = vr_performer(name, &avatar, now);
        let mut frame = TrackerFrame::new(name);
        frame.set(TrackedPoint::Hips, DevicePose::new(Vec3::Y, Quat::IDENTITY));
        let err = p.solve_trackers(&frame, &avatar, now).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("tracker frame without the head (VR-mode IK"),
            "{err}"
        );
        assert!(!p.calibrate(), "no headset, no calibration");
        // A headset and body trackers, no controllers: solved, and calibrated from
        // the headset's height.
        frame.set(
            TrackedPoint::Head,
            DevicePose::new(Vec3::new(0.0, 1.7, 0.1), Quat::IDENTITY),
        );
        p.solve_trackers(&frame, &avatar, now).unwrap();
        assert!(p.pose.has(HumanBone::LeftLowerArm));
        assert!(p.calibrate());
        let KindState::Trackers { calibration, .. } = &p.source else {
            panic!("a tracker performer");
        };
        assert!((calibration.height - 1.63).abs() < 1e-4, "{calibration:?}");
    }

    #[test]
    fn a_tracker_that_stops_sending_is_lost_and_the_body_follows_the_others() {
        // A user walks 1.2 m ahead over 4 s; the hips tracker stops sending at 1 s
        // (its battery died). Held where it was, it would keep the hips behind.
        let avatar = avatar();
        let (name, now) = (PerformerName::new("vr").unwrap(), Instant::now());
        let mut p = vr_performer(name, &avatar, now);
        for i in 0..=240 {
            let t = f64::from(i) / 60.0;
            let ahead = Vec3::new(0.0, 0.0, 0.3 * t as f32);
            let mut frame = TrackerFrame::new(name);
            frame.time = t;
            for (point, at) in [
                (TrackedPoint::Head, Vec3::new(0.0, 1.5, 0.08)),
                (TrackedPoint::LeftHand, Vec3::new(0.3, 1.0, 0.2)),
                (TrackedPoint::RightHand, Vec3::new(-0.3, 1.0, 0.2)),
                (TrackedPoint::Hips, Vec3::new(0.0, 0.95, 0.0)),
            ] {
                if point != TrackedPoint::Hips || t < 1.0 {
                    frame.set(point, DevicePose::new(at + ahead, Quat::IDENTITY));
                }
            }
            p.solve_trackers(&frame, &avatar, now).unwrap();
        }
        let hips = p.pose.hips_position;
        assert!(
            (hips.z - 1.2).abs() < 0.2,
            "hips at {hips}, the head at z 1.28"
        );
        let KindState::Trackers { last, .. } = &p.source else {
            panic!("a tracker performer");
        };
        assert!(
            last.point(TrackedPoint::Hips).is_none(),
            "the hips tracker is held"
        );
    }

    /// Frame-to-frame turn of the left lower arm and of the left hand (degrees),
    /// and motion of the hips (mm), summed over the last 80 frames of a still
    /// user whose devices jitter by 2 mm and 0.25°.
    fn shake(device_filter: Option<DeviceFilterConfig>) -> [f32; 3] {
        let avatar = avatar();
        let settings = PerformerSettings {
            device_filter,
            ..unfiltered()
        };
        let name = PerformerName::new("vr").unwrap();
        let now = Instant::now();
        let mut performer =
            Performer::new(name, SourceKind::Trackers, None, settings, &avatar, 0, now);
        let mut noise = crate::filter::device::uniform_noise(0x9e37_79b9, 0.002);
        let mut wobble = crate::filter::device::uniform_noise(0x7f4a_7c15, 0.25f32.to_radians());
        let [mut turn, mut hand_turn, mut travel] = [0.0; 3];
        let mut last: Option<HumanoidPose> = None;
        for i in 0..120 {
            let mut frame = TrackerFrame::new(name);
            frame.time = f64::from(i) / 120.0;
            for (point, at) in [
                (TrackedPoint::Head, Vec3::new(0.0, 1.5, 0.08)),
                (TrackedPoint::LeftHand, Vec3::new(0.3, 1.0, 0.2)),
                (TrackedPoint::RightHand, Vec3::new(-0.3, 1.0, 0.2)),
            ] {
                let at = at + Vec3::new(noise(), noise(), noise());
                let turned = Quat::from_scaled_axis(Vec3::new(wobble(), wobble(), wobble()));
                frame.set(point, DevicePose::new(at, turned));
            }
            performer.solve_trackers(&frame, &avatar, now).unwrap();
            let pose = performer.pose;
            if let Some(before) = last.filter(|_| i >= 40) {
                let bone = |p: &HumanoidPose, b| p.rotation_or_identity(b);
                for (sum, b) in [
                    (&mut turn, HumanBone::LeftLowerArm),
                    (&mut hand_turn, HumanBone::LeftHand),
                ] {
                    *sum += bone(&before, b).angle_between(bone(&pose, b)).to_degrees();
                }
                travel += before.hips_position.distance(pose.hips_position) * 1000.0;
            }
            last = Some(pose);
        }
        [turn, hand_turn, travel]
    }

    #[test]
    fn the_device_filter_steadies_a_still_user_with_jittery_devices() {
        let raw = shake(None);
        let filtered = shake(Some(DeviceFilterConfig::default()));
        println!(
            "elbow, hand: {:.1}°, {:.1}° vs {:.1}°, {:.1}° raw; hips {:.1} mm vs {:.1} mm raw",
            filtered[0], filtered[1], raw[0], raw[1], filtered[2], raw[2]
        );
        // Rotations are filtered too: without, the hand shakes with the controller.
        let positions_only = shake(Some(DeviceFilterConfig {
            rotation_noise_deg: 0.0,
            ..DeviceFilterConfig::default()
        }));
        println!(
            "hand {:.1}° with positions filtered only",
            positions_only[1]
        );
        assert!(filtered[1] < positions_only[1] / 2.0);
        for (what, (f, r)) in ["elbow turn", "hand turn", "hips travel"]
            .into_iter()
            .zip(filtered.into_iter().zip(raw))
        {
            assert!(r > 0.0 && f < r / 3.0, "{what}: {f} filtered vs {r} raw");
        }
    }
}
