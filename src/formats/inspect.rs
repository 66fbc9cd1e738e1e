//! Which bone map a rig file gets (`choose_map`: the one given, the file's own, the
//! catalog's, the recognized one), and the report behind `mocap-bridge inspect`:
//! the joint tree, the bone map used (with the confidence per bone when it was
//! recognized), the detected rest pose with its correction per limb (none for a
//! VRM, whose rest is its T-pose), a `.vrma`'s animations and expressions, and the
//! problems a user must act on (what is only worth knowing is a note).
//!
//! Pure but for reading a map file the user names: takes a loaded `Rig` and a
//! chosen map, returns a `Report` that prints itself.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::Path;

use crate::formats::Rig;
use crate::formats::ik_limbs::clips_move_ik_limbs;
use crate::formats::knee_bend::front_from_knees;
use crate::formats::still_map::clips_leave_the_map_still;
use crate::formats::vrma::VrmaAnimation;
use crate::humanoid::HumanBone;
use crate::humanoid::bone::ALL;
use crate::retarget::{Floor, MappedSkeleton};
use crate::skeleton::leaf_nub::is_leaf_nub_off_the_bone;
use crate::skeleton::recognize::{BoneEvidence, Recognition, recognize, recognize_facing};
use crate::skeleton::{BoneMap, MapError, NamedBoneMap, RestCorrection, RestPose, TPoseSource};

/// Where a bone map comes from, and the map.
#[derive(Debug, Clone)]
pub struct ChosenMap {
    /// For messages: `--map lab.json`, `VRMC_vrm humanoid`, `catalog map cmu`,
    /// `recognized (confidence 0.93)`.
    pub source: String,
    pub map: NamedBoneMap,
    /// Confidence and reasons per bone when the map was recognized; empty otherwise.
    pub evidence: BTreeMap<HumanBone, BoneEvidence>,
    /// What the recognizer noticed about the rig (facing, mirrored names); empty
    /// for maps that were not recognized.
    pub notes: Vec<String>,
}

impl ChosenMap {
    /// A map given by a file or the user (no recognition evidence).
    #[must_use]
    pub fn new(source: String, map: NamedBoneMap) -> Self {
        Self {
            source,
            map,
            evidence: BTreeMap::new(),
            notes: Vec::new(),
        }
    }
}

/// The map `inspect`, `retarget` and friends use: the explicit one, else the file's
/// own, else the best-fitting catalog map, else the one `skeleton::recognize` finds
/// (recognized again facing where the clips bend the knees, `knee_bend`, when the
/// rest pose shows no front).
#[must_use]
pub fn choose_map(rig: &Rig, explicit: Option<ChosenMap>) -> Option<ChosenMap> {
    explicit
        .or_else(|| {
            rig.bone_map.clone().map(|map| {
                let source = rig.map_source.clone().unwrap_or_else(|| "the file".into());
                ChosenMap::new(source, map)
            })
        })
        .or_else(|| {
            crate::skeleton::catalog::find_map(&rig.skeleton)
                .map(|(source, map)| ChosenMap::new(source, map))
        })
        .or_else(|| {
            let recognized = |recognition| match recognition {
                Recognition::Humanoid(r) => Some((r, "")),
                Recognition::NotHumanoid(n) => Some((
                    *n.limbs_outside?,
                    "; no strict VRM map: limbs hung outside the hips are driven from the body",
                )),
            };
            let (mut r, mut how) = recognized(recognize(&rig.skeleton))?;
            let front = (r.front_unseen)
                .then(|| BoneMap::resolve(&r.map, &rig.skeleton).ok())
                .flatten()
                .and_then(|map| front_from_knees(rig, &map));
            if let Some(again) = front.and_then(|f| recognized(recognize_facing(&rig.skeleton, f)))
            {
                (r, how) = again;
            }
            Some(ChosenMap {
                source: format!("recognized (confidence {:.2}{how})", r.confidence()),
                map: r.map,
                evidence: r.evidence,
                notes: r.notes,
            })
        })
}

/// The map in the file at `path` (`--map`), if one is named.
pub fn explicit_map(path: Option<&Path>) -> Result<Option<ChosenMap>, MapError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let map = NamedBoneMap::load(path)?;
    Ok(Some(ChosenMap::new(path.display().to_string(), map)))
}

/// Why a rig cannot be put on the humanoid.
#[derive(Debug, thiserror::Error)]
pub enum MapRigError {
    #[error(
        "{label}: no bone map: the file declares none, no catalog map fits, and it is {why}; pass a map"
    )]
    NoMap { label: String, why: String },
    /// The chosen map does not fit the rig (`map_source` names the map: the map
    /// file given, or the rig's file and the map it declares or was given).
    #[error("{map_source}: {error}")]
    DoesNotFit { map_source: String, error: MapError },
}

/// `rig` (called `label` in messages) with its chosen map (see `choose_map`),
/// resolved and rest-corrected.
pub fn map_rig(
    label: &str,
    rig: &Rig,
    explicit: Option<ChosenMap>,
) -> Result<MappedSkeleton, MapRigError> {
    // A map file given is the place to name; the rig's own (or the catalog's or the
    // recognizer's) map is named after the rig's file.
    let given = explicit.is_some();
    let chosen = choose_map(rig, explicit).ok_or_else(|| MapRigError::NoMap {
        label: label.to_owned(),
        why: why_no_map(rig),
    })?;
    MappedSkeleton::new(rig.skeleton.clone(), &chosen.map).map_err(|error| {
        MapRigError::DoesNotFit {
            map_source: if given {
                chosen.source
            } else {
                format!("{label}: {}", chosen.source)
            },
            error,
        }
    })
}

/// Why `choose_map` found nothing for `rig`: the recognizer's reason.
#[must_use]
pub fn why_no_map(rig: &Rig) -> String {
    match recognize(&rig.skeleton) {
        Recognition::NotHumanoid(n) => format!("not recognized as a humanoid: {}", n.reason),
        Recognition::Humanoid(_) => "a humanoid was recognized".to_owned(),
    }
}

/// Recognized bones below this confidence get their reasons printed.
const DOUBTFUL: f32 = 0.6;

/// Everything `inspect` prints.
#[derive(Debug, Clone)]
pub struct Report {
    pub file: String,
    tree: String,
    pub joint_count: usize,
    pub map_source: Option<String>,
    /// What the recognizer noticed, when the map was recognized.
    map_notes: Vec<String>,
    map_lines: Vec<String>,
    pub correction: Option<RestCorrection>,
    pub rest_hips_height: Option<f32>,
    /// What the hips height is measured from.
    pub rest_floor: Option<Floor>,
    pub problems: Vec<String>,
    notes: Vec<String>,
    /// A `.vrma`'s animations, one line each and indented lines under it
    /// (`with_vrma`); empty for other files.
    clips: Vec<String>,
    /// A `.vrma`'s animation count, expressions and rest hips (`with_vrma`).
    vrma: Option<(usize, Vec<String>)>,
}

impl Report {
    /// Builds the report for `rig` with `map` (see `choose_map`).
    #[must_use]
    pub fn new(file: &str, rig: &Rig, map: Option<&ChosenMap>) -> Self {
        let skeleton = &rig.skeleton;
        let mut problems = Vec::new();
        let mut resolved: Option<BoneMap> = None;
        let mut mapped: Option<MappedSkeleton> = None;
        match map {
            None => problems.push(format!(
                "no bone map: the file declares none, no catalog map fits, and it is {}; \
                 pass --map MAP.json",
                why_no_map(rig)
            )),
            Some(chosen) => match MappedSkeleton::new(skeleton.clone(), &chosen.map) {
                Ok(m) => {
                    problems.extend(m.hips_at_the_floor());
                    resolved = Some(m.map.clone());
                    mapped = Some(m);
                }
                Err(e) => problems.push(format!("{}: {e}", chosen.source)),
            },
        }
        // The joint of each bone to list: the resolved map's; or, for a map that does
        // not resolve (a `.vrma` of the upper body alone lacks required bones), each
        // joint it names that exists, so that the listing shows what the map says
        // beside the problem.
        let listed: Vec<Option<usize>> = ALL
            .iter()
            .map(|&bone| match &resolved {
                Some(m) => m.joint(bone),
                None => map
                    .and_then(|c| c.map.bones.get(&bone))
                    .and_then(|name| skeleton.find(name)),
            })
            .collect();
        let mut tree = String::new();
        for (i, joint) in skeleton.joints().iter().enumerate() {
            let depth = depth(skeleton, i);
            let bone = ALL
                .iter()
                .zip(&listed)
                .find(|(_, j)| **j == Some(i))
                .map(|(b, _)| format!("  [{b}]"))
                .unwrap_or_default();
            let _ = writeln!(tree, "{}{}{}", "  ".repeat(depth), joint.name, bone);
        }
        let mut map_lines = Vec::new();
        let evidence = map.map(|m| &m.evidence);
        if map.is_some() {
            for (&bone, joint) in ALL.iter().zip(&listed) {
                if let Some(j) = *joint {
                    let joint = &skeleton.joints()[j].name;
                    match evidence.and_then(|e| e.get(&bone)) {
                        Some(e) if e.confidence < DOUBTFUL => map_lines.push(format!(
                            "{:<24} {joint:<28} {:.2}  check: {}",
                            bone.name(),
                            e.confidence,
                            e.reasons.join("; ")
                        )),
                        Some(e) => map_lines.push(format!(
                            "{:<24} {joint:<28} {:.2}",
                            bone.name(),
                            e.confidence
                        )),
                        None => map_lines.push(format!("{:<24} {joint}", bone.name())),
                    }
                }
            }
            let missing: Vec<&str> = ALL
                .iter()
                .zip(&listed)
                .filter(|(b, j)| j.is_none() && is_body_bone(**b))
                .map(|(b, _)| b.name())
                .collect();
            if !missing.is_empty() {
                map_lines.push(format!("(not mapped: {})", missing.join(", ")));
            }
        }
        if let Some(still) = mapped
            .as_ref()
            .and_then(|m| clips_leave_the_map_still(rig, &m.map))
        {
            problems.push(still);
        }
        let mut notes = rig.notes.clone();
        if let Some(m) = &mapped {
            notes.extend(clips_move_ik_limbs(rig, &m.map));
        }
        let rest_hips_height = mapped.as_ref().map(MappedSkeleton::rest_hips_height);
        let rest_floor = mapped.as_ref().map(MappedSkeleton::rest_floor);
        let correction = mapped.map(|m| m.correction);
        if let Some(c) = &correction {
            if c.source != TPoseSource::Measured && c.pose != RestPose::TPose {
                notes.push(format!(
                    "a VRM's rest is its T-pose: this one ({}, upper arms {:.1}° below \
                     horizontal) is taken as it is, as every VRM player takes it",
                    c.pose,
                    no_negative_zero(c.arm_angle_deg)
                ));
            }
            problems.extend(c.problems.iter().cloned());
            // A leaf bone (a finger's last joint, the toes) with no end site has no
            // tip to measure: it keeps its rest turn against its parent, which is
            // what every player does with it. Not news; only a bone whose child
            // joints sit on it is worth a line (a leaf nub in another axis convention
            // than the rig's bones, `skeleton::leaf_nub`, is none: the bone is a leaf;
            // nor is a bare leaf at the joint's own place, a nub the file placed
            // nowhere, `formats::gltf::skin`).
            let world = skeleton.rest_world();
            for &(bone, j) in &c.undirected {
                if skeleton.children(j).any(|k| {
                    !is_leaf_nub_off_the_bone(skeleton, &world, j, k) && !is_bare_point(skeleton, k)
                }) {
                    problems.push(format!(
                        "cannot tell which way `{bone}` (joint `{}`) points: its child joints sit on it; left uncorrected",
                        skeleton.joints()[j].name
                    ));
                }
            }
        }
        Self {
            file: file.to_owned(),
            tree,
            joint_count: skeleton.len(),
            map_source: map.map(|m| m.source.clone()),
            map_notes: map.map(|m| m.notes.clone()).unwrap_or_default(),
            map_lines,
            correction,
            rest_hips_height,
            rest_floor,
            problems,
            notes,
            clips: Vec::new(),
            vrma: None,
        }
    }

    /// Adds what a `.vrma` holds beyond its rig: each animation (duration, keys,
    /// interpolation, the bones, expressions and lookAt it keys), the expressions
    /// the file declares (`rest`: the file read without an animation), and what its
    /// reader noticed.
    #[must_use]
    pub fn with_vrma(mut self, rest: &VrmaAnimation, animations: &[VrmaAnimation]) -> Self {
        for note in std::iter::once(rest)
            .chain(animations)
            .flat_map(VrmaAnimation::notes)
        {
            if !self.notes.contains(note) {
                self.notes.push(note.clone());
            }
        }
        for (i, animation) in animations.iter().enumerate() {
            let name = match &animation.name {
                Some(name) => format!("`{name}`"),
                None => "(no name)".to_owned(),
            };
            let interpolations: Vec<String> = animation
                .interpolations()
                .iter()
                .map(ToString::to_string)
                .collect();
            self.clips.push(format!(
                "{i} {name}: {:.3} s, {} key times over its tracks, {}",
                animation.duration,
                animation.frame_times().len(),
                match interpolations.as_slice() {
                    [] => "no tracks".to_owned(),
                    _ => interpolations.join(" and "),
                }
            ));
            let bones: Vec<&str> = animation.bones().map(HumanBone::name).collect();
            self.clips.push(format!(
                "  bones ({}): {}",
                bones.len(),
                if bones.is_empty() {
                    "none".to_owned()
                } else {
                    bones.join(", ")
                }
            ));
            let rest_height = animation.rest_hips_position.y;
            self.clips.push(format!(
                "  hips position: {}",
                match animation.hips_height_range() {
                    Some((low, high)) => {
                        format!("keyed, {low:.3} to {high:.3} m high (rest {rest_height:.3} m)")
                    }
                    None => "not keyed (stays at rest)".to_owned(),
                }
            ));
            if let Some(note) = floating_note(&format!("{i} {name}"), animation) {
                self.notes.push(note);
            }
            let expressions: Vec<&str> = animation.animated_expressions().collect();
            self.clips.push(format!(
                "  expressions: {}",
                if expressions.is_empty() {
                    "none".to_owned()
                } else {
                    expressions.join(", ")
                }
            ));
            self.clips.push(format!(
                "  lookAt: {}",
                if animation.has_look_at_track() {
                    "keyed"
                } else {
                    "not keyed"
                }
            ));
        }
        let mut lines = Vec::new();
        let declared = rest.declared_expressions();
        lines.push(format!(
            "expressions declared ({}): {}",
            declared.len(),
            if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            }
        ));
        let hips = rest.rest_hips_position;
        lines.push(format!(
            "rest hips position: ({:.3}, {:.3}, {:.3}) m",
            hips.x, hips.y, hips.z
        ));
        self.vrma = Some((animations.len(), lines));
        self
    }
}

/// A take whose hips stay higher than this many times their rest height in every key
/// floats above the floor. In any take that stands, a person's hips come down to
/// about their standing height (a jump lands, a crouch is lower): only some keys rise
/// above it, a jump's by a tenth to a half of the height.
const FLOATING: f32 = 1.5;

/// A note on animation `name` when its hips stay above `FLOATING` times their rest
/// height in every key: played as it is, an avatar floats all through it.
fn floating_note(name: &str, animation: &VrmaAnimation) -> Option<String> {
    let rest = animation.rest_hips_position.y;
    let (low, _) = animation.hips_height_range()?;
    (rest > 0.0 && low > FLOATING * rest).then(|| {
        format!(
            "animation {name}: the hips are {low:.3} m high or higher in every key, {:.2} times \
             their rest height ({rest:.3} m): played as it is, the avatar floats above its floor \
             all through it",
            low / rest
        )
    })
}

/// `deg` as printed to a tenth of a degree, with an angle that rounds to zero as
/// `0.0`, never `-0.0`: the same rest reads the same whatever rounding put it a hair
/// either side.
fn no_negative_zero(deg: f32) -> f32 {
    let tenths = (deg * 10.0).round() / 10.0;
    if tenths == 0.0 { 0.0 } else { tenths }
}

/// A turn about +Y in degrees, (−180°, 180°], printed to a tenth: a half turn reads
/// `180.0°` whichever way the rounding put it.
fn half_turn_positive(deg: f32) -> f32 {
    let tenths = no_negative_zero(deg);
    if tenths <= -180.0 {
        tenths + 360.0
    } else {
        tenths
    }
}

/// Bones worth listing as "not mapped" (fingers are listed only when some are mapped).
fn is_body_bone(bone: HumanBone) -> bool {
    !bone.is_finger()
        && !matches!(
            bone,
            HumanBone::LeftEye | HumanBone::RightEye | HumanBone::Jaw
        )
}

fn depth(skeleton: &crate::skeleton::Skeleton, joint: usize) -> usize {
    let mut d = 0;
    let mut j = skeleton.parent(joint);
    while let Some(p) = j {
        d += 1;
        j = skeleton.parent(p);
    }
    d
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "file: {}", self.file)?;
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        writeln!(f, "\njoints ({}):", self.joint_count)?;
        for line in self.tree.lines() {
            writeln!(f, "  {line}")?;
        }
        match &self.map_source {
            Some(source) => writeln!(
                f,
                "\nbone map: {source} ({} bones)",
                self.map_lines.len().saturating_sub(usize::from(
                    self.map_lines.last().is_some_and(|l| l.starts_with('('))
                ))
            )?,
            None => writeln!(f, "\nbone map: none")?,
        }
        for note in &self.map_notes {
            writeln!(f, "  recognizer: {note}")?;
        }
        for line in &self.map_lines {
            writeln!(f, "  {line}")?;
        }
        if let Some(c) = &self.correction {
            let turn = half_turn_positive((2.0 * c.facing.y.atan2(c.facing.w)).to_degrees());
            writeln!(
                f,
                "\nrest pose: {} (upper arms {:.1}° below horizontal)",
                c.pose,
                no_negative_zero(c.arm_angle_deg)
            )?;
            if turn.abs() > 0.05 {
                writeln!(f, "facing: turned {turn:.1}° about +Y to face +Z")?;
            } else {
                writeln!(f, "facing: +Z")?;
            }
            match (self.rest_hips_height, self.rest_floor) {
                (Some(h), Some(Floor::Origin)) => writeln!(
                    f,
                    "hips height: {h:.3} m above the origin (y = 0, where a VRM model stands)"
                )?,
                (Some(h), _) => writeln!(f, "hips height: {h:.3} m above the lowest joint")?,
                (None, _) => {}
            }
            match c.source {
                TPoseSource::Measured => writeln!(f, "correction to the T-pose:")?,
                TPoseSource::Declared { .. } => writeln!(
                    f,
                    "correction to the T-pose: none, the file's rest is its T-pose (VRM); \
                     each bone's angle from the canonical T-pose:"
                )?,
            }
            for b in &c.bones {
                let d = b.rest_direction;
                writeln!(
                    f,
                    "  {:<24} {:>6.1}°   rest direction ({:+.2}, {:+.2}, {:+.2})",
                    b.bone.name(),
                    b.angle_deg,
                    d.x,
                    d.y,
                    d.z
                )?;
            }
        }
        if let Some((count, lines)) = &self.vrma {
            if *count == 0 {
                writeln!(
                    f,
                    "\nanimations: none (the file holds its humanoid rest alone)"
                )?;
            } else {
                writeln!(f, "\nanimations ({count}):")?;
            }
            for line in &self.clips {
                writeln!(f, "  {line}")?;
            }
            for line in lines {
                writeln!(f, "{line}")?;
            }
        }
        if self.problems.is_empty() {
            writeln!(f, "\nproblems: none")
        } else {
            writeln!(f, "\nproblems ({}):", self.problems.len())?;
            for p in &self.problems {
                writeln!(f, "  - {p}")?;
            }
            Ok(())
        }
    }
}

/// Whether joint `k` is a bare point on its parent: a leaf with no end site and no
/// offset, which adds no length and says nothing of where its parent points.
fn is_bare_point(skeleton: &crate::skeleton::Skeleton, k: usize) -> bool {
    let joint = &skeleton.joints()[k];
    skeleton.children(k).next().is_none()
        && joint.end.is_none()
        && joint.rest.translation.length() <= f32::EPSILON
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{LoadOptions, skeleton_json};

    /// A `.vrma` of the demo walk over a second, its rest hips 0.9 m high and its
    /// hips keyed `lift(t)` metres above the walk's.
    fn walk_lifted(lift: impl Fn(f32) -> f32) -> VrmaAnimation {
        use crate::formats::glb::GlbFile;
        use crate::formats::vrma::{VrmaRest, VrmaWriter, parse};
        let names = crate::humanoid::CustomNames::default();
        let mut writer = VrmaWriter::new(VrmaRest::standard(0.9), "walk");
        for i in 0..30 {
            let t = i as f32 / 30.0;
            let mut pose = crate::takes::demo::pose_at(t, 0.9);
            pose.hips_position.y += lift(t);
            writer.push(t, &pose, &names).unwrap();
        }
        parse(&writer.to_bytes(), Path::new("walk.vrma"), None).unwrap()
    }

    #[test]
    fn angles_a_hair_either_side_of_zero_or_a_half_turn_print_alike() {
        for deg in [0.0, -0.0, -0.04, 0.04] {
            assert_eq!(format!("{:.1}", no_negative_zero(deg)), "0.0", "{deg}");
        }
        assert_eq!(format!("{:.1}", no_negative_zero(-0.06)), "-0.1");
        for deg in [180.0, -180.0, -179.96, 179.96] {
            assert_eq!(format!("{:.1}", half_turn_positive(deg)), "180.0", "{deg}");
        }
        assert_eq!(format!("{:.1}", half_turn_positive(-179.9)), "-179.9");
        assert_eq!(format!("{:.1}", half_turn_positive(-90.0)), "-90.0");
    }

    #[test]
    fn a_take_whose_hips_stay_far_above_their_rest_floats_and_a_jump_does_not() {
        let floating = walk_lifted(|_| 1.2);
        let note = floating_note("0 `walk`", &floating).unwrap();
        assert!(
            note.starts_with("animation 0 `walk`: the hips are 2.")
                && note.contains("times their rest height (0.900 m)")
                && note.contains("floats above its floor"),
            "{note}"
        );
        let (low, high) = floating.hips_height_range().unwrap();
        assert!(low > 2.0 && high < 2.2, "{low} {high}");
        assert_eq!(floating_note("0 `walk`", &walk_lifted(|_| 0.0)), None);
        // A jump half a metre up that lands.
        let jump = walk_lifted(|t| 0.5 * (std::f32::consts::PI * t).sin());
        assert_eq!(floating_note("0 `walk`", &jump), None);
    }

    /// A rig whose own boneMap lacks the feet.
    fn rig_without_mapped_feet() -> Rig {
        let text = r#"{"name": "no feet", "units": "m", "up": "y", "joints": [
            {"name": "hips", "parent": null, "offset": [0, 0.9, 0]},
            {"name": "spine", "parent": "hips", "offset": [0, 0.2, 0]},
            {"name": "head", "parent": "spine", "offset": [0, 0.5, 0]},
            {"name": "lArm", "parent": "spine", "offset": [0.2, 0.3, 0]},
            {"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]},
            {"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0]},
            {"name": "rArm", "parent": "spine", "offset": [-0.2, 0.3, 0]},
            {"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]},
            {"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0]},
            {"name": "lThigh", "parent": "hips", "offset": [0.1, 0, 0]},
            {"name": "lShin", "parent": "lThigh", "offset": [0, -0.4, 0]},
            {"name": "rThigh", "parent": "hips", "offset": [-0.1, 0, 0]},
            {"name": "rShin", "parent": "rThigh", "offset": [0, -0.4, 0]}
        ], "boneMap": {"hips": "hips", "spine": "spine", "head": "head",
            "leftUpperArm": "lArm", "leftLowerArm": "lFore", "leftHand": "lHand",
            "rightUpperArm": "rArm", "rightLowerArm": "rFore", "rightHand": "rHand",
            "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin",
            "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin"}}"#;
        skeleton_json::parse(text, Path::new("rig.json"), &LoadOptions::default()).unwrap()
    }

    /// A rig whose left hand ends in `hand_children` (skeleton JSON joints under
    /// `lHand`), with a full map; the problems `inspect` reports.
    fn problems_with_hand_children(hand_children: &str) -> Vec<String> {
        let text = format!(
            r#"{{"name": "hand", "units": "m", "up": "y", "joints": [
            {{"name": "hips", "parent": null, "offset": [0, 0.9, 0]}},
            {{"name": "spine", "parent": "hips", "offset": [0, 0.2, 0]}},
            {{"name": "head", "parent": "spine", "offset": [0, 0.5, 0]}},
            {{"name": "lArm", "parent": "spine", "offset": [0.2, 0.3, 0]}},
            {{"name": "lFore", "parent": "lArm", "offset": [0.25, 0, 0]}},
            {{"name": "lHand", "parent": "lFore", "offset": [0.25, 0, 0]}},
            {hand_children}
            {{"name": "rArm", "parent": "spine", "offset": [-0.2, 0.3, 0]}},
            {{"name": "rFore", "parent": "rArm", "offset": [-0.25, 0, 0]}},
            {{"name": "rHand", "parent": "rFore", "offset": [-0.25, 0, 0]}},
            {{"name": "lThigh", "parent": "hips", "offset": [0.1, 0, 0]}},
            {{"name": "lShin", "parent": "lThigh", "offset": [0, -0.4, 0]}},
            {{"name": "lFoot", "parent": "lShin", "offset": [0, -0.45, 0]}},
            {{"name": "rThigh", "parent": "hips", "offset": [-0.1, 0, 0]}},
            {{"name": "rShin", "parent": "rThigh", "offset": [0, -0.4, 0]}},
            {{"name": "rFoot", "parent": "rShin", "offset": [0, -0.45, 0]}}
        ], "boneMap": {{"hips": "hips", "spine": "spine", "head": "head",
            "leftUpperArm": "lArm", "leftLowerArm": "lFore", "leftHand": "lHand",
            "rightUpperArm": "rArm", "rightLowerArm": "rFore", "rightHand": "rHand",
            "leftUpperLeg": "lThigh", "leftLowerLeg": "lShin", "leftFoot": "lFoot",
            "rightUpperLeg": "rThigh", "rightLowerLeg": "rShin", "rightFoot": "rFoot"}}}}"#
        );
        let rig =
            skeleton_json::parse(&text, Path::new("rig.json"), &LoadOptions::default()).unwrap();
        let chosen = choose_map(&rig, None);
        Report::new("rig.json", &rig, chosen.as_ref()).problems
    }

    #[test]
    fn a_bare_leaf_on_a_joint_is_no_child_that_sits_on_it() {
        // An end nub the file placed nowhere rests on its joint (`formats::gltf::skin`):
        // the hand is then a leaf bone, not worth a line; a joint on the hand that
        // carries more joints still is.
        let sits = |problems: &[String]| problems.iter().any(|p| p.contains("sit on it"));
        let bare = problems_with_hand_children(
            r#"{"name": "lHandEnd", "parent": "lHand", "offset": [0, 0, 0]},"#,
        );
        assert!(!sits(&bare), "{bare:?}");
        let carrying = problems_with_hand_children(
            r#"{"name": "lPalm", "parent": "lHand", "offset": [0, 0, 0]},
            {"name": "lPalmEnd", "parent": "lPalm", "offset": [0, 0, 0]},"#,
        );
        assert!(sits(&carrying), "{carrying:?}");
    }

    #[test]
    fn a_rigs_own_map_that_does_not_fit_is_named_after_the_rigs_file_and_a_given_map_after_its_own()
    {
        let rig = rig_without_mapped_feet();
        let own = map_rig("avatar.vrm", &rig, None).unwrap_err().to_string();
        assert!(own.starts_with("avatar.vrm: "), "{own}");
        assert!(
            own.contains("required bones `leftFoot`, `rightFoot` are not mapped"),
            "{own}"
        );
        assert!(!own.contains('\n'), "{own}");
        let mut map = rig.bone_map.clone().unwrap();
        map.bones.remove(&HumanBone::Head);
        let given = Some(ChosenMap::new("my_map.json".to_owned(), map));
        let given = map_rig("avatar.vrm", &rig, given).unwrap_err().to_string();
        assert!(given.starts_with("my_map.json: "), "{given}");
    }

    #[test]
    fn a_map_lacking_required_bones_still_lists_the_bones_it_names() {
        // The problem names the missing feet; the listing and the tree show the 13
        // bones the map does name, as `convert` and `retarget` read them.
        let rig = rig_without_mapped_feet();
        let chosen = choose_map(&rig, None);
        let report = Report::new("rig.json", &rig, chosen.as_ref());
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("required bones `leftFoot`, `rightFoot` are not mapped")),
            "{:?}",
            report.problems
        );
        let text = report.to_string();
        assert!(text.contains("(13 bones)"), "{text}");
        assert!(text.contains("lShin  [leftLowerLeg]"), "{text}");
        assert!(text.contains("(not mapped: "), "{text}");
        assert!(text.contains("leftFoot"), "{text}");
    }
}
