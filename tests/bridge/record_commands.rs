//! `/bridge/record/start|stop` over OSC come only from this machine unless the
//! port's config says otherwise: a sender on the network cannot start recordings
//! on a VMC port listening on every address, a local one can.

use std::net::{IpAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use rosc::{OscMessage, OscPacket, OscType};
use serde_json::json;

use crate::harness::{Bridge, free_udp_port, quiet_config, repo};

fn command(address: &str, args: &[&str]) -> Vec<u8> {
    rosc::encoder::encode(&OscPacket::Message(OscMessage {
        addr: address.into(),
        args: args.iter().map(|a| OscType::String((*a).into())).collect(),
    }))
    .expect("an OSC message")
}

/// This machine's address on its network (not loopback), if it has one: the one
/// a datagram to a documentation address would leave from (none is sent).
fn network_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("198.51.100.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Waits until `done` holds; panics after a minute, saying `what`.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `path` exists.
fn wait_for_file(path: &Path) {
    wait_for(&format!("no {}", path.display()), || path.exists());
}

/// Waits until the journal at `path` holds a frame. It is created with its header
/// when the take starts, before any frame: a take stopped then writes nothing.
fn wait_for_a_frame(path: &Path) {
    let len = || std::fs::metadata(path).map_or(0, |m| m.len());
    wait_for(&format!("no header in {}", path.display()), || len() > 0);
    let header = len();
    wait_for(&format!("no frame in {}", path.display()), || {
        len() > header
    });
}

#[test]
fn record_commands_from_the_network_are_refused_from_this_machine_obeyed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_udp_port();
    let mut config = quiet_config();
    config["vmcInputs"] = json!([{"listen": format!("0.0.0.0:{port}")}]);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let bridge = Bridge::start(dir.path(), &config, &["--replay", sample, "--loop"]);
    let recordings = dir.path().join("recordings");
    let takes = || std::fs::read_dir(&recordings).map_or(0, |d| d.count());

    match network_address() {
        Some(ip) => {
            let remote = UdpSocket::bind((ip, 0)).expect("bind");
            remote
                .send_to(&command("/bridge/record/start", &["from-afar"]), (ip, port))
                .expect("send");
            std::thread::sleep(Duration::from_millis(500));
            assert_eq!(takes(), 0, "a recording started from {ip}");
        }
        None => println!("skipping the network sender: this machine has no network address"),
    }
    let local = UdpSocket::bind("127.0.0.1:0").expect("bind");
    local
        .send_to(
            &command("/bridge/record/start", &["from-here"]),
            ("127.0.0.1", port),
        )
        .expect("send");
    // The take is under way (its journal holds a frame), then stopped and written:
    // each waited for, up to a minute, however slowly a busy machine gets there.
    wait_for_a_frame(&recordings.join("from-here.vrma.journal"));
    local
        .send_to(&command("/bridge/record/stop", &[]), ("127.0.0.1", port))
        .expect("send");
    wait_for_file(&recordings.join("from-here.vrma"));
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(recordings.join("from-here.vrma").exists(), "{stderr}");
    assert!(!recordings.join("from-afar.vrma").exists(), "{stderr}");
    if network_address().is_some() {
        assert!(stderr.contains("recording command refused"), "{stderr}");
    }
}
