//! VMC in from python-osc, VMC out read by the `vmc` crate: the bones that come out
//! are the recording's, within 0.01°.

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use mocap_bridge::formats::vrma;
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::protocol::vmc::{
    bone_from_unity, to_unity_position, to_unity_rotation, unity_name,
};
use mocap_bridge::takes::replay::Replay;

use crate::common::angle_deg;
use crate::harness::{Bridge, free_udp_port, python_osc, quiet_config, repo};
use crate::nats::count_in;

/// The sample recording as (time, pose) frames.
pub fn sample_frames() -> Vec<(f32, HumanoidPose)> {
    let animation =
        vrma::load(&repo().join("recordings/walk-and-wave.vrma"), None).expect("sample");
    let mut replay = Replay::from_vrma(animation, None);
    let mut frames = Vec::new();
    let mut pose = HumanoidPose::default();
    while let Some(t) = replay.next_frame(&mut pose) {
        frames.push((t, pose));
    }
    frames
}

/// One frame as the `vmc` crate reads it: time, bones by Unity name, blends.
#[derive(Debug, Default)]
pub struct VmcFrame {
    pub time: Option<f32>,
    pub bones: Vec<(String, Vec3, Quat)>,
    pub blends: Vec<(String, f32)>,
}

/// Adds what the `vmc` crate parses in one datagram to `frames` (a frame starts
/// at its `T`).
fn parse_vmc(datagram: &[u8], frames: &mut Vec<VmcFrame>) {
    let (_, packet) = rosc::decoder::decode_udp(datagram).expect("an OSC packet");
    for message in vmc::parse(packet).expect("VMC messages") {
        match message {
            vmc::Message::Time(t) => frames.push(VmcFrame {
                time: Some(t.0),
                ..VmcFrame::default()
            }),
            vmc::Message::BoneTransform(b) => {
                if let Some(f) = frames.last_mut() {
                    f.bones.push((
                        b.bone,
                        Vec3::new(b.position.x, b.position.y, b.position.z),
                        Quat::from_xyzw(b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w),
                    ));
                }
            }
            vmc::Message::BlendShape(b) => {
                if let Some(f) = frames.last_mut() {
                    f.blends.push((b.key, b.value));
                }
            }
            _ => {}
        }
    }
}

/// Receives VMC datagrams on `socket` until `quiet` passes with nothing new, and
/// groups what the `vmc` crate parses into frames.
pub fn receive_vmc(socket: &UdpSocket, quiet: Duration) -> Vec<VmcFrame> {
    socket.set_read_timeout(Some(quiet)).expect("timeout");
    let mut frames: Vec<VmcFrame> = Vec::new();
    let mut buf = vec![0u8; 65_536];
    while let Ok(n) = socket.recv(&mut buf) {
        parse_vmc(&buf[..n], &mut frames);
    }
    frames
}

/// Runs `send` (a sender streaming into the bridge) while receiving VMC on
/// `socket`, however long the sender takes to start, until `quiet` passes with
/// nothing new after `send` has returned; the frames (as `receive_vmc` groups
/// them) and what `send` returned. Read while the sender sends: a socket buffer
/// holds far less than a take.
pub fn receive_vmc_while<T>(
    socket: UdpSocket,
    quiet: Duration,
    send: impl FnOnce() -> T,
) -> (Vec<VmcFrame>, T) {
    let sent = Arc::new(AtomicBool::new(false));
    let receiving = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            socket
                .set_read_timeout(Some(Duration::from_millis(50)))
                .expect("timeout");
            let mut frames: Vec<VmcFrame> = Vec::new();
            let mut buf = vec![0u8; 65_536];
            let mut quiet_since: Option<Instant> = None;
            loop {
                match socket.recv(&mut buf) {
                    Ok(n) => {
                        parse_vmc(&buf[..n], &mut frames);
                        quiet_since = None;
                    }
                    Err(_) if sent.load(Relaxed) => {
                        if quiet_since.get_or_insert_with(Instant::now).elapsed() >= quiet {
                            return frames;
                        }
                    }
                    Err(_) => {}
                }
            }
        })
    };
    let result = send();
    sent.store(true, Relaxed);
    (receiving.join().expect("the receiver"), result)
}

/// Worst bone angle (degrees) and hips distance (metres) between a received frame
/// and a pose.
pub fn compare(frame: &VmcFrame, pose: &HumanoidPose) -> (f32, f32) {
    let (mut worst, mut hips) = (0.0f32, 0.0f32);
    for (bone, q) in pose.bones() {
        let name = unity_name(bone);
        let (_, position, rotation) = frame
            .bones
            .iter()
            .find(|(n, _, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} not received"));
        // Back from Unity's left-handed axes (the X flip is its own inverse).
        let back = Quat::from_xyzw(rotation.x, -rotation.y, -rotation.z, rotation.w);
        for axis in [Vec3::X, Vec3::Y] {
            worst = worst.max(angle_deg(q * axis, back * axis));
        }
        if name == "Hips" {
            let p = Vec3::new(-position.x, position.y, position.z);
            hips = hips.max(p.distance(pose.hips_position));
        }
    }
    (worst, hips)
}

#[test]
fn vmc_from_python_osc_comes_out_as_the_recording_read_by_the_vmc_crate() {
    let pythonpath = python_osc();
    let dir = tempfile::tempdir().expect("tempdir");
    let frames = sample_frames();
    // The frames as a VMC sender has them: Unity-space bones, VRM 0 blend names.
    let json: Vec<serde_json::Value> = frames
        .iter()
        .enumerate()
        .map(|(i, (t, pose))| {
            let bones: Vec<serde_json::Value> = pose
                .bones()
                .map(|(b, q)| {
                    let p = if b == mocap_bridge::humanoid::HumanBone::Hips {
                        to_unity_position(pose.hips_position)
                    } else {
                        Vec3::ZERO
                    };
                    let q = to_unity_rotation(q);
                    serde_json::json!([unity_name(b), p.x, p.y, p.z, q.x, q.y, q.z, q.w])
                })
                .collect();
            let joy = (i % 100) as f32 / 100.0;
            serde_json::json!({"t": t, "bones": bones, "blends": [["Joy", joy]]})
        })
        .collect();
    let frames_path = dir.path().join("frames.json");
    std::fs::write(&frames_path, serde_json::to_string(&json).expect("json")).expect("write");
    assert!(bone_from_unity("LeftUpperArm").is_some());

    let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let vmc_in = free_udp_port();
    let mut config = quiet_config();
    config["vmcInputs"] =
        serde_json::json!([{"listen": format!("127.0.0.1:{vmc_in}"), "performer": "python"}]);
    config["vmcOutputs"] = serde_json::json!([{"to": receiver.local_addr().expect("addr").to_string(), "names": "vrm1"}]);
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let (received, sent) = receive_vmc_while(receiver, Duration::from_secs(2), || {
        std::process::Command::new("python3")
            .arg(repo().join("tests/clients/vmc_send.py"))
            .arg(&frames_path)
            .args(["127.0.0.1", &vmc_in.to_string(), "0.004"])
            .env("PYTHONPATH", &pythonpath)
            .output()
            .expect("python3")
    });
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let (code, lines, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    let status = lines
        .iter()
        .rev()
        .find(|l| l.contains("solver:"))
        .expect("the final status line");
    let passed_over = count_in(status, "vmc-out", "drops");

    let (mut worst, mut hips, mut matched) = (0.0f32, 0.0f32, 0);
    for frame in &received {
        let t = frame.time.expect("time");
        let Some((i, (_, pose))) = frames
            .iter()
            .enumerate()
            .find(|(_, (ft, _))| (ft - t).abs() < 1e-6)
        else {
            panic!("a frame at t={t} that was never sent");
        };
        let (w, h) = compare(frame, pose);
        worst = worst.max(w);
        hips = hips.max(h);
        // VRM 0 `Joy` in, VRM 1 `happy` out, same weight.
        let joy = (i % 100) as f32 / 100.0;
        assert!(
            frame
                .blends
                .iter()
                .any(|(k, v)| k == "happy" && (v - joy).abs() < 1e-6),
            "{:?}",
            frame.blends
        );
        matched += 1;
    }
    println!(
        "python-osc → bridge → vmc crate: {matched}/{} frames ({passed_over} passed over for a \
         newer one), worst bone {worst:.6}°, hips {:.6} mm",
        frames.len(),
        hips * 1e3
    );
    assert!(worst <= 0.01, "{worst}°");
    assert!(hips <= 1e-4, "{hips} m");
    // Paced at 4 ms, nothing should be lost on loopback; allow a few for a busy
    // machine. A frame the output passed over for a newer one (a busy machine held
    // its task back) is no loss: it is counted.
    assert!(
        matched + passed_over as usize >= frames.len() * 9 / 10,
        "{matched} and {passed_over} passed over, of {}",
        frames.len()
    );
    // Passing over is for a held-back moment, never the rule.
    assert!(
        matched >= frames.len() / 2,
        "{matched} of {} sent, {passed_over} passed over",
        frames.len()
    );
}

/// A VMC output whose receiver is not listening is not failing: the refusals are
/// counted apart from errors, and the log says so once.
#[test]
fn a_receiver_not_listening_is_no_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let to = format!("127.0.0.1:{}", free_udp_port());
    let mut config = quiet_config();
    config["vmcOutputs"] = serde_json::json!([{ "to": to }]);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let bridge = Bridge::start(
        dir.path(),
        &config,
        &["--replay", sample.to_str().expect("utf-8 path"), "--quiet"],
    );
    let (code, lines, stderr) = bridge.finish();
    assert_eq!(code, 0, "{stderr}");
    let status = lines.last().expect("the final status line");
    let vmc_out = status
        .split("; ")
        .find(|part| part.starts_with("vmc-out:"))
        .unwrap_or_else(|| panic!("no vmc-out in {status}"));
    assert!(
        vmc_out.contains(" 0 errors") && vmc_out.contains("with no receiver listening"),
        "{vmc_out}"
    );
    assert_eq!(
        stderr.matches("no receiver listening").count(),
        1,
        "{stderr}"
    );
    // The ready line is printed once, on stdout, not logged as well.
    assert!(!stderr.contains("ready:"), "{stderr}");
}
