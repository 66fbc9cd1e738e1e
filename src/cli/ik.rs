//! `eval-ik`: mocap-mode IK measured on a real capture. Retargets a clip onto a model
//! whose legs are scaled, rotation only and with mocap-mode IK, and prints foot skate
//! during contact, the lowest foot heights and the hips lowering for each scale.

use std::path::PathBuf;

use mocap_bridge::formats;
use mocap_bridge::ik::MocapIkConfig;
use mocap_bridge::ik::eval::{evaluate_mocap, scale_legs};

use super::{explicit_map, load_options, mapped};
use crate::{CliResult, RigArgs};

/// Options of `eval-ik`.
#[derive(clap::Args)]
pub struct EvalIkArgs {
    /// The capture (.bvh, or a glTF/VRM/.vrma clip), e.g.
    /// ../shared/assets/bvh/cmu_12_01_walk.bvh.
    pub source: PathBuf,
    /// The model to retarget onto, e.g. ../shared/assets/vrm/Example.vrm.
    #[arg(long, value_name = "MODEL")]
    pub target: PathBuf,
    /// Bone map for the target (default: its own, else the catalog's, else recognized).
    #[arg(long, value_name = "MAP")]
    pub target_map: Option<PathBuf>,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Which animation of the source, by name or index (default: the first).
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
    /// Mocap-mode settings as JSON (`{"contactSpeed": 0.4}`); defaults otherwise.
    #[arg(long, value_name = "JSON")]
    pub config: Option<String>,
}

pub fn eval_ik(args: EvalIkArgs) -> CliResult<()> {
    let label = args.source.display().to_string();
    let rig = formats::load_rig(&args.source, &load_options(&args.rig))?;
    let source = mapped(&label, &rig, explicit_map(args.rig.map.as_deref())?)?;
    let clip = rig
        .clip(args.clip.as_deref())
        .ok_or_else(|| format!("{label}: no such clip (the file has {})", rig.clips.len()))?;
    let target_label = args.target.display().to_string();
    let target_rig = formats::load_rig(&args.target, &load_options(&args.rig))?;
    let target = mapped(
        &target_label,
        &target_rig,
        explicit_map(args.target_map.as_deref())?,
    )?;
    let config: MocapIkConfig = match &args.config {
        Some(json) => serde_json::from_str(json).map_err(|e| format!("--config: {e}"))?,
        None => MocapIkConfig::default(),
    };
    println!(
        "{label} -> {target_label}: {} frames, mocap-mode IK against rotation only",
        clip.motion.frame_count()
    );
    println!(
        "{:>5} {:>8} {:>22} {:>22} {:>18} {:>18} {:>9}",
        "legs",
        "contacts",
        "skate cm/f (rot only)",
        "skate cm/f (IK)",
        "low ankle/toe rot",
        "low ankle/toe IK",
        "hips drop"
    );
    for &factor in &args.legs {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(format!("--legs {factor}: not a positive number").into());
        }
        let scaled = scale_legs(&target, factor)?;
        let r = evaluate_mocap(&source, &clip.motion, &scaled, &config)?;
        println!(
            "{:>5.2} {:>8} {:>10.3} (max {:>5.2}) {:>10.3} (max {:>5.2}) {:>8.1} /{:>6.1} {:>8.1} /{:>6.1} {:>6.1} cm",
            factor,
            r.contact_frames,
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
