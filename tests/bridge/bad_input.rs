//! Bad input from the network, one class at a time, over the real sockets: each
//! is counted and dropped, and the bridge keeps serving a well-behaved performer
//! on the same port. Counts are read from the WebSocket `status` reply.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::protocol::frame::{JointFrame, PerformerName};
use mocap_bridge::protocol::lab_osc::LabSkeleton;
use mocap_bridge::protocol::vmc::{Datagrams, ExpressionNames, VmcEncoder};
use serde_json::{Value, json};

use crate::harness::{Bridge, free_tcp_port, free_udp_port, quiet_config};

/// An OSC message: address, type tags and big-endian arguments, 4-byte padded.
fn osc(address: &str, tags: &str, args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let pad = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend_from_slice(s);
        out.push(0);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    };
    pad(&mut out, address.as_bytes());
    pad(&mut out, format!(",{tags}").as_bytes());
    for a in args {
        out.extend_from_slice(a);
    }
    out
}

fn padded(s: &str) -> Vec<u8> {
    let mut out = s.as_bytes().to_vec();
    out.push(0);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    out
}

/// A bone message with seven floats.
fn bone(name: &str, f: [f32; 7]) -> Vec<u8> {
    let name = padded(name);
    let floats: Vec<[u8; 4]> = f.iter().map(|v| v.to_be_bytes()).collect();
    let mut args: Vec<&[u8]> = vec![&name];
    args.extend(floats.iter().map(|b| &b[..]));
    osc("/VMC/Ext/Bone/Pos", "sfffffff", &args)
}

fn bundle(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"#bundle\0".to_vec();
    out.extend_from_slice(&1u64.to_be_bytes());
    for m in messages {
        out.extend_from_slice(&(m.len() as u32).to_be_bytes());
        out.extend_from_slice(m);
    }
    out
}

fn status(client: &mut tungstenite::WebSocket<std::net::TcpStream>) -> Value {
    client
        .send(tungstenite::Message::text(
            json!({"type": "status", "id": 1}).to_string(),
        ))
        .expect("send");
    loop {
        if let tungstenite::Message::Text(t) = client.read().expect("reply") {
            let v: Value = serde_json::from_str(&t).expect("json");
            if v["type"] == "status" {
                return v["status"].clone();
            }
        }
    }
}

fn input<'a>(status: &'a Value, prefix: &str) -> &'a Value {
    status["inputs"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|i| i["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
        })
        .unwrap_or_else(|| panic!("no input {prefix} in {status}"))
}

/// Polls the status until `done` holds (the bridge works asynchronously), for up
/// to a minute (a busy machine can hold the bridge back for long).
fn settle(
    client: &mut tungstenite::WebSocket<std::net::TcpStream>,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let s = status(client);
        if done(&s) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    status(client)
}

#[test]
fn bad_vmc_and_lab_datagrams_are_counted_and_good_performers_keep_flowing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (vmc_port, lab_port, ws_port) = (free_udp_port(), free_udp_port(), free_tcp_port());
    let mut config = quiet_config();
    config["vmcInputs"] = json!([{"listen": format!("127.0.0.1:{vmc_port}"), "performer": "vmc"}]);
    config["labInputs"] = json!([{"listen": format!("127.0.0.1:{lab_port}"), "skeleton": "lab19"}]);
    config["websocket"] = json!({"listen": format!("127.0.0.1:{ws_port}")});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let stream = std::net::TcpStream::connect(("127.0.0.1", ws_port)).expect("connect");
    let (mut client, _) =
        tungstenite::client::client(format!("ws://127.0.0.1:{ws_port}/?poses=none"), stream)
            .expect("websocket");

    // A good VMC sender and a bad one share the VMC port.
    let good = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let bad = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.95));
    let mut datagrams = Datagrams::new();
    let mut send_good = |i: usize| {
        let mut pose = mocap_bridge::takes::demo::pose_at(i as f32 / 60.0, 0.95);
        pose.expressions
            .set_preset(mocap_bridge::humanoid::Preset::Blink, 0.0);
        encoder.encode_into(
            i as f32 / 60.0,
            &pose,
            &CustomNames::default(),
            &mut datagrams,
        );
        for d in datagrams.iter() {
            good.send_to(d, ("127.0.0.1", vmc_port)).expect("send");
        }
    };
    let unit = [0.0, 0.9, 0.0, 0.0, 0.0, 0.0, 1.0];
    let cases: Vec<(&str, Vec<u8>, &str, u64)> = vec![
        // class, datagram, counter, how many it adds
        (
            "garbage",
            b"\x00\x01garbage that is not OSC".to_vec(),
            "bad",
            1,
        ),
        (
            "truncated bundle",
            {
                let mut b = bundle(&[bone("Hips", unit), bone("Spine", unit)]);
                b.truncate(b.len() - 9);
                b
            },
            "bad",
            1,
        ),
        (
            "NaN",
            bundle(&[bone("Spine", [0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 1.0])]),
            "bad",
            1,
        ),
        (
            "huge",
            bundle(&[bone("Hips", [1e9, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])]),
            "bad",
            1,
        ),
        (
            "zero quaternion",
            bundle(&[bone("Spine", [0.0; 7])]),
            "bad",
            1,
        ),
        (
            "wrong types",
            osc("/VMC/Ext/Bone/Pos", "iii", &[&[0; 4], &[0; 4], &[0; 4]]),
            "bad",
            1,
        ),
        ("unknown bone", bundle(&[bone("Tail", unit)]), "unknown", 1),
    ];
    let mut sent_good = 0;
    for (class, datagram, counter, adds) in &cases {
        let before = input(&status(&mut client), "vmc-in")[*counter]
            .as_u64()
            .unwrap_or(0);
        bad.send_to(datagram, ("127.0.0.1", vmc_port))
            .expect("send");
        send_good(sent_good);
        sent_good += 1;
        let s = settle(&mut client, |s| {
            input(s, "vmc-in")[*counter].as_u64().unwrap_or(0) >= before + adds
        });
        let after = input(&s, "vmc-in")[*counter].as_u64().unwrap_or(0);
        println!("VMC {class}: {counter} {before} -> {after}");
        assert_eq!(after, before + adds, "{class}: {s}");
    }
    // A non-unit quaternion is normalized and used, not counted as bad.
    let bad_before = input(&status(&mut client), "vmc-in")["bad"]
        .as_u64()
        .unwrap_or(0);
    bad.send_to(
        &bundle(&[bone("Spine", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0])]),
        ("127.0.0.1", vmc_port),
    )
    .expect("send");
    send_good(sent_good);
    sent_good += 1;

    // Lab OSC: garbage, an unknown subject's skeleton is fine (default), a bad joint.
    let lab19 = {
        let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
            "lab19.json",
            mocap_bridge::skeleton::builtin::LAB19_JSON,
        );
        let stream = mocap_bridge::formats::skeleton_json::parse_with_stream(
            mocap_bridge::skeleton::builtin::LAB19_JSON,
            std::path::Path::new("lab19.json"),
            &Default::default(),
        )
        .expect("lab19")
        .1;
        LabSkeleton::new(&rig.skeleton, stream).expect("lab skeleton")
    };
    let lab = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut frame = JointFrame::new(PerformerName::new("lab-good").expect("name"));
    frame.joint_count = lab19.joint_count() as u16;
    for j in 0..lab19.joint_count() {
        frame.set(j, glam::Quat::IDENTITY);
    }
    frame.root_position = Some(glam::Vec3::new(0.0, 0.95, 0.0));
    lab.send_to(b"#bundle\0short", ("127.0.0.1", lab_port))
        .expect("send");
    for i in 0..3u64 {
        frame.frame = i;
        frame.time = i as f64 / 60.0;
        for d in lab19.encode(&frame) {
            lab.send_to(&d, ("127.0.0.1", lab_port)).expect("send");
        }
    }
    let s = settle(&mut client, |s| {
        input(s, "lab-in")["frames"].as_u64() == Some(3)
            && input(s, "vmc-in")["frames"].as_u64() == Some(sent_good as u64)
    });
    let vmc = input(&s, "vmc-in");
    let lab_in = input(&s, "lab-in");
    println!("after everything: vmc {vmc}\nlab {lab_in}");
    assert_eq!(
        vmc["bad"].as_u64(),
        Some(bad_before),
        "the non-unit quaternion was used"
    );
    assert_eq!(
        vmc["frames"].as_u64(),
        Some(sent_good as u64),
        "every good VMC frame arrived"
    );
    assert_eq!(lab_in["frames"].as_u64(), Some(3));
    assert_eq!(lab_in["bad"].as_u64(), Some(1), "the garbage lab datagram");
    // The recorder keeps names inside recordings/: a path is refused over OSC too.
    let start = bundle(&[osc("/bridge/record/start", "s", &[&padded("../escape")])]);
    let packets = vmc["packets"].as_u64().unwrap_or(0);
    good.send_to(&start, ("127.0.0.1", vmc_port)).expect("send");
    // Read by the port (however late a busy machine gets to it), then a moment
    // for the recorder to answer the command it passed on.
    settle(&mut client, |s| {
        input(s, "vmc-in")["packets"].as_u64() > Some(packets)
    });
    std::thread::sleep(Duration::from_millis(200));
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(!dir.path().join("escape.vrma").exists());
    assert!(
        stderr.contains("recording not started") && stderr.contains("../escape"),
        "{stderr}"
    );
}
