//! VRChat-style OSC trackers over UDP (`/tracking/trackers/1..8/position|rotation`
//! and `/tracking/trackers/head/...`): one task per bound socket, one performer per
//! port. Datagrams are decoded by `protocol::vrchat` (pure) into the devices as
//! last seen; each datagram that updated them pushes a tracker frame for VR-mode IK.
//! Bad datagrams are counted and dropped.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use tokio::net::UdpSocket;
use tokio::sync::watch;

use crate::net::vmc_input::MAX_DATAGRAM;
use crate::pipeline::{InputFrame, InputPort, SourceFrame};
use crate::protocol::frame::{PerformerName, TrackerFrame};
use crate::protocol::vrchat::VrchatTrackers;

/// A VRChat OSC tracker port feeding the solver.
pub struct VrchatInput {
    pub socket: UdpSocket,
    pub port: InputPort,
    pub trackers: VrchatTrackers,
    pub performer: PerformerName,
    pub shutdown: watch::Receiver<bool>,
}

impl VrchatInput {
    /// Receives until shutdown. Bad datagrams and a full ring are counted, never fatal.
    pub async fn run(mut self) -> std::io::Result<()> {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let started = Instant::now();
        let mut frame = TrackerFrame::new(self.performer);
        loop {
            let len = tokio::select! {
                received = self.socket.recv(&mut buf) => match received {
                    Ok(n) => n,
                    Err(e) => {
                        tracing::debug!(%e, "receive failed");
                        continue;
                    }
                },
                _ = self.shutdown.changed() => return Ok(()),
            };
            let received = Instant::now();
            let s = &self.port.stats;
            s.packets.fetch_add(1, Relaxed);
            let stats = self.trackers.decode(&buf[..len]);
            s.bad
                .fetch_add(u64::from(stats.malformed + stats.broken), Relaxed);
            s.unknown
                .fetch_add(u64::from(stats.unknown + stats.unassigned), Relaxed);
            s.ignored.fetch_add(u64::from(stats.ignored), Relaxed);
            if stats.updates > 0 {
                self.trackers.write_frame(&mut frame);
                frame.time = started.elapsed().as_secs_f64();
                self.port.push(InputFrame {
                    received,
                    frame: SourceFrame::Trackers(frame),
                });
            }
        }
    }
}
