//! `LabAssembler`: lab OSC datagrams into complete frames, per subject. Owned by
//! one input task; keeps one partial frame per subject (the least recently seen
//! forgotten when there are too many), places each part by its header, and hands a
//! frame on once its every part has arrived. Allocation-free per datagram.
//!
//! A part of a frame older than the subject's newest is late (dropped) only when
//! it is a recent one: at most `STALE_WINDOW` frames and `LATE_SPAN` of capture
//! time back, its capture time not after the newest frame's, with the subject heard
//! within `RESTART_SILENCE`. Anything else is a sender that restarted its numbering
//! (or its clock, or went quiet and came back): a new sequence, every frame taken.

use std::time::{Duration, Instant};

use glam::Quat;

use super::skeleton::LabSkeleton;
use super::stats::{LabStats, Refusal};
use super::{DEFAULT_MAX_SUBJECTS, FRAME_ADDRESS, JOINT_ADDRESS, MAX_PARTS, ROOT_ADDRESS};
use crate::formats::skeleton_json::RotationSpace;
use crate::protocol::frame::{JointFrame, MAX_JOINTS, PerformerName};
use crate::protocol::osc::{self, Arg, Message};

/// A part of a frame up to this many frames older than the newest one of its
/// subject may be late (dropped); further back, the sender has restarted.
const STALE_WINDOW: u64 = 120;

/// A part of a frame captured up to this long before the newest one of its
/// subject may be late (dropped); further back, the sender has restarted.
const LATE_SPAN: f64 = 0.25;

/// A subject heard from again after this long a silence starts a new sequence:
/// whatever its frame number, the sender has restarted.
const RESTART_SILENCE: Duration = Duration::from_millis(500);

/// One subject's frame being assembled.
struct Subject {
    /// The frame so far: name, number, time, root, joints of the parts received
    /// (global rotations until complete, for global streams).
    frame: JointFrame,
    /// Part count of the frame being assembled; 0 when none is.
    parts: u8,
    /// Which parts have arrived, bit `part`.
    received: u64,
    /// The number of the last frame completed.
    last_complete: Option<u64>,
    /// The assembler's datagram count when this subject last sent a header.
    last_seen: u64,
    /// When this subject last sent a header.
    heard: Instant,
}

/// What the messages read so far in a datagram belong to.
#[derive(Clone, Copy)]
enum Part<'s> {
    /// No header yet: root and joint messages are orphans.
    None,
    /// The header was refused (and counted): messages are skipped up to the next.
    Skip,
    /// Part `part` of subject `slot`'s frame, of `skeleton`.
    Open {
        slot: usize,
        skeleton: &'s LabSkeleton,
        part: u8,
    },
}

/// The frame header's fields.
struct Header<'a> {
    subject: &'a [u8],
    frame: u64,
    time: f64,
    part: u8,
    parts: u8,
}

fn read_header<'a>(message: &Message<'a>) -> Result<Header<'a>, Refusal> {
    let mut args = [Arg::Int(0); 6];
    let n = message.args(&mut args).map_err(|_| Refusal::Malformed)?;
    let [
        Arg::Str(subject),
        frame,
        time,
        Arg::Int(part),
        Arg::Int(parts),
    ] = args[..n]
    else {
        return Err(Refusal::Malformed);
    };
    let frame = match frame {
        Arg::Int(v) => u64::try_from(v),
        Arg::Long(v) => u64::try_from(v),
        _ => return Err(Refusal::Malformed),
    }
    .map_err(|_| Refusal::Malformed)?;
    let time = match time {
        Arg::Double(t) => t,
        Arg::Float(t) => f64::from(t),
        _ => return Err(Refusal::Malformed),
    };
    if !time.is_finite() {
        return Err(Refusal::NotFinite);
    }
    if !(1..=MAX_PARTS as i32).contains(&parts) || !(0..parts).contains(&part) {
        return Err(Refusal::Malformed);
    }
    Ok(Header {
        subject,
        frame,
        time,
        part: part as u8,
        parts: parts as u8,
    })
}

/// Assembles frames from lab OSC datagrams, per subject. Owned by one input task.
pub struct LabAssembler {
    subjects: Vec<Subject>,
    max_subjects: usize,
    /// Datagrams seen, the clock of `Subject::last_seen`.
    clock: u64,
    /// Scratch model rotations for global streams.
    globals: Box<[Quat; MAX_JOINTS]>,
}

impl Default for LabAssembler {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SUBJECTS)
    }
}

impl LabAssembler {
    /// An assembler keeping at most `max_subjects` subjects (at least 1); all its
    /// memory is taken here.
    #[must_use]
    pub fn new(max_subjects: usize) -> Self {
        let max_subjects = max_subjects.max(1);
        Self {
            subjects: Vec::with_capacity(max_subjects),
            max_subjects,
            clock: 0,
            globals: Box::new([Quat::IDENTITY; MAX_JOINTS]),
        }
    }

    /// Reads one datagram, received at `received` (which tells a subject's silences).
    /// `skeleton_for` gives the skeleton of a subject (by name), `None` for subjects
    /// not to be read; `on_frame` gets every frame the datagram completes: local
    /// rotations in internal axes, root position in metres. Allocates nothing
    /// (beyond a new subject's first header, within the capacity taken by `new`),
    /// never panics.
    pub fn datagram<'s>(
        &mut self,
        bytes: &[u8],
        received: Instant,
        skeleton_for: impl Fn(&str) -> Option<&'s LabSkeleton>,
        mut on_frame: impl FnMut(&JointFrame),
    ) -> LabStats {
        self.clock += 1;
        let mut stats = LabStats::default();
        let mut part = Part::None;
        for message in osc::messages(bytes) {
            match message {
                Ok(m) => self.message(
                    &m,
                    received,
                    &mut part,
                    &skeleton_for,
                    &mut on_frame,
                    &mut stats,
                ),
                Err(_) => stats.broken += 1,
            }
        }
        self.close(part, &mut on_frame, &mut stats);
        stats
    }

    fn message<'s>(
        &mut self,
        message: &Message<'_>,
        received: Instant,
        part: &mut Part<'s>,
        skeleton_for: &impl Fn(&str) -> Option<&'s LabSkeleton>,
        on_frame: &mut impl FnMut(&JointFrame),
        stats: &mut LabStats,
    ) {
        let address = message.address;
        if address == FRAME_ADDRESS.as_bytes() {
            self.close(*part, on_frame, stats);
            *part = self.open(message, received, skeleton_for, stats);
            return;
        }
        let is_joint = address == JOINT_ADDRESS.as_bytes();
        if !is_joint && address != ROOT_ADDRESS.as_bytes() {
            stats.ignored += 1;
            return;
        }
        let (slot, skeleton) = match *part {
            Part::None => {
                stats.orphaned += 1;
                return;
            }
            Part::Skip => return,
            Part::Open { slot, skeleton, .. } => (slot, skeleton),
        };
        let mut args = [Arg::Int(0); 6];
        let Ok(n) = message.args(&mut args) else {
            stats.malformed += 1;
            return;
        };
        let frame = &mut self.subjects[slot].frame;
        if !is_joint {
            match skeleton.read_position(&args[..n]) {
                Ok(p) => frame.root_position = Some(p),
                Err(r) => stats.refused(r),
            }
            return;
        }
        let Some((Arg::Str(name), values)) = args[..n].split_first() else {
            stats.malformed += 1;
            return;
        };
        let Some(joint) = skeleton.joint_index(name) else {
            stats.unknown_joints += 1;
            return;
        };
        match skeleton.read_rotation(values) {
            Ok(q) => {
                frame.set(joint, q);
                stats.joints += 1;
            }
            Err(r) => stats.refused(r),
        }
    }

    /// Reads a header and decides what its part is: accepted into its subject's
    /// frame (a new one, or the one being assembled), or refused and counted.
    fn open<'s>(
        &mut self,
        message: &Message<'_>,
        received: Instant,
        skeleton_for: &impl Fn(&str) -> Option<&'s LabSkeleton>,
        stats: &mut LabStats,
    ) -> Part<'s> {
        let header = match read_header(message) {
            Ok(h) => h,
            Err(r) => {
                stats.refused(r);
                return Part::Skip;
            }
        };
        let Some(name) = PerformerName::from_bytes(header.subject) else {
            stats.malformed += 1;
            return Part::Skip;
        };
        let Some(skeleton) = skeleton_for(name.as_str()) else {
            stats.unknown_subjects += 1;
            return Part::Skip;
        };
        let slot = self.slot(name, received, stats);
        let subject = &mut self.subjects[slot];
        subject.last_seen = self.clock;
        let silent = received.saturating_duration_since(subject.heard) >= RESTART_SILENCE;
        subject.heard = received;
        let begun = subject.parts != 0 || subject.last_complete.is_some();
        if begun && !silent {
            // The newest frame: the one being assembled, or the last completed.
            let (newest, newest_time) = (subject.frame.frame, subject.frame.time);
            let n = header.frame;
            if n == newest {
                if subject.parts == 0 {
                    stats.stale_parts += 1;
                    return Part::Skip;
                }
                if header.parts != subject.parts {
                    stats.malformed += 1;
                    return Part::Skip;
                }
                if subject.received & (1u64 << header.part) != 0 {
                    stats.stale_parts += 1;
                    return Part::Skip;
                }
                stats.parts += 1;
                return Part::Open {
                    slot,
                    skeleton,
                    part: header.part,
                };
            }
            let behind = newest_time - header.time;
            if n < newest && newest - n <= STALE_WINDOW && (0.0..=LATE_SPAN).contains(&behind) {
                stats.stale_parts += 1;
                return Part::Skip;
            }
        }
        if subject.parts != 0 {
            stats.incomplete_frames += 1;
        }
        // A new frame.
        let frame = &mut subject.frame;
        frame.frame = header.frame;
        frame.time = header.time;
        frame.root_position = None;
        frame.joint_count = skeleton.joint_count() as u16;
        frame.present = [0; MAX_JOINTS / 64];
        frame.rotations = [Quat::IDENTITY; MAX_JOINTS];
        subject.parts = header.parts;
        subject.received = 0;
        stats.parts += 1;
        Part::Open {
            slot,
            skeleton,
            part: header.part,
        }
    }

    /// The slot of subject `name`: found, new, or the least recently seen one
    /// taken over.
    fn slot(&mut self, name: PerformerName, received: Instant, stats: &mut LabStats) -> usize {
        if let Some(i) = self.subjects.iter().position(|s| s.frame.performer == name) {
            return i;
        }
        let fresh = Subject {
            frame: JointFrame::new(name),
            parts: 0,
            received: 0,
            last_complete: None,
            last_seen: self.clock,
            heard: received,
        };
        if self.subjects.len() < self.max_subjects {
            self.subjects.push(fresh);
            return self.subjects.len() - 1;
        }
        let oldest = (0..self.subjects.len())
            .min_by_key(|&i| self.subjects[i].last_seen)
            .unwrap_or(0);
        self.subjects[oldest] = fresh;
        stats.evicted_subjects += 1;
        oldest
    }

    /// Ends the part being read: marks it received, and hands the frame on when
    /// it was the last one missing.
    fn close(
        &mut self,
        part: Part<'_>,
        on_frame: &mut impl FnMut(&JointFrame),
        stats: &mut LabStats,
    ) {
        let Part::Open {
            slot,
            skeleton,
            part,
        } = part
        else {
            return;
        };
        let subject = &mut self.subjects[slot];
        subject.received |= 1u64 << part;
        let all = u64::MAX >> (64 - u32::from(subject.parts));
        if subject.received != all {
            return;
        }
        if skeleton.stream.space == RotationSpace::Global {
            skeleton.globals_to_locals(&mut subject.frame, &mut self.globals[..]);
        }
        subject.parts = 0;
        subject.last_complete = Some(subject.frame.frame);
        stats.frames += 1;
        on_frame(&subject.frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{EulerRot, Vec3};
    use rosc::OscType;

    use crate::formats::skeleton_json::{AngleUnit, Handedness, StreamFormat};
    use crate::formats::{Units, UpAxis};
    use crate::protocol::lab_osc::test_support::{
        Rng, assert_same_frame, bundle, decode, decode_at, epoch, euler, header_msg, joint_msg,
        lab19, msg, plain, random_frame, stream,
    };
    use crate::protocol::lab_osc::{MAX_DATAGRAM, MAX_JOINT_NAME};
    use crate::skeleton::{Joint, Skeleton, Transform};

    /// One datagram per case: the count it raises, how many frames it completes
    /// and whether the good joint after the bad message (`Chest`) still arrives.
    #[test]
    fn bad_input_is_counted_by_kind_and_the_rest_still_read() {
        type Count = fn(&LabStats) -> u32;
        /// What is sent, the count it raises and by how much, frames completed,
        /// whether `Chest` arrives.
        type Case = (&'static str, Vec<u8>, Count, u32, u32, bool);
        let h = || header_msg("ann", 7, 0, 1);
        let chest = || joint_msg("Chest", &[0.0, 0.0, 0.0, 1.0]);
        // A good header, `bad`, then a good joint.
        let bad = |bad: Vec<u8>| bundle(&[h(), bad, chest()]);
        let hips = |v: &[f32]| joint_msg("Hips", v);
        let root = |args: Vec<OscType>| msg(ROOT_ADDRESS, args);
        let head = |subject: &str, frame, part, parts| {
            bundle(&[header_msg(subject, frame, part, parts), chest()])
        };
        let head_args = |frame: OscType, time: OscType| {
            let args = vec!["ann".into(), frame, time, OscType::Int(0), OscType::Int(1)];
            bundle(&[msg(FRAME_ADDRESS, args), chest()])
        };
        let mut cut = bundle(&[h(), chest()]);
        cut.truncate(cut.len() - 6);
        let (f, d, i) = (OscType::Float, OscType::Double, OscType::Int);
        let (nan, inf) = (f32::NAN, f32::INFINITY);
        #[rustfmt::skip] // one line per case
        let cases: Vec<Case> = vec![
            ("garbage", b"not osc at all".to_vec(), |s| s.broken, 1, 0, false),
            ("empty", Vec::new(), |s| s.broken, 1, 0, false),
            ("truncated bundle", cut, |s| s.broken, 1, 1, false),
            ("garbage element", bad(b"garbage!".to_vec()), |s| s.broken, 1, 1, true),
            ("garbage in a nested bundle", bad(bundle(&[b"junk".to_vec()])), |s| s.broken, 1, 1, true),
            ("string for a float", bad(msg(JOINT_ADDRESS, vec!["Hips".into(), f(0.0), "x".into(), f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("too few values", bad(hips(&[0.0, 0.0, 1.0])), |s| s.malformed, 1, 1, true),
            ("too many values", bad(hips(&[0.0, 0.0, 0.0, 1.0, 0.0])), |s| s.malformed, 1, 1, true),
            ("no joint name", bad(msg(JOINT_ADDRESS, vec![f(0.0), f(0.0), f(0.0), f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("root of two values", bad(root(vec![f(0.0), f(1.0)])), |s| s.malformed, 1, 1, true),
            ("NaN quaternion", bad(hips(&[nan, 0.0, 0.0, 1.0])), |s| s.not_finite, 1, 1, true),
            ("infinite quaternion", bad(hips(&[0.0, inf, 0.0, 1.0])), |s| s.not_finite, 1, 1, true),
            ("NaN root", bad(root(vec![f(0.0), f(nan), f(0.0)])), |s| s.not_finite, 1, 1, true),
            ("huge quaternion", bad(hips(&[1e30, 0.0, 0.0, 1.0])), |s| s.out_of_range, 1, 1, true),
            ("huge root", bad(root(vec![f(0.0), f(1e5), f(0.0)])), |s| s.out_of_range, 1, 1, true),
            ("double beyond f32", bad(root(vec![f(0.0), d(1e300), f(0.0)])), |s| s.out_of_range, 1, 1, true),
            ("zero quaternion", bad(hips(&[0.0, 0.0, 0.0, 0.0])), |s| s.zero_rotations, 1, 1, true),
            ("unknown joint", bad(joint_msg("Tail", &[0.0, 0.0, 0.0, 1.0])), |s| s.unknown_joints, 1, 1, true),
            ("unknown address", bad(msg("/lab/tail", vec![f(1.0)])), |s| s.ignored, 1, 1, true),
            ("joint before any header", bundle(&[chest(), h()]), |s| s.orphaned, 1, 1, false),
            ("unknown subject", head("nobody", 7, 0, 1), |s| s.unknown_subjects, 1, 0, false),
            ("part outside its count", head("ann", 7, 2, 2), |s| s.malformed, 1, 0, false),
            ("no parts", head("ann", 7, 0, 0), |s| s.malformed, 1, 0, false),
            ("negative frame number", head("ann", -7, 0, 1), |s| s.malformed, 1, 0, false),
            ("subject name too long", head(&"a".repeat(33), 7, 0, 1), |s| s.malformed, 1, 0, false),
            ("header time NaN", head_args(i(7), d(f64::NAN)), |s| s.not_finite, 1, 0, false),
            ("float frame number", head_args(f(7.0), d(0.1)), |s| s.malformed, 1, 0, false),
            ("good", bundle(&[h(), chest()]), |s| s.dropped(), 0, 1, true),
        ];
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let chest = skeleton.joint_index(b"Chest").unwrap();
        for (case, datagram, count, expected, frames, chest_arrives) in cases {
            let mut assembler = LabAssembler::default();
            let mut got = Vec::new();
            let stats = assembler.datagram(
                &datagram,
                epoch(),
                |name| (name == "ann").then_some(&skeleton),
                |f| got.push(*f),
            );
            assert_eq!(count(&stats), expected, "{case}: {stats:?}");
            // Nothing else dropped.
            let others = stats.dropped().saturating_sub(count(&stats));
            assert_eq!(others, 0, "{case}: {stats:?}");
            assert_eq!((got.len() as u32, stats.frames), (frames, frames), "{case}");
            let arrived = got.first().is_some_and(|f| f.has(chest));
            assert_eq!(arrived, chest_arrives, "{case}");
        }
    }

    #[test]
    fn quaternions_are_normalized_and_frames_carry_the_header() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let datagram = bundle(&[
            msg(
                FRAME_ADDRESS,
                vec![
                    "ann".into(),
                    OscType::Long(5_000_000_000),
                    OscType::Float(2.5),
                    OscType::Int(0),
                    OscType::Int(1),
                ],
            ),
            msg(
                ROOT_ADDRESS,
                vec![OscType::Int(1), OscType::Double(0.5), OscType::Float(-2.0)],
            ),
            joint_msg("Chest", &[2.0, 0.0, 0.0, 0.0]),
        ]);
        let (frames, stats) = decode(&mut LabAssembler::default(), &skeleton, &[datagram]);
        assert_eq!(stats.dropped(), 0, "{stats:?}");
        let f = &frames[0];
        assert_eq!((f.frame, f.time, f.joint_count), (5_000_000_000, 2.5, 19));
        assert_eq!(f.root_position, Some(Vec3::new(1.0, 0.5, -2.0)));
        assert_eq!(f.rotations[1], Quat::from_xyzw(1.0, 0.0, 0.0, 0.0));
        assert!(f.has(1) && !f.has(0));
    }

    /// A 128-joint chain with long names: several datagrams per frame.
    fn big_skeleton(format: StreamFormat) -> LabSkeleton {
        let joints = (0..MAX_JOINTS)
            .map(|i| Joint {
                name: format!("{i:03}{}", "-".repeat(MAX_JOINT_NAME - 3)),
                parent: i.checked_sub(1),
                rest: Transform {
                    translation: Vec3::Y,
                    rotation: Quat::from_rotation_z(0.1 * i as f32),
                    scale: Vec3::ONE,
                },
                end: None,
            })
            .collect();
        LabSkeleton::new(&Skeleton::new(joints).unwrap(), format).unwrap()
    }

    #[test]
    fn multi_part_frames_are_handed_on_when_their_last_part_arrives() {
        let format = stream(
            RotationSpace::Global,
            euler(EulerRot::ZXY, AngleUnit::Degrees),
            Units::Centimetres,
            UpAxis::Z,
            Handedness::Left,
        );
        let skeleton = big_skeleton(format);
        let mut rng = Rng(5);
        let sent = random_frame(&mut rng, MAX_JOINTS, "ann", 10);
        let datagrams = skeleton.encode(&sent);
        assert!(datagrams.len() > 10, "{} parts", datagrams.len());
        assert!(datagrams.iter().all(|d| d.len() <= MAX_DATAGRAM));

        // In order: nothing until the last part, then the whole frame.
        let mut assembler = LabAssembler::default();
        for (i, d) in datagrams.iter().enumerate() {
            let (got, stats) = decode(&mut assembler, &skeleton, std::slice::from_ref(d));
            assert_eq!(stats.dropped(), 0, "{stats:?}");
            assert_eq!(got.len(), usize::from(i + 1 == datagrams.len()), "part {i}");
            if let Some(frame) = got.first() {
                assert_same_frame(&sent, frame, "in order");
            }
        }
        // Reversed: the frame completes on part 0, now the last to arrive.
        let mut assembler = LabAssembler::default();
        let mut reversed = datagrams.clone();
        reversed.reverse();
        let (head, last) = reversed.split_at(reversed.len() - 1);
        assert!(decode(&mut assembler, &skeleton, head).0.is_empty());
        let (got, _) = decode(&mut assembler, &skeleton, last);
        assert_same_frame(&sent, &got[0], "reversed");

        // A lost part: the frame is given up when the next one begins; repeated
        // and late parts are dropped.
        let mut assembler = LabAssembler::default();
        let next = random_frame(&mut rng, MAX_JOINTS, "ann", 11);
        let next_datagrams = skeleton.encode(&next);
        let mut stream = datagrams[1..].to_vec();
        stream.push(next_datagrams[0].clone());
        stream.push(next_datagrams[0].clone());
        stream.push(datagrams[0].clone());
        stream.extend(next_datagrams[1..].iter().cloned());
        stream.push(next_datagrams[2].clone());
        let (got, stats) = decode(&mut assembler, &skeleton, &stream);
        assert_eq!(got.len(), 1);
        assert_same_frame(&next, &got[0], "after a lost part");
        assert_eq!(stats.incomplete_frames, 1, "{stats:?}");
        assert_eq!(stats.stale_parts, 3, "{stats:?}");
    }

    #[test]
    fn a_sender_restarting_its_numbering_starts_a_new_sequence() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let mut rng = Rng(21);
        // Frames `numbers` of `subject` at 60 Hz, the first received `at` seconds
        // after the epoch, its capture time `time(n)`: the frames taken, the counts.
        let mut send = |assembler: &mut LabAssembler,
                        subject: &str,
                        numbers: std::ops::Range<u64>,
                        time: &dyn Fn(u64) -> f64,
                        at: f64| {
            let mut total = (0, LabStats::default());
            for (i, n) in numbers.enumerate() {
                let mut frame = random_frame(&mut rng, 19, subject, n);
                frame.time = time(n);
                let datagrams = skeleton.encode(&frame);
                let (got, stats) =
                    decode_at(assembler, &skeleton, &datagrams, at + i as f64 / 60.0);
                total.0 += got.len();
                total.1 += stats;
            }
            total
        };
        let capture = |n: u64| n as f64 / 60.0;
        let mut assembler = LabAssembler::default();

        // Stopped at frame 99, silent 3 s, restarted at 0: every frame taken.
        assert_eq!(send(&mut assembler, "ann", 0..100, &capture, 0.0).0, 100);
        let (taken, stats) = send(&mut assembler, "ann", 0..150, &capture, 100.0 / 60.0 + 3.0);
        assert_eq!(
            (taken, stats.dropped()),
            (150, 0),
            "after a pause: {stats:?}"
        );

        // 0 to 59, then at once 0 to 59 again (the capture clock restarted too).
        assert_eq!(send(&mut assembler, "bob", 0..60, &capture, 10.0).0, 60);
        let (taken, stats) = send(&mut assembler, "bob", 0..60, &capture, 11.0);
        assert_eq!((taken, stats.dropped()), (60, 0), "at once: {stats:?}");

        // The numbering restarted, the capture clock going on.
        assert_eq!(send(&mut assembler, "cy", 0..60, &capture, 20.0).0, 60);
        let later = |n: u64| 1.0 + n as f64 / 60.0;
        let (taken, stats) = send(&mut assembler, "cy", 0..60, &later, 21.0);
        assert_eq!(
            (taken, stats.dropped()),
            (60, 0),
            "clock going on: {stats:?}"
        );

        // A sender with no clock (time 0 throughout), back after 0.6 s of silence.
        let none = |_: u64| 0.0;
        assert_eq!(send(&mut assembler, "dee", 0..60, &none, 30.0).0, 60);
        let (taken, stats) = send(&mut assembler, "dee", 0..60, &none, 31.6);
        assert_eq!((taken, stats.dropped()), (60, 0), "no clock: {stats:?}");

        // A late part of a recent frame, or one sent twice, is still dropped.
        assert_eq!(send(&mut assembler, "eve", 0..11, &capture, 40.0).0, 11);
        for n in [8, 10, 0] {
            let (taken, stats) = send(&mut assembler, "eve", n..n + 1, &capture, 40.2);
            assert_eq!((taken, stats.stale_parts), (0, 1), "frame {n}: {stats:?}");
        }
        let (taken, stats) = send(&mut assembler, "eve", 11..20, &capture, 40.2);
        assert_eq!(
            (taken, stats.dropped()),
            (9, 0),
            "after late parts: {stats:?}"
        );
    }

    #[test]
    fn subjects_share_a_port_and_the_least_recently_seen_makes_room() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let mut rng = Rng(9);
        let mut assembler = LabAssembler::new(2);
        let mut stream = Vec::new();
        for n in 0..3 {
            for subject in ["ann", "bob", "cy"] {
                stream.extend(skeleton.encode(&random_frame(&mut rng, 19, subject, n)));
            }
        }
        let (got, stats) = decode(&mut assembler, &skeleton, &stream);
        assert_eq!(got.len(), 9);
        assert_eq!(stats.evicted_subjects, 7, "{stats:?}");
        let names: Vec<&str> = got.iter().map(|f| f.performer.as_str()).collect();
        assert_eq!(&names[..3], ["ann", "bob", "cy"]);
    }

    #[test]
    fn no_input_makes_it_panic() {
        let skeleton = LabSkeleton::new(&lab19(), plain()).unwrap();
        let mut rng = Rng(13);
        let good = skeleton
            .encode(&random_frame(&mut rng, 19, "ann", 1))
            .remove(0);
        let mut assembler = LabAssembler::default();
        for len in 0..good.len() {
            let _ = decode(&mut assembler, &skeleton, &[good[..len].to_vec()]);
        }
        for _ in 0..2000 {
            let mut d = good.clone();
            for _ in 0..4 {
                let i = (rng.next() * d.len() as f32) as usize % d.len();
                d[i] = (rng.next() * 256.0) as u8;
            }
            let _ = decode(&mut assembler, &skeleton, &[d]);
        }
    }
}
