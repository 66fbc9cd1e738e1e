//! The web server's HTTP side (the same port as the WebSocket): the pages, the
//! libraries they import, the avatar's rig, the performers' avatars, the
//! recordings list and downloads, the token on everything that
//! carries data, names from URLs kept inside the recordings folder, and a
//! calibration taken over the WebSocket saved into the bridge's config file.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{Bridge, free_tcp_port, quiet_config, repo};
use crate::websocket::{connect, request};

struct Got {
    status: u16,
    content_type: String,
    disposition: String,
    cache: String,
    body: Vec<u8>,
}

/// GET `path` on the bridge; any status is an answer.
fn get(port: u16, path: &str) -> Got {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut response = agent
        .get(&format!("http://127.0.0.1:{port}{path}"))
        .call()
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let (content_type, disposition) = (header("content-type"), header("content-disposition"));
    let cache = header("cache-control");
    Got {
        status: response.status().as_u16(),
        content_type,
        disposition,
        cache,
        body: response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
            .expect("body"),
    }
}

fn json_of(got: &Got) -> Value {
    serde_json::from_slice(&got.body).expect("JSON")
}

#[test]
fn pages_rig_and_recordings_are_served_with_the_token_on_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recordings = dir.path().join("recordings");
    std::fs::create_dir_all(&recordings).expect("mkdir");
    let sample = repo().join("recordings/walk-and-wave.vrma");
    std::fs::copy(&sample, recordings.join("old-take.vrma")).expect("copy");
    std::fs::write(recordings.join("crashed.journal"), b"journal").expect("write");
    let port = free_tcp_port();
    let mut config = quiet_config();
    config["websocket"] = json!({ "listen": format!("127.0.0.1:{port}"), "token": "s3cret" });
    let bridge = Bridge::start(dir.path(), &config, &["--quiet"]);
    // The WebSocket port is one endpoint, named once.
    let ready = bridge
        .lines
        .iter()
        .find(|l| l.starts_with("ready:"))
        .expect("a ready line");
    assert_eq!(ready.matches("websocket:").count(), 1, "{ready}");

    // Pages and scripts: code, served to anyone who reaches the port.
    for (path, kind, needle) in [
        ("/", "text/html", "viewer.js"),
        ("/xr", "text/html", "WebXR"),
        ("/assets/viewer.js", "text/javascript", "decodeBinaryPose"),
        ("/assets/pose.js", "text/javascript", "MBPO"),
        ("/assets/style.css", "text/css", "body"),
    ] {
        let got = get(port, path);
        assert_eq!(got.status, 200, "{path}");
        assert!(
            got.content_type.starts_with(kind),
            "{path}: {}",
            got.content_type
        );
        let text = String::from_utf8_lossy(&got.body);
        assert!(text.contains(needle) || path == "/assets/pose.js", "{path}");
    }
    assert_eq!(get(port, "/assets/missing.js").status, 404);

    // The libraries, at their versions' addresses, which the page's import map
    // names; cached for a year.
    let page = String::from_utf8_lossy(&get(port, "/").body).into_owned();
    let three = "/vendor/three@0.187.0/build/three.module.js";
    assert!(page.contains("<script type=\"importmap\">"), "{page}");
    assert!(page.contains(&format!("\"three\":\"{three}\"")), "{page}");
    for path in [
        three,
        "/vendor/three@0.187.0/build/three.core.js",
        "/vendor/three@0.187.0/examples/jsm/loaders/GLTFLoader.js",
        "/vendor/@pixiv/three-vrm@3.5.5/lib/three-vrm.module.min.js",
        "/vendor/@pixiv/three-vrm-animation@3.5.5/lib/three-vrm-animation.module.min.js",
    ] {
        let got = get(port, path);
        assert_eq!(got.status, 200, "{path}");
        assert!(got.content_type.starts_with("text/javascript"), "{path}");
        assert_eq!(got.cache, "public, max-age=31536000, immutable", "{path}");
    }
    let license = get(port, "/vendor/@pixiv/three-vrm@3.5.5/LICENSE");
    assert!(String::from_utf8_lossy(&license.body).contains("MIT License"));
    for path in [
        "/vendor/three@0.186.0/build/three.module.js",
        "/vendor/three@0.187.0/build/three.webgpu.js",
        "/vendor/three@0.187.0/../../bridge.json",
    ] {
        assert_eq!(get(port, path).status, 404, "{path}");
    }

    // The mannequin, the bridge's own avatar, like the pages.
    let mannequin = get(port, "/avatars/mannequin.vrm");
    assert_eq!(mannequin.status, 200);
    assert_eq!(mannequin.content_type, "model/gltf-binary");
    assert_eq!(
        mannequin.body,
        mocap_bridge::formats::mannequin::mannequin_vrm()
    );

    // Data needs the token.
    for path in [
        "/api/rig",
        "/api/recordings",
        "/recordings/old-take.vrma",
        "/api/avatar",
        "/api/avatar/alice",
    ] {
        assert_eq!(get(port, path).status, 401, "{path} without the token");
        assert_eq!(
            get(port, &format!("{path}?token=wrong")).status,
            401,
            "{path} with a wrong token"
        );
    }
    let rig = json_of(&get(port, "/api/rig?token=s3cret"));
    let bones = rig["bones"].as_array().expect("bones");
    assert_eq!(bones.len(), 55);
    assert_eq!(bones[0]["name"], "hips");
    assert_eq!(bones[0]["parent"], Value::Null);
    assert_eq!(bones[1]["parent"], "hips");
    let hips_height = rig["hipsHeight"].as_f64().expect("height");
    assert!((0.5..1.5).contains(&hips_height), "{hips_height}");

    // With no avatar configured, every performer is drawn on the mannequin.
    for path in ["/api/avatar?token=s3cret", "/api/avatar/alice?token=s3cret"] {
        let got = get(port, path);
        assert_eq!(got.status, 200, "{path}");
        assert_eq!(got.content_type, "model/gltf-binary", "{path}");
        assert_eq!(
            got.disposition, "inline; filename=\"mannequin.vrm\"",
            "{path}"
        );
        assert_eq!(got.body, mannequin.body, "{path}");
    }

    // The list has the finished take, not the journal.
    let list = json_of(&get(port, "/api/recordings?token=s3cret"));
    let size = std::fs::metadata(&sample).expect("sample").len();
    assert_eq!(
        list["recordings"]
            .as_array()
            .expect("list")
            .iter()
            .map(|r| (r["file"].as_str().unwrap_or(""), r["bytes"].as_u64()))
            .collect::<Vec<_>>(),
        vec![("old-take.vrma", Some(size))]
    );
    let got = get(port, "/recordings/old-take.vrma?token=s3cret");
    assert_eq!(got.status, 200);
    assert_eq!(got.content_type, "model/gltf-binary");
    assert_eq!(got.disposition, "attachment; filename=\"old-take.vrma\"");
    assert_eq!(got.body, std::fs::read(&sample).expect("sample"));

    // Names from the URL stay inside the folder and are takes.
    for path in [
        "/recordings/..%2Fbridge.json",
        "/recordings/%2E%2E%2Fbridge.json",
        "/recordings/crashed.journal",
        "/recordings/..",
        "/recordings/missing.vrma",
        "/recordings/%2Fetc%2Fpasswd",
    ] {
        let got = get(port, &format!("{path}?token=s3cret"));
        assert_eq!(
            got.status,
            404,
            "{path}: {}",
            String::from_utf8_lossy(&got.body)
        );
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// A trackers frame of someone standing in a T-pose, arms `span` wide.
fn t_pose(performer: &str, span: f32) -> Value {
    json!({
        "type": "trackers", "performer": performer,
        "head": {"position": [0.0, 1.62, 0.0], "rotation": [0, 0, 0, 1]},
        "leftHand": {"position": [span / 2.0, 1.42, 0.0], "rotation": [0, 0, 0, 1]},
        "rightHand": {"position": [-span / 2.0, 1.42, 0.0], "rotation": [0, 0, 0, 1]}
    })
}

#[test]
fn a_calibration_taken_live_is_saved_into_the_config_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = quiet_config();
    config["websocket"] = json!({ "listen": format!("127.0.0.1:{port}") });
    config["// a note"] = json!("kept when the bridge saves a calibration");
    // The performer stays while the requests are answered, however slowly.
    config["pipeline"] = json!({ "performerTimeoutS": 600.0 });
    let bridge = Bridge::start(dir.path(), &config, &["--quiet"]);
    let mut client = connect(port, "?poses=none").expect("connect");
    for _ in 0..5 {
        client
            .send(tungstenite::Message::text(t_pose("vr", 1.6).to_string()))
            .expect("send");
    }
    // Wait until the performer exists (up to a minute: a busy machine can hold
    // the solver back for long).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let list = request(&mut client, json!({"type": "listPerformers", "id": 1}));
        if list["performers"].as_array().is_some_and(|p| !p.is_empty()) {
            assert_eq!(list["performers"][0]["calibrated"], false);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let reply = request(
        &mut client,
        json!({"type": "calibrate", "id": 2, "performer": "vr"}),
    );
    assert_eq!(reply["type"], "calibrated", "{reply}");
    let path = dir.path().join("bridge.json");
    assert_eq!(
        reply["saved"].as_str().map(Path::new),
        Some(path.as_path()),
        "{reply}"
    );
    let list = request(&mut client, json!({"type": "listPerformers", "id": 3}));
    assert_eq!(list["performers"][0]["calibrated"], true, "{list}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let calibration = &saved["performers"]["vr"]["calibration"];
    let span = calibration["armSpan"].as_f64().expect("armSpan");
    assert!((span - 1.6).abs() < 0.2, "{calibration}");
    assert_eq!(saved["// a note"], config["// a note"]);
    drop(client);
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");

    // The next run starts calibrated.
    let bridge = Bridge::start(dir.path(), &saved, &["--quiet"]);
    let mut client = connect(port, "?poses=none").expect("connect");
    client
        .send(tungstenite::Message::text(t_pose("vr", 1.6).to_string()))
        .expect("send");
    let mut calibrated = Value::Null;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let list = request(&mut client, json!({"type": "listPerformers", "id": 1}));
        if let Some(p) = list["performers"].as_array().and_then(|p| p.first()) {
            calibrated = p["calibrated"].clone();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(calibrated, true);
    drop(client);
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}
