//! Recordings through the running bridge: a replay recorded back gives the same
//! motion, and a bridge killed with SIGKILL mid-take leaves a journal that
//! `recover` turns into a .vrma holding every frame up to the last flush.

use std::path::{Path, PathBuf};
use std::time::Duration;

use glam::Vec3;
use mocap_bridge::formats::vrma;
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::record::journal;
use mocap_bridge::takes::replay::Replay;
use serde_json::json;

use crate::common::angle_deg;
use crate::harness::{Bridge, alone, quiet_config, repo};
use crate::vmc::sample_frames;

/// Every frame of a .vrma.
pub fn frames_of(path: &Path) -> Vec<(f32, HumanoidPose)> {
    let animation = vrma::load(path, None).expect("loads");
    let mut replay = Replay::from_vrma(animation, None);
    let mut pose = HumanoidPose::default();
    let mut frames = Vec::new();
    while let Some(t) = replay.next_frame(&mut pose) {
        frames.push((t, pose));
    }
    frames
}

/// Worst bone angle (degrees) and hips distance (metres) between two poses.
pub fn difference(a: &HumanoidPose, b: &HumanoidPose) -> (f32, f32) {
    let mut worst = 0.0f32;
    for (bone, q) in a.bones() {
        let r = b.rotation(bone).unwrap_or_else(|| panic!("{bone} missing"));
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            worst = worst.max(angle_deg(q * axis, r * axis));
        }
    }
    (worst, a.hips_position.distance(b.hips_position))
}

pub fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("recordings")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap_or_default()
}

/// Runs `mocap-bridge recover` on the one journal in `recordings` (a killed
/// bridge's); returns the recovered take's frames and the line it printed.
fn recover_take(recordings: &Path) -> (Vec<(f32, HumanoidPose)>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .arg("recover")
        .arg(only_file(recordings, ".journal"))
        .output()
        .expect("recover");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (frames_of(&only_file(recordings, ".vrma")), said)
}

#[test]
fn a_replay_recorded_through_the_bridge_is_the_same_motion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let bridge = Bridge::start(
        dir.path(),
        &quiet_config(),
        &["--replay", sample, "--record", "--fast"],
    );
    let (code, lines, stderr) = bridge.finish();
    assert_eq!(code, 0, "{stderr}");
    let take = only_file(&dir.path().join("recordings"), ".vrma");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("wrote ") && l.contains("480 frames")),
        "{lines:?}"
    );
    // The status counts what the recorder recorded.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("recorder: 480 frames 0 drops")),
        "{lines:?}"
    );
    let source = sample_frames();
    let recorded = frames_of(&take);
    assert_eq!(recorded.len(), source.len());
    let (mut worst, mut hips) = (0.0f32, 0.0f32);
    for ((ts, a), (tr, b)) in source.iter().zip(&recorded) {
        assert!((ts - tr).abs() < 1e-5, "{ts} vs {tr}");
        let (w, h) = difference(a, b);
        worst = worst.max(w);
        hips = hips.max(h);
    }
    println!(
        "replay → run --record: {}/{} frames, worst {worst:.6}°, hips {:.6} mm",
        recorded.len(),
        source.len(),
        hips * 1e3
    );
    assert!(worst <= 0.01 && hips <= 1e-5, "{worst}° {hips} m");
}

#[test]
fn after_kill_9_recover_gets_every_frame_up_to_the_last_flush() {
    // A flush is due every 100 ms of the wall clock: no other test's bridge runs
    // meanwhile.
    let _alone = alone();
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let mut config = quiet_config();
    config["status"]["monitorIntervalS"] = json!(0.25);
    config["recorder"] = json!({"flushMs": 100});
    let mut bridge = Bridge::start(
        dir.path(),
        &config,
        &["--replay", sample, "--loop", "--record"],
    );
    // The monitor's line says which frame the solver had reached; wait well past
    // a flush interval after it, then kill without warning.
    for _ in 0..5 {
        bridge.wait_for_line("frame", Duration::from_secs(20));
    }
    let line = bridge.wait_for_line("frame", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    let seen: u64 = line
        .split_whitespace()
        .skip_while(|w| *w != "frame")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a frame number");
    let _ = bridge.child.kill(); // SIGKILL
    let _ = bridge.child.wait();

    let recordings = dir.path().join("recordings");
    let (recovered, said) = recover_take(&recordings);
    println!(
        "kill -9 after frame {seen} was solved: {} frames recovered ({said})",
        recovered.len()
    );
    assert!(
        recovered.len() as u64 >= seen,
        "{} < {seen}",
        recovered.len()
    );
    // They are the replayed stream, in order, looping.
    let source = sample_frames();
    let period = source.last().map_or(0.0, |(t, _)| *t) + 1.0 / 60.0;
    let mut worst = 0.0f32;
    for (i, (t, pose)) in recovered.iter().enumerate() {
        let (ts, want) = &source[i % source.len()];
        let expected_t = ts + period * (i / source.len()) as f32;
        assert!(
            (t - expected_t).abs() < 1e-3,
            "frame {i}: {t} vs {expected_t}"
        );
        worst = worst.max(difference(want, pose).0);
    }
    assert!(worst <= 0.01, "{worst}°");
}

#[test]
fn ten_kill_9s_each_lose_at_most_the_flush_interval() {
    // What a kill loses is measured on the wall clock against a flush every 100 ms:
    // no other test's bridge runs meanwhile.
    let _alone = alone();
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let mut config = quiet_config();
    config["recorder"] = json!({"flushMs": 100});
    // Kill times spread over 0.3-2.3 s after the bridge is ready (a fixed
    // pseudo-random sequence, so a failure can be replayed).
    let mut seed: u32 = 0x2545_f491;
    let mut worst = 0.0f64;
    for run in 0..10 {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let wait = 0.3 + 2.0 * f64::from(seed >> 8) / f64::from(1u32 << 24);
        let dir = tempfile::tempdir().expect("tempdir");
        let mut bridge = Bridge::start(
            dir.path(),
            &config,
            &["--replay", sample, "--loop", "--record"],
        );
        std::thread::sleep(Duration::from_secs_f64(wait));
        let killed_at = std::time::SystemTime::now();
        let _ = bridge.child.kill(); // SIGKILL
        let _ = bridge.child.wait();

        let recordings = dir.path().join("recordings");
        let started = journal::JournalReader::open(&only_file(&recordings, ".journal"))
            .expect("a journal")
            .header()
            .created;
        let (recovered, _) = recover_take(&recordings);
        let last = recovered.last().map_or(0.0, |(t, _)| f64::from(*t));
        // The replay streams in real time from the take's first frame (the
        // journal's creation), so the frames up to the kill span this long:
        let lived = killed_at
            .duration_since(started)
            .expect("killed after the take started")
            .as_secs_f64();
        let lost = lived - last;
        println!(
            "kill -9 #{run} after {wait:.2} s: {} frames kept, last at {last:.3} s of {lived:.3} s: {:.1} ms lost",
            recovered.len(),
            lost * 1e3
        );
        worst = worst.max(lost);
    }
    println!(
        "worst loss over 10 kill -9s: {:.1} ms (flushMs 100)",
        worst * 1e3
    );
    assert!(worst <= 0.100, "lost {:.1} ms", worst * 1e3);
}

#[test]
fn a_take_stops_at_its_bound_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let mut config = quiet_config();
    config["recorder"] = json!({"maxMinutes": 0.05});
    let bridge = Bridge::start(
        dir.path(),
        &config,
        &["--replay", sample, "--loop", "--record", "--fast"],
    );
    let take = dir.path().join("recordings/walk-and-wave.vrma");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !take.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("stopped recording walk-and-wave into")
            && stderr.contains("it reached the longest take allowed, 3 s (recorder.maxMinutes)"),
        "{stderr}"
    );
    let frames = frames_of(&take);
    let last = frames.last().map_or(0.0, |(t, _)| *t);
    println!(
        "a take bounded at 3 s: {} frames up to {last:.3} s",
        frames.len()
    );
    assert!((3.0..3.0 + 1.5 / 60.0).contains(&last), "{last}");
    assert_eq!(frames.len(), 181, "3 s at 60 Hz, both ends");
}

#[test]
fn no_take_starts_on_a_disk_without_the_room_it_needs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo().join("recordings/walk-and-wave.vrma");
    let sample = sample.to_str().expect("utf-8 path");
    let mut config = quiet_config();
    // More free space than any disk has.
    config["recorder"] = json!({"minFreeMegabytes": 1_000_000_000_000u64});
    let bridge = Bridge::start(
        dir.path(),
        &config,
        &["--replay", sample, "--record", "--fast"],
    );
    let (code, _, stderr) = bridge.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("cannot start recording walk-and-wave: the recordings disk has")
            && stderr.contains("MB free, less than recorder.minFreeMegabytes"),
        "{stderr}"
    );
    let recordings = dir.path().join("recordings");
    let written = std::fs::read_dir(&recordings).map_or(0, |d| d.count());
    assert_eq!(written, 0, "nothing written");
}
