//! One input cannot starve the others: a flood of maximum-size lab OSC datagrams
//! (each a valid frame of thousands of joint messages) on the lab port while a
//! replay streams leaves the replayed performer's output whole, second by second.

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use serde_json::json;

use crate::harness::{Bridge, alone, free_udp_port, quiet_config, repo};

/// A lab OSC datagram of nearly 64 KiB: one lab19 frame whose joints are sent
/// again and again (every one valid), as costly to read as a datagram can be.
fn largest_lab_datagram(frame: i32) -> Vec<u8> {
    let message = |addr: &str, args: Vec<OscType>| {
        OscPacket::Message(OscMessage {
            addr: addr.into(),
            args,
        })
    };
    let mut content = vec![message(
        "/lab/frame",
        vec![
            "flood".into(),
            OscType::Int(frame),
            OscType::Double(f64::from(frame) / 120.0),
            OscType::Int(0),
            OscType::Int(1),
        ],
    )];
    let joints = [
        "Hips",
        "Chest",
        "Chest2",
        "LeftHip",
        "LeftKnee",
        "RightHip",
        "RightKnee",
    ];
    let f = OscType::Float;
    // Bundle elements: a 4-byte size each, then the message.
    let size = |m: &OscPacket| 4 + rosc::encoder::encode(m).map_or(0, |b| b.len());
    let mut room = 65_000 - 16 - size(&content[0]);
    for i in 0.. {
        let joint = message(
            "/lab/joint",
            vec![joints[i % joints.len()].into(), f(1.0), f(2.0), f(3.0)],
        );
        if size(&joint) > room {
            break;
        }
        room -= size(&joint);
        content.push(joint);
    }
    let bundle = OscPacket::Bundle(OscBundle {
        timetag: OscTime::from((0, 1)),
        content,
    });
    rosc::encoder::encode(&bundle).expect("an OSC bundle")
}

#[test]
fn a_lab_port_flood_leaves_the_other_performers_frames_whole() {
    // The flood fills the machine, and the frames out per half second are counted
    // against the wall clock: no other test's bridge runs meanwhile.
    let _alone = alone();
    let dir = tempfile::tempdir().expect("tempdir");
    let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let lab = free_udp_port();
    let mut config = quiet_config();
    config["labInputs"] = json!([{"listen": format!("127.0.0.1:{lab}")}]);
    config["vmcOutputs"] = json!([{
        "to": receiver.local_addr().expect("addr").to_string(),
        "performer": "walk-and-wave"
    }]);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let bridge = Bridge::start(dir.path(), &config, &["--replay", sample, "--loop"]);

    // Frames out per half second, for 6 s: 1 s before the flood, 4 s of flood, 1 s after.
    let flooding = Arc::new(AtomicBool::new(false));
    let flood = {
        let flooding = flooding.clone();
        std::thread::spawn(move || {
            let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
            let datagrams: Vec<Vec<u8>> = (0..120).map(largest_lab_datagram).collect();
            let mut sent = 0u64;
            while !flooding.load(Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            while flooding.load(Relaxed) {
                let datagram = &datagrams[sent as usize % datagrams.len()];
                let _ = socket.send_to(datagram, ("127.0.0.1", lab));
                sent += 1;
            }
            sent
        })
    };
    receiver
        .set_read_timeout(Some(Duration::from_millis(20)))
        .expect("timeout");
    let mut buf = vec![0u8; 65_536];
    let mut windows = vec![0u32; 12];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(6) {
        let at = started.elapsed().as_secs_f64();
        flooding.store((1.0..5.0).contains(&at), Relaxed);
        if let Ok(n) = receiver.recv(&mut buf) {
            // One frame per datagram bundle that ends with the frame's time.
            let is_frame = buf[..n].windows(11).any(|w| w == b"/VMC/Ext/T\0");
            let window = ((started.elapsed().as_secs_f64() * 2.0) as usize).min(11);
            windows[window] += u32::from(is_frame);
        }
    }
    flooding.store(false, Relaxed);
    let sent = flood.join().expect("flood");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    println!(
        "lab flood: {sent} datagrams of 64 KiB in 4 s; replayed performer's frames out per 0.5 s: {windows:?}"
    );
    // 30 frames each half second at 60 Hz; the first and last windows are partial.
    let during = &windows[2..10];
    let lowest = during.iter().copied().min().unwrap_or(0);
    let total: u32 = during.iter().sum();
    assert!(
        lowest >= 24,
        "a half second with {lowest} frames: {windows:?}"
    );
    assert!(
        total >= 8 * 30 * 95 / 100,
        "{total} of 240 frames: {windows:?}"
    );
}
