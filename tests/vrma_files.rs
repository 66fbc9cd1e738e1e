//! `.vrma` round trips on real data: a CMU capture written as `.vrma` and read back
//! lands every mapped joint where the BVH puts it; other people's `.vrma` files read,
//! written again and read again are unchanged.

mod common;

use glam::{Quat, Vec3};
use mocap_bridge::formats::glb::GlbFile;
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::vrma::{self, VrmaRest, VrmaWriter};
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig};
use mocap_bridge::takes::replay::Replay;

fn replay_into_bytes(replay: &mut Replay, rest: VrmaRest, names: &CustomNames) -> Vec<u8> {
    let mut writer = VrmaWriter::new(rest, "take");
    let mut pose = HumanoidPose::default();
    while let Some(t) = replay.next_frame(&mut pose) {
        writer.push(t, &pose, names).unwrap();
    }
    writer.to_bytes()
}

/// Mapped joints below a non-humanoid joint that the capture animates (CMU's
/// `Neck1`, between the humanoid neck and head). The VRM humanoid has no bone for
/// it: its rotation is folded into the child bone, which keeps the child's
/// orientation but cannot keep its position.
fn below_animated_extra_joints(
    m: &MappedSkeleton,
    motion: &mocap_bridge::formats::Motion,
) -> Vec<usize> {
    let rest = m.skeleton.rest_rotations();
    let animated: Vec<usize> = (0..m.skeleton.len())
        .filter(|&j| m.map.bone_of(j).is_none())
        .filter(|&j| {
            motion
                .frames()
                .any(|f| f.rotations[j].angle_between(rest[j]) > 1e-4)
        })
        .collect();
    m.map
        .pairs()
        .map(|(_, j)| j)
        .filter(|&j| animated.iter().any(|&a| m.skeleton.is_ancestor(a, j)))
        .collect()
}

#[test]
fn cmu_walk_through_vrma_puts_every_mapped_joint_back_within_a_millimetre() {
    let Some(assets) = common::assets() else {
        return;
    };
    let path = assets.join("bvh/cmu_12_01_walk.bvh");
    let rig = load_rig(&path, &LoadOptions::default()).unwrap();
    let map = choose_map(&rig, None).unwrap();
    let mapped = MappedSkeleton::new(rig.skeleton.clone(), &map.map).unwrap();
    let motion = &rig.clips[0].motion;
    let mut replay = Replay::from_rig(&mapped, motion.clone(), None);
    let bytes = replay_into_bytes(
        &mut replay,
        VrmaRest::from_mapped(&mapped),
        &CustomNames::default(),
    );
    let animation = vrma::parse(&bytes, &path.with_extension("vrma"), None).unwrap();

    let excluded = below_animated_extra_joints(&mapped, motion);
    let names: Vec<&str> = excluded
        .iter()
        .map(|&j| mapped.skeleton.joints()[j].name.as_str())
        .collect();
    assert_eq!(
        names,
        ["Head"],
        "only the head hangs below an animated extra joint (Neck1)"
    );
    let target = TargetRig::new(&mapped);
    let hips = target.hips_joint();
    let mut out = vec![Quat::IDENTITY; mapped.skeleton.len()];
    let (mut worst, mut head_worst) = (0.0f32, 0.0f32);
    for (i, frame) in motion.frames().enumerate() {
        let t = motion.times()[i];
        let mut pose = HumanoidPose::default();
        animation.sample(t, &mut pose);
        let mut hips_translation = Vec3::ZERO;
        FromNormalized {
            target: &target,
            pose: &pose,
            local_rotations: &mut out,
            hips_translation: &mut hips_translation,
        }
        .run()
        .unwrap();
        let want = mapped
            .skeleton
            .world_transforms(frame.rotations, frame.translations);
        let got = common::forward(&mapped.skeleton, &out, hips, hips_translation);
        for (_, joint) in mapped.map.pairs() {
            let d =
                Vec3::from(want[joint].translation).distance(Vec3::from(got[joint].translation));
            if excluded.contains(&joint) {
                head_worst = head_worst.max(d);
                // Its orientation is kept exactly, though.
                let (w, g) = (
                    want[joint].to_scale_rotation_translation().1,
                    got[joint].to_scale_rotation_translation().1,
                );
                assert!(
                    common::angle_deg(w * Vec3::Z, g * Vec3::Z) < 0.01
                        && common::angle_deg(w * Vec3::Y, g * Vec3::Y) < 0.01
                );
            } else {
                worst = worst.max(d);
            }
        }
    }
    println!(
        "cmu_12_01_walk -> .vrma -> back: {} frames, worst joint {:.4} mm (head, below CMU's extra neck joint: {:.1} mm)",
        motion.frame_count(),
        worst * 1e3,
        head_worst * 1e3
    );
    assert!(worst <= 1e-3, "{worst} m");
}

#[test]
fn other_peoples_vrma_files_survive_a_rewrite() {
    let Some(assets) = common::assets() else {
        return;
    };
    for name in ["test.vrma", "idle_loop.vrma", "nop.vrma"] {
        let path = assets.join("vrma").join(name);
        let first = vrma::load(&path, None).unwrap();
        let names = first.custom_names().clone();
        let mut replay = Replay::from_vrma(first.clone(), None);
        let bytes = replay_into_bytes(&mut replay, first.rest().clone(), &names);
        let second = vrma::parse(&bytes, &path, None).unwrap();
        assert_eq!(first.bones().count(), second.bones().count(), "{name}");
        assert!((first.duration - second.duration).abs() < 1e-6, "{name}");
        let mut worst = 0.0f32;
        for &t in replay.times() {
            let (mut a, mut b) = (HumanoidPose::default(), HumanoidPose::default());
            first.sample(t, &mut a);
            second.sample(t, &mut b);
            for (bone, q) in a.bones() {
                let r = b.rotation(bone).unwrap();
                worst = worst.max(common::angle_deg(q * Vec3::X, r * Vec3::X));
                worst = worst.max(common::angle_deg(q * Vec3::Y, r * Vec3::Y));
            }
            assert!(
                a.hips_position.distance(b.hips_position) < 1e-5,
                "{name} at {t}"
            );
            assert_eq!(a.expressions, b.expressions, "{name} at {t}");
            match (a.look_at, b.look_at) {
                (Some(x), Some(y)) => {
                    assert!((x.yaw - y.yaw).abs() < 1e-5 && (x.pitch - y.pitch).abs() < 1e-5)
                }
                (x, y) => assert_eq!(x.is_some(), y.is_some(), "{name}"),
            }
        }
        println!("{name}: rewritten, worst bone {worst:.6}°");
        assert!(worst <= 0.01, "{name}: {worst}°");
    }
}
