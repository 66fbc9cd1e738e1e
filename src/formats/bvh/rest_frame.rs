//! When the zero pose is no pose: BVH exporters such as Rokoko's write every
//! joint's `OFFSET` along its own local +X and leave the body's shape to the
//! rotations, so the figure built from the offsets alone (all rotations 0, the BVH
//! rest pose) is a tangle, not a standing body. The rest is then taken from the
//! motion (`choose_rest_frame`): the frame whose figure stands straightest among
//! frames sampled along the clip, that stands as a body.
//!
//! "Stands as a body" is geometry, not names: the figure, turned to +Y up, is
//! recognized as a humanoid (`skeleton::recognize`: legs going down from a pelvis
//! to the same level, a body going up with arms out to either side and a head).
//! Rigs whose zero pose already stands keep it; rigs that never stand (a 4-joint
//! chain, a quadruped) keep it too.
//!
//! Poses here are in file space (file units and axes); `convert` turns them into
//! the internal space.

use glam::{Quat, Vec3};

use super::hierarchy::{Axis, Channel, JointDef};
use super::motion::RawMotion;
use crate::formats::{Basis, Units, UpAxis};
use crate::skeleton::{Joint, Recognition, Skeleton, Transform, recognize};

/// Most frames looked at, spread evenly over the clip (frame 0 first).
const FRAMES_SAMPLED: usize = 256;

/// Most frames tried as the rest (each try runs the recognizer).
const FRAMES_TRIED: usize = 16;

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
            let mut translation = def.offset;
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
            pose.rotations.push(rotation.normalize());
            pose.translations.push(translation);
        }
        pose
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

    /// Size of the pose's bounding box (joints and end sites), in file units.
    pub(super) fn extent(&self, defs: &[JointDef]) -> Vec3 {
        let (joints, ends) = self.points(defs);
        let points: Vec<Vec3> = joints
            .into_iter()
            .chain(ends.into_iter().map(|(_, e)| e))
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
    pub(super) fn legs_reach(&self, defs: &[JointDef], up: UpAxis) -> f32 {
        let height = |p: Vec3| match up {
            UpAxis::Y => p.y,
            UpAxis::Z => p.z,
        };
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

/// The up axis `given`, else the one the pose is taller along (Y or Z).
pub(super) fn up_of(extent: Vec3, given: Option<UpAxis>) -> UpAxis {
    match given {
        Some(up) => up,
        None if extent.z > extent.y => UpAxis::Z,
        None => UpAxis::Y,
    }
}

/// A rest taken from the motion, with why.
pub(super) struct RestFrame {
    pub(super) frame: usize,
    pub(super) pose: FilePose,
    /// Why the zero pose was not kept (the recognizer's reason).
    pub(super) zero_pose: String,
}

/// Heuristic (see the module header): `None` when the zero pose stands as a body
/// or no frame tried does. Frames are sampled evenly (`FRAMES_SAMPLED`); the up
/// axis is the one most sampled frames are taller along (unless given); frames
/// are tried in order of how far both legs reach down (`FilePose::legs_reach`:
/// straight legs reach farthest, whatever the arms do), at most `FRAMES_TRIED`,
/// and the first whose figure stands as a body is the rest.
pub(super) fn choose_rest_frame(
    defs: &[JointDef],
    raw: &RawMotion,
    keep_offset: &[bool],
    up: Option<UpAxis>,
) -> Option<RestFrame> {
    let zero_pose = match stands(defs, &FilePose::zero(defs), up) {
        Ok(()) => return None,
        Err(reason) => reason,
    };
    let step = raw.frames.div_ceil(FRAMES_SAMPLED).max(1);
    let sampled: Vec<(usize, FilePose)> = (0..raw.frames)
        .step_by(step)
        .map(|frame| (frame, FilePose::frame(defs, raw, keep_offset, frame)))
        .collect();
    let up = up.unwrap_or_else(|| {
        let z_up = sampled
            .iter()
            .filter(|(_, pose)| up_of(pose.extent(defs), None) == UpAxis::Z)
            .count();
        if 2 * z_up > sampled.len() {
            UpAxis::Z
        } else {
            UpAxis::Y
        }
    });
    let mut ranked: Vec<(f32, usize, FilePose)> = sampled
        .into_iter()
        .map(|(frame, pose)| (pose.legs_reach(defs, up), frame, pose))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
        .into_iter()
        .take(FRAMES_TRIED)
        .find_map(|(_, frame, pose)| {
            stands(defs, &pose, Some(up)).ok().map(|()| RestFrame {
                frame,
                pose,
                zero_pose: zero_pose.clone(),
            })
        })
}

/// Whether the figure of `pose` stands as a body (a recognized humanoid), else
/// the recognizer's reason.
fn stands(defs: &[JointDef], pose: &FilePose, up: Option<UpAxis>) -> Result<(), String> {
    let basis = Basis::new(Units::Metres, up_of(pose.extent(defs), up));
    let skeleton = Skeleton::new(pose.joints(defs, &basis)).map_err(|e| e.to_string())?;
    match recognize(&skeleton) {
        Recognition::Humanoid(_) => Ok(()),
        Recognition::NotHumanoid(n) => Err(n.reason),
    }
}
