//! The real-file corpus as a measuring stick: every file under `../shared/assets`
//! (walked, not listed here, so a file added later is picked up) is run through the
//! real `mocap-bridge` binary and compared with a hand-checked expectation kept in
//! `tests/corpus/<folder>/<file>.json` (how each was checked: `tests/corpus/README.md`).
//!
//! Per file one line: whether it loads (or the one-line reason it must not), whether
//! it is a humanoid (expected either way), its bone map against the expected one
//! (`inspect --write-map`), its rest-pose class (`inspect`'s `rest pose:` line), and
//! for files with clips, every clip through `convert --all-clips` into a `.vrma` that
//! the Khronos glTF validator passes with 0 errors and 0 warnings and
//! @pixiv/three-vrm-animation loads (`tests/interop/*.mjs`, one node run each over
//! all outputs). Totals at the end are asserted against the goals of issue 15.
//!
//! Skips with a message when the corpus is absent; needs Node.js and npm otherwise
//! (as `tests/interop.rs`). `MOCAP_BRIDGE_EXPECTED` points at another folder of
//! expectations (for another copy of the corpus named by `MOCAP_BRIDGE_ASSETS`).
//! Run with `-- --nocapture` to see the lines of a passing run.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Files a rig can be read from; anything else in the corpus is a companion file.
const RIG_EXTENSIONS: [&str; 5] = ["bvh", "glb", "gltf", "vrm", "vrma"];

/// The bones VRM 1.0 requires of every humanoid.
const REQUIRED: [&str; 15] = [
    "hips",
    "spine",
    "head",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
];

/// Goal: share of every expected bone found right, over all humanoids.
const ALL_BONES_GOAL: f64 = 0.98;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-bridge");

/// What a file is expected to be (one `tests/corpus/<folder>/<file>.json`).
struct Expected {
    /// `false` for an invalid file: refused with one line naming it, exit 2.
    loads: bool,
    /// `Some(true)` humanoid, `Some(false)` a negative that must be refused.
    humanoid: Option<bool>,
    /// Accepted rest classes as `inspect` names them (`T-pose`, `A-pose`, ...).
    rest: Vec<String>,
    /// VRM bone -> accepted joints; `None` among them: the bone may be left out.
    map: BTreeMap<String, Vec<Option<String>>>,
    /// Refusals accepted instead of the map (rigs that cannot satisfy VRM's
    /// required bones): each group lists words (joints, bones) that the refusal
    /// must all name; empty: a refusal is wrong.
    or_refused_naming: Vec<Vec<String>>,
    /// Animations in the file: `convert --all-clips` must write this many.
    clips: usize,
}

/// A string or a list of strings/nulls, as `Vec<Option<String>>`.
fn alternatives(v: &Value) -> Result<Vec<Option<String>>, String> {
    match v {
        Value::String(s) => Ok(vec![Some(s.clone())]),
        Value::Null => Ok(vec![None]),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(Some(s.clone())),
                Value::Null => Ok(None),
                other => Err(format!("{other} is neither a joint name nor null")),
            })
            .collect(),
        other => Err(format!("{other} is neither a joint name nor a list")),
    }
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    Ok(alternatives(v)?.into_iter().flatten().collect())
}

/// `["a", "b"]` (one group) or `[["a", "b"], ["c"]]` (any one group).
fn refusal_groups(v: &Value) -> Result<Vec<Vec<String>>, String> {
    match v {
        Value::Null => Ok(vec![]),
        Value::Array(items) if items.iter().all(Value::is_array) => {
            items.iter().map(strings).collect()
        }
        other => Ok(vec![strings(other)?]),
    }
}

impl Expected {
    fn read(path: &Path) -> Result<Expected, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{e}"))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{e}"))?;
        let known = [
            "loads",
            "humanoid",
            "rest",
            "map",
            "orRefusedNaming",
            "clips",
            "why",
            "notes",
        ];
        if let Some(key) = v
            .as_object()
            .ok_or("not a JSON object")?
            .keys()
            .find(|k| !known.contains(&k.as_str()))
        {
            return Err(format!("unknown key `{key}`"));
        }
        let loads = v["loads"].as_bool().unwrap_or(true);
        let humanoid = v["humanoid"].as_bool();
        if loads && humanoid.is_none() {
            return Err("`humanoid` (true or false) is missing".into());
        }
        let mut map = BTreeMap::new();
        if let Some(m) = v["map"].as_object() {
            for (bone, joints) in m {
                if bone.parse::<mocap_bridge::humanoid::HumanBone>().is_err() {
                    return Err(format!("map: `{bone}` is not a VRM 1.0 humanoid bone"));
                }
                map.insert(
                    bone.clone(),
                    alternatives(joints).map_err(|e| format!("map.{bone}: {e}"))?,
                );
            }
        }
        if humanoid == Some(true) {
            if let Some(bone) = REQUIRED.iter().find(|b| !map.contains_key(**b)) {
                return Err(format!("humanoid without the required `{bone}` in map"));
            }
            if v["rest"].is_null() {
                return Err("humanoid without `rest`".into());
            }
        }
        Ok(Expected {
            loads,
            humanoid,
            rest: if v["rest"].is_null() {
                vec![]
            } else {
                strings(&v["rest"]).map_err(|e| format!("rest: {e}"))?
            },
            map,
            or_refused_naming: refusal_groups(&v["orRefusedNaming"])
                .map_err(|e| format!("orRefusedNaming: {e}"))?,
            clips: v["clips"].as_u64().unwrap_or(0) as usize,
        })
    }
}

/// The bone counts one humanoid adds to the totals.
#[derive(Default, Clone, Copy)]
struct Bones {
    required: usize,
    required_right: usize,
    /// Expected bones plus bones mapped that should not be.
    all: usize,
    all_right: usize,
}

/// What one file gave, and the line printed for it.
struct Outcome {
    file: String,
    line: String,
    failures: Vec<String>,
    expected: Option<Expected>,
    loaded: bool,
    refused: bool,
    bones: Option<Bones>,
    /// The `.vrma` files `convert` wrote for its clips.
    outputs: Vec<PathBuf>,
}

fn run(args: &[OsString]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `error:` lines of a run's stderr.
fn error_lines(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_owned)
        .collect()
}

/// Checks that a run refused `path` as a program should: exit 2, one `error:` line
/// naming the file, no panic. Returns that line.
fn one_line_refusal(out: &Output, path: &Path, what: &str) -> Result<String, String> {
    let stderr = text(&out.stderr);
    if stderr.contains("panicked") {
        return Err(format!("{what} panicked: {}", stderr.trim()));
    }
    if out.status.code() != Some(2) {
        return Err(format!("{what} exited with {} (want 2)", out.status));
    }
    let lines = error_lines(out);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match lines.as_slice() {
        [line] if line.contains(&name) => Ok(line.clone()),
        [line] => Err(format!(
            "{what}: the error line does not name {name}: {line}"
        )),
        _ => Err(format!(
            "{what}: {} error lines (want 1): {}",
            lines.len(),
            stderr.trim()
        )),
    }
}

/// The joint names of `inspect`'s tree (`joints (N):`, one indented name a line,
/// then `  [bone]` when mapped).
fn joint_names(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("joints ("))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().split("  [").next().unwrap_or_default().to_owned())
        .collect()
}

/// The class in `inspect`'s `rest pose: <class> (...)` line.
fn rest_class(stdout: &str) -> Option<String> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("rest pose: "))?;
    Some(line.split(" (").next().unwrap_or(line).trim().to_owned())
}

/// Compares the map `inspect` used with the expected one; adds a failure per bone
/// wrong, missing or mapped when it should not be.
fn compare_maps(
    expected: &Expected,
    got: &BTreeMap<String, String>,
    failures: &mut Vec<String>,
) -> Bones {
    let mut bones = Bones::default();
    let show = |alts: &[Option<String>]| {
        alts.iter()
            .map(|a| {
                a.as_deref()
                    .map_or("(none)".to_owned(), |j| format!("`{j}`"))
            })
            .collect::<Vec<_>>()
            .join(" or ")
    };
    for (bone, alts) in &expected.map {
        let actual = got.get(bone);
        let right = alts.iter().any(|a| a.as_ref() == actual);
        if alts.iter().all(Option::is_none) {
            // A joint that must stay unmapped counts only when it was mapped.
            if let Some(joint) = actual {
                bones.all += 1;
                failures.push(format!("{bone}: got `{joint}`, want (none)"));
            }
            continue;
        }
        let required = REQUIRED.contains(&bone.as_str());
        bones.all += 1;
        bones.all_right += usize::from(right);
        bones.required += usize::from(required);
        bones.required_right += usize::from(required && right);
        if !right {
            let actual = actual.map_or("nothing".to_owned(), |j| format!("`{j}`"));
            failures.push(format!("{bone}: got {actual}, want {}", show(alts)));
        }
    }
    for (bone, joint) in got {
        if !expected.map.contains_key(bone) {
            bones.all += 1;
            failures.push(format!("{bone}: got `{joint}`, want (none)"));
        }
    }
    bones
}

/// Runs `convert --all-clips` into its own folder under `scratch` (named after
/// `rel`, the file's path in the corpus: two `scene.gltf` get two folders, as
/// `convert` refuses to overwrite a clip); returns the outputs written, which
/// must be `expected` (none: `convert` must say the file has no animation).
fn convert_clips(
    path: &Path,
    rel: &str,
    scratch: &Path,
    expected: usize,
) -> Result<Vec<PathBuf>, String> {
    let dir = scratch.join(rel.replace('/', "__"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = run(&[
        "convert".into(),
        path.into(),
        "--all-clips".into(),
        "-o".into(),
        dir.join("clip.vrma").into(),
    ]);
    if expected == 0 {
        // No clips: `convert` must say so (and write nothing), or the
        // expectation missed some.
        let stderr = text(&out.stderr);
        return if out.status.code() == Some(2) && stderr.contains("no animation") {
            Ok(vec![])
        } else {
            Err(format!(
                "the expectation lists no clips, convert said ({}): {}",
                out.status,
                stderr.trim()
            ))
        };
    }
    if !out.status.success() {
        return Err(format!(
            "convert failed ({}): {}",
            out.status,
            text(&out.stderr).trim()
        ));
    }
    let mut outputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "vrma"))
        .collect();
    outputs.sort();
    if outputs.len() != expected {
        return Err(format!(
            "convert wrote {} clips, the file has {expected}",
            outputs.len()
        ));
    }
    Ok(outputs)
}

/// Checks one rig file against its expectation.
fn check_file(path: &Path, rel: &str, expected_dir: &Path, scratch: &Path) -> Outcome {
    let mut outcome = Outcome {
        file: rel.to_owned(),
        line: String::new(),
        failures: vec![],
        expected: None,
        loaded: false,
        refused: false,
        bones: None,
        outputs: vec![],
    };
    let expected_path = expected_dir.join(format!("{rel}.json"));
    let expected = match Expected::read(&expected_path) {
        Ok(e) => e,
        Err(e) => {
            outcome.line = "no expectation".into();
            outcome.failures.push(format!(
                "{}: {e} (every rig file needs one, humanoid or not: see tests/corpus/README.md)",
                expected_path.display()
            ));
            return outcome;
        }
    };
    let map_out = scratch.join(format!("{}.map.json", rel.replace('/', "__")));
    let inspect = run(&[
        "inspect".into(),
        path.into(),
        "--write-map".into(),
        map_out.clone().into(),
    ]);
    let stdout = text(&inspect.stdout);
    let stderr = text(&inspect.stderr);
    // A file that loaded has its joint tree printed (a refusal as a humanoid comes
    // after it), or `inspect` succeeded.
    outcome.loaded = stdout.lines().any(|l| l.starts_with("joints (")) || inspect.status.success();
    let mut line = String::new();

    if !expected.loads {
        let mut reasons = vec![one_line_refusal(&inspect, path, "inspect")];
        if path.extension().is_some_and(|e| e == "vrma") {
            // `convert` reads a .vrma through the clip loader: it must refuse it too.
            let dir = scratch.join("refused");
            let _ = std::fs::create_dir_all(&dir);
            let convert = run(&[
                "convert".into(),
                path.into(),
                "-o".into(),
                dir.join("out.vrma").into(),
            ]);
            reasons.push(one_line_refusal(&convert, path, "convert"));
        }
        let mut said = vec![];
        for r in reasons {
            match r {
                Ok(l) => said.push(l),
                Err(e) => outcome.failures.push(e),
            }
        }
        if outcome.loaded {
            outcome.failures.push("loaded an invalid file".into());
        }
        outcome.refused = outcome.failures.is_empty();
        outcome.line = format!("invalid, refused: {}", said.join(" | "));
        outcome.expected = Some(expected);
        return outcome;
    }

    let errors = error_lines(&inspect);
    let reason = errors
        .first()
        .cloned()
        .unwrap_or_else(|| stderr.trim().to_owned());
    if stderr.contains("panicked") {
        outcome
            .failures
            .push(format!("inspect panicked: {}", stderr.trim()));
    }
    // `inspect` reads a .vrma only once the loaders take it; until then the file
    // still counts as loaded when `convert` (the clip loader) reads it below.
    let vrma = path.extension().is_some_and(|e| e == "vrma");
    if outcome.loaded {
        line.push_str("loads");
    } else if vrma {
        outcome
            .failures
            .push(format!("inspect does not read it: {reason}"));
        line.push_str("inspect does not read it");
    } else {
        outcome.failures.push(format!("does not load: {reason}"));
        line.push_str("DOES NOT LOAD");
    }

    let got_map: Option<BTreeMap<String, String>> = if inspect.status.success() {
        std::fs::read(&map_out)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
    } else {
        None
    };
    match (expected.humanoid, &got_map) {
        (Some(false), None) => {
            outcome.refused = outcome.loaded;
            let _ = write!(line, "; not a humanoid, refused: {reason}");
        }
        (Some(false), Some(m)) => {
            let _ = write!(line, "; not a humanoid, but mapped ({} bones)", m.len());
            outcome.failures.push(format!(
                "a non-humanoid was taken for a humanoid ({} bones mapped)",
                m.len()
            ));
        }
        (_, None) if outcome.loaded => {
            let named = expected
                .or_refused_naming
                .iter()
                .find(|group| group.iter().all(|w| reason.contains(w.as_str())));
            if let Some(group) = named {
                outcome.refused = true;
                let _ = write!(
                    line,
                    "; humanoid that VRM cannot hold, refused naming {}: {reason}",
                    group.join(", ")
                );
            } else {
                let _ = write!(line, "; humanoid REFUSED: {reason}");
                outcome
                    .failures
                    .push(format!("a humanoid was refused: {reason}"));
            }
        }
        (_, None) => {}
        (_, Some(m)) => {
            let mut wrong = vec![];
            // A joint the expectation names must exist: a typo there would
            // otherwise read as a recognition error forever.
            let joints = joint_names(&stdout);
            for joint in expected.map.values().flatten().flatten() {
                if !joints.is_empty() && !joints.contains(joint) {
                    outcome.failures.push(format!(
                        "the expectation names `{joint}`, which is not a joint of the file"
                    ));
                }
            }
            let bones = compare_maps(&expected, m, &mut wrong);
            let _ = write!(
                line,
                "; humanoid, bones {}/{} right (required {}/{})",
                bones.all_right, bones.all, bones.required_right, bones.required
            );
            if !wrong.is_empty() {
                outcome
                    .failures
                    .push(format!("bones: {}", wrong.join("; ")));
            }
            outcome.bones = Some(bones);
            match rest_class(&stdout) {
                Some(class) if expected.rest.contains(&class) => {
                    let _ = write!(line, "; rest {class}");
                }
                Some(class) => {
                    let _ = write!(line, "; rest {class} (want {})", expected.rest.join(" or "));
                    outcome.failures.push(format!(
                        "rest pose {class}, want {}",
                        expected.rest.join(" or ")
                    ));
                }
                None => {
                    line.push_str("; no rest pose printed");
                    outcome
                        .failures
                        .push("inspect printed no `rest pose:` line".into());
                }
            }
        }
    }

    let mapped = got_map.is_some();
    if expected.clips > 0 && expected.humanoid == Some(true) && !mapped && !vrma {
        // Refused, rightly or not (said above): `convert` would refuse it the same way.
        line.push_str("; clips not converted (no bone map)");
    } else if expected.humanoid == Some(true) && (mapped || vrma) {
        match convert_clips(path, rel, scratch, expected.clips) {
            Ok(outputs) => {
                if vrma && !outcome.loaded {
                    outcome.loaded = true;
                    line.push_str("; loads through convert");
                }
                if outputs.is_empty() {
                    line.push_str("; no clips (convert agrees)");
                }
                outcome.outputs = outputs;
            }
            Err(e) => {
                let _ = write!(line, "; clips: {e}");
                outcome.failures.push(e);
            }
        }
    }
    outcome.line = line;
    outcome.expected = Some(expected);
    outcome
}

/// Files a `.gltf` names by URI (its buffers and images): companions, not rigs.
fn gltf_companions(gltf: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(gltf) else {
        return vec![];
    };
    let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
        return vec![];
    };
    let dir = gltf.parent().unwrap_or(Path::new("."));
    ["buffers", "images"]
        .iter()
        .filter_map(|k| doc[*k].as_array())
        .flatten()
        .filter_map(|item| item["uri"].as_str())
        .filter(|uri| !uri.starts_with("data:"))
        .map(|uri| dir.join(uri))
        .collect()
}

/// Every file under `dir`, sorted.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
    files.sort();
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Adds the validator's and three-vrm-animation's verdicts on each output to the
/// outcome that wrote it.
fn check_outputs(outcomes: &mut [Outcome]) {
    let all: Vec<OsString> = outcomes
        .iter()
        .flat_map(|o| o.outputs.iter().map(|p| p.as_os_str().to_owned()))
        .collect();
    if all.is_empty() {
        return;
    }
    let dir = common::node::install("tests/interop")
        .unwrap_or_else(|e| panic!("interop harness not ready: {e}"));
    let validated =
        common::node::run_json(&dir.join("validate.mjs"), &all).unwrap_or_else(|e| panic!("{e}"));
    let dumped =
        common::node::run_json(&dir.join("dump_vrma.mjs"), &all).unwrap_or_else(|e| panic!("{e}"));
    let by_path = |v: &Value| -> BTreeMap<String, Value> {
        v["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| Some((f["path"].as_str()?.to_owned(), f.clone())))
            .collect()
    };
    let validated = by_path(&validated);
    let dumped = by_path(&dumped);
    for outcome in outcomes.iter_mut() {
        if outcome.outputs.is_empty() {
            continue;
        }
        let mut bad = vec![];
        for output in &outcome.outputs {
            let key = output.to_string_lossy().into_owned();
            let clip = output
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            match validated.get(&key) {
                None => bad.push(format!("{clip}: the validator gave no report")),
                Some(v) if v.get("error").is_some() => {
                    bad.push(format!("{clip}: the validator failed: {}", v["error"]));
                }
                Some(v) => {
                    let (errors, warnings) = (&v["numErrors"], &v["numWarnings"]);
                    if errors != 0 || warnings != 0 {
                        let first: Vec<String> = v["messages"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|m| m["severity"].as_u64().is_some_and(|s| s <= 1))
                            .take(3)
                            .map(|m| format!("{} at {}", m["code"], m["pointer"]))
                            .collect();
                        bad.push(format!(
                            "{clip}: validator {errors} errors, {warnings} warnings ({})",
                            first.join(", ")
                        ));
                    }
                }
            }
            match dumped.get(&key) {
                None => bad.push(format!("{clip}: three-vrm-animation gave no report")),
                Some(d) if d.get("error").is_some() => bad.push(format!(
                    "{clip}: three-vrm-animation does not load it: {}",
                    d["error"]
                        .as_str()
                        .unwrap_or_default()
                        .lines()
                        .next()
                        .unwrap_or_default()
                )),
                Some(_) => {}
            }
        }
        let n = outcome.outputs.len();
        let clips = if n == 1 { "clip" } else { "clips" };
        if bad.is_empty() {
            let _ = write!(
                outcome.line,
                "; {n} {clips} -> .vrma: validator 0 errors 0 warnings, three-vrm-animation loads"
            );
        } else {
            let _ = write!(
                outcome.line,
                "; {n} {clips} -> .vrma: {} problems",
                bad.len()
            );
            outcome.failures.push(format!("clips: {}", bad.join("; ")));
        }
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

#[test]
fn every_file_of_the_corpus_meets_its_hand_checked_expectation() {
    let Some(assets) = common::assets() else {
        return;
    };
    let expected_dir = std::env::var_os("MOCAP_BRIDGE_EXPECTED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"),
        PathBuf::from,
    );
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let mut files = vec![];
    walk(&assets, &mut files);
    let companions: BTreeSet<PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "gltf"))
        .flat_map(|p| gltf_companions(p))
        .filter_map(|p| p.canonicalize().ok())
        .collect();

    let mut outcomes = vec![];
    for path in &files {
        let rel = relative(path, &assets);
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if !RIG_EXTENSIONS.contains(&ext.as_str()) {
            let why = if path.canonicalize().is_ok_and(|p| companions.contains(&p)) {
                "named by a .gltf's buffers or images".to_owned()
            } else {
                format!("extension `{ext}` is not a rig format")
            };
            println!("{rel}: not a rig ({why})");
            continue;
        }
        outcomes.push(check_file(path, &rel, &expected_dir, scratch.path()));
    }
    check_outputs(&mut outcomes);

    let mut failed = vec![];
    for o in &outcomes {
        let verdict = if o.failures.is_empty() { "ok" } else { "FAIL" };
        println!("{verdict:4} {}: {}", o.file, o.line);
        if !o.failures.is_empty() {
            failed.push(format!("{}: {}", o.file, o.failures.join(" | ")));
        }
    }
    // Expectations whose file is not in this copy of the corpus.
    let mut expectation_files = vec![];
    walk(&expected_dir, &mut expectation_files);
    let lacking: Vec<String> = expectation_files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|e| {
            relative(e, &expected_dir)
                .trim_end_matches(".json")
                .to_owned()
        })
        .filter(|asset| !assets.join(asset).is_file())
        .collect();
    if !lacking.is_empty() {
        println!(
            "note: this corpus lacks {} files that have expectations: {}",
            lacking.len(),
            lacking.join(", ")
        );
    }

    let humanoids: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| {
            o.expected
                .as_ref()
                .is_some_and(|e| e.loads && e.humanoid == Some(true))
        })
        .collect();
    let cannot_hold = humanoids.iter().filter(|o| o.refused).count();
    let bones = humanoids
        .iter()
        .filter(|o| !o.refused)
        .fold(Bones::default(), |t, o| {
            // A humanoid refused wrongly or unloaded found none of its bones.
            let b = o.bones.unwrap_or_else(|| Bones {
                required: REQUIRED.len(),
                all: o.expected.as_ref().map_or(0, |e| {
                    e.map
                        .values()
                        .filter(|alts| alts.iter().any(Option::is_some))
                        .count()
                }),
                ..Bones::default()
            });
            Bones {
                required: t.required + b.required,
                required_right: t.required_right + b.required_right,
                all: t.all + b.all,
                all_right: t.all_right + b.all_right,
            }
        });
    let negatives: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| {
            o.expected
                .as_ref()
                .is_some_and(|e| e.loads && e.humanoid == Some(false))
        })
        .collect();
    let negatives_refused = negatives.iter().filter(|o| o.refused).count();
    let invalid: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.expected.as_ref().is_some_and(|e| !e.loads))
        .collect();
    let invalid_refused = invalid.iter().filter(|o| o.refused).count();
    let valid: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.expected.as_ref().is_some_and(|e| e.loads))
        .collect();
    let loaded = valid.iter().filter(|o| o.loaded).count();
    let clips: usize = outcomes.iter().map(|o| o.outputs.len()).sum();

    let required_pct = percent(bones.required_right, bones.required);
    let all_pct = percent(bones.all_right, bones.all);
    println!(
        "totals: {} rig files, {} as expected",
        outcomes.len(),
        outcomes.len() - failed.len()
    );
    println!(
        "  required VRM bones found right: {}/{} = {required_pct:.1}% (goal 100%) over {} humanoids{}",
        bones.required_right,
        bones.required,
        humanoids.len() - cannot_hold,
        if cannot_hold > 0 {
            format!(" ({cannot_hold} more refused as VRM cannot hold them, naming why)")
        } else {
            String::new()
        }
    );
    println!(
        "  all expected bones found right: {}/{} = {all_pct:.1}% (goal >= {:.0}%)",
        bones.all_right,
        bones.all,
        100.0 * ALL_BONES_GOAL
    );
    println!(
        "  negatives refused: {negatives_refused}/{}",
        negatives.len()
    );
    println!(
        "  invalid files refused in one line: {invalid_refused}/{}",
        invalid.len()
    );
    println!("  valid files loaded: {loaded}/{}", valid.len());
    println!("  clips converted and checked by node: {clips}");

    let mut goals = vec![];
    if bones.required_right != bones.required {
        goals.push(format!("required bones {required_pct:.1}% < 100%"));
    }
    if all_pct < 100.0 * ALL_BONES_GOAL {
        goals.push(format!(
            "all bones {all_pct:.1}% < {:.0}%",
            100.0 * ALL_BONES_GOAL
        ));
    }
    if negatives_refused != negatives.len() {
        goals.push(format!(
            "negatives refused {negatives_refused}/{}",
            negatives.len()
        ));
    }
    if invalid_refused != invalid.len() {
        goals.push(format!(
            "invalid refused {invalid_refused}/{}",
            invalid.len()
        ));
    }
    if loaded != valid.len() {
        goals.push(format!("valid files loaded {loaded}/{}", valid.len()));
    }
    assert!(
        failed.is_empty() && goals.is_empty(),
        "{} of {} corpus files do not meet their expectation{}:\n  {}\ngoals missed: {}",
        failed.len(),
        outcomes.len(),
        " (tests/corpus/README.md says how each was checked)",
        failed.join("\n  "),
        if goals.is_empty() {
            "none".to_owned()
        } else {
            goals.join(", ")
        }
    );
}
