//! Loading what a command plays: a rig's clip through its bone map, a `.vrma`, an
//! EXT_skeleton_humanoid clip, or the built-in lab19 performance. `retarget`,
//! `send`, `run --replay`, `simulate` and `convert` all read recordings this way.

use std::path::Path;

use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::formats::{self, Motion, ext_humanoid};
use mocap_bridge::humanoid::CustomNames;
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::takes::demo;
use mocap_bridge::takes::replay::Replay;

use super::{CliResult, RigArgs, explicit_map, load_options, mapped};

/// A recording, ready to play.
pub enum LoadedTake {
    /// A rig's clip: retargeted through its map, and checked frame by frame.
    Rig {
        mapped: Box<MappedSkeleton>,
        motion: Motion,
    },
    /// A `.vrma` or EXT_skeleton_humanoid clip: already normalized.
    Normalized {
        rest: Box<VrmaRest>,
        names: CustomNames,
        replay: Box<Replay>,
        summary: String,
    },
}

/// Loads what `retarget`, `send` and `run --replay` play: a rig's clip, a `.vrma`, an
/// EXT_skeleton_humanoid clip, or the built-in performance (`loops` loops).
pub fn load_take(
    source: Option<&Path>,
    rig: &RigArgs,
    clip: Option<&str>,
    loops: u32,
) -> CliResult<(String, LoadedTake)> {
    let options = load_options(rig);
    Ok(match source {
        Some(path) if is_vrma(path) => {
            let a = vrma::load(path, clip)?;
            let summary = format!(
                "VRM animation, {} bones, {} keys, {:.2} s",
                a.bones().count(),
                a.key_times().len(),
                a.duration
            );
            let (rest, names) = (a.rest().clone(), a.custom_names().clone());
            let replay = Replay::from_vrma(a, None);
            normalized(path, summary, rest, names, replay)
        }
        Some(path) if let Some(mut clips) = ext_clips(path, clip, false)? => {
            let Some(c) = clips.pop() else {
                return Err(format!("{}: no EXT_skeleton_humanoid clip", path.display()).into());
            };
            let summary = format!(
                "EXT_skeleton_humanoid clip, {} bones, {} keys, {:.2} s",
                c.bones().count(),
                c.key_times().len(),
                c.duration
            );
            let rest = c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95));
            let replay = Replay::from_ext(c, None);
            normalized(path, summary, rest, CustomNames::default(), replay)
        }
        Some(path) => {
            let loaded = formats::load_rig(path, &options)?;
            let label = path.display().to_string();
            let mapped = mapped(&label, &loaded, explicit_map(rig.map.as_deref())?)?;
            let motion = loaded
                .clip(clip)
                .map(|c| c.motion.clone())
                .ok_or_else(|| match clip {
                    None => format!("{label}: the file has no motion to retarget"),
                    Some(c) => format!("{label}: the file has no clip `{c}`"),
                })?;
            let mapped = Box::new(mapped);
            (label, LoadedTake::Rig { mapped, motion })
        }
        None => {
            let lab19 = mocap_bridge::formats::skeleton_json::embedded_rig(
                "lab19.json",
                mocap_bridge::skeleton::builtin::LAB19_JSON,
            );
            let mapped = mapped("lab19.json", &lab19, explicit_map(rig.map.as_deref())?)?;
            let motion = demo::lab19_performance(&mapped, loops);
            let mapped = Box::new(mapped);
            (
                "built-in lab19 performance".to_owned(),
                LoadedTake::Rig { mapped, motion },
            )
        }
    })
}

/// A take of normalized poses, labelled with its file.
fn normalized(
    path: &Path,
    summary: String,
    rest: VrmaRest,
    names: CustomNames,
    replay: Replay,
) -> (String, LoadedTake) {
    let take = LoadedTake::Normalized {
        rest: Box::new(rest),
        names,
        replay: Box::new(replay),
        summary,
    };
    (path.display().to_string(), take)
}

pub fn is_vrma(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("vrma"))
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
