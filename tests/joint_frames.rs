//! A glTF rig whose joints' local frames are turned is the same figure doing the same
//! motion: every glTF and GLB file under `../shared/assets` is written again by
//! `tests/corpus/reframe.py` (a tool of its own, reading glTF as the specification says,
//! not as this program does) with one quarter-turn rotation for every joint (a writer in
//! another axis convention: three of them) and with a random turn per joint (no
//! convention), and
//! read again: it loads or is refused as the original is, gets the same bone map, rest
//! class and facing, and every clip's humanoid pose is the original's at every frame
//! (0.01°, 0.1 mm). Files that no rewrite touches (VRM, VRM Animation) are left out, with a
//! line saying so. Skips with a message when the assets are absent; needs `python3`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::assets;
use glam::Quat;
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::{LoadOptions, Rig, load_rig};
use mocap_bridge::humanoid::HumanoidPose;
use mocap_bridge::retarget::{MappedSkeleton, SourceRig, ToNormalized};

/// The rewrites: (mode, seed) as `reframe.py` takes them. Axis seeds 1, 9 and 15 turn
/// every joint's axes a half turn about Y, a quarter turn about Z (X onto Y: bones along
/// Y where they ran along X) and a third of a turn about the diagonal (X onto Y onto Z).
const REWRITES: [(&str, u64); 4] = [("axis", 1), ("axis", 9), ("axis", 15), ("any", 1)];

/// Largest turn between a clip's humanoid poses, original against rewrite, degrees.
const SAME_TURN_DEG: f32 = 0.01;

/// Largest distance between their hips positions, metres.
const SAME_PLACE_M: f32 = 1e-4;

/// Every `.glb` and `.gltf` below `dir`, sorted.
fn gltf_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if path.is_dir() {
                stack.push(path);
            } else if ext.eq_ignore_ascii_case("glb") || ext.eq_ignore_ascii_case("gltf") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Runs the rewrite; `None` (with the tool's reason) for a file it leaves alone.
fn rewrite(file: &Path, out: &Path, mode: &str, seed: u64) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/reframe.py");
    let run = Command::new("python3")
        .arg(&script)
        .arg(file)
        .arg(out)
        .arg(mode)
        .arg(seed.to_string())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "python3 {}: {e} (the tests need Python 3)",
                script.display()
            )
        });
    let said = String::from_utf8_lossy(&run.stdout).trim().to_owned();
    match run.status.code() {
        Some(0) => None,
        Some(3) => Some(said),
        _ => panic!(
            "reframe.py {} {mode} {seed}: {said} {}",
            file.display(),
            String::from_utf8_lossy(&run.stderr)
        ),
    }
}

/// What is compared of a loaded rig: its map (bone → joint name), its mapped
/// skeleton, or the reason it has none.
enum Read {
    Refused(String),
    Unmapped,
    Mapped(Box<(Rig, MappedSkeleton)>, Vec<(String, String)>),
}

fn read(path: &Path) -> Read {
    let rig = match load_rig(path, &LoadOptions::default()) {
        Ok(rig) => rig,
        Err(e) => return Read::Refused(e.to_string()),
    };
    let Some(chosen) = choose_map(&rig, None) else {
        return Read::Unmapped;
    };
    let bones = chosen
        .map
        .bones
        .iter()
        .map(|(bone, joint)| (format!("{bone:?}"), joint.clone()))
        .collect();
    let mapped = MappedSkeleton::new(rig.skeleton.clone(), &chosen.map)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Read::Mapped(Box::new((rig, mapped)), bones)
}

fn angle_deg(a: Quat, b: Quat) -> f32 {
    let d = a.inverse() * b;
    (2.0 * d.xyz().length().atan2(d.w.abs())).to_degrees()
}

/// Every clip's humanoid pose, frame by frame: the worst turn (degrees) and hips
/// distance (metres) between the two rigs.
fn worst_pose_difference(a: (&Rig, &MappedSkeleton), b: (&Rig, &MappedSkeleton)) -> (f32, f32) {
    let (source_a, source_b) = (SourceRig::new(a.1), SourceRig::new(b.1));
    let (mut pose_a, mut pose_b) = (HumanoidPose::default(), HumanoidPose::default());
    let (mut turn, mut place) = (0.0f32, 0.0f32);
    assert_eq!(a.0.clips.len(), b.0.clips.len(), "clips");
    for (clip_a, clip_b) in a.0.clips.iter().zip(&b.0.clips) {
        assert_eq!(clip_a.name, clip_b.name);
        let (ma, mb) = (&clip_a.motion, &clip_b.motion);
        assert_eq!(
            ma.frame_count(),
            mb.frame_count(),
            "frames of `{}`",
            clip_a.name
        );
        for (fa, fb) in ma.frames().zip(mb.frames()) {
            for (source, frame, pose) in
                [(&source_a, &fa, &mut pose_a), (&source_b, &fb, &mut pose_b)]
            {
                ToNormalized {
                    source,
                    local_rotations: frame.rotations,
                    local_translations: frame.translations,
                    pose,
                }
                .run()
                .expect("a clip frame retargets");
            }
            for (bone, ra) in pose_a.bones() {
                let rb = pose_b.rotation(bone).expect("the same bones");
                turn = turn.max(angle_deg(ra, rb));
            }
            place = place.max(pose_a.hips_position.distance(pose_b.hips_position));
        }
    }
    (turn, place)
}

#[test]
fn a_rig_with_its_joint_frames_turned_reads_and_moves_as_the_original() {
    let Some(dir) = assets() else { return };
    let out = tempfile::tempdir().expect("a temporary directory");
    let (mut compared, mut mapped, mut clips) = (0, 0, 0);
    let mut failures = Vec::new();
    for file in gltf_files(&dir) {
        let original = read(&file);
        for (mode, seed) in REWRITES {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("file");
            let turned = out.path().join(format!("{name}.{mode}{seed}.glb"));
            if let Some(reason) = rewrite(&file, &turned, mode, seed) {
                println!("{}: not rewritten: {reason}", file.display());
                break;
            }
            compared += 1;
            let label = format!("{} ({mode} {seed})", file.display());
            match (&original, read(&turned)) {
                (Read::Refused(_), Read::Refused(_)) | (Read::Unmapped, Read::Unmapped) => {
                    println!("{label}: refused or unmapped, as the original");
                }
                (Read::Mapped(_, bones_a), Read::Mapped(_, bones_b)) if *bones_a != bones_b => {
                    failures.push(format!("{label}: another bone map"));
                }
                (Read::Mapped(a, _), Read::Mapped(b, bones_b)) => {
                    let ((ra, ma), (rb, mb)) = (&**a, &*b);
                    mapped += 1;
                    clips += ra.clips.len();
                    let (turn, place) = worst_pose_difference((ra, ma), (rb, mb));
                    let facing = angle_deg(ma.correction.facing, mb.correction.facing);
                    println!(
                        "{label}: {} bones, rest {} / {}, facing {facing:.5}°, {} clips, worst {turn:.5}° {:.4} mm",
                        bones_b.len(),
                        ma.correction.pose,
                        mb.correction.pose,
                        rb.clips.len(),
                        place * 1000.0
                    );
                    if ma.correction.pose != mb.correction.pose || facing > SAME_TURN_DEG {
                        failures.push(format!("{label}: another rest class or facing"));
                    }
                    if turn > SAME_TURN_DEG || place > SAME_PLACE_M {
                        failures.push(format!("{label}: poses {turn}° and {place} m apart"));
                    }
                }
                (a, b) => {
                    let say = |r: &Read| match r {
                        Read::Refused(e) => format!("refused: {e}"),
                        Read::Unmapped => "no bone map".to_owned(),
                        Read::Mapped(..) => "mapped".to_owned(),
                    };
                    failures.push(format!("{label}: {} against {}", say(a), say(&b)));
                }
            }
        }
    }
    println!("{compared} rewrites compared, {mapped} of them mapped, {clips} clips");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(mapped >= 10 && clips >= 50, "too little compared");
}
