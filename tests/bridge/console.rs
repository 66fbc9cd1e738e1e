//! What `run` prints on stdout: the ready line first; with `--quiet`, the
//! performers' motion lines go, and the lines saying when a performer appeared
//! and went stay.

use crate::harness::{Bridge, quiet_config, repo};

#[test]
fn quiet_drops_the_motion_lines_and_keeps_appeared_and_gone() {
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let mut config = quiet_config();
    config["status"]["monitorIntervalS"] = 0.1.into();
    for (quiet, args) in [
        (false, vec!["--replay", sample, "--duration", "1.5"]),
        (
            true,
            vec!["--replay", sample, "--duration", "1.5", "--quiet"],
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let bridge = Bridge::start(dir.path(), &config, &args);
        let (code, lines, stderr) = bridge.finish();
        assert_eq!(code, 0, "{stderr}");
        let all = lines.join("\n");
        let has = |line: &str| lines.iter().any(|l| l == line);
        assert!(has("performer walk-and-wave appeared (Humanoid)"), "{all}");
        // The ready line before any performer's.
        assert!(lines[0].starts_with("ready: "), "{all}");
        assert!(has("performer walk-and-wave gone"), "{all}");
        let motion = lines
            .iter()
            .filter(|l| l.trim_start().starts_with("walk-and-wave frame"))
            .count();
        println!("quiet {quiet}: {motion} motion lines");
        if quiet {
            assert_eq!(motion, 0, "{all}");
        } else {
            assert!(motion > 0, "{all}");
        }
    }
}
