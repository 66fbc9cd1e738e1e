//! Writing a performer's calibration back into the configuration file.

use std::path::Path;

use serde_json::Value;

use super::BridgeConfig;
use crate::ik::calibration::Calibration;

/// Writes `calibration` as `performers.<performer>.calibration` into the
/// configuration file at `path`, keeping everything else in it (notes, order,
/// other settings) as it was, laid out as `serde_json` pretty-prints. The file is replaced whole (written beside it,
/// then renamed), so a crash never leaves half a file. Returns a one-line error
/// naming the file.
pub fn save_calibration(
    path: &Path,
    performer: &str,
    calibration: &Calibration,
) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{}: {what}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| fail("cannot read", &e))?;
    let mut value: Value = serde_json::from_str(&text).map_err(|e| fail("not JSON", &e))?;
    let Value::Object(root) = &mut value else {
        return Err(fail("not a JSON object", &"the configuration is an object"));
    };
    let performers = root
        .entry("performers")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if performers.is_null() {
        *performers = Value::Object(serde_json::Map::new());
    }
    let Value::Object(performers) = performers else {
        return Err(fail(
            "`performers` is not an object",
            &"cannot add a performer",
        ));
    };
    let entry = performers
        .entry(performer)
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(entry) = entry else {
        return Err(fail(
            &format!("`performers.{performer}` is not an object"),
            &"cannot store a calibration",
        ));
    };
    let stored = serde_json::to_value(calibration).map_err(|e| fail("calibration", &e))?;
    entry.insert("calibration".into(), stored);
    let mut out = serde_json::to_string_pretty(&value).map_err(|e| fail("encoding", &e))?;
    out.push('\n');
    // The result must still be a valid configuration.
    BridgeConfig::parse(path, &out).map_err(|e| e.to_string())?;
    let file_name = path
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{file_name}.saving"));
    std::fs::write(&temp, out).map_err(|e| fail("cannot write", &e))?;
    std::fs::rename(&temp, path).map_err(|e| fail("cannot replace", &e))
}
