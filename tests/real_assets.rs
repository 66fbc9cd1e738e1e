//! Retargeting real captures onto real models (../shared/assets): limb directions
//! of the target match the source's at every frame, and the rest poses of the real
//! rigs are recognised. Skips with a message when the assets are absent.

mod common;

use std::path::Path;

use common::{angle_deg, assets, forward};
use glam::{Quat, Vec3};
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::{LoadOptions, Rig, load_rig};
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::retarget::check::LIMBS;
use mocap_bridge::retarget::{MappedSkeleton, Retargeter};
use mocap_bridge::skeleton::RestPose;

use HumanBone as B;

fn load(path: &Path) -> (Rig, MappedSkeleton) {
    let rig = load_rig(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let chosen = choose_map(&rig, None).unwrap_or_else(|| panic!("no map for {}", path.display()));
    let mapped = MappedSkeleton::new(rig.skeleton.clone(), &chosen.map)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (rig, mapped)
}

/// Direction of each limb in the facing-corrected model space.
fn limb_directions(m: &MappedSkeleton, rotations: &[Quat], translations: &[Vec3]) -> Vec<Vec3> {
    let world = m.skeleton.world_transforms(rotations, translations);
    let pos = |b: HumanBone| Vec3::from(world[m.map.joint(b).unwrap()].translation);
    LIMBS
        .iter()
        .map(|(from, to)| m.correction.facing * (pos(*to) - pos(*from)))
        .collect()
}

/// Retargets every frame of `source` onto `target`; returns the largest limb
/// direction error in degrees and the number of frames.
fn worst_limb_error(source: &Path, target: &Path) -> (f32, usize) {
    let (rig, src) = load(source);
    let (_, dst) = load(target);
    let motion = rig
        .clips
        .into_iter()
        .next()
        .expect("the source has motion")
        .motion;
    let retargeter = Retargeter::new(&src, &dst);
    let mut pose = HumanoidPose::default();
    let mut out = vec![Quat::IDENTITY; dst.skeleton.len()];
    let mut hips_translation = Vec3::ZERO;
    let hips = dst.map.joint(B::Hips).unwrap();
    let mut worst = 0.0f32;
    for frame in motion.frames() {
        retargeter
            .run(
                frame.rotations,
                frame.translations,
                &mut pose,
                &mut out,
                &mut hips_translation,
            )
            .unwrap();
        let want = limb_directions(&src, frame.rotations, frame.translations);
        let world = forward(&dst.skeleton, &out, hips, hips_translation);
        let pos = |b: HumanBone| Vec3::from(world[dst.map.joint(b).unwrap()].translation);
        for (i, (from, to)) in LIMBS.iter().enumerate() {
            let got = dst.correction.facing * (pos(*to) - pos(*from));
            worst = worst.max(angle_deg(want[i], got));
        }
    }
    (worst, motion.frame_count())
}

#[test]
fn cmu_walk_onto_example_vrm_cesium_man_and_lab19_keeps_limb_directions() {
    let Some(dir) = assets() else { return };
    let source = dir.join("bvh/cmu_12_01_walk.bvh");
    let lab19 = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/skeletons/lab19.json");
    for target in [
        dir.join("vrm/Example.vrm"),
        dir.join("gltf/CesiumMan.glb"),
        lab19,
    ] {
        let (worst, frames) = worst_limb_error(&source, &target);
        println!(
            "cmu_12_01_walk -> {}: {frames} frames, worst limb error {worst:.5}°",
            target.display()
        );
        assert_eq!(frames, 524);
        assert!(worst < 0.5, "{}: {worst}°", target.display());
    }
}

#[test]
fn lab_capture_onto_example_vrm_keeps_limb_directions() {
    let Some(dir) = assets() else { return };
    let (worst, frames) = worst_limb_error(
        &dir.join("bvh/test_mocapbank.bvh"),
        &dir.join("vrm/Example.vrm"),
    );
    println!("test_mocapbank -> Example.vrm: {frames} frames, worst limb error {worst:.5}°");
    assert_eq!(frames, 455);
    assert!(worst < 0.5, "{worst}°");
}

#[test]
fn rest_poses_of_real_rigs_are_recognised() {
    let Some(dir) = assets() else { return };
    let cases = [
        ("gltf/CesiumMan.glb", RestPose::APose),
        ("vrm/rest_a_pose_t_position_rest_vrm0.vrm", RestPose::APose),
        ("bvh/test_mocapbank.bvh", RestPose::ArmsDown),
        ("vrm/Example.vrm", RestPose::TPose),
        ("vrm/basic_armature_vrm0.vrm", RestPose::TPose),
        ("vrm/basic_armature_vrm1.vrm", RestPose::TPose),
        ("bvh/cmu_12_01_walk.bvh", RestPose::TPose),
    ];
    for (file, expected) in cases {
        let (_, mapped) = load(&dir.join(file));
        let c = &mapped.correction;
        println!(
            "{file}: {} ({:.1}° below horizontal)",
            c.pose, c.arm_angle_deg
        );
        assert_eq!(c.pose, expected, "{file}");
    }
}

#[test]
fn vrm0_models_are_turned_to_face_plus_z() {
    let Some(dir) = assets() else { return };
    let (_, vrm0) = load(&dir.join("vrm/basic_armature_vrm0.vrm"));
    let (_, vrm1) = load(&dir.join("vrm/basic_armature_vrm1.vrm"));
    let turn = |m: &MappedSkeleton| {
        (2.0 * m.correction.facing.y.atan2(m.correction.facing.w)).to_degrees()
    };
    assert!((turn(&vrm0).abs() - 180.0).abs() < 0.1, "{}", turn(&vrm0));
    assert!(turn(&vrm1).abs() < 0.1, "{}", turn(&vrm1));
}
