//! The live pipeline's plumbing: what travels between the input tasks, the solver
//! thread and the output tasks, and the lock-free rings it travels in.
//!
//! ```text
//! input task ─InputPort─► solver thread ─OutputPort─► output task
//!   (tokio)   SPSC ring    (plain thread)  SPSC ring    (tokio)
//! ```
//!
//! Every ring is a `ringbuf` SPSC ring of fixed-size values (no heap per frame).
//! A producer wakes its consumer without a lock: the solver thread is unparked, an
//! output task's waker is woken through an `AtomicWaker`. What happens when a ring
//! is full is decided per ring: an input drops the new frame and counts it; a live
//! output drops the frame and counts it (its task always keeps only the newest
//! frame per performer anyway); the recorder's port never drops (frames wait in a
//! backlog on the solver side until the ring has room).

pub mod performer;
pub mod solver;
pub mod status;

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::task::Poll;
use std::thread::Thread;
use std::time::Instant;

use atomic_waker::AtomicWaker;
use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};

use glam::Vec3;

use crate::humanoid::HumanoidPose;
use crate::protocol::frame::{JointFrame, MAX_JOINTS, PerformerName, TrackerFrame};

/// What an input hands the solver.
// Ring slots are fixed-size by design: boxing the large variants would allocate
// per frame.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SourceFrame {
    /// A pose already on the humanoid bones (VMC, a replayed recording); `time` in
    /// seconds from the performer's first frame.
    Humanoid {
        performer: PerformerName,
        time: f64,
        pose: HumanoidPose,
    },
    /// A streamed skeleton; `skeleton` indexes the bridge's skeleton table.
    Joints { skeleton: u16, frame: JointFrame },
    /// Tracked devices, for VR-mode IK.
    Trackers(TrackerFrame),
    /// A custom expression slot of `performer` got a name (sent once per slot,
    /// before the first frame using it).
    ExpressionName {
        performer: PerformerName,
        slot: u8,
        name: PerformerName,
    },
}

/// A frame with the time it arrived, for the latency histograms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputFrame {
    pub received: Instant,
    pub frame: SourceFrame,
}

/// Where a performer's frames come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Humanoid,
    Skeleton,
    Trackers,
}

/// One solved frame of one performer, in normalized space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseFrame {
    pub performer: PerformerName,
    /// Frames solved for this performer so far (1 for the first).
    pub seq: u64,
    /// Seconds from the performer's first frame (the sender's clock when it sends
    /// one).
    pub time: f64,
    pub pose: HumanoidPose,
    /// When the input received the frame.
    pub received: Instant,
}

/// Where a performer's source is, for outputs that show it beside the solved
/// pose (the viewer): a streamed skeleton's joints, or the tracked devices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourcePoints {
    pub performer: PerformerName,
    /// The `seq` of the pose solved from the same frame.
    pub seq: u64,
    /// A skeleton's index in the bridge's skeleton table; `None` for trackers.
    pub skeleton: Option<u16>,
    /// How many entries of `points` are used: the skeleton's joints in its order,
    /// or one per `TrackedPoint`.
    pub count: u16,
    /// Bit `i` set when `points[i]` is known.
    pub present: u128,
    /// Model-space positions, metres, internal axes; a skeleton turned to face +Z.
    pub points: [Vec3; MAX_JOINTS],
}

impl SourcePoints {
    #[must_use]
    pub fn new(performer: PerformerName) -> Self {
        Self {
            performer,
            seq: 0,
            skeleton: None,
            count: 0,
            present: 0,
            points: [Vec3::ZERO; MAX_JOINTS],
        }
    }

    /// The known points, with their index.
    pub fn known(&self) -> impl Iterator<Item = (usize, Vec3)> + '_ {
        (0..usize::from(self.count))
            .filter(|&i| self.present & (1 << i) != 0)
            .map(|i| (i, self.points[i]))
    }
}

/// What the solver hands each output.
#[allow(clippy::large_enum_variant)] // fixed-size ring slots, as `SourceFrame`
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputMsg {
    Pose(PoseFrame),
    /// The source of the pose just before, for outputs that asked for it.
    Source(SourcePoints),
    /// A performer sent its first frame.
    Appeared {
        performer: PerformerName,
        source: SourceKind,
    },
    /// A performer sent nothing for the configured timeout (or the bridge stops).
    Gone {
        performer: PerformerName,
    },
    /// See `SourceFrame::ExpressionName`.
    ExpressionName {
        performer: PerformerName,
        slot: u8,
        name: PerformerName,
    },
}

/// Counters of one input, shared with the status report.
#[derive(Debug, Default)]
pub struct InputStats {
    /// Datagrams or WebSocket messages received.
    pub packets: AtomicU64,
    /// Frames handed to the solver.
    pub frames: AtomicU64,
    /// Frames dropped because the ring to the solver was full.
    pub drops: AtomicU64,
    /// Messages or datagrams that could not be read (counted, dropped).
    pub bad: AtomicU64,
    /// Well-formed messages naming a bone, joint or performer nobody knows.
    pub unknown: AtomicU64,
    /// Messages ignored as the protocol asks (unknown addresses).
    pub ignored: AtomicU64,
}

/// Counters of one output, shared with the status report.
#[derive(Debug, Default)]
pub struct OutputStats {
    /// Frames sent (or recorded).
    pub frames: AtomicU64,
    /// Frames dropped: ring full, superseded by a newer frame, or over a rate cap.
    pub drops: AtomicU64,
    /// Datagrams or messages written.
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
    /// Failed sends (a client gone, a network error).
    pub errors: AtomicU64,
    /// Datagrams sent while no receiver listened (ICMP port unreachable): not an
    /// error, receivers come and go.
    pub no_receiver: AtomicU64,
}

/// The producer end an input task holds.
pub struct InputPort {
    ring: HeapProd<InputFrame>,
    solver: Thread,
    pub stats: Arc<InputStats>,
}

impl InputPort {
    /// Hands a frame to the solver; a full ring drops it (counted). Returns whether
    /// it went in.
    pub fn push(&mut self, frame: InputFrame) -> bool {
        let pushed = self.push_unwoken(frame);
        self.wake_solver();
        pushed
    }

    /// As `push`, but leaves waking the solver to the caller's `wake_solver`, once
    /// per batch of frames (waking it per frame costs a system call each while it
    /// sleeps).
    pub fn push_unwoken(&mut self, frame: InputFrame) -> bool {
        let pushed = self.ring.try_push(frame).is_ok();
        if pushed {
            if matches!(
                frame.frame,
                SourceFrame::Humanoid { .. }
                    | SourceFrame::Joints { .. }
                    | SourceFrame::Trackers(_)
            ) {
                self.stats.frames.fetch_add(1, Relaxed);
            }
        } else {
            self.stats.drops.fetch_add(1, Relaxed);
        }
        pushed
    }

    /// Wakes the solver (cheap when it is awake already).
    pub fn wake_solver(&self) {
        self.solver.unpark();
    }
}

impl InputPort {
    /// Hands a frame to the solver unless the ring is full; a full ring is not
    /// counted as a drop (the caller waits and tries again: replays in a hurry).
    pub fn try_push(&mut self, frame: InputFrame) -> bool {
        let pushed = self.ring.try_push(frame).is_ok();
        if pushed && !matches!(frame.frame, SourceFrame::ExpressionName { .. }) {
            self.stats.frames.fetch_add(1, Relaxed);
        }
        self.solver.unpark();
        pushed
    }
}

/// The consumer end of an input, held by the solver.
pub struct InputRing {
    pub name: String,
    pub ring: HeapCons<InputFrame>,
    pub stats: Arc<InputStats>,
}

/// A new input's two ends: the task gets the port, the solver the ring.
#[must_use]
pub fn input_ring(name: &str, capacity: usize, solver: Thread) -> (InputPort, InputRing) {
    input_ring_sharing(name, capacity, solver, Arc::new(InputStats::default()))
}

/// As `input_ring`, counting into `stats` shared with other rings (one input with
/// a ring per connection: the WebSocket clients).
#[must_use]
pub fn input_ring_sharing(
    name: &str,
    capacity: usize,
    solver: Thread,
    stats: Arc<InputStats>,
) -> (InputPort, InputRing) {
    let (prod, cons) = HeapRb::new(capacity.max(1)).split();
    (
        InputPort {
            ring: prod,
            solver,
            stats: stats.clone(),
        },
        InputRing {
            name: name.to_owned(),
            ring: cons,
            stats,
        },
    )
}

/// Whether an output may lose frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Live: a full ring drops the frame (counted).
    Newest,
    /// Recorder: nothing is dropped; frames wait on the solver side.
    Every,
}

/// The producer end of an output, held by the solver.
pub struct OutputPort {
    pub name: String,
    ring: HeapProd<OutputMsg>,
    waker: Arc<AtomicWaker>,
    delivery: Delivery,
    /// Frames waiting for room (recorder only).
    backlog: VecDeque<OutputMsg>,
    closed: Arc<AtomicBool>,
    pub stats: Arc<OutputStats>,
    /// How many of the output's clients want `OutputMsg::Source`; none asked when
    /// `None`.
    sources_wanted: Option<Arc<AtomicUsize>>,
    /// Whether the output wants `OutputMsg::Pose` now (the recorder: only while it
    /// records or waits for a performer); always when `None`.
    poses_wanted: Option<Arc<AtomicBool>>,
    /// Something was pushed (or moved from the backlog) since the last wake.
    unwoken: bool,
}

impl Drop for OutputPort {
    /// The solver is done: the output drains what is left and ends.
    fn drop(&mut self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.waker.wake();
    }
}

impl OutputPort {
    /// Hands a message to the output. Events (appeared, gone, names) are never
    /// dropped by a live output either: they wait in the backlog like the
    /// recorder's frames. Poses are passed over while a gate says the output
    /// wants none (`with_poses_gate`).
    pub fn push(&mut self, msg: &OutputMsg) {
        if matches!(msg, OutputMsg::Pose(_)) && !self.wants_poses() {
            return;
        }
        let live = matches!(msg, OutputMsg::Pose(_) | OutputMsg::Source(_));
        let keep = self.delivery == Delivery::Every || !live;
        self.unwoken = true;
        if !self.backlog.is_empty() {
            self.flush_backlog();
        }
        // Copied once, straight into the ring's slot.
        if self.backlog.is_empty() && self.ring.push_slice(std::slice::from_ref(msg)) == 1 {
            return;
        }
        if keep {
            self.backlog.push_back(*msg);
        } else {
            self.stats.drops.fetch_add(1, Relaxed);
        }
    }

    /// Moves waiting messages into the ring while it has room.
    pub fn flush_backlog(&mut self) {
        self.unwoken = true;
        while let Some(msg) = self.backlog.pop_front() {
            if let Err(msg) = self.ring.try_push(msg) {
                self.backlog.push_front(msg);
                break;
            }
        }
    }

    /// Sends `OutputMsg::Source` too while `wanted` is above zero.
    #[must_use]
    pub fn with_sources(mut self, wanted: Arc<AtomicUsize>) -> Self {
        self.sources_wanted = Some(wanted);
        self
    }

    /// Whether some client of this output wants the performers' sources now.
    #[must_use]
    pub fn wants_sources(&self) -> bool {
        self.sources_wanted
            .as_ref()
            .is_some_and(|w| w.load(Relaxed) > 0)
    }

    /// Sends `OutputMsg::Pose` only while `wanted` is set.
    #[must_use]
    pub fn with_poses_gate(mut self, wanted: Arc<AtomicBool>) -> Self {
        self.poses_wanted = Some(wanted);
        self
    }

    /// Whether the output wants solved poses now (`push` passes over them when not).
    #[must_use]
    fn wants_poses(&self) -> bool {
        self.poses_wanted.as_ref().is_none_or(|w| w.load(Relaxed))
    }

    #[must_use]
    pub fn has_backlog(&self) -> bool {
        !self.backlog.is_empty()
    }

    /// Wakes the output's task (after a batch of pushes).
    pub fn wake(&mut self) {
        self.unwoken = false;
        self.waker.wake();
    }

    /// Wakes the output's task if anything was pushed since the last wake: an
    /// output given nothing (the recorder while it does not record) sleeps on.
    pub fn wake_if_pushed(&mut self) {
        if self.unwoken {
            self.wake();
        }
    }
}

/// The consumer end an output task holds.
pub struct OutputRing {
    ring: HeapCons<OutputMsg>,
    waker: Arc<AtomicWaker>,
    closed: Arc<AtomicBool>,
    pub stats: Arc<OutputStats>,
}

impl OutputRing {
    /// The next message, if any.
    pub fn try_pop(&mut self) -> Option<OutputMsg> {
        self.ring.try_pop()
    }

    /// The next message, read where it lies (`skip_first` frees it).
    #[must_use]
    pub fn first(&self) -> Option<&OutputMsg> {
        self.ring.first()
    }

    /// Frees the next message's slot.
    pub fn skip_first(&mut self) {
        self.ring.skip(1);
    }

    /// Hands every message now in the ring to `each`, in order, reading them where
    /// they lie (a pose is over 1 KiB), then frees their slots.
    pub fn drain(&mut self, mut each: impl FnMut(&OutputMsg)) {
        let (first, second) = self.ring.as_slices();
        let n = first.len() + second.len();
        first.iter().chain(second).for_each(&mut each);
        self.ring.skip(n);
    }

    /// Whether the solver has finished: once the ring is empty, nothing more comes.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits until the ring holds a message or the solver has finished.
    pub async fn ready(&mut self) {
        // Moved in as `&mut`: the ring's consumer is `Send` but not `Sync`.
        let this = self;
        poll_fn(move |cx| {
            if !this.ring.is_empty() || this.is_closed() {
                return Poll::Ready(());
            }
            this.waker.register(cx.waker());
            if !this.ring.is_empty() || this.is_closed() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

/// A new output's two ends: the solver gets the port, the task the ring.
#[must_use]
pub fn output_ring(name: &str, capacity: usize, delivery: Delivery) -> (OutputPort, OutputRing) {
    let (prod, cons) = HeapRb::new(capacity.max(1)).split();
    let waker = Arc::new(AtomicWaker::new());
    let stats = Arc::new(OutputStats::default());
    let closed = Arc::new(AtomicBool::new(false));
    (
        OutputPort {
            name: name.to_owned(),
            ring: prod,
            waker: waker.clone(),
            delivery,
            backlog: VecDeque::new(),
            closed: closed.clone(),
            stats: stats.clone(),
            sources_wanted: None,
            poses_wanted: None,
            unwoken: false,
        },
        OutputRing {
            ring: cons,
            waker,
            closed,
            stats,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> PerformerName {
        PerformerName::new(s).unwrap()
    }

    fn pose_msg(seq: u64) -> OutputMsg {
        OutputMsg::Pose(PoseFrame {
            performer: name("a"),
            seq,
            time: seq as f64,
            pose: HumanoidPose::default(),
            received: Instant::now(),
        })
    }

    #[test]
    fn a_full_input_ring_drops_and_counts() {
        let (mut port, mut ring) = input_ring("test", 2, std::thread::current());
        let frame = InputFrame {
            received: Instant::now(),
            frame: SourceFrame::Humanoid {
                performer: name("a"),
                time: 0.0,
                pose: HumanoidPose::default(),
            },
        };
        assert!(port.push(frame) && port.push(frame) && !port.push(frame));
        assert_eq!(ring.stats.drops.load(Relaxed), 1);
        assert_eq!(ring.stats.frames.load(Relaxed), 2);
        assert!(ring.ring.try_pop().is_some());
    }

    #[test]
    fn a_live_output_drops_poses_but_keeps_events() {
        let (mut port, mut ring) = output_ring("live", 1, Delivery::Newest);
        port.push(&pose_msg(1));
        port.push(&pose_msg(2));
        port.push(&OutputMsg::Gone {
            performer: name("a"),
        });
        assert_eq!(port.stats.drops.load(Relaxed), 1);
        assert!(matches!(ring.try_pop(), Some(OutputMsg::Pose(p)) if p.seq == 1));
        port.flush_backlog();
        assert!(matches!(ring.try_pop(), Some(OutputMsg::Gone { .. })));
    }

    #[test]
    fn the_recorder_port_never_drops_and_keeps_order() {
        let (mut port, mut ring) = output_ring("recorder", 2, Delivery::Every);
        for seq in 1..=10 {
            port.push(&pose_msg(seq));
        }
        let mut got = Vec::new();
        while got.len() < 10 {
            port.flush_backlog();
            while let Some(OutputMsg::Pose(p)) = ring.try_pop() {
                got.push(p.seq);
            }
        }
        assert_eq!(got, (1..=10).collect::<Vec<_>>());
        assert_eq!(port.stats.drops.load(Relaxed), 0);
    }
}
