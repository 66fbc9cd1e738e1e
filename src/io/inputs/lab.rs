//! Lab OSC over UDP input: one task per bound socket, several subjects (performers)
//! per port. Datagrams go through `protocol::lab_osc::LabAssembler` (pure, no
//! sockets), which hands over each frame once all its parts have arrived, already
//! in local rotations and internal axes; the frame goes onto the input's ring with
//! the index of its subject's skeleton. The bridge's own `/bridge/record/start|stop`
//! messages are accepted here too. Bad datagrams are counted and dropped.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};

use crate::io::inputs::RecordCommands;
use crate::io::udp;
use crate::pipeline::{InputFrame, InputPort, SourceFrame};
use crate::protocol::lab_osc::{LabAssembler, LabSkeleton};
use crate::protocol::record_control::RecordCommandsFrom;
use crate::record::recorder::RecordCommand;

/// A lab OSC input port feeding the solver.
pub struct LabInput {
    pub socket: UdpSocket,
    pub port: InputPort,
    pub assembler: LabAssembler,
    /// Lab skeletons, indexed as the bridge's skeleton table (`None`: that skeleton
    /// cannot be streamed over lab OSC).
    pub skeletons: Arc<[Option<LabSkeleton>]>,
    /// The skeleton of subjects not in `subjects`.
    pub default_skeleton: u16,
    /// Subjects streaming another skeleton.
    pub subjects: HashMap<String, u16>,
    pub record: mpsc::UnboundedSender<RecordCommand>,
    /// Whose `/bridge/record/*` commands are obeyed.
    pub record_commands: RecordCommandsFrom,
    pub shutdown: watch::Receiver<bool>,
}

impl LabInput {
    /// Receives until shutdown. Bad datagrams and a full ring are counted, never fatal.
    pub async fn run(self) -> std::io::Result<()> {
        let Self {
            socket,
            mut port,
            mut assembler,
            skeletons,
            default_skeleton,
            subjects,
            record,
            record_commands,
            mut shutdown,
        } = self;
        let mut commands = RecordCommands::new(record_commands, record);
        let index_of = |subject: &str| subjects.get(subject).copied().unwrap_or(default_skeleton);
        udp::receive_until_shutdown(&socket, &mut shutdown, |batch, received| {
            for (datagram, from) in batch.iter() {
                port.stats.packets.fetch_add(1, Relaxed);
                let stats = assembler.datagram(
                    datagram,
                    received,
                    |subject| {
                        skeletons
                            .get(usize::from(index_of(subject)))
                            .and_then(Option::as_ref)
                    },
                    |frame| {
                        port.push_unwoken(InputFrame {
                            received,
                            frame: SourceFrame::Joints {
                                skeleton: index_of(frame.performer.as_str()),
                                frame: *frame,
                            },
                        });
                    },
                );
                let s = &port.stats;
                s.bad.fetch_add(
                    u64::from(stats.dropped() - stats.unknown_joints - stats.unknown_subjects),
                    Relaxed,
                );
                s.unknown.fetch_add(
                    u64::from(stats.unknown_joints + stats.unknown_subjects),
                    Relaxed,
                );
                s.ignored.fetch_add(u64::from(stats.ignored), Relaxed);
                if stats.ignored > 0 {
                    commands.datagram(datagram, from, s);
                }
            }
            port.wake_solver();
        })
        .await
    }
}
