//! The mannequin VRM the bridge ships (`formats::mannequin`), checked by code nobody
//! on this project wrote: the Khronos glTF validator and @pixiv/three-vrm, both under
//! Node.js (`tests/interop/validate.mjs`, `tests/interop/load_vrm.mjs`); and by the
//! bridge itself: its rig loader, its rest correction and `inspect`.
//!
//! Node.js (>= 18) and npm are required; the pinned packages of `tests/interop` are
//! installed on first use (see `common::node`).

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use glam::Vec3;
use serde_json::Value;

use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::mannequin::{self, mannequin_vrm};
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::formats::{LoadOptions, load_rig, skeleton_json};
use mocap_bridge::humanoid::bone::ALL;
use mocap_bridge::humanoid::{HumanBone, HumanBone as B, Preset, Side};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::skeleton::builtin::HUMANOID_JSON;

/// The mannequin written to a file once for every test.
fn mannequin_file() -> &'static Path {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mannequin");
        std::fs::create_dir_all(&dir).expect("a folder under the target dir");
        let path = dir.join("mannequin.vrm");
        std::fs::write(&path, mannequin_vrm()).expect("writing the mannequin");
        path
    })
}

/// Runs `node tests/interop/<script> <the mannequin>` and returns its one file entry.
fn node_report(script: &str) -> Value {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = match READY.get_or_init(|| common::node::install("tests/interop")) {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("interop harness not ready: {e}"),
    };
    let json = common::node::run_json(&dir.join(script), &[mannequin_file().into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let file = json["files"][0].clone();
    assert!(file.get("error").is_none(), "{script}: {}", file["error"]);
    file
}

fn vec3(value: &Value) -> Vec3 {
    let f = |i: usize| value[i].as_f64().unwrap_or(f64::NAN) as f32;
    Vec3::new(f(0), f(1), f(2))
}

/// The bridge's built-in avatar in its T-pose: the embedded humanoid, the bones it
/// lacks placed by the standard proportions.
fn built_in_avatar_rest() -> VrmaRest {
    let rig = skeleton_json::embedded_rig("humanoid", HUMANOID_JSON);
    let mapped = MappedSkeleton::new(rig.skeleton, &rig.bone_map.unwrap()).unwrap();
    VrmaRest::from_mapped(&mapped)
}

/// The mannequin loaded by the bridge's own rig loader, with the map it chooses.
fn bridge_model() -> MappedSkeleton {
    let rig = load_rig(mannequin_file(), &LoadOptions::default()).unwrap();
    let chosen = choose_map(&rig, None).expect("a humanoid map");
    assert_eq!(chosen.source, "VRMC_vrm humanoid");
    MappedSkeleton::new(rig.skeleton, &chosen.map).unwrap()
}

#[test]
fn the_khronos_validator_finds_no_error_and_no_warning() {
    let report = node_report("validate.mjs");
    println!(
        "glTF validator {}: {} errors, {} warnings, {} infos, {} hints",
        report["validatorVersion"],
        report["numErrors"],
        report["numWarnings"],
        report["numInfos"],
        report["numHints"]
    );
    for message in report["messages"].as_array().unwrap() {
        println!("  {message}");
    }
    assert_eq!(report["numErrors"], 0);
    assert_eq!(report["numWarnings"], 0);
}

#[test]
fn three_vrm_finds_every_bone_where_the_bridge_puts_it() {
    let report = node_report("load_vrm.mjs");
    let bones = report["humanBones"].as_array().unwrap();
    assert_eq!(bones.len(), 55, "{bones:?}");

    // The bridge loads the same file into the same T-pose: no bone corrected.
    let model = bridge_model();
    for c in &model.correction.bones {
        assert!(
            c.angle_deg < 0.01,
            "{} corrected by {}°",
            c.bone,
            c.angle_deg
        );
    }
    assert!(model.correction.problems.is_empty());
    let world = model.correction.t_pose_world(&model.skeleton);

    // Its proportions: the built-in avatar's, each hand's fingers moved as one.
    let built_in = built_in_avatar_rest();
    let shift = |bone: HumanBone| {
        if !bone.is_finger() {
            return Vec3::ZERO;
        }
        let (hand, middle) = match bone.side() {
            Side::Right => (B::RightHand, B::RightMiddleProximal),
            _ => (B::LeftHand, B::LeftMiddleProximal),
        };
        let off = built_in.position(middle) - built_in.position(hand);
        Vec3::new(0.0, off.y, off.z)
    };

    let mut worst: BTreeMap<&str, (f32, HumanBone)> = BTreeMap::new();
    for bone in ALL {
        let three = vec3(&report["restPositions"][bone.name()]);
        let joint = model.map.joint(bone).expect("every bone mapped");
        let bridge = Vec3::from(world[joint].translation);
        let own = built_in.position(bone) - shift(bone);
        for (what, distance) in [
            (
                "three-vrm vs the bridge's T-pose of the file",
                three.distance(bridge),
            ),
            ("three-vrm vs the built-in avatar", three.distance(own)),
        ] {
            let entry = worst.entry(what).or_insert((0.0, bone));
            if distance > entry.0 {
                *entry = (distance, bone);
            }
        }
    }
    for (what, (distance, bone)) in &worst {
        println!("{what}: at most {distance:.1e} m ({bone})");
        assert!(*distance < 1e-4, "{what}: {bone} {distance} m apart");
    }
    let shifted = shift(B::LeftIndexProximal).length();
    println!(
        "fingers moved across the hand by {:.2} mm",
        shifted * 1000.0
    );
    assert!(shifted < 0.01);
}

#[test]
fn three_vrm_finds_the_expressions_the_eyes_and_the_meta() {
    let report = node_report("load_vrm.mjs");
    assert!(
        report["warnings"].as_array().unwrap().is_empty(),
        "{}",
        report["warnings"]
    );
    let expressions: Vec<&str> = report["expressions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for preset in Preset::all().filter(|p| !p.is_look_at() && *p != Preset::Neutral) {
        assert!(expressions.contains(&preset.name()), "no {preset}");
        // Set alone, each moves one morph target of the face fully.
        let morphs = report["morphs"][preset.name()].as_array().unwrap();
        assert!(!morphs.is_empty(), "{preset} moves nothing");
        assert!(
            morphs
                .iter()
                .all(|m| m["mesh"] == "face" && m["influence"] == 1.0)
        );
    }
    println!("expressions: {}", expressions.join(", "));

    let look = &report["lookAt"];
    assert_eq!(look["type"], "bone");
    let eyes = (mannequin::rest().position(B::LeftEye) + mannequin::rest().position(B::RightEye))
        * 0.5
        - mannequin::rest().position(B::Head);
    assert!(vec3(&look["offsetFromHeadBone"]).abs_diff_eq(eyes, 1e-6));
    let turn = &look["eyeTurnDeg"];
    println!("eye turn at 90° of lookAt: {turn}");
    for (key, degrees) in [
        ("left", 12.0),
        ("right", 12.0),
        ("up", 10.0),
        ("down", 10.0),
    ] {
        let got = turn[key].as_f64().unwrap();
        assert!((got - degrees).abs() < 1e-3, "{key}: {got}°");
    }

    let meta = &report["meta"];
    assert_eq!(report["metaVersion"], "1");
    assert_eq!(meta["name"], mannequin::NAME);
    assert_eq!(meta["licenseUrl"], mannequin::LICENSE_URL);
    assert_eq!(meta["allowRedistribution"], true);
    assert_eq!(meta["modification"], "allowModificationRedistribution");
    assert_eq!(meta["avatarPermission"], "everyone");
    assert_eq!(meta["commercialUsage"], "corporation");
}

#[test]
fn avatar_writes_the_mannequin_and_inspect_finds_no_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mannequin.vrm");
    let said = common::bridge_ok(&[OsStr::new("avatar"), OsStr::new("-o"), path.as_os_str()]);
    assert!(said.contains("55 humanoid bones, 13 expressions"), "{said}");
    assert_eq!(std::fs::read(&path).unwrap(), mannequin_vrm());

    let report = common::bridge_ok(&[OsStr::new("inspect"), path.as_os_str()]);
    assert!(
        report.contains("bone map: VRMC_vrm humanoid (55 bones)"),
        "{report}"
    );
    assert!(report.contains("rest pose: T-pose"), "{report}");
    assert!(report.contains("problems: none"), "{report}");

    // A folder that is not there: one line naming the file, exit 2.
    let missing = dir.path().join("missing").join("m.vrm");
    let out = common::bridge(&[OsStr::new("avatar"), OsStr::new("-o"), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.starts_with("error: cannot write ") && said.contains("m.vrm"),
        "{said}"
    );
}
