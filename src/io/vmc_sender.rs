//! Sending VMC over UDP from the calling thread (the `send` command's edge): one
//! socket, one receiver, an optional rate cap on the take's clock (a frame less
//! than `1/hz` of take time after the last one sent is skipped and counted, never
//! queued; so the same frames go however fast they are sent). Frames are encoded
//! into buffers kept from frame to frame: no allocation per frame. A receiver that is not listening (ICMP "port
//! unreachable", seen as a refused send) is counted and sent to again next frame:
//! receivers come and go. Any other failure is returned to the caller.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use crate::humanoid::{CustomNames, HumanoidPose};
use crate::io::rate_cap::RateCap;
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
    rate_cap: Option<RateCap>,
    /// The take time of the last frame sent.
    last_sent: Option<f32>,
    pub stats: SendStats,
}

impl VmcSender {
    /// A socket bound to an ephemeral port of the receiver's address family,
    /// connected to `target`; at most `rate_cap` frames per second of take time
    /// when given.
    pub fn connect(
        target: SocketAddr,
        encoder: VmcEncoder,
        rate_cap: Option<RateCap>,
    ) -> io::Result<Self> {
        let local: SocketAddr = if target.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            ([0u16; 8], 0).into()
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(target)?;
        Ok(Self {
            socket,
            encoder,
            datagrams: Datagrams::new(),
            rate_cap,
            last_sent: None,
            stats: SendStats::default(),
        })
    }

    /// Sends the frame at `time` seconds of the take, unless the rate cap says it
    /// comes too soon after the last one sent, in take time (then `false`). A time
    /// before the last one sent starts a new run (the take played again): its frame
    /// goes.
    pub fn send(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        names: &CustomNames,
    ) -> io::Result<bool> {
        if let Some(cap) = self.rate_cap {
            let since = self.last_sent.and_then(|last| {
                Duration::try_from_secs_f64(f64::from(time) - f64::from(last)).ok()
            });
            if !cap.allows(since) {
                self.stats.skipped += 1;
                return Ok(false);
            }
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
        self.last_sent = Some(time);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::vrma::VrmaRest;
    use crate::protocol::vmc::ExpressionNames;

    /// `frames` frames of a take at `fps`, sent with a cap of `hz` as fast as the
    /// loop goes (`send --fast`): the frames sent.
    fn send_capped(to: SocketAddr, fps: f32, hz: f32, frames: u32) -> SendStats {
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.95));
        let mut sender = VmcSender::connect(to, encoder, RateCap::from_hz(hz)).unwrap();
        let (pose, names) = (HumanoidPose::default(), CustomNames::default());
        for k in 0..frames {
            sender.send(k as f32 / fps, &pose, &names).unwrap();
        }
        sender.stats
    }

    #[test]
    fn the_rate_cap_counts_take_time_however_fast_frames_go() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = receiver.local_addr().unwrap();
        // 3 s of take: rate × 3 frames and the first.
        for (fps, hz, expected) in [(60.0, 30.0, 91), (120.0, 60.0, 181), (120.0, 30.0, 91)] {
            let frames = (fps * 3.0) as u32 + 1;
            let stats = send_capped(to, fps, hz, frames);
            let what = format!("{fps} fps capped at {hz} Hz");
            assert_eq!(stats.frames, expected, "{what}: {stats:?}");
            assert_eq!(stats.skipped, u64::from(frames) - expected, "{what}");
        }
        // A cap that does not divide the frame rate: frames at least 1/25 s apart.
        assert_eq!(send_capped(to, 60.0, 25.0, 181).frames, 61);

        // Played again from 0: the first frame of the new run goes.
        let encoder = VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.95));
        let mut sender = VmcSender::connect(to, encoder, RateCap::from_hz(30.0)).unwrap();
        let (pose, names) = (HumanoidPose::default(), CustomNames::default());
        let sent: Vec<bool> = [0.0, 1.0 / 60.0, 2.0 / 60.0, 0.0, 1.0 / 60.0]
            .into_iter()
            .map(|t| sender.send(t, &pose, &names).unwrap())
            .collect();
        assert_eq!(sent, [true, false, true, true, false]);
    }
}
