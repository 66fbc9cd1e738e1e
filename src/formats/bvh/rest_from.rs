//! A take's rest from another recording of the same skeleton (`LoadOptions::
//! rest_from`, `--rest-from`). A take whose zero pose is no pose (every `OFFSET`
//! along its joint's own +X) takes its rest from a frame that stands as a body
//! (`rest_frame`); a take that crawls, lies or tumbles in every frame has none, but
//! a walk or the calibration take of the same session does. The other file's rest
//! is found as loading that file finds it (its zero pose when that stands, else a
//! frame or the mean pose of its motion), and is this take's rest when both files
//! declare the same skeleton: the same joints under the same parents, with the same
//! `OFFSET`s below the root.

use std::path::Path;

use super::hierarchy::{JointDef, Parser};
use super::lexer::Lexer;
use super::rest_frame::{FilePose, Upright, choose_rest_frame, zero_pose_upright};
use super::root_pivot::move_root_to_children;
use super::star::rehang_arms;
use super::teleport::hold_teleports;
use super::{BvhError, read_text};
use crate::formats::UpAxis;

/// The rest `from` gives a take of the skeleton `defs` (of the file at `path`), in
/// file space, with how it was found for the notes.
pub(super) struct OtherRest {
    pub(super) pose: FilePose,
    pub(super) upright: Upright,
    /// `frame 12 of the motion of `walk.bvh``, `the zero pose of `tpose.bvh``.
    pub(super) how: String,
}

/// How far a joint's `OFFSET` may differ from the other file's, as a share of the
/// figure's size: the same skeleton written out twice differs by rounding alone.
const SAME_OFFSET: f32 = 1e-3;

/// The rest of the BVH file `from` for the take at `path` whose joints are `defs`
/// (up along `up` when given), or why it cannot be: `from` does not read, declares
/// another skeleton, or stands in no pose.
pub(super) fn rest_from(
    path: &Path,
    from: &Path,
    defs: &[JointDef],
    up: Option<UpAxis>,
) -> Result<OtherRest, BvhError> {
    let refuse = |reason: String| BvhError::RestFrom {
        path: path.to_owned(),
        from: from.to_owned(),
        reason,
    };
    let (text, _) = read_text(from)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut parser = Parser {
        lexer: Lexer::new(text),
        path: from,
        joints: Vec::new(),
        open: Vec::new(),
        notes: Vec::new(),
        sites_as_joints: 0,
    };
    let mut motion = parser.parse_file()?;
    let mut other = parser.joints;
    // Read as the take is (`convert::build`): a star's arms hung from its neck joint.
    rehang_arms(&mut other, motion.as_mut());
    move_root_to_children(&mut other);
    if let Some(reason) = other_skeleton(defs, &other) {
        return Err(refuse(reason));
    }
    let name = from.file_name().map_or_else(
        || from.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let reason = match zero_pose_upright(&other, up) {
        Ok(upright) => {
            return Ok(OtherRest {
                pose: FilePose::zero(&other),
                upright,
                how: format!("the zero pose of `{name}`"),
            });
        }
        Err(reason) => reason,
    };
    let Some(mut raw) = motion.filter(|raw| raw.frames > 0) else {
        return Err(refuse(format!(
            "its zero pose is no standing body ({reason}) and it has no motion"
        )));
    };
    let size = FilePose::zero(&other).extent(&other).max_element();
    hold_teleports(&other, &mut raw, size);
    let keep_offset = super::convert::zero_position_joints(&other, &raw, size);
    let Some(rest) = choose_rest_frame(&other, &raw, &keep_offset, up, reason.clone()) else {
        return Err(refuse(format!(
            "no frame of its motion stands as a body either ({reason})"
        )));
    };
    Ok(OtherRest {
        how: format!("{} of `{name}`", rest.source),
        pose: rest.pose,
        upright: rest.upright,
    })
}

/// Why `other` is not the skeleton `defs` is, naming the first joint that differs;
/// `None` when it is.
fn other_skeleton(defs: &[JointDef], other: &[JointDef]) -> Option<String> {
    if defs.len() != other.len() {
        return Some(format!(
            "it has {} joints, this take {}",
            other.len(),
            defs.len()
        ));
    }
    let size = FilePose::zero(defs).extent(defs).max_element();
    defs.iter().zip(other).find_map(|(a, b)| {
        if a.name != b.name || a.parent != b.parent {
            Some(format!(
                "joint `{}` (line {}) is `{}` there (line {})",
                a.name, a.line, b.name, b.line
            ))
        } else if a.parent.is_some() && a.offset.distance(b.offset) > SAME_OFFSET * size {
            Some(format!(
                "joint `{}` (line {}) has another OFFSET there (line {}): another skeleton",
                a.name, a.line, b.line
            ))
        } else {
            None
        }
    })
}
