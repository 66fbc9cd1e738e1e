//! Where the corpus of real files lives: avatars, rigs and captures from public
//! sources that the tests and benchmarks measure the program on. One place, so a
//! user or CI can point every test at another copy of the corpus.

use std::path::PathBuf;

/// The environment variable naming the corpus folder; unset, it is
/// `../shared/assets` beside the crate.
pub const ASSETS_VAR: &str = "MOCAP_BRIDGE_ASSETS";

/// The corpus folder (`$MOCAP_BRIDGE_ASSETS`, else `../shared/assets` beside the
/// crate), or `None` after printing a skip message when it is absent: a user's
/// clone may not have it.
#[must_use]
pub fn assets_dir() -> Option<PathBuf> {
    let dir = std::env::var_os(ASSETS_VAR).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets"),
        PathBuf::from,
    );
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: the real-file corpus {} is absent (set {ASSETS_VAR})",
            dir.display()
        );
        None
    }
}
