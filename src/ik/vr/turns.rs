//! Stage 1 of a frame: how the head and the hips turn. The head's rotation is
//! smoothed over `neck_seconds` for the torso (the head itself turns exactly);
//! without a hips tracker the body faces where the head has been facing over the
//! last `body_turn_seconds`, so a glance aside turns the neck and spine, not the
//! hips. Walking, people face where they go while the head looks about: once the
//! head travels faster than `gait_speed`, the body faces its direction of travel
//! (the head's path, smoothed over half `body_turn_seconds` twice: device noise out,
//! the sway of the steps turns it only a few degrees) when that is within `TRAVEL_TRUSTED` of where the head
//! faces, easing back to the head's facing by `TRAVEL_IGNORED` (walking backwards or
//! sideways faces the head's way). With the angle helpers the stages share: a
//! rotation's yaw, an angle wrapped into −π..π.

use glam::{Quat, Vec3};

use super::VrIkConfig;
use super::devices::AvatarDevices;
use super::follower::settle;

/// A head that moves farther than this in one frame, fraction of the user's height,
/// jumped: the torso's smoothing starts afresh.
const JUMP: f32 = 0.2;

/// The body faces the head's direction of travel when it is within this angle of
/// where the head faces, radians (45°), and not at all beyond `TRAVEL_IGNORED` (75°).
const TRAVEL_TRUSTED: f32 = std::f32::consts::FRAC_PI_4;
const TRAVEL_IGNORED: f32 = 75.0 * std::f32::consts::PI / 180.0;

/// What the head's smoothing carries from frame to frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct HeadSmoothing {
    /// Last frame's head joint, avatar model space.
    position: Vec3,
    /// The head's rotation smoothed for the torso.
    turn: Quat,
    /// The smoothed yaw the body faces without a hips tracker, radians.
    body_yaw: f32,
    /// The head's horizontal position smoothed over half `body_turn_seconds`, and
    /// its velocity, smoothed again: the direction of travel.
    path: Vec3,
    travel: Vec3,
}

/// The turns of one frame, model space: the head's smoothed for the torso, and the
/// hips'.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turns {
    /// Whether the smoothing went on from the previous frame (not on the first
    /// frame, nor after the head jumped).
    pub(super) smooth: bool,
    /// The head's rotation smoothed over `neck_seconds`: what neck and spine follow.
    pub(super) head: Quat,
    /// The yaw of `head`, as a turn about +Y.
    pub(super) head_yaw: Quat,
    /// The hips' rotation: the hips tracker's, else the body's smoothed yaw.
    pub(super) hips: Quat,
    /// The yaw of `hips`, radians and as a turn about +Y.
    pub(super) hips_yaw_angle: f32,
    pub(super) hips_yaw: Quat,
    /// The head's direction of travel, a horizontal unit vector (zero when not
    /// moving or not known).
    pub(super) travel: Vec3,
}

impl HeadSmoothing {
    /// One frame of the head's and the hips' turns. `started`: whether an earlier
    /// frame ran (else the smoothing starts afresh, as after a jump of more than
    /// `JUMP` of the user's height, `user_height` in user metres, or a turn of more
    /// than a right angle).
    ///
    /// `H ← slerp(H, head, k(neck_seconds))`, `yaw ← yaw + wrap(yaw(H) − yaw)·k(body_turn_seconds)`
    /// with `k(τ) = min(dt/τ, 1)`.
    pub(super) fn follow(
        &mut self,
        config: &VrIkConfig,
        devices: &AvatarDevices,
        user_height: f32,
        started: bool,
        dt: f32,
    ) -> Turns {
        let head = devices.head;
        let smooth = started
            && head.position.distance(self.position) < JUMP * user_height * devices.scale
            && self.turn.angle_between(head.rotation) < std::f32::consts::FRAC_PI_2;
        self.position = head.position;
        if smooth {
            self.turn = self
                .turn
                .slerp(head.rotation, settle(dt, config.neck_seconds))
                .normalize();
        } else {
            self.turn = head.rotation;
        }
        let facing = yaw_of(self.turn);
        let head_yaw = Quat::from_rotation_y(facing);
        let at = Vec3::new(head.position.x, 0.0, head.position.z);
        if smooth {
            let half = config.body_turn_seconds / 2.0;
            let path = self.path.lerp(at, settle(dt, half));
            let velocity = (path - self.path) / dt.max(1e-4);
            self.travel = self.travel.lerp(velocity, settle(dt, half));
            self.path = path;
            let toward = facing + self.travel_share(config, user_height * devices.scale, facing);
            self.body_yaw += wrap(toward - self.body_yaw) * settle(dt, config.body_turn_seconds);
        } else {
            self.path = at;
            self.travel = Vec3::ZERO;
            self.body_yaw = facing;
        }
        let body_turn = Quat::from_rotation_y(self.body_yaw);
        let hips = devices.hips.map_or(body_turn, |t| t.rotation.normalize());
        let hips_yaw_angle = yaw_of(hips);
        Turns {
            smooth,
            head: self.turn,
            head_yaw,
            hips,
            hips_yaw_angle,
            hips_yaw: Quat::from_rotation_y(hips_yaw_angle),
            travel: self.travel.normalize_or_zero(),
        }
    }
}

impl HeadSmoothing {
    /// How far from the head's `facing` the body turns toward the direction of
    /// travel, radians: all of the way within `TRAVEL_TRUSTED`, none beyond
    /// `TRAVEL_IGNORED`, eased in from half `gait_speed` to `gait_speed` (of
    /// `height`, avatar metres).
    fn travel_share(&self, config: &VrIkConfig, height: f32, facing: f32) -> f32 {
        let speed = self.travel.length();
        let walk = (speed / (config.gait_speed * height).max(1e-3) * 2.0 - 1.0).clamp(0.0, 1.0);
        if walk == 0.0 {
            return 0.0;
        }
        let off = wrap(self.travel.x.atan2(self.travel.z) - facing);
        let trust =
            ((TRAVEL_IGNORED - off.abs()) / (TRAVEL_IGNORED - TRAVEL_TRUSTED)).clamp(0.0, 1.0);
        off * trust * walk
    }
}

/// Turn about +Y that faces +Z toward `forward`'s horizontal part, radians.
pub(super) fn yaw_of(rotation: Quat) -> f32 {
    let f = rotation * Vec3::Z;
    if f.x.abs() + f.z.abs() < 1e-4 {
        // Looking straight up or down: the head's up points where it faces.
        let u = rotation * Vec3::Y;
        return (-u.x * f.y.signum()).atan2(-u.z * f.y.signum());
    }
    f.x.atan2(f.z)
}

/// An angle brought into −π..π.
pub(super) fn wrap(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaw_survives_looking_straight_down_and_angles_wrap() {
        let yaw = 0.7;
        let level = Quat::from_rotation_y(yaw);
        assert!((yaw_of(level) - yaw).abs() < 1e-5);
        let tilted = level * Quat::from_rotation_x(0.5);
        assert!((yaw_of(tilted) - yaw).abs() < 1e-5);
        let down = level * Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        assert!((yaw_of(down) - yaw).abs() < 1e-3, "{}", yaw_of(down));
        // 3π is π or −π, the same turn.
        assert!((wrap(3.0 * std::f32::consts::PI).abs() - std::f32::consts::PI).abs() < 1e-5);
        assert!((wrap(0.1 - std::f32::consts::TAU) - 0.1).abs() < 1e-5);
    }

    /// The hips' yaw after 3 s of a head walking at 1.2 m/s along `travel` (a unit
    /// horizontal vector) while looking `look` radians to the left of it, at 120 Hz.
    fn hips_yaw_after_walking(travel: Vec3, look: f32) -> f32 {
        let config = VrIkConfig::default();
        let heading = travel.x.atan2(travel.z);
        let mut devices = AvatarDevices {
            scale: 1.0,
            head: crate::humanoid::DevicePose::new(Vec3::new(0.0, 1.6, 0.0), Quat::IDENTITY),
            hands: [Some(crate::humanoid::DevicePose::new(Vec3::ZERO, Quat::IDENTITY)); 2],
            hips: None,
            chest: None,
            feet: [None; 2],
            elbows: [None; 2],
            knees: [None; 2],
        };
        let mut smoothing = HeadSmoothing::default();
        let mut turns = None;
        for i in 0..360 {
            let t = i as f32 / 120.0;
            devices.head.position = Vec3::new(0.0, 1.6, 0.0) + travel * 1.2 * t;
            devices.head.rotation = Quat::from_rotation_y(heading + look);
            turns = Some(smoothing.follow(&config, &devices, 1.7, i > 0, 1.0 / 120.0));
        }
        turns.map_or(f32::NAN, |t| t.hips_yaw_angle)
    }

    #[test]
    fn walking_the_body_faces_where_it_goes_not_where_the_head_looks() {
        let along = Vec3::new(0.6, 0.0, 0.8);
        let heading = along.x.atan2(along.z);
        // Looking 35° aside while walking: the body faces the path.
        let yaw = hips_yaw_after_walking(along, 35f32.to_radians());
        assert!(
            wrap(yaw - heading).abs() < 2f32.to_radians(),
            "{yaw} against {heading}"
        );
        // Walking backwards (the head looks the other way): the body faces the head.
        let yaw = hips_yaw_after_walking(along, std::f32::consts::PI);
        let facing = heading + std::f32::consts::PI;
        assert!(
            wrap(yaw - facing).abs() < 2f32.to_radians(),
            "{yaw} against {facing}"
        );
    }
}
