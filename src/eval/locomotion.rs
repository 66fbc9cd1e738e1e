//! Whether a clip is locomotion (`Travel`): how fast its hips travel over the ground,
//! in the source's own hips heights per second, so units and body size do not matter.
//! The speed is the mean horizontal distance the hips cover in `WINDOW_SECONDS` (the
//! whole clip when shorter), which the sway of a step or a dance in place barely
//! moves, divided by that time; a clip at `LOCOMOTION_SPEED` or faster, and no
//! shorter than a step (`LOCOMOTION_SECONDS`), is locomotion when the body is
//! upright all along (`UPRIGHT_SHARE` of its frames with the head above the hips
//! by half their T-pose distance or more): a cartwheel or a roll travels too, but
//! no one walks it. A walk in place (a game's walk cycle with
//! its root motion taken out) is not locomotion: nothing travels.

use crate::formats::Motion;
use crate::humanoid::{HumanBone, HumanoidPose};
use crate::ik::body::{BodyFrame, BodyProportions, TORSO};
use crate::retarget::{JobError, MappedSkeleton, SourceRig, ToNormalized};

/// The span the hips' travel is measured over, seconds.
const WINDOW_SECONDS: f32 = 1.0;

/// Slowest locomotion, hips heights per second: a slow walk (0.5 m/s on hips 0.9 m
/// high) is 0.55, standing, turning on the spot or dancing in place stays under 0.1.
pub const LOCOMOTION_SPEED: f32 = 0.25;

/// The shortest locomotion clip, seconds: a clip shorter than a step (a brisk
/// step takes half a second, a run's about a third) shows no walk to measure,
/// however far its hips move between two frames.
pub const LOCOMOTION_SECONDS: f32 = 0.5;

/// The share of frames a locomotion clip is upright on.
pub const UPRIGHT_SHARE: f32 = 0.95;

/// How a clip's hips travel.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Travel {
    /// Mean horizontal speed of the hips over `WINDOW_SECONDS`, the source's hips
    /// heights per second.
    pub speed: f32,
    /// Horizontal distance from the first frame's hips to the last's, hips heights.
    pub distance: f32,
    pub seconds: f32,
    /// The share of frames with the head above the hips by half their T-pose
    /// distance or more.
    pub upright: f32,
}

impl Travel {
    /// Measures `motion` on `source`.
    pub fn of(source: &MappedSkeleton, motion: &Motion) -> Result<Self, JobError> {
        let rig = SourceRig::new(source);
        let body = BodyProportions::new(source);
        let rest_rise =
            body.rest_position(HumanBone::Head).y - body.rest_position(HumanBone::Hips).y;
        let mut torso = BodyFrame::default();
        let mut upright = 0usize;
        let mut pose = HumanoidPose::default();
        let mut hips = Vec::with_capacity(motion.frame_count());
        for frame in motion.frames() {
            ToNormalized {
                source: &rig,
                local_rotations: frame.rotations,
                local_translations: frame.translations,
                pose: &mut pose,
            }
            .run()?;
            torso.update_bones(&body, &pose, &TORSO);
            let rise = torso.position(HumanBone::Head).y - torso.position(HumanBone::Hips).y;
            upright += usize::from(rise >= 0.5 * rest_rise);
            let p = pose.hips_position / pose.rest_hips_height.max(1e-6);
            hips.push(glam::Vec2::new(p.x, p.z));
        }
        let times = motion.times();
        let seconds = motion.duration();
        let (Some(first), Some(last)) = (hips.first(), hips.last()) else {
            return Ok(Self::default());
        };
        let window = WINDOW_SECONDS.min(seconds);
        let end = times.last().copied().unwrap_or(0.0);
        if window <= 0.0 {
            return Ok(Self::default());
        }
        // For each frame a window's length before the end: the hips' distance to
        // where they are a window later (the first frame at or past it).
        let (mut sum, mut count, mut j) = (0.0f32, 0usize, 0usize);
        for (i, t) in times.iter().enumerate() {
            if *t + window > end + 1e-6 {
                break;
            }
            j = j.max(i);
            while j + 1 < times.len() && times[j] < t + window - 1e-6 {
                j += 1;
            }
            sum += hips[i].distance(hips[j]);
            count += 1;
        }
        Ok(Self {
            speed: sum / count.max(1) as f32 / window,
            distance: first.distance(*last),
            seconds,
            upright: upright as f32 / hips.len().max(1) as f32,
        })
    }

    /// Whether the hips travel at `LOCOMOTION_SPEED` or faster, upright, for
    /// `LOCOMOTION_SECONDS` or longer.
    #[must_use]
    pub fn is_locomotion(&self) -> bool {
        self.why_not_locomotion().is_none()
    }

    /// Why the clip is not locomotion, or `None` when it is.
    #[must_use]
    pub fn why_not_locomotion(&self) -> Option<String> {
        if self.seconds < LOCOMOTION_SECONDS {
            Some(format!(
                "not locomotion: {:.2} s long (< {LOCOMOTION_SECONDS} s, shorter than a step)",
                self.seconds
            ))
        } else if self.speed < LOCOMOTION_SPEED {
            Some(format!(
                "not locomotion: hips travel {:.2} hips heights/s (< {LOCOMOTION_SPEED}) over {:.2} s",
                self.speed, self.seconds
            ))
        } else if self.upright < UPRIGHT_SHARE {
            Some(format!(
                "not locomotion: upright on {:.0}% of its frames (< {:.0}%), though the hips travel {:.2} hips heights/s",
                self.upright * 100.0,
                UPRIGHT_SHARE * 100.0,
                self.speed
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::formats::inspect::map_rig;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::skeleton::builtin::HUMANOID_JSON;

    fn humanoid() -> MappedSkeleton {
        let rig = embedded_rig("humanoid.json", HUMANOID_JSON);
        map_rig("humanoid.json", &rig, None).expect("the built-in humanoid maps")
    }

    /// 3 s at 30 Hz of the rest pose, the hips turned by `turn` and moved by
    /// `velocity` (hips heights per second) from their rest place.
    fn clip(mapped: &MappedSkeleton, velocity: Vec3, turn: Quat) -> Motion {
        let hips = mapped.map.joint(HumanBone::Hips).expect("hips");
        let height = mapped.rest_hips_height();
        let (rest_rotations, rest_translations) = (
            mapped.skeleton.rest_rotations(),
            mapped.skeleton.rest_translations(),
        );
        let (mut rotations, mut translations) = (Vec::new(), Vec::new());
        for i in 0..90 {
            let t = i as f32 / 30.0;
            let mut r = rest_rotations.clone();
            let mut p = rest_translations.clone();
            r[hips] = turn * r[hips];
            p[hips] += velocity * height * t;
            rotations.extend(r);
            translations.extend(p);
        }
        Motion::uniform(1.0 / 30.0, mapped.skeleton.len(), rotations, translations)
    }

    #[test]
    fn walking_speed_upright_is_locomotion_and_standing_or_upside_down_is_not() {
        let mapped = humanoid();
        let walk = Travel::of(
            &mapped,
            &clip(&mapped, Vec3::new(0.6, 0.0, 0.8), Quat::IDENTITY),
        )
        .expect("retargets");
        assert!((walk.speed - 1.0).abs() < 1e-3, "{walk:?}");
        assert!(walk.is_locomotion() && walk.why_not_locomotion().is_none());
        // The same walk over two frames (1/30 s) is no walk.
        let two_frames = Travel {
            seconds: 1.0 / 30.0,
            ..walk
        };
        assert!(!two_frames.is_locomotion());
        assert!(
            two_frames
                .why_not_locomotion()
                .is_some_and(|w| w.contains("shorter than a step"))
        );
        let still = Travel::of(&mapped, &clip(&mapped, Vec3::ZERO, Quat::IDENTITY)).expect("ok");
        assert!(!still.is_locomotion(), "{still:?}");
        assert!(
            still
                .why_not_locomotion()
                .is_some_and(|w| w.contains("hips travel"))
        );
        let flipped = Quat::from_rotation_z(std::f32::consts::PI);
        let cartwheel = Travel::of(&mapped, &clip(&mapped, Vec3::Z, flipped)).expect("ok");
        assert!(
            cartwheel.speed > LOCOMOTION_SPEED && cartwheel.upright < 0.01,
            "{cartwheel:?}"
        );
        assert!(
            cartwheel
                .why_not_locomotion()
                .is_some_and(|w| w.contains("upright"))
        );
    }
}
