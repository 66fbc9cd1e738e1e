//! Bridges fanning performers out through real `nats-server`s: a take replayed on
//! one bridge arrives unchanged on others, directly (from the performer's
//! subjects, from the bridge's bundles, and from both at once without a frame
//! taken twice) and through a relay to a second server, with no loop; a server
//! killed mid-stream and restarted loses only the frames of the outage. The tests start their own servers on free
//! loopback ports; without `nats-server` installed they say so and pass, except
//! in CI (`CI` set), where a missing server fails them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mocap_bridge::protocol::nats::{
    Kind, Subject, decode_pose, parse_bundle_subject, split_bundle,
};
use serde_json::{Value, json};

use crate::harness::{Bridge, free_tcp_port, quiet_config, repo};
use crate::recording::{difference, frames_of, only_file};
use crate::websocket::{Client, connect, request};

/// The `nats-server` binary: `$NATS_SERVER`, else on the `PATH` or in Debian's
/// `/usr/sbin`. `None` (skip) when absent, unless in CI.
pub fn nats_server_binary(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("NATS_SERVER")
        .map(PathBuf::from)
        .or_else(|| {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
                .map(|dir| dir.join("nats-server"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: nats-server is not installed (CI installs it: .ci/run)"
        );
        println!("skipping {test}: nats-server is not installed (apt-get install nats-server)");
    }
    found
}

/// A `nats-server` of the test's own, on a loopback port; killed when dropped.
pub struct NatsServer {
    binary: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl NatsServer {
    pub fn start(binary: &Path) -> Self {
        let mut server = Self {
            binary: binary.to_owned(),
            port: free_tcp_port(),
            child: None,
        };
        server.restart();
        server
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on its port and waits until it accepts.
    pub fn restart(&mut self) {
        let child = Command::new(&self.binary)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the server is gone at once, as a crash.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Subjects and payloads, in arrival order.
type Messages = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Everything published on a server, as an independent subscriber sees it.
struct Watcher {
    /// Runs the subscription (dropped with the watcher).
    _runtime: tokio::runtime::Runtime,
    messages: Messages,
}

impl Watcher {
    fn subscribe(url: &str, subjects: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let messages = Arc::new(Mutex::new(Vec::new()));
        let into = messages.clone();
        let mut subscriber = runtime.block_on(async {
            let client = async_nats::connect(url).await.expect("connect");
            let subscriber = client.subscribe(subjects.to_owned()).await.expect("sub");
            client.flush().await.expect("flush");
            subscriber
        });
        runtime.spawn(async move {
            while let Some(m) = subscriber.next().await {
                let payload = m.payload.to_vec();
                into.lock().unwrap().push((m.subject.to_string(), payload));
            }
        });
        Self {
            _runtime: runtime,
            messages,
        }
    }

    /// The messages so far, by publishing bridge and kind: (performer token,
    /// payload) in arrival order.
    fn by_bridge(&self, bridge: &str, kind: Kind) -> Vec<(String, Vec<u8>)> {
        let messages = self.messages.lock().unwrap();
        messages
            .iter()
            .filter_map(|(subject, payload)| {
                let s = Subject::parse(subject)?;
                (s.bridge == bridge && s.kind == kind)
                    .then(|| (s.performer.to_owned(), payload.clone()))
            })
            .collect()
    }

    fn bridges(&self) -> Vec<String> {
        let messages = self.messages.lock().unwrap();
        let mut bridges: Vec<String> = messages
            .iter()
            .filter_map(|(subject, _)| Some(Subject::parse(subject)?.bridge.to_owned()))
            .collect();
        bridges.sort();
        bridges.dedup();
        bridges
    }
}

/// The sequence numbers of the poses in the bundles a watcher saw from `bridge`.
fn bundle_seqs(watcher: &Watcher, bridge: &str) -> Vec<u64> {
    let messages = watcher.messages.lock().unwrap();
    let mut seqs = Vec::new();
    for (_, payload) in messages
        .iter()
        .filter(|(subject, _)| parse_bundle_subject(subject) == Some(bridge))
    {
        for pose in split_bundle(payload).expect("a bundle") {
            let mut names = mocap_bridge::humanoid::CustomNames::default();
            seqs.push(decode_pose(pose, |_| &mut names).expect("a pose").0.seq);
        }
    }
    seqs
}

/// The sequence numbers of the poses a watcher saw from `bridge`.
fn pose_seqs(watcher: &Watcher, bridge: &str) -> Vec<u64> {
    watcher
        .by_bridge(bridge, Kind::Pose)
        .iter()
        .map(|(_, payload)| {
            let mut names = mocap_bridge::humanoid::CustomNames::default();
            decode_pose(payload, |_| &mut names).expect("a pose").0.seq
        })
        .collect()
}

/// A bridge's configuration: its name, NATS entries and, with `record`, every
/// performer recorded from its first frame.
fn nats_config(name: &str, inputs: &[&str], outputs: &[&str], record: bool) -> Value {
    let mut config = quiet_config();
    config["bridgeName"] = json!(name);
    config["natsInputs"] = inputs.iter().map(|s| json!({ "server": s })).collect();
    config["natsOutputs"] = outputs.iter().map(|s| json!({ "server": s })).collect();
    config["recorder"] = json!({ "recordOnStart": record });
    config
}

/// `config` with a WebSocket server on a free port, to watch the bridge through;
/// the port.
fn watched(mut config: Value) -> (Value, u16) {
    let port = free_tcp_port();
    config["websocket"] = json!({ "listen": format!("127.0.0.1:{port}") });
    (config, port)
}

/// Asks the bridge on `client` for its status until `done` holds; panics after a
/// minute (a busy machine can hold a bridge back for long, never that long).
fn wait_for_status(client: &mut Client, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = request(client, json!({"type": "status"}))["status"].clone();
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "{what}, never: {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Frames the bridge on `client` has taken from its performers, all together.
fn performer_frames(client: &mut Client) -> u64 {
    let list = request(client, json!({"type": "listPerformers"}));
    list["performers"]
        .as_array()
        .map_or(0, |p| p.iter().filter_map(|p| p["frames"].as_u64()).sum())
}

/// Waits (up to a minute) until the bridge on `client` has taken `frames` frames
/// from its performers.
fn wait_for_frames(client: &mut Client, what: &str, frames: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = performer_frames(client);
        if got >= frames {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {got} of {frames} frames"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (up to a minute) until `count` holds `frames` items.
fn wait_for_messages(what: &str, frames: usize, count: impl Fn() -> usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while count() < frames {
        assert!(Instant::now() < deadline, "{what}: {} of {frames}", count());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The status line a bridge printed last.
fn last_status(lines: &[String]) -> String {
    lines
        .iter()
        .rev()
        .find(|l| l.contains("solver:"))
        .cloned()
        .unwrap_or_default()
}

/// The number before the word `what` in the first `name: ...` part of a status
/// line that has it.
pub fn count_in(line: &str, name: &str, what: &str) -> u64 {
    let word = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned();
    line.split("; ")
        .filter(|p| p.starts_with(name))
        .find_map(|part| {
            let words: Vec<String> = part.split_whitespace().map(word).collect();
            let at = words.iter().position(|w| w == what)?;
            words.get(at.checked_sub(1)?)?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no count of `{what}` for `{name}` in {line}"))
}

/// Worst bone angle (degrees), hips distance (metres) and time difference
/// (seconds) between two takes of equal length.
fn compare_takes(a: &Path, b: &Path) -> (usize, f32, f32, f32) {
    let (fa, fb) = (frames_of(a), frames_of(b));
    assert_eq!(fa.len(), fb.len(), "{} vs {}", a.display(), b.display());
    let (mut worst, mut hips, mut dt) = (0.0f32, 0.0f32, 0.0f32);
    for ((ta, pa), (tb, pb)) in fa.iter().zip(&fb) {
        let (w, h) = difference(pa, pb);
        worst = worst.max(w);
        hips = hips.max(h);
        dt = dt.max((ta - tb).abs());
    }
    (fa.len(), worst, hips, dt)
}

#[test]
fn a_take_fans_out_through_nats_and_a_relay_unchanged() {
    let Some(binary) = nats_server_binary("a_take_fans_out_through_nats_and_a_relay_unchanged")
    else {
        return;
    };
    let (s1, s2) = (NatsServer::start(&binary), NatsServer::start(&binary));
    let (u1, u2) = (s1.url(), s2.url());
    let (watch1, watch2) = (
        Watcher::subscribe(&u1, "mocap.>"),
        Watcher::subscribe(&u2, "mocap.>"),
    );
    let dirs: BTreeMap<&str, tempfile::TempDir> = ["a", "b", "c", "d", "e"]
        .into_iter()
        .map(|n| (n, tempfile::tempdir().expect("tempdir")))
        .collect();
    // D reads the second server; C relays the first to the second and also
    // publishes to the first (where A's performer must not come back); B reads
    // the first (`mocap.>`: every performer's subjects and every bundle); E reads
    // only the bundles on the first.
    // Each watched through its WebSocket: how many frames it has taken.
    let (config_d, port_d) = watched(nats_config("d", &[&u2], &[], true));
    let d = Bridge::start(dirs["d"].path(), &config_d, &["--quiet"]);
    let (config_c, port_c) = watched(nats_config("c", &[&u1], &[&u2, &u1], false));
    let c = Bridge::start(dirs["c"].path(), &config_c, &["--quiet"]);
    let (config_b, port_b) = watched(nats_config("b", &[&u1], &[], true));
    let b = Bridge::start(dirs["b"].path(), &config_b, &["--quiet"]);
    let mut config_e = nats_config("e", &[], &[], true);
    config_e["natsInputs"] = json!([{ "server": u1, "subjects": "mocap.*.poses" }]);
    let (config_e, port_e) = watched(config_e);
    let e = Bridge::start(dirs["e"].path(), &config_e, &["--quiet"]);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let a = Bridge::start(
        dirs["a"].path(),
        &nats_config("a", &[], &[&u1], false),
        &[
            "--replay",
            sample.to_str().expect("utf-8"),
            "--record",
            "--quiet",
        ],
    );
    let (code, a_lines, stderr) = a.finish();
    assert_eq!(code, 0, "{stderr}");
    // Every frame A solved has reached the other bridges and the subscribers
    // before they stop (the relay's hop takes its time on a busy machine).
    let solved = count_in(&last_status(&a_lines), "solver", "frames");
    for (name, port) in [("b", port_b), ("c", port_c), ("d", port_d), ("e", port_e)] {
        let mut client = connect(port, "?poses=none").expect("WebSocket");
        wait_for_frames(&mut client, name, solved);
    }
    let solved = solved as usize;
    wait_for_messages("A's poses on the first server", solved, || {
        pose_seqs(&watch1, "a").len()
    });
    wait_for_messages("A's bundles on the first server", solved, || {
        bundle_seqs(&watch1, "a").len()
    });
    wait_for_messages("C's bundles on the second server", solved, || {
        bundle_seqs(&watch2, "c").len()
    });
    wait_for_messages("C's relay on the second server", solved, || {
        pose_seqs(&watch2, "c").len()
    });
    let mut lines = BTreeMap::new();
    for (name, bridge) in [("b", b), ("c", c), ("d", d), ("e", e)] {
        let (code, out, stderr) = bridge.stop();
        assert_eq!(code, 0, "{name}: {stderr}");
        lines.insert(name, last_status(&out));
    }

    let take = |name: &str| only_file(&dirs[name].path().join("recordings"), ".vrma");
    let (frames, worst_b, hips_b, dt_b) = compare_takes(&take("a"), &take("b"));
    let (_, worst_d, hips_d, dt_d) = compare_takes(&take("a"), &take("d"));
    let (_, worst_e, hips_e, dt_e) = compare_takes(&take("a"), &take("e"));
    // The independent subscribers saw every sequence number once, in order, on
    // the performer's subject and in the bundles alike.
    let expected: Vec<u64> = (1..=frames as u64).collect();
    assert_eq!(
        pose_seqs(&watch1, "a"),
        expected,
        "A's poses on the first server"
    );
    assert_eq!(
        bundle_seqs(&watch1, "a"),
        expected,
        "A's bundles on the first server"
    );
    assert_eq!(
        bundle_seqs(&watch2, "c"),
        expected,
        "C's bundles on the second server"
    );
    assert_eq!(
        pose_seqs(&watch2, "c"),
        expected,
        "C's relay on the second server"
    );
    // Loop-free: C published nothing of A's performer back to the first server.
    assert_eq!(watch1.bridges(), ["a"], "bridges heard on the first server");
    assert_eq!(
        bundle_seqs(&watch1, "c"),
        [0u64; 0],
        "C's bundles on the first"
    );
    let status: Vec<Value> = watch1
        .by_bridge("a", Kind::Status)
        .iter()
        .map(|(_, p)| serde_json::from_slice(p).expect("JSON status"))
        .collect();
    assert_eq!(
        status.first().map(|s| s["state"].clone()),
        Some(json!("appeared"))
    );
    for (name, line) in &lines {
        let input = format!("nats-in:{}", if *name == "d" { &u2 } else { &u1 });
        assert_eq!(count_in(line, &input, "lost"), 0, "{name}: {line}");
    }
    let a_line = last_status(&a_lines);
    println!(
        "{frames} frames A → B (one server, every subject) worst {worst_b:.7}°, hips {:.4} mm, times ±{dt_b} s; \
         A → E (bundles only) worst {worst_e:.7}°, hips {:.4} mm, times ±{dt_e} s; \
         A → C → D (relay to a second server) worst {worst_d:.7}°, hips {:.4} mm, times ±{dt_d} s\nA: {a_line}\nB: {}\nC: {}",
        hips_b * 1e3,
        hips_e * 1e3,
        hips_d * 1e3,
        lines["b"],
        lines["c"]
    );
    for (worst, hips, dt) in [
        (worst_b, hips_b, dt_b),
        (worst_e, hips_e, dt_e),
        (worst_d, hips_d, dt_d),
    ] {
        assert!(
            worst <= 1e-4 && hips <= 1e-6 && dt <= 1e-6,
            "{worst}° {hips} m {dt} s"
        );
    }
}

#[test]
fn a_server_killed_for_two_seconds_loses_only_the_frames_of_the_outage() {
    let test = "a_server_killed_for_two_seconds_loses_only_the_frames_of_the_outage";
    let Some(binary) = nats_server_binary(test) else {
        return;
    };
    let mut server = NatsServer::start(&binary);
    let url = server.url();
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let mut config_b = nats_config("b", &[&url], &[], true);
    // One take across the outage: the performer outlives it.
    config_b["pipeline"] = json!({ "performerTimeoutS": 30.0 });
    // Both watched through their WebSockets: their connections and B's frames.
    let (config_b, port_b) = watched(config_b);
    let b = Bridge::start(dir_b.path(), &config_b, &["--quiet"]);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let (config_a, port_a) = watched(nats_config("a", &[], &[&url], false));
    let a = Bridge::start(
        dir_a.path(),
        &config_a,
        &[
            "--replay",
            sample.to_str().expect("utf-8"),
            "--loop",
            "--quiet",
        ],
    );
    let (mut watch_a, mut watch_b) = (
        connect(port_a, "?poses=none").expect("A's WebSocket"),
        connect(port_b, "?poses=none").expect("B's WebSocket"),
    );
    // A second of motion through the server, then the outage.
    wait_for_frames(&mut watch_b, "B before the outage", 60);
    server.kill();
    let outage = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    server.restart();
    let outage = outage.elapsed();
    // Both connect again by themselves (however long a busy machine takes), and
    // another second of motion comes through.
    let reconnected = |status: &Value| {
        status["connections"].as_array().is_some_and(|c| {
            !c.is_empty()
                && c.iter()
                    .all(|c| c["connected"] == json!(true) && c["connects"] == json!(2))
        })
    };
    wait_for_status(&mut watch_a, "A connected again", reconnected);
    wait_for_status(&mut watch_b, "B connected again", reconnected);
    let frames = performer_frames(&mut watch_b);
    wait_for_frames(&mut watch_b, "B after the outage", frames + 60);
    drop((watch_a, watch_b));
    let (code_a, lines_a, stderr_a) = a.stop();
    std::thread::sleep(Duration::from_millis(300));
    let (code_b, lines_b, stderr_b) = b.stop();
    assert_eq!(code_a, 0, "A: {stderr_a}");
    assert_eq!(code_b, 0, "B: {stderr_b}");
    let (line_a, line_b) = (last_status(&lines_a), last_status(&lines_b));
    let out = format!("nats-out:{url}");
    let input = format!("nats-in:{url}");
    // Both reconnected by themselves.
    assert_eq!(count_in(&line_a, &out, "reconnects"), 1, "{line_a}");
    assert_eq!(count_in(&line_b, &input, "reconnects"), 1, "{line_b}");

    // B's take: the frames before and after the outage, with one gap.
    let frames = frames_of(&only_file(&dir_b.path().join("recordings"), ".vrma"));
    let step = frames[1].0 - frames[0].0;
    let gaps: Vec<(usize, f32)> = frames
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[1].0 - w[0].0 > 1.5 * step)
        .map(|(i, w)| (i, w[1].0 - w[0].0))
        .collect();
    assert_eq!(gaps.len(), 1, "one run of lost frames, not {gaps:?}");
    let (before, gap) = gaps[0];
    let missing = (gap / step).round() as u64 - 1;
    let after = frames.len() - before - 1;
    let lost = count_in(&line_b, &input, "lost");
    let dropped_by_a = count_in(&line_a, &out, "drops");
    let published = count_in(&line_a, &out, "frames");
    let solved = count_in(&line_a, "solver", "frames");
    println!(
        "server down {:.2} s: B received {} frames before and {after} after; lost {lost} \
         ({:.2} s of motion at {:.0} Hz) in one run: A dropped {dropped_by_a} while disconnected, \
         the rest went down with the connection\nA: {line_a}\nB: {line_b}",
        outage.as_secs_f32(),
        before + 1,
        gap - step,
        1.0 / step,
    );
    // The frames resumed, and every frame missing from the take is one counted lost.
    assert!(after > 0 && before > 0);
    assert_eq!(
        lost, missing,
        "frames lost as counted vs missing from B's take"
    );
    // A's accounting: every frame solved was published or dropped while the
    // server was away; B has the published ones but for those the dying
    // connection took with it, which are among its lost frames too.
    assert_eq!(published + dropped_by_a, solved, "{line_a}");
    let b_frames = frames.len() as u64;
    assert!(
        b_frames + lost <= solved && b_frames <= published,
        "{line_a}\n{line_b}"
    );
}
