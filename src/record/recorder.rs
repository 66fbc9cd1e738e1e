//! The recorder task: takes every solved frame from its never-dropping ring and
//! writes one take per performer while recording is on.

use tokio::sync::oneshot;

/// A take that was written.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FinishedTake {
    pub performer: String,
    /// The .vrma written.
    pub file: String,
    pub frames: usize,
    pub seconds: f64,
}

/// What the recorder can be asked (WebSocket control, OSC `/bridge/record/*`).
#[derive(Debug)]
pub enum RecordCommand {
    /// Start recording `performer` (every performer, present and to come, when
    /// `None`) into `name` (default: performer and time); replies with the files
    /// started.
    Start {
        performer: Option<String>,
        name: Option<String>,
        reply: Option<oneshot::Sender<Result<Vec<String>, String>>>,
    },
    /// Stop recording `performer` (everyone when `None`); replies with the takes.
    Stop {
        performer: Option<String>,
        reply: Option<oneshot::Sender<Result<Vec<FinishedTake>, String>>>,
    },
}
