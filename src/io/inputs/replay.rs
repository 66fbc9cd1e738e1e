//! A recording replayed as a live performer: frames pushed onto an input ring at
//! their own times (real time), optionally looping. This is how `run --replay`
//! shows the bridge working with no hardware, and how tests drive the pipeline.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::humanoid::{CustomNames, HumanoidPose};
use crate::pipeline::{InputFrame, InputPort, SourceFrame};
use crate::protocol::frame::PerformerName;
use crate::takes::replay::Replay;

/// A replay feeding the solver.
pub struct ReplayInput {
    pub replay: Replay,
    pub names: CustomNames,
    pub performer: PerformerName,
    pub port: InputPort,
    /// Start again after the last frame.
    pub looping: bool,
    /// Play as fast as the ring takes frames instead of in real time (tests and
    /// benchmarks); a full ring then waits instead of dropping.
    pub fast: bool,
    pub shutdown: watch::Receiver<bool>,
}

impl ReplayInput {
    /// Plays until the end (or shutdown); returns the frames pushed.
    pub async fn run(mut self) -> u64 {
        let start = tokio::time::Instant::now();
        let received_now = Instant::now;
        let mut slot = 0;
        while let Some(name) = self.names.name(slot) {
            if let Some(name) = PerformerName::new(name) {
                self.port.push(InputFrame {
                    received: received_now(),
                    frame: SourceFrame::ExpressionName {
                        performer: self.performer,
                        slot: slot as u8,
                        name,
                    },
                });
            }
            slot += 1;
        }
        let mut pushed = 0;
        let mut offset = 0.0f64;
        let step = frame_step(self.replay.times());
        let mut pose = HumanoidPose::default();
        loop {
            let mut last = 0.0f64;
            while let Some(t) = self.replay.next_frame(&mut pose) {
                let time = offset + f64::from(t);
                last = time;
                if !self.fast {
                    let due = start + Duration::from_secs_f64(time.max(0.0));
                    tokio::select! {
                        () = tokio::time::sleep_until(due) => {}
                        _ = self.shutdown.changed() => return pushed,
                    }
                } else if *self.shutdown.borrow() {
                    return pushed;
                }
                let frame = InputFrame {
                    received: received_now(),
                    frame: SourceFrame::Humanoid {
                        performer: self.performer,
                        time,
                        pose,
                    },
                };
                if self.fast {
                    while !self.port.try_push(frame) {
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    pushed += 1;
                } else if self.port.push(frame) {
                    pushed += 1;
                }
            }
            if !self.looping {
                return pushed;
            }
            self.replay.rewind();
            offset = last + step;
        }
    }
}

/// The usual interval between frames (the gap placed between loops).
fn frame_step(times: &[f32]) -> f64 {
    match times {
        [.., a, b] if b > a => f64::from(b - a),
        _ => 1.0 / 60.0,
    }
}
