//! The avatar as the IK target, end to end: `mocap-bridge simulate` streams the
//! built-in lab19 walk over lab OSC into `run --avatar MODEL`; the poses come out
//! over VMC, read by the `vmc` crate; forward kinematics of the received poses on
//! that same model (its own bind pose through `FromNormalized`) must keep the feet
//! still while the *source's* feet stand (its contacts, found from the source
//! motion alone by `eval::contacts::SourceContacts`) and the toes out of the
//! floor. The same run with mocap IK turned off is printed beside it, and the
//! same run with the avatar given only as the VMC output's (`vmcOutputs[0].avatar`,
//! the receiver's avatar), which must solve as `--avatar` does and send that
//! avatar's bone offsets.
//!
//! Avatars from `../shared/assets/vrm` whose legs differ from lab19's (hips
//! 0.93 m): Example.vrm (VRM 1.0, hips 0.85 m) as every performer's avatar, and
//! Godette (VRM 0.x, facing -Z, hips 0.646 m) as one performer's.

use std::net::UdpSocket;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use glam::{Quat, Vec3};
use mocap_bridge::eval::SourceContacts;
use mocap_bridge::formats::{self, LoadOptions, inspect};
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::ik::body::{BodyFrame, BodyProportions};
use mocap_bridge::ik::mocap::MocapIkConfig;
use mocap_bridge::protocol::vmc::bone_from_unity;
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, SourceRig, TargetRig, ToNormalized};
use mocap_bridge::takes::demo;

use crate::harness::{Bridge, free_udp_port, quiet_config};
use crate::vmc::{VmcFrame, receive_vmc_while};

/// Loops of the built-in performance `simulate` plays (4 s each).
const LOOPS: u32 = 2;

/// The source: lab19, its walk, and its feet's contacts per frame.
struct Source {
    times: Vec<f32>,
    contacts: Vec<[bool; 2]>,
}

fn source() -> Source {
    let rig =
        formats::skeleton_json::embedded_rig("lab19", mocap_bridge::skeleton::builtin::LAB19_JSON);
    let map = rig.bone_map.clone().expect("lab19 has its map");
    let lab19 = MappedSkeleton::new(rig.skeleton, &map).expect("lab19 maps");
    let motion = demo::lab19_performance(&lab19, LOOPS);
    let rig = SourceRig::new(&lab19);
    let body = BodyProportions::new(&lab19);
    let mut contacts = SourceContacts::with_capacity(motion.frame_count());
    let (mut pose, mut frame) = (HumanoidPose::default(), BodyFrame::default());
    for f in motion.frames() {
        ToNormalized {
            source: &rig,
            local_rotations: f.rotations,
            local_translations: f.translations,
            pose: &mut pose,
        }
        .run()
        .expect("lab19 frame");
        frame.update(&body, &pose);
        contacts.push(&frame, &body);
    }
    let times = motion.times().to_vec();
    contacts.finish(&body, &times, &MocapIkConfig::default());
    Source {
        times,
        contacts: contacts.contacts,
    }
}

/// An avatar model as the bridge maps it, for forward kinematics.
struct Model {
    mapped: MappedSkeleton,
    target: TargetRig,
    /// Foot (ankle) and toe joints, left then right (the ankle for a foot without
    /// toes).
    feet: [usize; 2],
    toes: [usize; 2],
    /// The floor under its T-pose, model y (its hips height below the hips).
    floor: f32,
}

fn model(path: &Path) -> Model {
    let rig = formats::load_rig(path, &LoadOptions::default()).expect("avatar loads");
    let mapped = inspect::map_rig(&path.display().to_string(), &rig, None).expect("avatar maps");
    let joint = |b: HumanBone| mapped.map.joint(b);
    let feet = [HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| joint(b).expect("feet"));
    let toes = [
        joint(HumanBone::LeftToes).unwrap_or(feet[0]),
        joint(HumanBone::RightToes).unwrap_or(feet[1]),
    ];
    let world = mapped.correction.t_pose_world(&mapped.skeleton);
    let hips = joint(HumanBone::Hips).expect("hips");
    let floor = world[hips].translation.y - mapped.rest_hips_height();
    Model {
        target: TargetRig::new(&mapped),
        mapped,
        feet,
        toes,
        floor,
    }
}

/// A VMC frame back into a normalized pose (glTF axes), its hips in the avatar's
/// metres as the bridge sends them for an avatar the user named.
fn pose_of(frame: &VmcFrame, rest_hips_height: f32) -> HumanoidPose {
    let mut pose = HumanoidPose::default();
    pose.rest_hips_height = rest_hips_height;
    for (name, position, rotation) in &frame.bones {
        let Some(bone) = bone_from_unity(name) else {
            continue;
        };
        // Unity's left-handed axes back to glTF's: the X flip is its own inverse.
        pose.set_rotation(
            bone,
            Quat::from_xyzw(rotation.x, -rotation.y, -rotation.z, rotation.w).normalize(),
        );
        if bone == HumanBone::Hips {
            pose.hips_position = Vec3::new(-position.x, position.y, position.z);
        }
    }
    pose
}

/// Foot skate during the source's contacts and the lowest toe, on the model.
#[derive(Debug, Clone, Copy)]
struct Feet {
    /// Frames received, of the source's.
    frames: usize,
    /// Foot-frames scored: the source's foot in contact on a frame and the one
    /// before, both received.
    contact_frames: usize,
    /// Mean and largest horizontal ankle motion over those, cm per frame.
    skate_cm: f32,
    max_skate_cm: f32,
    /// Lowest toe joint over every frame, cm above the model's floor.
    lowest_toe_cm: f32,
}

fn measure(source: &Source, model: &Model, frames: &[VmcFrame]) -> Feet {
    let n = source.times.len();
    let start = source.times[0];
    // Per source frame: the received ankles and toe heights.
    let mut seen: Vec<Option<([Vec3; 2], [f32; 2])>> = vec![None; n];
    let mut locals = vec![Quat::IDENTITY; model.mapped.skeleton.len()];
    let mut translations = model.mapped.skeleton.rest_translations();
    let hips = model.target.hips_joint();
    for frame in frames {
        let Some(t) = frame.time else { continue };
        let i = ((t * demo::FPS).round() as usize).min(n - 1);
        assert!(
            (source.times[i] - start - t).abs() < 1e-3,
            "a pose at {t} s is no frame of the source"
        );
        let pose = pose_of(frame, model.mapped.rest_hips_height());
        FromNormalized {
            target: &model.target,
            pose: &pose,
            local_rotations: &mut locals,
            hips_translation: &mut translations[hips],
        }
        .run()
        .expect("the pose fits the model");
        let world = model
            .mapped
            .skeleton
            .world_transforms(&locals, &translations);
        let at = |j: usize| Vec3::from(world[j].translation);
        seen[i] = Some((
            model.feet.map(at),
            model.toes.map(|j| at(j).y - model.floor),
        ));
    }
    let mut feet = Feet {
        frames: seen.iter().flatten().count(),
        contact_frames: 0,
        skate_cm: 0.0,
        max_skate_cm: 0.0,
        lowest_toe_cm: f32::INFINITY,
    };
    let mut sum = 0.0;
    for i in 0..n {
        let Some((ankles, toes)) = seen[i] else {
            continue;
        };
        feet.lowest_toe_cm = feet.lowest_toe_cm.min(toes[0].min(toes[1]) * 100.0);
        let Some((before, _)) = i.checked_sub(1).and_then(|p| seen[p]) else {
            continue;
        };
        for s in 0..2 {
            if source.contacts[i][s] && source.contacts[i - 1][s] {
                let d = ankles[s] - before[s];
                let skate = Vec3::new(d.x, 0.0, d.z).length() * 100.0;
                feet.contact_frames += 1;
                sum += skate;
                feet.max_skate_cm = feet.max_skate_cm.max(skate);
            }
        }
    }
    feet.skate_cm = sum / feet.contact_frames.max(1) as f32;
    feet
}

/// The largest difference, metres, between a bone's `/VMC/Ext/Bone/Pos` position
/// (its rest offset from its nearest ancestor the model has, Unity axes) in
/// `frame` and the same offset in `model`'s T-pose, over the bones the model has;
/// a bone the model lacks must not be sent.
fn rest_offset_error(model: &Model, frame: &VmcFrame) -> f32 {
    let world = model.mapped.correction.t_pose_world(&model.mapped.skeleton);
    let at = |b: HumanBone| {
        let joint = model.mapped.map.joint(b)?;
        Some(Vec3::from(world[joint].translation))
    };
    let mut worst = 0.0_f32;
    let mut compared = 0;
    for (name, position, _) in &frame.bones {
        let Some(bone) = bone_from_unity(name).filter(|b| *b != HumanBone::Hips) else {
            continue;
        };
        assert!(
            model.mapped.map.joint(bone).is_some(),
            "{name} sent, which the avatar does not have"
        );
        // From the nearest bone the avatar has (Example.vrm has no upperChest:
        // its neck and shoulders from the chest).
        let nearest = bone.parent_in(|b| model.mapped.map.joint(b).is_some());
        let (Some(own), Some(parent)) = (at(bone), nearest.and_then(at)) else {
            continue;
        };
        let offset = own - parent;
        // glTF axes to Unity's: the X flip.
        let unity = Vec3::new(-offset.x, offset.y, offset.z);
        worst = worst.max((*position - unity).length());
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} bones to compare");
    worst
}

/// `run` with `args` (and mocap IK as `ik` says) while `simulate` streams the walk
/// as `subject`, the VMC output's entry given `output`'s keys too; what came out
/// over VMC.
fn stream(
    dir: &Path,
    ik: Option<bool>,
    subject: &str,
    args: &[&str],
    output: serde_json::Value,
) -> Vec<VmcFrame> {
    let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let lab_in = free_udp_port();
    let mut config = quiet_config();
    config["labInputs"] =
        serde_json::json!([{"listen": format!("127.0.0.1:{lab_in}"), "skeleton": "lab19"}]);
    let mut entry = output;
    entry["to"] = receiver.local_addr().expect("addr").to_string().into();
    config["vmcOutputs"] = serde_json::json!([entry]);
    if let Some(enabled) = ik {
        config["performerDefaults"] =
            serde_json::json!({"skeleton": {"mocapIk": {"enabled": enabled}}});
    }
    let bridge = Bridge::start(dir, &config, args);
    // In real time: a live output keeps the newest pose, and the walk's frames
    // are all wanted.
    let to = format!("127.0.0.1:{lab_in}");
    let loops = LOOPS.to_string();
    let (frames, ()) = receive_vmc_while(receiver, Duration::from_secs(2), || {
        crate::common::bridge_ok(&[
            "simulate",
            "--to",
            &to,
            "--subject",
            subject,
            "--loops",
            &loops,
        ]);
    });
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    frames
}

fn row(what: &str, f: &Feet) -> String {
    format!(
        "{what:<8} {:>6} {:>8} {:>10.3} {:>9.3} {:>10.2}",
        f.frames, f.contact_frames, f.skate_cm, f.max_skate_cm, f.lowest_toe_cm
    )
}

#[test]
fn simulate_into_run_avatar_keeps_the_feet_planted_on_that_avatar() {
    let Some(assets) = mocap_bridge::assets::assets_dir() else {
        return;
    };
    let source = source();
    let n = source.times.len();
    // Foot-frames in contact on a frame and the one before: what skate is scored on.
    let source_contacts: usize = source
        .contacts
        .windows(2)
        .map(|c| (0..2).filter(|&s| c[0][s] && c[1][s]).count())
        .sum();
    println!(
        "source: built-in lab19 walk, {n} frames at {} fps, {source_contacts} foot-frames in contact (and the frame before)",
        demo::FPS
    );
    assert!(source_contacts > 0, "the walk stands on its feet at times");
    let dir = tempfile::tempdir().expect("tempdir");
    for (file, subject, every) in [
        ("vrm/Example.vrm", "subject-1", true),
        ("vrm/Godette_vrm_v4.vrm", "lab", false),
    ] {
        let path = assets.join(file);
        let model = model(&path);
        let avatar = path.display().to_string();
        // `--avatar FILE` for every performer, `--avatar NAME=FILE` for one; as the
        // receiver's, the output showing the first performer or naming it.
        let (arg, shows) = if every {
            (avatar.clone(), serde_json::Value::Null)
        } else {
            (format!("{subject}={avatar}"), subject.into())
        };
        let given = serde_json::json!({});
        let on = measure(
            &source,
            &model,
            &stream(
                dir.path(),
                None,
                subject,
                &["--avatar", &arg],
                given.clone(),
            ),
        );
        let off = measure(
            &source,
            &model,
            &stream(dir.path(), Some(false), subject, &["--avatar", &arg], given),
        );
        let received = stream(
            dir.path(),
            None,
            subject,
            &[],
            serde_json::json!({"performer": shows, "avatar": avatar}),
        );
        let receiver = measure(&source, &model, &received);
        let offsets_m = received
            .iter()
            .map(|frame| rest_offset_error(&model, frame))
            .fold(0.0, f32::max);
        println!(
            "{file} (hips {:.3} m), run --avatar {} / vmcOutputs[0].avatar with performer {shows}:",
            model.mapped.rest_hips_height(),
            if every { "FILE" } else { "NAME=FILE" }
        );
        println!("mocap IK frames contacts skate cm/f  max cm/f  lowest toe cm");
        println!("{}", row("on", &on));
        println!("{}", row("off", &off));
        println!("{}", row("receiver", &receiver));
        println!(
            "receiver's bone offsets against {file}'s T-pose: largest difference {:.6} mm",
            offsets_m * 1000.0
        );
        // Enough to measure: a live output passes over a pose when a newer one
        // waits (a busy machine), never the run as a whole.
        for f in [&on, &off, &receiver] {
            assert!(f.frames * 2 >= n, "{file}: {} of {n} frames", f.frames);
            assert!(f.contact_frames * 2 >= source_contacts, "{file}: {f:?}");
        }
        for f in [&on, &receiver] {
            assert!(f.skate_cm <= 0.5, "{file}: skate {f:?}");
            assert!(f.lowest_toe_cm >= -1.0, "{file}: toe {f:?}");
            // The IK ran: the feet slide less than without it.
            assert!(f.max_skate_cm < off.max_skate_cm, "{file}: {f:?} {off:?}");
        }
        // The receiver is sent the bone offsets of the avatar it shows.
        assert!(offsets_m < 1e-4, "{file}: offsets {offsets_m} m");
    }
}

#[test]
fn an_avatar_file_that_cannot_be_used_stops_run_with_one_line_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_a_model = dir.path().join("notes.vrm");
    std::fs::write(&not_a_model, "not a model").expect("write");
    for (arg, file) in [
        ("missing.vrm".to_owned(), "missing.vrm".to_owned()),
        (
            format!("alice={}", not_a_model.display()),
            not_a_model.display().to_string(),
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
            .args(["run", "--avatar", &arg, "--duration", "5"])
            .current_dir(dir.path())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].starts_with("error: run --avatar: ") && lines[0].contains(&file),
            "{stderr}"
        );
        // Nothing started: no ready line.
        assert!(!String::from_utf8_lossy(&out.stdout).contains("ready:"));
    }
}
