//! Per-frame retargeting cost: lab19 -> normalized and normalized -> Example.vrm,
//! each next to a baseline measured in the same run: the straightforward
//! world-space method (forward kinematics of every joint with matrices, then
//! `N = M(p)⁻¹·M(b)` from model-space deltas), which allocates per frame.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, SourceRig, TargetRig, ToNormalized};

fn mapped(path: &Path) -> MappedSkeleton {
    let rig = load_rig(path, &LoadOptions::default()).expect("bench rig loads");
    let map = choose_map(&rig, None).expect("bench rig has a map");
    MappedSkeleton::new(rig.skeleton, &map.map).expect("bench map fits")
}

/// A plausible frame: every joint turned 20° about a different axis.
fn frame(m: &MappedSkeleton) -> (Vec<Quat>, Vec<Vec3>) {
    let rotations = m
        .skeleton
        .rest_rotations()
        .iter()
        .enumerate()
        .map(|(i, r)| *r * Quat::from_axis_angle(Vec3::new(1.0, i as f32, 2.0).normalize(), 0.35))
        .collect();
    (rotations, m.skeleton.rest_translations())
}

/// The baseline: world matrices for every joint, then normalized rotations from
/// model-space deltas.
fn naive_to_normalized(
    m: &MappedSkeleton,
    t_world_inv: &[Quat],
    rotations: &[Quat],
    translations: &[Vec3],
    pose: &mut HumanoidPose,
) {
    let world = m.skeleton.world_transforms(rotations, translations);
    let mut model = [Quat::IDENTITY; 55];
    for (bone, joint) in m.map.pairs() {
        let g = m.correction.facing * world[joint].to_scale_rotation_translation().1;
        model[bone.index()] = g * t_world_inv[joint];
        let parent = m
            .map
            .parent(bone)
            .map_or(Quat::IDENTITY, |p| model[p.index()]);
        pose.set_rotation(bone, (parent.conjugate() * model[bone.index()]).normalize());
    }
}

fn benches(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab19 = mapped(&root.join("config/skeletons/lab19.json"));
    let source = SourceRig::new(&lab19);
    let (rotations, translations) = frame(&lab19);
    let mut pose = HumanoidPose::default();
    c.bench_function("retarget lab19 -> normalized", |b| {
        b.iter(|| {
            ToNormalized {
                source: &source,
                local_rotations: black_box(&rotations),
                local_translations: black_box(&translations),
                pose: &mut pose,
            }
            .run()
            .expect("frame fits")
        })
    });
    let t_world_inv: Vec<Quat> = lab19
        .correction
        .t_pose_world(&lab19.skeleton)
        .iter()
        .map(|w| w.to_scale_rotation_translation().1.conjugate())
        .collect();
    let mut baseline_pose = HumanoidPose::default();
    c.bench_function("baseline: naive world-space lab19 -> normalized", |b| {
        b.iter(|| {
            naive_to_normalized(
                &lab19,
                &t_world_inv,
                black_box(&rotations),
                black_box(&translations),
                &mut baseline_pose,
            )
        })
    });

    let Some(assets) = mocap_bridge::assets::assets_dir() else {
        return;
    };
    let example = assets.join("vrm/Example.vrm");
    let vrm = mapped(&example);
    let target = TargetRig::new(&vrm);
    let mut out = vec![Quat::IDENTITY; vrm.skeleton.len()];
    let mut hips = Vec3::ZERO;
    c.bench_function("retarget normalized -> Example.vrm", |b| {
        b.iter(|| {
            FromNormalized {
                target: &target,
                pose: black_box(&pose),
                local_rotations: &mut out,
                hips_translation: &mut hips,
            }
            .run()
            .expect("pose fits")
        })
    });
    let t_world: Vec<Quat> = vrm
        .correction
        .t_pose_world(&vrm.skeleton)
        .iter()
        .map(|w| w.to_scale_rotation_translation().1)
        .collect();
    c.bench_function(
        "baseline: naive world-space normalized -> Example.vrm",
        |b| {
            b.iter(|| {
                // Model-space deltas of all bones, then each joint's world rotation and
                // its local from the parent joint's world, all through a Vec.
                let model = black_box(&pose).model_rotations();
                let mut world: Vec<Quat> = Vec::with_capacity(vrm.skeleton.len());
                let mut locals: Vec<Quat> = Vec::with_capacity(vrm.skeleton.len());
                for (j, joint) in vrm.skeleton.joints().iter().enumerate() {
                    let parent_world = joint.parent.map_or(vrm.correction.facing, |p| world[p]);
                    let w = match vrm.map.bone_of(j) {
                        Some(bone) => model[bone.index()] * t_world[j],
                        None => parent_world * joint.rest.rotation,
                    };
                    locals.push(parent_world.conjugate() * w);
                    world.push(w);
                }
                black_box(locals.len() + usize::from(vrm.map.has(HumanBone::Hips)))
            })
        },
    );
}

criterion_group! {
    name = retarget;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = benches
}
criterion_main!(retarget);
