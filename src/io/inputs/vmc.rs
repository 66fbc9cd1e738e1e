//! VMC over OSC/UDP input: one task per bound socket.
//!
//! Datagrams are decoded by `protocol::vmc` (pure, no sockets) into events already
//! in glTF axes, assembled into frames per sender (`record::VmcFrames`: a frame
//! ends at `/VMC/Ext/Blend/Apply` or when the next one begins) and pushed onto the
//! input's ring to the solver. Each sender address is one performer: the port's
//! performer name for the first, then `-2`, `-3`, ... Bone rotations are taken as
//! VRM 0 style normalized rotations (identity rest), as VSeeFace and VMC send them,
//! or as local to a configured model's rest (`SenderRest`).
//!
//! Headset, controllers and trackers (`/VMC/Ext/Hmd|Con|Tra/Pos`) become a second
//! performer per sender, `<name>-vr`, solved by VR-mode IK, one frame per sender
//! tick whether bundled or not (see `protocol::vmc::devices`).
//!
//! Unknown addresses are ignored, as the VMC spec asks, except the bridge's own
//! `/bridge/record/start [name] [performer]` and `/bridge/record/stop [performer]`,
//! which go to the recorder. Malformed datagrams and messages are counted in the
//! input's stats and dropped; nothing stops the task but shutdown. Datagrams are
//! taken in batches (`io::udp`), and the solver is woken once per batch.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};

use crate::pipeline::{InputFrame, InputPort, SourceFrame};
use crate::protocol::frame::{PerformerName, TrackedPoint};
use crate::protocol::record_control::RecordCommandsFrom;
use crate::protocol::ticks;
use crate::protocol::vmc::frames::{SenderRest, VmcFrames};
use crate::protocol::vmc::{self, VmcEvent};
use crate::record::recorder::RecordCommand;

use crate::io::inputs::RecordCommands;
use crate::io::udp;
use crate::protocol::vmc::devices::VmcDevices;

/// Most senders one port tracks at once; datagrams from more are dropped (counted)
/// until some of them fall silent for the performer timeout and leave the table.
const MAX_SENDERS: usize = 4096;

/// How often silent senders are looked for.
const PRUNE_INTERVAL: Duration = Duration::from_secs(1);

/// One sender on the port.
struct Sender {
    performer: PerformerName,
    /// Its performer's number on the port: 1 for the port's name, n for `name-n`.
    number: usize,
    /// When its last datagram arrived.
    last_seen: Instant,
    frames: VmcFrames,
    /// Its headset, controllers and trackers, as the performer `<name>-vr`.
    devices: VmcDevices,
    /// Custom expression names already announced to the solver.
    announced: usize,
}

/// A VMC input port feeding the solver.
pub struct VmcInput {
    pub socket: UdpSocket,
    pub port: InputPort,
    /// The first sender's performer name.
    pub performer: String,
    /// Device serials the configuration assigns to tracked points.
    pub devices: HashMap<String, TrackedPoint>,
    /// The senders' rest pose, when not VRM 0 style identity.
    pub rest: Option<Arc<SenderRest>>,
    pub record: mpsc::UnboundedSender<RecordCommand>,
    /// Whose `/bridge/record/*` commands are obeyed.
    pub record_commands: RecordCommandsFrom,
    /// A sender silent this long leaves the port's table (its performer has timed
    /// out in the solver too): the table never fills up with senders long gone.
    pub sender_timeout: Duration,
    pub shutdown: watch::Receiver<bool>,
}

impl VmcInput {
    /// Receives until shutdown. Bad datagrams and a full ring are counted, never fatal.
    pub async fn run(self) -> std::io::Result<()> {
        let Self {
            socket,
            port,
            performer,
            devices,
            rest,
            record,
            record_commands,
            sender_timeout,
            mut shutdown,
        } = self;
        let started = Instant::now();
        let mut state = VmcPort {
            port,
            performer,
            devices,
            rest,
            commands: RecordCommands::new(record_commands, record),
            senders: foldhash::HashMap::default(),
            sender_timeout,
            pruned: started,
            started,
        };
        udp::receive_until_shutdown(&socket, &mut shutdown, |batch, received| {
            for (datagram, from) in batch.iter() {
                state.datagram(datagram, from, received);
            }
            state.port.wake_solver();
        })
        .await
    }
}

/// What a VMC input task keeps between datagrams.
struct VmcPort {
    port: InputPort,
    performer: String,
    devices: HashMap<String, TrackedPoint>,
    rest: Option<Arc<SenderRest>>,
    commands: RecordCommands,
    /// Looked up per datagram: a fast hash (senders are bounded by `MAX_SENDERS`).
    senders: foldhash::HashMap<SocketAddr, Sender>,
    sender_timeout: Duration,
    /// When silent senders were last removed.
    pruned: Instant,
    started: Instant,
}

impl VmcPort {
    /// Decodes one datagram from `from` and hands the solver what it completes.
    fn datagram(&mut self, datagram: &[u8], from: SocketAddr, received: Instant) {
        self.port.stats.packets.fetch_add(1, Relaxed);
        // At most once per interval, so a flood of new addresses costs no more.
        if received.saturating_duration_since(self.pruned) >= PRUNE_INTERVAL {
            self.prune(received);
        }
        let known = self.senders.contains_key(&from);
        if !known && self.senders.len() >= MAX_SENDERS {
            self.port.stats.drops.fetch_add(1, Relaxed);
            return;
        }
        let number = if known { 0 } else { self.free_number() };
        let stats = &self.port.stats;
        let sender = match self.senders.entry(from) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                let name = match number {
                    1 => self.performer.clone(),
                    n => format!("{}-{n}", self.performer),
                };
                let (Some(performer), Some(vr)) = (
                    PerformerName::new(&name),
                    PerformerName::new(&format!("{name}-vr")),
                ) else {
                    stats.bad.fetch_add(1, Relaxed);
                    return;
                };
                new.insert(Sender {
                    performer,
                    number,
                    last_seen: received,
                    frames: match &self.rest {
                        Some(rest) => VmcFrames::with_rest(rest.clone()),
                        None => VmcFrames::default(),
                    },
                    devices: VmcDevices::new(vr, self.devices.clone()),
                    announced: 0,
                })
            }
        };
        sender.last_seen = received;
        let now = self.started.elapsed().as_secs_f32();
        let port = &mut self.port;
        let decoded = vmc::decode(datagram, &mut |event| {
            if let VmcEvent::Device {
                device,
                serial,
                local: false,
                position,
                rotation,
            } = event
            {
                sender
                    .devices
                    .event(device, serial, position, rotation, f64::from(now));
            }
            if let Some((time, pose)) = sender.frames.event(event, now) {
                announce_names(sender, port, received);
                port.push_unwoken(InputFrame {
                    received,
                    frame: SourceFrame::Humanoid {
                        performer: sender.performer,
                        time: f64::from(time),
                        pose,
                    },
                });
            }
        });
        sender
            .devices
            .datagram_end(ticks::is_bundle(datagram), |trackers| {
                port.push_unwoken(InputFrame {
                    received,
                    frame: SourceFrame::Trackers(trackers),
                });
            });
        let stats = &self.port.stats;
        stats
            .bad
            .fetch_add(u64::from(decoded.malformed + decoded.broken), Relaxed);
        stats
            .unknown
            .fetch_add(u64::from(decoded.unknown_bones), Relaxed);
        stats.ignored.fetch_add(u64::from(decoded.ignored), Relaxed);
        if decoded.ignored > 0 {
            self.commands.datagram(datagram, from, stats);
        }
    }
}

impl VmcPort {
    /// The lowest performer number no sender on the port holds now.
    fn free_number(&self) -> usize {
        let mut taken: Vec<usize> = self.senders.values().map(|s| s.number).collect();
        taken.sort_unstable();
        taken
            .iter()
            .zip(1..)
            .find(|(held, n)| *held != n)
            .map_or(taken.len() + 1, |(_, n)| n)
    }

    /// Removes the senders silent for `sender_timeout` at `now`.
    fn prune(&mut self, now: Instant) {
        let timeout = self.sender_timeout;
        self.senders
            .retain(|_, s| now.saturating_duration_since(s.last_seen) < timeout);
        self.pruned = now;
    }
}

/// Tells the solver the custom expression names a sender has started using.
fn announce_names(sender: &mut Sender, port: &mut InputPort, received: Instant) {
    let names = sender.frames.custom_names();
    while let Some(name) = names.name(sender.announced) {
        let slot = sender.announced as u8;
        sender.announced += 1;
        // A name too long to carry stays unnamed (its weights are not sent on).
        if let Some(name) = PerformerName::new(name) {
            port.push_unwoken(InputFrame {
                received,
                frame: SourceFrame::ExpressionName {
                    performer: sender.performer,
                    slot,
                    name,
                },
            });
        }
    }
}
