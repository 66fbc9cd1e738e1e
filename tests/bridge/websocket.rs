//! The WebSocket server with a real client (tungstenite's, not ours): skeleton
//! frames in, poses out to a second client, recording started and stopped by
//! control messages, the token rule, and bad messages counted while the server
//! keeps serving.

use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::Vec3;
use mocap_bridge::formats::vrma;
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::retarget::{MappedSkeleton, SourceRig, ToNormalized};
use mocap_bridge::takes::demo;
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use crate::common::angle_deg;
use crate::common::pose_json::decode_pose_json;
use crate::harness::{Bridge, free_tcp_port, quiet_config};

pub type Client = WebSocket<TcpStream>;

pub fn connect(port: u16, query: &str) -> Result<Client, tungstenite::Error> {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    // A reply can be slow on a busy machine; none takes a minute.
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let url = format!("ws://127.0.0.1:{port}/{query}");
    tungstenite::client::client(url, stream)
        .map(|(ws, _)| ws)
        .map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => {
                tungstenite::Error::Io(std::io::ErrorKind::WouldBlock.into())
            }
        })
}

/// Sends a request and returns the reply (skipping pose messages in between).
pub fn request(client: &mut Client, message: Value) -> Value {
    client
        .send(Message::text(message.to_string()))
        .expect("send");
    loop {
        let reply = client.read().expect("a reply");
        if let Message::Text(text) = reply {
            let value: Value = serde_json::from_str(&text).expect("json");
            if value["type"] != "pose" {
                return value;
            }
        }
    }
}

/// The lab19 skeleton and its built-in performance: expected normalized poses
/// next to the JSON skeleton messages that carry the same frames.
fn lab19_frames(performer: &str, count: usize) -> (Vec<Value>, Vec<(f32, HumanoidPose)>) {
    let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
        "lab19.json",
        mocap_bridge::skeleton::builtin::LAB19_JSON,
    );
    let map = rig.bone_map.clone().expect("lab19 has its map");
    let mapped = MappedSkeleton::new(rig.skeleton, &map).expect("maps");
    let source = SourceRig::new(&mapped);
    let motion = demo::lab19_performance(&mapped, 1);
    let joints = mapped.skeleton.joints();
    let mut messages = Vec::new();
    let mut expected = Vec::new();
    for i in 0..count {
        let frame = motion.frame(i);
        let t = i as f32 / demo::FPS;
        let by_name: serde_json::Map<String, Value> = joints
            .iter()
            .zip(frame.rotations)
            .map(|(j, q)| (j.name.clone(), json!([q.x, q.y, q.z, q.w])))
            .collect();
        let root = frame.translations[0];
        messages.push(json!({
            "type": "skeleton", "performer": performer, "skeleton": "lab19",
            "frame": i, "time": t, "rootPosition": [root.x, root.y, root.z],
            "joints": by_name,
        }));
        let mut pose = HumanoidPose::default();
        ToNormalized {
            source: &source,
            local_rotations: frame.rotations,
            local_translations: frame.translations,
            pose: &mut pose,
        }
        .run()
        .expect("retargets");
        expected.push((t, pose));
    }
    (messages, expected)
}

/// Per frame of the lab19 performance: every joint's name, parent and model-space
/// position (turned to face +Z), as a `source` message should carry them.
fn lab19_points(count: usize) -> Vec<Vec<(String, Option<usize>, Vec3)>> {
    let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
        "lab19.json",
        mocap_bridge::skeleton::builtin::LAB19_JSON,
    );
    let map = rig.bone_map.clone().expect("lab19 has its map");
    let mapped = MappedSkeleton::new(rig.skeleton, &map).expect("maps");
    let motion = demo::lab19_performance(&mapped, 1);
    let facing = mapped.correction.facing;
    (0..count)
        .map(|i| {
            let frame = motion.frame(i);
            let world = mapped
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            mapped
                .skeleton
                .joints()
                .iter()
                .zip(world)
                .map(|(j, w)| (j.name.clone(), j.parent, facing * Vec3::from(w.translation)))
                .collect()
        })
        .collect()
}

/// Worst bone angle, degrees, between two poses (over the expected bones).
fn worst_angle(expected: &HumanoidPose, got: &HumanoidPose) -> f32 {
    let mut worst = 0.0f32;
    for (bone, q) in expected.bones() {
        let g = got
            .rotation(bone)
            .unwrap_or_else(|| panic!("{bone} missing"));
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            worst = worst.max(angle_deg(q * axis, g * axis));
        }
    }
    worst
}

fn websocket_config(port: u16) -> Value {
    let mut config = quiet_config();
    config["websocket"] = json!({"listen": format!("127.0.0.1:{port}")});
    config
}

/// A bridge on `port` whose performers stay while clients read, however slowly, a
/// sender that reads no poses and a viewer that reads them all; recording `performer`
/// into `take` is armed before it exists, so it starts with its first frame.
fn recording_bridge(
    dir: &std::path::Path,
    port: u16,
    performer: &str,
    take: &str,
) -> (Bridge, Client, Client) {
    let mut config = websocket_config(port);
    config["pipeline"] = json!({"performerTimeoutS": 600.0});
    let bridge = Bridge::start(dir, &config, &[]);
    let mut sender = connect(port, "?poses=none").expect("sender connects");
    let viewer = connect(port, "").expect("viewer connects");
    let started = request(
        &mut sender,
        json!({"type": "startRecording", "id": 1, "performer": performer, "name": take}),
    );
    assert_eq!(started["type"], "recordingStarted", "{started}");
    assert_eq!(started["id"], 1);
    (bridge, sender, viewer)
}

#[test]
fn skeleton_frames_become_poses_for_other_clients_and_a_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let (bridge, mut sender, mut viewer) = recording_bridge(dir.path(), port, "ws-lab", "ws-take");
    let mut watcher = connect(port, "?poses=none&sources=true").expect("watcher connects");

    let (messages, expected) = lab19_frames("ws-lab", 120);
    for m in &messages {
        sender.send(Message::text(m.to_string())).expect("send");
    }
    // The viewer sees the newest poses; every one it sees matches its frame.
    let mut custom = CustomNames::default();
    let (mut seen, mut worst, mut last_seq) = (0, 0.0f32, 0);
    while last_seq < 120 {
        let Message::Text(text) = viewer.read().expect("a pose") else {
            continue;
        };
        let (header, pose) = decode_pose_json(&text, &mut custom).expect("pose json");
        assert_eq!(header.performer.as_str(), "ws-lab");
        let i = (header.seq - 1) as usize;
        assert!(
            (header.time - f64::from(expected[i].0)).abs() < 1e-5,
            "{}",
            header.time
        );
        worst = worst.max(worst_angle(&expected[i].1, &pose));
        assert!(pose.hips_position.distance(expected[i].1.hips_position) < 1e-5);
        seen += 1;
        last_seq = header.seq;
    }
    // The client that asked for sources sees the skeleton's joints where each
    // frame puts them (forward kinematics of what was sent, facing +Z).
    let expected_points = lab19_points(120);
    let (mut sources, mut worst_m, mut last_seq) = (0, 0.0f32, 0);
    while last_seq < 120 {
        let Message::Text(text) = watcher.read().expect("a source") else {
            continue;
        };
        let source: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(source["type"], "source", "{source}");
        assert_eq!(source["performer"], "ws-lab");
        assert_eq!(source["skeleton"], "lab19");
        let seq = source["seq"].as_u64().expect("seq");
        let points = source["points"].as_array().expect("points");
        let want = &expected_points[(seq - 1) as usize];
        assert_eq!(points.len(), want.len());
        for (point, (name, parent, at)) in points.iter().zip(want) {
            assert_eq!(point["name"], name.as_str());
            assert_eq!(point["parent"].as_u64().map(|p| p as usize), *parent);
            let p = &point["position"];
            let got = Vec3::new(
                p[0].as_f64().expect("x") as f32,
                p[1].as_f64().expect("y") as f32,
                p[2].as_f64().expect("z") as f32,
            );
            worst_m = worst_m.max(got.distance(*at));
        }
        sources += 1;
        last_seq = seq;
    }
    println!(
        "websocket: {sources} source messages, worst joint {:.6} mm",
        worst_m * 1000.0
    );
    assert!(worst_m < 1e-5, "{worst_m} m");

    let stopped = request(&mut sender, json!({"type": "stopRecording", "id": 2}));
    assert_eq!(stopped["type"], "recordingStopped", "{stopped}");
    let take = &stopped["recordings"][0];
    assert_eq!(take["performer"], "ws-lab");
    assert_eq!(take["frames"], 120, "{stopped}");
    let file = dir.path().join(take["file"].as_str().expect("file"));
    assert_eq!(
        file.file_name().and_then(|n| n.to_str()),
        Some("ws-take.vrma")
    );

    let performers = request(&mut sender, json!({"type": "listPerformers", "id": 3}));
    assert_eq!(
        performers["performers"][0]["name"], "ws-lab",
        "{performers}"
    );
    assert_eq!(performers["performers"][0]["skeleton"], "lab19");
    let status = request(&mut sender, json!({"type": "status", "id": 4}));
    assert_eq!(status["type"], "status");

    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    // The recording is the stream: every frame, from t = 0.
    let recorded = vrma::load(&file, None).expect("the take loads");
    let times = recorded.frame_times();
    assert_eq!(times.len(), 120);
    let mut replay = mocap_bridge::takes::replay::Replay::from_vrma(recorded, None);
    let mut pose = HumanoidPose::default();
    let mut worst_take = 0.0f32;
    for (t, want) in &expected {
        let got_t = replay.next_frame(&mut pose).expect("a frame");
        assert!((got_t - t).abs() < 1e-5, "{got_t} vs {t}");
        worst_take = worst_take.max(worst_angle(want, &pose));
    }
    println!(
        "websocket: {seen} poses seen by the viewer, worst {worst:.6}°; recording 120/120 frames, worst {worst_take:.6}°"
    );
    assert!(worst <= 0.01 && worst_take <= 0.01, "{worst} {worst_take}");
}

/// A client that sends no `time` (it is optional): every frame is 0 s on its
/// clock, and the performer's time goes on by the frames' arrivals, so a take keeps
/// every frame in order.
#[test]
fn skeleton_frames_without_time_are_all_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let (bridge, mut sender, mut viewer) = recording_bridge(dir.path(), port, "no-clock", "t0");
    let (messages, _) = lab19_frames("no-clock", 30);
    for mut m in messages {
        m.as_object_mut().expect("an object").remove("time");
        sender.send(Message::text(m.to_string())).expect("send");
        std::thread::sleep(std::time::Duration::from_secs_f32(1.0 / 60.0));
    }
    // Every frame solved before the take stops.
    let mut custom = CustomNames::default();
    let mut last_seq = 0;
    while last_seq < 30 {
        if let Message::Text(text) = viewer.read().expect("a pose") {
            last_seq = decode_pose_json(&text, &mut custom)
                .expect("pose json")
                .0
                .seq;
        }
    }
    let stopped = request(&mut sender, json!({"type": "stopRecording", "id": 3}));
    let take = &stopped["recordings"][0];
    assert_eq!(take["frames"], 30, "{stopped}");
    let file = dir.path().join(take["file"].as_str().expect("file"));
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    let times = vrma::load(&file, None)
        .expect("the take loads")
        .frame_times()
        .to_vec();
    assert_eq!(times.len(), 30);
    assert!(times.windows(2).all(|w| w[1] > w[0]), "{times:?}");
}

#[test]
fn a_token_is_required_when_configured_and_open_interfaces_need_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = websocket_config(port);
    config["websocket"]["token"] = json!("s3cret");
    let bridge = Bridge::start(dir.path(), &config, &[]);
    match connect(port, "") {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 401),
        Err(e) => panic!("refused the wrong way: {e}"),
        Ok(_) => panic!("connected without the token"),
    }
    assert!(matches!(
        connect(port, "?token=wrong"),
        Err(tungstenite::Error::Http(_))
    ));
    let mut client = connect(port, "?token=s3cret").expect("the token opens it");
    let status = request(&mut client, json!({"type": "status", "id": 1}));
    assert_eq!(status["type"], "status");
    let (code, _, _) = bridge.stop();
    assert_eq!(code, 0);

    // Listening beyond loopback without a token: refused before anything starts.
    let mut open = quiet_config();
    open["websocket"] = json!({"listen": "0.0.0.0:0"});
    let path = dir.path().join("open.json");
    std::fs::write(&path, open.to_string()).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["run", "--config"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("websocket.token") && stderr.contains("needs a token"),
        "{stderr}"
    );
    assert!(!Path::new(&path).with_extension("vrma").exists());
}

#[test]
fn bad_websocket_messages_are_counted_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let bridge = Bridge::start(dir.path(), &websocket_config(port), &[]);
    let mut client = connect(port, "?poses=none").expect("connects");
    let (messages, _) = lab19_frames("good", 3);
    let mut nan_like = messages[0].clone();
    nan_like["rootPosition"] = json!([1e39, 0, 0]);
    let mut huge = messages[0].clone();
    huge["rootPosition"] = json!([0, 20000.0, 0]);
    let mut zero = messages[0].clone();
    zero["joints"]["Hips"] = json!([0, 0, 0, 0]);
    let mut unknown_joint = messages[1].clone();
    unknown_joint["joints"]["Tail"] = json!([0, 0, 0, 1]);
    let oversized = format!(
        "{{\"type\":\"status\",\"pad\":\"{}\"}}",
        "x".repeat(70 * 1024)
    );
    for bad in [
        "not json".to_owned(),
        "{\"type\":\"teleport\"}".to_owned(),
        nan_like.to_string(),
        huge.to_string(),
        zero.to_string(),
        oversized,
    ] {
        client.send(Message::text(bad)).expect("send");
    }
    client
        .send(Message::binary(vec![0u8, 1, 2, 3]))
        .expect("send");
    // A non-unit quaternion is normalized, not refused; an unknown joint is counted
    // and the rest of its frame used.
    let mut scaled = messages[2].clone();
    scaled["joints"]["Hips"] = json!([0, 0, 0, 2.0]);
    client
        .send(Message::text(unknown_joint.to_string()))
        .expect("send");
    client
        .send(Message::text(scaled.to_string()))
        .expect("send");
    // A request with a bad field gets an error reply naming it.
    let reply = request(
        &mut client,
        json!({"type": "startRecording", "id": 9, "name": "../../etc/passwd"}),
    );
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["id"], 9);
    // The server still serves: the good frames became a performer (waited for up
    // to a minute: a busy machine can hold the solver back for long).
    let mut frames = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let performers = request(&mut client, json!({"type": "listPerformers", "id": 10}));
        frames = performers["performers"][0]["frames"].as_u64().unwrap_or(0);
        if frames == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(frames, 2, "the two good frames");
    let status = request(&mut client, json!({"type": "status", "id": 11}));
    let input = status["status"]["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .find(|i| {
            i["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("websocket"))
        })
        .expect("the websocket input")
        .clone();
    println!("websocket input after bad messages: {input}");
    // not json, unknown type, 1e39, 20 km, zero quaternion, oversized, binary, and
    // the request with a path for a name.
    assert_eq!(input["bad"], 8, "{input}");
    assert_eq!(input["unknown"], 1, "{input}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    // The first bad message that gets no reply is logged with why; the rest only
    // counted.
    let logged: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("WebSocket message dropped"))
        .collect();
    assert_eq!(logged.len(), 1, "{stderr}");
    assert!(logged[0].contains("why=expected ident"), "{stderr}");
    // A log that is no terminal is plain text.
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn a_take_stopped_before_its_first_frame_writes_nothing_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = websocket_config(port);
    // The performer stays, silent, while its take starts and stops.
    config["pipeline"] = json!({"performerTimeoutS": 600.0});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let mut client = connect(port, "?poses=none").expect("connects");
    let (messages, _) = lab19_frames("still", 1);
    client
        .send(Message::text(messages[0].to_string()))
        .expect("send");
    // The take starts once the recorder knows the performer (before, the request
    // only arms it for its next frame: disarmed again, and asked again).
    let deadline = Instant::now() + Duration::from_secs(60);
    let file = loop {
        let started = request(
            &mut client,
            json!({"type": "startRecording", "id": 1, "performer": "still", "name": "empty"}),
        );
        assert_eq!(started["type"], "recordingStarted", "{started}");
        if let Some(file) = started["recordings"][0]["file"].as_str() {
            assert_eq!(started["waiting"], json!([]), "{started}");
            break file.to_owned();
        }
        assert_eq!(started["waiting"], json!(["still"]), "{started}");
        request(
            &mut client,
            json!({"type": "stopRecording", "id": 2, "performer": "still"}),
        );
        assert!(Instant::now() < deadline, "the performer never appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        dir.path().join(format!("{file}.journal")).exists(),
        "{file}"
    );
    let stopped = request(
        &mut client,
        json!({"type": "stopRecording", "id": 3, "performer": "still"}),
    );
    assert_eq!(stopped["type"], "recordingStopped", "{stopped}");
    assert_eq!(
        stopped["recordings"],
        json!([{"performer": "still", "file": null, "frames": 0}]),
        "no file for a take without frames"
    );
    let recordings: Vec<_> = std::fs::read_dir(dir.path().join("recordings"))
        .expect("the recordings folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(
        recordings.is_empty(),
        "neither take nor journal: {recordings:?}"
    );
    let (code, lines, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    let said = format!("no frame recorded for still; nothing written ({file})");
    assert!(lines.contains(&said), "`{said}` in\n{}", lines.join("\n"));
    assert!(
        !lines.iter().any(|l| l.starts_with("wrote ")),
        "{}",
        lines.join("\n")
    );
}
