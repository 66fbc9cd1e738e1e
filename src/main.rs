//! The `mocap-bridge` command line: parses arguments, loads files, calls the library.
//! Errors print as `error: …` with each cause on its own line, and exit with code 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mocap_bridge::formats::{self, LoadOptions, Units, UpAxis};
use mocap_bridge::inspect::{self, ChosenMap, Report};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::skeleton::NamedBoneMap;

#[derive(Parser)]
#[command(
    name = "mocap-bridge",
    version,
    about = "Live motion capture onto VRM 1.0 humanoids"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options shared by commands that read rigs.
#[derive(clap::Args, Clone)]
struct RigArgs {
    /// Bone map JSON (`{"hips": "Hips", ...}` or a skeleton file's `boneMap`);
    /// default: the file's own humanoid map, else the catalog map that fits.
    #[arg(long, value_name = "MAP")]
    map: Option<PathBuf>,
    /// Units of BVH/JSON files: m, cm, mm, in, or metres per unit (default: from
    /// the file, else guessed from the figure's height).
    #[arg(long, value_parser = parse_units)]
    units: Option<Units>,
    /// Up axis of BVH/JSON files: y or z (default: from the file, else guessed).
    #[arg(long, value_parser = parse_up)]
    up: Option<UpAxis>,
}

#[derive(Subcommand)]
enum Command {
    /// Print a rig's joint tree, its bone map, its rest pose and the correction to
    /// the T-pose, and every problem found.
    Inspect {
        /// A .bvh, .glb, .gltf, .vrm or skeleton .json file.
        file: PathBuf,
        #[command(flatten)]
        rig: RigArgs,
    },
}

fn parse_units(s: &str) -> Result<Units, String> {
    Units::parse(s).ok_or_else(|| format!("`{s}` is not m, cm, mm, in or a positive number"))
}

fn parse_up(s: &str) -> Result<UpAxis, String> {
    UpAxis::parse(s).ok_or_else(|| format!("`{s}` is not y or z"))
}

type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let message = err.to_string();
            eprintln!("error: {message}");
            let mut source = err.source();
            while let Some(cause) = source {
                // Messages that already quote their cause are not repeated.
                let text = cause.to_string();
                if !message.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                source = cause.source();
            }
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> CliResult<()> {
    match cli.command {
        Command::Inspect { file, rig } => {
            let loaded = formats::load_rig(&file, &load_options(&rig))?;
            let explicit = explicit_map(rig.map.as_deref())?;
            if let Some(chosen) = &explicit {
                // An explicit map that does not fit is an error, not a remark.
                MappedSkeleton::new(loaded.skeleton.clone(), &chosen.map)
                    .map_err(|e| format!("{}: {e}", chosen.source))?;
            }
            let chosen = inspect::choose_map(&loaded, explicit);
            print!(
                "{}",
                Report::new(&file.display().to_string(), &loaded, chosen.as_ref())
            );
            Ok(())
        }
    }
}

fn load_options(rig: &RigArgs) -> LoadOptions {
    LoadOptions {
        units: rig.units,
        up: rig.up,
    }
}

fn explicit_map(path: Option<&Path>) -> CliResult<Option<ChosenMap>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let map = NamedBoneMap::load(path)?;
    Ok(Some(ChosenMap {
        source: path.display().to_string(),
        map,
    }))
}
