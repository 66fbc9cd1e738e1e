//! EXT_skeleton_humanoid through the public API: a real capture exported and read
//! back, and a clip applied to models with the spec's inverse-bind-matrix formula
//! (`ext_humanoid::apply_to_model`) against the retargeter (`FromNormalized`): the
//! same on a model whose bind frames follow the spec's convention, different on one
//! whose axes do not (where only the retargeter still puts the bones right).

mod common;

use std::path::Path;

use glam::{Quat, Vec3};
use mocap_bridge::formats::ext_humanoid::{self, ExtHumanoidClip, ExtHumanoidWriter};
use mocap_bridge::formats::glb::GlbFile;
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::formats::{LoadOptions, Rig, load_rig};
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig};
use mocap_bridge::skeleton::{Joint, Skeleton, Transform};
use mocap_bridge::takes::replay::Replay;

/// Angle between two rotations, degrees; precise for tiny angles.
fn angle_deg(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    (2.0 * d.xyz().length().atan2(d.w.abs())).to_degrees()
}

/// The CMU walk played through its bone map: every frame's pose, and the take
/// exported as EXT_skeleton_humanoid.
fn walk_take(assets: &Path) -> (Vec<(f32, HumanoidPose)>, Vec<u8>) {
    let rig = load_rig(
        &assets.join("bvh/cmu_12_01_walk.bvh"),
        &LoadOptions::default(),
    )
    .unwrap();
    let map = choose_map(&rig, None).unwrap();
    let mapped = MappedSkeleton::new(rig.skeleton.clone(), &map.map).unwrap();
    let mut replay = Replay::from_rig(&mapped, rig.clips[0].motion.clone(), None);
    let mut writer = ExtHumanoidWriter::new(VrmaRest::from_mapped(&mapped), "cmu 12_01 walk");
    let mut take = Vec::new();
    let mut pose = HumanoidPose::default();
    while let Some(t) = replay.next_frame(&mut pose) {
        writer.push(t, &pose).unwrap();
        take.push((t, pose));
    }
    (take, writer.to_bytes())
}

/// The built-in performance, 4 s at 30 fps, exported.
fn demo_take() -> (Vec<(f32, HumanoidPose)>, Vec<u8>) {
    let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "demo");
    let take: Vec<(f32, HumanoidPose)> = (0..120)
        .map(|i| {
            let t = i as f32 / 30.0;
            (t, mocap_bridge::takes::demo::pose_at(t, 0.9))
        })
        .collect();
    for (t, pose) in &take {
        writer.push(*t, pose).unwrap();
    }
    (take, writer.to_bytes())
}

/// The model mapped for the retargeter; with `as_is`, its rest is taken as the
/// T-pose (no rest correction), as the spec takes a model's bind pose.
fn mapped(rig: &Rig, as_is: bool) -> MappedSkeleton {
    let mut m = MappedSkeleton::new(rig.skeleton.clone(), rig.bone_map.as_ref().unwrap()).unwrap();
    if as_is {
        m.correction.local.fill(Quat::IDENTITY);
    }
    m
}

/// Local rotations of `rig` at `t`: by the spec's formula, and by the retargeter.
fn both_ways(
    clip: &ExtHumanoidClip,
    t: f32,
    rig: &Rig,
    target: &TargetRig,
) -> (Vec<Quat>, Vec<Quat>, HumanoidPose) {
    let n = rig.skeleton.len();
    let mut spec = vec![Quat::IDENTITY; n];
    ext_humanoid::apply_to_model(clip, t, rig, &mut spec).unwrap();
    let mut pose = HumanoidPose::default();
    clip.sample(t, &mut pose);
    let mut retargeted = vec![Quat::IDENTITY; n];
    let mut hips = Vec3::ZERO;
    FromNormalized {
        target,
        pose: &pose,
        local_rotations: &mut retargeted,
        hips_translation: &mut hips,
    }
    .run()
    .unwrap();
    (spec, retargeted, pose)
}

/// Worst angle, degrees, between each mapped bone's model-space turn away from the
/// model's T-pose under `locals` and the pose's normalized model rotation: 0 when
/// the model shows the pose, whatever its bone axes.
fn worst_turn_error(m: &MappedSkeleton, locals: &[Quat], pose: &HumanoidPose) -> f32 {
    let t_pose = m.correction.t_pose_world(&m.skeleton);
    let posed = m
        .skeleton
        .world_transforms(locals, &m.skeleton.rest_translations());
    let facing = m.correction.facing;
    let want = pose.model_rotations();
    m.map
        .pairs()
        .map(|(bone, j)| {
            let rest = t_pose[j].to_scale_rotation_translation().1;
            let now = facing * posed[j].to_scale_rotation_translation().1;
            angle_deg(now * rest.conjugate(), want[bone.index()])
        })
        .fold(0.0, f32::max)
}

#[test]
fn a_real_capture_reads_back_as_it_was_written() {
    let Some(assets) = common::assets() else {
        return;
    };
    let (take, bytes) = walk_take(&assets);
    let clip = ext_humanoid::parse(&bytes, Path::new("walk.glb"), None).unwrap();
    assert_eq!(clip.name.as_deref(), Some("cmu 12_01 walk"));
    let (mut worst, mut worst_hips) = (0.0f32, 0.0f32);
    for (t, want) in &take {
        let mut got = HumanoidPose::default();
        clip.sample(*t, &mut got);
        assert_eq!(got.present_mask(), want.present_mask(), "at {t}");
        for (bone, q) in want.bones() {
            worst = worst.max(angle_deg(q, got.rotation(bone).unwrap()));
        }
        worst_hips = worst_hips.max(got.hips_position.distance(want.hips_position));
        assert!((got.rest_hips_height - want.rest_hips_height).abs() < 1e-5);
    }
    eprintln!(
        "walk: {} frames, {} bones, worst {worst:.2e}°, hips {worst_hips:.2e} m",
        take.len(),
        clip.bones().count()
    );
    assert!(worst.to_radians() <= 1e-5, "{worst}°");
    assert!(worst_hips <= 1e-5, "{worst_hips} m");
}

#[test]
fn on_the_exported_reference_model_the_spec_formula_is_the_retargeter() {
    let Some(assets) = common::assets() else {
        return;
    };
    let (take, bytes) = walk_take(&assets);
    let path = Path::new("walk.glb");
    let clip = ext_humanoid::parse(&bytes, path, None).unwrap();
    let rig = ext_humanoid::reference_rig(&bytes, path).unwrap();
    let m = mapped(&rig, true);
    let target = TargetRig::new(&m);
    let mut worst = 0.0f32;
    for (t, _) in &take {
        let (spec, retargeted, pose) = both_ways(&clip, *t, &rig, &target);
        for (a, b) in spec.iter().zip(&retargeted) {
            worst = worst.max(angle_deg(*a, *b));
        }
        assert!(worst_turn_error(&m, &spec, &pose) < 1e-3, "at {t}");
    }
    eprintln!("reference model: spec formula vs retargeter, worst {worst:.2e}°");
    assert!(worst.to_radians() <= 1e-5, "{worst}°");

    // With its automatic rest correction the retargeter straightens what it does not
    // take for a T-pose (a hand aimed a few degrees off its middle finger): only
    // those bones may then differ, by about that much.
    let corrected = mapped(&rig, false);
    let target = TargetRig::new(&corrected);
    let largest = corrected
        .correction
        .bones
        .iter()
        .map(|c| c.angle_deg)
        .fold(0.0, f32::max);
    let (spec, retargeted, _) = both_ways(&clip, take[take.len() / 2].0, &rig, &target);
    let differ = spec
        .iter()
        .zip(&retargeted)
        .map(|(a, b)| angle_deg(*a, *b))
        .fold(0.0, f32::max);
    eprintln!("with rest correction (largest {largest:.2}°): differ by {differ:.2}°");
    assert!(differ <= 2.0 * largest + 1e-3, "{differ}° vs {largest}°");
}

/// `rig` with every joint's bind frame turned by its own rotation, joint positions
/// unchanged: the same body with bone axes that follow no convention.
fn twisted(rig: &Rig) -> Rig {
    let turn = |j: usize| {
        let j = j as f32;
        Quat::from_euler(glam::EulerRot::ZXY, 0.7 * j, -1.3 + 0.4 * j, 2.1 - 0.9 * j)
    };
    let joints = rig.skeleton.joints();
    let joints: Vec<Joint> = joints
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let above = joint.parent.map_or(Quat::IDENTITY, |p| turn(p).conjugate());
            Joint {
                rest: Transform {
                    translation: above * joint.rest.translation,
                    rotation: above * joint.rest.rotation * turn(j),
                    scale: joint.rest.scale,
                },
                end: joint.end.map(|e| turn(j).conjugate() * e),
                ..joint.clone()
            }
        })
        .collect();
    Rig {
        skeleton: Skeleton::new(joints).unwrap(),
        ..rig.clone()
    }
}

/// Joint positions of `rig` under `locals`, model space.
fn positions(rig: &Rig, locals: &[Quat]) -> Vec<Vec3> {
    rig.skeleton
        .world_transforms(locals, &rig.skeleton.rest_translations())
        .iter()
        .map(|w| Vec3::from(w.translation))
        .collect()
}

#[test]
fn on_a_model_with_other_axes_only_the_retargeter_still_poses_it_right() {
    let (take, bytes) = demo_take();
    let path = Path::new("demo.glb");
    let clip = ext_humanoid::parse(&bytes, path, None).unwrap();
    let reference = ext_humanoid::reference_rig(&bytes, path).unwrap();
    let other = twisted(&reference);
    let target = TargetRig::new(&mapped(&other, true));
    let (mut spec_off, mut retargeted_off) = (0.0f32, 0.0f32);
    for (t, _) in take.iter().step_by(7) {
        let mut truth = vec![Quat::IDENTITY; reference.skeleton.len()];
        ext_humanoid::apply_to_model(&clip, *t, &reference, &mut truth).unwrap();
        let truth = positions(&reference, &truth);
        let (spec, retargeted, _) = both_ways(&clip, *t, &other, &target);
        let off = |locals: &[Quat]| {
            positions(&other, locals)
                .iter()
                .zip(&truth)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0, f32::max)
        };
        spec_off = spec_off.max(off(&spec));
        retargeted_off = retargeted_off.max(off(&retargeted));
    }
    eprintln!(
        "twisted axes: joints off by up to {spec_off:.3} m (spec formula), {retargeted_off:.1e} m (retargeter)"
    );
    assert!(retargeted_off < 1e-5, "{retargeted_off} m");
    assert!(spec_off > 0.1, "{spec_off} m");
}

#[test]
fn on_example_vrm_the_spec_formula_bends_bones_the_wrong_way() {
    let Some(assets) = common::assets() else {
        return;
    };
    let (take, bytes) = walk_take(&assets);
    let clip = ext_humanoid::parse(&bytes, Path::new("walk.glb"), None).unwrap();
    let model = load_rig(&assets.join("vrm/Example.vrm"), &LoadOptions::default()).unwrap();
    let m = mapped(&model, false);
    let target = TargetRig::new(&m);
    let (mut spec_worst, mut retargeted_worst) = (0.0f32, 0.0f32);
    let mut worst_bone = HumanBone::Hips;
    for (t, _) in take.iter().step_by(10) {
        let (spec, retargeted, pose) = both_ways(&clip, *t, &model, &target);
        let spec_error = worst_turn_error(&m, &spec, &pose);
        if spec_error > spec_worst {
            spec_worst = spec_error;
            let want = pose.model_rotations();
            let posed = m
                .skeleton
                .world_transforms(&spec, &m.skeleton.rest_translations());
            let t_pose = m.correction.t_pose_world(&m.skeleton);
            worst_bone = m
                .map
                .pairs()
                .max_by(|(a, ja), (b, jb)| {
                    let err = |bone: HumanBone, j: usize| {
                        let rest = t_pose[j].to_scale_rotation_translation().1;
                        let now = m.correction.facing * posed[j].to_scale_rotation_translation().1;
                        angle_deg(now * rest.conjugate(), want[bone.index()])
                    };
                    err(*a, *ja).total_cmp(&err(*b, *jb))
                })
                .map_or(HumanBone::Hips, |(b, _)| b);
        }
        retargeted_worst = retargeted_worst.max(worst_turn_error(&m, &retargeted, &pose));
    }
    eprintln!(
        "Example.vrm ({}): bones turned wrong by up to {spec_worst:.1}° with the spec formula \
         (worst: {worst_bone}), {retargeted_worst:.1e}° with the retargeter",
        model.map_source.as_deref().unwrap_or("no map")
    );
    assert!(retargeted_worst < 0.01, "{retargeted_worst}°");
    assert!(spec_worst > 10.0, "{spec_worst}°");
}
