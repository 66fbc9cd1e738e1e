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
//! pole moves continuously. A straight limb swings too, turning its hinge toward the
//! pole, so its roll does not jump as it straightens.
//!
//! No trigonometry: the angles are carried as the cosine and sine of their halves,
//! which is what the quaternions hold, from dot and cross products and the law of
//! cosines written so that it stays exact near straight and near folded.

use glam::{Quat, Vec3, Vec3A};

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
        self.bone_lengths().map(|_| ())
    }

    /// What `validate` checks; the two bone lengths when it passes.
    fn bone_lengths(&self) -> Result<(f32, f32), IkError> {
        let upper = self.root.distance(self.middle);
        let lower = self.middle.distance(self.end);
        check_limb(
            upper,
            lower,
            self.target,
            self.pole,
            self.weight,
            self.softness,
        )?;
        Ok((upper, lower))
    }

    pub fn run(self) -> Result<(), IkError> {
        let (upper, lower) = self.bone_lengths()?;
        *self.out = solve(
            [self.root, self.middle, self.end],
            [upper, lower],
            self.target,
            self.pole,
            self.softness,
            self.weight,
        );
        Ok(())
    }
}

/// `TwoBoneIk::validate` on numbers.
fn check_limb(
    upper: f32,
    lower: f32,
    target: Vec3,
    pole: Vec3,
    weight: f32,
    softness: f32,
) -> Result<(), IkError> {
    if !(upper.is_finite() && lower.is_finite() && upper > EPSILON && lower > EPSILON) {
        return Err(IkError::DegenerateLimb { upper, lower });
    }
    if !target.is_finite() {
        return Err(IkError::BadTarget(target));
    }
    if !pole.is_finite() {
        return Err(IkError::BadTarget(pole));
    }
    if !(0.0..=1.0).contains(&weight) {
        return Err(IkError::BadWeight(weight));
    }
    if !(0.0..1.0).contains(&softness) {
        return Err(IkError::BadSoftness(softness));
    }
    Ok(())
}

/// The two-bone solve on a checked limb `[root, middle, end]` with bone lengths
/// `[l1, l2]` (module header). No trigonometry: every angle is carried as the
/// cosine and sine of its half, which is what a quaternion holds.
fn solve(
    joints: [Vec3; 3],
    [l1, l2]: [f32; 2],
    target: Vec3,
    pole: Vec3,
    softness: f32,
    weight: f32,
) -> LimbRotations {
    // SIMD vectors inside: the same numbers, fewer instructions.
    let [a, b, c] = joints.map(Vec3A::from);
    let (target, pole) = (Vec3A::from(target), Vec3A::from(pole));
    let (direction, distance) = soften_target(a, target, l1, l2, softness);
    let (middle, hinge) = solve_middle_joint([a, b, c], [l1, l2], pole, distance);
    // The end after bending, then the root turn that puts it on the target line.
    let aim = arc(b + middle * (c - b) - a, direction);
    let swing = swing_to_pole(a, aim * hinge, pole, direction);
    // `swing` is not unit: this normalization is its own.
    let root = (swing * aim).normalize();
    apply_weight(root, middle, weight)
}

/// Direction from the root to the target and the distance the end joint should be
/// at: the target's, clamped to what the limb reaches and, with softening, eased:
///
/// ```text
/// reach = l1 + l2,  s = softness · reach,  r = reach − s
/// d' = d                              when d ≤ r
/// d' = r + s · (1 − exp(−(d − r)/s))  otherwise (tends to reach, never passes it)
/// ```
///
/// The direction is zero when the target is on the root.
fn soften_target(
    root: Vec3A,
    target: Vec3A,
    upper: f32,
    lower: f32,
    softness: f32,
) -> (Vec3A, f32) {
    let offset = target - root;
    let d = offset.length();
    let recip = d.recip();
    let direction = if recip.is_finite() {
        offset * recip
    } else {
        Vec3A::ZERO
    };
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

/// The shortest turn taking the direction of `from` onto the unit (or zero)
/// `to`: `(from × to, |from| + from · to)` normalized; half a turn about any axis
/// across `from` when they are opposite, none when `from` is zero.
fn arc(from: Vec3A, to: Vec3A) -> Quat {
    let length = from.length();
    let w = length + from.dot(to);
    if w > 2.0 * f32::EPSILON * length {
        let c = from.cross(to);
        return Quat::from_xyzw(c.x, c.y, c.z, w).normalize();
    }
    if length <= EPSILON {
        return Quat::IDENTITY;
    }
    let axis = (from / length).any_orthonormal_vector();
    Quat::from_xyzw(axis.x, axis.y, axis.z, 0.0)
}

/// Cosine and sine of half the angle whose cosine and sine are proportional to
/// `cos` and `sin`, `r = √(cos² + sin²)`, not normalized: `(r + cos, sin)`, or, past
/// a right angle where that cancels, `(sin, r − cos)` (the same direction, times
/// the sign of `sin`; the sign is put back so the cosine of the half angle is ≥ 0, as
/// for an angle in −π..=π).
fn half_angle(cos: f32, sin: f32, r: f32) -> (f32, f32) {
    if cos >= 0.0 {
        (r + cos, sin)
    } else {
        (sin.abs(), (r - cos).copysign(sin))
    }
}

/// A quaternion turning about the unit `axis` by the angle whose half has cosine
/// `cos` and sine `sin` (unit when they are).
fn turn(axis: Vec3A, cos: f32, sin: f32) -> Quat {
    let v = axis * sin;
    Quat::from_xyzw(v.x, v.y, v.z, cos)
}

/// The middle joint's turn (model space, about the middle joint) that gives the end
/// joint distance `distance` from the root, and the hinge it turns about (the bend
/// axis after the turn, unit, also when the limb ends straight). The interior angle
/// comes from the law of cosines, `cos θ = (l1² + l2² − d²) / (2 l1 l2)`, and is
/// reached by turning the lower bone about the bend axis `h`: the current one,
/// `(a − b) × (c − b)`, when the limb is bent toward the pole's side; else the
/// pole's, `(c − b) × p` with `p` the pole's offset across the root→end line (after
/// straightening the limb when it was bent the other way).
///
/// Half angles without acos, and exact near straight and near folded:
/// `cos²(θ/2) = (L − d)(L + d) / 4 l1 l2` and `sin²(θ/2) = (d − Δ)(d + Δ) / 4 l1 l2`,
/// `L = l1 + l2`, `Δ = l1 − l2`; the current angle's from `u · v` and `|u × v|`
/// (`half_angle`).
fn solve_middle_joint(
    [a, b, c]: [Vec3A; 3],
    [l1, l2]: [f32; 2],
    pole: Vec3A,
    distance: f32,
) -> (Quat, Vec3A) {
    let u = a - b;
    let v = c - b;
    let reach = l1 + l2;
    let gap = l1 - l2;
    let open = ((reach - distance) * (reach + distance)).max(0.0);
    let bent = ((distance - gap) * (distance + gap)).max(0.0);
    let scale = (open + bent).recip();
    // θ: the interior angle wanted; θn: the current one.
    let (cos_t, sin_t) = ((open * scale).sqrt(), (bent * scale).sqrt());
    let cross = u.cross(v);
    let cross_length = cross.length();
    let (x, y) = half_angle(u.dot(v), cross_length, l1 * l2);
    let n = (x * x + y * y).sqrt().recip();
    let (cos_n, sin_n) = (x * n, y * n);
    // By θ − θn.
    let (cos_d, sin_d) = (cos_t * cos_n + sin_t * sin_n, sin_t * cos_n - cos_t * sin_n);
    // The pole's bend axis, not normalized: v × (pole offset across the a→c line).
    let pole_offset = pole - a;
    let line = c - a;
    let line_squared = line.length_squared();
    let across = if line_squared > EPSILON * EPSILON {
        pole_offset - line * (line.dot(pole_offset) / line_squared)
    } else {
        pole_offset - v * (v.dot(pole_offset) / (l2 * l2))
    };
    let pole_bend = v.cross(across);
    if cross_length <= EPSILON * l1 * l2 {
        // Straight or folded: bend toward the pole.
        let h = pole_bend
            .try_normalize()
            .unwrap_or_else(|| (v / l2).any_orthonormal_vector());
        return (turn(h, cos_d, sin_d), h);
    }
    let h = cross / cross_length;
    if h.dot(pole_bend) >= 0.0 {
        return (turn(h, cos_d, sin_d), h);
    }
    // Bent away from the pole: straighten about h (by π − θn), then bend about the
    // pole's axis for the straight limb (by θ − π; lower bone along −u, so the line
    // is −u too).
    let straight = -u / l1;
    let across = pole_offset - straight * straight.dot(pole_offset);
    let bend_axis = straight.cross(across).try_normalize().unwrap_or(-h);
    let middle = turn(bend_axis, sin_t, -cos_t) * turn(h, sin_n, cos_n);
    (middle, bend_axis)
}

/// The turn about the root→target line `n` that brings the middle joint to the
/// pole's side, not normalized: the signed angle from `m`, the side the middle joint
/// bends to, to `p`, the pole's offset across `n`, whose cosine and sine go as
/// `m · p` and `n · (m × p)`. With `k` the limb's hinge (unit, across the limb's
/// plane, which holds `n`), the middle joint is off the line along the unit
/// `m = k × n`: defined also for a straight limb, which so turns its hinge toward the
/// pole as well. None when the pole lies on the line (the bend plane is kept).
fn swing_to_pole(root: Vec3A, hinge: Vec3A, pole: Vec3A, n: Vec3A) -> Quat {
    let m = hinge.cross(n);
    let p = (pole - root) - n * n.dot(pole - root);
    let pp = p.length_squared();
    if n == Vec3A::ZERO || pp <= EPSILON * EPSILON {
        return Quat::IDENTITY;
    }
    let (cos, sin) = half_angle(m.dot(p), n.dot(m.cross(p)), pp.sqrt());
    turn(n, cos, sin)
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
        self.joints().map(|_| ())
    }

    /// What `validate` checks; the limb's joints and bone lengths when it passes.
    fn joints(&self) -> Result<([Vec3; 3], [f32; 2]), IkError> {
        if let Some(missing) = self.limb.bones().into_iter().find(|b| !self.body.has(*b)) {
            return Err(IkError::MissingBone(missing));
        }
        let [a, b, c] = self.limb.bones().map(|b| self.frame.position(b));
        // The frame is on the body: its bones have the body's lengths.
        let (upper, lower) = self.body.limb_lengths(self.limb);
        check_limb(
            upper,
            lower,
            self.target,
            self.pole,
            self.weight,
            self.softness,
        )?;
        Ok(([a, b, c], [upper, lower]))
    }

    pub fn run(self) -> Result<(), IkError> {
        let (joints, lengths) = self.joints()?;
        let turn = solve(
            joints,
            lengths,
            self.target,
            self.pole,
            self.softness,
            self.weight,
        );
        let [upper, lower, end] = self.limb.bones();
        let frame = self.frame;
        let [a, b, c] = joints;
        // M' = root · M for the upper bone, root · middle · M below it; then
        // N(b) = M'(parent)⁻¹ · M'(b).
        // Products of unit quaternions: unit to rounding, as the frame's are (the
        // pose is rebuilt every frame, so no error builds up).
        let parent = upper.parent().map_or(Quat::IDENTITY, |p| frame.rotation(p));
        let upper_model = turn.root * frame.rotation(upper);
        let below = turn.root * turn.middle;
        let lower_model = below * frame.rotation(lower);
        let carried = below * frame.rotation(end);
        let end_model = match self.end_rotation {
            Some(r) => carried.slerp(r, self.weight).normalize(),
            None => carried,
        };
        self.pose
            .set_rotation(upper, parent.conjugate() * upper_model);
        self.pose
            .set_rotation(lower, upper_model.conjugate() * lower_model);
        self.pose
            .set_rotation(end, lower_model.conjugate() * end_model);
        // `LimbRotations::apply` with `below` reused.
        let middle_position = a + turn.root * (b - a);
        frame.model_rotations[upper.index()] = upper_model;
        frame.model_rotations[lower.index()] = lower_model;
        frame.model_rotations[end.index()] = end_model;
        frame.model_positions[lower.index()] = middle_position.into();
        frame.model_positions[end.index()] = (middle_position + below * (c - b)).into();
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
