//! The solver thread: drains every input ring, solves each frame for its performer
//! (map, retarget, IK, filter; see `performer`), and hands the result to every
//! output ring. A plain thread, not an async task: it never blocks on an output,
//! never allocates per frame, and parks when every ring is empty (an input's push
//! unparks it).
//!
//! Performers appear with their first frame and are dropped after the configured
//! silence, each announced to the outputs (`Appeared`, `Gone`), so a recorder can
//! finish a take and a viewer can forget a skeleton.

use std::collections::HashMap;

use ringbuf::traits::Consumer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::ik::calibration::Calibration;
use crate::protocol::frame::PerformerName;

use super::performer::{Avatars, Performer, PerformerSettings, SolveError, StreamSkeleton};
use super::{
    InputFrame, InputRing, InputStats, OutputMsg, OutputPort, PoseFrame, SourceFrame, SourceKind,
    SourcePoints,
};

/// How the solver treats performers.
#[derive(Debug, Clone)]
pub struct SolverConfig {
    /// A performer silent this long is gone.
    pub performer_timeout: Duration,
    /// At most this many performers at once; frames of more are dropped (counted).
    pub max_performers: usize,
    /// Settings per source kind, for performers without their own.
    pub humanoid: PerformerSettings,
    pub skeleton: PerformerSettings,
    pub trackers: PerformerSettings,
    /// Settings of named performers, for whichever kind of source they stream.
    pub performers: HashMap<String, SettingsByKind>,
}

/// One named performer's settings for each kind of source: its own changes
/// applied to that kind's defaults, and its avatar.
#[derive(Debug, Clone, Copy)]
pub struct SettingsByKind {
    pub humanoid: PerformerSettings,
    pub skeleton: PerformerSettings,
    pub trackers: PerformerSettings,
    /// Index into the solver's `Avatars` (0: the default avatar).
    pub avatar: usize,
}

impl SettingsByKind {
    #[must_use]
    pub fn of(&self, kind: SourceKind) -> PerformerSettings {
        match kind {
            SourceKind::Humanoid => self.humanoid,
            SourceKind::Skeleton => self.skeleton,
            SourceKind::Trackers => self.trackers,
        }
    }
}

/// What the rest of the bridge may ask the solver (rare: not per frame).
pub enum SolverControl {
    /// A new input (a WebSocket client) starts feeding frames.
    AddInput(InputRing),
    /// Take a performer's current devices as its T-pose calibration.
    Calibrate {
        performer: String,
        reply: tokio::sync::oneshot::Sender<Result<Calibration, String>>,
    },
    /// Describe the performers.
    Performers {
        reply: tokio::sync::oneshot::Sender<Vec<PerformerInfo>>,
    },
}

/// One performer as listed by `SolverControl::Performers`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PerformerInfo {
    pub name: String,
    pub source: SourceKind,
    /// The skeleton of a skeleton source.
    pub skeleton: Option<String>,
    pub frames: u64,
    /// Milliseconds since its last frame.
    pub last_seen_ms: u64,
    pub calibration: Option<Calibration>,
    /// Whether `calibration` was measured, not guessed from the avatar.
    pub calibrated: bool,
}

/// Counters of the solver, shared with the status report.
#[derive(Debug, Default)]
pub struct SolverStats {
    pub frames: AtomicU64,
    /// Frames that could not be solved (wrong kind, missing devices, bad values).
    pub errors: AtomicU64,
    /// Frames of performers over `max_performers`.
    pub refused: AtomicU64,
    pub performers: AtomicU64,
}

/// The solver and everything it owns.
pub struct Solver {
    config: SolverConfig,
    skeletons: Arc<[StreamSkeleton]>,
    avatars: Avatars,
    inputs: Vec<InputRing>,
    outputs: Vec<OutputPort>,
    control: mpsc::Receiver<SolverControl>,
    performers: Vec<Performer>,
    by_name: foldhash::HashMap<PerformerName, usize>,
    /// Reused for every `OutputMsg::Source`.
    points: Box<SourcePoints>,
    pub stats: Arc<SolverStats>,
}

/// How long the solver sleeps when idle before checking timeouts and shutdown.
const IDLE: Duration = Duration::from_millis(20);

/// Frames taken from one input ring before the next input's turn.
const FRAMES_PER_TURN: usize = 64;

impl Solver {
    /// A solver for performers on `avatars` (one `Avatar`: every performer on it).
    #[must_use]
    pub fn new(
        config: SolverConfig,
        skeletons: Arc<[StreamSkeleton]>,
        avatars: impl Into<Avatars>,
        inputs: Vec<InputRing>,
        outputs: Vec<OutputPort>,
        control: mpsc::Receiver<SolverControl>,
    ) -> Self {
        Self {
            config,
            skeletons,
            avatars: avatars.into(),
            inputs,
            outputs,
            control,
            performers: Vec::new(),
            by_name: foldhash::HashMap::default(),
            points: Box::new(SourcePoints::new(
                PerformerName::new("_").unwrap_or_else(|| unreachable!("a valid name")),
            )),
            stats: Arc::new(SolverStats::default()),
        }
    }

    /// Runs until `shutdown` is set and every input ring is drained; then every
    /// performer is announced gone and every waiting recorder frame delivered.
    pub fn run(mut self, shutdown: &AtomicBool) {
        let mut last_sweep = Instant::now();
        loop {
            while let Ok(control) = self.control.try_recv() {
                self.control(control);
            }
            let stopping = shutdown.load(Relaxed);
            let mut worked = false;
            // Frames are solved where they lie in the rings (a frame is 2 KiB;
            // copying each out cost more than solving a VMC pose). Each input gets
            // at most `FRAMES_PER_TURN` a turn, so one kept full by a flood cannot
            // hold back the others or the outputs.
            let mut inputs = std::mem::take(&mut self.inputs);
            for input in &mut inputs {
                for _ in 0..FRAMES_PER_TURN {
                    let Some(frame) = input.ring.first() else {
                        break;
                    };
                    self.frame(&input.stats, frame);
                    input.ring.skip(1);
                    worked = true;
                }
            }
            self.inputs = inputs;
            for output in &mut self.outputs {
                if output.has_backlog() {
                    output.flush_backlog();
                    worked = true;
                }
                output.wake_if_pushed();
            }
            let now = Instant::now();
            if now.duration_since(last_sweep) >= IDLE {
                self.sweep(now);
                last_sweep = now;
            }
            if stopping && !worked {
                break;
            }
            if !worked {
                std::thread::park_timeout(IDLE);
            }
        }
        let gone: Vec<PerformerName> = self.performers.iter().map(|p| p.name).collect();
        for performer in gone {
            self.broadcast(OutputMsg::Gone { performer });
        }
        self.performers.clear();
        self.stats.performers.store(0, Relaxed);
        // The recorder never drops: wait until its ring has taken everything.
        while self.outputs.iter().any(OutputPort::has_backlog) {
            for output in &mut self.outputs {
                output.flush_backlog();
                output.wake();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn broadcast(&mut self, msg: OutputMsg) {
        broadcast(&mut self.outputs, &msg);
    }

    /// A performer's settings and avatar: its own, else its kind's and the
    /// default avatar.
    fn settings(&self, name: PerformerName, kind: SourceKind) -> (PerformerSettings, usize) {
        self.config
            .performers
            .get(name.as_str())
            .map(|own| (own.of(kind), own.avatar))
            .unwrap_or(match kind {
                SourceKind::Humanoid => (self.config.humanoid, 0),
                SourceKind::Skeleton => (self.config.skeleton, 0),
                SourceKind::Trackers => (self.config.trackers, 0),
            })
    }

    /// Keeps a calibration taken live among `performer`'s settings: if it goes (a
    /// dropout past the timeout) and comes back in this run, it starts calibrated,
    /// as it does on the next run from the configuration file.
    fn keep_calibration(&mut self, performer: &str, calibration: Calibration) {
        let defaults = SettingsByKind {
            humanoid: self.config.humanoid,
            skeleton: self.config.skeleton,
            trackers: self.config.trackers,
            avatar: 0,
        };
        let own = self
            .config
            .performers
            .entry(performer.to_owned())
            .or_insert(defaults);
        own.trackers.calibration = Some(calibration);
    }

    /// The performer's index, adding it on its first frame (`None`: over the cap).
    fn performer(
        &mut self,
        name: PerformerName,
        kind: SourceKind,
        skeleton: Option<u16>,
        now: Instant,
    ) -> Option<usize> {
        if let Some(&i) = self.by_name.get(&name) {
            return Some(i);
        }
        if self.performers.len() >= self.config.max_performers {
            self.stats.refused.fetch_add(1, Relaxed);
            return None;
        }
        let performer = self.new_performer(name, kind, skeleton, now);
        self.performers.push(performer);
        let index = self.performers.len() - 1;
        self.by_name.insert(name, index);
        self.stats
            .performers
            .store(self.performers.len() as u64, Relaxed);
        self.broadcast(OutputMsg::Appeared {
            performer: name,
            source: kind,
        });
        Some(index)
    }

    fn frame(&mut self, input: &InputStats, frame: &InputFrame) {
        let now = Instant::now();
        let (name, kind, skeleton) = match &frame.frame {
            SourceFrame::Humanoid { performer, .. } => (*performer, SourceKind::Humanoid, None),
            SourceFrame::Joints { skeleton, frame } => {
                (frame.performer, SourceKind::Skeleton, Some(*skeleton))
            }
            SourceFrame::Trackers(t) => (t.performer, SourceKind::Trackers, None),
            SourceFrame::ExpressionName {
                performer,
                slot,
                name,
            } => {
                let msg = OutputMsg::ExpressionName {
                    performer: *performer,
                    slot: *slot,
                    name: *name,
                };
                self.broadcast(msg);
                return;
            }
        };
        let Some(index) = self.performer(name, kind, skeleton, now) else {
            input.drops.fetch_add(1, Relaxed);
            return;
        };
        let skeletons = self.skeletons.clone();
        let performer = &mut self.performers[index];
        let arrived = frame.received;
        let avatars = &self.avatars;
        let solved = caught(|| match &frame.frame {
            SourceFrame::Humanoid { time, pose, .. } => {
                performer.solve_humanoid(*time, pose, frame.received)
            }
            SourceFrame::Joints { skeleton, frame } => {
                match skeletons.get(usize::from(*skeleton)) {
                    Some(s) => performer.solve_joints(*skeleton, s, frame, avatars, arrived),
                    None => Err(SolveError::SourceChanged),
                }
            }
            SourceFrame::Trackers(t) => performer.solve_trackers(t, avatars, frame.received),
            // Broadcast above, before any performer is looked up.
            SourceFrame::ExpressionName { .. } => Err(SolveError::SourceChanged),
        });
        if solved == Err(SolveError::Panicked) {
            self.restart(index, now);
        }
        match solved {
            Ok(time) => {
                self.stats.frames.fetch_add(1, Relaxed);
                let performer = &self.performers[index];
                let msg = OutputMsg::Pose(PoseFrame {
                    performer: performer.name,
                    seq: performer.seq,
                    time,
                    pose: performer.pose,
                    received: frame.received,
                });
                broadcast(&mut self.outputs, &msg);
                if self.outputs.iter().any(OutputPort::wants_sources)
                    && self.performers[index].source_points(&skeletons, &mut self.points)
                {
                    let msg = OutputMsg::Source(*self.points);
                    for output in self.outputs.iter_mut().filter(|o| o.wants_sources()) {
                        output.push(&msg);
                    }
                }
            }
            Err(err) => {
                self.stats.errors.fetch_add(1, Relaxed);
                input.bad.fetch_add(1, Relaxed);
                // Still sending: it stays (no appearing and going every timeout),
                // and the log says once why its frames give no pose.
                let performer = &mut self.performers[index];
                performer.last_seen = now;
                if std::mem::replace(&mut performer.unsolved_said, true) {
                    tracing::debug!(%err, performer = %name, "frame not solved");
                } else {
                    tracing::warn!(%err, performer = %name, "frames not solved (said once)");
                }
            }
        }
    }

    /// Replaces performer `index` by a new one of the same name, kind, skeleton,
    /// settings and avatar, as on its first frame (its filters, IK state and last
    /// pose gone), keeping its sequence number (its poses' numbers go on) and what
    /// the log has said. No output hears of it: the performer stays.
    fn restart(&mut self, index: usize, now: Instant) {
        let old = &self.performers[index];
        let (seq, said) = (old.seq, old.unsolved_said);
        let mut fresh = self.new_performer(old.name, old.kind, old.skeleton(), now);
        fresh.seq = seq;
        fresh.unsolved_said = said;
        self.performers[index] = fresh;
    }

    /// A performer as on its first frame: its settings and avatar from the config
    /// (`settings`), streaming `skeleton` (an index of the skeleton table) if any.
    fn new_performer(
        &self,
        name: PerformerName,
        kind: SourceKind,
        skeleton: Option<u16>,
        now: Instant,
    ) -> Performer {
        let (settings, avatar) = self.settings(name, kind);
        let skeleton = skeleton.and_then(|s| self.skeletons.get(usize::from(s)).map(|k| (s, k)));
        Performer::new(name, kind, skeleton, settings, &self.avatars, avatar, now)
    }

    /// Drops performers silent for longer than the timeout.
    fn sweep(&mut self, now: Instant) {
        let timeout = self.config.performer_timeout;
        let mut i = 0;
        while i < self.performers.len() {
            if now.duration_since(self.performers[i].last_seen) > timeout {
                let gone = self.performers.swap_remove(i);
                self.by_name.remove(&gone.name);
                if let Some(moved) = self.performers.get(i) {
                    self.by_name.insert(moved.name, i);
                }
                tracing::info!(performer = %gone.name, "performer timed out");
                self.broadcast(OutputMsg::Gone {
                    performer: gone.name,
                });
            } else {
                i += 1;
            }
        }
        self.stats
            .performers
            .store(self.performers.len() as u64, Relaxed);
    }

    fn control(&mut self, control: SolverControl) {
        match control {
            SolverControl::AddInput(ring) => self.inputs.push(ring),
            SolverControl::Calibrate { performer, reply } => {
                let found = self
                    .performers
                    .iter_mut()
                    .find(|p| p.name.as_str() == performer);
                let result = match found {
                    None => Err(format!("no performer `{performer}`")),
                    Some(p) => match (p.calibrate(), p.calibration()) {
                        (true, Some(calibration)) => Ok(calibration),
                        _ => Err(format!(
                            "`{performer}` is not a tracker source with a headset"
                        )),
                    },
                };
                if let Ok(calibration) = result {
                    self.keep_calibration(&performer, calibration);
                }
                // The asker may have gone; nothing to do then.
                let _ = reply.send(result);
            }
            SolverControl::Performers { reply } => {
                let now = Instant::now();
                let list = self
                    .performers
                    .iter()
                    .map(|p| PerformerInfo {
                        name: p.name.to_string(),
                        source: p.kind,
                        skeleton: p
                            .skeleton()
                            .and_then(|s| self.skeletons.get(usize::from(s)))
                            .map(|s| s.name.clone()),
                        frames: p.seq,
                        last_seen_ms: now.duration_since(p.last_seen).as_millis() as u64,
                        calibration: p.calibration(),
                        calibrated: p.is_calibrated(),
                    })
                    .collect();
                let _ = reply.send(list);
            }
        }
    }
}

/// Hands `msg` to every output.
fn broadcast(outputs: &mut [OutputPort], msg: &OutputMsg) {
    for output in outputs {
        output.push(msg);
    }
}

/// Runs one frame's `solve`, a panic in it becoming `SolveError::Panicked`: a bug
/// that panics on one performer's frame must not stop every other performer and
/// the takes. The frame is counted as an error and the performer starts afresh
/// (`Solver::restart`); the panic's message goes to the log as any panic's does.
/// Costs nothing when nothing panics.
fn caught(solve: impl FnOnce() -> Result<f64, SolveError>) -> Result<f64, SolveError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(solve))
        .unwrap_or(Err(SolveError::Panicked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::{DevicePose, HumanoidPose};
    use crate::pipeline::performer::{Avatar, PerformerSettings};
    use crate::pipeline::{Delivery, InputPort, OutputRing, input_ring, output_ring};
    use crate::protocol::frame::{JointFrame, TrackedPoint, TrackerFrame};
    use crate::retarget::{MappedSkeleton, SourceRig, ToNormalized};
    use crate::takes::demo;
    use glam::{Quat, Vec3};

    fn mapped(name: &str, json: &str) -> MappedSkeleton {
        let rig = crate::formats::skeleton_json::embedded_rig(name, json);
        let map = rig.bone_map.clone().unwrap();
        MappedSkeleton::new(rig.skeleton, &map).unwrap()
    }

    fn settings() -> PerformerSettings {
        PerformerSettings {
            filter: None,
            device_filter: None,
            mocap_ik: crate::ik::mocap::MocapIkConfig {
                enabled: false,
                ..Default::default()
            },
            vr_ik: Default::default(),
            calibration: None,
        }
    }

    /// A solver on its own thread with one input and one output.
    struct Running {
        port: InputPort,
        out: OutputRing,
        stop: Arc<AtomicBool>,
        control: mpsc::Sender<SolverControl>,
        thread: std::thread::JoinHandle<()>,
    }

    fn start(timeout: Duration) -> Running {
        let skeletons: Arc<[StreamSkeleton]> = vec![StreamSkeleton::new(
            "lab19",
            mapped("lab19", crate::skeleton::builtin::LAB19_JSON),
        )]
        .into();
        let avatar = Avatar::new(&mapped("humanoid", crate::skeleton::builtin::HUMANOID_JSON));
        let (solver_tx, solver_rx) = mpsc::channel::<Solver>();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            if let Ok(s) = solver_rx.recv() {
                s.run(&flag);
            }
        });
        let (port, ring) = input_ring("test", 64, thread.thread().clone());
        let (out_port, out) = output_ring("out", 1024, Delivery::Every);
        let (control, control_rx) = mpsc::channel();
        let config = SolverConfig {
            performer_timeout: timeout,
            max_performers: 2,
            humanoid: settings(),
            skeleton: settings(),
            trackers: settings(),
            performers: HashMap::new(),
        };
        let solver = Solver::new(
            config,
            skeletons,
            avatar,
            vec![ring],
            vec![out_port],
            control_rx,
        );
        solver_tx.send(solver).unwrap();
        Running {
            port,
            out,
            stop,
            control,
            thread,
        }
    }

    impl Running {
        /// Takes what the solver has sent into `got` until `done` holds of it;
        /// panics after a minute (a busy machine can hold the solver's thread back
        /// for long, never that long).
        fn wait_for(&mut self, got: &mut Vec<OutputMsg>, done: impl Fn(&[OutputMsg]) -> bool) {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !done(got) {
                assert!(
                    Instant::now() < deadline,
                    "never came: {} messages",
                    got.len()
                );
                match self.out.try_pop() {
                    Some(m) => got.push(m),
                    None => std::thread::sleep(Duration::from_millis(1)),
                }
            }
        }

        /// Asks the solver to calibrate `performer` and waits for its answer.
        fn calibrate(&self, performer: &str) -> Result<Calibration, String> {
            let (reply, answer) = tokio::sync::oneshot::channel();
            self.control
                .send(SolverControl::Calibrate {
                    performer: performer.into(),
                    reply,
                })
                .unwrap();
            self.thread.thread().unpark();
            answer.blocking_recv().unwrap()
        }

        fn finish(mut self) -> Vec<OutputMsg> {
            self.stop.store(true, Relaxed);
            self.thread.thread().unpark();
            self.thread.join().unwrap();
            let mut got = Vec::new();
            while let Some(m) = self.out.try_pop() {
                got.push(m);
            }
            got
        }
    }

    fn name(s: &str) -> PerformerName {
        PerformerName::new(s).unwrap()
    }

    fn input(frame: SourceFrame) -> InputFrame {
        InputFrame {
            received: Instant::now(),
            frame,
        }
    }

    #[test]
    fn skeleton_frames_are_retargeted_and_performers_come_and_go() {
        let mut run = start(Duration::from_millis(300));
        let lab19 = mapped("lab19", crate::skeleton::builtin::LAB19_JSON);
        let motion = demo::lab19_performance(&lab19, 1);
        let rig = SourceRig::new(&lab19);
        let mut expected = crate::humanoid::HumanoidPose::default();
        let mut frames = Vec::new();
        for i in 0..3 {
            let f = motion.frame(i);
            let mut frame = JointFrame::new(name("lab"));
            frame.time = 10.0 + i as f64 / 60.0;
            for (j, q) in f.rotations.iter().enumerate() {
                frame.set(j, *q);
            }
            frame.root_position = Some(f.translations[0]);
            frames.push(frame);
            ToNormalized {
                source: &rig,
                local_rotations: f.rotations,
                local_translations: f.translations,
                pose: &mut expected,
            }
            .run()
            .unwrap();
        }
        // One after the other, well within the timeout.
        for frame in frames {
            assert!(
                run.port
                    .push(input(SourceFrame::Joints { skeleton: 0, frame }))
            );
        }
        // Silence past the timeout: the performer is gone while the solver runs.
        let mut got = Vec::new();
        run.wait_for(&mut got, |got| {
            got.iter().any(|m| matches!(m, OutputMsg::Gone { .. }))
        });
        got.extend(run.finish());
        assert!(matches!(
            got[0],
            OutputMsg::Appeared {
                source: SourceKind::Skeleton,
                ..
            }
        ));
        let poses: Vec<&PoseFrame> = got
            .iter()
            .filter_map(|m| match m {
                OutputMsg::Pose(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(poses.len(), 3);
        assert_eq!(poses[2].seq, 3);
        assert!(
            (poses[2].time - 2.0 / 60.0).abs() < 1e-9,
            "times start at 0"
        );
        assert_eq!(poses[2].pose, expected);
        assert!(matches!(got.last(), Some(OutputMsg::Gone { .. })));
    }

    #[test]
    fn a_performer_whose_frames_cannot_be_solved_stays_while_it_sends() {
        // A hips tracker without a headset for longer than the timeout: no pose,
        // but one performer that appears once and goes once it falls silent.
        let mut run = start(Duration::from_secs(1));
        let mut frame = TrackerFrame::new(name("no-head"));
        frame.set(
            TrackedPoint::Hips,
            DevicePose::new(Vec3::new(0.0, 0.9, 0.0), Quat::IDENTITY),
        );
        for i in 0..30 {
            frame.time = f64::from(i) * 0.05;
            assert!(run.port.push(input(SourceFrame::Trackers(frame))));
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut got = Vec::new();
        run.wait_for(&mut got, |got| {
            got.iter().any(|m| matches!(m, OutputMsg::Gone { .. }))
        });
        got.extend(run.finish());
        let count = |f: fn(&OutputMsg) -> bool| got.iter().filter(|m| f(m)).count();
        assert_eq!(count(|m| matches!(m, OutputMsg::Appeared { .. })), 1);
        assert_eq!(count(|m| matches!(m, OutputMsg::Gone { .. })), 1);
        assert_eq!(count(|m| matches!(m, OutputMsg::Pose(_))), 0);
    }

    #[test]
    fn a_performer_calibrated_live_that_goes_and_comes_back_stays_calibrated() {
        let mut run = start(Duration::from_millis(300));
        let mut frame = TrackerFrame::new(name("vr"));
        for (point, at) in [
            (TrackedPoint::Head, Vec3::new(0.0, 1.6, 0.0)),
            (TrackedPoint::LeftHand, Vec3::new(0.7, 1.4, 0.0)),
            (TrackedPoint::RightHand, Vec3::new(-0.7, 1.4, 0.0)),
        ] {
            frame.set(point, DevicePose::new(at, Quat::IDENTITY));
        }
        run.port.push(input(SourceFrame::Trackers(frame)));
        let mut got = Vec::new();
        run.wait_for(&mut got, |got| {
            got.iter().any(|m| matches!(m, OutputMsg::Pose(_)))
        });
        let calibration = run.calibrate("vr").unwrap();
        // Silent past the timeout: gone. Then it sends again.
        run.wait_for(&mut got, |got| {
            got.iter().any(|m| matches!(m, OutputMsg::Gone { .. }))
        });
        frame.time = 1.0;
        run.port.push(input(SourceFrame::Trackers(frame)));
        run.wait_for(&mut got, |got| {
            got.iter()
                .filter(|m| matches!(m, OutputMsg::Appeared { .. }))
                .count()
                == 2
        });
        let (reply, answer) = tokio::sync::oneshot::channel();
        run.control
            .send(SolverControl::Performers { reply })
            .unwrap();
        run.thread.thread().unpark();
        let listed = answer.blocking_recv().unwrap();
        assert!(listed[0].calibrated, "{listed:?}");
        assert_eq!(listed[0].calibration, Some(calibration));
        run.finish();
    }

    #[test]
    fn tracker_frames_drive_vr_ik_and_calibrate_on_request() {
        let mut run = start(Duration::from_secs(5));
        let mut frame = TrackerFrame::new(name("vr"));
        // Only a hips tracker: the solver cannot solve yet (counted, not fatal).
        frame.set(
            TrackedPoint::Hips,
            DevicePose::new(Vec3::new(0.0, 0.9, 0.0), Quat::IDENTITY),
        );
        run.port.push(input(SourceFrame::Trackers(frame)));
        frame.time = 1.0 / 60.0;
        frame.set(
            TrackedPoint::Head,
            DevicePose::new(Vec3::new(0.0, 1.6, 0.0), Quat::IDENTITY),
        );
        frame.set(
            TrackedPoint::LeftHand,
            DevicePose::new(Vec3::new(0.7, 1.4, 0.0), Quat::IDENTITY),
        );
        frame.set(
            TrackedPoint::RightHand,
            DevicePose::new(Vec3::new(-0.7, 1.4, 0.0), Quat::IDENTITY),
        );
        run.port.push(input(SourceFrame::Trackers(frame)));
        // Solved before the request (the solver reads requests first).
        let mut got = Vec::new();
        run.wait_for(&mut got, |got| {
            got.iter().any(|m| matches!(m, OutputMsg::Pose(_)))
        });
        let calibration = run.calibrate("vr").unwrap();
        assert!(
            (calibration.arm_span - 1.4).abs() < 0.2,
            "{}",
            calibration.arm_span
        );
        assert!(run.calibrate("nobody").is_err());
        got.extend(run.finish());
        let poses = got
            .iter()
            .filter(|m| matches!(m, OutputMsg::Pose(_)))
            .count();
        assert_eq!(poses, 1, "one solvable frame");
    }

    #[test]
    fn a_panic_solving_a_frame_is_an_error_of_that_frame() {
        assert_eq!(caught(|| Ok(2.5)), Ok(2.5));
        assert_eq!(
            caught(|| Err(SolveError::MissingHead)),
            Err(SolveError::MissingHead)
        );
        assert_eq!(caught(|| panic!("a bug")), Err(SolveError::Panicked));
    }

    #[test]
    fn a_restarted_performer_starts_afresh_and_its_poses_number_on() {
        // The solver driven on this thread: a VR performer solved on three frames,
        // restarted (as after a panic), then solved again.
        let avatar = Avatar::new(&mapped("humanoid", crate::skeleton::builtin::HUMANOID_JSON));
        let (_port, ring) = input_ring("test", 8, std::thread::current());
        let (out_port, mut out) = output_ring("out", 64, Delivery::Every);
        let config = SolverConfig {
            performer_timeout: Duration::from_secs(5),
            max_performers: 2,
            humanoid: settings(),
            skeleton: settings(),
            trackers: settings(),
            performers: HashMap::new(),
        };
        let (_control, control_rx) = mpsc::channel();
        let mut solver = Solver::new(
            config,
            Arc::from(Vec::new()),
            avatar,
            vec![ring],
            vec![out_port],
            control_rx,
        );
        let stats = InputStats::default();
        let mut frame = TrackerFrame::new(name("vr"));
        frame.set(
            TrackedPoint::Head,
            DevicePose::new(Vec3::new(0.0, 1.6, 0.0), Quat::IDENTITY),
        );
        for i in 0..3 {
            frame.time = f64::from(i) / 60.0;
            solver.frame(&stats, &input(SourceFrame::Trackers(frame)));
        }
        let solved = solver.performers[0].pose;
        assert_eq!(solver.performers[0].seq, 3);
        assert_ne!(solved, HumanoidPose::default());
        solver.restart(0, Instant::now());
        let fresh = &solver.performers[0];
        assert_eq!((fresh.seq, fresh.kind), (3, SourceKind::Trackers));
        assert_eq!(fresh.pose, HumanoidPose::default(), "the last pose is gone");
        solver.frame(&stats, &input(SourceFrame::Trackers(frame)));
        assert_eq!(solver.performers[0].seq, 4);
        let mut seqs = Vec::new();
        while let Some(m) = out.try_pop() {
            if let OutputMsg::Pose(p) = m {
                seqs.push(p.seq);
            }
        }
        assert_eq!(seqs, [1, 2, 3, 4]);
    }
}
