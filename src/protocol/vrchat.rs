//! VRChat's OSC trackers as an input: datagrams in, tracked points of a
//! `TrackerFrame` out, in internal axes. Pure and allocation-free; the socket is
//! the caller's.
//!
//! What a sender sends (VRChat's "OSC Trackers" page, docs.vrchat.com/docs/osc-trackers):
//! `/tracking/trackers/1/position` and `/tracking/trackers/1/rotation` up to tracker
//! 8, and `/tracking/trackers/head/position|rotation`, each with three floats
//! (X, Y, Z): "the world-space positions and euler angles" of the trackers, in
//! "Unity's coordinate system": +Y up, left-handed, 1.0 = 1 m. The page lists the
//! eight trackers VRChat uses as hip, chest, two feet, two knees and two elbows,
//! but leaves their numbering to the sender; the head may be sent to align the
//! sender's tracking space with VRChat's.
//!
//! Euler angles are degrees, applied as Unity's `Quaternion.Euler` applies them
//! (Unity's scripting reference: "rotates z degrees around the z axis, x degrees
//! around the x axis, and y degrees around the y axis; applied in that order"),
//! about the fixed axes, so the rotation is `Ry(y)·Rx(x)·Rz(z)` in Unity's space.
//! Positions and rotations then cross into internal axes (glTF: right-handed, +Y
//! up, facing +Z) with the X flip of `protocol::vmc`: position (-x, y, z),
//! rotation (x, -y, -z, w).
//!
//! Each message carries half a pose, so `VrchatTrackers` keeps the latest
//! position and rotation of each tracker, and a point appears in the frame once
//! both have arrived, in the frames of the ticks that sent it (a tracker that stops
//! sending drops out of the frames). Senders send a tick's messages bundled or bare (VRChat's
//! page shows one message per datagram); either way a frame is handed on once per
//! sender tick, as `protocol::ticks` tells it (each position and each rotation is
//! one key). Which `TrackedPoint` a numbered tracker drives is a
//! `TrackerAssignment` (default: 1 hips, 2 left foot, 3 right foot, 4 chest,
//! 5 left knee, 6 right knee, 7 left elbow, 8 right elbow; the head is the
//! head). Addresses outside `/tracking/trackers/` are ignored (VRChat's other
//! OSC traffic); bad input is counted by kind and dropped, never a panic.

use glam::{Quat, Vec3};

use super::frame::{TrackedPoint, TrackerFrame};
use super::osc;
use super::ticks::{self, Ticks};
use super::vmc::{to_unity_position, to_unity_rotation};
use crate::humanoid::DevicePose;

/// How many numbered trackers VRChat takes (`/tracking/trackers/1` to `/8`).
pub const TRACKER_COUNT: usize = 8;

/// Largest position accepted, metres; anything farther is a broken sender.
const MAX_POSITION: f32 = 10_000.0;

/// Largest Euler angle accepted, degrees (ten turns); anything larger is a broken
/// sender (and past it `f32` loses the hundredths of a degree).
const MAX_ANGLE_DEG: f32 = 3_600.0;

/// Which tracked point each numbered tracker drives; `None` leaves a tracker
/// unused (its messages are counted as `unassigned`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerAssignment {
    /// Tracker `n` (1 to 8) is entry `n - 1`.
    points: [Option<TrackedPoint>; TRACKER_COUNT],
}

impl Default for TrackerAssignment {
    /// 1 hips, 2 left foot, 3 right foot, 4 chest, 5 left knee, 6 right knee,
    /// 7 left elbow, 8 right elbow.
    fn default() -> Self {
        use TrackedPoint as P;
        Self::new([
            Some(P::Hips),
            Some(P::LeftFoot),
            Some(P::RightFoot),
            Some(P::Chest),
            Some(P::LeftKnee),
            Some(P::RightKnee),
            Some(P::LeftElbow),
            Some(P::RightElbow),
        ])
    }
}

impl TrackerAssignment {
    /// Tracker `n` (1 to 8) drives `points[n - 1]`.
    #[must_use]
    pub fn new(points: [Option<TrackedPoint>; TRACKER_COUNT]) -> Self {
        Self { points }
    }

    /// The point tracker `number` (1 to 8) drives; `None` when unused or out of
    /// range.
    #[must_use]
    pub fn point(&self, number: usize) -> Option<TrackedPoint> {
        self.points.get(number.checked_sub(1)?).copied().flatten()
    }
}

/// What one datagram held, counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VrchatStats {
    /// Positions and rotations taken.
    pub updates: u32,
    /// Messages outside `/tracking/trackers/` (VRChat's other OSC traffic).
    pub ignored: u32,
    /// `/tracking/trackers/...` addresses VRChat does not define (tracker 0 or
    /// 9, a field other than `position` or `rotation`).
    pub unknown: u32,
    /// Messages for a tracker the assignment leaves unused.
    pub unassigned: u32,
    /// Not three floats, not finite, or out of range.
    pub malformed: u32,
    /// Broken OSC framing: truncated or garbled elements (the rest still read).
    pub broken: u32,
}

/// Slot of the head in `VrchatTrackers`; trackers 1 to 8 are slots 1 to 8.
const HEAD: usize = 0;

/// The latest position and rotation of VRChat's head and eight trackers, internal
/// axes: each `/tracking/trackers` message updates one half of one pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VrchatTrackers {
    assignment: TrackerAssignment,
    /// Metres, internal axes; index `HEAD` or the tracker's number.
    positions: [Option<Vec3>; TRACKER_COUNT + 1],
    /// Internal axes; index as `positions`.
    rotations: [Option<Quat>; TRACKER_COUNT + 1],
    /// The sender's ticks; key `2 · slot` a position, `2 · slot + 1` a rotation.
    ticks: Ticks,
    /// Slots updated since the last tick ended, bit `slot`.
    fresh: u32,
    /// When the last message was taken, seconds on the receiver's clock: a tick
    /// ended by the next one's first message is stamped with its own last.
    time: f64,
}

/// Which half of a pose a message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Position,
    Rotation,
}

/// Where a `/tracking/trackers/` address points: the slot and the field; `None`
/// for addresses VRChat does not define.
fn parse_address(rest: &[u8]) -> Option<(usize, Field)> {
    let (slot, field) = match rest {
        [b'h', b'e', b'a', b'd', b'/', field @ ..] => (HEAD, field),
        [digit @ b'1'..=b'8', b'/', field @ ..] => (usize::from(digit - b'0'), field),
        _ => return None,
    };
    let field = match field {
        b"position" => Field::Position,
        b"rotation" => Field::Rotation,
        _ => return None,
    };
    Some((slot, field))
}

/// A rotation given as Unity Euler angles (degrees, applied Z, then X, then Y
/// about the fixed axes, in Unity's left-handed space), in internal axes.
#[must_use]
pub fn rotation_from_unity_euler(degrees: Vec3) -> Quat {
    let [x, y, z] = degrees.to_array().map(f32::to_radians);
    let unity = Quat::from_rotation_y(y) * Quat::from_rotation_x(x) * Quat::from_rotation_z(z);
    to_unity_rotation(unity)
}

impl VrchatTrackers {
    /// No tracker seen yet; numbered trackers drive the points of `assignment`.
    #[must_use]
    pub fn new(assignment: TrackerAssignment) -> Self {
        Self {
            assignment,
            positions: [None; TRACKER_COUNT + 1],
            rotations: [None; TRACKER_COUNT + 1],
            ticks: Ticks::default(),
            fresh: 0,
            time: 0.0,
        }
    }

    /// Takes the positions and rotations of one datagram (a bundle or a bare
    /// message) received at `now` (seconds on the receiver's clock); a bad message
    /// is counted and dropped without losing the rest.
    /// `on_tick` is called with the trackers as they stand each time a sender tick
    /// ends (before the message that begins the next, or after the one that ends
    /// it): write its frame then.
    pub fn decode(
        &mut self,
        datagram: &[u8],
        now: f64,
        mut on_tick: impl FnMut(&Self),
    ) -> VrchatStats {
        let mut stats = VrchatStats::default();
        for message in osc::messages(datagram) {
            let Ok(message) = message else {
                stats.broken += 1;
                continue;
            };
            let Some(rest) = message.address.strip_prefix(b"/tracking/trackers/") else {
                stats.ignored += 1;
                continue;
            };
            let Some((slot, field)) = parse_address(rest) else {
                stats.unknown += 1;
                continue;
            };
            if slot != HEAD && self.assignment.point(slot).is_none() {
                stats.unassigned += 1;
                continue;
            }
            let Some(v) = message.floats::<3>().map(Vec3::from_array) else {
                stats.malformed += 1;
                continue;
            };
            // NaN fails every comparison, so it is out of range here too.
            let limit = match field {
                Field::Position => MAX_POSITION,
                Field::Rotation => MAX_ANGLE_DEG,
            };
            if !v.abs().cmple(Vec3::splat(limit)).all() {
                stats.malformed += 1;
                continue;
            }
            let key = 2 * slot as u32 + u32::from(field == Field::Rotation);
            if self.ticks.repeats(key) {
                on_tick(self);
                self.fresh = 0;
            }
            self.fresh |= 1 << slot;
            self.time = now;
            match field {
                // The X flip is its own inverse: Unity to internal as back.
                Field::Position => self.positions[slot] = Some(to_unity_position(v)),
                Field::Rotation => self.rotations[slot] = Some(rotation_from_unity_euler(v)),
            }
            if self.ticks.set(key) {
                on_tick(self);
                self.fresh = 0;
            }
            stats.updates += 1;
        }
        if self.ticks.datagram_end(ticks::is_bundle(datagram)) {
            on_tick(self);
            self.fresh = 0;
        }
        stats
    }

    /// Sets, in `frame`, every point whose tracker sent a position or a rotation in
    /// the tick that ended, once it has sent both (every other point is cleared),
    /// and the time its last message came.
    pub fn write_frame(&self, frame: &mut TrackerFrame) {
        frame.time = self.time;
        frame.points = [None; TrackedPoint::COUNT];
        for slot in (0..=TRACKER_COUNT).filter(|s| self.fresh & (1 << s) != 0) {
            let point = match slot {
                HEAD => Some(TrackedPoint::Head),
                n => self.assignment.point(n),
            };
            if let (Some(point), Some(position), Some(rotation)) =
                (point, self.positions[slot], self.rotations[slot])
            {
                frame.set(point, DevicePose::new(position, rotation));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frame::PerformerName;
    use glam::Mat3;
    use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};

    fn message(addr: &str, args: Vec<OscType>) -> OscPacket {
        OscPacket::Message(OscMessage {
            addr: addr.into(),
            args,
        })
    }

    fn three(v: [f32; 3]) -> Vec<OscType> {
        v.iter().map(|f| OscType::Float(*f)).collect()
    }

    fn encode(packet: &OscPacket) -> Vec<u8> {
        rosc::encoder::encode(packet).unwrap()
    }

    fn bundle(content: Vec<OscPacket>) -> Vec<u8> {
        encode(&OscPacket::Bundle(OscBundle {
            timetag: OscTime {
                seconds: 0,
                fractional: 1,
            },
            content,
        }))
    }

    /// Unity's rotation matrices about X, Y and Z (column vectors), written out.
    fn unity_matrix(degrees: [f32; 3]) -> Mat3 {
        let [x, y, z] = degrees.map(f32::to_radians);
        let (sx, cx) = x.sin_cos();
        let (sy, cy) = y.sin_cos();
        let (sz, cz) = z.sin_cos();
        let rx = Mat3::from_cols_array(&[1.0, 0.0, 0.0, 0.0, cx, sx, 0.0, -sx, cx]);
        let ry = Mat3::from_cols_array(&[cy, 0.0, -sy, 0.0, 1.0, 0.0, sy, 0.0, cy]);
        let rz = Mat3::from_cols_array(&[cz, sz, 0.0, -sz, cz, 0.0, 0.0, 0.0, 1.0]);
        // Z first, then X, then Y, about the fixed axes.
        ry * rx * rz
    }

    #[test]
    fn euler_angles_turn_as_unity_turns_them_then_cross_with_the_x_flip() {
        // The X flip as a matrix: internal = S · unity · S.
        let flip = Mat3::from_diagonal(Vec3::new(-1.0, 1.0, 1.0));
        let cases = [
            [0.0, 0.0, 0.0],
            [90.0, 0.0, 0.0],
            [0.0, 90.0, 0.0],
            [0.0, 0.0, 90.0],
            [30.0, 45.0, 60.0],
            [-20.0, 170.0, -75.0],
            [89.0, -135.0, 10.0],
            [350.0, 720.0, -400.0],
        ];
        for degrees in cases {
            let want = flip * unity_matrix(degrees) * flip;
            let got = Mat3::from_quat(rotation_from_unity_euler(Vec3::from_array(degrees)));
            assert!(got.abs_diff_eq(want, 1e-5), "{degrees:?}: {got} vs {want}");
        }
        // What the angles mean for the character (internal axes: faces +Z, its
        // left is +X). Unity yaw +90 turns forward to Unity's right (+X), which
        // is the character's right, internal -X.
        let turn = |d: [f32; 3], v: Vec3| rotation_from_unity_euler(Vec3::from_array(d)) * v;
        assert!(turn([0.0, 90.0, 0.0], Vec3::Z).abs_diff_eq(-Vec3::X, 1e-6));
        // Unity pitch +90 tips forward down.
        assert!(turn([90.0, 0.0, 0.0], Vec3::Z).abs_diff_eq(-Vec3::Y, 1e-6));
        // Unity roll +90 turns up to Unity's left (-X), the character's left.
        assert!(turn([0.0, 0.0, 90.0], Vec3::Y).abs_diff_eq(Vec3::X, 1e-6));
    }

    #[test]
    fn the_default_assignment_is_the_documented_one() {
        use TrackedPoint as P;
        let a = TrackerAssignment::default();
        let want = [
            (1, P::Hips),
            (2, P::LeftFoot),
            (3, P::RightFoot),
            (4, P::Chest),
            (5, P::LeftKnee),
            (6, P::RightKnee),
            (7, P::LeftElbow),
            (8, P::RightElbow),
        ];
        for (n, p) in want {
            assert_eq!(a.point(n), Some(p));
        }
        assert_eq!((a.point(0), a.point(9)), (None, None));
    }

    #[test]
    fn bad_messages_are_counted_by_kind_and_dropped() {
        let mut assignment = TrackerAssignment::default();
        assignment.points[7] = None;
        let ok = [0.1, 1.0, 0.2];
        let stats = |updates, ignored, unknown, unassigned, malformed, broken| VrchatStats {
            updates,
            ignored,
            unknown,
            unassigned,
            malformed,
            broken,
        };
        let m = |addr: &str, args| encode(&message(addr, args));
        let cases: Vec<(&str, Vec<u8>, VrchatStats)> = vec![
            (
                "position",
                m("/tracking/trackers/1/position", three(ok)),
                stats(1, 0, 0, 0, 0, 0),
            ),
            (
                "head rotation",
                m("/tracking/trackers/head/rotation", three(ok)),
                stats(1, 0, 0, 0, 0, 0),
            ),
            (
                "extra argument",
                m(
                    "/tracking/trackers/2/rotation",
                    [three(ok), vec![OscType::Int(1)]].concat(),
                ),
                stats(1, 0, 0, 0, 0, 0),
            ),
            (
                "other VRChat traffic",
                m("/avatar/parameters/Smile", vec![OscType::Float(1.0)]),
                stats(0, 1, 0, 0, 0, 0),
            ),
            (
                "tracker 0",
                m("/tracking/trackers/0/position", three(ok)),
                stats(0, 0, 1, 0, 0, 0),
            ),
            (
                "tracker 9",
                m("/tracking/trackers/9/position", three(ok)),
                stats(0, 0, 1, 0, 0, 0),
            ),
            (
                "tracker 10",
                m("/tracking/trackers/10/position", three(ok)),
                stats(0, 0, 1, 0, 0, 0),
            ),
            (
                "other field",
                m("/tracking/trackers/1/scale", three(ok)),
                stats(0, 0, 1, 0, 0, 0),
            ),
            (
                "no field",
                m("/tracking/trackers/head", three(ok)),
                stats(0, 0, 1, 0, 0, 0),
            ),
            (
                "unassigned",
                m("/tracking/trackers/8/position", three(ok)),
                stats(0, 0, 0, 1, 0, 0),
            ),
            (
                "two floats",
                m("/tracking/trackers/1/position", three(ok)[..2].to_vec()),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "ints",
                m("/tracking/trackers/1/position", vec![OscType::Int(1); 3]),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "string",
                m(
                    "/tracking/trackers/1/rotation",
                    vec![OscType::String("0,0,0".into())],
                ),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "NaN",
                m("/tracking/trackers/1/position", three([f32::NAN, 0.0, 0.0])),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "infinite angle",
                m(
                    "/tracking/trackers/1/rotation",
                    three([0.0, f32::INFINITY, 0.0]),
                ),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "far away",
                m("/tracking/trackers/1/position", three([0.0, 0.0, 1e6])),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "huge angle",
                m("/tracking/trackers/1/rotation", three([1e9, 0.0, 0.0])),
                stats(0, 0, 0, 0, 1, 0),
            ),
            (
                "garbage",
                b"\x00\x01garbage".to_vec(),
                stats(0, 0, 0, 0, 0, 1),
            ),
            ("empty", Vec::new(), stats(0, 0, 0, 0, 0, 1)),
        ];
        for (what, datagram, want) in cases {
            let mut trackers = VrchatTrackers::new(assignment);
            assert_eq!(trackers.decode(&datagram, 0.0, |_| {}), want, "{what}");
        }
        // A bundle with a bad message between good ones, its end cut off: the
        // good message before the cut is kept.
        let datagram = bundle(vec![
            message("/tracking/trackers/1/position", three(ok)),
            message("/tracking/trackers/1/rotation", three([f32::NAN; 3])),
            message("/tracking/trackers/1/rotation", three(ok)),
        ]);
        let mut trackers = VrchatTrackers::new(assignment);
        let got = trackers.decode(&datagram[..datagram.len() - 4], 0.0, |_| {});
        assert_eq!(got, stats(1, 0, 0, 0, 1, 1));
        // Every prefix of a datagram: no panic.
        for len in 0..datagram.len() {
            let _ = trackers.decode(&datagram[..len], 0.0, |_| {});
        }
    }

    #[test]
    fn a_point_appears_once_both_halves_have_arrived() {
        let name = PerformerName::new("p").unwrap();
        let mut trackers = VrchatTrackers::new(TrackerAssignment::default());
        let mut frame = TrackerFrame::new(name);
        trackers.decode(
            &bundle(vec![
                message("/tracking/trackers/1/position", three([1.0, 0.9, 2.0])),
                message("/tracking/trackers/head/position", three([0.0, 1.6, 0.0])),
                message("/tracking/trackers/head/rotation", three([0.0, 90.0, 0.0])),
            ]),
            0.0,
            |t| t.write_frame(&mut frame),
        );
        assert_eq!(frame.point(TrackedPoint::Hips), None);
        let head = frame.point(TrackedPoint::Head).unwrap();
        assert!(head.position.abs_diff_eq(Vec3::new(0.0, 1.6, 0.0), 1e-6));
        assert!((head.rotation * Vec3::Z).abs_diff_eq(-Vec3::X, 1e-6));
        // The rotation of tracker 1 arrives in a later datagram.
        trackers.decode(
            &encode(&message(
                "/tracking/trackers/1/rotation",
                three([0.0, 0.0, 0.0]),
            )),
            0.0,
            |t| t.write_frame(&mut frame),
        );
        let hips = frame.point(TrackedPoint::Hips).unwrap();
        assert!(hips.position.abs_diff_eq(Vec3::new(-1.0, 0.9, 2.0), 1e-6));
        assert!(hips.rotation.abs_diff_eq(Quat::IDENTITY, 1e-6));
        // Another assignment drives other points from the same numbers.
        let mut assignment = [None; TRACKER_COUNT];
        assignment[0] = Some(TrackedPoint::LeftHand);
        let mut other = VrchatTrackers::new(TrackerAssignment::new(assignment));
        let mut frame = TrackerFrame::new(name);
        other.decode(
            &bundle(vec![
                message("/tracking/trackers/1/position", three([1.0, 0.9, 2.0])),
                message("/tracking/trackers/1/rotation", three([0.0, 0.0, 0.0])),
            ]),
            0.0,
            |t| t.write_frame(&mut frame),
        );
        assert!(frame.point(TrackedPoint::LeftHand).is_some());
        assert_eq!(frame.point(TrackedPoint::Hips), None);
    }

    #[test]
    fn bare_messages_and_bundles_give_one_frame_per_sender_tick() {
        let name = PerformerName::new("p").unwrap();
        let tick = |n: usize| -> Vec<OscPacket> {
            let x = n as f32 * 0.01;
            ["head", "1", "2", "3", "7", "8"]
                .iter()
                .flat_map(|t| {
                    [
                        message(
                            &format!("/tracking/trackers/{t}/position"),
                            three([x, 1.0, 0.0]),
                        ),
                        message(
                            &format!("/tracking/trackers/{t}/rotation"),
                            three([0.0, 0.0, 0.0]),
                        ),
                    ]
                })
                .collect()
        };
        // Bare: one message per datagram, as VRChat's page shows, a tick every
        // 0.1 s and its messages 1 ms apart.
        let mut trackers = VrchatTrackers::new(TrackerAssignment::default());
        let mut heads = Vec::new();
        for n in 0..10 {
            for (i, m) in tick(n).into_iter().enumerate() {
                let now = n as f64 * 0.1 + i as f64 * 0.001;
                trackers.decode(&encode(&m), now, |t| {
                    let mut frame = TrackerFrame::new(name);
                    t.write_frame(&mut frame);
                    let hips = frame.point(TrackedPoint::Hips).expect("whole tick");
                    heads.push((
                        frame.point(TrackedPoint::Head).unwrap().position.x,
                        hips.position.x,
                        (frame.time * 1000.0).round(),
                    ));
                });
            }
        }
        // Every tick is a frame, whole: the head and the hips of the same tick, at
        // the time of its last message (the first tick too, though it is handed on
        // only when the second begins).
        let want: Vec<(f32, f32, f64)> = (0..10)
            .map(|n| {
                (
                    -(n as f32) * 0.01,
                    -(n as f32) * 0.01,
                    n as f64 * 100.0 + 11.0,
                )
            })
            .collect();
        assert_eq!(heads, want);
        // Bundled: one frame per bundle from the first, at the bundle's time.
        let mut trackers = VrchatTrackers::new(TrackerAssignment::default());
        let mut times = Vec::new();
        for n in 0..10 {
            trackers.decode(&bundle(tick(n)), n as f64, |t| {
                let mut frame = TrackerFrame::new(name);
                t.write_frame(&mut frame);
                times.push(frame.time);
            });
        }
        assert_eq!(times, (0..10).map(|n| n as f64).collect::<Vec<_>>());
    }
}
