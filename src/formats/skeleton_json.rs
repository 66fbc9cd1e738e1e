//! The project's skeleton JSON (`config/skeletons/*.json`): joints with parents by
//! name, rest offsets and rotations, units, up axis, and the skeleton's bone map.
//!
//! ```json
//! {
//!   "name": "lab19",
//!   "units": "cm",                 // m | dm | cm | mm | in | metres per unit (number)
//!   "up": "y",                     // y | z
//!   "joints": [
//!     { "name": "Hips", "parent": null, "offset": [0, 95, 0] },
//!     { "name": "Chest", "parent": "Hips", "offset": [0, 10, 0],
//!       "rotation": [0, 0, 0, 1],  // optional rest rotation, quaternion x y z w
//!       "end": [0, 5, 0] }         // optional: where a leaf bone ends
//!   ],
//!   "boneMap": { "hips": "Hips", "spine": "Chest" },
//!   "stream": {                    // optional: how a lab system streams it
//!     "rotations": "local",        // local (to the parent) | global (sender's world)
//!     "format": "euler",           // quaternion (x y z w) | euler
//!     "eulerOrder": "ZXY",         // euler only: intrinsic, as BVH channels list them
//!     "angles": "deg",             // euler only: deg | rad
//!     "units": "cm",               // default: the file's units
//!     "up": "y",                   // default: the file's up axis
//!     "handedness": "right"        // right | left (the sender's X axis mirrored)
//!   }
//! }
//! ```
//!
//! Joints may be listed in any order; they are sorted parents-first and a cycle is
//! an error. Offsets and rotations are in the file's units and axes and are
//! converted to metres and +Y up on load.
//!
//! The `stream` object is read into a `StreamFormat`, separate from the `Rig`
//! (`parse_with_stream`, `load_stream`): without it, a lab streams local
//! quaternions in the file's units and up axis, right-handed. `protocol::lab_osc`
//! decodes and encodes streams in that format.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{EulerRot, Quat, Vec3};
use serde::Deserialize;

use crate::skeleton::{InvalidSkeleton, Joint, NamedBoneMap, Skeleton, Transform};

use super::{Basis, LoadOptions, Rig, Units, UpAxis};

/// Why a skeleton JSON file cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SkeletonJsonError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a skeleton JSON file: it is not UTF-8 text")]
    NotText { path: PathBuf },
    #[error("{path}:{line}:{column}: {field}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        field: String,
        message: String,
    },
    #[error("{path}: {field}: {message}")]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("{path}: joints {cycle} form a cycle (each names the next as parent)")]
    Cycle { path: PathBuf, cycle: String },
    #[error("{path}: {source}")]
    Invalid {
        path: PathBuf,
        #[source]
        source: InvalidSkeleton,
    },
}

#[derive(Deserialize)]
struct FileJoint {
    name: String,
    parent: Option<String>,
    offset: [f32; 3],
    rotation: Option<[f32; 4]>,
    end: Option<[f32; 3]>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    #[serde(default, deserialize_with = "units_text")]
    units: Option<String>,
    #[serde(default)]
    up: Option<String>,
    joints: Vec<FileJoint>,
    #[serde(default)]
    bone_map: Option<serde_json::Value>,
    #[serde(default)]
    stream: Option<FileStream>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileStream {
    rotations: Option<String>,
    format: Option<String>,
    euler_order: Option<String>,
    angles: Option<String>,
    #[serde(default, deserialize_with = "units_text")]
    units: Option<String>,
    up: Option<String>,
    handedness: Option<String>,
}

/// `units` as written: a name (`"cm"`), or metres per unit as a number (`0.01`)
/// or in a string (`"0.01"`); `Units::parse` reads the text.
fn units_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None => Ok(None),
        Some(serde_json::Value::String(name)) => Ok(Some(name)),
        Some(serde_json::Value::Number(per_unit)) => Ok(Some(per_unit.to_string())),
        Some(other) => Err(serde::de::Error::custom(format!(
            "`{other}` is not m, dm, cm, mm, in or a number"
        ))),
    }
}

/// How a lab system streams a skeleton (the file's `stream` object): what its
/// rotations are relative to, how they are written, and the sender's units and axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamFormat {
    pub space: RotationSpace,
    pub rotation: RotationFormat,
    /// Length unit of streamed positions.
    pub units: Units,
    /// The sender's up axis.
    pub up: UpAxis,
    pub handedness: Handedness,
}

/// What a streamed rotation is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotationSpace {
    /// To the parent joint: the joint's whole local rotation, rest rotation included.
    Local,
    /// To the sender's world: the joint's model-space rotation.
    Global,
}

/// How a streamed rotation is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotationFormat {
    /// Four numbers, x y z w (need not be unit length).
    Quaternion,
    /// Three angles, intrinsic, in `order`: ZXY is Rz·Rx·Ry (the first angle about
    /// Z), as BVH writes `Zrotation Xrotation Yrotation`. One of the six
    /// three-axis orders (`EulerRot::XYZ` ... `EulerRot::ZYX`).
    Euler { order: EulerRot, angles: AngleUnit },
}

/// Unit of Euler angles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AngleUnit {
    Degrees,
    Radians,
}

impl AngleUnit {
    /// Radians per unit.
    #[must_use]
    pub fn radians_per_unit(self) -> f32 {
        match self {
            AngleUnit::Degrees => std::f32::consts::PI / 180.0,
            AngleUnit::Radians => 1.0,
        }
    }
}

/// Handedness of the sender's axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handedness {
    Right,
    /// Left-handed: the right-handed axes with X mirrored, as Unity and VMC are
    /// against glTF (position (-x, y, z), rotation (x, -y, -z, w)).
    Left,
}

impl StreamFormat {
    /// The default for a file in `units` with `up`: local quaternions, right-handed.
    #[must_use]
    pub fn local_quaternions(units: Units, up: UpAxis) -> Self {
        Self {
            space: RotationSpace::Local,
            rotation: RotationFormat::Quaternion,
            units,
            up,
            handedness: Handedness::Right,
        }
    }
}

/// For messages: `local ZXY Euler angles in degrees, cm, +Y up, right-handed`.
impl std::fmt::Display for StreamFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let space = match self.space {
            RotationSpace::Local => "local",
            RotationSpace::Global => "global",
        };
        match self.rotation {
            RotationFormat::Quaternion => write!(f, "{space} quaternions")?,
            RotationFormat::Euler { order, angles } => {
                let unit = match angles {
                    AngleUnit::Degrees => "degrees",
                    AngleUnit::Radians => "radians",
                };
                write!(f, "{space} {order:?} Euler angles in {unit}")?;
            }
        }
        match self.units {
            Units::Metres => f.write_str(", m")?,
            Units::Decimetres => f.write_str(", dm")?,
            Units::Centimetres => f.write_str(", cm")?,
            Units::Millimetres => f.write_str(", mm")?,
            Units::Inches => f.write_str(", in")?,
            Units::Scale(s) => write!(f, ", {s} m per unit")?,
        }
        let up = match self.up {
            UpAxis::Y => "Y",
            UpAxis::Z => "Z",
        };
        let hand = match self.handedness {
            Handedness::Right => "right",
            Handedness::Left => "left",
        };
        write!(f, ", +{up} up, {hand}-handed")
    }
}

/// The six three-axis intrinsic orders by name (`XYZ` ... `ZYX`, any case).
#[must_use]
pub fn euler_order(name: &str) -> Option<EulerRot> {
    Some(match name.to_ascii_uppercase().as_str() {
        "XYZ" => EulerRot::XYZ,
        "XZY" => EulerRot::XZY,
        "YXZ" => EulerRot::YXZ,
        "YZX" => EulerRot::YZX,
        "ZXY" => EulerRot::ZXY,
        "ZYX" => EulerRot::ZYX,
        _ => return None,
    })
}

/// Reads and parses a skeleton JSON file.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Rig, SkeletonJsonError> {
    load_with_stream(path, options).map(|(rig, _)| rig)
}

/// Reads and parses a skeleton JSON file with its stream format.
pub fn load_with_stream(
    path: &Path,
    options: &LoadOptions,
) -> Result<(Rig, StreamFormat), SkeletonJsonError> {
    let bytes = std::fs::read(path).map_err(|source| SkeletonJsonError::Read {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| SkeletonJsonError::NotText {
        path: path.to_owned(),
    })?;
    parse_with_stream(&text, path, options)
}

/// Reads a skeleton JSON file's stream format (the whole file is checked).
pub fn load_stream(path: &Path) -> Result<StreamFormat, SkeletonJsonError> {
    load_with_stream(path, &LoadOptions::default()).map(|(_, stream)| stream)
}

/// Parses skeleton JSON text; `path` is only used in messages.
pub fn parse(text: &str, path: &Path, options: &LoadOptions) -> Result<Rig, SkeletonJsonError> {
    parse_with_stream(text, path, options).map(|(rig, _)| rig)
}

/// Parses skeleton JSON text with its stream format; `path` is only used in
/// messages.
pub fn parse_with_stream(
    text: &str,
    path: &Path,
    options: &LoadOptions,
) -> Result<(Rig, StreamFormat), SkeletonJsonError> {
    let field_err = |field: String, message: String| SkeletonJsonError::Field {
        path: path.to_owned(),
        field,
        message,
    };
    let de = &mut serde_json::Deserializer::from_str(text);
    let file: File = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        SkeletonJsonError::Syntax {
            path: path.to_owned(),
            line: inner.line(),
            column: inner.column(),
            field,
            message: strip_position(&inner.to_string()),
        }
    })?;

    let units = match (options.units, file.units.as_deref()) {
        (Some(u), _) => u,
        (None, None) => Units::Metres,
        (None, Some(s)) => Units::parse(s).ok_or_else(|| {
            field_err(
                "units".into(),
                format!("`{s}` is not m, dm, cm, mm, in or a number"),
            )
        })?,
    };
    let up = match (options.up, file.up.as_deref()) {
        (Some(u), _) => u,
        (None, None) => UpAxis::Y,
        (None, Some(s)) => UpAxis::parse(s)
            .ok_or_else(|| field_err("up".into(), format!("`{s}` is not y or z")))?,
    };

    let order = parents_first(&file.joints, path)?;
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    let mut joints = Vec::with_capacity(order.len());
    for &i in &order {
        let fj = &file.joints[i];
        let place = format!("joints[{i}]");
        let parent = fj.parent.as_deref().map(|p| index_of[p]);
        let rotation = match fj.rotation {
            None => Quat::IDENTITY,
            Some([x, y, z, w]) => {
                let q = Quat::from_xyzw(x, y, z, w);
                if !q.is_finite() || q.length() < 1e-6 {
                    return Err(field_err(
                        format!("{place}.rotation"),
                        "not a rotation quaternion (x, y, z, w)".into(),
                    ));
                }
                q.normalize()
            }
        };
        let offset = Vec3::from(fj.offset);
        if !offset.is_finite() {
            return Err(field_err(
                format!("{place}.offset"),
                "not a finite number".into(),
            ));
        }
        let end = fj.end.map(Vec3::from);
        if end.is_some_and(|e| !e.is_finite()) {
            return Err(field_err(
                format!("{place}.end"),
                "not a finite number".into(),
            ));
        }
        index_of.insert(fj.name.as_str(), joints.len());
        joints.push(Joint {
            name: fj.name.clone(),
            parent,
            rest: Transform {
                translation: offset,
                rotation,
                scale: Vec3::ONE,
            },
            end,
        });
    }
    Basis::new(units, up).apply_to_joints(&mut joints);
    let skeleton = Skeleton::new(joints).map_err(|source| SkeletonJsonError::Invalid {
        path: path.to_owned(),
        source,
    })?;
    let bone_map = match &file.bone_map {
        None => None,
        Some(value) => Some(NamedBoneMap::from_json(value, path).map_err(|e| {
            field_err(
                "boneMap".into(),
                e.to_string().replace(&format!("{}: ", path.display()), ""),
            )
        })?),
    };
    let stream = match &file.stream {
        None => StreamFormat::local_quaternions(units, up),
        Some(fs) => stream_format(fs, units, up)
            .map_err(|(field, message)| field_err(format!("stream.{field}"), message))?,
    };
    let rig = Rig {
        skeleton,
        map_source: bone_map
            .as_ref()
            .map(|_| "the skeleton file's boneMap".to_owned()),
        bone_map,
        clips: Vec::new(),
        notes: Vec::new(),
        units,
    };
    Ok((rig, stream))
}

/// The `stream` object, checked; unset units and up axis are the file's. An error
/// is the field's name and what is wrong with it.
fn stream_format(
    fs: &FileStream,
    units: Units,
    up: UpAxis,
) -> Result<StreamFormat, (&'static str, String)> {
    let space = match fs.rotations.as_deref() {
        None | Some("local") => RotationSpace::Local,
        Some("global") => RotationSpace::Global,
        Some(s) => return Err(("rotations", format!("`{s}` is not local or global"))),
    };
    let rotation = match fs.format.as_deref() {
        None | Some("quaternion") => {
            if fs.euler_order.is_some() || fs.angles.is_some() {
                return Err((
                    "format",
                    "eulerOrder and angles are for euler rotations; say \"format\": \"euler\""
                        .into(),
                ));
            }
            RotationFormat::Quaternion
        }
        Some("euler") => {
            let order = match fs.euler_order.as_deref() {
                None => return Err(("eulerOrder", "required for euler rotations".into())),
                Some(o) => euler_order(o).ok_or_else(|| {
                    (
                        "eulerOrder",
                        format!("`{o}` is not one of XYZ, XZY, YXZ, YZX, ZXY, ZYX"),
                    )
                })?,
            };
            let angles = match fs.angles.as_deref() {
                None => return Err(("angles", "required for euler rotations".into())),
                Some("deg" | "degrees") => AngleUnit::Degrees,
                Some("rad" | "radians") => AngleUnit::Radians,
                Some(a) => return Err(("angles", format!("`{a}` is not deg or rad"))),
            };
            RotationFormat::Euler { order, angles }
        }
        Some(f) => return Err(("format", format!("`{f}` is not quaternion or euler"))),
    };
    let units = match fs.units.as_deref() {
        None => units,
        Some(s) => Units::parse(s).ok_or_else(|| {
            (
                "units",
                format!("`{s}` is not m, dm, cm, mm, in or a number"),
            )
        })?,
    };
    let up = match fs.up.as_deref() {
        None => up,
        Some(s) => UpAxis::parse(s).ok_or_else(|| ("up", format!("`{s}` is not y or z")))?,
    };
    let handedness = match fs.handedness.as_deref() {
        None | Some("right") => Handedness::Right,
        Some("left") => Handedness::Left,
        Some(h) => return Err(("handedness", format!("`{h}` is not right or left"))),
    };
    Ok(StreamFormat {
        space,
        rotation,
        units,
        up,
        handedness,
    })
}

/// serde_json appends " at line L column C"; the message carries them already.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// File indices of the joints, parents first. Unknown parents, duplicate names and
/// cycles are errors.
fn parents_first(joints: &[FileJoint], path: &Path) -> Result<Vec<usize>, SkeletonJsonError> {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, j) in joints.iter().enumerate() {
        if by_name.insert(j.name.as_str(), i).is_some() {
            return Err(SkeletonJsonError::Invalid {
                path: path.to_owned(),
                source: InvalidSkeleton::DuplicateName(j.name.clone()),
            });
        }
    }
    let mut parent = Vec::with_capacity(joints.len());
    for (i, j) in joints.iter().enumerate() {
        parent.push(match j.parent.as_deref() {
            None => None,
            Some(p) => Some(*by_name.get(p).ok_or_else(|| SkeletonJsonError::Field {
                path: path.to_owned(),
                field: format!("joints[{i}].parent"),
                message: format!(
                    "joint `{}` names parent `{p}`, which is not defined",
                    j.name
                ),
            })?),
        });
    }
    // 0 = not visited, 1 = on the current path, 2 = placed.
    let mut state = vec![0u8; joints.len()];
    let mut order = Vec::with_capacity(joints.len());
    for start in 0..joints.len() {
        let mut path_stack: Vec<usize> = Vec::new();
        let mut j = Some(start);
        while let Some(k) = j {
            match state[k] {
                2 => break,
                1 => {
                    let from = path_stack.iter().position(|&x| x == k).unwrap_or(0);
                    let mut names: Vec<&str> = path_stack[from..]
                        .iter()
                        .map(|&x| joints[x].name.as_str())
                        .collect();
                    names.push(&joints[k].name);
                    return Err(SkeletonJsonError::Cycle {
                        path: path.to_owned(),
                        cycle: names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(" -> "),
                    });
                }
                _ => {
                    state[k] = 1;
                    path_stack.push(k);
                    j = parent[k];
                }
            }
        }
        for &k in path_stack.iter().rev() {
            state[k] = 2;
            order.push(k);
        }
    }
    Ok(order)
}

/// Parses an embedded skeleton file.
///
/// # Panics
/// Never for the files shipped in `config/` (a test parses them).
#[must_use]
pub fn embedded_rig(name: &str, json: &str) -> Rig {
    parse(json, Path::new(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("embedded {name} is broken: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Rig, SkeletonJsonError> {
        parse(text, Path::new("s.json"), &LoadOptions::default())
    }

    #[test]
    fn joints_in_any_order_are_sorted_and_converted() {
        let rig = parse_str(
            r#"{"units": "cm", "up": "z", "joints": [
                {"name": "b", "parent": "a", "offset": [0, 0, 50]},
                {"name": "a", "parent": null, "offset": [0, 0, 100], "end": [0, 0, 10]}
            ], "boneMap": {"hips": "a"}}"#,
        )
        .unwrap();
        let s = &rig.skeleton;
        assert_eq!(s.joints()[0].name, "a");
        assert_eq!(s.joints()[1].parent, Some(0));
        assert!(
            s.joints()[1]
                .rest
                .translation
                .abs_diff_eq(Vec3::new(0.0, 0.5, 0.0), 1e-6)
        );
        assert!(
            s.joints()[0]
                .end
                .unwrap()
                .abs_diff_eq(Vec3::new(0.0, 0.1, 0.0), 1e-6)
        );
        assert_eq!(rig.bone_map.unwrap().bones.len(), 1);
    }

    fn stream_of(text: &str) -> StreamFormat {
        parse_with_stream(text, Path::new("s.json"), &LoadOptions::default())
            .unwrap()
            .1
    }

    #[test]
    fn the_stream_defaults_to_local_quaternions_in_the_files_units_and_axes() {
        let stream = stream_of(
            r#"{"units": "mm", "up": "z", "joints": [{"name": "a", "offset": [0, 0, 0]}]}"#,
        );
        assert_eq!(
            stream,
            StreamFormat::local_quaternions(Units::Millimetres, UpAxis::Z)
        );
        let partial = stream_of(
            r#"{"units": "cm", "joints": [{"name": "a", "offset": [0, 0, 0]}],
                "stream": {"rotations": "global", "handedness": "left"}}"#,
        );
        assert_eq!(partial.space, RotationSpace::Global);
        assert_eq!(partial.handedness, Handedness::Left);
        assert_eq!((partial.units, partial.up), (Units::Centimetres, UpAxis::Y));
    }

    #[test]
    fn units_are_a_name_or_metres_per_unit_as_a_number_or_a_string() {
        for units in ["0.01", "\"0.01\"", "\"cm\""] {
            let stream = stream_of(&format!(
                r#"{{"units": {units}, "joints": [{{"name": "a", "offset": [0, 0, 0]}}],
                    "stream": {{"units": {units}}}}}"#
            ));
            let scale = |u: Units| u.metres_per_unit();
            assert!((scale(stream.units) - 0.01).abs() < 1e-9, "{units}");
        }
        let wrong = parse_with_stream(
            r#"{"units": true, "joints": [{"name": "a", "offset": [0, 0, 0]}]}"#,
            Path::new("s.json"),
            &LoadOptions::default(),
        );
        let message = wrong.unwrap_err().to_string();
        assert!(
            message.contains("units") && message.contains("`true` is not m, dm, cm, mm, in"),
            "{message}"
        );
    }

    #[test]
    fn lab19_says_how_its_lab_streams_it() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/skeletons/lab19.json");
        let stream = load_stream(&path).unwrap();
        assert_eq!(
            stream.to_string(),
            "local ZXY Euler angles in degrees, cm, +Y up, right-handed"
        );
    }

    #[test]
    fn the_stream_reads_every_field() {
        let stream = stream_of(
            r#"{"units": "cm", "joints": [{"name": "a", "offset": [0, 0, 0]}],
                "stream": {"rotations": "local", "format": "euler", "eulerOrder": "zxy",
                           "angles": "rad", "units": "m", "up": "z", "handedness": "right"}}"#,
        );
        assert_eq!(
            stream.to_string(),
            "local ZXY Euler angles in radians, m, +Z up, right-handed"
        );
        assert_eq!(
            stream,
            StreamFormat {
                space: RotationSpace::Local,
                rotation: RotationFormat::Euler {
                    order: EulerRot::ZXY,
                    angles: AngleUnit::Radians
                },
                units: Units::Metres,
                up: UpAxis::Z,
                handedness: Handedness::Right,
            }
        );
    }

    #[test]
    fn errors_name_the_file_and_the_place() {
        let cases = [
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0]}]}"#,
                "s.json:1:",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, "x"]}]}"#,
                "joints[0].offset",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 1e39]}]}"#,
                "joints[0].offset",
            ),
            (
                r#"{"joints": [{"name": "a", "parent": "zz", "offset": [0, 0, 0]}]}"#,
                "joints[0].parent",
            ),
            (
                r#"{"joints": [{"name": "a", "parent": "b", "offset": [0, 0, 0]},
                               {"name": "b", "parent": "a", "offset": [0, 0, 0]}]}"#,
                "form a cycle",
            ),
            (r#"{"units": "furlong", "joints": []}"#, "s.json: units:"),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0], "rotation": [0, 0, 0, 0]}]}"#,
                "joints[0].rotation",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "boneMap": {"elbow": "a"}}"#,
                "boneMap",
            ),
            (r#"{"joints": []}"#, "no joints"),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}, {"name": "a", "offset": [0, 0, 0]}]}"#,
                "used twice",
            ),
            ("{\"joints\": [", "s.json:1:"),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"format": "euler", "angles": "deg"}}"#,
                "stream.eulerOrder: required",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"format": "euler", "eulerOrder": "ZXZ", "angles": "deg"}}"#,
                "stream.eulerOrder: `ZXZ`",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"format": "euler", "eulerOrder": "ZXY"}}"#,
                "stream.angles: required",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"eulerOrder": "ZXY"}}"#,
                "stream.format",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"rotations": "world"}}"#,
                "stream.rotations: `world`",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"handedness": "up"}}"#,
                "stream.handedness",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"units": "cubits"}}"#,
                "stream.units",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"up": "x"}}"#,
                "stream.up",
            ),
            (
                r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"order": "ZXY"}}"#,
                "stream.order: unknown field `order`",
            ),
        ];
        for (text, expected) in cases {
            let err = parse_str(text)
                .err()
                .unwrap_or_else(|| panic!("accepted {text}"))
                .to_string();
            assert!(err.starts_with("s.json"), "{err}");
            assert!(err.contains(expected), "{err} lacks {expected}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
