//! The skeleton files the program ships, embedded in the binary so every command
//! finds them from any directory: the lab's 19-joint capture skeleton and the plain
//! VRM 1.0 T-pose humanoid (the default target). `formats::skeleton_json` parses
//! them; the catalog reads lab19's bone map from the same text.

/// The lab19 skeleton file (`config/skeletons/lab19.json`), embedded.
pub const LAB19_JSON: &str = include_str!("../../config/skeletons/lab19.json");

/// The plain VRM 1.0 T-pose humanoid (`config/skeletons/humanoid.json`), embedded.
pub const HUMANOID_JSON: &str = include_str!("../../config/skeletons/humanoid.json");
