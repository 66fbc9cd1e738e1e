//! `avatar`: writes the avatar the bridge ships, the mannequin VRM 1.0
//! (`formats::mannequin`), to a file, to open in any VRM viewer or tool, or to
//! change and stream into.

use std::path::PathBuf;

use mocap_bridge::formats::glb::GlbFile;
use mocap_bridge::formats::mannequin::{self, Mannequin};

use super::CliResult;

/// Options of `avatar`.
#[derive(clap::Args)]
pub struct AvatarArgs {
    /// The .vrm file to write (overwritten when it exists).
    #[arg(short, long, value_name = "OUT.vrm")]
    pub output: PathBuf,
}

/// `avatar`: writes the mannequin, prints one summary line.
pub fn run(args: AvatarArgs) -> CliResult<()> {
    let mannequin = Mannequin::new(&mannequin::rest());
    mannequin
        .write_file(&args.output)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    let vrm = &mannequin.json()["extensions"]["VRMC_vrm"];
    let count = |value: &serde_json::Value| value.as_object().map_or(0, |o| o.len());
    println!(
        "wrote {}: {} (VRM 1.0, {} humanoid bones, {} expressions, licence {})",
        args.output.display(),
        mannequin::NAME,
        count(&vrm["humanoid"]["humanBones"]),
        count(&vrm["expressions"]["preset"]),
        mannequin::LICENSE_URL,
    );
    Ok(())
}
