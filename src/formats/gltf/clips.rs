//! Animations as clips: every animation that moves a joint becomes one of
//! `Rig::clips`, sampled into a `Motion` (see `formats::sampler`): at the channels'
//! own key times (keys a rounding apart as one) when one channel's keys cover all the
//! others', else on a uniform grid at a standard rate. Rotation and translation
//! channels on skeleton joints are read, and those on a copy of the skeleton read
//! onto it by name (`armature_copy`);
//! scale and morph-weight channels and channels on other nodes are ignored (noted),
//! except that frames on which joints' scale keys shrink the whole figure to nothing
//! (hidden in a glTF player, a spawn's first frame) hold the nearest frame the figure
//! shows on (`hidden_frames`).
//! Keys in a meshopt-compressed buffer view are decoded (`meshopt`). An unanimated
//! joint holds its node TRS, as in a glTF player (see `read_clips`). A clip starts
//! at its first key: a take cut from a longer timeline (an FBX file's takes laid one
//! after another, as Sketchfab's conversions keep them) keys from where it sat on it,
//! and the time before that first key, a hold of its first pose, is left out.

use std::collections::{BTreeSet, HashMap};

use glam::{Quat, Vec3};
use gltf::json::accessor::Type;
use gltf::json::animation::{Interpolation as JsonInterpolation, Property};
use gltf::json::validation::Checked;
use serde_json::Value;

use super::armature_copy::copy_positions;
use super::{AccessorSpec, Document, GltfError};
use crate::formats::frame_ranges::frame_ranges;
use crate::formats::sampler::{self, Interpolation, KeyValue, KeyframeError, Keyframes};
use crate::formats::{Clip, Motion};
use crate::skeleton::Transform;

/// Most samples (frames × joints) one clip may hold: 16 M, about 450 MB of
/// rotations and translations. Keeps a file from asking for a huge grid.
const MAX_CLIP_SAMPLES: usize = 16_000_000;

/// What key times and values must be: floats, or for rotations also normalized
/// integers, as the glTF spec allows.
const TIMES: AccessorSpec = AccessorSpec::floats(Type::Scalar);
const TRANSLATIONS: AccessorSpec = AccessorSpec::floats(Type::Vec3);
const ROTATIONS: AccessorSpec = AccessorSpec {
    type_: Type::Vec4,
    normalized_integers: true,
};

/// A skeleton node's scale keys, by node index.
type ScaleKeys = (usize, Keyframes<Vec3>);

/// One animated property of one joint, keyed.
enum Track {
    Rotation { joint: usize, keys: Keyframes<Quat> },
    Translation { joint: usize, keys: Keyframes<Vec3> },
}

impl Track {
    /// The times frames must be sampled at to play this track back LINEAR
    /// (`Keyframes::playback_times`: its keys, and for CUBICSPLINE the times
    /// between them its curve needs).
    fn times(&self) -> std::borrow::Cow<'_, [f32]> {
        match self {
            Self::Rotation { keys, .. } => keys.playback_times(),
            Self::Translation { keys, .. } => keys.playback_times(),
        }
    }

    fn is_cubic(&self) -> bool {
        let interpolation = match self {
            Self::Rotation { keys, .. } => keys.interpolation(),
            Self::Translation { keys, .. } => keys.interpolation(),
        };
        interpolation == Interpolation::CubicSpline
    }
}

/// Every channel's times merged (`sampler::merged_key_times`), as long as there are
/// no more than `max_frames`.
fn merged_frames(
    channel_times: &[&[f32]],
    max_frames: usize,
) -> Result<sampler::FrameTimes, sampler::TooManyFrames> {
    let times = sampler::merged_key_times(channel_times.iter().copied());
    match (times.first(), times.last()) {
        (Some(&start), Some(&end)) if times.len() > max_frames => Err(sampler::TooManyFrames {
            frames: times.len() as f64,
            start,
            end,
            max: max_frames,
        }),
        _ => Ok(sampler::FrameTimes {
            times,
            resampled_fps: None,
        }),
    }
}

/// Channels no clip uses, counted over every animation of a file: one note each.
#[derive(Debug, Default)]
struct IgnoredChannels {
    scale: usize,
    weights: usize,
    unknown_path: usize,
    /// Rotation and translation channels on nodes outside the skeleton.
    outside: usize,
    outside_nodes: BTreeSet<usize>,
}

impl Document<'_> {
    /// Every animation that moves a joint, as a clip over the whole skeleton (see
    /// `sampler::frame_times` for when frames are), in file order; named after the
    /// animation, or `animation{i}`.
    ///
    /// A joint or property no channel animates holds the node's own TRS
    /// (`node_rest`), not the skeleton's rest. The two differ only for skins whose
    /// rest came from inverse bind matrices, and there the node TRS is right:
    /// - glTF animates node TRS, and a property without a channel keeps its node
    ///   value: that is what every player shows. RobotExpressive's `Idle` keys no
    ///   arm; its nodes hang the arms down, its bind pose holds them out. With the
    ///   bind rest the clip would play arms out, a pose the file never shows.
    /// - The keyed values are node TRS too, and both poses are locals in the same
    ///   frame: a bind local is `IBM_parent · IBM_joint⁻¹`, independent
    ///   of the frame the IBMs were written in, so a motion local is a rotation of
    ///   the same joint against the same parent as the skeleton's rest, which is all
    ///   retargeting asks (it measures motion against the rest per joint).
    /// - Rotation and translation of a joint come from the same place (the node,
    ///   or its channel), never a keyed rotation over a bind-pose translation.
    ///   Ancestors above the skin and skins posed at their bind pose have rest =
    ///   node TRS, so for them nothing differs.
    pub(super) fn read_clips(
        &mut self,
        position: &[Option<usize>],
        parent: &[Option<usize>],
        node_rest: &[Transform],
        notes: &mut Vec<String>,
    ) -> Result<Vec<Clip>, GltfError> {
        let node_rotations: Vec<Quat> = node_rest.iter().map(|t| t.rotation).collect();
        let node_translations: Vec<Vec3> = node_rest.iter().map(|t| t.translation).collect();
        let max_frames = MAX_CLIP_SAMPLES / node_rest.len().max(1);
        let mut ignored = IgnoredChannels::default();
        let (mut resampled, mut skipped, mut late) = (Vec::new(), Vec::new(), Vec::new());
        let (mut on_copies, mut hidden_in) = (Vec::new(), Vec::new());
        let mut clips = Vec::with_capacity(self.doc.root.animations.len());
        for a in 0..self.doc.root.animations.len() {
            let name = self.doc.root.animations[a]
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("animation{a}"));
            let copied = self.copy_positions(a, position, parent);
            if copied.is_some() {
                on_copies.push(format!("`{name}`"));
            }
            let position = copied.as_deref().unwrap_or(position);
            let (tracks, scales) = self.read_tracks(a, position, &mut ignored, notes)?;
            if tracks.is_empty() {
                skipped.push(format!("`{name}`"));
                continue;
            }
            let channel_times: Vec<_> = tracks.iter().map(Track::times).collect();
            let channel_times: Vec<&[f32]> = channel_times.iter().map(|t| &**t).collect();
            let frames = match tracks.iter().any(Track::is_cubic) {
                // A curve's frames are its keys and the times between them it
                // needs, every track's merged: a uniform grid would cut the curves.
                true => merged_frames(&channel_times, max_frames),
                false => sampler::frame_times(&channel_times, max_frames),
            }
            .map_err(|e| self.invalid(format!("animations[{a}]"), e.to_string()))?;
            if let Some(fps) = frames.resampled_fps {
                resampled.push(format!("`{name}` at {fps} fps"));
            }
            // A lead longer than the take itself is a place on a longer timeline (a
            // frame's lead, a first key at 1/30 s, or one key alone, is not worth a
            // note).
            if let (Some(&start), Some(&end)) = (frames.times.first(), frames.times.last())
                && start > end - start
                && end > start
            {
                late.push(format!("`{name}` at {start:.3} s"));
            }
            let hidden =
                hidden_frames(&scales, &frames.times, position, parent, &node_translations);
            if hidden.contains(&true) && hidden.contains(&false) {
                hidden_in.push(format!("`{name}` ({})", marked_frames(&hidden)));
            }
            let motion = sample_motion(
                &tracks,
                frames.times,
                &node_rotations,
                &node_translations,
                &hidden,
            );
            clips.push(Clip { name, motion });
        }
        if !resampled.is_empty() {
            notes.push(format!(
                "animations resampled on a uniform grid (their channels' key times differ): {}",
                resampled.join(", ")
            ));
        }
        if !late.is_empty() {
            notes.push(format!(
                "animations keyed from later than 0 s play from their first key: {}",
                late.join(", ")
            ));
        }
        if !on_copies.is_empty() {
            notes.push(format!(
                "animations keyed on a copy of the skeleton (its joints' names under another armature) read onto the skeleton by name: {}",
                on_copies.join(", ")
            ));
        }
        if !hidden_in.is_empty() {
            notes.push(format!(
                "animations whose scale keys shrink the whole figure to nothing on some frames \
                 (a glTF player shows nothing there; the joints' keys on them are no pose) hold \
                 the nearest frame the figure shows on: {}",
                hidden_in.join(", ")
            ));
        }
        if !skipped.is_empty() {
            notes.push(format!(
                "animations that move no joint of the skeleton skipped: {}",
                skipped.join(", ")
            ));
        }
        self.note_ignored(&ignored, notes);
        Ok(clips)
    }

    /// Where animation `a`'s keyed nodes sit when it keys a copy of the skeleton
    /// (`armature_copy`), else `None`.
    fn copy_positions(
        &self,
        a: usize,
        position: &[Option<usize>],
        parent: &[Option<usize>],
    ) -> Option<Vec<Option<usize>>> {
        let nodes = &self.doc.root.nodes;
        let animated: Vec<usize> = self.doc.root.animations[a]
            .channels
            .iter()
            .filter(|c| {
                matches!(
                    c.target.path,
                    Checked::Valid(Property::Rotation | Property::Translation)
                )
            })
            .map(|c| c.target.node.value())
            .filter(|&n| n < nodes.len())
            .collect();
        let names: Vec<Option<&str>> = nodes.iter().map(|n| n.name.as_deref()).collect();
        copy_positions(&animated, &names, parent, position)
    }

    /// The rotation and translation channels of animation `a` on skeleton joints,
    /// read and checked; other channels are counted in `ignored`. Beside them, the
    /// scale keys of skeleton joints by node, where they read (`scale_keys`): they
    /// only tell which frames hide the figure.
    fn read_tracks(
        &mut self,
        a: usize,
        position: &[Option<usize>],
        ignored: &mut IgnoredChannels,
        notes: &mut Vec<String>,
    ) -> Result<(Vec<Track>, Vec<ScaleKeys>), GltfError> {
        // A copy of the indices, so buffers can load while they are walked.
        let animation = self.doc.root.animations[a].clone();
        // (node, is rotation) -> the channel animating it.
        let mut animated: HashMap<(usize, bool), usize> = HashMap::new();
        let (mut tracks, mut scales) = (Vec::new(), Vec::new());
        for (c, channel) in animation.channels.iter().enumerate() {
            let place = format!("animations[{a}].channels[{c}]");
            let node = channel.target.node.value();
            if node >= self.doc.root.nodes.len() {
                return Err(self.invalid(place, format!("node {node} does not exist")));
            }
            let s = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(s) else {
                return Err(self.invalid(place, format!("sampler {s} does not exist")));
            };
            let is_rotation = match channel.target.path {
                Checked::Valid(Property::Rotation) => true,
                Checked::Valid(Property::Translation) => false,
                Checked::Valid(Property::Scale) => {
                    ignored.scale += 1;
                    if position[node].is_some()
                        && let Some(keys) = self.scale_keys(a, s, sampler)
                    {
                        scales.push((node, keys));
                    }
                    continue;
                }
                Checked::Valid(Property::MorphTargetWeights) => {
                    ignored.weights += 1;
                    continue;
                }
                Checked::Invalid => {
                    ignored.unknown_path += 1;
                    continue;
                }
            };
            let Some(joint) = position[node] else {
                ignored.outside += 1;
                ignored.outside_nodes.insert(node);
                continue;
            };
            let first = *animated.entry((node, is_rotation)).or_insert(c);
            if first != c {
                let property = if is_rotation {
                    "rotation"
                } else {
                    "translation"
                };
                notes.push(format!(
                    "{place}: node {node} {property} is already animated by channels[{first}]; ignored"
                ));
                continue;
            }
            let place = format!("animations[{a}].samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(JsonInterpolation::Step) => Interpolation::Step,
                Checked::Valid(JsonInterpolation::Linear) => Interpolation::Linear,
                Checked::Valid(JsonInterpolation::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    let pointer = format!("/animations/{a}/samplers/{s}/interpolation");
                    let found = self
                        .doc
                        .raw
                        .pointer(&pointer)
                        .map_or("?".to_owned(), Value::to_string);
                    return Err(self.invalid(
                        place,
                        format!("interpolation {found} is not STEP, LINEAR or CUBICSPLINE"),
                    ));
                }
            };
            let (input, output) = (sampler.input.value(), sampler.output.value());
            let input_name = format!("input accessor {input}");
            let times = self.animation_accessor(&place, &input_name, input, TIMES)?;
            let output_name = format!("output accessor {output}");
            let track = if is_rotation {
                let kind = ROTATIONS;
                let values = self.animation_accessor(&place, &output_name, output, kind)?;
                let values = values.chunks_exact(4).map(Quat::from_slice).collect();
                let keys = self.keyframes(&place, input, output, times, values, interpolation)?;
                Track::Rotation { joint, keys }
            } else {
                let kind = TRANSLATIONS;
                let values = self.animation_accessor(&place, &output_name, output, kind)?;
                let values = values.chunks_exact(3).map(Vec3::from_slice).collect();
                let keys = self.keyframes(&place, input, output, times, values, interpolation)?;
                Track::Translation { joint, keys }
            };
            tracks.push(track);
        }
        Ok((tracks, scales))
    }

    /// The keys of a scale channel, or `None` when they do not read: scale is not
    /// played, only looked at for frames that hide the figure, so a channel that
    /// does not read is passed over as every scale channel was.
    fn scale_keys(
        &mut self,
        a: usize,
        s: usize,
        sampler: &gltf::json::animation::Sampler,
    ) -> Option<Keyframes<Vec3>> {
        let interpolation = match sampler.interpolation {
            Checked::Valid(JsonInterpolation::Step) => Interpolation::Step,
            Checked::Valid(JsonInterpolation::Linear) => Interpolation::Linear,
            Checked::Valid(JsonInterpolation::CubicSpline) => Interpolation::CubicSpline,
            Checked::Invalid => return None,
        };
        let place = format!("animations[{a}].samplers[{s}]");
        let (input, output) = (sampler.input.value(), sampler.output.value());
        let times = self
            .animation_accessor(&place, "input", input, TIMES)
            .ok()?;
        let values = self
            .animation_accessor(&place, "output", output, TRANSLATIONS)
            .ok()?;
        let values = values.chunks_exact(3).map(Vec3::from_slice).collect();
        Keyframes::new(times, values, interpolation).ok()
    }

    /// An animation sampler's accessor. One without a buffer view reads as zeros, as
    /// the spec says (glTF-Transform writes a translation held at the origin so):
    /// zero translations are a place, zero rotations or repeated zero times are
    /// refused as any such keys are.
    fn animation_accessor(
        &mut self,
        place: &str,
        what: &str,
        index: usize,
        kind: AccessorSpec,
    ) -> Result<Vec<f32>, GltfError> {
        Ok(self.doc.read_accessor_or_zeros(index, kind, place, what)?)
    }

    /// Builds keyframes, naming the accessor at fault: the input for times, the
    /// output for values.
    fn keyframes<T: KeyValue>(
        &self,
        place: &str,
        input: usize,
        output: usize,
        times: Vec<f32>,
        values: Vec<T>,
        interpolation: Interpolation,
    ) -> Result<Keyframes<T>, GltfError> {
        Keyframes::new(times, values, interpolation).map_err(|e| {
            let accessor = match e {
                KeyframeError::NoKeys
                | KeyframeError::TimeNotFinite { .. }
                | KeyframeError::TimesNotIncreasing { .. } => format!("input accessor {input}"),
                _ => format!("output accessor {output}"),
            };
            self.invalid(place, format!("{accessor}: {e}"))
        })
    }

    /// One note per kind of channel no clip uses.
    fn note_ignored(&self, ignored: &IgnoredChannels, notes: &mut Vec<String>) {
        if ignored.scale > 0 {
            notes.push(format!(
                "animations: {} ignored (joints keep their rest scale)",
                channels(ignored.scale, "`scale` channel")
            ));
        }
        if ignored.weights > 0 {
            notes.push(format!(
                "animations: {} ignored (morph targets are not read)",
                channels(ignored.weights, "`weights` channel")
            ));
        }
        if ignored.unknown_path > 0 {
            notes.push(format!(
                "animations: {} with an unknown target path ignored",
                channels(ignored.unknown_path, "channel")
            ));
        }
        if ignored.outside > 0 {
            let mut names: Vec<String> = ignored
                .outside_nodes
                .iter()
                .take(4)
                .map(|&n| match self.doc.root.nodes[n].name.as_deref() {
                    Some(name) if !name.is_empty() => format!("`{name}`"),
                    _ => format!("node {n}"),
                })
                .collect();
            if ignored.outside_nodes.len() > names.len() {
                names.push("...".to_owned());
            }
            notes.push(format!(
                "animations: {} on nodes outside the skeleton ignored ({})",
                channels(ignored.outside, "channel"),
                names.join(", ")
            ));
        }
    }
}

/// Samples every track at every frame time; what no track animates keeps the given
/// locals (one per joint). Frames marked `hidden` hold the nearest frame that is not
/// (`hold_hidden`). The motion's times count from the first frame's.
fn sample_motion(
    tracks: &[Track],
    times: Vec<f32>,
    rotations: &[Quat],
    translations: &[Vec3],
    hidden: &[bool],
) -> Motion {
    let joints = rotations.len();
    let samples = times.len() * joints;
    let (mut frame_rotations, mut frame_translations) =
        (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for &t in &times {
        let frame = frame_rotations.len();
        frame_rotations.extend_from_slice(rotations);
        frame_translations.extend_from_slice(translations);
        for track in tracks {
            match track {
                Track::Rotation { joint, keys } => frame_rotations[frame + joint] = keys.sample(t),
                Track::Translation { joint, keys } => {
                    frame_translations[frame + joint] = keys.sample(t);
                }
            }
        }
    }
    hold_hidden(hidden, joints, &mut frame_rotations);
    hold_hidden(hidden, joints, &mut frame_translations);
    let start = times.first().copied().unwrap_or(0.0);
    let times = times.into_iter().map(|t| t - start).collect();
    Motion::new(times, joints, frame_rotations, frame_translations)
}

/// A scale whose every component is closer to zero than this shrinks a joint, and
/// everything under it, to a point: far below any size a figure is drawn at.
const NOTHING: f32 = 1e-6;

/// For each frame time, whether the scale keys (by node) shrink every skeleton joint
/// below the skeleton's roots to nothing, itself or through a node above it: the
/// frame a glTF player shows no figure on (KayKit's spawn clips key every joint's
/// scale 0 on their first frame, and their translations there 16 m away). The roots
/// are left out, as most are an armature node that draws nothing, and so are the
/// joints that sit at a left-out parent's origin (no translation in `translations`,
/// by joint): a wrapper above the armature node (glTF-Transform's `center` adds a
/// `Pivot`) draws nothing either. All `false` without scale keys.
fn hidden_frames(
    scales: &[ScaleKeys],
    times: &[f32],
    position: &[Option<usize>],
    parent: &[Option<usize>],
    translations: &[Vec3],
) -> Vec<bool> {
    let is_joint = |n: usize| position.get(n).is_some_and(Option::is_some);
    // `node` and the nodes above it; a cycle is refused when the hierarchy is read,
    // and the walk stops after as many steps as there are nodes anyway.
    let up_from = |node: Option<usize>| {
        std::iter::successors(node, |&n| parent.get(n).copied().flatten()).take(parent.len() + 1)
    };
    let is_root = |n: usize| !up_from(parent.get(n).copied().flatten()).any(is_joint);
    let at_origin = |n: usize| {
        position
            .get(n)
            .copied()
            .flatten()
            .and_then(|j| translations.get(j))
            .is_some_and(|t| *t == Vec3::ZERO)
    };
    // A root, or a joint at its parent's origin under one, all the way up.
    let left_out = |n: usize| up_from(Some(n)).take_while(|&m| !is_root(m)).all(at_origin);
    let joints: Vec<usize> = (0..position.len())
        .filter(|&n| is_joint(n) && !left_out(n))
        .collect();
    if scales.is_empty() || joints.is_empty() {
        return vec![false; times.len()];
    }
    let mut shrunk = vec![false; position.len()];
    times
        .iter()
        .map(|&t| {
            shrunk.fill(false);
            for (node, keys) in scales {
                if let Some(slot) = shrunk.get_mut(*node) {
                    *slot = keys.sample(t).abs().max_element() < NOTHING;
                }
            }
            joints
                .iter()
                .all(|&j| up_from(Some(j)).any(|n| shrunk.get(n).copied().unwrap_or(false)))
        })
        .collect()
}

/// Gives every hidden frame of `values` (`joints` per frame) the values of the
/// nearest frame that is not (the earlier on a tie); a clip hidden throughout, or
/// values of other frames than `hidden` counts, stay as they are.
fn hold_hidden<T: Copy>(hidden: &[bool], joints: usize, values: &mut [T]) {
    let shown: Vec<usize> = (0..hidden.len()).filter(|&f| !hidden[f]).collect();
    if shown.is_empty() || shown.len() == hidden.len() || values.len() != hidden.len() * joints {
        return;
    }
    for f in (0..hidden.len()).filter(|&f| hidden[f]) {
        if let Some(g) = shown.iter().copied().min_by_key(|&g| (g.abs_diff(f), g)) {
            values.copy_within(g * joints..(g + 1) * joints, f * joints);
        }
    }
}

/// The frames marked, 1-based, as ranges: `frame 1`, `frames 1-3, 9`.
fn marked_frames(marked: &[bool]) -> String {
    let word = match marked.iter().filter(|&&m| m).count() {
        1 => "frame",
        _ => "frames",
    };
    let frames = (0..marked.len()).filter(|&f| marked[f]);
    format!("{word} {}", frame_ranges(frames))
}

/// `1 channel`, `3 channels`.
fn channels(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{GltfDoc, Rig, parse};
    use super::*;
    use glam::Mat4;
    use serde_json::json;
    use std::path::Path;

    /// Binary data for a test file: accessors appended one by one, each over its own
    /// buffer view, all in buffer 0.
    #[derive(Default)]
    struct Data {
        bytes: Vec<u8>,
        views: Vec<Value>,
        accessors: Vec<Value>,
    }

    impl Data {
        fn push(&mut self, bytes: &[u8], component_type: u32, count: usize, type_: &str) -> usize {
            while !self.bytes.len().is_multiple_of(4) {
                self.bytes.push(0);
            }
            self.views.push(json!({
                "buffer": 0, "byteOffset": self.bytes.len(), "byteLength": bytes.len()
            }));
            self.bytes.extend_from_slice(bytes);
            self.accessors.push(json!({
                "bufferView": self.views.len() - 1, "componentType": component_type,
                "count": count, "type": type_
            }));
            self.accessors.len() - 1
        }

        fn floats(&mut self, values: &[f32], type_: &str, per_element: usize) -> usize {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.push(&bytes, 5126, values.len() / per_element, type_)
        }

        fn times(&mut self, times: &[f32]) -> usize {
            self.floats(times, "SCALAR", 1)
        }

        fn rotations(&mut self, rotations: &[Quat]) -> usize {
            let flat: Vec<f32> = rotations.iter().flat_map(|q| q.to_array()).collect();
            self.floats(&flat, "VEC4", 4)
        }

        fn translations(&mut self, translations: &[Vec3]) -> usize {
            let flat: Vec<f32> = translations.iter().flat_map(|v| v.to_array()).collect();
            self.floats(&flat, "VEC3", 3)
        }

        fn matrices(&mut self, matrices: &[Mat4]) -> usize {
            self.floats(
                &matrices
                    .iter()
                    .flat_map(|m| m.to_cols_array())
                    .collect::<Vec<_>>(),
                "MAT4",
                16,
            )
        }

        /// `doc` with this data as its accessors, views and (data URI) buffer 0.
        fn into_doc(self, mut doc: Value) -> Value {
            doc["accessors"] = json!(self.accessors);
            doc["bufferViews"] = json!(self.views);
            doc["buffers"] = json!([{
                "byteLength": self.bytes.len(),
                "uri": format!("data:application/octet-stream;base64,{}", base64(&self.bytes))
            }]);
            doc
        }
    }

    /// Hips (node 0) > Spine (1) > Head (2), skinned to a mesh node (3) outside the
    /// skeleton, no inverse bind matrices.
    fn animated(data: Data, animations: Value) -> Value {
        let mut nodes = hips_spine_head();
        if let Some(list) = nodes.as_array_mut() {
            list.push(json!({"name": "Mesh", "mesh": 0, "skin": 0}));
        }
        data.into_doc(json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0, 3]}],
            "nodes": nodes,
            "meshes": [{"primitives": [{"attributes": {}}]}],
            "skins": [{"joints": [0, 1, 2]}],
            "animations": animations
        }))
    }

    fn sampler(input: usize, output: usize, interpolation: &str) -> Value {
        json!({"input": input, "output": output, "interpolation": interpolation})
    }

    fn channel(sampler: usize, node: usize, path: &str) -> Value {
        json!({"sampler": sampler, "target": {"node": node, "path": path}})
    }

    const KEY_TIMES: [f32; 3] = [0.0, 0.5, 1.0];

    fn spine_keys() -> [Quat; 3] {
        [
            Quat::IDENTITY,
            Quat::from_rotation_y(1.0),
            Quat::from_rotation_x(0.4) * Quat::from_rotation_y(2.0),
        ]
    }

    fn hips_keys() -> [Vec3; 3] {
        [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.1, 1.2, 0.0),
            Vec3::new(0.0, 0.8, -0.3),
        ]
    }

    /// "Walk": a LINEAR rotation on Spine (sampler 0: accessors 0 -> 2) and a STEP
    /// translation on Hips (sampler 1: accessors 1 -> 3), with separate but equal
    /// time accessors unless `hips_times` says otherwise.
    fn walk(spine_times: &[f32], rotations: &[Quat], hips_times: &[f32], hips: &[Vec3]) -> Value {
        let mut data = Data::default();
        let (t0, t1) = (data.times(spine_times), data.times(hips_times));
        let (r, t) = (data.rotations(rotations), data.translations(hips));
        animated(
            data,
            json!([{
                "name": "Walk",
                "samplers": [sampler(t0, r, "LINEAR"), sampler(t1, t, "STEP")],
                "channels": [channel(0, 1, "rotation"), channel(1, 0, "translation")]
            }]),
        )
    }

    fn shared_walk() -> Value {
        walk(&KEY_TIMES, &spine_keys(), &KEY_TIMES, &hips_keys())
    }

    fn only_clip(rig: &Rig) -> &Motion {
        assert_eq!(
            rig.clips.len(),
            1,
            "{:?}",
            rig.clips.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        &rig.clips[0].motion
    }

    #[test]
    fn a_cubic_spline_clip_gets_the_frames_its_curve_needs() {
        // Spine keyed CUBICSPLINE with zero tangents (easing in and out of every
        // key), hips LINEAR: the frames, played back as a clip plays them, follow
        // the curve, not the straight line between keys.
        let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let keys = [
            Quat::IDENTITY,
            Quat::from_rotation_y(0.4),
            Quat::from_rotation_x(0.3) * Quat::from_rotation_y(0.5),
        ];
        let values: Vec<Quat> = keys.iter().flat_map(|&q| [zero, q, zero]).collect();
        let mut data = Data::default();
        let (t0, t1) = (data.times(&KEY_TIMES), data.times(&KEY_TIMES));
        let (r, t) = (data.rotations(&values), data.translations(&hips_keys()));
        let doc = animated(
            data,
            json!([{
                "name": "Ease",
                "samplers": [sampler(t0, r, "CUBICSPLINE"), sampler(t1, t, "LINEAR")],
                "channels": [channel(0, 1, "rotation"), channel(1, 0, "translation")]
            }]),
        );
        let rig = parse_doc(&doc).unwrap();
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        let motion = only_clip(&rig);
        assert!(motion.times().len() > KEY_TIMES.len());
        let spline =
            Keyframes::new(KEY_TIMES.to_vec(), values, Interpolation::CubicSpline).unwrap();
        let (mut rotations, mut translations) = (vec![Quat::IDENTITY; 3], vec![Vec3::ZERO; 3]);
        for i in 0..=500 {
            let t = i as f32 / 500.0;
            motion.sample_into(t, &mut rotations, &mut translations);
            let off = <Quat as KeyValue>::distance(rotations[1], spline.sample(t)).to_degrees();
            assert!(off < 0.01, "{off} deg at {t} s");
        }
    }

    /// "Spawn": Spine rotated and Hips moved as in `walk` (LINEAR), the first hips key
    /// 16 m ahead, and LINEAR scale keys `scales` on node `scaled`.
    fn spawn(scaled: usize, scales: &[Vec3]) -> Value {
        let mut hips = hips_keys();
        hips[0] = Vec3::new(0.0, 0.0, 16.0);
        let mut data = Data::default();
        let (t0, t1, t2) = (
            data.times(&KEY_TIMES),
            data.times(&KEY_TIMES),
            data.times(&KEY_TIMES),
        );
        let (r, t) = (data.rotations(&spine_keys()), data.translations(&hips));
        let k = data.translations(scales);
        animated(
            data,
            json!([{
                "name": "Spawn",
                "samplers": [
                    sampler(t0, r, "LINEAR"), sampler(t1, t, "LINEAR"), sampler(t2, k, "LINEAR")
                ],
                "channels": [
                    channel(0, 1, "rotation"), channel(1, 0, "translation"),
                    channel(2, scaled, "scale")
                ]
            }]),
        )
    }

    #[test]
    fn frames_that_scale_the_whole_figure_to_nothing_hold_the_nearest_shown_frame() {
        // A spawn clip keys the hips' scale 0 on its first frame, hiding the figure in a
        // glTF player, and its joints' keys there far from the take: that frame holds
        // the pose of the first frame the figure shows on.
        let scales = [Vec3::ZERO, Vec3::ONE, Vec3::ONE];
        let rig = parse_doc(&spawn(0, &scales)).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), KEY_TIMES);
        let (first, second) = (motion.frame(0), motion.frame(1));
        assert_eq!(first.translations[0], hips_keys()[1]);
        assert_eq!(first.rotations[1], spine_keys()[1]);
        assert_eq!(second.translations[0], hips_keys()[1]);
        assert_eq!(motion.frame(2).rotations[1], spine_keys()[2]);
        let note = rig.notes.iter().find(|n| n.contains("to nothing"));
        assert!(
            note.is_some_and(|n| n.contains("`Spawn` (frame 1)")),
            "{:?}",
            rig.notes
        );
        // Only the head shrunk (a cartoon's pop): the figure shows, every key plays.
        let rig = parse_doc(&spawn(2, &scales)).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.frame(0).translations[0], Vec3::new(0.0, 0.0, 16.0));
        assert_eq!(motion.frame(0).rotations[1], spine_keys()[0]);
        assert!(
            !rig.notes.iter().any(|n| n.contains("to nothing")),
            "{:?}",
            rig.notes
        );
        // Shrunk throughout: nothing to hold to, the keys play as they are.
        let rig = parse_doc(&spawn(0, &[Vec3::ZERO; 3])).unwrap();
        assert_eq!(
            only_clip(&rig).frame(0).translations[0],
            Vec3::new(0.0, 0.0, 16.0)
        );
    }

    #[test]
    fn a_wrapper_above_the_armature_node_does_not_keep_a_shrunk_figure_shown() {
        // glTF-Transform's `center` puts a `Pivot` node above a file's roots: the
        // spawn's Hips, shrunk on frame 1, now hang under Armature under Pivot, two
        // nodes at their parent's origin that draw nothing and keep no scale key.
        let scales = [Vec3::ZERO, Vec3::ONE, Vec3::ONE];
        let mut doc = spawn(0, &scales);
        if let Some(nodes) = doc["nodes"].as_array_mut() {
            nodes[3] = json!({"name": "Pivot", "children": [4]});
            nodes.push(json!({"name": "Armature", "children": [0]}));
        }
        doc["scenes"] = json!([{"nodes": [3]}]);
        if let Some(object) = doc.as_object_mut() {
            object.remove("skins");
            object.remove("meshes");
        }
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(rig.skeleton.len(), 5, "{:?}", rig.notes);
        let motion = only_clip(&rig);
        let hips = rig.skeleton.find("Hips").unwrap();
        assert_eq!(motion.frame(0).translations[hips], hips_keys()[1]);
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("to nothing") && n.contains("`Spawn` (frame 1)")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn shared_key_times_give_one_frame_per_key_with_the_key_values() {
        let rig = parse_doc(&shared_walk()).unwrap();
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        assert_eq!(rig.clips[0].name, "Walk");
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), KEY_TIMES);
        for (k, frame) in motion.frames().enumerate() {
            assert_eq!(frame.rotations[1], spine_keys()[k], "Spine at key {k}");
            assert_eq!(frame.translations[0], hips_keys()[k], "Hips at key {k}");
            // Unanimated: the node's TRS.
            assert_eq!(frame.rotations[0], Quat::IDENTITY);
            assert_eq!(frame.translations[1], Vec3::new(0.0, 0.2, 0.0));
            assert_eq!(frame.rotations[2], Quat::IDENTITY);
            assert_eq!(frame.translations[2], Vec3::new(0.0, 0.4, 0.0));
        }
    }

    #[test]
    fn channels_keyed_through_animation_pointers_play_as_node_channels() {
        // Unity's exporters key every clip through KHR_animation_pointer: the walk
        // with its two channels pointing at `/nodes/1/rotation` and
        // `/nodes/0/translation`, plus one at a material that moves no joint.
        let mut doc = shared_walk();
        let pointer = |p: &str| {
            json!({"sampler": 0, "target": {
            "path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": p}}}})
        };
        let channels = &mut doc["animations"][0]["channels"];
        channels[0] = pointer("/nodes/1/rotation");
        channels[1] = pointer("/nodes/0/translation");
        channels[1]["sampler"] = 1.into();
        channels
            .as_array_mut()
            .unwrap()
            .push(pointer("/materials/0/pbrMetallicRoughness/baseColorFactor"));
        let rig = parse_doc(&doc).unwrap();
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        let plain = parse_doc(&shared_walk()).unwrap();
        let (motion, want) = (only_clip(&rig), only_clip(&plain));
        assert_eq!(motion.times(), want.times());
        for (got, want) in motion.frames().zip(want.frames()) {
            assert_eq!(got.rotations, want.rotations);
            assert_eq!(got.translations, want.translations);
        }
    }

    #[test]
    fn keys_covered_by_the_densest_channel_are_not_resampled() {
        // Blender keeps a constant channel's first and last key only.
        let ends = [0.0, 1.0];
        let rig = parse_doc(&walk(&KEY_TIMES, &spine_keys(), &ends, &hips_keys()[..2])).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), KEY_TIMES);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        // STEP holds the first key until the last.
        assert_eq!(motion.frame(1).translations[0], hips_keys()[0]);
        assert_eq!(motion.frame(2).translations[0], hips_keys()[1]);
    }

    #[test]
    fn different_key_times_are_resampled_on_a_standard_grid() {
        let spine_times: Vec<f32> = (0..=30).map(|i| i as f32 / 30.0).collect();
        let rotations: Vec<Quat> = spine_times
            .iter()
            .map(|&t| Quat::from_rotation_y(t))
            .collect();
        let hips_times = [0.0, 0.25, 1.01];
        let mut doc = walk(&spine_times, &rotations, &hips_times, &hips_keys());
        doc["animations"][0]["name"] = Value::Null;
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(rig.clips[0].name, "animation0");
        assert_eq!(
            rig.notes,
            [
                "animations resampled on a uniform grid (their channels' key times differ): `animation0` at 30 fps"
            ]
        );
        let motion = only_clip(&rig);
        // 0..1 s at 30 fps, then the last key at 1.01 s exactly.
        assert_eq!(motion.frame_count(), 32);
        assert_eq!(motion.times().last(), Some(&1.01));
        for (i, frame) in motion.frames().enumerate().take(31) {
            let t = motion.times()[i];
            assert!((t - i as f32 / 30.0).abs() < 1e-6, "frame {i} at {t}");
            let expected = Quat::from_rotation_y(t);
            assert!(frame.rotations[1].abs_diff_eq(expected, 1e-5), "frame {i}");
            let step = if t < 0.25 { 0 } else { 1 };
            assert_eq!(frame.translations[0], hips_keys()[step], "frame {i} at {t}");
        }
        let last = motion.frame(31);
        assert_eq!(last.translations[0], hips_keys()[2]);
        assert!(last.rotations[1].abs_diff_eq(Quat::from_rotation_y(1.0), 1e-6));
    }

    #[test]
    fn a_take_keyed_late_on_its_timeline_plays_from_its_first_key() {
        // The walk's keys moved 15 s on, as a take cut from a longer timeline has
        // them: the same frames, counted from the first key, with a note.
        let late: Vec<f32> = KEY_TIMES.iter().map(|t| t + 15.0).collect();
        let rig = parse_doc(&walk(&late, &spine_keys(), &late, &hips_keys())).unwrap();
        assert_eq!(
            rig.notes,
            ["animations keyed from later than 0 s play from their first key: `Walk` at 15.000 s"]
        );
        let plain = parse_doc(&shared_walk()).unwrap();
        let (motion, want) = (only_clip(&rig), only_clip(&plain));
        for (got, want) in motion.times().iter().zip(want.times()) {
            assert!((got - want).abs() < 1e-5, "{got} s against {want} s");
        }
        for (got, want) in motion.frames().zip(want.frames()) {
            assert_eq!(got.rotations, want.rotations);
            assert_eq!(got.translations, want.translations);
        }
    }

    #[test]
    fn a_clip_with_zero_duration_has_one_frame() {
        let doc = walk(&[0.5], &spine_keys()[1..2], &[0.5], &hips_keys()[2..]);
        let rig = parse_doc(&doc).unwrap();
        let motion = only_clip(&rig);
        assert_eq!(motion.times(), [0.0]);
        assert_eq!(motion.duration(), 0.0);
        assert_eq!(motion.frame(0).translations[0], hips_keys()[2]);
    }

    #[test]
    fn unanimated_joints_hold_the_node_pose_not_the_bind_rest() {
        // Arm posed down in the nodes, T-pose in the bind pose: the rest is the bind
        // pose, but a clip that keys only the hips keeps the arm down, as players show.
        let mut data = Data::default();
        let ibm = data.matrices(&t_pose_bind_worlds().map(|m| m.inverse()));
        let times = data.times(&[0.0, 1.0]);
        let hips = data.translations(&[Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.1, 0.0)]);
        let doc = data.into_doc(json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": arm_posed_down(),
            "skins": [{"joints": [0, 1, 2], "inverseBindMatrices": ibm}],
            "animations": [{
                "name": "Bob",
                "samplers": [sampler(times, hips, "LINEAR")],
                "channels": [channel(0, 0, "translation")]
            }]
        }));
        let rig = parse_doc(&doc).unwrap();
        let arm = rig.skeleton.find("Arm").unwrap();
        assert!(
            rig.skeleton.joints()[arm]
                .rest
                .rotation
                .abs_diff_eq(Quat::IDENTITY, 1e-6)
        );
        let down = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
        let motion = only_clip(&rig);
        for frame in motion.frames() {
            assert!(frame.rotations[arm].abs_diff_eq(down, 1e-6));
            let world = rig
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            let (shoulder, hand) = (world[1].translation, world[2].translation);
            let (shoulder, hand) = (Vec3::from(shoulder), Vec3::from(hand));
            let along = (hand - shoulder).normalize();
            assert!(
                along.abs_diff_eq(-Vec3::Y, 1e-5),
                "the forearm hangs down: {along}"
            );
        }
        let hips_y: Vec<f32> = motion.frames().map(|f| f.translations[0].y).collect();
        assert_eq!(hips_y, [1.0, 1.1]);
    }

    #[test]
    fn normalized_short_and_byte_rotations_are_converted() {
        let turn = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        // (componentType, bytes of [identity, a quarter turn about Z])
        let shorts: Vec<u8> = [0i16, 0, 0, 32767, 0, 0, 23170, 23170]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes: Vec<u8> = [0i8, 0, 0, 127, 0, 0, 90, 90]
            .iter()
            .map(|&v| v as u8)
            .collect();
        let minus_one: Vec<u8> = [0i8, 0, 0, -128, 0, 0, 90, 90]
            .iter()
            .map(|&v| v as u8)
            .collect();
        for (component_type, values) in [(5122, shorts), (5120, bytes), (5120, minus_one)] {
            let mut data = Data::default();
            let times = data.times(&[0.0, 1.0]);
            let rotations = data.push(&values, component_type, 2, "VEC4");
            data.accessors[rotations]["normalized"] = json!(true);
            let doc = animated(
                data,
                json!([{"samplers": [sampler(times, rotations, "LINEAR")],
                        "channels": [channel(0, 1, "rotation")]}]),
            );
            let rig = parse_doc(&doc).unwrap();
            let motion = only_clip(&rig);
            let (first, last) = (motion.frame(0).rotations[1], motion.frame(1).rotations[1]);
            // -128 is -1 like -127; -identity is identity.
            assert!(
                first.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6,
                "{component_type}: {first}"
            );
            assert!(last.abs_diff_eq(turn, 1e-4), "{component_type}: {last}");
            assert!(first.is_normalized() && last.is_normalized());
        }
    }

    #[test]
    fn ignored_channels_are_noted_once_per_kind() {
        let mut data = Data::default();
        let times = data.times(&KEY_TIMES);
        let rotations = data.rotations(&spine_keys());
        let scales = data.translations(&[Vec3::ONE; 3]);
        let weights = data.times(&[0.0, 0.5, 1.0]);
        let sample = |output| sampler(times, output, "LINEAR");
        let doc = animated(
            data,
            json!([
                {
                    "name": "Walk",
                    "samplers": [sample(rotations), sample(scales), sample(weights)],
                    "channels": [
                        channel(0, 1, "rotation"),
                        channel(1, 1, "scale"),
                        channel(1, 2, "scale"),
                        channel(2, 3, "weights"),
                        channel(0, 3, "rotation"),
                        channel(0, 1, "rotation")
                    ]
                },
                {
                    "name": "Blink",
                    "samplers": [sample(weights)],
                    "channels": [channel(0, 3, "weights")]
                }
            ]),
        );
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(only_clip(&rig).frame_count(), 3);
        assert_eq!(
            rig.notes,
            [
                "animations[0].channels[5]: node 1 rotation is already animated by channels[0]; ignored",
                "animations that move no joint of the skeleton skipped: `Blink`",
                "animations: 2 `scale` channels ignored (joints keep their rest scale)",
                "animations: 2 `weights` channels ignored (morph targets are not read)",
                "animations: 1 channel on nodes outside the skeleton ignored (`Mesh`)",
            ]
        );
    }

    #[test]
    fn bad_animation_json_is_named() {
        let cases: [(&str, Value, &str); 13] = [
            (
                "/animations/0/channels/1/sampler",
                json!(9),
                "animations[0].channels[1]: sampler 9 does not exist",
            ),
            (
                "/animations/0/channels/0/target/node",
                json!(99),
                "animations[0].channels[0]: node 99 does not exist",
            ),
            (
                "/animations/0/samplers/0/interpolation",
                json!("SMOOTH"),
                "animations[0].samplers[0]: interpolation \"SMOOTH\" is not STEP, LINEAR or CUBICSPLINE",
            ),
            (
                "/animations/0/samplers/1/input",
                json!(7),
                "animations[0].samplers[1]: input accessor 7 does not exist",
            ),
            (
                "/accessors/0/type",
                json!("VEC3"),
                "animations[0].samplers[0]: input accessor 0 is not SCALAR of floats",
            ),
            (
                "/accessors/2/count",
                json!(4),
                "animations[0].samplers[0]: output accessor 2 reads past the end of buffer view 2",
            ),
            (
                "/accessors/1/byteOffset",
                json!(4),
                "animations[0].samplers[1]: input accessor 1 reads past the end of buffer view 1",
            ),
            (
                "/bufferViews/2/byteLength",
                json!(4000),
                "animations[0].samplers[0]: output accessor 2 reads past the end of buffer 0",
            ),
            (
                "/bufferViews/2/byteStride",
                json!(8),
                "animations[0].samplers[0]: output accessor 2: buffer view 2 has byteStride 8, less than its 16-byte elements",
            ),
            (
                "/accessors/3/count",
                json!(2),
                "animations[0].samplers[1]: output accessor 3: 2 values for 3 keys; STEP needs 3",
            ),
            (
                "/animations/0/samplers/0/interpolation",
                json!("CUBICSPLINE"),
                "animations[0].samplers[0]: output accessor 2: 3 values for 3 keys; CUBICSPLINE needs 9",
            ),
            (
                "/accessors/2/componentType",
                json!(5122),
                "animations[0].samplers[0]: output accessor 2 is not VEC4 of floats or normalized integers",
            ),
            (
                "/accessors/3/normalized",
                json!(true),
                "animations[0].samplers[1]: output accessor 3 is not VEC3 of floats",
            ),
        ];
        for (pointer, value, expected) in cases {
            let mut doc = shared_walk();
            if pointer.ends_with("normalized") {
                doc["accessors"][3]["componentType"] = json!(5122);
                doc["accessors"][3]["normalized"] = value;
            } else if pointer.ends_with("byteStride") {
                doc["bufferViews"][2]["byteStride"] = value;
            } else if pointer.ends_with("byteOffset") {
                doc["accessors"][1]["byteOffset"] = value;
            } else {
                *doc.pointer_mut(pointer)
                    .unwrap_or_else(|| panic!("{pointer}")) = value;
            }
            assert_eq!(error_of(&doc), format!("{PATH}: {expected}"), "{pointer}");
        }
    }

    #[test]
    fn a_clip_keyed_on_a_copy_of_the_armature_drives_the_skeleton() {
        // Blender's one armature per action: `Dance` (node 4) > Hips > Spine > Head
        // copies the skinned Hips > Spine > Head and skins nothing; its clip keys the
        // copy's Spine (node 6).
        let mut data = Data::default();
        let (t, r) = (data.times(&KEY_TIMES), data.rotations(&spine_keys()));
        let mut doc = animated(
            data,
            json!([{
                "name": "Dance",
                "samplers": [sampler(t, r, "LINEAR")],
                "channels": [channel(0, 6, "rotation")]
            }]),
        );
        let copy = json!([
            {"name": "Dance", "translation": [2.0, 0.0, 0.0], "children": [5]},
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [6]},
            {"name": "Spine", "translation": [0.0, 0.2, 0.0], "children": [7]},
            {"name": "Head", "translation": [0.0, 0.4, 0.0]}
        ]);
        if let (Some(nodes), Some(copy)) = (doc["nodes"].as_array_mut(), copy.as_array()) {
            nodes.extend(copy.iter().cloned());
        }
        doc["scenes"][0]["nodes"] = json!([0, 3, 4]);
        let rig = parse_doc(&doc).unwrap();
        assert_eq!(names(&rig), ["Hips", "Spine", "Head"]);
        let motion = only_clip(&rig);
        assert_eq!(motion.frame_count(), 3);
        for (i, key) in spine_keys().iter().enumerate() {
            assert!(
                motion.frame(i).rotations[1].abs_diff_eq(*key, 1e-6),
                "frame {i}"
            );
        }
        assert!(
            rig.notes
                .iter()
                .any(|n| n.contains("copy of the skeleton") && n.contains("`Dance`")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_sampler_accessor_with_no_buffer_view_reads_as_zeros() {
        // The spec's zeros, as glTF-Transform writes a translation held at the origin:
        // the hips' translation output (accessor 3) loses its view and reads as zeros.
        let mut doc = shared_walk();
        doc["accessors"][3]
            .as_object_mut()
            .map(|a| a.remove("bufferView"));
        let rig = parse_doc(&doc).unwrap();
        let motion = only_clip(&rig);
        for i in 0..motion.frame_count() {
            assert_eq!(motion.frame(i).translations[0], Vec3::ZERO, "frame {i}");
        }
        // Zero rotations are no rotations: refused as zero keys in a buffer are.
        let mut doc = shared_walk();
        doc["accessors"][2]
            .as_object_mut()
            .map(|a| a.remove("bufferView"));
        let error = error_of(&doc);
        assert!(
            error.starts_with(&format!(
                "{PATH}: animations[0].samplers[0]: output accessor 2: "
            )),
            "{error}"
        );
    }

    #[test]
    fn bad_keys_name_the_accessor_and_the_key() {
        let nan_quat = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
        let zero_quat = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let hips = hips_keys();
        let spine = spine_keys();
        let cases = [
            (
                walk(&[0.0, 0.5, 0.4], &spine, &KEY_TIMES, &hips),
                "animations[0].samplers[0]: input accessor 0: times are not increasing at key 2",
            ),
            (
                walk(&KEY_TIMES, &spine, &[0.0, f32::NAN, 1.0], &hips),
                "animations[0].samplers[1]: input accessor 1: time at key 1 is not finite",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &[spine[0], zero_quat, spine[2]],
                    &KEY_TIMES,
                    &hips,
                ),
                "animations[0].samplers[0]: output accessor 2: value 1 is a zero quaternion",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &[spine[0], spine[1], nan_quat],
                    &KEY_TIMES,
                    &hips,
                ),
                "animations[0].samplers[0]: output accessor 2: value 2 is not finite",
            ),
            (
                walk(
                    &KEY_TIMES,
                    &spine,
                    &KEY_TIMES,
                    &[Vec3::INFINITY, hips[1], hips[2]],
                ),
                "animations[0].samplers[1]: output accessor 3: value 0 is not finite",
            ),
            (
                walk(&[], &[], &KEY_TIMES, &hips),
                "animations[0].samplers[0]: input accessor 0: no keys",
            ),
        ];
        for (doc, expected) in cases {
            assert_eq!(error_of(&doc), format!("{PATH}: {expected}"));
        }
    }

    #[test]
    fn a_grid_too_long_to_hold_is_refused() {
        let doc = walk(&KEY_TIMES, &spine_keys(), &[0.0, 5.0e6], &hips_keys()[..2]);
        let err = error_of(&doc);
        assert!(
            err.starts_with(&format!(
                "{PATH}: animations[0]: 120000002 frames from 0 s to 5000000 s, more than the"
            )),
            "{err}"
        );
    }

    #[test]
    fn flipped_bytes_in_an_animated_glb_never_panic() {
        let mut doc = shared_walk();
        let text = doc.to_string();
        let mut data = GltfDoc::from_bytes(text.as_bytes(), Path::new(PATH)).unwrap();
        let bin = data.buffer(0).unwrap().to_vec();
        doc["buffers"][0] = json!({"byteLength": bin.len()});
        let bytes = glb(&doc, &bin);
        assert_eq!(parse(&bytes, Path::new("walk.glb")).unwrap().clips.len(), 1);
        for at in 0..bytes.len() {
            for value in [0u8, b'9', b'-', 0xFF] {
                let mut flipped = bytes.clone();
                flipped[at] = value;
                let _ = parse(&flipped, Path::new("flipped.glb"));
            }
        }
    }

    /// Largest angle between a joint's rotation in any frame and in the first, degrees.
    fn swing_deg(motion: &Motion, joint: usize) -> f32 {
        let first = motion.frame(0).rotations[joint];
        motion
            .frames()
            .map(|f| f.rotations[joint].angle_between(first).to_degrees())
            .fold(0.0, f32::max)
    }

    /// For every rotation channel of `animation`: its node's name and its sampler's
    /// key times and values, as the accessors hold them.
    fn raw_rotation_keys(bytes: &[u8], animation: usize) -> Vec<(String, Vec<f32>, Vec<Quat>)> {
        let mut doc = Document {
            doc: GltfDoc::from_bytes(bytes, Path::new("x.glb")).unwrap(),
            clips: true,
        };
        let anim = doc.doc.root.animations[animation].clone();
        let mut out = Vec::new();
        for channel in &anim.channels {
            if channel.target.path != Checked::Valid(Property::Rotation) {
                continue;
            }
            let sampler = &anim.samplers[channel.sampler.value()];
            let times = doc
                .animation_accessor("", "", sampler.input.value(), TIMES)
                .unwrap();
            let values = doc
                .animation_accessor("", "", sampler.output.value(), ROTATIONS)
                .unwrap();
            let values = values.chunks_exact(4).map(Quat::from_slice);
            let name = doc.doc.root.nodes[channel.target.node.value()].name.clone();
            out.push((name.unwrap_or_default(), times, values.collect()));
        }
        out
    }

    /// Every frame at a key time of a rotation channel holds that key's value, bit
    /// for bit.
    fn assert_key_values_exact(rig: &Rig, bytes: &[u8], animation: usize, clip: usize) {
        let motion = &rig.clips[clip].motion;
        let mut checked = 0;
        let keys = raw_rotation_keys(bytes, animation);
        // The clip counts from its first key (`sample_motion`).
        let start = keys
            .iter()
            .filter_map(|(_, times, _)| times.first().copied())
            .fold(f32::INFINITY, f32::min);
        for (name, times, values) in keys {
            let joint = rig.skeleton.find(&name).unwrap_or_else(|| panic!("{name}"));
            for (i, &t) in motion.times().iter().enumerate() {
                let at = times.iter().position(|&x| (x - (t + start)).abs() < 1e-6);
                if let Some(k) = at {
                    assert_eq!(motion.frame(i).rotations[joint], values[k], "{name} at {t}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn cesium_man_walks_for_two_seconds_and_moves_its_legs() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/CesiumMan.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].name, "Anim_0");
        let motion = &rig.clips[0].motion;
        // 49 LINEAR keys over 2 s (24 fps); constant channels keep 2 STEP keys.
        assert_eq!(motion.frame_count(), 49);
        assert!(
            (motion.duration() - 2.0).abs() < 1e-4,
            "{}",
            motion.duration()
        );
        assert!((motion.mean_rate() - 24.0).abs() < 0.01);
        for thigh in ["leg_joint_L_1", "leg_joint_R_1"] {
            let joint = rig.skeleton.find(thigh).unwrap();
            let swing = swing_deg(motion, joint);
            assert!(swing > 20.0, "{thigh} swings {swing}°");
        }
        assert_key_values_exact(&rig, &bytes, 0, 0);
    }

    #[test]
    fn med_general_has_15_clips_keyed_at_30_fps() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/Med_General.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        assert_eq!(rig.clips.len(), 15);
        let idle = rig.clip(Some("Rig_Medium|Idle_A")).expect("Idle_A");
        assert_eq!(idle.motion.frame_count(), 33);
        assert_eq!(idle.motion.times()[0], 0.0);
        assert!((idle.motion.duration() - 32.0 / 30.0).abs() < 1e-4);
        for clip in &rig.clips {
            let rate = clip.motion.mean_rate();
            assert!((rate - 30.0).abs() < 0.01, "{}: {rate} fps", clip.name);
        }
        let upper_leg = rig.skeleton.find("upperleg.l").unwrap();
        let death = rig.clip(Some("Rig_Medium|Death_A")).expect("Death_A");
        assert!(swing_deg(&death.motion, upper_leg) > 10.0);
        let t_pose = rig.clip(Some("Rig_Medium|T-Pose")).expect("T-Pose");
        assert_eq!(t_pose.motion.frame_count(), 2);
        assert_key_values_exact(&rig, &bytes, 7, 7);
    }

    #[test]
    fn robot_expressive_has_14_named_clips_and_keeps_unkeyed_arms_down() {
        let Some(dir) = assets() else { return };
        let path = dir.join("gltf/RobotExpressive.glb");
        let bytes = std::fs::read(&path).unwrap();
        let rig = parse(&bytes, &path).unwrap();
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Dance", "Death", "Idle", "Jump", "No", "Punch", "Running", "Sitting", "Standing",
                "ThumbsUp", "Walking", "WalkJump", "Wave", "Yes"
            ]
        );
        let walking = &rig.clip(Some("Walking")).unwrap().motion;
        assert_eq!(walking.frame_count(), 24);
        assert!((walking.duration() - 23.0 / 24.0).abs() < 1e-4);
        let leg = rig.skeleton.find("UpperLegL").unwrap();
        assert!(swing_deg(walking, leg) > 20.0);
        assert_key_values_exact(&rig, &bytes, 10, 10);
        // Idle keys no arm: the arms hang as the nodes hold them, not in the T-pose
        // of the rest (from the bind matrices).
        let idle = &rig.clip(Some("Idle")).unwrap().motion;
        let (lower, palm) = (
            rig.skeleton.find("LowerArmL").unwrap(),
            rig.skeleton.find("Palm2L").unwrap(),
        );
        for frame in idle.frames() {
            let world = rig
                .skeleton
                .world_transforms(frame.rotations, frame.translations);
            let d = Vec3::from(world[palm].translation - world[lower].translation);
            assert!(-d.y > 3.0 * d.x.abs().max(d.z.abs()), "forearm {d}");
        }
    }
}
