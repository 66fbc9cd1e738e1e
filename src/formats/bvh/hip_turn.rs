//! When the root's turn is shared out among zero-length hip joints: CMU skeletons
//! hang each leg from a hip joint at the root's own position (`LHipJoint`,
//! `RHipJoint`, each with its `OFFSET` 0 0 0). Captures leave those joints unturned,
//! so the root's rotation is the pelvis'; pose estimates from video on that skeleton
//! (deep-motion-editing's outputs) split the pelvis' turn at random between the root
//! and the zero-length joints under it: the root rolled 90° in every frame, its
//! children turning it back. Such a root's rotation says nothing about the pelvis,
//! and an avatar's hips would roll with it.
//!
//! `HipTurn` moves the turn the two hip joints share into the root: the pelvis'
//! rotation is the one taking the hip joints' rest places (their children's
//! `OFFSET`s) to where they are in the frame, and every child of the root gets the
//! inverse, so every joint stays where the file puts it. A root whose hip joints are
//! unturned in a frame (every capture) is left exactly as it is.
//!
//! Works on `FilePose`s in file space, before the change to the internal basis (a
//! change of basis keeps products of rotations).

use glam::{Mat3, Quat, Vec3};

use super::hierarchy::{JointDef, only_root_and_children};

/// Largest quaternion component difference from the identity that is no turn.
const UNTURNED: f32 = 1e-6;

/// The root and its zero-length hip joints, found once from the hierarchy.
pub(super) struct HipTurn {
    root: usize,
    /// Every child of the root (all of them at its position).
    kids: Vec<usize>,
    /// The two hip joints (children of the root whose subtree goes down) and the
    /// `OFFSET` of each one's first child: where the thigh starts, in the hip joint's
    /// frame.
    hips: [(usize, Vec3); 2],
}

impl HipTurn {
    /// Heuristic: the file's only root, with every child at its position (`OFFSET`
    /// 0 0 0, no position channel), two of them hip joints: their first child with
    /// an `OFFSET` lies below the root (along `up`, the file's up axis) and the two
    /// lie apart. `None` for any other hierarchy.
    pub(super) fn find(defs: &[JointDef], up: Vec3) -> Option<HipTurn> {
        let (root, kids) = only_root_and_children(defs)?;
        let coincident = |d: &JointDef| d.offset.length_squared() == 0.0 && !d.has_position();
        if kids.len() < 2 || !kids.iter().all(|&k| coincident(&defs[k])) {
            return None;
        }
        let thigh = |kid: usize| {
            defs.iter()
                .find(|d| d.parent == Some(kid) && d.offset.length_squared() > 0.0)
                .map(|d| d.offset)
        };
        let legs: Vec<(usize, Vec3)> = kids
            .iter()
            .filter_map(|&k| thigh(k).map(|o| (k, o)))
            // Any way down: CMU's thighs start down and out from the root, a
            // generated rig's beside it and a little below.
            .filter(|(_, o)| o.normalize_or_zero().dot(up) < 0.0)
            .collect();
        let [a, b] = legs.as_slice() else {
            return None;
        };
        // Apart: the two thighs' starts are not along one line from the root.
        if a.1
            .normalize_or_zero()
            .cross(b.1.normalize_or_zero())
            .length()
            < 0.1
        {
            return None;
        }
        Some(HipTurn {
            root,
            kids,
            hips: [*a, *b],
        })
    }

    /// "the root `Hips` and its hip joints `LHipJoint`, `RHipJoint`", for a note.
    pub(super) fn describe(&self, defs: &[JointDef]) -> String {
        let name = |j: usize| defs.get(j).map_or("", |d| d.name.as_str());
        format!(
            "the root `{}` and its zero-length hip joints `{}`, `{}`",
            name(self.root),
            name(self.hips[0].0),
            name(self.hips[1].0)
        )
    }

    /// Moves the turn the hip joints share in `rotations` (one frame's local
    /// rotations, file space) into the root: `R' = R·Q`, every child `L' = Q⁻¹·L`,
    /// with `Q` taking the hip frame at rest to the hip frame turned by the hip
    /// joints (`frame`). Returns whether anything moved.
    pub(super) fn apply(&self, rotations: &mut [Quat]) -> bool {
        let [(a, rest_a), (b, rest_b)] = self.hips;
        let (turn_a, turn_b) = (rotations[a], rotations[b]);
        let unturned = |q: Quat| (q.x.abs().max(q.y.abs()).max(q.z.abs())) <= UNTURNED && q.w > 0.0;
        if unturned(turn_a) && unturned(turn_b) {
            return false;
        }
        let (Some(rest), Some(now)) = (
            frame(rest_a, rest_b),
            frame(turn_a * rest_a, turn_b * rest_b),
        ) else {
            return false;
        };
        let shared = Quat::from_mat3(&(now * rest.transpose())).normalize();
        rotations[self.root] = (rotations[self.root] * shared).normalize();
        for &k in &self.kids {
            rotations[k] = (shared.conjugate() * rotations[k]).normalize();
        }
        true
    }
}

/// The hips' frame from where the two thighs start: X across from one to the other,
/// Y along their mean direction made square to X. `None` when they coincide or lie
/// along one line.
fn frame(a: Vec3, b: Vec3) -> Option<Mat3> {
    let across = (a - b).try_normalize()?;
    let forward = across.cross(a + b).try_normalize()?;
    let along = forward.cross(across);
    Some(Mat3::from_cols(across, along, forward))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{motion, one_joint, places, rig, same_rotation};
    use glam::{Affine3A, Quat, Vec3};

    /// A CMU-style root: `LHipJoint`, `RHipJoint` and `LowerBack` at the root, each
    /// with one joint below; one frame with the given rotations (Z X Y degrees) of
    /// the root and its three children.
    fn cmu_root(root: [f32; 3], left: [f32; 3], right: [f32; 3], back: [f32; 3]) -> String {
        let kid = |name: &str, child: &str, offset: &str| {
            format!(
                "  JOINT {name}\n  {{\n    OFFSET 0 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT {child}\n    {{\n      OFFSET {offset}\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      End Site\n      {{\n        OFFSET 0 -40 0\n      }}\n    }}\n  }}\n"
            )
        };
        let v = |r: [f32; 3]| format!("{} {} {}", r[0], r[1], r[2]);
        format!(
            "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n{}{}{}}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 90 0 {} {} 0 0 0 {} 0 0 0 {} 0 0 0\n",
            kid("LHipJoint", "LeftUpLeg", "9 -8 4"),
            kid("RHipJoint", "RightUpLeg", "-9 -8 4"),
            kid("LowerBack", "Spine", "0 20 -2"),
            v(root),
            v(left),
            v(right),
            v(back),
        )
    }

    /// The same joints' places, by forward kinematics of the file's own channels.
    fn file_places(root: [f32; 3], kids: [[f32; 3]; 3]) -> Vec<Vec3> {
        let euler = |r: [f32; 3]| {
            Quat::from_rotation_z(r[0].to_radians())
                * Quat::from_rotation_x(r[1].to_radians())
                * Quat::from_rotation_y(r[2].to_radians())
        };
        let hips = Affine3A::from_rotation_translation(euler(root), Vec3::new(0.0, 90.0, 0.0));
        let mut out = vec![Vec3::new(0.0, 90.0, 0.0)];
        for (k, offset) in kids.iter().zip([
            Vec3::new(9.0, -8.0, 4.0),
            Vec3::new(-9.0, -8.0, 4.0),
            Vec3::new(0.0, 20.0, -2.0),
        ]) {
            let kid = hips * Affine3A::from_quat(euler(*k));
            out.push(kid.translation.into());
            out.push(kid.transform_point3(offset));
        }
        out
    }

    #[test]
    fn a_roll_undone_by_the_hip_joints_moves_out_of_the_root_and_every_joint_stays() {
        // The root rolled 90 degrees, each child turning it back (and the back
        // bending 10 degrees forward on top).
        let (root, undo, back) = ([90.0, 0.0, 0.0], [-90.0, 0.0, 0.0], [-90.0, 10.0, 0.0]);
        let text = cmu_root(root, undo, undo, back);
        let rig = rig(&text);
        let frame = motion(&rig).frame(0);
        assert_root_unrolled_back_bent(&frame);
        let got = places(&rig);
        let want = file_places(root, [undo, undo, back]);
        // Joint order: Hips, LHipJoint, LeftUpLeg, RHipJoint, RightUpLeg, LowerBack, Spine.
        for (g, w) in got.iter().zip(&want) {
            assert!(g.distance(*w) < 1e-3, "{g} != {w}");
        }
    }

    /// The root of `cmu_root`'s roll-and-bend frame with the roll moved out of it,
    /// and the back (joint 5) keeping its own bend.
    fn assert_root_unrolled_back_bent(frame: &crate::formats::FrameRef<'_>) {
        assert!(
            same_rotation(frame.rotations[0], Quat::IDENTITY),
            "{:?}",
            frame.rotations[0]
        );
        assert!(
            same_rotation(
                frame.rotations[5],
                Quat::from_rotation_x(10f32.to_radians())
            ),
            "the back keeps its own bend: {:?}",
            frame.rotations[5]
        );
    }

    #[test]
    fn hip_joints_whose_thighs_start_beside_the_root_share_its_turn_too() {
        // A generated rig: the thighs start beside the root and a little below it
        // (`10 -4 0`), not down and out as CMU's; the pelvis' turn sits on the
        // zero-length joints.
        let (root, undo, back) = ([90.0, 0.0, 0.0], [-90.0, 0.0, 0.0], [-90.0, 10.0, 0.0]);
        let text = cmu_root(root, undo, undo, back)
            .replace("OFFSET 9 -8 4", "OFFSET 10 -4 0")
            .replace("OFFSET -9 -8 4", "OFFSET -10 -4 0");
        let rig = rig(&text);
        assert_root_unrolled_back_bent(&motion(&rig).frame(0));
    }

    #[test]
    fn unturned_hip_joints_leave_the_root_exactly_as_the_file_has_it() {
        // A capture: hip joints at rest, the back bending on its own.
        let root = [5.0, 20.0, 30.0];
        let capture = rig(&cmu_root(root, [0.0; 3], [0.0; 3], [0.0, 14.0, 2.0]));
        let frame = motion(&capture).frame(0);
        let alone = rig(&one_joint("Zrotation Xrotation Yrotation", "5 20 30"));
        assert_eq!(frame.rotations[0], motion(&alone).frame(0).rotations[0]);
        assert_eq!(frame.rotations[1], Quat::IDENTITY);
    }
}
