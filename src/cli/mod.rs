//! The command implementations behind `main.rs`: loading what the user names,
//! calling the library, printing what it did.

pub mod convert;
pub mod ik;
pub mod recover;
pub mod retarget;
pub mod run;
pub mod simulate;
pub mod vmc;

use std::path::Path;

use mocap_bridge::formats::inspect::{self, ChosenMap};
use mocap_bridge::formats::{self, LoadOptions};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::skeleton::NamedBoneMap;

use crate::{CliResult, RigArgs};

/// A rig with its chosen map, resolved and rest-corrected.
pub fn mapped(
    label: &str,
    rig: &formats::Rig,
    explicit: Option<ChosenMap>,
) -> CliResult<MappedSkeleton> {
    let chosen = inspect::choose_map(rig, explicit).ok_or_else(|| {
        format!(
            "{label}: no bone map: the file declares none, no catalog map fits, and it is {}; pass a map",
            inspect::why_no_map(rig)
        )
    })?;
    Ok(MappedSkeleton::new(rig.skeleton.clone(), &chosen.map)
        .map_err(|e| format!("{}: {e}", chosen.source))?)
}

pub fn load_options(rig: &RigArgs) -> LoadOptions {
    LoadOptions {
        units: rig.units,
        up: rig.up,
    }
}

pub fn explicit_map(path: Option<&Path>) -> CliResult<Option<ChosenMap>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let map = NamedBoneMap::load(path)?;
    Ok(Some(ChosenMap::new(path.display().to_string(), map)))
}
