//! Two-bone limb IK: an analytic solve of root, middle and end joint positions for
//! a target (`TwoBoneIk`), and the same applied to a limb of a normalized pose
//! (`LimbIk`).
//!
//! The solve keeps the limb's own hinge: the middle joint opens or closes about its
//! current bend axis to the angle the law of cosines asks, the root turns the end onto
//! the target, then the limb swings about the root→target line until the middle joint
//! faces the pole. When the limb is straight (no bend axis) or bent away from the
//! pole, the bend axis comes from the pole; when the pole lies on the root→target line,
//! the current bend plane is kept. So a limb never flips between frames as long as its
//! pole moves continuously.

use glam::{Quat, Vec3};

use super::IkError;
use super::body::{BodyFrame, BodyProportions, Limb};
use crate::humanoid::HumanoidPose;

/// Below this, lengths (metres) and sines count as zero.
const EPSILON: f32 = 1e-6;

/// What a two-bone solve turns, as model-space rotations applied on top of the
/// current pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimbRotations {
    /// Turns the root bone and everything below it, about the root joint:
    /// `M(root)' = root · M(root)`.
    pub root: Quat,
    /// Turns the middle bone and everything below it about the middle joint, applied
    /// before `root`: `M(middle)' = root · middle · M(middle)`.
    pub middle: Quat,
}

impl LimbRotations {
    /// Where the middle and end joints go when the limb `root`, `middle`, `end`
    /// (model positions) turns by these rotations.
    #[must_use]
    pub fn apply(&self, root: Vec3, middle: Vec3, end: Vec3) -> [Vec3; 2] {
        let moved = root + self.root * (middle - root);
        [moved, moved + self.root * self.middle * (end - middle)]
    }
}

impl Default for LimbRotations {
    fn default() -> Self {
        Self {
            root: Quat::IDENTITY,
            middle: Quat::IDENTITY,
        }
    }
}

/// Solves one two-bone chain for a target position, in model space.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct TwoBoneIk<'a> {
    /// Input: the root joint (shoulder, hip), model space, metres.
    pub root: Vec3,
    /// Input: the middle joint (elbow, knee), model space, metres.
    pub middle: Vec3,
    /// Input: the end joint (wrist, ankle), model space, metres.
    pub end: Vec3,
    /// Where the end joint should go, model space, metres.
    pub target: Vec3,
    /// A point the middle joint bends toward, model space, metres; only its offset
    /// across the root→target line matters.
    pub pole: Vec3,
    /// Fraction of the full reach over which the approach to a straight limb is eased
    /// (0: none, the default; 0.02 to 0.1 hides the snap of a limb going straight).
    /// Targets closer than `(1 − softness)` of the reach are hit exactly.
    pub softness: f32,
    /// Blend from the current pose (0) to the solved one (1).
    pub weight: f32,
    /// Output: the rotations that move the limb.
    pub out: &'a mut LimbRotations,
}

impl TwoBoneIk<'_> {
    /// Rejects a limb with a zero-length bone, a non-finite target or pole, and a
    /// weight or softness out of range.
    pub fn validate(&self) -> Result<(), IkError> {
        let upper = self.root.distance(self.middle);
        let lower = self.middle.distance(self.end);
        if !(upper.is_finite() && lower.is_finite() && upper > EPSILON && lower > EPSILON) {
            return Err(IkError::DegenerateLimb { upper, lower });
        }
        if !self.target.is_finite() {
            return Err(IkError::BadTarget(self.target));
        }
        if !self.pole.is_finite() {
            return Err(IkError::BadTarget(self.pole));
        }
        if !(0.0..=1.0).contains(&self.weight) {
            return Err(IkError::BadWeight(self.weight));
        }
        if !(0.0..1.0).contains(&self.softness) {
            return Err(IkError::BadSoftness(self.softness));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let (a, b, c) = (self.root, self.middle, self.end);
        let upper = a.distance(b);
        let lower = b.distance(c);
        let (direction, distance) = soften_target(a, self.target, upper, lower, self.softness);
        let middle = solve_middle_joint(a, b, c, self.pole, distance);
        // The end after bending, then the root turn that puts it on the target line.
        let bent_end = b + middle * (c - b);
        let aim = match (bent_end - a).try_normalize() {
            Some(from) if direction != Vec3::ZERO => Quat::from_rotation_arc(from, direction),
            _ => Quat::IDENTITY,
        };
        let swing = swing_to_pole(a, aim * (b - a), self.pole, direction);
        let root = (swing * aim).normalize();
        *self.out = apply_weight(root, middle, self.weight);
        Ok(())
    }
}

/// Direction from the root to the target and the distance the end joint should be
/// at: the target's, clamped to what the limb reaches and, with softening, eased:
///
/// ```text
/// reach = l1 + l2,  s = softness · reach,  r = reach − s
/// d' = d                              when d ≤ r
/// d' = r + s · (1 − exp(−(d − r)/s))  otherwise (tends to reach, never passes it)
/// ```
fn soften_target(root: Vec3, target: Vec3, upper: f32, lower: f32, softness: f32) -> (Vec3, f32) {
    let offset = target - root;
    let d = offset.length();
    let direction = offset.try_normalize().unwrap_or(Vec3::ZERO);
    let reach = upper + lower;
    let s = softness * reach;
    let r = reach - s;
    let eased = if s > 0.0 && d > r {
        r + s * (1.0 - (-(d - r) / s).exp())
    } else {
        d
    };
    (direction, eased.clamp((upper - lower).abs(), reach))
}

/// The middle joint's turn (model space, about the middle joint) that gives the end
/// joint distance `distance` from the root. The interior angle comes from the law of
/// cosines, `cos θ = (l1² + l2² − d²) / (2 l1 l2)`, and is reached by turning the lower
/// bone about the bend axis `h`: the current one, `(a − b) × (c − b)`, when the limb is
/// bent toward the pole's side; else the pole's, `(c − b) × p` with `p` the pole's
/// offset across the root→end line (after straightening the limb when it was bent
/// the other way).
fn solve_middle_joint(a: Vec3, b: Vec3, c: Vec3, pole: Vec3, distance: f32) -> Quat {
    let u = a - b;
    let v = c - b;
    let (l1, l2) = (u.length(), v.length());
    let cos_target = ((l1 * l1 + l2 * l2 - distance * distance) / (2.0 * l1 * l2)).clamp(-1.0, 1.0);
    let theta = cos_target.acos();
    let cross = u.cross(v);
    // atan2 keeps precision near straight, where acos does not.
    let theta_now = cross.length().atan2(u.dot(v));
    let current_axis = (cross.length() > EPSILON * l1 * l2).then(|| cross / cross.length());
    let axis_line = (c - a).try_normalize().unwrap_or(v / l2);
    let pole_offset = pole - a;
    let across = pole_offset - axis_line * axis_line.dot(pole_offset);
    let pole_axis = v.cross(across).try_normalize();
    match (current_axis, pole_axis) {
        (Some(h), Some(hp)) if h.dot(hp) < 0.0 => {
            // Bent away from the pole: straighten about h, then bend about the pole's
            // axis for the straight limb (lower bone along −u, so the line is −u too).
            let straight = -u / l1;
            let across = pole_offset - straight * straight.dot(pole_offset);
            let bend_axis = straight.cross(across).try_normalize().unwrap_or(-h);
            Quat::from_axis_angle(bend_axis, theta - std::f32::consts::PI)
                * Quat::from_axis_angle(h, std::f32::consts::PI - theta_now)
        }
        (Some(h), _) | (None, Some(h)) => Quat::from_axis_angle(h, theta - theta_now),
        (None, None) => Quat::from_axis_angle(v.any_orthonormal_vector(), theta - theta_now),
    }
}

/// The turn about the root→target line `n` that brings the middle joint (offset
/// `middle` from the root) to the pole's side: the signed angle between their
/// components across `n`, `atan2(n · (m × p), m · p)`. None when either lies on the
/// line (the bend plane is kept).
fn swing_to_pole(root: Vec3, middle: Vec3, pole: Vec3, n: Vec3) -> Quat {
    let m = middle - n * n.dot(middle);
    let p = (pole - root) - n * n.dot(pole - root);
    if n == Vec3::ZERO || m.length() <= EPSILON || p.length() <= EPSILON {
        return Quat::IDENTITY;
    }
    Quat::from_axis_angle(n, n.dot(m.cross(p)).atan2(m.dot(p)))
}

/// `slerp(1, q, w)` for both turns.
fn apply_weight(root: Quat, middle: Quat, weight: f32) -> LimbRotations {
    if weight >= 1.0 {
        return LimbRotations { root, middle };
    }
    LimbRotations {
        root: Quat::IDENTITY.slerp(root, weight),
        middle: Quat::IDENTITY.slerp(middle, weight),
    }
}

/// Solves one limb of a normalized pose for a target, editing the pose.
///
/// Runs on the solver thread every frame: no allocation, no I/O, no panic.
pub struct LimbIk<'a> {
    /// The body the pose is on, built once.
    pub body: &'a BodyProportions,
    pub limb: Limb,
    /// Where the end joint (wrist, ankle) should go, humanoid model space, metres.
    pub target: Vec3,
    /// A point the elbow or knee bends toward, humanoid model space, metres.
    pub pole: Vec3,
    /// The end bone's (hand's, foot's) model rotation relative to its T-pose; `None`
    /// keeps its local rotation.
    pub end_rotation: Option<Quat>,
    /// See `TwoBoneIk::softness`.
    pub softness: f32,
    /// Blend from the current pose (0) to the solved one (1).
    pub weight: f32,
    /// In: `pose` on `body`. Out: the limb's three bones updated; bones below the end
    /// (fingers, toes) are left stale.
    pub frame: &'a mut BodyFrame,
    /// The pose; the limb's three bones get new normalized rotations.
    pub pose: &'a mut HumanoidPose,
}

impl LimbIk<'_> {
    /// Rejects a body without the limb and what `TwoBoneIk` rejects.
    pub fn validate(&self) -> Result<(), IkError> {
        if let Some(missing) = self.limb.bones().into_iter().find(|b| !self.body.has(*b)) {
            return Err(IkError::MissingBone(missing));
        }
        self.two_bone(&mut LimbRotations::default()).validate()
    }

    fn two_bone<'o>(&self, out: &'o mut LimbRotations) -> TwoBoneIk<'o> {
        let [a, b, c] = self.limb.bones().map(|b| self.frame.position(b));
        TwoBoneIk {
            root: a,
            middle: b,
            end: c,
            target: self.target,
            pole: self.pole,
            softness: self.softness,
            weight: self.weight,
            out,
        }
    }

    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let mut turn = LimbRotations::default();
        self.two_bone(&mut turn).run()?;
        let [upper, lower, end] = self.limb.bones();
        let frame = self.frame;
        let (a, b, c) = (
            frame.position(upper),
            frame.position(lower),
            frame.position(end),
        );
        // M' = root · M for the upper bone, root · middle · M below it; then
        // N(b) = M'(parent)⁻¹ · M'(b).
        let parent = upper.parent().map_or(Quat::IDENTITY, |p| frame.rotation(p));
        let upper_model = (turn.root * frame.rotation(upper)).normalize();
        let below = turn.root * turn.middle;
        let lower_model = (below * frame.rotation(lower)).normalize();
        let carried = below * frame.rotation(end);
        let end_model = match self.end_rotation {
            Some(r) => carried.slerp(r, self.weight),
            None => carried,
        }
        .normalize();
        self.pose
            .set_rotation(upper, (parent.conjugate() * upper_model).normalize());
        self.pose
            .set_rotation(lower, (upper_model.conjugate() * lower_model).normalize());
        self.pose
            .set_rotation(end, (lower_model.conjugate() * end_model).normalize());
        let [middle_position, end_position] = turn.apply(a, b, c);
        frame.model_rotations[upper.index()] = upper_model;
        frame.model_rotations[lower.index()] = lower_model;
        frame.model_rotations[end.index()] = end_model;
        frame.model_positions[lower.index()] = middle_position;
        frame.model_positions[end.index()] = end_position;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(b: Vec3, target: Vec3, weight: f32, softness: f32) -> Result<(), IkError> {
        TwoBoneIk {
            root: Vec3::ZERO,
            middle: b,
            end: Vec3::X,
            target,
            pole: Vec3::Z,
            softness,
            weight,
            out: &mut LimbRotations::default(),
        }
        .validate()
    }

    #[test]
    fn validate_rejects_a_zero_length_bone_and_bad_numbers() {
        let x = Vec3::X * 0.5;
        assert!(matches!(
            job(Vec3::ZERO, Vec3::Y, 1.0, 0.0),
            Err(IkError::DegenerateLimb { .. })
        ));
        assert!(matches!(
            job(x, Vec3::NAN, 1.0, 0.0),
            Err(IkError::BadTarget(_))
        ));
        assert!(matches!(
            job(x, Vec3::Y, 1.5, 0.0),
            Err(IkError::BadWeight(_))
        ));
        assert!(matches!(
            job(x, Vec3::Y, 1.0, 1.0),
            Err(IkError::BadSoftness(_))
        ));
        assert!(job(x, Vec3::Y, 1.0, 0.0).is_ok());
    }
}
