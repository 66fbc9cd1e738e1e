//! IK over the whole real-file corpus, as `eval-ik` measures it for a folder: every
//! locomotion clip (hips travelling upright, `eval::Travel`) of every humanoid under
//! ../shared/assets, found by walking the folder (a file added later joins), in VR
//! mode onto the built-in humanoid and in mocap mode onto Example.vrm with its legs
//! ×0.8, ×1.0 and ×1.2. Prints both tables and every goal missed
//! (`eval::corpus::VR_GOALS`, `MOCAP_GOALS`), and asserts the goals met on every clip
//! (hands and head on target, 6-point perturbed within 3 cm on the mean and 4 cm on
//! every clip; mocap mode's every goal: contacts, skate and toes). Every frame of every clip is
//! evaluated. And `mocap-bridge eval-ik` on a folder, as a user runs it: one table,
//! the files it left out named with the reason. Skips, with a message, without
//! ../shared/assets.

mod common;

use std::path::{Path, PathBuf};

use common::assets;
use mocap_bridge::eval::Perturbation;
use mocap_bridge::eval::corpus::{
    Candidate, LEG_SCALES, Skipped, VrSettings, locomotion_clips, mocap_failures, mocap_row,
    mocap_table, vr_failures, vr_row, vr_table,
};
use mocap_bridge::filter::DeviceFilterConfig;
use mocap_bridge::formats::inspect::map_rig;
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::ik::{MocapIkConfig, VrIkConfig};
use mocap_bridge::retarget::MappedSkeleton;

/// Every rig or clip file under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            matches!(
                e.to_ascii_lowercase().as_str(),
                "bvh" | "glb" | "gltf" | "vrm" | "vrma"
            )
        }) {
            out.push(path);
        }
    }
    out
}

/// The locomotion clips under `dir`, and what was left out and why.
fn locomotion_under(dir: &Path) -> (Vec<Candidate>, Vec<Skipped>) {
    let (mut clips, mut skipped) = (Vec::new(), Vec::new());
    for path in files_under(dir) {
        let label = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let rig = match load_rig(&path, &LoadOptions::default()) {
            Ok(rig) => rig,
            Err(e) => {
                skipped.push(Skipped {
                    label,
                    reason: format!("does not load here: {e}"),
                });
                continue;
            }
        };
        let mapped = map_rig(&label, &rig, None).map_err(|e| e.to_string());
        let (found, left_out) =
            locomotion_clips(&label, &rig, mapped.as_ref().map_err(Clone::clone), None);
        clips.extend(found);
        skipped.extend(left_out);
    }
    (clips, skipped)
}

fn load_mapped(path: &Path) -> MappedSkeleton {
    let rig = load_rig(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    map_rig(&path.display().to_string(), &rig, None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn vr_mode_meets_its_goals_on_every_locomotion_clip() {
    let Some(dir) = assets() else { return };
    let (clips, skipped) = locomotion_under(&dir);
    assert!(
        !clips.is_empty(),
        "no locomotion clip under {}",
        dir.display()
    );
    let humanoid = mocap_bridge::formats::skeleton_json::embedded_rig(
        "humanoid.json",
        mocap_bridge::skeleton::builtin::HUMANOID_JSON,
    );
    let target = map_rig("humanoid.json", &humanoid, None).unwrap();
    let config = VrIkConfig::default();
    let perturbation = Perturbation::default();
    let smoothing = DeviceFilterConfig {
        noise_m: perturbation.noise,
        rotation_noise_deg: perturbation.rotation_noise_deg,
        ..DeviceFilterConfig::default()
    };
    let settings = VrSettings {
        config: &config,
        perturbation: &perturbation,
        smoothing: &smoothing,
    };
    let rows: Vec<_> = clips
        .iter()
        .map(|c| {
            vr_row(&c.label, c.speed, &c.source, &c.motion, &target, &settings)
                .unwrap_or_else(|e| panic!("{}: {e}", c.label))
        })
        .collect();
    println!("{}", vr_table(&rows, &skipped));
    // Every goal is printed; the ones the solver meets on every clip are asserted,
    // among them the 3-point (ideal) jitter: the stepped feet no jerkier than the
    // capture's. Still missed (issue 15 stays open, docs/performance.md says why):
    // cmu_49_04's 3-point worst (a leap: head and hands do not say where the feet
    // are tucked), jitter over 1/30 s steps in every perturbed run (the filtered
    // 1 cm of device noise), and the Meredith walk's 6-point jitter (its knees).
    let failures = vr_failures(&rows);
    println!("VR goals missed:\n{}", failures.join("\n"));
    let broken: Vec<&String> = failures
        .iter()
        .filter(|f| {
            f.contains("off target")
                || f.contains("6-point perturbed MPJPE")
                || f.starts_with("mean 3-point")
                || f.contains(" 3-point: jitter")
        })
        .collect();
    assert!(broken.is_empty(), "{broken:?}");
}

#[test]
fn mocap_mode_meets_its_goals_on_every_locomotion_clip_onto_example_vrm() {
    let Some(dir) = assets() else { return };
    let (clips, skipped) = locomotion_under(&dir);
    assert!(
        !clips.is_empty(),
        "no locomotion clip under {}",
        dir.display()
    );
    let target = load_mapped(&dir.join("vrm/Example.vrm"));
    let config = MocapIkConfig::default();
    let rows: Vec<_> = clips
        .iter()
        .map(|c| {
            mocap_row(
                &c.label,
                c.speed,
                (&c.source, &c.motion),
                &target,
                &LEG_SCALES,
                &config,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", c.label))
        })
        .collect();
    println!("{}", mocap_table(&rows, &skipped));
    // Every goal, on every clip and leg scale: contacts, skate and toes.
    let failures = mocap_failures(&rows);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn eval_ik_on_a_folder_prints_one_table_and_names_what_it_left_out() {
    let Some(dir) = assets() else { return };
    let bvh = dir.join("bvh");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["eval-ik", "--mode", "vr"])
        .arg(&bvh)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("cmu_12_01_walk.bvh") && stdout.contains("mean of"),
        "{stdout}"
    );
    assert!(stdout.contains("walk1.bvh: not locomotion"), "{stdout}");
    assert!(
        stdout.contains("fairmotion_sinusoidal_4joint.bvh: not a humanoid"),
        "{stdout}"
    );
    assert!(stdout.contains("goals:"), "{stdout}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(["eval-ik", "--legs", "0"])
        .arg(&bvh)
        .args(["--target", "nothere.vrm"])
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--legs 0: not a positive number"));
}
