//! Our VMC output read by an implementation nobody here wrote: the `vmc` crate
//! (pykeio/vmc) parses every datagram, and the bones, hips and expressions it finds
//! are the poses we sent, back in glTF axes.

mod common;

use glam::{Quat, Vec3};
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt, Preset};
use mocap_bridge::protocol::vmc::{
    Datagrams, ExpressionNames, MAX_DATAGRAM, VmcEncoder, preset_name, unity_name,
};

/// Everything one frame's datagrams carry, as the `vmc` crate reads them.
#[derive(Default)]
struct Received {
    bones: Vec<(String, Vec3, Quat)>,
    blends: Vec<(String, f32)>,
    applied: bool,
    time: Option<f32>,
}

/// One frame's datagrams, as `send` encodes them.
fn encode(encoder: &VmcEncoder, t: f32, pose: &HumanoidPose, names: &CustomNames) -> Vec<Vec<u8>> {
    let mut out = Datagrams::new();
    encoder.encode_into(t, pose, names, &mut out);
    out.iter().map(<[u8]>::to_vec).collect()
}

fn receive(datagrams: &[Vec<u8>]) -> Received {
    let mut got = Received::default();
    for d in datagrams {
        assert!(d.len() <= MAX_DATAGRAM);
        let (_, packet) = rosc::decoder::decode_udp(d).expect("an OSC packet");
        for message in vmc::parse(packet).expect("VMC messages") {
            match message {
                vmc::Message::BoneTransform(b) => got.bones.push((
                    b.bone,
                    Vec3::new(b.position.x, b.position.y, b.position.z),
                    Quat::from_xyzw(b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w),
                )),
                vmc::Message::BlendShape(b) => got.blends.push((b.key, b.value)),
                vmc::Message::ApplyBlendShapes => got.applied = true,
                vmc::Message::Time(t) => got.time = Some(t.0),
                _ => {}
            }
        }
    }
    got
}

/// Back from Unity's left-handed space (the X flip is its own inverse).
fn from_unity(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

#[test]
fn the_vmc_crate_reads_back_every_bone_and_expression_we_send() {
    let mut names = CustomNames::default();
    let custom = names.slot_or_insert("Smirk").unwrap();
    let encoder = VmcEncoder::new(ExpressionNames::Vrm0, &VrmaRest::standard(0.9));
    let mut worst = 0.0f32;
    for i in 0..120 {
        let t = i as f32 / 60.0;
        let mut pose = mocap_bridge::takes::demo::pose_at(t, 0.9);
        pose.set_rotation(
            HumanBone::LeftThumbMetacarpal,
            Quat::from_rotation_z(0.3 * t),
        );
        pose.expressions
            .set_preset(Preset::Happy, (t * 0.5).min(1.0));
        pose.expressions.set_custom(custom, 0.25);
        pose.look_at = Some(LookAt {
            yaw: 0.2,
            pitch: -0.1,
        });
        let got = receive(&encode(&encoder, t, &pose, &names));
        assert_eq!(got.time, Some(t));
        for (bone, q) in pose.bones() {
            let name = unity_name(bone);
            let (_, position, rotation) = got
                .bones
                .iter()
                .find(|(n, _, _)| *n == name)
                .unwrap_or_else(|| panic!("{name} not received"));
            worst = worst.max(common::angle_deg(
                q * Vec3::X,
                from_unity(*rotation) * Vec3::X,
            ));
            worst = worst.max(common::angle_deg(
                q * Vec3::Y,
                from_unity(*rotation) * Vec3::Y,
            ));
            if bone == HumanBone::Hips {
                let back = Vec3::new(-position.x, position.y, position.z);
                assert!(back.distance(pose.hips_position) < 1e-6);
            }
        }
        // The thumb's metacarpal goes out under Unity's name for it.
        assert!(got.bones.iter().any(|(n, _, _)| n == "LeftThumbProximal"));
        // lookAt drives the eyes.
        let (_, _, eye) = got.bones.iter().find(|(n, _, _)| n == "LeftEye").unwrap();
        let gaze = from_unity(*eye) * Vec3::Z;
        assert!(
            gaze.abs_diff_eq(
                LookAt {
                    yaw: 0.2,
                    pitch: -0.1
                }
                .to_rotation()
                    * Vec3::Z,
                1e-5
            )
        );
        let happy = preset_name(Preset::Happy, ExpressionNames::Vrm0);
        assert!(
            got.blends
                .iter()
                .any(|(k, v)| k == happy && (*v - (t * 0.5).min(1.0)).abs() < 1e-6)
        );
        assert!(got.blends.iter().any(|(k, v)| k == "Smirk" && *v == 0.25));
        assert!(got.applied);
    }
    println!("120 frames through the vmc crate: worst bone {worst:.6}°");
    assert!(worst <= 0.01, "{worst}°");
}

#[test]
fn a_real_capture_survives_the_trip() {
    let Some(assets) = common::assets() else {
        return;
    };
    let rig = mocap_bridge::formats::load_rig(
        &assets.join("bvh/cmu_12_01_walk.bvh"),
        &Default::default(),
    )
    .unwrap();
    let map = mocap_bridge::formats::inspect::choose_map(&rig, None).unwrap();
    let mapped =
        mocap_bridge::retarget::MappedSkeleton::new(rig.skeleton.clone(), &map.map).unwrap();
    let mut replay =
        mocap_bridge::takes::replay::Replay::from_rig(&mapped, rig.clips[0].motion.clone(), None);
    let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::from_mapped(&mapped));
    let names = CustomNames::default();
    let mut pose = HumanoidPose::default();
    let mut worst = 0.0f32;
    let mut frames = 0;
    while let Some(t) = replay.next_frame(&mut pose) {
        let got = receive(&encode(&encoder, t, &pose, &names));
        for (bone, q) in pose.bones() {
            let name = unity_name(bone);
            let (_, _, rotation) = got.bones.iter().find(|(n, _, _)| *n == name).unwrap();
            worst = worst.max(common::angle_deg(
                q * Vec3::Z,
                from_unity(*rotation) * Vec3::Z,
            ));
            worst = worst.max(common::angle_deg(
                q * Vec3::Y,
                from_unity(*rotation) * Vec3::Y,
            ));
        }
        frames += 1;
    }
    println!("cmu_12_01_walk through the vmc crate: {frames} frames, worst bone {worst:.6}°");
    assert!(worst <= 0.01, "{worst}°");
}

/// Runs `mocap-bridge send ARGS --to <a socket of ours>` and returns every datagram
/// received: read until the sender has exited and the socket is drained, however
/// long it takes to start or pauses on a busy machine.
fn send_and_receive(args: &[&str]) -> Vec<Vec<u8>> {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_millis(100)))
        .unwrap();
    // Room for a take, so that a receiver held back loses nothing (the kernel caps
    // it at net.core.rmem_max).
    let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(1 << 22);
    let to = socket.local_addr().unwrap().to_string();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"));
    command.arg("send").args(args).args(["--to", &to]);
    let child = std::thread::spawn(move || command.output().unwrap());
    let mut datagrams = Vec::new();
    let mut buf = [0u8; 2048];
    let mut exited = false;
    loop {
        match socket.recv(&mut buf) {
            Ok(n) => datagrams.push(buf[..n].to_vec()),
            // Quiet once the sender had exited (all it sent was queued here by
            // then): the socket is drained.
            Err(_) if exited => break,
            Err(_) => exited = child.is_finished(),
        }
    }
    let out = child.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    datagrams
}

#[test]
fn send_streams_a_vrma_file_that_the_vmc_crate_reads_as_written() {
    let Some(assets) = common::assets() else {
        return;
    };
    let path = assets.join("vrma/test.vrma");
    // In real time (3 s): as fast as possible, 181 frames overflow the socket.
    let datagrams = send_and_receive(&[path.to_str().unwrap(), "--names", "vrm1"]);
    let animation = mocap_bridge::formats::vrma::load(&path, None).unwrap();
    let mut frames = 0;
    let mut current = Received::default();
    for d in &datagrams {
        let got = receive(std::slice::from_ref(d));
        if got.time.is_some() {
            current = got;
        } else {
            current.bones.extend(got.bones);
            current.blends.extend(got.blends);
            current.applied |= got.applied;
        }
        // test.vrma's frame ends with the expressions' Apply.
        if current.applied {
            let t = current.time.unwrap();
            let mut pose = HumanoidPose::default();
            animation.sample(t, &mut pose);
            let (_, _, q) = current
                .bones
                .iter()
                .find(|(n, _, _)| n == "RightUpperArm")
                .unwrap();
            let want = pose.rotation(HumanBone::RightUpperArm).unwrap();
            assert!(
                common::angle_deg(want * Vec3::Y, from_unity(*q) * Vec3::Y) < 0.01,
                "at {t}"
            );
            let happy = pose.expressions.preset(Preset::Happy).unwrap();
            assert!(
                current
                    .blends
                    .iter()
                    .any(|(k, v)| k == "happy" && (*v - happy).abs() < 1e-6)
            );
            frames += 1;
            current = Received::default();
        }
    }
    // 7 keys over 3 s streamed at 60 Hz.
    assert_eq!(frames, 181);
}

#[test]
fn send_plays_the_built_in_performance_in_real_time() {
    // Paced in real time, nothing is lost on loopback: every frame arrives.
    let datagrams = send_and_receive(&["--loops", "1"]);
    let frames = datagrams
        .iter()
        .filter(|d| receive(std::slice::from_ref(*d)).time.is_some())
        .count();
    assert_eq!(frames, 240);
}

/// Starts `mocap-bridge record -o out` on a free loopback port and waits until it
/// listens; returns the process, its address and its stdout.
#[cfg(unix)]
fn start_recorder(
    out: &std::path::Path,
) -> (
    std::process::Child,
    String,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut recorder = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["record", "-o", out.to_str().unwrap(), "--listen", &listen])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(recorder.stdout.take().unwrap());
    let mut first_line = String::new();
    stdout.read_line(&mut first_line).unwrap();
    assert!(first_line.starts_with("recording VMC on"), "{first_line}");
    (recorder, listen, stdout)
}

/// Stops the recorder as Ctrl-C does, once the sender has exited: it still reads
/// what its socket holds, so every datagram sent is in the take however long the
/// sender took (a `--duration` would have cut a sender slow to start on a busy
/// machine). Returns whether it exited 0.
#[cfg(unix)]
fn stop_recorder(recorder: &mut std::process::Child) -> bool {
    let pid = recorder.id().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(signalled.success());
    recorder.wait().unwrap().success()
}

#[cfg(unix)]
#[test]
fn send_then_record_gives_back_the_recording() {
    let Some(assets) = common::assets() else {
        return;
    };
    let source = assets.join("vrma/test.vrma");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recorded.vrma");
    let (mut recorder, listen, _stdout) = start_recorder(&out);
    let sent = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args([
            "send",
            source.to_str().unwrap(),
            "--to",
            &listen,
            "--fast",
            // At 2 frames per second: 7 frames, on the file's keys, which
            // the socket takes however fast they come.
            "--fps",
            "2",
            "--names",
            "vrm1",
        ])
        .output()
        .unwrap();
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(stop_recorder(&mut recorder));

    let original = mocap_bridge::formats::vrma::load(&source, None).unwrap();
    let recorded = mocap_bridge::formats::vrma::load(&out, None).unwrap();
    assert_eq!(recorded.frame_times(), original.frame_times());
    for &t in &original.frame_times() {
        let (mut a, mut b) = (HumanoidPose::default(), HumanoidPose::default());
        original.sample(t, &mut a);
        recorded.sample(t, &mut b);
        for (bone, q) in a.bones() {
            let r = b.rotation(bone).unwrap();
            assert!(
                common::angle_deg(q * Vec3::Y, r * Vec3::Y) < 0.01,
                "{bone} at {t}"
            );
            assert!(
                common::angle_deg(q * Vec3::Z, r * Vec3::Z) < 0.01,
                "{bone} at {t}"
            );
        }
        assert_eq!(
            a.expressions.preset(Preset::Happy),
            b.expressions.preset(Preset::Happy)
        );
        let (la, lb) = (a.look_at.unwrap(), b.look_at.unwrap());
        assert!(
            (la.yaw - lb.yaw).abs() < 1e-4 && (la.pitch - lb.pitch).abs() < 1e-4,
            "{la:?} {lb:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn record_counts_and_drops_bad_datagrams_and_keeps_the_rest() {
    use std::io::Read;
    let Some(assets) = common::assets() else {
        return;
    };
    let source = assets.join("vrma/test.vrma");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recorded.vrma");
    let (mut recorder, listen, mut stdout) = start_recorder(&out);
    // Garbage, a truncated bundle, NaN and an unknown bone, before the stream.
    let bad = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let nan = rosc::encoder::encode(&rosc::OscPacket::Message(rosc::OscMessage {
        addr: "/VMC/Ext/Bone/Pos".into(),
        args: std::iter::once(rosc::OscType::String("Hips".into()))
            .chain([f32::NAN; 7].map(rosc::OscType::Float))
            .collect(),
    }))
    .unwrap();
    let tail = rosc::encoder::encode(&rosc::OscPacket::Message(rosc::OscMessage {
        addr: "/VMC/Ext/Bone/Pos".into(),
        args: std::iter::once(rosc::OscType::String("Tail".into()))
            .chain([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0].map(rosc::OscType::Float))
            .collect(),
    }))
    .unwrap();
    for datagram in [
        &b"\x00\x01garbage"[..],
        b"#bundle\0\0\0\0\0\0\0\0\x01\0\0\0\x40/VMC",
        &nan,
        &tail,
    ] {
        bad.send_to(datagram, &listen).unwrap();
    }
    let sent = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["send", source.to_str().unwrap(), "--to", &listen, "--fast"])
        // 7 frames, at the file's keys.
        .args(["--fps", "2"])
        .output()
        .unwrap();
    assert!(sent.status.success());
    assert!(stop_recorder(&mut recorder));
    let mut summary = String::new();
    stdout.read_to_string(&mut summary).unwrap();
    assert!(summary.contains("wrote"), "{summary}");
    assert!(summary.contains("7 frames"), "{summary}");
    assert!(
        summary.contains("1 malformed, 1 unknown bones, 2 broken"),
        "{summary}"
    );
}

/// `send --loop` stopped as a user or a service manager stops it (Ctrl-C,
/// SIGTERM, SIGHUP) ends as a finished `send` does: exit 0 and its summary line.
#[cfg(unix)]
#[test]
fn send_loop_stopped_by_a_signal_prints_its_summary() {
    use std::io::{BufRead, Read};
    for signal in ["-INT", "-TERM", "-HUP"] {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        let to = socket.local_addr().unwrap().to_string();
        let mut sender = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
            .args(["send", "--loop", "--to", &to])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(sender.stdout.take().unwrap());
        let mut first_line = String::new();
        stdout.read_line(&mut first_line).unwrap();
        assert!(
            first_line.contains("looping until interrupted"),
            "{first_line}"
        );
        // Frames are going out.
        let mut buf = [0u8; 2048];
        socket.recv(&mut buf).expect("a datagram");
        let pid = sender.id().to_string();
        let signalled = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap();
        assert!(signalled.success());
        let status = sender.wait().unwrap();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        assert!(status.success(), "{signal}: {status}\n{rest}");
        let frames: u64 = rest
            .strip_prefix("sent ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{signal}: no summary: {rest:?}"));
        assert!(frames > 0, "{rest}");
        assert!(rest.contains("refused (no receiver listening)"), "{rest}");
        println!("after {signal}: {}", rest.trim_end());
    }
}
