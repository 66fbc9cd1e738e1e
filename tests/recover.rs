//! `mocap-bridge recover` as a user meets it after a crash: a take recorded through
//! the library's `Recording` and never finished (the process died), turned into a
//! `.vrma` by the built binary and read back with the project's reader, frame for
//! frame; bad journals give one line naming the file, exit code 2, no panic. Also
//! checks that appending to a journal does not allocate once warmed up.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt, Preset};
use mocap_bridge::record::journal::{JournalHeader, JournalWriter, Recording};

use common::quat_diff;

/// Counts this thread's allocations, for the allocation test.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed straight to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn bridge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Asserts a one-line error on stderr, exit code 2, containing every `needle`.
fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(lines[0].contains(needle), "`{needle}` missing: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Frame `i` of a take: the demo performance, presets, a custom expression named
/// from frame 20 on, and a lookAt from frame 30 on.
fn frame(i: usize, names: &mut CustomNames) -> (f32, HumanoidPose) {
    let t = i as f32 / 60.0;
    let mut pose = mocap_bridge::takes::demo::pose_at(t, 0.92);
    pose.expressions
        .set_preset(Preset::Happy, (t * 0.7).min(1.0));
    pose.expressions
        .set_preset(Preset::Blink, (i % 7) as f32 / 7.0);
    if i >= 20 {
        let slot = names.slot_or_insert("smirk").expect("a free slot");
        pose.expressions.set_custom(slot, (i % 11) as f32 / 11.0);
    }
    if i >= 30 {
        pose.look_at = Some(LookAt {
            yaw: 0.2 * (t * 3.0).sin(),
            pitch: -0.1,
        });
    }
    (t, pose)
}

/// Records `count` frames, flushing every 6 as the recorder would every 100 ms,
/// then 3 frames that are never flushed, and dies without finishing. Returns the
/// journal and the flushed frames with the names in force for each.
fn crashed_take(dir: &Path, count: usize) -> (PathBuf, Vec<(f32, HumanoidPose, CustomNames)>) {
    let mut recording = Recording::start(dir, "take 1", "alice", VrmaRest::standard(0.92)).unwrap();
    let mut names = CustomNames::default();
    let mut flushed = Vec::new();
    for i in 0..count + 3 {
        let (t, pose) = frame(i, &mut names);
        recording.push(t, &pose, &names).unwrap();
        if i < count {
            flushed.push((t, pose, names.clone()));
        }
        if i < count && (i % 6 == 5 || i + 1 == count) {
            recording.flush().unwrap();
        }
    }
    let journal = recording.journal_path().to_owned();
    // Killed: no finish, no drop; the last 3 frames never reached the file.
    std::mem::forget(recording);
    (journal, flushed)
}

fn header() -> JournalHeader {
    JournalHeader {
        performer: "alice".into(),
        animation: "take".into(),
        rest: VrmaRest::standard(0.92),
        created: std::time::SystemTime::now(),
    }
}

#[test]
fn a_crashed_take_recovers_frame_for_frame() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, frames) = crashed_take(dir.path(), 90);
    assert_eq!(journal, dir.path().join("take 1.vrma.journal"));

    let out = bridge(&["recover", arg(&journal)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = dir.path().join("take 1.vrma");
    assert!(
        stdout.contains(&format!("wrote {}: 90 frames, 1.48 s", written.display())),
        "{stdout}"
    );
    assert!(stdout.contains("torn tail dropped: 0 bytes"), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");

    let read = vrma::load(&written, None).unwrap();
    assert_eq!(read.name.as_deref(), Some("take 1"));
    let times: Vec<f32> = frames.iter().map(|f| f.0).collect();
    assert_eq!(read.frame_times(), times.as_slice(), "times exact");
    let smirk = read
        .custom_names()
        .slot("smirk")
        .expect("the custom expression");
    for (t, want, names) in &frames {
        let mut got = HumanoidPose::default();
        read.sample(*t, &mut got);
        for (bone, q) in want.bones() {
            if matches!(bone, HumanBone::LeftEye | HumanBone::RightEye) {
                continue; // the lookAt carries the gaze
            }
            let r = got.rotation(bone).expect("a recorded bone");
            assert!(quat_diff(q, r) < 1e-6, "{bone} at {t}: {q} vs {r}");
        }
        assert!(
            got.hips_position.distance(want.hips_position) < 1e-6,
            "hips at {t}"
        );
        for (preset, w) in want.expressions.presets() {
            let got = got.expressions.preset(preset).expect("a recorded preset");
            assert!((got - w).abs() < 1e-6, "{preset} at {t}");
        }
        let custom = names.slot("smirk").and_then(|s| want.expressions.custom(s));
        let got_custom = got.expressions.custom(smirk).expect("a weight");
        assert!(
            (got_custom - custom.unwrap_or(0.0)).abs() < 1e-6,
            "smirk at {t}"
        );
        match (want.look_at, got.look_at) {
            (Some(w), Some(g)) => {
                assert!((w.yaw - g.yaw).abs() < 1e-5 && (w.pitch - g.pitch).abs() < 1e-5);
            }
            (None, _) => {}
            (Some(_), None) => panic!("lookAt lost at {t}"),
        }
    }
    assert!(journal.exists(), "recover leaves the journal alone");
}

#[test]
fn recover_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = crashed_take(dir.path(), 12);
    let out = dir.path().join("out.vrma");
    std::fs::write(&out, b"precious").unwrap();
    let refused = bridge(&["recover", arg(&journal), "-o", arg(&out)]);
    assert_one_line_error(&refused, &[arg(&out), "already exists", "--force"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");

    let forced = bridge(&["recover", arg(&journal), "-o", arg(&out), "--force"]);
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    assert_eq!(vrma::load(&out, None).unwrap().frame_times().len(), 12);
    let onto_itself = bridge(&["recover", arg(&journal), "-o", arg(&journal), "--force"]);
    assert_one_line_error(&onto_itself, &["the journal itself"]);
    assert!(!dir.path().join("out.vrma.partial").exists());
}

#[test]
fn a_torn_tail_is_dropped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, frames) = crashed_take(dir.path(), 30);
    let bytes = std::fs::read(&journal).unwrap();
    let torn = dir.path().join("torn.vrma.journal");
    std::fs::write(&torn, &bytes[..bytes.len() - 10]).unwrap();

    let out = bridge(&["recover", arg(&torn)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(": 29 frames"), "{stdout}");
    assert!(stdout.contains("the last record is cut short"), "{stdout}");
    let dropped = stdout
        .split("torn tail dropped: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .expect("a byte count");
    assert!(dropped > 0 && dropped < 2000, "{stdout}");
    let read = vrma::load(&dir.path().join("torn.vrma"), None).unwrap();
    assert_eq!(read.frame_times().len(), 29);
    assert_eq!(read.frame_times().last(), Some(&frames[28].0));
}

#[test]
fn a_journal_with_a_damaged_header_or_record_keeps_every_frame_whose_record_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, frames) = crashed_take(dir.path(), 90);
    let bytes = std::fs::read(&journal).unwrap();
    let body = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let header_len = 14 + body + 4;
    let times: Vec<f32> = frames.iter().map(|f| f.0).collect();

    // One flipped bit in the header: every frame after it is intact.
    let mut header_hit = bytes.clone();
    header_hit[header_len / 2] ^= 0x08;
    let path = dir.path().join("header hit.vrma.journal");
    std::fs::write(&path, &header_hit).unwrap();
    let out = bridge(&["recover", arg(&path)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains(": 90 frames"), "{stdout}");
    assert!(
        stdout.contains("performer unknown, take \"header hit\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("the header is damaged (byte ")
            && stdout.contains(&format!("bytes 0..{header_len} left out")),
        "{stdout}"
    );
    let read = vrma::load(&dir.path().join("header hit.vrma"), None).unwrap();
    assert_eq!(read.frame_times(), times.as_slice());
    for (t, want, _) in &frames {
        let mut got = HumanoidPose::default();
        read.sample(*t, &mut got);
        for (bone, q) in want.bones() {
            if matches!(bone, HumanBone::LeftEye | HumanBone::RightEye) {
                continue;
            }
            let r = got.rotation(bone).expect("a recorded bone");
            assert!(quat_diff(q, r) < 1e-6, "{bone} at {t}: {q} vs {r}");
        }
    }

    // One flipped bit in a frame record in the middle: only that frame is lost.
    let mut record_hit = bytes;
    let at = header_len + (record_hit.len() - header_len) / 2;
    record_hit[at] ^= 0x08;
    let path = dir.path().join("record hit.vrma.journal");
    std::fs::write(&path, &record_hit).unwrap();
    let out = bridge(&["recover", arg(&path)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(": 89 frames"), "{stdout}");
    assert!(
        stdout.contains("damaged bytes left out at byte "),
        "{stdout}"
    );
    let read = vrma::load(&dir.path().join("record hit.vrma"), None).unwrap();
    let kept: Vec<f32> = read.frame_times();
    assert_eq!(kept.len(), 89);
    assert!(
        kept.iter().all(|t| times.contains(t)),
        "only the take's own frames"
    );
    assert_eq!(
        kept.last(),
        times.last(),
        "the frames after the damage are kept"
    );
}

#[test]
fn bad_journals_fail_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = crashed_take(dir.path(), 3);
    let real = std::fs::read(&journal).unwrap();
    // The journal of a take that crashed before its first frame.
    let empty_take = dir.path().join("empty take.journal");
    drop(JournalWriter::create(&empty_take, &header()).unwrap());
    let header_only = std::fs::read(&empty_take).unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "garbage.journal",
            b"this is not a journal at all",
            "byte 0: not a mocap-bridge journal",
        ),
        ("empty.journal", b"", "byte 0: the file is empty"),
        (
            "cut.journal",
            &real[..20],
            "byte 20: the journal header is cut short",
        ),
        ("header-only.journal", &header_only, "no complete frame"),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = bridge(&["recover", arg(&path)]);
        assert_one_line_error(&out, &[arg(&path), expected]);
        assert!(!dir.path().join(name.replace(".journal", ".vrma")).exists());
    }
}

#[test]
fn appending_to_a_journal_does_not_allocate_once_warmed_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = JournalWriter::create(&dir.path().join("t.journal"), &header()).unwrap();
    let mut names = CustomNames::default();
    let poses: Vec<(f32, HumanoidPose)> = (0..600).map(|i| frame(i, &mut names)).collect();
    let mut pose_names = CustomNames::default();
    pose_names.slot_or_insert("smirk");
    let warm_up = 100;
    for (t, pose) in &poses[..warm_up] {
        writer.append(*t, pose, &pose_names).unwrap();
    }
    writer.flush().unwrap();
    let before = ALLOCATIONS.with(Cell::get);
    for (i, (t, pose)) in poses[warm_up..].iter().enumerate() {
        writer.append(*t, pose, &pose_names).unwrap();
        // Rarely enough that appends also pass the buffer's write-out threshold.
        if i % 200 == 199 {
            writer.flush().unwrap();
        }
    }
    writer.flush().unwrap();
    assert_eq!(ALLOCATIONS.with(Cell::get) - before, 0);
}
