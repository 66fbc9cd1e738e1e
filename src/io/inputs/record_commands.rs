//! The bridge's `/bridge/record/start|stop` commands as an OSC input port reads
//! them among the addresses its protocol does not define: passed on to the
//! recorder when the sender may give them (`RecordCommandsFrom`), else counted as
//! bad input and said once in the log.

use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;

use tokio::sync::mpsc;

use crate::pipeline::InputStats;
use crate::protocol::osc;
use crate::protocol::record_control::{RecordCommandsFrom, RecordRequest};
use crate::record::recorder::RecordCommand;

/// One port's recording commands.
pub struct RecordCommands {
    pub from: RecordCommandsFrom,
    pub recorder: mpsc::UnboundedSender<RecordCommand>,
    /// A refused command was logged already.
    refusal_said: bool,
}

impl RecordCommands {
    #[must_use]
    pub fn new(from: RecordCommandsFrom, recorder: mpsc::UnboundedSender<RecordCommand>) -> Self {
        Self {
            from,
            recorder,
            refusal_said: false,
        }
    }

    /// Passes on the commands in `datagram`, sent by `sender`, or refuses them.
    pub fn datagram(&mut self, datagram: &[u8], sender: SocketAddr, stats: &InputStats) {
        for message in osc::messages(datagram).flatten() {
            let Some(request) = RecordRequest::from_message(&message) else {
                continue;
            };
            if self.from.allows(sender) {
                // The recorder is gone only when the bridge stops.
                let _ = self.recorder.send(request.into());
                continue;
            }
            stats.bad.fetch_add(1, Relaxed);
            if !self.refusal_said {
                self.refusal_said = true;
                tracing::warn!(
                    %sender,
                    "recording command refused: this port takes them from {} \
                     (recordCommands in its config); counted as bad input from now on",
                    match self.from {
                        RecordCommandsFrom::Loopback => "this machine only",
                        RecordCommandsFrom::Any => "anyone",
                        RecordCommandsFrom::Off => "nobody",
                    }
                );
            }
        }
    }
}
