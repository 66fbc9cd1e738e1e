//! One performer's state on the solver thread: where its frames come from, what it
//! carries from frame to frame (the last joint rotations, IK and filter state, its
//! calibration), and the per-frame solve for each kind of source:
//!
//! - humanoid frames (VMC, replays) are already normalized poses: filtered only;
//! - skeleton frames: `ToNormalized` with the skeleton's `SourceRig`, then the
//!   mocap-mode IK hook when enabled, then the filter;
//! - tracker frames: device poses through the device filter, then `VrIk`
//!   (headset, controllers, trackers → full body), then the filter.
//!
//! Everything a performer needs is allocated when it appears; a frame allocates
//! nothing.

use std::time::Instant;

use glam::{Affine3A, Quat, Vec3};

use crate::filter::{DeviceFilter, DeviceFilterConfig, OneEuroConfig, PoseFilter};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::DevicePose;
use crate::humanoid::{HumanoidPose, Side};
use crate::ik::IkError;
use crate::ik::body::BodyProportions;
use crate::ik::calibration::{Calibration, HEAD_TO_EYE};
use crate::ik::fingers::{self, FingerRest};
use crate::ik::mocap::{MocapIk, MocapIkConfig, MocapIkState};
use crate::ik::vr::{VrIk, VrIkConfig, VrIkState, VrInput};
use crate::protocol::frame::{JointFrame, MAX_JOINTS, PerformerName, TrackedPoint, TrackerFrame};
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
    #[error("tracker frame without headset and both controllers")]
    MissingDevices,
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
        /// The devices as last seen (a frame may carry only some).
        last: Box<TrackerFrame>,
        /// The devices as the IK takes them: `last` through the device filter.
        smoothed: Box<Smoothed>,
    },
}

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
}

/// One performer on the solver thread.
#[derive(Debug, Clone)]
pub struct Performer {
    pub name: PerformerName,
    pub kind: SourceKind,
    pub settings: PerformerSettings,
    source: KindState,
    filter: Option<PoseFilter>,
    /// The last solved pose (bones a frame lacks hold).
    pub pose: HumanoidPose,
    pub seq: u64,
    pub last_seen: Instant,
    /// Sender time of the first frame and of the last one, seconds.
    first_time: Option<f64>,
    last_time: f64,
}

/// Headset and both controllers, when all three have been seen.
fn three_points(devices: &Smoothed) -> Option<(DevicePose, DevicePose, DevicePose)> {
    Some((
        devices.point(TrackedPoint::Head)?,
        devices.point(TrackedPoint::LeftHand)?,
        devices.point(TrackedPoint::RightHand)?,
    ))
}

/// The avatar the solved poses are for: its body scales tracker input and is the
/// target of mocap-mode IK.
#[derive(Debug, Clone)]
pub struct Avatar {
    pub body: BodyProportions,
    /// Its fingers' T-pose directions, for tracked hands.
    pub fingers: FingerRest,
}

impl Avatar {
    /// The avatar of a mapped rig (its T-pose).
    #[must_use]
    pub fn new(mapped: &MappedSkeleton) -> Self {
        let rest = VrmaRest::from_mapped(mapped);
        Self {
            body: BodyProportions::new(mapped),
            fingers: FingerRest::new(|bone| rest.position(bone)),
        }
    }
}

impl Performer {
    /// A performer whose first frame is `kind`; a skeleton source names its
    /// skeleton.
    #[must_use]
    pub fn new(
        name: PerformerName,
        kind: SourceKind,
        skeleton: Option<(u16, &StreamSkeleton)>,
        settings: PerformerSettings,
        avatar: &Avatar,
        now: Instant,
    ) -> Self {
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
            source,
            filter: settings.filter.map(PoseFilter::new),
            pose: HumanoidPose::default(),
            seq: 0,
            last_seen: now,
            first_time: None,
            last_time: 0.0,
        }
    }

    /// Seconds from this performer's first frame for a sender time `t`, and the
    /// interval since the previous frame (a guess of 1/60 s when the clock stalls
    /// or jumps back).
    fn clock(&mut self, t: f64) -> (f64, f32) {
        let first = *self.first_time.get_or_insert(t);
        let time = t - first;
        let dt = (time - self.last_time) as f32;
        let dt = if self.seq > 0 && dt > 0.0 && dt < 1.0 {
            dt
        } else {
            1.0 / 60.0
        };
        self.last_time = time;
        (time, dt)
    }

    fn finish(&mut self, dt: f32, now: Instant) {
        if let Some(filter) = &mut self.filter {
            filter.run(&mut self.pose, dt);
        }
        self.seq += 1;
        self.last_seen = now;
    }

    /// A pose already on the humanoid bones, `time` from the sender's first frame.
    pub fn solve_humanoid(
        &mut self,
        time: f64,
        pose: &HumanoidPose,
        now: Instant,
    ) -> Result<f64, SolveError> {
        if !matches!(self.source, KindState::Humanoid) {
            return Err(SolveError::SourceChanged);
        }
        let (time, dt) = self.clock(time);
        self.pose = *pose;
        self.finish(dt, now);
        Ok(time)
    }

    /// A streamed skeleton frame through its source rig (and mocap IK).
    pub fn solve_joints(
        &mut self,
        index: u16,
        skeleton: &StreamSkeleton,
        frame: &JointFrame,
        avatar: &Avatar,
        now: Instant,
    ) -> Result<f64, SolveError> {
        let (time, dt) = self.clock(frame.time);
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
        self.finish(dt, now);
        Ok(time)
    }

    /// Tracked devices through VR-mode IK onto the avatar's body.
    pub fn solve_trackers(
        &mut self,
        frame: &TrackerFrame,
        avatar: &Avatar,
        now: Instant,
    ) -> Result<f64, SolveError> {
        let (time, dt) = self.clock(frame.time);
        let KindState::Trackers {
            ik,
            calibration,
            last,
            smoothed,
            ..
        } = &mut self.source
        else {
            return Err(SolveError::SourceChanged);
        };
        for (slot, pose) in last.points.iter_mut().zip(frame.points) {
            if pose.is_some() {
                *slot = pose;
            }
        }
        smoothed.update(last, dt);
        let point = |p: TrackedPoint| smoothed.point(p);
        let Some((head, left, right)) = three_points(smoothed) else {
            return Err(SolveError::MissingDevices);
        };
        let position = |p: TrackedPoint| point(p).map(|d: DevicePose| d.position);
        let input = VrInput {
            head,
            hands: [left, right],
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
    /// calibration. `false` when headset or controllers were never seen.
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
        let Some((head, left, right)) = three_points(smoothed) else {
            return false;
        };
        *calibration = Calibration::from_t_pose(head, left, right);
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
    use crate::humanoid::HumanBone;

    fn avatar() -> Avatar {
        let rig = crate::formats::skeleton_json::embedded_rig(
            "humanoid.json",
            crate::skeleton::builtin::HUMANOID_JSON,
        );
        let map = rig.bone_map.clone().unwrap();
        Avatar::new(&MappedSkeleton::new(rig.skeleton, &map).unwrap())
    }

    /// Frame-to-frame turn of the left lower arm and of the left hand (degrees),
    /// and motion of the hips (mm), summed over the last 80 frames of a still
    /// user whose devices jitter by 2 mm and 0.25°.
    fn shake(device_filter: Option<DeviceFilterConfig>) -> [f32; 3] {
        let avatar = avatar();
        let settings = PerformerSettings {
            filter: None,
            device_filter,
            mocap_ik: MocapIkConfig::default(),
            vr_ik: VrIkConfig::default(),
            calibration: None,
        };
        let name = PerformerName::new("vr").unwrap();
        let now = Instant::now();
        let mut performer =
            Performer::new(name, SourceKind::Trackers, None, settings, &avatar, now);
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
