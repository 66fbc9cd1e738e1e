//! Property tests of the retargeting math over random rigs: random joint axes,
//! proportions, rest poses (T, A, arms down, spread legs), facing, optional bones,
//! armature nodes and in-between joints, and random poses.

mod common;

use common::{RigSpec, Rng, angle_deg, forward, quat_diff, random_rig};
use glam::{Quat, Vec3};
use mocap_bridge::humanoid::bone::ALL;
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::retarget::{
    FromNormalized, MappedSkeleton, Retargeter, SourceRig, TargetRig, ToNormalized,
};
use proptest::prelude::*;

prop_compose! {
    fn rig_spec()(
        seed in any::<u64>(),
        legs in 0.6f32..1.4,
        torso in 0.6f32..1.4,
        arms in 0.6f32..1.4,
        arm_drop_deg in prop_oneof![Just(0.0f32), 20.0f32..50.0, 75.0f32..88.0],
        leg_spread_deg in 0.0f32..12.0,
        // Integer steps: proptest's `f32` range sampler trips its own debug
        // assertion on rare draws of a range across zero.
        yaw_deg in prop_oneof![
            Just(0.0f32),
            Just(180.0f32),
            (-1_800_000i32..1_800_000).prop_map(|n| n as f32 / 1e4)
        ],
        flags in any::<[bool; 8]>(),
    ) -> RigSpec {
        RigSpec {
            seed, legs, torso, arms, arm_drop_deg, leg_spread_deg, yaw_deg,
            chest: flags[0], upper_chest: flags[1], neck: flags[2], shoulders: flags[3],
            toes: flags[4], fingers: flags[5], armature: flags[6], extra_joints: flags[7],
        }
    }
}

/// Random local rotations (within 70° of rest) on every mapped joint; other joints
/// at rest. Returns rotations and translations for the whole skeleton.
fn random_pose(mapped: &MappedSkeleton, seed: u64) -> (Vec<Quat>, Vec<Vec3>) {
    let mut rng = Rng::new(seed);
    let mut rotations = mapped.skeleton.rest_rotations();
    for (_, joint) in mapped.map.pairs() {
        rotations[joint] *= rng.rotation_within(70f32.to_radians());
    }
    let mut translations = mapped.skeleton.rest_translations();
    let hips = mapped.map.joint(HumanBone::Hips).unwrap();
    translations[hips] += Vec3::new(
        rng.range(-0.3, 0.3),
        rng.range(-0.2, 0.2),
        rng.range(-0.3, 0.3),
    );
    (rotations, translations)
}

fn mapped(spec: &RigSpec) -> MappedSkeleton {
    let rig = random_rig(spec);
    MappedSkeleton::new(rig.skeleton, &rig.map).expect("random rig maps")
}

/// Model-space direction from each mapped bone's nearest mapped humanoid parent to
/// it, turned by the rig's facing correction. Pairs where the child starts a new limb
/// (hips -> upper leg, chest -> shoulder, hand -> finger) are offsets of the body's
/// shape, not bones with a T-pose direction, and are left out.
fn bone_directions(
    m: &MappedSkeleton,
    rotations: &[Quat],
    translations: &[Vec3],
) -> Vec<(HumanBone, HumanBone, Vec3)> {
    let world = m.skeleton.world_transforms(rotations, translations);
    let pos = |b: HumanBone| m.map.joint(b).map(|j| Vec3::from(world[j].translation));
    ALL.iter()
        .filter_map(|&child| {
            let parent = m.map.parent(child)?;
            if starts_limb(child, parent) {
                return None;
            }
            let d = pos(child)? - pos(parent)?;
            Some((parent, child, m.correction.facing * d))
        })
        .collect()
}

fn starts_limb(bone: HumanBone, parent: HumanBone) -> bool {
    use HumanBone as B;
    let name = bone.name();
    match bone {
        B::LeftUpperLeg | B::RightUpperLeg | B::LeftShoulder | B::RightShoulder => true,
        B::LeftUpperArm | B::RightUpperArm => !matches!(parent, B::LeftShoulder | B::RightShoulder),
        _ => {
            name.ends_with("IndexProximal")
                || name.ends_with("MiddleProximal")
                || name.ends_with("RingProximal")
                || name.ends_with("LittleProximal")
                || name.ends_with("ThumbMetacarpal")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: common::proptest_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn retargeted_bones_point_the_same_way(a in rig_spec(), b in rig_spec(), pose_seed in any::<u64>()) {
        let source = mapped(&a);
        let target = mapped(&b);
        prop_assert!(source.correction.problems.is_empty(), "{:?}", source.correction.problems);
        let retargeter = Retargeter::new(&source, &target);
        let (rotations, translations) = random_pose(&source, pose_seed);
        let mut pose = HumanoidPose::default();
        let mut out = vec![Quat::IDENTITY; target.skeleton.len()];
        let mut hips_translation = Vec3::ZERO;
        retargeter.run(&rotations, &translations, &mut pose, &mut out, &mut hips_translation).unwrap();

        let hips = target.map.joint(HumanBone::Hips).unwrap();
        let mut target_translations = target.skeleton.rest_translations();
        target_translations[hips] = hips_translation;
        let want = bone_directions(&source, &rotations, &translations);
        let got = bone_directions(&target, &out, &target_translations);
        let mut compared = 0;
        for (parent, child, d) in &want {
            if let Some((_, _, e)) = got.iter().find(|(p, c, _)| p == parent && c == child) {
                let angle = angle_deg(*d, *e);
                prop_assert!(angle < 0.01, "{parent}->{child}: {angle}°");
                compared += 1;
            }
        }
        prop_assert!(compared >= 7, "only {compared} bones compared");

        // Hips land at the source's position scaled by the hips heights.
        let source_world = forward(&source.skeleton, &rotations, source.map.joint(HumanBone::Hips).unwrap(), translations[source.map.joint(HumanBone::Hips).unwrap()]);
        let target_world = forward(&target.skeleton, &out, hips, hips_translation);
        let s_hips = source.correction.facing * Vec3::from(source_world[source.map.joint(HumanBone::Hips).unwrap()].translation);
        let t_hips = target.correction.facing * Vec3::from(target_world[hips].translation);
        let scale = target.rest_hips_height() / source.rest_hips_height();
        prop_assert!((s_hips * scale).distance(t_hips) < 1e-4, "{s_hips} * {scale} vs {t_hips}");
    }

    #[test]
    fn source_to_normalized_and_back_returns_the_locals(a in rig_spec(), pose_seed in any::<u64>()) {
        let m = mapped(&a);
        let source = SourceRig::new(&m);
        let target = TargetRig::new(&m);
        let (rotations, translations) = random_pose(&m, pose_seed);
        let mut pose = HumanoidPose::default();
        ToNormalized { source: &source, local_rotations: &rotations, local_translations: &translations, pose: &mut pose }.run().unwrap();
        let mut back = vec![Quat::IDENTITY; m.skeleton.len()];
        let mut hips_translation = Vec3::ZERO;
        FromNormalized { target: &target, pose: &pose, local_rotations: &mut back, hips_translation: &mut hips_translation }.run().unwrap();
        for (j, (want, got)) in rotations.iter().zip(&back).enumerate() {
            let diff = quat_diff(*want, *got);
            prop_assert!(diff < 1e-5, "joint {} differs by {diff}", m.skeleton.joints()[j].name);
        }
        let hips = m.map.joint(HumanBone::Hips).unwrap();
        prop_assert!(hips_translation.distance(translations[hips]) < 1e-4 * translations[hips].length().max(1.0));
    }

    #[test]
    fn rest_correction_recognises_the_generated_rest_pose(a in rig_spec()) {
        let m = mapped(&a);
        let expected = if a.arm_drop_deg == 0.0 { "T-pose" } else if a.arm_drop_deg < 60.0 { "A-pose" } else { "arms down" };
        prop_assert_eq!(m.correction.pose.to_string(), expected);
        prop_assert!((m.correction.arm_angle_deg - a.arm_drop_deg).abs() < 0.05, "{} vs {}", m.correction.arm_angle_deg, a.arm_drop_deg);
        // The T-pose it computes has the canonical limb directions.
        let world = m.correction.t_pose_world(&m.skeleton);
        let pos = |b: HumanBone| Vec3::from(world[m.map.joint(b).unwrap()].translation);
        prop_assert!(angle_deg(pos(HumanBone::LeftLowerArm) - pos(HumanBone::LeftUpperArm), Vec3::X) < 0.01);
        prop_assert!(angle_deg(pos(HumanBone::RightHand) - pos(HumanBone::RightLowerArm), Vec3::NEG_X) < 0.01);
        prop_assert!(angle_deg(pos(HumanBone::LeftLowerLeg) - pos(HumanBone::LeftUpperLeg), Vec3::NEG_Y) < 0.01);
        let rest_pose_identity = {
            let source = SourceRig::new(&m);
            let mut pose = HumanoidPose::default();
            let t_locals = m.correction.t_pose_locals(&m.skeleton);
            ToNormalized { source: &source, local_rotations: &t_locals, local_translations: &m.skeleton.rest_translations(), pose: &mut pose }.run().unwrap();
            pose.bones().map(|(_, q)| quat_diff(q, Quat::IDENTITY)).fold(0.0f32, f32::max)
        };
        prop_assert!(rest_pose_identity < 1e-5, "T-pose is not the identity: {rest_pose_identity}");
    }
}
