//! VMC over OSC/UDP output: one task per receiver.
//!
//! Takes solved frames from its ring, keeps only the newest per performer (the ones
//! it passes over are counted as drops; without a rate cap a frame younger than
//! `FRESH` goes out before the newer one instead, so a sender's burst is not
//! thinned), and sends them as VMC bundles of at most 1500 bytes
//! (`protocol::vmc::VmcEncoder`: Unity bone names, X flip, VRM 0 or VRM 1
//! expression names), at most `rate_hz` frames per second per performer (a frame
//! held back by the cap goes out when the cap allows, unless a newer one replaces
//! it). A receiver shows one avatar, so a receiver is given one performer: a named
//! one, the first to appear, or (for receivers that tell them apart by
//! `/VMC/Ext/T`) all of them. Every frame due at a wake-up goes out in one batch of
//! datagrams (`io::udp::SendBatch`: one system call per 32 on Linux).
//!
//! A receiver that is not listening (ICMP port unreachable) is counted apart from
//! errors (`no_receiver`), said once in the log, and sent to again: receivers come
//! and go. (A connected UDP socket reports the refusal on a later send, so sends
//! that go through do not show that a receiver is back.)

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;

use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::humanoid::CustomNames;
use crate::pipeline::status::Latency;
use crate::pipeline::{OutputMsg, OutputRing, OutputStats, PoseFrame};
use crate::protocol::frame::PerformerName;
use crate::protocol::vmc::{Datagrams, VmcEncoder};

use crate::io::rate_cap::RateCap;
use crate::io::udp::SendBatch;

/// Without a rate cap, a waiting frame that a newer one of its performer finds
/// younger than this still goes out (first); older, it is stale and passed over.
const FRESH: std::time::Duration = std::time::Duration::from_millis(25);

/// Which performers a receiver shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shows {
    /// The first performer to appear (then the next, when it goes).
    First,
    Named(String),
    All,
}

/// One VMC receiver fed from the solver.
pub struct VmcOutput {
    pub socket: UdpSocket,
    pub encoder: VmcEncoder,
    pub ring: OutputRing,
    /// At most so many frames per second of one performer, on the wall clock.
    pub rate_cap: Option<RateCap>,
    pub shows: Shows,
    pub latency: Latency,
    /// Reused for every frame: encoding allocates nothing once warmed up.
    pub datagrams: Datagrams,
}

/// A socket for sending to `to`: bound to an ephemeral port of its family.
pub async fn socket_to(to: SocketAddr) -> io::Result<UdpSocket> {
    let local: SocketAddr = if to.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(to).await?;
    Ok(socket)
}

/// Per performer: its names, the frame waiting to go and when the last one went.
#[derive(Default)]
struct PerformerQueue {
    names: CustomNames,
    pending: Option<PoseFrame>,
    last_sent: Option<Instant>,
}

/// What the task keeps between wake-ups.
#[derive(Default)]
struct Sending {
    tracks: foldhash::HashMap<PerformerName, PerformerQueue>,
    /// Performers with a frame pending, in the order their frames came.
    waiting: Vec<PerformerName>,
    shown: Option<PerformerName>,
    /// The datagrams of every frame going out this wake-up.
    batch: SendBatch,
    /// When each frame in `batch` was received, for the latency histogram.
    received: Vec<std::time::Instant>,
    /// A datagram was refused (nobody listening): said once.
    said_no_receiver: bool,
}

impl VmcOutput {
    /// Sends until the solver is done (then what is pending goes out).
    pub async fn run(mut self) {
        let mut s = Sending::default();
        let stats = self.ring.stats.clone();
        loop {
            let next_due = self.next_due(&s);
            tokio::select! {
                () = self.ring.ready() => {}
                () = sleep_until(next_due) => {}
            }
            let shows = &self.shows;
            let mut early = self
                .rate_cap
                .is_none()
                .then_some((&self.encoder, &mut self.datagrams));
            self.ring
                .drain(|msg| take(shows, &stats, msg, &mut s, early.as_mut()));
            let closed = self.ring.is_closed();
            self.send_due(&mut s, closed).await;
            if closed {
                self.latency.merge();
                return;
            }
        }
    }

    /// When the earliest frame held back by the rate cap may go.
    fn next_due(&self, s: &Sending) -> Option<Instant> {
        let min = self.rate_cap?.min_gap();
        s.waiting
            .iter()
            .filter_map(|p| s.tracks.get(p)?.last_sent.map(|sent| sent + min))
            .min()
    }

    /// Sends every pending frame the rate cap allows (all of them when `flush`),
    /// in one batch of datagrams.
    async fn send_due(&mut self, s: &mut Sending, flush: bool) {
        let now = Instant::now();
        let Sending {
            tracks,
            waiting,
            batch,
            received,
            said_no_receiver,
            ..
        } = s;
        waiting.retain(|performer| {
            let Some(track) = tracks.get_mut(performer) else {
                return false;
            };
            let since = track.last_sent.map(|last| now.duration_since(last));
            let allowed = flush || self.rate_cap.is_none_or(|cap| cap.allows(since));
            if !allowed {
                return true;
            }
            let Some(frame) = track.pending.take() else {
                return false;
            };
            self.encoder.encode_into(
                frame.time as f32,
                &frame.pose,
                &track.names,
                &mut self.datagrams,
            );
            for d in self.datagrams.iter() {
                batch.push(d);
            }
            received.push(frame.received);
            track.last_sent = Some(now);
            false
        });
        if received.is_empty() {
            return;
        }
        let stats = &self.ring.stats;
        let mut refused = false;
        batch
            .send(&self.socket, |outcome| match outcome {
                Ok(n) => {
                    stats.packets.fetch_add(1, Relaxed);
                    stats.bytes.fetch_add(n as u64, Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    stats.no_receiver.fetch_add(1, Relaxed);
                    refused = true;
                }
                Err(e) => {
                    stats.errors.fetch_add(1, Relaxed);
                    tracing::trace!(%e, "send failed");
                }
            })
            .await;
        if refused && !*said_no_receiver {
            *said_no_receiver = true;
            let to = self.socket.peer_addr().map(|a| a.to_string());
            let to = to.as_deref().unwrap_or("the receiver");
            tracing::info!("VMC output: no receiver listening on {to} (yet); sending on");
        }
        stats.frames.fetch_add(received.len() as u64, Relaxed);
        for at in received.drain(..) {
            self.latency.record(at);
        }
    }
}

/// Whether the receiver shows `performer`.
fn shows(shows: &Shows, performer: PerformerName, shown: &mut Option<PerformerName>) -> bool {
    match shows {
        Shows::All => true,
        Shows::Named(name) => performer.as_str() == name,
        Shows::First => *shown.get_or_insert(performer) == performer,
    }
}

/// Takes one message from the solver: a pose replaces the performer's pending one,
/// which is counted as a drop, unless `early` (no rate cap) and the pending one
/// is fresh: then it is encoded into this wake-up's batch first.
fn take(
    receiver_shows: &Shows,
    stats: &OutputStats,
    msg: &OutputMsg,
    s: &mut Sending,
    early: Option<&mut (&VmcEncoder, &mut Datagrams)>,
) {
    match *msg {
        OutputMsg::Pose(ref frame) => {
            if !shows(receiver_shows, frame.performer, &mut s.shown) {
                return;
            }
            let track = s.tracks.entry(frame.performer).or_default();
            match (track.pending.replace(*frame), early) {
                (None, _) => s.waiting.push(frame.performer),
                (Some(old), Some((encoder, datagrams))) if old.received.elapsed() < FRESH => {
                    encoder.encode_into(old.time as f32, &old.pose, &track.names, datagrams);
                    for d in datagrams.iter() {
                        s.batch.push(d);
                    }
                    s.received.push(old.received);
                }
                (Some(_), _) => {
                    stats.drops.fetch_add(1, Relaxed);
                }
            }
        }
        OutputMsg::ExpressionName {
            performer,
            slot,
            name,
        } => {
            s.tracks
                .entry(performer)
                .or_default()
                .names
                .name_slot(usize::from(slot), name.as_str());
        }
        OutputMsg::Gone { performer } => {
            if s.tracks
                .remove(&performer)
                .is_some_and(|t| t.pending.is_some())
            {
                s.waiting.retain(|p| *p != performer);
            }
            if s.shown == Some(performer) {
                s.shown = None;
            }
        }
        OutputMsg::Appeared { .. } | OutputMsg::Source(_) => {}
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}
