//! VR devices into the running bridge: VRChat-style OSC trackers (with hands
//! assigned, and with the default map, which has none) and VMC's
//! `/VMC/Ext/Hmd|Con|Tra/Pos`, both encoded by rosc (not our encoder), become
//! performers solved by VR-mode IK, whose poses a WebSocket client reads; VRChat
//! trackers sent by python-osc one message per datagram are solved once per tick.

use std::net::UdpSocket;
use std::time::Duration;

use mocap_bridge::humanoid::{CustomNames, HumanBone};
use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use serde_json::json;
use tungstenite::Message;

use crate::common::pose_json::decode_pose_json;
use crate::harness::{Bridge, free_tcp_port, free_udp_port, python_osc, quiet_config, repo};
use crate::websocket::{connect, request};

fn message(addr: &str, args: Vec<OscType>) -> OscPacket {
    OscPacket::Message(OscMessage {
        addr: addr.to_owned(),
        args,
    })
}

fn bundle(content: Vec<OscPacket>) -> Vec<u8> {
    rosc::encoder::encode(&OscPacket::Bundle(OscBundle {
        timetag: OscTime::from((0, 1)),
        content,
    }))
    .expect("encodes")
}

fn floats(v: &[f32]) -> Vec<OscType> {
    v.iter().map(|f| OscType::Float(*f)).collect()
}

#[test]
fn vrchat_trackers_and_vmc_devices_become_vr_performers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (vmc_port, vrchat_port, ws_port) = (free_udp_port(), free_udp_port(), free_tcp_port());
    let body_port = free_udp_port();
    let mut config = quiet_config();
    config["vmcInputs"] = json!([{"listen": format!("127.0.0.1:{vmc_port}"), "performer": "vmc"}]);
    config["vrchatInputs"] = json!([{
        "listen": format!("127.0.0.1:{vrchat_port}"), "performer": "vrchat",
        "trackers": {"1": "hips", "7": "leftHand", "8": "rightHand"}
    }, {
        "listen": format!("127.0.0.1:{body_port}"), "performer": "body"
    }]);
    config["websocket"] = json!({"listen": format!("127.0.0.1:{ws_port}")});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let stream = std::net::TcpStream::connect(("127.0.0.1", ws_port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let (mut client, _) =
        tungstenite::client::client(format!("ws://127.0.0.1:{ws_port}/"), stream).expect("ws");

    let sender = UdpSocket::bind("127.0.0.1:0").expect("bind");
    for i in 0..30 {
        let sway = i as f32 * 0.002;
        // VRChat: Unity axes (left-handed, +Z forward), Euler degrees.
        let vrchat = bundle(vec![
            message(
                "/tracking/trackers/head/position",
                floats(&[sway, 1.6, 0.0]),
            ),
            message("/tracking/trackers/head/rotation", floats(&[0.0, 0.0, 0.0])),
            message("/tracking/trackers/1/position", floats(&[0.0, 0.95, 0.0])),
            message("/tracking/trackers/1/rotation", floats(&[0.0, 0.0, 0.0])),
            message("/tracking/trackers/7/position", floats(&[-0.6, 1.3, 0.1])),
            message("/tracking/trackers/7/rotation", floats(&[0.0, 0.0, 0.0])),
            message(
                "/tracking/trackers/8/position",
                floats(&[0.6, 1.3 + sway, 0.1]),
            ),
            message("/tracking/trackers/8/rotation", floats(&[0.0, 0.0, 0.0])),
        ]);
        sender
            .send_to(&vrchat, ("127.0.0.1", vrchat_port))
            .expect("send");
        // Body trackers alone on the default map (1 hips, 2 and 3 feet, 4 chest,
        // 5 and 6 knees): no hands, so the arms hang.
        let mut body = vec![
            message(
                "/tracking/trackers/head/position",
                floats(&[0.0, 1.6, sway]),
            ),
            message("/tracking/trackers/head/rotation", floats(&[0.0, 0.0, 0.0])),
        ];
        for (n, at) in [
            (1, [0.0, 0.95, 0.0]),
            (2, [-0.1, 0.08, 0.0]),
            (3, [0.1, 0.08, 0.0]),
            (4, [0.0, 1.3, 0.0]),
            (5, [-0.1, 0.5, 0.05]),
            (6, [0.1, 0.5, 0.05]),
        ] {
            body.push(message(
                &format!("/tracking/trackers/{n}/position"),
                floats(&at),
            ));
            body.push(message(
                &format!("/tracking/trackers/{n}/rotation"),
                floats(&[0.0, 0.0, 0.0]),
            ));
        }
        sender
            .send_to(&bundle(body), ("127.0.0.1", body_port))
            .expect("send");
        // VMC devices: serial, position, rotation (Unity axes).
        let device = |addr: &str, serial: &str, p: [f32; 3]| {
            let mut args = vec![OscType::String(serial.into())];
            args.extend(floats(&[p[0], p[1], p[2], 0.0, 0.0, 0.0, 1.0]));
            message(addr, args)
        };
        let vmc = bundle(vec![
            message("/VMC/Ext/T", floats(&[i as f32 / 60.0])),
            device("/VMC/Ext/Hmd/Pos", "HMD-1", [0.0, 1.65, sway]),
            device("/VMC/Ext/Con/Pos", "CTRL-A", [-0.55, 1.2, 0.2]),
            device("/VMC/Ext/Con/Pos", "CTRL-B", [0.55, 1.2, 0.2]),
            device("/VMC/Ext/Tra/Pos", "TRK-1", [0.1, 0.08, 0.0]),
        ]);
        sender.send_to(&vmc, ("127.0.0.1", vmc_port)).expect("send");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Both performers' poses reach the WebSocket client.
    let mut seen = std::collections::HashMap::new();
    let mut custom = CustomNames::default();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while seen.len() < 3 && std::time::Instant::now() < deadline {
        if let Ok(Message::Text(text)) = client.read()
            && let Ok((header, pose)) = decode_pose_json(&text, &mut custom)
        {
            assert!(pose.has(HumanBone::Hips) && pose.has(HumanBone::LeftLowerArm));
            seen.insert(header.performer.to_string(), header.seq);
        }
    }
    client
        .send(Message::text(
            json!({"type": "status", "id": 1}).to_string(),
        ))
        .expect("send");
    let status = loop {
        if let Ok(Message::Text(t)) = client.read() {
            let v: serde_json::Value = serde_json::from_str(&t).expect("json");
            if v["type"] == "status" {
                break v;
            }
        }
    };
    println!(
        "VR performers seen: {seen:?}; solver {}",
        status["status"]["solver"]
    );
    assert!(seen.contains_key("vrchat"), "{seen:?}");
    assert!(seen.contains_key("body"), "{seen:?}");
    assert!(seen.contains_key("vmc-vr"), "{seen:?}");
    assert_eq!(status["status"]["solver"]["errors"], 0, "{status}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn vrchat_bare_messages_are_solved_once_per_sender_tick() {
    let pythonpath = python_osc();
    let dir = tempfile::tempdir().expect("tempdir");
    let (vrchat_port, ws_port) = (free_udp_port(), free_tcp_port());
    // A VMC receiver that is there (its datagrams are not read).
    let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut config = quiet_config();
    config["vrchatInputs"] = json!([{
        "listen": format!("127.0.0.1:{vrchat_port}"), "performer": "vrchat",
        "trackers": {"1": "hips", "2": "leftFoot", "3": "rightFoot", "4": "chest",
                     "5": "leftKnee", "6": "rightKnee", "7": "leftHand", "8": "rightHand"}
    }]);
    config["vmcOutputs"] = json!([{"to": receiver.local_addr().expect("addr").to_string()}]);
    config["websocket"] = json!({"listen": format!("127.0.0.1:{ws_port}")});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let mut client = connect(ws_port, "?poses=none").expect("ws");

    // 60 Hz for 5 s: the head and trackers 1 to 8, position and rotation, each
    // message its own datagram.
    let sent = std::process::Command::new("python3")
        .arg(repo().join("tests/clients/vrchat_send.py"))
        .args(["127.0.0.1", &vrchat_port.to_string(), "60", "5"])
        .env("PYTHONPATH", &pythonpath)
        .output()
        .expect("python3");
    let printed = String::from_utf8_lossy(&sent.stdout);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let words: Vec<&str> = printed.split_whitespace().collect();
    let (ticks, messages): (u64, u64) = match words[..] {
        ["sent", ticks, "ticks", messages, "messages"] => (
            ticks.parse().expect("ticks"),
            messages.parse().expect("messages"),
        ),
        _ => panic!("vrchat_send.py printed {printed}"),
    };
    assert_eq!(messages, ticks * 18);

    // Every datagram read, every frame solved and sent: the counters stop moving
    // (or, should loopback lose a datagram, give up waiting and judge the counts).
    let mut status = request(&mut client, json!({"type": "status", "id": 1}));
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(300));
        let next = request(&mut client, json!({"type": "status", "id": 2}));
        let read = next["status"]["inputs"][0]["packets"].as_u64() == Some(messages);
        if read && next["status"]["solver"] == status["status"]["solver"] {
            status = next;
            break;
        }
        status = next;
    }
    let s = &status["status"];
    let input = &s["inputs"][0];
    let output = s["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .find(|o| o["name"].as_str().is_some_and(|n| n.starts_with("vmc-out")))
        .expect("vmc-out");
    let solves = s["solver"]["frames"].as_u64().expect("solver frames");
    let vmc_frames = output["frames"].as_u64().expect("vmc frames");
    // A frame the output passed over for a newer one (a busy machine held its task
    // back) is counted, not sent.
    let passed_over = output["drops"].as_u64().expect("vmc drops");
    println!(
        "{ticks} ticks, {messages} datagrams: input {input}, solver {}, vmc-out {vmc_frames} \
         frames, {passed_over} passed over",
        s["solver"]
    );
    let within = |n: u64| n.abs_diff(ticks) * 50 <= ticks;
    assert!(within(solves), "{solves} solves for {ticks} ticks");
    assert!(
        within(vmc_frames + passed_over),
        "{vmc_frames} VMC frames and {passed_over} passed over for {ticks} ticks"
    );
    // Passing over is for a held-back moment, never the rule.
    assert!(
        vmc_frames * 2 >= ticks,
        "{vmc_frames} VMC frames sent for {ticks} ticks"
    );
    assert_eq!(input["bad"], 0, "{input}");
    assert_eq!(s["solver"]["errors"], 0, "{s}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn vmc_devices_sent_one_message_per_datagram_are_solved_once_per_tick() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (vmc_port, ws_port) = (free_udp_port(), free_tcp_port());
    let mut config = quiet_config();
    config["vmcInputs"] = json!([{"listen": format!("127.0.0.1:{vmc_port}"), "performer": "vmc"}]);
    config["websocket"] = json!({"listen": format!("127.0.0.1:{ws_port}")});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let mut client = connect(ws_port, "?poses=none").expect("ws");

    // Headset, two controllers and a tracker, each message in its own datagram,
    // 60 ticks (rosc encodes; Unity axes).
    let sender = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let ticks = 60u64;
    for i in 0..ticks {
        let sway = i as f32 * 0.002;
        let device = |addr: &str, serial: &str, p: [f32; 3]| {
            let mut args = vec![OscType::String(serial.into())];
            args.extend(floats(&[p[0], p[1], p[2], 0.0, 0.0, 0.0, 1.0]));
            rosc::encoder::encode(&message(addr, args)).expect("encodes")
        };
        for datagram in [
            device("/VMC/Ext/Hmd/Pos", "HMD-1", [0.0, 1.65, sway]),
            device("/VMC/Ext/Con/Pos", "CTRL-A", [-0.55, 1.2, 0.2]),
            device("/VMC/Ext/Con/Pos", "CTRL-B", [0.55, 1.2 + sway, 0.2]),
            device("/VMC/Ext/Tra/Pos", "TRK-1", [0.1, 0.08, 0.0]),
        ] {
            sender
                .send_to(&datagram, ("127.0.0.1", vmc_port))
                .expect("send");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut status = request(&mut client, json!({"type": "status", "id": 1}));
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(200));
        let next = request(&mut client, json!({"type": "status", "id": 2}));
        let read = next["status"]["inputs"][0]["packets"].as_u64() == Some(4 * ticks);
        let settled = next["status"]["solver"] == status["status"]["solver"];
        status = next;
        if read && settled {
            break;
        }
    }
    let s = &status["status"];
    println!("{ticks} ticks, 4 datagrams each: {s}");
    // Every tick is one frame of the `vmc-vr` performer, and one solve.
    assert_eq!(s["inputs"][0]["frames"], ticks, "{s}");
    assert_eq!(s["solver"]["frames"], ticks, "{s}");
    assert_eq!(s["solver"]["errors"], 0, "{s}");
    assert_eq!(s["inputs"][0]["bad"], 0, "{s}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}
