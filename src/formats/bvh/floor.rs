//! A take whose figure stands below the file's origin. Kinect recordings and poses
//! estimated from video put the pelvis at the origin, with the feet a leg's length
//! under it. Hips motion is read against the origin (as every player reads it), so
//! played as it is such a take sinks an avatar's hips to the floor and its legs
//! through it. When the take stands below the origin (the lowest point of its
//! median frame, any joint or end site the figure can stand on, `Skeleton::
//! floor_ends`, is farther below the origin than `BELOW_SHARE` of the figure's
//! height), the root is lifted in every frame so that the take's lowest point over
//! every frame is on the floor. Captures whose feet go a few centimetres through
//! their floor stay as they are, and so do takes that stand on the origin and go
//! below it only for a while: a walk on uneven ground stepping down into a dip, a
//! dancer's glitch throwing a foot through the floor (lifting those by their lowest
//! point would float every other frame above the floor). Pure: the converted
//! skeleton and motion in, the lifted motion and the note out.

use glam::Vec3;

use crate::formats::Motion;
use crate::skeleton::Skeleton;

/// How far below the origin, as a share of the figure's rest height, a take's lowest
/// point may reach and still stand on the origin: a capture's toes through its floor
/// by a few centimetres, never a leg's length.
const BELOW_SHARE: f32 = 0.1;

/// Lifts every frame's root so the take's lowest point is on the floor, when its
/// median frame's lowest point is farther below the origin than `BELOW_SHARE` of the
/// rest figure's height (internal space, +Y up); returns the note that says how far.
/// `None` leaves the take as it is.
pub(super) fn lift_onto_floor(skeleton: &Skeleton, motion: &mut Motion) -> Option<String> {
    let points = skeleton.floor_points();
    let heights = |world: &[glam::Affine3A]| {
        points
            .iter()
            .zip(world)
            .flat_map(|(points, w)| points.at(w).map(|p| p.y))
            .collect::<Vec<f32>>()
    };
    let rest = heights(&skeleton.rest_world());
    let top = rest.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let bottom = rest.iter().copied().fold(f32::INFINITY, f32::min);
    let height = top - bottom;
    let mut per_frame: Vec<f32> = motion
        .frames()
        .map(|f| {
            heights(&skeleton.world_transforms(f.rotations, f.translations))
                .into_iter()
                .fold(f32::INFINITY, f32::min)
        })
        .collect();
    let lowest = per_frame.iter().copied().fold(f32::INFINITY, f32::min);
    if !(height.is_finite() && height > 0.0 && lowest.is_finite()) {
        return None;
    }
    // The lower median: of two frames, the lower one.
    per_frame.sort_by(f32::total_cmp);
    let median = per_frame[(per_frame.len() - 1) / 2];
    if median >= -BELOW_SHARE * height {
        return None;
    }
    let lift = -lowest;
    for (joint, j) in skeleton.joints().iter().enumerate() {
        if j.parent.is_none() {
            motion.translate_joint(joint, Vec3::Y * lift);
        }
    }
    Some(format!(
        "floor: the take reaches {lift:.3} m below the file's origin (a pelvis at the origin, \
         as Kinect recordings and poses estimated from video have it); every frame is lifted \
         {lift:.3} m so that its lowest point is on the floor"
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{guessed, motion};
    use crate::formats::Rig;

    /// A figure whose hips are at `hips` (y, cm) in every frame, the legs 90 cm long
    /// below them and the body 60 cm above; a second frame bends the left knee.
    fn figure(hips: f32) -> String {
        let leg = |name: &str, x: f32| {
            format!(
                "  JOINT {name}Up\n  {{\n    OFFSET {x} 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT {name}Low\n    {{\n      OFFSET 0 -45 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      End Site\n      {{\n        OFFSET 0 -45 0\n      }}\n    }}\n  }}\n"
            )
        };
        format!(
            "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n{}{}  JOINT Chest\n  {{\n    OFFSET 0 30 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {{\n      OFFSET 0 30 0\n    }}\n  }}\n}}\nMOTION\nFrames: 2\nFrame Time: 0.0333333\n0 {hips} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n0 {hips} 10 0 0 0 0 0 0 40 0 0 0 0 0 0 0 0 0 0 0\n",
            leg("L", 10.0),
            leg("R", -10.0),
        )
    }

    /// The lowest joint or end site over every frame, and the hips' height in frame 0
    /// (metres).
    fn lowest_and_hips(rig: &Rig) -> (f32, f32) {
        let m = motion(rig);
        let mut lowest = f32::INFINITY;
        for f in m.frames() {
            let world = rig.skeleton.world_transforms(f.rotations, f.translations);
            for (j, w) in rig.skeleton.joints().iter().zip(&world) {
                lowest = lowest.min(w.translation.y);
                if let Some(e) = j.end {
                    lowest = lowest.min(w.transform_point3(e).y);
                }
            }
        }
        let f = m.frame(0);
        let hips = rig.skeleton.world_transforms(f.rotations, f.translations)[0]
            .translation
            .y;
        (lowest, hips)
    }

    #[test]
    fn a_take_with_its_pelvis_at_the_origin_is_lifted_onto_the_floor() {
        let rig = guessed(&figure(0.0));
        let (lowest, hips) = lowest_and_hips(&rig);
        assert!(lowest.abs() < 1e-5, "lowest point {lowest}");
        assert!((hips - 0.9).abs() < 1e-5, "hips at {hips}");
        assert!(
            rig.notes.iter().any(|n| n.contains("lifted 0.900 m")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_foot_end_site_copying_the_shin_does_not_lower_the_floor() {
        // Poser: each foot ends with the shin again, straight down from the ankle.
        // The ankles stand on the origin; the copied ends would put the floor a shin
        // lower and lift the take.
        let leg = |name: &str, x: f32| {
            format!(
                "  JOINT {name}Thigh\n  {{\n    OFFSET {x} 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT {name}Shin\n    {{\n      OFFSET 0 -40 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      JOINT {name}Foot\n      {{\n        OFFSET 0 -36 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n        End Site\n        {{\n          OFFSET 0 -36 0\n        }}\n      }}\n    }}\n  }}\n"
            )
        };
        let text = format!(
            "HIERARCHY\nROOT hip\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n{}{}  JOINT chest\n  {{\n    OFFSET 0 50 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {{\n      OFFSET 0 30 0\n    }}\n  }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 76 0 {}\n",
            leg("l", 10.0),
            leg("r", -10.0),
            "0 ".repeat(24)
        );
        let rig = guessed(&text);
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("floor:")),
            "{:?}",
            rig.notes
        );
        let m = motion(&rig);
        let f = m.frame(0);
        let hips = rig.skeleton.world_transforms(f.rotations, f.translations)[0]
            .translation
            .y;
        assert!((hips - 0.76).abs() < 1e-5, "hips at {hips}");
    }

    #[test]
    fn a_take_standing_on_its_origin_that_dips_below_it_for_a_while_is_left_alone() {
        // A walk on uneven ground: the feet on the origin in two frames of three, in
        // the third the whole figure 40 cm lower (stepping down into a dip). Its
        // lowest point is far below the origin, its median frame stands on it.
        let text = figure(90.0).replace("Frames: 2", "Frames: 3")
            + "0 50 20 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        let rig = guessed(&text);
        let (lowest, hips) = lowest_and_hips(&rig);
        assert!((lowest + 0.4).abs() < 1e-5, "lowest {lowest}");
        assert!((hips - 0.9).abs() < 1e-5, "hips at {hips}");
        assert!(
            !rig.notes.iter().any(|n| n.starts_with("floor:")),
            "{:?}",
            rig.notes
        );
    }

    #[test]
    fn a_take_standing_on_or_a_little_through_its_floor_is_left_alone() {
        // Feet on the floor, 3 cm through it, and 20 cm above it (a platform).
        for hips in [90.0f32, 87.0, 110.0] {
            let rig = guessed(&figure(hips));
            let (lowest, at) = lowest_and_hips(&rig);
            assert!(
                (at - hips / 100.0).abs() < 1e-5,
                "hips at {at}, want {hips} cm"
            );
            assert!(
                (lowest - (hips - 90.0) / 100.0).abs() < 1e-5,
                "lowest {lowest}"
            );
            assert!(
                !rig.notes.iter().any(|n| n.starts_with("floor:")),
                "{:?}",
                rig.notes
            );
        }
    }
}
