//! `inspect`: a rig's joint tree, bone map, rest pose and problems (and a `.vrma`'s
//! animations and expressions), and the map written out to edit and pass back.

use std::path::PathBuf;

use mocap_bridge::formats::inspect::{self, Report};
use mocap_bridge::formats::{self, vrma};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::takes::load::reads_as_vrma;

use super::{CliResult, RigArgs, load_options};
use mocap_bridge::formats::inspect::explicit_map;

/// Options of `inspect`.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// A .bvh, .glb, .gltf, .vrm, .vrma or skeleton .json file.
    pub file: PathBuf,
    #[command(flatten)]
    pub rig: RigArgs,
    /// Also write the bone map used (given, the file's own, the catalog's or the
    /// recognized one) as a map file, to check, edit and pass back with --map.
    #[arg(long, value_name = "MAP.json")]
    pub write_map: Option<PathBuf>,
}

pub fn run(args: InspectArgs) -> CliResult<()> {
    let InspectArgs {
        file,
        rig,
        write_map,
    } = args;
    formats::check_rest_from(Some(&file), &load_options(&rig))?;
    // A `.vrma` is a glTF whose nodes are its rest humanoid: read as a rig (its
    // VRMC_vrm_animation map is the bone map), then its animations.
    let animations = if reads_as_vrma(&file) {
        let bytes =
            std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let animations = match vrma::parse_all(&bytes, &file) {
            Err(vrma::VrmaError::NoAnimation { .. }) => Vec::new(),
            read => read?,
        };
        Some((vrma::parse_rest(&bytes, &file)?, animations))
    } else {
        None
    };
    let loaded = match animations {
        Some(_) => formats::gltf::load_skeleton(&file)?,
        None => {
            formats::load_rig(&file, &load_options(&rig)).map_err(formats::FormatError::or_vrma)?
        }
    };
    let explicit = explicit_map(rig.map.as_deref())?;
    if let Some(chosen) = &explicit {
        // An explicit map that does not fit is an error, not a remark.
        MappedSkeleton::new(loaded.skeleton.clone(), &chosen.map)
            .map_err(|e| format!("{}: {e}", chosen.source))?;
    }
    let chosen = inspect::choose_map(&loaded, explicit);
    let report = Report::new(&file.display().to_string(), &loaded, chosen.as_ref());
    match &animations {
        Some((rest, animations)) => print!("{}", report.with_vrma(rest, animations)),
        None => print!("{report}"),
    }
    if let Some(out) = write_map {
        let chosen = chosen.ok_or_else(|| {
            format!(
                "{}: no bone map to write: {}",
                file.display(),
                inspect::why_no_map(&loaded)
            )
        })?;
        let text = serde_json::to_string_pretty(&chosen.map.to_json())?;
        std::fs::write(&out, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        println!(
            "\nwrote {}: {} bones ({})",
            out.display(),
            chosen.map.bones.len(),
            chosen.source
        );
    }
    Ok(())
}
