//! `.vrma` writing and reading at recording scale.
//!
//! First, once: a one-hour, 120 Hz, 55-bone take (432,000 frames) is pushed into a
//! `VrmaWriter` and written to a file, then read back; each step's time and peak
//! memory (resident set high-water mark, reset between steps through
//! `/proc/self/clear_refs`) is printed next to the file size, and
//! @pixiv/three-vrm-animation loads the same file (`tests/interop/time_load.mjs`,
//! when node and the interop packages are installed) for the ratio. Then the same
//! for a one-minute take, and criterion measures writing and reading that take.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::Criterion;
use glam::{Quat, Vec3};
use mocap_bridge::formats::glb::GlbFile;
use mocap_bridge::formats::vrma::{self, VrmaRest, VrmaWriter};
use mocap_bridge::humanoid::bone::ALL;
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};

/// A pose for frame `i` at 120 Hz with every bone turning.
fn pose(i: usize) -> HumanoidPose {
    let t = i as f32 / 120.0;
    let mut pose = HumanoidPose::default();
    for (k, bone) in ALL.iter().enumerate() {
        let axis = Vec3::new(1.0, k as f32 * 0.37, 0.5).normalize();
        pose.set_rotation(
            *bone,
            Quat::from_axis_angle(axis, 0.4 * (t + k as f32).sin()),
        );
    }
    pose.hips_position = Vec3::new(t.sin(), 0.9 + 0.02 * (3.0 * t).sin(), t.cos());
    pose.rest_hips_height = 0.9;
    pose
}

fn record(frames: usize) -> VrmaWriter {
    let names = CustomNames::default();
    let mut writer = VrmaWriter::new(VrmaRest::standard(0.9), "bench");
    for i in 0..frames {
        writer
            .push(i as f32 / 120.0, &pose(i), &names)
            .expect("increasing times");
    }
    writer
}

/// Peak resident memory since the last reset, bytes (Linux; 0 elsewhere).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn current_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn one_hour(dir: &Path) {
    let frames = 432_000;
    let path = dir.join("hour.vrma");

    reset_peak();
    let base = current_rss();
    let started = Instant::now();
    let writer = record(frames);
    let pushed = started.elapsed();
    writer.save(&path).expect("write the hour");
    let written = started.elapsed();
    drop(writer);
    let write_peak = peak_rss().saturating_sub(base);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);

    reset_peak();
    let base = current_rss();
    let started = Instant::now();
    let animation = vrma::load(&path, None).expect("read the hour");
    let read = started.elapsed();
    let read_peak = peak_rss().saturating_sub(base);
    let mut pose = HumanoidPose::default();
    animation.sample(1800.0, &mut pose);
    black_box(&pose);
    drop(animation);

    println!(
        "one hour at 120 Hz, 55 bones ({frames} frames, file {:.0} MiB):\n  \
         write {:.2} s (push {:.2} s + file {:.2} s), peak {:.0} MiB = {:.2}x the file\n  \
         read  {:.2} s, peak {:.0} MiB = {:.2}x the file",
        mib(size),
        written.as_secs_f64(),
        pushed.as_secs_f64(),
        (written - pushed).as_secs_f64(),
        mib(write_peak),
        write_peak as f64 / size as f64,
        read.as_secs_f64(),
        mib(read_peak),
        read_peak as f64 / size as f64,
    );
    match three_vrm_load_ms(&path, 1) {
        Some(theirs) => println!(
            "  three-vrm-animation loads the same file in {:.2} s: our reader is {:.0}x faster",
            theirs / 1e3,
            theirs / 1e3 / read.as_secs_f64()
        ),
        None => println!(
            "  three-vrm-animation not installed (npm ci --prefix tests/interop): no ratio"
        ),
    }
    let _ = std::fs::remove_file(&path);
}

/// Loads `path` with three-vrm-animation under node `repeat` times; best time in ms.
fn three_vrm_load_ms(path: &Path, repeat: u32) -> Option<f64> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/time_load.mjs");
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/node_modules");
    if !modules.is_dir() {
        return None;
    }
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(path)
        .args(["--repeat", &repeat.to_string()])
        .output()
        .ok()?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    report["best_ms"].as_f64()
}

fn main() {
    let dir = tempfile::tempdir().expect("temporary directory");
    one_hour(dir.path());

    let minute = record(120 * 60);
    let path = dir.path().join("minute.vrma");
    minute.save(&path).expect("write the minute");
    let bytes = std::fs::read(&path).expect("read the minute");
    let ours = (0..5)
        .map(|_| {
            let started = Instant::now();
            black_box(vrma::parse(&bytes, &path, None).expect("parse"));
            started.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min);
    match three_vrm_load_ms(&path, 5) {
        Some(theirs) => println!(
            "one minute ({} KiB): our reader {ours:.1} ms, three-vrm-animation {theirs:.1} ms: {:.1}x faster",
            bytes.len() / 1024,
            theirs / ours
        ),
        None => {
            println!("three-vrm-animation not installed (npm ci --prefix tests/interop): no ratio")
        }
    }

    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(3))
        .configure_from_args();
    c.bench_function("vrma write one minute at 120 Hz (7,200 frames)", |b| {
        b.iter(|| black_box(record(120 * 60).to_bytes()))
    });
    c.bench_function("vrma read one minute at 120 Hz (7,200 frames)", |b| {
        b.iter(|| black_box(vrma::parse(&bytes, &path, None).expect("parse")))
    });
    c.final_summary();
}
