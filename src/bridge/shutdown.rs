//! Stopping the bridge, in order, so that nothing in flight is lost:
//!
//! 1. input tasks take what their sockets already hold and stop receiving (their
//!    rings keep what they hold), the web server and its clients end, replays are
//!    cancelled;
//! 2. the solver drains every input ring, announces every performer gone, hands
//!    the recorder everything it still waits for, and ends;
//! 3. each output drains its ring and ends; the recorder finishes every open take.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::RunSummary;
use super::wiring::SolverThread;
use crate::pipeline::status::Status;
use crate::record::recorder::Takes;

/// Everything a running bridge must stop, by stage.
pub(super) struct RunningBridge {
    /// Stage 1: told to stop, then awaited.
    pub stop: watch::Sender<bool>,
    pub inputs: JoinSet<()>,
    pub server: Option<JoinHandle<()>>,
    pub calibration_keeper: JoinHandle<()>,
    pub replays: JoinSet<u64>,
    /// Stage 2: the solver's thread ends once `stopping` is set and it has drained.
    pub stopping: Arc<AtomicBool>,
    pub solver_thread: SolverThread,
    /// Stage 3.
    pub outputs: JoinSet<()>,
    pub recorder: JoinHandle<Takes>,
    pub status_log: JoinHandle<()>,
    pub status: Status,
}

impl RunningBridge {
    /// Stops every task in order and reports what the run did.
    pub async fn shut_down(mut self) -> RunSummary {
        // 1. Inputs stop.
        let _ = self.stop.send(true);
        while self.inputs.join_next().await.is_some() {}
        if let Some(server) = self.server {
            let _ = server.await;
        }
        // A save under way finishes on its blocking thread; no client asks for more.
        self.calibration_keeper.abort();
        self.replays.abort_all();
        while self.replays.join_next().await.is_some() {}
        // 2. The solver drains and ends.
        self.stopping.store(true, Ordering::Relaxed);
        let handle = self.solver_thread.handle;
        handle.thread().unpark();
        let joined = tokio::task::spawn_blocking(move || handle.join()).await;
        let solver_panicked = !matches!(joined, Ok(Ok(())));
        if solver_panicked {
            tracing::error!("the solver thread panicked");
        }
        // 3. Outputs drain and end; the recorder writes every open take.
        while self.outputs.join_next().await.is_some() {}
        let takes = self.recorder.await.unwrap_or_else(|e| {
            tracing::error!("the recorder failed: {e}");
            Vec::new()
        });
        let _ = self.status_log.await;
        RunSummary {
            status: self.status.report(),
            line: self.status.line(),
            takes,
            solver_panicked,
        }
    }
}
