//! The command line as a user meets it: bad files and bad maps give one clear line
//! naming the file and the place, exit code 2, and never a panic; good files print
//! the inspect report.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{bridge, bridge_ok};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Asserts a one-line error on stderr, exit code 2, containing every `needle`.
fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "`{needle}` missing from: {stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

const GOOD_BVH: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 10 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.1
0 90 0 0 0 0 0 0 0
0 90 0 0 0 0 0 0 0
";

#[test]
fn a_file_named_only_by_its_extension_is_read_as_that_type() {
    // A generator that was given no name for its take writes `.bvh`: a BVH file,
    // though the name reads as a hidden file with no extension.
    let dir = tempfile::tempdir().unwrap();
    let named = write(dir.path(), "take.bvh", GOOD_BVH.as_bytes());
    let unnamed = write(dir.path(), ".bvh", GOOD_BVH.as_bytes());
    let report = |path: &Path| {
        let out = bridge_ok(&["inspect", path.to_str().unwrap()]);
        out.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    assert!(report(&unnamed).contains("Spine"), "{}", report(&unnamed));
    assert_eq!(report(&unnamed), report(&named));
}

#[test]
fn bad_bvh_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, String, &[&str]); 5] = [
        (
            "garbled.bvh",
            GOOD_BVH.replace("JOINT Spine", "JOINTS Spine"),
            &["garbled.bvh:6"],
        ),
        (
            "truncated.bvh",
            GOOD_BVH[..60].to_owned(),
            &["truncated.bvh"],
        ),
        (
            "nan.bvh",
            GOOD_BVH.replace(
                "OFFSET 0 10 0\n    CHANNELS",
                "OFFSET 0 nan 0\n    CHANNELS",
            ),
            &["nan.bvh:8"],
        ),
        (
            "short.bvh",
            GOOD_BVH.replace("0 90 0 0 0 0 0 0 0\n0 90", "0 90 0 0 0 0 0 0\n0 90"),
            &["short.bvh:"],
        ),
        (
            "word.bvh",
            GOOD_BVH.replace("Frame Time: 0.1\n0 90", "Frame Time: 0.1\n0 ninety"),
            &["word.bvh:19"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = write(dir.path(), name, text.as_bytes());
        assert_one_line_error(&bridge(&["inspect", path.to_str().unwrap()]), needles);
    }
}

#[test]
fn bad_gltf_files_name_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut glb = b"glTF".to_vec();
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&1000u32.to_le_bytes());
    let cases: [(&str, Vec<u8>, &[&str]); 4] = [
        ("magic.glb", b"GLTF\x02\x00\x00\x00garbage".to_vec(), &["magic.glb"]),
        ("truncated.glb", glb, &["truncated.glb"]),
        ("garbled.gltf", b"{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [".to_vec(), &["garbled.gltf"]),
        (
            "nan.gltf",
            br#"{"asset": {"version": "2.0"}, "nodes": [{"name": "a", "translation": [0, 1e39, 0]}],
                "skins": [{"joints": [0]}]}"#
                .to_vec(),
            &["nan.gltf", "node 0"],
        ),
    ];
    for (name, bytes, needles) in cases {
        let path = write(dir.path(), name, &bytes);
        assert_one_line_error(&bridge(&["inspect", path.to_str().unwrap()]), needles);
    }
}

#[test]
fn gltf_buffers_outside_the_files_folder_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("model");
    std::fs::create_dir_all(&dir).unwrap();
    write(root.path(), "outside.bin", &[0u8; 64]);
    // A skin whose bind matrices are in an external buffer, so that the skeleton
    // needs its bytes.
    let skinned = |uri: &str, length: u64| {
        format!(
            r#"{{"asset": {{"version": "2.0"}}, "nodes": [{{"name": "a"}}],
                "skins": [{{"joints": [0], "inverseBindMatrices": 0}}],
                "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 1, "type": "MAT4"}}],
                "bufferViews": [{{"buffer": 0, "byteLength": 64}}],
                "buffers": [{{"uri": "{uri}", "byteLength": {length}}}]}}"#
        )
    };
    let cases: [(&str, String, &[&str]); 3] = [
        (
            "zero.gltf",
            skinned("/dev/zero", 1 << 40),
            &["zero.gltf", "buffer 0", "`/dev/zero`"],
        ),
        (
            "climb.gltf",
            skinned("../outside.bin", 64),
            &[
                "climb.gltf",
                "buffer 0",
                "outside the file's folder",
                "MOCAP_BRIDGE_TRUST_FILES=1",
            ],
        ),
        (
            "absolute.gltf",
            skinned(&root.path().join("outside.bin").display().to_string(), 64),
            &["absolute.gltf", "buffer 0", "outside the file's folder"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = write(&dir, name, text.as_bytes());
        assert_one_line_error(&bridge(&["inspect", path.to_str().unwrap()]), needles);
    }
}

#[test]
fn bad_skeleton_json_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "garbled.json",
            "{\"joints\": [{\"name\": \"a\",",
            &["garbled.json:1:"],
        ),
        (
            "nan.json",
            r#"{"joints": [{"name": "a", "parent": null, "offset": [0, 1e39, 0]}]}"#,
            &["nan.json", "joints[0].offset"],
        ),
        (
            "cycle.json",
            r#"{"joints": [{"name": "a", "parent": "b", "offset": [0, 0, 0]}, {"name": "b", "parent": "a", "offset": [0, 0, 0]}]}"#,
            &["cycle.json", "cycle", "`a`", "`b`"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = write(dir.path(), name, text.as_bytes());
        assert_one_line_error(&bridge(&["inspect", path.to_str().unwrap()]), needles);
    }
}

/// Files the bridge's configuration names (an avatar, a VMC sender's `rest`, a
/// streamed skeleton) that cannot be used stop `run` before it binds anything,
/// with one line naming the configuration file, the key and the loader's own
/// reason (`run --avatar` for a file given with that flag).
#[test]
fn files_a_config_names_that_cannot_be_used_name_the_key_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let arm = write(
        dir.path(),
        "arm.json",
        br#"{"joints": [{"name": "a", "parent": null, "offset": [0, 1, 0]}]}"#,
    );
    let binary = write(dir.path(), "model.glb", &[0xff, 0xfe, 0x00, 0x80]);
    let missing = dir.path().join("missing.vrm");
    // Every socket on port 0 and no server: a bind never gets in the way.
    let quiet = r#""labInputs": [], "websocket": null, "vmcOutputs": []"#;
    let rest = |path: &Path| {
        format!(
            r#"{{"vmcInputs": [{{"listen": "127.0.0.1:0", "rest": {:?}}}], {quiet}}}"#,
            path.to_str().unwrap()
        )
    };
    let skeleton = |path: &Path| {
        format!(
            r#"{{"vmcInputs": [], {quiet}, "skeletons": {{"x": {:?}}}}}"#,
            path.to_str().unwrap()
        )
    };
    let avatar = |key: &str, path: &Path| {
        let file = format!("{:?}", path.to_str().unwrap());
        let keys = match key {
            "performer" => format!(r#""performers": {{"alice": {{"avatar": {file}}}}}"#),
            _ => format!(r#""vmcOutputs": [{{"to": "127.0.0.1:9", "avatar": {file}}}]"#),
        };
        format!(r#"{{"vmcInputs": [], "labInputs": [], "websocket": null, {keys}}}"#)
    };
    let grounded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hips_at_the_floor.json");
    let cases: [(String, &[&str]); 7] = [
        (
            avatar("performer", &grounded),
            &[
                "bridge.json: performers.alice.avatar: ",
                "hips_at_the_floor.json: the hips (joint `Armature`) rest 0.000 m above the floor",
                "no pelvis",
            ],
        ),
        (
            avatar("performer", &missing),
            &[
                "bridge.json: performers.alice.avatar: ",
                "missing.vrm",
                "No such file",
            ],
        ),
        (
            avatar("output", &arm),
            &[
                "bridge.json: vmcOutputs[0].avatar: ",
                "arm.json",
                "no bone map",
            ],
        ),
        (
            rest(&missing),
            &[
                "bridge.json: vmcInputs[0].rest: ",
                "missing.vrm",
                "No such file",
            ],
        ),
        (
            rest(&arm),
            &[
                "bridge.json: vmcInputs[0].rest: ",
                "arm.json",
                "no humanoid bone map",
            ],
        ),
        (
            skeleton(&missing),
            &["bridge.json: skeletons.x: ", "missing.vrm", "No such file"],
        ),
        (
            skeleton(&binary),
            &[
                "bridge.json: skeletons.x: ",
                "model.glb",
                "not a skeleton JSON file",
            ],
        ),
    ];
    for (text, needles) in cases {
        let config = write(dir.path(), "bridge.json", text.as_bytes());
        let out = bridge(&[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--duration",
            "0",
        ]);
        assert_one_line_error(&out, needles);
    }
    // A file given on the command line: the flag, not a key of the config.
    let config = write(
        dir.path(),
        "bridge.json",
        avatar("performer", &arm).as_bytes(),
    );
    let out = bridge(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--avatar",
        &format!("alice={}", missing.display()),
        "--duration",
        "0",
    ]);
    assert_one_line_error(&out, &["run --avatar: ", "missing.vrm", "No such file"]);
}

#[test]
fn bad_bone_maps_name_the_map_file_and_the_bone() {
    let dir = tempfile::tempdir().unwrap();
    let lab19 = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/skeletons/lab19.json");
    let missing = write(
        dir.path(),
        "missing.json",
        br#"{"hips": "Hips", "spine": "Pelvis"}"#,
    );
    let out = bridge(&[
        "inspect",
        lab19.to_str().unwrap(),
        "--map",
        missing.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, &["missing.json", "spine", "`Pelvis`"]);
    let unknown = write(
        dir.path(),
        "unknown.json",
        br#"{"hips": "Hips", "elbow": "LeftElbow"}"#,
    );
    let out = bridge(&[
        "inspect",
        lab19.to_str().unwrap(),
        "--map",
        unknown.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, &["unknown.json", "`elbow`"]);
    let order = write(
        dir.path(),
        "order.json",
        br#"{"hips": "Hips", "spine": "Chest", "head": "Head",
            "leftUpperArm": "LeftElbow", "leftLowerArm": "LeftShoulder", "leftHand": "LeftWrist",
            "rightUpperArm": "RightShoulder", "rightLowerArm": "RightElbow", "rightHand": "RightWrist",
            "leftUpperLeg": "LeftHip", "leftLowerLeg": "LeftKnee", "leftFoot": "LeftAnkle",
            "rightUpperLeg": "RightHip", "rightLowerLeg": "RightKnee", "rightFoot": "RightAnkle"}"#,
    );
    let out = bridge(&[
        "inspect",
        lab19.to_str().unwrap(),
        "--map",
        order.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, &["order.json", "leftLowerArm", "not below"]);
    let garbled = write(dir.path(), "garbled.json", b"{\"hips\": ");
    let out = bridge(&[
        "inspect",
        lab19.to_str().unwrap(),
        "--map",
        garbled.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, &["garbled.json", "line 1"]);
}

#[test]
fn a_rest_from_a_file_that_gives_none_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let take = write(dir.path(), "take.bvh", GOOD_BVH.as_bytes());
    let same = write(dir.path(), "same.bvh", GOOD_BVH.as_bytes());
    let other = write(
        dir.path(),
        "other.bvh",
        GOOD_BVH.replace("JOINT Spine", "JOINT Chest").as_bytes(),
    );
    let arg = |p: &PathBuf| p.to_str().unwrap().to_owned();
    // A two-joint figure stands as no body in any pose: it gives no rest.
    let out = bridge(&["inspect", &arg(&take), "--rest-from", &arg(&same)]);
    assert_one_line_error(
        &out,
        &[
            "take.bvh: no rest from ",
            "same.bvh",
            "no frame of its motion stands",
        ],
    );
    let out = bridge(&["inspect", &arg(&take), "--rest-from", &arg(&other)]);
    assert_one_line_error(
        &out,
        &[
            "take.bvh: no rest from ",
            "other.bvh",
            "joint `Spine` (line 6) is `Chest` there",
        ],
    );
    let vrma = dir.path().join("take.vrma");
    assert_rest_from_refused(
        &vrma,
        &same,
        &["inspect", "retarget", "send", "convert"],
        &[
            "take.vrma: --rest-from",
            "no .bvh, .gltf, .glb or .vrm file",
        ],
    );
}

/// Each of `commands` run on `take` with `--rest-from rest` (`convert` writing beside
/// `take`) refuses in one line naming each of `parts`.
fn assert_rest_from_refused(take: &Path, rest: &Path, commands: &[&str], parts: &[&str]) {
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    for &command in commands {
        let mut args = vec![command.to_owned(), arg(take)];
        if command == "convert" {
            args.extend(["-o".to_owned(), arg(&take.with_file_name("out.vrma"))]);
        }
        args.extend(["--rest-from".to_owned(), arg(rest)]);
        assert_one_line_error(&bridge(&args), parts);
    }
}

#[test]
fn a_rest_from_for_a_humanoid_clip_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let same = write(dir.path(), "same.bvh", GOOD_BVH.as_bytes());
    let clip = dir.path().join("clip.glb");
    let arg = |p: &PathBuf| p.to_str().unwrap().to_owned();
    let out = bridge(&["convert", "-o", &arg(&clip)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_rest_from_refused(
        &clip,
        &same,
        &["retarget", "send", "convert"],
        &[
            "clip.glb: --rest-from gives a rest to a rig's joints",
            "EXT_skeleton_humanoid clip",
        ],
    );
}

#[test]
fn missing_and_unknown_files_are_errors() {
    let out = bridge(&["inspect", "no/such/file.bvh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.bvh"));
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "notes.txt", b"hello");
    // The types named are the ones the command reads: inspect and the commands
    // that play recordings read .vrma files too.
    let expected = "unknown file type (expected .bvh, .gltf, .glb, .vrm, .vrma or .json)";
    let notes = path.to_str().unwrap();
    let out = dir.path().join("out.vrma");
    for args in [
        vec!["inspect", notes],
        vec!["convert", notes, "-o", out.to_str().unwrap()],
        vec!["send", notes],
        vec!["retarget", notes],
    ] {
        assert_one_line_error(&bridge(&args), &["notes.txt", expected]);
    }
}

#[test]
fn inspect_reports_rest_poses_of_real_rigs() {
    let Some(assets) = common::assets() else {
        return;
    };
    let cases = [
        ("gltf/CesiumMan.glb", "rest pose: A-pose"),
        (
            "vrm/rest_a_pose_t_position_rest_vrm0.vrm",
            "rest pose: A-pose",
        ),
        ("bvh/test_mocapbank.bvh", "rest pose: arms down"),
        ("vrm/Example.vrm", "rest pose: T-pose"),
    ];
    for (file, expected) in cases {
        let out = bridge(&["inspect", assets.join(file).to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(expected), "{file}:\n{stdout}");
        assert!(stdout.contains("correction to the T-pose:"), "{stdout}");
    }
}

#[test]
fn inspect_reads_vrma_files_and_lists_only_problems_to_act_on() {
    let Some(assets) = common::assets() else {
        return;
    };
    let inspect = |file: &str| {
        let out = bridge(&["inspect", assets.join(file).to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A clean VRM: nothing to act on (its finger tips and toes have no end sites).
    let example = inspect("vrm/Example.vrm");
    assert!(example.contains("\nproblems: none\n"), "{example}");
    let test = inspect("vrma/test.vrma");
    for expected in [
        "bone map: VRMC_vrm_animation humanoid (51 bones)",
        "rest pose: T-pose",
        "animations (1):\n  0 (no name): 3.000 s, 7 key times over its tracks, LINEAR\n",
        "    bones (1): rightUpperArm\n",
        "    expressions: happy\n    lookAt: keyed\n",
        "expressions declared (1): happy\n",
        "rest hips position: (0.000, 0.850, 0.000) m\n",
        "\nproblems: none\n",
    ] {
        assert!(test.contains(expected), "`{expected}` in:\n{test}");
    }
    let univrm = inspect("vrma/univrm_rotate_no_minmax.vrma");
    assert!(
        univrm.contains("note: 1 key-time accessor without min/max"),
        "{univrm}"
    );
    assert!(univrm.contains("    bones (51): "), "{univrm}");
    let broken = assets.join("vrma/BROKEN_univrm251_samplers_without_accessors.vrma");
    assert_one_line_error(
        &bridge(&["inspect", broken.to_str().unwrap()]),
        &["BROKEN_univrm251", "animations[0].samplers[0]", "`input`"],
    );
}

#[test]
fn a_vrma_without_animations_shows_its_rest_and_is_refused_as_a_take() {
    use mocap_bridge::formats::glb::{GlbFile, split_glb, write_start};
    use mocap_bridge::formats::vrma::{VrmaRest, VrmaWriter};
    let dir = tempfile::tempdir().unwrap();
    let take = VrmaWriter::new(VrmaRest::standard(0.9), "take").to_bytes();
    let (json, bin) = split_glb(&take).unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(json).unwrap();
    json.as_object_mut().unwrap().remove("animations");
    let bin = bin.unwrap_or_default();
    let mut bytes = Vec::new();
    write_start(&mut bytes, &json, bin.len()).unwrap();
    bytes.extend_from_slice(bin);
    let rest = write(dir.path(), "rest.vrma", &bytes);
    let rest = rest.to_str().unwrap();
    let report = bridge_ok(&["inspect", rest]);
    for expected in [
        "\nanimations: none (the file holds its humanoid rest alone)\n",
        "rest hips position: (0.000, 0.900, 0.000) m\n",
    ] {
        assert!(report.contains(expected), "`{expected}` in:\n{report}");
    }
    let out = dir.path().join("out.vrma");
    for args in [
        vec!["convert", rest, "-o", out.to_str().unwrap()],
        vec!["retarget", rest],
    ] {
        assert_one_line_error(&bridge(&args), &["rest.vrma", "animations: none"]);
    }
    assert!(!out.exists());
}

#[test]
fn retarget_with_no_arguments_plays_the_built_in_performance() {
    let stdout = bridge_ok(&["retarget", "--every", "45"]);
    assert!(
        stdout.starts_with("built-in lab19 performance (arms down"),
        "{stdout}"
    );
    let summary = stdout.lines().last().unwrap();
    assert!(summary.starts_with("480 frames retargeted"), "{summary}");
    let worst: f32 = summary
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('°')
        .parse()
        .unwrap();
    assert!(worst < 0.01, "{summary}");
    // Frames 0, 45, ..., 450 are printed, and the motion changes between them.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && !l.contains("retargeted"))
        .collect();
    assert_eq!(rows.len(), 11, "{stdout}");
    let motion = |row: &str| {
        row.split_whitespace()
            .skip(2)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_ne!(motion(rows[0]), motion(rows[1]), "{stdout}");
}

#[test]
fn retarget_a_real_capture_onto_a_real_model() {
    let Some(assets) = common::assets() else {
        return;
    };
    let source = assets.join("bvh/cmu_12_01_walk.bvh");
    let target = assets.join("vrm/Example.vrm");
    let stdout = bridge_ok(&[
        "retarget",
        source.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--every",
        "0",
    ]);
    assert!(stdout.contains("524 frames retargeted"), "{stdout}");
    // A rig without motion cannot be a source.
    let out = bridge(&["retarget", target.to_str().unwrap()]);
    assert_one_line_error(&out, &["Example.vrm", "no motion"]);
}

/// A VRM resting in an A-pose is driven from that rest, as VRM players take it:
/// `retarget` says so and checks its limbs against it, from a BVH and from a `.vrma`.
#[test]
fn retarget_onto_a_vrm_resting_in_an_a_pose_checks_it_against_its_rest() {
    let Some(dir) = common::assets() else { return };
    let target = dir.join("vrm/rest_a_pose_t_position_rest_vrm0.vrm");
    for source in [
        dir.join("bvh/cmu_12_01_walk.bvh"),
        dir.join("vrma/idle_loop.vrma"),
    ] {
        let out = bridge_ok(&[
            "retarget".as_ref(),
            source.as_os_str(),
            "--target".as_ref(),
            target.as_os_str(),
            "--every".as_ref(),
            "0".as_ref(),
        ]);
        assert!(
            out.contains("limbs are up to 44.9° from a T-pose's"),
            "{out}"
        );
        let worst: f32 = out
            .split("worst limb direction error ")
            .nth(1)
            .and_then(|rest| rest.split('°').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no error printed: {out}"));
        assert!(worst < 0.01, "{}: {worst}°", source.display());
    }
}

#[test]
fn convert_writes_vrma_from_bvh_and_from_vrma() {
    let Some(assets) = common::assets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("walk.vrma");
    let source = assets.join("bvh/cmu_12_01_walk.bvh");
    let stdout = bridge_ok(&[
        "convert",
        source.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.contains("524 frames"), "{stdout}");
    let read = mocap_bridge::formats::vrma::load(&out, None).unwrap();
    assert_eq!(read.bones().count(), 22);

    // Resampled at 30 fps, and baked onto Example.vrm.
    let resampled = dir.path().join("walk30.vrma");
    let target = assets.join("vrm/Example.vrm");
    let stdout = bridge_ok(&[
        "convert",
        out.to_str().unwrap(),
        "-o",
        resampled.to_str().unwrap(),
        "--fps",
        "30",
        "--target",
        target.to_str().unwrap(),
    ]);
    assert!(stdout.contains("132 frames"), "{stdout}");
    let baked = mocap_bridge::formats::vrma::load(&resampled, None).unwrap();
    assert!(
        (baked.rest_hips_position.y - 0.85).abs() < 0.01,
        "{}",
        baked.rest_hips_position
    );
}

/// A frame rate is above 0 and at most 1000 for every command that takes one: a
/// grid past that would hold billions of frame times.
#[test]
fn frame_rates_past_a_thousand_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.vrma");
    let out = out.to_str().unwrap();
    for args in [
        &["run", "--demo", "--fps", "1e30", "--duration", "0"][..],
        &["send", "--fps", "1001", "--to", "127.0.0.1:9"],
        &["convert", "-o", out, "--fps", "0"],
        &["convert", "-o", out, "--fps", "inf"],
    ] {
        let run = bridge(args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("frames per second above 0 and at most 1000"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!Path::new(out).exists());
}

/// A take is never lost to `-o`: `convert` and `record` refuse an output that
/// exists, naming it and `--force`, and leave it as it was; `--force` overwrites.
#[test]
fn convert_and_record_refuse_an_existing_output_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = write(dir.path(), "take.vrma", b"a take");
    let out_arg = out.to_str().unwrap();
    let needles: &[&str] = &["take.vrma: already exists", "--force"];
    assert_one_line_error(&bridge(&["convert", "-o", out_arg]), needles);
    let record = [
        "record",
        "-o",
        out_arg,
        "--listen",
        "127.0.0.1:0",
        "--duration",
        "0",
    ];
    assert_one_line_error(&bridge(&record), needles);
    assert_eq!(std::fs::read(&out).unwrap(), b"a take");
    let stdout = bridge_ok(&["convert", "-o", out_arg, "--force"]);
    assert!(stdout.contains("wrote"), "{stdout}");
    mocap_bridge::formats::vrma::load(&out, None).unwrap();
}

#[test]
fn convert_refuses_bad_input_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let lab19 = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/skeletons/lab19.json");
    let out = dir.path().join("x.vrma");
    assert_one_line_error(
        &bridge(&[
            "convert",
            lab19.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]),
        &["lab19.json", "no animation"],
    );
    assert_one_line_error(
        &bridge(&["convert", lab19.to_str().unwrap(), "-o", "x.fbx"]),
        &["x.fbx", "must be a .vrma file"],
    );
    let bad = write(
        dir.path(),
        "bad.vrma",
        b"glTF\x02\x00\x00\x00\x10\x00\x00\x00",
    );
    assert_one_line_error(
        &bridge(&[
            "convert",
            bad.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]),
        &["bad.vrma", "truncated"],
    );
}

#[test]
fn convert_writes_and_reads_ext_skeleton_humanoid() {
    let Some(assets) = common::assets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("walk.glb");
    let source = assets.join("bvh/cmu_12_01_walk.bvh");
    bridge_ok(&[
        "convert",
        source.to_str().unwrap(),
        "-o",
        glb.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&glb).unwrap();
    assert!(mocap_bridge::formats::ext_humanoid::has_humanoid_channels(
        &bytes
    ));
    // Back to .vrma, and played by retarget.
    let vrma = dir.path().join("walk.vrma");
    let stdout = bridge_ok(&[
        "convert",
        glb.to_str().unwrap(),
        "-o",
        vrma.to_str().unwrap(),
    ]);
    assert!(stdout.contains("524 frames"), "{stdout}");
    let run = bridge(&["retarget", glb.to_str().unwrap(), "--every", "0"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("EXT_skeleton_humanoid clip, 22 bones"),
        "{stdout}"
    );
    assert!(stdout.contains("524 frames retargeted"), "{stdout}");
}

#[test]
fn eval_ik_reports_vr_mode_and_mocap_mode() {
    let Some(assets) = common::assets() else {
        return;
    };
    let capture = assets.join("bvh/cmu_12_01_walk.bvh");
    let vr = bridge_ok(&["eval-ik", capture.to_str().unwrap(), "--mode", "vr"]);
    assert!(vr.contains("3-point") && vr.contains("6-point"), "{vr}");
    let model = assets.join("vrm/Example.vrm");
    let mocap = bridge_ok(&[
        "eval-ik",
        capture.to_str().unwrap(),
        "--target",
        model.to_str().unwrap(),
    ]);
    assert!(mocap.contains("524 frames"), "{mocap}");
    let rotated = bridge_ok(&[
        "eval-ik",
        capture.to_str().unwrap(),
        "--mode",
        "vr",
        "--rotation-noise",
        "1",
    ]);
    assert!(rotated.contains("1.0 cm and 1.0° noise"), "{rotated}");
    let out = bridge(&[
        "eval-ik",
        capture.to_str().unwrap(),
        "--mode",
        "vr",
        "--rotation-noise=-1",
    ]);
    assert_one_line_error(&out, &["--rotation-noise -1", "not a noise level"]);
}

/// A folder with no clip to measure is an error, in either mode: no table of
/// nothing claims the goals met.
#[test]
fn eval_ik_with_no_clip_measured_says_so_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let target = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/skeletons/humanoid.json"
    );
    for args in [
        vec!["eval-ik", folder, "--mode", "vr"],
        vec!["eval-ik", folder, "--target", target],
    ] {
        let out = bridge(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("goals met"), "{stdout}");
        assert!(stdout.contains("no clip measured"), "{stdout}");
        assert_one_line_error(&out, &["no clip measured", "0 files"]);
    }
}

/// One `.vrma` given alone is refused for what it is, as the folder walk names it,
/// not as a file of unknown type; a broken one says where it breaks.
#[test]
fn eval_ik_of_one_vrma_says_it_has_no_source_rig() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.vrma");
    bridge_ok(&["convert", "-o", good.to_str().unwrap()]);
    let out = bridge(&["eval-ik", good.to_str().unwrap(), "--mode", "vr"]);
    assert_one_line_error(&out, &["good.vrma", "normalized poses with no source rig"]);
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.path().join("cut.vrma");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = bridge(&["eval-ik", cut.to_str().unwrap(), "--mode", "vr"]);
    assert_one_line_error(&out, &["cut.vrma"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("no source rig"), "{stderr}");
}

/// A `.vrma` is left out of `eval-ik` as normalized poses only when it reads: a
/// broken one is named as one that does not load, with where it breaks.
#[test]
fn eval_ik_names_a_broken_vrma_as_one_that_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.vrma");
    bridge_ok(&["convert", "-o", good.to_str().unwrap()]);
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(dir.path().join("cut.vrma"), &bytes[..bytes.len() / 2]).unwrap();
    let out = bridge(&["eval-ik", dir.path().to_str().unwrap(), "--mode", "vr"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no line for {name}: {stdout}"))
            .to_owned()
    };
    assert!(line("good.vrma").contains("normalized poses"), "{stdout}");
    let cut = line("cut.vrma");
    assert!(
        cut.contains("does not load") && cut.contains("truncated"),
        "{stdout}"
    );
    assert!(!cut.contains("normalized poses"), "{stdout}");
}

/// `eval-ik --config` and `--device-filter` are held to the ranges the bridge's
/// configuration file is, before any file is read.
#[test]
fn eval_ik_settings_out_of_their_range_name_the_flag_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let target = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/skeletons/humanoid.json"
    );
    let cases: [(Vec<&str>, &[&str]); 3] = [
        (
            vec!["--target", target, "--config", r#"{"handWeight": 2}"#],
            &["--config: handWeight: 2 is not from 0 to 1"],
        ),
        (
            vec!["--mode", "vr", "--config", r#"{"shoulderShare": -1}"#],
            &["--config: shoulderShare: -1 is not from 0 to 1"],
        ),
        (
            vec!["--mode", "vr", "--device-filter", r#"{"smoothness": -1}"#],
            &["--device-filter: smoothness: -1 is not 0 or more"],
        ),
    ];
    for (args, needles) in cases {
        let out = bridge(&[&["eval-ik", folder][..], &args].concat());
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_one_line_error(&out, needles);
    }
}

/// A humanoid of plain glTF nodes (Mixamo's names, no skin) under a node scaled by
/// `mirror`, with a one-second clip that turns the hips and swings a leg and an arm,
/// written as `NAME.gltf` and `NAME.bin` in `dir`, in metres.
fn mirrored_humanoid(dir: &Path, name: &str, mirror: [f32; 3]) -> PathBuf {
    humanoid_in_units(dir, name, mirror, 1.0)
}

/// `mirrored_humanoid` with `units` file units to a metre and no node scaling them
/// (100: the centimetres of an FBX file whose exporter dropped its unit scale).
fn humanoid_in_units(dir: &Path, name: &str, mirror: [f32; 3], units: f32) -> PathBuf {
    use glam::{Quat, Vec3};
    let mut joints: Vec<(&str, usize, Vec3)> = vec![("Hips", usize::MAX, Vec3::new(0.0, 1.0, 0.0))];
    let add =
        |name: &'static str, parent: &str, at: Vec3, joints: &mut Vec<(&str, usize, Vec3)>| {
            let p = joints.iter().position(|j| j.0 == parent).unwrap();
            joints.push((name, p, at));
        };
    for (child, parent, at) in [
        ("Spine", "Hips", Vec3::new(0.0, 0.1, 0.0)),
        ("Chest", "Spine", Vec3::new(0.0, 0.15, 0.0)),
        ("Neck", "Chest", Vec3::new(0.0, 0.25, 0.0)),
        ("Head", "Neck", Vec3::new(0.0, 0.1, 0.02)),
        ("LeftShoulder", "Chest", Vec3::new(0.05, 0.2, 0.0)),
        ("LeftArm", "LeftShoulder", Vec3::new(0.12, 0.0, 0.0)),
        ("LeftForeArm", "LeftArm", Vec3::new(0.27, 0.0, 0.0)),
        ("LeftHand", "LeftForeArm", Vec3::new(0.25, 0.0, 0.0)),
        ("RightShoulder", "Chest", Vec3::new(-0.05, 0.2, 0.0)),
        ("RightArm", "RightShoulder", Vec3::new(-0.12, 0.0, 0.0)),
        ("RightForeArm", "RightArm", Vec3::new(-0.27, 0.0, 0.0)),
        ("RightHand", "RightForeArm", Vec3::new(-0.25, 0.0, 0.0)),
        ("LeftUpLeg", "Hips", Vec3::new(0.1, -0.05, 0.0)),
        ("LeftLeg", "LeftUpLeg", Vec3::new(0.0, -0.45, 0.0)),
        ("LeftFoot", "LeftLeg", Vec3::new(0.0, -0.42, 0.0)),
        ("LeftToeBase", "LeftFoot", Vec3::new(0.0, -0.06, 0.13)),
        ("RightUpLeg", "Hips", Vec3::new(-0.1, -0.05, 0.0)),
        ("RightLeg", "RightUpLeg", Vec3::new(0.0, -0.45, 0.0)),
        ("RightFoot", "RightLeg", Vec3::new(0.0, -0.42, 0.0)),
        ("RightToeBase", "RightFoot", Vec3::new(0.0, -0.06, 0.13)),
    ] {
        add(child, parent, at, &mut joints);
    }
    // Node 0 is the mirror; joint k is node k + 1.
    let mut nodes = vec![serde_json::json!({"name": "Mirror", "scale": mirror, "children": [1]})];
    for (k, (joint, _, at)) in joints.iter().enumerate() {
        let children: Vec<usize> = (0..joints.len())
            .filter(|&c| joints[c].1 == k)
            .map(|c| c + 1)
            .collect();
        let at = *at * units;
        let mut node = serde_json::json!({"name": joint, "translation": at.to_array()});
        if !children.is_empty() {
            node["children"] = serde_json::json!(children);
        }
        nodes.push(node);
    }
    let turns = [
        ("Hips", Quat::from_rotation_y(0.5)),
        (
            "LeftArm",
            Quat::from_rotation_z(-0.9) * Quat::from_rotation_y(0.6),
        ),
        ("LeftForeArm", Quat::from_rotation_y(1.1)),
        (
            "RightUpLeg",
            Quat::from_rotation_x(-0.7) * Quat::from_rotation_z(0.2),
        ),
        ("RightLeg", Quat::from_rotation_x(0.9)),
    ];
    let mut bin: Vec<u8> = [0.0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut accessors = vec![serde_json::json!({"bufferView": 0, "componentType": 5126,
        "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]})];
    let (mut samplers, mut channels) = (Vec::new(), Vec::new());
    for (i, (joint, turn)) in turns.iter().enumerate() {
        for q in [Quat::IDENTITY, *turn] {
            bin.extend(q.to_array().iter().flat_map(|v| v.to_le_bytes()));
        }
        accessors.push(
            serde_json::json!({"bufferView": 0, "byteOffset": 8 + 32 * i,
            "componentType": 5126, "count": 2, "type": "VEC4"}),
        );
        samplers.push(serde_json::json!({"input": 0, "output": i + 1}));
        let node = 1 + joints.iter().position(|j| j.0 == *joint).unwrap();
        channels
            .push(serde_json::json!({"sampler": i, "target": {"node": node, "path": "rotation"}}));
    }
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "animations": [{"name": "swing", "samplers": samplers, "channels": channels}],
        "accessors": accessors,
        "bufferViews": [{"buffer": 0, "byteLength": bin.len()}],
        "buffers": [{"byteLength": bin.len(), "uri": format!("{name}.bin")}]
    });
    write(dir, &format!("{name}.bin"), &bin);
    write(dir, &format!("{name}.gltf"), doc.to_string().as_bytes())
}

/// A humanoid mirrored by a negative node scale (legal glTF) is the figure the scene
/// shows: its sides follow the geometry (a `Left` joint mirrored in X is the right
/// one), and its motion retargets with every limb pointing where the scene's does.
#[test]
fn a_mirrored_humanoid_is_recognized_by_its_geometry_and_retargets_unmirrored() {
    let dir = tempfile::tempdir().unwrap();
    for (name, mirror, left_arm_is) in [
        ("plain", [1.0, 1.0, 1.0], "[leftUpperArm]"),
        ("mirrored_x", [-1.0, 1.0, 1.0], "[rightUpperArm]"),
        ("mirrored_z", [1.0, 1.0, -1.0], "[rightUpperArm]"),
        ("scaled_mirror", [-0.5, 0.5, 0.5], "[rightUpperArm]"),
    ] {
        let path = mirrored_humanoid(dir.path(), name, mirror);
        let path = path.to_str().unwrap();
        let report = bridge_ok(&["inspect", path]);
        let arm = report
            .lines()
            .find(|l| l.trim_start().starts_with("LeftArm "))
            .unwrap();
        assert!(arm.ends_with(left_arm_is), "{name}: {arm}\n{report}");
        let stdout = bridge_ok(&["retarget", path, "--every", "0"]);
        let worst: f32 = stdout
            .rsplit("worst limb direction error ")
            .next()
            .and_then(|s| s.split('°').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {stdout}"));
        assert!(worst < 0.01, "{name}: {stdout}");
    }
}

/// glTF is metres, but an exporter that drops an FBX file's unit scale writes a
/// humanoid 160 units tall: it is read in centimetres, said so, and reported in
/// metres; `--units m` reads it as written.
#[test]
fn inspect_reads_a_gltf_humanoid_in_centimetres_in_metres() {
    let dir = tempfile::tempdir().unwrap();
    let path = humanoid_in_units(dir.path(), "cm", [1.0; 3], 100.0);
    let path = path.to_str().unwrap();
    let hips_height = |report: &str| -> f32 {
        report
            .lines()
            .find_map(|l| l.strip_prefix("hips height: "))
            .and_then(|l| l.split(' ').next())
            .and_then(|h| h.parse().ok())
            .unwrap_or_else(|| panic!("no hips height in:\n{report}"))
    };
    let report = bridge_ok(&["inspect", path]);
    let height = hips_height(&report);
    assert!((0.9..1.1).contains(&height), "{height} m:\n{report}");
    assert!(
        report.contains("note: units: centimetres (guessed from a 1"),
        "{report}"
    );
    let as_written = bridge_ok(&["inspect", path, "--units", "m"]);
    let height = hips_height(&as_written);
    assert!((90.0..110.0).contains(&height), "{height} m:\n{as_written}");
    assert!(!as_written.contains("note: units"), "{as_written}");
}

/// `--units` reads the source, never a `--target` model: a BVH's centimetres would
/// shrink a glTF model in metres a hundredfold.
#[test]
fn units_given_for_the_source_leave_the_target_model_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let metres = humanoid_in_units(dir.path(), "m", [1.0; 3], 1.0);
    let metres = metres.to_str().unwrap();
    let args = ["retarget", metres, "--units", "cm", "--target", metres];
    let stdout = bridge_ok(&[&args[..], &["--every", "1000"]].concat());
    // Frame 0: the target's hips stand at its own height, about 1 m.
    let hips_y: f32 = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .and_then(|l| l.split(',').nth(1))
        .and_then(|y| y.trim().parse().ok())
        .unwrap_or_else(|| panic!("no frame 0 in:\n{stdout}"));
    assert!((0.9..1.1).contains(&hips_y), "{hips_y} m:\n{stdout}");
}
