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
//! Works on `JointDef`s and the file's values, before any pose is built.

use glam::{EulerRot, Quat, Vec3};

use super::hierarchy::{Axis, Channel, JointDef, only_root_and_children};
use super::motion::RawMotion;

/// Hangs a star skeleton's arms from its neck joint (see the module header). Returns
/// the note naming the joints; `None` (and nothing changed) for any other hierarchy.
pub(super) fn rehang_arms(defs: &mut Vec<JointDef>, raw: Option<&mut RawMotion>) -> Option<String> {
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
    Some(note)
}

/// A zero-length joint under the root and the direction its chain starts in.
type Chain = (usize, Vec3);

/// The root, the neck's zero-length joint and the two arms'.
struct Star {
    root: usize,
    neck: usize,
    arms: [usize; 2],
}

impl Star {
    /// Heuristic: the file's only root, with five children at its place (`OFFSET` 0 0 0,
    /// no position channel), each starting one chain (its first child with an
    /// `OFFSET`). The neck's is the one with two chains starting on its side of the
    /// root (the arms, one on either side of it) and two on the other (the legs, one
    /// on either side), the arms' mean direction along it and the legs' against it.
    /// The arms and legs are three joints deep or more below their zero-length joint.
    fn find(defs: &[JointDef]) -> Option<Star> {
        let (root, kids) = only_root_and_children(defs)?;
        let coincident = |d: &JointDef| d.offset.length_squared() == 0.0 && !d.has_position();
        if kids.len() != 5 || !kids.iter().all(|&k| coincident(&defs[k])) {
            return None;
        }
        let start = |kid: usize| {
            defs.iter()
                .find(|d| d.parent == Some(kid) && d.offset.length_squared() > 0.0)
                .and_then(|d| d.offset.try_normalize())
        };
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
                .then_some(Star {
                    root,
                    neck,
                    arms: [a.0, b.0],
                })
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
                let offsets = offsets.map(|[ox, oy, oz]: [f32; 3]| [x * ox, oy, oz]);
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
        for joint in joints {
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
}
