//! From the file's units and axes to the internal space: guessing the up axis and
//! the units from the rest pose when `LoadOptions` does not give them, converting
//! the rest pose and every frame (rotation channels multiplied in the listed
//! order, position channels replacing `OFFSET` components), and the notes a user
//! should read (guesses, all-zero position channels, a first frame lying down, a
//! take lifted onto its floor).

use std::path::Path;

use glam::{Quat, Vec3};

use super::BvhError;
use super::displaced::Displaced;
use super::floor::lift_onto_floor;
use super::hierarchy::{Axis, Channel, JointDef};
use super::hip_turn::HipTurn;
use super::lead_frame::hold_lead_frame;
use super::lexer::quote;
use super::motion::RawMotion;
use super::motion_up::stand_take_up;
use super::rest_frame::{
    FilePose, Upright, choose_rest_frame, sampled_frames, up_of, zero_pose_upright,
};
use super::rest_from::rest_from;
use super::root_pivot::move_root_to_children;
use super::star::rehang_arms;
use super::teleport::hold_teleports;
use crate::formats::{Basis, Clip, LoadOptions, Motion, Rig, Units, UpAxis};
use crate::skeleton::Skeleton;

/// The rig in internal space: takes the rest from the motion when the zero pose is
/// no pose (`rest_frame`, with the up axis it stands along), guesses the up axis
/// (of a zero-pose rest) and units from the rest if not given, converts the rest
/// pose and every frame, checks the skeleton.
pub(super) fn build(
    path: &Path,
    defs: Vec<JointDef>,
    motion: Option<RawMotion>,
    options: &LoadOptions,
) -> Result<Rig, BvhError> {
    let (mut defs, mut motion) = (defs, motion);
    let (star_note, star) = rehang_arms(&mut defs, motion.as_mut()).unzip();
    let mut notes: Vec<String> = star_note.into_iter().collect();
    notes.extend(move_root_to_children(&mut defs));
    let (mut raw, empty_notes) = match motion {
        Some(raw) if raw.frames > 0 => (Some(raw), Vec::new()),
        Some(raw) => (None, raw.notes),
        None => (None, Vec::new()),
    };
    let zero = FilePose::zero(&defs);
    let zero_extent = zero.extent(&defs);
    if let Some(raw) = raw.as_mut() {
        notes.extend(hold_teleports(&defs, raw, zero_extent.max_element()));
    }
    let keep_offset = raw.as_ref().map_or_else(Vec::new, |raw| {
        let up = up_of(zero_extent, options.up);
        zero_position_joints(&defs, raw, along_up(zero_extent, up))
    });
    let zero_upright = zero_pose_upright(&defs, options.up);
    // The rest taken from the motion or from another file, with the note saying so.
    let rest_frame: Option<(FilePose, Upright, String)> = match (&options.rest_from, &zero_upright)
    {
        (Some(from), _) => {
            let other = rest_from(path, from, &defs, options.up)?;
            let note = format!("rest pose: {} (--rest-from)", other.how);
            Some((other.pose, other.upright, note))
        }
        (None, Ok(_)) => None,
        (None, Err(reason)) => raw.as_ref().and_then(|raw| {
            choose_rest_frame(&defs, raw, &keep_offset, options.up, reason.clone()).map(|f| {
                let note = format!(
                    "rest pose: {}; the zero pose (OFFSETs with no rotation) is no standing \
                     body: {}",
                    f.source, f.zero_pose
                );
                (f.pose, f.upright, note)
            })
        }),
    };
    let (rest, extent) = match &rest_frame {
        Some((pose, ..)) => (pose, pose.extent(&defs)),
        None => (&zero, zero_extent),
    };
    match (&rest_frame, &zero_upright, &raw) {
        (Some((.., note)), ..) => notes.push(note.clone()),
        // A rig of fewer joints than VRM's required bones is no body in any frame.
        (None, Err(reason), Some(raw)) if defs.len() >= crate::humanoid::bone::REQUIRED.len() => {
            let axes = match options.up {
                None => "+Y and with +Z",
                Some(UpAxis::Y) => "+Y",
                Some(UpAxis::Z) => "+Z",
            };
            notes.push(format!(
                "zero pose kept as the rest, though it is no standing body ({reason}): no \
                 frame of the motion stands as one either ({}, read with {axes} up), as in a \
                 take that never stands up (a crawl, a take lying down); `--rest-from` reads \
                 it against the rest of another take of the same skeleton",
                sampled_frames(raw.frames),
            ));
        }
        _ => {}
    }
    // After the rest is chosen: a reference T-pose before the take may be the rest.
    if let Some(raw) = raw.as_mut() {
        notes.extend(hold_lead_frame(&defs, raw, &keep_offset));
    }
    let upright = match (&rest_frame, zero_upright) {
        (Some((_, upright, _)), _) => *upright,
        (None, Ok(upright)) => upright,
        (None, Err(_)) => Upright::along(up_of(extent, options.up)),
    };
    let up = upright.up;
    if upright.head_down {
        let axis = if up == UpAxis::Z { "Z" } else { "Y" };
        notes.push(format!(
            "up axis: -{axis} (guessed: the figure stands on its head along +{axis}, as camera \
             coordinates have it; read the other way up)"
        ));
    } else if options.up.is_none() && up == UpAxis::Z {
        notes.push(match rest_frame {
            Some(_) => {
                "up axis: +Z (guessed: the rest taken from the motion stands along Z)".into()
            }
            None => format!(
                "up axis: +Z (guessed: the rest pose is {:.2} units tall along Z, {:.2} along Y)",
                extent.z, extent.y
            ),
        });
    }
    let height = along_up(extent, up);
    let units = match options.units {
        Some(units) => units,
        None => {
            // A unit the height fits is named here; any other guess (a scale to a
            // person, or none for a figure with no height) is named by its own note.
            let (units, note) = Units::guess_from_height(height);
            notes.push(note.unwrap_or_else(|| format!("units: {}", describe_guess(units, height))));
            units
        }
    };
    let basis = upright.basis(units);
    let mut skeleton =
        Skeleton::new(rest.joints(&defs, &basis)).map_err(|source| BvhError::Skeleton {
            path: path.to_owned(),
            source,
        })?;
    // A star skeleton's root at its torso moves to its pelvis (`star.rs`).
    let lowered = match star.and_then(|star| star.lower_root(&skeleton)) {
        Some(Ok((lowered, moved))) => {
            skeleton = moved;
            notes.push(lowered.note(&skeleton));
            Some(lowered)
        }
        Some(Err(stays)) => {
            notes.push(stays);
            None
        }
        None => None,
    };

    notes.extend(empty_notes);
    // A rest taken from a frame keeps that frame's rotations as they are.
    // A zero-pose rest standing head up, its up axis guessed: the take may stand
    // along the file's other axis (`motion_up`).
    let may_stand_up = rest_frame.is_none() && options.up.is_none() && !upright.head_down;
    let hip_turn = rest_frame
        .is_none()
        .then(|| HipTurn::find(&defs, basis.rotation.conjugate() * Vec3::Y))
        .flatten();
    let displaced = Displaced::find(&defs, rest);
    let motion = raw.map(|raw| {
        notes.extend(raw.notes.iter().cloned());
        let changes = Changes {
            hip_turn: hip_turn.as_ref(),
            displaced: displaced.as_ref(),
        };
        let (mut motion, turned, moved) = to_motion(&defs, &raw, &basis, &keep_offset, &changes);
        if let Some(lowered) = &lowered {
            lowered.motion(&mut motion);
        }
        if let Some(h) = hip_turn.as_ref().filter(|_| turned > 0) {
            notes.push(hip_turn_note(&defs, h, turned));
        }
        if moved > 0 {
            notes.push(format!(
                "joints off their bones by their own position channels in {moved} frames: \
                 each turn off its OFFSET is moved into its parent's rotation (every joint \
                 stays where the file puts it)"
            ));
        }
        notes.extend(zero_positions_note(&defs, &keep_offset));
        if may_stand_up {
            notes.extend(stand_take_up(&skeleton, &mut motion, up));
        }
        notes.extend(short_first_frame_note(&skeleton, &motion, up));
        notes.extend(lift_onto_floor(&skeleton, &mut motion));
        motion
    });
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Rig {
        skeleton,
        bone_map: None,
        map_source: None,
        clips: motion
            .map(|motion| Clip { name, motion })
            .into_iter()
            .collect(),
        notes,
        units,
    })
}

/// The extent's component along `up`.
fn along_up(extent: Vec3, up: UpAxis) -> f32 {
    match up {
        UpAxis::Y => extent.y,
        UpAxis::Z => extent.z,
    }
}

/// Per joint: whether its position channels hold 0 in every frame while its
/// `OFFSET` does not. Such joints keep `OFFSET` (see the module header).
pub(super) fn zero_position_joints(defs: &[JointDef], raw: &RawMotion, height: f32) -> Vec<bool> {
    let channels: usize = defs.iter().map(|d| d.channels.len()).sum();
    let small = 1e-4 * height.abs().min(f32::MAX);
    let mut keep = Vec::with_capacity(defs.len());
    let mut start = 0;
    for def in defs {
        let positions = || {
            def.channels
                .iter()
                .enumerate()
                .filter_map(|(i, c)| match c {
                    Channel::Position(axis) => Some((i, *axis)),
                    Channel::Rotation(_) => None,
                })
        };
        let offset_moved = positions().any(|(_, axis)| {
            let offset = def.file_offset();
            let component = match axis {
                Axis::X => offset.x,
                Axis::Y => offset.y,
                Axis::Z => offset.z,
            };
            component.abs() > small
        });
        let always_zero = offset_moved
            && (0..raw.frames).all(|frame| {
                let first = frame.saturating_mul(channels).saturating_add(start);
                positions().all(|(i, _)| {
                    let value = raw.values.get(first.saturating_add(i)).copied();
                    value.unwrap_or(0.0).abs() <= small
                })
            });
        keep.push(always_zero);
        start += def.channels.len();
    }
    keep
}

/// Says which joints keep their `OFFSET` because their position channels are all 0.
fn zero_positions_note(defs: &[JointDef], keep_offset: &[bool]) -> Option<String> {
    let suspects: Vec<&str> = defs
        .iter()
        .zip(keep_offset)
        .filter(|(_, keep)| **keep)
        .map(|(d, _)| d.name.as_str())
        .collect();
    let first = suspects.first()?;
    let joints = match suspects.len() {
        1 => format!("joint `{}` has", quote(first)),
        n => format!("{n} joints (`{}`, ...) have", quote(first)),
    };
    Some(format!(
        "{joints} position channels that are 0 in every frame while OFFSET is not; \
         read as added to OFFSET, so they keep their OFFSET"
    ))
}

/// Says so when the first frame stands less than half as tall as the rest pose:
/// the motion may lie down, or be recorded with another up axis than the rest pose.
fn short_first_frame_note(skeleton: &Skeleton, motion: &Motion, up: UpAxis) -> Option<String> {
    let rest = vertical_extent(
        skeleton,
        &skeleton.rest_rotations(),
        &skeleton.rest_translations(),
    );
    let frame = motion.frames().next()?;
    let first = vertical_extent(skeleton, frame.rotations, frame.translations);
    let other = match up {
        UpAxis::Y => "Z",
        UpAxis::Z => "Y",
    };
    (first < 0.5 * rest).then(|| {
        format!(
            "the first frame is {first:.2} m tall, the rest pose {rest:.2} m: the motion may lie down \
             or have +{other} up (set the up axis to override)"
        )
    })
}

/// Height (extent along +Y, metres) of every joint and end site in a pose.
fn vertical_extent(skeleton: &Skeleton, rotations: &[Quat], translations: &[Vec3]) -> f32 {
    if rotations.len() != skeleton.len() || translations.len() != skeleton.len() {
        return 0.0;
    }
    let world = skeleton.world_transforms(rotations, translations);
    let mut min = f32::INFINITY;
    let mut max = f32::NEG_INFINITY;
    for (joint, w) in skeleton.joints().iter().zip(&world) {
        let ends = joint.end.map(|e| w.transform_point3(e).y);
        for y in std::iter::once(w.translation.y).chain(ends) {
            min = min.min(y);
            max = max.max(y);
        }
    }
    (max - min).max(0.0)
}

/// "centimetres (guessed from a 172 cm figure)".
fn describe_guess(units: Units, height: f32) -> String {
    match units {
        Units::Metres => format!("metres (guessed from a {height:.2} m figure)"),
        Units::Decimetres => format!("decimetres (guessed from a {height:.1} dm figure)"),
        Units::Centimetres => format!("centimetres (guessed from a {height:.0} cm figure)"),
        Units::Millimetres => format!("millimetres (guessed from a {height:.0} mm figure)"),
        Units::Inches => format!("inches (guessed from a {height:.1} in figure)"),
        Units::Scale(s) => format!("{s:.4} m per unit (guessed from a {height:.2}-unit figure)"),
    }
}

/// Local rotation and translation of every joint in every frame, in internal space,
/// the turn of zero-length hip joints moved into the root (`hip_turn`); and in how
/// many frames it was.
/// What `to_motion` changes in every frame, each found once from the hierarchy.
struct Changes<'a> {
    hip_turn: Option<&'a HipTurn>,
    displaced: Option<&'a Displaced>,
}

/// Every frame in internal space; also how many frames had the root's turn taken
/// from its hip joints and how many had a joint's displacement moved into its parent.
fn to_motion(
    defs: &[JointDef],
    raw: &RawMotion,
    basis: &Basis,
    keep_offset: &[bool],
    changes: &Changes,
) -> (Motion, usize, usize) {
    let samples = raw.frames.saturating_mul(defs.len());
    let mut rotations = Vec::with_capacity(samples);
    let mut translations = Vec::with_capacity(samples);
    let mut turned = 0;
    let mut moved = 0;
    for frame in 0..raw.frames {
        let mut pose = FilePose::frame(defs, raw, keep_offset, frame);
        if changes
            .hip_turn
            .is_some_and(|h| h.apply(&mut pose.rotations))
        {
            turned += 1;
        }
        if changes.displaced.is_some_and(|d| d.apply(&mut pose)) {
            moved += 1;
        }
        rotations.extend(pose.rotations.iter().map(|&q| basis.rotation(q)));
        translations.extend(pose.translations.iter().map(|&t| basis.position(t)));
    }
    (
        Motion::uniform(raw.frame_time, defs.len(), rotations, translations),
        turned,
        moved,
    )
}

/// Says that the root's turn was taken from its hip joints, and in how many frames.
fn hip_turn_note(defs: &[JointDef], hip_turn: &HipTurn, frames: usize) -> String {
    format!(
        "{}: the pelvis' turn, shared out between them in {frames} frames, is moved into the \
         root (every joint stays where the file puts it)",
        hip_turn.describe(defs)
    )
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::*;
    use super::*;
    use glam::EulerRot;

    #[test]
    fn parse_rejects_duplicate_joint_names() {
        let msg = error(&good_with(6, "  JOINT Hips"));
        assert_eq!(msg, "bad.bvh: joint name `Hips` is used twice");
    }

    // --- Channels --------------------------------------------------------------------

    #[test]
    fn rotation_channels_multiply_in_the_listed_order() {
        let (a, b, c) = (10.0f32, 20.0f32, 30.0f32);
        let cases = [
            ("Zrotation Xrotation Yrotation", EulerRot::ZXY),
            ("Zrotation Yrotation Xrotation", EulerRot::ZYX),
            ("Xrotation Yrotation Zrotation", EulerRot::XYZ),
            ("Yrotation Xrotation Zrotation", EulerRot::YXZ),
            ("Xrotation Zrotation Yrotation", EulerRot::XZY),
            ("Yrotation Zrotation Xrotation", EulerRot::YZX),
            ("zROTATION xrotation YROTATION", EulerRot::ZXY),
        ];
        for (channels, order) in cases {
            let rig = rig(&one_joint(channels, &format!("{a} {b} {c}")));
            let got = motion(&rig).frame(0).rotations[0];
            let want = Quat::from_euler(order, a.to_radians(), b.to_radians(), c.to_radians());
            assert!(same_rotation(got, want), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn zxy_turns_a_vector_about_y_first() {
        let rig = rig(&one_joint("Zrotation Xrotation Yrotation", "90 90 90"));
        let q = motion(&rig).frame(0).rotations[0];
        let angle = 90f32.to_radians();
        let rz = Quat::from_rotation_z(angle);
        let rx = Quat::from_rotation_x(angle);
        let ry = Quat::from_rotation_y(angle);
        let v = Vec3::new(1.0, 2.0, 3.0);
        assert!((q * v).abs_diff_eq(rz * (rx * (ry * v)), 1e-5));
    }

    #[test]
    fn fewer_than_three_rotation_channels_are_fine() {
        let cases = [
            ("Yrotation", "90", Quat::from_rotation_y(90f32.to_radians())),
            (
                "Xrotation Zrotation",
                "30 60",
                Quat::from_rotation_x(30f32.to_radians())
                    * Quat::from_rotation_z(60f32.to_radians()),
            ),
            ("", "", Quat::IDENTITY),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let got = motion(&rig).frame(0).rotations[0];
            assert!(same_rotation(got, want), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn position_channels_replace_the_offset_components() {
        let cases = [
            (
                "Xposition Yposition Zposition",
                "7 8 9",
                Vec3::new(7.0, 8.0, 9.0),
            ),
            ("Yposition", "8", Vec3::new(1.0, 8.0, 3.0)),
            ("Zposition Xposition", "9 7", Vec3::new(7.0, 2.0, 9.0)),
            (
                "Xrotation Yrotation Zrotation",
                "0 0 0",
                Vec3::new(1.0, 2.0, 3.0),
            ),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let got = motion(&rig).frame(0).translations[0];
            assert!(got.abs_diff_eq(want, 1e-6), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn six_channel_roots_read_position_then_rotation_in_any_order() {
        let (a, b, c) = (10f32.to_radians(), 20f32.to_radians(), 30f32.to_radians());
        let cases = [
            (
                "Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                "4 5 6 10 20 30",
                Quat::from_euler(EulerRot::ZYX, a, b, c),
            ),
            (
                "Xposition Yposition Zposition Zrotation Xrotation Yrotation",
                "4 5 6 10 20 30",
                Quat::from_euler(EulerRot::ZXY, a, b, c),
            ),
            (
                "Zrotation Xposition Xrotation Yposition Yrotation Zposition",
                "10 4 20 5 30 6",
                Quat::from_euler(EulerRot::ZXY, a, b, c),
            ),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let frame = motion(&rig).frame(0);
            assert!(frame.translations[0].abs_diff_eq(Vec3::new(4.0, 5.0, 6.0), 1e-6));
            assert!(same_rotation(frame.rotations[0], want), "{channels}");
        }
    }

    #[test]
    fn each_joint_takes_its_own_channels_from_the_frame() {
        let good = rig(GOOD);
        let m = motion(&good);
        assert_eq!(m.frame_count(), 2);
        assert!((m.times()[1] - 0.0333333).abs() < 1e-7);
        let frame = m.frame(1);
        // Hips: 6 channels (1 90 0 | 0 0 0); Spine: 3 channels, keeps its offset.
        assert!(frame.translations[0].abs_diff_eq(Vec3::new(1.0, 90.0, 0.0), 1e-6));
        assert!(same_rotation(frame.rotations[0], Quat::IDENTITY));
        assert!(frame.translations[1].abs_diff_eq(Vec3::new(0.0, 10.0, 0.0), 1e-6));

        let turned = rig(&good_with(20, "1 90 0 0 0 0 90 0 0"));
        let frame = motion(&turned).frame(1);
        assert!(same_rotation(
            frame.rotations[1],
            Quat::from_rotation_z(90f32.to_radians())
        ));
    }

    #[test]
    fn zero_position_channels_with_a_nonzero_offset_are_noted() {
        let with_positions = |spine: &str| {
            good_with(
                9,
                "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
            )
            .replace("0 90 0 0 0 0 0 0 0", &format!("0 90 0 0 0 0 {spine}"))
            .replace("1 90 0 0 0 0 0 0 0", &format!("1 90 0 0 0 0 {spine}"))
        };
        let zero = rig(&with_positions("0 0 0 0 0 0"));
        assert_eq!(zero.notes.len(), 1, "{:?}", zero.notes);
        assert!(zero.notes[0].starts_with("joint `Spine` has position channels that are 0"));
        let spine = motion(&zero).frame(0).translations[1];
        let rest = zero.skeleton.joints()[1].rest.translation;
        assert_eq!(spine, rest, "all-zero positions keep OFFSET");

        let offset = rig(&with_positions("0 10 0 0 0 0"));
        assert!(offset.notes.is_empty(), "{:?}", offset.notes);
    }

    #[test]
    fn a_first_frame_lying_down_is_noted() {
        let lying = good_with(19, "0 0 0 0 90 0 0 0 0");
        let rig = rig(&lying);
        assert_eq!(
            rig.notes,
            [
                "the first frame is 0.00 m tall, the rest pose 20.00 m: the motion may lie down \
              or have +Z up (set the up axis to override)"
            ]
        );
    }

    // --- Units and axes --------------------------------------------------------------

    /// A figure standing `height` units tall along Y (or Z), with one frame that moves
    /// the root to `(10, 20, 30)` and turns it 90° about the file's up axis.
    fn figure(height: f32, up: UpAxis) -> String {
        let (up_offset, turn) = match up {
            UpAxis::Y => (format!("0 {height} 0"), "Yrotation"),
            UpAxis::Z => (format!("0 0 {height}"), "Zrotation"),
        };
        format!(
            "HIERARCHY\nROOT Hips\n{{\nOFFSET 0 0 0\nCHANNELS 4 Xposition Yposition Zposition {turn}\n\
             JOINT Head\n{{\nOFFSET {up_offset}\nEnd Site\n{{\nOFFSET 0 0 0\n}}\n}}\n}}\n\
             MOTION\nFrames: 1\nFrame Time: 0.01\n10 20 30 90\n"
        )
    }

    #[test]
    fn a_z_up_file_becomes_y_up() {
        let rig = guessed(&figure(175.0, UpAxis::Z));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.75, 0.0), 1e-5), "{head}");
        assert!(
            rig.notes[0].starts_with("up axis: +Z (guessed"),
            "{:?}",
            rig.notes
        );
        let frame = motion(&rig).frame(0);
        // File (x, y, z) is internal (x, z, -y).
        assert!(frame.translations[0].abs_diff_eq(Vec3::new(0.1, 0.3, -0.2), 1e-5));
        let turn = Quat::from_rotation_y(90f32.to_radians());
        assert!(same_rotation(frame.rotations[0], turn));
    }

    #[test]
    fn centimetres_are_guessed_and_become_metres() {
        let rig = guessed(&figure(175.0, UpAxis::Y));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.75, 0.0), 1e-5), "{head}");
        assert_eq!(
            rig.notes,
            ["units: centimetres (guessed from a 175 cm figure)"]
        );
        let root = motion(&rig).frame(0).translations[0];
        assert!(root.abs_diff_eq(Vec3::new(0.1, 0.2, 0.3), 1e-5));
    }

    #[test]
    fn unrecognised_units_are_scaled_to_a_person_and_said_so() {
        let rig = guessed(&figure(30.0, UpAxis::Y));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.7, 0.0), 1e-5), "{head}");
        assert_eq!(
            rig.notes,
            [
                "units not recognised (figure is 30.00 units tall); scaled to 1.70 m (0.0567 m per unit)"
            ]
        );
    }

    #[test]
    fn a_figure_with_no_height_is_said_to_give_no_guess_once() {
        // A chain lying along +X: no height to guess the units from.
        let text = "HIERARCHY\nROOT A\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  \
                    JOINT B\n  {\n    OFFSET 10 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    \
                    End Site\n    {\n      OFFSET 10 0 0\n    }\n  }\n}\nMOTION\nFrames: 1\n\
                    Frame Time: 0.0333333\n0 0 0 0 0 0\n";
        let rig = parse(text, Path::new("flat.bvh"), &LoadOptions::default()).unwrap();
        let units: Vec<&String> = rig.notes.iter().filter(|n| n.contains("units")).collect();
        assert_eq!(
            units,
            ["cannot tell the units; assumed metres"],
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn options_override_the_guesses() {
        let options = LoadOptions {
            units: Some(Units::Millimetres),
            up: Some(UpAxis::Y),
            rest_from: None,
        };
        let rig = parse(&figure(175.0, UpAxis::Z), Path::new("a.bvh"), &options).unwrap();
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 0.0, 0.175), 1e-6), "{head}");
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }
}
