//! VMC's tracked devices (`/VMC/Ext/Hmd|Con|Tra/Pos`) as a VR performer: which
//! device stands for which tracked point, and a frame of devices per sender tick,
//! whether the sender bundles a tick or sends one message per datagram (framed as
//! `protocol::ticks` tells, each tracked point one key). Pure: the VMC input task
//! feeds it events and pushes its frames.
//!
//! VMC names devices by serial only, so sides and body parts are assigned when a
//! device is first seen (unless the configuration names its serial): the headset
//! is the head; of two controllers, the one on the headset's left (+X of the
//! headset's facing, the character's left) is the left hand; a tracker near the
//! floor (below a quarter of the headset's height) is a foot, on the side it is
//! on, one below two thirds of it the hips, any higher the chest. The assignment
//! then sticks, so crossing the arms does not swap the hands. Raw positions are
//! used (`/Local` duplicates, relative to the avatar, are ignored). A frame holds
//! the devices the tick sent: one that stops sending drops out of the frames, and
//! the performer solves without it once it has been gone a while.

use std::collections::HashMap;

use glam::{Quat, Vec3};

use crate::humanoid::DevicePose;
use crate::protocol::frame::{PerformerName, TrackedPoint, TrackerFrame};
use crate::protocol::ticks::Ticks;
use crate::protocol::vmc::Device;

/// Assigns a sender's devices to tracked points and collects their poses.
#[derive(Debug, Clone)]
pub struct VmcDevices {
    /// Serials the configuration assigns.
    configured: HashMap<String, TrackedPoint>,
    assigned: HashMap<String, TrackedPoint>,
    frame: TrackerFrame,
    /// Points set since the last frame ended, bit `TrackedPoint as usize`.
    fresh: u32,
    /// The sender's ticks; key: the tracked point's index.
    ticks: Ticks,
    /// Frames of the ticks that ended in the datagram being read, in order.
    ended: Vec<TrackerFrame>,
    /// Controllers seen before the headset, waiting for it to tell their sides.
    pending: Vec<(String, DevicePose)>,
}

impl VmcDevices {
    #[must_use]
    pub fn new(performer: PerformerName, configured: HashMap<String, TrackedPoint>) -> Self {
        Self {
            configured,
            assigned: HashMap::new(),
            frame: TrackerFrame::new(performer),
            fresh: 0,
            ticks: Ticks::default(),
            ended: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Takes one device event (raw, not `/Local`) at sender time `time`.
    pub fn event(
        &mut self,
        device: Device,
        serial: &str,
        position: Vec3,
        rotation: Quat,
        time: f64,
    ) {
        let pose = DevicePose::new(position, rotation);
        let point = match self.assigned.get(serial) {
            Some(p) => Some(*p),
            None => self.assign(device, serial, pose),
        };
        if let Some(point) = point {
            let key = point as u32;
            if self.ticks.repeats(key) {
                self.end_frame();
            }
            self.frame.set(point, pose);
            self.fresh |= 1 << key;
            self.frame.time = time;
            if self.ticks.set(key) {
                self.end_frame();
            }
        }
    }

    /// Call at the end of each datagram (`bundle`: it was an OSC bundle): hands
    /// `on_frame` the devices as they stood at the end of each sender tick that
    /// ended in it, in order.
    pub fn datagram_end(&mut self, bundle: bool, mut on_frame: impl FnMut(TrackerFrame)) {
        if self.ticks.datagram_end(bundle) {
            self.end_frame();
        }
        for frame in self.ended.drain(..) {
            on_frame(frame);
        }
    }

    /// Ends the open frame: the devices set since the last one.
    fn end_frame(&mut self) {
        let mut frame = self.frame;
        for (k, point) in frame.points.iter_mut().enumerate() {
            if self.fresh & (1 << k) == 0 {
                *point = None;
            }
        }
        self.fresh = 0;
        self.ended.push(frame);
    }

    fn assign(&mut self, device: Device, serial: &str, pose: DevicePose) -> Option<TrackedPoint> {
        let point = match self.configured.get(serial) {
            Some(p) => Some(*p),
            None => self.guess(device, serial, pose),
        };
        if let Some(p) = point {
            self.assigned.insert(serial.to_owned(), p);
        }
        point
    }

    fn guess(&mut self, device: Device, serial: &str, pose: DevicePose) -> Option<TrackedPoint> {
        let taken = |s: &Self, p: TrackedPoint| s.assigned.values().any(|q| *q == p);
        if device == Device::Hmd {
            let point = TrackedPoint::Head;
            self.assigned.insert(serial.to_owned(), point);
            // Controllers that came first can now be told apart.
            for (serial, pose) in std::mem::take(&mut self.pending) {
                if let Some(p) = self.guess(Device::Controller, &serial, pose) {
                    self.assigned.insert(serial, p);
                }
            }
            return Some(point);
        }
        let Some(head) = self.frame.point(TrackedPoint::Head) else {
            if device == Device::Controller && !self.pending.iter().any(|(s, _)| s == serial) {
                self.pending.push((serial.to_owned(), pose));
            }
            return None;
        };
        // The side in the headset's facing: +X of its yaw is the character's left.
        let forward = head.rotation * Vec3::Z;
        let yaw = forward.x.atan2(forward.z);
        let local = Quat::from_rotation_y(-yaw) * (pose.position - head.position);
        let left = local.x > 0.0;
        let candidates: &[TrackedPoint] = match device {
            Device::Hmd => &[],
            Device::Controller if left => &[TrackedPoint::LeftHand, TrackedPoint::RightHand],
            Device::Controller => &[TrackedPoint::RightHand, TrackedPoint::LeftHand],
            Device::Tracker => {
                let height = head.position.y.max(0.5);
                if pose.position.y < height * 0.25 {
                    if left {
                        &[TrackedPoint::LeftFoot, TrackedPoint::RightFoot]
                    } else {
                        &[TrackedPoint::RightFoot, TrackedPoint::LeftFoot]
                    }
                } else if pose.position.y < height * 0.67 {
                    &[TrackedPoint::Hips, TrackedPoint::Chest]
                } else {
                    &[TrackedPoint::Chest, TrackedPoint::Hips]
                }
            }
        };
        candidates.iter().copied().find(|p| !taken(self, *p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices() -> VmcDevices {
        VmcDevices::new(PerformerName::new("vr").unwrap(), HashMap::new())
    }

    /// Ends a bundle: the last frame it ended, if any.
    fn take_frame(d: &mut VmcDevices) -> Option<TrackerFrame> {
        let mut last = None;
        d.datagram_end(true, |f| last = Some(f));
        last
    }

    #[test]
    fn sides_follow_the_headset_facing_and_then_stick() {
        let mut d = devices();
        // Headset turned to face -Z: the character's left is then -X.
        let turned = Quat::from_rotation_y(std::f32::consts::PI);
        d.event(Device::Hmd, "hmd", Vec3::new(0.0, 1.6, 0.0), turned, 0.0);
        d.event(
            Device::Controller,
            "a",
            Vec3::new(-0.6, 1.4, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        d.event(
            Device::Controller,
            "b",
            Vec3::new(0.6, 1.4, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        d.event(
            Device::Tracker,
            "t1",
            Vec3::new(0.0, 0.95, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        d.event(
            Device::Tracker,
            "t2",
            Vec3::new(0.1, 0.1, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        let f = take_frame(&mut d).unwrap();
        assert_eq!(f.point(TrackedPoint::LeftHand).unwrap().position.x, -0.6);
        assert_eq!(f.point(TrackedPoint::RightHand).unwrap().position.x, 0.6);
        assert!(f.point(TrackedPoint::Hips).is_some());
        // t2 at +X of a headset facing -Z is on the character's right.
        assert!(f.point(TrackedPoint::RightFoot).is_some());
        assert!(take_frame(&mut d).is_none());
        // Arms crossed: "a" stays the left hand. A sender sending only what moved
        // is framed when a device repeats (its next tick begins), then as each
        // tick of that shape is whole.
        let mut frames = Vec::new();
        for (x, time) in [(0.3, 0.1), (0.2, 0.2)] {
            d.event(
                Device::Controller,
                "a",
                Vec3::new(x, 1.4, 0.0),
                Quat::IDENTITY,
                time,
            );
            d.datagram_end(true, |f| frames.push(f));
        }
        let left: Vec<(f32, f64)> = frames
            .iter()
            .map(|f| (f.point(TrackedPoint::LeftHand).unwrap().position.x, f.time))
            .collect();
        assert_eq!(left, vec![(0.3, 0.1), (0.2, 0.2)]);
    }

    #[test]
    fn controllers_before_the_headset_wait_for_it_and_configured_serials_win() {
        let mut configured = HashMap::new();
        configured.insert("hip".to_owned(), TrackedPoint::Chest);
        let mut d = VmcDevices::new(PerformerName::new("vr").unwrap(), configured);
        d.event(
            Device::Controller,
            "l",
            Vec3::new(0.6, 1.4, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        assert!(take_frame(&mut d).is_none());
        d.event(
            Device::Hmd,
            "hmd",
            Vec3::new(0.0, 1.6, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        d.event(
            Device::Controller,
            "l",
            Vec3::new(0.6, 1.4, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        d.event(
            Device::Tracker,
            "hip",
            Vec3::new(0.0, 0.9, 0.0),
            Quat::IDENTITY,
            0.0,
        );
        let f = take_frame(&mut d).unwrap();
        assert!(f.point(TrackedPoint::LeftHand).is_some());
        assert!(f.point(TrackedPoint::Chest).is_some() && f.point(TrackedPoint::Hips).is_none());
    }

    #[test]
    fn devices_sent_one_message_per_datagram_give_one_frame_per_tick() {
        let mut d = devices();
        let mut frames = Vec::new();
        for tick in 0..20 {
            let t = f64::from(tick) / 60.0;
            let x = tick as f32 * 0.001;
            for (device, serial, position) in [
                (Device::Hmd, "hmd", Vec3::new(x, 1.6, 0.0)),
                (Device::Controller, "a", Vec3::new(0.6 + x, 1.4, 0.0)),
                (Device::Controller, "b", Vec3::new(-0.6 + x, 1.4, 0.0)),
                (Device::Tracker, "t", Vec3::new(x, 0.9, 0.0)),
            ] {
                d.event(device, serial, position, Quat::IDENTITY, t);
                d.datagram_end(false, |f| frames.push(f));
            }
        }
        // The first tick when the second begins, then each as it is whole; the
        // last is whole too.
        assert_eq!(frames.len(), 20);
        for (tick, f) in frames.iter().enumerate() {
            let x = tick as f32 * 0.001;
            let at = |p| f.point(p).unwrap().position.x;
            assert_eq!(f.time, tick as f64 / 60.0);
            assert_eq!(at(TrackedPoint::Head), x);
            assert_eq!(at(TrackedPoint::Hips), x, "a frame holds one tick");
        }
    }
}
