//! The `EXT_skeleton_humanoid` writer: frames are appended as they come (`push`),
//! the GLB is written at the end (see "Files written" in the module header of
//! `ext_humanoid`).

use std::io::{self, Write};
use std::path::Path;

use glam::{Affine3A, Quat, Vec3};
use serde_json::{Value, json};

use super::{EXTENSION, ExtHumanoidError, canonical_frame, to_channel_rotation};
use crate::formats::glb::{self, ElementType, FloatAccessor, GlbFile};
use crate::formats::tracks::{self, PushError, Track};
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B, HumanoidPose};

/// Appends frames of a performance, then writes them as one `EXT_skeleton_humanoid`
/// GLB (see the module header).
#[derive(Debug, Clone)]
pub struct ExtHumanoidWriter {
    rest: VrmaRest,
    name: String,
    times: Track,
    /// Channel values `r(b)`, x, y, z, w per frame, for every bone seen so far.
    rotations: Vec<Option<Track>>,
    /// Channel values of the hips translation, x, y, z per frame: the hips' offset
    /// from its reference position, model axes.
    hips: Track,
    /// Whether every sampler is STEP (`hold_between_frames`), else LINEAR.
    hold: bool,
}

impl ExtHumanoidWriter {
    /// An empty recording whose reference skeleton will stand in the T-pose `rest`;
    /// `name` becomes the animation's name.
    #[must_use]
    pub fn new(rest: VrmaRest, name: &str) -> Self {
        Self {
            rest,
            name: name.to_owned(),
            times: Track::new(1),
            rotations: vec![None; BONE_COUNT],
            hips: Track::new(3),
            hold: false,
        }
    }

    /// Writes every sampler STEP: each frame's pose holds until the next frame, as
    /// in a clip keyed STEP (LINEAR would move between them).
    pub fn hold_between_frames(&mut self) {
        self.hold = true;
    }

    /// How many frames have been appended.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Appends one frame at `time` seconds. A bone that first appears now holds its
    /// reference pose (identity) in the earlier frames; one that a frame lacks holds
    /// its previous value. Every bone is written, eyes included (this format has no
    /// lookAt); expressions are not part of the format.
    pub fn push(&mut self, time: f32, pose: &HumanoidPose) -> Result<(), PushError> {
        tracks::check_frame(self.times.last(), time, pose)?;
        let frames = self.times.len();
        self.times.push(&[time], None);
        let offset = pose.hips_position - self.rest.position(B::Hips);
        self.hips.push(&offset.to_array(), None);
        for bone in ALL {
            let track = &mut self.rotations[bone.index()];
            let value = pose.rotation(bone).map(|q| {
                to_channel_rotation(bone, q.normalize())
                    .normalize()
                    .to_array()
            });
            tracks::record(
                track,
                frames,
                &Quat::IDENTITY.to_array(),
                value.as_ref().map(|v| &v[..]),
                None,
            );
        }
        Ok(())
    }

    /// Writes the file to `path`.
    pub fn save(&self, path: &Path) -> Result<(), ExtHumanoidError> {
        self.write_file(path)
            .map_err(|source| ExtHumanoidError::Write {
                path: path.to_owned(),
                source,
            })
    }

    /// The file's own top-level JSON: the extension, the reference skeleton's nodes
    /// and skin (inverse bind matrices in accessor 1), the animation (key times in
    /// accessor 0, the hips translation in 2, then the bones' rotations).
    fn properties(&self, bones: &[(HumanBone, &Track)]) -> [(&'static str, Value); 7] {
        // Nodes: one per humanoid bone, index = `HumanBone::index` (parents first).
        let mut nodes: Vec<Value> = Vec::with_capacity(BONE_COUNT);
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); BONE_COUNT];
        for bone in ALL {
            let (origin, parent_frame) = match bone.parent() {
                Some(p) => {
                    children[p.index()].push(bone.index());
                    (self.rest.position(p), canonical_frame(p))
                }
                None => (Vec3::ZERO, Quat::IDENTITY),
            };
            let inverse_parent = parent_frame.conjugate();
            let translation = inverse_parent * (self.rest.position(bone) - origin);
            let rotation = (inverse_parent * canonical_frame(bone)).normalize();
            let mut node = json!({"name": bone.name(), "translation": translation.to_array()});
            if !rotation.abs_diff_eq(Quat::IDENTITY, 0.0) {
                node["rotation"] = json!(rotation.to_array());
            }
            nodes.push(node);
        }
        for (node, kids) in nodes.iter_mut().zip(&children) {
            if !kids.is_empty() {
                node["children"] = json!(kids);
            }
        }
        let human_bones: serde_json::Map<String, Value> = ALL
            .iter()
            .map(|b| (b.name().to_owned(), json!(b.index())))
            .collect();

        // Channels: hips translation (accessor 2), then bone rotations (3, 4, ...).
        let target = |bone: HumanBone, path: &str| json!({"path": path, "extensions": {EXTENSION: {"humanoidBoneName": bone.name()}}});
        let mut channels = vec![json!({"sampler": 0, "target": target(B::Hips, "translation")})];
        let interpolation = if self.hold { "STEP" } else { "LINEAR" };
        let mut samplers = vec![json!({"input": 0, "output": 2, "interpolation": interpolation})];
        for (k, (bone, _)) in bones.iter().enumerate() {
            channels.push(json!({"sampler": k + 1, "target": target(*bone, "rotation")}));
            samplers.push(json!({"input": 0, "output": k + 3, "interpolation": interpolation}));
        }

        let skeleton = json!({"rootNode": 0, "humanoidBones": human_bones});
        let joints: Vec<usize> = (0..BONE_COUNT).collect();
        [
            ("extensionsUsed", json!([EXTENSION])),
            (
                "extensions",
                json!({EXTENSION: {"humanoidSkeletons": [skeleton]}}),
            ),
            ("scene", json!(0)),
            ("scenes", json!([{"nodes": [0]}])),
            ("nodes", Value::Array(nodes)),
            (
                "skins",
                json!([{"name": "reference T-pose", "joints": joints, "inverseBindMatrices": 1}]),
            ),
            (
                "animations",
                json!([{"name": self.name, "channels": channels, "samplers": samplers}]),
            ),
        ]
    }
}

impl GlbFile for ExtHumanoidWriter {
    /// Writes the GLB: header, JSON chunk, then the binary chunk streamed from the
    /// track buffers.
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let (times, hips) = if self.times.is_empty() {
            // No frame: one frame of the reference pose, so readers find a clip.
            (
                FloatAccessor::key_times(&[0.0]),
                FloatAccessor::new(&[0.0; 3], ElementType::Vec3),
            )
        } else {
            (
                FloatAccessor::track(&self.times, None, ElementType::Scalar).as_key_times(),
                FloatAccessor::track(&self.hips, None, ElementType::Vec3),
            )
        };
        let bones: Vec<(HumanBone, &Track)> = ALL
            .iter()
            .filter_map(|b| self.rotations[b.index()].as_ref().map(|t| (*b, t)))
            .collect();

        // Reference skeleton: world transform of every bone node, and its inverse.
        let world: Vec<Affine3A> = ALL
            .iter()
            .map(|&b| {
                Affine3A::from_rotation_translation(canonical_frame(b), self.rest.position(b))
            })
            .collect();
        let inverse_binds: Vec<f32> = world
            .iter()
            .flat_map(|w| glam::Mat4::from(w.inverse()).to_cols_array())
            .collect();

        // The binary chunk: one accessor per array, in this order.
        let mut accessors = vec![
            times,
            FloatAccessor::new(&inverse_binds, ElementType::Mat4),
            hips,
        ];
        accessors.extend(
            bones
                .iter()
                .map(|(_, t)| FloatAccessor::track(t, None, ElementType::Vec4)),
        );
        glb::write_floats(out, self.properties(&bones), &accessors)
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn written_files_read_back_exactly() {
        let (writer, frames) = performance();
        let bytes = writer.to_bytes();
        let read = parse(&bytes, Path::new("take.glb"), None).unwrap();
        assert_eq!(read.name.as_deref(), Some("test take"));
        assert!((read.duration - 39.0 / 30.0).abs() < 1e-6);
        assert!(read.bones().any(|b| b == B::Chest));
        for (t, want) in &frames {
            let mut got = HumanoidPose::default();
            read.sample(*t, &mut got);
            for (bone, q) in want.bones() {
                let r = got.rotation(bone).unwrap();
                assert!(rotation_angle(q, r) <= 1e-5, "{bone} at {t}");
            }
            assert_eq!(got.bones().count(), want.bones().count());
            assert!(got.hips_position.distance(want.hips_position) < 1e-6);
            assert!((got.rest_hips_height - 0.9).abs() < 1e-6);
        }
        let rest = read.rest.unwrap();
        for bone in ALL {
            let want = VrmaRest::standard(0.9).position(bone);
            assert!(rest.position(bone).distance(want) < 1e-5, "{bone}");
        }
    }

    #[test]
    fn push_rejects_time_going_backwards_and_nan() {
        let mut writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "x");
        let pose = HumanoidPose::default();
        writer.push(1.0, &pose).unwrap();
        assert!(matches!(
            writer.push(1.0, &pose),
            Err(PushError::TimeNotIncreasing { .. })
        ));
        assert!(matches!(
            writer.push(f32::NAN, &pose),
            Err(PushError::NotFinite(_))
        ));
        let mut bad = pose;
        bad.hips_position.x = f32::INFINITY;
        assert!(writer.push(2.0, &bad).is_err());
        assert_eq!(writer.frame_count(), 1);
    }

    #[test]
    fn an_empty_writer_writes_one_reference_pose_frame() {
        let writer = ExtHumanoidWriter::new(VrmaRest::standard(0.9), "empty");
        let read = parse(&writer.to_bytes(), Path::new("e.glb"), None).unwrap();
        assert_eq!(read.duration, 0.0);
        assert_eq!(read.bones().count(), 0);
        let mut pose = HumanoidPose::default();
        read.sample(0.0, &mut pose);
        assert!(
            pose.hips_position
                .abs_diff_eq(Vec3::new(0.0, 0.9, 0.0), 1e-6)
        );
    }
}
