//! Stages 4 and 7: where the body faces. The legs give the lateral axis and the
//! midline (`Midline`); toes, knees and eyes then tell which side is the front, and
//! so which leg is the left one (`facing`), with the names and glTF's +Z as the
//! last resorts.

use glam::Vec3;

use crate::humanoid::Side;

use super::legs::Leg;
use super::rest_joints::{RestJoints, horizontal};

/// The body's lateral axis and midline, from the legs.
pub(super) struct Midline {
    /// Midline point (its horizontal part matters).
    pub(super) mid: Vec3,
    /// Horizontal unit vector from leg B to leg A (`pelvis.legs[1]` to `[0]`).
    pub(super) lateral: Vec3,
    /// Half the distance between the thighs (or knees), metres.
    pub(super) hip_half: f32,
    /// Distance of the knees from the midline, before the thighs are known.
    pub(super) rough_knee_lateral: f32,
}

impl Midline {
    /// From pairs of matching joints of leg A and leg B, the first pair nearest the
    /// pelvis: the lateral axis from all pairs, the midline through the middle of
    /// the first pair (knees and feet may splay unevenly in a posed rest; the
    /// thighs hang from the pelvis).
    pub(super) fn from_pairs(pairs: &[(Vec3, Vec3)]) -> Option<Midline> {
        let (&(a0, b0), _) = pairs.split_first()?;
        let lateral =
            horizontal(pairs.iter().map(|(a, b)| *a - *b).sum::<Vec3>()).try_normalize()?;
        let mid = (a0 + b0) * 0.5;
        let hip_half = 0.5 * (a0 - b0).dot(lateral).abs();
        Some(Midline {
            mid,
            lateral,
            hip_half,
            rough_knee_lateral: hip_half,
        })
    }

    /// Signed distance of `p` from the midline along the lateral axis (leg A's side
    /// positive).
    pub(super) fn lateral_of(&self, p: Vec3) -> f32 {
        (p - self.mid).dot(self.lateral)
    }
}

/// Which leg is the left one, and how that was told.
pub(super) struct Facing {
    /// Leg A (`pelvis.legs[0]`, positive lateral) is the left leg.
    pub(super) a_is_left: bool,
    pub(super) how: String,
    /// Neither the rest pose nor `RestJoints::front` told the front: the names or
    /// glTF's +Z did.
    pub(super) unseen: bool,
}

impl Facing {
    /// The body's side of leg A's half of the midline (`a_side`) or leg B's.
    pub(super) fn side(&self, a_side: bool) -> Side {
        if a_side == self.a_is_left {
            Side::Left
        } else {
            Side::Right
        }
    }
}

/// Heuristic: the front is where the toes point from the ankles (weight 1), where
/// the knees bulge from the thigh-ankle line (0.5) and where the eyes sit from the
/// head (1). With A on the left, the front is `lateral × up`. When the rest pose says
/// nothing, the front given besides it (`RestJoints::front`: the knees as the clips
/// bend them) decides when it lies within 60° of the front or the back, then the
/// names' sides; when they do not either, the rig faces +Z as glTF says. The knees
/// do not overrule the names unless the toes and eyes side with the knees: a
/// straight leg whose ankle sits a little ahead of the knee bends the wrong way by
/// that measure, and generated rigs draw them so (feet pointing almost straight
/// down then tip the toes only a little ahead).
pub(super) fn facing(
    rig: &RestJoints,
    midline: &Midline,
    legs: &[Leg; 2],
    eyes: Option<(usize, usize)>,
    head: Option<usize>,
    span: f32,
) -> Facing {
    let front_if_a_left = midline.lateral.cross(Vec3::Y);
    // Toes and eyes (`vote`) apart from the knees (`knees`).
    let mut vote = 0.0;
    let mut knees = 0.0;
    let mut cues = Vec::new();
    for leg in legs {
        if let Some(ankle) = leg.foot {
            let ahead: Vec<Vec3> = rig
                .subtree(ankle)
                .into_iter()
                .flat_map(|j| std::iter::once(rig.pos[j]).chain(rig.end[j]))
                .filter(|p| p.distance(rig.pos[ankle]) > rig.eps)
                .collect();
            if !ahead.is_empty() {
                let toward =
                    horizontal(ahead.iter().sum::<Vec3>() / ahead.len() as f32 - rig.pos[ankle]);
                vote += toward.dot(front_if_a_left) / span;
                if toward.length() > rig.eps {
                    cues.push("toes");
                }
            }
        }
        if let (Some(u), Some(k), Some(a)) = (leg.upper, leg.lower, leg.foot) {
            let bulge = rig.pos[k] - (rig.pos[u] + rig.pos[a]) * 0.5;
            knees += 0.5 * horizontal(bulge).dot(front_if_a_left) / span;
        }
    }
    if let (Some((l, r)), Some(h)) = (eyes, head) {
        let toward = (rig.pos[l] + rig.pos[r]) * 0.5 - rig.pos[h];
        vote += horizontal(toward).dot(front_if_a_left) / span;
        cues.push("eyes");
    }
    cues.dedup();
    let names = names_vote(rig, legs);
    // The knees overrule the names only with the toes and eyes on their side.
    // `toes_with_names`: the toes and eyes side with the names, and the knees would
    // turn them over.
    let toes_with_names =
        vote.abs() > 2e-3 && (vote > 0.0) == (names > 0) && (vote + knees > 0.0) != (vote > 0.0);
    let knees_against_names =
        (vote.abs() <= 2e-3 || toes_with_names) && names != 0 && (knees > 0.0) != (names > 0);
    if knees_against_names && toes_with_names {
        return Facing {
            a_is_left: vote > 0.0,
            how: format!(
                "from the {} and the names (the knees bend the other way)",
                cues.join(" and ")
            ),
            unseen: false,
        };
    }
    let vote = vote + knees;
    if vote.abs() > 2e-3 && !knees_against_names {
        let cue = if cues.is_empty() {
            "knees".to_owned()
        } else {
            cues.join(" and ")
        };
        return Facing {
            a_is_left: vote > 0.0,
            how: format!("from the {cue}"),
            unseen: false,
        };
    }
    let given = rig
        .front
        .map(horizontal)
        .filter(|f| f.dot(front_if_a_left).abs() >= 0.5 * f.length());
    if let Some(front) = given {
        return Facing {
            a_is_left: front.dot(front_if_a_left) > 0.0,
            how: "from the knees as the clips bend them (the rest pose does not show the front)"
                .to_owned(),
            unseen: false,
        };
    }
    if names != 0 {
        let how = if knees_against_names && knees.abs() > 2e-3 {
            "from the names (the rest pose shows only the knees, bent the other way)"
        } else {
            "from the names (the rest pose does not show the front)"
        };
        return Facing {
            a_is_left: names > 0,
            how: how.to_owned(),
            unseen: true,
        };
    }
    Facing {
        a_is_left: front_if_a_left.z >= 0.0,
        how: "assumed +Z as glTF says (neither the rest pose nor the names show the front)"
            .to_owned(),
        unseen: true,
    }
}

/// The names' vote on leg A being the left one: + for each joint of leg A named
/// left or of leg B named right, - for the opposite.
fn names_vote(rig: &RestJoints, legs: &[Leg; 2]) -> i32 {
    let mut names = 0i32;
    for (leg, sign) in legs.iter().zip([1, -1]) {
        for &j in &leg.line {
            match rig.names[j].side {
                Some(Side::Left) => names += sign,
                Some(Side::Right) => names -= sign,
                _ => {}
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::super::test_support::recognized_with_limbs;
    use crate::humanoid::HumanBone as B;

    #[test]
    fn knees_alone_bent_backward_do_not_overrule_the_names() {
        // A generated rig facing +Z, its left at +X as named: the feet are leaves (no
        // toe direction), each ankle 5 cm ahead of the straight thigh and knee, so
        // the knee sits behind the thigh-ankle line as if it bent forward-facing -Z.
        let body = [
            ("Hips", "", [0.0, 1.0, 0.0]),
            ("Spine", "Hips", [0.0, 1.15, 0.0]),
            ("Spine1", "Spine", [0.0, 1.3, 0.0]),
            ("Neck", "Spine1", [0.0, 1.5, 0.0]),
            ("Head", "Neck", [0.0, 1.6, 0.0]),
        ];
        let limb = [
            ("Shoulder", "Spine1", [0.12, 1.48, 0.0]),
            ("Arm", "Shoulder", [0.28, 1.48, 0.0]),
            ("ForeArm", "Arm", [0.52, 1.48, 0.0]),
            ("Hand", "ForeArm", [0.72, 1.48, 0.0]),
            ("UpLeg", "Hips", [0.1, 0.95, 0.0]),
            ("Leg", "UpLeg", [0.1, 0.5, 0.0]),
            ("Foot", "Leg", [0.1, 0.06, 0.05]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperLeg), Some("LeftUpLeg"));
        assert_eq!(at(B::LeftFoot), Some("LeftFoot"));
        assert_eq!(at(B::LeftHand), Some("LeftHand"));
        assert_eq!(at(B::RightUpperArm), Some("RightArm"));
        assert!(
            r.notes.iter().any(|n| n.contains("from the names")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn knees_bent_backward_do_not_overrule_toes_and_names_that_agree() {
        // A Mixamo rig facing +Z, its left at +X as named, whose feet point almost
        // straight down: each toe 2.7 cm below its ankle and 0.4 cm ahead. The knees
        // sit 1.6 cm behind the thigh-ankle line, which alone would say -Z; the toes
        // and the names both say +Z.
        let body = [
            ("Hips", "", [0.0, 1.39, 0.0]),
            ("Spine", "Hips", [0.0, 1.47, 0.0]),
            ("Spine1", "Spine", [0.0, 1.57, 0.0]),
            ("Spine2", "Spine1", [0.0, 1.68, 0.0]),
            ("Neck", "Spine2", [0.0, 1.81, 0.0]),
            ("Head", "Neck", [0.0, 1.87, 0.0]),
        ];
        let limb = [
            ("Shoulder", "Spine2", [0.054, 1.78, 0.0]),
            ("Arm", "Shoulder", [0.16, 1.72, 0.0]),
            ("ForeArm", "Arm", [0.42, 1.4, 0.0]),
            ("Hand", "ForeArm", [0.66, 1.1, 0.0]),
            ("UpLeg", "Hips", [0.086, 1.338, -0.009]),
            ("Leg", "UpLeg", [0.091, 0.695, -0.021]),
            ("Foot", "Leg", [0.088, 0.0, 0.0]),
            ("ToeBase", "Foot", [0.086, -0.027, 0.004]),
            ("Toe_End", "ToeBase", [0.085, -0.033, 0.005]),
        ];
        let r = recognized_with_limbs(&body, ["Left", "Right"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperLeg), Some("LeftUpLeg"));
        assert_eq!(at(B::LeftHand), Some("LeftHand"));
        assert_eq!(at(B::RightUpperArm), Some("RightArm"));
        assert!(
            !r.notes.iter().any(|n| n.contains("swapped")),
            "{:?}",
            r.notes
        );
    }
}
