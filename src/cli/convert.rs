//! `convert`: recordings into `.vrma` or EXT_skeleton_humanoid files.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mocap_bridge::formats;
use mocap_bridge::formats::ext_humanoid;
use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::takes::convert::{Bake, OutputFormat, replay_into};
use mocap_bridge::takes::demo;
use mocap_bridge::takes::replay::Replay;

use super::retarget::is_vrma;
use super::{explicit_map, load_options, mapped};
use crate::{CliResult, RigArgs};

/// One clip to convert: its name, how to play it and the rest it was recorded in.
struct Job {
    name: String,
    replay: Replay,
    rest: VrmaRest,
    custom_names: CustomNames,
}

pub fn convert(
    input: Option<&Path>,
    output: &Path,
    rig: &RigArgs,
    clip: Option<&str>,
    all_clips: bool,
    fps: Option<f32>,
    bake: Option<&Bake>,
) -> CliResult<()> {
    let format = OutputFormat::from_path(output).ok_or_else(|| {
        format!(
            "{}: the output must be a .vrma file (VRM Animation) or a .glb file (EXT_skeleton_humanoid)",
            output.display()
        )
    })?;
    let mut jobs = Vec::new();
    let Some(input) = input else {
        // The built-in lab19 performance (two loops), as `retarget` and `send` play it.
        let lab19 = mocap_bridge::formats::skeleton_json::embedded_rig(
            "lab19.json",
            mocap_bridge::skeleton::builtin::LAB19_JSON,
        );
        let src = mapped("lab19.json", &lab19, None)?;
        jobs.push(Job {
            name: "built-in lab19 performance".into(),
            replay: Replay::from_rig(&src, demo::lab19_performance(&src, 2), fps),
            rest: VrmaRest::from_mapped(&src),
            custom_names: CustomNames::default(),
        });
        return write_jobs("built-in performance", jobs, output, format, bake);
    };
    let label = input.display().to_string();
    if let Some(clips) = ext_clips(input, clip, all_clips)? {
        for (i, c) in clips.into_iter().enumerate() {
            let name = c.name.clone().unwrap_or_else(|| format!("animation{i}"));
            let rest = c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95));
            jobs.push(Job {
                name,
                replay: Replay::from_ext(c, fps),
                rest,
                custom_names: CustomNames::default(),
            });
        }
    } else if is_vrma(input) {
        let bytes = std::fs::read(input).map_err(|e| format!("cannot read {label}: {e}"))?;
        let animations = if all_clips {
            vrma::parse_all(&bytes, input)?
        } else {
            vec![vrma::parse(&bytes, input, clip)?]
        };
        for (i, animation) in animations.into_iter().enumerate() {
            let name = animation
                .name
                .clone()
                .unwrap_or_else(|| format!("animation{i}"));
            let rest = animation.rest().clone();
            let custom_names = animation.custom_names().clone();
            jobs.push(Job {
                name,
                replay: Replay::from_vrma(animation, fps),
                rest,
                custom_names,
            });
        }
    } else {
        let loaded = formats::load_rig(input, &load_options(rig))?;
        let src = mapped(&label, &loaded, explicit_map(rig.map.as_deref())?)?;
        let clips: Vec<&formats::Clip> = if all_clips {
            loaded.clips.iter().collect()
        } else {
            loaded.clip(clip).into_iter().collect()
        };
        if clips.is_empty() {
            return Err(match clip {
                Some(c) => format!("{label}: the file has no clip `{c}`"),
                None => format!("{label}: the file has no animation to convert"),
            }
            .into());
        }
        for c in clips {
            jobs.push(Job {
                name: c.name.clone(),
                replay: Replay::from_rig(&src, c.motion.clone(), fps),
                rest: VrmaRest::from_mapped(&src),
                custom_names: CustomNames::default(),
            });
        }
    }
    write_jobs(&label, jobs, output, format, bake)
}

/// Writes each job's file.
fn write_jobs(
    label: &str,
    jobs: Vec<Job>,
    output: &Path,
    format: OutputFormat,
    bake: Option<&Bake>,
) -> CliResult<()> {
    let mut stdout = std::io::stdout().lock();
    let several = jobs.len() > 1;
    for mut job in jobs {
        let out = if several {
            clip_path(output, &job.name)
        } else {
            output.to_owned()
        };
        let started = std::time::Instant::now();
        let bar = indicatif::ProgressBar::new(job.replay.len() as u64);
        if job.replay.len() < 10_000 {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bar.set_message(job.name.clone());
        let writer = replay_into(
            &mut job.replay,
            format,
            job.rest,
            &job.name,
            &job.custom_names,
            bake,
            &mut |done| {
                if done % 1024 == 0 {
                    bar.set_position(done as u64);
                }
            },
        )
        .map_err(|e| format!("{label}: clip `{}`: {e}", job.name))?;
        bar.finish_and_clear();
        writer.save(&out)?;
        let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        writeln!(
            stdout,
            "wrote {}: clip `{}`, {} frames, {:.3} s, {} bytes, in {:.0} ms",
            out.display(),
            job.name,
            writer.frame_count(),
            job.replay.times().last().copied().unwrap_or(0.0),
            bytes,
            started.elapsed().as_secs_f64() * 1e3
        )?;
    }
    Ok(())
}

/// The EXT_skeleton_humanoid clips of a glTF/GLB that has some (channels naming a
/// `humanoidBoneName`); `None` for any other file.
pub fn ext_clips(
    input: &Path,
    clip: Option<&str>,
    all_clips: bool,
) -> CliResult<Option<Vec<ext_humanoid::ExtHumanoidClip>>> {
    let ext = input
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("glb" | "gltf")) {
        return Ok(None);
    }
    let bytes =
        std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    if !ext_humanoid::has_humanoid_channels(&bytes) {
        return Ok(None);
    }
    if !all_clips {
        return Ok(Some(vec![ext_humanoid::parse(&bytes, input, clip)?]));
    }
    let mut clips = Vec::new();
    for i in 0.. {
        match ext_humanoid::parse(&bytes, input, Some(&i.to_string())) {
            Ok(c) => clips.push(c),
            Err(_) if i > 0 => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(clips))
}

/// `walk.vrma` + clip `Idle` -> `walk_Idle.vrma` (clip names made file-safe).
fn clip_path(output: &Path, clip: &str) -> PathBuf {
    let safe: String = clip
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let extension = output
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}_{safe}.{extension}"))
}
