//! A WebSocket client that reads slower than poses come gets recent poses, not a
//! growing backlog: what waits for it in the bridge's socket is bounded (16 KiB
//! unsent), the poses passed over are counted as drops. Measured against a second
//! client that reads as fast as poses come: the pose the slow client reads is never
//! older than what its queue (the bridge's unsent bytes and its own receive window)
//! can hold at its read rate.

use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;

use crate::harness::{Bridge, alone, free_tcp_port, quiet_config, repo};
use crate::websocket::{connect, request};

/// The `time` of a JSON pose message.
fn pose_time(message: &Message) -> Option<f64> {
    let Message::Text(text) = message else {
        return None;
    };
    let value: Value = serde_json::from_str(text).ok()?;
    (value["type"] == "pose")
        .then(|| value["time"].as_f64())
        .flatten()
}

#[test]
fn a_slow_reader_gets_recent_poses_not_a_growing_backlog() {
    // The ages are seconds on the wall clock: no other test's bridge runs meanwhile.
    let _alone = alone();
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = quiet_config();
    config["websocket"] = json!({"listen": format!("127.0.0.1:{port}")});
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let bridge = Bridge::start(dir.path(), &config, &["--replay", sample, "--loop"]);

    // A client that keeps up: the time of the newest pose there is.
    let newest = Arc::new(Mutex::new(0.0f64));
    let keeping_up = {
        let newest = newest.clone();
        let mut fast = connect(port, "").expect("fast client");
        std::thread::spawn(move || {
            while let Ok(message) = fast.read() {
                if let Some(t) = pose_time(&message) {
                    *newest.lock().expect("lock") = t;
                }
            }
        })
    };

    // A client that reads a pose every 50 ms (poses come at 60 Hz), with a receive
    // window of its own of 16 KiB.
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket.set_recv_buffer_size(16 * 1024).expect("rcvbuf");
    let window = socket.recv_buffer_size().expect("rcvbuf"); // as the system sets it
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    socket.connect(&address.into()).expect("connect");
    let stream: TcpStream = socket.into();
    let (mut slow, _) =
        tungstenite::client::client(format!("ws://127.0.0.1:{port}/"), stream).expect("upgrade");
    let (mut ages, mut bytes, mut poses, mut reads) = (Vec::new(), 0usize, 0usize, 0usize);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(12) {
        std::thread::sleep(Duration::from_millis(50));
        let message = slow.read().expect("a message");
        reads += 1;
        if let Some(t) = pose_time(&message) {
            let fresh = *newest.lock().expect("lock");
            ages.push((started.elapsed().as_secs_f64(), fresh - t));
            bytes += message.len();
            poses += 1;
        }
    }
    // What can wait for the client: the bridge's unsent bytes, the client's receive
    // buffer and as much again in flight, in poses of the size seen, read at the
    // rate the client read (20 a second, unless the machine held it back).
    let per_pose = (bytes / poses.max(1)).max(1);
    let queued = (16 * 1024 + 2 * window) / per_pose;
    let rate = reads as f64 / started.elapsed().as_secs_f64();
    let bound = queued as f64 / rate + 0.5;
    let worst_between = |from: f64, to: f64| {
        ages.iter()
            .filter(|(at, _)| (from..to).contains(at))
            .map(|(_, age)| *age)
            .fold(0.0f64, f64::max)
    };
    let (middle, last) = (worst_between(4.0, 8.0), worst_between(8.0, 12.0));
    let worst = middle.max(last);
    for (at, age) in ages.iter().step_by(20) {
        println!("at {at:5.2} s the pose read is {age:.3} s older than the newest");
    }
    let mut status_client = connect(port, "?poses=none").expect("status client");
    let status = request(&mut status_client, json!({"type": "status", "id": 1}));
    let drops = status["status"]["outputs"]
        .as_array()
        .and_then(|outputs| {
            outputs
                .iter()
                .find(|o| o["name"].as_str().is_some_and(|n| n.ends_with("clients")))
        })
        .and_then(|o| o["drops"].as_u64())
        .unwrap_or(0);
    drop(slow);
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    let _ = keeping_up.join();
    println!(
        "slow reader: poses read up to {worst:.3} s older than the newest (bound: {queued} poses \
         of {per_pose} bytes queued at most, read at {rate:.1} a second: {bound:.2} s); {drops} \
         poses passed over"
    );
    assert!(worst <= bound, "{worst:.3} s behind, bound {bound:.2} s");
    // Bounded, not growing more slowly: the last seconds are no later than the ones before.
    assert!(
        last <= middle + 0.25,
        "still growing: {middle:.3} s, then {last:.3} s"
    );
    assert!(drops > 0, "the poses passed over are counted");
}
