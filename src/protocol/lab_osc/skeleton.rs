//! A streamed skeleton, `LabSkeleton`: joint names to indices, parents, rest
//! rotations and the stream's conversion between the sender's axes and units and
//! the internal ones (glTF: right-handed, +Y up, metres). Built once per skeleton
//! file; it reads a joint or root message's values into internal axes (refusing
//! values out of range) and turns a completed frame's global rotations into local
//! ones. Encoding frames is in `encode`.

use glam::{Quat, Vec3};

use super::MAX_JOINT_NAME;
use super::stats::Refusal;
use crate::formats::skeleton_json::{Handedness, RotationFormat, StreamFormat};
use crate::protocol::frame::{JointFrame, MAX_JOINTS};
use crate::protocol::osc::Arg;
use crate::skeleton::Skeleton;

/// Largest position accepted, metres; anything farther is a broken sender.
const MAX_POSITION: f32 = 10_000.0;

/// Largest quaternion length accepted before normalizing; smaller than
/// `MIN_QUATERNION` is a zero quaternion.
const MAX_QUATERNION: f64 = 1e6;
const MIN_QUATERNION: f64 = 1e-6;

/// Largest Euler angle accepted, radians (32 turns).
const MAX_EULER: f32 = 64.0 * std::f32::consts::PI;

/// Why a skeleton cannot be streamed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabSkeletonError {
    #[error("the skeleton has {0} joints, more than the {MAX_JOINTS} a lab stream carries")]
    TooManyJoints(usize),
    #[error(
        "joint name `{0}` cannot be streamed: empty, longer than {MAX_JOINT_NAME} bytes or holding a NUL"
    )]
    BadJointName(String),
}

/// A streamed skeleton: joint names, parents, rest rotations and the stream's
/// conversion into internal axes. Built once per skeleton file.
#[derive(Debug, Clone)]
pub struct LabSkeleton {
    /// Joint names, in the skeleton's joint order.
    pub(super) names: Vec<String>,
    /// Joint indices sorted by name bytes, for lookups without allocation.
    by_name: Vec<u16>,
    /// Parent of each joint (always a smaller index).
    parents: Vec<Option<u16>>,
    /// Rest local rotation of each joint, internal axes.
    rest_rotations: Vec<Quat>,
    pub(super) stream: StreamFormat,
    /// The sender's up axis turned to +Y.
    to_y_up: Quat,
    /// Metres per sender unit.
    metres_per_unit: f32,
}

impl LabSkeleton {
    /// Prepares `skeleton` (joints in its order, internal axes) for streams in
    /// `stream`'s format.
    pub fn new(skeleton: &Skeleton, stream: StreamFormat) -> Result<Self, LabSkeletonError> {
        if skeleton.len() > MAX_JOINTS {
            return Err(LabSkeletonError::TooManyJoints(skeleton.len()));
        }
        let joints = skeleton.joints();
        for joint in joints {
            let n = &joint.name;
            if n.is_empty() || n.len() > MAX_JOINT_NAME || n.contains('\0') {
                return Err(LabSkeletonError::BadJointName(n.clone()));
            }
        }
        let names: Vec<String> = joints.iter().map(|j| j.name.clone()).collect();
        let mut by_name: Vec<u16> = (0..names.len() as u16).collect();
        by_name.sort_by(|&a, &b| names[usize::from(a)].cmp(&names[usize::from(b)]));
        Ok(Self {
            by_name,
            parents: joints.iter().map(|j| j.parent.map(|p| p as u16)).collect(),
            rest_rotations: skeleton.rest_rotations(),
            to_y_up: stream.up.to_y_up(),
            metres_per_unit: stream.units.metres_per_unit(),
            stream,
            names,
        })
    }

    /// How many joints a frame of this skeleton has.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.names.len()
    }

    /// How the lab writes this skeleton's frames.
    #[must_use]
    pub fn stream(&self) -> &StreamFormat {
        &self.stream
    }

    /// The index of the joint whose name is `name`'s bytes.
    pub(super) fn joint_index(&self, name: &[u8]) -> Option<usize> {
        self.by_name
            .binary_search_by(|&j| self.names[usize::from(j)].as_bytes().cmp(name))
            .ok()
            .map(|i| usize::from(self.by_name[i]))
    }

    /// A rotation in the sender's axes into internal axes: mirror X (left-handed
    /// senders), then turn the up axis to +Y (`B·q·B⁻¹`).
    fn rotation_to_internal(&self, q: Quat) -> Quat {
        let q = match self.stream.handedness {
            Handedness::Right => q,
            Handedness::Left => Quat::from_xyzw(q.x, -q.y, -q.z, q.w),
        };
        self.to_y_up * q * self.to_y_up.conjugate()
    }

    /// The inverse of `rotation_to_internal`.
    pub(super) fn rotation_to_sender(&self, q: Quat) -> Quat {
        let q = self.to_y_up.conjugate() * q * self.to_y_up;
        match self.stream.handedness {
            Handedness::Right => q,
            Handedness::Left => Quat::from_xyzw(q.x, -q.y, -q.z, q.w),
        }
    }

    /// A position in the sender's units and axes into metres, internal axes.
    fn position_to_internal(&self, p: Vec3) -> Vec3 {
        let p = match self.stream.handedness {
            Handedness::Right => p,
            Handedness::Left => Vec3::new(-p.x, p.y, p.z),
        };
        self.to_y_up * p * self.metres_per_unit
    }

    /// The inverse of `position_to_internal`.
    pub(super) fn position_to_sender(&self, p: Vec3) -> Vec3 {
        let p = self.to_y_up.conjugate() * p / self.metres_per_unit;
        match self.stream.handedness {
            Handedness::Right => p,
            Handedness::Left => Vec3::new(-p.x, p.y, p.z),
        }
    }

    /// A joint message's values (after the name) as a rotation in internal axes.
    pub(super) fn read_rotation(&self, values: &[Arg<'_>]) -> Result<Quat, Refusal> {
        let q = match self.stream.rotation {
            RotationFormat::Quaternion => {
                let [x, y, z, w] = values else {
                    return Err(Refusal::Malformed);
                };
                let v = [number(x)?, number(y)?, number(z)?, number(w)?];
                if v.iter().any(|c| !c.is_finite()) {
                    return Err(Refusal::NotFinite);
                }
                let length = v.iter().map(|&c| f64::from(c).powi(2)).sum::<f64>().sqrt();
                if length > MAX_QUATERNION {
                    return Err(Refusal::OutOfRange);
                }
                if length < MIN_QUATERNION {
                    return Err(Refusal::ZeroRotation);
                }
                let [x, y, z, w] = v.map(|c| (f64::from(c) / length) as f32);
                Quat::from_xyzw(x, y, z, w)
            }
            RotationFormat::Euler { order, angles } => {
                let [a, b, c] = values else {
                    return Err(Refusal::Malformed);
                };
                let k = angles.radians_per_unit();
                let v = [number(a)?, number(b)?, number(c)?];
                if v.iter().any(|c| !c.is_finite()) {
                    return Err(Refusal::NotFinite);
                }
                if v.iter().any(|c| (c * k).abs() > MAX_EULER) {
                    return Err(Refusal::OutOfRange);
                }
                Quat::from_euler(order, v[0] * k, v[1] * k, v[2] * k)
            }
        };
        Ok(self.rotation_to_internal(q))
    }

    /// A root message's values as a position in metres, internal axes.
    pub(super) fn read_position(&self, values: &[Arg<'_>]) -> Result<Vec3, Refusal> {
        let [x, y, z] = values else {
            return Err(Refusal::Malformed);
        };
        let p = Vec3::new(number(x)?, number(y)?, number(z)?);
        if !p.is_finite() {
            return Err(Refusal::NotFinite);
        }
        let p = self.position_to_internal(p);
        if !p.is_finite() || p.abs().max_element() > MAX_POSITION {
            return Err(Refusal::OutOfRange);
        }
        Ok(p)
    }

    /// Model rotation of every joint for `frame`'s local rotations, joints not
    /// present at their rest, into `globals`.
    pub(super) fn model_rotations(&self, frame: &JointFrame, globals: &mut [Quat]) {
        for (j, parent) in self.parents.iter().enumerate() {
            let parent = parent.map_or(Quat::IDENTITY, |p| globals[usize::from(p)]);
            let local = if frame.has(j) {
                frame.rotations[j]
            } else {
                self.rest_rotations[j]
            };
            globals[j] = parent * local;
        }
    }

    /// Turns a completed frame's global rotations (internal axes) into local ones:
    /// `L(j) = G(parent)⁻¹ · G(j)`, with `G` of a joint not sent its parent's `G`
    /// times its rest rotation.
    pub(super) fn globals_to_locals(&self, frame: &mut JointFrame, globals: &mut [Quat]) {
        for (j, parent) in self.parents.iter().enumerate() {
            let parent = parent.map_or(Quat::IDENTITY, |p| globals[usize::from(p)]);
            if frame.has(j) {
                globals[j] = frame.rotations[j];
                frame.rotations[j] = (parent.conjugate() * globals[j]).normalize();
            } else {
                globals[j] = parent * self.rest_rotations[j];
            }
        }
    }
}

/// A numeric argument as `f32`: floats, doubles and integers are accepted.
fn number(arg: &Arg<'_>) -> Result<f32, Refusal> {
    match *arg {
        Arg::Float(v) => Ok(v),
        Arg::Int(v) => Ok(v as f32),
        Arg::Long(v) => Ok(v as f32),
        Arg::Double(v) => {
            let f = v as f32;
            if v.is_finite() && !f.is_finite() {
                Err(Refusal::OutOfRange)
            } else {
                Ok(f)
            }
        }
        Arg::Str(_) | Arg::Other(_) => Err(Refusal::Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DVec3, EulerRot};

    use crate::formats::skeleton_json::{AngleUnit, RotationSpace};
    use crate::formats::{Units, UpAxis};
    use crate::protocol::lab_osc::test_support::{
        Rng, angle, bundle, decode, euler, header_msg, joint_msg, lab19, msg, plain, stream,
    };
    use crate::protocol::lab_osc::{LabAssembler, ROOT_ADDRESS};
    use crate::skeleton::{Joint, Transform};

    #[test]
    fn new_rejects_too_many_joints_and_unsendable_names() {
        let chain = |n: usize, name: &dyn Fn(usize) -> String| {
            let joints = (0..n)
                .map(|i| Joint {
                    name: name(i),
                    parent: i.checked_sub(1),
                    rest: Transform::from_translation(Vec3::Y),
                    end: None,
                })
                .collect();
            Skeleton::new(joints).unwrap()
        };
        let too_many = chain(MAX_JOINTS + 1, &|i| format!("j{i}"));
        assert_eq!(
            LabSkeleton::new(&too_many, plain()).err(),
            Some(LabSkeletonError::TooManyJoints(MAX_JOINTS + 1))
        );
        let long = chain(2, &|i| "x".repeat(MAX_JOINT_NAME + i));
        assert!(matches!(
            LabSkeleton::new(&long, plain()),
            Err(LabSkeletonError::BadJointName(_))
        ));
        let nul = chain(1, &|_| "a\0b".into());
        assert!(matches!(
            LabSkeleton::new(&nul, plain()),
            Err(LabSkeletonError::BadJointName(_))
        ));
    }

    /// The sender's axes into internal ones: a root position and a quarter turn
    /// about the sender's up axis, per up axis and handedness.
    #[test]
    fn sender_axes_become_internal_axes() {
        let q = std::f32::consts::FRAC_PI_2;
        let (x, y, z) = (
            Quat::from_rotation_x,
            Quat::from_rotation_y,
            Quat::from_rotation_z,
        );
        let v = Vec3::new;
        #[rustfmt::skip] // one line per case
        let cases = [
            (UpAxis::Y, Handedness::Right, v(1.0, 2.0, 3.0), v(1.0, 2.0, 3.0), y(q), y(q)),
            (UpAxis::Y, Handedness::Left, v(1.0, 2.0, 3.0), v(-1.0, 2.0, 3.0), y(q), y(-q)),
            (UpAxis::Z, Handedness::Right, v(1.0, 2.0, 3.0), v(1.0, 3.0, -2.0), z(q), y(q)),
            (UpAxis::Z, Handedness::Left, v(1.0, 2.0, 3.0), v(-1.0, 3.0, -2.0), z(q), y(-q)),
            (UpAxis::Z, Handedness::Right, Vec3::ZERO, Vec3::ZERO, x(q), x(q)),
        ];
        for (up, hand, sent_position, position, sent_rotation, rotation) in cases {
            let format = stream(
                RotationSpace::Local,
                RotationFormat::Quaternion,
                Units::Centimetres,
                up,
                hand,
            );
            let skeleton = LabSkeleton::new(&lab19(), format).unwrap();
            let p = sent_position * 100.0;
            let datagram = bundle(&[
                header_msg("ann", 1, 0, 1),
                msg(ROOT_ADDRESS, vec![p.x.into(), p.y.into(), p.z.into()]),
                joint_msg("Hips", &sent_rotation.to_array()),
            ]);
            let (frames, _) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
            let what = format!("{up:?} {hand:?}");
            let got = frames[0].root_position.unwrap();
            assert!(got.distance(position) < 1e-6, "{what}: {got}");
            assert!(angle(frames[0].rotations[0], rotation) < 1e-6, "{what}");
        }
    }

    /// `R = R(axis1, a) · R(axis2, b) · R(axis3, c)`, from the textbook matrices.
    fn euler_matrix(order: &str, angles: [f64; 3]) -> DMat3 {
        let mut m = DMat3::IDENTITY;
        for (axis, a) in order.chars().zip(angles) {
            let (s, c) = a.sin_cos();
            let r = match axis {
                'X' => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
                'Y' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
                _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            };
            // DMat3::from_cols_array_2d takes columns; `r` is rows.
            m *= DMat3::from_cols_array_2d(&r).transpose();
        }
        m
    }

    #[test]
    fn euler_angles_follow_their_order_intrinsically() {
        let orders = [
            ("XYZ", EulerRot::XYZ),
            ("XZY", EulerRot::XZY),
            ("YXZ", EulerRot::YXZ),
            ("YZX", EulerRot::YZX),
            ("ZXY", EulerRot::ZXY),
            ("ZYX", EulerRot::ZYX),
        ];
        let mut rng = Rng(7);
        for (name, order) in orders {
            for angles in [AngleUnit::Degrees, AngleUnit::Radians] {
                let format = stream(
                    RotationSpace::Local,
                    euler(order, angles),
                    Units::Metres,
                    UpAxis::Y,
                    Handedness::Right,
                );
                let skeleton = LabSkeleton::new(&lab19(), format).unwrap();
                for _ in 0..20 {
                    let radians = [0, 1, 2].map(|_| f64::from(rng.next() * 6.0 - 3.0));
                    let sent = radians.map(|a| match angles {
                        AngleUnit::Degrees => a.to_degrees() as f32,
                        AngleUnit::Radians => a as f32,
                    });
                    let datagram = bundle(&[header_msg("ann", 1, 0, 1), joint_msg("Chest", &sent)]);
                    let (frames, _) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
                    let q = frames[0].rotations[1];
                    let m = euler_matrix(name, radians);
                    for v in [DVec3::X, DVec3::Y, DVec3::Z] {
                        let got = q.as_dquat() * v;
                        assert!(got.distance(m * v) < 1e-5, "{name} {angles:?} {radians:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn global_rotations_become_local_through_the_parents() {
        let lab = lab19();
        let format = stream(
            RotationSpace::Global,
            RotationFormat::Quaternion,
            Units::Metres,
            UpAxis::Y,
            Handedness::Right,
        );
        let skeleton = LabSkeleton::new(&lab, format).unwrap();
        let mut rng = Rng(11);
        for round in 0..20 {
            let locals: Vec<Quat> = (0..lab.len()).map(|_| rng.rotation()).collect();
            // Model rotations by the skeleton's own forward kinematics (matrices).
            let world = lab.world_transforms(&locals, &lab.rest_translations());
            let mut elements = vec![header_msg("ann", round, 0, 1)];
            for (joint, w) in lab.joints().iter().zip(&world) {
                let g = Quat::from_mat3a(&w.matrix3);
                elements.push(joint_msg(&joint.name, &g.to_array()));
            }
            let (frames, stats) = decode(
                &mut LabAssembler::default(),
                &skeleton,
                &[bundle(&elements)],
            );
            assert_eq!(stats.dropped(), 0, "{stats:?}");
            for (j, local) in locals.iter().enumerate() {
                let a = angle(*local, frames[0].rotations[j]);
                assert!(a < 1e-5, "joint {j} off by {a} rad");
            }
        }
    }
}
