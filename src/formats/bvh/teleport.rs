//! Frames the root teleports to. Motion decoded from video (ShaderMotion) starts
//! with a few garbage frames, the root kilometres away and every joint spun, and
//! lost tracking writes such frames too. A jump of the root between two frames
//! farther than `JUMP_SIZES` times the figure's size is no motion a body makes, at
//! any frame rate; such jumps split the take into stretches, and when the longest
//! holds at least half the take, the frames outside it hold its nearest frame
//! (every channel), so that a
//! clip, its hips' travel and its floor are the take's. Pure: file values in, file
//! values out, and the note that says which frames.

use super::hierarchy::{Axis, Channel, JointDef};
use super::motion::RawMotion;
use crate::formats::frame_ranges::frame_ranges;

/// A root jump between two frames longer than this many figure sizes is a teleport.
const JUMP_SIZES: f32 = 10.0;

/// Replaces the frames outside the longest stretch between root teleports with the
/// nearest frame of it; `size` is the figure's size in file units (the largest side
/// of its bounding box). The note names the frames held, 1-based; `None` when the
/// root never teleports, has no position channels, the figure has no size or the
/// longest stretch is under half the take.
pub(super) fn hold_teleports(defs: &[JointDef], raw: &mut RawMotion, size: f32) -> Option<String> {
    let root = defs.first()?;
    let axes: Vec<(usize, usize)> = root
        .channels
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            Channel::Position(Axis::X) => Some((i, 0)),
            Channel::Position(Axis::Y) => Some((i, 1)),
            Channel::Position(Axis::Z) => Some((i, 2)),
            Channel::Rotation(_) => None,
        })
        .collect();
    let width: usize = defs.iter().map(|d| d.channels.len()).sum();
    // A figure of no size (one joint, every offset zero) gives no yardstick.
    let sized = size.is_finite() && size > 0.0;
    if !sized || axes.is_empty() || width == 0 || raw.values.len() < raw.frames * width {
        return None;
    }
    let at = |f: usize| {
        let mut p = root.file_offset();
        for &(i, axis) in &axes {
            p[axis] = raw.values[f * width + i];
        }
        p
    };
    let limit = JUMP_SIZES * size;
    // Stretches as [start, end) between teleports; the longest, the first on a tie.
    let mut stretches = vec![(0, 0)];
    for f in 1..raw.frames {
        if at(f).distance(at(f - 1)) > limit {
            stretches.push((f, f));
        }
        if let Some(last) = stretches.last_mut() {
            last.1 = f;
        }
    }
    if stretches.len() < 2 || raw.frames == 0 {
        return None;
    }
    let (start, end) = stretches
        .iter()
        .copied()
        .max_by(|a, b| (a.1 - a.0).cmp(&(b.1 - b.0)).then(b.0.cmp(&a.0)))?;
    // Glitches are the exception: a take jumping in most frames is read in other
    // units than its figure, or is no body's, and stays as it is.
    if 2 * (end - start + 1) < raw.frames {
        return None;
    }
    let far = (0..raw.frames)
        .filter(|&f| f < start || f > end)
        .map(|f| at(f).distance(at(f.clamp(start, end))))
        .fold(0.0f32, f32::max);
    let held: Vec<(usize, usize)> = stretches
        .iter()
        .copied()
        .filter(|&s| s != (start, end))
        .collect();
    for &(a, b) in &held {
        for f in a..=b {
            let from = f.clamp(start, end) * width;
            raw.values.copy_within(from..from + width, f * width);
        }
    }
    Some(format!(
        "frames {} put the root up to {far:.0} units from the take, a jump no body makes \
         between two frames: they hold the nearest frame of the take (frames {}-{})",
        frame_ranges(held.iter().flat_map(|&(a, b)| a..=b)),
        start + 1,
        end + 1
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{hips_and_spine, motion, rig};

    /// A hips-and-spine file, 20 units tall, whose hips stand at `xs` along X.
    fn walking(xs: &[f32]) -> String {
        let rows: Vec<String> = (xs.iter().enumerate())
            .map(|(i, x)| format!("{x} 10 0 {i} 0 0 0 0 0"))
            .collect();
        hips_and_spine(10.0, &rows)
    }

    #[test]
    fn frames_the_root_teleports_to_hold_the_nearest_frame_of_the_take() {
        // Frames 2-3 jump 5000 units away (250 figure sizes) and back, the last
        // frame 9000; the longest stretch (frames 4-7) is the take.
        let xs = [1.0, 5000.0, -5000.0, 1.0, 2.0, 3.0, 4.0, 9000.0];
        let rig = rig(&walking(&xs));
        let m = motion(&rig);
        let hips_x: Vec<f32> = (0..xs.len())
            .map(|f| m.frame(f).translations[0].x)
            .collect();
        assert_eq!(hips_x, [1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0]);
        // Every channel is held, the rotations too.
        assert!(m.frame(1).rotations[0].abs_diff_eq(m.frame(3).rotations[0], 1e-6));
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("frames 1-3, 8 put the root up to 8996 units")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_take_jumping_in_most_frames_is_left_as_it_is() {
        // Positions in other units than the offsets: every frame a "teleport".
        let xs: Vec<f32> = (0..10).map(|f| 1000.0 * f as f32).collect();
        let rig = rig(&walking(&xs));
        assert_eq!(motion(&rig).frame(9).translations[0].x, 9000.0);
        assert!(
            !rig.notes.iter().any(|n| n.contains("jump")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_take_that_travels_far_in_steps_a_body_makes_is_kept() {
        // 5 units a frame (a quarter of the figure) for 400 frames: 2000 units.
        let xs: Vec<f32> = (0..400).map(|f| 5.0 * f as f32).collect();
        let rig = rig(&walking(&xs));
        let m = motion(&rig);
        assert_eq!(m.frame(399).translations[0].x, 1995.0);
        assert!(
            !rig.notes.iter().any(|n| n.contains("jump")),
            "{:?}",
            rig.notes
        );
    }
}
