//! Star skeletons: Kinect/NiTE exporters write one torso joint as the root and hang
//! the arms, the legs and the neck from it through zero-length joints at its own
//! place (`TORSO#` with `TLS`, `TRS`, `TLH`, `TRH`, `TN`), each turning its own limb.
//! There is no joint between where the legs and where the arms leave the body, and
//! VRM's humanoid needs one (a spine above the hips that carries the arms and the
//! head), so no map can hold such a skeleton as the file writes it.
//!
//! `rehang_arms` hangs the two arms' zero-length joints from the neck's instead of the
//! root: the neck's joint becomes the spine that carries the arms and the head. All
//! five start at one point, so the rest pose is the same, and in every frame each arm
//! joint's rotation becomes the neck joint's inverse times its own (`L' = N⁻¹·L`,
//! written back in the joint's own channel order), so every joint stays where the file
//! puts it. The joints are reordered so that each parent still comes first.
//!
//! The root stands at the torso's middle, a fifth of the figure above where the legs
//! leave the body, and the hips are measured from it: a walk's stride, scaled onto an
//! avatar by the two hips heights, would come out that much short. `StarBody::lower_root`
//! moves the root down to between the legs' first joints (in the rest, and in every
//! frame by the root's own turn), and the joints hung from it take the move back, so
//! every other joint stays where the file puts it.
//!
//! `rehang_arms` works on `JointDef`s and the file's values, before any pose is built;
//! `lower_root` on the converted skeleton and motion.

use glam::{EulerRot, Quat, Vec3};

use super::hierarchy::{Axis, Channel, JointDef, only_root_and_children};
use super::motion::RawMotion;
use crate::formats::Motion;
use crate::skeleton::{InvalidSkeleton, Recognition, Skeleton, recognize};

/// Hangs a star skeleton's arms from its neck joint (see the module header). Returns
/// the note naming the joints and where the body hangs from the root; `None` (and
/// nothing changed) for any other hierarchy.
pub(super) fn rehang_arms(
    defs: &mut Vec<JointDef>,
    raw: Option<&mut RawMotion>,
) -> Option<(String, StarBody)> {
    let star = Star::find(defs)?;
    let orders = [star.arms[0], star.arms[1], star.neck].map(|j| rotation_order(&defs[j]));
    let [Some(arm_a), Some(arm_b), Some(neck)] = orders else {
        return None;
    };
    // Arms that cannot turn cannot take back a turning neck's turn.
    if neck.is_some() && (arm_a.is_none() || arm_b.is_none()) {
        return None;
    }
    let order = new_order(defs, &star);
    if let Some(raw) = raw {
        let widths: Vec<usize> = defs.iter().map(|d| d.channels.len()).collect();
        let starts: Vec<usize> = widths
            .iter()
            .scan(0, |at, w| {
                let start = *at;
                *at += w;
                Some(start)
            })
            .collect();
        let width: usize = widths.iter().sum();
        if raw.values.len() < raw.frames * width {
            return None;
        }
        for frame in raw.values.chunks_exact_mut(width).take(raw.frames) {
            let n = read(&frame[starts[star.neck]..], neck).inverse();
            for (arm, by) in [(star.arms[0], arm_a), (star.arms[1], arm_b)] {
                let rehung = (n * read(&frame[starts[arm]..], by)).normalize();
                write(&mut frame[starts[arm]..], by, rehung);
            }
            let moved: Vec<f32> = order
                .iter()
                .flat_map(|&j| frame[starts[j]..starts[j] + widths[j]].iter().copied())
                .collect();
            frame.copy_from_slice(&moved);
        }
    }
    let note = format!(
        "a star skeleton: the arms' zero-length joints `{}`, `{}` hang from the neck's `{}` \
         instead of the root `{}`, so that a spine carries the arms and the head (all at one \
         point, every joint stays where the file puts it)",
        defs[star.arms[0]].name,
        defs[star.arms[1]].name,
        defs[star.neck].name,
        defs[star.root].name
    );
    let mut place = vec![0; defs.len()];
    for (new, &old) in order.iter().enumerate() {
        place[old] = new;
    }
    let mut moved: Vec<JointDef> = order.iter().map(|&j| defs[j].clone()).collect();
    for (new, def) in moved.iter_mut().enumerate() {
        let old = order[new];
        def.parent = if star.arms.contains(&old) {
            Some(place[star.neck])
        } else {
            def.parent.map(|p| place[p])
        };
    }
    *defs = moved;
    let body = StarBody {
        root: place[star.root],
        neck: place[star.neck],
        legs: star.legs.map(|(leg, thigh)| (place[leg], place[thigh])),
    };
    Some((note, body))
}

/// A rehung star skeleton's root and what hangs from it: the neck's zero-length
/// joint and each leg's, with the joint its leg starts at (indices of the new order).
#[derive(Debug, Clone, Copy)]
pub(super) struct StarBody {
    root: usize,
    neck: usize,
    legs: [(usize, usize); 2],
}

/// The move of a star skeleton's root from its torso to its pelvis (`lower_root`).
#[derive(Debug, Clone)]
pub(super) struct LoweredRoot {
    body: StarBody,
    /// From the root to the middle between the legs' first joints, in the root's frame
    /// at rest (metres).
    by: Vec3,
    /// How far down that middle is at rest (metres).
    drop: f32,
    /// Per joint: whether it hangs from a leg's zero-length joint.
    under_legs: Vec<bool>,
}

impl StarBody {
    /// The root's move down to the middle between the legs' first joints in the rest of
    /// `skeleton` (internal space), with the skeleton so moved; `None` when that middle
    /// is not below the root. `Err` with the note saying so when the moved skeleton is
    /// no humanoid to the recognizer: a zero pose with one foot raised ends its legs
    /// level only as measured from the torso, and the root stays there.
    pub(super) fn lower_root(
        &self,
        skeleton: &Skeleton,
    ) -> Option<Result<(LoweredRoot, Skeleton), String>> {
        let world = skeleton.rest_world();
        let [(_, a), (_, b)] = self.legs;
        let (root, a, b) = (world.get(self.root)?, world.get(a)?, world.get(b)?);
        let middle = (a.translation + b.translation) * 0.5;
        let by = Vec3::from(root.inverse().transform_point3a(middle));
        let drop = root.translation.y - middle.y;
        if !(drop > 0.0 && by.is_finite()) {
            return None;
        }
        let legs = self.legs.map(|(leg, _)| Some(leg));
        let under_legs = skeleton
            .joints()
            .iter()
            .map(|j| j.parent.is_some() && legs.contains(&j.parent))
            .collect();
        let lowered = LoweredRoot {
            body: *self,
            by,
            drop,
            under_legs,
        };
        let moved = lowered.skeleton(skeleton).ok()?;
        match (recognize(&moved), recognize(skeleton)) {
            (Recognition::Humanoid(_), _) => Some(Ok((lowered, moved))),
            (_, Recognition::Humanoid(_)) => Some(Err(format!(
                "the star skeleton's root `{}` stays at the torso's middle, {drop:.3} m above \
                 where the legs leave the body: with the root there the rest is no body to the \
                 recognizer (its legs do not end level), so the hips are measured from the \
                 torso and a stride comes out shorter on an avatar",
                skeleton
                    .joints()
                    .get(self.root)
                    .map_or("", |j| j.name.as_str()),
            ))),
            // No body either way: nothing to move, nothing to say.
            _ => None,
        }
    }
}

impl LoweredRoot {
    /// A joint's translation once the root has moved, from its rotation and translation:
    /// the root moves by its own turn of `by`; the neck's joint and every joint hung
    /// from a leg's take it back; each leg's zero-length joint, turning about the new
    /// root instead of the old one, takes back the difference its own turn makes.
    fn moved(&self, joint: usize, rotation: Quat, translation: Vec3) -> Vec3 {
        let StarBody { root, neck, legs } = self.body;
        let by = self.by;
        if joint == root {
            translation + rotation * by
        } else if joint == neck || self.under_legs.get(joint) == Some(&true) {
            translation - by
        } else if legs.iter().any(|&(leg, _)| leg == joint) {
            translation - by + rotation * by
        } else {
            translation
        }
    }

    /// The skeleton with its root moved in the rest.
    fn skeleton(&self, skeleton: &Skeleton) -> Result<Skeleton, InvalidSkeleton> {
        let mut joints = skeleton.joints().to_vec();
        for (j, joint) in joints.iter_mut().enumerate() {
            joint.rest.translation = self.moved(j, joint.rest.rotation, joint.rest.translation);
        }
        Skeleton::new(joints)
    }

    /// Every frame with its root moved.
    pub(super) fn motion(&self, motion: &mut Motion) {
        motion.map_joints(|j, rotation, translation| {
            (rotation, self.moved(j, rotation, translation))
        });
    }

    /// Says where the root went, naming the legs' first joints.
    pub(super) fn note(&self, skeleton: &Skeleton) -> String {
        let name = |j: usize| {
            skeleton
                .joints()
                .get(j)
                .map_or("", |joint| joint.name.as_str())
        };
        let [(_, a), (_, b)] = self.body.legs;
        format!(
            "the star skeleton's root `{}` stands at the torso's middle: it moves {:.3} m down \
             ({:.3} m in all) to between `{}` and `{}`, where the legs leave the body, with the \
             legs' zero-length joints, so that the hips are measured from the pelvis (every \
             other joint stays where the file puts it)",
            name(self.body.root),
            self.drop,
            self.by.length(),
            name(a),
            name(b)
        )
    }
}

/// A zero-length joint under the root and the direction its chain starts in.
type Chain = (usize, Vec3);

/// The root, the neck's zero-length joint, the two arms' and the two legs' (each
/// with the joint its leg starts at).
struct Star {
    root: usize,
    neck: usize,
    arms: [usize; 2],
    legs: [(usize, usize); 2],
}

impl Star {
    /// Heuristic: the file's only root, with five children at its place (`OFFSET` 0 0 0,
    /// no position channel), each starting one chain (its child with an `OFFSET` and
    /// the deepest chain below). The neck's is the one with two chains starting on its
    /// side of the root (the arms, one on either side of it) and two on the other (the
    /// legs, one on either side), the arms' mean direction along it and the legs'
    /// against it.
    /// The arms and legs are three joints deep or more below their zero-length joint.
    fn find(defs: &[JointDef]) -> Option<Star> {
        let (root, kids) = only_root_and_children(defs)?;
        let coincident = |d: &JointDef| d.offset.length_squared() == 0.0 && !d.has_position();
        if kids.len() != 5 || !kids.iter().all(|&k| coincident(&defs[k])) {
            return None;
        }
        // The joint a chain starts at: the zero-length joint's child with an `OFFSET`
        // and the deepest chain below it (a prop beside a thigh is no leg).
        let first = |kid: usize| {
            (0..defs.len())
                .filter(|&j| defs[j].parent == Some(kid) && defs[j].offset.length_squared() > 0.0)
                .max_by_key(|&j| (deepest_below(defs, j), std::cmp::Reverse(j)))
        };
        let start = |kid: usize| first(kid).and_then(|j| defs[j].offset.try_normalize());
        let starts: Vec<Chain> = kids
            .iter()
            .filter_map(|&k| start(k).map(|s| (k, s)))
            .collect();
        if starts.len() != 5 {
            return None;
        }
        let depth = |j: usize| deepest_below(defs, j);
        starts.iter().find_map(|&(neck, up)| {
            let others = starts.iter().filter(|&&(k, _)| k != neck);
            let (arms, legs): (Vec<Chain>, Vec<Chain>) = others.partition(|(_, s)| s.dot(up) > 0.0);
            let [a, b] = arms.as_slice() else {
                return None;
            };
            let [c, d] = legs.as_slice() else {
                return None;
            };
            let either_side = |p: Vec3, q: Vec3| up.cross(p).dot(up.cross(q)) < 0.0;
            let along = |p: Vec3, q: Vec3| (p + q).normalize_or_zero().dot(up);
            (either_side(a.1, b.1)
                && either_side(c.1, d.1)
                && along(a.1, b.1) > 0.5
                && along(c.1, d.1) < -0.5
                && [a.0, b.0, c.0, d.0].iter().all(|&k| depth(k) >= 3)
                && depth(neck) >= 1)
                .then(|| {
                    let [Some(thigh_c), Some(thigh_d)] = [first(c.0), first(d.0)] else {
                        return None;
                    };
                    Some(Star {
                        root,
                        neck,
                        arms: [a.0, b.0],
                        legs: [(c.0, thigh_c), (d.0, thigh_d)],
                    })
                })
                .flatten()
        })
    }
}

/// How many joints deep the deepest chain below `joint` is.
fn deepest_below(defs: &[JointDef], joint: usize) -> usize {
    let mut depth = vec![0usize; defs.len()];
    let mut deepest = 0;
    // Parents come first, so one pass down the file gives every joint its depth.
    for (j, def) in defs.iter().enumerate() {
        if let Some(p) = def.parent
            && (p == joint || depth[p] > 0)
        {
            depth[j] = depth[p] + 1;
            deepest = deepest.max(depth[j]);
        }
    }
    deepest
}

/// The file order with each arm's subtree moved to just after the neck joint's.
fn new_order(defs: &[JointDef], star: &Star) -> Vec<usize> {
    let below = |top: usize| -> Vec<bool> {
        let mut inside = vec![false; defs.len()];
        for (j, def) in defs.iter().enumerate() {
            inside[j] = j == top || def.parent.is_some_and(|p| inside[p]);
        }
        inside
    };
    let [a, b, neck] = [star.arms[0], star.arms[1], star.neck].map(below);
    let arm = |j: usize| a[j] || b[j];
    let last_of_neck = (0..defs.len()).rfind(|&j| neck[j]).unwrap_or(star.neck);
    let mut order: Vec<usize> = Vec::with_capacity(defs.len());
    for j in (0..defs.len()).filter(|&j| !arm(j)) {
        order.push(j);
        if j == last_of_neck {
            order.extend((0..defs.len()).filter(|&k| a[k]));
            order.extend((0..defs.len()).filter(|&k| b[k]));
        }
    }
    order
}

/// The Euler order of a joint's rotation channels: `Some(None)` for a joint with
/// none (it never turns), `Some(Some(order))` for three about three different axes,
/// `None` for anything else (a turn could not be written back into them).
fn rotation_order(def: &JointDef) -> Option<Option<EulerRot>> {
    let axes: Vec<Axis> = def
        .channels
        .iter()
        .filter_map(|c| match c {
            Channel::Rotation(axis) => Some(*axis),
            Channel::Position(_) => None,
        })
        .collect();
    use Axis::{X, Y, Z};
    match axes.as_slice() {
        [] => Some(None),
        [X, Y, Z] => Some(Some(EulerRot::XYZ)),
        [X, Z, Y] => Some(Some(EulerRot::XZY)),
        [Y, X, Z] => Some(Some(EulerRot::YXZ)),
        [Y, Z, X] => Some(Some(EulerRot::YZX)),
        [Z, X, Y] => Some(Some(EulerRot::ZXY)),
        [Z, Y, X] => Some(Some(EulerRot::ZYX)),
        _ => None,
    }
}

/// A joint's rotation from its channel values (`values` starts at its first channel;
/// it has no position channel, and its rotation channels are in `order`).
fn read(values: &[f32], order: Option<EulerRot>) -> Quat {
    match (order, values) {
        (Some(order), [a, b, c, ..]) => {
            Quat::from_euler(order, a.to_radians(), b.to_radians(), c.to_radians())
        }
        _ => Quat::IDENTITY,
    }
}

/// Writes `rotation` into a joint's rotation channels, in their `order`.
fn write(values: &mut [f32], order: Option<EulerRot>, rotation: Quat) {
    if let (Some(order), [a, b, c, ..]) = (order, values) {
        let (x, y, z) = rotation.to_euler(order);
        (*a, *b, *c) = (x.to_degrees(), y.to_degrees(), z.to_degrees());
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::formats::Rig;
    use crate::skeleton::recognize::{Recognition, recognize};

    const ROTATIONS: &str = "CHANNELS 3 Zrotation Xrotation Yrotation\n";

    /// A Kinect-style star in millimetres, facing +Z: the torso joint as the root,
    /// five zero-length joints at its place, each turning one chain; `extra` is
    /// written as one more child of the root. One frame of `values`.
    fn star(extra: &str, values: &str) -> String {
        star_with_left_shin(extra, values, -405.0)
    }

    /// `star` with the left foot `shin` mm below the left knee (the right's is -405).
    fn star_with_left_shin(extra: &str, values: &str, shin: f32) -> String {
        // A zero-length joint at the root's place and the chain of three it turns.
        let chain = |name: &str, joints: [String; 3], offsets: [[f32; 3]; 3]| {
            let mut text = format!("JOINT {name}\n{{\nOFFSET 0 0 0\n{ROTATIONS}");
            for (joint, [x, y, z]) in joints.iter().zip(offsets) {
                text += &format!("JOINT {joint}\n{{\nOFFSET {x} {y} {z}\n{ROTATIONS}");
            }
            text + "End Site\n{\nOFFSET 0 0 0\n}\n}\n}\n}\n}\n"
        };
        // TLS, TRS, TLH, TRH and their chains, in that order: the left's offsets, the
        // right's mirrored across X.
        let arm = [
            [156.0, 205.0, 28.0],
            [40.0, -290.0, 0.0],
            [0.0, -230.0, 30.0],
        ];
        let leg = [
            [100.0, -205.0, 20.0],
            [0.0, -440.0, 15.0],
            [0.0, -405.0, 0.0],
        ];
        let mut limbs = String::new();
        for (end, parts, offsets) in [
            ("S", ["SHOULDER", "ELBOW", "HAND"], arm),
            ("H", ["HIP", "KNEE", "FOOT"], leg),
        ] {
            for (s, side, x) in [("L", "LEFT", 1.0), ("R", "RIGHT", -1.0)] {
                let joints = parts.map(|p| format!("{side}_{p}"));
                let mut offsets = offsets.map(|[ox, oy, oz]: [f32; 3]| [x * ox, oy, oz]);
                if (end, side) == ("H", "LEFT") {
                    offsets[2][1] = shin;
                }
                limbs += &chain(&format!("T{s}{end}"), joints, offsets);
            }
        }
        let neck = format!(
            "JOINT TN\n{{\nOFFSET 0 0 0\n{ROTATIONS}JOINT NECK\n{{\nOFFSET 0 210 -10\n{ROTATIONS}\
             JOINT HEAD\n{{\nOFFSET 0 120 0\n{ROTATIONS}End Site\n{{\nOFFSET 0 0 0\n}}\n}}\n}}\n}}\n"
        );
        let channels = 6 + 3 * (5 + 4 * 3 + 2) + if extra.is_empty() { 0 } else { 3 };
        format!(
            "HIERARCHY\nROOT TORSO\n{{\nOFFSET 0 0 0\n\
             CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
             {limbs}{neck}{extra}}}\nMOTION\nFrames: 1\nFrame Time: 0.033333\n{values}{}\n",
            " 0".repeat(channels - values.split_whitespace().count()),
        )
    }

    /// The root at 1 m, turned; each arm's, a leg's and the neck's zero-length joint
    /// turned its own way, an elbow bent: one frame's values in the file's order.
    fn turned() -> String {
        let turns = [
            ("TORSO", "0 1000 0 5 -3 10"),
            ("TLS", "-3 -12 1"),
            ("LEFT_SHOULDER", "10 0 0"),
            ("LEFT_ELBOW", "20 -30 0"),
            ("TRS", "4 11 -8"),
            ("RIGHT_ELBOW", "-20 25 0"),
            ("TLH", "2 -4 3"),
            ("TN", "3 -6 12"),
            ("NECK", "-5 8 0"),
        ];
        let order = [
            "TORSO",
            "TLS",
            "LEFT_SHOULDER",
            "LEFT_ELBOW",
            "LEFT_HAND",
            "TRS",
            "RIGHT_SHOULDER",
            "RIGHT_ELBOW",
            "RIGHT_HAND",
            "TLH",
            "LEFT_HIP",
            "LEFT_KNEE",
            "LEFT_FOOT",
            "TRH",
            "RIGHT_HIP",
            "RIGHT_KNEE",
            "RIGHT_FOOT",
            "TN",
            "NECK",
            "HEAD",
        ];
        let values = |name: &str| {
            turns
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("0 0 0", |(_, v)| *v)
        };
        order.map(values).join(" ")
    }

    fn place(rig: &Rig, name: &str) -> glam::Vec3 {
        let at = rig.skeleton.joints().iter().position(|j| j.name == name);
        places(rig)[at.unwrap_or_else(|| panic!("no joint {name}"))]
    }

    #[test]
    fn a_star_skeletons_arms_hang_from_its_neck_joint_and_every_joint_stays_put() {
        let rehung = rig(&star("", &turned()));
        let joints = rehung.skeleton.joints();
        let parent = |name: &str| {
            let j = joints.iter().find(|j| j.name == name).expect("a joint");
            j.parent.map(|p| joints[p].name.as_str())
        };
        assert_eq!(parent("TLS"), Some("TN"));
        assert_eq!(parent("TRS"), Some("TN"));
        assert_eq!(parent("TN"), Some("TORSO"));
        assert!(rehung.notes[0].starts_with(
            "a star skeleton: the arms' zero-length joints `TLS`, `TRS` hang from the neck's \
             `TN` instead of the root `TORSO`"
        ));
        // The same file with a sixth joint on the root is no star: read as written.
        let leaf = "JOINT PROP\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n\
                    End Site\n{\nOFFSET 0 0 50\n}\n}\n";
        let as_written = rig(&star(leaf, &turned()));
        assert!(as_written.notes.iter().all(|n| !n.contains("star")));
        // The root and the legs' zero-length joints move to the pelvis (checked below).
        let moved = ["TORSO", "TLH", "TRH"];
        for joint in joints.iter().filter(|j| !moved.contains(&j.name.as_str())) {
            let (a, b) = (place(&rehung, &joint.name), place(&as_written, &joint.name));
            assert!(a.distance(b) < 1e-4, "{}: {a} against {b}", joint.name);
        }
        // Rehung, it is a humanoid with its spine at the neck's joint.
        match recognize(&rehung.skeleton) {
            Recognition::Humanoid(r) => {
                for (bone, joint) in [
                    ("hips", "TORSO"),
                    ("spine", "TN"),
                    ("head", "HEAD"),
                    ("leftUpperArm", "LEFT_SHOULDER"),
                    ("rightHand", "RIGHT_HAND"),
                    ("leftUpperLeg", "LEFT_HIP"),
                ] {
                    let bone = bone.parse().expect("a bone");
                    assert_eq!(r.map.bones.get(&bone).map(String::as_str), Some(joint));
                }
            }
            Recognition::NotHumanoid(n) => panic!("{}", n.reason),
        }
        match recognize(&as_written.skeleton) {
            Recognition::Humanoid(_) => panic!("a star as written has no spine for its arms"),
            Recognition::NotHumanoid(_) => {}
        }
    }

    fn hips_and_legs(rig: &Rig) -> (glam::Vec3, glam::Vec3) {
        let middle = (place(rig, "LEFT_HIP") + place(rig, "RIGHT_HIP")) * 0.5;
        (place(rig, "TORSO"), middle)
    }

    #[test]
    fn a_star_skeletons_root_moves_from_its_torso_to_between_its_legs_first_joints() {
        // Unturned, the root lands on the middle between the hip joints, 205 mm down and
        // 20 forward (read as metres: the note's 205 m are as many millimetres).
        let still = rig(&star("", "0 1000 0"));
        let (root, middle) = hips_and_legs(&still);
        assert!(root.distance(middle) < 1e-3, "{root} against {middle}");
        assert!((root.y - 795.0).abs() < 1e-3, "{root}");
        assert!(
            still.notes.iter().any(|n| n.starts_with(
                "the star skeleton's root `TORSO` stands at the torso's middle: it moves 205.000 \
                 m down (205.973 m in all) to between `LEFT_HIP` and `RIGHT_HIP`"
            )),
            "{:?}",
            still.notes
        );
        // The rest's hips stand there too: its height is the pelvis', not the torso's.
        let rest = still.skeleton.rest_world();
        let torso = still.skeleton.find("TORSO").expect("the root");
        let foot = still.skeleton.find("LEFT_FOOT").expect("a foot");
        let height = rest[torso].translation.y - rest[foot].translation.y;
        assert!((height - (440.0 + 405.0)).abs() < 1e-3, "{height}");
        // Turned, it moves with the root's turn; every other joint stays (tested above).
        let turned = rig(&star("", &turned()));
        let (root, middle) = hips_and_legs(&turned);
        assert!(
            root.distance(middle) < 0.05 * 205.0,
            "{root} against {middle}"
        );
        assert!(
            root.distance(glam::Vec3::new(0.0, 1000.0, 0.0)) > 150.0,
            "{root}"
        );
    }

    #[test]
    fn a_star_whose_legs_end_level_only_from_its_torso_keeps_its_root_there() {
        // The left foot 105 mm up: level within an eighth of the legs' drop from the
        // torso (945 mm), not from the pelvis (740 mm).
        let raised = rig(&star_with_left_shin("", "0 1000 0", -300.0));
        let (root, _) = hips_and_legs(&raised);
        assert!(
            root.distance(glam::Vec3::new(0.0, 1000.0, 0.0)) < 1e-3,
            "{root}"
        );
        assert!(
            raised.notes.iter().any(|n| n.starts_with(
                "the star skeleton's root `TORSO` stays at the torso's middle, 205.000 m above \
                 where the legs leave the body"
            )),
            "{:?}",
            raised.notes
        );
        match recognize(&raised.skeleton) {
            Recognition::Humanoid(r) => {
                let hips = "hips".parse().expect("a bone");
                assert_eq!(r.map.bones.get(&hips).map(String::as_str), Some("TORSO"));
            }
            Recognition::NotHumanoid(n) => panic!("{}", n.reason),
        }
    }

    #[test]
    fn a_star_take_rests_on_another_take_of_its_skeleton() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let (still, take) = (dir.path().join("still.bvh"), dir.path().join("take.bvh"));
        std::fs::write(&still, star("", "0 1000 0")).expect("written");
        std::fs::write(&take, star("", &turned())).expect("written");
        let options = |rest_from| crate::formats::LoadOptions {
            rest_from,
            ..super::super::test_support::AS_IS
        };
        let alone = super::super::load(&take, &options(None)).expect("loads");
        let rested = super::super::load(&take, &options(Some(still))).expect("loads");
        assert!(
            rested
                .notes
                .iter()
                .any(|n| n == "rest pose: the zero pose of `still.bvh` (--rest-from)"),
            "{:?}",
            rested.notes
        );
        // Every joint but the moved ones stays where the file puts it (read against
        // another file's rest, the hip joints' shared turn stays theirs, so the root
        // carries another turn of its move).
        for joint in alone.skeleton.joints() {
            if !["TORSO", "TLH", "TRH"].contains(&joint.name.as_str()) {
                let (a, b) = (place(&alone, &joint.name), place(&rested, &joint.name));
                assert!(a.distance(b) < 1e-3, "{}: {a} against {b}", joint.name);
            }
        }
    }

    #[test]
    fn every_joint_hung_from_a_legs_zero_length_joint_stays_put() {
        // A prop beside the left thigh, on the leg's zero-length joint: it stays where
        // the file puts it, as the thigh does.
        let prop = "JOINT LEFT_PROP\n{\nOFFSET 60 -120 0\nCHANNELS 3 Zrotation Xrotation \
                    Yrotation\nEnd Site\n{\nOFFSET 0 0 0\n}\n}\nJOINT LEFT_HIP";
        let text = star("", "0 1000 0").replacen("JOINT LEFT_HIP", prop, 1);
        let (hierarchy, motion) = text.split_once("MOTION\n").expect("motion");
        let with_prop = rig(&format!("{hierarchy}MOTION\n{} 0 0 0\n", motion.trim_end()));
        assert!(
            with_prop
                .notes
                .iter()
                .any(|n| n.contains("moves 205.000 m down"))
        );
        let prop = place(&with_prop, "LEFT_PROP");
        assert!(
            prop.distance(glam::Vec3::new(60.0, 880.0, 0.0)) < 1e-3,
            "{prop}"
        );
    }
}
