//! The web pages in a real browser: Debian's headless Chromium, driven by
//! playwright-core (npm, `tests/web/`), against the real `run` binary. Screenshots
//! are kept in `target/web-artifacts/`.
//!
//! Chromium is looked for at `$CHROMIUM` or `/usr/bin/chromium` (`.ci/run` installs
//! Debian's `chromium`). Without it these tests skip with a message, except under
//! CI (`CI` set), where a missing browser is a failure.
//!
//! A test binary of its own, its tests one at a time: a browser, a bridge and 16
//! performers at 120 Hz fill a 2-core machine, and the load test measures whether
//! the page keeps up, which nothing else running beside it should decide.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use mocap_bridge::formats::vrma;
use serde_json::{Value, json};

mod common;
#[path = "bridge/harness.rs"]
#[allow(dead_code)] // the bridge tests use the rest of it
mod harness;

use common::node;
use harness::{Bridge, free_tcp_port, quiet_config, repo};

/// Held by each test for its whole run.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `tests/web` ready to run (packages installed), or `None` (after saying why)
/// when there is no Chromium outside CI.
fn browser_ready() -> Option<PathBuf> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Chromium at {} (CI must install Debian's chromium: see .ci/run)",
            chromium.display()
        );
        eprintln!(
            "skipping: no Chromium at {} (install Debian's `chromium`, or set CHROMIUM)",
            chromium.display()
        );
        return None;
    }
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match READY.get_or_init(|| node::install("tests/web")) {
        Ok(dir) => Some(dir.clone()),
        Err(e) => panic!("the browser tests' packages: {e}"),
    }
}

/// What each test starts from: the lock that keeps it alone, `tests/web`, a
/// scratch directory and a free port; `None` when the browser tests skip.
struct Setup {
    _alone: std::sync::MutexGuard<'static, ()>,
    web: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

fn setup() -> Option<Setup> {
    let alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Some(Setup {
        web: browser_ready()?,
        dir: tempfile::tempdir().expect("tempdir"),
        port: free_tcp_port(),
        _alone: alone,
    })
}

fn artifacts() -> PathBuf {
    let dir = repo().join("target/web-artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts folder");
    dir
}

/// Runs `node tests/web/<script> --url URL args...`; its stdout's JSON line.
fn drive(web: &Path, script: &str, url: &str, args: &[(&str, &str)]) -> Value {
    let out_dir = artifacts();
    let mut command = Command::new(node::NODE);
    command
        .arg(web.join(script))
        .args(["--url", url])
        .arg("--out")
        .arg(&out_dir);
    for (k, v) in args {
        command.arg(format!("--{k}")).arg(v);
    }
    let out = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}):\n{stdout}\n{stderr}"));
    println!("{script}: {result}");
    println!("screenshots in {}", out_dir.display());
    result
}

/// A bridge with only its web server, on a free port.
fn web_config(port: u16) -> Value {
    let mut config = quiet_config();
    config["websocket"] = json!({ "listen": format!("127.0.0.1:{port}") });
    config
}

fn point(v: &Value) -> [f64; 3] {
    let a = v.as_array().expect("a point");
    [0, 1, 2].map(|i| a[i].as_f64().expect("a number"))
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn the_viewer_shows_a_replay_moving_and_records_from_its_buttons() {
    let Some(t) = setup() else { return };
    let (web, dir, port) = (t.web.as_path(), t.dir.path(), t.port);
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let bridge = Bridge::start(
        dir,
        &web_config(port),
        &[
            "--replay",
            sample.to_str().expect("path"),
            "--loop",
            "--quiet",
        ],
    );
    let r = drive(
        web,
        "viewer.mjs",
        &format!("http://127.0.0.1:{port}/"),
        &[("performer", "walk-and-wave")],
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    assert_eq!(r["stats"]["decodeErrors"], 0);
    // The skeleton moved between the two screenshots: on screen and in space.
    let changed = r["changedPixels"].as_u64().expect("count");
    assert!(changed > 500, "only {changed} pixels changed");
    let hands: Vec<[f64; 3]> = r["hands"]
        .as_array()
        .expect("hand samples")
        .iter()
        .map(point)
        .collect();
    let moved = hands
        .iter()
        .map(|h| distance(hands[0], *h))
        .fold(0.0, f64::max);
    assert!(moved > 0.01, "the left hand moved at most {moved} m");
    assert!(
        r["hovered"]
            .as_str()
            .is_some_and(|h| h.starts_with("walk-and-wave · ")),
        "hovering a joint names it: {}",
        r["hovered"]
    );
    // Record, stop, and the take is listed and downloads whole.
    let stopped = r["stopped"].as_str().expect("note");
    let frames: usize = stopped
        .rsplit_once('(')
        .and_then(|(_, f)| f.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count in {stopped:?}"));
    assert!(frames > 10, "{stopped}");
    let file = r["listed"][0]["file"].as_str().expect("a listed file");
    assert_eq!(file, "walk-and-wave.vrma");
    let path = dir.join("recordings").join(file);
    let bytes = std::fs::metadata(&path).expect("the take exists").len();
    assert_eq!(r["download"]["status"], 200);
    assert_eq!(r["download"]["bytes"], bytes);
    assert_eq!(r["download"]["type"], "model/gltf-binary");
    let take = vrma::load(&path, None).expect("the take reads");
    assert_eq!(
        take.key_times().len(),
        frames,
        "frames in {}",
        path.display()
    );
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_xr_page_sends_a_mocked_headset_and_the_avatar_follows() {
    let Some(t) = setup() else { return };
    let (web, dir, port) = (t.web.as_path(), t.dir.path(), t.port);
    let bridge = Bridge::start(dir, &web_config(port), &["--quiet"]);
    let r = drive(web, "xr.mjs", &format!("http://127.0.0.1:{port}/"), &[]);
    assert_eq!(r["errors"], json!([]), "the pages logged errors");
    assert_eq!(
        r["sent"]["options"]["requiredFeatures"],
        json!(["local-floor"])
    );
    let sent = r["sent"]["sent"].as_u64().expect("count");
    assert!(sent > 20, "{sent} frames sent");
    assert_eq!(
        r["sent"]["skipped"], 0,
        "every mocked frame had all devices"
    );
    // The mocked controllers in WebXR space (user facing -Z) are, in the bridge's
    // space, the left one at (0.22, 0.85, 0.05) then (0.2, 2.0, 0.05): reachable
    // the first time (hit within 1 cm), above the head's reach the second.
    let down = point(&r["down"]["left"]);
    assert!(
        distance(down, [0.22, 0.85, 0.05]) < 0.01,
        "left hand at {down:?}"
    );
    let up = point(&r["up"]["left"]);
    assert!(
        up[1] - down[1] > 0.8,
        "the left hand rose from {down:?} to {up:?}"
    );
    let right = distance(point(&r["down"]["right"]), point(&r["up"]["right"]));
    assert!(right < 0.01, "the right hand moved {right} m");
    // Tracked hand joints bend the fingers: the mocked index finger runs straight
    // out (+X) to its middle joint, then 45° down; the middle finger stays straight.
    let direction = |from: &str, to: &str| {
        let (a, b) = (point(&r["fingers"][from]), point(&r["fingers"][to]));
        let n = distance(a, b);
        [(b[0] - a[0]) / n, (b[1] - a[1]) / n, (b[2] - a[2]) / n]
    };
    let proximal = direction("leftIndexProximal", "leftIndexIntermediate");
    assert!(proximal[0] > 0.999, "index proximal {proximal:?}");
    let intermediate = direction("leftIndexIntermediate", "leftIndexDistal");
    let half = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        distance(intermediate, [half, -half, 0.0]) < 0.01,
        "index intermediate {intermediate:?}"
    );
    let middle = direction("leftMiddleIntermediate", "leftMiddleDistal");
    assert!(middle[0] > 0.999, "middle intermediate {middle:?}");
    // With "sources" checked the viewer has the devices as the bridge got them.
    let devices = &r["devices"];
    assert_eq!(devices["skeleton"], Value::Null);
    let at = |name: &str| {
        devices["points"]
            .as_array()
            .and_then(|p| p.iter().find(|d| d["name"] == name))
            .map(|d| point(&d["position"]))
            .unwrap_or_else(|| panic!("no {name} in {devices}"))
    };
    for (name, want) in [
        ("head", [0.0, 1.6, 0.0]),
        ("leftHand", [0.2, 2.0, 0.05]),
        ("rightHand", [-0.22, 0.85, 0.05]),
    ] {
        let got = at(name);
        assert!(distance(got, want) < 1e-5, "{name} at {got:?}");
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_viewer_keeps_up_with_16_performers_at_120_hz() {
    let Some(t) = setup() else { return };
    let (web, dir, port) = (t.web.as_path(), t.dir.path(), t.port);
    // The sample take resampled to 120 Hz.
    let take = dir.join("walk-120.vrma");
    let converted = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .arg("convert")
        .arg(repo().join("recordings/walk-and-wave.vrma"))
        .arg("-o")
        .arg(&take)
        .args(["--fps", "120"])
        .output()
        .expect("convert");
    assert!(converted.status.success(), "{converted:?}");
    let take_arg = take.to_str().expect("path");
    let mut args = Vec::new();
    for _ in 0..16 {
        args.extend(["--replay", take_arg]);
    }
    args.extend(["--loop", "--quiet"]);
    let bridge = Bridge::start(dir, &web_config(port), &args);
    let r = drive(
        web,
        "load.mjs",
        &format!("http://127.0.0.1:{port}/"),
        &[("performers", "16"), ("seconds", "5")],
    );
    let seconds = r["seconds"].as_f64().expect("seconds");
    let received = r["received"].as_u64().expect("count");
    let rendered = r["rendered"].as_u64().expect("count");
    let sent = r["clientsSent"].as_u64().expect("count");
    let lagged = r["clientDrops"].as_u64().expect("count");
    println!(
        "16 performers x 120 Hz for {seconds:.1} s: the bridge sent the page {sent} poses \
         ({:.0}/s), the page received {received} and drew {rendered} frames ({:.0}/s, \
         receive to draw mean {:.1} ms); poses skipped for the page because it fell \
         behind: {lagged}; poses the bridge's output passed over before any client: {}",
        sent as f64 / seconds,
        rendered as f64 / seconds,
        r["meanDelayMs"].as_f64().unwrap_or(0.0),
        r["outputDrops"]
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    assert_eq!(r["decodeErrors"], 0);
    let performers = r["performers"].as_object().expect("performers");
    assert_eq!(performers.len(), 16);
    for (name, p) in performers {
        assert!(p["received"].as_u64() > Some(0), "{name} got no poses");
    }
    assert!(rendered > 0, "the page drew nothing");
    // Keeping up: the page took what the bridge sent (the two counts are read a
    // moment apart, so a few poses may be in flight), and the bridge hardly ever
    // had to skip a pose for it; a page that falls behind makes the second count
    // grow with every pose it cannot take.
    assert!(
        received * 100 >= sent * 99,
        "the page received {received} of {sent}"
    );
    assert!(
        lagged * 100 <= sent,
        "the bridge skipped {lagged} of {sent} poses for the page"
    );
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}
