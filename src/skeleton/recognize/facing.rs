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
/// head (1). With A on the left, the front is `lateral × up`. When the geometry says
/// nothing, the names' sides decide; when they do not either, the rig faces +Z as
/// glTF says.
pub(super) fn facing(
    rig: &RestJoints,
    midline: &Midline,
    legs: &[Leg; 2],
    eyes: Option<(usize, usize)>,
    head: Option<usize>,
    span: f32,
) -> Facing {
    let front_if_a_left = midline.lateral.cross(Vec3::Y);
    let mut vote = 0.0;
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
                let toward = ahead.iter().sum::<Vec3>() / ahead.len() as f32 - rig.pos[ankle];
                vote += horizontal(toward).dot(front_if_a_left) / span;
                cues.push("toes");
            }
        }
        if let (Some(u), Some(k), Some(a)) = (leg.upper, leg.lower, leg.foot) {
            let bulge = rig.pos[k] - (rig.pos[u] + rig.pos[a]) * 0.5;
            vote += 0.5 * horizontal(bulge).dot(front_if_a_left) / span;
        }
    }
    if let (Some((l, r)), Some(h)) = (eyes, head) {
        let toward = (rig.pos[l] + rig.pos[r]) * 0.5 - rig.pos[h];
        vote += horizontal(toward).dot(front_if_a_left) / span;
        cues.push("eyes");
    }
    cues.dedup();
    if vote.abs() > 2e-3 {
        let cue = if cues.is_empty() {
            "knees".to_owned()
        } else {
            cues.join(" and ")
        };
        return Facing {
            a_is_left: vote > 0.0,
            how: format!("from the {cue}"),
        };
    }
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
    if names != 0 {
        return Facing {
            a_is_left: names > 0,
            how: "from the names (the rest pose does not show the front)".to_owned(),
        };
    }
    Facing {
        a_is_left: front_if_a_left.z >= 0.0,
        how: "assumed +Z as glTF says (neither the rest pose nor the names show the front)"
            .to_owned(),
    }
}
