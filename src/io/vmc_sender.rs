//! Sending VMC over UDP from the calling thread (the `send` command's edge): one
//! socket, one receiver, an optional rate cap. Frames are encoded into buffers
//! kept from frame to frame: no allocation per frame. Frames over the cap are skipped and
//! counted, never queued. A receiver that is not listening (ICMP "port
//! unreachable", seen as a refused send) is counted and sent to again next frame:
//! receivers come and go. Any other failure is returned to the caller.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::humanoid::{CustomNames, HumanoidPose};
use crate::protocol::vmc::{Datagrams, VmcEncoder};

/// What a sender has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendStats {
    /// Frames sent.
    pub frames: u64,
    /// Frames skipped by the rate cap.
    pub skipped: u64,
    pub datagrams: u64,
    pub bytes: u64,
    /// Datagrams refused because nothing listened at the receiver's port.
    pub refused: u64,
}

/// A VMC sender to one receiver.
pub struct VmcSender {
    socket: UdpSocket,
    encoder: VmcEncoder,
    /// Each frame's datagrams, encoded into the same buffers every frame.
    datagrams: Datagrams,
    min_interval: Option<Duration>,
    last_sent: Option<Instant>,
    pub stats: SendStats,
}

impl VmcSender {
    /// A socket bound to an ephemeral port of the receiver's address family,
    /// connected to `target`; at most `rate_cap_hz` frames per second when given.
    pub fn connect(
        target: SocketAddr,
        encoder: VmcEncoder,
        rate_cap_hz: Option<f32>,
    ) -> io::Result<Self> {
        let local: SocketAddr = if target.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            ([0u16; 8], 0).into()
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(target)?;
        let min_interval = rate_cap_hz
            .filter(|hz| hz.is_finite() && *hz > 0.0)
            .map(|hz| Duration::from_secs_f32(1.0 / hz));
        Ok(Self {
            socket,
            encoder,
            datagrams: Datagrams::new(),
            min_interval,
            last_sent: None,
            stats: SendStats::default(),
        })
    }

    /// Sends one frame, unless the rate cap says it comes too soon (then `false`).
    pub fn send(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        names: &CustomNames,
    ) -> io::Result<bool> {
        let now = Instant::now();
        if let (Some(min), Some(last)) = (self.min_interval, self.last_sent)
            && now.duration_since(last) < min
        {
            self.stats.skipped += 1;
            return Ok(false);
        }
        self.encoder
            .encode_into(time, pose, names, &mut self.datagrams);
        for d in self.datagrams.iter() {
            match self.socket.send(d) {
                Ok(_) => {
                    self.stats.datagrams += 1;
                    self.stats.bytes += d.len() as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => self.stats.refused += 1,
                Err(e) => return Err(e),
            }
        }
        self.stats.frames += 1;
        self.last_sent = Some(now);
        Ok(true)
    }
}
