//! Humanoid recognition cost on a rig of 200 joints: MakeHuman's default skeleton
//! (tpose.bvh: 173 joints with fingers, toes and a face rig) plus three hair chains
//! of nine joints. Next to it, in the same run, two costs every rig pays anyway on
//! the same skeleton: its model-space rest transforms (`Skeleton::rest_world`) and
//! resolving the recognized map against it (`BoneMap::resolve`).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::skeleton::recognize::recognize;
use mocap_bridge::skeleton::{BoneMap, Joint, Skeleton, Transform};

/// tpose.bvh with hair on the head: 200 joints.
fn two_hundred_joints(path: &Path) -> Skeleton {
    let rig = load_rig(path, &LoadOptions::default()).expect("bench rig loads");
    let mut joints = rig.skeleton.joints().to_vec();
    let head = rig.skeleton.find("head").expect("tpose.bvh has a head");
    for chain in 0..3 {
        let mut parent = head;
        for i in 0..9 {
            let offset = if i == 0 {
                Vec3::new(0.04 * (chain as f32 - 1.0), 0.1, -0.08)
            } else {
                Vec3::new(0.0, -0.05, -0.01)
            };
            joints.push(Joint {
                name: format!("hair_{chain}_{i}"),
                parent: Some(parent),
                rest: Transform::from_translation(offset),
                end: None,
            });
            parent = joints.len() - 1;
        }
    }
    Skeleton::new(joints).expect("bench rig is valid")
}

fn benches(c: &mut Criterion) {
    let Some(assets) = mocap_bridge::assets::assets_dir() else {
        return;
    };
    let path = assets.join("bvh/tpose.bvh");
    let skeleton = two_hundred_joints(&path);
    assert_eq!(skeleton.len(), 200);
    let map = recognize(&skeleton)
        .into_humanoid()
        .expect("the bench rig is recognized")
        .map;
    c.bench_function("recognize 200-joint rig", |b| {
        b.iter(|| recognize(black_box(&skeleton)))
    });
    c.bench_function("baseline: Skeleton::rest_world 200-joint rig", |b| {
        b.iter(|| black_box(&skeleton).rest_world())
    });
    c.bench_function("baseline: BoneMap::resolve 200-joint rig", |b| {
        b.iter(|| BoneMap::resolve(black_box(&map), black_box(&skeleton)).expect("map fits"))
    });
}

criterion_group!(recognize_benches, benches);
criterion_main!(recognize_benches);
