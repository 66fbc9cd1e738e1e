//! Builders the BVH loader's unit tests share: small files (one joint, a valid
//! two-joint file to break line by line) and parsing them as they are or with
//! guessed units and axes.

use std::path::Path;

use glam::{Affine3A, Quat, Vec3};

use super::parse;
use crate::formats::{LoadOptions, Motion, Rig, Units, UpAxis};

/// Reads files as they are: metres, +Y up, no guessing.
pub(super) const AS_IS: LoadOptions = LoadOptions {
    units: Some(Units::Metres),
    up: Some(UpAxis::Y),
    rest_from: None,
};

pub(super) fn rig(text: &str) -> Rig {
    match parse(text, Path::new("test.bvh"), &AS_IS) {
        Ok(rig) => rig,
        Err(err) => panic!("{err}"),
    }
}

pub(super) fn guessed(text: &str) -> Rig {
    match parse(text, Path::new("test.bvh"), &LoadOptions::default()) {
        Ok(rig) => rig,
        Err(err) => panic!("{err}"),
    }
}

pub(super) fn error(text: &str) -> String {
    match parse(text, Path::new("bad.bvh"), &AS_IS) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(err) => err.to_string(),
    }
}

pub(super) fn motion(rig: &Rig) -> &Motion {
    &rig.clips.first().expect("the file has motion").motion
}

/// Model-space place of every joint in the rig's first frame.
pub(super) fn places(rig: &Rig) -> Vec<Vec3> {
    let frame = motion(rig).frame(0);
    let mut world: Vec<Affine3A> = Vec::new();
    for (i, joint) in rig.skeleton.joints().iter().enumerate() {
        let local = Affine3A::from_rotation_translation(frame.rotations[i], frame.translations[i]);
        world.push(joint.parent.map_or(local, |p| world[p] * local));
    }
    world.iter().map(|w| w.translation.into()).collect()
}

pub(super) fn same_rotation(a: Quat, b: Quat) -> bool {
    a.abs_diff_eq(b, 1e-5) || a.abs_diff_eq(-b, 1e-5)
}

/// One joint with the given channels (offset 1 2 3) and one frame of values.
pub(super) fn one_joint(channels: &str, frame: &str) -> String {
    let n = channels.split_whitespace().count();
    format!(
        "HIERARCHY\nROOT Hips\n{{\n  OFFSET 1 2 3\n  CHANNELS {n} {channels}\n  End Site\n  {{\n    OFFSET 0 1 0\n  }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n{frame}\n"
    )
}

/// A hips-and-spine file, each bone `bone` long up +Y, one frame per row of nine values
/// (the hips' position and `Zrotation Xrotation Yrotation`, the spine's turn).
pub(super) fn hips_and_spine(bone: f32, rows: &[String]) -> String {
    let mut text = format!(
        "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition \
         Zrotation Xrotation Yrotation\n  JOINT Spine\n  {{\n    OFFSET 0 {bone} 0\n    CHANNELS 3 \
         Zrotation Xrotation Yrotation\n    End Site\n    {{\n      OFFSET 0 {bone} 0\n    }}\n  }}\n\
         }}\nMOTION\nFrames: {}\nFrame Time: 0.0333333\n",
        rows.len()
    );
    for row in rows {
        text += row;
        text += "\n";
    }
    text
}

/// A valid file; the bad-input tests replace one of its (numbered) lines.
pub(super) const GOOD: &str = "\
HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
OFFSET 0 10 0
CHANNELS 3 Zrotation Xrotation Yrotation
End Site
{
  OFFSET 0 10 0
}
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 90 0 0 0 0 0 0 0
1 90 0 0 0 0 0 0 0
";

/// `GOOD` with line `line` (from 1) replaced by `text`.
pub(super) fn good_with(line: usize, text: &str) -> String {
    GOOD.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { text } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first `lines` lines of `GOOD`.
pub(super) fn good_until(lines: usize) -> String {
    GOOD.lines().take(lines).collect::<Vec<_>>().join("\n")
}
