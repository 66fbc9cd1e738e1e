//! A take recorded with +Z up under a rest pose standing along +Y. Some exporters
//! (a 120 Hz capture with `Xrotation Yrotation Zrotation` on every joint) write the
//! skeleton's `OFFSET`s with +Y up and the motion in a world with +Z up: the root's
//! rotation carries the change of axis in every frame, its position channels are
//! world positions with the floor at Z = 0. Read with +Y up as the rest says, every
//! frame lies on its back, metres under the origin; setting the up axis cannot help,
//! as it would lay the rest down instead.
//!
//! The take is turned to +Y up (a quarter turn about X, a turn and no mirror, so
//! sides stay sides) when in nearly every frame the figure stands along +Z, hips
//! between feet and head, its lowest point on the floor Z = 0, unless it lies on a
//! floor Y = 0 instead (a figure lying on its floor keeps lying). One frame cannot
//! tell the two apart: a figure standing along +Z near Y = 0 has its lowest point
//! along Y there too. The take can: a floor is where the lowest point stays while
//! the figure moves. The figure lies on Y = 0 when its lowest point is there in more
//! than a few frames and stays on Y = 0 at least as steadily as on Z = 0.
//! Only the roots turn: the rest and every joint below keep their rotations. Pure:
//! the converted skeleton and motion (internal space, +Y up) in, the turned motion
//! and the note out.

use std::f32::consts::FRAC_PI_2;

use glam::{Quat, Vec3};

use crate::formats::Motion;
use crate::skeleton::Skeleton;

/// Share of the frames that must stand along +Z on the floor Z = 0.
const STANDING_SHARE: f32 = 0.9;
/// Share of the rest height within which a lowest point is on a floor at the origin.
const FLOOR_SHARE: f32 = 0.1;

/// How one frame's figure lies in internal space, as shares of the rest height.
struct Extent {
    min: Vec3,
    max: Vec3,
    root: Vec3,
}

impl Extent {
    /// Stands along +Z: as tall along Z as 0.7 of the rest and taller than along Y
    /// (a runner's stride reaches 0.7 of it), the hips above the lowest point and
    /// below the highest, the lowest point on Z = 0.
    fn stands_along_z(&self, height: f32) -> bool {
        let tall = self.max.z - self.min.z >= 0.7 * height;
        let thin = self.max.y - self.min.y < self.max.z - self.min.z;
        let hips =
            self.root.z - self.min.z >= 0.3 * height && self.max.z - self.root.z >= 0.2 * height;
        tall && thin && hips && self.min.z.abs() <= FLOOR_SHARE * height
    }

    /// Lies on a floor at Y = 0: its lowest point along Y there.
    fn on_y_floor(&self, height: f32) -> bool {
        self.min.y.abs() <= FLOOR_SHARE * height
    }
}

/// Turns every frame's roots from +Z up to +Y up when the take stands along +Z
/// (see the module header); returns the note that says so. `None` leaves the take
/// as it is.
pub(super) fn stand_take_up(skeleton: &Skeleton, motion: &mut Motion) -> Option<String> {
    let points = skeleton.floor_points();
    let extent = |world: &[glam::Affine3A]| {
        let mut min = Vec3::splat(f32::INFINITY);
        let mut max = Vec3::splat(f32::NEG_INFINITY);
        for (points, w) in points.iter().zip(world) {
            for p in points.at(w) {
                min = min.min(p);
                max = max.max(p);
            }
        }
        let root = skeleton
            .joints()
            .iter()
            .zip(world)
            .find(|(j, _)| j.parent.is_none())
            .map_or(Vec3::ZERO, |(_, w)| Vec3::from(w.translation));
        Extent { min, max, root }
    };
    let rest = extent(&skeleton.rest_world());
    let height = rest.max.y - rest.min.y;
    let frames = motion.frame_count();
    if !(height.is_finite() && height > 0.0) || frames == 0 {
        return None;
    }
    let (mut standing, mut lying) = (0usize, 0usize);
    let (mut lowest_y, mut lowest_z) = (Vec::with_capacity(frames), Vec::with_capacity(frames));
    for f in motion.frames() {
        let e = extent(&skeleton.world_transforms(f.rotations, f.translations));
        standing += usize::from(e.stands_along_z(height));
        lying += usize::from(e.on_y_floor(height));
        lowest_y.push(e.min.y);
        lowest_z.push(e.min.z);
    }
    let share = |n: usize| n as f32 / frames as f32;
    let lies_on_y_floor =
        share(lying) > 1.0 - STANDING_SHARE && spread(lowest_y) <= spread(lowest_z);
    if share(standing) < STANDING_SHARE || lies_on_y_floor {
        return None;
    }
    // +Z to +Y: a quarter turn about X.
    let turn = Quat::from_rotation_x(-FRAC_PI_2);
    let roots: Vec<bool> = skeleton
        .joints()
        .iter()
        .map(|j| j.parent.is_none())
        .collect();
    motion.map_joints(|joint, r, t| {
        if roots.get(joint).copied().unwrap_or(false) {
            (turn * r, turn * t)
        } else {
            (r, t)
        }
    });
    Some(format!(
        "up axis of the motion: +Z (the rest pose stands along +Y, but in {standing} of \
         {frames} frames the figure stands along +Z on a floor at Z = 0): every frame is \
         turned to +Y up about the origin"
    ))
}

/// How far a floor height wanders over the take: the range of the middle
/// `STANDING_SHARE` of the values (a jump or a stumble in the rest does not count).
fn spread(mut values: Vec<f32>) -> f32 {
    values.sort_by(f32::total_cmp);
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let cut = ((1.0 - STANDING_SHARE) / 2.0 * n as f32) as usize;
    let (low, high) = (values[cut.min(n - 1)], values[(n - 1).saturating_sub(cut)]);
    (high - low).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{guessed, motion};
    use crate::formats::Rig;

    /// A figure standing along +Y in its zero pose (legs 90 cm, body 60 cm, arms
    /// out); each frame is `root` (6 values: position, then Z X Y rotation) with every
    /// other joint at rest.
    fn figure(frames: &[&str]) -> String {
        let leg = |name: &str, x: f32| {
            format!(
                "  JOINT {name}UpLeg\n  {{\n    OFFSET {x} 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT {name}Leg\n    {{\n      OFFSET 0 -45 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      JOINT {name}Foot\n      {{\n        OFFSET 0 -40 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n        End Site\n        {{\n          OFFSET 0 -5 15\n        }}\n      }}\n    }}\n  }}\n"
            )
        };
        let arm = |name: &str, x: f32| {
            format!(
                "      JOINT {name}Arm\n      {{\n        OFFSET {x} 0 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n        JOINT {name}ForeArm\n        {{\n          OFFSET {} 0 0\n          CHANNELS 3 Zrotation Xrotation Yrotation\n          JOINT {name}Hand\n          {{\n            OFFSET {} 0 0\n            CHANNELS 3 Zrotation Xrotation Yrotation\n            End Site\n            {{\n              OFFSET {} 0 0\n            }}\n          }}\n        }}\n      }}\n",
                x * 1.5,
                x * 1.5,
                x * 0.5
            )
        };
        let channels = 6 + 3 * 6 + 3 * 3 + 3 * 6;
        let rows: Vec<String> = frames
            .iter()
            .map(|root| format!("{root} {}", "0 ".repeat(channels - 6)))
            .collect();
        format!(
            "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n{}{}  JOINT Spine\n  {{\n    OFFSET 0 30 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT Chest\n    {{\n      OFFSET 0 20 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n{}{}      JOINT Head\n      {{\n        OFFSET 0 10 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n        End Site\n        {{\n          OFFSET 0 15 0\n        }}\n      }}\n    }}\n  }}\n}}\nMOTION\nFrames: {}\nFrame Time: 0.0333333\n{}\n",
            leg("Left", 10.0),
            leg("Right", -10.0),
            arm("Left", 15.0),
            arm("Right", -15.0),
            frames.len(),
            rows.join("\n")
        )
    }

    /// Whether a note of `rig` starts with `prefix`.
    fn noted(rig: &Rig, prefix: &str) -> bool {
        rig.notes.iter().any(|n| n.starts_with(prefix))
    }

    /// The root's and the head's heights (internal +Y, metres) in every frame.
    fn heights(rig: &Rig) -> Vec<(f32, f32)> {
        let m = motion(rig);
        let head = rig
            .skeleton
            .joints()
            .iter()
            .position(|j| j.name == "Head")
            .expect("a head");
        m.frames()
            .map(|f| {
                let w = rig.skeleton.world_transforms(f.rotations, f.translations);
                (w[0].translation.y, w[head].translation.y)
            })
            .collect()
    }

    #[test]
    fn a_take_standing_along_z_under_a_y_up_rest_is_stood_up() {
        // The root turned a quarter about X (+Y to +Z), walking along Y far from the
        // origin, hips 90 cm above the floor Z = 0.
        let rig = guessed(&figure(&[
            "0 -300 90 0 90 0",
            "0 -250 91 0 90 0",
            "5 -200 90 0 90 10",
        ]));
        for (hips, head) in heights(&rig) {
            assert!((hips - 0.9).abs() < 0.02, "hips at {hips}");
            assert!(head > hips + 0.5, "head at {head}, hips {hips}");
        }
        assert!(noted(&rig, "up axis of the motion: +Z"), "{:?}", rig.notes);
        assert!(!noted(&rig, "floor:"), "{:?}", rig.notes);
    }

    #[test]
    fn a_figure_lying_on_its_floor_keeps_lying() {
        // Lying on its back on the floor Y = 0, head towards +Z: it stands along +Z
        // too, with its feet on Z = 0, but it lies on a floor at the origin.
        let rig = guessed(&figure(&["0 10 90 0 90 0", "0 10 92 0 90 0"]));
        for (hips, head) in heights(&rig) {
            assert!((hips - 0.1).abs() < 0.02, "hips at {hips}");
            assert!((head - hips).abs() < 0.2, "head at {head}, hips {hips}");
        }
        assert!(!noted(&rig, "up axis of the motion"), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_standing_along_z_about_y_0_is_stood_up() {
        // Standing along +Z on the floor Z = 0 and stepping about the origin: its
        // lowest point along Y (the toes, 15 cm ahead) is near Y = 0 in every frame,
        // as a figure lying on a floor Y = 0 would have it, but it wanders there while
        // the feet stay on Z = 0.
        let rig = guessed(&figure(&[
            "0 5 90 0 90 0",
            "3 -8 90 0 90 5",
            "6 12 90 0 90 -5",
            "2 0 90 0 90 0",
            "-4 -12 90 0 90 10",
        ]));
        for (hips, head) in heights(&rig) {
            assert!((hips - 0.9).abs() < 0.02, "hips at {hips}");
            assert!(head > hips + 0.5, "head at {head}, hips {hips}");
        }
        assert!(noted(&rig, "up axis of the motion: +Z"), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_standing_along_y_is_left_alone() {
        let rig = guessed(&figure(&["0 90 0 0 0 0", "10 90 5 0 0 0"]));
        for (hips, _) in heights(&rig) {
            assert!((hips - 0.9).abs() < 1e-4, "hips at {hips}");
        }
        assert!(!noted(&rig, "up axis of the motion"), "{:?}", rig.notes);
    }
}
