//! NATS input: the performers other bridges publish become performers of this one.
//!
//! One task per configured subscription. Each message on a `pose` subject
//! (`<prefix>.<bridge>.<performer>.pose`, `protocol::nats`) is decoded (pure,
//! untrusted) and pushed onto the input's ring as a humanoid pose with its
//! sender's time, so every output (VMC, WebSocket, recorder, viewer, NATS) works
//! on it as on a local performer. Custom expression names are announced to the
//! solver before the first frame using them, as a replay does.
//!
//! A bundle (`<prefix>.<bridge>.poses`, every pose of one wake-up of the sender)
//! is split and each of its poses taken the same way. A subscription may match a
//! performer's subject and its bridge's bundle both (`mocap.>`), and the sender
//! publishes a wake-up's poses on their subjects before their bundle, so each
//! frame is taken once: a performer taken from its own subject is not taken from
//! a bundle pose whose sequence number is not after the last one taken (its copy);
//! one taken from a bundle (its own message lost) is from then on taken from the
//! bundles alone.
//!
//! What it ignores (counted as `ignored`): subjects of other kinds (`source`,
//! `status`), what this bridge published itself (its own name as the subject's
//! bridge) and a frame taken already. Payloads that do not decode are counted as
//! `bad` (a bundle's poses one by one). A gap in a performer's sequence numbers is
//! counted as frames `lost` in the connection's status (a new run of the sender,
//! whose numbers start again, is not a gap).
//! Every performer received is added to `received`, so an output to the same
//! server does not publish it back.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use async_nats::{Client, Subscriber};
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::humanoid::CustomNames;
use crate::io::nats::Received;
use crate::pipeline::status::ConnectionStats;
use crate::pipeline::{InputFrame, InputPort, SourceFrame};
use crate::protocol::frame::PerformerName;
use crate::protocol::nats::{self, Kind, Subject};

/// One subscription feeding the solver.
pub struct NatsInput {
    /// Subscribed before the task starts (`subscribe`).
    pub subscriber: Subscriber,
    /// This bridge's name: messages it published itself are ignored.
    pub bridge: String,
    pub port: InputPort,
    pub received: Arc<Received>,
    pub connection: Arc<ConnectionStats>,
    pub shutdown: watch::Receiver<bool>,
}

/// What the task keeps per remote performer.
#[derive(Default)]
struct Remote {
    names: CustomNames,
    /// Custom expression slots already announced to the solver.
    announced: usize,
    last_seq: u64,
    /// The last frame taken came in a bundle (not on the performer's subject).
    from_bundle: bool,
}

impl Remote {
    /// Whether frame `seq`, from a bundle (`bundled`) or from the performer's
    /// subject, is the copy of one taken already (see the module header).
    fn is_copy(&self, seq: u64, bundled: bool) -> bool {
        match (self.from_bundle, bundled) {
            (true, false) => true,
            (false, true) => self.last_seq != 0 && seq <= self.last_seq,
            _ => false,
        }
    }
}

/// Subscribes `client` to `subjects`; once connected, waits (up to `wait`) until
/// the server has the subscription, so nothing published after start-up is
/// missed.
pub async fn subscribe(
    client: &Client,
    subjects: &str,
    wait: std::time::Duration,
) -> Result<Subscriber, async_nats::SubscribeError> {
    let subscriber = client.subscribe(subjects.to_owned()).await?;
    if client.connection_state() == async_nats::connection::State::Connected {
        // A round trip to the server: it has read the subscription before it answers.
        let _ = tokio::time::timeout(wait, client.flush()).await;
    }
    Ok(subscriber)
}

impl NatsInput {
    /// Receives until shutdown (or the client is closed).
    pub async fn run(mut self) -> std::io::Result<()> {
        let mut remotes: foldhash::HashMap<PerformerName, Remote> = Default::default();
        loop {
            let message = tokio::select! {
                message = self.subscriber.next() => message,
                _ = self.shutdown.changed() => None,
            };
            let Some(message) = message else {
                return Ok(());
            };
            self.port.stats.packets.fetch_add(1, Relaxed);
            self.take(message.subject.as_str(), &message.payload, &mut remotes);
        }
    }

    fn take(
        &mut self,
        subject: &str,
        payload: &[u8],
        remotes: &mut foldhash::HashMap<PerformerName, Remote>,
    ) {
        let stats = &self.port.stats;
        if let Some(bridge) = nats::parse_bundle_subject(subject) {
            if bridge == self.bridge {
                stats.ignored.fetch_add(1, Relaxed);
                return;
            }
            match nats::split_bundle(payload) {
                Ok(poses) => {
                    for pose in poses {
                        self.take_pose(subject, pose, true, remotes);
                    }
                }
                Err(e) => {
                    stats.bad.fetch_add(1, Relaxed);
                    tracing::debug!(%e, subject, "NATS input: dropped a bundle");
                }
            }
            return;
        }
        match Subject::parse(subject) {
            Some(s) if s.kind == Kind::Pose && s.bridge != self.bridge => {
                self.take_pose(subject, payload, false, remotes);
            }
            _ => {
                stats.ignored.fetch_add(1, Relaxed);
            }
        }
    }

    /// One pose payload, from its performer's subject or from a bundle (`bundled`).
    fn take_pose(
        &mut self,
        subject: &str,
        payload: &[u8],
        bundled: bool,
        remotes: &mut foldhash::HashMap<PerformerName, Remote>,
    ) {
        let stats = &self.port.stats;
        let mut performer = None;
        let decoded = nats::decode_pose(payload, |name| {
            performer = Some(name);
            &mut remotes.entry(name).or_default().names
        });
        let (header, pose) = match decoded {
            Ok(decoded) => decoded,
            Err(e) => {
                stats.bad.fetch_add(1, Relaxed);
                tracing::debug!(%e, subject, "NATS input: dropped a message");
                return;
            }
        };
        let Some(remote) = performer.and_then(|p| remotes.get_mut(&p)) else {
            return;
        };
        if remote.is_copy(header.seq, bundled) {
            stats.ignored.fetch_add(1, Relaxed);
            return;
        }
        remote.from_bundle = bundled;
        if remote.last_seq == 0 {
            self.received.insert(header.performer);
        } else if header.seq > remote.last_seq + 1 {
            let gap = header.seq - remote.last_seq - 1;
            self.connection.lost.fetch_add(gap, Relaxed);
        }
        remote.last_seq = header.seq;
        let received = Instant::now();
        while let Some(name) = remote.names.name(remote.announced) {
            if let Some(name) = PerformerName::new(name) {
                self.port.push_unwoken(InputFrame {
                    received,
                    frame: SourceFrame::ExpressionName {
                        performer: header.performer,
                        slot: remote.announced as u8,
                        name,
                    },
                });
            }
            remote.announced += 1;
        }
        self.port.push(InputFrame {
            received,
            frame: SourceFrame::Humanoid {
                performer: header.performer,
                time: header.time,
                pose,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::Remote;

    /// Takes `frames` (seq, from a bundle) in order; the seqs taken.
    fn taken(frames: &[(u64, bool)]) -> Vec<u64> {
        let mut remote = Remote::default();
        let mut taken = Vec::new();
        for &(seq, bundled) in frames {
            if !remote.is_copy(seq, bundled) {
                remote.from_bundle = bundled;
                remote.last_seq = seq;
                taken.push(seq);
            }
        }
        taken
    }

    #[test]
    fn each_frame_is_taken_once_from_subjects_and_bundles() {
        // Two frames of one performer in one wake-up: both subjects, then the bundle.
        let both = [
            (1, false),
            (2, false),
            (1, true),
            (2, true),
            (3, false),
            (3, true),
        ];
        assert_eq!(taken(&both), [1, 2, 3]);
        // Frame 2's own message lost: from the bundle, and the bundles from then on.
        let lost = [(1, false), (1, true), (2, true), (3, false), (3, true)];
        assert_eq!(taken(&lost), [1, 2, 3]);
        // Bundles alone, with a new run of the sender (numbers start again).
        let bundles = [(7, true), (8, true), (1, true), (2, true)];
        assert_eq!(taken(&bundles), [7, 8, 1, 2]);
        // Subjects alone, with a new run.
        let subjects = [(7, false), (8, false), (1, false)];
        assert_eq!(taken(&subjects), [7, 8, 1]);
    }
}
