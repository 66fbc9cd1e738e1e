//! Loading any recording as a take ready to play: a rig's clip through its bone
//! map (BVH, glTF/GLB/VRM), a `.vrma`, an EXT_skeleton_humanoid clip, or the
//! built-in lab19 performance. `retarget`, `send`, `run --replay`, `simulate` and
//! `convert` all read recordings this way.

use std::path::{Path, PathBuf};

use super::demo;
use super::replay::Replay;
use crate::formats::ext_humanoid::{self, ExtHumanoidClip, ExtHumanoidError};
use crate::formats::inspect::{MapRigError, explicit_map, map_rig};
use crate::formats::vrma::{self, VrmaError, VrmaRest};
use crate::formats::{self, FormatError, LoadOptions, Motion, file_type, skeleton_json};
use crate::humanoid::CustomNames;
use crate::retarget::MappedSkeleton;
use crate::skeleton::MapError;

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

/// Why a recording cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    #[error(transparent)]
    Vrma(#[from] VrmaError),
    #[error(transparent)]
    Ext(#[from] ExtHumanoidError),
    #[error(transparent)]
    Rig(#[from] FormatError),
    #[error(transparent)]
    MapFile(#[from] MapError),
    #[error(transparent)]
    Map(#[from] MapRigError),
    #[error("cannot read {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: no EXT_skeleton_humanoid clip", .0.display())]
    NoExtClip(PathBuf),
    #[error(
        "{}: --rest-from gives a rest to a rig's joints, and this EXT_skeleton_humanoid clip \
         turns humanoid bones against its own rest",
        .0.display()
    )]
    RestFromExt(PathBuf),
    #[error("{label}: the file has no motion to retarget")]
    NoMotion { label: String },
    #[error("{label}: the file has no clip `{clip}`")]
    NoClip { label: String, clip: String },
}

/// Loads `source` (the built-in performance, `loops` loops, when `None`): its clip
/// `clip` (default the first), through the map in `map_file` if one is named,
/// else its own, the catalog's or the recognized one. Returns the take with a
/// label naming it.
pub fn load_take(
    source: Option<&Path>,
    options: &LoadOptions,
    map_file: Option<&Path>,
    clip: Option<&str>,
    loops: u32,
) -> Result<(String, LoadedTake), TakeError> {
    formats::check_rest_from(source, options)?;
    Ok(match source {
        Some(path) if reads_as_vrma(path) => {
            let a = vrma::load(path, clip)?;
            let summary = format!(
                "VRM animation, {} bones, {} keys, {:.2} s",
                a.bones().count(),
                a.frame_times().len(),
                a.duration
            );
            let (rest, names) = (a.rest().clone(), a.custom_names().clone());
            let replay = Replay::from_vrma(a, None);
            normalized(path, summary, rest, names, replay)
        }
        Some(path)
            if let Some(mut clips) =
                ext_clips(path, clip, false, options.rest_from.as_deref())? =>
        {
            let c = clips
                .pop()
                .ok_or_else(|| TakeError::NoExtClip(path.to_owned()))?;
            let summary = format!(
                "EXT_skeleton_humanoid clip, {} bones, {} keys, {:.2} s",
                c.bones().count(),
                c.frame_times().len(),
                c.duration
            );
            let rest = c.rest.clone().unwrap_or_else(|| VrmaRest::standard(0.95));
            let replay = Replay::from_ext(c, None);
            normalized(path, summary, rest, CustomNames::default(), replay)
        }
        Some(path) => {
            let loaded = formats::load_rig(path, options).map_err(FormatError::or_vrma)?;
            let label = path.display().to_string();
            let mapped = map_rig(&label, &loaded, explicit_map(map_file)?)?;
            let motion = loaded
                .clip(clip)
                .map(|c| c.motion.clone())
                .ok_or_else(|| match clip {
                    None => TakeError::NoMotion {
                        label: label.clone(),
                    },
                    Some(c) => TakeError::NoClip {
                        label: label.clone(),
                        clip: c.to_owned(),
                    },
                })?;
            let mapped = Box::new(mapped);
            (label, LoadedTake::Rig { mapped, motion })
        }
        None => {
            let lab19 =
                skeleton_json::embedded_rig("lab19.json", crate::skeleton::builtin::LAB19_JSON);
            let mapped = map_rig("lab19.json", &lab19, explicit_map(map_file)?)?;
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

/// Whether the recording at `source` (the built-in performance for `None`) has a
/// frame rate of its own: a BVH (its `Frame Time`) or the built-in performance.
/// Keyframed files (.vrma, glTF) have none.
#[must_use]
pub fn is_framed(source: Option<&Path>) -> bool {
    source.is_none_or(|path| file_type(path).as_deref() == Some("bvh"))
}

/// Whether `path` reads as a VRM Animation: a `.vrma` (any case) but for a glTF
/// clip of nodes under that name (`vrma::is_node_clip`: its humanoid map names no
/// bone), which `formats::load_rig` reads as the glTF clip it is.
#[must_use]
pub fn reads_as_vrma(path: &Path) -> bool {
    file_type(path).as_deref() == Some("vrma") && !vrma::is_node_clip(path)
}

/// The EXT_skeleton_humanoid clips of a glTF/GLB that has some (channels naming a
/// `humanoidBoneName`): the one `clip` names (default the first), or every one
/// with `all_clips`; `None` for any other file. Refused with a rest from another
/// file (`rest_from`): the clip has no joints of its own to take it.
pub fn ext_clips(
    input: &Path,
    clip: Option<&str>,
    all_clips: bool,
    rest_from: Option<&Path>,
) -> Result<Option<Vec<ExtHumanoidClip>>, TakeError> {
    if !matches!(file_type(input).as_deref(), Some("glb" | "gltf")) {
        return Ok(None);
    }
    let bytes = std::fs::read(input).map_err(|error| TakeError::Read {
        path: input.to_owned(),
        error,
    })?;
    if !ext_humanoid::has_humanoid_channels(&bytes) {
        return Ok(None);
    }
    if rest_from.is_some() {
        return Err(TakeError::RestFromExt(input.to_owned()));
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
