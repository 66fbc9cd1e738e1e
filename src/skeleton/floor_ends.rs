//! Which end sites a figure can stand on. The floor under a rig is its lowest joint
//! or bone end; a writer that knows no bone's end may copy the last bone again (a
//! Poser export ends each foot with `OFFSET 0 -0.342 0`, the shin once more, straight
//! down from the ankle). A leg has two long bones in line, never three: an end site
//! that repeats the bone into its joint while that bone goes on in the line of the
//! one before it is such a copy, and no point of the figure. So is one repeating the
//! bone into a leaf joint named as an end nub, in any line: FBX2glTF closes a bent
//! shin with `LowerLeg.L_end` at the ankle and ends that nub a shin further down.
//! A leaf joint named as an end nub may itself be no point of the figure
//! (a drawn tail): Blender's FBX import draws a bone the file does not end with the
//! length of the bone before it, along the bone's own axis, and the glTF export
//! writes that tail as an `_end` joint; where those axes are the rig's own (a
//! UE-style rig turns its right side's axes over), a toe's tail hangs under the sole.
//! `Skeleton::floor_points` gives both, per joint. Pure: read from the rest pose,
//! once per skeleton.

use glam::{Affine3A, Vec3};

use super::Skeleton;
use crate::skeleton::recognize::names::NameInfo;

/// How far an end site may lie from the bone into its joint, as a share of that
/// bone's length, and still be a copy of it: rounding in the file's digits.
const COPY_SHARE: f32 = 0.01;

/// Least cosine between the bone into a joint and the bone before it for the two to
/// run in one line (8°).
const IN_LINE_COS: f32 = 0.99;

/// Where one joint lets the figure stand (`Skeleton::floor_points`): its own place,
/// unless it is a drawn tail, and its end site, unless that is a copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorPoints {
    /// Whether the joint's own place is a point of the figure.
    pub joint: bool,
    /// The end site (in the joint's frame), where the figure can stand on it.
    pub end: Option<Vec3>,
}

impl FloorPoints {
    /// The points in model space, with the joint's world transform `w`.
    pub fn at(self, w: &Affine3A) -> impl Iterator<Item = Vec3> {
        let joint = self.joint.then(|| Vec3::from(w.translation));
        joint
            .into_iter()
            .chain(self.end.map(|e| w.transform_point3(e)))
    }
}

impl Skeleton {
    /// Per joint, the points the figure can stand on (see the module header): the
    /// joint's place but for a drawn tail (a leaf named as an end nub, as long as the
    /// bone into its parent, to `COPY_SHARE`, and out of that bone's line; a nub of
    /// its own length, or one running on in the line, is kept), and its end site but
    /// where the file gives none or it is a copy of the bone into its joint running
    /// on in the line of the bone before (or ending a nub). The floor, the figure's
    /// lowest point and its extent are read from these.
    #[must_use]
    pub fn floor_points(&self) -> Vec<FloorPoints> {
        let world = self.rest_world();
        let at = |j: usize| Vec3::from(world[j].translation);
        let in_line = |a: Vec3, b: Vec3| a.normalize_or_zero().dot(b.normalize()) >= IN_LINE_COS;
        self.joints()
            .iter()
            .enumerate()
            .map(|(i, joint)| {
                let leaf = self.children(i).next().is_none();
                let nub = leaf && NameInfo::parse(&joint.name).nub;
                // The bone into the joint, and the one before it.
                let bone = joint
                    .parent
                    .map(|p| (at(i) - at(p), self.parent(p).map(|g| at(p) - at(g))));
                let copy = |tail: Vec3, bone: Vec3| {
                    bone.length() > 0.0 && (tail - bone).length() <= COPY_SHARE * bone.length()
                };
                let end = joint.end.filter(|&end| {
                    let tail = world[i].transform_vector3(end);
                    !bone.is_some_and(|(bone, before)| {
                        copy(tail, bone) && (nub || before.is_some_and(|b| in_line(b, bone)))
                    })
                });
                let drawn = nub
                    && bone.is_some_and(|(tail, before)| {
                        before.is_some_and(|bone| {
                            bone.length() > 0.0
                                && (tail.length() - bone.length()).abs()
                                    <= COPY_SHARE * bone.length()
                                && !in_line(tail, bone)
                        })
                    });
                FloorPoints { joint: !drawn, end }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::skeleton::{Joint, Skeleton, Transform};

    /// Hips 0.8 m up, a thigh and a shin straight down, the foot's end site `end`.
    fn leg(shin: [f32; 3], end: [f32; 3]) -> Skeleton {
        let joint = |name: &str, parent: Option<usize>, at: [f32; 3]| Joint {
            name: name.into(),
            parent,
            rest: Transform::from_translation(Vec3::from(at)),
            end: None,
        };
        let mut joints = vec![
            joint("hip", None, [0.0, 0.8, 0.0]),
            joint("thigh", Some(0), [0.1, 0.0, 0.0]),
            joint("shin", Some(1), [0.0, -0.4, 0.0]),
            joint("foot", Some(2), shin),
        ];
        joints[3].end = Some(Vec3::from(end));
        Skeleton::new(joints).expect("a skeleton")
    }

    #[test]
    fn an_end_site_copying_a_shin_in_line_is_no_point_to_stand_on() {
        // Poser: the foot's end site is the shin again, straight down.
        let s = leg([0.0, -0.36, 0.0], [0.0, -0.36, 0.0]);
        assert_eq!(s.floor_points()[3].end, None);
        // Toes ahead of the ankle, a shin bent forward at the knee with its end
        // copied, and a shin of another length: real ends.
        for (shin, end) in [
            ([0.0, -0.36, 0.0], [0.0, -0.06, 0.15]),
            ([0.0, -0.3, 0.2], [0.0, -0.3, 0.2]),
            ([0.0, -0.36, 0.0], [0.0, -0.08, 0.0]),
        ] {
            let s = leg(shin, end);
            assert_eq!(
                s.floor_points()[3].end,
                Some(Vec3::from(end)),
                "shin {shin:?}"
            );
        }
    }

    #[test]
    fn a_nub_drawn_with_the_bone_before_it_across_its_line_is_a_drawn_tail() {
        // A toe 15 cm ahead of the ankle and 6 cm down, and its nub: straight down
        // or up with the toe bone's length (Blender's drawn tail), of another length,
        // in the toe's line, or not named as a nub.
        let toe = Vec3::new(0.0, -0.06, 0.15);
        let down = Vec3::new(0.0, -toe.length(), 0.0);
        for (name, tail, drawn) in [
            ("ball_r_end", down, true),
            ("ball_l_end", -down, true),
            ("ball_r_end", 0.5 * down, false),
            ("ball_r_end", toe, false),
            ("ball_r_tip", down, false),
        ] {
            let mut joints = leg([0.0, -0.4, 0.0], [0.0, 0.0, 0.0]).joints().to_vec();
            joints[3].end = None;
            joints.push(Joint {
                name: "ball_r".into(),
                parent: Some(3),
                rest: Transform::from_translation(toe),
                end: None,
            });
            joints.push(Joint {
                name: name.into(),
                parent: Some(4),
                rest: Transform::from_translation(tail),
                end: None,
            });
            let s = Skeleton::new(joints).expect("a skeleton");
            let tails: Vec<bool> = s.floor_points().iter().map(|p| !p.joint).collect();
            assert_eq!(tails[5], drawn, "{name} {tail:?}");
            assert!(!tails[..5].iter().any(|&t| t), "{name} {tail:?}");
        }
    }

    #[test]
    fn an_end_nub_copying_a_bent_shin_is_no_point_to_stand_on() {
        // FBX2glTF: a bent shin closed by `LowerLeg.L_end` at the ankle, whose own end
        // is the shin again, below the floor. Named `foot`, the same end is a foot's.
        for (name, kept) in [("LowerLeg.L_end", false), ("foot", true)] {
            let mut s = leg([0.0, -0.3, 0.2], [0.0, -0.3, 0.2]).joints().to_vec();
            s[3].name = name.into();
            let s = Skeleton::new(s).expect("a skeleton");
            let want = kept.then_some(Vec3::new(0.0, -0.3, 0.2));
            assert_eq!(s.floor_points()[3].end, want, "{name}");
        }
    }
}
