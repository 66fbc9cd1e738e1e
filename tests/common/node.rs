//! Node.js for the tests that run code nobody here wrote (three-vrm-animation, the
//! glTF validator, playwright-core): a folder under `tests/` with a package.json
//! pinning exact versions gets `npm ci` when its node_modules is missing or holds
//! other versions. Missing node/npm or a failed install is an error, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub const NODE: &str = "node";
const NPM: &str = if cfg!(windows) { "npm.cmd" } else { "npm" };

/// `<repo>/<folder>` with its pinned packages installed (running `npm ci` if
/// needed), or why not.
pub fn install(folder: &str) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let version = Command::new(NODE).arg("--version").output().map_err(|e| {
        format!("cannot run `{NODE}` ({e}): these tests need Node.js >= 18 and npm on PATH")
    })?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("`{NODE} --version` printed {version:?}"))?;
    if major < 18 {
        return Err(format!(
            "Node.js {version} is too old: these tests need >= 18"
        ));
    }
    if let Some(why) = needs_install(&dir) {
        eprintln!("{folder}: {why}: running `npm ci` in {}", dir.display());
        let out = Command::new(NPM)
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("cannot run `{NPM}` ({e}): these tests need npm on PATH"))?;
        if !out.status.success() {
            return Err(format!(
                "`npm ci` in {} failed ({}):\n{}{}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if let Some(why) = needs_install(&dir) {
            return Err(format!("after `npm ci` in {}: {why}", dir.display()));
        }
    }
    Ok(dir)
}

/// Why `npm ci` must run, or `None` when every pinned dependency of package.json is
/// installed at its pinned version.
fn needs_install(dir: &Path) -> Option<String> {
    let read =
        |path: &Path| -> Option<Value> { serde_json::from_slice(&std::fs::read(path).ok()?).ok() };
    let Some(manifest) = read(&dir.join("package.json")) else {
        return Some(format!(
            "{}/package.json is not readable JSON",
            dir.display()
        ));
    };
    let Some(deps) = manifest["dependencies"].as_object() else {
        return Some("package.json has no dependencies".into());
    };
    for (name, pinned) in deps {
        let installed = read(&dir.join("node_modules").join(name).join("package.json"));
        match installed.as_ref().and_then(|p| p["version"].as_str()) {
            None => return Some(format!("{name} is not installed")),
            Some(v) if Some(v) != pinned.as_str() => {
                return Some(format!(
                    "{name} {v} is installed, package.json pins {pinned}"
                ));
            }
            Some(_) => {}
        }
    }
    None
}

/// Runs `node SCRIPT ARGS...` for a script that prints one JSON object and exits 0,
/// or 1 when some of its files failed (their entries say why); returns the JSON.
pub fn run_json(script: &Path, args: &[std::ffi::OsString]) -> Result<Value, String> {
    let out = Command::new(NODE)
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `{NODE}`: {e}"))?;
    let json: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    match (out.status.code(), json) {
        (Some(0 | 1), Some(json)) => Ok(json),
        (_, _) => Err(format!(
            "`node {}` failed ({}):\nstdout: {}\nstderr: {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}
