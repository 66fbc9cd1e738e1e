//! VR mode's per-performer settings (`VrIkConfig`): softness of arms and legs,
//! shares of the spine, shoulders and forearms, stepping and gait thresholds, and
//! the time constants of the torso's smoothing. What users tune in
//! `config/bridge.json`.

/// Per-performer VR-mode settings; every field has a default.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VrIkConfig {
    /// `TwoBoneIk::softness` of the arms (default 0.005: a hand stops at most
    /// 0.7 mm short of a target at the arm's full reach, and a nearly straight arm
    /// does not shake its elbow with every millimetre of device noise; 0 hits every
    /// reachable target exactly).
    pub softness: f32,
    /// Share of the head's tilt the spine carries without a hips tracker (default 0.1).
    pub spine_share: f32,
    /// Share of the head's yaw relative to the hips that the spine carries without
    /// a chest tracker; the neck and the head take the rest (default 0.5: the neck
    /// turns the head further than the trunk turns the shoulders).
    pub spine_twist: f32,
    /// How far the shoulders turn toward a far hand, 0..=1 (default 0.3).
    pub shoulder_share: f32,
    /// A hand farther than this fraction of the arm's reach turns the shoulder
    /// (default 0.9): a raised one by `shoulder_share`, any one eased in as it
    /// nears the arm's full reach.
    pub shoulder_reach: f32,
    /// A planted foot steps when its footprint is this far away, fraction of the
    /// user's height (default 0.12).
    pub step_distance: f32,
    /// Share of the hand's roll the lower arm takes (default 0.8).
    pub forearm_twist: f32,
    /// A step lands this many seconds of the hips' motion ahead of the footprint,
    /// along the head's direction of travel (default 0.3).
    pub step_lead: f32,
    /// Seconds a step of `step_distance` takes when not walking (default 0.25); a
    /// longer one takes longer, by the square root of its length (the same peak
    /// acceleration); while walking a step takes a step's time at `walk_ratio`.
    pub step_seconds: f32,
    /// How high a stepping foot lifts, fraction of the height (default 0.03).
    pub step_height: f32,
    /// `TwoBoneIk::softness` of a leg without a foot tracker (default 0.1: no snap of
    /// the knee as the leg straightens; the same at every speed, so the knees do not
    /// move as a walker slows down or speeds up).
    pub leg_softness: f32,
    /// `TwoBoneIk::softness` of a leg following a foot tracker (default 0.02: a
    /// noisy tracker does not shake a nearly straight knee; the foot stops a few
    /// millimetres short of the tracker only while the leg is that straight).
    pub tracked_leg_softness: f32,
    /// Above this speed of the hips, user heights per second, or above half of it
    /// while the arms swing, the untracked feet walk: they step in turn as the arms
    /// swing, or the head sways from side to side (default 0.2).
    pub gait_speed: f32,
    /// Time constant of the path the head sways about, seconds (default 0.5).
    pub sway_seconds: f32,
    /// Sideways offset of the head from that path, fraction of the user's height,
    /// that says the body is over one foot (default 0.0035).
    pub sway_threshold: f32,
    /// Walking, the rate at which the left hand gains on the right along where the
    /// hips face, user heights per second, above which the arms' swing says which
    /// foot steps (it swings against the legs); below it for half a stride, the
    /// head's sway says (default 0.05).
    pub arm_swing_threshold: f32,
    /// Walk ratio: step length, user heights, over cadence, steps per second
    /// (default 0.23, an adult's 0.0065 m per step/min at 1.7 m). Walking at speed
    /// `v` a step is `√(walk_ratio · height · v)` long and takes
    /// `√(walk_ratio · height / v)` seconds, as people step longer and faster the
    /// faster they walk.
    pub walk_ratio: f32,
    /// The neck and spine follow the head's turn with this time constant, seconds
    /// (default 0.1; the head itself turns exactly).
    pub neck_seconds: f32,
    /// Without a hips tracker, the body turns to where the head faces with this
    /// time constant, seconds (default 0.3).
    pub body_turn_seconds: f32,
    /// Without a hips tracker, the neck joint (from which the whole body hangs)
    /// follows its target with this time constant, ahead of its own motion, and the
    /// neck turns to keep the head on target (default 0.1: the body does not shake
    /// with every jolt of the head).
    pub torso_seconds: f32,
    /// The same with a hips tracker and no chest tracker, where only the spine
    /// bends toward the neck joint (default 0.05).
    pub tracked_torso_seconds: f32,
    /// Without a hips tracker, a head below its standing height is a crouch: the
    /// spine leans forward so that the hips go back behind the head by this times
    /// the head's drop (default 0.7: a balanced squat puts the hips two thirds of
    /// the head's drop behind it and more in a shallow crouch; 0: the hips drop
    /// straight down).
    pub crouch_back: f32,
    /// The head's drop below its standing height is smoothed over this for
    /// `crouch_back`, seconds (default 0.5, about a step's time: the head's bob
    /// with each step does not rock the hips).
    pub crouch_seconds: f32,
}

impl Default for VrIkConfig {
    fn default() -> Self {
        Self {
            softness: 0.005,
            spine_share: 0.1,
            spine_twist: 0.5,
            shoulder_share: 0.3,
            shoulder_reach: 0.9,
            step_distance: 0.12,
            forearm_twist: 0.8,
            step_lead: 0.3,
            step_seconds: 0.25,
            step_height: 0.03,
            leg_softness: 0.1,
            tracked_leg_softness: 0.02,
            gait_speed: 0.2,
            sway_seconds: 0.5,
            sway_threshold: 0.0035,
            arm_swing_threshold: 0.05,
            walk_ratio: 0.23,
            neck_seconds: 0.1,
            body_turn_seconds: 0.3,
            torso_seconds: 0.1,
            tracked_torso_seconds: 0.05,
            crouch_back: 0.7,
            crouch_seconds: 0.5,
        }
    }
}
