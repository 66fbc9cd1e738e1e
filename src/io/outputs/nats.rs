//! NATS output: every performer's solved pose published for other machines.
//!
//! One task per configured server. Each pose goes out on
//! `<prefix>.<bridge>.<performer>.pose` (`protocol::nats`: the binary pose with its
//! sequence number, time and rest hips height), the points it was solved from on
//! `.source`, and a performer's appearing and going on `.status` (JSON). Every
//! pose taken at one wake-up also goes out in one message on
//! `<prefix>.<bridge>.poses` (`protocol::nats::BundleWriter`), after the
//! wake-up's per-performer messages, in as few messages as the server's largest
//! payload allows: a receiver that wants every performer reads one message per
//! wake-up instead of one per performer.
//!
//! It never holds anyone up: the solver hands it frames through its own ring (a
//! full ring drops, counted), and it hands them to the client's queue, which
//! `async-nats` writes to the socket. While the server is away, frames are dropped
//! and counted, not queued: a receiver wants the newest pose, not a backlog.
//! Unlike the VMC output it passes over no frame while the server takes them:
//! its receivers include recorders and relays, which want every frame and the
//! same sequence numbers; a server too slow to keep up fills the ring, which then
//! drops (counted) rather than slow the solver.
//!
//! Performers received from the same server (`io::nats::Received`, filled by this
//! bridge's NATS inputs on it) are not published back: a relay never loops.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use async_nats::connection::State;
use async_nats::{Client, Subject};
use bytes::Bytes;

use crate::humanoid::CustomNames;
use crate::io::nats::Received;
use crate::pipeline::performer::StreamSkeleton;
use crate::pipeline::status::{ConnectionStats, Latency};
use crate::pipeline::{OutputMsg, OutputRing, SourceKind, SourcePoints};
use crate::protocol::frame::PerformerName;
use crate::protocol::nats::{self, BundleWriter, Kind};
use crate::protocol::ws::PoseHeader;

/// How long the last frames may take to reach the server when the bridge stops.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// One NATS server fed from the solver.
pub struct NatsOutput {
    pub client: Client,
    /// The subjects' first tokens (`mocap`).
    pub prefix: String,
    /// This bridge's name, the subjects' second token.
    pub bridge: String,
    pub ring: OutputRing,
    /// The performers this bridge received from the same server.
    pub received: Vec<Arc<Received>>,
    /// The skeletons senders stream, by index (the source payload names them).
    pub skeletons: Arc<[StreamSkeleton]>,
    pub latency: Latency,
    pub connection: Arc<ConnectionStats>,
}

/// Per performer: its subjects, names, and whether it is published at all.
struct Track {
    publish: bool,
    pose: Subject,
    source: Subject,
    status: Subject,
    names: CustomNames,
}

impl NatsOutput {
    /// Publishes until the solver is done.
    pub async fn run(mut self) {
        let mut batch: Vec<OutputMsg> = Vec::new();
        let mut tracks: foldhash::HashMap<PerformerName, Track> = Default::default();
        let mut buffer = Vec::new();
        let mut bundle = BundleWriter::default();
        let bundle_subject = Subject::from(nats::bundle_subject(&self.prefix, &self.bridge));
        loop {
            self.ring.ready().await;
            self.ring.drain(|msg| batch.push(*msg));
            let up = self.client.connection_state() == State::Connected;
            for msg in &batch {
                if self.publish(msg, up, &mut tracks, &mut buffer).await {
                    self.add_to_bundle(&buffer, &mut bundle, &bundle_subject)
                        .await;
                }
            }
            batch.clear();
            if !bundle.is_empty() {
                self.send(bundle_subject.clone(), bundle.as_bytes(), None)
                    .await;
                bundle.clear();
            }
            if self.ring.is_closed() {
                // What is queued in the client goes out before the task ends; a
                // flush waits for the server, so not while it is away, nor long.
                if self.client.connection_state() == State::Connected {
                    let _ = tokio::time::timeout(FLUSH_WAIT, self.client.flush()).await;
                }
                self.latency.merge();
                return;
            }
        }
    }

    /// Publishes one message (`up`: the server is there; else a pose is dropped,
    /// counted, and anything else passed over). True when it was a pose handed to
    /// the client, whose payload is left in `buffer` for the bundle.
    async fn publish(
        &mut self,
        msg: &OutputMsg,
        up: bool,
        tracks: &mut foldhash::HashMap<PerformerName, Track>,
        buffer: &mut Vec<u8>,
    ) -> bool {
        let stats = self.ring.stats.clone();
        let performer = match msg {
            OutputMsg::Pose(p) => p.performer,
            OutputMsg::Source(s) => s.performer,
            OutputMsg::Appeared { performer, .. }
            | OutputMsg::Gone { performer }
            | OutputMsg::ExpressionName { performer, .. } => *performer,
        };
        let track = tracks
            .entry(performer)
            .or_insert_with(|| self.track(performer));
        let (subject, received) = match msg {
            OutputMsg::ExpressionName { slot, name, .. } => {
                track.names.name_slot(usize::from(*slot), name.as_str());
                return false;
            }
            OutputMsg::Pose(frame) => {
                if !track.publish {
                    return false;
                }
                if !up {
                    stats.drops.fetch_add(1, Relaxed);
                    return false;
                }
                let header = PoseHeader {
                    performer,
                    seq: frame.seq,
                    time: frame.time,
                };
                nats::encode_pose(&header, &frame.pose, &track.names, buffer);
                (track.pose.clone(), Some(frame.received))
            }
            OutputMsg::Source(points) => {
                if !track.publish || !up {
                    return false;
                }
                self.encode_source(points, buffer);
                (track.source.clone(), None)
            }
            OutputMsg::Appeared { source, .. } => {
                if !track.publish || !up {
                    return false;
                }
                let kind = match source {
                    SourceKind::Humanoid => "humanoid",
                    SourceKind::Skeleton => "skeleton",
                    SourceKind::Trackers => "trackers",
                };
                *buffer = nats::encode_status(performer.as_str(), Some(kind));
                (track.status.clone(), None)
            }
            OutputMsg::Gone { .. } => {
                let gone = tracks.remove(&performer);
                let Some(track) = gone.filter(|t| t.publish && up) else {
                    return false;
                };
                *buffer = nats::encode_status(performer.as_str(), None);
                (track.status, None)
            }
        };
        self.send(subject, buffer, received).await && received.is_some()
    }

    /// Hands one payload to the client, counted (`received`: the pose's arrival,
    /// for the frame count and the latency); false when the client refused it.
    async fn send(&mut self, subject: Subject, payload: &[u8], received: Option<Instant>) -> bool {
        let stats = &self.ring.stats;
        match self
            .client
            .publish(subject, Bytes::copy_from_slice(payload))
            .await
        {
            Ok(()) => {
                stats.packets.fetch_add(1, Relaxed);
                stats.bytes.fetch_add(payload.len() as u64, Relaxed);
                if let Some(received) = received {
                    stats.frames.fetch_add(1, Relaxed);
                    self.latency.record(received);
                }
                true
            }
            Err(e) => {
                stats.errors.fetch_add(1, Relaxed);
                tracing::debug!(%e, "NATS output: publish failed");
                false
            }
        }
    }

    /// Adds a pose payload to the wake-up's bundle; a bundle it would make larger
    /// than the server takes goes out first.
    async fn add_to_bundle(&mut self, pose: &[u8], bundle: &mut BundleWriter, subject: &Subject) {
        let max = self.client.max_payload();
        if !bundle.fits(pose, max) && !bundle.is_empty() {
            self.send(subject.clone(), bundle.as_bytes(), None).await;
            bundle.clear();
        }
        if bundle.fits(pose, max) {
            bundle.push(pose);
        }
    }

    /// A performer first seen: its subjects, and whether it came from this server.
    fn track(&self, performer: PerformerName) -> Track {
        let name = performer.as_str();
        let subject = |kind| Subject::from(nats::subject(&self.prefix, &self.bridge, name, kind));
        let relayed = self.received.iter().any(|r| r.contains(&performer));
        if relayed {
            tracing::info!(
                performer = name,
                "NATS output: not published back to {}, where it came from",
                self.connection.server
            );
        }
        Track {
            publish: !relayed,
            pose: subject(Kind::Pose),
            source: subject(Kind::Source),
            status: subject(Kind::Status),
            names: CustomNames::default(),
        }
    }

    fn encode_source(&self, points: &SourcePoints, buffer: &mut Vec<u8>) {
        let skeleton = points
            .skeleton
            .and_then(|s| self.skeletons.get(usize::from(s)))
            .map(|s| s.name.as_str());
        let count = usize::from(points.count).min(points.points.len());
        nats::encode_source(
            (points.performer.as_str(), points.seq, skeleton),
            points.present,
            &points.points[..count],
            buffer,
        );
    }
}
