//! The recorder task: takes every solved frame from its ring (which never drops:
//! the solver holds frames back rather than lose one) and, while recording is on
//! for a performer, appends them to that performer's take (`journal::Recording`:
//! a `.vrma` in memory plus an append-only journal flushed every `flush_interval`).
//!
//! Recording starts and stops on `RecordCommand`s (WebSocket control, OSC
//! `/bridge/record/start|stop`), or for everyone from the first frame
//! (`run --record`). A take ends when it is stopped, when its performer times out,
//! or when the bridge stops; ending writes the `.vrma` (off the async threads) and
//! removes the journal; a take that got no frame writes nothing. Names are untrusted: `journal::recording_path` confines
//! them to the recordings folder, and a taken name gets the next free number.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::formats::vrma::VrmaRest;
use crate::humanoid::CustomNames;
use crate::pipeline::{OutputMsg, OutputRing, PoseFrame};
use crate::protocol::frame::PerformerName;
use crate::protocol::record_control::RecordRequest;

use super::journal::{FrameError, Recording};

/// The largest take `TakeBounds::max_bytes` may allow, megabytes: a `.vrma` is a
/// GLB, at most 4 GiB, and its JSON needs some room too.
pub const MAX_TAKE_MEGABYTES: u64 = 4000;

/// How often the recorder looks at the free space on its disk.
const DISK_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// When a take stops by itself, besides a stop command, its performer leaving and
/// the bridge stopping: the take is then written, and the log says which bound
/// stopped it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TakeBounds {
    /// Longest take, seconds of its own time; `None`: no limit.
    pub max_seconds: Option<f64>,
    /// Largest take, bytes of its `.vrma`'s binary chunk; `None`: no limit.
    pub max_bytes: Option<u64>,
    /// Takes stop (and none starts) while the recordings folder's disk has fewer
    /// bytes free.
    pub min_free_bytes: u64,
}

impl TakeBounds {
    /// Bounds from the recorder's settings, where 0 means no limit for the first
    /// two.
    #[must_use]
    pub fn new(max_minutes: f64, max_megabytes: u64, min_free_megabytes: u64) -> Self {
        Self {
            max_seconds: (max_minutes > 0.0).then_some(max_minutes * 60.0),
            max_bytes: (max_megabytes > 0).then_some(max_megabytes * MEGABYTE),
            min_free_bytes: min_free_megabytes * MEGABYTE,
        }
    }

    /// Why a take `seconds` long with `bytes` of data must stop, if it must.
    #[must_use]
    pub fn reached(&self, seconds: f64, bytes: u64) -> Option<String> {
        if let Some(max) = self.max_seconds
            && seconds >= max
        {
            let max = if max < 60.0 {
                format!("{max:.0} s")
            } else {
                format!("{:.1} min", max / 60.0)
            };
            return Some(format!(
                "it reached the longest take allowed, {max} (recorder.maxMinutes)"
            ));
        }
        if let Some(max) = self.max_bytes
            && bytes >= max
        {
            return Some(format!(
                "it reached the largest take allowed, {} MB (recorder.maxMegabytes)",
                max / MEGABYTE
            ));
        }
        None
    }

    /// Why takes must stop with `free` bytes left on the disk, if they must.
    #[must_use]
    pub fn disk_full(&self, free: u64) -> Option<String> {
        (free < self.min_free_bytes).then(|| {
            format!(
                "the recordings disk has {} MB free, less than recorder.minFreeMegabytes ({} MB)",
                free / MEGABYTE,
                self.min_free_bytes / MEGABYTE
            )
        })
    }
}

const MEGABYTE: u64 = 1_000_000;

/// A take that ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FinishedTake {
    pub performer: String,
    /// The .vrma written; when `written` is false, the one the take would have had.
    pub file: String,
    pub frames: usize,
    pub seconds: f64,
    /// Whether `file` was written: a take that got no frame writes nothing.
    pub written: bool,
}

/// What a start began: the takes now recording, and the performers not present
/// that will record from their first frame.
#[derive(Debug, Default, PartialEq)]
pub struct Started {
    /// (performer, file) of each take started.
    pub recordings: Vec<(String, String)>,
    /// Named performers not present yet: each starts recording with its first frame.
    pub waiting: Vec<String>,
}

/// Where the recorder answers a start, or says why not.
pub type StartReply = oneshot::Sender<Result<Started, String>>;

/// What the recorder can be asked (WebSocket control, OSC `/bridge/record/*`).
#[derive(Debug)]
pub enum RecordCommand {
    /// Start recording `performer` (every performer, present and to come, when
    /// `None`) into `name` (default: the performer's name; with several
    /// performers, `name-performer`); replies with the (performer, file) pairs
    /// started. A named performer not present yet starts recording with its first
    /// frame.
    Start {
        performer: Option<String>,
        name: Option<String>,
        reply: Option<StartReply>,
    },
    /// Stop recording `performer` (everyone when `None`); replies with the takes
    /// ended (written or, without frames, not).
    Stop {
        performer: Option<String>,
        reply: Option<oneshot::Sender<Result<Vec<FinishedTake>, String>>>,
    },
    /// The takes being recorded: performer, file, frames so far.
    List {
        reply: oneshot::Sender<Vec<(String, String, usize)>>,
    },
}

impl From<RecordRequest<'_>> for RecordCommand {
    /// A request read from OSC, which has no one to reply to.
    fn from(request: RecordRequest<'_>) -> Self {
        match request {
            RecordRequest::Start { name, performer } => Self::Start {
                performer: performer.map(str::to_owned),
                name: name.map(str::to_owned),
                reply: None,
            },
            RecordRequest::Stop { performer } => Self::Stop {
                performer: performer.map(str::to_owned),
                reply: None,
            },
        }
    }
}

/// One performer as the recorder sees it.
#[derive(Default)]
struct RecordedPerformer {
    names: CustomNames,
    take: Option<OpenTake>,
    /// Frames seen, to tell a performer's first frame.
    seen: bool,
    /// The rest hips height of its poses (the source's), for a take started later.
    rest_hips_height: f32,
}

struct OpenTake {
    recording: Recording,
    /// Sender time of the take's first frame: the take starts at 0.
    start: Option<f64>,
    /// The journal failed once: said so already.
    journal_failed: bool,
    /// Why the take must stop, once it reached a bound: it takes no more frames
    /// and is written when the recorder has read what its ring holds.
    bound: Option<String>,
}

/// The recorder and what it is doing.
pub struct Recorder {
    pub ring: OutputRing,
    pub commands: mpsc::UnboundedReceiver<RecordCommand>,
    pub dir: PathBuf,
    pub flush_interval: Duration,
    pub sync: bool,
    /// Record every performer from its first frame.
    pub record_all: bool,
    /// When a take stops by itself.
    pub bounds: TakeBounds,
    /// The T-pose the takes are written in.
    pub rest: VrmaRest,
    /// Set while the recorder wants solved poses: a take is open, a performer is
    /// armed, or every performer is recorded. The solver sends none otherwise
    /// (`OutputPort::with_poses_gate`); performers are known from `Appeared`.
    pub wants_poses: Arc<AtomicBool>,
}

/// What a recorder run ends with: every take ended, written or, without frames, not.
pub type Takes = Vec<FinishedTake>;

impl Recorder {
    /// Records until the solver is done, then finishes every open take.
    pub async fn run(mut self) -> Takes {
        let mut tracks: HashMap<PerformerName, RecordedPerformer> = HashMap::new();
        // Performers to record when they appear (name of the take, if given).
        let mut armed: HashMap<String, Option<String>> = HashMap::new();
        let mut written = Vec::new();
        // Twice per interval, so no frame waits more than half of it to be written
        // (a tick per interval let frames wait up to two: the write came after it).
        let mut tick = tokio::time::interval(self.flush_interval / 2);
        let mut commands_open = true;
        let mut disk_checked = Instant::now();
        loop {
            tokio::select! {
                () = self.ring.ready() => {}
                command = self.commands.recv(), if commands_open => match command {
                    Some(command) => {
                        self.command(command, &mut tracks, &mut armed, &mut written).await;
                    }
                    None => commands_open = false,
                },
                _ = tick.tick() => {
                    for track in tracks.values_mut() {
                        if let Some(take) = &mut track.take
                            && take.recording.has_unflushed()
                        {
                            let result = take.recording.flush();
                            report(take, result);
                        }
                    }
                    if disk_checked.elapsed() >= DISK_CHECK_INTERVAL {
                        disk_checked = Instant::now();
                        if let Some(why) = self.disk_full() {
                            for take in tracks.values_mut().filter_map(|t| t.take.as_mut()) {
                                take.bound.get_or_insert_with(|| why.clone());
                            }
                        }
                    }
                }
            }
            // Poses are read where they lie in the ring (over 1 KiB each).
            while let Some(msg) = self.ring.first() {
                let gone = match *msg {
                    OutputMsg::Pose(ref frame) => {
                        self.frame(frame, &mut tracks, &mut armed);
                        None
                    }
                    OutputMsg::ExpressionName {
                        performer,
                        slot,
                        name,
                    } => {
                        tracks
                            .entry(performer)
                            .or_default()
                            .names
                            .name_slot(usize::from(slot), name.as_str());
                        None
                    }
                    OutputMsg::Gone { performer } => Some(performer),
                    // Known from now on, for a start command; its poses come
                    // only while something records.
                    OutputMsg::Appeared { performer, .. } => {
                        tracks.entry(performer).or_default();
                        None
                    }
                    // The recorder never asks for sources.
                    OutputMsg::Source(_) => None,
                };
                self.ring.skip_first();
                if let Some(performer) = gone
                    && let Some(track) = tracks.remove(&performer)
                    && let Some(take) = track.take
                {
                    finish(performer, take, &mut written).await;
                }
            }
            for (performer, track) in &mut tracks {
                if track.take.as_ref().is_some_and(|t| t.bound.is_some())
                    && let Some(take) = track.take.take()
                {
                    tracing::warn!(
                        "stopped recording {performer} into {}: {}",
                        take.recording.path().display(),
                        take.bound.as_deref().unwrap_or_default()
                    );
                    finish(*performer, take, &mut written).await;
                }
            }
            self.want_poses(&tracks, &armed);
            if self.ring.is_closed() {
                // The solver is done and announced everyone gone; finish the rest.
                for (performer, track) in tracks.drain() {
                    if let Some(take) = track.take {
                        finish(performer, take, &mut written).await;
                    }
                }
                return written;
            }
        }
    }

    fn frame(
        &self,
        frame: &PoseFrame,
        tracks: &mut HashMap<PerformerName, RecordedPerformer>,
        armed: &mut HashMap<String, Option<String>>,
    ) {
        let track = tracks.entry(frame.performer).or_default();
        track.rest_hips_height = frame.pose.rest_hips_height;
        if !track.seen {
            track.seen = true;
            let name = match armed.remove(frame.performer.as_str()) {
                Some(name) => Some(name.unwrap_or_else(|| frame.performer.to_string())),
                None if self.record_all => Some(frame.performer.to_string()),
                None => None,
            };
            if let Some(name) = name
                && track.take.is_none()
            {
                match self.start(&name, frame.performer, frame.pose.rest_hips_height) {
                    Ok(take) => track.take = Some(take),
                    Err(e) => tracing::error!("cannot start recording {name}: {e}"),
                }
            }
        }
        if let Some(take) = &mut track.take
            && take.bound.is_none()
        {
            let start = *take.start.get_or_insert(frame.time);
            let time = (frame.time - start) as f32;
            let result = take.recording.push(time, &frame.pose, &track.names);
            // The status report's `frames` for the recorder: frames in a take;
            // a frame the take refused (time not after the last) is a drop.
            let counter = match result {
                Err(FrameError::Refused(_)) => &self.ring.stats.drops,
                _ => &self.ring.stats.frames,
            };
            counter.fetch_add(1, Relaxed);
            report(take, result);
            take.bound = self
                .bounds
                .reached(f64::from(time), take.recording.binary_bytes());
        }
    }

    /// Opens a take of `performer` whose poses have the rest hips height
    /// `hips_height` (the source's): its rest is the avatar's T-pose at that height,
    /// so the take replays where its source stood.
    fn start(
        &self,
        name: &str,
        performer: PerformerName,
        hips_height: f32,
    ) -> Result<OpenTake, String> {
        if let Some(why) = self.disk_full() {
            return Err(why);
        }
        let rest = self.rest.scaled_to_hips_height(hips_height);
        let mut recording = Recording::start(&self.dir, name, performer.as_str(), rest)
            .map_err(|e| e.to_string())?;
        recording.set_sync(self.sync);
        tracing::info!("recording {performer} into {}", recording.path().display());
        Ok(OpenTake {
            recording,
            start: None,
            journal_failed: false,
            bound: None,
        })
    }

    /// Why no take may go on on the recordings disk, if the disk is too full (the
    /// disk of the folder's nearest existing ancestor when the folder is not made
    /// yet). A disk whose free space cannot be read is not taken as full.
    fn disk_full(&self) -> Option<String> {
        if self.bounds.min_free_bytes == 0 {
            return None;
        }
        let folder = self
            .dir
            .ancestors()
            .map(|d| {
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                }
            })
            .find(|d| d.exists())?;
        let free = fs4::available_space(folder).ok()?;
        self.bounds.disk_full(free)
    }

    // `&mut self`: a shared borrow held across an await would need `Recorder: Sync`,
    // which its ring's consumer is not.
    async fn command(
        &mut self,
        command: RecordCommand,
        tracks: &mut HashMap<PerformerName, RecordedPerformer>,
        armed: &mut HashMap<String, Option<String>>,
        written: &mut Takes,
    ) {
        match command {
            RecordCommand::Start {
                performer,
                name,
                reply,
            } => {
                let result = self.start_command(performer, name, tracks, armed);
                if let Err(e) = &result {
                    tracing::warn!("recording not started: {e}");
                }
                // Before the reply: a client that sends its frames once it has it
                // must find the solver sending them.
                self.want_poses(tracks, armed);
                if let Some(reply) = reply {
                    let _ = reply.send(result);
                }
            }
            RecordCommand::Stop { performer, reply } => {
                if performer.is_none() {
                    armed.clear();
                }
                let mut stopped = Vec::new();
                let mut found = performer.is_none();
                for (name, track) in tracks.iter_mut() {
                    if performer.as_deref().is_some_and(|p| p != name.as_str()) {
                        continue;
                    }
                    found = true;
                    if let Some(take) = track.take.take() {
                        finish(*name, take, &mut stopped).await;
                    }
                }
                if let Some(p) = &performer
                    && armed.remove(p).is_some()
                {
                    found = true;
                }
                written.extend(stopped.iter().cloned());
                if let Some(reply) = reply {
                    let _ = reply.send(if found {
                        Ok(stopped)
                    } else {
                        Err(format!("no performer `{}`", performer.unwrap_or_default()))
                    });
                }
            }
            RecordCommand::List { reply } => {
                let list = tracks
                    .iter()
                    .filter_map(|(p, t)| {
                        t.take.as_ref().map(|take| {
                            (
                                p.to_string(),
                                take.recording.path().display().to_string(),
                                take.recording.frame_count(),
                            )
                        })
                    })
                    .collect();
                let _ = reply.send(list);
            }
        }
    }

    /// Tells the solver whether to send poses: while a take is open, a performer
    /// is armed, or every performer is recorded.
    fn want_poses(
        &self,
        tracks: &HashMap<PerformerName, RecordedPerformer>,
        armed: &HashMap<String, Option<String>>,
    ) {
        let wanted =
            self.record_all || !armed.is_empty() || tracks.values().any(|t| t.take.is_some());
        self.wants_poses.store(wanted, Relaxed);
    }

    fn start_command(
        &self,
        performer: Option<String>,
        name: Option<String>,
        tracks: &mut HashMap<PerformerName, RecordedPerformer>,
        armed: &mut HashMap<String, Option<String>>,
    ) -> Result<Started, String> {
        let targets: Vec<PerformerName> = match &performer {
            Some(p) => tracks.keys().filter(|k| k.as_str() == p).copied().collect(),
            None => tracks.keys().copied().collect(),
        };
        if let Some(p) = &performer
            && targets.is_empty()
        {
            // Not here yet: record it from its first frame.
            if PerformerName::new(p).is_none() {
                return Err(format!("`{p}` is not a performer name"));
            }
            armed.insert(p.clone(), name);
            return Ok(Started {
                recordings: Vec::new(),
                waiting: vec![p.clone()],
            });
        }
        let several = targets.len() > 1;
        let mut started = Vec::new();
        for target in targets {
            let Some(track) = tracks.get_mut(&target) else {
                continue;
            };
            if track.take.is_some() {
                continue;
            }
            let take_name = match &name {
                Some(n) if several => format!("{n}-{target}"),
                Some(n) => n.clone(),
                None => target.to_string(),
            };
            let take = self.start(&take_name, target, track.rest_hips_height)?;
            started.push((
                target.to_string(),
                take.recording.path().display().to_string(),
            ));
            track.take = Some(take);
        }
        Ok(Started {
            recordings: started,
            waiting: Vec::new(),
        })
    }
}

/// Logs a journal failure once per take; refused frames are counted by the take.
fn report(take: &mut OpenTake, result: Result<(), FrameError>) {
    match result {
        Ok(()) | Err(FrameError::Refused(_)) => {}
        Err(e @ FrameError::Journal { .. }) => {
            if !take.journal_failed {
                take.journal_failed = true;
                tracing::error!("{e}");
            }
        }
    }
}

/// Writes a take's `.vrma` off the async threads and notes it in `written`. A take
/// that got no frame writes nothing (a `.vrma` without frames animates nothing):
/// its journal is removed, and it is noted as not written.
async fn finish(performer: PerformerName, take: OpenTake, written: &mut Takes) {
    if take.recording.frame_count() == 0 {
        let file = take.recording.path().display().to_string();
        if let Some(journal) = take.recording.discard() {
            tracing::warn!("cannot remove {}", journal.display());
        }
        tracing::info!("{}", not_written(performer.as_str(), &file));
        written.push(FinishedTake {
            performer: performer.to_string(),
            file,
            frames: 0,
            seconds: 0.0,
            written: false,
        });
        return;
    }
    let finished = tokio::task::spawn_blocking(move || take.recording.finish()).await;
    match finished {
        Ok(Ok(done)) => {
            let seconds = done.span.map_or(0.0, |(a, b)| f64::from(b - a));
            tracing::info!(
                "wrote {}: {} frames, {seconds:.2} s ({performer})",
                done.path.display(),
                done.frames
            );
            written.push(FinishedTake {
                performer: performer.to_string(),
                file: done.path.display().to_string(),
                frames: done.frames,
                seconds,
                written: true,
            });
        }
        Ok(Err(e)) => tracing::error!("{e}"),
        Err(e) => tracing::error!("writing a take failed: {e}"),
    }
}

/// What is said of a take of `performer` that got no frame: nothing written
/// (`file` is the name it would have had).
#[must_use]
pub fn not_written(performer: &str, file: &str) -> String {
    format!("no frame recorded for {performer}; nothing written ({file})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Delivery, output_ring};

    /// A client sends its frames once it has the reply to its start: by then the
    /// solver must already be sending poses, or the take's first frames (all of
    /// them, for a performer that sends one) never reach it.
    #[test]
    fn poses_are_wanted_before_a_start_is_answered() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (_port, ring) = output_ring("recorder", 8, Delivery::Every);
        let (_send, commands) = mpsc::unbounded_channel();
        let wants_poses = Arc::new(AtomicBool::new(false));
        let mut recorder = Recorder {
            ring,
            commands,
            dir: dir.path().to_owned(),
            flush_interval: Duration::from_millis(100),
            sync: false,
            record_all: false,
            bounds: TakeBounds::new(0.0, 0, 0),
            rest: VrmaRest::standard(0.95),
            wants_poses: wants_poses.clone(),
        };
        let (mut tracks, mut armed, mut written) = (HashMap::new(), HashMap::new(), Vec::new());
        let (reply, mut answer) = oneshot::channel();
        let start = RecordCommand::Start {
            performer: Some("alice".into()),
            name: None,
            reply: Some(reply),
        };
        runtime.block_on(recorder.command(start, &mut tracks, &mut armed, &mut written));
        let started = answer.try_recv().unwrap().unwrap();
        assert_eq!(started.waiting, vec!["alice".to_owned()]);
        assert!(
            wants_poses.load(Relaxed),
            "not wanted when the reply is out"
        );
    }

    #[test]
    fn a_take_stops_at_the_first_bound_it_reaches_and_says_which() {
        let bounds = TakeBounds::new(90.0, 100, 512);
        assert_eq!(bounds.reached(5399.9, 99_999_999), None);
        let long = bounds.reached(5400.0, 0).unwrap_or_default();
        assert!(long.contains("90.0 min (recorder.maxMinutes)"), "{long}");
        let large = bounds.reached(1.0, 100_000_000).unwrap_or_default();
        assert!(large.contains("100 MB (recorder.maxMegabytes)"), "{large}");
        assert_eq!(bounds.disk_full(512_000_000), None);
        let full = bounds.disk_full(511_999_999).unwrap_or_default();
        assert!(
            full.contains("511 MB free, less than recorder.minFreeMegabytes (512 MB)"),
            "{full}"
        );
        // 0 turns a bound off.
        let none = TakeBounds::new(0.0, 0, 0);
        assert_eq!(
            (none.max_seconds, none.max_bytes, none.min_free_bytes),
            (None, None, 0)
        );
        assert_eq!(none.reached(1e9, u64::MAX), None);
        assert_eq!(none.disk_full(0), None);
    }
}
