//! VRM Animation (`.vrma`, glTF extension `VRMC_vrm_animation` 1.0): writing
//! recordings and reading any conforming file into normalized `HumanoidPose`s.
//!
//! What the files look like (spec: `../shared/seeds/VRMC_vrm_animation-1.0.ja.txt`):
//! a GLB whose nodes are a humanoid in the VRM T-pose, one node per humanoid bone,
//! mapped by `extensions.VRMC_vrm_animation.humanoid.humanBones`; the first
//! animation's rotation channels on those nodes are the bones' motion (translation
//! on the hips only, never scale); expressions are nodes whose translation.x is the
//! weight in [0, 1]; lookAt is a node whose rotation, read as extrinsic ZXY Euler
//! angles, gives yaw (about Y) and pitch (about X).
//!
//! Our writer puts identity rest rotations on every node, so a channel's value *is*
//! the normalized rotation. The reader accepts any rest rotations and converts with
//! the spec's formula, as three-vrm-animation does: for bone `b` whose nearest
//! humanoid parent node is `p`, `N = W(p) · L · W(b)⁻¹` with `W` the rest world
//! rotations; the hips use the world transform of the hips' parent node.

mod read;
mod rest;
mod write;

use std::path::PathBuf;

pub use crate::formats::tracks::PushError;
pub use read::{VrmaAnimation, is_node_clip, load, parse, parse_all, parse_rest};
pub use rest::VrmaRest;
pub use write::VrmaWriter;

use super::gltf::DocError;

/// The extension's name.
pub const EXTENSION: &str = "VRMC_vrm_animation";

/// Why a `.vrma` file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum VrmaError {
    #[error(transparent)]
    Doc(#[from] DocError),
    #[error("{path}: not a VRM animation: the file has no `{EXTENSION}` extension")]
    NotVrma { path: PathBuf },
    #[error(
        "{path}: {EXTENSION}.specVersion is `{found}`; only 1.0 (or its pre-release \
         `1.0-draft`) is supported"
    )]
    SpecVersion { path: PathBuf, found: String },
    #[error(
        "{path}: animations: none: the file holds a humanoid rest and nothing to play \
         (`inspect` shows the rest)"
    )]
    NoAnimation { path: PathBuf },
    /// Anything else wrong; `place` is a JSON path or an animation part.
    #[error("{path}: {place}: {message}")]
    Invalid {
        path: PathBuf,
        place: String,
        message: String,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::formats::glb::GlbFile;
    use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};

    /// A few frames with rotations, hips motion, expressions (preset and custom)
    /// and a lookAt.
    fn performance() -> (VrmaWriter, Vec<(f32, HumanoidPose)>, CustomNames) {
        let mut names = CustomNames::default();
        let smile = names.slot_or_insert("smirk").unwrap();
        let mut writer = VrmaWriter::new(VrmaRest::standard(0.9), "test take");
        let mut frames = Vec::new();
        for i in 0..40 {
            let t = i as f32 / 30.0;
            let mut pose = crate::takes::demo::pose_at(t, 0.9);
            pose.expressions
                .set_preset(Preset::Happy, (t * 2.0).min(1.0));
            if i >= 10 {
                pose.expressions.set_custom(smile, 0.5);
                pose.look_at = Some(LookAt {
                    yaw: 0.3 * t,
                    pitch: -0.1,
                });
            }
            writer.push(t, &pose, &names).unwrap();
            frames.push((t, pose));
        }
        (writer, frames, names)
    }

    #[test]
    fn written_files_read_back_exactly() {
        let (writer, frames, _) = performance();
        let bytes = writer.to_bytes();
        let read = parse(&bytes, Path::new("take.vrma"), None).unwrap();
        assert_eq!(read.name.as_deref(), Some("test take"));
        assert!((read.duration - 39.0 / 30.0).abs() < 1e-6);
        for (t, want) in &frames {
            let mut got = HumanoidPose::default();
            read.sample(*t, &mut got);
            for (bone, q) in want.bones() {
                let r = got.rotation(bone).unwrap();
                assert!(q.angle_between(r) < 1e-5, "{bone} at {t}");
            }
            assert!(got.hips_position.distance(want.hips_position) < 1e-6);
            assert_eq!(
                got.expressions.preset(Preset::Happy),
                want.expressions.preset(Preset::Happy)
            );
            let slot = read.custom_names().slot("smirk").unwrap();
            let custom = want.expressions.custom(0).unwrap_or(0.0);
            assert_eq!(got.expressions.custom(slot), Some(custom));
            let look = got.look_at.unwrap();
            let want_look = want.look_at.unwrap_or_default();
            assert!(
                (look.yaw - want_look.yaw).abs() < 1e-5
                    && (look.pitch - want_look.pitch).abs() < 1e-5
            );
        }
    }

    #[test]
    fn a_spooled_take_writes_the_same_file_as_one_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let spool = crate::formats::tracks::Spool::new_in(dir.path()).unwrap();
        let rest = VrmaRest::standard(0.9);
        let mut spooled = VrmaWriter::spooled(rest.clone(), "long take", spool);
        let mut in_memory = VrmaWriter::new(rest, "long take");
        let mut names = CustomNames::default();
        // Long enough that every kind of track spills chunks to the spool (the
        // times, one float a frame, pass 12 Ki floats), with a custom expression
        // and a lookAt that appear late.
        for i in 0..13_000 {
            let t = i as f32 / 120.0;
            let mut pose = crate::takes::demo::pose_at(t, 0.9);
            pose.expressions
                .set_preset(Preset::Happy, (t * 0.1).min(1.0));
            if i >= 5_000 {
                let slot = names.slot_or_insert("smirk").unwrap();
                pose.expressions.set_custom(slot, (i % 10) as f32 / 10.0);
                pose.look_at = Some(LookAt {
                    yaw: 0.01 * t,
                    pitch: -0.1,
                });
            }
            spooled.push(t, &pose, &names).unwrap();
            in_memory.push(t, &pose, &names).unwrap();
        }
        assert_eq!(spooled.binary_bytes(), in_memory.binary_bytes());
        let bytes = spooled.to_bytes();
        assert!(bytes == in_memory.to_bytes(), "the same bytes");
        assert!(spooled.spool_failure().is_none());
        let (_, bin) = crate::formats::glb::split_glb(&bytes).unwrap();
        assert!(
            bin.map_or(0, <[u8]>::len) as u64 == spooled.binary_bytes(),
            "binary_bytes is the binary chunk's size"
        );
    }

    #[test]
    fn push_rejects_time_going_backwards_and_nan() {
        let mut writer = VrmaWriter::new(VrmaRest::standard(0.9), "x");
        let names = CustomNames::default();
        let pose = HumanoidPose::default();
        writer.push(1.0, &pose, &names).unwrap();
        assert!(matches!(
            writer.push(1.0, &pose, &names),
            Err(PushError::TimeNotIncreasing { .. })
        ));
        assert!(matches!(
            writer.push(f32::NAN, &pose, &names),
            Err(PushError::NotFinite(_))
        ));
        let mut bad = pose;
        bad.hips_position.x = f32::INFINITY;
        assert!(writer.push(2.0, &bad, &names).is_err());
        assert_eq!(writer.frame_count(), 1);
    }

    #[test]
    fn step_samplers_hold_the_previous_key() {
        let (writer, frames, _) = performance();
        let stepped = with_json(&writer.to_bytes(), |v| {
            for sampler in v["animations"][0]["samplers"].as_array_mut().unwrap() {
                sampler["interpolation"] = "STEP".into();
            }
        });
        let read = parse(&stepped, Path::new("step.vrma"), None).unwrap();
        let (t0, first) = &frames[3];
        let t1 = frames[4].0;
        let mut pose = HumanoidPose::default();
        read.sample(t0 + 0.9 * (t1 - t0), &mut pose);
        for (bone, q) in first.bones() {
            assert!(
                q.angle_between(pose.rotation(bone).unwrap()) < 1e-5,
                "{bone}"
            );
        }
        assert!(pose.hips_position.distance(first.hips_position) < 1e-6);
    }

    #[test]
    fn a_file_without_animations_has_a_rest_and_nothing_to_play() {
        let (writer, _, _) = performance();
        let bytes = with_json(&writer.to_bytes(), |v| {
            v.as_object_mut().unwrap().remove("animations");
        });
        let path = Path::new("rest.vrma");
        for err in [
            parse(&bytes, path, None).err(),
            parse_all(&bytes, path).err(),
        ] {
            let err = err.expect("nothing to play").to_string();
            assert_eq!(
                err,
                "rest.vrma: animations: none: the file holds a humanoid rest and nothing to \
                 play (`inspect` shows the rest)"
            );
        }
        let rest = parse_rest(&bytes, path).unwrap();
        assert_eq!(rest.bones().count(), 0);
        assert!((rest.rest_hips_position.y - 0.9).abs() < 1e-6);
        assert_eq!(rest.declared_expressions(), ["happy", "smirk"]);
    }

    #[test]
    fn an_empty_writer_writes_one_t_pose_frame() {
        let writer = VrmaWriter::new(VrmaRest::standard(0.9), "empty");
        let read = parse(&writer.to_bytes(), Path::new("e.vrma"), None).unwrap();
        assert_eq!(read.duration, 0.0);
        let mut pose = HumanoidPose::default();
        read.sample(0.0, &mut pose);
        assert!((pose.hips_position.y - 0.9).abs() < 1e-6);
    }

    use crate::formats::glb::with_json;

    #[test]
    fn bad_files_give_one_clear_error_each() {
        let (writer, _, _) = performance();
        let good = writer.to_bytes();
        let mut nan_key = good.clone();
        // The first float of the binary chunk is the first key time.
        let bin_start = good.len() - {
            let (_, bin) = crate::formats::glb::split_glb(&good).unwrap();
            bin.unwrap().len()
        };
        nan_key[bin_start..bin_start + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            (
                "truncated GLB",
                good[..good.len() / 2].to_vec(),
                "truncated GLB",
            ),
            (
                "wrong magic",
                [b"GLTF", &good[4..]].concat(),
                "not a glTF file",
            ),
            (
                "missing buffer",
                with_json(&good, |v| v["buffers"][0]["uri"] = "gone.bin".into()),
                "buffer 0 (`gone.bin`) is missing",
            ),
            (
                "accessor out of range",
                with_json(&good, |v| v["accessors"][3]["count"] = 100_000.into()),
                "accessor 3: reads past the end",
            ),
            ("NaN key", nan_key, "animations[0].samplers[0]"),
            (
                "spec version",
                with_json(&good, |v| {
                    v["extensions"][EXTENSION]["specVersion"] = "2.0".into()
                }),
                "specVersion is `2.0`; only 1.0",
            ),
            (
                "no extension",
                with_json(&good, |v| v["extensions"] = serde_json::json!({})),
                "no `VRMC_vrm_animation` extension",
            ),
            (
                "node out of range",
                with_json(&good, |v| {
                    v["extensions"][EXTENSION]["lookAt"]["node"] = 999.into()
                }),
                "lookAt: node 999 does not exist",
            ),
            (
                "one node for two bones",
                with_json(&good, |v| {
                    let bones = &mut v["extensions"][EXTENSION]["humanoid"]["humanBones"];
                    bones["rightUpperArm"] = bones["leftUpperArm"].clone();
                }),
                "is `leftUpperArm` too",
            ),
            (
                "a map naming no bone, channels turning nodes",
                with_json(&good, |v| {
                    v["extensions"][EXTENSION]["humanoid"]["humanBones"] = serde_json::json!({});
                }),
                "humanoid.humanBones: names no bone, so the",
            ),
            (
                "channel on a node out of range",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][1]["target"]["node"] = 999.into()
                }),
                "animations[0].channels[1]: node 999 does not exist",
            ),
        ];
        for (what, bytes, expected) in cases {
            let err = match parse(&bytes, Path::new("bad.vrma"), None) {
                Ok(_) => panic!("{what}: accepted"),
                Err(e) => e.to_string(),
            };
            assert!(err.starts_with("bad.vrma"), "{what}: {err}");
            assert!(err.contains(expected), "{what}: `{err}` lacks `{expected}`");
            assert!(!err.contains('\n'), "{what}: {err}");
        }
    }

    #[test]
    fn a_map_naming_no_bone_reads_when_only_expressions_are_keyed() {
        // A face-only clip needs no bone: with no channel on a node outside the
        // expressions, an empty map is no error.
        let (writer, _, _) = performance();
        let good = writer.to_bytes();
        let faces = with_json(&good, |v| {
            let ext = &v["extensions"][EXTENSION];
            let hips = ext["humanoid"]["humanBones"]["hips"]["node"].clone();
            let nodes: Vec<serde_json::Value> = ext["expressions"]["preset"]
                .as_object()
                .into_iter()
                .chain(ext["expressions"]["custom"].as_object())
                .flat_map(|o| o.values().map(|e| e["node"].clone()))
                .filter(|n| *n != hips)
                .collect();
            v["extensions"][EXTENSION]["humanoid"]["humanBones"] = serde_json::json!({});
            let channels = v["animations"][0]["channels"].as_array().cloned().unwrap();
            v["animations"][0]["channels"] = channels
                .into_iter()
                .filter(|c| nodes.contains(&c["target"]["node"]))
                .collect();
        });
        let read = parse(&faces, Path::new("faces.vrma"), None).unwrap();
        assert_eq!(read.bones().count(), 0);
        assert!(read.animated_expressions().count() > 0);
    }

    #[test]
    fn a_map_naming_no_bone_over_keyed_nodes_reads_as_the_gltf_clip_of_its_nodes() {
        // An FBX clip converted to `.vrma` keeps `humanBones: {}` over a skeleton
        // of nodes: every command reads it as a glTF clip, the nodes recognized.
        let dir = tempfile::tempdir().unwrap();
        let (writer, frames, _) = performance();
        let good = writer.to_bytes();
        let unmapped = with_json(&good, |v| {
            v["extensions"][EXTENSION]["humanoid"]["humanBones"] = serde_json::json!({});
            // The take's rest has no left hand: the converted skeleton has one.
            let nodes = v["nodes"].as_array_mut().unwrap();
            let forearm = nodes
                .iter()
                .position(|n| n["name"] == "leftLowerArm")
                .unwrap();
            nodes.push(serde_json::json!({"name": "leftHand", "translation": [0.25, 0.0, 0.0]}));
            let hand = nodes.len() - 1;
            nodes[forearm]["children"] = serde_json::json!([hand]);
        });
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let (good, unmapped, cut) = (
            write("good.vrma", &good),
            write("unmapped.vrma", &unmapped),
            write("cut.vrma", &good[..good.len() / 2]),
        );
        assert!(!is_node_clip(&good));
        assert!(is_node_clip(&unmapped));
        // A file that does not read is left to the `.vrma` reader to say why.
        assert!(!is_node_clip(&cut));
        use crate::takes::load::reads_as_vrma;
        assert!(reads_as_vrma(&good) && reads_as_vrma(&cut) && !reads_as_vrma(&unmapped));
        let options = crate::formats::LoadOptions::default();
        let rig = crate::formats::load_rig(&unmapped, &options).unwrap();
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("the humanoid map names no bone")),
            "{:?}",
            rig.notes
        );
        assert!(matches!(
            crate::skeleton::recognize(&rig.skeleton),
            crate::skeleton::Recognition::Humanoid(_)
        ));
        assert_eq!(rig.clips[0].motion.frame_count(), frames.len());
        // A `.vrma` with its map is no rig file, and takes no rest from another file.
        assert!(crate::formats::load_rig(&good, &options).is_err());
        let rest_from = crate::formats::LoadOptions {
            rest_from: Some(unmapped.clone()),
            ..crate::formats::LoadOptions::default()
        };
        assert!(crate::formats::check_rest_from(Some(&unmapped), &rest_from).is_ok());
        assert!(crate::formats::check_rest_from(Some(&good), &rest_from).is_err());
        // The node clip takes its own file's rest, as a glTF clip would.
        let own_rest = crate::formats::load_rig(&unmapped, &rest_from).unwrap();
        assert_eq!(own_rest.skeleton.len(), rig.skeleton.len());
    }

    #[test]
    fn a_rest_hanging_below_the_origin_stands_on_its_lowest_bone() {
        // The take under a root node 2 m down: its hips rest 1.1 m below the
        // origin. Read standing on its lowest bone, it is the take as written, as
        // much lower as that bone was above the written take's floor, hips motion
        // and all.
        let (writer, frames, _) = performance();
        let good = writer.to_bytes();
        let sunk = with_json(&good, |v| {
            let roots = v["scenes"][0]["nodes"].clone();
            let nodes = v["nodes"].as_array_mut().unwrap();
            nodes.push(serde_json::json!({"translation": [0.0, -2.0, 0.0], "children": roots}));
            v["scenes"][0]["nodes"] = serde_json::json!([nodes.len() - 1]);
        });
        let read = parse(&sunk, Path::new("sunk.vrma"), None).unwrap();
        let plain = parse(&good, Path::new("plain.vrma"), None).unwrap();
        assert_eq!(read.notes().len(), 1, "{:?}", read.notes());
        assert!(
            read.notes()[0].starts_with("the rest's hips lie 1.100 m below the origin"),
            "{:?}",
            read.notes()
        );
        // The written take's lowest bone: its ankles (it has no toes), 6.6 cm up.
        let floor = plain
            .bones()
            .map(|b| plain.rest().position(b).y)
            .fold(f32::INFINITY, f32::min);
        let drop = read.rest_hips_position - plain.rest_hips_position;
        assert!(drop.x == 0.0 && drop.z == 0.0, "{drop}");
        assert!((drop.y + floor).abs() < 1e-5, "{drop} {floor}");
        for (t, _) in &frames {
            let (mut got, mut want) = (HumanoidPose::default(), HumanoidPose::default());
            read.sample(*t, &mut got);
            plain.sample(*t, &mut want);
            assert!(
                (got.hips_position - want.hips_position - drop).length() < 1e-5,
                "{t}"
            );
            assert_eq!(got.rest_hips_height, read.rest_hips_position.y);
        }
    }

    #[test]
    fn bone_names_outside_vrm_are_ignored_with_a_note_and_the_others_play() {
        // A BVH-to-VRMA converter names its finger end joints `leftThumbTip` ...:
        // no avatar has them, three-vrm-animation reads the file all the same.
        let (writer, frames, _) = performance();
        let good = writer.to_bytes();
        let tipped = with_json(&good, |v| {
            let bones = &mut v["extensions"][EXTENSION]["humanoid"]["humanBones"];
            bones["leftThumbTip"] = bones["leftUpperArm"].clone();
            bones["tail"] = serde_json::json!({"node": 0});
        });
        let read = parse(&tipped, Path::new("tips.vrma"), None).unwrap();
        assert_eq!(
            read.notes(),
            [
                "extensions.VRMC_vrm_animation.humanoid.humanBones: 2 not VRM 1.0 humanoid bone names, ignored (no avatar has such a bone): `leftThumbTip`, `tail`"
            ]
        );
        let plain = parse(&good, Path::new("plain.vrma"), None).unwrap();
        assert_eq!(
            read.bones().collect::<Vec<_>>(),
            plain.bones().collect::<Vec<_>>()
        );
        for (t, _) in &frames {
            let (mut got, mut want) = (HumanoidPose::default(), HumanoidPose::default());
            read.sample(*t, &mut got);
            plain.sample(*t, &mut want);
            for bone in crate::humanoid::bone::ALL {
                assert_eq!(got.rotation(bone), want.rotation(bone), "{bone} at {t}");
            }
            assert_eq!(got.hips_position, want.hips_position);
        }
    }

    #[test]
    fn a_bone_on_an_unkeyed_node_below_a_keyed_one_is_said_in_a_note() {
        // As a BVH-to-VRMA writer does: `head` names an end site below the node
        // the head's keys turn. That turn moves no bone; the note says so. An eye
        // on a still node below the keyed head says nothing (eyes are not turned).
        let (writer, _, _) = performance();
        let moved = with_json(&writer.to_bytes(), |v| {
            let head = v["extensions"][EXTENSION]["humanoid"]["humanBones"]["head"]["node"]
                .as_u64()
                .unwrap() as usize;
            let nodes = v["nodes"].as_array_mut().unwrap();
            let tip = nodes.len();
            nodes.push(serde_json::json!({"name": "HeadTip", "translation": [0.0, 0.1, 0.0]}));
            nodes.push(serde_json::json!({"name": "Eye", "translation": [0.03, 0.05, 0.05]}));
            nodes[head]["name"] = "Head".into();
            nodes[head]["children"] = serde_json::json!([tip, tip + 1]);
            let bones = &mut v["extensions"][EXTENSION]["humanoid"]["humanBones"];
            bones["head"] = serde_json::json!({"node": tip});
            bones["leftEye"] = serde_json::json!({"node": tip + 1});
        });
        let read = parse(&moved, Path::new("tip.vrma"), None).unwrap();
        assert_eq!(
            read.notes(),
            [
                "`head` is node `HeadTip`, which no channel turns, below `Head`, which channels turn and which hold no humanoid bone: their turns are played on no bone (as three-vrm-animation plays the file)"
            ]
        );
        assert!(!read.bones().any(|b| b == crate::humanoid::HumanBone::Head));
        let plain = parse(&writer.to_bytes(), Path::new("plain.vrma"), None).unwrap();
        assert!(plain.notes().is_empty(), "{:?}", plain.notes());
    }

    #[test]
    fn a_look_at_preset_keyed_as_an_expression_reads_with_a_note_and_is_not_written() {
        // The spec keeps lookUp/Down/Left/Right for lookAt; a file keying one as an
        // expression (the `happy` track renamed) reads it, says so, and a copy leaves
        // it out.
        let (writer, frames, names) = performance();
        let bent = with_json(&writer.to_bytes(), |v| {
            let presets = v["extensions"][EXTENSION]["expressions"]["preset"]
                .as_object_mut()
                .unwrap();
            let happy = presets.remove("happy").unwrap();
            presets.insert("lookUp".into(), happy);
        });
        let read = parse(&bent, Path::new("look.vrma"), None).unwrap();
        assert_eq!(
            read.notes(),
            [
                "extensions.VRMC_vrm_animation.expressions.preset.lookUp: VRMC_vrm_animation keeps `lookUp` for lookAt, not for expressions: read as an expression weight, left out of a written .vrma"
            ]
        );
        let (t, want) = &frames[5];
        let mut got = HumanoidPose::default();
        read.sample(*t, &mut got);
        assert_eq!(
            got.expressions.preset(Preset::LookUp),
            want.expressions.preset(Preset::Happy)
        );
        let mut copy = VrmaWriter::new(VrmaRest::standard(0.9), "copy");
        copy.push(*t, &got, &names).unwrap();
        let copied = parse(&copy.to_bytes(), Path::new("copy.vrma"), None).unwrap();
        assert!(!copied.declared_expressions().iter().any(|n| n == "lookUp"));
        assert!(!copied.animated_expressions().any(|n| n == "lookUp"));
    }

    #[test]
    fn univrm_files_without_spec_version_or_key_time_bounds_or_a_draft_version_read_with_a_note() {
        let (writer, frames, _) = performance();
        let good = writer.to_bytes();
        let bent = with_json(&good, |v| {
            if let Some(ext) = v["extensions"][EXTENSION].as_object_mut() {
                ext.remove("specVersion");
            }
            for accessor in v["accessors"].as_array_mut().unwrap() {
                let accessor = accessor.as_object_mut().unwrap();
                accessor.remove("min");
                accessor.remove("max");
            }
        });
        let read = parse(&bent, Path::new("univrm.vrma"), None).unwrap();
        assert_eq!(
            read.notes(),
            [
                "VRMC_vrm_animation has no specVersion (older UniVRM writes none): read as 1.0",
                "1 key-time accessor without min/max (glTF requires them; UniVRM leaves them out): read anyway"
            ]
        );
        let draft = with_json(&good, |v| {
            v["extensions"][EXTENSION]["specVersion"] = "1.0-draft".into();
        });
        let draft = parse(&draft, Path::new("draft.vrma"), None).unwrap();
        assert_eq!(
            draft.notes(),
            ["VRMC_vrm_animation specVersion is the pre-release `1.0-draft`: read as 1.0"]
        );
        let exact = parse(&good, Path::new("take.vrma"), None).unwrap();
        assert!(exact.notes().is_empty(), "{:?}", exact.notes());
        let (t, want) = &frames[20];
        let mut got = HumanoidPose::default();
        read.sample(*t, &mut got);
        for (bone, q) in want.bones() {
            assert!(
                q.angle_between(got.rotation(bone).unwrap()) < 1e-5,
                "{bone}"
            );
        }
    }

    #[test]
    fn real_files_read_and_the_broken_one_is_refused_in_one_line() {
        let Some(dir) = crate::assets::assets_dir() else {
            return;
        };
        let mut files: Vec<_> = std::fs::read_dir(dir.join("vrma"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "vrma"))
            .collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_lowercase();
            match load(&file, None) {
                Ok(_) if name.contains("broken") => panic!("{}: accepted", file.display()),
                Ok(read) => println!(
                    "{}: {} bones, {:.3} s, notes {:?}",
                    file.display(),
                    read.bones().count(),
                    read.duration,
                    read.notes()
                ),
                Err(e) => {
                    let message = e.to_string();
                    println!("{message}");
                    assert!(name.contains("broken"), "{message}");
                    assert!(
                        message.starts_with(&file.display().to_string()) && !message.contains('\n'),
                        "{message}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_prefix_of_a_file_fails_without_panicking() {
        let (writer, _, _) = performance();
        let good = writer.to_bytes();
        for len in (0..good.len()).step_by(97) {
            assert!(
                parse(&good[..len], Path::new("cut.vrma"), None).is_err(),
                "{len}"
            );
        }
    }
}
