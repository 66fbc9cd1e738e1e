//! Automatic humanoid recognition: which joint of an arbitrary rig drives each VRM
//! 1.0 humanoid bone, with a confidence and the reasons for every bone, or a plain
//! "not a humanoid" with the reason.
//!
//! Pure: a `Skeleton` (rest transforms and joint names) in, a `Recognition` out, no
//! I/O. `inspect::choose_map` falls back on it when a rig has no map of its own and
//! no catalog map fits; `inspect --write-map` writes its map for a user to check.
//!
//! Structure and geometry decide; names steer only where geometry cannot tell (which
//! of two coincident joints, the deforming chain over a control duplicate, which
//! finger is which) and raise or lower the confidence. Left and right always come
//! from rest positions and the facing direction, never from names alone: rigs with
//! mirrored names are common. The stages, each a function with its heuristic, in
//! the file named after it:
//!
//! 1. `RestJoints::new` (`rest_joints.rs`): model-space rest positions, children,
//!    what each subtree reaches, and what each name says (`NameInfo::parse` in
//!    `names.rs`: case, separators, prefixes such as `mixamorig:`, `Bip01`, `DEF-`,
//!    `J_Bip_`, `Armature|`, numeric suffixes).
//! 2. `find_pelvis` (`pelvis.rs`): the hips are a joint with two legs (chains of two
//!    or more joints ending at the same level, side by side) and a body going up.
//!    Every such joint is tried and the most complete body wins; transform nodes
//!    above the pelvis never qualify, having one child. `pelvis_above` moves the hips
//!    up one joint for 3ds Max Biped, whose thighs hang from `Bip01 Spine`.
//! 3. `solve_leg` (`legs.rs`): the thigh is the first joint out to the side whose
//!    bone points down, the knee the joint halfway down (or one named as the knee
//!    wherever the leg goes down through it to an ankle), the ankle the first joint
//!    below half the knee's height, the toes the next joint.
//! 4. `Midline` (`facing.rs`): the lateral axis and the midline, from the legs.
//! 5. `find_arm_branch` (`arms.rs`): the upper chest is the joint with two one-sided
//!    subtrees reaching far out to either side; the head is its tallest centred child,
//!    or, when none rises, a centred child of a spine joint below it (the spine then
//!    ends at that joint).
//! 6. `solve_arm` (`arms.rs`): upper arm, forearm and hand along the arm's main line
//!    by proportion (upper arm about 1.15 forearms), a shoulder joint out to the
//!    side, straight twist joints and names; the clavicle lies before the upper arm.
//! 7. `facing` (`facing.rs`): toes, knees and eyes tell the front; when the rest is
//!    silent, a front given from elsewhere (`recognize_facing`: the knees the clips
//!    bend), then names, and +Z (glTF's convention) last.
//! 8. `split_spine` (`spine.rs`): the joints between the hips and the arm branch
//!    become spine, chest (the middle one) and upper chest (the branch).
//! 9. `solve_neck` (`spine.rs`): the chain above the arm branch up to its first
//!    fork, without an end nub: neck first, head last.
//! 10. `solve_fingers` (`fingers.rs`): every leaf path under the hand is a digit
//!     whose last three joints are its phalanges; the thumb starts nearest the wrist;
//!     the other fingers are ordered away from the thumb.
//! 11. `solve_face` (`face.rs`): eyes and jaw by name, or eyes as a symmetric pair of
//!     leaves on the head.
//!
//! `assemble` (`assemble.rs`) runs the stages on one hips candidate and records each
//! bone with its evidence in a `Body` (`body.rs`: confidence from structure, raised
//! or lowered by the name); `notes.rs` words the facts about the whole rig. The
//! finished map is checked with `BoneMap::resolve` before it is returned.

mod arms;
mod assemble;
mod body;
mod face;
mod facing;
mod fingers;
mod legs;
pub(crate) mod names;
mod notes;
mod pelvis;
mod rest_joints;
mod spine;

use std::collections::BTreeMap;

use glam::Vec3;

use crate::humanoid::HumanBone;

use super::{NamedBoneMap, Skeleton};
use assemble::assemble;
use body::Body;
use pelvis::{
    beside_the_body, find_pelvis, legs_beside_the_body, legs_without_body, legs_without_feet,
};
use rest_joints::RestJoints;

/// How sure the recognizer is of one bone, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneEvidence {
    /// 0 to 1. Structure alone gives 0.55 to 0.85 depending on how telling it is; a
    /// name that agrees adds up to 0.12, one that contradicts takes away 0.25.
    pub confidence: f32,
    /// One short line per fact used: structure, geometry, name.
    pub reasons: Vec<String>,
}

/// A rig recognized as a humanoid.
#[derive(Debug, Clone, PartialEq)]
pub struct RecognizedMap {
    /// Humanoid bone -> joint name; passes `BoneMap::resolve` against the skeleton.
    pub map: NamedBoneMap,
    /// Confidence and reasons for every bone in `map`.
    pub evidence: BTreeMap<HumanBone, BoneEvidence>,
    /// Facts about the whole rig: where it faces and how that was told, a stance
    /// with one foot ahead, mirrored names, transform nodes skipped above the hips.
    pub notes: Vec<String>,
    /// The sides were told across the thighs alone, the knees and feet standing one
    /// behind the other (a stance with one foot ahead): a pose to rest on only when
    /// no other stands.
    pub one_foot_ahead: bool,
    /// The rest pose shows no front (no toes, eyes or bent knees tell it): the
    /// names, or glTF's +Z, told which way the body faces and so its sides.
    pub front_unseen: bool,
}

impl RecognizedMap {
    /// The mean confidence over the mapped bones, 0 to 1.
    #[must_use]
    pub fn confidence(&self) -> f32 {
        if self.evidence.is_empty() {
            return 0.0;
        }
        self.evidence.values().map(|e| e.confidence).sum::<f32>() / self.evidence.len() as f32
    }
}

/// Why a rig is not recognized as a humanoid.
#[derive(Debug, Clone, PartialEq)]
pub struct NotHumanoid {
    /// One line, lower case, naming the joints concerned.
    pub reason: String,
    /// The bones found before the recognizer gave up (a start for a map written by
    /// hand); it does not pass `BoneMap::resolve`.
    pub partial: NamedBoneMap,
    /// For a rig refused only because limbs hang outside the hips' subtree, as game
    /// rigs hang them from the root (feet moved by IK, legs beside the hips), where no
    /// strict VRM map exists: the map with those limbs, each driven from the bone it
    /// belongs to (`BoneMap::detached_bones`).
    pub limbs_outside: Option<Box<RecognizedMap>>,
    /// The reason holds in any pose of the rig (a many-legged body): a rest taken
    /// from a frame of its motion would not make it a humanoid.
    pub any_pose: bool,
}

/// What `recognize` makes of a rig.
#[derive(Debug, Clone, PartialEq)]
pub enum Recognition {
    Humanoid(RecognizedMap),
    NotHumanoid(NotHumanoid),
}

impl Recognition {
    /// The recognized map, if the rig is a humanoid.
    #[must_use]
    pub fn map(&self) -> Option<&NamedBoneMap> {
        match self {
            Recognition::Humanoid(r) => Some(&r.map),
            Recognition::NotHumanoid(_) => None,
        }
    }

    /// The recognized humanoid, if it is one.
    #[must_use]
    pub fn into_humanoid(self) -> Option<RecognizedMap> {
        match self {
            Recognition::Humanoid(r) => Some(r),
            Recognition::NotHumanoid(_) => None,
        }
    }
}

/// Recognizes the humanoid bones of `skeleton` (see the module header).
#[must_use]
pub fn recognize(skeleton: &Skeleton) -> Recognition {
    recognize_with(RestJoints::new(skeleton))
}

/// Recognizes the humanoid bones of `skeleton` as `recognize` does, with `front`
/// (a horizontal direction in the rest's model space) as where the body faces when
/// the rest pose shows no front (`RecognizedMap::front_unseen`): what the clips say
/// (`formats::knee_bend`), before the names.
#[must_use]
pub fn recognize_facing(skeleton: &Skeleton, front: Vec3) -> Recognition {
    let mut rig = RestJoints::new(skeleton);
    rig.front = Some(front);
    recognize_with(rig)
}

/// Recognition on the rest joints `rig` (`recognize`).
fn recognize_with(rig: RestJoints) -> Recognition {
    let mut best: Option<Body> = None;
    for joint in 0..rig.len() {
        let Some(pelvis) = find_pelvis(&rig, joint) else {
            continue;
        };
        let body = assemble(&rig, &pelvis);
        if best.as_ref().is_none_or(|b| body.score() > b.score()) {
            best = Some(body);
        }
    }
    let recognition = match best {
        Some(body) => body.into_recognition(&rig),
        None => match legs_beside_the_body(&rig) {
            Some((root, legs, body)) => beside_the_body_recognition(&rig, root, legs, body),
            None => Recognition::NotHumanoid(NotHumanoid {
                reason: match legs_without_feet(&rig) {
                    Some((hips, [[a, knee_a], [b, knee_b]])) => format!(
                        "the legs `{}` and `{}` below `{}` end at the knee (`{}`, `{}`, \
                         with nothing below): no VRM map has the required feet ({} joints)",
                        rig.name(a),
                        rig.name(b),
                        rig.name(hips),
                        rig.name(knee_a),
                        rig.name(knee_b),
                        rig.len()
                    ),
                    None => match legs_without_body(&rig) {
                        Some((hips, [a, b], body, rise)) => format!(
                            "`{}` branches into two legs (`{}`, `{}`), but nothing above it \
                             rises into a body: `{}` reaches {:.2}% of the legs' drop above it, \
                             where a torso rises 15% at least ({} joints)",
                            rig.name(hips),
                            rig.name(a),
                            rig.name(b),
                            rig.name(body),
                            (100.0 * rise).max(0.0),
                            rig.len()
                        ),
                        None => format!(
                            "no joint branches into two legs (chains of two or more joints \
                             going down to the same level, side by side) and a body going up \
                             ({} joints)",
                            rig.len()
                        ),
                    },
                },
                partial: NamedBoneMap::default(),
                limbs_outside: None,
                any_pose: false,
            }),
        },
    };
    match (recognition, flat_root(&rig)) {
        (Recognition::NotHumanoid(n), Some((root, leaves))) if n.limbs_outside.is_none() => {
            Recognition::NotHumanoid(NotHumanoid {
                reason: format!(
                    "the joints have no hierarchy: {leaves} of the {} joints hang from `{}` \
                     directly, spread over the figure, so no skeleton can be read",
                    rig.len(),
                    rig.name(root)
                ),
                partial: n.partial,
                limbs_outside: None,
                any_pose: n.any_pose,
            })
        }
        (recognition, _) => recognition,
    }
}

/// A rig whose legs hang beside the body from a root at their feet: no strict VRM
/// map, since VRM's upper legs hang below its hips. The body assembled on the body's
/// joint as the hips with those legs, when it lacks nothing else, is the map with the
/// legs driven from the hips (`NotHumanoid::limbs_outside`).
fn beside_the_body_recognition(
    rig: &RestJoints,
    root: usize,
    legs: [usize; 2],
    body: usize,
) -> Recognition {
    let reason = format!(
        "the legs `{}` and `{}` hang from `{}` at their feet, beside the body `{}`, not below \
         a hips, so no VRM map has the required upper legs ({} joints)",
        rig.name(legs[0]),
        rig.name(legs[1]),
        rig.name(root),
        rig.name(body),
        rig.len()
    );
    let limbs_outside = beside_the_body(rig, root, legs, body)
        .map(|pelvis| assemble(rig, &pelvis).into_recognition(rig))
        .and_then(Recognition::into_humanoid)
        .map(|mut map| {
            map.notes.push(format!(
                "the legs `{}` and `{}` hang from `{}`, beside the hips `{}`: they are mapped \
                 and driven from the hips",
                rig.name(legs[0]),
                rig.name(legs[1]),
                rig.name(root),
                rig.name(body)
            ));
            Box::new(map)
        });
    Recognition::NotHumanoid(NotHumanoid {
        reason,
        partial: NamedBoneMap::default(),
        limbs_outside,
        any_pose: false,
    })
}

/// The joint that a flattened rig hangs its bones from, and how many: a joint with
/// at least as many childless children as a humanoid has required bones, reaching
/// over half the rig's height (an exporter that dropped the parent links; face
/// bones under a head stay within the head). Only consulted once recognition failed.
fn flat_root(rig: &RestJoints) -> Option<(usize, usize)> {
    let top = rig.high.iter().copied().fold(f32::MIN, f32::max);
    let bottom = rig.low.iter().copied().fold(f32::MAX, f32::min);
    (0..rig.len())
        .filter_map(|joint| {
            let leaves: Vec<usize> = rig.kids[joint]
                .iter()
                .copied()
                .filter(|&c| rig.kids[c].is_empty())
                .collect();
            let high = leaves.iter().map(|&c| rig.high[c]).fold(f32::MIN, f32::max);
            let low = leaves.iter().map(|&c| rig.low[c]).fold(f32::MAX, f32::min);
            let spread = leaves.len() >= crate::humanoid::bone::REQUIRED.len()
                && high - low > 0.5 * (top - bottom);
            spread.then_some((joint, leaves.len()))
        })
        .max_by_key(|&(_, count)| count)
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone as B;
    use test_support::{skeleton, with_limbs_named};

    /// A T-pose humanoid facing +Z (or -Z, turned 180 degrees) under two transform
    /// nodes, with a nub above the head; `left`/`right` prefix the limb names.
    fn small_humanoid(facing_minus_z: bool, left: &str, right: &str) -> Skeleton {
        let table = small_table(facing_minus_z, left, right);
        let table: Vec<(&str, Option<&str>, [f32; 3])> = table
            .iter()
            .map(|(n, p, pos)| (n.as_str(), p.as_deref(), *pos))
            .collect();
        skeleton(&table)
    }

    /// `small_humanoid`'s table: (name, parent, model-space position).
    fn small_table(
        facing_minus_z: bool,
        left: &str,
        right: &str,
    ) -> Vec<(String, Option<String>, [f32; 3])> {
        let turn = |[x, y, z]: [f32; 3]| {
            if facing_minus_z {
                [-x, y, -z]
            } else {
                [x, y, z]
            }
        };
        let mut table: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("Scene".into(), None, [0.0, 0.0, 0.0]),
            ("Armature".into(), Some("Scene".into()), [0.0, 0.0, 0.0]),
            ("n_hips".into(), Some("Armature".into()), [0.0, 1.0, 0.0]),
            ("n_spine".into(), Some("n_hips".into()), [0.0, 1.1, 0.0]),
            ("n_chest".into(), Some("n_spine".into()), [0.0, 1.3, 0.0]),
            ("n_neck".into(), Some("n_chest".into()), [0.0, 1.45, 0.0]),
            ("n_head".into(), Some("n_neck".into()), [0.0, 1.55, 0.0]),
            ("n_top".into(), Some("n_head".into()), [0.0, 1.78, 0.0]),
        ];
        for (prefix, x) in [(left, 1.0f32), (right, -1.0)] {
            let limb = [
                ("arm", "n_chest", [0.18, 1.4, 0.0]),
                ("forearm", "arm", [0.46, 1.4, 0.0]),
                ("hand", "forearm", [0.71, 1.4, 0.0]),
                ("thigh", "n_hips", [0.1, 0.95, 0.0]),
                ("shin", "thigh", [0.1, 0.5, 0.0]),
                ("foot", "shin", [0.1, 0.08, 0.0]),
                ("toe", "foot", [0.1, 0.0, 0.12]),
            ];
            for (name, parent, [px, py, pz]) in limb {
                let parent = if parent.starts_with("n_") {
                    parent.to_owned()
                } else {
                    format!("{prefix}{parent}")
                };
                table.push((format!("{prefix}{name}"), Some(parent), [x * px, py, pz]));
            }
        }
        table
            .into_iter()
            .map(|(n, p, pos)| (n, p, turn(pos)))
            .collect()
    }

    /// `table` with `edit` applied, as a skeleton.
    fn edited(
        mut table: Vec<(String, Option<String>, [f32; 3])>,
        edit: impl FnOnce(&mut Vec<(String, Option<String>, [f32; 3])>),
    ) -> Skeleton {
        edit(&mut table);
        let table: Vec<(&str, Option<&str>, [f32; 3])> = table
            .iter()
            .map(|(n, p, pos)| (n.as_str(), p.as_deref(), *pos))
            .collect();
        skeleton(&table)
    }

    /// Sets the parent of joint `name` (its position stays).
    fn reparent(table: &mut [(String, Option<String>, [f32; 3])], name: &str, parent: &str) {
        for row in table.iter_mut().filter(|r| r.0 == name) {
            row.1 = Some(parent.to_owned());
        }
    }

    /// Moves joint `name` by `by`, its subtree with it (rows are parents first).
    fn shift(table: &mut [(String, Option<String>, [f32; 3])], name: &str, by: [f32; 3]) {
        let mut moved = vec![name.to_owned()];
        for row in table.iter_mut() {
            let under = row.0 == name || row.1.as_ref().is_some_and(|p| moved.contains(p));
            if under {
                moved.push(row.0.clone());
                row.2 = [row.2[0] + by[0], row.2[1] + by[1], row.2[2] + by[2]];
            }
        }
    }

    fn joint_of(r: &RecognizedMap, bone: HumanBone) -> &str {
        r.map.bones.get(&bone).map_or("", String::as_str)
    }

    #[test]
    fn hips_are_where_legs_and_body_meet_and_an_end_nub_is_not_the_head() {
        let r = recognize(&small_humanoid(false, "a_", "b_"))
            .into_humanoid()
            .unwrap();
        assert_eq!(joint_of(&r, B::Hips), "n_hips");
        assert!(
            r.notes.iter().any(|n| n.contains("`Scene`, `Armature`")),
            "{:?}",
            r.notes
        );
        assert_eq!(joint_of(&r, B::Neck), "n_neck");
        assert_eq!(joint_of(&r, B::Head), "n_head");
    }

    #[test]
    fn an_end_site_written_as_a_joint_named_endsite_is_no_head() {
        // A BVH writer that writes every End Site as a joint named after the joint it
        // closes, `endsite` glued on, and closes that joint with an End Site of a
        // ten-thousandth of a unit: above the arms, `Head_x_joint` at the base of the
        // head, then `Headendsite_x_joint` at its top.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            t.retain(|r| !matches!(r.0.as_str(), "n_neck" | "n_head" | "n_top"));
            t.push(row("Head_x_joint", "n_chest", [0.0, 1.55, 0.0]));
            t.push(row("Headendsite_x_joint", "Head_x_joint", [0.0, 1.78, 0.0]));
        });
        let mut joints = s.joints().to_vec();
        for j in joints
            .iter_mut()
            .filter(|j| j.name == "Headendsite_x_joint")
        {
            j.end = Some(glam::Vec3::new(0.0, 0.0001, 0.0));
        }
        let s = Skeleton::new(joints).unwrap();
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::Head), "Head_x_joint");
        assert_eq!(joint_of(&r, B::Neck), "");
    }

    #[test]
    fn a_mixamo_leg_with_cartoon_feet_keeps_its_named_knee_and_ankle() {
        // A chibi character's legs (Mixamo names without the colon): a short shin and
        // big feet reaching far down and ahead of a high ankle, so the ankle, not the
        // knee, is the joint nearest half the leg's height. Faces +Z, left at +X.
        let body = [
            ("mixamorigHips", "", [0.0, 0.34, 0.0]),
            ("mixamorigSpine", "mixamorigHips", [0.0, 0.43, 0.0]),
            ("mixamorigSpine1", "mixamorigSpine", [0.0, 0.54, 0.0]),
            ("mixamorigSpine2", "mixamorigSpine1", [0.0, 0.66, 0.0]),
            ("mixamorigNeck", "mixamorigSpine2", [0.0, 0.80, 0.0]),
            ("mixamorigHead", "mixamorigNeck", [0.0, 0.89, 0.0]),
        ];
        let limb = [
            ("Shoulder", "mixamorigSpine2", [0.13, 0.79, 0.0]),
            ("Arm", "Shoulder", [0.385, 0.77, 0.0]),
            ("ForeArm", "Arm", [0.50, 0.77, 0.0]),
            ("Hand", "ForeArm", [0.70, 0.76, 0.0]),
            ("UpLeg", "mixamorigHips", [0.226, 0.284, 0.0]),
            ("Leg", "UpLeg", [0.226, 0.172, -0.007]),
            ("Foot", "Leg", [0.228, 0.127, 0.008]),
            ("ToeBase", "Foot", [0.272, 0.0, 0.217]),
        ];
        let r =
            test_support::recognized_with_limbs(&body, ["mixamorigLeft", "mixamorigRight"], &limb);
        for (bone, joint) in [
            (B::LeftUpperLeg, "mixamorigLeftUpLeg"),
            (B::LeftLowerLeg, "mixamorigLeftLeg"),
            (B::LeftFoot, "mixamorigLeftFoot"),
            (B::LeftToes, "mixamorigLeftToeBase"),
            (B::RightLowerLeg, "mixamorigRightLeg"),
            (B::RightFoot, "mixamorigRightFoot"),
            (B::LeftHand, "mixamorigLeftHand"),
        ] {
            assert_eq!(joint_of(&r, bone), joint, "{bone:?}");
        }
        assert!(
            r.notes.iter().any(|n| n.starts_with("faces +Z")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn a_named_knee_high_over_a_long_shin_and_heels_is_the_knee() {
        // A cartoon werehog's legs (Sketchfab's `werehog_amy_rose`): short thighs, long
        // shins and high heels put the knee at 77% of the leg's drop from the floor,
        // the ankle at 26%, and a kneecap joint hangs from the shin at the knee. The
        // ankle is the joint nearest half the leg's height. Faces +Z, left at +X.
        let body = [
            ("Hips", "", [0.0, 0.603, 0.0]),
            ("Spine", "Hips", [0.0, 0.70, 0.0]),
            ("Chest", "Spine", [0.0, 0.82, 0.0]),
            ("Neck", "Chest", [0.0, 0.98, 0.0]),
            ("Head", "Neck", [0.0, 1.05, 0.03]),
        ];
        let limb = [
            ("Shoulder", "Chest", [0.05, 0.95, 0.0]),
            ("UpperArm", "Shoulder", [0.14, 0.95, 0.0]),
            ("ForeArm", "UpperArm", [0.40, 0.94, 0.0]),
            ("Hand", "ForeArm", [0.66, 0.93, 0.0]),
            ("Thigh", "Hips", [0.059, 0.607, -0.002]),
            ("Calf", "Thigh", [0.094, 0.479, -0.002]),
            ("Foot", "Calf", [0.111, 0.192, -0.008]),
            ("Toe", "Foot", [0.112, 0.047, 0.118]),
            ("Knee", "Calf", [0.094, 0.480, -0.003]),
        ];
        let r = test_support::recognized_with_limbs(&body, ["L_", "R_"], &limb);
        for (bone, joint) in [
            (B::LeftUpperLeg, "L_Thigh"),
            (B::LeftLowerLeg, "L_Calf"),
            (B::LeftFoot, "L_Foot"),
            (B::LeftToes, "L_Toe"),
            (B::RightLowerLeg, "R_Calf"),
            (B::RightFoot, "R_Foot"),
            (B::RightToes, "R_Toe"),
        ] {
            assert_eq!(joint_of(&r, bone), joint, "{bone:?}");
        }
    }

    #[test]
    fn a_joint_named_as_the_shin_low_under_a_plain_knee_is_no_knee() {
        // A leg whose knee joint has a plain name, halfway down, and whose ankle
        // helper is named as the shin, just over the ankle: the plain joint is the
        // knee, the named one no more than a joint of the shin.
        let body = [
            ("Hips", "", [0.0, 1.0, 0.0]),
            ("Spine", "Hips", [0.0, 1.2, 0.0]),
            ("Chest", "Spine", [0.0, 1.4, 0.0]),
            ("Neck", "Chest", [0.0, 1.6, 0.0]),
            ("Head", "Neck", [0.0, 1.7, 0.03]),
        ];
        let limb = [
            ("Shoulder", "Chest", [0.05, 1.5, 0.0]),
            ("UpperArm", "Shoulder", [0.18, 1.5, 0.0]),
            ("ForeArm", "UpperArm", [0.45, 1.5, 0.0]),
            ("Hand", "ForeArm", [0.70, 1.5, 0.0]),
            ("Thigh", "Hips", [0.1, 0.95, 0.0]),
            ("Joint2", "Thigh", [0.1, 0.52, 0.01]),
            ("Shin", "Joint2", [0.1, 0.16, 0.0]),
            ("Foot", "Shin", [0.1, 0.1, 0.0]),
            ("Toe", "Foot", [0.1, 0.0, 0.12]),
        ];
        let r = test_support::recognized_with_limbs(&body, ["L_", "R_"], &limb);
        for (bone, joint) in [
            (B::LeftUpperLeg, "L_Thigh"),
            (B::LeftLowerLeg, "L_Joint2"),
            (B::LeftFoot, "L_Foot"),
            (B::RightLowerLeg, "R_Joint2"),
        ] {
            assert_eq!(joint_of(&r, bone), joint, "{bone:?}");
        }
    }

    #[test]
    fn a_digitigrade_leg_ends_at_its_hock_not_at_the_end_nub_below() {
        // An upright creature's legs: the shin ends at a hock 0.45 m above the floor
        // and behind the knee, and only the foot bone's end nub reaches the floor,
        // ahead of the knee. Faces +Z (the head reaches forward), left at +X.
        let body = [
            ("Root", "", [0.0, -0.035, 0.004]),
            ("Pelvis", "Root", [0.0, 1.261, 0.019]),
            ("Body", "Pelvis", [0.0, 1.572, -0.097]),
            ("Neck", "Body", [0.0, 2.51, 0.484]),
            ("Head", "Neck", [0.0, 2.751, 0.629]),
        ];
        let limb = [
            ("Clavicle", "Body", [0.252, 1.991, 0.059]),
            ("Arm", "Clavicle", [0.45, 2.0, 0.06]),
            ("ForeArm", "Arm", [0.9, 2.0, 0.06]),
            ("Wrist", "ForeArm", [1.3, 2.0, 0.06]),
            ("Thigh", "Pelvis", [0.524, 1.407, 0.012]),
            ("Shin", "Thigh", [0.553, 1.071, 0.040]),
            ("Hock", "Shin", [0.524, 0.809, -0.289]),
            ("Hock_end", "Hock", [0.522, 0.359, 0.10]),
        ];
        let r = test_support::recognized_with_limbs(&body, ["L_", "R_"], &limb);
        assert_eq!(joint_of(&r, B::LeftLowerLeg), "L_Shin");
        assert_eq!(joint_of(&r, B::LeftFoot), "L_Hock");
        assert_eq!(joint_of(&r, B::RightFoot), "R_Hock");
        assert_eq!(joint_of(&r, B::LeftHand), "L_Wrist");
        assert!(
            r.notes.iter().any(|n| n.starts_with("faces +Z")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn sides_follow_the_toes_not_the_names() {
        // `small_humanoid(_, l, r)` puts `l` limbs on the character's left, whichever
        // way it faces; swapping the prefixes mirrors the names.
        for facing_minus_z in [false, true] {
            for (l, r, mirrored) in [("Left_", "Right_", false), ("Right_", "Left_", true)] {
                let s = small_humanoid(facing_minus_z, l, r);
                let got = recognize(&s).into_humanoid().unwrap();
                assert_eq!(joint_of(&got, B::LeftUpperLeg), format!("{l}thigh"));
                assert_eq!(joint_of(&got, B::RightHand), format!("{r}hand"));
                let said = got.notes.iter().any(|n| n.contains("swapped"));
                assert_eq!(said, mirrored, "{:?}", got.notes);
                let faces = if facing_minus_z {
                    "faces -Z"
                } else {
                    "faces +Z"
                };
                assert!(
                    got.notes.iter().any(|n| n.starts_with(faces)),
                    "{:?}",
                    got.notes
                );
            }
        }
    }

    fn row(name: &str, parent: &str, at: [f32; 3]) -> (String, Option<String>, [f32; 3]) {
        (name.to_owned(), Some(parent.to_owned()), at)
    }

    /// The map driving feet hung outside the legs from the legs, of a rig refused
    /// for those feet (the reason names them).
    fn limbs_outside(s: &Skeleton) -> RecognizedMap {
        let Recognition::NotHumanoid(n) = recognize(s) else {
            panic!("recognized as a strict VRM humanoid")
        };
        assert!(n.reason.contains("driven by IK"), "{}", n.reason);
        assert_eq!(n.partial.bones.get(&B::LeftFoot), None);
        *n.limbs_outside
            .expect("a map with the feet driven from the legs")
    }

    #[test]
    fn feet_hanging_from_the_root_under_the_knees_are_refused_and_mapped_from_the_legs() {
        // Quaternius: the leg ends at the knee's bone, the foot is an IK bone under
        // the root, beside a pole target in front of the knee.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for side in ["L_", "R_"] {
                reparent(t, &format!("{side}foot"), "Armature");
                t.push(row(&format!("{side}pole"), "Armature", [0.0, 0.5, 0.6]));
            }
        });
        let got = limbs_outside(&s);
        let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
        assert_eq!(bone(B::LeftUpperLeg), Some("L_thigh"));
        assert_eq!(bone(B::LeftLowerLeg), Some("L_shin"));
        assert_eq!(bone(B::LeftFoot), Some("L_foot"));
        assert_eq!(bone(B::LeftToes), Some("L_toe"));
        assert_eq!(bone(B::RightFoot), Some("R_foot"));
        assert!(
            got.notes.iter().any(|n| n.contains(
                "the foot `L_foot` hangs from `Armature`, outside the leg (a foot driven by IK)"
            )),
            "{:?}",
            got.notes
        );
        // The map resolves: a foot outside the hips' subtree is allowed.
        let map = crate::skeleton::BoneMap::resolve(&got.map, &s).unwrap();
        assert_eq!(map.detached_bones(&s).len(), 2);
    }

    #[test]
    fn feet_under_the_root_on_a_rig_without_hands_are_refused_naming_both() {
        // Quaternius' monsters: the feet hang from the root, and the fingers start
        // from the forearm, each from its own joint (no hand joint): no map drives
        // those feet from the legs either.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            t.retain(|r| !r.0.ends_with("hand"));
            for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                reparent(t, &format!("{side}foot"), "Armature");
                for (finger, z) in [("index", 0.03f32), ("pinky", -0.03), ("thumb", 0.06)] {
                    let (first, second) = (format!("{side}{finger}1"), format!("{side}{finger}2"));
                    t.push(row(&first, &format!("{side}forearm"), [x * 0.72, 1.4, z]));
                    t.push(row(&second, &first, [x * 0.77, 1.4, z]));
                }
            }
        });
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized as a strict VRM humanoid")
        };
        assert!(n.limbs_outside.is_none());
        let (feet, besides) = n
            .reason
            .split_once("; nor is there a map driving those feet from the legs: ")
            .unwrap_or_else(|| panic!("{}", n.reason));
        assert!(feet.contains("driven by IK"), "{}", n.reason);
        assert!(besides.contains("hand"), "{}", n.reason);
    }

    #[test]
    fn a_short_legged_figure_with_feet_under_the_root_is_refused_and_mapped_from_its_legs() {
        // A stylized Quaternius figure: legs end at the knee, the feet hang from the
        // root, and the body above the hips is long (hips 0.55 m, knees 0.31 m, head
        // 1.43 m): the hips stand little above the knees, but well above the feet.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            shift(t, "n_hips", [0.0, -0.45, 0.0]);
            shift(t, "n_spine", [0.0, 0.35, 0.0]);
            // Each foot hangs from a control at the floor, behind the ankle.
            for (side, x) in [("L_", 0.1f32), ("R_", -0.1)] {
                shift(t, &format!("{side}shin"), [0.0, 0.26, 0.0]);
                let control = format!("{side}FootControl");
                t.push(row(&control, "Armature", [x, 0.0, -0.09]));
                reparent(t, &format!("{side}foot"), &control);
                t.push(row(&format!("{side}pole"), "Armature", [x, 0.31, 0.4]));
            }
        });
        let got = limbs_outside(&s);
        let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
        assert_eq!(bone(B::LeftLowerLeg), Some("L_shin"));
        assert_eq!(bone(B::LeftFoot), Some("L_foot"));
        assert_eq!(bone(B::RightFoot), Some("R_foot"));
        assert!(
            got.notes
                .iter()
                .any(|n| n.contains("the foot `R_foot` hangs from `R_FootControl`")),
            "{:?}",
            got.notes
        );
    }

    #[test]
    fn a_foot_behind_a_long_shin_under_a_short_thigh_is_the_leg_s_foot() {
        // RobotExpressive's rig on a human body: the hips joint sits low, so the
        // thigh drops 0.38 m to the knee and the shin 0.54 m more; the IK foot under
        // the root stands 0.15 m behind the knee in the bind pose (a third of the
        // thigh's drop is 0.127 m, of the shin's 0.18 m).
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for side in ["L_", "R_"] {
                shift(t, &format!("{side}shin"), [0.0, 0.12, 0.0]);
                reparent(t, &format!("{side}foot"), "Armature");
                shift(t, &format!("{side}foot"), [0.0, -0.12, -0.15]);
            }
        });
        let got = limbs_outside(&s);
        let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
        assert_eq!(bone(B::LeftLowerLeg), Some("L_shin"));
        assert_eq!(bone(B::LeftFoot), Some("L_foot"));
        assert_eq!(bone(B::RightFoot), Some("R_foot"));
    }

    #[test]
    fn an_end_nub_under_the_knee_is_no_foot_when_the_foot_hangs_from_the_root() {
        // FBX2glTF's Quaternius figures: the shin ends in a `LowerLeg.L_end` joint
        // at the IK foot's place, whose own tail (an end node a bone's length on)
        // reaches below the floor.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 0.1f32), ("R_", -0.1)] {
                reparent(t, &format!("{side}foot"), "Armature");
                t.push(row(
                    &format!("{side}shin_end"),
                    &format!("{side}shin"),
                    [x, 0.08, 0.0],
                ));
            }
        });
        let mut joints = s.joints().to_vec();
        for j in joints.iter_mut().filter(|j| j.name.ends_with("shin_end")) {
            j.end = Some(glam::Vec3::new(0.0, -0.3, 0.0));
        }
        let s = Skeleton::new(joints).unwrap();
        let got = limbs_outside(&s);
        let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
        assert_eq!(bone(B::LeftLowerLeg), Some("L_shin"));
        assert_eq!(bone(B::LeftFoot), Some("L_foot"));
        assert_eq!(bone(B::LeftToes), Some("L_toe"));
        assert_eq!(bone(B::RightFoot), Some("R_foot"));
    }

    #[test]
    fn hands_hanging_from_the_root_past_the_forearms_are_refused_and_mapped_from_the_arms() {
        // A Blender cartoon through Sketchfab: each arm a clavicle, an upper arm and a
        // forearm, a leaf; the hand, with two fingers, hangs from an `IK_Arm` control
        // under the armature, at the forearm's end. Read along the arm alone, the
        // clavicle is the upper arm and the forearm the hand.
        let hung = |feet_too: bool| {
            edited(small_table(false, "L_", "R_"), |t| {
                for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                    let clav = format!("{side}clav");
                    t.push(row(&clav, "n_chest", [0.04 * x, 1.4, 0.0]));
                    reparent(t, &format!("{side}arm"), &clav);
                    let control = format!("IK_Arm{side}");
                    t.push(row(&control, "Armature", [0.71 * x, 1.4, 0.0]));
                    reparent(t, &format!("{side}hand"), &control);
                    for (finger, z) in [("index", 0.02f32), ("thumb", 0.05)] {
                        let first = format!("{side}{finger}1");
                        t.push(row(&first, &format!("{side}hand"), [0.76 * x, 1.4, z]));
                        t.push(row(&format!("{side}{finger}2"), &first, [0.8 * x, 1.4, z]));
                    }
                    if feet_too {
                        reparent(t, &format!("{side}foot"), "Armature");
                    }
                }
            })
        };
        for feet_too in [false, true] {
            let s = hung(feet_too);
            let Recognition::NotHumanoid(n) = recognize(&s) else {
                panic!("recognized as a strict VRM humanoid")
            };
            // The first limb outside names the reason: the legs come before the arms.
            let first = match feet_too {
                true => "the foot `L_foot` hangs from `Armature`",
                false => "the hand `L_hand` hangs from `IK_ArmL_`",
            };
            assert!(n.reason.contains(first), "{}", n.reason);
            assert_eq!(n.partial.bones.get(&B::LeftHand), None);
            let got = *n
                .limbs_outside
                .unwrap_or_else(|| panic!("no map with the hands driven from the arms"));
            let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
            assert_eq!(bone(B::LeftShoulder), Some("L_clav"));
            assert_eq!(bone(B::LeftUpperArm), Some("L_arm"));
            assert_eq!(bone(B::LeftLowerArm), Some("L_forearm"));
            assert_eq!(bone(B::LeftHand), Some("L_hand"));
            assert_eq!(bone(B::RightHand), Some("R_hand"));
            assert_eq!(bone(B::LeftIndexProximal), Some("L_index1"));
            assert_eq!(bone(B::RightFoot), Some("R_foot"));
            assert!(
                got.notes.iter().any(|n| n.contains(
                    "the hand `R_hand` hangs from `IK_ArmR_`, outside the arm (a hand driven by IK)"
                )),
                "{:?}",
                got.notes
            );
            let map = crate::skeleton::BoneMap::resolve(&got.map, &s).unwrap();
            let held: Vec<B> = map.detached_bones(&s).iter().map(|d| d.bone).collect();
            assert!(held.contains(&B::LeftHand) && held.contains(&B::RightHand));
            assert_eq!(held.contains(&B::LeftFoot), feet_too);
        }
        // An IK target at the wrist of a hand the arm holds is no hand past the arm.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                t.push(row(
                    &format!("{side}wrist_goal"),
                    "Armature",
                    [0.71 * x, 1.4, 0.0],
                ));
            }
        });
        let Recognition::Humanoid(r) = recognize(&s) else {
            panic!("refused")
        };
        assert_eq!(
            r.map.bones.get(&B::LeftHand).map(String::as_str),
            Some("L_hand")
        );
    }

    #[test]
    fn arms_ending_at_the_forearm_are_refused_for_their_hands() {
        // A robot whose arms are an upper arm and a forearm (no hand joint), on one
        // side or both.
        for sides in [vec!["L_"], vec!["L_", "R_"]] {
            let s = edited(small_table(false, "L_", "R_"), |t| {
                t.retain(|r| !sides.iter().any(|side| r.0 == format!("{side}hand")));
            });
            let Recognition::NotHumanoid(n) = recognize(&s) else {
                panic!("recognized")
            };
            assert!(n.reason.contains("no hands"), "{}", n.reason);
            assert!(
                n.reason.contains("`L_arm` ends at `L_forearm`"),
                "{}",
                n.reason
            );
            assert_eq!(
                n.reason.contains("`R_arm` ends at `R_forearm`"),
                sides.len() == 2,
                "{}",
                n.reason
            );
        }
    }

    #[test]
    fn a_clavicle_then_an_arm_ending_at_the_elbow_has_no_hand() {
        // A physics character (DeepMimic-like): a clavicle from the middle of the
        // chest, then the shoulder joint and the elbow, a leaf. Three joints out, but
        // the first is no upper arm (it starts in the chest's middle): no hand. Also
        // with the spine leaning to one side off the pelvis (a posed frame).
        for lean in [0.0f32, 0.04] {
            let s = edited(small_table(false, "L_", "R_"), |t| {
                t.retain(|r| !r.0.ends_with("hand"));
                for r in t.iter_mut() {
                    if ["n_chest", "n_neck", "n_head", "n_top"].contains(&r.0.as_str()) {
                        r.2[0] += lean;
                    }
                }
                for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                    let clav = format!("{side}clav");
                    t.push(row(&clav, "n_chest", [lean + 0.001 * x, 1.4, 0.0]));
                    for r in t.iter_mut() {
                        if r.0 == format!("{side}arm") {
                            r.1 = Some(clav.clone());
                            r.2 = [lean + 0.12 * x, 1.4, 0.0];
                        } else if r.0 == format!("{side}forearm") {
                            r.2 = [lean + 0.36 * x, 1.4, 0.0];
                        }
                    }
                }
            });
            let Recognition::NotHumanoid(n) = recognize(&s) else {
                panic!("recognized, lean {lean}")
            };
            assert!(n.reason.contains("no hands"), "{}", n.reason);
            assert!(
                n.reason.contains("`L_arm` ends at `L_forearm`"),
                "{}",
                n.reason
            );
        }
        // With a hand past the elbow, the clavicle is the shoulder.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            t.push(row("L_clav", "n_chest", [0.001, 1.4, 0.0]));
            for r in t.iter_mut() {
                if r.0 == "L_arm" {
                    r.1 = Some("L_clav".to_owned());
                }
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftShoulder), "L_clav");
        assert_eq!(joint_of(&r, B::LeftUpperArm), "L_arm");
        assert_eq!(joint_of(&r, B::LeftHand), "L_hand");
    }

    #[test]
    fn a_spine_named_as_controls_that_carries_the_body_is_the_spine() {
        // A Maya FK rig exported as is (anim_utils' custom skeleton): the spine
        // joints are `FK_back1_jnt`..`FK_back3_jnt`, the arms and the head hang from
        // them, and no other spine exists. A chain of controls beside the body still
        // is no spine, however high it reaches.
        let renamed = [
            ("n_spine", "FK_back1_jnt"),
            ("n_chest", "FK_back2_jnt"),
            ("n_neck", "FK_back3_jnt"),
        ];
        let name = |n: &str| {
            renamed
                .iter()
                .find(|(from, _)| *from == n)
                .map_or(n.to_owned(), |(_, to)| (*to).to_owned())
        };
        for control_beside in [false, true] {
            let s = edited(small_table(false, "L_", "R_"), |t| {
                for r in t.iter_mut() {
                    r.0 = name(&r.0);
                    r.1 = r.1.as_deref().map(name);
                }
                if control_beside {
                    t.push(row("torso_ctrl", "n_hips", [0.0, 1.2, -0.2]));
                    t.push(row("chest_ik_ctrl", "torso_ctrl", [0.0, 1.6, -0.2]));
                    t.push(row("head_ik_ctrl", "chest_ik_ctrl", [0.0, 1.95, -0.2]));
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::Hips), "n_hips", "{control_beside}");
            assert_eq!(joint_of(&r, B::Spine), "FK_back1_jnt", "{control_beside}");
            assert_eq!(joint_of(&r, B::Chest), "FK_back2_jnt", "{control_beside}");
            assert_eq!(joint_of(&r, B::Neck), "FK_back3_jnt", "{control_beside}");
            assert_eq!(joint_of(&r, B::Head), "n_head", "{control_beside}");
            assert_eq!(joint_of(&r, B::LeftHand), "L_hand", "{control_beside}");
        }
    }

    #[test]
    fn a_heel_control_beside_the_foot_is_not_the_foot() {
        // Blender control rigs: the shin holds the foot and, beside it at the
        // ankle, a heel control reaching back and below the sole. The line down the
        // leg follows the lowest; the foot is the one reaching ahead, so the toes,
        // the front and the sides come from it.
        for facing_minus_z in [false, true] {
            let z = if facing_minus_z { -1.0 } else { 1.0 };
            let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                for (side, x) in [("a_", 0.1f32), ("b_", -0.1)] {
                    let (shin, back) = (format!("{side}shin"), format!("{side}back"));
                    t.push(row(&back, &shin, [x * z, 0.07, 0.0]));
                    t.push(row(
                        &format!("{side}back2"),
                        &back,
                        [x * z, -0.08, -0.09 * z],
                    ));
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::LeftFoot), "a_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightFoot), "b_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::LeftToes), "a_toe", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::LeftHand), "a_hand", "{facing_minus_z}");
        }
    }

    #[test]
    fn the_toes_reach_ahead_and_a_lower_heel_is_not_them() {
        let s = edited(small_table(true, "a_", "b_"), |t| {
            t.push(row("a_heel.02", "a_foot", [-0.1, -0.01, 0.05]));
            t.push(row("b_heel.02", "b_foot", [0.1, -0.01, 0.05]));
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftToes), "a_toe");
        assert_eq!(joint_of(&r, B::RightToes), "b_toe");
    }

    /// `small_table` with each foot's toes replaced by a joint `name` 8 cm below and
    /// `behind` metres behind the ankle, its End Site `reach` metres ahead of it
    /// (Poser's heel: `LeftFootHeel`); `keep_toes` leaves the toes beside it.
    fn foot_child_table(
        facing_minus_z: bool,
        name: &str,
        behind: f32,
        reach: f32,
        keep_toes: bool,
    ) -> Skeleton {
        let z = if facing_minus_z { -1.0 } else { 1.0 };
        let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
            if !keep_toes {
                t.retain(|r| !r.0.ends_with("toe"));
            }
            for (side, x) in [("a_", 0.1f32), ("b_", -0.1)] {
                let foot = format!("{side}foot");
                t.push(row(
                    &format!("{side}{name}"),
                    &foot,
                    [x * z, 0.0, -behind * z],
                ));
            }
        });
        let mut joints = s.joints().to_vec();
        for j in joints.iter_mut().filter(|j| j.name.ends_with(name)) {
            j.end = Some(glam::Vec3::new(0.0, 0.0, reach * z));
        }
        Skeleton::new(joints).unwrap()
    }

    #[test]
    fn a_heel_joint_carrying_the_forefoot_is_not_the_toes() {
        // Poser's walk: each foot's only child a heel 8 cm below and 4 cm behind the
        // ankle, its End Site 17 cm ahead of it, 13 cm ahead of the ankle: the foot
        // has no toes joint. Beside real toes, the toes are them.
        for facing_minus_z in [false, true] {
            let r = recognize(&foot_child_table(facing_minus_z, "heel", 0.04, 0.17, false))
                .into_humanoid()
                .unwrap();
            assert_eq!(joint_of(&r, B::LeftFoot), "a_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightFoot), "b_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::LeftUpperLeg), "a_thigh", "{facing_minus_z}");
            assert!(!r.map.bones.contains_key(&B::LeftToes), "{facing_minus_z}");
            assert!(!r.map.bones.contains_key(&B::RightToes), "{facing_minus_z}");
            let r = recognize(&foot_child_table(facing_minus_z, "heel", 0.04, 0.17, true))
                .into_humanoid()
                .unwrap();
            assert_eq!(joint_of(&r, B::LeftToes), "a_toe", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightToes), "b_toe", "{facing_minus_z}");
        }
    }

    #[test]
    fn a_twist_chain_whose_end_nubs_reach_below_the_foot_is_no_leg() {
        // Character Creator through Blender: beside the foot, the calf's twist chain
        // ends at the ankle's place, and the end nub Blender adds after it reaches a
        // bone's length below the floor. The leg goes on down the foot, not the nubs.
        for facing_minus_z in [false, true] {
            let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                let z = if facing_minus_z { -1.0 } else { 1.0 };
                for (side, x) in [("a_", 0.1f32), ("b_", -0.1)] {
                    let x = x * z;
                    let chain = [
                        ("CalfTwist01", "shin", 0.5),
                        ("CalfTwist02", "CalfTwist01", 0.29),
                        ("CalfTwist02_end", "CalfTwist02", 0.08),
                        ("CalfTwist02_end_end", "CalfTwist02_end", -0.13),
                    ];
                    for (name, parent, y) in chain {
                        let (name, parent) = (format!("{side}{name}"), format!("{side}{parent}"));
                        t.push(row(&name, &parent, [x, y, 0.0]));
                    }
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::LeftLowerLeg), "a_shin", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::LeftFoot), "a_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightFoot), "b_foot", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightToes), "b_toe", "{facing_minus_z}");
        }
    }

    #[test]
    fn a_share_bone_beside_the_toes_is_no_toes() {
        // Character Creator's `ToeBaseShareBone`, a skinning helper at the place of
        // `ToeBase`, its end nub reaching further ahead than the toes.
        for facing_minus_z in [false, true] {
            let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                let z = if facing_minus_z { -1.0 } else { 1.0 };
                for (side, x) in [("a_", 0.1f32), ("b_", -0.1)] {
                    let x = x * z;
                    let share = format!("{side}ToeBaseShareBone");
                    t.push(row(&share, &format!("{side}foot"), [x, 0.0, 0.12 * z]));
                    t.push(row(&format!("{share}_end"), &share, [x, 0.0, 0.2 * z]));
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::LeftToes), "a_toe", "{facing_minus_z}");
            assert_eq!(joint_of(&r, B::RightToes), "b_toe", "{facing_minus_z}");
        }
    }

    #[test]
    fn toes_a_little_behind_the_ankle_of_a_foot_pointing_down_stay_the_toes() {
        // A rest taken from a clip's frame, the foot pointing straight down: the
        // toes 8 cm below and 1 cm behind the ankle, the toe tip 4 cm ahead of them,
        // or 10 cm ahead with the toes bent up.
        for facing_minus_z in [false, true] {
            for (behind, reach) in [(0.01, 0.04), (0.01, 0.10)] {
                let s = foot_child_table(facing_minus_z, "ball", behind, reach, false);
                let r = recognize(&s).into_humanoid().unwrap();
                let case = format!("{facing_minus_z} {behind} {reach}");
                assert_eq!(joint_of(&r, B::LeftToes), "a_ball", "{case}");
                assert_eq!(joint_of(&r, B::RightToes), "b_ball", "{case}");
            }
        }
    }

    #[test]
    fn a_sole_joint_under_the_ankle_is_passed_for_the_toes_ahead_of_it() {
        // Vicon / MotionBuilder: `LeftForeFoot` 4 cm straight below the ankle,
        // `LeftToeBase` under it at the ball of the foot.
        for facing_minus_z in [false, true] {
            let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                let z = if facing_minus_z { -1.0 } else { 1.0 };
                for (side, x) in [("a_", 0.1f32), ("b_", -0.1)] {
                    let x = x * z;
                    let foot = t
                        .iter()
                        .position(|r| r.0 == format!("{side}foot"))
                        .unwrap_or(0);
                    t.insert(
                        foot + 1,
                        row(
                            &format!("{side}forefoot"),
                            &format!("{side}foot"),
                            [x, 0.04, 0.0],
                        ),
                    );
                    reparent(t, &format!("{side}toe"), &format!("{side}forefoot"));
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::LeftToes), "a_toe");
            assert_eq!(joint_of(&r, B::RightToes), "b_toe");
            assert_eq!(joint_of(&r, B::LeftFoot), "a_foot");
        }
    }

    #[test]
    fn legs_splayed_from_hip_joints_near_the_midline_keep_their_thighs() {
        // CMU skeletons from ASF files: hip joints 7 cm out, the femurs 20 degrees
        // out from there, so the knees are 23 cm out and the feet 39 cm.
        for facing_minus_z in [false, true] {
            let s = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                let turn = if facing_minus_z { -1.0 } else { 1.0 };
                for (side, x) in [("a_", 1.0f32), ("b_", -1.0)] {
                    let x = x * turn;
                    shift(t, &format!("{side}thigh"), [-0.03 * x, 0.0, 0.0]);
                    shift(t, &format!("{side}shin"), [0.16 * x, 0.0, 0.0]);
                    shift(t, &format!("{side}foot"), [0.16 * x, 0.0, 0.0]);
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::LeftUpperLeg), "a_thigh");
            assert_eq!(joint_of(&r, B::RightUpperLeg), "b_thigh");
            assert_eq!(joint_of(&r, B::LeftLowerLeg), "a_shin");
            assert_eq!(joint_of(&r, B::LeftFoot), "a_foot");
            assert_eq!(joint_of(&r, B::LeftUpperArm), "a_arm");
            assert_eq!(joint_of(&r, B::RightHand), "b_hand");
        }
    }

    #[test]
    fn a_short_helper_bent_off_the_thigh_is_not_the_thigh() {
        // MocapNET: `lbuttock` 3 cm above and behind `lhip`, which is the thigh.
        let s = edited(small_table(false, "l", "r"), |t| {
            let hips = t.iter().position(|r| r.0 == "n_hips").unwrap_or(0);
            for (side, x) in [("l", 0.1f32), ("r", -0.1)] {
                // Parents first: right after the hips.
                t.insert(
                    hips + 1,
                    row(&format!("{side}buttock"), "n_hips", [x, 0.97, 0.025]),
                );
                reparent(t, &format!("{side}thigh"), &format!("{side}buttock"));
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftUpperLeg), "lthigh");
        assert_eq!(joint_of(&r, B::RightUpperLeg), "rthigh");
    }

    #[test]
    fn a_posed_rest_with_one_knee_swung_out_keeps_its_thighs() {
        // One leg kicked out to the side (a frame of a dance as the rest): the
        // knees' midpoint is far off the pelvis.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            shift(t, "L_shin", [0.25, 0.0, 0.0]);
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftUpperLeg), "L_thigh");
        assert_eq!(joint_of(&r, B::RightUpperLeg), "R_thigh");
        assert_eq!(joint_of(&r, B::LeftLowerLeg), "L_shin");
    }

    #[test]
    fn end_nubs_are_never_head_or_toes() {
        for nub in ["head_end", "Head_fin", "HeadTop_End", "head_nub"] {
            let s = edited(small_table(false, "L_", "R_"), |t| {
                for r in t.iter_mut() {
                    if r.0 == "n_top" {
                        r.0 = nub.to_owned();
                    }
                }
                t.push(row("L_toe_fin", "L_toe", [0.1, 0.0, 0.2]));
                t.push(row("R_toe_fin", "R_toe", [-0.1, 0.0, 0.2]));
            });
            let r = recognize(&s).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::Head), "n_head", "{nub}");
            assert_eq!(joint_of(&r, B::LeftToes), "L_toe", "{nub}");
        }
    }

    #[test]
    fn an_end_nub_resting_on_the_toes_leaves_them_the_toes() {
        // A nub the file placed nowhere rests on its joint (`formats::gltf::skin`):
        // the walk down joints in the same place stops at the toes, not on the nub.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            t.push(row("L_toe_end", "L_toe", [0.1, 0.0, 0.12]));
            t.push(row("R_toe_end", "R_toe", [-0.1, 0.0, 0.12]));
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftToes), "L_toe");
        assert_eq!(joint_of(&r, B::RightToes), "R_toe");
    }

    #[test]
    fn pivots_named_like_the_toes_above_them_lead_down_to_the_toes() {
        // An FBX rig through Assimp: `X_$AssimpFbx$_Translation` and `_PreRotation`
        // pivots above every joint, in its place (the second a helper by its name).
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 0.1), ("R_", -0.1)] {
                let toe = format!("{side}toe");
                let translation = format!("{toe}_$AssimpFbx$_Translation");
                let pre_rotation = format!("{toe}_$AssimpFbx$_PreRotation");
                t.push(row(&translation, &format!("{side}foot"), [x, 0.0, 0.12]));
                t.push(row(&pre_rotation, &translation, [x, 0.0, 0.12]));
                reparent(t, &toe, &pre_rotation);
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftToes), "L_toe");
        assert_eq!(joint_of(&r, B::RightToes), "R_toe");
    }

    #[test]
    fn end_nubs_longer_than_the_figure_leave_its_height_alone() {
        // A re-export writing its nubs in other units than its bones: the head's `_end`
        // and `_end_end` nubs twice the figure's height above it each.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for r in t.iter_mut() {
                if r.0 == "n_top" {
                    *r = row("n_head_end", "n_head", [0.0, 5.0, 0.0]);
                }
            }
            t.push(row("n_head_end_end", "n_head_end", [0.0, 8.5, 0.0]));
            t.push(row("L_toe_end", "L_toe", [0.1, 0.0, 3.0]));
            t.push(row("R_toe_end", "R_toe", [-0.1, 0.0, 3.0]));
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::Hips), "n_hips");
        assert_eq!(joint_of(&r, B::Head), "n_head");
        assert_eq!(joint_of(&r, B::LeftToes), "L_toe");
    }

    #[test]
    fn legs_hanging_from_a_root_beside_the_hips_are_refused_and_mapped_from_the_hips() {
        // Quaternius' modular women: the legs hang from the root beside the hips.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for side in ["L_", "R_"] {
                reparent(t, &format!("{side}thigh"), "Armature");
            }
        });
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized as a strict VRM humanoid")
        };
        assert!(
            n.reason.contains("beside the body `n_hips`"),
            "{}",
            n.reason
        );
        let got = *n
            .limbs_outside
            .expect("a map with the legs driven from the hips");
        let bone = |b: B| got.map.bones.get(&b).map(String::as_str);
        assert_eq!(bone(B::Hips), Some("n_hips"));
        assert_eq!(bone(B::LeftUpperLeg), Some("L_thigh"));
        assert_eq!(bone(B::RightLowerLeg), Some("R_shin"));
        assert_eq!(bone(B::LeftToes), Some("L_toe"));
        assert!(
            got.notes
                .iter()
                .any(|n| n.contains("hang from `Armature`, beside the hips `n_hips`")),
            "{:?}",
            got.notes
        );
        let map = crate::skeleton::BoneMap::resolve(&got.map, &s).unwrap();
        let held: Vec<B> = map.detached_bones(&s).iter().map(|d| d.bone).collect();
        assert_eq!(held, [B::LeftUpperLeg, B::RightUpperLeg]);
    }

    #[test]
    fn legs_hanging_from_a_root_beside_the_hips_are_named_and_refused() {
        // Quaternius' modular women: `Root` at the floor holds the hips (and the
        // body above them) and, beside them, both legs.
        let mut table: Vec<(String, Option<String>, [f32; 3])> = [
            ("Root", None, [0.0, 0.0, 0.0]),
            ("Hips", Some("Root"), [0.0, 1.0, 0.0]),
            ("Abdomen", Some("Hips"), [0.0, 1.15, 0.0]),
            ("Chest", Some("Abdomen"), [0.0, 1.35, 0.0]),
            ("Neck", Some("Chest"), [0.0, 1.5, 0.0]),
            ("Head", Some("Neck"), [0.0, 1.6, 0.0]),
        ]
        .into_iter()
        .map(|(n, p, x)| (n.to_owned(), p.map(str::to_owned), x))
        .collect();
        for (side, x) in [("L", 1.0f32), ("R", -1.0)] {
            let limbs = [
                ("Shoulder", "Chest", [0.05, 1.42, 0.0]),
                ("UpperArm", "Shoulder", [0.15, 1.42, 0.0]),
                ("LowerArm", "UpperArm", [0.42, 1.42, 0.0]),
                ("Hand", "LowerArm", [0.66, 1.42, 0.0]),
                ("UpperLeg", "Root", [0.1, 0.97, 0.0]),
                ("LowerLeg", "UpperLeg", [0.1, 0.52, 0.0]),
                ("Foot", "LowerLeg", [0.1, 0.08, 0.0]),
            ];
            for (name, parent, [px, py, pz]) in limbs {
                let parent = if parent == "Root" {
                    parent.to_owned()
                } else {
                    format!("{parent}.{side}")
                };
                let parent = if name == "Shoulder" {
                    "Chest".to_owned()
                } else {
                    parent
                };
                table.push((format!("{name}.{side}"), Some(parent), [x * px, py, pz]));
            }
        }
        let table: Vec<(&str, Option<&str>, [f32; 3])> = table
            .iter()
            .map(|(n, p, x)| (n.as_str(), p.as_deref(), *x))
            .collect();
        let Recognition::NotHumanoid(n) = recognize(&skeleton(&table)) else {
            panic!("legs beside the hips recognized")
        };
        assert!(
            n.reason.starts_with(
                "the legs `UpperLeg.L` and `UpperLeg.R` hang from `Root` at their feet, beside \
                 the body `Hips`"
            ),
            "{}",
            n.reason
        );
    }

    #[test]
    fn arms_dropping_from_the_chest_on_a_rig_whose_legs_have_no_feet_are_no_legs() {
        // A big-headed cartoon figure: short legs of a thigh and a shin (no foot) below
        // the hips, and arms hanging from the chest in a shallow slope, beside a head
        // rising high. The arms drop to the chest's level as legs beside a body do, but
        // the legs below reach far lower: the figure's legs end at the knee.
        let body = [
            ("rootJoint", "", [0.0, 0.0, 0.0]),
            ("spine", "rootJoint", [0.0, 0.17, 0.0]),
            ("spine.001", "spine", [0.0, 0.22, 0.0]),
            ("spine.003", "spine.001", [0.0, 0.33, 0.0]),
            ("Head", "spine.003", [0.0, 0.39, 0.0]),
            ("Ear.L", "Head", [0.12, 0.72, 0.0]),
            ("Ear.R", "Head", [-0.12, 0.72, 0.0]),
            ("tail", "spine", [0.0, 0.22, -0.1]),
            ("tail.001", "tail", [0.0, 0.21, -0.17]),
        ];
        let limb = [
            ("shoulder", "spine.003", [0.004, 0.376, 0.015]),
            ("upper_arm", "shoulder", [0.107, 0.336, 0.008]),
            ("forearm", "upper_arm", [0.181, 0.322, 0.003]),
            ("hand", "forearm", [0.237, 0.315, 0.004]),
            ("thigh", "spine", [0.065, 0.16, 0.0]),
            ("shin", "thigh", [0.065, 0.106, 0.006]),
        ];
        let cat = with_limbs_named(
            &body,
            |side, name| format!("{name}.{}", ["L", "R"][side]),
            &limb,
        );
        let Recognition::NotHumanoid(n) = recognize(&cat) else {
            panic!("legs without feet recognized")
        };
        assert!(
            n.reason
                .starts_with("the legs `thigh.L` and `thigh.R` below `spine` end at the knee"),
            "{}",
            n.reason
        );
    }

    #[test]
    fn a_rig_without_hierarchy_is_refused_as_such() {
        // Every body joint a direct child of `Armature` (an exporter that dropped the
        // parent links), beside a control chain of hips, spine and legs with no arms.
        let flat = |control: bool| {
            edited(small_table(false, "L_", "R_"), |t| {
                for row in t.iter_mut().skip(2) {
                    row.1 = Some("Armature".to_owned());
                }
                if control {
                    let chain = [
                        ("TGT_hips", "Armature", [0.0, 1.0, 0.0]),
                        ("TGT_spine", "TGT_hips", [0.0, 1.3, 0.0]),
                        ("TGT_L_thigh", "TGT_hips", [0.1, 0.95, 0.0]),
                        ("TGT_L_shin", "TGT_L_thigh", [0.1, 0.5, 0.0]),
                        ("TGT_R_thigh", "TGT_hips", [-0.1, 0.95, 0.0]),
                        ("TGT_R_shin", "TGT_R_thigh", [-0.1, 0.5, 0.0]),
                    ];
                    for (name, parent, pos) in chain {
                        t.push((name.to_owned(), Some(parent.to_owned()), pos));
                    }
                }
            })
        };
        for (control, joints) in [(false, 22), (true, 28)] {
            let Recognition::NotHumanoid(n) = recognize(&flat(control)) else {
                panic!("a flat rig recognized")
            };
            let expected = format!(
                "the joints have no hierarchy: 20 of the {joints} joints hang from `Armature` \
                 directly"
            );
            assert!(n.reason.starts_with(&expected), "{}", n.reason);
        }
        // A face of many leaf bones under the head is no flat rig.
        let faced = edited(small_table(false, "L_", "R_"), |t| {
            t.retain(|r| !r.0.ends_with("arm") && !r.0.ends_with("hand"));
            for k in 0..20 {
                let x = k as f32 * 0.005 - 0.05;
                t.push((
                    format!("face{k}"),
                    Some("n_head".to_owned()),
                    [x, 1.6, 0.08],
                ));
            }
        });
        let Recognition::NotHumanoid(n) = recognize(&faced) else {
            panic!("a rig without arms recognized")
        };
        assert!(n.reason.contains("no arms"), "{}", n.reason);
    }

    #[test]
    fn a_big_headed_figure_with_hips_under_a_quarter_of_its_height_is_recognized() {
        // A chibi figure (Maya's, converted by Sketchfab): the head's top 4.4 m above
        // the floor, the hips 1 m, 23% of the height. It stands as drawn, facing +Z
        // or turned to -Z: mapped from its rest, not from a frame of its clips.
        for facing_minus_z in [false, true] {
            let chibi = edited(small_table(facing_minus_z, "a_", "b_"), |t| {
                if let Some(r) = t.iter_mut().find(|r| r.0 == "n_top") {
                    r.2[1] = 4.4;
                }
            });
            let r = recognize(&chibi).into_humanoid().unwrap();
            assert_eq!(joint_of(&r, B::Hips), "n_hips");
            assert_eq!(joint_of(&r, B::LeftUpperLeg), "a_thigh");
            assert_eq!(joint_of(&r, B::LeftUpperArm), "a_arm");
            assert_eq!(joint_of(&r, B::RightHand), "b_hand");
        }
    }

    #[test]
    fn an_attachment_point_above_a_big_head_is_no_part_of_the_figures_height() {
        // A chibi (a Blender game rig) whose hips stand at 23% of its head's top,
        // with a `hat_slot` leaf 0.9 m above it, where the hat sits: the slot is
        // no part of the figure, whose hips stand over a fifth of it. A joint there
        // named as a body part still makes the figure taller, and the hips too low.
        for (name, humanoid) in [("hat_slot", true), ("n_crown", false)] {
            let chibi = edited(small_table(false, "a_", "b_"), |t| {
                if let Some(r) = t.iter_mut().find(|r| r.0 == "n_top") {
                    r.2[1] = 4.4;
                }
                t.push((name.to_owned(), Some("n_head".to_owned()), [0.0, 5.3, 0.0]));
            });
            match recognize(&chibi) {
                Recognition::Humanoid(r) => {
                    assert!(humanoid, "{name}: recognized");
                    assert_eq!(joint_of(&r, B::Hips), "n_hips");
                    assert_eq!(joint_of(&r, B::LeftUpperLeg), "a_thigh");
                    assert_eq!(joint_of(&r, B::Head), "n_head");
                }
                Recognition::NotHumanoid(n) => assert!(!humanoid, "{name}: {}", n.reason),
            }
        }
    }

    #[test]
    fn legs_that_end_at_the_knee_are_refused_for_their_missing_feet() {
        // A Blender metarig figure: thigh and shin, nothing below the knee; with a
        // tall head (a hat, a face rig) the hips stand under a quarter of the height
        // above the knees.
        for top in [1.78, 2.6] {
            let kneeless = edited(small_table(false, "L_", "R_"), |t| {
                t.retain(|r| !r.0.ends_with("foot") && !r.0.ends_with("toe"));
                if let Some(r) = t.iter_mut().find(|r| r.0 == "n_top") {
                    r.2[1] = top;
                }
            });
            let Recognition::NotHumanoid(n) = recognize(&kneeless) else {
                panic!("legs without feet recognized")
            };
            assert!(n.reason.contains("at the knee (`L_shin`"), "{}", n.reason);
        }
    }

    #[test]
    fn legs_under_a_body_too_short_for_a_torso_are_refused_naming_them() {
        // A Kinect v1 recording's 13 joints with no head, its shoulders' joint 17 cm
        // above the hips over legs 1.1 m long: the legs are there, the body is not.
        let headless = skeleton(&[
            ("Hip", None, [0.0, 1.14, 0.0]),
            ("ShoulderCenter", Some("Hip"), [0.0, 1.30, 0.0]),
            ("ShoulderLeft", Some("ShoulderCenter"), [0.19, 1.30, 0.0]),
            ("ElbowLeft", Some("ShoulderLeft"), [0.29, 1.07, 0.0]),
            ("WristLeft", Some("ElbowLeft"), [0.37, 0.86, 0.0]),
            ("ShoulderRight", Some("ShoulderCenter"), [-0.19, 1.30, 0.0]),
            ("ElbowRight", Some("ShoulderRight"), [-0.29, 1.07, 0.0]),
            ("WristRight", Some("ElbowRight"), [-0.37, 0.86, 0.0]),
            ("HipLeft", Some("Hip"), [0.15, 0.97, 0.0]),
            ("KneeLeft", Some("HipLeft"), [0.15, 0.5, 0.0]),
            ("FootLeft", Some("KneeLeft"), [0.15, 0.03, 0.0]),
            ("HipRight", Some("Hip"), [-0.15, 0.97, 0.0]),
            ("KneeRight", Some("HipRight"), [-0.15, 0.5, 0.0]),
            ("FootRight", Some("KneeRight"), [-0.15, 0.03, 0.0]),
        ]);
        let Recognition::NotHumanoid(n) = recognize(&headless) else {
            panic!("a headless figure recognized")
        };
        assert!(
            n.reason.starts_with("`Hip` branches into two legs")
                && n.reason.contains(
                    "nothing above it rises into a body: `ShoulderCenter` reaches 14.41%"
                ),
            "{}",
            n.reason
        );
        // An arm hanging from the elbow, the hand's fingers down to the lowest point
        // and its thumb a little up: fingers are no legs.
        let arm = skeleton(&[
            ("elbow", None, [0.0, 1.0, 0.0]),
            ("forearm", Some("elbow"), [0.0, 0.75, 0.0]),
            ("hand", Some("forearm"), [0.0, 0.5, 0.0]),
            ("index1", Some("hand"), [0.02, 0.4, 0.0]),
            ("index2", Some("index1"), [0.02, 0.36, 0.0]),
            ("index3", Some("index2"), [0.02, 0.33, 0.0]),
            ("ring1", Some("hand"), [-0.02, 0.4, 0.0]),
            ("ring2", Some("ring1"), [-0.02, 0.36, 0.0]),
            ("ring3", Some("ring2"), [-0.02, 0.33, 0.0]),
            ("thumb1", Some("hand"), [0.03, 0.49, 0.02]),
        ]);
        let Recognition::NotHumanoid(n) = recognize(&arm) else {
            panic!("an arm recognized")
        };
        assert!(
            !n.reason.contains("branches into two legs (`"),
            "{}",
            n.reason
        );
    }

    #[test]
    fn non_humanoids_are_refused_with_the_reason() {
        // Legs alone: hips, two legs and a waist, no arms.
        let legs = edited(small_table(false, "L_", "R_"), |t| {
            t.retain(|r| {
                !["n_neck", "n_head", "n_top"].contains(&r.0.as_str())
                    && !r.0.ends_with("arm")
                    && !r.0.ends_with("hand")
            });
        });
        let Recognition::NotHumanoid(n) = recognize(&legs) else {
            panic!("legs alone recognized")
        };
        assert!(n.reason.contains("no arms"), "{}", n.reason);
        // A four-joint chain.
        let chain = skeleton(&[
            ("base", None, [0.0, 0.0, 0.0]),
            ("child1", Some("base"), [0.0, 1.0, 0.0]),
            ("child2", Some("child1"), [0.0, 2.0, 0.0]),
            ("child3", Some("child2"), [0.0, 3.0, 0.0]),
        ]);
        let Recognition::NotHumanoid(n) = recognize(&chain) else {
            panic!("a chain recognized")
        };
        assert!(
            n.reason.contains("no joint branches into two legs"),
            "{}",
            n.reason
        );
        // A quadruped: four legs to the floor, the front ones no wider than the hind
        // ones, a neck and head out in front.
        let mut fox = vec![
            ("root", None, [0.0, 0.5, 0.0]),
            ("b_Hip", Some("root"), [0.0, 0.5, -0.3]),
            ("b_Spine", Some("b_Hip"), [0.0, 0.52, 0.0]),
            ("b_Chest", Some("b_Spine"), [0.0, 0.54, 0.3]),
            ("b_Neck", Some("b_Chest"), [0.0, 0.65, 0.45]),
            ("b_Head", Some("b_Neck"), [0.0, 0.75, 0.55]),
        ];
        let names: Vec<(String, String, String, String)> = ["Left", "Right"]
            .iter()
            .flat_map(|s| {
                [
                    (
                        format!("b_{s}UpperArm"),
                        format!("b_{s}ForeArm"),
                        format!("b_{s}Hand"),
                        "b_Chest".to_owned(),
                    ),
                    (
                        format!("b_{s}UpLeg"),
                        format!("b_{s}Leg"),
                        format!("b_{s}Foot"),
                        "b_Hip".to_owned(),
                    ),
                ]
            })
            .collect();
        for (k, (a, b, c, parent)) in names.iter().enumerate() {
            let x = if k < 2 { 0.1 } else { -0.1 };
            let z = if k % 2 == 0 { 0.3 } else { -0.3 };
            fox.push((a.as_str(), Some(parent.as_str()), [x, 0.45, z]));
            fox.push((b.as_str(), Some(a.as_str()), [x, 0.25, z]));
            fox.push((c.as_str(), Some(b.as_str()), [x, 0.0, z + 0.05]));
        }
        let fox = skeleton(&fox);
        let Recognition::NotHumanoid(n) = recognize(&fox) else {
            panic!("a fox recognized")
        };
        // Said to be four-legged, the front legs named whatever they are called.
        for part in [
            "four legs, no arms: `b_",
            "`b_LeftUpperArm`",
            "`b_RightUpperArm`",
            "hang from `b_Chest` down to the floor",
            "the hips `b_Hip`",
        ] {
            assert!(n.reason.contains(part), "{part}: {}", n.reason);
        }
    }

    #[test]
    fn a_quadruped_with_front_legs_splayed_wide_is_refused() {
        // A farm dog: the front legs splay out past the hind ones, so they reach out
        // to either side as arms would; the chest is ahead of the hips, not above.
        let mut dog: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("Armature".into(), None, [0.0, 0.0, 0.0]),
            ("Hips".into(), Some("Armature".into()), [0.0, 1.37, -1.51]),
            ("tail".into(), Some("Hips".into()), [0.0, 1.74, -1.88]),
            ("chest".into(), Some("Hips".into()), [0.0, 1.59, 0.95]),
            ("head".into(), Some("chest".into()), [0.0, 2.3, 1.75]),
            ("headend".into(), Some("head".into()), [0.0, 2.1, 2.06]),
        ];
        for (side, x) in [("", 1.0f32), ("R_", -1.0)] {
            let legs = [
                ("backleg", "Hips", [0.26, 1.1, -1.2]),
                ("backleg0", "backleg", [0.41, 0.97, -1.71]),
                ("backleg1", "backleg0", [0.42, 0.55, -2.15]),
                ("backleg2", "backleg1", [0.42, 0.23, -2.29]),
                ("frontleg", "chest", [0.27, 1.43, 0.95]),
                ("frontleg0", "frontleg", [0.51, 0.94, 0.9]),
                ("frontleg1", "frontleg0", [0.5, 0.46, 1.08]),
                ("frontleg2", "frontleg1", [0.65, 0.19, 1.27]),
            ];
            for (name, parent, [px, py, pz]) in legs {
                let parent = if parent.contains("leg") {
                    format!("{side}{parent}")
                } else {
                    parent.to_owned()
                };
                dog.push((format!("{side}{name}"), Some(parent), [x * px, py, pz]));
            }
        }
        let Recognition::NotHumanoid(n) = recognize(&edited(dog, |_| {})) else {
            panic!("a dog recognized")
        };
        // Its hips fail for the spine running forward; its chest, with the front
        // legs below, finds no arms.
        assert!(
            n.reason.contains("runs forward") || n.reason.contains("no arms"),
            "{}",
            n.reason
        );
    }

    /// A row of a joint table: name, parent, position.
    type Row = (String, Option<String>, [f32; 3]);

    /// Four palm bones under a hand, each with three finger joints, all in the arms'
    /// line: `name` (`{f}` the finger), the palms `x` out and `spread` apart, the
    /// finger joints at `fingers` out.
    struct Palms {
        name: &'static str,
        x: f32,
        spread: f32,
        fingers: [f32; 3],
    }

    /// Rigify's twist halves on one side's arm of `small_table` (`arm.001` goes on
    /// along the upper arm and takes the forearm, `forearm.001` takes the hand), and
    /// the rows of the hand's `palms` to add; `x` is the side's sign.
    fn twisted_arm_with_palms(t: &mut [Row], side: &str, x: f32, palms: &Palms) -> Vec<Row> {
        let hand = format!("{side}hand");
        let mut rows = vec![
            row(
                &format!("{side}arm.001"),
                &format!("{side}arm"),
                [x * 0.32, 1.4, 0.0],
            ),
            row(
                &format!("{side}forearm.001"),
                &format!("{side}forearm"),
                [x * 0.585, 1.4, 0.0],
            ),
        ];
        for (f, z) in [
            ("index", 1.5f32),
            ("middle", 0.5),
            ("ring", -0.5),
            ("pinky", -1.5),
        ] {
            let z = z * 2.0 * palms.spread;
            let palm = format!("{side}{}", palms.name.replace("{f}", f));
            rows.push(row(&palm, &hand, [x * palms.x, 1.4, z]));
            let mut parent = palm;
            for (k, dx) in palms.fingers.into_iter().enumerate() {
                let name = format!("{side}{f}_0{}", k + 1);
                rows.push(row(&name, &parent, [x * dx, 1.4, z]));
                parent = name;
            }
        }
        reparent(t, &format!("{side}forearm"), &format!("{side}arm.001"));
        reparent(t, &hand, &format!("{side}forearm.001"));
        rows
    }

    #[test]
    fn twist_segments_are_never_the_upper_arm_and_metacarpals_never_fingers() {
        // Rigify DEF: each arm bone split in two (`DEF-upper_arm.L.001` goes on
        // along the upper arm); UE5: `index_metacarpal_l` before `index_01_l`.
        let palms = Palms {
            name: "{f}_metacarpal",
            x: 0.72,
            spread: 0.01,
            fingers: [0.8, 0.845, 0.875],
        };
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                let mut rows = twisted_arm_with_palms(t, side, x, &palms);
                let mut parent = format!("{side}hand");
                for (k, (dx, dz)) in [(0.73f32, 0.03f32), (0.76, 0.05), (0.79, 0.06)]
                    .into_iter()
                    .enumerate()
                {
                    let name = format!("{side}thumb_0{}", k + 1);
                    rows.push(row(&name, &parent, [x * dx, 1.39, dz]));
                    parent = name;
                }
                t.extend(rows);
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftUpperArm), "L_arm");
        assert_eq!(joint_of(&r, B::LeftLowerArm), "L_forearm");
        assert_eq!(joint_of(&r, B::LeftHand), "L_hand");
        assert_eq!(joint_of(&r, B::RightUpperArm), "R_arm");
        assert_eq!(joint_of(&r, B::LeftIndexProximal), "L_index_01");
        assert_eq!(joint_of(&r, B::LeftLittleDistal), "L_pinky_03");
        assert_eq!(joint_of(&r, B::LeftThumbMetacarpal), "L_thumb_01");
        assert!(
            r.map.bones.values().all(|j| !j.contains("metacarpal")),
            "{:?}",
            r.map
        );
    }

    #[test]
    fn a_dress_hanging_from_a_root_at_the_floor_is_not_named_as_legs() {
        // A figure in a long dress (a Sketchfab gnome): one root at the floor carries
        // the neck, the arms, the dress's bones going down and two single-joint feet.
        let s = skeleton(&[
            ("Root", None, [0.0, 0.06, 0.0]),
            ("Neck", Some("Root"), [0.0, 0.5, 0.06]),
            ("Head", Some("Neck"), [0.0, 0.56, 0.17]),
            ("Shoulder.L", Some("Root"), [0.01, 0.5, 0.06]),
            ("Arm.L", Some("Shoulder.L"), [0.2, 0.41, 0.03]),
            ("Hand.L", Some("Arm.L"), [0.38, 0.29, 0.16]),
            ("Shoulder.R", Some("Root"), [-0.01, 0.5, 0.06]),
            ("Arm.R", Some("Shoulder.R"), [-0.2, 0.41, 0.03]),
            ("Hand.R", Some("Arm.R"), [-0.38, 0.29, 0.16]),
            ("dress01.L", Some("Root"), [0.22, 0.34, -0.03]),
            ("dress02.L", Some("dress01.L"), [0.3, 0.1, -0.09]),
            ("dress01.R", Some("Root"), [-0.22, 0.34, -0.03]),
            ("dress02.R", Some("dress01.R"), [-0.3, 0.1, -0.09]),
            ("Foot.L", Some("Root"), [0.15, 0.08, 0.05]),
            ("Foot.R", Some("Root"), [-0.15, 0.08, 0.05]),
        ]);
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized")
        };
        assert!(!n.reason.contains("dress"), "{}", n.reason);
    }

    /// The refusal of the small table (`turned` to face −Z) with both arms hung from
    /// the hips joint `n_hips`, after `edit`.
    fn refused_with_arms_on_the_hips(
        turned: bool,
        edit: impl FnOnce(&mut Vec<(String, Option<String>, [f32; 3])>),
    ) -> NotHumanoid {
        let s = edited(small_table(turned, "L_", "R_"), |t| {
            reparent(t, "L_arm", "n_hips");
            reparent(t, "R_arm", "n_hips");
            edit(t);
        });
        let Recognition::NotHumanoid(n) = recognize(&s) else {
            panic!("recognized")
        };
        n
    }

    #[test]
    fn arms_hanging_from_the_hips_joint_itself_are_refused_for_the_spine() {
        // A toy or control rig: one root at the pelvis carries the legs, the body and
        // both arms, no spine joint between the hips and the arms.
        let n = refused_with_arms_on_the_hips(false, |_| {});
        assert!(n.reason.contains("no spine"), "{}", n.reason);
        assert!(
            n.reason
                .contains("`L_arm` and `R_arm` hang from the hips `n_hips`")
                || n.reason
                    .contains("`R_arm` and `L_arm` hang from the hips `n_hips`"),
            "{}",
            n.reason
        );
        // Chains beside the legs at the hips' own height (a hand's fingers read as
        // legs, a skirt's bones) are no arms.
        let n = refused_with_arms_on_the_hips(false, |t| {
            shift(t, "L_arm", [0.0, -0.4, 0.0]);
            shift(t, "R_arm", [0.0, -0.4, 0.0]);
        });
        assert!(!n.reason.contains("no spine"), "{}", n.reason);
    }

    #[test]
    fn arms_that_are_all_above_the_hips_are_refused_for_the_spine_not_the_arms() {
        // A toy robot: one body joint at the pelvis carries two-joint legs and two
        // two-joint arms, and nothing else (no torso joint, no head). The arms reach
        // highest, so one of them is taken for the body; the reason is the missing
        // spine, not missing arms.
        for turned in [false, true] {
            let n = refused_with_arms_on_the_hips(turned, |t| {
                t.retain(|r| !["n_spine", "n_chest", "n_neck", "n_head", "n_top"].contains(&&*r.0));
            });
            assert!(n.reason.contains("no spine"), "{}", n.reason);
            assert!(
                n.reason.contains("no joint between the hips and the arms"),
                "{}",
                n.reason
            );
            assert!(!n.reason.contains("no arms"), "{}", n.reason);
            assert!(
                n.reason.contains("`L_arm`") && n.reason.contains("`R_arm`"),
                "{}",
                n.reason
            );
        }
    }

    #[test]
    fn a_stylized_hand_longer_than_the_forearm_is_still_the_hand() {
        // A cartoon Rigify character: twist halves on both arm bones, palm bones under
        // the hand and fingers reaching 0.5 past the wrist (the forearm is 0.25 long,
        // the wrist 0.72 out from the chest).
        let palms = Palms {
            name: "palm_{f}",
            x: 0.77,
            spread: 0.02,
            fingers: [0.95, 1.08, 1.21],
        };
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                let rows = twisted_arm_with_palms(t, side, x, &palms);
                t.extend(rows);
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        for (bone, joint) in [
            (B::LeftUpperArm, "L_arm"),
            (B::LeftLowerArm, "L_forearm"),
            (B::LeftHand, "L_hand"),
            (B::RightLowerArm, "R_forearm"),
            (B::RightHand, "R_hand"),
            (B::LeftIndexProximal, "L_index_01"),
            (B::RightLittleDistal, "R_pinky_03"),
        ] {
            assert_eq!(joint_of(&r, bone), joint, "{bone}");
        }
    }

    #[test]
    fn corrective_chains_at_the_elbow_are_no_hand() {
        // UE5-style correctives: two short chains of two joints beside the forearm's
        // continuation at the elbow, a hand with one finger.
        let s = edited(small_table(false, "L_", "R_"), |t| {
            for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                let elbow = format!("{side}forearm");
                for (name, z) in [("in", 0.02f32), ("out", -0.02)] {
                    let a = format!("{side}forearm_{name}");
                    t.push(row(&a, &elbow, [x * 0.47, 1.4, z]));
                    t.push(row(&format!("{a}_end"), &a, [x * 0.48, 1.4, z]));
                }
                let f1 = format!("{side}finger_01");
                t.push(row(&f1, &format!("{side}hand"), [x * 0.78, 1.4, 0.0]));
                t.push(row(&format!("{side}finger_02"), &f1, [x * 0.83, 1.4, 0.0]));
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        assert_eq!(joint_of(&r, B::LeftLowerArm), "L_forearm");
        assert_eq!(joint_of(&r, B::LeftHand), "L_hand");
        assert_eq!(joint_of(&r, B::RightHand), "R_hand");
    }

    #[test]
    fn a_short_leaf_past_the_wrist_is_the_hands_end_whatever_its_name() {
        // A pose estimator's exporter names every arm joint one place down the arm
        // (`ForeArm` at the wrist) and ends it with a 5 cm `Hand` nub beside the wrist;
        // SMPL's knuckles are such a leaf 8 cm out along the hand.
        let one_place_down = |name: &str| -> String {
            let (side, part) = name.split_at(2);
            let side = if side == "L_" { "Left" } else { "Right" };
            match part {
                "arm" => format!("{side}Shoulder"),
                "forearm" => format!("{side}Arm"),
                "hand" => format!("{side}ForeArm"),
                "end" => format!("{side}Hand"),
                _ => name.to_owned(),
            }
        };
        for (facing_minus_z, end) in [(false, [0.71, 1.4, -0.05]), (true, [0.79, 1.4, 0.0])] {
            let s = edited(small_table(facing_minus_z, "L_", "R_"), |t| {
                for (side, x) in [("L_", 1.0f32), ("R_", -1.0)] {
                    let [ex, ey, ez] = end;
                    let at = if facing_minus_z {
                        [-x * ex, ey, -ez]
                    } else {
                        [x * ex, ey, ez]
                    };
                    t.push(row(&format!("{side}end"), &format!("{side}hand"), at));
                }
                for r in t.iter_mut() {
                    r.0 = one_place_down(&r.0);
                    r.1 = r.1.as_deref().map(one_place_down);
                }
            });
            let r = recognize(&s).into_humanoid().unwrap();
            for (bone, joint) in [
                (B::LeftUpperArm, "LeftShoulder"),
                (B::LeftLowerArm, "LeftArm"),
                (B::LeftHand, "LeftForeArm"),
                (B::RightHand, "RightForeArm"),
            ] {
                assert_eq!(
                    joint_of(&r, bone),
                    joint,
                    "{bone}, facing -Z: {facing_minus_z}"
                );
            }
        }
    }

    #[test]
    fn names_in_another_language_are_read_by_geometry() {
        // MMD's Japanese names: nothing in them is read, the geometry decides.
        let japanese = |name: &str| -> String {
            let (side, part) = match name.split_once('_') {
                Some(("L", p)) => ("左", p),
                Some(("R", p)) => ("右", p),
                _ => ("", name),
            };
            let word = match part {
                "hips" => "下半身",
                "spine" => "上半身",
                "chest" => "上半身2",
                "neck" => "首",
                "head" => "頭",
                "top" => "頭先",
                "arm" => "腕",
                "forearm" => "ひじ",
                "hand" => "手首",
                "thigh" => "足",
                "shin" => "ひざ",
                "foot" => "足首",
                "toe" => "つま先",
                other => other,
            };
            format!("{side}{word}")
        };
        let s = edited(small_table(true, "L_", "R_"), |t| {
            for r in t.iter_mut() {
                let plain = |n: &str| n.strip_prefix("n_").unwrap_or(n).to_owned();
                r.0 = japanese(&plain(&r.0));
                r.1 = r.1.as_deref().map(|p| japanese(&plain(p)));
            }
        });
        let r = recognize(&s).into_humanoid().unwrap();
        for (bone, joint) in [
            (B::Hips, "下半身"),
            (B::Head, "頭"),
            (B::LeftUpperLeg, "左足"),
            (B::LeftFoot, "左足首"),
            (B::LeftToes, "左つま先"),
            (B::RightUpperArm, "右腕"),
            (B::RightHand, "右手首"),
        ] {
            assert_eq!(joint_of(&r, bone), joint, "{bone}");
        }
    }
}
