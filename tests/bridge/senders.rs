//! A VMC port's sender table after a flood: thousands of sender addresses that fall
//! silent leave it once they time out, so a new sender afterwards is heard; the
//! table's bound is `MAX_SENDERS` (documented in docs/configuration.md).

use std::net::UdpSocket;
use std::time::Duration;

use serde_json::json;

use crate::harness::{Bridge, free_udp_port, quiet_config, repo};
use crate::vmc::{receive_vmc, receive_vmc_while};

/// A VMC datagram as a sender sends it each frame: a bundle with the root, one
/// bone and the end-of-frame marker.
fn vmc_frame() -> Vec<u8> {
    use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
    let message = |addr: &str, args: Vec<OscType>| {
        OscPacket::Message(OscMessage {
            addr: addr.into(),
            args,
        })
    };
    let f = OscType::Float;
    let bundle = OscBundle {
        timetag: OscTime::from((0, 1)),
        content: vec![
            message(
                "/VMC/Ext/Root/Pos",
                vec![
                    "root".into(),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(1.0),
                ],
            ),
            message(
                "/VMC/Ext/Bone/Pos",
                vec![
                    "Hips".into(),
                    f(0.0),
                    f(0.9),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(0.0),
                    f(1.0),
                ],
            ),
            message("/VMC/Ext/OK", vec![OscType::Int(1)]),
        ],
    };
    rosc::encoder::encode(&OscPacket::Bundle(bundle)).expect("an OSC bundle")
}

#[test]
fn senders_that_time_out_leave_the_table_and_a_new_one_is_heard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let vmc_in = free_udp_port();
    let mut config = quiet_config();
    config["vmcInputs"] = json!([{"listen": format!("127.0.0.1:{vmc_in}"), "performer": "flood"}]);
    config["vmcOutputs"] =
        json!([{"to": receiver.local_addr().expect("addr").to_string(), "performer": "*"}]);
    config["pipeline"] = json!({"performerTimeoutS": 0.5});
    let bridge = Bridge::start(dir.path(), &config, &[]);

    // 5,000 senders, one frame each, each from its own address, then silence.
    let frame = vmc_frame();
    for _ in 0..5_000 {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
        socket.send_to(&frame, ("127.0.0.1", vmc_in)).expect("send");
    }
    // Past the performer timeout and the table's next look for silent senders.
    std::thread::sleep(Duration::from_millis(2_500));
    while !receive_vmc(&receiver, Duration::from_millis(200)).is_empty() {}

    // A user's sender now: its frames come through.
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let (heard, sent) = receive_vmc_while(receiver, Duration::from_secs(2), || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
            .arg("send")
            .arg(&sample)
            .args(["--to", &format!("127.0.0.1:{vmc_in}")])
            .output()
            .expect("send")
    });
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    println!(
        "after 5,000 senders timed out: a new sender's 480 frames -> {} frames out",
        heard.len()
    );
    assert!(heard.len() >= 400, "{} frames out", heard.len());
}
