//! The bridge's status: counters of every input, the solver and every output,
//! latency histograms (received by an input → sent by an output, microseconds,
//! `hdrhistogram`), a one-line summary for the periodic log and a JSON report for
//! the WebSocket `status` message.
//!
//! Counters are atomics the tasks bump; a histogram is recorded by its output task
//! into a local copy and merged into the shared one every `MERGE_EVERY`, so the
//! per-frame path takes no lock. Links to other machines (NATS) add their
//! connection state (`ConnectionStats`).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{Value, json};

use crate::pipeline::solver::SolverStats;
use crate::pipeline::{InputStats, OutputStats};

/// How often an output's local histogram is merged into the shared one.
const MERGE_EVERY: Duration = Duration::from_millis(100);

/// Largest latency tracked, microseconds (one minute); longer ones are clamped.
const MAX_LATENCY_US: u64 = 60_000_000;

fn histogram() -> Histogram<u64> {
    // Bounds are constants that hdrhistogram accepts (1 ≤ low, high ≥ 2·low,
    // 3 significant figures).
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
        .unwrap_or_else(|_| unreachable!("constant histogram bounds are valid"))
}

/// A latency histogram shared between an output task and the status report.
pub type SharedHistogram = Arc<Mutex<Histogram<u64>>>;

/// The output task's side of a latency histogram.
pub struct Latency {
    local: Histogram<u64>,
    shared: SharedHistogram,
    last_merge: Instant,
}

impl Latency {
    #[must_use]
    pub fn new() -> (Self, SharedHistogram) {
        let shared = Arc::new(Mutex::new(histogram()));
        (
            Self {
                local: histogram(),
                shared: shared.clone(),
                last_merge: Instant::now(),
            },
            shared,
        )
    }

    /// Records the time since `received` (now).
    pub fn record(&mut self, received: Instant) {
        let us = received
            .elapsed()
            .as_micros()
            .min(u128::from(MAX_LATENCY_US)) as u64;
        self.local.saturating_record(us.max(1));
        if self.last_merge.elapsed() >= MERGE_EVERY {
            self.merge();
        }
    }

    /// Moves what was recorded locally into the shared histogram.
    pub fn merge(&mut self) {
        if self.local.is_empty() {
            return;
        }
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        // Same bounds on both sides: adding cannot fail.
        let _ = shared.add(&self.local);
        drop(shared);
        self.local.reset();
        self.last_merge = Instant::now();
    }
}

impl Drop for Latency {
    fn drop(&mut self) {
        self.merge();
    }
}

/// The state of one connection to a server (a NATS input or output), shared
/// with the status report.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    /// The server's address as configured.
    pub server: String,
    /// Connected now.
    pub connected: AtomicBool,
    /// Times the connection was made (the first time included).
    pub connects: AtomicU64,
    /// Times it was lost.
    pub disconnects: AtomicU64,
    /// Frames a remote bridge sent that never arrived (gaps in its sequence
    /// numbers), for inputs.
    pub lost: AtomicU64,
}

impl ConnectionStats {
    #[must_use]
    pub fn new(server: &str) -> Self {
        Self {
            server: server.to_owned(),
            ..Self::default()
        }
    }
}

/// Everything the status report reads.
#[derive(Default, Clone)]
pub struct Status {
    pub inputs: Vec<(String, Arc<InputStats>)>,
    pub outputs: Vec<(String, Arc<OutputStats>, Option<SharedHistogram>)>,
    pub solver: Arc<SolverStats>,
    /// Connections to servers, named as the input or output they serve.
    pub connections: Vec<(String, Arc<ConnectionStats>)>,
}

/// p50, p99 and max of a histogram, microseconds, and its count.
fn percentiles(h: &SharedHistogram) -> (u64, u64, u64, u64) {
    let h = h.lock().unwrap_or_else(PoisonError::into_inner);
    (
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.max(),
        h.len(),
    )
}

impl Status {
    /// The JSON report (the WebSocket `status` payload).
    #[must_use]
    pub fn report(&self) -> Value {
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|(name, s)| {
                json!({
                    "name": name,
                    "packets": s.packets.load(Relaxed),
                    "frames": s.frames.load(Relaxed),
                    "drops": s.drops.load(Relaxed),
                    "bad": s.bad.load(Relaxed),
                    "unknown": s.unknown.load(Relaxed),
                    "ignored": s.ignored.load(Relaxed),
                })
            })
            .collect();
        let outputs: Vec<Value> = self
            .outputs
            .iter()
            .map(|(name, s, latency)| {
                let latency = latency.as_ref().map(|h| {
                    let (p50, p99, max, count) = percentiles(h);
                    json!({"p50Us": p50, "p99Us": p99, "maxUs": max, "count": count})
                });
                json!({
                    "name": name,
                    "frames": s.frames.load(Relaxed),
                    "drops": s.drops.load(Relaxed),
                    "packets": s.packets.load(Relaxed),
                    "bytes": s.bytes.load(Relaxed),
                    "errors": s.errors.load(Relaxed),
                    "noReceiver": s.no_receiver.load(Relaxed),
                    "latency": latency,
                })
            })
            .collect();
        let connections: Vec<Value> = self
            .connections
            .iter()
            .map(|(name, c)| {
                json!({
                    "name": name,
                    "server": c.server,
                    "connected": c.connected.load(Relaxed),
                    "connects": c.connects.load(Relaxed),
                    "disconnects": c.disconnects.load(Relaxed),
                    "lost": c.lost.load(Relaxed),
                })
            })
            .collect();
        json!({
            "inputs": inputs,
            "solver": {
                "frames": self.solver.frames.load(Relaxed),
                "errors": self.solver.errors.load(Relaxed),
                "refused": self.solver.refused.load(Relaxed),
                "performers": self.solver.performers.load(Relaxed),
            },
            "outputs": outputs,
            "connections": connections,
        })
    }

    /// One line for the log: per input and output, what moved and what was lost.
    #[must_use]
    pub fn line(&self) -> String {
        let mut line = String::new();
        for (name, s) in &self.inputs {
            line.push_str(&format!(
                "{name}: {} packets {} frames {} drops {} bad {} unknown; ",
                s.packets.load(Relaxed),
                s.frames.load(Relaxed),
                s.drops.load(Relaxed),
                s.bad.load(Relaxed),
                s.unknown.load(Relaxed),
            ));
        }
        line.push_str(&format!(
            "solver: {} frames {} errors {} performers",
            self.solver.frames.load(Relaxed),
            self.solver.errors.load(Relaxed),
            self.solver.performers.load(Relaxed),
        ));
        for (name, s, latency) in &self.outputs {
            line.push_str(&format!(
                "; {name}: {} frames {} drops {} errors",
                s.frames.load(Relaxed),
                s.drops.load(Relaxed),
                s.errors.load(Relaxed),
            ));
            let unheard = s.no_receiver.load(Relaxed);
            if unheard > 0 {
                line.push_str(&format!(
                    " ({unheard} datagrams with no receiver listening)"
                ));
            }
            if let Some(h) = latency {
                let (p50, p99, _, count) = percentiles(h);
                if count > 0 {
                    line.push_str(&format!(", latency p50 {p50} µs p99 {p99} µs"));
                }
            }
        }
        for (name, c) in &self.connections {
            let state = if c.connected.load(Relaxed) {
                "connected"
            } else {
                "disconnected"
            };
            line.push_str(&format!(
                "; {name}: {state}, {} reconnects, {} lost frames",
                c.connects.load(Relaxed).saturating_sub(1),
                c.lost.load(Relaxed),
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_reaches_the_report_after_a_merge() {
        let (mut latency, shared) = Latency::new();
        let then = Instant::now() - Duration::from_millis(2);
        latency.record(then);
        latency.merge();
        let (p50, _, _, count) = percentiles(&shared);
        assert_eq!(count, 1);
        assert!(p50 >= 2000, "{p50}");
        let status = Status {
            outputs: vec![("out".into(), Arc::default(), Some(shared))],
            ..Status::default()
        };
        assert_eq!(status.report()["outputs"][0]["latency"]["count"], 1);
        assert!(status.line().contains("latency p50"));
    }
}
