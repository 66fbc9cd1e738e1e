//! docs/websocket.md as a test: its example `skeleton` and `trackers` frames and
//! its fenced example requests are read out of the page and sent, in the page's
//! order, to the running bridge; every reply must have the type, the `id` and the
//! shape of the page's reply with the same `id` (the same keys at every level, the
//! same kind of value), and the recording files it names are the ones written.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{Bridge, free_tcp_port, quiet_config, repo};
use crate::websocket::{connect, request};

/// The fenced ```json blocks of `markdown`, each with the `###` heading it is under.
fn json_blocks(markdown: &str) -> Vec<(String, String)> {
    let (mut heading, mut block, mut blocks) = (String::new(), None::<String>, Vec::new());
    for line in markdown.lines() {
        match (&mut block, line.trim_end()) {
            (None, l) if l.starts_with("### ") => heading = l[4..].to_owned(),
            (None, "```json") => block = Some(String::new()),
            (Some(_), "```") => blocks.push((heading.clone(), block.take().unwrap_or_default())),
            (Some(text), l) => {
                text.push_str(l);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The first block under the heading starting with `heading`, as one JSON value.
fn example(blocks: &[(String, String)], heading: &str) -> Value {
    let (_, text) = blocks
        .iter()
        .find(|(h, _)| h.starts_with(heading))
        .unwrap_or_else(|| panic!("docs/websocket.md has no example under `### {heading}`"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the `{heading}` example: {e}"))
}

/// Every line of the blocks under the heading `heading`, each one JSON value.
fn example_lines(blocks: &[(String, String)], heading: &str) -> Vec<Value> {
    let lines: Vec<Value> = blocks
        .iter()
        .filter(|(h, _)| h == heading)
        .flat_map(|(_, text)| text.lines().filter(|l| !l.trim().is_empty()))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{heading}: {l}: {e}")))
        .collect();
    assert!(!lines.is_empty(), "no examples under `### {heading}`");
    lines
}

/// Whether `got` has the shape of the documented `doc`: objects with the same
/// keys, each value of the same shape; arrays whose every element has the shape
/// of the documented first one; numbers, strings and booleans of the same kind. A
/// `null` on either side stands for "null or a value" (the page says which keys).
fn same_shape(doc: &Value, got: &Value, at: &str) -> Result<(), String> {
    match (doc, got) {
        (Value::Null, _) | (_, Value::Null) => Ok(()),
        (Value::Object(d), Value::Object(g)) => {
            let (mut dk, mut gk): (Vec<_>, Vec<_>) = (d.keys().collect(), g.keys().collect());
            dk.sort();
            gk.sort();
            if dk != gk {
                return Err(format!("{at}: keys {gk:?}, the page shows {dk:?}"));
            }
            d.iter()
                .try_for_each(|(k, v)| same_shape(v, &g[k], &format!("{at}.{k}")))
        }
        (Value::Array(d), Value::Array(g)) => match d.first() {
            Some(first) => g
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| same_shape(first, v, &format!("{at}[{i}]"))),
            None => Ok(()),
        },
        (Value::Number(_), Value::Number(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_)) => Ok(()),
        _ => Err(format!("{at}: {got}, the page shows {doc}")),
    }
}

/// Alice's next frame (the example's, a frame later), once it is in her take: a
/// take stopped before any frame writes nothing.
fn alice_moves(client: &mut crate::websocket::Client, skeleton: &Value) {
    let mut next = skeleton.clone();
    next["frame"] = json!(skeleton["frame"].as_u64().expect("frame") + 1);
    next["time"] = json!(skeleton["time"].as_f64().expect("time") + 1.0 / 60.0);
    client
        .send(tungstenite::Message::text(next.to_string()))
        .expect("send");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let status = request(client, json!({"type": "status", "id": 1001}));
        let recorded = status["status"]["outputs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["name"] == "recorder")
            .and_then(|o| o["frames"].as_u64());
        if recorded.is_some_and(|n| n > 0) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "alice's frame never reached her take: {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_websocket_doc_examples_get_the_replies_the_doc_shows() {
    let page = std::fs::read_to_string(repo().join("docs/websocket.md")).expect("the page");
    let blocks = json_blocks(&page);
    let skeleton = example(&blocks, "`skeleton`");
    let trackers = example(&blocks, "`trackers`");
    let requests = example_lines(&blocks, "Requests");
    let replies = example_lines(&blocks, "Replies");
    assert!(requests.len() >= 5, "{requests:?}");

    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = quiet_config();
    config["websocket"] = json!({"listen": format!("127.0.0.1:{port}")});
    config["recorder"] = json!({"dir": "recordings"});
    // The examples' performers stay while the requests are answered.
    config["pipeline"] = json!({"performerTimeoutS": 600.0});
    let bridge = Bridge::start(dir.path(), &config, &[]);
    let mut client = connect(port, "?poses=none").expect("ws");
    for frame in [&skeleton, &trackers] {
        client
            .send(tungstenite::Message::text(frame.to_string()))
            .expect("send");
    }
    // Both performers of the examples are there before the requests.
    let mut present = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let list = request(&mut client, json!({"type": "listPerformers", "id": 1000}));
        present = list["performers"].as_array().map_or(0, Vec::len);
        if present == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(present, 2, "the example frames made no performers");

    for sent in &requests {
        let got = request(&mut client, sent.clone());
        let id = &sent["id"];
        let want_id = if id.is_u64() { id.clone() } else { Value::Null };
        let doc = replies
            .iter()
            .find(|r| r["id"] == want_id)
            .unwrap_or_else(|| panic!("the page shows no reply with id {want_id} for {sent}"));
        println!("{sent}\n  -> {got}");
        assert_eq!(got["type"], doc["type"], "{sent}: {got}");
        assert_eq!(got["id"], want_id, "{sent}: {got}");
        if let Err(e) = same_shape(doc, &got, "reply") {
            panic!("{sent}: {e}\n  got {got}");
        }
        // The recording files the page names are the ones written.
        for (d, g) in doc["recordings"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(got["recordings"].as_array().into_iter().flatten())
        {
            assert_eq!(g["file"], d["file"], "{sent}: {got}");
        }
        if sent["type"] == "startRecording" && sent["performer"] == "alice" {
            alice_moves(&mut client, &skeleton);
        }
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("recordings/take-01.vrma").exists());
}
