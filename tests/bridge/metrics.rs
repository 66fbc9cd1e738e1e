//! `/metrics` read by prometheus_client's own parser: every counter of the
//! WebSocket status is there with the same value, histograms are well formed, the
//! token rule holds, a NATS output's connection state shows, and the WebSocket
//! clients' output counts as frames the poses a client got.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::Message;

use crate::harness::{Bridge, free_tcp_port, free_udp_port, python_osc, quiet_config, repo};
use crate::websocket::{connect, request};

/// GET `path`: status and body.
fn get(port: u16, path: &str) -> (u16, String) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut response = agent
        .get(&format!("http://127.0.0.1:{port}{path}"))
        .call()
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().expect("body"))
}

/// The samples prometheus_client reads from `text` (tests/clients/metrics_check.py,
/// which also checks the histograms).
fn parsed(text: &str) -> Value {
    let mut child = Command::new("python3")
        .arg(repo().join("tests/clients/metrics_check.py"))
        .env("PYTHONPATH", python_osc())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn metrics_match_the_websocket_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ws, vmc_in, vmc_out) = (free_tcp_port(), free_udp_port(), free_udp_port());
    let mut config = quiet_config();
    config["websocket"] = json!({ "listen": format!("127.0.0.1:{ws}"), "token": "s3cret" });
    config["vmcInputs"] =
        json!([{ "listen": format!("127.0.0.1:{vmc_in}"), "performer": "alice" }]);
    config["vmcOutputs"] = json!([{ "to": format!("127.0.0.1:{vmc_out}") }]);
    // A NATS server nobody runs: the output counts its frames as drops and says
    // it is not connected.
    config["natsOutputs"] = json!([{
        "server": format!("nats://127.0.0.1:{}", free_tcp_port()),
        "connectWaitS": 0.0
    }]);
    config["pipeline"] = json!({ "performerTimeoutS": 60.0 });
    let bridge = Bridge::start(dir.path(), &config, &["--quiet"]);
    // A client that reads every pose: what it gets is what the clients' output counts.
    let mut listener = connect(ws, "?token=s3cret").expect("WebSocket");
    let listening = std::thread::spawn(move || {
        let mut poses = 0u64;
        // Until the bridge closes the connection as it stops.
        while let Ok(message) = listener.read() {
            if let Message::Text(text) = message {
                let value: Value = serde_json::from_str(&text).expect("JSON");
                if value["type"] == "pose" {
                    poses += 1;
                }
            }
        }
        poses
    });
    let sent = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .arg("send")
        .arg(repo().join("recordings/walk-and-wave.vrma"))
        .args([
            "--to",
            &format!("127.0.0.1:{vmc_in}"),
            "--fast",
            "--loops",
            "1",
        ])
        .output()
        .expect("send");
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );

    let (refused, _) = get(ws, "/metrics");
    assert_eq!(refused, 401, "the token rule");
    let mut client = connect(ws, "?token=s3cret&poses=none").expect("WebSocket");
    // Settled: two status replies in a row agree (but for the requests themselves,
    // which the WebSocket input counts as packets, and the replies, which its
    // clients' output counts).
    let settled = |mut status: Value| {
        for input in status["inputs"].as_array_mut().expect("inputs") {
            if input["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("websocket:"))
            {
                input["packets"] = json!(null);
            }
        }
        for output in status["outputs"].as_array_mut().expect("outputs") {
            if output["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(" clients"))
            {
                output["packets"] = json!(null);
                output["bytes"] = json!(null);
            }
        }
        status
    };
    // And drained: the solver has solved every frame the inputs took, and each
    // output has sent or passed over every pose (a bridge held back for 300 ms
    // by a busy machine would otherwise look settled with frames still on their way).
    let drained = |status: &Value| {
        let solved = &status["solver"]["frames"];
        let taken: u64 = status["inputs"]
            .as_array()
            .expect("inputs")
            .iter()
            .filter_map(|i| i["frames"].as_u64())
            .sum();
        solved.as_u64() == Some(taken)
            && status["outputs"]
                .as_array()
                .expect("outputs")
                .iter()
                .filter(|o| {
                    o["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("vmc-out:") || n.starts_with("nats-out:"))
                })
                .all(|o| {
                    o["frames"]
                        .as_u64()
                        .zip(o["drops"].as_u64())
                        .map(|(f, d)| f + d)
                        == solved.as_u64()
                })
    };
    let mut status = settled(request(&mut client, json!({"type": "status"}))["status"].clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let again = settled(request(&mut client, json!({"type": "status"}))["status"].clone());
        if again == status && drained(&again) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the status never settled: {status}\nthen {again}"
        );
        status = again;
    }
    let performers = request(&mut client, json!({"type": "listPerformers"}));
    let status = request(&mut client, json!({"type": "status"}))["status"].clone();
    let (code, text) = get(ws, "/metrics?token=s3cret");
    assert_eq!(code, 200);
    let metrics = parsed(&text);
    let _ = bridge.stop();
    let received = listening.join().expect("the listening client");

    let mut samples: HashMap<String, f64> = HashMap::new();
    for s in metrics["samples"].as_array().expect("samples") {
        let labels = s[1].as_object().expect("labels");
        let mut key = s[0].as_str().expect("name").to_owned();
        let mut pairs: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        pairs.sort();
        if !pairs.is_empty() {
            key = format!("{key}{{{}}}", pairs.join(","));
        }
        samples.insert(key, s[2].as_f64().expect("value"));
    }
    let value = |key: &str| {
        *samples
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in\n{text}"))
    };
    let mut checked = 0;
    for input in status["inputs"].as_array().expect("inputs") {
        let name = input["name"].as_str().expect("name");
        for (field, metric) in [
            ("packets", "input_packets"),
            ("frames", "input_frames"),
            ("drops", "input_drops"),
            ("bad", "input_bad_messages"),
            ("unknown", "input_unknown"),
            ("ignored", "input_ignored"),
        ] {
            let key = format!("mocap_bridge_{metric}_total{{input={name}}}");
            assert_eq!(value(&key), input[field].as_f64().expect("count"), "{key}");
            checked += 1;
        }
    }
    for output in status["outputs"].as_array().expect("outputs") {
        let name = output["name"].as_str().expect("name");
        for (field, metric) in [
            ("frames", "output_frames_total"),
            ("drops", "output_drops_total"),
            ("packets", "output_packets_total"),
            ("bytes", "output_bytes_total"),
            ("errors", "output_errors_total"),
            ("noReceiver", "output_no_receiver_total"),
        ] {
            if name.ends_with(" clients") && matches!(field, "packets" | "bytes") {
                // The status reply itself went out after it was counted.
                continue;
            }
            let key = format!("mocap_bridge_{metric}{{output={name}}}");
            assert_eq!(value(&key), output[field].as_f64().expect("count"), "{key}");
            checked += 1;
        }
        if let Some(count) = output["latency"]["count"].as_f64() {
            let key = format!("mocap_bridge_output_latency_seconds_count{{output={name}}}");
            assert_eq!(value(&key), count, "{key}");
            let inf =
                format!("mocap_bridge_output_latency_seconds_bucket{{le=+Inf,output={name}}}");
            assert_eq!(value(&inf), count, "{inf}");
            checked += 1;
        }
    }
    let solver = &status["solver"];
    for (field, key) in [
        ("frames", "mocap_bridge_solver_frames_total"),
        ("errors", "mocap_bridge_solver_errors_total"),
        ("refused", "mocap_bridge_solver_refused_total"),
        ("performers", "mocap_bridge_performers"),
    ] {
        assert_eq!(value(key), solver[field].as_f64().expect("count"), "{key}");
        checked += 1;
    }
    for p in performers["performers"].as_array().expect("performers") {
        let key = format!(
            "mocap_bridge_performer_frames_total{{performer={},source=humanoid}}",
            p["name"].as_str().expect("name")
        );
        assert_eq!(value(&key), p["frames"].as_f64().expect("frames"), "{key}");
        checked += 1;
    }
    for c in status["connections"].as_array().expect("connections") {
        let labels = format!(
            "connection={},server={}",
            c["name"].as_str().expect("name"),
            c["server"].as_str().expect("server")
        );
        let connected = if c["connected"] == json!(true) {
            1.0
        } else {
            0.0
        };
        assert_eq!(
            value(&format!("mocap_bridge_nats_connected{{{labels}}}")),
            connected
        );
        for (field, metric) in [
            ("connects", "nats_connects"),
            ("disconnects", "nats_disconnects"),
            ("lost", "nats_lost_frames"),
        ] {
            let key = format!("mocap_bridge_{metric}_total{{{labels}}}");
            assert_eq!(value(&key), c[field].as_f64().expect("count"), "{key}");
        }
        checked += 4;
    }
    let types = &metrics["types"];
    assert_eq!(types["mocap_bridge_output_latency_seconds"], "histogram");
    assert_eq!(types["mocap_bridge_input_frames"], "counter");
    assert_eq!(types["mocap_bridge_performers"], "gauge");
    let frames = value("mocap_bridge_solver_frames_total");
    assert!(frames > 0.0, "the sent take was solved");
    // The VMC output sent every frame; the NATS output, with no server, none.
    let nats = status["outputs"]
        .as_array()
        .and_then(|o| {
            o.iter().find(|o| {
                o["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("nats-out:"))
            })
        })
        .expect("the NATS output");
    assert_eq!(nats["frames"], 0);
    assert_eq!(nats["drops"].as_f64(), Some(frames));
    // The clients' output counts a frame for each pose a client got.
    let clients = status["outputs"]
        .as_array()
        .and_then(|o| {
            o.iter()
                .find(|o| o["name"].as_str().is_some_and(|n| n.ends_with(" clients")))
        })
        .expect("the clients' output");
    assert!(received > 0, "the listening client got poses");
    assert_eq!(
        clients["frames"].as_u64(),
        Some(received),
        "the clients' frames are the poses the client got"
    );
    println!(
        "/metrics: {} samples, {checked} compared with the WebSocket status ({frames} frames, \
         {received} poses to a client)",
        samples.len()
    );
}
