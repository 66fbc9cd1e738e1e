//! Per-frame IK cost, each next to a baseline measured in the same run: one two-bone
//! solve against forward kinematics of the same limb (two quaternion-vector
//! products), and mocap-mode IK on four limbs (forward kinematics of both bodies,
//! contacts, hips, four solves) against `FromNormalized` of the same pose onto the
//! same model (Example.vrm; skipped when the real-file corpus is absent), and a full VR
//! body solve (3-point and 6-point devices) against `FromNormalized` of the result
//! onto the same skeleton (the built-in humanoid); the device filter a tracker
//! performer runs before it (six devices a frame, and the design a new frame rate
//! costs).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use mocap_bridge::filter::{DeviceFilter, DeviceFilterConfig};
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::humanoid::{DevicePose, HumanoidPose};
use mocap_bridge::ik::{
    BodyProportions, Calibration, LimbRotations, MocapIk, MocapIkConfig, MocapIkState, TwoBoneIk,
    VrIk, VrIkConfig, VrIkState, VrInput,
};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, SourceRig, TargetRig, ToNormalized};

fn mapped(path: &Path) -> (mocap_bridge::formats::Rig, MappedSkeleton) {
    let rig = load_rig(path, &LoadOptions::default()).expect("bench rig loads");
    let map = choose_map(&rig, None).expect("bench rig has a map");
    let m = MappedSkeleton::new(rig.skeleton.clone(), &map.map).expect("bench map fits");
    (rig, m)
}

fn benches(c: &mut Criterion) {
    let (a, b, e) = (
        Vec3::new(0.2, 1.4, 0.0),
        Vec3::new(0.45, 1.3, -0.05),
        Vec3::new(0.6, 1.1, 0.1),
    );
    let target = Vec3::new(0.5, 1.0, 0.25);
    let pole = Vec3::new(0.3, 1.3, -1.0);
    let mut out = LimbRotations::default();
    c.bench_function("two-bone ik one limb", |bench| {
        bench.iter(|| {
            TwoBoneIk {
                root: black_box(a),
                middle: black_box(b),
                end: black_box(e),
                target: black_box(target),
                pole: black_box(pole),
                softness: 0.01,
                weight: 1.0,
                out: &mut out,
            }
            .run()
            .expect("limb solves")
        })
    });
    let turns = (Quat::from_rotation_z(0.3), Quat::from_rotation_x(0.2));
    c.bench_function("baseline: forward kinematics of one limb", |bench| {
        bench.iter(|| {
            let (r, m) = black_box(turns);
            let mid = black_box(a) + r * (black_box(b) - a);
            black_box(mid + r * m * (black_box(e) - b))
        })
    });

    vr_benches(c);

    let Some(assets) = mocap_bridge::assets::assets_dir() else {
        return;
    };
    let (bvh, vrm) = (
        assets.join("bvh/cmu_12_01_walk.bvh"),
        assets.join("vrm/Example.vrm"),
    );
    let (rig, cmu) = mapped(&bvh);
    let (_, example) = mapped(&vrm);
    let frame = rig.clips[0].motion.frame(100);
    let mut pose = HumanoidPose::default();
    ToNormalized {
        source: &SourceRig::new(&cmu),
        local_rotations: frame.rotations,
        local_translations: frame.translations,
        pose: &mut pose,
    }
    .run()
    .expect("frame fits");
    let (source_body, target_body) = (BodyProportions::new(&cmu), BodyProportions::new(&example));
    let config = MocapIkConfig::default();
    let mut state = MocapIkState::default();
    c.bench_function("mocap ik four limbs cmu -> Example.vrm", |bench| {
        bench.iter(|| {
            let mut solved = black_box(pose);
            MocapIk {
                config: &config,
                source: &source_body,
                target: &target_body,
                dt: 1.0 / 120.0,
                state: &mut state,
                pose: &mut solved,
            }
            .run()
            .expect("mocap ik runs");
            solved
        })
    });
    let target_rig = TargetRig::new(&example);
    let mut locals = vec![Quat::IDENTITY; example.skeleton.len()];
    let mut hips = Vec3::ZERO;
    c.bench_function("baseline: retarget normalized -> Example.vrm", |bench| {
        bench.iter(|| {
            FromNormalized {
                target: &target_rig,
                pose: black_box(&pose),
                local_rotations: &mut locals,
                hips_translation: &mut hips,
            }
            .run()
            .expect("pose fits")
        })
    });
}

/// VR mode on the built-in humanoid: a user leaning a little, hands in front.
fn vr_benches(c: &mut Criterion) {
    let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
        "humanoid.json",
        mocap_bridge::skeleton::builtin::HUMANOID_JSON,
    );
    let map = choose_map(&rig, None).expect("built-in humanoid has a map");
    let humanoid = MappedSkeleton::new(rig.skeleton.clone(), &map.map).expect("map fits");
    let body = BodyProportions::new(&humanoid);
    let calibration = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head = body.rest_position(mocap_bridge::humanoid::HumanBone::Head);
    let turn = Quat::from_euler(glam::EulerRot::YXZ, 0.4, 0.2, 0.05);
    let three = VrInput {
        head: DevicePose::new(head + Vec3::new(0.02, -0.05, 0.1), turn),
        hands: [
            Some(DevicePose::new(head + Vec3::new(0.25, -0.45, 0.3), turn)),
            Some(DevicePose::new(
                head + Vec3::new(-0.2, -0.35, 0.35),
                Quat::from_rotation_z(0.5),
            )),
        ],
        ..VrInput::default()
    };
    let hips = body.rest_position(mocap_bridge::humanoid::HumanBone::Hips);
    let six = VrInput {
        hips: Some(DevicePose::new(
            hips + Vec3::new(0.02, -0.04, 0.02),
            Quat::from_rotation_y(0.3),
        )),
        feet: [
            Some(DevicePose::new(
                Vec3::new(0.1, 0.08, 0.05),
                Quat::from_rotation_y(0.2),
            )),
            Some(DevicePose::new(
                Vec3::new(-0.1, 0.08, -0.05),
                Quat::from_rotation_y(0.4),
            )),
        ],
        ..three
    };
    let config = VrIkConfig::default();
    let mut state = VrIkState::default();
    let mut pose = HumanoidPose::default();
    for (name, input) in [
        ("vr ik full body 3-point", &three),
        ("vr ik full body 6-point", &six),
    ] {
        c.bench_function(name, |bench| {
            bench.iter(|| {
                VrIk {
                    config: &config,
                    body: &body,
                    calibration: &calibration,
                    input: black_box(input),
                    dt: 1.0 / 90.0,
                    state: &mut state,
                    pose: &mut pose,
                }
                .run()
                .expect("vr ik runs");
            })
        });
    }
    // The device filter a tracker performer runs before the IK: six device poses
    // a frame, and the tap design it redoes when the frame rate changes.
    let filter_config = DeviceFilterConfig::default();
    let mut filter = DeviceFilter::<6>::new(filter_config);
    let devices = [Some(six.head), six.hands[0], six.hands[1]]
        .into_iter()
        .chain([six.hips, six.feet[0], six.feet[1]])
        .map(|d| d.unwrap_or(DevicePose::new(Vec3::ZERO, Quat::IDENTITY)))
        .collect::<Vec<_>>();
    c.bench_function("device filter 6 devices 32 taps", |bench| {
        bench.iter(|| {
            filter.step(1.0 / 90.0);
            for (k, d) in devices.iter().enumerate() {
                black_box(filter.filter(k, black_box(d.position)));
                black_box(filter.filter_rotation(k, black_box(d.rotation)));
            }
        })
    });
    // The whole design a new frame rate costs: the positions' three motion models
    // and the rotations' taps.
    c.bench_function("device filter design 32 taps", |bench| {
        bench.iter(|| {
            let mut fresh = DeviceFilter::<6>::new(black_box(filter_config));
            fresh.step(black_box(1.0 / 90.0));
            fresh
        })
    });
    let target_rig = TargetRig::new(&humanoid);
    let mut locals = vec![Quat::IDENTITY; humanoid.skeleton.len()];
    let mut hips_translation = Vec3::ZERO;
    c.bench_function(
        "baseline: retarget normalized -> built-in humanoid",
        |bench| {
            bench.iter(|| {
                FromNormalized {
                    target: &target_rig,
                    pose: black_box(&pose),
                    local_rotations: &mut locals,
                    hips_translation: &mut hips_translation,
                }
                .run()
                .expect("pose fits")
            })
        },
    );
}

criterion_group!(ik, benches);
criterion_main!(ik);
