//! Feet held straight along the shins: some writers (bvhio's rewrite of a
//! Bandai-Namco take) lay every bone of the zero pose along one axis, the arms and
//! the legs hanging down and each foot going on down its shin to the toes. Such a
//! figure still reads as a body, but no foot of it stands: a foot on the ground
//! makes about a right angle with its shin, and one along it is on pointe. Taken as
//! the rest, its feet would be turned onto the T-pose's forward feet, and a
//! standing foot of the motion, a right angle off its rest, would pitch the
//! avatar's toes up. A pose whose feet point along the shins is therefore no
//! standing rest: the zero pose gives way to a frame of the motion (see
//! `rest_frame`), and no such frame is chosen either.

use glam::Vec3;

use crate::humanoid::HumanBone as B;
use crate::skeleton::{BoneMap, Skeleton};

/// Cosine of the widest angle (30°) between a shin and its foot (from the ankle
/// to its tip) that still counts as the foot going on along the shin: a foot
/// standing on the ground is about 90° off it, tiptoe about 45°.
const ALONG_SHIN: f32 = 0.866;

/// Shorter than this (metres) tells no direction.
const TOO_SHORT: f32 = 1e-4;

/// The reason a pose of `skeleton` (model space, metres) with bone map `map` has no
/// standing foot, when a foot points along its shin; `None` when no foot does.
/// Where a foot points is from the ankle to the farthest point of it (its
/// descendants' joints and end sites): a foot bone going straight down to the
/// ground, its toes forward from there (pybvh's `LeftForeFoot`), still stands. Only
/// a foot with a joint below it (toes) is judged: a foot that is a leaf, its end
/// site straight down, is the ankle's height over the ground (Biovision's figures),
/// a standing foot.
pub(super) fn pointed_feet(skeleton: &Skeleton, map: &BoneMap) -> Option<String> {
    let world = skeleton.rest_world();
    let place = |j: usize| Vec3::from(world[j].translation);
    let at = |bone| map.joint(bone).map(place);
    let sides = [
        (B::LeftLowerLeg, B::LeftFoot),
        (B::RightLowerLeg, B::RightFoot),
    ];
    for (knee, foot) in sides {
        let (Some(k), Some(ankle), Some(a)) = (at(knee), map.joint(foot), at(foot)) else {
            continue;
        };
        if skeleton.children(ankle).next().is_none() {
            continue;
        }
        // The foot's farthest point from the ankle.
        let tip = (ankle..skeleton.len())
            .filter(|&j| j == ankle || skeleton.is_ancestor(ankle, j))
            .flat_map(|j| {
                let end = skeleton.joints()[j]
                    .end
                    .map(|e| world[j].transform_point3(e));
                [Some(place(j)), end].into_iter().flatten()
            })
            .max_by(|p, q| p.distance(a).total_cmp(&q.distance(a)));
        let Some(tip) = tip else { continue };
        let (shin, sole) = (a - k, tip - a);
        if shin.length() < TOO_SHORT || sole.length() < TOO_SHORT {
            continue;
        }
        let cos = shin.normalize().dot(sole.normalize());
        if cos > ALONG_SHIN {
            return Some(format!(
                "the foot `{}` points along its shin ({:.0}° off the shin's line): no foot \
                 stands on the ground",
                skeleton.joints()[ankle].name,
                cos.clamp(-1.0, 1.0).acos().to_degrees()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::skeleton::{Joint, NamedBoneMap, Recognition, Transform, recognize};

    /// A figure standing with arms down, each foot going to its toes `sole` from
    /// the ankle and on to the toes' end `tip` (model space, metres, facing +Z);
    /// the toes come last.
    fn figure(sole: Vec3, tip: Vec3) -> Skeleton {
        let rows: Vec<(&str, Option<usize>, Vec3)> = vec![
            ("Hips", None, Vec3::new(0.0, 1.0, 0.0)),
            ("Spine", Some(0), Vec3::new(0.0, 0.15, 0.0)),
            ("Chest", Some(1), Vec3::new(0.0, 0.15, 0.0)),
            ("Neck", Some(2), Vec3::new(0.0, 0.2, 0.0)),
            ("Head", Some(3), Vec3::new(0.0, 0.1, 0.0)),
            ("Shoulder_L", Some(2), Vec3::new(0.06, 0.15, 0.0)),
            ("UpperArm_L", Some(5), Vec3::new(0.1, 0.0, 0.0)),
            ("LowerArm_L", Some(6), Vec3::new(0.0, -0.28, 0.0)),
            ("Hand_L", Some(7), Vec3::new(0.0, -0.26, 0.0)),
            ("Shoulder_R", Some(2), Vec3::new(-0.06, 0.15, 0.0)),
            ("UpperArm_R", Some(9), Vec3::new(-0.1, 0.0, 0.0)),
            ("LowerArm_R", Some(10), Vec3::new(0.0, -0.28, 0.0)),
            ("Hand_R", Some(11), Vec3::new(0.0, -0.26, 0.0)),
            ("UpperLeg_L", Some(0), Vec3::new(0.09, -0.05, 0.0)),
            ("LowerLeg_L", Some(13), Vec3::new(0.0, -0.45, 0.0)),
            ("Foot_L", Some(14), Vec3::new(0.0, -0.45, 0.0)),
            ("UpperLeg_R", Some(0), Vec3::new(-0.09, -0.05, 0.0)),
            ("LowerLeg_R", Some(16), Vec3::new(0.0, -0.45, 0.0)),
            ("Foot_R", Some(17), Vec3::new(0.0, -0.45, 0.0)),
            ("Toes_L", Some(15), sole),
            ("Toes_R", Some(18), sole),
        ];
        let joints = rows
            .into_iter()
            .map(|(name, parent, offset)| Joint {
                name: name.to_owned(),
                parent,
                rest: Transform::from_translation(offset),
                end: match name {
                    "Toes_L" | "Toes_R" => Some(tip),
                    "Hand_L" | "Hand_R" | "Head" => Some(offset.normalize() * 0.05),
                    _ => None,
                },
            })
            .collect();
        Skeleton::new(joints).expect("a valid figure")
    }

    fn map_of(skeleton: &Skeleton) -> BoneMap {
        let Recognition::Humanoid(r) = recognize(skeleton) else {
            panic!("the figure reads as a body");
        };
        let named: NamedBoneMap = r.map;
        BoneMap::resolve(&named, skeleton).expect("the recognized map resolves")
    }

    #[test]
    fn feet_down_along_the_shins_stand_on_no_foot_and_feet_forward_stand() {
        let down = Vec3::new(0.0, -0.14, 0.0);
        let pointed = figure(down, down * 0.1);
        let reason = pointed_feet(&pointed, &map_of(&pointed)).expect("pointed feet");
        assert!(
            reason.contains("`Foot_L` points along its shin (0°"),
            "{reason}"
        );
        // Forward, tiptoe, and a foot bone going down to the ground with its toes'
        // end forward from there.
        let feet = [
            (Vec3::new(0.0, -0.05, 0.13), Vec3::new(0.0, 0.0, 0.04)),
            (Vec3::new(0.0, -0.1, 0.1), Vec3::new(0.0, 0.0, 0.04)),
            (Vec3::new(0.0, -0.015, 0.0), Vec3::new(0.0, 0.0, 0.09)),
        ];
        for (sole, tip) in feet {
            let standing = figure(sole, tip);
            assert_eq!(pointed_feet(&standing, &map_of(&standing)), None, "{sole}");
        }
        // A leaf foot, its end site straight down to the ground.
        let mut joints = figure(Vec3::new(0.0, -0.05, 0.13), Vec3::Z * 0.04)
            .joints()
            .to_vec();
        joints.retain(|j| !j.name.starts_with("Toes"));
        for foot in joints.iter_mut().filter(|j| j.name.starts_with("Foot")) {
            foot.end = Some(Vec3::new(0.0, -0.08, 0.0));
        }
        let leaf_feet = Skeleton::new(joints).expect("a valid figure");
        assert_eq!(pointed_feet(&leaf_feet, &map_of(&leaf_feet)), None);
    }
}
