//! `/metrics`: the bridge's status in the Prometheus text format (version 0.0.4),
//! written by `prometheus-client` from the same counters as the WebSocket
//! `status` reply, read at scrape time (nothing is kept between scrapes).
//!
//! Every name starts with `mocap_bridge_` and is in base units (seconds, bytes):
//! - per input (`input` label): packets, frames, drops, bad messages, unknown
//!   names and ignored messages, as counters;
//! - the solver: frames, errors, refused frames (counters), and the performers
//!   gauge;
//! - per performer (`performer`, `source`): frames solved (a counter, whose
//!   `rate()` is the performer's frame rate) and the seconds since its last frame;
//! - per output (`output`): frames, drops, packets, bytes, errors, datagrams with
//!   no receiver (counters), and the latency from input to output as a histogram
//!   with fixed buckets (`LATENCY_BUCKETS_S`, then `+Inf`) counted from the
//!   output's `hdrhistogram`: a value within the histogram's resolution (0.1 %)
//!   of a bound may count in the bucket below it, and the sum is the histogram's
//!   mean times its count;
//! - per NATS connection (`connection`, `server`): connected (1 or 0), connects,
//!   disconnects and frames lost (gaps in remote sequence numbers).

use std::sync::PoisonError;
use std::sync::atomic::Ordering::Relaxed;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use crate::pipeline::solver::{PerformerInfo, SolverControl};
use crate::pipeline::status::{SharedHistogram, Status};

use super::websocket::Shared;

/// Upper bounds of the latency buckets, seconds (then `+Inf`).
pub const LATENCY_BUCKETS_S: [f64; 14] = [
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// The content type of the answer.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The text of one scrape.
#[must_use]
pub fn render(status: &Status, performers: &[PerformerInfo]) -> String {
    let mut registry = Registry::with_prefix("mocap_bridge");
    registry.register_collector(Box::new(Snapshot::take(status, performers)));
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &registry);
    text
}

/// The performers as the solver lists them (none while it stops).
pub async fn performers(shared: &Shared) -> Vec<PerformerInfo> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    if shared
        .controls
        .solver
        .send(SolverControl::Performers { reply })
        .is_err()
    {
        return Vec::new();
    }
    shared.controls.solver_thread.unpark();
    answer.await.unwrap_or_default()
}

/// A latency histogram as Prometheus wants it.
#[derive(Debug, Clone, PartialEq)]
struct Buckets {
    /// Values in each bucket of `LATENCY_BUCKETS_S` (not cumulative).
    counts: Vec<(f64, u64)>,
    count: u64,
    sum_s: f64,
}

impl Buckets {
    fn of(histogram: &SharedHistogram) -> Self {
        let h = histogram.lock().unwrap_or_else(PoisonError::into_inner);
        // Values up to each bound (`count_between` walks the histogram's own
        // buckets), then per bucket.
        let mut below = 0;
        let counts: Vec<(f64, u64)> = LATENCY_BUCKETS_S
            .iter()
            .map(|&bound| {
                let up_to = h.count_between(0, (bound * 1e6) as u64);
                let in_bucket = up_to.saturating_sub(below);
                below = up_to;
                (bound, in_bucket)
            })
            .collect();
        let count = h.len();
        Self {
            counts,
            count,
            sum_s: h.mean() * count as f64 * 1e-6,
        }
    }
}

/// Everything one scrape reports, read once.
#[derive(Debug)]
struct Snapshot {
    /// (input, [packets, frames, drops, bad, unknown, ignored]).
    inputs: Vec<(String, [u64; 6])>,
    /// [frames, errors, refused, performers].
    solver: [u64; 4],
    /// (performer, source, frames, seconds since the last frame).
    performers: Vec<(String, String, u64, f64)>,
    /// (output, [frames, drops, packets, bytes, errors, no receiver], latency).
    outputs: Vec<(String, [u64; 6], Option<Buckets>)>,
    /// (connection, server, connected, [connects, disconnects, lost]).
    connections: Vec<(String, String, bool, [u64; 3])>,
}

impl Snapshot {
    fn take(status: &Status, performers: &[PerformerInfo]) -> Self {
        let inputs = status
            .inputs
            .iter()
            .map(|(name, s)| {
                let counts = [
                    &s.packets, &s.frames, &s.drops, &s.bad, &s.unknown, &s.ignored,
                ]
                .map(|c| c.load(Relaxed));
                (name.clone(), counts)
            })
            .collect();
        let solver = &status.solver;
        let outputs = status
            .outputs
            .iter()
            .map(|(name, s, latency)| {
                let counts = [
                    &s.frames,
                    &s.drops,
                    &s.packets,
                    &s.bytes,
                    &s.errors,
                    &s.no_receiver,
                ]
                .map(|c| c.load(Relaxed));
                (name.clone(), counts, latency.as_ref().map(Buckets::of))
            })
            .collect();
        Self {
            inputs,
            solver: [
                &solver.frames,
                &solver.errors,
                &solver.refused,
                &solver.performers,
            ]
            .map(|c| c.load(Relaxed)),
            performers: performers
                .iter()
                .map(|p| {
                    let source = format!("{:?}", p.source).to_lowercase();
                    let age = p.last_seen_ms as f64 / 1000.0;
                    (p.name.clone(), source, p.frames, age)
                })
                .collect(),
            outputs,
            connections: status
                .connections
                .iter()
                .map(|(name, c)| {
                    let counts = [&c.connects, &c.disconnects, &c.lost].map(|v| v.load(Relaxed));
                    (
                        name.clone(),
                        c.server.clone(),
                        c.connected.load(Relaxed),
                        counts,
                    )
                })
                .collect(),
        }
    }
}

/// A performer's labels.
fn performer_labels(p: &(String, String, u64, f64)) -> Vec<(&str, &str)> {
    vec![("performer", p.0.as_str()), ("source", p.1.as_str())]
}

/// Writes one family of counters, one per labelled row.
fn counters<'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    rows: impl Iterator<Item = (Vec<(&'a str, &'a str)>, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, unit, MetricType::Counter)?;
    for (labels, value) in rows {
        ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Writes one family of gauges, one per labelled row.
fn gauges<'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    rows: impl Iterator<Item = (Vec<(&'a str, &'a str)>, f64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, unit, MetricType::Gauge)?;
    for (labels, value) in rows {
        ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for Snapshot {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        const INPUTS: [(&str, &str); 6] = [
            ("input_packets", "Datagrams or messages received."),
            ("input_frames", "Frames handed to the solver."),
            (
                "input_drops",
                "Frames dropped: the ring to the solver was full.",
            ),
            (
                "input_bad_messages",
                "Messages that could not be read (dropped).",
            ),
            (
                "input_unknown",
                "Messages naming a bone, joint or performer nobody knows.",
            ),
            ("input_ignored", "Messages ignored as the protocol asks."),
        ];
        for (i, (name, help)) in INPUTS.iter().enumerate() {
            let rows = self
                .inputs
                .iter()
                .map(|(input, counts)| (vec![("input", input.as_str())], counts[i]));
            counters(&mut e, name, help, None, rows)?;
        }
        const SOLVER: [(&str, &str); 3] = [
            ("solver_frames", "Frames solved."),
            ("solver_errors", "Frames that could not be solved."),
            ("solver_refused", "Frames of performers over maxPerformers."),
        ];
        for (i, (name, help)) in SOLVER.iter().enumerate() {
            let rows = std::iter::once((Vec::new(), self.solver[i]));
            counters(&mut e, name, help, None, rows)?;
        }
        let performers = std::iter::once((Vec::new(), self.solver[3] as f64));
        gauges(&mut e, "performers", "Performers now.", None, performers)?;
        let frames = self.performers.iter().map(|p| (performer_labels(p), p.2));
        let help = "Frames solved for the performer (its frame rate is the rate of this).";
        counters(&mut e, "performer_frames", help, None, frames)?;
        let ages = self.performers.iter().map(|p| (performer_labels(p), p.3));
        let help = "Seconds since the performer's last frame.";
        let unit = Some(&Unit::Seconds);
        gauges(&mut e, "performer_last_frame_age", help, unit, ages)?;
        const OUTPUTS: [(&str, &str, Option<Unit>); 6] = [
            ("output_frames", "Frames sent (or recorded).", None),
            (
                "output_drops",
                "Frames dropped: ring full, superseded, over a rate cap, or no server.",
                None,
            ),
            ("output_packets", "Datagrams or messages written.", None),
            ("output", "Bytes written.", Some(Unit::Bytes)),
            ("output_errors", "Failed sends.", None),
            (
                "output_no_receiver",
                "Datagrams sent while no receiver listened.",
                None,
            ),
        ];
        for (i, (name, help, unit)) in OUTPUTS.iter().enumerate() {
            let rows = self
                .outputs
                .iter()
                .map(|(output, counts, _)| (vec![("output", output.as_str())], counts[i]));
            counters(&mut e, name, help, unit.as_ref(), rows)?;
        }
        let mut family = e.encode_descriptor(
            "output_latency",
            "From an input receiving a frame to the output sending it.",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for (output, _, buckets) in &self.outputs {
            if let Some(b) = buckets {
                let labels = vec![("output", output.as_str())];
                family
                    .encode_family(&labels)?
                    .encode_histogram::<NoLabelSet>(b.sum_s, b.count, &b.counts, None)?;
            }
        }
        let rows = self.connections.iter().map(|(name, server, up, _)| {
            let labels = vec![("connection", name.as_str()), ("server", server.as_str())];
            (labels, if *up { 1.0 } else { 0.0 })
        });
        let help = "1 while connected to the NATS server, else 0.";
        gauges(&mut e, "nats_connected", help, None, rows)?;
        const CONNECTIONS: [(&str, &str); 3] = [
            (
                "nats_connects",
                "Connections made to the NATS server (the first included).",
            ),
            ("nats_disconnects", "Connections to the NATS server lost."),
            (
                "nats_lost_frames",
                "Frames of remote performers that never arrived (sequence gaps).",
            ),
        ];
        for (i, (name, help)) in CONNECTIONS.iter().enumerate() {
            let rows = self.connections.iter().map(|(name, server, _, counts)| {
                let labels = vec![("connection", name.as_str()), ("server", server.as_str())];
                (labels, counts[i])
            });
            counters(&mut e, name, help, None, rows)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A status with one input and one output whose histogram holds `latencies_us`.
    fn status_with_latency(latencies_us: &[u64]) -> Status {
        let (_, shared) = crate::pipeline::status::Latency::new();
        for &us in latencies_us {
            shared.lock().unwrap().record(us).unwrap();
        }
        Status {
            inputs: vec![("vmc-in:127.0.0.1:39540".into(), Arc::default())],
            outputs: vec![(
                "vmc-out:127.0.0.1:39539".into(),
                Arc::default(),
                Some(shared),
            )],
            ..Status::default()
        }
    }

    #[test]
    fn an_empty_histogram_has_every_bucket_at_zero() {
        let text = render(&status_with_latency(&[]), &[]);
        let output = "output=\"vmc-out:127.0.0.1:39539\"";
        for le in ["0.0001", "5", "+Inf"] {
            let line =
                format!("mocap_bridge_output_latency_seconds_bucket{{{output},le=\"{le}\"}} 0");
            assert!(text.contains(&line), "{line} in\n{text}");
        }
    }

    #[test]
    fn latencies_land_in_their_buckets_with_an_inf_bucket() {
        let status = status_with_latency(&[50, 90, 300, 1_500, 2_000_000, 30_000_000]);
        let text = render(&status, &[]);
        let bucket = |le: &str| {
            let line = format!(
                "mocap_bridge_output_latency_seconds_bucket{{output=\"vmc-out:127.0.0.1:39539\",le=\"{le}\"}} "
            );
            let at = text
                .find(&line)
                .unwrap_or_else(|| panic!("{line} in\n{text}"));
            text[at + line.len()..].lines().next().unwrap().to_owned()
        };
        for (le, cumulative) in [
            ("0.0001", "2"),
            ("0.0005", "3"),
            ("0.002", "4"),
            ("1", "4"),
            ("5", "5"),
            ("+Inf", "6"),
        ] {
            assert_eq!(bucket(le), cumulative, "le={le}");
        }
        assert!(text.contains(
            "mocap_bridge_output_latency_seconds_count{output=\"vmc-out:127.0.0.1:39539\"} 6"
        ));
        assert!(text.contains("# TYPE mocap_bridge_input_packets_total counter"));
        assert!(text.contains("mocap_bridge_performers 0"));
    }
}
