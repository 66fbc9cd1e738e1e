//! VRChat-style OSC trackers over UDP (`/tracking/trackers/1..8/position|rotation`
//! and `/tracking/trackers/head/...`): one task per bound socket, one performer per
//! port. Datagrams are decoded by `protocol::vrchat` (pure) into the devices as
//! last seen; each sender tick (bundled or one message per datagram) pushes one
//! tracker frame for VR-mode IK. Bad datagrams are counted and dropped.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use tokio::net::UdpSocket;
use tokio::sync::watch;

use crate::io::udp;
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
    pub async fn run(self) -> std::io::Result<()> {
        let Self {
            socket,
            mut port,
            mut trackers,
            performer,
            mut shutdown,
        } = self;
        let started = Instant::now();
        let mut frame = TrackerFrame::new(performer);
        udp::receive_until_shutdown(&socket, &mut shutdown, |batch, received| {
            for (datagram, _) in batch.iter() {
                port.stats.packets.fetch_add(1, Relaxed);
                let now = started.elapsed().as_secs_f64();
                let stats = trackers.decode(datagram, now, |trackers| {
                    trackers.write_frame(&mut frame);
                    port.push_unwoken(InputFrame {
                        received,
                        frame: SourceFrame::Trackers(frame),
                    });
                });
                let s = &port.stats;
                s.bad
                    .fetch_add(u64::from(stats.malformed + stats.broken), Relaxed);
                s.unknown
                    .fetch_add(u64::from(stats.unknown + stats.unassigned), Relaxed);
                s.ignored.fetch_add(u64::from(stats.ignored), Relaxed);
            }
            port.wake_solver();
        })
        .await
    }
}
