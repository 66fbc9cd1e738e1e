//! Reading the humanoid-bone channels of any glTF or GLB into an
//! `ExtHumanoidClip` of normalized rotations (see "Files read" in the module header
//! of `ext_humanoid`).

use std::path::Path;
use std::sync::Arc;

use glam::{Affine3A, Quat, Vec3};
use serde_json::Value;

use super::{EXTENSION, ExtHumanoidError, STANDARD_HIPS_HEIGHT, from_channel_rotation, invalid};
use crate::formats::gltf::{self, DocError, GltfDoc};
use crate::formats::sampler::{Interpolation, KeyValue, Keyframes, merged_key_times};
use crate::formats::vrma::VrmaRest;
use crate::formats::{Rig, glb};
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B, HumanoidPose};

/// One animation's humanoid-bone channels, in normalized space.
#[derive(Debug, Clone)]
pub struct ExtHumanoidClip {
    /// The animation's name, if the file gives one.
    pub name: Option<String>,
    /// Time of the last key, seconds.
    pub duration: f32,
    /// `N(b)` per bone with a rotation channel, converted from the channel's `r(b)`.
    pub tracks: Vec<(HumanBone, Keyframes<Quat>)>,
    /// The hips translation channel as in the file: the hips' offset from its
    /// reference position, in the hips' bind frame.
    pub hips_translation: Option<Keyframes<Vec3>>,
    /// Bind world transform of the hips in the file's humanoid skeleton (model
    /// space); the standard T-pose hips, 0.95 m up, when the file declares none.
    pub hips_bind_world: Affine3A,
    /// The file's reference pose (its humanoid bones' bind positions, standard
    /// proportions for the rest), when it declares a humanoid skeleton.
    pub rest: Option<VrmaRest>,
}

/// Reads a file's humanoid-bone clip; `animation` picks one by name or index (the
/// first when `None`). The file is read whole (see the module header).
pub fn load(path: &Path, animation: Option<&str>) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let bytes = std::fs::read(path).map_err(|source| DocError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&bytes, path, animation)
}

/// Parses a glTF or GLB's humanoid-bone clip; `path` names the file in messages and
/// resolves external buffers.
pub fn parse(
    bytes: &[u8],
    path: &Path,
    animation: Option<&str>,
) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let mut doc = GltfDoc::from_bytes(bytes, path)?;
    // The channels live in the untyped JSON: gltf-json cannot type node-less ones.
    let animations = match doc.raw.get("animations") {
        None => Vec::new(),
        Some(Value::Array(list)) => list.clone(),
        Some(_) => return Err(invalid(path, "animations", "expected an array")),
    };
    let (hips_bind_world, rest) = if declares_skeleton(&doc.raw) {
        let rig = gltf::parse(bytes, path)?;
        reference_of(&rig)
    } else {
        let standard = Vec3::new(0.0, STANDARD_HIPS_HEIGHT, 0.0);
        (Affine3A::from_translation(standard), None)
    };
    let index = pick_animation(&animations, path, animation)?;
    let anim = &animations[index];
    let mut clip = read_channels(&mut doc, anim, index)?;
    clip.hips_bind_world = hips_bind_world;
    clip.rest = rest;
    clip.name = anim.get("name").and_then(Value::as_str).map(str::to_owned);
    Ok(clip)
}

/// Whether a glTF or GLB has animation channels that target a `humanoidBoneName`
/// (cheap: reads the JSON only; `false` for anything that does not parse).
#[must_use]
pub fn has_humanoid_channels(bytes: &[u8]) -> bool {
    let json = if bytes.starts_with(b"glTF") {
        match glb::split_glb(bytes) {
            Ok((json, _)) => json,
            Err(_) => return false,
        }
    } else {
        bytes
    };
    let json = json.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(json);
    let end = json
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let Ok(raw) = serde_json::from_slice::<Value>(&json[..end]) else {
        return false;
    };
    raw.get("animations")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter().any(|a| {
                a.get("channels")
                    .and_then(Value::as_array)
                    .is_some_and(|channels| {
                        channels.iter().any(|c| {
                            c.pointer(&format!("/target/extensions/{EXTENSION}"))
                                .is_some()
                        })
                    })
            })
        })
}

/// The humanoid skeleton(s) a glTF or GLB declares, read as a rig (`formats::gltf`), its
/// animations left out: for a clip file, its reference model.
pub fn reference_rig(bytes: &[u8], path: &Path) -> Result<Rig, ExtHumanoidError> {
    Ok(gltf::parse(bytes, path)?)
}

/// Whether the file's root extension declares a humanoid skeleton, in any form.
fn declares_skeleton(raw: &Value) -> bool {
    raw.get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(|ext| {
            ["humanoidSkeletons", "humanoidSkeleton", "humanoidBones"]
                .iter()
                .any(|key| ext.get(key).is_some())
        })
}

/// The hips' bind world and the reference T-pose of a file's humanoid skeleton.
fn reference_of(rig: &Rig) -> (Affine3A, Option<VrmaRest>) {
    let standard = Affine3A::from_translation(Vec3::new(0.0, STANDARD_HIPS_HEIGHT, 0.0));
    let Some(map) = &rig.bone_map else {
        return (standard, None);
    };
    let world = rig.skeleton.rest_world();
    let joint_of = |bone: HumanBone| map.bones.get(&bone).and_then(|n| rig.skeleton.find(n));
    let mut known = [None; BONE_COUNT];
    for bone in ALL {
        known[bone.index()] = joint_of(bone).map(|j| Vec3::from(world[j].translation));
    }
    let hips = joint_of(B::Hips).map_or(standard, |j| world[j]);
    (hips, Some(VrmaRest::from_positions(&known, None)))
}

/// The index of the animation called `name` (or at index `name`); the first when
/// `None`.
fn pick_animation(
    animations: &[Value],
    path: &Path,
    name: Option<&str>,
) -> Result<usize, ExtHumanoidError> {
    if animations.is_empty() {
        return Err(invalid(path, "animations", "the file has no animation"));
    }
    let Some(n) = name else { return Ok(0) };
    let name_of = |a: &Value| a.get("name").and_then(Value::as_str).map(str::to_owned);
    animations
        .iter()
        .position(|a| name_of(a).as_deref() == Some(n))
        .or_else(|| n.parse::<usize>().ok().filter(|i| *i < animations.len()))
        .ok_or_else(|| {
            let names: Vec<String> = animations
                .iter()
                .enumerate()
                .map(|(i, a)| name_of(a).unwrap_or_else(|| i.to_string()))
                .collect();
            invalid(
                path,
                "animations",
                format!("no animation `{n}` (the file has: {})", names.join(", ")),
            )
        })
}

/// What one channel of the animation targets.
enum ChannelTarget {
    /// A humanoid bone, by `humanoidBoneName`.
    Bone(HumanBone),
    /// A node, the core glTF way (ignored here).
    Node,
}

/// A channel's sampler, read from the untyped JSON.
struct SamplerRef {
    input: usize,
    output: usize,
    interpolation: Interpolation,
}

fn index_at(value: Option<&Value>) -> Option<usize> {
    value
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
}

fn read_channels(
    doc: &mut GltfDoc,
    anim: &Value,
    index: usize,
) -> Result<ExtHumanoidClip, ExtHumanoidError> {
    let path = doc.path;
    let empty = Vec::new();
    let list = |key: &str| -> Result<&Vec<Value>, ExtHumanoidError> {
        match anim.get(key) {
            None => Ok(&empty),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(invalid(
                path,
                &format!("animations[{index}].{key}"),
                "expected an array",
            )),
        }
    };
    let (channels, samplers) = (list("channels")?, list("samplers")?);
    let mut clip = ExtHumanoidClip {
        name: None,
        duration: 0.0,
        tracks: Vec::new(),
        hips_translation: None,
        hips_bind_world: Affine3A::IDENTITY,
        rest: None,
    };
    // Per sampler: the first channel using it, and whether that one is humanoid.
    let mut users: Vec<Option<(usize, bool)>> = vec![None; samplers.len()];
    // Per bone: the channel that gave its rotation.
    let mut rotation_from: [Option<usize>; BONE_COUNT] = [None; BONE_COUNT];
    let mut hips_from: Option<usize> = None;
    for (c, channel) in channels.iter().enumerate() {
        let place = format!("animations[{index}].channels[{c}]");
        let Some(s) = index_at(channel.get("sampler")) else {
            return Err(invalid(path, &place, "expected a `sampler` index"));
        };
        if s >= samplers.len() {
            return Err(invalid(path, &place, format!("sampler {s} does not exist")));
        }
        let target = channel.get("target");
        let property = target.and_then(|t| t.get("path")).and_then(Value::as_str);
        let Some(property) = property else {
            return Err(invalid(path, &place, "expected a `target.path` string"));
        };
        let ext = target
            .and_then(|t| t.get("extensions"))
            .and_then(|e| e.get(EXTENSION));
        let kind = match ext {
            None => ChannelTarget::Node,
            Some(ext) => {
                let bone_place = format!("{place}.target.extensions.{EXTENSION}.humanoidBoneName");
                let Some(name) = ext.get("humanoidBoneName").and_then(Value::as_str) else {
                    return Err(invalid(path, &bone_place, "expected a bone name string"));
                };
                let bone = name.parse::<HumanBone>().map_err(|_| {
                    invalid(
                        path,
                        &place,
                        format!("humanoidBoneName `{name}` is not an {EXTENSION} bone name"),
                    )
                })?;
                ChannelTarget::Bone(bone)
            }
        };
        let humanoid = matches!(kind, ChannelTarget::Bone(_));
        match users[s] {
            Some((first, was_humanoid)) if was_humanoid != humanoid => {
                return Err(invalid(
                    path,
                    &place,
                    format!(
                        "sampler {s} is shared with channels[{first}], but only one of them \
                         targets a humanoid bone ({EXTENSION} forbids that)"
                    ),
                ));
            }
            Some(_) => {}
            None => users[s] = Some((c, humanoid)),
        }
        let ChannelTarget::Bone(bone) = kind else {
            continue;
        };
        let duplicate = |first: usize| {
            invalid(
                path,
                &place,
                format!("`{bone}` {property} is already animated by channels[{first}]"),
            )
        };
        let sampler_place = format!("animations[{index}].samplers[{s}]");
        match property {
            "rotation" => {
                if let Some(first) = rotation_from[bone.index()] {
                    return Err(duplicate(first));
                }
                rotation_from[bone.index()] = Some(c);
                let sampler = sampler_ref(path, &samplers[s], &sampler_place)?;
                let (times, flat) = read_keys(doc, &sampler, 4)?;
                let values: Vec<Quat> = flat
                    .chunks_exact(4)
                    .map(|v| from_channel_rotation(bone, Quat::from_xyzw(v[0], v[1], v[2], v[3])))
                    .collect();
                let keys = keyframes(path, &sampler_place, times, values, sampler.interpolation)?;
                clip.tracks.push((bone, keys));
            }
            "translation" if bone == B::Hips => {
                if let Some(first) = hips_from {
                    return Err(duplicate(first));
                }
                hips_from = Some(c);
                let sampler = sampler_ref(path, &samplers[s], &sampler_place)?;
                let (times, flat) = read_keys(doc, &sampler, 3)?;
                let values: Vec<Vec3> = flat.chunks_exact(3).map(Vec3::from_slice).collect();
                let keys = keyframes(path, &sampler_place, times, values, sampler.interpolation)?;
                clip.hips_translation = Some(keys);
            }
            // Not applicable accurately across models, says the spec: ignored.
            "translation" | "scale" => {}
            other => {
                return Err(invalid(
                    path,
                    &place,
                    format!(
                        "a humanoid bone channel must animate rotation, translation or scale, not `{other}`"
                    ),
                ));
            }
        }
    }
    if clip.tracks.is_empty() && clip.hips_translation.is_none() {
        return Err(invalid(
            path,
            &format!("animations[{index}]"),
            format!("no channel animates a humanoid bone ({EXTENSION})"),
        ));
    }
    clip.tracks.sort_by_key(|(bone, _)| *bone);
    clip.duration = clip.last_key_time();
    Ok(clip)
}

fn sampler_ref(path: &Path, sampler: &Value, place: &str) -> Result<SamplerRef, ExtHumanoidError> {
    let (Some(input), Some(output)) = (
        index_at(sampler.get("input")),
        index_at(sampler.get("output")),
    ) else {
        return Err(invalid(
            path,
            place,
            "expected `input` and `output` accessor indices",
        ));
    };
    let interpolation = match sampler.get("interpolation").map(Value::as_str) {
        None | Some(Some("LINEAR")) => Interpolation::Linear,
        Some(Some("STEP")) => Interpolation::Step,
        Some(Some("CUBICSPLINE")) => Interpolation::CubicSpline,
        Some(other) => {
            return Err(invalid(
                path,
                place,
                format!(
                    "unknown interpolation {}",
                    other.map_or_else(|| "(not a string)".to_owned(), |s| format!("`{s}`"))
                ),
            ));
        }
    };
    Ok(SamplerRef {
        input,
        output,
        interpolation,
    })
}

/// A sampler's key times (shared between channels) and its output floats.
fn read_keys(
    doc: &mut GltfDoc,
    sampler: &SamplerRef,
    components: usize,
) -> Result<(Arc<[f32]>, Vec<f32>), ExtHumanoidError> {
    let times = doc.read_times(sampler.input)?;
    Ok((times, doc.read_floats(sampler.output, components)?))
}

fn keyframes<T: KeyValue>(
    path: &Path,
    place: &str,
    times: Arc<[f32]>,
    values: Vec<T>,
    interpolation: Interpolation,
) -> Result<Keyframes<T>, ExtHumanoidError> {
    Keyframes::new(times, values, interpolation).map_err(|e| invalid(path, place, e.to_string()))
}

impl ExtHumanoidClip {
    fn last_key_time(&self) -> f32 {
        let tracks = self.tracks.iter().map(|(_, k)| k.end());
        tracks
            .chain(self.hips_translation.as_ref().map(Keyframes::end))
            .fold(0.0, f32::max)
    }

    /// The humanoid bones that have a rotation track.
    pub fn bones(&self) -> impl Iterator<Item = HumanBone> + '_ {
        self.tracks.iter().map(|(b, _)| *b)
    }

    /// Whether every track is keyed STEP: each key's pose holds until the next.
    #[must_use]
    pub fn holds_between_keys(&self) -> bool {
        let rotations = self.tracks.iter().map(|(_, k)| k.interpolation());
        let hips = self.hips_translation.as_ref().map(Keyframes::interpolation);
        let mut kinds = rotations.chain(hips).peekable();
        kinds.peek().is_some() && kinds.all(|i| i == Interpolation::Step)
    }

    /// Every track's key times merged, in order: the frames that play the clip back
    /// key for key (`sampler::merged_key_times`), with the times between keys a
    /// CUBICSPLINE track needs to be followed by frames played back LINEAR
    /// (`Keyframes::playback_times`).
    #[must_use]
    pub fn frame_times(&self) -> Vec<f32> {
        let rotations = self.tracks.iter().map(|(_, k)| k.playback_times());
        let hips = self
            .hips_translation
            .as_ref()
            .map(Keyframes::playback_times);
        let tracks: Vec<_> = rotations.chain(hips).collect();
        merged_key_times(tracks.iter().map(|t| &**t))
    }

    /// The hips position at `t` seconds, model space: `bindWorld(hips) · translation`.
    #[must_use]
    pub fn hips_position(&self, t: f32) -> Vec3 {
        let offset = self
            .hips_translation
            .as_ref()
            .map_or(Vec3::ZERO, |k| k.sample(t));
        self.hips_bind_world.transform_point3(offset)
    }

    /// Fills `pose` at `t` seconds (clamped to the clip): the normalized rotation of
    /// every tracked bone, the hips position and the reference hips height. Other
    /// bones, expressions and lookAt are untouched. Allocates nothing.
    pub fn sample(&self, t: f32, pose: &mut HumanoidPose) {
        for (bone, keys) in &self.tracks {
            pose.set_rotation(*bone, keys.sample(t));
        }
        pose.hips_position = self.hips_position(t);
        let height = self.hips_bind_world.translation.y;
        if height > 0.0 && height.is_finite() {
            pose.rest_hips_height = height;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::formats::glb::GlbFile;
    use serde_json::json;

    use crate::formats::glb::with_json;

    #[test]
    fn every_form_of_the_skeleton_definition_is_read() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        let skeleton = |v: &Value| v["extensions"][EXTENSION]["humanoidSkeletons"][0].clone();
        let forms: Vec<(&str, Vec<u8>)> = vec![
            ("array (README)", good.clone()),
            (
                "single object (schema)",
                with_json(&good, |v| {
                    let one = skeleton(v);
                    v["extensions"][EXTENSION] = json!({ "humanoidSkeleton": one });
                }),
            ),
            (
                "bare object",
                with_json(&good, |v| v["extensions"][EXTENSION] = skeleton(v)),
            ),
        ];
        for (what, bytes) in forms {
            let clip = parse(&bytes, Path::new("forms.glb"), None).unwrap();
            let hips = clip.hips_bind_world.translation;
            assert!((hips.y - 0.9).abs() < 1e-6, "{what}: {hips}");
            let rig = reference_rig(&bytes, Path::new("forms.glb")).unwrap();
            let map = rig.bone_map.unwrap();
            assert_eq!(map.bones.len(), BONE_COUNT, "{what}");
            assert!(map.bones.contains_key(&B::Chest), "{what}");
        }
        // A clip with no skeleton at all stands on the standard hips.
        let bare = with_json(&good, |v| {
            v.as_object_mut().unwrap().remove("extensions");
        });
        let clip = parse(&bare, Path::new("bare.glb"), None).unwrap();
        assert!(clip.rest.is_none());
        assert!((clip.hips_bind_world.translation.y - STANDARD_HIPS_HEIGHT).abs() < 1e-6);
    }

    #[test]
    fn bad_files_give_one_clear_error_each() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        let mut nan_key = good.clone();
        // The first float of the binary chunk is the first key time.
        let bin_len = crate::formats::glb::split_glb(&good)
            .unwrap()
            .1
            .unwrap()
            .len();
        let bin_start = good.len() - bin_len;
        nan_key[bin_start..bin_start + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        let channel = |v: &mut Value, c: usize| v["animations"][0]["channels"][c].take();
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
                "NaN key",
                nan_key,
                "animations[0].samplers[0]: time at key 0",
            ),
            (
                "unknown bone",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][3]["target"]["extensions"][EXTENSION]["humanoidBoneName"] =
                        "tail".into();
                }),
                "animations[0].channels[3]: humanoidBoneName `tail` is not an EXT_skeleton_humanoid bone name",
            ),
            (
                "shared sampler",
                with_json(&good, |v| {
                    let mut plain = channel(v, 2);
                    plain["target"] = json!({"node": 5, "path": "rotation"});
                    v["animations"][0]["channels"][2] = plain;
                    v["animations"][0]["channels"][2]["sampler"] = 1.into();
                }),
                "animations[0].channels[2]: sampler 1 is shared with channels[1]",
            ),
            (
                "same bone twice",
                with_json(&good, |v| {
                    let copy = v["animations"][0]["channels"][1].clone();
                    v["animations"][0]["channels"]
                        .as_array_mut()
                        .unwrap()
                        .push(copy);
                }),
                "rotation is already animated by channels[1]",
            ),
            (
                "weights",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][1]["target"]["path"] = "weights".into()
                }),
                "must animate rotation, translation or scale, not `weights`",
            ),
            (
                "no humanoid channel",
                with_json(&good, |v| {
                    // Plain node channels (the hips translation is channel 0).
                    let channels = v["animations"][0]["channels"].as_array_mut().unwrap();
                    for (i, c) in channels.iter_mut().enumerate() {
                        let path = if i == 0 { "translation" } else { "rotation" };
                        c["target"] = json!({"node": 0, "path": path});
                    }
                }),
                "animations[0]: no channel animates a humanoid bone",
            ),
            (
                "sampler out of range",
                with_json(&good, |v| {
                    v["animations"][0]["channels"][4]["sampler"] = 999.into()
                }),
                "animations[0].channels[4]: sampler 999 does not exist",
            ),
            (
                "accessor out of range",
                with_json(&good, |v| v["accessors"][3]["count"] = 100_000.into()),
                "accessor 3",
            ),
            (
                "bad interpolation",
                with_json(&good, |v| {
                    v["animations"][0]["samplers"][2]["interpolation"] = "SMOOTH".into()
                }),
                "animations[0].samplers[2]: unknown interpolation `SMOOTH`",
            ),
            (
                "no animation",
                with_json(&good, |v| {
                    v.as_object_mut().unwrap().remove("animations");
                }),
                "animations: the file has no animation",
            ),
        ];
        for (what, bytes, expected) in cases {
            let err = match parse(&bytes, Path::new("bad.glb"), None) {
                Ok(_) => panic!("{what}: accepted"),
                Err(e) => e.to_string(),
            };
            assert!(err.starts_with("bad.glb"), "{what}: {err}");
            assert!(err.contains(expected), "{what}: `{err}` lacks `{expected}`");
            assert!(!err.contains('\n'), "{what}: {err}");
        }
        let err = parse(&good, Path::new("bad.glb"), Some("walk")).unwrap_err();
        assert!(
            err.to_string()
                .contains("no animation `walk` (the file has: test take)")
        );
    }

    #[test]
    fn every_prefix_of_a_file_fails_without_panicking() {
        let (writer, _) = performance();
        let good = writer.to_bytes();
        for len in (0..good.len()).step_by(89) {
            assert!(
                parse(&good[..len], Path::new("cut.glb"), None).is_err(),
                "{len}"
            );
        }
    }
}
