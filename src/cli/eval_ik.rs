//! `eval-ik`: IK measured on a real capture.
//!
//! One file: the detailed numbers below. Several files or a folder (walked, every
//! `.bvh`, `.glb`, `.gltf`, `.vrm` and `.vrma` in it): every locomotion clip
//! (`eval::Travel`) of every humanoid among them as one table (`eval::corpus`), a row
//! per clip and a mean row, the clips left out with the reason, and the goals met
//! or missed.
//!
//! `--mode mocap` (default): retargets a clip onto a model whose legs are scaled,
//! rotation only and with mocap-mode IK, and prints foot skate during contact, the
//! lowest foot heights and the hips lowering for each scale.
//!
//! `--mode vr`: retargets the clip onto the model (default: the built-in humanoid) as
//! ground truth, synthesizes headset, controllers (and hips and feet trackers) from
//! it, solves VR mode and prints AGRoL-style numbers for 3-point and 6-point input,
//! ideal and perturbed.

use std::path::{Path, PathBuf};

use mocap_bridge::bridge::config::Ranges;
use mocap_bridge::eval::corpus::{
    Skipped, VrSettings, locomotion_clips, mocap_row, mocap_table, vr_row, vr_table,
};
use mocap_bridge::eval::{
    Perturbation, VrDevices, VrReport, evaluate_mocap, evaluate_vr, scale_legs,
};
use mocap_bridge::filter::DeviceFilterConfig;
use mocap_bridge::formats;
use mocap_bridge::formats::vrma;
use mocap_bridge::ik::{MocapIkConfig, VrIkConfig};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::takes::load::reads_as_vrma;

use super::{CliResult, RigArgs, load_options, target_load_options};
use mocap_bridge::formats::inspect::{explicit_map, map_rig};

/// Options of `eval-ik`.
#[derive(clap::Args)]
pub struct EvalIkArgs {
    /// The capture (.bvh, or a glTF/VRM clip), e.g.
    /// ../shared/assets/bvh/cmu_12_01_walk.bvh; several files or folders measure
    /// every locomotion clip in them as one table.
    #[arg(required = true, num_args = 1..)]
    pub sources: Vec<PathBuf>,
    /// Which IK to measure.
    #[arg(long, value_enum, default_value = "mocap")]
    pub mode: EvalMode,
    /// The model to retarget onto, e.g. ../shared/assets/vrm/Example.vrm (required
    /// for `--mode mocap`; `--mode vr` defaults to the built-in humanoid).
    #[arg(long, value_name = "MODEL")]
    pub target: Option<PathBuf>,
    /// Bone map for the target (default: its own, else the catalog's, else recognized).
    #[arg(long, value_name = "MAP")]
    pub target_map: Option<PathBuf>,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Which animation of the source, by name or index (default: the first); with
    /// several files or a folder, only the clips of that name (default: every clip).
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// Leg lengths to try, as factors of the model's.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1.2,1.0,0.8",
        value_name = "F,F,..."
    )]
    pub legs: Vec<f32>,
    /// Mocap-mode (or with `--mode vr`, VR-mode: `{"spineShare": 0.5}`) settings as
    /// JSON (`{"contactSpeed": 0.4}`); defaults otherwise.
    #[arg(long, value_name = "JSON")]
    pub config: Option<String>,
    /// With `--mode vr`: device filter settings for the perturbed runs as JSON
    /// (`{"smoothness": 1600}`); `noiseM` and `rotationNoiseDeg` default to the
    /// perturbation's noise.
    #[arg(long, value_name = "JSON")]
    pub device_filter: Option<String>,
    /// With `--mode vr`: seed of the perturbed runs' noise.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// With `--mode vr`: RMS noise of the perturbed runs' device positions, cm per
    /// axis (default 1).
    #[arg(long, value_name = "CM")]
    pub noise: Option<f32>,
    /// With `--mode vr`: RMS noise of the perturbed runs' device rotations, degrees
    /// about each axis (default 0).
    #[arg(long, value_name = "DEG")]
    pub rotation_noise: Option<f32>,
}

/// A noise level given on the command line: finite and not negative.
fn noise_level(flag: &str, v: f32) -> CliResult<f32> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{flag} {v}: not a noise level (0 or more)").into())
    }
}

pub fn run(args: EvalIkArgs) -> CliResult<()> {
    if let Some(factor) = args.legs.iter().find(|f| !(f.is_finite() && **f > 0.0)) {
        return Err(format!("--legs {factor}: not a positive number").into());
    }
    // The settings are checked before any file is read.
    if args.mode == EvalMode::Vr {
        vr_settings(&args)?;
    } else {
        mocap_config(&args)?;
    }
    match args.sources.as_slice() {
        [one] if !one.is_dir() => run_one(one, &args),
        _ => run_table(&args),
    }
}

/// The target model of `args`, labelled (the built-in humanoid by default in VR
/// mode).
fn load_target(args: &EvalIkArgs) -> CliResult<(String, MappedSkeleton)> {
    match &args.target {
        Some(path) => {
            let label = path.display().to_string();
            let target_rig = formats::load_rig(path, &target_load_options(&args.rig))?;
            let target = map_rig(
                &label,
                &target_rig,
                explicit_map(args.target_map.as_deref())?,
            )?;
            Ok((label, target))
        }
        None if args.mode == EvalMode::Vr => {
            let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
                "humanoid.json",
                mocap_bridge::skeleton::builtin::HUMANOID_JSON,
            );
            Ok((
                "built-in humanoid".to_owned(),
                map_rig("humanoid.json", &rig, None)?,
            ))
        }
        None => Err("--mode mocap needs --target MODEL".into()),
    }
}

/// The files under `paths`: files as given, folders walked (sorted, the rig and
/// clip extensions only).
fn collect_files(paths: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> CliResult<()> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read folder {}: {e}", dir.display()))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, out)?;
            } else if has_clip_extension(&path) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Whether a folder's file may hold clips eval-ik measures.
fn has_clip_extension(path: &Path) -> bool {
    matches!(
        formats::file_type(path).as_deref(),
        Some("bvh" | "glb" | "gltf" | "vrm" | "vrma")
    )
}

/// Every locomotion clip of every humanoid under `args.sources` as one table.
fn run_table(args: &EvalIkArgs) -> CliResult<()> {
    let (target_label, target) = load_target(args)?;
    let files = collect_files(&args.sources)?;
    let mut skipped = Vec::new();
    let mut clips = Vec::new();
    let skip = |skipped: &mut Vec<Skipped>, label: String, reason: String| {
        skipped.push(Skipped { label, reason });
    };
    for path in &files {
        let label = path.display().to_string();
        if reads_as_vrma(path) {
            // Read it all the same: a file that is broken says so, not that it is an
            // animation it could not be shown to be.
            let reason = match vrma::load(path, None) {
                Ok(_) | Err(vrma::VrmaError::NoAnimation { .. }) => VRMA_NOT_MEASURED.into(),
                Err(e) => format!("does not load: {e}"),
            };
            skip(&mut skipped, label, reason);
            continue;
        }
        let rig = match formats::load_rig(path, &load_options(&args.rig)) {
            Ok(rig) => rig,
            Err(e) => {
                skip(&mut skipped, label, format!("does not load: {e}"));
                continue;
            }
        };
        let mapped = map_rig(&label, &rig, explicit_map(args.rig.map.as_deref())?)
            .map_err(|e| e.to_string());
        let (found, left_out) = locomotion_clips(
            &label,
            &rig,
            mapped.as_ref().map_err(Clone::clone),
            args.clip.as_deref(),
        );
        clips.extend(found);
        skipped.extend(left_out);
    }
    println!(
        "{} files, {} locomotion clips -> {target_label}, {} mode",
        files.len(),
        clips.len(),
        if args.mode == EvalMode::Vr {
            "VR"
        } else {
            "mocap"
        },
    );
    if args.mode == EvalMode::Vr {
        let (config, perturbation, smoothing) = vr_settings(args)?;
        let settings = VrSettings {
            config: &config,
            perturbation: &perturbation,
            smoothing: &smoothing,
        };
        let mut rows = Vec::with_capacity(clips.len());
        for c in &clips {
            match vr_row(&c.label, c.speed, &c.source, &c.motion, &target, &settings) {
                Ok(row) => rows.push(row),
                Err(e) => skip(
                    &mut skipped,
                    c.label.clone(),
                    format!("cannot evaluate: {e}"),
                ),
            }
        }
        print!("{}", vr_table(&rows, &skipped));
        nothing_measured(rows.is_empty(), files.len())?;
    } else {
        let config = mocap_config(args)?;
        let mut rows = Vec::with_capacity(clips.len());
        for c in &clips {
            let clip = (&c.source, &c.motion);
            match mocap_row(&c.label, c.speed, clip, &target, &args.legs, &config) {
                Ok(row) => rows.push(row),
                Err(e) => skip(
                    &mut skipped,
                    c.label.clone(),
                    format!("cannot evaluate: {e}"),
                ),
            }
        }
        print!("{}", mocap_table(&rows, &skipped));
        nothing_measured(rows.is_empty(), files.len())?;
    }
    Ok(())
}

/// A table with no clip measured is an error: there is nothing to judge the
/// goals on.
fn nothing_measured(empty: bool, files: usize) -> CliResult<()> {
    if empty {
        return Err(format!(
            "no clip measured: {files} files, no locomotion clip among them (see above why)"
        )
        .into());
    }
    Ok(())
}

/// `--config` as mocap-mode settings.
fn mocap_config(args: &EvalIkArgs) -> CliResult<MocapIkConfig> {
    match &args.config {
        Some(json) => settings("--config", json),
        None => Ok(MocapIkConfig::default()),
    }
}

/// Settings given as JSON on the command line (`flag`), held to the ranges a
/// configuration file's are (`Ranges`); an error names the flag and the key.
fn settings<T: serde::de::DeserializeOwned + Ranges>(flag: &str, json: &str) -> CliResult<T> {
    let value: T = serde_json::from_str(json).map_err(|e| format!("{flag}: {e}"))?;
    value.check_ranges().map_err(|e| format!("{flag}: {e}"))?;
    Ok(value)
}

/// Why a `.vrma` is measured in no mode.
const VRMA_NOT_MEASURED: &str =
    "a VRM animation: normalized poses with no source rig to measure from";

/// One file: the detailed report.
fn run_one(path: &Path, args: &EvalIkArgs) -> CliResult<()> {
    let label = path.display().to_string();
    if reads_as_vrma(path) {
        // As the folder walk says it, not as a file of unknown type; a broken one
        // says where it breaks.
        match vrma::load(path, None) {
            Ok(_) | Err(vrma::VrmaError::NoAnimation { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        return Err(format!("{label}: {VRMA_NOT_MEASURED}").into());
    }
    let rig = formats::load_rig(path, &load_options(&args.rig))?;
    let source = map_rig(&label, &rig, explicit_map(args.rig.map.as_deref())?)?;
    let clip = rig
        .clip(args.clip.as_deref())
        .ok_or_else(|| format!("{label}: no such clip (the file has {})", rig.clips.len()))?;
    let (target_label, target) = load_target(args)?;
    if args.mode == EvalMode::Vr {
        return eval_vr(&label, &source, &clip.motion, &target_label, &target, args);
    }
    let config = mocap_config(args)?;
    println!(
        "{label} -> {target_label}: {} frames, mocap-mode IK against rotation only, \
         scored on the source's own foot contacts",
        clip.motion.frame_count()
    );
    println!(
        "{:>5} {:>17} {:>22} {:>22} {:>18} {:>18} {:>9}",
        "legs",
        "contacts (differ)",
        "skate cm/f (rot only)",
        "skate cm/f (IK)",
        "low ankle/toe rot",
        "low ankle/toe IK",
        "hips drop"
    );
    for &factor in &args.legs {
        let scaled = scale_legs(&target, factor)?;
        let r = evaluate_mocap(&source, &clip.motion, &scaled, &config)?;
        println!(
            "{:>5.2} {:>9} ({:>5}) {:>10.3} (max {:>5.2}) {:>10.3} (max {:>5.2}) {:>8.1} /{:>6.1} {:>8.1} /{:>6.1} {:>6.1} cm",
            factor,
            r.contact_frames,
            r.contact_mismatch,
            r.rotation_only.skate_cm,
            r.rotation_only.max_skate_cm,
            r.with_ik.skate_cm,
            r.with_ik.max_skate_cm,
            r.rotation_only.lowest_ankle_cm,
            r.rotation_only.lowest_toe_cm,
            r.with_ik.lowest_ankle_cm,
            r.with_ik.lowest_toe_cm,
            r.max_hips_drop_cm,
        );
    }
    Ok(())
}

/// Per joint: position error (cm) and jitter (10² m/s³) of every run, and the
/// ground truth's jitter.
fn print_joints(names: &[&str], reports: &[VrReport]) {
    println!();
    print!("{:<18}", "per joint");
    for name in names {
        print!(" {name:>20}");
    }
    println!(" {:>8}", "truth");
    print!("{:<18}", "");
    for _ in names {
        print!(" {:>9} {:>10}", "MPJPE cm", "jitter");
    }
    println!(" {:>8}", "jitter");
    let Some(first) = reports.first() else {
        return;
    };
    for bone in mocap_bridge::humanoid::bone::ALL {
        let truth = first.joints[bone.index()];
        if !truth.scored {
            continue;
        }
        print!("{:<18}", bone.to_string());
        for r in reports {
            let j = r.joints[bone.index()];
            print!(" {:>9.2} {:>10.2}", j.mpjpe_cm, j.jitter);
        }
        println!(" {:>8.2}", truth.ground_truth_jitter);
    }
}

/// What `eval-ik` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalMode {
    /// Mocap mode on scaled legs.
    Mocap,
    /// VR mode from synthesized devices.
    Vr,
}

fn eval_vr(
    label: &str,
    source: &MappedSkeleton,
    motion: &formats::Motion,
    target_label: &str,
    target: &MappedSkeleton,
    args: &EvalIkArgs,
) -> CliResult<()> {
    let (config, perturbation, smoothing) = vr_settings(args)?;
    println!(
        "{label} -> {target_label}: {} frames, VR mode from synthesized devices \
         (perturbed: controllers {:.1} cm off, {:.1} cm and {:.1}° noise, seed {})",
        motion.frame_count(),
        perturbation.controller_offset.length() * 100.0,
        perturbation.noise * 100.0,
        perturbation.rotation_noise_deg,
        perturbation.seed,
    );
    println!(
        "{:<20} {:>7} {:>7} {:>8} {:>17} {:>17} {:>8} {:>10} {:>9} {:>15} {:>11}",
        "input",
        "MPJPE",
        "MPJRE",
        "MPJVE",
        "jitter (truth)",
        "per frame (tr.)",
        "hand",
        "hand max",
        "head max",
        "skate (truth)",
        "flips (tr.)"
    );
    println!(
        "{:<20} {:>7} {:>7} {:>8} {:>17} {:>17} {:>8} {:>10} {:>9} {:>15} {:>11}",
        "", "cm", "deg", "cm/s", "10^2 m/s^3", "10^2 m/s^3", "cm", "mm", "mm", "cm/frame", ""
    );
    let runs = [
        ("3-point", VrDevices::ThreePoint, None, None),
        ("6-point", VrDevices::SixPoint, None, None),
        (
            "3-point perturbed",
            VrDevices::ThreePoint,
            Some(&perturbation),
            Some(&smoothing),
        ),
        (
            "6-point perturbed",
            VrDevices::SixPoint,
            Some(&perturbation),
            Some(&smoothing),
        ),
        (
            "3-pt pert. unfilt.",
            VrDevices::ThreePoint,
            Some(&perturbation),
            None,
        ),
        (
            "6-pt pert. unfilt.",
            VrDevices::SixPoint,
            Some(&perturbation),
            None,
        ),
    ];
    let mut reports = Vec::with_capacity(runs.len());
    for (name, devices, perturb, filter) in runs {
        let r: VrReport = evaluate_vr(source, motion, target, devices, perturb, &config, filter)?;
        reports.push(r);
        println!(
            "{:<20} {:>7.2} {:>7.2} {:>8.2} {:>8.2} ({:>6.2}) {:>8.2} ({:>6.2}) {:>8.2} {:>10.3} {:>9.3} {:>6.2} ({:>5.2}) {:>5} ({:>3})",
            name,
            r.mpjpe_cm,
            r.mpjre_deg,
            r.mpjve_cm_s,
            r.jitter,
            r.ground_truth_jitter,
            r.frame_jitter,
            r.ground_truth_frame_jitter,
            r.hand_error_cm,
            r.max_reachable_hand_error_mm,
            r.max_head_error_mm,
            r.skate_cm,
            r.ground_truth_skate_cm,
            r.flips,
            r.ground_truth_flips,
        );
    }
    println!(
        "hand max, head max: worst miss of the targets the devices (filtered) give, hands \
         over hand-frames within reach of the solved shoulder; jitter: mean jerk over 1/30 s \
         steps, per frame: over the clip's own frames"
    );
    print_joints(&runs.map(|(name, _, _, _)| name), &reports);
    Ok(())
}

/// `--config`, the perturbation (`--seed`, `--noise`, `--rotation-noise`) and the
/// device filter of the perturbed runs (`--device-filter`) of VR mode.
fn vr_settings(args: &EvalIkArgs) -> CliResult<(VrIkConfig, Perturbation, DeviceFilterConfig)> {
    let config: VrIkConfig = match &args.config {
        Some(json) => settings("--config", json)?,
        None => VrIkConfig::default(),
    };
    let mut perturbation = Perturbation::default();
    if let Some(seed) = args.seed {
        perturbation.seed = seed;
    }
    if let Some(cm) = args.noise {
        perturbation.noise = noise_level("--noise", cm)? / 100.0;
    }
    if let Some(deg) = args.rotation_noise {
        perturbation.rotation_noise_deg = noise_level("--rotation-noise", deg)?;
    }
    // The perturbed devices as the bridge would take them: through the device
    // filter told how noisy they are.
    let mut smoothing = serde_json::json!({
        "noiseM": perturbation.noise,
        "rotationNoiseDeg": perturbation.rotation_noise_deg,
    });
    if let Some(json) = &args.device_filter {
        let given: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).map_err(|e| format!("--device-filter: {e}"))?;
        if let Some(m) = smoothing.as_object_mut() {
            m.extend(given);
        }
    }
    let smoothing: DeviceFilterConfig =
        serde_json::from_value(smoothing).map_err(|e| format!("--device-filter: {e}"))?;
    smoothing
        .check_ranges()
        .map_err(|e| format!("--device-filter: {e}"))?;
    Ok((config, perturbation, smoothing))
}
