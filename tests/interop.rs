//! Checks .vrma files against implementations nobody on this project wrote:
//! @pixiv/three-vrm-animation (loads a .vrma into three-vrm's normalized humanoid
//! tracks) and the Khronos glTF validator, both run under Node.js by the scripts in
//! `tests/interop/` (pinned in its package.json / package-lock.json).
//!
//! Node.js (>= 18) and npm are required: when `tests/interop/node_modules` is missing
//! or holds other versions than the pins, the first test to need it runs `npm ci`
//! there. Missing node/npm or a failed install fails the tests; nothing is skipped
//! for that. Tests on the real files of `../shared/assets` skip when it is absent.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use common::node::NODE;

/// `tests/interop` with its node dependencies installed.
fn node_ready() -> PathBuf {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match READY.get_or_init(|| common::node::install("tests/interop")) {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("interop harness not ready: {e}"),
    }
}

/// Runs `node tests/interop/<script> args...`; returns its exit status, its stdout
/// parsed as JSON (`Value::Null` when it is not JSON) and its stderr.
fn run_script(script: &str, args: &[OsString]) -> (Output, Value) {
    let dir = node_ready();
    let out = Command::new(NODE)
        .arg(dir.join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{NODE}`: {e}"));
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, json)
}

/// Runs a script that must succeed and print JSON; panics with its output otherwise.
fn run_script_ok(script: &str, args: &[OsString]) -> Value {
    let (out, json) = run_script(script, args);
    if !out.status.success() || json.is_null() {
        panic!(
            "`node {script}` failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    json
}

fn os_args(paths: &[&Path]) -> Vec<OsString> {
    paths.iter().map(|p| p.as_os_str().to_owned()).collect()
}

/// What three-vrm-animation reads from each file (see `tests/interop/dump_vrma.mjs`):
/// `{"files": [{"path", "animationCount", "duration", "restHipsPosition": [x, y, z],
/// "rotation": {bone: {"times", "values"}}, "translation": {"hips": ...},
/// "preset": {name: ...}, "custom": {name: ...}, "lookAt": {...} | null,
/// "warnings": [..]}]}`, tracks in three-vrm's normalized humanoid space. Panics
/// when any file fails to load.
fn dump_vrma(paths: &[&Path]) -> Value {
    run_script_ok("dump_vrma.mjs", &os_args(paths))
}

/// `dump_vrma` of one file: its entry of `files`.
fn dump_one(path: &Path) -> Value {
    dump_vrma(&[path])["files"][0].clone()
}

/// What the Khronos glTF validator says about each file (see
/// `tests/interop/validate.mjs`): `{"files": [{"path", "validatorVersion",
/// "numErrors", "numWarnings", "numInfos", "numHints", "truncated", "messages":
/// [{"code", "message", "severity" (0 error .. 3 hint), "pointer"}]}]}`. Panics when
/// a file cannot be read or the validator throws; findings are for the caller.
fn validate(paths: &[&Path]) -> Value {
    run_script_ok("validate.mjs", &os_args(paths))
}

/// three-vrm-animation's load time of `path`, `repeat` loads in one node process:
/// `{"path", "bytes", "ms": [..], "best_ms"}`.
fn time_load(path: &Path, repeat: u32) -> Value {
    let mut args = os_args(&[path]);
    args.extend(["--repeat".into(), repeat.to_string().into()]);
    run_script_ok("time_load.mjs", &args)
}

/// A JSON array of numbers as `f64`s.
fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}")))
        .collect()
}

/// The keys of a JSON object, in order.
fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// The quaternions (x, y, z, w) of a dumped rotation track.
fn quats(track: &Value) -> Vec<[f64; 4]> {
    floats(&track["values"])
        .chunks_exact(4)
        .map(|q| [q[0], q[1], q[2], q[3]])
        .collect()
}

/// Whether two quaternions are the same rotation within `tol` per component.
fn same_rotation(a: [f64; 4], b: [f64; 4], tol: f64) -> bool {
    let diff = |s: f64| (0..4).map(|i| (a[i] - s * b[i]).abs()).fold(0.0, f64::max);
    diff(1.0).min(diff(-1.0)) <= tol
}

const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];
const HALF: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Checks that hold for any well-formed track of `file`: as many values as times
/// times `width`, times non-decreasing within [0, duration], unit quaternions.
fn check_track(file: &Value, what: &str, track: &Value, width: usize) {
    let path = &file["path"];
    let duration = file["duration"].as_f64().unwrap();
    let times = floats(&track["times"]);
    let values = floats(&track["values"]);
    assert!(!times.is_empty(), "{path} {what}: no keys");
    assert_eq!(
        values.len(),
        times.len() * width,
        "{path} {what}: values per key"
    );
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "{path} {what}: times decrease"
    );
    assert!(
        times.iter().all(|&t| (0.0..=duration + 1e-6).contains(&t)),
        "{path} {what}: a time outside [0, {duration}]"
    );
    assert!(
        values.iter().all(|v| v.is_finite()),
        "{path} {what}: not finite"
    );
    if width == 4 {
        for q in values.chunks_exact(4) {
            let norm = q.iter().map(|c| c * c).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-3, "{path} {what}: |q| = {norm}");
        }
    }
}

fn check_all_tracks(file: &Value) {
    assert!(file.get("error").is_none(), "{file}");
    for (bone, track) in file["rotation"].as_object().unwrap() {
        check_track(file, &format!("rotation {bone}"), track, 4);
    }
    for (bone, track) in file["translation"].as_object().unwrap() {
        check_track(file, &format!("translation {bone}"), track, 3);
    }
    for kind in ["preset", "custom"] {
        for (name, track) in file[kind].as_object().unwrap() {
            check_track(file, &format!("{kind} expression {name}"), track, 1);
        }
    }
    if !file["lookAt"].is_null() {
        check_track(file, "lookAt", &file["lookAt"], 4);
    }
}

/// The corpus's `vrma/NAME`, or `None` (after saying so) when the assets are absent.
fn real_vrma(name: &str) -> Option<PathBuf> {
    common::assets().map(|dir| dir.join("vrma").join(name))
}

const REAL_VRMA: [&str; 3] = ["test.vrma", "idle_loop.vrma", "nop.vrma"];

#[test]
fn real_vrma_files_load_in_three_vrm_animation() {
    let Some(assets) = common::assets() else {
        return;
    };
    let paths: Vec<PathBuf> = REAL_VRMA
        .iter()
        .map(|n| assets.join("vrma").join(n))
        .collect();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let dump = dump_vrma(&refs);
    let files = dump["files"].as_array().unwrap();
    assert_eq!(files.len(), REAL_VRMA.len());
    for file in files {
        check_all_tracks(file);
        assert_eq!(file["animationCount"], 1, "{}", file["path"]);
        assert_eq!(file["warnings"], serde_json::json!([]), "{}", file["path"]);
        eprintln!(
            "{}: duration {}, rest hips {}, rotation {:?}, translation {:?}, preset {:?}, custom {:?}, lookAt {}",
            file["path"],
            file["duration"],
            file["restHipsPosition"],
            keys(&file["rotation"]),
            keys(&file["translation"]),
            keys(&file["preset"]),
            keys(&file["custom"]),
            if file["lookAt"].is_null() {
                "none"
            } else {
                "yes"
            },
        );
    }
}

/// test.vrma (three-vrm's own example): 3 s, 7 keys every 0.5 s on three channels
/// only: rightUpperArm, the `happy` expression and lookAt, each off its rest at one key.
#[test]
fn test_vrma_as_three_vrm_animation_reads_it() {
    let Some(path) = real_vrma("test.vrma") else {
        return;
    };
    let file = dump_one(&path);
    check_all_tracks(&file);
    assert_eq!(file["duration"], 3.0);
    let rest = floats(&file["restHipsPosition"]);
    assert!(
        (rest[1] - 0.85).abs() < 1e-6 && rest[0] == 0.0 && rest[2] == 0.0,
        "{rest:?}"
    );
    let times = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0];

    // Only the right upper arm moves: +90 degrees about +Z (normalized space) at 0.5 s.
    assert_eq!(keys(&file["rotation"]), ["rightUpperArm"]);
    assert_eq!(keys(&file["translation"]), Vec::<&str>::new());
    let arm = &file["rotation"]["rightUpperArm"];
    assert_eq!(floats(&arm["times"]), times);
    for (i, q) in quats(arm).into_iter().enumerate() {
        let want = if i == 1 {
            [0.0, 0.0, HALF, HALF]
        } else {
            IDENTITY
        };
        assert!(same_rotation(q, want, 1e-4), "rightUpperArm key {i}: {q:?}");
    }

    // `happy` at full weight at 1.5 s.
    assert_eq!(keys(&file["preset"]), ["happy"]);
    assert_eq!(keys(&file["custom"]), Vec::<&str>::new());
    let happy = &file["preset"]["happy"];
    assert_eq!(floats(&happy["times"]), times);
    assert_eq!(
        floats(&happy["values"]),
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    );

    // lookAt turned 90 degrees about +Y at 2.5 s.
    let look = &file["lookAt"];
    assert_eq!(floats(&look["times"]), times);
    for (i, q) in quats(look).into_iter().enumerate() {
        let want = if i == 5 {
            [0.0, HALF, 0.0, HALF]
        } else {
            IDENTITY
        };
        assert!(same_rotation(q, want, 1e-4), "lookAt key {i}: {q:?}");
    }
}

/// idle_loop.vrma (THREE.GLTFExporter): 250 keys over 10.375 s on 21 of its 22
/// humanoid bones plus hips translation. `head` maps to node 0, which no channel
/// animates (the "head" channel is on node 1, not a humanoid node), so
/// three-vrm-animation has no head track; channels on the other non-humanoid
/// nodes (torso_1, neck_2, ...) are dropped too.
#[test]
fn idle_loop_vrma_as_three_vrm_animation_reads_it() {
    let Some(path) = real_vrma("idle_loop.vrma") else {
        return;
    };
    let file = dump_one(&path);
    check_all_tracks(&file);
    let duration = file["duration"].as_f64().unwrap();
    assert!((duration - 10.375083).abs() < 1e-5, "{duration}");
    let mut bones = keys(&file["rotation"]);
    bones.sort_unstable();
    let mut want = [
        "hips",
        "spine",
        "chest",
        "upperChest",
        "neck",
        "leftShoulder",
        "leftUpperArm",
        "leftLowerArm",
        "leftHand",
        "rightShoulder",
        "rightUpperArm",
        "rightLowerArm",
        "rightHand",
        "leftUpperLeg",
        "leftLowerLeg",
        "leftFoot",
        "leftToes",
        "rightUpperLeg",
        "rightLowerLeg",
        "rightFoot",
        "rightToes",
    ];
    want.sort_unstable();
    assert_eq!(bones, want);
    for track in file["rotation"].as_object().unwrap().values() {
        assert_eq!(track["times"].as_array().unwrap().len(), 250);
    }
    assert_eq!(keys(&file["translation"]), ["hips"]);
    let hips = floats(&file["translation"]["hips"]["values"]);
    assert_eq!(hips.len(), 250 * 3);
    // The hips stay near their rest height.
    let rest_y = floats(&file["restHipsPosition"])[1];
    assert!((rest_y - 0.9057).abs() < 1e-3, "{rest_y}");
    assert!(hips.chunks_exact(3).all(|p| (p[1] - rest_y).abs() < 0.1));
    assert!(file["preset"].as_object().unwrap().is_empty());
    assert!(file["custom"].as_object().unwrap().is_empty());
    assert!(file["lookAt"].is_null());
}

/// nop.vrma (VRM Add-on for Blender): a zero-length clip. three-vrm-animation gives
/// duration 0 and one key at t = 0 on 11 bones plus hips translation, all at rest
/// (identity, up to the quaternion's sign; hips translation = rest hips position).
#[test]
fn nop_vrma_as_three_vrm_animation_reads_it() {
    let Some(path) = real_vrma("nop.vrma") else {
        return;
    };
    let file = dump_one(&path);
    check_all_tracks(&file);
    assert_eq!(file["duration"], 0.0);
    let bones = keys(&file["rotation"]);
    assert_eq!(bones.len(), 11, "{bones:?}");
    for bone in ["hips", "leftShoulder", "rightUpperLeg", "rightToes"] {
        assert!(bones.contains(&bone), "{bone} missing: {bones:?}");
    }
    for (bone, track) in file["rotation"].as_object().unwrap() {
        assert_eq!(floats(&track["times"]), [0.0], "{bone}");
        let q = quats(track)[0];
        assert!(same_rotation(q, IDENTITY, 1e-6), "{bone}: {q:?}");
    }
    assert_eq!(keys(&file["translation"]), ["hips"]);
    let hips = &file["translation"]["hips"];
    assert_eq!(floats(&hips["times"]), [0.0]);
    let rest = floats(&file["restHipsPosition"]);
    assert!((rest[1] - 0.75).abs() < 1e-5, "{rest:?}");
    let at = floats(&hips["values"]);
    assert!(
        (0..3).all(|i| (at[i] - rest[i]).abs() < 1e-6),
        "{at:?} vs {rest:?}"
    );
    assert!(file["preset"].as_object().unwrap().is_empty());
    assert!(file["custom"].as_object().unwrap().is_empty());
    assert!(file["lookAt"].is_null());
}

/// The glTF validator finds no errors and no warnings in the real files; its infos
/// are that it cannot check VRMC_vrm_animation and (for the humanoid nodes nothing
/// animates, or leaf nodes) "empty node".
#[test]
fn real_vrma_files_validate() {
    let Some(assets) = common::assets() else {
        return;
    };
    let paths: Vec<PathBuf> = REAL_VRMA
        .iter()
        .map(|n| assets.join("vrma").join(n))
        .collect();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let report = validate(&refs);
    assert_validates_clean(&report, "VRMC_vrm_animation");
}

/// Prints the validator's report and asserts no errors, no warnings, nothing
/// truncated, and that it saw `extension` (it cannot check it: an info).
fn assert_validates_clean(report: &Value, extension: &str) {
    for file in report["files"].as_array().unwrap() {
        let path = &file["path"];
        eprintln!(
            "{path}: {} errors, {} warnings, {} infos, {} hints",
            file["numErrors"], file["numWarnings"], file["numInfos"], file["numHints"]
        );
        let messages = file["messages"].as_array().unwrap();
        for m in messages {
            eprintln!(
                "  [{}] {} {}: {}",
                m["severity"], m["code"], m["pointer"], m["message"]
            );
        }
        assert_eq!(file["numErrors"], 0, "{path}");
        assert_eq!(file["numWarnings"], 0, "{path}");
        assert_eq!(file["truncated"], false, "{path}");
        let saw = messages.iter().any(|m| {
            m["code"] == "UNSUPPORTED_EXTENSION"
                && m["message"].as_str().is_some_and(|t| t.contains(extension))
        });
        assert!(saw, "{path}: the validator did not see {extension}");
    }
}

/// The harness does report failures: a truncated .vrma gives validator errors and
/// a failed load, not an empty success.
#[test]
fn harness_reports_broken_files() {
    let Some(path) = real_vrma("test.vrma") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("truncated.vrma");
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();

    let report = validate(&[&broken]);
    let file = &report["files"][0];
    assert!(file["numErrors"].as_u64().unwrap() > 0, "{file}");

    let (out, json) = run_script("dump_vrma.mjs", &os_args(&[&broken]));
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert!(json["files"][0]["error"].is_string(), "{json}");
}

#[test]
fn three_vrm_animation_load_time_is_measured() {
    let Some(path) = real_vrma("idle_loop.vrma") else {
        return;
    };
    let timing = time_load(&path, 2);
    eprintln!("three-vrm-animation loads {}: {timing}", path.display());
    assert_eq!(timing["bytes"], std::fs::metadata(&path).unwrap().len());
    assert_eq!(timing["ms"].as_array().unwrap().len(), 2);
    assert!(timing["best_ms"].as_f64().unwrap() > 0.0);
}

// --- our writer's files ---

use glam::Quat;
use mocap_bridge::formats::vrma::{self, VrmaRest, VrmaWriter};
use mocap_bridge::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt, Preset};

/// Angle between two rotations, degrees. Both are normalized first (files may hold
/// slightly non-unit quaternions, which three-vrm-animation passes on as they are),
/// and the angle comes from the relative rotation's vector part, which keeps its
/// precision for tiny angles where `acos(dot)` does not.
fn angle_deg(a: [f64; 4], b: Quat) -> f64 {
    let norm = |q: [f64; 4]| {
        let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        q.map(|c| c / n)
    };
    let [ax, ay, az, aw] = norm(a);
    let [bx, by, bz, bw] = norm([b.x as f64, b.y as f64, b.z as f64, b.w as f64]);
    // r = conj(a) · b
    let rw = aw * bw + ax * bx + ay * by + az * bz;
    let rx = aw * bx - ax * bw - ay * bz + az * by;
    let ry = aw * by + ax * bz - ay * bw - az * bx;
    let rz = aw * bz - ax * by + ay * bx - az * bw;
    2.0 * (rx * rx + ry * ry + rz * rz)
        .sqrt()
        .atan2(rw.abs())
        .to_degrees()
}

/// Frames written to a file: time and the pose pushed.
type Take = Vec<(f32, HumanoidPose)>;

/// The built-in performance with every kind of track: bones, hips, preset and
/// custom expressions, lookAt.
fn performance_take(dir: &Path) -> (PathBuf, Take, CustomNames) {
    let mut names = CustomNames::default();
    let wink = names.slot_or_insert("wink_custom").unwrap();
    let mut writer = VrmaWriter::new(VrmaRest::standard(0.9), "performance");
    let mut take = Vec::new();
    for i in 0..120 {
        let t = i as f32 / 60.0;
        let mut pose = mocap_bridge::takes::demo::pose_at(t, 0.9);
        pose.expressions
            .set_preset(Preset::Aa, (t * 3.0).sin().abs());
        pose.expressions
            .set_preset(Preset::BlinkLeft, if i % 30 < 4 { 1.0 } else { 0.0 });
        pose.expressions.set_custom(wink, (t * 0.7).min(1.0));
        pose.look_at = Some(LookAt {
            yaw: 0.5 * (t * 2.0).sin(),
            pitch: 0.2 * (t * 3.0).cos(),
        });
        writer.push(t, &pose, &names).unwrap();
        take.push((t, pose));
    }
    let path = dir.join("performance.vrma");
    writer.save(&path).unwrap();
    (path, take, names)
}

/// Compares three-vrm-animation's reading of `file` with the frames written.
fn assert_three_vrm_reads(file: &Value, take: &Take, names: &CustomNames) {
    assert!(file.get("error").is_none(), "{file}");
    assert!(
        file["warnings"].as_array().is_none_or(|w| w.is_empty()),
        "{}",
        file["warnings"]
    );
    let path = file["path"].as_str().unwrap_or_default();
    let mut worst_deg = 0.0f64;
    for (bone, _) in take[0].1.bones() {
        if matches!(bone, HumanBone::LeftEye | HumanBone::RightEye) {
            continue;
        }
        let track = &file["rotation"][bone.name()];
        let times = floats(&track["times"]);
        let values = quats(track);
        assert_eq!(times.len(), take.len(), "{path}: {bone}");
        for (i, (t, pose)) in take.iter().enumerate() {
            assert!(
                (times[i] - *t as f64).abs() < 1e-6,
                "{path}: {bone} key {i}"
            );
            worst_deg = worst_deg.max(angle_deg(values[i], pose.rotation(bone).unwrap()));
        }
    }
    assert!(
        worst_deg <= 0.01,
        "{path}: rotations differ by {worst_deg}°"
    );
    let hips = floats(&file["translation"]["hips"]["values"]);
    for (i, (_, pose)) in take.iter().enumerate() {
        let p = pose.hips_position;
        let d = ((hips[3 * i] - p.x as f64).powi(2)
            + (hips[3 * i + 1] - p.y as f64).powi(2)
            + (hips[3 * i + 2] - p.z as f64).powi(2))
        .sqrt();
        assert!(d <= 1e-4, "{path}: hips frame {i} off by {d} m");
    }
    for preset in Preset::all().filter(|p| !p.is_look_at()) {
        let Some(_) = take[0].1.expressions.preset(preset) else {
            continue;
        };
        let values = floats(&file["preset"][preset.name()]["values"]);
        for (i, (_, pose)) in take.iter().enumerate() {
            let want = pose.expressions.preset(preset).unwrap() as f64;
            assert!(
                (values[i] - want).abs() < 1e-7,
                "{path}: {preset} frame {i}"
            );
        }
    }
    for slot in 0..16 {
        let (Some(name), Some(_)) = (names.name(slot), take[0].1.expressions.custom(slot)) else {
            continue;
        };
        let values = floats(&file["custom"][name]["values"]);
        for (i, (_, pose)) in take.iter().enumerate() {
            let want = pose.expressions.custom(slot).unwrap() as f64;
            assert!(
                (values[i] - want).abs() < 1e-7,
                "{path}: custom {name} frame {i}"
            );
        }
    }
    if take[0].1.look_at.is_some() {
        let values = quats(&file["lookAt"]);
        for (i, (_, pose)) in take.iter().enumerate() {
            let want = pose.look_at.unwrap().to_rotation();
            assert!(
                angle_deg(values[i], want) < 1e-4,
                "{path}: lookAt frame {i}"
            );
        }
    }
    println!(
        "{path}: {} frames, worst bone {worst_deg:.6}° against three-vrm-animation",
        take.len()
    );
}

/// Writes `replay`'s frames as a .vrma, keeping what was pushed.
fn write_replay(
    path: &Path,
    mut replay: mocap_bridge::takes::replay::Replay,
    rest: VrmaRest,
    names: &CustomNames,
) -> Take {
    let mut writer = VrmaWriter::new(rest, "take");
    let mut take = Vec::new();
    let mut pose = HumanoidPose::default();
    while let Some(t) = replay.next_frame(&mut pose) {
        writer.push(t, &pose, names).unwrap();
        take.push((t, pose));
    }
    writer.save(path).unwrap();
    take
}

#[test]
fn our_files_load_in_three_vrm_animation_as_written_and_validate_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (performance, take, names) = performance_take(dir.path());
    let mut files = vec![(performance, take, names)];
    if let Some(assets) = common::assets() {
        // A real capture through its bone map.
        let rig = mocap_bridge::formats::load_rig(
            &assets.join("bvh/cmu_12_01_walk.bvh"),
            &Default::default(),
        )
        .unwrap();
        let map = mocap_bridge::formats::inspect::choose_map(&rig, None).unwrap();
        let mapped =
            mocap_bridge::retarget::MappedSkeleton::new(rig.skeleton.clone(), &map.map).unwrap();
        let replay = mocap_bridge::takes::replay::Replay::from_rig(
            &mapped,
            rig.clips[0].motion.clone(),
            None,
        );
        let path = dir.path().join("walk.vrma");
        let take = write_replay(
            &path,
            replay,
            VrmaRest::from_mapped(&mapped),
            &CustomNames::default(),
        );
        files.push((path, take, CustomNames::default()));
        // Other people's files, read and written again.
        for name in ["test.vrma", "idle_loop.vrma", "nop.vrma"] {
            let animation = vrma::load(&assets.join("vrma").join(name), None).unwrap();
            let rest = animation.rest().clone();
            let names = animation.custom_names().clone();
            let path = dir.path().join(format!("rewritten_{name}"));
            let take = write_replay(
                &path,
                mocap_bridge::takes::replay::Replay::from_vrma(animation, None),
                rest,
                &names,
            );
            files.push((path, take, names));
        }
    }
    let paths: Vec<&Path> = files.iter().map(|(p, _, _)| p.as_path()).collect();
    let report = validate(&paths);
    assert_validates_clean(&report, "VRMC_vrm_animation");
    let dumped = dump_vrma(&paths);
    for (file, (_, take, names)) in dumped["files"].as_array().unwrap().iter().zip(&files) {
        assert_three_vrm_reads(file, take, names);
    }
}

#[test]
fn our_reader_agrees_with_three_vrm_animation_on_other_peoples_files() {
    let Some(assets) = common::assets() else {
        return;
    };
    for name in ["test.vrma", "idle_loop.vrma", "nop.vrma"] {
        let path = assets.join("vrma").join(name);
        let theirs = dump_one(&path);
        let ours = vrma::load(&path, None).unwrap();
        let mut worst = 0.0f64;
        let mut tracks = 0;
        for (bone_name, track) in theirs["rotation"].as_object().unwrap() {
            let bone: HumanBone = bone_name.parse().unwrap();
            tracks += 1;
            for (t, q) in floats(&track["times"]).iter().zip(quats(track)) {
                let mut pose = HumanoidPose::default();
                ours.sample(*t as f32, &mut pose);
                let got = pose
                    .rotation(bone)
                    .unwrap_or_else(|| panic!("{name}: no {bone}"));
                worst = worst.max(angle_deg(q, got));
            }
        }
        assert_eq!(tracks, ours.bones().count(), "{name}: track count");
        assert!(worst <= 0.01, "{name}: {worst}°");
        if let Some(track) = theirs["translation"].get("hips") {
            let values = floats(&track["values"]);
            for (i, t) in floats(&track["times"]).iter().enumerate() {
                let mut pose = HumanoidPose::default();
                ours.sample(*t as f32, &mut pose);
                let p = pose.hips_position;
                let d = ((values[3 * i] - p.x as f64).powi(2)
                    + (values[3 * i + 1] - p.y as f64).powi(2)
                    + (values[3 * i + 2] - p.z as f64).powi(2))
                .sqrt();
                assert!(d <= 1e-4, "{name}: hips at {t} off by {d} m");
            }
        }
        let rest = floats(&theirs["restHipsPosition"]);
        assert!(
            (rest[1] - ours.rest_hips_position.y as f64).abs() < 1e-5,
            "{name}"
        );
        println!("{name}: {tracks} bone tracks, worst {worst:.6}° against three-vrm-animation");
    }
}

/// The Khronos validator finds no errors and no warnings in our EXT_skeleton_humanoid
/// files (the built-in performance, and the CMU walk when the assets are there): a
/// skin without a mesh, channels without `target.node`. It cannot check the
/// extension itself, and says so.
#[test]
fn our_ext_skeleton_humanoid_files_validate_clean() {
    use mocap_bridge::formats::ext_humanoid::ExtHumanoidWriter;
    let dir = tempfile::tempdir().unwrap();
    let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "performance");
    for i in 0..120 {
        let t = i as f32 / 60.0;
        writer
            .push(t, &mocap_bridge::takes::demo::pose_at(t, 0.9))
            .unwrap();
    }
    let performance = dir.path().join("performance.glb");
    writer.save(&performance).unwrap();
    let empty = dir.path().join("empty.glb");
    ExtHumanoidWriter::new(VrmaRest::standard(0.9), "empty")
        .save(&empty)
        .unwrap();
    let mut paths = vec![performance, empty];
    if let Some(assets) = common::assets() {
        let rig = mocap_bridge::formats::load_rig(
            &assets.join("bvh/cmu_12_01_walk.bvh"),
            &Default::default(),
        )
        .unwrap();
        let map = mocap_bridge::formats::inspect::choose_map(&rig, None).unwrap();
        let mapped =
            mocap_bridge::retarget::MappedSkeleton::new(rig.skeleton.clone(), &map.map).unwrap();
        let mut replay = mocap_bridge::takes::replay::Replay::from_rig(
            &mapped,
            rig.clips[0].motion.clone(),
            None,
        );
        let mut writer = ExtHumanoidWriter::new(VrmaRest::from_mapped(&mapped), "walk");
        let mut pose = HumanoidPose::default();
        while let Some(t) = replay.next_frame(&mut pose) {
            writer.push(t, &pose).unwrap();
        }
        let walk = dir.path().join("walk.glb");
        writer.save(&walk).unwrap();
        paths.push(walk);
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let report = validate(&refs);
    assert_validates_clean(&report, "EXT_skeleton_humanoid");
}

/// Frames a test sender streams at 60 Hz before it signals the receiving process.
#[cfg(unix)]
const SENT_BEFORE_SIGNAL: usize = 90;

/// Streams the built-in performance as VMC to `listen` at 60 Hz, one frame every
/// 1/60 s: `SENT_BEFORE_SIGNAL` frames, then `kill -SIGNAL pid`, then 30 more
/// frames while the receiver stops. With `restart_at`, the sender's clock (its
/// `/VMC/Ext/T`) starts again from 0 at that frame, as a restarted sender's does.
#[cfg(unix)]
fn stream_vmc_then_signal(listen: &str, pid: u32, signal: &str, restart_at: Option<usize>) {
    use mocap_bridge::formats::vrma::VrmaRest;
    use mocap_bridge::humanoid::CustomNames;
    use mocap_bridge::protocol::vmc::{Datagrams, ExpressionNames, VmcEncoder};
    use mocap_bridge::takes::demo;

    let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.95));
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sender.connect(listen).unwrap();
    let mut datagrams = Datagrams::new();
    let mut send_frame = |i: usize| {
        let t = i as f32 / 60.0;
        let clock = match restart_at {
            Some(r) if i >= r => (i - r) as f32 / 60.0,
            _ => t,
        };
        datagrams.clear();
        let pose = demo::pose_at(t, 0.95);
        encoder.encode_into(clock, &pose, &CustomNames::default(), &mut datagrams);
        for d in datagrams.iter() {
            // After the signal the receiver may be gone: nobody listening is fine.
            let _ = sender.send(d);
        }
        std::thread::sleep(std::time::Duration::from_secs_f32(1.0 / 60.0));
    };
    for i in 0..SENT_BEFORE_SIGNAL {
        send_frame(i);
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    for i in SENT_BEFORE_SIGNAL..SENT_BEFORE_SIGNAL + 30 {
        send_frame(i);
    }
}

/// The take at `path`, as three-vrm-animation reads it, holds every frame sent
/// before the signal, at the sender's times, and stands at the sender's hips
/// height (VMC sends none: the first frame's).
#[cfg(unix)]
fn assert_take_holds_what_was_sent(path: &Path, signal: &str) {
    let file = dump_one(path);
    check_all_tracks(&file);
    let rest = floats(&file["restHipsPosition"]);
    let hips = floats(&file["translation"]["hips"]["values"]);
    assert!(
        (rest[1] - hips[1]).abs() < 1e-4,
        "SIG{signal}: rest hips {rest:?}, the first frame's {:?}",
        &hips[..3]
    );
    let times = floats(&file["rotation"]["hips"]["times"]);
    assert!(
        times.len() >= SENT_BEFORE_SIGNAL,
        "SIG{signal}: {} frames in the take, {SENT_BEFORE_SIGNAL} sent before the signal",
        times.len()
    );
    for (i, t) in times.iter().take(SENT_BEFORE_SIGNAL).enumerate() {
        assert!(
            (t - f64::from(i as f32 / 60.0)).abs() < 1e-4,
            "SIG{signal}: frame {i} at {t} s"
        );
    }
}

/// A free loopback UDP address.
#[cfg(unix)]
fn free_udp_address() -> String {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", socket.local_addr().unwrap().port())
}

/// `mocap-bridge record -o out --listen listen`, started: the process and its
/// stdout past the line saying it records.
#[cfg(unix)]
fn start_record(
    out: &Path,
    listen: &str,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;

    let mut recorder = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["record", "-o", out.to_str().unwrap(), "--listen", listen])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(recorder.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("recording VMC on"), "{line}");
    (recorder, stdout)
}

/// `mocap-bridge record` of a sender streaming VMC (`stream_vmc_then_signal`),
/// stopped by `signal`: the recorder exits 0 and says what it wrote; the take's
/// path, in a folder kept while the returned guard lives.
#[cfg(unix)]
fn record_take(signal: &str, restart_at: Option<usize>) -> (tempfile::TempDir, PathBuf) {
    use std::io::Read;

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("take.vrma");
    let listen = free_udp_address();
    let (mut recorder, mut stdout) = start_record(&out, &listen);
    stream_vmc_then_signal(&listen, recorder.id(), signal, restart_at);
    let status = recorder.wait().unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "SIG{signal}: {status}: {rest}");
    assert!(rest.contains("wrote "), "SIG{signal}: {rest}");
    assert!(
        rest.contains(" 0 frames out of order"),
        "SIG{signal}: {rest}"
    );
    // The take is written: its journal is gone.
    assert!(
        !dir.path().join("take.vrma.journal").exists(),
        "SIG{signal}"
    );
    (dir, out)
}

/// The same through the live bridge: `run --record` with a VMC input, stopped by
/// `signal` while the sender streams, writes the performer's take, and its
/// recorder drops nothing.
#[cfg(unix)]
fn run_record_take(signal: &str, restart_at: Option<usize>) -> (tempfile::TempDir, PathBuf) {
    use std::io::Read;

    let dir = tempfile::tempdir().unwrap();
    let listen = free_udp_address();
    let recordings = dir.path().join("recordings");
    let config = serde_json::json!({
        "vmcInputs": [{ "listen": listen, "performer": "alice" }],
        "labInputs": [],
        "vrchatInputs": [],
        "websocket": null,
        "vmcOutputs": [],
        "recorder": { "dir": recordings },
        "status": { "logIntervalS": 0.0, "monitorIntervalS": 0.0 }
    });
    let config_path = dir.path().join("bridge.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["run", "--config", config_path.to_str().unwrap(), "--record"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(bridge.stdout.take().unwrap());
    wait_for_ready(&mut stdout);
    stream_vmc_then_signal(&listen, bridge.id(), signal, restart_at);
    let status = bridge.wait().unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "SIG{signal}: {status}: {rest}");
    let recorder = rest.split("; ").find(|s| s.starts_with("recorder:"));
    assert!(
        recorder.is_some_and(|r| r.contains(" 0 drops")),
        "SIG{signal}: {rest}"
    );
    let takes: Vec<PathBuf> = std::fs::read_dir(&recordings)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "vrma"))
        .collect();
    assert_eq!(takes.len(), 1, "SIG{signal}: {takes:?}; {rest}");
    (dir, takes[0].clone())
}

/// A sender streams VMC into `mocap-bridge record`; SIGINT, SIGTERM or SIGHUP (a
/// run each) stops the recorder while the sender goes on. The recorder exits 0
/// and its take holds every frame sent before the signal.
#[cfg(unix)]
#[test]
fn record_keeps_the_take_on_sigint_sigterm_and_sighup() {
    for signal in ["INT", "TERM", "HUP"] {
        let (_dir, take) = record_take(signal, None);
        assert_take_holds_what_was_sent(&take, signal);
    }
}

/// The same through the live bridge (`run --record`).
#[cfg(unix)]
#[test]
fn run_record_keeps_the_take_on_sigint_sigterm_and_sighup() {
    for signal in ["INT", "TERM", "HUP"] {
        let (_dir, take) = run_record_take(signal, None);
        assert_take_holds_what_was_sent(&take, signal);
    }
}

/// `record` killed outright (SIGKILL, a crash) leaves its journal: a new `record`
/// into the same file refuses, naming it, and `recover` rebuilds the take with every
/// frame sent but the last tenth of a second, at the sender's times.
#[cfg(unix)]
#[test]
fn a_killed_record_leaves_a_journal_that_recover_rebuilds_the_take_from() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("take.vrma");
    let listen = free_udp_address();
    let (mut recorder, _stdout) = start_record(&out, &listen);
    stream_vmc_then_signal(&listen, recorder.id(), "KILL", None);
    assert!(!recorder.wait().unwrap().success());
    assert!(!out.exists());
    let journal = dir.path().join("take.vrma.journal");
    assert!(journal.exists());
    let again = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["record", "-o", out.to_str().unwrap(), "--listen", &listen])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{said}");
    assert!(
        said.contains("recover") && said.contains("take.vrma.journal"),
        "{said}"
    );
    let recover = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .arg("recover")
        .arg(&journal)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&recover.stderr);
    assert!(recover.status.success(), "{said}");
    let file = dump_one(&out);
    check_all_tracks(&file);
    let times = floats(&file["rotation"]["hips"]["times"]);
    assert!(
        times.len() >= SENT_BEFORE_SIGNAL - 6,
        "{} frames",
        times.len()
    );
    for (i, t) in times.iter().enumerate() {
        assert!(
            (t - f64::from(i as f32 / 60.0)).abs() < 1e-4,
            "frame {i} at {t} s"
        );
    }
}

/// A sender restarting mid-take, its clock from 0 again: `record` and `run
/// --record` keep every frame, the take's time going on one frame after the last.
#[cfg(unix)]
#[test]
fn a_sender_restarting_its_clock_loses_no_frame_of_the_take() {
    let restart = Some(SENT_BEFORE_SIGNAL / 2);
    let (_dir, take) = record_take("INT", restart);
    assert_take_holds_what_was_sent(&take, "INT (record, the clock restarted)");
    let (_dir, take) = run_record_take("INT", restart);
    assert_take_holds_what_was_sent(&take, "INT (run --record, the clock restarted)");
}

/// Reads a running bridge's stdout up to its "ready:" line.
fn wait_for_ready(stdout: &mut impl std::io::BufRead) {
    let mut line = String::new();
    while !line.starts_with("ready:") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no ready line");
    }
}

/// A bridge file in `dir` with no network inputs or outputs, recording into
/// `dir/recordings`, the console printing every `monitor_s` seconds (0: never); and
/// that folder.
fn replay_only_config(dir: &Path, monitor_s: f32) -> (PathBuf, PathBuf) {
    let recordings = dir.join("recordings");
    let config = serde_json::json!({
        "vmcInputs": [],
        "labInputs": [],
        "vrchatInputs": [],
        "websocket": null,
        "vmcOutputs": [],
        "recorder": { "dir": recordings },
        "status": { "logIntervalS": 0.0, "monitorIntervalS": monitor_s }
    });
    let config_path = dir.join("bridge.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    (config_path, recordings)
}

/// `run --record | head`: once the console's reader goes away the bridge keeps
/// running without panicking, stops at its end as it would have, and writes the take.
#[test]
fn run_keeps_running_and_keeps_the_take_when_its_console_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let (config_path, recordings) = replay_only_config(dir.path(), 0.05);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/walk-and-wave.vrma");
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["run", "--config", config_path.to_str().unwrap(), "--record"])
        .args(["--duration", "1.5", "--replay"])
        .arg(&source)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(bridge.stdout.take().unwrap());
    wait_for_ready(&mut stdout);
    // The reader goes away while the monitor still prints a line per interval.
    drop(stdout);
    let out = bridge.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let take = recordings.join("walk-and-wave.vrma");
    let animation = mocap_bridge::formats::vrma::load(&take, None)
        .unwrap_or_else(|e| panic!("{}: {e}", take.display()));
    assert!(animation.frame_times().len() > 30, "{}", take.display());
}

/// `run --replay <sample> --record --fast` writes a take that three-vrm-animation
/// reads with the source's rest hips position and hips track (within 0.1 mm): the
/// take's rest stands at the source's hips height, not the built-in avatar's.
#[test]
fn a_take_recorded_by_run_keeps_the_source_hips() {
    let dir = tempfile::tempdir().unwrap();
    let (config_path, recordings) = replay_only_config(dir.path(), 0.0);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/walk-and-wave.vrma");
    let run = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args([
            "run",
            "--config",
            config_path.to_str().unwrap(),
            "--record",
            "--fast",
        ])
        .arg("--replay")
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let take = recordings.join("walk-and-wave.vrma");
    let files = dump_vrma(&[&source, &take]);
    let (want, got) = (&files["files"][0], &files["files"][1]);
    let (want_rest, got_rest) = (
        floats(&want["restHipsPosition"]),
        floats(&got["restHipsPosition"]),
    );
    for (w, g) in want_rest.iter().zip(&got_rest) {
        assert!(
            (w - g).abs() < 1e-4,
            "rest hips {got_rest:?} vs {want_rest:?}"
        );
    }
    let (want_hips, got_hips) = (&want["translation"]["hips"], &got["translation"]["hips"]);
    assert_eq!(
        floats(&got_hips["times"]).len(),
        floats(&want_hips["times"]).len()
    );
    for (w, g) in floats(&want_hips["times"])
        .iter()
        .zip(floats(&got_hips["times"]))
    {
        assert!((w - g).abs() < 1e-4, "hips key at {g} s, source {w} s");
    }
    let (want_values, got_values) = (floats(&want_hips["values"]), floats(&got_hips["values"]));
    assert_eq!(want_values.len(), got_values.len());
    let worst = want_values
        .iter()
        .zip(&got_values)
        .map(|(w, g)| (w - g).abs())
        .fold(0.0, f64::max);
    println!("rest hips {got_rest:?} (source {want_rest:?}); hips track worst {worst:.2e} m");
    assert!(worst < 1e-4, "hips track off by {worst} m");
}

/// `source` rewritten with every animation sampler's interpolation set to `mode`
/// (`STEP`, `LINEAR`, or `CUBICSPLINE`, whose outputs get in- and out-tangents:
/// the slope between the neighbouring keys, per second), written to `out`.
fn with_interpolation(source: &Path, mode: &str, out: &Path) {
    let bytes = std::fs::read(source).unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let json_len = u32_at(12);
    let mut json: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin_at = 20 + json_len;
    let mut bin = bytes[bin_at + 8..bin_at + 8 + u32_at(bin_at)].to_vec();
    let floats_of = |json: &Value, bin: &[u8], accessor: usize| -> (Vec<f32>, usize) {
        let a = &json["accessors"][accessor];
        let view = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let width = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC3" => 3,
            _ => 4,
        };
        let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let count = a["count"].as_u64().unwrap() as usize * width;
        let values = bin[start..start + 4 * count]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        (values, width)
    };
    let animations = json["animations"].as_array().unwrap().len();
    for a in 0..animations {
        let samplers = json["animations"][a]["samplers"].as_array().unwrap().len();
        for s in 0..samplers {
            let sampler = json["animations"][a]["samplers"][s].clone();
            json["animations"][a]["samplers"][s]["interpolation"] = mode.into();
            if mode != "CUBICSPLINE" {
                continue;
            }
            let (times, _) = floats_of(&json, &bin, sampler["input"].as_u64().unwrap() as usize);
            let output = sampler["output"].as_u64().unwrap() as usize;
            let (values, width) = floats_of(&json, &bin, output);
            let key = |k: usize| &values[k * width..(k + 1) * width];
            let mut spline: Vec<f32> = Vec::new();
            for k in 0..times.len() {
                let (a, b) = (k.saturating_sub(1), (k + 1).min(times.len() - 1));
                let dt = (times[b] - times[a]).max(1e-6);
                let slope: Vec<f32> = (0..width).map(|i| (key(b)[i] - key(a)[i]) / dt).collect();
                spline.extend(&slope);
                spline.extend(key(k));
                spline.extend(&slope);
            }
            while !bin.len().is_multiple_of(4) {
                bin.push(0);
            }
            let view = json["bufferViews"].as_array().unwrap().len();
            json["bufferViews"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": 4 * spline.len()}));
            bin.extend(spline.iter().flat_map(|f| f.to_le_bytes()));
            let mut accessor = json["accessors"][output].clone();
            accessor["bufferView"] = view.into();
            accessor["byteOffset"] = 0.into();
            accessor["count"] = (3 * times.len()).into();
            accessor.as_object_mut().unwrap().remove("min");
            accessor.as_object_mut().unwrap().remove("max");
            let index = json["accessors"].as_array().unwrap().len();
            json["accessors"].as_array_mut().unwrap().push(accessor);
            json["animations"][a]["samplers"][s]["output"] = index.into();
        }
    }
    json["buffers"][0]["byteLength"] = bin.len().into();
    let mut text = serde_json::to_vec(&json).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let mut glb = Vec::new();
    glb.extend(b"glTF");
    glb.extend(2u32.to_le_bytes());
    glb.extend(((12 + 8 + text.len() + 8 + bin.len()) as u32).to_le_bytes());
    glb.extend((text.len() as u32).to_le_bytes());
    glb.extend(b"JSON");
    glb.extend(&text);
    glb.extend((bin.len() as u32).to_le_bytes());
    glb.extend(b"BIN\0");
    glb.extend(&bin);
    std::fs::write(out, glb).unwrap();
}

/// Runs `run --replay SOURCE --record --fast ARGS` with `replay` as the config's
/// `replay` section; returns the take it wrote.
fn record_a_replay(dir: &Path, source: &Path, replay: Value, args: &[&str]) -> PathBuf {
    let recordings = dir.join("recordings");
    let config = serde_json::json!({
        "vmcInputs": [], "labInputs": [], "vrchatInputs": [], "websocket": null,
        "vmcOutputs": [], "recorder": { "dir": recordings }, "replay": replay,
        "status": { "logIntervalS": 0.0, "monitorIntervalS": 0.0 }
    });
    let config_path = dir.join("bridge.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["run", "--config", config_path.to_str().unwrap()])
        .args(["--record", "--fast", "--replay"])
        .arg(source)
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    recordings.join(source.file_name().unwrap())
}

/// Angle between the rotations of two quaternions (x, y, z, w), degrees. Both
/// are normalized first: three.js interpolates a file's keys as stored, and a
/// file may store them rounded (test.vrma's `0.7071`).
fn angle_between_deg(a: &[f64], b: &[f64]) -> f64 {
    let norm = |q: &[f64]| (0..4).map(|i| q[i] * q[i]).sum::<f64>().sqrt();
    let dot = (0..4).map(|i| a[i] * b[i]).sum::<f64>() / (norm(a) * norm(b));
    2.0 * dot.abs().min(1.0).acos().to_degrees()
}

/// A .vrma with 7 keys over 3 s, as STEP, LINEAR and CUBICSPLINE, replayed by
/// `run` (recorded by `--record`): the take has a frame at every tick of the
/// stream rate (60 Hz by default, the config's `replay.fps`, `--fps`), and each
/// is three-vrm-animation's interpolation of the file at that time (≤ 0.01°).
#[test]
fn a_sparse_vrma_replays_at_the_stream_rate_interpolated_as_the_file_says() {
    let Some(test) = real_vrma("test.vrma") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let keys = floats(&dump_one(&test)["rotation"]["rightUpperArm"]["times"]);
    assert_eq!(keys.len(), 7, "test.vrma has 7 keys over 3 s: {keys:?}");
    let cases = [
        ("LINEAR", serde_json::json!({}), vec![], 60.0),
        ("STEP", serde_json::json!({"fps": 24.0}), vec![], 24.0),
        (
            "CUBICSPLINE",
            serde_json::json!({"fps": 24.0}),
            vec!["--fps", "30"],
            30.0,
        ),
    ];
    for (mode, replay, args, fps) in cases {
        let case = dir.path().join(mode);
        std::fs::create_dir_all(&case).unwrap();
        let source = case.join("sparse.vrma");
        with_interpolation(&test, mode, &source);
        let take = record_a_replay(&case, &source, replay, &args);
        let got = dump_one(&take);
        let times = floats(&got["rotation"]["rightUpperArm"]["times"]);
        // A frame every 1/fps s from 0, and the last at the end of the clip.
        let duration = keys[keys.len() - 1];
        let frames = (duration * fps).ceil() as usize + 1;
        assert_eq!(times.len(), frames, "{mode}: {times:?}");
        for (i, t) in times.iter().enumerate() {
            let want = (i as f64 / fps).min(duration);
            assert!((t - want).abs() < 1e-4, "{mode}: frame {i} at {t} s");
        }
        let at: Vec<String> = times.iter().map(f64::to_string).collect();
        let mut args = vec!["--at".into(), at.join(",").into()];
        args.push(source.as_os_str().to_owned());
        let want = run_script_ok("dump_vrma.mjs", &args)["files"][0]["samples"].clone();
        let mut worst = 0.0f64;
        let bones = want["rotation"].as_object().unwrap();
        assert!(!bones.is_empty());
        for (bone, values) in bones {
            let (w, g) = (floats(values), floats(&got["rotation"][bone]["values"]));
            assert_eq!(w.len(), g.len(), "{mode} {bone}");
            for (w, g) in w.chunks_exact(4).zip(g.chunks_exact(4)) {
                worst = worst.max(angle_between_deg(w, g));
            }
        }
        println!(
            "{mode}: {} frames at {fps} Hz over {duration} s; worst {worst:.6}° from three-vrm-animation",
            times.len()
        );
        assert!(worst <= 0.01, "{mode}: {worst}°");
    }
}

/// gltfpack (meshoptimizer's own packer, from npm) writes a copy of CesiumMan with
/// its key times, rotations (16 bits, QUATERNION filter), translations and bind
/// matrices in EXT_meshopt_compression buffer views, keys not resampled. The copy
/// loads as the source does: the same joints and rest, and the same clip, every
/// joint's rotation within the 16-bit quantization and translation within 0.1 mm.
#[test]
fn a_gltfpack_compressed_copy_loads_as_its_source() {
    use mocap_bridge::formats::{LoadOptions, load_rig};
    let Some(assets) = common::assets() else {
        return;
    };
    let source = assets.join("gltf/CesiumMan.glb");
    let dir = tempfile::tempdir().expect("temp dir");
    let packed = dir.path().join("CesiumMan-packed.glb");
    let gltfpack = node_ready().join("node_modules/gltfpack/cli.js");
    let out = Command::new(NODE)
        .arg(gltfpack)
        .arg("-i")
        .arg(&source)
        .arg("-o")
        .arg(&packed)
        .args(["-cc", "-af", "0", "-ar", "16", "-at", "24", "-kn"])
        .output()
        .expect("node");
    assert!(out.status.success(), "gltfpack: {out:?}");
    let bytes = std::fs::read(&packed).expect("packed file");
    let compressed = bytes.windows(23).any(|w| w == b"EXT_meshopt_compression");
    assert!(compressed, "gltfpack wrote no meshopt-compressed view");

    let options = LoadOptions::default();
    let a = load_rig(&source, &options).expect("source");
    let b = load_rig(&packed, &options).unwrap_or_else(|e| panic!("{e}"));
    let names = |rig: &mocap_bridge::formats::Rig| -> Vec<String> {
        rig.skeleton
            .joints()
            .iter()
            .map(|j| j.name.clone())
            .collect()
    };
    assert_eq!(names(&a), names(&b));
    for (j, (wa, wb)) in a
        .skeleton
        .rest_world()
        .iter()
        .zip(b.skeleton.rest_world())
        .enumerate()
    {
        let d = wa.translation.distance(wb.translation);
        assert!(d < 1e-4, "{}: rest {d} m apart", names(&a)[j]);
    }
    assert_eq!(a.clips.len(), b.clips.len());
    let (mut worst_deg, mut worst_m, mut checked) = (0.0f32, 0.0f32, 0);
    for (ca, cb) in a.clips.iter().zip(&b.clips) {
        assert_eq!(ca.name, cb.name);
        let (ma, mb) = (&ca.motion, &cb.motion);
        assert_eq!(ma.frame_count(), mb.frame_count(), "{}", ca.name);
        for f in 0..ma.frame_count() {
            assert!(
                (ma.times()[f] - mb.times()[f]).abs() < 1e-5,
                "{} frame {f}",
                ca.name
            );
            let (fa, fb) = (ma.frame(f), mb.frame(f));
            for j in 0..fa.rotations.len() {
                // From the turn's axis part: `angle_between`'s acos loses
                // hundredths of a degree near zero in f32.
                let turn = fa.rotations[j].inverse() * fb.rotations[j];
                let deg = 2.0 * turn.xyz().length().min(1.0).asin().to_degrees();
                worst_deg = worst_deg.max(deg);
                worst_m = worst_m.max(fa.translations[j].distance(fb.translations[j]));
                checked += 1;
            }
        }
    }
    println!(
        "CesiumMan packed by gltfpack -cc: {} clips, {checked} joint-frames, worst {worst_deg:.4}° and {:.3} mm from the source",
        a.clips.len(),
        worst_m * 1000.0
    );
    assert!(checked > 0, "no clip compared");
    assert!(worst_deg < 0.01, "rotations {worst_deg}° off");
    assert!(worst_m < 1e-4, "translations {worst_m} m off");
}

/// The validator's errors, and its warnings other than those in `but`.
fn findings(file: &Value, but: &[String]) -> Vec<String> {
    file["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["severity"].as_u64() == Some(0) || m["severity"].as_u64() == Some(1))
        .filter(|m| !but.iter().any(|c| m["code"].as_str() == Some(c.as_str())))
        .map(|m| format!("{} {} at {}", m["code"], m["message"], m["pointer"]))
        .collect()
}

/// glTF humanoids written as VRM 1.0 for the viewer (`formats::gltf::as_vrm`) pass the
/// Khronos validator: no errors, and no warning the source file does not have.
#[test]
fn glb_humanoids_made_vrm_pass_the_khronos_validator() {
    use mocap_bridge::formats::gltf::as_vrm::to_vrm;
    use mocap_bridge::formats::inspect::map_rig;
    use mocap_bridge::formats::{LoadOptions, load_rig};
    let Some(assets) = mocap_bridge::assets::assets_dir() else {
        eprintln!("skipping: no ../shared/assets");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "CesiumMan.glb",
        "quaternius_KnightCharacter.glb",
        "quaternius_Adventurer_6scenes.gltf",
    ] {
        let source = assets.join("gltf").join(name);
        if !source.exists() {
            eprintln!("skipping {name}: not in the assets");
            continue;
        }
        let rig = load_rig(&source, &LoadOptions::default()).expect("loads");
        let mapped = map_rig(name, &rig, None).expect("a humanoid");
        let bytes = std::fs::read(&source).expect("read");
        let vrm = to_vrm(&bytes, &source, &mapped, rig.units)
            .expect("converts")
            .expect("not a VRM");
        let out = dir.path().join(format!("{name}.vrm"));
        std::fs::write(&out, vrm).expect("write");
        let report = validate(&[&source, &out]);
        let files = report["files"].as_array().expect("files");
        let source_codes: Vec<String> = files[0]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["code"].as_str().map(str::to_owned))
            .collect();
        println!(
            "{name} as VRM: {} errors, {} warnings (source: {} errors, {} warnings)",
            files[1]["numErrors"],
            files[1]["numWarnings"],
            files[0]["numErrors"],
            files[0]["numWarnings"]
        );
        assert_eq!(
            files[1]["numErrors"],
            0,
            "{name}: {:?}",
            findings(&files[1], &[])
        );
        let new = findings(&files[1], &source_codes);
        assert!(new.is_empty(), "{name}: {new:?}");
    }
}
