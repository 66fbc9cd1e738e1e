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

use glam::{DQuat, Quat, Vec3};
use mocap_bridge::assets::assets_dir;
use mocap_bridge::formats::inspect::map_rig;
use mocap_bridge::formats::mannequin::mannequin_vrm;
use mocap_bridge::formats::{LoadOptions, load_rig, vrma};
use mocap_bridge::humanoid::{HumanBone, HumanoidPose};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig};
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
        take.frame_times().len(),
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
        "every mocked frame had the headset"
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
    // The left hand lost by the session: the page sends on (nothing skipped), and the
    // left arm hangs, the hand below the shoulders, while the right stays put.
    let hung = point(&r["hung"]["left"]);
    assert!(hung[1] < 1.1, "the lost left hand at {hung:?}");
    let right = distance(point(&r["held"]["right"]), point(&r["hung"]["right"]));
    assert!(right < 0.01, "the right hand moved {right} m");
    // Calibrating from the viewer's row or from /xr says where it was saved.
    let saved = format!("calibrated; saved in {}", dir.join("bridge.json").display());
    assert_eq!(r["calibrated"]["viewer"], format!("calibrate xr: {saved}"));
    assert_eq!(r["calibrated"]["xr"], saved);
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// Prints what load.mjs counted in one of its phases; returns its seconds,
/// poses received and poses the bridge sent.
fn print_load(what: &str, r: &Value) -> (f64, u64, u64) {
    let seconds = r["seconds"].as_f64().expect("seconds");
    let count = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
    let (received, rendered, sent) = (count("received"), count("rendered"), count("clientsSent"));
    let (lagged, skipped) = (count("clientDrops"), count("skipped"));
    let ms = |k: &str| r[k].as_f64().unwrap_or(0.0);
    println!(
        "16 performers x 120 Hz, {what}, {seconds:.1} s: the bridge sent the page {sent} poses \
         ({:.0}/s), the page received {received} and drew {rendered} frames ({:.1}/s; per \
         frame {:.1} ms posing, {:.1} ms handing the stage to WebGL), each frame every \
         performer's newest pose: {} drawn, {skipped} replaced by a newer one before a frame \
         drew them ({:.0} %), receive to draw mean {:.1} ms; poses skipped for the page \
         because it fell behind: {lagged}; poses the bridge's output passed over before any \
         client: {}",
        sent as f64 / seconds,
        rendered as f64 / seconds,
        ms("poseMsPerFrame"),
        ms("renderMsPerFrame"),
        r["posesDrawn"],
        100.0 * skipped as f64 / received.max(1) as f64,
        ms("meanDelayMs"),
        r["outputDrops"]
    );
    (seconds, received, sent)
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
    let out = drive(
        web,
        "load.mjs",
        &format!("http://127.0.0.1:{port}/"),
        &[("performers", "16"), ("seconds", "5")],
    );
    assert_eq!(out["errors"], json!([]), "the page logged errors");
    // Stick figures only: the page keeps up.
    let r = &out["skeletons"];
    let (seconds, received, sent) = print_load("stick figures", r);
    assert_eq!(r["decodeErrors"], 0);
    assert_eq!(r["avatars"], 0, "the avatars are off");
    let performers = r["performers"].as_object().expect("performers");
    assert_eq!(performers.len(), 16);
    for (name, p) in performers {
        assert!(p["received"].as_u64() > Some(0), "{name} got no poses");
    }
    assert!(
        r["rendered"].as_u64() > Some(0),
        "the page drew nothing in {seconds} s"
    );
    // The page took what the bridge sent (the two counts are read a moment apart,
    // so a few poses may be in flight). How many poses the bridge skipped because
    // the page fell behind depends on how busy the machine is: printed above, not
    // checked.
    assert!(
        received * 100 >= sent * 99,
        "the page received {received} of {sent}"
    );
    // On avatars: every performer drawn on one, each frame its newest pose; how
    // many frames a second that makes depends on the machine's 3D drawing
    // (printed, not checked: headless Chromium draws WebGL in software).
    let r = &out["avatars"];
    print_load("avatars", r);
    assert_eq!(r["avatars"], 16, "every performer is drawn on an avatar");
    assert_eq!(r["decodeErrors"], 0);
    assert!(r["rendered"].as_u64() > Some(0), "the page drew nothing");
    assert!(r["posesDrawn"].as_u64() > Some(0), "no pose was drawn");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

// --- avatars ------------------------------------------------------------------

/// An avatar file as the bridge loads it (`inspect::map_rig`, as `run --avatar`
/// does): its rig mapped, ready to pose.
struct Model {
    mapped: MappedSkeleton,
    target: TargetRig,
    /// The turn three-vrm gives the model's scene: half a turn about +Y for a
    /// VRM 0.x model (it faces -Z, `VRMUtils.rotateVRM0`), none for VRM 1.0.
    turn: Quat,
}

impl Model {
    fn load(path: &Path, vrm0: bool) -> Model {
        let rig = load_rig(path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mapped = map_rig(&path.display().to_string(), &rig, None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let target = TargetRig::new(&mapped);
        let turn = if vrm0 {
            Quat::from_rotation_y(std::f32::consts::PI)
        } else {
            Quat::IDENTITY
        };
        // The bridge turns the model as three-vrm does.
        let facing = mapped.correction.facing.angle_between(turn).to_degrees();
        assert!(facing < 0.1, "{}: facing off by {facing}°", path.display());
        Model {
            turn,
            target,
            mapped,
        }
    }

    /// World position of every bone the model maps, for `pose`, by the bridge's
    /// own retargeting (`FromNormalized`) and forward kinematics of its joints,
    /// turned as three-vrm turns the model.
    fn bones(&self, pose: &HumanoidPose) -> Vec<(HumanBone, Vec3)> {
        let skeleton = &self.mapped.skeleton;
        let mut rotations = vec![Quat::IDENTITY; self.target.joint_count()];
        let mut hips = Vec3::ZERO;
        FromNormalized {
            target: &self.target,
            pose,
            local_rotations: &mut rotations,
            hips_translation: &mut hips,
        }
        .run()
        .expect("the pose poses the model");
        let mut translations = skeleton.rest_translations();
        translations[self.target.hips_joint()] = hips;
        let world = skeleton.world_transforms(&rotations, &translations);
        self.mapped
            .map
            .pairs()
            .map(|(bone, joint)| (bone, self.turn * Vec3::from(world[joint].translation)))
            .collect()
    }
}

/// The pose the page says its avatar shows (`viewer.avatar(...).pose`).
fn page_pose(v: &Value) -> HumanoidPose {
    let number = |v: &Value| v.as_f64().expect("a number") as f32;
    let mut pose = HumanoidPose::default();
    let r: Vec<f32> = v["rotations"]
        .as_array()
        .expect("rotations")
        .iter()
        .map(number)
        .collect();
    for (i, present) in v["present"].as_array().expect("present").iter().enumerate() {
        if present.as_u64() == Some(1) {
            let bone = HumanBone::from_index(i).expect("a bone");
            pose.set_rotation(bone, Quat::from_slice(&r[4 * i..4 * i + 4]));
        }
    }
    let h: Vec<f32> = v["hips"]
        .as_array()
        .expect("hips")
        .iter()
        .map(number)
        .collect();
    pose.hips_position = Vec3::from_slice(&h);
    pose.rest_hips_height = number(&v["restHipsHeight"]);
    pose
}

/// The largest distance between the page's bones and the bridge's own forward
/// kinematics of the same pose on the same model, over every bone the model maps
/// and every sample: metres, which bone, and how many poses.
fn worst_bone(model: &Model, samples: &[Value]) -> (f32, String, usize) {
    let mut worst = (0.0f32, String::new(), 0);
    let mut seqs: Vec<u64> = samples.iter().filter_map(|s| s["seq"].as_u64()).collect();
    seqs.sort_unstable();
    seqs.dedup();
    worst.2 = seqs.len();
    for sample in samples {
        let pose = page_pose(&sample["pose"]);
        for (bone, ours) in model.bones(&pose) {
            let page = &sample["bones"][bone.name()];
            assert!(page.is_array(), "the page's avatar has no {}", bone.name());
            let page = Vec3::from_array(point(page).map(|c| c as f32));
            let d = page.distance(ours);
            if d > worst.0 {
                worst.0 = d;
                worst.1 = format!("{} at seq {}", bone.name(), sample["seq"]);
            }
        }
    }
    worst
}

/// Checks the page's avatar against the bridge's forward kinematics: every
/// humanoid bone the avatar has, fingers included, within 1 mm, over poses that
/// change.
fn check_avatar_bones(what: &str, path: &Path, samples: &[Value]) {
    let vrm0 = samples[0]["metaVersion"] == "0";
    let model = Model::load(path, vrm0);
    let (worst, at, poses) = worst_bone(&model, samples);
    println!(
        "{what}: {} bones of {} ({}), {poses} poses: the page's avatar is at most {:.4} mm \
         from the bridge's forward kinematics ({at})",
        model.mapped.map.pairs().count(),
        path.display(),
        if vrm0 { "VRM 0.x" } else { "VRM 1.0" },
        worst * 1000.0
    );
    assert!(poses >= 3, "{what}: only {poses} different poses sampled");
    assert!(worst < 0.001, "{what}: {:.4} mm at {at}", worst * 1000.0);
}

/// How far the page's avatar moved its left hand over the samples, metres.
fn hand_moved(samples: &[Value]) -> f64 {
    let at = |s: &Value| point(&s["bones"]["leftHand"]);
    samples
        .iter()
        .map(|s| distance(at(&samples[0]), at(s)))
        .fold(0.0, f64::max)
}

/// Starts a bridge replaying the sample take (on `avatar`, when given) and reads
/// the page's avatar with avatar.mjs (`extra`: its other options).
fn avatar_run(t: &Setup, avatar: Option<&Path>, file: &str, extra: &[(&str, &str)]) -> Value {
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let r = replay_on_avatar(t, &sample, avatar, file, 12, extra);
    let samples = r["samples"].as_array().expect("samples");
    assert!(hand_moved(samples) > 0.05, "the replay did not move");
    r
}

/// Starts a bridge replaying `take` (on `avatar`, when given) and reads the
/// page's avatar `samples` times, 150 ms apart, with avatar.mjs (`extra`: its
/// other options).
fn replay_on_avatar(
    t: &Setup,
    take: &Path,
    avatar: Option<&Path>,
    file: &str,
    samples: usize,
    extra: &[(&str, &str)],
) -> Value {
    let performer = take.file_stem().and_then(|s| s.to_str()).expect("a name");
    let mut args = vec![
        "--replay",
        take.to_str().expect("path"),
        "--loop",
        "--quiet",
    ];
    if let Some(avatar) = avatar {
        args.extend(["--avatar", avatar.to_str().expect("path")]);
    }
    let bridge = Bridge::start(t.dir.path(), &web_config(t.port), &args);
    let samples = samples.to_string();
    let mut options = vec![
        ("performer", performer),
        ("file", file),
        ("samples", samples.as_str()),
    ];
    options.extend(extra);
    let r = drive(
        &t.web,
        "avatar.mjs",
        &format!("http://127.0.0.1:{}/", t.port),
        &options,
    );
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    r
}

#[test]
fn the_viewer_shows_a_takes_expressions_and_gaze_on_the_avatar() {
    let Some(assets) = assets_dir() else { return };
    let Some(t) = setup() else { return };
    // three-vrm's own test take: `happy` and a lookAt, both animated, each away
    // from rest for one second of its three-second loop. 24 samples 150 ms apart
    // span more than a loop, so both show whatever the phase the page starts at.
    let take = assets.join("vrma/test.vrma");
    let r = replay_on_avatar(&t, &take, None, "mannequin.vrm", 24, &[]);
    let samples = r["samples"].as_array().expect("samples");
    let mut smiled = 0;
    let mut looked = 0;
    for sample in samples {
        let pose = &sample["pose"];
        let happy = pose["presets"]["happy"]
            .as_f64()
            .expect("happy in every pose");
        assert_eq!(
            sample["expressions"]["happy"].as_f64(),
            Some(happy),
            "{sample}"
        );
        if happy > 0.0 {
            smiled += 1;
        }
        // three-vrm keeps the eyes' yaw and pitch in degrees.
        for angle in ["yaw", "pitch"] {
            let want = pose["lookAt"][angle]
                .as_f64()
                .expect("a lookAt")
                .to_degrees();
            let got = sample["lookAt"][angle]
                .as_f64()
                .expect("the avatar's lookAt");
            assert!((got - want).abs() < 1e-4, "{angle}: {got}° for {want}°");
        }
        if pose["lookAt"]["yaw"].as_f64() != Some(0.0) {
            looked += 1;
        }
    }
    println!(
        "test.vrma on the mannequin: {smiled} of {} poses smiling, {looked} looking aside",
        samples.len()
    );
    assert!(
        smiled > 0 && looked > 0,
        "the take's expression and gaze never showed"
    );
}

#[test]
fn the_viewer_draws_a_replay_on_the_mannequin_as_the_bridge_poses_it_and_takes_a_dropped_vrm() {
    let Some(assets) = assets_dir() else { return };
    let Some(t) = setup() else { return };
    let mannequin = t.dir.path().join("mannequin.vrm");
    std::fs::write(&mannequin, mannequin_vrm()).expect("write the mannequin");
    let dropped = assets.join("vrm/basic_armature_vrm0.vrm");
    let r = avatar_run(
        &t,
        None,
        "mannequin.vrm",
        &[
            ("pixels", "avatar"),
            ("drop", dropped.to_str().expect("path")),
        ],
    );
    let samples = r["samples"].as_array().expect("samples");
    assert_eq!(samples[0]["metaVersion"], "1");
    check_avatar_bones("the mannequin (VRM 1.0)", &mannequin, samples);
    // The skinned mesh is on screen: the avatar's pixels fill a good part of the
    // box its bones span (a stick figure would fill a few per cent).
    let pixels = r["pixels"]["pixels"].as_u64().expect("pixels");
    let box_pixels = r["pixels"]["boxPixels"].as_u64().expect("box");
    println!(
        "the mannequin covers {pixels} of the {box_pixels} pixels of its box ({:.0} %); \
         screenshot {}",
        100.0 * pixels as f64 / box_pixels as f64,
        artifacts().join("avatar.png").display()
    );
    assert!(pixels * 10 > box_pixels, "{}", r["pixels"]);
    // A .vrm dropped on the view replaces the avatar, in the page only.
    let dropped_samples = r["dropped"]["samples"].as_array().expect("samples");
    assert_eq!(dropped_samples[0]["metaVersion"], "0");
    check_avatar_bones("dropped VRM 0.x", &dropped, dropped_samples);
}

#[test]
fn the_viewer_draws_a_replay_on_configured_vrm_1_and_vrm_0_avatars_as_the_bridge_poses_them() {
    let Some(assets) = assets_dir() else { return };
    let Some(t) = setup() else { return };
    for (file, version, what) in [
        ("Example.vrm", "1", "configured VRM 1.0"),
        ("basic_armature_vrm0.vrm", "0", "configured VRM 0.x"),
    ] {
        let avatar = assets.join("vrm").join(file);
        let r = avatar_run(&t, Some(&avatar), file, &[]);
        let samples = r["samples"].as_array().expect("samples");
        assert_eq!(samples[0]["metaVersion"], version, "{file}");
        check_avatar_bones(what, &avatar, samples);
    }
}

/// What three-vrm-animation, under node, gives for every humanoid rotation track
/// of `take` at each of `times` (`tests/interop/dump_vrma.mjs --at`): bone →
/// `[x, y, z, w]` per time.
fn node_rotations(take: &Path, times: &str) -> Value {
    let interop = node::install("tests/interop")
        .unwrap_or_else(|e| panic!("the interop tests' packages: {e}"));
    let out = Command::new(node::NODE)
        .arg(interop.join("dump_vrma.mjs"))
        .args(["--at", times])
        .arg(take)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "dump_vrma.mjs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump: Value = serde_json::from_slice(&out.stdout).expect("dump_vrma.mjs's JSON");
    dump["files"][0]["samples"]["rotation"].clone()
}

#[test]
fn a_take_played_in_the_viewer_turns_the_avatar_as_three_vrm_animation_does_in_node() {
    let Some(t) = setup() else { return };
    let (web, dir, port) = (t.web.as_path(), t.dir.path(), t.port);
    let take = dir.join("recordings/walk-and-wave.vrma");
    std::fs::create_dir_all(dir.join("recordings")).expect("recordings folder");
    std::fs::copy(repo().join("recordings/walk-and-wave.vrma"), &take).expect("copy the take");
    let duration = vrma::load(&take, None)
        .expect("the take reads")
        .frame_times()
        .last()
        .copied()
        .expect("frames");
    // Times on the scrub bar's millisecond steps, spread over the take.
    let times: Vec<f64> = [0.0, 0.13, 0.37, 0.5, 0.71, 0.96]
        .iter()
        .map(|f| (f * f64::from(duration) * 1000.0).round() / 1000.0)
        .collect();
    let times_arg = times
        .iter()
        .map(f64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let bridge = Bridge::start(dir, &web_config(port), &["--quiet"]);
    let r = drive(
        web,
        "playback.mjs",
        &format!("http://127.0.0.1:{port}/"),
        &[("take", "walk-and-wave.vrma"), ("times", &times_arg)],
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    let [t0, t1] = [0, 1].map(|i| r["playing"][i].as_f64().expect("time"));
    assert!(t1 > t0, "playing, the take's time went from {t0} to {t1}");
    assert_eq!(r["paused"][0], r["paused"][1], "paused, the time moved");
    assert_eq!(r["pauseButton"], "Play");
    let node = node_rotations(&take, &times_arg);
    let mut worst = (0.0f64, String::new());
    let mut compared = 0;
    for (i, sample) in r["samples"].as_array().expect("samples").iter().enumerate() {
        let at = sample["time"].as_f64().expect("time");
        assert!(
            (at - times[i]).abs() < 1e-9,
            "scrubbed to {at}, not {}",
            times[i]
        );
        // A VRM 0.x avatar takes the clip turned half a turn (x and z negated).
        let flip = if sample["metaVersion"] == "0" {
            -1.0
        } else {
            1.0
        };
        for (bone, page) in sample["rotations"].as_object().expect("rotations") {
            let Some(values) = node[bone].as_array() else {
                continue;
            };
            let q = |v: &[Value]| {
                let c = |k: usize| v[k].as_f64().expect("a number");
                DQuat::from_xyzw(c(0), c(1), c(2), c(3)).normalize()
            };
            let page = q(page.as_array().expect("a quaternion"));
            let theirs = q(&values[4 * i..4 * i + 4]);
            let theirs = DQuat::from_xyzw(flip * theirs.x, theirs.y, flip * theirs.z, theirs.w);
            // The angle of the turn between them (atan2: exact near zero, where
            // acos of a dot product is not).
            let d = theirs.inverse() * page;
            let angle = 2.0 * d.xyz().length().atan2(d.w.abs()).to_degrees();
            compared += 1;
            if angle > worst.0 {
                worst = (angle, format!("{bone} at {at} s"));
            }
        }
    }
    println!(
        "walk-and-wave.vrma played in the page: {compared} bone rotations at {} times, at \
         most {:.6}° from three-vrm-animation under node ({})",
        times.len(),
        worst.0,
        worst.1
    );
    assert!(
        compared >= 15 * times.len(),
        "only {compared} rotations compared"
    );
    assert!(worst.0 <= 0.01, "{:.6}° at {}", worst.0, worst.1);
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_viewer_draws_a_replay_on_a_configured_glb_humanoid_made_a_vrm_by_the_bridge() {
    let Some(assets) = assets_dir() else { return };
    let Some(t) = setup() else { return };
    let file = "CesiumMan.glb";
    let avatar = assets.join("gltf").join(file);
    if !avatar.exists() {
        eprintln!("skipping: no {}", avatar.display());
        return;
    }
    // What the bridge serves: the same conversion, written where Model can load it.
    let rig = load_rig(&avatar, &LoadOptions::default()).expect("loads");
    let mapped = map_rig(file, &rig, None).expect("a humanoid");
    let bytes = std::fs::read(&avatar).expect("read");
    let vrm = mocap_bridge::formats::gltf::as_vrm::to_vrm(&bytes, &avatar, &mapped, rig.units)
        .expect("converts")
        .expect("not a VRM");
    let converted = t.dir.path().join("converted.vrm");
    std::fs::write(&converted, vrm).expect("write");
    // The page names the avatar's file and loads it as a VRM 1.0, or times out.
    let r = avatar_run(&t, Some(&avatar), file, &[]);
    let samples = r["samples"].as_array().expect("samples");
    assert_eq!(samples[0]["metaVersion"], "1");
    check_avatar_bones("a glTF humanoid made VRM 1.0", &converted, samples);
}

// --- the viewer's panel, links and layout -------------------------------------

/// The sample take replayed in a loop, as the first performer.
fn replay_args(sample: &Path) -> Vec<&str> {
    vec![
        "--replay",
        sample.to_str().expect("path"),
        "--loop",
        "--quiet",
    ]
}

#[test]
fn a_performer_that_goes_leaves_the_viewer_and_comes_back_with_it() {
    let Some(t) = setup() else { return };
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let mut config = web_config(t.port);
    config["pipeline"] = json!({ "performerTimeoutS": 1.0 });
    let bridge = Bridge::start(t.dir.path(), &config, &replay_args(&sample));
    let r = drive(
        &t.web,
        "gone.mjs",
        &format!("http://127.0.0.1:{}/", t.port),
        &[("performer", "walk-and-wave"), ("ghost", "ghost")],
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    assert_eq!(r["before"]["ghost"], true, "{}", r["before"]);
    let gone = &r["gone"];
    assert_eq!(gone["ghostRow"], "performer gone", "{gone}");
    assert_eq!(
        gone["ghost"], false,
        "drawn while its row says gone: {gone}"
    );
    assert_eq!(
        gone["ghostAvatarVisible"], false,
        "its avatar shows: {gone}"
    );
    assert_eq!(gone["live"], true, "the live performer left too: {gone}");
    assert_eq!(
        r["recordNote"], "record ghost: ghost: not here; records from its next frame",
        "{r}"
    );
    let back = &r["back"];
    assert_eq!(back["ghost"], true, "{back}");
    assert_eq!(back["ghostAvatarVisible"], true, "{back}");
    let (code, lines, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    // Its take started with the first frame it sent on its return.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("wrote ") && l.ends_with("(ghost)")),
        "{lines:?}"
    );
}

/// Waits until a script running in `script` writes `path`: `false` when the
/// script ends first, or after two minutes.
fn script_asks(path: &Path, script: &std::thread::JoinHandle<Value>) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !path.exists() {
        if script.is_finished() || std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    true
}

/// The result of a script running in `script`, its failure raised here.
fn script_result(script: std::thread::JoinHandle<Value>) -> Value {
    script
        .join()
        .unwrap_or_else(|failure| std::panic::resume_unwind(failure))
}

#[test]
fn while_the_bridge_is_down_the_viewer_says_its_rows_are_not_live_and_clears_that_after() {
    let Some(t) = setup() else { return };
    let dir = t.dir.path();
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let config = web_config(t.port);
    let bridge = Bridge::start(dir, &config, &replay_args(&sample));
    let (web, url) = (t.web.clone(), format!("http://127.0.0.1:{}/", t.port));
    let dir_arg = dir.to_str().expect("path").to_owned();
    let script = std::thread::spawn(move || {
        drive(
            &web,
            "reconnect.mjs",
            &url,
            &[("performer", "walk-and-wave"), ("dir", &dir_arg)],
        )
    });
    if !script_asks(&dir.join("stop"), &script) {
        script_result(script);
        panic!("reconnect.mjs never asked to stop the bridge");
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    if !script_asks(&dir.join("start"), &script) {
        script_result(script);
        panic!("reconnect.mjs never asked to start the bridge again");
    }
    let bridge = Bridge::start(dir, &config, &replay_args(&sample));
    let r = script_result(script);
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    let rate = |facts: &Value| {
        let facts = facts.as_str().expect("facts");
        facts
            .split(" · ")
            .any(|part| part.ends_with(" Hz") && part != "0 Hz")
    };
    assert!(rate(&r["before"]["facts"]), "{}", r["before"]);
    let down = &r["down"];
    assert_eq!(down["row"], "performer offline", "{down}");
    let facts = down["facts"].as_str().expect("facts");
    assert!(
        facts.starts_with("not live: no connection to the bridge")
            && !facts.contains(" Hz")
            && !facts.contains("latency"),
        "{facts}"
    );
    let back = &r["back"];
    assert_eq!(back["row"], "performer", "{back}");
    assert!(rate(&back["facts"]), "{back}");
    assert_eq!(back["note"], "", "an error of the outage stayed: {back}");
    assert_eq!(back["noteIsError"], false, "{back}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_rows_dropped_vrm_stays_over_one_dropped_on_the_view_and_bad_files_are_said_in_words() {
    let Some(t) = setup() else { return };
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let mut args = replay_args(&sample);
    args.extend(["--replay", sample.to_str().expect("path")]);
    let bridge = Bridge::start(t.dir.path(), &web_config(t.port), &args);
    let r = drive(
        &t.web,
        "drops.mjs",
        &format!("http://127.0.0.1:{}/", t.port),
        &[("one", "walk-and-wave"), ("two", "walk-and-wave-2")],
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    // The guide's order: a row's .vrm, then the view's, then the configured one.
    let drawn = json!({ "walk-and-wave": "row.vrm", "walk-and-wave-2": "view.vrm" });
    for (key, value) in drawn.as_object().expect("object") {
        assert_eq!(&r["afterDrops"][key], value, "{}", r["afterDrops"]);
        assert_eq!(&r["afterBad"][key], value, "a bad file changed an avatar");
    }
    for (file, starts) in [
        ("noise.vrm", "noise.vrm: not a glTF/VRM file"),
        ("notes.txt", "notes.txt: not a glTF/VRM file"),
        ("cut.vrm", "cut.vrm: the file is cut short ("),
        (
            "missing-node.vrm",
            "missing-node.vrm: not a usable VRM (its humanoid's hips is node 9999",
        ),
    ] {
        let note = &r["notes"][file];
        let text = note["text"].as_str().expect("a note");
        assert!(text.starts_with(starts), "{file}: {text:?}");
        assert_eq!(note["error"], true, "{file}: {note}");
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_pages_opened_with_a_token_link_to_each_other_with_it() {
    let Some(t) = setup() else { return };
    let mut config = web_config(t.port);
    config["websocket"]["token"] = json!("s3cret");
    let bridge = Bridge::start(t.dir.path(), &config, &["--quiet"]);
    let base = format!("http://127.0.0.1:{}", t.port);
    let r = drive(&t.web, "links.mjs", &format!("{base}/?token=s3cret"), &[]);
    assert_eq!(r["errors"], json!([]), "the pages logged errors");
    assert_eq!(r["viewer"]["connection"], "connected", "{r}");
    assert_eq!(r["viewer"]["performers"], "none yet");
    assert_eq!(r["viewer"]["link"], "/xr?token=s3cret");
    assert_eq!(r["xr"]["url"], format!("{base}/xr?token=s3cret"));
    assert_eq!(r["xr"]["connection"], "connected", "{r}");
    assert_eq!(r["xr"]["link"], "/?token=s3cret");
    assert_eq!(r["back"]["url"], format!("{base}/?token=s3cret"));
    assert_eq!(r["back"]["connection"], "connected", "{r}");
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_viewer_fits_narrow_windows_with_every_control_reachable() {
    let Some(t) = setup() else { return };
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let bridge = Bridge::start(t.dir.path(), &web_config(t.port), &replay_args(&sample));
    let r = drive(
        &t.web,
        "narrow.mjs",
        &format!("http://127.0.0.1:{}/", t.port),
        &[("performer", "walk-and-wave")],
    );
    assert_eq!(r["errors"], json!([]), "the page logged errors");
    for (size, width) in [("600x800", 600.0), ("375x667", 375.0)] {
        let s = &r["sizes"][size];
        assert_eq!(
            s["overflow"], 0,
            "{size}: the page is wider than the window"
        );
        let controls = s["controls"].as_array().expect("controls");
        assert!(controls.len() >= 9, "{size}: {controls:?}");
        for c in controls {
            assert!(
                c["inside"] == true && c["reached"] == true,
                "{size}: {c} cannot be reached"
            );
        }
        let stage = &s["stage"];
        let (w, h) = (
            stage["width"].as_f64().expect("width"),
            stage["height"].as_f64().expect("height"),
        );
        assert!(
            w >= 0.9 * width && h >= 240.0,
            "{size}: the view is {w}x{h}"
        );
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
}
