//! Measuring the IK on whole clips: the numbers `mocap-bridge eval-ik` prints and the
//! tests check. Runs the per-frame jobs over a `Motion`: mocap mode compares joint
//! positions of the posed target skeleton (its own forward kinematics, not the IK's);
//! VR mode compares `BodyFrame`s of the ground truth and the solve on the same body
//! (the forward kinematics `FromNormalized` matches). Pure code: it
//! allocates per clip, not per frame, and reads no files.

mod contacts;
pub mod corpus;
mod locomotion;

pub use contacts::SourceContacts;
pub use locomotion::{LOCOMOTION_SPEED, Travel};

use glam::{Quat, Vec3};

use crate::filter::{DeviceFilter, DeviceFilterConfig};
use crate::formats::Motion;
use crate::humanoid::DevicePose;
use crate::humanoid::{BONE_COUNT, HumanBone, HumanoidPose};
use crate::ik::body::{BodyFrame, BodyProportions, Limb};
use crate::ik::calibration::{Calibration, HEAD_TO_EYE};
use crate::ik::mocap::{MocapIk, MocapIkConfig, MocapIkState};
use crate::ik::vr::{VrIk, VrIkConfig, VrIkState, VrInput};
use crate::retarget::{
    FromNormalized, JobError, MappedSkeleton, SourceRig, TargetRig, ToNormalized,
};
use crate::skeleton::{HeldBone, Joint, RestCorrection, Skeleton, place_held};

/// Why an evaluation cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("retarget: {0}")]
    Retarget(#[from] JobError),
    #[error("ik: {0}")]
    Ik(#[from] crate::ik::IkError),
    #[error("the target has no `{0}`")]
    MissingBone(HumanBone),
    #[error("scaled skeleton: {0}")]
    Skeleton(#[from] crate::skeleton::InvalidSkeleton),
}

/// Seconds from frame `i - 1` to frame `i` of a clip with frame `times` (for the
/// first frame, the interval to the second, or 1/30 s for a one-frame clip; a clip
/// may start at any time).
fn frame_interval(times: &[f32], i: usize) -> f32 {
    let at = |k: usize| times.get(k).copied().unwrap_or(0.0);
    match i {
        0 if times.len() < 2 => 1.0 / 30.0,
        0 => at(1) - at(0),
        _ => at(i) - at(i - 1),
    }
    .max(1e-4)
}

/// One frame of the feet: positions and toe heights (rotation only, with IK; left,
/// right) and contacts.
type FeetSample = ([[Vec3; 2]; 2], [[f32; 2]; 2], [bool; 2]);

/// A copy of `mapped` with its legs `factor` times as long: the rest offsets of the
/// lower legs and feet and of any joint between them and the bone above (the upper
/// and lower leg bones) and a lower leg's end site scaled, and the hips moved so the
/// soles stay at the same height. Bones hung outside the hips
/// (`BoneMap::detached_bones`) stay where their anchors hold them: a foot at its
/// scaled lower leg's end, an upper leg at the moved hips.
pub fn scale_legs(mapped: &MappedSkeleton, factor: f32) -> Result<MappedSkeleton, EvalError> {
    use HumanBone as B;
    let is_detached = |joint: usize| {
        mapped
            .correction
            .held
            .iter()
            .any(|h| h.detached.joint == joint)
    };
    let mut joints = mapped.skeleton.joints().to_vec();
    // A bone's offset may sit on joints between its mapped ones (assimp's
    // `_$AssimpFbx$_Translation` nodes above a zero offset, twist joints): every
    // joint from below the upper leg down to the lower leg, and from below it down
    // to the foot, scales.
    let joint = |bone: B| mapped.map.joint(bone).ok_or(EvalError::MissingBone(bone));
    for [upper, lower, foot] in [
        [B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot],
        [B::RightUpperLeg, B::RightLowerLeg, B::RightFoot],
    ] {
        let (lower, foot) = (joint(lower)?, joint(foot)?);
        let mut scaled = match mapped.map.joint(upper) {
            Some(upper) => joints_down_to(&mapped.skeleton, upper, lower),
            None => vec![lower],
        };
        if !is_detached(foot) {
            scaled.extend(joints_down_to(&mapped.skeleton, lower, foot));
        }
        for j in scaled {
            if let Some(j) = joints.get_mut(j) {
                j.rest.translation *= factor;
            }
        }
    }
    // A lower leg that ends at the ankle with an end site (its foot hung outside it)
    // is that much shorter too.
    for bone in [B::LeftLowerLeg, B::RightLowerLeg] {
        if let Some(end) = mapped
            .map
            .joint(bone)
            .and_then(|joint| joints.get_mut(joint))
            .and_then(|j| j.end.as_mut())
        {
            *end *= factor;
        }
    }
    // Each detached bone where its anchor holds it: a foot's place along its lower
    // leg scales with the leg, an upper leg's place at the hips not.
    let held: Vec<HeldBone> = mapped
        .correction
        .held
        .iter()
        .map(|h| match h.detached.bone {
            B::LeftFoot | B::RightFoot => HeldBone {
                offset: h.offset * factor,
                ..*h
            },
            _ => *h,
        })
        .collect();
    let place = |joints: &mut [Joint]| {
        let mut translations: Vec<Vec3> = joints.iter().map(|j| j.rest.translation).collect();
        place_held(
            &mapped.skeleton,
            &mapped.skeleton.rest_rotations(),
            &mut translations,
            &held,
        );
        for (j, t) in joints.iter_mut().zip(translations) {
            j.rest.translation = t;
        }
    };
    place(&mut joints);
    // Keep the soles where they were: move the hips by the change in the lowest
    // foot point (ankle, toe or end site), so the floor stays put.
    let lowest_foot = |skeleton: &Skeleton| {
        let world = skeleton.rest_world();
        [B::LeftFoot, B::RightFoot, B::LeftToes, B::RightToes]
            .into_iter()
            .filter_map(|b| mapped.map.joint(b))
            .flat_map(|j| {
                let w = world[j];
                let end = skeleton.joints()[j].end.map(|e| w.transform_point3(e).y);
                std::iter::once(w.translation.y).chain(end)
            })
            .fold(f32::INFINITY, f32::min)
    };
    let hips = mapped
        .map
        .joint(B::Hips)
        .ok_or(EvalError::MissingBone(B::Hips))?;
    let scaled = Skeleton::new(joints.clone())?;
    let rise = lowest_foot(&mapped.skeleton) - lowest_foot(&scaled);
    if rise.is_finite() {
        let parent = scaled.parent(hips).map(|p| scaled.rest_world()[p]);
        let up = parent.map_or(Vec3::Y, |w| w.inverse().transform_vector3(Vec3::Y));
        if let Some(j) = joints.get_mut(hips) {
            j.rest.translation += up * rise;
        }
    }
    place(&mut joints);
    let skeleton = Skeleton::new(joints)?;
    let correction = RestCorrection::compute(&skeleton, &mapped.map);
    Ok(MappedSkeleton {
        skeleton,
        map: mapped.map.clone(),
        correction,
    })
}

/// The joints below `top` down to `bottom` (included): the path a bone's offset is
/// spread over. `bottom` alone when `top` is not above it.
fn joints_down_to(skeleton: &Skeleton, top: usize, bottom: usize) -> Vec<usize> {
    let mut path = vec![bottom];
    let mut j = bottom;
    while let Some(p) = skeleton.parent(j) {
        if p == top {
            return path;
        }
        path.push(p);
        j = p;
    }
    vec![bottom]
}

/// Foot skate and floor contact of one retargeted clip.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FootReport {
    /// Mean horizontal motion of a foot in contact, cm per frame.
    pub skate_cm: f32,
    /// Largest horizontal motion of a foot in contact, cm in one frame.
    pub max_skate_cm: f32,
    /// Lowest foot joint (ankle) height, cm above the floor (`y = 0`).
    pub lowest_ankle_cm: f32,
    /// Lowest toe joint height (ankle when there are no toes), cm above the floor.
    pub lowest_toe_cm: f32,
}

/// Mocap mode against the rotation-only retarget on one clip.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MocapReport {
    pub frames: usize,
    /// Foot-frames in contact in the source (both feet counted; `SourceContacts`),
    /// and those of them whose frame before is in contact too: the frames skate is
    /// scored on.
    pub contact_frames: usize,
    pub skate_frames: usize,
    /// Foot-frames mocap mode planted, and foot-frames where it disagreed with the
    /// source (planted without contact, or contact without planting).
    pub solver_contact_frames: usize,
    pub contact_mismatch: usize,
    /// The source's floor found over the clip, and the one mocap mode followed live at
    /// the last frame, cm of the source's model space.
    pub source_floor_cm: f32,
    pub solver_floor_cm: f32,
    pub rotation_only: FootReport,
    pub with_ik: FootReport,
    /// Largest hips lowering, cm.
    pub max_hips_drop_cm: f32,
}

/// Retargets `motion` from `source` onto `target` twice, rotation only and with
/// mocap-mode IK, and measures the feet on the target skeleton during the source's
/// own contacts (`SourceContacts`, found over the whole clip: a foot-frame counts
/// when the source's foot is in contact on it and on the frame before), and how
/// often mocap mode's live contacts disagree with those.
pub fn evaluate_mocap(
    source: &MappedSkeleton,
    motion: &Motion,
    target: &MappedSkeleton,
    config: &MocapIkConfig,
) -> Result<MocapReport, EvalError> {
    use HumanBone as B;
    let source_rig = SourceRig::new(source);
    let target_rig = TargetRig::new(target);
    let source_body = BodyProportions::new(source);
    let target_body = BodyProportions::new(target);
    let mut state = MocapIkState::default();
    let mut pose = HumanoidPose::default();
    let mut locals = vec![Quat::IDENTITY; target.skeleton.len()];
    let mut translations = target.skeleton.rest_translations();
    let foot_joints = [B::LeftFoot, B::RightFoot].map(|b| target.map.joint(b));
    let [Some(left), Some(right)] = foot_joints else {
        return Err(EvalError::MissingBone(B::LeftFoot));
    };
    let toes = [
        target.map.joint(B::LeftToes).unwrap_or(left),
        target.map.joint(B::RightToes).unwrap_or(right),
    ];
    let feet = [left, right];
    let times = motion.times();
    let mut report = MocapReport {
        frames: motion.frame_count(),
        ..MocapReport::default()
    };
    // The source's own contacts, over the whole clip first.
    let mut source_contacts = SourceContacts::with_capacity(motion.frame_count());
    let mut source_frame = BodyFrame::default();
    for frame in motion.frames() {
        ToNormalized {
            source: &source_rig,
            local_rotations: frame.rotations,
            local_translations: frame.translations,
            pose: &mut pose,
        }
        .run()?;
        source_frame.update(&source_body, &pose);
        source_contacts.push(&source_frame, &source_body);
    }
    source_contacts.finish(&source_body, times, config);
    report.source_floor_cm = source_contacts.floor * 100.0;
    // Per frame: foot positions without and with IK, and contacts.
    let mut tracks: Vec<FeetSample> = Vec::new();
    for (i, frame) in motion.frames().enumerate() {
        ToNormalized {
            source: &source_rig,
            local_rotations: frame.rotations,
            local_translations: frame.translations,
            pose: &mut pose,
        }
        .run()?;
        let mut pose_feet = [[Vec3::ZERO; 2]; 2];
        let mut toe_heights = [[0.0; 2]; 2];
        for (k, ik) in [false, true].into_iter().enumerate() {
            let mut solved = pose;
            if ik {
                MocapIk {
                    config,
                    source: &source_body,
                    target: &target_body,
                    dt: frame_interval(times, i),
                    state: &mut state,
                    pose: &mut solved,
                }
                .run()?;
                report.max_hips_drop_cm = report.max_hips_drop_cm.max(state.hips_drop * 100.0);
            }
            let mut hips_translation = Vec3::ZERO;
            FromNormalized {
                target: &target_rig,
                pose: &solved,
                local_rotations: &mut locals,
                hips_translation: &mut hips_translation,
            }
            .run()?;
            target_rig.place_held_bones(&locals, hips_translation, &mut translations)?;
            let world = target.skeleton.world_transforms(&locals, &translations);
            for s in 0..2 {
                pose_feet[k][s] = Vec3::from(world[feet[s]].translation);
                toe_heights[k][s] = world[toes[s]].translation.y;
            }
        }
        let planted = [state.is_planted(0), state.is_planted(1)];
        let contacts = source_contacts.contacts[i];
        for s in 0..2 {
            report.contact_frames += usize::from(contacts[s]);
            report.solver_contact_frames += usize::from(planted[s]);
            report.contact_mismatch += usize::from(planted[s] != contacts[s]);
        }
        tracks.push((pose_feet, toe_heights, contacts));
    }
    report.solver_floor_cm = state.source_floor() * 100.0;
    let mut sums = [0.0f32; 2];
    let mut reports = [FootReport {
        lowest_ankle_cm: f32::INFINITY,
        lowest_toe_cm: f32::INFINITY,
        ..FootReport::default()
    }; 2];
    for (i, (positions, toe_heights, contacts)) in tracks.iter().enumerate() {
        for s in 0..2 {
            for k in 0..2 {
                let r = &mut reports[k];
                r.lowest_ankle_cm = r.lowest_ankle_cm.min(positions[k][s].y * 100.0);
                r.lowest_toe_cm = r.lowest_toe_cm.min(toe_heights[k][s] * 100.0);
            }
            let Some((before, _, was)) = i.checked_sub(1).map(|p| &tracks[p]) else {
                continue;
            };
            if !(contacts[s] && was[s]) {
                continue;
            }
            report.skate_frames += 1;
            for k in 0..2 {
                let d = positions[k][s] - before[k][s];
                let skate = Vec3::new(d.x, 0.0, d.z).length() * 100.0;
                sums[k] += skate;
                reports[k].max_skate_cm = reports[k].max_skate_cm.max(skate);
            }
        }
    }
    for k in 0..2 {
        reports[k].skate_cm = sums[k] / report.skate_frames.max(1) as f32;
    }
    report.rotation_only = reports[0];
    report.with_ik = reports[1];
    Ok(report)
}

/// Which devices VR mode gets in `evaluate_vr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VrDevices {
    /// Headset and two controllers.
    ThreePoint,
    /// Also hips and two foot trackers.
    SixPoint,
}

/// Errors put on the synthesized devices: a controller mounted off from where the
/// calibration thinks, and noise on every device position and rotation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Perturbation {
    /// Added to each controller's position, in its own frame (mirrored in x for the
    /// right hand), metres.
    pub controller_offset: Vec3,
    /// Standard deviation of the noise on each axis of every device position, metres.
    pub noise: f32,
    /// Standard deviation of the noise about each axis of every device rotation,
    /// degrees (turning the device about itself); 0 draws none, so the position
    /// noise of a seed is the same with or without it.
    pub rotation_noise_deg: f32,
    /// Seed of the noise.
    pub seed: u64,
}

impl Default for Perturbation {
    /// 3 cm off (2 cm along, 2 cm across the grip) and 1 cm noise, rotations exact.
    fn default() -> Self {
        Self {
            controller_offset: Vec3::new(0.02, 0.0, 0.02),
            noise: 0.01,
            rotation_noise_deg: 0.0,
            seed: 0x5eed,
        }
    }
}

/// AGRoL-style numbers of VR mode on one clip, against the ground truth retargeted
/// onto the same body. Joints: the body's hips, spine, neck, head, shoulders, arms,
/// hands, legs, feet and toes (no eyes, jaw or fingers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VrReport {
    pub frames: usize,
    /// Mean per-joint position error, cm.
    pub mpjpe_cm: f32,
    /// Mean per-joint rotation error (model rotations), degrees.
    pub mpjre_deg: f32,
    /// Mean per-joint velocity error, cm/s.
    pub mpjve_cm_s: f32,
    /// Mean jerk magnitude of the solved joints, 10² m/s³ (AGRoL's unit), over
    /// steps of `JITTER_STEP` (`jerk_stride`): the same time scale at every frame rate.
    pub jitter: f32,
    /// The same for the ground truth.
    pub ground_truth_jitter: f32,
    /// Mean jerk magnitude over single frames at the clip's own rate, 10² m/s³, of
    /// the solve and of the ground truth: grows with the rate cubed for noise.
    pub frame_jitter: f32,
    pub ground_truth_frame_jitter: f32,
    /// Mean wrist position error, cm.
    pub hand_error_cm: f32,
    /// Largest wrist error on frames where the wrist target is within reach of the
    /// solved shoulder, mm, and how many hand-frames were out of reach.
    pub max_reachable_hand_error_mm: f32,
    pub unreachable_hand_frames: usize,
    /// Largest distance of the head joint from where the headset put it (its
    /// target, from the devices as given to the IK), mm.
    pub max_head_error_mm: f32,
    /// Mean horizontal motion of the solved ankles while the ground truth's are in
    /// contact, cm per frame, and the ground truth's own.
    pub skate_cm: f32,
    pub ground_truth_skate_cm: f32,
    /// Foot-frames in contact in the ground truth.
    pub contact_frames: usize,
    /// Elbow and knee bend-direction reversals in the solve, and in the ground truth.
    pub flips: usize,
    pub ground_truth_flips: usize,
    /// The same position error and jitter per scored joint, indexed by
    /// `HumanBone::index` (zero for joints not scored).
    pub joints: [JointReport; BONE_COUNT],
}

impl Default for VrReport {
    fn default() -> Self {
        Self {
            frames: 0,
            mpjpe_cm: 0.0,
            mpjre_deg: 0.0,
            mpjve_cm_s: 0.0,
            jitter: 0.0,
            ground_truth_jitter: 0.0,
            frame_jitter: 0.0,
            ground_truth_frame_jitter: 0.0,
            hand_error_cm: 0.0,
            max_reachable_hand_error_mm: 0.0,
            unreachable_hand_frames: 0,
            max_head_error_mm: 0.0,
            skate_cm: 0.0,
            ground_truth_skate_cm: 0.0,
            contact_frames: 0,
            flips: 0,
            ground_truth_flips: 0,
            joints: [JointReport::default(); BONE_COUNT],
        }
    }
}

/// One joint's share of a `VrReport`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointReport {
    /// Whether the joint is scored (the body has it, and it is one of the report's).
    pub scored: bool,
    /// Mean position error, cm.
    pub mpjpe_cm: f32,
    /// Mean jerk magnitude of the solved joint and of the ground truth's over steps
    /// of `JITTER_STEP`, and over single frames, 10² m/s³.
    pub jitter: f32,
    pub ground_truth_jitter: f32,
    pub frame_jitter: f32,
    pub ground_truth_frame_jitter: f32,
}

/// The time step jitter is measured over, seconds: a clip's jerk is the third
/// difference of its joint positions `stride` frames apart (`jerk_stride`), so a
/// 120 Hz capture and a 30 Hz one are measured on the same time scale. Measured
/// frame to frame, white noise of `σ` per frame gives a jerk of about `4.5 σ / dt³`:
/// 64 times more at 120 Hz than at 30 Hz for the same noise, so a capture's own
/// noise would decide the number. 1/30 s is the finest step every clip of the
/// corpus has (AGRoL measures at 60 Hz, finer than a 30 Hz capture has).
pub const JITTER_STEP: f32 = 1.0 / 30.0;

/// How many frames of a clip with frame `times` make a step of about `step`
/// seconds: the nearest whole number to `step` over the mean frame interval, at
/// least one (a clip slower than `step` is measured frame to frame).
#[must_use]
pub fn jerk_stride(times: &[f32], step: f32) -> usize {
    let (Some(first), Some(last)) = (times.first(), times.last()) else {
        return 1;
    };
    let frames = times.len().saturating_sub(1).max(1) as f32;
    let interval = ((last - first) / frames).max(1e-4);
    ((step / interval).round() as usize).max(1)
}

/// Sums of jerk magnitudes of a solve and of its ground truth, per joint, over a
/// stride of frames.
struct Jerk {
    /// Per joint: solve, truth, m/s³ summed.
    joints: Vec<(f64, f64)>,
    /// Jerks summed per joint.
    count: usize,
}

impl Jerk {
    /// Third differences `p(i) − 3 p(i−s) + 3 p(i−2s) − p(i−3s)` over `h³`, with `h`
    /// a third of the time from frame `i − 3s` to `i`, at every frame `i ≥ 3s`, of
    /// `m` joints laid out frame after frame in `solved` and `truth`.
    fn over(solved: &[Vec3], truth: &[Vec3], times: &[f32], m: usize, stride: usize) -> Self {
        let mut joints = vec![(0.0f64, 0.0f64); m];
        let mut count = 0;
        let s = stride.max(1);
        for i in 3 * s..times.len() {
            let h = ((times[i] - times[i - 3 * s]) / 3.0).max(1e-4);
            let h3 = h * h * h;
            for (j, sums) in joints.iter_mut().enumerate() {
                let third = |track: &[Vec3]| {
                    let at = |k: usize| track[k * m + j];
                    at(i) - 3.0 * at(i - s) + 3.0 * at(i - 2 * s) - at(i - 3 * s)
                };
                sums.0 += f64::from(third(solved).length() / h3);
                sums.1 += f64::from(third(truth).length() / h3);
            }
            count += 1;
        }
        Self { joints, count }
    }

    /// One joint's mean jerk of solve and truth, 10² m/s³.
    fn joint(&self, j: usize) -> [f32; 2] {
        let (solved, truth) = self.joints[j];
        let n = self.count.max(1) as f64 * 100.0;
        [(solved / n) as f32, (truth / n) as f32]
    }

    /// The mean over every joint, 10² m/s³.
    fn mean(&self) -> [f32; 2] {
        let n = (self.count * self.joints.len()).max(1) as f64 * 100.0;
        let (solved, truth) = self
            .joints
            .iter()
            .fold((0.0, 0.0), |(a, b), (s, t)| (a + s, b + t));
        [(solved / n) as f32, (truth / n) as f32]
    }
}

/// A fixed-seed xorshift generator for the noise.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    /// Roughly Gaussian, unit variance (sum of four uniforms).
    fn gaussian(&mut self) -> f32 {
        (self.uniform() + self.uniform() + self.uniform() + self.uniform()) * 0.75f32.sqrt()
    }

    fn vec(&mut self, sigma: f32) -> Vec3 {
        Vec3::new(self.gaussian(), self.gaussian(), self.gaussian()) * sigma
    }
}

/// The joints the VR numbers are over.
fn scored_bones(body: &BodyProportions) -> Vec<HumanBone> {
    use HumanBone as B;
    crate::humanoid::bone::ALL
        .into_iter()
        .filter(|b| b.index() <= B::RightHand.index())
        .filter(|b| !matches!(b, B::LeftEye | B::RightEye | B::Jaw))
        .filter(|b| body.has(*b))
        .collect()
}

/// Flip counting for one limb: the bend axis in the hips' frame, compared with the
/// last one seen while the limb was bent more than 10°.
#[derive(Default)]
struct FlipCounter {
    last: Option<Vec3>,
    flips: usize,
}

impl FlipCounter {
    fn see(&mut self, frame: &BodyFrame, limb: Limb) {
        let [a, b, c] = limb.bones().map(|x| frame.position(x));
        let (u, v) = (a - b, c - b);
        let cross = u.cross(v);
        // Interior angle below 170°: bent enough for the axis to mean something.
        if cross.length() < (10f32).to_radians().sin() * u.length() * v.length() {
            return;
        }
        let axis = frame.rotation(HumanBone::Hips).conjugate() * cross.normalize();
        if self.last.is_some_and(|l| l.dot(axis) < 0.0) {
            self.flips += 1;
        }
        self.last = Some(axis);
    }
}

/// Retargets `motion` from `source` onto `target` as the ground truth, synthesizes
/// the devices from it (headset `HEAD_TO_EYE` in front of the head joint, controllers
/// on the wrists, trackers on the hips and ankles), runs VR mode on the target and
/// compares (numbers in `VrReport`).
pub fn evaluate_vr(
    source: &MappedSkeleton,
    motion: &Motion,
    target: &MappedSkeleton,
    devices: VrDevices,
    perturbation: Option<&Perturbation>,
    config: &VrIkConfig,
    filter: Option<&DeviceFilterConfig>,
) -> Result<VrReport, EvalError> {
    use HumanBone as B;
    let source_rig = SourceRig::new(source);
    let body = BodyProportions::new(target);
    let calibration = Calibration::of_body(&body, HEAD_TO_EYE);
    let bones = scored_bones(&body);
    let n = motion.frame_count();
    let mut noise = Noise(perturbation.map_or(1, |p| p.seed.max(1)));
    let mut state = VrIkState::default();
    // Headset, hands, hips, feet.
    let mut smoothing = filter.map(|f| DeviceFilter::<6>::new(*f));
    let mut pose = HumanoidPose::default();
    let mut solved = HumanoidPose::default();
    let (mut truth_frame, mut solved_frame) = (BodyFrame::default(), BodyFrame::default());
    // Per frame and scored joint: positions of truth and solve.
    let mut truth = Vec::with_capacity(n * bones.len());
    let mut result = Vec::with_capacity(n * bones.len());
    let mut feet_tracks = Vec::with_capacity(n);
    let mut report = VrReport {
        frames: n,
        ..VrReport::default()
    };
    let mut rotation_error = 0.0f64;
    let mut hand_error = 0.0f64;
    let mut flips = [(); 8].map(|()| FlipCounter::default());
    let times = motion.times();
    for (i, frame) in motion.frames().enumerate() {
        ToNormalized {
            source: &source_rig,
            local_rotations: frame.rotations,
            local_translations: frame.translations,
            pose: &mut pose,
        }
        .run()?;
        truth_frame.update(&body, &pose);
        let t = &truth_frame;
        // A device at `p` turned `r`, with the perturbation's noise on both.
        let mut jitter_of = |p: Vec3, r: Quat| match perturbation {
            Some(q) => {
                let at = p + noise.vec(q.noise);
                let turned = match q.rotation_noise_deg {
                    0.0 => r,
                    deg => r * Quat::from_scaled_axis(noise.vec(deg.to_radians())),
                };
                DevicePose::new(at, turned)
            }
            None => DevicePose::new(p, r),
        };
        let device = |b: B| DevicePose::new(t.position(b), t.rotation(b));
        let head = device(B::Head);
        let mut input = VrInput {
            head: jitter_of(head.point(HEAD_TO_EYE), head.rotation),
            ..VrInput::default()
        };
        for (side, bone) in [B::LeftHand, B::RightHand].into_iter().enumerate() {
            let d = device(bone);
            let offset = perturbation.map_or(Vec3::ZERO, |q| {
                let o = q.controller_offset;
                if side == 0 {
                    o
                } else {
                    Vec3::new(-o.x, o.y, o.z)
                }
            });
            input.hands[side] = Some(jitter_of(d.point(offset), d.rotation));
        }
        if devices == VrDevices::SixPoint {
            let hips = device(B::Hips);
            input.hips = Some(jitter_of(hips.position, hips.rotation));
            for (side, bone) in [B::LeftFoot, B::RightFoot].into_iter().enumerate() {
                let d = device(bone);
                input.feet[side] = Some(jitter_of(d.position, d.rotation));
            }
        }
        let dt = frame_interval(times, i);
        if let Some(f) = &mut smoothing {
            f.step(dt);
            let [left, right] = &mut input.hands;
            let [left_foot, right_foot] = &mut input.feet;
            let devices = [Some(&mut input.head), left.as_mut(), right.as_mut()]
                .into_iter()
                .chain([input.hips.as_mut(), left_foot.as_mut(), right_foot.as_mut()]);
            for (k, device) in devices.enumerate() {
                if let Some(d) = device {
                    d.position = f.filter(k, d.position);
                    d.rotation = f.filter_rotation(k, d.rotation);
                }
            }
        }
        VrIk {
            config,
            body: &body,
            calibration: &calibration,
            input: &input,
            dt,
            state: &mut state,
            pose: &mut solved,
        }
        .run()?;
        solved_frame.update(&body, &solved);
        let s = &solved_frame;
        for b in &bones {
            truth.push(t.position(*b));
            result.push(s.position(*b));
            let turn = t.rotation(*b).conjugate() * s.rotation(*b);
            rotation_error +=
                f64::from(turn.normalize().angle_between(Quat::IDENTITY).to_degrees());
        }
        let head_target = calibration.head(&input.head).position;
        report.max_head_error_mm = report
            .max_head_error_mm
            .max(head_target.distance(s.position(B::Head)) * 1000.0);
        for limb in [Limb::LeftArm, Limb::RightArm] {
            let [upper, _, hand] = limb.bones();
            let error = t.position(hand).distance(s.position(hand));
            hand_error += f64::from(error);
            let (l1, l2) = body.limb_lengths(limb);
            let side = usize::from(limb == Limb::RightArm);
            let Some(controller) = input.hands[side] else {
                continue;
            };
            let wanted = calibration.hand(side, &controller);
            if s.position(upper).distance(wanted.position) <= (l1 + l2) * 0.999 {
                let miss = wanted.position.distance(s.position(hand)) * 1000.0;
                report.max_reachable_hand_error_mm = report.max_reachable_hand_error_mm.max(miss);
            } else {
                report.unreachable_hand_frames += 1;
            }
        }
        for (k, limb) in Limb::ALL.into_iter().enumerate() {
            flips[k].see(t, limb);
            flips[4 + k].see(s, limb);
        }
        feet_tracks.push([B::LeftFoot, B::RightFoot].map(|b| (t.position(b), s.position(b))));
    }
    let m = bones.len();
    let count = (n * m).max(1) as f64;
    let mut position_error = 0.0f64;
    let mut joint_error = vec![0.0f64; m];
    for (k, (a, b)) in truth.iter().zip(&result).enumerate() {
        let e = f64::from(a.distance(*b));
        position_error += e;
        joint_error[k % m] += e;
    }
    report.mpjpe_cm = (position_error / count * 100.0) as f32;
    report.mpjre_deg = (rotation_error / count) as f32;
    report.hand_error_cm = (hand_error / (2 * n).max(1) as f64 * 100.0) as f32;
    let dt_at = |i: usize| (times[i] - times[i - 1]).max(1e-4);
    let (mut velocity_error, mut velocity_count) = (0.0f64, 0usize);
    for i in 1..n {
        let dt = dt_at(i);
        for j in 0..m {
            let at = |track: &Vec<Vec3>, k: usize| track[k * m + j];
            let v = (at(&result, i) - at(&result, i - 1)) - (at(&truth, i) - at(&truth, i - 1));
            velocity_error += f64::from(v.length() / dt);
            velocity_count += 1;
        }
    }
    report.mpjve_cm_s = (velocity_error / velocity_count.max(1) as f64 * 100.0) as f32;
    let fixed = Jerk::over(&result, &truth, times, m, jerk_stride(times, JITTER_STEP));
    let per_frame = Jerk::over(&result, &truth, times, m, 1);
    [report.jitter, report.ground_truth_jitter] = fixed.mean();
    [report.frame_jitter, report.ground_truth_frame_jitter] = per_frame.mean();
    for (j, bone) in bones.iter().enumerate() {
        let [jitter, ground_truth_jitter] = fixed.joint(j);
        let [frame_jitter, ground_truth_frame_jitter] = per_frame.joint(j);
        report.joints[bone.index()] = JointReport {
            scored: true,
            mpjpe_cm: (joint_error[j] / n.max(1) as f64 * 100.0) as f32,
            jitter,
            ground_truth_jitter,
            frame_jitter,
            ground_truth_frame_jitter,
        };
    }
    // Contact: the ground truth's ankle slower than 0.3 hips heights per second and
    // within 0.06 hips heights of its rest height (mocap mode's defaults).
    let height = body.rest_hips_height();
    let (mut skate, mut truth_skate) = (0.0f64, 0.0f64);
    for i in 1..n {
        for (side, foot) in [B::LeftFoot, B::RightFoot].into_iter().enumerate() {
            let (t0, s0) = feet_tracks[i - 1][side];
            let (t1, s1) = feet_tracks[i][side];
            let contact = t0.distance(t1) / dt_at(i) < 0.3 * height
                && t1.y - body.rest_height(foot) < 0.06 * height;
            if contact {
                report.contact_frames += 1;
                skate += f64::from(horizontal_length(s1 - s0));
                truth_skate += f64::from(horizontal_length(t1 - t0));
            }
        }
    }
    let contacts = report.contact_frames.max(1) as f64;
    report.skate_cm = (skate / contacts * 100.0) as f32;
    report.ground_truth_skate_cm = (truth_skate / contacts * 100.0) as f32;
    report.ground_truth_flips = flips[..4].iter().map(|f| f.flips).sum();
    report.flips = flips[4..].iter().map(|f| f.flips).sum();
    Ok(report)
}

fn horizontal_length(v: Vec3) -> f32 {
    Vec3::new(v.x, 0.0, v.z).length()
}

#[cfg(test)]
mod tests {
    use super::{JITTER_STEP, Jerk, frame_interval, jerk_stride, scale_legs};
    use crate::humanoid::HumanBone as B;
    use crate::retarget::tests::{feet_under_the_root, legs_beside_the_hips};
    use glam::Vec3;

    #[test]
    fn the_first_frame_lasts_the_first_interval_wherever_the_clip_starts() {
        let late = [15.0, 15.0 + 1.0 / 30.0, 15.0 + 2.0 / 30.0];
        assert!((frame_interval(&late, 0) - 1.0 / 30.0).abs() < 1e-5);
        assert!((frame_interval(&late, 2) - 1.0 / 30.0).abs() < 1e-5);
        assert!((frame_interval(&[0.0, 0.01], 0) - 0.01).abs() < 1e-7);
        assert!((frame_interval(&[15.0], 0) - 1.0 / 30.0).abs() < 1e-7);
    }

    #[test]
    fn longer_or_shorter_legs_keep_limbs_hung_outside_the_hips_on_the_legs() {
        for rig in [feet_under_the_root(), legs_beside_the_hips()] {
            let at = |m: &crate::retarget::MappedSkeleton, bone: B| {
                let world = m.skeleton.rest_world();
                Vec3::from(world[m.map.joint(bone).unwrap()].translation)
            };
            for factor in [0.8, 1.2] {
                let scaled = scale_legs(&rig, factor).unwrap();
                // In the rest, the soles stay on the floor and each joint of the leg
                // stands where the scaled leg puts it: a thigh at the hips, a foot a
                // scaled shin from the knee.
                let (hips, thigh) = (at(&scaled, B::Hips), at(&scaled, B::LeftUpperLeg));
                let (knee, foot) = (at(&scaled, B::LeftLowerLeg), at(&scaled, B::LeftFoot));
                let was = |bone: B| at(&rig, bone);
                assert!(
                    (foot.y - was(B::LeftFoot).y).abs() < 1e-5,
                    "{factor}: {foot}"
                );
                assert!(
                    (thigh - hips).distance(was(B::LeftUpperLeg) - was(B::Hips)) < 1e-5,
                    "{factor}: thigh {thigh}, hips {hips}"
                );
                let shin = was(B::LeftFoot).distance(was(B::LeftLowerLeg));
                assert!(
                    (foot.distance(knee) - factor * shin).abs() < 1e-5,
                    "{factor}"
                );
            }
        }
    }

    #[test]
    fn longer_legs_scale_the_offsets_helper_joints_hold() {
        // assimp's FBX import: each leg joint sits at a zero offset under a
        // `_$AssimpFbx$_Translation` node that holds the bone's offset.
        let text = r#"{"name": "assimp rig", "units": "m", "up": "y", "joints": [
            {"name": "hips", "parent": null, "offset": [0, 0.9, 0]},
            {"name": "spine", "parent": "hips", "offset": [0, 0.1, 0]},
            {"name": "chest", "parent": "spine", "offset": [0, 0.2, 0]},
            {"name": "neck", "parent": "chest", "offset": [0, 0.2, 0]},
            {"name": "head", "parent": "neck", "offset": [0, 0.1, 0], "end": [0, 0.2, 0]},
            {"name": "lArm", "parent": "chest", "offset": [0.15, 0.18, 0]},
            {"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]},
            {"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0], "end": [0.1, 0, 0]},
            {"name": "rArm", "parent": "chest", "offset": [-0.15, 0.18, 0]},
            {"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]},
            {"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0], "end": [-0.1, 0, 0]},
            {"name": "lThigh", "parent": "hips", "offset": [0.1, -0.05, 0]},
            {"name": "lShin_T", "parent": "lThigh", "offset": [0, -0.4, 0.02]},
            {"name": "lShin", "parent": "lShin_T", "offset": [0, 0, 0]},
            {"name": "lFoot_T", "parent": "lShin", "offset": [0, -0.4, -0.02]},
            {"name": "lFoot", "parent": "lFoot_T", "offset": [0, 0, 0], "end": [0, -0.05, 0.1]},
            {"name": "rThigh", "parent": "hips", "offset": [-0.1, -0.05, 0]},
            {"name": "rShin_T", "parent": "rThigh", "offset": [0, -0.4, 0.02]},
            {"name": "rShin", "parent": "rShin_T", "offset": [0, 0, 0]},
            {"name": "rFoot_T", "parent": "rShin", "offset": [0, -0.4, -0.02]},
            {"name": "rFoot", "parent": "rFoot_T", "offset": [0, 0, 0], "end": [0, -0.05, 0.1]}
        ], "boneMap": {"hips": "hips", "spine": "spine", "chest": "chest", "neck": "neck",
            "head": "head", "leftUpperArm": "lArm", "leftLowerArm": "lFore",
            "leftHand": "lHand", "rightUpperArm": "rArm", "rightLowerArm": "rFore",
            "rightHand": "rHand", "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
            "leftFoot": "lFoot", "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin",
            "rightFoot": "rFoot"}}"#;
        let rig = crate::formats::skeleton_json::parse(
            text,
            std::path::Path::new("assimp.json"),
            &crate::formats::LoadOptions::default(),
        )
        .unwrap();
        let rig =
            crate::retarget::MappedSkeleton::new(rig.skeleton, rig.bone_map.as_ref().unwrap())
                .unwrap();
        let at = |m: &crate::retarget::MappedSkeleton, bone: B| {
            let world = m.skeleton.rest_world();
            Vec3::from(world[m.map.joint(bone).unwrap()].translation)
        };
        for factor in [0.8, 1.2] {
            let scaled = scale_legs(&rig, factor).unwrap();
            for [upper, lower, foot] in [
                [B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot],
                [B::RightUpperLeg, B::RightLowerLeg, B::RightFoot],
            ] {
                for (from, to) in [(upper, lower), (lower, foot)] {
                    let was = at(&rig, from).distance(at(&rig, to));
                    let got = at(&scaled, from).distance(at(&scaled, to));
                    assert!(
                        (got - factor * was).abs() < 1e-5,
                        "{factor} {to}: {got} {was}"
                    );
                }
            }
        }
    }

    #[test]
    fn jerk_is_measured_over_the_same_time_at_every_frame_rate() {
        let times = |hz: f32, n: usize| (0..n).map(|i| i as f32 / hz).collect::<Vec<_>>();
        assert_eq!(jerk_stride(&times(120.0, 100), JITTER_STEP), 4);
        assert_eq!(jerk_stride(&times(60.0, 100), JITTER_STEP), 2);
        assert_eq!(jerk_stride(&times(30.0, 100), JITTER_STEP), 1);
        assert_eq!(jerk_stride(&times(25.0, 100), JITTER_STEP), 1);
        assert_eq!(jerk_stride(&[], JITTER_STEP), 1);
        // x = t³ has a jerk of 6 m/s³ whatever the stride; the truth standing still
        // has none.
        for hz in [120.0, 30.0] {
            let t = times(hz, 40);
            let solved: Vec<Vec3> = t.iter().map(|t| Vec3::X * t * t * t).collect();
            let truth = vec![Vec3::ZERO; t.len()];
            for stride in [1, 4] {
                let [jerk, still] = Jerk::over(&solved, &truth, &t, 1, stride).mean();
                assert!(
                    (jerk * 100.0 - 6.0).abs() < 0.05,
                    "{hz} Hz, {stride}: {jerk}"
                );
                assert_eq!(still, 0.0);
            }
        }
    }
}
