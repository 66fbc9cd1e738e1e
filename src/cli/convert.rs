//! `convert`: recordings into `.vrma` or EXT_skeleton_humanoid files.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mocap_bridge::formats;
use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::takes::convert::{Bake, OutputFormat, replay_into};
use mocap_bridge::takes::demo;
use mocap_bridge::takes::replay::Replay;

use super::{CliResult, RigArgs, load_options, target_load_options};
use mocap_bridge::formats::inspect::{explicit_map, map_rig};
use mocap_bridge::formats::still_map::clips_leave_the_map_still;
use mocap_bridge::takes::load::{ext_clips, reads_as_vrma};

/// Options of `convert`.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// The recording: .bvh, .glb, .gltf, .vrm (with animations), .vrma, or a
    /// glTF/GLB with EXT_skeleton_humanoid channels; default: the built-in lab19
    /// performance.
    pub input: Option<PathBuf>,
    /// The file to write: .vrma (VRM Animation) or .glb (EXT_skeleton_humanoid).
    /// With --all-clips, the name each clip's file is derived from
    /// (`walk.vrma` -> `walk_Idle.vrma`, ...).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Overwrite OUT (with --all-clips, each file derived from it) when it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Which animation to convert, by name or index (default: the first).
    #[arg(long, value_name = "NAME|INDEX", conflicts_with = "all_clips")]
    pub clip: Option<String>,
    /// Convert every animation, one file each.
    #[arg(long)]
    pub all_clips: bool,
    /// Resample at this many frames per second (default: keep the source's frames).
    #[arg(long, value_name = "FPS", value_parser = super::parse_fps)]
    pub fps: Option<f32>,
    /// Bake onto this model's proportions: its T-pose becomes the file's rest and
    /// hips positions are scaled to its hips height.
    #[arg(long, value_name = "MODEL")]
    pub target: Option<PathBuf>,
    /// Bone map for --target (default: its own, else the catalog's, else recognized).
    #[arg(long, value_name = "MAP")]
    pub target_map: Option<PathBuf>,
}

/// One clip to convert: its name, how to play it and the rest it was recorded in.
struct ClipToWrite {
    name: String,
    replay: Replay,
    rest: VrmaRest,
    custom_names: CustomNames,
}

pub fn run(args: ConvertArgs) -> CliResult<()> {
    let ConvertArgs {
        input,
        output,
        force,
        rig,
        clip,
        all_clips,
        fps,
        target,
        target_map,
    } = args;
    if !all_clips {
        // Before any reading: the file names of --all-clips wait for the clips.
        super::refuse_existing(&output, force)?;
    }
    let bake = match target {
        None => None,
        Some(path) => {
            let loaded = formats::load_rig(&path, &target_load_options(&rig))?;
            let m = map_rig(
                &path.display().to_string(),
                &loaded,
                explicit_map(target_map.as_deref())?,
            )?;
            Some(Bake {
                rest: VrmaRest::from_mapped(&m),
                hips_height: m.rest_hips_height(),
            })
        }
    };
    write(
        input.as_deref(),
        &Output {
            path: &output,
            force,
        },
        &rig,
        clip.as_deref(),
        all_clips,
        fps,
        bake.as_ref(),
    )
}

/// Where `convert` writes: `-o`, and whether an existing file may be replaced.
struct Output<'a> {
    path: &'a Path,
    force: bool,
}

/// Reads `input`'s clips (or the built-in performance) and writes them.
fn write(
    input: Option<&Path>,
    out: &Output<'_>,
    rig: &RigArgs,
    clip: Option<&str>,
    all_clips: bool,
    fps: Option<f32>,
    bake: Option<&Bake>,
) -> CliResult<()> {
    let output = out.path;
    let format = OutputFormat::from_path(output).ok_or_else(|| {
        format!(
            "{}: the output must be a .vrma file (VRM Animation) or a .glb file (EXT_skeleton_humanoid)",
            output.display()
        )
    })?;
    formats::check_rest_from(input, &load_options(rig))?;
    let mut jobs = Vec::new();
    let Some(input) = input else {
        // The built-in lab19 performance (two loops), as `retarget` and `send` play it.
        let lab19 = mocap_bridge::formats::skeleton_json::embedded_rig(
            "lab19.json",
            mocap_bridge::skeleton::builtin::LAB19_JSON,
        );
        let src = map_rig("lab19.json", &lab19, None)?;
        jobs.push(ClipToWrite {
            name: "built-in lab19 performance".into(),
            replay: Replay::from_rig(&src, demo::lab19_performance(&src, 2), fps),
            rest: VrmaRest::from_mapped(&src),
            custom_names: CustomNames::default(),
        });
        return write_jobs("built-in performance", jobs, out, format, bake);
    };
    let label = input.display().to_string();
    let rest_from = load_options(rig).rest_from;
    if let Some(clips) = ext_clips(input, clip, all_clips, rest_from.as_deref())? {
        for (i, c) in clips.into_iter().enumerate() {
            let name = c.name.clone().unwrap_or_else(|| format!("animation{i}"));
            let rest = c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95));
            jobs.push(ClipToWrite {
                name,
                replay: Replay::from_ext(c, fps),
                rest,
                custom_names: CustomNames::default(),
            });
        }
    } else if reads_as_vrma(input) {
        let bytes = std::fs::read(input).map_err(|e| format!("cannot read {label}: {e}"))?;
        let animations = if all_clips {
            vrma::parse_all(&bytes, input)?
        } else {
            vec![vrma::parse(&bytes, input, clip)?]
        };
        let mut said = Vec::new();
        for (i, animation) in animations.into_iter().enumerate() {
            // What reading found (a bone whose turns the file plays on no bone,
            // key times without min/max), once per file.
            for note in animation.notes() {
                if !said.contains(note) {
                    eprintln!("note: {label}: {note}");
                    said.push(note.clone());
                }
            }
            let name = animation
                .name
                .clone()
                .unwrap_or_else(|| format!("animation{i}"));
            let rest = animation.rest().clone();
            let custom_names = animation.custom_names().clone();
            jobs.push(ClipToWrite {
                name,
                replay: Replay::from_vrma(animation, fps),
                rest,
                custom_names,
            });
        }
    } else {
        let loaded =
            formats::load_rig(input, &load_options(rig)).map_err(formats::FormatError::or_vrma)?;
        let src = map_rig(&label, &loaded, explicit_map(rig.map.as_deref())?)?;
        if let Some(still) = clips_leave_the_map_still(&loaded, &src.map) {
            eprintln!("warning: {label}: {still}");
        }
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
            jobs.push(ClipToWrite {
                name: c.name.clone(),
                replay: Replay::from_rig(&src, c.motion.clone(), fps),
                rest: VrmaRest::from_mapped(&src),
                custom_names: CustomNames::default(),
            });
        }
    }
    write_jobs(&label, jobs, out, format, bake)
}

/// Writes each job's file: `output`, or with several jobs a name derived from it
/// per clip (`output_paths`). Every name is checked before any file is written:
/// none may exist (unless `output.force`) and no two clips may share one.
fn write_jobs(
    label: &str,
    jobs: Vec<ClipToWrite>,
    output: &Output<'_>,
    format: OutputFormat,
    bake: Option<&Bake>,
) -> CliResult<()> {
    let mut stdout = std::io::stdout().lock();
    let names: Vec<&str> = jobs.iter().map(|job| job.name.as_str()).collect();
    let paths = output_paths(output.path, &names);
    for (i, path) in paths.iter().enumerate() {
        if let Some(first) = paths[..i].iter().position(|p| p == path) {
            return Err(format!(
                "{}: clips `{}` and `{}` would both be written there; convert them one at a \
                 time with --clip",
                path.display(),
                jobs[first].name,
                jobs[i].name
            )
            .into());
        }
        super::refuse_existing(path, output.force)?;
    }
    for (mut job, out) in jobs.into_iter().zip(paths) {
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
            "wrote {}: clip `{}`, {}, {:.3} s, {} bytes, in {:.0} ms",
            out.display(),
            job.name,
            super::frames(writer.frame_count()),
            job.replay.times().last().copied().unwrap_or(0.0),
            bytes,
            started.elapsed().as_secs_f64() * 1e3
        )?;
    }
    Ok(())
}

/// The file of each clip named in `names` (in the file's order): `output` for one;
/// for several, `clip_path` of each name, and of the name with its index for a
/// clip whose name an earlier clip's file already took (Blender keeps two
/// animations named `Idle`: `walk_Idle.vrma`, `walk_Idle_4.vrma`).
fn output_paths(output: &Path, names: &[&str]) -> Vec<PathBuf> {
    if names.len() == 1 {
        return vec![output.to_owned()];
    }
    let mut paths: Vec<PathBuf> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let mut path = clip_path(output, name);
        if paths.contains(&path) {
            path = clip_path(output, &format!("{name}_{i}"));
        }
        paths.push(path);
    }
    paths
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_of_one_name_are_written_to_files_named_with_their_index() {
        let out = Path::new("takes/walk.vrma");
        assert_eq!(
            output_paths(out, &["Idle"]),
            [PathBuf::from("takes/walk.vrma")]
        );
        let names = ["Idle", "Run", "Idle", "Jump/1"];
        let want = [
            "takes/walk_Idle.vrma",
            "takes/walk_Run.vrma",
            "takes/walk_Idle_2.vrma",
            "takes/walk_Jump_1.vrma",
        ];
        assert_eq!(output_paths(out, &names), want.map(PathBuf::from));
    }
}
