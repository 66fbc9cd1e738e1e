//! The source's own foot contacts over a whole clip (`SourceContacts`): what mocap
//! mode's evaluation scores skate on, and what the solver's live contacts are compared
//! with. Found from the source's feet alone, on the source's body: its floor is a
//! plane through the lowest slow sole of each frame (`ik::mocap::sole_height`: a
//! toe joint less the toe's rest height over the soles; `ik::mocap::is_slow` on that
//! joint's speed; every frame's lowest sole when no sole is ever slow): its tilt the
//! least-squares slope of those soles' heights over where they stand, shrunk where
//! the soles spread less than `LEVEL_SPREAD` hips heights and at most `MAX_TILT`
//! (a capture volume calibrated off level rises a few centimetres over a long walk),
//! its height the `floor_percentile` low percentile of the soles over the tilted
//! plane. A foot's contact is `ik::mocap::FootContact`'s test over that floor under
//! the ankle on the source's hips height, frame after frame, as mocap mode runs it
//! live on the floor it follows. Where the take stands on something (a box, a
//! step, a stage: `RaisedLevels`), the floor under a foot is that level: a patch
//! of `ik::mocap::LEVEL_CELL` hips heights on which soles stood
//! (`FootContact::stands`) `RAISED` hips heights or more above the plane for
//! `LEVEL_SECONDS` or more, at the lowest of them (soles `RAISED` apart on one
//! patch stand on two surfaces of it): mocap mode's live patches (`ik::mocap`'s
//! `levels`), read over the whole clip. Pure code over frames
//! already retargeted to normalized poses.

use std::collections::BTreeMap;

use glam::{Vec2, Vec3};

use crate::humanoid::HumanBone;
use crate::ik::body::{BodyFrame, BodyProportions};
use crate::ik::mocap::{
    FootContact, FootSpeeds, LEVEL_CELL, LEVEL_SECONDS, MocapIkConfig, RAISED, is_slow,
    level_under, patch_of, same_surface, sole_height, sole_joint,
};

use super::frame_interval;

/// Below this spread of the soles along a direction, in hips heights, the floor's
/// slope along it is shrunk towards level (a walk in place shows no tilt).
const LEVEL_SPREAD: f32 = 0.5;
/// The steepest floor read, rise over run (about 3°): a steeper trend of the soles
/// is the motion's (a climb), not the floor's.
const MAX_TILT: f32 = 0.05;

/// Where the source's feet are on each frame, collected before `finish`.
#[derive(Debug, Clone, Default)]
pub struct SourceContacts {
    /// Per frame: ankle and sole joint positions and sole heights (left, right),
    /// source metres.
    ankles: Vec<[(Vec3, Vec3); 2]>,
    soles: Vec<[f32; 2]>,
    /// Per frame and foot, once `finish` ran: in contact.
    pub contacts: Vec<[bool; 2]>,
    /// The floor found under the soles' mean place, source model metres.
    pub floor: f32,
    /// The floor's rise per metre along X and Z, and the place `floor` is at.
    pub tilt: Vec2,
    pub centre: Vec2,
}

impl SourceContacts {
    /// Room for `frames` frames.
    #[must_use]
    pub fn with_capacity(frames: usize) -> Self {
        Self {
            ankles: Vec::with_capacity(frames),
            soles: Vec::with_capacity(frames),
            ..Self::default()
        }
    }

    /// Adds one frame: `frame` is the pose's forward kinematics on the source's `body`
    /// (feet and toes up to date).
    pub fn push(&mut self, frame: &BodyFrame, body: &BodyProportions) {
        let feet = [HumanBone::LeftFoot, HumanBone::RightFoot];
        self.ankles.push([0, 1].map(|side| {
            (
                frame.position(feet[side]),
                frame.position(sole_joint(body, side)),
            )
        }));
        self.soles
            .push([0, 1].map(|side| sole_height(frame, body, side)));
    }

    /// Finds the floor and the contacts (module header); `times` are the frames'.
    pub fn finish(&mut self, body: &BodyProportions, times: &[f32], config: &MocapIkConfig) {
        let hips_height = body.rest_hips_height();
        let mut feet = [FootContact::default(); 2];
        // Per frame and foot: the speeds, and whether the sole stands.
        let (speeds, standing): (Vec<[FootSpeeds; 2]>, Vec<[bool; 2]>) =
            (self.ankles.iter().enumerate())
                .map(|(i, ankles)| {
                    let dt = frame_interval(times, i);
                    let speeds =
                        [0, 1].map(|side| feet[side].track(ankles[side].0, ankles[side].1, dt));
                    let slow = speeds.map(|s| is_slow(s.sole, hips_height, config));
                    (speeds, [0, 1].map(|side| feet[side].stands(slow[side], dt)))
                })
                .unzip();
        // Per frame, the lowest (slow) sole: where it stands and its height.
        let lowest_of = |slow_only: bool| -> Vec<(Vec2, f32)> {
            (self.soles.iter().zip(&speeds).zip(&self.ankles))
                .filter_map(|((soles, speeds), ankles)| {
                    [0, 1]
                        .into_iter()
                        .filter(|&side| {
                            !slow_only || is_slow(speeds[side].sole, hips_height, config)
                        })
                        .filter(|&side| soles[side].is_finite())
                        .map(|side| {
                            let at = ankles[side].1;
                            (Vec2::new(at.x, at.z), soles[side])
                        })
                        .reduce(|a, b| if b.1 < a.1 { b } else { a })
                })
                .collect()
        };
        let mut lowest = lowest_of(true);
        if lowest.is_empty() {
            lowest = lowest_of(false);
        }
        (self.tilt, self.centre) = tilt(&lowest, hips_height);
        let mut over: Vec<f32> = lowest
            .iter()
            .map(|&(at, h)| h - self.tilt.dot(at - self.centre))
            .collect();
        over.sort_by(f32::total_cmp);
        let p = config.floor_percentile.clamp(0.0, 1.0);
        let at = ((over.len().saturating_sub(1)) as f32 * p).round() as usize;
        self.floor = over.get(at).copied().unwrap_or(0.0);
        let rest = [HumanBone::LeftFoot, HumanBone::RightFoot].map(|f| body.rest_height(f));
        let (floor, tilt, centre) = (self.floor, self.tilt, self.centre);
        let plane = |at: Vec2| floor + tilt.dot(at - centre);
        let levels = self.raised_levels(&standing, plane, times, hips_height);
        self.contacts = (self.ankles.iter().zip(&speeds).zip(&self.soles))
            .map(|((ankles, speeds), soles)| {
                [0, 1].map(|side| {
                    let (ankle, sole) = ankles[side];
                    let at = Vec2::new(sole.x, sole.z);
                    let under = plane(Vec2::new(ankle.x, ankle.z))
                        + levels.above_plane(at, soles[side] - plane(at));
                    let height = ankle.y - under - rest[side];
                    feet[side].update(speeds[side].ankle, height, hips_height, config)
                })
            })
            .collect();
    }
}

impl SourceContacts {
    /// The patches the take stands on above the `plane` (module header), from every
    /// standing sole (both feet of every frame).
    fn raised_levels(
        &self,
        standing: &[[bool; 2]],
        plane: impl Fn(Vec2) -> f32,
        times: &[f32],
        hips_height: f32,
    ) -> RaisedLevels {
        let cell = LEVEL_CELL * hips_height;
        // Per patch and surface of it (`same_surface`): the lowest raised standing
        // sole over the plane, and for how long.
        let mut patches: BTreeMap<(i32, i32), Vec<(f32, f32)>> = BTreeMap::new();
        for (i, ((soles, standing), ankles)) in
            (self.soles.iter().zip(standing).zip(&self.ankles)).enumerate()
        {
            let dt = frame_interval(times, i);
            for side in 0..2 {
                let at = Vec2::new(ankles[side].1.x, ankles[side].1.z);
                let over = soles[side] - plane(at);
                if over.is_finite() && over >= RAISED * hips_height && standing[side] {
                    let surfaces = patches.entry(patch_of(at, cell)).or_default();
                    match surfaces
                        .iter_mut()
                        .find(|(level, _)| same_surface(*level, over, hips_height))
                    {
                        Some(surface) => *surface = (surface.0.min(over), surface.1 + dt),
                        None => surfaces.push((over, dt)),
                    }
                }
            }
        }
        let raised = patches
            .into_iter()
            .flat_map(|(key, surfaces)| surfaces.into_iter().map(move |s| (key, s)))
            .filter(|(_, (_, seconds))| *seconds >= LEVEL_SECONDS)
            .map(|(key, (level, _))| (key, level))
            .collect();
        RaisedLevels { cell, raised }
    }
}

/// Patches of the take's floor above its plane (`SourceContacts::raised_levels`).
struct RaisedLevels {
    /// A patch's side, source metres.
    cell: f32,
    /// Per patch (`ik::mocap::patch_of`) and surface of it, how far it stands above
    /// the plane.
    raised: Vec<((i32, i32), f32)>,
}

impl RaisedLevels {
    /// How far the floor under a sole at `at` (X, Z), `sole` above the plane, stands
    /// above the plane: a raised patch's level under it or beside it
    /// (`ik::mocap::level_under`), else 0.
    fn above_plane(&self, at: Vec2, sole: f32) -> f32 {
        let levels = self.raised.iter().copied();
        level_under(at, sole, self.cell, levels).unwrap_or(0.0)
    }
}

/// The floor's tilt (rise per metre along X and Z) fitted to `soles` (where each
/// stands, its height) and their mean place (module header): the least-squares
/// slope, its normal equations' spread raised by `LEVEL_SPREAD` hips heights squared
/// so that a direction the soles barely move along stays level, at most `MAX_TILT`.
fn tilt(soles: &[(Vec2, f32)], hips_height: f32) -> (Vec2, Vec2) {
    let n = soles.len().max(1) as f32;
    let centre = soles.iter().map(|s| s.0).sum::<Vec2>() / n;
    let mean = soles.iter().map(|s| s.1).sum::<f32>() / n;
    let (mut xx, mut xz, mut zz, mut xh, mut zh) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(at, h) in soles {
        let d = at - centre;
        let dh = h - mean;
        xx += d.x * d.x / n;
        xz += d.x * d.y / n;
        zz += d.y * d.y / n;
        xh += d.x * dh / n;
        zh += d.y * dh / n;
    }
    let level = (LEVEL_SPREAD * hips_height).powi(2);
    let (a, b, d) = (xx + level, xz, zz + level);
    let det = a * d - b * b;
    if !(det.is_finite() && det > 0.0) {
        return (Vec2::ZERO, centre);
    }
    let slope = Vec2::new(d * xh - b * zh, a * zh - b * xh) / det;
    let slope = match slope.is_finite() {
        true => slope.clamp_length_max(MAX_TILT),
        false => Vec2::ZERO,
    };
    (slope, centre)
}

#[cfg(test)]
mod tests {
    use glam::Vec3A;

    use super::*;
    use crate::humanoid::BONE_COUNT;
    use HumanBone as B;

    /// Hips 1 m up, ankles 8 cm, toes 2 cm, 12 cm ahead.
    fn body() -> BodyProportions {
        let mut rest = [None; BONE_COUNT];
        rest[B::Hips.index()] = Some(Vec3::Y);
        for (x, foot, toe) in [
            (0.1, B::LeftFoot, B::LeftToes),
            (-0.1, B::RightFoot, B::RightToes),
        ] {
            rest[foot.index()] = Some(Vec3::new(x, 0.08, 0.0));
            rest[toe.index()] = Some(Vec3::new(x, 0.02, 0.12));
        }
        BodyProportions::from_positions(&rest, 1.0)
    }

    /// A frame with the ankles at `left` and `right`, each toe 6 cm lower and
    /// 12 cm ahead.
    fn feet_at(left: Vec3, right: Vec3) -> BodyFrame {
        let mut frame = BodyFrame::default();
        for (bone, at) in [
            (B::LeftFoot, left),
            (B::LeftToes, left + Vec3::new(0.0, -0.06, 0.12)),
            (B::RightFoot, right),
            (B::RightToes, right + Vec3::new(0.0, -0.06, 0.12)),
        ] {
            frame.model_positions[bone.index()] = Vec3A::from(at);
        }
        frame
    }

    #[test]
    fn contacts_are_the_slow_feet_near_the_floor_the_slow_toes_stand_on() {
        // The capture's floor 3 cm above its rig's.
        let body = body();
        let floor = 0.03;
        // 40 frames at 40 Hz: the left foot stands for 20 then moves at 1 m/s, thrown
        // 20 cm through the floor on 4 frames (10% of the clip); the right foot
        // stands on the floor throughout.
        let times: Vec<f32> = (0..40).map(|i| i as f32 / 40.0).collect();
        let mut contacts = SourceContacts::with_capacity(times.len());
        for (i, t) in times.iter().enumerate() {
            let glitch = if (30..34).contains(&i) { -0.2 } else { 0.0 };
            let left = Vec3::new(0.1, 0.08 + floor + glitch, (t - 0.5).max(0.0));
            let right = Vec3::new(-0.1, 0.08 + floor, 0.0);
            contacts.push(&feet_at(left, right), &body);
        }
        contacts.finish(&body, &times, &MocapIkConfig::default());
        assert!((contacts.floor - floor).abs() < 1e-5, "{}", contacts.floor);
        // No contact on the first frame: no speed yet.
        for (i, [left, right]) in contacts.contacts.iter().enumerate() {
            assert_eq!(*right, i > 0, "frame {i}");
            assert_eq!(*left, i > 0 && times[i] <= 0.5, "frame {i}");
        }
    }

    #[test]
    fn a_foot_standing_on_a_box_is_in_contact_with_the_box() {
        // 4 s at 40 Hz: the right foot stands on the floor throughout; the left
        // stands on the floor for 1 s, steps up 1 m ahead onto a box 40 cm high over
        // 0.5 s, stands there 1 s, and steps back down. Its stance on the box is a
        // contact (but for its first frame, the foot still moving into it): the
        // plane alone would put it 40 cm over the floor.
        let body = body();
        let times: Vec<f32> = (0..160).map(|i| i as f32 / 40.0).collect();
        let left = |t: f32| {
            let up = match t {
                t if t < 1.0 => 0.0,
                t if t < 1.5 => (t - 1.0) / 0.5,
                t if t < 2.5 => 1.0,
                t if t < 3.0 => 1.0 - (t - 2.5) / 0.5,
                _ => 0.0,
            };
            Vec3::new(0.1, 0.08 + 0.4 * up, up)
        };
        let mut contacts = SourceContacts::with_capacity(times.len());
        for t in &times {
            contacts.push(&feet_at(left(*t), Vec3::new(-0.1, 0.08, 0.0)), &body);
        }
        contacts.finish(&body, &times, &MocapIkConfig::default());
        assert!(contacts.floor.abs() < 1e-5, "{}", contacts.floor);
        for (i, t) in times.iter().enumerate() {
            if *t > 1.55 && *t < 2.5 {
                assert!(contacts.contacts[i][0], "frame {i} on the box");
            }
            if *t > 1.1 && *t < 1.4 {
                assert!(!contacts.contacts[i][0], "frame {i} stepping up");
            }
        }
    }

    #[test]
    fn a_capture_floor_rising_along_a_long_walk_holds_every_stance() {
        // An 8 s walk at 1 m/s along +Z on a floor rising 2 cm per metre (16 cm over
        // the walk, more than the 10 cm a contact may stand above a level floor):
        // each foot stands half a second, then swings a metre ahead in the next half.
        let body = body();
        let rise = 0.02;
        let times: Vec<f32> = (0..320).map(|i| i as f32 / 40.0).collect();
        // Where a foot is at `t` with its cycle shifted by `phase` seconds, and
        // whether it stands.
        let foot = |t: f32, phase: f32, x: f32| {
            let c = t + phase;
            let (step, within) = (c.floor(), c.fract());
            let (z, lift, stands) = match within < 0.5 {
                true => (step, 0.0, true),
                false => {
                    let s = (within - 0.5) / 0.5;
                    (step + s, 0.1 * (std::f32::consts::PI * s).sin(), false)
                }
            };
            let z = z - phase;
            (Vec3::new(x, 0.08 + rise * z + lift, z), stands)
        };
        let mut contacts = SourceContacts::with_capacity(times.len());
        let mut standing = Vec::new();
        for t in &times {
            let (left, l) = foot(*t, 0.0, 0.1);
            let (right, r) = foot(*t, 0.5, -0.1);
            contacts.push(&feet_at(left, right), &body);
            standing.push([l, r]);
        }
        contacts.finish(&body, &times, &MocapIkConfig::default());
        assert!((contacts.tilt.y - rise).abs() < 0.002, "{}", contacts.tilt);
        // Every stance frame after a stance's first (the foot was still moving into
        // it) is a contact, at the start of the walk and at its end.
        for (i, pair) in standing.windows(2).enumerate() {
            let held = [0, 1].map(|side| pair[0][side] && pair[1][side]);
            for (side, (&held, &contact)) in held.iter().zip(&contacts.contacts[i + 1]).enumerate()
            {
                assert!(!held || contact, "frame {}, foot {side}", i + 1);
            }
        }
    }
}
