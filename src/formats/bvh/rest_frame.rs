//! When the zero pose is no pose: BVH exporters such as Rokoko's write every
//! joint's `OFFSET` along its own local +X and leave the body's shape to the
//! rotations, so the figure built from the offsets alone (all rotations 0, the BVH
//! rest pose) is a tangle, not a standing body. The rest is then taken from the
//! motion (`choose_rest_frame`): among frames sampled along the clip that stand
//! as a body, those on straight legs first (`STANDING_REACH`: not a crouch, a tuck
//! or a stride), the one the recognizer is surest of, the straightest among equals,
//! unless their mean pose stands more surely than any frame. A frame standing in
//! a T-pose (`Standing::t_pose`) on straight legs goes before every other frame:
//! it is the reference pose exporters and actors' calibrations put in a take, its
//! arms rolled as a T-pose holds them. Next goes a frame on straight legs with both
//! upper arms out level to the sides, the elbows bent (`Standing::arms_out`: the
//! calibration pose of captures estimated from video, whose forearms are never
//! level). The T-pose correction swings each arm bone onto its T-pose direction
//! and keeps the roll the rest has about the bone's length, so a rest on a frame
//! with an arm raised and turned rolls that arm by as much on every frame, and its
//! elbow bends about the wrong axis; a forearm bent at the elbow swings straight
//! about the elbow's own axis, which it keeps.
//!
//! "Stands as a body" is geometry, not names: the figure, turned to +Y up, is
//! recognized as a humanoid (`skeleton::recognize`: legs going down from a pelvis
//! to the same level, a body going up with arms out to either side and a head).
//! Rigs whose zero pose already stands keep it; rigs that never stand (a 4-joint
//! chain, a quadruped) keep it too.
//!
//! A zero pose that stands on its head along its tallest axis stands too, read the
//! other way up (`zero_pose_upright`): poses estimated from video (MediaPipe, Azure
//! Kinect, VideoPose3D exporters) are written in camera coordinates, image Y down,
//! and every frame of theirs is upside down along +Y as well.
//!
//! Poses here are in file space (file units and axes); `convert` turns them into
//! the internal space.

use std::f32::consts::PI;

use glam::{Quat, Vec3};

use super::hierarchy::{Axis, Channel, JointDef};
use super::motion::RawMotion;
use super::pointed_feet::pointed_feet;
use crate::formats::mean_pose::mean_pose;
use crate::formats::{Basis, FrameRef, Units, UpAxis};
use crate::skeleton::{BoneMap, Joint, Recognition, Skeleton, Transform, recognize};

/// Most frames looked at, spread evenly over the clip (frame 0 first), each one
/// tried by the recognizer until one stands.
const FRAMES_SAMPLED: usize = 256;

/// How many of a take's `frames` `choose_rest_frame` looks at, in words
/// (`every one of the 40 frames`, `256 of the 9000 frames`).
pub(super) fn sampled_frames(frames: usize) -> String {
    let looked_at = frames.div_ceil(frames.div_ceil(FRAMES_SAMPLED).max(1));
    if frames == 1 {
        "its one frame".to_owned()
    } else if looked_at == frames {
        format!("every one of the {frames} frames")
    } else {
        format!("{looked_at} of the {frames} frames, spread over the take")
    }
}

/// Every joint's local rotation and translation, in file space.
pub(super) struct FilePose {
    pub(super) rotations: Vec<Quat>,
    pub(super) translations: Vec<Vec3>,
}

impl FilePose {
    /// The BVH zero pose: `OFFSET` and no rotation.
    pub(super) fn zero(defs: &[JointDef]) -> FilePose {
        FilePose {
            rotations: vec![Quat::IDENTITY; defs.len()],
            translations: defs.iter().map(|d| d.offset).collect(),
        }
    }

    /// Frame `frame` of `raw`: rotation channels multiplied in the listed order,
    /// position channels replacing `OFFSET` components unless `keep_offset` says
    /// the joint keeps its `OFFSET` (see the module header of `bvh`).
    pub(super) fn frame(
        defs: &[JointDef],
        raw: &RawMotion,
        keep_offset: &[bool],
        frame: usize,
    ) -> FilePose {
        let channels: usize = defs.iter().map(|d| d.channels.len()).sum();
        let start = frame.saturating_mul(channels);
        let frame_values = raw
            .values
            .get(start..start.saturating_add(channels))
            .unwrap_or(&[]);
        let mut values = frame_values.iter().copied();
        let mut pose = FilePose {
            rotations: Vec::with_capacity(defs.len()),
            translations: Vec::with_capacity(defs.len()),
        };
        for (def, &keep) in defs.iter().zip(keep_offset) {
            let mut rotation = Quat::IDENTITY;
            let mut translation = def.file_offset();
            for channel in &def.channels {
                let value = values.next().unwrap_or(0.0);
                match *channel {
                    Channel::Position(_) if keep => {}
                    Channel::Position(Axis::X) => translation.x = value,
                    Channel::Position(Axis::Y) => translation.y = value,
                    Channel::Position(Axis::Z) => translation.z = value,
                    Channel::Rotation(Axis::X) => {
                        rotation *= Quat::from_rotation_x(value.to_radians());
                    }
                    Channel::Rotation(Axis::Y) => {
                        rotation *= Quat::from_rotation_y(value.to_radians());
                    }
                    Channel::Rotation(Axis::Z) => {
                        rotation *= Quat::from_rotation_z(value.to_radians());
                    }
                }
            }
            let rotation = rotation.normalize();
            pose.rotations.push(rotation);
            pose.translations.push(translation + rotation * def.pivot);
        }
        pose
    }

    /// Every joint's mean rotation and translation over `poses`
    /// (`formats::mean_pose`); `None` when there are none.
    fn mean<'a>(poses: impl Iterator<Item = &'a FilePose> + Clone) -> Option<FilePose> {
        let frames = poses.map(|pose| FrameRef {
            rotations: &pose.rotations,
            translations: &pose.translations,
        });
        let (rotations, translations) = mean_pose(frames)?;
        Some(FilePose {
            rotations,
            translations,
        })
    }

    /// Every joint's position, and every end site's with its joint, in file
    /// space; the roots stay at their `OFFSET` (where the figure stands does not
    /// change its shape).
    fn points(&self, defs: &[JointDef]) -> (Vec<Vec3>, Vec<(usize, Vec3)>) {
        let mut world: Vec<(Quat, Vec3)> = Vec::with_capacity(defs.len());
        let mut ends = Vec::new();
        for (i, def) in defs.iter().enumerate() {
            let local = (self.rotations[i], self.translations[i]);
            let (rotation, position) = match def.parent.and_then(|p| world.get(p)) {
                Some(&(pr, pp)) => (pr * local.0, pp + pr * local.1),
                None => (local.0, def.offset),
            };
            ends.extend(def.end.map(|e| (i, position + rotation * e)));
            world.push((rotation, position));
        }
        (world.into_iter().map(|(_, p)| p).collect(), ends)
    }

    /// Size of the body's bounding box (joints and end sites), in file units.
    /// The body is the first joint where the root's chain branches and every joint
    /// below it: a reference root above the pelvis (a ground node the body walks
    /// away from by its own position channels) is no part of the figure's size.
    /// A chain that never branches is measured whole.
    pub(super) fn extent(&self, defs: &[JointDef]) -> Vec3 {
        let (joints, ends) = self.points(defs);
        let body = body_joints(defs);
        let points: Vec<Vec3> = joints
            .into_iter()
            .enumerate()
            .filter(|&(j, _)| body[j])
            .map(|(_, p)| p)
            .chain(ends.into_iter().filter(|&(j, _)| body[j]).map(|(_, e)| e))
            .collect();
        let min = points.iter().copied().fold(Vec3::INFINITY, Vec3::min);
        let max = points.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
        if points.is_empty() {
            Vec3::ZERO
        } else {
            max - min
        }
    }

    /// How far both legs reach down, along `up`, in file units: from the first
    /// joint where the first root's chain branches, down to the lowest point of its
    /// second-lowest branch (legs bent or lifted reach less; arms hanging lower
    /// than one leg do not help, as the lower leg counts only once).
    pub(super) fn legs_reach(&self, defs: &[JointDef], upright: Upright) -> f32 {
        let height = |p: Vec3| upright.height(p);
        let (points, ends) = self.points(defs);
        let mut low: Vec<f32> = points.iter().map(|&p| height(p)).collect();
        for (j, end) in ends {
            low[j] = low[j].min(height(end));
        }
        let mut kids = vec![Vec::new(); defs.len()];
        for (i, def) in defs.iter().enumerate().rev() {
            if let Some(p) = def.parent {
                low[p] = low[p].min(low[i]);
                kids[p].push(i);
            }
        }
        let mut branch = 0;
        while let [only] = kids.get(branch).map_or(&[][..], Vec::as_slice) {
            branch = *only;
        }
        let mut lows: Vec<f32> = kids
            .get(branch)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&c| low[c])
            .collect();
        lows.sort_by(f32::total_cmp);
        lows.get(1).map_or(0.0, |&second| {
            points.get(branch).map_or(0.0, |&p| height(p)) - second
        })
    }

    /// The skeleton with this pose as its rest, converted by `basis`; roots keep
    /// their `OFFSET` (the rest stands where the file's rest does).
    pub(super) fn joints(&self, defs: &[JointDef], basis: &Basis) -> Vec<Joint> {
        let mut joints: Vec<Joint> = defs
            .iter()
            .enumerate()
            .map(|(i, def)| Joint {
                name: def.name.clone(),
                parent: def.parent,
                rest: Transform {
                    rotation: self.rotations[i],
                    translation: if def.parent.is_none() {
                        def.offset
                    } else {
                        self.translations[i]
                    },
                    ..Transform::IDENTITY
                },
                end: def.end,
            })
            .collect();
        basis.apply_to_joints(&mut joints);
        joints
    }
}

/// Per joint: whether it is part of the body (see `FilePose::extent`): the first
/// joint with other than one child below the only root, and its descendants;
/// every joint when that joint is a leaf or the file has several roots.
fn body_joints(defs: &[JointDef]) -> Vec<bool> {
    let children = |j: usize| defs.iter().filter(move |d| d.parent == Some(j)).count();
    let roots = defs.iter().filter(|d| d.parent.is_none()).count();
    let mut top = 0;
    while top < defs.len() && children(top) == 1 {
        top = (top + 1..defs.len())
            .find(|&c| defs[c].parent == Some(top))
            .unwrap_or(defs.len());
    }
    if roots != 1 || top >= defs.len() || children(top) == 0 {
        return vec![true; defs.len()];
    }
    let mut body = vec![false; defs.len()];
    body[top] = true;
    for i in top + 1..defs.len() {
        body[i] = defs[i].parent.is_some_and(|p| body[p]);
    }
    body
}

/// The up axis `given`, else the one the pose is taller along (Y or Z).
pub(super) fn up_of(extent: Vec3, given: Option<UpAxis>) -> UpAxis {
    match given {
        Some(up) => up,
        None if extent.z > extent.y => UpAxis::Z,
        None => UpAxis::Y,
    }
}

/// Which way a file's figure stands: the axis it stands along, and whether its head
/// points to that axis' negative end (camera coordinates, image Y down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Upright {
    pub(super) up: UpAxis,
    pub(super) head_down: bool,
}

impl Upright {
    /// Standing head up along `up`.
    pub(super) fn along(up: UpAxis) -> Self {
        Self {
            up,
            head_down: false,
        }
    }

    /// The rotation taking the figure's up to +Y: the axis' own, then half a turn
    /// about X when the head points down (a turn, not a mirror: sides stay sides).
    #[must_use]
    pub(super) fn to_y_up(self) -> Quat {
        let over = if self.head_down {
            Quat::from_rotation_x(PI)
        } else {
            Quat::IDENTITY
        };
        over * self.up.to_y_up()
    }

    /// The conversion of a file in `units` standing this way.
    #[must_use]
    pub(super) fn basis(self, units: Units) -> Basis {
        Basis {
            rotation: self.to_y_up(),
            scale: units.metres_per_unit(),
        }
    }

    /// How high `p` (file space) is, along the figure's up.
    fn height(self, p: Vec3) -> f32 {
        let along = match self.up {
            UpAxis::Y => p.y,
            UpAxis::Z => p.z,
        };
        if self.head_down { -along } else { along }
    }
}

/// Heuristic (see the module header): how the zero pose stands, along the axis
/// given, else the one it is taller along: head up, else on its head (`Err` with
/// the recognizer's reason for head up when it stands neither way).
pub(super) fn zero_pose_upright(defs: &[JointDef], up: Option<UpAxis>) -> Result<Upright, String> {
    let zero = FilePose::zero(defs);
    let along = up_of(zero.extent(defs), up);
    let reason = match stands(defs, &zero, Upright::along(along)) {
        Ok(_) => return Ok(Upright::along(along)),
        Err(reason) => reason,
    };
    let over = Upright {
        up: along,
        head_down: true,
    };
    stands(defs, &zero, over).map(|_| over).map_err(|_| reason)
}

/// Where a rest taken from the motion comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RestSource {
    /// One frame (0-based).
    Frame(usize),
    /// Every joint's mean over the sampled frames, this many, when no frame stands
    /// (on both feet).
    Mean(usize),
    /// Every joint's mean over the sampled frames, this many, stood more surely than
    /// any frame.
    SurerMean(usize),
}

impl std::fmt::Display for RestSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Frame(frame) => write!(f, "frame {} of the motion", frame + 1),
            Self::Mean(count) => write!(
                f,
                "the mean pose of {count} frames of the motion (no single frame stands)"
            ),
            Self::SurerMean(count) => write!(
                f,
                "the mean pose of {count} frames of the motion (surer than any single frame)"
            ),
        }
    }
}

/// A rest taken from the motion, with why.
pub(super) struct RestFrame {
    pub(super) source: RestSource,
    pub(super) pose: FilePose,
    /// How the rest stands (along the axis given, else the one found; head up).
    pub(super) upright: Upright,
    /// Why the zero pose was not kept (the recognizer's reason).
    pub(super) zero_pose: String,
}

/// Heuristic (see the module header), for a zero pose that stands as no body
/// (`zero_pose`: the recognizer's reason): `None` when no frame tried stands.
/// Frames are sampled evenly (`FRAMES_SAMPLED`) and read with the up axis given,
/// else with each of Y and Z; along each axis they are ranked by how far both legs
/// reach down (`FilePose::legs_reach`: straight legs reach farthest, whatever the
/// arms do), and the rest is the frame standing as a body (on straight legs first,
/// `surest_standing`) that the recognizer is surest of, the straightest among
/// equals: a walk's
/// straightest frames may swing the arms in to the body or turn the body so that
/// geometry reads a side against its name, so every sampled frame is a candidate.
/// Both axes are tried because a take's shape does not tell its up axis: a crawl
/// or a run of long strides is longer than it is tall, and a crawl read along the
/// wrong axis even stands, on its side, less surely than a frame standing up. On
/// equal confidence the axis most sampled frames are taller along wins. An axis
/// the root travels along like a floor (`travelled_axis`) is not tried. The mean
/// pose of the sampled frames (`FilePose::mean`) is the rest instead when it stands
/// on both feet where that frame has one foot ahead, or as that frame does and along
/// the winning axis more surely (a run's frames all stand
/// mid-stride, where a raised thigh can read as part of the pelvis), and when no
/// frame stands, if it stands, along that axis first.
pub(super) fn choose_rest_frame(
    defs: &[JointDef],
    raw: &RawMotion,
    keep_offset: &[bool],
    up: Option<UpAxis>,
    zero_pose: String,
) -> Option<RestFrame> {
    let step = raw.frames.div_ceil(FRAMES_SAMPLED).max(1);
    let mut sampled: Vec<(usize, FilePose)> = (0..raw.frames)
        .step_by(step)
        .map(|frame| (frame, FilePose::frame(defs, raw, keep_offset, frame)))
        .collect();
    let axes = match (up, travelled_axis(defs, &sampled)) {
        (Some(up), _) => vec![up],
        (None, Some(UpAxis::Z)) => vec![UpAxis::Y],
        (None, Some(UpAxis::Y)) => vec![UpAxis::Z],
        (None, None) => {
            let z_up = sampled
                .iter()
                .filter(|(_, pose)| up_of(pose.extent(defs), None) == UpAxis::Z)
                .count();
            if 2 * z_up > sampled.len() {
                vec![UpAxis::Z, UpAxis::Y]
            } else {
                vec![UpAxis::Y, UpAxis::Z]
            }
        }
    };
    // The standing frame along any axis that goes first (a T-pose, then the
    // surest), with how sure the recognizer is of the surest frame along that
    // axis; the first axis on a tie.
    let mut best: Option<(Standing, usize, f32, UpAxis)> = None;
    for &axis in &axes {
        if let Some((standing, i, surest)) = surest_standing(defs, &sampled, axis)
            && best.is_none_or(|(b, ..)| standing.before(b))
        {
            best = Some((standing, i, surest, axis));
        }
    }
    if let Some((best_frame, i, surest, up)) = best {
        // A mean pose the recognizer is surer of than of any frame is the rest: a
        // run's single frames stand mid-stride, a thigh raised so far that the legs
        // read a joint too low and the body turned.
        let ranked = ranked_by_reach(defs, &sampled, up);
        if let Some(mean) = FilePose::mean(ranked.iter().map(|&i| &sampled[i].1))
            && let Ok(standing) = stands(defs, &mean, Upright::along(up))
            && let on_both_feet = best_frame.one_foot_ahead
            && !standing.one_foot_ahead
            && (on_both_feet
                || (standing.one_foot_ahead == best_frame.one_foot_ahead && standing.sure > surest))
        {
            // Over frames that stand only with one foot ahead, the mean stands on both.
            let source = if on_both_feet {
                RestSource::Mean(sampled.len())
            } else {
                RestSource::SurerMean(sampled.len())
            };
            return Some(RestFrame {
                source,
                pose: mean,
                upright: Upright::along(up),
                zero_pose,
            });
        }
        let (frame, pose) = sampled.swap_remove(i);
        return Some(RestFrame {
            source: RestSource::Frame(frame),
            pose,
            upright: Upright::along(up),
            zero_pose,
        });
    }
    let first = ranked_by_reach(defs, &sampled, axes[0]);
    let mean = FilePose::mean(first.iter().map(|&i| &sampled[i].1))?;
    let up = axes
        .into_iter()
        .find(|&axis| stands(defs, &mean, Upright::along(axis)).is_ok())?;
    Some(RestFrame {
        source: RestSource::Mean(sampled.len()),
        pose: mean,
        upright: Upright::along(up),
        zero_pose,
    })
}

/// The root travels farther than this many figure heights along an axis over a
/// take, and farther than along the other, before that axis is a floor's: a capture
/// volume is a few metres tall, and no one rises so far in it.
const TRAVEL_HEIGHTS: f32 = 3.0;

/// Of +Y and +Z, the one the root of `sampled` travels along like a floor
/// (`TRAVEL_HEIGHTS`), which is then not up (a take lying on the floor most of the
/// time is taller along that axis in most frames); `None` when neither does.
fn travelled_axis(defs: &[JointDef], sampled: &[(usize, FilePose)]) -> Option<UpAxis> {
    let height = sampled
        .iter()
        .map(|(_, pose)| pose.extent(defs).max_element())
        .fold(0.0f32, f32::max);
    let range = |along: fn(Vec3) -> f32| {
        let values = sampled
            .iter()
            .filter_map(|(_, pose)| pose.translations.first().copied().map(along));
        let (low, high) = values.fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
        (high - low).max(0.0)
    };
    let (y, z) = (range(|p| p.y), range(|p| p.z));
    let far = TRAVEL_HEIGHTS * height;
    if !(height > 0.0 && height.is_finite()) {
        None
    } else if z > far && z > y {
        Some(UpAxis::Z)
    } else if y > far && y > z {
        Some(UpAxis::Y)
    } else {
        None
    }
}

/// Indices of `sampled`, the legs reaching down farthest along `up` first, then
/// the earliest.
fn ranked_by_reach(defs: &[JointDef], sampled: &[(usize, FilePose)], up: UpAxis) -> Vec<usize> {
    let mut ranked: Vec<(f32, usize)> = sampled
        .iter()
        .enumerate()
        .map(|(i, (_, pose))| (pose.legs_reach(defs, Upright::along(up)), i))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, i)| i).collect()
}

/// Legs reaching down less than this share of the farthest sampled reach are bent
/// or lifted: a crouch, a tuck or a stride, which the rest is taken from only when
/// no frame standing straighter stands as a body (a T-pose aside).
const STANDING_REACH: f32 = 0.9;

/// Which of `sampled` stands as a body along `up` first (and its index), frames
/// standing with one foot ahead (`Standing::one_foot_ahead`) after all others: a T-pose
/// on straight legs (reaching down at least `STANDING_REACH` of the farthest),
/// then upper arms out level on straight legs (`Standing::arms_out`), then any
/// frame on straight legs, then the others; among equals the surest, the
/// one whose legs reach down farthest, then the earliest; with how sure the
/// recognizer is of the surest frame standing as straight as that one.
fn surest_standing(
    defs: &[JointDef],
    sampled: &[(usize, FilePose)],
    up: UpAxis,
) -> Option<(Standing, usize, f32)> {
    let reach = |i: usize| sampled[i].1.legs_reach(defs, Upright::along(up));
    let ranked = ranked_by_reach(defs, sampled, up);
    let farthest = ranked.first().map_or(0.0, |&i| reach(i));
    let standing: Vec<(Standing, bool, usize)> = ranked
        .into_iter()
        .filter_map(|i| {
            let straight = reach(i) >= STANDING_REACH * farthest;
            stands(defs, &sampled[i].1, Upright::along(up))
                .ok()
                .map(|s| (s, straight, i))
        })
        .collect();
    // A T-pose is arms out level on straight legs: arms out over a crouch or a
    // tuck are no reference pose.
    let class = |s: Standing, straight: bool| {
        (
            !s.one_foot_ahead,
            s.t_pose && straight,
            s.arms_out && straight,
            straight,
        )
    };
    let goes_before = |(a, a_straight): (Standing, bool), (b, b_straight): (Standing, bool)| {
        let (a_class, b_class) = (class(a, a_straight), class(b, b_straight));
        a_class > b_class || (a_class == b_class && a.sure > b.sure)
    };
    let mut first: Option<(Standing, bool, usize)> = None;
    for &(s, straight, i) in &standing {
        if first.is_none_or(|(b, b_straight, _)| goes_before((s, straight), (b, b_straight))) {
            first = Some((s, straight, i));
        }
    }
    let (best, straight, i) = first?;
    let surest = standing
        .iter()
        .filter(|(_, s, _)| *s == straight)
        .map(|(s, ..)| s.sure)
        .fold(best.sure, f32::max);
    Some((best, i, surest))
}

/// How a figure stands as a body (`stands`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Standing {
    /// How sure the recognizer is of it: its bones' mean confidence.
    sure: f32,
    /// Both arms out level and straight: each upper arm and forearm within
    /// `T_POSE_ARMS` of horizontal (the T-pose class `inspect` prints, and the
    /// elbows straight).
    t_pose: bool,
    /// Both upper arms out level to the sides, the elbows straight or bent
    /// (`upper_arms_out`): a T-pose's upper arms, rolled as a T-pose holds them.
    arms_out: bool,
    /// Its sides told across the thighs alone, one foot ahead of the other
    /// (`RecognizedMap::one_foot_ahead`): after every pose standing on both feet.
    one_foot_ahead: bool,
}

impl Standing {
    /// Whether this goes before `other` as the rest: a pose standing on both feet
    /// before one with a foot ahead, then a T-pose before any other pose, then upper
    /// arms out level, then the surer.
    fn before(self, other: Standing) -> bool {
        let key = |s: Standing| (!s.one_foot_ahead, s.t_pose, s.arms_out, s.sure);
        key(self) > key(other)
    }
}

/// Most an arm bone of a T-pose frame is off horizontal, degrees: the T-pose
/// class of `skeleton::RestPose`.
const T_POSE_ARMS: f32 = 12.0;

/// Whether `skeleton` (+Y up) holds both arms out level and straight (`Standing::
/// t_pose`), judged on its mapped upper arms, forearms and hands.
fn arms_level(skeleton: &Skeleton, map: &BoneMap) -> bool {
    use crate::humanoid::HumanBone as B;
    let world = skeleton.rest_world();
    let at = |bone| map.joint(bone).map(|j| Vec3::from(world[j].translation));
    let level = |from, to| match (at(from), at(to)) {
        (Some(a), Some(b)) => {
            let d = b - a;
            d.length() > 0.0 && d.y.abs() <= d.length() * T_POSE_ARMS.to_radians().sin()
        }
        _ => false,
    };
    [
        (B::LeftUpperArm, B::LeftLowerArm),
        (B::LeftLowerArm, B::LeftHand),
        (B::RightUpperArm, B::RightLowerArm),
        (B::RightLowerArm, B::RightHand),
    ]
    .into_iter()
    .all(|(from, to)| level(from, to))
}

/// Whether `skeleton` (+Y up) holds both upper arms out level to its sides
/// (`Standing::arms_out`), judged on its mapped upper arms and forearms: each upper
/// arm within `T_POSE_ARMS` of horizontal and of the line through both shoulders
/// (the upper arms' roots), pointing away from the other shoulder. The forearms may
/// point anywhere: arms held forward level, or crossed, are not out.
fn upper_arms_out(skeleton: &Skeleton, map: &BoneMap) -> bool {
    use crate::humanoid::HumanBone as B;
    let world = skeleton.rest_world();
    let at = |bone| map.joint(bone).map(|j| Vec3::from(world[j].translation));
    let (Some(left), Some(left_elbow), Some(right), Some(right_elbow)) = (
        at(B::LeftUpperArm),
        at(B::LeftLowerArm),
        at(B::RightUpperArm),
        at(B::RightLowerArm),
    ) else {
        return false;
    };
    let limit = T_POSE_ARMS.to_radians();
    let out = |arm: Vec3, side: Vec3| {
        arm.length() > 0.0
            && side.length() > 0.0
            && arm.y.abs() <= arm.length() * limit.sin()
            && arm.angle_between(side) <= limit
    };
    let across = left - right;
    out(left_elbow - left, across) && out(right_elbow - right, -across)
}

/// Whether the figure of `pose`, turned `upright`, stands as a body (a recognized
/// humanoid whose feet do not point along the shins, `pointed_feet`): how sure the
/// recognizer is of it (its bones' mean confidence: geometry that reads clearly and
/// agrees with the names scores higher) and whether its arms stand in a T-pose or
/// hold the upper arms out level, else the recognizer's or `pointed_feet`'s reason.
fn stands(defs: &[JointDef], pose: &FilePose, upright: Upright) -> Result<Standing, String> {
    let basis = upright.basis(Units::Metres);
    let skeleton = Skeleton::new(pose.joints(defs, &basis)).map_err(|e| e.to_string())?;
    match recognize(&skeleton) {
        Recognition::Humanoid(r) => {
            let map = BoneMap::resolve(&r.map, &skeleton).ok();
            if let Some(reason) = map.as_ref().and_then(|map| pointed_feet(&skeleton, map)) {
                return Err(reason);
            }
            let sum: f32 = r.evidence.values().map(|e| e.confidence).sum();
            Ok(Standing {
                sure: sum / r.evidence.len().max(1) as f32,
                t_pose: map.as_ref().is_some_and(|map| arms_level(&skeleton, map)),
                arms_out: map.is_some_and(|map| upper_arms_out(&skeleton, &map)),
                one_foot_ahead: r.one_foot_ahead,
            })
        }
        Recognition::NotHumanoid(n) => Err(n.reason),
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use glam::EulerRot;

    use super::super::test_support::{guessed, motion, places};
    use super::*;
    use crate::formats::{LoadOptions, Rig};
    use crate::skeleton::NamedBoneMap;

    /// A standing figure, centimetres, +Y up, facing +Z: (name, parent, position).
    /// `lift` raises the left knee forward by that many centimetres.
    fn figure(lift: f32) -> Vec<(String, Option<usize>, Vec3)> {
        let v = Vec3::new;
        let mut out: Vec<(String, Option<usize>, Vec3)> = [
            ("Hips", None, v(0.0, 95.0, 0.0)),
            ("Spine", Some(0), v(0.0, 110.0, 0.0)),
            ("Chest", Some(1), v(0.0, 130.0, 0.0)),
            ("Neck", Some(2), v(0.0, 148.0, 0.0)),
            ("Head", Some(3), v(0.0, 158.0, 0.0)),
        ]
        .into_iter()
        .map(|(n, p, x)| (n.to_owned(), p, x))
        .collect();
        for (side, x) in [("Left", 1.0f32), ("Right", -1.0)] {
            let knee = if x > 0.0 {
                v(9.0, 52.0 + 0.5 * lift, lift)
            } else {
                v(-9.0, 52.0, 0.0)
            };
            let base = out.len();
            let limb = [
                ("Shoulder", 2, v(x * 3.0, 142.0, 0.0)),
                ("Arm", base, v(x * 17.0, 142.0, 0.0)),
                ("ForeArm", base + 1, v(x * 45.0, 142.0, 0.0)),
                ("Hand", base + 2, v(x * 70.0, 142.0, 0.0)),
                ("UpLeg", 0, v(x * 9.0, 92.0, 0.0)),
                ("Leg", base + 4, knee),
                ("Foot", base + 5, knee + v(0.0, -43.0, 0.0)),
                ("ToeBase", base + 6, knee + v(0.0, -49.0, 12.0)),
            ];
            for (name, parent, p) in limb {
                out.push((format!("{side}{name}"), Some(parent), p));
            }
        }
        out
    }

    /// A BVH of `frames` written as Rokoko writes them: every joint's `OFFSET`
    /// along its parent's own +X (the parent's bone turned onto +X when it has one
    /// child), and the shape in the rotations, ZXY.
    fn rokoko_style(frames: &[Vec<(String, Option<usize>, Vec3)>]) -> String {
        let first = &frames[0];
        let n = first.len();
        let kids = |j: usize| (0..n).filter(move |&c| first[c].1 == Some(j));
        // World rotations per frame: a joint with one child turns +X onto it.
        let worlds: Vec<Vec<Quat>> = frames
            .iter()
            .map(|f| {
                (0..n)
                    .map(|j| match kids(j).collect::<Vec<_>>().as_slice() {
                        [only] => {
                            Quat::from_rotation_arc(Vec3::X, (f[*only].2 - f[j].2).normalize())
                        }
                        _ => Quat::IDENTITY,
                    })
                    .collect()
            })
            .collect();
        let offset = |j: usize| match first[j].1 {
            None => first[j].2,
            Some(p) => worlds[0][p].inverse() * (first[j].2 - first[p].2),
        };
        let order = depth_first(first);
        let mut text = hierarchy(first, &order, offset, "Zrotation Xrotation Yrotation");
        let _ = write!(text, "MOTION\nFrames: {}\nFrame Time: 0.01\n", frames.len());
        for (f, world) in frames.iter().zip(&worlds) {
            let _ = write!(text, "{} {} {}", f[0].2.x, f[0].2.y, f[0].2.z);
            for &j in &order {
                let local = match f[j].1 {
                    None => world[j],
                    Some(p) => world[p].inverse() * world[j],
                };
                let (z, x, y) = local.to_euler(EulerRot::ZXY);
                let _ = write!(
                    text,
                    " {} {} {}",
                    z.to_degrees(),
                    x.to_degrees(),
                    y.to_degrees()
                );
            }
            text.push('\n');
        }
        text
    }

    /// The joints of `fig` parents first, each subtree whole (the order a BVH
    /// hierarchy lists them).
    fn depth_first(fig: &[(String, Option<usize>, Vec3)]) -> Vec<usize> {
        let mut order = Vec::new();
        let mut stack = vec![0];
        while let Some(j) = stack.pop() {
            order.push(j);
            let kids: Vec<usize> = (0..fig.len()).filter(|&c| fig[c].1 == Some(j)).collect();
            stack.extend(kids.into_iter().rev());
        }
        order
    }

    /// The `HIERARCHY` of `fig` in `order` with `offset` per joint; the root gets
    /// six channels, every joint the three `rotations`; leaves an end site.
    fn hierarchy(
        fig: &[(String, Option<usize>, Vec3)],
        order: &[usize],
        offset: impl Fn(usize) -> Vec3,
        rotations: &str,
    ) -> String {
        let mut text = String::from("HIERARCHY\n");
        let mut open: Vec<usize> = vec![];
        for &j in order {
            while open.last().is_some_and(|&o| Some(o) != fig[j].1) {
                open.pop();
                text.push_str("}\n");
            }
            let o = offset(j);
            let (kind, channels) = if j == 0 {
                (
                    "ROOT",
                    format!("CHANNELS 6 Xposition Yposition Zposition {rotations}"),
                )
            } else {
                ("JOINT", format!("CHANNELS 3 {rotations}"))
            };
            let _ = writeln!(
                text,
                "{kind} {}\n{{\nOFFSET {} {} {}\n{channels}",
                fig[j].0, o.x, o.y, o.z
            );
            if !fig.iter().any(|c| c.1 == Some(j)) {
                text.push_str("End Site\n{\nOFFSET 3 0 0\n}\n");
            }
            open.push(j);
        }
        for _ in open {
            text.push_str("}\n");
        }
        text
    }

    #[test]
    fn a_zero_pose_that_is_no_pose_takes_the_straightest_standing_frame_as_rest() {
        // Frame 1 lifts the left knee; frame 2 stands straight.
        let text = rokoko_style(&[figure(35.0), figure(0.0)]);
        let rig = guessed(&text);
        assert_note(&rig, "rest pose: frame 2 of the motion");
        assert!(
            rig.notes.iter().any(|n| n.contains("centimetres")),
            "{:?}",
            rig.notes
        );
        // The rest is frame 2 itself: the rest pose and that frame agree.
        let frame = motion(&rig).frame(1);
        for (j, joint) in rig.skeleton.joints().iter().enumerate().skip(1) {
            assert!(
                joint.rest.rotation.abs_diff_eq(frame.rotations[j], 1e-4)
                    || joint.rest.rotation.abs_diff_eq(-frame.rotations[j], 1e-4),
                "{}",
                joint.name
            );
        }
        let map = match recognize(&rig.skeleton) {
            Recognition::Humanoid(r) => r.map,
            Recognition::NotHumanoid(n) => panic!("{}", n.reason),
        };
        let want: NamedBoneMap = NamedBoneMap {
            bones: [
                ("hips", "Hips"),
                ("leftUpperLeg", "LeftUpLeg"),
                ("leftLowerLeg", "LeftLeg"),
                ("leftFoot", "LeftFoot"),
                ("rightUpperArm", "RightArm"),
                ("head", "Head"),
            ]
            .into_iter()
            .map(|(b, j)| (b.parse().unwrap(), j.to_owned()))
            .collect(),
            ..NamedBoneMap::default()
        };
        for (bone, joint) in &want.bones {
            assert_eq!(map.bones.get(bone), Some(joint), "{bone}");
        }
    }

    #[test]
    fn a_take_that_never_stands_keeps_the_zero_pose_and_says_why() {
        // The figure lying along X, its arms along Y: it stands along neither Y nor Z.
        let lying = |lift: f32| -> Vec<(String, Option<usize>, Vec3)> {
            let turn = Quat::from_rotation_z(-PI / 2.0);
            figure(lift)
                .into_iter()
                .map(|(name, parent, p)| (name, parent, turn * p))
                .collect()
        };
        let rig = guessed(&rokoko_style(&[lying(0.0), lying(20.0), lying(35.0)]));
        let note = rig
            .notes
            .iter()
            .find(|n| n.starts_with("zero pose kept as the rest"))
            .unwrap_or_else(|| panic!("{:?}", rig.notes));
        for part in [
            "though it is no standing body (no ",
            "no frame of the motion stands as one either (every one of the 3 frames, read \
             with +Y and with +Z up)",
            "never stands up",
            "`--rest-from` reads it against the rest of another take of the same skeleton",
        ] {
            assert!(note.contains(part), "`{part}` in {note}");
        }
        assert!(matches!(
            recognize(&rig.skeleton),
            Recognition::NotHumanoid(_)
        ));
        assert_eq!(sampled_frames(1), "its one frame");
        assert_eq!(
            sampled_frames(9000),
            "250 of the 9000 frames, spread over the take"
        );
    }

    /// `figure(0.0)` with the right arm across the chest, reaching out to the
    /// left beside the left arm (bones as long as `figure`'s).
    fn arms_to_one_side() -> Vec<(String, Option<usize>, Vec3)> {
        figure(0.0)
            .into_iter()
            .map(|(name, parent, p)| {
                let across = match name.as_str() {
                    "RightArm" => Some(11.0),
                    "RightForeArm" => Some(39.0),
                    "RightHand" => Some(64.0),
                    _ => None,
                };
                let p = across.map_or(p, |x| Vec3::new(x, 142.0, 4.0));
                (name, parent, p)
            })
            .collect()
    }

    #[test]
    fn the_rest_is_looked_for_past_the_straightest_frames() {
        // The first frame lifts a knee; twenty more stand straight with both
        // arms out to the left, no arms to either side. The first is the only one
        // that stands as a body.
        assert!(
            !matches!(
                recognize(&guessed(&rokoko_style(&[arms_to_one_side()])).skeleton),
                Recognition::Humanoid(_)
            ),
            "both arms on one side stand as a body"
        );
        let mut frames = vec![figure(10.0)];
        frames.extend(vec![arms_to_one_side(); 20]);
        let rig = guessed(&rokoko_style(&frames));
        assert_note(&rig, "rest pose: frame 1 of the motion");
        assert!(matches!(recognize(&rig.skeleton), Recognition::Humanoid(_)));
    }

    #[test]
    fn the_rest_is_the_standing_frame_the_recognizer_is_surest_of() {
        // The first frame lifts a knee; the second stands straighter, but with
        // each arm reaching out on the side its name does not say (a walk's swing
        // seen from a turned body reads so): the first is the rest.
        let crossed: Vec<_> = figure(0.0)
            .into_iter()
            .map(|(name, parent, p)| {
                let arm = ["Arm", "ForeArm", "Hand"]
                    .iter()
                    .any(|a| name.ends_with(a) && !name.ends_with("UpArm"));
                let p = if arm { Vec3::new(-p.x, p.y, p.z) } else { p };
                (name, parent, p)
            })
            .collect();
        let rig = guessed(&rokoko_style(&[figure(10.0), crossed]));
        assert_note(&rig, "rest pose: frame 1 of the motion");
        assert_maps(&rig, "leftUpperArm", "LeftArm");
    }

    /// `figure(0.0)` with each elbow and wrist where `elbow` and `wrist` put them,
    /// given the arm's side (+1 left, −1 right).
    fn arms_at(
        elbow: impl Fn(f32) -> Vec3,
        wrist: impl Fn(f32) -> Vec3,
    ) -> Vec<(String, Option<usize>, Vec3)> {
        figure(0.0)
            .into_iter()
            .map(|(name, parent, p)| {
                let side = p.x.signum();
                let at = match name.trim_start_matches("Left").trim_start_matches("Right") {
                    "ForeArm" => elbow(side),
                    "Hand" => wrist(side),
                    _ => p,
                };
                (name, parent, at)
            })
            .collect()
    }

    /// `figure(0.0)` with both arms hanging at its sides (bones as long as
    /// `figure`'s).
    fn arms_down() -> Vec<(String, Option<usize>, Vec3)> {
        arms_at(
            |s| Vec3::new(s * 17.0, 114.0, 0.0),
            |s| Vec3::new(s * 17.0, 89.0, 0.0),
        )
    }

    #[test]
    fn a_frame_standing_in_a_t_pose_is_the_rest_before_straighter_ones() {
        // The first frame stands straight with the arms down; the second holds
        // the arms out level, a knee lifted. The T-pose is the rest: a frame's
        // arms keep their roll about their own length in the rest.
        let rig = guessed(&rokoko_style(&[arms_down(), figure(10.0)]));
        assert_note(&rig, "rest pose: frame 2 of the motion");
    }

    /// `figure(0.0)` with both upper arms out level and each forearm bent at the
    /// elbow `forward` degrees forward and 20 degrees up (bones as long as
    /// `figure`'s): the calibration pose of a capture estimated from video.
    fn elbows_bent(forward: f32) -> Vec<(String, Option<usize>, Vec3)> {
        let (f, up) = (forward.to_radians(), 20f32.to_radians());
        let elbow = |s: f32| Vec3::new(s * 45.0, 142.0, 0.0);
        let bent = |s: f32| Vec3::new(s * f.cos() * up.cos(), up.sin(), f.sin() * up.cos());
        arms_at(elbow, |s| elbow(s) + 25.0 * bent(s))
    }

    /// `figure(0.0)` with both arms held forward, level and straight.
    fn arms_forward() -> Vec<(String, Option<usize>, Vec3)> {
        arms_at(
            |s| Vec3::new(s * 17.0, 142.0, 28.0),
            |s| Vec3::new(s * 17.0, 142.0, 53.0),
        )
    }

    #[test]
    fn upper_arms_out_level_with_the_elbows_bent_are_the_rest_before_other_frames() {
        // The first frame stands straight with the arms down; the second holds
        // the upper arms out level, the forearms bent forward and up (no T-pose:
        // the forearms are not level). The second is the rest: its upper arms are
        // rolled as a T-pose holds them, and its forearms swing straight about
        // the elbows' own axes.
        let rig = guessed(&rokoko_style(&[arms_down(), elbows_bent(40.0)]));
        assert_note(&rig, "rest pose: frame 2 of the motion");
        // Upper arms held forward level are not out to the sides.
        for (fig, out) in [(elbows_bent(40.0), true), (arms_forward(), false)] {
            let rig = guessed(&rokoko_style(&[fig.clone(), fig]));
            let map = match recognize(&rig.skeleton) {
                Recognition::Humanoid(r) => BoneMap::resolve(&r.map, &rig.skeleton).unwrap(),
                Recognition::NotHumanoid(n) => panic!("{}", n.reason),
            };
            assert_eq!(upper_arms_out(&rig.skeleton, &map), out);
        }
    }

    #[test]
    fn arms_out_over_a_crouch_are_no_t_pose_before_a_straight_frame() {
        // The second frame holds the arms out level over a deep crouch: alone it
        // stands as a body and is the rest; after a frame standing straight with
        // the arms down it is no reference pose, and the straight frame is the rest.
        let crouch = crouched(45.0);
        let alone = guessed(&rokoko_style(&[crouch.clone(), crouch.clone()]));
        assert_note(&alone, "rest pose: frame 1 of the motion");
        let rig = guessed(&rokoko_style(&[arms_down(), crouch]));
        assert_note(&rig, "rest pose: frame 1 of the motion");
    }

    /// `figure(0.0)` in a crouch: each thigh `degrees` forward of straight down and
    /// each shin as far back, the feet under the hips and level.
    fn crouched(degrees: f32) -> Vec<(String, Option<usize>, Vec3)> {
        let (sin, cos) = degrees.to_radians().sin_cos();
        let mut fig = figure(0.0);
        for side in ["Left", "Right"] {
            let at = |name: &str| fig.iter().position(|(n, ..)| n == &format!("{side}{name}"));
            let (Some(hip), Some(knee), Some(foot), Some(toe)) =
                (at("UpLeg"), at("Leg"), at("Foot"), at("ToeBase"))
            else {
                unreachable!("figure has both legs")
            };
            let k = fig[hip].2 + 40.0 * Vec3::new(0.0, -cos, sin);
            let f = k + 43.0 * Vec3::new(0.0, -cos, -sin);
            fig[knee].2 = k;
            fig[foot].2 = f;
            fig[toe].2 = f + Vec3::new(0.0, -6.0, 12.0);
        }
        fig
    }

    /// `fig` with each leg's knee, foot and toe `x` centimetres to its own side of
    /// the midline (negative: across it, the legs crossed below the thighs).
    fn legs_at(
        fig: Vec<(String, Option<usize>, Vec3)>,
        x: f32,
    ) -> Vec<(String, Option<usize>, Vec3)> {
        fig.into_iter()
            .map(|(name, parent, p)| {
                let side = p.x.signum();
                let at = match name.trim_start_matches("Left").trim_start_matches("Right") {
                    "Leg" | "Foot" | "ToeBase" => Vec3::new(side * x, p.y, p.z),
                    _ => p,
                };
                (name, parent, at)
            })
            .collect()
    }

    #[test]
    fn a_run_whose_frames_stand_only_doubtfully_rests_on_its_surer_mean_pose() {
        // A run's landing crosses the feet over the midline; its flight spreads the
        // legs with a knee up. Only the landing stands, its sides told across the
        // thighs alone; the two average out to legs side by side.
        let landing = legs_at(figure(0.0), -9.0);
        let flight = legs_at(figure(40.0), 27.0);
        let alone = guessed(&rokoko_style(&[landing.clone(), landing.clone()]));
        assert_note(&alone, "rest pose: frame 1 of the motion");
        assert_maps(&alone, "leftUpperLeg", "LeftUpLeg");
        let rig = guessed(&rokoko_style(&[
            landing.clone(),
            flight.clone(),
            landing,
            flight,
        ]));
        assert_note(
            &rig,
            "rest pose: the mean pose of 4 frames of the motion (surer than any single frame)",
        );
        assert_maps(&rig, "leftUpperLeg", "LeftUpLeg");
        assert_maps(&rig, "leftFoot", "LeftFoot");
    }

    /// Asserts that one of `rig`'s notes starts with `start`.
    fn assert_note(rig: &Rig, start: &str) {
        assert!(
            rig.notes.iter().any(|n| n.starts_with(start)),
            "{:?}",
            rig.notes
        );
    }

    /// Asserts that the recognizer maps `bone` of `rig` to `joint`.
    fn assert_maps(rig: &Rig, bone: &str, joint: &str) {
        match recognize(&rig.skeleton) {
            Recognition::Humanoid(r) => assert_eq!(
                r.map.bones.get(&bone.parse().expect("a bone")),
                Some(&joint.to_owned())
            ),
            Recognition::NotHumanoid(n) => panic!("{}", n.reason),
        }
    }

    /// `figure(lift)` mirrored: the right knee raised instead of the left.
    fn right_knee_up(lift: f32) -> Vec<(String, Option<usize>, Vec3)> {
        let left = figure(lift);
        let mirrored = |name: &str| {
            let other = if let Some(rest) = name.strip_prefix("Left") {
                format!("Right{rest}")
            } else if let Some(rest) = name.strip_prefix("Right") {
                format!("Left{rest}")
            } else {
                name.to_owned()
            };
            left.iter().find(|j| j.0 == other).map(|j| j.2)
        };
        left.iter()
            .map(|(name, parent, _)| {
                let p = mirrored(name).unwrap_or(Vec3::ZERO);
                (name.clone(), *parent, Vec3::new(-p.x, p.y, p.z))
            })
            .collect()
    }

    #[test]
    fn a_run_that_never_stands_in_a_frame_rests_on_its_mean_pose() {
        // Every frame has a knee up to the hips' height: no frame stands with
        // both legs down, but the strides average out to a body standing.
        let strides = |frames: usize| -> Vec<_> {
            (0..frames)
                .map(|f| {
                    if f % 2 == 0 {
                        figure(40.0)
                    } else {
                        right_knee_up(40.0)
                    }
                })
                .collect()
        };
        let one_side = guessed(&rokoko_style(&[figure(40.0), figure(40.0)]));
        assert!(
            !one_side.notes.iter().any(|n| n.starts_with("rest pose")),
            "{:?}",
            one_side.notes
        );
        let rig = guessed(&rokoko_style(&strides(6)));
        assert_note(&rig, "rest pose: the mean pose of 6 frames of the motion");
        assert_maps(&rig, "leftLowerLeg", "LeftLeg");
    }

    /// `figure(0.0)` on all fours, crawling towards +Z: hips 60 cm up, the body
    /// level ahead of them, hands and knees on the ground, shins trailing behind.
    /// Longer along Z than tall along Y; it stands as a body along neither axis.
    fn crawling() -> Vec<(String, Option<usize>, Vec3)> {
        let v = Vec3::new;
        figure(0.0)
            .into_iter()
            .map(|(name, parent, p)| {
                let x = p.x.signum();
                let at = match name.trim_start_matches("Left").trim_start_matches("Right") {
                    "Hips" => v(0.0, 60.0, 0.0),
                    "Spine" => v(0.0, 62.0, 15.0),
                    "Chest" => v(0.0, 64.0, 35.0),
                    "Neck" => v(0.0, 66.0, 53.0),
                    "Head" => v(0.0, 68.0, 63.0),
                    "Shoulder" => v(x * 3.0, 64.0, 35.0),
                    "Arm" => v(x * 17.0, 64.0, 38.0),
                    "ForeArm" => v(x * 17.0, 36.0, 40.0),
                    "Hand" => v(x * 17.0, 5.0, 42.0),
                    "UpLeg" => v(x * 9.0, 57.0, 0.0),
                    "Leg" => v(x * 9.0, 6.0, -2.0),
                    "Foot" => v(x * 9.0, 8.0, -45.0),
                    _ => v(x * 9.0, 2.0, -55.0),
                };
                (name, parent, at)
            })
            .collect()
    }

    /// Files of one skeleton in a fresh folder: `stand.bvh`, a take standing in its
    /// first frame and then crawling, and `crawl.bvh`, its crawl alone (the same
    /// `OFFSET`s), which stands in no frame.
    fn stand_and_crawl() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let text = rokoko_style(&[figure(0.0), crawling(), crawling()]);
        let (hierarchy, motion) = text.split_once("MOTION\n").expect("motion");
        let frames: Vec<&str> = motion.lines().skip(3).collect();
        let crawl = format!(
            "{hierarchy}MOTION\nFrames: 2\nFrame Time: 0.01\n{}\n",
            frames.join("\n")
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        let (stand_path, crawl_path) = (dir.path().join("stand.bvh"), dir.path().join("crawl.bvh"));
        std::fs::write(&stand_path, &text).expect("written");
        std::fs::write(&crawl_path, crawl).expect("written");
        (dir, stand_path, crawl_path)
    }

    #[test]
    fn a_take_that_never_stands_rests_on_another_take_of_its_skeleton() {
        let (_dir, stand, crawl) = stand_and_crawl();
        let y_up = LoadOptions {
            up: Some(UpAxis::Y),
            units: Some(Units::Centimetres),
            ..LoadOptions::default()
        };
        let alone = super::super::load(&crawl, &y_up).expect("loads");
        assert_note(&alone, "zero pose kept as the rest");
        let options = LoadOptions {
            rest_from: Some(stand),
            ..y_up
        };
        let rig = super::super::load(&crawl, &options).expect("loads");
        assert_note(
            &rig,
            "rest pose: frame 1 of the motion of `stand.bvh` (--rest-from)",
        );
        assert_maps(&rig, "leftUpperLeg", "LeftUpLeg");
        assert_maps(&rig, "rightHand", "RightHand");
        // The frames are the crawl's own, whichever rest they are read against.
        for (a, b) in places(&alone).into_iter().zip(places(&rig)) {
            assert!(a.abs_diff_eq(b, 1e-5), "{a} {b}");
        }
    }

    #[test]
    fn a_rest_from_another_skeleton_is_refused_naming_the_joint() {
        let (_dir, _, crawl) = stand_and_crawl();
        let other = crawl.with_file_name("longer_thighs.bvh");
        let text = rokoko_style(&[legs_at(figure(0.0), 20.0)]);
        std::fs::write(&other, text).expect("written");
        let options = LoadOptions {
            rest_from: Some(other),
            ..LoadOptions::default()
        };
        let err = match super::super::load(&crawl, &options) {
            Ok(_) => panic!("rests on another skeleton"),
            Err(err) => err.to_string(),
        };
        assert!(err.contains("crawl.bvh: no rest from "), "{err}");
        assert!(
            err.contains("joint `LeftLeg`") && err.ends_with("another skeleton"),
            "{err}"
        );
    }

    #[test]
    fn a_clip_mostly_longer_than_tall_rests_on_a_frame_standing_up_y() {
        // A take that stands, then crawls: most frames are longer along Z than
        // tall along Y, so most frames say Z is up; only Y makes a frame stand.
        let mut frames = vec![figure(0.0)];
        frames.extend(vec![crawling(); 3]);
        let rig = guessed(&rokoko_style(&frames));
        assert_note(&rig, "rest pose: frame 1 of the motion");
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("up axis")),
            "{:?}",
            rig.notes
        );
        assert_maps(&rig, "leftUpperLeg", "LeftUpLeg");
        assert_maps(&rig, "head", "Head");
        // The same take with +Z up (turned 90° about X): most frames say Y.
        let z_up: Vec<Vec<_>> = frames
            .iter()
            .map(|f| {
                f.iter()
                    .map(|(n, p, at)| (n.clone(), *p, Vec3::new(at.x, -at.z, at.y)))
                    .collect()
            })
            .collect();
        let rig = guessed(&rokoko_style(&z_up));
        assert_note(&rig, "rest pose: frame 1 of the motion");
        assert_note(&rig, "up axis: +Z");
        assert_maps(&rig, "leftUpperLeg", "LeftUpLeg");
        assert_maps(&rig, "head", "Head");
    }

    #[test]
    fn a_take_lying_on_the_floor_travels_along_it_and_keeps_y_up() {
        // Lying spread-eagled on its back (head towards +Z, 10 cm up) on three frames
        // of four, standing with its arms down on the last, the root 3 m farther
        // along +Z each frame: read with Z up, the lying frames stand in a T-pose,
        // which goes before any other standing frame, and most frames are taller
        // along Z. But the root travels 9 m along Z, over three figure heights: Z is
        // the floor's.
        let lying: Vec<_> = figure(0.0)
            .into_iter()
            .map(|(n, p, at)| (n, p, Vec3::new(at.x, at.z + 10.0, at.y)))
            .collect();
        let frames: Vec<Vec<_>> = [lying.clone(), lying.clone(), lying, arms_down()]
            .into_iter()
            .enumerate()
            .map(|(k, f)| {
                let along = Vec3::Z * 300.0 * k as f32;
                f.into_iter().map(|(n, p, at)| (n, p, at + along)).collect()
            })
            .collect();
        let rig = guessed(&rokoko_style(&frames));
        assert_note(&rig, "rest pose: frame 4 of the motion");
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("up axis")),
            "{:?}",
            rig.notes
        );
        assert_maps(&rig, "head", "Head");
    }

    /// A BVH of `fig` with its offsets where the joints are and one frame of no
    /// rotation: its zero pose is the figure.
    fn standing_zero_pose(fig: &[(String, Option<usize>, Vec3)]) -> String {
        let offset = |j: usize| fig[j].1.map_or(fig[j].2, |q| fig[j].2 - fig[q].2);
        let mut text = hierarchy(
            fig,
            &depth_first(fig),
            offset,
            "Zrotation Xrotation Yrotation",
        );
        let zeros = vec!["0"; 3 + 3 * fig.len()].join(" ");
        let _ = write!(text, "MOTION\nFrames: 1\nFrame Time: 0.01\n{zeros}\n");
        text
    }

    #[test]
    fn a_body_walked_far_from_its_reference_root_keeps_its_up_axis_and_units() {
        // A ground node at the origin above the pelvis (as Bandai Namco's
        // `joint_Root`), the figure standing 4 m away along Z: taller along Z
        // than along Y when the ground node counts, 1.6 m tall when it does not.
        let away = Vec3::new(0.0, 0.0, -400.0);
        let mut fig = vec![("joint_Root".to_owned(), None, Vec3::ZERO)];
        fig.extend(
            figure(0.0)
                .into_iter()
                .map(|(n, p, x)| (n, Some(p.map_or(0, |p| p + 1)), x + away)),
        );
        let rig = guessed(&standing_zero_pose(&fig));
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("up axis")),
            "{:?}",
            rig.notes
        );
        assert!(
            rig.notes.iter().any(|n| n.contains("centimetres")),
            "{:?}",
            rig.notes
        );
        let world = rig.skeleton.rest_world();
        let at = |name: &str| {
            let j = rig.skeleton.joints().iter().position(|j| j.name == name);
            world[j.expect(name)].translation
        };
        assert!((at("Head").y - at("Hips").y - 0.63).abs() < 1e-4);
        assert!(matches!(recognize(&rig.skeleton), Recognition::Humanoid(_)));
    }

    #[test]
    fn a_standing_zero_pose_is_kept_and_a_rig_that_never_stands_too() {
        // The same figure with its offsets where the joints are and no rotation.
        let fig = figure(0.0);
        let rig = guessed(&standing_zero_pose(&fig));
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("rest pose")),
            "{:?}",
            rig.notes
        );
        // A chain of four joints stands in no frame: its zero pose stays.
        let chain = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT b\n{\nOFFSET 1 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT c\n{\nOFFSET 1 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n}\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.01\n0 0 0 0 0 90 0 0 0\n0 0 45 0 0 0 0 0 0\n";
        let rig = guessed(chain);
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("rest pose")),
            "{:?}",
            rig.notes
        );
        assert_eq!(rig.skeleton.joints()[1].rest.rotation, Quat::IDENTITY);
    }

    #[test]
    fn a_zero_pose_with_its_feet_along_the_shins_rests_on_a_frame_where_they_stand() {
        // The figure with each foot going on straight down its shin to the toes
        // (as bvhio lays out a Bandai take); frame 1 is that zero pose, frame 2
        // turns each foot forward at the ankle.
        let fig: Vec<_> = figure(0.0)
            .into_iter()
            .map(|(name, parent, at)| match name.strip_suffix("ToeBase") {
                Some(_) => (name, parent, at + Vec3::new(0.0, -6.0, -12.0)),
                None => (name, parent, at),
            })
            .collect();
        let order = depth_first(&fig);
        let offset = |j: usize| fig[j].1.map_or(fig[j].2, |q| fig[j].2 - fig[q].2);
        let mut text = hierarchy(&fig, &order, offset, "Zrotation Xrotation Yrotation");
        let zero: Vec<f32> = vec![0.0; 3 + 3 * fig.len()];
        let mut forward = zero.clone();
        for (k, &j) in order.iter().enumerate() {
            if fig[j].0.ends_with("Foot") {
                // Xrotation of the joint: -90° turns -Y onto +Z.
                forward[3 + 3 * k + 1] = -90.0;
            }
        }
        let row = |values: &[f32]| {
            values
                .iter()
                .map(f32::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = write!(
            text,
            "MOTION\nFrames: 2\nFrame Time: 0.01\n{}\n{}\n",
            row(&zero),
            row(&forward)
        );
        let rig = guessed(&text);
        assert_note(
            &rig,
            "rest pose: frame 2 of the motion; the zero pose (OFFSETs with no rotation) is no standing body: the foot `LeftFoot` points along its shin",
        );
        let world = rig.skeleton.rest_world();
        let at = |name: &str| {
            let j = rig.skeleton.joints().iter().position(|j| j.name == name);
            Vec3::from(world[j.expect(name)].translation)
        };
        let sole = (at("LeftToeBase") - at("LeftFoot")).normalize();
        assert!(sole.z > 0.99, "the rest foot points forward: {sole}");
    }

    #[test]
    fn a_zero_pose_standing_on_its_head_is_read_the_other_way_up() {
        // Camera coordinates (image Y down): the figure half a turn about X, its
        // head toward -Y and its face toward -Z. Then the same along Z.
        let turned = |f: Vec<(String, Option<usize>, Vec3)>, to: fn(Vec3) -> Vec3| {
            f.into_iter()
                .map(|(n, p, at)| (n, p, to(at)))
                .collect::<Vec<_>>()
        };
        for (to, note) in [
            (
                (|v: Vec3| Vec3::new(v.x, -v.y, -v.z)) as fn(Vec3) -> Vec3,
                "up axis: -Y",
            ),
            (|v: Vec3| Vec3::new(v.x, v.z, -v.y), "up axis: -Z"),
        ] {
            let rig = guessed(&standing_zero_pose(&turned(figure(0.0), to)));
            assert_note(&rig, note);
            assert_note(&rig, "units: centimetres");
            assert_maps(&rig, "leftUpperLeg", "LeftUpLeg");
            assert_maps(&rig, "rightUpperArm", "RightArm");
            assert_maps(&rig, "head", "Head");
            let world = rig.skeleton.rest_world();
            let y = |name: &str| world[rig.skeleton.find(name).expect(name)].translation.y;
            assert!(y("Head") > y("Hips") && y("Hips") > y("LeftFoot"), "{note}");
        }
    }
}
