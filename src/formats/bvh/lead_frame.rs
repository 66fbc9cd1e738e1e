//! A first frame that is no frame of the take. Exporters write a reference pose
//! before the capture (iPi's zero pose, the T-pose that starts CMU's converted takes,
//! a dance dataset's all-zero frame at the origin): from it to frame 2 a joint turns
//! further than it ever turns between two frames of the take, which no body does in
//! one frame. The joint is measured against its own turns: another joint's noise (a
//! CMU thumb flipping 180° between frames all through a take) says nothing of it.
//! Played, it is a pop at the start of the clip and of every loop, and a jump in the
//! truth `eval-ik` measures against. Such a pose stands apart from the
//! take: a take that starts in fast motion (a limb swinging as the capture begins,
//! slowing over a few frames) turns about as far from frame 2 to 3 as from 1 to 2,
//! and its frame 1 is a frame of the take. A pose written before holds frame 2 (every
//! channel), as frames the root teleports to hold the take's (`teleport.rs`); the
//! rest pose is chosen before, so a reference T-pose may still be the rest
//! (`rest_frame.rs`). Pure: file values in, file values out, and the note that says so.
//!
//! Some exporters fade from the reference pose into the take over a few frames (CMU's
//! Daz-named conversions: 26%, 53%, 77% and 94% of the way in frames 2-5 at 120 Hz),
//! so frame 1 turns about as far to frame 2 as frame 2 to 3 and the single-frame test
//! above keeps it. A fade is told from a take starting in fast motion by what every
//! joint does: each that turns from frame 1 into the take has covered the same share of
//! its way in each frame of the fade, where a body's joints move each at its own time,
//! and the fade runs many times faster than the take ever turns. Frames 1 to the fade's
//! end hold the take's first frame.

use super::hierarchy::JointDef;
use super::motion::RawMotion;
use super::rest_frame::FilePose;

/// Least turn of a joint from frame 1 to frame 2, degrees, for frame 1 to be a pose
/// written before the take: fast limbs turn less than this in a frame at 30 fps.
const LEAD_TURN_DEG: f32 = 30.0;

/// How many times the joint's usual turn between two frames (its 99th percentile
/// over the take) the turn from frame 1 to frame 2 must be.
const LEAD_TIMES_USUAL: f32 = 3.0;

/// How many times the take's first step (the same joint's turn from frame 2 to frame
/// 3) the turn from frame 1 to frame 2 must be: a pose written before the take stands
/// apart from it (3.6 times at the least, 10 to 1800 times in the held-out takes),
/// where a take starting in fast motion goes on turning about as far (1.0 times).
const LEAD_TIMES_NEXT: f32 = 2.0;

/// Least turn of a joint from frame 1 to the take's first frame, degrees, for the
/// joint to tell whether the frames between fade: smaller turns are the take's own
/// motion as much as the fade's.
const FADE_JOINT_DEG: f32 = 15.0;

/// Least joints turning `FADE_JOINT_DEG` for frames to be read as a fade: one joint's
/// path says nothing of whether the body moves as one.
const FADE_JOINTS: usize = 3;

/// The take's first frame after a fade is within the file's first `FADE_FRAMES` (CMU's
/// Daz conversions: frame 6 at 120 Hz).
const FADE_FRAMES: usize = 8;

/// How far, as a share of the way, a joint may be from the frame's median share and
/// still move with the fade; and the share of the joints that must.
const FADE_SHARE_SPREAD: f32 = 0.1;
const FADE_AGREEING: f32 = 0.75;

/// A fade frame has covered less than this share of the way: one at the take's pose is
/// the take.
const FADE_UNDONE: f32 = 0.98;

/// Makes frame 1 hold frame 2 when frame 1 is a pose written before the take: the
/// joint turning furthest from it to frame 2 turns at least `LEAD_TURN_DEG`, more
/// than the take ever turns that joint between two frames, `LEAD_TIMES_USUAL` times
/// its usual turn and `LEAD_TIMES_NEXT` times its own first step in the take (frame 2
/// to 3). The note says how far; `None` for a take under three frames or one starting
/// with motion.
pub(super) fn hold_lead_frame(
    defs: &[JointDef],
    raw: &mut RawMotion,
    keep_offset: &[bool],
) -> Option<String> {
    let width: usize = defs.iter().map(|d| d.channels.len()).sum();
    if raw.frames < 3 || width == 0 || raw.values.len() < raw.frames * width {
        return None;
    }
    let poses: Vec<FilePose> = (0..raw.frames)
        .map(|f| FilePose::frame(defs, raw, keep_offset, f))
        .collect();
    let turn = |from: usize, joint: usize| {
        poses[from].rotations[joint].angle_between(poses[from + 1].rotations[joint])
    };
    // The joint that turns furthest from frame 1, and its own turns between the
    // take's frames (radians): another joint's steps say nothing about whether this
    // one jumped.
    let leader = (0..defs.len()).max_by(|&a, &b| turn(0, a).total_cmp(&turn(0, b)))?;
    let lead = turn(0, leader);
    let later: Vec<f32> = (1..raw.frames - 1).map(|f| turn(f, leader)).collect();
    let next = later[0];
    let most = later.iter().copied().fold(0.0f32, f32::max);
    let mut sorted = later.clone();
    sorted.sort_by(f32::total_cmp);
    let usual = sorted[((sorted.len() - 1) as f32 * 0.99).round() as usize];
    let lead_deg = lead.to_degrees();
    if !(lead_deg >= LEAD_TURN_DEG
        && lead > most
        && lead >= LEAD_TIMES_USUAL * usual
        && lead >= LEAD_TIMES_NEXT * next)
    {
        return hold_fade(defs, raw, &poses, width);
    }
    raw.values.copy_within(width..2 * width, 0);
    Some(format!(
        "frame 1 turns `{}` {lead_deg:.0}° from frame 2, where the take turns it at most \
         {:.0}° between two frames: it is a pose written before the capture (a reference or \
         T-pose), no frame of the take, and holds frame 2",
        defs[leader].name,
        most.to_degrees()
    ))
}

/// Makes frames 1 to `end` hold frame `end + 1` when frame 1 is a pose written before
/// the take and the frames after it fade from it into the take: at least `FADE_JOINTS`
/// joints turn `FADE_JOINT_DEG` or more from frame 1 to the take's first frame, in each
/// frame between `FADE_AGREEING` of them have covered within `FADE_SHARE_SPREAD` of one
/// share of their way, a share growing each frame and short of `FADE_UNDONE`, and the
/// joint turning furthest turns, a frame on average, `LEAD_TURN_DEG` at least in all,
/// more than the take ever turns it between two frames and `LEAD_TIMES_USUAL` times its
/// usual turn. The longest such fade within `FADE_FRAMES`; the note gives the shares.
fn hold_fade(
    defs: &[JointDef],
    raw: &mut RawMotion,
    poses: &[FilePose],
    width: usize,
) -> Option<String> {
    let frames = poses.len();
    // `take` is the take's first frame (0-based): frames 1..take fade into it.
    let (take, shares, leader, pace, most) = (2..FADE_FRAMES.min(frames.saturating_sub(2)))
        .rev()
        .find_map(|take| fade_into(poses, take))?;
    let later: Vec<f32> = (take..frames - 1)
        .map(|f| poses[f].rotations[leader].angle_between(poses[f + 1].rotations[leader]))
        .collect();
    let take_most = later.iter().copied().fold(0.0f32, f32::max);
    let mut sorted = later;
    sorted.sort_by(f32::total_cmp);
    let usual = sorted[((sorted.len() - 1) as f32 * 0.99).round() as usize];
    if !(most.to_degrees() >= LEAD_TURN_DEG && pace > take_most && pace >= LEAD_TIMES_USUAL * usual)
    {
        return None;
    }
    for f in 0..take {
        raw.values
            .copy_within(take * width..(take + 1) * width, f * width);
    }
    let shares: Vec<String> = shares
        .iter()
        .map(|s| format!("{:.0}%", s * 100.0))
        .collect();
    Some(format!(
        "frames 1-{take} fade from a pose written before the capture (frame 1, a reference \
         or T-pose) into the take: every joint turning from it has covered {} of its way in \
         frames 2-{take}, `{}` {:.0}° a frame where the take turns it at most {:.0}°; they \
         hold frame {}",
        shares.join(", "),
        defs[leader].name,
        pace.to_degrees(),
        take_most.to_degrees(),
        take + 1
    ))
}

/// Whether frames `1..take` (0-based) fade from frame 0 into frame `take`: the share of
/// its way each covers (the median over the joints turning `FADE_JOINT_DEG`), the joint
/// turning furthest, its turn a frame on average and in all (radians).
fn fade_into(poses: &[FilePose], take: usize) -> Option<(usize, Vec<f32>, usize, f32, f32)> {
    let first = &poses[0].rotations;
    let way: Vec<f32> = (first.iter().zip(&poses[take].rotations))
        .map(|(a, b)| a.angle_between(*b))
        .collect();
    let joints: Vec<usize> = (0..way.len())
        .filter(|&j| way[j].to_degrees() >= FADE_JOINT_DEG)
        .collect();
    if joints.len() < FADE_JOINTS {
        return None;
    }
    let mut shares = Vec::with_capacity(take - 1);
    for pose in &poses[1..take] {
        let mut covered: Vec<f32> = (joints.iter())
            .map(|&j| first[j].angle_between(pose.rotations[j]) / way[j])
            .collect();
        covered.sort_by(f32::total_cmp);
        let median = covered[covered.len() / 2];
        let agreeing = (covered.iter())
            .filter(|c| (*c - median).abs() <= FADE_SHARE_SPREAD)
            .count();
        let grows = shares.last().is_none_or(|&last| median > last);
        if !(grows
            && median < FADE_UNDONE
            && agreeing as f32 >= FADE_AGREEING * covered.len() as f32)
        {
            return None;
        }
        shares.push(median);
    }
    let leader = *joints.iter().max_by(|&&a, &&b| way[a].total_cmp(&way[b]))?;
    Some((take, shares, leader, way[leader] / take as f32, way[leader]))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{hips_and_spine, motion, rig};
    use crate::formats::Rig;

    /// A hips-and-spine file whose spine bends `bends` degrees about X, one frame
    /// each, the hips walking along X.
    fn bending(bends: &[f32]) -> String {
        let rows: Vec<String> = (bends.iter().enumerate())
            .map(|(i, bend)| format!("{} 1 0 0 0 0 0 {bend} 0", i as f32 * 0.02))
            .collect();
        hips_and_spine(0.5, &rows)
    }

    fn spine_bends(bends: &[f32]) -> (Vec<f32>, Vec<String>) {
        let rig = rig(&bending(bends));
        let m = motion(&rig);
        let got = (0..bends.len())
            .map(|f| {
                let (axis, angle) = m.frame(f).rotations[1].to_axis_angle();
                (axis.x.signum() * angle).to_degrees()
            })
            .collect();
        (got, rig.notes)
    }

    #[test]
    fn a_reference_pose_before_the_take_holds_its_first_frame() {
        // Frame 1 stands straight (the zero pose); the take bends the spine 40-44°
        // and moves it 1° a frame.
        let (got, notes) = spine_bends(&[0.0, 40.0, 41.0, 42.0, 43.0, 44.0]);
        assert!((got[0] - 40.0).abs() < 0.01, "{got:?}");
        assert!((got[1] - 40.0).abs() < 0.01, "{got:?}");
        assert!((got[5] - 44.0).abs() < 0.01, "{got:?}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with(
                "frame 1 turns `Spine` 40° from frame 2, where the take turns it at most 1°"
            ),
            "{notes:?}"
        );
    }

    /// A take whose spine jumps 90° from a reference pose in frame 1, then bends 0.1°
    /// a frame, while the hips turn `hips(frame)` degrees: the spine's frame-1 bend
    /// as read (degrees) and the notes.
    fn spine_jump_beside_hips(hips: impl Fn(usize) -> f32) -> (f32, Vec<String>) {
        let rows: Vec<String> = (0..200)
            .map(|i| {
                let bend = if i == 0 { 90.0 } else { 0.1 * i as f32 };
                format!("{} 1 0 0 {} 0 0 {bend} 0", i as f32 * 0.02, hips(i))
            })
            .collect();
        let rig = rig(&hips_and_spine(0.5, &rows));
        let (_, angle) = motion(&rig).frame(0).rotations[1].to_axis_angle();
        (angle.to_degrees(), rig.notes)
    }

    #[test]
    fn a_reference_pose_is_told_by_its_own_joint_whatever_another_does_next() {
        // The hips turn 50° at once from frame 2 to 3 (a fast first step of another
        // joint) and hold: the spine's own next step is what its jump stands apart from.
        let (bend, notes) = spine_jump_beside_hips(|i| if i >= 2 { 50.0 } else { 0.0 });
        assert!((bend - 0.1).abs() < 0.01, "{bend}");
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("frame 1 turns `Spine` 90°")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_reference_pose_is_told_apart_from_another_joints_flips_all_through_the_take() {
        // The hips flip 180° and back every frame of the take (a CMU thumb's noise):
        // the take's largest turns are the hips', the spine's own are what its jump
        // stands apart from.
        let (bend, notes) =
            spine_jump_beside_hips(|i| if i >= 2 && i % 2 == 0 { 180.0 } else { 0.0 });
        assert!((bend - 0.1).abs() < 0.01, "{bend}");
        assert!(
            notes.iter().any(|n| n.starts_with(
                "frame 1 turns `Spine` 90° from frame 2, where the take turns it at most 0°"
            )),
            "{notes:?}"
        );
    }

    #[test]
    fn a_take_that_starts_in_fast_motion_keeps_its_first_frame() {
        // The spine swings 40° then 39° and 21° a frame as the capture begins, then
        // moves 0.1° a frame for 200 frames: the first step is the take's largest
        // and many times its usual one, but the next goes on almost as far.
        let mut bends = vec![0.0, 40.0, 79.0, 100.0];
        bends.extend((1..=200).map(|i| 100.0 + 0.1 * i as f32));
        let (got, notes) = spine_bends(&bends);
        assert!(got[0].abs() < 0.01, "{:?}", &got[..4]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// A body of three joints (a spine and two arms on the hips), each turning about X
    /// (the spine) or Z (the arms), one frame per `(spine, left, right)`, degrees.
    fn body(turns: &[(f32, f32, f32)]) -> Rig {
        let mut text = String::from(
            "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition \
             Zposition Zrotation Xrotation Yrotation\n",
        );
        for (name, x) in [("Spine", 0.0), ("LeftArm", 0.2), ("RightArm", -0.2)] {
            text += &format!(
                "  JOINT {name}\n  {{\n    OFFSET {x} 0.5 0\n    CHANNELS 3 Zrotation \
                 Xrotation Yrotation\n    End Site\n    {{\n      OFFSET 0 0.5 0\n    }}\n  }}\n"
            );
        }
        text += &format!(
            "}}\nMOTION\nFrames: {}\nFrame Time: 0.0083333\n",
            turns.len()
        );
        for (i, (spine, left, right)) in turns.iter().enumerate() {
            text += &format!(
                "{} 1 0 0 0 0  0 {spine} 0  {left} 0 0  {right} 0 0\n",
                i as f32 * 0.01
            );
        }
        rig(&text)
    }

    /// Each joint's turn in frame `f` as read, degrees about its axis.
    fn turns_read(rig: &Rig, f: usize) -> [f32; 3] {
        let rotations = &motion(rig).frame(f).rotations;
        [1, 2, 3].map(|j| {
            let (axis, angle) = rotations[j].to_axis_angle();
            (axis.x + axis.z).signum() * angle.to_degrees()
        })
    }

    #[test]
    fn a_reference_pose_fading_into_the_take_holds_the_takes_first_frame() {
        // Frame 1 is the zero pose; frames 2-5 cross-fade into the take (26%,
        // 53%, 77%, 94% of each joint's pose), which from frame 6 bends the spine from
        // 40°, the arms from -60° and 50°, a fraction of a degree a frame.
        let take = |f: usize| {
            let t = (f as f32 - 5.0).max(0.0);
            (40.0 + 0.2 * t, -60.0 + 0.3 * t, 50.0 - 0.25 * t)
        };
        let weights = [0.0, 0.26, 0.53, 0.77, 0.94];
        let turns: Vec<(f32, f32, f32)> = (0..80)
            .map(|f| {
                let (s, l, r) = take(f);
                let w = weights.get(f).copied().unwrap_or(1.0);
                (w * s, w * l, w * r)
            })
            .collect();
        let rig = body(&turns);
        let first = turns_read(&rig, 5);
        for f in 0..5 {
            let read = turns_read(&rig, f);
            assert!(
                read.iter().zip(first).all(|(a, b)| (a - b).abs() < 0.01),
                "frame {f}: {read:?} against {first:?}"
            );
        }
        assert!((turns_read(&rig, 6)[0] - 40.2).abs() < 0.01);
        assert_eq!(rig.notes.len(), 1, "{:?}", rig.notes);
        assert!(
            rig.notes[0].starts_with(
                "frames 1-5 fade from a pose written before the capture (frame 1, a reference \
                 or T-pose) into the take: every joint turning from it has covered 26%, 53%, \
                 77%, 94% of its way in frames 2-5, `LeftArm` 12° a frame where the take turns \
                 it at most 0°; they hold frame 6"
            ),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_body_turning_as_one_at_the_takes_own_pace_keeps_its_first_frames() {
        // Every joint turns 4° a frame from the zero pose all through the take: each
        // covers the same share of its way, but no faster than the take goes on.
        let turns: Vec<(f32, f32, f32)> = (0..60)
            .map(|f| {
                let d = 4.0 * f as f32;
                (d, -d, d)
            })
            .collect();
        let rig = body(&turns);
        assert!(turns_read(&rig, 0).iter().all(|t| t.abs() < 0.01));
        assert!((turns_read(&rig, 1)[0] - 4.0).abs() < 0.01);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_that_starts_moving_or_turns_as_far_later_keeps_its_first_frame() {
        let cases: [&[f32]; 3] = [
            // Fast from the start, as fast later.
            &[0.0, 12.0, 24.0, 36.0, 48.0],
            // A 40° pop at the start and another later: the take jumps so.
            &[0.0, 40.0, 41.0, 0.0, 1.0],
            // Two frames: nothing to compare the first step with.
            &[0.0, 40.0],
        ];
        for bends in cases {
            let (got, notes) = spine_bends(bends);
            assert!(got[0].abs() < 0.01, "{bends:?}: {got:?}");
            assert!(notes.is_empty(), "{bends:?}: {notes:?}");
        }
    }
}
