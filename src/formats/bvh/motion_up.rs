//! A take recorded with another up axis than its rest pose. Some exporters (a 120 Hz
//! capture with `Xrotation Yrotation Zrotation` on every joint) write the skeleton's
//! `OFFSET`s with +Y up and the motion in a world with +Z up: the root's rotation
//! carries the change of axis in every frame, its position channels are world
//! positions. Read with +Y up as the rest says, every frame lies on its back; setting
//! the up axis cannot help, as it would lay the rest down instead. The same turn on
//! the root of a skeleton written +Z up leaves the motion in a world with +Y up.
//!
//! The take is turned to the rest's up (a quarter turn about X, a turn and no mirror,
//! so sides stay sides) when in most frames (more than half: a cartwheel, a jump or a
//! squat leaves the others) the figure stands along the file's other axis, hips
//! between feet and head and turned head up (a take on its head would be stood on
//! it), its lowest point on one floor, unless it lies on a floor across the rest's
//! up instead (a figure lying on its floor keeps lying). One frame
//! cannot tell the two apart: a figure standing along +Z near Y = 0 has its lowest
//! point along Y there too. The take can: a floor is where the lowest point stays
//! while the figure moves. The floor the figure stands on is where its lowest point
//! is in the middle frame of them sorted by height: the origin when that is within a
//! tenth of the figure's height of it, else that height (a pelvis at the origin, as
//! video estimates write it). The figure lies across the rest's up when its lowest
//! point along that axis stays at least as steadily as along the other, and is at the
//! origin in more than a few frames or the floor it would stand on is off the origin
//! too (a take that does not move, such as one frame, keeps lying).
//! Only the roots turn: the rest and every joint below keep their rotations. Pure:
//! the converted skeleton and motion (internal space, +Y up) in, the turned motion
//! and the note out.

use std::f32::consts::{FRAC_PI_2, PI};

use glam::{Quat, Vec3};

use crate::formats::{Motion, UpAxis};
use crate::skeleton::Skeleton;

/// Share of the frames that must stand along the take's up on its floor: most.
const STANDING_SHARE: f32 = 0.5;
/// Share of the frames a floor holds the lowest point in: its height wanders over
/// the middle this share of the frames, and a floor across the rest's up holds the
/// figure when the figure is on it in more than the rest of the frames.
const STEADY_SHARE: f32 = 0.9;
/// Share of the rest height within which a lowest point is on a floor.
const FLOOR_SHARE: f32 = 0.1;

/// How one frame's figure lies, looked at with the take's candidate up along +Z and
/// the rest's up along +Y, as shares of the rest height.
struct Extent {
    min: Vec3,
    max: Vec3,
    root: Vec3,
    /// The root's up in the rest (+Y), turned as the root is in the frame.
    root_up: Vec3,
}

impl Extent {
    /// Stands along +Z: as tall along Z as 0.7 of the rest and taller than along Y
    /// (a runner's stride reaches 0.7 of it), the hips above the lowest point and
    /// below the highest and turned head up (its up along +Z, not a figure on its
    /// head), the lowest point on the floor at Z = `floor`.
    fn stands_along_z(&self, height: f32, floor: f32) -> bool {
        let tall = self.max.z - self.min.z >= 0.7 * height;
        let thin = self.max.y - self.min.y < self.max.z - self.min.z;
        let hips =
            self.root.z - self.min.z >= 0.3 * height && self.max.z - self.root.z >= 0.2 * height;
        let head_up = self.root_up.z > 0.0;
        head_up && tall && thin && hips && (self.min.z - floor).abs() <= FLOOR_SHARE * height
    }

    /// Lies on a floor at Y = 0: its lowest point along Y there.
    fn on_y_floor(&self, height: f32) -> bool {
        self.min.y.abs() <= FLOOR_SHARE * height
    }
}

/// Turns every frame's roots to the rest's up when the take stands along the file's
/// other axis (see the module header); returns the note that says so. `rest_up` is
/// the file's axis the zero-pose rest stands along. `None` leaves the take as it is.
pub(super) fn stand_take_up(
    skeleton: &Skeleton,
    motion: &mut Motion,
    rest_up: UpAxis,
) -> Option<String> {
    // The take's candidate up in internal space is +Z for a rest along the file's +Y
    // (the file's +Z); for a rest along +Z it is the file's +Y, internal -Z, looked
    // at turned half about Y. `turn` takes it to +Y.
    let (look, turn, take_axis, rest_axis) = match rest_up {
        UpAxis::Y => (Quat::IDENTITY, Quat::from_rotation_x(-FRAC_PI_2), 'Z', 'Y'),
        UpAxis::Z => (
            Quat::from_rotation_y(PI),
            Quat::from_rotation_x(FRAC_PI_2),
            'Y',
            'Z',
        ),
    };
    let points = skeleton.floor_points();
    let extent = |world: &[glam::Affine3A]| {
        let mut min = Vec3::splat(f32::INFINITY);
        let mut max = Vec3::splat(f32::NEG_INFINITY);
        for (points, w) in points.iter().zip(world) {
            for p in points.at(w) {
                let p = look * p;
                min = min.min(p);
                max = max.max(p);
            }
        }
        let (root, root_up) = skeleton
            .joints()
            .iter()
            .zip(world)
            .find(|(j, _)| j.parent.is_none())
            .map_or((Vec3::ZERO, Vec3::Y), |(_, w)| {
                (
                    look * Vec3::from(w.translation),
                    look * w.transform_vector3(Vec3::Y),
                )
            });
        Extent {
            min,
            max,
            root,
            root_up,
        }
    };
    let rest = extent(&skeleton.rest_world());
    let height = rest.max.y - rest.min.y;
    let frames = motion.frame_count();
    if !(height.is_finite() && height > 0.0) || frames == 0 {
        return None;
    }
    let extents: Vec<Extent> = motion
        .frames()
        .map(|f| extent(&skeleton.world_transforms(f.rotations, f.translations)))
        .collect();
    let lowest_y: Vec<f32> = extents.iter().map(|e| e.min.y).collect();
    let lowest_z: Vec<f32> = extents.iter().map(|e| e.min.z).collect();
    // The floor along Z: where the lowest point is in most frames, at the origin
    // when it is near it.
    let level = median(lowest_z.clone());
    let at_origin = level.abs() <= FLOOR_SHARE * height;
    let floor = if at_origin { 0.0 } else { level };
    let standing = extents
        .iter()
        .filter(|e| e.stands_along_z(height, floor))
        .count();
    let lying = extents.iter().filter(|e| e.on_y_floor(height)).count();
    let share = |n: usize| n as f32 / frames as f32;
    let lies_on_y_floor =
        (share(lying) > 1.0 - STEADY_SHARE || !at_origin) && spread(lowest_y) <= spread(lowest_z);
    if share(standing) < STANDING_SHARE || lies_on_y_floor {
        return None;
    }
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
    let on = if at_origin {
        format!("{take_axis} = 0")
    } else {
        format!("{take_axis} = {floor:.3} m")
    };
    Some(format!(
        "up axis of the motion: +{take_axis} (the rest pose stands along +{rest_axis}, but in \
         {standing} of {frames} frames the figure stands along +{take_axis} on a floor at \
         {on}): every frame is turned to +{rest_axis} up about the origin"
    ))
}

/// The middle of `values` (the upper one of the two middles of an even count).
fn median(mut values: Vec<f32>) -> f32 {
    values.sort_by(f32::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// How far a floor height wanders over the take: the range of the middle
/// `STEADY_SHARE` of the values (a jump or a stumble in the rest does not count).
fn spread(mut values: Vec<f32>) -> f32 {
    values.sort_by(f32::total_cmp);
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let cut = ((1.0 - STEADY_SHARE) / 2.0 * n as f32) as usize;
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

    /// `figure` written with +Z up: every `OFFSET` turned a quarter about X, so that
    /// the zero pose stands along +Z.
    fn z_up(text: &str) -> String {
        text.lines()
            .map(|line| match line.trim_start().strip_prefix("OFFSET ") {
                Some(values) => {
                    let v: Vec<&str> = values.split_whitespace().collect();
                    let lead = &line[..line.len() - line.trim_start().len()];
                    format!(
                        "{lead}OFFSET {} {} {}",
                        v[0],
                        -v[2].parse::<f32>().expect("a number"),
                        v[1]
                    )
                }
                None => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
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

    #[test]
    fn a_take_standing_along_y_under_a_z_up_rest_is_stood_up() {
        // The same turn on the root of a skeleton written +Z up: the root turned a
        // quarter about X (+Z to +Y), walking along Z, hips 90 cm above the floor Y = 0.
        let rig = guessed(&z_up(&figure(&[
            "0 90 -300 0 -90 0",
            "0 91 -250 0 -90 0",
            "5 90 -200 0 -90 10",
        ])));
        assert!(noted(&rig, "up axis: +Z"), "{:?}", rig.notes);
        for (hips, head) in heights(&rig) {
            assert!((hips - 0.9).abs() < 0.02, "hips at {hips}");
            assert!(head > hips + 0.5, "head at {head}, hips {hips}");
        }
        assert!(noted(&rig, "up axis of the motion: +Y"), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_standing_along_z_on_a_floor_below_the_origin_is_stood_up() {
        // The pelvis at the origin, as video estimates write it: the floor the feet
        // stay on is Z = -90 cm, and the floor lifts the turned take onto it.
        let rig = guessed(&figure(&[
            "0 -300 0 0 90 0",
            "0 -250 1 0 90 0",
            "5 -200 0 0 90 10",
        ]));
        for (hips, head) in heights(&rig) {
            assert!((hips - 0.9).abs() < 0.02, "hips at {hips}");
            assert!(head > hips + 0.5, "head at {head}, hips {hips}");
        }
        assert!(noted(&rig, "up axis of the motion: +Z"), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_jumping_along_z_is_stood_up() {
        // Two of five frames in the air: most frames stand on the floor Z = 0.
        let rig = guessed(&figure(&[
            "0 -300 90 0 90 0",
            "0 -280 130 0 90 0",
            "0 -260 140 0 90 0",
            "0 -240 90 0 90 0",
            "0 -220 90 0 90 0",
        ]));
        for (hips, head) in heights(&rig) {
            assert!(hips > 0.88, "hips at {hips}");
            assert!(head > hips + 0.5, "head at {head}, hips {hips}");
        }
        assert!(noted(&rig, "up axis of the motion: +Z"), "{:?}", rig.notes);
    }

    #[test]
    fn a_figure_lying_on_a_floor_below_the_origin_keeps_lying() {
        // Lying on its back on the floor Y = -80 cm, head towards +Z, feet at Z = 50:
        // it stands along +Z on a floor there, which moves while the floor along Y
        // stays.
        let rig = guessed(&figure(&["0 -70 140 0 90 0", "0 -70 142 0 90 0"]));
        for (hips, head) in heights(&rig) {
            assert!((head - hips).abs() < 0.2, "head at {head}, hips {hips}");
        }
        assert!(!noted(&rig, "up axis of the motion"), "{:?}", rig.notes);
    }

    #[test]
    fn a_take_upside_down_along_z_is_not_turned() {
        // The root turned a quarter the other way (+Y to -Z): the figure hangs along Z
        // with its head on the floor Z = 0 and its hips between; the turn to +Y
        // would stand it on its head.
        let rig = guessed(&figure(&[
            "0 -300 75 0 -90 0",
            "0 -250 75 0 -90 0",
            "5 -200 75 0 -90 10",
        ]));
        assert!(!noted(&rig, "up axis of the motion"), "{:?}", rig.notes);
    }
}
