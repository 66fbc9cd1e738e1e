//! One table over many clips: the VR-mode and mocap-mode numbers of every
//! locomotion clip (`Travel::is_locomotion`), a row per clip, a mean row, the clips
//! left out with the reason, and the goals checked (`VR_GOALS`, `MOCAP_GOALS`). What
//! `eval-ik` prints for several files or a folder, and what the corpus test asserts.
//! Pure code: the caller loads the files and hands over each clip.

use std::fmt::Write as _;

use super::Travel;
use super::{
    EvalError, MocapReport, Perturbation, VrDevices, VrReport, evaluate_mocap, evaluate_vr,
    scale_legs,
};
use crate::filter::DeviceFilterConfig;
use crate::formats::{Motion, Rig};
use crate::ik::{MocapIkConfig, VrIkConfig};
use crate::retarget::MappedSkeleton;

/// The four VR-mode runs of a row: 3-point and 6-point, ideal and perturbed (the
/// perturbed devices through the device filter told their noise, as the bridge
/// takes them).
pub const VR_RUNS: [(&str, VrDevices, bool); 4] = [
    ("3-point", VrDevices::ThreePoint, false),
    ("6-point", VrDevices::SixPoint, false),
    ("3-point perturbed", VrDevices::ThreePoint, true),
    ("6-point perturbed", VrDevices::SixPoint, true),
];

/// VR mode's goals over a table, cm and mm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VrGoals {
    /// Mean over clips of the 3-point MPJPE, and the most any clip may have.
    pub mean_three_point_cm: f32,
    pub worst_three_point_cm: f32,
    /// The same for 6-point perturbed.
    pub mean_six_point_perturbed_cm: f32,
    pub worst_six_point_perturbed_cm: f32,
    /// Largest miss of hands (within reach) and head on their targets, any run.
    pub on_target_mm: f32,
}

/// The goals of issue-level VR accuracy: mean 3-point ≤ 8 cm and 6-point perturbed
/// ≤ 3 cm, no clip worse than 10 / 4 cm, hands and head within 1 mm, and (checked
/// per run) jitter no more than the ground truth's.
pub const VR_GOALS: VrGoals = VrGoals {
    mean_three_point_cm: 8.0,
    worst_three_point_cm: 10.0,
    mean_six_point_perturbed_cm: 3.0,
    worst_six_point_perturbed_cm: 4.0,
    on_target_mm: 1.0,
};

/// Mocap mode's goals per clip and leg scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MocapGoals {
    /// Foot-frames where the solver's contacts disagree with the source's, at most
    /// this share of the source's contact foot-frames.
    pub contact_mismatch: f32,
    /// Mean skate of the IK's ankles on the source's contacts, cm per frame.
    pub skate_cm: f32,
    /// Lowest toe joint, cm above the floor.
    pub lowest_toe_cm: f32,
}

/// Contacts within 10% of the source's, skate ≤ 0.5 cm/frame, toes above −1 cm.
pub const MOCAP_GOALS: MocapGoals = MocapGoals {
    contact_mismatch: 0.1,
    skate_cm: 0.5,
    lowest_toe_cm: -1.0,
};

/// The leg scales mocap mode is measured at unless told others.
pub const LEG_SCALES: [f32; 3] = [0.8, 1.0, 1.2];

/// A clip left out of a table and why (does not load, not a humanoid, not
/// locomotion, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub label: String,
    pub reason: String,
}

/// A locomotion clip ready to measure.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The file, and the clip's name when the file has several.
    pub label: String,
    pub source: MappedSkeleton,
    pub motion: Motion,
    /// Hips travel, the source's hips heights per second.
    pub speed: f32,
}

/// The locomotion clips of a loaded rig (`clip`: only the one of that name), and the
/// clips left out with the reason. `mapped` is the rig's humanoid map, or why it has
/// none.
#[must_use]
pub fn locomotion_clips(
    label: &str,
    rig: &Rig,
    mapped: Result<&MappedSkeleton, String>,
    clip: Option<&str>,
) -> (Vec<Candidate>, Vec<Skipped>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut skip = |label: String, reason: String| skipped.push(Skipped { label, reason });
    if rig.clips.is_empty() {
        skip(label.to_owned(), "no clips".into());
        return (found, skipped);
    }
    let source = match mapped {
        Ok(source) => source,
        Err(why) => {
            skip(label.to_owned(), format!("not a humanoid: {why}"));
            return (found, skipped);
        }
    };
    for c in rig
        .clips
        .iter()
        .filter(|c| clip.is_none_or(|n| n == c.name))
    {
        let clip_label = if rig.clips.len() == 1 {
            label.to_owned()
        } else {
            format!("{label} [{}]", c.name)
        };
        match Travel::of(source, &c.motion) {
            Ok(t) => match t.why_not_locomotion() {
                None => found.push(Candidate {
                    label: clip_label,
                    source: source.clone(),
                    motion: c.motion.clone(),
                    speed: t.speed,
                }),
                Some(why) => skip(clip_label, why),
            },
            Err(e) => skip(clip_label, format!("does not retarget: {e}")),
        }
    }
    (found, skipped)
}

/// One clip's VR-mode runs (`VR_RUNS` order).
#[derive(Debug, Clone, PartialEq)]
pub struct VrRow {
    pub label: String,
    /// Hips travel, the source's hips heights per second.
    pub speed: f32,
    pub runs: [VrReport; 4],
}

/// What a VR table runs with.
#[derive(Debug, Clone, Copy)]
pub struct VrSettings<'a> {
    pub config: &'a VrIkConfig,
    pub perturbation: &'a Perturbation,
    pub smoothing: &'a DeviceFilterConfig,
}

/// The four runs of one clip onto `target`.
pub fn vr_row(
    label: &str,
    speed: f32,
    source: &MappedSkeleton,
    motion: &Motion,
    target: &MappedSkeleton,
    settings: &VrSettings<'_>,
) -> Result<VrRow, EvalError> {
    let mut runs = [VrReport::default(); 4];
    for (run, (_, devices, perturbed)) in runs.iter_mut().zip(VR_RUNS) {
        *run = evaluate_vr(
            source,
            motion,
            target,
            devices,
            perturbed.then_some(settings.perturbation),
            settings.config,
            perturbed.then_some(settings.smoothing),
        )?;
    }
    Ok(VrRow {
        label: label.to_owned(),
        speed,
        runs,
    })
}

/// The means over `rows` of each run's MPJPE, cm.
#[must_use]
pub fn vr_means(rows: &[VrRow]) -> [f32; 4] {
    let n = rows.len().max(1) as f32;
    [0, 1, 2, 3].map(|k| rows.iter().map(|r| r.runs[k].mpjpe_cm).sum::<f32>() / n)
}

/// Every goal of `VR_GOALS` a table misses, one line each (empty: all met).
#[must_use]
pub fn vr_failures(rows: &[VrRow]) -> Vec<String> {
    let g = VR_GOALS;
    let mut failures = Vec::new();
    let means = vr_means(rows);
    if means[0] > g.mean_three_point_cm {
        failures.push(format!(
            "mean 3-point MPJPE {:.2} cm > {} cm",
            means[0], g.mean_three_point_cm
        ));
    }
    if means[3] > g.mean_six_point_perturbed_cm {
        failures.push(format!(
            "mean 6-point perturbed MPJPE {:.2} cm > {} cm",
            means[3], g.mean_six_point_perturbed_cm
        ));
    }
    for row in rows {
        let [three, _, _, six] = &row.runs;
        if three.mpjpe_cm > g.worst_three_point_cm {
            failures.push(format!(
                "{}: 3-point MPJPE {:.2} cm > {} cm",
                row.label, three.mpjpe_cm, g.worst_three_point_cm
            ));
        }
        if six.mpjpe_cm > g.worst_six_point_perturbed_cm {
            failures.push(format!(
                "{}: 6-point perturbed MPJPE {:.2} cm > {} cm",
                row.label, six.mpjpe_cm, g.worst_six_point_perturbed_cm
            ));
        }
        for (r, (name, _, _)) in row.runs.iter().zip(VR_RUNS) {
            let miss = r.max_reachable_hand_error_mm.max(r.max_head_error_mm);
            if miss > g.on_target_mm {
                failures.push(format!(
                    "{} {name}: hands/head {miss:.3} mm off target > {} mm",
                    row.label, g.on_target_mm
                ));
            }
            if r.jitter > r.ground_truth_jitter {
                failures.push(format!(
                    "{} {name}: jitter {:.2} > the truth's {:.2}",
                    row.label, r.jitter, r.ground_truth_jitter
                ));
            }
        }
    }
    failures
}

/// The VR table: a row per clip (MPJPE of each run, hands/head off target, jitter
/// of each run against the truth's), the mean row, the skipped clips and the goals.
#[must_use]
pub fn vr_table(rows: &[VrRow], skipped: &[Skipped]) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|r| r.label.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let _ = writeln!(
        out,
        "{:<width$} {:>6} {:>6} | {:>7} {:>7} {:>7} {:>7} | {:>6} {:>6} | {:>27} {:>6} | {:>27} {:>6} | {:>5}",
        "clip",
        "frames",
        "speed",
        "3-pt",
        "6-pt",
        "3-pt P",
        "6-pt P",
        "hand",
        "head",
        "jitter 3-pt/6-pt/3-P/6-P",
        "truth",
        "per frame 3/6/3-P/6-P",
        "truth",
        "flips"
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>6} {:>6} | {:>31} | {:>6} {:>6} | {:>34} | {:>34} | {:>5}",
        "",
        "",
        "hh/s",
        "MPJPE cm (P: perturbed, filtered)",
        "mm",
        "mm",
        "10^2 m/s^3, 1/30 s steps",
        "10^2 m/s^3, the clip's frames",
        "tr."
    );
    for row in rows {
        let r = &row.runs;
        let hand = r
            .iter()
            .map(|x| x.max_reachable_hand_error_mm)
            .fold(0.0, f32::max);
        let head = r.iter().map(|x| x.max_head_error_mm).fold(0.0, f32::max);
        let flips: usize = r.iter().map(|x| x.flips).sum();
        let _ = writeln!(
            out,
            "{:<width$} {:>6} {:>6.2} | {:>7.2} {:>7.2} {:>7.2} {:>7.2} | {:>6.3} {:>6.3} | {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} | {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} | {:>2} ({})",
            row.label,
            r[0].frames,
            row.speed,
            r[0].mpjpe_cm,
            r[1].mpjpe_cm,
            r[2].mpjpe_cm,
            r[3].mpjpe_cm,
            hand,
            head,
            r[0].jitter,
            r[1].jitter,
            r[2].jitter,
            r[3].jitter,
            r[0].ground_truth_jitter,
            r[0].frame_jitter,
            r[1].frame_jitter,
            r[2].frame_jitter,
            r[3].frame_jitter,
            r[0].ground_truth_frame_jitter,
            flips,
            r[0].ground_truth_flips,
        );
    }
    if rows.is_empty() {
        write_nothing_measured(&mut out, skipped);
        return out;
    }
    let means = vr_means(rows);
    let _ = writeln!(
        out,
        "{:<width$} {:>6} {:>6} | {:>7.2} {:>7.2} {:>7.2} {:>7.2} |",
        format!("mean of {} clips", rows.len()),
        "",
        "",
        means[0],
        means[1],
        means[2],
        means[3],
    );
    write_skipped(&mut out, skipped);
    let g = VR_GOALS;
    let _ = writeln!(
        out,
        "goals: mean 3-point <= {} cm and 6-point perturbed <= {} cm, no clip over {} / {} cm; \
         hands (within reach) and head <= {} mm; jitter <= the truth's",
        g.mean_three_point_cm,
        g.mean_six_point_perturbed_cm,
        g.worst_three_point_cm,
        g.worst_six_point_perturbed_cm,
        g.on_target_mm
    );
    write_failures(&mut out, &vr_failures(rows));
    out
}

/// One clip's mocap-mode numbers at each leg scale.
#[derive(Debug, Clone, PartialEq)]
pub struct MocapRow {
    pub label: String,
    pub speed: f32,
    /// The leg scale and the numbers at it.
    pub reports: Vec<(f32, MocapReport)>,
}

/// Mocap mode on one clip onto `target` with its legs at each of `legs` (factors of
/// the target's, e.g. `LEG_SCALES`).
pub fn mocap_row(
    label: &str,
    speed: f32,
    (source, motion): (&MappedSkeleton, &Motion),
    target: &MappedSkeleton,
    legs: &[f32],
    config: &MocapIkConfig,
) -> Result<MocapRow, EvalError> {
    let mut reports = Vec::with_capacity(legs.len());
    for &factor in legs {
        let scaled = scale_legs(target, factor)?;
        reports.push((factor, evaluate_mocap(source, motion, &scaled, config)?));
    }
    Ok(MocapRow {
        label: label.to_owned(),
        speed,
        reports,
    })
}

/// The share of the source's contact foot-frames the solver got wrong.
#[must_use]
pub fn mismatch_share(r: &MocapReport) -> f32 {
    r.contact_mismatch as f32 / r.contact_frames.max(1) as f32
}

/// Every goal of `MOCAP_GOALS` a table misses, one line each (empty: all met).
#[must_use]
pub fn mocap_failures(rows: &[MocapRow]) -> Vec<String> {
    let g = MOCAP_GOALS;
    let mut failures = Vec::new();
    for row in rows {
        for (factor, r) in &row.reports {
            let at = format!("{} legs x{factor}", row.label);
            if r.contact_frames == 0 {
                failures.push(format!("{at}: no contacts found in the source"));
            }
            if mismatch_share(r) > g.contact_mismatch {
                failures.push(format!(
                    "{at}: contacts differ from the source's on {} of {} foot-frames",
                    r.contact_mismatch, r.contact_frames
                ));
            }
            if r.with_ik.skate_cm > g.skate_cm {
                failures.push(format!(
                    "{at}: skate {:.3} cm/frame > {}",
                    r.with_ik.skate_cm, g.skate_cm
                ));
            }
            if r.with_ik.lowest_toe_cm < g.lowest_toe_cm {
                failures.push(format!(
                    "{at}: lowest toe {:.2} cm < {} cm",
                    r.with_ik.lowest_toe_cm, g.lowest_toe_cm
                ));
            }
        }
    }
    failures
}

/// The mocap table: a line per clip and leg scale (source contacts, the solver's
/// and how many differ, skate on the source's contacts rotation only and with IK,
/// lowest toe with IK, hips lowering), the skipped clips and the goals.
#[must_use]
pub fn mocap_table(rows: &[MocapRow], skipped: &[Skipped]) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|r| r.label.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let _ = writeln!(
        out,
        "{:<width$} {:>5} {:>6} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "clip",
        "legs",
        "frames",
        "contacts",
        "solver",
        "differ",
        "skate rot",
        "skate IK",
        "low toe",
        "floor",
        "hips"
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>5} {:>6} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "", "", "", "source", "", "%", "cm/frame", "cm/frame", "cm (IK)", "cm", "drop cm"
    );
    for row in rows {
        for (factor, r) in &row.reports {
            let _ = writeln!(
                out,
                "{:<width$} {:>5.2} {:>6} {:>8} {:>8} {:>7.1} {:>9.3} {:>9.3} {:>9.2} {:>9.2} {:>8.1}",
                row.label,
                factor,
                r.frames,
                r.contact_frames,
                r.solver_contact_frames,
                mismatch_share(r) * 100.0,
                r.rotation_only.skate_cm,
                r.with_ik.skate_cm,
                r.with_ik.lowest_toe_cm,
                r.source_floor_cm,
                r.max_hips_drop_cm,
            );
        }
    }
    let all: Vec<&MocapReport> = rows
        .iter()
        .flat_map(|r| r.reports.iter().map(|(_, report)| report))
        .collect();
    if rows.is_empty() {
        write_nothing_measured(&mut out, skipped);
        return out;
    }
    let n = all.len().max(1) as f32;
    let _ = writeln!(
        out,
        "{:<width$} {:>5} {:>6} {:>8} {:>8} {:>7.1} {:>9.3} {:>9.3} {:>9.2}",
        format!("mean of {} clips", rows.len()),
        "",
        "",
        "",
        "",
        all.iter().map(|r| mismatch_share(r)).sum::<f32>() / n * 100.0,
        all.iter().map(|r| r.rotation_only.skate_cm).sum::<f32>() / n,
        all.iter().map(|r| r.with_ik.skate_cm).sum::<f32>() / n,
        all.iter()
            .map(|r| r.with_ik.lowest_toe_cm)
            .fold(f32::INFINITY, f32::min),
    );
    write_skipped(&mut out, skipped);
    let g = MOCAP_GOALS;
    let _ = writeln!(
        out,
        "goals: contacts differ from the source's on <= {}% of its contact foot-frames, skate on \
         them <= {} cm/frame, lowest toe >= {} cm",
        g.contact_mismatch * 100.0,
        g.skate_cm,
        g.lowest_toe_cm
    );
    write_failures(&mut out, &mocap_failures(rows));
    out
}

/// The end of a table with no row: what was left out, and no goal checked.
fn write_nothing_measured(out: &mut String, skipped: &[Skipped]) {
    write_skipped(out, skipped);
    let _ = writeln!(out, "no clip measured: no goal checked");
}

fn write_skipped(out: &mut String, skipped: &[Skipped]) {
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(out, "skipped {} clips or files:", skipped.len());
    for s in skipped {
        let _ = writeln!(out, "  {}: {}", s.label, s.reason);
    }
}

fn write_failures(out: &mut String, failures: &[String]) {
    if failures.is_empty() {
        let _ = writeln!(out, "all goals met");
    } else {
        let _ = writeln!(out, "goals missed:");
        for f in failures {
            let _ = writeln!(out, "  {f}");
        }
    }
}
