//! BVH (Biovision Hierarchy) loader: a `HIERARCHY` of joints with offsets and
//! channels, then an optional `MOTION` block of sampled channel values.
//!
//! Written by hand because the `bvh_anim` crate is unmaintained (last release 2019),
//! depends on lexical 2 and smallvec 0.6, which carry RustSec advisories, and reports
//! motion errors without line numbers.
//!
//! What it reads: any number of `ROOT`s; joint names are the rest of the `ROOT` or
//! `JOINT` line (spaces allowed); 0 to 6 channels per joint in any order, channel
//! names and keywords in any case; any whitespace and line ending. Motion values are
//! a stream of numbers, so a frame may span lines; when the stream does not add up,
//! the error names the line where the first short or long frame starts.
//!
//! What it returns: a `Rig` in internal space (metres, +Y up). Joints keep file order
//! (parents first); the rest translation is `OFFSET`, the rest rotation the identity;
//! an `End Site` becomes its joint's `end` (the first one, if a joint has several;
//! leaves without one are fine), except one named in a comment (`End Site #name:
//! LeftHand`, as writers after Holden's `BVH.py` and Truebones' keep leaf joints),
//! which becomes that joint, with no channels; so does an end site beside two or more
//! child joints (a Kinect-style head, the last tracked point of the spine, written as
//! an end site of `ShoulderCenter` where the arms branch). Exception: when that zero pose is no
//! standing body (Rokoko writes every `OFFSET` along the joint's own +X) and a frame of the motion
//! is one, that frame is the rest (`rest_frame.rs`), and `Rig::notes` says which.
//! A frame's local rotation is the product of the joint's rotation channels in the
//! listed order, in degrees in the file: `Zrotation Xrotation Yrotation` is Rz·Rx·Ry,
//! so a vector is turned about Y first. Position channels *replace* the matching
//! component of `OFFSET` for that frame, as pybvh and bvh-python do; joints without
//! position channels keep `OFFSET` every frame. Exception: a joint whose position
//! channels hold 0 in every frame while its `OFFSET` does not (MakeHuman writes such
//! files, tools that add channels to `OFFSET` read them) keeps its `OFFSET`, since
//! replacing would put it on its parent; this is said in `Rig::notes`. And a root whose
//! zero-length hip joints (CMU's `LHipJoint`, `RHipJoint`) turn in a frame gets the turn
//! they share, its children the inverse (`hip_turn.rs`): every joint stays in place.
//! A joint its position channels move off its bone (Axis exports with displacement)
//! passes the turn off its `OFFSET` to its parent when it is the parent's only child
//! (`displaced.rs`): the parent's bone points at it, every joint stays in place.
//! A root away from the body, whose children all start at one point (Kinect's
//! `SpineBase` at the floor under `HipLeft`, `HipRight`, `SpineMid`), is moved onto
//! that point (`root_pivot.rs`), with a note: again every other joint stays in place.
//!
//! A star skeleton (Kinect/NiTE: the arms, legs and neck hung from one torso root through
//! zero-length joints) has its arms' joints hung from the neck's (`star.rs`), so that a
//! spine carries them; again every joint stays in place. Its root then moves from the
//! torso to the pelvis, between the legs' first joints, so that the hips are measured
//! from there.
//!
//! Units and up axis come from `LoadOptions` or are guessed from the rest pose: up is
//! Y or Z, whichever the figure is taller along, and the units follow from that
//! height (`Units::guess_from_height`). A figure standing on its head along that axis
//! (camera coordinates, image Y down) is read the other way up. Every guess is
//! written into `Rig::notes`. `Basis` then converts the rest pose and every frame.
//!
//! Motion values written `nan` are gaps in the capture, filled from their own channel
//! (`gaps.rs`), with a note. Frames the root teleports to, farther from the take than a body moves between two
//! frames (decoder garbage, lost tracking), hold the nearest frame of the take
//! (`teleport.rs`), with a note naming them; a first frame written before the take (a
//! reference pose a joint turns further from than the take ever turns in a frame)
//! holds the second, and one faded into the take over a few frames holds the take's
//! first (`lead_frame.rs`), with a note. A take reaching farther below the file's
//! origin than a tenth of the figure's height (a pelvis at the origin, as Kinect and
//! video estimates write it) is lifted onto its floor (`floor.rs`), with a note.
//!
//! A take whose frames stand, most of them, along +Z on one floor under a zero-pose rest
//! standing along +Y (the skeleton written +Y up, the motion +Z up), or along +Y under a
//! rest standing along +Z, has its roots turned to the rest's up (`motion_up.rs`), with a
//! note, unless it lies on a floor across the rest's up.
//! It also notes a first frame less than half as tall as the rest pose (the motion
//! may have another up axis than the rest pose).
//!
//! No input makes it panic: the hierarchy is walked with an explicit stack (no
//! recursion), and counts read from the file are capped before anything is

mod convert;
mod displaced;
mod floor;
mod frame_rate;
mod gaps;
mod hierarchy;
mod hip_turn;
mod lead_frame;
mod lexer;
mod motion;
mod motion_up;
mod pointed_feet;
mod rest_frame;
mod rest_from;
mod root_pivot;
mod star;
mod teleport;
#[cfg(test)]
mod test_support;

use std::path::{Path, PathBuf};

use super::{LoadOptions, Rig, text_encoding};
use crate::skeleton::InvalidSkeleton;
use convert::build;
use hierarchy::Parser;
use lexer::Lexer;

/// Most frames a file may announce (2.3 hours at 120 fps).
pub const MAX_FRAMES: usize = 1_000_000;

/// Most samples (frames × joints) a motion may hold: 16 Mi, about 470 MB of
/// rotations and translations.
pub const MAX_SAMPLES: usize = 1 << 24;

/// Why a BVH file cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum BvhError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `expected` and `found` are written as shown: "`{`", "the end of the file".
    #[error("{path}:{line}: expected {expected}, found {found}")]
    Syntax {
        path: PathBuf,
        line: usize,
        expected: &'static str,
        found: String,
    },
    /// The file ends while `joint` (declared on `line`) is still open.
    #[error("{path}:{line}: joint `{joint}` is not closed (the file ends inside the hierarchy)")]
    Unclosed {
        path: PathBuf,
        line: usize,
        joint: String,
    },
    /// `index` counts from 1 along the `OFFSET` or along the motion line.
    #[error("{path}:{line}: value {index} (`{found}`) is not a number")]
    NotANumber {
        path: PathBuf,
        line: usize,
        index: usize,
        found: String,
    },
    #[error("{path}:{line}: value {index} is NaN or infinite")]
    NotFinite {
        path: PathBuf,
        line: usize,
        index: usize,
    },
    /// A channel whose every frame is `nan`, nothing to fill it from; `line` is
    /// where the first missing value is.
    #[error("{path}:{line}: channel {channel} of joint `{joint}` is `nan` in every frame")]
    NoValue {
        path: PathBuf,
        line: usize,
        joint: String,
        channel: &'static str,
    },
    #[error(
        "{path}:{line}: unknown channel `{name}` (expected Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)"
    )]
    UnknownChannel {
        path: PathBuf,
        line: usize,
        name: String,
    },
    #[error("{path}:{line}: CHANNELS declares {declared} channels and names {listed}")]
    ChannelCount {
        path: PathBuf,
        line: usize,
        declared: usize,
        listed: usize,
    },
    #[error("{path}:{line}: frame time `{found}` is not a positive number of seconds")]
    FrameTime {
        path: PathBuf,
        line: usize,
        found: String,
    },
    #[error(
        "{path}:{line}: header says {declared} frames, more than the {max} accepted for {joints} joints"
    )]
    TooManyFrames {
        path: PathBuf,
        line: usize,
        declared: String,
        max: usize,
        joints: usize,
    },
    /// `line` is the `Frames:` line.
    #[error("{path}:{line}: header says {declared} frames, found {found}")]
    FrameCount {
        path: PathBuf,
        line: usize,
        declared: usize,
        found: usize,
    },
    /// `line` is where frame `frame` (counted from 1) starts.
    #[error(
        "{path}:{line}: frame {frame} has {values} values, the hierarchy has {channels} channels"
    )]
    FrameLength {
        path: PathBuf,
        line: usize,
        frame: usize,
        values: usize,
        channels: usize,
    },
    /// A zero byte where text was expected (and no UTF-16 byte order mark): a
    /// binary file, whatever its name says.
    #[error("{path}: byte {at} is a zero byte: binary data, not a BVH text file")]
    Binary { path: PathBuf, at: usize },
    /// The rest asked for from another file (`LoadOptions::rest_from`) is not
    /// there: `reason` says why.
    #[error("{path}: no rest from {from} (--rest-from): {reason}")]
    RestFrom {
        path: PathBuf,
        from: PathBuf,
        reason: String,
    },
    #[error("{path}: {source}")]
    Skeleton {
        path: PathBuf,
        #[source]
        source: InvalidSkeleton,
    },
}

/// Reads and parses a BVH file. Text that is not UTF-8 (Latin-1 or Shift-JIS joint
/// names) is read in the encoding its bytes suggest, and the first note says which;
/// a zero byte outside UTF-16 is no text at all.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Rig, BvhError> {
    let (text, encoding) = read_text(path)?;
    let mut rig = parse(&text, path, options)?;
    rig.notes.splice(0..0, encoding);
    Ok(rig)
}

/// The text of the BVH file at `path`, with a note naming its encoding when it is
/// not UTF-8 (see `load`).
fn read_text(path: &Path) -> Result<(String, Option<String>), BvhError> {
    let bytes = std::fs::read(path).map_err(|source| BvhError::Read {
        path: path.to_owned(),
        source,
    })?;
    if encoding_rs::Encoding::for_bom(&bytes).is_none()
        && let Some(at) = bytes.iter().position(|&b| b == 0)
    {
        return Err(BvhError::Binary {
            path: path.to_owned(),
            at,
        });
    }
    let (text, encoding) = text_encoding::decode(&bytes);
    Ok((text.into_owned(), encoding))
}

/// Parses the text of a BVH file; `path` only names the file in errors.
pub fn parse(text: &str, path: &Path, options: &LoadOptions) -> Result<Rig, BvhError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser {
        lexer: Lexer::new(text),
        path,
        joints: Vec::new(),
        open: Vec::new(),
        notes: Vec::new(),
        sites_as_joints: 0,
    };
    let motion = parser.parse_file()?;
    let mut rig = build(path, parser.joints, motion, options)?;
    rig.notes.splice(0..0, parser.notes);
    Ok(rig)
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::formats::{Units, UpAxis};
    use glam::Vec3;

    #[test]
    fn a_binary_file_is_said_to_be_no_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("take.bvh");
        std::fs::write(&path, [0x14, 0xeb, 0x01, 0x00, 0x03, 0x00]).unwrap();
        let err = load(&path, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("take.bvh: byte 3 is a zero byte: binary data, not a BVH text file"),
            "{err}"
        );
        // UTF-16 with its byte order mark is text, zero bytes and all.
        let utf16: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(GOOD.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        std::fs::write(&path, utf16).unwrap();
        assert!(load(&path, &LoadOptions::default()).is_ok());
    }

    #[test]
    fn classic_mac_line_ends_read_as_any_other() {
        // Poser and Second Life tools on classic Mac OS end lines with a lone CR.
        let lf = rig(GOOD);
        for ends in ["\r", "\r\n"] {
            let text = GOOD.replace('\n', ends);
            let other = rig(&text);
            let names = |r: &Rig| -> Vec<String> {
                r.skeleton.joints().iter().map(|j| j.name.clone()).collect()
            };
            assert_eq!(names(&other), names(&lf));
            assert_eq!(motion(&other).frame_count(), 2);
            let bad = good_with(20, "1 90 0 0").replace('\n', ends);
            assert_eq!(
                error(&bad),
                "bad.bvh:20: frame 2 has 4 values, the hierarchy has 9 channels"
            );
        }
    }

    #[test]
    fn load_reads_latin1_and_shift_jis_names_and_says_so() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for (encoding, hips, spine) in [
            (encoding_rs::WINDOWS_1252, "Hüfte", "Colonne_Vertébrale"),
            (encoding_rs::SHIFT_JIS, "センター", "上半身"),
        ] {
            let text = GOOD.replace("Hips", hips).replace("Spine", spine);
            let (bytes, _, unmappable) = encoding.encode(&text);
            assert!(!unmappable && std::str::from_utf8(&bytes).is_err());
            let path = dir.path().join("names.bvh");
            std::fs::write(&path, &bytes).expect("written");
            let rig = load(&path, &AS_IS).expect("loads");
            let names: Vec<&str> = rig
                .skeleton
                .joints()
                .iter()
                .map(|j| j.name.as_str())
                .collect();
            assert_eq!(names[..2], [hips, spine]);
            assert!(rig.notes[0].contains(encoding.name()), "{:?}", rig.notes);
        }
    }

    #[test]
    fn load_names_a_missing_file() {
        let err = load(Path::new("no/such/file.bvh"), &AS_IS).unwrap_err();
        assert_eq!(err.to_string(), "cannot read no/such/file.bvh");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn parse_never_panics_on_a_cut_or_mangled_file() {
        let cuts = GOOD.char_indices().map(|(i, _)| &GOOD[..i]);
        for text in cuts {
            let _ = parse(text, Path::new("cut.bvh"), &LoadOptions::default());
        }
        for line in 1..=20 {
            for junk in [
                "",
                "}",
                "{",
                "ROOT",
                "JOINT",
                "End Site",
                "1e38 1e38 1e38",
                "Frames: 0",
            ] {
                let _ = parse(
                    &good_with(line, junk),
                    Path::new("x.bvh"),
                    &LoadOptions::default(),
                );
            }
        }
    }

    // --- Real files ------------------------------------------------------------------

    fn assets() -> Option<PathBuf> {
        crate::assets::assets_dir().map(|dir| dir.join("bvh"))
    }

    fn load_asset(dir: &Path, name: &str) -> Rig {
        match load(&dir.join(name), &LoadOptions::default()) {
            Ok(rig) => rig,
            Err(err) => panic!("{err}"),
        }
    }

    /// Model-space positions of every joint and end site in frame `frame`.
    fn frame_points(rig: &Rig, frame: usize) -> Vec<(String, Vec3)> {
        let f = motion(rig).frame(frame);
        let world = rig.skeleton.world_transforms(f.rotations, f.translations);
        let mut points = Vec::new();
        for (joint, w) in rig.skeleton.joints().iter().zip(&world) {
            points.push((joint.name.clone(), Vec3::from(w.translation)));
            if let Some(end) = joint.end {
                points.push((format!("{} end", joint.name), w.transform_point3(end)));
            }
        }
        points
    }

    fn rest_points(rig: &Rig) -> Vec<(String, Vec3)> {
        let world = rig.skeleton.rest_world();
        let mut points = Vec::new();
        for (joint, w) in rig.skeleton.joints().iter().zip(&world) {
            points.push((joint.name.clone(), Vec3::from(w.translation)));
            if let Some(end) = joint.end {
                points.push((format!("{} end", joint.name), w.transform_point3(end)));
            }
        }
        points
    }

    fn height(points: &[(String, Vec3)]) -> f32 {
        let ys = points.iter().map(|(_, p)| p.y);
        ys.clone().fold(f32::MIN, f32::max) - ys.fold(f32::MAX, f32::min)
    }

    fn point(points: &[(String, Vec3)], name: &str) -> Vec3 {
        points
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .expect(name)
    }

    #[test]
    fn every_sample_file_loads() {
        let Some(dir) = assets() else { return };
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
            {
                let rig =
                    load(&path, &LoadOptions::default()).unwrap_or_else(|err| panic!("{err}"));
                let m = motion(&rig);
                assert!(m.frame_count() >= 1, "{}", path.display());
                assert!(
                    m.frames()
                        .all(|f| f.translations.iter().all(|t| t.is_finite()))
                );
                count += 1;
            }
        }
        assert!(count >= 4, "only {count} files in {}", dir.display());
    }

    #[test]
    fn cmu_walk_is_a_person_walking_in_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "cmu_12_01_walk.bvh");
        assert_eq!(rig.skeleton.len(), 31);
        let m = motion(&rig);
        assert_eq!(m.frame_count(), 524);
        assert!((m.times()[1] - 1.0 / 120.0).abs() < 1e-6);
        // CMU's unit (about 1/0.45 inch) is not a known one: scaled to a 1.7 m figure.
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("units not recognised"))
        );
        assert!(
            !rig.notes.iter().any(|n| n.contains("+Z")),
            "{:?}",
            rig.notes
        );
        let first = frame_points(&rig, 0);
        let standing = height(&first);
        assert!((1.4..2.0).contains(&standing), "{standing} m");
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
        assert!(point(&first, "Hips").y > point(&first, "LeftFoot").y + 0.5);
        // It walks: the hips travel more than a metre over the ground.
        let start = m.frame(0).translations[0];
        let end = m.frame(523).translations[0];
        let travel = (end - start) * Vec3::new(1.0, 0.0, 1.0);
        assert!(travel.length() > 1.0, "{travel}");
    }

    #[test]
    fn mocapbank_file_is_centimetres_and_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "test_mocapbank.bvh");
        assert_eq!(rig.skeleton.len(), 19);
        assert_eq!(motion(&rig).frame_count(), 455);
        assert_eq!(
            rig.notes,
            ["units: centimetres (guessed from a 167 cm figure)"]
        );
        let rest = rest_points(&rig);
        let lowest = rest.iter().map(|(_, p)| p.y).fold(f32::MAX, f32::min);
        let hips = point(&rest, "Hips").y - lowest;
        assert!(
            (0.9..1.0).contains(&hips),
            "hips {hips} m above the lowest point"
        );
        assert!(point(&rest, "Head").y > point(&rest, "Hips").y + 0.5);
    }

    #[test]
    fn bvh_test1_is_z_up_and_comes_out_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "bvh_test1.bvh");
        assert_eq!(rig.skeleton.len(), 24);
        assert_eq!(motion(&rig).frame_count(), 75);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        let rest = rest_points(&rig);
        assert!(point(&rest, "Head").y > point(&rest, "Hips").y + 0.5);
        let first = frame_points(&rig, 0);
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
    }

    #[test]
    fn bvh_test3_has_a_y_up_rest_pose_and_z_up_motion() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "bvh_test3.bvh");
        assert_eq!(rig.skeleton.len(), 60);
        assert_eq!(motion(&rig).frame_count(), 100);
        let last = rig.notes.last().map(String::as_str).unwrap_or("");
        assert!(
            last.starts_with("the first frame is 0.24 m tall"),
            "{:?}",
            rig.notes
        );

        // Read as Z-up inches, the motion stands (and the rest pose lies down).
        let options = LoadOptions {
            units: Some(Units::Inches),
            up: Some(UpAxis::Z),
            rest_from: None,
        };
        let rig = load(&dir.join("bvh_test3.bvh"), &options).unwrap();
        let first = frame_points(&rig, 0);
        let standing = height(&first);
        assert!((1.2..2.0).contains(&standing), "{standing} m");
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
    }

    #[test]
    fn walk1_all_zero_root_positions_keep_the_offset() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "walk1.bvh");
        assert_eq!(rig.skeleton.len(), 75);
        assert_eq!(motion(&rig).frame_count(), 14);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("joint `Root` has position channels"))
        );
        let root_rest = rig.skeleton.joints()[0].rest.translation;
        assert_eq!(motion(&rig).frame(0).translations[0], root_rest);
    }

    #[test]
    fn tpose_has_173_joints_and_one_frame() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "tpose.bvh");
        assert_eq!(rig.skeleton.len(), 173);
        assert_eq!(motion(&rig).frame_count(), 1);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        let rest = rest_points(&rig);
        assert!(point(&rest, "head").y > point(&rest, "root").y + 0.3);
        // MakeHuman's unit, the decimetre: a 1.66 m figure.
        assert!(
            rig.notes.iter().any(|n| n.starts_with("units: decimetres")),
            "{:?}",
            rig.notes
        );
        assert!((1.65..1.67).contains(&height(&rest)), "{}", height(&rest));
        // 143 of its 144 six-channel joints hold 0 in their position channels.
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("143 joints (`upperleg01.R`, ...)"))
        );
    }
}
